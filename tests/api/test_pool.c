/* The prefork pool (fcgi/pool.c, design.md §1.2): a worker killed under
 * load is respawned, workers are recycled, a failed fork is retried, SIGHUP
 * reloads the configuration, request lines and the request watchdog,
 * SIGTERM finishes the request in flight, the master killed takes its
 * workers along, an answer cut by a dying worker is not left hanging, and
 * the socket systemd hands over on fd 0. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <fcntl.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "tests/api/flows.h"
#include "tests/api/pool_helpers.h"

/* --- load while a worker is killed --- */

struct load {
	volatile int stop;
	int ok, fail;
	pthread_mutex_t mu;
};

static void *
loader(void *arg)
{
	struct load *l = arg;

	while (!l->stop) {
		struct resp r = http_get("/api/v1/health", NULL);
		pthread_mutex_lock(&l->mu);
		if (r.status == 200)
			l->ok++;
		else
			l->fail++;
		pthread_mutex_unlock(&l->mu);
		resp_free(&r);
	}
	return NULL;
}

/* Wait up to secs seconds for GET /health to answer 200; asserts it does. */
static void
health_within(int secs)
{
	struct resp r;
	int i;

	for (i = 0; i < secs * 10; i++) {
		r = http_get("/api/v1/health", NULL);
		if (r.status == 200) {
			resp_free(&r);
			return;
		}
		resp_free(&r);
		usleep(100000);
	}
	fail_msg("the pool did not answer /health within %d s", secs);
}

static void
worker_killed_under_load(void **state)
{
	int master = read_pid("arps-fcgi.pid"), before[64], after[64], nb, na, i, j, tries;
	pthread_t th[8];
	struct load l;

	(void)state;
	assert_true(master > 0);
	nb = workers(master, before, 64);
	assert_true(nb >= 2);
	memset(&l, 0, sizeof l);
	pthread_mutex_init(&l.mu, NULL);
	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, loader, &l);
	usleep(300000);
	/* under load a worker may have been recycled at max_requests since
	 * the listing: kill one that is alive now */
	for (tries = 0; tries < 20; tries++) {
		nb = workers(master, before, 64);
		if (nb >= 2 && kill(before[0], SIGKILL) == 0)
			break;
		usleep(20000);
	}
	assert_true(tries < 20);
	/* The master respawns it: the configured number of workers (one
	 * recycled under the load may have been away when nb was counted),
	 * the killed pid gone. */
	nb = conf_workers();
	for (tries = 0; tries < 50; tries++) {
		usleep(100000);
		na = workers(master, after, 64);
		if (na == nb) {
			for (j = 0; j < na && after[j] != before[0]; j++)
				;
			if (j == na)
				break;
		}
	}
	assert_int_equal(na, nb);
	for (j = 0; j < na; j++)
		assert_int_not_equal(after[j], before[0]);
	usleep(200000);
	l.stop = 1;
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	assert_true(l.ok > 0);
	/* Every later request succeeds. */
	memset(&l, 0, sizeof l);
	for (i = 0; i < 200; i++) {
		struct resp r = http_get("/api/v1/health", NULL);
		if (r.status == 200)
			l.ok++;
		resp_free(&r);
	}
	assert_int_equal(l.ok, 200);
}

/* max_requests = 1000 in the dev configuration, 4 workers: 4400 requests
 * make at least one worker serve its 1000th and be replaced. */
static void
workers_recycled(void **state)
{
	int master = read_pid("arps-fcgi.pid"), before[64], after[64], nb, na, i, j, ok = 0, gone = 0;

	(void)state;
	/* from a whole pool: the suite's earlier tests kill and recycle
	 * workers, and a respawn may still be under way */
	nb = workers_whole(master, before, 64);
	assert_int_equal(nb, conf_workers());
	for (i = 0; i < 4400; i++) {
		struct resp r = http_get("/api/v1/health", NULL);
		if (r.status == 200)
			ok++;
		resp_free(&r);
	}
	assert_int_equal(ok, 4400);
	/* a worker recycled at the very end is respawned shortly (slower
	 * under ASan and load: the master refreshes its index of open
	 * studies before each fork): wait for the pool to be whole again */
	for (i = 0; i < 150; i++) {
		usleep(100000);
		if ((na = workers(master, after, 64)) == nb)
			break;
	}
	assert_int_equal(na, nb);
	for (i = 0; i < nb; i++) {
		for (j = 0; j < na && after[j] != before[i]; j++)
			;
		if (j == na)
			gone++;
	}
	assert_true(gone >= 1);
}

