/* Unit tests: core/validate (UTF-8, lengths, ints, URL, e-mail, ISO). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/validate.h"

/* Strings with explicit byte lengths (they may hold NUL). */
#define S(lit)	lit, sizeof(lit) - 1

static void
test_utf8(void **state)
{
	static const struct {
		const char	*s;
		size_t		 len;
		bool		 ok;
		size_t		 nchars;
	} rows[] = {
		{ S(""), true, 0 },
		{ S("abc"), true, 3 },
		{ S("\x7f"), true, 1 },
		{ S("h\xc3\xa9llo"), true, 5 },			/* é */
		{ S("\xc2\x80"), true, 1 },			/* U+0080 */
		{ S("\xdf\xbf"), true, 1 },			/* U+07FF */
		{ S("\xe0\xa0\x80"), true, 1 },			/* U+0800 */
		{ S("\xe2\x82\xac"), true, 1 },			/* € */
		{ S("\xed\x9f\xbf"), true, 1 },			/* U+D7FF */
		{ S("\xee\x80\x80"), true, 1 },			/* U+E000 */
		{ S("\xef\xbf\xbd"), true, 1 },			/* U+FFFD */
		{ S("\xef\xbf\xbf"), true, 1 },			/* U+FFFF */
		{ S("\xf0\x90\x80\x80"), true, 1 },		/* U+10000 */
		{ S("\xf0\x9f\x98\x80"), true, 1 },		/* emoji */
		{ S("\xf3\xbf\xbf\xbf"), true, 1 },
		{ S("\xf4\x8f\xbf\xbf"), true, 1 },		/* U+10FFFF */
		{ S("a\xf0\x9f\x98\x80" "b\xc3\xa9"), true, 4 },
		/* NUL anywhere */
		{ S("\0"), false, 0 },
		{ S("ab\0c"), false, 0 },
		{ S("abc\0"), false, 0 },
		/* stray continuation, bad leads */
		{ S("\x80"), false, 0 },
		{ S("\xbf"), false, 0 },
		{ S("a\x80z"), false, 0 },
		{ S("\xfe"), false, 0 },
		{ S("\xff"), false, 0 },
		{ S("\xf5\x80\x80\x80"), false, 0 },		/* > U+10FFFF */
		{ S("\xf8\x88\x80\x80\x80"), false, 0 },
		/* overlongs */
		{ S("\xc0\x80"), false, 0 },			/* overlong NUL */
		{ S("\xc0\xaf"), false, 0 },
		{ S("\xc1\xbf"), false, 0 },
		{ S("\xe0\x80\xaf"), false, 0 },
		{ S("\xe0\x9f\xbf"), false, 0 },
		{ S("\xf0\x80\x80\xaf"), false, 0 },
		{ S("\xf0\x8f\xbf\xbf"), false, 0 },
		/* surrogates */
		{ S("\xed\xa0\x80"), false, 0 },		/* U+D800 */
		{ S("\xed\xbf\xbf"), false, 0 },		/* U+DFFF */
		{ S("\xed\xa0\xbd\xed\xb8\x80"), false, 0 },	/* CESU pair */
		/* above U+10FFFF */
		{ S("\xf4\x90\x80\x80"), false, 0 },
		/* truncated and bad continuations */
		{ S("\xc3"), false, 0 },
		{ S("\xe2\x82"), false, 0 },
		{ S("\xf0\x9f\x98"), false, 0 },
		{ S("\xc3\x41"), false, 0 },
		{ S("\xe2\x41\xac"), false, 0 },
		{ S("\xe2\x82\x41"), false, 0 },
		{ S("\xf0\x9f\x41\x80"), false, 0 },
		{ S("\xf0\x9f\x98\xc0"), false, 0 },
	};
	size_t	 i, n;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = 999;
		assert_int_equal(val_utf8(rows[i].s, rows[i].len, &n), rows[i].ok);
		assert_int_equal(n, rows[i].ok ? rows[i].nchars : 999);
		assert_int_equal(val_utf8(rows[i].s, rows[i].len, NULL), rows[i].ok);
	}
	assert_false(val_utf8(NULL, 1, NULL));
	assert_true(val_utf8(NULL, 0, NULL));
}

