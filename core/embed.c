/* USE Lite forward pass over the mapped model blob; see embed.h. */
#include "core/embed.h"
#include "core/tokenize.h"

#include <math.h>
#include <string.h>

/* The matmul and attention loops want a*b+c fused; ISO C mode turns that
 * off by default.  Results stay well inside the 0.999 cosine contract. */
#pragma GCC optimize("fp-contract=fast")

#define D0 256u
#define D1 512u
#define FF 1536u
#define HEADS 4u
#define NR 64u          /* panel width of packed matrices */

typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4)));

enum { G_ACCUM = 1, G_RELU = 2 };

/* ------------------------------------------------------------ matmul
 * Y[T][N] (+)= X[T][K] * W[K][N] + bias, W packed in 64-column panels.
 * Each panel (K x 64 floats, <= 384 KiB) is streamed once per MR rows of X;
 * the MR x 64 accumulator block lives in registers. */

static void gemm_store(float *y, const float *acc, const float *bias, size_t n,
		       int flags)
{
	for (size_t j = 0; j < n; j++) {
		float v = acc[j] + bias[j];
		if (flags & G_ACCUM)
			v += y[j];
		if ((flags & G_RELU) && v < 0)
			v = 0;
		y[j] = v;
	}
}

typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));
typedef float v8u __attribute__((vector_size(32), aligned(4)));
typedef float v4u __attribute__((vector_size(16), aligned(4)));

/* One kernel per instruction set: VT is the native vector (VW floats), a
 * column block is 4 vectors (COLS = 4 * VW columns of a 64-wide panel), and
 * MR rows of X share each loaded block of W. */
#define GEMM_KERNEL(NAME, ATTR, VT, VW, MR)                                    \
	ATTR static void NAME(float *Y, const float *X, size_t T, size_t K,    \
			      const float *W, size_t N, const float *bias,     \
			      int flags)                                       \
	{                                                                      \
		const size_t cols = 4 * VW;                                    \
		for (size_t p = 0; p < N / NR; p++)                            \
		for (size_t cb = 0; cb < NR; cb += cols) {                     \
			const float *wp = W + p * K * NR + cb;                 \
			size_t col = p * NR + cb;                              \
			size_t t = 0;                                          \
			for (; t + MR <= T; t += MR) {                         \
				VT acc[MR][4];                                 \
				_Pragma("GCC unroll 8")                        \
				for (size_t r = 0; r < MR; r++)                \
					acc[r][0] = acc[r][1] = acc[r][2] =    \
						acc[r][3] = (VT){ 0 };         \
				const float *x = X + t * K;                    \
				for (size_t k = 0; k < K; k++) {               \
					const VT *w = (const VT *)(wp + k * NR); \
					VT w0 = w[0], w1 = w[1], w2 = w[2],    \
					   w3 = w[3];                          \
					_Pragma("GCC unroll 8")                \
					for (size_t r = 0; r < MR; r++) {      \
						float xv = x[r * K + k];       \
						acc[r][0] += w0 * xv;          \
						acc[r][1] += w1 * xv;          \
						acc[r][2] += w2 * xv;          \
						acc[r][3] += w3 * xv;          \
					}                                      \
				}                                              \
				for (size_t r = 0; r < MR; r++)                \
					gemm_store(Y + (t + r) * N + col,      \
						   (const float *)acc[r],      \
						   bias + col, cols, flags);   \
			}                                                      \
			for (; t < T; t++) {                                   \
				VT acc[4] = { { 0 } };                         \
				const float *x = X + t * K;                    \
				for (size_t k = 0; k < K; k++) {               \
					const VT *w = (const VT *)(wp + k * NR); \
					float xv = x[k];                       \
					acc[0] += w[0] * xv;                   \
					acc[1] += w[1] * xv;                   \
					acc[2] += w[2] * xv;                   \
					acc[3] += w[3] * xv;                   \
				}                                              \
				gemm_store(Y + t * N + col, (const float *)acc, \
					   bias + col, cols, flags);           \
			}                                                      \
		}                                                              \
	}

GEMM_KERNEL(gemm_generic, , v4, 4, 2)
#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_X86_KERNELS 1
GEMM_KERNEL(gemm_avx2, __attribute__((target("avx2,fma"))), v8, 8, 2)
GEMM_KERNEL(gemm_avx512, __attribute__((target("avx512f,fma"))), v16, 16, 6)
#endif

