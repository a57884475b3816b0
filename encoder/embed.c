/* USE Lite forward pass over the mapped model blob; see embed.h. */
#include "encoder/embed.h"
#include "encoder/tokenize.h"

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

#if defined(__GNUC__) && defined(__x86_64__) && !defined(EMBED_NO_X86)
#define HAVE_X86_KERNELS 1
#include <immintrin.h>
#endif

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int32_t v4i __attribute__((vector_size(16)));

enum { G_ACCUM = 1, G_RELU = 2 };

/* ------------------------------------------------------------ matmul
 * Y[T][N] (+)= X[T][K] * W[K][N] (+ bias), W packed in 64-column panels,
 * rows of X ldx floats apart, rows of Y ldy floats apart, bias may be NULL.
 * Each panel (K x 64 floats, <= 384 KiB) is streamed once per MR rows of X;
 * the MR x 64 accumulator block lives in registers. */

/* y[0..VW) (+)= a (+ bias) (relu), unaligned. */
#define STORE_VEC(VT, VI, y, a, bias, flags)                                   \
	do {                                                                   \
		VT v_ = (a), t_;                                               \
		const float *b_ = (bias);                                      \
		if (b_) {                                                      \
			memcpy(&t_, b_, sizeof t_);                            \
			v_ += t_;                                              \
		}                                                              \
		if ((flags) & G_ACCUM) {                                       \
			memcpy(&t_, (y), sizeof t_);                           \
			v_ += t_;                                              \
		}                                                              \
		if ((flags) & G_RELU)                                          \
			v_ = (VT)((VI)v_ & (v_ > (VT){ 0 }));                  \
		memcpy((y), &v_, sizeof v_);                                   \
	} while (0)

/* One kernel per instruction set: VT is the native vector (VW floats), a
 * column block is 4 vectors (COLS = 4 * VW columns of a 64-wide panel), and
 * MR rows of X share each loaded block of W. */
#define GEMM_KERNEL(NAME, ATTR, VT, VI, VW, MR)                                  \
	ATTR static void NAME(float *Y, size_t ldy, const float *X, size_t ldx,\
			      size_t T, size_t K, const float *W, size_t N,    \
			      const float *bias, int flags)                    \
	{                                                                      \
		const size_t cols = 4 * VW;                                    \
		for (size_t p = 0; p < N / NR; p++)                            \
		for (size_t cb = 0; cb < NR; cb += cols) {                     \
			const float *wp = W + p * K * NR + cb;                 \
			size_t col = p * NR + cb;                              \
			const float *bc = bias ? bias + col : NULL;            \
			size_t t = 0;                                          \
			for (; t + MR <= T; t += MR) {                         \
				VT acc[MR][4];                                 \
				_Pragma("GCC unroll 8")                        \
				for (size_t r = 0; r < MR; r++)                \
					acc[r][0] = acc[r][1] = acc[r][2] =    \
						acc[r][3] = (VT){ 0 };         \
				const float *x = X + t * ldx;                  \
				for (size_t k = 0; k < K; k++) {               \
					const VT *w = (const VT *)(wp + k * NR); \
					VT w0 = w[0], w1 = w[1], w2 = w[2],    \
					   w3 = w[3];                          \
					_Pragma("GCC unroll 8")                \
					for (size_t r = 0; r < MR; r++) {      \
						float xv = x[r * ldx + k];     \
						acc[r][0] += w0 * xv;          \
						acc[r][1] += w1 * xv;          \
						acc[r][2] += w2 * xv;          \
						acc[r][3] += w3 * xv;          \
					}                                      \
				}                                              \
				_Pragma("GCC unroll 8")                        \
				for (size_t r = 0; r < MR; r++)                \
					for (size_t c = 0; c < 4; c++)         \
						STORE_VEC(VT, VI, Y + (t + r) * ldy \
							  + col + c * VW,      \
							  acc[r][c], bc ? bc + \
							  c * VW : bc, flags); \
			}                                                      \
			for (; t < T; t++) {                                   \
				VT acc[4] = { { 0 } };                         \
				const float *x = X + t * ldx;                  \
				for (size_t k = 0; k < K; k++) {               \
					const VT *w = (const VT *)(wp + k * NR); \
					float xv = x[k];                       \
					acc[0] += w[0] * xv;                   \
					acc[1] += w[1] * xv;                   \
					acc[2] += w[2] * xv;                   \
					acc[3] += w[3] * xv;                   \
				}                                              \
				for (size_t c = 0; c < 4; c++)                 \
					STORE_VEC(VT, VI, Y + t * ldy + col + c * VW, \
						  acc[c], bc ? bc + c * VW : bc, \
						  flags);                      \
			}                                                      \
		}                                                              \
	}

