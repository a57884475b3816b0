/* Who may take part (design.md §14): participant groups, study
 * eligibility (detail, accept, listing), completion codes with actions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

/* Every researcher of this suite, so that its teardown stops their open
 * studies: a study with eligibility left open would cost every later
 * suite's listing one confirmation a poll (test_matching counts them). */
static char made[64][80];
static size_t nmade;

static void
remember(const struct test_user *u)
{
	if (nmade < sizeof made / sizeof made[0])
		snprintf(made[nmade++], sizeof made[0], "%s", u->hdr);
}
#define researcher(u, cents)	((researcher)((u), (cents)), remember(u))

static int
stop_open_studies(void **state)
{
	struct resp r;
	size_t i, j, n;

	(void)state;
	for (i = 0; i < nmade; i++) {
		r = get_as(made[i], "/api/v1/studies?limit=200");
		n = r.json != NULL ? json_object_array_length(jget(r.json, "studies")) : 0;
		for (j = 0; j < n; j++) {
			struct json_object *st = json_object_array_get_idx(jget(r.json, "studies"), j);
			const char *status = json_object_get_string(jget(st, "status"));
			struct resp x;

			if (strcmp(status, "active") != 0 && strcmp(status, "paused") != 0)
				continue;
			x = post_as(made[i], NULL, "/api/v1/studies/%s/stop",
			    json_object_get_string(jget(st, "id")));
			resp_free(&x);
		}
		resp_free(&r);
	}
	return 0;
}

/* POST /groups as u: the new group's id into id. */
static void
group_new(const struct test_user *u, const char *name, char id[IDS_BUFSZ])
{
	char body[256];
	struct resp r;

	snprintf(body, sizeof body, "{\"name\":\"%s\",\"description\":\"wave one\"}", name);
	r = post_as(u->hdr, body, "/api/v1/groups");
	assert_int_equal(r.status, 201);
	snprintf(id, IDS_BUFSZ, "%s", jgets(&r, "id"));
	assert_memory_equal(id, "grp_", 4);
	assert_string_equal(jgets(&r, "name"), name);
	assert_int_equal(jgeti(&r, "member_count"), 0);
	resp_free(&r);
}

/* Create a study with extra JSON fields (",\"eligibility\":{...}"); the
 * status, and its id into id on 201. */
static long
study_with(const struct test_user *u, char id[IDS_BUFSZ], long long reward, int max,
    const char *extra)
{
	char body[2048];
	struct resp r;
	long st;

	snprintf(body, sizeof body, "{\"title\":\"Wave two\",\"description\":\"A follow-up.\","
	    "\"study_url\":\"https://survey.example.org/s/2\",\"reward_per_participant\":%lld,"
	    "\"max_participants\":%d,\"screening_criteria\":\"Adults who write software every "
	    "day\",\"estimated_duration_minutes\":15%s}", reward, max, extra);
	r = post_as(u->hdr, body, "/api/v1/studies");
	st = r.status;
	if (st == 201)
		snprintf(id, IDS_BUFSZ, "%s", jgets(&r, "id"));
	else
		print_message("create: %ld %s\n", st, r.body ? r.body : "");
	resp_free(&r);
	return st;
}

static long
status_of(struct resp r)
{
	long st = r.status;

	resp_free(&r);
	return st;
}

/* Add the participant pid of study s to group g as u: the answer's added. */
static long long
member_add(const struct test_user *u, const char *g, const char *s, const char *pid)
{
	char body[256];
	struct resp r;
	long long added;

	snprintf(body, sizeof body, "{\"members\":[{\"study_id\":\"%s\",\"participant_id\":\"%s\"}]}",
	    s, pid);
	r = post_as(u->hdr, body, "/api/v1/groups/%s/members", g);
	assert_int_equal(r.status, 200);
	added = jgeti(&r, "added");
	resp_free(&r);
	return added;
}

/* --- groups --- */

/* PATCH path with body (NULL: none) as u is 422 and changes nothing. */
static void
patch_refused(const struct test_user *u, const char *path, const char *body)
{
	struct resp r = http_req("PATCH", path, body, HDRS(u->hdr), NULL);

	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
}

