/* Events (design.md §11): what a participation writes for the agent and
 * the researcher, in order; the feed's cursor; isolation between
 * credentials; reputation changes; webhooks' endpoints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

/* Every event of a credential, walking the feed limit at a time: the
 * types joined by ',' into types, the ids into ids (n of them). */
static void
feed_all(const char *hdr, int limit, char *types, size_t tn, char ids[][IDS_BUFSZ], size_t max,
    size_t *n)
{
	char cursor[64] = "0";
	struct json_object *ev;
	struct resp r;
	size_t i, len, k;

	types[0] = '\0';
	*n = 0;
	for (;;) {
		r = get_as(hdr, "/api/v1/events?limit=%d&cursor=%s", limit, cursor);
		assert_int_equal(r.status, 200);
		ev = jget(r.json, "events");
		assert_non_null(ev);
		/* next_cursor is never null */
		assert_true(json_object_is_type(jget(r.json, "next_cursor"), json_type_string));
		len = json_object_array_length(ev);
		assert_true(len <= (size_t)limit);
		for (i = 0; i < len; i++) {
			char key[64];
			const char *id;

			snprintf(key, sizeof key, "events.%zu.id", i);
			id = jgets(&r, key);
			assert_true(ids_valid(IDS_EVENT, id));
			/* an owner's ids sort as its feed (design.md §11.4: a
			 * webhook receiver orders by created_at and id) */
			if (*n > 0)
				assert_true(strcmp(ids[*n - 1], id) < 0);
			/* never repeated */
			for (k = 0; k < *n; k++)
				assert_string_not_equal(ids[k], id);
			assert_true(*n < max);
			snprintf(ids[(*n)++], IDS_BUFSZ, "%s", id);
			snprintf(key, sizeof key, "events.%zu.type", i);
			k = strlen(types);
			snprintf(types + k, tn - k, "%s%s", k ? "," : "", jgets(&r, key));
			snprintf(key, sizeof key, "events.%zu.created_at", i);
			assert_int_equal(strlen(jgets(&r, key)), 20);
		}
		if (len == 0) {
			/* an empty page keeps the cursor */
			assert_string_equal(jgets(&r, "next_cursor"), cursor);
			resp_free(&r);
			return;
		}
		snprintf(cursor, sizeof cursor, "%s", jgets(&r, "next_cursor"));
		resp_free(&r);
	}
}

/* The data object of the n-th event (0-based) of a credential. */
static struct resp
nth_event(const char *hdr, int n)
{
	struct resp r = get_as(hdr, "/api/v1/events?limit=1&cursor=%d", n);

	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "events")), 1);
	return r;
}

