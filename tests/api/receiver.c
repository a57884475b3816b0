#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/api/client.h"
#include "tests/api/receiver.h"

struct receiver rx;

/* The value of header name ("Name:") in the request req into out; "" when
 * absent or longer than n. */
static void
header_value(const char *req, const char *name, char *out, size_t n)
{
	const char *p = strcasestr(req, name), *e;

	out[0] = '\0';
	if (p == NULL)
		return;
	p += strlen(name);
	while (*p == ' ')
		p++;
	e = strstr(p, "\r\n");
	if (e == NULL || (size_t)(e - p) >= n)
		return;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
}

static void *
serve(void *arg)
{
	(void)arg;
	while (!rx.done) {
		char buf[65536], len[32], reply[128];
		size_t got = 0;
		ssize_t r;
		char *hend;
		long clen;
		int c, idx, status;

		if ((c = accept(rx.fd, NULL, NULL)) < 0)
			continue;
		for (;;) {
			r = read(c, buf + got, sizeof buf - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = '\0';
			if ((hend = strstr(buf, "\r\n\r\n")) != NULL) {
				header_value(buf, "Content-Length:", len, sizeof len);
				clen = atol(len);
				if (got >= (size_t)(hend + 4 - buf) + (size_t)clen)
					break;
			}
		}
		buf[got] = '\0';
		if ((hend = strstr(buf, "\r\n\r\n")) == NULL) {
			close(c);
			continue;
		}
		pthread_mutex_lock(&rx.mu);
		idx = rx.nhits;
		if (idx < RX_MAX_HITS) {
			header_value(buf, "Arps-Event-Id:", rx.hits[idx].event_id,
			    sizeof rx.hits[idx].event_id);
			header_value(buf, "Arps-Signature:", rx.hits[idx].signature,
			    sizeof rx.hits[idx].signature);
			rx.hits[idx].body = strdup(hend + 4);
			rx.hits[idx].at = time(NULL);
			rx.hits[idx].at_ms = now_ms();
			rx.nhits++;
		}
		status = idx < RX_MAX_HITS && rx.answers[idx] ? rx.answers[idx] : 200;
		pthread_mutex_unlock(&rx.mu);
		if (idx == 0 && rx.hang_first) {
			/* hold the connection until the deliverer is gone */
			while (!rx.done && read(c, buf, sizeof buf) > 0)
				;
			close(c);
			continue;
		}
		if (rx.delay_ms > 0)
			sleep_ms(rx.delay_ms);
		snprintf(reply, sizeof reply, "HTTP/1.1 %d X\r\nContent-Length: 0\r\nConnection: close"
		    "\r\n\r\n", status);
		(void)!write(c, reply, strlen(reply));
		close(c);
	}
	return NULL;
}

/* Listen on the loopback address of family (AF_INET or AF_INET6). */
static void
rx_listen(int family, const int *answers, size_t n, int hang_first, int64_t delay_ms)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = family == AF_INET ? sizeof *sa : sizeof *sa6;
	int one = 1;

	memset(&rx, 0, sizeof rx);
	pthread_mutex_init(&rx.mu, NULL);
	if (n > 0)
		memcpy(rx.answers, answers, n * sizeof *answers);
	rx.hang_first = hang_first;
	rx.delay_ms = delay_ms;
	rx.fd = socket(family, SOCK_STREAM, 0);
	assert_true(rx.fd >= 0);
	setsockopt(rx.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&ss, 0, sizeof ss);
	if (family == AF_INET) {
		sa->sin_family = AF_INET;
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else {
		sa6->sin6_family = AF_INET6;
		sa6->sin6_addr = in6addr_loopback;
	}
	assert_int_equal(bind(rx.fd, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(listen(rx.fd, 64), 0);
	assert_int_equal(getsockname(rx.fd, (struct sockaddr *)&ss, &sl), 0);
	rx.port = ntohs(family == AF_INET ? sa->sin_port : sa6->sin6_port);
	assert_int_equal(pthread_create(&rx.th, NULL, serve, NULL), 0);
}

void
rx_start(const int *answers, size_t n, int hang_first, int64_t delay_ms)
{
	rx_listen(AF_INET, answers, n, hang_first, delay_ms);
}

void
rx_start6(const int *answers, size_t n)
{
	rx_listen(AF_INET6, answers, n, 0, 0);
}

void
rx_stop(void)
{
	int i;

	rx.done = 1;
	shutdown(rx.fd, SHUT_RDWR);
	close(rx.fd);
	pthread_cancel(rx.th);
	pthread_join(rx.th, NULL);
	for (i = 0; i < rx.nhits && i < RX_MAX_HITS; i++)
		free(rx.hits[i].body);
}

int
rx_count(void)
{
	int n;

	pthread_mutex_lock(&rx.mu);
	n = rx.nhits;
	pthread_mutex_unlock(&rx.mu);
	return n;
}

int
rx_wait(int n, int secs)
{
	int i;

	for (i = 0; i < secs * 10 && rx_count() < n; i++)
		usleep(100000);
	return rx_count();
}

int
rx_distinct(void)
{
	int i, j, n = 0;

	pthread_mutex_lock(&rx.mu);
	for (i = 0; i < rx.nhits; i++) {
		for (j = 0; j < i && strcmp(rx.hits[j].event_id, rx.hits[i].event_id) != 0; j++)
			;
		n += j == i;
	}
	pthread_mutex_unlock(&rx.mu);
	return n;
}
