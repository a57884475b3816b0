/* tests/db/dbtest.h */
#include <stdio.h>

#include "admin/setup.h"
#include "lib/secret.h"
#include "tests/db/dbtest.h"

int
dbtest_setup(struct config *cfg, struct db **db)
{
	char err[512];

	if (secret_init() != 0) {
		fprintf(stderr, "dbtest: secret_init failed\n");
		return -1;
	}
	if (config_load(cfg, config_path(0, NULL), err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (db == NULL)
		return 0;
	if ((*db = db_open(cfg)) == NULL || db_ensure(*db) != DB_OK) {
		fprintf(stderr, "dbtest: no database: %s\n", *db != NULL ? db_error(*db) : "db_open failed");
		return -1;
	}
	return 0;
}

int
dbtest_migrate_config(struct config *cfg)
{
	static struct config m;

	if (setup_migrate_config(cfg, &m) < 0)
		return -1;
	*cfg = m;
	return 0;
}
