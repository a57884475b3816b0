#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "db/accounts.h"
#include "db/embeddings.h"
#include "db/ledger.h"
#include "db/match.h"
#include "lib/secret.h"

/* An agent row, read at the AGENT_C_* positions; T is "" or a table's
 * alias with its dot, for a join. */
#define AGENT_COLUMNS_OF(X, L, T) \
	X(AGENT_C_ID,			T "id") \
	X(AGENT_C_NAME,			T "name") \
	X(AGENT_C_DESCRIPTION,		T "description") \
	X(AGENT_C_STATUS,		T "status") \
	X(AGENT_C_BEFORE_SUSPEND,	"COALESCE(" T "status_before_suspend, '')") \
	X(AGENT_C_ACCOUNT_ID,		"COALESCE(" T "account_id, '')") \
	X(AGENT_C_REPUTATION,		T "reputation") \
	X(AGENT_C_STREAK,		T "streak") \
	X(AGENT_C_LAST_HEARTBEAT,	"COALESCE(" T "last_heartbeat, 0)") \
	L(AGENT_C_CREATED_AT,		T "created_at")
#define AGENT_COLUMNS(X, L)	AGENT_COLUMNS_OF(X, L, "")
#define AGENT_A_COLUMNS(X, L)	AGENT_COLUMNS_OF(X, L, "a.")
enum agent_col { DB_COLS_ENUM(AGENT_COLUMNS) AGENT_C__END };
#define AGENT_COLS DB_COLS_SQL(AGENT_COLUMNS)

/* The agent's active participation. */
#define CURRENT_COLUMNS(X, L) \
	X(CURRENT_C_STUDY_ID,		"study_id") \
	X(CURRENT_C_ID,			"id") \
	X(CURRENT_C_STATUS,		"status") \
	L(CURRENT_C_ACCEPTED_AT,	"accepted_at")
enum current_col { DB_COLS_ENUM(CURRENT_COLUMNS) CURRENT_C__END };

/* The agent's bio and the state of its embedding. */
#define BIO_COLUMNS(X, L) \
	X(BIO_C_TEXT,			"a.bio") \
	X(BIO_C_STATUS,			"COALESCE(e.status, 'processing')") \
	L(BIO_C_UPDATED_AT,		"COALESCE(a.bio_updated_at, 0)")
enum bio_col { DB_COLS_ENUM(BIO_COLUMNS) BIO_C__END };

static const char q_agent_by_key[] = "SELECT " AGENT_COLS " FROM agents WHERE api_key_hash = ?";
/* Key lookup with the state of the previous key (design.md §9.6). */
#define KEY_COLUMNS_OF(X, L, T) \
	L(KEY_C_HAS_PREV,		T "api_key_prev_hash IS NOT NULL")
#define KEY_COLUMNS(X, L)	KEY_COLUMNS_OF(X, L, "")
#define KEY_A_COLUMNS(X, L)	KEY_COLUMNS_OF(X, L, "a.")
/* numbered on after the agent columns it follows */
enum key_col { KEY_C__BEFORE = AGENT_C__END - 1, DB_COLS_ENUM(KEY_COLUMNS) KEY_C__END };
static const char q_agent_by_cur[] =
    "SELECT " AGENT_COLS ", " DB_COLS_SQL(KEY_COLUMNS) " FROM agents WHERE api_key_hash = ?";
/* The same with the agent's active participation (LEFT JOIN: NULLs when
 * none), numbered on after the key columns: one round trip for the
 * authentication of an X-API-Key request and the agent's state
 * (design.md §15); the state of its bio's embedding only where the route
 * ranks studies with it (ROUTE_HEADS: the listing), NULL elsewhere, so
 * the other routes' look-up reads two tables, not three (design.md §15.2). */
#define KEYPART_COLUMNS(X, L) \
	X(KEYCUR_C_STUDY_ID,		"p.study_id") \
	X(KEYCUR_C_ID,			"p.id") \
	X(KEYCUR_C_STATUS,		"p.status") \
	L(KEYCUR_C_ACCEPTED_AT,		"p.accepted_at")
#define KEYBIO_COLUMNS(X, L) \
	X(KEYCUR_C_BIO_STATUS,		"e.status") \
	L(KEYCUR_C_BIO_HASH,		DB_BIO_VEC_KEY_SQL)
#define KEYCUR_COLUMNS(X, L) KEYPART_COLUMNS(X, X) KEYBIO_COLUMNS(X, L)
enum keycur_col { KEYCUR_C__BEFORE = KEY_C__END - 1, DB_COLS_ENUM(KEYCUR_COLUMNS) KEYCUR_C__END };
/* The key's look-up with the participation columns, the bio's columns
 * `bio` (theirs, or NULLs) from the joins `join`, then `more` (a string
 * literal: "" or ", " and further columns).  A plain join: the agent's
 * row as a derived table cost MariaDB about 3 µs more a request
 * (design.md §15.2). */
