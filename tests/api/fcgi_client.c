/* The test-only FastCGI client (tests/api/fcgi_client.h): FastCGI 1.0
 * records over a unix socket, one request per connection. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/validate.h"
#include "tests/api/fcgi_client.h"

enum {
	FCGI_BEGIN_REQUEST = 1, FCGI_END_REQUEST = 3, FCGI_PARAMS = 4, FCGI_STDIN = 5,
	FCGI_STDOUT = 6, FCGI_STDERR = 7, FCGI_RESPONDER = 1, FCGI_ID = 1
};

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static int
put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 256;
		unsigned char *np = realloc(b->p, cap);

		if (np == NULL)
			return -1;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* One record (content at most 65535 bytes), padded to 8 bytes. */
static int
record(struct buf *b, int type, const void *p, size_t n)
{
	static const unsigned char pad[8];
	unsigned char h[8];
	size_t padn = (8 - n % 8) % 8;

	h[0] = 1;
	h[1] = (unsigned char)type;
	h[2] = 0;
	h[3] = FCGI_ID;
	h[4] = (unsigned char)(n >> 8);
	h[5] = (unsigned char)n;
	h[6] = (unsigned char)padn;
	h[7] = 0;
	return put(b, h, 8) || put(b, p, n) || put(b, pad, padn) ? -1 : 0;
}

/* A stream (PARAMS, STDIN) in records, then its empty closing record. */
static int
stream(struct buf *b, int type, const unsigned char *p, size_t n)
{
	while (n > 0) {
		size_t k = n > 65535 ? 65535 : n;

		if (record(b, type, p, k) != 0)
			return -1;
		p += k;
		n -= k;
	}
	return record(b, type, NULL, 0);
}

static int
putlen(struct buf *b, size_t n)
{
	unsigned char l[4] = { (unsigned char)(n >> 24 | 0x80), (unsigned char)(n >> 16),
	    (unsigned char)(n >> 8), (unsigned char)n };
	unsigned char one = (unsigned char)n;

	return n < 128 ? put(b, &one, 1) : put(b, l, 4);
}

static int
param(struct buf *b, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	return putlen(b, nl) || putlen(b, vl) || put(b, name, nl) || put(b, value, vl) ? -1 : 0;
}

