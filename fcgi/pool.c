#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "db/db.h"
#include "fcgi/dispatch.h"
#include "fcgi/http.h"
#include "match/engine.h"
#include "fcgi/mcp.h"
#include "fcgi/pool.h"
#include "lib/clock.h"
#include "fcgi/reply.h"
#include "lib/config.h"
#include "lib/log.h"

#define MAXWORKERS 256

static volatile sig_atomic_t got_term, got_chld, got_hup;

/* Microseconds between the master's index refreshes, and between them
 * while it is behind. */
#define MASTER_REFRESH	2000000
#define MASTER_CATCHUP	100000

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else if (sig != SIGALRM)	/* SIGALRM only wakes the master */
		got_term = 1;
}

/*
 * The request watchdog (design.md §1.2): a request that runs past
 * request_watchdog seconds (its database work ends within 30 s,
 * design.md §9.5, so only a hang outside the database gets here) ends its
 * worker, which the master respawns; nginx answers the client 503, and
 * MariaDB rolls back whatever the request had begun and frees its
 * Idempotency-Key when the connection closes, so a retry runs anew.
 *
 * The master keeps the time: each worker has a slot in memory shared with
 * it, where the worker writes what it is doing and then when it began
 * (CLOCK_MONOTONIC), and clears the time when done: two stores a request,
 * no system call (design.md §15.2: alarm() twice a request, and formatting
 * its line in advance, were a few per cent of a request).  The master looks
 * at the slots on each wake, at least once a second, marks an overdue
 * request's slot ended, sends its worker SIGALRM, which ends it (exit 70),
 * and then logs it.
 */
struct wd_slot {
	_Atomic int64_t since;	/* began, µs; 0 between requests; WD_ENDED */
	char what[320];		/* written only while since is 0 */
};
/* The master's verdict in a slot: the worker exits (70) at its SIGALRM, or
 * at its next arm or disarm if it got past the overdue request first, so
 * the signal never ends a request that is not overdue. */
#define WD_ENDED	(-1)
static struct wd_slot *wd_slots;	/* MAXWORKERS, mapped before any fork */
static struct wd_slot *wd_mine;		/* a worker's own */

static void
on_watchdog(int sig)
{
	(void)sig;
	if (atomic_load(&wd_mine->since) == WD_ENDED)	/* lock-free: signal-safe */
		_exit(70);
}

/* The worker: `what` begins now (a request, or the deferred work after it). */
static void
watchdog_arm(int64_t now, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
watchdog_arm(int64_t now, const char *fmt, ...)
{
	va_list ap;

	/* an acquire-release exchange: `what` is written after it */
	if (atomic_exchange(&wd_mine->since, 0) == WD_ENDED)
		_exit(70);
	va_start(ap, fmt);
	vsnprintf(wd_mine->what, sizeof wd_mine->what, fmt, ap);
	va_end(ap);
	atomic_store_explicit(&wd_mine->since, now, memory_order_release);
}

static void
watchdog_disarm(void)
{
	if (atomic_exchange(&wd_mine->since, 0) == WD_ENDED)
		_exit(70);
}

/* The master: end each worker whose request is overdue at `now`; *next
 * becomes the earliest time a running request will be. */
static void
watchdog_check(const struct config *cfg, const pid_t *pids, size_t n, int64_t now,
    int64_t *next)
{
	int64_t limit = cfg->request_watchdog * 1000000, since;
	char what[sizeof wd_slots->what], at[32];
	struct tm tm;
	time_t began;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0 ||
		    (since = atomic_load_explicit(&wd_slots[i].since, memory_order_acquire)) <= 0)
			continue;
		if (now - since < limit) {
			if (since + limit < *next)
				*next = since + limit;
			continue;
		}
		memcpy(what, wd_slots[i].what, sizeof what);
		what[sizeof what - 1] = '\0';
		atomic_thread_fence(memory_order_acquire);
		/* the verdict, unless the worker moved on meanwhile (then `what`
		 * may be the next request's, which is not overdue) */
		if (!atomic_compare_exchange_strong(&wd_slots[i].since, &since, WD_ENDED))
			continue;
		kill(pids[i], SIGALRM);
		began = time(NULL) - (time_t)((now - since) / 1000000);
		gmtime_r(&began, &tm);
		strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
		log_msg("master: worker %d: %s ran past the request watchdog (%lld s, started %s),"
		    " ending it", (int)pids[i], what, (long long)cfg->request_watchdog, at);
	}
}

