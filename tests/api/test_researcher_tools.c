/* Researcher tools (design.md §13): pseudonyms, rejection categories,
 * bulk review, bonuses and messages, with their refusals and races. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/validate.h"
#include "tests/api/study_helpers.h"

/* --- shared helpers --- */

/* Agent a accepts and completes study s (no completion code). */
static void
take_part(const struct test_agent *a, const char *s)
{
	assert_int_equal(study_post(a->hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(a->hdr, s, "complete", NULL), 200);
}

/* Field `field` of item idx of study s's participant list, as researcher
 * u reads it, into out. */
static void
item_of(const struct test_user *u, const char *s, const char *field, size_t idx, char *out,
    size_t n)
{
	struct resp r = get_as(u->hdr, "/api/v1/studies/%s/participants", s);
	char path[64];

	assert_int_equal(r.status, 200);
	snprintf(path, sizeof path, "participants.%zu.%s", idx, field);
	snprintf(out, n, "%s", jgets(&r, path));
	resp_free(&r);
}

/* The newest event of type t in the credential's feed: its data object
 * as JSON text into out ("" when none). */
static void
last_event(const char *hdr, const char *type, char *out, size_t n)
{
	struct json_object *arr, *it, *v;
	struct resp r;
	size_t i, len;

	out[0] = '\0';
	r = get_as(hdr, "/api/v1/events?limit=200");
	assert_int_equal(r.status, 200);
	arr = jget(r.json, "events");
	len = arr ? json_object_array_length(arr) : 0;
	for (i = 0; i < len; i++) {
		it = json_object_array_get_idx(arr, i);
		if ((v = jget(it, "type")) != NULL && strcmp(json_object_get_string(v), type) == 0 &&
		    (v = jget(it, "data")) != NULL)
			snprintf(out, n, "%s", json_object_to_json_string_ext(v,
			    JSON_C_TO_STRING_PLAIN));
	}
	resp_free(&r);
}

/* --- 1. pseudonym --- */

static void
pseudonym_stable_per_researcher(void **state)
{
	struct test_user a, b, owner;
	struct test_agent ag;
	char s1[IDS_BUFSZ], s2[IDS_BUFSZ], s3[IDS_BUFSZ];
	char p1[32], p2[32], p3[32], anon1[32], anon2[32];

	(void)state;
	researcher(&a, 10000);
	researcher(&b, 10000);
	agent_claimed(&ag, &owner, "psn");
	study_new(&a, s1, 100, 2, NULL);
	study_new(&a, s2, 100, 2, NULL);
	study_new(&b, s3, 100, 2, NULL);
	take_part(&ag, s1);
	take_part(&ag, s2);
	take_part(&ag, s3);
	item_of(&a, s1, "pseudonym", 0, p1, sizeof p1);
	item_of(&a, s2, "pseudonym", 0, p2, sizeof p2);
	item_of(&b, s3, "pseudonym", 0, p3, sizeof p3);
	item_of(&a, s1, "participant_id", 0, anon1, sizeof anon1);
	item_of(&a, s2, "participant_id", 0, anon2, sizeof anon2);
	/* psn_ + 16 lowercase hex */
	assert_int_equal(strlen(p1), 20);
	assert_memory_equal(p1, "psn_", 4);
	assert_int_equal(strspn(p1 + 4, "0123456789abcdef"), 16);
	/* one researcher: the same across studies, where anon_ ids differ */
	assert_string_equal(p1, p2);
	assert_string_not_equal(anon1, anon2);
	/* another researcher: another pseudonym */
	assert_int_equal(strlen(p3), 20);
	assert_string_not_equal(p1, p3);
}

/* --- 2. rejection category --- */

static void
reject_category_shown(void **state)
{
	struct test_user u, owner;
	struct test_agent ag;
	char s[IDS_BUFSZ], pid[32], ev[1024];
	long long ra0, rf0, ra, rf;
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&ag, &owner, "cat");
	study_new(&u, s, 200, 2, NULL);		/* slot 220 */
	take_part(&ag, s);
	newest_participant(&u, s, pid);
	balance_of(u.hdr, &ra0, &rf0);
	/* an unknown category: 422 naming the field, nothing moves */
	r = post_as(u.hdr, "{\"reason\":\"no code\",\"category\":\"spam\"}",
	    "/api/v1/studies/%s/participants/%s/reject", s, pid);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "category"));
	resp_free(&r);
	r = post_as(u.hdr, "{\"category\":5}", "/api/v1/studies/%s/participants/%s/reject", s, pid);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	assert_int_equal(rf, rf0);
	/* a known one: stored and shown to both sides */
	r = post_as(u.hdr, "{\"reason\":\"The code was missing\",\"category\":\"no_code\"}",
	    "/api/v1/studies/%s/participants/%s/reject", s, pid);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "status"), "rejected");
	assert_string_equal(jstr(&r, "category"), "no_code");
	assert_string_equal(jstr(&r, "reason"), "The code was missing");
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 + 220);
	r = get_as(u.hdr, "/api/v1/studies/%s/participants", s);
	assert_string_equal(jgets(&r, "participants.0.category"), "no_code");
	resp_free(&r);
	r = get_as(ag.hdr, "/api/v1/studies/history");
	assert_string_equal(jgets(&r, "participations.0.status"), "rejected");
	assert_string_equal(jgets(&r, "participations.0.category"), "no_code");
	resp_free(&r);
	last_event(ag.hdr, "participation.rejected", ev, sizeof ev);
	assert_non_null(strstr(ev, "\"category\":\"no_code\""));
	assert_non_null(strstr(ev, s));
	/* an approval has no category */
	study_new(&u, s, 200, 2, NULL);
	take_part(&ag, s);
	newest_participant(&u, s, pid);
	r = post_as(u.hdr, "{}", "/api/v1/studies/%s/participants/%s/approve", s, pid);
	assert_int_equal(r.status, 200);
	assert_true(json_object_is_type(jget(r.json, "category"), json_type_null));
	assert_non_null(jget(r.json, "pseudonym"));
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}


