/* libFuzzer: the whole encoder (embed_text: tokenizer, chunking and the
 * forward pass), slow; fuzz_embed is its input side at full speed.  A bio
 * or screening criteria text is any valid UTF-8 a client
 * sends (up to the bio limit); the encoder runs on it in a worker after the
 * answer and again in the sweep, so no text may crash, hang or read out of
 * bounds there, and every non-empty result is a unit vector of finite
 * numbers (make fuzz; needs build/model/use-lite.bin).  The encoder takes
 * milliseconds a text: inputs are at most 512 bytes (make fuzz passes
 * -max_len=512); the tokenizer on any length is fuzz_tokenize. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "encoder/embed.h"
#include "encoder/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct model g_model;
static void *g_scratch;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	float v[USE_DIM], norm = 0;
	size_t i;
	int rc;

	if (g_scratch == NULL) {
		const char *p = getenv("ARPS_MODEL");

		if (model_map(p != NULL ? p : MODEL_DEFAULT_PATH, &g_model) != 0 ||
		    (g_scratch = malloc(embed_scratch_size(&g_model.enc))) == NULL) {
			fprintf(stderr, "fuzz_embed_full: no model (make model)\n");
			abort();
		}
	}
	if (size > 512)
		return 0;
	rc = embed_text(&g_model.enc, (const char *)data, size, g_scratch, v);
	if (rc == EMBED_EEMPTY)
		return 0;
	if (rc != EMBED_OK)
		abort();
	for (i = 0; i < USE_DIM; i++) {
		if (!isfinite(v[i]))
			abort();
		norm += v[i] * v[i];
	}
	if (fabsf(norm - 1.0f) > 1e-3f)
		abort();
	return 0;
}
