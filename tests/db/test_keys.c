/* design.md §9.6 in db/accounts.c: a rotated API key works until its grace
 * period ends or the new key is first used, whichever is sooner; an
 * owner's replacement leaves no previous key.  The lookup takes the time,
 * so the 10 minutes are checked without waiting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/ids.h"
#include "db/accounts.h"
#include "db/db.h"
#include "lib/config.h"
#include "lib/secret.h"
#include "tests/db/dbtest.h"

static struct config cfg;
static struct db *db;

static int
setup(void **state)
{
	(void)state;
	return dbtest_setup(&cfg, &db);
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	return 0;
}

/* A fresh agent with key hash k1. */
static void
agent_with_key(struct agent *a, unsigned char k1[32])
{
	unsigned char claim[32];

	memset(a, 0, sizeof *a);
	assert_int_equal(ids_new(IDS_AGENT, &secret_rng, a->id), 0);
	snprintf(a->name, sizeof a->name, "keys");
	a->reputation = 50;
	a->created_at = time(NULL);
	randombytes_buf(k1, 32);
	randombytes_buf(claim, 32);
	assert_int_equal(db_agent_insert(db, a, k1, claim, "127.0.0.1"), DB_OK);
}

static void
rotation_grace(void **state)
{
	unsigned char k1[32], k2[32], k3[32], other[32];
	int64_t now = time(NULL);
	struct agent a, got;

	(void)state;
	agent_with_key(&a, k1);
	assert_int_equal(db_agent_by_key(db, k1, now, &got), DB_OK);
	assert_string_equal(got.id, a.id);
	randombytes_buf(k2, 32);
	assert_int_equal(db_agent_set_key(db, a.id, k2, k1, now + 600), DB_OK);
	/* the old key, in its grace period, cannot rotate: k2 stays */
	randombytes_buf(other, 32);
	assert_int_equal(db_agent_set_key(db, a.id, other, k1, now + 600), DB_NOTFOUND);
	assert_int_equal(db_agent_by_key(db, other, now, &got), DB_NOTFOUND);
	/* the old key: until the grace period's last second, not after */
	assert_int_equal(db_agent_by_key(db, k1, now, &got), DB_OK);
	assert_string_equal(got.id, a.id);
	assert_int_equal(db_agent_by_key(db, k1, now + 599, &got), DB_OK);
	assert_int_equal(db_agent_by_key(db, k1, now + 600, &got), DB_NOTFOUND);
	assert_int_equal(db_agent_by_key(db, k1, now + 601, &got), DB_NOTFOUND);
	/* a key never issued */
	randombytes_buf(other, 32);
	assert_int_equal(db_agent_by_key(db, other, now, &got), DB_NOTFOUND);
	/* the new key's first use ends the old one at once */
	assert_int_equal(db_agent_by_key(db, k2, now, &got), DB_OK);
	assert_string_equal(got.id, a.id);
	assert_int_equal(db_agent_by_key(db, k1, now, &got), DB_NOTFOUND);
	assert_int_equal(db_agent_by_key(db, k2, now + 100000, &got), DB_OK);
	/* an owner's replacement: no previous key at all */
	randombytes_buf(k3, 32);
	assert_int_equal(db_agent_set_key(db, a.id, k3, NULL, 0), DB_OK);
	assert_int_equal(db_agent_by_key(db, k2, now, &got), DB_NOTFOUND);
	assert_int_equal(db_agent_by_key(db, k3, now, &got), DB_OK);
	/* no such agent */
	assert_int_equal(db_agent_set_key(db, "agt_0000000000000000", k3, NULL, 0), DB_NOTFOUND);
}

/* design.md §15: the look-up with the agent's participation in the same
 * statement keeps every rule of the key's (current key, previous key in
 * its grace period, the new key's first use ending it) and answers the
 * participation as db_agent_current does. */
static void
rotation_grace_with_current(void **state)
{
	unsigned char k1[32], k2[32], other[32];
	int64_t now = time(NULL);
	struct agent_current cur, want;
	struct agent a, got;

	(void)state;
	agent_with_key(&a, k1);
	memset(&cur, 'x', sizeof cur);
	assert_int_equal(db_agent_by_key_current(db, k1, now, &got, &cur), DB_OK);
	assert_string_equal(got.id, a.id);
	assert_string_equal(got.name, "keys");
	assert_int_equal(got.reputation, 50);
	assert_int_equal(db_agent_current(db, a.id, &want), DB_OK);
	assert_string_equal(want.study_id, "");
	assert_string_equal(cur.study_id, "");
	assert_string_equal(cur.participation_id, "");
	assert_string_equal(cur.status, "");
	assert_int_equal(cur.accepted_at, 0);
	randombytes_buf(k2, 32);
	assert_int_equal(db_agent_set_key(db, a.id, k2, k1, now + 600), DB_OK);
	/* the previous key within its grace period, then not */
	memset(&cur, 'x', sizeof cur);
	assert_int_equal(db_agent_by_key_current(db, k1, now + 599, &got, &cur), DB_OK);
	assert_string_equal(got.id, a.id);
	assert_string_equal(cur.study_id, "");
	assert_int_equal(db_agent_by_key_current(db, k1, now + 600, &got, &cur), DB_NOTFOUND);
	randombytes_buf(other, 32);
	assert_int_equal(db_agent_by_key_current(db, other, now, &got, &cur), DB_NOTFOUND);
	/* the new key's first use ends the old one at once */
	assert_int_equal(db_agent_by_key_current(db, k2, now, &got, &cur), DB_OK);
	assert_string_equal(got.id, a.id);
	assert_int_equal(db_agent_by_key_current(db, k1, now, &got, &cur), DB_NOTFOUND);
	assert_int_equal(db_agent_by_key(db, k1, now, &got), DB_NOTFOUND);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rotation_grace),
		cmocka_unit_test(rotation_grace_with_current),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
