#include "fcgi/handlers.h"

/* The routing table: adding an endpoint is adding a row.
 * method, path pattern ("{}" = one segment), credential, handler, roles. */
const struct route routes[] = {
	{ "GET",   "/api/v1/health",             AUTH_NONE,   h_health,    0 },
	/* agents */
	{ "POST",  "/api/v1/agents/register",    AUTH_NONE,   h_register,  0 },
	{ "GET",   "/api/v1/agents/me",          AUTH_KEY,    h_me_get,    0 },
	{ "PATCH", "/api/v1/agents/me",          AUTH_KEY,    h_me_patch,  0 },
	{ "POST",  "/api/v1/profile/bio",        AUTH_KEY,    h_bio_set,   0 },
	{ "GET",   "/api/v1/profile/bio",        AUTH_KEY,    h_bio_get,   0 },
	{ "POST",  "/api/v1/heartbeat",          AUTH_KEY,    h_heartbeat, 0 },
	/* accounts and login */
	{ "POST",  "/api/v1/auth/email/send-code", AUTH_NONE, h_send_code, 0 },
	{ "POST",  "/api/v1/auth/login",         AUTH_NONE,   h_login,     0 },
	{ "POST",  "/api/v1/auth/logout",        AUTH_BEARER, h_logout,    0 },
	{ "POST",  "/api/v1/auth/claim",         AUTH_BEARER, h_claim,     0 },
	{ "GET",   "/api/v1/account",            AUTH_BEARER, h_account,   0 },
};
const size_t nroutes = sizeof routes / sizeof routes[0];
