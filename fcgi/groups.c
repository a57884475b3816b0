/* Participant groups (design.md §14): a researcher's named sets of
 * participants, by pseudonym, used by its studies' eligibility and
 * completion codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/validate.h"
#include "db/groups.h"
#include "fcgi/fields.h"
#include "fcgi/handlers.h"
#include "lib/config.h"
#include "lib/secret.h"

#define GROUP_NAME_MAX		100
#define GROUP_DESC_MAX		1000
#define GROUP_MEMBERS_MAX	500	/* members of one add request */

static enum h_rc
reply_no_group(struct req *r, const char *id)
{
	return reply_err(r, ARPS_E_NOT_FOUND, "no such group: %.40s", id);
}

static int
group_id_ok(const char *id)
{
	return strncmp(id, "grp_", 4) == 0 && strlen(id) == IDS_LEN;
}

static struct json_object *
group_json(const struct group *g)
{
	struct json_object *o = json_object_new_object();

	jadd_str(o, "id", g->id);
	jadd_str(o, "name", g->name);
	jadd_str(o, "description", g->description);
	jadd_int(o, "member_count", g->member_count);
	jadd_time(o, "created_at", g->created_at);
	return o;
}

/* --- POST /groups, PATCH /groups/{id} --- */

struct group_in {
	const char *name, *description;
};

static const struct field group_fields[] = {
	{ "name", F_NAME, F_REQUIRED, 1, GROUP_NAME_MAX, offsetof(struct group_in, name) },
	{ "description", F_TEXT, F_NULLABLE, 0, GROUP_DESC_MAX,
	    offsetof(struct group_in, description) },
};
const struct field_list fields_group = FIELD_LIST(group_fields);
static const struct field group_patch_fields[] = {
	{ "name", F_NAME, 0, 1, GROUP_NAME_MAX, offsetof(struct group_in, name) },
	{ "description", F_TEXT, F_NULLABLE, 0, GROUP_DESC_MAX,
	    offsetof(struct group_in, description) },
};
const struct field_list fields_group_patch = FIELD_LIST(group_patch_fields);

struct group_ctx {
	struct group_in in;
	char id[IDS_BUFSZ];
	int clear_desc;
};

