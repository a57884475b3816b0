/*
 * db/: the only place with SQL.  One connection per process (per worker),
 * statements prepared once per connection and cached by their SQL text
 * pointer, positional binds only, results copied into one owned block.
 *
 * Return convention of this layer: every function that touches the
 * database returns enum db_rc (never an int standing for one).  DB_OK is
 * 0; outcomes the database reports (duplicate key, check constraint, no
 * row) are kept apart from infrastructure errors (DB_GONE, DB_ERR).  A
 * business outcome decided under the transaction's locks (a refusal such
 * as "study full") is not a db_rc: it is an enum arps_err in an
 * `enum arps_err *outcome` parameter (or an `outcome` member), ARPS_OK
 * when the change was made, written whenever the function returns DB_OK.
 * The only other return types: void for the *_free / *_clear functions
 * (which accept NULL), plain accessors (db_error, db_errno, dbres_*), the
 * predicate db_embedding_vector (1 or 0), and the arps-admin commands of
 * txn/admin.h, which return the process exit status.
 */
#ifndef ARPS_DB_DB_H
#define ARPS_DB_DB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct config;

enum db_rc {
	DB_OK = 0,
	DB_NOTFOUND,	/* no row matched (set by repositories, not db_exec) */
	DB_ROLLBACK,	/* a db_tx function refused on purpose: rolled back, not retried */
	DB_DUP,		/* duplicate key (1062) */
	DB_CHECK,	/* CHECK constraint or trigger refused the row */
	DB_RETRY,	/* deadlock, lock wait timeout, snapshot conflict */
	DB_GONE,	/* server unreachable: answer 503 */
	DB_ERR,		/* anything else: answer 500 */
};

enum dbt { DBT_NULL, DBT_I64, DBT_STR, DBT_BLOB, DBT_F64 };

/* One bound parameter. */
struct dbp {
	enum dbt t;
	int64_t i;
	double f;
	const void *p;
	size_t n;
};

#define P_NULL		((struct dbp){ .t = DBT_NULL })
#define P_I64(x)	((struct dbp){ .t = DBT_I64, .i = (int64_t)(x) })
#define P_F64(x)	((struct dbp){ .t = DBT_F64, .f = (double)(x) })

/* A string parameter; NULL binds SQL NULL. */
static inline struct dbp
P_STR(const char *s)
{
	return (struct dbp){ .t = s ? DBT_STR : DBT_NULL, .p = s, .n = s ? strlen(s) : 0 };
}

static inline struct dbp
P_BLOB(const void *b, size_t len)
{
	return (struct dbp){ .t = DBT_BLOB, .p = b, .n = len };
}

/* A result set, owned by the caller; free with dbres_free. */
struct dbres {
	size_t nrows, ncols;
	struct dbcell {
		int null;
		size_t len;
		char *p;	/* NUL-terminated copy of the value */
	} *cells;
};

struct db;

/* Connect with cfg's settings; NULL on allocation failure only (a failed
 * connect leaves a handle that reconnects on next use). */
struct db *db_open(const struct config *cfg);
/* db_open whose connect, and every read and write on the connection, gives
 * up after `seconds` (a frozen server costs the caller at most that long
 * per call): for a process that must never wait on the database, such as
 * the pool's master. */
struct db *db_open_bounded(const struct config *cfg, unsigned seconds);
/* 1 when the connection is up (the last connect worked and nothing has
 * dropped it since), else 0; never connects. */
int db_up(const struct db *db);
void db_close(struct db *db);
/* Make sure the connection is up, reconnecting if needed: DB_OK or DB_GONE. */
enum db_rc db_ensure(struct db *db);
/*
 * The worker's guards (db/guard.h): a statement on a server that stops
 * answering is given up within about 1.5 s (DB_GONE), and after a failed
 * connect the next attempt waits 100 ms, doubling to 1 s, answering
 * DB_GONE at once meanwhile.  DB_OK, or DB_ERR when the guard's thread
 * cannot start.
 */
