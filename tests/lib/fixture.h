/*
 * Test fixtures: the writes the test suites and the benchmarks need that no
 * request can make (time passing for a code, a token, a study or its
 * participations; a reputation set outright; an embedding as if the encoder
 * had not run; a backlog of due participations seeded in bulk).  They live
 * here, in one place, so that each keeps the invariants the real code keeps;
 * no test or script writes a table with its own SQL.
 *
 * Reached through `arps-fixture VERB ...` (tests/arps-fixture.c, fixture_run), which refuses
 * unless the configuration says test_fixtures = true: only the dev, test and
 * bench stacks of tools/dev.sh write that line.
 *
 * Return convention of the db_fixture_* functions: enum db_rc (db/db.h).
 * DB_OK done; DB_NOTFOUND the subject does not exist; DB_CHECK an argument
 * out of range or the subject in no state for the change; DB_DUP a seeded
 * id exists; anything else is an infrastructure error.  Each runs in its
 * own transaction (db_tx), so a caller must not hold one open.
 */
#ifndef ARPS_TESTS_LIB_FIXTURE_H
#define ARPS_TESTS_LIB_FIXTURE_H

#include <stdint.h>

#include "db/db.h"

struct config;

#define FIXTURE_SEED_MAX	100000	/* participations per db_fixture_seed_participations */
#define FIXTURE_CLONE_MAX	200000	/* studies per db_fixture_studies_clone */
#define FIXTURE_TAG_LEN		6	/* [0-9a-z], names the seeded rows */

/* The login code mailed to email expires: its times move back so that it
 * expired a second before now (its lifetime unchanged). */
enum db_rc db_fixture_login_code_expire(struct db *db, const char *email, int64_t now);

/* The account's access tokens have not been used for `seconds`: each whole
 * token (created, last used, expires) moves back so that it was last used
 * `seconds` before now at the latest. */
enum db_rc db_fixture_tokens_idle(struct db *db, const char *account_id, int64_t seconds,
    int64_t now);

/* The absolute lifetime of the account's access tokens ends now: each was
 * created that much earlier (its last use stays where it is). */
enum db_rc db_fixture_tokens_expire(struct db *db, const char *account_id, int64_t now);

/* The agent's claim code expired a second before now (design.md §9.3). */
enum db_rc db_fixture_claim_code_expire(struct db *db, const char *agent_id, int64_t now);

/* Every rate-limit event happened `seconds` earlier: an hour passes for
 * every rolling window (design.md §9.2). */
enum db_rc db_fixture_rate_events_age(struct db *db, int64_t seconds);

/* n (1..FIXTURE_SEED_MAX) rate-limit events in bucket (its name as
 * db/limits.c forms it, e.g. msg-send:ACC_ID), each at `at`: a window
 * already that full (design.md §9.2).  The bucket row is made if new. */
enum db_rc db_fixture_rate_fill(struct db *db, const char *bucket, int64_t n, int64_t at);

/* The live lease `name` expired a second before now, as a dead holder's
 * does once its time is up (design.md §13.4); DB_NOTFOUND: no such lease,
 * DB_CHECK: it had expired already. */
enum db_rc db_fixture_lease_expire(struct db *db, const char *name, int64_t now);

/* The lease `name` held by `holder` at fencing token `token` until
 * expires_at ("another sweep" elsewhere); made or replaced. */
enum db_rc db_fixture_lease_put(struct db *db, const char *name, int64_t token,
    const char *holder, int64_t expires_at);

/* Set an agent's reputation (0..100) outright. */
enum db_rc db_fixture_agent_reputation(struct db *db, const char *agent_id, int64_t reputation);

/* The study was created `seconds` earlier (e.g. past the first-access
 * window of every tier), and its study.matched waiting for that window
 * (study_matches) are due as much earlier; nothing else of it moves. */
enum db_rc db_fixture_study_backdate(struct db *db, const char *study_id, int64_t seconds);

/* The deadline of an active or paused study passed a second before now
 * (created no later than that); DB_CHECK for a study in another state. */
/* A pending outbox row becomes due now (its back-off skipped);
 * DB_NOTFOUND when no pending row has that seq. */
enum db_rc db_fixture_outbox_due(struct db *db, int64_t seq, int64_t now);
/* An active webhook has been failing since `seconds` before now (its
 * next failed try decides whether it is disabled); DB_NOTFOUND when no
 * active webhook has that id. */
enum db_rc db_fixture_webhook_failing(struct db *db, const char *hook_id, int64_t seconds,
    int64_t now);
