/* BERT encoder forward pass over the mapped model blob; see bert.h. */
#include "encoder/bert.h"
#include "encoder/kernels.h"

#include <math.h>
#include <string.h>

#pragma GCC optimize("fp-contract=fast")

#define H BERT_DIM
#define DH BERT_HEAD_DIM
#define F BERT_FFN
#define NR KERN_NR
#define QKV (3 * BERT_DIM)

_Static_assert(BERT_SEC_COUNT <= BERT_NSEC, "section table too small");
_Static_assert(BERT_SEC_PREFIX_PASSAGE == 30, "tools/bert-convert.py numbers the sections");
_Static_assert(BERT_SEC_MEANS == 31, "tools/model-means.c appends section 31");
_Static_assert(sizeof(struct embed_means_hdr) == EMBED_MEANS_HDR, "means header");
_Static_assert(BERT_HEADS * BERT_HEAD_DIM == BERT_DIM, "heads");

/* ------------------------------------------------------------ scratch */

struct scratch {
	float *x, *qkv, *ctx, *ff, *prob, *kt, *vp, *vo, *pool;
	uint32_t *xb;
	int32_t *ids;
};

static size_t round64(size_t n)
{
	return (n + NR - 1) / NR * NR;
}

/* Floats of each buffer for up to T tokens, in carve's order. */
static size_t scratch_floats(size_t T, size_t *xb_words)
{
	size_t tp = round64(T);
	*xb_words = T * F / 2;
	return T * H + T * QKV + T * H + T * F + T * tp + DH * tp + 2 * T * NR + H;
}

static void carve(const struct bert_model *m, void *mem, struct scratch *s)
{
	size_t T = m->max_tokens, tp = round64(T), xbw;
	uintptr_t a = ((uintptr_t)mem + 63) & ~(uintptr_t)63;
	float *f = (float *)a;

	(void)scratch_floats(T, &xbw);
	s->x = f; f += T * H;
	s->qkv = f; f += T * QKV;
	s->ctx = f; f += T * H;
	s->ff = f; f += T * F;
	s->prob = f; f += T * tp;
	s->kt = f; f += DH * tp;
	s->vp = f; f += T * NR;
	s->vo = f; f += T * NR;
	s->pool = f; f += H;
	s->xb = (uint32_t *)f; f += xbw;
	s->ids = (int32_t *)f;
}

size_t bert_scratch_size(const struct bert_model *m)
{
	size_t xbw, floats;

	if (!m)
		return 0;
	floats = scratch_floats(m->max_tokens, &xbw);
	return 64 + (floats + xbw) * sizeof(float) + m->max_tokens * sizeof(int32_t);
}

/* ------------------------------------------------------------ forward */

/* Y[T][N] (+)= X[T][K] W + b: bf16 products when the kernel and the copy
 * allow, else fp32. */
static void dense(const struct bert_model *m, struct scratch *s, float *Y, const float *X,
		  size_t T, size_t K, const float *W, const uint16_t *Wb, size_t N,
		  const float *bias, int flags)
{
	if (m->kernel == KERN_BF16 && Wb) {
		kern_to_bf16(m->kernel, s->xb, X, K, T, K);
		kern_gemm_bf16(m->kernel, Y, N, s->xb, T, K, Wb, N, bias, flags);
		return;
	}
	kern_gemm(m->kernel, Y, N, X, K, T, K, W, N, bias, flags);
}

/* ctx[0..Tq) = concat over heads of softmax(q k^T / sqrt(32)) v, from
 * qkv[T][1152] (q | k | v, head h at columns 32h of each): K^T of a head
 * (times the scale) goes into 64-column panels kt (T rounded up, zero
 * padded), V into one panel vp whose columns 32..63 stay zero, so both
 * products run on the fp32 kernel; vo receives the 64 columns. */
static void attention(const struct bert_model *m, struct scratch *s, size_t T, size_t Tq)
{
	const float scale = 1.0f / sqrtf((float)DH);
	size_t tp = round64(T);

	memset(s->vp, 0, T * NR * sizeof(float));
	for (size_t h = 0; h < BERT_HEADS; h++) {
		for (size_t j = 0; j < tp; j++) {
			float *k = s->kt + (j / NR) * DH * NR + j % NR;
			const float *src = s->qkv + j * QKV + H + h * DH;
			for (size_t d = 0; d < DH; d++)
				k[d * NR] = j < T ? src[d] * scale : 0;
		}
		for (size_t j = 0; j < T; j++)
			memcpy(s->vp + j * NR, s->qkv + j * QKV + 2 * H + h * DH,
			       DH * sizeof(float));
		kern_gemm(m->kernel, s->prob, tp, s->qkv + h * DH, QKV, Tq, DH, s->kt, tp, NULL, 0);
		kern_softmax(m->kernel, s->prob, tp, Tq, T);
		kern_gemm(m->kernel, s->vo, NR, s->prob, tp, Tq, T, s->vp, NR, NULL, 0);
		for (size_t t = 0; t < Tq; t++)
			memcpy(s->ctx + t * H + h * DH, s->vo + t * NR, DH * sizeof(float));
	}
}

