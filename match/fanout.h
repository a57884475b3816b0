/*
 * study.matched fan-out (design.md §7.5, design.md §11), run by
 * arps-embed: an in-memory index of every agent's bio vector (loaded once,
 * then brought up to date from the rows written since: embeddings.updated_at,
 * with the agents' standing read again every minute), from which a newly
 * published study's best `matched_fanout` agents scoring at least 0.6 are
 * picked in memory, each confirmed by one short read; and the release of the
 * matches that wait (priority agents' events are written at once, the
 * others' at publication plus first_access_minutes; a basic agent's only
 * when its listing at release shows the study, match_top).
 *
 * Return convention: enum db_rc (db/db.h).  One index a process, no locks
 * (arps-embed is single-threaded).
 */
#ifndef ARPS_MATCH_FANOUT_H
#define ARPS_MATCH_FANOUT_H

#include <stddef.h>
#include <stdint.h>

#include "core/score.h"
#include "db/db.h"
#include "db/matched.h"

/* study.matched's threshold on the match score (design.md §11). */
#define MATCH_FANOUT_MIN_SCORE	0.6

struct match_fanout_cfg {
	const char	*model;		/* the vectors' model tag: others are not indexed */
	size_t		 fanout;	/* matched_fanout, >= 1 */
	int64_t		 first_access_minutes;
	size_t		 basic_max_studies;
};

/* Bring the index up to date at now (a full load the first time, after a
 * burst of changes, or when asked with full). */
enum db_rc match_fanout_refresh(struct db *db, const struct match_fanout_cfg *c, int64_t now,
    int full);

/* The agents a study whose centred criteria vector is crit is announced to,
 * best first: at most c->fanout whose match score is at least 0.6, as the
 * index ranks them, each agent's standing confirmed by the database
 * (claimed, reputation).  sm->v malloc'd (caller frees), sm->delay set. */
enum db_rc match_fanout_pick(struct db *db, const struct match_fanout_cfg *c, int64_t now,
    const float crit[EMBED_DIM], struct db_study_matches *sm);

/* Release the waiting matches due at now, in transactions of at most 32
 * (db_matches_release), at most 32 of them a call; *emitted counts the events written. */
enum db_rc match_fanout_release(struct db *db, const struct match_fanout_cfg *c, int64_t now,
    size_t *emitted);

/* Agents the index holds with a vector. */
size_t match_fanout_size(void);

#endif
