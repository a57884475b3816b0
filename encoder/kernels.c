/* Dense kernels of the sentence encoders (USE Lite, BERT); see kernels.h. */
#include "encoder/kernels.h"

#include <math.h>
#include <string.h>

/* The matmul and attention loops want a*b+c fused; ISO C mode turns that
 * off by default.  Results stay well inside the 0.999 cosine contract. */
#pragma GCC optimize("fp-contract=fast")

#define NR KERN_NR
#define G_ACCUM KERN_ACCUM
#define G_RELU KERN_RELU

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
BF16_ATTR static void gemm_bf16_avx512(float *Y, size_t ldy, const uint32_t *Xb,
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
BF16_ATTR static void to_bf16_avx512(uint32_t *dst, const float *X, size_t ldx,
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

void kern_gemm(int kernel, float *Y, size_t ldy, const float *X,
		     size_t ldx, size_t T, size_t K, const float *W, size_t N,
		     const float *bias, int flags)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case KERN_BF16:
	case KERN_AVX512:
		gemm_avx512(Y, ldy, X, ldx, T, K, W, N, bias, flags);
		return;
	case KERN_AVX2:
		gemm_avx2(Y, ldy, X, ldx, T, K, W, N, bias, flags);
		return;
#endif
	default:
		gemm_generic(Y, ldy, X, ldx, T, K, W, N, bias, flags);
	}
}

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

void kern_layer_norm(int kernel, float *y, const float *x, size_t T, size_t d,
		     const float *g, const float *b, float eps)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case KERN_BF16:
	case KERN_AVX512:
		ln_avx512(y, x, T, d, g, b, eps);
		return;
	case KERN_AVX2:
		ln_avx2(y, x, T, d, g, b, eps);
		return;
#endif
	default:
		ln_generic(y, x, T, d, g, b, eps);
	}
}

/* Row softmax over columns [0, T) of rows [0, R) of S[R][ld] (ld >= T
 * rounded up to the vector width; those pad columns are overwritten).  expf by the Cephes
 * polynomial (about 1 ulp) on whole vectors. */
#define SOFTMAX_KERNEL(NAME, ATTR, VT, VI, VW)                                 \
	ATTR static void NAME(float *S, size_t ld, size_t R, size_t T)         \
	{                                                                      \
		size_t nv = (T + VW - 1) / VW;                                 \
		for (size_t i = 0; i < R; i++) {                               \
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

void kern_softmax(int kernel, float *S, size_t ld, size_t R, size_t T)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case KERN_BF16:
	case KERN_AVX512:
		softmax_avx512(S, ld, R, T);
		return;
	case KERN_AVX2:
		softmax_avx2(S, ld, R, T);
		return;
#endif
	default:
		softmax_generic(S, ld, R, T);
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

void kern_col_mean(int kernel, float *out, const float *X, size_t T, size_t n)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case KERN_BF16:
	case KERN_AVX512:
		col_mean_avx512(out, X, T, n);
		return;
	case KERN_AVX2:
		col_mean_avx2(out, X, T, n);
		return;
#endif
	default:
		col_mean_generic(out, X, T, n);
	}
}

/* exp(x) of a whole vector by the Cephes polynomial (about 1 ulp); x below
 * -87 gives exp(-87). */
#define VEXP(VT, VI, x, out)                                                    \
	do {                                                                   \
		VT x_ = (x);                                                   \
		VI lo_ = x_ < -87.0f;                                          \
		x_ = (VT)(((VI)x_ & ~lo_) | ((VI)((VT){ 0 } - 87.0f) & lo_));  \
		VT t_ = x_ * 1.44269504088896341f + 12582912.0f;               \
		VT n_ = t_ - 12582912.0f;                                      \
		VI e_ = ((VI)t_ - 0x4B400000 + 127) << 23;                     \
		VT r_ = x_ - n_ * 0.693359375f;                                \
		r_ = r_ - n_ * -2.12194440e-4f;                                \
		VT q_ = r_ * 1.9875691500e-4f + 1.3981999507e-3f;              \
		q_ = q_ * r_ + 8.3334519073e-3f;                               \
		q_ = q_ * r_ + 4.1665795894e-2f;                               \
		q_ = q_ * r_ + 1.6666665459e-1f;                               \
		q_ = q_ * r_ + 5.0000001201e-1f;                               \
		(out) = (q_ * (r_ * r_) + r_ + 1.0f) * (VT)e_;                 \
	} while (0)

