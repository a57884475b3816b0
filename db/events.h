/*
 * Events (design.md §11): queued by the transaction that makes a change,
 * written with it.  db_event queues one in memory; db_commit writes the
 * queue just before COMMIT (db_events_flush), db_begin and db_rollback drop
 * it, so an event exists exactly when its change does.  At the flush each
 * owner's events are numbered under its event_heads row lock (owners in id
 * order, the last locks a transaction takes), and one delivery row is
 * queued for every active webhook of the owner that asks for the type.
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_EVENTS_H
#define ARPS_DB_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/events.h"
#include "core/ids.h"
#include "db/db.h"

/* Queue event t for owner (agt_ or acc_), data a JSON object built from
 * fmt (ids, numbers and names only: nothing is escaped).  DB_OK, or DB_ERR
 * when out of memory. */
enum db_rc db_event(struct db *db, const char *owner, enum event_type t, int64_t now,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Write the queued events (db_commit calls it); the queue is emptied. */
enum db_rc db_events_flush(struct db *db);
/* Forget the queued events (db_begin, db_rollback, db_close). */
void db_events_drop(struct db *db);

struct event_row {
	int64_t seq;			/* the owner's numbering: the cursor */
	char id[IDS_BUFSZ];
	char type[48];
	char *data;			/* JSON object text, owned */
	int64_t created_at;
};

/* The owner's events with seq > after, oldest first, at most limit; type
 * NULL for every type.  *v is calloc'd (db_events_free). */
enum db_rc db_events_list(struct db *db, const char *owner, const char *type, int64_t after,
    int64_t limit, struct event_row **v, size_t *n);
void db_events_free(struct event_row *v, size_t n);
/* The number of the owner's newest event (0: none yet): the largest
 * cursor its feed ever hands out. */
enum db_rc db_events_last(struct db *db, const char *owner, int64_t *last);

/* Retention (design.md §9.10): delete up to batch events and webhook
 * deliveries created before `before`; *n gets the rows deleted. */
enum db_rc db_events_purge(struct db *db, int64_t before, int64_t batch, uint64_t *n);

#endif
