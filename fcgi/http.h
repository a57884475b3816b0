/*
 * fcgi/: the HTTP edge.  A request is read whole (hard limits), routed by
 * one table, authenticated per route, handled, and answered once from a
 * buffered response so the answer can be stored for Idempotency-Key replay.
 *
 * The objects of fcgi/ depend one way (tools/check-deps.sh fails on a
 * cycle):  pool -> mcp -> dispatch -> routes -> handlers -> fields, request,
 * idem, reply;  dispatch -> auth, idem -> reply;  mcp -> auth, fields,
 * handlers (their field tables).  This header holds the request,
 * the route row and request reading (fcgi/request.c).
 *
 * The return convention of fcgi/ is one type, enum h_rc (below):
 *  - a handler returns H_OK when its answer is set, H_REPLIED when it
 *    stopped on an error answer (or on allocation failure with none set:
 *    dispatch then answers 500);
 *  - a function that may answer returns the same: the reply_* setters
 *    (fcgi/reply.c, and the handlers' own reply_no_study, ...) H_OK for
 *    an answer set, H_REPLIED for an error answer, so that a handler can
 *    "return reply_err(...)"; a helper that checks or looks something up
 *    and, on failure, writes the error answer itself is named ..._or_reply
 *    (req_json_or_reply, auth_resolve_or_reply, decode_body_or_reply,
 *    idem_begin_or_reply, ...) and returns H_OK when the caller goes on,
 *    H_REPLIED after answering: the caller returns H_REPLIED at once;
 *  - req_tx (fcgi/idem.h) returns H_OK when its callback's answer stands,
 *    H_REPLIED after answering a database error;
 *  - inside the transaction, db/'s convention: a req_tx callback, and
 *    the helpers it calls (rate_take_or_reply, ...), return enum db_rc
 *    (DB_ROLLBACK keeps the error answer they set; see fcgi/idem.h).
 * A function that always ends with the answer set returns void
 * (req_dispatch, the MCP endpoint's JSON-RPC answers and methods); any
 * other function of fcgi/ sets no answer and returns a value, a bool or
 * 0 / -1, as its comment says.
 */
#ifndef ARPS_FCGI_HTTP_H
#define ARPS_FCGI_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "core/errors.h"

/* The result of a handler and of every function of fcgi/ that may set
 * the answer (see above).  H_OK is 0. */
enum h_rc {
	H_OK = 0,	/* go on; a handler: the answer is set */
	H_REPLIED = -1,	/* an error answer is set: return at once */
};

#define REQ_MAX_BODY	(64 * 1024)
#define REQ_JSON_DEPTH	32	/* levels of nesting a body may have (api.md §4) */
#define REQ_MAX_PARAMS	4

struct agent;
struct agent_current;
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
	unsigned char token_hash[32];	/* the credential's keyed hash: the bearer token (logout)
					 * or the API key (rotation) */
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
	const char *mcp_version;	/* MCP-Protocol-Version */
	/* the body, NUL-terminated; json is parsed lazily by req_json_or_reply */
	char *body;
	size_t blen;
	struct json_object *json;
	char pathbuf[1024];		/* the request path, normalised (req_set_path) */
	int head;			/* a HEAD request: routed as GET, no body sent */
	/* path parameters captured by "{}" route segments (percent-decoded) */
	char params[REQ_MAX_PARAMS][64];
	size_t nparams;
	struct principal who;
	/* An X-API-Key request's agent row and active participation, as read
	 * with its key in one round trip (fcgi/auth.c, design.md §15); NULL
	 * for any other request.  A snapshot from before the handler ran: a
	 * handler that writes the agent reads it again. */
	const struct agent *agent;
	const struct agent_current *agent_cur;
	int want_heads;			/* the route's ROUTE_HEADS: set before authentication */
	/* the buffered answer */
	int status;
	char *out;
	size_t outlen;
	char extra[256];		/* extra header lines, "Name: value\r\n" */
	/* Idempotency-Key handling (design.md §6.16) */
	char idem_principal[80];
	char idem_hkey[65];		/* keyed hash of the key: what is stored */
	unsigned char idem_skey[32];	/* seals the stored answer */
	unsigned char idem_rhash[32];	/* method, path and body: stored with the answer */
	int idem_owned;		/* this request runs its key: its transaction holds it */
	int idem_stored;	/* its answer was stored with the effect */
	/* deferred work run after the answer is sent (e.g. embedding) */
	void (*after)(struct req *, void *);
	void *after_arg;
};