static void
full_participation(void **state)
{
	struct test_user u, ou, other;
	struct test_agent a, b;
	char s[IDS_BUFSZ], pid[32], prt[IDS_BUFSZ], types[2048];
	char ids[64][IDS_BUFSZ], ids1[64][IDS_BUFSZ], idsb[64][IDS_BUFSZ];
	struct resp r;
	size_t n, n1, nb, i, k;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a, &ou, "eventful");
	study_new(&u, s, 500, 1, "SECRET");
	r = post_as(a.hdr, NULL, "/api/v1/studies/%s/accept", s);
	assert_int_equal(r.status, 200);
	snprintf(prt, sizeof prt, "%s", jstr(&r, "participation_id"));
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/studies/%s", s);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	r = post_as(a.hdr, "{\"completion_code\":\"WRONG\"}", "/api/v1/studies/%s/complete", s);
	assert_error(&r, 422, "INVALID_SUBMISSION");
	resp_free(&r);
	assert_int_equal(study_post(a.hdr, s, "complete", "{\"completion_code\":\"SECRET\"}"), 200);
	newest_participant(&u, s, pid);
	assert_int_equal(study_post(u.hdr, s, "participants/approve", NULL), 404);
	r = post_as(u.hdr, NULL, "/api/v1/studies/%s/participants/%s/approve", s, pid);
	assert_int_equal(r.status, 200);
	resp_free(&r);

	/* the agent's events, exactly and in order; one page or one by one
	 * gives the same list */
	feed_all(a.hdr, 200, types, sizeof types, ids, 64, &n);
	assert_string_equal(types, "wallet.credited,participation.accepted,reputation.changed,"
	    "participation.submitted,participation.approved,reputation.changed,wallet.credited");
	feed_all(a.hdr, 1, types, sizeof types, ids1, 64, &n1);
	assert_int_equal(n1, n);
	for (i = 0; i < n; i++)
		assert_string_equal(ids1[i], ids[i]);
	/* their data */
	r = nth_event(a.hdr, 0);
	assert_string_equal(jgets(&r, "events.0.data.cause"), "signup_bonus");
	assert_int_equal(jgeti(&r, "events.0.data.amount_cents"), 100);
	resp_free(&r);
	r = nth_event(a.hdr, 1);
	assert_string_equal(jgets(&r, "events.0.data.study_id"), s);
	assert_string_equal(jgets(&r, "events.0.data.participation_id"), prt);
	resp_free(&r);
	r = nth_event(a.hdr, 2);
	assert_int_equal(jgeti(&r, "events.0.data.from"), 50);
	assert_int_equal(jgeti(&r, "events.0.data.to"), 45);
	assert_string_equal(jgets(&r, "events.0.data.cause"), "invalid_submission");
	assert_string_equal(jgets(&r, "events.0.data.participation_id"), prt);
	resp_free(&r);
	r = nth_event(a.hdr, 4);
	assert_string_equal(jgets(&r, "events.0.data.participation_id"), prt);
	assert_string_equal(jgets(&r, "events.0.data.status"), "approved");
	resp_free(&r);
	r = nth_event(a.hdr, 5);
	assert_int_equal(jgeti(&r, "events.0.data.from"), 45);
	assert_int_equal(jgeti(&r, "events.0.data.to"), 47);
	assert_string_equal(jgets(&r, "events.0.data.cause"), "approved");
	resp_free(&r);
	r = nth_event(a.hdr, 6);
	assert_int_equal(jgeti(&r, "events.0.data.amount_cents"), 500);
	assert_string_equal(jgets(&r, "events.0.data.cause"), "earning");
	assert_string_equal(jgets(&r, "events.0.data.study_id"), s);
	resp_free(&r);

	/* the researcher's */
	/* study.full when the one slot was taken (the accept), then the
	 * submission, then the close it caused */
	feed_all(u.hdr, 2, types, sizeof types, ids1, 64, &n1);
	assert_string_equal(types, "wallet.credited,study.full,submission.created,"
	    "study.status_changed");
	r = nth_event(u.hdr, 1);
	assert_string_equal(jgets(&r, "events.0.data.study_id"), s);
	assert_int_equal(jgeti(&r, "events.0.data.max_participants"), 1);
	resp_free(&r);
	r = nth_event(u.hdr, 2);
	assert_string_equal(jgets(&r, "events.0.data.study_id"), s);
	assert_string_equal(jgets(&r, "events.0.data.participation_id"), prt);
	assert_string_equal(jgets(&r, "events.0.data.participant_id"), pid);
	resp_free(&r);
	r = nth_event(u.hdr, 3);
	assert_string_equal(jgets(&r, "events.0.data.from"), "active");
	assert_string_equal(jgets(&r, "events.0.data.to"), "awaiting_review");
	resp_free(&r);

	/* another credential never sees them */
	agent_new(&b, "bystander");
	feed_all(b.hdr, 50, types, sizeof types, idsb, 64, &nb);
	assert_int_equal(nb, 0);
	user_login(&other, "other");
	feed_all(other.hdr, 50, types, sizeof types, idsb, 64, &nb);
	for (i = 0; i < nb; i++)
		for (k = 0; k < n; k++)
			assert_string_not_equal(idsb[i], ids[k]);
	feed_all(ou.hdr, 50, types, sizeof types, idsb, 64, &nb);
	assert_int_equal(nb, 0);	/* the owner's account is not its agent */
	/* no credential, a bad cursor */
	r = get_as(NULL, "/api/v1/events");
	assert_int_equal(r.status, 401);
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/events?cursor=abc");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/events?limit=0");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* the newest event's number is the largest cursor handed out: past
	 * it, a cursor was never given (polling from it would skip events) */
	r = get_as(a.hdr, "/api/v1/events?cursor=%zu", n);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "events")), 0);
	assert_int_equal(atoll(jgets(&r, "next_cursor")), (long long)n);
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/events?cursor=%zu", n + 1);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/agents/me/reputation?cursor=%zu", n + 1);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(b.hdr, "/api/v1/events?cursor=1");		/* no event yet */
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = get_as(b.hdr, "/api/v1/events?cursor=0");
	assert_int_equal(r.status, 200);
	resp_free(&r);

	/* the reputation changes, with cause and participation */
	r = get_as(a.hdr, "/api/v1/agents/me/reputation");
	assert_int_equal(r.status, 200);
	assert_int_equal(jint(&r, "reputation"), 47);
	assert_string_equal(jstr(&r, "tier"), "basic");
	assert_int_equal(json_object_array_length(jget(r.json, "changes")), 2);
	assert_int_equal(jgeti(&r, "changes.0.from"), 50);
	assert_int_equal(jgeti(&r, "changes.0.to"), 45);
	assert_string_equal(jgets(&r, "changes.0.cause"), "invalid_submission");
	assert_string_equal(jgets(&r, "changes.1.cause"), "approved");
	assert_string_equal(jgets(&r, "changes.1.participation_id"), prt);
	assert_string_equal(jgets(&r, "changes.1.study_id"), s);
	assert_string_equal(jgets(&r, "changes.1.event_id"), ids[5]);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/agents/me/reputation");
	assert_int_equal(r.status, 401);
	resp_free(&r);
}

