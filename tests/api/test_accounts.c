/* Accounts and login: e-mail codes, tokens, logout, claim, the account view,
 * and secrets at rest. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "tests/api/flows.h"

/* Each request from a client network of its own: the per-network limits
 * of design.md §9.2 are tested in test_limits. */

static struct resp
login(const char *email, const char *code)
{
	char body[400], ip[32];

	snprintf(body, sizeof body, "{\"provider\":\"email\",\"email\":\"%s\",\"code\":\"%s\"}",
	    email, code);
	return http_req("POST", "/api/v1/auth/login", body, NULL, random_ip(ip));
}

/* `fee_bps = N` of the stack's config file (tools/dev.sh writes it); -1 when
 * absent. */
static long long
config_fee_bps(void)
{
	const char *path = getenv("ARPS_CONFIG");
	char line[256];
	long long v = -1;
	FILE *f;

	assert_non_null(path);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, " fee_bps = %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void
email_login(void **state)
{
	struct json_object *acc, *roles, *v;
	char email[128], code[8], bad[8];
	struct resp r;

	(void)state;
	uniq_email(email, sizeof email, "login");
	r = send_code(email);
	assert_int_equal(r.status, 202);
	assert_string_equal(jstr(&r, "status"), "sent");
	resp_free(&r);
	mail_code(email, code);
	wrong_code(bad, code);
	r = login(email, bad);
	assert_error(&r, 401, "INVALID_CODE");
	resp_free(&r);
	r = login(email, code);
	assert_int_equal(r.status, 200);
	assert_true(token_valid(jstr(&r, "access_token")));
	assert_string_equal(jstr(&r, "token_type"), "bearer");
	assert_true(json_object_object_get_ex(r.json, "account", &acc));
	assert_true(json_object_object_get_ex(acc, "id", &v));
	assert_true(ids_valid(IDS_ACCOUNT, json_object_get_string(v)));
	assert_true(json_object_object_get_ex(acc, "email", &v));
	assert_string_equal(json_object_get_string(v), email);
	assert_true(json_object_object_get_ex(acc, "roles", &roles));
	assert_int_equal(json_object_array_length(roles), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(roles, 0)), "researcher");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(roles, 1)), "participant");
	resp_free(&r);
	/* a code works once */
	r = login(email, code);
	assert_error(&r, 401, "INVALID_CODE");
	resp_free(&r);
}

static void
same_account_twice(void **state)
{
	char email[128], upper[128], code[8], id1[32];
	struct json_object *acc, *v;
	struct resp r;
	size_t i;

	(void)state;
	uniq_email(email, sizeof email, "twice");
	r = send_code(email);
	resp_free(&r);
	mail_code(email, code);
	r = login(email, code);
	assert_int_equal(r.status, 200);
	json_object_object_get_ex(r.json, "account", &acc);
	json_object_object_get_ex(acc, "id", &v);
	snprintf(id1, sizeof id1, "%s", json_object_get_string(v));
	resp_free(&r);
	/* the address is case-insensitive */
	for (i = 0; email[i]; i++)
		upper[i] = (char)(email[i] >= 'a' && email[i] <= 'z' ? email[i] - 32 : email[i]);
	upper[i] = '\0';
	r = send_code(upper);
	resp_free(&r);
	mail_code(email, code);
	r = login(upper, code);
	assert_int_equal(r.status, 200);
	json_object_object_get_ex(r.json, "account", &acc);
	json_object_object_get_ex(acc, "id", &v);
	assert_string_equal(json_object_get_string(v), id1);
	resp_free(&r);
}

