/*
 * BERT's tokenizer, as HF `tokenizers` runs it for the uncased BERT
 * vocabularies (all-MiniLM-L6-v2, bge-small-en-v1.5, e5-small-v2):
 *
 *   added tokens   exact matches of the special tokens ("[CLS]", "[MASK]",
 *                  ...) in the raw text are those tokens, whatever follows
 *   BertNormalizer clean_text (drop U+0000, U+FFFD and control/format/
 *                  unassigned code points; whitespace -> ' '), CJK
 *                  ideographs padded with spaces, strip accents (NFD, drop
 *                  Mn), lowercase
 *   BertPreTokenizer  split on whitespace; every punctuation code point is
 *                  a word of its own
 *   WordPiece      greedy longest match first, continuation pieces "##...";
 *                  a word of more than max_word code points, or one that
 *                  cannot be covered, is one [UNK]
 *
 * What the normalizer does to each code point and how the pre-tokenizer
 * sees it is not computed here: tools/bert-convert.py probes the reference
 * library code point by code point and writes the answer into the model
 * file as runs of classes (WP_*) plus a table of mappings.  NFD's
 * canonical reordering is not done: it can only reorder marks that survive
 * the Mn filter (25 spacing marks with a combining class, e.g. U+1D165),
 * which no vocabulary piece holds (tools/bert-convert.py refuses one that
 * does), so a word with them is one [UNK] in any order.  Checked: the ids
 * of 30,000 random texts of any code points equal the reference's.
 *
 * Pure: libc only, no I/O, no allocation; about 2 KiB of stack.
 */
#ifndef ARPS_ENCODER_WORDPIECE_H
#define ARPS_ENCODER_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#define WP_MAX_WORD 256u	/* largest max_word a model may set */
#define WP_MAX_PIECE 64u	/* largest vocabulary entry, bytes */

/* Class of a code point (bits 24..31 of a run, the run's first code point in
 * bits 0..23): the normalizer's action (bits 0-1) and flags. */
enum wp_class {
	WP_IDENT = 0,	/* kept as it is */
	WP_DELETE = 1,	/* dropped (clean_text, or a nonspacing mark) */
	WP_MAP = 2,	/* replaced by its entry in the mapping table */
	WP_ACTION = 3,	/* mask of the action */
	WP_CJK = 4,	/* a word of its own (before the mapping) */
	WP_PUNCT = 8,	/* pre-tokenizer: a word of its own */
	WP_WS = 16,	/* pre-tokenizer: ends a word, dropped */
};

struct wordpiece {
	/* vocabulary: piece i is bytes[off[i] .. off[i+1]), "##" included */
	const uint32_t *off;
	const uint8_t *bytes;
	const int32_t *hash;	/* FNV-1a of the bytes, linear probing, -1 empty */
	uint32_t hash_mask, vocab, unk, max_word, max_piece;
	/* Unicode: runs (sorted by first code point, the first at 0);
	 * mappings {cp, off << 5 | len} sorted by cp, into data */
	const uint32_t *runs, *map, *data;
	size_t n_runs, n_map, n_data;
	/* special tokens matched in the raw text: {id, off, len} into
	 * added_bytes */
	const uint32_t *added;
	const uint8_t *added_bytes;
	size_t n_added, n_added_bytes;
	/* filled by wp_init: the class of each ASCII code point, the first
	 * bytes of the added tokens */
	uint8_t ascii[128];
	uint8_t added_first[32];
};

/* Check the tables the caller pointed *w at (sizes, order, bounds) and fill
 * the caches.  0, or -1 when they are not consistent. */
int wp_init(struct wordpiece *w);

/* The class (enum wp_class) of code point cp. */
unsigned wp_class(const struct wordpiece *w, uint32_t cp);

/* Word piece ids of the UTF-8 text a[0..alen) followed by b[0..blen) (a
 * model's prefix, then the text; invalid bytes read as U+FFFD, which is
 * dropped), without [CLS]/[SEP]: at most cap ids into ids, the first cap of
 * what the whole text gives (the work stops there).  Returns the number
 * written.  Either span may be NULL when its length is 0. */
size_t wp_tokenize(const struct wordpiece *w, const char *a, size_t alen, const char *b,
		   size_t blen, int32_t *ids, size_t cap);

#endif
