/* Wallet reads for the API: the typed transactions of one owner. */
#ifndef ARPS_DB_WALLET_H
#define ARPS_DB_WALLET_H

#include <stddef.h>
#include <stdint.h>

#include "core/ids.h"
#include "core/ledger.h"
#include "db/db.h"

struct txn_row {
	int64_t			 seq;
	char			 id[IDS_BUFSZ];
	enum ledger_txn_type	 type;
	int64_t			 amount;	/* signed from available */
	char			 study_id[IDS_BUFSZ];	/* "" when none */
	char			*description;
	int64_t			 created_at;
};

/*
 * The transactions of owner, newest first (seq < cursor; cursor 0: from
 * the newest), only of *type when type is not NULL, at most limit.  *v is
 * malloc'd (free with db_txns_free); *next is the next page's cursor, 0 at
 * the end.  Returns enum db_rc.
 */
enum db_rc db_txn_list(struct db *, const char *owner, const enum ledger_txn_type *type,
    int64_t cursor, int64_t limit, struct txn_row **v, size_t *n, int64_t *next);
void db_txns_free(struct txn_row *, size_t n);

/* A cash-out request (POST /wallet/cashouts; 013_wallet_rows_cashouts.sql). */
struct cashout {
	int64_t			 seq;
	char			 id[IDS_BUFSZ];
	char			 account_id[IDS_BUFSZ];	/* who asked */
	char			 wallet_id[IDS_BUFSZ];	/* whose wallet paid it */
	int64_t			 amount;
	char			 status[12];	/* requested, paid, refused */
	char			 reference[201];	/* "" when none */
	char			 reason[501];	/* "" when none */
	int64_t			 created_at, settled_at;	/* 0: not settled */
};

/* Insert a cash-out request (status requested).  Returns enum db_rc. */
enum db_rc db_cashout_insert(struct db *, const char *id, const char *account,
    const char *wallet, int64_t amount, int64_t now);
/* Read one cash-out, locked (FOR UPDATE) when lock; DB_NOTFOUND if none. */
enum db_rc db_cashout_get(struct db *, const char *id, int lock, struct cashout *out);
/* Settle a requested cash-out: status paid (reference) or refused (reason).
 * DB_NOTFOUND when it is no longer requested. */
enum db_rc db_cashout_settle(struct db *, const char *id, const char *status,
    const char *reference, const char *reason, int64_t now);
/* The cash-outs account asked for, newest first, as db_txn_list pages;
 * *v malloc'd (free()). */
enum db_rc db_cashout_list(struct db *, const char *account, int64_t cursor, int64_t limit,
    struct cashout **v, size_t *n, int64_t *next);

#endif