#define Q_BY_KEY_WITH(bio, more, join) \
    "SELECT " DB_COLS_SQL(AGENT_A_COLUMNS) ", " DB_COLS_SQL(KEY_A_COLUMNS) ", " \
    DB_COLS_SQL(KEYPART_COLUMNS) ", " bio more " FROM agents a" \
    " LEFT JOIN participations p ON p.active_agent = a.id" join " WHERE a.api_key_hash = ?"
#define Q_BY_KEY_CURRENT(more) Q_BY_KEY_WITH(DB_COLS_SQL(KEYBIO_COLUMNS), more, \
    " LEFT JOIN embeddings e ON e.subject_id = a.id")
static const char q_agent_by_cur_with_current[] = Q_BY_KEY_WITH("NULL, NULL", "", "");
/* The same with the head of the change sequence, numbered on after the
 * participation columns: whether it holds a row the worker's index has not
 * read (its placeholders come first), as this statement sees it (GET
 * /studies/available: match/cache.c, design.md §9.12). */
#define KEYHEAD_COLUMNS(X, L) \
	L(KEYHEAD_C_PENDING,		DB_MATCH_PENDING_SQL)
enum keyhead_col { KEYHEAD_C__BEFORE = KEYCUR_C__END - 1, DB_COLS_ENUM(KEYHEAD_COLUMNS)
	KEYHEAD_C__END };
static const char q_agent_by_cur_with_heads[] =
    Q_BY_KEY_CURRENT(", " DB_COLS_SQL(KEYHEAD_COLUMNS));
/* The same for a reader without holes (its one placeholder first). */
#define KEYHEAD1_COLUMNS(X, L) \
	L(KEYHEAD1_C_PENDING,		DB_MATCH_PENDING1_SQL)
enum keyhead1_col { KEYHEAD1_C__BEFORE = KEYCUR_C__END - 1, DB_COLS_ENUM(KEYHEAD1_COLUMNS)
	KEYHEAD1_C__END };
_Static_assert((int)KEYHEAD1_C_PENDING == (int)KEYHEAD_C_PENDING,
    "the two forms read the head at the same position");
static const char q_agent_by_cur_with_heads1[] =
    Q_BY_KEY_CURRENT(", " DB_COLS_SQL(KEYHEAD1_COLUMNS));
static const char q_agent_by_prev[] =
    "SELECT " AGENT_COLS " FROM agents WHERE api_key_prev_hash = ? AND api_key_prev_until > ?";
/* Whether a key hash is an agent's current key or a previous one in its
 * grace period, read only (a key sent where an access token is needed). */
static const char q_agent_key_known[] =
    "SELECT 1 FROM agents WHERE api_key_hash = ? UNION ALL"
    " SELECT 1 FROM agents WHERE api_key_prev_hash = ? AND api_key_prev_until > ? LIMIT 1";
static const char q_agent_prev_drop[] =
    "UPDATE agents SET api_key_prev_hash = NULL, api_key_prev_until = NULL"
    " WHERE id = ? AND api_key_prev_hash IS NOT NULL";
static const char q_agent_set_key[] =
    "UPDATE agents SET api_key_hash = ?, api_key_prev_hash = ?, api_key_prev_until = ?"
    " WHERE id = ?";
/* A rotation: only from the current key, never from one in its grace
 * period (issue 36: its holder could rotate again and end the new key). */
static const char q_agent_rotate_key[] =
    "UPDATE agents SET api_key_hash = ?, api_key_prev_hash = ?, api_key_prev_until = ?"
    " WHERE id = ? AND api_key_hash = ?";
static const char q_agent_get[] = "SELECT " AGENT_COLS " FROM agents WHERE id = ?";
static const char q_agent_lock[] = "SELECT " AGENT_COLS " FROM agents WHERE id = ? FOR UPDATE";
/* An expired claim code is as unknown as a wrong one (design.md §9.3). */
static const char q_agent_by_claim[] =
    "SELECT " AGENT_COLS " FROM agents WHERE claim_code_hash = ? AND claim_code_expires_at > ?"
    " FOR UPDATE";
static const char q_agent_ins[] =
    "INSERT INTO agents (id, name, description, api_key_hash, claim_code_hash,"
    " claim_code_expires_at, status, reputation, streak, created_ip, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, 'unclaimed', ?, 0, ?, ?)";
static const char q_agent_claimcode[] =
    "UPDATE agents SET claim_code_hash = ?, claim_code_expires_at = ?"
    " WHERE id = ? AND account_id IS NULL";
static const char q_agent_name[] = "UPDATE agents SET name = ? WHERE id = ?";
static const char q_agent_desc[] = "UPDATE agents SET description = ? WHERE id = ?";
static const char q_agent_hb[] =
    "UPDATE agents SET last_heartbeat = ? WHERE id = ?"
    " AND (last_heartbeat IS NULL OR last_heartbeat <= ?)";
