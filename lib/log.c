#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"

static const char *logprog = "arps";
/* This process's pid, 0 until read (and again in a fork's child):
 * getpid() is a system call on every line otherwise (glibc keeps no copy). */
static _Atomic pid_t logpid;
static atomic_flag watched = ATOMIC_FLAG_INIT;

static void
forked(void)
{
	atomic_store(&logpid, 0);
}

void
log_init(const char *prog)
{
	logprog = prog;
	(void)log_pid();
}

pid_t
log_pid(void)
{
	pid_t p;

	if (!atomic_flag_test_and_set(&watched))
		(void)pthread_atfork(NULL, NULL, forked);
	if ((p = atomic_load(&logpid)) == 0) {
		p = getpid();
		atomic_store(&logpid, p);
	}
	return p;
}

void
log_msg(const char *fmt, ...)
{
	/* the time stamp changes once a second: formatted then (per thread,
	 * for arps-deliver's) */
	static _Thread_local char ts[32];
	static _Thread_local time_t ts_at = -1;
	char line[2048];
	time_t now = time(NULL);
	va_list ap;
	int n;

	if (now != ts_at) {
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
		ts_at = now;
	}
	n = snprintf(line, sizeof line, "%s %s[%d]: ", ts, logprog, (int)log_pid());
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
