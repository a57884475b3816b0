/* The operator's reads (arps-admin, txn/admin.c). */
#ifndef ARPS_DB_ADMIN_H
#define ARPS_DB_ADMIN_H

#include <stddef.h>

#include "db/db.h"

/*
 * Check every invariant of the ledger (design.md §4), one query each, in a
 * fixed order: each(arg, what, subject, detail) is called for every
 * violation found (what: the invariant; subject: the row, such as an
 * owner, entry or study id; detail: the sums that disagree, NULL when
 * none).  *ninvariants gets how many invariants there are.  DB_OK when
 * every query ran (violations or not), else the first query's failure
 * (the violations of the queries before it already reported).
 */
enum db_rc db_ledger_verify(struct db *db, void (*each)(void *arg, const char *what,
    const char *subject, const char *detail), void *arg, size_t *ninvariants);

#endif
