/*
 * Multi-row statements (design.md §1.3): one INSERT, SELECT ... IN or
 * UPDATE ... JOIN for a set of rows, so a transaction that writes n rows
 * sends one statement, not n.  The text for each row count is built once
 * and kept for the process (db/db.c caches prepared statements by the
 * text's address): counts 1..DB_ROWS_EXACT as they are, larger sets in
 * chunks of powers of two up to DB_ROWS_CHUNK.
 */
#ifndef ARPS_DB_ROWS_H
#define ARPS_DB_ROWS_H

#include "db/db.h"

#define DB_ROWS_EXACT	8	/* row counts built exactly */
#define DB_ROWS_CHUNK	256	/* the largest chunk, a power of two */
#define DB_ROWS_SIZES	(DB_ROWS_EXACT + 5)	/* 1..8, 16, 32, 64, 128, 256 */

/* head, `row` repeated n times joined by `sep`, tail; nhead parameters of
 * the head, then k for each row.  built: the texts, filled on first use. */
struct db_shape {
	const char	*head, *row, *sep, *tail;
	size_t		 nhead, k;
	char		*built[DB_ROWS_SIZES];
};

/*
 * Run s over n rows of k parameters each (rows[i * k ...]) after the
 * head's parameters, the rows' order kept.  each(arg, res) gets every
 * chunk's result when the statement gives rows; *affected (may be NULL)
 * the sum of affected rows.  n == 0 runs nothing.
 */
enum db_rc db_rows_exec(struct db *, struct db_shape *s, const struct dbp *head,
    const struct dbp *rows, size_t n, enum db_rc (*each)(void *, const struct dbres *),
    void *arg, uint64_t *affected);

#endif
