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

#endif
