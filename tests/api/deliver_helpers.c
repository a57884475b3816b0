#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/api/client.h"
#include "tests/api/deliver_helpers.h"

const char *
var_dir(void)
{
	return getenv("ARPS_VAR");
}

void
stack_deliver_stop(void)
{
	assert_int_equal(sh("%s/tools/dev.sh deliver-stop", getenv("ARPS_ROOT")), 0);
}

int
stack_deliver_start(void **state)
{
	char pidf[1024];
	struct stat st;

	(void)state;
	snprintf(pidf, sizeof pidf, "%s/run/arps-deliver.pid", var_dir());
	if (stat(pidf, &st) != 0)
		return sh("%s/tools/dev.sh deliver-start", getenv("ARPS_ROOT"));
	return 0;
}

void
conf_with(char *path, size_t n, const char *name, const char *extra)
{
	snprintf(path, n, "%s/%s.conf", var_dir(), name);
	assert_int_equal(sh("cp %s %s && printf '%%s\\n' '%s' >> %s", getenv("ARPS_CONFIG"), path,
	    extra, path), 0);
}

void
script(char *path, size_t n, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, n, "%s/%s", var_dir(), name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

pid_t
deliver_spawn(const char *conf)
{
	char bin[1024], log[1024];
	pid_t pid;

	snprintf(bin, sizeof bin, "%s/build/arps-deliver", getenv("ARPS_ROOT"));
	snprintf(log, sizeof log, "%s/log/deliver-test.log", var_dir());
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

int
reap(pid_t pid, int sig)
{
	int status = 0;

	kill(pid, sig);
	waitpid(pid, &status, 0);
	return status;
}
