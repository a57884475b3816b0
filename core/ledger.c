/* Ledger posting rules as one table (see ledger.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "errors.h"
#include "ledger.h"
#include "names.h"
#include "money.h"

/* Which amount a template row moves. */
enum amt {
	AMT_REWARD,	/* reward */
	AMT_FEE,	/* fee */
	AMT_SLOT,	/* reward + fee */
	AMT_TOTAL,	/* slots * (reward + fee) */
	AMT_FEE_TOTAL,	/* slots * fee */
	AMT_AMOUNT,	/* in->amount */
	AMT_AMOUNT_FEE,	/* in->amount + in->fee */
	AMT_SCREEN_FEE,	/* in->amount_fee */
	AMT_AMOUNT_TOTAL, /* amount + amount_fee */
	AMT_SLOT_REST,	/* reward + fee - amount - amount_fee */
};

enum check {
	CHK_NONE,
	CHK_SC,		/* available >= TOTAL else INSUFFICIENT_SC */
	CHK_FUNDS,	/* amount > 0, available >= amount else INSUFFICIENT_FUNDS */
	CHK_POSITIVE,	/* amount > 0 */
	CHK_FUNDS_FEE,	/* amount > 0, available >= amount + fee else INSUFFICIENT_FUNDS */
	CHK_SCREEN,	/* amount <= reward, amount_fee <= fee */
	CHK_SCREEN_AV,	/* CHK_SCREEN, available >= amount + amount_fee else
			   INSUFFICIENT_FUNDS */
};

struct prow {
	enum ledger_party	 party;
	enum ledger_sub		 sub;
	int			 sign;
	enum amt		 amt;
};

struct trow {
	enum ledger_txn_type	 type;
	enum ledger_party	 party;
	int			 sign;
	enum amt		 amt;
};

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

