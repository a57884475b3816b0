/* What every DB suite starts with (tests/db; linked into each). */
#ifndef ARPS_TESTS_DBTEST_H
#define ARPS_TESTS_DBTEST_H

#include "db/db.h"
#include "lib/config.h"

/*
 * libsodium and the random source (secret_init), the stack's config
 * (config_path: $ARPS_CONFIG), and when db is not NULL a connection with
 * the schema in place.  0, or -1 after saying why on stderr.
 */
int dbtest_setup(struct config *cfg, struct db **db);

/*
 * cfg's credentials become arps_migrate's (migrate.conf beside the config,
 * as `arps-admin migrate` reads them): for the suites that run migrations
 * or test the schema's own rules, which the application's user may not
 * (it has production's row grants, tools/dev.sh grant_app).  0 (also when
 * there is no migrate.conf), or -1 after saying why on stderr.
 */
int dbtest_migrate_config(struct config *cfg);

#endif
