/* Mail out of the workers (design.md §1, design.md §9): arps-deliver delivers the
 * outbox within a second, survives a SIGKILL mid-delivery without losing or
 * doubling a message, retries a failing transport with back-off and gives
 * up; payloads are sealed; nothing leaks into a child; the workers never
 * fork or open sockets; retention shrinks the tables back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "core/timefmt.h"
#include "tests/api/deliver_helpers.h"
#include "tests/api/study_helpers.h"

static void
send_code_ok(const char *email)
{
	struct resp r = send_code(email);

	assert_int_equal(r.status, 202);
	resp_free(&r);
}

/* Processes a test started (deliverers, relays, strace): a failed test
 * leaves none behind to disturb the next. */
static pid_t spawned[32];
static size_t nspawned;

static pid_t
track(pid_t pid)
{
	if (pid > 0 && nspawned < sizeof spawned / sizeof spawned[0])
		spawned[nspawned++] = pid;
	return pid;
}

/* The stack's own deliverer again, and every process the test started
 * gone, whether the test passed or not. */
static int
deliver_back(void **state)
{
	size_t i;

	for (i = 0; i < nspawned; i++)
		if (kill(spawned[i], SIGKILL) == 0)
			waitpid(spawned[i], NULL, 0);
	nspawned = 0;
	return stack_deliver_start(state);
}

static long long
max_seq(void)
{
	long long s = sql_int("SELECT COALESCE(MAX(seq), 0) FROM outbox");

	assert_true(s >= 0);
	return s;
}

/* The login code is in var/mail/ within a second of the answer, in a file
 * named by its message id, and its outbox row is marked sent and wiped. */
static void
mail_within_a_second(void **state)
{
	char email[128], code[8], id[64], path[1024], line[512], msgid[128] = "";
	long long seq;
	int64_t t0, ms;
	FILE *f;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		uniq_email(email, sizeof email, "fast");
		seq = max_seq();
		t0 = now_ms();
		send_code_ok(email);
		mail_code(email, code);
		ms = now_ms() - t0;
		print_message("login code mail %d arrived after %lld ms\n", i, (long long)ms);
		assert_true(ms < 1000);
		assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld", seq), 1);
		sql_str(id, sizeof id, "SELECT id FROM outbox WHERE seq > %lld", seq);
		assert_int_equal(strncmp(id, "msg_", 4), 0);
		assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE id = '%s' AND state = 'sent'"
		    " AND payload IS NULL AND sent_at IS NOT NULL AND attempts = 1", id), 1);
		snprintf(path, sizeof path, "%s/mail/%s.eml", var_dir(), id);
		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof line, f) != NULL)
			if (strncmp(line, "Message-ID: ", 12) == 0)
				snprintf(msgid, sizeof msgid, "%.100s", line + 12);
		fclose(f);
		assert_int_equal(strncmp(msgid, "<", 1), 0);
		assert_int_equal(strncmp(msgid + 1, id, strlen(id)), 0);
		assert_int_equal(msgid[1 + strlen(id)], '@');
	}
}

/* The queued payload holds neither the address nor the code in clear. */
static void
payload_sealed(void **state)
{
	char email[128], code[8], hex[4096], want[64];
	long long seq;
	size_t i;

	(void)state;
	stack_deliver_stop();
	uniq_email(email, sizeof email, "sealed");
	seq = max_seq();
	send_code_ok(email);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'pending'"
	    " AND kind = 'mail'", seq), 1);
	sql_str(hex, sizeof hex, "SELECT HEX(payload) FROM outbox WHERE seq > %lld", seq);
	assert_true(strlen(hex) > 80);
	assert_int_equal(deliver_back(NULL), 0);
	mail_code(email, code);
	/* HEX('login code') and HEX of the address: absent */
	assert_null(strstr(hex, "6C6F67696E20636F6465"));
	for (i = 0; i < 6; i++)
		snprintf(want + 2 * i, 3, "%02X", (unsigned char)email[i]);
	assert_null(strstr(hex, want));
	for (i = 0; i < 6; i++)
		snprintf(want + 2 * i, 3, "%02X", (unsigned char)code[i]);
	assert_null(strstr(hex, want));
	assert_true(wait_sql(1, 3000, "SELECT COUNT(*) FROM outbox WHERE state = 'sent'"
	    " AND payload IS NULL AND seq = (SELECT MAX(seq) FROM outbox)"));
}

