/* Validation of client-supplied values (see validate.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "errors.h"
#include "timefmt.h"
#include "validate.h"

/* UTF-8 lead byte classes (RFC 3629 table 3-7). */
static const struct {
	unsigned char	 lo, hi;	/* lead byte range */
	int		 n;		/* continuation bytes */
	unsigned char	 c1lo, c1hi;	/* range of the first continuation */
} utf8tab[] = {
	{ 0x01, 0x7f, 0, 0, 0 },
	{ 0xc2, 0xdf, 1, 0x80, 0xbf },
	{ 0xe0, 0xe0, 2, 0xa0, 0xbf },	/* no overlongs */
	{ 0xe1, 0xec, 2, 0x80, 0xbf },
	{ 0xed, 0xed, 2, 0x80, 0x9f },	/* no surrogates */
	{ 0xee, 0xef, 2, 0x80, 0xbf },
	{ 0xf0, 0xf0, 3, 0x90, 0xbf },	/* no overlongs */
	{ 0xf1, 0xf3, 3, 0x80, 0xbf },
	{ 0xf4, 0xf4, 3, 0x80, 0x8f },	/* <= U+10FFFF */
};

/* Bytes of the valid UTF-8 sequence (no NUL) at p[0..left), or 0. */
static size_t
utf8_seq(const unsigned char *p, size_t left)
{
	size_t	 k, j;

	if (left == 0)
		return 0;
	for (k = 0; k < sizeof(utf8tab) / sizeof(utf8tab[0]); k++)
		if (p[0] >= utf8tab[k].lo && p[0] <= utf8tab[k].hi)
			break;
	if (k == sizeof(utf8tab) / sizeof(utf8tab[0]))
		return 0;	/* NUL, stray continuation, C0/C1 lead, F5+ */
	if ((size_t)utf8tab[k].n > left - 1)
		return 0;
	for (j = 1; j <= (size_t)utf8tab[k].n; j++) {
		unsigned char lo = j == 1 ? utf8tab[k].c1lo : 0x80;
		unsigned char hi = j == 1 ? utf8tab[k].c1hi : 0xbf;

		if (p[j] < lo || p[j] > hi)
			return 0;
	}
	return 1 + (size_t)utf8tab[k].n;
}

bool
val_utf8(const char *s, size_t len, size_t *nchars)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, n = 0, k;

	if (s == NULL && len > 0)
		return false;
	while (i < len) {
		if ((k = utf8_seq(p + i, len - i)) == 0)
			return false;
		i += k;
		n++;
	}
	if (nchars != NULL)
		*nchars = n;
	return true;
}

size_t
val_utf8_sanitize(char *s)
{
	unsigned char	*p = (unsigned char *)s;
	size_t		 len, i = 0, o = 0, k;

	if (s == NULL)
		return 0;
	len = strlen(s);
	while (i < len) {
		if ((k = utf8_seq(p + i, len - i)) == 0) {
			p[o++] = '?';
			i++;
			continue;
		}
		memmove(p + o, p + i, k);
		o += k;
		i += k;
	}
	p[o] = '\0';
	return o;
}

int
val_text(const char *s, size_t len, size_t minc, size_t maxc, bool multiline)
{
	const unsigned char	*p = (const unsigned char *)s;
	bool			 blank = true;
	size_t			 i;

	if (val_string(s, len, minc, maxc) != ARPS_OK)
		return ARPS_E_VALIDATION;
	for (i = 0; i < len; i++) {
		if (p[i] == 0x7f || (p[i] < 0x20 &&
		    !(multiline && (p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))))
			return ARPS_E_VALIDATION;
		if (p[i] != ' ' && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
			blank = false;
	}
	if (blank && minc > 0)
		return ARPS_E_VALIDATION;
	return ARPS_OK;
}

int
val_string(const char *s, size_t len, size_t minc, size_t maxc)
{
	size_t	 n;

	if (!val_utf8(s, len, &n) || n < minc || n > maxc)
		return ARPS_E_VALIDATION;
	return ARPS_OK;
}

int
val_string_bytes(const char *s, size_t len, size_t minb, size_t maxb)
{
	if (len < minb || len > maxb || !val_utf8(s, len, NULL))
		return ARPS_E_VALIDATION;
	return ARPS_OK;
}

int
val_int_range(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi ? ARPS_OK : ARPS_E_VALIDATION;
}

int
val_parse_int64(const char *s, size_t len, int64_t lo, int64_t hi,
    int64_t *out)
{
	size_t		 i = 0;
	bool		 neg = false;
	uint64_t	 v = 0, lim;

	if (s == NULL || out == NULL)
		return ARPS_E_VALIDATION;
	if (len > 0 && s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == len || len - i > 19 || (s[i] == '0' && len - i > 1))
		return ARPS_E_VALIDATION;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return ARPS_E_VALIDATION;
		v = v * 10 + (uint64_t)(s[i] - '0');	/* 19 digits fit */
		if (v > lim)
			return ARPS_E_VALIDATION;
	}
	if (neg && v == 0)
		return ARPS_E_VALIDATION;	/* "-0" */
	{
		int64_t r = neg ? (v == lim ? INT64_MIN : -(int64_t)v) :
		    (int64_t)v;

		if (r < lo || r > hi)
			return ARPS_E_VALIDATION;
		*out = r;
	}
	return ARPS_OK;
}