/*
 * A fork that fails leaves no slot empty for good: the master tries the
 * slot again at least every second.  The fork is made to fail by the
 * cgroup v1 pids controller (as root, RLIMIT_NPROC would not stop it):
 * the master alone in a cgroup of pids.max 1, a worker killed, its
 * respawn refused (EAGAIN); then pids.max lifted, and the pool must be
 * whole again within 5 s without any signal from outside.
 */
#define PIDS_CG	"/sys/fs/cgroup/pids"
static char cg[640], cg_home[512];	/* the test's cgroup; the master's own */

/* Teardown, also after a failed assertion: every task of the test's
 * cgroup (the master, a worker it forked there) back in the root, then
 * the cgroup removed (a fork in between lands in it: tried again). */
static int
cgroup_back(void **state)
{
	int i;

	(void)state;
	for (i = 0; cg[0] != '\0' && access(cg, F_OK) == 0 && i < 5; i++)
		(void)sh("for p in $(cat %s/cgroup.procs); do echo $p > %s/cgroup.procs;"
		    " done; rmdir %s 2>/dev/null", cg, cg_home, cg);
	if (cg[0] != '\0' && access(cg, F_OK) == 0) {
		/* at least let the pool fork again */
		(void)sh("echo max > %s/pids.max", cg);
		print_error("fork_failure_retried: could not remove %s\n", cg);
	}
	return 0;
}

static void
fork_failure_retried(void **state)
{
	int master = read_pid("arps-fcgi.pid"), before[64], after[64], nb, na = 0, i;
	char procs[640];

	(void)state;
	/* the test's cgroup is a child of the master's own pids cgroup, and
	 * the teardown puts every task back there */
	{
		char path[64], line[512];
		FILE *f;

		cg_home[0] = '\0';
		snprintf(path, sizeof path, "/proc/%d/cgroup", master);
		if ((f = fopen(path, "r")) != NULL) {
			while (fgets(line, sizeof line, f) != NULL) {
				char *c = strstr(line, ":pids:");

				if (c != NULL) {
					c[strcspn(c, "\n")] = '\0';
					snprintf(cg_home, sizeof cg_home, PIDS_CG "%s",
					    strcmp(c + 6, "/") == 0 ? "" : c + 6);
				}
			}
			fclose(f);
		}
	}
	snprintf(procs, sizeof procs, "%s/cgroup.procs", cg_home);
	snprintf(cg, sizeof cg, "%s/arps-test-%d", cg_home, (int)getpid());
	if (cg_home[0] == '\0' || access(procs, W_OK) != 0 || sh("mkdir -p %s", cg) != 0) {
		cg[0] = '\0';
		print_message("no writable cgroup v1 pids controller at " PIDS_CG
		    ": fork_failure_retried not run\n");
		skip();
	}
	nb = workers_whole(master, before, 64);	/* no respawn under way */
	assert_true(nb >= 2);
	assert_int_equal(nb, conf_workers());
	assert_int_equal(sh("echo 1 > %s/pids.max && echo %d > %s/cgroup.procs", cg, master, cg), 0);
	assert_int_equal(kill(before[0], SIGKILL), 0);
	/* the respawn fails: one worker fewer, and it stays so */
	for (i = 0; i < 30; i++) {
		usleep(100000);
		if ((na = workers(master, after, 64)) == nb - 1)
			break;
	}
	assert_int_equal(na, nb - 1);
	sleep(2);
	assert_int_equal(workers(master, after, 64), nb - 1);
	assert_int_equal(sh("grep -q 'master: fork: Resource temporarily unavailable' %s/log/arps.log",
	    getenv("ARPS_VAR")), 0);
	/* forks allowed again: the slot is filled by the master's own retry */
	assert_int_equal(sh("echo max > %s/pids.max", cg), 0);
	for (i = 0; i < 50; i++) {
		usleep(100000);
		if ((na = workers(master, after, 64)) == nb)
			break;
	}
	assert_int_equal(na, nb);
	for (i = 0; i < 20; i++) {
		struct resp r = http_get("/api/v1/health", NULL);

		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
}

struct inflight {
	const char *hdr;
	struct resp r;
};

static void *
slow_patch(void *arg)
{
	struct inflight *f = arg;

	f->r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":\"Patient\"}", HDRS(f->hdr), NULL);
	return NULL;
}

