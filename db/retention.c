#include <inttypes.h>
#include <stdio.h>

#include "db/retention.h"
#include "lib/log.h"

#define DAY	(24 * 3600)

/*
 * One rule: delete up to ? rows whose time is at or before now - age, now
 * being the instant the jobs run as (arps-sweep --now); a rule marked
 * `own_clock` binds the age alone and compares with the database's clock.
 */
static const struct rule {
	const char *table;
	const char *sql;
	int64_t age;
	int own_clock;
} rules[] = {
	{ "idempotency_keys",
	  "DELETE FROM idempotency_keys WHERE created_at <= ? ORDER BY created_at LIMIT ?", DAY, 0 },
	{ "rate_events",
	  "DELETE FROM rate_events WHERE at <= ? ORDER BY at LIMIT ?", DAY, 0 },
	{ "login_codes",
	  "DELETE FROM login_codes WHERE expires_at <= ? ORDER BY expires_at LIMIT ?", 0, 0 },
	{ "access_tokens (expired)",
	  "DELETE FROM access_tokens WHERE expires_at <= ? ORDER BY expires_at LIMIT ?", 30 * DAY, 0 },
	{ "access_tokens (revoked)",
	  "DELETE FROM access_tokens WHERE revoked_at <= ? ORDER BY revoked_at LIMIT ?", 30 * DAY, 0 },
	{ "outbox (sent)",
	  "DELETE FROM outbox WHERE state = 'sent' AND sent_at <= ? ORDER BY sent_at LIMIT ?",
	  30 * DAY, 0 },
	{ "outbox (dead)",
	  "DELETE FROM outbox WHERE state = 'dead' AND dead_at <= ? ORDER BY dead_at LIMIT ?",
	  30 * DAY, 0 },
	/* the change sequence of open studies (008_study_changes.sql): a
	 * worker more than half of this behind reloads (match/index.c).  Its
	 * rows are stamped by the database's clock and read by workers on
	 * theirs: a sweep run as of a later instant (--now) must not delete
	 * what no worker has read yet, or a study it reopened, or one just
	 * published, would never be listed (design.md §9.10). */
	{ "study_changes",
	  "DELETE FROM study_changes WHERE changed_at <= UNIX_TIMESTAMP() - ?"
	  " ORDER BY changed_at LIMIT ?", 3600, 1 },
};

/*
 * Buckets with no event left.  The claim skips a bucket a limit holds (its
 * SELECT ... FOR UPDATE keeps the row locked to commit), and a limit that
 * arrives after the claim waits for it, finds the row gone and inserts it
 * afresh: a deletion never lets a limit count without its lock.
 */
static const char q_idle_buckets[] =
    "SELECT bucket FROM rate_buckets b WHERE NOT EXISTS"
    " (SELECT 1 FROM rate_events e WHERE e.bucket = b.bucket) LIMIT ? FOR UPDATE SKIP LOCKED";
static const char q_del_bucket[] =
    "DELETE FROM rate_buckets WHERE bucket = ? AND NOT EXISTS"
    " (SELECT 1 FROM rate_events e WHERE e.bucket = ?)";

struct bucket_batch {
	size_t batch;
	uint64_t deleted;
	size_t found;
};

static enum db_rc
bucket_tx(struct db *db, void *arg)
{
	struct bucket_batch *b = arg;
	struct dbres *res = NULL;
	uint64_t aff;
	enum db_rc rc;
	size_t i;

	b->deleted = 0;
	if ((rc = DB_Q(db, q_idle_buckets, &res, NULL, P_I64(b->batch))) != DB_OK)
		return rc;
	b->found = res->nrows;
	for (i = 0; i < res->nrows; i++) {
		size_t n;
		const void *k = dbres_blob(res, i, DB_COL_ONLY, &n);

		if ((rc = DB_Q(db, q_del_bucket, NULL, &aff, P_BLOB(k, n), P_BLOB(k, n))) != DB_OK) {
			dbres_free(res);
			return rc;
		}
		b->deleted += aff;
	}
	dbres_free(res);
	return DB_OK;
}

static void
report(const char *table, uint64_t n, size_t batches, enum db_rc rc, struct db *db)
{
	log_msg("retention: %s lost %" PRIu64 " row(s) in %zu batch(es)%s%s", table, n, batches,
	    rc == DB_OK ? "" : ", failed: ", rc == DB_OK ? "" : db_error(db));
}

enum db_rc
retention_run(struct db *db, int64_t now, size_t batch, uint64_t *deleted)
{
	enum db_rc rc, first = DB_OK;
	uint64_t total = 0;
	size_t i;

	if (batch == 0)
		batch = RETENTION_BATCH;
	for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		uint64_t n = 0, aff = 0;
		size_t batches = 0;

		do {
			rc = DB_Q(db, rules[i].sql, NULL, &aff,
			    P_I64(rules[i].own_clock ? rules[i].age : now - rules[i].age),
			    P_I64(batch));
			if (rc != DB_OK)
				break;
			n += aff;
			batches++;
		} while (aff == batch);
		report(rules[i].table, n, batches, rc, db);
		total += n;
		if (rc != DB_OK && first == DB_OK)
			first = rc;
	}
	{
		struct bucket_batch b = { batch, 0, 0 };
		uint64_t n = 0;
		size_t batches = 0;

		do {
			if ((rc = db_tx(db, bucket_tx, &b)) != DB_OK)
				break;
			n += b.deleted;
			batches++;
		} while (b.found == batch);
		report("rate_buckets", n, batches, rc, db);
		total += n;
		if (rc != DB_OK && first == DB_OK)
			first = rc;
	}
	if (deleted != NULL)
		*deleted = total;
	return first;
}
