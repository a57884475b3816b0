#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "db/db.h"
#include "core/validate.h"
#include "db/limits.h"
#include "fcgi/http.h"
#include "lib/config.h"
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
	/* A detail may quote the client (a path segment, a query value) and be
	 * cut mid-character: JSON strings must be valid UTF-8. */
	val_utf8_sanitize(detail);
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

/* json-c reads NaN and Infinity even in strict mode; JSON (RFC 8259) has
 * neither.  The nesting is at most the tokener's depth (32). */
static bool
json_finite(struct json_object *o)
{
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (!json_finite(json_object_array_get_idx(o, i)))
				return false;
		return true;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (!json_finite(v))
				return false;
		}
		return true;
	}
	default:
		return true;
	}
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
	/* Strict UTF-8 over the whole body (json-c lets overlongs through). */
	if (!val_utf8(r->body, r->blen, NULL)) {
		reply_err(r, ARPS_E_INVALID_JSON, "the body is not valid UTF-8 JSON");
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
	if (!json_finite(o)) {
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON,
		    "the body is not valid JSON: NaN and Infinity are not JSON numbers");
		return NULL;
	}
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

/* The byte of the escape "%XX" at s[0..left), or -1 when s does not start
 * with a complete one (reads at most 3 bytes, none past left). */
