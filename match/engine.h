/*
 * The matching engine (design.md §7, design.md §9.12): the embedding model
 * inside the pool, each worker's index of open studies kept up to date from
 * the change sequence, the ranking of a page for an agent (the top k of
 * the index, then confirmed), and what a worker keeps per agent between
 * its requests.  The parts are named in match/internal.h.
 *
 * Return convention: a function that reads the database returns enum
 * db_rc (db/db.h: DB_OK, or the driver's code; db_error(db) says why);
 * the others return 0, or -1 as each says, and log what an operator must
 * know.  Everything an answer owns is freed by match_top_free.  Each
 * worker has its own engine (no locks: one request at a time).
 */
#ifndef ARPS_MATCH_ENGINE_H
#define ARPS_MATCH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "encoder/embed.h"
#include "core/ids.h"
#include "core/score.h"
#include "db/db.h"
#include "db/match.h"
#include "db/studies.h"

struct config;

/* One ranked study of match_top, with its row as the confirmation read it. */
struct match_top {
	char	 id[IDS_BUFSZ];
	double	 similarity;	/* match_similarity of bio and criteria */
	double	 score;		/* match_score(similarity, tier) */
	struct study study;
};

/* Master, before each fork and every few seconds between: bring the
 * master's copy of the open-studies index up to date (its own connection,
 * closed again; at most 100 ms of changes a call), so a worker inherits it
 * copy-on-write.  Failures are logged; the worker then loads its own.
 * 1 when it stopped with changes left to read (the master calls again
 * soon), else 0. */
int match_prefork(const struct config *cfg);

/*
 * The studies GET /studies/available lists to agent_id (design.md §6.6,
 * design.md §7, design.md §9.12), best first: this worker's in-memory index of open
 * studies is brought up to date from the change sequence (match/index.c),
 * the agent's kept ranking is caught up on the entries added since (or,
 * when it cannot give the page, every entry whose deadline has not passed
 * is scored against the agent's bio: centred, match_dot over the centred
 * criteria vectors, match_rank for `tier` at now), and the database confirms them (a
 * free slot, not taken part in) in rank order, ranking further when some
 * drop out, until p->limit (basic: also basic_max_studies) are confirmed
 * or none is left; the confirmation reads the listed rows whole (one
 * statement, db_study_open_for), or on the fast path comes from what the
 * worker keeps.  *top is malloc'd (match_top_free), *n
 * entries.  enum db_rc.
 */
/* The head the key's look-up read (db_agent_by_key_heads): with it,
 * when nothing changed since the index's last look, the page needs no
 * statement of its own (the fast path, match/cache.c); NULL: none. */
struct match_heads {
	int	 change_pending;
};
/* What the key's look-up passes for the heads: the change sequence as this
 * worker's index has read it, NULL before its first load. */
const struct match_seq *match_seq_now(void);
enum db_rc match_top(struct db *db, const char *agent_id, const float bio[EMBED_DIM],
    enum rep_tier tier, int64_t now, const struct match_params *p,
    const struct match_heads *hd, struct match_top **top, size_t *n);
void match_top_free(struct match_top *top, size_t n);

/*
 * The bio vectors of the last agents this worker listed studies for, named
 * by the hash of the text they embed (design.md §9.12): 1 and vec filled
 * when agent_id's vector for text hash is kept, else 0.  match_bio_keep
 * keeps one (read with its hash in one statement, db_match_bio).
 */
int match_bio_kept(const char *agent_id, const unsigned char hash[32], float vec[EMBED_DIM]);
void match_bio_keep(const char *agent_id, const unsigned char hash[32],
    const float vec[EMBED_DIM]);

/*
 * The sizes of the caches a worker keeps (match/cache.c), each from 1 (2
 * texts) up to the default: the daemon's are the defaults; tests set small
 * ones to see evictions and lists running out (the test build of make
 * test-asan starts with lists of 3 and 8 texts).  match_set_limits(NULL)
 * sets the defaults.  Either empties every cache and zeroes the counters
 * of match_stats_get.  0, or -1 (nothing changed) for a size out of range.
 */
struct match_limits {
	size_t	 rank_slots;	/* agents whose ranking is kept (32) */
	size_t	 rank_keep;	/* entries a kept ranking holds (256) */
	size_t	 past_slots;	/* agents whose past is kept (32) */
	size_t	 shown_slots;	/* studies whose texts are kept (256) */
	size_t	 bio_slots;	/* agents whose bio vector is kept (32) */
};
int match_set_limits(const struct match_limits *l);
void match_limits_get(struct match_limits *out);

/* What the caches did since the last match_set_limits (or the start). */
struct match_stats {
	uint64_t rank_builds, rank_hits, rank_evictions;
	uint64_t past_reads, past_hits, past_evictions;
	uint64_t shown_hits, shown_misses, shown_evictions;
	uint64_t bio_evictions;
};
void match_stats_get(struct match_stats *out);

/* The index as it stands: open studies held, full loads so far, entries
 * added or re-dated so far, its last refresh (0: not loaded) and the
 * highest change number read. */
struct match_index_info {
	size_t	 n;
	uint64_t loads, gen;
	int64_t	 last, hw;
};
void match_index_info(struct match_index_info *out);
/* 1 and *out filled when study id is in the index, else 0. */
int match_index_row(const char *id, struct match_row *out);
/* Bring the index up to date at now, as a request does before ranking
 * (a full load when never loaded or idle longer than 30 minutes).
 * enum db_rc. */
enum db_rc match_index_refresh(struct db *db, int64_t now);

#endif
