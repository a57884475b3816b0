/*
 * Sentence embeddings with a BERT encoder (design.md §15): all-MiniLM-L6-v2,
 * bge-small-en-v1.5 or e5-small-v2, hidden 384, 12 heads of 32, FFN 1536,
 * run in plain C over one read-only blob (mapped by encoder/model.c, built
 * by tools/bert-convert.py, mk/bert.mk).
 *
 * Pure: libc + libm, no I/O, no allocation, no clock.  All working memory is
 * the caller's scratch buffer (bert_scratch_size() bytes, any alignment)
 * plus a few KiB of stack in the tokenizer.
 *
 *   ids = [CLS] wordpiece(prefix(role) + text) [SEP], at most max_tokens
 *   x   = LN(word[id] + position[t] + token_type[0])
 *   per layer: x = LN(x + MHA(x) Wo + bo)     (12 heads x 32, 1/sqrt(32))
 *              x = LN(x + GELU(x W1 + b1) W2 + b2)    (GELU: erf form)
 *   pooling: mean over all tokens, or x[0] ([CLS]); then L2 normalise.
 * LayerNorm eps from the file (1e-12); LayerNorm, softmax and every
 * accumulation in fp32; the dense products on encoder/kernels.h.  bert_init
 * picks the fp32 products even on a CPU with AVX512_BF16: on the Sapphire
 * Rapids dev host they are faster here (83 against 55 GMAC/s in a product,
 * 31 against 40 ms for bge-small on a 60-word text) and match the
 * reference exactly (cosine 1.0000000, bf16 0.9997 at worst); a caller may
 * still set kernel = KERN_BF16 when has_bf16 and the CPU has it.
 *
 * Prefixes (the model card's): the file holds one for each role.
 *   all-MiniLM-L6-v2   none
 *   bge-small-en-v1.5  query: "Represent this sentence for searching
 *                      relevant passages: ", passage: none
 *   e5-small-v2        query: "query: ", passage: "passage: "
 * The caller names the role.  For arps (issue 34's default, to be
 * confirmed by the matching evaluation): a bio is a query and screening
 * criteria a passage, since an agent's bio looks up studies (GET
 * /studies/available).  The cards allow two variants worth measuring:
 * e5's card asks for "query: " on both sides of a symmetric task, and
 * bge's instruction is meant for short queries (without it both sides
 * are plain).  tests/unit/test_bert.c checks both roles of every model.
 *
 * Blob layout (little endian): a 128-byte header
 *   0 "ARPSBRT1"  8 u32 version  12 u32 header_size (128 + 16 nsec)
 *   16 u64 file_size  24 u32 nsec  28 u32 vocab  32 u32 hidden  36 u32 layers
 *   40 u32 heads  44 u32 ffn  48 u32 max_position  52 u32 max_tokens
 *   56 u32 pooling (enum bert_pooling)  60 u32 unk id  64 u32 cls id
 *   68 u32 sep id  72 u32 max word (code points)  76 u32 max piece (bytes)
 *   80 f32 layer norm eps  84 u32 hash size  88 char name[40] (NUL padded)
 * then nsec x {u64 offset, u64 size} (index = enum bert_section; an empty
 * section has offset = size = 0), then the sections, each 64-byte aligned.
 * Layer tensors are stacked over the layers; matrices [in][out] are packed
 * in 64-column panels (kernels.h), Q|K|V side by side in one [384][1152];
 * the *_WB sections are their bf16 copies (optional, all four or none).
 * BERT_SEC_MEANS (optional) holds the calibration means as for USE Lite
 * (encoder/embed.h's EMBED_SEC_MEANS: struct embed_means_hdr, then the
 * mean bio vector, as a query, and the mean criteria vector, as a passage,
 * BERT_DIM floats each); tools/bert-convert.py writes the file without it,
 * tools/model-means.c appends it (make bert-models).
 */
#ifndef ARPS_ENCODER_BERT_H
#define ARPS_ENCODER_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "encoder/embed.h"
#include "encoder/wordpiece.h"

#define BERT_MAGIC	"ARPSBRT1"
#define BERT_VERSION	1u
#define BERT_NSEC	32u
#define BERT_HDR	128u
#define BERT_DIM	384u	/* hidden size, the output vector length */
#define BERT_HEADS	12u
#define BERT_HEAD_DIM	32u
#define BERT_FFN	1536u
#define BERT_MAX_SEQ	512u	/* largest max_tokens a file may set */
#define BERT_MAX_LAYERS	24u
#define BERT_MEANS_SIZE	(EMBED_MEANS_HDR + 2u * BERT_DIM * 4u)

enum bert_status {
	BERT_OK = 0,
	BERT_EFORMAT = -1,	/* blob is not a valid model file */
	BERT_EARG = -3,		/* bad argument (NULL, role, id out of range) */
};

enum bert_pooling { BERT_POOL_MEAN = 0, BERT_POOL_CLS = 1 };

enum bert_role { BERT_QUERY = 0, BERT_PASSAGE = 1 };

