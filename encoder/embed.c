/* USE Lite forward pass over the mapped model blob; see embed.h. */
#include "encoder/embed.h"
#include "encoder/tokenize.h"
#include "encoder/kernels.h"

#include <math.h>
#include <string.h>

/* The loops below want a*b+c fused; ISO C mode turns that off by default. */
#pragma GCC optimize("fp-contract=fast")

#define D0 256u
#define D1 512u
#define FF 1536u
#define HEADS 4u
#define NR 64u          /* panel width of packed matrices */

#define G_ACCUM KERN_ACCUM
#define G_RELU KERN_RELU

typedef float v16 __attribute__((vector_size(64)));

/* Weight matrix: fp32 panels and (optionally) the bf16 copy. */
struct wmat {
	const float *f;
	const uint16_t *b;
};

/* Dense rows: X[T][K] -> Y[T][N]; xb is bf16 scratch for the BF16 kernel. */
static void gemm(const struct embed_model *m, uint32_t *xb, float *Y,
		 const float *X, size_t T, size_t K, struct wmat W, size_t N,
		 const float *bias, int flags)
{
	if (m->kernel == EMBED_KERNEL_BF16 && W.b && K % 32 == 0) {
		kern_to_bf16(m->kernel, xb, X, K, T, K);
		kern_gemm_bf16(m->kernel, Y, N, xb, T, K, W.b, N, bias, flags);
		return;
	}
	kern_gemm(m->kernel, Y, N, X, K, T, K, W.f, N, bias, flags);
}

/* Layer norm over the last axis (d % 16 == 0). */
static void layer_norm(const struct embed_model *m, float *y, const float *x,
		       size_t T, size_t d, const float *g, const float *b)
{
	kern_layer_norm(m->kernel, y, x, T, d, g, b, m->ln_eps);
}

/* ------------------------------------------------------------ forward */

struct scratch {
	float *x0, *h, *ln, *qkv, *att, *ff, *prob, *kt, *vp, *mff, *pool, *proj, *acc;
	uint32_t *xb;
	int32_t *ids;
};

#define XB_WORDS (EMBED_MAX_SEQ * FF / 2)

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
	s->prob = f; f += EMBED_MAX_SEQ * EMBED_MAX_SEQ;
	s->kt = f; f += EMBED_MAX_SEQ * (D1 / HEADS);
	s->vp = f; f += EMBED_MAX_SEQ * (D1 / HEADS);
	s->mff = f; f += FF;
	s->pool = f; f += D1;
	s->proj = f; f += D1;
	s->acc = f; f += D1;
	s->xb = (uint32_t *)f; f += XB_WORDS;
	s->ids = (int32_t *)f;
}

size_t embed_scratch_size(const struct embed_model *m)
{
	(void)m;
	size_t floats = EMBED_MAX_SEQ * (D0 + D1 + D1 + 3 * D1 + D1 + FF + EMBED_MAX_SEQ +
					 2 * (D1 / HEADS)) +
			FF + 4 * D1 + XB_WORDS;
	return 64 + floats * sizeof(float) + EMBED_MAX_TOKENS * sizeof(int32_t);
}

/* Multi-head self attention of one layer over qkv = LN(x) Wqkv + b (rows of
 * 3*din: q | k | v, head h at columns h*dh of each):
 *   out[T][din] = concat_h softmax((q_h * scale) k_h^T) v_h.
 * Both products run on the fp32 matmul kernel: K^T of the head (times the
 * query scale) is packed into 64-column panels kt (tp = T rounded up to 64
 * columns, zero padded), V into 64-column panels vp. */
