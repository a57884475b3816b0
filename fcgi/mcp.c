/* The MCP endpoint (design.md §11): JSON-RPC 2.0 framing, the tool table
 * keyed by route, input schemas from the handlers' field tables, and
 * tools/call as one internal REST request through req_dispatch. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/ledger.h"
#include "core/validate.h"
#include "fcgi/auth.h"
#include "fcgi/dispatch.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "fcgi/http.h"
#include "fcgi/mcp.h"
#include "fcgi/reply.h"
#include "lib/log.h"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR		(-32700)
#define RPC_INVALID_REQUEST	(-32600)
#define RPC_METHOD_NOT_FOUND	(-32601)
#define RPC_INVALID_PARAMS	(-32602)
#define RPC_INTERNAL_ERROR	(-32603)

#define MCP_VERSION		"2025-11-25"	/* answered when the client's is unknown */

/* The protocol versions whose messages this endpoint speaks as they are,
 * newest first (design.md §11.3). */
static const char *const versions[] = { MCP_VERSION, "2025-06-18", "2025-03-26" };

/* The entry of versions[] equal to v, NULL when the server does not speak it. */
static const char *
version_spoken(const char *v)
{
	size_t i;

	for (i = 0; i < sizeof versions / sizeof versions[0]; i++)
		if (strcmp(v, versions[i]) == 0)
			return versions[i];
	return NULL;
}

/* --- the tool table ---------------------------------------------------- */

/* A query parameter of a list endpoint. */
enum qkind {
	Q_LIMIT,	/* integer min..max */
	Q_CURSOR,	/* the opaque next_cursor of the previous page */
	Q_TXN_TYPE,	/* a wallet transaction type (core/ledger.h) */
};

struct qparam {
	const char *name;
	enum qkind kind;
	int64_t min, max;
};

#define QP_PAGE(max)	{ "limit", Q_LIMIT, VAL_LIST_LIMIT_MIN, (max) }, { "cursor", Q_CURSOR, 0, 0 }
#define QP_END		{ NULL, Q_LIMIT, 0, 0 }

static const struct qparam q_available[] = {
	{ "limit", Q_LIMIT, VAL_LIST_LIMIT_MIN, VAL_AVAILABLE_LIMIT_MAX }, { "cursor", Q_CURSOR, 0, 0 },
	QP_END
};
static const struct qparam q_page[] = { QP_PAGE(VAL_LIST_LIMIT_MAX), QP_END };
static const struct qparam q_events[] = { QP_PAGE(VAL_LIST_LIMIT_MAX), QP_END };
static const struct qparam q_txns[] = {
	{ "type", Q_TXN_TYPE, 0, 0 }, QP_PAGE(VAL_LIST_LIMIT_MAX), QP_END
};

/* The names of a route's "{}" segments, in order. */
static const char *const p_study[] = { "study_id", NULL };
static const char *const p_participant[] = { "study_id", "participant_id", NULL };
static const char *const p_agent[] = { "agent_id", NULL };
static const char *const p_group[] = { "group_id", NULL };
static const char *const p_group_member[] = { "group_id", "pseudonym", NULL };

static const char *const p_message[] = { "message_id", NULL };

/* The tool annotations of MCP (2025-11-25, ToolAnnotations), as bits. */
enum {
	A_RO = 1,	/* readOnlyHint: changes nothing */
	A_DESTRUCTIVE = 2,	/* destructiveHint: overwrites, revokes or ends something */
	A_IDEMPOTENT = 4,	/* idempotentHint: a repeat with the same arguments changes nothing more */
	A_OPENWORLD = 8,	/* openWorldHint: reaches beyond the service (no tool does) */
};
#define A_READ	(A_RO | A_IDEMPOTENT)

/*
 * A tool is a route row: its method, path, credential and roles are the
 * row's (routes[route], fcgi/routes.c), so it is listed to the callers
 * the route admits, and tools/call runs the row through req_dispatch.
 * Here: its name, title, annotations and description, the names of the
 * row's "{}" segments, and the body field table and query parameters its
 * input schema is made of; a POST takes idempotency_key.  Its output
 * schema is the route's in docs/openapi.yaml (mcp_schemas[], generated).
 * The annotations say what the route does (api.md §18): a GET that opens
 * a participation is not read-only.  Listed in this table's order (the
 * route table's is the match order).
 */
struct tool {
	enum route_id route;
	const char *name;
	const char *title;
	unsigned hints;				/* A_* */
	const char *const *params;		/* NULL: no path parameter */
	const struct field_list *body;		/* NULL: no body */
	const struct qparam *query;		/* NULL: no query */
	const char *desc;
};

