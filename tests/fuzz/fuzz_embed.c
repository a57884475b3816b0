/*
 * libFuzzer: the encoder's input side at full speed (make fuzz; needs
 * build/model/use-lite.bin).  The forward pass itself (encoder/embed.c
 * forward()) takes milliseconds a text and its sizes are compile-time
 * constants (D0 256, D1 512, FF 1536, 4 heads, 2 layers, 128 positions:
 * embed_init refuses a model file with other sizes), so no smaller model can
 * run the same graph; the graph is fuzzed from texts by fuzz_embed_full, and
 * the text -> ids step by fuzz_tokenize.  Everything between the two is
 * here, on any token id sequence (a superset of what tokenize gives):
 *
 *   the bytes are little-endian u16 values, each an id in -4..emb_rows+3
 *   (v mod (emb_rows + 8) - 4: unknown id 0, pieces, the embedding rows past
 *   the vocabulary, and ids out of range on both sides); as embed_text does,
 *   at most EMBED_MAX_TOKENS of them are used (the truncation), held in a
 *   buffer of exactly that many ids so that a read past the sequence is an
 *   ASan report; then the chunk loop of embed_text with the real
 *   embed_chunk_end, and embed_tokens on every chunk that holds an id
 *   outside 0..emb_rows-1 (it must refuse it before the graph runs).
 *
 * Checked beyond "no crash": every chunk is 1..EMBED_MAX_SEQ ids, the chunks
 * tile 0..n in order; a chunk ends at n when the rest fits, else one past
 * the last id in (start, start + 128] whose piece ends in '.', '!' or '?'
 * (a valid id > 0 with a non-empty piece), else at start + 128 (the rule
 * computed here independently); there are at least ceil(n / 128) and at
 * most n chunks; embed_tokens answers EMBED_EARG
 * for a chunk with an id out of range and EMBED_EEMPTY with an all-zero
 * vector for no ids.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder/embed.h"
#include "encoder/model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FCHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

static struct model g_model;
static void *g_scratch;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *p = getenv("ARPS_MODEL");

	(void)argc;
	(void)argv;
	if (model_map(p != NULL ? p : MODEL_DEFAULT_PATH, &g_model) != 0 ||
	    (g_scratch = malloc(embed_scratch_size(&g_model.enc))) == NULL) {
		fprintf(stderr, "fuzz_embed: no model (make model)\n");
		abort();
	}
	return 0;
}

/* Does id end a sentence (the chunking rule's own test, written again)? */
static int
ends_sentence(const struct embed_model *m, int32_t id)
{
	uint32_t c;

	if (id <= 0 || (uint32_t)id >= m->vocab || m->piece_off[id + 1] == m->piece_off[id])
		return 0;
	c = m->piece_cps[m->piece_off[id + 1] - 1];
	return c == '.' || c == '!' || c == '?';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct embed_model *m = &g_model.enc;
	float v[USE_DIM];
	int32_t *ids;
	size_t total = size / 2, n, st, e, b, want, chunks = 0, i;
	uint32_t span = m->emb_rows + 8;
	int bad;

	n = total < EMBED_MAX_TOKENS ? total : EMBED_MAX_TOKENS;
	if (n == 0) {
		memset(v, 0x5a, sizeof v);
		FCHECK(embed_tokens(m, NULL, 0, g_scratch, v) == EMBED_EEMPTY);
		for (i = 0; i < USE_DIM; i++)
			FCHECK(v[i] == 0.0f);
		return 0;
	}
	if ((ids = malloc(n * sizeof *ids)) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		ids[i] = (int32_t)(((uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8) % span) - 4;
	for (st = 0; st < n; st = e) {
		e = embed_chunk_end(m, ids, st, n);
		FCHECK(e > st && e <= n && e - st <= EMBED_MAX_SEQ);
		if (n - st <= EMBED_MAX_SEQ) {
			want = n;
		} else {
			want = st + EMBED_MAX_SEQ;
			for (b = st + EMBED_MAX_SEQ; b > st; b--)
				if (ends_sentence(m, ids[b - 1])) {
					want = b;
					break;
				}
		}
		FCHECK(e == want);
		bad = 0;
		for (i = st; i < e; i++)
			if (ids[i] < 0 || (uint32_t)ids[i] >= m->emb_rows)
				bad = 1;
		/* a valid chunk would run the graph: fuzz_embed_full's part */
		if (bad)
			FCHECK(embed_tokens(m, ids + st, e - st, g_scratch, v) == EMBED_EARG);
		chunks++;
	}
	FCHECK(chunks >= (n + EMBED_MAX_SEQ - 1) / EMBED_MAX_SEQ && chunks <= n);
	free(ids);
	return 0;
}
