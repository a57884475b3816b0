/* db/events.c: an event flush reads the owner's webhooks without locking
 * them (design.md §11.4).  The deliverer changes a webhook row first and
 * the owner's event head after it (webhook.disabled); a flush takes the
 * head first, so a shared lock it kept on the webhook row would close a
 * deadlock.  Here a second connection changes the owner's webhook (its
 * status, a column of the index the flush reads) while the flush's
 * transaction is still open: it must not wait. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/events.h"
#include "core/ids.h"
#include "db/accounts.h"
#include "db/db.h"
#include "db/events.h"
#include "db/webhooks.h"
#include "lib/config.h"
#include "lib/secret.h"
#include "tests/db/dbtest.h"

static struct config cfg;
static struct db *db, *db2;

static int
setup(void **state)
{
	(void)state;
	if (dbtest_setup(&cfg, &db) != 0 || (db2 = db_open(&cfg)) == NULL)
		return -1;
	db_set_limit(db2, 2);	/* a lock wait ends in 2 s: DB_RETRY */
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db2);
	db_close(db);
	return 0;
}

static void
flush_leaves_webhooks_unlocked(void **state)
{
	char owner[IDS_BUFSZ], secret[WEBHOOK_SECRET_BUFSZ];
	unsigned char key[32], claim[32];
	struct agent a;
	struct webhook w;
	struct event_row *ev = NULL;
	enum arps_err outcome;
	int64_t now = time(NULL);
	struct timespec t0, t1;
	size_t n = 0;
	double secs;

	(void)state;
	/* the owner: a hook's create locks its row (issue 36) */
	memset(&a, 0, sizeof a);
	assert_int_equal(ids_new(IDS_AGENT, &secret_rng, a.id), 0);
	snprintf(a.name, sizeof a.name, "flush");
	a.reputation = 50;
	a.created_at = now;
	randombytes_buf(key, sizeof key);
	randombytes_buf(claim, sizeof claim);
	assert_int_equal(db_agent_insert(db, &a, key, claim, "127.0.0.1"), DB_OK);
	snprintf(owner, sizeof owner, "%s", a.id);
	/* a hook for another type: the flush reads it, queues no delivery */
	assert_int_equal(db_webhook_create(db, &cfg, owner, "https://hooks.example.org/arps",
	    event_type_name(EV_STUDY_COMPLETED), now, &w, secret, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);

	assert_int_equal(db_begin(db), DB_OK);
	assert_int_equal(db_event(db, owner, EV_PART_ACCEPTED, now, "{\"n\":%d}", 1), DB_OK);
	assert_int_equal(db_events_flush(db), DB_OK);	/* head, its check of the hooks, event */

	/* the flush's transaction is open: the hook changes at once */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(db_webhook_delete(db2, owner, w.id, now), DB_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(secs < 1.0);

	assert_int_equal(db_commit(db), DB_OK);
	assert_int_equal(db_events_list(db, owner, NULL, 0, 10, &ev, &n), DB_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].seq, 1);
	assert_string_equal(ev[0].type, "participation.accepted");
	db_events_free(ev, n);
	webhook_clear(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flush_leaves_webhooks_unlocked),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
