/*
 * fcgi/mcp.c: the Model Context Protocol endpoint, POST /api/v1/mcp
 * (design.md §11): JSON-RPC 2.0 over Streamable HTTP, protocol versions
 * 2025-11-25 (preferred), 2025-06-18 and 2025-03-26, JSON answers, stateless.
 *
 * A tool is a route row: tools/call builds the REST request of its route
 * (method, path with its parameters, query, JSON body, Idempotency-Key)
 * and runs it through req_dispatch, so routing, authentication,
 * idempotency and the handler are the REST ones.  Because the endpoint
 * calls the route table, it is entered above it: pool -> mcp -> dispatch
 * (its row in fcgi/routes.c has no handler; it gives GET its 405).
 */
#ifndef ARPS_FCGI_MCP_H
#define ARPS_FCGI_MCP_H

struct req;

#define MCP_PATH	"/api/v1/mcp"

/* A tool's output schema (design.md §11.3): the JSON Schema text of what
 * the operation METHOD PATTERN ("{}" for a path parameter) answers as
 * structuredContent.  The table is generated from docs/openapi.yaml by
 * tools/mcp-schemas.py into build/gen/mcp_schemas.c (mk/mcp.mk). */
struct mcp_schema {
	const char *method;
	const char *pattern;
	const char *json;
};

extern const struct mcp_schema mcp_schemas[];
extern const size_t nmcp_schemas;

/* Handle one request already read into r: POST /api/v1/mcp here, every
 * other request by req_dispatch.  Exactly one answer is set after. */
void mcp_or_dispatch(struct req *r);

#endif
