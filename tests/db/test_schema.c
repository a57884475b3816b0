/* DB tests against the dev MariaDB: migrations and the constraints that
 * make the database itself refuse what the rules forbid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "db/accounts.h"
#include "db/db.h"
#include "tests/lib/fixture.h"
#include "lib/config.h"
#include "tests/db/dbtest.h"

static struct config cfg;
static struct db *db;
static char sfx[17];

static int
setup(void **state)
{
	char err[512];
	unsigned i;

	(void)state;
	if (config_load(&cfg, config_path(0, NULL), err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	/* Migrations and the schema's own rules (triggers, checks): as
	 * arps_migrate, which may run them; the pool's user may not. */
	if (dbtest_migrate_config(&cfg) != 0)
		return -1;
	db = db_open(&cfg);
	for (i = 0; i < 16; i++)
		sfx[i] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[randombytes_uniform(62)];
	return db != NULL && db_ensure(db) == DB_OK ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	return 0;
}

static void
id(char *out, const char *prefix, char tag)
{
	snprintf(out, 21, "%s%.15s%c", prefix, sfx, tag);
}

static void
migrate_twice(void **state)
{
	struct dbres *res = NULL;

	(void)state;
	assert_int_equal(db_migrate(db, cfg.migrations_dir, 0), DB_OK);
	assert_int_equal(db_migrate(db, cfg.migrations_dir, 0), DB_OK);
	assert_int_equal(DB_Q(db, "SELECT COUNT(*) FROM schema_version WHERE version = ?", &res,
	    NULL, P_I64(1)), DB_OK);
	assert_int_equal(dbres_i64(res, 0, 0), 1);
	dbres_free(res);
}

/* The statements here are the test's input: each is a write the schema
 * must refuse, or the row such a write needs.  They stay raw SQL (a fixture
 * keeps the invariants these break on purpose); the clean-up goes through
 * tests/lib/fixture.h. */
