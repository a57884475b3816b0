/* Study endpoints: the researcher side, and the study detail both sides
 * read (design.md §6.2, design.md §6.13, design.md §6.14,
 * design.md §6.20).  Agent participation endpoints are in participation.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/money.h"
#include "core/reputation.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/groups.h"
#include "db/studies.h"
#include "txn/lifecycle.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/config.h"
#include "lib/secret.h"

/* --- answer shapes --- */

/* max_participants - occupied, in every study state (api.md §7.4): a
 * stopped study shows the slots a withdrawal or a timeout reopened; whether
 * it takes accepts is its status.  From the row's occupied column (the
 * slots held, kept under the study lock; verify-ledger checks it against
 * the participations), so the row alone answers it, as in the listing. */
static int64_t
spots_left(const struct study *s)
{
	return s->occupied >= s->max_participants ? 0 : s->max_participants - s->occupied;
}

static struct json_object *
stats_json(const struct study *s)
{
	struct json_object *o = json_object_new_object();

	jadd_int(o, "accepted", s->counts.accepted);
	jadd_int(o, "in_progress", s->counts.in_progress);
	jadd_int(o, "submitted", s->counts.submitted);
	jadd_int(o, "approved", s->counts.approved);
	jadd_int(o, "rejected", s->counts.rejected);
	jadd_int(o, "timed_out", s->counts.timed_out);
	jadd_int(o, "withdrawn", s->counts.withdrawn);
	jadd_int(o, "screened_out", s->counts.screened_out);
	jadd_int(o, "spots_remaining", spots_left(s));
	return o;
}

static struct json_object *
funding_json(const struct study *s)
{
	struct json_object *o = json_object_new_object();

	jadd_int(o, "frozen_cents", s->frozen);
	jadd_int(o, "spent_cents", s->spent);
	jadd_int(o, "refunded_cents", s->refunded);
	jadd_int(o, "fee_cents_per_participant", s->fee);
	jadd_int(o, "total_budget_cents", s->frozen + s->spent + s->refunded);
	jadd_int(o, "bonus_cents", s->bonus);
	return o;
}

/* The fields both views share. */
static struct json_object *
study_common(const struct study *s)
{
	struct json_object *o = json_object_new_object();

	jadd_str(o, "id", s->id);
	jadd_str(o, "title", s->title);
	jadd_str(o, "description", s->description);
	jadd_str(o, "study_url", s->study_url);
	jadd_int(o, "reward_per_participant", s->reward);
	jadd_int(o, "max_participants", s->max_participants);
	jadd_int(o, "estimated_duration_minutes", s->duration_minutes);
	jadd_time(o, "deadline", s->has_deadline ? s->deadline : 0);
	jadd_str(o, "status", study_state_name(s->state));
	return o;
}

/* Researcher view (design.md §6.20): every create field, id, status,
 * completion_code, created_at, stats and funding. */
static struct json_object *
study_researcher_json(const struct study *s)
{
	struct json_object *o = study_common(s);

	jadd_str(o, "screening_criteria", s->criteria);
	jadd_str(o, "completion_code", s->completion_code);
	jadd_time(o, "created_at", s->created_at);
	jadd_time(o, "closed_at", s->closed_at);
	jadd_time(o, "completed_at", s->completed_at);
	json_object_object_add(o, "stats", stats_json(s));
	json_object_object_add(o, "funding", funding_json(s));
	return o;
}

/* The researcher view with what design.md §14 adds: eligibility,
 * completion_codes and screen_out_cents (their rows read only for a
 * study that has them).  NULL on a database error. */
static struct json_object *
study_researcher_view(struct req *r, const struct study *s)
{
	struct json_object *o, *e, *arr, *it;
	struct study_elig el;
	struct study_codes sc;
	size_t k, i;

	memset(&el, 0, sizeof el);
	memset(&sc, 0, sizeof sc);
	if ((s->eligibility && db_study_elig_get(r->db, s->id, &el) != DB_OK) ||
	    (s->needs_code && db_study_codes_get(r->db, s->id, &sc) != DB_OK))
		return NULL;
	o = study_researcher_json(s);
	e = json_object_new_object();
	for (k = 0; k < ELIG__MAX; k++) {
		arr = json_object_new_array();
		for (i = 0; i < el.n[k]; i++)
			json_object_array_add(arr, json_object_new_string(el.ids[k][i]));
		json_object_object_add(e, elig_kind_name((enum elig_kind)k), arr);
	}
	json_object_object_add(o, "eligibility", e);
	arr = json_object_new_array();
	for (i = 0; i < sc.n; i++) {
		it = json_object_new_object();
		jadd_str(it, "code", sc.c[i].code);
		jadd_str(it, "action", code_action_name(sc.c[i].action));
		jadd_str(it, "add_to_group", sc.c[i].group[0] != '\0' ? sc.c[i].group : NULL);
		json_object_array_add(arr, it);
	}
	json_object_object_add(o, "completion_codes", arr);
	jadd_int(o, "screen_out_cents", s->screen_out);
	return o;
}

/* 200 or 201 with the researcher view; H_REPLIED (500) on a database
 * error. */
static enum h_rc
reply_study(struct req *r, int status, const struct study *s)
{
	struct json_object *o = study_researcher_view(r, s);

	if (o == NULL)
		return reply_db(r, DB_ERR);
	return reply_json(r, status, o);
}