/* A fake sendmail that stores each message under its Message-ID, slowly,
 * and records the descriptors it was given. */
static const char slow_sendmail[] =
    "#!/bin/sh\n"
    "out=\"$(dirname \"$0\")/mail-slow\"\n"
    "ls -l /proc/$$/fd > \"$out/.fds.$$\" 2>&1\n"
    "t=$(mktemp \"$out/.in.XXXXXX\")\n"
    "cat > \"$t\"\n"
    "sleep 0.3\n"
    "id=$(sed -n 's/^Message-ID: <\\([^@]*\\)@.*/\\1/p' \"$t\" | head -1)\n"
    "mv \"$t\" \"$out/$id.eml\"\n";

#define NKILL 6

/* SIGKILL arps-deliver while a message is in the transport, start another:
 * every message arrives, each exactly once (the one in flight is sent
 * again after its claim expired, as the same message: same file). */
static void
sigkill_mid_delivery(void **state)
{
	char emails[NKILL][128], conf[1024], prog[1024], out[1024], extra[1400], q[256];
	long long seq;
	pid_t a, b;
	int i, st;

	(void)state;
	script(prog, sizeof prog, "slow-sendmail", slow_sendmail);
	snprintf(out, sizeof out, "%s/mail-slow", var_dir());
	assert_int_equal(sh("rm -rf %s && mkdir -p %s", out, out), 0);
	snprintf(extra, sizeof extra, "mail_transport = sendmail:%s\ndeliver_timeout = 5\n"
	    "deliver_claim_seconds = 6\nmail_retry_min = 1\nmail_retry_max = 1", prog);
	conf_with(conf, sizeof conf, "deliver-slow", extra);
	stack_deliver_stop();
	seq = max_seq();
	for (i = 0; i < NKILL; i++) {
		uniq_email(emails[i], sizeof emails[i], "kill");
		send_code_ok(emails[i]);
	}
	a = track(deliver_spawn(conf));
	/* in the middle of the second message: one delivered, one in flight */
	for (i = 0; i < 300 && !(dir_count(out, "msg_") >= 1 && dir_count(out, ".in.") >= 1); i++)
		sleep_ms(10);
	assert_true(dir_count(out, "msg_") >= 1);
	st = reap(a, SIGKILL);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'pending'",
	    seq) >= 1);
	b = track(deliver_spawn(conf));
	snprintf(q, sizeof q, "SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'sent'", seq);
	assert_true(wait_sql(NKILL, 40000, q));
	/* SIGTERM: it finishes what it holds and exits 0 */
	st = reap(b, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	sleep_ms(500);	/* the orphaned sendmail of the killed deliverer */
	for (i = 0; i < NKILL; i++)
		assert_int_equal(mail_count_to(out, emails[i]), 1);
	assert_int_equal(dir_count(out, "msg_"), NKILL);
	/* the one in flight was claimed twice */
	assert_true(sql_int("SELECT MAX(attempts) FROM outbox WHERE seq > %lld", seq) >= 2);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND payload IS NOT NULL",
	    seq), 0);
}

/* SIGTERM while a message is in the transport: it is finished and marked
 * sent, then the deliverer exits 0. */
static void
sigterm_finishes_message(void **state)
{
	char email[128], conf[1024], prog[1024], out[1024], extra[1400];
	long long seq;
	pid_t a;
	int i, st;

	(void)state;
	script(prog, sizeof prog, "slow-sendmail", slow_sendmail);
	snprintf(out, sizeof out, "%s/mail-slow", var_dir());
	assert_int_equal(sh("rm -rf %s && mkdir -p %s", out, out), 0);
	snprintf(extra, sizeof extra, "mail_transport = sendmail:%s\ndeliver_timeout = 5\n"
	    "deliver_claim_seconds = 6", prog);
	conf_with(conf, sizeof conf, "deliver-term", extra);
	stack_deliver_stop();
	seq = max_seq();
	uniq_email(email, sizeof email, "term");
	send_code_ok(email);
	a = track(deliver_spawn(conf));
	for (i = 0; i < 300 && dir_count(out, ".in.") == 0; i++)
		sleep_ms(10);
	assert_true(dir_count(out, ".in.") >= 1);
	assert_int_equal(dir_count(out, "msg_"), 0);
	st = reap(a, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(mail_count_to(out, email), 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'sent'"
	    " AND attempts = 1", seq), 1);
}

