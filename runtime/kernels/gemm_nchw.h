/*
 * gemm_nchw.h - the float32 GEMM of convolutions on one core, without
 * packing either operand: y = post(bias + W X) for a weight matrix W
 * [M, K] (the Conv weights as they are stored) and X [K, N] (an NCHW
 * image for a pointwise conv, or im2col columns), both row-major.
 *
 * OpenBLAS copies both operands into its own panels on every call; for a
 * convolution at batch 1 the weights are as large as the image, so that
 * copy is a tenth of MobileNet's time. Here a tile of 8 output channels
 * by 48 output pixels is accumulated in registers straight from W's rows
 * (eight sequential streams of broadcasts) and X's rows (contiguous
 * vectors), with the bias and an optional clamp applied as the tile is
 * stored. The sum for each output runs over k in order, like a dot
 * product: results differ from OpenBLAS's only in rounding.
 */
#ifndef SG_KERNELS_GEMM_NCHW_H
#define SG_KERNELS_GEMM_NCHW_H

#include <stdbool.h>
#include <stdint.h>

/*
 * y[m * ldy + n] = min(max(b[m] + sum_k w[m * ldw + k] * x[k * ldx + n],
 * lo), hi) for m < M, n < N (b NULL: no bias; lo = -inf and hi = +inf: no
 * clamp; NaN stays NaN, as Clip keeps it). y must not overlap w or x.
 * Returns false, writing nothing, when the CPU has no AVX-512: the caller
 * then uses BLAS.
 */
bool sg__gemm_nchw(int64_t M, int64_t N, int64_t K, const float *w, int64_t ldw, const float *x,
                   int64_t ldx, const float *b, float *y, int64_t ldy, float lo, float hi);

#endif
