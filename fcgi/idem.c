/* Idempotency-Key handling (design.md §6.16) and the request transaction
 * that stores an owned key's answer with the effect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/netkey.h"
#include "db/db.h"
#include "db/limits.h"
#include "fcgi/http.h"
#include "fcgi/idem.h"
#include "fcgi/reply.h"
#include "lib/config.h"

/*
 * Stored answers may carry secrets (an API key, an access token), so they
 * are sealed with a key derived from the server pepper and the client's
 * Idempotency-Key, which itself is stored only as a keyed hash: a database
 * dump alone reveals neither.
 */
static enum db_rc
idem_store(struct req *r)
{
	size_t n = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + r->outlen;
	unsigned char *sealed = malloc(n);
	enum db_rc rc;

	if (sealed == NULL)
		return DB_ERR;
	randombytes_buf(sealed, crypto_secretbox_NONCEBYTES);
	crypto_secretbox_easy(sealed + crypto_secretbox_NONCEBYTES, (const unsigned char *)r->out,
	    r->outlen, sealed, r->idem_skey);
	rc = db_idem_store(r->db, r->idem_principal, r->idem_hkey, r->idem_rhash, r->status,
	    (const char *)sealed, n, r->now);
	free(sealed);
	return rc;
}

static char *
idem_open(struct req *r, const char *sealed, size_t n, size_t *len)
{
	char *out;

	if (n < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES)
		return NULL;
	*len = n - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES;
	if ((out = malloc(*len + 1)) == NULL)
		return NULL;
	if (crypto_secretbox_open_easy((unsigned char *)out,
	    (const unsigned char *)sealed + crypto_secretbox_NONCEBYTES,
	    n - crypto_secretbox_NONCEBYTES, (const unsigned char *)sealed, r->idem_skey) != 0) {
		free(out);
		return NULL;
	}
	out[*len] = '\0';
	return out;
}

/* The shortest Idempotency-Key of a request without a credential:
 * 22 characters of [A-Za-z0-9_-] carry 128 bits when random. */
#define IDEM_ANON_MIN	22
/* How long an answer is replayed (design.md §6.16). */
#define IDEM_TTL	(24 * 3600)

static enum h_rc idem_lookup_or_reply(struct req *r);

/* Whether an answer of this status is kept for replay: any under 500 but
 * 429, which says "try again after Retry-After" (a replay would drop the
 * header and refuse the retry for 24 hours; design.md §6.16). */
static int
idem_keeps(int status)
{
	return status > 0 && status < 500 && status != 429;
}

struct txctx {
	struct req *r;
	req_tx_fn fn;
	void *arg;
	int idem_dup;	/* the key's record was found committed */
	int idem_busy;	/* a live first try holds the key */
};

/* The answer of the holding transaction into the key's record. */
static enum db_rc
idem_finish(struct req *r)
{
	size_t n = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + r->outlen;
	unsigned char *sealed = malloc(n);
	enum db_rc rc;

	if (sealed == NULL)
		return DB_ERR;
	randombytes_buf(sealed, crypto_secretbox_NONCEBYTES);
	crypto_secretbox_easy(sealed + crypto_secretbox_NONCEBYTES, (const unsigned char *)r->out,
	    r->outlen, sealed, r->idem_skey);
	rc = db_idem_finish(r->db, r->idem_principal, r->idem_hkey, r->status,
	    (const char *)sealed, n);
	free(sealed);
	return rc;
}

/*
 * design.md §13.5: an owned key is held by its record, the first statement
 * of the effect's transaction, and the answer is written into it at the
 * end; a refusal (DB_ROLLBACK with an answer under 500) undoes the effect
 * back to the mark after the hold and keeps hold and answer.
 */
