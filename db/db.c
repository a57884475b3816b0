#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>
#include <sodium.h>

#include "lib/clock.h"
#include "lib/config.h"
#include "lib/log.h"
#include "db/db.h"
#include "db/guard.h"

#define STMT_SLOTS 512		/* power of two, more than the statements we have */
#define TX_TRIES 8

struct db {
	const struct config *cfg;
	MYSQL *my;
	int up;
	int in_tx;
	/* design.md §9.5: a request's database work ends by its deadline */
	int limit;		/* seconds per statement and lock wait; 0: server defaults */
	int limit_set;		/* the value set on this session; 0: none yet */
	int64_t deadline;	/* monotonic microseconds; 0: none */
	struct evq *evq;	/* events of the open transaction (db/events.c) */
	const struct db_pending_ops *pending;	/* who flushes and drops it */
	/* db_guard: the watchdog of a frozen server, back-off of reconnects */
	struct guard *guard;
	int64_t retry_at;	/* monotonic microseconds: no connect attempt before */
	int64_t backoff;	/* microseconds; 0 after a successful connect */
	unsigned io_tmo;	/* seconds for connect, reads, writes; 0: the defaults */
	/* design.md §16: the node of cfg->db_node this connection is on, and
	 * until when (monotonic microseconds) a node that failed is skipped */
	int node;
	int64_t node_down[CONFIG_DB_NODES];
	int64_t home_at;	/* on a later node: try the earlier ones again then */
	unsigned lasterr;
	char errbuf[512];
	struct {
		const char *sql;
		MYSQL_STMT *st;
	} stmts[STMT_SLOTS];
};

static void
db_drop(struct db *db)
{
	size_t i;

	for (i = 0; i < STMT_SLOTS; i++)
		if (db->stmts[i].st != NULL) {
			mysql_stmt_close(db->stmts[i].st);
			db->stmts[i].st = NULL;
			db->stmts[i].sql = NULL;
		}
	guard_leave(db->guard);	/* its socket closes now */
	if (db->my != NULL)
		mysql_close(db->my);
	db->my = NULL;
	db->up = 0;
	db->in_tx = 0;
	db->limit_set = 0;	/* a new session starts from the server's defaults */
}

static void
seterr(struct db *db, unsigned no, const char *msg)
{
	db->lasterr = no;
	snprintf(db->errbuf, sizeof db->errbuf, "%u: %s", no, msg ? msg : "?");
}

/* design.md §16: a node whose connection failed, or that was not ready,
 * is passed over for NODE_DOWN_US when connecting again; a connection on
 * a later node than the first tries the earlier ones after NODE_HOME_US. */
#define NODE_DOWN_US	5000000
#define NODE_HOME_US	30000000

static void
node_failed(struct db *db)
{
	if (db->cfg->ndb_node > 1 && db->up && db->node >= 0)
		db->node_down[db->node] = clock_mono_us() + NODE_DOWN_US;
}

static enum db_rc
classify(struct db *db, unsigned no)
{
	switch (no) {
	case 0:
		return DB_OK;
	case ER_DUP_ENTRY:
	case ER_DUP_ENTRY_WITH_KEY_NAME:
		return DB_DUP;
	case ER_CONSTRAINT_FAILED:
	case ER_SIGNAL_EXCEPTION:
	case ER_WARN_DATA_OUT_OF_RANGE:
	case ER_NO_REFERENCED_ROW_2:
	case ER_ROW_IS_REFERENCED_2:
		return DB_CHECK;
	case ER_UNKNOWN_COM_ERROR:
		/* 1047: a Galera node not ready (not in the primary component,
		 * or rejoining): nothing ran; the next connect goes to a ready
		 * node (design.md §13.1) and the transaction is retried */
		node_failed(db);
		db_drop(db);
		return DB_RETRY;
	case ER_LOCK_DEADLOCK:	/* also a certification failure on Galera */
	case ER_LOCK_WAIT_TIMEOUT:
	case ER_CHECKREAD:	/* 1020: record changed since last read */
	case 1969:		/* ER_STATEMENT_TIMEOUT: max_statement_time */
		return DB_RETRY;
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_COMMANDS_OUT_OF_SYNC:
	case ER_SERVER_SHUTDOWN:
	case ER_CONNECTION_KILLED:
	case 4031:		/* ER_NET_..._TIMEOUT in newer servers: client idle disconnect */
		node_failed(db);
		db_drop(db);
		return DB_GONE;
	default:
		return DB_ERR;
	}
}

