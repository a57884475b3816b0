/* arps-sweep: each job at its boundary (with --now), exactly once under
 * concurrency and after a SIGKILL, and the ledger intact afterwards. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "core/timefmt.h"
#include "tests/api/study_helpers.h"

/* Run the sweep as of unix time t; returns its exit status. */
static int
sweep_at(int64_t t, const char *extra)
{
	char iso[TIMEFMT_BUFSZ];

	assert_int_equal(timefmt_format(t, iso), 0);
	return sh("%s/build/arps-sweep --config %s --now %s %s 2>>%s/log/sweep-test.log",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"), iso, extra ? extra : "", getenv("ARPS_VAR"));
}

static const char *
part_status(const char *prt, char buf[32])
{
	char q[256];
	FILE *p;

	snprintf(q, sizeof q, "mariadb --no-defaults -N -S %s/run/mysqld.sock -u \"$(id -un)\" arps"
	    " -e \"SELECT status FROM participations WHERE id = '%s'\"", getenv("ARPS_VAR"), prt);
	buf[0] = '\0';
	assert_non_null(p = popen(q, "r"));
	if (fgets(buf, 32, p) != NULL)
		buf[strcspn(buf, "\n")] = '\0';
	pclose(p);
	return buf;
}

/* Accept study as agent a; the participation id into prt. */
static void
accept_study(const struct test_agent *a, const char *study, char prt[IDS_BUFSZ])
{
	struct resp r = post_as(a->hdr, NULL, "/api/v1/studies/%s/accept", study);

	if (r.status != 200)
		print_error("accept: %ld %s\n", r.status, r.body ? r.body : "");
	assert_int_equal(r.status, 200);
	snprintf(prt, IDS_BUFSZ, "%s", jstr(&r, "participation_id"));
	resp_free(&r);
}

static void
timeout_at_24h(void **state)
{
	struct test_user res, owner;
	struct test_agent a;
	char study[IDS_BUFSZ], prt[IDS_BUFSZ], st[32];
	int64_t t;

	(void)state;
	researcher(&res, 10000);
	study_new(&res, study, 100, 1, NULL);
	agent_claimed(&a, &owner, "Sleepy");
	accept_study(&a, study, prt);
	t = sql_int("SELECT accepted_at FROM participations WHERE id = '%s'", prt);
	assert_true(t > 0);
	assert_int_equal(sweep_at(t + 24 * 3600 - 60, NULL), 0);	/* 23 h 59 m */
	assert_string_equal(part_status(prt, st), "accepted");
	assert_int_equal(reputation_of(&a), 50);
	assert_int_equal(sweep_at(t + 24 * 3600, NULL), 0);
	assert_string_equal(part_status(prt, st), "timed_out");
	assert_int_equal(reputation_of(&a), 45);
	/* the slot reopened */
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", study), 0);
	/* a second run changes nothing */
	assert_int_equal(sweep_at(t + 25 * 3600, NULL), 0);
	assert_int_equal(reputation_of(&a), 45);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
auto_approve_at_48h(void **state)
{
	struct test_user res, owner;
	struct test_agent a;
	char study[IDS_BUFSZ], prt[IDS_BUFSZ], st[32];
	long long avail, frozen, ravail, rfrozen;
	int64_t t;

	(void)state;
	researcher(&res, 10000);
	study_new(&res, study, 250, 2, NULL);
	agent_claimed(&a, &owner, "Done");
	accept_study(&a, study, prt);
	assert_int_equal(study_post(a.hdr, study, "complete", NULL), 200);
	t = sql_int("SELECT submitted_at FROM participations WHERE id = '%s'", prt);
	balance_of(res.hdr, &ravail, &rfrozen);
	assert_int_equal(sweep_at(t + 48 * 3600 - 60, NULL), 0);	/* 47 h 59 m */
	assert_string_equal(part_status(prt, st), "submitted");
	assert_int_equal(sweep_at(t + 48 * 3600, NULL), 0);
	assert_string_equal(part_status(prt, st), "approved");
	/* exactly as a researcher's approval: earning, +2 */
	admin_wallet(a.id, &avail, &frozen);
	assert_int_equal(avail, 100 + 250);
	assert_int_equal(reputation_of(&a), 52);
	balance_of(res.hdr, &avail, &frozen);
	assert_int_equal(frozen, rfrozen - SLOT_OF(250));
	assert_int_equal(avail, ravail);
	assert_int_equal(sweep_at(t + 50 * 3600, NULL), 0);
	admin_wallet(a.id, &avail, &frozen);
	assert_int_equal(avail, 350);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
deadline_then_complete(void **state)
{
	struct test_user res, owner;
	struct test_agent a;
	char study[IDS_BUFSZ], prt[IDS_BUFSZ], body[1024], iso[TIMEFMT_BUFSZ], st[32];
	long long avail, frozen, avail0, frozen0;
	struct resp r;
	int64_t deadline = (int64_t)time(NULL) + 3600;

	(void)state;
	researcher(&res, 100000);
	assert_int_equal(timefmt_format(deadline, iso), 0);
	snprintf(body, sizeof body, "{\"title\":\"Deadline study\",\"description\":\"d\","
	    "\"study_url\":\"https://x.example.org/\",\"reward_per_participant\":1000,"
	    "\"max_participants\":3,\"screening_criteria\":\"anyone\","
	    "\"estimated_duration_minutes\":5,\"deadline\":\"%s\"}", iso);
	r = post_as(res.hdr, body, "/api/v1/studies");
	assert_int_equal(r.status, 201);
	snprintf(study, sizeof study, "%s", jstr(&r, "id"));
	resp_free(&r);
	agent_claimed(&a, &owner, "Late");
	accept_study(&a, study, prt);
	balance_of(res.hdr, &avail0, &frozen0);
	assert_int_equal(frozen0, 3 * SLOT_OF(1000));

	assert_int_equal(sweep_at(deadline - 1, NULL), 0);
	r = get_as(res.hdr, "/api/v1/studies/%s", study);
	assert_string_equal(jstr(&r, "status"), "active");
	resp_free(&r);
	assert_int_equal(sweep_at(deadline, NULL), 0);
	r = get_as(res.hdr, "/api/v1/studies/%s", study);
	assert_string_equal(jstr(&r, "status"), "awaiting_review");
	resp_free(&r);
	/* the two slots never taken are refunded at once */
	balance_of(res.hdr, &avail, &frozen);
	assert_int_equal(frozen, SLOT_OF(1000));
	assert_int_equal(avail, avail0 + 2 * SLOT_OF(1000));
	/* still open: not completed */
	assert_int_equal(sweep_at(deadline + 60, NULL), 0);
	r = get_as(res.hdr, "/api/v1/studies/%s", study);
	assert_string_equal(jstr(&r, "status"), "awaiting_review");
	resp_free(&r);
	/* the participation times out; the study completes in the same run */
	assert_int_equal(sweep_at(sql_int("SELECT accepted_at FROM participations WHERE id = '%s'",
	    prt) + 24 * 3600, NULL), 0);
	assert_string_equal(part_status(prt, st), "timed_out");
	r = get_as(res.hdr, "/api/v1/studies/%s", study);
	assert_string_equal(jstr(&r, "status"), "completed");
	resp_free(&r);
	balance_of(res.hdr, &avail, &frozen);
	assert_int_equal(frozen, 0);
	assert_int_equal(avail, avail0 + 3 * SLOT_OF(1000));
	assert_true(sql_int("SELECT COUNT(*) FROM transactions WHERE study_id = '%s'"
	    " AND type = 'study_unfreeze' AND amount_cents = %d", study, SLOT_OF(1000)) == 1);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/*
 * Seed n due participations of one study through the fixture layer
 * (db_fixture_seed_participations): claimed agents agt_s<tag>... with
 * wallets, half accepted 25 h ago and (when submitted) the other half
 * submitted 49 h ago.  Returns the tag naming the rows.
 */
static void
seed(const struct test_user *res, char study[IDS_BUFSZ], int n, int submitted, char tag[8])
{
	snprintf(tag, 8, "%06x", randombytes_uniform(0xffffff));
	study_new(res, study, 1, n, NULL);
	if (submitted)
		fixture("seed-participations %s %s %d %d %d", study, tag, n, 25 * 3600, 49 * 3600);
	else
		fixture("seed-participations %s %s %d %d", study, tag, n, 25 * 3600);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
two_sweeps_at_once(void **state)
{
	struct test_user res;
	char study[IDS_BUFSZ], tag[8], cmd[2048];
	pid_t p1, p2;
	int s1, s2;

	(void)state;
	researcher(&res, 100000);
	seed(&res, study, 2000, 1, tag);
	/* Without the named lock: correctness must not depend on it. */
	snprintf(cmd, sizeof cmd, "%s/build/arps-sweep --config %s --no-lock --batch 100 2>>%s/log/sweep-test.log",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"), getenv("ARPS_VAR"));
	if ((p1 = fork()) == 0)
		_exit(system(cmd) == 0 ? 0 : 1);
	if ((p2 = fork()) == 0)
		_exit(system(cmd) == 0 ? 0 : 1);
	waitpid(p1, &s1, 0);
	waitpid(p2, &s2, 0);
	assert_int_equal(WEXITSTATUS(s1), 0);
	assert_int_equal(WEXITSTATUS(s2), 0);
	/* every participation moved exactly once, reputation changed once */
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'timed_out'", study), 1000);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'approved'", study), 1000);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents WHERE id LIKE 'agt_s%s%%'"
	    " AND reputation = 45", tag), 1000);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents WHERE id LIKE 'agt_s%s%%'"
	    " AND reputation = 52", tag), 1000);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM transactions WHERE study_id = '%s'"
	    " AND type = 'earning'", study), 1000);
	assert_int_equal(sql_int("SELECT SUM(available_cents) FROM wallets WHERE owner_id LIKE"
	    " 'agt_s%s%%'", tag), 1000);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