static const char q_agent_hb_get[] = "SELECT COALESCE(last_heartbeat, 0) FROM agents WHERE id = ?";
static const char q_agent_current[] =
    "SELECT " DB_COLS_SQL(CURRENT_COLUMNS) " FROM participations WHERE active_agent = ?";
/* The same, and the agent's row in one study (accept: has it taken part
 * there) in one round trip: the first column says which row is which, the
 * current columns follow it. */
enum { CUR_IN_C_ACTIVE, CUR_IN_C_CURRENT };
static const char q_agent_current_in[] =
    "SELECT 1, " DB_COLS_SQL(CURRENT_COLUMNS) " FROM participations WHERE active_agent = ?"
    " UNION ALL SELECT 0, " DB_COLS_SQL(CURRENT_COLUMNS) " FROM participations"
    " WHERE study_id = ? AND agent_id = ?";
static const char q_agent_claim[] =
    "UPDATE agents SET account_id = ?,"
    " status = IF(status = 'suspended', 'suspended', 'claimed'),"
    " status_before_suspend = IF(status = 'suspended', 'claimed', NULL) WHERE id = ?";
static const char q_agent_status[] =
    "UPDATE agents SET status = ?, status_before_suspend = ? WHERE id = ?";
static const char q_agent_rep[] = "UPDATE agents SET reputation = ?, streak = ? WHERE id = ?";
static const char q_bio_set[] = "UPDATE agents SET bio = ?, bio_updated_at = ? WHERE id = ?";
static const char q_emb_set[] =
    "INSERT INTO embeddings (subject_id, status, text_hash, vector, error, attempts, updated_at)"
    " VALUES (?, 'processing', ?, NULL, NULL, 0, ?) ON DUPLICATE KEY UPDATE"
    " status = 'processing', text_hash = VALUES(text_hash), vector = NULL, error = NULL,"
    " attempts = 0, updated_at = VALUES(updated_at)";
static const char q_bio_get[] =
    "SELECT " DB_COLS_SQL(BIO_COLUMNS) " FROM agents a"
    " LEFT JOIN embeddings e ON e.subject_id = a.id WHERE a.id = ?";

/* An account row (alias a), read at the ACC_C_* positions; a token
 * lookup selects TOKEN_COLUMNS (alias t) after it. */
#define ACC_COLUMNS(X, L) \
	X(ACC_C_ID,			"a.id") \
	X(ACC_C_EMAIL,			"a.email") \
	X(ACC_C_RESEARCHER,		"FIND_IN_SET('researcher', a.roles) > 0") \
	X(ACC_C_PARTICIPANT,		"FIND_IN_SET('participant', a.roles) > 0") \
	X(ACC_C_ADMIN,			"FIND_IN_SET('admin', a.roles) > 0") \
	L(ACC_C_CREATED_AT,		"a.created_at")
#define TOKEN_COLUMNS(X, L) \
	X(TOKEN_C_EXPIRES_AT,		"t.expires_at") \
	X(TOKEN_C_LAST_USED_AT,		"t.last_used_at") \
	L(TOKEN_C_REVOKED,		"t.revoked_at IS NOT NULL")
enum acc_col { DB_COLS_ENUM(ACC_COLUMNS) DB_COLS_ENUM(TOKEN_COLUMNS) ACC_C__END };
#define ACC_COLS DB_COLS_SQL(ACC_COLUMNS)

/* A login code. */
#define CODE_COLUMNS(X, L) \
	X(CODE_C_HASH,			"code_hash") \
	X(CODE_C_EXPIRES_AT,		"expires_at") \
	L(CODE_C_TRIES,			"tries")
enum code_col { DB_COLS_ENUM(CODE_COLUMNS) CODE_C__END };

static const char q_acc_get[] = "SELECT " ACC_COLS " FROM accounts a WHERE a.id = ?";
static const char q_acc_email[] = "SELECT " ACC_COLS " FROM accounts a WHERE a.email = ?";
static const char q_acc_email_lock[] =
    "SELECT " ACC_COLS " FROM accounts a WHERE a.email = ? FOR UPDATE";
static const char q_acc_ins[] =
    "INSERT INTO accounts (id, email, roles, created_at) VALUES (?, ?, ?, ?)";
/* arps-admin grant / revoke: add or remove one role of the roles set. */
static const char q_acc_role_add[] =
    "UPDATE accounts SET roles = CONCAT_WS(',', NULLIF(roles, ''), ?) WHERE id = ?";
static const char q_acc_role_remove[] =
    "UPDATE accounts SET roles = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', roles, ','),"
    " CONCAT(',', ?, ','), ',')) WHERE id = ?";
