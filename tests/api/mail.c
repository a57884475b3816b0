#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "tests/api/mail.h"

/* A message file of a sink: a name ending in .eml, not a hidden temporary. */
static int
is_eml(const char *name)
{
	size_t l = strlen(name);

	return l >= 5 && strcmp(name + l - 4, ".eml") == 0 && name[0] != '.';
}

int
mail_is_to(const char *path, const char *email)
{
	char line[512];
	size_t el = strlen(email);
	int found = 0;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = strncmp(line, "To: ", 4) == 0 && strncmp(line + 4, email, el) == 0 &&
		    line[4 + el] == '\n';
	fclose(f);
	return found;
}

int
mail_count_to(const char *dir, const char *email)
{
	char path[2048];
	struct dirent *de;
	int n = 0;
	DIR *d;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (!is_eml(de->d_name))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		n += mail_is_to(path, email);
	}
	closedir(d);
	return n;
}

int
dir_count(const char *dir, const char *part)
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

/* Paths of the mails mail_code has already returned (one per login). */
static char seen[64][300];
static size_t nseen;

static int
mail_seen(const char *path)
{
	size_t i;

	for (i = 0; i < nseen && i < sizeof seen / sizeof seen[0]; i++)
		if (strcmp(seen[i], path) == 0)
			return 1;
	return 0;
}

/* The newest mail to email in the dev mail sink not returned before, into
 * best (empty when none). */
static void
mail_newest(const char *email, char *best, size_t bestsz)
{
	char dir[1024], path[2048];
	long long bestm = -1;
	struct dirent *de;
	struct stat st;
	DIR *d;

	best[0] = '\0';
	snprintf(dir, sizeof dir, "%s/mail", getenv("ARPS_VAR"));
	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (!is_eml(de->d_name))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (mail_seen(path))
			continue;
		if (mail_is_to(path, email) && stat(path, &st) == 0) {
			long long m = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
			if (m > bestm) {
				bestm = m;
				snprintf(best, bestsz, "%s", path);
			}
		}
	}
	closedir(d);
}

void
mail_code(const char *email, char code[8])
{
	struct timespec tick = { 0, 20 * 1000000L };
	char best[2048] = "", line[512];
	FILE *f;
	size_t n;
	int i;

	code[0] = '\0';
	/* arps-deliver writes the file within a second of the request: wait
	 * up to 3 s for a mail not returned before. */
	for (i = 0; i < 150; i++) {
		mail_newest(email, best, sizeof best);
		if (best[0] != '\0')
			break;
		nanosleep(&tick, NULL);
	}
	if (best[0] == '\0')
		print_error("no mail to %s in %s/mail after 3 s\n", email, getenv("ARPS_VAR"));
	assert_true(best[0] != '\0');
	/* memcpy of a length checked here: gcc -O1 with the sanitizers (make
	 * asan, CI=true) took snprintf's "%s" for a truncation. */
	if ((n = strlen(best)) < sizeof seen[0]) {
		memcpy(seen[nseen % (sizeof seen / sizeof seen[0])], best, n + 1);
		nseen++;
	}
	assert_non_null(f = fopen(best, "r"));
	while (fgets(line, sizeof line, f) != NULL) {
		const char *p = strstr(line, "login code is ");
		if (p != NULL && sscanf(p + 14, "%6s", code) == 1)
			break;
	}
	fclose(f);
	assert_int_equal(strlen(code), 6);
}