static void forward(const struct bert_model *m, const int32_t *ids, size_t T,
		    struct scratch *s, float out[BERT_DIM])
{
	for (size_t t = 0; t < T; t++) {
		const float *w = m->word + (size_t)ids[t] * H, *p = m->pos + t * H;
		float *x = s->x + t * H;
		for (size_t j = 0; j < H; j++)
			x[j] = w[j] + p[j] + m->type0[j];
	}
	kern_layer_norm(m->kernel, s->x, s->x, T, H, m->emb_g, m->emb_b, m->ln_eps);

	for (uint32_t l = 0; l < m->layers; l++) {
		const struct bert_layer *L = &m->layer[l];
		/* [CLS] pooling reads row 0 only: the last layer's attention
		 * and FFN run for that row (its keys and values for all) */
		size_t Tq = (l + 1 == m->layers && m->pooling == BERT_POOL_CLS) ? 1 : T;

		dense(m, s, s->qkv, s->x, T, H, L->qkv_w, L->qkv_wb, QKV, L->qkv_b, 0);
		attention(m, s, T, Tq);
		dense(m, s, s->x, s->ctx, Tq, H, L->out_w, L->out_wb, H, L->out_b, KERN_ACCUM);
		kern_layer_norm(m->kernel, s->x, s->x, Tq, H, L->ln1_g, L->ln1_b, m->ln_eps);
		dense(m, s, s->ff, s->x, Tq, H, L->ff1_w, L->ff1_wb, F, L->ff1_b, 0);
		kern_gelu(m->kernel, s->ff, Tq * F);
		dense(m, s, s->x, s->ff, Tq, F, L->ff2_w, L->ff2_wb, H, L->ff2_b, KERN_ACCUM);
		kern_layer_norm(m->kernel, s->x, s->x, Tq, H, L->ln2_g, L->ln2_b, m->ln_eps);
	}

	if (m->pooling == BERT_POOL_CLS)
		memcpy(s->pool, s->x, H * sizeof(float));
	else
		kern_col_mean(m->kernel, s->pool, s->x, T, H);
	float ss = 0;
	for (size_t j = 0; j < H; j++)
		ss += s->pool[j] * s->pool[j];
	float norm = sqrtf(ss);
	float r = 1.0f / (norm > 1e-12f ? norm : 1e-12f);
	for (size_t j = 0; j < H; j++)
		out[j] = s->pool[j] * r;
}

size_t bert_tokens(const struct bert_model *m, int role, const char *utf8, size_t len,
		   int32_t *ids)
{
	size_t n;

	if (!m || !ids || (!utf8 && len) || (role != BERT_QUERY && role != BERT_PASSAGE))
		return 0;
	ids[0] = (int32_t)m->cls;
	n = wp_tokenize(&m->wp, m->prefix[role], m->prefix_len[role], utf8, len, ids + 1,
			m->max_tokens - 2);
	ids[n + 1] = (int32_t)m->sep;
	return n + 2;
}

enum bert_status bert_embed_tokens(const struct bert_model *m, const int32_t *ids, size_t n,
		      void *scratch, float out[BERT_DIM])
{
	struct scratch s;

	if (!m || !ids || !scratch || !out || n == 0 || n > m->max_tokens)
		return BERT_EARG;
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || (uint32_t)ids[i] >= m->wp.vocab)
			return BERT_EARG;
	carve(m, scratch, &s);
	forward(m, ids, n, &s, out);
	return BERT_OK;
}

enum bert_status bert_embed(const struct bert_model *m, int role, const char *utf8, size_t len,
	       void *scratch, float out[BERT_DIM])
{
	struct scratch s;
	size_t n;

	if (!m || !scratch || !out || (!utf8 && len) ||
	    (role != BERT_QUERY && role != BERT_PASSAGE))
		return BERT_EARG;
	carve(m, scratch, &s);
	n = bert_tokens(m, role, utf8, len, s.ids);
	forward(m, s.ids, n, &s, out);
	return BERT_OK;
}

/* ------------------------------------------------------------ init */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* Section i: *p and *size; want (bytes) and unit checked when non-zero.
 * An empty section (offset = size = 0) is accepted only when may_empty. */
