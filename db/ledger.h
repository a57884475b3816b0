/* Writing money events: postings, transactions and wallet balances. */
#ifndef ARPS_DB_LEDGER_H
#define ARPS_DB_LEDGER_H

#include <stdint.h>

#include "core/ids.h"
#include "core/ledger.h"
#include "db/db.h"

/*
 * Write one money event inside the caller's transaction: every posting
 * (append-only), every user-visible transaction, and the wallet balances,
 * updated once per wallet in owner-id order (the fixed lock order).
 * party[] maps the symbolic wallet parties to owner ids (NULL when
 * unused).  study_id and desc may be NULL.  A balance that would go
 * negative is refused by the database: DB_CHECK.
 */
enum db_rc db_ledger_post(struct db *db, const struct ledger_entry *e,
    const char *const party[LEDGER_P__MAX], const char *study_id, enum ledger_event ev,
    const char *desc, int64_t now);

/* db_ledger_post that also gives the entry's id (ent_...) in entry_out
 * ("" when the entry was empty and nothing was written). */
enum db_rc db_ledger_post_entry(struct db *db, const struct ledger_entry *e,
    const char *const party[LEDGER_P__MAX], const char *study_id, enum ledger_event ev,
    const char *desc, int64_t now, char entry_out[IDS_BUFSZ]);

/* Create the wallet of an owner (agt_ or acc_) if it does not exist. */
enum db_rc db_wallet_create(struct db *db, const char *owner);

/*
 * Lock the wallet of an owner, creating it if absent, and read its
 * balances: SELECT ... FOR UPDATE first, so two transactions of one owner
 * queue on the row's exclusive lock (design.md §13.2).  Never INSERT
 * IGNORE first: on an existing row that takes a shared lock, and two
 * transactions holding it that both then ask for the exclusive one
 * deadlock.
 */
enum db_rc db_wallet_lock_create(struct db *db, const char *owner, int64_t *available,
    int64_t *frozen);

/* Lock a wallet row (SELECT ... FOR UPDATE) and read its balances. */
enum db_rc db_wallet_lock(struct db *db, const char *owner, int64_t *available, int64_t *frozen);

/* Read a wallet's balances (no lock); DB_NOTFOUND when there is none. */
enum db_rc db_wallet_get(struct db *db, const char *owner, int64_t *available, int64_t *frozen);

#endif
