/*
 * The matching engine (match/engine.h) against MariaDB: the index of open
 * studies follows the change sequence, the top k of a page, and the
 * caches a worker keeps per agent at sizes the test sets.
 *
 * The index holds every open study of its database, so this suite has a
 * database of its own, arps_match_test (tools/dev.sh creates it beside
 * arps), migrated here; each test first closes every study left open,
 * so the open studies are exactly the ones it makes.  No model is mapped:
 * vectors are only normalised, and the test chooses them: a study's
 * criteria vector is cos(t) e0 + sin(t) e1 and the bio is e0, so its
 * cosine is cos(t) and the ranking is known in advance.
 */
#include <math.h>
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
#include "core/score.h"
#include "db/accounts.h"
#include "db/db.h"
#include "db/embeddings.h"
#include "db/ledger.h"
#include "db/match.h"
#include "db/studies.h"
#include "lib/config.h"
#include "lib/secret.h"
#include "match/engine.h"
#include "tests/db/dbtest.h"
#include "txn/lifecycle.h"
#include "tests/lib/fixture.h"

#define TEST_DB	"arps_match_test"

static struct config cfg;
static struct db *db;
static struct account acc;	/* the researcher: every study is hers */
static struct account owner;	/* the agents' owner (not hers: OWN_STUDY) */

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

static void
new_account(struct account *a, int64_t cents)
{
	const char *party[LEDGER_P__MAX] = { 0 };
	struct ledger_in li = { 0 };
	struct ledger_entry le;
	char email[64];

	snprintf(email, sizeof email, "match-%08x@example.org", randombytes_random());
	begin();
	assert_int_equal(db_account_create(db, email, ACC_ROLE_RESEARCHER, time(NULL), a), DB_OK);
	li.ev = LEDGER_EV_TOPUP;
	li.amount = cents;
	assert_int_equal(ledger_build(&li, &le), ARPS_OK);
	party[LEDGER_P_WALLET] = a->id;
	assert_int_equal(db_ledger_post(db, &le, party, NULL, LEDGER_EV_TOPUP, NULL, time(NULL)),
	    DB_OK);
	commit();
}

/* A claimed agent of another account, reputation 50. */
static void
new_agent(char id[IDS_BUFSZ])
{
	struct agent a;
	unsigned char kh[32], ch[32];

	memset(&a, 0, sizeof a);
	assert_int_equal(ids_new(IDS_AGENT, &secret_rng, a.id), ARPS_OK);
	snprintf(a.name, sizeof a.name, "matcher");
	a.reputation = 50;
	a.created_at = time(NULL);
	randombytes_buf(kh, sizeof kh);
	randombytes_buf(ch, sizeof ch);
	begin();
	assert_int_equal(db_agent_insert(db, &a, kh, ch, "127.0.0.1"), DB_OK);
	assert_int_equal(db_agent_claim(db, a.id, owner.id), DB_OK);
	commit();
	memcpy(id, a.id, IDS_BUFSZ);
}

/* The criteria vector at angle t from e0 (unit length). */
static void
vec_at(float v[EMBED_DIM], double t)
{
	memset(v, 0, EMBED_DIM * sizeof *v);
	v[0] = (float)cos(t);
	v[1] = (float)sin(t);
}

static void
bio_e0(float v[EMBED_DIM])
{
	vec_at(v, 0);
}

/* Store study id's criteria vector (text: its title, as created). */
static void
ready(const char *id, const char *text, double t)
{
	float v[EMBED_DIM];

	vec_at(v, t);
	assert_int_equal(db_embedding_store(db, id, text, v, NULL, "test", 0, time(NULL), NULL),
	    DB_OK);
}

/* A study published at `created` with `slots` slots (deadline 0: none),
 * its criteria (the title) at angle t, ready. */