/* The signup bonus a fresh claimed agent gets, from its wallet. */
static long long
claim_bonus(void)
{
	struct test_agent a;
	struct test_user u;
	struct resp r;
	long long v;

	agent_claimed(&a, &u, "Reload probe");
	r = http_get("/api/v1/wallet/balance", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	v = jint(&r, "available_cents");
	resp_free(&r);
	return v;
}

/* SIGHUP: a file that does not load changes nothing; one that loads
 * replaces every worker with the new values, the pid of the master kept. */
static void
config_reload(void **state)
{
	const char *conf = getenv("ARPS_CONFIG");
	int master = read_pid("arps-fcgi.pid"), i, before[64], after[64], nb, na;
	long long bonus = 0;
	struct resp r;

	(void)state;
	assert_true(master > 0);
	assert_int_equal(claim_bonus(), 100);
	nb = workers(master, before, 64);
	assert_true(nb > 0);
	/* a broken file: refused, logged, the pool goes on as it was */
	assert_int_equal(sh("cp %s %s.orig && echo 'workers = 0' >> %s", conf, conf, conf), 0);
	assert_int_equal(kill(master, SIGHUP), 0);
	for (i = 0; i < 50 && sh("grep -q 'reload refused' %s/log/arps.log", getenv("ARPS_VAR")) != 0; i++)
		usleep(100000);
	assert_int_equal(sh("grep -q 'reload refused.*workers' %s/log/arps.log", getenv("ARPS_VAR")), 0);
	r = http_get("/api/v1/health", NULL);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	na = workers(master, after, 64);
	assert_int_equal(na, nb);
	/* a good file: new workers, new values */
	assert_int_equal(sh("cp %s.orig %s && echo 'signup_bonus_cents = 250' >> %s", conf, conf, conf), 0);
	assert_int_equal(kill(master, SIGHUP), 0);
	workers_replaced(master, before, nb);
	assert_int_equal(read_pid("arps-fcgi.pid"), master);
	assert_int_equal(claim_bonus(), 250);
	/* fewer workers, then more again: every slot is filled */
	assert_int_equal(sh("cp %s.orig %s && echo 'workers = 2' >> %s", conf, conf, conf), 0);
	assert_int_equal(kill(master, SIGHUP), 0);
	for (i = 0; i < 50 && (na = workers(master, after, 64)) != 2; i++)
		usleep(100000);
	assert_int_equal(na, 2);
	assert_int_equal(sh("cp %s.orig %s && echo 'workers = 3' >> %s", conf, conf, conf), 0);
	assert_int_equal(kill(master, SIGHUP), 0);
	for (i = 0; i < 50 && (na = workers(master, after, 64)) != 3; i++)
		usleep(100000);
	assert_int_equal(na, 3);
	r = http_get("/api/v1/health", NULL);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	/* and back */
	assert_int_equal(sh("mv %s.orig %s", conf, conf), 0);
	assert_int_equal(kill(master, SIGHUP), 0);
	for (i = 0; i < 50 && (bonus = claim_bonus()) != 100; i++)
		usleep(100000);
	assert_int_equal(bonus, 100);
	for (i = 0; i < 50 && (na = workers(master, after, 64)) != nb; i++)
		usleep(100000);
	assert_int_equal(na, nb);
}


/* design.md §15.2: a worker logs a request answered 2xx only under
 * log_requests = true (default false: nginx's access log has it), with the
 * id the answer carries in X-Request-Id. */
static void
request_lines(void **state)
{
	int master = read_pid("arps-fcgi.pid"), before[64], nb;
	const char *var = getenv("ARPS_VAR");
	char quiet[128], logged[128];
	struct test_agent a;
	struct resp r;

	(void)state;
	agent_new(&a, "Logged");
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_non_null(resp_header(&r, "X-Request-Id", quiet, sizeof quiet));
	resp_free(&r);
	nb = workers(master, before, 64);
	pool_reload_with(master, "log_requests = true", before, nb);
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_non_null(resp_header(&r, "X-Request-Id", logged, sizeof logged));
	resp_free(&r);
	/* the worker writes its line after the answer */
	assert_int_equal(sh_until(30, "grep -q '%s GET /api/v1/agents/me 200 [0-9]*us' "
	    "%s/log/arps.log", logged, var), 0);
	assert_int_not_equal(sh("grep -q '%s' %s/log/arps.log", quiet, var), 0);
	/* nginx's access log has both, with their ids */
	assert_int_equal(sh("grep -q 'id=%s' %s/log/nginx-access.log && grep -q 'id=%s' "
	    "%s/log/nginx-access.log", quiet, var, logged, var), 0);
	nb = workers(master, before, 64);
	pool_reload_with(master, NULL, before, nb);
}

/* design.md §1.2: a request that runs past `request_watchdog` seconds ends
 * its worker; the client gets 503, the master respawns the worker, the
 * request's transaction is rolled back, and the pool serves on.  The
 * request is held by a row lock another session keeps for 6 s, under a
 * watchdog of 2 s (the database's own deadline is 30 s, so without the
 * watchdog the request would answer 200 when the lock goes). */
static void
request_watchdog(void **state)
{
	int master = read_pid("arps-fcgi.pid"), before[64], mid[64], nb, i;
	struct test_agent a;
	struct timespec t0, t1;
	struct resp r;
	double secs;

	(void)state;
	assert_true(master > 0);
	nb = workers(master, before, 64);
	assert_true(nb > 0);
	pool_reload_with(master, "request_watchdog = 2", before, nb);
	workers(master, mid, 64);
	agent_new(&a, "Watched");
	assert_int_equal(sh("(mariadb --no-defaults -S %s/run/mysqld.sock -u \"$(id -un)\" arps -e "
	    "\"START TRANSACTION; SELECT id FROM agents WHERE id = '%s' FOR UPDATE; SELECT SLEEP(6);"
	    " COMMIT;\" >/dev/null &)", getenv("ARPS_VAR"), a.id), 0);
	usleep(500000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":\"Never\"}", HDRS(a.hdr), NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "pool: PATCH held by a row lock: %ld after %.2f s\n", r.status, secs);
	assert_error(&r, 503, "SERVICE_UNAVAILABLE");
	resp_free(&r);
	/* the watchdog, not the lock's end (5.5 s from here) or a deadline */
	assert_true(secs >= 1.5 && secs < 5.0);
	/* the master signals the worker first, then writes its line */
	assert_int_equal(sh_until(30, "grep 'ran past the request watchdog (2 s' %s/log/arps.log |"
	    " grep -q 'request [^ ]* PATCH /api/v1/agents/me'", getenv("ARPS_VAR")), 0);
	/* the master logs the exit when it reaps the worker, which may come
	 * after nginx has answered the 503 on a loaded machine */
	for (i = 0; i < 50 && sh("grep -q 'worker [0-9]* exited 70, respawning' %s/log/arps.log",
	    getenv("ARPS_VAR")) != 0; i++)
		usleep(100000);
	assert_int_equal(sh("grep -q 'worker [0-9]* exited 70, respawning' %s/log/arps.log",
	    getenv("ARPS_VAR")), 0);
	/* the master's line names the worker it ended, the one it reaps */
	assert_int_equal(sh("l=%s/log/arps.log; w=$(grep 'ran past the request watchdog (2 s' $l |"
	    " grep 'PATCH /api/v1/agents/me' | tail -1 |"
	    " sed -n 's/.*master: worker \\([0-9]*\\): request .*/\\1/p');"
	    " [ -n \"$w\" ] && grep -q \"master: worker $w exited 70, respawning\" $l",
	    getenv("ARPS_VAR")), 0);
	/* the master kept, the worker replaced */
	assert_int_equal(read_pid("arps-fcgi.pid"), master);
	for (i = 0; i < 50 && workers(master, before, 64) != nb; i++)
		usleep(100000);
	assert_int_equal(workers(master, before, 64), nb);
	/* once the lock is gone: nothing of the killed request was written,
	 * and the same change goes through */
	sleep(6);
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "name"), "Watched");
	resp_free(&r);
	r = http_req("PATCH", "/api/v1/agents/me", "{\"name\":\"Later\"}", HDRS(a.hdr), NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(jstr(&r, "name"), "Later");
	resp_free(&r);
	nb = workers(master, before, 64);
	pool_reload_with(master, NULL, before, nb);
}