enum bert_section {
	BERT_SEC_WORD_EMB = 0,	/* f32 [vocab][384] */
	BERT_SEC_POS_EMB,	/* f32 [max_tokens][384] */
	BERT_SEC_TYPE_EMB,	/* f32 [384], token type 0 */
	BERT_SEC_EMB_LN_G, BERT_SEC_EMB_LN_B,	/* f32 [384] */
	BERT_SEC_QKV_W,		/* f32 [layers] packed [384][1152] */
	BERT_SEC_QKV_B,		/* f32 [layers][1152] */
	BERT_SEC_OUT_W,		/* f32 [layers] packed [384][384] */
	BERT_SEC_OUT_B,
	BERT_SEC_LN1_G, BERT_SEC_LN1_B,		/* after attention */
	BERT_SEC_FF1_W,		/* f32 [layers] packed [384][1536] */
	BERT_SEC_FF1_B,
	BERT_SEC_FF2_W,		/* f32 [layers] packed [1536][384] */
	BERT_SEC_FF2_B,
	BERT_SEC_LN2_G, BERT_SEC_LN2_B,		/* after the FFN */
	BERT_SEC_QKV_WB, BERT_SEC_OUT_WB, BERT_SEC_FF1_WB, BERT_SEC_FF2_WB, /* u16 bf16 */
	BERT_SEC_VOCAB_OFF,	/* u32 [vocab + 1] */
	BERT_SEC_VOCAB_BYTES,	/* UTF-8 of every piece, "##" included */
	BERT_SEC_VOCAB_HASH,	/* i32 [hash size] */
	BERT_SEC_UNI_RUNS,	/* u32 first code point | class << 24 */
	BERT_SEC_UNI_MAP,	/* u32 pairs {cp, off << 5 | len} */
	BERT_SEC_UNI_DATA,	/* u32 code points */
	BERT_SEC_ADDED,		/* u32 triples {id, off, len} */
	BERT_SEC_ADDED_BYTES,
	BERT_SEC_PREFIX_QUERY,	/* UTF-8, empty or ending in a space */
	BERT_SEC_PREFIX_PASSAGE,
	BERT_SEC_MEANS,		/* struct embed_means_hdr, f32 [384] mean bio,
				 * f32 [384] mean criteria; optional */
	BERT_SEC_COUNT
};

struct bert_layer {
	const float *qkv_w, *qkv_b, *out_w, *out_b, *ln1_g, *ln1_b;
	const float *ff1_w, *ff1_b, *ff2_w, *ff2_b, *ln2_g, *ln2_b;
	const uint16_t *qkv_wb, *out_wb, *ff1_wb, *ff2_wb;	/* or NULL */
};

struct bert_model {
	char name[40];		/* NUL terminated */
	uint32_t layers, max_tokens, pooling, cls, sep;
	float ln_eps;
	const float *word, *pos, *type0, *emb_g, *emb_b;
	struct bert_layer layer[BERT_MAX_LAYERS];
	struct wordpiece wp;
	const char *prefix[2];	/* by enum bert_role */
	size_t prefix_len[2];
	int kernel;		/* enum kern_isa chosen by bert_init (never
				 * KERN_BF16, see below); any value up to
				 * kern_detect(1) works */
	int has_bf16;		/* the file has the bf16 copies */
	/* calibration means (BERT_SEC_MEANS), or all three NULL */
	const struct embed_means_hdr *means;
	const float *mean_bio, *mean_crit;	/* BERT_DIM each, not unit length */
};

/* Validate the blob (header, section bounds and sizes, tokenizer tables)
 * and fill *m with pointers into it; the blob must stay mapped while *m is
 * used.  Picks the fastest fp32 kernel the CPU runs.  BERT_OK or
 * BERT_EFORMAT. */
enum bert_status bert_init(struct bert_model *m, const void *blob, size_t len);

/* Bytes of scratch bert_embed/bert_embed_tokens need (about 12 MiB at 512
 * tokens). */
size_t bert_scratch_size(const struct bert_model *m);

/* The ids the encoder reads for text as role: [CLS], the pieces of the
 * role's prefix and the text cut to max_tokens - 2, [SEP].  ids holds
 * m->max_tokens; returns how many were written (2 at least), or 0 on a bad
 * argument. */
size_t bert_tokens(const struct bert_model *m, int role, const char *utf8, size_t len,
		   int32_t *ids);

/* Embed one id sequence (1..max_tokens ids, each < vocab) into out, unit
 * length.  BERT_OK or BERT_EARG. */
enum bert_status bert_embed_tokens(const struct bert_model *m, const int32_t *ids, size_t n,
		      void *scratch, float out[BERT_DIM]);

/* Embed UTF-8 text (need not be NUL-terminated; invalid bytes read as
 * U+FFFD, dropped) as role (enum bert_role).  Every text, the empty one
 * too, gives a unit vector.  BERT_OK or BERT_EARG. */
enum bert_status bert_embed(const struct bert_model *m, int role, const char *utf8, size_t len,
	       void *scratch, float out[BERT_DIM]);

#endif
