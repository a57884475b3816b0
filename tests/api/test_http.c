/* The HTTP edge as a client sees it: health, the route table's 404 and
 * 405, odd paths, HEAD, and the refusals nginx answers itself, each with
 * the JSON error body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "tests/api/flows.h"

static void
health_ok(void **state)
{
	struct resp r = http_get("/api/v1/health", NULL);
	char buf[128];

	(void)state;
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"status\":\"ok\"}");
	assert_non_null(resp_header(&r, "X-Request-Id", buf, sizeof buf));
	assert_non_null(resp_header(&r, "Content-Type", buf, sizeof buf));
	assert_string_equal(buf, "application/json");
	resp_free(&r);
}

static void
unknown_paths_404(void **state)
{
	static const char *paths[] = {
		"/api/v1/nope", "/api/v1/health/x", "/api/v1/", "/api/v1",
		"/api/v2/health", "/api/v1/studies/std_x/unknown",
		/* Beside the console's own files (design.md §12), nothing else is served. */
		"/index.htm", "/js/", "/js/nope.js", "/js/app.js/x", "/web/index.html", "/app.css/",
		"/favicon.ico", "/../index.html.bak",
	};
	/* The console: / and /index.html are its page, under a strict CSP. */
	static const char *console[] = { "/", "/index.html" };
	char buf[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		struct resp r = http_get(paths[i], NULL);
		assert_error(&r, 404, "NOT_FOUND");
		resp_free(&r);
	}
	for (i = 0; i < sizeof console / sizeof console[0]; i++) {
		struct resp r = http_get(console[i], NULL);
		assert_int_equal(r.status, 200);
		assert_non_null(resp_header(&r, "Content-Type", buf, sizeof buf));
		assert_true(strncmp(buf, "text/html", 9) == 0);
		assert_non_null(resp_header(&r, "Content-Security-Policy", buf, sizeof buf));
		assert_non_null(strstr(buf, "default-src 'self'"));
		assert_null(strstr(buf, "unsafe-inline"));
		assert_non_null(strstr(r.body, "<script type=\"module\" src=\"/js/app.js\"></script>"));
		resp_free(&r);
	}
}

static void
wrong_method_405(void **state)
{
	struct resp r = http_req("DELETE", "/api/v1/health", NULL, NULL, NULL);
	char buf[64];

	(void)state;
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_string_equal(buf, "GET, HEAD");
	resp_free(&r);
	/* A literal path is its own resource: /studies/available is not
	 * /studies/{id}, whose PATCH it neither runs nor advertises. */
	r = http_req("PATCH", "/api/v1/studies/available", "{}", NULL, NULL);
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_string_equal(buf, "GET, HEAD");
	resp_free(&r);
	r = http_req("OPTIONS", "/api/v1/studies/history", NULL, NULL, NULL);
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_string_equal(buf, "GET, HEAD");
	resp_free(&r);
	r = http_req("OPTIONS", "/api/v1/studies/std_0000000000000000", NULL, NULL, NULL);
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_non_null(strstr(buf, "PATCH"));
	resp_free(&r);
}


/* Client bytes quoted in an error detail never make the body invalid JSON;
 * an escaped '/' or ".." is part of a segment, never a separator. */
static void
odd_paths(void **state)
{
	static const char *nf[] = {
		"/api/v1/%E9t%E9", "/api/v1/agents%2Fme", "/api/v1/studies/%2e%2e/health",
		"/api/v1/studies/std_%FF%FE", "/api/v1/studies/std_a%2Fb",
		"/api/v1/studies/std_%0Aforged", "/api/v1//health", "/api/v1/health/",
	};
	struct test_agent a;
	struct resp r;
	size_t i;

	(void)state;
	agent_new(&a, "Path tester");
	for (i = 0; i < sizeof nf / sizeof nf[0]; i++) {
		r = http_get(nf[i], HDRS(a.hdr));
		assert_error(&r, 404, "NOT_FOUND");	/* parsed as UTF-8 JSON */
		resp_free(&r);
	}
	r = http_get("/api/v1/studies/std_%FF%FE", HDRS(a.hdr));
	assert_non_null(strstr(jstr(&r, "detail"), "std_??"));
	resp_free(&r);
	/* an escaped unreserved character is the character itself */
	r = http_get("/api/v1/%61gents/me", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "agent_id"), a.id);
	resp_free(&r);
	r = http_get("/api/v1/agents/me?x=%FF", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	resp_free(&r);
}

/* HEAD is GET without a body, and has no effect of its own. */
static void
head_requests(void **state)
{
	struct test_agent a;
	struct resp r;
	char buf[64];

	(void)state;
	r = http_req("HEAD", "/api/v1/health", NULL, NULL, NULL);
	assert_int_equal(r.status, 200);
	assert_true(r.len == 0);
	assert_non_null(resp_header(&r, "Content-Length", buf, sizeof buf));
	assert_string_equal(buf, "15");		/* {"status":"ok"} */
	resp_free(&r);
	agent_new(&a, "Head tester");
	r = http_req("HEAD", "/api/v1/agents/me", NULL, HDRS(a.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_true(r.len == 0);
	resp_free(&r);
	r = http_req("HEAD", "/api/v1/agents/me", NULL, NULL, NULL);
	assert_int_equal(r.status, 401);
	resp_free(&r);
	r = http_req("HEAD", "/api/v1/heartbeat", NULL, HDRS(a.hdr), NULL);
	assert_int_equal(r.status, 405);
	assert_non_null(resp_header(&r, "Allow", buf, sizeof buf));
	assert_string_equal(buf, "POST");
	resp_free(&r);
}

/* What nginx refuses itself still answers the JSON error body. */
static void
nginx_refusals_json(void **state)
{
	char *big, *hdr;
	struct resp r;

	(void)state;
	r = http_get("/api/v1/studies/std_%00abc", NULL);
	assert_error(&r, 400, "BAD_REQUEST");
	resp_free(&r);
	r = http_get("/api/v1/studies/%", NULL);
	assert_error(&r, 400, "BAD_REQUEST");
	resp_free(&r);
	r = http_req("TRACE", "/api/v1/health", NULL, NULL, NULL);
	assert_error(&r, 405, "METHOD_NOT_ALLOWED");
	resp_free(&r);
	hdr = malloc(20100);
	assert_non_null(hdr);
	memcpy(hdr, "X-Big: ", 7);
	memset(hdr + 7, 'a', 20000);
	hdr[20007] = '\0';
	r = http_get("/api/v1/health", HDRS(hdr));
	assert_error(&r, 400, "BAD_REQUEST");
	resp_free(&r);
	free(hdr);
	big = malloc(20100);
	assert_non_null(big);
	memcpy(big, "/api/v1/health?q=", 17);
	memset(big + 17, 'a', 20000);
	big[20017] = '\0';
	r = http_get(big, NULL);
	assert_error(&r, 414, "BAD_REQUEST");
	resp_free(&r);
	free(big);
	r = http_get("/nothing/here", NULL);
	assert_error(&r, 404, "NOT_FOUND");
	resp_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(health_ok),
		cmocka_unit_test(unknown_paths_404),
		cmocka_unit_test(wrong_method_405),
		cmocka_unit_test(odd_paths),
		cmocka_unit_test(head_requests),
		cmocka_unit_test(nginx_refusals_json),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests_name("api_http", tests, NULL, NULL);
}
