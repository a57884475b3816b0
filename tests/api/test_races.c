/* Concurrency: requests released at once against the same rows must give
 * exactly one winner and move money exactly once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

#define MAXJOBS 32

struct job {
	char path[256];
	const char *body;
	char hdr[96], hdr2[96];
	struct resp r;
};

static pthread_barrier_t gate;

static void *
run_job(void *arg)
{
	struct job *j = arg;
	const char *h[3] = { j->hdr, j->hdr2[0] ? j->hdr2 : NULL, NULL };

	pthread_barrier_wait(&gate);
	j->r = http_req("POST", j->path, j->body, h, NULL);
	return NULL;
}

/* Release every job at once and wait for all answers. */
static void
race(struct job *jobs, size_t n)
{
	pthread_t t[MAXJOBS];
	size_t i;

	assert_true(n <= MAXJOBS);
	assert_int_equal(pthread_barrier_init(&gate, NULL, (unsigned)n), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&gate);
}

/* How many answers have status st (and error_code code when not NULL). */
static size_t
count(struct job *jobs, size_t n, long st, const char *code)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (jobs[i].r.status == st && (code == NULL ||
		    strcmp(jstr(&jobs[i].r, "error_code"), code) == 0))
			k++;
	return k;
}

static void
free_jobs(struct job *jobs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		resp_free(&jobs[i].r);
}

static void
many_agents_one_slot(void **state)
{
	struct test_agent a[20];
	struct test_user owners[20], u;
	struct job jobs[20];
	char s[IDS_BUFSZ];
	struct resp r;
	size_t i;

	(void)state;
	researcher(&u, 10000);
	for (i = 0; i < 20; i++)
		agent_claimed(&a[i], &owners[i], "racer");
	study_new(&u, s, 100, 1, NULL);
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 20; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies/%s/accept", s);
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", a[i].hdr);
	}
	race(jobs, 20);
	for (i = 0; i < 20; i++)
		if (jobs[i].r.status != 200 && jobs[i].r.status != 409)
			print_error("job %zu: %ld %s\n", i, jobs[i].r.status, jobs[i].r.body);
	assert_int_equal(count(jobs, 20, 200, NULL), 1);
	assert_int_equal(count(jobs, 20, 409, "STUDY_FULL"), 19);
	free_jobs(jobs, 20);
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "stats.accepted"), 1);
	assert_int_equal(jgeti(&r, "stats.spots_remaining"), 0);
	resp_free(&r);

	/* 20 agents on a 5-slot study: exactly 5 (the one-slot winner too) */
	study_new(&u, s, 100, 5, NULL);
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 20; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies/%s/accept", s);
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", a[i].hdr);
	}
	race(jobs, 20);
	assert_int_equal(count(jobs, 20, 200, NULL), 5);
	assert_int_equal(count(jobs, 20, 409, "STUDY_FULL") +
	    count(jobs, 20, 409, "ACTIVE_PARTICIPATION_EXISTS"), 15);
	assert_int_equal(count(jobs, 20, 409, "ACTIVE_PARTICIPATION_EXISTS"), 1);
	free_jobs(jobs, 20);
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "stats.accepted"), 5);
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
one_agent_many_studies(void **state)
{
	struct test_agent a;
	struct test_user owner, u;
	struct job jobs[10];
	char s[10][IDS_BUFSZ];
	const char *won = NULL;
	struct resp r;
	size_t i, n200 = 0;

	(void)state;
	researcher(&u, 100000);
	agent_claimed(&a, &owner, "greedy");
	for (i = 0; i < 10; i++)
		study_new(&u, s[i], 100, 3, NULL);
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 10; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies/%s/accept", s[i]);
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", a.hdr);
	}
	race(jobs, 10);
	for (i = 0; i < 10; i++)
		if (jobs[i].r.status == 200) {
			n200++;
			won = s[i];
		}
	assert_int_equal(n200, 1);
	assert_int_equal(count(jobs, 10, 409, "ACTIVE_PARTICIPATION_EXISTS"), 9);
	r = get_as(a.hdr, "/api/v1/agents/me");
	assert_string_equal(jgets(&r, "current_study.study_id"), won);
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/studies/history");
	assert_int_equal(json_object_array_length(jget(r.json, "participations")), 1);
	resp_free(&r);
	free_jobs(jobs, 10);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
