/*
 * db/: the only place with SQL.  One connection per process (per worker),
 * statements prepared once per connection and cached by their SQL text
 * pointer, positional binds only, results copied into one owned block.
 *
 * Return convention of this layer: enum db_rc.  DB_OK is 0; business
 * outcomes the database reports (duplicate key, check constraint, no row)
 * are kept apart from infrastructure errors (DB_GONE, DB_ERR).
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
void db_close(struct db *db);
/* Make sure the connection is up, reconnecting if needed: DB_OK or DB_GONE. */
enum db_rc db_ensure(struct db *db);
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

#define DB_ARGS(...) ((const struct dbp[]){ __VA_ARGS__ }), \
	(sizeof((const struct dbp[]){ __VA_ARGS__ }) / sizeof(struct dbp))
/* DB_Q(db, sql, &res, &affected, P_STR(a), P_I64(b)) */
#define DB_Q(db, sql, res, aff, ...) db_exec((db), (sql), DB_ARGS(__VA_ARGS__), (res), (aff))
#define DB_Q0(db, sql, res, aff) db_exec((db), (sql), NULL, 0, (res), (aff))

void dbres_free(struct dbres *res);
/* Cell accessors; out-of-range or NULL cells give NULL / 0. */
const char *dbres_str(const struct dbres *res, size_t row, size_t col);
int64_t dbres_i64(const struct dbres *res, size_t row, size_t col);
const void *dbres_blob(const struct dbres *res, size_t row, size_t col, size_t *len);
int dbres_isnull(const struct dbres *res, size_t row, size_t col);

/* Plain transaction control. */
enum db_rc db_begin(struct db *db);
enum db_rc db_commit(struct db *db);
void db_rollback(struct db *db);

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

/* Apply every db/migrations/NNN_*.sql not yet recorded in schema_version. */
enum db_rc db_migrate(struct db *db, const char *dir, int verbose);

#endif
