/* study.matched fan-out: the index's reads and the release (db/matched.h). */
#include <stdlib.h>
#include <string.h>

#include "db/embeddings.h"
#include "db/events.h"
#include "db/matched.h"

#define STANDING_BATCH	32

/* An agent's bio embedding and standing (the first placeholder: the model). */
#define BIOS_COLUMNS(X, L) \
	X(BIOS_C_AGENT,		"e.subject_id") \
	X(BIOS_C_READY,		"e.status = 'ready' AND e.model = ?") \
	X(BIOS_C_KEY,		DB_BIO_VEC_KEY_SQL) \
	X(BIOS_C_VECTOR,	"IF(e.status = 'ready' AND e.model = ?, e.vector, NULL)") \
	X(BIOS_C_REPUTATION,	"a.reputation") \
	L(BIOS_C_CLAIMED,	"a.status = 'claimed'")
enum bios_col { DB_COLS_ENUM(BIOS_COLUMNS) BIOS_C__END };
static const char q_bios_page[] =
    "SELECT " DB_COLS_SQL(BIOS_COLUMNS) " FROM embeddings e JOIN agents a ON a.id = e.subject_id"
    " WHERE e.subject_id > ? AND e.subject_id LIKE 'agt\\_%' ORDER BY e.subject_id LIMIT 1000";
_Static_assert(DB_BIOS_PAGE == 1000, "q_bios_page reads DB_BIOS_PAGE rows");
/* Through the (status, updated_at) key: three short ranges; no vectors
 * (NULL in their place). */
static const char q_bios_changed[] =
    "SELECT e.subject_id, e.status = 'ready' AND e.model = ?, " DB_BIO_VEC_KEY_SQL ", NULL,"
    " a.reputation, a.status = 'claimed'"
    " FROM embeddings e JOIN agents a ON a.id = e.subject_id"
    " WHERE e.status IN ('processing', 'ready', 'failed') AND e.updated_at >= ?"
    " AND e.subject_id LIKE 'agt\\_%' LIMIT 50000";
static const char q_bios_of[] =
    "SELECT " DB_COLS_SQL(BIOS_COLUMNS) " FROM embeddings e JOIN agents a ON a.id = e.subject_id"
    " WHERE e.subject_id IN (" DB_Q32 ")";
_Static_assert(DB_BIOS_CHANGED_MAX == 50000, "q_bios_changed reads DB_BIOS_CHANGED_MAX rows");
#define STANDING_COLUMNS(X, L) \
	X(STANDING_C_AGENT,	"id") \
	X(STANDING_C_REPUTATION, "reputation") \
	L(STANDING_C_CLAIMED,	"status = 'claimed'")
enum standing_col { DB_COLS_ENUM(STANDING_COLUMNS) STANDING_C__END };
static const char q_standing_page[] =
    "SELECT " DB_COLS_SQL(STANDING_COLUMNS) " FROM agents WHERE id > ? ORDER BY id LIMIT 1000";
static const char q_standing_of[] =
    "SELECT " DB_COLS_SQL(STANDING_COLUMNS) " FROM agents WHERE id IN (" DB_Q32 ")";
_Static_assert(STANDING_BATCH == 32, "q_standing_of has 32 placeholders");

#define DUE_COLUMNS(X, L) \
	X(DUE_C_STUDY,		"m.study_id") \
	X(DUE_C_AGENT,		"m.agent_id") \
	X(DUE_C_SCORE,		"m.score") \
	X(DUE_C_OPEN,		"COALESCE(s.status = 'active' AND s.occupied < s.max_participants, 0)") \
	X(DUE_C_REPUTATION,	"COALESCE(a.reputation, 0)") \
	L(DUE_C_CLAIMED,	"COALESCE(a.status = 'claimed', 0)")