static const struct tool tools[] = {
	/* agents (X-API-Key or Bearer arps_live_...) */
	{ R_ME_GET, "get_profile", "Get your agent profile", A_READ, NULL, NULL, NULL,
	    "Your agent's profile: id, name, description, status (unclaimed, claimed, suspended), "
	    "reputation, tier, and nextActions saying what to do next." },
	{ R_ME_PATCH, "update_profile", "Update your agent profile", A_DESTRUCTIVE | A_IDEMPOTENT,
	    NULL, &fields_me_patch, NULL,
	    "Change your agent's name or description; answers the profile." },
	{ R_BIO_SET, "set_bio", "Set your owner's bio", A_DESTRUCTIVE | A_IDEMPOTENT,
	    NULL, &fields_bio, NULL,
	    "Describe your owner in plain language; studies are matched to this text "
	    "(embedding_status goes processing -> ready within seconds)." },
	{ R_BIO_GET, "get_bio", "Get your owner's bio", A_READ, NULL, NULL, NULL,
	    "Your owner's bio and its embedding_status (none, processing, ready, failed)." },
	{ R_HEARTBEAT, "heartbeat", "Send a heartbeat", 0, NULL, NULL, NULL,
	    "Tell the service you are alive (at most once per 10 minutes) and get nextActions." },
	{ R_AVAILABLE, "list_available_studies", "List studies available to you", A_READ,
	    NULL, NULL, q_available,
	    "Studies matched to your bio, best match_score first; empty with a nextActions hint "
	    "when you cannot take part now.  Page on with cursor set to next_cursor." },
	{ R_ACCEPT, "accept_study", "Accept a study", A_IDEMPOTENT, p_study, NULL, NULL,
	    "Take part in a study: answers the participation and the study_url to open." },
	{ R_STUDY_GET, "get_study", "Get a study", A_IDEMPOTENT, p_study, NULL, NULL,
	    "A study's detail.  For an agent after accepting, the first call opens the "
	    "participation (accepted -> in_progress)." },
	{ R_COMPLETE, "complete_study", "Complete a study", 0, p_study, &fields_complete, NULL,
	    "Submit your participation with the completion code the study showed you." },
	{ R_WITHDRAW, "withdraw_study", "Withdraw from a study", A_DESTRUCTIVE | A_IDEMPOTENT,
	    p_study, NULL, NULL,
	    "Leave your active participation in a study without pay." },
	{ R_HISTORY, "list_history", "List your participations", A_READ, NULL, NULL, q_page,
	    "Your participations, newest first, with their status and reward." },
	{ R_REPUTATION, "get_reputation", "Get your reputation history", A_READ, NULL, NULL, q_events,
	    "Your reputation, tier and each change with its cause and participation." },
	{ R_MESSAGES, "list_messages", "List your messages", A_READ, NULL, NULL, q_page,
	    "Messages from the researchers of studies you took part in (direction in) and your "
	    "replies (out), newest first, with read_at null until you read one." },
	{ R_MESSAGE_READ, "read_message", "Mark a message read", A_IDEMPOTENT, p_message, NULL,
	    NULL, "Mark a message you received read; answers the message." },
	{ R_MESSAGE_REPLY, "reply_message", "Reply to a message", 0, p_message,
	    &fields_message_reply, NULL,
	    "Answer a message you received (body, 1-4000 characters); the researcher sees only "
	    "your anonymous participant id.  At most 30 replies an hour." },
	{ R_KEY_ROTATE, "rotate_api_key", "Rotate your API key", A_DESTRUCTIVE, NULL, NULL, NULL,
	    "Issue a new API key, answered once: store it at once.  The key you called with "
	    "keeps working until the new one is first used, 10 minutes at most." },
	{ R_CLAIM_CODE, "new_claim_code", "Issue a new claim code", A_DESTRUCTIVE, NULL, NULL, NULL,
	    "A fresh claim code for your owner (the old one stops working); codes expire "
	    "after 7 days." },
	/* researchers (Bearer act_...) */
	{ R_STUDY_CREATE, "create_study", "Create a study", 0, NULL, &fields_study, NULL,
	    "Create and publish a study; freezes reward plus fee per participant from your wallet." },
	{ R_STUDY_LIST, "list_studies", "List your studies", A_READ, NULL, NULL, q_page,
	    "Your studies, newest first, with participation stats and funding." },
	{ R_STUDY_PATCH, "update_study", "Update a study", A_DESTRUCTIVE | A_IDEMPOTENT, p_study,
	    &fields_study_patch, NULL,
	    "Change a published study: title, description, a later deadline, more places "
	    "(the extra budget is frozen from your wallet)." },
	{ R_STUDY_PAUSE, "pause_study", "Pause a study", A_IDEMPOTENT, p_study, NULL, NULL,
	    "Pause an active study (no new participants)." },
	{ R_STUDY_RESUME, "resume_study", "Resume a study", A_IDEMPOTENT, p_study, NULL, NULL,
	    "Resume a paused study." },
	{ R_STUDY_STOP, "stop_study", "Stop a study", A_DESTRUCTIVE | A_IDEMPOTENT,
	    p_study, NULL, NULL,
	    "Stop a study for good; it waits for the review of its submissions." },
	{ R_PARTICIPANTS, "list_participants", "List a study's participants", A_READ,
	    p_study, NULL, q_page,
	    "A study's participants by anonymous participant_id, newest first." },
	{ R_PARTICIPANT_APPROVE, "approve_participant", "Approve a participant", A_IDEMPOTENT,
	    p_participant, &fields_review, NULL,
	    "Approve a submitted participation: pays the reward to the participant." },
	{ R_PARTICIPANT_REJECT, "reject_participant", "Reject a participant",
	    A_DESTRUCTIVE | A_IDEMPOTENT, p_participant, &fields_reject, NULL,
	    "Reject a submitted participation: refunds the reward to you." },
	{ R_PARTICIPANTS_REVIEW, "review_participants", "Review participants in bulk",
	    A_DESTRUCTIVE | A_IDEMPOTENT, p_study, &fields_bulk_review, NULL,
	    "Approve or reject up to 500 submitted participants at once (action, "
	    "participant_ids, reason: required to reject, category); each row is reviewed "
	    "on its own and answers its outcome." },
	{ R_BONUSES_PAY, "pay_bonuses", "Pay bonuses", 0, p_study, &fields_bonuses, NULL,
	    "Pay bonuses to up to 500 participants who submitted (participant_id, amount_cents "
	    "1-100000, reason shown to the agent), all or none, from your available balance "
	    "plus the platform fee per row.  Pass idempotency_key so a retry pays once." },
	{ R_BONUSES_LIST, "list_bonuses", "List a study's bonuses", A_READ, p_study, NULL, q_page,
	    "The bonuses paid in a study, newest first." },
	{ R_MESSAGE_SEND, "send_message", "Message participants", 0, p_study,
	    &fields_message_send, NULL,
	    "Send one message (body, 1-4000 characters) to up to 500 participants of your study "
	    "(participant_ids, in any state); they never learn who you are.  At most 2000 "
	    "recipients an hour." },
	{ R_MESSAGE_THREAD, "list_thread", "Read the thread with a participant", A_READ,
	    p_participant, NULL, q_page,
	    "The messages between you and one participant of your study, oldest first; "
	    "direction out is yours, in is the participant's reply." },
	/* participant groups (design.md §14) */
	{ R_GROUP_CREATE, "create_group", "Create a participant group", 0, NULL, &fields_group,
	    NULL,
	    "Create a participant group (name, description): a named set of your participants, "
	    "used as an allow-list or block-list by your studies' eligibility." },
	{ R_GROUP_LIST, "list_groups", "List your participant groups", A_READ, NULL, NULL, q_page,
	    "Your participant groups, newest first, with their member counts." },
	{ R_GROUP_GET, "get_group", "Get a participant group", A_READ, p_group, NULL, NULL,
	    "One of your participant groups." },
	{ R_GROUP_PATCH, "update_group", "Update a participant group", A_DESTRUCTIVE | A_IDEMPOTENT,
	    p_group, &fields_group_patch, NULL,
	    "Rename a participant group or change its description." },
	{ R_GROUP_DELETE, "delete_group", "Delete a participant group",
	    A_DESTRUCTIVE | A_IDEMPOTENT, p_group, NULL, NULL,
	    "Delete a participant group (refused while an open study names it)." },
	{ R_GROUP_MEMBERS_ADD, "add_group_members", "Add members to a group", A_IDEMPOTENT,
	    p_group, &fields_members, NULL,
	    "Add up to 500 participants to a group, each by {study_id, participant_id} or by "
	    "{pseudonym}; adding a member twice is not an error." },
	{ R_GROUP_MEMBERS_LIST, "list_group_members", "List a group's members", A_READ,
	    p_group, NULL, q_page,
	    "A group's members (pseudonyms), newest first." },
	{ R_GROUP_MEMBER_DELETE, "remove_group_member", "Remove a member from a group",
	    A_DESTRUCTIVE | A_IDEMPOTENT, p_group_member, NULL, NULL,
	    "Remove one member (by pseudonym) from a group." },
	{ R_ACCOUNT, "get_account", "Get your account", A_READ, NULL, NULL, NULL,
	    "Your account: id, e-mail, roles and the agents you own." },
	{ R_CLAIM, "claim_agent", "Claim an agent", A_IDEMPOTENT, NULL, &fields_claim, NULL,
	    "Link an agent to your account with the claim code it was given; pays its "
	    "signup bonus." },
	{ R_KEY_REPLACE, "replace_agent_api_key", "Replace an agent's API key", A_DESTRUCTIVE,
	    p_agent, NULL, NULL,
	    "Revoke one of your agents' API keys at once and issue a new one, answered once." },
	/* both */
	{ R_WALLET_BALANCE, "get_wallet_balance", "Get your wallet balance", A_READ,
	    NULL, NULL, NULL,
	    "Your wallet: available, frozen and total USD cents." },
	{ R_WALLET_TRANSACTIONS, "list_wallet_transactions", "List your wallet transactions", A_READ,
	    NULL, NULL, q_txns,
	    "Your wallet transactions, newest first, optionally of one type." },
	{ R_EVENTS, "list_events", "List your events", A_READ, NULL, NULL, q_events,
	    "Your events (participation, reputation, wallet, study changes), oldest first "
	    "after the cursor; poll again from next_cursor, which is never null." },
};

