/* arps-fcgi: the FastCGI prefork pool.  Usage: arps-fcgi [--config PATH] */
#include <stdio.h>

#include "fcgi/pool.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"

static struct config cfg;	/* pool_run may reload it (SIGHUP) */

int
main(int argc, char *argv[])
{
	char err[1024];

	log_init("arps-fcgi");
	if (secret_init() != 0) {
		fprintf(stderr, "arps-fcgi: libsodium failed to initialise\n");
		return 1;
	}
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-fcgi: %s\n", err);
		return 2;
	}
	return pool_run(&cfg);
}