static void
study_at(const char *title, double t, int64_t slots, int64_t created, int64_t deadline,
    char id[IDS_BUFSZ])
{
	struct study_new sn;
	enum arps_err outcome;

	memset(&sn, 0, sizeof sn);
	assert_int_equal(money_study_plan(10, slots, cfg.fee_bps, cfg.max_study_budget_cents,
	    &sn.plan), ARPS_OK);
	sn.researcher_id = acc.id;
	sn.title = sn.description = sn.criteria = title;
	sn.study_url = "https://match.example.org/";
	sn.duration_minutes = 5;
	sn.has_deadline = deadline != 0;
	sn.deadline = deadline;
	begin();
	assert_int_equal(txn_study_create(db, &sn, created, id, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	ready(id, title, t);
}

static void
study(const char *title, double t, char id[IDS_BUFSZ])
{
	study_at(title, t, 5, time(NULL), 0, id);
}

static void
event(const char *id, enum study_event ev)
{
	enum arps_err outcome;

	begin();
	assert_int_equal(txn_study_event(db, id, NULL, ev, time(NULL), NULL, &outcome), DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
}

static void
take_part(const char *id, const char *agent)
{
	struct study s;
	struct participation p;
	enum arps_err outcome;

	begin();
	assert_int_equal(txn_study_accept(db, &cfg, id, agent, NULL, time(NULL), &s, &p, &outcome),
	    DB_OK);
	assert_int_equal(outcome, ARPS_OK);
	commit();
	db_study_clear(&s);
	db_participation_clear(&p);
}

/* Stop every open study, then bring the index up to date: it holds none. */
static void
clear_open(void)
{
	struct match_row *rows;
	struct match_index_info in;
	float *vec;
	int64_t after = 0;
	size_t i, n, nread;

	do {
		assert_int_equal(db_match_load(db, after, &rows, &vec, &n, &after, &nread), DB_OK);
		for (i = 0; i < n; i++)
			event(rows[i].id, STUDY_EV_STOP);
		free(rows);
		free(vec);
	} while (nread == DB_MATCH_PAGE);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	match_index_info(&in);
	assert_int_equal(in.n, 0);
}

static int
in_index(const char *id)
{
	struct match_row r;

	return match_index_row(id, &r);
}

/* A page for agent (bio e0, priority unless tier says), limit studies. */
static void
page_for(const char *agent, enum rep_tier tier, size_t limit, size_t basic_max, int64_t now,
    const struct match_heads *hd, struct match_top **top, size_t *n)
{
	struct match_params p = { 0, basic_max, limit };
	float bio[EMBED_DIM];

	bio_e0(bio);
	assert_int_equal(match_top(db, agent, bio, tier, now, &p, hd, top, n), DB_OK);
}

static void
page(const char *agent, size_t limit, struct match_top **top, size_t *n)
{
	page_for(agent, REP_TIER_PRIORITY, limit, limit, time(NULL), NULL, top, n);
}

/* Two pages are the same, entry for entry. */
static void
same_page(const struct match_top *a, size_t na, const struct match_top *b, size_t nb)
{
	size_t i;

	assert_int_equal(na, nb);
	for (i = 0; i < na; i++) {
		assert_string_equal(a[i].id, b[i].id);
		assert_true(a[i].similarity == b[i].similarity);
		assert_true(a[i].score == b[i].score);
		assert_int_equal(a[i].study.occupied, b[i].study.occupied);
		assert_int_equal(a[i].study.max_participants, b[i].study.max_participants);
		assert_int_equal(a[i].study.reward, b[i].study.reward);
		assert_string_equal(a[i].study.title, b[i].study.title);
	}
}

static int
setup(void **state)
{
	(void)state;
	if (dbtest_setup(&cfg, NULL) != 0)
		return -1;
	snprintf(cfg.db_name, sizeof cfg.db_name, "%s", TEST_DB);
	/* Its own database, migrated here: as arps_migrate (tools/dev.sh). */
	if (dbtest_migrate_config(&cfg) != 0)
		return -1;
	if ((db = db_open(&cfg)) == NULL || db_ensure(db) != DB_OK) {
		fprintf(stderr, "test_match_engine: no database %s (tools/dev.sh creates it): %s\n",
		    TEST_DB, db != NULL ? db_error(db) : "db_open failed");
		return -1;
	}
	if (db_migrate(db, cfg.migrations_dir, 0) != DB_OK) {
		fprintf(stderr, "test_match_engine: migrations: %s\n", db_error(db));
		return -1;
	}
	new_account(&acc, 100000000);
	new_account(&owner, 1);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	return 0;
}

/* Each test starts with the daemon's cache sizes, empty caches. */
static int
fresh(void **state)
{
	(void)state;
	return match_set_limits(NULL);
}

/*
 * The index follows the change sequence: a study published (and ready)
 * appears with its row; paused or stopped it leaves, resumed it comes
 * back; a slot taken and a new publication time apply to its row; one
 * whose slots are all taken leaves; a criteria vector reset leaves, and
 * stored anew comes back with the new vector (its similarity follows).
 */
static void
index_follows_changes(void **state)
{
	char a[IDS_BUFSZ], b[IDS_BUFSZ], c[IDS_BUFSZ], ag1[IDS_BUFSZ], ag2[IDS_BUFSZ];
	struct match_index_info in0, in;
	struct match_row r;
	struct match_top *top;
	size_t n;
	int64_t created;

	(void)state;
	clear_open();
	match_index_info(&in0);
	study_at("index a", 0.5, 2, time(NULL), 0, a);
	study("index b", 0.6, b);
	/* not ready yet: not open, not in the index */
	{
		struct study_new sn;
		enum arps_err outcome;

		memset(&sn, 0, sizeof sn);
		assert_int_equal(money_study_plan(10, 2, cfg.fee_bps, cfg.max_study_budget_cents,
		    &sn.plan), ARPS_OK);
		sn.researcher_id = acc.id;
		sn.title = sn.description = sn.criteria = "index c";
		sn.study_url = "https://match.example.org/";
		sn.duration_minutes = 5;
		begin();
		assert_int_equal(txn_study_create(db, &sn, time(NULL), c, &outcome), DB_OK);
		commit();
	}
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	match_index_info(&in);
	assert_int_equal(in.n, 2);
	assert_int_equal(in.loads, in0.loads);	/* read from the changes, not reloaded */
	assert_true(in.hw > in0.hw);
	assert_true(match_index_row(a, &r));
	assert_int_equal(r.occupied, 0);
	assert_int_equal(r.max_participants, 2);
	assert_true(in_index(b));
	assert_false(in_index(c));
	/* its vector ready: it appears */
	ready(c, "index c", 0.7);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_true(in_index(c));

	/* paused: gone; resumed: back; stopped: gone */
	event(b, STUDY_EV_PAUSE);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_false(in_index(b));
	assert_true(in_index(a));
	event(b, STUDY_EV_RESUME);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_true(in_index(b));
	event(b, STUDY_EV_STOP);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_false(in_index(b));

	/* a slot taken: its row says so; re-dated: the row and the log move */
	new_agent(ag1);
	new_agent(ag2);
	take_part(a, ag1);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_true(match_index_row(a, &r));
	assert_int_equal(r.occupied, 1);
	created = r.created_at;
	match_index_info(&in0);
	assert_int_equal(db_fixture_study_backdate(db, a, 100), DB_OK);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_true(match_index_row(a, &r));
	assert_int_equal(r.created_at, created - 100);
	match_index_info(&in);
	assert_true(in.gen > in0.gen);
	/* every slot taken: gone */
	take_part(a, ag2);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_false(in_index(a));

	/* criteria: reset, gone; stored anew at another angle, back, and the
	 * ranking scores the new vector */
	page("agt_nobody", 10, &top, &n);
	assert_int_equal(n, 1);
	assert_string_equal(top[0].id, c);
	assert_true(fabs(top[0].similarity - (cos(0.7) + 1) / 2) < 1e-5);
	match_top_free(top, n);
	assert_int_equal(db_fixture_embedding_reset(db, c, 0, 0), DB_OK);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_false(in_index(c));
	ready(c, "index c", 0.2);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
	assert_true(in_index(c));
	page("agt_nobody", 10, &top, &n);
	assert_int_equal(n, 1);
	assert_true(fabs(top[0].similarity - (cos(0.2) + 1) / 2) < 1e-5);
	match_top_free(top, n);
}

/*
 * A change the sequence no longer holds (its rows deleted, as retention
 * does an hour later) is missed by the reads of the changes; a worker idle
 * longer than 30 minutes (IX_STALE) reloads the whole index, which has it.
 */
static void
missed_changes_reload(void **state)
{
	char d[IDS_BUFSZ];
	struct match_index_info in0, in;
	int64_t now = time(NULL);

	(void)state;
	clear_open();
	study("reload d", 0.4, d);
	assert_int_equal(match_index_refresh(db, now), DB_OK);
	assert_true(in_index(d));
	match_index_info(&in0);
	event(d, STUDY_EV_STOP);
	assert_int_equal(db_fixture_study_changes_clear(db), DB_OK);
	/* within 30 minutes: the changes are read, and this one is missed */
	assert_int_equal(match_index_refresh(db, now + 60), DB_OK);
	match_index_info(&in);
	assert_int_equal(in.loads, in0.loads);
	assert_true(in_index(d));
	/* idle longer: a full load, without it */
	assert_int_equal(match_index_refresh(db, now + 60 + 1801), DB_OK);
	match_index_info(&in);
	assert_int_equal(in.loads, in0.loads + 1);
	assert_false(in_index(d));
	assert_int_equal(in.n, 0);
	assert_int_equal(match_index_refresh(db, time(NULL)), DB_OK);
}

/* The studies of the ranking tests, best first: s[0] .. s[5] at growing
 * angles, then three ties at one angle: t[1] and t[0] published at the
 * same second (the newer seq first), t[2] 100 s earlier. */
static char s6[6][IDS_BUFSZ], t3[3][IDS_BUFSZ];
static const char *order[9];

static void
ranking_studies(void)
{
	static const double angle[6] = { 0.1, 0.3, 0.5, 0.7, 0.9, 1.1 };
	char title[32];
	int64_t now = time(NULL);
	size_t i;

	clear_open();
	for (i = 0; i < 6; i++) {
		snprintf(title, sizeof title, "rank s%zu", i);
		study_at(title, angle[5 - i], 5, now, 0, s6[5 - i]);	/* worst first */
	}
	study_at("rank t2", 1.3, 5, now - 100, 0, t3[2]);
	study_at("rank t0", 1.3, 5, now, 0, t3[0]);
	study_at("rank t1", 1.3, 5, now, 0, t3[1]);
	for (i = 0; i < 6; i++)
		order[i] = s6[i];
	order[6] = t3[1];
	order[7] = t3[0];
	order[8] = t3[2];
}

/*
 * The top k: best first, ties by publication time then newest seq; k
 * larger than the open studies gives them all; basic's cap; a deadline
 * passed drops one; paging by rank: every page is a prefix of the
 * ranking, and pages walked by rank give the whole ranking.
 */
static void
top_k(void **state)
{
	static const double angle[6] = { 0.1, 0.3, 0.5, 0.7, 0.9, 1.1 };
	struct match_top *all, *top;
	char late[IDS_BUFSZ];
	size_t n, na, i, at, lim;
	int64_t now = time(NULL);

	(void)state;
	ranking_studies();
	page("agt_ranker", 50, &all, &na);
	assert_int_equal(na, 9);
	for (i = 0; i < na; i++) {
		assert_string_equal(all[i].id, order[i]);
		if (i > 0)
			assert_true(all[i].score <= all[i - 1].score);
	}
	for (i = 0; i < 6; i++) {
		assert_true(fabs(all[i].similarity - (cos(angle[i]) + 1) / 2) < 1e-5);
		assert_true(fabs(all[i].score - match_score(all[i].similarity, REP_TIER_PRIORITY)) <
		    1e-12);
	}
	assert_true(all[6].score == all[7].score && all[7].score == all[8].score);
	assert_true(all[5].score > all[6].score);

	/* paging by rank: the page of `lim` is the first lim of the ranking */
	for (lim = 1; lim <= 9; lim++) {
		page("agt_ranker", lim, &top, &n);
		same_page(top, n, all, lim);
		match_top_free(top, n);
	}
	/* walked 2 a page (each poll ranks at + 2 and keeps the last 2) */
	for (at = 0; at < na; at += 2) {
		page("agt_ranker", at + 2, &top, &n);
		assert_int_equal(n, at + 2 < na ? at + 2 : na);
		same_page(top + at, n - at, all + at, n - at);
		match_top_free(top, n);
	}

	/* basic: at most basic_max_studies, the best of them */
	page_for("agt_basic", REP_TIER_BASIC, 50, 2, now, NULL, &top, &n);
	assert_int_equal(n, 2);
	assert_string_equal(top[0].id, order[0]);
	assert_string_equal(top[1].id, order[1]);
	assert_true(top[0].score < all[0].score);	/* the tier's weight */
	match_top_free(top, n);

	/* a deadline: listed before it, not at it */
	study_at("rank late", 0.2, 5, now, now + 60, late);
	page_for("agt_ranker", REP_TIER_PRIORITY, 50, 50, now, NULL, &top, &n);
	assert_int_equal(n, 10);
	assert_string_equal(top[1].id, late);
	match_top_free(top, n);
	page_for("agt_ranker", REP_TIER_PRIORITY, 50, 50, now + 60, NULL, &top, &n);
	same_page(top, n, all, na);
	match_top_free(top, n);
	match_top_free(all, na);
}

/*
 * The caches at sizes the test sets.  A kept ranking gives the page a
 * fresh one gives (a hit, no ranking), also when its 3 entries run out
 * before a page of 5 and when a study is published after it was kept;
 * with room for 2 agents the third pushes out the least recent, whose
 * next page is ranked afresh.
 */
static void
rank_cache(void **state)
{
	struct match_limits l = { 2, 3, 1, 2, 2 }, got;
	struct match_stats st;
	struct match_top *ref, *top;
	struct match_index_info in;
	char nw[IDS_BUFSZ];
	size_t nref, n;

	(void)state;
	ranking_studies();
	page("agt_fresh", 9, &ref, &nref);	/* the daemon's sizes */
	assert_int_equal(nref, 9);

	assert_int_equal(match_set_limits(&l), 0);
	match_limits_get(&got);
	assert_int_equal(got.rank_keep, 3);
	page("agt_x", 5, &top, &n);
	same_page(top, n, ref, 5);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.rank_builds, 1);
	assert_int_equal(st.rank_hits, 0);
	/* again: a hit, the same page (the list of 3 runs out: the full
	 * ranking gives the rest) */
	page("agt_x", 5, &top, &n);
	same_page(top, n, ref, 5);
	match_top_free(top, n);
	page("agt_x", 2, &top, &n);
	same_page(top, n, ref, 2);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.rank_builds, 1);
	assert_int_equal(st.rank_hits, 2);

	/* published after the list was kept: caught up, in its place */
	match_index_info(&in);
	study("rank new", 0.2, nw);
	page("agt_x", 3, &top, &n);
	assert_int_equal(n, 3);
	assert_string_equal(top[0].id, ref[0].id);
	assert_string_equal(top[1].id, nw);
	assert_string_equal(top[2].id, ref[1].id);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.rank_builds, 1);
	assert_int_equal(st.rank_hits, 3);
	event(nw, STUDY_EV_STOP);
	page("agt_x", 2, &top, &n);
	same_page(top, n, ref, 2);
	match_top_free(top, n);

	/* two slots: y, then z pushes out x (the least recent) */
	page("agt_y", 2, &top, &n);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.rank_evictions, 0);
	page("agt_z", 2, &top, &n);
	same_page(top, n, ref, 2);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.rank_evictions, 1);
	assert_int_equal(st.rank_builds, 3);
	page("agt_z", 2, &top, &n);	/* kept */
	match_top_free(top, n);
	page("agt_x", 2, &top, &n);	/* pushed out: ranked afresh */
	same_page(top, n, ref, 2);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.rank_builds, 4);
	assert_int_equal(st.rank_evictions, 2);	/* y went for x */

	/* a size out of range changes nothing */
	l.rank_keep = 0;
	assert_int_equal(match_set_limits(&l), -1);
	l.rank_keep = 257;
	assert_int_equal(match_set_limits(&l), -1);
	l.rank_keep = 3;
	l.shown_slots = 1;
	assert_int_equal(match_set_limits(&l), -1);
	match_limits_get(&got);
	assert_int_equal(got.rank_keep, 3);
	assert_int_equal(got.shown_slots, 2);
	match_top_free(ref, nref);
}