static enum db_rc
txfn(struct db *db, void *a)
{
	struct txctx *c = a;
	struct req *r = c->r;
	int hold = r->idem_owned && !r->idem_stored, held = 0;
	enum db_rc rc;

	reply_reset(r);	/* a retried transaction answers afresh */
	c->idem_dup = c->idem_busy = 0;
	if (hold) {
		rc = db_idem_hold(db, r->idem_principal, r->idem_hkey, r->idem_rhash, r->now,
		    IDEM_TTL, &held);
		if (rc == DB_DUP)
			c->idem_dup = 1;
		if (rc != DB_OK)
			return rc;
		if (!held) {
			c->idem_busy = 1;
			return DB_ROLLBACK;
		}
		if ((rc = db_savepoint(db)) != DB_OK)
			return rc;
	}
	rc = c->fn(r, c->arg);
	if (!hold)
		return rc;
	if (rc == DB_ROLLBACK && r->status > 0 && r->status < 500 &&
	    (rc = db_savepoint_rollback(db)) != DB_OK)
		return rc;
	if (rc == DB_ROLLBACK && r->status > 0 && r->status < 500)
		rc = DB_OK;
	if (rc != DB_OK)
		return rc;
	if (idem_keeps(r->status))
		return idem_finish(r);
	return db_idem_unhold(db, r->idem_principal, r->idem_hkey);	/* 5xx, 429: none kept */
}

enum h_rc
req_tx(struct req *r, req_tx_fn fn, void *arg)
{
	struct txctx c = { r, fn, arg, 0, 0 };
	enum db_rc rc = db_tx(r->db, txfn, &c);

	if (rc == DB_DUP && c.idem_dup) {
		/* Another try of this key committed its answer first: that
		 * answer is the answer. */
		r->idem_stored = 1;
		(void)idem_lookup_or_reply(r);
		return H_OK;
	}
	if (c.idem_busy) {
		r->idem_owned = 0;	/* the first try's to store */
		reply_reset(r);
		return reply_err(r, ARPS_E_IDEMPOTENCY_CONFLICT,
		    "a request with this Idempotency-Key is still in flight");
	}
	if (rc == DB_OK) {
		if (r->idem_owned && idem_keeps(r->status))
			r->idem_stored = 1;
		return H_OK;
	}
	if (rc == DB_ROLLBACK && r->status != 0)
		return H_OK;
	reply_reset(r);
	return reply_db(r, rc);
}

/*
 * Answer from the stored record of the key when there is one: H_REPLIED
 * when the answer is set (a replay, a conflict or a database error), H_OK
 * when there is none.
 */
static enum h_rc
idem_lookup_or_reply(struct req *r)
{
	enum idem_state st;
	size_t blen = 0;
	char *body = NULL;
	int status = 0;
	enum db_rc rc;

	rc = db_idem_get(r->db, r->idem_principal, r->idem_hkey, r->idem_rhash, r->now, IDEM_TTL,
	    &st, &status, &body, &blen);
	reply_reset(r);
	if (rc != DB_OK) {
		reply_db(r, rc);
		return H_REPLIED;
	}
	switch (st) {
	case IDEM_NEW:
		return H_OK;
	case IDEM_REPLAY:
		r->out = idem_open(r, body, blen, &r->outlen);
		free(body);
		if (r->out == NULL) {
			reply_err(r, ARPS_E_INTERNAL, "cannot replay the stored answer");
			return H_REPLIED;
		}
		r->status = status;
		reply_header(r, "Idempotent-Replayed", "true");
		return H_REPLIED;
	case IDEM_CONFLICT:
		reply_err(r, ARPS_E_IDEMPOTENCY_CONFLICT,
		    "Idempotency-Key was already used with a different request");
		return H_REPLIED;
	}
	return H_REPLIED;
}

