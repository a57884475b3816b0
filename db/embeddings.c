#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/score.h"
#include "db/embeddings.h"
#include "db/events.h"
#include "db/rows.h"
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

/* The study whose criteria just became ready, while it is active: its
 * publication time, from which the waiting matches are released. */
static const char q_study_open[] =
    "SELECT created_at FROM studies WHERE id = ? AND status = 'active'";
/* The matches that wait (012_study_matches.sql), one statement. */
static struct db_shape sh_matches = { "INSERT INTO study_matches (study_id, agent_id, score,"
    " release_at) VALUES ", "(?, ?, ?, ?)", ", ", " ON DUPLICATE KEY UPDATE score = VALUES(score)",
    0, 4, { 0 } };

/* A study's criteria vector that just became ready, stored in one
 * transaction with its study.matched. */
struct ready_study {
	const char *model;
	int again;		/* a re-embedding: the study was matched before */
	const char *subject;
	const float *vec;
	const unsigned char *hash;
	int64_t now;
	const struct db_study_matches *sm;
};

/*
 * study.matched (design.md §11): the agents match/fanout.c picked (at most
 * matched_fanout, the best-scoring); a priority agent's event now, every
 * other's waiting until the study's publication plus first_access_minutes
 * (arps-embed releases it, db_matches_release).
 */
static enum db_rc
study_ready_tx(struct db *db, void *arg)
{
	const struct ready_study *rs = arg;
	const struct db_study_matches *sm = rs->sm;
	struct dbres *res = NULL;
	struct dbp *rows = NULL;
	char (*score)[32] = NULL;
	int64_t created, release;
	uint64_t n = 0;
	size_t i, k = 0;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_store, NULL, &n, P_STR("ready"), P_BLOB(rs->vec,
	    EMBED_DIM * sizeof(float)), P_NULL, P_STR(rs->model), P_I64(rs->now), P_STR(rs->subject),
	    P_BLOB(rs->hash, 32))) != DB_OK || n != 1 || rs->again || sm == NULL || sm->n == 0)
		return rc;
	if ((rc = DB_ONE(db, q_study_open, &res, P_STR(rs->subject))) != DB_OK)
		return rc == DB_NOTFOUND ? DB_OK : rc;
	created = dbres_i64(res, 0, DB_COL_ONLY);
	dbres_free(res);
	release = created + sm->delay;
	rc = DB_ERR;
	if ((rows = calloc(sm->n * 4, sizeof *rows)) == NULL ||
	    (score = calloc(sm->n, sizeof *score)) == NULL)
		goto out;
	for (i = 0; i < sm->n; i++) {
		const struct db_study_match *m = &sm->v[i];

		if (m->at_once || release <= rs->now) {
			if ((rc = db_event(db, m->agent, EV_STUDY_MATCHED, rs->now,
			    "{\"study_id\":\"%s\",\"score\":%.4f}", rs->subject, m->score)) != DB_OK)
				goto out;
			continue;
		}
		snprintf(score[k], sizeof score[k], "%.4f", m->score);
		rows[k * 4] = P_STR(rs->subject);
		rows[k * 4 + 1] = P_STR(m->agent);
		rows[k * 4 + 2] = P_STR(score[k]);
		rows[k * 4 + 3] = P_I64(release);
		k++;
	}
	rc = db_rows_exec(db, &sh_matches, NULL, rows, k, NULL, NULL, NULL);
out:
	free(rows);
	free(score);
	return rc;
}

enum db_rc
db_embedding_store(struct db *db, const char *subject, const char *text, const float *vec,
    const char *error, const char *model, int again, int64_t now,
    const struct db_study_matches *sm)
{
	unsigned char h[32];

	crypto_generichash(h, sizeof h, (const unsigned char *)text, strlen(text), NULL, 0);
	if (vec != NULL && strncmp(subject, "std_", 4) == 0) {
		struct ready_study rs = { model, again, subject, vec, h, now, sm };

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
