/* The embedding model inside the pool: mapped once by the master before
 * it forks (every worker shares the pages), a scratch buffer per worker,
 * and the work done after an answer is sent. */
#ifndef ARPS_FCGI_MATCH_H
#define ARPS_FCGI_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/embed.h"
#include "core/ids.h"
#include "core/match.h"
#include "db/db.h"
#include "fcgi/http.h"

struct config;

/* Criteria vectors kept per worker (2 KiB each: 32 MiB at most). */
#define MATCH_CACHE_MAX	16384

/* One ranked study of match_top. */
struct match_top {
	char	 id[IDS_BUFSZ];
	double	 similarity;	/* match_similarity of bio and criteria */
	double	 score;		/* match_score(similarity, tier) */
};

/* Map cfg->model_path (master, before fork).  0, or -1 when the model
 * cannot be used (logged; embeddings then wait for the sweep). */
int match_init(const struct config *cfg);
/* Allocate this worker's scratch (after fork). */
void match_worker_init(void);
/* The encoder, or NULL when no model is mapped. */
const struct embed_model *match_encoder(void);
void *match_scratch(void);

/* Schedule embedding of text for subject after r's answer is sent. */
void match_embed_after(struct req *r, const char *subject, const char *text);

/*
 * Rank the studies open to agent_id (db_match_candidates) against its unit
 * bio vector for an agent of `tier` at now.  Criteria vectors come from
 * this worker's cache: criteria never change, so a loaded vector stays
 * valid; misses are read in batches (db_match_vectors) and cached up to
 * MATCH_CACHE_MAX entries, dropping those this request does not use when
 * full; a study with no ready vector is left out (and asked again in a
 * later second).  Cosine is match_dot (unit vectors); match_rank selects
 * and sorts the best p->limit.  *top is malloc'd (caller frees), *n
 * entries, best first.  enum db_rc.
 */
enum db_rc match_top(struct db *db, const char *agent_id, const float bio[EMBED_DIM],
    enum rep_tier tier, int64_t now, const struct match_params *p, struct match_top **top,
    size_t *n);

#endif
