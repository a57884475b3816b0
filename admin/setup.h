/*
 * arps-admin setup-db (design.md §10): the database and its three
 * least-privilege MariaDB users, their passwords written beside the config,
 * then the migrations.  Functions return the arps-admin exit status: 0 done,
 * 1 refused or failed (one line on stderr), as txn/admin.h.
 */
#ifndef ARPS_ADMIN_SETUP_H
#define ARPS_ADMIN_SETUP_H

struct config;

/*
 * As root over the MariaDB unix socket (db_socket, else the Debian default):
 * create the database and the users arps_app, arps_migrate, arps_backup;
 * write arps_app's password into the config (db_user, db_password) and the
 * other two into root-only files beside it (migrate.conf, backup.cnf);
 * migrate as arps_migrate; grant arps_app row reads and writes per table,
 * without UPDATE or DELETE on the append-only ledger tables.  Safe to run
 * twice: a password already written is kept unless rotate is set.
 */
int setup_db(const struct config *cfg, int rotate);

/*
 * Copy cfg into out with the credentials of migrate.conf (beside cfg->path)
 * when that file exists.  Returns 1 when it was used, 0 when there is none,
 * -1 when it exists but cannot be read (reason on stderr).
 */
int setup_migrate_config(const struct config *cfg, struct config *out);

#endif
