/* The embedding model inside the pool: mapped once by the master before
 * it forks (every worker shares the pages), a scratch buffer per worker,
 * and the work done after an answer is sent. */
#ifndef ARPS_MATCH_ENGINE_H
#define ARPS_MATCH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "encoder/embed.h"
#include "core/ids.h"
#include "core/score.h"
#include "db/db.h"
#include "fcgi/http.h"

#include "db/studies.h"

struct config;

/* One ranked study of match_top, with its row as the confirmation read it. */
struct match_top {
	char	 id[IDS_BUFSZ];
	double	 similarity;	/* match_similarity of bio and criteria */
	double	 score;		/* match_score(similarity, tier) */
	struct study study;
};

/* Map cfg->model_path (master, before fork).  0, or -1 when the model
 * cannot be used (logged; embeddings then wait for the sweep). */
int match_init(const struct config *cfg);
/* Master, before each fork and every few seconds between: bring the
 * master's copy of the open-studies index up to date (its own connection,
 * closed again; at most 100 ms of changes a call), so a worker inherits it
 * copy-on-write.  Failures are logged; the worker then loads its own.
 * 1 when it stopped with changes left to read (the master calls again
 * soon), else 0. */
int match_prefork(const struct config *cfg);
/* Allocate this worker's scratch (after fork); take cfg's match_selfcheck
 * (a reload's). */
void match_worker_init(const struct config *cfg);
/* The encoder, or NULL when no model is mapped. */
const struct embed_model *match_encoder(void);
void *match_scratch(void);

/* Schedule embedding of text for subject after r's answer is sent. */
void match_embed_after(struct req *r, const char *subject, const char *text);

/*
 * The studies GET /studies/available lists to agent_id (design.md §6.6,
 * design.md §7, design.md §9.12), best first: this worker's in-memory index of open
 * studies is brought up to date from the change sequence (match/engine.c),
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
 * statement of its own (the fast path, match/engine.c); NULL: none. */
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

#endif