static void
only_latest_code(void **state)
{
	char email[128], c1[8], c2[8];
	struct resp r;

	(void)state;
	uniq_email(email, sizeof email, "latest");
	r = send_code(email);
	resp_free(&r);
	mail_code(email, c1);
	usleep(20000);
	r = send_code(email);
	resp_free(&r);
	mail_code(email, c2);
	if (strcmp(c1, c2) != 0) {
		r = login(email, c1);
		assert_error(&r, 401, "INVALID_CODE");
		resp_free(&r);
	}
	r = login(email, c2);
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

static void
five_wrong_tries_burn(void **state)
{
	char email[128], code[8], bad[8];
	struct resp r;
	int i;

	(void)state;
	uniq_email(email, sizeof email, "burn");
	r = send_code(email);
	resp_free(&r);
	mail_code(email, code);
	wrong_code(bad, code);
	for (i = 0; i < 5; i++) {
		r = login(email, bad);
		assert_error(&r, 401, "INVALID_CODE");
		resp_free(&r);
	}
	r = login(email, code);
	assert_error(&r, 401, "INVALID_CODE");
	resp_free(&r);
}

static void
expired_code(void **state)
{
	char email[128], code[8];
	struct resp r;

	(void)state;
	uniq_email(email, sizeof email, "expired");
	r = send_code(email);
	resp_free(&r);
	mail_code(email, code);
	/* ten minutes pass */
	fixture("login-code-expire %s", email);
	r = login(email, code);
	assert_error(&r, 401, "INVALID_CODE");
	resp_free(&r);
}

static void
code_rate_limit(void **state)
{
	char email[128], ra[16];
	struct resp r;
	int i;

	(void)state;
	uniq_email(email, sizeof email, "limit");
	for (i = 0; i < 5; i++) {
		r = send_code(email);
		assert_int_equal(r.status, 202);
		resp_free(&r);
	}
	r = send_code(email);
	assert_error(&r, 429, "RATE_LIMITED");
	assert_non_null(resp_header(&r, "Retry-After", ra, sizeof ra));
	assert_true(atoi(ra) > 0 && atoi(ra) <= 3600);
	resp_free(&r);
}

static void
login_bad_input(void **state)
{
	static const struct { const char *body; long status; const char *code; } rows[] = {
		{ "{\"email\":\"not-an-address\"}", 422, "VALIDATION_ERROR" },
		{ "{}", 422, "VALIDATION_ERROR" },
		{ "{\"email\":5}", 422, "VALIDATION_ERROR" },
	};
	static const struct { const char *body; long status; const char *code; } lrows[] = {
		{ "{}", 422, "VALIDATION_ERROR" },
		{ "{\"provider\":\"email\"}", 422, "VALIDATION_ERROR" },
		{ "{\"provider\":\"email\",\"email\":\"a@example.org\"}", 422, "VALIDATION_ERROR" },
		{ "{\"provider\":\"email\",\"email\":\"a@example.org\",\"code\":\"12ab56\"}", 401, "INVALID_CODE" },
		{ "{\"provider\":\"email\",\"email\":\"nobody-x@example.org\",\"code\":\"123456\"}", 401, "INVALID_CODE" },
		{ "{\"provider\":\"myspace\",\"token\":\"x.y.z\"}", 422, "VALIDATION_ERROR" },
		{ "{\"provider\":7}", 422, "VALIDATION_ERROR" },
		{ "not json", 400, "INVALID_JSON" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct resp r = http_post("/api/v1/auth/email/send-code", rows[i].body, NULL);
		assert_error(&r, rows[i].status, rows[i].code);
		resp_free(&r);
	}
	for (i = 0; i < sizeof lrows / sizeof lrows[0]; i++) {
		struct resp r = http_post("/api/v1/auth/login", lrows[i].body, NULL);
		if (r.status != lrows[i].status)
			print_error("row %zu: %s\n", i, r.body ? r.body : "");
		assert_error(&r, lrows[i].status, lrows[i].code);
		resp_free(&r);
	}
}

static void
account_and_logout(void **state)
{
	struct json_object *agents, *ag, *v;
	struct test_agent a;
	struct test_user u;
	struct resp r;

	(void)state;
	agent_claimed(&a, &u, "Mine");
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "id"), u.id);
	assert_string_equal(jstr(&r, "email"), u.email);
	assert_true(json_object_object_get_ex(r.json, "created_at", &v));
	/* the configured fee, for the console's cost preview (design.md §12) */
	assert_true(json_object_object_get_ex(r.json, "fee_bps", &v));
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_not_equal(config_fee_bps(), -1);
	assert_int_equal(json_object_get_int64(v), config_fee_bps());
	assert_true(json_object_object_get_ex(r.json, "agents", &agents));
	assert_int_equal(json_object_array_length(agents), 1);
	ag = json_object_array_get_idx(agents, 0);
	assert_true(json_object_object_get_ex(ag, "agent_id", &v));
	assert_string_equal(json_object_get_string(v), a.id);
	assert_true(json_object_object_get_ex(ag, "status", &v));
	assert_string_equal(json_object_get_string(v), "claimed");
	assert_true(json_object_object_get_ex(ag, "tier", &v));
	assert_string_equal(json_object_get_string(v), "standard");
	resp_free(&r);
	r = http_post("/api/v1/auth/logout", NULL, HDRS(u.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "status"), "ok");
	resp_free(&r);
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	r = http_post("/api/v1/auth/logout", NULL, HDRS(u.hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
}

static void
forbidden_without_role(void **state)
{
	struct test_user u;
	struct resp r;

	(void)state;
	user_login(&u, "norole");
	r = http_get("/api/v1/studies", HDRS(u.hdr));
	assert_int_equal(r.status, 200);
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "revoke %s researcher", u.id), 0);
	/* a valid credential without the role: 403, not 401 */
	r = http_get("/api/v1/studies", HDRS(u.hdr));
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	r = http_post("/api/v1/studies", "{}", HDRS(u.hdr));
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"roles\":[\"participant\"]"));
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "grant %s researcher", u.id), 0);
	r = http_get("/api/v1/studies", HDRS(u.hdr));
	assert_int_equal(r.status, 200);
	resp_free(&r);
	/* no role left at all, then granted again; a second grant is a no-op */
	assert_int_equal(admin(NULL, 0, "revoke %s researcher", u.id), 0);
	assert_int_equal(admin(NULL, 0, "revoke %s participant", u.id), 0);
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_non_null(strstr(r.body, "\"roles\":[]"));
	resp_free(&r);
	assert_int_equal(admin(NULL, 0, "grant %s participant", u.id), 0);
	assert_int_equal(admin(NULL, 0, "grant %s participant", u.id), 0);
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_non_null(strstr(r.body, "\"roles\":[\"participant\"]"));
	resp_free(&r);
}