/* A handler: runs with r routed, authenticated and its key claimed. */
typedef enum h_rc (*handler_fn)(struct req *);

struct route {
	const char *method;
	const char *pattern;	/* "/api/v1/studies/{}/accept" */
	enum auth_kind auth;
	handler_fn fn;		/* NULL: served above the table (fcgi/mcp.c) */
	unsigned roles;		/* required role bits for accounts, 0 = none */
	unsigned flags;		/* ROUTE_* */
};

/* The key's look-up also reads the heads of GET /studies/available's
 * fast path (db_agent_by_key_heads, match/cache.c). */
#define ROUTE_HEADS	0x1

/* The rows of the routing table (fcgi/routes.c), which is indexed by
 * them: the enum's order is the match order (the first row whose path
 * matches wins, so fixed segments come before "{}").  An MCP tool names
 * its row (fcgi/mcp.c). */
enum route_id {
	R_HEALTH,
	/* agents */
	R_REGISTER, R_CLAIM_CODE, R_ME_GET, R_ME_PATCH, R_BIO_SET, R_BIO_GET, R_HEARTBEAT,
	R_KEY_ROTATE,
	/* accounts and login */
	R_SEND_CODE, R_LOGIN, R_AUTH_PROVIDERS, R_LOGOUT, R_LOGOUT_ALL, R_CLAIM, R_ACCOUNT,
	R_KEY_REPLACE,
	/* studies */
	R_AVAILABLE, R_HISTORY, R_STUDY_CREATE, R_STUDY_LIST, R_STUDY_GET, R_ACCEPT, R_COMPLETE,
	R_WITHDRAW, R_STUDY_PATCH, R_STUDY_PAUSE, R_STUDY_RESUME, R_STUDY_STOP, R_PARTICIPANTS,
	R_PARTICIPANT_APPROVE, R_PARTICIPANT_REJECT,
	/* researcher tools (design.md §13) */
	R_PARTICIPANTS_REVIEW, R_BONUSES_PAY, R_BONUSES_LIST, R_MESSAGE_SEND, R_MESSAGE_THREAD,
	R_MESSAGES, R_MESSAGE_READ, R_MESSAGE_REPLY,
	/* participant groups (design.md §14) */
	R_GROUP_CREATE, R_GROUP_LIST, R_GROUP_GET, R_GROUP_PATCH, R_GROUP_DELETE,
	R_GROUP_MEMBERS_ADD, R_GROUP_MEMBERS_LIST, R_GROUP_MEMBER_DELETE,
	/* wallet */
	R_WALLET_BALANCE, R_WALLET_TRANSACTIONS, R_CASHOUT_CREATE, R_CASHOUT_LIST,
	/* events and webhooks */
	R_EVENTS, R_REPUTATION, R_WEBHOOK_CREATE, R_WEBHOOK_LIST, R_WEBHOOK_DELETE,
	R_WEBHOOK_DELIVERIES,
	/* MCP */
	R_MCP,
	R__MAX
};

/* The routing table (fcgi/routes.c); nroutes is R__MAX. */
extern const struct route routes[R__MAX];
extern const size_t nroutes;

/*
 * Parse the body into r->json, once: H_OK with r->json set (an empty
 * body is an empty object); answers 415 when the body is not
 * application/json, 400 INVALID_JSON when it does not parse (or is not
 * valid UTF-8, or is not an object) and returns H_REPLIED.
 */
enum h_rc req_json_or_reply(struct req *r);
/* False when a parsed value holds NaN or Infinity (json-c reads them; JSON
 * has neither). */
bool req_json_finite(struct json_object *o);

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
 * present but repeated, too long for buf or holding a NUL (see
 * req_query_has). */
const char *req_query(const struct req *r, const char *name, char *buf, size_t bufsz);
/* True when the query string names the parameter at all. */
int req_query_has(const struct req *r, const char *name);

/* The escape "%XX" at s[0..left) as a byte, or -1 when s does not start
 * with a complete one (reads at most 3 bytes, none past left): the one
 * percent-escape reader of the query, the path and its parameters. */
int req_pct_byte(const char *s, size_t left);

#endif
