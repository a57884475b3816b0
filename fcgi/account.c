/* Account and login endpoints: e-mail codes, identity providers, tokens,
 * claiming agents, the account view. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "core/ids.h"
#include "core/ledger.h"
#include "core/reputation.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/events.h"
#include "db/ledger.h"
#include "db/limits.h"
#include "db/outbox.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/oidc.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"

#define CODE_TTL	600		/* e-mail codes live 10 minutes */
#define CODE_TRIES	5		/* wrong tries that burn a code */
#define CODE_WINDOW	3600		/* login_codes_per_hour (5) per address */
/* design.md §9.2-9.3: failures per address, account and client network,
 * each in a rolling hour (config login_failures_..., claim_failures_...) */
#define FAIL_WINDOW	3600
#define TOKEN_TTL	(30 * 24 * 3600)	/* access tokens: 30 days absolute */

/* Addresses are compared case-insensitively: stored lowercase. */
static void
lower(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i] != '\0'; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = '\0';
}

struct email_in {
	const char *email;
};

static const struct field send_fields[] = {
	{ "email", F_EMAIL, F_REQUIRED, 0, 0, offsetof(struct email_in, email) },
};

struct send_ctx {
	char email[256];
	char code[LOGIN_CODE_BUFSZ];
	unsigned char hash[32];
};

static enum db_rc
send_tx(struct req *r, void *arg)
{
	struct send_ctx *c = arg;
	char bucket[300], net[96], body[512];
	enum db_rc rc;

	/* design.md §9.2: per address, then per client network */
	snprintf(bucket, sizeof bucket, "mail:%.90s", c->email);
	rate_bucket_net(r, "mailnet", net, sizeof net);
	if ((rc = rate_take_or_reply(r, bucket, CODE_WINDOW, r->cfg->login_codes_per_hour,
	    "login codes per address")) != DB_OK ||
	    (rc = rate_take_or_reply(r, net, CODE_WINDOW, r->cfg->send_code_per_network_hour,
	    "login codes per client network")) != DB_OK)
		return rc;
	if ((rc = db_code_set(r->db, c->email, c->hash, r->now, r->now + CODE_TTL)) != DB_OK)
		return rc;
	/* Queued with the code, sent by arps-deliver: a worker never sends. */
	snprintf(body, sizeof body,
	    "Your arps login code is %s\n\nIt is valid for 10 minutes. If you did not ask "
	    "for it, ignore this message.", c->code);
	rc = db_outbox_mail(r->db, r->cfg, c->email, "Your arps login code", body, r->now);
	sodium_memzero(body, sizeof body);
	if (rc != DB_OK)
		return rc;
	reply_json(r, 202, json_pack_status("sent"));
	return DB_OK;
}

