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

enum arps_err
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

enum arps_err
val_string(const char *s, size_t len, size_t minc, size_t maxc)
{
	size_t	 n;

	if (!val_utf8(s, len, &n) || n < minc || n > maxc)
		return ARPS_E_VALIDATION;
	return ARPS_OK;
}

enum arps_err
val_string_bytes(const char *s, size_t len, size_t minb, size_t maxb)
{
	if (len < minb || len > maxb || !val_utf8(s, len, NULL))
		return ARPS_E_VALIDATION;
	return ARPS_OK;
}

enum arps_err
val_int_range(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi ? ARPS_OK : ARPS_E_VALIDATION;
}

enum arps_err
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

/* The path, query and fragment of a URI (RFC 3986 section 3.3-3.5): each
 * byte unreserved, a sub-delimiter, ':', '@', '/', or '?' past the path,
 * '%' only before two hex digits, and one '#' at most (what OpenAPI's
 * "format: uri" accepts; a browser's address bar may show '[', ']', '{',
 * '}', '|' or '^' unescaped in a query: those are refused with a detail
 * that names percent-encoding). */
static enum arps_err
uri_rest(const char *s, size_t len)
{
	static const char other[] = "-._~!$&'()*+,;=:@/?";
	size_t i;
	int frag = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_alnum((char)c) || (c != '\0' && strchr(other, c) != NULL))
			continue;
		if (c == '#' && !frag) {
			frag = 1;
			continue;
		}
		if (c != '%' || len - i < 3 || val_hexval(s[i + 1]) < 0 ||
		    val_hexval(s[i + 2]) < 0)
			return ARPS_E_VALIDATION;
		i += 2;
	}
	return ARPS_OK;
}

/* val_url; with rest 0 the path, query and fragment may hold any printable
 * ASCII (a URL stored before their character rule, VAL_URL_STORED). */
static enum arps_err
url_check(const char *s, size_t len, int rest)
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
	return rest ? uri_rest(s + aend, len - aend) : ARPS_OK;
}

enum arps_err
val_url(const char *s, size_t len)
{
	return url_check(s, len, 1);
}

enum arps_err
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

enum arps_err
val_iso8601(const char *s, size_t len, int64_t *out)
{
	return timefmt_parse(s, len, out);
}

/*
 * Public URLs (design.md §9.8).  The host of a URL that val_url accepts is
 * read as a server would: a bracketed IPv6 literal, a dotted-quad IPv4
 * literal, or a DNS name.  A host whose last label is numeric ("127.1",
 * "2130706433", "0x7f.1", "0177.0.0.1") is an IPv4 address to a URL
 * parser (WHATWG URL, curl, inet_aton): only the canonical dotted quad is
 * accepted, and only when it is public.
 */

bool
val_ipv4_parse(const char *s, size_t len, unsigned char out[4])
{
	size_t	 i = 0, part, digits;
	unsigned v;

	for (part = 0; part < 4; part++) {
		if (part > 0) {
			if (i >= len || s[i] != '.')
				return false;
			i++;
		}
		v = 0;
		for (digits = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (digits == 3)
				return false;
			v = v * 10 + (unsigned)(s[i] - '0');
		}
		if (digits == 0 || v > 255 || (digits > 1 && s[i - digits] == '0'))
			return false;
		out[part] = (unsigned char)v;
	}
	return i == len;
}

/* True when the last dot-separated label of a host looks like a number to
 * an IPv4 parser: decimal digits, or "0x" then hex digits (possibly none). */
