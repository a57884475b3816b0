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
/* Record one event of a bucket that db_rate_check locked in this transaction. */
enum db_rc db_rate_add(struct db *db, const char *bucket, int64_t now);

enum idem_state { IDEM_NEW, IDEM_REPLAY, IDEM_CONFLICT, IDEM_BUSY };

/*
 * Claim (principal, key) for a request whose hash is given, committing an
 * in-flight record at once.  IDEM_NEW: the caller owns it; IDEM_REPLAY:
 * *status and *body (caller frees) hold the first answer; IDEM_CONFLICT:
 * the key was used with another request; IDEM_BUSY: the first is still in
 * flight.  Records older than ttl seconds are replaced.
 */
enum db_rc db_idem_claim(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int64_t now, int64_t ttl, enum idem_state *st,
    int *status, char **body, size_t *blen);
/* Store the answer of an owned key (inside the effect's transaction, or alone). */
enum db_rc db_idem_finish(struct db *db, const char *principal, const char *key, int status,
    const char *body, size_t blen);
/* Drop an owned in-flight key (the request failed with 5xx). */
enum db_rc db_idem_release(struct db *db, const char *principal, const char *key);

#endif