/* New events after a cursor appear after it, never before it. */
static void
cursor_follows(void **state)
{
	struct test_user u, ou;
	struct test_agent a;
	char s[IDS_BUFSZ], cur[64];
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a, &ou, "follower");
	r = get_as(a.hdr, "/api/v1/events");
	assert_int_equal(json_object_array_length(jget(r.json, "events")), 1);
	snprintf(cur, sizeof cur, "%s", jgets(&r, "next_cursor"));
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/events?cursor=%s", cur);
	assert_int_equal(json_object_array_length(jget(r.json, "events")), 0);
	assert_string_equal(jgets(&r, "next_cursor"), cur);
	resp_free(&r);
	study_new(&u, s, 100, 2, NULL);
	assert_int_equal(study_post(a.hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(a.hdr, s, "withdraw", NULL), 200);
	/* a refused change writes no event: this study cannot be taken again */
	assert_int_equal(study_post(a.hdr, s, "accept", NULL), 409);
	r = get_as(a.hdr, "/api/v1/events?cursor=%s", cur);
	assert_int_equal(json_object_array_length(jget(r.json, "events")), 2);
	assert_string_equal(jgets(&r, "events.0.type"), "participation.accepted");
	assert_string_equal(jgets(&r, "events.1.type"), "participation.withdrawn");
	resp_free(&r);
	/* the researcher stops the study: its status change */
	assert_int_equal(study_post(u.hdr, s, "stop", NULL), 200);
	r = get_as(u.hdr, "/api/v1/events?cursor=1");
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "events.0.type"), "study.status_changed");
	assert_string_equal(jgets(&r, "events.0.data.study_id"), s);
	resp_free(&r);
}

/* Writers commit events concurrently (40 top-ups, 8 at a time, each its
 * own transaction) while a reader polls from its cursor: it sees every
 * event once, in the feed's order, none skipped. */
