/*
 * Transactions under crashes and contention (design.md §6.16 and design.md §13): a
 * worker killed in the middle of a request does not hold its
 * Idempotency-Key, and one user's concurrent mutations serialise on the
 * documented lock order without a deadlock (the pool's log counts none)
 * and without a 503.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/api/pool_helpers.h"
#include "tests/api/study_helpers.h"

/* Lines of the pool's log that contain needle. */
static long
log_count(const char *needle)
{
	char path[1024], line[4096];
	long n = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/log/arps.log", getenv("ARPS_VAR"));
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

/* SIGKILL every worker of the pool (the children of its master); the
 * master respawns them.  Returns how many were killed. */
static int
kill_workers(void)
{
	int master = read_pid("arps-fcgi.pid"), pids[64], nw, i, n = 0;

	assert_true(master > 0);
	nw = workers(master, pids, 64);
	for (i = 0; i < nw; i++)
		if (pids[i] > 0 && kill(pids[i], SIGKILL) == 0)
			n++;
	return n;
}

/* A MariaDB session of the test that holds a row lock (SELECT ... FOR
 * UPDATE: a read, no write) for `seconds`. */
static pid_t
hold_lock(const char *table, const char *col, const char *id, int seconds)
{
	char cmd[2048];
	pid_t pid;

	snprintf(cmd, sizeof cmd, "exec mariadb --no-defaults -N -B -S %s/run/mysqld.sock"
	    " -u \"$(id -un)\" arps -e \"BEGIN; SELECT %s FROM %s WHERE %s = '%s' FOR UPDATE;"
	    " SELECT SLEEP(%d); ROLLBACK;\" >/dev/null", getenv("ARPS_VAR"), col, table, col, id,
	    seconds);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

struct call {
	const char *path, *body, *auth, *key;
	struct resp r;
	int64_t ms;	/* how long the answer took */
};

static void *
call_run(void *arg)
{
	struct call *c = arg;
	char kh[320];
	int64_t t0 = now_ms();

	snprintf(kh, sizeof kh, "Idempotency-Key: %s", c->key);
	c->r = http_req("POST", c->path, c->body, HDRS(c->auth, kh), NULL);
	c->ms = now_ms() - t0;
	return NULL;
}

static const char study_body[] = "{\"title\":\"Crash\",\"description\":\"Killed first try\","
    "\"study_url\":\"https://c.example.org/\",\"reward_per_participant\":100,"
    "\"max_participants\":2,\"screening_criteria\":\"Anyone\","
    "\"estimated_duration_minutes\":5}";

/*
 * design.md §6.16: the first try of a create blocks on the researcher's
 * wallet (locked by the test's own session), a duplicate meanwhile is 409
 * "still in flight"; every worker is then SIGKILLed.  Once that first
 * try's connection is gone, the retry with the same key runs anew (201,
 * one study, one freeze) — never 409 — and a further retry replays it
 * byte for byte.
 */
static void
killed_first_try_does_not_hold_key(void **state)
{
	struct test_user u;
	struct call first = { "/api/v1/studies", study_body, NULL, NULL, { 0 }, 0 }, dup;
	pthread_t t, t2;
	char key[96], kh[128];
	long long conn = -1, hconn = -1, avail, frozen;
	struct resp r, again;
	pid_t holder;
	int i, st;

	(void)state;
	researcher(&u, 10000);
	snprintf(key, sizeof key, "crash-%s", u.id);
	snprintf(kh, sizeof kh, "Idempotency-Key: %s", key);
	first.auth = u.hdr;
	first.key = key;

	/* held far longer than the steps below take on a loaded machine (the
	 * first try must still wait when the duplicate answers); released by
	 * KILL QUERY once the workers are dead */
	holder = hold_lock("wallets", "owner_id", u.id, 60);
	/* the holder sleeps only once its FOR UPDATE has the row (another
	 * session's locks, such as arps-deliver's claims, must not count) */
	for (i = 0; i < 250 && (hconn = sql_int("SELECT MIN(ID) FROM information_schema.PROCESSLIST"
	    " WHERE INFO LIKE 'SELECT SLEEP(%%'")) < 1; i++)
		sleep_ms(20);
	assert_true(hconn > 0);
	assert_int_equal(pthread_create(&t, NULL, call_run, &first), 0);
	/* the first try waits on the wallet lock (another session's wait on
	 * anything else must not count): its connection's id */
	for (i = 0; i < 500; i++) {
		conn = sql_int("SELECT MIN(r.trx_mysql_thread_id) FROM information_schema.INNODB_TRX r"
		    " JOIN information_schema.INNODB_LOCKS l ON l.lock_id = r.trx_requested_lock_id"
		    " WHERE r.trx_state = 'LOCK WAIT' AND l.lock_table LIKE '%%`wallets`%%'");
		if (conn > 0)
			break;
		sleep_ms(10);
	}
	assert_true(conn > 0);

	/* alive: a duplicate waits on the first try's idempotency row (a row
	 * lock holds on every Galera node alike, a named lock on one:
	 * design.md §13.5) for its whole lock wait (2 s, db/limits.c), then
	 * is 409, and runs nothing; the first try is still waiting then.
	 * (No poll of INNODB_LOCKS for the duplicate's wait: sampling a 2 s
	 * window from a spawned client each time can miss it.) */
	dup = first;
	assert_int_equal(pthread_create(&t2, NULL, call_run, &dup), 0);
	pthread_join(t2, NULL);
	assert_error(&dup.r, 409, "IDEMPOTENCY_CONFLICT");
	assert_non_null(strstr(jstr(&dup.r, "detail"), "still in flight"));
	print_message("duplicate answered 409 after %lld ms\n", (long long)dup.ms);
	assert_true(dup.ms >= 1900);
	resp_free(&dup.r);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM information_schema.INNODB_TRX"
	    " WHERE trx_mysql_thread_id = %lld AND trx_state = 'LOCK WAIT'", conn), 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM studies WHERE researcher_id = '%s'", u.id), 0);

	assert_true(kill_workers() >= 1);
	pthread_join(t, NULL);
	assert_true(first.r.status == 502 || first.r.status == 503 || first.r.status == 0);
	resp_free(&first.r);
	sql_int("KILL QUERY %lld", hconn);	/* the holder's SLEEP ends: ROLLBACK */
	assert_int_equal(waitpid(holder, &st, 0), holder);
	/* the dead worker's session ends once its lock wait does */
	for (i = 0; i < 300 && sql_int("SELECT COUNT(*) FROM information_schema.PROCESSLIST"
	    " WHERE ID = %lld", conn) != 0; i++)
		sleep_ms(20);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %lld",
	    conn), 0);

	/* the retry runs anew: not 409 (the pool may still be respawning: a
	 * careful client retries a 502/503 with the same key) */
	for (i = 0; i < 50; i++) {
		r = http_req("POST", "/api/v1/studies", study_body, HDRS(u.hdr, kh), NULL);
		if (r.status != 502 && r.status != 503 && r.status != 0)
			break;
		resp_free(&r);
		sleep_ms(100);
	}
	assert_int_equal(r.status, 201);
	assert_null(resp_header(&r, "Idempotent-Replayed", kh, sizeof kh));
	snprintf(kh, sizeof kh, "Idempotency-Key: %s", key);
	again = http_req("POST", "/api/v1/studies", study_body, HDRS(u.hdr, kh), NULL);
	assert_int_equal(again.status, 201);
	assert_int_equal(again.len, r.len);
	assert_memory_equal(again.body, r.body, r.len);
	assert_non_null(resp_header(&again, "Idempotent-Replayed", kh, sizeof kh));
	resp_free(&again);
	resp_free(&r);
	/* one effect: one study, one freeze */
	r = get_as(u.hdr, "/api/v1/studies");
	assert_int_equal(json_object_array_length(jget(r.json, "studies")), 1);
	resp_free(&r);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(frozen, 2 * SLOT_OF(100));
	assert_int_equal(avail, 10000 - 2 * SLOT_OF(100));
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* ---- one researcher's concurrent mutations: no deadlock, no 503 ---- */

