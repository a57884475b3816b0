/* Messages (design.md §13): a researcher writes to participants of its
 * study, an agent reads and replies; the thread, the events on both
 * sides, the refusals, the limits, and that neither side learns the
 * other's identity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

/* --- helpers --- */

/* Agent a accepts study s, and completes it when complete. */
static void
join(const struct test_agent *a, const char *s, int complete)
{
	assert_int_equal(study_post(a->hdr, s, "accept", NULL), 200);
	if (complete)
		assert_int_equal(study_post(a->hdr, s, "complete", NULL), 200);
}

/* POST /studies/{s}/messages with the ids (a JSON array's inside) and body. */
static struct resp
send_msg(const struct test_user *u, const char *s, const char *ids, const char *body)
{
	struct json_object *o = json_object_new_object();
	char *text;
	struct resp r;
	size_t n;

	json_object_object_add(o, "body", json_object_new_string(body));
	n = strlen(ids) + strlen(body) * 6 + 64;
	text = malloc(n);
	assert_non_null(text);
	/* the body JSON-escaped by json-c, the ids as given */
	snprintf(text, n, "{\"participant_ids\":[%s],\"body\":%s}", ids,
	    json_object_to_json_string_ext(jget(o, "body"), JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	r = post_as(u->hdr, text, "/api/v1/studies/%s/messages", s);
	free(text);
	return r;
}

static struct resp
reply_msg(const struct test_agent *a, const char *id, const char *body)
{
	struct json_object *o = json_object_new_object();
	struct resp r;

	json_object_object_add(o, "body", json_object_new_string(body));
	r = post_as(a->hdr, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "/api/v1/messages/%s/reply", id);
	json_object_put(o);
	return r;
}

/* Every event of type t in the credential's feed, their data objects as
 * JSON text joined by '\n', into out; returns how many. */
static int
events_of(const char *hdr, const char *type, char *out, size_t n)
{
	struct json_object *arr, *it, *v;
	struct resp r;
	size_t i, len, used = 0;
	int k = 0;

	out[0] = '\0';
	r = get_as(hdr, "/api/v1/events?limit=200");
	assert_int_equal(r.status, 200);
	arr = jget(r.json, "events");
	len = arr ? json_object_array_length(arr) : 0;
	for (i = 0; i < len; i++) {
		it = json_object_array_get_idx(arr, i);
		if ((v = jget(it, "type")) == NULL || strcmp(json_object_get_string(v), type) != 0 ||
		    (v = jget(it, "data")) == NULL)
			continue;
		used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s\n",
		    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		assert_true(used < n);
		k++;
	}
	resp_free(&r);
	return k;
}

/* The number of keys of an object. */
static int
nkeys(struct json_object *o)
{
	assert_non_null(o);
	return json_object_object_length(o);
}

/* --- 1. send, inbox, read, reply, thread, events, identity --- */

static void
messages_round_trip(void **state)
{
	struct test_user u, other, o1, o2;
	struct test_agent a1, a2;
	char s[IDS_BUFSZ], p1[32], p2[32], ids[128], mid[IDS_BUFSZ], rid[IDS_BUFSZ];
	char read_at[32], ev[4096], want[256];
	const char *body = "Hello <b>participant</b> & thanks!\nLine two\t\xc3\xa9\xe2\x82\xac";
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	researcher(&other, 10000);
	agent_claimed(&a1, &o1, "msg1");
	agent_claimed(&a2, &o2, "msg2");
	study_new(&u, s, 100, 3, NULL);
	join(&a1, s, 1);		/* submitted */
	newest_participant(&u, s, p1);
	join(&a2, s, 0);		/* accepted only: any state may be written to */
	newest_participant(&u, s, p2);
	assert_string_not_equal(p1, p2);

	/* one message to both (p1 twice: once each), stored as given */
	snprintf(ids, sizeof ids, "\"%s\",\"%s\",\"%s\"", p1, p2, p1);
	r = send_msg(&u, s, ids, body);
	assert_int_equal(r.status, 201);
	assert_int_equal(nkeys(r.json), 4);
	snprintf(mid, sizeof mid, "%s", jstr(&r, "message_id"));
	assert_true(ids_valid(IDS_MESSAGE, mid));
	assert_string_equal(jstr(&r, "study_id"), s);
	assert_int_equal(jint(&r, "recipients"), 2);
	assert_int_equal(strlen(jstr(&r, "created_at")), 20);
	resp_free(&r);

	/* the agent's inbox: the message as sent, unread; no researcher id */
	r = get_as(a1.hdr, "/api/v1/messages");
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 1);
	assert_true(json_object_is_type(jget(r.json, "next_cursor"), json_type_null));
	assert_int_equal(nkeys(jget(r.json, "messages.0")), 7);
	assert_string_equal(jgets(&r, "messages.0.id"), mid);
	assert_string_equal(jgets(&r, "messages.0.study_id"), s);
	assert_string_equal(jgets(&r, "messages.0.study_title"), "Survey on tools");
	assert_string_equal(jgets(&r, "messages.0.direction"), "in");
	assert_string_equal(jgets(&r, "messages.0.body"), body);
	assert_true(json_object_is_type(jget(r.json, "messages.0.read_at"), json_type_null));
	assert_null(strstr(r.body, u.id));
	assert_null(strstr(r.body, "acc_"));
	resp_free(&r);
	r = get_as(a2.hdr, "/api/v1/messages");
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 1);
	assert_string_equal(jgets(&r, "messages.0.id"), mid);
	resp_free(&r);

	/* the agents' events: {message_id, study_id}, one each */
	assert_int_equal(events_of(a1.hdr, "message.received", ev, sizeof ev), 1);
	snprintf(want, sizeof want, "{\"message_id\":\"%s\",\"study_id\":\"%s\"}\n", mid, s);
	assert_string_equal(ev, want);
	assert_int_equal(events_of(a2.hdr, "message.received", ev, sizeof ev), 1);
	assert_string_equal(ev, want);

	/* read: 200 with the item; the first time stays */
	r = post_as(a1.hdr, NULL, "/api/v1/messages/%s/read", mid);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "id"), mid);
	assert_string_equal(jstr(&r, "direction"), "in");
	snprintf(read_at, sizeof read_at, "%s", jstr(&r, "read_at"));
	assert_int_equal(strlen(read_at), 20);
	resp_free(&r);
	r = post_as(a1.hdr, NULL, "/api/v1/messages/%s/read", mid);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "read_at"), read_at);
	resp_free(&r);

	/* reply: 201, the new item as the agent's list shows it */
	r = reply_msg(&a1, mid, "Happy to help.\nWhat do you need?");
	assert_int_equal(r.status, 201);
	assert_int_equal(nkeys(r.json), 7);
	snprintf(rid, sizeof rid, "%s", jstr(&r, "id"));
	assert_true(ids_valid(IDS_MESSAGE, rid));
	assert_string_not_equal(rid, mid);
	assert_string_equal(jstr(&r, "direction"), "out");
	assert_string_equal(jstr(&r, "study_id"), s);
	assert_string_equal(jstr(&r, "body"), "Happy to help.\nWhat do you need?");
	assert_true(json_object_is_type(jget(r.json, "read_at"), json_type_null));
	resp_free(&r);
	r = get_as(a1.hdr, "/api/v1/messages");
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 2);
	assert_string_equal(jgets(&r, "messages.0.id"), rid);	/* newest first */
	assert_string_equal(jgets(&r, "messages.0.direction"), "out");
	assert_string_equal(jgets(&r, "messages.1.id"), mid);
	assert_string_equal(jgets(&r, "messages.1.read_at"), read_at);
	resp_free(&r);
	/* a2 sees neither a1's reply nor a1's read */
	r = get_as(a2.hdr, "/api/v1/messages");
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 1);
	assert_true(json_object_is_type(jget(r.json, "messages.0.read_at"), json_type_null));
	resp_free(&r);

	/* the researcher's event names the participant, never the agent */
	assert_int_equal(events_of(u.hdr, "message.received", ev, sizeof ev), 1);
	snprintf(want, sizeof want, "{\"message_id\":\"%s\",\"study_id\":\"%s\","
	    "\"participant_id\":\"%s\"}\n", rid, s, p1);
	assert_string_equal(ev, want);
	assert_null(strstr(ev, a1.id));

	/* the thread with p1: oldest first, direction from the researcher */
	r = get_as(u.hdr, "/api/v1/studies/%s/participants/%s/messages", s, p1);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 2);
	assert_int_equal(nkeys(jget(r.json, "messages.0")), 5);
	assert_string_equal(jgets(&r, "messages.0.id"), mid);
	assert_string_equal(jgets(&r, "messages.0.direction"), "out");
	assert_string_equal(jgets(&r, "messages.0.body"), body);
	assert_string_equal(jgets(&r, "messages.0.read_at"), read_at);
	assert_string_equal(jgets(&r, "messages.1.id"), rid);
	assert_string_equal(jgets(&r, "messages.1.direction"), "in");
	assert_string_equal(jgets(&r, "messages.1.body"), "Happy to help.\nWhat do you need?");
	assert_null(strstr(r.body, a1.id));
	assert_null(strstr(r.body, "agt_"));
	resp_free(&r);
	/* p2's thread: the one message, unread */
	r = get_as(u.hdr, "/api/v1/studies/%s/participants/%s/messages", s, p2);
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 1);
	assert_true(json_object_is_type(jget(r.json, "messages.0.read_at"), json_type_null));
	resp_free(&r);
	/* paging: one a page, oldest first, then the end */
	r = get_as(u.hdr, "/api/v1/studies/%s/participants/%s/messages?limit=1", s, p1);
	assert_string_equal(jgets(&r, "messages.0.id"), mid);
	snprintf(want, sizeof want, "%s", jgets(&r, "next_cursor"));
	assert_true(want[0] != '\0');
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/studies/%s/participants/%s/messages?limit=1&cursor=%s", s, p1,
	    want);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "messages.0.id"), rid);
	resp_free(&r);
	r = get_as(a1.hdr, "/api/v1/messages?limit=1");
	assert_string_equal(jgets(&r, "messages.0.id"), rid);
	snprintf(want, sizeof want, "%s", jgets(&r, "next_cursor"));
	resp_free(&r);
	r = get_as(a1.hdr, "/api/v1/messages?limit=1&cursor=%s", want);
	assert_int_equal(r.status, 200);
	assert_string_equal(jgets(&r, "messages.0.id"), mid);
	assert_true(json_object_is_type(jget(r.json, "next_cursor"), json_type_null));
	resp_free(&r);

	/* refusals on the agent side */
	r = reply_msg(&a1, rid, "answering myself");		/* its own reply */
	assert_error(&r, 409, "INVALID_STATE");
	resp_free(&r);
	r = post_as(a1.hdr, NULL, "/api/v1/messages/%s/read", rid);	/* own: unchanged */
	assert_int_equal(r.status, 200);
	assert_true(json_object_is_type(jget(r.json, "read_at"), json_type_null));
	resp_free(&r);
	r = reply_msg(&a2, rid, "not mine");			/* another agent's */
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = post_as(a2.hdr, NULL, "/api/v1/messages/%s/read", rid);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = post_as(a2.hdr, NULL, "/api/v1/messages/msg_0000000000000000/read");
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = post_as(a2.hdr, NULL, "/api/v1/messages/nonsense/read");
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = get_as(a1.hdr, "/api/v1/messages?cursor=999999999");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);

	/* another researcher: the study is no study */
	r = send_msg(&other, s, ids, "hi");
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = get_as(other.hdr, "/api/v1/studies/%s/participants/%s/messages", s, p1);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	/* the thread of an unknown participant */
	r = get_as(u.hdr, "/api/v1/studies/%s/participants/anon_nobody/messages", s);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	/* the credentials: an agent cannot send, a researcher has no inbox */
	r = post_as(a1.hdr, "{\"participant_ids\":[\"x\"],\"body\":\"hi\"}",
	    "/api/v1/studies/%s/messages", s);
	assert_true(r.status == 401 || r.status == 403);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/messages");
	assert_true(r.status == 401 || r.status == 403);
	resp_free(&r);
	/* nothing above wrote a message */
	assert_int_equal(sql_int("SELECT COUNT(*) FROM messages WHERE study_id = '%s'", s), 2);
}

