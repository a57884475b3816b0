/*
 * Reputation: score 0..100 (start 50), approval streak, tier from score.
 * Pure functions; no allocation.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_REPUTATION_H
#define ARPS_CORE_REPUTATION_H

#include <stdbool.h>

#include "errors.h"

#define REP_START		50
#define REP_MIN			0
#define REP_MAX			100
#define REP_APPROVE		2
#define REP_STREAK_LEN		5	/* every 5th consecutive approval ... */
#define REP_STREAK_BONUS	5	/* ... earns +5 more */
#define REP_REJECT		(-10)
#define REP_TIMEOUT		(-5)
#define REP_INVALID		(-5)

enum rep_event {
	REP_EV_NONE,		/* no reputation effect */
	REP_EV_APPROVE,		/* +2, +5 more on streak % 5 == 0; streak+1 */
	REP_EV_REJECT,		/* -10, streak reset */
	REP_EV_TIMEOUT,		/* -5, streak reset */
	REP_EV_INVALID,		/* invalid submission: -5, streak reset */
	REP_EV_WITHDRAW,	/* 0, streak unchanged */
	REP_EV__MAX
};

enum rep_tier {
	REP_TIER_SUSPENDED,	/* 0..29: cannot accept */
	REP_TIER_BASIC,		/* 30..49 */
	REP_TIER_STANDARD,	/* 50..79 */
	REP_TIER_PRIORITY,	/* 80..100 */
	REP_TIER__MAX
};

struct rep_state {
	int	 score;		/* 0..100 */
	int	 streak;	/* consecutive approvals, >= 0 */
};

/* Apply ev to *st (score clamped to 0..100, streak updated).  *delta, if
 * not NULL, gets the score change actually applied.  Returns ARPS_OK, or
 * ARPS_E_INTERNAL for an unknown event (st untouched). */
enum arps_err	 rep_apply(struct rep_state *st, enum rep_event ev, int *delta);
/* Raw score change of ev for an agent whose streak before ev is `streak`
 * (before clamping); 0 for NONE, WITHDRAW and unknown events. */
int		 rep_delta(enum rep_event ev, int streak);
/* Clamp a score into 0..100. */
int		 rep_clamp(int score);
/* Tier of a score (clamped first). */
enum rep_tier	 rep_tier_of(int score);
/* "suspended", "basic", "standard", "priority"; NULL for an invalid tier. */
const char	*rep_tier_name(enum rep_tier tier);
/* Tier from its name; false if unknown. */
bool		 rep_tier_from_name(const char *name, enum rep_tier *tier);
/* True when the score's tier allows accepting a study (score >= 30). */
bool		 rep_may_accept(int score);
/* True when an agent takes part in studies at all (accept, submit, be
 * listed): not suspended by an operator and rep_may_accept(score). */
bool		 rep_may_take_part(bool status_suspended, int score);
/* "none", "approve", ... for logs; NULL for an invalid event. */
const char	*rep_event_name(enum rep_event ev);

#endif