/* The head a key's look-up reads: whether a change is pending for this
 * worker's index. */
static void
heads(struct match_heads *hd)
{
	assert_non_null(match_seq_now());
	assert_int_equal(db_match_pending(db, match_seq_now(), &hd->change_pending), DB_OK);
}

/*
 * The fast path (nothing pending: no statement of its own) with a past of
 * 1 agent and texts of 2 studies kept: its page is the database's, texts
 * pushed out and read again; after the agent takes part in its best study
 * a change is pending, and neither path lists that study again (the past
 * is read anew); another agent's past pushes out the first's.
 */
static void
fast_path(void **state)
{
	struct match_limits l = { 2, 3, 1, 2, 2 };
	struct match_stats st;
	struct match_heads hd;
	struct match_top *ref, *top;
	char ag[IDS_BUFSZ], other[IDS_BUFSZ];
	size_t nref, n;
	int64_t now;

	(void)state;
	ranking_studies();
	new_agent(ag);
	new_agent(other);
	assert_int_equal(match_set_limits(&l), 0);
	page(ag, 5, &ref, &nref);	/* the database's path */
	assert_int_equal(nref, 5);
	heads(&hd);
	assert_int_equal(hd.change_pending, 0);
	now = time(NULL);
	page_for(ag, REP_TIER_PRIORITY, 5, 5, now, &hd, &top, &n);
	same_page(top, n, ref, nref);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.past_reads, 1);
	assert_true(st.shown_misses >= 5);	/* 5 texts through 2 slots */
	assert_true(st.shown_evictions >= 3);
	/* again: the past kept, the same page */
	page_for(ag, REP_TIER_PRIORITY, 5, 5, time(NULL), &hd, &top, &n);
	same_page(top, n, ref, nref);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.past_reads, 1);
	assert_int_equal(st.past_hits, 1);

	/* taken part in: a change pending, so the database's path ... */
	take_part(ref[0].id, ag);
	heads(&hd);
	assert_int_equal(hd.change_pending, 1);
	page_for(ag, REP_TIER_PRIORITY, 5, 5, time(NULL), &hd, &top, &n);
	assert_int_equal(n, 5);
	same_page(top, 4, ref + 1, 4);
	assert_int_equal(top[4].study.occupied, 0);
	match_top_free(top, n);
	/* ... then the fast path again, with the past read anew */
	heads(&hd);
	assert_int_equal(hd.change_pending, 0);
	page_for(ag, REP_TIER_PRIORITY, 5, 5, time(NULL), &hd, &top, &n);
	assert_int_equal(n, 5);
	same_page(top, 4, ref + 1, 4);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.past_reads, 2);
	/* the other agent still sees it, with its slot taken; its past
	 * pushes out the first's */
	page_for(other, REP_TIER_PRIORITY, 1, 1, time(NULL), &hd, &top, &n);
	assert_int_equal(n, 1);
	assert_string_equal(top[0].id, ref[0].id);
	assert_int_equal(top[0].study.occupied, 1);
	match_top_free(top, n);
	match_stats_get(&st);
	assert_int_equal(st.past_evictions, 1);
	match_top_free(ref, nref);
}

