/* Participation transition table (see participation.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "errors.h"
#include "names.h"
#include "participation.h"

struct trans {
	bool			 ok;	/* allowed */
	bool			 guard;	/* COMPLETE: code must match */
	enum part_state		 to;
	enum rep_event		 rep;
	enum ledger_event	 money;
};

#define T(to_, rep_, money_)	{ true, false, to_, rep_, money_ }
#define G(to_, rep_, money_)	{ true, true, to_, rep_, money_ }

/* Allowed rows; every zero row is refused with refuse[ev]. */
static const struct trans table[PART__MAX][PART_EV__MAX] = {
	[PART_ACCEPTED] = {
		[PART_EV_OPEN] =     T(PART_IN_PROGRESS, REP_EV_NONE, LEDGER_EV_NONE),
		[PART_EV_COMPLETE] = G(PART_SUBMITTED, REP_EV_NONE, LEDGER_EV_NONE),
		[PART_EV_WITHDRAW] = T(PART_WITHDRAWN, REP_EV_WITHDRAW, LEDGER_EV_NONE),
		[PART_EV_TIMEOUT] =  T(PART_TIMED_OUT, REP_EV_TIMEOUT, LEDGER_EV_NONE),
	},
	[PART_IN_PROGRESS] = {
		[PART_EV_OPEN] =     T(PART_IN_PROGRESS, REP_EV_NONE, LEDGER_EV_NONE),
		[PART_EV_COMPLETE] = G(PART_SUBMITTED, REP_EV_NONE, LEDGER_EV_NONE),
		[PART_EV_WITHDRAW] = T(PART_WITHDRAWN, REP_EV_WITHDRAW, LEDGER_EV_NONE),
		[PART_EV_TIMEOUT] =  T(PART_TIMED_OUT, REP_EV_TIMEOUT, LEDGER_EV_NONE),
	},
	[PART_SUBMITTED] = {
		[PART_EV_APPROVE] =      T(PART_APPROVED, REP_EV_APPROVE, LEDGER_EV_APPROVE),
		[PART_EV_AUTO_APPROVE] = T(PART_APPROVED, REP_EV_APPROVE, LEDGER_EV_APPROVE),
		[PART_EV_REJECT] =       T(PART_REJECTED, REP_EV_REJECT, LEDGER_EV_REJECT),
		/* reputation unchanged; the money is the screen-out payment
		 * (ledger.h: SCREEN_OUT, or SCREEN_OUT_SHRINK when the
		 * researcher cannot fund the freed slot again) */
		[PART_EV_SCREEN_OUT] =   T(PART_SCREENED_OUT, REP_EV_NONE, LEDGER_EV_SCREEN_OUT),
	},
};

static const enum arps_err refuse[PART_EV__MAX] = {
	[PART_EV_OPEN] =         ARPS_E_NO_ACTIVE_PARTICIPATION,
	[PART_EV_COMPLETE] =     ARPS_E_NO_ACTIVE_PARTICIPATION,
	[PART_EV_WITHDRAW] =     ARPS_E_NO_ACTIVE_PARTICIPATION,
	[PART_EV_TIMEOUT] =      ARPS_E_INVALID_STATE,
	[PART_EV_APPROVE] =      ARPS_E_INVALID_STATE,
	[PART_EV_AUTO_APPROVE] = ARPS_E_INVALID_STATE,
	[PART_EV_REJECT] =       ARPS_E_INVALID_STATE,
	[PART_EV_SCREEN_OUT] =   ARPS_E_INVALID_STATE,
};

static const struct {
	const char	*name;
	bool		 active;
	bool		 slot;
	bool		 final;
} statetab[PART__MAX] = {
	[PART_ACCEPTED] =    { "accepted",    true,  true,  false },
	[PART_IN_PROGRESS] = { "in_progress", true,  true,  false },
	[PART_SUBMITTED] =   { "submitted",   false, true,  false },
	[PART_APPROVED] =    { "approved",    false, true,  true },
	[PART_REJECTED] =    { "rejected",    false, true,  true },
	[PART_WITHDRAWN] =   { "withdrawn",   false, false, true },
	[PART_TIMED_OUT] =   { "timed_out",   false, false, true },
	[PART_SCREENED_OUT] = { "screened_out", false, false, true },
};

static const char *const evnames[PART_EV__MAX] = {
	[PART_EV_OPEN] = "open",
	[PART_EV_COMPLETE] = "complete",
	[PART_EV_WITHDRAW] = "withdraw",
	[PART_EV_TIMEOUT] = "timeout",
	[PART_EV_APPROVE] = "approve",
	[PART_EV_AUTO_APPROVE] = "auto_approve",
	[PART_EV_REJECT] = "reject",
	[PART_EV_SCREEN_OUT] = "screen_out",
};

enum arps_err
part_transition(enum part_state from, enum part_event ev, bool code_ok,
    struct part_result *out)
{
	const struct trans	*t;

	if (out == NULL)
		return ARPS_E_INTERNAL;
	out->to = from;
	out->changed = false;
	out->rep = REP_EV_NONE;
	out->money = LEDGER_EV_NONE;
	if ((unsigned)from >= PART__MAX || (unsigned)ev >= PART_EV__MAX)
		return ARPS_E_INTERNAL;
	t = &table[from][ev];
	if (!t->ok)
		return refuse[ev];
	if (t->guard && !code_ok) {
		out->rep = REP_EV_INVALID;
		return ARPS_E_INVALID_SUBMISSION;
	}
	out->to = t->to;
	out->changed = t->to != from;
	out->rep = t->rep;
	out->money = t->money;
	return ARPS_OK;
}

bool
part_is_active(enum part_state s)
{
	return (unsigned)s < PART__MAX && statetab[s].active;
}

bool
part_occupies_slot(enum part_state s)
{
	return (unsigned)s < PART__MAX && statetab[s].slot;
}

bool
part_is_final(enum part_state s)
{
	return (unsigned)s < PART__MAX && statetab[s].final;
}

NAMES_AT_FN(part_state_name, enum part_state, NAMES_FIELD(statetab, PART__MAX, name))

NAMES_FIND_FN(part_state_from_name, enum part_state, NAMES_FIELD(statetab, PART__MAX, name))

static const char *const catnames[PART_CAT__MAX] = {
	[PART_CAT_NO_CODE] = "no_code",
	[PART_CAT_FAILED_CHECK] = "failed_check",
	[PART_CAT_LOW_EFFORT] = "low_effort",
	[PART_CAT_INCOMPLETE] = "incomplete",
	[PART_CAT_OTHER] = "other",
};

NAMES_AT_FN(part_reject_cat_name, enum part_reject_cat, NAMES_OF(catnames, PART_CAT__MAX))

NAMES_FIND_FN(part_reject_cat_from_name, enum part_reject_cat, NAMES_OF(catnames, PART_CAT__MAX))

NAMES_AT_FN(part_event_name, enum part_event, NAMES_OF(evnames, PART_EV__MAX))

/* now >= t + delta without overflow. */
static bool
elapsed(int64_t t, int64_t delta, int64_t now)
{
	if (t > INT64_MAX - delta)
		return false;
	return now >= t + delta;
}

bool
part_timeout_due(int64_t accepted_at, int64_t now)
{
	return elapsed(accepted_at, PART_TIMEOUT_SECONDS, now);
}

bool
part_auto_approve_due(int64_t submitted_at, int64_t now)
{
	return elapsed(submitted_at, PART_AUTO_APPROVE_SECONDS, now);
}
