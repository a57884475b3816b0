/* Unit tests: core/money (checked cents arithmetic). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/money.h"

#define MAX	INT64_MAX
#define MIN	INT64_MIN

static void
test_fee(void **state)
{
	static const struct {
		int64_t	 reward;
		int	 bps;
		int	 rc;
		int64_t	 fee;
	} rows[] = {
		{ 0, 1000, ARPS_OK, 0 },
		{ 1, 1000, ARPS_OK, 1 },
		{ 9, 1000, ARPS_OK, 1 },
		{ 10, 1000, ARPS_OK, 1 },
		{ 11, 1000, ARPS_OK, 2 },
		{ 20, 1000, ARPS_OK, 2 },
		{ 21, 1000, ARPS_OK, 3 },
		{ 100, 1000, ARPS_OK, 10 },
		{ 500, 1000, ARPS_OK, 50 },
		{ 1000000, 1000, ARPS_OK, 100000 },
		{ 1, 0, ARPS_OK, 0 },
		{ 12345, 0, ARPS_OK, 0 },
		{ 1, 1, ARPS_OK, 1 },
		{ 10000, 1, ARPS_OK, 1 },
		{ 10001, 1, ARPS_OK, 2 },
		{ 7, 10000, ARPS_OK, 7 },
		{ 3, 3333, ARPS_OK, 1 },
		{ 10000, 250, ARPS_OK, 250 },
		{ 10001, 250, ARPS_OK, 251 },
		/* no overflow even where reward * bps would overflow */
		{ MAX, 1000, ARPS_OK, MAX / 10 + 1 },
		{ MAX, 10000, ARPS_OK, MAX },
		{ MAX / 1000 + 1, 10000, ARPS_OK, MAX / 1000 + 1 },
		{ -1, 1000, ARPS_E_VALIDATION, 0 },
		{ MIN, 1000, ARPS_E_VALIDATION, 0 },
		{ 10, -1, ARPS_E_VALIDATION, 0 },
		{ 10, 10001, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 fee;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fee = -42;
		assert_int_equal(money_fee(rows[i].reward, rows[i].bps, &fee),
		    rows[i].rc);
		if (rows[i].rc == ARPS_OK)
			assert_int_equal(fee, rows[i].fee);
		else
			assert_int_equal(fee, -42);
	}
}