static int sec(const unsigned char *b, size_t len, unsigned i, uint64_t want, uint64_t unit,
	       int may_empty, const void **p, size_t *size)
{
	uint64_t off = rd64(b + BERT_HDR + 16 * i), sz = rd64(b + BERT_HDR + 16 * i + 8);
	if (off == 0 && sz == 0 && may_empty) {
		*p = NULL;
		*size = 0;
		return 0;
	}
	if (off % 64 || off < BERT_HDR + 16 * BERT_NSEC || off > len || sz > len - off ||
	    sz == 0 || (want && sz != want) || (unit && sz % unit))
		return -1;
	*p = b + off;
	*size = (size_t)sz;
	return 0;
}

enum bert_status bert_init(struct bert_model *m, const void *blob, size_t len)
{
	const unsigned char *b = blob;
	const void *p;
	size_t sz;
	uint32_t vocab, L, maxpos, hs;

	if (!m || !blob || len < BERT_HDR + 16 * BERT_NSEC || ((uintptr_t)blob % 64))
		return BERT_EFORMAT;
	memset(m, 0, sizeof *m);
	if (memcmp(b, BERT_MAGIC, 8) != 0 || rd32(b + 8) != BERT_VERSION ||
	    rd32(b + 12) != BERT_HDR + 16 * BERT_NSEC || rd64(b + 16) != len ||
	    rd32(b + 24) != BERT_NSEC)
		return BERT_EFORMAT;
	vocab = rd32(b + 28);
	L = rd32(b + 36);
	maxpos = rd32(b + 48);
	m->layers = L;
	m->max_tokens = rd32(b + 52);
	m->pooling = rd32(b + 56);
	if (rd32(b + 32) != H || rd32(b + 40) != BERT_HEADS || rd32(b + 44) != F ||
	    L == 0 || L > BERT_MAX_LAYERS || vocab < 4 || m->max_tokens < 2 ||
	    m->max_tokens > BERT_MAX_SEQ || maxpos < m->max_tokens ||
	    (m->pooling != BERT_POOL_MEAN && m->pooling != BERT_POOL_CLS))
		return BERT_EFORMAT;
	m->wp.vocab = vocab;
	m->wp.unk = rd32(b + 60);
	m->cls = rd32(b + 64);
	m->sep = rd32(b + 68);
	m->wp.max_word = rd32(b + 72);
	m->wp.max_piece = rd32(b + 76);
	memcpy(&m->ln_eps, b + 80, sizeof m->ln_eps);
	hs = rd32(b + 84);
	if (m->cls >= vocab || m->sep >= vocab || !(m->ln_eps > 0 && m->ln_eps < 1e-3f) ||
	    hs == 0 || (hs & (hs - 1)))
		return BERT_EFORMAT;
	m->wp.hash_mask = hs - 1;
	memcpy(m->name, b + 88, sizeof m->name - 1);
	if (m->name[0] == '\0')
		return BERT_EFORMAT;

#define SEC(i, want, unit, empty, dst)                                          \
	do {                                                                    \
		if (sec(b, len, (i), (want), (unit), (empty), &p, &sz))         \
			return BERT_EFORMAT;                                    \
		(dst) = p;                                                      \
	} while (0)
	const uint64_t f4 = sizeof(float);
	SEC(BERT_SEC_WORD_EMB, (uint64_t)vocab * H * f4, 0, 0, m->word);
	SEC(BERT_SEC_POS_EMB, (uint64_t)m->max_tokens * H * f4, 0, 0, m->pos);
	SEC(BERT_SEC_TYPE_EMB, H * f4, 0, 0, m->type0);
	SEC(BERT_SEC_EMB_LN_G, H * f4, 0, 0, m->emb_g);
	SEC(BERT_SEC_EMB_LN_B, H * f4, 0, 0, m->emb_b);