enum due_col { DB_COLS_ENUM(DUE_COLUMNS) DUE_C__END };
static const char q_due[] =
    "SELECT " DB_COLS_SQL(DUE_COLUMNS) " FROM study_matches m"
    " LEFT JOIN studies s ON s.id = m.study_id LEFT JOIN agents a ON a.id = m.agent_id"
    " WHERE m.release_at <= ? ORDER BY m.release_at LIMIT ?";
static const char q_release_del[] =
    "DELETE FROM study_matches WHERE study_id = ? AND agent_id = ?";
static const char q_release_open[] =
    "SELECT 1 FROM studies WHERE id = ? AND status = 'active' AND occupied < max_participants";

static enum db_rc
bios_rows(struct dbres *res, int with_vec, void (*each)(void *, const struct db_bio_row *),
    void *arg)
{
	size_t i, len;
	const void *b;

	for (i = 0; i < res->nrows; i++) {
		struct db_bio_row r = { 0 };

		if (with_vec) {
			r.agent = dbres_str(res, i, BIOS_C_AGENT);
			r.ready = dbres_i64(res, i, BIOS_C_READY) != 0;
			b = dbres_blob(res, i, BIOS_C_KEY, &len);
			r.key = b != NULL && len == 32 ? b : NULL;
			b = dbres_blob(res, i, BIOS_C_VECTOR, &len);
			r.vec = b != NULL && len == sizeof(float) * EMBED_DIM ? b : NULL;
			r.reputation = (int)dbres_i64(res, i, BIOS_C_REPUTATION);
			r.claimed = dbres_i64(res, i, BIOS_C_CLAIMED) != 0;
		} else {
			r.agent = dbres_str(res, i, STANDING_C_AGENT);
			r.reputation = (int)dbres_i64(res, i, STANDING_C_REPUTATION);
			r.claimed = dbres_i64(res, i, STANDING_C_CLAIMED) != 0;
		}
		if (r.agent != NULL)
			each(arg, &r);
	}
	return DB_OK;
}

enum db_rc
db_bios_page(struct db *db, const char *model, const char *after,
    void (*each)(void *, const struct db_bio_row *), void *arg, size_t *nread)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*nread = 0;
	if ((rc = DB_Q(db, q_bios_page, &res, NULL, P_STR(model), P_STR(model),
	    P_STR(after))) != DB_OK)
		return rc;
	*nread = res->nrows;
	rc = bios_rows(res, 1, each, arg);
	dbres_free(res);
	return rc;
}

enum db_rc
db_bios_changed(struct db *db, const char *model, int64_t since,
    void (*each)(void *, const struct db_bio_row *), void *arg, size_t *nread)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*nread = 0;
	if ((rc = DB_Q(db, q_bios_changed, &res, NULL, P_STR(model), P_I64(since))) != DB_OK)
		return rc;
	*nread = res->nrows;
	rc = bios_rows(res, 1, each, arg);
	dbres_free(res);
	return rc;
}

