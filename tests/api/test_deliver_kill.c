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

#include "tests/api/study_helpers.h"

static const char *
var(void)
{
	return getenv("ARPS_VAR");
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The stack's config plus extra lines (the last value of a key wins). */
static void
conf_with(char *path, size_t n, const char *name, const char *extra)
{
	snprintf(path, n, "%s/%s.conf", var(), name);
	assert_int_equal(sh("cp %s %s && printf '%%s\\n' '%s' >> %s", getenv("ARPS_CONFIG"), path,
	    extra, path), 0);
}

/* An arps-deliver of our own with conf; its log goes to log/deliver-test.log. */
static pid_t
deliver_spawn(const char *conf)
{
	char bin[1024], log[1024];
	pid_t pid;

	snprintf(bin, sizeof bin, "%s/build/arps-deliver", getenv("ARPS_ROOT"));
	snprintf(log, sizeof log, "%s/log/deliver-test.log", var());
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execl(bin, "arps-deliver", "--config", conf, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int
reap(pid_t pid, int sig)
{
	int status = 0;

	kill(pid, sig);
	waitpid(pid, &status, 0);
	return status;
}

/* Wait up to ms for a query to answer want. */
static int
wait_sql(long long want, long ms, const char *q)
{
	int64_t end = now_ms() + ms;

	do {
		if (sql_int("%s", q) == want)
			return 1;
		sleep_ms(100);
	} while (now_ms() < end);
	return 0;
}

static int
dir_has(const char *dir, const char *part)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, part) != NULL)
			n++;
	closedir(d);
	return n;
}

/* Files in dir ending in .eml with a "To: email" line. */
static int
files_to(const char *dir, const char *email)
{
	char path[2048], line[512];
	struct dirent *de;
	int n = 0;
	DIR *d;
	FILE *f;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);

		if (l < 5 || strcmp(de->d_name + l - 4, ".eml") != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof line, f) != NULL)
			if (strncmp(line, "To: ", 4) == 0 && strncmp(line + 4, email, strlen(email)) == 0 &&
			    line[4 + strlen(email)] == '\n') {
				n++;
				break;
			}
		fclose(f);
	}
	closedir(d);
	return n;
}

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
	char emails[NMAIL][128], conf[1024], prog[1024], out[1024], extra[1400], q[256], body[5400];
	char ip[32];
	long long seq, sent_at_kill, tries, twice;
	pid_t a, b;
	int i, st;
	FILE *f;

	(void)state;
	snprintf(prog, sizeof prog, "%s/kill-sendmail", var());
	assert_non_null(f = fopen(prog, "w"));
	fputs(slow_sendmail, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(prog, 0755), 0);
	snprintf(out, sizeof out, "%s/mail-kill", var());
	assert_int_equal(sh("rm -rf %s && mkdir -p %s", out, out), 0);
	snprintf(extra, sizeof extra, "mail_transport = sendmail:%s\ndeliver_timeout = 3\n"
	    "deliver_claim_seconds = 4\nmail_retry_min = 1\nmail_retry_max = 1", prog);
	conf_with(conf, sizeof conf, "deliver-kill", extra);
	assert_int_equal(sh("%s/tools/dev.sh deliver-stop", getenv("ARPS_ROOT")), 0);
	seq = sql_int("SELECT COALESCE(MAX(seq), 0) FROM outbox");
	for (i = 0; i < NMAIL; i++) {
		struct resp r;

		uniq_email(emails[i], sizeof emails[i], "batchkill");
		snprintf(body, sizeof body, "{\"email\":\"%s\"}", emails[i]);
		r = http_req("POST", "/api/v1/auth/email/send-code", body, NULL, random_ip(ip));
		assert_int_equal(r.status, 202);
		resp_free(&r);
	}
	a = deliver_spawn(conf);
	/* mid-batch: some sent, most not, one in the transport */
	for (i = 0; i < 1000 && !(dir_has(out, ".eml") >= NMAIL / 4 && dir_has(out, ".in.") >= 1); i++)
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
		assert_int_equal(files_to(out, emails[i]), 1);
	assert_int_equal(dir_has(out, ".eml"), NMAIL);
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

/* The stack's own deliverer again (tools/dev.sh, var/run/arps-deliver.pid),
 * whether the test passed or not: the next one needs its mail. */
static int
stack_deliver_start(void **state)
{
	char pidf[1024];
	struct stat st;

	(void)state;
	snprintf(pidf, sizeof pidf, "%s/run/arps-deliver.pid", var());
	if (stat(pidf, &st) != 0)
		return sh("%s/tools/dev.sh deliver-start", getenv("ARPS_ROOT"));
	return 0;
}

