/* Reads of GET /studies/available (see matching.h). */
#include <stdlib.h>
#include <string.h>

#include "db/embeddings.h"
#include "db/match.h"


/* Whether the agent has a bio, and its embedding. */
#define BIO_COLUMNS(X, L) \
	X(BIO_C_HAS_BIO,	"a.bio IS NOT NULL") \
	X(BIO_C_STATUS,		"COALESCE(e.status, 'processing')") \
	X(BIO_C_HASH,		DB_BIO_VEC_KEY_SQL) \
	L(BIO_C_VECTOR,		"e.vector")
enum bio_col { DB_COLS_ENUM(BIO_COLUMNS) BIO_C__END };
/* An open study of a full load. */
#define LOAD_COLUMNS(X, L) \
	X(LOAD_C_ID,		"s.id") \
	X(LOAD_C_SEQ,		"s.seq") \
	X(LOAD_C_CREATED_AT,	"s.created_at") \
	X(LOAD_C_DEADLINE,	"COALESCE(s.deadline, 0)") \
	X(LOAD_C_OCCUPIED,	"s.occupied") \
	X(LOAD_C_MAX,		"s.max_participants") \
	X(LOAD_C_VTAG,		"CRC32(e.model)") \
	X(LOAD_C_ELIG,		"s.eligibility") \
	L(LOAD_C_VECTOR,	"e.vector")
enum load_col { DB_COLS_ENUM(LOAD_COLUMNS) LOAD_C__END };
/* A change with the study's state (NULLs when the study is gone). */
#define CHG_COLUMNS(X, L) \
	X(CHG_C_SEQ,		"c.seq") \
	X(CHG_C_STUDY,		"c.study_id") \
	X(CHG_C_OPEN,		"COALESCE(s.status = 'active' AND s.occupied < s.max_participants" \
				" AND e.status = 'ready', 0)") \
	X(CHG_C_STUDY_SEQ,	"COALESCE(s.seq, 0)") \
	X(CHG_C_CREATED_AT,	"COALESCE(s.created_at, 0)") \
	X(CHG_C_DEADLINE,	"COALESCE(s.deadline, 0)") \
	X(CHG_C_OCCUPIED,	"COALESCE(s.occupied, 0)") \
	X(CHG_C_MAX,		"COALESCE(s.max_participants, 0)") \
	X(CHG_C_VTAG,		"COALESCE(CRC32(e.model), 0)") \
	L(CHG_C_ELIG,		"COALESCE(s.eligibility, 0)")
enum chg_col { DB_COLS_ENUM(CHG_COLUMNS) CHG_C__END };
/* A ready embedding. */
#define VEC_COLUMNS(X, L) \
	X(VEC_C_SUBJECT,	"subject_id") \
	L(VEC_C_VECTOR,		"vector")
enum vec_col { DB_COLS_ENUM(VEC_COLUMNS) VEC_C__END };
/* A study the agent took part in (or a group it is in). */
#define PAST_COLUMNS(X, L) \
	L(PAST_C_STUDY,		"study_id")
enum past_col { DB_COLS_ENUM(PAST_COLUMNS) PAST_C__END };

static const char q_bio[] =
    "SELECT " DB_COLS_SQL(BIO_COLUMNS) " FROM agents a"
    " LEFT JOIN embeddings e ON e.subject_id = a.id WHERE a.id = ?";
/* In studies.seq order through the studies_open key (002_matching.sql). */
static const char q_load[] =
    "SELECT " DB_COLS_SQL(LOAD_COLUMNS) " FROM studies s"
    " JOIN embeddings e ON e.subject_id = s.id AND e.status = 'ready'"
    " WHERE s.status = 'active' AND s.occupied < s.max_participants AND s.seq > ?"
    " ORDER BY s.seq LIMIT ?";
/* The newest change before a time, by the study_changes_at key. */
static const char q_chg_start[] =
    "SELECT seq FROM study_changes WHERE changed_at < UNIX_TIMESTAMP() - ?"
    " ORDER BY changed_at DESC, seq DESC"
    " LIMIT 1";
static const char q_changes[] =
    "SELECT " DB_COLS_SQL(CHG_COLUMNS) " FROM study_changes c"
    " LEFT JOIN studies s ON s.id = c.study_id"
    " LEFT JOIN embeddings e ON e.subject_id = c.study_id"
    " WHERE c.seq > ? AND " DB_MATCH_UNREAD_SQL " ORDER BY c.seq LIMIT ?";
