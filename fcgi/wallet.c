/* Wallet endpoints (agents and accounts alike): balance and the typed
 * transactions (design.md §4, design.md §6.15). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/ledger.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/ledger.h"
#include "db/wallet.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "txn/lifecycle.h"

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

/* --- cash-out requests (design.md §4.2) --- */

#define CASHOUT_MAX_CENTS	100000000000000LL	/* 10^14, as arps-admin's CENTS */

struct cashout_in {
	int64_t amount;
	const char *agent_id;
};

static const struct field cashout_fields[] = {
	{ "amount_cents", F_INT, F_REQUIRED, 1, CASHOUT_MAX_CENTS,
	    offsetof(struct cashout_in, amount) },
	{ "agent_id", F_NAME, F_NULLABLE, 1, 64, offsetof(struct cashout_in, agent_id) },
};
const struct field_list fields_cashout = FIELD_LIST(cashout_fields);

static struct json_object *
cashout_json(const struct cashout *c)
{
	struct json_object *o = json_object_new_object();

	jadd_str(o, "id", c->id);
	jadd_str(o, "wallet_id", c->wallet_id);
	jadd_int(o, "amount_cents", c->amount);
	jadd_str(o, "status", c->status);
	jadd_str(o, "reference", c->reference[0] ? c->reference : NULL);
	jadd_str(o, "reason", c->reason[0] ? c->reason : NULL);
	jadd_time(o, "created_at", c->created_at);
	jadd_time(o, "settled_at", c->settled_at);
	return o;
}

struct cashout_ctx {
	const char *wallet;
	int64_t amount;
};

static enum db_rc
cashout_tx(struct req *r, void *arg)
{
	struct cashout_ctx *c = arg;
	struct cashout co;
	char id[IDS_BUFSZ];
	enum arps_err outcome;
	enum db_rc rc;

	if ((rc = txn_cashout_request(r->db, r->who.id, c->wallet, c->amount, r->now, id,
	    &outcome)) != DB_OK)
		return rc;
	if (outcome == ARPS_E_INSUFFICIENT_FUNDS) {
		reply_err(r, outcome, "amount_cents: more than the wallet's available balance");
		return DB_ROLLBACK;
	}
	if (outcome != ARPS_OK) {
		reply_err(r, outcome, "the cash-out cannot be requested");
		return DB_ROLLBACK;
	}
	if ((rc = db_cashout_get(r->db, id, 0, &co)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	reply_json(r, 201, cashout_json(&co));
	return DB_OK;
}

/* POST /wallet/cashouts {amount_cents, agent_id?}: from the account's own
 * wallet, or from the wallet of an agent the account owns. */
enum h_rc
h_cashout_create(struct req *r)
{
	struct cashout_in in = { 0 };
	struct cashout_ctx c;
	struct agent ag;
	unsigned present;
	enum db_rc rc;

	if (decode_body_or_reply(r, cashout_fields, NFIELDS(cashout_fields), &in, &present) != H_OK)
		return H_REPLIED;
	c.wallet = r->who.id;
	c.amount = in.amount;
	if (in.agent_id != NULL) {
		if (!ids_valid(IDS_AGENT, in.agent_id))
			return reply_err(r, ARPS_E_NOT_FOUND, "no such agent of yours: %.40s",
			    in.agent_id);
		rc = db_agent_get(r->db, in.agent_id, 0, &ag);
		if (rc != DB_OK && rc != DB_NOTFOUND)
			return reply_db(r, rc);
		if (rc == DB_NOTFOUND || strcmp(ag.account_id, r->who.id) != 0)
			return reply_err(r, ARPS_E_NOT_FOUND, "no such agent of yours: %.40s",
			    in.agent_id);
		c.wallet = in.agent_id;
	}
	return req_tx(r, cashout_tx, &c);
}

/* GET /wallet/cashouts: the caller's requests, newest first. */
enum h_rc
h_cashout_list(struct req *r)
{
	struct json_object *arr;
	struct cashout *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if ((rc = db_cashout_list(r->db, r->who.id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, cashout_json(&v[i]));
	free(v);
	return reply_page(r, "cashouts", arr, next);
}
