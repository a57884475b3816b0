/*
 * arps-sweep's set-based batches (txn/sweep.c, design.md §1.3): the same
 * outcome as the row-by-row path (--rows) for a batch holding rows of
 * several studies and agents, one agent twice; a row the API moves
 * between the batch's read and its write is moved once, by the API; and
 * a sweep SIGKILLed in the middle of a large run, run again, moves every
 * due row exactly once.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "tests/api/study_helpers.h"

/* arps-sweep as of now with extra arguments; its exit status. */
static int
sweep(const char *extra)
{
	return sh("%s/build/arps-sweep --config %s %s 2>>%s/log/sweep-test.log", getenv("ARPS_ROOT"),
	    getenv("ARPS_CONFIG"), extra, getenv("ARPS_VAR"));
}

/* Accept study as a (asserts 200); complete it too when `complete`. */
static void
take(const struct test_agent *a, const char *study, int complete)
{
	assert_int_equal(study_post(a->hdr, study, "accept", NULL), 200);
	if (complete)
		assert_int_equal(study_post(a->hdr, study, "complete", NULL), 200);
}

/*
 * One scenario: a researcher's three studies (rewards 100, 250, 7); agent
 * a submits in studies 0 and 1, b holds an accepted slot of study 2, c
 * submits in study 0 and holds a slot of study 2; a has a webhook for the
 * types the sweep raises.  Every participation is then 49 h old: the next
 * sweep auto-approves three rows and times two out, in one batch.
 */
struct scenario {
	struct test_user res, oa, ob, oc;
	struct test_agent a, b, c;
	char study[3][IDS_BUFSZ];
	char hook[IDS_BUFSZ];
};

static void
scenario(struct scenario *s)
{
	static const long long rewards[3] = { 100, 250, 7 };
	struct resp r;
	int i;

	memset(s, 0, sizeof *s);
	researcher(&s->res, 100000);
	for (i = 0; i < 3; i++)
		study_new(&s->res, s->study[i], rewards[i], 3, NULL);
	agent_claimed(&s->a, &s->oa, "batch-a");
	agent_claimed(&s->b, &s->ob, "batch-b");
	agent_claimed(&s->c, &s->oc, "batch-c");
	r = post_as(s->a.hdr, "{\"url\":\"http://127.0.0.1:9/hook\",\"events\":"
	    "[\"participation.approved\",\"reputation.changed\",\"wallet.credited\"]}",
	    "/api/v1/webhooks");
	assert_int_equal(r.status, 201);
	snprintf(s->hook, sizeof s->hook, "%s", jstr(&r, "id"));
	resp_free(&r);
	take(&s->a, s->study[0], 1);
	take(&s->a, s->study[1], 1);
	take(&s->b, s->study[2], 0);
	take(&s->c, s->study[0], 1);
	take(&s->c, s->study[2], 0);
	for (i = 0; i < 3; i++)
		participations_backdate(s->study[i], 49 * 3600);
}

/* What the sweep's outcome is for one scenario, with its ids masked. */
struct outcome {
	char ev[3][8192];	/* each agent's events */
	char txn[3][1024];	/* each agent's transactions */
	char parts[3][256];	/* each agent's participations */
	long long rep[3], streak[3], avail[3], frozen[3];
	char res_txn[2048];
	long long res_avail, res_frozen;
	char studies[512];
	long long deliveries, postings;
};

/* ids masked as #: the data of events names studies and participations */
#define MASK(col) "REGEXP_REPLACE(" col ", '(std|prt|agt|acc|txn|evt)_[0-9A-Za-z]+', '#')"

