/* The transports of lib/mail.h; linked into arps-deliver only (the workers
 * never send mail, so they carry no libcurl and never fork). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "lib/clock.h"
#include "lib/config.h"
#include "lib/mail.h"

#define SENDMAIL_DEFAULT "/usr/sbin/sendmail"

static int
failf(char *err, size_t n, const char *what, const char *why)
{
	snprintf(err, n, "%s: %s", what, why);
	return -1;
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* file:DIR: DIR/.<id>.<pid>.tmp, fsync, rename to DIR/<id>.eml, fsync DIR.
 * A re-send of the same message replaces the file with identical bytes. */
static int
send_file(const char *dir, const struct mail_msg *m, const char *text, size_t len,
    char *err, size_t errsz)
{
	char path[CONFIG_STR + 64], tmp[CONFIG_STR + 64];
	int fd, dfd;

	snprintf(path, sizeof path, "%s/%s.eml", dir, m->id);
	snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, m->id, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return failf(err, errsz, tmp, strerror(errno));
	if (write_all(fd, text, len) != 0 || fsync(fd) != 0) {
		failf(err, errsz, tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		failf(err, errsz, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* sendmail[:PATH]: PATH -t -i with the message on its standard input; the
 * child gets only that pipe and /dev/null (no other descriptor survives
 * exec) and is killed after the time-out. */
static int
send_sendmail(const struct config *cfg, const char *prog, const char *text, size_t len,
    char *err, size_t errsz)
{
	int64_t deadline = clock_mono_ms() + cfg->deliver_timeout * 1000;
	int pfd[2], status = 0, killed = 0;
	size_t off = 0;
	pid_t pid, w;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return failf(err, errsz, "pipe", strerror(errno));
	if ((pid = fork()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return failf(err, errsz, "fork", strerror(errno));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC), fd;
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGPIPE, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (dup2(pfd[0], 0) < 0 || (nul >= 0 && dup2(nul, 1) < 0))
			_exit(127);
		/* Belt and braces: whatever was opened without CLOEXEC. */
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		execl(prog, "sendmail", "-t", "-i", (char *)NULL);
		_exit(127);
	}
	close(pfd[0]);
	fcntl(pfd[1], F_SETFL, fcntl(pfd[1], F_GETFL) | O_NONBLOCK);
	while (off < len) {
		struct pollfd p = { .fd = pfd[1], .events = POLLOUT };
		int64_t left = deadline - clock_mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			break;
		n = write(pfd[1], text + off, len - off);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(pfd[1]);
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (!killed && clock_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		usleep(10000);
	}
	if (killed)
		return failf(err, errsz, prog, "timed out");
	if (off < len)
		return failf(err, errsz, prog, "did not read the whole message");
	if (w != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char why[64];

		if (w == pid && WIFEXITED(status))
			snprintf(why, sizeof why, "exited %d", WEXITSTATUS(status));
		else if (w == pid && WIFSIGNALED(status))
			snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
		else
			snprintf(why, sizeof why, "lost");
		return failf(err, errsz, prog, why);
	}
	return 0;
}

struct upload {
	const char *p;
	size_t left;
};

static size_t
reader(char *buf, size_t size, size_t nitems, void *arg)
{
	struct upload *u = arg;
	size_t n = size * nitems;

	if (n > u->left)
		n = u->left;
	memcpy(buf, u->p, n);
	u->p += n;
	u->left -= n;
	return n;
}

/* The address inside "Name <addr>" or the bare address, in angle brackets. */
static void
angle(char *dst, size_t n, const char *addr)
{
	const char *lt = strchr(addr, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt != NULL && gt != NULL)
		snprintf(dst, n, "%.*s", (int)(gt - lt + 1), lt);
	else
		snprintf(dst, n, "<%s>", addr);
}

/* smtp[s]://HOST[:PORT] through libcurl; CURLOPT_CRLF makes the LF text
 * CRLF and libcurl dot-stuffs it. */
static int
send_smtp(const struct config *cfg, const struct mail_msg *m, const char *text, size_t len,
    char *err, size_t errsz)
{
	static int inited;
	char from[CONFIG_STR + 2], rcpt[MAIL_ADDR_MAX + 3];
	struct upload u = { text, len };
	struct curl_slist *to = NULL;
	CURLcode cc;
	CURL *c;

	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			return failf(err, errsz, "smtp", "curl_global_init failed");
		inited = 1;
	}
	if ((c = curl_easy_init()) == NULL)
		return failf(err, errsz, "smtp", "curl_easy_init failed");
	angle(from, sizeof from, cfg->mail_from);
	angle(rcpt, sizeof rcpt, m->to);
	if ((to = curl_slist_append(NULL, rcpt)) == NULL) {
		curl_easy_cleanup(c);
		return failf(err, errsz, "smtp", "out of memory");
	}
	curl_easy_setopt(c, CURLOPT_URL, cfg->mail_transport);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, to);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, reader);
	curl_easy_setopt(c, CURLOPT_READDATA, &u);
	curl_easy_setopt(c, CURLOPT_INFILESIZE, (long)len);
	curl_easy_setopt(c, CURLOPT_CRLF, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)cfg->deliver_timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(cfg->deliver_timeout < 10 ?
	    cfg->deliver_timeout : 10));
	if (cfg->mail_smtp_user[0] != '\0') {
		curl_easy_setopt(c, CURLOPT_USERNAME, cfg->mail_smtp_user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, cfg->mail_smtp_password);
		/* Credentials never cross in clear: STARTTLS or smtps required. */
		curl_easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	}
	cc = curl_easy_perform(c);
	curl_slist_free_all(to);
	curl_easy_cleanup(c);
	if (cc != CURLE_OK)
		return failf(err, errsz, "smtp", curl_easy_strerror(cc));
	return 0;
}

int
mail_transmit(const struct config *cfg, const struct mail_msg *m, const char *text,
    size_t len, char *err, size_t errsz)
{
	const char *t = cfg->mail_transport;

	err[0] = '\0';
	if (strncmp(t, "file:", 5) == 0)
		return send_file(t + 5, m, text, len, err, errsz);
	if (strcmp(t, "sendmail") == 0)
		return send_sendmail(cfg, SENDMAIL_DEFAULT, text, len, err, errsz);
	if (strncmp(t, "sendmail:", 9) == 0)
		return send_sendmail(cfg, t + 9, text, len, err, errsz);
	if (strncmp(t, "smtp://", 7) == 0 || strncmp(t, "smtps://", 8) == 0)
		return send_smtp(cfg, m, text, len, err, errsz);
	return failf(err, errsz, "mail_transport", "unknown transport");
}