#define NTWO 10

/* Two deliverers at once (and no lock between them): each message is
 * claimed once, by one of them, and written once. */
static void
two_deliverers_at_once(void **state)
{
	char emails[NTWO][128], mail[1024], q[256];
	long long seq;
	pid_t a, b;
	int i;

	(void)state;
	stack_deliver_stop();
	seq = max_seq();
	for (i = 0; i < NTWO; i++) {
		uniq_email(emails[i], sizeof emails[i], "two");
		send_code_ok(emails[i]);
	}
	a = track(deliver_spawn(getenv("ARPS_CONFIG")));
	b = track(deliver_spawn(getenv("ARPS_CONFIG")));
	snprintf(q, sizeof q, "SELECT COUNT(*) FROM outbox WHERE seq > %lld AND state = 'sent'", seq);
	assert_true(wait_sql(NTWO, 10000, q));
	assert_int_equal(sql_int("SELECT COUNT(*) FROM outbox WHERE seq > %lld AND attempts = 1", seq),
	    NTWO);
	snprintf(mail, sizeof mail, "%s/mail", var_dir());
	for (i = 0; i < NTWO; i++)
		assert_int_equal(mail_count_to(mail, emails[i]), 1);
	assert_true(WIFEXITED(reap(a, SIGTERM)));
	assert_true(WIFEXITED(reap(b, SIGTERM)));
}

/* The deliverer's child (sendmail) gets stdin, stdout, stderr and nothing
 * else: no MariaDB socket, no other pipe. */
static void
no_descriptor_leaks_into_sendmail(void **state)
{
	char cmd[2048], out[1024];
	FILE *p;
	char line[512];
	int n = 0, sockets = 0, pipes = 0;

	(void)state;
	snprintf(out, sizeof out, "%s/mail-slow", var_dir());
	assert_true(dir_count(out, ".fds.") >= NKILL);
	snprintf(cmd, sizeof cmd, "cat %s/.fds.*", out);
	assert_non_null(p = popen(cmd, "r"));
	while (fgets(line, sizeof line, p) != NULL) {
		if (strstr(line, " -> ") == NULL)
			continue;
		n++;
		if (strstr(line, "socket:") != NULL)
			sockets++;
		if (strstr(line, "pipe:") != NULL && strstr(line, " 0 -> ") == NULL)
			pipes++;
	}
	pclose(p);
	assert_true(n >= 3 * NKILL);
	assert_int_equal(sockets, 0);
	assert_int_equal(pipes, 0);
}

/* A transport that keeps failing: tries at about 0, 1, 3, 7 s (1 s doubling,
 * capped at 4 s), the reason recorded; once it works the message goes. */
