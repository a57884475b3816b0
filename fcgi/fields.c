#include <stdio.h>
#include <string.h>

#include "core/validate.h"
#include "fcgi/fields.h"
#include "fcgi/reply.h"

static enum h_rc
reply_invalid(struct req *r, const char *name, const char *why)
{
	return reply_err(r, ARPS_E_VALIDATION, "%s: %s", name, why);
}

/* Decode the object body by the table; prefix ("" for a body) goes
 * before each field's name in a refusal. */
static enum h_rc
decode_obj(struct req *r, struct json_object *body, const char *prefix,
    const struct field *fields, size_t n, void *out, unsigned *present)
{
	struct json_object *v;
	size_t i, len, nchars;
	const char *s;
	char fname[96];
	int64_t t;

	*present = 0;
	for (i = 0; i < n; i++) {
		const struct field *f = &fields[i];
		const char *key = f->name;	/* the member's name; f->name the refusal's */
		char *dst = (char *)out + f->off;
		struct field fl = *f;

		snprintf(fname, sizeof fname, "%s%s", prefix, f->name);
		fl.name = fname;
		f = &fl;

		if (!json_object_object_get_ex(body, key, &v) ||
		    (v == NULL && (f->flags & F_NULLABLE))) {
			if (f->flags & F_REQUIRED)
				return reply_invalid(r, f->name, "is required");
			continue;
		}
		if (v == NULL)
			return reply_invalid(r, f->name, "must not be null");
		if (f->type == F_ARRAY) {
			if (!json_object_is_type(v, json_type_array))
				return reply_invalid(r, f->name, "must be an array");
			len = json_object_array_length(v);
			if ((int64_t)len < f->min || (int64_t)len > f->max) {
				reply_err(r, ARPS_E_VALIDATION, "%s: must have %lld to %lld items",
				    f->name, (long long)f->min, (long long)f->max);
				return H_REPLIED;
			}
			memcpy(dst, &v, sizeof v);
			*present |= FIELD_BIT(i);
			continue;
		}
		if (f->type == F_OBJECT) {
			if (!json_object_is_type(v, json_type_object))
				return reply_invalid(r, f->name, "must be an object");
			memcpy(dst, &v, sizeof v);
			*present |= FIELD_BIT(i);
			continue;
		}
		if (f->type == F_INT) {
			if (!json_object_is_type(v, json_type_int))
				return reply_invalid(r, f->name, "must be an integer");
			t = json_object_get_int64(v);
			/* json-c saturates at INT64 bounds: treat them as out of range. */
			if (t < f->min || t > f->max || t == INT64_MAX || t == INT64_MIN) {
				reply_err(r, ARPS_E_VALIDATION, "%s: must be between %lld and %lld",
				    f->name, (long long)f->min, (long long)f->max);
				return H_REPLIED;
			}
			memcpy(dst, &t, sizeof t);
			*present |= FIELD_BIT(i);
			continue;
		}
		if (!json_object_is_type(v, json_type_string))
			return reply_invalid(r, f->name, "must be a string");
		s = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (memchr(s, '\0', len) != NULL)
			return reply_invalid(r, f->name, "must not contain NUL bytes");
		if (!val_utf8(s, len, &nchars)) {
			/* belt and braces: req_json_or_reply already checked the raw body */
			reply_err(r, ARPS_E_INVALID_JSON, "%s: not valid UTF-8", f->name);
			return H_REPLIED;
		}
		switch (f->type) {
		case F_STR:
		case F_NAME:
		case F_TEXT:
			if ((int64_t)nchars < f->min || (int64_t)nchars > f->max) {
				reply_err(r, ARPS_E_VALIDATION,
				    "%s: must be %lld to %lld characters long", f->name,
				    (long long)f->min, (long long)f->max);
				return H_REPLIED;
			}
			if (f->type != F_STR && val_text(s, len, (size_t)f->min, (size_t)f->max,
			    f->type == F_TEXT) != 0)
				return reply_invalid(r, f->name, f->type == F_NAME ?
				    "must be one line of visible text (no control characters, not blank)" :
				    "must be visible text (no control characters but tab and line breaks, not blank)");
			break;
		case F_URL:
			/* design.md §9.8: a public host only */
			if (val_public_url(s, len, 0) != 0)
				return reply_invalid(r, f->name, val_url(s, len) != 0 ?
				    "must be an absolute http or https URL of RFC 3986's characters "
				    "(percent-encode spaces, quotes, <>, [] past the host, {}, |, \\, ^ and `)" :
				    "must name a public host (not localhost, a one-label or "
				    "special-use name such as metadata or *.internal, nor a "
				    "loopback, private, link-local or unspecified address)");
			break;
		case F_EMAIL:
			if (val_email(s, len) != 0)
				return reply_invalid(r, f->name, "must be an e-mail address");
			break;
		case F_TIME:
			if (val_iso8601(s, len, &t) != 0)
				return reply_invalid(r, f->name, "must be an ISO 8601 timestamp");
			memcpy(dst, &t, sizeof t);
			*present |= FIELD_BIT(i);
			continue;
		case F_INT:
		case F_ARRAY:
		case F_OBJECT:
			break;
		}
		memcpy(dst, &s, sizeof s);
		*present |= FIELD_BIT(i);
	}
	return H_OK;
}

