/*
 * The MCP endpoint, POST /api/v1/mcp (design.md §11): JSON-RPC framing and
 * its error codes, notifications, GET 405, authentication, tools/list
 * schemas from the field tables, tool results and refusals, idempotency
 * through a tool, and a whole participation driven by the official
 * TypeScript SDK client (tests/mcp/participation.mjs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/api/study_helpers.h"

#define RPC(id, method, params) \
	"{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"" method "\",\"params\":" params "}"

/* POST one message to the MCP endpoint with up to two header lines. */
static struct resp
mcp_post(const char *h1, const char *h2, const char *body)
{
	if (h1 == NULL)
		return http_req("POST", "/api/v1/mcp", body, NULL, NULL);
	if (h2 == NULL)
		return http_req("POST", "/api/v1/mcp", body, HDRS(h1), NULL);
	return http_req("POST", "/api/v1/mcp", body, HDRS(h1, h2), NULL);
}

/* tools/call name with the JSON object args as hdr; asserts HTTP 200 and
 * a result (not a JSON-RPC error). */
static struct resp
tool(const char *hdr, const char *name, const char *args)
{
	char body[8192];
	struct resp r;

	snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}", name, args);
	r = mcp_post(hdr, NULL, body);
	if (r.status != 200 || jget(r.json, "result") == NULL)
		print_error("%s: %ld %s\n", name, r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	assert_non_null(jget(r.json, "result.content"));
	return r;
}

/* A tool result: isError as expected, the text content is the JSON of
 * structuredContent, and _meta carries the HTTP status. */
static void
assert_tool_result(const struct resp *r, int is_error, long http)
{
	struct json_object *text;

	assert_int_equal(json_object_get_boolean(jget(r->json, "result.isError")), is_error);
	assert_string_equal(jgets(r, "result.content.0.type"), "text");
	text = json_tokener_parse(jgets(r, "result.content.0.text"));
	assert_non_null(text);
	assert_true(json_object_equal(text, jget(r->json, "result.structuredContent")));
	json_object_put(text);
	assert_int_equal(jgeti(r, "result._meta.arps/http_status"), http);
}

/* A refusal: a tool error carrying the REST error body. */
static void
assert_tool_refusal(const struct resp *r, long http, const char *code)
{
	assert_tool_result(r, 1, http);
	assert_string_equal(jgets(r, "result.structuredContent.error_code"), code);
	assert_int_equal(jgeti(r, "result.structuredContent.status"), http);
	assert_true(strlen(jgets(r, "result.structuredContent.detail")) > 0);
	assert_int_equal(json_object_object_length(jget(r->json, "result.structuredContent")), 3);
}

/* The names of a tools/list answer, each once, as " a b c " sorted by the table. */
static int
has_tool(const struct resp *r, const char *name)
{
	struct json_object *arr = jget(r->json, "result.tools");
	size_t i, n = arr ? json_object_array_length(arr) : 0;
	int hits = 0;

	for (i = 0; i < n; i++) {
		struct json_object *v = jget(json_object_array_get_idx(arr, i), "name");
		if (v != NULL && strcmp(json_object_get_string(v), name) == 0)
			hits++;
	}
	return hits;
}

/* The tool named name of a tools/list answer; NULL if absent. */
static struct json_object *
tool_def(const struct resp *r, const char *name)
{
	struct json_object *arr = jget(r->json, "result.tools");
	size_t i, n = arr ? json_object_array_length(arr) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(arr, i);
		if (strcmp(json_object_get_string(jget(t, "name")), name) == 0)
			return t;
	}
	return NULL;
}

/* Whether the JSON array arr holds the string s. */
static int
arr_has(struct json_object *arr, const char *s)
{
	size_t i, n = arr ? json_object_array_length(arr) : 0;

	for (i = 0; i < n; i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s) == 0)
			return 1;
	return 0;
}

