/*
 * Webhook delivery by arps-deliver (design.md §11) to a test receiver on
 * loopback: every event signed, retries with the same Arps-Event-Id, and
 * no event lost when arps-deliver is killed mid-delivery.  The dev stack's
 * config allows loopback targets and starts the back-off at 1 s with a
 * 3 s time-out per try.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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
#include <sodium.h>

#include "tests/api/receiver.h"
#include "tests/api/study_helpers.h"

static char pidfile[512];

/* Start arps-deliver in the background (its pid in pidfile). */
static void
deliver_start(void)
{
	snprintf(pidfile, sizeof pidfile, "%s/run/deliver-test.pid", getenv("ARPS_VAR"));
	assert_int_equal(sh("%s/build/arps-deliver --config %s 2>>%s/log/deliver-test.log & "
	    "echo $! > %s", getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"), getenv("ARPS_VAR"),
	    pidfile), 0);
}

static void
deliver_kill(int sig)
{
	assert_int_equal(sh("kill -%d $(cat %s) && while kill -0 $(cat %s) 2>/dev/null; do "
	    "sleep 0.1; done", sig, pidfile, pidfile), 0);
}

/* Check Arps-Signature of a hit with the hook's secret. */
static void
assert_signed(const struct rx_hit *h, const char *secret)
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[32];
	char hex[65], want[200];
	long long t;

	assert_int_equal(sscanf(h->signature, "t=%lld,", &t), 1);
	assert_true(llabs((long long)time(NULL) - t) < 600);
	crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret, strlen(secret));
	snprintf(want, sizeof want, "%lld.", t);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)want, strlen(want));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)h->body, strlen(h->body));
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
	snprintf(want, sizeof want, "t=%lld,v1=%s", t, hex);
	assert_string_equal(h->signature, want);
}

/* A hook of a for the types, aimed at the receiver; its secret. */
static void
hook_new(const struct test_agent *a, const char *types, char id[IDS_BUFSZ], char secret[128])
{
	char body[512];
	struct resp r;

	snprintf(body, sizeof body, "{\"url\":\"http://127.0.0.1:%d/hook\",\"events\":[%s]}",
	    rx.port, types);
	r = post_as(a->hdr, body, "/api/v1/webhooks");
	assert_int_equal(r.status, 201);
	snprintf(id, IDS_BUFSZ, "%s", jstr(&r, "id"));
	snprintf(secret, 128, "%s", jstr(&r, "secret"));
	resp_free(&r);
}

static void
signed_events(void **state)
{
	struct test_agent a;
	struct test_user owner, u;
	char hook[IDS_BUFSZ], secret[128], s[IDS_BUFSZ];
	struct json_object *body;
	struct resp r, ev;
	int i;

	(void)state;
	rx_start(NULL, 0, 0, 0);
	agent_new(&a, "listener");
	hook_new(&a, "\"wallet.credited\",\"participation.accepted\",\"participation.withdrawn\"",
	    hook, secret);
	user_login(&owner, "owner");
	agent_claim(&a, &owner);	/* wallet.credited */
	researcher(&u, 5000);
	study_new(&u, s, 100, 2, NULL);
	assert_int_equal(study_post(a.hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(a.hdr, s, "withdraw", NULL), 200);
	deliver_start();
	assert_int_equal(rx_wait(3, 30), 3);
	ev = get_as(a.hdr, "/api/v1/events");
	assert_int_equal(json_object_array_length(jget(ev.json, "events")), 3);
	for (i = 0; i < 3; i++) {
		char key[32];
		const char *id;
		int k, found = 0;

		snprintf(key, sizeof key, "events.%d.id", i);
		id = jgets(&ev, key);
		for (k = 0; k < 3; k++) {
			if (strcmp(rx.hits[k].event_id, id) != 0)
				continue;
			found++;
			assert_signed(&rx.hits[k], secret);
			body = json_tokener_parse(rx.hits[k].body);
			assert_non_null(body);
			assert_string_equal(json_object_get_string(jget(body, "id")), id);
			snprintf(key, sizeof key, "events.%d.type", i);
			assert_string_equal(json_object_get_string(jget(body, "type")), jgets(&ev, key));
			assert_non_null(jget(body, "data"));
			json_object_put(body);
		}
		assert_int_equal(found, 1);
	}
	resp_free(&ev);
	/* the deliveries list: each delivered on its first try */
	for (i = 0; i < 50; i++) {
		r = get_as(a.hdr, "/api/v1/webhooks/%s/deliveries", hook);
		if (strcmp(jgets(&r, "deliveries.0.status"), "delivered") == 0 &&
		    strcmp(jgets(&r, "deliveries.2.status"), "delivered") == 0)
			break;
		resp_free(&r);
		usleep(100000);
	}
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "deliveries")), 3);
	assert_int_equal(jgeti(&r, "deliveries.0.attempts"), 1);
	assert_int_equal(jgeti(&r, "deliveries.0.last_response_status"), 200);
	assert_int_equal(strlen(jgets(&r, "deliveries.0.delivered_at")), 20);
	resp_free(&r);
	deliver_kill(15);
	rx_stop();
}

