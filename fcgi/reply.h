/*
 * fcgi/reply.c: answer writing.  Every answer is buffered in struct req
 * (status, body, extra header lines) and sent once by pool.c, so that an
 * answer can be stored for Idempotency-Key replay.  This layer uses no
 * other fcgi/ object.
 *
 * Return convention (enum h_rc, fcgi/http.h): reply_json returns H_OK
 * when the answer is set, H_REPLIED on allocation failure (then a bare
 * 500 is set); reply_err and reply_db set an error answer and return
 * H_REPLIED, so that a handler or an ..._or_reply helper can
 * "return reply_err(...)".
 */
#ifndef ARPS_FCGI_REPLY_H
#define ARPS_FCGI_REPLY_H

#include <json-c/json.h>

#include "core/errors.h"
#include "db/db.h"
#include "fcgi/http.h"

/* Set a JSON answer; takes ownership of obj (may be NULL for "{}"). */
enum h_rc reply_json(struct req *r, int status, struct json_object *obj);
/* Answer the JSON text in pb (taken: freed here), as reply_json; a text
 * poisoned by a failed append (jb_ok false) answers 500 instead. */
struct printbuf;
enum h_rc reply_text(struct req *r, int status, struct printbuf *pb);
/* Set the error answer {detail, error_code, status}; returns H_REPLIED. */
enum h_rc reply_err(struct req *r, enum arps_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Map a db/ result that is not DB_OK to 503 / 500 and answer it; returns H_REPLIED. */
enum h_rc reply_db(struct req *r, enum db_rc dbrc);
/* reply_db for a list read: DB_NOTFOUND is a cursor the list never handed
 * out (db_cursor_known), 422. */
enum h_rc reply_list_db(struct req *r, enum db_rc dbrc);
/* Add one response header line (no CRLF in name or value). */
void reply_header(struct req *r, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Forget the answer set so far (status 0, no body, no extra header). */
void reply_reset(struct req *r);

#endif
