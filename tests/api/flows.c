#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "tests/api/flows.h"

void
uniq_email(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "%s-%08x%08x@example.org", tag, randombytes_random(), randombytes_random());
}

void
agent_new(struct test_agent *a, const char *name)
{
	char body[256], ip[32];
	struct resp r;

	memset(a, 0, sizeof *a);
	snprintf(body, sizeof body, "{\"name\":\"%s\",\"description\":\"test agent\"}", name);
	r = http_req("POST", "/api/v1/agents/register", body, NULL, random_ip(ip));
	if (r.status != 201)
		print_error("register: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 201);
	snprintf(a->id, sizeof a->id, "%s", jstr(&r, "agent_id"));
	snprintf(a->key, sizeof a->key, "%s", jstr(&r, "api_key"));
	snprintf(a->claim, sizeof a->claim, "%s", jstr(&r, "claim_code"));
	snprintf(a->hdr, sizeof a->hdr, "X-API-Key: %s", a->key);
	assert_true(ids_valid(IDS_AGENT, a->id));
	assert_true(apikey_check(a->key));
	resp_free(&r);
}

struct resp
send_code(const char *email)
{
	char body[300], ip[32];

	snprintf(body, sizeof body, "{\"email\":\"%s\"}", email);
	return http_req("POST", "/api/v1/auth/email/send-code", body, NULL, random_ip(ip));
}

void
wrong_code(char out[8], const char *code)
{
	snprintf(out, 8, "%06d", (atoi(code) + 1) % 1000000);
}

void
user_login(struct test_user *u, const char *tag)
{
	char body[512], code[8], ip[32];
	struct json_object *acc, *v;
	struct resp r;

	memset(u, 0, sizeof *u);
	uniq_email(u->email, sizeof u->email, tag);
	snprintf(body, sizeof body, "{\"email\":\"%s\"}", u->email);
	/* each user from its own client network (design.md §9.2 limits) */
	random_ip(ip);
	r = http_req("POST", "/api/v1/auth/email/send-code", body, NULL, ip);
	assert_int_equal(r.status, 202);
	resp_free(&r);
	mail_code(u->email, code);
	snprintf(body, sizeof body, "{\"provider\":\"email\",\"email\":\"%s\",\"code\":\"%s\"}",
	    u->email, code);
	r = http_req("POST", "/api/v1/auth/login", body, NULL, ip);
	if (r.status != 200)
		print_error("login: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	snprintf(u->token, sizeof u->token, "%s", jstr(&r, "access_token"));
	assert_true(token_valid(u->token));
	assert_true(json_object_object_get_ex(r.json, "account", &acc));
	assert_true(json_object_object_get_ex(acc, "id", &v));
	snprintf(u->id, sizeof u->id, "%s", json_object_get_string(v));
	snprintf(u->hdr, sizeof u->hdr, "Authorization: Bearer %s", u->token);
	resp_free(&r);
}

void
agent_claim(struct test_agent *a, const struct test_user *u)
{
	char body[128];
	struct resp r;

	snprintf(body, sizeof body, "{\"claim_code\":\"%s\"}", a->claim);
	r = http_post("/api/v1/auth/claim", body, HDRS(u->hdr));
	if (r.status != 200)
		print_error("claim: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "agent_id"), a->id);
	resp_free(&r);
}

void
agent_claimed(struct test_agent *a, struct test_user *owner, const char *name)
{
	agent_new(a, name);
	user_login(owner, "owner");
	agent_claim(a, owner);
}

static int
run(char *out, size_t n, const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char line[1024];
	int rc;

	if (p == NULL)
		return -1;
	if (out != NULL && n > 0)
		out[0] = '\0';
	while (fgets(line, sizeof line, p) != NULL)
		if (out != NULL && out[0] == '\0') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, n, "%s", line);
		}
	rc = pclose(p);
	return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

int
admin(char *out, size_t n, const char *fmt, ...)
{
	char args[1024], cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "%s/build/arps-admin --config %s %s", getenv("ARPS_ROOT"),
	    getenv("ARPS_CONFIG"), args);
	return run(out, n, cmd);
}

static int
fixture_va(char *out, size_t outn, char *args, size_t n, const char *fmt, va_list ap)
{
	char cmd[2048];

	vsnprintf(args, n, fmt, ap);
	snprintf(cmd, sizeof cmd, "%s/build/tests/arps-fixture --config %s %s", getenv("ARPS_ROOT"),
	    getenv("ARPS_CONFIG"), args);
	return run(out, outn, cmd);
}

int
fixture_out(char *out, size_t n, const char *fmt, ...)
{
	char args[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_va(out, n, args, sizeof args, fmt, ap);
	va_end(ap);
	return rc;
}

int
fixture_rc(const char *fmt, ...)
{
	char args[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_va(NULL, 0, args, sizeof args, fmt, ap);
	va_end(ap);
	return rc;
}

void
fixture(const char *fmt, ...)
{
	char args[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_va(NULL, 0, args, sizeof args, fmt, ap);
	va_end(ap);
	if (rc != 0)
		print_error("arps-fixture %s: exit %d\n", args, rc);
	assert_int_equal(rc, 0);
}

void
admin_wallet(const char *owner, long long *available, long long *frozen)
{
	char out[512];
	struct json_object *o, *v;

	assert_int_equal(admin(out, sizeof out, "wallet %s", owner), 0);
	assert_non_null(o = json_tokener_parse(out));
	assert_true(json_object_object_get_ex(o, "available_cents", &v));
	*available = json_object_get_int64(v);
	assert_true(json_object_object_get_ex(o, "frozen_cents", &v));
	*frozen = json_object_get_int64(v);
	json_object_put(o);
}

void
embedder(int on)
{
	assert_int_equal(sh("%s/tools/dev.sh %s", getenv("ARPS_ROOT"),
	    on ? "embed-start" : "embed-stop"), 0);
}
