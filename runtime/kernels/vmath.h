/*
 * vmath.h - exp and erf for float32 loops the compiler can vectorise.
 *
 * libm's expf and erff are calls the vectoriser cannot look into, so a
 * loop over them runs one element at a time (ViT-B/16 spent a sixth of its
 * run in Erf and Softmax). These are branch-free: inlined into a loop
 * built with SG_RT_CLONES they run 8 or 16 lanes wide. Accuracy (checked
 * against libm over every float range in tests/check_runtime.c): sg_expf
 * within 2 ulp, sg_erff within 2 ulp; special values as libm (NaN stays
 * NaN, exp(-inf) = 0, exp(+inf) = +inf, erf(+-inf) = +-1).
 */
#ifndef SG_VMATH_H
#define SG_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float sg__vm_f32_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static inline double sg__vm_f64_bits(uint64_t b)
{
    double f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static inline uint64_t sg__vm_bits_f64(double f)
{
    uint64_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/*
 * e^x in float: x = n ln2 + r with |r| <= ln2/2 (ln2 in two parts), e^r
 * from Cephes' minimax polynomial, 2^n as two exponent-field scalings so
 * that subnormal results come out right.
 */
static inline float sg_expf(float x)
{
    float xc = x == x ? x : 0.0f; /* NaN computed as 0, restored below */
    xc = xc > 88.8f ? 88.8f : xc;
    xc = xc < -104.0f ? -104.0f : xc;
    /* n = round(x / ln2), by the 1.5 * 2^23 shifter (exact for |n| < 2^22) */
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
    float s1 = sg__vm_f32_bits((uint32_t)(n1 + 127) << 23);
    float s2 = sg__vm_f32_bits((uint32_t)(n2 + 127) << 23);
    float y = p * s1 * s2;
    y = x > 88.72283935546875f ? sg__vm_f32_bits(0x7f800000u) : y;
    y = x < -103.97208f ? 0.0f : y;
    return x == x ? y : x;
}

/* e^x in double for |x| <= 700: Taylor series to x^12 / 12! on |r| <= ln2/2. */
static inline double sg__vm_exp(double x)
{
    double t = x * 1.4426950408889634 + 6755399441055744.0; /* 1.5 * 2^52 shifter */
    double n = t - 6755399441055744.0;
    int64_t ni = (int64_t)(sg__vm_bits_f64(t) - sg__vm_bits_f64(6755399441055744.0));
    double r = x - n * 6.93147180369123816490e-01;
    r = r - n * 1.90821492927058770002e-10;
    double p = 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    return p * sg__vm_f64_bits((uint64_t)(ni + 1023) << 52);
}

/*
 * erf(x) in float, computed in double: the Taylor series of erf below
 * |x| = 0.5 (to x^17), above it 1 - erfc with Numerical Recipes' erfc
 * (relative error below 1.2e-7 of erfc, so well under an ulp of erf).
 * |x| >= 4 gives +-1 (erf(4) is 1 - 1.5e-8).
 */
static inline float sg_erff(float x)
{
    /* Selects only between values already computed (no arm may trap), so
     * that GCC if-converts the loop; fabs and copysign are not branches. */
    double xd = x, a = fabs(xd);
    a = a == a ? a : 0.0;
    a = a > 4.0 ? 4.0 : a;
    double z = a * a;
    /* erf(a) = 2/sqrt(pi) * a * sum_n (-z)^n / (n! (2n + 1)), z = a^2 */
    double s = 1.0 / 685440.0;
    s = s * z - 1.0 / 75600.0;
    s = s * z + 1.0 / 9360.0;
    s = s * z - 1.0 / 1320.0;
    s = s * z + 1.0 / 216.0;
    s = s * z - 1.0 / 42.0;
    s = s * z + 1.0 / 10.0;
    s = s * z - 1.0 / 3.0;
    s = s * z + 1.0;
    double small = 1.1283791670955126 * a * s;
    double t = 1.0 / (1.0 + 0.5 * a);
    double q = 0.17087277;
    q = q * t - 0.82215223;
    q = q * t + 1.48851587;
    q = q * t - 1.13520398;
    q = q * t + 0.27886807;
    q = q * t - 0.18628806;
    q = q * t + 0.09678418;
    q = q * t + 0.37409196;
    q = q * t + 1.00002368;
    q = q * t - 1.26551223;
    double large = 1.0 - t * sg__vm_exp(q - z);
    double e = a < 0.5 ? small : large;
    float y = (float)copysign(e, xd);
    return x == x ? y : x;
}

#endif