static bool
last_label_numeric(const char *s, size_t len)
{
	size_t	 start = len, i;

	while (start > 0 && s[start - 1] != '.')
		start--;
	if (start == len)
		return false;
	if (len - start >= 2 && s[start] == '0' && (s[start + 1] == 'x' || s[start + 1] == 'X')) {
		for (i = start + 2; i < len; i++)
			if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			    (s[i] >= 'A' && s[i] <= 'F')))
				return false;
		return true;
	}
	for (i = start; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int
val_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
val_ipv6_parse(const char *s, size_t len, unsigned char out[16])
{
	unsigned char	 b[16];
	size_t		 i = 0, n = 0, gap = 16, k, digits;
	int		 gapset = 0, h;
	unsigned	 v;

	memset(b, 0, sizeof b);
	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		gapset = 1;
		gap = 0;
		i = 2;
	} else if (len > 0 && s[0] == ':')
		return false;
	while (i < len) {
		size_t	 j;

		/* a trailing IPv4 part: digits followed by a '.' before any ':' */
		for (j = i; j < len && s[j] != ':' && s[j] != '.'; j++)
			;
		if (j < len && s[j] == '.') {
			if (n > 12 || !val_ipv4_parse(s + i, len - i, b + n))
				return false;
			n += 4;
			i = len;
			break;
		}
		v = 0;
		for (digits = 0; i < len && (h = val_hexval(s[i])) >= 0; i++, digits++) {
			if (digits == 4)
				return false;
			v = v << 4 | (unsigned)h;
		}
		if (digits == 0 || n > 14)
			return false;
		b[n++] = (unsigned char)(v >> 8);
		b[n++] = (unsigned char)v;
		if (i == len)
			break;
		if (s[i] != ':')
			return false;
		i++;
		if (i < len && s[i] == ':') {
			if (gapset)
				return false;
			gapset = 1;
			gap = n;
			i++;
		} else if (i == len)
			return false;	/* a trailing single ':' */
	}
	if (gapset) {
		if (n > 14)
			return false;
		/* move the groups after the gap to the end */
		for (k = n; k > gap; k--)
			b[16 - (n - k) - 1] = b[k - 1];
		for (k = gap; k < 16 - (n - gap); k++)
			b[k] = 0;
	} else if (n != 16)
		return false;
	memcpy(out, b, 16);
	return true;
}

/* An IPv4 address no one on the public Internet should be sent to:
 * "this network", private, shared (CGN), loopback, link-local, IETF
 * protocol assignments, documentation, benchmarking, multicast, reserved
 * and broadcast. */
static bool
ipv4_public(const unsigned char a[4])
{
	static const struct {
		unsigned char	 net[4];
		int		 bits;
	} deny[] = {
		{ { 0, 0, 0, 0 }, 8 },		/* "this network", unspecified */
		{ { 10, 0, 0, 0 }, 8 },		/* private */
		{ { 100, 64, 0, 0 }, 10 },	/* shared address space (CGN) */
		{ { 127, 0, 0, 0 }, 8 },	/* loopback */
		{ { 169, 254, 0, 0 }, 16 },	/* link-local (cloud metadata) */
		{ { 172, 16, 0, 0 }, 12 },	/* private */
		{ { 192, 0, 0, 0 }, 24 },	/* IETF protocol assignments */
		{ { 192, 0, 2, 0 }, 24 },	/* documentation */
		{ { 192, 168, 0, 0 }, 16 },	/* private */
		{ { 198, 18, 0, 0 }, 15 },	/* benchmarking */
		{ { 198, 51, 100, 0 }, 24 },	/* documentation */
		{ { 203, 0, 113, 0 }, 24 },	/* documentation */
		{ { 224, 0, 0, 0 }, 4 },	/* multicast */
		{ { 240, 0, 0, 0 }, 4 },	/* reserved, broadcast */
	};
	uint32_t	 v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	size_t		 i;

	for (i = 0; i < sizeof deny / sizeof deny[0]; i++) {
		uint32_t net = (uint32_t)deny[i].net[0] << 24 | (uint32_t)deny[i].net[1] << 16 |
		    (uint32_t)deny[i].net[2] << 8 | deny[i].net[3];
		uint32_t mask = 0xffffffffu << (32 - deny[i].bits);

		if ((v & mask) == net)
			return false;
	}
	return true;
}