static void gemm(const struct embed_model *m, float *Y, const float *X, size_t T,
		 size_t K, const float *W, size_t N, const float *bias, int flags)
{
	switch (m->kernel) {
#ifdef HAVE_X86_KERNELS
	case 2:
		gemm_avx512(Y, X, T, K, W, N, bias, flags);
		return;
	case 1:
		gemm_avx2(Y, X, T, K, W, N, bias, flags);
		return;
#endif
	default:
		gemm_generic(Y, X, T, K, W, N, bias, flags);
	}
}

/* ------------------------------------------------------------ pieces */

static void layer_norm(float *y, const float *x, size_t T, size_t d,
		       const float *g, const float *b, float eps)
{
	for (size_t t = 0; t < T; t++) {
		const float *xr = x + t * d;
		float *yr = y + t * d;
		float s = 0;
		for (size_t j = 0; j < d; j++)
			s += xr[j];
		float mean = s / (float)d;
		float v = 0;
		for (size_t j = 0; j < d; j++) {
			float c = xr[j] - mean;
			v += c * c;
		}
		float inv = 1.0f / sqrtf(v / (float)d + eps);
		for (size_t j = 0; j < d; j++)
			yr[j] = g[j] * inv * (xr[j] - mean) + b[j];
	}
}

/* Multi-head self attention of one layer over qkv = LN(x) Wqkv + b (rows of
 * 3*din: q | k | v, head h at columns h*dh of each):
 *   out[T][din] = concat_h softmax((q_h * scale) k_h^T) v_h.
 * K of the head is transposed into kt[dh][tp] (tp = T rounded up to 16) so
 * both products are broadcast-multiply-add loops over whole vectors. */
#define ATT_KERNEL(NAME, ATTR, VT, VTU, VW)                                                 \
	ATTR static void NAME(const float *qkv, size_t T, size_t din,          \
			      float scale, float *out, float *prob, float *kt) \
	{                                                                      \
		size_t dh = din / HEADS, st = 3 * din;                         \
		size_t tp = (T + 15) & ~(size_t)15, nv = tp / VW;              \
		for (size_t h = 0; h < HEADS; h++) {                           \
			for (size_t j = 0; j < tp; j++)                        \
				for (size_t d = 0; d < dh; d++)                \
					kt[d * tp + j] = j < T ?               \
						qkv[j * st + din + h * dh + d] : 0; \
			for (size_t i = 0; i < T; i++) {                       \
				const float *qi = qkv + i * st + h * dh;       \
				VT *sv = (VT *)prob;                         \
				for (size_t c = 0; c < nv; c++)                \
					sv[c] = (VT){ 0 };                    \
				for (size_t d = 0; d < dh; d++) {              \
					float qd = qi[d] * scale;              \
					const VT *kr = (const VT *)(kt + d * tp); \
					for (size_t c = 0; c < nv; c++)        \
						sv[c] += kr[c] * qd;           \
				}                                              \
				float mx = prob[0];                            \
				for (size_t j = 1; j < T; j++)                 \
					if (prob[j] > mx)                      \
						mx = prob[j];                  \
				float sum = 0;                                 \
				for (size_t j = 0; j < T; j++) {               \
					prob[j] = expf(prob[j] - mx);          \
					sum += prob[j];                        \
				}                                              \
				float inv = 1.0f / sum;                        \
				VT acc[128 / VW];                                    \
				size_t nc = dh / VW;                           \
				for (size_t c = 0; c < nc; c++)                \
					acc[c] = (VT){ 0 };                   \
				for (size_t j = 0; j < T; j++) {               \
					const float *vj = qkv + j * st + 2 * din + h * dh; \
					float p = prob[j] * inv;               \
					for (size_t c = 0; c < nc; c++)        \
						acc[c] += *(const VTU *)(vj + VW * c) * p; \
				}                                              \
				memcpy(out + i * din + h * dh, acc, dh * sizeof(float)); \
			}                                                      \
		}                                                              \
	}

