/* Participant groups, eligibility rows and completion codes (db/groups.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/groups.h"

#define GROUP_COLUMNS(X, L) \
	X(GROUP_C_SEQ,		"g.seq") \
	X(GROUP_C_ID,		"g.id") \
	X(GROUP_C_OWNER,	"g.researcher_id") \
	X(GROUP_C_NAME,		"g.name") \
	X(GROUP_C_DESC,		"g.description") \
	X(GROUP_C_COUNT,	"g.member_count") \
	L(GROUP_C_CREATED_AT,	"g.created_at")
enum group_col { DB_COLS_ENUM(GROUP_COLUMNS) GROUP_C__END };
#define GROUP_COLS	DB_COLS_SQL(GROUP_COLUMNS)

#define MEMBER_COLUMNS(X, L) \
	X(MEMBER_C_SEQ,		"seq") \
	X(MEMBER_C_AGENT,	"agent_id") \
	X(MEMBER_C_PSN,		"pseudonym") \
	L(MEMBER_C_ADDED_AT,	"added_at")
enum member_col { DB_COLS_ENUM(MEMBER_COLUMNS) MEMBER_C__END };

#define CODE_COLUMNS(X, L) \
	X(CODE_C_CODE,		"code") \
	X(CODE_C_ACTION,	"action") \
	L(CODE_C_GROUP,		"group_id")
enum code_col { DB_COLS_ENUM(CODE_COLUMNS) CODE_C__END };

static const char q_group_ins[] =
    "INSERT INTO participant_groups (id, researcher_id, name, description, created_at)"
    " VALUES (?, ?, ?, ?, ?)";
static const char q_group_get[] =
    "SELECT " GROUP_COLS " FROM participant_groups g WHERE g.id = ? AND g.researcher_id = ?";
static const char q_group_lock[] =
    "SELECT " GROUP_COLS " FROM participant_groups g WHERE g.id = ? AND g.researcher_id = ?"
    " FOR UPDATE";
static const char q_group_list[] =
    "SELECT " GROUP_COLS " FROM participant_groups g WHERE g.researcher_id = ? AND g.seq < ?"
    " ORDER BY g.seq DESC LIMIT ?";
static const char q_group_known[] =
    "SELECT 1 FROM participant_groups WHERE researcher_id = ? AND seq = ?";
static const char q_group_upd[] =
    "UPDATE participant_groups SET name = COALESCE(?, name),"
    " description = IF(?, NULL, COALESCE(?, description)) WHERE id = ?";
static const char q_group_del_members[] = "DELETE FROM group_members WHERE group_id = ?";
static const char q_group_del[] = "DELETE FROM participant_groups WHERE id = ?";
static const char q_group_named_open[] =
    "SELECT 1 FROM study_eligibility e JOIN studies s ON s.id = e.study_id"
    " WHERE e.ref_id = ? AND e.kind IN ('include_group', 'exclude_group')"
    " AND s.status IN ('active', 'paused') LIMIT 1";
static const char q_member_ins[] =
    "INSERT IGNORE INTO group_members (group_id, agent_id, pseudonym, added_at)"
    " VALUES (?, ?, ?, ?)";
static const char q_member_del[] =
    "DELETE FROM group_members WHERE group_id = ? AND pseudonym = ?";
static const char q_group_count[] =
    "UPDATE participant_groups SET member_count = member_count + ? WHERE id = ?";
static const char q_members[] =
    "SELECT " DB_COLS_SQL(MEMBER_COLUMNS) " FROM group_members WHERE group_id = ? AND seq < ?"
    " ORDER BY seq DESC LIMIT ?";
static const char q_member_known[] =
    "SELECT 1 FROM group_members WHERE group_id = ? AND seq = ?";
static const char q_owner_agents[] =
    "SELECT DISTINCT p.agent_id FROM participations p JOIN studies s ON s.id = p.study_id"
    " WHERE s.researcher_id = ?";
static const char q_owner_anon[] =
    "SELECT p.agent_id FROM participations p JOIN studies s ON s.id = p.study_id"
    " WHERE p.study_id = ? AND p.participant_id = ? AND s.researcher_id = ?";
static const char q_elig_del[] = "DELETE FROM study_eligibility WHERE study_id = ?";
static const char q_elig_ins[] =
    "INSERT IGNORE INTO study_eligibility (study_id, kind, ref_id, pos) VALUES (?, ?, ?, ?)";
static const char q_elig_flag[] = "UPDATE studies SET eligibility = ? WHERE id = ?";
#define ELIG_COLUMNS(X, L) \
	X(ELIG_C_KIND,		"kind") \
	L(ELIG_C_REF,		"ref_id")
enum elig_col { DB_COLS_ENUM(ELIG_COLUMNS) ELIG_C__END };
static const char q_elig_get[] =
    "SELECT " DB_COLS_SQL(ELIG_COLUMNS) " FROM study_eligibility WHERE study_id = ?"
    " ORDER BY kind, pos";
#define RULE_COLUMNS(X, L) \
	X(RULE_C_STUDY,		"study_id") \
	X(RULE_C_KIND,		"kind") \
	L(RULE_C_REF,		"ref_id")
enum rule_col { DB_COLS_ENUM(RULE_COLUMNS) RULE_C__END };
static const char q_rules_many[] =
    "SELECT " DB_COLS_SQL(RULE_COLUMNS) " FROM study_eligibility WHERE study_id IN (" DB_Q32 ")";
_Static_assert(DB_RULES_BATCH == 32, "q_rules_many has 32 placeholders");
static const char q_code_ins[] =
    "INSERT INTO study_codes (study_id, pos, code, action, group_id) VALUES (?, ?, ?, ?, ?)";
static const char q_codes_get[] =
    "SELECT " DB_COLS_SQL(CODE_COLUMNS) " FROM study_codes WHERE study_id = ? ORDER BY pos";
static const char q_code_find[] =
    "SELECT " DB_COLS_SQL(CODE_COLUMNS) " FROM study_codes WHERE study_id = ? AND code = ?";

void
db_group_clear(struct group *g)
{
	if (g == NULL)
		return;
	free(g->name);
	free(g->description);
	memset(g, 0, sizeof *g);
}

static void
group_clear_elem(void *g)
{
	db_group_clear(g);
}

void
db_groups_free(struct group *v, size_t n)
{
	db_array_free(v, n, sizeof *v, group_clear_elem);
}

static int
group_row(const struct dbres *res, size_t row, void *out)
{
	struct group *g = out;
	int ok = 1;

	memset(g, 0, sizeof *g);
	g->seq = dbres_i64(res, row, GROUP_C_SEQ);
	dbres_copy(g->id, sizeof g->id, res, row, GROUP_C_ID);
	dbres_copy(g->researcher_id, sizeof g->researcher_id, res, row, GROUP_C_OWNER);
	g->name = dbres_dup(res, row, GROUP_C_NAME, &ok);
	g->description = dbres_dup(res, row, GROUP_C_DESC, &ok);
	g->member_count = dbres_i64(res, row, GROUP_C_COUNT);
	g->created_at = dbres_i64(res, row, GROUP_C_CREATED_AT);
	if (!ok)
		db_group_clear(g);
	return ok ? 0 : -1;
}

static int
member_row(const struct dbres *res, size_t row, void *out)
{
	struct group_member *m = out;

	memset(m, 0, sizeof *m);
	m->seq = dbres_i64(res, row, MEMBER_C_SEQ);
	dbres_copy(m->agent_id, sizeof m->agent_id, res, row, MEMBER_C_AGENT);
	dbres_copy(m->pseudonym, sizeof m->pseudonym, res, row, MEMBER_C_PSN);
	m->added_at = dbres_i64(res, row, MEMBER_C_ADDED_AT);
	return 0;
}

static void
member_clear_elem(void *m)
{
	(void)m;
}

enum db_rc
db_group_insert(struct db *db, const char *id, const char *owner, const char *name,
    const char *description, int64_t now)
{
	return DB_Q(db, q_group_ins, NULL, NULL, P_STR(id), P_STR(owner), P_STR(name),
	    P_STR(description), P_I64(now));
}

enum db_rc
db_group_get(struct db *db, const char *id, const char *owner, int for_update, struct group *g)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	memset(g, 0, sizeof *g);
	if ((rc = DB_ONE(db, for_update ? q_group_lock : q_group_get, &res, P_STR(id),
	    P_STR(owner))) != DB_OK)
		return rc;
	rc = group_row(res, 0, g) == 0 ? DB_OK : DB_ERR;
	dbres_free(res);
	return rc;
}

/* A newest-first page of key's rows (as db/studies.c's read_page). */
static enum db_rc
page(struct db *db, const char *sql, const char *known, const char *key, int64_t cursor,
    int64_t limit, int (*map)(const struct dbres *, size_t, void *), void (*clear)(void *),
    size_t size, void **v, size_t *n, const void **last)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	int more = 0;

	*v = NULL;
	*n = 0;
	*last = NULL;
	if ((rc = db_cursor_known(db, known, key, cursor)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, sql, &res, NULL, P_STR(key), P_I64(db_cursor_bound(cursor)),
	    P_I64(limit + 1))) != DB_OK)
		return rc;
	rc = dbres_map(res, limit, size, map, clear, v, n, &more);
	dbres_free(res);
	if (rc == DB_OK && more)
		*last = (const char *)*v + (*n - 1) * size;
	return rc;
}

