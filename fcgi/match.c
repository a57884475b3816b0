#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/embeddings.h"
#include "fcgi/match.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/model.h"

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

struct pending {
	char subject[24];
	char text[];
};

static void
embed_after(struct req *r, void *arg)
{
	struct pending *p = arg;

	if (db_embed_subject(r->db, match_encoder(), scratch, p->subject, p->text, r->now) != DB_OK)
		log_msg("match: embedding %s not stored: %s", p->subject, db_error(r->db));
	free(p);
}

void
match_embed_after(struct req *r, const char *subject, const char *text)
{
	size_t n = strlen(text);
	struct pending *p;

	if (match_encoder() == NULL || r->after != NULL)
		return;
	if ((p = malloc(sizeof *p + n + 1)) == NULL)
		return;
	snprintf(p->subject, sizeof p->subject, "%s", subject);
	memcpy(p->text, text, n + 1);
	r->after = embed_after;
	r->after_arg = p;
}
