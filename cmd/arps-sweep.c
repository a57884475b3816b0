/* arps-sweep: the cron-invoked jobs.  Usage: arps-sweep [--config PATH] [--now ISO8601] */
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "lib/config.h"
#include "lib/log.h"

static struct config cfg;

int
main(int argc, char *argv[])
{
	char err[1024];

	log_init("arps-sweep");
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-sweep: %s\n", err);
		return 2;
	}
	fprintf(stderr, "arps-sweep: no jobs yet\n");
	return 0;
}
