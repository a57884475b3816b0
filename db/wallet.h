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

#endif
