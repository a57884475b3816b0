#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/wallet.h"

/* A transaction row, read at the TXN_C_* positions. */
#define TXN_COLUMNS(X, L) \
	X(TXN_C_SEQ,		"seq") \
	X(TXN_C_ID,		"id") \
	X(TXN_C_TYPE,		"type") \
	X(TXN_C_AMOUNT,		"amount_cents") \
	X(TXN_C_STUDY_ID,	"study_id") \
	X(TXN_C_DESCRIPTION,	"description") \
	L(TXN_C_CREATED_AT,	"created_at")
enum txn_col { DB_COLS_ENUM(TXN_COLUMNS) TXN_C__END };
#define TXN_COLS DB_COLS_SQL(TXN_COLUMNS)

static const char q_txn_all[] =
    "SELECT " TXN_COLS " FROM transactions WHERE owner_id = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?";
static const char q_txn_type[] =
    "SELECT " TXN_COLS " FROM transactions WHERE owner_id = ? AND type = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?";

static const char q_txn_known[] = "SELECT 1 FROM transactions WHERE owner_id = ? AND seq = ?";

/* A cash-out row. */
#define COT_COLUMNS(X, L) \
	X(COT_C_SEQ,		"seq") \
	X(COT_C_ID,		"id") \
	X(COT_C_ACCOUNT,	"account_id") \
	X(COT_C_WALLET,		"wallet_id") \
	X(COT_C_AMOUNT,		"amount_cents") \
	X(COT_C_STATUS,		"status") \
	X(COT_C_REFERENCE,	"reference") \
	X(COT_C_REASON,		"reason") \
	X(COT_C_CREATED_AT,	"created_at") \
	L(COT_C_SETTLED_AT,	"settled_at")
enum cot_col { DB_COLS_ENUM(COT_COLUMNS) COT_C__END };
#define COT_COLS DB_COLS_SQL(COT_COLUMNS)
static const char q_cot_insert[] =
    "INSERT INTO cashouts (id, account_id, wallet_id, amount_cents, status, created_at)"
    " VALUES (?, ?, ?, ?, 'requested', ?)";
static const char q_cot_get[] = "SELECT " COT_COLS " FROM cashouts WHERE id = ?";
static const char q_cot_lock[] = "SELECT " COT_COLS " FROM cashouts WHERE id = ? FOR UPDATE";
static const char q_cot_settle[] =
    "UPDATE cashouts SET status = ?, reference = ?, reason = ?, settled_at = ?"
    " WHERE id = ? AND status = 'requested'";
static const char q_cot_list[] =
    "SELECT " COT_COLS " FROM cashouts WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?";
static const char q_cot_known[] = "SELECT 1 FROM cashouts WHERE account_id = ? AND seq = ?";

static void
txn_clear(void *t)
{
	free(((struct txn_row *)t)->description);
}

void
db_txns_free(struct txn_row *v, size_t n)
{
	db_array_free(v, n, sizeof *v, txn_clear);
}

/* Fill *t from row `row`: 0, or -1 (an unknown type, or no memory) with
 * nothing held. */
static int
txn_row(const struct dbres *res, size_t row, void *out)
{
	struct txn_row *t = out;
	const char *d = dbres_str(res, row, TXN_C_DESCRIPTION);

	t->seq = dbres_i64(res, row, TXN_C_SEQ);
	dbres_copy(t->id, sizeof t->id, res, row, TXN_C_ID);
	if (!ledger_txn_type_from_name(dbres_str(res, row, TXN_C_TYPE), &t->type) ||
	    (t->description = strdup(d ? d : "")) == NULL)
		return -1;
	t->amount = dbres_i64(res, row, TXN_C_AMOUNT);
	dbres_copy(t->study_id, sizeof t->study_id, res, row, TXN_C_STUDY_ID);
	t->created_at = dbres_i64(res, row, TXN_C_CREATED_AT);
	return 0;
}

