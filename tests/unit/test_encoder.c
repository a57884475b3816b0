/*
 * The encoder facade (encoder/encoder.c) over both kinds of model file:
 *
 *   - a file of neither kind, a missing file, bad arguments;
 *   - USE Lite (build/model/use-lite.bin, make model): kind, length, means,
 *     the vectors of embed_text in both roles;
 *   - each BERT candidate (build/model/<name>.bin, make bert-models): kind,
 *     length, name, the means section tools/model-means.c appended (the
 *     calibration counts, the C encoder's means of the calibration set),
 *     a bio as bert_embed's query and criteria as its passage;
 *   - the means section of a BERT file read by bert_init: a bad magic or a
 *     non-finite mean refused, a file without it accepted.
 *
 * A model file that is absent is skipped, as in test_bert.  Run from the
 * repository root.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "encoder/encoder.h"
#include "encoder/model.h"

#define USE_PATH "build/model/use-lite.bin"

static const char *const bert_models[] = {
	"all-minilm-l6-v2", "bge-small-en-v1.5", "e5-small-v2",
};

static const char *const texts[] = {
	"I work night shifts as a nurse in a hospital.",
	"Healthcare workers with rotating or overnight schedules.",
	"Owners of vintage sports cars who restore engines.",
};
#define NTEXTS (sizeof texts / sizeof texts[0])

static float length(const float *v, unsigned dim)
{
	double s = 0;
	for (unsigned d = 0; d < dim; d++)
		s += (double)v[d] * v[d];
	return (float)sqrt(s);
}

static double cosine(const float *a, const float *b, unsigned dim)
{
	double ab = 0, aa = 0, bb = 0;
	for (unsigned d = 0; d < dim; d++) {
		ab += (double)a[d] * b[d];
		aa += (double)a[d] * a[d];
		bb += (double)b[d] * b[d];
	}
	return ab / sqrt(aa * bb);
}

static void test_bad_files(void **state)
{
	struct encoder e;
	char path[] = "/tmp/test_encoder_XXXXXX";
	static const char junk[4096] = "ARPSXXX1 neither kind of model";
	int fd;

	(void)state;
	errno = 0;
	assert_int_equal(encoder_open(&e, "build/model/no-such-model.bin"), ENCODER_EARG);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(e.kind, 0);
	assert_int_equal(encoder_open(NULL, USE_PATH), ENCODER_EARG);
	assert_int_equal(encoder_open(&e, NULL), ENCODER_EARG);

	/* the right magic on a file too short to be valid, and junk */
	static const struct {
		const char *head;
	} rows[] = { { "ARPSXXX1" }, { EMBED_MAGIC }, { BERT_MAGIC } };
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		assert_true((fd = mkstemp(path)) >= 0);
		assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
		assert_int_equal(pwrite(fd, rows[i].head, 8, 0), 8);
		close(fd);
		errno = 0;
		assert_int_equal(encoder_open(&e, path), ENCODER_EFORMAT);
		assert_int_equal(errno, EINVAL);
		assert_null(e.base);
		unlink(path);
		strcpy(path, "/tmp/test_encoder_XXXXXX");
	}
	memset(&e, 0, sizeof e);
	encoder_close(&e);
	encoder_close(NULL);
	assert_int_equal(encoder_scratch_size(&e), 0);
	assert_int_equal(encoder_embed(&e, ENCODER_BIO, "x", 1, path, (float *)junk),
			 ENCODER_EARG);
}

