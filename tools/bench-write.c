/*
 * The write-cycle driver of tools/bench-write.sh (issue 16 row 5): one
 * keep-alive connection per agent, all driven by one thread (epoll, as wrk
 * drives the HTTP rows), so the load generator takes as little as it can
 * of the cores it shares with the server.  Each connection runs cycles of
 *   POST /studies/{id}/accept            (the agent's key)
 *   GET  /studies/{id}                   (the agent opens it)
 *   POST /studies/{id}/complete          (with the completion code)
 *   POST /studies/{id}/participants/{participant_id}/approve  (researcher)
 * walking through the studies from its own offset, one study at a time,
 * for WARMUP seconds unmeasured and then SECONDS measured.  Every answer
 * must be 200; anything else counts as an error.  Prints one line of
 * key=value figures, the driver's own CPU time among them.
 *
 *   bench-write BASE_URL TOKEN AGENTS_FILE STUDIES_FILE WARMUP SECONDS
 *
 * BASE_URL: http://HOST:PORT (a numeric IPv4 host; the bench's is loopback).
 * AGENTS_FILE: one API key a line; STUDIES_FILE: one study id a line
 * (created by the script with completion code "OK" and a slot per agent).
 * Answers must carry Content-Length (nginx's do for arps); one that does
 * not, or a connection that fails, counts as an error and the connection
 * is opened again.
 */
#define _GNU_SOURCE	/* strcasestr */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define MAXT	256
#define MAXS	20000
#define MAXLAT	2000000
#define TIMEOUT	10.0		/* seconds an answer may take */

enum step { ACCEPT, OPEN, COMPLETE, APPROVE };
static const char *const step_name[] = { "accept", "open", "complete", "approve" };

struct conn {
	int fd;
	size_t ai;		/* the agent */
	size_t k;		/* studies walked so far */
	size_t si;		/* the study of this cycle */
	enum step step;
	int measured;		/* the cycle began after the warm-up */
	int connected;		/* the connect has completed */
	int out;		/* registered for EPOLLOUT (a connect or a write pending) */
	int reused;		/* the connection has answered before */
	int done;
	double t0;		/* the cycle's start */
	double deadline;	/* of the request in flight */
	char pid[64];		/* the cycle's participant_id */
	char req[1024];
	size_t reqlen, sent;
	char resp[16384];
	size_t got;
};

static struct sockaddr_in addr;
static char hostport[64];
static const char *token;
static char keys[MAXT][96];
static char studies[MAXS][32];
static size_t nkeys, nstudies;
static double t_measure, t_end;
static int ep;
static int with_keys;	/* $BENCH_WRITE_IDEM=1: an Idempotency-Key on every POST */

static double *lat;
static size_t nlat;
static unsigned long cycles, all_cycles, errors, requests, exhausted;

static void on_write(struct conn *);
static void failed(struct conn *, const char *);

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
bad(struct conn *c, const char *what)
{
	if (c->measured)
		errors++;
	if (errors <= 5 || !c->measured)
		fprintf(stderr, "bench-write: %s: %s %.300s\n", step_name[c->step], what, c->resp);
}