static void
test_arith(void **state)
{
	enum { ADD, SUB, MUL };
	static const struct {
		int	 op;
		int64_t	 a, b;
		int	 rc;
		int64_t	 r;
	} rows[] = {
		{ ADD, 0, 0, ARPS_OK, 0 },
		{ ADD, 1, 1, ARPS_OK, 2 },
		{ ADD, MAX, 0, ARPS_OK, MAX },
		{ ADD, MAX - 1, 1, ARPS_OK, MAX },
		{ ADD, MAX, 1, ARPS_E_OVERFLOW, 0 },
		{ ADD, 1, MAX, ARPS_E_OVERFLOW, 0 },
		{ ADD, MIN, -1, ARPS_E_OVERFLOW, 0 },
		{ ADD, MIN, MAX, ARPS_OK, -1 },
		{ ADD, -5, 3, ARPS_OK, -2 },
		{ SUB, 0, 0, ARPS_OK, 0 },
		{ SUB, 5, 3, ARPS_OK, 2 },
		{ SUB, 3, 5, ARPS_OK, -2 },
		{ SUB, MIN, 1, ARPS_E_OVERFLOW, 0 },
		{ SUB, MAX, -1, ARPS_E_OVERFLOW, 0 },
		{ SUB, 0, MIN, ARPS_E_OVERFLOW, 0 },
		{ SUB, -1, MIN, ARPS_OK, MAX },
		{ SUB, MAX, MAX, ARPS_OK, 0 },
		{ MUL, 0, 0, ARPS_OK, 0 },
		{ MUL, 0, MAX, ARPS_OK, 0 },
		{ MUL, MAX, 0, ARPS_OK, 0 },
		{ MUL, 1, MAX, ARPS_OK, MAX },
		{ MUL, MAX, 1, ARPS_OK, MAX },
		{ MUL, 2, MAX / 2, ARPS_OK, MAX - 1 },
		{ MUL, 2, MAX / 2 + 1, ARPS_E_OVERFLOW, 0 },
		{ MUL, 3037000500, 3037000500, ARPS_E_OVERFLOW, 0 },
		{ MUL, 3037000499, 3037000499, ARPS_OK, 9223372030926249001 },
		{ MUL, -1, 5, ARPS_E_VALIDATION, 0 },
		{ MUL, 5, -1, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 r;
	int	 rc;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r = 77;
		rc = rows[i].op == ADD ? money_add(rows[i].a, rows[i].b, &r) :
		    rows[i].op == SUB ? money_sub(rows[i].a, rows[i].b, &r) :
		    money_mul(rows[i].a, rows[i].b, &r);
		assert_int_equal(rc, rows[i].rc);
		assert_int_equal(r, rows[i].rc == ARPS_OK ? rows[i].r : 77);
	}
}

static void
test_slot_cost(void **state)
{
	static const struct {
		int64_t	 reward;
		int	 bps;
		int	 rc;
		int64_t	 cost;
	} rows[] = {
		{ 0, 1000, ARPS_OK, 0 },
		{ 1, 1000, ARPS_OK, 2 },
		{ 10, 1000, ARPS_OK, 11 },
		{ 11, 1000, ARPS_OK, 13 },
		{ 500, 1000, ARPS_OK, 550 },
		{ MAX, 0, ARPS_OK, MAX },
		{ MAX, 1, ARPS_E_OVERFLOW, 0 },
		{ MAX / 2, 10000, ARPS_OK, MAX - 1 },
		{ MAX / 2 + 1, 10000, ARPS_E_OVERFLOW, 0 },
		{ -1, 1000, ARPS_E_VALIDATION, 0 },
		{ 5, 20000, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 c;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(money_slot_cost(rows[i].reward, rows[i].bps, &c),
		    rows[i].rc);
		if (rows[i].rc == ARPS_OK)
			assert_int_equal(c, rows[i].cost);
	}
}

#define BOUND	INT64_C(100000000000)	/* 1e11 cents */

static void
test_study_plan(void **state)
{
	static const struct {
		int64_t	 reward, max;
		int	 bps;
		int64_t	 bound;
		int	 rc;
		int64_t	 fee, slot, total, fee_total;
	} rows[] = {
		{ 500, 10, 1000, BOUND, ARPS_OK, 50, 550, 5500, 500 },
		{ 1, 1, 1000, BOUND, ARPS_OK, 1, 2, 2, 1 },
		{ 11, 3, 1000, BOUND, ARPS_OK, 2, 13, 39, 6 },
		{ 0, 0, 1000, BOUND, ARPS_OK, 0, 0, 0, 0 },
		{ 100, 0, 1000, BOUND, ARPS_OK, 10, 110, 0, 0 },
		{ 0, 100, 1000, 0, ARPS_OK, 0, 0, 0, 0 },
		{ 1000000, 10000, 1000, BOUND, ARPS_OK, 100000, 1100000,
		    11000000000, 1000000000 },
		/* exactly at the bound, and one cent over */
		{ 10, 10, 1000, 110, ARPS_OK, 1, 11, 110, 10 },
		{ 10, 10, 1000, 109, ARPS_E_OVERFLOW, 0, 0, 0, 0 },
		{ 100, 1, 0, 100, ARPS_OK, 0, 100, 100, 0 },
		{ 100, 1, 0, 99, ARPS_E_OVERFLOW, 0, 0, 0, 0 },
		/* int64 product overflow */
		{ MAX / 2, 3, 0, MAX, ARPS_E_OVERFLOW, 0, 0, 0, 0 },
		{ 3037000499, 3037000499, 0, MAX, ARPS_OK, 0, 3037000499,
		    9223372030926249001, 0 },
		{ 3037000500, 3037000500, 0, MAX, ARPS_E_OVERFLOW, 0, 0, 0, 0 },
		{ MAX, 1, 1000, MAX, ARPS_E_OVERFLOW, 0, 0, 0, 0 },
		{ 1, MAX, 1000, MAX, ARPS_E_OVERFLOW, 0, 0, 0, 0 },
		{ -1, 1, 1000, BOUND, ARPS_E_VALIDATION, 0, 0, 0, 0 },
		{ 1, -1, 1000, BOUND, ARPS_E_VALIDATION, 0, 0, 0, 0 },
		{ 1, 1, 1000, -1, ARPS_E_VALIDATION, 0, 0, 0, 0 },
		{ 1, 1, -5, BOUND, ARPS_E_VALIDATION, 0, 0, 0, 0 },
	};
	struct money_study	 m;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		m.total = -9;
		assert_int_equal(money_study_plan(rows[i].reward, rows[i].max,
		    rows[i].bps, rows[i].bound, &m), rows[i].rc);
		if (rows[i].rc != ARPS_OK) {
			assert_int_equal(m.total, -9);
			continue;
		}
		assert_int_equal(m.reward, rows[i].reward);
		assert_int_equal(m.max_participants, rows[i].max);
		assert_int_equal(m.fee, rows[i].fee);
		assert_int_equal(m.slot_cost, rows[i].slot);
		assert_int_equal(m.total, rows[i].total);
		assert_int_equal(m.fee_total, rows[i].fee_total);
	}
}

static void
test_refund_remainder(void **state)
{
	static const struct {
		int64_t	 slot, n;
		int	 rc;
		int64_t	 r;
	} rows[] = {
		{ 550, 0, ARPS_OK, 0 },
		{ 550, 1, ARPS_OK, 550 },
		{ 550, 7, ARPS_OK, 3850 },
		{ 0, 7, ARPS_OK, 0 },
		{ MAX, 1, ARPS_OK, MAX },
		{ MAX, 2, ARPS_E_OVERFLOW, 0 },
		{ 550, -1, ARPS_E_VALIDATION, 0 },
		{ -550, 1, ARPS_E_VALIDATION, 0 },
	};
	size_t	 i;
	int64_t	 r;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(money_unused_refund(rows[i].slot, rows[i].n, &r),
		    rows[i].rc);
		if (rows[i].rc == ARPS_OK)
			assert_int_equal(r, rows[i].r);
		assert_int_equal(money_remainder(rows[i].slot, rows[i].n, &r),
		    rows[i].rc);
		if (rows[i].rc == ARPS_OK)
			assert_int_equal(r, rows[i].r);
	}
}