static void
token_expiry(void **state)
{
	struct test_user u;
	struct resp r;

	(void)state;
	user_login(&u, "idle");
	/* 7 days idle */
	fixture("tokens-idle %s %d", u.id, 7 * 86400);
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	user_login(&u, "absolute");
	/* 30 days absolute, even when used every day */
	fixture("tokens-expire %s", u.id);
	r = http_get("/api/v1/account", HDRS(u.hdr));
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
}

static void
claim(void **state)
{
	struct test_agent a;
	struct test_user u, other;
	long long avail, frozen;
	char body[128], lower[16];
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "Claimable");
	user_login(&u, "claimer");
	/* errors first */
	r = http_post("/api/v1/auth/claim", "{}", HDRS(u.hdr));
	assert_error(&r, 422, "VALIDATION_ERROR");
	resp_free(&r);
	r = http_post("/api/v1/auth/claim", "{\"claim_code\":\"ZZZZZZZZ\"}", HDRS(u.hdr));
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
	snprintf(body, sizeof body, "{\"claim_code\":\"%s\"}", a.claim);
	r = http_post("/api/v1/auth/claim", body, NULL);
	assert_error(&r, 401, "UNAUTHORIZED");
	resp_free(&r);
	r = http_post("/api/v1/auth/claim", body, HDRS(a.hdr));
	assert_error(&r, 403, "FORBIDDEN");
	resp_free(&r);
	/* the code is case-insensitive */
	for (i = 0; a.claim[i]; i++)
		lower[i] = (char)(a.claim[i] >= 'A' && a.claim[i] <= 'Z' ? a.claim[i] + 32 : a.claim[i]);
	lower[i] = '\0';
	snprintf(body, sizeof body, "{\"claim_code\":\"%s\"}", lower);
	r = http_post("/api/v1/auth/claim", body, HDRS(u.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "agent_id"), a.id);
	assert_string_equal(jstr(&r, "status"), "claimed");
	assert_string_equal(jstr(&r, "account_id"), u.id);
	resp_free(&r);
	/* the signup bonus went through the ledger */
	admin_wallet(a.id, &avail, &frozen);
	assert_int_equal(avail, 100);
	assert_int_equal(frozen, 0);
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_string_equal(jstr(&r, "status"), "claimed");
	resp_free(&r);
	/* a second claim, by anyone */
	user_login(&other, "other");
	r = http_post("/api/v1/auth/claim", body, HDRS(other.hdr));
	assert_error(&r, 409, "ALREADY_CLAIMED");
	resp_free(&r);
	r = http_post("/api/v1/auth/claim", body, HDRS(u.hdr));
	assert_error(&r, 409, "ALREADY_CLAIMED");
	resp_free(&r);
	admin_wallet(a.id, &avail, &frozen);
	assert_int_equal(avail, 100);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

