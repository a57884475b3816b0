#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "core/ids.h"
#include "db/accounts.h"
#include "fcgi/auth.h"
#include "fcgi/reply.h"
#include "match/engine.h"
#include "lib/config.h"
#include "lib/secret.h"

#define TOKEN_IDLE	(7 * 24 * 3600)	/* idle expiry */
#define TOKEN_TOUCH	60		/* refresh last_used at most once a minute */

static enum h_rc
reply_unauthorized(struct req *r, const char *why)
{
	return reply_err(r, ARPS_E_UNAUTHORIZED, "%s", why);
}

/* X-API-Key: checksum first (no database query for a mistyped or forged
 * key), then the keyed hash is looked up: only hashes are stored, and the
 * index lookup compares hashes, never the key (design.md §9.6).  A rotated
 * key works until its grace period ends or the new key is first used. */
/* The agent's row and active participation come with the key's look-up,
 * in one statement (design.md §15): r->agent and r->agent_cur point here
 * for the rest of the request (a worker serves one request at a time). */
static struct agent key_agent;
static struct agent_current key_cur;

/* The keyed hash of r->apikey into h, or 401 for a malformed key (its
 * checksum, before any query). */
static enum h_rc
key_hash_or_reply(struct req *r, unsigned char h[32])
{
	if (!apikey_check(r->apikey))
		return reply_unauthorized(r, "invalid API key");
	secret_hash(r->cfg, "apikey", r->apikey, strlen(r->apikey), h);
	return H_OK;
}

static enum h_rc
key_auth_or_reply(struct req *r)
{
	const struct match_seq *seq;
	enum db_rc rc;

	if (key_hash_or_reply(r, r->who.token_hash) != H_OK)
		return H_REPLIED;
	if (r->want_heads && (seq = match_seq_now()) != NULL)
		rc = db_agent_by_key_heads(r->db, r->who.token_hash, r->now, &key_agent, &key_cur,
		    seq);
	else
		rc = db_agent_by_key_current(r->db, r->who.token_hash, r->now, &key_agent,
		    &key_cur);
	if (rc == DB_NOTFOUND)
		return reply_unauthorized(r, "invalid API key");
	if (rc != DB_OK)
		return reply_db(r, rc);
	r->who.kind = AUTH_KEY;
	memcpy(r->who.id, key_agent.id, sizeof key_agent.id);
	r->agent = &key_agent;
	r->agent_cur = &key_cur;
	return H_OK;
}

static enum h_rc
bearer_auth_or_reply(struct req *r, unsigned roles)
{
	const char *tok = r->authz + 7;
	int64_t expires, last;
	struct account acc;
	int revoked;
	enum db_rc rc;

	while (*tok == ' ')
		tok++;
	if (!token_valid(tok))
		return reply_unauthorized(r, "invalid access token");
	secret_hash(r->cfg, "token", tok, strlen(tok), r->who.token_hash);
	rc = db_token_lookup(r->db, r->who.token_hash, &acc, &expires, &last, &revoked);
	if (rc == DB_NOTFOUND)
		return reply_unauthorized(r, "invalid access token");
	if (rc != DB_OK)
		return reply_db(r, rc);
	if (revoked || r->now >= expires || r->now - last >= TOKEN_IDLE)
		return reply_unauthorized(r, "the access token has expired or was revoked; log in again");
	if (r->now - last >= TOKEN_TOUCH && (rc = db_token_touch(r->db, r->who.token_hash, r->now)) != DB_OK)
		return reply_db(r, rc);
	r->who.kind = AUTH_BEARER;
	memcpy(r->who.id, acc.id, sizeof acc.id);
	r->who.roles = acc.roles;
	if ((roles & acc.roles) != roles)
		return reply_err(r, ARPS_E_FORBIDDEN, "this account lacks the role this endpoint needs");
	return H_OK;
}

enum h_rc
auth_resolve_or_reply(struct req *r, enum auth_kind kind, unsigned roles)
{
	int key = r->apikey != NULL;
	int bearer = r->authz != NULL && strncasecmp(r->authz, "Bearer ", 7) == 0;

	switch (kind) {
	case AUTH_NONE:
		return H_OK;
	case AUTH_KEY:
		if (!key)
			return reply_unauthorized(r, bearer ?
			    "this endpoint needs an agent API key (X-API-Key), not an access token" :
			    "missing API key (X-API-Key)");
		return key_auth_or_reply(r);
	case AUTH_BEARER:
		if (!bearer && !key)
			return reply_unauthorized(r, "missing access token (Authorization: Bearer)");
		if (!bearer) {
			/* An agent's valid key is a known caller without the
			 * permission (interface-spec: 403 "insufficient
			 * permissions for this endpoint"); an unknown or
			 * malformed key is 401 as anywhere.  Read only: a
			 * refused request ends no key's grace period. */
			unsigned char h[32];
			enum db_rc rc;

			if (key_hash_or_reply(r, h) != H_OK)
				return H_REPLIED;
			if ((rc = db_agent_key_known(r->db, h, r->now)) == DB_NOTFOUND)
				return reply_unauthorized(r, "invalid API key");
			if (rc != DB_OK)
				return reply_db(r, rc);
			return reply_err(r, ARPS_E_FORBIDDEN, "an agent's API key cannot use this "
			    "endpoint: it needs a signed-in account's access token (Authorization: Bearer)");
		}
		return bearer_auth_or_reply(r, roles);
	case AUTH_EITHER:
		if (key)
			return key_auth_or_reply(r);
		if (bearer)
			return bearer_auth_or_reply(r, roles);
		return reply_unauthorized(r, "missing credential: X-API-Key or Authorization: Bearer");
	}
	return reply_unauthorized(r, "missing credential");
}
