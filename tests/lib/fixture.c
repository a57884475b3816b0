#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ids.h"
#include "core/validate.h"
#include "db/accounts.h"
#include "db/db.h"
#include "db/groups.h"
#include "tests/lib/fixture.h"
#include "db/studies.h"
#include "txn/lifecycle.h"
#include "txn/sweep.h"
#include "lib/config.h"
#include "lib/secret.h"

/* --- statements ---------------------------------------------------------- */

static const char q_code_lock[] =
    "SELECT expires_at FROM login_codes WHERE email = ? FOR UPDATE";
static const char q_code_shift[] =
    "UPDATE login_codes SET created_at = created_at - ?, expires_at = expires_at - ?"
    " WHERE email = ?";
static const char q_tok_lock[] =
    "SELECT token_hash FROM access_tokens WHERE account_id = ? FOR UPDATE";
/* Assignments run left to right: every shift reads last_used_at (or
 * expires_at) before it is changed last. */
static const char q_tok_idle[] =
    "UPDATE access_tokens SET created_at = created_at - GREATEST(last_used_at - ?, 0),"
    " expires_at = expires_at - GREATEST(last_used_at - ?, 0),"
    " revoked_at = revoked_at - GREATEST(last_used_at - ?, 0),"
    " last_used_at = LEAST(last_used_at, ?) WHERE account_id = ?";
static const char q_tok_expire[] =
    "UPDATE access_tokens SET created_at = created_at - GREATEST(expires_at - ?, 0),"
    " expires_at = LEAST(expires_at, ?) WHERE account_id = ?";
static const char q_agent_lock[] = "SELECT id FROM agents WHERE id = ? FOR UPDATE";
static const char q_agent_rep[] = "UPDATE agents SET reputation = ? WHERE id = ?";
static const char q_agent_claim_expire[] =
    "UPDATE agents SET claim_code_expires_at = LEAST(claim_code_expires_at, ?) WHERE id = ?";
static const char q_rate_age[] = "UPDATE rate_events SET at = at - ?";
/* A bucket as db/limits.c keeps it: its row, locked, then its events. */
static const char q_rate_bucket[] = "INSERT IGNORE INTO rate_buckets (bucket) VALUES (?)";
static const char q_rate_lock[] = "SELECT bucket FROM rate_buckets WHERE bucket = ? FOR UPDATE";
static const char q_rate_fill[] =
    "INSERT INTO rate_events (bucket, at) SELECT ?, ? FROM seq_1_to_100000 WHERE seq <= ?";
/* A lease as db/lease.c keeps it (design.md §13.4). */
static const char q_lease_lock[] = "SELECT name FROM leases WHERE name = ? FOR UPDATE";
static const char q_lease_expire[] =
    "UPDATE leases SET expires_at = ? WHERE name = ? AND expires_at > ?";
static const char q_lease_put[] =
    "INSERT INTO leases (name, token, holder, expires_at, beats) VALUES (?, ?, ?, ?, 0)"
    " ON DUPLICATE KEY UPDATE token = VALUES(token), holder = VALUES(holder),"
    " expires_at = VALUES(expires_at)";
/* The locked study's columns and their read positions, from one list. */
#define STUDY_LOCK_COLS(X) \
	X(SL_STATUS, "status") X(SL_OCCUPIED, "occupied") X(SL_MAX, "max_participants") \
	X(SL_RESEARCHER, "researcher_id")
#define SL_ENUM(e, c)	e,
#define SL_SQL(e, c)	c ", "
enum { STUDY_LOCK_COLS(SL_ENUM) };
static const char q_study_lock[] =
    "SELECT " STUDY_LOCK_COLS(SL_SQL) "id FROM studies WHERE id = ? FOR UPDATE";
static const char q_study_backdate[] =
    "UPDATE studies SET created_at = created_at - ? WHERE id = ?";
/* Its study.matched waiting for the first-access time wait that much less. */
static const char q_matches_backdate[] =
    "UPDATE study_matches SET release_at = release_at - ? WHERE study_id = ?";
static const char q_study_deadline[] =
    "UPDATE studies SET deadline = ?, created_at = LEAST(created_at, ?) WHERE id = ?";
static const char q_part_backdate[] =
    "UPDATE participations SET accepted_at = accepted_at - ?, started_at = started_at - ?,"
    " submitted_at = submitted_at - ?, reviewed_at = reviewed_at - ?, ended_at = ended_at - ?"
    " WHERE study_id = ?";
static const char q_study_first[] =
    "UPDATE studies s JOIN (SELECT MIN(accepted_at) first FROM participations WHERE study_id = ?) p"
    " SET s.created_at = LEAST(s.created_at, p.first) WHERE s.id = ? AND p.first IS NOT NULL";
static const char q_outbox_due[] =
    "UPDATE outbox SET next_attempt_at = LEAST(next_attempt_at, ?) WHERE seq = ? AND state = 'pending'";
static const char q_hook_failing[] =
    "UPDATE webhooks SET failing_since = ? WHERE id = ? AND status = 'active'";
static const char q_emb_lock[] = "SELECT subject_id FROM embeddings WHERE subject_id = ? FOR UPDATE";
static const char q_emb_attempts[] =
    "UPDATE embeddings SET attempts = ? WHERE subject_id = ? AND status = 'processing'";
static const char q_emb_reset[] =
    "UPDATE embeddings SET status = ?, vector = NULL, error = ?, updated_at = updated_at - ?"
    " WHERE subject_id = ?";
/* Seeded rows: seq 1..n of the Sequence engine, named by the caller's tag. */
static const char q_seed_agents[] =
    "INSERT INTO agents (id, name, api_key_hash, status, account_id, reputation, created_at)"
    " SELECT CONCAT('agt_s', ?, LPAD(seq, 9, '0')), 'seed', UNHEX(SHA2(CONCAT(?, seq), 256)),"
    " 'claimed', ?, 50, ? FROM seq_1_to_100000 WHERE seq <= ?";
static const char q_seed_wallets[] =
    "INSERT INTO wallets (owner_id) SELECT CONCAT('agt_s', ?, LPAD(seq, 9, '0'))"
    " FROM seq_1_to_100000 WHERE seq <= ?";
