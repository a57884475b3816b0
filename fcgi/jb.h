#ifndef ARPS_FCGI_JB_H
#define ARPS_FCGI_JB_H

#include <stdint.h>

/*
 * A JSON text built by hand, where json-c's objects cost more than the
 * answer itself (GET /studies/available's page, design.md §15.2): the
 * same text json-c writes with JSON_C_TO_STRING_PLAIN |
 * JSON_C_TO_STRING_NOSLASHESCAPE (fcgi/jb.c).  jb_str: a string (NULL:
 * null), jb_time an ISO 8601 time (<= 0: null), jb_double a finite double,
 * jb_mem n bytes as they are.  A failed append (out of memory, n < 0, jb_raw
 * of NULL) frees the text and sets pb->buf to NULL: later appends do
 * nothing, jb_ok is false and reply_text answers 500.
 */
struct printbuf;
void jb_mem(struct printbuf *pb, const char *s, int n);
int jb_ok(const struct printbuf *pb);
void jb_raw(struct printbuf *pb, const char *s);
void jb_str(struct printbuf *pb, const char *s);
void jb_int(struct printbuf *pb, int64_t v);
void jb_double(struct printbuf *pb, double d);
void jb_time(struct printbuf *pb, int64_t t);

#endif
