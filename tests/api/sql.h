/* The API suites' direct look at MariaDB (the dev stack's socket under
 * $ARPS_VAR): what a test checks that no answer shows. */
#ifndef ARPS_TESTS_API_SQL_H
#define ARPS_TESTS_API_SQL_H

#include <stddef.h>

/* Run one SQL query and read the first column of its first row as an
 * integer (-1 when none). */
long long sql_int(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Every row of a query's answer, joined by '|', into out ("" when none);
 * asserts it fits.  Returns out. */
const char *sql_str(char *out, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The server's count of prepared statements executed so far
 * (COM_STMT_EXECUTE): the difference over a request is what it ran. */
long long sql_statements(void);
/* Waits up to ms milliseconds for the query q to answer want; 1 when it
 * did, 0 when not. */
int wait_sql(long long want, long ms, const char *q);

#endif
