/*
 * Studies and participations: row reads, lists, and every state change.
 *
 * Reads and row mapping are in db/studies.c, the state changes in
 * txn/lifecycle.c (its head comment is the lock-order contract).
 * Each state change is one function that runs inside the caller's
 * transaction (db_tx / req_tx), locks rows in the one fixed order used
 * everywhere -- the study row, then the participation row, then the agent
 * row, then wallets in owner-id order (db_ledger_post) -- applies core's
 * transition tables (study_transition, part_transition,
 * study_accept_check), books the money (ledger_build + db_ledger_post) and
 * the reputation (rep_apply), and reports the business outcome.
 *
 * Return convention: enum db_rc for the database (DB_RETRY, from a
 * deadlock or lock wait, must reach db_tx so the whole transaction is
 * retried); the business outcome, ARPS_OK or an enum arps_err reason, in
 * *outcome.  A refusal writes nothing, except where stated (an invalid
 * submission still costs reputation): the caller commits either way.
 * Structs filled here own heap strings: release with the *_clear / *_free
 * functions (which accept zeroed structs and NULL).
 */
#ifndef ARPS_DB_STUDIES_H
#define ARPS_DB_STUDIES_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "core/ids.h"
#include "core/money.h"
#include "core/participation.h"
#include "core/study.h"
#include "db/db.h"

struct agent_current;
struct config;

struct study {
	int64_t			 seq;		/* internal order (cursors) */
	char			 id[IDS_BUFSZ];
	char			 researcher_id[IDS_BUFSZ];
	char			*title, *description, *study_url, *criteria;
	char			*completion_code;	/* NULL when none */
	int64_t			 reward, fee;		/* cents per participant */
	int64_t			 max_participants, duration_minutes;
	int			 has_deadline;
	int64_t			 deadline;
	enum study_state	 state;
	int64_t			 occupied;	/* slots held (study_occupied) */
	int64_t			 frozen, spent, refunded, refunded_slots;
	int64_t			 created_at, closed_at, completed_at; /* 0: not yet */
	struct study_counts	 counts;	/* participations by state */
};

/* What POST /studies stores; plan from money_study_plan. */
struct study_new {
	const char		*researcher_id;
	const char		*title, *description, *study_url, *criteria;
	const char		*completion_code;	/* NULL: none */
	int64_t			 duration_minutes;
	int			 has_deadline;
	int64_t			 deadline;
	struct money_study	 plan;
};

struct participation {
	int64_t			 seq;
	char			 id[IDS_BUFSZ];
	char			 study_id[IDS_BUFSZ];
	char			 agent_id[IDS_BUFSZ];
	char			 participant_id[ANON_BUFSZ];
	enum part_state		 state;
	int64_t			 accepted_at, started_at, submitted_at;
	int64_t			 reviewed_at, ended_at;		/* 0: not yet */
	char			*reason;	/* NULL when none */
	/* Joined by the lists that say so. */
	int			 reputation;	/* the agent's: participant lists */
	char			*title;		/* the study's: history */
	int64_t			 reward;	/* the study's: history */
};

/* The outcome of db_participation_settle. */
struct settle_out {
	enum arps_err		 outcome;	/* ARPS_OK or the refusal */
	struct participation	 p;		/* the row after the event */
	int			 rep_delta;	/* reputation change applied */
	int			 rep_known;	/* p.reputation is the agent's score after it */
	enum ledger_event	 money;		/* money booked (NONE if none) */
	enum study_state	 study_state;	/* the study's state after */
};

void	 db_study_clear(struct study *);
void	 db_studies_free(struct study *, size_t n);
void	 db_participation_clear(struct participation *);
void	 db_participations_free(struct participation *, size_t n);

/* --- reads --- */

/* One study with its counts; for_update locks the row (SELECT ... FOR
 * UPDATE: the first lock of every study-related transaction).
 * DB_NOTFOUND when there is none. */
enum db_rc db_study_get(struct db *, const char *id, int for_update, struct study *out);
/* The study row alone (counts left zero), locked when for_update;
 * DB_NOTFOUND when there is none. */
enum db_rc db_study_get_row(struct db *, const char *id, int for_update, struct study *out);
/* One participation by id (reputation, title and reward left zero),
 * locked when for_update; DB_NOTFOUND when there is none. */
enum db_rc db_participation_get(struct db *, const char *prt_id, int for_update,
    struct participation *p);
/* An account's studies with counts, newest first: seq < cursor (0: from
 * the newest), at most limit.  *v is malloc'd (free with db_studies_free);
 * *next is the cursor of the next page, 0 at the end. */
enum db_rc db_study_list_owner(struct db *, const char *owner, int64_t cursor, int64_t limit,
    struct study **v, size_t *n, int64_t *next);
/* The studies of ids[0..n) still open to agent_id at now (active, a free
 * slot, no deadline passed, never taken part in by the agent): out[i] and
 * found[i] as db_study_get_many; one statement per 30 ids.  The
 * confirmation of GET /studies/available (match/engine.c). */
enum db_rc db_study_open_for(struct db *, const char *agent_id, int64_t now,
    const char *const *ids, size_t n, struct study *out, int *found);
