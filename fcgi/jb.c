/*
 * JSON text by hand (fcgi/handlers.h, design.md §15.2): json-c's text
 * exactly, for the answers where its objects cost more than the answer.
 *
 * A failed append poisons the buffer: its text is freed and buf set to
 * NULL, every later jb_* call does nothing, and reply_text answers 500
 * for it, so an allocation failure mid-answer never sends a 200 with a
 * piece missing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "core/timefmt.h"
#include "fcgi/jb.h"

void
jb_mem(struct printbuf *pb, const char *s, int n)
{
	if (pb->buf == NULL)
		return;
	if (n < 0 || printbuf_memappend(pb, s, n) < 0) {
		free(pb->buf);
		pb->buf = NULL;
		pb->bpos = pb->size = 0;
	}
}

int
jb_ok(const struct printbuf *pb)
{
	return pb != NULL && pb->buf != NULL;
}

void
jb_raw(struct printbuf *pb, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	/* NULL (json-c's serialisation out of memory) or a text past INT_MAX */
	jb_mem(pb, s, s != NULL && n <= INT32_MAX ? (int)n : -1);
}

/* json-c's escaping (json_escape_str) with JSON_C_TO_STRING_NOSLASHESCAPE:
 * the quote, the backslash and every control character. */
void
jb_str(struct printbuf *pb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p, *run;
	char u[6] = { '\\', 'u', '0', '0', 0, 0 };

	if (s == NULL) {
		jb_mem(pb, "null", 4);
		return;
	}
	jb_mem(pb, "\"", 1);
	for (p = run = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p >= 0x20 && *p != '"' && *p != '\\')
			continue;
		if (p > run)
			jb_mem(pb, (const char *)run, (int)(p - run));
		run = p + 1;
		switch (*p) {
		case '"':  jb_mem(pb, "\\\"", 2); break;
		case '\\': jb_mem(pb, "\\\\", 2); break;
		case '\b': jb_mem(pb, "\\b", 2); break;
		case '\f': jb_mem(pb, "\\f", 2); break;
		case '\n': jb_mem(pb, "\\n", 2); break;
		case '\r': jb_mem(pb, "\\r", 2); break;
		case '\t': jb_mem(pb, "\\t", 2); break;
		default:
			u[4] = hex[*p >> 4];
			u[5] = hex[*p & 0xf];
			jb_mem(pb, u, 6);
		}
	}
	if (p > run)
		jb_mem(pb, (const char *)run, (int)(p - run));
	jb_mem(pb, "\"", 1);
}

void
jb_int(struct printbuf *pb, int64_t v)
{
	char b[24];

	jb_mem(pb, b, snprintf(b, sizeof b, "%" PRId64, v));
}

/* As json-c writes a double: %.17g, and ".0" when that shows no fraction
 * or exponent (finite values only: a score is never NaN). */
void
jb_double(struct printbuf *pb, double d)
{
	char b[40];
	int n = snprintf(b, sizeof b - 2, "%.17g", d);

	if (strpbrk(b, ".e") == NULL) {
		memcpy(b + n, ".0", 3);
		n += 2;
	}
	jb_mem(pb, b, n);
}

void
jb_time(struct printbuf *pb, int64_t t)
{
	char buf[TIMEFMT_BUFSZ];

	if (t <= 0 || timefmt_format(t, buf) != 0)
		jb_mem(pb, "null", 4);
	else
		jb_str(pb, buf);
}
