/* The embedding model inside the pool (match/internal.h): mapped once by
 * the master before it forks (every worker shares the pages), a scratch
 * buffer per worker. */
#include <stdlib.h>

#include "encoder/model.h"
#include "lib/config.h"
#include "lib/log.h"
#include "match/engine.h"
#include "match/internal.h"

static struct model model;
static int mapped;
static void *scratch;

int
match_init(const struct config *cfg)
{
	if (cfg->model_path[0] == '\0') {
		log_msg("match: no model_path: embeddings wait for the sweep");
		return -1;
	}
	if (model_map(cfg->model_path, &model) != 0) {
		log_msg("match: cannot map model %s: embeddings wait for the sweep", cfg->model_path);
		return -1;
	}
	mapped = 1;
	return 0;
}

void
match_worker_init(void)
{
	if (mapped && (scratch = malloc(embed_scratch_size(&model.enc))) == NULL) {
		log_msg("match: no memory for the encoder's scratch");
		mapped = 0;
	}
}

const struct embed_model *
match_encoder(void)
{
	return mapped && scratch != NULL ? &model.enc : NULL;
}

void *
match_scratch(void)
{
	return scratch;
}

const float *
mx_mean_bio(void)
{
	return mapped ? model.enc.mean_bio : NULL;
}

const float *
mx_mean_crit(void)
{
	return mapped ? model.enc.mean_crit : NULL;
}