#define NT	16
#define NAG	16

static struct test_user rsr;
static struct test_agent ags[NAG];
static struct test_user ag_owner[NAG];
static struct {
	pthread_mutex_t mu;
	char study[512][IDS_BUFSZ];
	size_t n;
	unsigned long ok, s503, bad, creates, approvals, topups;
} mix = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void
tally(const struct resp *r, const char *what)
{
	pthread_mutex_lock(&mix.mu);
	if (r->status == 503)
		mix.s503++;
	if (r->status >= 500 || r->status == 0) {
		mix.bad++;
		fprintf(stderr, "txn: %s answered %ld %s\n", what, r->status, r->body ? r->body : "");
	} else
		mix.ok++;
	pthread_mutex_unlock(&mix.mu);
}

static void
mix_create(unsigned *seed)
{
	char body[512];
	struct resp r;

	snprintf(body, sizeof body, "{\"title\":\"Mix %u\",\"description\":\"m\","
	    "\"study_url\":\"https://m.example.org/\",\"reward_per_participant\":%u,"
	    "\"max_participants\":%u,\"screening_criteria\":\"any\","
	    "\"estimated_duration_minutes\":5,\"completion_code\":\"OK\"}",
	    (unsigned)rand_r(seed) % 1000, 10 + (unsigned)rand_r(seed) % 50,
	    2 + (unsigned)rand_r(seed) % 3);
	r = post_as(rsr.hdr, body, "/api/v1/studies");
	tally(&r, "create");
	if (r.status == 201) {
		pthread_mutex_lock(&mix.mu);
		mix.creates++;
		if (mix.n < 512)
			snprintf(mix.study[mix.n++], IDS_BUFSZ, "%s", jstr(&r, "id"));
		pthread_mutex_unlock(&mix.mu);
	}
	resp_free(&r);
}