static const char q_vectors[] =
    "SELECT " DB_COLS_SQL(VEC_COLUMNS) " FROM embeddings WHERE status = 'ready'"
    " AND subject_id IN (" DB_Q32 ")";

_Static_assert(DB_MATCH_BATCH == 32, "q_vectors has 32 placeholders");
/* and its owner's own open studies, which it may not take (OWN_STUDY), and
 * the groups it is in (eligibility, design.md §14) */
static const char q_past[] =
    "SELECT " DB_COLS_SQL(PAST_COLUMNS) " FROM participations WHERE agent_id = ?"
    " UNION SELECT s.id FROM studies s JOIN agents g ON g.account_id = s.researcher_id"
    " WHERE g.id = ? AND s.status IN ('active', 'paused')"
    " UNION SELECT group_id FROM group_members WHERE agent_id = ?";
static const char q_pending[] = "SELECT " DB_MATCH_PENDING_SQL;

enum db_rc
db_match_bio(struct db *db, const char *agent_id, enum db_bio_state *state,
    float vec[EMBED_DIM], unsigned char hash[32])
{
	struct dbres *res = NULL;
	const char *st;
	const void *b, *h;
	size_t len = 0, hlen = 0;
	enum db_rc rc;

	*state = DB_BIO_NONE;
	if ((rc = DB_Q(db, q_bio, &res, NULL, P_STR(agent_id))) != DB_OK)
		return rc;
	if (res->nrows > 0 && dbres_i64(res, 0, BIO_C_HAS_BIO) != 0) {
		st = dbres_str(res, 0, BIO_C_STATUS);
		b = dbres_blob(res, 0, BIO_C_VECTOR, &len);
		h = dbres_blob(res, 0, BIO_C_HASH, &hlen);
		if (st != NULL && strcmp(st, "ready") == 0 && b != NULL &&
		    len == sizeof(float) * EMBED_DIM && h != NULL && hlen == 32) {
			memcpy(vec, b, len);
			memcpy(hash, h, hlen);
			*state = DB_BIO_READY;
		} else if (st != NULL && strcmp(st, "failed") == 0)
			*state = DB_BIO_FAILED;
		else
			*state = DB_BIO_PROCESSING;
	}
	dbres_free(res);
	return DB_OK;
}

/* id into out when it fits, else 0. */
static int
copy_id(char out[IDS_BUFSZ], const char *id)
{
	size_t n;

	if (id == NULL || (n = strlen(id)) >= IDS_BUFSZ)
		return 0;
	memcpy(out, id, n + 1);
	return 1;
}

