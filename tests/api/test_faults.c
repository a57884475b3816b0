/*
 * Faults: the database unreachable, and workers and MariaDB
 * killed under load.
 *
 * 1. MariaDB stopped (refuses connections): health answers 503 and every
 *    worker reconnects by itself when it is back.  Stopped and frozen (SIGSTOP: accepts,
 *    never answers): a read, a mutation and health each answer 503
 *    SERVICE_UNAVAILABLE from the application (not nginx's 502 page)
 *    within 2 s; when it returns, the same workers answer 200 again
 *    (db/guard.h, the back-off of db_ensure).
 * 2. 16 careful clients run a mixed workload with an Idempotency-Key on
 *    every POST, retrying a transport error, 502, 503 or 504 with the
 *    same key after a back-off, while a worker is SIGKILLed every
 *    250-400 ms and MariaDB restarts once.  Afterwards every request was
 *    answered under 500 (directly or by a retry), every acknowledged write
 *    is in the database, nothing happened twice, and verify-ledger holds.
 */
#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/api/pool_helpers.h"
#include "tests/api/study_helpers.h"

static int
dev(const char *verb)
{
	return sh("%s/tools/dev.sh %s", getenv("ARPS_ROOT"), verb);
}

/* One request as the outage tests time it: the application's own 503. */
static void
assert_app_503_fast(const char *method, const char *path, const char *body, const char *hdr,
    const char *key)
{
	char kh[128], id[128];
	int64_t t0 = now_ms(), ms;
	struct resp r;

	snprintf(kh, sizeof kh, "Idempotency-Key: %s", key ? key : "-");
	r = http_req(method, path, body, hdr ? (key ? HDRS(hdr, kh) : HDRS(hdr)) : NULL, NULL);
	ms = now_ms() - t0;
	fprintf(stderr, "faults: %s %s with the database down: %ld in %lld ms\n", method, path,
	    r.status, (long long)ms);
	assert_error(&r, 503, "SERVICE_UNAVAILABLE");
	/* the application's detail, not nginx's page for a 502 or a timeout */
	assert_string_equal(jstr(&r, "detail"), "database unavailable, try again shortly");
	assert_true(ms < 2000);
	/* a 5xx is logged by the worker with the answer's id, even with
	 * log_requests off (design.md §15.2); the line follows the answer */
	assert_non_null(resp_header(&r, "X-Request-Id", id, sizeof id));
	assert_int_equal(sh_until(30, "grep -q '%s %s %s 503' %s/log/arps.log", id, method, path,
	    getenv("ARPS_VAR")), 0);
	resp_free(&r);
}

/* Poll GET path until 200, at most 10 s; returns the milliseconds it took. */
static int64_t
wait_200(const char *path, const char *hdr)
{
	int64_t t0 = now_ms();

	for (;;) {
		struct resp r = http_req("GET", path, NULL, hdr ? HDRS(hdr) : NULL, NULL);
		long st = r.status;

		resp_free(&r);
		if (st == 200)
			return now_ms() - t0;
		assert_true(st == 503);
		assert_true(now_ms() - t0 < 10000);
		sleep_ms(100);
	}
}

/*
 * The outage check: how = "db-stop" (refused) or "db-freeze" (hangs).
 * A read, a mutation (with a key) and health answer 503 within 2 s; then
 * the database returns and the very same workers answer 200, and the
 * mutation retried with its key runs once.
 */
