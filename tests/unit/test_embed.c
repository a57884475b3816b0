/*
 * USE Lite encoder vs the package's own JavaScript runtime.
 *
 * Reads the model from $ARPS_MODEL (default build/model/use-lite.bin, made by
 * `make model`) and tests/unit/embed_reference.txt (tools/embed-reference.mjs)
 * relative to the repo root, where tests run.  Every text must give the same
 * token ids as the JS tokenizer and a vector with cosine >= 0.999 to the JS
 * vector.  lib/model.c is compiled in here because the unit-test rule links
 * core objects only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "core/embed.h"
#include "core/tokenize.h"
#include "lib/model.c"

#define REF_PATH "tests/unit/embed_reference.txt"
#define MIN_COS 0.999f

struct ref {
	char *text;
	size_t len;
	int32_t *ids;
	size_t nids;
	int has_vec, has_clip;
	float vec[EMBED_DIM], clip[EMBED_DIM];
};

static struct model g_model;
static struct ref *g_refs;
static size_t g_nrefs;
static void *g_scratch;

static const char *model_path(void)
{
	const char *p = getenv("ARPS_MODEL");
	return p && *p ? p : MODEL_DEFAULT_PATH;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int parse_vec(const char *line, float *v)
{
	const char *p = line + 2;
	char *end;
	if (*p == '-' && (p[1] == 0 || p[1] == '\n'))
		return 0;
	for (int i = 0; i < EMBED_DIM; i++) {
		v[i] = strtof(p, &end);
		if (end == p)
			return -1;
		p = end;
	}
	return 1;
}

static int load_refs(void)
{
	FILE *f = fopen(REF_PATH, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t r;
	size_t n = 0, cur = 0;
	int stage = 0;

	if (!f)
		return -1;
	while ((r = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#')
			continue;
		if (stage == 0) {
			n = strtoul(line, NULL, 10);
			g_refs = calloc(n, sizeof *g_refs);
			if (!g_refs)
				break;
			stage = 1;
			continue;
		}
		if (cur >= n)
			break;
		struct ref *e = &g_refs[cur];
		if (line[0] == 'T') {
			size_t hl = strcspn(line + 2, "\n");
			e->len = hl / 2;
			e->text = malloc(e->len + 1);
			for (size_t i = 0; i < e->len; i++)
				e->text[i] = (char)(hexval(line[2 + 2 * i]) * 16 +
						    hexval(line[3 + 2 * i]));
			e->text[e->len] = 0;
		} else if (line[0] == 'I') {
			char *p = line + 2, *end;
			e->nids = strtoul(p, &end, 10);
			p = end;
			e->ids = calloc(e->nids + 1, sizeof(int32_t));
			for (size_t i = 0; i < e->nids; i++) {
				e->ids[i] = (int32_t)strtol(p, &end, 10);
				p = end;
			}
		} else if (line[0] == 'V') {
			e->has_vec = parse_vec(line, e->vec);
		} else if (line[0] == 'C') {
			e->has_clip = parse_vec(line, e->clip);
			cur++;
		}
	}
	free(line);
	fclose(f);
	g_nrefs = cur;
	return cur == n && n > 0 ? 0 : -1;
}

static int setup(void **state)
{
	(void)state;
	if (model_map(model_path(), &g_model) != 0) {
		fprintf(stderr, "cannot map model %s (run `make model`)\n", model_path());
		return -1;
	}
	if (load_refs() != 0) {
		fprintf(stderr, "cannot read %s\n", REF_PATH);
		return -1;
	}
	g_scratch = malloc(embed_scratch_size(&g_model.enc));
	return g_scratch ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nrefs; i++) {
		free(g_refs[i].text);
		free(g_refs[i].ids);
	}
	free(g_refs);
	free(g_scratch);
	model_unmap(&g_model);
	return 0;
}

static void test_reference_count(void **state)
{
	(void)state;
	assert_true(g_nrefs >= 60);
}

static void test_token_ids(void **state)
{
	(void)state;
	int32_t ids[8192];
	size_t bad = 0;
	for (size_t i = 0; i < g_nrefs; i++) {
		struct ref *e = &g_refs[i];
		size_t n = 0;
		assert_int_equal(tokenize(&g_model.enc, e->text, e->len, ids, 8192, &n), 0);
		int same = n == e->nids && memcmp(ids, e->ids, n * sizeof *ids) == 0;
		if (!same) {
			bad++;
			fprintf(stderr, "ids differ for text %zu \"%.60s\": C %zu, JS %zu tokens\n",
				i, e->text, n, e->nids);
			for (size_t k = 0; k < n && k < e->nids; k++)
				if (ids[k] != e->ids[k]) {
					fprintf(stderr, "  first diff at %zu: C %d JS %d\n", k,
						ids[k], e->ids[k]);
					break;
				}
		}
	}
	assert_int_equal(bad, 0);
}

static void test_vectors(void **state)
{
	(void)state;
	float v[EMBED_DIM];
	float worst = 2;
	size_t bad = 0, checked = 0;
	for (size_t i = 0; i < g_nrefs; i++) {
		struct ref *e = &g_refs[i];
		int rc = embed_text(&g_model.enc, e->text, e->len, g_scratch, v);
		if (!e->has_vec) {
			assert_int_equal(rc, EMBED_EEMPTY);
			continue;
		}
		assert_int_equal(rc, EMBED_OK);
		float c = embed_cosine(v, e->vec);
		float nn = embed_cosine(v, v);
		assert_true(fabsf(nn - 1.0f) < 1e-4f);
		checked++;
		if (c < worst)
			worst = c;
		if (c < MIN_COS) {
			bad++;
			fprintf(stderr, "cosine %.6f for text %zu \"%.60s\"\n", c, i, e->text);
		}
		if (e->has_clip) {
			/* the graph's own 128-token clip */
			assert_int_equal(embed_tokens(&g_model.enc, e->ids, e->nids, g_scratch, v),
					 EMBED_OK);
			c = embed_cosine(v, e->clip);
			if (c < worst)
				worst = c;
			if (c < MIN_COS) {
				bad++;
				fprintf(stderr, "clip cosine %.6f for text %zu\n", c, i);
			}
		}
	}
	fprintf(stderr, "embed: %zu vectors, worst cosine to JS %.7f\n", checked, worst);
	assert_int_equal(bad, 0);
}

