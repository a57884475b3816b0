/*
 * The BERT encoder (encoder/bert.c, encoder/wordpiece.c) against the
 * reference implementation (tools/bert-reference.py: HF tokenizers +
 * onnxruntime on each package's ONNX graph), design.md §15:
 *
 *   - the token ids of every text of tests/unit/bert_texts.txt are the
 *     reference's (tests/unit/bert_ref/<model>.tokens), text i as a query
 *     when i is even, as a passage when odd;
 *   - the vector of every text is within cosine 0.999 of the reference's
 *     (tests/unit/bert_ref/<model>.f16), on the kernel bert_init picks
 *     (every text), the bf16 products (every 4th, when the file and the
 *     CPU have them) and the generic kernel (every 16th).
 *
 * Each candidate is tested when its model file build/model/<model>.bin
 * exists (make bert-models; mk/bert.mk) and skipped otherwise.  Run from
 * the repository root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "encoder/bert.h"
#include "encoder/kernels.h"
#include "encoder/model.h"

#define TEXTS_PATH "tests/unit/bert_texts.txt"
#define MIN_COSINE 0.999

/* Under AddressSanitizer (make test-asan) or unoptimised (make coverage)
 * the forward pass is five to ten times slower: vectors of every 8th text
 * there, tokens of every text. */
#if defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__)
#define VEC_STRIDE 8
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VEC_STRIDE 8
#endif
#endif
#ifndef VEC_STRIDE
#define VEC_STRIDE 1
#endif

static const char *const models[] = {
	"all-minilm-l6-v2", "bge-small-en-v1.5", "e5-small-v2",
};