ATT_KERNEL(att_generic, , v4, v4u, 4)
#ifdef HAVE_X86_KERNELS
ATT_KERNEL(att_avx2, __attribute__((target("avx2,fma"))), v8, v8u, 8)
ATT_KERNEL(att_avx512, __attribute__((target("avx512f,fma"))), v16, v16u, 16)
#endif

static void attention(const struct embed_model *m, const float *qkv, size_t T,
		      size_t din, float scale, float *out, float *prob, float *kt)
{
	switch (m->kernel) {
#ifdef HAVE_X86_KERNELS
	case 2:
		att_avx512(qkv, T, din, scale, out, prob, kt);
		return;
	case 1:
		att_avx2(qkv, T, din, scale, out, prob, kt);
		return;
#endif
	default:
		att_generic(qkv, T, din, scale, out, prob, kt);
	}
}

/* ------------------------------------------------------------ forward */

struct scratch {
	float *x0, *h, *ln, *qkv, *att, *ff, *prob, *kt, *mff, *pool, *proj, *acc;
	int32_t *ids;
};

static void carve(void *mem, struct scratch *s)
{
	uintptr_t a = ((uintptr_t)mem + 63) & ~(uintptr_t)63;
	float *f = (float *)a;
	s->x0 = f; f += EMBED_MAX_SEQ * D0;
	s->h = f; f += EMBED_MAX_SEQ * D1;
	s->ln = f; f += EMBED_MAX_SEQ * D1;
	s->qkv = f; f += EMBED_MAX_SEQ * 3 * D1;
	s->att = f; f += EMBED_MAX_SEQ * D1;
	s->ff = f; f += EMBED_MAX_SEQ * FF;
	s->prob = f; f += EMBED_MAX_SEQ;
	s->kt = f; f += EMBED_MAX_SEQ * (D1 / HEADS);
	s->mff = f; f += FF;
	s->pool = f; f += D1;
	s->proj = f; f += D1;
	s->acc = f; f += D1;
	s->ids = (int32_t *)f;
}

size_t embed_scratch_size(const struct embed_model *m)
{
	(void)m;
	size_t floats = EMBED_MAX_SEQ * (D0 + D1 + D1 + 3 * D1 + D1 + FF + 1 + D1 / HEADS) +
			FF + 4 * D1;
	return 64 + floats * sizeof(float) + EMBED_MAX_TOKENS * sizeof(int32_t);
}

static void forward(const struct embed_model *m, const int32_t *ids, size_t T,
		    struct scratch *s, float out[EMBED_DIM])
{
	const struct embed_layer *L0 = &m->layer[0], *L1 = &m->layer[1];

	/* token + timing signal: E + (E + timing) as the graph adds them */
	for (size_t t = 0; t < T; t++) {
		const float *e = m->emb + (size_t)ids[t] * D0;
		const float *ts = m->timing + t * D0;
		float *x = s->x0 + t * D0;
		for (size_t j = 0; j < D0; j++)
			x[j] = e[j] + (e[j] + ts[j]);
	}

	/* layer 0 */
	gemm(m, s->h, s->x0, T, D0, m->res_w, D1, m->res_b, 0);
	layer_norm(s->ln, s->x0, T, D0, L0->p[EMBED_L_LN1_G], L0->p[EMBED_L_LN1_B], m->ln_eps);
	gemm(m, s->qkv, s->ln, T, D0, L0->p[EMBED_L_QKV_W], 3 * D0, L0->p[EMBED_L_QKV_B], 0);
	attention(m, s->qkv, T, D0, L0->scale, s->att, s->prob, s->kt);
	gemm(m, s->h, s->att, T, D0, L0->p[EMBED_L_OUT_W], D1, L0->p[EMBED_L_OUT_B], G_ACCUM);
	layer_norm(s->ln, s->h, T, D1, L0->p[EMBED_L_LN2_G], L0->p[EMBED_L_LN2_B], m->ln_eps);
	gemm(m, s->ff, s->ln, T, D1, L0->p[EMBED_L_FF1_W], FF, L0->p[EMBED_L_FF1_B], G_RELU);
	gemm(m, s->h, s->ff, T, FF, L0->p[EMBED_L_FF2_W], D1, L0->p[EMBED_L_FF2_B], G_ACCUM);