/* x = 0.5 x (1 + erf(x / sqrt 2)) in place, n % VW == 0; erf by
 * Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7). */
#define GELU_KERNEL(NAME, ATTR, VT, VI, VW)                                    \
	ATTR static void NAME(float *x, size_t n)                              \
	{                                                                      \
		for (size_t j = 0; j < n; j += VW) {                           \
			VT v, e;                                               \
			memcpy(&v, x + j, sizeof v);                           \
			VT z = v * 0.70710678118654752f;                       \
			VT az = (VT)((VI)z & 0x7fffffff);                      \
			VT t = 1.0f / (1.0f + 0.3275911f * az);                \
			VT p = ((((1.061405429f * t - 1.453152027f) * t +      \
				  1.421413741f) * t - 0.284496736f) * t +      \
				0.254829592f) * t;                             \
			VEXP(VT, VI, -(az * az), e);                           \
			VT y = 1.0f - p * e;                                   \
			y = (VT)((VI)y ^ ((VI)z & (int32_t)0x80000000u));      \
			v = 0.5f * v * (1.0f + y);                             \
			memcpy(x + j, &v, sizeof v);                           \
		}                                                              \
	}

GELU_KERNEL(gelu_generic, , v4, v4i, 4)
#ifdef HAVE_X86_KERNELS
GELU_KERNEL(gelu_avx2, __attribute__((target("avx2,fma"))), v8, v8i, 8)
GELU_KERNEL(gelu_avx512, __attribute__((target("avx512f,fma"))), v16, v16i, 16)
#endif

void kern_gelu(int kernel, float *x, size_t n)
{
	switch (kernel) {
#ifdef HAVE_X86_KERNELS
	case KERN_BF16:
	case KERN_AVX512:
		gelu_avx512(x, n);
		return;
	case KERN_AVX2:
		gelu_avx2(x, n);
		return;
#endif
	default:
		gelu_generic(x, n);
	}
}

/* bf16 of f, round to nearest even (no NaN in a model's activations). */
static uint16_t bf16_round(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static float bf16_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

void kern_to_bf16(int kernel, uint32_t *dst, const float *X, size_t ldx, size_t T, size_t K)
{
#ifdef HAVE_X86_KERNELS
	if (kernel == KERN_BF16) {
		to_bf16_avx512(dst, X, ldx, T, K);
		return;
	}
#endif
	(void)kernel;
	for (size_t t = 0; t < T; t++)
		for (size_t q = 0; q < K / 2; q++)
			dst[t * (K / 2) + q] = (uint32_t)bf16_round(X[t * ldx + 2 * q]) |
					       (uint32_t)bf16_round(X[t * ldx + 2 * q + 1]) << 16;
}

void kern_gemm_bf16(int kernel, float *Y, size_t ldy, const uint32_t *Xb, size_t T, size_t K,
		    const uint16_t *W, size_t N, const float *bias, int flags)
{
#ifdef HAVE_X86_KERNELS
	if (kernel == KERN_BF16) {
		gemm_bf16_avx512(Y, ldy, Xb, T, K, W, N, bias, flags);
		return;
	}
#endif
	(void)kernel;
	/* reference loop: what the AVX512_BF16 kernel computes */
	for (size_t t = 0; t < T; t++)
		for (size_t col = 0; col < N; col++) {
			const uint16_t *wp = W + (col / NR) * K * NR + (col % NR) * 2;
			float acc = 0;
			for (size_t q = 0; q < K / 2; q++) {
				uint32_t xw = Xb[t * (K / 2) + q];
				acc += bf16_float(wp[q * 2 * NR]) * bf16_float((uint16_t)xw) +
				       bf16_float(wp[q * 2 * NR + 1]) * bf16_float((uint16_t)(xw >> 16));
			}
			float *y = Y + t * ldy + col;
			if (bias)
				acc += bias[col];
			if (flags & G_ACCUM)
				acc += *y;
			if ((flags & G_RELU) && acc < 0)
				acc = 0;
			*y = acc;
		}
}

int kern_detect(int have_bf16)
{
#ifdef HAVE_X86_KERNELS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		if (have_bf16 && __builtin_cpu_supports("avx512bf16"))
			return KERN_BF16;
		return KERN_AVX512;
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return KERN_AVX2;
#endif
	(void)have_bf16;
	return KERN_GENERIC;
}
