/* Unit tests: core/timefmt (ISO 8601 UTC format and parse). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/timefmt.h"

static void
test_format(void **state)
{
	static const struct {
		int64_t		 t;
		const char	*s;	/* NULL: out of range */
	} rows[] = {
		{ 0, "1970-01-01T00:00:00Z" },
		{ -1, "1969-12-31T23:59:59Z" },
		{ 86399, "1970-01-01T23:59:59Z" },
		{ 86400, "1970-01-02T00:00:00Z" },
		{ 951782400, "2000-02-29T00:00:00Z" },
		{ 1709208000, "2024-02-29T12:00:00Z" },
		{ 1767225600, "2026-01-01T00:00:00Z" },
		{ 2147483648, "2038-01-19T03:14:08Z" },
		{ 4102444800, "2100-01-01T00:00:00Z" },
		{ -2203891200, "1900-03-01T00:00:00Z" },
		{ TIMEFMT_MIN, "0001-01-01T00:00:00Z" },
		{ TIMEFMT_MAX, "9999-12-31T23:59:59Z" },
		{ TIMEFMT_MIN - 1, NULL },
		{ TIMEFMT_MAX + 1, NULL },
		{ INT64_MAX, NULL },
		{ INT64_MIN, NULL },
	};
	char	 buf[TIMEFMT_BUFSZ];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].s == NULL) {
			assert_int_equal(timefmt_format(rows[i].t, buf),
			    ARPS_E_VALIDATION);
			continue;
		}
		assert_int_equal(timefmt_format(rows[i].t, buf), ARPS_OK);
		assert_string_equal(buf, rows[i].s);
	}
	assert_int_equal(timefmt_format(0, NULL), ARPS_E_VALIDATION);
}