static const struct {
	const char	*name;
	enum check	 check;
	size_t		 np, nt;
	struct prow	 p[LEDGER_MAX_POSTINGS];
	struct trow	 t[LEDGER_MAX_TXNS];
} rules[LEDGER_EV__MAX] = {
	[LEDGER_EV_NONE] = { "none", CHK_NONE, 0, 0, { { 0 } }, { { 0 } } },
	[LEDGER_EV_CREATE_STUDY] = { "create_study", CHK_SC, 2, 2,
	    { { R, AV, -1, AMT_TOTAL }, { R, FR, +1, AMT_TOTAL } },
	    { { TXN_STUDY_FREEZE, R, -1, AMT_TOTAL },
	      { TXN_PLATFORM_FEE, R, -1, AMT_FEE_TOTAL } } },
	[LEDGER_EV_APPROVE] = { "approve", CHK_NONE, 3, 2,
	    { { R, FR, -1, AMT_SLOT }, { A, AV, +1, AMT_REWARD },
	      { REV, NO, +1, AMT_FEE } },
	    { { TXN_EARNING, A, +1, AMT_REWARD },
	      { TXN_STUDY_PAYMENT, R, -1, AMT_SLOT } } },
	[LEDGER_EV_REJECT] = { "reject", CHK_NONE, 2, 1,
	    { { R, FR, -1, AMT_SLOT }, { R, AV, +1, AMT_SLOT } },
	    { { TXN_REFUND, R, +1, AMT_SLOT } } },
	[LEDGER_EV_REFUND_UNUSED] = { "refund_unused", CHK_NONE, 2, 1,
	    { { R, FR, -1, AMT_TOTAL }, { R, AV, +1, AMT_TOTAL } },
	    { { TXN_REFUND, R, +1, AMT_TOTAL } } },
	[LEDGER_EV_COMPLETE] = { "complete", CHK_NONE, 2, 1,
	    { { R, FR, -1, AMT_AMOUNT }, { R, AV, +1, AMT_AMOUNT } },
	    { { TXN_STUDY_UNFREEZE, R, +1, AMT_AMOUNT } } },
	[LEDGER_EV_CLAIM_BONUS] = { "claim_bonus", CHK_NONE, 2, 1,
	    { { BON, NO, -1, AMT_AMOUNT }, { A, AV, +1, AMT_AMOUNT } },
	    { { TXN_SIGNUP_BONUS, A, +1, AMT_AMOUNT } } },
	[LEDGER_EV_TOPUP] = { "topup", CHK_POSITIVE, 2, 1,
	    { { EXT, NO, -1, AMT_AMOUNT }, { W, AV, +1, AMT_AMOUNT } },
	    { { TXN_MANUAL_TOPUP, W, +1, AMT_AMOUNT } } },
	[LEDGER_EV_CASHOUT] = { "cashout", CHK_FUNDS, 2, 1,
	    { { W, AV, -1, AMT_AMOUNT }, { EXT, NO, +1, AMT_AMOUNT } },
	    { { TXN_EXTERNAL_CASHOUT, W, -1, AMT_AMOUNT } } },
	/* platform_fee states the fee share of bonus_payment; it moves nothing */
	[LEDGER_EV_BONUS] = { "bonus", CHK_FUNDS_FEE, 3, 3,
	    { { R, AV, -1, AMT_AMOUNT_FEE }, { A, AV, +1, AMT_AMOUNT },
	      { REV, NO, +1, AMT_FEE } },
	    { { TXN_BONUS_PAYMENT, R, -1, AMT_AMOUNT_FEE },
	      { TXN_PLATFORM_FEE, R, -1, AMT_FEE },
	      { TXN_BONUS, A, +1, AMT_AMOUNT } } },
	/* a cash-out request holds the money as a platform liability until
	 * the operator pays it outside or refuses it (design.md §4.2) */
	[LEDGER_EV_CASHOUT_REQUEST] = { "cashout_request", CHK_FUNDS, 2, 1,
	    { { W, AV, -1, AMT_AMOUNT }, { CSH, NO, +1, AMT_AMOUNT } },
	    { { TXN_CASHOUT_REQUEST, W, -1, AMT_AMOUNT } } },
	[LEDGER_EV_CASHOUT_PAID] = { "cashout_paid", CHK_POSITIVE, 2, 0,
	    { { CSH, NO, -1, AMT_AMOUNT }, { EXT, NO, +1, AMT_AMOUNT } }, { { 0 } } },
	[LEDGER_EV_CASHOUT_REFUSE] = { "cashout_refuse", CHK_POSITIVE, 2, 1,
	    { { CSH, NO, -1, AMT_AMOUNT }, { W, AV, +1, AMT_AMOUNT } },
	    { { TXN_CASHOUT_REFUND, W, +1, AMT_AMOUNT } } },
	/* the slot's frozen budget pays, the same sum is frozen again from
	 * available: the two frozen postings cancel and are not written */
	[LEDGER_EV_SCREEN_OUT] = { "screen_out", CHK_SCREEN_AV, 3, 3,
	    { { R, AV, -1, AMT_AMOUNT_TOTAL }, { A, AV, +1, AMT_AMOUNT },
	      { REV, NO, +1, AMT_SCREEN_FEE } },
	    { { TXN_EARNING, A, +1, AMT_AMOUNT },
	      { TXN_STUDY_PAYMENT, R, -1, AMT_AMOUNT_TOTAL },
	      { TXN_STUDY_FREEZE, R, -1, AMT_AMOUNT_TOTAL } } },
	[LEDGER_EV_SCREEN_OUT_SHRINK] = { "screen_out_shrink", CHK_SCREEN, 4, 3,
	    { { R, FR, -1, AMT_SLOT }, { A, AV, +1, AMT_AMOUNT },
	      { REV, NO, +1, AMT_SCREEN_FEE }, { R, AV, +1, AMT_SLOT_REST } },
	    { { TXN_EARNING, A, +1, AMT_AMOUNT },
	      { TXN_STUDY_PAYMENT, R, -1, AMT_AMOUNT_TOTAL },
	      { TXN_REFUND, R, +1, AMT_SLOT_REST } } },
};

/* avail: the row's amount is a change of the wallet's available balance;
 * total: of its total (available + frozen).  So a wallet reconciles:
 * available = the sum of its avail rows, total = the sum of its total rows
 * (docs/api.md §9). */
