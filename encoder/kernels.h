/*
 * Dense kernels shared by the sentence encoders (encoder/embed.c, USE Lite;
 * encoder/bert.c, BERT): matrix products on packed weights, layer norm,
 * row softmax, column mean, GELU.  Pure: libc + libm, no I/O, no allocation.
 *
 * A weight matrix W[K][N] is packed in panels of KERN_NR (64) output
 * columns: panel p holds the K x 64 floats W[k][64p + c] row by row.  Its
 * bf16 copy (for KERN_BF16) is, per panel, [K/2][64][2]: the pair
 * W[2q][c], W[2q+1][c] is adjacent, which one vdpbf16ps consumes.
 * N % 64 == 0 everywhere; the kernel ("isa") is one of enum kern_isa, any
 * value up to what kern_detect returned.
 */
#ifndef ARPS_ENCODER_KERNELS_H
#define ARPS_ENCODER_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define KERN_NR 64u	/* panel width of packed matrices */

enum kern_isa {
	KERN_GENERIC = 0,
	KERN_AVX2 = 1,     /* AVX2 + FMA, fp32 */
	KERN_AVX512 = 2,   /* AVX-512F, fp32 */
	KERN_BF16 = 3,     /* AVX512_BF16 products (bf16 weights and
			    * activations, fp32 accumulation), the rest
			    * as KERN_AVX512 */
};

/* flags of the products: add into Y; clamp at zero after the bias */
enum { KERN_ACCUM = 1, KERN_RELU = 2 };

/* The fastest kernel this CPU runs; KERN_BF16 only when have_bf16 (the
 * model carries bf16 copies). */
int kern_detect(int have_bf16);

/* Y[T][N] (+)= X[T][K] W (+ bias), fp32 (KERN_BF16 runs the AVX-512 fp32
 * kernel here); rows of X ldx floats apart, rows of Y ldy apart, bias may
 * be NULL. */
void kern_gemm(int isa, float *Y, size_t ldy, const float *X, size_t ldx, size_t T,
	       size_t K, const float *W, size_t N, const float *bias, int flags);

/* X[T][K] (rows ldx apart, K % 32 == 0) to bf16 rows of K/2 words, round
 * to nearest even. */
void kern_to_bf16(int isa, uint32_t *dst, const float *X, size_t ldx, size_t T, size_t K);

/* As kern_gemm with bf16 weights W (the bf16 panels) and bf16 rows Xb
 * (kern_to_bf16); accumulation in fp32; rows of Y ldy apart. */
void kern_gemm_bf16(int isa, float *Y, size_t ldy, const uint32_t *Xb, size_t T, size_t K,
		    const uint16_t *W, size_t N, const float *bias, int flags);

/* y[t] = g * (x[t] - mean) / sqrt(var + eps) + b for T rows of d (d % 16
 * == 0); y may be x. */
void kern_layer_norm(int isa, float *y, const float *x, size_t T, size_t d,
		     const float *g, const float *b, float eps);

/* Softmax of columns [0, T) of the rows [0, R) of S (rows ld floats apart,
 * ld >= T rounded up to 16; the pad columns are overwritten with 0). */
void kern_softmax(int isa, float *S, size_t ld, size_t R, size_t T);

/* out[j] = mean over t < T of X[t][j], n % 64 == 0. */
void kern_col_mean(int isa, float *out, const float *X, size_t T, size_t n);

/* GELU (erf form) in place over n floats, n % 16 == 0. */
void kern_gelu(int isa, float *x, size_t n);

#endif
