/*
 * fcgi/dispatch.c: one request from routing to its answer.  The top of
 * fcgi/: dispatch -> routes, auth, idempotency -> answers.
 */
#ifndef ARPS_FCGI_DISPATCH_H
#define ARPS_FCGI_DISPATCH_H

struct req;

/* Handle one request already read into r: route, authenticate, claim the
 * Idempotency-Key, run the handler.  Exactly one answer is set after. */
void req_dispatch(struct req *r);

#endif