/* The group as it is now, answered with status. */
static enum db_rc
reply_group(struct req *r, const char *id, int status)
{
	struct group g;
	enum db_rc rc;

	if ((rc = db_group_get(r->db, id, r->who.id, 0, &g)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	reply_json(r, status, group_json(&g));
	db_group_clear(&g);
	return DB_OK;
}

static enum db_rc
group_create_tx(struct req *r, void *arg)
{
	struct group_ctx *c = arg;
	enum db_rc rc;

	if (ids_new(IDS_GROUP, &secret_rng, c->id) != ARPS_OK)
		return DB_ERR;
	rc = db_group_insert(r->db, c->id, r->who.id, c->in.name, c->in.description, r->now);
	if (rc == DB_DUP)
		return DB_RETRY;
	if (rc != DB_OK)
		return rc;
	return reply_group(r, c->id, 201);
}

enum h_rc
h_group_create(struct req *r)
{
	struct group_ctx c;
	unsigned present;

	memset(&c, 0, sizeof c);
	if (decode_body_or_reply(r, group_fields, NFIELDS(group_fields), &c.in, &present) != H_OK)
		return H_REPLIED;
	return req_tx(r, group_create_tx, &c);
}

static enum db_rc
group_patch_tx(struct req *r, void *arg)
{
	struct group_ctx *c = arg;
	struct group g;
	enum db_rc rc;

	if ((rc = db_group_get(r->db, c->id, r->who.id, 1, &g)) == DB_NOTFOUND) {
		reply_no_group(r, c->id);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	db_group_clear(&g);
	if ((rc = db_group_update(r->db, c->id, c->in.name, c->in.description, c->clear_desc)) !=
	    DB_OK)
		return rc;
	return reply_group(r, c->id, 200);
}

enum h_rc
h_group_patch(struct req *r)
{
	struct group_ctx c;
	struct json_object *v;
	unsigned present;

	memset(&c, 0, sizeof c);
	if (decode_body_or_reply(r, group_patch_fields, NFIELDS(group_patch_fields), &c.in,
	    &present) != H_OK)
		return H_REPLIED;
	/* "description": null clears it */
	c.clear_desc = json_object_object_get_ex(r->json, "description", &v) && v == NULL;
	if (present == 0 && !c.clear_desc)	/* as PATCH /studies/{id} */
		return reply_err(r, ARPS_E_VALIDATION, "body: give at least one of name, description");
	if (!group_id_ok(r->params[0]))
		return reply_no_group(r, r->params[0]);
	snprintf(c.id, sizeof c.id, "%.*s", IDS_LEN, r->params[0]);	/* valid: IDS_LEN long */
	return req_tx(r, group_patch_tx, &c);
}

/* --- GET /groups, GET /groups/{id} --- */

enum h_rc
h_group_list(struct req *r)
{
	struct json_object *arr;
	struct group *v = NULL;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) !=
	    H_OK)
		return H_REPLIED;
	if ((rc = db_group_list(r->db, r->who.id, cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(arr, group_json(&v[i]));
	db_groups_free(v, n);
	return reply_page(r, "groups", arr, next);
}

enum h_rc
h_group_get(struct req *r)
{
	struct group g;
	enum db_rc rc;

	if (!group_id_ok(r->params[0]))
		return reply_no_group(r, r->params[0]);
	if ((rc = db_group_get(r->db, r->params[0], r->who.id, 0, &g)) == DB_NOTFOUND)
		return reply_no_group(r, r->params[0]);
	if (rc != DB_OK)
		return reply_db(r, rc);
	reply_json(r, 200, group_json(&g));
	db_group_clear(&g);
	return H_OK;
}

/* --- DELETE /groups/{id} --- */

static enum db_rc
group_delete_tx(struct req *r, void *arg)
{
	const char *id = arg;
	struct json_object *o;
	struct group g;
	int named = 0;
	enum db_rc rc;

	if ((rc = db_group_get(r->db, id, r->who.id, 1, &g)) == DB_NOTFOUND) {
		reply_no_group(r, id);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	db_group_clear(&g);
	if ((rc = db_group_named_open(r->db, id, &named)) != DB_OK)
		return rc;
	if (named) {
		reply_err(r, ARPS_E_INVALID_STATE, "the group is named by an open (active or "
		    "paused) study's eligibility or completion codes; change or stop that study "
		    "first");
		return DB_ROLLBACK;
	}
	if ((rc = db_group_delete(r->db, id)) != DB_OK)
		return rc;
	o = json_object_new_object();
	jadd_str(o, "id", id);
	jadd_str(o, "status", "deleted");
	reply_json(r, 200, o);
	return DB_OK;
}

enum h_rc
h_group_delete(struct req *r)
{
	if (!group_id_ok(r->params[0]))
		return reply_no_group(r, r->params[0]);
	return req_tx(r, group_delete_tx, r->params[0]);
}

/* --- members --- */

struct member_in {
	const char *study_id, *participant_id, *pseudonym;
};

static const struct field member_fields[] = {
	{ "study_id", F_NAME, F_NULLABLE, 1, 63, offsetof(struct member_in, study_id) },
	{ "participant_id", F_NAME, F_NULLABLE, 1, 63,
	    offsetof(struct member_in, participant_id) },
	{ "pseudonym", F_NAME, F_NULLABLE, 1, 63, offsetof(struct member_in, pseudonym) },
};
const struct field_list fields_member = FIELD_LIST(member_fields);

struct members_in {
	struct json_object *members;
};

static const struct field members_fields[] = {
	{ "members", F_ARRAY, F_REQUIRED, 1, GROUP_MEMBERS_MAX,
	    offsetof(struct members_in, members) },
};
const struct field_list fields_members = FIELD_LIST(members_fields);

struct resolved {
	char agent[IDS_BUFSZ];
	char psn[PSN_BUFSZ];
};

struct members_ctx {
	const char *group_id;
	struct resolved *m;
	size_t n;
};

static enum db_rc
members_add_tx(struct req *r, void *arg)
{
	struct members_ctx *c = arg;
	struct json_object *o;
	struct group g;
	int64_t added = 0, already = 0;
	size_t i;
	int a;
	enum db_rc rc;

	if ((rc = db_group_get(r->db, c->group_id, r->who.id, 1, &g)) == DB_NOTFOUND) {
		reply_no_group(r, c->group_id);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	db_group_clear(&g);
	for (i = 0; i < c->n; i++) {
		if ((rc = db_group_member_add(r->db, c->group_id, c->m[i].agent, c->m[i].psn, r->now,
		    &a)) != DB_OK)
			return rc;
		if (a)
			added++;
		else
			already++;
	}
	if ((rc = db_group_get(r->db, c->group_id, r->who.id, 0, &g)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	o = json_object_new_object();
	jadd_int(o, "added", added);
	jadd_int(o, "already", already);
	jadd_int(o, "member_count", g.member_count);
	db_group_clear(&g);
	reply_json(r, 200, o);
	return DB_OK;
}

/*
 * Each row names one participant of the caller's studies, by {study_id,
 * participant_id} or by pseudonym; all are resolved to agents before
 * anything is written (a row that names none is 422 naming it).  A
 * pseudonym is found among the agents that took part in the caller's
 * studies (the only ones it can have been shown).
 */
enum h_rc
h_group_members_add(struct req *r)
{
	struct members_in in = { 0 };
	struct members_ctx c;
	struct member_in mi;
	struct group g;
	char (*agents)[IDS_BUFSZ] = NULL;
	char (*psns)[PSN_BUFSZ] = NULL;
	size_t i, j, nagents = 0;
	int loaded = 0;
	unsigned present;
	enum h_rc hr = H_REPLIED;
	enum db_rc rc;

	if (decode_body_or_reply(r, members_fields, NFIELDS(members_fields), &in, &present) != H_OK)
		return H_REPLIED;
	memset(&c, 0, sizeof c);
	c.group_id = r->params[0];
	if (!group_id_ok(c.group_id))
		return reply_no_group(r, c.group_id);
	if ((rc = db_group_get(r->db, c.group_id, r->who.id, 0, &g)) == DB_NOTFOUND)
		return reply_no_group(r, c.group_id);
	if (rc != DB_OK)
		return reply_db(r, rc);
	db_group_clear(&g);
	c.n = json_object_array_length(in.members);
	if ((c.m = calloc(c.n, sizeof *c.m)) == NULL)
		return reply_db(r, DB_ERR);
	for (i = 0; i < c.n; i++) {
		memset(&mi, 0, sizeof mi);
		if (decode_item_or_reply(r, json_object_array_get_idx(in.members, i), "members", i,
		    member_fields, NFIELDS(member_fields), &mi, &present) != H_OK)
			goto out;
		if (mi.pseudonym != NULL && mi.study_id == NULL && mi.participant_id == NULL) {
			if (!pseudonym_valid(mi.pseudonym)) {
				reply_err(r, ARPS_E_VALIDATION, "members[%zu].pseudonym: no "
				    "participant of yours has this pseudonym", i);
				goto out;
			}
			if (!loaded) {
				if ((rc = db_owner_participants(r->db, r->who.id, &agents,
				    &nagents)) != DB_OK) {
					reply_db(r, rc);
					goto out;
				}
				if (nagents > 0 && (psns = calloc(nagents, sizeof *psns)) == NULL) {
					reply_db(r, DB_ERR);
					goto out;
				}
				for (j = 0; j < nagents; j++)
					secret_pseudonym(r->cfg, r->who.id, agents[j], psns[j]);
				loaded = 1;
			}
			for (j = 0; j < nagents && strcmp(psns[j], mi.pseudonym) != 0; j++)
				;
			if (j == nagents) {
				reply_err(r, ARPS_E_VALIDATION, "members[%zu].pseudonym: no "
				    "participant of yours has this pseudonym", i);
				goto out;
			}
			snprintf(c.m[i].agent, IDS_BUFSZ, "%s", agents[j]);
		} else if (mi.pseudonym == NULL && mi.study_id != NULL && mi.participant_id != NULL) {
			if (!ids_valid(IDS_STUDY, mi.study_id) || !anon_id_valid(mi.participant_id) ||
			    (rc = db_owner_participant_agent(r->db, r->who.id, mi.study_id,
			    mi.participant_id, c.m[i].agent)) == DB_NOTFOUND) {
				reply_err(r, ARPS_E_VALIDATION, "members[%zu]: no participant "
				    "%.40s in a study of yours %.40s", i, mi.participant_id,
				    mi.study_id);
				goto out;
			}
			if (rc != DB_OK) {
				reply_db(r, rc);
				goto out;
			}
		} else {
			reply_err(r, ARPS_E_VALIDATION, "members[%zu]: give {study_id, "
			    "participant_id} or {pseudonym}", i);
			goto out;
		}
		secret_pseudonym(r->cfg, r->who.id, c.m[i].agent, c.m[i].psn);
	}
	hr = req_tx(r, members_add_tx, &c);
out:
	free(agents);
	free(psns);
	free(c.m);
	return hr;
}

enum h_rc
h_group_members_list(struct req *r)
{
	struct json_object *arr, *it;
	struct group_member *v = NULL;
	struct group g;
	int64_t limit, cursor, next;
	size_t i, n;
	enum db_rc rc;

	if (decode_page_or_reply(r, VAL_LIST_LIMIT_DEFAULT, VAL_LIST_LIMIT_MAX, &limit, &cursor) !=
	    H_OK)
		return H_REPLIED;
	if (!group_id_ok(r->params[0]))
		return reply_no_group(r, r->params[0]);
	if ((rc = db_group_get(r->db, r->params[0], r->who.id, 0, &g)) == DB_NOTFOUND)
		return reply_no_group(r, r->params[0]);
	if (rc != DB_OK)
		return reply_db(r, rc);
	db_group_clear(&g);
	if ((rc = db_group_members(r->db, r->params[0], cursor, limit, &v, &n, &next)) != DB_OK)
		return reply_list_db(r, rc);
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		it = json_object_new_object();
		jadd_str(it, "pseudonym", v[i].pseudonym);
		jadd_time(it, "added_at", v[i].added_at);
		json_object_array_add(arr, it);
	}
	free(v);
	return reply_page(r, "members", arr, next);
}

static enum db_rc
member_delete_tx(struct req *r, void *arg)
{
	const char *psn = arg;
	struct json_object *o;
	struct group g;
	int removed = 0;
	enum db_rc rc;

	if ((rc = db_group_get(r->db, r->params[0], r->who.id, 1, &g)) == DB_NOTFOUND) {
		reply_no_group(r, r->params[0]);
		return DB_ROLLBACK;
	}
	if (rc != DB_OK)
		return rc;
	db_group_clear(&g);
	if ((rc = db_group_member_remove(r->db, r->params[0], psn, &removed)) != DB_OK)
		return rc;
	if (!removed) {
		reply_err(r, ARPS_E_NOT_FOUND, "no such member of this group: %.40s", psn);
		return DB_ROLLBACK;
	}
	if ((rc = db_group_get(r->db, r->params[0], r->who.id, 0, &g)) != DB_OK)
		return rc == DB_NOTFOUND ? DB_ERR : rc;
	o = json_object_new_object();
	jadd_str(o, "pseudonym", psn);
	jadd_str(o, "status", "removed");
	jadd_int(o, "member_count", g.member_count);
	db_group_clear(&g);
	reply_json(r, 200, o);
	return DB_OK;
}

enum h_rc
h_group_member_delete(struct req *r)
{
	if (!group_id_ok(r->params[0]))
		return reply_no_group(r, r->params[0]);
	if (!pseudonym_valid(r->params[1]))
		return reply_err(r, ARPS_E_NOT_FOUND, "no such member of this group: %.40s",
		    r->params[1]);
	return req_tx(r, member_delete_tx, r->params[1]);
}
