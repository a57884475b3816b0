/*
 * Messages (design.md §13): a researcher writes to participants of its
 * study (POST /studies/{id}/messages) and reads the thread with one
 * (GET /studies/{id}/participants/{pid}/messages); an agent lists its
 * messages (GET /messages), marks one read and replies to one it
 * received.  Neither side sees the other's id: the agent sees the study,
 * the researcher the anonymous participant_id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/events.h"
#include "core/ids.h"
#include "core/validate.h"
#include "db/bonuses.h"
#include "db/events.h"
#include "db/messages.h"
#include "db/studies.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/config.h"
#include "lib/secret.h"

#define MSG_RECIPIENTS_MAX	500	/* participant ids of one message */
#define MSG_BODY_MAX		4000	/* characters */
#define MSG_WINDOW		3600	/* the limits' rolling window */

struct send_in {
	struct json_object *ids;
	const char *body;
};

static const struct field send_fields[] = {
	{ "participant_ids", F_ARRAY, F_REQUIRED, 1, MSG_RECIPIENTS_MAX,
	    offsetof(struct send_in, ids) },
	{ "body", F_TEXT, F_REQUIRED, 1, MSG_BODY_MAX, offsetof(struct send_in, body) },
};
const struct field_list fields_message_send = FIELD_LIST(send_fields);

struct reply_in {
	const char *body;
};

static const struct field reply_fields[] = {
	{ "body", F_TEXT, F_REQUIRED, 1, MSG_BODY_MAX, offsetof(struct reply_in, body) },
};
const struct field_list fields_message_reply = FIELD_LIST(reply_fields);

static enum h_rc
reply_no_study(struct req *r, const char *id)
{
	return reply_err(r, ARPS_E_NOT_FOUND, "no such study: %.40s", id);
}

static enum h_rc
reply_no_message(struct req *r, const char *id)
{
	return reply_err(r, ARPS_E_NOT_FOUND, "no such message: %.40s", id);
}

/* A message as the agent sees it: direction "in" when the researcher sent it. */
static struct json_object *
agent_item_json(const struct db_message *m)
{
	struct json_object *o = json_object_new_object();

	jadd_str(o, "id", m->id);
	jadd_str(o, "study_id", m->study_id);
	jadd_str(o, "study_title", m->study_title);
	jadd_str(o, "direction", m->from_agent ? "out" : "in");
	jadd_str(o, "body", m->body);
	jadd_time(o, "created_at", m->created_at);
	jadd_time(o, "read_at", m->read_at);
	return o;
}

/* A message as the researcher sees it: direction "out" when it sent it. */
static struct json_object *
thread_item_json(const struct db_message *m)
{
	struct json_object *o = json_object_new_object();

	jadd_str(o, "id", m->id);
	jadd_str(o, "direction", m->from_agent ? "in" : "out");
	jadd_str(o, "body", m->body);
	jadd_time(o, "created_at", m->created_at);
	jadd_time(o, "read_at", m->read_at);
	return o;
}

/* The study of the request's first "{}" when the caller owns it: H_OK, or
 * 404 answered (another researcher's study is no study). */
static enum h_rc
own_study_or_reply(struct req *r, const char *id)
{
	struct study s;
	enum db_rc rc;

	if (!ids_valid(IDS_STUDY, id))
		return reply_no_study(r, id);
	if ((rc = db_study_get_row(r->db, id, 0, &s)) == DB_NOTFOUND)
		return reply_no_study(r, id);
	if (rc != DB_OK)
		return reply_db(r, rc);
	if (strcmp(s.researcher_id, r->who.id) != 0) {
		db_study_clear(&s);
		return reply_no_study(r, id);
	}
	db_study_clear(&s);
	return H_OK;
}

/* --- POST /studies/{id}/messages --- */

struct send_ctx {
	const char *study_id, *body;
	struct db_bonus_target *t;
	struct db_message_to *to;
	size_t n;
};

