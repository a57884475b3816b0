/*
 * Ledger posting rules (design.md §4).  For one money event,
 * ledger_build() writes into caller storage the balanced double-entry
 * postings between symbolic parties' sub-accounts and the typed,
 * user-visible transactions.  The db layer maps parties to wallet ids.
 * Posting amounts are signed balance changes (sum of an entry is 0);
 * transaction amounts are signed from the wallet's available balance.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_LEDGER_H
#define ARPS_CORE_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"

enum ledger_event {
	LEDGER_EV_NONE,		/* no money moves */
	LEDGER_EV_CREATE_STUDY,	/* freeze max * (reward + fee) */
	LEDGER_EV_APPROVE,	/* reward -> agent, fee -> platform:revenue */
	LEDGER_EV_REJECT,	/* reward + fee back to researcher */
	LEDGER_EV_REFUND_UNUSED, /* stop/deadline: unused slots back */
	LEDGER_EV_COMPLETE,	/* completed study: remainder unfrozen */
	LEDGER_EV_CLAIM_BONUS,	/* platform:bonus -> agent */
	LEDGER_EV_TOPUP,	/* external -> wallet (arps-admin) */
	LEDGER_EV_CASHOUT,	/* wallet -> external (arps-admin) */
	LEDGER_EV_BONUS,	/* researcher available: amount -> agent, fee -> revenue */
	LEDGER_EV_CASHOUT_REQUEST, /* wallet -> platform:cashouts (POST /wallet/cashouts) */
	LEDGER_EV_CASHOUT_PAID,	/* platform:cashouts -> external (cashout-paid) */
	LEDGER_EV_CASHOUT_REFUSE, /* platform:cashouts -> wallet (cashout-refuse) */
	/* A screen-out (design.md §14): amount (screen_out_cents) -> agent,
	 * amount_fee -> platform:revenue, paid out of the slot's frozen budget,
	 * and the freed slot funded again by freezing the same sum from the
	 * researcher's available balance (net: available -> agent and
	 * revenue; the study's frozen remainder unchanged).  Needs available
	 * >= amount + amount_fee, else ARPS_E_INSUFFICIENT_FUNDS. */
	LEDGER_EV_SCREEN_OUT,
	/* The same when the researcher's available balance cannot fund the
	 * freed slot again: the slot's whole budget (reward + fee) leaves the
	 * frozen balance, the payment and its fee as above, the rest back to
	 * the researcher as `refund`; the study has one place less. */
	LEDGER_EV_SCREEN_OUT_SHRINK,
	LEDGER_EV__MAX
};

enum ledger_party {
	LEDGER_P_RESEARCHER,	/* wallet of the study's owner account */
	LEDGER_P_AGENT,		/* wallet of the agent concerned */
	LEDGER_P_WALLET,	/* wallet named in an admin top-up/cash-out */
	LEDGER_P_PLATFORM_REVENUE, /* platform:revenue */
	LEDGER_P_PLATFORM_BONUS, /* platform:bonus */
	LEDGER_P_EXTERNAL,	/* external */
	LEDGER_P_PLATFORM_CASHOUTS, /* platform:cashouts: requested, not yet paid */
	LEDGER_P__MAX
};

enum ledger_sub {
	LEDGER_SUB_NONE,	/* platform accounts have no sub-account */
	LEDGER_SUB_AVAILABLE,
	LEDGER_SUB_FROZEN,
	LEDGER_SUB__MAX
};

enum ledger_txn_type {
	TXN_SIGNUP_BONUS,
	TXN_STUDY_FREEZE,
	TXN_PLATFORM_FEE,
	TXN_STUDY_UNFREEZE,
	TXN_EARNING,
	TXN_REFUND,
	TXN_MANUAL_TOPUP,
	TXN_EXTERNAL_CASHOUT,
	TXN_STUDY_PAYMENT,	/* researcher: an approval paid from the frozen
				   budget (informational for available) */
	TXN_CASHOUT_REQUEST,	/* available -> a cash-out request */
	TXN_CASHOUT_REFUND,	/* a refused cash-out back to available */
	TXN_BONUS_PAYMENT,
	TXN_BONUS,
	TXN__MAX
};

