/*
 * study.matched fan-out (design.md §7.5, design.md §11): the reads of
 * arps-embed's index of bio vectors (match/fanout.c), the standing of the
 * agents it picks, and the release of the matches waiting in
 * study_matches (012_study_matches.sql).  The matches themselves are
 * stored with the study's criteria vector (db_embedding_store).
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_MATCHED_H
#define ARPS_DB_MATCHED_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "core/score.h"
#include "db/db.h"

/* One agent's bio as the index keeps it: vec NULL when the agent has no
 * ready vector of `model` (none, waiting, failed, another model). */
struct db_bio_row {
	const char	*agent;
	const float	*vec;		/* EMBED_DIM floats, centred, or NULL */
	int		 ready;		/* a ready vector of `model` (db_bios_changed: vec NULL) */
	const unsigned char *key;	/* its key (DB_BIO_VEC_KEY_SQL, 32 bytes) or NULL */
	int		 reputation;
	int		 claimed;	/* status 'claimed' (not unclaimed, not suspended) */
};

/* Rows of db_bios_page: a full load pages by agent id. */
#define DB_BIOS_PAGE		1000
/* Changed rows db_bios_changed reads at most; more: load again. */
#define DB_BIOS_CHANGED_MAX	50000

/* One page of every agent's bio embedding with id above `after`, in id
 * order (at most DB_BIOS_PAGE): each(arg, row) for each; *nread rows. */
enum db_rc db_bios_page(struct db *, const char *model, const char *after,
    void (*each)(void *, const struct db_bio_row *), void *arg, size_t *nread);
/* The agents' bio embeddings written at or after `since` (embeddings.updated_at),
 * at most DB_BIOS_CHANGED_MAX, without their vectors (ready and key say
 * whether the one held is still the one stored): each(arg, row); *nread rows. */
enum db_rc db_bios_changed(struct db *, const char *model, int64_t since,
    void (*each)(void *, const struct db_bio_row *), void *arg, size_t *nread);
/* The ready vectors of `model` of agents ids[0..n), 32 ids a statement:
 * each(arg, row) for each (vec and key set). */
enum db_rc db_bios_of(struct db *, const char *model, const char *const *ids, size_t n,
    void (*each)(void *, const struct db_bio_row *), void *arg);
/* One page of every agent's standing (vec NULL in the row) with id above
 * `after`, in id order, at most DB_BIOS_PAGE. */
enum db_rc db_standing_page(struct db *, const char *after,
    void (*each)(void *, const struct db_bio_row *), void *arg, size_t *nread);
/* The standing of agents ids[0..n) (vec NULL), read 32 ids a statement:
 * each(arg, row) for each that exists. */
enum db_rc db_standing_of(struct db *, const char *const *ids, size_t n,
    void (*each)(void *, const struct db_bio_row *), void *arg);

/* One agent a newly published study's study.matched goes to: picked by
 * match/fanout.c, stored with the study's criteria vector
 * (db_embedding_store): at once (a priority agent), else waiting in
 * study_matches until the study's publication plus `delay` seconds. */
struct db_study_match {
	char	 agent[IDS_BUFSZ];
	double	 score;
	int	 at_once;
};
struct db_study_matches {
	const struct db_study_match *v;
	size_t	 n;
	int64_t	 delay;		/* first_access_minutes in seconds */
};

/* A waiting study.matched whose release time has come, with the state of
 * its study and agent as the statement read them. */
struct db_match_due {
	char	 study[IDS_BUFSZ], agent[IDS_BUFSZ];
	double	 score;
	int	 open;		/* the study is active with a free slot */
	int	 reputation;
	int	 claimed;
	int	 emit;		/* set by the caller: write the event */
};

/* At most `limit` waiting matches with release_at <= now, the earliest
 * first: *v malloc'd (caller frees), *n. */
enum db_rc db_matches_due(struct db *, int64_t now, size_t limit, struct db_match_due **v,
    size_t *n);
/* Release v[0..n) in one transaction: each row is deleted, and for one
 * the caller marked emit whose study is still active with a free slot, its
 * study.matched is written (the same transaction: the event exists exactly
 * when the waiting row does not).  *emitted counts the events. */
enum db_rc db_matches_release(struct db *, const struct db_match_due *v, size_t n,
    int64_t now, size_t *emitted);

#endif