static void test_use(void **state)
{
	struct encoder e;
	float a[USE_DIM], b[USE_DIM];
	void *scratch;

	(void)state;
	if (encoder_open(&e, USE_PATH) != ENCODER_OK) {
		print_message("test_encoder: %s missing (make model): skipped\n", USE_PATH);
		skip();
	}
	assert_int_equal(e.kind, ENCODER_USE);
	assert_int_equal(e.dim, USE_DIM);
	assert_string_equal(e.name, "use-lite");
	assert_non_null(e.means);
	assert_ptr_equal(e.mean_bio, e.m.use.mean_bio);
	assert_ptr_equal(e.mean_crit, e.m.use.mean_crit);
	assert_int_equal(encoder_scratch_size(&e), embed_scratch_size(&e.m.use));
	assert_non_null(scratch = malloc(encoder_scratch_size(&e)));
	for (size_t i = 0; i < NTEXTS; i++) {
		/* no roles: both give embed_text's vector */
		assert_int_equal(encoder_embed(&e, ENCODER_BIO, texts[i], strlen(texts[i]),
					       scratch, a), ENCODER_OK);
		assert_int_equal(embed_text(&e.m.use, texts[i], strlen(texts[i]), scratch, b),
				 EMBED_OK);
		assert_memory_equal(a, b, sizeof a);
		assert_int_equal(encoder_embed(&e, ENCODER_CRITERIA, texts[i],
					       strlen(texts[i]), scratch, b), ENCODER_OK);
		assert_memory_equal(a, b, sizeof a);
	}
	assert_int_equal(encoder_embed(&e, ENCODER_BIO, "", 0, scratch, a), ENCODER_EEMPTY);
	assert_true(length(a, USE_DIM) == 0);
	assert_int_equal(encoder_embed(&e, 2, "x", 1, scratch, a), ENCODER_EARG);
	free(scratch);
	encoder_close(&e);
	assert_null(e.base);
}

/* One BERT candidate through the facade. */
static void check_bert(const char *name, struct model_texts *bios, struct model_texts *crit)
{
	char path[256];
	struct encoder e;
	float a[BERT_DIM], b[BERT_DIM], mean[BERT_DIM];
	void *scratch;

	snprintf(path, sizeof path, "build/model/%s.bin", name);
	if (encoder_open(&e, path) != ENCODER_OK) {
		print_message("test_encoder: %s missing (make bert-models): skipped\n", path);
		return;
	}
	assert_int_equal(e.kind, ENCODER_BERT);
	assert_int_equal(e.dim, BERT_DIM);
	assert_string_equal(e.name, name);
	assert_int_equal(encoder_scratch_size(&e), bert_scratch_size(&e.m.bert));
	assert_non_null(scratch = malloc(encoder_scratch_size(&e)));
	for (size_t i = 0; i < NTEXTS; i++) {
		size_t n = strlen(texts[i]);
		assert_int_equal(encoder_embed(&e, ENCODER_BIO, texts[i], n, scratch, a),
				 ENCODER_OK);
		assert_int_equal(bert_embed(&e.m.bert, BERT_QUERY, texts[i], n, scratch, b),
				 BERT_OK);
		assert_memory_equal(a, b, sizeof a);
		assert_true(fabsf(length(a, BERT_DIM) - 1) < 1e-5f);
		assert_int_equal(encoder_embed(&e, ENCODER_CRITERIA, texts[i], n, scratch, a),
				 ENCODER_OK);
		assert_int_equal(bert_embed(&e.m.bert, BERT_PASSAGE, texts[i], n, scratch, b),
				 BERT_OK);
		assert_memory_equal(a, b, sizeof a);
	}
	assert_int_equal(encoder_embed(&e, -1, "x", 1, scratch, a), ENCODER_EARG);

	/* the means make bert-models appended: the calibration set's */
	assert_non_null(e.means);
	assert_ptr_equal(e.mean_bio, e.m.bert.mean_bio);
	assert_ptr_equal(e.mean_crit, e.mean_bio + BERT_DIM);
	assert_memory_equal(e.means->magic, EMBED_MEANS_MAGIC, 8);
	assert_int_equal(e.means->n_bio, bios->n);
	assert_int_equal(e.means->n_crit, crit->n);
	/* the calibration set on the kernel bert_init picked gives the file's
	 * means (made on the generic kernel); on the fastest candidate only */
	if (strcmp(name, "all-minilm-l6-v2") == 0) {
		assert_int_equal(encoder_mean(&e, ENCODER_BIO, scratch, bios->t, bios->n, mean),
				 ENCODER_OK);
		print_message("test_encoder: %s mean bio: cosine %.7f to the file's\n", name,
			      cosine(mean, e.mean_bio, BERT_DIM));
		assert_true(cosine(mean, e.mean_bio, BERT_DIM) > 0.99999);
		assert_int_equal(encoder_mean(&e, ENCODER_CRITERIA, scratch, crit->t, crit->n,
					      mean), ENCODER_OK);
		assert_true(cosine(mean, e.mean_crit, BERT_DIM) > 0.99999);
	}
	/* encoder_mean of two texts is their average */
	float v0[BERT_DIM], v1[BERT_DIM];
	char *two[2] = { (char *)texts[0], (char *)texts[1] };
	assert_int_equal(encoder_embed(&e, ENCODER_BIO, two[0], strlen(two[0]), scratch, v0), 0);
	assert_int_equal(encoder_embed(&e, ENCODER_BIO, two[1], strlen(two[1]), scratch, v1), 0);
	assert_int_equal(encoder_mean(&e, ENCODER_BIO, scratch, two, 2, mean), ENCODER_OK);
	for (unsigned d = 0; d < BERT_DIM; d++)
		assert_true(fabsf(mean[d] - (v0[d] + v1[d]) / 2) < 1e-6f);
	assert_int_equal(encoder_mean(&e, ENCODER_BIO, scratch, two, 0, mean), ENCODER_EARG);
	free(scratch);
	encoder_close(&e);
}

