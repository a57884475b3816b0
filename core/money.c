/* Checked cents arithmetic (see money.h). */
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "money.h"

enum arps_err
money_add(int64_t a, int64_t b, int64_t *out)
{
	if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
		return ARPS_E_OVERFLOW;
	*out = a + b;
	return ARPS_OK;
}

enum arps_err
money_sub(int64_t a, int64_t b, int64_t *out)
{
	if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
		return ARPS_E_OVERFLOW;
	*out = a - b;
	return ARPS_OK;
}

enum arps_err
money_mul(int64_t a, int64_t b, int64_t *out)
{
	if (a < 0 || b < 0)
		return ARPS_E_VALIDATION;
	if (a != 0 && b > INT64_MAX / a)
		return ARPS_E_OVERFLOW;
	*out = a * b;
	return ARPS_OK;
}

enum arps_err
money_fee(int64_t reward, int fee_bps, int64_t *fee)
{
	int64_t	 q, r;

	if (reward < 0 || fee_bps < 0 || fee_bps > MONEY_BPS_MAX)
		return ARPS_E_VALIDATION;
	/* ceil(reward * bps / 10000) without forming reward * bps. */
	q = reward / 10000;
	r = reward % 10000;
	q *= fee_bps;			/* <= reward: no overflow */
	q += (r * fee_bps + 9999) / 10000;	/* r * bps < 10^8 */
	*fee = q;
	return ARPS_OK;
}

enum arps_err
money_slot_cost(int64_t reward, int fee_bps, int64_t *cost)
{
	int64_t	 fee;
	enum arps_err	 rc;

	if ((rc = money_fee(reward, fee_bps, &fee)) != ARPS_OK)
		return rc;
	return money_add(reward, fee, cost);
}

enum arps_err
money_study_plan(int64_t reward, int64_t max_participants, int fee_bps,
    int64_t budget_max, struct money_study *out)
{
	struct money_study	 m;
	enum arps_err		 rc;

	if (max_participants < 0 || budget_max < 0)
		return ARPS_E_VALIDATION;
	m.reward = reward;
	m.max_participants = max_participants;
	if ((rc = money_fee(reward, fee_bps, &m.fee)) != ARPS_OK ||
	    (rc = money_add(reward, m.fee, &m.slot_cost)) != ARPS_OK ||
	    (rc = money_mul(max_participants, m.slot_cost, &m.total)) != ARPS_OK ||
	    (rc = money_mul(max_participants, m.fee, &m.fee_total)) != ARPS_OK)
		return rc;
	if (m.total > budget_max)
		return ARPS_E_OVERFLOW;
	*out = m;
	return ARPS_OK;
}

enum arps_err
money_unused_refund(int64_t slot_cost, int64_t unused, int64_t *out)
{
	return money_mul(unused, slot_cost, out);
}

enum arps_err
money_remainder(int64_t slot_cost, int64_t unsettled, int64_t *out)
{
	return money_mul(unsettled, slot_cost, out);
}

enum arps_err
money_bonus_batch(const int64_t *amounts, size_t n, int fee_bps, int64_t *fees,
    struct money_bonus_sum *out)
{
	struct money_bonus_sum	 m = { 0, 0, 0 };
	enum arps_err		 rc;
	size_t			 i;
	int64_t			 fee;

	if (amounts == NULL || fees == NULL || out == NULL || n < 1 || n > MONEY_BONUS_ROWS)
		return ARPS_E_VALIDATION;
	for (i = 0; i < n; i++) {
		if (amounts[i] < MONEY_BONUS_MIN || amounts[i] > MONEY_BONUS_MAX)
			return ARPS_E_VALIDATION;
		if ((rc = money_fee(amounts[i], fee_bps, &fee)) != ARPS_OK ||
		    (rc = money_add(m.amount, amounts[i], &m.amount)) != ARPS_OK ||
		    (rc = money_add(m.fee, fee, &m.fee)) != ARPS_OK)
			return rc;
		fees[i] = fee;
	}
	if ((rc = money_add(m.amount, m.fee, &m.total)) != ARPS_OK)
		return rc;
	*out = m;
	return ARPS_OK;
}
