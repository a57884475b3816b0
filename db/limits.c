#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>
#include <sodium.h>

#include "db/limits.h"
#include "db/rows.h"

static const char q_bucket[] = "INSERT IGNORE INTO rate_buckets (bucket) VALUES (?)";
static const char q_lock[] = "SELECT bucket FROM rate_buckets WHERE bucket = ? FOR UPDATE";
static const char q_prune[] = "DELETE FROM rate_events WHERE bucket = ? AND at <= ?";
/* The events of a bucket within the window. */
#define COUNT_COLUMNS(X, L) \
	X(COUNT_C_N,		"COUNT(*)") \
	L(COUNT_C_OLDEST,	"MIN(at)")
enum count_col { DB_COLS_ENUM(COUNT_COLUMNS) COUNT_C__END };
static const char q_count[] =
    "SELECT " DB_COLS_SQL(COUNT_COLUMNS) " FROM rate_events WHERE bucket = ? AND at > ?";
static const char q_event[] = "INSERT INTO rate_events (bucket, at) VALUES (?, ?)";
/* The k-th oldest event in the window (OFFSET k - 1). */
static const char q_kth[] =
    "SELECT at FROM rate_events WHERE bucket = ? AND at > ? ORDER BY at, seq LIMIT 1 OFFSET ?";
static struct db_shape sh_events = { "INSERT INTO rate_events (bucket, at) VALUES ", "(?, ?)",
    ", ", "", 0, 2, { 0 } };

/* Lock bucket's row (created when absent), prune what left the window
 * and count the rest: *n events, the oldest at *oldest. */
static enum db_rc
bucket_count(struct db *db, const char *bucket, int64_t window, int64_t now, int64_t *n,
    int64_t *oldest)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	/* The bucket row locked FOR UPDATE first, created only when absent:
	 * INSERT IGNORE on an existing row would take a shared lock, and two
	 * requests that both hold it and then ask for the exclusive one
	 * deadlock (design.md §13.3). */
	if ((rc = DB_Q(db, q_lock, &res, NULL, P_STR(bucket))) != DB_OK)
		return rc;
	if (res->nrows == 0) {
		dbres_free(res);
		res = NULL;
		if ((rc = DB_Q(db, q_bucket, NULL, NULL, P_STR(bucket))) != DB_OK ||
		    (rc = DB_Q(db, q_lock, &res, NULL, P_STR(bucket))) != DB_OK)
			return rc;
	}
	dbres_free(res);
	if ((rc = DB_Q(db, q_prune, NULL, NULL, P_STR(bucket), P_I64(now - window))) != DB_OK ||
	    (rc = DB_Q(db, q_count, &res, NULL, P_STR(bucket), P_I64(now - window))) != DB_OK)
		return rc;
	*n = dbres_i64(res, 0, COUNT_C_N);
	*oldest = dbres_i64(res, 0, COUNT_C_OLDEST);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_rate_check(struct db *db, const char *bucket, int64_t window, int64_t max,
    int64_t now, int *allowed, int64_t *retry_after)
{
	enum db_rc rc;
	int64_t n, oldest;

	*allowed = 0;
	*retry_after = 0;
	if ((rc = bucket_count(db, bucket, window, now, &n, &oldest)) != DB_OK)
		return rc;
	if (n >= max) {
		*retry_after = oldest + window - now;
		if (*retry_after < 1)
			*retry_after = 1;
		return DB_OK;
	}
	*allowed = 1;
	return DB_OK;
}