enum db_rc
db_match_load(struct db *db, int64_t after, struct match_row **v, float **vec, size_t *n,
    int64_t *last, size_t *nread)
{
	struct dbres *res = NULL;
	const void *b;
	size_t i, k = 0, len;
	enum db_rc rc;

	*v = NULL;
	*vec = NULL;
	*n = 0;
	*last = after;
	*nread = 0;
	if ((rc = DB_Q(db, q_load, &res, NULL, P_I64(after), P_I64(DB_MATCH_PAGE))) != DB_OK)
		return rc;
	if (res->nrows > 0 && ((*v = calloc(res->nrows, sizeof **v)) == NULL ||
	    (*vec = malloc(res->nrows * EMBED_DIM * sizeof **vec)) == NULL)) {
		free(*v);
		*v = NULL;
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < res->nrows; i++) {
		/* every row, even a skipped one: the next page starts after it */
		*last = (*v)[k].seq = dbres_i64(res, i, LOAD_C_SEQ);
		b = dbres_blob(res, i, LOAD_C_VECTOR, &len);
		if (!copy_id((*v)[k].id, dbres_str(res, i, LOAD_C_ID)) || b == NULL ||
		    len != sizeof(float) * EMBED_DIM)
			continue;
		(*v)[k].created_at = dbres_i64(res, i, LOAD_C_CREATED_AT);
		(*v)[k].deadline = dbres_i64(res, i, LOAD_C_DEADLINE);
		(*v)[k].occupied = dbres_i64(res, i, LOAD_C_OCCUPIED);
		(*v)[k].max_participants = dbres_i64(res, i, LOAD_C_MAX);
		(*v)[k].vtag = dbres_i64(res, i, LOAD_C_VTAG);
		(*v)[k].elig = dbres_i64(res, i, LOAD_C_ELIG) != 0;
		memcpy(*vec + k * EMBED_DIM, b, len);
		k++;
	}
	*n = k;
	*nread = res->nrows;
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_match_change_start(struct db *db, int64_t back, int64_t *seq)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*seq = 0;
	if ((rc = DB_Q(db, q_chg_start, &res, NULL, P_I64(back))) != DB_OK)
		return rc;
	if (res->nrows > 0)
		*seq = dbres_i64(res, 0, DB_COL_ONLY);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_match_changes(struct db *db, const struct match_seq *s, int64_t after,
    struct match_change **v, size_t *n)
{
	struct dbp p[2 + DB_MATCH_PENDING_NP];
	struct dbres *res = NULL;
	struct match_change *c;
	size_t i, k = 0;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	p[0] = P_I64(after);
	db_match_pending_params(p + 1, s);
	p[1 + DB_MATCH_PENDING_NP] = P_I64(DB_MATCH_PAGE);
	if ((rc = db_exec(db, q_changes, p, 2 + DB_MATCH_PENDING_NP, &res, NULL)) != DB_OK)
		return rc;
	if (res->nrows > 0 && (*v = calloc(res->nrows, sizeof **v)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < res->nrows; i++) {
		c = &(*v)[k];
		c->seq = dbres_i64(res, i, CHG_C_SEQ);
		if (!copy_id(c->row.id, dbres_str(res, i, CHG_C_STUDY)))
			c->row.id[0] = '\0';	/* not a study id: seen, nothing to apply */
		c->open = dbres_i64(res, i, CHG_C_OPEN) != 0;
		c->row.seq = dbres_i64(res, i, CHG_C_STUDY_SEQ);
		c->row.created_at = dbres_i64(res, i, CHG_C_CREATED_AT);
		c->row.deadline = dbres_i64(res, i, CHG_C_DEADLINE);
		c->row.occupied = dbres_i64(res, i, CHG_C_OCCUPIED);
		c->row.max_participants = dbres_i64(res, i, CHG_C_MAX);
		c->row.vtag = dbres_i64(res, i, CHG_C_VTAG);
		c->row.elig = dbres_i64(res, i, CHG_C_ELIG) != 0;
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

static int
id_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

enum db_rc
db_match_past(struct db *db, const char *agent_id, char (**ids)[IDS_BUFSZ], size_t *n)
{
	struct dbres *res = NULL;
	size_t i, k = 0;
	enum db_rc rc;

	*ids = NULL;
	*n = 0;
	if ((rc = DB_Q(db, q_past, &res, NULL, P_STR(agent_id), P_STR(agent_id), P_STR(agent_id))) !=
	    DB_OK)
		return rc;
	if ((*ids = malloc((res->nrows ? res->nrows : 1) * sizeof **ids)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < res->nrows; i++)
		if (copy_id((*ids)[k], dbres_str(res, i, PAST_C_STUDY)))
			k++;
	dbres_free(res);
	qsort(*ids, k, sizeof **ids, id_cmp);
	*n = k;
	return DB_OK;
}

void
db_match_pending_params(struct dbp p[DB_MATCH_PENDING_NP], const struct match_seq *s)
{
	size_t i;

	p[0] = P_I64(s->hw);
	for (i = 0; i < MATCH_GAPS_MAX; i++) {
		p[1 + 2 * i] = i < s->ngap ? P_I64(s->gap[i].lo) : P_NULL;
		p[2 + 2 * i] = i < s->ngap ? P_I64(s->gap[i].hi) : P_NULL;
	}
}

enum db_rc
db_match_pending(struct db *db, const struct match_seq *s, int *pending)
{
	struct dbp p[DB_MATCH_PENDING_NP];
	struct dbres *res = NULL;
	enum db_rc rc;

	*pending = 0;
	db_match_pending_params(p, s);
	if ((rc = db_exec_one(db, q_pending, p, DB_MATCH_PENDING_NP, &res)) != DB_OK)
		return rc;
	*pending = dbres_i64(res, 0, DB_COL_ONLY) != 0;
	dbres_free(res);
	return DB_OK;
}