static const struct {
	const char	*name;
	const char	*desc;
	bool		 avail, total;
} txntab[TXN__MAX] = {
	[TXN_SIGNUP_BONUS] =     { "signup_bonus",     "Signup bonus", true, true },
	[TXN_STUDY_FREEZE] =     { "study_freeze",     "Study budget frozen", true, false },
	[TXN_PLATFORM_FEE] =     { "platform_fee",     "Platform fee share of the frozen budget",
	    false, false },
	[TXN_STUDY_UNFREEZE] =   { "study_unfreeze",   "Remaining study budget returned", true, false },
	[TXN_EARNING] =          { "earning",          "Reward for an approved submission", true, true },
	[TXN_REFUND] =           { "refund",           "Refund", true, false },
	[TXN_MANUAL_TOPUP] =     { "manual_topup",     "Top-up by an administrator", true, true },
	[TXN_EXTERNAL_CASHOUT] = { "external_cashout", "Cash-out to an external provider", true, true },
	[TXN_STUDY_PAYMENT] =    { "study_payment",    "Reward and fee paid from the frozen budget",
	    false, true },
	[TXN_CASHOUT_REQUEST] =  { "cashout_request",  "Cash-out requested", true, true },
	[TXN_CASHOUT_REFUND] =   { "cashout_refund",   "Refused cash-out returned", true, true },
	[TXN_BONUS_PAYMENT] =    { "bonus_payment",    "Bonus paid to a participant (amount + fee)",
	    true, true },
	[TXN_BONUS] =            { "bonus",            "Bonus from a researcher", true, true },
};

static const struct {
	const char	*name;
	bool		 wallet;
} partytab[LEDGER_P__MAX] = {
	[LEDGER_P_RESEARCHER] =       { "researcher",       true },
	[LEDGER_P_AGENT] =            { "agent",            true },
	[LEDGER_P_WALLET] =           { "wallet",           true },
	[LEDGER_P_PLATFORM_REVENUE] = { "platform:revenue", false },
	[LEDGER_P_PLATFORM_BONUS] =   { "platform:bonus",   false },
	[LEDGER_P_EXTERNAL] =         { "external",         false },
	[LEDGER_P_PLATFORM_CASHOUTS] = { "platform:cashouts", false },
};

static enum arps_err
amount_of(enum amt a, const struct ledger_in *in, int64_t *v)
{
	int64_t	 slot;
	enum arps_err	 rc;

	switch (a) {
	case AMT_REWARD:
		*v = in->reward;
		return ARPS_OK;
	case AMT_FEE:
		*v = in->fee;
		return ARPS_OK;
	case AMT_FEE_TOTAL:
		return money_mul(in->slots, in->fee, v);
	case AMT_AMOUNT:
		*v = in->amount;
		return ARPS_OK;
	case AMT_AMOUNT_FEE:
		return money_add(in->amount, in->fee, v);
	case AMT_SCREEN_FEE:
		*v = in->amount_fee;
		return ARPS_OK;
	case AMT_AMOUNT_TOTAL:
		return money_add(in->amount, in->amount_fee, v);
	default:
		break;
	}
	if ((rc = money_add(in->reward, in->fee, &slot)) != ARPS_OK)
		return rc;
	if (a == AMT_SLOT) {
		*v = slot;
		return ARPS_OK;
	}
	if (a == AMT_SLOT_REST) {
		int64_t paid;

		if ((rc = money_add(in->amount, in->amount_fee, &paid)) != ARPS_OK)
			return rc;
		return money_sub(slot, paid, v);
	}
	return money_mul(in->slots, slot, v);
}