static void
failing_transport_backoff(void **state)
{
	char email[128], conf[1024], prog[1024], extra[1400], err[300], q[256], code[8], mail[1024];
	long long seq, row, next, now;
	int64_t t1, t4;
	pid_t a;

	(void)state;
	script(prog, sizeof prog, "fail-sendmail", "#!/bin/sh\ncat > /dev/null\nexit 75\n");
	snprintf(extra, sizeof extra, "mail_transport = sendmail:%s\nmail_retry_min = 1\n"
	    "mail_retry_max = 4\nmail_give_up = 600", prog);
	conf_with(conf, sizeof conf, "deliver-fail", extra);
	stack_deliver_stop();
	uniq_email(email, sizeof email, "retry");
	seq = max_seq();
	send_code_ok(email);
	row = sql_int("SELECT MIN(seq) FROM outbox WHERE seq > %lld", seq);
	assert_true(row > seq);
	a = track(deliver_spawn(conf));
	snprintf(q, sizeof q, "SELECT attempts FROM outbox WHERE seq = %lld", row);
	assert_true(wait_sql(1, 15000, q));
	t1 = now_ms();
	/* the 4th try made and its failure recorded */
	snprintf(q, sizeof q, "SELECT attempts = 4 AND claimed_until IS NULL FROM outbox"
	    " WHERE seq = %lld", row);
	assert_true(wait_sql(1, 30000, q));
	t4 = now_ms();
	/* 1, 2 then 4 s between the tries (whole seconds: each wait is more
	 * than its delay less one), not the 200 ms poll nor a fixed 1 s */
	print_message("tries 1 -> 4 took %lld ms\n", (long long)(t4 - t1));
	assert_true(t4 - t1 >= 3500);
	/* Freeze the deliverer once the 4th try is seen, so a slow machine
	 * cannot let a 5th try in before the checks below. */
	assert_int_equal(kill(a, SIGSTOP), 0);
	assert_int_equal(sql_int("SELECT attempts FROM outbox WHERE seq = %lld", row), 4);
	assert_int_equal(sql_int("SELECT state = 'pending' AND payload IS NOT NULL AND"
	    " claimed_until IS NULL FROM outbox WHERE seq = %lld", row), 1);
	next = sql_int("SELECT next_attempt_at FROM outbox WHERE seq = %lld", row);
	now = sql_int("SELECT UNIX_TIMESTAMP()");
	/* capped at 4 s after the failed try: never further away; and no
	 * nearer than 4 s less the time the test took to look (load) */
	print_message("next try in %lld s, %lld ms after the 4th was seen\n", next - now,
	    (long long)(now_ms() - t4));
	assert_true(next - now <= 4);
	assert_true(next - now >= 2 - (now_ms() - t4 + 999) / 1000);
	sql_str(err, sizeof err, "SELECT last_error FROM outbox WHERE seq = %lld", row);
	assert_non_null(strstr(err, "exited 75"));
	snprintf(mail, sizeof mail, "%s/mail", var_dir());
	assert_int_equal(mail_count_to(mail, email), 0);
	kill(a, SIGTERM);	/* seen as soon as it runs again: no 5th try */
	reap(a, SIGCONT);
	/* the transport works again: the next try delivers it */
	assert_int_equal(deliver_back(NULL), 0);
	fixture("outbox-due %lld", row);
	mail_code(email, code);
	snprintf(q, sizeof q, "SELECT state = 'sent' AND attempts = 5 AND last_error IS NULL"
	    " FROM outbox WHERE seq = %lld", row);
	assert_true(wait_sql(1, 15000, q));
}

/* Past mail_give_up the message is dead: payload wiped, reason kept. */
static void
gives_up(void **state)
{
	char email[128], conf[1024], prog[1024], extra[1400], err[300], q[256];
	long long seq, row;
	pid_t a;

	(void)state;
	script(prog, sizeof prog, "fail-sendmail", "#!/bin/sh\ncat > /dev/null\nexit 75\n");
	snprintf(extra, sizeof extra, "mail_transport = sendmail:%s\nmail_retry_min = 1\n"
	    "mail_retry_max = 1\nmail_give_up = 2", prog);
	conf_with(conf, sizeof conf, "deliver-dead", extra);
	stack_deliver_stop();
	uniq_email(email, sizeof email, "dead");
	seq = max_seq();
	send_code_ok(email);
	row = sql_int("SELECT MIN(seq) FROM outbox WHERE seq > %lld", seq);
	a = track(deliver_spawn(conf));
	snprintf(q, sizeof q, "SELECT state = 'dead' FROM outbox WHERE seq = %lld", row);
	assert_true(wait_sql(1, 30000, q));
	reap(a, SIGTERM);
	assert_int_equal(sql_int("SELECT payload IS NULL AND dead_at IS NOT NULL AND attempts >= 2"
	    " FROM outbox WHERE seq = %lld", row), 1);
	sql_str(err, sizeof err, "SELECT last_error FROM outbox WHERE seq = %lld", row);
	assert_non_null(strstr(err, "exited 75"));
	assert_int_equal(deliver_back(NULL), 0);
}

/* A minimal SMTP relay on 127.0.0.1: accepts one message per connection
 * and appends the DATA to a file; answers 451 to DATA when fail is set. */
struct relay {
	int lfd, port;
	char file[1024];
};

