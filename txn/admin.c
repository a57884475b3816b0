#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "core/ids.h"
#include "core/ledger.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/admin.h"
#include "db/db.h"
#include "db/events.h"
#include "db/ledger.h"
#include "db/wallet.h"
#include "lib/config.h"
#include "txn/admin.h"

static int
refuse(const char *fmt, const char *arg)
{
	fprintf(stderr, "arps-admin: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 1;
}

static int
dberr(struct db *db)
{
	return refuse("database error: %s", db_error(db));
}

int
admin_migrate(struct db *db, const struct config *cfg, char **args)
{
	(void)args;
	if (db_migrate(db, cfg->migrations_dir, 1) != DB_OK)
		return refuse("migrate failed: %s", db_error(db));
	printf("schema up to date\n");
	return 0;
}

/* EMAIL, acc_... or agt_...: the wallet owner id into out. */
static int
resolve_owner(struct db *db, const char *who, char out[IDS_BUFSZ])
{
	struct account acc;
	struct agent ag;
	char email[256];
	size_t i;
	enum db_rc rc;

	if (ids_valid(IDS_ACCOUNT, who)) {
		rc = db_account_get(db, who, &acc);
	} else if (ids_valid(IDS_AGENT, who)) {
		if ((rc = db_agent_get(db, who, 0, &ag)) == DB_OK)
			snprintf(out, IDS_BUFSZ, "%s", ag.id);
		return rc == DB_OK ? 0 : rc == DB_NOTFOUND ? refuse("no such agent: %s", who) : dberr(db);
	} else if (val_email(who, strlen(who)) == 0) {
		for (i = 0; who[i] != '\0' && i + 1 < sizeof email; i++)
			email[i] = (char)tolower((unsigned char)who[i]);
		email[i] = '\0';
		rc = db_account_by_email(db, email, &acc);
	} else
		return refuse("not an e-mail address, account or agent id: %s", who);
	if (rc == DB_NOTFOUND)
		return refuse("no such account: %s", who);
	if (rc != DB_OK)
		return dberr(db);
	snprintf(out, IDS_BUFSZ, "%s", acc.id);
	return 0;
}

static int
parse_cents(const char *s, int64_t *out)
{
	return val_parse_int64(s, strlen(s), 1, 100000000000000LL, out) == 0 ? 0 : -1;
}

int
admin_create_account(struct db *db, const struct config *cfg, char **args)
{
	struct account acc;
	char email[256];
	size_t i;
	enum db_rc rc;

	(void)cfg;
	if (val_email(args[0], strlen(args[0])) != 0)
		return refuse("not an e-mail address: %s", args[0]);
	for (i = 0; args[0][i] != '\0' && i + 1 < sizeof email; i++)
		email[i] = (char)tolower((unsigned char)args[0][i]);
	email[i] = '\0';
	if ((rc = db_begin(db)) != DB_OK)
		return dberr(db);
	rc = db_account_create(db, email, ACC_ROLE_RESEARCHER | ACC_ROLE_PARTICIPANT,
	    (int64_t)time(NULL), &acc);
	if (rc == DB_OK)
		rc = db_commit(db);
	else
		db_rollback(db);
	if (rc == DB_DUP)
		return refuse("an account with this e-mail exists: %s", email);
	if (rc != DB_OK)
		return dberr(db);
	printf("%s\n", acc.id);
	return 0;
}

/* grant / revoke: add or remove one role of an account. */
static int
set_role(struct db *db, char **args, int grant)
{
	char owner[IDS_BUFSZ];

	if (strcmp(args[1], "researcher") != 0 && strcmp(args[1], "participant") != 0 &&
	    strcmp(args[1], "admin") != 0)
		return refuse("unknown role: %s", args[1]);
	if (resolve_owner(db, args[0], owner) != 0)
		return 1;
	if (owner[0] != 'a' || owner[1] != 'c')
		return refuse("roles are for accounts: %s", args[0]);
	if ((grant ? db_account_role_add(db, owner, args[1])
	    : db_account_role_remove(db, owner, args[1])) != DB_OK)
		return dberr(db);
	printf("%s\n", owner);
	return 0;
}

int
admin_grant(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return set_role(db, args, 1);
}

int
admin_revoke(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return set_role(db, args, 0);
}

/* Top-up or cash-out in one transaction, through core's posting rules. */
static int
move(struct db *db, char **args, enum ledger_event ev)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	char owner[IDS_BUFSZ];
	int64_t cents, avail, frozen;
	enum arps_err refusal;	/* core's verdict on the posting */
	int tries;
	enum db_rc rc;

	if (parse_cents(args[1], &cents) != 0) {
		fprintf(stderr, "arps-admin: CENTS must be a positive integer number of US cents "
		    "(1000 = 10.00 USD)\n");
		return 2;
	}
	if (resolve_owner(db, args[0], owner) != 0)
		return 1;
	party[LEDGER_P_WALLET] = owner;
	for (tries = 0; tries < 5; tries++) {
		if ((rc = db_begin(db)) != DB_OK)
			return dberr(db);
		if ((rc = db_wallet_lock_create(db, owner, &avail, &frozen)) != DB_OK)
			goto fail;
		li.ev = ev;
		li.amount = cents;
		li.available = avail;
		if ((refusal = ledger_build(&li, &le)) != ARPS_OK) {
			db_rollback(db);
			if (refusal == ARPS_E_INSUFFICIENT_FUNDS)
				return refuse("insufficient funds in %s", owner);
			return refuse("refused: %s", arps_err_code(refusal));
		}
		if ((rc = db_ledger_post(db, &le, party, NULL, ev, NULL, (int64_t)time(NULL))) != DB_OK ||
		    (ev == LEDGER_EV_TOPUP && (rc = db_event(db, owner, EV_WALLET_CREDITED,
		    (int64_t)time(NULL), "{\"amount_cents\":%lld,\"cause\":\"manual_topup\"}",
		    (long long)cents)) != DB_OK) ||
		    (rc = db_commit(db)) != DB_OK)
			goto fail;
		if (db_wallet_get(db, owner, &avail, &frozen) != DB_OK)
			return dberr(db);
		printf("{\"owner_id\":\"%s\",\"available_cents\":%lld,\"frozen_cents\":%lld,"
		    "\"total_cents\":%lld}\n", owner, (long long)avail, (long long)frozen,
		    (long long)(avail + frozen));
		return 0;
fail:
		db_rollback(db);
		if (rc != DB_RETRY)
			return dberr(db);
	}
	return dberr(db);
}

