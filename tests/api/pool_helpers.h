/* The pool's master and workers, for the API suites that reload or
 * count them. */
#ifndef ARPS_TESTS_API_POOL_HELPERS_H
#define ARPS_TESTS_API_POOL_HELPERS_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/api/client.h"

/* The pid in $ARPS_VAR/run/name, -1 when none. */
static inline int
read_pid(const char *name)
{
	char path[1024];
	FILE *f;
	int pid = -1;

	snprintf(path, sizeof path, "%s/run/%s", getenv("ARPS_VAR"), name);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = -1;
		fclose(f);
	}
	return pid;
}

/* Whether pid has exited (gone, or a zombie not yet reaped). */
static inline int
pid_exited(int pid)
{
	char path[64], st = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fscanf(f, "%*d (%*[^)]) %c", &st) != 1)
		st = 0;
	fclose(f);
	return st == 'Z' || st == 'X';
}

/* The worker pids, children of the master. */
static inline int
workers(int master, int *out, int max)
{
	char cmd[128];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof cmd, "pgrep -P %d", master);
	if ((p = popen(cmd, "r")) == NULL)
		return 0;
	while (n < max && fscanf(p, "%d", &out[n]) == 1)
		n++;
	pclose(p);
	return n;
}

/* The workers of the stack's pool (the master of run/arps-fcgi.pid);
 * returns how many (0 when no pool). */
static inline int
pool_workers(int *out, int max)
{
	int master = read_pid("arps-fcgi.pid");

	return master > 0 ? workers(master, out, max) : 0;
}

/* The pool's configured worker count: the last `workers = N` line of
 * $ARPS_CONFIG (a test may have appended one), -1 when none. */
static inline int
conf_workers(void)
{
	char line[256];
	FILE *f = fopen(getenv("ARPS_CONFIG"), "r");
	int n = -1, v;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "workers = %d", &v) == 1)
			n = v;
	fclose(f);
	return n;
}

/* Waits (up to 15 s) until the master runs its configured number of
 * workers, whose pids go to out; returns how many it runs. */
static inline int
workers_whole(int master, int *out, int max)
{
	int want = conf_workers(), n = 0, i;

	for (i = 0; i < 150; i++) {
		if ((n = workers(master, out, max)) == want)
			break;
		usleep(100000);
	}
	return n;
}

/* After a reload: waits until no worker of before[] is left and nb run. */
static inline void
workers_replaced(int master, const int *before, int nb)
{
	int after[64], na = 0, same = 0, i, j, k;

	for (i = 0; i < 100; i++) {
		na = workers(master, after, 64);
		for (j = 0, same = 0; j < na; j++)
			for (k = 0; k < nb; k++)
				same += after[j] == before[k];
		if (na == nb && same == 0)
			break;
		usleep(100000);
	}
	assert_int_equal(na, nb);
	assert_int_equal(same, 0);
}


/* SIGHUP after appending `line` (NULL: the saved original back) to the
 * config: waits until no worker of before[] is left and nb are running. */
static inline void
pool_reload_with(int master, const char *line, const int *before, int nb)
{
	const char *conf = getenv("ARPS_CONFIG");

	if (line != NULL)
		assert_int_equal(sh("cp %s %s.wd && echo '%s' >> %s", conf, conf, line, conf), 0);
	else
		assert_int_equal(sh("mv %s.wd %s", conf, conf), 0);
	assert_int_equal(kill(master, SIGHUP), 0);
	workers_replaced(master, before, nb);
}

#endif
