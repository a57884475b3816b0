/* Agent endpoints: register, profile, bio, heartbeat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/ids.h"
#include "core/reputation.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/limits.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/config.h"
#include "lib/secret.h"

#define REGISTER_WINDOW		3600	/* design.md §6.9: register_per_ip_hour (10), per
					 * client network (design.md §9.1) */
#define CLAIM_TTL		(7 * 24 * 3600)	/* claim codes: 7 days (design.md §9.3) */
#define HEARTBEAT_INTERVAL	600	/* 1 per agent per 10 minutes */

struct profile_in {
	const char *name, *description;
};

static const struct field register_fields[] = {
	{ "name", F_NAME, F_REQUIRED, VAL_AGENT_NAME_MIN, VAL_AGENT_NAME_MAX,
	    offsetof(struct profile_in, name) },
	{ "description", F_TEXT, F_NULLABLE, VAL_AGENT_DESC_MIN, VAL_AGENT_DESC_MAX,
	    offsetof(struct profile_in, description) },
};

#define PATCH_FIELDS(X) \
	X(profile_in, PATCH_F_NAME, "name", F_NAME, 0, VAL_AGENT_NAME_MIN, VAL_AGENT_NAME_MAX, \
	    name) \
	X(profile_in, PATCH_F_DESCRIPTION, "description", F_TEXT, F_NULLABLE, VAL_AGENT_DESC_MIN, \
	    VAL_AGENT_DESC_MAX, description)

enum { PATCH_FIELDS(FIELD_INDEX) };
static const struct field patch_fields[] = { PATCH_FIELDS(FIELD_ROW) };
const struct field_list fields_me_patch = FIELD_LIST(patch_fields);

struct register_ctx {
	struct agent a;
	char key[APIKEY_BUFSZ];
	char claim[CLAIM_BUFSZ];
	unsigned char keyhash[32], claimhash[32];
};

static enum db_rc
register_tx(struct req *r, void *arg)
{
	struct register_ctx *c = arg;
	struct json_object *o, *next;
	char bucket[96], what[160];
	enum db_rc rc;

	rate_bucket_net(r, "register", bucket, sizeof bucket);
	if ((rc = rate_take_or_reply(r, bucket, REGISTER_WINDOW, r->cfg->register_per_ip_hour,
	    "registrations per client network")) != DB_OK)
		return rc;
	if ((rc = db_agent_insert(r->db, &c->a, c->keyhash, c->claimhash, r->ip)) != DB_OK)
		return rc == DB_DUP ? DB_RETRY : rc;
	o = json_object_new_object();
	jadd_str(o, "agent_id", c->a.id);
	jadd_str(o, "api_key", c->key);
	jadd_str(o, "status", "unclaimed");
	jadd_int(o, "reputation", REP_START);
	jadd_str(o, "tier", rep_tier_name(rep_tier_of(REP_START)));
	jadd_str(o, "claim_code", c->claim);
	jadd_time(o, "claim_code_expires_at", c->a.claim_expires_at);
	next = json_object_new_array();
	jadd_action(next, "setup_bio", "POST /profile/bio",
	    "Describe your owner in natural language (demographics, interests, tools, "
	    "background) so studies can be matched to you.");
	snprintf(what, sizeof what, "Your owner logs in and sends POST /auth/claim with "
	    "{\"claim_code\": \"%s\"} and a Bearer token to link you to their account.", c->claim);
	jadd_action(next, "claim_ownership", "POST /auth/claim", what);
	json_object_object_add(o, "nextActions", next);
	reply_json(r, 201, o);
	return DB_OK;
}