static void
groups_crud(void **state)
{
	struct test_user u, other, owner;
	struct test_agent ag;
	char g[IDS_BUFSZ], s[IDS_BUFSZ], s2[IDS_BUFSZ], pid[32], psn[32], body[256];
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	researcher(&other, 0);
	agent_claimed(&ag, &owner, "grp");
	group_new(&u, "Attention check failed", g);
	/* another researcher's group does not exist for the caller */
	assert_int_equal(status_of(get_as(other.hdr, "/api/v1/groups/%s", g)), 404);
	assert_int_equal(status_of(http_req("PATCH", "/api/v1/groups/x", "{\"name\":\"x\"}",
	    HDRS(u.hdr), NULL)), 404);
	/* rename */
	snprintf(body, sizeof body, "/api/v1/groups/%s", g);
	r = http_req("PATCH", body, "{\"name\":\"Failed check\"}", HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "name"), "Failed check");
	assert_string_equal(jgets(&r, "description"), "wave one");
	resp_free(&r);
	/* nothing to change is refused, as a study's edit (no body, {}, a
	 * name of null, an unknown field); a null description clears it */
	patch_refused(&u, body, NULL);
	patch_refused(&u, body, "{}");
	patch_refused(&u, body, "{\"name\":null}");
	patch_refused(&u, body, "{\"nome\":\"x\"}");
	r = http_req("PATCH", body, "{\"description\":null}", HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "name"), "Failed check");
	assert_null(jget(r.json, "description"));
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/groups");
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "groups.0.id"), g);
	resp_free(&r);
	/* members: by {study_id, participant_id}, then by pseudonym */
	study_new(&u, s, 100, 2, NULL);
	assert_int_equal(study_post(ag.hdr, s, "accept", NULL), 200);
	newest_participant(&u, s, pid);
	r = get_as(u.hdr, "/api/v1/studies/%s/participants", s);
	snprintf(psn, sizeof psn, "%s", jgets(&r, "participants.0.pseudonym"));
	resp_free(&r);
	assert_int_equal(member_add(&u, g, s, pid), 1);
	snprintf(body, sizeof body, "{\"members\":[{\"pseudonym\":\"%s\"}]}", psn);
	r = post_as(u.hdr, body, "/api/v1/groups/%s/members", g);
	assert_int_equal(r.status, 200);
	assert_int_equal(jgeti(&r, "added"), 0);
	assert_int_equal(jgeti(&r, "already"), 1);
	assert_int_equal(jgeti(&r, "member_count"), 1);
	resp_free(&r);
	/* an unknown row: 422 naming it, nothing added */
	snprintf(body, sizeof body, "{\"members\":[{\"pseudonym\":\"%s\"},"
	    "{\"pseudonym\":\"psn_0000000000000000\"}]}", psn);
	r = post_as(u.hdr, body, "/api/v1/groups/%s/members", g);
	assert_int_equal(r.status, 422);
	assert_non_null(strstr(jgets(&r, "detail"), "members[1]"));
	resp_free(&r);
	/* another researcher cannot add this participant to its own group */
	{
		char g2[IDS_BUFSZ];

		group_new(&other, "Theirs", g2);
		snprintf(body, sizeof body, "{\"members\":[{\"pseudonym\":\"%s\"}]}", psn);
		assert_int_equal(status_of(post_as(other.hdr, body, "/api/v1/groups/%s/members",
		    g2)), 422);
	}
	r = get_as(u.hdr, "/api/v1/groups/%s/members", g);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "members.0.pseudonym"), psn);
	resp_free(&r);
	/* a group named by an open study cannot be deleted */
	snprintf(body, sizeof body, ",\"eligibility\":{\"exclude_groups\":[\"%s\"]}", g);
	assert_int_equal(study_with(&u, s2, 100, 1, body), 201);
	snprintf(body, sizeof body, "/api/v1/groups/%s", g);
	r = http_req("DELETE", body, NULL, HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 409);
	assert_string_equal(jgets(&r, "error_code"), "INVALID_STATE");
	resp_free(&r);
	assert_int_equal(study_post(u.hdr, s2, "stop", NULL), 200);
	/* remove the member, then delete */
	snprintf(body, sizeof body, "/api/v1/groups/%s/members/%s", g, psn);
	r = http_req("DELETE", body, NULL, HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_int_equal(jgeti(&r, "member_count"), 0);
	resp_free(&r);
	snprintf(body, sizeof body, "/api/v1/groups/%s", g);
	assert_int_equal(status_of(http_req("DELETE", body, NULL, HDRS(u.hdr), NULL)), 200);
	assert_int_equal(status_of(get_as(u.hdr, "/api/v1/groups/%s", g)), 404);
}

