/*
 * Events and webhooks (design.md §11): the credential's own event feed,
 * an agent's reputation changes, and the caller's webhooks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/events.h"
#include "core/reputation.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/events.h"
#include "db/webhooks.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/config.h"

#define EVENTS_LIMIT_DEFAULT	50
#define EVENTS_LIMIT_MAX	200

/* `limit` and the feed's `cursor` (0 or a number from next_cursor): H_OK,
 * or H_REPLIED after answering 422. */
static enum h_rc
decode_feed_or_reply(struct req *r, int64_t *limit, int64_t *cursor)
{
	char buf[64];
	const char *v;

	*limit = EVENTS_LIMIT_DEFAULT;
	*cursor = 0;
	v = req_query(r, "limit", buf, sizeof buf);
	if ((v != NULL || req_query_has(r, "limit")) &&
	    (v == NULL || val_parse_int64(v, strlen(v), 1, EVENTS_LIMIT_MAX, limit) != 0))
		return reply_err(r, ARPS_E_VALIDATION, "limit: must be an integer from 1 to %d",
		    EVENTS_LIMIT_MAX);
	v = req_query(r, "cursor", buf, sizeof buf);
	if ((v != NULL || req_query_has(r, "cursor")) &&
	    (v == NULL || val_parse_int64(v, strlen(v), 0, INT64_MAX - 1, cursor) != 0))
		return reply_err(r, ARPS_E_VALIDATION, "cursor: not a cursor from this list");
	return H_OK;
}

/* An empty page after a cursor past the owner's newest event: that
 * cursor was never handed out (a client polling from it would skip the
 * events numbered up to it), so 422 as any other bad cursor.  Read only
 * for an empty page: a page with events proves its cursor was below. */
static enum h_rc
feed_cursor_or_reply(struct req *r, int64_t cursor, size_t n)
{
	int64_t last;
	enum db_rc rc;

	if (n > 0 || cursor == 0)
		return H_OK;
	if ((rc = db_events_last(r->db, r->who.id, &last)) != DB_OK)
		return reply_db(r, rc);
	if (cursor > last)
		return reply_err(r, ARPS_E_VALIDATION, "cursor: not a cursor from this list");
	return H_OK;
}

/* {"next_cursor": "<n>"}: never null (design.md §11). */
static void
add_feed_cursor(struct json_object *o, int64_t next)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", (long long)next);
	jadd_str(o, "next_cursor", buf);
}

/* One event as the feed and webhooks show it. */
static struct json_object *
event_json(const struct event_row *e)
{
	struct json_object *o = json_object_new_object(), *data;

	jadd_str(o, "id", e->id);
	jadd_str(o, "type", e->type);
	jadd_time(o, "created_at", e->created_at);
	data = json_tokener_parse(e->data);
	json_object_object_add(o, "data", data != NULL ? data : json_object_new_object());
	return o;
}

/* GET /events?cursor=&limit= (Key or Bearer): the caller's own events,
 * oldest first after the cursor. */
