/*
 * The sweep's statements (txn/sweep.c): the rows each job finds due, the
 * multi-row statements of the participation jobs' set-based batches
 * (design.md §1.3, built with db/rows.h: a batch of n rows sends a fixed
 * number of statements, not n), the sweep's named lock and its session
 * counters.  Every function runs one statement (a set: one statement a
 * chunk of db/rows.h) in the caller's transaction, with the binds in
 * the order given; the locks are taken in txn/lifecycle.c's order by the
 * caller calling them in that order.  Return convention: db/db.h.
 */
#ifndef ARPS_DB_BATCH_H
#define ARPS_DB_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/* --- the due rows --- */

/* The rows a job found due, in the order of their (status, time) index:
 * id[i], and for the participation jobs study[i] (NULL for the study
 * jobs).  The strings live in res; release with db_due_free. */
struct db_due {
	size_t		  n;
	const char	**id;
	const char	**study;
	struct dbres	 *res;
};
void db_due_free(struct db_due *);

/* The participations accepted (_accepted) or in progress (_started) at or
 * before `before`, in (accepted_at, id) order; submitted at or before it
 * (_submitted), in (submitted_at, id) order; at most limit. */
enum db_rc db_participation_due_accepted(struct db *, int64_t before, int64_t limit,
    struct db_due *out);
enum db_rc db_participation_due_started(struct db *, int64_t before, int64_t limit,
    struct db_due *out);
enum db_rc db_participation_due_submitted(struct db *, int64_t before, int64_t limit,
    struct db_due *out);
/* The active or paused studies whose deadline is at or before `before`,
 * in id order, at most limit. */
enum db_rc db_study_due_deadline(struct db *, int64_t before, int64_t limit,
    struct db_due *out);
/* The studies awaiting review with nothing accepted, in progress or
 * submitted left, in id order, at most limit (before: no due time; bound
 * as `? >= 0`, pass 0). */
enum db_rc db_study_due_complete(struct db *, int64_t before, int64_t limit,
    struct db_due *out);

/* --- the set-based batch (txn/sweep.c), in the order it calls them --- */

/* A participation as a batch locks it (never NULL strings). */
struct db_batch_part {
	const char	*id, *study_id, *agent_id, *status;
};
/* Lock the participations ids[0..n) (SELECT ... FOR UPDATE): each(arg,
 * row) for every one found, in no set order, stopping at its first
 * non-DB_OK, which is returned. */
enum db_rc db_participations_lock(struct db *, const char *const *ids, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_part *), void *arg);

/* An agent's reputation as a batch reads (lock) or writes it. */
struct db_batch_agent {
	const char	*id;
	int64_t		 reputation, streak;
};
/* Lock the agents ids[0..n) in id order: each(arg, row) for every one
 * found, as db_participations_lock. */
enum db_rc db_agents_lock(struct db *, const char *const *ids, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_agent *), void *arg);
/* Set each row's reputation and streak (the agents locked). */
enum db_rc db_agents_set_reputation(struct db *, const struct db_batch_agent *rows, size_t n);

/* One wallet's change: available + avail, frozen + frozen. */
struct db_batch_wallet {
	const char	*owner;
	int64_t		 avail, frozen;
};
/* Lock the wallets of rows[0..n) (owners distinct) in owner-id order:
 * *locked gets how many exist. */
enum db_rc db_wallets_lock(struct db *, const struct db_batch_wallet *rows, size_t n,
    size_t *locked);
/* Add each row's amounts to its wallet: *affected the wallets changed. */
enum db_rc db_wallets_add(struct db *, const struct db_batch_wallet *rows, size_t n,
    uint64_t *affected);

/* A ledger posting (study_id and event may be NULL). */
struct db_batch_posting {
	const char	*entry_id, *account, *sub;
	int64_t		 amount;
	const char	*study_id, *event;
	int64_t		 created_at;
};
enum db_rc db_postings_insert(struct db *, const struct db_batch_posting *rows, size_t n);

/* A user-visible transaction. */
struct db_batch_txn {
	const char	*id, *owner_id, *type;
	int64_t		 amount;
	const char	*study_id, *entry_id, *description;
	int64_t		 created_at;
};
enum db_rc db_transactions_insert(struct db *, const struct db_batch_txn *rows, size_t n);

/* One study's part of a batch: frozen - unfreeze, spent + spent, refunded
 * + refunded, occupied - freed, only while occupied >= freed: *affected 1
 * when changed. */
enum db_rc db_study_batch_settle(struct db *, const char *id, int64_t unfreeze, int64_t spent,
    int64_t refunded, int64_t freed, uint64_t *affected);

/* The participations ids[0..n) to status; reviewed_at = now when
 * reviewed (else kept), ended_at = now: *affected the rows changed. */
enum db_rc db_participations_set_state(struct db *, const char *status, int reviewed,
    int64_t now, const char *const *ids, size_t n, uint64_t *affected);

/* An owner's event head advanced by count events, the event ids' counter
 * to at least last_us (as db/events.c's head). */
struct db_batch_head {
	const char	*owner;
	int64_t		 count, last_us;
};
enum db_rc db_event_heads_add(struct db *, const struct db_batch_head *rows, size_t n);
/* An owner's event head as read: its last seq and the event ids' counter. */
struct db_batch_head_at {
	const char	*owner;
	int64_t		 last_seq, last_us;
};
/* The heads of owners[0..n): each(arg, row), as db_participations_lock. */
enum db_rc db_event_heads_get(struct db *, const char *const *owners, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_head_at *), void *arg);

/* One event. */
struct db_batch_event {
	const char	*owner;
	int64_t		 seq;
	const char	*id, *type, *data;
	int64_t		 created_at;
};
/* DB_DUP on an id clash. */
enum db_rc db_events_insert(struct db *, const struct db_batch_event *rows, size_t n);

/* An active webhook (events: its type list, NULL for a NULL cell). */
struct db_batch_hook {
	const char	*owner, *id, *events;
};
/* The active webhooks of owners[0..n), in (owner, seq) order: each(arg,
 * row), as db_participations_lock. */
enum db_rc db_webhooks_active_by_owner(struct db *, const char *const *owners, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_hook *), void *arg);

/* One webhook delivery. */
struct db_batch_delivery {
	const char	*webhook_id, *event_id;
	int64_t		 created_at, next_attempt_at;
};
enum db_rc db_deliveries_insert(struct db *, const struct db_batch_delivery *rows, size_t n);

/* --- the sweep's process --- */

/* The session's prepared statements executed and commits so far (the
 * sweep's cost, logged at its end: make bench reads it). */
enum db_rc db_session_counts(struct db *, int64_t *statements, int64_t *commits);

#endif
