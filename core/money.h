/*
 * Money arithmetic in int64_t USD cents, every operation overflow-checked.
 * Returns ARPS_OK; ARPS_E_VALIDATION for a negative or out-of-range input;
 * ARPS_E_OVERFLOW when a result overflows int64 or exceeds the configured
 * per-study budget bound.  Outputs are written only on ARPS_OK (the
 * convention of core/: design.md §2.3, core/errors.h).
 */
#ifndef ARPS_CORE_MONEY_H
#define ARPS_CORE_MONEY_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"

#define MONEY_BPS_DEFAULT	1000	/* 10 % */
#define MONEY_BPS_MAX		10000	/* fee_bps accepted in 0..10000 */

/* The money side of one study, computed once at creation. */
struct money_study {
	int64_t	 reward;		/* per participant */
	int64_t	 fee;			/* per participant: ceil(reward*bps/10000) */
	int64_t	 slot_cost;		/* reward + fee */
	int64_t	 max_participants;
	int64_t	 total;			/* max_participants * slot_cost: frozen */
	int64_t	 fee_total;		/* max_participants * fee: informational */
};

/* *out = a + b; a, b any int64. */
enum arps_err	 money_add(int64_t a, int64_t b, int64_t *out);
/* *out = a - b; a, b any int64. */
enum arps_err	 money_sub(int64_t a, int64_t b, int64_t *out);
/* *out = a * b for a, b >= 0. */
enum arps_err	 money_mul(int64_t a, int64_t b, int64_t *out);
/* *fee = ceil(reward * fee_bps / 10000); reward >= 0, fee_bps 0..10000. */
enum arps_err	 money_fee(int64_t reward, int fee_bps, int64_t *fee);
/* *cost = reward + fee(reward). */
enum arps_err	 money_slot_cost(int64_t reward, int fee_bps, int64_t *cost);
/* Fill *out for a study; reward >= 0, max_participants >= 0, total must be
 * <= budget_max (>= 0), else ARPS_E_OVERFLOW. */
enum arps_err	 money_study_plan(int64_t reward, int64_t max_participants, int fee_bps,
	    int64_t budget_max, struct money_study *out);
/* Bonuses (design.md §13): the bounds of one row and of one batch. */
#define MONEY_BONUS_MIN		1
#define MONEY_BONUS_MAX		100000	/* cents a row */
#define MONEY_BONUS_ROWS	500	/* rows a batch */

/* A batch of bonuses: each row's fee ceil(amount * fee_bps / 10000) into
 * fees[i], and the sums.  amounts[i] in MONEY_BONUS_MIN..MONEY_BONUS_MAX,
 * n in 1..MONEY_BONUS_ROWS, fee_bps 0..10000, else ARPS_E_VALIDATION. */
struct money_bonus_sum {
	int64_t	 amount;		/* sum of the amounts: to the agents */
	int64_t	 fee;			/* sum of the fees: to platform:revenue */
	int64_t	 total;			/* amount + fee: from the researcher */
};
enum arps_err	 money_bonus_batch(const int64_t *amounts, size_t n, int fee_bps,
	    int64_t *fees, struct money_bonus_sum *out);
/* *out = unused * slot_cost: the refund of slots never taken. */
enum arps_err	 money_unused_refund(int64_t slot_cost, int64_t unused, int64_t *out);
/* *out = unsettled * slot_cost: what must still be frozen for the study. */
enum arps_err	 money_remainder(int64_t slot_cost, int64_t unsettled, int64_t *out);

#endif