enum db_rc
db_group_list(struct db *db, const char *owner, int64_t cursor, int64_t limit,
    struct group **v, size_t *n, int64_t *next)
{
	const void *last;
	void *rows;
	enum db_rc rc;

	rc = page(db, q_group_list, q_group_known, owner, cursor, limit, group_row,
	    group_clear_elem, sizeof **v, &rows, n, &last);
	*v = rows;
	*next = last != NULL ? ((const struct group *)last)->seq : 0;
	return rc;
}

enum db_rc
db_group_members(struct db *db, const char *group_id, int64_t cursor, int64_t limit,
    struct group_member **v, size_t *n, int64_t *next)
{
	const void *last;
	void *rows;
	enum db_rc rc;

	rc = page(db, q_members, q_member_known, group_id, cursor, limit, member_row,
	    member_clear_elem, sizeof **v, &rows, n, &last);
	*v = rows;
	*next = last != NULL ? ((const struct group_member *)last)->seq : 0;
	return rc;
}

enum db_rc
db_group_update(struct db *db, const char *id, const char *name, const char *description,
    int clear_desc)
{
	return DB_Q(db, q_group_upd, NULL, NULL, P_STR(name), P_I64(clear_desc != 0),
	    P_STR(description), P_STR(id));
}

enum db_rc
db_group_delete(struct db *db, const char *id)
{
	enum db_rc rc;

	if ((rc = DB_Q(db, q_group_del_members, NULL, NULL, P_STR(id))) != DB_OK)
		return rc;
	return DB_Q(db, q_group_del, NULL, NULL, P_STR(id));
}