enum h_rc
idem_begin_or_reply(struct req *r)
{
	crypto_generichash_state hs;
	size_t i, klen = strlen(r->idem);

	if (r->who.kind == AUTH_NONE) {
		/*
		 * Without a credential the key is all that tells two clients of
		 * one network apart: it must be unguessable (design.md §9.4), and
		 * its scope is the client network (core/netkey.h).
		 */
		char net[NETKEY_BUFSZ];

		if (klen < IDEM_ANON_MIN || klen > 255 ||
		    strspn(r->idem, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_-") != klen) {
			reply_err(r, ARPS_E_VALIDATION, "Idempotency-Key: without a credential, "
			    "%d to 255 characters of A-Z a-z 0-9 _ - (e.g. a random UUID)",
			    IDEM_ANON_MIN);
			return H_REPLIED;
		}
		(void)netkey_of(r->ip, net);
		snprintf(r->idem_principal, sizeof r->idem_principal, "net:%s", net);
	} else {
		if (klen == 0 || klen > 255) {
			reply_err(r, ARPS_E_VALIDATION, "Idempotency-Key: must be 1 to 255 characters");
			return H_REPLIED;
		}
		for (i = 0; i < klen; i++)
			if ((unsigned char)r->idem[i] < 0x21 || (unsigned char)r->idem[i] > 0x7e) {
				reply_err(r, ARPS_E_VALIDATION, "Idempotency-Key: printable ASCII only");
				return H_REPLIED;
			}
		snprintf(r->idem_principal, sizeof r->idem_principal, "%s", r->who.id);
	}
	crypto_generichash_init(&hs, NULL, 0, sizeof r->idem_rhash);
	crypto_generichash_update(&hs, (const unsigned char *)r->method, strlen(r->method) + 1);
	crypto_generichash_update(&hs, (const unsigned char *)r->path, strlen(r->path) + 1);
	crypto_generichash_update(&hs, (const unsigned char *)(r->body ? r->body : ""), r->blen);
	crypto_generichash_final(&hs, r->idem_rhash, sizeof r->idem_rhash);
	{
		unsigned char hk[32];

		crypto_generichash_init(&hs, r->cfg->pepper, sizeof r->cfg->pepper, sizeof hk);
		crypto_generichash_update(&hs, (const unsigned char *)"idem-key", 9);
		crypto_generichash_update(&hs, (const unsigned char *)r->idem_principal,
		    strlen(r->idem_principal) + 1);
		crypto_generichash_update(&hs, (const unsigned char *)r->idem, klen);
		crypto_generichash_final(&hs, hk, sizeof hk);
		sodium_bin2hex(r->idem_hkey, sizeof r->idem_hkey, hk, sizeof hk);
		crypto_generichash_init(&hs, r->cfg->pepper, sizeof r->cfg->pepper, sizeof r->idem_skey);
		crypto_generichash_update(&hs, (const unsigned char *)"idem-body", 10);
		crypto_generichash_update(&hs, (const unsigned char *)r->idem_principal,
		    strlen(r->idem_principal) + 1);
		crypto_generichash_update(&hs, (const unsigned char *)r->idem, klen);
		crypto_generichash_final(&hs, r->idem_skey, sizeof r->idem_skey);
	}
	/*
	 * design.md §6.16: a stored answer is replayed now; else the request
	 * runs, and its transaction holds the key (txfn) or, without one,
	 * its answer is stored after it (idem_end).
	 */
	if (idem_lookup_or_reply(r) != H_OK)
		return H_REPLIED;
	r->idem_owned = 1;
	return H_OK;
}

void
idem_end(struct req *r)
{
	if (!r->idem_owned)
		return;
	/* Storing the answer must not fail at the request's deadline
	 * (design.md §9.5). */
	db_set_deadline(r->db, 0);
	/* A handler without a transaction of its own (its effect idempotent
	 * by nature), or an answer given before it: stored after it.  A
	 * duplicate that stored first gives the answer. */
	if (!r->idem_stored && idem_keeps(r->status) && idem_store(r) == DB_DUP)
		(void)idem_lookup_or_reply(r);
	r->idem_owned = 0;
}
