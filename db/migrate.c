/* Migrations (design.md §14.5): the files NNN_name.sql of a folder, each
 * applied once, in order, under the migrate lease (db/lease.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "db/db.h"
#include "db/lease.h"

/* Seconds a migrator holds its lease past its last step (renewed before
 * each file); a second migrator waits up to this long for it, so one
 * killed mid-way delays the next by at most that. */
#define MIGRATE_LEASE_TTL 120

static int
namecmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else
			buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

enum db_rc
db_migrate(struct db *db, const char *dir, int verbose)
{
	static const char create[] =
	    "CREATE TABLE IF NOT EXISTS schema_version ("
	    " version INT NOT NULL PRIMARY KEY, name VARCHAR(200) NOT NULL,"
	    " applied_at BIGINT NOT NULL) ENGINE=InnoDB";
	static const char q_has[] = "SELECT COUNT(*) FROM schema_version WHERE version = ?";
	static const char q_add[] =
	    "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, UNIX_TIMESTAMP())";
	static const char create_leases[] =
	    "CREATE TABLE IF NOT EXISTS leases ("
	    " name VARCHAR(40) NOT NULL PRIMARY KEY, token BIGINT NOT NULL,"
	    " holder VARCHAR(64) NOT NULL, expires_at BIGINT NOT NULL,"
	    " beats BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB";
	char **names = NULL, path[1024];
	size_t n = 0, cap = 0, i;
	int64_t token = 0;
	enum db_rc rc;
	struct dirent *de;
	DIR *d;

	if ((rc = db_ensure(db)) != DB_OK)
		return rc;
	/* design.md §13.4: one migrator at a time, on any node, by a lease
	 * (a named lock is node-local on Galera), waited for up to its ttl. */
	if ((rc = DB_Q0(db, create, NULL, NULL)) != DB_OK ||
	    (rc = DB_Q0(db, create_leases, NULL, NULL)) != DB_OK)
		return rc;
	for (i = 0; i < 2 * MIGRATE_LEASE_TTL + 2; i++) {
		struct timespec ts = { 0, 500000000L };

		if ((rc = db_lease_take(db, LEASE_MIGRATE, MIGRATE_LEASE_TTL, &token)) != DB_OK)
			return rc;
		if (token > 0)
			break;
		nanosleep(&ts, NULL);
	}
	if (token == 0) {
		log_msg("migrate: another migration has held the lease for %d s", MIGRATE_LEASE_TTL);
		return DB_RETRY;
	}
	if ((d = opendir(dir)) == NULL) {
		log_msg("migrate: %s: %s", dir, strerror(errno));
		(void)db_lease_release(db, LEASE_MIGRATE, token);
		return DB_ERR;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 8 || strcmp(de->d_name + len - 4, ".sql") != 0 ||
		    strspn(de->d_name, "0123456789") != 3 || de->d_name[3] != '_')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *names);
			if (nn == NULL)
				break;
			names = nn;
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, namecmp);
	rc = DB_OK;
	for (i = 0; i < n && rc == DB_OK; i++) {
		int version = atoi(names[i]), held = 0;
		struct dbres *res = NULL;
		char *sql;

		if ((rc = DB_Q(db, q_has, &res, NULL, P_I64(version))) != DB_OK)
			break;
		if (dbres_i64(res, 0, DB_COL_ONLY) > 0) {
			dbres_free(res);
			continue;
		}
		dbres_free(res);
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if ((sql = slurp(path)) == NULL) {
			log_msg("migrate: cannot read %s", path);
			rc = DB_ERR;
			break;
		}
		/* still ours (a migration longer than the lease is refused) */
		if ((rc = db_lease_renew(db, LEASE_MIGRATE, token, MIGRATE_LEASE_TTL, &held)) ==
		    DB_OK && !held) {
			log_msg("migrate: the lease expired and was taken by another");
			rc = DB_ROLLBACK;
		}
		if (rc == DB_OK)
			rc = db_script(db, sql);
		free(sql);
		if (rc != DB_OK) {
			log_msg("migrate: %s failed: %s", names[i], db_error(db));
			break;
		}
		rc = DB_Q(db, q_add, NULL, NULL, P_I64(version), P_STR(names[i]));
		if (verbose && rc == DB_OK)
			printf("applied %s\n", names[i]);
	}
	(void)db_lease_release(db, LEASE_MIGRATE, token);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