/* SIGALRM in usec microseconds (the timer of alarm()). */
static void
wake_in(int64_t usec)
{
	struct itimerval it = { .it_value = { .tv_sec = (time_t)(usec / 1000000),
	    .tv_usec = (suseconds_t)(usec % 1000000) } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static const char *
env(FCGX_Request *fx, const char *name)
{
	const char *v = FCGX_GetParam(name, fx->envp);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* A credential header; "" (which no credential check accepts) when the
 * request sent it twice: which one counts would be a guess, and a proxy in
 * front may have read the other (api.md §2). */
static const char *
credential(FCGX_Request *fx, const char *name)
{
	size_t nl = strlen(name);
	char **e;
	int seen = 0;

	for (e = fx->envp; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, nl) == 0 && (*e)[nl] == '=' && ++seen > 1)
			return "";
	return env(fx, name);
}

/* Read exactly CONTENT_LENGTH bytes; answers 413/400 itself on failure. */
static enum h_rc
read_body_or_reply(struct req *r, FCGX_Request *fx)
{
	const char *cl = env(fx, "CONTENT_LENGTH");
	unsigned long long n = 0;
	const char *p;
	int got;

	if (cl == NULL) {
		if (FCGX_GetChar(fx->in) != EOF)
			return reply_err(r, ARPS_E_BAD_REQUEST, "a body needs a Content-Length");
		return H_OK;
	}
	for (p = cl; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || p - cl > 18)
			return reply_err(r, ARPS_E_BAD_REQUEST, "malformed Content-Length");
		n = n * 10 + (unsigned)(*p - '0');
	}
	if (n > REQ_MAX_BODY)
		return reply_err(r, ARPS_E_PAYLOAD_TOO_LARGE,
		    "the body is larger than %d bytes", REQ_MAX_BODY);
	if ((r->body = malloc((size_t)n + 1)) == NULL)
		return reply_err(r, ARPS_E_INTERNAL, "out of memory");
	got = n ? FCGX_GetStr(r->body, (int)n, fx->in) : 0;
	if (got < 0 || (unsigned long long)got != n)
		return reply_err(r, ARPS_E_BAD_REQUEST, "the body is shorter than Content-Length");
	(void)FCGX_GetChar(fx->in);	/* the input's end: no lingering close */
	r->body[n] = '\0';
	r->blen = (size_t)n;
	return H_OK;
}

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 503: return "Service Unavailable";
	default:  return "Internal Server Error";
	}
}

/*
 * design.md §9.5: a request's database work ends within 30 s of its start
 * (every lock wait and statement, and the deadlock retries), far inside
 * the 120 s an in-flight Idempotency-Key record is honoured (db/limits.c),
 * so one key never runs twice.
 */
#define REQUEST_DB_SECONDS	30

