/* Events: the per-transaction queue, its flush, the feed (db/events.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/errors.h"
#include "db/events.h"
#include "db/rows.h"
#include "lib/secret.h"

struct evq_item {
	char owner[IDS_BUFSZ];
	enum event_type type;
	char *data;
	int64_t created_at;
	size_t order;		/* queue position: keeps one owner's order */
};

struct evq {
	struct evq_item *v;
	size_t n, cap;
};

/*
 * The owner's head moved on by n, in one statement with what the flush
 * needs next: the new last number and whether the owner has an active
 * webhook (design.md §11.4); the webhooks are read only then.  Written as
 * INSERT ... SELECT, not VALUES: under the session's READ COMMITTED InnoDB
 * reads the webhooks of an INSERT ... SELECT without locks, as a plain
 * SELECT, where an INSERT ... VALUES would keep a shared lock on the
 * owner's webhook row until COMMIT, after its head lock: the reverse of the
 * deliverer's order (webhook row, then the owner's head for the
 * webhook.disabled event), a deadlock (tests/db/test_events).
 */
#define HEAD_COLUMNS(X, L) \
	X(HEAD_C_LAST,		"last_seq") \
	X(HEAD_C_LAST_US,	"last_us") \
	L(HEAD_C_HOOKED,	"EXISTS (SELECT 1 FROM webhooks w WHERE w.owner_id = ?" \
				" AND w.status = 'active')")
enum head_col { DB_COLS_ENUM(HEAD_COLUMNS) HEAD_C__END };
/* last_us (the ids' counter, db/migrations/009): at least the clock's
 * microsecond of this flush's last event, and always n past the previous
 * flush's (the right side's last_us is the row's old value). */
static const char q_head[] =
    "INSERT INTO event_heads (owner_id, last_seq, last_us) SELECT ?, ?, ?"
    " ON DUPLICATE KEY UPDATE last_seq = last_seq + VALUES(last_seq),"
    " last_us = GREATEST(last_us + VALUES(last_seq), VALUES(last_us))"
    " RETURNING " DB_COLS_SQL(HEAD_COLUMNS);
#define HOOK_COLUMNS(X, L) \
	X(HOOK_C_ID,		"id") \
	L(HOOK_C_EVENTS,	"events")
enum hook_col { DB_COLS_ENUM(HOOK_COLUMNS) HOOK_C__END };
static const char q_hooks[] =
    "SELECT " DB_COLS_SQL(HOOK_COLUMNS) " FROM webhooks WHERE owner_id = ? AND status = 'active'"
    " ORDER BY seq";
/* A flush's events and their deliveries: one statement each. */
static struct db_shape sh_events = { "INSERT INTO events (owner_id, seq, id, type, data,"
    " created_at) VALUES ", "(?, ?, ?, ?, ?, ?)", ", ", "", 0, 6, { 0 } };
static struct db_shape sh_deliveries = { "INSERT INTO webhook_deliveries (webhook_id, event_id,"
    " created_at, next_attempt_at) VALUES ", "(?, ?, ?, ?)", ", ", "", 0, 4, { 0 } };
#define EVENT_COLUMNS(X, L) \
	X(EVENT_C_SEQ,		"seq") \
	X(EVENT_C_ID,		"id") \
	X(EVENT_C_TYPE,		"type") \
	X(EVENT_C_DATA,		"data") \
	L(EVENT_C_CREATED,	"created_at")
enum event_col { DB_COLS_ENUM(EVENT_COLUMNS) EVENT_C__END };
static const char q_list[] =
    "SELECT " DB_COLS_SQL(EVENT_COLUMNS) " FROM events WHERE owner_id = ? AND seq > ?"
    " ORDER BY seq LIMIT ?";
static const char q_list_type[] =
    "SELECT " DB_COLS_SQL(EVENT_COLUMNS) " FROM events WHERE owner_id = ? AND type = ?"
    " AND seq > ? ORDER BY seq LIMIT ?";
static const char q_head_last[] = "SELECT last_seq FROM event_heads WHERE owner_id = ?";
static const char q_purge_events[] =
    "DELETE FROM events WHERE created_at < ? LIMIT ?";
static const char q_purge_deliveries[] =
    "DELETE FROM webhook_deliveries WHERE created_at < ? AND state <> 'pending' LIMIT ?";

