/*
 * The attacks of design.md §9.5 to design.md §9.11, through nginx: each attack
 * as an attacker would try it, then the exact refusal, and the honest
 * client still served: API key rotation, the owner's revocation and
 * logout-all (design.md §9.6); JSON bodies with repeated keys or keys
 * holding U+0000 (design.md §9.7); study_url pointing inside the network
 * (design.md §9.8); nosniff and no-store on every answer, nginx's own too,
 * no HSTS on plain HTTP (design.md §9.9; the production files:
 * tools/check-nginx.sh); identity-provider e-mail joins an account only
 * when verified (JSON true) and the provider is trusted to verify
 * (design.md §9.11).  The deadline of a request's database work (design.md §9.5) is
 * tests/db/test_deadline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "tests/api/flows.h"
#include "tests/api/jwt.h"
#include "tests/api/study_helpers.h"

static char rsa_pem[512];

/* A fresh Idempotency-Key header (32 base64url-ish characters). */
static void
idem_new(char hdr[80])
{
	unsigned char b[16];
	char hex[33];

	randombytes_buf(b, sizeof b);
	sodium_bin2hex(hex, sizeof hex, b, sizeof b);
	snprintf(hdr, 80, "Idempotency-Key: sec-%s", hex);
}

/* The status of GET /agents/me with an API key header. */
static long
me_status(const char *keyhdr)
{
	struct resp r = http_get("/api/v1/agents/me", HDRS(keyhdr));
	long st = r.status;

	if (st == 401)
		assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	return st;
}

/* The status of GET /account with a bearer header. */
static long
account_status(const char *hdr)
{
	struct resp r = http_get("/api/v1/account", HDRS(hdr));
	long st = r.status;

	if (st == 401)
		assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	return st;
}

/* Asserts a {api_key, created_at} answer and copies the key into a header. */
static void
new_key_answer(const struct resp *r, char hdr[80], char key[APIKEY_BUFSZ])
{
	if (r->status != 200)
		print_error("new key: %ld %s\n", r->status, r->body ? r->body : "");
	assert_int_equal(r->status, 200);
	assert_non_null(r->json);
	assert_int_equal(json_object_object_length(r->json), 2);
	assert_true(apikey_check(jstr(r, "api_key")));
	assert_int_equal(strlen(jstr(r, "created_at")), 20);	/* 2026-01-01T00:00:00Z */
	snprintf(key, APIKEY_BUFSZ, "%s", jstr(r, "api_key"));
	snprintf(hdr, 80, "X-API-Key: %s", key);
}

/* --- design.md §9.6 API key lifecycle ---------------------------------------------- */

/* Rotation: the new key answered once (replayable with its Idempotency-Key
 * while the old key works), the old key ends at the new key's first use. */
static void
key_rotation(void **state)
{
	struct test_agent a;
	char idem[80], k2hdr[80], k2[APIKEY_BUFSZ], k3hdr[80], k3[APIKEY_BUFSZ];
	struct resp r, again;

	(void)state;
	agent_new(&a, "rotator");
	idem_new(idem);
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr, idem), NULL);
	new_key_answer(&r, k2hdr, k2);
	assert_string_not_equal(k2, a.key);
	/* the answer was lost: replayed with the old key and the same
	 * Idempotency-Key, the same new key, never a third one */
	again = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr, idem), NULL);
	assert_int_equal(again.status, 200);
	assert_string_equal(jstr(&again, "api_key"), k2);
	{
		char v[16];

		assert_non_null(resp_header(&again, "Idempotent-Replayed", v, sizeof v));
		assert_string_equal(v, "true");
	}
	resp_free(&again);
	resp_free(&r);
	/* the new key sent where an access token is needed: refused (403),
	 * and that refusal ends no grace period */
	r = http_get("/api/v1/account", HDRS(k2hdr));
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	r = http_get("/api/v1/account", HDRS(a.hdr));
	assert_error(&r, 403, "FORBIDDEN");	/* the old one is still known */
	resp_free(&r);
	/* both keys work until the new one is first used ... */
	assert_int_equal(me_status(a.hdr), 200);
	assert_int_equal(me_status(k2hdr), 200);
	/* ... then only the new one */
	assert_int_equal(me_status(a.hdr), 401);
	assert_int_equal(me_status(k2hdr), 200);
	/* a stolen old key cannot rotate again */
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr), NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	/* a second rotation from the current key: same rule */
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(k2hdr), NULL);
	new_key_answer(&r, k3hdr, k3);
	resp_free(&r);
	assert_int_equal(me_status(k3hdr), 200);
	assert_int_equal(me_status(k2hdr), 401);
	/* the credential of this endpoint is an API key, not a token */
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, NULL, NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
}

