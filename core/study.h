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
	int64_t	 screened_out;	/* holds no slot, settles none (design.md §14) */
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

/* --- who may take part (design.md §14) --- */

/* What a completion code does to the submission it ends. */
enum code_action {
	CODE_APPROVE,		/* approved at once (as a manual approval) */
	CODE_REVIEW,		/* left submitted for the researcher */
	CODE_REJECT,		/* rejected at once (category failed_check) */
	CODE_SCREEN_OUT,	/* screened_out: paid screen_out_cents */
	CODE__MAX
};
#define CODE_ACTION_NAMES	"approve, review, reject, screen_out"
#define STUDY_CODES_MAX		10	/* completion codes of one study */
#define STUDY_CODE_MIN		4	/* characters of a code (a list's) */
#define STUDY_CODE_MAX		64

/* "approve", ...; NULL if invalid. */
const char	*code_action_name(enum code_action a);
/* The action from its name (exact); false if unknown. */
bool		 code_action_from_name(const char *name, enum code_action *a);
/* The participation event that follows the submission for action a
 * (APPROVE, REJECT, SCREEN_OUT); false for REVIEW (nothing follows) or an
 * invalid action. */
bool		 code_action_event(enum code_action a, int *part_event);

/* The lists of a study's eligibility. */
enum elig_kind {
	ELIG_INCLUDE_GROUP,
	ELIG_EXCLUDE_GROUP,
	ELIG_EXCLUDE_STUDY,
	ELIG__MAX
};
#define ELIG_LIST_MAX	20	/* ids of one list */

/* "include_groups", "exclude_groups", "exclude_studies"; NULL if invalid. */
const char	*elig_kind_name(enum elig_kind k);
/* The row kind as stored ("include_group", ...); NULL if invalid. */
const char	*elig_kind_row(enum elig_kind k);
/* The kind of a stored row; false if unknown. */
bool		 elig_kind_from_row(const char *row, enum elig_kind *k);

/*
 * Whether an agent may take part by a study's eligibility: in_include is
 * the number of the study's include groups the agent is in (n_include of
 * them named), in_exclude of its exclude groups, took_excluded of its
 * excluded studies it took part in (any state).  True when n_include is 0
 * or in_include > 0, and in_exclude and took_excluded are 0.
 */
bool		 elig_allows(int64_t n_include, int64_t in_include, int64_t in_exclude,
		    int64_t took_excluded);

/*
 * The money event of a screen-out of one participant of a study paying
 * reward + fee a slot: amount is the study's screen_out_cents
 * (0..reward), amount_fee its fee (money_fee at creation, 0..fee),
 * available the researcher's available balance now.  *ev is
 * LEDGER_EV_SCREEN_OUT when available covers amount + amount_fee (the
 * freed slot is funded again), else LEDGER_EV_SCREEN_OUT_SHRINK (the
 * slot's budget settles: the study has one place less).  ARPS_OK,
 * ARPS_E_VALIDATION (amount or its fee outside its range), ARPS_E_INTERNAL.
 */
enum arps_err	 study_screen_out_event(int64_t reward, int64_t fee, int64_t amount,
		    int64_t amount_fee, int64_t available, enum ledger_event *ev);

#endif
