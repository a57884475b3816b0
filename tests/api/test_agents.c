/* Agent endpoints: register, profile, bio, heartbeat, authentication. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "core/timefmt.h"
#include "tests/api/flows.h"
#include "tests/api/study_helpers.h"

static void
fill(void *ctx, void *buf, size_t n)
{
	(void)ctx;
	randombytes_buf(buf, n);
}

static const struct arps_rng rng = { fill, NULL };

static void
register_ok(void **state)
{
	struct json_object *next, *a0, *a1, *v;
	struct resp r;
	char ip[32];

	(void)state;
	r = http_req("POST", "/api/v1/agents/register",
	    "{\"name\":\"Ada\",\"description\":\"Research helper\"}", NULL, random_ip(ip));
	assert_int_equal(r.status, 201);
	assert_true(ids_valid(IDS_AGENT, jstr(&r, "agent_id")));
	assert_true(apikey_check(jstr(&r, "api_key")));
	assert_int_equal(strncmp(jstr(&r, "api_key"), "arps_live_", 10), 0);
	assert_string_equal(jstr(&r, "status"), "unclaimed");
	assert_int_equal(jint(&r, "reputation"), 50);
	assert_true(claim_code_valid(jstr(&r, "claim_code")));
	assert_true(json_object_object_get_ex(r.json, "nextActions", &next));
	assert_int_equal(json_object_array_length(next), 2);
	a0 = json_object_array_get_idx(next, 0);
	a1 = json_object_array_get_idx(next, 1);
	assert_true(json_object_object_get_ex(a0, "action", &v));
	assert_string_equal(json_object_get_string(v), "setup_bio");
	assert_true(json_object_object_get_ex(a0, "endpoint", &v));
	assert_string_equal(json_object_get_string(v), "POST /profile/bio");
	assert_true(json_object_object_get_ex(a1, "action", &v));
	assert_string_equal(json_object_get_string(v), "claim_ownership");
	assert_true(json_object_object_get_ex(a1, "endpoint", &v));
	assert_string_equal(json_object_get_string(v), "POST /auth/claim");
	resp_free(&r);
}

static void
register_bad_input(void **state)
{
	static const struct { const char *body, *ctype; long status; const char *code; } rows[] = {
		{ "{}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":\"\"}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":42}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":null}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":[\"a\"]}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":\"a\\u0000b\"}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":\"ok\",\"description\":7}", NULL, 422, "VALIDATION_ERROR" },
		{ "{\"name\":", NULL, 400, "INVALID_JSON" },
		{ "[1,2]", NULL, 400, "INVALID_JSON" },
		{ "{\"name\":\"a\"} trailing", NULL, 400, "INVALID_JSON" },
		{ "{\"name\":\"\xff\xfe\"}", NULL, 400, "INVALID_JSON" },
		{ "{\"name\":\"\xc0\xaf\"}", NULL, 400, "INVALID_JSON" },
		{ "name=x", "Content-Type: application/x-www-form-urlencoded", 415, "UNSUPPORTED_MEDIA_TYPE" },
	};
	char longname[400], body[512], ip[32];
	size_t i;

	(void)state;
	random_ip(ip);
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct resp r = http_req("POST", "/api/v1/agents/register", rows[i].body,
		    rows[i].ctype ? HDRS(rows[i].ctype) : NULL, ip);
		if (r.status != rows[i].status)
			print_error("row %zu: %s\n", i, r.body ? r.body : "");
		assert_error(&r, rows[i].status, rows[i].code);
		resp_free(&r);
	}
	/* 101 characters (multi-byte: the bound counts characters) */
	memset(longname, 0, sizeof longname);
	for (i = 0; i < 101; i++)
		memcpy(longname + 2 * i, "\xc3\xa9", 2);
	snprintf(body, sizeof body, "{\"name\":\"%s\"}", longname);
	{
		struct resp r = http_req("POST", "/api/v1/agents/register", body, NULL, ip);
		assert_error(&r, 422, "VALIDATION_ERROR");
		assert_non_null(strstr(jstr(&r, "detail"), "name"));
		resp_free(&r);
	}
	longname[200] = '\0';	/* exactly 100 characters: fine */
	snprintf(body, sizeof body, "{\"name\":\"%s\"}", longname);
	{
		struct resp r = http_req("POST", "/api/v1/agents/register", body, NULL, ip);
		assert_int_equal(r.status, 201);
		resp_free(&r);
	}
}