static const char q_seed_parts[] =
    "INSERT INTO participations (id, study_id, agent_id, participant_id, status, accepted_at,"
    " started_at, submitted_at)"
    " SELECT CONCAT('prt_s', ?, LPAD(seq, 9, '0')), ?, CONCAT('agt_s', ?, LPAD(seq, 9, '0')),"
    " CONCAT('anon_', LOWER(LPAD(HEX(seq), 16, '0'))),"
    " IF(? AND seq % 2 = 0, 'submitted', 'accepted'),"
    " IF(? AND seq % 2 = 0, LEAST(?, ?), ?),"
    " IF(? AND seq % 2 = 0, ?, NULL), IF(? AND seq % 2 = 0, ?, NULL)"
    " FROM seq_1_to_100000 WHERE seq <= ?";
/* Unclaimed agents seq lo..hi of a tag, for db_fixture_seed_bios. */
static const char q_seed_bio_agents[] =
    "INSERT INTO agents (id, name, api_key_hash, status, reputation, created_at)"
    " SELECT CONCAT('agt_s', ?, LPAD(seq, 9, '0')), 'seed', UNHEX(SHA2(CONCAT(?, seq), 256)),"
    " 'unclaimed', 50, ? FROM seq_1_to_100000 WHERE seq BETWEEN ? AND ?";
/* Claimed agents seq lo..hi of a tag as copies of a template agent (its
 * owner, its bio and its ready vector), reputations in turn 85, 60, 40
 * (priority, standard, basic), for db_fixture_seed_matchable. */
static const char q_seedm_agents[] =
    "INSERT INTO agents (id, name, api_key_hash, status, account_id, reputation, bio,"
    " bio_updated_at, created_at)"
    " SELECT CONCAT('agt_s', ?, LPAD(q.seq, 9, '0')), 'seed', UNHEX(SHA2(CONCAT(?, q.seq), 256)),"
    " 'claimed', t.account_id, ELT(q.seq % 3 + 1, 85, 60, 40), t.bio, ?, ?"
    " FROM seq_1_to_100000 q JOIN agents t ON t.id = ? AND t.status = 'claimed'"
    " WHERE q.seq BETWEEN ? AND ?";
static const char q_seedm_wallets[] =
    "INSERT INTO wallets (owner_id) SELECT CONCAT('agt_s', ?, LPAD(seq, 9, '0'))"
    " FROM seq_1_to_100000 WHERE seq BETWEEN ? AND ?";
static const char q_seedm_vectors[] =
    "INSERT INTO embeddings (subject_id, status, text_hash, vector, error, attempts, updated_at,"
    " model)"
    " SELECT CONCAT('agt_s', ?, LPAD(q.seq, 9, '0')), 'ready', t.text_hash, t.vector, NULL, 0, ?,"
    " t.model FROM seq_1_to_100000 q JOIN embeddings t ON t.subject_id = ? AND t.status = 'ready'"
    " WHERE q.seq BETWEEN ? AND ?";
static const char q_seed_occupy[] =
    "UPDATE studies SET occupied = occupied + ? WHERE id = ?";
static const char q_clone_vec[] =
    "SELECT vector FROM embeddings WHERE subject_id = ? AND status = 'ready'";
static const char q_clone_ready[] =
    "UPDATE embeddings SET status = 'ready', vector = ?, error = NULL, updated_at = ?"
    " WHERE subject_id = ? AND status = 'processing'";
static const char q_purge_postings[] =
    "SELECT COUNT(*) FROM ledger_postings WHERE account = ? OR study_id IN"
    " (SELECT id FROM studies WHERE researcher_id = ?)";
static const char q_purge_parts[] =
    "DELETE FROM participations WHERE study_id IN (SELECT id FROM studies WHERE researcher_id = ?)";
static const char q_purge_studies[] = "DELETE FROM studies WHERE researcher_id = ?";
static const char q_purge_wallet[] = "DELETE FROM wallets WHERE owner_id = ?";

/* --- the fixtures -------------------------------------------------------- */

/* The arguments of one fixture, carried through db_tx. */
struct fx {
	const char *id, *tag;
	int64_t a, b, n;
	int flag;
};

/* Lock the rows q selects for id: DB_OK, DB_NOTFOUND when none, or an
 * error; *keep (when not NULL) gets them for the caller to free. */
static enum db_rc
lock_row(struct db *db, const char *q, const char *id, struct dbres **keep)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = DB_Q(db, q, &res, NULL, P_STR(id))) != DB_OK)
		return rc;
	if (res->nrows == 0) {
		dbres_free(res);
		return DB_NOTFOUND;
	}
	if (keep != NULL)
		*keep = res;
	else
		dbres_free(res);
	return DB_OK;
}

static enum db_rc
code_expire_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	struct dbres *res = NULL;
	int64_t shift;
	enum db_rc rc;

	if ((rc = lock_row(db, q_code_lock, f->id, &res)) != DB_OK)
		return rc;
	shift = dbres_i64(res, 0, DB_COL_ONLY) - (f->a - 1);
	dbres_free(res);
	if (shift <= 0)
		return DB_OK;		/* expired already */
	return DB_Q(db, q_code_shift, NULL, NULL, P_I64(shift), P_I64(shift), P_STR(f->id));
}

enum db_rc
db_fixture_login_code_expire(struct db *db, const char *email, int64_t now)
{
	struct fx f = { .id = email, .a = now };

	return db_tx(db, code_expire_tx, &f);
}

static enum db_rc
tokens_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	enum db_rc rc;

	if ((rc = lock_row(db, q_tok_lock, f->id, NULL)) != DB_OK)
		return rc;
	if (f->flag)		/* idle: last used at f->a at the latest */
		return DB_Q(db, q_tok_idle, NULL, NULL, P_I64(f->a), P_I64(f->a), P_I64(f->a),
		    P_I64(f->a), P_STR(f->id));
	return DB_Q(db, q_tok_expire, NULL, NULL, P_I64(f->a), P_I64(f->a), P_STR(f->id));
}

enum db_rc
db_fixture_tokens_idle(struct db *db, const char *account_id, int64_t seconds, int64_t now)
{
	struct fx f = { .id = account_id, .a = now - seconds, .flag = 1 };

	if (seconds < 0)
		return DB_CHECK;
	return db_tx(db, tokens_tx, &f);
}

enum db_rc
db_fixture_tokens_expire(struct db *db, const char *account_id, int64_t now)
{
	struct fx f = { .id = account_id, .a = now, .flag = 0 };

	return db_tx(db, tokens_tx, &f);
}