enum arps_err
ledger_build(const struct ledger_in *in, struct ledger_entry *out)
{
	struct ledger_entry	 e;
	int64_t			 v, total;
	size_t			 i;
	enum arps_err		 rc;

	if (out == NULL)
		return ARPS_E_INTERNAL;
	memset(out, 0, sizeof(*out));
	if (in == NULL || (unsigned)in->ev >= LEDGER_EV__MAX)
		return ARPS_E_VALIDATION;
	if (in->reward < 0 || in->fee < 0 || in->slots < 0 || in->amount < 0 ||
	    in->available < 0 || in->amount_fee < 0)
		return ARPS_E_VALIDATION;
	memset(&e, 0, sizeof(e));

	switch (rules[in->ev].check) {
	case CHK_SC:
		if ((rc = amount_of(AMT_TOTAL, in, &total)) != ARPS_OK)
			return rc;
		if (in->available < total)
			return ARPS_E_INSUFFICIENT_SC;
		break;
	case CHK_FUNDS:
		if (in->amount == 0)
			return ARPS_E_VALIDATION;
		if (in->available < in->amount)
			return ARPS_E_INSUFFICIENT_FUNDS;
		break;
	case CHK_POSITIVE:
		if (in->amount == 0)
			return ARPS_E_VALIDATION;
		break;
	case CHK_FUNDS_FEE:
		if (in->amount == 0)
			return ARPS_E_VALIDATION;
		if ((rc = money_add(in->amount, in->fee, &total)) != ARPS_OK)
			return rc;
		if (in->available < total)
			return ARPS_E_INSUFFICIENT_FUNDS;
		break;
	case CHK_SCREEN:
	case CHK_SCREEN_AV:
		if (in->amount > in->reward || in->amount_fee > in->fee)
			return ARPS_E_VALIDATION;
		if (rules[in->ev].check == CHK_SCREEN_AV &&
		    in->available - in->amount < in->amount_fee)
			return ARPS_E_INSUFFICIENT_FUNDS;
		break;
	default:
		break;
	}

	for (i = 0; i < rules[in->ev].np; i++) {
		if ((rc = amount_of(rules[in->ev].p[i].amt, in, &v)) != ARPS_OK)
			return rc;
		if (v == 0)
			continue;
		e.posting[e.nposting].party = rules[in->ev].p[i].party;
		e.posting[e.nposting].sub = rules[in->ev].p[i].sub;
		e.posting[e.nposting].amount = rules[in->ev].p[i].sign * v;
		e.nposting++;
	}
	for (i = 0; i < rules[in->ev].nt; i++) {
		if ((rc = amount_of(rules[in->ev].t[i].amt, in, &v)) != ARPS_OK)
			return rc;
		if (v == 0)
			continue;
		e.txn[e.ntxn].type = rules[in->ev].t[i].type;
		e.txn[e.ntxn].party = rules[in->ev].t[i].party;
		e.txn[e.ntxn].amount = rules[in->ev].t[i].sign * v;
		e.ntxn++;
	}
	if (!ledger_balanced(&e))
		return ARPS_E_INTERNAL;
	*out = e;
	return ARPS_OK;
}

bool
ledger_balanced(const struct ledger_entry *e)
{
	const struct ledger_posting	*p;
	int64_t				 sum = 0;
	size_t				 i;

	if (e == NULL || e->nposting > LEDGER_MAX_POSTINGS)
		return false;
	for (i = 0; i < e->nposting; i++) {
		p = &e->posting[i];
		if ((unsigned)p->party >= LEDGER_P__MAX ||
		    (unsigned)p->sub >= LEDGER_SUB__MAX)
			return false;
		if (partytab[p->party].wallet != (p->sub != LEDGER_SUB_NONE))
			return false;
		if (money_add(sum, p->amount, &sum) != ARPS_OK)
			return false;
	}
	return sum == 0;
}

enum arps_err
ledger_expected_frozen(int64_t reward, int64_t fee, int64_t unsettled,
    int64_t *out)
{
	int64_t	 slot;
	enum arps_err	 rc;

	if (reward < 0 || fee < 0 || unsettled < 0)
		return ARPS_E_VALIDATION;
	if ((rc = money_add(reward, fee, &slot)) != ARPS_OK)
		return rc;
	return money_mul(unsettled, slot, out);
}

NAMES_AT_FN(ledger_txn_type_name, enum ledger_txn_type, NAMES_FIELD(txntab, TXN__MAX, name))

NAMES_FIND_FN(ledger_txn_type_from_name, enum ledger_txn_type, NAMES_FIELD(txntab, TXN__MAX, name))

NAMES_AT_FN(ledger_txn_type_description, enum ledger_txn_type, NAMES_FIELD(txntab, TXN__MAX, desc))

NAMES_AT_FN(ledger_event_name, enum ledger_event, NAMES_FIELD(rules, LEDGER_EV__MAX, name))

NAMES_AT_FN(ledger_party_name, enum ledger_party, NAMES_FIELD(partytab, LEDGER_P__MAX, name))

bool
ledger_txn_moves_available(enum ledger_txn_type t)
{
	return (unsigned)t < TXN__MAX && txntab[t].avail;
}

bool
ledger_txn_moves_total(enum ledger_txn_type t)
{
	return (unsigned)t < TXN__MAX && txntab[t].total;
}

bool
ledger_party_is_wallet(enum ledger_party p)
{
	return (unsigned)p < LEDGER_P__MAX && partytab[p].wallet;
}
