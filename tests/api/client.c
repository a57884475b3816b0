#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include "core/validate.h"
#include "tests/api/client.h"

const char *
base_url(void)
{
	const char *b = getenv("ARPS_BASE_URL");

	return b != NULL ? b : "http://127.0.0.1:18080";
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	char *nb = realloc(r->body, r->len + sz * n + 1);

	if (nb == NULL)
		return 0;
	r->body = nb;
	memcpy(r->body + r->len, p, sz * n);
	r->len += sz * n;
	r->body[r->len] = '\0';
	return sz * n;
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t used = strlen(r->headers);

	if (used + sz * n < sizeof r->headers) {
		memcpy(r->headers + used, p, sz * n);
		r->headers[used + sz * n] = '\0';
	}
	return sz * n;
}

/* ARPS_RECORD_ANSWERS=PATH: append each answer as one JSON line (method,
 * path, status, content type, headers, body) for tools/openapi-check.mjs.  One
 * O_APPEND write per record, so threads and processes do not interleave. */
static void
record_answer(const char *method, const char *path, const struct resp *r)
{
	const char *file = getenv("ARPS_RECORD_ANSWERS");
	struct json_object *o;
	char ctype[256];
	const char *line;
	int fd;

	if (file == NULL || *file == '\0' || r->status == 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "status", json_object_new_int((int)r->status));
	json_object_object_add(o, "content_type", resp_header(r, "Content-Type", ctype,
	    sizeof ctype) ? json_object_new_string(ctype) : NULL);
	json_object_object_add(o, "headers", json_object_new_string(r->headers));
	/* a body that is not UTF-8 is recorded as null: the check fails it */
	json_object_object_add(o, "body", val_utf8(r->body ? r->body : "", r->len, NULL) ?
	    json_object_new_string_len(r->body ? r->body : "", (int)r->len) : NULL);
	line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if ((fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) >= 0) {
		char *buf;
		size_t n = strlen(line);

		if ((buf = malloc(n + 1)) != NULL) {
			memcpy(buf, line, n);
			buf[n] = '\n';
			if (write(fd, buf, n + 1) < 0)
				fprintf(stderr, "ARPS_RECORD_ANSWERS: write failed\n");
			free(buf);
		}
		close(fd);
	}
	json_object_put(o);
}

struct resp
http_req(const char *method, const char *path, const char *body,
    const char *const *hdrs, const char *src_ip)
{
	struct curl_slist *hl = NULL;
	struct resp r;
	char *url;
	CURL *c;

	memset(&r, 0, sizeof r);
	if (asprintf(&url, "%s%s", base_url(), path) < 0)
		return r;
	if ((c = curl_easy_init()) == NULL) {
		free(url);
		return r;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	free(url);	/* libcurl keeps its own copy */
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (src_ip != NULL)
		curl_easy_setopt(c, CURLOPT_INTERFACE, src_ip);
	if (body != NULL) {
		const char *const *h;
		int ctype = 0;

		for (h = hdrs; h != NULL && *h != NULL; h++)
			if (strncasecmp(*h, "Content-Type:", 13) == 0)
				ctype = 1;
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		if (!ctype)
			hl = curl_slist_append(hl, "Content-Type: application/json");
	} else if (strcmp(method, "POST") == 0 || strcmp(method, "PATCH") == 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	hl = curl_slist_append(hl, "Expect:");
	for (; hdrs != NULL && *hdrs != NULL; hdrs++)
		hl = curl_slist_append(hl, *hdrs);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	/* As a strict client reads it: JSON in valid UTF-8, or not JSON. */
	if (r.body != NULL && val_utf8(r.body, r.len, NULL))
		r.json = json_tokener_parse(r.body);
	record_answer(method, path, &r);
	return r;
}

struct resp
http_get(const char *path, const char *const *hdrs)
{
	return http_req("GET", path, NULL, hdrs, NULL);
}

struct resp
http_post(const char *path, const char *json, const char *const *hdrs)
{
	return http_req("POST", path, json, hdrs, NULL);
}

void
resp_free(struct resp *r)
{
	if (r->json != NULL)
		json_object_put(r->json);
	free(r->body);
	memset(r, 0, sizeof *r);
}

const char *
jstr(const struct resp *r, const char *key)
{
	struct json_object *v;

	if (r->json == NULL || !json_object_object_get_ex(r->json, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

long long
jint(const struct resp *r, const char *key)
{
	struct json_object *v;

	if (r->json == NULL || !json_object_object_get_ex(r->json, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	return (long long)json_object_get_int64(v);
}

const char *
resp_header(const struct resp *r, const char *name, char *buf, size_t n)
{
	const char *p = r->headers;
	size_t nl = strlen(name);

	while (*p != '\0') {
		const char *eol = strstr(p, "\r\n");
		if (eol == NULL)
			eol = p + strlen(p);
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			size_t len;
			while (*v == ' ')
				v++;
			len = (size_t)(eol - v);
			if (len >= n)
				len = n - 1;
			memcpy(buf, v, len);
			buf[len] = '\0';
			return buf;
		}
		p = *eol ? eol + 2 : eol;
	}
	return NULL;
}

void
assert_error(const struct resp *r, long status, const char *code)
{
	struct json_object *v;

	if (r->status != status || strcmp(jstr(r, "error_code"), code) != 0)
		print_error("expected %ld %s, got %ld: %s\n", status, code, r->status,
		    r->body ? r->body : "(no body)");
	assert_int_equal(r->status, status);
	assert_non_null(r->json);
	assert_string_equal(jstr(r, "error_code"), code);
	assert_int_equal(jint(r, "status"), status);
	assert_true(json_object_object_get_ex(r->json, "detail", &v));
	assert_true(json_object_is_type(v, json_type_string));
	assert_true(strlen(json_object_get_string(v)) > 0);
}

const char *
random_ip(char buf[32])
{
	uint32_t x = randombytes_uniform(250 * 250 * 250);

	snprintf(buf, 32, "127.%u.%u.%u", 1 + x / 62500, (x / 250) % 250 + 1, x % 250 + 1);
	return buf;
}

static int
run(const char *cmd)
{
	int rc = system(cmd);

	return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

int
sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return run(cmd);
}

int
sh_until(int tries, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc, i;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	for (i = 0; (rc = run(cmd)) != 0 && i + 1 < tries; i++)
		usleep(100000);
	return rc;
}

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}
