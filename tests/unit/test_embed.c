/*
 * USE Lite encoder vs the package's own JavaScript runtime.
 *
 * Reads the model from $ARPS_MODEL (default build/model/use-lite.bin, made by
 * `make model`) and tests/unit/embed_reference.txt (tools/embed-reference.mjs)
 * relative to the repo root, where tests run.  Every text must give the same
 * token ids as the JS tokenizer and a vector with cosine >= 0.999 to the JS
 * vector.
 *
 * The calibration means (EMBED_SEC_MEANS) are checked too: the SHA-256 of
 * each calibration file recorded in the model equals its line in
 * tools/model.sha256 (which `make model` checks the files against), and the
 * stored means are what this encoder gives for those files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <cmocka.h>

#include "encoder/embed.h"
#include "encoder/tokenize.h"
#include "encoder/model.h"

#define REF_PATH "tests/unit/embed_reference.txt"
#define SUM_PATH "tools/model.sha256"
#define MIN_COS 0.999f

struct ref {
	char *text;
	size_t len;
	int32_t *ids;
	size_t nids;
	int has_vec, has_clip;
	float vec[USE_DIM], clip[USE_DIM];
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
	for (int i = 0; i < USE_DIM; i++) {
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
	float v[USE_DIM];
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
	float v[USE_DIM];
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
	float v[USE_DIM];
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
	{
		/* the means: checked when present, optional to embed_init */
		unsigned char ent[16];
		unsigned char *slot = copy + 64 + 16 * EMBED_SEC_MEANS;
		uint64_t off;
		memcpy(ent, slot, 16);
		memcpy(&off, ent, 8);
		assert_true(off > 0 && off + EMBED_MEANS_SIZE <= len);
		copy[off] ^= 1;   /* magic */
		assert_int_equal(embed_init(&m, copy, len), EMBED_EFORMAT);
		copy[off] ^= 1;
		float nan = NAN;
		float keep;
		memcpy(&keep, copy + off + EMBED_MEANS_HDR + 4 * 9, 4);
		memcpy(copy + off + EMBED_MEANS_HDR + 4 * 9, &nan, 4);
		assert_int_equal(embed_init(&m, copy, len), EMBED_EFORMAT);
		memcpy(copy + off + EMBED_MEANS_HDR + 4 * 9, &keep, 4);
		slot[8] ^= 4;   /* wrong size */
		assert_int_equal(embed_init(&m, copy, len), EMBED_EFORMAT);
		memset(slot, 0, 16);   /* absent: the encoder runs, no means */
		assert_int_equal(embed_init(&m, copy, len), EMBED_OK);
		assert_null(m.means);
		assert_null(m.mean_bio);
		assert_null(m.mean_crit);
		/* ... but the service's loader refuses such a file */
		char tmp[] = "/tmp/arps-test-model-XXXXXX";
		int fd = mkstemp(tmp);
		assert_true(fd >= 0);
		FILE *f = fdopen(fd, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(copy, 1, len, f), len);
		assert_int_equal(fclose(f), 0);
		struct model raw;
		assert_int_equal(model_map(tmp, &raw), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(model_map_raw(tmp, &raw), 0);
		assert_null(raw.enc.mean_bio);
		model_unmap(&raw);
		unlink(tmp);
		memcpy(slot, ent, 16);
		assert_int_equal(embed_init(&m, copy, len), EMBED_OK);
		assert_memory_equal(m.mean_bio, g_model.enc.mean_bio, USE_DIM * sizeof(float));
	}
	free(copy);
	struct model bad;
	assert_int_equal(model_map("/nonexistent/use-lite.bin", &bad), -1);
}

/* The 32-byte digest on the line of tools/model.sha256 that names path. */
static int sum_of(const char *path, uint8_t out[32])
{
	FILE *f = fopen(SUM_PATH, "r");
	char line[512];
	int found = -1;

	if (!f)
		return -1;
	while (found != 0 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (strlen(line) != 64 + 2 + strlen(path) || strcmp(line + 66, path) != 0)
			continue;
		found = 0;
		for (int i = 0; i < 32; i++) {
			int hi = hexval(line[2 * i]), lo = hexval(line[2 * i + 1]);
			if (hi < 0 || lo < 0)
				found = -1;
			out[i] = (uint8_t)(hi * 16 + lo);
		}
	}
	fclose(f);
	return found;
}

static double vnorm(const float *v)
{
	double n = 0;
	for (int i = 0; i < USE_DIM; i++)
		n += (double)v[i] * v[i];
	return sqrt(n);
}

