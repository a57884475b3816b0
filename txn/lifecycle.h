/*
 * The lifecycle of studies and participations: every state change.
 *
 * Each is one function that runs inside the caller's transaction (db_tx /
 * req_tx), locks rows in the one fixed order used everywhere -- the study
 * row, then the participation row, then the agent row, then wallets in
 * owner-id order (db_ledger_post) -- applies core's transition tables
 * (study_transition, part_transition, study_accept_check), books the
 * money (ledger_build + db_ledger_post) and the reputation (rep_apply),
 * and reports the business outcome.  The statements are db/studies.h's;
 * the lock order is the head comment of txn/lifecycle.c.
 *
 * Return convention: enum db_rc for the database (DB_RETRY, from a
 * deadlock or lock wait, must reach db_tx so the whole transaction is
 * retried); the business outcome, ARPS_OK or an enum arps_err reason, in
 * *outcome.  A refusal writes nothing, except where stated (an invalid
 * submission still costs reputation): the caller commits either way.
 * Structs filled here own heap strings: release them with db/studies.h's
 * *_clear functions.
 */
#ifndef ARPS_TXN_LIFECYCLE_H
#define ARPS_TXN_LIFECYCLE_H

#include <stdint.h>

#include "core/errors.h"
#include "core/ids.h"
#include "core/ledger.h"
#include "core/participation.h"
#include "core/study.h"
#include "db/db.h"
#include "db/studies.h"

struct agent_current;
struct config;

/* The outcome of txn_participation_settle. */
struct settle_out {
	enum arps_err		 outcome;	/* ARPS_OK or the refusal */
	struct participation	 p;		/* the row after the event */
	int			 rep_delta;	/* reputation change applied */
	int			 rep_known;	/* p.reputation is the agent's score after it */
	enum ledger_event	 money;		/* money booked (NONE if none) */
	enum study_state	 study_state;	/* the study's state after */
	int			 no_participant; /* txn_review's ARPS_E_NOT_FOUND: the study
						   is the caller's, the participant not */
};

/*
 * Create and publish a study for in->researcher_id: lock the researcher's
 * wallet, build CREATE_STUDY (outcome ARPS_E_INSUFFICIENT_SC when the
 * available balance is short: nothing written), insert the study (active,
 * frozen = plan.total), its criteria embedding row ('processing', BLAKE2b
 * of the text) and the postings.  The new study's id in id_out.
 */
enum db_rc txn_study_create(struct db *, const struct study_new *in, int64_t now,
    char id_out[IDS_BUFSZ], enum arps_err *outcome);

/*
 * Apply a study event (study_transition) to study_id: PAUSE, RESUME, STOP
 * and DEADLINE (refund of the unused slots as one `refund`, recorded in
 * refunded_slots), FULL, COMPLETE (whatever is still frozen returns as
 * `study_unfreeze`).  owner, when not NULL, must own the study (else
 * outcome ARPS_E_NOT_FOUND).  Outcomes: ARPS_OK, ARPS_E_NOT_FOUND,
 * ARPS_E_INVALID_STATE.  *after, when not NULL, gets the study as it is
 * after the event (also on a refusal, when it exists; caller clears).
 */
enum db_rc txn_study_event(struct db *, const char *study_id, const char *owner,
    enum study_event ev, int64_t now, struct study *after, enum arps_err *outcome);
/* The sweep's study closers: txn_study_event with no owner.  close: ev is
 * STUDY_EV_STOP, STUDY_EV_DEADLINE or STUDY_EV_FULL (active|paused ->
 * awaiting_review); complete: awaiting_review with nothing accepted,
 * in_progress or submitted -> completed.  Idempotent: a second call
 * answers outcome ARPS_E_INVALID_STATE and writes nothing. */
enum db_rc txn_study_close(struct db *, const char *study_id, enum study_event ev, int64_t now,
    enum arps_err *outcome);
enum db_rc txn_study_complete(struct db *, const char *study_id, int64_t now,
    enum arps_err *outcome);

/*
 * POST /studies/{id}/accept for agent_id: lock the study, then the agent;
 * gather the facts under those locks; study_accept_check (every reason of
 * design.md §6.7; ARPS_E_NOT_FOUND for an unknown study); occupied + 1 by a
 * conditional UPDATE; insert the participation (accepted) with its
 * anonymous participant id.  On ARPS_OK *s is the study row (its counts
 * not read) and *p the new participation (caller clears both; also filled
 * as far as read on a refusal).  seen: the agent's active participation as
 * the request's authentication read it (NULL: read here), which decides
 * only whether one 24 h old is timed out first; the facts are read again
 * under the locks.
 */
enum db_rc txn_study_accept(struct db *, const struct config *, const char *study_id,
    const char *agent_id, const struct agent_current *seen, int64_t now, struct study *s,
    struct participation *p, enum arps_err *outcome);

