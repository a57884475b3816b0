/* Unit tests: core/ledger (postings, transactions, balance, names). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/ledger.h"

#define R	LEDGER_P_RESEARCHER
#define A	LEDGER_P_AGENT
#define W	LEDGER_P_WALLET
#define REV	LEDGER_P_PLATFORM_REVENUE
#define BON	LEDGER_P_PLATFORM_BONUS
#define EXT	LEDGER_P_EXTERNAL
#define CSH	LEDGER_P_PLATFORM_CASHOUTS
#define AV	LEDGER_SUB_AVAILABLE
#define FR	LEDGER_SUB_FROZEN
#define NO	LEDGER_SUB_NONE
#define MAX	INT64_MAX

struct row {
	struct ledger_in	 in;
	int			 rc;
	size_t			 np;
	struct ledger_posting	 p[LEDGER_MAX_POSTINGS];
	size_t			 nt;
	struct ledger_txn	 t[LEDGER_MAX_TXNS];
};

/* reward 500, fee 50 (10 %), 10 slots unless stated. */
static const struct row build_rows[] = {
	/* create: freeze total, platform_fee informational */
	{ { LEDGER_EV_CREATE_STUDY, 500, 50, 10, 0, 5500, 0 }, ARPS_OK,
	  2, { { R, AV, -5500 }, { R, FR, 5500 } },
	  2, { { TXN_STUDY_FREEZE, R, -5500 }, { TXN_PLATFORM_FEE, R, -500 } } },
	{ { LEDGER_EV_CREATE_STUDY, 500, 50, 10, 0, 100000, 0 }, ARPS_OK,
	  2, { { R, AV, -5500 }, { R, FR, 5500 } },
	  2, { { TXN_STUDY_FREEZE, R, -5500 }, { TXN_PLATFORM_FEE, R, -500 } } },
	{ { LEDGER_EV_CREATE_STUDY, 500, 50, 10, 0, 5499, 0 }, ARPS_E_INSUFFICIENT_SC,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CREATE_STUDY, 500, 0, 2, 0, 1000, 0 }, ARPS_OK,
	  2, { { R, AV, -1000 }, { R, FR, 1000 } },
	  1, { { TXN_STUDY_FREEZE, R, -1000 } } },
	{ { LEDGER_EV_CREATE_STUDY, 1, 1, 1, 0, 2, 0 }, ARPS_OK,
	  2, { { R, AV, -2 }, { R, FR, 2 } },
	  2, { { TXN_STUDY_FREEZE, R, -2 }, { TXN_PLATFORM_FEE, R, -1 } } },
	{ { LEDGER_EV_CREATE_STUDY, MAX, 1, 1, 0, MAX, 0 }, ARPS_E_OVERFLOW,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CREATE_STUDY, MAX / 2, 0, 3, 0, MAX, 0 }, ARPS_E_OVERFLOW,
	  0, { { 0 } }, 0, { { 0 } } },
	/* approve: reward to agent, fee to revenue */
	{ { LEDGER_EV_APPROVE, 500, 50, 0, 0, 0, 0 }, ARPS_OK,
	  3, { { R, FR, -550 }, { A, AV, 500 }, { REV, NO, 50 } },
	  2, { { TXN_EARNING, A, 500 }, { TXN_STUDY_PAYMENT, R, -550 } } },
	{ { LEDGER_EV_APPROVE, 1, 0, 0, 0, 0, 0 }, ARPS_OK,
	  2, { { R, FR, -1 }, { A, AV, 1 } },
	  2, { { TXN_EARNING, A, 1 }, { TXN_STUDY_PAYMENT, R, -1 } } },
	{ { LEDGER_EV_APPROVE, MAX, 1, 0, 0, 0, 0 }, ARPS_E_OVERFLOW,
	  0, { { 0 } }, 0, { { 0 } } },
	/* reject: reward + fee back */
	{ { LEDGER_EV_REJECT, 500, 50, 0, 0, 0, 0 }, ARPS_OK,
	  2, { { R, FR, -550 }, { R, AV, 550 } },
	  1, { { TXN_REFUND, R, 550 } } },
	/* screen-out (design.md §14): 20 + fee 2 paid, the place funded again */
	{ { LEDGER_EV_SCREEN_OUT, 500, 50, 0, 20, 22, 2 }, ARPS_OK,
	  3, { { R, AV, -22 }, { A, AV, 20 }, { REV, NO, 2 } },
	  3, { { TXN_EARNING, A, 20 }, { TXN_STUDY_PAYMENT, R, -22 },
	       { TXN_STUDY_FREEZE, R, -22 } } },
	{ { LEDGER_EV_SCREEN_OUT, 500, 50, 0, 20, 21, 2 }, ARPS_E_INSUFFICIENT_FUNDS,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_SCREEN_OUT, 500, 50, 0, 501, 1000, 2 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	/* not funded again: the place's budget settles, the rest refunded */
	{ { LEDGER_EV_SCREEN_OUT_SHRINK, 500, 50, 0, 20, 0, 2 }, ARPS_OK,
	  4, { { R, FR, -550 }, { A, AV, 20 }, { REV, NO, 2 }, { R, AV, 528 } },
	  3, { { TXN_EARNING, A, 20 }, { TXN_STUDY_PAYMENT, R, -22 },
	       { TXN_REFUND, R, 528 } } },
	{ { LEDGER_EV_SCREEN_OUT_SHRINK, 500, 50, 0, 0, 0, 0 }, ARPS_OK,
	  2, { { R, FR, -550 }, { R, AV, 550 } },
	  1, { { TXN_REFUND, R, 550 } } },
	{ { LEDGER_EV_SCREEN_OUT_SHRINK, 500, 50, 0, 20, 0, 51 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	/* unused-slot refund */
	{ { LEDGER_EV_REFUND_UNUSED, 500, 50, 7, 0, 0, 0 }, ARPS_OK,
	  2, { { R, FR, -3850 }, { R, AV, 3850 } },
	  1, { { TXN_REFUND, R, 3850 } } },
	{ { LEDGER_EV_REFUND_UNUSED, 500, 50, 0, 0, 0, 0 }, ARPS_OK,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_REFUND_UNUSED, MAX / 2, 1, 2, 0, 0, 0 }, ARPS_E_OVERFLOW,
	  0, { { 0 } }, 0, { { 0 } } },
	/* complete: remainder unfrozen */
	{ { LEDGER_EV_COMPLETE, 500, 50, 0, 1100, 0, 0 }, ARPS_OK,
	  2, { { R, FR, -1100 }, { R, AV, 1100 } },
	  1, { { TXN_STUDY_UNFREEZE, R, 1100 } } },
	{ { LEDGER_EV_COMPLETE, 500, 50, 0, 0, 0, 0 }, ARPS_OK,
	  0, { { 0 } }, 0, { { 0 } } },
	/* claim bonus */
	{ { LEDGER_EV_CLAIM_BONUS, 0, 0, 0, 100, 0, 0 }, ARPS_OK,
	  2, { { BON, NO, -100 }, { A, AV, 100 } },
	  1, { { TXN_SIGNUP_BONUS, A, 100 } } },
	{ { LEDGER_EV_CLAIM_BONUS, 0, 0, 0, 0, 0, 0 }, ARPS_OK,
	  0, { { 0 } }, 0, { { 0 } } },
	/* admin top-up and cash-out */
	{ { LEDGER_EV_TOPUP, 0, 0, 0, 2500, 0, 0 }, ARPS_OK,
	  2, { { EXT, NO, -2500 }, { W, AV, 2500 } },
	  1, { { TXN_MANUAL_TOPUP, W, 2500 } } },
	{ { LEDGER_EV_TOPUP, 0, 0, 0, MAX, 0, 0 }, ARPS_OK,
	  2, { { EXT, NO, -MAX }, { W, AV, MAX } },
	  1, { { TXN_MANUAL_TOPUP, W, MAX } } },
	{ { LEDGER_EV_TOPUP, 0, 0, 0, 0, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CASHOUT, 0, 0, 0, 700, 700, 0 }, ARPS_OK,
	  2, { { W, AV, -700 }, { EXT, NO, 700 } },
	  1, { { TXN_EXTERNAL_CASHOUT, W, -700 } } },
	{ { LEDGER_EV_CASHOUT, 0, 0, 0, 701, 700, 0 }, ARPS_E_INSUFFICIENT_FUNDS,
	  0, { { 0 } }, 0, { { 0 } } },
	/* cash-out requests: held in platform:cashouts, then paid or returned */
	{ { LEDGER_EV_CASHOUT_REQUEST, 0, 0, 0, 700, 700, 0 }, ARPS_OK,
	  2, { { W, AV, -700 }, { CSH, NO, 700 } },
	  1, { { TXN_CASHOUT_REQUEST, W, -700 } } },
	{ { LEDGER_EV_CASHOUT_REQUEST, 0, 0, 0, 701, 700, 0 }, ARPS_E_INSUFFICIENT_FUNDS,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CASHOUT_REQUEST, 0, 0, 0, 0, 700, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CASHOUT_PAID, 0, 0, 0, 700, 0, 0 }, ARPS_OK,
	  2, { { CSH, NO, -700 }, { EXT, NO, 700 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CASHOUT_REFUSE, 0, 0, 0, 700, 0, 0 }, ARPS_OK,
	  2, { { CSH, NO, -700 }, { W, AV, 700 } },
	  1, { { TXN_CASHOUT_REFUND, W, 700 } } },
	{ { LEDGER_EV_CASHOUT_REFUSE, 0, 0, 0, 0, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CASHOUT, 0, 0, 0, 0, 700, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	/* bonus (design.md §13): amount + fee from available */
	{ { LEDGER_EV_BONUS, 0, 50, 0, 500, 550, 0 }, ARPS_OK,
	  3, { { R, AV, -550 }, { A, AV, 500 }, { REV, NO, 50 } },
	  3, { { TXN_BONUS_PAYMENT, R, -550 }, { TXN_PLATFORM_FEE, R, -50 },
	       { TXN_BONUS, A, 500 } } },
	{ { LEDGER_EV_BONUS, 0, 0, 0, 1, 1, 0 }, ARPS_OK,
	  2, { { R, AV, -1 }, { A, AV, 1 } },
	  2, { { TXN_BONUS_PAYMENT, R, -1 }, { TXN_BONUS, A, 1 } } },
	{ { LEDGER_EV_BONUS, 0, 50, 0, 500, 549, 0 }, ARPS_E_INSUFFICIENT_FUNDS,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_BONUS, 0, 50, 0, 0, 1000, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_BONUS, 0, 1, 0, MAX, MAX, 0 }, ARPS_E_OVERFLOW,
	  0, { { 0 } }, 0, { { 0 } } },
	/* nothing */
	{ { LEDGER_EV_NONE, 500, 50, 3, 9, 9, 0 }, ARPS_OK,
	  0, { { 0 } }, 0, { { 0 } } },
	/* bad inputs */
	{ { LEDGER_EV__MAX, 0, 0, 0, 0, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_APPROVE, -1, 0, 0, 0, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_APPROVE, 1, -1, 0, 0, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_REFUND_UNUSED, 1, 1, -1, 0, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_TOPUP, 0, 0, 0, -1, 0, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
	{ { LEDGER_EV_CASHOUT, 0, 0, 0, 1, -1, 0 }, ARPS_E_VALIDATION,
	  0, { { 0 } }, 0, { { 0 } } },
};

static void
test_build_rows(void **state)
{
	struct ledger_entry	 e;
	size_t			 i, j;

	(void)state;
	for (i = 0; i < sizeof(build_rows) / sizeof(build_rows[0]); i++) {
		memset(&e, 0x5a, sizeof(e));
		assert_int_equal(ledger_build(&build_rows[i].in, &e), build_rows[i].rc);
		/* every outcome, success or refusal, is balanced */
		assert_true(ledger_balanced(&e));
		assert_int_equal(e.nposting, build_rows[i].np);
		assert_int_equal(e.ntxn, build_rows[i].nt);
		for (j = 0; j < e.nposting; j++) {
			assert_int_equal(e.posting[j].party, build_rows[i].p[j].party);
			assert_int_equal(e.posting[j].sub, build_rows[i].p[j].sub);
			assert_int_equal(e.posting[j].amount, build_rows[i].p[j].amount);
		}
		for (j = 0; j < e.ntxn; j++) {
			assert_int_equal(e.txn[j].type, build_rows[i].t[j].type);
			assert_int_equal(e.txn[j].party, build_rows[i].t[j].party);
			assert_int_equal(e.txn[j].amount, build_rows[i].t[j].amount);
		}
	}
	assert_int_equal(ledger_build(&build_rows[0].in, NULL), ARPS_E_INTERNAL);
	assert_int_equal(ledger_build(NULL, &e), ARPS_E_VALIDATION);
}

/*
 * A study's whole life: wallets end where the rules say, every entry
 * balances, the per-study invariant holds after each step.
 */
static void
test_study_life(void **state)
{
	enum { RA, RF, AA, REVB, N };
	static const struct {
		struct ledger_in	 in;
		int64_t			 unsettled;	/* after the step */
	} steps[] = {
		{ { LEDGER_EV_CREATE_STUDY, 500, 50, 4, 0, 10000, 0 }, 4 },
		{ { LEDGER_EV_APPROVE, 500, 50, 0, 0, 0, 0 }, 3 },
		{ { LEDGER_EV_REJECT, 500, 50, 0, 0, 0, 0 }, 2 },
		{ { LEDGER_EV_REFUND_UNUSED, 500, 50, 1, 0, 0, 0 }, 1 },
		{ { LEDGER_EV_APPROVE, 500, 50, 0, 0, 0, 0 }, 0 },
		{ { LEDGER_EV_COMPLETE, 500, 50, 0, 0, 0, 0 }, 0 },
	};
	int64_t			 bal[N] = { 10000, 0, 0, 0 }, want;
	int64_t			 rows_av = 10000, rows_total = 10000; /* a top-up row before */
	struct ledger_entry	 e;
	size_t			 i, j;

	(void)state;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		assert_int_equal(ledger_build(&steps[i].in, &e), ARPS_OK);
		assert_true(ledger_balanced(&e));
		/* the researcher's rows reconcile its balances (issue 37) */
		for (j = 0; j < e.ntxn; j++)
			if (e.txn[j].party == R) {
				if (ledger_txn_moves_available(e.txn[j].type))
					rows_av += e.txn[j].amount;
				if (ledger_txn_moves_total(e.txn[j].type))
					rows_total += e.txn[j].amount;
			}
		for (j = 0; j < e.nposting; j++) {
			const struct ledger_posting *p = &e.posting[j];

			if (p->party == R)
				bal[p->sub == AV ? RA : RF] += p->amount;
			else if (p->party == A)
				bal[AA] += p->amount;
			else
				bal[REVB] += p->amount;
		}
		assert_int_equal(ledger_expected_frozen(500, 50,
		    steps[i].unsettled, &want), ARPS_OK);
		assert_int_equal(bal[RF], want);
		assert_int_equal(rows_av, bal[RA]);
		assert_int_equal(rows_total, bal[RA] + bal[RF]);
	}
	assert_int_equal(bal[RA], 10000 - 2 * 550);
	assert_int_equal(bal[RF], 0);
	assert_int_equal(bal[AA], 1000);
	assert_int_equal(bal[REVB], 100);
}

static void
test_balanced_checker(void **state)
{
	static const struct {
		size_t			 np;
		struct ledger_posting	 p[LEDGER_MAX_POSTINGS];
		bool			 ok;
	} rows[] = {
		{ 0, { { 0 } }, true },
		{ 2, { { R, AV, -5 }, { R, FR, 5 } }, true },
		{ 2, { { R, AV, -5 }, { R, FR, 4 } }, false },
		{ 1, { { R, AV, 1 } }, false },
		{ 3, { { EXT, NO, MAX }, { BON, NO, MAX }, { A, AV, -MAX } }, false },
		{ 3, { { A, AV, MAX }, { A, FR, -MAX }, { W, AV, 0 } }, true },
		{ 4, { { A, AV, MAX }, { W, AV, 1 }, { EXT, NO, -MAX },
		    { EXT, NO, -1 } }, false },	/* partial sum overflows */
		{ 2, { { R, NO, -5 }, { R, FR, 5 } }, false },
		{ 2, { { EXT, AV, -5 }, { R, FR, 5 } }, false },
		{ 2, { { LEDGER_P__MAX, NO, -5 }, { R, FR, 5 } }, false },
		{ 2, { { R, LEDGER_SUB__MAX, -5 }, { R, FR, 5 } }, false },
		{ 5, { { 0 } }, false },
	};
	struct ledger_entry	 e;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&e, 0, sizeof(e));
		e.nposting = rows[i].np;
		if (rows[i].np <= LEDGER_MAX_POSTINGS)
			memcpy(e.posting, rows[i].p, sizeof(e.posting));
		assert_int_equal(ledger_balanced(&e), rows[i].ok);
	}
	assert_false(ledger_balanced(NULL));
}

static void
test_expected_frozen(void **state)
{
	static const struct {
		int64_t	 reward, fee, n;
		int	 rc;
		int64_t	 out;
	} rows[] = {
		{ 500, 50, 0, ARPS_OK, 0 },
		{ 500, 50, 1, ARPS_OK, 550 },
		{ 500, 50, 10, ARPS_OK, 5500 },
		{ 1, 1, 10000, ARPS_OK, 20000 },
		{ MAX, 0, 1, ARPS_OK, MAX },
		{ MAX, 1, 1, ARPS_E_OVERFLOW, 0 },
		{ MAX / 2, 0, 3, ARPS_E_OVERFLOW, 0 },
		{ -1, 0, 1, ARPS_E_VALIDATION, 0 },
		{ 1, -1, 1, ARPS_E_VALIDATION, 0 },
		{ 1, 0, -1, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 out;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(ledger_expected_frozen(rows[i].reward,
		    rows[i].fee, rows[i].n, &out), rows[i].rc);
		if (rows[i].rc == ARPS_OK)
			assert_int_equal(out, rows[i].out);
	}
}

static void
test_names(void **state)
{
	static const char *const types[TXN__MAX] = {
		"signup_bonus", "study_freeze", "platform_fee", "study_unfreeze",
		"earning", "refund", "manual_topup", "external_cashout", "study_payment",
		"cashout_request", "cashout_refund", "bonus_payment", "bonus",
	};
	static const char *const bad[] = {
		"", "Earning", "earning ", "payout", "cashout", "stripe_cashout",
	};
	static const char *const events[LEDGER_EV__MAX] = {
		"none", "create_study", "approve", "reject", "refund_unused",
		"complete", "claim_bonus", "topup", "cashout", "bonus", "cashout_request",
		"cashout_paid", "cashout_refuse", "screen_out", "screen_out_shrink",
	};
	static const struct {
		const char	*name;
		bool		 wallet;
	} parties[LEDGER_P__MAX] = {
		{ "researcher", true }, { "agent", true }, { "wallet", true },
		{ "platform:revenue", false }, { "platform:bonus", false },
		{ "external", false }, { "platform:cashouts", false },
	};
	enum ledger_txn_type	 t;
	size_t			 i;

	(void)state;
	for (i = 0; i < TXN__MAX; i++) {
		assert_string_equal(ledger_txn_type_name((enum ledger_txn_type)i),
		    types[i]);
		assert_true(ledger_txn_type_from_name(types[i], &t));
		assert_int_equal(t, i);
		assert_non_null(ledger_txn_type_description((enum ledger_txn_type)i));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(ledger_txn_type_from_name(bad[i], &t));
	assert_false(ledger_txn_type_from_name(NULL, &t));
	assert_true(ledger_txn_type_from_name("refund", NULL));
	assert_null(ledger_txn_type_name(TXN__MAX));
	assert_null(ledger_txn_type_description(TXN__MAX));
	for (i = 0; i < LEDGER_EV__MAX; i++)
		assert_string_equal(ledger_event_name((enum ledger_event)i),
		    events[i]);
	assert_null(ledger_event_name(LEDGER_EV__MAX));
	for (i = 0; i < LEDGER_P__MAX; i++) {
		assert_string_equal(ledger_party_name((enum ledger_party)i),
		    parties[i].name);
		assert_int_equal(ledger_party_is_wallet((enum ledger_party)i),
		    parties[i].wallet);
	}
	assert_null(ledger_party_name(LEDGER_P__MAX));
	assert_false(ledger_party_is_wallet(LEDGER_P__MAX));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_rows),
		cmocka_unit_test(test_study_life),
		cmocka_unit_test(test_balanced_checker),
		cmocka_unit_test(test_expected_frozen),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