enum db_rc db_guard(struct db *db);
/* One round trip to the server (SELECT 1): DB_OK, DB_GONE or DB_ERR. */
enum db_rc db_ping(struct db *db);
/* The last server error text, for logs. */
const char *db_error(const struct db *db);
/* The last server error number (0 when none). */
unsigned db_errno(const struct db *db);

/*
 * Run one statement with np parameters.  When res is not NULL and the
 * statement returns rows, *res gets them (caller frees).  When affected is
 * not NULL it gets the affected-row count.
 */
enum db_rc db_exec(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct dbres **res, uint64_t *affected);
#define DB_MAX_PARAMS 4096	/* parameters of one statement */
/* Placeholder lists of IN (...) with a fixed count (unused ones bound NULL). */
#define DB_Q4	"?, ?, ?, ?"
#define DB_Q32	DB_Q4 ", " DB_Q4 ", " DB_Q4 ", " DB_Q4 ", " DB_Q4 ", " DB_Q4 ", " DB_Q4 ", " DB_Q4

#define DB_ARGS(...) ((const struct dbp[]){ __VA_ARGS__ }), \
	(sizeof((const struct dbp[]){ __VA_ARGS__ }) / sizeof(struct dbp))
/* DB_Q(db, sql, &res, &affected, P_STR(a), P_I64(b)) */
#define DB_Q(db, sql, res, aff, ...) db_exec((db), (sql), DB_ARGS(__VA_ARGS__), (res), (aff))
#define DB_Q0(db, sql, res, aff) db_exec((db), (sql), NULL, 0, (res), (aff))

/* db_exec for a query that gives at most one row that matters: DB_NOTFOUND
 * (nothing kept) when it gives none, else DB_OK with the rows in *res
 * (caller frees; read row 0). */
enum db_rc db_exec_one(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct dbres **res);
/* DB_ONE(db, sql, &res, P_STR(a), ...) */
#define DB_ONE(db, sql, res, ...) db_exec_one((db), (sql), DB_ARGS(__VA_ARGS__), (res))

/*
 * Named positions.  A SELECT's column list and the positions it is read at
 * come from one X-macro LIST(X, L): X(NAME, "sql expression") for every
 * column but the last, L(NAME, "sql expression") for the last.  Then
 *   DB_COLS_SQL(LIST)   is the string literal "expr, expr, ..., expr" and
 *   DB_COLS_ENUM(LIST)  is the enumerators NAME, NAME, ..., in that order,
 * so `enum { DB_COLS_ENUM(AGENT_COLUMNS) AGENT__NCOLS };` numbers the
 * columns and dbres_str(res, row, AGENT_C_NAME) cannot drift from the SQL.
 * Two lists selected one after the other number on by writing both
 * DB_COLS_ENUM in one enum.  DB_COL_ONLY is the column of a one-column
 * SELECT.
 */
#define DB_COL_SQL_(e, sql)		sql ", "
#define DB_COL_SQL_LAST_(e, sql)	sql
#define DB_COL_ENUM_(e, sql)		e,
#define DB_COLS_SQL(LIST)		LIST(DB_COL_SQL_, DB_COL_SQL_LAST_)
#define DB_COLS_ENUM(LIST)		LIST(DB_COL_ENUM_, DB_COL_ENUM_)
enum { DB_COL_ONLY = 0 };

void dbres_free(struct dbres *res);
/* Cell accessors; out-of-range or NULL cells give NULL / 0. */
const char *dbres_str(const struct dbres *res, size_t row, size_t col);
int64_t dbres_i64(const struct dbres *res, size_t row, size_t col);
const void *dbres_blob(const struct dbres *res, size_t row, size_t col, size_t *len);
int dbres_isnull(const struct dbres *res, size_t row, size_t col);

/* Copy a cell's text into dst (n bytes, truncated; a NULL cell gives ""). */
void dbres_copy(char *dst, size_t n, const struct dbres *res, size_t row, size_t col);
/* A malloc'd copy of a cell's text, NULL for a NULL cell; *ok is set to 0
 * when the copy cannot be allocated (and left alone otherwise). */
char *dbres_dup(const struct dbres *res, size_t row, size_t col, int *ok);