/*
 * The agent-driven participation events on (study_id, agent_id): ev is
 * PART_EV_OPEN (accepted -> in_progress, first detail fetch),
 * PART_EV_COMPLETE (code: the body's completion_code, NULL when absent)
 * or PART_EV_WITHDRAW (the slot reopens).  A completion code's row
 * (design.md §14) picks what follows the submission: review (nothing),
 * approve, reject or screen_out (as txn_participation_settle_locked, in
 * this transaction), then add_to_group (the pseudonym from cfg's secret).
 * Outcomes: ARPS_OK,
 * ARPS_E_NOT_FOUND (no such study), ARPS_E_NO_ACTIVE_PARTICIPATION,
 * ARPS_E_CODE_REQUIRED (the study has a code and code is NULL: nothing
 * written), ARPS_E_INVALID_SUBMISSION (code mismatch: reputation -5 IS written,
 * participation unchanged; the caller must commit).  After a change the
 * study moves to awaiting_review when it became full (STUDY_EV_FULL).
 * *p gets the participation after the event when found; *s_out (may be
 * NULL) the study row as the event left it when the study was found
 * (zeroed otherwise; the caller clears it).
 */
enum db_rc txn_participation_agent_event(struct db *, const struct config *,
    const char *study_id, const char *agent_id, enum part_event ev, const char *code,
    int64_t now, struct participation *p, struct study *s_out, enum arps_err *outcome);

/*
 * Settle one participation by id: ev is PART_EV_APPROVE,
 * PART_EV_AUTO_APPROVE, PART_EV_REJECT, PART_EV_SCREEN_OUT (from
 * submitted: the screen-out payment, the slot freed) or PART_EV_TIMEOUT
 * (from accepted|in_progress).  Locks the study row, then the
 * participation, then the agent, then the wallets; applies the
 * transition, the money (APPROVE: reward -> agent `earning`, fee ->
 * platform:revenue; REJECT: reward + fee back as `refund`), the reputation
 * (+2 and the streak bonus; -10; -5), frees the slot on timeout, records
 * reason (may be NULL) and the review time, then checks STUDY_EV_FULL.
 * owner, when not NULL, must own the study (else ARPS_E_NOT_FOUND).
 * out->outcome: ARPS_OK, ARPS_E_NOT_FOUND, ARPS_E_INVALID_STATE (wrong
 * state: nothing written, so a repeated sweep is harmless).  Caller clears
 * out->p.
 */
enum db_rc txn_participation_settle(struct db *, const char *prt_id, const char *owner,
    enum part_event ev, const char *reason, int64_t now, struct settle_out *out);
/* The same for a caller that holds the locks already: *s the study row
 * and out->p the participation, each read FOR UPDATE in this transaction
 * (a review: both by db_study_part_by_anon_lock), so
 * nothing is read again.  *s is updated; out->p is taken over (caller
 * clears it). */
enum db_rc txn_participation_settle_locked(struct db *, struct study *s, enum part_event ev,
    const char *reason, const char *category, int64_t now, struct settle_out *out);

/*
 * A researcher's review of one participant of its study (design.md §6.14,
 * design.md §13), the single endpoint's and each row of the bulk one: ev is
 * PART_EV_APPROVE or PART_EV_REJECT; reason and category (a name of
 * core/participation.h, REJECT only) may be NULL.  Locks the study and the
 * participation by one statement (db_study_part_by_anon_lock), then
 * settles as txn_participation_settle_locked.  out->outcome: ARPS_OK
 * (out->p the row after it, with the agent's reputation), ARPS_E_NOT_FOUND
 * (no such study of owner; or, with out->no_participant, no such
 * participant in it), ARPS_E_INVALID_STATE (not submitted: out->p as it
 * is).  Writes nothing on a refusal.  Caller clears out->p.
 */
enum db_rc txn_review(struct db *, const char *study_id, const char *owner,
    const char *participant_id, enum part_event ev, const char *reason, const char *category,
    int64_t now, struct settle_out *out);

/*
 * PATCH /studies/{id} by owner: lock the study; only active or paused
 * (ARPS_E_INVALID_STATE), owner's (ARPS_E_NOT_FOUND); a deadline only later
 * than now and than the current one, max_participants only more, within
 * max_budget (ARPS_E_VALIDATION, *why names the field); more places freeze
 * (new - old) x (reward + fee) from the available balance as a create does
 * (ARPS_E_INSUFFICIENT_SC: nothing written); then the fields and one
 * study.updated event {study_id, changed}.  *after (caller clears) is the
 * row after, or as read on a refusal.
 */
enum db_rc txn_study_update(struct db *, const char *study_id, const char *owner,
    const struct study_patch *p, int64_t max_budget, int64_t now, struct study *after,
    const char **why, enum arps_err *outcome);

/*
 * POST /wallet/cashouts: lock wallet_id's wallet (the caller's account,
 * or one of its agents), build CASHOUT_REQUEST (outcome
 * ARPS_E_INSUFFICIENT_FUNDS when available < amount: nothing written),
 * insert the cash-out (requested) and post available -> platform:cashouts
 * with its cashout_request row.  The new id in id_out.
 */
enum db_rc txn_cashout_request(struct db *, const char *account_id, const char *wallet_id,
    int64_t amount, int64_t now, char id_out[IDS_BUFSZ], enum arps_err *outcome);

#endif