/* Every matmul kernel this CPU can run (generic, avx2, avx512, avx512-bf16
 * when the model has the bf16 weights) meets the same bound, for embed_text
 * and for the graph's own 128-token clip. */
static void test_kernels(void **state)
{
	(void)state;
	static const char *const names[] = { "generic", "avx2", "avx512", "avx512-bf16" };
	struct embed_model m = g_model.enc;
	float v[EMBED_DIM];
	size_t bad = 0;
	assert_true(g_model.enc.kernel >= 0 && g_model.enc.kernel <= EMBED_KERNEL_BF16);
	for (int k = 0; k <= g_model.enc.kernel; k++) {
		float worst = 2;
		m.kernel = k;
		for (size_t i = 0; i < g_nrefs; i++) {
			struct ref *e = &g_refs[i];
			if (!e->has_vec)
				continue;
			assert_int_equal(embed_text(&m, e->text, e->len, g_scratch, v), EMBED_OK);
			float c = embed_cosine(v, e->vec);
			if (c < worst)
				worst = c;
			if (e->has_clip) {
				assert_int_equal(embed_tokens(&m, e->ids, e->nids, g_scratch, v),
						 EMBED_OK);
				float cc = embed_cosine(v, e->clip);
				if (cc < c)
					c = cc;
				if (cc < worst)
					worst = cc;
			}
			if (c < MIN_COS) {
				bad++;
				fprintf(stderr, "kernel %s: cosine %.6f for text %zu\n", names[k], c, i);
			}
		}
		fprintf(stderr, "embed: kernel %d (%s), worst cosine to JS %.7f\n", k, names[k],
			worst);
	}
	assert_int_equal(bad, 0);
}