/* POST /auth/email/send-code: 202 whether or not the address is known. */
enum h_rc
h_send_code(struct req *r)
{
	struct email_in in = { 0 };
	struct send_ctx c;
	unsigned present;

	if (decode_body_or_reply(r, send_fields, NFIELDS(send_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	lower(c.email, sizeof c.email, in.email);
	if (login_code_new(&secret_rng, c.code) != 0)
		return reply_err(r, ARPS_E_INTERNAL, "cannot generate a code");
	secret_hash(r->cfg, c.email, c.code, strlen(c.code), c.hash);
	(void)req_tx(r, send_tx, &c);
	sodium_memzero(c.code, sizeof c.code);
	return H_OK;
}

struct login_in {
	const char *provider, *email, *code, *token;
};

static const struct field login_fields[] = {
	{ "provider", F_STR, F_REQUIRED, 1, VAL_PROVIDER_MAX, offsetof(struct login_in, provider) },
	{ "email", F_EMAIL, 0, 0, 0, offsetof(struct login_in, email) },
	{ "code", F_STR, 0, 1, 16, offsetof(struct login_in, code) },
	{ "token", F_STR, 0, 1, 4 * VAL_TOKEN_MAX, offsetof(struct login_in, token) },	/* oidc_verify refuses > 8 KiB: 401 */
};

struct login_ctx {
	char email[256];
	const char *code;
	int code_form;			/* the code has the form of a login code */
	struct oidc_claims claims;	/* identity-provider login */
	int idp;
	struct account acc;
	char token[TOKEN_BUFSZ];
	unsigned char tokhash[32];
};

static void
answer_login(struct req *r, struct login_ctx *c)
{
	struct json_object *o = json_object_new_object(), *acc = json_object_new_object();
	struct json_object *roles = json_object_new_array();

	jadd_str(o, "access_token", c->token);
	jadd_str(o, "token_type", "bearer");
	jadd_int(o, "expires_in", TOKEN_TTL);
	jadd_str(acc, "id", c->acc.id);
	jadd_str(acc, "email", c->acc.email[0] ? c->acc.email : NULL);
	if (c->acc.roles & ACC_ROLE_RESEARCHER)
		json_object_array_add(roles, json_object_new_string("researcher"));
	if (c->acc.roles & ACC_ROLE_PARTICIPANT)
		json_object_array_add(roles, json_object_new_string("participant"));
	if (c->acc.roles & ACC_ROLE_ADMIN)
		json_object_array_add(roles, json_object_new_string("admin"));
	json_object_object_add(acc, "roles", roles);
	json_object_object_add(o, "account", acc);
	reply_json(r, 200, o);
}

static enum db_rc
issue_token(struct req *r, struct login_ctx *c)
{
	return db_token_insert(r->db, c->tokhash, c->acc.id, r->now, r->now + TOKEN_TTL);
}

/*
 * A failed e-mail login (design.md §9.2): counted for the client network,
 * and for the address only when it had a live code (addrb not NULL), so
 * that no one locks an address out without a code having been sent to it
 * (buckets locked by email_login_tx); the failure that fills the address's
 * hour burns the address's code.  Answers 401 and returns DB_OK, so that
 * the count commits.
 */
static enum db_rc
email_login_failed(struct req *r, const char *netb, const char *addrb, const char *email,
    const char *detail)
{
	int64_t retry;
	int allowed;
	enum db_rc rc;

	if ((rc = db_rate_add(r->db, netb, r->now)) != DB_OK)
		return rc;
	if (addrb == NULL) {
		reply_err(r, ARPS_E_INVALID_CODE, "%s", detail);
		return DB_OK;
	}
	if ((rc = db_rate_add(r->db, addrb, r->now)) != DB_OK ||
	    (rc = db_rate_check(r->db, addrb, FAIL_WINDOW, r->cfg->login_failures_per_address_hour,
	    r->now, &allowed, &retry)) != DB_OK)
		return rc;
	if (!allowed && (rc = db_code_delete(r->db, email)) != DB_OK)
		return rc;
	reply_err(r, ARPS_E_INVALID_CODE, "%s", detail);
	return DB_OK;
}

static enum db_rc
email_login_tx(struct req *r, void *arg)
{
	struct login_ctx *c = arg;
	unsigned char want[32], got[32];
	char netb[96], addrb[96];
	int64_t expires;
	int tries;
	enum db_rc rc;

	/* Locks: the network's bucket, the address's, then the code row. */
	rate_bucket_net(r, "loginfail", netb, sizeof netb);
	rate_bucket_hashed(r, "loginfail", c->email, addrb, sizeof addrb);
	if ((rc = rate_check_or_reply(r, netb, FAIL_WINDOW, r->cfg->login_failures_per_network_hour,
	    "failed logins per client network")) != DB_OK ||
	    (rc = rate_check_or_reply(r, addrb, FAIL_WINDOW,
	    r->cfg->login_failures_per_address_hour, "failed logins per address")) != DB_OK)
		return rc;
	rc = db_code_get(r->db, c->email, want, &expires, &tries);
	/* no live code (never sent, expired or burnt): the network's failure only */
	if (rc == DB_NOTFOUND || (rc == DB_OK && (expires <= r->now || tries >= CODE_TRIES)))
		return email_login_failed(r, netb, NULL, c->email,
		    "invalid or expired code; request a new one");
	if (rc != DB_OK)
		return rc;
	if (c->code_form)
		secret_hash(r->cfg, c->email, c->code, strlen(c->code), got);
	if (!c->code_form || sodium_memcmp(want, got, 32) != 0) {
		/* The fifth wrong try burns the code. */
		rc = tries + 1 >= CODE_TRIES ? db_code_delete(r->db, c->email) : db_code_fail(r->db, c->email);
		if (rc != DB_OK)
			return rc;
		return email_login_failed(r, netb, addrb, c->email, "invalid or expired code");
	}
	if ((rc = db_code_delete(r->db, c->email)) != DB_OK ||
	    (rc = db_account_for_email(r->db, c->email, r->now, &c->acc)) != DB_OK ||
	    (rc = issue_token(r, c)) != DB_OK)
		return rc;
	answer_login(r, c);
	return DB_OK;
}

/* Find the account of a verified identity: by (issuer, subject), else by
 * verified e-mail (linking the identity), else a new account. */
static enum db_rc
idp_login_tx(struct req *r, void *arg)
{
	struct login_ctx *c = arg;
	char accid[IDS_BUFSZ];
	enum db_rc rc;

	rc = db_identity_get(r->db, c->claims.iss, c->claims.sub, accid);
	if (rc == DB_OK)
		rc = db_account_get(r->db, accid, &c->acc);
	else if (rc == DB_NOTFOUND) {
		if (c->email[0] != '\0')
			rc = db_account_for_email(r->db, c->email, r->now, &c->acc);
		else
			rc = db_account_create(r->db, NULL, ACC_ROLE_RESEARCHER | ACC_ROLE_PARTICIPANT,
			    r->now, &c->acc);
		if (rc == DB_OK)
			rc = db_identity_link(r->db, c->claims.iss, c->claims.sub, c->acc.id, r->now);
		if (rc == DB_DUP)
			rc = DB_RETRY;	/* a concurrent first login: retry finds it */
	}
	if (rc != DB_OK || (rc = issue_token(r, c)) != DB_OK)
		return rc;
	answer_login(r, c);
	return DB_OK;
}

/* POST /auth/login: provider "email" with email + code, or an identity
 * provider's name with its ID token. */
enum h_rc
h_login(struct req *r)
{
	const struct config_idp *idp;
	struct login_in in = { 0 };
	struct login_ctx c;
	char why[128];
	unsigned present;
	enum h_rc rc;

	if (decode_body_or_reply(r, login_fields, NFIELDS(login_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	if (token_new(&secret_rng, c.token) != 0)
		return reply_err(r, ARPS_E_INTERNAL, "cannot generate a token");
	secret_hash(r->cfg, "token", c.token, strlen(c.token), c.tokhash);
	if (strcmp(in.provider, "email") == 0) {
		if (in.email == NULL)
			return reply_err(r, ARPS_E_VALIDATION, "email: is required");
		if (in.code == NULL)
			return reply_err(r, ARPS_E_VALIDATION, "code: is required");
		lower(c.email, sizeof c.email, in.email);
		c.code = in.code;
		/* a malformed code is a failed login too (design.md §9.2) */
		c.code_form = login_code_valid(in.code);
		rc = req_tx(r, email_login_tx, &c);
	} else {
		if ((idp = config_idp(r->cfg, in.provider)) == NULL)
			return reply_err(r, ARPS_E_VALIDATION, "provider: unknown identity provider");
		if (in.token == NULL)
			return reply_err(r, ARPS_E_VALIDATION, "token: is required");
		if (oidc_verify(idp, in.token, r->now, &c.claims, why, sizeof why) != 0)
			return reply_err(r, ARPS_E_INVALID_TOKEN, "invalid identity token: %s", why);
		/* design.md §9.11: the address joins (or is given to) an account
		 * only when verified and when this provider is trusted to
		 * verify; else the identity gets an account of its own, without
		 * the address, so a login by e-mail code never reaches it. */
		if (idp->link_email && c.claims.email_verified && c.claims.email[0] != '\0' &&
		    val_email(c.claims.email, strlen(c.claims.email)) == 0)
			lower(c.email, sizeof c.email, c.claims.email);
		c.idp = 1;
		rc = req_tx(r, idp_login_tx, &c);
	}
	sodium_memzero(c.token, sizeof c.token);
	return rc;
}

/* GET /auth/providers (design.md §12): the identity providers a browser can
 * sign in with (those configured with authorize_url and client_id), for the
 * OpenID Connect implicit flow; public. */
enum h_rc
h_auth_providers(struct req *r)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array(), *p;
	const struct config_idp *idp;
	size_t i;

	for (i = 0; i < r->cfg->nidp; i++) {
		idp = &r->cfg->idp[i];
		if (idp->authorize_url[0] == '\0')
			continue;
		p = json_object_new_object();
		jadd_str(p, "name", idp->name);
		jadd_str(p, "label", idp->label[0] ? idp->label : idp->name);
		jadd_str(p, "authorization_endpoint", idp->authorize_url);
		jadd_str(p, "client_id", idp->client_id);
		jadd_str(p, "response_type", "id_token");
		jadd_str(p, "scope", "openid email");
		json_object_array_add(arr, p);
	}
	json_object_object_add(o, "providers", arr);
	return reply_json(r, 200, o);
}

/* POST /auth/logout: revoke the bearer token used. */
enum h_rc
h_logout(struct req *r)
{
	enum db_rc rc;

	if ((rc = db_token_revoke(r->db, r->who.token_hash, r->now)) != DB_OK)
		return reply_db(r, rc);
	return reply_json(r, 200, json_pack_status("ok"));
}

struct claim_in {
	const char *claim_code;
};

static const struct field claim_fields[] = {
	{ "claim_code", F_STR, F_REQUIRED, 1, 64, offsetof(struct claim_in, claim_code) },
};
const struct field_list fields_claim = FIELD_LIST(claim_fields);

struct claim_ctx {
	unsigned char hash[32];
	int code_form;			/* the code has the form of a claim code */
};

static enum db_rc
claim_tx(struct req *r, void *arg)
{
	struct claim_ctx *c = arg;
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	struct json_object *o;
	char netb[96], accb[96];
	struct agent a;
	enum db_rc rc;

	/* design.md §9.3: failed claims per client network and per account;
	 * an unknown, expired or malformed code is a failure (committed). */
	rate_bucket_net(r, "claimfail", netb, sizeof netb);
	snprintf(accb, sizeof accb, "claimfail:%s", r->who.id);
	if ((rc = rate_check_or_reply(r, netb, FAIL_WINDOW, r->cfg->claim_failures_per_network_hour,
	    "failed claims per client network")) != DB_OK ||
	    (rc = rate_check_or_reply(r, accb, FAIL_WINDOW, r->cfg->claim_failures_per_account_hour,
	    "failed claims per account")) != DB_OK)
		return rc;
	rc = c->code_form ? db_agent_by_claimhash(r->db, c->hash, r->now, &a) : DB_NOTFOUND;
	if (rc == DB_NOTFOUND) {
		if ((rc = db_rate_add(r->db, netb, r->now)) != DB_OK ||
		    (rc = db_rate_add(r->db, accb, r->now)) != DB_OK)
			return rc;
		reply_err(r, ARPS_E_NOT_FOUND, "unknown claim code");
		return DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	if (a.account_id[0] != '\0') {
		reply_err(r, ARPS_E_ALREADY_CLAIMED, "this agent is already claimed");
		return DB_ROLLBACK;
	}
	if ((rc = db_agent_claim(r->db, a.id, r->who.id)) != DB_OK)
		return rc;
	li.ev = LEDGER_EV_CLAIM_BONUS;
	li.amount = r->cfg->signup_bonus_cents;
	if (ledger_build(&li, &le) != ARPS_OK)
		return DB_ERR;
	party[LEDGER_P_AGENT] = a.id;
	if ((rc = db_ledger_post(r->db, &le, party, NULL, LEDGER_EV_CLAIM_BONUS, NULL, r->now)) != DB_OK)
		return rc;
	if (li.amount > 0 && (rc = db_event(r->db, a.id, EV_WALLET_CREDITED, r->now,
	    "{\"amount_cents\":%lld,\"cause\":\"signup_bonus\"}", (long long)li.amount)) != DB_OK)
		return rc;
	o = json_object_new_object();
	jadd_str(o, "agent_id", a.id);
	jadd_str(o, "status", strcmp(a.status, "suspended") == 0 ? "suspended" : "claimed");
	jadd_str(o, "account_id", r->who.id);
	jadd_int(o, "signup_bonus_cents", r->cfg->signup_bonus_cents);
	reply_json(r, 200, o);
	return DB_OK;
}

/* POST /auth/claim (design.md §6.3): link an agent to the caller's account. */
enum h_rc
h_claim(struct req *r)
{
	struct claim_in in = { 0 };
	struct claim_ctx c;
	char norm[CLAIM_BUFSZ];
	unsigned present;

	if (decode_body_or_reply(r, claim_fields, NFIELDS(claim_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	if ((c.code_form = claim_code_normalize(in.claim_code, norm)))
		secret_hash(r->cfg, "claim", norm, strlen(norm), c.hash);
	return req_tx(r, claim_tx, &c);
}

/* GET /account (design.md §6.12). */
enum h_rc
h_account(struct req *r)
{
	struct json_object *o, *roles, *agents, *ag, *w;
	struct acc_agent *av = NULL;
	struct account acc;
	enum db_rc rc;
	size_t i, n = 0;

	if ((rc = db_account_get(r->db, r->who.id, &acc)) != DB_OK ||
	    (rc = db_account_agents(r->db, acc.id, &av, &n)) != DB_OK)
		return reply_db(r, rc == DB_NOTFOUND ? DB_ERR : rc);
	o = json_object_new_object();
	jadd_str(o, "id", acc.id);
	jadd_str(o, "email", acc.email[0] ? acc.email : NULL);
	roles = json_object_new_array();
	if (acc.roles & ACC_ROLE_RESEARCHER)
		json_object_array_add(roles, json_object_new_string("researcher"));
	if (acc.roles & ACC_ROLE_PARTICIPANT)
		json_object_array_add(roles, json_object_new_string("participant"));
	if (acc.roles & ACC_ROLE_ADMIN)
		json_object_array_add(roles, json_object_new_string("admin"));
	json_object_object_add(o, "roles", roles);
	jadd_time(o, "created_at", acc.created_at);
	/* the fee a study created now pays (design.md §4.1), for cost previews */
	jadd_int(o, "fee_bps", r->cfg->fee_bps);
	agents = json_object_new_array();
	for (i = 0; i < n; i++) {
		int rep = (int)av[i].reputation;
		ag = json_object_new_object();
		jadd_str(ag, "agent_id", av[i].id);
		jadd_str(ag, "name", av[i].name);
		jadd_str(ag, "status", av[i].status);
		jadd_int(ag, "reputation", rep);
		jadd_str(ag, "tier", rep_tier_name(rep_tier_of(rep)));
		/* the agent's GET /wallet/balance, read in the same query */
		w = json_object_new_object();
		jadd_int(w, "available_cents", av[i].available);
		jadd_int(w, "frozen_cents", av[i].frozen);
		jadd_int(w, "total_cents", av[i].available + av[i].frozen);
		json_object_object_add(ag, "wallet", w);
		json_object_array_add(agents, ag);
	}
	db_acc_agents_free(av, n);
	json_object_object_add(o, "agents", agents);
	return reply_json(r, 200, o);
}

/* POST /auth/logout-all (design.md §9.6): revoke every access token of the
 * account, the one used included. */
enum h_rc
h_logout_all(struct req *r)
{
	enum db_rc rc;

	if ((rc = db_token_revoke_all(r->db, r->who.id, r->now, NULL)) != DB_OK)
		return reply_db(r, rc);
	return reply_json(r, 200, json_pack_status("ok"));
}
