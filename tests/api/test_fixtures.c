/* The test-fixture layer (tests/lib/fixture.h, `arps-fixture ...`): refused
 * without test_fixtures = true, and each fixture keeps the invariants the
 * real code keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "tests/api/study_helpers.h"

/* Run arps-fixture with config cfg and args; its exit status, and the
 * number of lines it wrote to stderr (the first into line). */
static int
admin_with(const char *cfg, int *lines, char *line, size_t n, const char *args)
{
	char cmd[2048], err[] = "/tmp/arps-fixture-err-XXXXXX", buf[512];
	int fd = mkstemp(err), rc;
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "%s/build/tests/arps-fixture --config %s %s >/dev/null 2>%s",
	    getenv("ARPS_ROOT"), cfg, args, err);
	rc = sh("%s", cmd);
	*lines = 0;
	line[0] = '\0';
	assert_non_null(f = fopen(err, "r"));
	while (fgets(buf, sizeof buf, f) != NULL)
		if ((*lines)++ == 0)
			snprintf(line, n, "%s", buf);
	fclose(f);
	unlink(err);
	return rc;
}

/* Without the key, or with it false, every test verb is refused with one
 * line, before anything is written. */
static void
refused_without_the_key(void **state)
{
	static const char *const tails[] = { "", "test_fixtures = false\n" };
	struct test_user o;
	struct test_agent a;
	char cfg[] = "/tmp/arps-fixture-conf-XXXXXX", args[256], line[512];
	int fd, lines;
	size_t i;

	(void)state;
	agent_claimed(&a, &o, "Guarded");
	for (i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		assert_true((fd = mkstemp(cfg)) >= 0);
		close(fd);
		assert_int_equal(sh("grep -v '^test_fixtures' %s > %s && printf '%s' >> %s",
		    getenv("ARPS_CONFIG"), cfg, tails[i], cfg), 0);
		snprintf(args, sizeof args, "agent-reputation %s 99", a.id);
		assert_int_equal(admin_with(cfg, &lines, line, sizeof line, args), 1);
		assert_int_equal(lines, 1);
		assert_non_null(strstr(line, "test_fixtures = true"));
		assert_int_equal(admin_with(cfg, &lines, line, sizeof line, "frobnicate"), 1);
		unlink(cfg);
		snprintf(cfg, sizeof cfg, "/tmp/arps-fixture-conf-XXXXXX");
	}
	assert_int_equal(reputation_of(&a), 50);
	/* the stack's own config allows it */
	fixture("agent-reputation %s 99", a.id);
	assert_int_equal(reputation_of(&a), 99);
}

/* Usage errors exit 2, refusals 1, each with a reason. */
static void
usage_and_refusals(void **state)
{
	struct test_user u;
	char s[IDS_BUFSZ];

	(void)state;
	researcher(&u, 10000);
	study_new(&u, s, 100, 2, NULL);
	assert_int_equal(fixture_rc("2>/dev/null"), 2);
	assert_int_equal(fixture_rc("frobnicate 2>/dev/null"), 2);
	assert_int_equal(fixture_rc("agent-reputation agt_nope 50 2>/dev/null"), 2);
	assert_int_equal(fixture_rc("agent-reputation agt_0000000000000000 101 2>/dev/null"), 2);
	assert_int_equal(fixture_rc("agent-reputation agt_0000000000000000 50 2>/dev/null"), 1);
	assert_int_equal(fixture_rc("study-backdate 60 2>/dev/null"), 2);
	assert_int_equal(fixture_rc("study-backdate -5 %s 2>/dev/null", s), 2);
	assert_int_equal(fixture_rc("embedding-reset %s ready 2>/dev/null", s), 2);
	assert_int_equal(fixture_rc("seed-participations %s BAD!!! 1 60 2>/dev/null", s), 2);
	/* more than the free slots, or a study not open */
	assert_int_equal(fixture_rc("seed-participations %s %06x 3 60 2>/dev/null", s,
	    randombytes_uniform(0xffffff)), 1);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'", s), 0);
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", s), 0);
	assert_int_equal(fixture_rc("login-code-expire nobody@example.org 2>/dev/null"), 1);
	assert_int_equal(fixture_rc("tokens-expire acc_0000000000000000 2>/dev/null"), 1);
}

/* Backdated participations move with all their times, and their study is
 * never created after its first acceptance; counters do not move. */