static void
initialize_versions(void **state)
{
	static const struct { const char *asked, *answered; } rows[] = {
		{ "2025-11-25", "2025-11-25" },
		{ "2025-06-18", "2025-06-18" },
		{ "2025-03-26", "2025-03-26" },
		{ "2099-01-01", "2025-11-25" },	/* newer than ours: our newest */
		{ "1999-01-01", "2025-11-25" },
	};
	struct test_agent a;
	char body[512], buf[128];
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "mcp-init");
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		snprintf(body, sizeof body, RPC("\"init-1\"", "initialize",
		    "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
		    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}"), rows[i].asked);
		r = mcp_post(a.hdr, NULL, body);
		assert_int_equal(r.status, 200);
		assert_non_null(resp_header(&r, "Content-Type", buf, sizeof buf));
		assert_string_equal(buf, "application/json");
		assert_string_equal(jgets(&r, "jsonrpc"), "2.0");
		assert_string_equal(jgets(&r, "id"), "init-1");
		assert_string_equal(jgets(&r, "result.protocolVersion"), rows[i].answered);
		assert_string_equal(jgets(&r, "result.serverInfo.name"), "arps");
		assert_true(strlen(jgets(&r, "result.serverInfo.version")) > 0);
		assert_true(json_object_is_type(jget(r.json, "result.capabilities.tools"),
		    json_type_object));
		assert_null(jget(r.json, "error"));
		/* stateless: no session to keep */
		assert_null(resp_header(&r, "Mcp-Session-Id", buf, sizeof buf));
		resp_free(&r);
	}
	r = mcp_post(a.hdr, NULL, RPC("3", "ping", "{}"));
	assert_int_equal(r.status, 200);
	assert_int_equal(jint(&r, "id"), 3);
	assert_int_equal(json_object_object_length(jget(r.json, "result")), 0);
	resp_free(&r);
	/* the MCP-Protocol-Version header after initialize: a version the
	 * server speaks, or 400 (MCP 2025-11-25, transports) */
	for (i = 0; i < 3; i++) {
		snprintf(buf, sizeof buf, "MCP-Protocol-Version: %s", rows[i].answered);
		r = mcp_post(a.hdr, buf, RPC("4", "ping", "{}"));
		assert_int_equal(r.status, 200);
		assert_int_equal(jint(&r, "id"), 4);
		resp_free(&r);
	}
	r = mcp_post(a.hdr, "MCP-Protocol-Version: 1999-01-01", RPC("5", "ping", "{}"));
	assert_int_equal(r.status, 400);
	assert_int_equal(jgeti(&r, "error.code"), -32600);
	assert_non_null(strstr(jgets(&r, "error.message"), "1999-01-01"));
	resp_free(&r);
}

static void
notifications_202(void **state)
{
	static const char *const bodies[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
		    "\"params\":{\"requestId\":1}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no-such-thing\"}",
		/* a response to the server: accepted the same way */
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}",
	};
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "mcp-notify");
	for (i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		r = mcp_post(a.hdr, NULL, bodies[i]);
		assert_int_equal(r.status, 202);
		assert_int_equal(r.len, 0);
		resp_free(&r);
	}
}

static void
get_405(void **state)
{
	struct test_agent a;
	char buf[64];
	struct resp r;

	(void)state;
	agent_new(&a, "mcp-get");
	r = http_get("/api/v1/mcp", HDRS(a.hdr, "Accept: text/event-stream"));
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_string_equal(buf, "POST");
	resp_free(&r);
	r = http_req("DELETE", "/api/v1/mcp", NULL, HDRS(a.hdr), NULL);
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	resp_free(&r);
}

static void
auth_failures(void **state)
{
	static const char *const bad[] = {
		NULL,
		"X-API-Key: arps_live_nope",
		"Authorization: Bearer arps_live_00000000000000000000000000000000abcdef",
		"Authorization: Bearer act_nope",
		"Authorization: Basic dXNlcjpwYXNz",
	};
	struct test_agent a;
	char hdr[128];
	struct resp r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		r = mcp_post(bad[i], NULL, RPC("1", "initialize", "{\"protocolVersion\":\"2025-06-18\"}"));
		assert_error(&r, 401, "UNAUTHORIZED");
		resp_free(&r);
		r = mcp_post(bad[i], NULL, RPC("1", "tools/list", "{}"));
		assert_error(&r, 401, "UNAUTHORIZED");
		resp_free(&r);
	}
	/* the agent's key works as X-API-Key and as a bearer token */
	agent_new(&a, "mcp-auth");
	snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", a.key);
	r = mcp_post(hdr, NULL, RPC("1", "tools/list", "{}"));
	assert_int_equal(r.status, 200);
	assert_int_equal(has_tool(&r, "accept_study"), 1);
	resp_free(&r);
	r = tool(hdr, "get_profile", "{}");
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.agent_id"), a.id);
	resp_free(&r);
}

/*
 * Arguments a tool refuses (design.md §11.3: a refusal is a tool error
 * carrying the REST answer's {detail, error_code, status}; MCP 2025-11-25
 * asks input validation errors to be tool errors, which a model can read
 * and correct, not protocol errors): the schema's checks and the
 * handler's own decoder alike answer 422 VALIDATION_ERROR as a result
 * with isError, never a JSON-RPC error.
 */