	/* layer 1 */
	layer_norm(s->ln, s->h, T, D1, L1->p[EMBED_L_LN1_G], L1->p[EMBED_L_LN1_B], m->ln_eps);
	gemm(m, s->qkv, s->ln, T, D1, L1->p[EMBED_L_QKV_W], 3 * D1, L1->p[EMBED_L_QKV_B], 0);
	attention(m, s->qkv, T, D1, L1->scale, s->att, s->prob, s->kt);
	gemm(m, s->h, s->att, T, D1, L1->p[EMBED_L_OUT_W], D1, L1->p[EMBED_L_OUT_B], G_ACCUM);
	layer_norm(s->ln, s->h, T, D1, L1->p[EMBED_L_LN2_G], L1->p[EMBED_L_LN2_B], m->ln_eps);
	gemm(m, s->ff, s->ln, T, D1, L1->p[EMBED_L_FF1_W], FF, L1->p[EMBED_L_FF1_B], G_RELU);

	/* mean pooling; the last FFN projection is linear, so it is applied
	 * once to the mean activation: mean(h + f W2 + b2) = mean h + (mean f) W2 + b2 */
	float inv = 1.0f / (float)T;
	for (size_t j = 0; j < FF; j++)
		s->mff[j] = 0;
	for (size_t j = 0; j < D1; j++)
		s->pool[j] = 0;
	for (size_t t = 0; t < T; t++) {
		const float *f = s->ff + t * FF, *h = s->h + t * D1;
		for (size_t j = 0; j < FF; j++)
			s->mff[j] += f[j];
		for (size_t j = 0; j < D1; j++)
			s->pool[j] += h[j];
	}
	for (size_t j = 0; j < FF; j++)
		s->mff[j] *= inv;
	for (size_t j = 0; j < D1; j++)
		s->pool[j] *= inv;
	gemm(m, s->pool, s->mff, 1, FF, L1->p[EMBED_L_FF2_W], D1, L1->p[EMBED_L_FF2_B], G_ACCUM);

	/* tanh projection + L2 normalisation */
	gemm(m, s->proj, s->pool, 1, D1, m->tanh_w, D1, m->tanh_b, 0);
	float ss = 0;
	for (size_t j = 0; j < D1; j++) {
		float v = tanhf(s->proj[j]);
		out[j] = v;
		ss += v * v;
	}
	float r = 1.0f / sqrtf(ss > m->l2_eps ? ss : m->l2_eps);
	for (size_t j = 0; j < D1; j++)
		out[j] *= r;
}

int embed_tokens(const struct embed_model *m, const int32_t *ids, size_t n,
		 void *scratch, float out[EMBED_DIM])
{
	struct scratch s;
	if (!m || !scratch || !out || (n && !ids))
		return EMBED_EARG;
	if (n == 0) {
		memset(out, 0, EMBED_DIM * sizeof(float));
		return EMBED_EEMPTY;
	}
	if (n > EMBED_MAX_SEQ)
		n = EMBED_MAX_SEQ;
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || (uint32_t)ids[i] >= m->emb_rows)
			return EMBED_EARG;
	carve(scratch, &s);
	forward(m, ids, n, &s, out);
	return EMBED_OK;
}

size_t embed_chunk_end(const struct embed_model *m, const int32_t *ids,
		       size_t start, size_t n)
{
	if (n - start <= EMBED_MAX_SEQ)
		return n;
	for (size_t b = start + EMBED_MAX_SEQ; b > start; b--) {
		int32_t id = ids[b - 1];
		if (id <= 0 || (uint32_t)id >= m->vocab)
			continue;
		uint32_t e = m->piece_off[id + 1];
		if (e == m->piece_off[id])
			continue;
		uint32_t c = m->piece_cps[e - 1];
		if (c == '.' || c == '!' || c == '?')
			return b;
	}
	return start + EMBED_MAX_SEQ;
}