/* An account's agents (db_account_agents), read at the ACC_AGENT_* positions. */
#define ACC_AGENT_COLUMNS(X, L) \
	X(ACC_AGENT_ID,		"g.id") \
	X(ACC_AGENT_NAME,	"g.name") \
	X(ACC_AGENT_STATUS,	"g.status") \
	X(ACC_AGENT_REPUTATION,	"g.reputation") \
	X(ACC_AGENT_AVAILABLE,	"COALESCE(w.available_cents, 0)") \
	L(ACC_AGENT_FROZEN,	"COALESCE(w.frozen_cents, 0)")
enum acc_agent_col { DB_COLS_ENUM(ACC_AGENT_COLUMNS) ACC_AGENT__END };
static const char q_acc_agents[] =
    "SELECT " DB_COLS_SQL(ACC_AGENT_COLUMNS) " FROM agents g"
    " LEFT JOIN wallets w ON w.owner_id = g.id WHERE g.account_id = ? ORDER BY g.seq DESC";

static const char q_tok_ins[] =
    "INSERT INTO access_tokens (token_hash, account_id, created_at, last_used_at, expires_at)"
    " VALUES (?, ?, ?, ?, ?)";
static const char q_tok_get[] =
    "SELECT " ACC_COLS ", " DB_COLS_SQL(TOKEN_COLUMNS)
    " FROM access_tokens t JOIN accounts a ON a.id = t.account_id WHERE t.token_hash = ?";
static const char q_tok_touch[] = "UPDATE access_tokens SET last_used_at = ? WHERE token_hash = ?";
static const char q_tok_revoke[] =
    "UPDATE access_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL";
static const char q_tok_revoke_all[] =
    "UPDATE access_tokens SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL";

static const char q_code_set[] =
    "REPLACE INTO login_codes (email, code_hash, created_at, expires_at, tries)"
    " VALUES (?, ?, ?, ?, 0)";
static const char q_code_get[] =
    "SELECT " DB_COLS_SQL(CODE_COLUMNS) " FROM login_codes WHERE email = ? FOR UPDATE";
static const char q_code_fail[] = "UPDATE login_codes SET tries = tries + 1 WHERE email = ?";
static const char q_code_del[] = "DELETE FROM login_codes WHERE email = ?";

static const char q_ident_get[] =
    "SELECT account_id FROM account_identities WHERE issuer = ? AND subject = ?";
static const char q_ident_ins[] =
    "INSERT INTO account_identities (issuer, subject, account_id, created_at) VALUES (?, ?, ?, ?)";

static void
agent_row(const struct dbres *res, struct agent *a)
{
	memset(a, 0, sizeof *a);
	dbres_copy(a->id, sizeof a->id, res, 0, AGENT_C_ID);
	dbres_copy(a->name, sizeof a->name, res, 0, AGENT_C_NAME);
	a->has_description = !dbres_isnull(res, 0, AGENT_C_DESCRIPTION);
	dbres_copy(a->description, sizeof a->description, res, 0, AGENT_C_DESCRIPTION);
	dbres_copy(a->status, sizeof a->status, res, 0, AGENT_C_STATUS);
	dbres_copy(a->before_suspend, sizeof a->before_suspend, res, 0, AGENT_C_BEFORE_SUSPEND);
	dbres_copy(a->account_id, sizeof a->account_id, res, 0, AGENT_C_ACCOUNT_ID);
	a->reputation = (int)dbres_i64(res, 0, AGENT_C_REPUTATION);
	a->streak = (int)dbres_i64(res, 0, AGENT_C_STREAK);
	a->last_heartbeat = dbres_i64(res, 0, AGENT_C_LAST_HEARTBEAT);
	a->created_at = dbres_i64(res, 0, AGENT_C_CREATED_AT);
}

static enum db_rc
agent_many(struct db *db, const char *sql, const struct dbp *p, size_t np, struct agent *a)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = db_exec_one(db, sql, p, np, &res)) != DB_OK)
		return rc;
	agent_row(res, a);
	dbres_free(res);
	return DB_OK;
}

static enum db_rc
agent_one(struct db *db, const char *sql, struct dbp p, struct agent *a)
{
	return agent_many(db, sql, &p, 1, a);
}

enum db_rc
db_agent_by_keyhash(struct db *db, const unsigned char h[32], struct agent *a)
{
	return agent_one(db, q_agent_by_key, P_BLOB(h, 32), a);
}

enum db_rc
db_agent_by_key(struct db *db, const unsigned char h[32], int64_t now, struct agent *a)
{
	return db_agent_by_key_current(db, h, now, a, NULL);
}

static enum db_rc agent_by_key(struct db *db, const unsigned char h[32], int64_t now,
    struct agent *a, struct agent_current *cur, const struct match_seq *seq);

enum db_rc
db_agent_key_known(struct db *db, const unsigned char h[32], int64_t now)
{
	struct dbres *res = NULL;
	enum db_rc rc = DB_ONE(db, q_agent_key_known, &res, P_BLOB(h, 32), P_BLOB(h, 32),
	    P_I64(now));

	dbres_free(res);
	return rc;
}

