/*
 * arps-deliver SIGKILLed in the middle of a batch and started again
 * (design.md §1.5, design.md §11.5).  Mail: every message of
 * the outbox arrives exactly once; the one in the transport at the kill
 * is sent again after its claim's lease as the same message (same
 * Message-ID, same file), so the sink holds one copy.  Webhooks: every
 * event is delivered; at least once is the contract, so an event may
 * arrive twice only when its try was in flight at the kill (answered,
 * not yet marked), and then with the same Arps-Event-Id.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "tests/api/deliver_helpers.h"
#include "tests/api/receiver.h"
#include "tests/api/study_helpers.h"

/* A sendmail that takes 0.1 s a message, writing it as <Message-ID>.eml
 * (a message sent twice lands in the same file: count the tries too). */
static const char slow_sendmail[] =
    "#!/bin/sh\n"
    "out=\"$(dirname \"$0\")/mail-kill\"\n"
    "t=$(mktemp \"$out/.in.XXXXXX\")\n"
    "cat > \"$t\"\n"
    "sleep 0.1\n"
    "id=$(sed -n 's/^Message-ID: <\\([^@]*\\)@.*/\\1/p' \"$t\" | head -1)\n"
    "echo \"$id\" >> \"$out/tries\"\n"
    "mv \"$t\" \"$out/$id.eml\"\n";

#define NMAIL 40

static void
mail_batch_killed(void **state)
{
	char emails[NMAIL][128], conf[1024], prog[1024], out[1024], extra[1400], q[256];
	long long seq, sent_at_kill, tries, twice;
	pid_t a, b;
	int i, st;

	(void)state;
	script(prog, sizeof prog, "kill-sendmail", slow_sendmail);
	snprintf(out, sizeof out, "%s/mail-kill", var_dir());
	assert_int_equal(sh("rm -rf %s && mkdir -p %s", out, out), 0);
	snprintf(extra, sizeof extra, "mail_transport = sendmail:%s\ndeliver_timeout = 3\n"
	    "deliver_claim_seconds = 4\nmail_retry_min = 1\nmail_retry_max = 1", prog);
	conf_with(conf, sizeof conf, "deliver-kill", extra);
	stack_deliver_stop();
	seq = sql_int("SELECT COALESCE(MAX(seq), 0) FROM outbox");
	for (i = 0; i < NMAIL; i++) {
		struct resp r;

		uniq_email(emails[i], sizeof emails[i], "batchkill");
		r = send_code(emails[i]);
		assert_int_equal(r.status, 202);
		resp_free(&r);
	}
	a = deliver_spawn(conf);
	/* mid-batch: some sent, most not, one in the transport */
	for (i = 0; i < 1000 && !(dir_count(out, ".eml") >= NMAIL / 4 && dir_count(out, ".in.") >= 1); i++)
		sleep_ms(5);
	st = reap(a, SIGKILL);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	sent_at_kill = sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'sent'", seq);
	print_message("arps-deliver SIGKILLed with %lld of %d messages marked sent\n", sent_at_kill,
	    NMAIL);
	assert_true(sent_at_kill >= NMAIL / 4 - 1 && sent_at_kill < NMAIL);
	b = deliver_spawn(conf);
	snprintf(q, sizeof q, "SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'sent'", seq);
	assert_true(wait_sql(NMAIL, 60000, q));
	st = reap(b, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	sleep_ms(300);	/* the orphaned sendmail of the killed deliverer */
	/* every message once in the sink, nothing else there */
	for (i = 0; i < NMAIL; i++)
		assert_int_equal(mail_count_to(out, emails[i]), 1);
	assert_int_equal(dir_count(out, ".eml"), NMAIL);
	/* tries past one message each: only the one in the transport at the
	 * kill (claimed, handed over, never marked), sent again as itself */
	tries = sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld", seq);
	assert_int_equal(tries, NMAIL);
	assert_int_equal(sh("test \"$(wc -l < %s/tries)\" -le %d", out, NMAIL + 1), 0);
	twice = sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND attempts > 1", seq);
	assert_true(twice <= 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND payload IS NOT NULL",
	    seq), 0);
}

