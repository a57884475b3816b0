/*
 * arps-sweep: the cron-invoked jobs (timeouts, auto-approval, deadlines,
 * study completion, retention; embeddings are arps-embed's).
 * Usage: arps-sweep [--config PATH] [--now ISO8601] [--batch N] [--no-lock] [--rows]
 * --rows moves the participation jobs row by row (txn/lifecycle.c) instead of
 * in set-based batches (txn/sweep.c): the same outcome, for comparison.
 * Exit 0 when every job ran (or another sweep holds the lease), 1 on a
 * database error or when another sweep took the lease meanwhile (this one
 * stopped before its next batch), 2 on usage errors.  One summary line per
 * job to stderr.  The lease (db/lease.h) holds across hosts and Galera
 * nodes; --no-lock runs without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/timefmt.h"
#include "core/validate.h"
#include "db/batch.h"
#include "db/db.h"
#include "db/lease.h"
#include "db/retention.h"
#include "txn/sweep.h"
#include "lib/clock.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"

static struct config cfg;

static int
usage(void)
{
	fprintf(stderr, "usage: arps-sweep [--config PATH] [--now ISO8601] [--batch N] [--no-lock] [--rows]\n");
	return 2;
}

int
main(int argc, char *argv[])
{
	struct sweep sw = { .batch = 200 };
	char err[1024];
	struct timespec held_from = { 0, 0 };
	int i, nolock = 0, status = 0;
	int64_t batch;
	enum db_rc rc;
	size_t j;

	log_init("arps-sweep");
	sw.now = (int64_t)time(NULL);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			i++;
		else if (strcmp(argv[i], "--now") == 0 && i + 1 < argc) {
			if (timefmt_parse(argv[i + 1], strlen(argv[i + 1]), &sw.now) != 0) {
				fprintf(stderr, "arps-sweep: --now: not an ISO 8601 time: %s\n", argv[i + 1]);
				return 2;
			}
			i++;
		} else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
			if (val_parse_int64(argv[i + 1], strlen(argv[i + 1]), 1, 1000, &batch) != 0)
				return usage();
			sw.batch = (size_t)batch;
			i++;
		} else if (strcmp(argv[i], "--no-lock") == 0)
			nolock = 1;
		else if (strcmp(argv[i], "--rows") == 0)
			sw.rows = 1;
		else
			return usage();
	}
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-sweep: %s\n", err);
		return 2;
	}
	if (secret_init() != 0 || (sw.db = db_open(&cfg)) == NULL)
		return 1;
	if ((rc = db_ensure(sw.db)) != DB_OK) {
		log_msg("cannot connect to the database: %s", db_error(sw.db));
		db_close(sw.db);
		return 1;
	}
	if (!nolock) {
		if ((rc = db_lease_take(sw.db, LEASE_SWEEP, SWEEP_LEASE_TTL, &sw.lease)) != DB_OK) {
			log_msg("cannot take the sweep lease: %s", db_error(sw.db));
			db_close(sw.db);
			return 1;
		}
		if (sw.lease == 0) {
			log_msg("skipped: another sweep holds the lease");
			db_close(sw.db);
			return 0;
		}
		clock_gettime(CLOCK_REALTIME, &held_from);
	}
	for (j = 0; j < sweep_njobs && !sw.fenced; j++) {
		size_t moved = 0, batches = 0;
		int64_t t0 = clock_mono_ms();

		rc = sweep_jobs[j].run(&sw, &moved, &batches);
		log_msg("%s: moved %zu in %zu batch(es), %lld ms%s%s", sweep_jobs[j].name, moved,
		    batches, (long long)(clock_mono_ms() - t0), rc == DB_OK ? "" : ", failed: ",
		    rc == DB_OK ? "" : db_error(sw.db));
		if (rc != DB_OK)
			status = 1;
	}
	if (sw.fenced)
		log_msg("stopped: the lease (token %lld) was taken by another sweep",
		    (long long)sw.lease);
	{
		int64_t stmts, commits;

		if (db_session_counts(sw.db, &stmts, &commits) == DB_OK)
			log_msg("jobs ran %lld statements and %lld commits", (long long)stmts,
			    (long long)commits);
	}
	/* design.md §9.10: one line per table in the log (idempotent deletes:
	 * the lease is checked before, not in each of their transactions) */
	if (!sw.fenced && ((rc = sweep_fence(sw.db, &sw)) != DB_OK ||
	    (rc = retention_run(sw.db, sw.now, RETENTION_BATCH, NULL)) != DB_OK))
		status = 1;
	if (sw.fenced)
		status = 1;
	else if (sw.lease != 0) {
		struct timespec to;

		clock_gettime(CLOCK_REALTIME, &to);
		/* the hold's span, to the microsecond (make test-cluster checks
		 * that no two sweeps' spans overlap) */
		log_msg("held the lease (token %lld) from %lld.%06ld to %lld.%06ld",
		    (long long)sw.lease, (long long)held_from.tv_sec, held_from.tv_nsec / 1000,
		    (long long)to.tv_sec, to.tv_nsec / 1000);
		(void)db_lease_release(sw.db, LEASE_SWEEP, sw.lease);
	}
	db_close(sw.db);
	return status;
}