/* Bonus batches (design.md §13): a fee per row, rounded up, and sums. */
static void
test_bonus_batch(void **state)
{
	static const struct {
		int64_t			 amounts[4];
		size_t			 n;
		int			 bps;
		int			 rc;
		int64_t			 fees[4];
		int64_t			 amount, fee, total;
	} brows[] = {
		{ { 500, 1, 99, 100000 }, 4, 1000, ARPS_OK, { 50, 1, 10, 10000 },
		  100600, 10061, 110661 },
		{ { 1 }, 1, 0, ARPS_OK, { 0 }, 1, 0, 1 },
		{ { 1 }, 1, 1, ARPS_OK, { 1 }, 1, 1, 2 },
		{ { 100000 }, 1, 10000, ARPS_OK, { 100000 }, 100000, 100000, 200000 },
		{ { 0 }, 1, 1000, ARPS_E_VALIDATION, { 0 }, 0, 0, 0 },
		{ { 100001 }, 1, 1000, ARPS_E_VALIDATION, { 0 }, 0, 0, 0 },
		{ { -5 }, 1, 1000, ARPS_E_VALIDATION, { 0 }, 0, 0, 0 },
		{ { 10, 0 }, 2, 1000, ARPS_E_VALIDATION, { 0 }, 0, 0, 0 },
		{ { 10 }, 0, 1000, ARPS_E_VALIDATION, { 0 }, 0, 0, 0 },
		{ { 10 }, 1, 10001, ARPS_E_VALIDATION, { 0 }, 0, 0, 0 },
	};
	struct money_bonus_sum	 m;
	int64_t			 fees[4], big[MONEY_BONUS_ROWS + 1], bigfees[MONEY_BONUS_ROWS + 1];
	size_t			 i, j;

	(void)state;
	for (i = 0; i < sizeof(brows) / sizeof(brows[0]); i++) {
		memset(&m, 0, sizeof m);
		assert_int_equal(money_bonus_batch(brows[i].amounts, brows[i].n, brows[i].bps, fees,
		    &m), brows[i].rc);
		if (brows[i].rc != ARPS_OK)
			continue;
		for (j = 0; j < brows[i].n; j++)
			assert_int_equal(fees[j], brows[i].fees[j]);
		assert_int_equal(m.amount, brows[i].amount);
		assert_int_equal(m.fee, brows[i].fee);
		assert_int_equal(m.total, brows[i].total);
	}
	/* 500 rows of the largest bonus: no overflow; 501 rows: refused */
	for (i = 0; i < MONEY_BONUS_ROWS + 1; i++)
		big[i] = MONEY_BONUS_MAX;
	assert_int_equal(money_bonus_batch(big, MONEY_BONUS_ROWS, 1000, bigfees, &m), ARPS_OK);
	assert_int_equal(m.amount, (int64_t)MONEY_BONUS_ROWS * MONEY_BONUS_MAX);
	assert_int_equal(m.total, (int64_t)MONEY_BONUS_ROWS * (MONEY_BONUS_MAX + 10000));
	assert_int_equal(money_bonus_batch(big, MONEY_BONUS_ROWS + 1, 1000, bigfees, &m),
	    ARPS_E_VALIDATION);
	assert_int_equal(money_bonus_batch(NULL, 1, 1000, bigfees, &m), ARPS_E_VALIDATION);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fee),
		cmocka_unit_test(test_arith),
		cmocka_unit_test(test_slot_cost),
		cmocka_unit_test(test_study_plan),
		cmocka_unit_test(test_refund_remainder),
		cmocka_unit_test(test_bonus_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
