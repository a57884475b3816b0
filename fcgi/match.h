/* The embedding model inside the pool: mapped once by the master before
 * it forks (every worker shares the pages), a scratch buffer per worker,
 * and the work done after an answer is sent. */
#ifndef ARPS_FCGI_MATCH_H
#define ARPS_FCGI_MATCH_H

#include "core/embed.h"
#include "fcgi/http.h"

struct config;

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

#endif