enum db_rc
db_agent_by_key_current(struct db *db, const unsigned char h[32], int64_t now, struct agent *a,
    struct agent_current *cur)
{
	return agent_by_key(db, h, now, a, cur, NULL);
}

enum db_rc
db_agent_by_key_heads(struct db *db, const unsigned char h[32], int64_t now, struct agent *a,
    struct agent_current *cur, const struct match_seq *seq)
{
	return agent_by_key(db, h, now, a, cur, seq);
}

static enum db_rc
agent_by_key(struct db *db, const unsigned char h[32], int64_t now, struct agent *a,
    struct agent_current *cur, const struct match_seq *seq)
{
	struct dbp p[DB_MATCH_PENDING_NP + 1];
	struct dbres *res = NULL;
	const char *st;
	const void *b;
	size_t len = 0;
	enum db_rc rc;
	int has_prev;

	if (cur != NULL && seq != NULL && seq->ngap == 0)
		rc = DB_ONE(db, q_agent_by_cur_with_heads1, &res, P_I64(seq->hw), P_BLOB(h, 32));
	else if (cur != NULL && seq != NULL) {
		db_match_pending_params(p, seq);
		p[DB_MATCH_PENDING_NP] = P_BLOB(h, 32);
		rc = db_exec_one(db, q_agent_by_cur_with_heads, p, DB_MATCH_PENDING_NP + 1, &res);
	} else if (cur != NULL)
		rc = DB_ONE(db, q_agent_by_cur_with_current, &res, P_BLOB(h, 32));
	else
		rc = DB_ONE(db, q_agent_by_cur, &res, P_BLOB(h, 32));
	if (rc == DB_NOTFOUND) {
		/* the previous key, within its grace period */
		if ((rc = DB_ONE(db, q_agent_by_prev, &res, P_BLOB(h, 32), P_I64(now))) != DB_OK)
			return rc;
		agent_row(res, a);
		dbres_free(res);
		return cur != NULL ? db_agent_current(db, a->id, cur) : DB_OK;
	}
	if (rc != DB_OK)
		return rc;
	agent_row(res, a);
	has_prev = dbres_i64(res, 0, KEY_C_HAS_PREV) != 0;
	if (cur != NULL) {
		memset(cur, 0, sizeof *cur);
		if (!dbres_isnull(res, 0, KEYCUR_C_ID)) {
			dbres_copy(cur->study_id, sizeof cur->study_id, res, 0, KEYCUR_C_STUDY_ID);
			dbres_copy(cur->participation_id, sizeof cur->participation_id, res, 0,
			    KEYCUR_C_ID);
			dbres_copy(cur->status, sizeof cur->status, res, 0, KEYCUR_C_STATUS);
			cur->accepted_at = dbres_i64(res, 0, KEYCUR_C_ACCEPTED_AT);
		}
		b = dbres_blob(res, 0, KEYCUR_C_BIO_HASH, &len);
		st = dbres_str(res, 0, KEYCUR_C_BIO_STATUS);
		if (st != NULL && strcmp(st, "ready") == 0 && b != NULL &&
		    len == sizeof cur->bio_hash) {
			memcpy(cur->bio_hash, b, len);
			cur->bio_ready = 1;
		}
		if (seq != NULL) {
			cur->heads = 1;
			cur->change_pending = dbres_i64(res, 0, KEYHEAD_C_PENDING) != 0;
		}
	}
	dbres_free(res);
	/* The new key's first use ends the previous key at once. */
	if (has_prev)
		return DB_Q(db, q_agent_prev_drop, NULL, NULL, P_STR(a->id));
	return DB_OK;
}

enum db_rc
db_agent_set_key(struct db *db, const char *id, const unsigned char keyhash[32],
    const unsigned char *prevhash, int64_t prev_until)
{
	uint64_t n = 0;
	enum db_rc rc;

	if (prevhash != NULL)
		rc = DB_Q(db, q_agent_rotate_key, NULL, &n, P_BLOB(keyhash, 32),
		    P_BLOB(prevhash, 32), P_I64(prev_until), P_STR(id), P_BLOB(prevhash, 32));
	else
		rc = DB_Q(db, q_agent_set_key, NULL, &n, P_BLOB(keyhash, 32), P_NULL, P_NULL,
		    P_STR(id));
	if (rc == DB_OK && n != 1)
		return DB_NOTFOUND;
	return rc;
}

enum db_rc
db_agent_get(struct db *db, const char *id, int for_update, struct agent *a)
{
	return agent_one(db, for_update ? q_agent_lock : q_agent_get, P_STR(id), a);
}

enum db_rc
db_agent_by_claimhash(struct db *db, const unsigned char h[32], int64_t now, struct agent *a)
{
	return agent_many(db, q_agent_by_claim, DB_ARGS(P_BLOB(h, 32), P_I64(now)), a);
}

