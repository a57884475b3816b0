/* Agent study endpoints: available, accept, complete, withdraw, history
 * (design.md §5, design.md §6.6 to design.md §6.8, design.md §6.20). */
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/score.h"
#include "core/reputation.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/match.h"
#include "db/studies.h"
#include "txn/lifecycle.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "match/engine.h"
#include "lib/config.h"

#define ENDPOINT_MAX	96
/* When an agent with nothing open to it should poll again: the
 * polling.recommended of complete (design.md §6.20); a study.matched
 * event or webhook tells sooner (docs/api.md §7.5). */
#define CHECK_LATER_SECONDS	300
#define STR_(x)		#x
#define STR(x)		STR_(x)

static void
endpoint(char *buf, const char *method, const char *study_id, const char *verb)
{
	snprintf(buf, ENDPOINT_MAX, "%s /studies/%s%s%s", method, study_id, verb ? "/" : "",
	    verb ? verb : "");
}

/* The reasons an accept, complete or withdraw is refused, their details,
 * and whether the transaction is still committed (what the refused call
 * changed stands). */
static const struct {
	enum arps_err	 e;
	const char	*detail;
	bool		 kept;
} refusals[] = {
	{ ARPS_E_NOT_FOUND, "no such study", false },
	{ ARPS_E_AGENT_NOT_CLAIMED,
	  "the agent must be claimed by its owner first (POST /auth/claim)", false },
	{ ARPS_E_OWN_STUDY, "the agent's owner is this study's researcher: an agent cannot "
	  "take part in (and be paid by) its owner's own study", false },
	{ ARPS_E_AGENT_SUSPENDED, "the agent is suspended (by an administrator, or a "
	  "reputation under 30) and cannot take part in studies; an active participation "
	  "can still be withdrawn", false },
	{ ARPS_E_ACTIVE_PARTICIPATION,
	  "the agent already has an active participation: complete or withdraw it first", false },
	{ ARPS_E_ALREADY_PARTICIPATED, "the agent has already taken part in this study", false },
	{ ARPS_E_STUDY_NOT_ACTIVE,
	  "the study is not accepting participants (paused, closed or past its deadline)", false },
	{ ARPS_E_STUDY_FULL, "the study has no free slot", false },
	{ ARPS_E_NO_ACTIVE_PARTICIPATION,
	  "the agent has no active participation in this study", false },
	/* the timeout, applied by this call or the sweep before it */
	{ ARPS_E_TIMED_OUT, "the participation timed out: no submission within "
	  STR(PART_TIMEOUT_HOURS) " hours of accepting", true },
	{ ARPS_E_CODE_REQUIRED, "completion_code: this study requires the completion code the "
	  "study shows at its end; send it (no reputation change)", false },
	/* the -5 stands (design.md §5) */
	{ ARPS_E_INVALID_SUBMISSION,
	  "the completion code does not match: reputation -5; fix it and submit again "
	  "before the participation times out", true },
};

/* Whether a refusal's transaction is committed (refusals[].kept). */
static bool
refusal_kept(enum arps_err outcome)
{
	size_t i;

	for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
		if (refusals[i].e == outcome)
			return refusals[i].kept;
	return false;
}