/* Studies by id, read 32 ids per query: out[i] gets study
 * ids[i] and found[i] = 1, or found[i] = 0 when there is none.  Counts are
 * not filled.  The caller clears every found out[i]. */
enum db_rc db_study_get_many(struct db *, const char *const *ids, size_t n, struct study *out,
    int *found);
/* True in *took_part when the agent has (or had) a participation in the
 * study; its row in *p when p is not NULL and it exists. */
enum db_rc db_participation_by_agent(struct db *, const char *study_id, const char *agent_id,
    struct participation *p, int *took_part);
/* The study row and the agent's participation in it (or the one of that
 * anonymous participant id), locked in that order by one statement: *s
 * and, when *took_part, *p.  DB_NOTFOUND when there is no such study. */
enum db_rc db_study_part_by_agent_lock(struct db *, const char *study_id, const char *agent_id,
    struct study *s, struct participation *p, int *took_part);
enum db_rc db_study_part_by_anon_lock(struct db *, const char *study_id,
    const char *participant_id, struct study *s, struct participation *p, int *took_part);
/* A participation by its anonymous participant id within a study, with
 * the agent's reputation (unlocked; a review locks it with its study by
 * db_study_part_by_anon_lock).  DB_NOTFOUND when none. */
enum db_rc db_participation_by_anon(struct db *, const char *study_id, const char *participant_id,
    struct participation *p);
/* A study's participations, newest first, with each agent's reputation. */
enum db_rc db_participants_list(struct db *, const char *study_id, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next);
/* An agent's participations, newest first, with study title and reward. */
enum db_rc db_history_list(struct db *, const char *agent_id, int64_t cursor, int64_t limit,
    struct participation **v, size_t *n, int64_t *next);

/* --- state changes (inside the caller's transaction) --- */

/*
 * Create and publish a study for in->researcher_id: lock the researcher's
 * wallet, build CREATE_STUDY (outcome ARPS_E_INSUFFICIENT_SC when the
 * available balance is short: nothing written), insert the study (active,
 * frozen = plan.total), its criteria embedding row ('processing', BLAKE2b
 * of the text) and the postings.  The new study's id in id_out.
 */
enum db_rc db_study_create(struct db *, const struct study_new *in, int64_t now,
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
enum db_rc db_study_event(struct db *, const char *study_id, const char *owner,
    enum study_event ev, int64_t now, struct study *after, enum arps_err *outcome);
/* The sweep's study closers: db_study_event with no owner.  close: ev is
 * STUDY_EV_STOP, STUDY_EV_DEADLINE or STUDY_EV_FULL (active|paused ->
 * awaiting_review); complete: awaiting_review with nothing accepted,
 * in_progress or submitted -> completed.  Idempotent: a second call
 * answers outcome ARPS_E_INVALID_STATE and writes nothing. */
enum db_rc db_study_close(struct db *, const char *study_id, enum study_event ev, int64_t now,
    enum arps_err *outcome);
enum db_rc db_study_complete(struct db *, const char *study_id, int64_t now,
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
enum db_rc db_study_accept(struct db *, const struct config *, const char *study_id,
    const char *agent_id, const struct agent_current *seen, int64_t now, struct study *s,
    struct participation *p, enum arps_err *outcome);

/*
 * The agent-driven participation events on (study_id, agent_id): ev is
 * PART_EV_OPEN (accepted -> in_progress, first detail fetch),
 * PART_EV_COMPLETE (code: the body's completion_code, NULL when absent)
 * or PART_EV_WITHDRAW (the slot reopens).  Outcomes: ARPS_OK,
 * ARPS_E_NOT_FOUND (no such study), ARPS_E_NO_ACTIVE_PARTICIPATION,
 * ARPS_E_INVALID_SUBMISSION (code mismatch: reputation -5 IS written,
 * participation unchanged; the caller must commit).  After a change the
 * study moves to awaiting_review when it became full (STUDY_EV_FULL).
 * *p gets the participation after the event when found; *s_out (may be
 * NULL) the study row as the event left it when the study was found
 * (zeroed otherwise; the caller clears it).
 */
enum db_rc db_participation_agent_event(struct db *, const char *study_id, const char *agent_id,
    enum part_event ev, const char *code, int64_t now, struct participation *p,
    struct study *s_out, enum arps_err *outcome);

/*
 * Settle one participation by id: ev is PART_EV_APPROVE,
 * PART_EV_AUTO_APPROVE, PART_EV_REJECT (from submitted) or PART_EV_TIMEOUT
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
enum db_rc db_participation_settle(struct db *, const char *prt_id, const char *owner,
    enum part_event ev, const char *reason, int64_t now, struct settle_out *out);
/* The same for a caller that holds the locks already: *s the study row
 * and out->p the participation, each read FOR UPDATE in this transaction
 * (a review: both by db_study_part_by_anon_lock), so
 * nothing is read again.  *s is updated; out->p is taken over (caller
 * clears it). */
enum db_rc db_participation_settle_locked(struct db *, struct study *s, enum part_event ev,
    const char *reason, int64_t now, struct settle_out *out);

#endif