/* --- 2. the refusals of a send: each row named, nothing sent --- */

static void
messages_send_refusals(void **state)
{
	struct test_user u, o1;
	struct test_agent a1;
	char s[IDS_BUFSZ], s2[IDS_BUFSZ], p1[32], q1[32], ids[16384], *big;
	struct resp r;
	size_t i, used;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a1, &o1, "msgr");
	study_new(&u, s, 100, 2, NULL);
	study_new(&u, s2, 100, 2, NULL);
	join(&a1, s, 1);
	newest_participant(&u, s, p1);
	join(&a1, s2, 1);
	newest_participant(&u, s2, q1);

	/* an id that is not a participant of this study: 422 naming its row */
	snprintf(ids, sizeof ids, "\"%s\",\"anon_nobodyatall\"", p1);
	r = send_msg(&u, s, ids, "hello");
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "participant_ids[1]:", 19);
	resp_free(&r);
	/* a participant of another study of the same researcher */
	snprintf(ids, sizeof ids, "\"%s\",\"%s\"", p1, q1);
	r = send_msg(&u, s, ids, "hello");
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "participant_ids[1]:", 19);
	resp_free(&r);
	/* not a string */
	r = send_msg(&u, s, "5", "hello");
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_memory_equal(jstr(&r, "detail"), "participant_ids[0]:", 19);
	resp_free(&r);
	/* none, or more than 500 */
	r = send_msg(&u, s, "", "hello");
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "participant_ids"));
	resp_free(&r);
	for (i = 0, used = 0; i < 501; i++)
		used += (size_t)snprintf(ids + used, sizeof ids - used, "%s\"%s\"", i ? "," : "", p1);
	assert_true(used < sizeof ids);
	r = send_msg(&u, s, ids, "hello");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* the body: required, 1-4000 characters */
	snprintf(ids, sizeof ids, "\"%s\"", p1);
	r = post_as(u.hdr, "{\"participant_ids\":[\"x\"]}", "/api/v1/studies/%s/messages", s);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "body"));
	resp_free(&r);
	r = send_msg(&u, s, ids, "");
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "body"));
	resp_free(&r);
	big = malloc(4001 * 2 + 1);
	assert_non_null(big);
	for (i = 0; i < 4001; i++)
		memcpy(big + i * 2, "\xc3\xa9", 2);	/* é: characters, not bytes */
	big[4001 * 2] = '\0';
	r = send_msg(&u, s, ids, big);
	assert_error(&r, 422, "VALIDATION_ERROR");
	assert_non_null(strstr(jstr(&r, "detail"), "body"));
	resp_free(&r);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM messages WHERE study_id = '%s'", s), 0);
	r = get_as(a1.hdr, "/api/v1/messages");
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 0);
	resp_free(&r);
	/* 4000 of them go */
	big[4000 * 2] = '\0';
	r = send_msg(&u, s, ids, big);
	assert_int_equal(r.status, 201);
	assert_int_equal(jint(&r, "recipients"), 1);
	resp_free(&r);
	r = get_as(a1.hdr, "/api/v1/messages");
	assert_string_equal(jgets(&r, "messages.0.body"), big);
	resp_free(&r);
	/* the reply's body too */
	r = get_as(a1.hdr, "/api/v1/messages");
	snprintf(ids, sizeof ids, "%s", jgets(&r, "messages.0.id"));
	resp_free(&r);
	r = reply_msg(&a1, ids, "");
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = post_as(a1.hdr, "{}", "/api/v1/messages/%s/reply", ids);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	free(big);
}