struct race {
	const char *body, *hdr;
	int ok, dup, other;
	pthread_mutex_t mu;
};

static void *
claim_one(void *arg)
{
	struct race *c = arg;
	struct resp r = http_post("/api/v1/auth/claim", c->body, HDRS(c->hdr));

	pthread_mutex_lock(&c->mu);
	if (r.status == 200)
		c->ok++;
	else if (r.status == 409 && strcmp(jstr(&r, "error_code"), "ALREADY_CLAIMED") == 0)
		c->dup++;
	else
		c->other++;
	pthread_mutex_unlock(&c->mu);
	resp_free(&r);
	return NULL;
}

static void
claim_race_pays_once(void **state)
{
	struct test_agent a;
	struct test_user u;
	long long avail, frozen;
	pthread_t th[8];
	struct race c;
	char body[64];
	int i;

	(void)state;
	agent_new(&a, "Raced");
	user_login(&u, "racer");
	snprintf(body, sizeof body, "{\"claim_code\":\"%s\"}", a.claim);
	memset(&c, 0, sizeof c);
	pthread_mutex_init(&c.mu, NULL);
	c.body = body;
	c.hdr = u.hdr;
	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, claim_one, &c);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(c.ok, 1);
	assert_int_equal(c.dup, 7);
	admin_wallet(a.id, &avail, &frozen);
	assert_int_equal(avail, 100);
}

static void
idempotent_register(void **state)
{
	struct resp r1, r2, r3;
	char ip[32];

	(void)state;
	random_ip(ip);
	r1 = http_req("POST", "/api/v1/agents/register", "{\"name\":\"Idem\"}",
	    HDRS("Idempotency-Key: reg-1-3c5a0e6f9b2d4871a6e0"), ip);
	assert_int_equal(r1.status, 201);
	r2 = http_req("POST", "/api/v1/agents/register", "{\"name\":\"Idem\"}",
	    HDRS("Idempotency-Key: reg-1-3c5a0e6f9b2d4871a6e0"), ip);
	assert_int_equal(r2.status, 201);
	assert_string_equal(r1.body, r2.body);	/* byte for byte */
	r3 = http_req("POST", "/api/v1/agents/register", "{\"name\":\"Other\"}",
	    HDRS("Idempotency-Key: reg-1-3c5a0e6f9b2d4871a6e0"), ip);
	assert_error(&r3, 409, "IDEMPOTENCY_CONFLICT");
	resp_free(&r1);
	resp_free(&r2);
	resp_free(&r3);
}