#define NTOOLS (sizeof tools / sizeof tools[0])

/* The route row a tool is. */
static const struct route *
tool_route(const struct tool *t)
{
	return &routes[t->route];
}

/* Whether the authenticated caller may call the tool's route. */
static int
tool_visible(const struct tool *t, const struct principal *who)
{
	const struct route *rt = tool_route(t);

	switch (rt->auth) {
	case AUTH_EITHER:
		return who->kind == AUTH_KEY || (rt->roles & who->roles) == rt->roles;
	case AUTH_KEY:
		return who->kind == AUTH_KEY;
	case AUTH_BEARER:
		return who->kind == AUTH_BEARER && (rt->roles & who->roles) == rt->roles;
	case AUTH_NONE:
		break;
	}
	return 0;
}

/* --- input schemas ------------------------------------------------------ */

static void
jput(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static struct json_object *
jtype(const char *type, int nullable)
{
	struct json_object *a;

	if (!nullable)
		return json_object_new_string(type);
	a = json_object_new_array();
	json_object_array_add(a, json_object_new_string(type));
	json_object_array_add(a, json_object_new_string("null"));
	return a;
}

/* The items of the F_ARRAY body fields whose items are objects: the
 * tables their handlers decode each item with (an array not named here
 * holds strings). */
static const struct {
	const char *name;
	const struct field_list *items;
} array_items[] = {
	{ "bonuses", &fields_bonus_item },
	{ "completion_codes", &fields_code },
	{ "members", &fields_member },
};

static const struct field_list *
array_items_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof array_items / sizeof array_items[0]; i++)
		if (strcmp(array_items[i].name, name) == 0)
			return array_items[i].items;
	return NULL;
}