/* POST /agents/register */
enum h_rc
h_register(struct req *r)
{
	struct register_ctx c;
	struct profile_in in = { 0 };
	unsigned present;

	if (decode_body_or_reply(r, register_fields, NFIELDS(register_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	if (ids_new(IDS_AGENT, &secret_rng, c.a.id) != 0 || apikey_new(&secret_rng, c.key) != 0 ||
	    claim_code_new(&secret_rng, c.claim) != 0)
		return reply_err(r, ARPS_E_INTERNAL, "cannot generate identifiers");
	snprintf(c.a.name, sizeof c.a.name, "%s", in.name);
	if (in.description != NULL) {
		c.a.has_description = 1;
		snprintf(c.a.description, sizeof c.a.description, "%s", in.description);
	}
	c.a.reputation = REP_START;
	c.a.created_at = r->now;
	c.a.claim_expires_at = r->now + CLAIM_TTL;
	secret_hash(r->cfg, "apikey", c.key, strlen(c.key), c.keyhash);
	secret_hash(r->cfg, "claim", c.claim, strlen(c.claim), c.claimhash);
	(void)req_tx(r, register_tx, &c);
	sodium_memzero(c.key, sizeof c.key);
	return H_OK;
}

/* The answer of GET and PATCH /agents/me (design.md §6.4): the agent and
 * its participation as read again, or with a GET as authentication read
 * them, in its one round trip (design.md §15). */
static enum h_rc
reply_me_of(struct req *r, const struct agent *ap, const struct agent_current *curp)
{
	struct agent_current cur;
	struct printbuf *pb;
	struct agent a;
	enum db_rc rc;

	if (ap != NULL && curp != NULL) {
		a = *ap;
		cur = *curp;
	} else if ((rc = db_agent_get(r->db, r->who.id, 0, &a)) != DB_OK ||
	    (rc = db_agent_current(r->db, r->who.id, &cur)) != DB_OK)
		return reply_db(r, rc == DB_NOTFOUND ? DB_ERR : rc);
	/* by hand, json-c's text exactly (design.md §15.2): the hottest
	 * answer of an agent's client after the listing */
	if ((pb = printbuf_new()) == NULL)
		return reply_err(r, ARPS_E_INTERNAL, "out of memory");
	jb_raw(pb, "{\"agent_id\":");
	jb_str(pb, a.id);
	jb_raw(pb, ",\"name\":");
	jb_str(pb, a.name);
	jb_raw(pb, ",\"description\":");
	jb_str(pb, a.has_description ? a.description : NULL);
	jb_raw(pb, ",\"status\":");
	jb_str(pb, a.status);
	jb_raw(pb, ",\"reputation\":");
	jb_int(pb, a.reputation);
	jb_raw(pb, ",\"tier\":");
	jb_str(pb, rep_tier_name(rep_tier_of(a.reputation)));
	if (cur.study_id[0] != '\0') {
		jb_raw(pb, ",\"current_study\":{\"study_id\":");
		jb_str(pb, cur.study_id);
		jb_raw(pb, ",\"participation_id\":");
		jb_str(pb, cur.participation_id);
		jb_raw(pb, ",\"status\":");
		jb_str(pb, cur.status);
		jb_raw(pb, ",\"accepted_at\":");
		jb_time(pb, cur.accepted_at);
		jb_raw(pb, "}");
	} else
		jb_raw(pb, ",\"current_study\":null");
	jb_raw(pb, ",\"last_heartbeat\":");
	jb_time(pb, a.last_heartbeat);
	jb_raw(pb, ",\"created_at\":");
	jb_time(pb, a.created_at);
	jb_raw(pb, "}");
	return reply_text(r, 200, pb);
}

static enum h_rc
reply_me(struct req *r)
{
	return reply_me_of(r, NULL, NULL);
}

/* GET /agents/me */
enum h_rc
h_me_get(struct req *r)
{
	return reply_me_of(r, r->agent, r->agent_cur);
}

struct patch_ctx {
	struct profile_in in;
	unsigned present;
};

static enum db_rc
patch_tx(struct req *r, void *arg)
{
	struct patch_ctx *c = arg;
	int clear = !FIELD_GIVEN(c->present, PATCH_F_DESCRIPTION) && r->json != NULL &&
	    json_object_object_get_ex(r->json, "description", NULL);
	enum db_rc rc;

	if ((rc = db_agent_update(r->db, r->who.id, c->in.name, c->in.description, clear)) != DB_OK)
		return rc;
	reply_me(r);
	return r->status == 200 ? DB_OK : DB_ROLLBACK;
}

/* PATCH /agents/me: name and/or description; "description": null clears it. */
enum h_rc
h_me_patch(struct req *r)
{
	struct patch_ctx c;

	memset(&c, 0, sizeof c);
	if (decode_body_or_reply(r, patch_fields, NFIELDS(patch_fields), &c.in, &c.present) != H_OK)
		return H_REPLIED;
	return req_tx(r, patch_tx, &c);
}

struct claimcode_ctx {
	char claim[CLAIM_BUFSZ];
};

static enum db_rc
claimcode_tx(struct req *r, void *arg)
{
	struct claimcode_ctx *c = arg;
	unsigned char hash[32];
	struct json_object *o;
	struct agent a;
	enum db_rc rc;

	if ((rc = db_agent_get(r->db, r->who.id, 1, &a)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	if (a.account_id[0] != '\0') {
		reply_err(r, ARPS_E_ALREADY_CLAIMED, "this agent is already claimed");
		return DB_ROLLBACK;
	}
	/* a fresh code on every try: a retry after a hash clash draws again */
	if (claim_code_new(&secret_rng, c->claim) != 0)
		return DB_ERR;
	secret_hash(r->cfg, "claim", c->claim, strlen(c->claim), hash);
	rc = db_agent_claimcode_set(r->db, a.id, hash, r->now + CLAIM_TTL);
	if (rc == DB_DUP)
		return DB_RETRY;
	if (rc != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	o = json_object_new_object();
	jadd_str(o, "claim_code", c->claim);
	jadd_time(o, "expires_at", r->now + CLAIM_TTL);
	reply_json(r, 200, o);
	return DB_OK;
}

/* POST /agents/me/claim-code (design.md §9.3): a fresh claim code for an
 * unclaimed agent; the old one stops working. */
enum h_rc
h_claim_code(struct req *r)
{
	struct claimcode_ctx c;

	memset(&c, 0, sizeof c);
	(void)req_tx(r, claimcode_tx, &c);
	sodium_memzero(c.claim, sizeof c.claim);
	return H_OK;
}

struct bio_in {
	const char *bio;
};

static const struct field bio_fields[] = {
	{ "bio", F_TEXT, F_REQUIRED, VAL_BIO_MIN, VAL_BIO_MAX, offsetof(struct bio_in, bio) },
};
const struct field_list fields_bio = FIELD_LIST(bio_fields);

#define BIO_WINDOW	3600	/* bio_updates_per_hour's rolling window */

static enum db_rc
bio_tx(struct req *r, void *arg)
{
	struct bio_in *in = arg;
	struct json_object *o;
	char bucket[64];
	enum db_rc rc;

	/* design.md §1.6: the encoder's queue is bounded by what agents may ask */
	snprintf(bucket, sizeof bucket, "bio:%s", r->who.id);
	if ((rc = rate_take_or_reply(r, bucket, BIO_WINDOW, r->cfg->bio_updates_per_hour,
	    "bio updates per agent")) != DB_OK)
		return rc;
	if ((rc = db_bio_set(r->db, r->who.id, in->bio, r->now)) != DB_OK)
		return rc;
	o = json_object_new_object();
	jadd_str(o, "bio", in->bio);
	jadd_str(o, "embedding_status", "processing");
	jadd_time(o, "updated_at", r->now);
	reply_json(r, 200, o);
	return DB_OK;
}

/* POST /profile/bio: stored as processing; arps-embed embeds it. */
enum h_rc
h_bio_set(struct req *r)
{
	struct bio_in in = { 0 };
	unsigned present;

	if (decode_body_or_reply(r, bio_fields, NFIELDS(bio_fields), &in, &present) != H_OK)
		return H_REPLIED;
	return req_tx(r, bio_tx, &in);
}

/* GET /profile/bio (design.md §6.5). */
enum h_rc
h_bio_get(struct req *r)
{
	struct json_object *o;
	char status[16], *bio = NULL;
	int64_t updated;
	enum db_rc rc;

	if ((rc = db_bio_get(r->db, r->who.id, &bio, status, &updated)) != DB_OK)
		return reply_db(r, rc);
	o = json_object_new_object();
	jadd_str(o, "bio", bio);
	jadd_str(o, "embedding_status", status);
	jadd_time(o, "updated_at", updated);
	free(bio);
	return reply_json(r, 200, o);
}

/* POST /heartbeat: at most one per agent per 10 minutes. */
enum h_rc
h_heartbeat(struct req *r)
{
	struct json_object *o;
	int64_t last, retry;
	int ok;
	enum db_rc rc;

	if ((rc = db_agent_heartbeat(r->db, r->who.id, r->now, HEARTBEAT_INTERVAL, &ok, &last)) != DB_OK)
		return reply_db(r, rc);
	if (!ok) {
		retry = last + HEARTBEAT_INTERVAL - r->now;
		if (retry < 1)
			retry = 1;
		reply_header(r, "Retry-After", "%lld", (long long)retry);
		return reply_err(r, ARPS_E_RATE_LIMITED,
		    "one heartbeat per 10 minutes; retry in %lld seconds", (long long)retry);
	}
	o = json_object_new_object();
	jadd_str(o, "status", "ok");
	jadd_time(o, "last_heartbeat", r->now);
	jadd_time(o, "next_heartbeat_at", r->now + HEARTBEAT_INTERVAL);
	return reply_json(r, 200, o);
}

/* --- API key lifecycle (design.md §9.6) ---------------------------------- */

#define KEY_GRACE	600	/* a rotated key works 10 more minutes at most */

struct key_ctx {
	char key[APIKEY_BUFSZ];
	unsigned char hash[32];
	const char *agent_id;
	int owner;		/* POST /account/agents/{id}/api-key */
};

static enum db_rc
key_tx(struct req *r, void *arg)
{
	struct key_ctx *c = arg;
	struct json_object *o;
	struct agent a;
	enum db_rc rc;

	if (c->owner) {
		/* Only the owner of a claimed agent; anyone else learns nothing. */
		rc = db_agent_get(r->db, c->agent_id, 1, &a);
		if (rc == DB_OK && strcmp(a.account_id, r->who.id) != 0)
			rc = DB_NOTFOUND;
		if (rc == DB_NOTFOUND) {
			reply_err(r, ARPS_E_NOT_FOUND, "no agent %s among this account's agents",
			    c->agent_id);
			return DB_ROLLBACK;
		}
		if (rc != DB_OK)
			return rc;
		/* revoked at once: no previous key */
		rc = db_agent_set_key(r->db, a.id, c->hash, NULL, 0);
	} else {
		/* the key this request used keeps working for the grace period,
		 * so a lost answer can be replayed with its Idempotency-Key; a
		 * key in its grace period reads but cannot rotate (api.md §7.2) */
		rc = db_agent_set_key(r->db, r->who.id, c->hash, r->who.token_hash,
		    r->now + KEY_GRACE);
		if (rc == DB_NOTFOUND) {
			reply_err(r, ARPS_E_FORBIDDEN, "this API key was rotated: it works for its "
			    "last minutes but cannot rotate; use the new key");
			return DB_ROLLBACK;
		}
	}
	if (rc != DB_OK)
		return rc == DB_DUP ? DB_RETRY : rc;
	o = json_object_new_object();
	jadd_str(o, "api_key", c->key);
	jadd_time(o, "created_at", r->now);
	reply_json(r, 200, o);
	return DB_OK;
}

static enum h_rc
key_new(struct req *r, const char *agent_id, int owner)
{
	struct key_ctx c;
	enum h_rc rc;

	memset(&c, 0, sizeof c);
	if (apikey_new(&secret_rng, c.key) != 0)
		return reply_err(r, ARPS_E_INTERNAL, "cannot generate a key");
	secret_hash(r->cfg, "apikey", c.key, strlen(c.key), c.hash);
	c.agent_id = agent_id;
	c.owner = owner;
	rc = req_tx(r, key_tx, &c);
	sodium_memzero(c.key, sizeof c.key);
	return rc;
}

/* POST /agents/me/api-key (Key): a new key, answered once; the old one
 * works until the new one is first used, 10 minutes at most. */
enum h_rc
h_key_rotate(struct req *r)
{
	if (req_json_or_reply(r) != H_OK)
		return H_REPLIED;
	return key_new(r, r->who.id, 0);
}

/* POST /account/agents/{agent_id}/api-key (Bearer, the owner): revoke the
 * agent's key at once and issue a new one. */
enum h_rc
h_key_replace(struct req *r)
{
	if (req_json_or_reply(r) != H_OK)
		return H_REPLIED;
	return key_new(r, r->params[0], 1);
}