/* Issue 36, finding 6: a key in its grace period cannot rotate.  After
 * K -> N1, whoever holds K (a thief, or a client that lost the answer
 * without its Idempotency-Key) is refused 403 FORBIDDEN, and N1 keeps
 * working; the replay of the first rotation with its Idempotency-Key still
 * answers N1 (what the grace period is for). */
static void
key_grace_cannot_rotate(void **state)
{
	struct test_agent a;
	char idem[80], n1hdr[80], n1[APIKEY_BUFSZ], n2hdr[80], n2[APIKEY_BUFSZ];
	struct resp r;

	(void)state;
	agent_new(&a, "graced");
	idem_new(idem);
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr, idem), NULL);
	new_key_answer(&r, n1hdr, n1);
	resp_free(&r);
	/* K rotates again, without or with another Idempotency-Key: refused */
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr), NULL);
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	idem_new(n2hdr);
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr, n2hdr), NULL);
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	/* the lost answer, replayed: N1 */
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(a.hdr, idem), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "api_key"), n1);
	resp_free(&r);
	/* K still reads within its grace; N1 works and its use ends K */
	assert_int_equal(me_status(a.hdr), 200);
	assert_int_equal(me_status(n1hdr), 200);
	assert_int_equal(me_status(a.hdr), 401);
	/* N1, the current key, rotates */
	r = http_req("POST", "/api/v1/agents/me/api-key", NULL, HDRS(n1hdr), NULL);
	new_key_answer(&r, n2hdr, n2);
	resp_free(&r);
	assert_int_equal(me_status(n2hdr), 200);
	assert_int_equal(me_status(n1hdr), 401);
}

/* Issue 36, finding 7: study_url under the host rules of webhook URLs
 * (one validator, design.md §9.8): no single-label host, no special-use or
 * metadata name, no IPv6 form of an inward IPv4 address.  Each is refused
 * as a study_url (http or https) and as a webhook URL (https). */
static void
inward_names_refused(void **state)
{
	static const char *const bad[] = {
		"metadata/",
		"metadata.google.internal/computeMetadata/v1/",
		"intranet/",
		"instance-data/latest/",
		"db.internal/",
		"printer.local/",
		"router.lan/",
		"nas.home.arpa/",
		"x.test/",
		"x.invalid/",
		"x.onion/",
		"[::ffff:0:7f00:1]/",	/* IPv4-translated 127.0.0.1 */
		"[::ffff:0:a9fe:a9fe]/",	/* IPv4-translated 169.254.169.254 */
	};
	static const char *const scheme[] = { "http://", "https://" };
	struct test_agent a;
	struct test_user u;
	char body[1024];
	struct resp r;
	size_t i, k;

	(void)state;
	researcher(&u, 100000);
	agent_new(&a, "inward");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		for (k = 0; k < 2; k++) {
			snprintf(body, sizeof body, "{\"title\":\"t\",\"description\":\"d\","
			    "\"study_url\":\"%s%s\",\"reward_per_participant\":100,"
			    "\"max_participants\":1,\"screening_criteria\":\"c\","
			    "\"estimated_duration_minutes\":5}", scheme[k], bad[i]);
			r = post_as(u.hdr, body, "/api/v1/studies");
			if (r.status != 422)
				print_error("study_url %s%s: %ld %s\n", scheme[k], bad[i], r.status,
				    r.body ? r.body : "");
			assert_error(&r, 422, "VALIDATION_ERROR");
			assert_true(strncmp(jstr(&r, "detail"), "study_url: ", 11) == 0);
			resp_free(&r);
		}
		snprintf(body, sizeof body, "{\"url\":\"https://%s\",\"events\":[\"wallet.credited\"]}",
		    bad[i]);
		r = post_as(a.hdr, body, "/api/v1/webhooks");
		if (r.status != 422)
			print_error("webhook https://%s: %ld %s\n", bad[i], r.status,
			    r.body ? r.body : "");
		assert_error(&r, 422, "VALIDATION_ERROR");
		resp_free(&r);
	}
	/* a public name of two labels or more still passes, as do the
	 * second-level names reserved for examples */
	snprintf(body, sizeof body, "{\"title\":\"t\",\"description\":\"d\","
	    "\"study_url\":\"https://example.com/s\",\"reward_per_participant\":100,"
	    "\"max_participants\":1,\"screening_criteria\":\"c\","
	    "\"estimated_duration_minutes\":5}");
	r = post_as(u.hdr, body, "/api/v1/studies");
	assert_int_equal(r.status, 201);
	resp_free(&r);
}