static void
handle(FCGX_Request *fx, const struct config *cfg, struct db *db)
{
	int64_t t0 = clock_mono_us();
	struct req r;

	memset(&r, 0, sizeof r);
	db_set_deadline(db, REQUEST_DB_SECONDS);
	r.cfg = cfg;
	r.db = db;
	r.now = (int64_t)time(NULL);
	r.method = env(fx, "REQUEST_METHOD");
	r.path = env(fx, "DOCUMENT_URI");
	if (r.path == NULL)
		r.path = env(fx, "SCRIPT_NAME");
	req_set_path(&r, env(fx, "REQUEST_URI"), r.path);
	r.head = r.method != NULL && strcmp(r.method, "HEAD") == 0;
	r.query = env(fx, "QUERY_STRING");
	r.reqid = env(fx, "HTTP_X_REQUEST_ID");
	r.ip = env(fx, "HTTP_X_REAL_IP");
	if (r.ip == NULL)
		r.ip = env(fx, "REMOTE_ADDR");
	r.ctype = env(fx, "CONTENT_TYPE");
	r.apikey = credential(fx, "HTTP_X_API_KEY");
	r.authz = credential(fx, "HTTP_AUTHORIZATION");
	/* Sent empty, the key is there and invalid (422), not absent. */
	r.idem = FCGX_GetParam("HTTP_IDEMPOTENCY_KEY", fx->envp);
	r.mcp_version = env(fx, "HTTP_MCP_PROTOCOL_VERSION");
	watchdog_arm(t0, "request %s %s %.200s", r.reqid ? r.reqid : "-",
	    r.method ? r.method : "-", r.path ? r.path : "-");
	if (r.method == NULL || r.path == NULL)
		reply_err(&r, ARPS_E_BAD_REQUEST, "missing request line");
	else if (read_body_or_reply(&r, fx) == H_OK)
		mcp_or_dispatch(&r);
	if (r.status == 0)
		reply_err(&r, ARPS_E_INTERNAL, "internal error");
	char head[512], logline[300];
	int hl;

	/* libfcgi's own printf knows no %zu: format the head here. */
	hl = snprintf(head, sizeof head,
	    "Status: %d %s\r\nContent-Type: application/json\r\nContent-Length: %lu\r\n"
	    "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n%s\r\n", r.status,
	    reason(r.status),
	    (unsigned long)r.outlen, r.extra);
	if (hl > 0 && (size_t)hl < sizeof head)
		FCGX_PutStr(head, hl, fx->out);
	if (r.outlen && !r.head)
		FCGX_PutStr(r.out, (int)r.outlen, fx->out);
	/* The environment is gone after FCGX_Finish_r: keep what the log and
	 * the deferred work's watchdog need, when they need it. */
	if (cfg->log_requests || r.status >= 500 || r.after != NULL)
		snprintf(logline, sizeof logline, "%s %s %.200s %d", r.reqid ? r.reqid : "-",
		    r.method ? r.method : "-", r.path ? r.path : "-", r.status);
	r.method = r.path = r.query = r.reqid = r.ip = r.ctype = NULL;
	r.apikey = r.authz = r.idem = r.mcp_version = NULL;
	/* design.md §15: libfcgi's close shuts the socket down and waits (up
	 * to 2 s) for nginx to close its end first, so that unread input
	 * never turns into a reset.  When the request's input was read to its
	 * end there is none: a detached request's connection is closed at
	 * once, and the worker takes the next request without the wait. */
	if (FCGX_HasSeenEOF(fx->in) == EOF)
		FCGX_Detach(fx);
	/* nginx asks to keep the connection only so that it reads the answer
	 * to its END_REQUEST record (nginx/arps-api.inc): it never sends a
	 * second request on it, so close it now, not after a read that waits
	 * for nginx to close first. */
	fx->keepConnection = 0;
	FCGX_Finish_r(fx);
	/* Every request's line only when asked (design.md §15.2): nginx's
	 * access log has each request with its id; a 5xx is logged here too,
	 * with the id that names it in nginx's log and the client's header. */
	if (cfg->log_requests || r.status >= 500)
		log_msg("%s %lldus", logline, (long long)(clock_mono_us() - t0));
	db_set_deadline(db, 0);	/* deferred work belongs to no request */
	if (r.after != NULL) {
		/* the request's fields are gone: name the work by its line */
		watchdog_arm(clock_mono_us(), "deferred work of %s", logline);
		r.after(&r, r.after_arg);
	}
	watchdog_disarm();
	if (r.json != NULL)
		json_object_put(r.json);
	free(r.body);
	free(r.out);
}

static void
worker(const struct config *cfg, int sock, size_t slot, pid_t master)
{
	struct sigaction sa;
	sigset_t term, none;
	FCGX_Request fx;
	struct db *db;
	int64_t served = 0;
	int fails = 0;

	wd_mine = &wd_slots[slot];	/* before its SIGALRM handler */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;	/* no SA_RESTART: accept() must see EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);	/* the master's: a request is never cut */
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = on_watchdog;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &term, NULL);
	/* No worker outlives its master: when the master dies (killed,
	 * crashed) the kernel sends this worker SIGTERM, which ends it as a
	 * stop does, after the request in flight.  An orphan would go on
	 * answering with no watchdog, no respawn and no recycling, on a
	 * socket a new master no longer listens on (design.md §1.2). */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
		log_msg("worker: prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	if (getppid() != master)
		_exit(0);	/* it died before the line above */

	if ((db = db_open(cfg)) == NULL)
		_exit(1);
	db_set_limit(db, REQUEST_DB_SECONDS);
	/* a frozen or stopped MariaDB answers 503 within 2 s, not a hang */
	if (db_guard(db) != DB_OK)
		log_msg("worker: %s", db_error(db));
	if (FCGX_InitRequest(&fx, sock, FCGI_FAIL_ACCEPT_ON_INTR) != 0)
		_exit(1);
	while (!got_term && (cfg->max_requests == 0 || served < cfg->max_requests)) {
		int rc;

		/* Signals reach us only while we wait for a connection, so a
		 * request in flight is never interrupted. */
		sigprocmask(SIG_SETMASK, &none, NULL);
		rc = got_term ? -1 : FCGX_Accept_r(&fx);
		sigprocmask(SIG_SETMASK, &term, NULL);
		if (rc < 0) {
			if (got_term)
				break;
			if (++fails > 100) {
				log_msg("worker: accept keeps failing (%d), exiting", rc);
				break;
			}
			usleep(10000);
			continue;
		}
		fails = 0;
		/* The connection is not marked close-on-exec: a worker never
		 * starts a program (tools/check-deps.sh checks the binary
		 * imports no exec*), and the flag cost a system call a request. */
		handle(&fx, cfg, db);
		served++;
	}
	FCGX_Free(&fx, 0);
	db_close(db);
	_exit(0);
}

