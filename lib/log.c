#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

static const char *logprog = "arps";

void
log_init(const char *prog)
{
	logprog = prog;
}

void
log_msg(const char *fmt, ...)
{
	char line[2048], ts[32];
	struct tm tm;
	time_t now = time(NULL);
	va_list ap;
	int n;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof line, "%s %s[%d]: ", ts, logprog, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof line)
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line so lines from several workers never interleave. */
	n = (int)strlen(line);
	if (n < (int)sizeof line - 1)
		line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