static int
readn(int fd, unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t got = read(fd, p, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* Split the CGI answer "Status: ...\r\nName: value\r\n\r\nbody" into r. */
static void
parse_answer(struct resp *r, const unsigned char *p, size_t n)
{
	const char *s = (const char *)p, *end = NULL;
	size_t i, hl;

	for (i = 0; i + 4 <= n; i++)
		if (memcmp(p + i, "\r\n\r\n", 4) == 0) {
			end = s + i;
			break;
		}
	if (end == NULL)
		return;
	hl = (size_t)(end - s) + 2;
	if (hl >= sizeof r->headers)
		hl = sizeof r->headers - 1;
	memcpy(r->headers, s, hl);
	r->headers[hl] = '\0';
	r->status = strncasecmp(s, "Status: ", 8) == 0 ? strtol(s + 8, NULL, 10) : 200;
	r->len = n - (size_t)(end + 4 - s);
	if ((r->body = malloc(r->len + 1)) == NULL) {
		r->len = 0;
		return;
	}
	memcpy(r->body, end + 4, r->len);
	r->body[r->len] = '\0';
	if (val_utf8(r->body, r->len, NULL))
		r->json = json_tokener_parse(r->body);
}

/* Send params (one FastCGI PARAMS stream) and body to the pool's socket;
 * the answer as http_req gives it (status 0 on transport failure). */
static struct resp
exchange(const struct buf *params, const void *body, size_t blen)
{
	static const unsigned char begin[8] = { 0, FCGI_RESPONDER, 0, 0, 0, 0, 0, 0 };
	struct buf out = { 0 }, in = { 0 };
	struct sockaddr_un sa;
	struct timeval tv = { 60, 0 };
	struct resp r;
	size_t i;
	int fd = -1, done = 0;

	memset(&r, 0, sizeof r);
	if (record(&out, FCGI_BEGIN_REQUEST, begin, sizeof begin) ||
	    stream(&out, FCGI_PARAMS, params->p, params->len) ||
	    stream(&out, FCGI_STDIN, (const unsigned char *)body, blen))
		goto done;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s/run/arps.sock",
	    getenv("ARPS_VAR") ? getenv("ARPS_VAR") : "var/test");
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		goto done;
	for (i = 0; i < out.len;) {
		ssize_t w = write(fd, out.p + i, out.len - i);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto done;
		i += (size_t)w;
	}
	while (!done) {
		unsigned char h[8], content[65535 + 255];
		size_t n, padn;

		if (readn(fd, h, 8) != 0)
			goto done;
		n = (size_t)h[4] << 8 | h[5];
		padn = h[6];
		if (readn(fd, content, n + padn) != 0)
			goto done;
		if (h[1] == FCGI_STDOUT && put(&in, content, n) != 0)
			goto done;
		if (h[1] == FCGI_END_REQUEST)
			done = 1;
	}
	parse_answer(&r, in.p, in.len);
done:
	if (fd >= 0)
		close(fd);
	free(out.p);
	free(in.p);
	return r;
}

struct resp
fcgi_req(const char *ip, const char *method, const char *path, const char *body,
    const char *const *hdrs)
{
	struct buf params = { 0 };
	struct resp r;
	char uri[2048], docuri[2048], clen[24], name[128];
	const char *q = strchr(path, '?');
	size_t blen = body != NULL ? strlen(body) : 0, i;

	memset(&r, 0, sizeof r);
	snprintf(uri, sizeof uri, "%s", path);
	snprintf(docuri, sizeof docuri, "%.*s", (int)(q ? (size_t)(q - path) : strlen(path)), path);
	snprintf(clen, sizeof clen, "%zu", blen);
	if (param(&params, "REQUEST_METHOD", method) || param(&params, "REQUEST_URI", uri) ||
	    param(&params, "DOCUMENT_URI", docuri) ||
	    param(&params, "QUERY_STRING", q ? q + 1 : "") ||
	    param(&params, "REMOTE_ADDR", "127.0.0.1") ||
	    param(&params, "HTTP_X_REQUEST_ID", "fcgi-test-client") ||
	    (ip != NULL && param(&params, "HTTP_X_REAL_IP", ip)) ||
	    param(&params, "CONTENT_LENGTH", body != NULL ? clen : "") ||
	    (body != NULL && param(&params, "CONTENT_TYPE", "application/json")))
		goto done;
	for (; hdrs != NULL && *hdrs != NULL; hdrs++) {
		const char *colon = strchr(*hdrs, ':'), *v;
		size_t nl;

		if (colon == NULL || (nl = (size_t)(colon - *hdrs)) + 6 >= sizeof name)
			continue;
		memcpy(name, "HTTP_", 5);
		for (i = 0; i < nl; i++)
			name[5 + i] = (*hdrs)[i] == '-' ? '_' : (char)toupper((unsigned char)(*hdrs)[i]);
		name[5 + nl] = '\0';
		for (v = colon + 1; *v == ' '; v++)
			;
		if (param(&params, name, v) != 0)
			goto done;
	}
	r = exchange(&params, body, blen);
done:
	free(params.p);
	return r;
}

struct resp
fcgi_raw(const char *const *params, const void *body, size_t blen)
{
	struct buf pb = { 0 };
	struct resp r;
	char name[256];
	const char *eq;

	memset(&r, 0, sizeof r);
	for (; params != NULL && *params != NULL; params++) {
		if ((eq = strchr(*params, '=')) == NULL || (size_t)(eq - *params) >= sizeof name)
			goto done;
		memcpy(name, *params, (size_t)(eq - *params));
		name[eq - *params] = '\0';
		if (param(&pb, name, eq + 1) != 0)
			goto done;
	}
	r = exchange(&pb, body, blen);
done:
	free(pb.p);
	return r;
}