/* Secrets at rest: dump the whole database and the service's logs after
 * issuing keys, tokens, claim codes and login codes; none is there. */
static void
no_plaintext_secrets(void **state)
{
	char email[128], code[8], cmd[2048], ip[32];
	struct test_agent a, b;
	struct test_user u;
	struct resp r;
	FILE *p;
	char *dump = NULL;
	size_t n = 0, cap = 0, got;
	char buf[65536];

	(void)state;
	agent_new(&a, "Secret");
	agent_new(&b, "Secret2");
	user_login(&u, "secret");
	/* a replayed registration is stored too (sealed) */
	r = http_req("POST", "/api/v1/agents/register", "{\"name\":\"Sealed\"}",
	    HDRS("Idempotency-Key: sealed-1-8f14e45fceea167a5a36"), random_ip(ip));
	assert_int_equal(r.status, 201);
	snprintf(b.key, sizeof b.key, "%s", jstr(&r, "api_key"));
	snprintf(b.claim, sizeof b.claim, "%s", jstr(&r, "claim_code"));
	resp_free(&r);
	/* a login code still pending */
	uniq_email(email, sizeof email, "pending");
	r = send_code(email);
	resp_free(&r);
	mail_code(email, code);

	snprintf(cmd, sizeof cmd, "mariadb-dump --no-defaults -S %s/run/mysqld.sock -u \"$(id -un)\" "
	    "--hex-blob --skip-extended-insert arps; cat %s/log/*.log",
	    getenv("ARPS_VAR"), getenv("ARPS_VAR"));
	assert_non_null(p = popen(cmd, "r"));
	while ((got = fread(buf, 1, sizeof buf, p)) > 0) {
		if (n + got + 1 > cap) {
			cap = (n + got + 1) * 2;
			assert_non_null(dump = realloc(dump, cap));
		}
		memcpy(dump + n, buf, got);
		n += got;
	}
	assert_int_equal(pclose(p), 0);
	assert_non_null(dump);
	dump[n] = '\0';
	assert_true(n > 10000);
	/* the dump is real: ids are there in plain text */
	assert_non_null(strstr(dump, a.id));
	assert_non_null(strstr(dump, u.id));
	assert_null(strstr(dump, a.key));
	assert_null(strstr(dump, a.key + 10));	/* the key body alone */
	assert_null(strstr(dump, b.key + 10));
	assert_null(strstr(dump, u.token));
	assert_null(strstr(dump, u.token + 4));
	assert_null(strstr(dump, a.claim));
	assert_null(strstr(dump, b.claim));
	{
		/* the 6-digit code, as a whole number */
		char *s = dump;
		while ((s = strstr(s, code)) != NULL) {
			int before = s > dump && s[-1] >= '0' && s[-1] <= '9';
			int after = s[6] >= '0' && s[6] <= '9';
			assert_false(!before && !after);
			s++;
		}
	}
	free(dump);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(email_login),
		cmocka_unit_test(same_account_twice),
		cmocka_unit_test(only_latest_code),
		cmocka_unit_test(five_wrong_tries_burn),
		cmocka_unit_test(expired_code),
		cmocka_unit_test(code_rate_limit),
		cmocka_unit_test(login_bad_input),
		cmocka_unit_test(account_and_logout),
		cmocka_unit_test(forbidden_without_role),
		cmocka_unit_test(token_expiry),
		cmocka_unit_test(claim),
		cmocka_unit_test(claim_race_pays_once),
		cmocka_unit_test(idempotent_register),
		cmocka_unit_test(no_plaintext_secrets),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_accounts", tests, NULL, NULL);
}