enum db_rc
db_rate_take_n(struct db *db, const char *bucket, int64_t window, int64_t max, int64_t k,
    int64_t now, int *allowed, int64_t *retry_after)
{
	struct dbres *res = NULL;
	struct dbp *p;
	enum db_rc rc;
	int64_t n, oldest, out, i;

	*allowed = 0;
	*retry_after = 0;
	if (k < 1)
		return DB_ERR;
	if ((rc = bucket_count(db, bucket, window, now, &n, &oldest)) != DB_OK)
		return rc;
	if (n + k > max) {
		/* the events that must leave the window first: the out-th
		 * oldest's time + window; more than the window can hold: a
		 * whole window */
		out = n + k - max;
		*retry_after = window;
		if (out <= n) {
			if ((rc = DB_ONE(db, q_kth, &res, P_STR(bucket), P_I64(now - window),
			    P_I64(out - 1))) != DB_OK)
				return rc;
			*retry_after = dbres_i64(res, 0, DB_COL_ONLY) + window - now;
			dbres_free(res);
		}
		if (*retry_after < 1)
			*retry_after = 1;
		return DB_OK;
	}
	if ((p = calloc((size_t)k * 2, sizeof *p)) == NULL)
		return DB_ERR;
	for (i = 0; i < k; i++) {
		p[i * 2] = P_STR(bucket);
		p[i * 2 + 1] = P_I64(now);
	}
	rc = db_rows_exec(db, &sh_events, NULL, p, (size_t)k, NULL, NULL, NULL);
	free(p);
	if (rc == DB_OK)
		*allowed = 1;
	return rc;
}

enum db_rc
db_rate_add(struct db *db, const char *bucket, int64_t now)
{
	return DB_Q(db, q_event, NULL, NULL, P_STR(bucket), P_I64(now));
}

enum db_rc
db_rate_take(struct db *db, const char *bucket, int64_t window, int64_t max,
    int64_t now, int *allowed, int64_t *retry_after)
{
	enum db_rc rc;

	if ((rc = db_rate_check(db, bucket, window, max, now, allowed, retry_after)) != DB_OK ||
	    !*allowed)
		return rc;
	return db_rate_add(db, bucket, now);
}

/*
 * Idempotency-Key records (design.md §6.16, design.md §13.5).  While a
 * request runs, its key is held by its record, inserted 'in_flight' as
 * the first statement of the effect's transaction and made 'done' with
 * the answer at its end: the primary key (principal, idem_key) makes a
 * second execution impossible, since a duplicate's insert waits for the
 * first's row lock and then meets its committed row (or, on another
 * Galera node, loses certification at COMMIT and meets it on the retry).
 * The row lock dies with the first try's transaction (a rollback, a
 * killed worker's session), so "still in flight" is answered only while
 * the first try is really alive.  The wait is IDEM_HOLD_WAIT seconds: a
 * killed worker's session ends only once the server's thread for it
 * notices the closed socket, and a retry that arrives before then must
 * not be told "in flight"; a live duplicate waits for the first try's
 * answer and replays it.  A row is never committed 'in_flight'.
 */
#define IDEM_HOLD_WAIT "2"
static const char q_idem_hold[] =
    "SET STATEMENT innodb_lock_wait_timeout = " IDEM_HOLD_WAIT " FOR"
    " INSERT INTO idempotency_keys (principal, idem_key, request_hash, state, created_at)"
    " VALUES (?, ?, ?, 'in_flight', ?)";
static const char q_idem_finish[] =
    "UPDATE idempotency_keys SET state = 'done', status = ?, body = ?"
    " WHERE principal = ? AND idem_key = ? AND state = 'in_flight'";
static const char q_idem_unhold[] =
    "DELETE FROM idempotency_keys WHERE principal = ? AND idem_key = ? AND state = 'in_flight'";
/* a record past its ttl, or an 'in_flight' one a claim of before
 * migration 009 left (none is committed since) */
static const char q_idem_stale[] =
    "DELETE FROM idempotency_keys WHERE principal = ? AND idem_key = ?"
    " AND (created_at <= ? OR state <> 'done')";
static const char q_idem_ins[] =
    "INSERT INTO idempotency_keys (principal, idem_key, request_hash, state, status, body,"
    " created_at) VALUES (?, ?, ?, 'done', ?, ?, ?)";
/* An idempotency record, read at the IDEM_C_* positions. */
#define IDEM_COLUMNS(X, L) \
	X(IDEM_C_HASH,		"request_hash") \
	X(IDEM_C_STATE,		"state") \
	X(IDEM_C_STATUS,	"status") \
	X(IDEM_C_BODY,		"body") \
	L(IDEM_C_CREATED_AT,	"created_at")