static enum db_rc
send_tx(struct req *r, void *arg)
{
	struct send_ctx *c = arg;
	struct json_object *o;
	struct study s;
	char id[IDS_BUFSZ], bucket[64];
	size_t i, j, k;
	enum db_rc rc;

	if ((rc = db_study_get_row(r->db, c->study_id, 0, &s)) == DB_NOTFOUND ||
	    (rc == DB_OK && strcmp(s.researcher_id, r->who.id) != 0)) {
		db_study_clear(&s);
		reply_no_study(r, c->study_id);
		return DB_ROLLBACK;
	}
	db_study_clear(&s);
	if (rc != DB_OK)
		return rc;
	if ((rc = db_bonus_targets(r->db, c->study_id, c->t, c->n)) != DB_OK)
		return rc;
	/* the first unknown id is named; a participant named twice gets one */
	for (i = k = 0; i < c->n; i++) {
		if (!c->t[i].found) {
			reply_err(r, ARPS_E_VALIDATION, "participant_ids[%zu]: not a participant of "
			    "this study: %.40s", i, c->t[i].participant_id);
			return DB_ROLLBACK;
		}
		for (j = 0; j < k; j++)
			if (strcmp(c->to[j].prt_id, c->t[i].prt_id) == 0)
				break;
		if (j < k)
			continue;
		snprintf(c->to[k].prt_id, sizeof c->to[k].prt_id, "%s", c->t[i].prt_id);
		snprintf(c->to[k].agent_id, sizeof c->to[k].agent_id, "%s", c->t[i].agent_id);
		k++;
	}
	snprintf(bucket, sizeof bucket, "msg-send:%s", r->who.id);
	if ((rc = rate_take_n_or_reply(r, bucket, MSG_WINDOW, r->cfg->message_recipients_per_hour,
	    (int64_t)k, "message recipients per researcher")) != DB_OK)
		return rc;
	if (ids_new(IDS_MESSAGE, &secret_rng, id) != ARPS_OK)
		return DB_ERR;
	if ((rc = db_message_insert(r->db, id, c->study_id, 0, NULL, c->body, c->to, k,
	    r->now)) != DB_OK)
		return rc;
	for (i = 0; i < k; i++)
		if ((rc = db_event(r->db, c->to[i].agent_id, EV_MESSAGE_RECEIVED, r->now,
		    "{\"message_id\":\"%s\",\"study_id\":\"%s\"}", id, c->study_id)) != DB_OK)
			return rc;
	o = json_object_new_object();
	jadd_str(o, "message_id", id);
	jadd_str(o, "study_id", c->study_id);
	jadd_int(o, "recipients", (int64_t)k);
	jadd_time(o, "created_at", r->now);
	reply_json(r, 201, o);
	return DB_OK;
}

/* POST /studies/{id}/messages: one message to 1-500 participants, one
 * transaction. */
