/* The sweep's statements (db/batch.h). */
#include <stdlib.h>
#include <string.h>

#include "db/batch.h"
#include "db/rows.h"

/* What a participation job reads of its due rows (the study jobs: id only). */
#define SW_COLUMNS(X, L) \
	X(SW_C_ID,	"id") \
	L(SW_C_STUDY,	"study_id")
enum sw_col { DB_COLS_ENUM(SW_COLUMNS) SW_C__END };

/*
 * The due rows in the order of their (status, time) index, so a batch's
 * read touches only the rows it returns: one status per query (an IN list
 * of two, or ordering by study, made every batch sort all the due rows).
 */
static const char q_timeouts_accepted[] =
    "SELECT " DB_COLS_SQL(SW_COLUMNS) " FROM participations WHERE status = 'accepted'"
    " AND accepted_at <= ? ORDER BY accepted_at, id LIMIT ?";
static const char q_timeouts_started[] =
    "SELECT " DB_COLS_SQL(SW_COLUMNS) " FROM participations WHERE status = 'in_progress'"
    " AND accepted_at <= ? ORDER BY accepted_at, id LIMIT ?";
static const char q_auto[] =
    "SELECT " DB_COLS_SQL(SW_COLUMNS) " FROM participations WHERE status = 'submitted'"
    " AND submitted_at <= ? ORDER BY submitted_at, id LIMIT ?";
static const char q_deadlines[] =
    "SELECT id FROM studies WHERE status IN ('active', 'paused') AND deadline IS NOT NULL"
    " AND deadline <= ? ORDER BY id LIMIT ?";
static const char q_complete[] =
    "SELECT s.id FROM studies s WHERE s.status = 'awaiting_review' AND NOT EXISTS"
    " (SELECT 1 FROM participations p WHERE p.study_id = s.id"
    "  AND p.status IN ('accepted', 'in_progress', 'submitted')) AND ? >= 0" /* no due time: drain binds one */
    " ORDER BY s.id LIMIT ?";
/* This session's statements and commits so far (MariaDB's counters). */
#define SESS_COLUMNS(X, L) \
	X(SESS_C_STMTS,		"SUM(IF(VARIABLE_NAME = 'COM_STMT_EXECUTE', VARIABLE_VALUE, 0))") \
	L(SESS_C_COMMITS,	"SUM(IF(VARIABLE_NAME = 'COM_COMMIT', VARIABLE_VALUE, 0))")
enum sess_col { DB_COLS_ENUM(SESS_COLUMNS) SESS_C__END };
static const char q_session[] =
    "SELECT " DB_COLS_SQL(SESS_COLUMNS) " FROM information_schema.SESSION_STATUS"
    " WHERE VARIABLE_NAME IN ('COM_STMT_EXECUTE', 'COM_COMMIT')";
/* A set-based batch's change of one study's money and slots. */
static const char q_study_batch[] =
    "UPDATE studies SET frozen_cents = frozen_cents - ?, spent_cents = spent_cents + ?,"
    " refunded_cents = refunded_cents + ?, occupied = occupied - ? WHERE id = ? AND occupied >= ?";

enum shape_kind {
	SH_PART_LOCK, SH_AGENT_LOCK, SH_WALLET_LOCK, SH_HEAD_GET, SH_HOOKS,
	SH_POSTINGS, SH_TXNS, SH_WALLETS, SH_AGENTS, SH_PART_SET, SH_HEADS, SH_EVENTS,
	SH_DELIVERIES, SH__MAX
};

/* The participation columns a batch reads. */
#define BPART_COLUMNS(X, L) \
	X(BP_C_ID,		"id") \
	X(BP_C_STUDY,		"study_id") \
	X(BP_C_AGENT,		"agent_id") \
	L(BP_C_STATE,		"status")
enum bpart_col { DB_COLS_ENUM(BPART_COLUMNS) BP_C__END };
#define BAGENT_COLUMNS(X, L) \
	X(BA_C_ID,		"id") \
	X(BA_C_REPUTATION,	"reputation") \
	L(BA_C_STREAK,		"streak")