/* The owner replaces a leaked key at once; no one else can, and an
 * unclaimed or unknown agent is not found. */
static void
owner_replaces_key(void **state)
{
	struct test_agent a, lone;
	struct test_user owner, other;
	char path[128], khdr[80], key[APIKEY_BUFSZ];
	struct resp r;

	(void)state;
	agent_claimed(&a, &owner, "leaky");
	user_login(&other, "other");
	snprintf(path, sizeof path, "/api/v1/account/agents/%s/api-key", a.id);
	/* another account: 404, and the key still works */
	r = http_req("POST", path, NULL, HDRS(other.hdr), NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	assert_int_equal(me_status(a.hdr), 200);
	/* the agent itself (an API key) cannot: this needs the owner's token */
	r = http_req("POST", path, NULL, HDRS(a.hdr), NULL);
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	/* an agent no one has claimed, an unknown id */
	agent_new(&lone, "lone");
	snprintf(path, sizeof path, "/api/v1/account/agents/%s/api-key", lone.id);
	r = http_req("POST", path, NULL, HDRS(owner.hdr), NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = http_req("POST", "/api/v1/account/agents/agt_0000000000000000/api-key", NULL,
	    HDRS(owner.hdr), NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	assert_int_equal(me_status(lone.hdr), 200);
	/* the owner: the old key is dead at once, the new one works */
	snprintf(path, sizeof path, "/api/v1/account/agents/%s/api-key", a.id);
	r = http_req("POST", path, NULL, HDRS(owner.hdr), NULL);
	new_key_answer(&r, khdr, key);
	resp_free(&r);
	assert_int_equal(me_status(a.hdr), 401);
	assert_int_equal(me_status(khdr), 200);
	assert_int_equal(me_status(a.hdr), 401);
}

/* Log in to an existing address by e-mail code; the token header into hdr
 * and the account id into id. */
static void
email_login(const char *email, char hdr[80], char id[IDS_BUFSZ])
{
	char body[512], code[8], ip[32];
	struct json_object *acc, *v;
	struct resp r;

	r = send_code(email);
	assert_int_equal(r.status, 202);
	resp_free(&r);
	mail_code(email, code);
	snprintf(body, sizeof body, "{\"provider\":\"email\",\"email\":\"%s\",\"code\":\"%s\"}",
	    email, code);
	r = http_req("POST", "/api/v1/auth/login", body, NULL, random_ip(ip));
	if (r.status != 200)
		print_error("login: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	snprintf(hdr, 80, "Authorization: Bearer %s", jstr(&r, "access_token"));
	assert_true(json_object_object_get_ex(r.json, "account", &acc));
	assert_true(json_object_object_get_ex(acc, "id", &v));
	snprintf(id, IDS_BUFSZ, "%s", json_object_get_string(v));
	resp_free(&r);
}

/* logout-all: every token of the account stops at once (a stolen one
 * included); the next login is served. */
static void
logout_all(void **state)
{
	struct test_user u, other;
	char second[80], third[80], id[IDS_BUFSZ];
	struct resp r;

	(void)state;
	user_login(&u, "lall");
	user_login(&other, "lall-other");
	email_login(u.email, second, id);	/* say, the one an attacker holds */
	assert_string_equal(id, u.id);
	assert_int_equal(account_status(u.hdr), 200);
	assert_int_equal(account_status(second), 200);
	r = http_req("POST", "/api/v1/auth/logout-all", NULL, HDRS(u.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_object_length(r.json), 1);
	assert_string_equal(jstr(&r, "status"), "ok");
	resp_free(&r);
	assert_int_equal(account_status(u.hdr), 401);
	assert_int_equal(account_status(second), 401);
	/* nothing of another account moved */
	assert_int_equal(account_status(other.hdr), 200);
	/* a revoked token cannot call it again */
	r = http_req("POST", "/api/v1/auth/logout-all", NULL, HDRS(second), NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	email_login(u.email, third, id);
	assert_string_equal(id, u.id);
	assert_int_equal(account_status(third), 200);
}

/* --- design.md §9.7 JSON ----------------------------------------------------------- */

static void
json_duplicate_and_nul_keys(void **state)
{
	static const char *const bad[] = {
		/* json-c would keep the last: a name the checks never saw */
		"{\"name\":\"honest\",\"name\":\"evil\"}",
		"{\"name\":\"honest\",\"n\\u0061me\":\"evil\"}",
		"{\"name\":\"a\",\"description\":null,\"description\":\"x\"}",
		/* at any depth */
		"{\"name\":\"a\",\"meta\":{\"x\":[{\"k\":1,\"k\":2}]}}",
		/* json-c would cut the key at the NUL: "name" */
		"{\"name\\u0000x\":\"evil\"}",
		"{\"name\":\"a\",\"meta\":{\"\\u0000\":1}}",
	};
	struct test_user u;
	char ip[32];
	struct resp r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		r = http_req("POST", "/api/v1/agents/register", bad[i], NULL, random_ip(ip));
		if (r.status != 400)
			print_error("%s: %ld %s\n", bad[i], r.status, r.body ? r.body : "");
		assert_error(&r, 400, "INVALID_JSON");
		resp_free(&r);
	}
	/* the same on an authenticated endpoint */
	user_login(&u, "json");
	r = http_req("POST", "/api/v1/auth/claim", "{\"claim_code\":\"x\",\"claim_code\":\"y\"}",
	    HDRS(u.hdr), NULL);
	assert_error(&r, 400, "INVALID_JSON");
	resp_free(&r);
	/* honest bodies: the same keys once each, nested equal keys in
	 * different objects, a NUL in a value is a value's business */
	r = http_req("POST", "/api/v1/agents/register",
	    "{\"name\":\"honest\",\"description\":\"one of each\"}", NULL, random_ip(ip));
	assert_int_equal(r.status, 201);
	resp_free(&r);
}

/* --- design.md §9.8 URLs ----------------------------------------------------------- */

static void
study_url_inside_network(void **state)
{
	static const char *const bad[] = {
		"http://169.254.169.254/latest/meta-data/",	/* cloud metadata */
		"http://localhost/admin",
		"http://LOCALHOST:8080/",
		"http://api.localhost/",
		"http://127.0.0.1:3306/",
		"http://10.0.0.5/",
		"http://192.168.1.1/",
		"http://172.16.0.1/",
		"http://0.0.0.0/",
		"http://[::1]/",
		"http://[::]/",
		"http://[fe80::1]/",
		"http://[fd00::1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://2130706433/",		/* 127.0.0.1 as one number */
		"http://0x7f000001/",
		"http://0177.0.0.1/",
		"http://127.1/",
		"https://user:pw@survey.example.org/",
		"https://survey.example.org@169.254.169.254/",
	};
	struct test_user u;
	char body[4096], id[IDS_BUFSZ];
	struct resp r;
	size_t i;

	(void)state;
	researcher(&u, 100000);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(body, sizeof body, "{\"title\":\"t\",\"description\":\"d\",\"study_url\":"
		    "\"%s\",\"reward_per_participant\":100,\"max_participants\":1,"
		    "\"screening_criteria\":\"c\",\"estimated_duration_minutes\":5}", bad[i]);
		r = post_as(u.hdr, body, "/api/v1/studies");
		if (r.status != 422)
			print_error("%s: %ld %s\n", bad[i], r.status, r.body ? r.body : "");
		assert_error(&r, 422, "VALIDATION_ERROR");
		assert_true(strncmp(jstr(&r, "detail"), "study_url: ", 11) == 0);
		resp_free(&r);
	}
	/* 2049 bytes */
	{
		char url[2100];

		memset(url, 'a', sizeof url);
		memcpy(url, "https://survey.example.org/", 27);
		url[2049] = '\0';
		snprintf(body, sizeof body, "{\"title\":\"t\",\"description\":\"d\",\"study_url\":"
		    "\"%s\",\"reward_per_participant\":100,\"max_participants\":1,"
		    "\"screening_criteria\":\"c\",\"estimated_duration_minutes\":5}", url);
		r = post_as(u.hdr, body, "/api/v1/studies");
		assert_error(&r, 422, "VALIDATION_ERROR");
		assert_true(strncmp(jstr(&r, "detail"), "study_url: ", 11) == 0);
		resp_free(&r);
	}
	/* honest: a public host name, a public address */
	study_new(&u, id, 100, 1, NULL);
	snprintf(body, sizeof body, "{\"title\":\"t\",\"description\":\"d\",\"study_url\":"
	    "\"http://93.184.216.34/s?id=1\",\"reward_per_participant\":100,\"max_participants\":1,"
	    "\"screening_criteria\":\"c\",\"estimated_duration_minutes\":5}");
	r = post_as(u.hdr, body, "/api/v1/studies");
	assert_int_equal(r.status, 201);
	assert_string_equal(jstr(&r, "study_url"), "http://93.184.216.34/s?id=1");
	resp_free(&r);
}

/* --- design.md §9.9 headers (dev nginx; the production files: check-nginx.sh) ------ */

static void
headers_on_every_answer(void **state)
{
	char big[70 * 1024], v[128];
	struct test_agent a;
	struct resp r[7];
	size_t i;

	(void)state;
	agent_new(&a, "hdr");
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	r[0] = http_get("/api/v1/health", NULL);			/* the pool, 200 */
	r[1] = http_get("/api/v1/agents/me", HDRS(a.hdr));		/* the pool, 200 */
	r[2] = http_get("/api/v1/no/such/thing", NULL);		/* the pool, 404 */
	r[3] = http_post("/api/v1/agents/register", "{\"name\":1,\"name\":2}", NULL);	/* 400 */
	r[4] = http_post("/api/v1/profile/bio", big, HDRS(a.hdr));	/* nginx, 413 */
	r[5] = http_get("/api/v1", NULL);				/* nginx, 404 */
	r[6] = http_req("TRACE", "/api/v1/health", NULL, NULL, NULL);	/* nginx, 405 */
	assert_int_equal(r[0].status, 200);
	assert_int_equal(r[1].status, 200);
	assert_error(&r[2], 404, "NOT_FOUND");
	assert_error(&r[3], 400, "INVALID_JSON");
	assert_error(&r[4], 413, "PAYLOAD_TOO_LARGE");
	assert_error(&r[5], 404, "NOT_FOUND");
	assert_error(&r[6], 405, "METHOD_NOT_ALLOWED");
	for (i = 0; i < sizeof r / sizeof r[0]; i++) {
		if (resp_header(&r[i], "X-Content-Type-Options", v, sizeof v) == NULL)
			fail_msg("answer %zu (%ld): no X-Content-Type-Options", i, r[i].status);
		assert_string_equal(v, "nosniff");
		if (resp_header(&r[i], "Cache-Control", v, sizeof v) == NULL)
			fail_msg("answer %zu (%ld): no Cache-Control", i, r[i].status);
		assert_string_equal(v, "no-store");
		/* plain HTTP: HSTS means nothing here and is not sent */
		assert_null(resp_header(&r[i], "Strict-Transport-Security", v, sizeof v));
		/* exactly one of each (nginx adds none to the pool's answers) */
		assert_null(strstr(strstr(r[i].headers, "nosniff") + 1, "nosniff"));
		resp_free(&r[i]);
	}
}

/* --- design.md §9.11 identity-provider e-mail -------------------------------------- */

/* A signed ID token of provider iss for sub, with email and an
 * email_verified claim written verbatim (NULL: none). */
static char *
idp_token(const char *iss, const char *sub, const char *email, const char *verified)
{
	struct jwt_claims c;
	char *p, *t, *q, *out;
	size_t n;

	jwt_claims_dev(&c, sub, time(NULL));
	c.iss = iss;
	c.email = email;
	c.email_verified = verified != NULL ? 1 : -1;
	assert_non_null(p = jwt_payload(&c));
	if (verified != NULL) {
		/* "email_verified":true -> the verbatim value */
		assert_non_null(q = strstr(p, "\"email_verified\":true"));
		n = strlen(p) + strlen(verified) + 1;
		assert_non_null(out = malloc(n));
		snprintf(out, n, "%.*s\"email_verified\":%s%s", (int)(q - p), p, verified,
		    q + strlen("\"email_verified\":true"));
		free(p);
		p = out;
	}
	t = jwt_sign(rsa_pem, "RS256", "dev-rsa", p);
	free(p);
	assert_non_null(t);
	return t;
}

/* Log in with an ID token; asserts 200; the account id and e-mail ("" for
 * none) into id and email. */
static void
idp_login(const char *provider, const char *token, char id[IDS_BUFSZ], char email[256])
{
	struct json_object *acc, *v;
	char body[16384];
	struct resp r;

	snprintf(body, sizeof body, "{\"provider\":\"%s\",\"token\":\"%s\"}", provider, token);
	r = http_post("/api/v1/auth/login", body, NULL);
	if (r.status != 200)
		print_error("idp login: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	assert_true(json_object_object_get_ex(r.json, "account", &acc));
	assert_true(json_object_object_get_ex(acc, "id", &v));
	snprintf(id, IDS_BUFSZ, "%s", json_object_get_string(v));
	email[0] = '\0';
	if (json_object_object_get_ex(acc, "email", &v) && v != NULL)
		snprintf(email, 256, "%s", json_object_get_string(v));
	resp_free(&r);
}


/* The string "true" is not a verified address: the victim's account is
 * not joined, even at the provider trusted to link. */
static void
idp_string_true_does_not_link(void **state)
{
	struct test_user victim;
	char sub[64], id[IDS_BUFSZ], email[256], hdr[80], again[IDS_BUFSZ], *t;

	(void)state;
	user_login(&victim, "victim");
	sub_new(sub, sizeof sub, "strtrue");
	t = idp_token("arps-dev-idp", sub, victim.email, "\"true\"");
	idp_login("dev", t, id, email);
	free(t);
	assert_string_not_equal(id, victim.id);
	assert_string_equal(email, "");
	/* the victim's e-mail login still reaches the victim's account */
	email_login(victim.email, hdr, again);
	assert_string_equal(again, victim.id);
	/* honest: the boolean true at the trusted provider links */
	sub_new(sub, sizeof sub, "booltrue");
	t = idp_token("arps-dev-idp", sub, victim.email, "true");
	idp_login("dev", t, id, email);
	free(t);
	assert_string_equal(id, victim.id);
	assert_string_equal(email, victim.email);
}

/* A provider without link_email (dev2): a verified address at that
 * provider gets an account of its own without the address, and a login by
 * e-mail code to the address reaches the e-mail account, never that one. */
static void
idp_without_link_email(void **state)
{
	struct test_user victim;
	char sub[64], id[IDS_BUFSZ], id2[IDS_BUFSZ], email[256], hdr[80], got[IDS_BUFSZ];
	char fresh[128], *t;

	(void)state;
	/* an existing e-mail account: not joined */
	user_login(&victim, "victim2");
	sub_new(sub, sizeof sub, "nolink");
	t = idp_token("arps-dev2-idp", sub, victim.email, "true");
	idp_login("dev2", t, id, email);
	assert_string_not_equal(id, victim.id);
	assert_string_equal(email, "");
	/* the same identity again: the same account of its own */
	idp_login("dev2", t, id2, email);
	free(t);
	assert_string_equal(id2, id);
	email_login(victim.email, hdr, got);
	assert_string_equal(got, victim.id);
	/* an address no account has yet: the identity does not take it, the
	 * first e-mail login to it makes a separate account */
	uniq_email(fresh, sizeof fresh, "unclaimed");
	sub_new(sub, sizeof sub, "nolink2");
	t = idp_token("arps-dev2-idp", sub, fresh, "true");
	idp_login("dev2", t, id, email);
	free(t);
	assert_string_equal(email, "");
	email_login(fresh, hdr, got);
	assert_string_not_equal(got, id);
	{
		struct resp r = http_get("/api/v1/account", HDRS(hdr));

		assert_int_equal(r.status, 200);
		assert_string_equal(jstr(&r, "email"), fresh);
		resp_free(&r);
	}
	/* a token of dev2 is not one of dev (issuers differ) */
	sub_new(sub, sizeof sub, "cross");
	t = idp_token("arps-dev2-idp", sub, NULL, NULL);
	{
		char body[16384];
		struct resp r;

		snprintf(body, sizeof body, "{\"provider\":\"dev\",\"token\":\"%s\"}", t);
		r = http_post("/api/v1/auth/login", body, NULL);
		assert_error(&r, 401, "INVALID_TOKEN");
		resp_free(&r);
	}
	free(t);
}

static int
group_setup(void **state)
{
	const char *var = getenv("ARPS_VAR");

	(void)state;
	if (var == NULL) {
		fprintf(stderr, "ARPS_VAR is not set\n");
		return -1;
	}
	snprintf(rsa_pem, sizeof rsa_pem, "%s/idp/dev-rsa.pem", var);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_rotation),
		cmocka_unit_test(key_grace_cannot_rotate),
		cmocka_unit_test(owner_replaces_key),
		cmocka_unit_test(logout_all),
		cmocka_unit_test(json_duplicate_and_nul_keys),
		cmocka_unit_test(study_url_inside_network),
		cmocka_unit_test(inward_names_refused),
		cmocka_unit_test(headers_on_every_answer),
		cmocka_unit_test(idp_string_true_does_not_link),
		cmocka_unit_test(idp_without_link_email),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_security", tests, group_setup, NULL);
}
