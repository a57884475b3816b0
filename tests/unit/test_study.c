/* Unit tests: core/study (every state x event pair, guards, accept rules). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/study.h"

/* Count fixtures for a study of 10 slots. */
enum fix { F_EMPTY, F_RUNNING, F_FULL_OPEN, F_FULL_DONE, F_FULL_SUBMITTED,
	F_DONE, F_OVER, F__MAX };
static const struct study_counts fixtures[F__MAX] = {
	/* accepted, in_progress, submitted, approved, rejected, withdrawn, timed_out */
	[F_EMPTY] =          { 0, 0, 0, 0, 0, 0, 0 },
	[F_RUNNING] =        { 1, 1, 1, 2, 1, 3, 1 },	/* occupied 6 */
	[F_FULL_OPEN] =      { 1, 0, 4, 4, 1, 2, 0 },	/* occupied 10, 1 active */
	[F_FULL_DONE] =      { 0, 0, 0, 8, 2, 1, 1 },	/* occupied 10, none open */
	[F_FULL_SUBMITTED] = { 0, 0, 3, 6, 1, 0, 0 },	/* occupied 10, 3 in review */
	[F_DONE] =           { 0, 0, 0, 3, 1, 1, 0 },	/* nothing open */
	[F_OVER] =           { 0, 0, 0, 11, 0, 0, 0 },	/* occupied > max */
};

#define S_A	STUDY_ACTIVE
#define S_P	STUDY_PAUSED
#define S_R	STUDY_AWAITING_REVIEW
#define S_C	STUDY_COMPLETED
#define NONE	LEDGER_EV_NONE
#define REF	LEDGER_EV_REFUND_UNUSED
#define CPL	LEDGER_EV_COMPLETE
#define BAD	ARPS_E_INVALID_STATE
#define OK	ARPS_OK

static const struct {
	enum study_state	 from;
	enum study_event	 ev;
	enum fix		 fix;
	int			 rc;
	enum study_state	 to;
	enum ledger_event	 money;
	int64_t			 unused;
} rows[] = {
	/* active */
	{ S_A, STUDY_EV_PAUSE, F_RUNNING, OK, S_P, NONE, 0 },
	{ S_A, STUDY_EV_RESUME, F_RUNNING, BAD, S_A, NONE, 0 },
	{ S_A, STUDY_EV_STOP, F_RUNNING, OK, S_R, REF, 4 },
	{ S_A, STUDY_EV_STOP, F_EMPTY, OK, S_R, REF, 10 },
	{ S_A, STUDY_EV_STOP, F_FULL_OPEN, OK, S_R, NONE, 0 },
	{ S_A, STUDY_EV_STOP, F_OVER, OK, S_R, NONE, 0 },
	{ S_A, STUDY_EV_DEADLINE, F_RUNNING, OK, S_R, REF, 4 },
	{ S_A, STUDY_EV_DEADLINE, F_FULL_DONE, OK, S_R, NONE, 0 },
	{ S_A, STUDY_EV_FULL, F_FULL_DONE, OK, S_R, NONE, 0 },
	{ S_A, STUDY_EV_FULL, F_FULL_SUBMITTED, OK, S_R, NONE, 0 },
	{ S_A, STUDY_EV_FULL, F_FULL_OPEN, BAD, S_A, NONE, 0 },
	{ S_A, STUDY_EV_FULL, F_RUNNING, BAD, S_A, NONE, 0 },
	{ S_A, STUDY_EV_FULL, F_DONE, BAD, S_A, NONE, 0 },
	{ S_A, STUDY_EV_COMPLETE, F_DONE, BAD, S_A, NONE, 0 },
	/* paused */
	{ S_P, STUDY_EV_PAUSE, F_RUNNING, BAD, S_P, NONE, 0 },
	{ S_P, STUDY_EV_RESUME, F_RUNNING, OK, S_A, NONE, 0 },
	{ S_P, STUDY_EV_STOP, F_RUNNING, OK, S_R, REF, 4 },
	{ S_P, STUDY_EV_STOP, F_FULL_DONE, OK, S_R, NONE, 0 },
	{ S_P, STUDY_EV_DEADLINE, F_EMPTY, OK, S_R, REF, 10 },
	{ S_P, STUDY_EV_FULL, F_FULL_DONE, OK, S_R, NONE, 0 },
	{ S_P, STUDY_EV_FULL, F_FULL_OPEN, BAD, S_P, NONE, 0 },
	{ S_P, STUDY_EV_COMPLETE, F_DONE, BAD, S_P, NONE, 0 },
	/* awaiting_review */
	{ S_R, STUDY_EV_PAUSE, F_DONE, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_RESUME, F_DONE, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_STOP, F_DONE, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_DEADLINE, F_DONE, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_FULL, F_FULL_DONE, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_COMPLETE, F_DONE, OK, S_C, CPL, 0 },
	{ S_R, STUDY_EV_COMPLETE, F_EMPTY, OK, S_C, CPL, 0 },
	{ S_R, STUDY_EV_COMPLETE, F_FULL_DONE, OK, S_C, CPL, 0 },
	{ S_R, STUDY_EV_COMPLETE, F_FULL_SUBMITTED, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_COMPLETE, F_RUNNING, BAD, S_R, NONE, 0 },
	{ S_R, STUDY_EV_COMPLETE, F_FULL_OPEN, BAD, S_R, NONE, 0 },
	/* completed: nothing */
	{ S_C, STUDY_EV_PAUSE, F_DONE, BAD, S_C, NONE, 0 },
	{ S_C, STUDY_EV_RESUME, F_DONE, BAD, S_C, NONE, 0 },
	{ S_C, STUDY_EV_STOP, F_DONE, BAD, S_C, NONE, 0 },
	{ S_C, STUDY_EV_DEADLINE, F_DONE, BAD, S_C, NONE, 0 },
	{ S_C, STUDY_EV_FULL, F_FULL_DONE, BAD, S_C, NONE, 0 },
	{ S_C, STUDY_EV_COMPLETE, F_DONE, BAD, S_C, NONE, 0 },
};

