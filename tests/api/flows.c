#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Paths of the mails mail_code has already returned (one per login). */
static char seen[64][300];
static size_t nseen;

static int
mail_seen(const char *path)
{
	size_t i;

	for (i = 0; i < nseen && i < sizeof seen / sizeof seen[0]; i++)
		if (strcmp(seen[i], path) == 0)
			return 1;
	return 0;
}

/* The newest mail to email in the dev mail sink not returned before, into
 * best (empty when none). */
static void
mail_newest(const char *email, char *best, size_t bestsz)
{
	char dir[1024], path[2048], line[512];
	long long bestm = -1;
	struct dirent *de;
	struct stat st;
	DIR *d;
	FILE *f;
	int found;

	best[0] = '\0';
	snprintf(dir, sizeof dir, "%s/mail", getenv("ARPS_VAR"));
	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (n < 5 || strcmp(de->d_name + n - 4, ".eml") != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (mail_seen(path) || (f = fopen(path, "r")) == NULL)
			continue;
		found = 0;
		while (fgets(line, sizeof line, f) != NULL)
			if (strncmp(line, "To: ", 4) == 0 && strncmp(line + 4, email, strlen(email)) == 0 &&
			    line[4 + strlen(email)] == '\n')
				found = 1;
		fclose(f);
		if (found && stat(path, &st) == 0) {
			long long m = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
			if (m > bestm) {
				bestm = m;
				snprintf(best, bestsz, "%s", path);
			}
		}
	}
	closedir(d);
}

void
mail_code(const char *email, char code[8])
{
	struct timespec tick = { 0, 20 * 1000000L };
	char best[2048] = "", line[512];
	FILE *f;
	size_t n;
	int i;

	code[0] = '\0';
	/* arps-deliver writes the file within a second of the request: wait
	 * up to 3 s for a mail not returned before. */
	for (i = 0; i < 150; i++) {
		mail_newest(email, best, sizeof best);
		if (best[0] != '\0')
			break;
		nanosleep(&tick, NULL);
	}
	if (best[0] == '\0')
		print_error("no mail to %s in %s/mail after 3 s\n", email, getenv("ARPS_VAR"));
	assert_true(best[0] != '\0');
	/* memcpy of a length checked here: gcc -O1 with the sanitizers (make
	 * asan, CI=true) took snprintf's "%s" for a truncation. */
	if ((n = strlen(best)) < sizeof seen[0]) {
		memcpy(seen[nseen % (sizeof seen / sizeof seen[0])], best, n + 1);
		nseen++;
	}
	assert_non_null(f = fopen(best, "r"));
	while (fgets(line, sizeof line, f) != NULL) {
		const char *p = strstr(line, "login code is ");
		if (p != NULL && sscanf(p + 14, "%6s", code) == 1)
			break;
	}
	fclose(f);
	assert_int_equal(strlen(code), 6);
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
fixture_va(char *args, size_t n, const char *fmt, va_list ap)
{
	char cmd[2048];

	vsnprintf(args, n, fmt, ap);
	snprintf(cmd, sizeof cmd, "%s/build/tests/arps-fixture --config %s %s", getenv("ARPS_ROOT"),
	    getenv("ARPS_CONFIG"), args);
	return run(NULL, 0, cmd);
}

int
fixture_rc(const char *fmt, ...)
{
	char args[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_va(args, sizeof args, fmt, ap);
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
	rc = fixture_va(args, sizeof args, fmt, ap);
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