GEMM_KERNEL(gemm_generic, , v4, v4i, 4, 2)
#ifdef HAVE_X86_KERNELS
GEMM_KERNEL(gemm_avx2, __attribute__((target("avx2,fma"))), v8, v8i, 8, 2)
GEMM_KERNEL(gemm_avx512, __attribute__((target("avx512f,fma"))), v16, v16i, 16, 6)

/* AVX512_BF16: W is the bf16 copy, [K/2][64][2] per panel, so one vdpbf16ps
 * adds w[2q][c] x[2q] + w[2q+1][c] x[2q+1] into column c of 16 columns; X is
 * converted to bf16 first (pairs of consecutive k as one 32-bit word, which
 * is broadcast).  Accumulation stays fp32.  A tile is MR rows x 64 columns
 * (4 x MR accumulators). */
#define BF16_ATTR __attribute__((target("avx512f,avx512bf16")))
#define BF16_MR 6

BF16_ATTR static inline __attribute__((always_inline)) void
bf16_tile(float *Y, size_t ldy, const uint32_t *X, size_t kq,
	  const uint16_t *wp, const float *bias, int flags, const size_t mr)
{
	__m512 acc[BF16_MR][4];
	_Pragma("GCC unroll 8")
	for (size_t r = 0; r < mr; r++)
		acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = _mm512_setzero_ps();
	for (size_t q = 0; q < kq; q++) {
		const uint16_t *w = wp + q * 2 * NR;
		__m512bh w0 = (__m512bh)_mm512_loadu_si512(w);
		__m512bh w1 = (__m512bh)_mm512_loadu_si512(w + 32);
		__m512bh w2 = (__m512bh)_mm512_loadu_si512(w + 64);
		__m512bh w3 = (__m512bh)_mm512_loadu_si512(w + 96);
		_Pragma("GCC unroll 8")
		for (size_t r = 0; r < mr; r++) {
			__m512bh xv = (__m512bh)_mm512_set1_epi32((int)X[r * kq + q]);
			acc[r][0] = _mm512_dpbf16_ps(acc[r][0], w0, xv);
			acc[r][1] = _mm512_dpbf16_ps(acc[r][1], w1, xv);
			acc[r][2] = _mm512_dpbf16_ps(acc[r][2], w2, xv);
			acc[r][3] = _mm512_dpbf16_ps(acc[r][3], w3, xv);
		}
	}
	_Pragma("GCC unroll 8")
	for (size_t r = 0; r < mr; r++) {
		float *y = Y + r * ldy;
		for (size_t c = 0; c < 4; c++) {
			__m512 v = acc[r][c];
			if (bias)
				v = _mm512_add_ps(v, _mm512_loadu_ps(bias + 16 * c));
			if (flags & G_ACCUM)
				v = _mm512_add_ps(v, _mm512_loadu_ps(y + 16 * c));
			if (flags & G_RELU)
				v = _mm512_max_ps(v, _mm512_setzero_ps());
			_mm512_storeu_ps(y + 16 * c, v);
		}
	}
}

