/* libFuzzer: the HTTP edge's body and query decoding (req_json,
 * decode_body_or_reply with every field type, req_query, decode_page_or_reply) on any bytes:
 * never a crash, always exactly one answer (make fuzz). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "fcgi/dispatch.h"
#include "fcgi/fields.h"
#include "fcgi/http.h"
#include "lib/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Routing runs the real table (fcgi/routes.c), the real authentication
 * (fcgi/auth.c) and the real handlers, against a database that is never
 * there (a socket path that does not exist): a handler that reaches the
 * database answers 503.  What routing hands a handler is checked after
 * dispatch: decoded path parameters with no '/', NUL or control byte. */
static void
check_params(const struct req *r)
{
	size_t i, j;

	for (i = 0; i < r->nparams; i++) {
		if (r->params[i][0] == '\0')
			abort();
		for (j = 0; r->params[i][j] != '\0'; j++)
			if (r->params[i][j] == '/' || (unsigned char)r->params[i][j] < 0x20 ||
			    r->params[i][j] == 0x7f)
				abort();
	}
}

struct all {
	const char *s, *url, *email;
	int64_t i, t;
};

static const struct field fields[] = {
	{ "s", F_STR, F_REQUIRED, 1, 100, offsetof(struct all, s) },
	{ "url", F_URL, 0, 0, 0, offsetof(struct all, url) },
	{ "email", F_EMAIL, F_NULLABLE, 0, 0, offsetof(struct all, email) },
	{ "i", F_INT, 0, -5, 1000000, offsetof(struct all, i) },
	{ "t", F_TIME, 0, 0, 0, offsetof(struct all, t) },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	static struct db *db;
	struct req r;
	struct all a;
	unsigned present;
	int64_t limit, cursor;
	char buf[64];
	char *body = malloc(size + 1);

	if (body == NULL)
		return 0;
	if (db == NULL) {
		snprintf(cfg.db_socket, sizeof cfg.db_socket, "/nonexistent/arps-fuzz.sock");
		if ((db = db_open(&cfg)) == NULL)
			abort();
	}
	memcpy(body, data, size);
	body[size] = '\0';
	memset(&r, 0, sizeof r);
	r.cfg = &cfg;
	r.method = "POST";
	r.path = "/api/v1/x";
	r.ctype = "application/json";
	r.body = body;
	r.blen = size;
	if (decode_body_or_reply(&r, fields, sizeof fields / sizeof fields[0], &a, &present) != 0 &&
	    r.status == 0)
		abort();	/* a refusal always answers */
	if (r.json != NULL)
		json_object_put(r.json);
	free(r.out);
	/* the same bytes as a query string */
	memset(&r, 0, sizeof r);
	r.query = body;
	(void)req_query(&r, "limit", buf, sizeof buf);
	(void)req_query(&r, "type", buf, sizeof buf);
	if (decode_page_or_reply(&r, 20, 100, &limit, &cursor) == 0 && (limit < 1 || limit > 100))
		abort();
	free(r.out);
	/* the same bytes as a request target, routed */
	memset(&r, 0, sizeof r);
	r.cfg = &cfg;
	r.db = db;
	r.now = 1700000000;
	r.method = size > 0 && (data[0] & 1) ? "POST" : (size > 0 && (data[0] & 2) ? "HEAD" : "GET");
	r.head = strcmp(r.method, "HEAD") == 0;
	req_set_path(&r, body, "/fallback");
	if (r.path == NULL || strlen(r.path) >= sizeof r.pathbuf)
		abort();
	req_dispatch(&r);
	if (r.status == 0)
		abort();	/* every request gets one answer */
	check_params(&r);
	if (r.json != NULL)
		json_object_put(r.json);
	free(r.out);
	free(body);
	return 0;
}
