/*
 * fcgi/auth.c: authentication of a request by its route's credential kind
 * (X-API-Key for agents, Authorization: Bearer for web accounts).  Uses
 * only the answers (fcgi/reply.c) of fcgi/.
 */
#ifndef ARPS_FCGI_AUTH_H
#define ARPS_FCGI_AUTH_H

#include "fcgi/http.h"

/* Resolve the credential for a route kind and role bits.  Answers 401/403
 * (or 503/500) itself and returns H_REPLIED; H_OK when r->who is set. */
enum h_rc auth_resolve_or_reply(struct req *r, enum auth_kind kind, unsigned roles);

#endif