static void
tool_argument_refusals(void **state)
{
	static const char *const rows[] = {
		RPC("1", "tools/call", "{\"name\":\"get_profile\",\"arguments\":{\"x\":1}}"),
		RPC("1", "tools/call", "{\"name\":\"accept_study\",\"arguments\":{}}"),
		RPC("1", "tools/call", "{\"name\":\"accept_study\",\"arguments\":{\"study_id\":5}}"),
		RPC("1", "tools/call", "{\"name\":\"accept_study\",\"arguments\":"
		    "{\"study_id\":\"a/b\"}}"),
		RPC("1", "tools/call", "{\"name\":\"accept_study\",\"arguments\":"
		    "{\"study_id\":\"\"}}"),
		RPC("1", "tools/call", "{\"name\":\"accept_study\",\"arguments\":"
		    "{\"study_id\":\"std_x\",\"idempotency_key\":5}}"),
		/* no idempotency_key on a read */
		RPC("1", "tools/call", "{\"name\":\"get_profile\",\"arguments\":"
		    "{\"idempotency_key\":\"k\"}}"),
		RPC("1", "tools/call", "{\"name\":\"list_available_studies\",\"arguments\":"
		    "{\"limit\":\"5\"}}"),
		RPC("1", "tools/call", "{\"name\":\"list_available_studies\",\"arguments\":"
		    "{\"limit\":0}}"),
		RPC("1", "tools/call", "{\"name\":\"list_available_studies\",\"arguments\":"
		    "{\"limit\":101}}"),
		RPC("1", "tools/call", "{\"name\":\"list_history\",\"arguments\":"
		    "{\"limit\":201}}"),
		RPC("1", "tools/call", "{\"name\":\"list_wallet_transactions\",\"arguments\":"
		    "{\"type\":\"bogus\"}}"),
		RPC("1", "tools/call", "{\"name\":\"list_wallet_transactions\",\"arguments\":"
		    "{\"cursor\":3}}"),
		/* body fields: the handler's own decoder judges them */
		RPC("1", "tools/call", "{\"name\":\"set_bio\",\"arguments\":{}}"),
		RPC("1", "tools/call", "{\"name\":\"set_bio\",\"arguments\":{\"bio\":\"\"}}"),
		RPC("1", "tools/call", "{\"name\":\"set_bio\",\"arguments\":{\"bio\":7}}"),
		RPC("1", "tools/call", "{\"name\":\"update_profile\",\"arguments\":"
		    "{\"name\":\"two\\nlines\"}}"),
		RPC("1", "tools/call", "{\"name\":\"complete_study\",\"arguments\":"
		    "{\"study_id\":\"std_x\",\"completion_code\":42}}"),
	};
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "mcp-refusals");
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		r = mcp_post(a.hdr, NULL, rows[i]);
		if (r.status != 200 || jget(r.json, "error") != NULL)
			print_error("row %zu: %ld %s\n", i, r.status, r.body ? r.body : "");
		assert_int_equal(r.status, 200);
		assert_null(jget(r.json, "error"));
		assert_int_equal(jint(&r, "id"), 1);
		assert_tool_refusal(&r, 422, "VALIDATION_ERROR");
		resp_free(&r);
	}
}