enum idem_col { DB_COLS_ENUM(IDEM_COLUMNS) IDEM_C__END };
static const char q_idem_get[] =
    "SELECT " DB_COLS_SQL(IDEM_COLUMNS) " FROM idempotency_keys"
    " WHERE principal = ? AND idem_key = ?";

enum db_rc
db_idem_hold(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int64_t now, int64_t ttl, int *held)
{
	uint64_t n = 0;
	enum db_rc rc;

	*held = 0;
	rc = DB_Q(db, q_idem_hold, NULL, NULL, P_STR(principal), P_STR(key), P_BLOB(hash, 32),
	    P_I64(now));
	if (rc == DB_DUP) {
		/* a stale record gives way; a live one is the answer */
		if ((rc = DB_Q(db, q_idem_stale, NULL, &n, P_STR(principal), P_STR(key),
		    P_I64(now - ttl))) != DB_OK)
			return rc;
		if (n == 0)
			return DB_DUP;
		rc = DB_Q(db, q_idem_hold, NULL, NULL, P_STR(principal), P_STR(key),
		    P_BLOB(hash, 32), P_I64(now));
	}
	if (rc == DB_RETRY && db_errno(db) == ER_LOCK_WAIT_TIMEOUT)
		return DB_OK;	/* held by a live first try */
	if (rc == DB_OK)
		*held = 1;
	return rc;
}

enum db_rc
db_idem_finish(struct db *db, const char *principal, const char *key, int status,
    const char *body, size_t blen)
{
	return DB_Q(db, q_idem_finish, NULL, NULL, P_I64(status), P_BLOB(body, blen),
	    P_STR(principal), P_STR(key));
}

enum db_rc
db_idem_unhold(struct db *db, const char *principal, const char *key)
{
	return DB_Q(db, q_idem_unhold, NULL, NULL, P_STR(principal), P_STR(key));
}

enum db_rc
db_idem_get(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int64_t now, int64_t ttl, enum idem_state *st,
    int *status, char **body, size_t *blen)
{
	struct dbres *res = NULL;
	size_t hl, bl;
	const void *h, *b;
	enum db_rc rc;

	*body = NULL;
	*blen = 0;
	*st = IDEM_NEW;
	if ((rc = DB_Q(db, q_idem_get, &res, NULL, P_STR(principal), P_STR(key))) != DB_OK)
		return rc;
	if (res->nrows == 0) {
		dbres_free(res);
		return DB_OK;
	}
	/* A record past its ttl, or a stale 'in_flight' one, counts as none
	 * (the next hold removes it). */
	if (dbres_i64(res, 0, IDEM_C_CREATED_AT) <= now - ttl ||
	    strcmp(dbres_str(res, 0, IDEM_C_STATE), "done") != 0) {
		dbres_free(res);
		return DB_OK;
	}
	h = dbres_blob(res, 0, IDEM_C_HASH, &hl);
	b = dbres_blob(res, 0, IDEM_C_BODY, &bl);
	if (hl != 32 || sodium_memcmp(h, hash, 32) != 0)
		*st = IDEM_CONFLICT;
	else {
		*st = IDEM_REPLAY;
		*status = (int)dbres_i64(res, 0, IDEM_C_STATUS);
		if ((*body = malloc(bl + 1)) == NULL) {
			dbres_free(res);
			return DB_ERR;
		}
		memcpy(*body, b, bl);
		(*body)[bl] = '\0';
		*blen = bl;
	}
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_idem_store(struct db *db, const char *principal, const char *key,
    const unsigned char hash[32], int status, const char *body, size_t blen, int64_t now)
{
	return DB_Q(db, q_idem_ins, NULL, NULL, P_STR(principal), P_STR(key), P_BLOB(hash, 32),
	    P_I64(status), P_BLOB(body, blen), P_I64(now));
}
