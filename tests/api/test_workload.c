/*
 * A randomized workload: 16 threads run a fixed number of mixed operations
 * (create, accept, open, complete, withdraw, approve, reject, pause,
 * resume, stop, top-up and cash-out via arps-admin) against shared
 * researchers, agents and studies.  Afterwards every answer was < 500,
 * arps-admin verify-ledger holds, and the money adds up to the cent:
 * the sum of these users' wallets == top-ups + signup bonuses - cash-outs
 * - platform revenue of these studies (from the API), and the same over the
 * whole database (from SQL).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

#define NTHREADS	16
#define NOPS		40	/* per thread */
#define NRES		4
#define NAGENTS		16
#define MAXSTUDIES	(NTHREADS * NOPS)

enum op {
	OP_CREATE, OP_ACCEPT, OP_OPEN, OP_COMPLETE, OP_WITHDRAW, OP_APPROVE, OP_REJECT,
	OP_PAUSE, OP_RESUME, OP_STOP, OP_TOPUP, OP_CASHOUT, OP__MAX
};

/* Relative frequency of each operation. */
static const unsigned weight[OP__MAX] = {
	[OP_CREATE] = 8, [OP_ACCEPT] = 20, [OP_OPEN] = 6, [OP_COMPLETE] = 16,
	[OP_WITHDRAW] = 4, [OP_APPROVE] = 12, [OP_REJECT] = 5, [OP_PAUSE] = 3,
	[OP_RESUME] = 3, [OP_STOP] = 2, [OP_TOPUP] = 3, [OP_CASHOUT] = 2,
};

static struct test_user res[NRES];
static struct test_agent agents[NAGENTS];
static struct test_user owners[NAGENTS];

static struct {
	pthread_mutex_t mu;
	char study[MAXSTUDIES][IDS_BUFSZ];
	int owner[MAXSTUDIES];
	size_t nstudies;
	long long topups, cashouts;
	unsigned long status[600];
	unsigned long ops[OP__MAX];
	int bad;
} w = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void
record(enum op op, long status, const struct resp *r)
{
	pthread_mutex_lock(&w.mu);
	w.ops[op]++;
	if (status >= 0 && status < 600)
		w.status[status]++;
	if (status >= 500 || status == 0) {
		w.bad++;
		fprintf(stderr, "workload: op %d answered %ld %s\n", (int)op, status,
		    r && r->body ? r->body : "");
	}
	pthread_mutex_unlock(&w.mu);
}