enum db_rc
db_bios_of(struct db *db, const char *model, const char *const *ids, size_t n,
    void (*each)(void *, const struct db_bio_row *), void *arg)
{
	struct dbp p[2 + STANDING_BATCH];
	struct dbres *res = NULL;
	size_t at, m, i;
	enum db_rc rc;

	for (at = 0; at < n; at += m) {
		m = n - at < STANDING_BATCH ? n - at : STANDING_BATCH;
		p[0] = P_STR(model);
		p[1] = P_STR(model);
		for (i = 0; i < STANDING_BATCH; i++)
			p[2 + i] = i < m ? P_STR(ids[at + i]) : P_NULL;
		if ((rc = db_exec(db, q_bios_of, p, 2 + STANDING_BATCH, &res, NULL)) != DB_OK)
			return rc;
		rc = bios_rows(res, 1, each, arg);
		dbres_free(res);
		res = NULL;
		if (rc != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_standing_page(struct db *db, const char *after,
    void (*each)(void *, const struct db_bio_row *), void *arg, size_t *nread)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*nread = 0;
	if ((rc = DB_Q(db, q_standing_page, &res, NULL, P_STR(after))) != DB_OK)
		return rc;
	*nread = res->nrows;
	rc = bios_rows(res, 0, each, arg);
	dbres_free(res);
	return rc;
}

enum db_rc
db_standing_of(struct db *db, const char *const *ids, size_t n,
    void (*each)(void *, const struct db_bio_row *), void *arg)
{
	struct dbp p[STANDING_BATCH];
	struct dbres *res = NULL;
	size_t at, m, i;
	enum db_rc rc;

	for (at = 0; at < n; at += m) {
		m = n - at < STANDING_BATCH ? n - at : STANDING_BATCH;
		for (i = 0; i < STANDING_BATCH; i++)
			p[i] = i < m ? P_STR(ids[at + i]) : P_NULL;
		if ((rc = db_exec(db, q_standing_of, p, STANDING_BATCH, &res, NULL)) != DB_OK)
			return rc;
		rc = bios_rows(res, 0, each, arg);
		dbres_free(res);
		res = NULL;
		if (rc != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_matches_due(struct db *db, int64_t now, size_t limit, struct db_match_due **v, size_t *n)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i;

	*v = NULL;
	*n = 0;
	if ((rc = DB_Q(db, q_due, &res, NULL, P_I64(now), P_I64(limit))) != DB_OK)
		return rc;
	if (res->nrows > 0 && (*v = calloc(res->nrows, sizeof **v)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < res->nrows; i++) {
		struct db_match_due *d = &(*v)[i];
		const char *sc = dbres_str(res, i, DUE_C_SCORE);

		dbres_copy(d->study, sizeof d->study, res, i, DUE_C_STUDY);
		dbres_copy(d->agent, sizeof d->agent, res, i, DUE_C_AGENT);
		d->score = sc != NULL ? strtod(sc, NULL) : 0;
		d->open = dbres_i64(res, i, DUE_C_OPEN) != 0;
		d->reputation = (int)dbres_i64(res, i, DUE_C_REPUTATION);
		d->claimed = dbres_i64(res, i, DUE_C_CLAIMED) != 0;
	}
	*n = res->nrows;
	dbres_free(res);
	return DB_OK;
}

struct release {
	const struct db_match_due *v;
	size_t n, emitted;
	int64_t now;
};

static enum db_rc
release_tx(struct db *db, void *arg)
{
	struct release *r = arg;
	struct dbres *res = NULL;
	uint64_t gone;
	enum db_rc rc;
	size_t i;

	r->emitted = 0;
	for (i = 0; i < r->n; i++) {
		const struct db_match_due *d = &r->v[i];

		gone = 0;
		if ((rc = DB_Q(db, q_release_del, NULL, &gone, P_STR(d->study),
		    P_STR(d->agent))) != DB_OK)
			return rc;
		if (gone != 1 || !d->emit)
			continue;	/* released by another, or nothing to say */
		rc = DB_ONE(db, q_release_open, &res, P_STR(d->study));
		dbres_free(res);
		res = NULL;
		if (rc == DB_NOTFOUND)
			continue;	/* closed, paused, full or gone meanwhile */
		if (rc != DB_OK)
			return rc;
		if ((rc = db_event(db, d->agent, EV_STUDY_MATCHED, r->now,
		    "{\"study_id\":\"%s\",\"score\":%.4f}", d->study, d->score)) != DB_OK)
			return rc;
		r->emitted++;
	}
	return DB_OK;
}

enum db_rc
db_matches_release(struct db *db, const struct db_match_due *v, size_t n, int64_t now,
    size_t *emitted)
{
	struct release r = { v, n, 0, now };
	enum db_rc rc;

	*emitted = 0;
	if (n == 0)
		return DB_OK;
	rc = db_tx(db, release_tx, &r);
	if (rc == DB_OK)
		*emitted = r.emitted;
	return rc;
}
