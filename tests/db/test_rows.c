/* db/rows.c: a multi-row statement inserts every row once, in order, with
 * one statement per chunk (1..8 rows exactly, then powers of two up to
 * 256), the head's parameters bound in every chunk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "db/db.h"
#include "db/rows.h"
#include "lib/config.h"
#include "tests/db/dbtest.h"

static struct config cfg;
static struct db *db;

static struct db_shape sh_ins = { "INSERT INTO rows_t (v, s) VALUES ", "(?, ?)", ", ", "", 0, 2,
    { 0 } };
static struct db_shape sh_sel = { "SELECT v FROM rows_t WHERE v >= ? AND v IN (", "?", ", ",
    ") ORDER BY v", 1, 1, { 0 } };

static int
setup(void **state)
{
	(void)state;
	/* A table of its own (CREATE TEMPORARY TABLES): as arps_migrate; the
	 * pool's user has row grants only. */
	if (dbtest_setup(&cfg, NULL) != 0 || dbtest_migrate_config(&cfg) != 0)
		return -1;
	if ((db = db_open(&cfg)) == NULL || db_ensure(db) != DB_OK)
		return -1;
	return DB_Q0(db, "CREATE TEMPORARY TABLE rows_t (seq INT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
	    " v BIGINT NOT NULL, s VARCHAR(32) NOT NULL)", NULL, NULL) == DB_OK ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(db);
	return 0;
}

/* The session's prepared executions so far (this read not counted). */
static long long
executions(void)
{
	struct dbres *res = NULL;
	long long n;

	assert_int_equal(DB_Q0(db, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS"
	    " WHERE VARIABLE_NAME = 'COM_STMT_EXECUTE'", &res, NULL), DB_OK);
	assert_int_equal(res->nrows, 1);
	n = dbres_i64(res, 0, 0);
	dbres_free(res);
	return n - 1;
}

/* Insert n rows (v = 0..n-1) through sh_ins; the statements it took. */
static long long
insert_rows(size_t n)
{
	struct dbp *p = calloc(n * 2 + 1, sizeof *p);
	char (*s)[32] = calloc(n + 1, sizeof *s);
	uint64_t aff = 99;
	long long e0, e1;
	size_t i;

	assert_non_null(p);
	assert_non_null(s);
	assert_int_equal(DB_Q0(db, "DELETE FROM rows_t", NULL, NULL), DB_OK);
	for (i = 0; i < n; i++) {
		snprintf(s[i], sizeof s[i], "row-%zu", i);
		p[i * 2] = P_I64(i);
		p[i * 2 + 1] = P_STR(s[i]);
	}
	e0 = executions();
	assert_int_equal(db_rows_exec(db, &sh_ins, NULL, p, n, NULL, NULL, &aff), DB_OK);
	e1 = executions();
	assert_int_equal(aff, n);
	free(p);
	free(s);
	return e1 - e0 - 1;	/* less the first executions() read */
}

/* Every row there once, in the order given. */
static void
check_rows(size_t n)
{
	struct dbres *res = NULL;
	char want[32];
	size_t i;

	assert_int_equal(DB_Q0(db, "SELECT v, s FROM rows_t ORDER BY seq", &res, NULL), DB_OK);
	assert_int_equal(res->nrows, n);
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof want, "row-%zu", i);
		assert_int_equal(dbres_i64(res, i, 0), (int64_t)i);
		assert_string_equal(dbres_str(res, i, 1), want);
	}
	dbres_free(res);
}

static void
inserts_in_chunks(void **state)
{
	static const struct { size_t n; long long stmts; } cases[] = {
		{ 0, 0 }, { 1, 1 }, { 3, 1 }, { 8, 1 }, { 9, 2 }, { 16, 1 }, { 17, 2 },
		{ 255, 6 },	/* 128 + 64 + 32 + 16 + 8 + 7 */
		{ 256, 1 },
		{ 300, 4 },	/* 256 + 32 + 8 + 4 */
		{ 700, 7 },	/* 256 + 256 + 128 + 32 + 16 + 8 + 4 */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(insert_rows(cases[i].n), cases[i].stmts);
		check_rows(cases[i].n);
	}
}

struct seen {
	int64_t v[64];
	size_t n, calls;
};

static enum db_rc
each(void *arg, const struct dbres *res)
{
	struct seen *s = arg;
	size_t i;

	s->calls++;
	for (i = 0; i < res->nrows && s->n < 64; i++)
		s->v[s->n++] = dbres_i64(res, i, 0);
	return DB_OK;
}

/* A head parameter goes with every chunk; each chunk's rows reach each(). */
static void
select_with_head(void **state)
{
	struct dbp head[1], p[20];
	struct seen s = { .n = 0 };
	size_t i;

	(void)state;
	insert_rows(40);
	/* 38, 36, ..., 0: the second chunk (the last 4) holds 6, 4, 2, 0,
	 * which only the head's bound (>= 10) can leave out */
	for (i = 0; i < 20; i++)
		p[i] = P_I64(38 - 2 * (int64_t)i);
	head[0] = P_I64(10);
	assert_int_equal(db_rows_exec(db, &sh_sel, head, p, 20, each, &s, NULL), DB_OK);
	assert_int_equal(s.calls, 2);	/* 16 + 4 */
	assert_int_equal(s.n, 15);	/* 10, 12, ..., 38, each chunk in order */
	for (i = 0; i < s.n; i++)
		assert_int_equal(s.v[i], 10 + 2 * (int64_t)i);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inserts_in_chunks),
		cmocka_unit_test(select_with_head),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