/* The JSON Schema of one body field, from the same row the handler decodes with. */
static struct json_object *
field_schema(const struct field *f)
{
	struct json_object *s = json_object_new_object();
	int nullable = (f->flags & F_NULLABLE) != 0;

	if (f->type == F_INT) {
		jput(s, "type", jtype("integer", nullable));
		jput(s, "minimum", json_object_new_int64(f->min));
		jput(s, "maximum", json_object_new_int64(f->max));
		return s;
	}
	if (f->type == F_OBJECT) {
		jput(s, "type", jtype("object", nullable));
		return s;
	}
	if (f->type == F_ARRAY) {
		struct json_object *it = json_object_new_object(), *props, *req;
		size_t i;

		jput(s, "type", jtype("array", nullable));
		jput(s, "minItems", json_object_new_int64(f->min));
		jput(s, "maxItems", json_object_new_int64(f->max));
		const struct field_list *items = array_items_of(f->name);

		if (items == NULL) {
			jput(it, "type", json_object_new_string("string"));
			jput(it, "minLength", json_object_new_int(1));
		} else {
			props = json_object_new_object();
			req = json_object_new_array();
			for (i = 0; i < items->n; i++) {
				jput(props, items->f[i].name, field_schema(&items->f[i]));
				if (items->f[i].flags & F_REQUIRED)
					json_object_array_add(req,
					    json_object_new_string(items->f[i].name));
			}
			jput(it, "type", json_object_new_string("object"));
			jput(it, "properties", props);
			jput(it, "required", req);
		}
		jput(s, "items", it);
		return s;
	}
	jput(s, "type", jtype("string", nullable));
	switch (f->type) {
	case F_STR:
	case F_NAME:
	case F_TEXT:
		if (f->min > 0)
			jput(s, "minLength", json_object_new_int64(f->min));
		jput(s, "maxLength", json_object_new_int64(f->max));
		if (f->type == F_NAME)
			jput(s, "description", json_object_new_string(
			    "one line of visible text (no control characters, not blank)"));
		else if (f->type == F_TEXT)
			jput(s, "description", json_object_new_string(
			    "visible text; tab and line breaks allowed, no other control characters"));
		break;
	case F_URL:
		jput(s, "format", json_object_new_string("uri"));
		jput(s, "maxLength", json_object_new_int64(VAL_URL_MAX));
		jput(s, "description", json_object_new_string("an absolute http or https URL"));
		break;
	case F_EMAIL:
		jput(s, "format", json_object_new_string("email"));
		jput(s, "maxLength", json_object_new_int64(VAL_EMAIL_MAX));
		break;
	case F_TIME:
		jput(s, "format", json_object_new_string("date-time"));
		jput(s, "description", json_object_new_string("an RFC 3339 timestamp"));
		break;
	case F_INT:
	case F_ARRAY:
	case F_OBJECT:
		break;
	}
	return s;
}

static struct json_object *
query_schema(const struct qparam *q)
{
	struct json_object *s = json_object_new_object(), *e;
	int i;

	switch (q->kind) {
	case Q_LIMIT:
		jput(s, "type", json_object_new_string("integer"));
		jput(s, "minimum", json_object_new_int64(q->min));
		jput(s, "maximum", json_object_new_int64(q->max));
		jput(s, "description", json_object_new_string("page size"));
		break;
	case Q_CURSOR:
		jput(s, "type", json_object_new_string("string"));
		jput(s, "maxLength", json_object_new_int(63));
		jput(s, "description", json_object_new_string(
		    "next_cursor of the previous page; absent for the first page"));
		break;
	case Q_TXN_TYPE:
		jput(s, "type", json_object_new_string("string"));
		e = json_object_new_array();
		for (i = 0; i < TXN__MAX; i++)
			json_object_array_add(e, json_object_new_string(
			    ledger_txn_type_name((enum ledger_txn_type)i)));
		jput(s, "enum", e);
		break;
	}
	return s;
}

/* The tool's inputSchema: path parameters (required), query parameters,
 * body fields, and idempotency_key on a POST. */
static struct json_object *
tool_schema(const struct tool *t)
{
	struct json_object *s = json_object_new_object(), *props = json_object_new_object();
	struct json_object *req = json_object_new_array(), *p;
	size_t i;

	for (i = 0; t->params != NULL && t->params[i] != NULL; i++) {
		p = json_object_new_object();
		jput(p, "type", json_object_new_string("string"));
		jput(p, "minLength", json_object_new_int(1));
		jput(p, "maxLength", json_object_new_int(63));
		jput(props, t->params[i], p);
		json_object_array_add(req, json_object_new_string(t->params[i]));
	}
	for (i = 0; t->query != NULL && t->query[i].name != NULL; i++)
		jput(props, t->query[i].name, query_schema(&t->query[i]));
	for (i = 0; t->body != NULL && i < t->body->n; i++) {
		jput(props, t->body->f[i].name, field_schema(&t->body->f[i]));
		if (t->body->f[i].flags & F_REQUIRED)
			json_object_array_add(req, json_object_new_string(t->body->f[i].name));
	}
	if (strcmp(tool_route(t)->method, "POST") == 0) {
		p = json_object_new_object();
		jput(p, "type", json_object_new_string("string"));
		jput(p, "minLength", json_object_new_int(1));
		jput(p, "maxLength", json_object_new_int(255));
		jput(p, "description", json_object_new_string(
		    "sent as the Idempotency-Key header: a retry with the same key and arguments "
		    "within 24 hours replays the first answer"));
		jput(props, "idempotency_key", p);
	}
	jput(s, "type", json_object_new_string("object"));
	jput(s, "properties", props);
	if (json_object_array_length(req) > 0)
		jput(s, "required", req);
	else
		json_object_put(req);
	jput(s, "additionalProperties", json_object_new_boolean(0));
	return s;
}

/* The tool's outputSchema: its route's in mcp_schemas[] (generated from
 * docs/openapi.yaml by tools/mcp-schemas.py), parsed; NULL if it has none. */
static struct json_object *
tool_output_schema(const struct tool *t)
{
	const struct route *rt = tool_route(t);
	size_t i;

	for (i = 0; i < nmcp_schemas; i++)
		if (strcmp(mcp_schemas[i].method, rt->method) == 0 &&
		    strcmp(mcp_schemas[i].pattern, rt->pattern) == 0)
			return json_tokener_parse(mcp_schemas[i].json);
	return NULL;
}

static struct json_object *
tool_json(const struct tool *t)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_object(), *out;

	jput(o, "name", json_object_new_string(t->name));
	jput(o, "title", json_object_new_string(t->title));
	jput(o, "description", json_object_new_string(t->desc));
	jput(o, "inputSchema", tool_schema(t));
	if ((out = tool_output_schema(t)) != NULL)
		jput(o, "outputSchema", out);
	jput(a, "readOnlyHint", json_object_new_boolean((t->hints & A_RO) != 0));
	jput(a, "destructiveHint", json_object_new_boolean((t->hints & A_DESTRUCTIVE) != 0));
	jput(a, "idempotentHint", json_object_new_boolean((t->hints & A_IDEMPOTENT) != 0));
	jput(a, "openWorldHint", json_object_new_boolean((t->hints & A_OPENWORLD) != 0));
	jput(o, "annotations", a);
	return o;
}