static void
conn_close(struct conn *c)
{
	if (c->fd >= 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
}

static int
conn_open(struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };
	int one = 1;

	conn_close(c);
	c->reused = c->connected = 0;
	c->out = 1;
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if ((connect(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0 && errno != EINPROGRESS) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
		conn_close(c);
		return -1;
	}
	return 0;
}

/* Builds the request of c's step and starts sending it. */
static void
send_step(struct conn *c)
{
	const char *sid = studies[c->si];
	const char *auth = c->step == APPROVE ? "Authorization: Bearer " : "X-API-Key: ";
	const char *cred = c->step == APPROVE ? token : keys[c->ai];
	const char *body = c->step == COMPLETE ? "{\"completion_code\":\"OK\"}" : "";
	char path[256], idem[320];
	int n;

	switch (c->step) {
	case ACCEPT:
		snprintf(path, sizeof path, "/api/v1/studies/%s/accept", sid);
		break;
	case OPEN:
		snprintf(path, sizeof path, "/api/v1/studies/%s", sid);
		break;
	case COMPLETE:
		snprintf(path, sizeof path, "/api/v1/studies/%s/complete", sid);
		break;
	case APPROVE:
		snprintf(path, sizeof path, "/api/v1/studies/%s/participants/%s/approve", sid, c->pid);
		break;
	}
	if (with_keys && c->step != OPEN)	/* unique per request: the agent and the path */
		snprintf(idem, sizeof idem, "Idempotency-Key: w-%zu-%s\r\n", c->ai, path);
	else
		idem[0] = '\0';
	n = snprintf(c->req, sizeof c->req, "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s\r\n%s"
	    "%sContent-Length: %zu\r\n\r\n%s", c->step == OPEN ? "GET" : "POST", path, hostport,
	    auth, cred, idem, c->step == OPEN ? "" : "Content-Type: application/json\r\n", strlen(body),
	    body);
	if (n < 0 || (size_t)n >= sizeof c->req) {	/* a key or token far longer than arps issues */
		fprintf(stderr, "bench-write: a request of %d bytes does not fit in %zu\n", n, sizeof c->req);
		exit(2);
	}
	c->reqlen = (size_t)n;
	c->sent = c->got = 0;
	c->resp[0] = '\0';
	c->deadline = now_s() + TIMEOUT;
	if (c->fd < 0 && conn_open(c) != 0) {
		bad(c, "cannot connect");
		if (!c->measured)
			errors++;	/* its agent retires: the row would run short of one */
		c->done = 1;
		return;
	}
	if (c->connected)	/* else on_write sends it once the connect completes */
		on_write(c);
}

/* The next cycle of c, or its end. */
static void
next_cycle(struct conn *c)
{
	double t = now_s();

	if (c->k == nstudies) {
		exhausted++;
		c->done = 1;
	} else if (t >= t_end) {
		c->done = 1;
	}
	if (c->done) {
		conn_close(c);
		return;
	}
	c->t0 = t;
	c->measured = t >= t_measure;
	c->si = (c->ai * nstudies / nkeys + c->k++) % nstudies;
	c->step = ACCEPT;
	c->pid[0] = '\0';
	send_step(c);
}

/* A whole answer of status st is in c->resp: go on with the cycle. */
static void
answered(struct conn *c, int st)
{
	const char *p;

	if (st != 200) {
		char what[32];

		snprintf(what, sizeof what, "answered %d", st);
		bad(c, what);
		if (c->step != OPEN) {		/* as the cycle goes on after a failed open */
			next_cycle(c);
			return;
		}
	}
	switch (c->step) {
	case ACCEPT:
		if ((p = strstr(c->resp, "participant_id=")) != NULL) {
			size_t n = strspn(p + 15, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_-");
			snprintf(c->pid, sizeof c->pid, "%.*s", (int)(n < 63 ? n : 63), p + 15);
		}
		c->step = OPEN;
		break;
	case OPEN:
		c->step = COMPLETE;
		break;
	case COMPLETE:
		c->step = APPROVE;
		break;
	case APPROVE:
		all_cycles++;
		if (c->measured && now_s() <= t_end) {
			cycles++;
			requests += 4;
			if (nlat < MAXLAT)
				lat[nlat++] = now_s() - c->t0;
		}
		next_cycle(c);
		return;
	}
	send_step(c);
}

/* A failed connection: the request in flight is an error (sent again once
 * when a reused connection closed before a byte of its answer: the server
 * ended an idle keep-alive connection and saw nothing of the request). */
static void
failed(struct conn *c, const char *what)
{
	int retry = c->reused && c->got == 0;

	conn_close(c);
	if (retry) {
		send_step(c);
		return;
	}
	bad(c, what);
	if (c->step == OPEN) {
		c->step = COMPLETE;
		send_step(c);
	} else {
		next_cycle(c);
	}
}

/* Reads what has come; an answer whole at last goes on to the next step. */
static void
on_read(struct conn *c)
{
	char *hend, *p;
	ssize_t n;
	size_t hlen, clen;
	int st, keep;

	for (;;) {
		if (c->got == sizeof c->resp - 1) {
			failed(c, "answer too long");
			return;
		}
		n = read(c->fd, c->resp + c->got, sizeof c->resp - 1 - c->got);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			failed(c, n == 0 ? "connection closed" : "read failed");
			return;
		}
		c->got += (size_t)n;
		c->resp[c->got] = '\0';
		if ((hend = strstr(c->resp, "\r\n\r\n")) == NULL)
			continue;
		hlen = (size_t)(hend - c->resp) + 4;
		if (sscanf(c->resp, "HTTP/1.%*d %d", &st) != 1) {
			failed(c, "not an HTTP answer");
			return;
		}
		if ((p = strcasestr(c->resp, "\r\nContent-Length:")) == NULL || p > hend) {
			failed(c, "no Content-Length");
			return;
		}
		clen = strtoul(p + 17, NULL, 10);
		if (c->got < hlen + clen)
			continue;
		p = strcasestr(c->resp, "\r\nConnection: close");
		keep = p == NULL || p > hend;
		memmove(c->resp, c->resp + hlen, c->got - hlen + 1);	/* the body, for bad() */
		c->reused = 1;
		if (!keep)
			conn_close(c);
		answered(c, st);
		return;
	}
}

static void
on_write(struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	ssize_t n;
	int err = 0;
	socklen_t len = sizeof err;

	if (!c->connected) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
			failed(c, "cannot connect");
			return;
		}
		c->connected = 1;
	}
	while (c->sent < c->reqlen) {
		n = write(c->fd, c->req + c->sent, c->reqlen - c->sent);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (!c->out) {
				ev.events = EPOLLIN | EPOLLOUT;
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				c->out = 1;
			}
			return;
		}
		if (n <= 0) {
			failed(c, "write failed");
			return;
		}
		c->sent += (size_t)n;
	}
	if (c->out) {		/* all sent: wait for the answer only */
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
		c->out = 0;
	}
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static size_t
readlines(const char *file, char *v, size_t width, size_t max)
{
	char line[96];
	size_t n = 0;
	FILE *f = fopen(file, "r");

	if (f == NULL)
		return 0;
	while (n < max && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] != '\0')
			snprintf(v + n++ * width, width, "%.*s", (int)width - 1, line);
	}
	fclose(f);
	return n;
}