/* --- webhooks ------------------------------------------------------------ */

#define MAX_HITS 512

static struct receiver {
	int fd, port;
	pthread_t th;
	pthread_mutex_t mu;
	char ids[MAX_HITS][64];
	int64_t at[MAX_HITS];
	int nhits;
	volatile int done;
} rx;

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

/* One request at a time, 20 ms each, answered 200. */
static void *
serve(void *arg)
{
	(void)arg;
	while (!rx.done) {
		char buf[65536], len[32];
		static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
		    "Connection: close\r\n\r\n";
		size_t got = 0;
		ssize_t r;
		char *hend;
		int c;

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
				if (got >= (size_t)(hend + 4 - buf) + (size_t)atol(len))
					break;
			}
		}
		buf[got] = '\0';
		pthread_mutex_lock(&rx.mu);
		if (rx.nhits < MAX_HITS && strstr(buf, "\r\n\r\n") != NULL) {
			header_value(buf, "Arps-Event-Id:", rx.ids[rx.nhits], sizeof rx.ids[0]);
			rx.at[rx.nhits] = now_ms();	/* when the request was in */
			rx.nhits++;
		}
		pthread_mutex_unlock(&rx.mu);
		sleep_ms(20);
		(void)!write(c, reply, sizeof reply - 1);
		close(c);
	}
	return NULL;
}

static void
rx_start(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	int one = 1;

	memset(&rx, 0, sizeof rx);
	pthread_mutex_init(&rx.mu, NULL);
	assert_true((rx.fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	setsockopt(rx.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(rx.fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(rx.fd, (struct sockaddr *)&sa, &sl), 0);
	rx.port = ntohs(sa.sin_port);
	assert_int_equal(listen(rx.fd, 64), 0);
	assert_int_equal(pthread_create(&rx.th, NULL, serve, NULL), 0);
}

static void
rx_stop(void)
{
	rx.done = 1;
	shutdown(rx.fd, SHUT_RDWR);
	close(rx.fd);
	pthread_join(rx.th, NULL);
}

static int
rx_hits(void)
{
	int n;

	pthread_mutex_lock(&rx.mu);
	n = rx.nhits;
	pthread_mutex_unlock(&rx.mu);
	return n;
}

static int
rx_distinct(void)
{
	int i, j, n = 0;

	pthread_mutex_lock(&rx.mu);
	for (i = 0; i < rx.nhits; i++) {
		for (j = 0; j < i && strcmp(rx.ids[j], rx.ids[i]) != 0; j++)
			;
		n += j == i;
	}
	pthread_mutex_unlock(&rx.mu);
	return n;
}

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
	rx_start();
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
	assert_int_equal(sh("%s/tools/dev.sh deliver-stop", getenv("ARPS_ROOT")), 0);
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
	for (i = 0; i < 2000 && rx_hits() < (int)nev / 4; i++)
		sleep_ms(5);
	assert_true(WIFSIGNALED(reap(a, SIGKILL)));
	kill_at = now_ms();
	hits_at_kill = rx_hits();
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

		snprintf(q, sizeof q, "SELECT id FROM events WHERE owner_id = '%s' AND type ="
		    " 'study.status_changed' ORDER BY seq LIMIT 1 OFFSET %d", res.id, i);
		{
			FILE *p;
			char cmd[2048];

			snprintf(cmd, sizeof cmd, "mariadb --no-defaults -N -B -S %s/run/mysqld.sock"
			    " -u \"$(id -un)\" arps -e \"%s\"", var(), q);
			assert_non_null(p = popen(cmd, "r"));
			id[0] = '\0';
			if (fgets(id, sizeof id, p) != NULL)
				id[strcspn(id, "\n")] = '\0';
			pclose(p);
		}
		for (j = 0; j < rx.nhits && strcmp(rx.ids[j], id) != 0; j++)
			;
		assert_true(j < rx.nhits);
	}
	/* twice only what was in flight at the kill: sent by the killed
	 * deliverer (the receiver reads one request at a time, 20 ms each,
	 * so it may read the last of them just after the kill), never
	 * marked; sent again after the claim's lease, with the same id */
	for (i = 0; i < rx.nhits; i++)
		for (j = 0; j < i; j++)
			if (strcmp(rx.ids[j], rx.ids[i]) == 0) {
				dups++;
				assert_true(rx.at[j] <= kill_at + 20 * CONCURRENCY + 400);
				assert_true(rx.at[i] >= kill_at);
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
