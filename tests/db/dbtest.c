/* tests/db/dbtest.h */
#include <stdio.h>

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
