/* libFuzzer: the whole BERT encoder (bert_embed: tokenizer and forward
 * pass), slow; fuzz_wordpiece is its input side at full speed.  The first
 * byte picks the role, the rest is a bio or screening criteria text; the
 * encoder will run on any text a client sends, so none may crash, hang or
 * read out of bounds, and every result is a unit vector of finite numbers
 * (make fuzz-bert; needs build/model/all-minilm-l6-v2.bin from make
 * bert-models, or ARPS_BERT_MODEL).  Inputs are at most 512 bytes (the
 * forward pass takes milliseconds a text).  The first byte's second bit
 * picks the pooling (mean or [CLS], whose last layer computes one row), so
 * one model covers both.  ARPS_FUZZ_LAYERS=N runs only the first N layers:
 * every layer runs the same code, and the recorded run of a million inputs
 * (tests/fuzz/README.md) fits in minutes with one. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "encoder/bert.h"
#include "encoder/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct bert_file g_model;
static void *g_scratch;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	float v[BERT_DIM], norm = 0;
	size_t i;

	if (g_scratch == NULL) {
		const char *p = getenv("ARPS_BERT_MODEL");

		const char *l = getenv("ARPS_FUZZ_LAYERS");

		if (bert_map(p != NULL ? p : "build/model/all-minilm-l6-v2.bin", &g_model) != 0 ||
		    (g_scratch = malloc(bert_scratch_size(&g_model.enc))) == NULL) {
			fprintf(stderr, "fuzz_bert_full: no model (make bert-models)\n");
			abort();
		}
		if (l != NULL && atoi(l) >= 1 && (uint32_t)atoi(l) < g_model.enc.layers)
			g_model.enc.layers = (uint32_t)atoi(l);
	}
	if (size == 0 || size > 512)
		return 0;
	g_model.enc.pooling = (data[0] & 2) ? BERT_POOL_CLS : BERT_POOL_MEAN;
	if (bert_embed(&g_model.enc, data[0] & 1, (const char *)data + 1, size - 1, g_scratch,
		       v) != BERT_OK)
		abort();
	for (i = 0; i < BERT_DIM; i++) {
		if (!isfinite(v[i]))
			abort();
		norm += v[i] * v[i];
	}
	if (fabsf(norm - 1.0f) > 1e-3f)
		abort();
	return 0;
}
