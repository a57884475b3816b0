/*
 * A test-only FastCGI client: one request straight to the pool's unix
 * socket ($ARPS_VAR/run/arps.sock), bypassing nginx, so that a test can
 * set X-Real-IP, which nginx always overwrites with the peer address: the
 * only way to be many clients of one IPv6 /64 (design.md §9.1) from one
 * test host.  It passes the parameters nginx/arps-api.inc passes.
 */
#ifndef ARPS_TESTS_FCGI_CLIENT_H
#define ARPS_TESTS_FCGI_CLIENT_H

#include "tests/api/client.h"

/*
 * Send one request as the client at address ip (HTTP_X_REAL_IP).  path
 * starts with /api/v1 and may carry a query; body may be NULL (a JSON body
 * is sent as application/json); hdrs is a NULL-terminated list of
 * "Name: value" (X-API-Key, Authorization, Idempotency-Key, ...), passed
 * as HTTP_NAME params.  Returns the answer as http_req does (status 0 on
 * transport failure); free with resp_free.
 */
struct resp fcgi_req(const char *ip, const char *method, const char *path, const char *body,
    const char *const *hdrs);

/*
 * Send exactly params ("NAME=value" strings, NULL-terminated; nothing is
 * added, not even REQUEST_METHOD) and blen bytes of body: for the
 * transport faults nginx never passes on (a malformed CONTENT_LENGTH, a
 * body shorter than it, two equal params).
 */
struct resp fcgi_raw(const char *const *params, const void *body, size_t blen);

#endif