static void
outcome_of(const struct scenario *s, struct outcome *o)
{
	const struct test_agent *ag[3] = { &s->a, &s->b, &s->c };
	int i;

	memset(o, 0, sizeof *o);
	for (i = 0; i < 3; i++) {
		/* as a set: rows of equal due time are moved in id order, and
		 * the two scenarios' ids differ */
		sql_str(o->ev[i], sizeof o->ev[i], "SELECT CONCAT(type, ' ', " MASK("data")
		    ") FROM events WHERE owner_id = '%s' ORDER BY 1", ag[i]->id);
		/* numbered 1..n without a gap */
		assert_int_equal(sql_int("SELECT MAX(seq) - COUNT(*) FROM events WHERE owner_id = '%s'",
		    ag[i]->id), 0);
		sql_str(o->txn[i], sizeof o->txn[i], "SELECT CONCAT(type, ' ', amount_cents, ' ',"
		    " description) FROM transactions WHERE owner_id = '%s' ORDER BY type, amount_cents",
		    ag[i]->id);
		sql_str(o->parts[i], sizeof o->parts[i], "SELECT CONCAT(s.reward_cents, ' ', p.status,"
		    " ' ', p.reviewed_at IS NOT NULL, p.ended_at IS NOT NULL) FROM participations p"
		    " JOIN studies s ON s.id = p.study_id WHERE p.agent_id = '%s'"
		    " ORDER BY s.reward_cents", ag[i]->id);
		o->rep[i] = sql_int("SELECT reputation FROM agents WHERE id = '%s'", ag[i]->id);
		o->streak[i] = sql_int("SELECT streak FROM agents WHERE id = '%s'", ag[i]->id);
		admin_wallet(ag[i]->id, &o->avail[i], &o->frozen[i]);
	}
	sql_str(o->res_txn, sizeof o->res_txn, "SELECT CONCAT(type, ' ', amount_cents, ' ', description)"
	    " FROM transactions WHERE owner_id = '%s' ORDER BY type, amount_cents", s->res.id);
	admin_wallet(s->res.id, &o->res_avail, &o->res_frozen);
	sql_str(o->studies, sizeof o->studies, "SELECT CONCAT_WS(' ', reward_cents, status, occupied,"
	    " frozen_cents, spent_cents, refunded_cents, refunded_slots) FROM studies"
	    " WHERE id IN ('%s', '%s', '%s') ORDER BY reward_cents", s->study[0], s->study[1],
	    s->study[2]);
	o->deliveries = sql_int("SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = '%s'",
	    s->hook);
	o->postings = sql_int("SELECT COUNT(*) FROM ledger_postings WHERE study_id IN"
	    " ('%s', '%s', '%s')", s->study[0], s->study[1], s->study[2]);
}

static int
count_of(const char *list, const char *word)
{
	const char *p = list;
	int n = 0;

	while ((p = strstr(p, word)) != NULL) {
		n++;
		p += strlen(word);
	}
	return n;
}

/* The set-based batch and the row-by-row path leave the same state:
 * money, reputation (a twice in one batch), rows, studies, events with
 * their numbering and data, webhook deliveries. */