	/* per-layer tensors: section, floats a layer, field offset */
	static const struct {
		unsigned sec;
		size_t n;
		size_t field;
	} lt[] = {
		{ BERT_SEC_QKV_W, (size_t)H * QKV, offsetof(struct bert_layer, qkv_w) },
		{ BERT_SEC_QKV_B, QKV, offsetof(struct bert_layer, qkv_b) },
		{ BERT_SEC_OUT_W, (size_t)H * H, offsetof(struct bert_layer, out_w) },
		{ BERT_SEC_OUT_B, H, offsetof(struct bert_layer, out_b) },
		{ BERT_SEC_LN1_G, H, offsetof(struct bert_layer, ln1_g) },
		{ BERT_SEC_LN1_B, H, offsetof(struct bert_layer, ln1_b) },
		{ BERT_SEC_FF1_W, (size_t)H * F, offsetof(struct bert_layer, ff1_w) },
		{ BERT_SEC_FF1_B, F, offsetof(struct bert_layer, ff1_b) },
		{ BERT_SEC_FF2_W, (size_t)F * H, offsetof(struct bert_layer, ff2_w) },
		{ BERT_SEC_FF2_B, H, offsetof(struct bert_layer, ff2_b) },
		{ BERT_SEC_LN2_G, H, offsetof(struct bert_layer, ln2_g) },
		{ BERT_SEC_LN2_B, H, offsetof(struct bert_layer, ln2_b) },
	};
	for (size_t i = 0; i < sizeof lt / sizeof lt[0]; i++) {
		const float *base;
		SEC(lt[i].sec, (uint64_t)L * lt[i].n * f4, 0, 0, base);
		for (uint32_t l = 0; l < L; l++)
			*(const float **)((char *)&m->layer[l] + lt[i].field) = base + l * lt[i].n;
	}
	/* bf16 copies: all four or none */
	static const struct {
		unsigned sec;
		size_t n;
		size_t field;
	} bt[] = {
		{ BERT_SEC_QKV_WB, (size_t)H * QKV, offsetof(struct bert_layer, qkv_wb) },
		{ BERT_SEC_OUT_WB, (size_t)H * H, offsetof(struct bert_layer, out_wb) },
		{ BERT_SEC_FF1_WB, (size_t)H * F, offsetof(struct bert_layer, ff1_wb) },
		{ BERT_SEC_FF2_WB, (size_t)F * H, offsetof(struct bert_layer, ff2_wb) },
	};
	unsigned nbf = 0;
	for (size_t i = 0; i < sizeof bt / sizeof bt[0]; i++) {
		const uint16_t *base;
		SEC(bt[i].sec, (uint64_t)L * bt[i].n * 2, 0, 1, base);
		nbf += base != NULL;
		for (uint32_t l = 0; l < L && base; l++)
			*(const uint16_t **)((char *)&m->layer[l] + bt[i].field) =
				base + l * bt[i].n;
	}
	if (nbf != 0 && nbf != 4)
		return BERT_EFORMAT;

	/* tokenizer */
	size_t nbytes;
	SEC(BERT_SEC_VOCAB_OFF, ((uint64_t)vocab + 1) * 4, 0, 0, m->wp.off);
	SEC(BERT_SEC_VOCAB_BYTES, 0, 0, 0, m->wp.bytes);
	nbytes = sz;
	if (m->wp.off[vocab] != nbytes)
		return BERT_EFORMAT;
	SEC(BERT_SEC_VOCAB_HASH, (uint64_t)hs * 4, 0, 0, m->wp.hash);
	SEC(BERT_SEC_UNI_RUNS, 0, 4, 0, m->wp.runs);
	m->wp.n_runs = sz / 4;
	SEC(BERT_SEC_UNI_MAP, 0, 8, 1, m->wp.map);
	m->wp.n_map = sz / 8;
	SEC(BERT_SEC_UNI_DATA, 0, 4, 1, m->wp.data);
	m->wp.n_data = sz / 4;
	SEC(BERT_SEC_ADDED, 0, 12, 1, m->wp.added);
	m->wp.n_added = sz / 12;
	SEC(BERT_SEC_ADDED_BYTES, 0, 0, 1, m->wp.added_bytes);
	m->wp.n_added_bytes = sz;
	if (m->wp.n_added && !m->wp.added_bytes)
		return BERT_EFORMAT;
	static const uint32_t none[1];
	if (!m->wp.added)
		m->wp.added = none;
	if (wp_init(&m->wp) != 0)
		return BERT_EFORMAT;
	for (unsigned r = 0; r < 2; r++) {
		SEC(r ? BERT_SEC_PREFIX_PASSAGE : BERT_SEC_PREFIX_QUERY, 0, 0, 1, m->prefix[r]);
		m->prefix_len[r] = sz;
		/* tokenized apart from the text: must end a word */
		if (sz && m->prefix[r][sz - 1] != ' ')
			return BERT_EFORMAT;
	}
	/* calibration means: the header's magic, finite values */
	SEC(BERT_SEC_MEANS, BERT_MEANS_SIZE, 0, 1, m->means);
	if (m->means) {
		const float *mv = (const float *)((const char *)m->means + EMBED_MEANS_HDR);
		if (memcmp(m->means->magic, EMBED_MEANS_MAGIC, 8) != 0 ||
		    m->means->n_bio == 0 || m->means->n_crit == 0)
			return BERT_EFORMAT;
		for (unsigned i = 0; i < 2 * H; i++)
			if (!isfinite(mv[i]) || fabsf(mv[i]) > 1.0f)
				return BERT_EFORMAT;
		m->mean_bio = mv;
		m->mean_crit = mv + H;
	}
#undef SEC
	/* fp32 products even on AVX512_BF16: see bert.h */
	m->kernel = kern_detect(0);
	m->has_bf16 = nbf == 4;
	return BERT_OK;
}