static bool
ipv4_loopback(const unsigned char a[4])
{
	return a[0] == 127;
}

/* The IPv4 address an IPv6 address carries and is routed by (mapped,
 * compatible, NAT64 well-known prefix, 6to4), or false. */
static bool
ipv6_embedded_v4(const unsigned char b[16], unsigned char v4[4])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char zero[12] = { 0 };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };

	if (memcmp(b, mapped, 12) == 0 || memcmp(b, zero, 12) == 0 ||
	    memcmp(b, nat64, 12) == 0) {
		memcpy(v4, b + 12, 4);
		return true;
	}
	if (b[0] == 0x20 && b[1] == 0x02) {	/* 2002::/16 6to4 */
		memcpy(v4, b + 2, 4);
		return true;
	}
	return false;
}

static bool
ipv6_loopback(const unsigned char b[16])
{
	static const unsigned char one[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	unsigned char v4[4];

	if (memcmp(b, one, 16) == 0)
		return true;
	return ipv6_embedded_v4(b, v4) && ipv4_loopback(v4);
}

/* An IPv6 address of the global unicast space 2000::/3, but for its
 * special-use blocks, or one carrying a public IPv4 address.  Everything
 * outside 2000::/3 is refused: unique-local, link- and site-local,
 * multicast, discard-only, local-use NAT64, the IPv4-translated
 * ::ffff:0:0:0/96 ([::ffff:0:7f00:1] is 127.0.0.1 to a SIIT translator)
 * and the blocks the IETF reserves. */
static bool
ipv6_public(const unsigned char b[16])
{
	unsigned char v4[4];

	if (ipv6_embedded_v4(b, v4))
		return ipv4_public(v4);	/* also ::, ::1 (0.0.0.0/8) */
	if ((b[0] & 0xe0) != 0x20)			/* not 2000::/3 */
		return false;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)	/* documentation */
		return false;
	if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0) == 0)	/* 3fff::/20 documentation */
		return false;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0)	/* 2001::/32 Teredo */
		return false;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0x02 && b[4] == 0 && b[5] == 0)
		return false;			/* 2001:2::/48 benchmarking */
	return true;
}

/* Equal ignoring ASCII case. */
static bool
eq_ci(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && prefix_ci(s, len, lit);
}

/*
 * Names no public host has (design.md §9.8): RFC 6761's special-use
 * top-level names and home.arpa (RFC 8375), .onion and .alt, the arpa
 * tree, the private top-level names of RFC 6762 appendix G and of cloud
 * and cluster DNS (metadata.google.internal, *.ec2.internal, cluster.local,
 * *.svc).  Single-label names (metadata, instance-data, intranet) are
 * refused by the caller: a resolver completes them with its search list.
 */
static bool
special_name(const char *s, size_t len)
{
	static const char *const tlds[] = {
		"localhost", "local", "localdomain", "internal", "intranet", "lan", "home",
		"corp", "private", "test", "invalid", "example", "onion", "alt", "arpa", "svc",
	};
	size_t	 i, start = len;

	while (start > 0 && s[start - 1] != '.')
		start--;
	for (i = 0; i < sizeof tlds / sizeof tlds[0]; i++)
		if (eq_ci(s + start, len - start, tlds[i]))
			return true;
	return false;
}

/* Names every resolver maps to the loopback interface (RFC 6761 6.3 and
 * the Debian /etc/hosts defaults). */
static bool
loopback_name(const char *s, size_t len)
{
	static const char *const names[] = {
		"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
	};
	size_t	 i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (eq_ci(s, len, names[i]))
			return true;
	return len > 10 && prefix_ci(s + len - 10, 10, ".localhost");
}