#define LEDGER_MAX_POSTINGS	4
#define LEDGER_MAX_TXNS		3

struct ledger_posting {
	enum ledger_party	 party;
	enum ledger_sub		 sub;
	int64_t			 amount;	/* signed change of that balance */
};

struct ledger_txn {
	enum ledger_txn_type	 type;
	enum ledger_party	 party;		/* whose wallet shows it */
	int64_t			 amount;	/* signed from available */
};

struct ledger_in {
	enum ledger_event	 ev;
	int64_t			 reward;	/* per participant (study events) */
	int64_t			 fee;		/* per participant (study events);
						   BONUS: the bonus's fee */
	int64_t			 slots;		/* CREATE: max_participants;
						   REFUND_UNUSED: unused slots */
	int64_t			 amount;	/* COMPLETE: frozen remainder;
						   CLAIM_BONUS, TOPUP, CASHOUT, BONUS */
	int64_t			 available;	/* CREATE, CASHOUT, BONUS,
						   CASHOUT_REQUEST, SCREEN_OUT: payer's
						   available balance now */
	int64_t			 amount_fee;	/* SCREEN_OUT(_SHRINK): the fee of
						   amount (<= fee, amount <= reward) */
};

struct ledger_entry {
	size_t			 nposting;
	struct ledger_posting	 posting[LEDGER_MAX_POSTINGS];
	size_t			 ntxn;
	struct ledger_txn	 txn[LEDGER_MAX_TXNS];
};

/* Fill *out for in->ev.  Zero amounts produce no posting and no
 * transaction (an empty entry, still ARPS_OK).  Returns ARPS_OK;
 * ARPS_E_INSUFFICIENT_SC (CREATE: available < total);
 * ARPS_E_INSUFFICIENT_FUNDS (CASHOUT, CASHOUT_REQUEST: available < amount;
 * BONUS: available < amount + fee);
 * ARPS_E_VALIDATION (negative input, CASHOUT/TOPUP/BONUS amount 0, bad event);
 * ARPS_E_OVERFLOW.  On error *out is an empty entry. */
enum arps_err	 ledger_build(const struct ledger_in *in, struct ledger_entry *out);
/* True when the postings sum to exactly 0 without overflow and every
 * party/sub pair is legal (wallet parties use AVAILABLE or FROZEN, platform
 * parties NONE). An empty entry is balanced. */
bool		 ledger_balanced(const struct ledger_entry *e);
/* *out = (reward + fee) * unsettled: the frozen remainder a study must
 * hold (unsettled = slots neither approved, rejected nor refunded unused;
 * 0 once completed).  Returns ARPS_OK, ARPS_E_VALIDATION, ARPS_E_OVERFLOW. */
enum arps_err	 ledger_expected_frozen(int64_t reward, int64_t fee,
		    int64_t unsettled, int64_t *out);

/* "signup_bonus", ... (the API `type`); NULL for an invalid type. */
const char	*ledger_txn_type_name(enum ledger_txn_type t);
/* Type from its API name (exact, case-sensitive); false if unknown. */
bool		 ledger_txn_type_from_name(const char *name, enum ledger_txn_type *t);
/* Default human description of a type ("Signup bonus", ...). */
const char	*ledger_txn_type_description(enum ledger_txn_type t);
/* "create_study", ... for logs; NULL for an invalid event. */
const char	*ledger_event_name(enum ledger_event ev);
/* "researcher", "agent", "wallet", "platform:revenue", "platform:bonus",
 * "external"; NULL for an invalid party. */
const char	*ledger_party_name(enum ledger_party p);
/* Whether a row of type t changes its wallet's available balance (false:
 * informational for it, as platform_fee and study_payment), and whether it
 * changes the wallet's total (available + frozen); false for an invalid t. */
bool		 ledger_txn_moves_available(enum ledger_txn_type t);
bool		 ledger_txn_moves_total(enum ledger_txn_type t);
/* True for parties that are user wallets (RESEARCHER, AGENT, WALLET). */
bool		 ledger_party_is_wallet(enum ledger_party p);

#endif