/* SIGTERM: the pool stops accepting but finishes the request in flight.
 * The request is held in flight by a row lock another session keeps for
 * 3 seconds.  Runs last: it stops the pool and starts it again. */
static void
sigterm_finishes_in_flight(void **state)
{
	int master = read_pid("arps-fcgi.pid"), i;
	struct test_agent a;
	struct inflight f;
	pthread_t th;
	struct resp r;

	(void)state;
	agent_new(&a, "Graceful");
	assert_int_equal(sh("(mariadb --no-defaults -S %s/run/mysqld.sock -u \"$(id -un)\" arps -e "
	    "\"START TRANSACTION; SELECT id FROM agents WHERE id = '%s' FOR UPDATE; SELECT SLEEP(3);"
	    " COMMIT;\" >/dev/null &)", getenv("ARPS_VAR"), a.id), 0);
	usleep(500000);
	memset(&f, 0, sizeof f);
	f.hdr = a.hdr;
	pthread_create(&th, NULL, slow_patch, &f);
	usleep(500000);
	assert_int_equal(kill(master, SIGTERM), 0);
	pthread_join(th, NULL);
	assert_int_equal(f.r.status, 200);
	assert_string_equal(jstr(&f.r, "name"), "Patient");
	resp_free(&f.r);
	for (i = 0; i < 100 && kill(master, 0) == 0; i++)
		usleep(100000);
	assert_int_not_equal(kill(master, 0), 0);
	/* no pool: nginx answers 503 with the error body */
	r = http_get("/api/v1/health", NULL);
	assert_error(&r, 503, "SERVICE_UNAVAILABLE");
	resp_free(&r);
	assert_int_equal(sh("%s/tools/dev.sh pool-start", getenv("ARPS_ROOT")), 0);
	health_within(5);
}

