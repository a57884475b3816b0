#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/config.h"
#include "lib/log.h"
#include "lib/mail.h"

static int
compose(FILE *f, const struct config *cfg, const char *to, const char *subject, const char *body)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
	fprintf(f, "From: %s\nTo: %s\nSubject: %s\nDate: %s\nMIME-Version: 1.0\n"
	    "Content-Type: text/plain; charset=utf-8\n\n%s\n", cfg->mail_from, to, subject, date, body);
	return ferror(f) ? -1 : 0;
}

int
mail_send(const struct config *cfg, const char *to, const char *subject, const char *body)
{
	FILE *f;
	int rc;

	if (strpbrk(to, "\r\n") != NULL || strpbrk(subject, "\r\n") != NULL)
		return -1;
	if (strncmp(cfg->mail_transport, "file:", 5) == 0) {
		char path[1024], tmp[1100];
		int fd;

		snprintf(path, sizeof path, "%s/%lld-%08x.eml", cfg->mail_transport + 5,
		    (long long)time(NULL), randombytes_random());
		snprintf(tmp, sizeof tmp, "%s.tmp", path);
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
		    (f = fdopen(fd, "w")) == NULL) {
			log_msg("mail: %s: %s", tmp, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		rc = compose(f, cfg, to, subject, body);
		if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
			log_msg("mail: cannot write %s", path);
			unlink(tmp);
			return -1;
		}
		return 0;
	}
	if ((f = popen("/usr/sbin/sendmail -t -i", "w")) == NULL) {
		log_msg("mail: cannot run sendmail: %s", strerror(errno));
		return -1;
	}
	rc = compose(f, cfg, to, subject, body);
	if (pclose(f) != 0 || rc != 0) {
		log_msg("mail: sendmail failed");
		return -1;
	}
	return 0;
}