/* --- eligibility --- */

static void
eligibility_enforced(void **state)
{
	struct test_user u, other, owner;
	struct test_agent ag, ag2;
	char g[IDS_BUFSZ], ginc[IDS_BUFSZ], s1[IDS_BUFSZ], sx[IDS_BUFSZ], si[IDS_BUFSZ];
	char ss[IDS_BUFSZ], pid[32], psn[32], extra[256], path[128];
	long long ra0, rf0, ra, rf;
	struct resp r;

	(void)state;
	researcher(&u, 20000);
	researcher(&other, 10000);
	agent_claimed(&ag, &owner, "elig");
	agent_claimed(&ag2, &owner, "elig2");
	group_new(&u, "Blocked", g);
	group_new(&u, "Wave one", ginc);
	study_new(&u, s1, 100, 3, NULL);
	assert_int_equal(study_post(ag.hdr, s1, "accept", NULL), 200);
	assert_int_equal(study_post(ag.hdr, s1, "complete", NULL), 200);
	newest_participant(&u, s1, pid);
	r = get_as(u.hdr, "/api/v1/studies/%s/participants", s1);
	snprintf(psn, sizeof psn, "%s", jgets(&r, "participants.0.pseudonym"));
	resp_free(&r);
	/* bad eligibility: 422 naming the field, no money moved */
	balance_of(u.hdr, &ra0, &rf0);
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"exclude_groups\":[\"grp_AAAAAAAAAAAAAAAA\"]}");
	assert_int_equal(study_with(&u, sx, 100, 1, extra), 422);
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"exclude_studies\":[\"%s\"]}", s1);
	assert_int_equal(study_with(&other, sx, 100, 1, extra), 422);	/* not theirs */
	assert_int_equal(study_with(&u, sx, 100, 1, ",\"eligibility\":{\"nope\":[]}"), 422);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	assert_int_equal(rf, rf0);
	/* excluded by a group */
	assert_int_equal(member_add(&u, g, s1, pid), 1);
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"exclude_groups\":[\"%s\"]}", g);
	assert_int_equal(study_with(&u, sx, 100, 2, extra), 201);
	r = get_as(u.hdr, "/api/v1/studies/%s", sx);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "eligibility.exclude_groups.0"), g);
	resp_free(&r);
	assert_int_equal(status_of(get_as(ag.hdr, "/api/v1/studies/%s", sx)), 404);
	r = post_as(ag.hdr, NULL, "/api/v1/studies/%s/accept", sx);
	assert_int_equal(r.status, 404);
	assert_string_equal(jgets(&r, "error_code"), "NOT_FOUND");
	resp_free(&r);
	/* another agent is not excluded */
	assert_int_equal(status_of(get_as(ag2.hdr, "/api/v1/studies/%s", sx)), 200);
	/* the group changes: the next request sees it */
	snprintf(path, sizeof path, "/api/v1/groups/%s/members/%s", g, psn);
	assert_int_equal(status_of(http_req("DELETE", path, NULL, HDRS(u.hdr), NULL)), 200);
	assert_int_equal(status_of(get_as(ag.hdr, "/api/v1/studies/%s", sx)), 200);
	assert_int_equal(study_post(ag.hdr, sx, "accept", NULL), 200);
	assert_int_equal(study_post(ag.hdr, sx, "withdraw", NULL), 200);
	/* include groups: only members */
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"include_groups\":[\"%s\"]}", ginc);
	assert_int_equal(study_with(&u, si, 100, 2, extra), 201);
	assert_int_equal(status_of(get_as(ag.hdr, "/api/v1/studies/%s", si)), 404);
	assert_int_equal(study_post(ag2.hdr, si, "accept", NULL), 404);
	assert_int_equal(member_add(&u, ginc, s1, pid), 1);
	assert_int_equal(status_of(get_as(ag.hdr, "/api/v1/studies/%s", si)), 200);
	assert_int_equal(study_post(ag2.hdr, si, "accept", NULL), 404);
	assert_int_equal(study_post(ag.hdr, si, "accept", NULL), 200);
	assert_int_equal(study_post(ag.hdr, si, "withdraw", NULL), 200);
	/* excluded studies: who took part in s1 (any state) */
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"exclude_studies\":[\"%s\"]}", s1);
	assert_int_equal(study_with(&u, ss, 100, 2, extra), 201);
	assert_int_equal(study_post(ag.hdr, ss, "accept", NULL), 404);
	assert_int_equal(study_post(ag2.hdr, ss, "accept", NULL), 200);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* The available listing leaves an ineligible agent's studies out, at
 * once after a group change: an exclude group it leaves, an include group
 * it joins. */