enum db_rc
db_agent_claimcode_set(struct db *db, const char *agent_id, const unsigned char h[32],
    int64_t expires)
{
	uint64_t n = 0;
	enum db_rc rc;

	rc = DB_Q(db, q_agent_claimcode, NULL, &n, P_BLOB(h, 32), P_I64(expires), P_STR(agent_id));
	if (rc != DB_OK)
		return rc;
	return n == 0 ? DB_NOTFOUND : DB_OK;
}

enum db_rc
db_agent_insert(struct db *db, const struct agent *a, const unsigned char keyhash[32],
    const unsigned char claimhash[32], const char *ip)
{
	enum db_rc rc;

	rc = DB_Q(db, q_agent_ins, NULL, NULL, P_STR(a->id), P_STR(a->name),
	    P_STR(a->has_description ? a->description : NULL), P_BLOB(keyhash, 32),
	    P_BLOB(claimhash, 32), P_I64(a->claim_expires_at), P_I64(a->reputation),
	    P_STR(ip ? ip : ""), P_I64(a->created_at));
	if (rc != DB_OK)
		return rc;
	return db_wallet_create(db, a->id);
}

enum db_rc
db_agent_update(struct db *db, const char *id, const char *name, const char *desc, int clear_desc)
{
	enum db_rc rc = DB_OK;

	if (name != NULL && (rc = DB_Q(db, q_agent_name, NULL, NULL, P_STR(name), P_STR(id))) != DB_OK)
		return rc;
	if ((desc != NULL || clear_desc) &&
	    (rc = DB_Q(db, q_agent_desc, NULL, NULL, P_STR(clear_desc ? NULL : desc), P_STR(id))) != DB_OK)
		return rc;
	return rc;
}

enum db_rc
db_agent_heartbeat(struct db *db, const char *id, int64_t now, int64_t interval, int *ok,
    int64_t *last)
{
	struct dbres *res = NULL;
	uint64_t n = 0;
	enum db_rc rc;

	*ok = 0;
	*last = 0;
	if ((rc = DB_Q(db, q_agent_hb, NULL, &n, P_I64(now), P_STR(id), P_I64(now - interval))) != DB_OK)
		return rc;
	if (n == 1) {
		*ok = 1;
		return DB_OK;
	}
	if ((rc = DB_Q(db, q_agent_hb_get, &res, NULL, P_STR(id))) != DB_OK)
		return rc;
	*last = dbres_i64(res, 0, DB_COL_ONLY);
	dbres_free(res);
	return DB_OK;
}

/* The current participation from row `row`, its columns from `base` on. */
static void
current_from(const struct dbres *res, size_t row, size_t base, struct agent_current *c)
{
	dbres_copy(c->study_id, sizeof c->study_id, res, row, base + CURRENT_C_STUDY_ID);
	dbres_copy(c->participation_id, sizeof c->participation_id, res, row, base + CURRENT_C_ID);
	dbres_copy(c->status, sizeof c->status, res, row, base + CURRENT_C_STATUS);
	c->accepted_at = dbres_i64(res, row, base + CURRENT_C_ACCEPTED_AT);
}

enum db_rc
db_agent_current(struct db *db, const char *id, struct agent_current *c)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	memset(c, 0, sizeof *c);
	if ((rc = DB_Q(db, q_agent_current, &res, NULL, P_STR(id))) != DB_OK)
		return rc;
	if (res->nrows > 0)
		current_from(res, 0, 0, c);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_agent_current_in(struct db *db, const char *id, const char *study_id,
    struct agent_current *c, int *took_part)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	size_t i;

	memset(c, 0, sizeof *c);
	*took_part = 0;
	if ((rc = DB_Q(db, q_agent_current_in, &res, NULL, P_STR(id), P_STR(study_id),
	    P_STR(id))) != DB_OK)
		return rc;
	for (i = 0; i < res->nrows; i++) {
		if (dbres_i64(res, i, CUR_IN_C_ACTIVE) != 0)
			current_from(res, i, CUR_IN_C_CURRENT, c);
		else
			*took_part = 1;
	}
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_agent_claim(struct db *db, const char *agent_id, const char *account_id)
{
	return DB_Q(db, q_agent_claim, NULL, NULL, P_STR(account_id), P_STR(agent_id));
}

enum db_rc
db_agent_set_status(struct db *db, const char *id, const char *status, const char *before)
{
	return DB_Q(db, q_agent_status, NULL, NULL, P_STR(status),
	    P_STR(before && *before ? before : NULL), P_STR(id));
}

enum db_rc
db_agent_set_reputation(struct db *db, const char *id, int reputation, int streak)
{
	return DB_Q(db, q_agent_rep, NULL, NULL, P_I64(reputation), P_I64(streak), P_STR(id));
}

