/* DB tests of the study and participation functions the sweep reuses:
 * timeout, auto-approve, deadline/stop close and completion, each
 * idempotent, and the ledger invariants after them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/errors.h"
#include "core/ledger.h"
#include "core/money.h"
#include "db/accounts.h"
#include "txn/admin.h"
#include "db/db.h"
#include "db/ledger.h"
#include "db/studies.h"
#include "txn/lifecycle.h"
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

static void
begin(void)
{
	assert_int_equal(db_begin(db), DB_OK);
}

static void
commit(void)
{
	assert_int_equal(db_commit(db), DB_OK);
}

/* A researcher account with `cents` available. */
static void
new_account(struct account *acc, int64_t cents)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	char email[64];

	snprintf(email, sizeof email, "sweep-%08x@example.org", randombytes_random());
	begin();
	assert_int_equal(db_account_create(db, email, ACC_ROLE_RESEARCHER, time(NULL), acc), DB_OK);
	li.ev = LEDGER_EV_TOPUP;
	li.amount = cents;
	assert_int_equal(ledger_build(&li, &le), ARPS_OK);
	party[LEDGER_P_WALLET] = acc->id;
	assert_int_equal(db_ledger_post(db, &le, party, NULL, LEDGER_EV_TOPUP, NULL, time(NULL)),
	    DB_OK);
	commit();
}

/* A claimed agent (no signup bonus: not needed here). */
static void
new_agent(struct agent *a, const char *account_id)
{
	unsigned char kh[32], ch[32];

	memset(a, 0, sizeof *a);
	assert_int_equal(ids_new(IDS_AGENT, &secret_rng, a->id), ARPS_OK);
	snprintf(a->name, sizeof a->name, "sweeper");
	a->reputation = 50;
	a->created_at = time(NULL);
	randombytes_buf(kh, sizeof kh);
	randombytes_buf(ch, sizeof ch);
	begin();
	assert_int_equal(db_agent_insert(db, a, kh, ch, "127.0.0.1"), DB_OK);
	assert_int_equal(db_agent_claim(db, a->id, account_id), DB_OK);
	commit();
}