/* --- 3. the limits: recipients per researcher, replies per agent --- */

static void
messages_rate_limits(void **state)
{
	struct test_user u, o1, o2;
	struct test_agent a1, a2;
	char s[IDS_BUFSZ], p1[32], p2[32], ids[128], mid[IDS_BUFSZ], hv[32];
	struct resp r;
	int i;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a1, &o1, "msgl1");
	agent_claimed(&a2, &o2, "msgl2");
	study_new(&u, s, 100, 2, NULL);
	join(&a1, s, 1);
	newest_participant(&u, s, p1);
	join(&a2, s, 1);
	newest_participant(&u, s, p2);

	/* 1,998 recipients this hour already (the bucket as the server keeps it) */
	fixture("rate-fill msg-send:%s 1998 60", u.id);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM rate_events WHERE bucket = 'msg-send:%s'",
	    u.id), 1998);
	/* two fit (2,000), then a third does not; a message that does not fit
	 * is not sent to anyone */
	snprintf(ids, sizeof ids, "\"%s\",\"%s\"", p1, p2);
	r = send_msg(&u, s, ids, "two");
	assert_int_equal(r.status, 201);
	assert_int_equal(jint(&r, "recipients"), 2);
	snprintf(mid, sizeof mid, "%s", jstr(&r, "message_id"));
	resp_free(&r);
	snprintf(ids, sizeof ids, "\"%s\"", p1);
	r = send_msg(&u, s, ids, "one too many");
	assert_error(&r, 429, "RATE_LIMITED");
	assert_non_null(resp_header(&r, "Retry-After", hv, sizeof hv));
	assert_true(atoi(hv) >= 3400 && atoi(hv) <= 3600);
	resp_free(&r);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM messages WHERE study_id = '%s'", s), 1);
	r = get_as(a1.hdr, "/api/v1/messages");
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 1);
	resp_free(&r);
	/* the agents' replies have their own limit: 30 an hour */
	for (i = 0; i < 30; i++) {
		r = reply_msg(&a1, mid, "again");
		assert_int_equal(r.status, 201);
		resp_free(&r);
	}
	r = reply_msg(&a1, mid, "the 31st");
	assert_error(&r, 429, "RATE_LIMITED");
	assert_non_null(resp_header(&r, "Retry-After", hv, sizeof hv));
	assert_true(atoi(hv) >= 1 && atoi(hv) <= 3600);
	resp_free(&r);
	/* per agent: another agent still replies */
	r = reply_msg(&a2, mid, "mine");
	assert_int_equal(r.status, 201);
	resp_free(&r);
	r = get_as(u.hdr, "/api/v1/studies/%s/participants/%s/messages?limit=200", s, p1);
	assert_int_equal(json_object_array_length(jget(r.json, "messages")), 31);
	resp_free(&r);
}

