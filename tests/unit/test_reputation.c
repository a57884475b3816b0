/* Unit tests: core/reputation (deltas, streaks, clamping, tiers). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <limits.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/reputation.h"

static void
test_apply(void **state)
{
	static const struct {
		int		 score, streak;
		enum rep_event	 ev;
		int		 score2, streak2, delta;
	} rows[] = {
		/* approve and the 5th-in-a-row bonus */
		{ 50, 0, REP_EV_APPROVE, 52, 1, 2 },
		{ 50, 3, REP_EV_APPROVE, 52, 4, 2 },
		{ 50, 4, REP_EV_APPROVE, 57, 5, 7 },
		{ 50, 5, REP_EV_APPROVE, 52, 6, 2 },
		{ 50, 9, REP_EV_APPROVE, 57, 10, 7 },
		{ 50, 10, REP_EV_APPROVE, 52, 11, 2 },
		{ 50, 14, REP_EV_APPROVE, 57, 15, 7 },
		{ 98, 0, REP_EV_APPROVE, 100, 1, 2 },
		{ 99, 0, REP_EV_APPROVE, 100, 1, 1 },
		{ 100, 0, REP_EV_APPROVE, 100, 1, 0 },
		{ 95, 4, REP_EV_APPROVE, 100, 5, 5 },
		{ 0, 0, REP_EV_APPROVE, 2, 1, 2 },
		{ 28, 4, REP_EV_APPROVE, 35, 5, 7 },
		{ 50, -3, REP_EV_APPROVE, 52, 1, 2 },
		{ 50, INT_MAX, REP_EV_APPROVE, 52, INT_MAX - 4, 2 },
		{ 50, INT_MAX - 5, REP_EV_APPROVE, 52, INT_MAX - 9, 2 },
		/* reject, timeout, invalid: penalty and streak reset */
		{ 50, 4, REP_EV_REJECT, 40, 0, -10 },
		{ 10, 4, REP_EV_REJECT, 0, 0, -10 },
		{ 5, 9, REP_EV_REJECT, 0, 0, -5 },
		{ 0, 0, REP_EV_REJECT, 0, 0, 0 },
		{ 50, 4, REP_EV_TIMEOUT, 45, 0, -5 },
		{ 3, 4, REP_EV_TIMEOUT, 0, 0, -3 },
		{ 50, 9, REP_EV_INVALID, 45, 0, -5 },
		{ 0, 9, REP_EV_INVALID, 0, 0, 0 },
		{ 100, 10, REP_EV_INVALID, 95, 0, -5 },
		/* withdraw and none: no change, streak kept */
		{ 50, 4, REP_EV_WITHDRAW, 50, 4, 0 },
		{ 0, 9, REP_EV_WITHDRAW, 0, 9, 0 },
		{ 50, 3, REP_EV_NONE, 50, 3, 0 },
		/* out-of-range stored values are clamped first */
		{ 150, 0, REP_EV_NONE, 100, 0, 0 },
		{ -20, 0, REP_EV_APPROVE, 2, 1, 2 },
	};
	struct rep_state	 st;
	size_t			 i;
	int			 d;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		st.score = rows[i].score;
		st.streak = rows[i].streak;
		d = 999;
		assert_int_equal(rep_apply(&st, rows[i].ev, &d), ARPS_OK);
		assert_int_equal(st.score, rows[i].score2);
		assert_int_equal(st.streak, rows[i].streak2);
		assert_int_equal(d, rows[i].delta);
	}
	st.score = 50;
	st.streak = 0;
	assert_int_equal(rep_apply(&st, REP_EV__MAX, &d), ARPS_E_INTERNAL);
	assert_int_equal(rep_apply(&st, (enum rep_event)-1, NULL), ARPS_E_INTERNAL);
	assert_int_equal(rep_apply(NULL, REP_EV_APPROVE, NULL), ARPS_E_INTERNAL);
	assert_int_equal(st.score, 50);
	assert_int_equal(rep_apply(&st, REP_EV_APPROVE, NULL), ARPS_OK);
}