static void
test_every_pair(void **state)
{
	struct study_result	 r;
	unsigned		 seen[STUDY__MAX][STUDY_EV__MAX] = { { 0 } };
	size_t			 i;
	int			 s, e;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&r, 0x5a, sizeof(r));
		assert_int_equal(study_transition(rows[i].from, rows[i].ev, 10,
		    &fixtures[rows[i].fix], &r), rows[i].rc);
		assert_int_equal(r.to, rows[i].to);
		assert_int_equal(r.money, rows[i].money);
		assert_int_equal(r.unused_slots, rows[i].unused);
		seen[rows[i].from][rows[i].ev]++;
	}
	for (s = 0; s < STUDY__MAX; s++)
		for (e = 0; e < STUDY_EV__MAX; e++)
			assert_true(seen[s][e] >= 1);
}

static void
test_bad_args(void **state)
{
	struct study_result	 r;

	(void)state;
	assert_int_equal(study_transition(S_A, STUDY_EV_PAUSE, 10, NULL, &r), OK);
	assert_int_equal(r.to, S_P);
	assert_int_equal(study_transition(S_A, STUDY_EV_STOP, 3, NULL, &r), OK);
	assert_int_equal(r.unused_slots, 3);
	assert_int_equal(study_transition(STUDY__MAX, STUDY_EV_PAUSE, 10, NULL,
	    &r), ARPS_E_INTERNAL);
	assert_int_equal(study_transition(S_A, STUDY_EV__MAX, 10, NULL, &r),
	    ARPS_E_INTERNAL);
	assert_int_equal(study_transition(S_A, STUDY_EV_PAUSE, -1, NULL, &r),
	    ARPS_E_INTERNAL);
	assert_int_equal(study_transition(S_A, STUDY_EV_PAUSE, 10, NULL, NULL),
	    ARPS_E_INTERNAL);
}

