/* Exact application-side limits and Idempotency-Key records. */
#ifndef ARPS_DB_LIMITS_H
#define ARPS_DB_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

/*
 * Take one slot of a rolling-window limit (at most max events in window
 * seconds per bucket), inside the caller's transaction: the bucket row is
 * locked, so concurrent callers are counted exactly.  *allowed is 1 when
 * the event was recorded; else 0 and *retry_after gets the seconds until a
 * slot frees.
 */
enum db_rc db_rate_take(struct db *db, const char *bucket, int64_t window, int64_t max,
    int64_t now, int *allowed, int64_t *retry_after);
/*
 * The same count without recording: for limits on failures (design.md §9.2
 * and design.md §9.3), checked before the attempt and recorded with db_rate_add
 * only when it fails.  Locks the bucket row like db_rate_take; *allowed 1
 * when fewer than max events are in the window.
 */
enum db_rc db_rate_check(struct db *db, const char *bucket, int64_t window, int64_t max,
    int64_t now, int *allowed, int64_t *retry_after);
/* db_rate_take for k events at once (k >= 1): recorded only when all k
 * fit; else *retry_after is the time until k slots are free (a whole
 * window when k > max). */
enum db_rc db_rate_take_n(struct db *db, const char *bucket, int64_t window, int64_t max,
    int64_t k, int64_t now, int *allowed, int64_t *retry_after);
/* Record one event of a bucket that db_rate_check locked in this transaction. */
enum db_rc db_rate_add(struct db *db, const char *bucket, int64_t now);

enum idem_state { IDEM_NEW, IDEM_REPLAY, IDEM_CONFLICT };

/*
 * Hold the key (principal, key) for the caller's transaction, as its first
 * statement: its record inserted 'in_flight' (design.md §13.5).  *held 1:
 * this transaction holds it; 0: a live transaction (of another
 * connection) has held it for the whole wait of 2 s.  DB_DUP when a
 * committed record exists (read it with db_idem_get: a replay or a
 * conflict); a record older than ttl seconds, or a stale 'in_flight' one,
 * is deleted and the key held.
 */
enum db_rc db_idem_hold(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int64_t now, int64_t ttl, int *held);
/* In the holding transaction: the record becomes 'done' with the answer. */
enum db_rc db_idem_finish(struct db *db, const char *principal, const char *key, int status,
    const char *body, size_t blen);
/* In the holding transaction: the record is removed (an answer of 5xx). */
enum db_rc db_idem_unhold(struct db *db, const char *principal, const char *key);
/*
 * The stored answer of (principal, key), for a request whose hash is
 * given.  IDEM_NEW: none; IDEM_REPLAY: *status and *body (caller frees)
 * hold the first answer; IDEM_CONFLICT: the key was used with another
 * request.  A record older than ttl seconds counts as none.
 */
enum db_rc db_idem_get(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int64_t now, int64_t ttl, enum idem_state *st,
    int *status, char **body, size_t *blen);
/* Insert the answer of a request that ran no transaction of its own (or
 * whose transaction was refused), after it; DB_DUP when a record exists
 * (the caller answers that one). */
enum db_rc db_idem_store(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int status, const char *body, size_t blen, int64_t now);

#endif
