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