static enum h_rc
reply_refusal(struct req *r, enum arps_err outcome)
{
	size_t i;

	for (i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
		if (refusals[i].e == outcome)
			return reply_err(r, refusals[i].e, "%s", refusals[i].detail);
	return reply_err(r, outcome, "refused");
}

/* --- GET /studies/available --- */

static enum h_rc
available_empty(struct req *r, const char *action, const char *ep, const char *desc,
    const char *action2, const char *ep2, const char *desc2)
{
	struct json_object *o = json_object_new_object(), *next = json_object_new_array();

	json_object_object_add(o, "studies", json_object_new_array());
	json_object_object_add(o, "next_cursor", NULL);	/* nothing to page through */
	jadd_action(next, action, ep, desc);
	if (action2 != NULL)
		jadd_action(next, action2, ep2, desc2);
	json_object_object_add(o, "nextActions", next);
	return reply_json(r, 200, o);
}

/* The hint when the agent's bio cannot be matched yet. */
static enum h_rc
available_no_bio(struct req *r, enum db_bio_state st)
{
	switch (st) {
	case DB_BIO_PROCESSING:
		return available_empty(r, "wait_for_embedding", "GET /profile/bio",
		    "Your bio is being embedded for matching (embedding_status processing); "
		    "ask again once it is ready, usually within seconds.", NULL, NULL, NULL);
	case DB_BIO_FAILED:
		return available_empty(r, "setup_bio", "POST /profile/bio",
		    "Your bio could not be embedded: describe your owner again in plain "
		    "sentences (background, interests, tools).", NULL, NULL, NULL);
	default:
		return available_empty(r, "setup_bio", "POST /profile/bio",
		    "Studies are matched to your bio: describe your owner in natural language "
		    "(demographics, interests, tools, background).", NULL, NULL, NULL);
	}
}

/*
 * Ranking (design.md §6.6, design.md §7): match_top scores every open
 * study with a ready criteria embedding against the bio vector from a
 * light candidate read and cached vectors; only the listed studies' rows are read in full.
 * A study whose criteria embedding is not ready is not listed.
 */
enum h_rc
h_available(struct req *r)
{
	struct match_params mp;
	struct match_heads hd;
	struct match_top *top = NULL;
	struct agent a_own;
	struct agent_current cur_own;
	const struct agent *ag = r->agent;
	const struct agent_current *cur = r->agent_cur;
	struct json_object *next;
	struct printbuf *pb;
	float bio[EMBED_DIM];
	unsigned char hash[32];
	char ep[ENDPOINT_MAX], ep2[ENDPOINT_MAX];
	const char *best = NULL;
	enum db_bio_state bs;
	enum rep_tier tier;
	int64_t limit, cursor;
	size_t i, n = 0;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_AVAILABLE_LIMIT_DEFAULT, VAL_AVAILABLE_LIMIT_MAX, &limit,
	    &cursor) != H_OK)
		return H_REPLIED;
	/* The cursor is the rank the page starts at (design.md §6.15: every
	 * list pages): the ranking is made anew for each poll, so a page after
	 * the first is the next ones of the ranking as it is now. */
	if (cursor > VAL_AVAILABLE_OFFSET_MAX)
		return reply_err(r, ARPS_E_VALIDATION, "cursor: not a cursor from this list");
	if (ag == NULL || cur == NULL) {	/* the key's look-up brings both (fcgi/auth.c) */
		if ((rc = db_agent_get(r->db, r->who.id, 0, &a_own)) != DB_OK ||
		    (rc = db_agent_current(r->db, r->who.id, &cur_own)) != DB_OK)
			return reply_db(r, rc == DB_NOTFOUND ? DB_ERR : rc);
		ag = &a_own;
		cur = &cur_own;
	}
	if (ag->account_id[0] == '\0')
		return available_empty(r, "claim_ownership", "POST /auth/claim",
		    "Studies are shown to claimed agents only: your owner logs in and claims you "
		    "with your claim code.", NULL, NULL, NULL);
	if (!rep_may_take_part(strcmp(ag->status, "suspended") == 0, ag->reputation))
		return available_empty(r, "view_profile", "GET /agents/me",
		    "The agent is suspended (by an administrator, or a reputation under 30) and "
		    "cannot take part in studies.", NULL, NULL, NULL);
	if (cur->participation_id[0] != '\0') {
		endpoint(ep, "POST", cur->study_id, "complete");
		endpoint(ep2, "POST", cur->study_id, "withdraw");
		return available_empty(r, "complete", ep,
		    "Finish your active study and submit completion first.", "withdraw", ep2,
		    "Or withdraw from it (no reputation change).");
	}
	/* the vector this worker kept for the text the key's look-up names,
	 * else read with its own hash */
	if (cur->bio_ready && match_bio_kept(r->who.id, cur->bio_hash, bio))
		bs = DB_BIO_READY;
	else {
		if ((rc = db_match_bio(r->db, r->who.id, &bs, bio, hash)) != DB_OK)
			return reply_db(r, rc);
		if (bs != DB_BIO_READY)
			return available_no_bio(r, bs);
		match_bio_keep(r->who.id, hash, bio);
	}
	tier = rep_tier_of(ag->reputation);
	mp.first_access_minutes = r->cfg->first_access_minutes;
	mp.basic_max_studies = (size_t)r->cfg->basic_max_studies;
	mp.limit = (size_t)(cursor + limit + 1);	/* one more: is there a next page */
	hd.change_pending = cur->change_pending;
	if ((rc = match_top(r->db, r->who.id, bio, tier, r->now, &mp, cur->heads ? &hd : NULL,
	    &top, &n)) != DB_OK)
		return reply_db(r, rc);
	/* by hand: json-c's objects for a page cost more than the rest of
	 * the poll (design.md §15.2) */
	if ((pb = printbuf_new()) == NULL) {
		match_top_free(top, n);
		return reply_err(r, ARPS_E_INTERNAL, "out of memory");
	}
	jb_raw(pb, "{\"studies\":[");
	for (i = (size_t)cursor; i < n && i < (size_t)(cursor + limit); i++) {
		const struct study *s = &top[i].study;	/* confirmed open by match_top */

		jb_raw(pb, i > (size_t)cursor ? ",{\"id\":" : "{\"id\":");
		jb_str(pb, s->id);
		jb_raw(pb, ",\"title\":");
		jb_str(pb, s->title);
		jb_raw(pb, ",\"description\":");
		jb_str(pb, s->description);
		jb_raw(pb, ",\"reward_per_participant\":");
		jb_int(pb, s->reward);
		jb_raw(pb, ",\"estimated_duration_minutes\":");
		jb_int(pb, s->duration_minutes);
		jb_raw(pb, ",\"match_score\":");
		jb_double(pb, top[i].score);
		jb_raw(pb, ",\"spots_remaining\":");
		jb_int(pb, s->max_participants - s->occupied);
		jb_raw(pb, ",\"deadline\":");
		jb_time(pb, s->has_deadline ? s->deadline : 0);
		jb_raw(pb, ",\"study_url\":");
		jb_str(pb, s->study_url);
		jb_raw(pb, s->needs_code ? ",\"requires_completion_code\":true" :
		    ",\"requires_completion_code\":false");
		jb_raw(pb, ",\"match\":{\"similarity\":");
		jb_double(pb, top[i].similarity);
		jb_raw(pb, ",\"tier_weight\":");
		jb_double(pb, match_tier_weight(tier));
		jb_raw(pb, "}}");
		if (best == NULL)
			best = s->id;
	}
	next = json_object_new_array();
	if (best != NULL) {
		endpoint(ep, "POST", best, "accept");
		jadd_action(next, "accept", ep, "Accept the best match; one active study at a time.");
	} else {
		struct json_object *act;

		jadd_action(next, "check_later", "GET /studies/available",
		    "No study is open to you right now; check again after retry_after_seconds "
		    "(at retry_at), or sooner on a study.matched event.");
		act = json_object_array_get_idx(next, json_object_array_length(next) - 1);
		jadd_int(act, "retry_after_seconds", CHECK_LATER_SECONDS);
		jadd_time(act, "retry_at", r->now + CHECK_LATER_SECONDS);
	}
	if (n > (size_t)(cursor + limit)) {	/* ranked beyond this page */
		jb_raw(pb, "],\"next_cursor\":\"");
		jb_int(pb, cursor + limit);
		jb_raw(pb, "\",\"nextActions\":");
	} else
		jb_raw(pb, "],\"next_cursor\":null,\"nextActions\":");
	jb_raw(pb, json_object_to_json_string_ext(next,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	jb_raw(pb, "}");
	json_object_put(next);
	match_top_free(top, n);
	reply_text(r, 200, pb);
	return H_OK;
}

/* --- POST /studies/{id}/accept --- */

/* url + (? or &) + the three parameters, before any #fragment (handlers.h). */
char *
participant_url(const char *url, const char *anon, const char *study_id, const char *prt_id)
{
	const char *hash = strchr(url, '#'), *q = strchr(url, '?');
	size_t base = hash ? (size_t)(hash - url) : strlen(url);
	const char *sep = q == NULL || (size_t)(q - url) >= base ? "?" :
	    (url[base - 1] == '?' || url[base - 1] == '&') ? "" : "&";
	size_t n = strlen(url) + 128;
	char *out = malloc(n);

	if (out == NULL)
		return NULL;
	snprintf(out, n, "%.*s%sparticipant_id=%s&study_id=%s&participation_id=%s%s",
	    (int)base, url, sep, anon, study_id, prt_id, hash ? hash : "");
	return out;
}

static enum db_rc
accept_tx(struct req *r, void *arg)
{
	const char *id = arg;
	struct json_object *o, *next;
	struct participation p;
	struct study s = { 0 };
	char ep[ENDPOINT_MAX], *url;
	enum arps_err outcome;
	enum db_rc rc;

	rc = txn_study_accept(r->db, r->cfg, id, r->who.id, r->agent_cur, r->now, &s, &p, &outcome);
	if (rc != DB_OK || outcome != ARPS_OK) {
		db_study_clear(&s);
		db_participation_clear(&p);
		if (rc != DB_OK)
			return rc;
		reply_refusal(r, outcome);
		return DB_ROLLBACK;
	}
	if ((url = participant_url(s.study_url, p.participant_id, s.id, p.id)) == NULL) {
		db_study_clear(&s);
		db_participation_clear(&p);
		return DB_ERR;
	}
	o = json_object_new_object();
	jadd_str(o, "participation_id", p.id);
	jadd_str(o, "study_id", s.id);
	jadd_str(o, "status", part_state_name(p.state));
	jadd_str(o, "study_url", url);
	jadd_int(o, "timeout_hours", PART_TIMEOUT_HOURS);
	jadd_time(o, "accepted_at", p.accepted_at);
	jadd_time(o, "expires_at", p.accepted_at + PART_TIMEOUT_SECONDS);
	jadd_str(o, "flow", "accepted -> in_progress -> submitted -> approved");
	next = json_object_new_array();
	endpoint(ep, "POST", s.id, "complete");
	jadd_action(next, "complete", ep, s.completion_code != NULL ?
	    "Open study_url, finish the study, then submit with {\"completion_code\": ...}." :
	    "Open study_url, finish the study, then submit completion.");
	endpoint(ep, "POST", s.id, "withdraw");
	jadd_action(next, "withdraw", ep, "Withdraw at any time (no reputation change).");
	json_object_object_add(o, "nextActions", next);
	reply_json(r, 200, o);
	free(url);
	db_study_clear(&s);
	db_participation_clear(&p);
	return DB_OK;
}

enum h_rc
h_accept(struct req *r)
{
	if (!ids_valid(IDS_STUDY, r->params[0]))
		return reply_refusal(r, ARPS_E_NOT_FOUND);
	return req_tx(r, accept_tx, r->params[0]);
}

/* --- POST /studies/{id}/complete | withdraw --- */

struct complete_in {
	const char *code;
};

static const struct field complete_fields[] = {
	{ "completion_code", F_STR, F_NULLABLE, VAL_COMPLETION_CODE_MIN, VAL_COMPLETION_CODE_MAX,
	    offsetof(struct complete_in, code) },
};
const struct field_list fields_complete = FIELD_LIST(complete_fields);

struct agent_ev_ctx {
	const char *study_id, *code;
	enum part_event ev;
};

static enum db_rc
agent_ev_tx(struct req *r, void *arg)
{
	struct agent_ev_ctx *c = arg;
	struct json_object *o, *next, *poll;
	struct participation p;
	char ep[ENDPOINT_MAX];
	enum arps_err outcome;
	enum db_rc rc;

	rc = txn_participation_agent_event(r->db, r->cfg, c->study_id, r->who.id, c->ev, c->code, r->now,
	    &p, NULL, &outcome);
	if (rc != DB_OK || outcome != ARPS_OK) {
		db_participation_clear(&p);
		if (rc != DB_OK)
			return rc;
		reply_refusal(r, outcome);
		return refusal_kept(outcome) ? DB_OK : DB_ROLLBACK;
	}
	o = json_object_new_object();
	jadd_str(o, "participation_id", p.id);
	jadd_str(o, "study_id", p.study_id);
	jadd_str(o, "status", part_state_name(p.state));
	if (c->ev == PART_EV_COMPLETE) {
		jadd_time(o, "submitted_at", p.submitted_at);
		next = json_object_new_array();
		endpoint(ep, "GET", p.study_id, NULL);
		jadd_action(next, "view_detail", ep, "Poll the study to see the review outcome.");
		json_object_object_add(o, "nextActions", next);
		poll = json_object_new_object();
		jadd_str(poll, "recommended", "5m");
		jadd_str(poll, "note", "Review takes from minutes up to 48 hours; a submission "
		    "not reviewed within 48 hours is approved automatically.");
		json_object_object_add(o, "polling", poll);
	}
	db_participation_clear(&p);
	reply_json(r, 200, o);
	return DB_OK;
}

static enum h_rc
agent_event(struct req *r, enum part_event ev)
{
	struct complete_in in = { 0 };
	struct agent_ev_ctx c;
	unsigned present;

	if (decode_body_or_reply(r, complete_fields,
	    ev == PART_EV_COMPLETE ? NFIELDS(complete_fields) : 0, &in, &present) != H_OK)
		return H_REPLIED;
	if (!ids_valid(IDS_STUDY, r->params[0]))
		return reply_refusal(r, ARPS_E_NOT_FOUND);
	c.study_id = r->params[0];
	c.code = in.code;
	c.ev = ev;
	return req_tx(r, agent_ev_tx, &c);
}

HANDLER_EVENT(h_complete, agent_event, PART_EV_COMPLETE)
HANDLER_EVENT(h_withdraw, agent_event, PART_EV_WITHDRAW)

/* --- GET /studies/history --- */

enum h_rc
h_history(struct req *r)
{
	struct json_object *arr, *it;
	struct participation *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if ((rc = db_history_list(r->db, r->who.id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		it = json_object_new_object();
		jadd_str(it, "participation_id", v[i].id);
		jadd_str(it, "study_id", v[i].study_id);
		jadd_str(it, "title", v[i].title);
		jadd_str(it, "status", part_state_name(v[i].state));
		jadd_int(it, "reward_per_participant", v[i].reward);
		jadd_time(it, "accepted_at", v[i].accepted_at);
		jadd_time(it, "submitted_at", v[i].submitted_at);
		jadd_time(it, "reviewed_at", v[i].reviewed_at);
		jadd_str(it, "reason", v[i].reason);
		jadd_str(it, "category", v[i].category[0] != '\0' ? v[i].category : NULL);
		json_object_array_add(arr, it);
	}
	db_participations_free(v, n);
	return reply_page(r, "participations", arr, next);
}
