/*
 * gemm_nchw.c - see gemm_nchw.h. AVX-512 only (GCC or clang on x86-64);
 * elsewhere sg__gemm_nchw always returns false.
 */
#include "gemm_nchw.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdatomic.h>

#define MR 8  /* output channels per tile (rows of W) */
#define NV 3  /* vectors of 16 output pixels per tile */
#define NR 48 /* NV * 16 */

/*
 * One tile: rows [0, mr) of y (mr <= MR) and the first nv vectors of 16
 * columns, the last one masked by `mask`. Rows of W past mr read row mr -
 * 1 again (never past W's end) and are not stored.
 */
#define TILE_BODY(nv)                                                                              \
    do {                                                                                           \
        __m512 acc[MR][nv];                                                                        \
        const float *wr[MR];                                                                       \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                       \
        {                                                                                          \
            int rr = r < mr ? r : mr - 1;                                                          \
            wr[r] = w + rr * ldw;                                                                  \
            __m512 b0 = _mm512_set1_ps(b ? b[rr] : 0.0f);                                          \
            _Pragma("GCC unroll 3") for (int j = 0; j < nv; j++) acc[r][j] = b0;                   \
        }                                                                                          \
        for (int64_t k = 0; k < K; k++) {                                                          \
            const float *xk = x + k * ldx;                                                         \
            __m512 xv[nv];                                                                         \
            _Pragma("GCC unroll 3") for (int j = 0; j < nv; j++) xv[j] =                           \
                j == nv - 1 ? _mm512_maskz_loadu_ps(mask, xk + 16 * j)                             \
                            : _mm512_loadu_ps(xk + 16 * j);                                        \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                   \
            {                                                                                      \
                __m512 wv = _mm512_set1_ps(wr[r][k]);                                              \
                _Pragma("GCC unroll 3") for (int j = 0; j < nv; j++) acc[r][j] =                   \
                    _mm512_fmadd_ps(wv, xv[j], acc[r][j]);                                         \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                       \
        {                                                                                          \
            if (r >= mr)                                                                           \
                break;                                                                             \
            _Pragma("GCC unroll 3") for (int j = 0; j < nv; j++)                                   \
            {                                                                                      \
                /* max(lo, v) then min(hi, v): NaN in v is kept */                                 \
                __m512 v = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r][j]));                      \
                if (j == nv - 1)                                                                   \
                    _mm512_mask_storeu_ps(y + r * ldy + 16 * j, mask, v);                          \
                else                                                                               \
                    _mm512_storeu_ps(y + r * ldy + 16 * j, v);                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define DEF_TILE(nv)                                                                               \
    __attribute__((target("avx512f"))) static void tile##nv(                                       \
        int64_t K, const float *restrict w, int64_t ldw, const float *restrict x, int64_t ldx,     \
        const float *restrict b, int mr, float *restrict y, int64_t ldy, __mmask16 mask,           \
        __m512 vlo, __m512 vhi)                                                                    \
    {                                                                                              \
        TILE_BODY(nv);                                                                             \
    }

DEF_TILE(1)
DEF_TILE(2)
DEF_TILE(3)

/* Columns of X per block: about 256 KB of X rows, so that a block stays in
 * the L2 cache while every tile row of W goes over it. */
static int64_t block_cols(int64_t K, int64_t N)
{
    int64_t nb = K > 0 ? (int64_t)(64 * 1024) / K : N;
    nb = (nb + NR - 1) / NR * NR;
    return nb < NR ? NR : nb > N ? N : nb;
}

__attribute__((target("avx512f"))) static void
gemm_avx512(int64_t M, int64_t N, int64_t K, const float *w, int64_t ldw, const float *x,
            int64_t ldx, const float *b, float *y, int64_t ldy, float lo, float hi)
{
    __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    int64_t NB = block_cols(K, N);
    for (int64_t n0 = 0; n0 < N; n0 += NB) {
        int64_t nb = N - n0 < NB ? N - n0 : NB;
        for (int64_t m0 = 0; m0 < M; m0 += MR) {
            int mr = M - m0 < MR ? (int)(M - m0) : MR;
            const float *wm = w + m0 * ldw, *bm = b ? b + m0 : NULL;
            for (int64_t c = 0; c < nb; c += NR) {
                int64_t cols = nb - c < NR ? nb - c : NR, rest = cols % 16;
                __mmask16 mask = rest ? (__mmask16)((1u << rest) - 1) : (__mmask16)0xffff;
                const float *xc = x + n0 + c;
                float *yc = y + m0 * ldy + n0 + c;
                if (cols > 32)
                    tile3(K, wm, ldw, xc, ldx, bm, mr, yc, ldy, mask, vlo, vhi);
                else if (cols > 16)
                    tile2(K, wm, ldw, xc, ldx, bm, mr, yc, ldy, mask, vlo, vhi);
                else
                    tile1(K, wm, ldw, xc, ldx, bm, mr, yc, ldy, mask, vlo, vhi);
            }
        }
    }
}

bool sg__gemm_nchw(int64_t M, int64_t N, int64_t K, const float *w, int64_t ldw, const float *x,
                   int64_t ldx, const float *b, float *y, int64_t ldy, float lo, float hi)
{
    /* Cached for every thread that runs kernels (the check reads cpuid
     * data; any thread may store the same answer). */
    static _Atomic int avx512 = -1;
    int have = atomic_load_explicit(&avx512, memory_order_relaxed);
    if (have < 0) {
        have = __builtin_cpu_supports("avx512f") != 0;
        atomic_store_explicit(&avx512, have, memory_order_relaxed);
    }
    if (!have)
        return false;
    if (M > 0 && N > 0)
        gemm_avx512(M, N, K, w, ldw, x, ldx, b, y, ldy, lo, hi);
    return true;
}

#else

bool sg__gemm_nchw(int64_t M, int64_t N, int64_t K, const float *w, int64_t ldw, const float *x,
                   int64_t ldx, const float *b, float *y, int64_t ldy, float lo, float hi)
{
    (void)M, (void)N, (void)K, (void)w, (void)ldw, (void)x, (void)ldx, (void)b, (void)y;
    (void)ldy, (void)lo, (void)hi;
    return false;
}

#endif