static void
relay_serve(struct relay *rl, int fail)
{
	for (;;) {
		int c = accept(rl->lfd, NULL, NULL), indata = 0;
		char buf[8192], line[2048];
		size_t ll = 0;
		FILE *out;
		ssize_t n;

		if (c < 0)
			_exit(0);
		out = fopen(rl->file, "a");
		(void)!write(c, "220 relay ESMTP\r\n", 17);
		while ((n = read(c, buf, sizeof buf)) > 0) {
			ssize_t i;

			for (i = 0; i < n; i++) {
				if (ll + 1 < sizeof line)
					line[ll++] = buf[i];
				if (buf[i] != '\n')
					continue;
				line[ll] = '\0';
				if (indata) {
					if (strcmp(line, ".\r\n") == 0) {
						indata = 0;
						(void)!write(c, "250 queued\r\n", 12);
					} else if (out != NULL)
						fputs(line, out);
				} else if (strncasecmp(line, "EHLO", 4) == 0)
					(void)!write(c, "250 relay\r\n", 11);
				else if (strncasecmp(line, "DATA", 4) == 0) {
					if (fail)
						(void)!write(c, "451 try later\r\n", 15);
					else {
						indata = 1;
						(void)!write(c, "354 go\r\n", 8);
					}
				} else if (strncasecmp(line, "QUIT", 4) == 0) {
					(void)!write(c, "221 bye\r\n", 9);
					break;
				} else
					(void)!write(c, "250 ok\r\n", 8);
				ll = 0;
			}
		}
		if (out != NULL)
			fclose(out);
		close(c);
	}
}

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static pid_t
relay_start(struct relay *rl, int fail)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	pid_t pid;

	assert_true((rl->lfd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(rl->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(rl->lfd, 16), 0);
	assert_int_equal(getsockname(rl->lfd, (struct sockaddr *)&sa, &sl), 0);
	rl->port = ntohs(sa.sin_port);
	assert_true((pid = fork()) >= 0);
	if (pid == 0)
		relay_serve(rl, fail);
	close(rl->lfd);
	return track(pid);
}

/* smtp://: through libcurl to a relay; a relay answering 451 is retried;
 * the text carries the stable Message-ID and the CRLF dot-stuffed body. */
static void
smtp_transport(void **state)
{
	char email[128], conf[1024], extra[1400], id[64], q[256], cmd[4096];
	struct relay rl;
	long long seq, row;
	pid_t relay, a;

	(void)state;
	snprintf(rl.file, sizeof rl.file, "%s/relay.txt", var_dir());
	unlink(rl.file);
	relay = relay_start(&rl, 1);
	snprintf(extra, sizeof extra, "mail_transport = smtp://127.0.0.1:%d\nmail_retry_min = 1\n"
	    "mail_retry_max = 1", rl.port);
	conf_with(conf, sizeof conf, "deliver-smtp", extra);
	stack_deliver_stop();
	uniq_email(email, sizeof email, "smtp");
	seq = max_seq();
	send_code_ok(email);
	row = sql_int("SELECT MIN(seq) FROM outbox WHERE seq > %lld", seq);
	a = track(deliver_spawn(conf));
	snprintf(q, sizeof q, "SELECT attempts >= 2 AND state = 'pending' FROM outbox WHERE seq = %lld",
	    row);
	assert_true(wait_sql(1, 6000, q));
	reap(relay, SIGKILL);
	/* the relay accepts now */
	relay = relay_start(&rl, 0);
	reap(a, SIGTERM);
	snprintf(extra, sizeof extra, "mail_transport = smtp://127.0.0.1:%d\nmail_retry_min = 1\n"
	    "mail_retry_max = 1", rl.port);
	conf_with(conf, sizeof conf, "deliver-smtp", extra);
	a = track(deliver_spawn(conf));
	snprintf(q, sizeof q, "SELECT state = 'sent' FROM outbox WHERE seq = %lld", row);
	assert_true(wait_sql(1, 6000, q));
	reap(a, SIGTERM);
	reap(relay, SIGKILL);
	sql_str(id, sizeof id, "SELECT id FROM outbox WHERE seq = %lld", row);
	snprintf(cmd, sizeof cmd, "grep -q '^Message-ID: <%s@localhost>' %s && grep -q '^To: %s' %s"
	    " && grep -q 'login code is [0-9]\\{6\\}' %s", id, rl.file, email, rl.file, rl.file);
	assert_int_equal(sh("%s", cmd), 0);
	assert_int_equal(deliver_back(NULL), 0);
}

/* The pool's worker pids (children of the master). */
static int
workers(pid_t *pids, int max)
{
	char cmd[1024], line[64];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof cmd, "pgrep -P \"$(cat %s/run/arps-fcgi.pid)\"", var_dir());
	assert_non_null(p = popen(cmd, "r"));
	while (n < max && fgets(line, sizeof line, p) != NULL)
		pids[n++] = (pid_t)atoi(line);
	pclose(p);
	return n;
}

