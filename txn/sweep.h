/*
 * The sweep's jobs (design.md §1, design.md §4, design.md §5): each selects what is due
 * as of `now` and moves it in batches of at most `batch` rows a
 * transaction, every row guarded by its state inside the transaction that
 * moves it (core's transition tables, through txn/lifecycle.c), so a job run
 * twice, or by two sweeps at once, moves each row exactly once.  The
 * participation jobs move a batch with a fixed number of multi-row
 * statements (db/batch.h, design.md §1.3); `rows` moves them one by one
 * through txn/lifecycle.c, as the study jobs always are.  The statements
 * and the session counters are db/batch.h's.  Sweeps are kept apart, on
 * any host and node, by the lease LEASE_SWEEP (db/lease.h): each batch's
 * transaction first renews it with the sweep's fencing token, and a sweep
 * whose lease was taken by another stops before its next batch.
 */
#ifndef ARPS_TXN_SWEEP_H
#define ARPS_TXN_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct sweep {
	struct db *db;
	int64_t now;
	size_t batch;			/* rows per transaction */
	int rows;			/* 1: participation jobs row by row, not set-based */
	int64_t lease;			/* the lease's fencing token; 0: none held (--no-lock) */
	int fenced;			/* set when the lease was found taken by another */
};

/* Seconds the sweep's lease lasts past its last renewal (each batch). */
#define SWEEP_LEASE_TTL 30

/* In the caller's transaction (or alone): renew the sweep's lease when it
 * holds one.  DB_OK; DB_ROLLBACK with sw->fenced set when another sweep
 * has taken it (the caller stops). */
enum db_rc sweep_fence(struct db *db, struct sweep *sw);

struct sweep_job {
	const char *name;
	enum db_rc (*run)(struct sweep *, size_t *moved, size_t *batches);
};

/* The jobs in the order one run applies them. */
extern const struct sweep_job sweep_jobs[];
extern const size_t sweep_njobs;

#endif