/* An agent takes part in a random study of the researcher, and the
 * researcher approves it. */
static void
mix_take_part(unsigned *seed, int ai)
{
	char s[IDS_BUFSZ] = "", pid[64] = "";
	struct resp r;

	pthread_mutex_lock(&mix.mu);
	if (mix.n > 0)
		snprintf(s, sizeof s, "%s", mix.study[(size_t)rand_r(seed) % mix.n]);
	pthread_mutex_unlock(&mix.mu);
	if (s[0] == '\0')
		return;
	r = post_as(ags[ai].hdr, NULL, "/api/v1/studies/%s/accept", s);
	tally(&r, "accept");
	resp_free(&r);
	r = post_as(ags[ai].hdr, "{\"completion_code\":\"OK\"}", "/api/v1/studies/%s/complete", s);
	tally(&r, "complete");
	resp_free(&r);
	/* the researcher approves one submitted participant of the study */
	r = get_as(rsr.hdr, "/api/v1/studies/%s/participants", s);
	tally(&r, "participants");
	submitted_participant(&r, pid, sizeof pid);
	resp_free(&r);
	if (pid[0] == '\0') {
		/* nothing to approve: leave the study free for the next try */
		r = post_as(ags[ai].hdr, NULL, "/api/v1/studies/%s/withdraw", s);
		if (r.status >= 500 || r.status == 0)
			tally(&r, "withdraw");
		resp_free(&r);
		return;
	}
	r = post_as(rsr.hdr, NULL, "/api/v1/studies/%s/participants/%s/approve", s, pid);
	tally(&r, "approve");
	if (r.status == 200) {
		pthread_mutex_lock(&mix.mu);
		mix.approvals++;
		pthread_mutex_unlock(&mix.mu);
	}
	resp_free(&r);
}