/* A random known study (and its owner index); 0 when none yet. */
static int
pick_study(unsigned *seed, char id[IDS_BUFSZ], int *owner)
{
	int ok = 0;

	pthread_mutex_lock(&w.mu);
	if (w.nstudies > 0) {
		size_t i = (size_t)rand_r(seed) % w.nstudies;
		snprintf(id, IDS_BUFSZ, "%s", w.study[i]);
		*owner = w.owner[i];
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
	return OP_ACCEPT;
}

/* The agent's active study (GET /agents/me), else a random one; 0 when
 * there is neither. */
static int
agent_study(unsigned *seed, int ai, char id[IDS_BUFSZ])
{
	struct resp r;
	int owner, ok = 0;

	if (rand_r(seed) % 5 != 0) {
		r = get_as(agents[ai].hdr, "/api/v1/agents/me");
		record(OP_OPEN, r.status, &r);
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

/* Review one submitted participant of a study, if any. */
static void
review_one(unsigned *seed, enum op op)
{
	char s[IDS_BUFSZ], pid[40], path[256];
	struct resp r;
	int owner;

	if (!pick_study(seed, s, &owner))
		return;
	r = get_as(res[owner].hdr, "/api/v1/studies/%s/participants", s);
	record(op, r.status, &r);
	submitted_participant(&r, pid, sizeof pid);
	resp_free(&r);
	if (pid[0] == '\0')
		return;
	snprintf(path, sizeof path, "/api/v1/studies/%s/participants/%s/%s", s, pid,
	    op == OP_APPROVE ? "approve" : "reject");
	r = http_req("POST", path, op == OP_REJECT ? "{\"reason\":\"workload\"}" : NULL,
	    HDRS(res[owner].hdr), NULL);
	record(op, r.status, &r);
	resp_free(&r);
}

static void
one_op(unsigned *seed)
{
	static const char *const verb[OP__MAX] = {
		[OP_ACCEPT] = "accept", [OP_COMPLETE] = "complete", [OP_WITHDRAW] = "withdraw",
		[OP_PAUSE] = "pause", [OP_RESUME] = "resume", [OP_STOP] = "stop",
	};
	enum op op = pick_op(seed);
	int ri = rand_r(seed) % NRES, ai = rand_r(seed) % NAGENTS, owner;
	char s[IDS_BUFSZ], body[1024];
	long long cents;
	struct resp r;

	switch (op) {
	case OP_CREATE:
		snprintf(body, sizeof body, "{\"title\":\"Load %d\",\"description\":\"w\","
		    "\"study_url\":\"https://w.example.org/?x=1\",\"reward_per_participant\":%d,"
		    "\"max_participants\":%d,\"screening_criteria\":\"any\","
		    "\"estimated_duration_minutes\":5%s}", rand_r(seed) % 1000,
		    1 + rand_r(seed) % 500, 1 + rand_r(seed) % 4,
		    rand_r(seed) % 4 == 0 ? ",\"completion_code\":\"OK\"" : "");
		r = post_as(res[ri].hdr, body, "/api/v1/studies");
		record(op, r.status, &r);
		if (r.status == 201) {
			pthread_mutex_lock(&w.mu);
			if (w.nstudies < MAXSTUDIES) {
				snprintf(w.study[w.nstudies], IDS_BUFSZ, "%s", jstr(&r, "id"));
				w.owner[w.nstudies++] = ri;
			}
			pthread_mutex_unlock(&w.mu);
		}
		resp_free(&r);
		break;
	case OP_ACCEPT:
	case OP_COMPLETE:
	case OP_WITHDRAW:
		if (op == OP_ACCEPT ? !pick_study(seed, s, &owner) : !agent_study(seed, ai, s))
			return;
		/* completes mostly carry the right code, sometimes a wrong one */
		r = post_as(agents[ai].hdr, op != OP_COMPLETE ? NULL : rand_r(seed) % 5 == 0 ?
		    "{\"completion_code\":\"NO\"}" : "{\"completion_code\":\"OK\"}",
		    "/api/v1/studies/%s/%s", s, verb[op]);
		record(op, r.status, &r);
		resp_free(&r);
		break;
	case OP_OPEN:
		if (!agent_study(seed, ai, s))
			return;
		r = get_as(agents[ai].hdr, "/api/v1/studies/%s", s);
		record(op, r.status, &r);
		resp_free(&r);
		break;
	case OP_APPROVE:
	case OP_REJECT:
		review_one(seed, op);
		break;
	case OP_PAUSE:
	case OP_RESUME:
	case OP_STOP:
		if (!pick_study(seed, s, &owner))
			return;
		r = post_as(res[owner].hdr, NULL, "/api/v1/studies/%s/%s", s, verb[op]);
		record(op, r.status, &r);
		resp_free(&r);
		break;
	case OP_TOPUP:
		cents = 100 + rand_r(seed) % 5000;
		if (admin(NULL, 0, "topup %s %lld", res[ri].id, cents) == 0) {
			pthread_mutex_lock(&w.mu);
			w.topups += cents;
			pthread_mutex_unlock(&w.mu);
		}
		record(op, 200, NULL);
		break;
	case OP_CASHOUT:
		cents = 1 + rand_r(seed) % 2000;
		if (admin(NULL, 0, "cashout %s %lld", rand_r(seed) % 2 ? res[ri].id : agents[ai].id,
		    cents) == 0) {
			pthread_mutex_lock(&w.mu);
			w.cashouts += cents;
			pthread_mutex_unlock(&w.mu);
		}
		record(op, 200, NULL);
		break;
	case OP__MAX:
		break;
	}
}

static void *
worker(void *arg)
{
	unsigned seed = *(unsigned *)arg;
	int i;

	for (i = 0; i < NOPS; i++)
		one_op(&seed);
	return NULL;
}

static void
workload(void **state)
{
	pthread_t t[NTHREADS];
	unsigned seeds[NTHREADS], base = (unsigned)time(NULL);
	long long total = 0, revenue = 0, avail, frozen, global;
	struct resp r;
	size_t i;

	(void)state;
	if (getenv("ARPS_WORKLOAD_SEED") != NULL)
		base = (unsigned)strtoul(getenv("ARPS_WORKLOAD_SEED"), NULL, 10);
	fprintf(stderr, "workload: seed %u\n", base);
	for (i = 0; i < NRES; i++) {
		researcher(&res[i], 20000);
		w.topups += 20000;
	}
	for (i = 0; i < NAGENTS; i++)
		agent_claimed(&agents[i], &owners[i], "load");
	for (i = 0; i < NTHREADS; i++) {
		seeds[i] = base + (unsigned)i * 7919u;
		assert_int_equal(pthread_create(&t[i], NULL, worker, &seeds[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "workload: %zu studies; ops", w.nstudies);
	for (i = 0; i < OP__MAX; i++)
		fprintf(stderr, " %lu", w.ops[i]);
	fprintf(stderr, "; 200:%lu 201:%lu 400:%lu 402:%lu 404:%lu 409:%lu 422:%lu\n",
	    w.status[200], w.status[201], w.status[400], w.status[402], w.status[404],
	    w.status[409], w.status[422]);
	assert_int_equal(w.bad, 0);
	assert_true(w.status[201] > 0);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);

	/* Local books, from the API: wallets vs. what came in and went out. */
	for (i = 0; i < NRES; i++) {
		balance_of(res[i].hdr, &avail, &frozen);
		total += avail + frozen;
	}
	for (i = 0; i < NAGENTS; i++) {
		balance_of(agents[i].hdr, &avail, &frozen);
		assert_int_equal(frozen, 0);
		total += avail + frozen;
	}
	for (i = 0; i < w.nstudies; i++) {
		r = get_as(res[w.owner[i]].hdr, "/api/v1/studies/%s", w.study[i]);
		assert_int_equal(r.status, 200);
		revenue += jgeti(&r, "funding.spent_cents") -
		    jgeti(&r, "reward_per_participant") * jgeti(&r, "stats.approved");
		/* frozen + spent + refunded is the budget, always */
		assert_int_equal(jgeti(&r, "funding.frozen_cents") + jgeti(&r, "funding.spent_cents") +
		    jgeti(&r, "funding.refunded_cents"), jgeti(&r, "max_participants") *
		    (jgeti(&r, "reward_per_participant") +
		    jgeti(&r, "funding.fee_cents_per_participant")));
		assert_true(jgeti(&r, "stats.spots_remaining") >= 0);
		resp_free(&r);
	}
	fprintf(stderr, "workload: wallets %lld = top-ups %lld + bonuses %d - cash-outs %lld - "
	    "revenue %lld\n", total, w.topups, NAGENTS * 100, w.cashouts, revenue);
	assert_int_equal(total, w.topups + NAGENTS * 100 - w.cashouts - revenue);

	/* Global books, from SQL: every wallet in the database. */
	global = sql_int("SELECT SUM(available_cents + frozen_cents) FROM wallets");
	assert_int_equal(global,
	    sql_int("SELECT COALESCE(SUM(amount_cents), 0) FROM transactions WHERE type = 'manual_topup'") +
	    sql_int("SELECT COALESCE(SUM(amount_cents), 0) FROM transactions WHERE type = 'signup_bonus'") +
	    sql_int("SELECT COALESCE(SUM(amount_cents), 0) FROM transactions WHERE type = 'external_cashout'") -
	    sql_int("SELECT COALESCE(SUM(amount), 0) FROM ledger_postings WHERE account = 'platform:revenue'") +
	    /* cash-out requests (other suites'): out when asked (held, then
	     * paid outside), back when refused */
	    sql_int("SELECT COALESCE(SUM(amount_cents), 0) FROM transactions"
	    " WHERE type IN ('cashout_request', 'cashout_refund')"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(workload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