static void
test_counts(void **state)
{
	static const struct {
		enum fix	 fix;
		int64_t		 occupied, open, spots, unsettled, unsettled_r;
	} crows[] = {
		/* unsettled: max 10, refunded_unused 0 and then spots */
		{ F_EMPTY, 0, 0, 10, 10, 0 },
		{ F_RUNNING, 6, 3, 4, 7, 3 },
		{ F_FULL_OPEN, 10, 5, 0, 5, 5 },
		{ F_FULL_DONE, 10, 0, 0, 0, 0 },
		{ F_DONE, 4, 0, 6, 6, 0 },
		{ F_OVER, 11, 0, 0, 0, 0 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(crows) / sizeof(crows[0]); i++) {
		const struct study_counts *c = &fixtures[crows[i].fix];

		assert_int_equal(study_occupied(c), crows[i].occupied);
		assert_int_equal(study_open(c), crows[i].open);
		assert_int_equal(study_spots_remaining(10, c), crows[i].spots);
		assert_int_equal(study_unsettled(10, c, 0), crows[i].unsettled);
		assert_int_equal(study_unsettled(10, c, crows[i].spots),
		    crows[i].unsettled_r);
	}
	assert_int_equal(study_occupied(NULL), 0);
	assert_int_equal(study_open(NULL), 0);
	assert_int_equal(study_spots_remaining(5, NULL), 5);
	assert_int_equal(study_unsettled(5, NULL, 2), 3);
}

static void
test_deadline_names(void **state)
{
	static const char *const snames[STUDY__MAX] = {
		"active", "paused", "awaiting_review", "completed",
	};
	static const char *const enames[STUDY_EV__MAX] = {
		"pause", "resume", "stop", "deadline", "full", "complete",
	};
	enum study_state	 s;
	int			 i;

	(void)state;
	assert_false(study_deadline_passed(false, 0, 100));
	assert_false(study_deadline_passed(true, 100, 99));
	assert_true(study_deadline_passed(true, 100, 100));
	assert_true(study_deadline_passed(true, 100, 101));
	for (i = 0; i < STUDY__MAX; i++) {
		assert_string_equal(study_state_name((enum study_state)i), snames[i]);
		assert_true(study_state_from_name(snames[i], &s));
		assert_int_equal(s, i);
	}
	assert_null(study_state_name(STUDY__MAX));
	assert_false(study_state_from_name("Active", &s));
	assert_false(study_state_from_name(NULL, &s));
	assert_true(study_state_from_name("paused", NULL));
	for (i = 0; i < STUDY_EV__MAX; i++)
		assert_string_equal(study_event_name((enum study_event)i), enames[i]);
	assert_null(study_event_name(STUDY_EV__MAX));
}

/* A fact set that passes; each row breaks some facts. */
static const struct accept_facts good = {
	true, false, 50, false, false, STUDY_ACTIVE, true, 2000, 1000, 10, 9, false,
};

enum brk {
	B_UNCLAIMED = 1 << 0, B_STATUS_SUSP = 1 << 1, B_REP29 = 1 << 2,
	B_ACTIVE = 1 << 3, B_PARTICIPATED = 1 << 4, B_PAUSED = 1 << 5,
	B_REVIEW = 1 << 6, B_COMPLETED = 1 << 7, B_DEADLINE = 1 << 8,
	B_FULL = 1 << 9, B_REP30 = 1 << 10, B_NODEADLINE = 1 << 11,
	B_REP0 = 1 << 12, B_DEADLINE_NOW = 1 << 13, B_OVERFULL = 1 << 14,
	B_OWN = 1 << 15,
};

static void
test_accept(void **state)
{
	static const struct {
		unsigned	 brk;
		int		 rc;
	} arows[] = {
		{ 0, ARPS_OK },
		{ B_REP30, ARPS_OK },
		{ B_NODEADLINE, ARPS_OK },
		{ B_UNCLAIMED, ARPS_E_AGENT_NOT_CLAIMED },
		{ B_UNCLAIMED | B_STATUS_SUSP | B_ACTIVE | B_FULL,
		    ARPS_E_AGENT_NOT_CLAIMED },
		{ B_OWN, ARPS_E_OWN_STUDY },
		{ B_OWN | B_STATUS_SUSP | B_ACTIVE | B_FULL, ARPS_E_OWN_STUDY },
		{ B_OWN | B_UNCLAIMED, ARPS_E_AGENT_NOT_CLAIMED },
		{ B_STATUS_SUSP, ARPS_E_AGENT_SUSPENDED },
		{ B_REP29, ARPS_E_AGENT_SUSPENDED },
		{ B_REP0, ARPS_E_AGENT_SUSPENDED },
		{ B_REP29 | B_ACTIVE | B_PAUSED, ARPS_E_AGENT_SUSPENDED },
		{ B_ACTIVE, ARPS_E_ACTIVE_PARTICIPATION },
		{ B_ACTIVE | B_PARTICIPATED | B_FULL, ARPS_E_ACTIVE_PARTICIPATION },
		{ B_PARTICIPATED, ARPS_E_ALREADY_PARTICIPATED },
		{ B_PARTICIPATED | B_PAUSED, ARPS_E_ALREADY_PARTICIPATED },
		{ B_PAUSED, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_REVIEW, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_COMPLETED, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_PAUSED | B_FULL, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_DEADLINE, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_DEADLINE_NOW, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_DEADLINE | B_FULL, ARPS_E_STUDY_NOT_ACTIVE },
		{ B_FULL, ARPS_E_STUDY_FULL },
		{ B_OVERFULL, ARPS_E_STUDY_FULL },
		{ B_FULL | B_NODEADLINE, ARPS_E_STUDY_FULL },
	};
	struct accept_facts	 f;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(arows) / sizeof(arows[0]); i++) {
		unsigned b = arows[i].brk;

		f = good;
		if (b & B_UNCLAIMED) f.agent_claimed = false;
		if (b & B_STATUS_SUSP) f.agent_status_suspended = true;
		if (b & B_REP29) f.agent_reputation = 29;
		if (b & B_REP30) f.agent_reputation = 30;
		if (b & B_REP0) f.agent_reputation = 0;
		if (b & B_ACTIVE) f.has_active_participation = true;
		if (b & B_PARTICIPATED) f.already_participated = true;
		if (b & B_PAUSED) f.study_state = STUDY_PAUSED;
		if (b & B_REVIEW) f.study_state = STUDY_AWAITING_REVIEW;
		if (b & B_COMPLETED) f.study_state = STUDY_COMPLETED;
		if (b & B_DEADLINE) f.now = 3000;
		if (b & B_DEADLINE_NOW) f.now = f.deadline;
		if (b & B_NODEADLINE) { f.has_deadline = false; f.now = 9999; }
		if (b & B_FULL) f.occupied = 10;
		if (b & B_OVERFULL) f.occupied = 12;
		if (b & B_OWN) f.own_study = true;
		assert_int_equal(study_accept_check(&f), arows[i].rc);
	}
	assert_int_equal(study_accept_check(NULL), ARPS_E_INTERNAL);
}

