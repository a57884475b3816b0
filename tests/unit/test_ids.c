/* Unit tests: core/ids (ids, API keys, tokens, codes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "core/errors.h"
#include "core/ids.h"

static const char b62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* Test rng: a scripted byte sequence (cycled), or xorshift when empty. */
struct trng {
	const unsigned char	*script;
	size_t			 len, pos;
	uint64_t		 x;
};

static void
trng_fill(void *ctx, void *buf, size_t n)
{
	struct trng	*t = ctx;
	unsigned char	*p = buf;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (t->len > 0) {
			p[i] = t->script[t->pos++ % t->len];
			continue;
		}
		t->x ^= t->x << 13;
		t->x ^= t->x >> 7;
		t->x ^= t->x << 17;
		p[i] = (unsigned char)(t->x >> 32);
	}
}

static void
test_prefixes(void **state)
{
	static const struct {
		enum ids_kind	 kind;
		const char	*prefix;
	} rows[] = {
		{ IDS_AGENT, "agt_" }, { IDS_STUDY, "std_" },
		{ IDS_PARTICIPATION, "prt_" }, { IDS_TRANSACTION, "txn_" },
		{ IDS_ACCOUNT, "acc_" }, { IDS_EVENT, "evt_" }, { IDS_WEBHOOK, "whk_" },
		{ IDS_CASHOUT, "cot_" },
		{ IDS__MAX, NULL },
		{ (enum ids_kind)-1, NULL },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].prefix == NULL)
			assert_null(ids_prefix(rows[i].kind));
		else
			assert_string_equal(ids_prefix(rows[i].kind), rows[i].prefix);
	}
}

static void
test_ids_new_valid(void **state)
{
	struct trng	 t = { NULL, 0, 0, 0x9e3779b97f4a7c15ULL };
	struct arps_rng	 rng = { trng_fill, &t };
	struct arps_rng	 norng = { NULL, NULL };
	char		 id[IDS_BUFSZ];
	enum ids_kind	 k, got;
	int		 n;

	(void)state;
	for (k = 0; k < IDS__MAX; k++)
		for (n = 0; n < 200; n++) {
			assert_int_equal(ids_new(k, &rng, id), ARPS_OK);
			assert_int_equal(strlen(id), IDS_LEN);
			assert_true(ids_valid(k, id));
			assert_true(ids_kind_of(id, &got));
			assert_int_equal(got, k);
			assert_false(ids_valid((k + 1) % IDS__MAX, id));
		}
	assert_int_equal(ids_new(IDS__MAX, &rng, id), ARPS_E_INTERNAL);
	assert_int_equal(ids_new(IDS_AGENT, NULL, id), ARPS_E_INTERNAL);
	assert_int_equal(ids_new(IDS_AGENT, &norng, id), ARPS_E_INTERNAL);
	assert_int_equal(ids_new(IDS_AGENT, &rng, NULL), ARPS_E_INTERNAL);
	assert_false(ids_kind_of("nope", &got));
	assert_true(ids_kind_of("std_0123456789abcdef", NULL));
}

/* Ordered ids: t as 9 base62 digits, then random characters; a larger t
 * sorts after whatever the random parts (event ids in commit order). */