static void
participations_move_together(void **state)
{
	struct test_user u, o;
	struct test_agent a;
	char s[IDS_BUFSZ];
	long long acc, sub, created;

	(void)state;
	researcher(&u, 10000);
	study_new(&u, s, 100, 2, NULL);
	agent_claimed(&a, &o, "Mover");
	agent_set_reputation(a.id, 80);		/* no first-access delay */
	assert_int_equal(study_post(a.hdr, s, "accept", NULL), 200);
	assert_int_equal(study_post(a.hdr, s, "complete", NULL), 200);
	acc = sql_int("SELECT accepted_at FROM participations WHERE study_id = '%s'", s);
	sub = sql_int("SELECT submitted_at FROM participations WHERE study_id = '%s'", s);
	assert_true(acc > 0 && sub >= acc);
	participations_backdate(s, 7200);	/* not yet due: nothing for the sweeps */
	assert_int_equal(sql_int("SELECT accepted_at FROM participations WHERE study_id = '%s'", s),
	    acc - 7200);
	assert_int_equal(sql_int("SELECT submitted_at FROM participations WHERE study_id = '%s'", s),
	    sub - 7200);
	created = sql_int("SELECT created_at FROM studies WHERE id = '%s'", s);
	assert_true(created <= acc - 7200);
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", s), 1);
	/* a study backdated further keeps its participations where they are */
	study_backdate(s, 3600);
	assert_int_equal(sql_int("SELECT created_at FROM studies WHERE id = '%s'", s), created - 3600);
	assert_int_equal(sql_int("SELECT accepted_at FROM participations WHERE study_id = '%s'", s),
	    acc - 7200);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* An idle or expired token keeps its order of times and its lifetime. */
static void
tokens_keep_their_lifetime(void **state)
{
	struct test_user u;
	long long life;

	(void)state;
	user_login(&u, "fixture-token");
	life = sql_int("SELECT expires_at - created_at FROM access_tokens WHERE account_id = '%s'",
	    u.id);
	assert_true(life > 0);
	fixture("tokens-idle %s %d", u.id, 3 * 86400);
	assert_int_equal(sql_int("SELECT expires_at - created_at FROM access_tokens"
	    " WHERE account_id = '%s'", u.id), life);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM access_tokens WHERE account_id = '%s'"
	    " AND created_at <= last_used_at AND last_used_at <= UNIX_TIMESTAMP() - 3 * 86400"
	    " AND last_used_at < expires_at", u.id), 1);
	fixture("tokens-expire %s", u.id);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM access_tokens WHERE account_id = '%s'"
	    " AND created_at <= last_used_at AND expires_at <= UNIX_TIMESTAMP()"
	    " AND expires_at - created_at = %lld", u.id, life), 1);
}

/* token-new prints a token of the account that authenticates as it, with
 * a login's lifetime; an unknown account gets none. */
static void
token_new_authenticates(void **state)
{
	struct test_user u;
	struct resp r;
	char tok[TOKEN_BUFSZ + 8], hdr[TOKEN_BUFSZ + 32];
	const char *id;

	(void)state;
	user_login(&u, "fixture-token-new");
	assert_int_equal(fixture_out(tok, sizeof tok, "token-new %s", u.id), 0);
	assert_int_equal(strlen(tok), TOKEN_LEN);
	assert_string_not_equal(tok, u.token);
	snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tok);
	r = http_get("/api/v1/account", HDRS(hdr));
	assert_int_equal(r.status, 200);
	assert_non_null(id = jstr(&r, "id"));
	assert_string_equal(id, u.id);
	resp_free(&r);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM access_tokens WHERE account_id = '%s'"
	    " AND expires_at - created_at = 30 * 86400 AND revoked_at IS NULL", u.id), 2);
	tok[0] = '\0';
	assert_int_equal(fixture_out(tok, sizeof tok, "token-new acc_0000000000000000 2>/dev/null"), 1);
	assert_string_equal(tok, "");
	assert_int_equal(fixture_rc("token-new agt_0000000000000000 2>/dev/null"), 2);
}

/* A seeded backlog adds up: agents owned by the researcher, wallets,
 * occupied slots, times in order, the ledger intact. */
