/* A webhook receiver on loopback for the delivery suites: it records each
 * request's Arps-Event-Id, Arps-Signature, body and time, and answers the
 * status the test lists for it (200 past the list), optionally after a
 * delay, or holds the first request unanswered.  One receiver at a time. */
#ifndef ARPS_TESTS_API_RECEIVER_H
#define ARPS_TESTS_API_RECEIVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define RX_MAX_HITS 512

struct rx_hit {
	char event_id[64];
	char signature[160];
	char *body;
	time_t at;		/* when the request was in, wall clock seconds */
	int64_t at_ms;		/* the same, now_ms() */
};

struct receiver {
	int fd, port;
	pthread_t th;
	pthread_mutex_t mu;
	int answers[RX_MAX_HITS];	/* status per request; 0 after the list: 200 */
	int hang_first;		/* do not answer the first request */
	int64_t delay_ms;	/* before each answer */
	struct rx_hit hits[RX_MAX_HITS];
	int nhits;
	volatile int done;
};

extern struct receiver rx;

/* Listen on 127.0.0.1, a free port (rx.port), and serve one request at a
 * time: the n answers (may be NULL with n 0), each after delay_ms. */
void rx_start(const int *answers, size_t n, int hang_first, int64_t delay_ms);
/* The same on [::1], without delay or hold. */
void rx_start6(const int *answers, size_t n);
/* Stop serving and free what was recorded. */
void rx_stop(void);
/* How many requests came so far. */
int rx_count(void);
/* Waits up to secs for at least n requests; returns the count. */
int rx_wait(int n, int secs);
/* How many distinct Arps-Event-Id values came. */
int rx_distinct(void);

#endif
