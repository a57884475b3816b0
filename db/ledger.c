#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "db/ledger.h"
#include "db/rows.h"
#include "lib/secret.h"

/* An entry's postings and its transactions: one statement each. */
static struct db_shape sh_postings = { "INSERT INTO ledger_postings (entry_id, account, sub,"
    " amount, study_id, event, created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?)", ", ", "", 0, 7,
    { 0 } };
static struct db_shape sh_txns = { "INSERT INTO transactions (id, owner_id, type, amount_cents,"
    " study_id, entry_id, description, created_at) VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?)", ", ",
    "", 0, 8, { 0 } };
static const char q_wallet_add[] =
    "UPDATE wallets SET available_cents = available_cents + ?, frozen_cents = frozen_cents + ?"
    " WHERE owner_id = ?";
static const char q_wallet_create[] =
    "INSERT IGNORE INTO wallets (owner_id, available_cents, frozen_cents) VALUES (?, 0, 0)";
/* A wallet's balances. */
#define WALLET_COLUMNS(X, L) \
	X(WALLET_C_AVAILABLE,	"available_cents") \
	L(WALLET_C_FROZEN,	"frozen_cents")
enum wallet_col { DB_COLS_ENUM(WALLET_COLUMNS) WALLET_C__END };
static const char q_wallet_lock[] =
    "SELECT " DB_COLS_SQL(WALLET_COLUMNS) " FROM wallets WHERE owner_id = ? FOR UPDATE";
static const char q_wallet_get[] =
    "SELECT " DB_COLS_SQL(WALLET_COLUMNS) " FROM wallets WHERE owner_id = ?";

static const char *const subname[LEDGER_SUB__MAX] = { "platform", "available", "frozen" };

struct wdelta {
	const char *owner;
	int64_t avail, frozen;
};

static int
wcmp(const void *a, const void *b)
{
	return strcmp(((const struct wdelta *)a)->owner, ((const struct wdelta *)b)->owner);
}

enum db_rc
db_ledger_post(struct db *db, const struct ledger_entry *e,
    const char *const party[LEDGER_P__MAX], const char *study_id, enum ledger_event ev,
    const char *desc, int64_t now)
{
	char entry[IDS_BUFSZ];

	return db_ledger_post_entry(db, e, party, study_id, ev, desc, now, entry);
}

enum db_rc
db_ledger_post_entry(struct db *db, const struct ledger_entry *e,
    const char *const party[LEDGER_P__MAX], const char *study_id, enum ledger_event ev,
    const char *desc, int64_t now, char entry_out[IDS_BUFSZ])
{
	struct wdelta w[LEDGER_MAX_POSTINGS];
	struct dbp pp[LEDGER_MAX_POSTINGS * 7], tp[LEDGER_MAX_TXNS * 8];
	char entry[IDS_BUFSZ], txn[LEDGER_MAX_TXNS][IDS_BUFSZ];
	size_t i, j, nw = 0;
	enum db_rc rc;

	entry_out[0] = '\0';
	if (!ledger_balanced(e))
		return DB_ERR;
	if (e->nposting == 0 && e->ntxn == 0)
		return DB_OK;
	if (ids_new(IDS_TRANSACTION, &secret_rng, entry) != 0)
		return DB_ERR;
	memcpy(entry, "ent_", 4);
	memcpy(entry_out, entry, IDS_BUFSZ);
	for (i = 0; i < e->nposting; i++) {
		const struct ledger_posting *p = &e->posting[i];
		const char *acct = ledger_party_is_wallet(p->party) ? party[p->party]
		    : ledger_party_name(p->party);

		struct dbp *r = pp + i * 7;

		if (acct == NULL)
			return DB_ERR;
		r[0] = P_STR(entry);
		r[1] = P_STR(acct);
		r[2] = P_STR(subname[p->sub]);
		r[3] = P_I64(p->amount);
		r[4] = P_STR(study_id);
		r[5] = P_STR(ledger_event_name(ev));
		r[6] = P_I64(now);
		if (!ledger_party_is_wallet(p->party))
			continue;
		for (j = 0; j < nw && strcmp(w[j].owner, acct) != 0; j++)
			;
		if (j == nw) {
			w[nw].owner = acct;
			w[nw].avail = w[nw].frozen = 0;
			nw++;
		}
		if (p->sub == LEDGER_SUB_AVAILABLE)
			w[j].avail += p->amount;
		else
			w[j].frozen += p->amount;
	}
	if ((rc = db_rows_exec(db, &sh_postings, NULL, pp, e->nposting, NULL, NULL, NULL)) != DB_OK)
		return rc;
	qsort(w, nw, sizeof w[0], wcmp);
	for (j = 0; j < nw; j++) {
		uint64_t n = 0;
		if ((rc = DB_Q(db, q_wallet_add, NULL, &n, P_I64(w[j].avail), P_I64(w[j].frozen),
		    P_STR(w[j].owner))) != DB_OK)
			return rc;
		if (n != 1 && (w[j].avail != 0 || w[j].frozen != 0))
			return DB_ERR;	/* a wallet that does not exist */
	}
	for (i = 0; i < e->ntxn; i++) {
		const struct ledger_txn *t = &e->txn[i];
		struct dbp *r = tp + i * 8;

		if (ids_new(IDS_TRANSACTION, &secret_rng, txn[i]) != 0 || party[t->party] == NULL)
			return DB_ERR;
		r[0] = P_STR(txn[i]);
		r[1] = P_STR(party[t->party]);
		r[2] = P_STR(ledger_txn_type_name(t->type));
		r[3] = P_I64(t->amount);
		r[4] = P_STR(study_id);
		r[5] = P_STR(entry);
		r[6] = P_STR(desc ? desc : ledger_txn_type_description(t->type));
		r[7] = P_I64(now);
	}
	return db_rows_exec(db, &sh_txns, NULL, tp, e->ntxn, NULL, NULL, NULL);
}

enum db_rc
db_wallet_create(struct db *db, const char *owner)
{
	return DB_Q(db, q_wallet_create, NULL, NULL, P_STR(owner));
}

static enum db_rc
wallet_read(struct db *db, const char *sql, const char *owner, int64_t *available, int64_t *frozen)
{
	struct dbres *res = NULL;
	enum db_rc rc;

	if ((rc = DB_ONE(db, sql, &res, P_STR(owner))) != DB_OK)
		return rc;
	*available = dbres_i64(res, 0, WALLET_C_AVAILABLE);
	*frozen = dbres_i64(res, 0, WALLET_C_FROZEN);
	dbres_free(res);
	return DB_OK;
}

enum db_rc
db_wallet_lock(struct db *db, const char *owner, int64_t *available, int64_t *frozen)
{
	return wallet_read(db, q_wallet_lock, owner, available, frozen);
}

enum db_rc
db_wallet_lock_create(struct db *db, const char *owner, int64_t *available, int64_t *frozen)
{
	enum db_rc rc = wallet_read(db, q_wallet_lock, owner, available, frozen);

	if (rc != DB_NOTFOUND)
		return rc;
	/* the owner's first money: no row to queue on yet */
	if ((rc = db_wallet_create(db, owner)) != DB_OK)
		return rc;
	return wallet_read(db, q_wallet_lock, owner, available, frozen);
}

enum db_rc
db_wallet_get(struct db *db, const char *owner, int64_t *available, int64_t *frozen)
{
	return wallet_read(db, q_wallet_get, owner, available, frozen);
}
