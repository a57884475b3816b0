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

/* v in decimal into b (at least 20 bytes, no NUL added); its length.  The
 * digits snprintf's "%" PRId64 writes, without printf's parsing of the
 * format each time. */
static int
fmt_i64(char *b, int64_t v)
{
	char t[20];
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int n = 0, len = 0;

	do {
		t[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		b[len++] = '-';
	while (n > 0)
		b[len++] = t[--n];
	return len;
}

void
jb_int(struct printbuf *pb, int64_t v)
{
	char b[24];

	jb_mem(pb, b, fmt_i64(b, v));
}

/* printf's "%.17g" of d into b (at least 40 bytes); its length.  Scores,
 * similarities and weights (1e-4 <= |d| < 2^52) are done here exactly:
 * d = m * 2^-s with m < 2^53, so its 17 significant digits are
 * round(m * 10^q / 2^s) for q = 16 - floor(log10 |d|), at most 20, which
 * an unsigned 128-bit integer holds (m * 10^20 < 2^120; 10^21 on a first
 * estimate one low), rounded half to
 * even as glibc's printf rounds; trailing zeros and a bare point dropped
 * as %g drops them.  Anything else (0, tiny, huge, not finite) goes to
 * snprintf: the answer is the same, only slower (tests/unit/test_jb). */
static int
fmt_g17(char *b, double d)
{
	static const uint64_t p10[] = { 1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
	    1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
	    100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
	    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
	    1000000000000000000ULL, 10000000000000000000ULL };
	double a = d < 0 ? -d : d;
	unsigned __int128 n, rem, half;
	uint64_t bits, m, dig;
	char digits[17];
	int s, k, t, q, i, len = 0, tries;

	if (!(a >= 1e-4 && a < 4503599627370496.0))	/* 2^52; NaN fails too */
		return snprintf(b, 40, "%.17g", d);
	memcpy(&bits, &a, sizeof bits);			/* a normal double here */
	m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);	/* a = m * 2^-s, exactly */
	s = 1075 - (int)(bits >> 52);			/* >= 1 here */
	t = (52 - s) * 1233;				/* log10(a) ~ (52 - s) * log10(2) */
	k = t >= 0 ? t / 4096 : -((-t + 4095) / 4096);	/* floor; may be one low: checked */
	for (tries = 0;; tries++) {
		/* -5: the estimate one low for 1e-4 <= a < ~1.22e-4 (q = 21,
		 * m * 10^21 < 2^123), corrected by the next try */
		if (k < -5 || k > 16 || tries > 2)
			return snprintf(b, 40, "%.17g", d);
		q = 16 - k;
		n = (unsigned __int128)m * p10[q <= 19 ? q : 19];
		if (q > 19)
			n *= p10[q - 19];
		if ((n >> s) < p10[16])
			k--;
		else if ((n >> s) >= p10[17])
			k++;
		else
			break;
	}
	if (k < -4)					/* %g's exponent form: not here */
		return snprintf(b, 40, "%.17g", d);
	dig = (uint64_t)(n >> s);
	rem = n & ((((unsigned __int128)1) << s) - 1);
	half = ((unsigned __int128)1) << (s - 1);
	if (rem > half || (rem == half && (dig & 1)))
		dig++;
	if (dig == p10[17]) {				/* 9.99... rounded up to 10.0... */
		dig = p10[16];
		k++;
	}
	for (i = 16; i >= 0; i--) {
		digits[i] = (char)('0' + (int)(dig % 10));
		dig /= 10;
	}
	if (d < 0)
		b[len++] = '-';
	if (k >= 0) {				/* k + 1 digits before the point */
		memcpy(b + len, digits, (size_t)k + 1);
		len += k + 1;
		b[len++] = '.';
		memcpy(b + len, digits + k + 1, (size_t)(16 - k));
		len += 16 - k;
	} else {				/* 0.000ddd: -k - 1 zeros after the point */
		b[len++] = '0';
		b[len++] = '.';
		for (i = 0; i < -k - 1; i++)
			b[len++] = '0';
		memcpy(b + len, digits, 17);
		len += 17;
	}
	while (b[len - 1] == '0')
		len--;
	if (b[len - 1] == '.')
		len--;
	b[len] = '\0';
	return len;
}

/* As json-c writes a double: %.17g, and ".0" when that shows no fraction
 * or exponent (finite values only: a score is never NaN). */
void
jb_double(struct printbuf *pb, double d)
{
	char b[40];
	int n = fmt_g17(b, d);

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