static enum db_rc
reputation_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	enum db_rc rc;

	if ((rc = lock_row(db, q_agent_lock, f->id, NULL)) != DB_OK)
		return rc;
	return DB_Q(db, q_agent_rep, NULL, NULL, P_I64(f->a), P_STR(f->id));
}

enum db_rc
db_fixture_agent_reputation(struct db *db, const char *agent_id, int64_t reputation)
{
	struct fx f = { .id = agent_id, .a = reputation };

	if (reputation < 0 || reputation > 100)
		return DB_CHECK;
	return db_tx(db, reputation_tx, &f);
}

static enum db_rc
claim_expire_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	enum db_rc rc;

	if ((rc = lock_row(db, q_agent_lock, f->id, NULL)) != DB_OK)
		return rc;
	return DB_Q(db, q_agent_claim_expire, NULL, NULL, P_I64(f->a - 1), P_STR(f->id));
}

enum db_rc
db_fixture_claim_code_expire(struct db *db, const char *agent_id, int64_t now)
{
	struct fx f = { .id = agent_id, .a = now };

	return db_tx(db, claim_expire_tx, &f);
}

static enum db_rc
rate_age_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;

	return DB_Q(db, q_rate_age, NULL, NULL, P_I64(f->a));
}

enum db_rc
db_fixture_rate_events_age(struct db *db, int64_t seconds)
{
	struct fx f = { .a = seconds };

	return db_tx(db, rate_age_tx, &f);
}

static enum db_rc
rate_fill_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_rate_bucket, NULL, NULL, P_STR(f->id))) != DB_OK ||
	    (rc = lock_row(db, q_rate_lock, f->id, NULL)) != DB_OK)
		return rc;
	return DB_Q(db, q_rate_fill, NULL, NULL, P_STR(f->id), P_I64(f->a), P_I64(f->n));
}

enum db_rc
db_fixture_rate_fill(struct db *db, const char *bucket, int64_t n, int64_t at)
{
	struct fx f = { .id = bucket, .n = n, .a = at };

	if (n < 1 || n > FIXTURE_SEED_MAX || strlen(bucket) > 96)
		return DB_CHECK;
	return db_tx(db, rate_fill_tx, &f);
}

static enum db_rc
lease_expire_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	uint64_t n = 0;
	enum db_rc rc;

	if ((rc = lock_row(db, q_lease_lock, f->id, NULL)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_lease_expire, NULL, &n, P_I64(f->a - 1), P_STR(f->id),
	    P_I64(f->a))) != DB_OK)
		return rc;
	return n == 1 ? DB_OK : DB_CHECK;
}

enum db_rc
db_fixture_lease_expire(struct db *db, const char *name, int64_t now)
{
	struct fx f = { .id = name, .a = now };

	return db_tx(db, lease_expire_tx, &f);
}

static enum db_rc
lease_put_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;

	return DB_Q(db, q_lease_put, NULL, NULL, P_STR(f->id), P_I64(f->n), P_STR(f->tag),
	    P_I64(f->a));
}

enum db_rc
db_fixture_lease_put(struct db *db, const char *name, int64_t token, const char *holder,
    int64_t expires_at)
{
	struct fx f = { .id = name, .n = token, .tag = holder, .a = expires_at };

	if (strlen(name) > 40 || strlen(holder) > 64)
		return DB_CHECK;
	return db_tx(db, lease_put_tx, &f);
}

/* Study fixtures: flag says which change, after the study row is locked
 * (studies before participations, as in the lifecycle transactions). */
enum study_fx { SFX_BACKDATE, SFX_DEADLINE, SFX_PARTICIPATIONS };

static enum db_rc
study_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	struct dbres *res = NULL;
	const char *st;
	enum db_rc rc;
	int open;

	if ((rc = lock_row(db, q_study_lock, f->id, &res)) != DB_OK)
		return rc;
	st = dbres_str(res, 0, SL_STATUS);
	open = st != NULL && (strcmp(st, "active") == 0 || strcmp(st, "paused") == 0);
	dbres_free(res);
	switch ((enum study_fx)f->flag) {
	case SFX_BACKDATE:
		if ((rc = DB_Q(db, q_study_backdate, NULL, NULL, P_I64(f->a), P_STR(f->id))) != DB_OK)
			return rc;
		return DB_Q(db, q_matches_backdate, NULL, NULL, P_I64(f->a), P_STR(f->id));
	case SFX_DEADLINE:
		if (!open)
			return DB_CHECK;
		return DB_Q(db, q_study_deadline, NULL, NULL, P_I64(f->a - 1), P_I64(f->a - 1),
		    P_STR(f->id));
	case SFX_PARTICIPATIONS:
		if ((rc = DB_Q(db, q_part_backdate, NULL, NULL, P_I64(f->a), P_I64(f->a), P_I64(f->a),
		    P_I64(f->a), P_I64(f->a), P_STR(f->id))) != DB_OK)
			return rc;
		return DB_Q(db, q_study_first, NULL, NULL, P_STR(f->id), P_STR(f->id));
	}
	return DB_ERR;
}

enum db_rc
db_fixture_study_backdate(struct db *db, const char *study_id, int64_t seconds)
{
	struct fx f = { .id = study_id, .a = seconds, .flag = SFX_BACKDATE };

	if (seconds < 0)
		return DB_CHECK;
	return db_tx(db, study_tx, &f);
}

enum db_rc
db_fixture_study_deadline_pass(struct db *db, const char *study_id, int64_t now)
{
	struct fx f = { .id = study_id, .a = now, .flag = SFX_DEADLINE };

	return db_tx(db, study_tx, &f);
}

/* One statement on one row: no lock order to keep. */
enum db_rc
db_fixture_outbox_due(struct db *db, int64_t seq, int64_t now)
{
	uint64_t n = 0;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_outbox_due, NULL, &n, P_I64(now), P_I64(seq))) != DB_OK)
		return rc;
	return n == 1 ? DB_OK : DB_NOTFOUND;
}

enum db_rc
db_fixture_webhook_failing(struct db *db, const char *hook_id, int64_t seconds, int64_t now)
{
	uint64_t n = 0;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_hook_failing, NULL, &n, P_I64(now - seconds), P_STR(hook_id))) != DB_OK)
		return rc;
	return n == 1 ? DB_OK : DB_NOTFOUND;
}

enum db_rc
db_fixture_participations_backdate(struct db *db, const char *study_id, int64_t seconds)
{
	struct fx f = { .id = study_id, .a = seconds, .flag = SFX_PARTICIPATIONS };

	if (seconds < 0)
		return DB_CHECK;
	return db_tx(db, study_tx, &f);
}

