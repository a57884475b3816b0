/* Study and wallet flows the API suites share (header-only: static
 * inline helpers). */
#ifndef ARPS_TESTS_STUDY_HELPERS_H
#define ARPS_TESTS_STUDY_HELPERS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/api/flows.h"
#include "tests/api/sql.h"

#define FEE_OF(reward)	(((reward) * 1000 + 9999) / 10000)	/* fee_bps 1000, ceil */
#define SLOT_OF(reward)	((reward) + FEE_OF(reward))

/* A researcher (logged-in account), topped up with cents when > 0. */
static inline void
researcher(struct test_user *u, long long cents)
{
	user_login(u, "res");
	if (cents > 0)
		assert_int_equal(admin(NULL, 0, "topup %s %lld", u->id, cents), 0);
}

/* POST path as hdr with an optional JSON body; path built printf-style. */
static inline struct resp
post_as(const char *hdr, const char *body, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline struct resp
post_as(const char *hdr, const char *body, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	return http_req("POST", path, body, hdr ? HDRS(hdr) : NULL, NULL);
}

static inline struct resp
get_as(const char *hdr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline struct resp
get_as(const char *hdr, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof path, fmt, ap);
	va_end(ap);
	return http_req("GET", path, NULL, hdr ? HDRS(hdr) : NULL, NULL);
}

/* A dotted path ("funding.frozen_cents", "studies.0.id") in o; NULL if absent. */
static inline struct json_object *
jget(struct json_object *o, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (o != NULL && *path != '\0') {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (json_object_is_type(o, json_type_array)) {
			size_t idx = (size_t)strtoul(key, NULL, 10);
			o = idx < json_object_array_length(o) ? json_object_array_get_idx(o, idx) : NULL;
		} else if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (dot ? 1 : 0);
	}
	return o;
}

static inline long long
jgeti(const struct resp *r, const char *path)
{
	struct json_object *v = jget(r->json, path);

	return v != NULL ? (long long)json_object_get_int64(v) : -1;
}

static inline const char *
jgets(const struct resp *r, const char *path)
{
	struct json_object *v = jget(r->json, path);

	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* Create a study (asserts 201); its id into id. code may be NULL. */
static inline void
study_new(const struct test_user *u, char id[IDS_BUFSZ], long long reward, int max,
    const char *code)
{
	char body[1024], extra[128] = "";
	struct resp r;

	if (code != NULL)
		snprintf(extra, sizeof extra, ",\"completion_code\":\"%s\"", code);
	snprintf(body, sizeof body, "{\"title\":\"Survey on tools\",\"description\":\"A short "
	    "survey.\",\"study_url\":\"https://survey.example.org/s/1\",\"reward_per_participant\":"
	    "%lld,\"max_participants\":%d,\"screening_criteria\":\"Adults who write software "
	    "every day\",\"estimated_duration_minutes\":15%s}", reward, max, extra);
	r = post_as(u->hdr, body, "/api/v1/studies");
	if (r.status != 201)
		print_error("create study: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 201);
	snprintf(id, IDS_BUFSZ, "%s", jstr(&r, "id"));
	assert_true(ids_valid(IDS_STUDY, id));
	resp_free(&r);
}

/* POST /studies/{id}/<verb> as an agent or researcher; returns the status. */
static inline long
study_post(const char *hdr, const char *id, const char *verb, const char *body)
{
	struct resp r = post_as(hdr, body, "/api/v1/studies/%s/%s", id, verb);
	long st = r.status;

	resp_free(&r);
	return st;
}

/* The anonymous participant id of the only (or newest) participant. */
static inline void
newest_participant(const struct test_user *u, const char *study, char pid[32])
{
	struct resp r = get_as(u->hdr, "/api/v1/studies/%s/participants", study);

	assert_int_equal(r.status, 200);
	snprintf(pid, 32, "%s", jgets(&r, "participants.0.participant_id"));
	assert_true(anon_id_valid(pid));
	resp_free(&r);
}

/* The participant_id of the first participant of a GET .../participants
 * answer whose status is submitted, into pid ("" when none). */
static inline void
submitted_participant(const struct resp *r, char *pid, size_t n)
{
	struct json_object *arr = jget(r->json, "participants"), *it, *v;
	size_t i, len = arr ? json_object_array_length(arr) : 0;

	pid[0] = '\0';
	for (i = 0; i < len; i++) {
		it = json_object_array_get_idx(arr, i);
		if ((v = jget(it, "status")) != NULL &&
		    strcmp(json_object_get_string(v), "submitted") == 0 &&
		    (v = jget(it, "participant_id")) != NULL) {
			snprintf(pid, n, "%s", json_object_get_string(v));
			return;
		}
	}
}

/* GET /wallet/balance of a credential header. */
static inline void
balance_of(const char *hdr, long long *available, long long *frozen)
{
	struct resp r = get_as(hdr, "/api/v1/wallet/balance");

	assert_int_equal(r.status, 200);
	*available = jint(&r, "available_cents");
	*frozen = jint(&r, "frozen_cents");
	assert_int_equal(jint(&r, "total_cents"), *available + *frozen);
	resp_free(&r);
}

/* Agent reputation through GET /agents/me. */
static inline long long
reputation_of(const struct test_agent *a)
{
	struct resp r = get_as(a->hdr, "/api/v1/agents/me");
	long long rep;

	assert_int_equal(r.status, 200);
	rep = jint(&r, "reputation");
	resp_free(&r);
	return rep;
}

/* Make a study visible to every tier at once (first access has passed). */
static inline void
study_backdate(const char *id, int seconds)
{
	fixture("study-backdate %d %s", seconds, id);
}

/* Move every participation of the study seconds into the past (all of
 * their times together; db_fixture_participations_backdate). */
static inline void
participations_backdate(const char *study, int seconds)
{
	fixture("participations-backdate %d %s", seconds, study);
}

static inline void
agent_set_reputation(const char *id, int rep)
{
	fixture("agent-reputation %s %d", id, rep);
}

/* Wait (up to 60 s) until subject's embedding (agt_ bio, std_ criteria)
 * is ready; asserts it. */
static inline void
embedding_ready(const char *subject)
{
	struct timespec ts = { 0, 50000000L };
	int i;

	for (i = 0; i < 1200; i++) {
		if (sql_int("SELECT status = 'ready' FROM embeddings WHERE subject_id = '%s'",
		    subject) == 1)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("embedding of %s not ready after 60 s", subject);
}

/* POST /profile/bio with text (JSON-escaped by json-c); asserts 200 and
 * the answer's embedding_status "processing" (embedded after the answer). */
static inline void
agent_bio_set(const struct test_agent *a, const char *text)
{
	struct json_object *o = json_object_new_object();
	struct resp r;

	json_object_object_add(o, "bio", json_object_new_string(text));
	r = post_as(a->hdr, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "/api/v1/profile/bio");
	json_object_put(o);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "embedding_status"), "processing");
	resp_free(&r);
}

/* agent_bio_set, then wait until the bio is embedded. */
static inline void
agent_bio_ready(const struct test_agent *a, const char *text)
{
	agent_bio_set(a, text);
	embedding_ready(a->id);
}

#endif
