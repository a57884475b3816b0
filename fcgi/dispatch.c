/* Dispatch: route by the table, authenticate, claim the Idempotency-Key,
 * run the handler, make sure exactly one answer is set. */
#include <stdio.h>
#include <string.h>

#include "fcgi/auth.h"
#include "fcgi/dispatch.h"
#include "fcgi/http.h"
#include "fcgi/idem.h"
#include "fcgi/reply.h"

/* Percent-decode one path segment into out; 0, or -1 on a bad escape, a
 * decoded '/', a control character or an overlong result. */
static int
seg_decode(const char *s, size_t len, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			if ((c = req_pct_byte(s + i, len - i)) < 0)
				return -1;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || c == '/' || o + 1 >= outsz)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* Match path against pattern; "{}" captures one non-empty segment. */
static int
match(struct req *r, const char *pat, const char *path)
{
	size_t np = 0;

	while (*pat != '\0' && *path != '\0') {
		if (pat[0] == '{' && pat[1] == '}') {
			size_t len = strcspn(path, "/");
			if (len == 0 || np == REQ_MAX_PARAMS ||
			    seg_decode(path, len, r->params[np], sizeof r->params[0]) != 0)
				return 0;
			np++;
			path += len;
			pat += 2;
			continue;
		}
		if (*pat != *path)
			return 0;
		pat++;
		path++;
	}
	if (*pat != '\0' || *path != '\0')
		return 0;
	r->nparams = np;
	return 1;
}

/* The number of parameters ("{}") in a pattern. */
static size_t
nparams(const char *pat)
{
	size_t n = 0;

	while ((pat = strstr(pat, "{}")) != NULL) {
		n++;
		pat += 2;
	}
	return n;
}

void
req_dispatch(struct req *r)
{
	const struct route *hit = NULL;
	const char *best = NULL;
	char allow[128] = "";
	size_t i;

	/* HEAD is GET without the body (RFC 9110 9.3.2): the same handler,
	 * and pool.c sends only the head. */
	const char *method = r->head ? "GET" : r->method;

	/* The path's one template: a literal segment wins over a parameter
	 * (OpenAPI's rule), so /studies/available is not /studies/{id} and
	 * neither answers nor advertises (Allow) the other's methods. */
	for (i = 0; i < nroutes; i++)
		if (match(r, routes[i].pattern, r->path) &&
		    (best == NULL || nparams(routes[i].pattern) < nparams(best)))
			best = routes[i].pattern;
	for (i = 0; i < nroutes && best != NULL; i++) {
		if (strcmp(routes[i].pattern, best) != 0)
			continue;
		if (strcmp(routes[i].method, method) == 0) {
			hit = &routes[i];
			break;
		}
		if (strstr(allow, routes[i].method) == NULL)
			snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s",
			    allow[0] ? ", " : "", routes[i].method);
		if (strcmp(routes[i].method, "GET") == 0 && strstr(allow, "HEAD") == NULL)
			snprintf(allow + strlen(allow), sizeof allow - strlen(allow), ", HEAD");
	}
	if (hit == NULL) {
		if (allow[0] != '\0') {
			reply_header(r, "Allow", "%s", allow);
			reply_err(r, ARPS_E_METHOD_NOT_ALLOWED, "method %s not allowed on %s",
			    r->method, r->path);
		} else
			reply_err(r, ARPS_E_NOT_FOUND, "no such endpoint: %s", r->path);
		return;
	}
	if (hit->fn == NULL) {	/* a row served above the table (fcgi/mcp.c) */
		reply_err(r, ARPS_E_NOT_FOUND, "no such endpoint: %s", r->path);
		return;
	}
	/* Matching again re-captures this route's parameters. */
	match(r, hit->pattern, r->path);
	r->want_heads = (hit->flags & ROUTE_HEADS) != 0;
	if (hit->auth != AUTH_NONE && auth_resolve_or_reply(r, hit->auth, hit->roles) != H_OK)
		return;
	/* A body is JSON wherever one is sent (design.md §6.1: 415, 400): an
	 * endpoint that reads no field refuses a body that is not, as one
	 * that reads fields does.  Before the key's claim: the key's request
	 * hash covers the body, not its Content-Type, so a stored 415 would
	 * answer the corrected retry for 24 h; such a request changed nothing
	 * worth replaying. */
	if (r->blen > 0 && strcmp(method, "GET") != 0 && req_json_or_reply(r) != H_OK)
		return;
	if (r->idem != NULL && strcmp(r->method, "POST") == 0 && idem_begin_or_reply(r) != H_OK)
		return;
	if (hit->fn(r) != H_OK && r->status == 0)
		reply_err(r, ARPS_E_INTERNAL, "internal error");
	if (r->status == 0)
		reply_err(r, ARPS_E_INTERNAL, "handler set no answer");
	idem_end(r);
}