static enum db_rc
embedding_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	enum db_rc rc;

	if ((rc = lock_row(db, q_emb_lock, f->id, NULL)) != DB_OK)
		return rc;
	return DB_Q(db, q_emb_reset, NULL, NULL, P_STR(f->flag ? "failed" : "processing"),
	    f->flag ? P_STR("test") : P_NULL, P_I64(f->a), P_STR(f->id));
}

enum db_rc
db_fixture_embedding_reset(struct db *db, const char *subject, int failed, int64_t age)
{
	struct fx f = { .id = subject, .a = age, .flag = failed != 0 };

	if (age < 0)
		return DB_CHECK;
	return db_tx(db, embedding_tx, &f);
}

enum db_rc
db_fixture_embedding_attempts(struct db *db, const char *subject, int64_t attempts)
{
	uint64_t n = 0;
	enum db_rc rc;

	if (attempts < 0 || attempts > 100)
		return DB_CHECK;
	if ((rc = DB_Q(db, q_emb_attempts, NULL, &n, P_I64(attempts), P_STR(subject))) != DB_OK)
		return rc;
	return n == 1 ? DB_OK : DB_NOTFOUND;
}

static int
tag_valid(const char *tag)
{
	size_t i;

	for (i = 0; i < FIXTURE_TAG_LEN; i++)
		if (!((tag[i] >= '0' && tag[i] <= '9') || (tag[i] >= 'a' && tag[i] <= 'z')))
			return 0;
	return tag[i] == '\0';
}

static enum db_rc
seed_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	struct dbres *res = NULL;
	char owner[IDS_BUFSZ];
	int64_t sub = f->b != 0, first = sub && f->b < f->a ? f->b : f->a;
	enum db_rc rc;
	int ok;

	if ((rc = lock_row(db, q_study_lock, f->id, &res)) != DB_OK)
		return rc;
	ok = dbres_str(res, 0, SL_STATUS) != NULL &&
	    strcmp(dbres_str(res, 0, SL_STATUS), "active") == 0 &&
	    dbres_i64(res, 0, SL_OCCUPIED) + f->n <= dbres_i64(res, 0, SL_MAX);
	snprintf(owner, sizeof owner, "%s",
	    dbres_str(res, 0, SL_RESEARCHER) ? dbres_str(res, 0, SL_RESEARCHER) : "");
	dbres_free(res);
	if (!ok)
		return DB_CHECK;
	if ((rc = DB_Q(db, q_seed_agents, NULL, NULL, P_STR(f->tag), P_STR(f->tag), P_STR(owner),
	    P_I64(first), P_I64(f->n))) != DB_OK ||
	    (rc = DB_Q(db, q_seed_wallets, NULL, NULL, P_STR(f->tag), P_I64(f->n))) != DB_OK ||
	    (rc = DB_Q(db, q_seed_parts, NULL, NULL, P_STR(f->tag), P_STR(f->id), P_STR(f->tag),
	    P_I64(sub), P_I64(sub), P_I64(f->a), P_I64(f->b), P_I64(f->a),
	    P_I64(sub), P_I64(f->b), P_I64(sub), P_I64(f->b), P_I64(f->n))) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_seed_occupy, NULL, NULL, P_I64(f->n), P_STR(f->id))) != DB_OK)
		return rc;
	return DB_Q(db, q_study_first, NULL, NULL, P_STR(f->id), P_STR(f->id));
}

enum db_rc
db_fixture_seed_participations(struct db *db, const char *study_id, const char *tag,
    int64_t n, int64_t accepted_at, int64_t submitted_at)
{
	struct fx f = { .id = study_id, .tag = tag, .n = n, .a = accepted_at, .b = submitted_at };

	if (n < 1 || n > FIXTURE_SEED_MAX || !tag_valid(tag))
		return DB_CHECK;
	return db_tx(db, seed_tx, &f);
}

/*
 * A bio of about 60 words for seeded agent seq, different for every seq:
 * phrases picked by seq from short lists, and the seq itself.
 */
static void
seed_bio_text(char *out, size_t n, int64_t seq)
{
	static const char *const who[] = {
		"a software engineer in Berlin", "a retired teacher living in Lyon",
		"a nurse who works night shifts in Toronto", "a graduate student of marine biology",
		"the owner of a small bakery in Porto", "a freelance translator of Japanese and English",
		"a data analyst at a logistics company", "a father of three who works in sales",
	};
	static const char *const likes[] = {
		"cycling, board games and old jazz records", "gardening, hiking and cooking for friends",
		"chess, history podcasts and running", "photography, travel in Asia and street food",
		"knitting, mystery novels and yoga", "football, video games and science fiction",
		"baking bread, birdwatching and camping", "painting, museums and learning Spanish",
		"climbing, electronic music and green tea",
	};
	static const char *const tools[] = {
		"uses Linux, Python and a mechanical keyboard", "works on a laptop with Figma and Notion",
		"mostly uses an Android phone and spreadsheets", "writes C and Go and reviews code daily",
		"uses Excel, SQL and dashboards at work", "edits family videos on weekends",
		"keeps notes in a paper diary", "shops online every week and compares prices",
		"reads the news on a tablet every morning", "answers customer e-mails in three languages",
	};
	static const char *const asks[] = {
		"Happy to answer surveys about health, money or technology.",
		"Interested in studies about remote work and productivity.",
		"Keen on research about food, cooking and nutrition.",
		"Open to usability tests of websites and mobile apps.",
		"Likes studies on education, parenting and family life.",
		"Willing to take part in studies on travel and public transport.",
		"Curious about research on music, film and media habits.",
	};
#define PICK(a, k)	a[(size_t)(k) % (sizeof a / sizeof a[0])]

	snprintf(out, n, "I am the assistant of %s, aged %d, who enjoys %s in their free time."
	    " My owner %s and %s, and prefers short, clear questions to long forms. %s"
	    " They answer in English, usually within a day. Seeded profile number %lld.",
	    PICK(who, seq), (int)(20 + seq % 53), PICK(likes, seq / 8), PICK(tools, seq),
	    PICK(tools, seq / 10 + 3), PICK(asks, seq / 7), (long long)seq);
#undef PICK
}

#define SEED_BIOS_TX	500	/* agents per transaction */

/* One batch of db_fixture_seed_bios: agents lo..hi of tag. */
struct seed_bios {
	const char *tag;
	int64_t lo, hi, now;
};