/* Xb: T rows of K bf16 (K/2 words each). */
BF16_ATTR static void gemm_bf16(float *Y, size_t ldy, const uint32_t *Xb,
				size_t T, size_t K, const uint16_t *W, size_t N,
				const float *bias, int flags)
{
	size_t kq = K / 2;
	for (size_t p = 0; p < N / NR; p++) {
		const uint16_t *wp = W + p * K * NR;
		size_t col = p * NR;
		const float *bc = bias ? bias + col : NULL;
		size_t t = 0;
		for (; t + BF16_MR <= T; t += BF16_MR)
			bf16_tile(Y + t * ldy + col, ldy, Xb + t * kq, kq, wp, bc,
				  flags, BF16_MR);
		/* each case a constant row count, so the inlined tile unrolls */
		switch (T - t) {
		case 5:
			bf16_tile(Y + t * ldy + col, ldy, Xb + t * kq, kq, wp, bc, flags, 5);
			break;
		case 4:
			bf16_tile(Y + t * ldy + col, ldy, Xb + t * kq, kq, wp, bc, flags, 4);
			break;
		case 3:
			bf16_tile(Y + t * ldy + col, ldy, Xb + t * kq, kq, wp, bc, flags, 3);
			break;
		case 2:
			bf16_tile(Y + t * ldy + col, ldy, Xb + t * kq, kq, wp, bc, flags, 2);
			break;
		case 1:
			bf16_tile(Y + t * ldy + col, ldy, Xb + t * kq, kq, wp, bc, flags, 1);
			break;
		default:
			break;
		}
	}
}

/* X[T][K] (rows ldx apart, K % 32 == 0) -> bf16, round to nearest even. */
BF16_ATTR static void to_bf16(uint32_t *dst, const float *X, size_t ldx,
			      size_t T, size_t K)
{
	for (size_t t = 0; t < T; t++) {
		const float *x = X + t * ldx;
		uint32_t *d = dst + t * (K / 2);
		for (size_t k = 0; k < K; k += 32) {
			__m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + k + 16),
							 _mm512_loadu_ps(x + k));
			_mm512_storeu_si512(d + k / 2, (__m512i)v);
		}
	}
}
#endif

static void gemm_f32(int kernel, float *Y, size_t ldy, const float *X,
		     size_t ldx, size_t T, size_t K, const float *W, size_t N,
		     const float *bias, int flags)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case EMBED_KERNEL_BF16:
	case EMBED_KERNEL_AVX512:
		gemm_avx512(Y, ldy, X, ldx, T, K, W, N, bias, flags);
		return;
	case EMBED_KERNEL_AVX2:
		gemm_avx2(Y, ldy, X, ldx, T, K, W, N, bias, flags);
		return;
#endif
	default:
		gemm_generic(Y, ldy, X, ldx, T, K, W, N, bias, flags);
	}
}

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
#ifdef HAVE_X86_KERNELS
	if (m->kernel == EMBED_KERNEL_BF16 && W.b && K % 32 == 0) {
		to_bf16(xb, X, K, T, K);
		gemm_bf16(Y, N, xb, T, K, W.b, N, bias, flags);
		return;
	}
#else
	(void)xb;
#endif
	gemm_f32(m->kernel, Y, N, X, K, T, K, W.f, N, bias, flags);
}

/* ------------------------------------------------------------ pieces */

#define LN_KERNEL(NAME, ATTR, VT, VW)                                          \
	ATTR static void NAME(float *y, const float *x, size_t T, size_t d,    \
			      const float *g, const float *b, float eps)       \
	{                                                                      \
		for (size_t t = 0; t < T; t++) {                               \
			const float *xr = x + t * d;                           \
			float *yr = y + t * d;                                 \
			VT s = { 0 }, v = { 0 };                               \
			for (size_t j = 0; j < d; j += VW) {                   \
				VT a;                                          \
				memcpy(&a, xr + j, sizeof a);                  \
				s += a;                                        \
			}                                                      \
			float mean = 0;                                        \
			for (size_t c = 0; c < VW; c++)                        \
				mean += s[c];                                  \
			mean /= (float)d;                                      \
			for (size_t j = 0; j < d; j += VW) {                   \
				VT a;                                          \
				memcpy(&a, xr + j, sizeof a);                  \
				a -= mean;                                     \
				v += a * a;                                    \
			}                                                      \
			float var = 0;                                         \
			for (size_t c = 0; c < VW; c++)                        \
				var += v[c];                                   \
			float inv = 1.0f / sqrtf(var / (float)d + eps);        \
			for (size_t j = 0; j < d; j += VW) {                   \
				VT a, gg, bb;                                  \
				memcpy(&a, xr + j, sizeof a);                  \
				memcpy(&gg, g + j, sizeof gg);                 \
				memcpy(&bb, b + j, sizeof bb);                 \
				a = gg * inv * (a - mean) + bb;                \
				memcpy(yr + j, &a, sizeof a);                  \
			}                                                      \
		}                                                              \
	}