/* --- 4. MCP: the agents' and researchers' tools run the routes --- */

static void
messages_mcp_tools(void **state)
{
	struct test_user u, o1;
	struct test_agent a1;
	char s[IDS_BUFSZ], p1[32], body[1024];
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	agent_claimed(&a1, &o1, "msgm");
	study_new(&u, s, 100, 2, NULL);
	join(&a1, s, 1);
	newest_participant(&u, s, p1);
	snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"send_message\",\"arguments\":{\"study_id\":\"%s\","
	    "\"participant_ids\":[\"%s\"],\"body\":\"via MCP\"}}}", s, p1);
	r = post_as(u.hdr, body, "/api/v1/mcp");
	assert_int_equal(r.status, 200);
	assert_false(json_object_get_boolean(jget(r.json, "result.isError")));
	assert_int_equal(json_object_get_int(jget(r.json, "result.structuredContent.recipients")), 1);
	resp_free(&r);
	r = post_as(a1.hdr, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"list_messages\",\"arguments\":{}}}", "/api/v1/mcp");
	assert_int_equal(r.status, 200);
	assert_string_equal(json_object_get_string(jget(r.json,
	    "result.structuredContent.messages.0.body")), "via MCP");
	resp_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(messages_round_trip),
		cmocka_unit_test(messages_send_refusals),
		cmocka_unit_test(messages_rate_limits),
		cmocka_unit_test(messages_mcp_tools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
