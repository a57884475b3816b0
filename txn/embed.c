/* Embedding a text and storing its vector (see embed.h). */
#include <string.h>

#include "db/embeddings.h"
#include "txn/embed.h"

enum db_rc
txn_embed_subject(struct db *db, const struct embed_model *enc, void *scratch,
    const char *subject, const char *text, int64_t now)
{
	float vec[EMBED_DIM];
	const char *err = NULL;
	int erc;	/* embed_text's EMBED_* code */

	if (enc == NULL)
		return DB_OK;
	erc = embed_text(enc, text, strlen(text), scratch, vec);
	if (erc == EMBED_EEMPTY)
		err = "the text has no words the model knows";
	else if (erc != EMBED_OK)
		err = "the encoder refused the text";
	return db_embedding_store(db, subject, text, erc == EMBED_OK ? vec : NULL, err,
	    enc->mean_bio, enc->mean_crit, now);
}

struct pending {
	struct db *db;
	const struct embed_model *enc;
	void *scratch;
	int64_t now;
};

static enum db_rc
each_pending(void *arg, const char *subject, const char *text)
{
	struct pending *p = arg;

	return txn_embed_subject(p->db, p->enc, p->scratch, subject, text, p->now);
}

enum db_rc
txn_embed_pending(struct db *db, const struct embed_model *enc, void *scratch,
    int64_t now, int64_t age, size_t limit, size_t *done)
{
	struct pending p = { db, enc, scratch, now };

	*done = 0;
	if (enc == NULL)
		return DB_OK;
	return db_embedding_pending(db, now, age, limit, each_pending, &p, done);
}