/* The master's copy of the index (match_prefork): whether its last
 * refresh stopped with changes left, and when the next one is due. */
static int master_behind;
static int64_t master_refresh_at;

static void
master_refresh(const struct config *cfg)
{
	master_behind = match_prefork(cfg);
	master_refresh_at = clock_mono_us() + (master_behind ? MASTER_CATCHUP : MASTER_REFRESH);
}

static pid_t
spawn(const struct config *cfg, int sock, size_t slot)
{
	pid_t pid, master = getpid();

	master_refresh(cfg);	/* the open-studies index, shared copy-on-write */
	/* the slot's last worker may have died in a request */
	atomic_store(&wd_slots[slot].since, 0);
	if ((pid = fork()) == 0)
		worker(cfg, sock, slot, master);
	if (pid < 0)
		log_msg("master: fork: %s", strerror(errno));
	return pid;
}

/* Descriptors inherited from whoever started us (a shell, make's
 * jobserver) become close-on-exec too: none reaches a child. */
static void
cloexec_inherited(void)
{
	struct dirent *de;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);

		if (fd > 2 && fd != dirfd(d))
			(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	closedir(d);
}

static int
open_listener(const struct config *cfg)
{
	int sock;

	mode_t um;

	if (strcmp(cfg->listen, "fd0") == 0) {
		(void)fcntl(0, F_SETFD, FD_CLOEXEC);
		return 0;
	}
	unlink(cfg->listen);
	/* Created 0660 (nginx runs as the pool's user or group), never
	 * world-writable, not even for an instant. */
	um = umask(0117);
	sock = FCGX_OpenSocket(cfg->listen, 1024);
	umask(um);
	if (sock < 0) {
		log_msg("master: cannot listen on %s: %s", cfg->listen, strerror(errno));
		return -1;
	}
	(void)fcntl(sock, F_SETFD, FD_CLOEXEC);
	if (cfg->listen[0] == '/' && chmod(cfg->listen, 0660) != 0) {
		log_msg("master: chmod %s: %s", cfg->listen, strerror(errno));
		close(sock);
		return -1;
	}
	return sock;
}

/* SIGHUP: load the file again; 0 when *cfg now holds the new values. */
static int
reload(struct config *cfg)
{
	struct config *next;
	char err[1024];
	int rc = -1;

	if ((next = calloc(1, sizeof *next)) == NULL) {
		log_msg("master: reload: out of memory");
		return -1;
	}
	if (config_load(next, cfg->path, err, sizeof err) != 0) {
		log_msg("master: reload refused, keeping the running configuration: %s", err);
		goto out;
	}
	if (strcmp(next->listen, cfg->listen) != 0)
		log_msg("master: reload: listen changed; it takes effect at the next restart");
	memcpy(next->listen, cfg->listen, sizeof next->listen);
	if (next->workers > MAXWORKERS)
		next->workers = MAXWORKERS;
	*cfg = *next;
	rc = 0;
out:
	free(next);
	return rc;
}

