#include <stdio.h>
#include <string.h>

#include "core/netkey.h"

/* Parse dotted-decimal IPv4 at s (exactly the whole string) into b[4]. */
static int
parse_v4(const char *s, unsigned char b[4])
{
	int part, digits;
	unsigned v;

	for (part = 0; part < 4; part++) {
		v = 0;
		for (digits = 0; s[digits] >= '0' && s[digits] <= '9'; digits++) {
			if (digits == 3)
				return -1;
			v = v * 10 + (unsigned)(s[digits] - '0');
		}
		if (digits == 0 || v > 255 || (digits > 1 && s[0] == '0'))
			return -1;
		b[part] = (unsigned char)v;
		s += digits;
		if (part < 3) {
			if (*s != '.')
				return -1;
			s++;
		}
	}
	return *s == '\0' ? 0 : -1;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse an IPv6 address (RFC 4291 2.2 text forms, an IPv4 tail allowed)
 * into b[16]. */
static int
parse_v6(const char *s, unsigned char b[16])
{
	unsigned short g[8];
	int n = 0, gap = -1, i, d, h;
	unsigned v;

	if (s[0] == ':') {
		if (s[1] != ':')
			return -1;
		gap = 0;
		s += 2;
		if (*s == '\0')
			goto done;
	}
	for (;;) {
		const char *start = s;

		v = 0;
		for (d = 0; (h = hexval((unsigned char)s[d])) >= 0; d++) {
			if (d == 4)
				return -1;
			v = v << 4 | (unsigned)h;
		}
		if (s[d] == '.') {
			unsigned char q[4];

			/* the IPv4 tail: the last 32 bits */
			if (n > 6 || parse_v4(start, q) != 0)
				return -1;
			g[n++] = (unsigned short)(q[0] << 8 | q[1]);
			g[n++] = (unsigned short)(q[2] << 8 | q[3]);
			break;
		}
		if (d == 0 || n == 8)
			return -1;
		g[n++] = (unsigned short)v;
		s += d;
		if (*s == '\0')
			break;
		if (*s != ':')
			return -1;
		s++;
		if (*s == ':') {
			if (gap >= 0)
				return -1;
			gap = n;
			s++;
			if (*s == '\0')
				break;
		}
	}
done:
	if (gap < 0 ? n != 8 : n > 7)
		return -1;
	memset(b, 0, 16);
	for (i = 0; i < n; i++) {
		int at = gap >= 0 && i >= gap ? 8 - (n - i) : i;

		b[2 * at] = (unsigned char)(g[i] >> 8);
		b[2 * at + 1] = (unsigned char)g[i];
	}
	return 0;
}

int
netkey_of(const char *s, char out[NETKEY_BUFSZ])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	unsigned char b[16];

	if (s != NULL && strlen(s) <= 45) {
		if (parse_v4(s, b) == 0) {
			snprintf(out, NETKEY_BUFSZ, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
			return 0;
		}
		if (strchr(s, ':') != NULL && parse_v6(s, b) == 0) {
			if (memcmp(b, mapped, sizeof mapped) == 0)
				snprintf(out, NETKEY_BUFSZ, "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
			else
				snprintf(out, NETKEY_BUFSZ, "%x:%x:%x:%x::/64",
				    (unsigned)(b[0] << 8 | b[1]), (unsigned)(b[2] << 8 | b[3]),
				    (unsigned)(b[4] << 8 | b[5]), (unsigned)(b[6] << 8 | b[7]));
			return 0;
		}
	}
	snprintf(out, NETKEY_BUFSZ, "%s", NETKEY_INVALID);
	return -1;
}