static void
constraints(void **state)
{
	static const char ins_acc[] = "INSERT INTO accounts (id, email, created_at) VALUES (?, ?, 0)";
	static const char ins_agent[] =
	    "INSERT INTO agents (id, name, api_key_hash, created_at, reputation) VALUES (?, 'a', ?, 0, ?)";
	static const char ins_wallet[] =
	    "INSERT INTO wallets (owner_id, available_cents, frozen_cents) VALUES (?, ?, ?)";
	static const char ins_study[] =
	    "INSERT INTO studies (id, researcher_id, title, description, study_url, reward_cents,"
	    " fee_cents, max_participants, screening_criteria, duration_minutes, frozen_cents,"
	    " created_at, occupied) VALUES (?, ?, 't', 'd', 'https://x', 100, 10, 2, 'c', 5, 220, 0, ?)";
	static const char ins_part[] =
	    "INSERT INTO participations (id, study_id, agent_id, participant_id, status, accepted_at)"
	    " VALUES (?, ?, ?, ?, ?, 0)";
	static const char ins_post[] =
	    "INSERT INTO ledger_postings (entry_id, account, sub, amount, event, created_at)"
	    " VALUES (?, 'platform:bonus', 'platform', ?, 'test', 0)";
	static const char upd_post[] = "UPDATE ledger_postings SET amount = 1 WHERE entry_id = ?";
	static const char del_post[] = "DELETE FROM ledger_postings WHERE entry_id = ?";
	char acc[21], agent[21], agent2[21], std1[21], std2[21], std3[21], p1[21], p2[21], p3[21], p4[21];
	char email[64];
	unsigned char h1[32], h2[32];

	(void)state;
	randombytes_buf(h1, sizeof h1);
	randombytes_buf(h2, sizeof h2);
	id(acc, "acc_", 'a');
	id(agent, "agt_", 'a');
	id(agent2, "agt_", 'b');
	id(std1, "std_", 'a');
	id(std2, "std_", 'b');
	id(std3, "std_", 'c');
	id(p1, "prt_", 'a');
	id(p2, "prt_", 'b');
	id(p3, "prt_", 'c');
	id(p4, "prt_", 'd');
	snprintf(email, sizeof email, "%s@example.org", sfx);

	assert_int_equal(DB_Q(db, ins_acc, NULL, NULL, P_STR(acc), P_STR(email)), DB_OK);
	/* e-mail unique */
	{
		char other[21];
		id(other, "acc_", 'z');
		assert_int_equal(DB_Q(db, ins_acc, NULL, NULL, P_STR(other), P_STR(email)), DB_DUP);
	}
	/* reputation outside 0..100 refused */
	assert_int_equal(DB_Q(db, ins_agent, NULL, NULL, P_STR(agent), P_BLOB(h1, 32), P_I64(101)), DB_CHECK);
	assert_int_equal(DB_Q(db, ins_agent, NULL, NULL, P_STR(agent), P_BLOB(h1, 32), P_I64(50)), DB_OK);
	/* the same API key hash twice refused */
	assert_int_equal(DB_Q(db, ins_agent, NULL, NULL, P_STR(agent2), P_BLOB(h1, 32), P_I64(50)), DB_DUP);
	assert_int_equal(DB_Q(db, ins_agent, NULL, NULL, P_STR(agent2), P_BLOB(h2, 32), P_I64(50)), DB_OK);
	/* money columns cannot go negative */
	assert_int_equal(DB_Q(db, ins_wallet, NULL, NULL, P_STR(acc), P_I64(-1), P_I64(0)), DB_CHECK);
	assert_int_equal(DB_Q(db, ins_wallet, NULL, NULL, P_STR(acc), P_I64(0), P_I64(-5)), DB_CHECK);
	assert_int_equal(DB_Q(db, ins_wallet, NULL, NULL, P_STR(acc), P_I64(10), P_I64(0)), DB_OK);
	assert_int_equal(DB_Q(db, "UPDATE wallets SET available_cents = available_cents - 11 WHERE owner_id = ?",
	    NULL, NULL, P_STR(acc)), DB_CHECK);
	/* occupied slots never exceed max_participants */
	assert_int_equal(DB_Q(db, ins_study, NULL, NULL, P_STR(std1), P_STR(acc), P_I64(3)), DB_CHECK);
	assert_int_equal(DB_Q(db, ins_study, NULL, NULL, P_STR(std1), P_STR(acc), P_I64(0)), DB_OK);
	assert_int_equal(DB_Q(db, ins_study, NULL, NULL, P_STR(std2), P_STR(acc), P_I64(0)), DB_OK);
	assert_int_equal(DB_Q(db, ins_study, NULL, NULL, P_STR(std3), P_STR(acc), P_I64(0)), DB_OK);
	/* at most one active participation per agent */
	assert_int_equal(DB_Q(db, ins_part, NULL, NULL, P_STR(p1), P_STR(std1), P_STR(agent),
	    P_STR("anon_0000000000000001"), P_STR("accepted")), DB_OK);
	assert_int_equal(DB_Q(db, ins_part, NULL, NULL, P_STR(p2), P_STR(std2), P_STR(agent),
	    P_STR("anon_0000000000000002"), P_STR("in_progress")), DB_DUP);
	/* ... but a submitted one does not count as active */
	assert_int_equal(DB_Q(db, ins_part, NULL, NULL, P_STR(p2), P_STR(std2), P_STR(agent),
	    P_STR("anon_0000000000000002"), P_STR("submitted")), DB_OK);
	/* at most once per study per agent */
	assert_int_equal(DB_Q(db, ins_part, NULL, NULL, P_STR(p3), P_STR(std1), P_STR(agent),
	    P_STR("anon_0000000000000003"), P_STR("withdrawn")), DB_DUP);
	/* another agent's active participation is fine */
	assert_int_equal(DB_Q(db, ins_part, NULL, NULL, P_STR(p4), P_STR(std3), P_STR(agent2),
	    P_STR("anon_0000000000000004"), P_STR("accepted")), DB_OK);
	/* ledger postings are append-only */
	assert_int_equal(DB_Q(db, ins_post, NULL, NULL, P_STR(p1), P_I64(0)), DB_CHECK);
	assert_int_equal(DB_Q(db, upd_post, NULL, NULL, P_STR(p1)), DB_OK);	/* no row: no-op */
	/* a balanced pair so verify-ledger stays green */
	assert_int_equal(db_begin(db), DB_OK);
	assert_int_equal(DB_Q(db, ins_post, NULL, NULL, P_STR(p1), P_I64(5)), DB_OK);
	assert_int_equal(DB_Q(db, ins_post, NULL, NULL, P_STR(p1), P_I64(-5)), DB_OK);
	assert_int_equal(db_commit(db), DB_OK);
	assert_int_equal(DB_Q(db, upd_post, NULL, NULL, P_STR(p1)), DB_CHECK);
	assert_int_equal(DB_Q(db, del_post, NULL, NULL, P_STR(p1)), DB_CHECK);
	/* clean up what does not belong to the ledger's invariants (the
	 * studies' participations, the studies, the wallet) */
	assert_int_equal(db_fixture_researcher_purge(db, acc), DB_OK);
}

static void
tx_rolls_back(void **state)
{
	struct dbres *res = NULL;
	struct account acc;
	char email[64];

	(void)state;
	snprintf(email, sizeof email, "rb-%s@example.org", sfx);
	assert_int_equal(db_begin(db), DB_OK);
	assert_int_equal(db_account_create(db, email, ACC_ROLE_RESEARCHER, 0, &acc), DB_OK);
	db_rollback(db);
	assert_int_equal(DB_Q(db, "SELECT COUNT(*) FROM accounts WHERE id = ?", &res, NULL, P_STR(acc.id)), DB_OK);
	assert_int_equal(dbres_i64(res, 0, 0), 0);
	dbres_free(res);
}

static void
result_types(void **state)
{
	struct dbres *res = NULL;
	const unsigned char blob[4] = { 0, 1, 0, 255 };
	const void *b;
	size_t n;

	(void)state;
	assert_int_equal(DB_Q(db, "SELECT ?, ?, ?, NULL, ?", &res, NULL, P_I64(-9007199254740993LL),
	    P_STR("h\xc3\xa9llo"), P_BLOB(blob, 4), P_F64(0.25)), DB_OK);
	assert_int_equal(res->nrows, 1);
	assert_int_equal(dbres_i64(res, 0, 0), -9007199254740993LL);
	assert_string_equal(dbres_str(res, 0, 1), "h\xc3\xa9llo");
	b = dbres_blob(res, 0, 2, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(b, blob, 4);
	assert_true(dbres_isnull(res, 0, 3));
	assert_null(dbres_str(res, 0, 3));
	assert_string_equal(dbres_str(res, 0, 4), "0.25");
	dbres_free(res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(migrate_twice),
		cmocka_unit_test(constraints),
		cmocka_unit_test(tx_rolls_back),
		cmocka_unit_test(result_types),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("db_schema", tests, setup, teardown);
}