int
admin_topup(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return move(db, args, LEDGER_EV_TOPUP);
}

int
admin_cashout(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return move(db, args, LEDGER_EV_CASHOUT);
}

/* Settle a requested cash-out in one transaction: paid moves
 * platform:cashouts -> external; refused moves it back to the wallet's
 * available balance with a cashout_refund row and a wallet.credited event. */
static int
settle(struct db *db, const char *id, const char *text, int paid)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	struct cashout c;
	int64_t now = (int64_t)time(NULL), avail, frozen;
	int tries;
	enum db_rc rc;

	if (!ids_valid(IDS_CASHOUT, id))
		return refuse("not a cash-out id: %s", id);
	if (strlen(text) == 0 || strlen(text) > (paid ? 200 : 500))
		return refuse(paid ? "REFERENCE must be 1 to 200 characters: %s" :
		    "REASON must be 1 to 500 characters: %s", text);
	for (tries = 0; tries < 5; tries++) {
		if ((rc = db_begin(db)) != DB_OK)
			return dberr(db);
		if ((rc = db_cashout_get(db, id, 1, &c)) == DB_NOTFOUND) {
			db_rollback(db);
			return refuse("no such cash-out: %s", id);
		}
		if (rc != DB_OK)
			goto fail;
		if (strcmp(c.status, "requested") != 0) {
			db_rollback(db);
			fprintf(stderr, "arps-admin: cash-out %s is already %s\n", id, c.status);
			return 1;
		}
		/* the wallet's lock before its balance changes (design.md §13.2) */
		if (!paid && (rc = db_wallet_lock(db, c.wallet_id, &avail, &frozen)) != DB_OK)
			goto fail;
		li.ev = paid ? LEDGER_EV_CASHOUT_PAID : LEDGER_EV_CASHOUT_REFUSE;
		li.amount = c.amount;
		party[LEDGER_P_WALLET] = c.wallet_id;
		if (ledger_build(&li, &le) != ARPS_OK) {
			db_rollback(db);
			return refuse("refused: cash-out %s cannot be posted", id);
		}
		if ((rc = db_cashout_settle(db, id, paid ? "paid" : "refused", paid ? text : NULL,
		    paid ? NULL : text, now)) != DB_OK ||
		    (rc = db_ledger_post(db, &le, party, NULL, li.ev, paid ? NULL :
		    "Refused cash-out returned", now)) != DB_OK ||
		    (!paid && (rc = db_event(db, c.wallet_id, EV_WALLET_CREDITED, now,
		    "{\"amount_cents\":%lld,\"cause\":\"cashout_refund\"}",
		    (long long)c.amount)) != DB_OK) ||
		    (rc = db_commit(db)) != DB_OK)
			goto fail;
		printf("{\"id\":\"%s\",\"status\":\"%s\",\"amount_cents\":%lld,"
		    "\"wallet_id\":\"%s\"}\n", id, paid ? "paid" : "refused", (long long)c.amount,
		    c.wallet_id);
		return 0;
fail:
		db_rollback(db);
		if (rc != DB_RETRY)
			return dberr(db);
	}
	return dberr(db);
}

