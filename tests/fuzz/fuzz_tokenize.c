/*
 * libFuzzer: the tokenizer (encoder/tokenize.c) on any bytes a client sends as
 * a bio or screening criteria (make fuzz; needs build/model/use-lite.bin).
 * It runs in a worker after the answer and again in the sweep, so no text
 * may crash, hang or read out of bounds.
 *
 * Checked beyond "no crash": tokenize succeeds on any bytes; every id is in
 * 0..vocab-1; a second call with a buffer one id shorter than the first
 * call's ids gives the same total and the same ids up to its end (so the
 * same text gives the same ids, and a smaller buffer a prefix of them),
 * and for an input of at most SLOW_MAX bytes it runs without the
 * chars_closed shortcut (every candidate piece looked up), so the shortcut
 * is checked to change nothing; the
 * NFKC code points are Unicode scalar values and a buffer one code point
 * shorter gets the same count and a prefix of them.
 *
 * Two tokenize calls per input prove these properties (an earlier version
 * made three: a "same ids twice" call and an 8-id call, each a full
 * tokenization, which the one call of min(n, MAXIDS) - 1 ids covers: it
 * compares every id but the last against the first call and takes the
 * truncated branch whenever there is a token).  The model is mapped once
 * in LLVMFuzzerInitialize.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder/embed.h"
#include "encoder/tokenize.h"
#include "encoder/model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FCHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

#define MAXIDS 512
/* inputs up to this size run the second call without the shortcut (it
 * costs 1.4 times the executions where every input does; each branch of
 * the lattice and of the shortcut is reached in far fewer bytes) */
#define SLOW_MAX 512

static struct model g_model;
static struct embed_model g_slow;	/* the same model without chars_closed */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *p = getenv("ARPS_MODEL");

	(void)argc;
	(void)argv;
	if (model_map(p != NULL ? p : MODEL_DEFAULT_PATH, &g_model) != 0) {
		fprintf(stderr, "fuzz_tokenize: no model (make model)\n");
		abort();
	}
	FCHECK(g_model.enc.chars_closed == tokenize_chars_closed(&g_model.enc));
	g_slow = g_model.enc;
	g_slow.chars_closed = 0;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int32_t ids[MAXIDS], again[MAXIDS];
	static uint32_t cps[MAXIDS], cps2[MAXIDS];
	size_t n, n2, nc, nc2, i, have, short_ids, short_cps;

	FCHECK(tokenize(&g_model.enc, (const char *)data, size, ids, MAXIDS, &n) == EMBED_OK);
	have = n < MAXIDS ? n : MAXIDS;
	for (i = 0; i < have; i++)
		FCHECK(ids[i] >= 0 && (uint32_t)ids[i] < g_model.enc.vocab);
	/* one id short of what the first call holds: the same total, the same
	 * ids, the truncated branch (none when there is no token) */
	short_ids = have > 0 ? have - 1 : 0;
	FCHECK(tokenize(size <= SLOW_MAX ? &g_slow : &g_model.enc, (const char *)data, size, again,
	    short_ids, &n2) == 0);
	FCHECK(n2 == n && memcmp(ids, again, short_ids * sizeof ids[0]) == 0);
	nc = tokenize_nfkc(&g_model.enc, (const char *)data, size, cps, MAXIDS);
	have = nc < MAXIDS ? nc : MAXIDS;
	for (i = 0; i < have; i++)
		FCHECK(cps[i] <= 0x10FFFF && (cps[i] < 0xD800 || cps[i] > 0xDFFF));
	short_cps = have > 0 ? have - 1 : 0;
	nc2 = tokenize_nfkc(&g_model.enc, (const char *)data, size, cps2, short_cps);
	FCHECK(nc2 == nc && memcmp(cps, cps2, short_cps * sizeof cps[0]) == 0);
	return 0;
}