static void
jsonrpc_errors(void **state)
{
	static const struct { const char *body; long http; int code; } rows[] = {
		{ "{\"jsonrpc\":", 400, -32700 },
		{ "not json", 400, -32700 },
		/* I-JSON (design.md §9.7): a repeated key, a key holding U+0000 */
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":\"ping\"}", 400, -32700 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\\u0000\":1}}", 400,
		    -32700 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", 400, -32700 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":NaN}}", 400,
		    -32700 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", 400, -32700 },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", 400, -32600 },
		{ "[]", 400, -32600 },
		{ "42", 400, -32600 },
		{ "\"ping\"", 400, -32600 },
		{ "true", 400, -32600 },
		{ "null", 400, -32600 },
		{ "{\"id\":1,\"method\":\"ping\"}", 400, -32600 },
		{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", 400, -32600 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1}", 400, -32600 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", 400, -32600 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", 400, -32600 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", 400, -32600 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", 400, -32600 },
		{ RPC("1", "resources/list", "{}"), 200, -32601 },
		{ RPC("1", "tools/lists", "{}"), 200, -32601 },
		{ RPC("1", "tools/call", "[1]"), 200, -32602 },
		{ RPC("1", "tools/call", "{}"), 200, -32602 },
		{ RPC("1", "tools/call", "{\"name\":7}"), 200, -32602 },
		{ RPC("1", "tools/call", "{\"name\":\"no_such_tool\"}"), 200, -32602 },
		/* researcher tools are not the agent's */
		{ RPC("1", "tools/call", "{\"name\":\"create_study\",\"arguments\":{}}"), 200, -32602 },
		{ RPC("1", "tools/call", "{\"name\":\"get_profile\",\"arguments\":[]}"), 200, -32602 },
	};
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "mcp-rpc");
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		r = mcp_post(a.hdr, NULL, rows[i].body);
		if (r.status != rows[i].http || jgeti(&r, "error.code") != rows[i].code)
			print_error("row %zu: %ld %s\n", i, r.status, r.body ? r.body : "");
		assert_int_equal(r.status, rows[i].http);
		assert_string_equal(jgets(&r, "jsonrpc"), "2.0");
		assert_int_equal(jgeti(&r, "error.code"), rows[i].code);
		assert_true(strlen(jgets(&r, "error.message")) > 0);
		assert_null(jget(r.json, "result"));
		/* the id of a request that had a valid one is answered back;
		 * else it is null */
		assert_true(json_object_object_get_ex(r.json, "id", NULL));
		if (rows[i].http == 200 || jget(r.json, "id") != NULL)
			assert_int_equal(jint(&r, "id"), 1);
		if (jget(r.json, "id") == NULL)
			assert_true(rows[i].http == 400);
		resp_free(&r);
	}
	/* a body that is not JSON at all is refused as REST refuses it */
	r = mcp_post(a.hdr, "Content-Type: text/plain", RPC("1", "ping", "{}"));
	assert_error(&r, 415, "UNSUPPORTED_MEDIA_TYPE");
	resp_free(&r);
}

static void
tools_list_agent(void **state)
{
	static const char *const names[] = {
		"get_profile", "update_profile", "set_bio", "get_bio", "heartbeat",
		"list_available_studies", "accept_study", "get_study", "complete_study",
		"withdraw_study", "list_history", "get_wallet_balance", "list_wallet_transactions",
		"rotate_api_key", "new_claim_code", "get_reputation", "list_events",
		"list_messages", "read_message", "reply_message",
	};
	struct json_object *t, *p;
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "mcp-list");
	r = mcp_post(a.hdr, NULL, RPC("1", "tools/list", "{}"));
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "result.tools")),
	    sizeof names / sizeof names[0]);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		assert_int_equal(has_tool(&r, names[i]), 1);
		t = tool_def(&r, names[i]);
		assert_true(strlen(json_object_get_string(jget(t, "description"))) > 10);
		assert_string_equal(json_object_get_string(jget(t, "inputSchema.type")), "object");
		assert_false(json_object_get_boolean(jget(t, "inputSchema.additionalProperties")));
	}
	assert_int_equal(has_tool(&r, "create_study"), 0);
	assert_int_equal(has_tool(&r, "approve_participant"), 0);
	assert_int_equal(has_tool(&r, "get_account"), 0);

	/* complete_study: the path parameter, the field table row, the key */
	t = tool_def(&r, "complete_study");
	assert_true(arr_has(jget(t, "inputSchema.required"), "study_id"));
	assert_int_equal(json_object_array_length(jget(t, "inputSchema.required")), 1);
	p = jget(t, "inputSchema.properties.completion_code");
	assert_true(arr_has(jget(p, "type"), "string") && arr_has(jget(p, "type"), "null"));
	assert_int_equal(json_object_get_int(jget(p, "minLength")), 1);
	assert_int_equal(json_object_get_int(jget(p, "maxLength")), 64);
	assert_non_null(jget(t, "inputSchema.properties.idempotency_key"));
	assert_false(json_object_get_boolean(jget(t, "annotations.readOnlyHint")));
	/* set_bio: required bio of 1..5000 */
	t = tool_def(&r, "set_bio");
	assert_true(arr_has(jget(t, "inputSchema.required"), "bio"));
	assert_int_equal(json_object_get_int(jget(t, "inputSchema.properties.bio.maxLength")), 5000);
	/* reads take no idempotency_key and say they only read */
	t = tool_def(&r, "get_profile");
	assert_null(jget(t, "inputSchema.properties.idempotency_key"));
	assert_null(jget(t, "inputSchema.required"));
	assert_true(json_object_get_boolean(jget(t, "annotations.readOnlyHint")));
	/* list parameters with the endpoint's bounds */
	t = tool_def(&r, "list_available_studies");
	assert_int_equal(json_object_get_int(jget(t, "inputSchema.properties.limit.maximum")), 100);
	assert_non_null(jget(t, "inputSchema.properties.cursor"));	/* pages as REST does */
	t = tool_def(&r, "list_wallet_transactions");
	assert_int_equal(json_object_get_int(jget(t, "inputSchema.properties.limit.maximum")), 200);
	assert_non_null(jget(t, "inputSchema.properties.cursor"));
	assert_int_equal(json_object_array_length(jget(t, "inputSchema.properties.type.enum")), 13);
	assert_true(arr_has(jget(t, "inputSchema.properties.type.enum"), "earning"));
	resp_free(&r);
}

