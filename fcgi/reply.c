#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "core/validate.h"
#include "db/db.h"
#include "fcgi/http.h"
#include "fcgi/reply.h"
#include "lib/log.h"

enum h_rc
reply_json(struct req *r, int status, struct json_object *obj)
{
	const char *s;
	size_t n;

	if (obj == NULL)
		obj = json_object_new_object();
	s = json_object_to_json_string_ext(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	n = s != NULL ? strlen(s) : 0;	/* NULL: json-c out of memory */
	free(r->out);
	if (s == NULL || (r->out = malloc(n + 1)) == NULL) {
		r->out = NULL;
		json_object_put(obj);
		r->status = 500;
		r->outlen = 0;
		return H_REPLIED;
	}
	memcpy(r->out, s, n + 1);
	r->outlen = n;
	r->status = status;
	json_object_put(obj);
	return H_OK;
}

enum h_rc
reply_text(struct req *r, int status, struct printbuf *pb)
{
	free(r->out);
	r->out = NULL;
	r->outlen = 0;
	if (pb == NULL || pb->buf == NULL) {
		/* a text cut by a failed append (fcgi/jb.c) is never sent */
		if (pb != NULL)
			printbuf_free(pb);
		log_msg("%s: answer text out of memory", r->reqid ? r->reqid : "-");
		return reply_err(r, ARPS_E_INTERNAL, "out of memory");
	}
	r->out = pb->buf;	/* malloc'd by json-c's printbuf */
	r->outlen = (size_t)pb->bpos;
	r->status = status;
	free(pb);
	return H_OK;
}

enum h_rc
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
	return H_REPLIED;
}

enum h_rc
reply_db(struct req *r, enum db_rc dbrc)
{
	if (dbrc == DB_GONE)
		return reply_err(r, ARPS_E_UNAVAILABLE, "database unavailable, try again shortly");
	if (dbrc == DB_RETRY)
		return reply_err(r, ARPS_E_UNAVAILABLE, "the service is busy, try again");
	log_msg("%s: database error: %s", r->reqid ? r->reqid : "-", db_error(r->db));
	return reply_err(r, ARPS_E_INTERNAL, "internal error");
}

enum h_rc
reply_list_db(struct req *r, enum db_rc dbrc)
{
	if (dbrc == DB_NOTFOUND)
		return reply_err(r, ARPS_E_VALIDATION, "cursor: not a cursor from this list");
	return reply_db(r, dbrc);
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

void
reply_reset(struct req *r)
{
	free(r->out);
	r->out = NULL;
	r->outlen = 0;
	r->status = 0;
	r->extra[0] = '\0';
}
