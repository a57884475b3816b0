/* Unit tests: fcgi/jb.c, JSON text by hand (json-c's text exactly; a
 * failed append poisons the text). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "fcgi/jb.h"

#define FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* pb's text is json-c's serialisation of o; frees both. */
static void
same(struct printbuf *pb, struct json_object *o)
{
	assert_true(jb_ok(pb));
	assert_string_equal(pb->buf, json_object_to_json_string_ext(o, FLAGS));
	json_object_put(o);
	printbuf_free(pb);
}

/* Each value written by jb_* equals json-c's serialisation of it. */
static void
test_same_as_json_c(void **state)
{
	static const char *const strs[] = {
		"", "plain", "quote \" backslash \\ slash /", "tab\tcr\rlf\nbs\bff\f",
		"\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	};
	static const int64_t ints[] = { 0, 1, -1, 100, INT64_MAX, INT64_MIN };
	static const double dbls[] = { 0.0, 1.0, 0.5, 0.1, 0.9999, 1e-7, 123456789.0, 0.30000000000000004 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof strs / sizeof *strs; i++) {
		struct printbuf *pb = printbuf_new();

		jb_str(pb, strs[i]);
		same(pb, json_object_new_string(strs[i]));
	}
	for (i = 0; i < sizeof ints / sizeof *ints; i++) {
		struct printbuf *pb = printbuf_new();

		jb_int(pb, ints[i]);
		same(pb, json_object_new_int64(ints[i]));
	}
	for (i = 0; i < sizeof dbls / sizeof *dbls; i++) {
		struct printbuf *pb = printbuf_new();

		jb_double(pb, dbls[i]);
		same(pb, json_object_new_double(dbls[i]));
	}
	{
		struct printbuf *pb = printbuf_new();

		jb_str(pb, NULL);
		jb_raw(pb, ",");
		jb_time(pb, 0);
		jb_raw(pb, ",");
		jb_time(pb, 1767225600);	/* 2026-01-01T00:00:00Z */
		assert_string_equal(pb->buf, "null,null,\"2026-01-01T00:00:00Z\"");
		printbuf_free(pb);
	}
}

/* jb_double and jb_int write numbers without printf on the common path
 * (fcgi/jb.c): the same text as json-c's (%.17g, "%" PRId64) for values
 * across that path's range, its edges (powers of ten and their neighbours,
 * ties of the 17th digit, 1e-4 and 2^52 where it hands over to snprintf),
 * and random bit patterns.  Deterministic: a fixed xorshift seed. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
next_u64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
same_double(double d)
{
	struct printbuf *pb = printbuf_new();
	struct json_object *o = json_object_new_double(d);
	const char *want = json_object_to_json_string_ext(o, FLAGS);

	jb_double(pb, d);
	assert_true(jb_ok(pb));
	if (strcmp(pb->buf, want) != 0)
		fail_msg("jb_double(%a): %s, json-c %s", d, pb->buf, want);
	json_object_put(o);
	printbuf_free(pb);
}

static void
test_numbers_without_printf(void **state)
{
	static const double edges[] = { 1e-4, 0.4, 0.7, 1.0, 0.1, 0.2, 0.3, 0.6, 0.8, 0.9,
	    9.9999999999999995e-5, 1.0000000000000001e-4, 0.00099999999999999999, 0.001,
	    0.99999999999999989, 0.99999999999999994, 9.9999999999999982, 9.9999999999999991,
	    10.0, 4503599627370495.5, 4503599627370496.0, 4503599627370497.0,
	    123456789012345.67, 0.5, 0.25, 0.125, 0.0625, 1.5, 2.5, 0.1 + 0.2,
	    1.0 / 3, 2.0 / 3, 0.89340796321630478, 0.6142, -0.4, -1e-4, -0.5, -0.99999999999999989 };
	static const int64_t ints[] = { 0, 1, -1, 9, 10, -10, 99, 100, 12345, -12345,
	    999999999, 1000000000, INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1,
	    INT64_MAX, INT64_MIN, INT64_MIN + 1, -9223372036854775807LL / 10 };
	size_t i;
	int p;

	(void)state;
	for (i = 0; i < sizeof edges / sizeof *edges; i++) {
		same_double(edges[i]);
		same_double(nextafter(edges[i], 0));
		same_double(nextafter(edges[i], 1e300));
	}
	for (p = -6; p <= 17; p++) {		/* powers of ten and their neighbours */
		double t = pow(10, p);

		same_double(t);
		same_double(nextafter(t, 0));
		same_double(nextafter(t, 1e300));
		same_double(-t);
	}
	for (p = 1; p <= 60; p++) {		/* exact binary fractions: ties of the 17th digit */
		double t = ldexp(1, -p);

		same_double(t);
		same_double(1 - t);
		same_double(1 + t);
		same_double(3 * t);
	}
	for (i = 0; i <= 100000; i++) {		/* 1e-4 .. 1.25e-4: an estimate one low */
		double t = 1e-4 * (1 + 0.25 * (double)i / 100000);

		same_double(t);
		same_double(nextafter(t, 0));
		same_double(-t);
	}
	for (i = 0; i < 200000; i++) {
		uint64_t r = next_u64();
		double u = (double)(r >> 11) * 0x1p-53;		/* [0, 1): scores */
		double l = pow(10, -5 + 22 * u);		/* log-uniform 1e-5 .. 1e17 */
		double bits;
		uint64_t b = next_u64();

		same_double(u);
		same_double(2 * u - 1);				/* similarities: [-1, 1) */
		same_double(l);
		memcpy(&bits, &b, sizeof bits);
		if (isfinite(bits))
			same_double(bits);
	}
	for (i = 0; i < sizeof ints / sizeof *ints; i++) {
		struct printbuf *pb = printbuf_new();

		jb_int(pb, ints[i]);
		same(pb, json_object_new_int64(ints[i]));
	}
	for (i = 0; i < 20000; i++) {
		struct printbuf *pb = printbuf_new();
		int64_t v = (int64_t)next_u64() >> (next_u64() % 63);

		jb_int(pb, v);
		same(pb, json_object_new_int64(v));
	}
}

/* A failed append (json-c refuses a size past INT_MAX - bpos - 1 before it
 * touches memory, the same return as an allocation failure) poisons the
 * text: nothing after it is written, so no answer goes out with a piece
 * missing; jb_raw of NULL (json-c's serialisation out of memory) too. */
static void
test_failure_poisons(void **state)
{
	struct printbuf *pb;

	(void)state;
	pb = printbuf_new();
	jb_raw(pb, "{\"a\":");
	assert_true(jb_ok(pb));
	jb_mem(pb, "x", INT_MAX);
	assert_false(jb_ok(pb));
	assert_null(pb->buf);
	jb_raw(pb, "1}");
	jb_str(pb, "after");
	jb_int(pb, 7);
	jb_double(pb, 0.5);
	jb_time(pb, 1767225600);
	assert_false(jb_ok(pb));
	assert_int_equal(pb->bpos, 0);
	printbuf_free(pb);

	pb = printbuf_new();
	jb_raw(pb, "[");
	jb_raw(pb, NULL);
	jb_raw(pb, "]");
	assert_false(jb_ok(pb));
	printbuf_free(pb);

	pb = printbuf_new();
	jb_mem(pb, "x", -1);
	assert_false(jb_ok(pb));
	printbuf_free(pb);
	assert_false(jb_ok(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_json_c),
		cmocka_unit_test(test_numbers_without_printf),
		cmocka_unit_test(test_failure_poisons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