static void
tools_list_researcher(void **state)
{
	static const char *const names[] = {
		"create_study", "list_studies", "get_study", "update_study", "pause_study",
		"resume_study",
		"stop_study", "list_participants", "approve_participant", "reject_participant",
		"get_account", "get_wallet_balance", "list_wallet_transactions",
		"claim_agent", "replace_agent_api_key", "list_events", "review_participants",
		"pay_bonuses", "list_bonuses", "send_message", "list_thread",
		"create_group", "list_groups", "get_group", "update_group", "delete_group",
		"add_group_members", "list_group_members", "remove_group_member",
	};
	static const char *const required[] = {
		"title", "description", "study_url", "reward_per_participant", "max_participants",
		"screening_criteria", "estimated_duration_minutes",
	};
	struct json_object *t;
	struct test_user u;
	struct resp r;
	size_t i;

	(void)state;
	user_login(&u, "mcp-res");
	r = mcp_post(u.hdr, NULL, RPC("1", "tools/list", "{}"));
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "result.tools")),
	    sizeof names / sizeof names[0]);
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		assert_int_equal(has_tool(&r, names[i]), 1);
	assert_int_equal(has_tool(&r, "accept_study"), 0);
	assert_int_equal(has_tool(&r, "heartbeat"), 0);
	t = tool_def(&r, "create_study");
	assert_int_equal(json_object_array_length(jget(t, "inputSchema.required")),
	    sizeof required / sizeof required[0]);
	for (i = 0; i < sizeof required / sizeof required[0]; i++)
		assert_true(arr_has(jget(t, "inputSchema.required"), required[i]));
	assert_string_equal(json_object_get_string(
	    jget(t, "inputSchema.properties.reward_per_participant.type")), "integer");
	assert_int_equal(json_object_get_int(
	    jget(t, "inputSchema.properties.reward_per_participant.minimum")), 1);
	assert_int_equal(json_object_get_int(
	    jget(t, "inputSchema.properties.reward_per_participant.maximum")), 1000000);
	assert_string_equal(json_object_get_string(
	    jget(t, "inputSchema.properties.deadline.format")), "date-time");
	assert_string_equal(json_object_get_string(
	    jget(t, "inputSchema.properties.study_url.format")), "uri");
	t = tool_def(&r, "approve_participant");
	assert_true(arr_has(jget(t, "inputSchema.required"), "study_id"));
	assert_true(arr_has(jget(t, "inputSchema.required"), "participant_id"));
	assert_non_null(jget(t, "inputSchema.properties.reason"));
	/* design.md §13: the bulk review's ids are an array of 1-500 */
	t = tool_def(&r, "review_participants");
	assert_string_equal(json_object_get_string(
	    jget(t, "inputSchema.properties.participant_ids.type")), "array");
	assert_int_equal(json_object_get_int(
	    jget(t, "inputSchema.properties.participant_ids.maxItems")), 500);
	assert_true(arr_has(jget(t, "inputSchema.required"), "action"));
	resp_free(&r);
}

/*
 * Every tool's title, annotations and outputSchema (api.md §18): the
 * annotations say what the route does (get_study opens a participation:
 * not read-only), every outputSchema is an object schema with the route's
 * answer and the error body as branches, standing alone ($defs).
 */