/*
 * May this connection take writes (design.md §16)?  A Galera node only
 * when wsrep_ready is ON and its state Synced; a server without wsrep
 * (no such status, or wsrep_on OFF) always.  1 healthy, 0 not.
 */
static int
node_healthy(MYSQL *my)
{
	static const char q[] = "SHOW GLOBAL STATUS WHERE Variable_name IN"
	    " ('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_status')";
	MYSQL_RES *res;
	MYSQL_ROW row;
	int ready = -1, synced = 0, primary = 0, n = 0;

	if (mysql_real_query(my, q, sizeof q - 1) != 0 || (res = mysql_store_result(my)) == NULL)
		return 0;
	while ((row = mysql_fetch_row(res)) != NULL) {
		if (row[0] == NULL || row[1] == NULL)
			continue;
		n++;
		if (strcasecmp(row[0], "wsrep_ready") == 0)
			ready = strcmp(row[1], "ON") == 0;
		else if (strcasecmp(row[0], "wsrep_local_state_comment") == 0)
			synced = strcmp(row[1], "Synced") == 0;
		else if (strcasecmp(row[0], "wsrep_cluster_status") == 0)
			primary = strcmp(row[1], "Primary") == 0;
	}
	mysql_free_result(res);
	if (ready == -1)
		return 1;	/* no wsrep status at all */
	if (ready == 0 && !synced && !primary && n > 0) {
		/* wsrep compiled in but off (a single server): no cluster */
		if (mysql_real_query(my, "SELECT @@wsrep_on", 17) == 0 &&
		    (res = mysql_store_result(my)) != NULL) {
			row = mysql_fetch_row(res);
			n = row != NULL && row[0] != NULL && strcmp(row[0], "0") == 0;
			mysql_free_result(res);
			if (n)
				return 1;
		}
		return 0;
	}
	return ready == 1 && synced && primary;
}

/* Connect to one server: host NULL for cfg's socket or host. */
static enum db_rc
connect_one(struct db *db, const char *host, unsigned port)
{
	const struct config *c = db->cfg;
	/* reads wait past the statement limit, so a statement the server
	 * stops is answered, not cut as a lost connection */
	unsigned int tmo = db->guard != NULL || c->ndb_node > 1 ? 1 : 2;
	unsigned int rwtmo = db->limit > 0 ? (unsigned)db->limit + 15 : 30;

	if (db->io_tmo > 0)
		tmo = rwtmo = db->io_tmo;

	if ((db->my = mysql_init(NULL)) == NULL) {
		seterr(db, 0, "mysql_init failed");
		return DB_ERR;
	}
	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &tmo);
	mysql_options(db->my, MYSQL_OPT_READ_TIMEOUT, &rwtmo);
	mysql_options(db->my, MYSQL_OPT_WRITE_TIMEOUT, &rwtmo);
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_options(db->my, MYSQL_INIT_COMMAND,
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	if (host == NULL) {
		host = c->db_socket[0] ? NULL : c->db_host;
		port = c->db_socket[0] ? 0 : (unsigned)c->db_port;
	}
	if (mysql_real_connect(db->my, host, c->db_user, c->db_password, c->db_name, port,
	    host == NULL ? c->db_socket : NULL, 0) == NULL) {
		seterr(db, mysql_errno(db->my), mysql_error(db->my));
		mysql_close(db->my);
		db->my = NULL;
		return DB_GONE;
	}
	/* Connector/C opens its socket without close-on-exec. */
	(void)fcntl((int)mysql_get_socket(db->my), F_SETFD, FD_CLOEXEC);
	return DB_OK;
}

/*
 * Connect: to cfg's one server, or (design.md §16) to the first healthy
 * node of cfg->db_node in its order, passing over the nodes that failed
 * in the last NODE_DOWN_US unless no other is left.
 */
