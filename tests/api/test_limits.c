/*
 * The abuse limits of design.md §9.1-9.4, each shown as the attack (the
 * attacker's sequence, its answers counted exactly), then the honest
 * client still served.  Requests whose client address matters go through
 * the test-only FastCGI client (tests/api/fcgi_client.h), which sets
 * X-Real-IP as nginx would: the only way to be many hosts of one IPv6 /64.
 * Every test uses networks of its own (random prefixes), so the tests are
 * independent of each other and of the other suites.
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

#include "tests/api/fcgi_client.h"
#include "tests/api/flows.h"

/* A random IPv6 /64 of the documentation prefix 2001:db8::/32, as its
 * first four groups ("2001:db8:x:y"). */
static void
net64(char *buf, size_t n)
{
	snprintf(buf, n, "2001:db8:%x:%x", randombytes_uniform(0x10000), randombytes_uniform(0x10000));
}

/* Host number h of the /64 net: a different address every time. */
static const char *
host64(char *buf, size_t n, const char *net, unsigned h)
{
	snprintf(buf, n, "%s:%x:%x:%x:%x", net, randombytes_uniform(0x10000), h >> 16 & 0xffff,
	    h & 0xffff, randombytes_uniform(0x10000));
	return buf;
}

/* A random IPv4 client of its own (TEST-NET-2/3 and beyond: not loopback). */
static const char *
ip4(char *buf, size_t n)
{
	uint32_t x = randombytes_random();

	snprintf(buf, n, "100.%u.%u.%u", 64 + (x >> 16 & 63), x >> 8 & 255, (x & 253) + 1);
	return buf;
}

/* A random well-formed Idempotency-Key for a request without credential. */
static const char *
idem_hdr(char *buf, size_t n)
{
	unsigned char raw[16];
	char hex[33];

	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(hex, sizeof hex, raw, sizeof raw);
	snprintf(buf, n, "Idempotency-Key: %s", hex);
	return buf;
}

static void
random_claim(char out[CLAIM_BUFSZ])
{
	size_t i;

	for (i = 0; i < CLAIM_LEN; i++)
		out[i] = CLAIM_ALPHABET[randombytes_uniform(32)];
	out[CLAIM_LEN] = '\0';
}

/* Assert a 429 RATE_LIMITED with a Retry-After within the hour. */
static void
assert_limited(const struct resp *r)
{
	char ra[16];

	assert_error(r, 429, "RATE_LIMITED");
	assert_non_null(resp_header(r, "Retry-After", ra, sizeof ra));
	assert_true(atoi(ra) >= 1 && atoi(ra) <= 3600);
}

static struct resp
send_code_from(const char *ip, const char *email)
{
	char body[700];

	snprintf(body, sizeof body, "{\"email\":\"%s\"}", email);
	return fcgi_req(ip, "POST", "/api/v1/auth/email/send-code", body, NULL);
}

static struct resp
login_from(const char *ip, const char *email, const char *code)
{
	char body[800];

	snprintf(body, sizeof body, "{\"provider\":\"email\",\"email\":\"%s\",\"code\":\"%s\"}",
	    email, code);
	return fcgi_req(ip, "POST", "/api/v1/auth/login", body, NULL);
}

static struct resp
claim_from(const char *ip, const struct test_user *u, const char *code)
{
	char body[64];

	snprintf(body, sizeof body, "{\"claim_code\":\"%s\"}", code);
	return fcgi_req(ip, "POST", "/api/v1/auth/claim", body, HDRS(u->hdr));
}


/* The FastCGI client itself: the pool answers it as it answers nginx. */
static void
fcgi_client_works(void **state)
{
	char ip[64], ra[16];
	struct resp r;

	(void)state;
	r = fcgi_req(ip4(ip, sizeof ip), "GET", "/api/v1/health", NULL, NULL);
	assert_int_equal(r.status, 200);
	assert_non_null(resp_header(&r, "Content-Type", ra, sizeof ra));
	resp_free(&r);
	r = fcgi_req(ip, "GET", "/api/v1/agents/me", NULL, HDRS("X-API-Key: arps_live_nope"));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
}

/*
 * design.md §9.1: 30 registrations from 30 hosts of one IPv6 /64 are one client:
 * exactly 10 are served (register_per_ip_hour), 20 answer 429.  Another
 * /64 is served.  An IPv4-mapped address is its IPv4 client.
 */
