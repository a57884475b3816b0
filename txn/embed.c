/* The embedding queue's work (see embed.h). */
#include <stdlib.h>
#include <string.h>

#include "core/score.h"
#include "db/embeddings.h"
#include "txn/embed.h"

struct round {
	struct db *db;
	const struct embedder *e;
	int64_t now;
};

static enum db_rc
each_pending(void *arg, const struct db_embedding_wait *w)
{
	const struct round *r = arg;
	const struct embedder *e = r->e;
	const char *subject = w->subject, *text = w->text;
	int bio = strncmp(subject, "agt_", 4) == 0;
	float raw[EMBED_DIM], vec[EMBED_DIM];
	const char *why = NULL;
	enum db_rc rc;

	if (w->attempts >= EMBED_MAX_ATTEMPTS)
		return db_embedding_fail(r->db, subject, text, "the encoder failed on this text",
		    e->model);
	/* Counted before the try, so a text that crashes the process ends. */
	if ((rc = db_embedding_attempt(r->db, subject, text)) != DB_OK)
		return rc;
	if (e->embed(e->ctx, bio ? EMBED_ROLE_BIO : EMBED_ROLE_CRITERIA, text, strlen(text), raw,
	    &why) != 0)
		return db_embedding_store(r->db, subject, text, NULL,
		    why != NULL ? why : "the encoder refused the text", e->model, w->again, r->now,
		    NULL);
	if (match_centre(vec, raw, bio ? e->mean_bio : e->mean_crit) != ARPS_OK)
		return db_embedding_store(r->db, subject, text, NULL,
		    "the encoder gave no direction for this text", e->model, w->again, r->now,
		    NULL);
	if (!bio && !w->again && e->match != NULL) {
		struct db_study_matches sm = { NULL, 0, 0 };

		/* picked before the store's transaction: it holds no lock meanwhile */
		if ((rc = e->match(e->ctx, r->db, vec, &sm)) != DB_OK)
			return rc;
		rc = db_embedding_store(r->db, subject, text, vec, NULL, e->model, w->again, r->now,
		    &sm);
		free((void *)sm.v);
		return rc;
	}
	return db_embedding_store(r->db, subject, text, vec, NULL, e->model, w->again, r->now,
	    NULL);
}

enum db_rc
txn_embed_flip_all(struct db *db, const struct embedder *e, size_t *flipped)
{
	enum db_rc rc;
	size_t n;

	*flipped = 0;
	do {
		if ((rc = db_embedding_flip(db, e->model, 1000, &n)) != DB_OK)
			return rc;
		*flipped += n;
	} while (n > 0);
	return DB_OK;
}

enum db_rc
txn_embed_round(struct db *db, const struct embedder *e, int64_t now, size_t limit,
    size_t *flipped, size_t *done)
{
	struct round r = { db, e, now };
	enum db_rc rc;

	*flipped = *done = 0;
	if ((rc = db_embedding_flip(db, e->model, limit, flipped)) != DB_OK)
		return rc;
	return db_embedding_pending(db, e->model, limit, each_pending, &r, done);
}
