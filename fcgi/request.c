/* Request reading: the JSON body, the query string and the request path. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/validate.h"
#include "fcgi/http.h"
#include "fcgi/reply.h"

/* json-c reads NaN and Infinity even in strict mode; JSON (RFC 8259) has
 * neither.  The nesting is at most the tokener's depth (32). */
bool
req_json_finite(struct json_object *o)
{
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (!req_json_finite(json_object_array_get_idx(o, i)))
				return false;
		return true;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			(void)k;
			if (!req_json_finite(v))
				return false;
		}
		return true;
	}
	default:
		return true;
	}
}

enum h_rc
req_json_or_reply(struct req *r)
{
	struct json_tokener *tok;
	struct json_object *o;
	void *scratch;
	size_t clen;
	int keys;

	if (r->json != NULL)
		return H_OK;
	if (r->blen == 0) {
		r->json = json_object_new_object();
		return r->json != NULL ? H_OK : H_REPLIED;	/* none: dispatch answers 500 */
	}
	/* application/json, optionally with parameters such as charset. */
	clen = strlen("application/json");
	if (r->ctype == NULL || strncasecmp(r->ctype, "application/json", clen) != 0 ||
	    (r->ctype[clen] != '\0' && r->ctype[clen] != ';' && r->ctype[clen] != ' ')) {
		reply_err(r, ARPS_E_UNSUPPORTED_MEDIA_TYPE, "the body must be application/json");
		return H_REPLIED;
	}
	/* Strict UTF-8 over the whole body (json-c lets overlongs through). */
	if (!val_utf8(r->body, r->blen, NULL)) {
		reply_err(r, ARPS_E_INVALID_JSON, "the body is not valid UTF-8 JSON");
		return H_REPLIED;
	}
	/* json-c refuses nesting at its depth: 33 takes the 32 levels api.md §3 allows. */
	if ((tok = json_tokener_new_ex(REQ_JSON_DEPTH + 1)) == NULL) {
		reply_err(r, ARPS_E_INTERNAL, "out of memory");
		return H_REPLIED;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, r->body, (int)r->blen);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != r->blen) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		const char *why = json_tokener_error_desc(e);

		/* json-c's streaming states are no reason: a value cut short, a
		 * bare scalar at the end ("null", "5"), or "null" itself */
		if (o == NULL && (e == json_tokener_continue || e == json_tokener_success))
			why = "not a complete JSON object";
		json_object_put(o);
		json_tokener_free(tok);
		reply_err(r, ARPS_E_INVALID_JSON, "the body is not valid JSON: %s",
		    o == NULL ? why : "trailing data");
		return H_REPLIED;
	}
	json_tokener_free(tok);
	/* design.md §9.7: json-c keeps the last of two equal keys and cuts a
	 * key at "\u0000"; the text is read again for both. */
	scratch = malloc(val_json_keys_scratch(r->blen));
	keys = val_json_keys(r->body, r->blen, scratch, scratch ? val_json_keys_scratch(r->blen) : 0);
	free(scratch);
	switch (keys) {
	case VAL_JSON_OK:
		break;
	case VAL_JSON_NOMEM:
		json_object_put(o);
		reply_err(r, ARPS_E_INTERNAL, "out of memory");
		return H_REPLIED;
	case VAL_JSON_DUP_KEY:
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON,
		    "the body is not valid JSON: an object repeats a key");
		return H_REPLIED;
	case VAL_JSON_NUL_KEY:
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON,
		    "the body is not valid JSON: an object key contains U+0000");
		return H_REPLIED;
	case VAL_JSON_SURROGATE:
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON,
		    "the body is not valid JSON: a string holds a lone surrogate escape");
		return H_REPLIED;
	default:
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON, "the body is not valid JSON");
		return H_REPLIED;
	}
	if (!req_json_finite(o)) {
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON,
		    "the body is not valid JSON: a number is NaN, Infinity or beyond the double range");
		return H_REPLIED;
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		reply_err(r, ARPS_E_INVALID_JSON, "the body must be a JSON object");
		return H_REPLIED;
	}
	r->json = o;
	return H_OK;
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
int
req_pct_byte(const char *s, size_t left)
{
	int hi, lo;

	if (left < 3 || s[0] != '%' || (hi = hexdig((unsigned char)s[1])) < 0 ||
	    (lo = hexdig((unsigned char)s[2])) < 0)
		return -1;
	return hi << 4 | lo;
}

/* True when the query string from q on names the parameter. */
static int
query_names(const char *q, const char *name, size_t nlen)
{
	const char *amp;

	for (; q != NULL && *q != '\0'; q = *amp ? amp + 1 : amp) {
		amp = q + strcspn(q, "&");
		if (strcspn(q, "=&") == nlen && strncmp(q, name, nlen) == 0)
			return 1;
	}
	return 0;
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
		/* a repeated parameter is ambiguous (a proxy may read the other one) */
		if (*amp != '\0' && query_names(amp + 1, name, nlen))
			return NULL;
		if (eq == NULL) {
			if (bufsz)
				buf[0] = '\0';
			return buf;
		}
		for (i = (size_t)(eq + 1 - q), o = 0; q + i < amp && o + 1 < bufsz; i++) {
			int c = (unsigned char)q[i], d;
			if (c == '+')
				c = ' ';
			else if ((d = req_pct_byte(q + i, (size_t)(amp - q) - i)) >= 0) {
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
	return query_names(r->query, name, strlen(name));
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
			if ((c = req_pct_byte(raw + i, strnlen(raw + i, 3))) < 0)
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