static bool
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* DNS labels separated by dots, each 1..63 of [A-Za-z0-9-] without edge
 * hyphen; at least minlabels labels. */
static bool
dns_name(const char *s, size_t len, size_t minlabels)
{
	size_t	 i, start = 0, labels = 0;

	if (len == 0 || len > 253)
		return false;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			if (!is_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		if (i == start || i - start > 63 || s[start] == '-' ||
		    s[i - 1] == '-')
			return false;
		labels++;
		start = i + 1;
	}
	return labels >= minlabels;
}

static bool
ipv6_literal(const char *s, size_t len)
{
	size_t	 i;

	/* Pragmatic: hex digits, ':' and '.', with at least two ':'. */
	size_t	 colons = 0;

	if (len < 2 || len > 45)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] == ':')
			colons++;
		else if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f') ||
		    (s[i] >= 'A' && s[i] <= 'F') || s[i] == '.'))
			return false;
	}
	return colons >= 2;
}

/* ASCII case-insensitive prefix test. */
static bool
prefix_ci(const char *s, size_t len, const char *pfx)
{
	size_t	 i;
	char	 c;

	for (i = 0; pfx[i] != '\0'; i++) {
		if (i >= len)
			return false;
		c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
		if (c != pfx[i])
			return false;
	}
	return true;
}

int
val_url(const char *s, size_t len)
{
	static const char *const schemes[] = { "http://", "https://" };
	size_t			 i, k, hstart, hend, aend;
	int64_t			 port;

	if (s == NULL || len > VAL_URL_MAX)
		return ARPS_E_VALIDATION;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return ARPS_E_VALIDATION;
	for (k = 0; k < 2; k++)
		if (prefix_ci(s, len, schemes[k]))
			break;
	if (k == 2)
		return ARPS_E_VALIDATION;
	hstart = strlen(schemes[k]);
	for (aend = hstart; aend < len; aend++)
		if (s[aend] == '/' || s[aend] == '?' || s[aend] == '#')
			break;
	if (memchr(s + hstart, '@', aend - hstart) != NULL)
		return ARPS_E_VALIDATION;	/* no userinfo */
	if (hstart < aend && s[hstart] == '[') {
		const char *rb = memchr(s + hstart, ']', aend - hstart);

		if (rb == NULL)
			return ARPS_E_VALIDATION;
		hend = (size_t)(rb - s) + 1;
		if (!ipv6_literal(s + hstart + 1, hend - hstart - 2))
			return ARPS_E_VALIDATION;
	} else {
		const char *colon = memchr(s + hstart, ':', aend - hstart);

		hend = colon != NULL ? (size_t)(colon - s) : aend;
		if (!dns_name(s + hstart, hend - hstart, 1))
			return ARPS_E_VALIDATION;
	}
	if (hend < aend) {
		if (s[hend] != ':' || val_parse_int64(s + hend + 1,
		    aend - hend - 1, 1, 65535, &port) != ARPS_OK)
			return ARPS_E_VALIDATION;
	}
	return ARPS_OK;
}

int
val_email(const char *s, size_t len)
{
	static const char	 atext[] = "!#$%&'*+/=?^_`{|}~-";
	const char		*at;
	size_t			 llen, i;

	if (s == NULL || len < 3 || len > VAL_EMAIL_MAX)
		return ARPS_E_VALIDATION;
	if ((at = memchr(s, '@', len)) == NULL)
		return ARPS_E_VALIDATION;
	llen = (size_t)(at - s);
	if (llen == 0 || llen > VAL_EMAIL_LOCAL_MAX)
		return ARPS_E_VALIDATION;
	for (i = 0; i < llen; i++) {
		if (s[i] == '.') {
			if (i == 0 || i == llen - 1 || s[i - 1] == '.')
				return ARPS_E_VALIDATION;
		} else if (!is_alnum(s[i]) &&
		    (s[i] == '\0' || strchr(atext, s[i]) == NULL))
			return ARPS_E_VALIDATION;
	}
	if (!dns_name(at + 1, len - llen - 1, 2))
		return ARPS_E_VALIDATION;	/* also rejects a second '@' */
	return ARPS_OK;
}

int
val_iso8601(const char *s, size_t len, int64_t *out)
{
	return timefmt_parse(s, len, out);
}
