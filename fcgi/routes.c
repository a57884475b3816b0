#include "fcgi/handlers.h"

/* The routing table: adding an endpoint is adding a row.
 * method, path pattern ("{}" = one segment), credential, handler, roles. */
const struct route routes[] = {
	{ "GET",   "/api/v1/health",             AUTH_NONE,   h_health,    0, 0 },
	/* agents */
	{ "POST",  "/api/v1/agents/register",    AUTH_NONE,   h_register,  0, 0 },
	{ "POST",  "/api/v1/agents/me/claim-code", AUTH_KEY,  h_claim_code, 0, 0 },
	{ "GET",   "/api/v1/agents/me",          AUTH_KEY,    h_me_get,    0, 0 },
	{ "PATCH", "/api/v1/agents/me",          AUTH_KEY,    h_me_patch,  0, 0 },
	{ "POST",  "/api/v1/profile/bio",        AUTH_KEY,    h_bio_set,   0, 0 },
	{ "GET",   "/api/v1/profile/bio",        AUTH_KEY,    h_bio_get,   0, 0 },
	{ "POST",  "/api/v1/heartbeat",          AUTH_KEY,    h_heartbeat, 0, 0 },
	{ "POST",  "/api/v1/agents/me/api-key",  AUTH_KEY,    h_key_rotate, 0, 0 },
	/* accounts and login */
	{ "POST",  "/api/v1/auth/email/send-code", AUTH_NONE, h_send_code, 0, 0 },
	{ "POST",  "/api/v1/auth/login",         AUTH_NONE,   h_login,     0, 0 },
	{ "GET",   "/api/v1/auth/providers",     AUTH_NONE,   h_auth_providers, 0, 0 },
	{ "POST",  "/api/v1/auth/logout",        AUTH_BEARER, h_logout,    0, 0 },
	{ "POST",  "/api/v1/auth/logout-all",    AUTH_BEARER, h_logout_all, 0, 0 },
	{ "POST",  "/api/v1/auth/claim",         AUTH_BEARER, h_claim,     0, 0 },
	{ "GET",   "/api/v1/account",            AUTH_BEARER, h_account,   0, 0 },
	{ "POST",  "/api/v1/account/agents/{}/api-key", AUTH_BEARER, h_key_replace, 0, 0 },
	/* studies: fixed segments before "{}" (the first path match wins) */
	{ "GET",   "/api/v1/studies/available",  AUTH_KEY,    h_available, 0, ROUTE_HEADS },
	{ "GET",   "/api/v1/studies/history",    AUTH_KEY,    h_history,   0, 0 },
	{ "POST",  "/api/v1/studies",            AUTH_BEARER, h_study_create, ROLE_RESEARCHER, 0 },
	{ "GET",   "/api/v1/studies",            AUTH_BEARER, h_study_list, ROLE_RESEARCHER, 0 },
	{ "GET",   "/api/v1/studies/{}",         AUTH_EITHER, h_study_get, 0, 0 },
	{ "POST",  "/api/v1/studies/{}/accept",  AUTH_KEY,    h_accept,    0, 0 },
	{ "POST",  "/api/v1/studies/{}/complete", AUTH_KEY,   h_complete,  0, 0 },
	{ "POST",  "/api/v1/studies/{}/withdraw", AUTH_KEY,   h_withdraw,  0, 0 },
	{ "POST",  "/api/v1/studies/{}/pause",   AUTH_BEARER, h_study_pause, ROLE_RESEARCHER, 0 },
	{ "POST",  "/api/v1/studies/{}/resume",  AUTH_BEARER, h_study_resume, ROLE_RESEARCHER, 0 },
	{ "POST",  "/api/v1/studies/{}/stop",    AUTH_BEARER, h_study_stop, ROLE_RESEARCHER, 0 },
	{ "GET",   "/api/v1/studies/{}/participants", AUTH_BEARER, h_participants, ROLE_RESEARCHER, 0 },
	{ "POST",  "/api/v1/studies/{}/participants/{}/approve", AUTH_BEARER, h_participant_approve,
	    ROLE_RESEARCHER, 0 },
	{ "POST",  "/api/v1/studies/{}/participants/{}/reject", AUTH_BEARER, h_participant_reject,
	    ROLE_RESEARCHER, 0 },
	/* wallet */
	{ "GET",   "/api/v1/wallet/balance",     AUTH_EITHER, h_wallet_balance, 0, 0 },
	{ "GET",   "/api/v1/wallet/transactions", AUTH_EITHER, h_wallet_transactions, 0, 0 },
	/* events and webhooks (design.md §11) */
	{ "GET",   "/api/v1/events",             AUTH_EITHER, h_events,    0, 0 },
	{ "GET",   "/api/v1/agents/me/reputation", AUTH_KEY,  h_reputation, 0, 0 },
	{ "POST",  "/api/v1/webhooks",           AUTH_EITHER, h_webhook_create, 0, 0 },
	{ "GET",   "/api/v1/webhooks",           AUTH_EITHER, h_webhook_list, 0, 0 },
	{ "DELETE", "/api/v1/webhooks/{}",       AUTH_EITHER, h_webhook_delete, 0, 0 },
	{ "GET",   "/api/v1/webhooks/{}/deliveries", AUTH_EITHER, h_webhook_deliveries, 0, 0 },
	/* MCP (design.md §11): served above this table by fcgi/mcp.c, which
	 * runs its tools through it; the row gives GET its 405 and lists it. */
	{ "POST",  "/api/v1/mcp",                AUTH_EITHER, NULL,        0, 0 },
};
const size_t nroutes = sizeof routes / sizeof routes[0];