/*
 * The master killed outright (design.md §1.2): its workers end too (the
 * kernel's parent-death signal, a SIGTERM), so nothing goes on answering
 * without the master's watchdog, respawn and recycling; nginx then
 * answers 503 until a new pool starts.
 */
static void
master_killed_workers_end(void **state)
{
	int master = read_pid("arps-fcgi.pid"), before[64], nb, i, j, left = 0;
	struct resp r;

	(void)state;
	assert_true(master > 0);
	nb = workers(master, before, 64);
	assert_true(nb > 0);
	assert_int_equal(kill(master, SIGKILL), 0);
	for (i = 0; i < 50; i++) {
		for (j = 0, left = 0; j < nb; j++)
			left += !pid_exited(before[j]);
		if (left == 0)
			break;
		usleep(100000);
	}
	assert_int_equal(left, 0);
	r = http_get("/api/v1/health", NULL);
	assert_error(&r, 503, "SERVICE_UNAVAILABLE");
	resp_free(&r);
	assert_int_equal(sh("%s/tools/dev.sh pool-start", getenv("ARPS_ROOT")), 0);
	health_within(5);
}

/* SIGTERM to the master; waits (up to 10 s) until it is gone, asserts so. */
static void
master_stopped(int master)
{
	int i;

	assert_int_equal(kill(master, SIGTERM), 0);
	for (i = 0; i < 100 && kill(master, 0) == 0; i++)
		usleep(100000);
	assert_int_not_equal(kill(master, 0), 0);
}

