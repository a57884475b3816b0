/* Unit tests: core/events (the catalogue of design.md §11.4 and the
 * webhook type lists of design.md §11.5). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/events.h"

static void
names_round_trip(void **state)
{
	enum event_type t, back;

	(void)state;
	for (t = 0; t < EV__MAX; t++) {
		assert_non_null(event_type_name(t));
		assert_true(event_type_from_name(event_type_name(t), &back));
		assert_int_equal(back, t);
	}
	assert_null(event_type_name(EV__MAX));
	assert_false(event_type_from_name("participation", &back));
	assert_false(event_type_from_name("", &back));
	assert_true(event_type_for(EV_PART_APPROVED, true));
	assert_false(event_type_for(EV_PART_APPROVED, false));
	assert_true(event_type_for(EV_STUDY_FULL, false));
	assert_false(event_type_for(EV_STUDY_FULL, true));
	/* a researcher's wallet is topped up: its feed has the type, so
	 * its webhooks may ask for it */
	assert_true(event_type_for(EV_WALLET_CREDITED, true));
	assert_true(event_type_for(EV_WALLET_CREDITED, false));
	assert_true(event_type_for(EV_WEBHOOK_DISABLED, true));
	assert_true(event_type_for(EV_WEBHOOK_DISABLED, false));
}

static void
list_has(void **state)
{
	static const struct {
		const char *list, *type;
		bool has;
	} rows[] = {
		{ "study.full",				"study.full",		true },
		{ "study.full,study.completed",		"study.completed",	true },
		{ "study.completed,study.full",		"study.completed",	true },
		{ "a,study.full,b",			"study.full",		true },
		/* a prefix or an extension of a listed name is not it */
		{ "study.fullness",			"study.full",		false },
		{ "study.ful",				"study.full",		false },
		{ "xstudy.full",			"study.full",		false },
		{ "a,study.full.x,b",			"study.full",		false },
		{ "",					"study.full",		false },
		{ ",",					"study.full",		false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		assert_int_equal(event_list_has(rows[i].list, rows[i].type), rows[i].has);
	assert_false(event_list_has(NULL, "study.full"));
}

/* An event's text data: quoted, with '"', '\\' and control characters
 * escaped; refused when it does not fit. */
static void
json_str_escapes(void **state)
{
	static const struct {
		const char *in;
		size_t n;
		bool ok;
		const char *out;
	} rows[] = {
		{ "plain", 64, true, "\"plain\"" },
		{ "", 3, true, "\"\"" },
		{ "a\"b\\c", 64, true, "\"a\\\"b\\\\c\"" },
		{ "line\nnext\ttab", 64, true, "\"line\\u000anext\\u0009tab\"" },
		{ "caf\xc3\xa9", 64, true, "\"caf\xc3\xa9\"" },
		{ "abc", 6, true, "\"abc\"" },
		{ "abc", 5, false, NULL },
		{ "\n", 8, false, NULL },
		{ "\n", 9, true, "\"\\u000a\"" },
	};
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		assert_int_equal(event_json_str(rows[i].in, out, rows[i].n), rows[i].ok);
		if (rows[i].ok)
			assert_string_equal(out, rows[i].out);
	}
	assert_false(event_json_str(NULL, out, sizeof out));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_round_trip),
		cmocka_unit_test(list_has),
		cmocka_unit_test(json_str_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