static void attention(const struct embed_model *m, struct scratch *s,
		      const float *qkv, size_t T, size_t din, float scale,
		      float *out)
{
	size_t dh = din / HEADS, st = 3 * din;
	size_t tp = (T + NR - 1) / NR * NR;
	float *S = s->prob, *kt = s->kt, *vp = s->vp;
	for (size_t h = 0; h < HEADS; h++) {
		for (size_t j = 0; j < tp; j++) {
			float *k = kt + (j / NR) * dh * NR + j % NR;
			const float *src = qkv + j * st + din + h * dh;
			for (size_t d = 0; d < dh; d++)
				k[d * NR] = j < T ? src[d] * scale : 0;
		}
		for (size_t p = 0; p < dh / NR; p++)
			for (size_t j = 0; j < T; j++)
				memcpy(vp + (p * T + j) * NR,
				       qkv + j * st + 2 * din + h * dh + p * NR,
				       NR * sizeof(float));
		kern_gemm(m->kernel, S, tp, qkv + h * dh, st, T, dh, kt, tp, NULL, 0);
		kern_softmax(m->kernel, S, tp, T, T);
		kern_gemm(m->kernel, out + h * dh, din, S, tp, T, T, vp, dh, NULL, 0);
	}
}


static void forward(const struct embed_model *m, const int32_t *ids, size_t T,
		    struct scratch *s, float out[USE_DIM])
{
	const struct embed_layer *L0 = &m->layer[0], *L1 = &m->layer[1];
	uint32_t *xb = s->xb;
#define WM(L, part) ((struct wmat){ (L)->p[part], (L)->bf[part] })

	/* token + timing signal: E + (E + timing) as the graph adds them */
	for (size_t t = 0; t < T; t++) {
		const float *e = m->emb + (size_t)ids[t] * D0;
		const float *ts = m->timing + t * D0;
		float *x = s->x0 + t * D0;
		for (size_t j = 0; j < D0; j += 16) {
			v16 a, b;
			memcpy(&a, e + j, sizeof a);
			memcpy(&b, ts + j, sizeof b);
			a = a + (a + b);
			memcpy(x + j, &a, sizeof a);
		}
	}

	/* layer 0 */
	gemm(m, xb, s->h, s->x0, T, D0, (struct wmat){ m->res_w, m->res_wb }, D1,
	     m->res_b, 0);
	layer_norm(m, s->ln, s->x0, T, D0, L0->p[EMBED_L_LN1_G], L0->p[EMBED_L_LN1_B]);
	gemm(m, xb, s->qkv, s->ln, T, D0, WM(L0, EMBED_L_QKV_W), 3 * D0,
	     L0->p[EMBED_L_QKV_B], 0);
	attention(m, s, s->qkv, T, D0, L0->scale, s->att);
	gemm(m, xb, s->h, s->att, T, D0, WM(L0, EMBED_L_OUT_W), D1,
	     L0->p[EMBED_L_OUT_B], G_ACCUM);
	layer_norm(m, s->ln, s->h, T, D1, L0->p[EMBED_L_LN2_G], L0->p[EMBED_L_LN2_B]);
	gemm(m, xb, s->ff, s->ln, T, D1, WM(L0, EMBED_L_FF1_W), FF,
	     L0->p[EMBED_L_FF1_B], G_RELU);
	gemm(m, xb, s->h, s->ff, T, FF, WM(L0, EMBED_L_FF2_W), D1,
	     L0->p[EMBED_L_FF2_B], G_ACCUM);

	/* layer 1 */
	layer_norm(m, s->ln, s->h, T, D1, L1->p[EMBED_L_LN1_G], L1->p[EMBED_L_LN1_B]);
	gemm(m, xb, s->qkv, s->ln, T, D1, WM(L1, EMBED_L_QKV_W), 3 * D1,
	     L1->p[EMBED_L_QKV_B], 0);
	attention(m, s, s->qkv, T, D1, L1->scale, s->att);
	gemm(m, xb, s->h, s->att, T, D1, WM(L1, EMBED_L_OUT_W), D1,
	     L1->p[EMBED_L_OUT_B], G_ACCUM);
	layer_norm(m, s->ln, s->h, T, D1, L1->p[EMBED_L_LN2_G], L1->p[EMBED_L_LN2_B]);
	gemm(m, xb, s->ff, s->ln, T, D1, WM(L1, EMBED_L_FF1_W), FF,
	     L1->p[EMBED_L_FF1_B], G_RELU);