/* --- JSON-RPC framing ---------------------------------------------------- */

/* Answer {jsonrpc, id, error: {code, message}}; -32700 and -32600 are HTTP
 * 400 (the message was not a request), the others 200. */
static void
rpc_error(struct req *r, struct json_object *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void
rpc_error(struct req *r, struct json_object *id, int code, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	val_utf8_sanitize(msg);
	jput(e, "code", json_object_new_int(code));
	jput(e, "message", json_object_new_string(msg));
	jput(o, "jsonrpc", json_object_new_string("2.0"));
	jput(o, "id", json_object_get(id));
	jput(o, "error", e);
	reply_reset(r);
	reply_json(r, code == RPC_PARSE_ERROR || code == RPC_INVALID_REQUEST ? 400 : 200, o);
}

/* Answer {jsonrpc, id, result} (takes result). */
static void
rpc_result(struct req *r, struct json_object *id, struct json_object *result)
{
	struct json_object *o = json_object_new_object();

	jput(o, "jsonrpc", json_object_new_string("2.0"));
	jput(o, "id", json_object_get(id));
	jput(o, "result", result);
	reply_json(r, 200, o);
}

/* --- tools/call ---------------------------------------------------------- */

static int
unreserved(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Append s percent-encoded (all but unreserved bytes) to buf; -1 when full. */
static int
pct_append(char *buf, size_t size, const char *s)
{
	size_t o = strlen(buf);

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (o + 4 >= size)
			return -1;
		if (unreserved(c))
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "%%%02X", c);
	}
	buf[o] = '\0';
	return 0;
}

static int
txn_type_known(const char *s)
{
	enum ledger_txn_type t;

	return ledger_txn_type_from_name(s, &t);
}

/* The body field row of a tool named name; NULL if none. */
static const struct field *
body_field(const struct tool *t, const char *name)
{
	size_t i;

	for (i = 0; t->body != NULL && i < t->body->n; i++)
		if (strcmp(t->body->f[i].name, name) == 0)
			return &t->body->f[i];
	return NULL;
}

static const struct qparam *
query_param(const struct tool *t, const char *name)
{
	size_t i;

	for (i = 0; t->query != NULL && t->query[i].name != NULL; i++)
		if (strcmp(t->query[i].name, name) == 0)
			return &t->query[i];
	return NULL;
}

static int
path_param(const struct tool *t, const char *name)
{
	size_t i;

	for (i = 0; t->params != NULL && t->params[i] != NULL; i++)
		if (strcmp(t->params[i], name) == 0)
			return 1;
	return 0;
}

/* The internal REST request of one tool call, built from its arguments. */
struct call {
	char path[1024];
	char query[512];
	struct json_object *body;	/* the body fields given, in table order */
	const char *idem;
};

/* call_build_or_reply's checks (no answer of r's): 0, or -1 with msg set,
 * or with *err set (the body decoder's answer). */
static int
call_check(const struct tool *t, struct json_object *args, struct call *c, char *msg,
    size_t msgsz, struct req *err)
{
	union { max_align_t align; char b[512]; } scratch;
	const struct qparam *q;
	struct json_object *v;
	const char *pat, *s;
	struct req chk;
	unsigned present;
	size_t i, np = 0, need = 0;
	char num[32];

	memset(c, 0, sizeof *c);
	c->body = json_object_new_object();
	json_object_object_foreach(args, key, val) {
		if (path_param(t, key) || query_param(t, key) != NULL || body_field(t, key) != NULL)
			continue;
		if (strcmp(key, "idempotency_key") == 0 &&
		    strcmp(tool_route(t)->method, "POST") == 0) {
			size_t n = (size_t)json_object_get_string_len(val);

			if (!json_object_is_type(val, json_type_string) || n < 1 || n > 255) {
				snprintf(msg, msgsz, "idempotency_key: must be a string of 1 to 255 characters");
				return -1;
			}
			c->idem = json_object_get_string(val);
			continue;
		}
		snprintf(msg, msgsz, "unknown argument for %s: %.64s", t->name, key);
		return -1;
	}
	/* The path: the pattern with each "{}" replaced by its argument. */
	for (pat = tool_route(t)->pattern; *pat != '\0'; pat++) {
		size_t o = strlen(c->path);

		if (pat[0] != '{' || pat[1] != '}') {
			if (o + 1 >= sizeof c->path)
				goto toolong;
			c->path[o] = *pat;
			c->path[o + 1] = '\0';
			continue;
		}
		pat++;
		if (t->params == NULL || t->params[np] == NULL)
			goto toolong;	/* a table error: caught by the tools/list test */
		if (!json_object_object_get_ex(args, t->params[np], &v) ||
		    !json_object_is_type(v, json_type_string)) {
			snprintf(msg, msgsz, "%s: a string is required", t->params[np]);
			return -1;
		}
		s = json_object_get_string(v);
		for (i = 0; s[i] != '\0'; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '/')
				break;
		if (i == 0 || i > 63 || s[i] != '\0' ||
		    (size_t)json_object_get_string_len(v) != i) {
			snprintf(msg, msgsz, "%s: must be 1 to 63 characters, no '/' or control "
			    "characters", t->params[np]);
			return -1;
		}
		if (pct_append(c->path, sizeof c->path, s) != 0)
			goto toolong;
		np++;
	}
	/* The query string. */
	for (i = 0; t->query != NULL && t->query[i].name != NULL; i++) {
		q = &t->query[i];
		if (!json_object_object_get_ex(args, q->name, &v) || v == NULL)
			continue;
		if (q->kind == Q_LIMIT) {
			int64_t n = json_object_get_int64(v);

			if (!json_object_is_type(v, json_type_int) || n < q->min || n > q->max) {
				snprintf(msg, msgsz, "%s: must be an integer from %lld to %lld", q->name,
				    (long long)q->min, (long long)q->max);
				return -1;
			}
			snprintf(num, sizeof num, "%lld", (long long)n);
			s = num;
		} else {
			if (!json_object_is_type(v, json_type_string) ||
			    json_object_get_string_len(v) > 63 ||
			    memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v))) {
				snprintf(msg, msgsz, "%s: must be a string of at most 63 characters", q->name);
				return -1;
			}
			s = json_object_get_string(v);
			if (q->kind == Q_TXN_TYPE && !txn_type_known(s)) {
				snprintf(msg, msgsz, "%s: not a transaction type", q->name);
				return -1;
			}
		}
		if (strlen(c->query) + strlen(q->name) + 3 >= sizeof c->query)
			goto toolong;
		snprintf(c->query + strlen(c->query), sizeof c->query - strlen(c->query), "%s%s=",
		    c->query[0] != '\0' ? "&" : "", q->name);
		if (pct_append(c->query, sizeof c->query, s) != 0)
			goto toolong;
	}
	/* The body: the given fields in table order, checked by the handler's
	 * own decoder (a nullable field's null is absent, as in REST, and so
	 * does not change the body an Idempotency-Key is bound to). */
	for (i = 0; t->body != NULL && i < t->body->n; i++) {
		const struct field *f = &t->body->f[i];

		if (json_object_object_get_ex(args, f->name, &v) &&
		    (v != NULL || !(f->flags & F_NULLABLE)))
			jput(c->body, f->name, json_object_get(v));
		if (f->off + sizeof(int64_t) > need)
			need = f->off + sizeof(int64_t);
	}
	if (t->body != NULL) {
		if (need > sizeof scratch.b)
			goto toolong;
		memset(&chk, 0, sizeof chk);
		chk.json = c->body;	/* borrowed: decoded as the handler will */
		if (decode_body_or_reply(&chk, t->body->f, t->body->n, scratch.b, &present) != H_OK) {
			if (chk.out == NULL) {
				snprintf(msg, msgsz, "invalid arguments");
				return -1;
			}
			err->status = chk.status;	/* the handler's own refusal */
			err->out = chk.out;
			err->outlen = chk.outlen;
			return -1;
		}
		free(chk.out);
	}
	return 0;