enum bagent_col { DB_COLS_ENUM(BAGENT_COLUMNS) BA_C__END };
#define BHEAD_COLUMNS(X, L) \
	X(BH_C_OWNER,		"owner_id") \
	X(BH_C_LAST,		"last_seq") \
	L(BH_C_LAST_US,		"last_us")
enum bhead_col { DB_COLS_ENUM(BHEAD_COLUMNS) BH_C__END };
#define BHOOK_COLUMNS(X, L) \
	X(BW_C_OWNER,		"owner_id") \
	X(BW_C_ID,		"id") \
	L(BW_C_EVENTS,		"events")
enum bhook_col { DB_COLS_ENUM(BHOOK_COLUMNS) BW_C__END };

static struct db_shape shapes[SH__MAX] = {
	[SH_PART_LOCK] = { "SELECT " DB_COLS_SQL(BPART_COLUMNS) " FROM participations WHERE id IN (",
	    "?", ", ", ") FOR UPDATE", 0, 1 },
	[SH_AGENT_LOCK] = { "SELECT " DB_COLS_SQL(BAGENT_COLUMNS) " FROM agents WHERE id IN (",
	    "?", ", ", ") ORDER BY id FOR UPDATE", 0, 1 },
	[SH_WALLET_LOCK] = { "SELECT owner_id FROM wallets WHERE owner_id IN (",
	    "?", ", ", ") ORDER BY owner_id FOR UPDATE", 0, 1 },
	[SH_HEAD_GET] = { "SELECT " DB_COLS_SQL(BHEAD_COLUMNS) " FROM event_heads WHERE owner_id IN (",
	    "?", ", ", ")", 0, 1 },
	[SH_HOOKS] = { "SELECT " DB_COLS_SQL(BHOOK_COLUMNS) " FROM webhooks WHERE status = 'active'"
	    " AND owner_id IN (", "?", ", ", ") ORDER BY owner_id, seq", 0, 1 },
	[SH_POSTINGS] = { "INSERT INTO ledger_postings (entry_id, account, sub, amount, study_id,"
	    " event, created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?)", ", ", "", 0, 7 },
	[SH_TXNS] = { "INSERT INTO transactions (id, owner_id, type, amount_cents, study_id,"
	    " entry_id, description, created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?)", ", ", "", 0, 8 },
	[SH_WALLETS] = { "UPDATE wallets w JOIN (", "SELECT ? AS o, ? AS a, ? AS f", " UNION ALL ",
	    ") v ON w.owner_id = v.o SET w.available_cents = w.available_cents + v.a,"
	    " w.frozen_cents = w.frozen_cents + v.f", 0, 3 },
	[SH_AGENTS] = { "UPDATE agents t JOIN (", "SELECT ? AS i, ? AS r, ? AS s", " UNION ALL ",
	    ") v ON t.id = v.i SET t.reputation = v.r, t.streak = v.s", 0, 3 },
	[SH_PART_SET] = { "UPDATE participations SET status = ?, reviewed_at = COALESCE(?, reviewed_at),"
	    " ended_at = COALESCE(?, ended_at) WHERE id IN (", "?", ", ", ")", 3, 1 },
	/* as db/events.c's head: last_us the event ids' counter */
	[SH_HEADS] = { "INSERT INTO event_heads (owner_id, last_seq, last_us) VALUES ", "(?, ?, ?)",
	    ", ", " ON DUPLICATE KEY UPDATE last_seq = last_seq + VALUES(last_seq),"
	    " last_us = GREATEST(last_us + VALUES(last_seq), VALUES(last_us))", 0, 3 },
	[SH_EVENTS] = { "INSERT INTO events (owner_id, seq, id, type, data, created_at) VALUES ",
	    "(?, ?, ?, ?, ?, ?)", ", ", "", 0, 6 },
	[SH_DELIVERIES] = { "INSERT INTO webhook_deliveries (webhook_id, event_id, created_at,"
	    " next_attempt_at) VALUES ", "(?, ?, ?, ?)", ", ", "", 0, 4 },
};

/* --- the due rows --- */

void
db_due_free(struct db_due *d)
{
	if (d == NULL)
		return;
	free(d->id);
	free(d->study);
	dbres_free(d->res);
	memset(d, 0, sizeof *d);
}

