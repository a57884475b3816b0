/*
 * SentencePiece (unigram) tokenizer of the USE Lite model, bit-for-bit the
 * Tokenizer of @energetic-ai/embeddings@0.2.0 (the tfjs-models USE tokenizer):
 *
 *   1. s = NFKC(text) (String.prototype.normalize("NFKC"); tables from the
 *      model blob, generated from node's ICU by tools/model-convert.mjs);
 *   2. if s is not empty: s = "\u2581" + s with every U+0020 replaced by
 *      U+2581 (no trimming, no collapsing; tabs/newlines stay);
 *   3. Viterbi over code points with the piece scores (ids >= 6 only; a
 *      position with no matching piece yields unknown id 0 with score 0), with
 *      the JS quirks kept: a best score of exactly 0 counts as "unset", ties go
 *      to the later candidate, null scores are 0;
 *   4. runs of consecutive unknown ids collapse into one.
 *
 * Bounded memory: the lattice runs per word (pieces never hold U+2581 past
 * their first character, so no piece crosses a word start and the result is
 * identical); a word longer than 1024 code points, or a run of more than 256
 * decomposed non-starters, is split there (the only divergence from the JS).
 * Returns follow encoder/embed.h's convention (enum embed_status, or bool).
 */
#ifndef ARPS_ENCODER_TOKENIZE_H
#define ARPS_ENCODER_TOKENIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encoder/embed.h"

/* Tokenize utf8[0..len).  Writes the first min(total, max) ids to ids and the
 * total number of tokens the text has to *n (so *n > max means truncated).
 * Returns EMBED_OK, or EMBED_EARG for NULL arguments. */
enum embed_status tokenize(const struct embed_model *m, const char *utf8,
	    size_t len, int32_t *ids, size_t max, size_t *n);

/* NFKC-normalise utf8[0..len) into out as code points (same limits as above);
 * returns the number of code points (may exceed max; only max are written).
 * Exposed for tests. */
size_t tokenize_nfkc(const struct embed_model *m, const char *utf8, size_t len,
		     uint32_t *out, size_t max);

/* True when every code point of every piece in m's hash is itself a one-code-
 * point piece (then a code point that is no piece ends every candidate
 * piece: tokenize skips the lookups that cannot match), else 0.  Set once
 * by embed_init as m->chars_closed. */
bool tokenize_chars_closed(const struct embed_model *m);

#endif