/* The reason codes render as the API's error_code strings and statuses. */
static void
test_error_mapping(void **state)
{
	static const struct {
		enum arps_err	 e;
		int		 status;
		const char	*code;
	} erows[] = {
		{ ARPS_OK, 200, "OK" },
		{ ARPS_E_AGENT_NOT_CLAIMED, 403, "AGENT_NOT_CLAIMED" },
		{ ARPS_E_AGENT_SUSPENDED, 403, "AGENT_SUSPENDED" },
		{ ARPS_E_ACTIVE_PARTICIPATION, 409, "ACTIVE_PARTICIPATION_EXISTS" },
		{ ARPS_E_ALREADY_PARTICIPATED, 409, "ALREADY_PARTICIPATED" },
		{ ARPS_E_STUDY_NOT_ACTIVE, 400, "STUDY_NOT_ACTIVE" },
		{ ARPS_E_STUDY_FULL, 409, "STUDY_FULL" },
		{ ARPS_E_INVALID_STATE, 409, "INVALID_STATE" },
		{ ARPS_E_NO_ACTIVE_PARTICIPATION, 409, "NO_ACTIVE_PARTICIPATION" },
		{ ARPS_E_INVALID_SUBMISSION, 422, "INVALID_SUBMISSION" },
		{ ARPS_E_CODE_REQUIRED, 422, "COMPLETION_CODE_REQUIRED" },
		{ ARPS_E_OWN_STUDY, 403, "OWN_STUDY" },
		{ ARPS_E_INSUFFICIENT_SC, 402, "INSUFFICIENT_SC" },
		{ ARPS_E_INSUFFICIENT_FUNDS, 402, "INSUFFICIENT_FUNDS" },
		{ ARPS_E_VALIDATION, 422, "VALIDATION_ERROR" },
		{ ARPS_E_OVERFLOW, 422, "VALIDATION_ERROR" },
		{ ARPS_ERR__MAX, 500, "INTERNAL_ERROR" },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(erows) / sizeof(erows[0]); i++) {
		assert_int_equal(arps_err_status(erows[i].e), erows[i].status);
		assert_string_equal(arps_err_code(erows[i].e), erows[i].code);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_deadline_names),
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_error_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
