/*
 * Study state machine (design.md §5) as one transition table, and
 * the accept preconditions (design.md §6.7); nothing allocates.
 * Convention of core/ (design.md §2.3, core/errors.h): enum arps_err, ARPS_OK
 * or the reason, or bool for a predicate; outputs written only on success.
 */
#ifndef ARPS_CORE_STUDY_H
#define ARPS_CORE_STUDY_H

#include <stdbool.h>
#include <stdint.h>

#include "errors.h"

#include "ledger.h"

enum study_state {
	STUDY_ACTIVE,
	STUDY_PAUSED,
	STUDY_AWAITING_REVIEW,
	STUDY_COMPLETED,
	STUDY__MAX
};

enum study_event {
	STUDY_EV_PAUSE,		/* researcher: active -> paused */
	STUDY_EV_RESUME,	/* researcher: paused -> active */
	STUDY_EV_STOP,		/* researcher: active|paused -> awaiting_review */
	STUDY_EV_DEADLINE,	/* sweep: active|paused -> awaiting_review */
	STUDY_EV_FULL,		/* every slot occupied, none accepted/in_progress */
	STUDY_EV_COMPLETE,	/* sweep: awaiting_review, nothing open -> completed */
	STUDY_EV__MAX
};

/* Participation counts of one study, by state. */
struct study_counts {
	int64_t	 accepted;
	int64_t	 in_progress;
	int64_t	 submitted;
	int64_t	 approved;
	int64_t	 rejected;
	int64_t	 withdrawn;
	int64_t	 timed_out;
};

struct study_result {
	enum study_state	 to;
	enum ledger_event	 money;	/* NONE, REFUND_UNUSED or COMPLETE */
	int64_t			 unused_slots; /* REFUND_UNUSED: slots to refund */
};

/*
 * Apply ev to a study in state `from` with max_participants slots and the
 * counts c (may be NULL for PAUSE/RESUME).  Returns ARPS_OK with *out set;
 * ARPS_E_INVALID_STATE for a wrong state or an unmet guard (FULL when not
 * full or a participation is active; COMPLETE while one is accepted,
 * in_progress or submitted); ARPS_E_INTERNAL for bad arguments.  STOP and
 * DEADLINE give money REFUND_UNUSED with unused_slots = max - occupied
 * (money NONE when 0); COMPLETE gives money COMPLETE (the caller books the
 * remaining frozen amount, possibly 0).  On error *out = {from, NONE, 0}.
 */
enum arps_err	 study_transition(enum study_state from, enum study_event ev,
		    int64_t max_participants, const struct study_counts *c,
		    struct study_result *out);
/* Occupied slots: accepted + in_progress + submitted + approved + rejected. */
int64_t		 study_occupied(const struct study_counts *c);
/* Open participations: accepted + in_progress + submitted. */
int64_t		 study_open(const struct study_counts *c);
/* max_participants - occupied, floored at 0. */
int64_t		 study_spots_remaining(int64_t max_participants,
		    const struct study_counts *c);
/* Unsettled slots, whose cost must still be frozen: max - approved -
 * rejected - refunded_unused (slots already refunded as unused), floored
 * at 0.  Multiply by reward + fee (ledger_expected_frozen) for the amount. */
int64_t		 study_unsettled(int64_t max_participants,
		    const struct study_counts *c, int64_t refunded_unused);
/* True when a deadline is set and now >= deadline. */
bool		 study_deadline_passed(bool has_deadline, int64_t deadline,
		    int64_t now);
/* API name ("active", "paused", "awaiting_review", "completed"); NULL if
 * invalid. */
const char	*study_state_name(enum study_state s);
/* State from its API name; false if unknown. */
bool		 study_state_from_name(const char *name, enum study_state *s);
/* Event name ("pause", ...); NULL if invalid. */
const char	*study_event_name(enum study_event ev);

/* Facts the accept handler gathers before POST /studies/{id}/accept. */
struct accept_facts {
	bool			 agent_claimed;	/* linked to an account */
	bool			 agent_status_suspended; /* status "suspended" */
	int			 agent_reputation; /* 0..100 */
	bool			 has_active_participation; /* any study */
	bool			 already_participated; /* this study, any state */
	enum study_state	 study_state;
	bool			 has_deadline;
	int64_t			 deadline;
	int64_t			 now;
	int64_t			 max_participants;
	int64_t			 occupied;	/* study_occupied() */
	bool			 own_study;	/* the agent's owner is the study's researcher */
};

/*
 * Check, in order: claimed (ARPS_E_AGENT_NOT_CLAIMED), not claimed by the
 * study's own researcher (ARPS_E_OWN_STUDY), not suspended by
 * status or tier (ARPS_E_AGENT_SUSPENDED), no active participation
 * (ARPS_E_ACTIVE_PARTICIPATION), not already in this study
 * (ARPS_E_ALREADY_PARTICIPATED), study active (ARPS_E_STUDY_NOT_ACTIVE),
 * deadline not passed (ARPS_E_STUDY_NOT_ACTIVE), a free slot
 * (ARPS_E_STUDY_FULL).  Returns ARPS_OK when all hold; ARPS_E_INTERNAL
 * for NULL.
 */
enum arps_err	 study_accept_check(const struct accept_facts *f);

#endif
