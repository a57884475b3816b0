/*
 * The statements of `arps-admin setup-db` (admin/setup.c), run as MariaDB's
 * root over the unix socket.  DDL and account statements take no
 * placeholders in MariaDB, so the names and passwords put into them are
 * checked here first: identifiers are [A-Za-z0-9_], passwords are hex.
 * Return convention: 0, or -1 with the reason written to stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "db/setup.h"

/* The append-only tables (db/migrations/001_init.sql triggers). */
static const char *const append_only[] = { "ledger_postings", "transactions" };

static int
refuse(const char *fmt, ...)
{
	va_list ap;

	fputs("arps-admin: setup-db: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int
db_setup_ident_ok(const char *s)
{
	return s[0] != '\0' && strlen(s) < 64 &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(s);
}

static int
pw_ok(const char *s)
{
	return s[0] != '\0' && strlen(s) < 256 && strspn(s, "0123456789abcdef") == strlen(s);
}

/* A MariaDB host pattern these statements accept (lib/config.c checks
 * db_app_hosts the same way): no quote, no backslash, no space. */
static int
host_ok(const char *s)
{
	return s[0] != '\0' && strlen(s) < 64 &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.%_:/-") == strlen(s);
}

static int
exec_sql(MYSQL *my, const char *sql)
{
	if (mysql_query(my, sql) != 0)
		return refuse("%s", mysql_error(my)), -1;
	return 0;
}

/* Create the user if absent and set its password (the stored one, so a
 * rerun changes nothing), then drop every grant it had, unless keep: the
 * application user keeps its table grants while the pool runs (an upgrade
 * reruns setup-db under load), and grant_app then trims them exactly. */
int
db_setup_ensure_user(struct db_root *r, const char *user, const char *host,
    const char *password, int keep)
{
	MYSQL *my = (MYSQL *)r;
	char sql[4096];

	if (!db_setup_ident_ok(user) || !host_ok(host) || !pw_ok(password))
		return refuse("bad user name, host or password"), -1;

	snprintf(sql, sizeof sql, "CREATE USER IF NOT EXISTS '%s'@'%s' IDENTIFIED BY '%s'",
	    user, host, password);
	if (exec_sql(my, sql) != 0)
		return -1;
	snprintf(sql, sizeof sql, "ALTER USER '%s'@'%s' IDENTIFIED BY '%s'", user, host, password);
	if (exec_sql(my, sql) != 0)
		return -1;
	if (keep)
		return 0;
	snprintf(sql, sizeof sql, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM '%s'@'%s'", user, host);
	return exec_sql(my, sql);
}

/* A REVOKE that finds nothing to revoke is not an error here. */
static int
revoke_quiet(MYSQL *my, const char *sql)
{
	if (mysql_query(my, sql) == 0)
		return 0;
	if (mysql_errno(my) == 1141 || mysql_errno(my) == 1147)	/* no such grant */
		return 0;
	return refuse("%s", mysql_error(my)), -1;
}

static int
is_append_only(MYSQL *my, const char *db, const char *table)
{
	char sql[4096];
	MYSQL_RES *res;
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof append_only / sizeof append_only[0]; i++)
		if (strcmp(append_only[i], table) == 0)
			return 1;
	/* Any table a migration made append-only the same way. */
	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM information_schema.triggers WHERE "
	    "event_object_schema = '%s' AND event_object_table = '%s' AND "
	    "(trigger_name LIKE '%%\\_no\\_update' OR trigger_name LIKE '%%\\_no\\_delete')", db, table);
	if (mysql_query(my, sql) == 0 && (res = mysql_store_result(my)) != NULL) {
		MYSQL_ROW row = mysql_fetch_row(res);
		n = row != NULL && row[0] != NULL ? atoi(row[0]) : 0;
		mysql_free_result(res);
	}
	return n > 0;
}

/* arps_app: rows only, table by table. */
int
db_setup_grant_app(struct db_root *r, const char *db, const char *host, int *ntables)
{
	MYSQL *my = (MYSQL *)r;
	char sql[4096], (*tables)[64] = NULL;
	size_t n = 0, i;
	MYSQL_RES *res;
	MYSQL_ROW row;
	int rc = 0;

	if (!host_ok(host))
		return refuse("bad host pattern"), -1;
	snprintf(sql, sizeof sql, "SELECT table_name FROM information_schema.tables WHERE "
	    "table_schema = '%s' AND table_type = 'BASE TABLE' ORDER BY table_name", db);
	if (exec_sql(my, sql) != 0 || (res = mysql_store_result(my)) == NULL)
		return refuse("listing tables: %s", mysql_error(my)), -1;
	if ((tables = calloc(mysql_num_rows(res) + 1, sizeof *tables)) == NULL) {
		mysql_free_result(res);
		return refuse("out of memory"), -1;
	}
	while ((row = mysql_fetch_row(res)) != NULL)
		if (row[0] != NULL && db_setup_ident_ok(row[0]))
			snprintf(tables[n++], sizeof tables[0], "%s", row[0]);
	mysql_free_result(res);
	/* No global or database-wide privilege, whatever was there before. */
	snprintf(sql, sizeof sql, "REVOKE ALL PRIVILEGES ON *.* FROM '" SETUP_APP_USER "'@'%s'", host);
	rc = revoke_quiet(my, sql);
	snprintf(sql, sizeof sql, "REVOKE GRANT OPTION ON *.* FROM '" SETUP_APP_USER "'@'%s'", host);
	if (rc == 0)
		rc = revoke_quiet(my, sql);
	snprintf(sql, sizeof sql, "REVOKE ALL PRIVILEGES ON `%s`.* FROM '"
	    SETUP_APP_USER "'@'%s'", db, host);
	if (rc == 0)
		rc = revoke_quiet(my, sql);
	snprintf(sql, sizeof sql, "REVOKE GRANT OPTION ON `%s`.* FROM '"
	    SETUP_APP_USER "'@'%s'", db, host);
	if (rc == 0)
		rc = revoke_quiet(my, sql);
	for (i = 0; i < n && rc == 0; i++) {
		static const char never[] = "CREATE, DROP, REFERENCES, INDEX, ALTER, CREATE VIEW, "
		    "SHOW VIEW, TRIGGER, DELETE HISTORY, GRANT OPTION";
		const char *privs = "SELECT, INSERT, UPDATE, DELETE", *deny = "";

		if (strcmp(tables[i], "schema_version") == 0) {
			privs = "SELECT";
			deny = "INSERT, UPDATE, DELETE, ";
		} else if (is_append_only(my, db, tables[i])) {
			privs = "SELECT, INSERT";
			deny = "UPDATE, DELETE, ";
		}
		/* Grant first, then revoke the rest: never a moment without. */
		snprintf(sql, sizeof sql, "GRANT %s ON `%s`.`%s` TO '" SETUP_APP_USER "'@'%s'",
		    privs, db, tables[i], host);
		if ((rc = exec_sql(my, sql)) != 0)
			break;
		snprintf(sql, sizeof sql, "REVOKE %s%s ON `%s`.`%s` FROM '" SETUP_APP_USER "'@'%s'",
		    deny, never, db, tables[i], host);
		rc = revoke_quiet(my, sql);
	}
	free(tables);
	*ntables = (int)n;
	return rc;
}

struct db_root *
db_setup_root_open(const char *socket)
{
	MYSQL *my;

	if ((my = mysql_init(NULL)) == NULL) {
		refuse("out of memory");
		return NULL;
	}
	mysql_options(my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (mysql_real_connect(my, NULL, "root", NULL, NULL, 0, socket, 0) == NULL) {
		refuse("cannot connect as root over %s: %s", socket, mysql_error(my));
		mysql_close(my);
		return NULL;
	}
	return (struct db_root *)my;
}

void
db_setup_root_close(struct db_root *r)
{
	if (r != NULL)
		mysql_close((MYSQL *)r);
}

int
db_setup_database(struct db_root *r, const char *db)
{
	char sql[512];

	if (!db_setup_ident_ok(db))
		return refuse("db_name must be letters, digits and _: %s", db), -1;
	snprintf(sql, sizeof sql, "CREATE DATABASE IF NOT EXISTS `%s` "
	    "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", db);
	return exec_sql((MYSQL *)r, sql);
}

int
db_setup_grant_migrate(struct db_root *r, const char *db, const char *host)
{
	char sql[512];

	if (!db_setup_ident_ok(db) || !host_ok(host))
		return refuse("bad database name or host pattern"), -1;
	/* DDL and its data for migrate; no GRANT OPTION. */
	snprintf(sql, sizeof sql, "GRANT ALL PRIVILEGES ON `%s`.* TO '" SETUP_MIGRATE_USER
	    "'@'%s'", db, host);
	return exec_sql((MYSQL *)r, sql);
}

int
db_setup_grant_backup(struct db_root *r, const char *db)
{
	char sql[512];

	if (!db_setup_ident_ok(db))
		return refuse("bad database name"), -1;
	/* What mariadb-dump --single-transaction --triggers needs. */
	snprintf(sql, sizeof sql, "GRANT SELECT, LOCK TABLES, SHOW VIEW, TRIGGER, EVENT ON `%s`.* TO '"
	    SETUP_BACKUP_USER "'@'localhost'", db);
	return exec_sql((MYSQL *)r, sql);
}