static void test_tokenize_truncation(void **state)
{
	(void)state;
	int32_t ids[4];
	size_t n = 0;
	const char *t = "one two three four five six seven";
	assert_int_equal(tokenize(&g_model.enc, t, strlen(t), ids, 4, &n), 0);
	assert_true(n > 4);
	assert_int_equal(tokenize(&g_model.enc, "", 0, ids, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(tokenize(&g_model.enc, NULL, 3, ids, 4, &n), EMBED_EARG);
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	float v[EMBED_DIM];
	const char bad[] = "caf\xc3 \xff\xfe ok \xe2\x82";
	int32_t ids[64];
	size_t n = 0;
	assert_int_equal(tokenize(&g_model.enc, bad, sizeof bad - 1, ids, 64, &n), 0);
	assert_true(n > 0);
	assert_int_equal(embed_text(&g_model.enc, bad, sizeof bad - 1, g_scratch, v), EMBED_OK);
}

static void test_nfkc(void **state)
{
	(void)state;
	uint32_t cp[16];
	/* e + combining acute composes; fullwidth A and the fi ligature fold */
	assert_int_equal(tokenize_nfkc(&g_model.enc, "e\xcc\x81", 3, cp, 16), 1);
	assert_int_equal(cp[0], 0xE9);
	assert_int_equal(tokenize_nfkc(&g_model.enc, "\xef\xbc\xa1\xef\xac\x81", 6, cp, 16), 3);
	assert_int_equal(cp[0], 'A');
	assert_int_equal(cp[1], 'f');
	assert_int_equal(cp[2], 'i');
	/* Hangul jamo L V T compose to one syllable */
	assert_int_equal(tokenize_nfkc(&g_model.enc, "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", 9, cp, 16), 1);
	assert_int_equal(cp[0], 0xAC01);
}

static void test_bad_blob(void **state)
{
	(void)state;
	struct embed_model m;
	size_t len = g_model.len;
	unsigned char *copy = aligned_alloc(64, (len + 63) & ~(size_t)63);
	assert_non_null(copy);
	memcpy(copy, g_model.base, len);
	assert_int_equal(embed_init(&m, copy, len), EMBED_OK);
	assert_int_equal(embed_init(&m, copy, len - 1), EMBED_EFORMAT);
	copy[0] ^= 1;
	assert_int_equal(embed_init(&m, copy, len), EMBED_EFORMAT);
	copy[0] ^= 1;
	copy[64 + 16 * EMBED_SEC_TANH_W] ^= 4;   /* misaligned section offset */
	assert_int_equal(embed_init(&m, copy, len), EMBED_EFORMAT);
	copy[64 + 16 * EMBED_SEC_TANH_W] ^= 4;
	if (g_model.enc.res_wb) {
		/* the bf16 section is optional, but checked when present */
		unsigned char ent[16];
		unsigned char *slot = copy + 64 + 16 * EMBED_SEC_BF16;
		memcpy(ent, slot, 16);
		slot[8] ^= 2;   /* wrong size */
		assert_int_equal(embed_init(&m, copy, len), EMBED_EFORMAT);
		memset(slot, 0, 16);   /* absent: fp32 kernels only */
		assert_int_equal(embed_init(&m, copy, len), EMBED_OK);
		assert_null(m.res_wb);
		assert_null(m.layer[1].bf[EMBED_L_FF1_W]);
		assert_true(m.kernel < EMBED_KERNEL_BF16);
		memcpy(slot, ent, 16);
		assert_int_equal(embed_init(&m, copy, len), EMBED_OK);
		assert_int_equal(m.kernel, g_model.enc.kernel);
	}
	free(copy);
	struct model bad;
	assert_int_equal(model_map("/nonexistent/use-lite.bin", &bad), -1);
}

static void test_similarity_sanity(void **state)
{
	(void)state;
	float a[EMBED_DIM], b[EMBED_DIM], c[EMBED_DIM];
	const char *ta = "I work night shifts as a nurse in a hospital.";
	const char *tb = "Healthcare workers with rotating or overnight schedules.";
	const char *tc = "Owners of vintage sports cars who restore engines.";
	assert_int_equal(embed_text(&g_model.enc, ta, strlen(ta), g_scratch, a), EMBED_OK);
	assert_int_equal(embed_text(&g_model.enc, tb, strlen(tb), g_scratch, b), EMBED_OK);
	assert_int_equal(embed_text(&g_model.enc, tc, strlen(tc), g_scratch, c), EMBED_OK);
	assert_true(embed_cosine(a, b) > embed_cosine(a, c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_count),
		cmocka_unit_test(test_token_ids),
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_tokenize_truncation),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_nfkc),
		cmocka_unit_test(test_bad_blob),
		cmocka_unit_test(test_similarity_sanity),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