enum db_rc
db_bio_set(struct db *db, const char *agent_id, const char *bio, int64_t now)
{
	unsigned char h[32];
	enum db_rc rc;

	crypto_generichash(h, 32, (const unsigned char *)bio, strlen(bio), NULL, 0);
	if ((rc = DB_Q(db, q_bio_set, NULL, NULL, P_STR(bio), P_I64(now), P_STR(agent_id))) != DB_OK)
		return rc;
	return DB_Q(db, q_emb_set, NULL, NULL, P_STR(agent_id), P_BLOB(h, 32), P_I64(now));
}

enum db_rc
db_bio_get(struct db *db, const char *agent_id, char **bio, char status[16], int64_t *updated_at)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	*bio = NULL;
	*updated_at = 0;
	strcpy(status, "none");
	if ((rc = DB_Q(db, q_bio_get, &res, NULL, P_STR(agent_id))) != DB_OK)
		return rc;
	if (res->nrows > 0 && !dbres_isnull(res, 0, BIO_C_TEXT)) {
		if ((*bio = strdup(dbres_str(res, 0, BIO_C_TEXT))) == NULL) {
			dbres_free(res);
			return DB_ERR;
		}
		dbres_copy(status, 16, res, 0, BIO_C_STATUS);
		*updated_at = dbres_i64(res, 0, BIO_C_UPDATED_AT);
	}
	dbres_free(res);
	return DB_OK;
}

static void
account_row(const struct dbres *res, size_t row, struct account *a)
{
	memset(a, 0, sizeof *a);
	dbres_copy(a->id, sizeof a->id, res, row, ACC_C_ID);
	dbres_copy(a->email, sizeof a->email, res, row, ACC_C_EMAIL);
	a->roles = (dbres_i64(res, row, ACC_C_RESEARCHER) ? ACC_ROLE_RESEARCHER : 0) |
	    (dbres_i64(res, row, ACC_C_PARTICIPANT) ? ACC_ROLE_PARTICIPANT : 0) |
	    (dbres_i64(res, row, ACC_C_ADMIN) ? ACC_ROLE_ADMIN : 0);
	a->created_at = dbres_i64(res, row, ACC_C_CREATED_AT);
}

static enum db_rc
account_one(struct db *db, const char *sql, const char *key, struct account *a)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = DB_ONE(db, sql, &res, P_STR(key))) != DB_OK)
		return rc;
	account_row(res, 0, a);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_account_get(struct db *db, const char *id, struct account *a)
{
	return account_one(db, q_acc_get, id, a);
}

enum db_rc
db_account_by_email(struct db *db, const char *email, struct account *a)
{
	return account_one(db, q_acc_email, email, a);
}

enum db_rc
db_account_role_add(struct db *db, const char *id, const char *role)
{
	uint64_t n = 0;

	return DB_Q(db, q_acc_role_add, NULL, &n, P_STR(role), P_STR(id));
}

enum db_rc
db_account_role_remove(struct db *db, const char *id, const char *role)
{
	uint64_t n = 0;

	return DB_Q(db, q_acc_role_remove, NULL, &n, P_STR(role), P_STR(id));
}

enum db_rc
db_account_create(struct db *db, const char *email, unsigned roles, int64_t now,
    struct account *out)
{
	char set[64] = "";
	enum db_rc rc;

	memset(out, 0, sizeof *out);
	if (ids_new(IDS_ACCOUNT, &secret_rng, out->id) != 0)
		return DB_ERR;
	if (roles & ACC_ROLE_RESEARCHER)
		strcat(set, "researcher,");
	if (roles & ACC_ROLE_PARTICIPANT)
		strcat(set, "participant,");
	if (roles & ACC_ROLE_ADMIN)
		strcat(set, "admin,");
	if (set[0] != '\0')
		set[strlen(set) - 1] = '\0';
	snprintf(out->email, sizeof out->email, "%s", email ? email : "");
	out->roles = roles;
	out->created_at = now;
	if ((rc = DB_Q(db, q_acc_ins, NULL, NULL, P_STR(out->id), P_STR(email), P_STR(set),
	    P_I64(now))) != DB_OK)
		return rc;
	return db_wallet_create(db, out->id);
}

enum db_rc
db_account_for_email(struct db *db, const char *email, int64_t now, struct account *out)
{
	enum db_rc rc = account_one(db, q_acc_email_lock, email, out);

	if (rc != DB_NOTFOUND)
		return rc;
	rc = db_account_create(db, email, ACC_ROLE_RESEARCHER | ACC_ROLE_PARTICIPANT, now, out);
	/* A concurrent first login created it: the caller's retry finds it. */
	return rc == DB_DUP ? DB_RETRY : rc;
}

static void
acc_agent_clear(void *e)
{
	struct acc_agent *a = e;

	free(a->id);
	free(a->name);
	free(a->status);
	memset(a, 0, sizeof *a);
}

