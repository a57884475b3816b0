#include <stdio.h>

#include "db/admin.h"
#include "db/db.h"
#include "lib/config.h"

int
admin_migrate(struct db *db, const struct config *cfg, char **args)
{
	(void)args;
	if (db_migrate(db, cfg->migrations_dir, 1) != DB_OK) {
		fprintf(stderr, "arps-admin: migrate failed: %s\n", db_error(db));
		return 1;
	}
	printf("schema up to date\n");
	return 0;
}