/* Agent view: no screening_criteria, completion_code, stats or funding;
 * the agent's own participation in it (or null). */
static struct json_object *
study_agent_json(const struct study *s, const struct participation *p)
{
	struct json_object *o = study_common(s), *po;

	jadd_int(o, "spots_remaining", spots_left(s));
	json_object_object_add(o, "requires_completion_code",
	    json_object_new_boolean(s->needs_code != 0));
	jadd_time(o, "created_at", s->created_at);
	if (p == NULL) {
		json_object_object_add(o, "participation", NULL);
		return o;
	}
	po = json_object_new_object();
	jadd_str(po, "participation_id", p->id);
	jadd_str(po, "status", part_state_name(p->state));
	jadd_time(po, "accepted_at", p->accepted_at);
	jadd_time(po, "submitted_at", p->submitted_at);
	jadd_time(po, "reviewed_at", p->reviewed_at);
	jadd_str(po, "reason", p->reason);
	/* the link with its tracking parameters, as accept gave it, while
	 * the participation is open to work on */
	if (part_is_active(p->state)) {
		char *url = participant_url(s->study_url, p->participant_id, s->id, p->id);

		jadd_str(po, "study_url", url);
		free(url);
	}
	json_object_object_add(o, "participation", po);
	return o;
}

/* A participant item (design.md §6.14) of one of the caller's studies,
 * with the agent's pseudonym for this researcher (design.md §13). */
static struct json_object *
participant_json(const struct req *r, const struct participation *p)
{
	struct json_object *o = json_object_new_object();
	char psn[PSN_BUFSZ];

	secret_pseudonym(r->cfg, r->who.id, p->agent_id, psn);
	jadd_str(o, "participant_id", p->participant_id);
	jadd_str(o, "pseudonym", psn);
	jadd_str(o, "status", part_state_name(p->state));
	jadd_time(o, "accepted_at", p->accepted_at);
	jadd_time(o, "submitted_at", p->submitted_at);
	jadd_time(o, "reviewed_at", p->reviewed_at);
	jadd_str(o, "tier", rep_tier_name(rep_tier_of(p->reputation)));
	jadd_str(o, "reason", p->reason);
	jadd_str(o, "category", p->category[0] != '\0' ? p->category : NULL);
	return o;
}

static enum h_rc
reply_no_study(struct req *r, const char *id)
{
	return reply_err(r, ARPS_E_NOT_FOUND, "no such study: %.40s", id);
}

/* --- POST /studies --- */

struct study_in {
	const char *title, *description, *study_url, *criteria, *code;
	int64_t reward, max, duration, deadline, screen_out;
	struct json_object *codes, *elig;
};

#define STUDY_FIELDS(X) \
	X(study_in, STUDY_F_TITLE, "title", F_NAME, F_REQUIRED, VAL_STUDY_TITLE_MIN, \
	    VAL_STUDY_TITLE_MAX, title) \
	X(study_in, STUDY_F_DESCRIPTION, "description", F_TEXT, F_REQUIRED, VAL_STUDY_DESC_MIN, \
	    VAL_STUDY_DESC_MAX, description) \
	X(study_in, STUDY_F_URL, "study_url", F_URL, F_REQUIRED, 0, VAL_URL_MAX, study_url) \
	X(study_in, STUDY_F_REWARD, "reward_per_participant", F_INT, F_REQUIRED, VAL_REWARD_MIN, \
	    VAL_REWARD_MAX, reward) \
	X(study_in, STUDY_F_MAX, "max_participants", F_INT, F_REQUIRED, VAL_MAX_PARTICIPANTS_MIN, \
	    VAL_MAX_PARTICIPANTS_MAX, max) \
	X(study_in, STUDY_F_CRITERIA, "screening_criteria", F_TEXT, F_REQUIRED, VAL_SCREENING_MIN, \
	    VAL_SCREENING_MAX, criteria) \
	X(study_in, STUDY_F_DURATION, "estimated_duration_minutes", F_INT, F_REQUIRED, \
	    VAL_DURATION_MIN, VAL_DURATION_MAX, duration) \
	X(study_in, STUDY_F_DEADLINE, "deadline", F_TIME, F_NULLABLE, 0, 0, deadline) \
	X(study_in, STUDY_F_CODE, "completion_code", F_NAME, F_NULLABLE, VAL_COMPLETION_CODE_MIN, \
	    VAL_COMPLETION_CODE_MAX, code) \
	X(study_in, STUDY_F_CODES, "completion_codes", F_ARRAY, F_NULLABLE, 1, STUDY_CODES_MAX, \
	    codes) \
	X(study_in, STUDY_F_SCREEN_OUT, "screen_out_cents", F_INT, F_NULLABLE, 0, VAL_REWARD_MAX, \
	    screen_out) \
	X(study_in, STUDY_F_ELIG, "eligibility", F_OBJECT, F_NULLABLE, 0, 0, elig)

enum { STUDY_FIELDS(FIELD_INDEX) };
static const struct field study_fields[] = { STUDY_FIELDS(FIELD_ROW) };
const struct field_list fields_study = FIELD_LIST(study_fields);