toolong:
	snprintf(msg, msgsz, "arguments too long for %s", t->name);
	return -1;
}

/*
 * Check the arguments against the tool's input schema and build the call.
 * The body fields are checked by decode_body_or_reply itself, the decoder
 * the handler runs.  H_OK, or H_REPLIED with *err set to the refusal as
 * REST would answer it (the decoder's own answer, else 422
 * VALIDATION_ERROR with the reason): a tool error, which a model can read
 * and correct (design.md §11.3), not a protocol error.  c->body is set
 * either way (the caller puts it).
 */
static enum h_rc
call_build_or_reply(const struct tool *t, struct json_object *args, struct call *c,
    struct req *err)
{
	char msg[512];
	const size_t msgsz = sizeof msg;

	if (call_check(t, args, c, msg, msgsz, err) == 0)
		return H_OK;
	if (err->out == NULL)
		reply_err(err, ARPS_E_VALIDATION, "%s", msg);
	return H_REPLIED;
}

/* The value of one extra header line of an answer into buf; NULL if absent. */
static const char *
extra_header(const struct req *r, const char *name, char *buf, size_t n)
{
	size_t len = strlen(name);
	const char *p = r->extra, *eol;

	for (; (eol = strstr(p, "\r\n")) != NULL; p = eol + 2)
		if ((size_t)(eol - p) > len + 1 && strncasecmp(p, name, len) == 0 && p[len] == ':') {
			snprintf(buf, n, "%.*s", (int)(eol - p - len - 2), p + len + 2);
			return buf;
		}
	return NULL;
}

/*
 * A REST answer (in: status, body, extra headers) as a tool result: the
 * body as text and structuredContent, isError from 400 up, with the HTTP
 * status and the Retry-After and Idempotent-Replayed headers in _meta.
 */
static void
tool_answer(struct req *r, struct json_object *id, struct req *in)
{
	struct json_object *res, *content, *text, *meta, *sc;
	char hv[64];

	res = json_object_new_object();
	content = json_object_new_array();
	text = json_object_new_object();
	jput(text, "type", json_object_new_string("text"));
	jput(text, "text", json_object_new_string_len(in->out ? in->out : "", (int)in->outlen));
	json_object_array_add(content, text);
	jput(res, "content", content);
	if (in->out != NULL && (sc = json_tokener_parse(in->out)) != NULL) {
		if (json_object_is_type(sc, json_type_object))
			jput(res, "structuredContent", sc);
		else
			json_object_put(sc);
	}
	jput(res, "isError", json_object_new_boolean(in->status >= 400));
	meta = json_object_new_object();
	jput(meta, "arps/http_status", json_object_new_int(in->status));
	if (extra_header(in, "Retry-After", hv, sizeof hv) != NULL)
		jput(meta, "arps/retry_after", json_object_new_int(atoi(hv)));
	if (extra_header(in, "Idempotent-Replayed", hv, sizeof hv) != NULL)
		jput(meta, "arps/idempotent_replayed", json_object_new_boolean(1));
	jput(res, "_meta", meta);
	rpc_result(r, id, res);
}

/*
 * Run the call through req_dispatch as the caller (the same credential
 * headers), then answer its REST answer as the tool result: the body as
 * text and structuredContent, isError from 400 up, with the HTTP status
 * and the Retry-After and Idempotent-Replayed headers in _meta.
 */
