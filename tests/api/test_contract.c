/* The contract and the agents' docs as nginx serves them (design.md §11):
 * GET /api/v1/openapi.json, /skill.md and /llms.txt.  The answers of every
 * suite are checked against the document by tools/openapi-check.mjs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/errors.h"
#include "tests/api/client.h"

/* The 23 paths of the interface spec, each with its methods there (26 operations). */
static const struct {
	const char *method, *path;
} spec_ops[] = {
	{ "post", "/agents/register" }, { "get", "/agents/me" }, { "patch", "/agents/me" },
	{ "post", "/profile/bio" }, { "get", "/profile/bio" }, { "post", "/heartbeat" },
	{ "post", "/auth/claim" }, { "get", "/studies/available" },
	{ "post", "/studies/{id}/accept" }, { "post", "/studies/{id}/complete" },
	{ "post", "/studies/{id}/withdraw" }, { "get", "/studies/history" },
	{ "post", "/studies" }, { "get", "/studies" }, { "get", "/studies/{id}" },
	{ "post", "/studies/{id}/pause" }, { "post", "/studies/{id}/resume" },
	{ "post", "/studies/{id}/stop" }, { "get", "/studies/{id}/participants" },
	{ "post", "/studies/{id}/participants/{pid}/approve" },
	{ "post", "/studies/{id}/participants/{pid}/reject" },
	{ "get", "/wallet/balance" }, { "get", "/wallet/transactions" },
	{ "post", "/auth/email/send-code" }, { "post", "/auth/login" }, { "get", "/account" },
};

static const char *const error_codes[] = {
#define CODE(e, s, c) c,
	ARPS_ERRORS(CODE)
#undef CODE
};

static struct json_object *
at(struct json_object *o, const char *k1, const char *k2)
{
	struct json_object *v = NULL;

	if (o == NULL || !json_object_object_get_ex(o, k1, &v))
		return NULL;
	if (k2 != NULL && (v == NULL || !json_object_object_get_ex(v, k2, &v)))
		return NULL;
	return v;
}