static void *
mix_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + (unsigned)time(NULL);
	int ti = (int)(uintptr_t)arg, i;

	for (i = 0; i < 12; i++) {
		unsigned x = (unsigned)rand_r(&seed) % 10;

		if (x < 4)
			mix_create(&seed);
		else if (x < 9)
			mix_take_part(&seed, ti % NAG);
		else {
			struct resp r = { 0 };

			r.status = admin(NULL, 0, "topup %s 500", rsr.id) == 0 ? 200 : 500;
			tally(&r, "topup");
			pthread_mutex_lock(&mix.mu);
			mix.topups++;
			pthread_mutex_unlock(&mix.mu);
		}
	}
	return NULL;
}

/*
 * 16 threads of one researcher create studies, approve the
 * work of agents taking part in them, and top up the wallet (arps-admin):
 * 0 deadlocks (InnoDB's 1213, logged by db_tx on every retry it gives up
 * and counted here from the log before and after) and 0 answers of 503.
 */
static void
one_researcher_sixteen_threads(void **state)
{
	pthread_t t[NT];
	long dl0, dl1, gave0, gave1;
	size_t i;

	(void)state;
	researcher(&rsr, 200000);
	for (i = 0; i < NAG; i++)
		agent_claimed(&ags[i], &ag_owner[i], "mixer");
	dl0 = log_count("Deadlock found");
	gave0 = log_count("transaction gave up");
	for (i = 0; i < NT; i++)
		assert_int_equal(pthread_create(&t[i], NULL, mix_thread, (void *)(uintptr_t)i), 0);
	for (i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	dl1 = log_count("Deadlock found");
	gave1 = log_count("transaction gave up");
	fprintf(stderr, "txn: %lu answers, %lu creates, %lu approvals, %lu top-ups; "
	    "deadlocks logged %ld, 503s %lu\n", mix.ok, mix.creates, mix.approvals, mix.topups,
	    dl1 - dl0, mix.s503);
	assert_int_equal(dl1 - dl0, 0);
	assert_int_equal(gave1 - gave0, 0);
	assert_int_equal(mix.s503, 0);
	assert_int_equal(mix.bad, 0);
	assert_true(mix.creates > 0);
	assert_true(mix.approvals > 0);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static struct test_user rsr8;
static unsigned long c8_201, c8_bad;
static pthread_mutex_t c8_mu = PTHREAD_MUTEX_INITIALIZER;

static void *
creates_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 40; i++) {
		struct resp r = post_as(rsr8.hdr, "{\"title\":\"Eight\",\"description\":\"e\","
		    "\"study_url\":\"https://e.example.org/\",\"reward_per_participant\":10,"
		    "\"max_participants\":1,\"screening_criteria\":\"any\","
		    "\"estimated_duration_minutes\":5}", "/api/v1/studies");

		pthread_mutex_lock(&c8_mu);
		if (r.status == 201)
			c8_201++;
		else {
			c8_bad++;
			fprintf(stderr, "txn: create answered %ld %s\n", r.status, r.body ? r.body : "");
		}
		pthread_mutex_unlock(&c8_mu);
		resp_free(&r);
	}
	return NULL;
}

/* One researcher creating studies from 8 threads at once. */
static void
one_researcher_eight_threads_of_creates(void **state)
{
	pthread_t t[8];
	long dl0, dl1;
	size_t i;

	(void)state;
	researcher(&rsr8, 1000000);
	dl0 = log_count("Deadlock found");
	for (i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, creates_thread, NULL), 0);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	dl1 = log_count("Deadlock found");
	fprintf(stderr, "txn: 8 threads: %lu creates, deadlocks logged %ld\n", c8_201, dl1 - dl0);
	assert_int_equal(c8_bad, 0);
	assert_int_equal(c8_201, 8 * 40);
	assert_int_equal(dl1 - dl0, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(killed_first_try_does_not_hold_key),
		cmocka_unit_test(one_researcher_sixteen_threads),
		cmocka_unit_test(one_researcher_eight_threads_of_creates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