static void
do_accept(const char *study, const char *agent, struct participation *p)
{
	struct study s;
	enum arps_err outcome;

	begin();
	assert_int_equal(txn_study_accept(db, &cfg, study, agent, NULL, time(NULL), &s, p, &outcome),
	    DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	db_study_clear(&s);
}

static int
settle(const char *prt, enum part_event ev, struct settle_out *so)
{
	begin();
	assert_int_equal(txn_participation_settle(db, prt, NULL, ev, NULL, time(NULL), so), DB_OK);
	commit();
	db_participation_clear(&so->p);
	return so->outcome;
}

static int
agent_rep(const char *id)
{
	struct agent a;

	assert_int_equal(db_agent_get(db, id, 0, &a), DB_OK);
	return a.reputation;
}

static void
sweep_paths(void **state)
{
	struct account acc, own;
	struct agent a1, a2, a3;
	struct study_new sn;
	struct participation p1, p2, p3;
	struct settle_out so;
	struct study s;
	char id[IDS_BUFSZ];
	int64_t avail, frozen, now = time(NULL);
	enum arps_err outcome;

	(void)state;
	new_account(&acc, 10000);
	new_account(&own, 1);	/* the agents' owner: not the researcher (OWN_STUDY) */
	new_agent(&a1, own.id);
	new_agent(&a2, own.id);
	new_agent(&a3, own.id);
	memset(&sn, 0, sizeof sn);
	assert_int_equal(money_study_plan(100, 3, 1000, cfg.max_study_budget_cents, &sn.plan),
	    ARPS_OK);
	sn.researcher_id = acc.id;
	sn.title = sn.description = sn.criteria = "sweep";
	sn.study_url = "https://sweep.example.org/";
	sn.duration_minutes = 5;
	begin();
	assert_int_equal(txn_study_create(db, &sn, now, id, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();

	/* timeout: -5, slot reopens; a second run is refused and changes nothing */
	do_accept(id, a1.id, &p1);
	assert_int_equal(settle(p1.id, PART_EV_TIMEOUT, &so), ARPS_OK);
	assert_int_equal(agent_rep(a1.id), 45);
	assert_int_equal(settle(p1.id, PART_EV_TIMEOUT, &so), ARPS_E_INVALID_STATE);
	assert_int_equal(agent_rep(a1.id), 45);
	assert_int_equal(settle(p1.id, PART_EV_AUTO_APPROVE, &so), ARPS_E_INVALID_STATE);

	/* auto-approve of a submission: reward to the agent, +2 */
	do_accept(id, a2.id, &p2);
	begin();
	assert_int_equal(txn_participation_agent_event(db, &cfg, id, a2.id, PART_EV_COMPLETE, NULL, now,
	    &p2, NULL, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	assert_int_equal(settle(p2.id, PART_EV_AUTO_APPROVE, &so), ARPS_OK);
	assert_int_equal(so.money, LEDGER_EV_APPROVE);
	assert_int_equal(agent_rep(a2.id), 52);
	assert_int_equal(db_wallet_get(db, a2.id, &avail, &frozen), DB_OK);
	assert_int_equal(avail, 100);
	assert_int_equal(settle(p2.id, PART_EV_AUTO_APPROVE, &so), ARPS_E_INVALID_STATE);
	assert_int_equal(settle(p2.id, PART_EV_REJECT, &so), ARPS_E_INVALID_STATE);

	/* not closable yet: complete needs awaiting_review; no deadline set */
	begin();
	assert_int_equal(txn_study_complete(db, id, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_E_INVALID_STATE);
	assert_int_equal(txn_study_close(db, id, STUDY_EV_DEADLINE, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_E_INVALID_STATE);
	commit();

	/* a third agent holds a slot; stop refunds the one never taken */
	do_accept(id, a3.id, &p3);
	begin();
	assert_int_equal(txn_study_close(db, id, STUDY_EV_STOP, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	assert_int_equal(db_study_get(db, id, 0, &s), DB_OK);
	assert_int_equal(s.state, STUDY_AWAITING_REVIEW);
	assert_int_equal(s.refunded_slots, 1);
	assert_int_equal(s.frozen, 2 * 110 - 110);	/* a3's slot stays frozen */
	db_study_clear(&s);
	/* while a3 is active the study cannot complete */
	begin();
	assert_int_equal(txn_study_complete(db, id, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_E_INVALID_STATE);
	commit();
	/* a3 times out; now complete: the remainder returns as study_unfreeze */
	assert_int_equal(settle(p3.id, PART_EV_TIMEOUT, &so), ARPS_OK);
	begin();
	assert_int_equal(txn_study_complete(db, id, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	assert_int_equal(db_study_get(db, id, 0, &s), DB_OK);
	assert_int_equal(s.state, STUDY_COMPLETED);
	assert_int_equal(s.frozen, 0);
	assert_int_equal(s.spent, 110);
	assert_int_equal(s.refunded, 220);
	db_study_clear(&s);
	assert_int_equal(db_wallet_get(db, acc.id, &avail, &frozen), DB_OK);
	assert_int_equal(avail, 10000 - 110);
	assert_int_equal(frozen, 0);
	begin();
	assert_int_equal(txn_study_complete(db, id, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_E_INVALID_STATE);
	assert_int_equal(txn_study_close(db, id, STUDY_EV_STOP, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_E_INVALID_STATE);
	commit();
	db_participation_clear(&p1);
	db_participation_clear(&p2);
	db_participation_clear(&p3);
	assert_int_equal(admin_verify_ledger(db, &cfg, NULL), 0);
}

static void
deadline_close(void **state)
{
	struct account acc;
	struct study_new sn;
	struct study s;
	char id[IDS_BUFSZ];
	int64_t now = time(NULL);
	enum arps_err outcome;

	(void)state;
	new_account(&acc, 1000);
	memset(&sn, 0, sizeof sn);
	assert_int_equal(money_study_plan(10, 5, 1000, cfg.max_study_budget_cents, &sn.plan),
	    ARPS_OK);
	sn.researcher_id = acc.id;
	sn.title = sn.description = sn.criteria = "deadline";
	sn.study_url = "https://sweep.example.org/";
	sn.duration_minutes = 5;
	sn.has_deadline = 1;
	sn.deadline = now + 60;
	begin();
	assert_int_equal(txn_study_create(db, &sn, now, id, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	/* before the deadline: refused */
	assert_int_equal(txn_study_close(db, id, STUDY_EV_DEADLINE, now, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_E_INVALID_STATE);
	/* at it: every slot refunded (5 x 11) and completable at once */
	assert_int_equal(txn_study_close(db, id, STUDY_EV_DEADLINE, now + 60, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	assert_int_equal(txn_study_complete(db, id, now + 60, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	assert_int_equal(db_study_get(db, id, 0, &s), DB_OK);
	assert_int_equal(s.state, STUDY_COMPLETED);
	assert_int_equal(s.refunded, 55);
	assert_int_equal(s.refunded_slots, 5);
	db_study_clear(&s);
	assert_int_equal(admin_verify_ledger(db, &cfg, NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sweep_paths),
		cmocka_unit_test(deadline_close),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
