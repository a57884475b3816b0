#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db/db.h"
#include "fcgi/http.h"
#include "lib/log.h"

int
reply_json(struct req *r, int status, struct json_object *obj)
{
	const char *s;
	size_t n;

	if (obj == NULL)
		obj = json_object_new_object();
	s = json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	n = strlen(s);
	free(r->out);
	if ((r->out = malloc(n + 1)) == NULL) {
		json_object_put(obj);
		r->status = 500;
		r->outlen = 0;
		return -1;
	}
	memcpy(r->out, s, n + 1);
	r->outlen = n;
	r->status = status;
	json_object_put(obj);
	return 0;
}

int
reply_err(struct req *r, enum arps_err e, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	json_object_object_add(o, "detail", json_object_new_string(detail));
	json_object_object_add(o, "error_code", json_object_new_string(arps_err_code(e)));
	json_object_object_add(o, "status", json_object_new_int(arps_err_status(e)));
	reply_json(r, arps_err_status(e), o);
	return -1;
}

int
reply_db(struct req *r, int dbrc)
{
	if (dbrc == DB_GONE)
		return reply_err(r, ARPS_E_UNAVAILABLE, "database unavailable, try again shortly");
	if (dbrc == DB_RETRY)
		return reply_err(r, ARPS_E_UNAVAILABLE, "the service is busy, try again");
	log_msg("%s: database error: %s", r->reqid ? r->reqid : "-", db_error(r->db));
	return reply_err(r, ARPS_E_INTERNAL, "internal error");
}

void
reply_header(struct req *r, const char *name, const char *fmt, ...)
{
	size_t used = strlen(r->extra);
	char val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof val, fmt, ap);
	va_end(ap);
	if (strpbrk(name, "\r\n:") != NULL || strpbrk(val, "\r\n") != NULL)
		return;
	snprintf(r->extra + used, sizeof r->extra - used, "%s: %s\r\n", name, val);
}

struct json_object *
req_json(struct req *r)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t clen;

	if (r->json != NULL)
		return r->json;
	if (r->blen == 0) {
		r->json = json_object_new_object();
		return r->json;
	}
	/* application/json, optionally with parameters such as charset. */
	clen = strlen("application/json");
	if (r->ctype == NULL || strncasecmp(r->ctype, "application/json", clen) != 0 ||
	    (r->ctype[clen] != '\0' && r->ctype[clen] != ';' && r->ctype[clen] != ' ')) {
		reply_err(r, ARPS_E_UNSUPPORTED_MEDIA_TYPE, "the body must be application/json");
		return NULL;
	}
	if ((tok = json_tokener_new_ex(32)) == NULL) {
		reply_err(r, ARPS_E_INTERNAL, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, r->body, (int)r->blen);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != r->blen) {
		const char *why = json_tokener_error_desc(json_tokener_get_error(tok));
		json_object_put(o);
		json_tokener_free(tok);
		reply_err(r, ARPS_E_INVALID_JSON, "the body is not valid JSON: %s",
		    o == NULL ? why : "trailing data");
		return NULL;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON, "the body must be a JSON object");
		return NULL;
	}
	r->json = o;
	return o;
}

static int
hexdig(int c)
{
	if (isdigit(c))
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

const char *
req_query(const struct req *r, const char *name, char *buf, size_t bufsz)
{
	const char *q = r->query, *amp, *eq;
	size_t nlen = strlen(name), i, o;

	if (q == NULL)
		return NULL;
	for (; *q != '\0'; q = *amp ? amp + 1 : amp) {
		amp = strchr(q, '&');
		if (amp == NULL)
			amp = q + strlen(q);
		eq = memchr(q, '=', (size_t)(amp - q));
		if ((size_t)((eq ? eq : amp) - q) != nlen || strncmp(q, name, nlen) != 0)
			continue;
		if (eq == NULL) {
			if (bufsz)
				buf[0] = '\0';
			return buf;
		}
		for (i = (size_t)(eq + 1 - q), o = 0; q + i < amp && o + 1 < bufsz; i++) {
			int c = (unsigned char)q[i];
			if (c == '+')
				c = ' ';
			else if (c == '%' && q + i + 2 < amp && hexdig((unsigned char)q[i + 1]) >= 0 &&
			    hexdig((unsigned char)q[i + 2]) >= 0) {
				c = hexdig((unsigned char)q[i + 1]) << 4 | hexdig((unsigned char)q[i + 2]);
				i += 2;
			}
			if (c == '\0')
				return NULL;
			buf[o++] = (char)c;
		}
		if (q + i < amp)
			return NULL;	/* too long for buf */
		buf[o] = '\0';
		return buf;
	}
	return NULL;
}

/* Match path against pattern; "{}" captures one non-empty segment. */
static int
match(struct req *r, const char *pat, const char *path)
{
	size_t np = 0;

	while (*pat != '\0' && *path != '\0') {
		if (pat[0] == '{' && pat[1] == '}') {
			size_t len = strcspn(path, "/");
			if (len == 0 || len >= sizeof r->params[0] || np == REQ_MAX_PARAMS)
				return 0;
			memcpy(r->params[np], path, len);
			r->params[np++][len] = '\0';
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

void
req_dispatch(struct req *r)
{
	const struct route *hit = NULL;
	char allow[128] = "";
	size_t i;

	for (i = 0; i < nroutes; i++) {
		if (!match(r, routes[i].pattern, r->path))
			continue;
		if (strcmp(routes[i].method, r->method) == 0) {
			hit = &routes[i];
			break;
		}
		if (strstr(allow, routes[i].method) == NULL)
			snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s",
			    allow[0] ? ", " : "", routes[i].method);
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
	/* Matching again re-captures this route's parameters. */
	match(r, hit->pattern, r->path);
	if (hit->auth != AUTH_NONE && auth_resolve(r, hit->auth, hit->roles) != 0)
		return;
	if (hit->fn(r) != 0 && r->status == 0)
		reply_err(r, ARPS_E_INTERNAL, "internal error");
	if (r->status == 0)
		reply_err(r, ARPS_E_INTERNAL, "handler set no answer");
}
