/* Unit tests: core/participation (every state x event pair). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/participation.h"

static const struct {
	enum part_state		 from;
	enum part_event		 ev;
	bool			 code_ok;
	int			 rc;
	enum part_state		 to;
	bool			 changed;
	enum rep_event		 rep;
	enum ledger_event	 money;
} rows[] = {
	/* all 8 x 8 pairs; COMPLETE also with a mismatching code */
	{ PART_ACCEPTED, PART_EV_OPEN, true, ARPS_OK, PART_IN_PROGRESS, true, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_COMPLETE, true, ARPS_OK, PART_SUBMITTED, true, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_COMPLETE, false, ARPS_E_INVALID_SUBMISSION, PART_ACCEPTED, false, REP_EV_INVALID, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_WITHDRAW, true, ARPS_OK, PART_WITHDRAWN, true, REP_EV_WITHDRAW, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_TIMEOUT, true, ARPS_OK, PART_TIMED_OUT, true, REP_EV_TIMEOUT, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_ACCEPTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_ACCEPTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_ACCEPTED, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_ACCEPTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_OPEN, true, ARPS_OK, PART_IN_PROGRESS, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_COMPLETE, true, ARPS_OK, PART_SUBMITTED, true, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_COMPLETE, false, ARPS_E_INVALID_SUBMISSION, PART_IN_PROGRESS, false, REP_EV_INVALID, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_WITHDRAW, true, ARPS_OK, PART_WITHDRAWN, true, REP_EV_WITHDRAW, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_TIMEOUT, true, ARPS_OK, PART_TIMED_OUT, true, REP_EV_TIMEOUT, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_IN_PROGRESS, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_IN_PROGRESS, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_IN_PROGRESS, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_OPEN, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SUBMITTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_COMPLETE, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SUBMITTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_COMPLETE, false, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SUBMITTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_WITHDRAW, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SUBMITTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_TIMEOUT, true, ARPS_E_INVALID_STATE, PART_SUBMITTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_APPROVE, true, ARPS_OK, PART_APPROVED, true, REP_EV_APPROVE, LEDGER_EV_APPROVE },
	{ PART_SUBMITTED, PART_EV_AUTO_APPROVE, true, ARPS_OK, PART_APPROVED, true, REP_EV_APPROVE, LEDGER_EV_APPROVE },
	{ PART_SUBMITTED, PART_EV_REJECT, true, ARPS_OK, PART_REJECTED, true, REP_EV_REJECT, LEDGER_EV_REJECT },
	{ PART_APPROVED, PART_EV_OPEN, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_COMPLETE, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_COMPLETE, false, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_WITHDRAW, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_TIMEOUT, true, ARPS_E_INVALID_STATE, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_APPROVED, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_OPEN, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_COMPLETE, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_COMPLETE, false, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_WITHDRAW, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_TIMEOUT, true, ARPS_E_INVALID_STATE, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_OPEN, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_COMPLETE, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_COMPLETE, false, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_WITHDRAW, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_TIMEOUT, true, ARPS_E_INVALID_STATE, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_OPEN, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_COMPLETE, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_COMPLETE, false, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_WITHDRAW, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_TIMEOUT, true, ARPS_E_INVALID_STATE, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	/* the screen-out (design.md §14): from submitted only; screened_out is final */
	{ PART_ACCEPTED, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_ACCEPTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_IN_PROGRESS, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_IN_PROGRESS, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SUBMITTED, PART_EV_SCREEN_OUT, true, ARPS_OK, PART_SCREENED_OUT, true, REP_EV_NONE, LEDGER_EV_SCREEN_OUT },
	{ PART_APPROVED, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_APPROVED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_REJECTED, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_REJECTED, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_WITHDRAWN, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_WITHDRAWN, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_TIMED_OUT, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_TIMED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_OPEN, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_COMPLETE, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_WITHDRAW, true, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_TIMEOUT, true, ARPS_E_INVALID_STATE, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_APPROVE, true, ARPS_E_INVALID_STATE, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_AUTO_APPROVE, true, ARPS_E_INVALID_STATE, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_REJECT, true, ARPS_E_INVALID_STATE, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_SCREEN_OUT, true, ARPS_E_INVALID_STATE, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
	{ PART_SCREENED_OUT, PART_EV_COMPLETE, false, ARPS_E_NO_ACTIVE_PARTICIPATION, PART_SCREENED_OUT, false, REP_EV_NONE, LEDGER_EV_NONE },
};

static void
test_every_pair(void **state)
{
	struct part_result	 r;
	size_t			 i;
	unsigned		 seen[PART__MAX][PART_EV__MAX] = { { 0 } };
	int			 s, e;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r.to = PART__MAX;
		assert_int_equal(part_transition(rows[i].from, rows[i].ev,
		    rows[i].code_ok, &r), rows[i].rc);
		assert_int_equal(r.to, rows[i].to);
		assert_int_equal(r.changed, rows[i].changed);
		assert_int_equal(r.rep, rows[i].rep);
		assert_int_equal(r.money, rows[i].money);
		seen[rows[i].from][rows[i].ev]++;
	}
	for (s = 0; s < PART__MAX; s++)
		for (e = 0; e < PART_EV__MAX; e++)
			assert_true(seen[s][e] >= 1);
}