static enum db_rc
db_connect(struct db *db)
{
	const struct config *c = db->cfg;
	enum db_rc rc = DB_GONE;
	int64_t now;
	size_t k;
	int pass;

	if (c->ndb_node == 0) {
		if ((rc = connect_one(db, NULL, 0)) == DB_OK)
			db->up = 1;
		return rc;
	}
	now = clock_mono_us();
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < c->ndb_node; k++) {
			if ((db->node_down[k] > now) != (pass == 1))
				continue;
			if ((rc = connect_one(db, c->db_node[k].host,
			    (unsigned)c->db_node[k].port)) == DB_ERR)
				return rc;
			if (rc == DB_OK && !node_healthy(db->my)) {
				seterr(db, 0, "the node is not ready (wsrep)");
				mysql_close(db->my);
				db->my = NULL;
				rc = DB_GONE;
			}
			if (rc != DB_OK) {
				db->node_down[k] = clock_mono_us() + NODE_DOWN_US;
				continue;
			}
			if ((int)k != db->node && db->node >= 0)
				log_msg("db: writing through node %s:%d", c->db_node[k].host,
				    c->db_node[k].port);
			db->node = (int)k;
			db->home_at = k > 0 ? clock_mono_us() + NODE_HOME_US : 0;
			db->up = 1;
			return DB_OK;
		}
	return rc;
}

struct db *
db_open(const struct config *cfg)
{
	struct db *db = db_open_bounded(cfg, 0);

	/* design.md §16: with several nodes every process cuts a statement
	 * on a node that stops answering, to move to the next */
	if (db != NULL && cfg->ndb_node > 1)
		(void)db_guard(db);
	return db;
}

struct db *
db_open_bounded(const struct config *cfg, unsigned seconds)
{
	struct db *db;

	if ((db = calloc(1, sizeof *db)) == NULL)
		return NULL;
	db->cfg = cfg;
	db->io_tmo = seconds;
	db->node = -1;
	(void)db_connect(db);
	return db;
}

static void
pending_drop(struct db *db)
{
	if (db->pending != NULL)
		db->pending->drop(db);
}

int
db_up(const struct db *db)
{
	return db != NULL && db->up;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	pending_drop(db);
	db_drop(db);
	free(db);
}

void
db_set_limit(struct db *db, int seconds)
{
	db->limit = seconds > 0 ? seconds : 0;
	if (db->up && !db->in_tx)
		db_drop(db);	/* reconnect with the read timeout that fits */
}

void
db_set_deadline(struct db *db, int64_t seconds_from_now)
{
	db->deadline = seconds_from_now > 0 ? clock_mono_us() + seconds_from_now * 1000000 : 0;
}

enum db_rc
db_ensure(struct db *db)
{
	enum db_rc rc;
	int64_t now;

	/* design.md §16: back to an earlier node, between transactions */
	if (db->up && db->home_at > 0 && !db->in_tx && clock_mono_us() >= db->home_at)
		db_drop(db);
	if (db->up)
		return DB_OK;
	db_drop(db);
	if (db->guard == NULL)
		return db_connect(db);
	/* A server that refused us is not asked again at once: 100 ms,
	 * doubling to 1 s, between attempts; meanwhile DB_GONE (503) at once. */
	if ((now = clock_mono_us()) < db->retry_at) {
		seterr(db, 0, "database unreachable (waiting before the next connect attempt)");
		return DB_GONE;
	}
	if ((rc = db_connect(db)) == DB_GONE) {
		db->backoff = db->backoff == 0 ? 100000 : db->backoff * 2;
		if (db->backoff > 1000000)
			db->backoff = 1000000;
		db->retry_at = clock_mono_us() + db->backoff;
	} else if (rc == DB_OK)
		db->backoff = db->retry_at = 0;
	return rc;
}

enum db_rc
db_guard(struct db *db)
{
	if (db->guard == NULL && (db->guard = guard_start()) == NULL) {
		seterr(db, 0, "cannot start the database guard thread");
		return DB_ERR;
	}
	db_drop(db);	/* reconnect with the guard's connect timeout */
	return DB_OK;
}

enum db_rc
db_ping(struct db *db)
{
	struct dbres *res = NULL;
	enum db_rc rc = DB_Q0(db, "SELECT 1", &res, NULL);

	dbres_free(res);
	return rc;
}

