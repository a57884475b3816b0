/* The statements of `arps-admin setup-db`, as MariaDB's root (see setup.c).
 * Return convention: 0, or -1 with the reason on stderr. */
#ifndef ARPS_DB_SETUP_H
#define ARPS_DB_SETUP_H

#define SETUP_APP_USER     "arps_app"
#define SETUP_MIGRATE_USER "arps_migrate"
#define SETUP_BACKUP_USER  "arps_backup"

/* A root connection (a MYSQL handle; no prepared statements: DDL). */
struct db_root;

/* Whether s is an identifier these statements accept: [A-Za-z0-9_]{1,63}. */
int db_setup_ident_ok(const char *s);

/* Connect as root over the unix socket; NULL with the reason on stderr. */
struct db_root *db_setup_root_open(const char *socket);
void db_setup_root_close(struct db_root *r);

/* CREATE DATABASE IF NOT EXISTS db, utf8mb4 binary. */
int db_setup_database(struct db_root *r, const char *db);

/* Create user@host if absent and set its password (hex), then drop every
 * grant it had unless keep.  host: localhost or a MariaDB host pattern of
 * [A-Za-z0-9.%_:/-] (refused otherwise). */
int db_setup_ensure_user(struct db_root *r, const char *user, const char *host,
    const char *password, int keep);

/* arps_migrate@host: every privilege on db but GRANT OPTION. */
int db_setup_grant_migrate(struct db_root *r, const char *db, const char *host);

/* arps_backup: what mariadb-dump --single-transaction --triggers needs. */
int db_setup_grant_backup(struct db_root *r, const char *db);

/* arps_app@host: row access table by table, the append-only tables SELECT and
 * INSERT only, schema_version SELECT only, no DDL; *ntables the count. */
int db_setup_grant_app(struct db_root *r, const char *db, const char *host, int *ntables);

#endif