static void
cursor_under_concurrency(void **state)
{
	enum { N = 40 };
	struct test_agent a;
	char cursor[64] = "0", seen[N + 8][IDS_BUFSZ], all[N + 8][IDS_BUFSZ], types[4096];
	char done[512];
	size_t nseen = 0, nall, i, k, len;
	long long avail, frozen;
	struct resp r;
	int rounds, finished = 0;

	(void)state;
	agent_new(&a, "busy");
	/* the first event of the agent (its wallet and its event numbering
	 * begin), then the concurrent ones */
	assert_int_equal(admin(NULL, 0, "topup %s 1", a.id), 0);
	snprintf(done, sizeof done, "%s/run/topups-%s.done", getenv("ARPS_VAR"), a.id);
	assert_int_equal(sh("(seq 1 %d | xargs -P 8 -I{} %s/build/arps-admin --config %s topup %s 1 "
	    ">/dev/null 2>>%s/log/topup-test.log; touch %s) &", N, getenv("ARPS_ROOT"),
	    getenv("ARPS_CONFIG"), a.id, getenv("ARPS_VAR"), done), 0);
	for (rounds = 0; rounds < 1200; rounds++) {
		int was_done = access(done, F_OK) == 0;

		r = get_as(a.hdr, "/api/v1/events?limit=7&cursor=%s", cursor);
		assert_int_equal(r.status, 200);
		len = json_object_array_length(jget(r.json, "events"));
		for (i = 0; i < len; i++) {
			char key[64];
			const char *id;

			snprintf(key, sizeof key, "events.%zu.id", i);
			id = jgets(&r, key);
			for (k = 0; k < nseen; k++)
				assert_string_not_equal(seen[k], id);
			assert_true(nseen < N + 8);
			snprintf(seen[nseen++], IDS_BUFSZ, "%s", id);
		}
		snprintf(cursor, sizeof cursor, "%s", jgets(&r, "next_cursor"));
		resp_free(&r);
		/* an empty page read after every writer finished: all seen */
		if (len == 0 && was_done) {
			finished = 1;
			break;
		}
		if (len == 0)
			usleep(50000);
	}
	assert_true(finished);
	unlink(done);
	/* one event per top-up that committed (arps-admin gives up on a
	 * deadlock after 5 tries, so count the cents) */
	balance_of(a.hdr, &avail, &frozen);
	assert_true(avail > N / 2);
	assert_int_equal(nseen, avail);
	feed_all(a.hdr, 200, types, sizeof types, all, N + 8, &nall);
	assert_int_equal(nall, nseen);
	for (i = 0; i < nall; i++)
		assert_string_equal(seen[i], all[i]);
}

/* study.matched: written when the criteria embedding becomes ready, for
 * a priority agent whose bio matches (the same text scores about 0.9; the
 * other tiers' wait for first access, test_matching) and not for
 * one without a bio, nor for an unclaimed one with the same bio (it lists
 * no study: interface-spec "Matching"). */
static void
matched_on_publication(void **state)
{
	static const char bio[] = "Adults who write software every day";
	struct test_user u, o1, o2;
	struct test_agent a, nobio, unclaimed;
	char s[IDS_BUFSZ], types[2048], ids[64][IDS_BUFSZ];
	struct resp r;
	size_t n, i;
	int found = 0;

	(void)state;
	agent_claimed(&a, &o1, "matchable");
	agent_claimed(&nobio, &o2, "silent");
	agent_new(&unclaimed, "unclaimed-matchable");
	agent_bio_ready(&a, bio);
	agent_set_reputation(a.id, 85);
	agent_bio_ready(&unclaimed, bio);
	researcher(&u, 10000);
	study_new(&u, s, 100, 2, NULL);	/* its criteria: the bio's text */
	embedding_ready(s);
	r = get_as(a.hdr, "/api/v1/events?cursor=1&limit=200");
	assert_int_equal(r.status, 200);
	for (i = 0; i < json_object_array_length(jget(r.json, "events")); i++) {
		char key[64];

		snprintf(key, sizeof key, "events.%zu.data.study_id", i);
		if (strcmp(jgets(&r, key), s) != 0)
			continue;
		found++;
		snprintf(key, sizeof key, "events.%zu.type", i);
		assert_string_equal(jgets(&r, key), "study.matched");
		snprintf(key, sizeof key, "events.%zu.data.score", i);
		assert_true(json_object_get_double(jget(r.json, key)) >= 0.6);
	}
	resp_free(&r);
	assert_int_equal(found, 1);
	feed_all(nobio.hdr, 50, types, sizeof types, ids, 64, &n);
	assert_string_equal(types, "wallet.credited");
	feed_all(unclaimed.hdr, 50, types, sizeof types, ids, 64, &n);
	assert_int_equal(n, 0);
}

