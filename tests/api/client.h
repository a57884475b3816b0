/* HTTP client for the API tests: libcurl through nginx to the real pool. */
#ifndef ARPS_TESTS_CLIENT_H
#define ARPS_TESTS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

struct resp {
	long status;
	char *body;
	size_t len;
	char headers[8192];
	struct json_object *json;	/* parsed body, NULL if not JSON */
};

/* Base URL of the stack under test ($ARPS_BASE_URL). */
const char *base_url(void);

/*
 * Send one request.  path is appended to the base URL; body may be NULL;
 * hdrs is a NULL-terminated list of "Name: value" strings (may be NULL).
 * When src_ip is not NULL the connection is made from that loopback
 * address (127.x.y.z).  Returns the response (status 0 on transport
 * failure); free with resp_free.
 */
struct resp http_req(const char *method, const char *path, const char *body,
    const char *const *hdrs, const char *src_ip);

#define HDRS(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct resp http_get(const char *path, const char *const *hdrs);
struct resp http_post(const char *path, const char *json, const char *const *hdrs);
void resp_free(struct resp *r);

/* Field accessors on r->json; "" / -1 when absent. */
const char *jstr(const struct resp *r, const char *key);
long long jint(const struct resp *r, const char *key);
/* The value of a response header (case-insensitive name) into buf; NULL if absent. */
const char *resp_header(const struct resp *r, const char *name, char *buf, size_t n);

/* Assert an error answer: status, error_code, and the three-field body. */
void assert_error(const struct resp *r, long status, const char *code);

/* A fresh random loopback source address, 127.x.y.z with x >= 1. */
const char *random_ip(char buf[32]);

/* Run a shell command; returns its exit status. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same command every 100 ms until it exits 0, at most `tries` times
 * (a line a process writes after its answer); returns the last status. */
int sh_until(int tries, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Milliseconds of the monotonic clock, for intervals and deadlines. */
int64_t now_ms(void);
/* Sleep ms milliseconds. */
void sleep_ms(int64_t ms);

#endif