static void
test_ids_new_ordered(void **state)
{
	static const uint64_t ts[] = { 0, 1, 61, 62, 3843, 3844, 1795782712000000ULL,
	    1795782712000001ULL, 1795782712999999ULL, 13537086546263551ULL };
	struct trng	 t = { NULL, 0, 0, 0x2545f4914f6cdd1dULL };
	struct arps_rng	 rng = { trng_fill, &t };
	char		 id[IDS_BUFSZ], prev[IDS_BUFSZ] = "";
	uint64_t	 v, x;
	size_t		 i;
	int		 n;

	(void)state;
	assert_int_equal(ids_new_ordered(IDS_EVENT, &rng, 0, id), ARPS_OK);
	assert_int_equal(strncmp(id, "evt_000000000", 13), 0);
	assert_int_equal(ids_new_ordered(IDS_EVENT, &rng, 62, id), ARPS_OK);
	assert_int_equal(strncmp(id, "evt_000000010", 13), 0);
	assert_int_equal(ids_new_ordered(IDS_EVENT, &rng, 13537086546263551ULL, id), ARPS_OK);
	assert_int_equal(strncmp(id, "evt_zzzzzzzzz", 13), 0);
	assert_int_equal(ids_new_ordered(IDS_EVENT, &rng, 13537086546263552ULL, id),
	    ARPS_E_INTERNAL);
	assert_int_equal(ids_new_ordered(IDS__MAX, &rng, 1, id), ARPS_E_INTERNAL);
	assert_int_equal(ids_new_ordered(IDS_EVENT, NULL, 1, id), ARPS_E_INTERNAL);
	for (i = 0; i < sizeof ts / sizeof ts[0]; i++)
		for (n = 0; n < 50; n++) {
			assert_int_equal(ids_new_ordered(IDS_EVENT, &rng, ts[i], id), ARPS_OK);
			assert_true(ids_valid(IDS_EVENT, id));
			assert_int_equal(strlen(id), IDS_LEN);
			/* the digits read back as t */
			for (v = 0, x = 0; x < IDS_ORDERED_DIGITS; x++) {
				const char *c = id + IDS_PREFIX_LEN + x;

				v = v * 62 + (uint64_t)(*c <= '9' ? *c - '0' : *c <= 'Z' ?
				    *c - 'A' + 10 : *c - 'a' + 36);
			}
			assert_true(v == ts[i]);
			if (n == 0 && prev[0] != '\0')
				assert_true(strcmp(prev, id) < 0);
			if (n == 49)
				memcpy(prev, id, sizeof prev);
		}
	/* consecutive counters from one random source: strictly increasing */
	for (v = 1795782712000000ULL, prev[0] = '\0'; v < 1795782712000000ULL + 5000; v++) {
		assert_int_equal(ids_new_ordered(IDS_EVENT, &rng, v, id), ARPS_OK);
		if (prev[0] != '\0')
			assert_true(strcmp(prev, id) < 0);
		memcpy(prev, id, sizeof prev);
	}
}

/* Bytes >= 248 are rejected; the rest map to b62[b % 62]. */
static void
test_ids_unbiased(void **state)
{
	static const unsigned char script[] = {
		248, 255, 0, 61, 62, 123, 124, 247, 250, 185, 186, 1,
		2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
	};
	struct trng	 t = { script, sizeof(script), 0, 0 };
	struct arps_rng	 rng = { trng_fill, &t };
	char		 id[IDS_BUFSZ];
	unsigned	 counts[62] = { 0 };
	struct trng	 t2 = { NULL, 0, 0, 12345 };
	struct arps_rng	 rng2 = { trng_fill, &t2 };
	int		 i, j;

	(void)state;
	assert_int_equal(ids_new(IDS_STUDY, &rng, id), ARPS_OK);
	assert_string_equal(id, "std_0z0z0zz012345678");
	/* Uniformity: every char appears, none more than 2x the mean. */
	for (i = 0; i < 4000; i++) {
		assert_int_equal(ids_new(IDS_AGENT, &rng2, id), ARPS_OK);
		for (j = 4; j < IDS_LEN; j++)
			counts[strchr(b62, id[j]) - b62]++;
	}
	for (i = 0; i < 62; i++) {
		assert_true(counts[i] > 4000 * 16 / 62 / 2);
		assert_true(counts[i] < 4000 * 16 / 62 * 2);
	}
}