static enum db_rc
seed_bios_tx(struct db *db, void *arg)
{
	const struct seed_bios *sb = arg;
	char id[IDS_BUFSZ], bio[1024];
	enum db_rc rc;
	int64_t i;

	if ((rc = DB_Q(db, q_seed_bio_agents, NULL, NULL, P_STR(sb->tag), P_STR(sb->tag),
	    P_I64(sb->now), P_I64(sb->lo), P_I64(sb->hi))) != DB_OK)
		return rc;
	for (i = sb->lo; i <= sb->hi; i++) {
		snprintf(id, sizeof id, "agt_s%s%09lld", sb->tag, (long long)i);
		seed_bio_text(bio, sizeof bio, i);
		if ((rc = db_bio_set(db, id, bio, sb->now)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

enum db_rc
db_fixture_seed_bios(struct db *db, const char *tag, int64_t n, int64_t now)
{
	struct seed_bios sb = { .tag = tag, .now = now };
	enum db_rc rc;

	if (n < 1 || n > FIXTURE_SEED_MAX || !tag_valid(tag))
		return DB_CHECK;
	for (sb.lo = 1; sb.lo <= n; sb.lo = sb.hi + 1) {
		sb.hi = n - sb.lo < SEED_BIOS_TX ? n : sb.lo + SEED_BIOS_TX - 1;
		if ((rc = db_tx(db, seed_bios_tx, &sb)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

#define SEED_MATCHABLE_TX	5000	/* agents per transaction */

struct seed_matchable {
	const char *tag, *template;
	int64_t lo, hi, now;
};

static enum db_rc
seed_matchable_tx(struct db *db, void *arg)
{
	const struct seed_matchable *sm = arg;
	uint64_t n = 0;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_seedm_agents, NULL, &n, P_STR(sm->tag), P_STR(sm->tag), P_I64(sm->now),
	    P_I64(sm->now), P_STR(sm->template), P_I64(sm->lo), P_I64(sm->hi))) != DB_OK)
		return rc;
	if (n != (uint64_t)(sm->hi - sm->lo + 1))
		return DB_NOTFOUND;	/* no claimed template */
	if ((rc = DB_Q(db, q_seedm_wallets, NULL, NULL, P_STR(sm->tag), P_I64(sm->lo),
	    P_I64(sm->hi))) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_seedm_vectors, NULL, &n, P_STR(sm->tag), P_I64(sm->now),
	    P_STR(sm->template), P_I64(sm->lo), P_I64(sm->hi))) != DB_OK)
		return rc;
	return n == (uint64_t)(sm->hi - sm->lo + 1) ? DB_OK : DB_CHECK;	/* no ready vector */
}

enum db_rc
db_fixture_seed_matchable(struct db *db, const char *tag, int64_t n, const char *template,
    int64_t now)
{
	struct seed_matchable sm = { .tag = tag, .template = template, .now = now };
	enum db_rc rc;

	if (n < 1 || n > FIXTURE_SEED_MAX || !tag_valid(tag))
		return DB_CHECK;
	for (sm.lo = 1; sm.lo <= n; sm.lo = sm.hi + 1) {
		sm.hi = n - sm.lo < SEED_MATCHABLE_TX ? n : sm.lo + SEED_MATCHABLE_TX - 1;
		if ((rc = db_tx(db, seed_matchable_tx, &sm)) != DB_OK)
			return rc;
	}
	return DB_OK;
}

/* One batch of clones of a template study (see db_fixture_studies_clone). */
struct clone {
	const struct study_new *in;
	const void *vec;
	size_t len;
	int64_t n, now;
};

static enum db_rc
clone_tx(struct db *db, void *arg)
{
	const struct clone *c = arg;
	char id[IDS_BUFSZ];
	enum arps_err outcome;
	uint64_t aff = 0;
	enum db_rc rc;
	int64_t i;

	for (i = 0; i < c->n; i++) {
		if ((rc = txn_study_create(db, c->in, c->now, id, &outcome)) != DB_OK)
			return rc;
		if (outcome != ARPS_OK)
			return DB_CHECK;
		if ((rc = DB_Q(db, q_clone_ready, NULL, &aff, P_BLOB(c->vec, c->len), P_I64(c->now),
		    P_STR(id))) != DB_OK)
			return rc;
		if (aff != 1)
			return DB_ERR;
	}
	return DB_OK;
}

enum db_rc
db_fixture_studies_clone(struct db *db, const char *study_id, int64_t n, int64_t now)
{
	struct study t;
	struct study_new in = { 0 };
	struct study_elig el;
	struct dbres *res = NULL;
	struct clone c = { .in = &in, .now = now };
	int64_t left;
	enum db_rc rc;

	if (n < 1 || n > FIXTURE_CLONE_MAX)
		return DB_CHECK;
	if ((rc = db_study_get(db, study_id, 0, &t)) != DB_OK)
		return rc;
	if ((rc = DB_Q(db, q_clone_vec, &res, NULL, P_STR(study_id))) != DB_OK)
		goto out;
	rc = DB_CHECK;		/* a template: active, its criteria embedded */
	if (t.state != STUDY_ACTIVE || res->nrows != 1 ||
	    (c.vec = dbres_blob(res, 0, DB_COL_ONLY, &c.len)) == NULL)
		goto out;
	in.researcher_id = t.researcher_id;
	in.title = t.title;
	in.description = t.description;
	in.study_url = t.study_url;
	in.criteria = t.criteria;
	in.completion_code = t.completion_code;
	in.duration_minutes = t.duration_minutes;
	in.has_deadline = t.has_deadline;
	in.deadline = t.deadline;
	in.plan.reward = t.reward;
	in.plan.fee = t.fee;
	in.plan.slot_cost = t.reward + t.fee;
	in.plan.max_participants = t.max_participants;
	in.plan.total = t.max_participants * (t.reward + t.fee);
	in.plan.fee_total = t.max_participants * t.fee;
	if (t.eligibility) {	/* the clones keep the template's eligibility */
		if ((rc = db_study_elig_get(db, study_id, &el)) != DB_OK)
			goto out;
		in.elig = &el;
	}
	for (left = n; left > 0; left -= c.n) {
		c.n = left < 500 ? left : 500;	/* 500 studies per transaction */
		if ((rc = db_tx(db, clone_tx, &c)) != DB_OK)
			goto out;
	}
	rc = DB_OK;
out:
	dbres_free(res);
	db_study_clear(&t);
	return rc;
}

static enum db_rc
purge_tx(struct db *db, void *arg)
{
	const struct fx *f = arg;
	struct dbres *res = NULL;
	enum db_rc rc;
	int64_t named;

	if ((rc = DB_Q(db, q_purge_postings, &res, NULL, P_STR(f->id), P_STR(f->id))) != DB_OK)
		return rc;
	named = dbres_i64(res, 0, DB_COL_ONLY);
	dbres_free(res);
	if (named != 0)
		return DB_CHECK;
	if ((rc = DB_Q(db, q_purge_parts, NULL, NULL, P_STR(f->id))) != DB_OK ||
	    (rc = DB_Q(db, q_purge_studies, NULL, NULL, P_STR(f->id))) != DB_OK)
		return rc;
	return DB_Q(db, q_purge_wallet, NULL, NULL, P_STR(f->id));
}

enum db_rc
db_fixture_researcher_purge(struct db *db, const char *account_id)
{
	struct fx f = { .id = account_id };

	return db_tx(db, purge_tx, &f);
}

enum db_rc
db_fixture_study_changes_clear(struct db *db)
{
	return DB_Q0(db, "DELETE FROM study_changes", NULL, NULL);
}

/* --- arps-fixture VERB ... ------------------------------------------------ */

#define MAX_SECONDS	(20LL * 366 * 86400)	/* backdating beyond 20 years is a typo */

static int
usage_line(const char *u)
{
	fprintf(stderr, "usage: arps-fixture %s\n", u);
	return 2;
}

/* One decoded argument: an id of a kind, or a bounded integer; 0, or -1
 * with the reason on stderr. */
static int
arg_id(const char *s, enum ids_kind kind)
{
	if (ids_valid(kind, s))
		return 0;
	fprintf(stderr, "arps-fixture: expected an id %s...: %s\n", ids_prefix(kind), s);
	return -1;
}

static int
arg_int(const char *s, int64_t lo, int64_t hi, int64_t *out, const char *what)
{
	if (val_parse_int64(s, strlen(s), lo, hi, out) == 0)
		return 0;
	fprintf(stderr, "arps-fixture: %s must be an integer in %lld..%lld: %s\n", what,
	    (long long)lo, (long long)hi, s);
	return -1;
}

/* The exit status of a fixture's outcome, with the one-line reason. */
static int
outcome(struct db *db, enum db_rc rc, const char *verb, const char *subject)
{
	switch (rc) {
	case DB_OK:
		printf("%s %s\n", verb, subject);
		return 0;
	case DB_NOTFOUND:
		fprintf(stderr, "arps-fixture: %s: no such subject: %s\n", verb, subject);
		return 1;
	case DB_CHECK:
		fprintf(stderr, "arps-fixture: %s: refused: out of range or not in a state for it: %s\n",
		    verb, subject);
		return 1;
	case DB_DUP:
		fprintf(stderr, "arps-fixture: %s: the seeded ids exist (pick another tag): %s\n",
		    verb, subject);
		return 1;
	default:
		fprintf(stderr, "arps-fixture: %s: database error: %s\n", verb, db_error(db));
		return 1;
	}
}

static int
v_login_code_expire(struct db *db, char **a, int n, int64_t now)
{
	(void)n;
	return outcome(db, db_fixture_login_code_expire(db, a[0], now), "login-code-expire", a[0]);
}

static int
v_tokens_idle(struct db *db, char **a, int n, int64_t now)
{
	int64_t s;

	(void)n;
	if (arg_id(a[0], IDS_ACCOUNT) != 0 || arg_int(a[1], 0, MAX_SECONDS, &s, "SECONDS") != 0)
		return 2;
	return outcome(db, db_fixture_tokens_idle(db, a[0], s, now), "tokens-idle", a[0]);
}

static int
v_tokens_expire(struct db *db, char **a, int n, int64_t now)
{
	(void)n;
	if (arg_id(a[0], IDS_ACCOUNT) != 0)
		return 2;
	return outcome(db, db_fixture_tokens_expire(db, a[0], now), "tokens-expire", a[0]);
}

static int
v_agent_reputation(struct db *db, char **a, int n, int64_t now)
{
	int64_t rep;

	(void)n;
	(void)now;
	if (arg_id(a[0], IDS_AGENT) != 0 || arg_int(a[1], 0, 100, &rep, "REPUTATION") != 0)
		return 2;
	return outcome(db, db_fixture_agent_reputation(db, a[0], rep), "agent-reputation", a[0]);
}

static int
v_claim_code_expire(struct db *db, char **a, int n, int64_t now)
{
	(void)n;
	if (arg_id(a[0], IDS_AGENT) != 0)
		return 2;
	return outcome(db, db_fixture_claim_code_expire(db, a[0], now), "claim-code-expire", a[0]);
}

static int
v_rate_events_age(struct db *db, char **a, int n, int64_t now)
{
	int64_t s;

	(void)n;
	(void)now;
	if (arg_int(a[0], 0, MAX_SECONDS, &s, "SECONDS") != 0)
		return 2;
	return outcome(db, db_fixture_rate_events_age(db, s), "rate-events-age", a[0]);
}

/* BUCKET N SECONDS_AGO */
static int
v_rate_fill(struct db *db, char **a, int n, int64_t now)
{
	int64_t k, ago;

	(void)n;
	if (arg_int(a[1], 1, FIXTURE_SEED_MAX, &k, "N") != 0 ||
	    arg_int(a[2], 0, MAX_SECONDS, &ago, "SECONDS_AGO") != 0)
		return 2;
	return outcome(db, db_fixture_rate_fill(db, a[0], k, now - ago), "rate-fill", a[0]);
}

static int
v_lease_expire(struct db *db, char **a, int n, int64_t now)
{
	(void)n;
	return outcome(db, db_fixture_lease_expire(db, a[0], now), "lease-expire", a[0]);
}

/* NAME TOKEN HOLDER SECONDS: expires SECONDS from now (negative: expired). */
static int
v_lease_put(struct db *db, char **a, int n, int64_t now)
{
	int64_t token, s;

	(void)n;
	if (arg_int(a[1], 1, INT64_MAX, &token, "TOKEN") != 0 ||
	    arg_int(a[3], -MAX_SECONDS, MAX_SECONDS, &s, "SECONDS") != 0)
		return 2;
	return outcome(db, db_fixture_lease_put(db, a[0], token, a[2], now + s), "lease-put", a[0]);
}

/* SECONDS STD_ID...: each study in turn; stops at the first refusal. */
static int
v_study_backdate(struct db *db, char **a, int n, int64_t now)
{
	int64_t s;
	int i, rc;

	(void)now;
	if (arg_int(a[0], 0, MAX_SECONDS, &s, "SECONDS") != 0)
		return 2;
	for (i = 1; i < n; i++)
		if (arg_id(a[i], IDS_STUDY) != 0)
			return 2;
	for (i = 1; i < n; i++)
		if ((rc = outcome(db, db_fixture_study_backdate(db, a[i], s), "study-backdate", a[i])) != 0)
			return rc;
	return 0;
}

static int
v_study_deadline_pass(struct db *db, char **a, int n, int64_t now)
{
	(void)n;
	if (arg_id(a[0], IDS_STUDY) != 0)
		return 2;
	return outcome(db, db_fixture_study_deadline_pass(db, a[0], now), "study-deadline-pass", a[0]);
}

static int
v_outbox_due(struct db *db, char **a, int n, int64_t now)
{
	int64_t seq;

	(void)n;
	if (arg_int(a[0], 1, INT64_MAX, &seq, "SEQ") != 0)
		return 2;
	return outcome(db, db_fixture_outbox_due(db, seq, now), "outbox-due", a[0]);
}

/* The sweep's jobs with a given fencing token, as a sweep that took the
 * lease earlier would run them (the lease not taken here): "fenced" when
 * the token is no longer the lease's, else "moved N". */
static int
v_sweep_token(struct db *db, char **a, int n, int64_t now)
{
	struct sweep sw = { .db = db, .now = now, .batch = 1 };
	size_t j, moved = 0, total = 0, batches;

	(void)n;
	if (arg_int(a[0], 1, INT64_MAX, &sw.lease, "TOKEN") != 0)
		return 2;
	for (j = 0; j < sweep_njobs && !sw.fenced; j++) {
		if (sweep_jobs[j].run(&sw, &moved, &batches) != DB_OK && !sw.fenced) {
			fprintf(stderr, "arps-fixture: sweep-token: %s\n", db_error(db));
			return 1;
		}
		total += moved;
	}
	if (sw.fenced)
		printf("fenced moved %zu\n", total);
	else
		printf("moved %zu\n", total);
	return 0;
}

static int
v_participations_backdate(struct db *db, char **a, int n, int64_t now)
{
	int64_t s;

	(void)n;
	(void)now;
	if (arg_int(a[0], 0, MAX_SECONDS, &s, "SECONDS") != 0 || arg_id(a[1], IDS_STUDY) != 0)
		return 2;
	return outcome(db, db_fixture_participations_backdate(db, a[1], s),
	    "participations-backdate", a[1]);
}

static int
v_embedding_reset(struct db *db, char **a, int n, int64_t now)
{
	enum ids_kind kind;
	int64_t age = 0;
	int failed;

	(void)now;
	if (!ids_kind_of(a[0], &kind) || (kind != IDS_AGENT && kind != IDS_STUDY)) {
		fprintf(stderr, "arps-fixture: not an agent or study id: %s\n", a[0]);
		return 2;
	}
	if (strcmp(a[1], "processing") != 0 && strcmp(a[1], "failed") != 0) {
		fprintf(stderr, "arps-fixture: expected processing or failed: %s\n", a[1]);
		return 2;
	}
	failed = strcmp(a[1], "failed") == 0;
	if (n > 2 && arg_int(a[2], 0, MAX_SECONDS, &age, "AGE") != 0)
		return 2;
	return outcome(db, db_fixture_embedding_reset(db, a[0], failed, age), "embedding-reset", a[0]);
}

static int
v_embedding_attempts(struct db *db, char **a, int n, int64_t now)
{
	int64_t k;

	(void)n;
	(void)now;
	if (strncmp(a[0], "agt_", 4) != 0 && strncmp(a[0], "std_", 4) != 0) {
		fprintf(stderr, "arps-fixture: not an agent or study id: %s\n", a[0]);
		return 2;
	}
	if (arg_int(a[1], 0, 100, &k, "N") != 0)
		return 2;
	return outcome(db, db_fixture_embedding_attempts(db, a[0], k), "embedding-attempts", a[0]);
}

static int
v_seed_participations(struct db *db, char **a, int n, int64_t now)
{
	int64_t cnt, acc, sub = -1;

	if (arg_id(a[0], IDS_STUDY) != 0 ||
	    arg_int(a[2], 1, FIXTURE_SEED_MAX, &cnt, "N") != 0 ||
	    arg_int(a[3], 0, MAX_SECONDS, &acc, "ACCEPTED_AGO") != 0 ||
	    (n > 4 && arg_int(a[4], 0, MAX_SECONDS, &sub, "SUBMITTED_AGO") != 0))
		return 2;
	if (!tag_valid(a[1])) {
		fprintf(stderr, "arps-fixture: TAG must be %d of [0-9a-z]: %s\n", FIXTURE_TAG_LEN, a[1]);
		return 2;
	}
	return outcome(db, db_fixture_seed_participations(db, a[0], a[1], cnt, now - acc,
	    sub < 0 ? 0 : now - sub), "seed-participations", a[0]);
}

static int
v_seed_bios(struct db *db, char **a, int n, int64_t now)
{
	int64_t cnt;

	(void)n;
	if (arg_int(a[1], 1, FIXTURE_SEED_MAX, &cnt, "N") != 0)
		return 2;
	if (!tag_valid(a[0])) {
		fprintf(stderr, "arps-fixture: TAG must be %d of [0-9a-z]: %s\n", FIXTURE_TAG_LEN, a[0]);
		return 2;
	}
	return outcome(db, db_fixture_seed_bios(db, a[0], cnt, now), "seed-bios", a[0]);
}

static int
v_seed_matchable(struct db *db, char **a, int n, int64_t now)
{
	int64_t cnt;

	(void)n;
	if (arg_int(a[1], 1, FIXTURE_SEED_MAX, &cnt, "N") != 0 || arg_id(a[2], IDS_AGENT) != 0)
		return 2;
	if (!tag_valid(a[0])) {
		fprintf(stderr, "arps-fixture: TAG must be %d of [0-9a-z]: %s\n", FIXTURE_TAG_LEN, a[0]);
		return 2;
	}
	return outcome(db, db_fixture_seed_matchable(db, a[0], cnt, a[2], now), "seed-matchable",
	    a[0]);
}

static int
v_researcher_purge(struct db *db, char **a, int n, int64_t now)
{
	(void)n;
	(void)now;
	if (arg_id(a[0], IDS_ACCOUNT) != 0)
		return 2;
	return outcome(db, db_fixture_researcher_purge(db, a[0]), "researcher-purge", a[0]);
}

static int
v_studies_clone(struct db *db, char **a, int n, int64_t now)
{
	int64_t cnt;

	(void)n;
	if (arg_id(a[0], IDS_STUDY) != 0 || arg_int(a[1], 1, FIXTURE_CLONE_MAX, &cnt, "N") != 0)
		return 2;
	return outcome(db, db_fixture_studies_clone(db, a[0], cnt, now), "studies-clone", a[0]);
}
/* The configuration fixture_run was called with: token-new hashes under its pepper. */
static const struct config *fx_cfg;

#define FIXTURE_TOKEN_TTL	(30 * 24 * 3600)	/* as a login's (fcgi/account.c) */

/* A new access token of the account, printed alone on stdout, as a login
 * would issue it: for a caller that must spend tokens (logging out) without
 * an e-mail round trip per token. */
static int
v_token_new(struct db *db, char **a, int n, int64_t now)
{
	char tok[TOKEN_BUFSZ];
	unsigned char h[32];
	struct account acc;
	enum db_rc rc;

	(void)n;
	if (arg_id(a[0], IDS_ACCOUNT) != 0)
		return 2;
	if ((rc = db_account_get(db, a[0], &acc)) != DB_OK)
		return outcome(db, rc, "token-new", a[0]);
	if (token_new(&secret_rng, tok) != ARPS_OK) {
		fprintf(stderr, "arps-fixture: token-new: no random bytes\n");
		return 1;
	}
	secret_hash(fx_cfg, "token", tok, strlen(tok), h);
	if ((rc = db_token_insert(db, h, a[0], now, now + FIXTURE_TOKEN_TTL)) != DB_OK)
		return outcome(db, rc, "token-new", a[0]);
	printf("%s\n", tok);
	return 0;
}

static int
v_webhook_failing(struct db *db, char **a, int n, int64_t now)
{
	int64_t s;

	(void)n;
	if (arg_id(a[0], IDS_WEBHOOK) != 0 || arg_int(a[1], 0, MAX_SECONDS, &s, "SECONDS") != 0)
		return 2;
	return outcome(db, db_fixture_webhook_failing(db, a[0], s, now), "webhook-failing", a[0]);
}

static const struct verb {
	const char *name;
	int min, max;		/* argument count; max -1: any number */
	const char *usage;
	int (*fn)(struct db *, char **, int, int64_t);
} verbs[] = {
	{ "login-code-expire",       1, 1,  "login-code-expire EMAIL", v_login_code_expire },
	{ "tokens-idle",             2, 2,  "tokens-idle ACC_ID SECONDS", v_tokens_idle },
	{ "tokens-expire",           1, 1,  "tokens-expire ACC_ID", v_tokens_expire },
	{ "token-new",               1, 1,  "token-new ACC_ID", v_token_new },
	{ "agent-reputation",        2, 2,  "agent-reputation AGT_ID 0..100", v_agent_reputation },
	{ "claim-code-expire",       1, 1,  "claim-code-expire AGT_ID", v_claim_code_expire },
	{ "rate-events-age",         1, 1,  "rate-events-age SECONDS", v_rate_events_age },
	{ "rate-fill",               3, 3,  "rate-fill BUCKET N SECONDS_AGO", v_rate_fill },
	{ "lease-expire",            1, 1,  "lease-expire NAME", v_lease_expire },
	{ "lease-put",               4, 4,  "lease-put NAME TOKEN HOLDER SECONDS", v_lease_put },
	{ "study-backdate",          2, -1, "study-backdate SECONDS STD_ID...", v_study_backdate },
	{ "study-deadline-pass",     1, 1,  "study-deadline-pass STD_ID", v_study_deadline_pass },
	{ "participations-backdate", 2, 2,  "participations-backdate SECONDS STD_ID",
	  v_participations_backdate },
	{ "embedding-reset",         2, 3,  "embedding-reset AGT_ID|STD_ID processing|failed [AGE]",
	  v_embedding_reset },
	{ "embedding-attempts",      2, 2,  "embedding-attempts AGT_ID|STD_ID N",
	  v_embedding_attempts },
	{ "seed-participations",     4, 5,
	  "seed-participations STD_ID TAG N ACCEPTED_AGO [SUBMITTED_AGO]", v_seed_participations },
	{ "seed-bios",               2, 2,  "seed-bios TAG N", v_seed_bios },
	{ "seed-matchable",          3, 3,  "seed-matchable TAG N AGT_ID", v_seed_matchable },
	{ "outbox-due",              1, 1,  "outbox-due SEQ", v_outbox_due },
	{ "sweep-token",             1, 1,  "sweep-token TOKEN", v_sweep_token },
	{ "webhook-failing",         2, 2,  "webhook-failing WHK_ID SECONDS", v_webhook_failing },
	{ "researcher-purge",        1, 1,  "researcher-purge ACC_ID", v_researcher_purge },
	{ "studies-clone",           2, 2,  "studies-clone STD_ID N", v_studies_clone },
};
#define NVERBS (sizeof verbs / sizeof verbs[0])

int
fixture_run(struct db *db, const struct config *cfg, char **args)
{
	size_t v;
	int n;

	if (!cfg->test_fixtures) {
		fprintf(stderr, "arps-fixture: fixtures are off in %s (test_fixtures = true is for"
		    " test stacks only)\n", cfg->path);
		return 1;
	}
	for (n = 0; args[n] != NULL; n++)
		;
	for (v = 0; n > 0 && v < NVERBS; v++)
		if (strcmp(verbs[v].name, args[0]) == 0)
			break;
	if (n == 0 || v == NVERBS) {
		fprintf(stderr, "usage: arps-fixture VERB ...\nverbs:\n");
		for (v = 0; v < NVERBS; v++)
			fprintf(stderr, "  %s\n", verbs[v].usage);
		return 2;
	}
	if (n - 1 < verbs[v].min || (verbs[v].max >= 0 && n - 1 > verbs[v].max))
		return usage_line(verbs[v].usage);
	fx_cfg = cfg;
	return verbs[v].fn(db, args + 1, n - 1, (int64_t)time(NULL));
}