static void
test_strings(void **state)
{
	static const struct {
		const char	*s;
		size_t		 len, min, max;
		int		 chars_rc, bytes_rc;
	} rows[] = {
		{ S(""), 0, 10, ARPS_OK, ARPS_OK },
		{ S(""), 1, 10, ARPS_E_VALIDATION, ARPS_E_VALIDATION },
		{ S("a"), 1, 1, ARPS_OK, ARPS_OK },
		{ S("ab"), 1, 1, ARPS_E_VALIDATION, ARPS_E_VALIDATION },
		/* 3 chars, 6 bytes */
		{ S("\xc3\xa9\xc3\xa9\xc3\xa9"), 3, 3, ARPS_OK, ARPS_E_VALIDATION },
		{ S("\xc3\xa9\xc3\xa9\xc3\xa9"), 1, 5, ARPS_OK, ARPS_E_VALIDATION },
		{ S("\xc3\xa9\xc3\xa9\xc3\xa9"), 4, 6, ARPS_E_VALIDATION, ARPS_OK },
		{ S("\xf0\x9f\x98\x80"), 1, 1, ARPS_OK, ARPS_E_VALIDATION },
		{ S("a\0b"), 0, 10, ARPS_E_VALIDATION, ARPS_E_VALIDATION },
		{ S("\xc0\x80"), 0, 10, ARPS_E_VALIDATION, ARPS_E_VALIDATION },
	};
	char	 big[VAL_BIO_MAX + 2];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(val_string(rows[i].s, rows[i].len, rows[i].min,
		    rows[i].max), rows[i].chars_rc);
		assert_int_equal(val_string_bytes(rows[i].s, rows[i].len,
		    rows[i].min, rows[i].max), rows[i].bytes_rc);
	}
	memset(big, 'x', sizeof(big));
	assert_int_equal(val_string(big, VAL_BIO_MAX, VAL_BIO_MIN, VAL_BIO_MAX),
	    ARPS_OK);
	assert_int_equal(val_string(big, VAL_BIO_MAX + 1, VAL_BIO_MIN,
	    VAL_BIO_MAX), ARPS_E_VALIDATION);
}

