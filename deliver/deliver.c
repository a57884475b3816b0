#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "db/db.h"
#include "db/outbox.h"
#include "lib/config.h"
#include "deliver/deliver.h"
#include "deliver/webhook.h"
#include "lib/log.h"
#include "lib/mail.h"

int64_t
deliver_next_try(const struct config *cfg, int64_t created, int64_t attempts, int64_t now)
{
	int64_t delay = cfg->mail_retry_min, end = created + cfg->mail_give_up, i;

	if (now >= end)
		return 0;
	for (i = 1; i < attempts && delay < cfg->mail_retry_max; i++)
		delay *= 2;
	if (delay > cfg->mail_retry_max)
		delay = cfg->mail_retry_max;
	return now + delay < end ? now + delay : end;
}

/* Send one claimed mail; 0 sent, -1 failed (reason in err). */
static int
send_mail(const struct config *cfg, const struct outbox_item *it, char *err, size_t errsz)
{
	struct mail_msg m;
	char *text;
	size_t len = 0;
	int rc;

	if (mail_open(cfg, it->id, it->payload, it->plen, &m) != 0) {
		snprintf(err, errsz, "cannot open the sealed payload (pepper changed?)");
		return -2;
	}
	if ((text = mail_format(cfg, &m, it->created_at, &len)) == NULL) {
		mail_msg_clear(&m);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	rc = mail_transmit(cfg, &m, text, len, err, errsz);
	sodium_memzero(text, len);
	free(text);
	mail_msg_clear(&m);
	return rc;
}

int
deliver_one(struct db *db, const struct config *cfg)
{
	struct outbox_item it;
	char err[256];
	int64_t now = (int64_t)time(NULL), next;
	int got, rc;
	enum db_rc drc;

	if (db_outbox_claim(db, OUTBOX_MAIL, now, cfg->deliver_claim_seconds, &it, &got) != DB_OK) {
		log_msg("outbox: claim failed: %s", db_error(db));
		return -1;
	}
	if (!got)
		return 0;
	rc = send_mail(cfg, &it, err, sizeof err);
	now = (int64_t)time(NULL);
	if (rc == 0) {
		drc = db_outbox_sent(db, it.seq, now);
		log_msg("%s: sent (try %lld)", it.id, (long long)it.attempts);
	} else if (rc == -2 || (next = deliver_next_try(cfg, it.created_at, it.attempts, now)) == 0) {
		drc = db_outbox_dead(db, it.seq, now, err);
		log_msg("%s: given up after %lld tries: %s", it.id, (long long)it.attempts, err);
	} else {
		drc = db_outbox_retry(db, it.seq, next, err);
		log_msg("%s: try %lld failed, next in %lld s: %s", it.id, (long long)it.attempts,
		    (long long)(next - now), err);
	}
	if (drc != DB_OK)	/* the claim expires; the message goes again */
		log_msg("%s: cannot record the outcome: %s", it.id, db_error(db));
	outbox_item_clear(&it);
	return drc == DB_OK ? 1 : -1;
}

/* The webhook pump in a thread of its own, on its own connection: a slow
 * SMTP relay never holds up webhook tries, and a receiver whose name does
 * not resolve never holds up login-code mail. */
struct pump_arg {
	const struct config *cfg;
	volatile sig_atomic_t *stop;
	int rc;
};

static void *
pump_main(void *arg)
{
	struct pump_arg *a = arg;
	struct webhook_pump *pump = NULL;
	struct db *db;

	if ((db = db_open(a->cfg)) == NULL || (pump = webhook_pump_new(a->cfg)) == NULL) {
		log_msg("webhooks: out of memory");
		db_close(db);
		a->rc = 1;
		return NULL;
	}
	/* On a stop no delivery is claimed; the tries in flight end (each
	 * within its time-out, well inside the lease). */
	while (!*a->stop || webhook_pump_inflight(pump) > 0)
		if (webhook_pump_step(pump, db, *a->stop ? 100 : 200, !*a->stop) < 0)
			(void)db_ensure(db);
	webhook_pump_free(pump);
	db_close(db);
	return NULL;
}

int
deliver_run(const struct config *cfg, volatile sig_atomic_t *stop)
{
	struct pump_arg pa = { cfg, stop, 0 };
	sigset_t all, old;
	pthread_t pump;
	struct db *db;
	int rc, gone = 0;

	/* Connect first (a database still down is retried by the loops): that
	 * initialises the client library before a second thread opens its own
	 * connection. */
	if ((db = db_open(cfg)) == NULL) {
		log_msg("out of memory");
		return 1;
	}
	(void)db_ensure(db);
	/* Signals go to this thread (the pump's inherits them blocked). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&pump, NULL, pump_main, &pa);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_msg("cannot start the webhook thread");
		db_close(db);
		return 1;
	}
	log_msg("delivering mail by %.*s every %lld ms, webhooks %lld at once",
	    (int)strcspn(cfg->mail_transport, ":"), cfg->mail_transport,
	    (long long)cfg->deliver_poll_ms, (long long)cfg->webhook_concurrency);
	while (!*stop) {
		if ((rc = deliver_one(db, cfg)) > 0) {
			gone = 0;
			continue;
		}
		if (rc < 0 && gone++ == 0)
			log_msg("database unavailable; retrying");
		if (rc == 0)
			gone = 0;
		{
			int64_t ms = rc < 0 ? 1000 : cfg->deliver_poll_ms;
			struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);	/* a signal ends it early */
		}
	}
	pthread_join(pump, NULL);
	log_msg("stopped");
	db_close(db);
	return pa.rc;
}