const char *
db_error(const struct db *db)
{
	return db->errbuf;
}

unsigned
db_errno(const struct db *db)
{
	return db->lasterr;
}

static MYSQL_STMT *
getstmt(struct db *db, const char *sql, enum db_rc *rc)
{
	size_t h = ((uintptr_t)sql >> 3) & (STMT_SLOTS - 1), i;
	MYSQL_STMT *st;
	my_bool on = 1;

	for (i = 0; i < STMT_SLOTS; i++, h = (h + 1) & (STMT_SLOTS - 1)) {
		if (db->stmts[h].sql == sql)
			return db->stmts[h].st;
		if (db->stmts[h].sql == NULL)
			break;
	}
	if (i == STMT_SLOTS) {
		seterr(db, 0, "statement cache full");
		*rc = DB_ERR;
		return NULL;
	}
	if ((st = mysql_stmt_init(db->my)) == NULL) {
		seterr(db, 0, "mysql_stmt_init failed");
		*rc = DB_ERR;
		return NULL;
	}
	if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql)) != 0) {
		unsigned no = mysql_stmt_errno(st);
		seterr(db, no, mysql_stmt_error(st));
		log_msg("db: prepare failed: %s: %.120s", db->errbuf, sql);
		mysql_stmt_close(st);
		*rc = classify(db, no);
		return NULL;
	}
	mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &on);
	db->stmts[h].sql = sql;
	db->stmts[h].st = st;
	return st;
}

static int
isint(enum enum_field_types t)
{
	return t == MYSQL_TYPE_TINY || t == MYSQL_TYPE_SHORT || t == MYSQL_TYPE_LONG ||
	    t == MYSQL_TYPE_LONGLONG || t == MYSQL_TYPE_INT24 || t == MYSQL_TYPE_YEAR;
}

static int
isfloat(enum enum_field_types t)
{
	return t == MYSQL_TYPE_FLOAT || t == MYSQL_TYPE_DOUBLE;
}