enum h_rc
h_events(struct req *r)
{
	struct json_object *o, *arr;
	struct event_row *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_feed_or_reply(r, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if ((rc = db_events_list(r->db, r->who.id, NULL, cursor, limit, &v, &n)) != DB_OK)
		return reply_db(r, rc);
	if (feed_cursor_or_reply(r, cursor, n) != H_OK)
		return H_REPLIED;
	arr = json_object_new_array();
	next = cursor;
	for (i = 0; i < n; i++) {
		json_object_array_add(arr, event_json(&v[i]));
		next = v[i].seq;
	}
	db_events_free(v, n);
	o = json_object_new_object();
	json_object_object_add(o, "events", arr);
	add_feed_cursor(o, next);
	return reply_json(r, 200, o);
}

/* GET /agents/me/reputation?cursor=&limit=: the score, its tier and its
 * changes (reputation.changed events) oldest first, with cause. */
enum h_rc
h_reputation(struct req *r)
{
	struct json_object *o, *arr, *it, *data, *val;
	struct event_row *v = NULL;
	int64_t limit, cursor, next;
	struct agent a;
	size_t i, n;
	enum db_rc rc;
	static const char *const keys[] = {
		"from", "to", "cause", "study_id", "participation_id",
	};
	size_t k;

	if (decode_feed_or_reply(r, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if ((rc = db_agent_get(r->db, r->who.id, 0, &a)) != DB_OK)
		return reply_db(r, rc == DB_NOTFOUND ? DB_ERR : rc);
	if ((rc = db_events_list(r->db, r->who.id, event_type_name(EV_REPUTATION_CHANGED), cursor,
	    limit, &v, &n)) != DB_OK)
		return reply_db(r, rc);
	if (feed_cursor_or_reply(r, cursor, n) != H_OK)
		return H_REPLIED;
	arr = json_object_new_array();
	next = cursor;
	for (i = 0; i < n; i++) {
		it = json_object_new_object();
		jadd_str(it, "event_id", v[i].id);
		data = json_tokener_parse(v[i].data);
		for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			val = NULL;
			if (data != NULL && json_object_object_get_ex(data, keys[k], &val))
				json_object_get(val);
			json_object_object_add(it, keys[k], val);
		}
		json_object_put(data);
		jadd_time(it, "created_at", v[i].created_at);
		json_object_array_add(arr, it);
		next = v[i].seq;
	}
	db_events_free(v, n);
	o = json_object_new_object();
	jadd_int(o, "reputation", a.reputation);
	jadd_str(o, "tier", rep_tier_name(rep_tier_of(a.reputation)));
	json_object_object_add(o, "changes", arr);
	add_feed_cursor(o, next);
	return reply_json(r, 200, o);
}

static struct json_object *
webhook_json(const struct webhook *w)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	const char *p = w->events, *c;

	jadd_str(o, "id", w->id);
	jadd_str(o, "url", w->url);
	while (p != NULL && *p != '\0') {
		c = strchr(p, ',');
		json_object_array_add(arr, json_object_new_string_len(p, c ? (int)(c - p) :
		    (int)strlen(p)));
		p = c ? c + 1 : NULL;
	}
	json_object_object_add(o, "events", arr);
	jadd_str(o, "status", w->status);
	jadd_time(o, "created_at", w->created_at);
	if (w->disabled_at > 0)
		jadd_time(o, "disabled_at", w->disabled_at);
	return o;
}

/* Whether the comma-separated list names name. */
static int
csv_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
		if ((p = strchr(p, ',')) != NULL)
			p++;
	}
	return 0;
}

struct hook_ctx {
	const char *url;
	char events[1024];
};

static enum db_rc
hook_create_tx(struct req *r, void *arg)
{
	struct hook_ctx *c = arg;
	char secret[WEBHOOK_SECRET_BUFSZ];
	struct webhook w;
	struct json_object *o;
	enum arps_err outcome;
	enum db_rc rc;

	rc = db_webhook_create(r->db, r->cfg, r->who.id, c->url, c->events, r->now, &w, secret,
	    &outcome);
	if (rc != DB_OK) {
		webhook_clear(&w);
		return rc;
	}
	if (outcome != ARPS_OK) {
		webhook_clear(&w);
		reply_err(r, ARPS_E_VALIDATION, "at most %d webhooks per credential",
		    WEBHOOK_MAX_PER_OWNER);
		return DB_ROLLBACK;
	}
	o = webhook_json(&w);
	jadd_str(o, "secret", secret);
	webhook_clear(&w);
	reply_json(r, 201, o);
	return DB_OK;
}