/* --- 3. bulk review --- */

static pthread_barrier_t gate;

struct job {
	char path[256];
	char body[8192];
	char hdr[96], hdr2[96];
	struct resp r;
};

static void *
run_job(void *arg)
{
	struct job *j = arg;
	const char *h[3] = { j->hdr, j->hdr2[0] ? j->hdr2 : NULL, NULL };

	pthread_barrier_wait(&gate);
	j->r = http_req("POST", j->path, j->body[0] ? j->body : NULL, h, NULL);
	return NULL;
}

/* Release every job at once and wait for all answers. */
static void
race(struct job *jobs, size_t n)
{
	pthread_t t[16];
	size_t i;

	assert_true(n <= 16);
	assert_int_equal(pthread_barrier_init(&gate, NULL, (unsigned)n), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&gate);
}

/* n claimed agents that each took part in study s (submitted); their
 * participant ids (newest first order of the list is not relied on). */
static void
submitted_agents(struct test_agent *ag, size_t n, const char *s)
{
	struct test_user owner;
	size_t i;

	for (i = 0; i < n; i++) {
		agent_claimed(&ag[i], &owner, "bulk");
		take_part(&ag[i], s);
	}
}

/* The participant ids of study s into pid[] (n of them, any order). */
static void
participant_ids(const struct test_user *u, const char *s, char pid[][32], size_t n)
{
	struct resp r = get_as(u->hdr, "/api/v1/studies/%s/participants?limit=200", s);
	char path[64];
	size_t i;

	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "participants")), n);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof path, "participants.%zu.participant_id", i);
		snprintf(pid[i], 32, "%s", jgets(&r, path));
	}
	resp_free(&r);
}