/*
 * Map the rows of a list page into a calloc'd array *v of elements of
 * `size` bytes: at most limit rows (limit <= 0: every row), each filled by
 * map(res, row, elem), which returns 0, or -1 having released what it
 * took.  *more is 1 when res holds a row beyond limit (there is a next
 * page).  DB_OK, or DB_ERR (allocation or a row that does not map: every
 * element mapped so far is released with clear, *v is NULL, *n is 0).
 */
enum db_rc dbres_map(const struct dbres *res, int64_t limit, size_t size,
    int (*map)(const struct dbres *, size_t, void *), void (*clear)(void *),
    void **v, size_t *n, int *more);
/* Release an array of n elements of `size` bytes, each with clear; NULL is fine. */
void db_array_free(void *v, size_t n, size_t size, void (*clear)(void *));

/* A newest-first list's cursor (design.md §6.1: a bad cursor is 422): DB_OK
 * for 0 (the first page) or when `sql` (one `?` for key, one for the seq)
 * finds the row the cursor names, DB_NOTFOUND when it names none of this
 * list's rows (never handed out: made up, or another list's). */
enum db_rc db_cursor_known(struct db *db, const char *sql, const char *key, int64_t cursor);

/* The seq bound of a newest-first list page: seq < cursor, or every row
 * for cursor 0 (the first page). */
static inline int64_t
db_cursor_bound(int64_t cursor)
{
	return cursor > 0 ? cursor : INT64_MAX;
}

/*
 * design.md §9.5, one execution per Idempotency-Key: a request's database
 * work must end well inside the 120 s an in-flight record is honoured.
 * db_set_limit caps every lock wait and statement of the session at
 * `seconds` (innodb_lock_wait_timeout, max_statement_time; 0: the server's
 * defaults).  db_set_deadline(db, n) starts a deadline n seconds from now
 * (0 clears it): no statement starts after it (DB_RETRY), the limits shrink
 * to the seconds left, and db_tx retries no transaction past it.  The
 * worker sets both to 30 s, the deadline at the start of each request.
 */
void db_set_limit(struct db *db, int seconds);
void db_set_deadline(struct db *db, int64_t seconds_from_now);

/* Plain transaction control. */
enum db_rc db_begin(struct db *db);
enum db_rc db_commit(struct db *db);
void db_rollback(struct db *db);

/* In a transaction: mark the point db_savepoint_rollback undoes the
 * transaction's work back to (one mark; a new one replaces it).  The
 * rollback drops every event queued in the transaction: mark before
 * queuing any. */
enum db_rc db_savepoint(struct db *db);
enum db_rc db_savepoint_rollback(struct db *db);
/*
 * Run fn(db, arg) inside one transaction, retrying the whole transaction
 * with jittered back-off when the server reports a deadlock (1213), lock
 * wait timeout (1205) or snapshot conflict (1020).  fn returns DB_OK to
 * commit; any other value rolls back and is returned (after retries for
 * DB_RETRY).  A business outcome should be carried in arg, with fn
 * returning DB_OK when the transaction's writes must be kept, or a non-OK
 * code to roll back.
 */
enum db_rc db_tx(struct db *db, enum db_rc (*fn)(struct db *, void *), void *arg);

/* The queue of events of the open transaction (db/events.c). */
struct evq;
struct evq **db_evq(struct db *db);

/* Work a layer above the driver queues within the open transaction:
 * flush() runs before COMMIT (a non-OK code rolls the transaction back),
 * drop() at BEGIN, ROLLBACK and close.  The events of db/events.c are the
 * one user; registering them here keeps the driver below its callers
 * (design.md §2.5: no link cycle). */
struct db_pending_ops {
	enum db_rc (*flush)(struct db *db);
	void (*drop)(struct db *db);
};
void db_set_pending(struct db *db, const struct db_pending_ops *ops);

/* Apply every db/migrations/NNN_*.sql not yet recorded in schema_version
 * (db/migrate.c), one migrator at a time on any node (its lease). */
enum db_rc db_migrate(struct db *db, const char *dir, int verbose);
/* Run a script of several statements, draining every result. */
enum db_rc db_script(struct db *db, const char *sql);

#endif