approve_reject_once(void **state)
{
	struct test_agent a;
	struct test_user owner, u;
	struct job jobs[2];
	char s[IDS_BUFSZ], pid[32];
	long long ra0, rf0, aa0, af0, ra, rf, aa, af;
	int round;

	(void)state;
	researcher(&u, 100000);
	agent_claimed(&a, &owner, "reviewed");
	for (round = 0; round < 6; round++) {
		study_new(&u, s, 300, 2, NULL);		/* slot 330 */
		assert_int_equal(study_post(a.hdr, s, "accept", NULL), 200);
		assert_int_equal(study_post(a.hdr, s, "complete", NULL), 200);
		newest_participant(&u, s, pid);
		balance_of(u.hdr, &ra0, &rf0);
		balance_of(a.hdr, &aa0, &af0);
		memset(jobs, 0, sizeof jobs);
		snprintf(jobs[0].path, sizeof jobs[0].path,
		    "/api/v1/studies/%s/participants/%s/approve", s, pid);
		snprintf(jobs[1].path, sizeof jobs[1].path,
		    "/api/v1/studies/%s/participants/%s/reject", s, pid);
		snprintf(jobs[0].hdr, sizeof jobs[0].hdr, "%s", u.hdr);
		snprintf(jobs[1].hdr, sizeof jobs[1].hdr, "%s", u.hdr);
		race(jobs, 2);
		assert_int_equal(count(jobs, 2, 200, NULL), 1);
		assert_int_equal(count(jobs, 2, 409, "INVALID_STATE"), 1);
		balance_of(u.hdr, &ra, &rf);
		balance_of(a.hdr, &aa, &af);
		assert_int_equal(rf, rf0 - 330);
		if (jobs[0].r.status == 200) {		/* approved: reward to the agent */
			assert_string_equal(jstr(&jobs[0].r, "status"), "approved");
			assert_int_equal(aa, aa0 + 300);
			assert_int_equal(ra, ra0);
		} else {				/* rejected: refunded */
			assert_string_equal(jstr(&jobs[1].r, "status"), "rejected");
			assert_int_equal(aa, aa0);
			assert_int_equal(ra, ra0 + 330);
		}
		free_jobs(jobs, 2);
		agent_set_reputation(a.id, 50);		/* keep it able to accept */
	}
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
complete_withdraw_once(void **state)
{
	struct test_agent a;
	struct test_user owner, u;
	struct job jobs[2];
	char s[IDS_BUFSZ];
	struct resp r;

	(void)state;
	researcher(&u, 100000);
	agent_claimed(&a, &owner, "torn");
	study_new(&u, s, 100, 2, NULL);
	assert_int_equal(study_post(a.hdr, s, "accept", NULL), 200);
	memset(jobs, 0, sizeof jobs);
	snprintf(jobs[0].path, sizeof jobs[0].path, "/api/v1/studies/%s/complete", s);
	snprintf(jobs[1].path, sizeof jobs[1].path, "/api/v1/studies/%s/withdraw", s);
	snprintf(jobs[0].hdr, sizeof jobs[0].hdr, "%s", a.hdr);
	snprintf(jobs[1].hdr, sizeof jobs[1].hdr, "%s", a.hdr);
	race(jobs, 2);
	assert_int_equal(count(jobs, 2, 200, NULL), 1);
	assert_int_equal(count(jobs, 2, 409, "NO_ACTIVE_PARTICIPATION"), 1);
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "stats.submitted") + jgeti(&r, "stats.withdrawn"), 1);
	assert_int_equal(jgeti(&r, "stats.accepted"), 0);
	resp_free(&r);
	free_jobs(jobs, 2);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
