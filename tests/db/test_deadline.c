/* design.md §9.5: a request's database work ends within its deadline:
 * the worker's session limits, no statement past the deadline, and no
 * transaction retried past it (db/db.c), against the dev MariaDB. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>
#include <unistd.h>

#include "core/ids.h"
#include "db/accounts.h"
#include "db/db.h"
#include "lib/config.h"
#include "lib/secret.h"
#include "tests/db/dbtest.h"

static struct config cfg;

static int
setup(void **state)
{
	(void)state;
	return dbtest_setup(&cfg, NULL);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The session's lock-wait and statement limits, as the server has them. */
static void
session_limits(struct db *db, int64_t *lock_wait, double *stmt)
{
	struct dbres *res = NULL;

	assert_int_equal(DB_Q0(db, "SELECT @@SESSION.innodb_lock_wait_timeout,"
	    " CAST(@@SESSION.max_statement_time AS CHAR)", &res, NULL), DB_OK);
	*lock_wait = dbres_i64(res, 0, 0);
	*stmt = strtod(dbres_str(res, 0, 1), NULL);
	dbres_free(res);
}

/* The worker's connection (db_set_limit(db, 30)) has both limits at 30 s,
 * also after a reconnect; a connection without them has the server's. */
static void
worker_session_limits(void **state)
{
	struct db *db = db_open(&cfg), *plain = db_open(&cfg);
	int64_t lw;
	double st;

	(void)state;
	assert_non_null(db);
	assert_non_null(plain);
	db_set_limit(db, 30);
	session_limits(db, &lw, &st);
	assert_int_equal(lw, 30);
	assert_true(st == 30.0);
	/* a new session (the server closed the old one) gets them again */
	assert_int_equal(DB_Q0(db, "KILL CONNECTION CONNECTION_ID()", NULL, NULL), DB_GONE);
	session_limits(db, &lw, &st);
	assert_int_equal(lw, 30);
	assert_true(st == 30.0);
	session_limits(plain, &lw, &st);
	assert_int_not_equal(lw, 30);
	assert_true(st == 0.0);
	/* with a deadline, the limits shrink to the seconds left ... */
	db_set_deadline(db, 3);
	session_limits(db, &lw, &st);
	assert_true(lw >= 2 && lw <= 3);
	assert_true(st >= 2.0 && st <= 3.0);
	/* ... and come back for the next request */
	db_set_deadline(db, 30);
	session_limits(db, &lw, &st);
	assert_int_equal(lw, 30);
	db_set_deadline(db, 0);
	db_close(db);
	db_close(plain);
}

/* A statement that would run past the deadline is stopped by the server's
 * max_statement_time; after the deadline none starts. */
static void
statement_stops_at_deadline(void **state)
{
	struct db *db = db_open(&cfg);
	struct dbres *res = NULL;
	double t0;

	(void)state;
	db_set_limit(db, 30);
	db_set_deadline(db, 2);
	t0 = now_s();
	assert_int_equal(DB_Q0(db, "SELECT SLEEP(20)", &res, NULL), DB_RETRY);
	dbres_free(res);
	assert_true(now_s() - t0 < 4.0);
	/* past the deadline: refused without a round trip */
	while (now_s() - t0 < 2.1)
		;
	t0 = now_s();
	assert_int_equal(DB_Q0(db, "SELECT 1", &res, NULL), DB_RETRY);
	assert_null(res);
	assert_true(now_s() - t0 < 0.1);
	/* the next request's deadline serves again */
	db_set_deadline(db, 30);
	assert_int_equal(DB_Q0(db, "SELECT 1", &res, NULL), DB_OK);
	dbres_free(res);
	db_set_deadline(db, 0);
	db_close(db);
}

struct locked {
	int tries;
};

static enum db_rc
lock_row(struct db *db, void *arg)
{
	struct locked *l = arg;
	struct dbres *res = NULL;
	enum db_rc rc;

	l->tries++;
	rc = DB_Q0(db, "SELECT version FROM schema_version WHERE version = 1 FOR UPDATE", &res,
	    NULL);
	dbres_free(res);
	return rc;
}

/* A transaction waiting on a lock another session holds: the lock wait
 * ends at the deadline and db_tx does not retry past it (without the
 * deadline: 8 tries of 30 s each). */