static void
retries_same_id(void **state)
{
	static const int answers[] = { 500, 500, 200 };
	struct test_agent a;
	struct test_user owner;
	char hook[IDS_BUFSZ], secret[128];
	struct resp r;

	(void)state;
	rx_start(answers, 3, 0, 0);
	agent_new(&a, "retried");
	hook_new(&a, "\"wallet.credited\"", hook, secret);
	user_login(&owner, "owner");
	agent_claim(&a, &owner);
	deliver_start();
	assert_int_equal(rx_wait(3, 30), 3);
	/* back-off 1 s, then 2 s: a try per retry, nothing more */
	sleep(5);
	assert_int_equal(rx_count(), 3);
	assert_string_equal(rx.hits[0].event_id, rx.hits[1].event_id);
	assert_string_equal(rx.hits[1].event_id, rx.hits[2].event_id);
	assert_true(rx.hits[1].at - rx.hits[0].at >= 1);
	assert_true(rx.hits[2].at - rx.hits[1].at >= 1);
	assert_signed(&rx.hits[2], secret);
	r = get_as(a.hdr, "/api/v1/webhooks/%s/deliveries", hook);
	assert_int_equal(json_object_array_length(jget(r.json, "deliveries")), 1);
	assert_string_equal(jgets(&r, "deliveries.0.status"), "delivered");
	assert_int_equal(jgeti(&r, "deliveries.0.attempts"), 3);
	assert_string_equal(jgets(&r, "deliveries.0.event_id"), rx.hits[0].event_id);
	resp_free(&r);
	deliver_kill(15);
	rx_stop();
}

static void
killed_mid_delivery(void **state)
{
	struct test_agent a;
	struct test_user owner;
	char hook[IDS_BUFSZ], secret[128];
	struct resp r;

	(void)state;
	rx_start(NULL, 0, 1, 0);
	agent_new(&a, "patient");
	hook_new(&a, "\"wallet.credited\"", hook, secret);
	user_login(&owner, "owner");
	agent_claim(&a, &owner);
	deliver_start();
	assert_int_equal(rx_wait(1, 30), 1);
	/* the receiver holds the first try: kill the deliverer now */
	deliver_kill(9);
	deliver_start();
	/* the claim's lease (time-out + 5 s) runs out, the event goes again */
	assert_int_equal(rx_wait(2, 40), 2);
	assert_string_equal(rx.hits[0].event_id, rx.hits[1].event_id);
	assert_signed(&rx.hits[1], secret);
	r = get_as(a.hdr, "/api/v1/events");
	assert_string_equal(jgets(&r, "events.0.id"), rx.hits[1].event_id);
	resp_free(&r);
	usleep(500000);
	r = get_as(a.hdr, "/api/v1/webhooks/%s/deliveries", hook);
	assert_string_equal(jgets(&r, "deliveries.0.status"), "delivered");
	resp_free(&r);
	deliver_kill(15);
	rx_stop();
}

/* A hook that has failed for 3 days is disabled at its next failure, and
 * its owner's feed says so: webhook.disabled with the hook's id and when
 * it began failing, a timestamp as every other (design.md §3). */