idempotent_burst(void **state)
{
	static const char body[] = "{\"title\":\"Once\",\"description\":\"Only once\","
	    "\"study_url\":\"https://a.example.org/\",\"reward_per_participant\":100,"
	    "\"max_participants\":3,\"screening_criteria\":\"Anyone\","
	    "\"estimated_duration_minutes\":5}";
	struct test_user u;
	struct job jobs[10];
	const char *first = NULL;
	long long avail, frozen;
	struct resp r;
	size_t i, n201 = 0, nconf = 0;

	(void)state;
	researcher(&u, 10000);
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 10; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies");
		jobs[i].body = body;
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", u.hdr);
		snprintf(jobs[i].hdr2, sizeof jobs[i].hdr2, "Idempotency-Key: burst-%s", u.id);
	}
	race(jobs, 10);
	for (i = 0; i < 10; i++) {
		if (jobs[i].r.status == 201) {
			n201++;
			if (first == NULL)
				first = jobs[i].r.body;
			else	/* a replay is byte-identical */
				assert_string_equal(jobs[i].r.body, first);
		} else if (jobs[i].r.status == 409 &&
		    strcmp(jstr(&jobs[i].r, "error_code"), "IDEMPOTENCY_CONFLICT") == 0)
			nconf++;
		else
			print_error("job %zu: %ld %s\n", i, jobs[i].r.status, jobs[i].r.body);
	}
	assert_true(n201 >= 1);
	assert_int_equal(n201 + nconf, 10);
	/* one effect: one study, one freeze */
	r = get_as(u.hdr, "/api/v1/studies");
	assert_int_equal(json_object_array_length(jget(r.json, "studies")), 1);
	resp_free(&r);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(frozen, 330);
	assert_int_equal(avail, 10000 - 330);
	/* once settled, the same key replays the stored answer */
	r = http_req("POST", "/api/v1/studies", body, HDRS(u.hdr, jobs[0].hdr2), NULL);
	assert_int_equal(r.status, 201);
	assert_string_equal(r.body, first);
	resp_free(&r);
	free_jobs(jobs, 10);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}


/* Issue 36, finding 3: 20 webhook creates of one agent released at once
 * leave exactly 10 (WEBHOOK_MAX_PER_OWNER): the count and the insert ran
 * without a lock, and 14 at once left 12.  Then a bearer account's own
 * 20, racing the same way, leave 10 of its own. */
static void
webhook_limit_races(void **state)
{
	static const char body[] =
	    "{\"url\":\"https://hooks.example.org/h\",\"events\":[\"wallet.credited\"]}";
	struct test_agent a;
	struct test_user u;
	struct job jobs[20];
	const char *hdr[2];
	struct resp r;
	size_t i, k;

	(void)state;
	agent_new(&a, "hooker");
	user_login(&u, "hooks");
	hdr[0] = a.hdr;
	hdr[1] = u.hdr;
	for (k = 0; k < 2; k++) {
		memset(jobs, 0, sizeof jobs);
		for (i = 0; i < 20; i++) {
			snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/webhooks");
			jobs[i].body = body;
			snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", hdr[k]);
		}
		race(jobs, 20);
		for (i = 0; i < 20; i++)
			if (jobs[i].r.status != 201 && jobs[i].r.status != 422)
				print_error("job %zu: %ld %s\n", i, jobs[i].r.status, jobs[i].r.body);
		assert_int_equal(count(jobs, 20, 201, NULL), 10);
		assert_int_equal(count(jobs, 20, 422, "VALIDATION_ERROR"), 10);
		free_jobs(jobs, 20);
		r = get_as(hdr[k], "/api/v1/webhooks");
		assert_int_equal(r.status, 200);
		assert_int_equal(json_object_array_length(jget(r.json, "webhooks")), 10);
		resp_free(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_agents_one_slot),
		cmocka_unit_test(one_agent_many_studies),
		cmocka_unit_test(approve_reject_once),
		cmocka_unit_test(complete_withdraw_once),
		cmocka_unit_test(idempotent_burst),
		cmocka_unit_test(webhook_limit_races),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