/* Copy every row of a stored result into one owned block. */
static enum db_rc
fetchall(struct db *db, MYSQL_STMT *st, MYSQL_RES *meta, struct dbres **out)
{
	size_t ncols = mysql_num_fields(meta), nrows, r, c, rowbytes = 0;
	MYSQL_FIELD *f = mysql_fetch_fields(meta);
	MYSQL_BIND *b = NULL;
	unsigned long *lens = NULL;
	my_bool *nulls = NULL;
	long long *ints = NULL;
	double *dbls = NULL;
	struct dbres *res = NULL;
	char *arena, *rowbuf = NULL;
	size_t *offs = NULL;
	enum db_rc rc = DB_ERR;
	int frc;

	if (mysql_stmt_store_result(st) != 0) {
		seterr(db, mysql_stmt_errno(st), mysql_stmt_error(st));
		return classify(db, mysql_stmt_errno(st));
	}
	nrows = (size_t)mysql_stmt_num_rows(st);
	b = calloc(ncols, sizeof *b);
	lens = calloc(ncols, sizeof *lens);
	nulls = calloc(ncols, sizeof *nulls);
	ints = calloc(ncols, sizeof *ints);
	dbls = calloc(ncols, sizeof *dbls);
	offs = calloc(ncols + 1, sizeof *offs);
	if (ncols && (!b || !lens || !nulls || !ints || !dbls || !offs))
		goto done;
	for (c = 0; c < ncols; c++) {
		size_t cap = isint(f[c].type) || isfloat(f[c].type) ? 32 : f[c].max_length + 1;
		offs[c] = rowbytes;
		rowbytes += cap;
	}
	offs[ncols] = rowbytes;
	if ((rowbuf = malloc(rowbytes ? rowbytes : 1)) == NULL)
		goto done;
	for (c = 0; c < ncols; c++) {
		b[c].length = &lens[c];
		b[c].is_null = &nulls[c];
		if (isint(f[c].type)) {
			b[c].buffer_type = MYSQL_TYPE_LONGLONG;
			b[c].buffer = &ints[c];
			b[c].is_unsigned = 0;
		} else if (isfloat(f[c].type)) {
			b[c].buffer_type = MYSQL_TYPE_DOUBLE;
			b[c].buffer = &dbls[c];
		} else {
			b[c].buffer_type = MYSQL_TYPE_STRING;
			b[c].buffer = rowbuf + offs[c];
			b[c].buffer_length = (unsigned long)(offs[c + 1] - offs[c]);
		}
	}
	if (mysql_stmt_bind_result(st, b) != 0) {
		seterr(db, mysql_stmt_errno(st), mysql_stmt_error(st));
		goto done;
	}
	res = calloc(1, sizeof *res + nrows * ncols * sizeof(struct dbcell) + nrows * rowbytes + 1);
	if (res == NULL)
		goto done;
	res->nrows = nrows;
	res->ncols = ncols;
	res->cells = (struct dbcell *)(res + 1);
	arena = (char *)(res->cells + nrows * ncols);
	for (r = 0; r < nrows; r++) {
		frc = mysql_stmt_fetch(st);
		if (frc == 1 || frc == MYSQL_NO_DATA) {
			seterr(db, mysql_stmt_errno(st), mysql_stmt_error(st));
			rc = classify(db, mysql_stmt_errno(st));
			if (rc == DB_OK)
				rc = DB_ERR;
			goto done;
		}
		for (c = 0; c < ncols; c++) {
			struct dbcell *cell = &res->cells[r * ncols + c];
			char *dst = arena + r * rowbytes + offs[c];
			size_t cap = offs[c + 1] - offs[c];

			cell->p = dst;
			if (nulls[c]) {
				cell->null = 1;
				dst[0] = '\0';
				continue;
			}
			if (isint(f[c].type))
				cell->len = (size_t)snprintf(dst, cap, "%lld", ints[c]);
			else if (isfloat(f[c].type))
				cell->len = (size_t)snprintf(dst, cap, "%.17g", dbls[c]);
			else {
				cell->len = lens[c] < cap ? lens[c] : cap - 1;
				memcpy(dst, rowbuf + offs[c], cell->len);
				dst[cell->len] = '\0';
			}
		}
	}
	*out = res;
	res = NULL;
	rc = DB_OK;
done:
	mysql_stmt_free_result(st);
	free(res);
	free(b);
	free(lens);
	free(nulls);
	free(ints);
	free(dbls);
	free(offs);
	free(rowbuf);
	return rc;
}

/* exec_stmt with room for np binds. */
static enum db_rc
exec_binds(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct dbres **res, uint64_t *affected, MYSQL_BIND *binds, unsigned long *lens)
{
	my_bool isnull = 1;
	MYSQL_STMT *st;
	MYSQL_RES *meta;
	enum db_rc rc = DB_ERR;
	size_t i;

	if ((st = getstmt(db, sql, &rc)) == NULL)
		return rc;
	if (mysql_stmt_param_count(st) != np) {
		seterr(db, 0, "parameter count mismatch");
		log_msg("db: %s: %.120s", db->errbuf, sql);
		return DB_ERR;
	}
	memset(binds, 0, np * sizeof *binds);
	for (i = 0; i < np; i++) {
		switch (p[i].t) {
		case DBT_NULL:
			binds[i].buffer_type = MYSQL_TYPE_NULL;
			binds[i].is_null = &isnull;
			break;
		case DBT_I64:
			binds[i].buffer_type = MYSQL_TYPE_LONGLONG;
			binds[i].buffer = (void *)&p[i].i;
			break;
		case DBT_F64:
			binds[i].buffer_type = MYSQL_TYPE_DOUBLE;
			binds[i].buffer = (void *)&p[i].f;
			break;
		case DBT_STR:
		case DBT_BLOB:
			binds[i].buffer_type = p[i].t == DBT_STR ? MYSQL_TYPE_STRING : MYSQL_TYPE_BLOB;
			binds[i].buffer = (void *)(p[i].p ? p[i].p : "");
			lens[i] = (unsigned long)p[i].n;
			binds[i].buffer_length = lens[i];
			binds[i].length = &lens[i];
			break;
		}
	}
	if ((np && mysql_stmt_bind_param(st, binds) != 0) || mysql_stmt_execute(st) != 0) {
		unsigned no = mysql_stmt_errno(st);
		seterr(db, no, mysql_stmt_error(st));
		rc = classify(db, no);
		if (rc == DB_ERR)
			log_msg("db: %s: %.120s", db->errbuf, sql);
		return rc;
	}
	if (affected != NULL)
		*affected = (uint64_t)mysql_stmt_affected_rows(st);
	if ((meta = mysql_stmt_result_metadata(st)) != NULL) {
		if (res != NULL)
			rc = fetchall(db, st, meta, res);
		else {
			mysql_stmt_free_result(st);
			rc = DB_OK;
		}
		mysql_free_result(meta);
		return rc;
	}
	return DB_OK;
}