static void
disabled_after_three_days(void **state)
{
	static const int answers[] = { 500 };
	struct test_agent a;
	struct test_user owner;
	char hook[IDS_BUFSZ], secret[128], key[64];
	struct resp r;
	size_t i, n;
	int found = 0;

	(void)state;
	rx_start(answers, 1, 0, 0);
	agent_new(&a, "given-up");
	hook_new(&a, "\"wallet.credited\"", hook, secret);
	/* failing since 3 days and 10 s ago, as if every try since had failed */
	fixture("webhook-failing %s 259210", hook);
	user_login(&owner, "owner");
	agent_claim(&a, &owner);
	deliver_start();
	assert_int_equal(rx_wait(1, 30), 1);
	for (i = 0; i < 100 && !found; i++) {
		usleep(100000);
		r = get_as(a.hdr, "/api/v1/events?limit=200");
		assert_int_equal(r.status, 200);
		n = json_object_array_length(jget(r.json, "events"));
		while (n-- > 0 && !found) {
			snprintf(key, sizeof key, "events.%zu.type", n);
			if (strcmp(jgets(&r, key), "webhook.disabled") != 0)
				continue;
			found = 1;
			snprintf(key, sizeof key, "events.%zu.data.webhook_id", n);
			assert_string_equal(jgets(&r, key), hook);
			snprintf(key, sizeof key, "events.%zu.data.failing_since", n);
			assert_true(json_object_is_type(jget(r.json, key), json_type_string));
			assert_int_equal(strlen(jgets(&r, key)), 20);
			assert_int_equal(jgets(&r, key)[19], 'Z');
		}
		resp_free(&r);
	}
	assert_true(found);
	r = get_as(a.hdr, "/api/v1/webhooks");
	assert_string_equal(jgets(&r, "webhooks.0.id"), hook);
	assert_string_equal(jgets(&r, "webhooks.0.status"), "disabled");
	assert_int_equal(strlen(jgets(&r, "webhooks.0.disabled_at")), 20);
	resp_free(&r);
	/* no further try (the test stack retries after 1 s, then 2 s): the
	 * pending delivery is dropped as its hook is gone */
	sleep(4);
	assert_int_equal(rx_count(), 1);
	r = get_as(a.hdr, "/api/v1/webhooks/%s/deliveries", hook);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_object_array_length(jget(r.json, "deliveries")), 1);
	assert_string_equal(jgets(&r, "deliveries.0.status"), "failed");
	assert_int_equal(jgeti(&r, "deliveries.0.attempts"), 1);
	resp_free(&r);
	deliver_kill(15);
	rx_stop();
}

/* A hook of a for the types, aimed at url; its id. */
static void
hook_at(const struct test_agent *a, const char *url, const char *types, char id[IDS_BUFSZ])
{
	char body[512];
	struct resp r;

	snprintf(body, sizeof body, "{\"url\":\"%s\",\"events\":[%s]}", url, types);
	r = post_as(a->hdr, body, "/api/v1/webhooks");
	if (r.status != 201)
		print_error("%s: %ld %s\n", url, r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 201);
	snprintf(id, IDS_BUFSZ, "%s", jstr(&r, "id"));
	resp_free(&r);
}

/* Issue 36, finding 4: a hook to an IPv6 literal (http://[::1]:PORT/, as
 * loopback is allowed in the dev stack) is delivered, signed, like any
 * other; libcurl was handed the bracketed host in CURLOPT_RESOLVE and
 * every try failed "Malformed option provided in a setopt". */
static void
ipv6_literal_delivered(void **state)
{
	struct test_agent a;
	struct test_user owner;
	char url[128], hook[IDS_BUFSZ], secret[128];
	struct resp r;
	int i;

	(void)state;
	rx_start6(NULL, 0);
	agent_new(&a, "six");
	snprintf(url, sizeof url, "http://[::1]:%d/v6", rx.port);
	{
		char body[512];

		snprintf(body, sizeof body, "{\"url\":\"%s\",\"events\":[\"wallet.credited\"]}", url);
		r = post_as(a.hdr, body, "/api/v1/webhooks");
		assert_int_equal(r.status, 201);
		snprintf(hook, sizeof hook, "%s", jstr(&r, "id"));
		snprintf(secret, sizeof secret, "%s", jstr(&r, "secret"));
		resp_free(&r);
	}
	user_login(&owner, "owner");
	agent_claim(&a, &owner);	/* wallet.credited */
	deliver_start();
	assert_int_equal(rx_wait(1, 30), 1);
	assert_signed(&rx.hits[0], secret);
	for (i = 0; i < 50; i++) {
		r = get_as(a.hdr, "/api/v1/webhooks/%s/deliveries", hook);
		if (strcmp(jgets(&r, "deliveries.0.status"), "delivered") == 0)
			break;
		resp_free(&r);
		usleep(100000);
	}
	assert_string_equal(jgets(&r, "deliveries.0.status"), "delivered");
	assert_int_equal(jgeti(&r, "deliveries.0.attempts"), 1);
	assert_int_equal(jgeti(&r, "deliveries.0.last_response_status"), 200);
	resp_free(&r);
	deliver_kill(15);
	rx_stop();
}

