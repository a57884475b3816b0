/* Bonuses: the statements of db/bonuses.h. */
#include <stdlib.h>
#include <string.h>

#include "db/bonuses.h"
#include "db/rows.h"

#define TARGET_COLUMNS(X, L) \
	X(TARGET_C_ANON,	"participant_id") \
	X(TARGET_C_ID,		"id") \
	X(TARGET_C_AGENT,	"agent_id") \
	L(TARGET_C_STATE,	"status")
enum target_col { DB_COLS_ENUM(TARGET_COLUMNS) TARGET_C__END };
static struct db_shape sh_targets = { "SELECT " DB_COLS_SQL(TARGET_COLUMNS)
    " FROM participations WHERE study_id = ? AND participant_id IN (", "?", ", ", ")", 1, 1,
    { 0 } };
static struct db_shape sh_insert = { "INSERT INTO bonuses (id, study_id, participation_id,"
    " participant_id, agent_id, researcher_id, amount_cents, fee_cents, reason, entry_id,"
    " created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ", ", "", 0, 11, { 0 } };
#define BONUS_NP 11
static const char q_bonus_add[] =
    "UPDATE studies SET bonus_cents = bonus_cents + ? WHERE id = ?";
#define BONUS_COLUMNS(X, L) \
	X(BONUS_C_SEQ,		"seq") \
	X(BONUS_C_ID,		"id") \
	X(BONUS_C_STUDY,	"study_id") \
	X(BONUS_C_PRT,		"participation_id") \
	X(BONUS_C_ANON,		"participant_id") \
	X(BONUS_C_AGENT,	"agent_id") \
	X(BONUS_C_RESEARCHER,	"researcher_id") \
	X(BONUS_C_AMOUNT,	"amount_cents") \
	X(BONUS_C_FEE,		"fee_cents") \
	X(BONUS_C_REASON,	"reason") \
	X(BONUS_C_ENTRY,	"entry_id") \
	L(BONUS_C_CREATED,	"created_at")
enum bonus_col { DB_COLS_ENUM(BONUS_COLUMNS) BONUS_C__END };
static const char q_list[] =
    "SELECT " DB_COLS_SQL(BONUS_COLUMNS) " FROM bonuses WHERE study_id = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?";
static const char q_known[] = "SELECT 1 FROM bonuses WHERE study_id = ? AND seq = ?";

struct target_set {
	struct db_bonus_target *t;
	size_t n;
};

static enum db_rc
target_rows(void *arg, const struct dbres *res)
{
	struct target_set *ts = arg;
	size_t i, j;

	for (i = 0; i < res->nrows; i++) {
		const char *anon = dbres_str(res, i, TARGET_C_ANON);

		for (j = 0; j < ts->n; j++) {
			struct db_bonus_target *t = &ts->t[j];

			if (anon == NULL || strcmp(t->participant_id, anon) != 0)
				continue;
			t->found = 1;
			dbres_copy(t->prt_id, sizeof t->prt_id, res, i, TARGET_C_ID);
			dbres_copy(t->agent_id, sizeof t->agent_id, res, i, TARGET_C_AGENT);
			if (!part_state_from_name(dbres_str(res, i, TARGET_C_STATE), &t->state))
				return DB_ERR;
		}
	}
	return DB_OK;
}

enum db_rc
db_bonus_targets(struct db *db, const char *study_id, struct db_bonus_target *t, size_t n)
{
	struct target_set ts = { t, n };
	struct dbp head[1] = { P_STR(study_id) };
	struct dbp *p;
	enum db_rc rc;
	size_t i;

	for (i = 0; i < n; i++)
		t[i].found = 0;
	if (n == 0)
		return DB_OK;
	if ((p = calloc(n, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++)
		p[i] = P_STR(t[i].participant_id);
	rc = db_rows_exec(db, &sh_targets, head, p, n, target_rows, &ts, NULL);
	free(p);
	return rc;
}

enum db_rc
db_bonuses_insert(struct db *db, const struct db_bonus *b, size_t n)
{
	struct dbp *p;
	enum db_rc rc;
	size_t i;

	if (n == 0)
		return DB_OK;
	if ((p = calloc(n * BONUS_NP, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		struct dbp *r = p + i * BONUS_NP;

		r[0] = P_STR(b[i].id);
		r[1] = P_STR(b[i].study_id);
		r[2] = P_STR(b[i].prt_id);
		r[3] = P_STR(b[i].participant_id);
		r[4] = P_STR(b[i].agent_id);
		r[5] = P_STR(b[i].researcher_id);
		r[6] = P_I64(b[i].amount);
		r[7] = P_I64(b[i].fee);
		r[8] = P_STR(b[i].reason);
		r[9] = P_STR(b[i].entry_id);
		r[10] = P_I64(b[i].created_at);
	}
	rc = db_rows_exec(db, &sh_insert, NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

enum db_rc
db_study_bonus_add(struct db *db, const char *study_id, int64_t amount)
{
	uint64_t n = 0;
	enum db_rc rc = DB_Q(db, q_bonus_add, NULL, &n, P_I64(amount), P_STR(study_id));

	return rc == DB_OK && n != 1 ? DB_ERR : rc;
}

static void
bonus_clear(void *e)
{
	struct db_bonus *b = e;

	free(b->reason);
	memset(b, 0, sizeof *b);
}

static int
bonus_row(const struct dbres *res, size_t row, void *e)
{
	struct db_bonus *b = e;
	int ok = 1;

	memset(b, 0, sizeof *b);
	b->seq = dbres_i64(res, row, BONUS_C_SEQ);
	dbres_copy(b->id, sizeof b->id, res, row, BONUS_C_ID);
	dbres_copy(b->study_id, sizeof b->study_id, res, row, BONUS_C_STUDY);
	dbres_copy(b->prt_id, sizeof b->prt_id, res, row, BONUS_C_PRT);
	dbres_copy(b->participant_id, sizeof b->participant_id, res, row, BONUS_C_ANON);
	dbres_copy(b->agent_id, sizeof b->agent_id, res, row, BONUS_C_AGENT);
	dbres_copy(b->researcher_id, sizeof b->researcher_id, res, row, BONUS_C_RESEARCHER);
	b->amount = dbres_i64(res, row, BONUS_C_AMOUNT);
	b->fee = dbres_i64(res, row, BONUS_C_FEE);
	b->reason = dbres_dup(res, row, BONUS_C_REASON, &ok);
	dbres_copy(b->entry_id, sizeof b->entry_id, res, row, BONUS_C_ENTRY);
	b->created_at = dbres_i64(res, row, BONUS_C_CREATED);
	if (!ok) {
		bonus_clear(b);
		return -1;
	}
	return 0;
}

enum db_rc
db_bonuses_list(struct db *db, const char *study_id, int64_t cursor, int64_t limit,
    struct db_bonus **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	void *rows = NULL;
	enum db_rc rc;
	int more = 0;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = db_cursor_known(db, q_known, study_id, cursor)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_list, &res, NULL, P_STR(study_id), P_I64(db_cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = dbres_map(res, limit, sizeof **v, bonus_row, bonus_clear, &rows, n, &more);
	dbres_free(res);
	*v = rows;
	if (rc == DB_OK && more && *n > 0)
		*next = (*v)[*n - 1].seq;
	return rc;
}

void
db_bonuses_free(struct db_bonus *v, size_t n)
{
	db_array_free(v, n, sizeof *v, bonus_clear);
}