int
pool_run(struct config *cfg)
{
	pid_t pids[MAXWORKERS] = { 0 };
	char stale[MAXWORKERS] = { 0 };	/* running with a replaced config */
	size_t n = (size_t)cfg->workers, i, alive;
	struct sigaction sa;
	sigset_t blocked, none;
	int sock, status;
	pid_t pid;
	int64_t deadline;

	cloexec_inherited();
	if (FCGX_Init() != 0) {
		log_msg("master: FCGX_Init failed");
		return 1;
	}
	wd_slots = mmap(NULL, MAXWORKERS * sizeof *wd_slots, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (wd_slots == MAP_FAILED) {
		log_msg("master: cannot map the watchdog's slots: %s", strerror(errno));
		return 1;
	}
	if ((sock = open_listener(cfg)) < 0)
		return 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGCHLD);
	sigaddset(&blocked, SIGHUP);
	sigaddset(&blocked, SIGALRM);
	sigemptyset(&none);
	sigprocmask(SIG_BLOCK, &blocked, NULL);

	for (i = 0; i < n; i++)
		pids[i] = spawn(cfg, sock, i);
	log_msg("master: %zu workers on %s", n, cfg->listen);
	/* the index's refreshes start now, not at a first signal */
	wake_in(master_behind ? MASTER_CATCHUP : MASTER_REFRESH);

	while (!got_term) {
		size_t empty, crashed = 0;
		int64_t now, delay, wd_next;

		sigsuspend(&none);
		if (got_hup) {
			got_hup = 0;
			if (reload(cfg) == 0) {
				/* Every worker finishes its request and exits; the
				 * slots below cfg->workers are filled again below
				 * with the new values. */
				for (i = 0; i < n; i++)
					stale[i] = pids[i] > 0;
				if ((size_t)cfg->workers > n)
					n = (size_t)cfg->workers;
				log_msg("master: reloaded %s: %lld workers", cfg->path,
				    (long long)cfg->workers);
			}
		}
		if (got_chld) {
			got_chld = 0;
			while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
				for (i = 0; i < n && pids[i] != pid; i++)
					;
				if (i == n)
					continue;
				if (WIFSIGNALED(status))
					log_msg("master: worker %d killed by signal %d, respawning",
					    (int)pid, WTERMSIG(status));
				else if (WEXITSTATUS(status) != 0)
					log_msg("master: worker %d exited %d, respawning", (int)pid,
					    WEXITSTATUS(status));
				crashed += WIFSIGNALED(status) || WEXITSTATUS(status) != 0;
				pids[i] = 0;
				stale[i] = 0;
			}
		}
		if (got_term)
			break;
		/* Fill every empty slot below cfg->workers: a worker gone, a
		 * slot added by a reload, or a fork that failed before (tried
		 * again at every wake, at least each second, so the pool is
		 * whole again by itself).  50 ms before each respawn of a
		 * crashed worker (no fork storm on a crash loop), and the
		 * first fork that fails ends the round (no fork, connect and
		 * log line per empty slot while forks fail). */
		for (i = 0, empty = 0; i < (size_t)cfg->workers; i++) {
			if (pids[i] > 0)
				continue;
			if (empty > 0) {
				empty++;
				continue;
			}
			if (crashed > 0) {
				usleep(50000);
				crashed--;
			}
			pids[i] = spawn(cfg, sock, i);
			stale[i] = 0;
			empty += pids[i] < 0;
		}
		/* Until every stale worker is gone, signal it again each second:
		 * one between its flag check and accept() misses the first. */
		for (i = 0, alive = 0; i < n; i++)
			if (stale[i] && pids[i] > 0) {
				kill(pids[i], SIGTERM);
				alive++;
			}
		/* Its copy of the index kept up between forks too: a worker
		 * forked after many changes (a bulk of new studies) would
		 * otherwise read them at its first listing, a stall of that
		 * request (design.md §9.12).  While it is behind, 100 ms of
		 * reading every 200 ms, so that a bulk is taken in seconds.
		 * The timer is set last, after any respawn's refresh. */
		now = clock_mono_us();
		if (now >= master_refresh_at) {
			master_refresh(cfg);
			now = clock_mono_us();
		}
		/* A request that begins after this look is overdue a whole
		 * watchdog period (2 s at least) later: waking each second
		 * ends it at most a second late. */
		wd_next = now + 1000000;
		watchdog_check(cfg, pids, n, now, &wd_next);
		delay = master_behind ? MASTER_CATCHUP : master_refresh_at - now;
		if (delay > wd_next - now)
			delay = wd_next - now;
		wake_in(delay < 1000 ? 1000 : delay);
	}

	/* Stop accepting, let in-flight requests finish. */
	log_msg("master: shutting down");
	deadline = clock_mono_us() + cfg->shutdown_timeout * 1000000;
	for (;;) {
		int64_t wd_next = INT64_MAX;

		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			for (i = 0; i < n; i++)
				if (pids[i] == pid)
					pids[i] = 0;
		/* a request that hangs is ended at its watchdog here too, not
		 * only at shutdown_timeout */
		watchdog_check(cfg, pids, n, clock_mono_us(), &wd_next);
		for (i = 0, alive = 0; i < n; i++)
			if (pids[i] > 0) {
				alive++;
				/* Repeated: a worker between its flag check and
				 * accept() needs a second signal. */
				kill(pids[i], clock_mono_us() < deadline ? SIGTERM : SIGKILL);
			}
		if (alive == 0)
			break;
		usleep(100000);
	}
	if (strcmp(cfg->listen, "fd0") != 0)
		unlink(cfg->listen);
	log_msg("master: stopped");
	return 0;
}