/* A Unix socket listening at path (any file there replaced), mode 0666 as
 * systemd's arps-fcgi.socket makes it; its descriptor. */
static int
listen_at(const char *path, int backlog)
{
	struct sockaddr_un sa;
	int fd;

	unlink(path);
	assert_true((fd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	assert_true(strlen(path) < sizeof sa.sun_path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(listen(fd, backlog), 0);
	return fd;
}

/* The pool's socket file, gone (a test's stand-in may have left it). */
static void
unlink_sock(void)
{
	char path[512];

	snprintf(path, sizeof path, "%s/run/arps.sock", getenv("ARPS_VAR"));
	unlink(path);
}

/* Reads exactly n bytes; 0 when they came. */
static int
read_n(int fd, unsigned char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		if ((r = read(fd, p, n)) <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A FastCGI upstream that dies in the middle of its answer: it reads one
 * request (through its empty STDIN record), sends a head announcing 20,000
 * bytes and 8,000 of them, and closes without END_REQUEST. */
static void *
dying_upstream(void *arg)
{
	static const char head[] = "Status: 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 20000\r\n\r\n";
	unsigned char h[8], rec[8 + sizeof head - 1 + 8000], skip[65535 + 255];
	int ls = *(int *)arg, c;
	size_t len;

	if ((c = accept(ls, NULL, NULL)) < 0)
		return NULL;
	for (;;) {
		if (read_n(c, h, 8) != 0)
			break;
		len = ((size_t)h[4] << 8 | h[5]) + h[6];
		if (read_n(c, skip, len) != 0 || (h[1] == 5 && h[4] == 0 && h[5] == 0))
			break;	/* the empty STDIN record ends the request */
	}
	len = sizeof head - 1 + 8000;
	rec[0] = 1;
	rec[1] = 6;			/* FCGI_STDOUT */
	rec[2] = h[2];
	rec[3] = h[3];			/* the request's id */
	rec[4] = (unsigned char)(len >> 8);
	rec[5] = (unsigned char)(len & 0xff);
	rec[6] = rec[7] = 0;
	memcpy(rec + 8, head, sizeof head - 1);
	memset(rec + 8 + sizeof head - 1, 'x', 8000);
	if (write(c, rec, 8 + len) < 0)
		print_error("dying_upstream: write failed\n");
	close(c);
	return NULL;
}

/* A worker killed in the middle of an answer (nginx/arps-api.inc): nginx
 * must not pass the head and part of the body on as if complete, keeping
 * the client's connection open for bytes that never come (the client then
 * waits until its own time-out, 60 s here): the client's connection is
 * closed at once and the client sees a broken answer it can retry. */
static void
cut_answer_not_hung(void **state)
{
	const char *var = getenv("ARPS_VAR");
	int master = read_pid("arps-fcgi.pid"), ls;
	struct timespec t0, t1;
	pthread_t th;
	struct resp r;
	char path[512];
	double secs;

	(void)state;
	assert_true(master > 0);
	master_stopped(master);
	snprintf(path, sizeof path, "%s/run/arps.sock", var);
	ls = listen_at(path, 8);
	assert_int_equal(pthread_create(&th, NULL, dying_upstream, &ls), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = http_get("/api/v1/health", NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(th, NULL);
	close(ls);
	unlink(path);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "pool: an answer cut by its worker's death: HTTP %ld, %zu body bytes,"
	    " after %.2f s\n", r.status, r.len, secs);
	/* a transport error (curl: the transfer closed with bytes missing) */
	assert_int_equal(r.status, 0);
	assert_true(r.len < 20000);
	assert_true(secs < 10.0);
	resp_free(&r);
	assert_int_equal(sh("grep -q 'upstream prematurely closed connection while reading upstream'"
	    " %s/log/nginx-error.log", var), 0);
	/* the dev pool again */
	assert_int_equal(sh("%s/tools/dev.sh pool-start", getenv("ARPS_ROOT")), 0);
	health_within(5);
}

/* Whatever failed in cut_answer_not_hung: the dev pool serves again. */
static int
pool_back(void **state)
{
	struct resp r;
	long st;

	(void)state;
	r = http_get("/api/v1/health", NULL);
	st = r.status;
	resp_free(&r);
	if (st == 200)
		return 0;
	unlink_sock();
	return sh("%s/tools/dev.sh pool-start", getenv("ARPS_ROOT")) == 0 ? 0 : -1;
}

/* Production under systemd: the socket unit owns the listening socket and
 * hands it over on fd 0 (listen = fd0).  The pool serves on it, and leaves
 * the socket file alone when it stops (it is not the pool's). */
static void
systemd_socket_fd0(void **state)
{
	const char *var = getenv("ARPS_VAR"), *bin = getenv("ARPS_FCGI_BIN");
	int master = read_pid("arps-fcgi.pid"), sock, i, logfd;
	char path[512], conf[512], exe[512];
	struct test_agent a;
	struct resp r;
	pid_t pid;
	FILE *f;

	(void)state;
	/* stop the dev pool (it unlinks its own socket) */
	assert_true(master > 0);
	master_stopped(master);
	/* what systemd's arps-fcgi.socket does */
	snprintf(path, sizeof path, "%s/run/arps.sock", var);
	sock = listen_at(path, 128);
	snprintf(conf, sizeof conf, "%s/arps-fd0.conf", var);
	assert_int_equal(sh("sed 's|^listen = .*|listen = fd0|' %s > %s", getenv("ARPS_CONFIG"),
	    conf), 0);
	if (bin == NULL)
		bin = "build/arps-fcgi";
	snprintf(exe, sizeof exe, "%s%s%s", bin[0] == '/' ? "" : getenv("ARPS_ROOT"),
	    bin[0] == '/' ? "" : "/", bin);
	snprintf(path, sizeof path, "%s/log/arps.log", var);
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		dup2(sock, 0);
		close(sock);
		if ((logfd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644)) >= 0)
			dup2(logfd, 2);
		execl(exe, exe, "--config", conf, (char *)NULL);
		_exit(127);
	}
	close(sock);
	snprintf(path, sizeof path, "%s/run/arps-fcgi.pid", var);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "%d\n", (int)pid);
	fclose(f);
	health_within(5);
	agent_new(&a, "Socket activated");
	r = http_get("/api/v1/agents/me", HDRS(a.hdr));
	assert_int_equal(r.status, 200);
	resp_free(&r);
	/* stopped: the socket file stays, as systemd's */
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &i, 0), pid);
	assert_true(WIFEXITED(i) && WEXITSTATUS(i) == 0);
	snprintf(path, sizeof path, "%s/run/arps.sock", var);
	assert_int_equal(access(path, F_OK), 0);
	/* the dev pool again */
	assert_int_equal(sh("%s/tools/dev.sh pool-start", getenv("ARPS_ROOT")), 0);
	health_within(5);
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(worker_killed_under_load),
		cmocka_unit_test(workers_recycled),
		cmocka_unit_test_teardown(fork_failure_retried, cgroup_back),
		cmocka_unit_test(config_reload),
		cmocka_unit_test(request_lines),
		cmocka_unit_test(request_watchdog),
		cmocka_unit_test(sigterm_finishes_in_flight),
		cmocka_unit_test(master_killed_workers_end),
		cmocka_unit_test_teardown(cut_answer_not_hung, pool_back),
		cmocka_unit_test(systemd_socket_fd0),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests_name("api_pool", tests, NULL, NULL);
}
