/*
 * The sweep's jobs (design.md §1, design.md §4, design.md §5): each selects what is due
 * as of `now` and moves it in batches of at most `batch` rows a
 * transaction, every row guarded by its state inside the transaction that
 * moves it (core's transition tables, through txn/lifecycle.c), so a job run
 * twice, or by two sweeps at once, moves each row exactly once.  The
 * participation jobs move a batch with a fixed number of multi-row
 * statements (db/batch.h, design.md §1.3); `rows` moves them one by one
 * through txn/lifecycle.c, as the study jobs always are.  The statements,
 * the sweep's named lock and its session counters are db/batch.h's.
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
};

struct sweep_job {
	const char *name;
	enum db_rc (*run)(struct sweep *, size_t *moved, size_t *batches);
};

/* The jobs in the order one run applies them. */
extern const struct sweep_job sweep_jobs[];
extern const size_t sweep_njobs;

#endif