static void
bulk_review_rows(void **state)
{
	struct test_user u, other, owner;
	struct test_agent ag[3], late;
	char s[IDS_BUFSZ], pid[4][32], body[2048], first[4096], late_pid[32], ev[1024];
	long long ra0, rf0, ra, rf, aa0, af0, aa, af;
	const char *idem = "Idempotency-Key: bulk-review-1";
	struct resp r;
	size_t i;

	(void)state;
	researcher(&u, 100000);
	researcher(&other, 1000);
	study_new(&u, s, 300, 5, NULL);			/* slot 330 */
	submitted_agents(ag, 3, s);
	participant_ids(&u, s, pid, 3);
	agent_claimed(&late, &owner, "late");
	assert_int_equal(study_post(late.hdr, s, "accept", NULL), 200);
	newest_participant(&u, s, late_pid);
	balance_of(u.hdr, &ra0, &rf0);
	aa0 = 0;
	for (i = 0; i < 3; i++) {
		balance_of(ag[i].hdr, &aa, &af);
		aa0 += aa;
	}

	/* refusals of the whole request: nothing moves */
	r = post_as(u.hdr, "{\"action\":\"reject\",\"participant_ids\":[\"anon_0000000000000000\"]}",
	    "/api/v1/studies/%s/participants/review", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "reason"));
	resp_free(&r);
	r = post_as(u.hdr, "{\"action\":\"maybe\",\"participant_ids\":[\"anon_0000000000000000\"]}",
	    "/api/v1/studies/%s/participants/review", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "action"));
	resp_free(&r);
	r = post_as(u.hdr, "{\"action\":\"approve\",\"participant_ids\":[]}",
	    "/api/v1/studies/%s/participants/review", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "participant_ids"));
	resp_free(&r);
	r = post_as(u.hdr, "{\"action\":\"approve\",\"participant_ids\":[\"anon_0000000000000000\",7]}",
	    "/api/v1/studies/%s/participants/review", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "participant_ids[1]"));
	resp_free(&r);
	r = post_as(u.hdr, "{\"action\":\"reject\",\"reason\":\"x\",\"category\":\"bad\","
	    "\"participant_ids\":[\"anon_0000000000000000\"]}", "/api/v1/studies/%s/participants/review", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	snprintf(body, sizeof body, "{\"action\":\"approve\",\"participant_ids\":[\"%s\"]}", pid[0]);
	r = post_as(other.hdr, body, "/api/v1/studies/%s/participants/review", s);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	/* a row's detail quotes the id cut at 40 bytes, never inside a UTF-8
	 * sequence (found by Schemathesis: the answer was not UTF-8) */
	r = post_as(u.hdr, "{\"action\":\"approve\",\"participant_ids\":[\"a\u00e9\u00e9\u00e9\u00e9"
	    "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
	    "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"]}", "/api/v1/studies/%s/participants/review", s);
	assert_int_equal(r.status, 200);
	assert_true(val_utf8(r.body, r.len, NULL));
	assert_int_equal(jint(&r, "failed"), 1);
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	assert_int_equal(rf, rf0);

	/* two submitted, one still working, one unknown, one repeated */
	snprintf(body, sizeof body, "{\"action\":\"approve\",\"participant_ids\":[\"%s\",\"%s\","
	    "\"%s\",\"anon_0000000000000000\",\"%s\"],\"reason\":\"Good work\"}", pid[0], pid[1],
	    late_pid, pid[0]);
	{
		char path[128];

		snprintf(path, sizeof path, "/api/v1/studies/%s/participants/review", s);
		r = http_req("POST", path, body, HDRS(u.hdr, idem), NULL);
	}
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "action"), "approve");
	assert_int_equal(jint(&r, "succeeded"), 2);
	assert_int_equal(jint(&r, "failed"), 3);
	assert_string_equal(jgets(&r, "results.0.participant_id"), pid[0]);
	assert_string_equal(jgets(&r, "results.0.status"), "approved");
	assert_null(jget(r.json, "results.0.error"));
	assert_string_equal(jgets(&r, "results.1.status"), "approved");
	assert_string_equal(jgets(&r, "results.2.status"), "accepted");
	assert_string_equal(jgets(&r, "results.2.error.error_code"), "INVALID_STATE");
	assert_int_equal(jgeti(&r, "results.2.error.status"), 409);
	assert_null(jget(r.json, "results.3.status"));
	assert_string_equal(jgets(&r, "results.3.error.error_code"), "NOT_FOUND");
	assert_string_equal(jgets(&r, "results.4.status"), "approved");
	assert_string_equal(jgets(&r, "results.4.error.error_code"), "INVALID_STATE");
	snprintf(first, sizeof first, "%s", r.body);
	resp_free(&r);
	/* the money of two approvals, as the single endpoint books it */
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	assert_int_equal(rf, rf0 - 2 * 330);
	for (i = 0, af0 = 0; i < 3; i++) {	/* two of the three earned 300 */
		balance_of(ag[i].hdr, &aa, &af);
		af0 += aa;
		last_event(ag[i].hdr, "participation.approved", ev, sizeof ev);
		if (ev[0] != '\0')
			assert_non_null(strstr(ev, s));
	}
	assert_int_equal(af0, aa0 + 600);
	/* the same key replays the whole answer, byte for byte */
	{
		char path[128], hv[16];

		snprintf(path, sizeof path, "/api/v1/studies/%s/participants/review", s);
		r = http_req("POST", path, body, HDRS(u.hdr, idem), NULL);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.body, first);
		assert_non_null(resp_header(&r, "Idempotent-Replayed", hv, sizeof hv));
		resp_free(&r);
	}
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(rf, rf0 - 2 * 330);

	/* bulk reject with a category: the third participant */
	snprintf(body, sizeof body, "{\"action\":\"reject\",\"participant_ids\":[\"%s\"],"
	    "\"reason\":\"Straight-lined\",\"category\":\"low_effort\"}", pid[2]);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/participants/review", s);
	assert_int_equal(r.status, 200);
	assert_int_equal(jint(&r, "succeeded"), 1);
	assert_string_equal(jgets(&r, "results.0.status"), "rejected");
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 + 330);
	assert_int_equal(rf, rf0 - 3 * 330);
	for (i = 0; i < 3; i++) {
		r = get_as(ag[i].hdr, "/api/v1/studies/history");
		if (strcmp(jgets(&r, "participations.0.status"), "rejected") == 0) {
			assert_string_equal(jgets(&r, "participations.0.category"), "low_effort");
			assert_string_equal(jgets(&r, "participations.0.reason"), "Straight-lined");
		}
		resp_free(&r);
	}
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* A bulk review racing single reviews of the same participants settles
 * each once: its row or the single one wins, never both. */
