/* Unit tests: fcgi/jb.c, JSON text by hand (json-c's text exactly; a
 * failed append poisons the text). */
#include <limits.h>
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
		cmocka_unit_test(test_failure_poisons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