enum db_rc db_fixture_study_deadline_pass(struct db *db, const char *study_id, int64_t now);

/* Every participation of the study happened `seconds` earlier: all of its
 * times (accepted, started, submitted, reviewed, ended) move together, and
 * the study is created no later than its first acceptance.  States and the
 * study's counters are left alone: a participation moved past its timeout
 * is due, exactly as one the sweep has not reached yet. */
enum db_rc db_fixture_participations_backdate(struct db *db, const char *study_id,
    int64_t seconds);

/* The subject's embedding (agt_ bio, std_ criteria) as if the encoder had
 * not run (failed = 0: 'processing') or had refused the text (failed = 1:
 * 'failed'), without a vector; its last update moves `age` seconds back. */
enum db_rc db_fixture_embedding_reset(struct db *db, const char *subject, int failed,
    int64_t age);

/* A waiting embedding ('processing') as if arps-embed had tried it
 * `attempts` times (0-100) and died each time; DB_NOTFOUND when none waits. */
enum db_rc db_fixture_embedding_attempts(struct db *db, const char *subject, int64_t attempts);

/*
 * Seed n (1..FIXTURE_SEED_MAX) due participations of an active study with
 * room for them: n claimed agents owned by the study's researcher (ids
 * agt_s<tag><9-digit seq>, reputation 50, empty wallets: no signup bonus,
 * so no posting), one participation each (prt_s<tag><seq>), the study's
 * occupied slots raised by n and the study created no later than its first
 * acceptance.  Odd rows are accepted at
 * accepted_at; when submitted_at is not 0, even rows are submitted then
 * (and accepted no later).  tag is FIXTURE_TAG_LEN of [0-9a-z].
 */
enum db_rc db_fixture_seed_participations(struct db *db, const char *study_id, const char *tag,
    int64_t n, int64_t accepted_at, int64_t submitted_at);

/*
 * Seed n (1..FIXTURE_SEED_MAX) unclaimed agents (ids agt_s<tag><9-digit
 * seq>, no account, no wallet), each with a different bio of about 60 words
 * set at now as POST /profile/bio sets it (db_bio_set): n embeddings waiting
 * in 'processing', for the re-embedding benchmark (tools/bench-embed.sh).
 * 500 agents per transaction; DB_DUP when a seeded id exists (the batches
 * before it stay).  tag is FIXTURE_TAG_LEN of [0-9a-z].
 */
enum db_rc db_fixture_seed_bios(struct db *db, const char *tag, int64_t n, int64_t now);

/* n claimed agents agt_s<tag><seq 9 digits>, seq 1..n, each a copy of the
 * claimed agent `template` with a ready bio vector (its owner, bio text and
 * vector, stored directly: no encoder), reputations 85, 60, 40 in turn;
 * one set-based statement a table per 5,000 (study.matched's fan-out
 * benchmark).  DB_NOTFOUND: no claimed template; DB_CHECK: it has no ready
 * vector, or n out of 1..FIXTURE_SEED_MAX. */
enum db_rc db_fixture_seed_matchable(struct db *db, const char *tag, int64_t n,
    const char *template, int64_t now);

/* Remove a researcher's studies (with their participations) and wallet,
 * none of which any ledger posting may name (DB_CHECK otherwise): what a
 * schema test made by hand leaves nothing verify-ledger would see. */
enum db_rc db_fixture_researcher_purge(struct db *db, const char *account_id);

/* Every row of study_changes gone, as if an index had missed them (the
 * matching engine's test of its reload, tests/db/test_match_engine.c). */
enum db_rc db_fixture_study_changes_clear(struct db *db);

/* arps-fixture VERB ARGS...: args is NULL-terminated.  Returns the exit
 * status: 0 done, 1 refused (one-line reason on stderr, also when
 * cfg->test_fixtures is off), 2 usage. */
int fixture_run(struct db *db, const struct config *cfg, char **args);

/*
 * N more studies like study_id (an active study whose criteria embedding is
 * ready; DB_CHECK otherwise), owned by its researcher and created now
 * through txn_study_create (each frozen from the researcher's wallet as
 * POST /studies does: DB_CHECK when the money runs out), each with the
 * template's criteria vector, computed once, copied as ready.  500 per
 * transaction; for the benchmarks' 100,000 open studies.
 */
enum db_rc db_fixture_studies_clone(struct db *db, const char *study_id, int64_t n, int64_t now);

#endif