static void test_means(void **state)
{
	(void)state;
	const struct embed_means_hdr *h = g_model.enc.means;
	struct model_texts bios, crit;
	struct embed_model m = g_model.enc;
	float mean[USE_DIM];
	uint8_t sum[32];

	assert_non_null(h);
	assert_non_null(g_model.enc.mean_bio);
	assert_non_null(g_model.enc.mean_crit);
	assert_true(g_model.enc.mean_bio == (const float *)((const char *)h + EMBED_MEANS_HDR));
	assert_true(g_model.enc.mean_crit == g_model.enc.mean_bio + USE_DIM);
	/* the model was built from the checksummed calibration files */
	assert_int_equal(sum_of(MODEL_CALIB_BIOS, sum), 0);
	assert_memory_equal(sum, h->sha_bio, 32);
	assert_int_equal(sum_of(MODEL_CALIB_CRITERIA, sum), 0);
	assert_memory_equal(sum, h->sha_crit, 32);
	assert_int_equal(model_texts_load(MODEL_CALIB_BIOS, &bios), 0);
	assert_int_equal(model_texts_load(MODEL_CALIB_CRITERIA, &crit), 0);
	assert_int_equal(h->n_bio, bios.n);
	assert_int_equal(h->n_crit, crit.n);
	assert_true(bios.n >= 150 && crit.n >= 150);
	/* a large shared component on each side (a mean of unrelated unit
	 * vectors would be near zero), and the two sides differ */
	assert_true(vnorm(g_model.enc.mean_bio) > 0.4 && vnorm(g_model.enc.mean_bio) < 0.9);
	assert_true(vnorm(g_model.enc.mean_crit) > 0.4 && vnorm(g_model.enc.mean_crit) < 0.9);
	assert_true(embed_cosine(g_model.enc.mean_bio, g_model.enc.mean_crit) < 0.99f);
	/* the stored means are this encoder's (generic kernel, as make model
	 * runs it; any kernel agrees closely) */
	m.kernel = EMBED_KERNEL_GENERIC;
	assert_int_equal(model_mean(&m, g_scratch, bios.t, bios.n, mean), EMBED_OK);
	for (int d = 0; d < USE_DIM; d++)
		assert_true(fabsf(mean[d] - g_model.enc.mean_bio[d]) < 1e-5f);
	assert_int_equal(model_mean(&m, g_scratch, crit.t, crit.n, mean), EMBED_OK);
	for (int d = 0; d < USE_DIM; d++)
		assert_true(fabsf(mean[d] - g_model.enc.mean_crit[d]) < 1e-5f);
	/* this CPU's kernel (the one the service runs) */
	assert_int_equal(model_mean(&g_model.enc, g_scratch, crit.t, crit.n, mean), EMBED_OK);
	float worst = 0;
	for (int d = 0; d < USE_DIM; d++)
		if (fabsf(mean[d] - g_model.enc.mean_crit[d]) > worst)
			worst = fabsf(mean[d] - g_model.enc.mean_crit[d]);
	fprintf(stderr, "means: kernel %d vs generic, cosine %.7f, worst component %.2g\n",
		g_model.enc.kernel, embed_cosine(mean, g_model.enc.mean_crit), worst);
	assert_true(embed_cosine(mean, g_model.enc.mean_crit) > 0.9999f);
	assert_true(worst < 2e-3f);
	assert_int_equal(model_mean(&m, g_scratch, crit.t, 0, mean), EMBED_EARG);
	model_texts_free(&bios);
	model_texts_free(&crit);
}

/* Cosine of a and b each centred on its mean and renormalised (what
 * core's match_centre does at the service's length; USE Lite has its own). */
static float centred_cosine(const float *a, const float *ma, const float *b, const float *mb)
{
	float x[USE_DIM], y[USE_DIM];
	for (int d = 0; d < USE_DIM; d++) {
		x[d] = a[d] - ma[d];
		y[d] = b[d] - mb[d];
	}
	return embed_cosine(x, y);
}

static void test_similarity_sanity(void **state)
{
	(void)state;
	float a[USE_DIM], b[USE_DIM], c[USE_DIM];
	const char *ta = "I work night shifts as a nurse in a hospital.";
	const char *tb = "Healthcare workers with rotating or overnight schedules.";
	const char *tc = "Owners of vintage sports cars who restore engines.";
	assert_int_equal(embed_text(&g_model.enc, ta, strlen(ta), g_scratch, a), EMBED_OK);
	assert_int_equal(embed_text(&g_model.enc, tb, strlen(tb), g_scratch, b), EMBED_OK);
	assert_int_equal(embed_text(&g_model.enc, tc, strlen(tc), g_scratch, c), EMBED_OK);
	assert_true(embed_cosine(a, b) > embed_cosine(a, c));
	/* centred as ranking does (ta a bio, tb and tc criteria) */
	assert_true(centred_cosine(a, g_model.enc.mean_bio, b, g_model.enc.mean_crit) >
		    centred_cosine(a, g_model.enc.mean_bio, c, g_model.enc.mean_crit));
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
		cmocka_unit_test(test_means),
		cmocka_unit_test(test_similarity_sanity),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