/* Run one statement on the connection as it is (see exec_once); binds on
 * the stack up to 32 parameters, on the heap for the multi-row statements
 * of db/rows.c (at most DB_MAX_PARAMS). */
static enum db_rc
exec_stmt(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct dbres **res, uint64_t *affected)
{
	MYSQL_BIND sbinds[32], *binds;
	unsigned long slens[32], *lens;
	enum db_rc rc;

	if (res != NULL)
		*res = NULL;
	if (affected != NULL)
		*affected = 0;
	if (np <= 32)
		return exec_binds(db, sql, p, np, res, affected, sbinds, slens);
	if (np > DB_MAX_PARAMS) {
		seterr(db, 0, "too many parameters");
		return DB_ERR;
	}
	binds = calloc(np, sizeof *binds);
	lens = calloc(np, sizeof *lens);
	rc = binds != NULL && lens != NULL ? exec_binds(db, sql, p, np, res, affected, binds, lens)
	    : DB_ERR;
	free(binds);
	free(lens);
	return rc;
}

static const char q_limit_set[] =
    "SET SESSION innodb_lock_wait_timeout = ?, max_statement_time = ?";
static const char q_limit_default[] =
    "SET SESSION innodb_lock_wait_timeout = DEFAULT, max_statement_time = DEFAULT";

/*
 * Before each statement of a request with a deadline: none starts past
 * it, and the session's lock-wait and statement limits are the smaller of
 * the configured limit and the whole seconds left (set only when that
 * changes: a slow request pays one round trip more per second it loses).
 */
static enum db_rc
apply_limit(struct db *db)
{
	int want = db->limit;
	enum db_rc rc;

	if (db->deadline > 0) {
		int64_t left = db->deadline - clock_mono_us();

		if (left <= 0) {
			seterr(db, 0, "the request's deadline for database work has passed");
			return DB_RETRY;
		}
		if (want == 0 || (left + 999999) / 1000000 < want)
			want = (int)((left + 999999) / 1000000);
	}
	if (want == db->limit_set)
		return DB_OK;
	if (want == 0)
		rc = exec_stmt(db, q_limit_default, NULL, 0, NULL, NULL);
	else
		rc = exec_stmt(db, q_limit_set, DB_ARGS(P_I64(want), P_I64(want)), NULL, NULL);
	if (rc != DB_OK)
		return rc;
	db->limit_set = want;
	return DB_OK;
}

/* One statement on a live connection, within the request's limits. */
static enum db_rc
exec_once(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct dbres **res, uint64_t *affected)
{
	enum db_rc rc;

	if ((rc = db_ensure(db)) != DB_OK)
		return rc;
	guard_enter(db->guard, (int)mysql_get_socket(db->my));
	if ((rc = apply_limit(db)) == DB_OK)
		rc = exec_stmt(db, sql, p, np, res, affected);
	guard_leave(db->guard);
	return rc;
}

enum db_rc
db_exec(struct db *db, const char *sql, const struct dbp *p, size_t np,
    struct dbres **res, uint64_t *affected)
{
	int was_up = db->up, in_tx = db->in_tx;
	enum db_rc rc = exec_once(db, sql, p, np, res, affected);