static void
eligibility_listing(void **state)
{
	struct test_user u, owner;
	struct test_agent ag;
	char g[IDS_BUFSZ], gi[IDS_BUFSZ], s1[IDS_BUFSZ], sx[IDS_BUFSZ], si[IDS_BUFSZ];
	char pid[32], extra[256], psn[32], path[128];
	struct resp r;
	int i, j;

	(void)state;
	researcher(&u, 20000);
	agent_claimed(&ag, &owner, "list");
	agent_set_reputation(ag.id, 80);	/* priority: sees new studies at once */
	agent_bio_ready(&ag, "A software developer who writes C and SQL every day.");
	group_new(&u, "Blocked", g);
	group_new(&u, "Wave one", gi);
	study_new(&u, s1, 100, 3, NULL);
	assert_int_equal(study_post(ag.hdr, s1, "accept", NULL), 200);
	assert_int_equal(study_post(ag.hdr, s1, "complete", NULL), 200);
	newest_participant(&u, s1, pid);
	r = get_as(u.hdr, "/api/v1/studies/%s/participants", s1);
	snprintf(psn, sizeof psn, "%s", jgets(&r, "participants.0.pseudonym"));
	resp_free(&r);
	assert_int_equal(member_add(&u, g, s1, pid), 1);
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"exclude_groups\":[\"%s\"]}", g);
	assert_int_equal(study_with(&u, sx, 100, 2, extra), 201);
	embedding_ready(sx);
	snprintf(extra, sizeof extra, ",\"eligibility\":{\"include_groups\":[\"%s\"]}", gi);
	assert_int_equal(study_with(&u, si, 100, 2, extra), 201);
	embedding_ready(si);
	/* left out, then (groups changed) listed; eight times each, so that
	 * workers whose index is current answer too (the path that reads only
	 * the flagged studies' rules, match/cache.c) */
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 8; j++) {
			r = get_as(ag.hdr, "/api/v1/studies/available?limit=100");
			assert_int_equal(r.status, 200);
			assert_int_equal(r.body != NULL && strstr(r.body, sx) != NULL, i);
			assert_int_equal(r.body != NULL && strstr(r.body, si) != NULL, i);
			resp_free(&r);
		}
		if (i > 0)
			break;
		snprintf(path, sizeof path, "/api/v1/groups/%s/members/%s", g, psn);
		assert_int_equal(status_of(http_req("DELETE", path, NULL, HDRS(u.hdr), NULL)), 200);
		assert_int_equal(member_add(&u, gi, s1, pid), 1);
	}
}

/* --- completion codes with actions --- */

