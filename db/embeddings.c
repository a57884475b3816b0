#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/score.h"
#include "core/reputation.h"
#include "db/embeddings.h"
#include "db/events.h"
#include "lib/log.h"

static const char q_store[] =
    "UPDATE embeddings SET status = ?, vector = ?, error = ?, model = ?,"
    " updated_at = ? WHERE subject_id = ? AND text_hash = ? AND status = 'processing'";
/* An embedding to compute, and the text it is of (NULL: gone). */
#define PENDING_COLUMNS(X, L) \
	X(PENDING_C_SUBJECT,	"e.subject_id") \
	X(PENDING_C_TEXT,	"COALESCE(a.bio, s.screening_criteria)") \
	X(PENDING_C_ATTEMPTS,	"e.attempts") \
	L(PENDING_C_AGAIN,	"e.vector IS NOT NULL")
enum pending_col { DB_COLS_ENUM(PENDING_COLUMNS) PENDING_C__END };
static const char q_pending[] =
    "SELECT " DB_COLS_SQL(PENDING_COLUMNS) " FROM embeddings e"
    " LEFT JOIN agents a ON a.id = e.subject_id LEFT JOIN studies s ON s.id = e.subject_id"
    " WHERE e.status = 'processing'"
    " ORDER BY e.vector IS NOT NULL, e.subject_id LIKE 'agt\\_%' DESC, e.updated_at DESC LIMIT ?";
/* A new subject's row, to be computed (txn_study_create's criteria). */
static const char q_emb_ins[] =
    "INSERT INTO embeddings (subject_id, status, text_hash, vector, error, attempts, updated_at)"
    " VALUES (?, 'processing', ?, NULL, NULL, 0, ?)";
static const char q_attempt[] =
    "UPDATE embeddings SET attempts = attempts + 1 WHERE subject_id = ? AND text_hash = ?";
/* A waiting row given up: its text's (a newer text is left waiting), or
 * whatever it holds when the text is gone. */
static const char q_fail[] =
    "UPDATE embeddings SET status = 'failed', error = ?, model = ?"
    " WHERE subject_id = ? AND text_hash = ? AND status = 'processing'";
static const char q_fail_gone[] =
    "UPDATE embeddings SET status = 'failed', error = ?, model = ?"
    " WHERE subject_id = ? AND status = 'processing'";
/* Rows another model computed, back in the queue (design.md §7.4). */
static const char q_flip[] =
    "UPDATE embeddings SET status = 'processing', attempts = 0, error = NULL WHERE model <> ?"
    " AND status <> 'processing' LIMIT ?";
static const char q_vector[] =
    "SELECT vector FROM embeddings WHERE subject_id = ? AND status = 'ready'";

/* Ready bio vectors of claimed agents (an unclaimed agent lists no study,
 * interface-spec "Matching"; a suspended one takes part in none) with their
 * standing, a page at a time in subject order (keyset), for study.matched. */
#define BIO_COLUMNS(X, L) \
	X(BIO_C_AGENT,		"e.subject_id") \
	X(BIO_C_VECTOR,		"e.vector") \
	X(BIO_C_REPUTATION,	"a.reputation") \
	L(BIO_C_STATUS,		"a.status")
enum bio_col { DB_COLS_ENUM(BIO_COLUMNS) BIO_C__END };
static const char q_bios[] =
    "SELECT " DB_COLS_SQL(BIO_COLUMNS) " FROM embeddings e JOIN agents a ON a.id = e.subject_id"
    " WHERE e.subject_id > ? AND e.subject_id LIKE 'agt\\_%' AND e.status = 'ready'"
    " AND e.model = ? AND a.status = 'claimed'"
    " ORDER BY e.subject_id LIMIT 500";
static const char q_study_open[] =
    "SELECT 1 FROM studies WHERE id = ? AND status = 'active'";
#define MATCHED_MIN_SCORE 0.6

/* A study's criteria vector that just became ready, stored in one
 * transaction with its study.matched events. */
struct ready_study {
	const char *model;
	int again;		/* a re-embedding: the study was matched before */
	const char *subject;
	const float *vec;
	const unsigned char *hash;
	int64_t now;
};

/*
 * study.matched (design.md §11): one pass over the ready bio vectors, an
 * event for every agent that may take part whose match score (similarity
 * and tier, as ranking computes it) is at least 0.6.
 */