int embed_text(const struct embed_model *m, const char *utf8, size_t len,
	       void *scratch, float out[EMBED_DIM])
{
	struct scratch s;
	size_t total, n;

	if (!m || !scratch || !out || (!utf8 && len))
		return EMBED_EARG;
	carve(scratch, &s);
	if (tokenize(m, utf8, len, s.ids, EMBED_MAX_TOKENS, &total) != 0)
		return EMBED_EARG;
	n = total < EMBED_MAX_TOKENS ? total : EMBED_MAX_TOKENS;
	if (n == 0) {
		memset(out, 0, EMBED_DIM * sizeof(float));
		return EMBED_EEMPTY;
	}
	if (n <= EMBED_MAX_SEQ) {
		forward(m, s.ids, n, &s, out);
		return EMBED_OK;
	}
	for (size_t j = 0; j < D1; j++)
		s.acc[j] = 0;
	size_t chunks = 0;
	for (size_t st = 0; st < n;) {
		size_t e = embed_chunk_end(m, s.ids, st, n);
		forward(m, s.ids + st, e - st, &s, out);
		for (size_t j = 0; j < D1; j++)
			s.acc[j] += out[j];
		chunks++;
		st = e;
	}
	float ss = 0;
	for (size_t j = 0; j < D1; j++) {
		out[j] = s.acc[j] / (float)chunks;
		ss += out[j] * out[j];
	}
	float r = ss > 0 ? 1.0f / sqrtf(ss) : 0;
	for (size_t j = 0; j < D1; j++)
		out[j] *= r;
	return EMBED_OK;
}

