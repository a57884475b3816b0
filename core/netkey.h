/*
 * The client network of a request (design.md §9.1): every per-client limit
 * and the idempotency scope of the unauthenticated endpoints key on the
 * IPv4 address, or on the IPv6 /64 (one host owns a whole /64).  Pure
 * text parsing: no I/O, no allocation.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_NETKEY_H
#define ARPS_CORE_NETKEY_H

#include <stdbool.h>

/* "ffff:ffff:ffff:ffff::/64" and its NUL fit. */
#define NETKEY_BUFSZ	32
/* The key of an address that does not parse: all such clients share it. */
#define NETKEY_INVALID	"invalid"

/*
 * The network key of the address s (nginx $remote_addr, as X-Real-IP):
 * an IPv4 address in dotted decimal ("203.0.113.7"); an IPv6 address as
 * its first 64 bits, lowercase hex groups without leading zeros, then
 * "::/64" ("2001:db8:0:1::/64"); an IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) as its IPv4 address.  Returns true, or false with out set
 * to NETKEY_INVALID when s is NULL or not an address (zone ids, brackets,
 * ports and leading zeros in IPv4 parts are refused).
 */
bool netkey_of(const char *s, char out[NETKEY_BUFSZ]);

#endif
