#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "db/embeddings.h"
#include "lib/log.h"

static const char q_store[] =
    "UPDATE embeddings SET status = ?, vector = ?, error = ?, attempts = attempts + 1,"
    " updated_at = ? WHERE subject_id = ? AND text_hash = ? AND status <> 'ready'";
/* An embedding to compute, and the text it is of (NULL: gone). */
#define PENDING_COLUMNS(X, L) \
	X(PENDING_C_SUBJECT,	"e.subject_id") \
	L(PENDING_C_TEXT,	"COALESCE(a.bio, s.screening_criteria)")
enum pending_col { DB_COLS_ENUM(PENDING_COLUMNS) PENDING_C__END };
static const char q_pending[] =
    "SELECT " DB_COLS_SQL(PENDING_COLUMNS) " FROM embeddings e"
    " LEFT JOIN agents a ON a.id = e.subject_id LEFT JOIN studies s ON s.id = e.subject_id"
    " WHERE e.status = 'processing' AND e.updated_at <= ? ORDER BY e.updated_at LIMIT ?";
static const char q_touch[] =
    "UPDATE embeddings SET updated_at = ?, attempts = attempts + 1 WHERE subject_id = ?";
static const char q_vector[] =
    "SELECT vector FROM embeddings WHERE subject_id = ? AND status = 'ready'";

enum db_rc
db_embed_subject(struct db *db, const struct embed_model *enc, void *scratch,
    const char *subject, const char *text, int64_t now)
{
	float vec[EMBED_DIM];
	unsigned char h[32];
	const char *status = "ready", *err = NULL;
	int erc;	/* embed_text's EMBED_* code */

	if (enc == NULL)
		return DB_OK;
	crypto_generichash(h, sizeof h, (const unsigned char *)text, strlen(text), NULL, 0);
	erc = embed_text(enc, text, strlen(text), scratch, vec);
	if (erc == EMBED_EEMPTY) {
		status = "failed";
		err = "the text has no words the model knows";
	} else if (erc != EMBED_OK) {
		status = "failed";
		err = "the encoder refused the text";
	}
	return DB_Q(db, q_store, NULL, NULL, P_STR(status),
	    erc == EMBED_OK ? P_BLOB(vec, sizeof vec) : P_NULL, P_STR(err), P_I64(now),
	    P_STR(subject), P_BLOB(h, sizeof h));
}

enum db_rc
db_embed_pending(struct db *db, const struct embed_model *enc, void *scratch,
    int64_t now, int64_t age, size_t limit, size_t *done)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i;

	*done = 0;
	if (enc == NULL)
		return DB_OK;
	if ((rc = DB_Q(db, q_pending, &res, NULL, P_I64(now - age), P_I64(limit))) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows; i++) {
		const char *subject = dbres_str(res, i, PENDING_C_SUBJECT);
		const char *text = dbres_str(res, i, PENDING_C_TEXT);

		if (text == NULL) {
			(void)DB_Q(db, q_touch, NULL, NULL, P_I64(now), P_STR(subject));
			continue;
		}
		if ((rc = db_embed_subject(db, enc, scratch, subject, text, now)) != DB_OK)
			break;
		(*done)++;
	}
	dbres_free(res);
	return rc;
}

int
db_embedding_vector(struct db *db, const char *subject, float out[EMBED_DIM])
{
	struct dbres *res = NULL;
	const void *b;
	size_t n;
	int ok = 0;

	if (DB_Q(db, q_vector, &res, NULL, P_STR(subject)) != DB_OK)
		return 0;
	if ((b = dbres_blob(res, 0, DB_COL_ONLY, &n)) != NULL && n == sizeof(float) * EMBED_DIM) {
		memcpy(out, b, n);
		ok = 1;
	}
	dbres_free(res);
	return ok;
}