float embed_cosine(const float *a, const float *b)
{
	float ab = 0, aa = 0, bb = 0;
	for (size_t i = 0; i < EMBED_DIM; i++) {
		ab += a[i] * b[i];
		aa += a[i] * a[i];
		bb += b[i] * b[i];
	}
	if (aa <= 0 || bb <= 0)
		return 0;
	return ab / (sqrtf(aa) * sqrtf(bb));
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

struct sec {
	const unsigned char *p;
	uint64_t size;
};

static int get_sec(const unsigned char *b, size_t len, unsigned i, uint64_t want,
		   uint64_t unit, struct sec *out)
{
	uint64_t off = rd64(b + 64 + 16 * i), size = rd64(b + 64 + 16 * i + 8);
	if (off % 64 || off > len || size > len - off || size == 0)
		return -1;
	if (want && size != want)
		return -1;
	if (unit && size % unit)
		return -1;
	out->p = b + off;
	out->size = size;
	return 0;
}

int embed_init(struct embed_model *m, const void *blob, size_t len)
{
	const unsigned char *b = blob;
	struct sec s;
	uint32_t hdr, vocab, rows, hs;

	if (!m || !blob || len < 64 + 16 * EMBED_NSEC || ((uintptr_t)blob % 64))
		return EMBED_EFORMAT;
	memset(m, 0, sizeof *m);
	if (memcmp(b, EMBED_MAGIC, 8) != 0 || rd32(b + 8) != EMBED_VERSION)
		return EMBED_EFORMAT;
	hdr = rd32(b + 12);
	if (hdr != 64 + 16 * EMBED_NSEC || rd64(b + 16) != len)
		return EMBED_EFORMAT;
	vocab = rd32(b + 24);
	rows = rd32(b + 28);
	if (rd32(b + 32) != D0 || rd32(b + 36) != D1 || rd32(b + 40) != FF ||
	    rd32(b + 44) != HEADS || rd32(b + 48) != EMBED_MAX_SEQ ||
	    rd32(b + 60) != EMBED_NSEC || vocab < 7 || rows < vocab)
		return EMBED_EFORMAT;
	m->max_piece = rd32(b + 52);
	hs = rd32(b + 56);
	if (m->max_piece == 0 || m->max_piece > 64 || hs < vocab || (hs & (hs - 1)))
		return EMBED_EFORMAT;
	m->vocab = vocab;
	m->emb_rows = rows;
	m->hash_mask = hs - 1;

#define F(i, n, dst)                                                   \
	do {                                                           \
		if (get_sec(b, len, (i), (uint64_t)(n) * 4, 0, &s))    \
			return EMBED_EFORMAT;                          \
		(dst) = (const void *)s.p;                             \
	} while (0)
	F(EMBED_SEC_EMB, (uint64_t)rows * D0, m->emb);
	F(EMBED_SEC_TIMESCALE, D0 / 2, m->timescale);
	F(EMBED_SEC_TIMING, EMBED_MAX_SEQ * D0, m->timing);
	F(EMBED_SEC_L0_RES_W, D0 * D1, m->res_w);
	F(EMBED_SEC_L0_RES_B, D1, m->res_b);
	for (unsigned l = 0; l < 2; l++) {
		unsigned base = l ? EMBED_SEC_L1 : EMBED_SEC_L0;
		size_t d = l ? D1 : D0;
		struct embed_layer *L = &m->layer[l];
		L->din = (uint32_t)d;
		F(base + EMBED_L_LN1_G, d, L->p[EMBED_L_LN1_G]);
		F(base + EMBED_L_LN1_B, d, L->p[EMBED_L_LN1_B]);
		F(base + EMBED_L_QKV_W, d * 3 * d, L->p[EMBED_L_QKV_W]);
		F(base + EMBED_L_QKV_B, 3 * d, L->p[EMBED_L_QKV_B]);
		F(base + EMBED_L_OUT_W, d * D1, L->p[EMBED_L_OUT_W]);
		F(base + EMBED_L_OUT_B, D1, L->p[EMBED_L_OUT_B]);
		F(base + EMBED_L_LN2_G, D1, L->p[EMBED_L_LN2_G]);
		F(base + EMBED_L_LN2_B, D1, L->p[EMBED_L_LN2_B]);
		F(base + EMBED_L_FF1_W, D1 * FF, L->p[EMBED_L_FF1_W]);
		F(base + EMBED_L_FF1_B, FF, L->p[EMBED_L_FF1_B]);
		F(base + EMBED_L_FF2_W, FF * D1, L->p[EMBED_L_FF2_W]);
		F(base + EMBED_L_FF2_B, D1, L->p[EMBED_L_FF2_B]);
	}
	F(EMBED_SEC_TANH_W, D1 * D1, m->tanh_w);
	F(EMBED_SEC_TANH_B, D1, m->tanh_b);
	const float *sc;
	F(EMBED_SEC_SCALARS, 4, sc);
	m->ln_eps = sc[0];
	m->l2_eps = sc[1];
	m->layer[0].scale = sc[2];
	m->layer[1].scale = sc[3];
	if (get_sec(b, len, EMBED_SEC_SCORES, (uint64_t)vocab * 8, 0, &s))
		return EMBED_EFORMAT;
	m->scores = (const void *)s.p;
	F(EMBED_SEC_PIECE_OFF, vocab + 1, m->piece_off);
	if (get_sec(b, len, EMBED_SEC_PIECE_CPS, 0, 4, &s))
		return EMBED_EFORMAT;
	m->piece_cps = (const void *)s.p;
	if (m->piece_off[0] != 0 || m->piece_off[vocab] != s.size / 4 ||
	    m->piece_off[1] != 1)   /* id 0 (unknown) is one code point */
		return EMBED_EFORMAT;
	for (uint32_t i = 0; i < vocab; i++)
		if (m->piece_off[i + 1] < m->piece_off[i])
			return EMBED_EFORMAT;
	F(EMBED_SEC_HASH, hs, m->hash);
	for (uint32_t i = 0; i < hs; i++)
		if (m->hash[i] >= (int32_t)vocab)
			return EMBED_EFORMAT;
#undef F
#define T(i, unit, dst, cnt)                                           \
	do {                                                           \
		if (get_sec(b, len, (i), 0, (unit), &s))               \
			return EMBED_EFORMAT;                          \
		(dst) = (const void *)s.p;                             \
		(cnt) = (size_t)(s.size / (unit));                     \
	} while (0)
	size_t ndata;
	T(EMBED_SEC_NFKD_IDX, 8, m->nfkd_idx, m->n_nfkd);
	T(EMBED_SEC_NFKD_DATA, 4, m->nfkd_data, ndata);
	for (size_t i = 0; i < m->n_nfkd; i++) {
		uint32_t v = m->nfkd_idx[2 * i + 1];
		if ((v & 31) == 0 || (v >> 5) + (v & 31) > ndata)
			return EMBED_EFORMAT;
	}
	T(EMBED_SEC_CCC, 8, m->ccc, m->n_ccc);
	T(EMBED_SEC_COMPOSE, 12, m->compose, m->n_compose);
	T(EMBED_SEC_SECOND, 4, m->second, m->n_second);
#undef T

	m->kernel = 0;
#ifdef HAVE_X86_KERNELS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		m->kernel = 2;
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		m->kernel = 1;
#endif
	return EMBED_OK;
}