/* Ten approvals in a row from 50: +2 x 8 and +7 x 2 = 80. */
static void
test_streak_sequence(void **state)
{
	static const int after[] = { 52, 54, 56, 58, 65, 67, 69, 71, 73, 80 };
	struct rep_state	 st = { REP_START, 0 };
	size_t			 i;

	(void)state;
	for (i = 0; i < 10; i++) {
		assert_int_equal(rep_apply(&st, REP_EV_APPROVE, NULL), ARPS_OK);
		assert_int_equal(st.score, after[i]);
	}
	assert_int_equal(rep_tier_of(st.score), REP_TIER_PRIORITY);
	/* a withdrawal keeps the streak; a timeout breaks it */
	assert_int_equal(rep_apply(&st, REP_EV_WITHDRAW, NULL), ARPS_OK);
	assert_int_equal(st.streak, 10);
	assert_int_equal(rep_apply(&st, REP_EV_TIMEOUT, NULL), ARPS_OK);
	assert_int_equal(st.streak, 0);
	assert_int_equal(st.score, 75);
}

static void
test_delta(void **state)
{
	static const struct {
		enum rep_event	 ev;
		int		 streak, delta;
	} rows[] = {
		{ REP_EV_NONE, 0, 0 }, { REP_EV_APPROVE, 0, 2 },
		{ REP_EV_APPROVE, 4, 7 }, { REP_EV_APPROVE, 5, 2 },
		{ REP_EV_APPROVE, 9, 7 }, { REP_EV_APPROVE, 10, 2 },
		{ REP_EV_APPROVE, -1, 2 },
		{ REP_EV_REJECT, 4, -10 }, { REP_EV_TIMEOUT, 4, -5 },
		{ REP_EV_INVALID, 0, -5 }, { REP_EV_WITHDRAW, 4, 0 },
		{ REP_EV__MAX, 0, 0 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(rep_delta(rows[i].ev, rows[i].streak),
		    rows[i].delta);
}

static void
test_tiers(void **state)
{
	static const struct {
		int		 score;
		enum rep_tier	 tier;
		const char	*name;
		bool		 may;
	} rows[] = {
		{ -5, REP_TIER_SUSPENDED, "suspended", false },
		{ 0, REP_TIER_SUSPENDED, "suspended", false },
		{ 1, REP_TIER_SUSPENDED, "suspended", false },
		{ 29, REP_TIER_SUSPENDED, "suspended", false },
		{ 30, REP_TIER_BASIC, "basic", true },
		{ 49, REP_TIER_BASIC, "basic", true },
		{ 50, REP_TIER_STANDARD, "standard", true },
		{ 79, REP_TIER_STANDARD, "standard", true },
		{ 80, REP_TIER_PRIORITY, "priority", true },
		{ 99, REP_TIER_PRIORITY, "priority", true },
		{ 100, REP_TIER_PRIORITY, "priority", true },
		{ 1000, REP_TIER_PRIORITY, "priority", true },
	};
	size_t		 i;
	enum rep_tier	 t;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(rep_tier_of(rows[i].score), rows[i].tier);
		assert_string_equal(rep_tier_name(rows[i].tier), rows[i].name);
		assert_true(rep_tier_from_name(rows[i].name, &t));
		assert_int_equal(t, rows[i].tier);
		assert_int_equal(rep_may_accept(rows[i].score), rows[i].may);
		assert_int_equal(rep_may_take_part(false, rows[i].score), rows[i].may);
		assert_false(rep_may_take_part(true, rows[i].score));
	}
	assert_null(rep_tier_name(REP_TIER__MAX));
	assert_false(rep_tier_from_name("Basic", &t));
	assert_false(rep_tier_from_name("", &t));
	assert_false(rep_tier_from_name(NULL, &t));
	assert_true(rep_tier_from_name("basic", NULL));
	assert_int_equal(rep_clamp(-1), 0);
	assert_int_equal(rep_clamp(101), 100);
	assert_int_equal(rep_clamp(42), 42);
}

static void
test_event_names(void **state)
{
	static const char *const names[REP_EV__MAX] = {
		"none", "approve", "reject", "timeout", "invalid", "withdraw",
	};
	int	 i;

	(void)state;
	for (i = 0; i < REP_EV__MAX; i++)
		assert_string_equal(rep_event_name((enum rep_event)i), names[i]);
	assert_null(rep_event_name(REP_EV__MAX));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_streak_sequence),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_event_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