killed_mid_batch(void **state)
{
	struct test_user res;
	char study[IDS_BUFSZ], tag[8], path[1024], cfg[1024];
	long long moved;
	pid_t p;
	int s, rc;

	(void)state;
	researcher(&res, 100000);
	seed(&res, study, 2000, 0, tag);
	snprintf(path, sizeof path, "%s/build/arps-sweep", getenv("ARPS_ROOT"));
	snprintf(cfg, sizeof cfg, "%s", getenv("ARPS_CONFIG"));
	if ((p = fork()) == 0) {
		execl(path, "arps-sweep", "--config", cfg, "--batch", "50", (char *)NULL);
		_exit(127);
	}
	usleep(400000);
	kill(p, SIGKILL);
	waitpid(p, &s, 0);
	moved = sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'timed_out'", study);
	print_message("sweep killed after moving %lld of 2000\n", moved);
	/* batches are atomic: whole batches or nothing */
	assert_int_equal(moved % 50, 0);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents WHERE id LIKE 'agt_s%s%%'"
	    " AND reputation = 45", tag), moved);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
	/* a killed sweep's lease expires 30 s later (design.md §13.4): now */
	rc = fixture_rc("lease-expire sweep");	/* 1: expired already (a kill between runs) */
	assert_true(rc == 0 || rc == 1);
	assert_int_equal(sweep_at((int64_t)time(NULL), NULL), 0);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'timed_out'", study), 2000);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents WHERE id LIKE 'agt_s%s%%'"
	    " AND reputation = 45", tag), 2000);
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", study), 0);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* Run cmd through the shell; 1 when its output (stderr too) has want. */
static int
output_has(const char *cmd, const char *want, char *line, size_t n)
{
	int hit = 0;
	FILE *p;

	assert_non_null(p = popen(cmd, "r"));
	while (fgets(line, (int)n, p) != NULL)
		if (strstr(line, want) != NULL)
			hit = 1;
	pclose(p);
	return hit;
}