enum db_rc
db_event(struct db *db, const char *owner, enum event_type t, int64_t now, const char *fmt, ...)
{
	struct evq **qp = db_evq(db), *q;
	struct evq_item *it;
	va_list ap;
	int len;

	static const struct db_pending_ops ops = { db_events_flush, db_events_drop };

	if (*qp == NULL && (*qp = calloc(1, sizeof **qp)) == NULL)
		return DB_ERR;
	db_set_pending(db, &ops);
	q = *qp;
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16;
		struct evq_item *nv = realloc(q->v, cap * sizeof *nv);

		if (nv == NULL)
			return DB_ERR;
		q->v = nv;
		q->cap = cap;
	}
	it = &q->v[q->n];
	memset(it, 0, sizeof *it);
	snprintf(it->owner, sizeof it->owner, "%s", owner);
	it->type = t;
	it->created_at = now;
	it->order = q->n;
	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || (it->data = malloc((size_t)len + 1)) == NULL)
		return DB_ERR;
	va_start(ap, fmt);
	vsnprintf(it->data, (size_t)len + 1, fmt, ap);
	va_end(ap);
	q->n++;
	return DB_OK;
}

void
db_events_drop(struct db *db)
{
	struct evq **qp = db_evq(db);
	size_t i;

	if (*qp == NULL)
		return;
	for (i = 0; i < (*qp)->n; i++)
		free((*qp)->v[i].data);
	free((*qp)->v);
	free(*qp);
	*qp = NULL;
}