static void
tx_retries_stop_at_deadline(void **state)
{
	struct db *holder = db_open(&cfg), *db = db_open(&cfg);
	struct dbres *res = NULL;
	struct locked l = { 0 };
	double t0, took;

	(void)state;
	assert_int_equal(db_begin(holder), DB_OK);
	assert_int_equal(DB_Q0(holder,
	    "SELECT version FROM schema_version WHERE version = 1 FOR UPDATE", &res, NULL), DB_OK);
	dbres_free(res);
	db_set_limit(db, 30);
	db_set_deadline(db, 3);
	t0 = now_s();
	assert_int_equal(db_tx(db, lock_row, &l), DB_RETRY);
	took = now_s() - t0;
	print_message("lock wait with a 3 s deadline: %.2f s, %d tries\n", took, l.tries);
	assert_true(took >= 1.5 && took < 5.0);
	assert_true(l.tries >= 1 && l.tries <= 2);
	db_rollback(holder);
	/* the lock released, the same transaction goes through */
	db_set_deadline(db, 30);
	l.tries = 0;
	assert_int_equal(db_tx(db, lock_row, &l), DB_OK);
	assert_int_equal(l.tries, 1);
	db_set_deadline(db, 0);
	db_close(db);
	db_close(holder);
}

/* POST /profile/bio as the agent with an Idempotency-Key, through nginx
 * with curl; "status seconds" goes to out (in the background when bg). */
static void
bio_post(const char *key, const char *idem, const char *out, int bg)
{
	char cmd[2048];

	snprintf(cmd, sizeof cmd, "curl -s -o /dev/null -w '%%{http_code} %%{time_total}\\n'"
	    " -X POST -H 'Content-Type: application/json' -H 'X-API-Key: %s'"
	    " -H 'Idempotency-Key: %s' --data '{\"bio\":\"Writes C at work.\"}'"
	    " '%s/api/v1/profile/bio' > '%s.tmp' && mv '%s.tmp' '%s'%s", key, idem,
	    getenv("ARPS_BASE_URL"), out, out, out, bg ? " &" : "");
	assert_int_equal(system(cmd), 0);
}

/* The status and seconds bio_post wrote; waits up to limit seconds. */
static void
bio_result(const char *out, int limit, long *status, double *secs)
{
	FILE *f = NULL;
	int i;

	for (i = 0; i < limit * 10 && (f = fopen(out, "r")) == NULL; i++)
		usleep(100000);
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %lf", status, secs), 2);
	fclose(f);
	unlink(out);
}

/*
 * End to end, through nginx and a worker: a request whose transaction
 * waits on a row lock someone else holds answers 503 after the worker's
 * 30 s (not 8 tries of a 50 s server default), its in-flight key refuses
 * a duplicate meanwhile, and after the 503 the same key runs once.
 */
static void
worker_request_deadline(void **state)
{
	struct db *holder = db_open(&cfg);
	unsigned char keyhash[32], claim[32];
	char key[APIKEY_BUFSZ], idem[64], out1[64], out2[64];
	struct dbres *res = NULL;
	struct agent a;
	double secs;
	long status;

	(void)state;
	assert_non_null(getenv("ARPS_BASE_URL"));
	memset(&a, 0, sizeof a);
	assert_int_equal(ids_new(IDS_AGENT, &secret_rng, a.id), 0);
	assert_int_equal(apikey_new(&secret_rng, key), 0);
	snprintf(a.name, sizeof a.name, "deadline");
	a.reputation = 50;
	a.created_at = time(NULL);
	secret_hash(&cfg, "apikey", key, strlen(key), keyhash);
	randombytes_buf(claim, sizeof claim);
	assert_int_equal(db_agent_insert(holder, &a, keyhash, claim, "127.0.0.1"), DB_OK);
	snprintf(idem, sizeof idem, "deadline-%08x%08x", randombytes_random(), randombytes_random());
	snprintf(out1, sizeof out1, "/tmp/arps-deadline-%08x-1", randombytes_random());
	snprintf(out2, sizeof out2, "/tmp/arps-deadline-%08x-2", randombytes_random());
	/* hold the agent's row */
	assert_int_equal(db_begin(holder), DB_OK);
	assert_int_equal(DB_Q(holder, "SELECT id FROM agents WHERE id = ? FOR UPDATE", &res, NULL,
	    P_STR(a.id)), DB_OK);
	dbres_free(res);
	bio_post(key, idem, out1, 1);
	sleep(2);
	/* the same key while the first is in flight: refused, not run */
	bio_post(key, idem, out2, 0);
	bio_result(out2, 10, &status, &secs);
	assert_int_equal(status, 409);
	/* the first ends at its deadline */
	bio_result(out1, 90, &status, &secs);
	print_message("a request waiting on a held row lock: %ld after %.1f s\n", status, secs);
	assert_int_equal(status, 503);
	assert_true(secs >= 27.0 && secs < 45.0);
	db_rollback(holder);
	/* the key was released with the 503: the retry runs, once */
	bio_post(key, idem, out1, 0);
	bio_result(out1, 30, &status, &secs);
	assert_int_equal(status, 200);
	db_close(holder);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(worker_session_limits),
		cmocka_unit_test(statement_stops_at_deadline),
		cmocka_unit_test(tx_retries_stop_at_deadline),
		cmocka_unit_test(worker_request_deadline),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