static void
bulk_review_races_single(void **state)
{
	struct test_user u;
	struct test_agent ag[8];
	struct job jobs[9];
	char s[IDS_BUFSZ], pid[8][32], path[64];
	long long ra0, rf0, ra, rf;
	size_t i, j, bulk_won = 0, single_won = 0, approved = 0, rejected = 0;
	struct resp r;
	int o;

	(void)state;
	researcher(&u, 100000);
	study_new(&u, s, 100, 8, NULL);			/* slot 110 */
	submitted_agents(ag, 8, s);
	participant_ids(&u, s, pid, 8);
	balance_of(u.hdr, &ra0, &rf0);
	memset(jobs, 0, sizeof jobs);
	snprintf(jobs[0].path, sizeof jobs[0].path, "/api/v1/studies/%s/participants/review", s);
	o = snprintf(jobs[0].body, sizeof jobs[0].body, "{\"action\":\"approve\",\"participant_ids\":[");
	for (i = 0; i < 8; i++)
		o += snprintf(jobs[0].body + o, sizeof jobs[0].body - (size_t)o, "%s\"%s\"",
		    i ? "," : "", pid[i]);
	snprintf(jobs[0].body + o, sizeof jobs[0].body - (size_t)o, "]}");
	snprintf(jobs[0].hdr, sizeof jobs[0].hdr, "%s", u.hdr);
	for (i = 0; i < 8; i++) {
		snprintf(jobs[i + 1].path, sizeof jobs[i + 1].path,
		    "/api/v1/studies/%.20s/participants/%.31s/reject", s, pid[i]);
		snprintf(jobs[i + 1].body, sizeof jobs[i + 1].body, "{\"reason\":\"race\"}");
		snprintf(jobs[i + 1].hdr, sizeof jobs[i + 1].hdr, "%s", u.hdr);
	}
	race(jobs, 9);
	assert_int_equal(jobs[0].r.status, 200);
	for (i = 0; i < 8; i++) {
		int row_ok, single_ok;

		snprintf(path, sizeof path, "results.%zu.status", i);
		row_ok = jget(jobs[0].r.json, path) != NULL &&
		    strcmp(jgets(&jobs[0].r, path), "approved") == 0 &&
		    (snprintf(path, sizeof path, "results.%zu.error", i), jget(jobs[0].r.json, path) == NULL);
		single_ok = jobs[i + 1].r.status == 200;
		if (!single_ok)
			assert_string_equal(jstr(&jobs[i + 1].r, "error_code"), "INVALID_STATE");
		assert_int_equal(row_ok + single_ok, 1);
		bulk_won += (size_t)row_ok;
		single_won += (size_t)single_ok;
	}
	assert_int_equal(jint(&jobs[0].r, "succeeded"), (long long)bulk_won);
	assert_int_equal(jint(&jobs[0].r, "failed"), (long long)single_won);
	for (j = 0; j < 9; j++)
		resp_free(&jobs[j].r);
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	approved = (size_t)jgeti(&r, "stats.approved");
	rejected = (size_t)jgeti(&r, "stats.rejected");
	resp_free(&r);
	assert_int_equal(approved, bulk_won);
	assert_int_equal(rejected, single_won);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(rf, rf0 - 8 * 110);
	assert_int_equal(ra, ra0 + (long long)single_won * 110);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* --- 4. bonuses --- */

/* The number of bonuses listed for study s. */
static size_t
bonus_count(const struct test_user *u, const char *s)
{
	struct resp r = get_as(u->hdr, "/api/v1/studies/%s/bonuses?limit=200", s);
	size_t n;

	assert_int_equal(r.status, 200);
	n = json_object_array_length(jget(r.json, "bonuses"));
	resp_free(&r);
	return n;
}

/* The anonymous participant id of agent a in study s (the researcher
 * never sees the agent's id: the test reads it from the database). */
static void
pid_of(const struct test_user *u, const struct test_agent *a, const char *s, char pid[32])
{
	(void)u;
	sql_str(pid, 32, "SELECT participant_id FROM participations WHERE study_id = '%s'"
	    " AND agent_id = '%s'", s, a->id);
	assert_true(anon_id_valid(pid));
}

static void
bonuses_pay_and_list(void **state)
{
	struct test_user u, other, poor, owner;
	struct test_agent a, b, c;
	char s[IDS_BUFSZ], pa[32], pb[32], pc[32], body[4096], ev[2048];
	long long ra0, rf0, ra, rf, aa0, af, ba0;
	struct json_object *o, *arr, *row;
	struct resp r;
	int i;

	(void)state;
	researcher(&u, 100000);
	researcher(&other, 100000);
	researcher(&poor, 1000);
	agent_claimed(&a, &owner, "bon-a");
	agent_claimed(&b, &owner, "bon-b");
	agent_claimed(&c, &owner, "bon-c");
	study_new(&u, s, 100, 4, NULL);
	take_part(&a, s);
	take_part(&b, s);
	assert_int_equal(study_post(c.hdr, s, "accept", NULL), 200);
	pid_of(&u, &a, s, pa);
	pid_of(&u, &b, s, pb);
	pid_of(&u, &c, s, pc);
	balance_of(u.hdr, &ra0, &rf0);
	balance_of(a.hdr, &aa0, &af);
	balance_of(b.hdr, &ba0, &af);

	/* refusals, each naming its row; no money moves */
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":5},"
	    "{\"participant_id\":\"%s\",\"amount_cents\":0}]}", pa, pb);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[1].amount_cents:", 24);
	resp_free(&r);
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":100001}]}",
	    pa);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[0].amount_cents:", 24);
	resp_free(&r);
	r = post_as(u.hdr, "{\"bonuses\":[{\"amount_cents\":5}]}", "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[0].participant_id:", 26);
	resp_free(&r);
	r = post_as(u.hdr, "{\"bonuses\":[]}", "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = post_as(u.hdr, "{\"bonuses\":[7]}", "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[0]:", 11);
	resp_free(&r);
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":5},"
	    "{\"participant_id\":\"%s\",\"amount_cents\":6}]}", pa, pa);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[1].participant_id:", 26);
	resp_free(&r);
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":5},"
	    "{\"participant_id\":\"%s\",\"amount_cents\":6}]}", pa, pc);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 409, "INVALID_STATE");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[1].participant_id:", 26);
	resp_free(&r);
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"anon_0000000000000000\","
	    "\"amount_cents\":5}]}");
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "bonuses[0].participant_id:", 26);
	resp_free(&r);
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":5}]}", pa);
	r = post_as(other.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = get_as(other.hdr, "/api/v1/studies/%s/bonuses", s);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	/* 501 rows */
	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < 501; i++) {
		row = json_object_new_object();
		json_object_object_add(row, "participant_id", json_object_new_string(pa));
		json_object_object_add(row, "amount_cents", json_object_new_int(1));
		json_object_array_add(arr, row);
	}
	json_object_object_add(o, "bonuses", arr);
	r = post_as(u.hdr, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "/api/v1/studies/%s/bonuses", s);
	json_object_put(o);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	assert_int_equal(bonus_count(&u, s), 0);

	/* a poor researcher's own study: 402, nothing moves */
	{
		struct test_agent d;
		char sp[IDS_BUFSZ], pd[32];
		long long pa0, pf0, pa1, pf1;

		study_new(&poor, sp, 100, 1, NULL);		/* 110 of 1000 frozen */
		agent_claimed(&d, &owner, "bon-d");
		take_part(&d, sp);
		pid_of(&poor, &d, sp, pd);
		balance_of(poor.hdr, &pa0, &pf0);
		snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\","
		    "\"amount_cents\":900}]}", pd);		/* 990 > 890 */
		r = post_as(poor.hdr, body, "/api/v1/studies/%s/bonuses", sp);
		assert_error(&r, 402, "INSUFFICIENT_FUNDS");
		resp_free(&r);
		balance_of(poor.hdr, &pa1, &pf1);
		assert_int_equal(pa1, pa0);
		assert_int_equal(pf1, pf0);
		assert_int_equal(bonus_count(&poor, sp), 0);
		/* from the available balance, not the frozen budget: 800 + 80 fits */
		snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\","
		    "\"amount_cents\":800}]}", pd);
		r = post_as(poor.hdr, body, "/api/v1/studies/%s/bonuses", sp);
		assert_int_equal(r.status, 201);
		resp_free(&r);
		balance_of(poor.hdr, &pa1, &pf1);
		assert_int_equal(pa1, pa0 - 880);
		assert_int_equal(pf1, pf0);
	}

	/* two rows: fee per row rounded up, all in one transaction */
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":500,"
	    "\"reason\":\"Great \\\"detailed\\\" answers\\nthanks\"},{\"participant_id\":\"%s\","
	    "\"amount_cents\":99}]}", pa, pb);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_int_equal(r.status, 201);
	assert_string_equal(jstr(&r, "study_id"), s);
	assert_int_equal(jint(&r, "total_cents"), 500 + 50 + 99 + 10);
	assert_int_equal(jint(&r, "fee_cents"), 60);
	assert_memory_equal(jgets(&r, "bonuses.0.id"), "bon_", 4);
	assert_string_equal(jgets(&r, "bonuses.0.participant_id"), pa);
	assert_int_equal(jgeti(&r, "bonuses.0.amount_cents"), 500);
	assert_int_equal(jgeti(&r, "bonuses.0.fee_cents"), 50);
	assert_string_equal(jgets(&r, "bonuses.0.reason"), "Great \"detailed\" answers\nthanks");
	assert_int_equal(jgeti(&r, "bonuses.1.fee_cents"), 10);
	assert_true(json_object_is_type(jget(r.json, "bonuses.1.reason"), json_type_null));
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 - 659);
	assert_int_equal(rf, rf0);
	balance_of(a.hdr, &ra, &af);
	assert_int_equal(ra, aa0 + 500);
	balance_of(b.hdr, &ra, &af);
	assert_int_equal(ra, ba0 + 99);
	/* funding, transactions, events, the list */
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "funding.bonus_cents"), 599);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/wallet/transactions?type=bonus_payment");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 2);
	assert_string_equal(jgets(&r, "transactions.0.study_id"), s);
	assert_true(jgeti(&r, "transactions.0.amount_cents") == -550 ||
	    jgeti(&r, "transactions.0.amount_cents") == -109);
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/wallet/transactions?type=bonus");
	assert_int_equal(json_object_array_length(jget(r.json, "transactions")), 1);
	assert_int_equal(jgeti(&r, "transactions.0.amount_cents"), 500);
	resp_free(&r);
	last_event(a.hdr, "bonus.received", ev, sizeof ev);
	o = json_tokener_parse(ev);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(jget(o, "study_id")), s);
	assert_int_equal(json_object_get_int64(jget(o, "amount_cents")), 500);
	assert_string_equal(json_object_get_string(jget(o, "reason")),
	    "Great \"detailed\" answers\nthanks");
	assert_memory_equal(json_object_get_string(jget(o, "participation_id")), "prt_", 4);
	json_object_put(o);
	last_event(u.hdr, "wallet.debited", ev, sizeof ev);
	assert_non_null(strstr(ev, "\"amount_cents\":659"));
	r = get_as(u.hdr, "/api/v1/studies/%s/bonuses", s);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "bonuses")), 2);
	assert_true(json_object_is_type(jget(r.json, "next_cursor"), json_type_null));
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/studies/%s/bonuses?limit=1", s);
	assert_int_equal(json_object_array_length(jget(r.json, "bonuses")), 1);
	assert_string_not_equal(jgets(&r, "next_cursor"), "");
	resp_free(&r);
	/* a rejected participant may still get one; any study state */
	assert_int_equal(study_post(u.hdr, s, "stop", NULL), 200);
	snprintf(body, sizeof body, "{\"reason\":\"no\"}");
	r = post_as(u.hdr, body, "/api/v1/studies/%s/participants/%s/reject", s, pb);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	snprintf(body, sizeof body, "{\"bonuses\":[{\"participant_id\":\"%s\",\"amount_cents\":1}]}", pb);
	r = post_as(u.hdr, body, "/api/v1/studies/%s/bonuses", s);
	assert_int_equal(r.status, 201);
	assert_int_equal(jint(&r, "total_cents"), 2);
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* Two identical batches at once: with one Idempotency-Key they pay once;
 * without, each is its own batch (funds for one: one pays, one is 402). */