enum h_rc
h_message_send(struct req *r)
{
	struct send_in in = { NULL, NULL };
	struct send_ctx c;
	unsigned present;
	size_t i;
	enum h_rc hrc;

	if (decode_body_or_reply(r, send_fields, NFIELDS(send_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	c.study_id = r->params[0];
	c.body = in.body;
	c.n = json_object_array_length(in.ids);
	for (i = 0; i < c.n; i++) {
		const char *pid;

		if (decode_item_str_or_reply(r, in.ids, "participant_ids", i, 63, &pid) != H_OK)
			return H_REPLIED;
	}
	if (!ids_valid(IDS_STUDY, c.study_id))
		return reply_no_study(r, c.study_id);
	if ((c.t = calloc(c.n, sizeof *c.t)) == NULL || (c.to = calloc(c.n, sizeof *c.to)) == NULL) {
		free(c.t);
		return reply_err(r, ARPS_E_INTERNAL, "out of memory");
	}
	for (i = 0; i < c.n; i++)
		c.t[i].participant_id = json_object_get_string(json_object_array_get_idx(in.ids, i));
	hrc = req_tx(r, send_tx, &c);
	free(c.t);
	free(c.to);
	return hrc;
}

/* --- GET /studies/{id}/participants/{pid}/messages --- */

/* The thread with one participant, oldest first, both directions. */
enum h_rc
h_message_thread(struct req *r)
{
	const char *study_id = r->params[0], *pid = r->params[1];
	struct db_bonus_target t;
	struct json_object *arr;
	struct db_message *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if (own_study_or_reply(r, study_id) != H_OK)
		return H_REPLIED;
	memset(&t, 0, sizeof t);
	t.participant_id = pid;
	if (anon_id_valid(pid) && (rc = db_bonus_targets(r->db, study_id, &t, 1)) != DB_OK)
		return reply_db(r, rc);
	if (!t.found)
		return reply_err(r, ARPS_E_NOT_FOUND, "no such participant in this study: %.40s", pid);
	if ((rc = db_messages_thread(r->db, t.prt_id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, thread_item_json(&v[i]));
	db_messages_free(v, n);
	return reply_page(r, "messages", arr, next);
}

/* --- GET /messages --- */

/* The agent's messages, newest first, both directions. */
enum h_rc
h_messages_list(struct req *r)
{
	struct json_object *arr;
	struct db_message *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if ((rc = db_messages_inbox(r->db, r->who.id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, agent_item_json(&v[i]));
	db_messages_free(v, n);
	return reply_page(r, "messages", arr, next);
}

/* --- POST /messages/{id}/read --- */

static enum db_rc
read_tx(struct req *r, void *arg)
{
	const char *id = arg;
	struct db_message m;
	enum db_rc rc;

	if ((rc = db_message_get(r->db, r->who.id, id, &m)) == DB_NOTFOUND) {
		reply_no_message(r, id);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	/* a message received is read once (the first time stays); the
	 * agent's own replies are the researcher's to read */
	if (!m.from_agent && m.read_at == 0) {
		if ((rc = db_message_mark_read(r->db, r->who.id, id, r->now)) != DB_OK) {
			db_message_clear(&m);
			return rc;
		}
		m.read_at = r->now;
	}
	reply_json(r, 200, agent_item_json(&m));
	db_message_clear(&m);
	return DB_OK;
}

/* POST /messages/{id}/read: 200 with the item. */
enum h_rc
h_message_read(struct req *r)
{
	const char *id = r->params[0];

	if (!ids_valid(IDS_MESSAGE, id))
		return reply_no_message(r, id);
	return req_tx(r, read_tx, (void *)id);
}

/* --- POST /messages/{id}/reply --- */

struct reply_ctx {
	const char *id, *body;
};

static enum db_rc
reply_tx(struct req *r, void *arg)
{
	struct reply_ctx *c = arg;
	struct db_message m;
	struct db_message_to to;
	char id[IDS_BUFSZ], bucket[64];
	enum db_rc rc;

	if ((rc = db_message_get(r->db, r->who.id, c->id, &m)) == DB_NOTFOUND) {
		reply_no_message(r, c->id);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	if (m.from_agent) {
		reply_err(r, ARPS_E_INVALID_STATE, "%s is a message you sent; a reply answers a "
		    "message you received", c->id);
		goto rollback;
	}
	snprintf(bucket, sizeof bucket, "msg-reply:%s", r->who.id);
	if ((rc = rate_take_or_reply(r, bucket, MSG_WINDOW, r->cfg->message_replies_per_hour,
	    "message replies per agent")) != DB_OK)
		goto done;
	if (ids_new(IDS_MESSAGE, &secret_rng, id) != ARPS_OK) {
		rc = DB_ERR;
		goto done;
	}
	memset(&to, 0, sizeof to);
	snprintf(to.prt_id, sizeof to.prt_id, "%s", m.prt_id);
	snprintf(to.agent_id, sizeof to.agent_id, "%s", m.agent_id);
	if ((rc = db_message_insert(r->db, id, m.study_id, 1, c->id, c->body, &to, 1,
	    r->now)) != DB_OK)
		goto done;
	/* the researcher learns the participant, never the agent */
	if ((rc = db_event(r->db, m.researcher_id, EV_MESSAGE_RECEIVED, r->now,
	    "{\"message_id\":\"%s\",\"study_id\":\"%s\",\"participant_id\":\"%s\"}", id,
	    m.study_id, m.participant_id)) != DB_OK)
		goto done;
	/* the new item: the agent's own, unread by the researcher */
	snprintf(m.id, sizeof m.id, "%s", id);
	m.from_agent = 1;
	free(m.body);
	if ((m.body = strdup(c->body)) == NULL) {
		rc = DB_ERR;
		goto done;
	}
	m.created_at = r->now;
	m.read_at = 0;
	reply_json(r, 201, agent_item_json(&m));
	goto done;
rollback:
	rc = DB_ROLLBACK;
done:
	db_message_clear(&m);
	return rc;
}

/* POST /messages/{id}/reply: only to a message the agent received. */
enum h_rc
h_message_reply(struct req *r)
{
	struct reply_in in = { NULL };
	struct reply_ctx c;
	unsigned present;

	if (decode_body_or_reply(r, reply_fields, NFIELDS(reply_fields), &in, &present) != H_OK)
		return H_REPLIED;
	c.id = r->params[0];
	c.body = in.body;
	if (!ids_valid(IDS_MESSAGE, c.id))
		return reply_no_message(r, c.id);
	return req_tx(r, reply_tx, &c);
}