static void
code_actions(void **state)
{
	struct test_user u, owner;
	struct test_agent a1, a2, a3, a4;
	char s[IDS_BUFSZ], g[IDS_BUFSZ], extra[512];
	long long ra0, rf0, ra, rf, aa0, af, rep0;
	struct resp r;

	(void)state;
	researcher(&u, 20000);
	agent_claimed(&a1, &owner, "cA");
	agent_claimed(&a2, &owner, "cB");
	agent_claimed(&a3, &owner, "cC");
	agent_claimed(&a4, &owner, "cD");
	group_new(&u, "Screened", g);
	/* bad input: no money moved */
	balance_of(u.hdr, &ra0, &rf0);
	assert_int_equal(study_with(&u, s, 100, 2, ",\"completion_codes\":[{\"code\":\"AAAA\","
	    "\"action\":\"explode\"}]"), 422);
	assert_int_equal(study_with(&u, s, 100, 2, ",\"completion_codes\":[{\"code\":\"AAAA\","
	    "\"action\":\"review\"},{\"code\":\"AAAA\",\"action\":\"approve\"}]"), 422);
	assert_int_equal(study_with(&u, s, 100, 2, ",\"completion_code\":\"X\","
	    "\"completion_codes\":[{\"code\":\"AAAA\",\"action\":\"review\"}]"), 422);
	assert_int_equal(study_with(&u, s, 100, 2, ",\"screen_out_cents\":101"), 422);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	/* reward 100, fee 10; screen-out 20, its fee 2 */
	snprintf(extra, sizeof extra, ",\"screen_out_cents\":20,\"completion_codes\":["
	    "{\"code\":\"OKAY1\",\"action\":\"approve\"},{\"code\":\"LOOK1\",\"action\":\"review\"},"
	    "{\"code\":\"FAIL1\",\"action\":\"reject\"},"
	    "{\"code\":\"SCRN1\",\"action\":\"screen_out\",\"add_to_group\":\"%s\"}]", g);
	assert_int_equal(study_with(&u, s, 100, 3, extra), 201);
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "screen_out_cents"), 20);
	assert_string_equal(jgets(&r, "completion_codes.3.action"), "screen_out");
	assert_string_equal(jgets(&r, "completion_codes.3.add_to_group"), g);
	resp_free(&r);
	/* agents never see the codes */
	r = get_as(a1.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, "OKAY1"));
	assert_true(json_object_get_boolean(jget(r.json, "requires_completion_code")));
	resp_free(&r);
	balance_of(u.hdr, &ra0, &rf0);
	/* approve: approved at once, paid */
	balance_of(a1.hdr, &aa0, &af);
	assert_int_equal(study_post(a1.hdr, s, "accept", NULL), 200);
	r = post_as(a1.hdr, "{\"completion_code\":\"OKAY1\"}", "/api/v1/studies/%s/complete", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "status"), "approved");
	resp_free(&r);
	balance_of(a1.hdr, &ra, &af);
	assert_int_equal(ra, aa0 + 100);
	/* screen_out: paid 20 + fee 2 from the researcher, reputation kept,
	 * the slot freed, the member added */
	rep0 = reputation_of(&a2);
	balance_of(a2.hdr, &aa0, &af);
	assert_int_equal(study_post(a2.hdr, s, "accept", NULL), 200);
	r = post_as(a2.hdr, "{\"completion_code\":\"SCRN1\"}", "/api/v1/studies/%s/complete", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "status"), "screened_out");
	resp_free(&r);
	balance_of(a2.hdr, &ra, &af);
	assert_int_equal(ra, aa0 + 20);
	assert_int_equal(reputation_of(&a2), rep0);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 - 22);		/* the freed place funded again */
	assert_int_equal(rf, rf0 - 110);	/* a1's slot paid out */
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "stats.screened_out"), 1);
	assert_int_equal(jgeti(&r, "stats.spots_remaining"), 2);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/groups/%s", g);
	assert_int_equal(jgeti(&r, "member_count"), 1);
	resp_free(&r);
	/* reject: rejected at once, category failed_check, refund */
	assert_int_equal(study_post(a3.hdr, s, "accept", NULL), 200);
	r = post_as(a3.hdr, "{\"completion_code\":\"FAIL1\"}", "/api/v1/studies/%s/complete", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "status"), "rejected");
	resp_free(&r);
	/* a code not in the list: INVALID_SUBMISSION; review leaves it submitted */
	assert_int_equal(study_post(a4.hdr, s, "accept", NULL), 200);
	r = post_as(a4.hdr, "{\"completion_code\":\"NOPE1\"}", "/api/v1/studies/%s/complete", s);
	assert_int_equal(r.status, 422);
	assert_string_equal(jgets(&r, "error_code"), "INVALID_SUBMISSION");
	resp_free(&r);
	r = post_as(a4.hdr, "{\"completion_code\":\"LOOK1\"}", "/api/v1/studies/%s/complete", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "status"), "submitted");
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* A screen-out the researcher cannot fund again: the place leaves the
 * study, the rest of its budget comes back. */