static void
test_bad_args(void **state)
{
	struct part_result	 r;

	(void)state;
	assert_int_equal(part_transition(PART__MAX, PART_EV_OPEN, true, &r),
	    ARPS_E_INTERNAL);
	assert_int_equal(r.rep, REP_EV_NONE);
	assert_int_equal(part_transition(PART_ACCEPTED, PART_EV__MAX, true, &r),
	    ARPS_E_INTERNAL);
	assert_int_equal(part_transition(PART_ACCEPTED, PART_EV_OPEN, true, NULL),
	    ARPS_E_INTERNAL);
}

static void
test_predicates_names(void **state)
{
	static const struct {
		enum part_state	 s;
		const char	*name;
		bool		 active, slot, final;
	} srows[] = {
		{ PART_ACCEPTED, "accepted", true, true, false },
		{ PART_IN_PROGRESS, "in_progress", true, true, false },
		{ PART_SUBMITTED, "submitted", false, true, false },
		{ PART_APPROVED, "approved", false, true, true },
		{ PART_REJECTED, "rejected", false, true, true },
		{ PART_WITHDRAWN, "withdrawn", false, false, true },
		{ PART_TIMED_OUT, "timed_out", false, false, true },
		{ PART_SCREENED_OUT, "screened_out", false, false, true },
	};
	static const char *const evnames[PART_EV__MAX] = {
		"open", "complete", "withdraw", "timeout", "approve",
		"auto_approve", "reject", "screen_out",
	};
	enum part_state		 s;
	struct part_result	 r;
	size_t			 i;
	int			 e;

	(void)state;
	for (i = 0; i < sizeof(srows) / sizeof(srows[0]); i++) {
		assert_int_equal(part_is_active(srows[i].s), srows[i].active);
		assert_int_equal(part_occupies_slot(srows[i].s), srows[i].slot);
		assert_int_equal(part_is_final(srows[i].s), srows[i].final);
		assert_string_equal(part_state_name(srows[i].s), srows[i].name);
		assert_true(part_state_from_name(srows[i].name, &s));
		assert_int_equal(s, srows[i].s);
		/* a final state accepts no event */
		for (e = 0; srows[i].final && e < PART_EV__MAX; e++)
			assert_int_not_equal(part_transition(srows[i].s,
			    (enum part_event)e, true, &r), ARPS_OK);
	}
	assert_false(part_is_active(PART__MAX));
	assert_false(part_occupies_slot(PART__MAX));
	assert_false(part_is_final(PART__MAX));
	assert_null(part_state_name(PART__MAX));
	assert_false(part_state_from_name("timedout", &s));
	assert_false(part_state_from_name(NULL, &s));
	assert_true(part_state_from_name("accepted", NULL));
	for (e = 0; e < PART_EV__MAX; e++)
		assert_string_equal(part_event_name((enum part_event)e), evnames[e]);
	assert_null(part_event_name(PART_EV__MAX));
}

static void
test_due(void **state)
{
	static const struct {
		int64_t	 t, now;
		bool	 timeout, auto_approve;
	} rows2[] = {
		{ 1000, 1000, false, false },
		{ 1000, 1000 + 86399, false, false },
		{ 1000, 1000 + 86400, true, false },
		{ 1000, 1000 + 172799, true, false },
		{ 1000, 1000 + 172800, true, true },
		{ 1000, 0, false, false },
		{ INT64_MAX, INT64_MAX, false, false },
		{ INT64_MAX - 86400, INT64_MAX, true, false },
		{ INT64_MIN, 0, true, true },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows2) / sizeof(rows2[0]); i++) {
		assert_int_equal(part_timeout_due(rows2[i].t, rows2[i].now),
		    rows2[i].timeout);
		assert_int_equal(part_auto_approve_due(rows2[i].t, rows2[i].now),
		    rows2[i].auto_approve);
	}
}

/* Rejection categories (design.md §13): each name both ways, others refused. */
static void
test_reject_categories(void **state)
{
	static const struct {
		const char		*name;
		bool			 ok;
		enum part_reject_cat	 c;
	} crows[] = {
		{ "no_code", true, PART_CAT_NO_CODE },
		{ "failed_check", true, PART_CAT_FAILED_CHECK },
		{ "low_effort", true, PART_CAT_LOW_EFFORT },
		{ "incomplete", true, PART_CAT_INCOMPLETE },
		{ "other", true, PART_CAT_OTHER },
		{ "Other", false, PART_CAT__MAX },
		{ "", false, PART_CAT__MAX },
		{ "no_code ", false, PART_CAT__MAX },
		{ "spam", false, PART_CAT__MAX },
	};
	enum part_reject_cat	 c;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(crows) / sizeof(crows[0]); i++) {
		c = PART_CAT__MAX;
		assert_int_equal(part_reject_cat_from_name(crows[i].name, &c), crows[i].ok);
		assert_int_equal(c, crows[i].c);
		if (crows[i].ok)
			assert_string_equal(part_reject_cat_name(c), crows[i].name);
		assert_true(strlen(crows[i].name) < PART_CAT_BUFSZ);
	}
	assert_false(part_reject_cat_from_name(NULL, &c));
	assert_null(part_reject_cat_name(PART_CAT__MAX));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_reject_categories),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_predicates_names),
		cmocka_unit_test(test_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
