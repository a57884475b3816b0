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

/* One ranked study of match_top. */
struct match_top {
	char	 id[IDS_BUFSZ];
	double	 similarity;	/* match_similarity of bio and criteria */
	double	 score;		/* match_score(similarity, tier) */
};

/* Map cfg->model_path (master, before fork).  0, or -1 when the model
 * cannot be used (logged; embeddings then wait for the sweep). */
int match_init(const struct config *cfg);
/* Master, before each fork: bring the master's copy of the open-studies
 * index up to date (its own connection, closed again), so the worker
 * inherits it copy-on-write.  Failures are logged; the worker then loads
 * its own. */
void match_prefork(const struct config *cfg);
/* Allocate this worker's scratch (after fork). */
void match_worker_init(void);
/* The encoder, or NULL when no model is mapped. */
const struct embed_model *match_encoder(void);
void *match_scratch(void);

/* Schedule embedding of text for subject after r's answer is sent. */
void match_embed_after(struct req *r, const char *subject, const char *text);

/*
 * The studies GET /studies/available lists to agent_id (design.md §6.6,
 * design.md §7, design.md §9.12), best first: this worker's in-memory index of open
 * studies is brought up to date from the change sequence (fcgi/match.c),
 * every entry whose deadline has not passed is scored against the agent's
 * bio (centred; match_dot over the centred criteria vectors), match_rank
 * selects the best for `tier` at now, and the database confirms them (a
 * free slot, not taken part in) in rank order, ranking further when some
 * drop out, until p->limit (basic: also basic_max_studies) are confirmed
 * or none is left.  *top is malloc'd (caller frees), *n entries.
 * enum db_rc.
 */
enum db_rc match_top(struct db *db, const char *agent_id, const float bio[EMBED_DIM],
    enum rep_tier tier, int64_t now, const struct match_params *p, struct match_top **top,
    size_t *n);

#endif