static void
tool_annotations_and_schemas(void **state)
{
	static const struct { const char *name; int ro, destructive, idempotent; } rows[] = {
		{ "get_profile", 1, 0, 1 },		{ "update_profile", 0, 1, 1 },
		{ "set_bio", 0, 1, 1 },			{ "get_bio", 1, 0, 1 },
		{ "heartbeat", 0, 0, 0 },		{ "list_available_studies", 1, 0, 1 },
		{ "accept_study", 0, 0, 1 },		{ "get_study", 0, 0, 1 },
		{ "complete_study", 0, 0, 0 },		{ "withdraw_study", 0, 1, 1 },
		{ "list_history", 1, 0, 1 },		{ "get_reputation", 1, 0, 1 },
		{ "rotate_api_key", 0, 1, 0 },		{ "new_claim_code", 0, 1, 0 },
		{ "create_study", 0, 0, 0 },		{ "list_studies", 1, 0, 1 },
		{ "pause_study", 0, 0, 1 },		{ "resume_study", 0, 0, 1 },
		{ "stop_study", 0, 1, 1 },		{ "list_participants", 1, 0, 1 },
		{ "approve_participant", 0, 0, 1 },	{ "reject_participant", 0, 1, 1 },
		{ "update_study", 0, 1, 1 },
		{ "get_account", 1, 0, 1 },		{ "claim_agent", 0, 0, 1 },
		{ "replace_agent_api_key", 0, 1, 0 },	{ "get_wallet_balance", 1, 0, 1 },
		{ "list_wallet_transactions", 1, 0, 1 }, { "list_events", 1, 0, 1 },
		{ "review_participants", 0, 1, 1 },	{ "pay_bonuses", 0, 0, 0 },
		{ "list_bonuses", 1, 0, 1 },		{ "list_messages", 1, 0, 1 },
		{ "read_message", 0, 0, 1 },		{ "reply_message", 0, 0, 0 },
		{ "send_message", 0, 0, 0 },		{ "list_thread", 1, 0, 1 },
		{ "create_group", 0, 0, 0 },		{ "list_groups", 1, 0, 1 },
		{ "get_group", 1, 0, 1 },		{ "update_group", 0, 1, 1 },
		{ "delete_group", 0, 1, 1 },		{ "add_group_members", 0, 0, 1 },
		{ "list_group_members", 1, 0, 1 },	{ "remove_group_member", 0, 1, 1 },
	};
	struct json_object *t, *o, *any;
	struct test_agent a;
	struct test_user u;
	struct resp ra, ru, *r;
	size_t i, j, err;

	(void)state;
	agent_new(&a, "mcp-hints");
	user_login(&u, "mcp-hints");
	ra = mcp_post(a.hdr, NULL, RPC("1", "tools/list", "{}"));
	ru = mcp_post(u.hdr, NULL, RPC("1", "tools/list", "{}"));
	assert_int_equal(ra.status, 200);
	assert_int_equal(ru.status, 200);
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		r = has_tool(&ra, rows[i].name) ? &ra : &ru;
		t = tool_def(r, rows[i].name);
		if (t == NULL)
			print_error("no tool %s\n", rows[i].name);
		assert_non_null(t);
		assert_true(strlen(json_object_get_string(jget(t, "title"))) > 3);
		assert_int_equal(json_object_get_boolean(jget(t, "annotations.readOnlyHint")),
		    rows[i].ro);
		assert_int_equal(json_object_get_boolean(jget(t, "annotations.destructiveHint")),
		    rows[i].destructive);
		assert_int_equal(json_object_get_boolean(jget(t, "annotations.idempotentHint")),
		    rows[i].idempotent);
		assert_false(json_object_get_boolean(jget(t, "annotations.openWorldHint")));
		o = jget(t, "outputSchema");
		if (o == NULL)
			print_error("%s has no outputSchema\n", rows[i].name);
		assert_non_null(o);
		assert_string_equal(json_object_get_string(jget(o, "type")), "object");
		assert_true(json_object_is_type(jget(o, "$defs"), json_type_object));
		any = jget(o, "anyOf");
		assert_true(json_object_array_length(any) >= 2);
		for (j = 0, err = 0; j < json_object_array_length(any); j++) {
			struct json_object *ref = jget(json_object_array_get_idx(any, j), "$ref");
			if (ref != NULL && strcmp(json_object_get_string(ref), "#/$defs/Error") == 0)
				err++;
		}
		assert_int_equal(err, 1);
		assert_non_null(jget(o, "$defs.Error"));
	}
	/* every tool listed, to either credential, is a row above */
	for (r = &ra; r != NULL; r = r == &ra ? &ru : NULL)
		for (j = 0; j < json_object_array_length(jget(r->json, "result.tools")); j++) {
			const char *n = json_object_get_string(jget(json_object_array_get_idx(
			    jget(r->json, "result.tools"), j), "name"));
			for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
				if (strcmp(rows[i].name, n) == 0)
					break;
			if (i == sizeof rows / sizeof rows[0])
				print_error("tool %s has no row\n", n);
			assert_true(i < sizeof rows / sizeof rows[0]);
		}
	/* get_study's answer is one of the two views */
	o = jget(tool_def(&ra, "get_study"), "outputSchema");
	assert_non_null(jget(o, "$defs.StudyAgent"));
	assert_non_null(jget(o, "$defs.StudyResearcher"));
	resp_free(&ra);
	resp_free(&ru);
}