static void
test_int_range(void **state)
{
	static const struct {
		int64_t	 v, lo, hi;
		enum arps_err	 rc;
	} rows[] = {
		{ 1, VAL_REWARD_MIN, VAL_REWARD_MAX, ARPS_OK },
		{ 0, VAL_REWARD_MIN, VAL_REWARD_MAX, ARPS_E_VALIDATION },
		{ -1, VAL_REWARD_MIN, VAL_REWARD_MAX, ARPS_E_VALIDATION },
		{ 1000000, VAL_REWARD_MIN, VAL_REWARD_MAX, ARPS_OK },
		{ 1000001, VAL_REWARD_MIN, VAL_REWARD_MAX, ARPS_E_VALIDATION },
		{ 10000, VAL_MAX_PARTICIPANTS_MIN, VAL_MAX_PARTICIPANTS_MAX, ARPS_OK },
		{ 10001, VAL_MAX_PARTICIPANTS_MIN, VAL_MAX_PARTICIPANTS_MAX,
		    ARPS_E_VALIDATION },
		{ 1440, VAL_DURATION_MIN, VAL_DURATION_MAX, ARPS_OK },
		{ 1441, VAL_DURATION_MIN, VAL_DURATION_MAX, ARPS_E_VALIDATION },
		{ INT64_MAX, INT64_MIN, INT64_MAX, ARPS_OK },
		{ INT64_MIN, INT64_MIN, INT64_MAX, ARPS_OK },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(val_int_range(rows[i].v, rows[i].lo, rows[i].hi),
		    rows[i].rc);
}

static void
test_parse_int(void **state)
{
	static const struct {
		const char	*s;
		int64_t		 lo, hi;
		enum arps_err	 rc;
		int64_t		 v;
	} rows[] = {
		{ "50", 1, 200, ARPS_OK, 50 },
		{ "1", 1, 200, ARPS_OK, 1 },
		{ "200", 1, 200, ARPS_OK, 200 },
		{ "0", 1, 200, ARPS_E_VALIDATION, 0 },
		{ "201", 1, 200, ARPS_E_VALIDATION, 0 },
		{ "0", 0, 1, ARPS_OK, 0 },
		{ "-5", -10, 10, ARPS_OK, -5 },
		{ "-0", -10, 10, ARPS_E_VALIDATION, 0 },
		{ "-", -10, 10, ARPS_E_VALIDATION, 0 },
		{ "", 0, 10, ARPS_E_VALIDATION, 0 },
		{ "+5", 0, 10, ARPS_E_VALIDATION, 0 },
		{ " 5", 0, 10, ARPS_E_VALIDATION, 0 },
		{ "5 ", 0, 10, ARPS_E_VALIDATION, 0 },
		{ "05", 0, 10, ARPS_E_VALIDATION, 0 },
		{ "5a", 0, 10, ARPS_E_VALIDATION, 0 },
		{ "1e3", 0, 10000, ARPS_E_VALIDATION, 0 },
		{ "0x10", 0, 100, ARPS_E_VALIDATION, 0 },
		{ "9223372036854775807", INT64_MIN, INT64_MAX, ARPS_OK, INT64_MAX },
		{ "9223372036854775808", INT64_MIN, INT64_MAX, ARPS_E_VALIDATION, 0 },
		{ "-9223372036854775808", INT64_MIN, INT64_MAX, ARPS_OK, INT64_MIN },
		{ "-9223372036854775809", INT64_MIN, INT64_MAX, ARPS_E_VALIDATION, 0 },
		{ "99999999999999999999", INT64_MIN, INT64_MAX, ARPS_E_VALIDATION, 0 },
		{ "18446744073709551617", INT64_MIN, INT64_MAX, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 v;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		v = 42;
		assert_int_equal(val_parse_int64(rows[i].s, strlen(rows[i].s),
		    rows[i].lo, rows[i].hi, &v), rows[i].rc);
		assert_int_equal(v, rows[i].rc == ARPS_OK ? rows[i].v : 42);
	}
	assert_int_equal(val_parse_int64(NULL, 0, 0, 1, &v), ARPS_E_VALIDATION);
	assert_int_equal(val_parse_int64("1", 1, 0, 1, NULL), ARPS_E_VALIDATION);
	assert_int_equal(val_parse_int64("1\0", 2, 0, 1, &v), ARPS_E_VALIDATION);
}

/* design.md §9.7: repeated keys (at any depth, after escapes), keys
 * holding U+0000, and lone surrogate escapes (RFC 7493 2.1). */
static void
test_json_keys(void **state)
{
	static const struct {
		const char	*s;
		enum val_json	 rc;
	} rows[] = {
		{ "{}", VAL_JSON_OK },
		{ "{\"a\":1,\"b\":2}", VAL_JSON_OK },
		{ " { \"a\" : [ {\"a\":1}, {\"a\":2} ] , \"b\" : {\"a\":{}} } ", VAL_JSON_OK },
		{ "{\"a\":\"\\u0000 in a value\"}", VAL_JSON_OK },
		{ "{\"ab\":1,\"a\":2,\"abc\":3,\"A\":4}", VAL_JSON_OK },
		{ "{\"\\ud83d\\ude00\":1,\"x\":\"\\uD83D\\uDE00\"}", VAL_JSON_OK },
		/* a surrogate that is not half of a pair, in a key or a value */
		{ "{\"\\ud83d\\ude00\":1,\"\\ud83d\":2}", VAL_JSON_SURROGATE },
		{ "{\"a\":\"x\\ud800y\"}", VAL_JSON_SURROGATE },
		{ "{\"a\":\"\\udc00x\"}", VAL_JSON_SURROGATE },
		{ "{\"a\":\"\\ud800\\u0041\"}", VAL_JSON_SURROGATE },
		{ "{\"a\":\"\\ude00\\ud83d\"}", VAL_JSON_SURROGATE },
		{ "[\"\\uDBFF\"]", VAL_JSON_SURROGATE },
		{ "[1,\"x\",true,null,-1.5e3,{\"k\":[]}]", VAL_JSON_OK },
		{ "{\"a\":1,\"a\":2}", VAL_JSON_DUP_KEY },
		{ "{\"a\":1,\"b\":2,\"a\":3}", VAL_JSON_DUP_KEY },
		{ "{\"a\":1,\"\\u0061\":2}", VAL_JSON_DUP_KEY },
		{ "{\"\\/\":1,\"/\":2}", VAL_JSON_DUP_KEY },
		{ "{\"\\u00e9\":1,\"\xc3\xa9\":2}", VAL_JSON_DUP_KEY },
		{ "{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}", VAL_JSON_DUP_KEY },
		{ "{\"x\":{\"y\":[{\"z\":1,\"z\":1}]}}", VAL_JSON_DUP_KEY },
		{ "[{\"a\":1},{\"b\":1,\"b\":2}]", VAL_JSON_DUP_KEY },
		{ "{\"\":1,\"\":2}", VAL_JSON_DUP_KEY },
		{ "{\"a\\u0000b\":1}", VAL_JSON_NUL_KEY },
		{ "{\"x\":{\"\\u0000\":1}}", VAL_JSON_NUL_KEY },
		{ "{\"a\":1", VAL_JSON_BAD },
		{ "{\"a\" 1}", VAL_JSON_BAD },
		{ "{\"a\":1}x", VAL_JSON_BAD },
		{ "{\"a\\q\":1}", VAL_JSON_BAD },
		{ "", VAL_JSON_BAD },
	};
	static size_t scratch[4096];	/* size_t: aligned as malloc's */
	char	 big[4 * 1000 + 16];
	size_t	 i, n;
#define KEYS(s, len) val_json_keys((s), (len), scratch, sizeof scratch)

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (KEYS(rows[i].s, strlen(rows[i].s)) != rows[i].rc)
			fail_msg("%s: expected %d, got %d", rows[i].s, rows[i].rc,
			    KEYS(rows[i].s, strlen(rows[i].s)));
	/* many keys in one object: distinct, then the first one again */
	n = (size_t)snprintf(big, sizeof big, "{");
	for (i = 0; i < 500; i++)
		n += (size_t)snprintf(big + n, sizeof big - n, "\"%03zu\":0,", i);
	big[n - 1] = '}';
	assert_int_equal(KEYS(big, n), VAL_JSON_OK);
	big[n - 1] = ',';
	n += (size_t)snprintf(big + n, sizeof big - n, "\"000\":1}");
	assert_int_equal(KEYS(big, n), VAL_JSON_DUP_KEY);
	assert_int_equal(KEYS(NULL, 0), VAL_JSON_BAD);
	/* scratch too small for the text: refused, not overrun */
	assert_true(val_json_keys_scratch(n) <= sizeof scratch);
	assert_int_equal(val_json_keys(big, n, scratch, val_json_keys_scratch(n) - 1),
	    VAL_JSON_NOMEM);
	assert_int_equal(val_json_keys("{}", 2, NULL, 0), VAL_JSON_NOMEM);
#undef KEYS
}

/* design.md §9.8: the host of a study or webhook URL must be public. */
static void
test_public_url(void **state)
{
	enum { H = VAL_URL_HTTPS_ONLY, L = VAL_URL_LOOPBACK, ST = VAL_URL_STORED };
	static const struct {
		const char	*s;
		unsigned	 flags;
		enum arps_err	 rc;
	} rows[] = {
		/* public hosts */
		{ "https://example.com/x?a=1", 0, ARPS_OK },
		{ "http://example.com/", 0, ARPS_OK },
		{ "https://a.b/c", 0, ARPS_OK },
		{ "https://8.8.8.8/", 0, ARPS_OK },
		{ "http://93.184.216.34:8080/s", 0, ARPS_OK },
		{ "https://[2606:4700:4700::1111]/", 0, ARPS_OK },
		{ "https://[2a00:1450:4001:82b::200e]:443/", 0, ARPS_OK },
		{ "https://[::ffff:8.8.8.8]/", 0, ARPS_OK },
		{ "https://1e100.net/", 0, ARPS_OK },
		{ "https://localhost.example.com/", 0, ARPS_OK },
		{ "https://my.localhost.example.com/", 0, ARPS_OK },
		{ "https://internal.example.com/", 0, ARPS_OK },
		{ "https://local.test.example.org/", 0, ARPS_OK },
		{ "https://[2a00:1450:4001::1]/", 0, ARPS_OK },
		{ "https://[2001:4860:4860::8888]/", 0, ARPS_OK },
		{ "https://11.0.0.1/", 0, ARPS_OK },
		{ "https://172.32.0.1/", 0, ARPS_OK },
		{ "https://100.128.0.1/", 0, ARPS_OK },
		/* syntax (val_url) still applies */
		{ "ftp://example.com/", 0, ARPS_E_VALIDATION },
		{ "https://user:pw@example.com/", 0, ARPS_E_VALIDATION },
		{ "https://evil.example@169.254.169.254/", 0, ARPS_E_VALIDATION },
		/* localhost names */
		{ "http://localhost/", 0, ARPS_E_VALIDATION },
		{ "https://LOCALHOST:8080/x", 0, ARPS_E_VALIDATION },
		{ "https://localhost.localdomain/", 0, ARPS_E_VALIDATION },
		{ "https://api.localhost/", 0, ARPS_E_VALIDATION },
		{ "https://ip6-localhost/", 0, ARPS_E_VALIDATION },
		/* one label: a resolver completes it from its search list */
		{ "https://mylocalhost/", 0, ARPS_E_VALIDATION },
		{ "http://metadata/computeMetadata/v1/", 0, ARPS_E_VALIDATION },
		{ "http://instance-data/latest/", 0, ARPS_E_VALIDATION },
		{ "https://intranet:8443/", 0, ARPS_E_VALIDATION },
		{ "https://metadata/", H, ARPS_E_VALIDATION },
		/* special-use and private top-level names */
		{ "http://metadata.google.internal/", 0, ARPS_E_VALIDATION },
		{ "http://METADATA.GOOGLE.INTERNAL/", 0, ARPS_E_VALIDATION },
		{ "http://ip-10-0-0-1.ec2.internal/", 0, ARPS_E_VALIDATION },
		{ "http://printer.local/", 0, ARPS_E_VALIDATION },
		{ "http://nas.localdomain/", 0, ARPS_E_VALIDATION },
		{ "http://router.lan/", 0, ARPS_E_VALIDATION },
		{ "http://nas.home/", 0, ARPS_E_VALIDATION },
		{ "http://git.corp/", 0, ARPS_E_VALIDATION },
		{ "http://x.private/", 0, ARPS_E_VALIDATION },
		{ "http://x.intranet/", 0, ARPS_E_VALIDATION },
		{ "http://nas.home.arpa/", 0, ARPS_E_VALIDATION },
		{ "http://1.0.0.127.in-addr.arpa/", 0, ARPS_E_VALIDATION },
		{ "http://x.test/", 0, ARPS_E_VALIDATION },
		{ "http://x.invalid/", 0, ARPS_E_VALIDATION },
		{ "http://x.example/", 0, ARPS_E_VALIDATION },
		{ "http://abc.onion/", 0, ARPS_E_VALIDATION },
		{ "http://x.alt/", 0, ARPS_E_VALIDATION },
		{ "http://kubernetes.default.svc/", 0, ARPS_E_VALIDATION },
		{ "http://api.cluster.local/", 0, ARPS_E_VALIDATION },
		{ "https://hooks.internal/", H, ARPS_E_VALIDATION },
		/* IPv4 literals */
		{ "http://127.0.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://127.255.255.254/", 0, ARPS_E_VALIDATION },
		{ "http://0.0.0.0/", 0, ARPS_E_VALIDATION },
		{ "http://10.1.2.3/", 0, ARPS_E_VALIDATION },
		{ "http://172.16.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://172.31.255.255/", 0, ARPS_E_VALIDATION },
		{ "http://192.168.1.1/", 0, ARPS_E_VALIDATION },
		{ "http://169.254.169.254/latest/meta-data/", 0, ARPS_E_VALIDATION },
		{ "http://100.64.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://192.0.2.1/", 0, ARPS_E_VALIDATION },
		{ "http://224.0.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://255.255.255.255/", 0, ARPS_E_VALIDATION },
		/* numeric forms a URL parser reads as IPv4 */
		{ "http://2130706433/", 0, ARPS_E_VALIDATION },
		{ "http://0x7f000001/", 0, ARPS_E_VALIDATION },
		{ "http://0x7f.0.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://0177.0.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://127.1/", 0, ARPS_E_VALIDATION },
		{ "http://127.0.1/", 0, ARPS_E_VALIDATION },
		{ "http://127.000.000.001/", 0, ARPS_E_VALIDATION },
		{ "http://134744072/", 0, ARPS_E_VALIDATION },	/* 8.8.8.8, not canonical */
		{ "http://8.8.8.8.8/", 0, ARPS_E_VALIDATION },
		{ "http://256.1.1.1/", 0, ARPS_E_VALIDATION },
		{ "http://example.0x/", 0, ARPS_E_VALIDATION },
		{ "http://a.123/", 0, ARPS_E_VALIDATION },
		/* IPv6 literals, bracketed */
		{ "http://[::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[0:0:0:0:0:0:0:1]:8080/", 0, ARPS_E_VALIDATION },
		{ "http://[::]/", 0, ARPS_E_VALIDATION },
		{ "http://[fe80::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[FEBF::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[fc00::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[fd12:3456:789a::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[fec0::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[ff02::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[2001:db8::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[::ffff:127.0.0.1]/", 0, ARPS_E_VALIDATION },
		{ "http://[::ffff:7f00:1]/", 0, ARPS_E_VALIDATION },
		{ "http://[::ffff:169.254.169.254]/", 0, ARPS_E_VALIDATION },
		{ "http://[::127.0.0.1]/", 0, ARPS_E_VALIDATION },
		{ "http://[::10.0.0.1]/", 0, ARPS_E_VALIDATION },
		{ "http://[64:ff9b::a9fe:a9fe]/", 0, ARPS_E_VALIDATION },
		{ "http://[2002:7f00:1::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[2002:c0a8:101::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[1::2::3]/", 0, ARPS_E_VALIDATION },
		{ "http://[1:2:3:4:5:6:7:8:9]/", 0, ARPS_E_VALIDATION },
		{ "http://[12345::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[1:2:3:4:5:6:7]/", 0, ARPS_E_VALIDATION },
		{ "http://[::ffff:127.1]/", 0, ARPS_E_VALIDATION },
		/* outside 2000::/3, or a special-use block inside it */
		{ "http://[::ffff:0:7f00:1]/", 0, ARPS_E_VALIDATION },	/* IPv4-translated */
		{ "http://[::ffff:0:a9fe:a9fe]/", 0, ARPS_E_VALIDATION },
		{ "http://[::ffff:0:808:808]/", 0, ARPS_E_VALIDATION },
		{ "http://[100::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[400::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[4000::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[e000::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[64:ff9b:1::1]/", 0, ARPS_E_VALIDATION },
		{ "http://[2001::1]/", 0, ARPS_E_VALIDATION },	/* Teredo */
		{ "http://[2001:2::1]/", 0, ARPS_E_VALIDATION },	/* benchmarking */
		{ "http://[3fff::1]/", 0, ARPS_E_VALIDATION },	/* documentation */
		/* webhooks: https only; loopback only with the flag */
		{ "https://example.com/hook", H, ARPS_OK },
		{ "http://example.com/hook", H, ARPS_E_VALIDATION },
		{ "http://127.0.0.1:9000/hook", H, ARPS_E_VALIDATION },
		{ "http://127.0.0.1:9000/hook", H | L, ARPS_OK },
		{ "http://localhost:9000/hook", H | L, ARPS_OK },
		{ "http://[::1]:9000/hook", H | L, ARPS_OK },
		{ "https://[::ffff:127.0.0.1]/hook", H | L, ARPS_OK },
		{ "http://10.0.0.1/hook", H | L, ARPS_E_VALIDATION },
		{ "http://169.254.169.254/", H | L, ARPS_E_VALIDATION },
		{ "http://example.com/hook", H | L, ARPS_E_VALIDATION },
		/* a webhook URL stored before the character rule is still sent;
		 * every host rule holds for it */
		{ "https://hooks.example.com/in?t={abc}", H, ARPS_E_VALIDATION },
		{ "https://hooks.example.com/in?t={abc}", H | ST, ARPS_OK },
		{ "https://hooks.example.com/a|b?x[]=1^2", H | ST, ARPS_OK },
		{ "https://hooks.example.com/%zz", H | ST, ARPS_OK },
		{ "https://10.0.0.1/in?t={abc}", H | ST, ARPS_E_VALIDATION },
		{ "http://hooks.example.com/in?t={abc}", H | ST, ARPS_E_VALIDATION },
		{ "https://user@hooks.example.com/", H | ST, ARPS_E_VALIDATION },
		{ "https://hooks.example.com/a b", H | ST, ARPS_E_VALIDATION },
		{ "http://127.0.0.1:9000/h?{x}", H | L | ST, ARPS_OK },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (val_public_url(rows[i].s, strlen(rows[i].s), rows[i].flags) != rows[i].rc)
			fail_msg("%s (flags %u): expected %d", rows[i].s, rows[i].flags, rows[i].rc);
	}
	assert_int_equal(val_public_url(NULL, 0, 0), ARPS_E_VALIDATION);
	assert_int_equal(val_public_url(S("https://example.com/\0"), 0), ARPS_E_VALIDATION);
}

static void
test_url(void **state)
{
	static const struct {
		const char	*s;
		enum arps_err	 rc;
	} rows[] = {
		{ "https://example.com", ARPS_OK },
		{ "http://example.com", ARPS_OK },
		{ "HTTPS://Example.COM/Path", ARPS_OK },
		{ "https://example.com/", ARPS_OK },
		{ "https://survey.example.org/s/abc?x=1&y=%20z#frag", ARPS_OK },
		{ "https://example.com?x=1", ARPS_OK },
		{ "https://example.com#top", ARPS_OK },
		{ "https://localhost:8080/x", ARPS_OK },
		{ "http://127.0.0.1/", ARPS_OK },
		{ "http://[::1]:8080/", ARPS_OK },
		{ "http://[2001:db8::1]/", ARPS_OK },
		{ "https://a-b.c-d.example/", ARPS_OK },
		{ "https://example.com:65535", ARPS_OK },
		{ "https://example.com:1/", ARPS_OK },
		{ "https://example.com/a-._~!$&'()*+,;=:@/b?c=/?:@#d/?:@", ARPS_OK },
		{ "https://example.com/%41%7e%7E", ARPS_OK },
		{ "https://example.com/a<b", ARPS_E_VALIDATION },
		{ "https://example.com/a>b", ARPS_E_VALIDATION },
		{ "https://example.com/\"x\"", ARPS_E_VALIDATION },
		{ "https://example.com/?q={{%PID%}}", ARPS_E_VALIDATION },
		{ "https://example.com/a|b", ARPS_E_VALIDATION },
		{ "https://example.com/a\\b", ARPS_E_VALIDATION },
		{ "https://example.com/a^b", ARPS_E_VALIDATION },
		{ "https://example.com/a`b", ARPS_E_VALIDATION },
		{ "https://example.com/a[b", ARPS_E_VALIDATION },
		{ "https://example.com/#a#b", ARPS_E_VALIDATION },
		{ "https://example.com/%", ARPS_E_VALIDATION },
		{ "https://example.com/%4", ARPS_E_VALIDATION },
		{ "https://example.com/%4g", ARPS_E_VALIDATION },
		{ "https://example.com/%g4", ARPS_E_VALIDATION },
		{ "https://example.com?%zz", ARPS_E_VALIDATION },
		{ "ftp://example.com/", ARPS_E_VALIDATION },
		{ "javascript:alert(1)", ARPS_E_VALIDATION },
		{ "file:///etc/passwd", ARPS_E_VALIDATION },
		{ "https:/example.com", ARPS_E_VALIDATION },
		{ "https//example.com", ARPS_E_VALIDATION },
		{ "example.com", ARPS_E_VALIDATION },
		{ "//example.com", ARPS_E_VALIDATION },
		{ "https://", ARPS_E_VALIDATION },
		{ "https:///path", ARPS_E_VALIDATION },
		{ "https://?q", ARPS_E_VALIDATION },
		{ "https://:80/", ARPS_E_VALIDATION },
		{ "https://example.com:0/", ARPS_E_VALIDATION },
		{ "https://example.com:65536/", ARPS_E_VALIDATION },
		{ "https://example.com:/", ARPS_E_VALIDATION },
		{ "https://example.com:8a/", ARPS_E_VALIDATION },
		{ "https://user:pw@example.com/", ARPS_E_VALIDATION },
		{ "https://evil.com@example.com/", ARPS_E_VALIDATION },
		{ "https://exa mple.com/", ARPS_E_VALIDATION },
		{ "https://example.com/a b", ARPS_E_VALIDATION },
		{ "https://example.com/\t", ARPS_E_VALIDATION },
		{ "https://example.com/\x7f", ARPS_E_VALIDATION },
		{ "https://example.com/\r\nX: y", ARPS_E_VALIDATION },
		{ "https://ex\xc3\xa4mple.com/", ARPS_E_VALIDATION },
		{ "https://-example.com/", ARPS_E_VALIDATION },
		{ "https://example-.com/", ARPS_E_VALIDATION },
		{ "https://example..com/", ARPS_E_VALIDATION },
		{ "https://.example.com/", ARPS_E_VALIDATION },
		{ "https://exa_mple.com/", ARPS_E_VALIDATION },
		{ "http://[::1/", ARPS_E_VALIDATION },
		{ "http://[]/", ARPS_E_VALIDATION },
		{ "http://[zz::1]/", ARPS_E_VALIDATION },
		{ "http://[1]/", ARPS_E_VALIDATION },
		{ "http://[::1]x/", ARPS_E_VALIDATION },
		{ "", ARPS_E_VALIDATION },
	};
	char	 big[VAL_URL_MAX + 2];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(val_url(rows[i].s, strlen(rows[i].s)), rows[i].rc);
	/* length bound: exactly 2048 bytes passes, 2049 fails */
	memset(big, 'a', sizeof(big));
	memcpy(big, "https://example.com/", 20);
	assert_int_equal(val_url(big, VAL_URL_MAX), ARPS_OK);
	assert_int_equal(val_url(big, VAL_URL_MAX + 1), ARPS_E_VALIDATION);
	/* a label over 63 bytes */
	memset(big, 'a', sizeof(big));
	memcpy(big, "https://", 8);
	assert_int_equal(val_url(big, 8 + 63), ARPS_OK);
	assert_int_equal(val_url(big, 8 + 64), ARPS_E_VALIDATION);
	assert_int_equal(val_url(S("https://example.com/\0")), ARPS_E_VALIDATION);
	assert_int_equal(val_url(NULL, 0), ARPS_E_VALIDATION);
}

static void
test_email(void **state)
{
	static const struct {
		const char	*s;
		enum arps_err	 rc;
	} rows[] = {
		{ "a@b.co", ARPS_OK },
		{ "alice@example.com", ARPS_OK },
		{ "Alice.Smith+tag@Mail.Example.ORG", ARPS_OK },
		{ "o'brien@example.ie", ARPS_OK },
		{ "x_y-z!#$%&*/=?^`{|}~@sub-domain.example.com", ARPS_OK },
		{ "1@2.3", ARPS_OK },
		{ "", ARPS_E_VALIDATION },
		{ "a@", ARPS_E_VALIDATION },
		{ "@b.co", ARPS_E_VALIDATION },
		{ "alice", ARPS_E_VALIDATION },
		{ "alice@localhost", ARPS_E_VALIDATION },
		{ "alice@@example.com", ARPS_E_VALIDATION },
		{ "a@b@example.com", ARPS_E_VALIDATION },
		{ ".alice@example.com", ARPS_E_VALIDATION },
		{ "alice.@example.com", ARPS_E_VALIDATION },
		{ "al..ice@example.com", ARPS_E_VALIDATION },
		{ "al ice@example.com", ARPS_E_VALIDATION },
		{ "alice@exa mple.com", ARPS_E_VALIDATION },
		{ "\"alice\"@example.com", ARPS_E_VALIDATION },
		{ "alice(x)@example.com", ARPS_E_VALIDATION },
		{ "alice@example..com", ARPS_E_VALIDATION },
		{ "alice@.example.com", ARPS_E_VALIDATION },
		{ "alice@example.com.", ARPS_E_VALIDATION },
		{ "alice@-example.com", ARPS_E_VALIDATION },
		{ "alice@example-.com", ARPS_E_VALIDATION },
		{ "alice@[127.0.0.1]", ARPS_E_VALIDATION },
		{ "al\xc3\xaf" "ce@example.com", ARPS_E_VALIDATION },
		{ "alice@ex\xc3\xa4mple.com", ARPS_E_VALIDATION },
		{ "alice@example.com\n", ARPS_E_VALIDATION },
	};
	char	 big[300];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(val_email(rows[i].s, strlen(rows[i].s)),
		    rows[i].rc);
	/* local part 64 ok, 65 not */
	memset(big, 'a', sizeof(big));
	memcpy(big + 64, "@example.com", 12);
	assert_int_equal(val_email(big, 76), ARPS_OK);
	memset(big, 'a', sizeof(big));
	memcpy(big + 65, "@example.com", 12);
	assert_int_equal(val_email(big, 77), ARPS_E_VALIDATION);
	/* total 254 ok, 255 not: a@ + labels of 63 */
	memset(big, 'b', sizeof(big));
	memcpy(big, "a@", 2);
	big[2 + 63] = '.';
	big[2 + 127] = '.';
	big[2 + 191] = '.';
	assert_int_equal(val_email(big, 254), ARPS_OK);
	assert_int_equal(val_email(big, 255), ARPS_E_VALIDATION);
	assert_int_equal(val_email(S("a\0@example.com")), ARPS_E_VALIDATION);
	assert_int_equal(val_email(NULL, 5), ARPS_E_VALIDATION);
}

static void
test_iso_and_bounds(void **state)
{
	int64_t	 t = 0;

	(void)state;
	assert_int_equal(val_iso8601(S("2026-01-01T00:00:00Z"), &t), ARPS_OK);
	assert_int_equal(t, 1767225600);
	assert_int_equal(val_iso8601(S("2026-02-30T00:00:00Z"), &t),
	    ARPS_E_VALIDATION);
	/* the decided bounds are sane */
	assert_true(VAL_AGENT_NAME_MIN == 1 && VAL_AGENT_NAME_MAX == 100);
	assert_true(VAL_REWARD_MIN == 1 && VAL_REWARD_MAX == 1000000);
	assert_true(VAL_LIST_LIMIT_DEFAULT <= VAL_LIST_LIMIT_MAX);
	assert_true(VAL_AVAILABLE_LIMIT_DEFAULT <= VAL_AVAILABLE_LIMIT_MAX);
}

static void
test_sanitize(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "" },
		{ "plain ascii", "plain ascii" },
		{ "caf\xc3\xa9 \xf0\x9f\x9a\x80", "caf\xc3\xa9 \xf0\x9f\x9a\x80" },
		{ "std_\xff\xfe", "std_??" },
		{ "cut \xe2\x82", "cut ??" },			/* truncated 3-byte sequence */
		{ "\xc0\xaf overlong", "?? overlong" },
		{ "\xed\xa0\x80 surrogate", "??? surrogate" },
		{ "\x80\x80x\xf4\x90\x80\x80", "??x????" },	/* above U+10FFFF */
		{ "tab\tnl\n", "tab\tnl\n" },
	};
	char buf[64];
	size_t i, n;

	(void)state;
	assert_int_equal(val_utf8_sanitize(NULL), 0);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(buf, sizeof buf, "%s", cases[i].in);
		n = val_utf8_sanitize(buf);
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
		assert_true(val_utf8(buf, n, NULL));
	}
}