static void
same_as_row_by_row(void **state)
{
	struct scenario s1, s2;
	static struct outcome o1, o2;
	int i;

	(void)state;
	scenario(&s1);
	assert_int_equal(sweep("--rows"), 0);
	outcome_of(&s1, &o1);
	scenario(&s2);
	assert_int_equal(sweep(""), 0);
	outcome_of(&s2, &o2);
	for (i = 0; i < 3; i++) {
		assert_string_equal(o2.ev[i], o1.ev[i]);
		assert_string_equal(o2.txn[i], o1.txn[i]);
		assert_string_equal(o2.parts[i], o1.parts[i]);
		assert_int_equal(o2.rep[i], o1.rep[i]);
		assert_int_equal(o2.streak[i], o1.streak[i]);
		assert_int_equal(o2.avail[i], o1.avail[i]);
		assert_int_equal(o2.frozen[i], o1.frozen[i]);
	}
	assert_string_equal(o2.res_txn, o1.res_txn);
	assert_int_equal(o2.res_avail, o1.res_avail);
	assert_int_equal(o2.res_frozen, o1.res_frozen);
	assert_string_equal(o2.studies, o1.studies);
	assert_int_equal(o2.deliveries, o1.deliveries);
	assert_int_equal(o2.postings, o1.postings);
	/* and that state is the rules' (design.md §4, design.md §5, design.md §7.1) */
	assert_string_equal(o2.parts[0], "100 approved 11|250 approved 11");
	assert_string_equal(o2.parts[1], "7 timed_out 01");
	assert_string_equal(o2.parts[2], "7 timed_out 01|100 approved 11");
	assert_int_equal(count_of(o2.ev[0], "participation.approved"), 2);
	assert_int_equal(count_of(o2.ev[0], "wallet.credited {\"amount_cents\":250,\"cause\":\"earning\""), 1);
	assert_int_equal(count_of(o2.ev[0], "wallet.credited {\"amount_cents\":100,\"cause\":\"earning\""), 1);
	assert_int_equal(count_of(o2.ev[0], "reputation.changed {\"from\":50,\"to\":52"), 1);
	assert_int_equal(count_of(o2.ev[0], "reputation.changed {\"from\":52,"), 1);
	assert_int_equal(count_of(o2.ev[1], "participation.timed_out"), 1);
	assert_int_equal(count_of(o2.ev[1], "reputation.changed {\"from\":50,\"to\":45"), 1);
	assert_int_equal(count_of(o2.ev[2], "participation.timed_out"), 1);
	assert_int_equal(count_of(o2.ev[2], "participation.approved"), 1);
	assert_int_equal(o2.rep[1], 45);
	assert_int_equal(count_of(o2.txn[0], "earning 100 "), 1);
	assert_int_equal(count_of(o2.txn[0], "earning 250 "), 1);
	/* a's hook asked for the three types: 2 approvals, 2 changes, 2 credits */
	assert_int_equal(o2.deliveries, 6);
	print_message("set-based == row by row: %s\n", o2.studies);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/*
 * A researcher rejects a submission while the sweep's batch holds it as
 * due: the sweep has read the row as submitted, the rejection commits
 * first (its study lock is taken before the batch's, and it waits on the
 * participation row a session holds), then the batch locks the row, finds
 * it rejected and leaves it: no approval on stale state, one refund, no
 * earning.
 */
static void
row_moved_by_the_api_meanwhile(void **state)
{
	struct test_user res, o1, o2;
	struct test_agent a1, a2;
	char study[IDS_BUFSZ], pid[32], victim[IDS_BUFSZ], other[IDS_BUFSZ], prt[IDS_BUFSZ];
	char cmd[2048], buf[1024];
	pid_t rj, sw;
	int st;

	(void)state;
	researcher(&res, 100000);
	study_new(&res, study, 100, 3, NULL);
	agent_claimed(&a1, &o1, "stale-1");
	agent_claimed(&a2, &o2, "stale-2");
	take(&a1, study, 1);
	take(&a2, study, 1);
	participations_backdate(study, 49 * 3600);
	newest_participant(&res, study, pid);
	sql_str(victim, sizeof victim, "SELECT agent_id FROM participations WHERE study_id = '%s'"
	    " AND participant_id = '%s'", study, pid);
	sql_str(prt, sizeof prt, "SELECT id FROM participations WHERE agent_id = '%s'", victim);
	snprintf(other, sizeof other, "%s", strcmp(victim, a1.id) == 0 ? a2.id : a1.id);
	/* a session holds the participation row for 3 s */
	snprintf(cmd, sizeof cmd, "(mariadb --no-defaults -S %s/run/mysqld.sock -u \"$(id -un)\" arps -e "
	    "\"BEGIN; SELECT id FROM participations WHERE id = '%s' FOR UPDATE; DO SLEEP(3); COMMIT;\""
	    " >/dev/null &)", getenv("ARPS_VAR"), prt);
	assert_int_equal(sh("%s", cmd), 0);
	usleep(500000);
	if ((rj = fork()) == 0) {	/* takes the study lock, waits on the row */
		struct resp r = post_as(res.hdr, NULL, "/api/v1/studies/%s/participants/%s/reject",
		    study, pid);

		_exit(r.status == 200 ? 0 : 1);
	}
	usleep(700000);
	if ((sw = fork()) == 0)		/* reads both rows due, waits on the study */
		_exit(sweep("--batch 10") == 0 ? 0 : 1);
	waitpid(rj, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	waitpid(sw, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(sql_str(buf, sizeof buf, "SELECT status FROM participations WHERE agent_id"
	    " = '%s'", victim), "rejected");
	assert_string_equal(sql_str(buf, sizeof buf, "SELECT status FROM participations WHERE agent_id"
	    " = '%s'", other), "approved");
	assert_int_equal(sql_int("SELECT COUNT(*) FROM transactions WHERE owner_id = '%s'"
	    " AND type = 'earning'", victim), 0);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM transactions WHERE owner_id = '%s'"
	    " AND type = 'earning'", other), 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM transactions WHERE study_id = '%s'"
	    " AND type = 'refund'", study), 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id = '%s'"
	    " AND type = 'participation.approved'", victim), 0);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id = '%s'"
	    " AND type = 'participation.rejected'", victim), 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id = '%s'"
	    " AND type = 'reputation.changed'", victim), 1);
	assert_true(sql_int("SELECT reputation FROM agents WHERE id = '%s'", victim) < 50);
	assert_int_equal(sql_int("SELECT reputation FROM agents WHERE id = '%s'", other), 52);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