/* POST /webhooks {url, events}: 201 with the secret, shown once. */
enum h_rc
h_webhook_create(struct req *r)
{
	struct json_object *body, *url, *events, *e;
	struct hook_ctx c;
	enum event_type t;
	const char *name;
	size_t i, n, len;
	unsigned flags = VAL_URL_HTTPS_ONLY;

	if (req_json_or_reply(r) != H_OK)
		return H_REPLIED;
	body = r->json;
	memset(&c, 0, sizeof c);
	if (!json_object_object_get_ex(body, "url", &url) ||
	    !json_object_is_type(url, json_type_string))
		return reply_err(r, ARPS_E_VALIDATION, "url: required, a string");
	c.url = json_object_get_string(url);
	if (r->cfg->webhooks_allow_loopback)
		flags |= VAL_URL_LOOPBACK;
	len = (size_t)json_object_get_string_len(url);
	if (val_public_url(c.url, len, flags) != 0)
		return reply_err(r, ARPS_E_VALIDATION, val_url(c.url, len) != 0 ?
		    "url: must be an absolute https URL of RFC 3986's characters (percent-encode "
		    "spaces, quotes, <>, [] past the host, {}, |, \\, ^ and `)" :
		    "url: must be a public https URL");
	if (!json_object_object_get_ex(body, "events", &events) ||
	    !json_object_is_type(events, json_type_array) ||
	    (n = json_object_array_length(events)) == 0 || n > EV__MAX)
		return reply_err(r, ARPS_E_VALIDATION, "events: required, a non-empty array of "
		    "event types");
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(events, i);
		name = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
		if (name == NULL || !event_type_from_name(name, &t) ||
		    !event_type_for(t, r->who.kind == AUTH_KEY))
			return reply_err(r, ARPS_E_VALIDATION, "events[%zu]: not an event type "
			    "this credential receives", i);
		if (csv_has(c.events, name))
			continue;	/* a repeated type is kept once */
		len = strlen(c.events);
		snprintf(c.events + len, sizeof c.events - len, "%s%s", len ? "," : "", name);
	}
	return req_tx(r, hook_create_tx, &c);
}

/* GET /webhooks: the caller's webhooks (no secret). */
enum h_rc
h_webhook_list(struct req *r)
{
	struct json_object *o, *arr;
	struct webhook *v = NULL;
	size_t i, n;
	enum db_rc rc;

	if ((rc = db_webhook_list(r->db, r->who.id, &v, &n)) != DB_OK)
		return reply_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, webhook_json(&v[i]));
	webhooks_free(v, n);
	o = json_object_new_object();
	json_object_object_add(o, "webhooks", arr);
	return reply_json(r, 200, o);
}

static enum db_rc
hook_delete_tx(struct req *r, void *arg)
{
	struct json_object *o;
	enum db_rc rc;

	(void)arg;
	if ((rc = db_webhook_delete(r->db, r->who.id, r->params[0], r->now)) == DB_NOTFOUND) {
		reply_err(r, ARPS_E_NOT_FOUND, "no such webhook");
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	o = json_object_new_object();
	jadd_str(o, "id", r->params[0]);
	jadd_str(o, "status", "deleted");
	reply_json(r, 200, o);
	return DB_OK;
}

/* DELETE /webhooks/{id} */
enum h_rc
h_webhook_delete(struct req *r)
{
	if (!ids_valid(IDS_WEBHOOK, r->params[0]))
		return reply_err(r, ARPS_E_NOT_FOUND, "no such webhook");
	return req_tx(r, hook_delete_tx, NULL);
}

/* GET /webhooks/{id}/deliveries?cursor=&limit=: newest first. */
enum h_rc
h_webhook_deliveries(struct req *r)
{
	struct json_object *arr, *it;
	struct delivery_row *v = NULL;
	struct webhook w;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if (!ids_valid(IDS_WEBHOOK, r->params[0]))
		return reply_err(r, ARPS_E_NOT_FOUND, "no such webhook");
	if ((rc = db_webhook_get(r->db, r->who.id, r->params[0], &w)) == DB_NOTFOUND)
		return reply_err(r, ARPS_E_NOT_FOUND, "no such webhook");
	webhook_clear(&w);
	if (rc != DB_OK)
		return reply_db(r, rc);
	if ((rc = db_webhook_deliveries(r->db, r->params[0], cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		it = json_object_new_object();
		jadd_str(it, "event_id", v[i].event_id);
		jadd_str(it, "event_type", v[i].event_type);
		jadd_str(it, "status", v[i].state);
		jadd_int(it, "attempts", v[i].attempts);
		if (v[i].last_status >= 0)
			jadd_int(it, "last_response_status", v[i].last_status);
		else
			json_object_object_add(it, "last_response_status", NULL);
		jadd_str(it, "last_error", v[i].last_error);
		jadd_time(it, "created_at", v[i].created_at);
		jadd_time(it, "last_attempt_at", v[i].last_attempt_at);
		jadd_time(it, "next_attempt_at", strcmp(v[i].state, "pending") == 0 ?
		    v[i].next_attempt_at : 0);
		jadd_time(it, "delivered_at", v[i].delivered_at);
		json_object_array_add(arr, it);
	}
	deliveries_free(v, n);
	return reply_page(r, "deliveries", arr, next);
}