enum arps_err
val_public_url(const char *s, size_t len, unsigned flags)
{
	size_t		 hstart, hend;
	unsigned char	 a4[4], a6[16];
	bool		 https, loop;

	if (url_check(s, len, !(flags & VAL_URL_STORED)) != ARPS_OK)
		return ARPS_E_VALIDATION;
	https = prefix_ci(s, len, "https://");
	hstart = https ? 8 : 7;
	if (s[hstart] == '[') {
		hend = (size_t)((const char *)memchr(s + hstart, ']', len - hstart) - s);
		if (!val_ipv6_parse(s + hstart + 1, hend - hstart - 1, a6))
			return ARPS_E_VALIDATION;
		loop = ipv6_loopback(a6);
		if (!ipv6_public(a6) && !(loop && (flags & VAL_URL_LOOPBACK)))
			return ARPS_E_VALIDATION;
	} else {
		for (hend = hstart; hend < len && strchr(":/?#", s[hend]) == NULL; hend++)
			;
		if (last_label_numeric(s + hstart, hend - hstart)) {
			if (!val_ipv4_parse(s + hstart, hend - hstart, a4))
				return ARPS_E_VALIDATION;
			loop = ipv4_loopback(a4);
			if (!ipv4_public(a4) && !(loop && (flags & VAL_URL_LOOPBACK)))
				return ARPS_E_VALIDATION;
		} else {
			loop = loopback_name(s + hstart, hend - hstart);
			if (loop && !(flags & VAL_URL_LOOPBACK))
				return ARPS_E_VALIDATION;
			/* one label, or a special-use or private name */
			if (!loop && (memchr(s + hstart, '.', hend - hstart) == NULL ||
			    special_name(s + hstart, hend - hstart)))
				return ARPS_E_VALIDATION;
		}
	}
	/* https only, except plain http to the loopback interface when allowed */
	if ((flags & VAL_URL_HTTPS_ONLY) && !https && !(loop && (flags & VAL_URL_LOOPBACK)))
		return ARPS_E_VALIDATION;
	return ARPS_OK;
}

/*
 * Object keys of a JSON text (design.md §9.7, RFC 7493 I-JSON 2.3): a
 * scan over the text that decodes each key (escapes included, so "a" and
 * "\u0061" are the same key) and, at the end of each object, sorts that
 * object's keys and compares neighbours.  Keys live on one stack shared by
 * the nested objects.
 */
struct jkeys {
	const char	*s;
	size_t		 len, i;
	char		*buf;		/* decoded keys, back to back */
	size_t		 bused;
	size_t		*off, *klen;	/* the stack of keys: offset into buf, length */
	size_t		 top, cap;
};

static void
jk_ws(struct jkeys *k)
{
	while (k->i < k->len && (k->s[k->i] == ' ' || k->s[k->i] == '\t' ||
	    k->s[k->i] == '\n' || k->s[k->i] == '\r'))
		k->i++;
}

static enum val_json
jk_hex4(struct jkeys *k, unsigned *cp)
{
	size_t	 j;
	int	 h;

	if (k->len - k->i < 4)
		return VAL_JSON_BAD;
	*cp = 0;
	for (j = 0; j < 4; j++) {
		if ((h = val_hexval(k->s[k->i + j])) < 0)
			return VAL_JSON_BAD;
		*cp = *cp << 4 | (unsigned)h;
	}
	k->i += 4;
	return VAL_JSON_OK;
}

