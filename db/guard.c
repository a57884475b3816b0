#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "db/guard.h"

struct guard {
	pthread_mutex_t mu;
	int64_t since;		/* monotonic ms the statement started; 0: none */
	uint64_t gen;		/* counts statements, so a verdict hits only its own */
	int fd;			/* the worker's socket to MariaDB; -1: none */
};

/*
 * Does a server listen at addr and greet a new connection within
 * GUARD_PROBE_MS?  A refused connection counts as alive too: the next
 * statement then fails on its own, quickly.
 */
static int
server_answers(const struct sockaddr_storage *addr, socklen_t len)
{
	struct pollfd pfd;
	int fd, rc, alive = 1;

	if ((fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return 1;
	rc = connect(fd, (const struct sockaddr *)addr, len);
	if (rc == 0 || errno == EINPROGRESS || errno == EAGAIN) {
		int64_t end = clock_mono_ms() + GUARD_PROBE_MS, left;

		pfd.fd = fd;
		pfd.events = POLLIN;
		alive = 0;
		while ((left = end - clock_mono_ms()) > 0) {
			pfd.revents = 0;
			rc = poll(&pfd, 1, (int)left);
			if (rc > 0 || (rc < 0 && errno != EINTR)) {
				alive = 1;	/* a greeting, an error packet or a close */
				break;
			}
		}
	}
	close(fd);
	return alive;
}

static void *
watch(void *arg)
{
	struct guard *g = arg;
	struct sockaddr_storage addr;
	socklen_t len;
	uint64_t gen, cleared = 0;
	int64_t since, cleared_at = 0;
	struct timespec tick = { 0, 50 * 1000000 };

	for (;;) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&g->mu);
		since = g->since;
		gen = g->gen;
		len = sizeof addr;
		/* a statement found waiting on a live server is probed again
		 * every second: the server may freeze while it waits */
		if (since == 0 || g->fd < 0 || clock_mono_ms() - since < GUARD_STALL_MS ||
		    (gen == cleared && clock_mono_ms() - cleared_at < 1000) ||
		    getpeername(g->fd, (struct sockaddr *)&addr, &len) != 0) {
			pthread_mutex_unlock(&g->mu);
			continue;
		}
		pthread_mutex_unlock(&g->mu);
		if (server_answers(&addr, len)) {
			cleared = gen;	/* a slow statement on a live server: let it run */
			cleared_at = clock_mono_ms();
			continue;
		}
		pthread_mutex_lock(&g->mu);
		if (g->gen == gen && g->since != 0 && g->fd >= 0) {
			log_msg("db: the server does not answer a new connection within %d ms: "
			    "the statement in flight is given up", GUARD_PROBE_MS);
			(void)shutdown(g->fd, SHUT_RDWR);
			g->fd = -1;
		}
		pthread_mutex_unlock(&g->mu);
	}
	return NULL;
}

struct guard *
guard_start(void)
{
	struct guard *g;
	sigset_t all, old;
	pthread_t t;
	int rc;

	if ((g = calloc(1, sizeof *g)) == NULL)
		return NULL;
	pthread_mutex_init(&g->mu, NULL);
	g->fd = -1;
	/* The thread takes no signal: they stay the worker's main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, watch, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		free(g);
		return NULL;
	}
	pthread_detach(t);
	return g;
}

void
guard_enter(struct guard *g, int fd)
{
	if (g == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	g->since = clock_mono_ms();
	g->gen++;
	g->fd = fd;
	pthread_mutex_unlock(&g->mu);
}

void
guard_leave(struct guard *g)
{
	if (g == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	g->since = 0;
	g->fd = -1;
	pthread_mutex_unlock(&g->mu);
}