static const char *
str_at(struct json_object *o, const char *k1, const char *k2)
{
	struct json_object *v = at(o, k1, k2);

	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* The file under the checkout that nginx serves, NUL-terminated; NULL if absent. */
static char *
slurp(const char *rel, size_t *len)
{
	const char *root = getenv("ARPS_ROOT");
	char path[1024];
	char *buf = NULL;
	long n;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", root != NULL ? root : ".", rel);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

/* GET path: 200, the Content-Type, and the bytes of the file it is served from. */
static struct resp
get_static(const char *path, const char *ctype, const char *file)
{
	char buf[128], *want;
	struct resp r;
	size_t n = 0;

	r = http_get(path, NULL);
	assert_int_equal(r.status, 200);
	assert_non_null(resp_header(&r, "Content-Type", buf, sizeof buf));
	assert_string_equal(buf, ctype);
	assert_non_null(want = slurp(file, &n));
	assert_int_equal(r.len, n);
	assert_memory_equal(r.body, want, n);
	free(want);
	return r;
}

static void
openapi_json(void **state)
{
	struct json_object *paths, *codes, *v;
	struct resp r, h;
	size_t i, j;
	char buf[64];

	(void)state;
	r = get_static("/api/v1/openapi.json", "application/json", "build/openapi.json");
	assert_non_null(r.json);
	assert_string_equal(str_at(r.json, "openapi", NULL), "3.1.0");
	v = at(r.json, "servers", NULL);
	assert_non_null(v);
	assert_string_equal(str_at(json_object_array_get_idx(v, 0), "url", NULL), "/api/v1");
	paths = at(r.json, "paths", NULL);
	assert_non_null(paths);
	for (i = 0; i < sizeof spec_ops / sizeof spec_ops[0]; i++) {
		v = at(paths, spec_ops[i].path, spec_ops[i].method);
		if (v == NULL)
			print_error("missing %s %s\n", spec_ops[i].method, spec_ops[i].path);
		assert_non_null(v);
		assert_non_null(at(v, "responses", NULL));
	}
	/* every error code of core/errors.h, and no other */
	codes = at(at(at(r.json, "components", "schemas"), "ErrorCode", NULL), "enum", NULL);
	assert_non_null(codes);
	for (i = 1; i < sizeof error_codes / sizeof error_codes[0]; i++) {
		for (j = 0; j < json_object_array_length(codes); j++)
			if (strcmp(json_object_get_string(json_object_array_get_idx(codes, j)),
			    error_codes[i]) == 0)
				break;
		if (j == json_object_array_length(codes))
			print_error("ErrorCode lacks %s\n", error_codes[i]);
		assert_true(j < json_object_array_length(codes));
	}
	/* both credentials, and the headers */
	v = at(at(r.json, "components", "securitySchemes"), "ApiKey", NULL);
	assert_string_equal(str_at(v, "type", NULL), "apiKey");
	assert_string_equal(str_at(v, "in", NULL), "header");
	assert_string_equal(str_at(v, "name", NULL), "X-API-Key");
	v = at(at(r.json, "components", "securitySchemes"), "BearerAuth", NULL);
	assert_string_equal(str_at(v, "type", NULL), "http");
	assert_string_equal(str_at(v, "scheme", NULL), "bearer");
	assert_string_equal(str_at(at(at(r.json, "components", "parameters"), "IdempotencyKey", NULL),
	    "name", NULL), "Idempotency-Key");
	assert_non_null(at(at(r.json, "components", "headers"), "Retry-After", NULL));
	assert_non_null(at(at(r.json, "components", "headers"), "Idempotent-Replayed", NULL));
	/* HEAD: the same head, no body */
	h = http_req("HEAD", "/api/v1/openapi.json", NULL, NULL, NULL);
	assert_int_equal(h.status, 200);
	assert_int_equal(h.len, 0);
	assert_non_null(resp_header(&h, "Content-Length", buf, sizeof buf));
	assert_int_equal(strtoul(buf, NULL, 10), r.len);
	resp_free(&h);
	resp_free(&r);
	/* a static file takes no POST: the JSON refusal */
	r = http_post("/api/v1/openapi.json", "{}", NULL);
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_string_equal(buf, "GET, HEAD");
	resp_free(&r);
}

static void
skill_md(void **state)
{
	static const char *const musts[] = {
		"POST BASE/agents/register", "X-API-Key", "claim_code", "POST BASE/auth/claim",
		"POST BASE/profile/bio", "POST BASE/heartbeat", "Retry-After",
		"GET BASE/studies/available", "nextActions", "POST BASE/studies/{id}/accept",
		"GET BASE/studies/{id}", "study_url", "POST BASE/studies/{id}/complete",
		"completion_code", "POST BASE/studies/{id}/withdraw", "GET BASE/wallet/balance",
		"Idempotency-Key", "AGENT_NOT_CLAIMED", "ACTIVE_PARTICIPATION_EXISTS",
		"INVALID_SUBMISSION", "NO_ACTIVE_PARTICIPATION", "RATE_LIMITED", "openapi.json",
		"GET BASE/messages", "POST BASE/messages/{id}/read", "POST BASE/messages/{id}/reply",
		"message.received",
	};
	const char *fm, *end, *p;
	struct resp r;
	size_t i;

	(void)state;
	r = get_static("/skill.md", "text/markdown; charset=utf-8", "docs/skill.md");
	/* Agent Skills: YAML front matter with name and description first */
	assert_true(strncmp(r.body, "---\nname: ", 10) == 0);
	fm = r.body + 4;
	assert_non_null(end = strstr(fm, "\n---\n"));
	for (p = fm + 6; *p != '\n'; p++)	/* name: lowercase, digits, hyphens */
		assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
	assert_true(p - (fm + 6) >= 1 && p - (fm + 6) <= 64);
	assert_true(strncmp(p + 1, "description: ", 13) == 0);
	assert_true(strchr(p + 1, '\n') - (p + 14) > 40);
	assert_true(strchr(p + 1, '\n') <= end);
	for (i = 0; i < sizeof musts / sizeof musts[0]; i++) {
		if (strstr(end, musts[i]) == NULL)
			print_error("skill.md does not mention %s\n", musts[i]);
		assert_non_null(strstr(end, musts[i]));
	}
	resp_free(&r);
}

static void
llms_txt(void **state)
{
	const char *p, *q;
	char link[256];
	struct resp r, l;
	int nlinks = 0;

	(void)state;
	r = get_static("/llms.txt", "text/plain; charset=utf-8", "docs/llms.txt");
	/* llmstxt.org: an H1, a blockquote summary, then H2 sections of links */
	assert_true(strncmp(r.body, "# ", 2) == 0);
	assert_non_null(strstr(r.body, "\n> "));
	assert_true(strstr(r.body, "\n> ") < strstr(r.body, "\n## "));
	assert_non_null(strstr(r.body, "](/skill.md)"));
	assert_non_null(strstr(r.body, "](/api/v1/openapi.json)"));
	/* every link it gives answers */
	for (p = r.body; (p = strstr(p, "](/")) != NULL; p = q) {
		p += 2;
		assert_non_null(q = strchr(p, ')'));
		assert_true((size_t)(q - p) < sizeof link);
		snprintf(link, sizeof link, "%.*s", (int)(q - p), p);
		l = http_get(link, NULL);
		if (l.status != 200)
			print_error("llms.txt link %s: %ld\n", link, l.status);
		assert_int_equal(l.status, 200);
		resp_free(&l);
		nlinks++;
	}
	assert_true(nlinks >= 2);
	resp_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(openapi_json),
		cmocka_unit_test(skill_md),
		cmocka_unit_test(llms_txt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