/* Some traffic of every kind, the former sendmail path included. */
static void
traffic(int rounds)
{
	struct test_user u;
	struct test_agent a;
	struct resp r;
	int i;

	for (i = 0; i < rounds; i++) {
		r = http_get("/api/v1/health", NULL);
		assert_int_equal(r.status, 200);
		resp_free(&r);
		agent_new(&a, "Traced");
		user_login(&u, "traced");
		r = http_get("/api/v1/account", HDRS(u.hdr));
		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
}

/* Every descriptor of a worker is close-on-exec; its sockets are unix
 * sockets (the listen socket, nginx's connection, MariaDB's); the FastCGI
 * socket is not world-writable. */
static void
worker_descriptors(void **state)
{
	pid_t pids[64];
	char path[1024], line[256], target[256], *unixtab;
	int n, i, checked = 0;
	struct stat st;
	size_t ul = 0, cap = 1 << 20, got;
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/run/arps.sock", var_dir());
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0007, 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	traffic(1);
	assert_non_null(f = fopen("/proc/net/unix", "r"));
	assert_non_null(unixtab = malloc(cap));
	while ((got = fread(unixtab + ul, 1, cap - ul - 1, f)) > 0) {
		ul += got;
		if (ul + 1 == cap)
			assert_non_null(unixtab = realloc(unixtab, cap *= 2));
	}
	unixtab[ul] = '\0';
	fclose(f);
	assert_true((n = workers(pids, 64)) >= 1);
	for (i = 0; i < n; i++) {
		struct dirent *de;
		DIR *d;
		int sockets = 0;

		snprintf(path, sizeof path, "/proc/%d/fd", (int)pids[i]);
		if ((d = opendir(path)) == NULL)
			continue;	/* recycled meanwhile */
		while ((de = readdir(d)) != NULL) {
			int fd = atoi(de->d_name);
			ssize_t tl;
			unsigned long flags = 0;

			if (de->d_name[0] == '.' || fd <= 2)
				continue;
			snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pids[i], fd);
			if ((tl = readlink(path, target, sizeof target - 1)) < 0)
				continue;
			target[tl] = '\0';
			snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pids[i], fd);
			if ((f = fopen(path, "r")) == NULL)
				continue;
			while (fgets(line, sizeof line, f) != NULL)
				if (strncmp(line, "flags:", 6) == 0)
					flags = strtoul(line + 6, NULL, 8);
			fclose(f);
			if (!(flags & 02000000))
				print_error("worker %d fd %d (%s) is not close-on-exec\n", (int)pids[i], fd,
				    target);
			assert_true(flags & 02000000);
			if (strncmp(target, "socket:[", 8) == 0) {
				char in1[64], in2[64];

				sockets++;
				snprintf(in1, sizeof in1, " %.*s ", (int)(strlen(target) - 9), target + 8);
				snprintf(in2, sizeof in2, " %.*s\n", (int)(strlen(target) - 9), target + 8);
				/* a unix socket (not TCP/UDP) */
				if (strstr(unixtab, in1) == NULL && strstr(unixtab, in2) == NULL)
					print_error("worker %d fd %d: %s is not a unix socket\n",
					    (int)pids[i], fd, target);
				assert_true(strstr(unixtab, in1) != NULL || strstr(unixtab, in2) != NULL);
			}
			checked++;
		}
		closedir(d);
		assert_true(sockets >= 1 && sockets <= 3);
	}
	free(unixtab);
	assert_true(checked >= n);
}

/* strace on every worker while clients send requests: no fork, clone or
 * exec; no socket but AF_UNIX; connect only to MariaDB's socket. */