static void
outage(const char *how, const char *back)
{
	static int round;
	struct test_user u;
	struct test_agent a;
	int before[64], after[64];
	size_t nb, na, i, j, kept;
	int master = read_pid("arps-fcgi.pid");
	char key[64], kh[96], body[512], path[128];
	long long studies;
	int64_t ms;
	struct resp r;

	researcher(&u, 10000);
	agent_new(&a, "outage");
	snprintf(key, sizeof key, "outage-%s-%d-%d", how, (int)getpid(), round++);
	snprintf(body, sizeof body, "{\"title\":\"Outage\",\"description\":\"d\","
	    "\"study_url\":\"https://o.example.org/\",\"reward_per_participant\":100,"
	    "\"max_participants\":2,\"screening_criteria\":\"any\","
	    "\"estimated_duration_minutes\":5}");
	nb = pool_workers(before, 64);
	assert_true(master > 0 && nb > 0);

	assert_int_equal(dev(how), 0);
	assert_app_503_fast("GET", "/api/v1/health", NULL, NULL, NULL);
	assert_app_503_fast("GET", "/api/v1/agents/me", NULL, a.hdr, NULL);
	assert_app_503_fast("GET", "/api/v1/wallet/balance", NULL, u.hdr, NULL);
	assert_app_503_fast("POST", "/api/v1/studies", body, u.hdr, key);
	assert_app_503_fast("PATCH", "/api/v1/agents/me", "{\"description\":\"during\"}", a.hdr,
	    NULL);
	assert_app_503_fast("GET", "/api/v1/health", NULL, NULL, NULL);
	assert_int_equal(dev(back), 0);

	ms = wait_200("/api/v1/health", NULL);
	fprintf(stderr, "faults: %s: health 200 again %lld ms after %s\n", how, (long long)ms,
	    back);
	wait_200("/api/v1/agents/me", a.hdr);
	/* a worker whose last connect failed waits out its back-off (at most
	 * 1 s, api.md §3) before it tries again, answering 503 meanwhile */
	sleep_ms(1100);
	/* every worker answers again, none restarted: 4 rounds over the pool */
	for (i = 0; i < 4 * nb; i++) {
		r = http_get("/api/v1/health", NULL);
		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
	/* the same master and workers: none was restarted to recover (one
	 * may have been recycled at max_requests meanwhile, not more) */
	assert_int_equal(read_pid("arps-fcgi.pid"), master);
	na = pool_workers(after, 64);
	assert_int_equal(na, nb);
	for (i = 0, kept = 0; i < nb; i++)
		for (j = 0; j < na; j++)
			kept += after[j] == before[i];
	assert_true(kept + 1 >= nb);
	/* the 503 stored nothing: the key runs now, once */
	snprintf(kh, sizeof kh, "Idempotency-Key: %s", key);
	r = http_req("POST", "/api/v1/studies", body, HDRS(u.hdr, kh), NULL);
	assert_int_equal(r.status, 201);
	snprintf(path, sizeof path, "%s", jstr(&r, "id"));
	resp_free(&r);
	r = http_req("POST", "/api/v1/studies", body, HDRS(u.hdr, kh), NULL);
	assert_int_equal(r.status, 201);
	assert_string_equal(jstr(&r, "id"), path);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/studies");
	assert_int_equal(r.status, 200);
	studies = (long long)json_object_array_length(jget(r.json, "studies"));
	assert_int_equal(studies, 1);
	resp_free(&r);
}

/* The database stopped: health answers 503, and every worker reconnects by
 * itself when it is back. */
static void
database_outage_503(void **state)
{
	int i, ok = 0;

	(void)state;
	assert_int_equal(sh("%s/tools/dev.sh db-stop", getenv("ARPS_ROOT")), 0);
	for (i = 0; i < 10; i++) {
		struct resp r = http_get("/api/v1/health", NULL);
		assert_error(&r, 503, "SERVICE_UNAVAILABLE");
		resp_free(&r);
	}
	assert_int_equal(sh("%s/tools/dev.sh db-start", getenv("ARPS_ROOT")), 0);
	/* Every worker reconnects by itself: no pool restart. */
	for (i = 0; i < 50; i++) {
		struct resp r = http_get("/api/v1/health", NULL);
		if (r.status == 200)
			ok++;
		resp_free(&r);
	}
	assert_int_equal(ok, 50);
}

static void
database_stopped(void **state)
{
	(void)state;
	outage("db-stop", "db-start");
}

static void
database_frozen(void **state)
{
	(void)state;
	outage("db-freeze", "db-thaw");
}

/* Whatever failed in database_frozen: the stack's MariaDB runs on. */
static int
thaw(void **state)
{
	(void)state;
	return dev("db-thaw") == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* 2. The workload under kill -9 and a MariaDB restart.               */

#define NTHREADS	16
#define NRES		4
#define NAGENTS		16
#define RUN_MS		45000	/* the workload's length */
#define RESTART_AT_MS	15000	/* MariaDB restarts once, here */
#define GIVE_UP_MS	45000	/* a careful client retries this long */
#define MAXSTUDIES	16384
#define MAXPARTS	16384
#define MAXTOPUPS	512

enum op {
	OP_CREATE, OP_ACCEPT, OP_OPEN, OP_COMPLETE, OP_WITHDRAW, OP_APPROVE, OP_REJECT,
	OP_PAUSE, OP_RESUME, OP_STOP, OP_TOPUP, OP_WALLET, OP__MAX
};

static const unsigned weight[OP__MAX] = {
	[OP_CREATE] = 8, [OP_ACCEPT] = 20, [OP_OPEN] = 6, [OP_COMPLETE] = 16,
	[OP_WITHDRAW] = 4, [OP_APPROVE] = 12, [OP_REJECT] = 5, [OP_PAUSE] = 3,
	[OP_RESUME] = 3, [OP_STOP] = 2, [OP_TOPUP] = 3, [OP_WALLET] = 6,
};

/* What a client was told: its own log of acknowledged writes. */
enum ack { ACK_ACCEPTED, ACK_SUBMITTED, ACK_WITHDRAWN };

static struct test_user res[NRES];
static struct test_agent agents[NAGENTS];
static struct test_user owners[NAGENTS];

static struct {
	pthread_mutex_t mu;
	volatile int stop;
	struct {
		char id[IDS_BUFSZ];
		int owner;
		long long reward;
		int stopped;		/* a stop was acknowledged */
	} study[MAXSTUDIES];
	size_t nstudies, creating;	/* creating: sent, slot reserved */
	size_t accepting;		/* accepts sent, slot reserved */
	struct {
		char id[IDS_BUFSZ];
		int agent;
		enum ack ack;
	} part[MAXPARTS];
	size_t nparts;
	struct {
		char study[IDS_BUFSZ];
		char pid[40];
		int approved;
	} review[MAXPARTS];
	size_t nreviews;
	struct {
		int owner;
		long long cents;
		int acked;		/* arps-admin exited 0; else the outcome is unknown */
	} topup[MAXTOPUPS];
	size_t ntopups;
	long long topup_seq;
	unsigned long ops, retries, conflicts, bad, status[600];
	int64_t max_try_ms, max_op_ms;
	unsigned long kills;
	pid_t last_kill;
	int64_t restart_ms;
} w = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int
retriable(long st)
{
	return st == 0 || st == 502 || st == 503 || st == 504;
}

/*
 * One request as a careful client makes it: a POST carries an
 * Idempotency-Key; a transport error, 502, 503 or 504 is retried with the
 * same key and body after 50 ms, doubling to 800 ms, for up to GIVE_UP_MS.
 * The final answer is returned; anything still >= 500 is counted bad.
 */
static struct resp
careful(int t, const char *method, const char *hdr, const char *body, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static struct resp
careful(int t, const char *method, const char *hdr, const char *body, const char *fmt, ...)
{
	static unsigned long seq[NTHREADS];
	char path[512], kh[96];
	int64_t t0 = now_ms(), back = 50, t1, ms;
	int post = strcmp(method, "POST") == 0;
	struct resp r;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	snprintf(kh, sizeof kh, "Idempotency-Key: fault-%d-%d-%lu", (int)getpid(), t, ++seq[t]);
	for (;;) {
		t1 = now_ms();
		r = http_req(method, path, body, post ? HDRS(hdr, kh) : HDRS(hdr), NULL);
		ms = now_ms() - t1;
		pthread_mutex_lock(&w.mu);
		if (ms > w.max_try_ms)
			w.max_try_ms = ms;
		pthread_mutex_unlock(&w.mu);
		if (!retriable(r.status) || now_ms() - t0 > GIVE_UP_MS)
			break;
		resp_free(&r);
		pthread_mutex_lock(&w.mu);
		w.retries++;
		pthread_mutex_unlock(&w.mu);
		sleep_ms(back);
		back = back * 2 > 800 ? 800 : back * 2;
	}
	pthread_mutex_lock(&w.mu);
	w.ops++;
	if (now_ms() - t0 > w.max_op_ms)
		w.max_op_ms = now_ms() - t0;
	if (r.status >= 0 && r.status < 600)
		w.status[r.status]++;
	if (r.status >= 500 || r.status == 0) {
		w.bad++;
		fprintf(stderr, "faults: %s %s unresolved: %ld %s\n", method, path, r.status,
		    r.body ? r.body : "");
	}
	if (r.status == 409 && strcmp(jstr(&r, "error_code"), "IDEMPOTENCY_CONFLICT") == 0) {
		w.conflicts++;
		fprintf(stderr, "faults: %s %s: 409 %s\n", method, path, r.body);
	}
	pthread_mutex_unlock(&w.mu);
	return r;
}

static int
pick_study(unsigned *seed, char id[IDS_BUFSZ], int *owner)
{
	int ok = 0;

	pthread_mutex_lock(&w.mu);
	if (w.nstudies > 0) {
		size_t i = (size_t)rand_r(seed) % w.nstudies;
		snprintf(id, IDS_BUFSZ, "%s", w.study[i].id);
		*owner = w.study[i].owner;
		ok = 1;
	}
	pthread_mutex_unlock(&w.mu);
	return ok;
}

static enum op
pick_op(unsigned *seed)
{
	unsigned total = 0, x, i;

	for (i = 0; i < OP__MAX; i++)
		total += weight[i];
	x = (unsigned)rand_r(seed) % total;
	for (i = 0; i < OP__MAX; i++) {
		if (x < weight[i])
			return (enum op)i;
		x -= weight[i];
	}
	return OP_WALLET;
}

/* The agent's current study, else a random one. */
static int
agent_study(int t, unsigned *seed, int ai, char id[IDS_BUFSZ])
{
	struct resp r;
	int owner, ok = 0;

	if (rand_r(seed) % 5 != 0) {
		r = careful(t, "GET", agents[ai].hdr, NULL, "/api/v1/agents/me");
		if (ids_valid(IDS_STUDY, jgets(&r, "current_study.study_id"))) {
			snprintf(id, IDS_BUFSZ, "%s", jgets(&r, "current_study.study_id"));
			ok = 1;
		}
		resp_free(&r);
		if (ok)
			return 1;
	}
	return pick_study(seed, id, &owner);
}

static void
set_ack(const char *pid, enum ack ack)
{
	size_t i;

	pthread_mutex_lock(&w.mu);
	for (i = 0; i < w.nparts; i++)
		if (strcmp(w.part[i].id, pid) == 0)
			w.part[i].ack = ack;
	pthread_mutex_unlock(&w.mu);
}

static void
review_one(int t, unsigned *seed, int approve)
{
	char s[IDS_BUFSZ], pid[40];
	struct resp r;
	int owner;

	if (!pick_study(seed, s, &owner))
		return;
	r = careful(t, "GET", res[owner].hdr, NULL, "/api/v1/studies/%s/participants", s);
	submitted_participant(&r, pid, sizeof pid);
	resp_free(&r);
	if (pid[0] == '\0')
		return;
	r = careful(t, "POST", res[owner].hdr, approve ? NULL : "{\"reason\":\"faults\"}",
	    "/api/v1/studies/%s/participants/%s/%s", s, pid, approve ? "approve" : "reject");
	if (r.status == 200) {
		pthread_mutex_lock(&w.mu);
		if (strcmp(jstr(&r, "status"), approve ? "approved" : "rejected") != 0) {
			w.bad++;	/* no cmocka assertion off the test's thread */
			fprintf(stderr, "faults: review answered %s\n", r.body);
		}
		snprintf(w.review[w.nreviews].study, IDS_BUFSZ, "%s", s);
		snprintf(w.review[w.nreviews].pid, sizeof w.review[0].pid, "%s", pid);
		w.review[w.nreviews++].approved = approve;
		pthread_mutex_unlock(&w.mu);
	}
	resp_free(&r);
}

static void
one_op(int t, unsigned *seed)
{
	static const char *const verb[OP__MAX] = {
		[OP_ACCEPT] = "accept", [OP_COMPLETE] = "complete", [OP_WITHDRAW] = "withdraw",
		[OP_PAUSE] = "pause", [OP_RESUME] = "resume", [OP_STOP] = "stop",
	};
	enum op op = pick_op(seed);
	int ri = rand_r(seed) % NRES, ai = rand_r(seed) % NAGENTS, owner;
	char s[IDS_BUFSZ], body[1024];
	long long reward, cents;
	struct resp r;
	size_t i;
	int rc;

	switch (op) {
	case OP_CREATE:
		reward = 1 + rand_r(seed) % 300;
		snprintf(body, sizeof body, "{\"title\":\"Fault %d\",\"description\":\"f\","
		    "\"study_url\":\"https://f.example.org/?x=1\",\"reward_per_participant\":%lld,"
		    "\"max_participants\":%d,\"screening_criteria\":\"any\","
		    "\"estimated_duration_minutes\":5,\"completion_code\":\"OK\"}",
		    rand_r(seed) % 1000, reward, 1 + rand_r(seed) % 4);
		/* never create a study the log has no room for: the checks
		 * compare the log with the database exactly */
		pthread_mutex_lock(&w.mu);
		if (w.nstudies + w.creating >= MAXSTUDIES) {
			pthread_mutex_unlock(&w.mu);
			return;
		}
		w.creating++;
		pthread_mutex_unlock(&w.mu);
		r = careful(t, "POST", res[ri].hdr, body, "/api/v1/studies");
		pthread_mutex_lock(&w.mu);
		w.creating--;
		if (r.status == 201) {
			snprintf(w.study[w.nstudies].id, IDS_BUFSZ, "%s", jstr(&r, "id"));
			w.study[w.nstudies].owner = ri;
			w.study[w.nstudies++].reward = reward;
		}
		pthread_mutex_unlock(&w.mu);
		resp_free(&r);
		break;
	case OP_ACCEPT:
		if (!pick_study(seed, s, &owner))
			return;
		pthread_mutex_lock(&w.mu);
		if (w.nparts + w.accepting >= MAXPARTS) {
			pthread_mutex_unlock(&w.mu);
			return;
		}
		w.accepting++;
		pthread_mutex_unlock(&w.mu);
		r = careful(t, "POST", agents[ai].hdr, NULL, "/api/v1/studies/%s/accept", s);
		pthread_mutex_lock(&w.mu);
		w.accepting--;
		pthread_mutex_unlock(&w.mu);
		if (r.status == 200 || r.status == 201) {
			pthread_mutex_lock(&w.mu);
			if (!ids_valid(IDS_PARTICIPATION, jstr(&r, "participation_id"))) {
				w.bad++;
				fprintf(stderr, "faults: accept answered %s\n", r.body);
			}
			if (w.nparts < MAXPARTS) {
				snprintf(w.part[w.nparts].id, IDS_BUFSZ, "%s", jstr(&r, "participation_id"));
				w.part[w.nparts].agent = ai;
				w.part[w.nparts++].ack = ACK_ACCEPTED;
			}
			pthread_mutex_unlock(&w.mu);
		}
		resp_free(&r);
		break;
	case OP_COMPLETE:
	case OP_WITHDRAW:
		if (!agent_study(t, seed, ai, s))
			return;
		r = careful(t, "POST", agents[ai].hdr, op == OP_COMPLETE ?
		    "{\"completion_code\":\"OK\"}" : NULL, "/api/v1/studies/%s/%s", s, verb[op]);
		if (r.status == 200)
			set_ack(jstr(&r, "participation_id"),
			    op == OP_COMPLETE ? ACK_SUBMITTED : ACK_WITHDRAWN);
		resp_free(&r);
		break;
	case OP_OPEN:
		if (!agent_study(t, seed, ai, s))
			return;
		r = careful(t, "GET", agents[ai].hdr, NULL, "/api/v1/studies/%s", s);
		resp_free(&r);
		break;
	case OP_APPROVE:
	case OP_REJECT:
		review_one(t, seed, op == OP_APPROVE);
		break;
	case OP_PAUSE:
	case OP_RESUME:
	case OP_STOP:
		if (!pick_study(seed, s, &owner))
			return;
		r = careful(t, "POST", res[owner].hdr, NULL, "/api/v1/studies/%s/%s", s, verb[op]);
		if (r.status == 200 && op == OP_STOP) {
			pthread_mutex_lock(&w.mu);
			for (i = 0; i < w.nstudies; i++)
				if (strcmp(w.study[i].id, s) == 0)
					w.study[i].stopped = 1;
			pthread_mutex_unlock(&w.mu);
		}
		resp_free(&r);
		break;
	case OP_TOPUP:
		/* arps-admin has no key: every amount is unique, so the books
		 * can tell each top-up apart (and any that ran twice) */
		pthread_mutex_lock(&w.mu);
		if (w.ntopups >= MAXTOPUPS) {
			pthread_mutex_unlock(&w.mu);
			return;
		}
		cents = 10000 + ++w.topup_seq;
		i = w.ntopups++;
		w.topup[i].owner = ri;
		w.topup[i].cents = cents;
		pthread_mutex_unlock(&w.mu);
		rc = admin(NULL, 0, "topup %s %lld", res[ri].id, cents);
		pthread_mutex_lock(&w.mu);
		w.topup[i].acked = rc == 0;
		pthread_mutex_unlock(&w.mu);
		break;
	case OP_WALLET:
		r = careful(t, "GET", rand_r(seed) % 2 ? res[ri].hdr : agents[ai].hdr, NULL,
		    "/api/v1/wallet/%s", rand_r(seed) % 2 ? "balance" : "transactions");
		resp_free(&r);
		break;
	case OP__MAX:
		break;
	}
}

static void *
client(void *arg)
{
	int t = *(int *)arg;
	unsigned seed = (unsigned)time(NULL) + (unsigned)t * 7919u;

	while (!w.stop)
		one_op(t, &seed);
	return NULL;
}

/* SIGKILL a random worker every 250-400 ms until w.stop. */
static void *
killer(void *arg)
{
	unsigned seed = (unsigned)time(NULL) ^ 0x5eed;
	int pids[64];
	size_t n;

	(void)arg;
	while (!w.stop) {
		sleep_ms(250 + rand_r(&seed) % 151);
		pid_t p;

		if ((n = pool_workers(pids, 64)) > 0 &&
		    kill(p = pids[(size_t)rand_r(&seed) % n], SIGKILL) == 0) {
			pthread_mutex_lock(&w.mu);
			w.kills++;
			w.last_kill = p;
			pthread_mutex_unlock(&w.mu);
		}
	}
	return NULL;
}

/* Every page of a list as one array of the list key's items (caller puts). */
static struct json_object *
list_all(const char *hdr, const char *path, const char *key)
{
	struct json_object *all = json_object_new_array(), *arr;
	char cursor[256] = "";
	size_t i;

	for (;;) {
		struct resp r = get_as(hdr, "%s%slimit=200%s%s", path, strchr(path, '?') ? "&" : "?",
		    cursor[0] ? "&cursor=" : "", cursor);

		assert_int_equal(r.status, 200);
		arr = jget(r.json, key);
		assert_non_null(arr);
		for (i = 0; i < json_object_array_length(arr); i++)
			json_object_array_add(all, json_object_get(json_object_array_get_idx(arr, i)));
		snprintf(cursor, sizeof cursor, "%s", jgets(&r, "next_cursor"));
		resp_free(&r);
		if (cursor[0] == '\0')
			return all;
	}
}

static const char *
item_str(struct json_object *it, const char *key)
{
	struct json_object *v = jget(it, key);

	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

static void
faults_under_load(void **state)
{
	pthread_t t[NTHREADS], k;
	int ids[NTHREADS];
	int64_t t0, r0;
	size_t i, j;
	long long approved = 0, rejected = 0, acked_topups = 0;

	(void)state;
	for (i = 0; i < NRES; i++)
		researcher(&res[i], 100000);
	for (i = 0; i < NAGENTS; i++)
		agent_claimed(&agents[i], &owners[i], "fault");

	t0 = now_ms();
	for (i = 0; i < NTHREADS; i++) {
		ids[i] = (int)i;
		assert_int_equal(pthread_create(&t[i], NULL, client, &ids[i]), 0);
	}
	assert_int_equal(pthread_create(&k, NULL, killer, NULL), 0);
	sleep_ms(RESTART_AT_MS);
	r0 = now_ms();
	assert_int_equal(dev("db-stop"), 0);
	assert_int_equal(dev("db-start"), 0);
	w.restart_ms = now_ms() - r0;
	if (now_ms() - t0 < RUN_MS)
		sleep_ms(RUN_MS - (now_ms() - t0));
	w.stop = 1;
	pthread_join(k, NULL);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	/* The killer's last SIGKILL (it may come just after the stop) takes
	 * effect when its worker next runs, which can be after it accepted
	 * one more connection: the checks below start once it is dead. */
	for (i = 0; i < 100 && w.last_kill > 0 && !pid_exited(w.last_kill); i++)
		sleep_ms(20);
	assert_true(w.last_kill > 0 && pid_exited(w.last_kill));

	fprintf(stderr, "faults: %lu requests in %lld s, %lu workers SIGKILLed, MariaDB restarted "
	    "in %.1f s, %lu retries, max latency %lld ms per try and %lld ms per request "
	    "(with its retries); %zu studies, %zu accepts, %zu reviews, %zu top-ups; "
	    "200:%lu 201:%lu 400:%lu 402:%lu 404:%lu 409:%lu 422:%lu\n",
	    w.ops, (long long)(now_ms() - t0) / 1000, w.kills, (double)w.restart_ms / 1000,
	    w.retries, (long long)w.max_try_ms, (long long)w.max_op_ms, w.nstudies, w.nparts,
	    w.nreviews, w.ntopups, w.status[200], w.status[201], w.status[400], w.status[402],
	    w.status[404], w.status[409], w.status[422]);
	assert_int_equal(w.bad, 0);
	assert_int_equal(w.conflicts, 0);
	assert_true(w.kills >= 50);
	assert_true(w.retries > 0);
	assert_true(w.nstudies > 0 && w.nparts > 0);

	/* Creates: each researcher has exactly the studies it was told of. */
	for (i = 0; i < NRES; i++) {
		struct json_object *all = list_all(res[i].hdr, "/api/v1/studies", "studies");
		size_t mine = 0;

		for (j = 0; j < w.nstudies; j++)
			if (w.study[j].owner == (int)i)
				mine++;
		assert_int_equal(json_object_array_length(all), mine);
		for (j = 0; j < w.nstudies; j++) {
			size_t m, found = 0;

			if (w.study[j].owner != (int)i)
				continue;
			for (m = 0; m < json_object_array_length(all); m++)
				found += strcmp(item_str(json_object_array_get_idx(all, m), "id"),
				    w.study[j].id) == 0;
			assert_int_equal(found, 1);
		}
		json_object_put(all);
	}

	/* Accepts, completes, withdraws: each agent's history is what it was
	 * told, and its wallet holds exactly its approved rewards. */
	for (i = 0; i < NAGENTS; i++) {
		struct json_object *all = list_all(agents[i].hdr, "/api/v1/studies/history",
		    "participations");
		struct json_object *earn = list_all(agents[i].hdr,
		    "/api/v1/wallet/transactions?type=earning", "transactions");
		long long mine = 0, paid = 0, napproved = 0, avail, frozen;

		for (j = 0; j < w.nparts; j++) {
			size_t m, found = 0;
			const char *st = "";

			if (w.part[j].agent != (int)i)
				continue;
			mine++;
			for (m = 0; m < json_object_array_length(all); m++) {
				struct json_object *it = json_object_array_get_idx(all, m);

				if (strcmp(item_str(it, "participation_id"), w.part[j].id) == 0) {
					found++;
					st = item_str(it, "status");
				}
			}
			assert_int_equal(found, 1);
			if (w.part[j].ack == ACK_WITHDRAWN)
				assert_string_equal(st, "withdrawn");
			if (w.part[j].ack == ACK_SUBMITTED)
				assert_true(strcmp(st, "submitted") == 0 || strcmp(st, "approved") == 0 ||
				    strcmp(st, "rejected") == 0);
		}
		assert_int_equal((long long)json_object_array_length(all), mine);
		for (j = 0; j < json_object_array_length(all); j++) {
			struct json_object *it = json_object_array_get_idx(all, j), *v;

			if (strcmp(item_str(it, "status"), "approved") == 0) {
				napproved++;
				v = jget(it, "reward_per_participant");
				paid += v ? json_object_get_int64(v) : -1000000;
			}
		}
		assert_int_equal((long long)json_object_array_length(earn), napproved);
		balance_of(agents[i].hdr, &avail, &frozen);
		assert_int_equal(frozen, 0);
		assert_int_equal(avail, 100 + paid);	/* the signup bonus and each earning once */
		json_object_put(all);
		json_object_put(earn);
	}

	for (i = 0; i < w.nreviews; i++) {
		if (w.review[i].approved)
			approved++;
		else
			rejected++;
	}
	{
		long long s_approved = 0, s_rejected = 0;

		for (i = 0; i < NRES; i++) {
			long long spent = 0, sfrozen = 0, topups = 0, avail, frozen;
			struct json_object *tx = list_all(res[i].hdr,
			    "/api/v1/wallet/transactions?type=manual_topup", "transactions");

			/* Top-ups: each acknowledged one booked once, none unknown to us. */
			for (j = 0; j < json_object_array_length(tx); j++) {
				long long c = json_object_get_int64(jget(json_object_array_get_idx(tx, j),
				    "amount_cents"));
				size_t m, known = 0;

				topups += c;
				if (c == 100000)
					continue;	/* the first, before the run */
				for (m = 0; m < w.ntopups; m++)
					known += w.topup[m].owner == (int)i && w.topup[m].cents == c;
				assert_int_equal(known, 1);
			}
			for (j = 0; j < w.ntopups; j++) {
				size_t m, found = 0;

				if (w.topup[j].owner != (int)i || !w.topup[j].acked)
					continue;
				acked_topups++;
				for (m = 0; m < json_object_array_length(tx); m++)
					found += json_object_get_int64(jget(json_object_array_get_idx(tx, m),
					    "amount_cents")) == w.topup[j].cents;
				assert_int_equal(found, 1);
			}
			json_object_put(tx);

			for (j = 0; j < w.nstudies; j++) {
				struct resp r;
				struct json_object *parts;
				char path[128];
				size_t m;

				if (w.study[j].owner != (int)i)
					continue;
				r = get_as(res[i].hdr, "/api/v1/studies/%s", w.study[j].id);
				assert_int_equal(r.status, 200);
				assert_int_equal(jgeti(&r, "funding.frozen_cents") +
				    jgeti(&r, "funding.spent_cents") + jgeti(&r, "funding.refunded_cents"),
				    jgeti(&r, "max_participants") * (jgeti(&r, "reward_per_participant") +
				    jgeti(&r, "funding.fee_cents_per_participant")));
				assert_int_equal(jgeti(&r, "funding.spent_cents"), jgeti(&r, "stats.approved") *
				    (jgeti(&r, "reward_per_participant") +
				    jgeti(&r, "funding.fee_cents_per_participant")));
				if (w.study[j].stopped) {
					assert_string_not_equal(jstr(&r, "status"), "active");
					assert_string_not_equal(jstr(&r, "status"), "paused");
				}
				spent += jgeti(&r, "funding.spent_cents");
				sfrozen += jgeti(&r, "funding.frozen_cents");
				s_approved += jgeti(&r, "stats.approved");
				s_rejected += jgeti(&r, "stats.rejected");
				resp_free(&r);

				/* each acknowledged approval and rejection stands */
				snprintf(path, sizeof path, "/api/v1/studies/%s/participants", w.study[j].id);
				parts = list_all(res[i].hdr, path, "participants");
				for (m = 0; m < w.nreviews; m++) {
					size_t q, found = 0;

					if (strcmp(w.review[m].study, w.study[j].id) != 0)
						continue;
					for (q = 0; q < json_object_array_length(parts); q++) {
						struct json_object *it = json_object_array_get_idx(parts, q);

						if (strcmp(item_str(it, "participant_id"), w.review[m].pid) == 0) {
							found++;
							assert_string_equal(item_str(it, "status"),
							    w.review[m].approved ? "approved" : "rejected");
						}
					}
					assert_int_equal(found, 1);
				}
				json_object_put(parts);
			}
			balance_of(res[i].hdr, &avail, &frozen);
			assert_int_equal(frozen, sfrozen);
			/* a freeze, refund or payout that ran twice breaks this */
			assert_int_equal(avail + frozen, topups - spent);
		}
		fprintf(stderr, "faults: %lld approvals and %lld rejections acknowledged; the studies "
		    "count %lld and %lld; %lld top-ups acknowledged\n", approved, rejected,
		    s_approved, s_rejected, acked_topups);
		assert_int_equal(s_approved, approved);
		assert_int_equal(s_rejected, rejected);
	}
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(database_outage_503),
		cmocka_unit_test(database_stopped),
		cmocka_unit_test_teardown(database_frozen, thaw),
		cmocka_unit_test(faults_under_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