static void
seed_adds_up(void **state)
{
	struct test_user u;
	char s[IDS_BUFSZ], tag[8];

	(void)state;
	researcher(&u, 10000);
	study_new(&u, s, 1, 40, NULL);
	snprintf(tag, sizeof tag, "%06x", randombytes_uniform(0xffffff));
	/* not yet due (1 h, 2 h): the other suites' sweeps see them as any
	 * participation left behind */
	fixture("seed-participations %s %s 30 3600 7200", s, tag);
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", s), 30);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'submitted' AND accepted_at <= submitted_at", s), 15);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM participations WHERE study_id = '%s'"
	    " AND status = 'accepted' AND submitted_at IS NULL", s), 15);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM agents a JOIN wallets w ON w.owner_id = a.id"
	    " WHERE a.id LIKE 'agt_s%s%%' AND a.status = 'claimed' AND a.account_id = '%s'", tag, u.id),
	    30);
	assert_int_equal(sql_int("SELECT COUNT(*) FROM studies s WHERE s.id = '%s' AND s.created_at <="
	    " (SELECT MIN(accepted_at) FROM participations WHERE study_id = s.id)", s), 1);
	/* the same tag again clashes, and nothing of the second try stays */
	assert_int_equal(fixture_rc("seed-participations %s %s 5 60 2>/dev/null", s, tag), 1);
	assert_int_equal(sql_int("SELECT occupied FROM studies WHERE id = '%s'", s), 30);
	assert_int_equal(admin(NULL, 0, "verify-ledger"), 0);
}

/* Seeded bios wait for the encoder as POST /profile/bio leaves them: each
 * agent unclaimed with its own text and an embedding row of it. */
static void
seed_bios_wait(void **state)
{
	char tag[8];

	(void)state;
	snprintf(tag, sizeof tag, "%06x", randombytes_uniform(0xffffff));
	fixture("seed-bios %s 3", tag);
	assert_int_equal(sql_int("SELECT COUNT(DISTINCT a.bio) FROM agents a JOIN embeddings e"
	    " ON e.subject_id = a.id WHERE a.id LIKE 'agt_s%s%%' AND a.status = 'unclaimed'"
	    " AND a.account_id IS NULL AND e.status IN ('processing', 'ready')", tag), 3);
	assert_int_equal(fixture_rc("seed-bios %s 1 2>/dev/null", tag), 1);
	assert_int_equal(fixture_rc("seed-bios BAD!!! 1 2>/dev/null"), 2);
	assert_int_equal(fixture_rc("seed-bios %s 0 2>/dev/null", tag), 2);
}

/*
 * No test helper or script writes a table itself: every INSERT, UPDATE,
 * DELETE or REPLACE that tests/api, tests/db and the tools' shell scripts
 * need is in tests/lib/fixture.c instead.  Exempt: tests/db/test_schema.c, whose
 * statements are the writes the schema must refuse (its clean-up goes
 * through the fixtures), tests/db/test_rows.c, which writes only a
 * TEMPORARY table of its own session (db/rows.c's statements, checked row
 * by row), tools/test-production.sh, whose writes as arps_app
 * are the ones the grants must refuse, tools/dev.sh, which creates the
 * database and its user, and tools/check-sql-home.sh, whose comments name
 * the statements it looks for.  (The pattern is spelled with [ ] so that this
 * file does not match itself.)
 */
static void
no_sql_writes_beside_the_fixtures(void **state)
{
	char cmd[1024], line[512];
	FILE *p;
	int hits = 0;

	(void)state;
	snprintf(cmd, sizeof cmd, "cd %s && grep -nE"
	    " '(INSERT[ ]INTO|REPLACE[ ]INTO|UPDATE[ ][a-z_]+[ ]SET|DELETE[ ]FROM)'"
	    " tests/api/*.c tests/api/*.h tests/db/*.c tools/*.sh"
	    " | grep -v '^tests/db/test_schema\\.c:\\|^tests/db/test_rows\\.c:\\|^tools/dev\\.sh:"
	    "\\|^tools/test-production\\.sh:\\|^tools/check-sql-home\\.sh:'", getenv("ARPS_ROOT"));
	assert_non_null(p = popen(cmd, "r"));
	while (fgets(line, sizeof line, p) != NULL) {
		print_error("SQL write outside tests/lib/fixture.c: %s", line);
		hits++;
	}
	pclose(p);
	assert_int_equal(hits, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused_without_the_key),
		cmocka_unit_test(usage_and_refusals),
		cmocka_unit_test(participations_move_together),
		cmocka_unit_test(tokens_keep_their_lifetime),
		cmocka_unit_test(token_new_authenticates),
		cmocka_unit_test(seed_adds_up),
		cmocka_unit_test(seed_bios_wait),
		cmocka_unit_test(no_sql_writes_beside_the_fixtures),
	};

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests_name("api_fixtures", tests, NULL, NULL);
}