static void
register_30_from_one_64(void **state)
{
	char net[32], ip[64], ip2[80], body[64];
	int n201 = 0, n429 = 0, i;
	struct resp r;

	(void)state;
	net64(net, sizeof net);
	for (i = 0; i < 30; i++) {
		snprintf(body, sizeof body, "{\"name\":\"v6 host %d\"}", i);
		r = fcgi_req(host64(ip, sizeof ip, net, (unsigned)i), "POST", "/api/v1/agents/register",
		    body, NULL);
		if (i < 10) {
			assert_int_equal(r.status, 201);
			assert_true(apikey_check(jstr(&r, "api_key")));
			n201++;
		} else {
			assert_limited(&r);
			assert_non_null(strstr(jstr(&r, "detail"), "per client network"));
			n429++;
		}
		resp_free(&r);
	}
	assert_int_equal(n201, 10);
	assert_int_equal(n429, 20);
	/* the honest client of the next /64 */
	net64(net, sizeof net);
	r = fcgi_req(host64(ip, sizeof ip, net, 1), "POST", "/api/v1/agents/register",
	    "{\"name\":\"neighbour\"}", NULL);
	assert_int_equal(r.status, 201);
	resp_free(&r);
	/* ::ffff:a.b.c.d counts as a.b.c.d */
	ip4(ip, sizeof ip);
	snprintf(ip2, sizeof ip2, "::ffff:%s", ip);
	for (i = 0; i < 10; i++) {
		r = fcgi_req(i % 2 ? ip : ip2, "POST", "/api/v1/agents/register", "{\"name\":\"v4\"}",
		    NULL);
		assert_int_equal(r.status, 201);
		resp_free(&r);
	}
	r = fcgi_req(ip2, "POST", "/api/v1/agents/register", "{\"name\":\"v4\"}", NULL);
	assert_limited(&r);
	resp_free(&r);
}

/*
 * design.md §9.3: 200 claim attempts with random codes from one account, from hosts
 * of one /64: exactly 10 answer 404, the other 190 answer 429.  Another
 * account of that network still claims (10 failures < 30); the attacking
 * account is refused even a right code for the hour.
 */
static void
claim_200_attempts(void **state)
{
	struct test_user att, honest;
	struct test_agent a, b;
	char net[32], ip[64], code[CLAIM_BUFSZ];
	int n404 = 0, n429 = 0, i;
	struct resp r;

	(void)state;
	user_login(&att, "claim-attacker");
	user_login(&honest, "claim-honest");
	agent_new(&a, "Target");
	agent_new(&b, "Honest");
	net64(net, sizeof net);
	for (i = 0; i < 200; i++) {
		do
			random_claim(code);
		while (strcmp(code, a.claim) == 0 || strcmp(code, b.claim) == 0);
		r = claim_from(host64(ip, sizeof ip, net, (unsigned)i), &att, code);
		if (i < 10) {
			assert_error(&r, 404, "NOT_FOUND");
			n404++;
		} else {
			assert_limited(&r);
			assert_non_null(strstr(jstr(&r, "detail"), "failed claims per account"));
			n429++;
		}
		resp_free(&r);
	}
	assert_int_equal(n404, 10);
	assert_int_equal(n429, 190);
	/* the attacker's account: refused even with a right code */
	r = claim_from(host64(ip, sizeof ip, net, 500), &att, a.claim);
	assert_limited(&r);
	resp_free(&r);
	/* an honest account of the same network is served */
	r = claim_from(host64(ip, sizeof ip, net, 501), &honest, b.claim);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "agent_id"), b.id);
	resp_free(&r);
	/* and the target agent was never claimed */
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_string_equal(jstr(&r, "status"), "unclaimed");
	resp_free(&r);
}

/*
 * design.md §9.3: 30 failed claims per client network: three accounts of one /64
 * fail 10 times each (30 x 404), then a fourth account of that network is
 * refused (429), right code or not; from another network it claims.
 */
