/*
 * libFuzzer: the BERT tokenizer (encoder/wordpiece.c through bert_tokens)
 * on any bytes a client sends as a bio or screening criteria (make
 * fuzz-bert; needs build/model/all-minilm-l6-v2.bin from make bert-models,
 * or ARPS_BERT_MODEL).  It will run in the embedding process on every text,
 * so no input may crash, hang or read out of bounds.
 *
 * The first byte picks the role (query or passage prefix); the rest is the
 * text.  Checked beyond "no crash": 2..max_tokens ids, [CLS] first and
 * [SEP] last, every id in the vocabulary; the word pieces alone
 * (wp_tokenize with the same prefix) are the ids between [CLS] and [SEP],
 * and a buffer one id shorter gets a prefix of them; a text and the same
 * text with a space appended give the same ids; wp_class of every code
 * point the input spells is a valid class.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder/bert.h"
#include "encoder/model.h"
#include "encoder/wordpiece.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FCHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

static struct bert_file g_model;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *p = getenv("ARPS_BERT_MODEL");

	(void)argc;
	(void)argv;
	if (bert_map(p != NULL ? p : "build/model/all-minilm-l6-v2.bin", &g_model) != 0) {
		fprintf(stderr, "fuzz_wordpiece: no model (make bert-models)\n");
		abort();
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int32_t ids[BERT_MAX_SEQ], pieces[BERT_MAX_SEQ], again[BERT_MAX_SEQ];
	static char spaced[8192];
	const struct bert_model *m = &g_model.enc;
	const char *text;
	size_t len, n, np, n2, i;
	int role;

	if (size == 0)
		return 0;
	role = data[0] & 1;
	text = (const char *)data + 1;
	len = size - 1;
	n = bert_tokens(m, role, text, len, ids);
	FCHECK(n >= 2 && n <= m->max_tokens);
	FCHECK(ids[0] == (int32_t)m->cls && ids[n - 1] == (int32_t)m->sep);
	for (i = 0; i < n; i++)
		FCHECK(ids[i] >= 0 && (uint32_t)ids[i] < m->wp.vocab);
	np = wp_tokenize(&m->wp, m->prefix[role], m->prefix_len[role], text, len, pieces,
			 m->max_tokens - 2);
	FCHECK(np == n - 2 && memcmp(pieces, ids + 1, np * sizeof ids[0]) == 0);
	if (np > 0) {
		n2 = wp_tokenize(&m->wp, m->prefix[role], m->prefix_len[role], text, len, again,
				 np - 1);
		FCHECK(n2 == np - 1 && memcmp(again, pieces, n2 * sizeof ids[0]) == 0);
	}
	if (len < sizeof spaced) {
		memcpy(spaced, text, len);
		spaced[len] = ' ';
		n2 = bert_tokens(m, role, spaced, len + 1, again);
		FCHECK(n2 == n && memcmp(again, ids, n * sizeof ids[0]) == 0);
	}
	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t cp;
		memcpy(&cp, text + i, 4);
		unsigned c = wp_class(&m->wp, cp & 0x1FFFFF);
		FCHECK((c & WP_ACTION) != WP_ACTION && c < 32);
	}
	return 0;
}
