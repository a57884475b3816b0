/*
 * arps-fixture: the test fixtures (tests/lib/fixture.h) as a command, for
 * the API suites and the benchmarks.  A test-only binary: built into
 * build/tests/, never installed, and nothing of it is linked into a daemon.
 * Usage: arps-fixture [--config PATH] VERB ARGS...; exit 0 done, 1 refused,
 * 2 usage.  Refuses unless the configuration says test_fixtures = true.
 */
#include <stdio.h>
#include <string.h>

#include "admin/setup.h"
#include "db/db.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"
#include "tests/lib/fixture.h"

int
main(int argc, char *argv[])
{
	static struct config cfg, mcfg;
	char err[1024], *args[17];
	struct db *db;
	int i, n = 0, rc;

	log_init("arps-fixture");
	if (secret_init() != 0) {
		fprintf(stderr, "arps-fixture: libsodium failed to initialise\n");
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0) {
			i++;
			continue;
		}
		if (n == 16) {
			fprintf(stderr, "arps-fixture: too many arguments\n");
			return 2;
		}
		args[n++] = argv[i];
	}
	args[n] = NULL;
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-fixture: %s\n", err);
		return 2;
	}
	if (!cfg.test_fixtures)
		return fixture_run(NULL, &cfg, args);	/* refuses before connecting */
	/* As arps_migrate when the stack has one (migrate.conf beside the
	 * config, as arps-admin migrate reads it): the seeding fixtures read
	 * MariaDB's sequence tables, beyond the row grants of the service's
	 * user (tools/dev.sh grant_app). */
	if (setup_migrate_config(&cfg, &mcfg) < 0)
		return 1;
	if ((db = db_open(&mcfg)) == NULL || db_ensure(db) != DB_OK) {
		fprintf(stderr, "arps-fixture: cannot connect to the database: %s\n",
		    db ? db_error(db) : "out of memory");
		db_close(db);
		return 1;
	}
	rc = fixture_run(db, &mcfg, args);
	db_close(db);
	return rc;
}
