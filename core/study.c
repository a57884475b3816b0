/* Study transition table and accept preconditions (see study.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "errors.h"
#include "names.h"
#include "participation.h"
#include "reputation.h"
#include "study.h"

enum guard {
	GUARD_NONE,
	GUARD_FULL,	/* occupied >= max and none accepted/in_progress */
	GUARD_NOTHING_OPEN, /* none accepted, in_progress or submitted */
};

struct trans {
	bool			 ok;
	enum study_state	 to;
	enum guard		 guard;
	enum ledger_event	 money;
};

#define T(to_, g_, m_)	{ true, to_, g_, m_ }

/* Allowed rows; every zero row answers ARPS_E_INVALID_STATE. */
static const struct trans table[STUDY__MAX][STUDY_EV__MAX] = {
	[STUDY_ACTIVE] = {
		[STUDY_EV_PAUSE] =    T(STUDY_PAUSED, GUARD_NONE, LEDGER_EV_NONE),
		[STUDY_EV_STOP] =     T(STUDY_AWAITING_REVIEW, GUARD_NONE, LEDGER_EV_REFUND_UNUSED),
		[STUDY_EV_DEADLINE] = T(STUDY_AWAITING_REVIEW, GUARD_NONE, LEDGER_EV_REFUND_UNUSED),
		[STUDY_EV_FULL] =     T(STUDY_AWAITING_REVIEW, GUARD_FULL, LEDGER_EV_NONE),
	},
	[STUDY_PAUSED] = {
		[STUDY_EV_RESUME] =   T(STUDY_ACTIVE, GUARD_NONE, LEDGER_EV_NONE),
		[STUDY_EV_STOP] =     T(STUDY_AWAITING_REVIEW, GUARD_NONE, LEDGER_EV_REFUND_UNUSED),
		[STUDY_EV_DEADLINE] = T(STUDY_AWAITING_REVIEW, GUARD_NONE, LEDGER_EV_REFUND_UNUSED),
		[STUDY_EV_FULL] =     T(STUDY_AWAITING_REVIEW, GUARD_FULL, LEDGER_EV_NONE),
	},
	[STUDY_AWAITING_REVIEW] = {
		[STUDY_EV_COMPLETE] = T(STUDY_COMPLETED, GUARD_NOTHING_OPEN, LEDGER_EV_COMPLETE),
	},
};

static const char *const statenames[STUDY__MAX] = {
	[STUDY_ACTIVE] = "active",
	[STUDY_PAUSED] = "paused",
	[STUDY_AWAITING_REVIEW] = "awaiting_review",
	[STUDY_COMPLETED] = "completed",
};

static const char *const evnames[STUDY_EV__MAX] = {
	[STUDY_EV_PAUSE] = "pause",
	[STUDY_EV_RESUME] = "resume",
	[STUDY_EV_STOP] = "stop",
	[STUDY_EV_DEADLINE] = "deadline",
	[STUDY_EV_FULL] = "full",
	[STUDY_EV_COMPLETE] = "complete",
};

static const struct study_counts nocounts;

int64_t
study_occupied(const struct study_counts *c)
{
	if (c == NULL)
		return 0;
	return c->accepted + c->in_progress + c->submitted + c->approved +
	    c->rejected;
}

int64_t
study_open(const struct study_counts *c)
{
	if (c == NULL)
		return 0;
	return c->accepted + c->in_progress + c->submitted;
}

int64_t
study_spots_remaining(int64_t max_participants, const struct study_counts *c)
{
	int64_t	 occ = study_occupied(c);

	return occ >= max_participants ? 0 : max_participants - occ;
}

int64_t
study_unsettled(int64_t max_participants, const struct study_counts *c,
    int64_t refunded_unused)
{
	int64_t	 n = max_participants;

	if (c != NULL)
		n -= c->approved + c->rejected;
	n -= refunded_unused;
	return n < 0 ? 0 : n;
}

bool
study_deadline_passed(bool has_deadline, int64_t deadline, int64_t now)
{
	return has_deadline && now >= deadline;
}

enum arps_err
study_transition(enum study_state from, enum study_event ev,
    int64_t max_participants, const struct study_counts *c,
    struct study_result *out)
{
	const struct trans	*t;

	if (out == NULL)
		return ARPS_E_INTERNAL;
	out->to = from;
	out->money = LEDGER_EV_NONE;
	out->unused_slots = 0;
	if ((unsigned)from >= STUDY__MAX || (unsigned)ev >= STUDY_EV__MAX ||
	    max_participants < 0)
		return ARPS_E_INTERNAL;
	if (c == NULL)
		c = &nocounts;
	t = &table[from][ev];
	if (!t->ok)
		return ARPS_E_INVALID_STATE;
	switch (t->guard) {
	case GUARD_FULL:
		if (study_occupied(c) < max_participants ||
		    c->accepted + c->in_progress > 0)
			return ARPS_E_INVALID_STATE;
		break;
	case GUARD_NOTHING_OPEN:
		if (study_open(c) > 0)
			return ARPS_E_INVALID_STATE;
		break;
	default:
		break;
	}
	out->to = t->to;
	out->money = t->money;
	if (t->money == LEDGER_EV_REFUND_UNUSED) {
		out->unused_slots = study_spots_remaining(max_participants, c);
		if (out->unused_slots == 0)
			out->money = LEDGER_EV_NONE;
	}
	return ARPS_OK;
}