	/* mean pooling; the last FFN projection is linear, so it is applied
	 * once to the mean activation: mean(h + f W2 + b2) = mean h + (mean f) W2 + b2 */
	kern_col_mean(m->kernel, s->mff, s->ff, T, FF);
	kern_col_mean(m->kernel, s->pool, s->h, T, D1);
	gemm(m, xb, s->pool, s->mff, 1, FF, WM(L1, EMBED_L_FF2_W), D1,
	     L1->p[EMBED_L_FF2_B], G_ACCUM);

	/* tanh projection + L2 normalisation */
	gemm(m, xb, s->proj, s->pool, 1, D1, (struct wmat){ m->tanh_w, m->tanh_wb },
	     D1, m->tanh_b, 0);
#undef WM
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

enum embed_status embed_tokens(const struct embed_model *m, const int32_t *ids,
	    size_t n, void *scratch, float out[USE_DIM])
{
	struct scratch s;
	if (!m || !scratch || !out || (n && !ids))
		return EMBED_EARG;
	if (n == 0) {
		memset(out, 0, USE_DIM * sizeof(float));
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

enum embed_status embed_text(const struct embed_model *m, const char *utf8,
	    size_t len, void *scratch, float out[USE_DIM])
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
		memset(out, 0, USE_DIM * sizeof(float));
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
	for (size_t i = 0; i < USE_DIM; i++) {
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

_Static_assert(sizeof(struct embed_means_hdr) == EMBED_MEANS_HDR, "means header is 128 bytes");

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

enum embed_status embed_init(struct embed_model *m, const void *blob, size_t len)
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
	m->chars_closed = tokenize_chars_closed(m);
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

	/* optional bf16 copies: absent (offset = size = 0) or exactly sized */
	if (rd64(b + 64 + 16 * EMBED_SEC_BF16) || rd64(b + 64 + 16 * EMBED_SEC_BF16 + 8)) {
		static const uint32_t dims[10][2] = {
			{ D0, D1 }, { D0, 3 * D0 }, { D0, D1 }, { D1, FF }, { FF, D1 },
			{ D1, 3 * D1 }, { D1, D1 }, { D1, FF }, { FF, D1 }, { D1, D1 },
		};
		static const unsigned part[4] = { EMBED_L_QKV_W, EMBED_L_OUT_W,
						  EMBED_L_FF1_W, EMBED_L_FF2_W };
		const uint16_t *w[10];
		uint64_t total = 0;
		for (unsigned i = 0; i < 10; i++)
			total += (uint64_t)dims[i][0] * dims[i][1];
		if (get_sec(b, len, EMBED_SEC_BF16, total * 2, 0, &s))
			return EMBED_EFORMAT;
		const uint16_t *q = (const void *)s.p;
		for (unsigned i = 0; i < 10; i++) {
			w[i] = q;
			q += (size_t)dims[i][0] * dims[i][1];
		}
		m->res_wb = w[0];
		for (unsigned l = 0; l < 2; l++)
			for (unsigned i = 0; i < 4; i++)
				m->layer[l].bf[part[i]] = w[1 + 4 * l + i];
		m->tanh_wb = w[9];
	}

	/* optional calibration means: absent or exactly sized, finite */
	if (rd64(b + 64 + 16 * EMBED_SEC_MEANS) || rd64(b + 64 + 16 * EMBED_SEC_MEANS + 8)) {
		if (get_sec(b, len, EMBED_SEC_MEANS, EMBED_MEANS_SIZE, 0, &s))
			return EMBED_EFORMAT;
		const struct embed_means_hdr *mh = (const void *)s.p;
		const float *mv = (const void *)(s.p + EMBED_MEANS_HDR);
		if (memcmp(mh->magic, EMBED_MEANS_MAGIC, 8) != 0 || mh->n_bio == 0 ||
		    mh->n_crit == 0)
			return EMBED_EFORMAT;
		for (unsigned i = 0; i < 2 * USE_DIM; i++)
			if (!isfinite(mv[i]) || fabsf(mv[i]) > 1.0f)
				return EMBED_EFORMAT;
		m->means = mh;
		m->mean_bio = mv;
		m->mean_crit = mv + USE_DIM;
	}

	m->kernel = kern_detect(m->res_wb != NULL);
	return EMBED_OK;
}