	/* A connection that died while idle (server restarted) is noticed
	 * only now: outside a transaction the statement is run again on a
	 * fresh connection when it never reached the server (2006: the
	 * socket was closed when we wrote; 4031: the server had dropped the
	 * idle session; 1047: a Galera node not ready refused it, and the
	 * next connect goes to another).  A connection lost after the statement was sent
	 * (2013) may have run it: that is DB_GONE, never a second run. */
	if (((rc == DB_GONE && (db->lasterr == CR_SERVER_GONE_ERROR || db->lasterr == 4031)) ||
	    (rc == DB_RETRY && db->lasterr == ER_UNKNOWN_COM_ERROR)) && was_up && !in_tx)
		rc = exec_once(db, sql, p, np, res, affected);
	return rc;
}

void
dbres_free(struct dbres *res)
{
	free(res);
}

static const struct dbcell *
cell(const struct dbres *res, size_t row, size_t col)
{
	if (res == NULL || row >= res->nrows || col >= res->ncols)
		return NULL;
	return &res->cells[row * res->ncols + col];
}

const char *
dbres_str(const struct dbres *res, size_t row, size_t col)
{
	const struct dbcell *c = cell(res, row, col);

	return c == NULL || c->null ? NULL : c->p;
}

int64_t
dbres_i64(const struct dbres *res, size_t row, size_t col)
{
	const struct dbcell *c = cell(res, row, col);

	return c == NULL || c->null ? 0 : strtoll(c->p, NULL, 10);
}

const void *
dbres_blob(const struct dbres *res, size_t row, size_t col, size_t *len)
{
	const struct dbcell *c = cell(res, row, col);

	*len = c == NULL || c->null ? 0 : c->len;
	return c == NULL || c->null ? NULL : c->p;
}

int
dbres_isnull(const struct dbres *res, size_t row, size_t col)
{
	const struct dbcell *c = cell(res, row, col);

	return c == NULL || c->null;
}

enum db_rc
db_cursor_known(struct db *db, const char *sql, const char *key, int64_t cursor)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if (cursor <= 0)
		return DB_OK;
	if ((rc = DB_ONE(db, sql, &res, P_STR(key), P_I64(cursor))) == DB_OK)
		dbres_free(res);
	return rc;
}

enum db_rc
db_exec_one(struct db *db, const char *sql, const struct dbp *p, size_t np, struct dbres **res)
{
	enum db_rc rc;

	*res = NULL;
	if ((rc = db_exec(db, sql, p, np, res, NULL)) != DB_OK)
		return rc;
	if ((*res)->nrows == 0) {
		dbres_free(*res);
		*res = NULL;
		return DB_NOTFOUND;
	}
	return DB_OK;
}

void
dbres_copy(char *dst, size_t n, const struct dbres *res, size_t row, size_t col)
{
	const char *s = dbres_str(res, row, col);

	snprintf(dst, n, "%s", s ? s : "");
}

char *
dbres_dup(const struct dbres *res, size_t row, size_t col, int *ok)
{
	const char *s = dbres_str(res, row, col);
	char *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*ok = 0;
	return d;
}

void
db_array_free(void *v, size_t n, size_t size, void (*clear)(void *))
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		clear((char *)v + i * size);
	free(v);
}

enum db_rc
dbres_map(const struct dbres *res, int64_t limit, size_t size,
    int (*map)(const struct dbres *, size_t, void *), void (*clear)(void *),
    void **v, size_t *n, int *more)
{
	size_t i, keep = res->nrows;

	if (limit > 0 && keep > (size_t)limit)
		keep = (size_t)limit;
	*v = NULL;
	*n = 0;
	*more = 0;
	if (keep == 0)
		return DB_OK;
	if ((*v = calloc(keep, size)) == NULL)
		return DB_ERR;
	for (i = 0; i < keep; i++) {
		if (map(res, i, (char *)*v + i * size) != 0) {
			db_array_free(*v, i, size, clear);
			*v = NULL;
			return DB_ERR;
		}
	}
	*n = keep;
	*more = res->nrows > keep;
	return DB_OK;
}

static enum db_rc
simple(struct db *db, const char *sql)
{
	enum db_rc rc;

	if ((rc = db_ensure(db)) != DB_OK)
		return rc;
	guard_enter(db->guard, (int)mysql_get_socket(db->my));
	if (mysql_real_query(db->my, sql, (unsigned long)strlen(sql)) != 0) {
		unsigned no = mysql_errno(db->my);
		seterr(db, no, mysql_error(db->my));
		guard_leave(db->guard);
		return classify(db, no);
	}
	guard_leave(db->guard);
	return DB_OK;
}

