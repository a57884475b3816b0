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

#include "tests/api/study_helpers.h"

/* --- shared helpers --- */

/* Agent a accepts and completes study s (no completion code). */
static void
take_part(const struct test_agent *a, const char *s)
{
	assert_int_equal(study_post(a->hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(a->hdr, s, "complete", NULL), 200);
}

/* The participant item of agent a's participation in study s, as the
 * researcher u lists it: the one whose pseudonym is psn ("" for the
 * newest). */
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

/* How many rows of `table` a SQL condition matches. */
#define ROWS(...) sql_int(__VA_ARGS__)

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pseudonym_stable_per_researcher),
		cmocka_unit_test(reject_category_shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
