/* Reputation rules as tables (see reputation.h). */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "errors.h"
#include "names.h"
#include "reputation.h"

enum streak_op { STREAK_KEEP, STREAK_INC, STREAK_RESET };

static const struct {
	const char	*name;
	int		 delta;
	enum streak_op	 streak;
} evtab[REP_EV__MAX] = {
	[REP_EV_NONE] =     { "none",     0,           STREAK_KEEP },
	[REP_EV_APPROVE] =  { "approve",  REP_APPROVE, STREAK_INC },
	[REP_EV_REJECT] =   { "reject",   REP_REJECT,  STREAK_RESET },
	[REP_EV_TIMEOUT] =  { "timeout",  REP_TIMEOUT, STREAK_RESET },
	[REP_EV_INVALID] =  { "invalid",  REP_INVALID, STREAK_RESET },
	[REP_EV_WITHDRAW] = { "withdraw", 0,           STREAK_KEEP },
};

static const struct {
	const char	*name;
	int		 min;	/* lowest score of the tier */
} tiertab[REP_TIER__MAX] = {
	[REP_TIER_SUSPENDED] = { "suspended", 0 },
	[REP_TIER_BASIC] =     { "basic",     30 },
	[REP_TIER_STANDARD] =  { "standard",  50 },
	[REP_TIER_PRIORITY] =  { "priority",  80 },
};

int
rep_clamp(int score)
{
	return score < REP_MIN ? REP_MIN : score > REP_MAX ? REP_MAX : score;
}

int
rep_delta(enum rep_event ev, int streak)
{
	int	 d;

	if ((unsigned)ev >= REP_EV__MAX)
		return 0;
	d = evtab[ev].delta;
	if (evtab[ev].streak == STREAK_INC) {
		if (streak < 0)
			streak = 0;
		if (streak % REP_STREAK_LEN == REP_STREAK_LEN - 1)
			d += REP_STREAK_BONUS;
	}
	return d;
}

enum arps_err
rep_apply(struct rep_state *st, enum rep_event ev, int *delta)
{
	int	 old, s;

	if (st == NULL || (unsigned)ev >= REP_EV__MAX)
		return ARPS_E_INTERNAL;
	old = rep_clamp(st->score);
	s = st->streak < 0 ? 0 : st->streak;
	st->score = rep_clamp(old + rep_delta(ev, s));
	switch (evtab[ev].streak) {
	case STREAK_INC:
		/* Saturate; keep the 5-cycle position at the top. */
		st->streak = s < INT_MAX - REP_STREAK_LEN ? s + 1 :
		    s - REP_STREAK_LEN + 1;
		break;
	case STREAK_RESET:
		st->streak = 0;
		break;
	default:
		st->streak = s;
		break;
	}
	if (delta != NULL)
		*delta = st->score - old;
	return ARPS_OK;
}

enum rep_tier
rep_tier_of(int score)
{
	int	 t;

	score = rep_clamp(score);
	for (t = REP_TIER__MAX - 1; t > 0; t--)
		if (score >= tiertab[t].min)
			break;
	return (enum rep_tier)t;
}

NAMES_AT_FN(rep_tier_name, enum rep_tier, NAMES_FIELD(tiertab, REP_TIER__MAX, name))

NAMES_FIND_FN(rep_tier_from_name, enum rep_tier, NAMES_FIELD(tiertab, REP_TIER__MAX, name))

bool
rep_may_accept(int score)
{
	return rep_tier_of(score) != REP_TIER_SUSPENDED;
}

bool
rep_may_take_part(bool status_suspended, int score)
{
	return !status_suspended && rep_may_accept(score);
}

NAMES_AT_FN(rep_event_name, enum rep_event, NAMES_FIELD(evtab, REP_EV__MAX, name))