/* --- the registration limit under concurrency --- */

struct burst {
	const char *ip;
	int ok, limited, other;
	pthread_mutex_t mu;
};

static void *
reg_one(void *arg)
{
	struct burst *b = arg;
	struct resp r = http_req("POST", "/api/v1/agents/register", "{\"name\":\"burst\"}", NULL, b->ip);
	char ra[32];

	pthread_mutex_lock(&b->mu);
	if (r.status == 201)
		b->ok++;
	else if (r.status == 429 && strcmp(jstr(&r, "error_code"), "RATE_LIMITED") == 0 &&
	    resp_header(&r, "Retry-After", ra, sizeof ra) != NULL && atoi(ra) > 0)
		b->limited++;
	else
		b->other++;
	pthread_mutex_unlock(&b->mu);
	resp_free(&r);
	return NULL;
}

static void
register_rate_limit_exact(void **state)
{
	struct burst b;
	pthread_t th[16];
	char ip[32];
	int i;

	(void)state;
	memset(&b, 0, sizeof b);
	pthread_mutex_init(&b.mu, NULL);
	b.ip = random_ip(ip);
	for (i = 0; i < 16; i++)
		pthread_create(&th[i], NULL, reg_one, &b);
	for (i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(b.other, 0);
	assert_int_equal(b.ok, 10);
	assert_int_equal(b.limited, 6);
	/* the 11th, sequentially */
	reg_one(&b);
	assert_int_equal(b.limited, 7);
	/* another address is not affected */
	b.ip = random_ip(ip);
	reg_one(&b);
	assert_int_equal(b.ok, 11);
}

/* design.md §6.18: whatever X-Real-IP or X-Forwarded-For a client sends is
 * overwritten by nginx; the limit follows the real peer address. */
static void
register_limit_ignores_spoofed_ip(void **state)
{
	char ip[32], h1[64], h2[64];
	int i, ok = 0, limited = 0;

	(void)state;
	random_ip(ip);
	for (i = 0; i < 11; i++) {
		struct resp r;

		snprintf(h1, sizeof h1, "X-Real-IP: 10.0.%d.%d", i, i + 1);
		snprintf(h2, sizeof h2, "X-Forwarded-For: 192.0.2.%d", i + 1);
		r = http_req("POST", "/api/v1/agents/register", "{\"name\":\"spoof\"}",
		    HDRS(h1, h2), ip);
		if (r.status == 201)
			ok++;
		else if (r.status == 429)
			limited++;
		resp_free(&r);
	}
	assert_int_equal(ok, 10);
	assert_int_equal(limited, 1);
}

static void
auth_errors(void **state)
{
	struct test_agent a;
	struct test_user u;
	char key[APIKEY_BUFSZ], hdr[96];
	struct resp r;

	(void)state;
	agent_new(&a, "auth");
	/* no credential */
	r = http_get("/api/v1/agents/me", NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* a typo: checksum fails, no look-up */
	snprintf(key, sizeof key, "%s", a.key);
	key[15] = key[15] == 'a' ? 'b' : 'a';
	snprintf(hdr, sizeof hdr, "X-API-Key: %s", key);
	r = http_get("/api/v1/agents/me", HDRS(hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* well-formed, valid checksum, unknown */
	assert_int_equal(apikey_new(&rng, key), 0);
	snprintf(hdr, sizeof hdr, "X-API-Key: %s", key);
	r = http_get("/api/v1/agents/me", HDRS(hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* garbage */
	r = http_get("/api/v1/agents/me", HDRS("X-API-Key: nope"));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* the wrong kind of credential */
	user_login(&u, "wrongkind");
	r = http_get("/api/v1/agents/me", HDRS(u.hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* an agent's valid key on a Bearer route: a known caller without the
	 * permission (interface-spec's 403); an unknown key there is 401 */
	r = http_get("/api/v1/account", HDRS(a.hdr));
	assert_error(&r, 403, "FORBIDDEN");
	assert_non_null(strstr(jstr(&r, "detail"), "access token"));
	resp_free(&r);
	r = http_get("/api/v1/account", HDRS(hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	r = http_get("/api/v1/account", HDRS("Authorization: Bearer act_xyz"));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	r = http_get("/api/v1/account", HDRS("Authorization: Basic Zm9vOmJhcg=="));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
}

static void
me_get_and_patch(void **state)
{
	struct test_agent a;
	struct json_object *v;
	struct resp r;

	(void)state;
	agent_new(&a, "Me");
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "agent_id"), a.id);
	assert_string_equal(jstr(&r, "name"), "Me");
	assert_string_equal(jstr(&r, "description"), "test agent");
	assert_string_equal(jstr(&r, "status"), "unclaimed");
	assert_int_equal(jint(&r, "reputation"), 50);
	assert_string_equal(jstr(&r, "tier"), "standard");
	assert_true(json_object_object_get_ex(r.json, "current_study", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(r.json, "last_heartbeat", &v));
	assert_null(v);
	resp_free(&r);

	r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":\"Renamed\"}", HDRS(a.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "name"), "Renamed");
	assert_string_equal(jstr(&r, "description"), "test agent");
	assert_string_equal(jstr(&r, "agent_id"), a.id);
	resp_free(&r);
	r = http_req("PATCH", "/api/v1/agents/me", "{\"description\":null}", HDRS(a.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_true(json_object_object_get_ex(r.json, "description", &v));
	assert_null(v);
	assert_string_equal(jstr(&r, "name"), "Renamed");
	resp_free(&r);
	r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":\"\"}", HDRS(a.hdr), NULL);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":5}", HDRS(a.hdr), NULL);
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":\"x\"}", NULL, NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* nothing changed by the refused ones */
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_string_equal(jstr(&r, "name"), "Renamed");
	resp_free(&r);
}

/* GET /agents/me is written by hand (fcgi/agents.c): its text must be
 * json-c's serialisation of the same answer byte for byte, with every
 * escape (quote, backslash, slash, tab, CR, LF, non-ASCII), null
 * description and heartbeat, and a current study object. */
static void
me_text_exact(void **state)
{
	static const char name[] = "Q\"u\\o/t\u00e9 \u6f22 \U0001F41D";
	static const char desc[] = "tab\there, CR\r LF\n \"q\" \\ / \u00fc\u00df \U0001F600";
	static const char *const keys[] = { "agent_id", "name", "description", "status",
	    "reputation", "tier", "current_study", "last_heartbeat", "created_at" };
	struct test_agent a;
	struct test_user u, o;
	struct json_object *b, *v;
	char study[IDS_BUFSZ];
	struct resp r;
	size_t k;
	int pass;

	(void)state;
	researcher(&u, 100000);
	study_new(&u, study, 10, 2, NULL);
	agent_claimed(&a, &o, "exact");
	agent_set_reputation(a.id, 80);	/* priority: no first-access delay */
	b = json_object_new_object();
	json_object_object_add(b, "name", json_object_new_string(name));
	json_object_object_add(b, "description", json_object_new_string(desc));
	r = http_req("PATCH", "/api/v1/agents/me", json_object_to_json_string_ext(b,
	    JSON_C_TO_STRING_PLAIN), HDRS(a.hdr), NULL);
	json_object_put(b);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	for (pass = 0; pass < 3; pass++) {
		if (pass == 1)
			assert_int_equal(study_post(a.hdr, study, "accept", NULL), 200);
		if (pass == 2) {
			r = http_req("PATCH", "/api/v1/agents/me", "{\"description\":null}",
			    HDRS(a.hdr), NULL);
			assert_int_equal(r.status, 200);
			resp_free(&r);
		}
		r = http_get("/api/v1/agents/me", HDRS(a.hdr));
		assert_int_equal(r.status, 200);
		assert_string_equal(r.body, json_object_to_json_string_ext(r.json,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		/* the keys, in the order of the answer json-c wrote */
		k = 0;
		json_object_object_foreach(r.json, key, val) {
			(void)val;
			assert_true(k < sizeof keys / sizeof keys[0]);
			assert_string_equal(key, keys[k]);
			k++;
		}
		assert_int_equal(k, sizeof keys / sizeof keys[0]);
		assert_string_equal(jstr(&r, "agent_id"), a.id);
		assert_string_equal(jstr(&r, "name"), name);
		assert_string_equal(jstr(&r, "tier"), "priority");
		assert_int_equal(jint(&r, "reputation"), 80);
		assert_true(json_object_object_get_ex(r.json, "description", &v));
		if (pass < 2)
			assert_string_equal(json_object_get_string(v), desc);
		else
			assert_null(v);
		assert_true(json_object_object_get_ex(r.json, "current_study", &v));
		if (pass == 0)
			assert_null(v);
		else {
			assert_string_equal(jgets(&r, "current_study.study_id"), study);
			assert_string_equal(jgets(&r, "current_study.status"), "accepted");
			assert_non_null(jgets(&r, "current_study.accepted_at"));
		}
		assert_non_null(jstr(&r, "created_at"));
		resp_free(&r);
	}
}

static void
bio_flow(void **state)
{
	struct test_agent a;
	struct json_object *v;
	struct resp r;
	char big[5100 + 32];
	int64_t t;

	(void)state;
	agent_new(&a, "Bio");
	r = http_get("/api/v1/profile/bio", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_true(json_object_object_get_ex(r.json, "bio", &v));
	assert_null(v);
	assert_string_equal(jstr(&r, "embedding_status"), "none");
	resp_free(&r);
	r = http_post("/api/v1/profile/bio",
	    "{\"bio\":\"A retired nurse in Lyon who gardens and uses an old Android phone.\"}",
	    HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "embedding_status"), "processing");
	assert_string_equal(jstr(&r, "bio"),
	    "A retired nurse in Lyon who gardens and uses an old Android phone.");
	assert_int_equal(timefmt_parse(jstr(&r, "updated_at"), strlen(jstr(&r, "updated_at")), &t), 0);
	resp_free(&r);
	r = http_get("/api/v1/profile/bio", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "bio"),
	    "A retired nurse in Lyon who gardens and uses an old Android phone.");
	/* never "ready" without a real embedding */
	assert_true(strcmp(jstr(&r, "embedding_status"), "processing") == 0 ||
	    strcmp(jstr(&r, "embedding_status"), "ready") == 0 ||
	    strcmp(jstr(&r, "embedding_status"), "failed") == 0);
	resp_free(&r);
	r = http_post("/api/v1/profile/bio", "{}", HDRS(a.hdr));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = http_post("/api/v1/profile/bio", "{\"bio\":\"\"}", HDRS(a.hdr));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	memcpy(big, "{\"bio\":\"", 8);
	memset(big + 8, 'x', 5001);
	memcpy(big + 8 + 5001, "\"}", 3);
	r = http_post("/api/v1/profile/bio", big, HDRS(a.hdr));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = http_post("/api/v1/profile/bio", "{\"bio\":\"x\"}", NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
}

struct hb {
	const char *hdr;
	int ok, limited, other;
	pthread_mutex_t mu;
};

static void *
hb_one(void *arg)
{
	struct hb *h = arg;
	struct resp r = http_post("/api/v1/heartbeat", NULL, HDRS(h->hdr));
	char ra[32];

	pthread_mutex_lock(&h->mu);
	if (r.status == 200 && strcmp(jstr(&r, "status"), "ok") == 0)
		h->ok++;
	else if (r.status == 429 && strcmp(jstr(&r, "error_code"), "RATE_LIMITED") == 0 &&
	    resp_header(&r, "Retry-After", ra, sizeof ra) != NULL && atoi(ra) > 0 && atoi(ra) <= 600)
		h->limited++;
	else
		h->other++;
	pthread_mutex_unlock(&h->mu);
	resp_free(&r);
	return NULL;
}

/* Names are one visible line; descriptions and bios visible text. */
static void
text_fields(void **state)
{
	static const char *bad_patch[] = {
		"{\"name\":\"   \"}", "{\"name\":\"\\t\\n\"}", "{\"name\":\"\\u0001ctrl\"}",
		"{\"name\":\"two\\nlines\"}", "{\"name\":\"del\\u007f\"}",
		"{\"description\":\"bell\\u0007\"}",
	};
	static const char *bad_bio[] = {
		"{\"bio\":\"   \"}", "{\"bio\":\"\\n\\t\\r\"}", "{\"bio\":\"esc \\u001b[31m\"}",
	};
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "Text tester");
	for (i = 0; i < sizeof bad_patch / sizeof bad_patch[0]; i++) {
		r = http_req("PATCH", "/api/v1/agents/me", bad_patch[i],
		    HDRS(a.hdr, "Content-Type: application/json"), NULL);
		assert_error(&r, 422, "VALIDATION_ERROR");
		resp_free(&r);
	}
	for (i = 0; i < sizeof bad_bio / sizeof bad_bio[0]; i++) {
		r = http_post("/api/v1/profile/bio", bad_bio[i], HDRS(a.hdr));
		assert_error(&r, 422, "VALIDATION_ERROR");
		assert_non_null(strstr(jstr(&r, "detail"), "bio"));
		resp_free(&r);
	}
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_string_equal(jstr(&r, "name"), "Text tester");
	resp_free(&r);
	/* line breaks and tabs are fine in multi-line text; "" clears nothing */
	r = http_req("PATCH", "/api/v1/agents/me",
	    "{\"name\":\"Zo\\u00eb \\ud83d\\ude80\",\"description\":\"Line one.\\r\\nLine\\ttwo.\"}",
	    HDRS(a.hdr, "Content-Type: application/json"), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "name"), "Zo\xc3\xab \xf0\x9f\x9a\x80");
	resp_free(&r);
	r = http_post("/api/v1/profile/bio", "{\"bio\":\"Retired nurse.\\nLoves gardening.\"}",
	    HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

static void
heartbeat(void **state)
{
	struct test_agent a, b;
	pthread_t th[8];
	struct hb h;
	struct resp r;
	int64_t next, last;
	int i;

	(void)state;
	agent_new(&a, "Beat");
	r = http_post("/api/v1/heartbeat", NULL, HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "status"), "ok");
	assert_int_equal(timefmt_parse(jstr(&r, "next_heartbeat_at"),
	    strlen(jstr(&r, "next_heartbeat_at")), &next), 0);
	assert_int_equal(timefmt_parse(jstr(&r, "last_heartbeat"),
	    strlen(jstr(&r, "last_heartbeat")), &last), 0);
	assert_int_equal(next - last, 600);
	resp_free(&r);
	r = http_post("/api/v1/heartbeat", NULL, HDRS(a.hdr));
	assert_error(&r, 429, "RATE_LIMITED");
	resp_free(&r);
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_int_equal(timefmt_parse(jstr(&r, "last_heartbeat"), strlen(jstr(&r, "last_heartbeat")),
	    &next), 0);
	assert_int_equal(next, last);
	resp_free(&r);
	/* several connections at once: exactly one passes */
	agent_new(&b, "Beat2");
	memset(&h, 0, sizeof h);
	pthread_mutex_init(&h.mu, NULL);
	h.hdr = b.hdr;
	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, hb_one, &h);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(h.other, 0);
	assert_int_equal(h.ok, 1);
	assert_int_equal(h.limited, 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(register_ok),
		cmocka_unit_test(register_bad_input),
		cmocka_unit_test(register_rate_limit_exact),
		cmocka_unit_test(register_limit_ignores_spoofed_ip),
		cmocka_unit_test(auth_errors),
		cmocka_unit_test(me_get_and_patch),
		cmocka_unit_test(me_text_exact),
		cmocka_unit_test(bio_flow),
		cmocka_unit_test(heartbeat),
		cmocka_unit_test(text_fields),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_agents", tests, NULL, NULL);
}
