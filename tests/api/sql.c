#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/api/client.h"
#include "tests/api/sql.h"

/* The mariadb client on the stack's socket, reading query q; NULL when it
 * could not start. */
static FILE *
sql_open(const char *q)
{
	char cmd[4096];

	snprintf(cmd, sizeof cmd, "mariadb --no-defaults -N -B -S %s/run/mysqld.sock -u \"$(id -un)\""
	    " arps -e \"%s\"", getenv("ARPS_VAR"), q);
	return popen(cmd, "r");
}

long long
sql_int(const char *fmt, ...)
{
	char q[2048], line[256];
	long long v = -1;
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(q, sizeof q, fmt, ap);
	va_end(ap);
	if ((p = sql_open(q)) == NULL)
		return -1;
	if (fgets(line, sizeof line, p) != NULL && strcmp(line, "NULL\n") != 0)
		v = strtoll(line, NULL, 10);
	while (fgets(line, sizeof line, p) != NULL)
		;
	pclose(p);
	return v;
}

const char *
sql_str(char *out, size_t n, const char *fmt, ...)
{
	char q[2048], *line = NULL;
	size_t len = 0, cap = 0;
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(q, sizeof q, fmt, ap);
	va_end(ap);
	out[0] = '\0';
	assert_non_null(p = sql_open(q));
	while (getline(&line, &cap, p) != -1) {
		line[strcspn(line, "\n")] = '\0';
		len += (size_t)snprintf(len < n ? out + len : NULL, len < n ? n - len : 0, "%s%s",
		    len ? "|" : "", line);
	}
	free(line);
	pclose(p);
	assert_true(len < n);
	return out;
}

int
wait_sql(long long want, long ms, const char *q)
{
	int64_t end = now_ms() + ms;

	do {
		if (sql_int("%s", q) == want)
			return 1;
		sleep_ms(50);
	} while (now_ms() < end);
	return 0;
}

long long
sql_statements(void)
{
	return sql_int("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
	    " WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'");
}
