/*
 * Participation state machine (design.md §5) as one transition
 * table.  part_transition() says what an event does to a participation:
 * the new state, the reputation event and the money event it causes.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_PARTICIPATION_H
#define ARPS_CORE_PARTICIPATION_H

#include <stdbool.h>
#include <stdint.h>

#include "errors.h"

#include "ledger.h"
#include "reputation.h"

#define PART_TIMEOUT_HOURS		24
#define PART_TIMEOUT_SECONDS		(PART_TIMEOUT_HOURS * 3600)
#define PART_AUTO_APPROVE_SECONDS	(48 * 3600)

enum part_state {
	PART_ACCEPTED,
	PART_IN_PROGRESS,
	PART_SUBMITTED,
	PART_APPROVED,
	PART_REJECTED,
	PART_WITHDRAWN,
	PART_TIMED_OUT,
	PART_SCREENED_OUT,	/* ended by a screen_out completion code (design.md §14) */
	PART__MAX
};

enum part_event {
	PART_EV_OPEN,		/* agent fetched the study detail */
	PART_EV_COMPLETE,	/* agent submitted completion */
	PART_EV_WITHDRAW,	/* agent withdrew */
	PART_EV_TIMEOUT,	/* sweep: 24 h after accept, no submission */
	PART_EV_APPROVE,	/* researcher approved */
	PART_EV_AUTO_APPROVE,	/* sweep: 48 h after submission */
	PART_EV_REJECT,		/* researcher rejected */
	PART_EV_SCREEN_OUT,	/* a screen_out completion code: submitted -> screened_out */
	PART_EV__MAX
};

/* Why a researcher rejected a submission (design.md §13), shown to the agent. */
enum part_reject_cat {
	PART_CAT_NO_CODE,
	PART_CAT_FAILED_CHECK,
	PART_CAT_LOW_EFFORT,
	PART_CAT_INCOMPLETE,
	PART_CAT_OTHER,
	PART_CAT__MAX
};
#define PART_CAT_NAMES	"no_code, failed_check, low_effort, incomplete, other"
#define PART_CAT_BUFSZ	16

struct part_result {
	enum part_state		 to;		/* new state (== from if unchanged) */
	bool			 changed;	/* to != from: persist it */
	enum rep_event		 rep;		/* reputation event to apply */
	enum ledger_event	 money;		/* money event to book */
};

/*
 * Apply ev to a participation in state `from`.  code_ok is the guard of
 * COMPLETE (false: the study has a completion_code and the body's differs;
 * ignored by other events).  Returns:
 *  ARPS_OK: *out holds the transition (OPEN on in_progress is a no-op OK);
 *  ARPS_E_INVALID_SUBMISSION: code mismatch; *out = {from, unchanged,
 *    REP_EV_INVALID, NONE}: the caller still applies the -5;
 *  ARPS_E_NO_ACTIVE_PARTICIPATION: OPEN/COMPLETE/WITHDRAW when not active;
 *  ARPS_E_INVALID_STATE: TIMEOUT when not active, (AUTO_)APPROVE/REJECT/
 *    SCREEN_OUT when not submitted;
 *  ARPS_E_INTERNAL: bad state/event.
 * On a refusal *out = {from, unchanged, NONE, NONE}.
 */
enum arps_err	 part_transition(enum part_state from, enum part_event ev,
		    bool code_ok, struct part_result *out);
/* True for accepted and in_progress. */
bool		 part_is_active(enum part_state s);
/* True for states holding a study slot: all but withdrawn, timed_out and
 * screened_out (a screen-out frees its slot, design.md §14). */
bool		 part_occupies_slot(enum part_state s);
/* True for states no event leaves: approved, rejected, withdrawn, timed_out,
 * screened_out. */
bool		 part_is_final(enum part_state s);
/* API name ("accepted", "in_progress", ..., "timed_out"); NULL if invalid. */
const char	*part_state_name(enum part_state s);
/* State from its API name; false if unknown. */
bool		 part_state_from_name(const char *name, enum part_state *s);
/* Rejection category name ("no_code", ...); NULL if invalid. */
const char	*part_reject_cat_name(enum part_reject_cat c);
/* Category from its API name (exact); false if unknown. */
bool		 part_reject_cat_from_name(const char *name, enum part_reject_cat *c);
/* Event name ("open", "complete", ...); NULL if invalid. */
const char	*part_event_name(enum part_event ev);
/* True when a participation accepted at accepted_at has timed out at now
 * (now >= accepted_at + 24 h). */
bool		 part_timeout_due(int64_t accepted_at, int64_t now);
/* True when a submission made at submitted_at is auto-approved at now
 * (now >= submitted_at + 48 h). */
bool		 part_auto_approve_due(int64_t submitted_at, int64_t now);

#endif