static void
bonuses_race(void **state)
{
	struct test_user u, owner;
	struct test_agent a;
	struct job jobs[6];
	char s[IDS_BUFSZ], pa[32];
	long long ra0, rf0, ra, rf;
	size_t i, n201, nconf, n402;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a, &owner, "bon-race");
	study_new(&u, s, 100, 1, NULL);				/* 110 frozen */
	take_part(&a, s);
	pid_of(&u, &a, s, pa);
	balance_of(u.hdr, &ra0, &rf0);				/* 9890 */
	/* the same key, six at once: one batch paid */
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 6; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies/%s/bonuses", s);
		snprintf(jobs[i].body, sizeof jobs[i].body, "{\"bonuses\":[{\"participant_id\":"
		    "\"%s\",\"amount_cents\":1000,\"reason\":\"race\"}]}", pa);
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", u.hdr);
		snprintf(jobs[i].hdr2, sizeof jobs[i].hdr2, "Idempotency-Key: bonus-race-%s", s);
	}
	race(jobs, 6);
	for (i = n201 = nconf = 0; i < 6; i++) {
		if (jobs[i].r.status == 201)
			n201++;
		else {
			assert_int_equal(jobs[i].r.status, 409);
			assert_string_equal(jstr(&jobs[i].r, "error_code"), "IDEMPOTENCY_CONFLICT");
			nconf++;
		}
	}
	assert_true(n201 >= 1);
	for (i = 1; i < 6; i++)
		if (jobs[i].r.status == 201 && jobs[0].r.status == 201)
			assert_string_equal(jobs[i].r.body, jobs[0].r.body);
	for (i = 0; i < 6; i++)
		resp_free(&jobs[i].r);
	assert_int_equal(bonus_count(&u, s), 1);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 - 1100);
	/* without a key, funds for one batch of 5000 + 500 (8790 left): one
	 * pays, the other is 402 */
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 2; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies/%s/bonuses", s);
		snprintf(jobs[i].body, sizeof jobs[i].body, "{\"bonuses\":[{\"participant_id\":"
		    "\"%s\",\"amount_cents\":5000}]}", pa);
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", u.hdr);
	}
	race(jobs, 2);
	for (i = n201 = n402 = 0; i < 2; i++) {
		if (jobs[i].r.status == 201)
			n201++;
		else if (jobs[i].r.status == 402)
			n402++;
	}
	assert_int_equal(n201, 1);
	assert_int_equal(n402, 1);
	for (i = 0; i < 2; i++)
		resp_free(&jobs[i].r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 - 1100 - 5500);
	assert_int_equal(bonus_count(&u, s), 2);
	/* without a key and funds for both: both pay */
	assert_int_equal(admin(NULL, 0, "topup %s %d", u.id, 20000), 0);
	memset(jobs, 0, sizeof jobs);
	for (i = 0; i < 2; i++) {
		snprintf(jobs[i].path, sizeof jobs[i].path, "/api/v1/studies/%s/bonuses", s);
		snprintf(jobs[i].body, sizeof jobs[i].body, "{\"bonuses\":[{\"participant_id\":"
		    "\"%s\",\"amount_cents\":100}]}", pa);
		snprintf(jobs[i].hdr, sizeof jobs[i].hdr, "%s", u.hdr);
	}
	race(jobs, 2);
	assert_int_equal(jobs[0].r.status, 201);
	assert_int_equal(jobs[1].r.status, 201);
	for (i = 0; i < 2; i++)
		resp_free(&jobs[i].r);
	assert_int_equal(bonus_count(&u, s), 4);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pseudonym_stable_per_researcher),
		cmocka_unit_test(reject_category_shown),
		cmocka_unit_test(bulk_review_rows),
		cmocka_unit_test(bulk_review_races_single),
		cmocka_unit_test(bonuses_pay_and_list),
		cmocka_unit_test(bonuses_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