static enum db_rc
due(struct db *db, const char *sql, int64_t before, int64_t limit, struct db_due *out)
{
	size_t i;
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	if ((rc = DB_Q(db, sql, &out->res, NULL, P_I64(before), P_I64(limit))) != DB_OK)
		return rc;
	out->n = out->res->nrows;
	if ((out->id = calloc(out->n + 1, sizeof *out->id)) == NULL ||
	    (out->study = calloc(out->n + 1, sizeof *out->study)) == NULL) {
		db_due_free(out);
		return DB_ERR;
	}
	for (i = 0; i < out->n; i++) {
		out->id[i] = dbres_str(out->res, i, SW_C_ID);
		out->study[i] = dbres_str(out->res, i, SW_C_STUDY);
	}
	return DB_OK;
}

enum db_rc
db_participation_due_accepted(struct db *db, int64_t before, int64_t limit, struct db_due *out)
{
	return due(db, q_timeouts_accepted, before, limit, out);
}

enum db_rc
db_participation_due_started(struct db *db, int64_t before, int64_t limit, struct db_due *out)
{
	return due(db, q_timeouts_started, before, limit, out);
}

enum db_rc
db_participation_due_submitted(struct db *db, int64_t before, int64_t limit, struct db_due *out)
{
	return due(db, q_auto, before, limit, out);
}

enum db_rc
db_study_due_deadline(struct db *db, int64_t before, int64_t limit, struct db_due *out)
{
	return due(db, q_deadlines, before, limit, out);
}

enum db_rc
db_study_due_complete(struct db *db, int64_t before, int64_t limit, struct db_due *out)
{
	return due(db, q_complete, before, limit, out);
}

/* --- the set-based batch --- */

/* A NULL cell as "" (a key column: never NULL in a row). */
static const char *
cell(const struct dbres *res, size_t row, size_t col)
{
	const char *s = dbres_str(res, row, col);

	return s != NULL ? s : "";
}

