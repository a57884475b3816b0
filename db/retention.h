/*
 * Retention (design.md §9.10): an arps-sweep job that deletes what no rule
 * needs any more, in batches of at most `batch` rows per statement (each
 * statement its own transaction, so no lock is held long), and logs one
 * line per table with the rows it lost:
 *   idempotency_keys   24 h after creation (a replay is honoured 24 h);
 *   rate_events        a day after the event: outside every window (the
 *                      longest limit window is one hour);
 *   rate_buckets       once no event of the bucket is left;
 *   login_codes        once expired;
 *   access_tokens      30 days after expiry or revocation;
 *   outbox             30 days after it was sent or given up.
 * Under a steady load these tables stay proportional to a day's traffic.
 */
#ifndef ARPS_DB_RETENTION_H
#define ARPS_DB_RETENTION_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

#define RETENTION_BATCH	1000

/* Apply every rule as of now.  DB_OK, or the first error (the other rules
 * still ran); *deleted gets the total when not NULL. */
enum db_rc retention_run(struct db *db, int64_t now, size_t batch, uint64_t *deleted);

#endif