LN_KERNEL(ln_generic, , v4, 4)
#ifdef HAVE_X86_KERNELS
LN_KERNEL(ln_avx2, __attribute__((target("avx2,fma"))), v8, 8)
LN_KERNEL(ln_avx512, __attribute__((target("avx512f,fma"))), v16, 16)
#endif

/* Layer norm over the last axis (d % 16 == 0). */
static void layer_norm(const struct embed_model *m, float *y, const float *x,
		       size_t T, size_t d, const float *g, const float *b)
{
	switch (m->kernel) {
#ifdef HAVE_X86_KERNELS
	case EMBED_KERNEL_BF16:
	case EMBED_KERNEL_AVX512:
		ln_avx512(y, x, T, d, g, b, m->ln_eps);
		return;
	case EMBED_KERNEL_AVX2:
		ln_avx2(y, x, T, d, g, b, m->ln_eps);
		return;
#endif
	default:
		ln_generic(y, x, T, d, g, b, m->ln_eps);
	}
}

/* Row softmax over columns [0, T) of S[T][ld] (ld >= T rounded up to the
 * vector width; those pad columns are overwritten).  expf by the Cephes
 * polynomial (about 1 ulp) on whole vectors. */
#define SOFTMAX_KERNEL(NAME, ATTR, VT, VI, VW)                                 \
	ATTR static void NAME(float *S, size_t ld, size_t T)                   \
	{                                                                      \
		size_t nv = (T + VW - 1) / VW;                                 \
		for (size_t i = 0; i < T; i++) {                               \
			float *row = S + i * ld;                               \
			for (size_t j = T; j < nv * VW; j++)                   \
				row[j] = -1e30f;                               \
			VT mv, x;                                              \
			memcpy(&mv, row, sizeof mv);                           \
			for (size_t c = 1; c < nv; c++) {                      \
				memcpy(&x, row + c * VW, sizeof x);            \
				VI gt = x > mv;                                \
				mv = (VT)(((VI)x & gt) | ((VI)mv & ~gt));      \
			}                                                      \
			float mx = mv[0];                                      \
			for (size_t c = 1; c < VW; c++)                        \
				mx = mv[c] > mx ? mv[c] : mx;                  \
			VT sum = { 0 };                                        \
			for (size_t c = 0; c < nv; c++) {                      \
				memcpy(&x, row + c * VW, sizeof x);            \
				x -= mx;                                       \
				VI lo = x < -87.0f;                            \
				x = (VT)(((VI)x & ~lo) | ((VI)((VT){ 0 } - 87.0f) & lo)); \
				VT t = x * 1.44269504088896341f + 12582912.0f; \
				VT n = t - 12582912.0f;                        \
				VI e = ((VI)t - 0x4B400000 + 127) << 23;       \
				VT r = x - n * 0.693359375f;                   \
				r = r - n * -2.12194440e-4f;                   \
				VT q = r * 1.9875691500e-4f + 1.3981999507e-3f; \
				q = q * r + 8.3334519073e-3f;                  \
				q = q * r + 4.1665795894e-2f;                  \
				q = q * r + 1.6666665459e-1f;                  \
				q = q * r + 5.0000001201e-1f;                  \
				q = (q * (r * r) + r + 1.0f) * (VT)e;          \
				memcpy(row + c * VW, &q, sizeof q);            \
				sum += q;                                      \
			}                                                      \
			float tot = 0;                                         \
			for (size_t c = 0; c < VW; c++)                        \
				tot += sum[c];                                 \
			float inv = 1.0f / tot;                                \
			for (size_t c = 0; c < nv; c++) {                      \
				memcpy(&x, row + c * VW, sizeof x);            \
				x *= inv;                                      \
				memcpy(row + c * VW, &x, sizeof x);            \
			}                                                      \
		}                                                              \
	}