/* One completion code of completion_codes (design.md §14). */
struct code_in {
	const char *code, *action, *group;
};
static const struct field code_fields[] = {
	{ "code", F_NAME, F_REQUIRED, STUDY_CODE_MIN, STUDY_CODE_MAX,
	    offsetof(struct code_in, code) },
	{ "action", F_NAME, F_REQUIRED, 1, 16, offsetof(struct code_in, action) },
	{ "add_to_group", F_NAME, F_NULLABLE, 1, 63, offsetof(struct code_in, group) },
};
const struct field_list fields_code = FIELD_LIST(code_fields);

/* A group id of the caller's, or a 422 naming field. */
static enum h_rc
own_group_or_reply(struct req *r, const char *field, const char *id)
{
	struct group g;
	enum db_rc rc;

	if (strncmp(id, "grp_", 4) != 0 || strlen(id) != IDS_LEN ||
	    (rc = db_group_get(r->db, id, r->who.id, 0, &g)) == DB_NOTFOUND)
		return reply_err(r, ARPS_E_VALIDATION, "%s: no such group of yours: %.40s", field,
		    id);
	if (rc != DB_OK)
		return reply_db(r, rc);
	db_group_clear(&g);
	return H_OK;
}

/* The codes of a create or clone body (completion_code or
 * completion_codes, not both) into *out; a refusal answered. */
static enum h_rc
codes_or_reply(struct req *r, const char *single, struct json_object *arr,
    struct study_codes *out)
{
	struct code_in ci;
	unsigned present;
	size_t i, j, n;
	char field[64];

	memset(out, 0, sizeof *out);
	if (single != NULL && arr != NULL)
		return reply_err(r, ARPS_E_VALIDATION,
		    "completion_codes: give completion_code or completion_codes, not both");
	if (single != NULL) {
		out->n = 1;
		snprintf(out->c[0].code, sizeof out->c[0].code, "%s", single);
		out->c[0].action = CODE_REVIEW;
		return H_OK;
	}
	n = arr != NULL ? json_object_array_length(arr) : 0;
	for (i = 0; i < n; i++) {
		memset(&ci, 0, sizeof ci);
		if (decode_item_or_reply(r, json_object_array_get_idx(arr, i), "completion_codes", i,
		    code_fields, NFIELDS(code_fields), &ci, &present) != H_OK)
			return H_REPLIED;
		if (!code_action_from_name(ci.action, &out->c[i].action))
			return reply_err(r, ARPS_E_VALIDATION,
			    "completion_codes[%zu].action: must be one of " CODE_ACTION_NAMES, i);
		snprintf(out->c[i].code, sizeof out->c[i].code, "%s", ci.code);
		for (j = 0; j < i; j++)
			if (strcmp(out->c[j].code, out->c[i].code) == 0)
				return reply_err(r, ARPS_E_VALIDATION,
				    "completion_codes[%zu].code: the same code as completion_codes[%zu]",
				    i, j);
		if (ci.group != NULL) {
			snprintf(field, sizeof field, "completion_codes[%zu].add_to_group", i);
			if (own_group_or_reply(r, field, ci.group) != H_OK)
				return H_REPLIED;
			snprintf(out->c[i].group, sizeof out->c[i].group, "%s", ci.group);
		}
		out->n++;
	}
	return H_OK;
}

/* An eligibility object (design.md §14) into *out: each list at most
 * ELIG_LIST_MAX of the caller's own group or study ids; a refusal
 * answered. */
static enum h_rc
elig_or_reply(struct req *r, struct json_object *obj, struct study_elig *out)
{
	struct json_object *arr;
	struct study s;
	const char *id;
	char field[64];
	size_t k, i, n;
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	if (obj == NULL)
		return H_OK;
	json_object_object_foreach(obj, key, val) {
		(void)val;
		for (k = 0; k < ELIG__MAX && strcmp(key, elig_kind_name((enum elig_kind)k)) != 0; k++)
			;
		if (k == ELIG__MAX)
			return reply_err(r, ARPS_E_VALIDATION, "eligibility.%.40s: unknown field; "
			    "the lists are include_groups, exclude_groups, exclude_studies", key);
	}
	for (k = 0; k < ELIG__MAX; k++) {
		snprintf(field, sizeof field, "eligibility.%s", elig_kind_name((enum elig_kind)k));
		if (!json_object_object_get_ex(obj, elig_kind_name((enum elig_kind)k), &arr) ||
		    arr == NULL)
			continue;
		if (!json_object_is_type(arr, json_type_array))
			return reply_err(r, ARPS_E_VALIDATION, "%s: must be an array", field);
		if ((n = json_object_array_length(arr)) > ELIG_LIST_MAX)
			return reply_err(r, ARPS_E_VALIDATION, "%s: must have 0 to %d items", field,
			    ELIG_LIST_MAX);
		for (i = 0; i < n; i++) {
			if (decode_item_str_or_reply(r, arr, field, i, 63, &id) != H_OK)
				return H_REPLIED;
			snprintf(field, sizeof field, "eligibility.%s[%zu]",
			    elig_kind_name((enum elig_kind)k), i);
			if (k != ELIG_EXCLUDE_STUDY) {
				if (own_group_or_reply(r, field, id) != H_OK)
					return H_REPLIED;
			} else {
				if (!ids_valid(IDS_STUDY, id) ||
				    (rc = db_study_get_row(r->db, id, 0, &s)) == DB_NOTFOUND)
					return reply_err(r, ARPS_E_VALIDATION,
					    "%s: no such study of yours: %.40s", field, id);
				if (rc != DB_OK)
					return reply_db(r, rc);
				rc = strcmp(s.researcher_id, r->who.id) == 0 ? DB_OK : DB_NOTFOUND;
				db_study_clear(&s);
				if (rc != DB_OK)
					return reply_err(r, ARPS_E_VALIDATION,
					    "%s: no such study of yours: %.40s", field, id);
			}
			snprintf(field, sizeof field, "eligibility.%s",
			    elig_kind_name((enum elig_kind)k));
			snprintf(out->ids[k][out->n[k]++], IDS_BUFSZ, "%s", id);
		}
	}
	return H_OK;
}