/* http://A.B.C.D:PORT[/] into addr and hostport. */
static int
parse_base(const char *url)
{
	char host[32];
	unsigned port;
	int end = 0;

	if (sscanf(url, "http://%31[0-9.]:%u%n", host, &port, &end) != 2 || port == 0 || port > 65535 ||
	    (url[end] != '\0' && strcmp(url + end, "/") != 0))
		return -1;
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
		return -1;
	snprintf(hostport, sizeof hostport, "%s:%u", host, port);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct conn conns[MAXT];
	struct epoll_event evs[MAXT];
	double warm, secs, start, cpu_ms, t;
	struct rusage ru;
	size_t i, live;
	int n, j;

	if (argc != 7) {
		fprintf(stderr, "usage: bench-write BASE_URL TOKEN AGENTS_FILE STUDIES_FILE WARMUP SECONDS\n");
		return 2;
	}
	if (parse_base(argv[1]) != 0) {
		fprintf(stderr, "bench-write: BASE_URL must be http://A.B.C.D:PORT, not %s\n", argv[1]);
		return 2;
	}
	token = argv[2];
	nkeys = readlines(argv[3], &keys[0][0], sizeof keys[0], MAXT);
	nstudies = readlines(argv[4], &studies[0][0], sizeof studies[0], MAXS);
	warm = atof(argv[5]);
	secs = atof(argv[6]);
	if (nkeys == 0 || nstudies == 0 || secs <= 0 || (lat = malloc(MAXLAT * sizeof *lat)) == NULL ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		fprintf(stderr, "bench-write: no agents, no studies or no time\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);	/* a peer's reset is a failed write, counted, not the end */
	with_keys = getenv("BENCH_WRITE_IDEM") != NULL && strcmp(getenv("BENCH_WRITE_IDEM"), "1") == 0;
	start = now_s();
	t_measure = start + warm;
	t_end = t_measure + secs;
	for (i = 0; i < nkeys; i++) {
		conns[i].fd = -1;
		conns[i].ai = i;
		next_cycle(&conns[i]);
	}
	for (;;) {
		for (i = live = 0; i < nkeys; i++)
			live += !conns[i].done;
		if (live == 0)
			break;
		n = epoll_wait(ep, evs, MAXT, 100);
		for (j = 0; j < n; j++) {
			struct conn *c = evs[j].data.ptr;

			if (c->fd < 0)
				continue;
			if (c->sent < c->reqlen)
				on_write(c);
			else if (evs[j].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				on_read(c);
		}
		t = now_s();
		for (i = 0; i < nkeys; i++)
			if (!conns[i].done && conns[i].fd >= 0 && t > conns[i].deadline) {
				conns[i].reused = 0;
				failed(&conns[i], "no answer in time");
			}
	}
	qsort(lat, nlat, sizeof *lat, dcmp);
	getrusage(RUSAGE_SELF, &ru);	/* the driver's own CPU: it shares the cores */
	cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	printf("cycles=%lu secs=%.2f cycles_per_s=%.1f req_per_s=%.1f p50_ms=%.2f p99_ms=%.2f "
	    "errors=%lu exhausted=%lu all_cycles=%lu keys=%d cpu_ms=%.0f\n", cycles, secs, cycles / secs,
	    requests / secs, nlat ? lat[nlat / 2] * 1000 : 0.0, nlat ? lat[nlat * 99 / 100] * 1000 : 0.0,
	    errors, exhausted, all_cycles, with_keys, cpu_ms);
	return 0;
}
