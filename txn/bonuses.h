/*
 * Bonuses (design.md §13): one batch, all rows or none, in the caller's
 * transaction (req_tx).  Return convention of txn/ (txn/lifecycle.h):
 * enum db_rc for the database, the business outcome in *outcome.
 */
#ifndef ARPS_TXN_BONUSES_H
#define ARPS_TXN_BONUSES_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/money.h"
#include "db/bonuses.h"
#include "db/db.h"

/* One row of a batch: participant_id, amount and reason (NULL: none) in;
 * the rest filled on ARPS_OK. */
struct bonus_row {
	const char		*participant_id;
	int64_t			 amount;
	const char		*reason;
	struct db_bonus		 out;		/* id, fee, participation, agent, entry */
};

/*
 * Pay rows[0..n) of study_id for owner (n 1..MONEY_BONUS_ROWS; the
 * participant ids distinct, checked by the caller).  Locks the study row,
 * reads the participants, then locks the owner's wallet and the agents'
 * wallets in owner-id order, and books one LEDGER_EV_BONUS entry a row
 * (fee ceil(amount * fee_bps / 10000)), the bonus rows, the study's
 * bonus_cents, the agents' bonus.received and the owner's wallet.debited.
 * *outcome: ARPS_OK (*sum the batch's sums); ARPS_E_NOT_FOUND (no such
 * study of owner); ARPS_E_VALIDATION (*bad_row: not a participant of the
 * study); ARPS_E_INVALID_STATE (*bad_row: has not submitted);
 * ARPS_E_INSUFFICIENT_FUNDS (the available balance is short of
 * sum->total, which is set).  A refusal writes nothing.
 */
enum db_rc txn_bonus_pay(struct db *, const char *study_id, const char *owner, int fee_bps,
    struct bonus_row *rows, size_t n, int64_t now, struct money_bonus_sum *sum,
    size_t *bad_row, enum arps_err *outcome);

#endif
