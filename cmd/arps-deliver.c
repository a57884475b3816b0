/*
 * arps-deliver: delivers the mail outbox and the webhook deliveries
 * (deliver/deliver.h), the one process that sends anything out.  Usage:
 * arps-deliver [--config PATH].  SIGTERM or SIGINT: the message in hand is
 * finished, then exit 0.  Any number may run at once (claims skip locked
 * rows).  Exit 2 on a bad configuration, 1 when libsodium fails.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "lib/config.h"
#include "deliver/deliver.h"
#include "lib/log.h"
#include "lib/secret.h"

static struct config cfg;
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
	struct sigaction sa;
	char err[1024];

	log_init("arps-deliver");
	if (secret_init() != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		fprintf(stderr, "arps-deliver: libsodium or libcurl failed to initialise\n");
		return 1;
	}
	if (config_load(&cfg, config_path(argc, argv), err, sizeof err) != 0) {
		fprintf(stderr, "arps-deliver: %s\n", err);
		return 2;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;	/* no SA_RESTART: the idle sleep ends at once */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return deliver_run(&cfg, &stop);
}