static int
pct_byte(const char *s, size_t left)
{
	int hi, lo;

	if (left < 3 || s[0] != '%' || (hi = hexdig((unsigned char)s[1])) < 0 ||
	    (lo = hexdig((unsigned char)s[2])) < 0)
		return -1;
	return hi << 4 | lo;
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
			int c = (unsigned char)q[i], d;
			if (c == '+')
				c = ' ';
			else if ((d = pct_byte(q + i, (size_t)(amp - q) - i)) >= 0) {
				c = d;
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

int
req_query_has(const struct req *r, const char *name)
{
	const char *q = r->query, *amp;
	size_t nlen = strlen(name), klen;

	for (; q != NULL && *q != '\0'; q = *amp ? amp + 1 : amp) {
		amp = q + strcspn(q, "&");
		klen = strcspn(q, "=&");
		if (klen == nlen && strncmp(q, name, nlen) == 0)
			return 1;
	}
	return 0;
}

static int
unreserved(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

void
req_set_path(struct req *r, const char *raw, const char *fallback)
{
	size_t i = 0, o = 0;

	if (raw == NULL || raw[0] != '/') {
		r->path = fallback;
		return;
	}
	while (raw[i] != '\0' && raw[i] != '?' && raw[i] != '#') {
		int c = (unsigned char)raw[i];

		if (o + 1 >= sizeof r->pathbuf)
			goto none;	/* too long for any route */
		if (c == '%') {
			/* a broken escape, if kept, would let the parameter
			 * decoding read "%%34%31" as "A" */
			if ((c = pct_byte(raw + i, strnlen(raw + i, 3))) < 0)
				goto none;
			if (unreserved(c)) {
				r->pathbuf[o++] = (char)c;
				i += 3;
				continue;
			}
			c = '%';
		}
		r->pathbuf[o++] = (char)c;
		i++;
	}
	r->pathbuf[o] = '\0';
	r->path = r->pathbuf;
	return;
none:
	snprintf(r->pathbuf, sizeof r->pathbuf, "/(no route)");	/* matches nothing */
	r->path = r->pathbuf;
}

/* Percent-decode one path segment into out; 0, or -1 on a bad escape, a
 * decoded '/', a control character or an overlong result. */
static int
seg_decode(const char *s, size_t len, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			if ((c = pct_byte(s + i, len - i)) < 0)
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

static void
reset_answer(struct req *r)
{
	free(r->out);
	r->out = NULL;
	r->outlen = 0;
	r->status = 0;
	r->extra[0] = '\0';
}

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
	rc = db_idem_finish(r->db, r->idem_principal, r->idem_hkey, r->status, (const char *)sealed, n);
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

struct txctx {
	struct req *r;
	int (*fn)(struct req *, void *);
	void *arg;
};

static enum db_rc
txfn(struct db *db, void *a)
{
	struct txctx *c = a;
	struct req *r = c->r;
	enum db_rc rc;

	(void)db;
	reset_answer(r);	/* a retried transaction answers afresh */
	rc = (enum db_rc)c->fn(r, c->arg);
	if (rc == DB_OK && r->idem_owned && r->status > 0 && r->status < 500)
		rc = idem_store(r);
	return rc;
}

int
req_tx(struct req *r, int (*fn)(struct req *, void *), void *arg)
{
	struct txctx c = { r, fn, arg };
	enum db_rc rc = db_tx(r->db, txfn, &c);

	if (rc == DB_OK) {
		if (r->idem_owned && r->status > 0 && r->status < 500)
			r->idem_stored = 1;
		return 0;
	}
	if (rc == DB_ROLLBACK && r->status != 0)
		return 0;
	reset_answer(r);
	return reply_db(r, rc);
}

/* Idempotency-Key: claim the key before the handler runs; 1 when the
 * answer is already set (replay or conflict). */
static int
idem_begin(struct req *r)
{
	enum idem_state st;
	unsigned char hash[32];
	crypto_generichash_state hs;
	size_t i, klen = strlen(r->idem), blen;
	char *body = NULL;
	int status = 0;
	enum db_rc rc;

	if (klen == 0 || klen > 255) {
		reply_err(r, ARPS_E_VALIDATION, "Idempotency-Key: must be 1 to 255 characters");
		return 1;
	}
	for (i = 0; i < klen; i++)
		if ((unsigned char)r->idem[i] < 0x21 || (unsigned char)r->idem[i] > 0x7e) {
			reply_err(r, ARPS_E_VALIDATION, "Idempotency-Key: printable ASCII only");
			return 1;
		}
	if (r->who.kind != AUTH_NONE)
		snprintf(r->idem_principal, sizeof r->idem_principal, "%s", r->who.id);
	else
		snprintf(r->idem_principal, sizeof r->idem_principal, "ip:%.60s",
		    r->ip ? r->ip : "-");
	crypto_generichash_init(&hs, NULL, 0, sizeof hash);
	crypto_generichash_update(&hs, (const unsigned char *)r->method, strlen(r->method) + 1);
	crypto_generichash_update(&hs, (const unsigned char *)r->path, strlen(r->path) + 1);
	crypto_generichash_update(&hs, (const unsigned char *)(r->body ? r->body : ""), r->blen);
	crypto_generichash_final(&hs, hash, sizeof hash);
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
	rc = db_idem_claim(r->db, r->idem_principal, r->idem_hkey, hash, r->now, 24 * 3600, &st,
	    &status, &body, &blen);
	if (rc != DB_OK) {
		reply_db(r, rc);
		return 1;
	}
	switch (st) {
	case IDEM_NEW:
		r->idem_owned = 1;
		return 0;
	case IDEM_REPLAY:
		reset_answer(r);
		r->out = idem_open(r, body, blen, &r->outlen);
		free(body);
		if (r->out == NULL) {
			reply_err(r, ARPS_E_INTERNAL, "cannot replay the stored answer");
			return 1;
		}
		r->status = status;
		reply_header(r, "Idempotent-Replayed", "true");
		return 1;
	case IDEM_CONFLICT:
		reply_err(r, ARPS_E_IDEMPOTENCY_CONFLICT,
		    "Idempotency-Key was already used with a different request");
		return 1;
	case IDEM_BUSY:
		reply_err(r, ARPS_E_IDEMPOTENCY_CONFLICT,
		    "a request with this Idempotency-Key is still in flight");
		return 1;
	}
	return 1;
}

static void
idem_end(struct req *r)
{
	if (!r->idem_owned || r->idem_stored)
		return;
	if (r->status > 0 && r->status < 500)
		(void)idem_store(r);
	else
		(void)db_idem_release(r->db, r->idem_principal, r->idem_hkey);
}

void
req_dispatch(struct req *r)
{
	const struct route *hit = NULL;
	char allow[128] = "";
	size_t i;

	/* HEAD is GET without the body (RFC 9110 9.3.2): the same handler,
	 * and pool.c sends only the head. */
	const char *method = r->head ? "GET" : r->method;

	for (i = 0; i < nroutes; i++) {
		if (!match(r, routes[i].pattern, r->path))
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
	/* Matching again re-captures this route's parameters. */
	match(r, hit->pattern, r->path);
	if (hit->auth != AUTH_NONE && auth_resolve(r, hit->auth, hit->roles) != 0)
		return;
	if (r->idem != NULL && strcmp(r->method, "POST") == 0 && idem_begin(r))
		return;
	if (hit->fn(r) != 0 && r->status == 0)
		reply_err(r, ARPS_E_INTERNAL, "internal error");
	if (r->status == 0)
		reply_err(r, ARPS_E_INTERNAL, "handler set no answer");
	idem_end(r);
}