static void
workers_never_fork_or_connect(void **state)
{
	char trace[1024], errf[1024], line[2048], dbsock[1024];
	char *argv[80];
	char pidargs[64][16];
	pid_t pids[64], st;
	int n, i, k = 0, attached = 0, accepts = 0;
	FILE *f;

	(void)state;
	if (sh("command -v strace >/dev/null") != 0)
		fail_msg("strace is missing: tools/dev.sh deps installs it");
	snprintf(trace, sizeof trace, "%s/log/worker-strace.txt", var_dir());
	snprintf(errf, sizeof errf, "%s/log/worker-strace.err", var_dir());
	snprintf(dbsock, sizeof dbsock, "%s/run/mysqld.sock", var_dir());
	unlink(trace);
	assert_true((n = workers(pids, 64)) >= 1);
	argv[k++] = "strace";
	argv[k++] = "-f";
	argv[k++] = "-s";
	argv[k++] = "256";
	argv[k++] = "-e";
	argv[k++] = "trace=process,socket,connect,accept,accept4,bind,listen,socketpair";
	argv[k++] = "-o";
	argv[k++] = trace;
	for (i = 0; i < n; i++) {
		snprintf(pidargs[i], sizeof pidargs[i], "%d", (int)pids[i]);
		argv[k++] = "-p";
		argv[k++] = pidargs[i];
	}
	argv[k] = NULL;
	assert_true((st = fork()) >= 0);
	if (st == 0) {
		int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execvp("strace", argv);
		_exit(127);
	}
	track(st);
	for (i = 0; i < 200 && attached < n; i++) {
		char l[256];

		sleep_ms(25);
		attached = 0;
		if ((f = fopen(errf, "r")) != NULL) {
			while (fgets(l, sizeof l, f) != NULL)
				if (strstr(l, "attached") != NULL)
					attached++;
			fclose(f);
		}
	}
	if (attached < n)
		print_error("strace attached to %d of %d workers\n", attached, n);
	assert_true(attached >= n);
	traffic(6);
	reap(st, SIGINT);
	assert_non_null(f = fopen(trace, "r"));
	while (fgets(line, sizeof line, f) != NULL) {
		if (strstr(line, "exited with") != NULL || strstr(line, "+++") != NULL ||
		    strstr(line, "---") != NULL)
			continue;
		if (strstr(line, "fork(") != NULL || strstr(line, "clone(") != NULL ||
		    strstr(line, "clone3(") != NULL || strstr(line, "execve(") != NULL) {
			print_error("a worker forked or executed: %s", line);
			fail();
		}
		if (strstr(line, "socket(") != NULL && strstr(line, "AF_UNIX") == NULL) {
			print_error("a worker opened a socket: %s", line);
			fail();
		}
		if (strstr(line, "connect(") != NULL && strstr(line, dbsock) == NULL) {
			print_error("a worker connected: %s", line);
			fail();
		}
		if (strstr(line, "accept") != NULL)
			accepts++;
	}
	fclose(f);
	/* the trace saw the requests */
	assert_true(accepts >= 6);
}

/* Retention (design.md §9.10): rows of every kind, then arps-sweep --now
 * two days and two months on; each table shrinks back and the log says by
 * how much. */
static const char *const tables[] = {
	"idempotency_keys", "rate_events", "rate_buckets", "login_codes", "access_tokens", "outbox",
};
#define NTABLES (sizeof tables / sizeof tables[0])

/* Rows per table; of the outbox, the sent and dead ones (what retention
 * may delete). */
static void
counts(long long *c)
{
	size_t i;

	for (i = 0; i < NTABLES; i++)
		assert_true((c[i] = sql_int("SELECT COUNT(*) FROM %s%s", tables[i],
		    strcmp(tables[i], "outbox") == 0 ? " WHERE state <> 'pending'" : "")) >= 0);
}

static int
sweep_at(int64_t t, const char *log)
{
	char iso[TIMEFMT_BUFSZ];

	assert_int_equal(timefmt_format(t, iso), 0);
	return sh("%s/build/arps-sweep --config %s --now %s 2>%s", getenv("ARPS_ROOT"),
	    getenv("ARPS_CONFIG"), iso, log);
}

/* The rows the sweep log says table lost (-1 when no line). */
static long long
lost(const char *log, const char *table)
{
	char line[512], want[128];
	long long n = -1, v;
	FILE *f;

	snprintf(want, sizeof want, "retention: %s", table);
	assert_non_null(f = fopen(log, "r"));
	while (fgets(line, sizeof line, f) != NULL) {
		const char *p = strstr(line, want), *l;

		/* "retention: outbox (sent) lost 3 row(s) ..." */
		if (p != NULL && (p[strlen(want)] == ' ') && (l = strstr(p, " lost ")) != NULL &&
		    sscanf(l + 6, "%lld", &v) == 1)
			n = n < 0 ? v : n + v;
	}
	fclose(f);
	return n;
}