int
admin_cashout_paid(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return settle(db, args[0], args[1], 1);
}

int
admin_cashout_refuse(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return settle(db, args[0], args[1], 0);
}

int
admin_wallet(struct db *db, const struct config *cfg, char **args)
{
	char owner[IDS_BUFSZ];
	int64_t avail = 0, frozen = 0;
	enum db_rc rc;

	(void)cfg;
	if (resolve_owner(db, args[0], owner) != 0)
		return 1;
	rc = db_wallet_get(db, owner, &avail, &frozen);
	if (rc != DB_OK && rc != DB_NOTFOUND)
		return dberr(db);
	printf("{\"available_cents\":%lld,\"frozen_cents\":%lld,\"total_cents\":%lld}\n",
	    (long long)avail, (long long)frozen, (long long)(avail + frozen));
	return 0;
}

static int
set_suspended(struct db *db, const char *id, int suspend)
{
	struct agent a;
	enum db_rc rc;

	if (!ids_valid(IDS_AGENT, id))
		return refuse("not an agent id: %s", id);
	if ((rc = db_begin(db)) != DB_OK)
		return dberr(db);
	if ((rc = db_agent_get(db, id, 1, &a)) != DB_OK) {
		db_rollback(db);
		return rc == DB_NOTFOUND ? refuse("no such agent: %s", id) : dberr(db);
	}
	if (suspend && strcmp(a.status, "suspended") == 0) {
		db_rollback(db);
		return refuse("agent already suspended: %s", id);
	}
	if (!suspend && strcmp(a.status, "suspended") != 0) {
		db_rollback(db);
		return refuse("agent is not suspended: %s", id);
	}
	rc = suspend ? db_agent_set_status(db, id, "suspended", a.status)
	    : db_agent_set_status(db, id, a.before_suspend[0] ? a.before_suspend :
	    (a.account_id[0] ? "claimed" : "unclaimed"), NULL);
	if (rc != DB_OK || (rc = db_commit(db)) != DB_OK) {
		db_rollback(db);
		return dberr(db);
	}
	printf("%s %s\n", id, suspend ? "suspended" : "reinstated");
	return 0;
}

int
admin_suspend(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return set_suspended(db, args[0], 1);
}

int
admin_reinstate(struct db *db, const struct config *cfg, char **args)
{
	(void)cfg;
	return set_suspended(db, args[0], 0);
}

/* One violation of verify-ledger, printed and counted in *arg. */
static void
violation(void *arg, const char *what, const char *subject, const char *detail)
{
	size_t *bad = arg;

	printf("VIOLATION %s: %s %s\n", what, subject, detail ? detail : "");
	(*bad)++;
}

int
admin_verify_ledger(struct db *db, const struct config *cfg, char **args)
{
	size_t bad = 0, n = 0;

	(void)cfg;
	(void)args;
	if (db_ledger_verify(db, violation, &bad, &n) != DB_OK)
		return dberr(db);
	if (bad > 0) {
		fprintf(stderr, "arps-admin: verify-ledger: %zu violation(s)\n", bad);
		return 1;
	}
	printf("ledger ok: %zu invariants hold\n", n);
	return 0;
}
