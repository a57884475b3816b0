/* Multi-row statements (db/rows.h). */
#include <stdlib.h>
#include <string.h>

#include "db/rows.h"

_Static_assert(DB_ROWS_CHUNK == 16 << (DB_ROWS_SIZES - DB_ROWS_EXACT - 1),
    "DB_ROWS_SIZES covers 16 .. DB_ROWS_CHUNK");

/* The rows of the next statement out of `left`: all of them up to
 * DB_ROWS_EXACT, else the largest power of two <= left (<= the chunk). */
static size_t
chunk_rows(size_t left)
{
	size_t m;

	if (left <= DB_ROWS_EXACT)
		return left;
	for (m = DB_ROWS_CHUNK; m > left; m >>= 1)
		;
	return m;
}

static size_t
size_slot(size_t n)
{
	size_t b = DB_ROWS_EXACT;

	if (n <= DB_ROWS_EXACT)
		return n - 1;
	while (((size_t)16 << (b - DB_ROWS_EXACT)) < n)
		b++;
	return b;
}

/* The text of s for n rows (a count chunk_rows gives). */
static const char *
shape_sql(struct db_shape *s, size_t n)
{
	size_t slot = size_slot(n), len, i;
	char *p, *at;

	if (s->built[slot] != NULL)
		return s->built[slot];
	len = strlen(s->head) + strlen(s->tail) + n * (strlen(s->row) + strlen(s->sep)) + 1;
	if ((p = malloc(len)) == NULL)
		return NULL;
	at = stpcpy(p, s->head);
	for (i = 0; i < n; i++) {
		if (i > 0)
			at = stpcpy(at, s->sep);
		at = stpcpy(at, s->row);
	}
	stpcpy(at, s->tail);
	s->built[slot] = p;
	return p;
}

enum db_rc
db_rows_exec(struct db *db, struct db_shape *s, const struct dbp *head, const struct dbp *rows,
    size_t n, enum db_rc (*each)(void *, const struct dbres *), void *arg, uint64_t *affected)
{
	struct dbp *p;
	size_t at = 0, m;
	enum db_rc rc = DB_OK;

	if (affected != NULL)
		*affected = 0;
	if (n == 0)
		return DB_OK;
	m = chunk_rows(n);
	if ((p = malloc((s->nhead + m * s->k) * sizeof *p)) == NULL)
		return DB_ERR;
	if (s->nhead > 0)
		memcpy(p, head, s->nhead * sizeof *p);
	while (at < n && rc == DB_OK) {
		struct dbres *res = NULL;
		uint64_t aff = 0;
		const char *sql;

		m = chunk_rows(n - at);
		if ((sql = shape_sql(s, m)) == NULL) {
			rc = DB_ERR;
			break;
		}
		memcpy(p + s->nhead, rows + at * s->k, m * s->k * sizeof *p);
		rc = db_exec(db, sql, p, s->nhead + m * s->k, each != NULL ? &res : NULL, &aff);
		if (rc == DB_OK && each != NULL)
			rc = each(arg, res);
		dbres_free(res);
		if (affected != NULL)
			*affected += aff;
		at += m;
	}
	free(p);
	return rc;
}