static enum db_rc
study_ready_tx(struct db *db, void *arg)
{
	const struct ready_study *rs = arg;
	struct dbres *res = NULL;
	char after[IDS_BUFSZ] = "";
	uint64_t n = 0;
	size_t i, rows;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_store, NULL, &n, P_STR("ready"), P_BLOB(rs->vec,
	    EMBED_DIM * sizeof(float)), P_NULL, P_STR(rs->model), P_I64(rs->now), P_STR(rs->subject),
	    P_BLOB(rs->hash, 32))) != DB_OK || n != 1 || rs->again)
		return rc;
	if ((rc = DB_ONE(db, q_study_open, &res, P_STR(rs->subject))) != DB_OK)
		return rc == DB_NOTFOUND ? DB_OK : rc;
	dbres_free(res);
	do {
		res = NULL;
		if ((rc = DB_Q(db, q_bios, &res, NULL, P_STR(after), P_STR(rs->model))) != DB_OK)
			return rc;
		rows = res->nrows;
		for (i = 0; i < rows; i++) {
			const char *agent = dbres_str(res, i, BIO_C_AGENT);
			const void *bv;
			size_t blen;
			int rep = (int)dbres_i64(res, i, BIO_C_REPUTATION);
			const char *st = dbres_str(res, i, BIO_C_STATUS);
			float bio[EMBED_DIM];
			double score;

			snprintf(after, sizeof after, "%s", agent);
			bv = dbres_blob(res, i, BIO_C_VECTOR, &blen);
			if (bv == NULL || blen != sizeof bio ||
			    !rep_may_take_part(st != NULL && strcmp(st, "suspended") == 0, rep))
				continue;
			memcpy(bio, bv, sizeof bio);
			/* stored vectors are centred already (txn/embed.c) */
			score = match_score(match_pair_similarity(bio, rs->vec, NULL, NULL),
			    rep_tier_of(rep));
			if (score < MATCHED_MIN_SCORE)
				continue;
			if ((rc = db_event(db, agent, EV_STUDY_MATCHED, rs->now,
			    "{\"study_id\":\"%s\",\"score\":%.4f}", rs->subject, score)) != DB_OK) {
				dbres_free(res);
				return rc;
			}
		}
		dbres_free(res);
	} while (rows == 500);
	return DB_OK;
}

enum db_rc
db_embedding_store(struct db *db, const char *subject, const char *text, const float *vec,
    const char *error, const char *model, int again, int64_t now)
{
	unsigned char h[32];

	crypto_generichash(h, sizeof h, (const unsigned char *)text, strlen(text), NULL, 0);
	if (vec != NULL && strncmp(subject, "std_", 4) == 0) {
		struct ready_study rs = { model, again, subject, vec, h, now };

		return db_tx(db, study_ready_tx, &rs);
	}
	return DB_Q(db, q_store, NULL, NULL, P_STR(vec != NULL ? "ready" : "failed"),
	    vec != NULL ? P_BLOB(vec, EMBED_DIM * sizeof(float)) : P_NULL, P_STR(error),
	    P_STR(model), P_I64(now), P_STR(subject), P_BLOB(h, sizeof h));
}

enum db_rc
db_embedding_pending(struct db *db, const char *model, size_t limit,
    enum db_rc (*each)(void *arg, const struct db_embedding_wait *w), void *arg, size_t *done)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i;

	*done = 0;
	if ((rc = DB_Q(db, q_pending, &res, NULL, P_I64(limit))) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows; i++) {
		const char *subject = dbres_str(res, i, PENDING_C_SUBJECT);
		const char *text = dbres_str(res, i, PENDING_C_TEXT);

		if (text == NULL)
			rc = db_embedding_fail(db, subject, NULL, "the text is gone", model);
		else {
			struct db_embedding_wait w = { subject, text,
			    (int)dbres_i64(res, i, PENDING_C_ATTEMPTS),
			    (int)dbres_i64(res, i, PENDING_C_AGAIN) };

			rc = each(arg, &w);
		}
		if (rc != DB_OK)
			break;
		(*done)++;
	}
	dbres_free(res);
	return rc;
}

enum db_rc
db_embedding_fail(struct db *db, const char *subject, const char *text, const char *error,
    const char *model)
{
	unsigned char h[32];

	if (text == NULL)
		return DB_Q(db, q_fail_gone, NULL, NULL, P_STR(error), P_STR(model), P_STR(subject));
	crypto_generichash(h, sizeof h, (const unsigned char *)text, strlen(text), NULL, 0);
	return DB_Q(db, q_fail, NULL, NULL, P_STR(error), P_STR(model), P_STR(subject),
	    P_BLOB(h, sizeof h));
}

enum db_rc
db_embedding_attempt(struct db *db, const char *subject, const char *text)
{
	unsigned char h[32];

	crypto_generichash(h, sizeof h, (const unsigned char *)text, strlen(text), NULL, 0);
	return DB_Q(db, q_attempt, NULL, NULL, P_STR(subject), P_BLOB(h, sizeof h));
}

enum db_rc
db_embedding_flip(struct db *db, const char *model, size_t limit, size_t *n)
{
	uint64_t rows = 0;
	enum db_rc rc;

	rc = DB_Q(db, q_flip, NULL, &rows, P_STR(model), P_I64(limit));
	*n = (size_t)rows;
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

enum db_rc
db_embedding_insert(struct db *db, const char *subject, const unsigned char hash[32],
    int64_t now)
{
	return DB_Q(db, q_emb_ins, NULL, NULL, P_STR(subject), P_BLOB(hash, 32), P_I64(now));
}
