/* Unit tests: core/netkey (the client network of design.md §9.1). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/netkey.h"

static const struct {
	const char *in;
	bool ok;
	const char *key;
} rows[] = {
	/* IPv4: the address itself */
	{ "203.0.113.7",		true, "203.0.113.7" },
	{ "127.0.0.1",			true, "127.0.0.1" },
	{ "0.0.0.0",			true, "0.0.0.0" },
	{ "255.255.255.255",		true, "255.255.255.255" },
	/* IPv6, full form: the first 64 bits */
	{ "2001:0db8:0001:0002:0003:0004:0005:0006", true, "2001:db8:1:2::/64" },
	{ "2001:db8:1:2:ffff:ffff:ffff:ffff", true, "2001:db8:1:2::/64" },
	{ "2001:DB8:A:B:0:0:0:1",	true, "2001:db8:a:b::/64" },
	/* compressed: two hosts of one /64 share the key */
	{ "2001:db8:a:b::1",		true, "2001:db8:a:b::/64" },
	{ "2001:db8:a:b::dead:beef",	true, "2001:db8:a:b::/64" },
	{ "2001:db8::1",		true, "2001:db8:0:0::/64" },
	{ "2001:db8:0:0:1::",		true, "2001:db8:0:0::/64" },
	{ "::1",			true, "0:0:0:0::/64" },
	{ "::",				true, "0:0:0:0::/64" },
	{ "fe80::1:2:3:4",		true, "fe80:0:0:0::/64" },
	{ "1:2:3:4:5:6:7::",		true, "1:2:3:4::/64" },
	{ "::2:3:4:5:6:7:8",		true, "0:2:3:4::/64" },
	/* another /64 is another client */
	{ "2001:db8:a:c::1",		true, "2001:db8:a:c::/64" },
	/* IPv4-mapped IPv6: the IPv4 address */
	{ "::ffff:203.0.113.7",		true, "203.0.113.7" },
	{ "::FFFF:127.0.0.1",		true, "127.0.0.1" },
	{ "0:0:0:0:0:ffff:10.1.2.3",	true, "10.1.2.3" },
	{ "::ffff:cb00:7107",		true, "203.0.113.7" },
	/* an IPv4 tail that is not mapped: an IPv6 /64 */
	{ "64:ff9b::203.0.113.7",	true, "64:ff9b:0:0::/64" },
	/* garbage */
	{ NULL,				false, NETKEY_INVALID },
	{ "",				false, NETKEY_INVALID },
	{ "localhost",			false, NETKEY_INVALID },
	{ "1.2.3",			false, NETKEY_INVALID },
	{ "1.2.3.4.5",			false, NETKEY_INVALID },
	{ "256.1.1.1",			false, NETKEY_INVALID },
	{ "01.2.3.4",			false, NETKEY_INVALID },
	{ "1.2.3.4 ",			false, NETKEY_INVALID },
	{ " 1.2.3.4",			false, NETKEY_INVALID },
	{ "1.2.3.-4",			false, NETKEY_INVALID },
	{ "1..2.3",			false, NETKEY_INVALID },
	{ "1.2.3.4:80",			false, NETKEY_INVALID },
	{ "[2001:db8::1]",		false, NETKEY_INVALID },
	{ "fe80::1%eth0",		false, NETKEY_INVALID },
	{ "2001:db8:::1",		false, NETKEY_INVALID },
	{ "2001::db8::1",		false, NETKEY_INVALID },
	{ "2001:db8:1:2:3:4:5:6:7",	false, NETKEY_INVALID },
	{ "2001:db8:1:2:3:4:5",		false, NETKEY_INVALID },
	{ "1:2:3:4:5:6:7:8::",		false, NETKEY_INVALID },
	{ "12345::1",			false, NETKEY_INVALID },
	{ "g::1",			false, NETKEY_INVALID },
	{ ":1::2",			false, NETKEY_INVALID },
	{ "1:",				false, NETKEY_INVALID },
	{ ":::",			false, NETKEY_INVALID },
	{ "::ffff:1.2.3",		false, NETKEY_INVALID },
	{ "::ffff:1.2.3.4.5",		false, NETKEY_INVALID },
	{ "1.2.3.4::",			false, NETKEY_INVALID },
	{ "1:2:3:4:5:6:7:1.2.3.4",	false, NETKEY_INVALID },
	{ "2001:db8:a:b:c:d:e:f:0000000000000000000000000000000000000000", false, NETKEY_INVALID },
};

static void
netkey_rows(void **state)
{
	char out[NETKEY_BUFSZ];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		memset(out, 'x', sizeof out);
		if (netkey_of(rows[i].in, out) != rows[i].ok || strcmp(out, rows[i].key) != 0)
			print_error("row %zu (%s): got %s\n", i, rows[i].in ? rows[i].in : "NULL", out);
		assert_true(netkey_of(rows[i].in, out) == rows[i].ok);
		assert_string_equal(out, rows[i].key);
	}
}

/* The longest key fits its buffer. */
static void
netkey_longest(void **state)
{
	char out[NETKEY_BUFSZ];

	(void)state;
	assert_true(netkey_of("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", out));
	assert_string_equal(out, "ffff:ffff:ffff:ffff::/64");
	assert_true(strlen(out) < NETKEY_BUFSZ);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(netkey_rows),
		cmocka_unit_test(netkey_longest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