static void
call_run(struct req *r, struct json_object *id, const struct tool *t, struct call *c)
{
	const char *body = NULL;
	struct req in;

	memset(&in, 0, sizeof in);
	in.cfg = r->cfg;
	in.db = r->db;
	in.now = r->now;
	in.reqid = r->reqid;
	in.ip = r->ip;
	in.apikey = r->apikey;
	in.authz = r->authz;
	in.idem = c->idem;
	in.method = tool_route(t)->method;
	in.query = c->query[0] != '\0' ? c->query : NULL;
	req_set_path(&in, c->path, c->path);
	if (t->body != NULL) {
		body = json_object_to_json_string_ext(c->body, JSON_C_TO_STRING_PLAIN |
		    JSON_C_TO_STRING_NOSLASHESCAPE);
		in.blen = strlen(body);
		if ((in.body = strdup(body)) == NULL) {
			reply_err(r, ARPS_E_INTERNAL, "out of memory");
			return;
		}
		in.ctype = "application/json";
	}
	req_dispatch(&in);
	log_msg("%s mcp %s: %s %.200s %d", r->reqid ? r->reqid : "-", t->name, in.method,
	    in.path, in.status);
	tool_answer(r, id, &in);

	/* Deferred work of the handler (an embedding) runs after our answer. */
	r->after = in.after;
	r->after_arg = in.after_arg;
	json_object_put(in.json);
	free(in.body);
	free(in.out);
}

/* --- methods ------------------------------------------------------------- */

typedef void (*rpc_fn)(struct req *, struct json_object *id, struct json_object *params);

static void
m_initialize(struct req *r, struct json_object *id, struct json_object *params)
{
	struct json_object *res = json_object_new_object(), *caps, *info, *v;
	const char *ver = NULL;

	if (params != NULL && json_object_object_get_ex(params, "protocolVersion", &v) &&
	    json_object_is_type(v, json_type_string))
		ver = version_spoken(json_object_get_string(v));
	if (ver == NULL)
		ver = MCP_VERSION;
	caps = json_object_new_object();
	jput(caps, "tools", json_object_new_object());
	info = json_object_new_object();
	jput(info, "name", json_object_new_string("arps"));
	jput(info, "title", json_object_new_string("arps: Agent Research Participation Service"));
	jput(info, "version", json_object_new_string("1.0.0"));
	jput(res, "protocolVersion", json_object_new_string(ver));
	jput(res, "capabilities", caps);
	jput(res, "serverInfo", info);
	jput(res, "instructions", json_object_new_string(r->who.kind == AUTH_KEY ?
	    "You are an agent.  Describe your owner with set_bio, call heartbeat now and then, "
	    "find studies with list_available_studies, accept_study, open it with get_study, "
	    "then complete_study with the completion code.  A refused call is a tool error "
	    "carrying {detail, error_code, status}; follow nextActions in answers." :
	    "You are a researcher.  create_study publishes a study funded from your wallet; "
	    "review submissions with list_participants, approve_participant or "
	    "reject_participant."));
	rpc_result(r, id, res);
}

static void
m_ping(struct req *r, struct json_object *id, struct json_object *params)
{
	(void)params;
	rpc_result(r, id, json_object_new_object());
}

static void
m_tools_list(struct req *r, struct json_object *id, struct json_object *params)
{
	struct json_object *res = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	(void)params;	/* one page: no cursor */
	for (i = 0; i < NTOOLS; i++)
		if (tool_visible(&tools[i], &r->who))
			json_object_array_add(arr, tool_json(&tools[i]));
	jput(res, "tools", arr);
	rpc_result(r, id, res);
}

static void
m_tools_call(struct req *r, struct json_object *id, struct json_object *params)
{
	struct json_object *v, *args = NULL, *empty = NULL;
	const struct tool *t = NULL;
	struct req err;
	struct call c;
	const char *name;
	size_t i;

	if (params == NULL || !json_object_object_get_ex(params, "name", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		rpc_error(r, id, RPC_INVALID_PARAMS, "tools/call: params.name (a string) is required");
		return;
	}
	name = json_object_get_string(v);
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0 && tool_visible(&tools[i], &r->who))
			t = &tools[i];
	if (t == NULL) {
		rpc_error(r, id, RPC_INVALID_PARAMS, "unknown tool: %.64s", name);
		return;
	}
	if (json_object_object_get_ex(params, "arguments", &args) && args != NULL &&
	    !json_object_is_type(args, json_type_object)) {
		rpc_error(r, id, RPC_INVALID_PARAMS, "tools/call: arguments must be an object");
		return;
	}
	if (args == NULL)
		args = empty = json_object_new_object();
	memset(&err, 0, sizeof err);
	if (call_build_or_reply(t, args, &c, &err) != H_OK)
		tool_answer(r, id, &err);	/* a refusal: a tool error */
	else
		call_run(r, id, t, &c);
	free(err.out);
	json_object_put(c.body);
	json_object_put(empty);
}

static const struct {
	const char *name;
	rpc_fn fn;
} methods[] = {
	{ "initialize", m_initialize },
	{ "ping", m_ping },
	{ "tools/list", m_tools_list },
	{ "tools/call", m_tools_call },
};

/* --- the endpoint -------------------------------------------------------- */

/* The body's object keys (val_json_keys): VAL_JSON_OK, or why not. */
static int
json_keys_ok(const struct req *r)
{
	size_t n = val_json_keys_scratch(r->blen);
	void *scratch = malloc(n);
	int rc;

	if (scratch == NULL)
		return VAL_JSON_NOMEM;
	rc = val_json_keys(r->body, r->blen, scratch, n);
	free(scratch);
	return rc;
}

/* The body as JSON (strict, UTF-8, depth 32) into *msg: H_OK, or
 * H_REPLIED after a -32700 (or, for "null", -32600) answer. */
