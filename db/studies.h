/*
 * Studies and participations: row reads, lists, and the statements of
 * every state change (db/studies.c).  The state changes themselves are
 * txn/lifecycle.h's, whose source's head comment is the lock-order
 * contract.
 *
 * Return convention: enum db_rc (db/db.h).  Structs filled here own heap
 * strings: release with the *_clear / *_free functions (which accept
 * zeroed structs and NULL).
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


struct study {
	int64_t			 seq;		/* internal order (cursors) */
	char			 id[IDS_BUFSZ];
	char			 researcher_id[IDS_BUFSZ];
	char			*title, *description, *study_url, *criteria;
	char			*completion_code;	/* NULL when none */
	int			 needs_code;	/* completion_code != NULL (kept
						   where the code is not) */
	int64_t			 reward, fee;		/* cents per participant */
	int64_t			 max_participants, duration_minutes;
	int			 has_deadline;
	int64_t			 deadline;
	enum study_state	 state;
	int64_t			 occupied;	/* slots held (study_occupied) */
	int64_t			 frozen, spent, refunded, refunded_slots;
	int64_t			 bonus;		/* bonuses paid (amounts, no fees) */
	int64_t			 created_at, closed_at, completed_at; /* 0: not yet */
	int			 eligibility;	/* has eligibility rules (design.md §14) */
	int64_t			 screen_out;	/* screen_out_cents */
	int64_t			 screen_out_fee; /* its fee */
	struct study_counts	 counts;	/* participations by state */
};

/* What PATCH /studies/{id} changes: NULL / 0 for a field not given. */
struct study_elig;
struct study_patch {
	const char		*title, *description;
	int			 has_deadline;
	int64_t			 deadline;
	int64_t			 max_participants;	/* 0: unchanged */
	const struct study_elig	*elig;		/* NULL: unchanged (design.md §14) */
};

/* Record a return request on participation id (design.md §14). */
enum db_rc db_participation_return(struct db *, const char *id, const char *reason, int64_t now);
/* Write the given fields of a patch to study id (no money).  Returns
 * enum db_rc. */
enum db_rc db_study_patch(struct db *, const char *id, const struct study_patch *p);
/* A study's eligibility lists (design.md §14): ids[k][0..n[k]) of kind k. */
struct study_elig {
	size_t			 n[ELIG__MAX];
	char			 ids[ELIG__MAX][ELIG_LIST_MAX][IDS_BUFSZ];
};

/* A study's completion codes with their actions. */
struct study_code {
	char			 code[STUDY_CODE_MAX * 4 + 1];	/* UTF-8 */
	enum code_action	 action;
	char			 group[IDS_BUFSZ];	/* add_to_group, "" when none */
};
struct study_codes {
	size_t			 n;
	struct study_code	 c[STUDY_CODES_MAX];
};

/* What POST /studies stores; plan from money_study_plan. */
struct study_new {
	const char		*researcher_id;
	const char		*title, *description, *study_url, *criteria;
	const char		*completion_code;	/* NULL: none (codes[0] when codes) */
	const struct study_elig	*elig;		/* NULL or empty: no rules */
	const struct study_codes *codes;	/* NULL or empty: no codes */
	int64_t			 screen_out;	/* screen_out_cents */
	int64_t			 screen_out_fee;	/* its fee (money_fee) */
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
	char			 category[PART_CAT_BUFSZ];	/* rejection category, "" when none */
	int64_t			 return_requested_at;	/* 0: none (design.md §14) */
	char			*return_reason;	/* NULL when none */
	/* Joined by the lists that say so. */
	int			 reputation;	/* the agent's: participant lists */
	int			 accept_reputation;	/* the agent's at accept; -1 unknown */
	char			*title;		/* the study's: history */
	int64_t			 reward;	/* the study's: history */
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

/* 1 in *ok when agent_id may take part in study_id by its eligibility
 * (design.md §14; 1 for a study without rules), else 0.  Evaluated now,
 * unlocked: a group change applies to the next request.  DB_NOTFOUND
 * when there is no such study. */
enum db_rc db_study_eligible(struct db *, const char *study_id, const char *agent_id, int *ok);
/* 1 when in names any eligibility id, else 0. */
int study_new_has_elig(const struct study_new *in);

/* --- the statements of the state changes (txn/lifecycle.c) ---
 *
 * One statement each, in the caller's transaction; the rows they lock and
 * when are txn/lifecycle.c's lock order. */

/* *n: 1 when a participation of the study still holds its slot open to
 * work (accepted or in_progress), else 0; one probe of the (study_id,
 * status) key, no lock. */
enum db_rc db_study_has_active(struct db *, const char *study_id, int64_t *n);
/* Insert study id for in->researcher_id: active, occupied 0, frozen
 * in->plan.total, created at now.  DB_DUP on an id clash. */
enum db_rc db_study_insert(struct db *, const char *id, const struct study_new *in, int64_t now);
/* occupied + 1 when the study is active and occupied < max_participants:
 * *affected 1 when the slot was taken, 0 when not. */
enum db_rc db_study_occupied_inc(struct db *, const char *id, uint64_t *affected);
/* max_participants - 1 while above occupied (a screen-out's slot that
 * is not funded again, LEDGER_EV_SCREEN_OUT_SHRINK): *affected 1 or 0. */
enum db_rc db_study_shrink(struct db *, const char *id, uint64_t *affected);
/* occupied - 1 when above 0: *affected 1 when freed, 0 when not. */
enum db_rc db_study_occupied_dec(struct db *, const char *id, uint64_t *affected);
/* frozen - unfreeze, spent + spent, refunded + refunded, refunded_slots +
 * refunded_slots: *affected 1 when the study exists and a column changed. */
enum db_rc db_study_money_add(struct db *, const char *id, int64_t unfreeze, int64_t spent,
    int64_t refunded, int64_t refunded_slots, uint64_t *affected);
/* status = to; closed_at = now when to is awaiting_review and
 * completed_at = now when to is completed, each only while still NULL. */
enum db_rc db_study_state_set(struct db *, const char *id, enum study_state to, int64_t now);
/* Insert participation id (accepted at accepted_at).  DB_DUP on a clash
 * (id, or the agent's one participation of the study). */
enum db_rc db_participation_insert(struct db *, const char *id, const char *study_id,
    const char *agent_id, const char *participant_id, int64_t accepted_at);
/* status = to; started_at = started only while NULL; submitted_at,
 * reviewed_at, ended_at, reason and the rejection category set to the
 * values given, where a time <= 0 or a NULL string keeps the column. */
enum db_rc db_participation_state_set(struct db *, const char *id, enum part_state to,
    int64_t started, int64_t submitted, int64_t reviewed, int64_t ended, const char *reason,
    const char *category);

#endif