#define KILL_N 10000	/* rows (one study): half time out, half are auto-approved */

static long long
moved_of(const char *study)
{
	return sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status IN ('timed_out', 'approved')", study);
}

/* Every row moved so far moved exactly once, with its money, reputation
 * and events; none moved twice. */
static void
assert_once(const char *study, const char *tag, long long *moved)
{
	long long t = sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'timed_out'", study);
	long long a = sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'approved'", study);

	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents WHERE id LIKE 'agt_s%s%%'"
	    " AND reputation = 45", tag), t);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents WHERE id LIKE 'agt_s%s%%'"
	    " AND reputation = 52", tag), a);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM transactions WHERE study_id = '%s'"
	    " AND type = 'earning'", study), a);
	assert_int_equal(sql_int("SELECT COALESCE(SUM(available_cents), 0) FROM wallets"
	    " WHERE owner_id LIKE 'agt_s%s%%'", tag), a);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id LIKE 'agt_s%s%%'"
	    " AND type = 'participation.timed_out'", tag), t);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id LIKE 'agt_s%s%%'"
	    " AND type = 'participation.approved'", tag), a);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id LIKE 'agt_s%s%%'"
	    " AND type = 'wallet.credited'", tag), a);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM events WHERE owner_id LIKE 'agt_s%s%%'"
	    " AND type = 'reputation.changed'", tag), t + a);
	/* each agent's events numbered 1.. without a gap */
	assert_int_equal(sql_int("SELECT COUNT(*) FROM event_heads h WHERE owner_id LIKE 'agt_s%s%%'"
	    " AND last_seq <> (SELECT COUNT(*) FROM events e WHERE e.owner_id = h.owner_id)", tag), 0);
	/* and their ids in that order (design.md §11.4) */
	assert_int_equal(sql_int("SELECT COUNT(*) FROM (SELECT id, LAG(id) OVER (PARTITION BY"
	    " owner_id ORDER BY seq) AS prev FROM events WHERE owner_id LIKE 'agt_s%s%%') t"
	    " WHERE prev >= id", tag), 0);
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", study), KILL_N - t);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
	*moved = t + a;
}

static void
killed_in_a_large_run(void **state)
{
	struct test_user res;
	char study[IDS_BUFSZ], tag[8], path[1024], cfg[1024];
	long long moved = 0, before;
	int s, i;
	pid_t p;

	(void)state;
	researcher(&res, 100000);
	snprintf(tag, sizeof tag, "%06x", randombytes_uniform(0xffffff));
	study_new(&res, study, 1, KILL_N, NULL);
	fixture("seed-participations %s %s %d %d %d", study, tag, KILL_N, 25 * 3600, 49 * 3600);
	snprintf(path, sizeof path, "%s/build/arps-sweep", getenv("ARPS_ROOT"));
	snprintf(cfg, sizeof cfg, "%s", getenv("ARPS_CONFIG"));
	if ((p = fork()) == 0) {
		execl(path, "arps-sweep", "--config", cfg, "--batch", "300", (char *)NULL);
		_exit(127);
	}
	/* in the middle of the run: some batches committed, most not */
	for (i = 0; i < 2000 && (before = moved_of(study)) < KILL_N / 10; i++)
		usleep(5000);
	kill(p, SIGKILL);
	waitpid(p, &s, 0);
	assert_true(WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL);
	assert_once(study, tag, &moved);
	print_message("sweep SIGKILLed after moving %lld of %d\n", moved, KILL_N);
	assert_true(moved >= KILL_N / 10 && moved < KILL_N);
	/* the killed sweep's lease lives on until it expires (30 s,
	 * design.md §13.4): a sweep meanwhile skips; then (the expiry set
	 * here stands for the wait) the next one finishes the work */
	before = moved;
	assert_int_equal(sweep(""), 0);
	assert_once(study, tag, &moved);
	assert_int_equal(moved, before);
	fixture("lease-expire sweep");
	assert_int_equal(sweep(""), 0);
	assert_once(study, tag, &moved);
	assert_int_equal(moved, KILL_N);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'approved'", study), KILL_N / 2);
	/* a third run has nothing left */
	assert_int_equal(sweep(""), 0);
	assert_once(study, tag, &moved);
	assert_int_equal(moved, KILL_N);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_as_row_by_row),
		cmocka_unit_test(row_moved_by_the_api_meanwhile),
		cmocka_unit_test(killed_in_a_large_run),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_sweep_batch", tests, NULL, NULL);
}