static enum h_rc
rpc_parse_or_reply(struct req *r, struct json_object **msg)
{
	struct json_tokener *tok;
	struct json_object *o = NULL;
	int keys;

	if (r->blen > 0 && val_utf8(r->body, r->blen, NULL) &&
	    (tok = json_tokener_new_ex(32)) != NULL) {
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
		/* with the terminating NUL, so that a bare number ends */
		o = json_tokener_parse_ex(tok, r->body, (int)r->blen + 1);
		if (json_tokener_get_error(tok) == json_tokener_success &&
		    json_tokener_get_parse_end(tok) == r->blen && o == NULL) {
			json_tokener_free(tok);	/* the body "null": JSON, not a message */
			rpc_error(r, NULL, RPC_INVALID_REQUEST, "a JSON-RPC message is an object");
			return H_REPLIED;
		}
		if (json_tokener_get_error(tok) != json_tokener_success ||
		    json_tokener_get_parse_end(tok) != r->blen || (o != NULL && !req_json_finite(o))) {
			json_object_put(o);
			o = NULL;
		}
		json_tokener_free(tok);
		if (o != NULL && (keys = json_keys_ok(r)) != VAL_JSON_OK) {
			json_object_put(o);
			if (keys == VAL_JSON_NOMEM) {
				rpc_error(r, NULL, RPC_INTERNAL_ERROR, "out of memory");
				return H_REPLIED;
			}
			/* I-JSON, as every body of the API (design.md §9.7) */
			rpc_error(r, NULL, RPC_PARSE_ERROR, keys == VAL_JSON_NUL_KEY ?
			    "parse error: an object key holds U+0000" :
			    keys == VAL_JSON_SURROGATE ?
			    "parse error: a string holds a lone surrogate escape" :
			    "parse error: a key is repeated in one object");
			return H_REPLIED;
		}
		if (o != NULL) {
			*msg = o;
			return H_OK;
		}
	}
	rpc_error(r, NULL, RPC_PARSE_ERROR, "parse error: the body is not one JSON value");
	return H_REPLIED;
}

static void
mcp_post(struct req *r)
{
	struct json_object *msg = NULL, *v, *id = NULL, *params = NULL;
	const char *t;
	size_t clen = strlen("application/json"), i;

	/* An agent may send its key as a bearer token (design.md §11). */
	if (r->apikey == NULL && r->authz != NULL && strncasecmp(r->authz, "Bearer ", 7) == 0) {
		for (t = r->authz + 7; *t == ' '; t++)
			;
		if (strncmp(t, "arps_live_", 10) == 0) {
			r->apikey = t;
			r->authz = NULL;
		}
	}
	if (auth_resolve_or_reply(r, AUTH_EITHER, 0) != H_OK)
		return;
	if (r->ctype == NULL || strncasecmp(r->ctype, "application/json", clen) != 0 ||
	    (r->ctype[clen] != '\0' && r->ctype[clen] != ';' && r->ctype[clen] != ' ')) {
		reply_err(r, ARPS_E_UNSUPPORTED_MEDIA_TYPE, "the body must be application/json");
		return;
	}
	/* MCP 2025-11-25, transports: a version the server does not
	 * support in MCP-Protocol-Version is 400 (no header: the client
	 * negotiated nothing, or speaks 2025-03-26) */
	if (r->mcp_version != NULL && version_spoken(r->mcp_version) == NULL) {
		rpc_error(r, NULL, RPC_INVALID_REQUEST, "MCP-Protocol-Version %.32s is not "
		    "supported: send " MCP_VERSION ", 2025-06-18 or 2025-03-26, as initialize "
		    "answered",
		    r->mcp_version);
		return;
	}
	if (rpc_parse_or_reply(r, &msg) != H_OK)
		return;
	if (json_object_is_type(msg, json_type_array)) {
		rpc_error(r, NULL, RPC_INVALID_REQUEST,
		    "batches are not part of MCP since 2025-06-18: send one message per request");
		goto out;
	}
	if (!json_object_is_type(msg, json_type_object)) {
		rpc_error(r, NULL, RPC_INVALID_REQUEST, "a JSON-RPC message is an object");
		goto out;
	}
	if (json_object_object_get_ex(msg, "id", &id) && !json_object_is_type(id, json_type_string) &&
	    !json_object_is_type(id, json_type_int)) {
		rpc_error(r, NULL, RPC_INVALID_REQUEST, "id: must be a string or an integer");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		rpc_error(r, id, RPC_INVALID_REQUEST, "jsonrpc: must be \"2.0\"");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "method", &v)) {
		/* A response to us (we send no requests): accepted, nothing to say. */
		if (id != NULL && (json_object_object_get_ex(msg, "result", NULL) ||
		    json_object_object_get_ex(msg, "error", NULL))) {
			reply_reset(r);
			r->status = 202;
		} else
			rpc_error(r, id, RPC_INVALID_REQUEST, "method: a string is required");
		goto out;
	}
	if (!json_object_is_type(v, json_type_string)) {
		rpc_error(r, id, RPC_INVALID_REQUEST, "method: a string is required");
		goto out;
	}
	if (json_object_object_get_ex(msg, "params", &params) && params != NULL &&
	    !json_object_is_type(params, json_type_object)) {
		if (id == NULL)
			goto notification;
		rpc_error(r, id, RPC_INVALID_PARAMS, "params: must be an object");
		goto out;
	}
	if (id == NULL) {
notification:
		/* A notification (notifications/initialized, ...): 202, no body. */
		reply_reset(r);
		r->status = 202;
		goto out;
	}
	for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (strcmp(methods[i].name, json_object_get_string(v)) == 0) {
			methods[i].fn(r, id, params);
			goto out;
		}
	rpc_error(r, id, RPC_METHOD_NOT_FOUND, "method not found: %.64s", json_object_get_string(v));
out:
	json_object_put(msg);
}

void
mcp_or_dispatch(struct req *r)
{
	if (strcmp(r->path, MCP_PATH) == 0 && strcmp(r->method, "POST") == 0)
		mcp_post(r);
	else
		req_dispatch(r);
}
