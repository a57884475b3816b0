/*
 * libFuzzer: the MCP endpoint's JSON-RPC decoding (fcgi/mcp.c, make fuzz).
 * One input is a flags byte (credential kind, Content-Type,
 * MCP-Protocol-Version), then the body of POST /api/v1/mcp: the
 * message is parsed (strict JSON, I-JSON keys), framed (id, jsonrpc,
 * method, params), and initialize, ping, tools/list and tools/call run;
 * tools/call builds the REST request of its tool (path parameters,
 * query, body, Idempotency-Key) and runs it through the real dispatch and
 * handlers (fuzz_edge.h: authentication admits an agent or an account by
 * the flags, the database is absent).
 *
 * Checked beyond "no crash": exactly one answer; 202 with no body (a
 * notification or a response), else one JSON value in valid UTF-8: a
 * JSON-RPC answer {jsonrpc "2.0", id, exactly one of result and error
 * {code, message}} whose HTTP status is 400 only for -32700 and -32600,
 * or a REST error {detail, error_code, status} (415); an unsupported
 * MCP-Protocol-Version (with a JSON content type) is always 400.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/mcp.h"
#include "tests/fuzz/fuzz_edge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const versions[] = { NULL, "2025-06-18", "2025-03-26", "1999-01-01" };
static const char *const ctypes[] = {
	"application/json", "application/json; charset=utf-8", "text/plain", NULL,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct req r;
	char *body;

	if (size < 1 || size - 1 > REQ_MAX_BODY)
		return 0;
	if ((body = malloc(size)) == NULL)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	fuzz_req_init(&r);
	fuzz_who = (data[0] & 0x4) ? AUTH_BEARER : AUTH_KEY;
	r.method = "POST";
	r.path = MCP_PATH;
	/* the common case most: a JSON content type */
	r.ctype = (data[0] & 0x8) ? ctypes[data[0] & 3] : ctypes[0];
	r.apikey = fuzz_who == AUTH_KEY ? "arps_live_x" : NULL;
	r.authz = fuzz_who == AUTH_BEARER ? "Bearer act_x" : NULL;
	r.mcp_version = versions[(data[0] >> 4) & 3];
	r.body = body;
	r.blen = size - 1;
	mcp_or_dispatch(&r);
	if (r.status != 202)
		FUZZ_CHECK(r.out != NULL);
	if (((data[0] >> 4) & 3) == 3 && (r.ctype == ctypes[0] || r.ctype == ctypes[1]))
		FUZZ_CHECK(r.status == 400);
	fuzz_check_answer(&r, 1);
	free(body);
	return 0;
}