NAMES_AT_FN(study_state_name, enum study_state, NAMES_OF(statenames, STUDY__MAX))

NAMES_FIND_FN(study_state_from_name, enum study_state, NAMES_OF(statenames, STUDY__MAX))

NAMES_AT_FN(study_event_name, enum study_event, NAMES_OF(evnames, STUDY_EV__MAX))

/* One accept rule: true when it holds. */
typedef bool (*accept_rule)(const struct accept_facts *);

static bool
r_claimed(const struct accept_facts *f)
{
	return f->agent_claimed;
}

/* A researcher's own agent would be paid by its own study (issue 37). */
static bool
r_not_own_study(const struct accept_facts *f)
{
	return !f->own_study;
}

static bool
r_not_suspended(const struct accept_facts *f)
{
	return rep_may_take_part(f->agent_status_suspended, f->agent_reputation);
}

static bool
r_no_active(const struct accept_facts *f)
{
	return !f->has_active_participation;
}

static bool
r_not_participated(const struct accept_facts *f)
{
	return !f->already_participated;
}

static bool
r_study_active(const struct accept_facts *f)
{
	return f->study_state == STUDY_ACTIVE;
}

static bool
r_before_deadline(const struct accept_facts *f)
{
	return !study_deadline_passed(f->has_deadline, f->deadline, f->now);
}

static bool
r_free_slot(const struct accept_facts *f)
{
	return f->occupied < f->max_participants;
}

static const struct {
	accept_rule	 holds;
	enum arps_err	 err;
} accept_rules[] = {
	{ r_claimed,		ARPS_E_AGENT_NOT_CLAIMED },
	{ r_not_own_study,	ARPS_E_OWN_STUDY },
	{ r_not_suspended,	ARPS_E_AGENT_SUSPENDED },
	{ r_no_active,		ARPS_E_ACTIVE_PARTICIPATION },
	{ r_not_participated,	ARPS_E_ALREADY_PARTICIPATED },
	{ r_study_active,	ARPS_E_STUDY_NOT_ACTIVE },
	{ r_before_deadline,	ARPS_E_STUDY_NOT_ACTIVE },
	{ r_free_slot,		ARPS_E_STUDY_FULL },
};

enum arps_err
study_accept_check(const struct accept_facts *f)
{
	size_t	 i;

	if (f == NULL)
		return ARPS_E_INTERNAL;
	for (i = 0; i < sizeof(accept_rules) / sizeof(accept_rules[0]); i++)
		if (!accept_rules[i].holds(f))
			return accept_rules[i].err;
	return ARPS_OK;
}

/* --- who may take part (design.md §14) --- */

static const char *const codenames[CODE__MAX] = {
	[CODE_APPROVE] = "approve",
	[CODE_REVIEW] = "review",
	[CODE_REJECT] = "reject",
	[CODE_SCREEN_OUT] = "screen_out",
};

NAMES_AT_FN(code_action_name, enum code_action, NAMES_OF(codenames, CODE__MAX))

NAMES_FIND_FN(code_action_from_name, enum code_action, NAMES_OF(codenames, CODE__MAX))

bool
code_action_event(enum code_action a, int *part_event)
{
	switch (a) {
	case CODE_APPROVE:
		*part_event = PART_EV_APPROVE;
		return true;
	case CODE_REJECT:
		*part_event = PART_EV_REJECT;
		return true;
	case CODE_SCREEN_OUT:
		*part_event = PART_EV_SCREEN_OUT;
		return true;
	default:
		return false;
	}
}

static const struct {
	const char	*name;
	const char	*row;
} eligtab[ELIG__MAX] = {
	[ELIG_INCLUDE_GROUP] = { "include_groups", "include_group" },
	[ELIG_EXCLUDE_GROUP] = { "exclude_groups", "exclude_group" },
	[ELIG_EXCLUDE_STUDY] = { "exclude_studies", "exclude_study" },
};

NAMES_AT_FN(elig_kind_name, enum elig_kind, NAMES_FIELD(eligtab, ELIG__MAX, name))

NAMES_AT_FN(elig_kind_row, enum elig_kind, NAMES_FIELD(eligtab, ELIG__MAX, row))

NAMES_FIND_FN(elig_kind_from_row, enum elig_kind, NAMES_FIELD(eligtab, ELIG__MAX, row))

bool
elig_allows(int64_t n_include, int64_t in_include, int64_t in_exclude, int64_t took_excluded)
{
	if (n_include > 0 && in_include <= 0)
		return false;
	return in_exclude <= 0 && took_excluded <= 0;
}

enum arps_err
study_screen_out_event(int64_t reward, int64_t fee, int64_t amount, int64_t amount_fee,
    int64_t available, enum ledger_event *ev)
{
	if (ev == NULL)
		return ARPS_E_INTERNAL;
	if (reward < 0 || fee < 0 || amount < 0 || amount > reward || amount_fee < 0 ||
	    amount_fee > fee || available < 0)
		return ARPS_E_VALIDATION;
	/* available >= amount + amount_fee, without the sum's overflow */
	*ev = available - amount >= amount_fee ? LEDGER_EV_SCREEN_OUT :
	    LEDGER_EV_SCREEN_OUT_SHRINK;
	return ARPS_OK;
}