static int
item_cmp(const void *a, const void *b)
{
	const struct evq_item *x = a, *y = b;
	int c = strcmp(x->owner, y->owner);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Number and insert the events v[0..n) of one owner; queue deliveries. */
static enum db_rc
flush_owner(struct db *db, struct evq_item *v, size_t n)
{
	struct dbres *head = NULL, *hooks = NULL;
	struct dbp *p = NULL, *dp = NULL;
	char (*id)[IDS_BUFSZ] = NULL;
	size_t i, h, nd = 0;
	int64_t last, us;
	struct timespec ts;
	enum db_rc rc;

	/*
	 * The ids' counter: the clock's microseconds, moved on past the
	 * owner's previous flush under its head lock, so that the owner's ids
	 * sort in the feed's order (design.md §11.4: a webhook receiver
	 * orders by created_at and id).
	 */
	clock_gettime(CLOCK_REALTIME, &ts);
	us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + (int64_t)n - 1;
	if ((rc = DB_Q(db, q_head, &head, NULL, P_STR(v[0].owner), P_I64(n), P_I64(us),
	    P_STR(v[0].owner))) != DB_OK)
		return rc;
	if (head->nrows != 1) {		/* RETURNING gives the row written */
		dbres_free(head);
		return DB_ERR;
	}
	last = dbres_i64(head, 0, HEAD_C_LAST);
	us = dbres_i64(head, 0, HEAD_C_LAST_US) - (int64_t)n + 1;	/* the first id's */
	if (dbres_i64(head, 0, HEAD_C_HOOKED) != 0 &&
	    (rc = DB_Q(db, q_hooks, &hooks, NULL, P_STR(v[0].owner))) != DB_OK)
		goto out;
	rc = DB_ERR;
	if ((p = calloc(n * 6, sizeof *p)) == NULL || (id = calloc(n, sizeof *id)) == NULL ||
	    (hooks != NULL && hooks->nrows > 0 &&
	    (dp = calloc(n * hooks->nrows * 4, sizeof *dp)) == NULL))
		goto out;
	for (i = 0; i < n; i++) {
		const char *type = event_type_name(v[i].type);
		struct dbp *r = p + i * 6;

		if (us < 0 || ids_new_ordered(IDS_EVENT, &secret_rng, (uint64_t)us + i, id[i]) !=
		    ARPS_OK)
			goto out;
		r[0] = P_STR(v[i].owner);
		r[1] = P_I64(last - (int64_t)n + 1 + (int64_t)i);
		r[2] = P_STR(id[i]);
		r[3] = P_STR(type);
		r[4] = P_STR(v[i].data);
		r[5] = P_I64(v[i].created_at);
		for (h = 0; hooks != NULL && h < hooks->nrows; h++) {
			if (!event_list_has(dbres_str(hooks, h, HOOK_C_EVENTS), type))
				continue;
			dp[nd * 4] = P_STR(dbres_str(hooks, h, HOOK_C_ID));
			dp[nd * 4 + 1] = P_STR(id[i]);
			dp[nd * 4 + 2] = P_I64(v[i].created_at);
			dp[nd * 4 + 3] = P_I64(v[i].created_at);
			nd++;
		}
	}
	rc = db_rows_exec(db, &sh_events, NULL, p, n, NULL, NULL, NULL);
	if (rc == DB_DUP)
		rc = DB_RETRY;	/* an id clash: run the transaction again */
	if (rc == DB_OK)
		rc = db_rows_exec(db, &sh_deliveries, NULL, dp, nd, NULL, NULL, NULL);
out:
	free(p);
	free(dp);
	free(id);
	dbres_free(hooks);
	dbres_free(head);
	return rc;
}

enum db_rc
db_events_flush(struct db *db)
{
	struct evq **qp = db_evq(db), *q = *qp;
	size_t i, j;
	enum db_rc rc = DB_OK;

	if (q == NULL || q->n == 0)
		return DB_OK;
	/* Owners in id order: the head locks are the last a transaction
	 * takes, always in one total order, so they close no cycle. */
	qsort(q->v, q->n, sizeof q->v[0], item_cmp);
	for (i = 0; i < q->n && rc == DB_OK; i = j) {
		for (j = i + 1; j < q->n && strcmp(q->v[j].owner, q->v[i].owner) == 0; j++)
			;
		rc = flush_owner(db, q->v + i, j - i);
	}
	db_events_drop(db);
	return rc;
}

static int
map_event(const struct dbres *res, size_t row, void *elem)
{
	struct event_row *e = elem;
	int ok = 1;

	e->seq = dbres_i64(res, row, EVENT_C_SEQ);
	dbres_copy(e->id, sizeof e->id, res, row, EVENT_C_ID);
	dbres_copy(e->type, sizeof e->type, res, row, EVENT_C_TYPE);
	e->data = dbres_dup(res, row, EVENT_C_DATA, &ok);
	e->created_at = dbres_i64(res, row, EVENT_C_CREATED);
	return ok && e->data != NULL ? 0 : -1;
}

static void
clear_event(void *elem)
{
	struct event_row *e = elem;

	free(e->data);
	e->data = NULL;
}

enum db_rc
db_events_list(struct db *db, const char *owner, const char *type, int64_t after,
    int64_t limit, struct event_row **v, size_t *n)
{
	struct dbres *res = NULL;
	int more;
	enum db_rc rc;

	*v = NULL;
	*n = 0;
	rc = type != NULL ?
	    DB_Q(db, q_list_type, &res, NULL, P_STR(owner), P_STR(type), P_I64(after),
		P_I64(limit)) :
	    DB_Q(db, q_list, &res, NULL, P_STR(owner), P_I64(after), P_I64(limit));
	if (rc != DB_OK)
		return rc;
	rc = dbres_map(res, limit, sizeof **v, map_event, clear_event, (void **)v, n, &more);
	dbres_free(res);
	return rc;
}

enum db_rc
db_events_last(struct db *db, const char *owner, int64_t *last)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*last = 0;
	if ((rc = DB_ONE(db, q_head_last, &res, P_STR(owner))) == DB_NOTFOUND)
		return DB_OK;
	if (rc == DB_OK)
		*last = dbres_i64(res, 0, DB_COL_ONLY);
	dbres_free(res);
	return rc;
}

void
db_events_free(struct event_row *v, size_t n)
{
	db_array_free(v, n, sizeof *v, clear_event);
}

enum db_rc
db_events_purge(struct db *db, int64_t before, int64_t batch, uint64_t *n)
{
	uint64_t a = 0, b = 0;
	enum db_rc rc;

	*n = 0;
	if ((rc = DB_Q(db, q_purge_events, NULL, &a, P_I64(before), P_I64(batch))) != DB_OK ||
	    (rc = DB_Q(db, q_purge_deliveries, NULL, &b, P_I64(before), P_I64(batch))) != DB_OK)
		return rc;
	*n = a + b;
	return DB_OK;
}
