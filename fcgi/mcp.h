/*
 * fcgi/mcp.c: the Model Context Protocol endpoint, POST /api/v1/mcp
 * (design.md §11): JSON-RPC 2.0 over Streamable HTTP, protocol version
 * 2025-06-18, JSON answers, stateless.
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

/* Handle one request already read into r: POST /api/v1/mcp here, every
 * other request by req_dispatch.  Exactly one answer is set after. */
void mcp_or_dispatch(struct req *r);

#endif