struct texts {
	char *buf;
	char **t;
	size_t *len;
	size_t n;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)n + 1)) != NULL) {
		if (fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		} else {
			b[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return b;
}

/* Texts split on "\n" as the reference splits them (a final newline adds
 * no text). */
static void texts_load(struct texts *x)
{
	size_t len = 0, i, start = 0;

	x->buf = slurp(TEXTS_PATH, &len);
	assert_non_null(x->buf);
	x->n = 0;
	for (i = 0; i < len; i++)
		x->n += x->buf[i] == '\n';
	if (len && x->buf[len - 1] != '\n')
		x->n++;
	x->t = calloc(x->n, sizeof *x->t);
	x->len = calloc(x->n, sizeof *x->len);
	assert_true(x->t != NULL && x->len != NULL);
	for (size_t k = 0; k < x->n; k++) {
		size_t e = start;
		while (e < len && x->buf[e] != '\n')
			e++;
		x->t[k] = x->buf + start;
		x->len[k] = e - start;
		start = e + 1;
	}
}

static void texts_free(struct texts *x)
{
	free(x->buf);
	free(x->t);
	free(x->len);
}

static float half_to_float(uint16_t h)
{
	uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, u;
	float f;

	if (e == 0) {
		f = ldexpf((float)m, -24);
		return s ? -f : f;
	}
	u = s | (e == 31 ? 0xFFu << 23 : (e + 112) << 23) | m << 13;
	memcpy(&f, &u, sizeof f);
	return f;
}

static double cosine(const float *a, const float *b)
{
	double ab = 0, aa = 0, bb = 0;
	for (size_t i = 0; i < BERT_DIM; i++) {
		ab += (double)a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += (double)b[i] * b[i];
	}
	return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

/* One candidate: tokens and vectors of every text. */
static void check_model(const char *name)
{
	char path[256];
	struct bert_file bf;
	struct texts x;
	size_t flen = 0, tlen = 0, ok_tokens = 0;
	char *ref_tok, *ref_vec, *line;
	int32_t ids[BERT_MAX_SEQ];
	float v[BERT_DIM], ref[BERT_DIM];
	void *scratch;

	snprintf(path, sizeof path, "build/model/%s.bin", name);
	if (bert_map(path, &bf) != 0) {
		print_message("test_bert: %s missing (make bert-models): skipped\n", path);
		skip();
	}
	texts_load(&x);
	snprintf(path, sizeof path, "tests/unit/bert_ref/%s.tokens", name);
	ref_tok = slurp(path, &tlen);
	snprintf(path, sizeof path, "tests/unit/bert_ref/%s.f16", name);
	ref_vec = slurp(path, &flen);
	assert_non_null(ref_tok);
	assert_non_null(ref_vec);
	uint32_t hn, hd;
	assert_true(flen >= 16 && memcmp(ref_vec, "ARPSF16", 8) == 0);
	memcpy(&hn, ref_vec + 8, 4);
	memcpy(&hd, ref_vec + 12, 4);
	assert_int_equal(hn, x.n);
	assert_int_equal(hd, BERT_DIM);
	assert_int_equal(flen, 16 + (size_t)hn * hd * 2);
	assert_non_null(scratch = malloc(bert_scratch_size(&bf.enc)));

	/* the kernel bert_init picks on every text; the bf16 products (when
	 * the file and the CPU have them) on every 4th, AVX2 (when the CPU
	 * has it and it is not the default) and the generic kernel (slow) on
	 * every 16th */
	enum { NK = 4 };
	int kernels[NK] = { bf.enc.kernel, -1, -1, KERN_GENERIC };
	size_t stride[NK] = { VEC_STRIDE, 4 * VEC_STRIDE, 16 * VEC_STRIDE, 16 * VEC_STRIDE };
	size_t cnt[NK] = { 0 }, worst[NK] = { 0 }, total_tokens = 0;
	double minc[NK] = { 2, 2, 2, 2 }, sumc[NK] = { 0 };
	if (bf.enc.has_bf16 && kern_detect(1) == KERN_BF16)
		kernels[1] = KERN_BF16;
	if (bf.enc.kernel > KERN_AVX2)
		kernels[2] = KERN_AVX2;
	line = ref_tok;
	for (size_t i = 0; i < x.n; i++) {
		/* "i<TAB>role<TAB>n<TAB>ids" */
		char *end = strchr(line, '\n');
		assert_non_null(end);
		*end = '\0';
		char *p = line;
		unsigned long idx = strtoul(p, &p, 10);
		assert_int_equal(idx, i);
		assert_true(*p == '\t');
		p = strchr(p + 1, '\t');
		assert_non_null(p);
		unsigned long n = strtoul(p + 1, &p, 10);
		int role = (i % 2) ? BERT_PASSAGE : BERT_QUERY;
		size_t got = bert_tokens(&bf.enc, role, x.t[i], x.len[i], ids);
		int same = got == n;
		for (size_t k = 0; k < n; k++) {
			long want = strtol(p, &p, 10);
			if (same && ids[k] != want)
				same = 0;
		}
		if (!same)
			print_message("%s: text %zu: tokens differ (%zu vs %lu)\n", name, i, got, n);
		ok_tokens += same;
		total_tokens += got;
		line = end + 1;

		for (size_t j = 0; j < BERT_DIM; j++) {
			uint16_t h;
			memcpy(&h, ref_vec + 16 + (i * BERT_DIM + j) * 2, 2);
			ref[j] = half_to_float(h);
		}
		for (int k = 0; k < NK; k++) {
			struct bert_model m = bf.enc;
			if (kernels[k] < 0 || i % stride[k] != 0)
				continue;
			m.kernel = kernels[k];
			assert_int_equal(bert_embed(&m, role, x.t[i], x.len[i], scratch, v), BERT_OK);
			double c = cosine(v, ref);
			if (c < minc[k]) {
				minc[k] = c;
				worst[k] = i;
			}
			sumc[k] += c;
			cnt[k]++;
		}
	}
	print_message("%s (%u layers, max %u tokens): tokens %zu/%zu texts identical "
		      "(%zu tokens)\n", name, bf.enc.layers, bf.enc.max_tokens, ok_tokens, x.n,
		      total_tokens);
	for (int k = 0; k < NK; k++) {
		if (cnt[k] == 0)
			continue;
		print_message("  kernel %d, %zu texts: cosine min %.9f (text %zu) mean %.9f\n",
			      kernels[k], cnt[k], minc[k], worst[k], sumc[k] / (double)cnt[k]);
		assert_true(minc[k] >= MIN_COSINE);
	}
	assert_int_equal(ok_tokens, x.n);
	free(scratch);
	free(ref_tok);
	free(ref_vec);
	texts_free(&x);
	bert_unmap(&bf);
}

static void test_minilm(void **state)
{
	(void)state;
	check_model(models[0]);
}

static void test_bge(void **state)
{
	(void)state;
	check_model(models[1]);
}

static void test_e5(void **state)
{
	(void)state;
	check_model(models[2]);
}

/* A damaged file is refused, never read out of bounds: the header cut,
 * the magic, a section offset past the end, a dimension changed. */
static void test_bad_blob(void **state)
{
	char path[256];
	struct bert_file bf;
	struct bert_model m;
	size_t len;
	void *copy;

	(void)state;
	snprintf(path, sizeof path, "build/model/%s.bin", models[0]);
	if (bert_map(path, &bf) != 0) {
		print_message("test_bert: %s missing (make bert-models): skipped\n", path);
		skip();
	}
	len = bf.len;
	assert_int_equal(posix_memalign(&copy, 64, len), 0);
	memcpy(copy, bf.base, len);
	assert_int_equal(bert_init(&m, copy, len), BERT_OK);
	assert_int_equal(bert_init(&m, copy, len - 1), BERT_EFORMAT);
	assert_int_equal(bert_init(&m, copy, 100), BERT_EFORMAT);
	((char *)copy)[0] ^= 1;
	assert_int_equal(bert_init(&m, copy, len), BERT_EFORMAT);
	((char *)copy)[0] ^= 1;
	unsigned char *h = copy;
	h[32] ^= 1;	/* hidden 384 -> 385 */
	assert_int_equal(bert_init(&m, copy, len), BERT_EFORMAT);
	h[32] ^= 1;
	uint64_t off;
	memcpy(&off, h + BERT_HDR + 16 * BERT_SEC_UNI_RUNS, 8);
	uint64_t bad = len;
	memcpy(h + BERT_HDR + 16 * BERT_SEC_UNI_RUNS, &bad, 8);
	assert_int_equal(bert_init(&m, copy, len), BERT_EFORMAT);
	memcpy(h + BERT_HDR + 16 * BERT_SEC_UNI_RUNS, &off, 8);
	assert_int_equal(bert_init(&m, copy, len), BERT_OK);
	free(copy);
	bert_unmap(&bf);
}

/* Arguments: a bad role, NULL text with a length, an id out of range. */
static void test_args(void **state)
{
	char path[256];
	struct bert_file bf;
	float v[BERT_DIM];
	int32_t ids[3] = { 101, 0, 102 };
	void *scratch;

	(void)state;
	snprintf(path, sizeof path, "build/model/%s.bin", models[0]);
	if (bert_map(path, &bf) != 0) {
		print_message("test_bert: %s missing (make bert-models): skipped\n", path);
		skip();
	}
	assert_non_null(scratch = malloc(bert_scratch_size(&bf.enc)));
	assert_int_equal(bert_embed(&bf.enc, 2, "a", 1, scratch, v), BERT_EARG);
	assert_int_equal(bert_embed(&bf.enc, BERT_QUERY, NULL, 1, scratch, v), BERT_EARG);
	assert_int_equal(bert_embed(&bf.enc, BERT_QUERY, NULL, 0, scratch, v), BERT_OK);
	ids[1] = (int32_t)bf.enc.wp.vocab;
	assert_int_equal(bert_embed_tokens(&bf.enc, ids, 3, scratch, v), BERT_EARG);
	ids[1] = -1;
	assert_int_equal(bert_embed_tokens(&bf.enc, ids, 3, scratch, v), BERT_EARG);
	assert_int_equal(bert_embed_tokens(&bf.enc, ids, 0, scratch, v), BERT_EARG);
	free(scratch);
	bert_unmap(&bf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minilm),
		cmocka_unit_test(test_bge),
		cmocka_unit_test(test_e5),
		cmocka_unit_test(test_bad_blob),
		cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