/* Bio vectors kept for 2 agents: the least recently used goes; a vector
 * is kept under the hash of its text only. */
static void
bio_cache(void **state)
{
	struct match_limits l = { 2, 3, 1, 2, 2 };
	struct match_stats st;
	unsigned char h1[32], h2[32];
	float v[EMBED_DIM], out[EMBED_DIM];

	(void)state;
	assert_int_equal(match_set_limits(&l), 0);
	memset(h1, 1, sizeof h1);
	memset(h2, 2, sizeof h2);
	vec_at(v, 0.25);
	match_bio_keep("agt_a", h1, v);
	match_bio_keep("agt_b", h1, v);
	assert_int_equal(match_bio_kept("agt_a", h1, out), 1);	/* a used last */
	assert_true(memcmp(out, v, sizeof v) == 0);
	assert_int_equal(match_bio_kept("agt_a", h2, out), 0);	/* another text */
	match_bio_keep("agt_c", h1, v);				/* b goes */
	assert_int_equal(match_bio_kept("agt_b", h1, out), 0);
	assert_int_equal(match_bio_kept("agt_a", h1, out), 1);
	assert_int_equal(match_bio_kept("agt_c", h1, out), 1);
	match_stats_get(&st);
	assert_int_equal(st.bio_evictions, 1);
	/* a new text for a kept agent replaces its vector in place */
	match_bio_keep("agt_a", h2, v);
	assert_int_equal(match_bio_kept("agt_a", h1, out), 0);
	assert_int_equal(match_bio_kept("agt_a", h2, out), 1);
	assert_int_equal(match_bio_kept("agt_c", h1, out), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(index_follows_changes, fresh),
		cmocka_unit_test_setup(missed_changes_reload, fresh),
		cmocka_unit_test_setup(top_k, fresh),
		cmocka_unit_test_setup(rank_cache, fresh),
		cmocka_unit_test_setup(fast_path, fresh),
		cmocka_unit_test_setup(bio_cache, fresh),
	};

	return cmocka_run_group_tests_name("db_match_engine", tests, setup, teardown);
}
