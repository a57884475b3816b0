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

/* The named lock that holds a key while its request runs (GET_LOCK(name,
 * 0)): *got is 1 when this connection holds it now, 0 when another live
 * connection does.  MariaDB frees it when the connection ends. */
enum db_rc db_idem_lock(struct db *db, const char *name, int *got);
enum db_rc db_idem_unlock(struct db *db, const char *name);
/*
 * The stored answer of (principal, key), for a request whose hash is
 * given.  IDEM_NEW: none; IDEM_REPLAY: *status and *body (caller frees)
 * hold the first answer; IDEM_CONFLICT: the key was used with another
 * request.  A record older than ttl seconds counts as none (and is
 * deleted when locked, i.e. the caller holds the key's named lock).
 */
enum db_rc db_idem_get(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int64_t now, int64_t ttl, int locked, enum idem_state *st,
    int *status, char **body, size_t *blen);
/* Insert the answer of an owned key, in the effect's transaction (or
 * alone, after a handler without one); DB_DUP when a record exists. */
enum db_rc db_idem_store(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int status, const char *body, size_t blen, int64_t now);

#endif
