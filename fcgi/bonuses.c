/* Bonuses (design.md §13): POST and GET /studies/{id}/bonuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/money.h"
#include "core/validate.h"
#include "db/bonuses.h"
#include "db/studies.h"
#include "txn/bonuses.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/config.h"

#define BONUS_REASON_MAX	500	/* characters, shown to the agent */

struct bonuses_in {
	struct json_object *rows;
};

static const struct field bonuses_fields[] = {
	{ "bonuses", F_ARRAY, F_REQUIRED, 1, MONEY_BONUS_ROWS, offsetof(struct bonuses_in, rows) },
};
const struct field_list fields_bonuses = FIELD_LIST(bonuses_fields);

struct bonus_item_in {
	const char *participant_id, *reason;
	int64_t amount;
};

static const struct field bonus_item_fields[] = {
	{ "participant_id", F_NAME, F_REQUIRED, 1, 63,
	    offsetof(struct bonus_item_in, participant_id) },
	{ "amount_cents", F_INT, F_REQUIRED, MONEY_BONUS_MIN, MONEY_BONUS_MAX,
	    offsetof(struct bonus_item_in, amount) },
	{ "reason", F_TEXT, F_NULLABLE, 0, BONUS_REASON_MAX,
	    offsetof(struct bonus_item_in, reason) },
};
const struct field_list fields_bonus_item = FIELD_LIST(bonus_item_fields);

static enum h_rc
reply_no_study(struct req *r, const char *id)
{
	return reply_err(r, ARPS_E_NOT_FOUND, "no such study: %.40s", id);
}

/* A bonus as answered and listed. */
static struct json_object *
bonus_json(const struct db_bonus *b)
{
	struct json_object *o = json_object_new_object();

	jadd_str(o, "id", b->id);
	jadd_str(o, "participant_id", b->participant_id);
	jadd_int(o, "amount_cents", b->amount);
	jadd_int(o, "fee_cents", b->fee);
	jadd_str(o, "reason", b->reason);
	jadd_time(o, "created_at", b->created_at);
	return o;
}

struct pay_ctx {
	const char *study_id;
	struct bonus_row *rows;
	size_t n;
};

static enum db_rc
pay_tx(struct req *r, void *arg)
{
	struct pay_ctx *c = arg;
	struct money_bonus_sum sum;
	struct json_object *o, *arr;
	enum arps_err outcome;
	size_t bad, i;
	enum db_rc rc;

	rc = txn_bonus_pay(r->db, c->study_id, r->who.id, (int)r->cfg->fee_bps, c->rows, c->n,
	    r->now, &sum, &bad, &outcome);
	if (rc != DB_OK)
		return rc;
	switch (outcome) {
	case ARPS_OK:
		break;
	case ARPS_E_NOT_FOUND:
		reply_no_study(r, c->study_id);
		return DB_ROLLBACK;
	case ARPS_E_VALIDATION:
		reply_err(r, ARPS_E_VALIDATION, "bonuses[%zu].participant_id: not a participant "
		    "of this study: %.40s", bad, c->rows[bad].participant_id);
		return DB_ROLLBACK;
	case ARPS_E_INVALID_STATE:
		reply_err(r, ARPS_E_INVALID_STATE, "bonuses[%zu].participant_id: has not "
		    "submitted; a bonus is paid for a submission (submitted, approved or "
		    "rejected)", bad);
		return DB_ROLLBACK;
	case ARPS_E_INSUFFICIENT_FUNDS:
		reply_err(r, ARPS_E_INSUFFICIENT_FUNDS, "the wallet's available balance does not "
		    "cover the bonuses and their fees: %lld cents", (long long)sum.total);
		return DB_ROLLBACK;
	default:
		reply_err(r, outcome, "the bonuses cannot be paid");
		return DB_ROLLBACK;
	}
	o = json_object_new_object();
	jadd_str(o, "study_id", c->study_id);
	arr = json_object_new_array();
	for (i = 0; i < c->n; i++)
		json_object_array_add(arr, bonus_json(&c->rows[i].out));
	json_object_object_add(o, "bonuses", arr);
	jadd_int(o, "total_cents", sum.total);
	jadd_int(o, "fee_cents", sum.fee);
	reply_json(r, 201, o);
	return DB_OK;
}

/* POST /studies/{id}/bonuses: all rows or none (design.md §13). */
enum h_rc
h_bonuses_pay(struct req *r)
{
	struct bonuses_in in = { NULL };
	struct bonus_item_in it;
	struct pay_ctx c;
	unsigned present;
	size_t i, j;
	enum h_rc hrc;

	if (decode_body_or_reply(r, bonuses_fields, NFIELDS(bonuses_fields), &in, &present) != H_OK)
		return H_REPLIED;
	c.study_id = r->params[0];
	c.n = json_object_array_length(in.rows);
	if ((c.rows = calloc(c.n, sizeof *c.rows)) == NULL)
		return reply_err(r, ARPS_E_INTERNAL, "out of memory");
	for (i = 0; i < c.n; i++) {
		memset(&it, 0, sizeof it);
		if (decode_item_or_reply(r, json_object_array_get_idx(in.rows, i), "bonuses", i,
		    bonus_item_fields, NFIELDS(bonus_item_fields), &it, &present) != H_OK) {
			free(c.rows);
			return H_REPLIED;
		}
		c.rows[i].participant_id = it.participant_id;
		c.rows[i].amount = it.amount;
		c.rows[i].reason = it.reason;
		for (j = 0; j < i; j++)
			if (strcmp(c.rows[j].participant_id, it.participant_id) == 0) {
				free(c.rows);
				return reply_err(r, ARPS_E_VALIDATION, "bonuses[%zu].participant_id: "
				    "appears more than once (also bonuses[%zu])", i, j);
			}
	}
	if (!ids_valid(IDS_STUDY, c.study_id)) {
		free(c.rows);
		return reply_no_study(r, c.study_id);
	}
	hrc = req_tx(r, pay_tx, &c);
	free(c.rows);
	return hrc;
}

/* GET /studies/{id}/bonuses: newest first. */
enum h_rc
h_bonuses_list(struct req *r)
{
	const char *id = r->params[0];
	struct json_object *arr;
	struct db_bonus *v = NULL;
	struct study s;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) != H_OK)
		return H_REPLIED;
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
	if ((rc = db_bonuses_list(r->db, id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, bonus_json(&v[i]));
	db_bonuses_free(v, n);
	return reply_page(r, "bonuses", arr, next);
}
