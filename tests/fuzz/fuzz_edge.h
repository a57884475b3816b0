/*
 * The HTTP edge's fuzz harnesses (fuzz_route, fuzz_body, fuzz_mcp) share
 * this: a request on the real fcgi/ code minus the pool, against a
 * database that is never there (a socket path that does not exist, so a
 * handler that reaches it answers 503), and the checks of every answer.
 *
 * Authentication is the one stub (fuzz_auth.c, linked instead of
 * fcgi/auth.c): it admits the principal fuzz_who names, so the bytes reach
 * the handlers' own decoding (body fields, query parameters, MCP
 * arguments) instead of stopping at a key lookup in the absent database.
 */
#ifndef ARPS_FUZZ_EDGE_H
#define ARPS_FUZZ_EDGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/validate.h"
#include "db/db.h"
#include "fcgi/http.h"
#include "lib/config.h"

/* Who fuzz_auth.c admits: AUTH_KEY (an agent) or AUTH_BEARER (an account
 * with every role). */
extern enum auth_kind fuzz_who;

#define FUZZ_CHECK(c) do { if (!(c)) { fuzz_fail(#c, __FILE__, __LINE__); } } while (0)

static inline void
fuzz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, file, line);
	abort();
}

/* The configuration and the absent database, once per process. */
static inline void
fuzz_req_init(struct req *r)
{
	static struct config cfg;
	static struct db *db;

	if (db == NULL) {
		snprintf(cfg.db_socket, sizeof cfg.db_socket, "/nonexistent/arps-fuzz.sock");
		snprintf(cfg.base_url, sizeof cfg.base_url, "https://arps.example");
		cfg.workers = 1;
		cfg.fee_bps = 1000;
		cfg.max_study_budget_cents = 10000000000LL;
		if ((db = db_open(&cfg)) == NULL)
			abort();
		/* as a pool worker does (fcgi/pool.c): the guard's back-off
		 * answers DB_GONE (503) at once between connect attempts, so a
		 * handler that reaches the absent database takes the same path
		 * without a connect attempt per execution */
		if (db_guard(db) != DB_OK)
			abort();
	}
	memset(r, 0, sizeof *r);
	r->cfg = &cfg;
	r->db = db;
	r->now = 1700000000;
	r->reqid = "fuzz";
	r->ip = "192.0.2.1";
}

/* The body parsed strictly as one JSON value; NULL when it is not. */
static inline struct json_object *
fuzz_parse_out(const struct req *r)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	if (tok == NULL)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, r->out, (int)r->outlen);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != r->outlen) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/*
 * Exactly one answer is set, and it is well formed: a status from 200 to
 * 599, a body that is valid UTF-8 and one JSON value (none only for 202
 * and 204), and an error answer (>= 400, outside JSON-RPC) is the object
 * {detail, error_code, status} whose status is the HTTP status.  Extra
 * header lines hold no bare CR or LF.  Frees the answer.
 */
static inline void
fuzz_check_answer(struct req *r, int jsonrpc)
{
	struct json_object *o, *v;
	const char *e;

	FUZZ_CHECK(r->status >= 200 && r->status <= 599);
	for (e = r->extra; *e != '\0'; e++)
		if (*e == '\r')
			FUZZ_CHECK(e[1] == '\n');
		else if (*e == '\n')
			FUZZ_CHECK(e > r->extra && e[-1] == '\r');
	if (r->status == 202 || r->status == 204) {
		FUZZ_CHECK(r->outlen == 0);
		goto out;
	}
	FUZZ_CHECK(r->out != NULL && r->outlen == strlen(r->out));
	FUZZ_CHECK(val_utf8(r->out, r->outlen, NULL));
	FUZZ_CHECK((o = fuzz_parse_out(r)) != NULL);
	if (jsonrpc && json_object_object_get_ex(o, "jsonrpc", &v)) {
		/* {jsonrpc "2.0", id, exactly one of result and error} */
		FUZZ_CHECK(strcmp(json_object_get_string(v), "2.0") == 0);
		FUZZ_CHECK(json_object_object_get_ex(o, "id", NULL));
		FUZZ_CHECK(json_object_object_get_ex(o, "result", NULL) !=
		    json_object_object_get_ex(o, "error", &v));
		if (v != NULL && json_object_is_type(v, json_type_object)) {
			struct json_object *c;

			FUZZ_CHECK(json_object_object_get_ex(v, "code", &c) &&
			    json_object_is_type(c, json_type_int));
			/* -32700 and -32600 are HTTP 400, every other 200 */
			FUZZ_CHECK((r->status == 400) == (json_object_get_int(c) == -32700 ||
			    json_object_get_int(c) == -32600));
			FUZZ_CHECK(json_object_object_get_ex(v, "message", &c) &&
			    json_object_is_type(c, json_type_string));
		} else
			FUZZ_CHECK(r->status == 200);
	} else if (r->status >= 400) {
		FUZZ_CHECK(json_object_is_type(o, json_type_object));
		FUZZ_CHECK(json_object_object_length(o) == 3);
		FUZZ_CHECK(json_object_object_get_ex(o, "detail", &v) &&
		    json_object_is_type(v, json_type_string));
		FUZZ_CHECK(json_object_object_get_ex(o, "error_code", &v) &&
		    json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0);
		FUZZ_CHECK(json_object_object_get_ex(o, "status", &v) &&
		    json_object_is_type(v, json_type_int) && json_object_get_int(v) == r->status);
		/* 405 says what is allowed */
		if (r->status == 405)
			FUZZ_CHECK(strstr(r->extra, "Allow: ") != NULL);
	}
	json_object_put(o);
out:
	if (r->json != NULL)
		json_object_put(r->json);
	r->json = NULL;
	free(r->out);
	r->out = NULL;
}

/* Path parameters as routing hands them to a handler: non-empty, no '/',
 * NUL or control byte. */
static inline void
fuzz_check_params(const struct req *r)
{
	size_t i, j;

	FUZZ_CHECK(r->nparams <= REQ_MAX_PARAMS);
	for (i = 0; i < r->nparams; i++) {
		FUZZ_CHECK(r->params[i][0] != '\0');
		for (j = 0; r->params[i][j] != '\0'; j++)
			FUZZ_CHECK(r->params[i][j] != '/' &&
			    (unsigned char)r->params[i][j] >= 0x20 && r->params[i][j] != 0x7f);
	}
}

#endif