static void
webhook_endpoints(void **state)
{
	struct test_agent a, b;
	struct test_user u;
	char id[IDS_BUFSZ], body[512];
	struct resp r;
	int i;

	(void)state;
	agent_new(&a, "hooked");
	agent_new(&b, "other");
	user_login(&u, "hooks");
	r = post_as(a.hdr, "{\"url\":\"https://hooks.example.org/arps\",\"events\":"
	    "[\"participation.approved\",\"wallet.credited\",\"wallet.credited\"]}",
	    "/api/v1/webhooks");
	assert_int_equal(r.status, 201);
	snprintf(id, sizeof id, "%s", jstr(&r, "id"));
	assert_true(ids_valid(IDS_WEBHOOK, id));
	assert_string_equal(jstr(&r, "url"), "https://hooks.example.org/arps");
	assert_int_equal(strncmp(jstr(&r, "secret"), "whsec_", 6), 0);
	assert_int_equal(strlen(jstr(&r, "secret")), 70);
	assert_int_equal(json_object_array_length(jget(r.json, "events")), 2);
	assert_int_equal(strlen(jstr(&r, "created_at")), 20);
	resp_free(&r);
	/* listed without its secret, only to its owner */
	r = get_as(a.hdr, "/api/v1/webhooks");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "webhooks")), 1);
	assert_string_equal(jgets(&r, "webhooks.0.id"), id);
	assert_null(jget(r.json, "webhooks.0.secret"));
	assert_string_equal(jgets(&r, "webhooks.0.status"), "active");
	resp_free(&r);
	r = get_as(b.hdr, "/api/v1/webhooks");
	assert_int_equal(json_object_array_length(jget(r.json, "webhooks")), 0);
	resp_free(&r);
	r = get_as(b.hdr, "/api/v1/webhooks/%s/deliveries", id);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/webhooks/%s/deliveries", id);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "deliveries")), 0);
	resp_free(&r);
	/* refused targets and types (design.md §9.8) */
	static const char *const bad[] = {
		"{\"url\":\"http://hooks.example.org/\",\"events\":[\"wallet.credited\"]}",
		"{\"url\":\"https://10.0.0.1/\",\"events\":[\"wallet.credited\"]}",
		"{\"url\":\"https://169.254.169.254/\",\"events\":[\"wallet.credited\"]}",
		"{\"url\":\"https://user:pw@hooks.example.org/\",\"events\":[\"wallet.credited\"]}",
		"{\"url\":\"https://hooks.example.org/\",\"events\":[]}",
		"{\"url\":\"https://hooks.example.org/\",\"events\":[\"no.such\"]}",
		"{\"url\":\"https://hooks.example.org/\",\"events\":[\"study.full\"]}",
		"{\"url\":\"https://hooks.example.org/\"}",
		"{\"events\":[\"wallet.credited\"]}",
	};
	for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
		r = post_as(a.hdr, bad[i], "/api/v1/webhooks");
		assert_error(&r, 422, "VALIDATION_ERROR");
		resp_free(&r);
	}
	/* a researcher's types: its own, and wallet.credited (a top-up is in
	 * its feed), not an agent's */
	r = post_as(u.hdr, "{\"url\":\"https://hooks.example.org/r\",\"events\":[\"study.full\","
	    "\"submission.created\",\"wallet.credited\"]}", "/api/v1/webhooks");
	assert_int_equal(r.status, 201);
	resp_free(&r);
	r = post_as(u.hdr, "{\"url\":\"https://hooks.example.org/r\",\"events\":"
	    "[\"participation.approved\"]}", "/api/v1/webhooks");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* at most 10 per credential */
	for (i = 1; i < 10; i++) {
		snprintf(body, sizeof body, "{\"url\":\"https://hooks.example.org/%d\",\"events\":"
		    "[\"wallet.credited\"]}", i);
		r = post_as(a.hdr, body, "/api/v1/webhooks");
		assert_int_equal(r.status, 201);
		resp_free(&r);
	}
	r = post_as(a.hdr, "{\"url\":\"https://hooks.example.org/x\",\"events\":[\"wallet.credited\"]}",
	    "/api/v1/webhooks");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* delete: only the owner's, once */
	r = http_req("DELETE", "/api/v1/webhooks/whk_0000000000000000", NULL, HDRS(b.hdr), NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	snprintf(body, sizeof body, "/api/v1/webhooks/%s", id);
	r = http_req("DELETE", body, NULL, HDRS(b.hdr), NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = http_req("DELETE", body, NULL, HDRS(a.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "status"), "deleted");
	resp_free(&r);
	r = http_req("DELETE", body, NULL, HDRS(a.hdr), NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/webhooks");
	assert_int_equal(json_object_array_length(jget(r.json, "webhooks")), 9);
	resp_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_participation),
		cmocka_unit_test(cursor_follows),
		cmocka_unit_test(cursor_under_concurrency),
		cmocka_unit_test(matched_on_publication),
		cmocka_unit_test(webhook_endpoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
