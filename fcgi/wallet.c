/* Wallet endpoints (agents and accounts alike): balance and the typed
 * transactions (design.md §4, design.md §6.15). */
#include <stdio.h>
#include <string.h>

#include "core/ledger.h"
#include "core/validate.h"
#include "db/ledger.h"
#include "db/wallet.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"

/* GET /wallet/balance */
enum h_rc
h_wallet_balance(struct req *r)
{
	struct json_object *o;
	int64_t avail = 0, frozen = 0;
	enum db_rc rc;

	rc = db_wallet_get(r->db, r->who.id, &avail, &frozen);
	if (rc != DB_OK && rc != DB_NOTFOUND)
		return reply_db(r, rc);
	o = json_object_new_object();
	jadd_int(o, "available_cents", avail);
	jadd_int(o, "frozen_cents", frozen);
	jadd_int(o, "total_cents", avail + frozen);
	return reply_json(r, 200, o);
}

/* GET /wallet/transactions?type=&limit=&cursor= */
enum h_rc
h_wallet_transactions(struct req *r)
{
	struct json_object *arr, *it;
	struct txn_row *v = NULL;
	enum ledger_txn_type type;
	int64_t limit, cursor, next;
	char buf[64];
	const char *t;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	t = req_query(r, "type", buf, sizeof buf);
	if (t != NULL && !ledger_txn_type_from_name(t, &type)) {
		char names[512] = "";	/* core's type table, so it cannot drift */
		int k;

		for (k = 0; k < TXN__MAX; k++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
			    k ? ", " : "", ledger_txn_type_name((enum ledger_txn_type)k));
		return reply_err(r, ARPS_E_VALIDATION, "type: must be one of %s", names);
	}
	if (t == NULL && req_query_has(r, "type"))
		return reply_err(r, ARPS_E_VALIDATION, "type: not a transaction type");
	if ((rc = db_txn_list(r->db, r->who.id, t != NULL ? &type : NULL, cursor, limit, &v, &n,
	    &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		it = json_object_new_object();
		jadd_str(it, "id", v[i].id);
		jadd_str(it, "type", ledger_txn_type_name(v[i].type));
		jadd_int(it, "amount_cents", v[i].amount);
		jadd_str(it, "study_id", v[i].study_id[0] ? v[i].study_id : NULL);
		jadd_str(it, "description", v[i].description);
		jadd_time(it, "created_at", v[i].created_at);
		json_object_array_add(arr, it);
	}
	db_txns_free(v, n);
	return reply_page(r, "transactions", arr, next);
}