/* The sweep's lease held by "another sweep" (on any host or node) for
 * seconds from now, at fencing token token. */
static void
lease_set(long long token, int seconds)
{
	fixture("lease-put sweep %lld test %d", token, seconds);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM leases WHERE name = 'sweep' AND token = %lld",
	    token), 1);
}

/* design.md §13.4: a second sweep skips while the lease is live. */
static void
lease_skips_second(void **state)
{
	char cmd[2048], line[512];
	long long token;

	(void)state;
	token = sql_int("SELECT COALESCE(MAX(token), 0) FROM leases WHERE name = 'sweep'") + 10;
	lease_set(token, 30);
	snprintf(cmd, sizeof cmd, "%s/build/arps-sweep --config %s 2>&1; echo exit=$?",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"));
	assert_true(output_has(cmd, "skipped: another sweep holds the lease", line, sizeof line));
	assert_string_equal(line, "exit=0\n");
	/* the other's lease untouched */
	assert_int_equal(sql_int("SELECT COUNT(*) FROM leases WHERE name = 'sweep' AND token = %lld"
	    " AND holder = 'test'", token), 1);
	lease_set(token, -1);	/* expired: the next sweep goes on */
}

/* A lease whose holder died (not renewed past its expiry) is taken by the
 * next sweep, with a new token, and given up at its end. */
static void
stale_lease_expires(void **state)
{
	char cmd[2048], line[512];
	long long token;

	(void)state;
	token = sql_int("SELECT COALESCE(MAX(token), 0) FROM leases WHERE name = 'sweep'") + 10;
	lease_set(token, -1);
	snprintf(cmd, sizeof cmd, "%s/build/arps-sweep --config %s 2>&1; echo exit=$?",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"));
	assert_false(output_has(cmd, "skipped", line, sizeof line));
	assert_string_equal(line, "exit=0\n");
	assert_int_equal(sql_int("SELECT COUNT(*) FROM leases WHERE name = 'sweep' AND token = %lld"
	    " AND holder <> 'test' AND expires_at = 0", token + 1), 1);
}

/*
 * A sweep whose lease another took meanwhile stops before its next batch:
 * run with its old token (build/tests/arps-fixture sweep-token), it moves
 * nothing and the rows stay due; with the live token they move, once.
 */
static void
fenced_sweep_stops(void **state)
{
	struct test_user res;
	char study[IDS_BUFSZ], tag[8], cmd[2048], line[512];
	long long token;

	(void)state;
	researcher(&res, 100000);
	seed(&res, study, 6, 0, tag);
	token = sql_int("SELECT COALESCE(MAX(token), 0) FROM leases WHERE name = 'sweep'") + 10;
	lease_set(token + 1, 30);	/* taken by another since token */
	snprintf(cmd, sizeof cmd, "%s/build/tests/arps-fixture --config %s sweep-token %lld 2>&1",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"), token);
	assert_true(output_has(cmd, "fenced moved 0", line, sizeof line));
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'accepted'", study), 6);
	snprintf(cmd, sizeof cmd, "%s/build/tests/arps-fixture --config %s sweep-token %lld 2>&1",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG"), token + 1);
	assert_false(output_has(cmd, "fenced", line, sizeof line));
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'timed_out'", study), 6);
	/* renewed by each batch: still the holder's, still live */
	assert_int_equal(sql_int("SELECT COUNT(*) FROM leases WHERE name = 'sweep' AND token = %lld"
	    " AND beats >= 6 AND expires_at > UNIX_TIMESTAMP()", token + 1), 1);
	lease_set(token + 1, -1);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

static void
bad_usage(void **state)
{
	(void)state;
	assert_int_equal(sh("%s/build/arps-sweep --config %s --now yesterday 2>/dev/null",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG")), 2);
	assert_int_equal(sh("%s/build/arps-sweep --config %s --frobnicate 2>/dev/null",
	    getenv("ARPS_ROOT"), getenv("ARPS_CONFIG")), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeout_at_24h),
		cmocka_unit_test(auto_approve_at_48h),
		cmocka_unit_test(deadline_then_complete),
		cmocka_unit_test(two_sweeps_at_once),
		cmocka_unit_test(killed_mid_batch),
		cmocka_unit_test(lease_skips_second),
		cmocka_unit_test(stale_lease_expires),
		cmocka_unit_test(fenced_sweep_stops),
		cmocka_unit_test(bad_usage),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_sweep", tests, NULL, NULL);
}