static void test_bert(void **state)
{
	struct model_texts bios, crit;

	(void)state;
	assert_int_equal(model_texts_load(MODEL_CALIB_BIOS, &bios), 0);
	assert_int_equal(model_texts_load(MODEL_CALIB_CRITERIA, &crit), 0);
	for (size_t i = 0; i < sizeof bert_models / sizeof bert_models[0]; i++)
		check_bert(bert_models[i], &bios, &crit);
	model_texts_free(&bios);
	model_texts_free(&crit);
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* bert_init on a copy of a BERT file with its means section altered. */
static void test_bert_means_section(void **state)
{
	struct encoder e;
	struct bert_model m;
	unsigned char *copy;
	size_t off, ent = BERT_HDR + 16 * BERT_SEC_MEANS;
	const char *path = "build/model/all-minilm-l6-v2.bin";

	(void)state;
	if (encoder_open(&e, path) != ENCODER_OK || e.means == NULL) {
		encoder_close(&e);
		print_message("test_encoder: %s missing (make bert-models): skipped\n", path);
		skip();
	}
	assert_non_null(copy = aligned_alloc(64, (e.len + 63) & ~(size_t)63));
	memcpy(copy, e.base, e.len);
	off = (size_t)((const unsigned char *)e.means - (const unsigned char *)e.base);
	assert_int_equal(bert_init(&m, copy, e.len), BERT_OK);
	assert_non_null(m.mean_bio);

	static const struct {
		size_t at;	/* from the section's start */
		unsigned char byte;
		int want;
	} rows[] = {
		{ 0, 'X', BERT_EFORMAT },		/* magic */
		{ EMBED_MEANS_HDR + 3, 0xff, BERT_EFORMAT },	/* NaN, first bio float */
		{ EMBED_MEANS_HDR + 4 * BERT_DIM + 3, 0x7f, BERT_EFORMAT },	/* crit: above 1 */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		unsigned char keep = copy[off + rows[i].at];
		copy[off + rows[i].at] = rows[i].byte;
		assert_int_equal(bert_init(&m, copy, e.len), rows[i].want);
		copy[off + rows[i].at] = keep;
	}
	/* the wrong size: refused; no section: accepted, without means */
	put64(copy + ent + 8, BERT_MEANS_SIZE - 4);
	assert_int_equal(bert_init(&m, copy, e.len), BERT_EFORMAT);
	put64(copy + ent, 0);
	put64(copy + ent + 8, 0);
	assert_int_equal(bert_init(&m, copy, e.len), BERT_OK);
	assert_null(m.means);
	assert_null(m.mean_bio);
	assert_null(m.mean_crit);
	free(copy);
	encoder_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_use),
		cmocka_unit_test(test_bert),
		cmocka_unit_test(test_bert_means_section),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
