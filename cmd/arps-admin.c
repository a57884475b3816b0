/*
 * arps-admin: the operator CLI.  Exit 0 on success, 1 with a one-line
 * reason on a refused operation, 2 on usage errors (design.md 6b).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/admin.h"
#include "db/db.h"
#include "lib/config.h"
#include "lib/log.h"

static struct config cfg;

static const struct cmd {
	const char *name;
	int nargs;
	const char *usage;
	int (*fn)(struct db *, const struct config *, char **);
} cmds[] = {
	{ "migrate", 0, "migrate", admin_migrate },
};

static int
usage(void)
{
	size_t i;

	fprintf(stderr, "usage: arps-admin [--config PATH] COMMAND ...\ncommands:\n");
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(stderr, "  %s\n", cmds[i].usage);
	return 2;
}

int
main(int argc, char *argv[])
{
	char err[1024], *args[8];
	int i, n = 0, rc;
	struct db *db;
	size_t c;

	log_init("arps-admin");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0) {
			i++;
			continue;
		}
		if (n == 8)
			return usage();
		args[n++] = argv[i];
	}
	if (n == 0)
		return usage();
	for (c = 0; c < sizeof cmds / sizeof cmds[0]; c++)
		if (strcmp(cmds[c].name, args[0]) == 0)
			break;
	if (c == sizeof cmds / sizeof cmds[0] || n - 1 != cmds[c].nargs)
		return usage();
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-admin: %s\n", err);
		return 2;
	}
	if ((db = db_open(&cfg)) == NULL || db_ensure(db) != DB_OK) {
		fprintf(stderr, "arps-admin: cannot connect to the database: %s\n",
		    db ? db_error(db) : "out of memory");
		db_close(db);
		return 1;
	}
	rc = cmds[c].fn(db, &cfg, args + 1);
	db_close(db);
	return rc;
}