static void
test_ids_valid_rows(void **state)
{
	static const struct {
		enum ids_kind	 kind;
		const char	*s;
		bool		 ok;
	} rows[] = {
		{ IDS_AGENT, "agt_0123456789abcdef", true },
		{ IDS_AGENT, "agt_ZZZZZZZZZZZZZZZZ", true },
		{ IDS_STUDY, "std_AbCdEfGhIjKlMnOp", true },
		{ IDS_PARTICIPATION, "prt_0000000000000000", true },
		{ IDS_TRANSACTION, "txn_zzzzzzzzzzzzzzzz", true },
		{ IDS_ACCOUNT, "acc_1234567890ABCDEF", true },
		{ IDS_AGENT, "std_0123456789abcdef", false },
		{ IDS_AGENT, "agt_0123456789abcde", false },
		{ IDS_AGENT, "agt_0123456789abcdef0", false },
		{ IDS_AGENT, "agt_0123456789abcd-f", false },
		{ IDS_AGENT, "agt_0123456789abcd_f", false },
		{ IDS_AGENT, "AGT_0123456789abcdef", false },
		{ IDS_AGENT, "agt0123456789abcdefg", false },
		{ IDS_AGENT, "", false },
		{ IDS_AGENT, "agt_", false },
		{ IDS_AGENT, NULL, false },
		{ IDS__MAX, "agt_0123456789abcdef", false },
		{ IDS_AGENT, "agt_0123456789abcd\xc3\xa9", false },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(ids_valid(rows[i].kind, rows[i].s), rows[i].ok);
}

/* Every single-character change of a 48-char key is rejected. */
static void
test_apikey_every_change(void **state)
{
	static const char extra[] = "_-+/=. !\x7f\x80";
	struct trng	 t = { NULL, 0, 0, 0xdeadbeefcafef00dULL };
	struct arps_rng	 rng = { trng_fill, &t };
	char		 key[APIKEY_BUFSZ], mod[APIKEY_BUFSZ];
	size_t		 pos, c, tried = 0;
	int		 n;

	(void)state;
	for (n = 0; n < 100; n++) {
		assert_int_equal(apikey_new(&rng, key), ARPS_OK);
		assert_int_equal(strlen(key), APIKEY_LEN);
		assert_int_equal(strncmp(key, "arps_live_", 10), 0);
		assert_true(apikey_check(key));
		for (pos = 0; pos < APIKEY_LEN; pos++) {
			for (c = 0; c < sizeof(b62) - 1 + sizeof(extra) - 1; c++) {
				char ch = c < sizeof(b62) - 1 ? b62[c] :
				    extra[c - (sizeof(b62) - 1)];

				if (ch == key[pos])
					continue;
				memcpy(mod, key, sizeof(key));
				mod[pos] = ch;
				assert_false(apikey_check(mod));
				tried++;
			}
			/* adjacent transposition */
			if (pos + 1 < APIKEY_LEN && key[pos] != key[pos + 1]) {
				memcpy(mod, key, sizeof(key));
				mod[pos] = key[pos + 1];
				mod[pos + 1] = key[pos];
				assert_false(apikey_check(mod));
			}
		}
		/* truncation and extension */
		memcpy(mod, key, sizeof(key));
		mod[APIKEY_LEN - 1] = '\0';
		assert_false(apikey_check(mod));
	}
	assert_true(tried > 100 * 48 * 61);
}

static void
test_apikey_rows(void **state)
{
	char	 key[64], sum[APIKEY_SUM_LEN];

	(void)state;
	memcpy(key, "arps_live_", 10);
	memset(key + 10, 'A', 32);
	apikey_checksum(key, sum);
	memcpy(key + 42, sum, 6);
	key[48] = '\0';
	assert_true(apikey_check(key));
	key[48] = 'x';
	key[49] = '\0';
	assert_false(apikey_check(key));		/* too long */
	assert_false(apikey_check(NULL));
	assert_false(apikey_check(""));
	assert_false(apikey_check("arps_live_"));
	assert_false(apikey_check("arps_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000"));
	assert_int_equal(apikey_new(NULL, key), ARPS_E_INTERNAL);
	assert_int_equal(apikey_new(NULL, NULL), ARPS_E_INTERNAL);
}

static void
test_token(void **state)
{
	static const unsigned char zero[] = { 0 };
	static const unsigned char ff[] = { 0xff };
	static const struct {
		const char	*s;
		bool		 ok;
	} rows[] = {
		{ "act_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", true },
		{ "act___________________________________________8", true },
		{ "act_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB", false },
		{ "act_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false },
		{ "act_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false },
		{ "act_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", false },
		{ "act_AAAAAAAAAAAAAAAA+AAAAAAAAAAAAAAAAAAAAAAAAAA", false },
		{ "tok_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false },
		{ "", false },
		{ NULL, false },
	};
	struct trng	 tz = { zero, 1, 0, 0 }, tf = { ff, 1, 0, 0 };
	struct trng	 t = { NULL, 0, 0, 77 };
	struct arps_rng	 rz = { trng_fill, &tz }, rf = { trng_fill, &tf };
	struct arps_rng	 rng = { trng_fill, &t };
	char		 tok[TOKEN_BUFSZ];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(token_valid(rows[i].s), rows[i].ok);
	assert_int_equal(token_new(&rz, tok), ARPS_OK);
	assert_string_equal(tok, rows[0].s);
	assert_int_equal(token_new(&rf, tok), ARPS_OK);
	assert_string_equal(tok, rows[1].s);
	for (i = 0; i < 500; i++) {
		assert_int_equal(token_new(&rng, tok), ARPS_OK);
		assert_int_equal(strlen(tok), TOKEN_LEN);
		assert_true(token_valid(tok));
	}
	assert_int_equal(token_new(NULL, tok), ARPS_E_INTERNAL);
	assert_int_equal(token_new(&rng, NULL), ARPS_E_INTERNAL);
}

static void
test_claim_code(void **state)
{
	static const struct {
		const char	*s;
		bool		 ok;
		const char	*norm;	/* NULL: normalize fails */
	} rows[] = {
		{ "ABCDEFGH", true, "ABCDEFGH" },
		{ "23456789", true, "23456789" },
		{ "ZZZZZZZZ", true, "ZZZZZZZZ" },
		{ "abcdefgh", false, "ABCDEFGH" },
		{ "AbCd2345", false, "ABCD2345" },
		{ "ABCDEFG0", false, NULL },
		{ "ABCDEFGO", false, NULL },
		{ "ABCDEFG1", false, NULL },
		{ "ABCDEFGI", false, NULL },
		{ "abcdefgi", false, NULL },
		{ "ABCDEFG", false, NULL },
		{ "ABCDEFGHJ", false, NULL },
		{ "ABCD-FGH", false, NULL },
		{ "", false, NULL },
		{ NULL, false, NULL },
	};
	static const unsigned char script[] = { 0, 31, 32, 255, 8, 9, 24, 63 };
	struct trng	 t = { script, sizeof(script), 0, 0 };
	struct arps_rng	 rng = { trng_fill, &t };
	char		 out[CLAIM_BUFSZ];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(claim_code_valid(rows[i].s), rows[i].ok);
		if (rows[i].norm != NULL) {
			assert_true(claim_code_normalize(rows[i].s, out));
			assert_string_equal(out, rows[i].norm);
		} else
			assert_false(claim_code_normalize(rows[i].s, out));
	}
	assert_false(claim_code_normalize("ABCDEFGH", NULL));
	assert_int_equal(claim_code_new(&rng, out), ARPS_OK);
	/* 32-char alphabet: byte & 31 == byte % 32, no rejection. */
	assert_string_equal(out, "A9A9JK29");
	assert_true(claim_code_valid(out));
	assert_int_equal(claim_code_new(NULL, out), ARPS_E_INTERNAL);
	assert_int_equal(claim_code_new(&rng, NULL), ARPS_E_INTERNAL);
}

static void
test_login_code(void **state)
{
	static const unsigned char script[] = {
		0xff, 0xff, 0xff, 0xff,		/* rejected */
		0xff, 0xf1, 0x3d, 0x80,		/* 4294000000: rejected */
		0xff, 0xf1, 0x3d, 0x7f,		/* 4293999999 -> 999999 */
		0x00, 0x00, 0x00, 0x2a,		/* 42 -> 000042 */
	};
	static const struct {
		const char	*s;
		bool		 ok;
	} rows[] = {
		{ "000000", true }, { "123456", true }, { "999999", true },
		{ "12345", false }, { "1234567", false }, { "12345a", false },
		{ " 12345", false }, { "", false }, { NULL, false },
	};
	struct trng	 t = { script, sizeof(script), 0, 0 };
	struct arps_rng	 rng = { trng_fill, &t };
	char		 out[LOGIN_CODE_BUFSZ];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(login_code_valid(rows[i].s), rows[i].ok);
	assert_int_equal(login_code_new(&rng, out), ARPS_OK);
	assert_string_equal(out, "999999");
	assert_int_equal(login_code_new(&rng, out), ARPS_OK);
	assert_string_equal(out, "000042");
	assert_int_equal(login_code_new(NULL, out), ARPS_E_INTERNAL);
	assert_int_equal(login_code_new(&rng, NULL), ARPS_E_INTERNAL);
}

static void
test_anon(void **state)
{
	static const uint8_t raw[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	static const struct {
		const char	*s;
		bool		 ok;
	} rows[] = {
		{ "anon_0123456789abcdef", true },
		{ "anon_0123456789ABCDEF", false },
		{ "anon_0123456789abcde", false },
		{ "anon_0123456789abcdef0", false },
		{ "anon_0123456789abcdeg", false },
		{ "anon-0123456789abcdef", false },
		{ NULL, false },
	};
	char	 out[ANON_BUFSZ];
	size_t	 i;

	(void)state;
	anon_id_format(raw, out);
	assert_string_equal(out, "anon_0123456789abcdef");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(anon_id_valid(rows[i].s), rows[i].ok);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_ids_new_valid),
		cmocka_unit_test(test_ids_new_ordered),
		cmocka_unit_test(test_ids_unbiased),
		cmocka_unit_test(test_ids_valid_rows),
		cmocka_unit_test(test_apikey_every_change),
		cmocka_unit_test(test_apikey_rows),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_claim_code),
		cmocka_unit_test(test_login_code),
		cmocka_unit_test(test_anon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
