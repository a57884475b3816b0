/*
 * arps-deliver: the one process that sends anything out (design.md §1).
 * Here: webhook deliveries (design.md §11), by the pump of lib/webhook.h.
 * Usage: arps-deliver [--config PATH] [--once]
 * Runs until SIGTERM or SIGINT, then lets the tries in flight finish (each
 * ends within its time-out).  --once: deliver what is due, then exit.
 * Exit 0, 1 when the database cannot be reached at start, 2 on usage.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "db/db.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/secret.h"
#include "lib/webhook.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char *argv[])
{
	static struct config cfg;
	struct webhook_pump *pump;
	struct sigaction sa;
	struct db *db;
	char err[1024];
	int i, once = 0, r;

	log_init("arps-deliver");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			i++;
		else if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else {
			fprintf(stderr, "usage: arps-deliver [--config PATH] [--once]\n");
			return 2;
		}
	}
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-deliver: %s\n", err);
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (secret_init() != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != 0 ||
	    (db = db_open(&cfg)) == NULL)
		return 1;
	if (db_ensure(db) != DB_OK) {
		log_msg("cannot connect to the database: %s", db_error(db));
		db_close(db);
		return 1;
	}
	if ((pump = webhook_pump_new(&cfg)) == NULL) {
		db_close(db);
		return 1;
	}
	log_msg("delivering webhooks, at most %lld at once", (long long)cfg.webhook_concurrency);
	while (!stop || webhook_pump_inflight(pump) > 0) {
		r = webhook_pump_step(pump, db, stop ? 100 : 200);
		if (r < 0)
			(void)db_ensure(db);
		if (once && r == 0 && webhook_pump_inflight(pump) == 0)
			break;
		if (stop && webhook_pump_inflight(pump) == 0)
			break;
	}
	webhook_pump_free(pump);
	db_close(db);
	curl_global_cleanup();
	return 0;
}
