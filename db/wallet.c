#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/wallet.h"

#define TXN_COLS "seq, id, type, amount_cents, study_id, description, created_at"

static const char q_txn_all[] =
    "SELECT " TXN_COLS " FROM transactions WHERE owner_id = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?";
static const char q_txn_type[] =
    "SELECT " TXN_COLS " FROM transactions WHERE owner_id = ? AND type = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?";

void
db_txns_free(struct txn_row *v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i].description);
	free(v);
}

enum db_rc
db_txn_list(struct db *db, const char *owner, const enum ledger_txn_type *type, int64_t cursor,
    int64_t limit, struct txn_row **v, size_t *n, int64_t *next)
{
	struct dbres *res = NULL;
	int64_t bound = cursor > 0 ? cursor : INT64_MAX;
	size_t i, keep;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	*next = 0;
	if (type != NULL)
		rc = DB_Q(db, q_txn_type, &res, NULL, P_STR(owner),
		    P_STR(ledger_txn_type_name(*type)), P_I64(bound), P_I64(limit + 1));
	else
		rc = DB_Q(db, q_txn_all, &res, NULL, P_STR(owner), P_I64(bound), P_I64(limit + 1));
	if (rc != DB_OK)
		return rc;
	keep = res->nrows > (size_t)limit ? (size_t)limit : res->nrows;
	if (keep > 0 && (*v = calloc(keep, sizeof **v)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < keep; i++) {
		struct txn_row *t = &(*v)[i];
		const char *d = dbres_str(res, i, 5);

		t->seq = dbres_i64(res, i, 0);
		snprintf(t->id, sizeof t->id, "%s", dbres_str(res, i, 1) ? dbres_str(res, i, 1) : "");
		if (!ledger_txn_type_from_name(dbres_str(res, i, 2), &t->type) ||
		    (t->description = strdup(d ? d : "")) == NULL) {
			db_txns_free(*v, i + 1);
			*v = NULL;
			dbres_free(res);
			return DB_ERR;
		}
		t->amount = dbres_i64(res, i, 3);
		snprintf(t->study_id, sizeof t->study_id, "%s",
		    dbres_str(res, i, 4) ? dbres_str(res, i, 4) : "");
		t->created_at = dbres_i64(res, i, 6);
	}
	*n = keep;
	if (res->nrows > keep && keep > 0)
		*next = (*v)[keep - 1].seq;
	dbres_free(res);
	return DB_OK;
}
