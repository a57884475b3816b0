/*
 * fcgi/: the HTTP edge.  A request is read whole (hard limits), routed by
 * one table, authenticated per route, handled, and answered once from a
 * buffered response so the answer can be stored for Idempotency-Key replay.
 *
 * Return convention: handlers and the reply helpers return 0 when the
 * response is set (success or an error answer), -1 only on allocation
 * failure; a helper that fails validation writes the error answer itself
 * ("...OrReply") and returns -1, and the handler just returns.
 */
#ifndef ARPS_FCGI_HTTP_H
#define ARPS_FCGI_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/errors.h"

#define REQ_MAX_BODY	(64 * 1024)
#define REQ_MAX_PARAMS	4

struct config;
struct db;

enum auth_kind {
	AUTH_NONE,	/* no credential needed */
	AUTH_KEY,	/* X-API-Key: agents */
	AUTH_BEARER,	/* Authorization: Bearer act_...: web accounts */
	AUTH_EITHER,	/* either credential */
};

/* Who is calling, once authenticated. */
struct principal {
	enum auth_kind kind;	/* AUTH_NONE, AUTH_KEY or AUTH_BEARER */
	char id[24];		/* agt_... or acc_... */
	unsigned roles;		/* ROLE_* bits, accounts only */
	unsigned char token_hash[32];	/* the bearer token's hash (logout) */
};

#define ROLE_RESEARCHER	0x1
#define ROLE_PARTICIPANT 0x2
#define ROLE_ADMIN	0x4

struct req {
	const struct config *cfg;
	struct db *db;
	int64_t now;			/* request time, unix seconds */
	/* from the FastCGI environment (owned by libfcgi) */
	const char *method, *path, *query, *reqid, *ip;
	const char *ctype, *apikey, *authz, *idem;
	/* the body, NUL-terminated; json is parsed lazily by req_json */
	char *body;
	size_t blen;
	struct json_object *json;
	char pathbuf[1024];		/* the request path, normalised (req_set_path) */
	int head;			/* a HEAD request: routed as GET, no body sent */
	/* path parameters captured by "{}" route segments (percent-decoded) */
	char params[REQ_MAX_PARAMS][64];
	size_t nparams;
	struct principal who;
	/* the buffered answer */
	int status;
	char *out;
	size_t outlen;
	char extra[256];		/* extra header lines, "Name: value\r\n" */
	/* Idempotency-Key handling (design.md §6.16) */
	char idem_principal[80];
	char idem_hkey[65];		/* keyed hash of the key: what is stored */
	unsigned char idem_skey[32];	/* seals the stored answer */
	int idem_owned;		/* this request claimed the key */
	int idem_stored;	/* its answer was stored with the effect */
	/* deferred work run after the answer is sent (e.g. embedding) */
	void (*after)(struct req *, void *);
	void *after_arg;
};

typedef int (*handler_fn)(struct req *);

struct route {
	const char *method;
	const char *pattern;	/* "/api/v1/studies/{}/accept" */
	enum auth_kind auth;
	handler_fn fn;
	unsigned roles;		/* required role bits for accounts, 0 = none */
};

/* The routing table (fcgi/routes.c). */
extern const struct route routes[];
extern const size_t nroutes;

/* Set a JSON answer; takes ownership of obj (may be NULL for "{}"). */
int reply_json(struct req *r, int status, struct json_object *obj);
/* Set the error answer {detail, error_code, status}; returns -1. */
int reply_err(struct req *r, enum arps_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Map a db/ result that is not DB_OK to 503 / 500 and answer it; returns -1. */
int reply_db(struct req *r, int dbrc);
/* Add one response header line (no CRLF in name or value). */
void reply_header(struct req *r, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The body as a JSON object, parsed once.  Answers 415 when the body is
 * not application/json, 400 INVALID_JSON when it does not parse (or is not
 * valid UTF-8, or is not an object) and returns NULL.  An empty body is an
 * empty object.
 */
struct json_object *req_json(struct req *r);

/*
 * Set r->path from the raw request target (REQUEST_URI, before any '?'):
 * percent-escapes of unreserved characters are decoded, every other escape
 * is kept, so an encoded '/' never splits a segment and an encoded ".."
 * never climbs; "{}" parameters are decoded when a route matches.  Falls
 * back to fallback (nginx's normalised $uri) when raw is NULL.  A path too
 * long for pathbuf becomes one that matches no route.
 */
void req_set_path(struct req *r, const char *raw, const char *fallback);

/* Query-string parameter, URL-decoded into buf; NULL when absent, or when
 * present but too long for buf or holding a NUL (see req_query_has). */
const char *req_query(const struct req *r, const char *name, char *buf, size_t bufsz);
/* True when the query string names the parameter at all. */
int req_query_has(const struct req *r, const char *name);

/*
 * Run fn(r, arg) as one database transaction (retried whole on deadlock),
 * storing an owned Idempotency-Key answer in the same transaction.  fn sets
 * the answer and returns DB_OK to commit, DB_ROLLBACK to roll back keeping
 * its (error) answer, or another db code (answered 503/500).  Returns 0
 * when an answer is set from fn, -1 after answering an infrastructure error.
 */
struct db;
int req_tx(struct req *r, int (*fn)(struct req *, void *), void *arg);

/* Handle one request already read into r: route, authenticate, dispatch. */
void req_dispatch(struct req *r);

/* Authentication (fcgi/auth.c): resolve the credential for a route kind.
 * Answers 401/403 itself and returns -1; 0 when r->who is set. */
int auth_resolve(struct req *r, enum auth_kind kind, unsigned roles);

#endif
