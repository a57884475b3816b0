/*
 * Leases (design.md §13.4): a row of `leases` per name that one process
 * holds until expires_at (the database's clock), so it holds across the
 * nodes of a Galera cluster where a named lock (GET_LOCK) is node-local.
 * Each take raises the row's token (a fencing token): the holder proves,
 * by writing the row with its token inside each transaction it guards,
 * that nobody took the lease since; two nodes that wrote it at once are
 * told apart by certification (one commit fails, 1213).
 * Return convention: enum db_rc (db/db.h).
 */
#ifndef ARPS_DB_LEASE_H
#define ARPS_DB_LEASE_H

#include <stdint.h>

#include "db/db.h"

/* The lease names: the sweep's and the migrations'. */
#define LEASE_SWEEP	"sweep"
#define LEASE_MIGRATE	"migrate"

/* Take the lease `name` for ttl seconds when it is free or expired:
 * *token gets its new fencing token (> 0), or 0 when another holder's
 * lease is live (or another took it in the same instant). */
enum db_rc db_lease_take(struct db *db, const char *name, int ttl, int64_t *token);
/* In the caller's transaction: prolong the lease for ttl seconds if token
 * is still its token; *held 1 then, 0 when another has taken it since
 * (the caller rolls back and stops). */
enum db_rc db_lease_renew(struct db *db, const char *name, int64_t token, int ttl, int *held);
/* Give the lease up (expire it now) if token is still its token. */
enum db_rc db_lease_release(struct db *db, const char *name, int64_t token);

#endif