/* list_available_studies pages with cursor as GET /studies/available does. */
static void
available_cursor(void **state)
{
	struct test_agent a;
	struct resp r;

	(void)state;
	agent_new(&a, "mcp-cursor");
	r = tool(a.hdr, "list_available_studies", "{\"limit\":5,\"cursor\":\"5\"}");
	assert_tool_result(&r, 0, 200);
	assert_true(json_object_is_type(jget(r.json, "result.structuredContent.studies"),
	    json_type_array));
	resp_free(&r);
	r = tool(a.hdr, "list_available_studies", "{\"cursor\":\"not-a-cursor\"}");
	assert_tool_refusal(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
}

static void
tool_refusals(void **state)
{
	struct test_agent a;
	struct test_user u;
	char s[IDS_BUFSZ], args[256];
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	study_new(&u, s, 100, 2, NULL);
	agent_new(&a, "mcp-refused");
	r = tool(a.hdr, "accept_study", "{\"study_id\":\"std_0000000000000000\"}");
	assert_tool_refusal(&r, 404, "NOT_FOUND");
	resp_free(&r);
	snprintf(args, sizeof args, "{\"study_id\":\"%s\"}", s);
	r = tool(a.hdr, "accept_study", args);
	assert_tool_refusal(&r, 403, "AGENT_NOT_CLAIMED");
	resp_free(&r);
	r = tool(a.hdr, "complete_study", args);
	assert_tool_refusal(&r, 409, "NO_ACTIVE_PARTICIPATION");
	resp_free(&r);
	/* a limit refused with Retry-After, which _meta carries */
	r = tool(a.hdr, "heartbeat", "{}");
	assert_tool_result(&r, 0, 200);
	resp_free(&r);
	r = tool(a.hdr, "heartbeat", "{}");
	assert_tool_refusal(&r, 429, "RATE_LIMITED");
	assert_true(jgeti(&r, "result._meta.arps/retry_after") > 0);
	resp_free(&r);
	/* a researcher refused by the handler: a participant id that is not there */
	snprintf(args, sizeof args, "{\"study_id\":\"%s\",\"participant_id\":\"anon_0000000000000000\"}",
	    s);
	r = tool(u.hdr, "approve_participant", args);
	assert_int_equal(json_object_get_boolean(jget(r.json, "result.isError")), 1);
	assert_int_equal(jgeti(&r, "result.structuredContent.status"), 404);
	resp_free(&r);
}

static void
tool_writes_and_idempotency(void **state)
{
	static const char study[] = "\"title\":\"MCP survey\",\"description\":\"Made by a tool.\","
	    "\"study_url\":\"https://survey.example.org/mcp\",\"reward_per_participant\":120,"
	    "\"max_participants\":2,\"screening_criteria\":\"Anyone\","
	    "\"estimated_duration_minutes\":5";
	char args[1024], id[IDS_BUFSZ];
	struct test_agent a;
	struct test_user u;
	long long avail, frozen;
	struct resp r;

	(void)state;
	researcher(&u, 10000);
	snprintf(args, sizeof args, "{%s,\"idempotency_key\":\"mcp-create-1\"}", study);
	r = tool(u.hdr, "create_study", args);
	assert_tool_result(&r, 0, 201);
	snprintf(id, sizeof id, "%s", jgets(&r, "result.structuredContent.id"));
	assert_true(ids_valid(IDS_STUDY, id));
	assert_string_equal(jgets(&r, "result.structuredContent.status"), "active");
	assert_null(jget(r.json, "result._meta.arps/idempotent_replayed"));
	resp_free(&r);
	/* the same key and arguments: the first answer again, no second study */
	r = tool(u.hdr, "create_study", args);
	assert_tool_result(&r, 0, 201);
	assert_string_equal(jgets(&r, "result.structuredContent.id"), id);
	assert_true(json_object_get_boolean(jget(r.json, "result._meta.arps/idempotent_replayed")));
	resp_free(&r);
	balance_of(u.hdr, &avail, &frozen);
	assert_int_equal(frozen, 2 * SLOT_OF(120));
	/* the same key with other arguments */
	snprintf(args, sizeof args, "{%s,\"deadline\":null,\"idempotency_key\":\"mcp-create-1\"}",
	    study);
	r = tool(u.hdr, "create_study", args);
	assert_tool_result(&r, 0, 201);	/* null is absent: the same body */
	resp_free(&r);
	snprintf(args, sizeof args, "{%s,\"completion_code\":\"OTHER\","
	    "\"idempotency_key\":\"mcp-create-1\"}", study);
	r = tool(u.hdr, "create_study", args);
	assert_tool_refusal(&r, 409, "IDEMPOTENCY_CONFLICT");
	resp_free(&r);
	/* the study is the REST one */
	r = get_as(u.hdr, "/api/v1/studies/%s", id);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "title"), "MCP survey");
	resp_free(&r);
	snprintf(args, sizeof args, "{\"study_id\":\"%s\"}", id);
	r = tool(u.hdr, "pause_study", args);
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.status"), "paused");
	resp_free(&r);
	/* a paused study may still change (PATCH /studies/{id}) */
	snprintf(args, sizeof args, "{\"study_id\":\"%s\",\"title\":\"MCP survey, edited\"}", id);
	r = tool(u.hdr, "update_study", args);
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.title"), "MCP survey, edited");
	resp_free(&r);
	r = tool(u.hdr, "list_studies", "{\"limit\":1}");
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.studies.0.id"), id);
	assert_int_equal(json_object_array_length(jget(r.json,
	    "result.structuredContent.studies")), 1);
	assert_true(json_object_object_get_ex(jget(r.json, "result.structuredContent"),
	    "next_cursor", NULL));
	resp_free(&r);
	/* an agent's profile write through a tool */
	agent_new(&a, "mcp-writer");
	r = tool(a.hdr, "update_profile", "{\"name\":\"Renamed by MCP\",\"description\":null}");
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.name"), "Renamed by MCP");
	resp_free(&r);
	r = get_as(a.hdr, "/api/v1/agents/me");
	assert_string_equal(jstr(&r, "name"), "Renamed by MCP");
	resp_free(&r);
	/* the bio is embedded after the answer, as over REST */
	r = tool(a.hdr, "set_bio", "{\"bio\":\"Nurse on night shifts who gardens\"}");
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.embedding_status"), "processing");
	resp_free(&r);
	embedding_ready(a.id);
	r = tool(a.hdr, "get_bio", "{}");
	assert_tool_result(&r, 0, 200);
	assert_string_equal(jgets(&r, "result.structuredContent.embedding_status"), "ready");
	assert_string_equal(jgets(&r, "result.structuredContent.bio"),
	    "Nurse on night shifts who gardens");
	resp_free(&r);
	r = tool(a.hdr, "list_wallet_transactions", "{\"type\":\"earning\",\"limit\":5}");
	assert_tool_result(&r, 0, 200);
	assert_int_equal(json_object_array_length(jget(r.json,
	    "result.structuredContent.transactions")), 0);
	resp_free(&r);
}