struct create_ctx {
	struct study_new sn;
	struct study_elig elig;
	struct study_codes codes;
	char id[IDS_BUFSZ];
};

static enum db_rc
create_tx(struct req *r, void *arg)
{
	struct create_ctx *c = arg;
	struct study_new *in = &c->sn;
	struct study s;
	enum arps_err outcome;
	enum db_rc rc;

	if ((rc = txn_study_create(r->db, in, r->now, c->id, &outcome)) != DB_OK)
		return rc;
	if (outcome == ARPS_E_INSUFFICIENT_SC) {
		reply_err(r, ARPS_E_INSUFFICIENT_SC,
		    "the wallet's available balance does not cover max_participants x "
		    "(reward + fee) = %lld cents", (long long)in->plan.total);
		return DB_ROLLBACK;
	}
	if (outcome != ARPS_OK) {
		reply_err(r, outcome, "the study cannot be funded");
		return DB_ROLLBACK;
	}
	if ((rc = db_study_get(r->db, c->id, 0, &s)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	rc = reply_study(r, 201, &s) == H_OK ? DB_OK : DB_ERR;
	db_study_clear(&s);
	return rc;
}

/* Check in (decoded by study_fields, present its bits) and fill c for
 * txn_study_create; a refusal answered.  Shared by create and clone. */
static enum h_rc
study_new_or_reply(struct req *r, const struct study_in *in, unsigned present,
    struct create_ctx *c)
{
	struct study_new *sn = &c->sn;
	enum arps_err plan_rc;

	if (FIELD_GIVEN(present, STUDY_F_DEADLINE) && in->deadline <= r->now)
		return reply_err(r, ARPS_E_VALIDATION, "deadline: must be in the future");
	if (in->screen_out > in->reward)
		return reply_err(r, ARPS_E_VALIDATION,
		    "screen_out_cents: must be between 0 and reward_per_participant (%lld)",
		    (long long)in->reward);
	plan_rc = money_study_plan(in->reward, in->max, (int)r->cfg->fee_bps,
	    r->cfg->max_study_budget_cents, &sn->plan);
	if (plan_rc != ARPS_OK)
		return reply_err(r, ARPS_E_VALIDATION,
		    "max_participants: the budget max_participants x (reward + fee) exceeds the "
		    "per-study limit of %lld cents", (long long)r->cfg->max_study_budget_cents);
	if (codes_or_reply(r, in->code, in->codes, &c->codes) != H_OK ||
	    elig_or_reply(r, in->elig, &c->elig) != H_OK)
		return H_REPLIED;
	if (money_fee(in->screen_out, (int)r->cfg->fee_bps, &sn->screen_out_fee) != ARPS_OK)
		return reply_err(r, ARPS_E_VALIDATION, "screen_out_cents: out of range");
	sn->researcher_id = r->who.id;
	sn->title = in->title;
	sn->description = in->description;
	sn->study_url = in->study_url;
	sn->criteria = in->criteria;
	sn->completion_code = c->codes.n > 0 ? c->codes.c[0].code : NULL;
	sn->codes = &c->codes;
	sn->elig = &c->elig;
	sn->screen_out = in->screen_out;
	sn->duration_minutes = in->duration;
	sn->has_deadline = FIELD_GIVEN(present, STUDY_F_DEADLINE);
	sn->deadline = in->deadline;
	return H_OK;
}

enum h_rc
h_study_create(struct req *r)
{
	struct study_in in;
	struct create_ctx c;
	unsigned present;

	memset(&in, 0, sizeof in);
	if (decode_body_or_reply(r, study_fields, NFIELDS(study_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	if (study_new_or_reply(r, &in, present, &c) != H_OK)
		return H_REPLIED;
	/* The criteria wait in the embedding queue (arps-embed). */
	return req_tx(r, create_tx, &c);
}

/* --- GET /studies --- */

enum h_rc
h_study_list(struct req *r)
{
	struct json_object *arr;
	struct study *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if ((rc = db_study_list_owner(r->db, r->who.id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *o = study_researcher_view(r, &v[i]);

		if (o == NULL) {
			json_object_put(arr);
			db_studies_free(v, n);
			return reply_db(r, DB_ERR);
		}
		json_object_array_add(arr, o);
	}
	db_studies_free(v, n);
	return reply_page(r, "studies", arr, next);
}

/* --- GET /studies/{id} --- */

struct open_ctx {
	const char *study_id;
};

/* The agent's first detail fetch after accepting: accepted -> in_progress
 * (under the locks of txn_participation_agent_event, which decide again
 * whatever the request saw before), then the agent view from the
 * participation and the study's row as the event left them. */
static enum db_rc
open_tx(struct req *r, void *arg)
{
	struct open_ctx *c = arg;
	struct participation p;
	struct study s;
	enum arps_err outcome;
	int took;
	enum db_rc rc;

	rc = txn_participation_agent_event(r->db, r->cfg, c->study_id, r->who.id, PART_EV_OPEN, NULL, r->now,
	    &p, &s, &outcome);
	if (rc == DB_OK && outcome == ARPS_E_NOT_FOUND)
		rc = DB_ROLLBACK;
	took = p.id[0] != '\0';
	if (rc == DB_OK && !took && s.state != STUDY_ACTIVE)
		rc = DB_ROLLBACK;	/* no participation here (the request raced a change) */
	if (rc == DB_ROLLBACK)
		reply_no_study(r, c->study_id);
	else if (rc == DB_OK)
		reply_json(r, 200, study_agent_json(&s, took ? &p : NULL));
	db_study_clear(&s);
	db_participation_clear(&p);
	return rc;
}

enum h_rc
h_study_get(struct req *r)
{
	const char *id = r->params[0];
	const struct agent_current *cur = r->agent_cur;
	struct participation p;
	struct open_ctx oc = { id };
	struct study s;
	int took = 0;
	enum db_rc rc;

	if (!ids_valid(IDS_STUDY, id))
		return reply_no_study(r, id);
	/* The key's look-up saw the agent's accepted participation in this
	 * study: open it at once (HEAD only looks: a GET opens). */
	if (r->who.kind == AUTH_KEY && cur != NULL && !r->head &&
	    strcmp(cur->study_id, id) == 0 && strcmp(cur->status, "accepted") == 0)
		return req_tx(r, open_tx, &oc);
	/* an agent's view shows no counts: the row alone */
	rc = r->who.kind == AUTH_BEARER ? db_study_get(r->db, id, 0, &s) :
	    db_study_get_row(r->db, id, 0, &s);
	if (rc == DB_NOTFOUND)
		return reply_no_study(r, id);
	if (rc != DB_OK)
		return reply_db(r, rc);
	if (r->who.kind == AUTH_BEARER) {
		/* Another researcher's study does not exist for the caller (6.2). */
		if (strcmp(s.researcher_id, r->who.id) != 0) {
			db_study_clear(&s);
			return reply_no_study(r, id);
		}
		reply_study(r, 200, &s);
		db_study_clear(&s);
		return H_OK;
	}
	if ((rc = db_participation_by_agent(r->db, id, r->who.id, &p, &took)) != DB_OK) {
		db_study_clear(&s);
		return reply_db(r, rc);
	}
	if (!took && s.state != STUDY_ACTIVE) {
		db_study_clear(&s);
		return reply_no_study(r, id);
	}
	/* an agent its eligibility leaves out does not see it (design.md §14) */
	if (!took && s.eligibility) {
		int ok = 0;

		if ((rc = db_study_eligible(r->db, id, r->who.id, &ok)) != DB_OK || !ok) {
			db_study_clear(&s);
			return rc == DB_OK || rc == DB_NOTFOUND ? reply_no_study(r, id) :
			    reply_db(r, rc);
		}
	}
	/* accepted but not as the key's look-up saw it (accepted since), or
	 * active past its 24 h: the open's transaction opens it, or times it
	 * out as the sweep would, so the look never shows an expired
	 * participation as running with its link (HEAD only looks) */
	if (took && !r->head && (p.state == PART_ACCEPTED ||
	    (part_is_active(p.state) && part_timeout_due(p.accepted_at, r->now)))) {
		db_study_clear(&s);
		db_participation_clear(&p);
		return req_tx(r, open_tx, &oc);
	}
	reply_json(r, 200, study_agent_json(&s, took ? &p : NULL));
	db_study_clear(&s);
	db_participation_clear(&p);
	return H_OK;
}

/* --- PATCH /studies/{id} --- */

struct patch_in {
	const char *title, *description;
	int64_t max, deadline;
};

#define PATCH_FIELDS(X) \
	X(patch_in, PATCH_F_TITLE, "title", F_NAME, 0, VAL_STUDY_TITLE_MIN, \
	    VAL_STUDY_TITLE_MAX, title) \
	X(patch_in, PATCH_F_DESCRIPTION, "description", F_TEXT, 0, VAL_STUDY_DESC_MIN, \
	    VAL_STUDY_DESC_MAX, description) \
	X(patch_in, PATCH_F_DEADLINE, "deadline", F_TIME, 0, 0, 0, deadline) \
	X(patch_in, PATCH_F_MAX, "max_participants", F_INT, 0, VAL_MAX_PARTICIPANTS_MIN, \
	    VAL_MAX_PARTICIPANTS_MAX, max)

enum { PATCH_FIELDS(FIELD_INDEX) };
static const struct field patch_fields[] = { PATCH_FIELDS(FIELD_ROW) };
const struct field_list fields_study_patch = FIELD_LIST(patch_fields);

struct patch_ctx {
	const char *study_id;
	struct study_patch p;
};

static enum db_rc
patch_tx(struct req *r, void *arg)
{
	struct patch_ctx *c = arg;
	struct study s;
	const char *why;
	enum arps_err outcome;
	enum db_rc rc;

	rc = txn_study_update(r->db, c->study_id, r->who.id, &c->p, r->cfg->max_study_budget_cents,
	    r->now, &s, &why, &outcome);
	if (rc != DB_OK) {
		db_study_clear(&s);
		return rc;
	}
	if (outcome != ARPS_OK) {
		if (outcome == ARPS_E_NOT_FOUND)
			reply_no_study(r, c->study_id);
		else if (outcome == ARPS_E_INVALID_STATE)
			reply_err(r, outcome, "cannot change a study that is %s",
			    study_state_name(s.state));
		else if (outcome == ARPS_E_INSUFFICIENT_SC)
			reply_err(r, outcome, "the wallet's available balance does not cover the "
			    "added places x (reward + fee)");
		else
			reply_err(r, outcome, "%s", why ? why : "the change is refused");
		db_study_clear(&s);
		return DB_ROLLBACK;
	}
	db_study_clear(&s);
	if ((rc = db_study_get(r->db, c->study_id, 0, &s)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	reply_json(r, 200, study_researcher_json(&s));
	db_study_clear(&s);
	return DB_OK;
}

/* What a researcher may still change after publishing (docs/api.md §7.4). */
enum h_rc
h_study_patch(struct req *r)
{
	struct patch_in in;
	struct patch_ctx c;
	unsigned present;

	memset(&in, 0, sizeof in);
	if (decode_body_or_reply(r, patch_fields, NFIELDS(patch_fields), &in, &present) != H_OK)
		return H_REPLIED;
	if (present == 0)
		return reply_err(r, ARPS_E_VALIDATION, "body: give at least one of title, "
		    "description, deadline, max_participants");
	if (!ids_valid(IDS_STUDY, r->params[0]))
		return reply_no_study(r, r->params[0]);
	memset(&c, 0, sizeof c);
	c.study_id = r->params[0];
	c.p.title = FIELD_GIVEN(present, PATCH_F_TITLE) ? in.title : NULL;
	c.p.description = FIELD_GIVEN(present, PATCH_F_DESCRIPTION) ? in.description : NULL;
	c.p.has_deadline = FIELD_GIVEN(present, PATCH_F_DEADLINE);
	c.p.deadline = in.deadline;
	c.p.max_participants = FIELD_GIVEN(present, PATCH_F_MAX) ? in.max : 0;
	return req_tx(r, patch_tx, &c);
}

/* --- POST /studies/{id}/pause | resume | stop --- */

struct event_ctx {
	const char *study_id;
	enum study_event ev;
};

static enum db_rc
event_tx(struct req *r, void *arg)
{
	struct event_ctx *c = arg;
	struct study s;
	enum arps_err outcome;
	enum db_rc rc;

	if ((rc = txn_study_event(r->db, c->study_id, r->who.id, c->ev, r->now, &s,
	    &outcome)) != DB_OK)
		return rc;
	if (outcome == ARPS_E_NOT_FOUND) {
		db_study_clear(&s);
		reply_no_study(r, c->study_id);
		return DB_ROLLBACK;
	}
	if (outcome != ARPS_OK) {
		reply_err(r, outcome, "cannot %s a study that is %s",
		    study_event_name(c->ev), s.id[0] ? study_state_name(s.state) : "unknown");
		db_study_clear(&s);
		return DB_ROLLBACK;
	}
	rc = reply_study(r, 200, &s) == H_OK ? DB_OK : DB_ERR;
	db_study_clear(&s);
	return rc;
}

static enum h_rc
study_event(struct req *r, enum study_event ev)
{
	struct event_ctx c = { r->params[0], ev };

	if (!ids_valid(IDS_STUDY, c.study_id))
		return reply_no_study(r, c.study_id);
	return req_tx(r, event_tx, &c);
}

HANDLER_EVENT(h_study_pause, study_event, STUDY_EV_PAUSE)
HANDLER_EVENT(h_study_resume, study_event, STUDY_EV_RESUME)
HANDLER_EVENT(h_study_stop, study_event, STUDY_EV_STOP)

/* --- GET /studies/{id}/participants --- */

enum h_rc
h_participants(struct req *r)
{
	const char *id = r->params[0];
	struct json_object *arr;
	struct participation *v = NULL;
	struct study s;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
	if (!ids_valid(IDS_STUDY, id))
		return reply_no_study(r, id);
	if ((rc = db_study_get(r->db, id, 0, &s)) == DB_NOTFOUND)
		return reply_no_study(r, id);
	if (rc != DB_OK)
		return reply_db(r, rc);
	if (strcmp(s.researcher_id, r->who.id) != 0) {
		db_study_clear(&s);
		return reply_no_study(r, id);
	}
	db_study_clear(&s);
	if ((rc = db_participants_list(r->db, id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, participant_json(r, &v[i]));
	db_participations_free(v, n);
	return reply_page(r, "participants", arr, next);
}

/* --- POST /studies/{id}/participants/{pid}/approve | reject --- */

struct review_in {
	const char *reason, *category;
};

static const struct field review_fields[] = {
	{ "reason", F_TEXT, F_NULLABLE, VAL_REASON_MIN, VAL_REASON_MAX,
	    offsetof(struct review_in, reason) },
};
const struct field_list fields_review = FIELD_LIST(review_fields);
/* reject: the reason and its category (design.md §13) */
static const struct field reject_fields[] = {
	{ "reason", F_TEXT, F_NULLABLE, VAL_REASON_MIN, VAL_REASON_MAX,
	    offsetof(struct review_in, reason) },
	{ "category", F_NAME, F_NULLABLE, 1, PART_CAT_BUFSZ - 1,
	    offsetof(struct review_in, category) },
};
const struct field_list fields_reject = FIELD_LIST(reject_fields);

/* A category given must be one of core/participation.h's; else 422. */
static enum h_rc
category_or_reply(struct req *r, const char *field, const char *category)
{
	if (category == NULL || part_reject_cat_from_name(category, NULL))
		return H_OK;
	return reply_err(r, ARPS_E_VALIDATION, "%s: must be one of " PART_CAT_NAMES, field);
}

struct review_ctx {
	const char *study_id, *pid, *reason, *category;
	enum part_event ev;
};

/* The answer of a refused review (the single endpoint's, and a bulk
 * row's error): its code and detail. */
static enum arps_err
review_refusal(const struct settle_out *so, const char *study_id, const char *pid, char *detail,
    size_t n)
{
	if (so->outcome == ARPS_E_NOT_FOUND && so->no_participant)
		snprintf(detail, n, "no such participant in this study: %.40s", pid);
	else if (so->outcome == ARPS_E_NOT_FOUND)
		snprintf(detail, n, "no such study: %.40s", study_id);
	else if (so->outcome == ARPS_E_INVALID_STATE)
		snprintf(detail, n, "only a submitted participation can be reviewed; this one is %s",
		    part_state_name(so->p.state) ? part_state_name(so->p.state) : "not submitted");
	else
		snprintf(detail, n, "cannot review this participant");
	return so->outcome;
}

static enum db_rc
review_tx(struct req *r, void *arg)
{
	struct review_ctx *c = arg;
	struct settle_out so;
	char detail[160];
	enum arps_err e;
	enum db_rc rc;

	rc = txn_review(r->db, c->study_id, r->who.id, c->pid, c->ev, c->reason, c->category, r->now,
	    &so);
	if (rc != DB_OK) {
		db_participation_clear(&so.p);
		return rc;
	}
	if (so.outcome != ARPS_OK) {
		e = review_refusal(&so, c->study_id, c->pid, detail, sizeof detail);
		db_participation_clear(&so.p);
		reply_err(r, e, "%s", detail);
		return DB_ROLLBACK;
	}
	reply_json(r, 200, participant_json(r, &so.p));
	db_participation_clear(&so.p);
	return DB_OK;
}

static enum h_rc
review(struct req *r, enum part_event ev)
{
	struct review_in in = { 0 };
	struct review_ctx c;
	unsigned present;

	if (ev == PART_EV_REJECT ?
	    decode_body_or_reply(r, reject_fields, NFIELDS(reject_fields), &in, &present) != H_OK :
	    decode_body_or_reply(r, review_fields, NFIELDS(review_fields), &in, &present) != H_OK)
		return H_REPLIED;
	if (category_or_reply(r, "category", in.category) != H_OK)
		return H_REPLIED;
	c.study_id = r->params[0];
	c.pid = r->params[1];
	c.reason = in.reason;
	c.category = in.category;
	c.ev = ev;
	if (!ids_valid(IDS_STUDY, c.study_id))
		return reply_no_study(r, c.study_id);
	if (!anon_id_valid(c.pid))
		return reply_err(r, ARPS_E_NOT_FOUND, "no such participant in this study: %.40s",
		    c.pid);
	return req_tx(r, review_tx, &c);
}

HANDLER_EVENT(h_participant_approve, review, PART_EV_APPROVE)
HANDLER_EVENT(h_participant_reject, review, PART_EV_REJECT)

/* --- POST /studies/{id}/participants/review (design.md §13) --- */

#define BULK_MAX	500	/* participant ids of one request */

struct bulk_in {
	const char *action, *reason, *category;
	struct json_object *ids;
};

#define BULK_FIELDS(X) \
	X(bulk_in, BULK_F_ACTION, "action", F_NAME, F_REQUIRED, 1, 16, action) \
	X(bulk_in, BULK_F_IDS, "participant_ids", F_ARRAY, F_REQUIRED, 1, BULK_MAX, ids) \
	X(bulk_in, BULK_F_REASON, "reason", F_TEXT, F_NULLABLE, VAL_REASON_MIN, VAL_REASON_MAX, \
	    reason) \
	X(bulk_in, BULK_F_CATEGORY, "category", F_NAME, F_NULLABLE, 1, PART_CAT_BUFSZ - 1, \
	    category)

enum { BULK_FIELDS(FIELD_INDEX) };
static const struct field bulk_fields[] = { BULK_FIELDS(FIELD_ROW) };
const struct field_list fields_bulk_review = FIELD_LIST(bulk_fields);

struct bulk_row {
	const char *study_id, *owner, *pid, *reason, *category;
	enum part_event ev;
	int64_t now;
	struct settle_out so;
};

/* One row: its own transaction, the single review's (txn_review). */
static enum db_rc
bulk_row_tx(struct db *db, void *arg)
{
	struct bulk_row *b = arg;
	enum db_rc rc;

	db_participation_clear(&b->so.p);	/* a retried transaction starts afresh */
	rc = txn_review(db, b->study_id, b->owner, b->pid, b->ev, b->reason, b->category, b->now,
	    &b->so);
	if (rc == DB_OK && b->so.outcome != ARPS_OK)
		return DB_ROLLBACK;	/* nothing written: nothing to keep */
	return rc;
}

/* {detail, error_code, status}; detail sanitized as reply_err's is: a
 * quoted id cut at a byte count may end inside a UTF-8 sequence. */
static struct json_object *
error_json(enum arps_err e, char *detail)
{
	struct json_object *o = json_object_new_object();

	val_utf8_sanitize(detail);
	jadd_str(o, "detail", detail);
	jadd_str(o, "error_code", arps_err_code(e));
	jadd_int(o, "status", arps_err_status(e));
	return o;
}

/*
 * Each row is reviewed as the single endpoint would, in a transaction of
 * its own, so one refused row (not submitted, unknown) leaves the others
 * to go through; the answer is stored for the Idempotency-Key after the
 * rows (idem_end), so a retry replays it whole.
 */
enum h_rc
h_participants_review(struct req *r)
{
	const char *study_id = r->params[0];
	struct json_object *o, *arr, *it;
	struct bulk_in in;
	struct bulk_row b;
	struct study s;
	unsigned present;
	enum part_event ev;
	int64_t ok = 0, failed = 0;
	char detail[160];
	size_t i, n;
	enum db_rc rc;

	memset(&in, 0, sizeof in);
	if (decode_body_or_reply(r, bulk_fields, NFIELDS(bulk_fields), &in, &present) != H_OK)
		return H_REPLIED;
	if (strcmp(in.action, "approve") == 0)
		ev = PART_EV_APPROVE;
	else if (strcmp(in.action, "reject") == 0)
		ev = PART_EV_REJECT;
	else
		return reply_err(r, ARPS_E_VALIDATION, "action: must be approve or reject");
	if (ev == PART_EV_REJECT && in.reason == NULL)
		return reply_err(r, ARPS_E_VALIDATION, "reason: is required to reject");
	if (ev == PART_EV_APPROVE && in.category != NULL)
		return reply_err(r, ARPS_E_VALIDATION, "category: only a rejection has one");
	if (category_or_reply(r, "category", in.category) != H_OK)
		return H_REPLIED;
	n = json_object_array_length(in.ids);
	for (i = 0; i < n; i++) {
		const char *pid;

		if (decode_item_str_or_reply(r, in.ids, "participant_ids", i, 63, &pid) != H_OK)
			return H_REPLIED;
	}
	/* The study first: another researcher's is 404 as a whole. */
	if (!ids_valid(IDS_STUDY, study_id))
		return reply_no_study(r, study_id);
	if ((rc = db_study_get_row(r->db, study_id, 0, &s)) == DB_NOTFOUND)
		return reply_no_study(r, study_id);
	if (rc != DB_OK)
		return reply_db(r, rc);
	if (strcmp(s.researcher_id, r->who.id) != 0) {
		db_study_clear(&s);
		return reply_no_study(r, study_id);
	}
	db_study_clear(&s);
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		const char *pid = json_object_get_string(json_object_array_get_idx(in.ids, i));

		memset(&b, 0, sizeof b);
		b.study_id = study_id;
		b.owner = r->who.id;
		b.pid = pid;
		b.reason = in.reason;
		b.category = in.category;
		b.ev = ev;
		b.now = r->now;
		it = json_object_new_object();
		jadd_str(it, "participant_id", pid);
		if (!anon_id_valid(pid)) {
			b.so.outcome = ARPS_E_NOT_FOUND;
			b.so.no_participant = 1;
			rc = DB_ROLLBACK;
		} else
			rc = db_tx(r->db, bulk_row_tx, &b);
		if (rc == DB_OK) {
			jadd_str(it, "status", part_state_name(b.so.p.state));
			json_object_object_add(it, "error", NULL);
			ok++;
		} else {
			enum arps_err e;

			if (rc == DB_ROLLBACK && b.so.outcome != ARPS_OK)
				e = review_refusal(&b.so, study_id, pid, detail, sizeof detail);
			else {
				e = rc == DB_GONE ? ARPS_E_UNAVAILABLE : ARPS_E_INTERNAL;
				snprintf(detail, sizeof detail, "this row could not be reviewed; "
				    "retry it");
			}
			/* the status as it stays; null for no participant of this study */
			jadd_str(it, "status", b.so.p.id[0] != '\0' && !b.so.no_participant ?
			    part_state_name(b.so.p.state) : NULL);
			json_object_object_add(it, "error", error_json(e, detail));
			failed++;
		}
		db_participation_clear(&b.so.p);
		json_object_array_add(arr, it);
	}
	o = json_object_new_object();
	jadd_str(o, "action", in.action);
	json_object_object_add(o, "results", arr);
	jadd_int(o, "succeeded", ok);
	jadd_int(o, "failed", failed);
	return reply_json(r, 200, o);
}