static void
claim_failures_per_network(void **state)
{
	struct test_user u[4];
	struct test_agent a;
	char net[32], ip[64], code[CLAIM_BUFSZ];
	int n404 = 0, i, k;
	struct resp r;

	(void)state;
	for (k = 0; k < 4; k++)
		user_login(&u[k], "claim-net");
	agent_new(&a, "Net target");
	net64(net, sizeof net);
	for (k = 0; k < 3; k++)
		for (i = 0; i < 10; i++) {
			do
				random_claim(code);
			while (strcmp(code, a.claim) == 0);
			r = claim_from(host64(ip, sizeof ip, net, (unsigned)(k * 10 + i)), &u[k], code);
			assert_error(&r, 404, "NOT_FOUND");
			n404++;
			resp_free(&r);
		}
	assert_int_equal(n404, 30);
	r = claim_from(host64(ip, sizeof ip, net, 99), &u[3], "ZZZZZZZZ");
	assert_limited(&r);
	assert_non_null(strstr(jstr(&r, "detail"), "failed claims per client network"));
	resp_free(&r);
	r = claim_from(host64(ip, sizeof ip, net, 100), &u[3], a.claim);
	assert_limited(&r);
	resp_free(&r);
	net64(net, sizeof net);
	r = claim_from(host64(ip, sizeof ip, net, 1), &u[3], a.claim);
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

/*
 * design.md §9.3: a claim code expires 7 days after issue and then answers 404 like
 * an unknown one; POST /agents/me/claim-code issues a fresh one (the old
 * one stops working); a claimed agent gets 409 ALREADY_CLAIMED.
 */
static void
claim_code_lifetime(void **state)
{
	struct test_agent a;
	struct test_user u;
	char ip[64], body[64], old[CLAIM_BUFSZ], fresh[CLAIM_BUFSZ];
	struct json_object *v;
	time_t now = time(NULL);
	struct resp r;
	long long exp;

	(void)state;
	/* register answers the expiry: 7 days ahead */
	r = fcgi_req(ip4(ip, sizeof ip), "POST", "/api/v1/agents/register", "{\"name\":\"Expiring\"}",
	    NULL);
	assert_int_equal(r.status, 201);
	assert_true(json_object_object_get_ex(r.json, "claim_code_expires_at", &v));
	{
		struct tm tm;
		memset(&tm, 0, sizeof tm);
		assert_non_null(strptime(json_object_get_string(v), "%Y-%m-%dT%H:%M:%SZ", &tm));
		exp = (long long)timegm(&tm);
	}
	assert_true(exp >= now + 7 * 86400 - 5 && exp <= now + 7 * 86400 + 60);
	snprintf(a.id, sizeof a.id, "%s", jstr(&r, "agent_id"));
	snprintf(a.claim, sizeof a.claim, "%s", jstr(&r, "claim_code"));
	snprintf(a.hdr, sizeof a.hdr, "X-API-Key: %s", jstr(&r, "api_key"));
	resp_free(&r);
	user_login(&u, "expiry");
	/* seven days pass: the code is unknown */
	fixture("claim-code-expire %s", a.id);
	r = claim_from(ip4(ip, sizeof ip), &u, a.claim);
	assert_error(&r, 404, "NOT_FOUND");
	assert_string_equal(jstr(&r, "detail"), "unknown claim code");
	resp_free(&r);
	/* the agent asks for a fresh one */
	r = http_post("/api/v1/agents/me/claim-code", NULL, HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_true(claim_code_valid(jstr(&r, "claim_code")));
	assert_true(json_object_object_get_ex(r.json, "expires_at", &v));
	assert_true(json_object_is_type(v, json_type_string));
	snprintf(fresh, sizeof fresh, "%s", jstr(&r, "claim_code"));
	resp_free(&r);
	/* a second re-issue: the first fresh code stops working */
	snprintf(old, sizeof old, "%s", fresh);
	r = http_post("/api/v1/agents/me/claim-code", NULL, HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	snprintf(fresh, sizeof fresh, "%s", jstr(&r, "claim_code"));
	resp_free(&r);
	assert_string_not_equal(old, fresh);
	r = claim_from(ip4(ip, sizeof ip), &u, old);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = claim_from(ip4(ip, sizeof ip), &u, a.claim);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	r = claim_from(ip4(ip, sizeof ip), &u, fresh);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "agent_id"), a.id);
	resp_free(&r);
	/* claimed: no code any more */
	r = http_post("/api/v1/agents/me/claim-code", NULL, HDRS(a.hdr));
	assert_error(&r, 409, "ALREADY_CLAIMED");
	resp_free(&r);
	r = http_post("/api/v1/agents/me/claim-code", NULL, NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	snprintf(body, sizeof body, "{\"claim_code\":\"%s\"}", fresh);
	r = http_post("/api/v1/auth/claim", body, HDRS(u.hdr));
	assert_error(&r, 409, "ALREADY_CLAIMED");
	resp_free(&r);
}

/*
 * design.md §9.2: 50 logins with wrong codes for one address over 5 send-code
 * rounds.  Round 1: 10 x 401; its 5th wrong try burns the code, and the 5
 * tries after it find no live code, so they count for the network only.
 * Round 2: 5 x 401, the 5th being the address's 10th failure, then 429;
 * a new code does not reset the count: 35 x 429 in all, even the right
 * code of round 5 is refused.  A sixth code is refused (5 per address).
 * When the hour has passed, the right code logs in.
 */
static void
login_50_wrong_codes(void **state)
{
	char email[128], net[32], ip[64], code[8], bad[8];
	int n401 = 0, n429 = 0, round, i;
	struct resp r;

	(void)state;
	uniq_email(email, sizeof email, "guessed");
	net64(net, sizeof net);
	for (round = 0; round < 5; round++) {
		r = send_code_from(host64(ip, sizeof ip, net, (unsigned)round), email);
		assert_int_equal(r.status, 202);
		resp_free(&r);
		mail_code(email, code);
		wrong_code(bad, code);
		for (i = 0; i < 10; i++) {
			r = login_from(host64(ip, sizeof ip, net, (unsigned)(round * 10 + i)), email, bad);
			if (round == 0 || (round == 1 && i < 5)) {
				assert_error(&r, 401, "INVALID_CODE");
				n401++;
			} else {
				assert_limited(&r);
				assert_non_null(strstr(jstr(&r, "detail"), "failed logins per address"));
				n429++;
			}
			resp_free(&r);
		}
	}
	assert_int_equal(n401, 15);
	assert_int_equal(n429, 35);
	/* the right code of the fifth round, even from elsewhere: still 429 */
	r = login_from(ip4(ip, sizeof ip), email, code);
	assert_limited(&r);
	resp_free(&r);
	r = send_code_from(ip4(ip, sizeof ip), email);
	assert_limited(&r);
	assert_non_null(strstr(jstr(&r, "detail"), "login codes per address"));
	resp_free(&r);
	/* an hour passes (the code itself is still fresh: 10 minutes) */
	fixture("rate-events-age 3601");
	r = login_from(ip4(ip, sizeof ip), email, code);
	assert_int_equal(r.status, 200);
	assert_true(token_valid(jstr(&r, "access_token")));
	resp_free(&r);
}

/*
 * Issue 36, finding 5 (design.md §9.2): wrong codes count against the
 * address only while it has a live code, so no one locks an address out
 * without a code having been sent to it.  Ten wrong codes from ten
 * networks for an address that never asked for one: 10 x 401, and the
 * owner then asks for a code and logs in.  The spray stays held by the
 * network's limit: 30 such failures from one /64 (30 addresses), and the
 * 31st answers 429.
 */
static void
no_code_no_lockout(void **state)
{
	char email[128], net[32], ip[64], code[8];
	struct resp r;
	int i;

	(void)state;
	uniq_email(email, sizeof email, "sprayed");
	for (i = 0; i < 10; i++) {
		r = login_from(ip4(ip, sizeof ip), email, "123456");
		assert_error(&r, 401, "INVALID_CODE");
		resp_free(&r);
	}
	r = send_code_from(ip4(ip, sizeof ip), email);
	assert_int_equal(r.status, 202);
	resp_free(&r);
	mail_code(email, code);
	r = login_from(ip4(ip, sizeof ip), email, code);
	assert_int_equal(r.status, 200);
	assert_true(token_valid(jstr(&r, "access_token")));
	resp_free(&r);
	/* the spray from one network: held at 30 */
	net64(net, sizeof net);
	for (i = 0; i < 30; i++) {
		uniq_email(email, sizeof email, "spray");
		r = login_from(host64(ip, sizeof ip, net, (unsigned)i), email, "123456");
		assert_error(&r, 401, "INVALID_CODE");
		resp_free(&r);
	}
	uniq_email(email, sizeof email, "spray");
	r = login_from(host64(ip, sizeof ip, net, 99), email, "123456");
	assert_limited(&r);
	assert_non_null(strstr(jstr(&r, "detail"), "failed logins per client network"));
	resp_free(&r);
}

/*
 * design.md §9.2: the 10th wrong code burns the code even when it is not the
 * code's own 5th: 4 wrong, a new code, 5 wrong (the code's 5th burns it),
 * a new code, 1 wrong = the address's 10th: the right code is then gone
 * (and the address refused) - a new code never resets the count.
 */
static void
tenth_wrong_code_burns(void **state)
{
	char email[128], ip[64], code[8], bad[8];
	int i, tries[] = { 4, 5, 1 }, round;
	struct resp r;

	(void)state;
	uniq_email(email, sizeof email, "tenth");
	for (round = 0; round < 3; round++) {
		r = send_code_from(ip4(ip, sizeof ip), email);
		assert_int_equal(r.status, 202);
		resp_free(&r);
		mail_code(email, code);
		wrong_code(bad, code);
		for (i = 0; i < tries[round]; i++) {
			r = login_from(ip, email, bad);
			assert_error(&r, 401, "INVALID_CODE");
			resp_free(&r);
		}
	}
	r = login_from(ip, email, code);
	assert_limited(&r);
	resp_free(&r);
	/* after the hour the burnt code stays burnt: a new one is needed */
	fixture("rate-events-age 3601");
	r = login_from(ip, email, code);
	assert_error(&r, 401, "INVALID_CODE");
	resp_free(&r);
	r = send_code_from(ip, email);
	assert_int_equal(r.status, 202);
	resp_free(&r);
	mail_code(email, code);
	r = login_from(ip, email, code);
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

/*
 * design.md §9.2: at most 30 failed logins per client network: three addresses fail
 * 10 times each from one /64 (30 x 401), then a fourth address is refused
 * from that network, its right code included; from another it logs in.
 */
static void
login_failures_per_network(void **state)
{
	char email[4][128], net[32], ip[64], code[8], bad[4][8];
	int n401 = 0, i, k;
	struct resp r;

	(void)state;
	net64(net, sizeof net);
	for (k = 0; k < 4; k++) {
		uniq_email(email[k], sizeof email[k], "netfail");
		r = send_code_from(host64(ip, sizeof ip, net, (unsigned)k), email[k]);
		assert_int_equal(r.status, 202);
		resp_free(&r);
		mail_code(email[k], code);
		wrong_code(bad[k], code);
	}
	for (k = 0; k < 3; k++)
		for (i = 0; i < 10; i++) {
			r = login_from(host64(ip, sizeof ip, net, (unsigned)(k * 10 + i)), email[k],
			    bad[k]);
			assert_error(&r, 401, "INVALID_CODE");
			n401++;
			resp_free(&r);
		}
	assert_int_equal(n401, 30);
	r = login_from(host64(ip, sizeof ip, net, 98), email[3], bad[3]);
	assert_limited(&r);
	assert_non_null(strstr(jstr(&r, "detail"), "failed logins per client network"));
	resp_free(&r);
	r = login_from(host64(ip, sizeof ip, net, 99), email[3], code);
	assert_limited(&r);
	resp_free(&r);
	net64(net, sizeof net);
	r = login_from(host64(ip, sizeof ip, net, 1), email[3], code);
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

/* design.md §9.2: send-code: 20 per client network per rolling hour (25 addresses
 * from one /64: 20 x 202, 5 x 429); another network is served. */
static void
send_code_per_network(void **state)
{
	char email[128], net[32], ip[64];
	int n202 = 0, n429 = 0, i;
	struct resp r;

	(void)state;
	net64(net, sizeof net);
	for (i = 0; i < 25; i++) {
		uniq_email(email, sizeof email, "netsend");
		r = send_code_from(host64(ip, sizeof ip, net, (unsigned)i), email);
		if (i < 20) {
			assert_int_equal(r.status, 202);
			n202++;
		} else {
			assert_limited(&r);
			assert_non_null(strstr(jstr(&r, "detail"), "login codes per client network"));
			n429++;
		}
		resp_free(&r);
	}
	assert_int_equal(n202, 20);
	assert_int_equal(n429, 5);
	net64(net, sizeof net);
	r = send_code_from(host64(ip, sizeof ip, net, 1), email);
	assert_int_equal(r.status, 202);
	resp_free(&r);
}

/*
 * design.md §9.4: without a credential the Idempotency-Key must be 22 to 255
 * characters of [A-Za-z0-9_-]: a short guessable key
 * (`register-1`) is refused with 422 on register, send-code and login.
 */
static void
idem_key_form(void **state)
{
	static const struct { const char *key; long status; } rows[] = {
		{ "register-1", 422 },
		{ "abcdefghijklmnopqrstu", 422 },		/* 21 */
		{ "abcdefghijklmnopqrstuv", 201 },		/* 22 */
		{ "abcdefghij.klmnopqrstuvwxyz", 422 },	/* '.' */
		{ "abcdefghij klmnopqrstuvwxyz", 422 },	/* ' ' */
		{ "abcdefghij~klmnopqrstuvwxyz", 422 },
		{ "0b8f3c52-6d5e-4f0a-9d8e-2a7c1e4b9f30", 201 },	/* a UUID */
		{ "A_b-C_d-E_f-G_h-I_j-K_l", 201 },
	};
	char hdr[400], ip[64], key[300];
	struct resp r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		snprintf(hdr, sizeof hdr, "Idempotency-Key: %s", rows[i].key);
		r = fcgi_req(ip4(ip, sizeof ip), "POST", "/api/v1/agents/register",
		    "{\"name\":\"Keyed\"}", HDRS(hdr));
		if (r.status != rows[i].status)
			print_error("row %zu: %s\n", i, r.body ? r.body : "");
		if (rows[i].status == 422) {
			assert_error(&r, 422, "VALIDATION_ERROR");
			assert_non_null(strstr(jstr(&r, "detail"), "Idempotency-Key"));
		} else
			assert_int_equal(r.status, rows[i].status);
		resp_free(&r);
	}
	/* 255 is the longest */
	memset(key, 'k', 256);
	key[256] = '\0';
	snprintf(hdr, sizeof hdr, "Idempotency-Key: %s", key);
	r = fcgi_req(ip4(ip, sizeof ip), "POST", "/api/v1/agents/register", "{\"name\":\"L\"}",
	    HDRS(hdr));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	key[255] = '\0';
	snprintf(hdr, sizeof hdr, "Idempotency-Key: %s", key);
	r = fcgi_req(ip, "POST", "/api/v1/agents/register", "{\"name\":\"L\"}", HDRS(hdr));
	assert_int_equal(r.status, 201);
	resp_free(&r);
	/* send-code and login: the same rule */
	r = fcgi_req(ip4(ip, sizeof ip), "POST", "/api/v1/auth/email/send-code",
	    "{\"email\":\"short-key@example.org\"}", HDRS("Idempotency-Key: send-1"));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = fcgi_req(ip, "POST", "/api/v1/auth/login",
	    "{\"provider\":\"email\",\"email\":\"short-key@example.org\",\"code\":\"123456\"}",
	    HDRS("Idempotency-Key: login-1"));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	/* with a credential a short key is still the caller's own business */
	{
		struct test_agent a;

		agent_new(&a, "Short keys");
		r = http_post("/api/v1/agents/me/claim-code", NULL, HDRS(a.hdr, "Idempotency-Key: cc-1"));
		assert_int_equal(r.status, 200);
		snprintf(key, sizeof key, "%s", r.body);
		resp_free(&r);
		r = http_post("/api/v1/agents/me/claim-code", NULL, HDRS(a.hdr, "Idempotency-Key: cc-1"));
		assert_int_equal(r.status, 200);
		assert_string_equal(r.body, key);
		assert_non_null(resp_header(&r, "Idempotent-Replayed", hdr, sizeof hdr));
		resp_free(&r);
	}
}

/*
 * design.md §9.4: a replayed key: a second client sends the first client's
 * request with its Idempotency-Key.  Scoped to the client network, the key
 * replays nothing to another network: the second client gets its own
 * agent, never the first one's api_key; the first client (any host of its
 * /64) still gets its replay.  The same for login: no token leaks.
 */
static void
idem_scope_is_the_network(void **state)
{
	char n1[32], n2[32], ip[64], hdr[80], key1[APIKEY_BUFSZ], first[2048], code[8], email[128];
	char body[300], rh[16];
	struct resp r;

	(void)state;
	net64(n1, sizeof n1);
	net64(n2, sizeof n2);
	idem_hdr(hdr, sizeof hdr);
	r = fcgi_req(host64(ip, sizeof ip, n1, 1), "POST", "/api/v1/agents/register",
	    "{\"name\":\"Victim\"}", HDRS(hdr));
	assert_int_equal(r.status, 201);
	snprintf(key1, sizeof key1, "%s", jstr(&r, "api_key"));
	snprintf(first, sizeof first, "%s", r.body);
	resp_free(&r);
	/* the attacker, on another network, with the same key and body */
	r = fcgi_req(host64(ip, sizeof ip, n2, 1), "POST", "/api/v1/agents/register",
	    "{\"name\":\"Victim\"}", HDRS(hdr));
	assert_int_equal(r.status, 201);
	assert_null(resp_header(&r, "Idempotent-Replayed", rh, sizeof rh));
	assert_string_not_equal(jstr(&r, "api_key"), key1);
	assert_null(strstr(r.body, key1));
	resp_free(&r);
	/* the first client, from another host of its /64: its replay */
	r = fcgi_req(host64(ip, sizeof ip, n1, 2), "POST", "/api/v1/agents/register",
	    "{\"name\":\"Victim\"}", HDRS(hdr));
	assert_int_equal(r.status, 201);
	assert_string_equal(r.body, first);
	assert_non_null(resp_header(&r, "Idempotent-Replayed", rh, sizeof rh));
	assert_string_equal(rh, "true");
	resp_free(&r);
	/* login: the victim logs in with a key; the attacker's copy gets no token */
	uniq_email(email, sizeof email, "idem-login");
	r = send_code_from(host64(ip, sizeof ip, n1, 3), email);
	assert_int_equal(r.status, 202);
	resp_free(&r);
	mail_code(email, code);
	idem_hdr(hdr, sizeof hdr);
	snprintf(body, sizeof body, "{\"provider\":\"email\",\"email\":\"%s\",\"code\":\"%s\"}",
	    email, code);
	r = fcgi_req(host64(ip, sizeof ip, n1, 4), "POST", "/api/v1/auth/login", body, HDRS(hdr));
	assert_int_equal(r.status, 200);
	assert_true(token_valid(jstr(&r, "access_token")));
	resp_free(&r);
	r = fcgi_req(host64(ip, sizeof ip, n2, 4), "POST", "/api/v1/auth/login", body, HDRS(hdr));
	assert_error(&r, 401, "INVALID_CODE");
	assert_null(resp_header(&r, "Idempotent-Replayed", rh, sizeof rh));
	resp_free(&r);
}

/*
 * A 429 is not kept for replay (design.md §6.16; found by Schemathesis:
 * a replayed 429 lost its Retry-After, and replaying it refused the
 * retry for 24 hours): the same key again runs again, with Retry-After.
 */
static void
idem_429_not_replayed(void **state)
{
	struct test_agent a;
	char hdr[64];
	struct resp r;
	int i;

	(void)state;
	agent_new(&a, "idem-429");
	r = http_post("/api/v1/heartbeat", NULL, HDRS(a.hdr, "Idempotency-Key: hb-1"));
	assert_int_equal(r.status, 200);
	resp_free(&r);
	for (i = 0; i < 2; i++) {
		r = http_post("/api/v1/heartbeat", NULL, HDRS(a.hdr, "Idempotency-Key: hb-2"));
		assert_error(&r, 429, "RATE_LIMITED");
		assert_non_null(resp_header(&r, "Retry-After", hdr, sizeof hdr));
		assert_true(atoi(hdr) > 0);
		assert_null(resp_header(&r, "Idempotent-Replayed", hdr, sizeof hdr));
		resp_free(&r);
	}
	/* a 200 is still replayed */
	r = http_post("/api/v1/heartbeat", NULL, HDRS(a.hdr, "Idempotency-Key: hb-1"));
	assert_int_equal(r.status, 200);
	assert_non_null(resp_header(&r, "Idempotent-Replayed", hdr, sizeof hdr));
	resp_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fcgi_client_works),
		cmocka_unit_test(register_30_from_one_64),
		cmocka_unit_test(claim_200_attempts),
		cmocka_unit_test(claim_failures_per_network),
		cmocka_unit_test(claim_code_lifetime),
		cmocka_unit_test(login_50_wrong_codes),
		cmocka_unit_test(tenth_wrong_code_burns),
		cmocka_unit_test(no_code_no_lockout),
		cmocka_unit_test(login_failures_per_network),
		cmocka_unit_test(send_code_per_network),
		cmocka_unit_test(idem_key_form),
		cmocka_unit_test(idem_scope_is_the_network),
		cmocka_unit_test(idem_429_not_replayed),
	};

	if (sodium_init() < 0)
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