static void
screen_out_unfunded(void **state)
{
	struct test_user u, owner;
	struct test_agent a1;
	char s[IDS_BUFSZ];
	long long ra, rf;
	struct resp r;

	(void)state;
	researcher(&u, 220);		/* exactly 2 x (100 + 10) */
	agent_claimed(&a1, &owner, "cU");
	assert_int_equal(study_with(&u, s, 100, 2, ",\"screen_out_cents\":30,\"completion_codes\":"
	    "[{\"code\":\"SCRN2\",\"action\":\"screen_out\"}]"), 201);
	assert_int_equal(study_post(a1.hdr, s, "accept", NULL), 200);
	r = post_as(a1.hdr, "{\"completion_code\":\"SCRN2\"}", "/api/v1/studies/%s/complete", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "status"), "screened_out");
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(rf, 110);		/* one place left */
	assert_int_equal(ra, 110 - 33);		/* that place's rest */
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "max_participants"), 1);
	assert_int_equal(jgeti(&r, "stats.spots_remaining"), 1);
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* The newest event of type t in the credential's feed: its data as JSON
 * text into out ("" when none). */
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

/* --- clone --- */

static void
clone_study(void **state)
{
	struct test_user u, other, poor, owner;
	struct test_agent ag, ag2;
	char s1[IDS_BUFSZ], c1[IDS_BUFSZ], c2[IDS_BUFSZ], sp[IDS_BUFSZ], body[256];
	long long ra0, rf0, ra, rf;
	struct resp r;

	(void)state;
	researcher(&u, 20000);
	researcher(&other, 10000);
	agent_claimed(&ag, &owner, "cl1");
	agent_claimed(&ag2, &owner, "cl2");
	study_new(&u, s1, 100, 3, "ABCD1");
	assert_int_equal(study_post(ag.hdr, s1, "accept", NULL), 200);
	assert_int_equal(study_post(ag.hdr, s1, "complete", "{\"completion_code\":\"ABCD1\"}"),
	    200);
	/* overrides apply, the rest is the source's, the source excluded */
	balance_of(u.hdr, &ra0, &rf0);
	r = post_as(u.hdr, "{\"title\":\"Wave three\",\"max_participants\":2}",
	    "/api/v1/studies/%s/clone", s1);
	assert_int_equal(r.status, 201);
	snprintf(c1, sizeof c1, "%s", jgets(&r, "id"));
	assert_string_not_equal(c1, s1);
	assert_string_equal(jgets(&r, "title"), "Wave three");
	assert_int_equal(jgeti(&r, "max_participants"), 2);
	assert_string_equal(jgets(&r, "description"), "A short survey.");
	assert_int_equal(jgeti(&r, "reward_per_participant"), 100);
	assert_string_equal(jgets(&r, "status"), "active");
	assert_string_equal(jgets(&r, "completion_codes.0.code"), "ABCD1");
	assert_string_equal(jgets(&r, "eligibility.exclude_studies.0"), s1);
	assert_int_equal(jgeti(&r, "funding.frozen_cents"), 220);
	resp_free(&r);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0 - 220);	/* funded as a create: 2 x (100 + 10) */
	/* the source's participant neither sees, opens nor accepts it */
	assert_int_equal(status_of(get_as(ag.hdr, "/api/v1/studies/%s", c1)), 404);
	assert_int_equal(study_post(ag.hdr, c1, "accept", NULL), 404);
	assert_int_equal(status_of(get_as(ag2.hdr, "/api/v1/studies/%s", c1)), 200);
	assert_int_equal(study_post(ag2.hdr, c1, "accept", NULL), 200);
	/* a body that sets eligibility itself: the source is not excluded */
	r = post_as(u.hdr, "{\"eligibility\":{}}", "/api/v1/studies/%s/clone", s1);
	assert_int_equal(r.status, 201);
	snprintf(c2, sizeof c2, "%s", jgets(&r, "id"));
	assert_null(jget(r.json, "eligibility.exclude_studies.0"));
	resp_free(&r);
	assert_int_equal(study_post(ag.hdr, c2, "accept", NULL), 200);
	/* a bad override: 422, nothing moved */
	balance_of(u.hdr, &ra0, &rf0);
	assert_int_equal(status_of(post_as(u.hdr, "{\"reward_per_participant\":0}",
	    "/api/v1/studies/%s/clone", s1)), 422);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);
	/* another researcher's study, an unknown one: 404 */
	r = post_as(other.hdr, "{}", "/api/v1/studies/%s/clone", s1);
	assert_int_equal(r.status, 404);
	assert_string_equal(jgets(&r, "error_code"), "NOT_FOUND");
	resp_free(&r);
	assert_int_equal(status_of(post_as(u.hdr, "{}",
	    "/api/v1/studies/std_AAAAAAAAAAAAAAAA/clone")), 404);
	/* not enough money: 402, nothing written */
	researcher(&poor, 110);
	study_new(&poor, sp, 100, 1, NULL);
	r = post_as(poor.hdr, "{}", "/api/v1/studies/%s/clone", sp);
	assert_int_equal(r.status, 402);
	assert_string_equal(jgets(&r, "error_code"), "INSUFFICIENT_SC");
	resp_free(&r);
	r = get_as(poor.hdr, "/api/v1/studies");
	assert_null(jget(r.json, "studies.1"));
	resp_free(&r);
	snprintf(body, sizeof body, "{\"max_participants\":1}");
	assert_int_equal(status_of(post_as(poor.hdr, body, "/api/v1/studies/%s/clone", sp)), 402);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* --- return requests --- */

