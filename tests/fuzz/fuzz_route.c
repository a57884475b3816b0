/*
 * libFuzzer: the request target and routing (make fuzz).  One input is a
 * method selector byte, then a request target "path?query" as a client
 * sends it (REQUEST_URI); it is normalised (req_set_path), routed by the
 * real table (fcgi/routes.c, MCP included) and answered by the real
 * handlers (fuzz_edge.h: authentication admits a fixed principal, the
 * database is absent).  The query string alone is decoded as the list
 * endpoints decode it (req_query, decode_page_or_reply).
 *
 * Checked beyond "no crash": exactly one well-formed answer (fuzz_edge.h);
 * the normalised path starts with '/', fits its buffer and normalises to
 * itself; path parameters are non-empty without '/' or a control byte; a
 * decoded query value fits its buffer without NUL; a page is 1..max long
 * and its cursor 0 or positive, else 422.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/fields.h"
#include "fcgi/mcp.h"
#include "tests/fuzz/fuzz_edge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const methods[] = {
	"GET", "POST", "HEAD", "PATCH", "DELETE", "PUT", "OPTIONS", "get",
};

static void
check_query(const char *query)
{
	static const char *const names[] = { "limit", "cursor", "type", "since", "q", "" };
	char buf[64], one[1];
	struct req r;
	int64_t limit, cursor;
	size_t i;

	memset(&r, 0, sizeof r);
	r.query = query;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = req_query(&r, names[i], buf, sizeof buf);

		if (v != NULL) {
			FUZZ_CHECK(v == buf && strlen(v) < sizeof buf);
			FUZZ_CHECK(req_query_has(&r, names[i]));
		}
		/* a one-byte buffer holds only the empty value */
		v = req_query(&r, names[i], one, sizeof one);
		FUZZ_CHECK(v == NULL || v[0] == '\0');
	}
	if (decode_page_or_reply(&r, 20, 100, &limit, &cursor) == H_OK) {
		FUZZ_CHECK(r.status == 0 && r.out == NULL);
		FUZZ_CHECK(limit >= 1 && limit <= 100);
		FUZZ_CHECK(cursor >= 0 && cursor < INT64_MAX);
	} else {
		FUZZ_CHECK(r.status == 422);
		fuzz_check_answer(&r, 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct req r;
	char *target, *q, again[sizeof r.pathbuf];

	if (size < 1)
		return 0;
	if ((target = malloc(size)) == NULL)
		return 0;
	memcpy(target, data + 1, size - 1);
	target[size - 1] = '\0';
	q = strchr(target, '?');

	fuzz_req_init(&r);
	fuzz_who = (data[0] & 0x8) ? AUTH_BEARER : AUTH_KEY;
	r.method = methods[data[0] & 7];
	r.head = strcmp(r.method, "HEAD") == 0;
	r.query = q != NULL ? q + 1 : NULL;
	r.ctype = "application/json";
	r.body = (char *)"";
	req_set_path(&r, target, "/fallback");
	FUZZ_CHECK(r.path != NULL && r.path[0] == '/' && strlen(r.path) < sizeof r.pathbuf);
	if (r.path == r.pathbuf) {
		/* normalising is idempotent */
		struct req r2;

		memset(&r2, 0, sizeof r2);
		memcpy(again, r.pathbuf, sizeof again);
		req_set_path(&r2, again, "/fallback");
		FUZZ_CHECK(strcmp(r2.path, r.path) == 0);
		FUZZ_CHECK(strpbrk(r.path, "?#") == NULL);
	}
	mcp_or_dispatch(&r);
	fuzz_check_params(&r);
	fuzz_check_answer(&r, strcmp(r.path, MCP_PATH) == 0);
	if (q != NULL)
		check_query(q + 1);
	free(target);
	return 0;
}
