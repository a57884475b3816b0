/*
 * Bonuses (design.md §13): the participants a batch names, the bonus rows
 * and their list.  The batch's transaction is txn/bonuses.c's.
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_BONUSES_H
#define ARPS_DB_BONUSES_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "core/participation.h"
#include "db/db.h"

/* A participant a batch names, as the study holds it. */
struct db_bonus_target {
	const char		*participant_id;	/* in: the anon_ id */
	int			 found;			/* out: a participant of the study */
	char			 prt_id[IDS_BUFSZ];	/* out */
	char			 agent_id[IDS_BUFSZ];	/* out */
	enum part_state		 state;			/* out */
};

/* One bonus row as stored and listed. */
struct db_bonus {
	int64_t			 seq;
	char			 id[IDS_BUFSZ];
	char			 study_id[IDS_BUFSZ];
	char			 prt_id[IDS_BUFSZ];
	char			 participant_id[ANON_BUFSZ];
	char			 agent_id[IDS_BUFSZ];
	char			 researcher_id[IDS_BUFSZ];
	int64_t			 amount, fee;
	char			*reason;		/* NULL when none (owned by lists) */
	char			 entry_id[IDS_BUFSZ];
	int64_t			 created_at;
};

/* Look up t[0..n) among study_id's participants (unlocked: a submitted
 * participation never goes back), filling found, prt_id, agent_id, state. */
enum db_rc db_bonus_targets(struct db *, const char *study_id, struct db_bonus_target *t,
    size_t n);
/* Insert b[0..n) (reason borrowed), in chunks of one statement each. */
enum db_rc db_bonuses_insert(struct db *, const struct db_bonus *b, size_t n);
/* bonus_cents + amount for study_id (the caller holds its lock). */
enum db_rc db_study_bonus_add(struct db *, const char *study_id, int64_t amount);
/* A study's bonuses, newest first: seq < cursor (0: from the newest), at
 * most limit; *next the next page's cursor, 0 at the end.  *v calloc'd
 * (db_bonuses_free). */
enum db_rc db_bonuses_list(struct db *, const char *study_id, int64_t cursor, int64_t limit,
    struct db_bonus **v, size_t *n, int64_t *next);
void db_bonuses_free(struct db_bonus *v, size_t n);

#endif