/* A string at k->i ('"'); decoded into buf when out is not NULL. */
static enum val_json
jk_string(struct jkeys *k, char *out, size_t *outlen)
{
	size_t	 o = 0;
	unsigned cp, lo;
	enum val_json	 rc;

	k->i++;
	while (k->i < k->len) {
		unsigned char c = (unsigned char)k->s[k->i++];

		if (c == '"') {
			if (outlen != NULL)
				*outlen = o;
			return VAL_JSON_OK;
		}
		if (c != '\\') {
			if (out != NULL)
				out[o] = (char)c;
			o++;
			continue;
		}
		if (k->i >= k->len)
			return VAL_JSON_BAD;
		c = (unsigned char)k->s[k->i++];
		if (c != 'u') {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *p = memchr(from, c, sizeof from - 1);

			if (p == NULL)
				return VAL_JSON_BAD;
			if (out != NULL)
				out[o] = to[p - from];
			o++;
			continue;
		}
		if ((rc = jk_hex4(k, &cp)) != VAL_JSON_OK)
			return rc;
		if (cp == 0 && out != NULL)
			return VAL_JSON_NUL_KEY;
		if (cp >= 0xd800 && cp <= 0xdbff && k->len - k->i >= 6 && k->s[k->i] == '\\' &&
		    k->s[k->i + 1] == 'u') {
			size_t save = k->i;

			k->i += 2;
			if ((rc = jk_hex4(k, &lo)) != VAL_JSON_OK)
				return rc;
			if (lo >= 0xdc00 && lo <= 0xdfff)
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			else
				k->i = save;	/* a lone surrogate: refused below */
		}
		/* I-JSON (RFC 7493 2.1): no string holds a surrogate that is not
		 * half of a pair; json-c would store U+FFFD in its place */
		if (cp >= 0xd800 && cp <= 0xdfff)
			return VAL_JSON_SURROGATE;
		/* UTF-8 */
		if (out != NULL) {
			if (cp < 0x80)
				out[o] = (char)cp;
			else if (cp < 0x800) {
				out[o] = (char)(0xc0 | cp >> 6);
				out[o + 1] = (char)(0x80 | (cp & 0x3f));
			} else if (cp < 0x10000) {
				out[o] = (char)(0xe0 | cp >> 12);
				out[o + 1] = (char)(0x80 | (cp >> 6 & 0x3f));
				out[o + 2] = (char)(0x80 | (cp & 0x3f));
			} else {
				out[o] = (char)(0xf0 | cp >> 18);
				out[o + 1] = (char)(0x80 | (cp >> 12 & 0x3f));
				out[o + 2] = (char)(0x80 | (cp >> 6 & 0x3f));
				out[o + 3] = (char)(0x80 | (cp & 0x3f));
			}
		}
		o += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	}
	return VAL_JSON_BAD;
}

static int
jk_cmp(const struct jkeys *k, size_t a, size_t b)
{
	size_t	 la = k->klen[a], lb = k->klen[b];
	int	 c = memcmp(k->buf + k->off[a], k->buf + k->off[b], la < lb ? la : lb);

	return c != 0 ? c : (la > lb) - (la < lb);
}

static void
jk_swap(struct jkeys *k, size_t a, size_t b)
{
	size_t	 t;

	t = k->off[a], k->off[a] = k->off[b], k->off[b] = t;
	t = k->klen[a], k->klen[a] = k->klen[b], k->klen[b] = t;
}

/* Heap sort of the keys [base, base + n): no allocation, O(n log n). */
static void
jk_sort(struct jkeys *k, size_t base, size_t n)
{
	size_t	 end, root, child, start;

	if (n < 2)
		return;
	for (start = n / 2; start-- > 0;) {
		for (root = start; (child = 2 * root + 1) < n; root = child) {
			if (child + 1 < n && jk_cmp(k, base + child, base + child + 1) < 0)
				child++;
			if (jk_cmp(k, base + root, base + child) >= 0)
				break;
			jk_swap(k, base + root, base + child);
		}
	}
	for (end = n - 1; end > 0; end--) {
		jk_swap(k, base, base + end);
		for (root = 0; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && jk_cmp(k, base + child, base + child + 1) < 0)
				child++;
			if (jk_cmp(k, base + root, base + child) >= 0)
				break;
			jk_swap(k, base + root, base + child);
		}
	}
}

static enum val_json jk_value(struct jkeys *k, int depth);

/* After a member or an element: 1 past a ',' (another follows), 0 past the
 * closer, -1 on anything else. */
static int
jk_next(struct jkeys *k, char closer)
{
	jk_ws(k);
	if (k->i < k->len && (k->s[k->i] == ',' || k->s[k->i] == closer))
		return k->s[k->i++] == ',';
	return -1;
}