static void
test_text(void **state)
{
	static const struct {
		const char *s;
		size_t minc, maxc;
		bool multiline;
		int want;
	} cases[] = {
		{ "Ada", 1, 25, false, ARPS_OK },
		{ "Zo\xc3\xab \xf0\x9f\x9a\x80", 1, 25, false, ARPS_OK },
		{ "", 1, 25, false, ARPS_E_VALIDATION },		/* too short */
		{ "", 0, 25, false, ARPS_OK },			/* optional text may be empty */
		{ "   ", 0, 25, true, ARPS_OK },			/* ... or blank */
		{ "   ", 1, 25, false, ARPS_E_VALIDATION },		/* blank */
		{ " \t\r\n", 1, 25, true, ARPS_E_VALIDATION },	/* blank over lines */
		{ "two\nlines", 1, 25, false, ARPS_E_VALIDATION },
		{ "two\nlines", 1, 25, true, ARPS_OK },
		{ "tab\there", 1, 25, true, ARPS_OK },
		{ "tab\there", 1, 25, false, ARPS_E_VALIDATION },
		{ "crlf\r\n", 1, 25, true, ARPS_OK },
		{ "bell\a", 1, 25, true, ARPS_E_VALIDATION },
		{ "esc\x1b[31m", 1, 25, true, ARPS_E_VALIDATION },
		{ "del\x7f", 1, 25, true, ARPS_E_VALIDATION },
		{ "\x01", 0, 25, true, ARPS_E_VALIDATION },
		{ "bad \xff", 1, 25, true, ARPS_E_VALIDATION },	/* not UTF-8 */
		{ "abcdef", 1, 5, false, ARPS_E_VALIDATION },	/* over maxc 5 */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(val_text(cases[i].s, strlen(cases[i].s), cases[i].minc,
		    cases[i].maxc, cases[i].multiline), cases[i].want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_int_range),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_public_url),
		cmocka_unit_test(test_json_keys),
		cmocka_unit_test(test_email),
		cmocka_unit_test(test_iso_and_bounds),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
