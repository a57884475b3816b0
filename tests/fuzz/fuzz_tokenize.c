/*
 * libFuzzer: the tokenizer (core/tokenize.c) on any bytes a client sends as
 * a bio or screening criteria (make fuzz; needs build/model/use-lite.bin).
 * It runs in a worker after the answer and again in the sweep, so no text
 * may crash, hang or read out of bounds.
 *
 * Checked beyond "no crash": tokenize succeeds on any bytes; every id is in
 * 0..vocab-1; the same text gives the same ids; a smaller id buffer gets a
 * prefix of the same ids and the same total; the NFKC code points are
 * Unicode scalar values and a smaller buffer gets a prefix of them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/embed.h"
#include "core/tokenize.h"
#include "lib/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FCHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

#define MAXIDS 512

static struct model g_model;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int32_t ids[MAXIDS], again[MAXIDS], few[8];
	static uint32_t cps[MAXIDS], cps2[16];
	size_t n, n2, n3, nc, nc2, i;

	if (g_model.base == NULL) {
		const char *p = getenv("ARPS_MODEL");

		if (model_map(p != NULL ? p : MODEL_DEFAULT_PATH, &g_model) != 0) {
			fprintf(stderr, "fuzz_tokenize: no model (make model)\n");
			abort();
		}
	}
	FCHECK(tokenize(&g_model.enc, (const char *)data, size, ids, MAXIDS, &n) == 0);
	for (i = 0; i < (n < MAXIDS ? n : MAXIDS); i++)
		FCHECK(ids[i] >= 0 && (uint32_t)ids[i] < g_model.enc.vocab);
	FCHECK(tokenize(&g_model.enc, (const char *)data, size, again, MAXIDS, &n2) == 0);
	FCHECK(n2 == n && memcmp(ids, again, (n < MAXIDS ? n : MAXIDS) * sizeof ids[0]) == 0);
	FCHECK(tokenize(&g_model.enc, (const char *)data, size, few, 8, &n3) == 0);
	FCHECK(n3 == n && memcmp(ids, few, (n < 8 ? n : 8) * sizeof ids[0]) == 0);
	nc = tokenize_nfkc(&g_model.enc, (const char *)data, size, cps, MAXIDS);
	for (i = 0; i < (nc < MAXIDS ? nc : MAXIDS); i++)
		FCHECK(cps[i] <= 0x10FFFF && (cps[i] < 0xD800 || cps[i] > 0xDFFF));
	nc2 = tokenize_nfkc(&g_model.enc, (const char *)data, size, cps2, 16);
	FCHECK(nc2 == nc && memcmp(cps, cps2, (nc < 16 ? nc : 16) * sizeof cps[0]) == 0);
	return 0;
}