static enum val_json
jk_object(struct jkeys *k, int depth)
{
	size_t		 base = k->top, bbase = k->bused, n, j;
	enum val_json	 rc;
	int		 more;

	k->i++;
	jk_ws(k);
	if (k->i < k->len && k->s[k->i] == '}') {
		k->i++;
		return VAL_JSON_OK;
	}
	for (;;) {
		jk_ws(k);
		if (k->i >= k->len || k->s[k->i] != '"' || k->top == k->cap)
			return VAL_JSON_BAD;
		k->off[k->top] = k->bused;
		if ((rc = jk_string(k, k->buf + k->bused, &k->klen[k->top])) != VAL_JSON_OK)
			return rc;
		k->bused += k->klen[k->top];
		k->top++;
		jk_ws(k);
		if (k->i >= k->len || k->s[k->i] != ':')
			return VAL_JSON_BAD;
		k->i++;
		if ((rc = jk_value(k, depth + 1)) != VAL_JSON_OK)
			return rc;
		if ((more = jk_next(k, '}')) < 0)
			return VAL_JSON_BAD;
		if (more == 0)
			break;
	}
	n = k->top - base;
	jk_sort(k, base, n);
	for (j = 1; j < n; j++)
		if (jk_cmp(k, base + j - 1, base + j) == 0)
			return VAL_JSON_DUP_KEY;
	k->top = base;
	k->bused = bbase;
	return VAL_JSON_OK;
}

static enum val_json
jk_value(struct jkeys *k, int depth)
{
	enum val_json	 rc;
	int		 more;

	if (depth > 64)
		return VAL_JSON_BAD;
	jk_ws(k);
	if (k->i >= k->len)
		return VAL_JSON_BAD;
	switch (k->s[k->i]) {
	case '{':
		return jk_object(k, depth);
	case '[':
		k->i++;
		jk_ws(k);
		if (k->i < k->len && k->s[k->i] == ']') {
			k->i++;
			return VAL_JSON_OK;
		}
		for (;;) {
			if ((rc = jk_value(k, depth + 1)) != VAL_JSON_OK)
				return rc;
			if ((more = jk_next(k, ']')) < 0)
				return VAL_JSON_BAD;
			if (more == 0)
				return VAL_JSON_OK;
		}
	case '"':
		return jk_string(k, NULL, NULL);
	default:
		/* a number or a literal: up to the next delimiter */
		if (strchr(",]}: \t\r\n", k->s[k->i]) != NULL)
			return VAL_JSON_BAD;
		while (k->i < k->len && strchr(",]}: \t\r\n", k->s[k->i]) == NULL &&
		    k->s[k->i] != '\0')
			k->i++;
		return VAL_JSON_OK;
	}
}

/* Keys a text of len bytes can hold: each takes at least 4 bytes ("":0). */
static size_t
jk_cap(size_t len)
{
	return len / 4 + 1;
}

size_t
val_json_keys_scratch(size_t len)
{
	return 2 * jk_cap(len) * sizeof(size_t) + len + 1;
}

enum val_json
val_json_keys(const char *s, size_t len, void *scratch, size_t scratchsz)
{
	struct jkeys	 k;
	enum val_json	 rc;

	if (s == NULL)
		return VAL_JSON_BAD;
	if (scratch == NULL || scratchsz < val_json_keys_scratch(len))
		return VAL_JSON_NOMEM;
	memset(&k, 0, sizeof k);
	k.s = s;
	k.len = len;
	/* the two stacks first (aligned as the caller's block), then the
	 * decoded keys, which take no more than their text */
	k.cap = jk_cap(len);
	k.off = scratch;
	k.klen = k.off + k.cap;
	k.buf = (char *)(k.klen + k.cap);
	rc = jk_value(&k, 0);
	jk_ws(&k);
	if (rc == VAL_JSON_OK && k.i != len)
		rc = VAL_JSON_BAD;
	return rc;
}