enum db_rc
db_group_named_open(struct db *db, const char *id, int *named)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*named = 0;
	rc = DB_ONE(db, q_group_named_open, &res, P_STR(id));
	if (rc == DB_NOTFOUND)
		return DB_OK;
	if (rc == DB_OK)
		*named = 1;
	dbres_free(res);
	return rc;
}

enum db_rc
db_group_member_add(struct db *db, const char *group_id, const char *agent_id,
    const char *pseudonym, int64_t now, int *added)
{
	uint64_t n = 0;
	enum db_rc rc;

	*added = 0;
	if ((rc = DB_Q(db, q_member_ins, NULL, &n, P_STR(group_id), P_STR(agent_id),
	    P_STR(pseudonym), P_I64(now))) != DB_OK || n == 0)
		return rc;
	*added = 1;
	return DB_Q(db, q_group_count, NULL, NULL, P_I64(1), P_STR(group_id));
}

enum db_rc
db_group_member_remove(struct db *db, const char *group_id, const char *pseudonym,
    int *removed)
{
	uint64_t n = 0;
	enum db_rc rc;

	*removed = 0;
	if ((rc = DB_Q(db, q_member_del, NULL, &n, P_STR(group_id), P_STR(pseudonym))) != DB_OK ||
	    n == 0)
		return rc;
	*removed = 1;
	return DB_Q(db, q_group_count, NULL, NULL, P_I64(-1), P_STR(group_id));
}

enum db_rc
db_owner_participants(struct db *db, const char *owner, char (**ids)[IDS_BUFSZ], size_t *n)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i;

	*ids = NULL;
	*n = 0;
	if ((rc = DB_Q(db, q_owner_agents, &res, NULL, P_STR(owner))) != DB_OK)
		return rc;
	if (res->nrows > 0 && (*ids = calloc(res->nrows, sizeof **ids)) == NULL) {
		dbres_free(res);
		return DB_ERR;
	}
	for (i = 0; i < res->nrows; i++)
		dbres_copy((*ids)[i], IDS_BUFSZ, res, i, DB_COL_ONLY);
	*n = res->nrows;
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_owner_participant_agent(struct db *db, const char *owner, const char *study_id,
    const char *participant_id, char agent_id[IDS_BUFSZ])
{
	struct dbres *res = NULL;
	enum db_rc rc;

	agent_id[0] = '\0';
	if ((rc = DB_ONE(db, q_owner_anon, &res, P_STR(study_id), P_STR(participant_id),
	    P_STR(owner))) != DB_OK)
		return rc;
	dbres_copy(agent_id, IDS_BUFSZ, res, 0, DB_COL_ONLY);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_study_elig_set(struct db *db, const char *study_id, const struct study_elig *e)
{
	size_t k, i;
	int any = 0;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_elig_del, NULL, NULL, P_STR(study_id))) != DB_OK)
		return rc;
	for (k = 0; e != NULL && k < ELIG__MAX; k++)
		for (i = 0; i < e->n[k]; i++) {
			any = 1;
			if ((rc = DB_Q(db, q_elig_ins, NULL, NULL, P_STR(study_id),
			    P_STR(elig_kind_row((enum elig_kind)k)), P_STR(e->ids[k][i]),
			    P_I64((int64_t)i))) != DB_OK)
				return rc;
		}
	return DB_Q(db, q_elig_flag, NULL, NULL, P_I64(any), P_STR(study_id));
}