SOFTMAX_KERNEL(softmax_generic, , v4, v4i, 4)
#ifdef HAVE_X86_KERNELS
SOFTMAX_KERNEL(softmax_avx2, __attribute__((target("avx2,fma"))), v8, v8i, 8)
SOFTMAX_KERNEL(softmax_avx512, __attribute__((target("avx512f,fma"))), v16, v16i, 16)
#endif

static void softmax(int kernel, float *S, size_t ld, size_t T)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case EMBED_KERNEL_BF16:
	case EMBED_KERNEL_AVX512:
		softmax_avx512(S, ld, T);
		return;
	case EMBED_KERNEL_AVX2:
		softmax_avx2(S, ld, T);
		return;
#endif
	default:
		softmax_generic(S, ld, T);
	}
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
		gemm_f32(m->kernel, S, tp, qkv + h * dh, st, T, dh, kt, tp, NULL, 0);
		softmax(m->kernel, S, tp, T);
		gemm_f32(m->kernel, out + h * dh, din, S, tp, T, T, vp, dh, NULL, 0);
	}
}

/* out[j] = mean over t < T of X[t][j], n % 64 == 0. */
#define COLMEAN_KERNEL(NAME, ATTR, VT, VW)                                     \
	ATTR static void NAME(float *out, const float *X, size_t T, size_t n)  \
	{                                                                      \
		float inv = 1.0f / (float)T;                                   \
		for (size_t j = 0; j < n; j += 4 * VW) {                       \
			VT acc[4] = { { 0 } }, a;                              \
			for (size_t t = 0; t < T; t++)                         \
				for (size_t c = 0; c < 4; c++) {               \
					memcpy(&a, X + t * n + j + c * VW, sizeof a); \
					acc[c] += a;                           \
				}                                              \
			for (size_t c = 0; c < 4; c++) {                       \
				acc[c] *= inv;                                 \
				memcpy(out + j + c * VW, &acc[c], sizeof acc[c]); \
			}                                                      \
		}                                                              \
	}

COLMEAN_KERNEL(col_mean_generic, , v4, 4)
#ifdef HAVE_X86_KERNELS
COLMEAN_KERNEL(col_mean_avx2, __attribute__((target("avx2"))), v8, 8)
COLMEAN_KERNEL(col_mean_avx512, __attribute__((target("avx512f"))), v16, 16)
#endif

static void col_mean(int kernel, float *out, const float *X, size_t T, size_t n)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case EMBED_KERNEL_BF16:
	case EMBED_KERNEL_AVX512:
		col_mean_avx512(out, X, T, n);
		return;
	case EMBED_KERNEL_AVX2:
		col_mean_avx2(out, X, T, n);
		return;
#endif
	default:
		col_mean_generic(out, X, T, n);
	}
}

static void forward(const struct embed_model *m, const int32_t *ids, size_t T,
		    struct scratch *s, float out[EMBED_DIM])
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
	col_mean(m->kernel, s->mff, s->ff, T, FF);
	col_mean(m->kernel, s->pool, s->h, T, D1);
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
	    size_t n, void *scratch, float out[EMBED_DIM])
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

enum embed_status embed_text(const struct embed_model *m, const char *utf8,
	    size_t len, void *scratch, float out[EMBED_DIM])
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
		for (unsigned i = 0; i < 2 * EMBED_DIM; i++)
			if (!isfinite(mv[i]) || fabsf(mv[i]) > 1.0f)
				return EMBED_EFORMAT;
		m->means = mh;
		m->mean_bio = mv;
		m->mean_crit = mv + EMBED_DIM;
	}

	m->kernel = EMBED_KERNEL_GENERIC;
#ifdef HAVE_X86_KERNELS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		m->kernel = EMBED_KERNEL_AVX512;
		if (m->res_wb && __builtin_cpu_supports("avx512bf16"))
			m->kernel = EMBED_KERNEL_BF16;
	} else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		m->kernel = EMBED_KERNEL_AVX2;
	}
#endif
	return EMBED_OK;
}
