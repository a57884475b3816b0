#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/netkey.h"
#include "core/validate.h"

bool
netkey_of(const char *s, char out[NETKEY_BUFSZ])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	unsigned char b[16];

	if (s != NULL && strlen(s) <= 45) {
		if (val_ipv4_parse(s, strlen(s), b)) {
			snprintf(out, NETKEY_BUFSZ, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
			return true;
		}
		if (strchr(s, ':') != NULL && val_ipv6_parse(s, strlen(s), b)) {
			if (memcmp(b, mapped, sizeof mapped) == 0)
				snprintf(out, NETKEY_BUFSZ, "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
			else
				snprintf(out, NETKEY_BUFSZ, "%x:%x:%x:%x::/64",
				    (unsigned)(b[0] << 8 | b[1]), (unsigned)(b[2] << 8 | b[3]),
				    (unsigned)(b[4] << 8 | b[5]), (unsigned)(b[6] << 8 | b[7]));
			return true;
		}
	}
	snprintf(out, NETKEY_BUFSZ, "%s", NETKEY_INVALID);
	return false;
}