enum db_rc
db_study_elig_get(struct db *db, const char *study_id, struct study_elig *e)
{
	struct dbres *res = NULL;
	enum elig_kind k;
	enum db_rc rc;
	size_t i;

	memset(e, 0, sizeof *e);
	if ((rc = DB_Q(db, q_elig_get, &res, NULL, P_STR(study_id))) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows; i++) {
		if (!elig_kind_from_row(dbres_str(res, i, ELIG_C_KIND), &k) ||
		    e->n[k] >= ELIG_LIST_MAX)
			continue;
		dbres_copy(e->ids[k][e->n[k]++], IDS_BUFSZ, res, i, ELIG_C_REF);
	}
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_study_rules_many(struct db *db, const char *const *ids, size_t n, struct elig_rule **out,
    size_t *nout)
{
	struct dbp p[DB_RULES_BATCH];
	struct dbres *res = NULL;
	struct elig_rule *r;
	enum elig_kind k;
	const char *sid;
	size_t i, j;
	enum db_rc rc;

	memset(out, 0, n * sizeof *out);
	memset(nout, 0, n * sizeof *nout);
	if (n > DB_RULES_BATCH)
		return DB_ERR;
	for (i = 0; i < DB_RULES_BATCH; i++)
		p[i] = i < n ? P_STR(ids[i]) : P_NULL;
	if ((rc = db_exec(db, q_rules_many, p, DB_RULES_BATCH, &res, NULL)) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows && rc == DB_OK; i++) {
		sid = dbres_str(res, i, RULE_C_STUDY);
		for (j = 0; sid != NULL && j < n && strcmp(ids[j], sid) != 0; j++)
			;
		if (sid == NULL || j == n || !elig_kind_from_row(dbres_str(res, i, RULE_C_KIND), &k))
			continue;
		/* a study has at most ELIG__MAX * ELIG_LIST_MAX rules */
		if ((r = realloc(out[j], (nout[j] + 1) * sizeof *r)) == NULL) {
			rc = DB_ERR;
			break;
		}
		out[j] = r;
		r[nout[j]].kind = k;
		dbres_copy(r[nout[j]].ref, sizeof r[nout[j]].ref, res, i, RULE_C_REF);
		nout[j]++;
	}
	dbres_free(res);
	if (rc != DB_OK)
		for (j = 0; j < n; j++) {
			free(out[j]);
			out[j] = NULL;
			nout[j] = 0;
		}
	return rc;
}

enum db_rc
db_study_codes_insert(struct db *db, const char *study_id, const struct study_codes *c)
{
	size_t i;
	enum db_rc rc;

	for (i = 0; c != NULL && i < c->n; i++)
		if ((rc = DB_Q(db, q_code_ins, NULL, NULL, P_STR(study_id), P_I64((int64_t)i),
		    P_STR(c->c[i].code), P_STR(code_action_name(c->c[i].action)),
		    P_STR(c->c[i].group[0] != '\0' ? c->c[i].group : NULL))) != DB_OK)
			return rc;
	return DB_OK;
}

static int
code_row(const struct dbres *res, size_t row, struct study_code *out)
{
	memset(out, 0, sizeof *out);
	dbres_copy(out->code, sizeof out->code, res, row, CODE_C_CODE);
	dbres_copy(out->group, sizeof out->group, res, row, CODE_C_GROUP);
	return code_action_from_name(dbres_str(res, row, CODE_C_ACTION), &out->action) ? 0 : -1;
}

enum db_rc
db_study_codes_get(struct db *db, const char *study_id, struct study_codes *c)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i;

	memset(c, 0, sizeof *c);
	if ((rc = DB_Q(db, q_codes_get, &res, NULL, P_STR(study_id))) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows && c->n < STUDY_CODES_MAX; i++)
		if (code_row(res, i, &c->c[c->n]) == 0)
			c->n++;
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_study_code_find(struct db *db, const char *study_id, const char *code, struct study_code *out)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	if ((rc = DB_ONE(db, q_code_find, &res, P_STR(study_id), P_STR(code))) != DB_OK)
		return rc;
	rc = code_row(res, 0, out) == 0 ? DB_OK : DB_ERR;
	dbres_free(res);
	return rc;
}
