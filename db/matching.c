/* Reads of GET /studies/available (see matching.h). */
#include <stdlib.h>
#include <string.h>

#include "db/matching.h"

#define Q4	"?, ?, ?, ?"
#define Q32	Q4 ", " Q4 ", " Q4 ", " Q4 ", " Q4 ", " Q4 ", " Q4 ", " Q4

/* Whether the agent has a bio, and its embedding. */
#define BIO_COLUMNS(X, L) \
	X(BIO_C_HAS_BIO,	"a.bio IS NOT NULL") \
	X(BIO_C_STATUS,		"COALESCE(e.status, 'processing')") \
	L(BIO_C_VECTOR,		"e.vector")
enum bio_col { DB_COLS_ENUM(BIO_COLUMNS) BIO_C__END };
/* A candidate study. */
#define CAND_COLUMNS(X, L) \
	X(CAND_C_ID,		"s.id") \
	L(CAND_C_CREATED_AT,	"s.created_at")
enum cand_col { DB_COLS_ENUM(CAND_COLUMNS) CAND_C__END };
/* A ready embedding. */
#define VEC_COLUMNS(X, L) \
	X(VEC_C_SUBJECT,	"subject_id") \
	L(VEC_C_VECTOR,		"vector")
enum vec_col { DB_COLS_ENUM(VEC_COLUMNS) VEC_C__END };

static const char q_bio[] =
    "SELECT " DB_COLS_SQL(BIO_COLUMNS) " FROM agents a"
    " LEFT JOIN embeddings e ON e.subject_id = a.id WHERE a.id = ?";
/* Read from the studies_open index alone (002_matching.sql); the anti-join
 * reads the agent's own participations by (agent_id, seq). */
static const char q_cand[] =
    "SELECT " DB_COLS_SQL(CAND_COLUMNS) " FROM studies s"
    " WHERE s.status = 'active' AND s.occupied < s.max_participants"
    " AND (s.deadline IS NULL OR s.deadline > ?)"
    " AND s.id NOT IN (SELECT p.study_id FROM participations p WHERE p.agent_id = ?)"
    " ORDER BY s.seq DESC LIMIT ?";
static const char q_vectors[] =
    "SELECT " DB_COLS_SQL(VEC_COLUMNS) " FROM embeddings WHERE status = 'ready'"
    " AND subject_id IN (" Q32 ")";

_Static_assert(DB_MATCH_BATCH == 32, "q_vectors has 32 placeholders");

enum db_rc
db_match_bio(struct db *db, const char *agent_id, enum db_bio_state *state,
    float vec[EMBED_DIM])
{
	struct dbres *res = NULL;
	const char *st;
	const void *b;
	size_t len = 0;
	enum db_rc rc;

	*state = DB_BIO_NONE;
	if ((rc = DB_Q(db, q_bio, &res, NULL, P_STR(agent_id))) != DB_OK)
		return rc;
	if (res->nrows > 0 && dbres_i64(res, 0, BIO_C_HAS_BIO) != 0) {
		st = dbres_str(res, 0, BIO_C_STATUS);
		b = dbres_blob(res, 0, BIO_C_VECTOR, &len);
		if (st != NULL && strcmp(st, "ready") == 0 && b != NULL &&
		    len == sizeof(float) * EMBED_DIM) {
			memcpy(vec, b, len);
			*state = DB_BIO_READY;
		} else if (st != NULL && strcmp(st, "failed") == 0)
			*state = DB_BIO_FAILED;
		else
			*state = DB_BIO_PROCESSING;
	}
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_match_candidates(struct db *db, const char *agent_id, int64_t now,
    struct match_row **v, size_t *n)
{
	struct dbres *res = NULL;
	const char *id;
	size_t i, k = 0;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	if ((rc = DB_Q(db, q_cand, &res, NULL, P_I64(now), P_STR(agent_id),
	    P_I64(DB_MATCH_SCAN_MAX))) != DB_OK)
		return rc;
	if (res->nrows > 0 && (*v = calloc(res->nrows, sizeof **v)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < res->nrows; i++) {
		if ((id = dbres_str(res, i, CAND_C_ID)) == NULL || strlen(id) >= IDS_BUFSZ)
			continue;
		memcpy((*v)[k].id, id, strlen(id) + 1);
		(*v)[k].created_at = dbres_i64(res, i, CAND_C_CREATED_AT);
		k++;
	}
	*n = k;
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_match_vectors(struct db *db, const char *const *ids, size_t n, float *vec, int *found)
{
	struct dbp p[DB_MATCH_BATCH];
	struct dbres *res = NULL;
	const char *id;
	const void *b;
	size_t at, m, i, j, len;
	enum db_rc rc;

	memset(found, 0, n * sizeof *found);
	for (at = 0; at < n; at += m) {
		m = n - at < DB_MATCH_BATCH ? n - at : DB_MATCH_BATCH;
		for (i = 0; i < DB_MATCH_BATCH; i++)
			p[i] = i < m ? P_STR(ids[at + i]) : P_NULL;
		if ((rc = db_exec(db, q_vectors, p, DB_MATCH_BATCH, &res, NULL)) != DB_OK)
			return rc;
		for (i = 0; i < res->nrows; i++) {
			if ((id = dbres_str(res, i, VEC_C_SUBJECT)) == NULL ||
			    (b = dbres_blob(res, i, VEC_C_VECTOR, &len)) == NULL ||
			    len != sizeof(float) * EMBED_DIM)
				continue;
			for (j = at; j < at + m; j++)
				if (!found[j] && strcmp(ids[j], id) == 0) {
					memcpy(vec + j * EMBED_DIM, b, len);
					found[j] = 1;
				}
		}
		dbres_free(res);
		res = NULL;
	}
	return DB_OK;
}