/* --- webhooks ------------------------------------------------------------ */

#define NPAIRS 30	/* pause + resume: 60 study.status_changed events */
#define CONCURRENCY 4

static void
webhook_batch_killed(void **state)
{
	struct test_user res;
	char study[IDS_BUFSZ], hook[IDS_BUFSZ], conf[1024], body[256], q[512];
	struct resp r;
	long long nev;
	int64_t kill_at;
	int i, j, hits_at_kill, dups = 0;
	pid_t a, b;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	rx_start(NULL, 0, 0, 20);
	snprintf(body, sizeof body, "webhook_concurrency = %d", CONCURRENCY);
	conf_with(conf, sizeof conf, "deliver-hooks", body);
	researcher(&res, 100000);
	study_new(&res, study, 10, 1, NULL);
	snprintf(body, sizeof body, "{\"url\":\"http://127.0.0.1:%d/hook\",\"events\":"
	    "[\"study.status_changed\"]}", rx.port);
	r = post_as(res.hdr, body, "/api/v1/webhooks");
	assert_int_equal(r.status, 201);
	snprintf(hook, sizeof hook, "%s", jstr(&r, "id"));
	resp_free(&r);
	stack_deliver_stop();
	for (i = 0; i < NPAIRS; i++) {
		assert_int_equal(study_post(res.hdr, study, "pause", NULL), 200);
		assert_int_equal(study_post(res.hdr, study, "resume", NULL), 200);
	}
	nev = sql_int("SELECT COUNT(*) FROM events WHERE owner_id = '%s'"
	    " AND type = 'study.status_changed'", res.id);
	assert_int_equal(nev, 2 * NPAIRS);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = '%s'",
	    hook), nev);
	a = deliver_spawn(conf);
	for (i = 0; i < 2000 && rx_count() < (int)nev / 4; i++)
		sleep_ms(5);
	assert_true(WIFSIGNALED(reap(a, SIGKILL)));
	kill_at = now_ms();
	hits_at_kill = rx_count();
	print_message("arps-deliver SIGKILLed after %d of %lld webhook deliveries\n", hits_at_kill,
	    nev);
	assert_true(hits_at_kill >= (int)nev / 4 && hits_at_kill < nev);
	b = deliver_spawn(conf);
	snprintf(q, sizeof q, "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = '%s'"
	    " AND state = 'delivered'", hook);
	/* the dead one's claims come back after their lease */
	assert_true(wait_sql(nev, 60000, q));
	assert_true(WIFEXITED(reap(b, SIGTERM)));
	/* every event arrived */
	assert_int_equal(rx_distinct(), nev);
	for (i = 0; i < nev; i++) {
		char id[64];

		sql_str(id, sizeof id, "SELECT id FROM events WHERE owner_id = '%s' AND type ="
		    " 'study.status_changed' ORDER BY seq LIMIT 1 OFFSET %d", res.id, i);
		for (j = 0; j < rx.nhits && strcmp(rx.hits[j].event_id, id) != 0; j++)
			;
		assert_true(j < rx.nhits);
	}
	/* twice only what was in flight at the kill: sent by the killed
	 * deliverer (the receiver reads one request at a time, 20 ms each,
	 * so it may read the last of them just after the kill), never
	 * marked; sent again after the claim's lease, with the same id */
	for (i = 0; i < rx.nhits; i++)
		for (j = 0; j < i; j++)
			if (strcmp(rx.hits[j].event_id, rx.hits[i].event_id) == 0) {
				dups++;
				assert_true(rx.hits[j].at_ms <= kill_at + 20 * CONCURRENCY + 400);
				assert_true(rx.hits[i].at_ms >= kill_at);
			}
	print_message("%d deliveries, %d events, %d sent twice (at most %d in flight)\n", rx.nhits,
	    (int)nev, dups, CONCURRENCY);
	assert_true(dups <= CONCURRENCY);
	assert_int_equal(rx.nhits, nev + dups);
	rx_stop();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(mail_batch_killed, stack_deliver_start),
		cmocka_unit_test_teardown(webhook_batch_killed, stack_deliver_start),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_deliver_kill", tests, NULL, NULL);
}