enum db_rc
db_txn_list(struct db *db, const char *owner, const enum ledger_txn_type *type, int64_t cursor,
    int64_t limit, struct txn_row **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	int64_t bound = db_cursor_bound(cursor);
	void *rows = NULL;
	int more = 0;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = db_cursor_known(db, q_txn_known, owner, cursor)) != DB_OK)
		return rc;
	if (type != NULL)
		rc = DB_Q(db, q_txn_type, &res, NULL, P_STR(owner),
		    P_STR(ledger_txn_type_name(*type)), P_I64(bound), P_I64(limit + 1));
	else
		rc = DB_Q(db, q_txn_all, &res, NULL, P_STR(owner), P_I64(bound), P_I64(limit + 1));
	if (rc != DB_OK)
		return rc;
	rc = dbres_map(res, limit, sizeof **v, txn_row, txn_clear, &rows, n, &more);
	dbres_free(res);
	*v = rows;
	if (rc == DB_OK && more)
		*next = (*v)[*n - 1].seq;
	return rc;
}

static void
cot_clear(void *c)
{
	(void)c;	/* no heap strings */
}

static int
cot_row(const struct dbres *res, size_t row, void *out)
{
	struct cashout *c = out;

	memset(c, 0, sizeof *c);
	c->seq = dbres_i64(res, row, COT_C_SEQ);
	dbres_copy(c->id, sizeof c->id, res, row, COT_C_ID);
	dbres_copy(c->account_id, sizeof c->account_id, res, row, COT_C_ACCOUNT);
	dbres_copy(c->wallet_id, sizeof c->wallet_id, res, row, COT_C_WALLET);
	c->amount = dbres_i64(res, row, COT_C_AMOUNT);
	dbres_copy(c->status, sizeof c->status, res, row, COT_C_STATUS);
	dbres_copy(c->reference, sizeof c->reference, res, row, COT_C_REFERENCE);
	dbres_copy(c->reason, sizeof c->reason, res, row, COT_C_REASON);
	c->created_at = dbres_i64(res, row, COT_C_CREATED_AT);
	c->settled_at = dbres_isnull(res, row, COT_C_SETTLED_AT) ? 0 :
	    dbres_i64(res, row, COT_C_SETTLED_AT);
	return 0;
}

enum db_rc
db_cashout_insert(struct db *db, const char *id, const char *account, const char *wallet,
    int64_t amount, int64_t now)
{
	return DB_Q(db, q_cot_insert, NULL, NULL, P_STR(id), P_STR(account), P_STR(wallet),
	    P_I64(amount), P_I64(now));
}

enum db_rc
db_cashout_get(struct db *db, const char *id, int lock, struct cashout *out)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = DB_ONE(db, lock ? q_cot_lock : q_cot_get, &res, P_STR(id))) != DB_OK)
		return rc;
	cot_row(res, 0, out);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_cashout_settle(struct db *db, const char *id, const char *status, const char *reference,
    const char *reason, int64_t now)
{
	uint64_t n = 0;
	enum db_rc rc;

	rc = DB_Q(db, q_cot_settle, NULL, &n, P_STR(status), P_STR(reference), P_STR(reason),
	    P_I64(now), P_STR(id));
	return rc == DB_OK && n != 1 ? DB_NOTFOUND : rc;
}

enum db_rc
db_cashout_list(struct db *db, const char *account, int64_t cursor, int64_t limit,
    struct cashout **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	void *rows = NULL;
	int more = 0;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	*next = 0;
	if ((rc = db_cursor_known(db, q_cot_known, account, cursor)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_cot_list, &res, NULL, P_STR(account), P_I64(db_cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = dbres_map(res, limit, sizeof **v, cot_row, cot_clear, &rows, n, &more);
	dbres_free(res);
	*v = rows;
	if (rc == DB_OK && more)
		*next = (*v)[*n - 1].seq;
	return rc;
}