enum h_rc
decode_body_or_reply(struct req *r, const struct field *fields, size_t n, void *out,
    unsigned *present)
{
	*present = 0;
	if (req_json_or_reply(r) != H_OK)
		return H_REPLIED;
	return decode_obj(r, r->json, "", fields, n, out, present);
}

enum h_rc
decode_item_or_reply(struct req *r, struct json_object *obj, const char *array, size_t i,
    const struct field *fields, size_t n, void *out, unsigned *present)
{
	char prefix[64];

	*present = 0;
	snprintf(prefix, sizeof prefix, "%s[%zu].", array, i);
	if (!json_object_is_type(obj, json_type_object))
		return reply_err(r, ARPS_E_VALIDATION, "%s[%zu]: must be an object", array, i);
	return decode_obj(r, obj, prefix, fields, n, out, present);
}

enum h_rc
decode_item_str_or_reply(struct req *r, struct json_object *arr, const char *array, size_t i,
    size_t max, const char **s)
{
	struct json_object *v = json_object_array_get_idx(arr, i);
	size_t len, nchars;

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return reply_err(r, ARPS_E_VALIDATION, "%s[%zu]: must be a string", array, i);
	*s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len == 0 || memchr(*s, '\0', len) != NULL || !val_utf8(*s, len, &nchars) ||
	    nchars > max || val_text(*s, len, 1, max, 0) != 0)
		return reply_err(r, ARPS_E_VALIDATION,
		    "%s[%zu]: must be 1 to %zu characters of one line", array, i, max);
	return H_OK;
}

enum h_rc
decode_page_or_reply(struct req *r, int64_t def, int64_t max, int64_t *limit, int64_t *cursor)
{
	char buf[64];
	const char *v;

	*limit = def;
	*cursor = 0;
	v = req_query(r, "limit", buf, sizeof buf);
	if ((v != NULL || req_query_has(r, "limit")) &&
	    (v == NULL || val_parse_int64(v, strlen(v), 1, max, limit) != 0))
		return reply_err(r, ARPS_E_VALIDATION, "limit: must be an integer from 1 to %lld",
		    (long long)max);
	v = req_query(r, "cursor", buf, sizeof buf);
	if ((v != NULL || req_query_has(r, "cursor")) &&
	    (v == NULL || val_parse_int64(v, strlen(v), 1, INT64_MAX - 1, cursor) != 0))
		return reply_err(r, ARPS_E_VALIDATION, "cursor: not a cursor from this list");
	return H_OK;
}