/*
 * The whole participation through the official TypeScript SDK client
 * (tests/mcp/participation.mjs, installed under build/mcp by mk/mcp.mk):
 * list tools, available studies, accept, open, complete; the researcher
 * approves over REST; the agent's balance tool shows the earning.
 */
static void
sdk_participation(void **state)
{
	static const char criteria[] = "Adults who write software every day";
	struct test_agent a;
	struct test_user owner, u;
	char s[IDS_BUFSZ];
	const char *root = getenv("ARPS_ROOT");

	(void)state;
	assert_non_null(root);
	researcher(&u, 100000);
	study_new(&u, s, 250, 3, "MCP-CODE-7");
	study_backdate(s, 16 * 60);	/* past the first-access window */
	agent_claimed(&a, &owner, "sdk-agent");
	agent_bio_ready(&a, criteria);
	embedding_ready(s);
	assert_int_equal(sh("cd '%s' && ARPS_MCP_AGENT_KEY='%s' ARPS_MCP_RESEARCHER_TOKEN='%s' "
	    "ARPS_MCP_STUDY='%s' ARPS_MCP_CODE=MCP-CODE-7 node build/mcp/participation.mjs",
	    root, a.key, u.token, s), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(initialize_versions),
		cmocka_unit_test(notifications_202),
		cmocka_unit_test(get_405),
		cmocka_unit_test(auth_failures),
		cmocka_unit_test(jsonrpc_errors),
		cmocka_unit_test(tool_argument_refusals),
		cmocka_unit_test(tools_list_agent),
		cmocka_unit_test(tools_list_researcher),
		cmocka_unit_test(tool_annotations_and_schemas),
		cmocka_unit_test(available_cursor),
		cmocka_unit_test(tool_refusals),
		cmocka_unit_test(tool_writes_and_idempotency),
		cmocka_unit_test(sdk_participation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