/* A listener that accepts each connection and closes it unanswered: an
 * open port that does not speak HTTP. */
struct mute {
	int fd, port;
	pthread_t th;
};

static void *
mute_serve(void *arg)
{
	struct mute *m = arg;
	int c;

	while ((c = accept(m->fd, NULL, NULL)) >= 0)
		close(c);
	return NULL;
}

static void
mute_start(struct mute *m)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;

	m->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(m->fd >= 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(m->fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(m->fd, 16), 0);
	assert_int_equal(getsockname(m->fd, (struct sockaddr *)&sa, &sl), 0);
	m->port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&m->th, NULL, mute_serve, m), 0);
}

static void
mute_stop(struct mute *m)
{
	shutdown(m->fd, SHUT_RDWR);
	close(m->fd);
	pthread_join(m->th, NULL);
}

/* A loopback port nothing listens on. */
static int
closed_port(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/* The first delivery of hook once it has been tried: its last_error. */
static void
first_error(const struct test_agent *a, const char *hook, char *out, size_t n)
{
	struct resp r;
	int i;

	for (i = 0; i < 100; i++) {
		r = get_as(a->hdr, "/api/v1/webhooks/%s/deliveries", hook);
		assert_int_equal(r.status, 200);
		if (jgeti(&r, "deliveries.0.attempts") >= 1 &&
		    json_object_is_type(jget(r.json, "deliveries.0.last_error"), json_type_string))
			break;
		resp_free(&r);
		usleep(100000);
	}
	assert_true(i < 100);
	snprintf(out, n, "%s", jgets(&r, "deliveries.0.last_error"));
	resp_free(&r);
}

/* Issue 36, finding 9: a delivery's last_error is one of a few fixed
 * words, never the transport's detail: a closed port and an open port
 * that does not speak HTTP both read "connection failed" (libcurl's
 * "Couldn't connect to server" and "Empty reply from server" told a port
 * scan apart), and an answer reads "HTTP 500". */
static void
last_error_no_detail(void **state)
{
	int answers[40], i;
	struct test_agent a;
	struct test_user owner;
	struct mute m;
	char url[128], closed[IDS_BUFSZ], open[IDS_BUFSZ], http[IDS_BUFSZ], err[256];

	(void)state;
	for (i = 0; i < 40; i++)
		answers[i] = 500;
	rx_start(answers, 40, 0, 0);
	mute_start(&m);
	agent_new(&a, "scanner");
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", closed_port());
	hook_at(&a, url, "\"wallet.credited\"", closed);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", m.port);
	hook_at(&a, url, "\"wallet.credited\"", open);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/x", rx.port);
	hook_at(&a, url, "\"wallet.credited\"", http);
	user_login(&owner, "owner");
	agent_claim(&a, &owner);
	deliver_start();
	first_error(&a, closed, err, sizeof err);
	assert_string_equal(err, "connection failed");
	first_error(&a, open, err, sizeof err);
	assert_string_equal(err, "connection failed");
	first_error(&a, http, err, sizeof err);
	assert_string_equal(err, "HTTP 500");
	deliver_kill(15);
	mute_stop(&m);
	rx_stop();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(signed_events),
		cmocka_unit_test(retries_same_id),
		cmocka_unit_test(killed_mid_delivery),
		cmocka_unit_test(disabled_after_three_days),
		cmocka_unit_test(ipv6_literal_delivered),
		cmocka_unit_test(last_error_no_detail),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