static int
acc_agent_map(const struct dbres *res, size_t row, void *e)
{
	struct acc_agent *a = e;
	int ok = 1;

	a->id = dbres_dup(res, row, ACC_AGENT_ID, &ok);
	a->name = dbres_dup(res, row, ACC_AGENT_NAME, &ok);
	a->status = dbres_dup(res, row, ACC_AGENT_STATUS, &ok);
	a->reputation = dbres_i64(res, row, ACC_AGENT_REPUTATION);
	a->available = dbres_i64(res, row, ACC_AGENT_AVAILABLE);
	a->frozen = dbres_i64(res, row, ACC_AGENT_FROZEN);
	if (!ok) {
		acc_agent_clear(a);
		return -1;
	}
	return 0;
}

void
db_acc_agents_free(struct acc_agent *v, size_t n)
{
	db_array_free(v, n, sizeof *v, acc_agent_clear);
}

enum db_rc
db_account_agents(struct db *db, const char *account_id, struct acc_agent **v, size_t *n)
{
	struct dbres *res = NULL;
	enum db_rc rc;
	int more = 0;

	*v = NULL;
	*n = 0;
	if ((rc = DB_Q(db, q_acc_agents, &res, NULL, P_STR(account_id))) != DB_OK)
		return rc;
	rc = dbres_map(res, 0, sizeof **v, acc_agent_map, acc_agent_clear, (void **)v, n, &more);
	dbres_free(res);
	return rc;
}

enum db_rc
db_token_insert(struct db *db, const unsigned char h[32], const char *account_id,
    int64_t now, int64_t expires)
{
	return DB_Q(db, q_tok_ins, NULL, NULL, P_BLOB(h, 32), P_STR(account_id), P_I64(now),
	    P_I64(now), P_I64(expires));
}

enum db_rc
db_token_lookup(struct db *db, const unsigned char h[32], struct account *acc,
    int64_t *expires, int64_t *last_used, int *revoked)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = DB_ONE(db, q_tok_get, &res, P_BLOB(h, 32))) != DB_OK)
		return rc;
	account_row(res, 0, acc);
	*expires = dbres_i64(res, 0, TOKEN_C_EXPIRES_AT);
	*last_used = dbres_i64(res, 0, TOKEN_C_LAST_USED_AT);
	*revoked = (int)dbres_i64(res, 0, TOKEN_C_REVOKED);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_token_touch(struct db *db, const unsigned char h[32], int64_t now)
{
	return DB_Q(db, q_tok_touch, NULL, NULL, P_I64(now), P_BLOB(h, 32));
}

enum db_rc
db_token_revoke(struct db *db, const unsigned char h[32], int64_t now)
{
	return DB_Q(db, q_tok_revoke, NULL, NULL, P_I64(now), P_BLOB(h, 32));
}

enum db_rc
db_token_revoke_all(struct db *db, const char *account_id, int64_t now, uint64_t *n)
{
	return DB_Q(db, q_tok_revoke_all, NULL, n, P_I64(now), P_STR(account_id));
}

enum db_rc
db_code_set(struct db *db, const char *email, const unsigned char h[32], int64_t now,
    int64_t expires)
{
	return DB_Q(db, q_code_set, NULL, NULL, P_STR(email), P_BLOB(h, 32), P_I64(now),
	    P_I64(expires));
}

enum db_rc
db_code_get(struct db *db, const char *email, unsigned char h[32], int64_t *expires, int *tries)
{
	struct dbres *res = NULL;
	const void *b;
	size_t n;
	enum db_rc rc;

	if ((rc = DB_Q(db, q_code_get, &res, NULL, P_STR(email))) != DB_OK)
		return rc;
	if (res->nrows == 0 || (b = dbres_blob(res, 0, CODE_C_HASH, &n)) == NULL || n != 32) {
		dbres_free(res);
		return DB_NOTFOUND;
	}
	memcpy(h, b, 32);
	*expires = dbres_i64(res, 0, CODE_C_EXPIRES_AT);
	*tries = (int)dbres_i64(res, 0, CODE_C_TRIES);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_code_fail(struct db *db, const char *email)
{
	return DB_Q(db, q_code_fail, NULL, NULL, P_STR(email));
}

enum db_rc
db_code_delete(struct db *db, const char *email)
{
	return DB_Q(db, q_code_del, NULL, NULL, P_STR(email));
}

enum db_rc
db_identity_get(struct db *db, const char *issuer, const char *subject, char account_id[IDS_BUFSZ])
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = DB_ONE(db, q_ident_get, &res, P_STR(issuer), P_STR(subject))) != DB_OK)
		return rc;
	dbres_copy(account_id, IDS_BUFSZ, res, 0, DB_COL_ONLY);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_identity_link(struct db *db, const char *issuer, const char *subject,
    const char *account_id, int64_t now)
{
	return DB_Q(db, q_ident_ins, NULL, NULL, P_STR(issuer), P_STR(subject), P_STR(account_id),
	    P_I64(now));
}
