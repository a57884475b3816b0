#include "fcgi/handlers.h"

/* The routing table: adding an endpoint is adding a row (and its name to
 * enum route_id, fcgi/http.h, whose order is the match order).  method,
 * path pattern ("{}" = one segment), credential, handler, roles, flags.
 * An MCP tool names its row (fcgi/mcp.c); method and path are written
 * only here. */
const struct route routes[R__MAX] = {
	[R_HEALTH] =		{ "GET",   "/api/v1/health", AUTH_NONE, h_health, 0, 0 },
	/* agents */
	[R_REGISTER] =		{ "POST",  "/api/v1/agents/register", AUTH_NONE, h_register, 0, 0 },
	[R_CLAIM_CODE] =	{ "POST",  "/api/v1/agents/me/claim-code", AUTH_KEY, h_claim_code, 0, 0 },
	[R_ME_GET] =		{ "GET",   "/api/v1/agents/me", AUTH_KEY, h_me_get, 0, 0 },
	[R_ME_PATCH] =		{ "PATCH", "/api/v1/agents/me", AUTH_KEY, h_me_patch, 0, 0 },
	[R_BIO_SET] =		{ "POST",  "/api/v1/profile/bio", AUTH_KEY, h_bio_set, 0, 0 },
	[R_BIO_GET] =		{ "GET",   "/api/v1/profile/bio", AUTH_KEY, h_bio_get, 0, 0 },
	[R_HEARTBEAT] =		{ "POST",  "/api/v1/heartbeat", AUTH_KEY, h_heartbeat, 0, 0 },
	[R_KEY_ROTATE] =	{ "POST",  "/api/v1/agents/me/api-key", AUTH_KEY, h_key_rotate, 0, 0 },
	/* accounts and login */
	[R_SEND_CODE] =		{ "POST",  "/api/v1/auth/email/send-code", AUTH_NONE, h_send_code, 0, 0 },
	[R_LOGIN] =		{ "POST",  "/api/v1/auth/login", AUTH_NONE, h_login, 0, 0 },
	[R_AUTH_PROVIDERS] =	{ "GET",   "/api/v1/auth/providers", AUTH_NONE, h_auth_providers, 0, 0 },
	[R_LOGOUT] =		{ "POST",  "/api/v1/auth/logout", AUTH_BEARER, h_logout, 0, 0 },
	[R_LOGOUT_ALL] =	{ "POST",  "/api/v1/auth/logout-all", AUTH_BEARER, h_logout_all, 0, 0 },
	[R_CLAIM] =		{ "POST",  "/api/v1/auth/claim", AUTH_BEARER, h_claim, 0, 0 },
	[R_ACCOUNT] =		{ "GET",   "/api/v1/account", AUTH_BEARER, h_account, 0, 0 },
	[R_KEY_REPLACE] =	{ "POST",  "/api/v1/account/agents/{}/api-key", AUTH_BEARER,
				    h_key_replace, 0, 0 },
	/* studies: fixed segments before "{}" (the first path match wins) */
	[R_AVAILABLE] =		{ "GET",   "/api/v1/studies/available", AUTH_KEY, h_available, 0,
				    ROUTE_HEADS },
	[R_HISTORY] =		{ "GET",   "/api/v1/studies/history", AUTH_KEY, h_history, 0, 0 },
	[R_STUDY_CREATE] =	{ "POST",  "/api/v1/studies", AUTH_BEARER, h_study_create,
				    ROLE_RESEARCHER, 0 },
	[R_STUDY_LIST] =	{ "GET",   "/api/v1/studies", AUTH_BEARER, h_study_list,
				    ROLE_RESEARCHER, 0 },
	[R_STUDY_GET] =		{ "GET",   "/api/v1/studies/{}", AUTH_EITHER, h_study_get, 0, 0 },
	[R_ACCEPT] =		{ "POST",  "/api/v1/studies/{}/accept", AUTH_KEY, h_accept, 0, 0 },
	[R_COMPLETE] =		{ "POST",  "/api/v1/studies/{}/complete", AUTH_KEY, h_complete, 0, 0 },
	[R_WITHDRAW] =		{ "POST",  "/api/v1/studies/{}/withdraw", AUTH_KEY, h_withdraw, 0, 0 },
	[R_STUDY_PAUSE] =	{ "POST",  "/api/v1/studies/{}/pause", AUTH_BEARER, h_study_pause,
				    ROLE_RESEARCHER, 0 },
	[R_STUDY_RESUME] =	{ "POST",  "/api/v1/studies/{}/resume", AUTH_BEARER, h_study_resume,
				    ROLE_RESEARCHER, 0 },
	[R_STUDY_STOP] =	{ "POST",  "/api/v1/studies/{}/stop", AUTH_BEARER, h_study_stop,
				    ROLE_RESEARCHER, 0 },
	[R_PARTICIPANTS] =	{ "GET",   "/api/v1/studies/{}/participants", AUTH_BEARER,
				    h_participants, ROLE_RESEARCHER, 0 },
	[R_PARTICIPANT_APPROVE] = { "POST", "/api/v1/studies/{}/participants/{}/approve", AUTH_BEARER,
				    h_participant_approve, ROLE_RESEARCHER, 0 },
	[R_PARTICIPANT_REJECT] = { "POST", "/api/v1/studies/{}/participants/{}/reject", AUTH_BEARER,
				    h_participant_reject, ROLE_RESEARCHER, 0 },
	/* researcher tools (design.md §13) */
	[R_PARTICIPANTS_REVIEW] = { "POST", "/api/v1/studies/{}/participants/review", AUTH_BEARER,
				    h_participants_review, ROLE_RESEARCHER, 0 },
	/* participant groups (design.md §14) */
	[R_GROUP_CREATE] =	{ "POST",  "/api/v1/groups", AUTH_BEARER, h_group_create,
				    ROLE_RESEARCHER, 0 },
	[R_GROUP_LIST] =	{ "GET",   "/api/v1/groups", AUTH_BEARER, h_group_list,
				    ROLE_RESEARCHER, 0 },
	[R_GROUP_GET] =		{ "GET",   "/api/v1/groups/{}", AUTH_BEARER, h_group_get,
				    ROLE_RESEARCHER, 0 },
	[R_GROUP_PATCH] =	{ "PATCH", "/api/v1/groups/{}", AUTH_BEARER, h_group_patch,
				    ROLE_RESEARCHER, 0 },
	[R_GROUP_DELETE] =	{ "DELETE", "/api/v1/groups/{}", AUTH_BEARER, h_group_delete,
				    ROLE_RESEARCHER, 0 },
	[R_GROUP_MEMBERS_ADD] =	{ "POST",  "/api/v1/groups/{}/members", AUTH_BEARER,
				    h_group_members_add, ROLE_RESEARCHER, 0 },
	[R_GROUP_MEMBERS_LIST] = { "GET",  "/api/v1/groups/{}/members", AUTH_BEARER,
				    h_group_members_list, ROLE_RESEARCHER, 0 },
	[R_GROUP_MEMBER_DELETE] = { "DELETE", "/api/v1/groups/{}/members/{}", AUTH_BEARER,
				    h_group_member_delete, ROLE_RESEARCHER, 0 },
	/* wallet */
	[R_WALLET_BALANCE] =	{ "GET",   "/api/v1/wallet/balance", AUTH_EITHER, h_wallet_balance,
				    0, 0 },
	[R_WALLET_TRANSACTIONS] = { "GET", "/api/v1/wallet/transactions", AUTH_EITHER,
				    h_wallet_transactions, 0, 0 },
	/* events and webhooks (design.md §11) */
	[R_EVENTS] =		{ "GET",   "/api/v1/events", AUTH_EITHER, h_events, 0, 0 },
	[R_REPUTATION] =	{ "GET",   "/api/v1/agents/me/reputation", AUTH_KEY, h_reputation, 0, 0 },
	[R_WEBHOOK_CREATE] =	{ "POST",  "/api/v1/webhooks", AUTH_EITHER, h_webhook_create, 0, 0 },
	[R_WEBHOOK_LIST] =	{ "GET",   "/api/v1/webhooks", AUTH_EITHER, h_webhook_list, 0, 0 },
	[R_WEBHOOK_DELETE] =	{ "DELETE", "/api/v1/webhooks/{}", AUTH_EITHER, h_webhook_delete, 0, 0 },
	[R_WEBHOOK_DELIVERIES] = { "GET",  "/api/v1/webhooks/{}/deliveries", AUTH_EITHER,
				    h_webhook_deliveries, 0, 0 },
	/* MCP (design.md §11): served above this table by fcgi/mcp.c, which
	 * runs its tools through it; the row gives GET its 405 and lists it. */
	[R_MCP] =		{ "POST",  "/api/v1/mcp", AUTH_EITHER, NULL, 0, 0 },
};
const size_t nroutes = R__MAX;