static void
test_parse(void **state)
{
	static const struct {
		const char	*s;
		int		 rc;
		int64_t		 t;
	} rows[] = {
		{ "2026-01-01T00:00:00Z", ARPS_OK, 1767225600 },
		{ "2026-01-01t00:00:00z", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00:00+00:00", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00:00-00:00", ARPS_OK, 1767225600 },
		{ "2026-01-01T01:00:00+01:00", ARPS_OK, 1767225600 },
		{ "2025-12-31T19:00:00-05:00", ARPS_OK, 1767225600 },
		{ "2026-01-01T05:30:00+05:30", ARPS_OK, 1767225600 },
		{ "2025-12-31T00:01:00-23:59", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00:00.5Z", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00:00.999999999Z", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00:00.000+00:00", ARPS_OK, 1767225600 },
		{ "2000-02-29T00:00:00Z", ARPS_OK, 951782400 },
		{ "2024-02-29T12:00:00Z", ARPS_OK, 1709208000 },
		{ "1970-01-01T00:00:00Z", ARPS_OK, 0 },
		{ "1969-12-31T23:59:59Z", ARPS_OK, -1 },
		{ "0001-01-01T00:00:00Z", ARPS_OK, TIMEFMT_MIN },
		{ "9999-12-31T23:59:59Z", ARPS_OK, TIMEFMT_MAX },
		{ "9999-12-31T23:59:59+01:00", ARPS_OK, TIMEFMT_MAX - 3600 },
		{ "0001-01-01T00:30:00-01:00", ARPS_OK, TIMEFMT_MIN + 5400 },
		/* the forms clients write besides RFC 3339's: no zone is UTC
		 * (Python's isoformat() of a naive time), a date alone its
		 * midnight, no seconds, a space, offsets +HHMM and +HH */
		{ "2026-01-01T00:00:00", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00:00.123456", ARPS_OK, 1767225600 },
		{ "2026-01-01 00:00:00Z", ARPS_OK, 1767225600 },
		{ "2026-01-01 00:00:00", ARPS_OK, 1767225600 },
		{ "2026-01-01", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00Z", ARPS_OK, 1767225600 },
		{ "2026-01-01T00:00", ARPS_OK, 1767225600 },
		{ "2026-01-01T01:00+01:00", ARPS_OK, 1767225600 },
		{ "2026-01-01T01:00:00+0100", ARPS_OK, 1767225600 },
		{ "2026-01-01T01:00:00+01", ARPS_OK, 1767225600 },
		{ "2025-12-31T19:00:00-0500", ARPS_OK, 1767225600 },
		{ "2026-01-01T12:34:56", ARPS_OK, 1767225600 + 45296 },
		/* out of range after the offset */
		{ "9999-12-31T23:59:59-00:01", ARPS_E_VALIDATION, 0 },
		{ "0001-01-01T00:30:00+01:00", ARPS_E_VALIDATION, 0 },
		{ "0000-01-01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		/* impossible dates and times */
		{ "2026-02-29T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-02-30T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2100-02-29T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-04-31T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-13-01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-00-01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-00T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-32T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T24:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T23:60:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T23:59:60Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+24:00", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+01:60", ARPS_E_VALIDATION, 0 },
		/* syntax */
		{ "2026-1-01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026/01/01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00-00-00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00.Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00.", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00,5Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+1:00", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+010", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+01:0", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+1", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00+01:00:00", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:0", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00.5Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01 T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01  00:00:00", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01Z", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T25:00", ARPS_E_VALIDATION, 0 },
		{ "2026-02-29", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00ZZ", ARPS_E_VALIDATION, 0 },
		{ "2026-01-01T00:00:00Z ", ARPS_E_VALIDATION, 0 },
		{ " 2026-01-01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "+2026-01-01T00:00:00Z", ARPS_E_VALIDATION, 0 },
		{ "20260101T000000Z", ARPS_E_VALIDATION, 0 },
		{ "", ARPS_E_VALIDATION, 0 },
		{ "Z", ARPS_E_VALIDATION, 0 },
		{ "abcd-ef-ghTij:kl:mnZ", ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 t;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		t = 42;
		assert_int_equal(timefmt_parse(rows[i].s, strlen(rows[i].s), &t),
		    rows[i].rc);
		assert_int_equal(t, rows[i].rc == ARPS_OK ? rows[i].t : 42);
	}
	/* length is honoured: a NUL-free prefix, an embedded NUL */
	assert_int_equal(timefmt_parse("2026-01-01T00:00:00Zjunk", 20, &t), ARPS_OK);
	assert_int_equal(t, 1767225600);
	assert_int_equal(timefmt_parse("2026-01-01T00:00:00Z\0", 21, &t),
	    ARPS_E_VALIDATION);
	assert_int_equal(timefmt_parse("2026-01-01T00:00:00Z", 18, &t),
	    ARPS_E_VALIDATION);
	assert_int_equal(timefmt_parse(NULL, 0, &t), ARPS_E_VALIDATION);
	assert_int_equal(timefmt_parse("2026-01-01T00:00:00Z", 20, NULL),
	    ARPS_E_VALIDATION);
}

/* format -> parse is the identity over the whole range. */
static void
test_round_trip(void **state)
{
	char	 buf[TIMEFMT_BUFSZ];
	int64_t	 t, back, step = 86400 * 7 + 3 * 3600 + 17 * 60 + 29;

	(void)state;
	for (t = TIMEFMT_MIN; t <= TIMEFMT_MAX; t += step) {
		assert_int_equal(timefmt_format(t, buf), ARPS_OK);
		assert_int_equal(timefmt_parse(buf, strlen(buf), &back), ARPS_OK);
		assert_int_equal(back, t);
	}
	for (t = -100000; t <= 100000; t += 37) {
		assert_int_equal(timefmt_format(t, buf), ARPS_OK);
		assert_int_equal(timefmt_parse(buf, strlen(buf), &back), ARPS_OK);
		assert_int_equal(back, t);
	}
}

/* Every date of 400 years (a full Gregorian cycle) round-trips. */
static void
test_civil(void **state)
{
	int64_t	 y, y2, days, expect;
	int	 m, d, m2, d2;

	(void)state;
	expect = timefmt_days_from_civil(1800, 1, 1);
	for (y = 1800; y < 2200; y++)
		for (m = 1; m <= 12; m++)
			for (d = 1; d <= timefmt_days_in_month(y, m); d++) {
				days = timefmt_days_from_civil(y, m, d);
				assert_int_equal(days, expect);
				timefmt_civil_from_days(days, &y2, &m2, &d2);
				assert_int_equal(y2, y);
				assert_int_equal(m2, m);
				assert_int_equal(d2, d);
				expect++;
			}
	assert_int_equal(timefmt_days_from_civil(1970, 1, 1), 0);
	assert_int_equal(timefmt_days_in_month(2000, 2), 29);
	assert_int_equal(timefmt_days_in_month(1900, 2), 28);
	assert_int_equal(timefmt_days_in_month(2024, 2), 29);
	assert_int_equal(timefmt_days_in_month(2026, 2), 28);
	assert_int_equal(timefmt_days_in_month(2026, 0), 0);
	assert_int_equal(timefmt_days_in_month(2026, 13), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_civil),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