/* One parameter a row: the strings v[0..n), malloc'd (caller frees). */
static struct dbp *
str_params(const char *const *v, size_t n)
{
	struct dbp *p;
	size_t i;

	if ((p = calloc(n + 1, sizeof *p)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		p[i] = P_STR(v[i]);
	return p;
}

/* Run shape s over the strings v[0..n), one a row. */
static enum db_rc
run_strs(struct db *db, enum shape_kind s, const struct dbp *head, const char *const *v,
    size_t n, enum db_rc (*each)(void *, const struct dbres *), void *arg, uint64_t *affected)
{
	struct dbp *p;
	enum db_rc rc;

	if ((p = str_params(v, n)) == NULL)
		return DB_ERR;
	rc = db_rows_exec(db, &shapes[s], head, p, n, each, arg, affected);
	free(p);
	return rc;
}

struct part_each {
	enum db_rc (*each)(void *, const struct db_batch_part *);
	void *arg;
};

static enum db_rc
part_rows(void *arg, const struct dbres *res)
{
	struct part_each *pe = arg;
	struct db_batch_part r;
	size_t i;
	enum db_rc rc;

	for (i = 0; i < res->nrows; i++) {
		r.id = cell(res, i, BP_C_ID);
		r.study_id = cell(res, i, BP_C_STUDY);
		r.agent_id = cell(res, i, BP_C_AGENT);
		r.status = cell(res, i, BP_C_STATE);
		if ((rc = pe->each(pe->arg, &r)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_participations_lock(struct db *db, const char *const *ids, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_part *), void *arg)
{
	struct part_each pe = { each, arg };

	return run_strs(db, SH_PART_LOCK, NULL, ids, n, part_rows, &pe, NULL);
}

struct agent_each {
	enum db_rc (*each)(void *, const struct db_batch_agent *);
	void *arg;
};

static enum db_rc
agent_rows(void *arg, const struct dbres *res)
{
	struct agent_each *ae = arg;
	struct db_batch_agent r;
	size_t i;
	enum db_rc rc;

	for (i = 0; i < res->nrows; i++) {
		r.id = cell(res, i, BA_C_ID);
		r.reputation = dbres_i64(res, i, BA_C_REPUTATION);
		r.streak = dbres_i64(res, i, BA_C_STREAK);
		if ((rc = ae->each(ae->arg, &r)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_agents_lock(struct db *db, const char *const *ids, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_agent *), void *arg)
{
	struct agent_each ae = { each, arg };

	return run_strs(db, SH_AGENT_LOCK, NULL, ids, n, agent_rows, &ae, NULL);
}

enum db_rc
db_agents_set_reputation(struct db *db, const struct db_batch_agent *rows, size_t n)
{
	struct dbp *p;
	size_t i;
	enum db_rc rc;

	if ((p = calloc(3 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		p[3 * i] = P_STR(rows[i].id);
		p[3 * i + 1] = P_I64(rows[i].reputation);
		p[3 * i + 2] = P_I64(rows[i].streak);
	}
	rc = db_rows_exec(db, &shapes[SH_AGENTS], NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

static enum db_rc
count_rows(void *arg, const struct dbres *res)
{
	*(size_t *)arg += res->nrows;
	return DB_OK;
}

enum db_rc
db_wallets_lock(struct db *db, const struct db_batch_wallet *rows, size_t n, size_t *locked)
{
	struct dbp *p;
	size_t i;
	enum db_rc rc;

	*locked = 0;
	if ((p = calloc(n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++)
		p[i] = P_STR(rows[i].owner);
	rc = db_rows_exec(db, &shapes[SH_WALLET_LOCK], NULL, p, n, count_rows, locked, NULL);
	free(p);
	return rc;
}

enum db_rc
db_wallets_add(struct db *db, const struct db_batch_wallet *rows, size_t n, uint64_t *affected)
{
	struct dbp *p;
	size_t i;
	enum db_rc rc;

	*affected = 0;
	if ((p = calloc(3 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		p[3 * i] = P_STR(rows[i].owner);
		p[3 * i + 1] = P_I64(rows[i].avail);
		p[3 * i + 2] = P_I64(rows[i].frozen);
	}
	rc = db_rows_exec(db, &shapes[SH_WALLETS], NULL, p, n, NULL, NULL, affected);
	free(p);
	return rc;
}

enum db_rc
db_postings_insert(struct db *db, const struct db_batch_posting *rows, size_t n)
{
	struct dbp *p, *q;
	size_t i;
	enum db_rc rc;

	if ((p = calloc(7 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		q = p + 7 * i;
		q[0] = P_STR(rows[i].entry_id);
		q[1] = P_STR(rows[i].account);
		q[2] = P_STR(rows[i].sub);
		q[3] = P_I64(rows[i].amount);
		q[4] = P_STR(rows[i].study_id);
		q[5] = P_STR(rows[i].event);
		q[6] = P_I64(rows[i].created_at);
	}
	rc = db_rows_exec(db, &shapes[SH_POSTINGS], NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

enum db_rc
db_transactions_insert(struct db *db, const struct db_batch_txn *rows, size_t n)
{
	struct dbp *p, *q;
	size_t i;
	enum db_rc rc;

	if ((p = calloc(8 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		q = p + 8 * i;
		q[0] = P_STR(rows[i].id);
		q[1] = P_STR(rows[i].owner_id);
		q[2] = P_STR(rows[i].type);
		q[3] = P_I64(rows[i].amount);
		q[4] = P_STR(rows[i].study_id);
		q[5] = P_STR(rows[i].entry_id);
		q[6] = P_STR(rows[i].description);
		q[7] = P_I64(rows[i].created_at);
	}
	rc = db_rows_exec(db, &shapes[SH_TXNS], NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

enum db_rc
db_study_batch_settle(struct db *db, const char *id, int64_t unfreeze, int64_t spent,
    int64_t refunded, int64_t freed, uint64_t *affected)
{
	*affected = 0;
	return DB_Q(db, q_study_batch, NULL, affected, P_I64(unfreeze), P_I64(spent),
	    P_I64(refunded), P_I64(freed), P_STR(id), P_I64(freed));
}

enum db_rc
db_participations_set_state(struct db *db, const char *status, int reviewed, int64_t now,
    const char *const *ids, size_t n, uint64_t *affected)
{
	struct dbp head[3];

	head[0] = P_STR(status);
	head[1] = reviewed ? P_I64(now) : P_NULL;
	head[2] = P_I64(now);
	return run_strs(db, SH_PART_SET, head, ids, n, NULL, NULL, affected);
}

enum db_rc
db_event_heads_add(struct db *db, const struct db_batch_head *rows, size_t n)
{
	struct dbp *p;
	size_t i;
	enum db_rc rc;

	if ((p = calloc(3 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		p[3 * i] = P_STR(rows[i].owner);
		p[3 * i + 1] = P_I64(rows[i].count);
		p[3 * i + 2] = P_I64(rows[i].last_us);
	}
	rc = db_rows_exec(db, &shapes[SH_HEADS], NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

struct head_each {
	enum db_rc (*each)(void *, const struct db_batch_head_at *);
	void *arg;
};

static enum db_rc
head_rows(void *arg, const struct dbres *res)
{
	struct head_each *he = arg;
	struct db_batch_head_at r;
	size_t i;
	enum db_rc rc;

	for (i = 0; i < res->nrows; i++) {
		r.owner = cell(res, i, BH_C_OWNER);
		r.last_seq = dbres_i64(res, i, BH_C_LAST);
		r.last_us = dbres_i64(res, i, BH_C_LAST_US);
		if ((rc = he->each(he->arg, &r)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_event_heads_get(struct db *db, const char *const *owners, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_head_at *), void *arg)
{
	struct head_each he = { each, arg };

	return run_strs(db, SH_HEAD_GET, NULL, owners, n, head_rows, &he, NULL);
}

enum db_rc
db_events_insert(struct db *db, const struct db_batch_event *rows, size_t n)
{
	struct dbp *p, *q;
	size_t i;
	enum db_rc rc;

	if ((p = calloc(6 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		q = p + 6 * i;
		q[0] = P_STR(rows[i].owner);
		q[1] = P_I64(rows[i].seq);
		q[2] = P_STR(rows[i].id);
		q[3] = P_STR(rows[i].type);
		q[4] = P_STR(rows[i].data);
		q[5] = P_I64(rows[i].created_at);
	}
	rc = db_rows_exec(db, &shapes[SH_EVENTS], NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

struct hook_each {
	enum db_rc (*each)(void *, const struct db_batch_hook *);
	void *arg;
};

static enum db_rc
hook_rows(void *arg, const struct dbres *res)
{
	struct hook_each *he = arg;
	struct db_batch_hook r;
	size_t i;
	enum db_rc rc;

	for (i = 0; i < res->nrows; i++) {
		r.owner = cell(res, i, BW_C_OWNER);
		r.id = cell(res, i, BW_C_ID);
		r.events = dbres_str(res, i, BW_C_EVENTS);
		if ((rc = he->each(he->arg, &r)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_webhooks_active_by_owner(struct db *db, const char *const *owners, size_t n,
    enum db_rc (*each)(void *, const struct db_batch_hook *), void *arg)
{
	struct hook_each he = { each, arg };

	return run_strs(db, SH_HOOKS, NULL, owners, n, hook_rows, &he, NULL);
}

enum db_rc
db_deliveries_insert(struct db *db, const struct db_batch_delivery *rows, size_t n)
{
	struct dbp *p, *q;
	size_t i;
	enum db_rc rc;

	if ((p = calloc(4 * n + 1, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < n; i++) {
		q = p + 4 * i;
		q[0] = P_STR(rows[i].webhook_id);
		q[1] = P_STR(rows[i].event_id);
		q[2] = P_I64(rows[i].created_at);
		q[3] = P_I64(rows[i].next_attempt_at);
	}
	rc = db_rows_exec(db, &shapes[SH_DELIVERIES], NULL, p, n, NULL, NULL, NULL);
	free(p);
	return rc;
}

/* --- the sweep's process --- */

enum db_rc
db_session_counts(struct db *db, int64_t *statements, int64_t *commits)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*statements = *commits = 0;
	if ((rc = DB_Q0(db, q_session, &res, NULL)) != DB_OK)
		return rc;
	*statements = dbres_i64(res, 0, SESS_C_STMTS);
	*commits = dbres_i64(res, 0, SESS_C_COMMITS);
	dbres_free(res);
	return DB_OK;
}