enum db_rc
db_begin(struct db *db)
{
	int was_up = db->up;
	enum db_rc rc;

	pending_drop(db);
	rc = simple(db, "START TRANSACTION");
	if (rc == DB_GONE && was_up)
		rc = simple(db, "START TRANSACTION");
	db->in_tx = rc == DB_OK;
	return rc;
}

enum db_rc
db_commit(struct db *db)
{
	enum db_rc rc;

	/* The transaction's events go with its changes (design.md §11): when
	 * they cannot be written, nothing of the transaction is. */
	if (db->pending != NULL && (rc = db->pending->flush(db)) != DB_OK) {
		db_rollback(db);
		return rc;
	}
	rc = simple(db, "COMMIT");

	db->in_tx = 0;
	return rc;
}

void
db_rollback(struct db *db)
{
	if (db->up)
		(void)simple(db, "ROLLBACK");
	pending_drop(db);
	db->in_tx = 0;
}

enum db_rc
db_savepoint(struct db *db)
{
	return simple(db, "SAVEPOINT arps_mark");
}

enum db_rc
db_savepoint_rollback(struct db *db)
{
	enum db_rc rc = simple(db, "ROLLBACK TO SAVEPOINT arps_mark");

	pending_drop(db);	/* the mark comes before any event (db/db.h) */
	return rc;
}

enum db_rc
db_tx(struct db *db, enum db_rc (*fn)(struct db *, void *), void *arg)
{
	enum db_rc rc = DB_ERR;
	int attempt;

	for (attempt = 0; attempt < TX_TRIES; attempt++) {
		if (attempt > 0) {
			/* Jittered exponential back-off: 1..2^attempt ms. */
			uint32_t ms = 1 + randombytes_uniform(1u << (attempt + 1));
			struct timespec ts = { 0, (long)ms * 1000000L };

			/* design.md §9.5: no retry past the request's deadline */
			if (db->deadline > 0 && clock_mono_us() + (int64_t)ms * 1000 >= db->deadline) {
				log_msg("db: transaction stopped at the request's deadline after %d tries: %s",
				    attempt, db->errbuf);
				return DB_RETRY;
			}
			nanosleep(&ts, NULL);
		}
		if ((rc = db_begin(db)) != DB_OK) {
			if (rc == DB_RETRY)
				continue;
			return rc;
		}
		rc = fn(db, arg);
		if (rc == DB_OK) {
			rc = db_commit(db);
			if (rc == DB_OK)
				return DB_OK;
		}
		db_rollback(db);
		if (rc != DB_RETRY)
			return rc;
		/* design.md §13.2: a deadlock means a lock order was broken */
		if (db->lasterr == ER_LOCK_DEADLOCK)
			log_msg("db: transaction retried after try %d: %s", attempt + 1, db->errbuf);
	}
	log_msg("db: transaction gave up after %d tries: %s", TX_TRIES, db->errbuf);
	return DB_RETRY;
}

/* Run a whole file of SQL (several statements) and drain every result. */
enum db_rc
db_script(struct db *db, const char *sql)
{
	enum db_rc rc;
	int st;

	if ((rc = db_ensure(db)) != DB_OK)
		return rc;
	mysql_set_server_option(db->my, MYSQL_OPTION_MULTI_STATEMENTS_ON);
	if ((rc = simple(db, sql)) != DB_OK)
		goto out;
	do {
		MYSQL_RES *r = mysql_store_result(db->my);
		if (r != NULL)
			mysql_free_result(r);
		if ((st = mysql_next_result(db->my)) > 0) {
			unsigned no = mysql_errno(db->my);
			seterr(db, no, mysql_error(db->my));
			rc = classify(db, no) == DB_OK ? DB_ERR : classify(db, no);
			goto out;
		}
	} while (st == 0);
out:
	if (db->up)
		mysql_set_server_option(db->my, MYSQL_OPTION_MULTI_STATEMENTS_OFF);
	return rc;
}

struct evq **
db_evq(struct db *db)
{
	return &db->evq;
}

void
db_set_pending(struct db *db, const struct db_pending_ops *ops)
{
	db->pending = ops;
}