static void
return_request(void **state)
{
	struct test_user u, other, owner;
	struct test_agent ag, ag2;
	char s[IDS_BUFSZ], pid[32], pid2[32], ev[2048], want[256];
	long long rep0, ra0, rf0, ra, rf;
	struct resp r;

	(void)state;
	researcher(&u, 20000);
	researcher(&other, 10000);
	agent_claimed(&ag, &owner, "rr1");
	agent_claimed(&ag2, &owner, "rr2");
	study_new(&u, s, 100, 2, NULL);
	assert_int_equal(study_post(ag.hdr, s, "accept", NULL), 200);
	newest_participant(&u, s, pid);
	/* no reason: 422; another researcher: 404; an unknown participant: 404 */
	assert_int_equal(status_of(post_as(u.hdr, "{}",
	    "/api/v1/studies/%s/participants/%s/request-return", s, pid)), 422);
	assert_int_equal(status_of(post_as(other.hdr, "{\"reason\":\"x\"}",
	    "/api/v1/studies/%s/participants/%s/request-return", s, pid)), 404);
	assert_int_equal(status_of(post_as(u.hdr, "{\"reason\":\"x\"}",
	    "/api/v1/studies/%s/participants/anon_000000000000/request-return", s)), 404);
	/* no request yet: the detail has no nextActions */
	r = get_as(ag.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(r.status, 200);
	assert_null(jget(r.json, "nextActions"));
	resp_free(&r);
	r = post_as(u.hdr, "{\"reason\":\"The link was \\\"wrong\\\"\"}",
	    "/api/v1/studies/%s/participants/%s/request-return", s, pid);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "participant_id"), pid);
	assert_non_null(jget(r.json, "return_requested_at"));
	assert_true(json_object_is_type(jget(r.json, "return_requested_at"), json_type_string));
	resp_free(&r);
	/* the agent is told: an event, a nextActions entry pointing at withdraw */
	last_event(ag.hdr, "participation.return_requested", ev, sizeof ev);
	snprintf(want, sizeof want, "\"study_id\":\"%s\"", s);
	assert_non_null(strstr(ev, want));
	assert_non_null(strstr(ev, "\"participation_id\":\"prt_"));
	assert_non_null(strstr(ev, "\"reason\":\"The link was \\\"wrong\\\"\""));
	r = get_as(ag.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "nextActions.0.action"), "withdraw");
	snprintf(want, sizeof want, "POST /studies/%s/withdraw", s);
	assert_string_equal(jgets(&r, "nextActions.0.endpoint"), want);
	assert_non_null(strstr(jgets(&r, "nextActions.0.description"), "wrong"));
	resp_free(&r);
	/* the withdrawal costs nothing */
	rep0 = reputation_of(&ag);
	assert_int_equal(study_post(ag.hdr, s, "withdraw", NULL), 200);
	assert_int_equal(reputation_of(&ag), rep0);
	/* withdrawn: no longer asked */
	r = post_as(u.hdr, "{\"reason\":\"again\"}",
	    "/api/v1/studies/%s/participants/%s/request-return", s, pid);
	assert_int_equal(r.status, 409);
	assert_string_equal(jgets(&r, "error_code"), "INVALID_STATE");
	resp_free(&r);
	/* submitted: withdrawn only after a request, the slot freed */
	assert_int_equal(study_post(ag2.hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(ag2.hdr, s, "complete", NULL), 200);
	newest_participant(&u, s, pid2);
	assert_int_equal(study_post(ag2.hdr, s, "withdraw", NULL), 409);
	balance_of(u.hdr, &ra0, &rf0);
	assert_int_equal(status_of(post_as(u.hdr, "{\"reason\":\"Duplicate\"}",
	    "/api/v1/studies/%s/participants/%s/request-return", s, pid2)), 200);
	rep0 = reputation_of(&ag2);
	r = post_as(ag2.hdr, NULL, "/api/v1/studies/%s/withdraw", s);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "status"), "withdrawn");
	resp_free(&r);
	assert_int_equal(reputation_of(&ag2), rep0);
	balance_of(u.hdr, &ra, &rf);
	assert_int_equal(ra, ra0);		/* the slot stays funded, open again */
	assert_int_equal(rf, rf0);
	r = get_as(u.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(jgeti(&r, "stats.withdrawn"), 2);
	assert_int_equal(jgeti(&r, "stats.spots_remaining"), 2);
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* --- eligibility changed while paused --- */

static void
eligibility_patch(void **state)
{
	struct test_user u, owner;
	struct test_agent ag, ag2;
	char g[IDS_BUFSZ], s1[IDS_BUFSZ], s2[IDS_BUFSZ], pid[32], body[256], path[96];
	struct resp r;

	(void)state;
	researcher(&u, 20000);
	agent_claimed(&ag, &owner, "ep1");
	agent_claimed(&ag2, &owner, "ep2");
	group_new(&u, "Pilot", g);
	study_new(&u, s1, 100, 2, NULL);
	assert_int_equal(study_post(ag.hdr, s1, "accept", NULL), 200);
	assert_int_equal(study_post(ag.hdr, s1, "complete", NULL), 200);
	newest_participant(&u, s1, pid);
	assert_int_equal(member_add(&u, g, s1, pid), 1);
	study_new(&u, s2, 100, 2, NULL);
	snprintf(path, sizeof path, "/api/v1/studies/%s", s2);
	snprintf(body, sizeof body, "{\"eligibility\":{\"exclude_groups\":[\"%s\"]}}", g);
	/* active: refused */
	r = http_req("PATCH", path, body, HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 409);
	assert_string_equal(jgets(&r, "error_code"), "INVALID_STATE");
	resp_free(&r);
	assert_int_equal(study_post(u.hdr, s2, "pause", NULL), 200);
	/* validated as on create */
	assert_int_equal(status_of(http_req("PATCH", path, "{\"eligibility\":{\"exclude_groups\":"
	    "[\"grp_AAAAAAAAAAAAAAAA\"]}}", HDRS(u.hdr), NULL)), 422);
	assert_int_equal(status_of(http_req("PATCH", path, "{\"eligibility\":{\"nope\":[]}}",
	    HDRS(u.hdr), NULL)), 422);
	r = http_req("PATCH", path, body, HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "eligibility.exclude_groups.0"), g);
	resp_free(&r);
	assert_int_equal(study_post(u.hdr, s2, "resume", NULL), 200);
	assert_int_equal(status_of(get_as(ag.hdr, "/api/v1/studies/%s", s2)), 404);
	assert_int_equal(study_post(ag.hdr, s2, "accept", NULL), 404);
	assert_int_equal(status_of(get_as(ag2.hdr, "/api/v1/studies/%s", s2)), 200);
	/* cleared while paused again: applies at once */
	assert_int_equal(study_post(u.hdr, s2, "pause", NULL), 200);
	r = http_req("PATCH", path, "{\"eligibility\":{}}", HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_null(jget(r.json, "eligibility.exclude_groups.0"));
	resp_free(&r);
	assert_int_equal(study_post(u.hdr, s2, "resume", NULL), 200);
	assert_int_equal(study_post(ag.hdr, s2, "accept", NULL), 200);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(groups_crud),
		cmocka_unit_test(eligibility_enforced),
		cmocka_unit_test(eligibility_listing),
		cmocka_unit_test(code_actions),
		cmocka_unit_test(screen_out_unfunded),
		cmocka_unit_test(clone_study),
		cmocka_unit_test(return_request),
		cmocka_unit_test(eligibility_patch),
	};

	return cmocka_run_group_tests(tests, NULL, stop_open_studies);
}