static void
retention_shrinks_tables(void **state)
{
	long long before[NTABLES], mid[NTABLES], after[NTABLES];
	char log1[1024], log2[1024], key[64], ip[32];
	struct test_user u, v;
	struct test_agent a;
	struct resp r;
	int64_t t;
	size_t i;

	(void)state;
	/* an idempotent registration, logins (rate events, codes, tokens,
	 * mail), a revoked token, a code left unused */
	snprintf(key, sizeof key, "retention-%08x%08x-key", randombytes_random(), randombytes_random());
	{
		char hdr[128];

		snprintf(hdr, sizeof hdr, "Idempotency-Key: %s", key);
		r = http_req("POST", "/api/v1/agents/register",
		    "{\"name\":\"Kept\",\"description\":\"retention\"}", HDRS(hdr), random_ip(ip));
		assert_int_equal(r.status, 201);
		resp_free(&r);
	}
	agent_new(&a, "Retained");
	user_login(&u, "ret");
	user_login(&v, "ret");
	r = http_post("/api/v1/auth/logout", NULL, HDRS(v.hdr));
	assert_true(r.status == 200 || r.status == 204);
	resp_free(&r);
	{
		char email[128];

		uniq_email(email, sizeof email, "unused");
		send_code_ok(email);
	}
	assert_true(wait_sql(0, 3000, "SELECT COUNT(*) FROM outbox WHERE state = 'pending'"
	    " AND kind = 'mail'"));
	counts(before);
	for (i = 0; i < NTABLES; i++) {
		print_message("%s: %lld rows\n", tables[i], before[i]);
		assert_true(before[i] > 0);
	}
	t = sql_int("SELECT UNIX_TIMESTAMP()");
	snprintf(log1, sizeof log1, "%s/log/retention-1.log", var_dir());
	snprintf(log2, sizeof log2, "%s/log/retention-2.log", var_dir());
	/* two days on: idempotency records, rate events and buckets, login
	 * codes gone; tokens and mail kept */
	assert_int_equal(sweep_at(t + 2 * 86400, log1), 0);
	counts(mid);
	assert_int_equal(mid[0], 0);
	assert_int_equal(mid[1], 0);
	assert_int_equal(mid[2], 0);
	assert_int_equal(mid[3], 0);
	assert_true(mid[4] > 0 && mid[4] == before[4]);
	assert_true(mid[5] > 0 && mid[5] == before[5]);
	assert_int_equal(lost(log1, "idempotency_keys"), before[0]);
	assert_int_equal(lost(log1, "rate_events"), before[1]);
	assert_int_equal(lost(log1, "rate_buckets"), before[2]);
	assert_int_equal(lost(log1, "login_codes"), before[3]);
	assert_int_equal(lost(log1, "access_tokens"), 0);
	assert_int_equal(lost(log1, "outbox"), 0);
	/* 61 days on: 30 days past every token's expiry and every mail's
	 * sending */
	assert_int_equal(sweep_at(t + 61 * 86400, log2), 0);
	counts(after);
	for (i = 0; i < NTABLES; i++)
		assert_int_equal(after[i], 0);
	assert_int_equal(lost(log2, "access_tokens"), before[4]);
	assert_int_equal(lost(log2, "outbox"), before[5]);
	/* a second run finds nothing */
	assert_int_equal(sweep_at(t + 61 * 86400, log2), 0);
	assert_int_equal(lost(log2, "access_tokens"), 0);
	/* the service goes on */
	user_login(&u, "after");
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(mail_within_a_second, deliver_back),
		cmocka_unit_test_teardown(payload_sealed, deliver_back),
		cmocka_unit_test_teardown(sigkill_mid_delivery, deliver_back),
		cmocka_unit_test(no_descriptor_leaks_into_sendmail),
		cmocka_unit_test_teardown(sigterm_finishes_message, deliver_back),
		cmocka_unit_test_teardown(two_deliverers_at_once, deliver_back),
		cmocka_unit_test_teardown(failing_transport_backoff, deliver_back),
		cmocka_unit_test_teardown(gives_up, deliver_back),
		cmocka_unit_test_teardown(smtp_transport, deliver_back),
		cmocka_unit_test(worker_descriptors),
		cmocka_unit_test_teardown(workers_never_fork_or_connect, deliver_back),
		cmocka_unit_test(retention_shrinks_tables),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_deliver", tests, NULL, NULL);
}
