/*
 * narrow.c - float8, float4e2m1 and 4-bit integer conversions and packing
 * (see sg_dtype.h).
 *
 * Every narrow float type is described by one row of parameters; decoding
 * is ldexp of the fields, encoding rounds the magnitude to the type's
 * mantissa width with an unbounded exponent (so "[x]" of ONNX's Cast
 * tables, the value rounded to the target mantissa, is computed before the
 * range is looked at) and then applies the table's NaN, zero and overflow
 * rules.
 */
#include "sg_dtype.h"

#include <math.h>
#include <string.h>

struct narrow_fmt {
    int mbits;        /* mantissa bits */
    int bias;         /* exponent bias */
    int sign_bit;     /* 7 for float8, 3 for float4 */
    uint8_t max;      /* code of the largest finite magnitude */
    bool fnuz;        /* one zero, NaN is the negative zero's code */
    bool inf;         /* exponent all ones, mantissa 0: infinity (E5M2) */
    bool nan_top;     /* the all-ones magnitude is NaN (E4M3FN) */
    uint8_t nan;      /* the NaN magnitude code surgeon writes */
    double max_value; /* the value of `max` (check_dtypes.c checks it is) */
};

static const struct narrow_fmt fmt_e4m3fn = {3, 7, 7, 0x7e, false, false, true, 0x7f, 448};
static const struct narrow_fmt fmt_e4m3fnuz = {3, 8, 7, 0x7f, true, false, false, 0x80, 240};
/* E5M2's NaN: 0x7e, as ml_dtypes (and so the ONNX backend tests) write it. */
static const struct narrow_fmt fmt_e5m2 = {2, 15, 7, 0x7b, false, true, false, 0x7e, 57344};
static const struct narrow_fmt fmt_e5m2fnuz = {2, 16, 7, 0x7f, true, false, false, 0x80, 57344};
static const struct narrow_fmt fmt_e2m1 = {1, 1, 3, 0x7, false, false, false, 0, 6};

static const struct narrow_fmt *fp8_fmt(int32_t dtype)
{
    switch (dtype) {
    case SG_DTYPE_FLOAT8E4M3FN:
        return &fmt_e4m3fn;
    case SG_DTYPE_FLOAT8E4M3FNUZ:
        return &fmt_e4m3fnuz;
    case SG_DTYPE_FLOAT8E5M2:
        return &fmt_e5m2;
    case SG_DTYPE_FLOAT8E5M2FNUZ:
        return &fmt_e5m2fnuz;
    default:
        return NULL;
    }
}

static double decode(const struct narrow_fmt *f, uint8_t code)
{
    uint8_t sign = (uint8_t)(1u << f->sign_bit), mag_mask = (uint8_t)(sign - 1);
    uint8_t mag = code & mag_mask;
    int ebits = f->sign_bit - f->mbits;
    unsigned e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1);
    bool neg = code & sign;
    if (f->fnuz && code == sign)
        return NAN;
    if (f->nan_top && mag == mag_mask)
        return neg ? -NAN : NAN;
    if (f->inf && e == (1u << ebits) - 1)
        return m ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
    double v = e ? ldexp((double)((1u << f->mbits) | m), (int)e - f->bias - f->mbits)
                 : ldexp((double)m, 1 - f->bias - f->mbits);
    return neg ? -v : v;
}

/* |v| rounded to the mantissa width: the magnitude code, or false when the
 * rounded value is beyond the largest finite one. */
static bool round_mag(const struct narrow_fmt *f, double a, uint8_t *mag)
{
    int emin = 1 - f->bias; /* exponent of the smallest normal */
    double q;
    int e;
    if (a < ldexp(1.0, emin)) {
        /* Subnormal: units of 2^(emin - mbits); q == 2^mbits is the
         * smallest normal, whose code is the same number. */
        q = rint(ldexp(a, f->mbits - emin));
        *mag = (uint8_t)q;
        return true;
    }
    e = ilogb(a);
    q = rint(ldexp(a, f->mbits - e)); /* in [2^mbits, 2^(mbits+1)] */
    if (q == ldexp(1.0, f->mbits + 1)) {
        e++;
        q = ldexp(1.0, f->mbits);
    }
    if (ldexp(q, e - f->mbits) > f->max_value)
        return false;
    *mag = (uint8_t)(((e + f->bias) << f->mbits) | ((int)q - (1 << f->mbits)));
    return true;
}

float sg_fp8_to_float(int32_t dtype, uint8_t bits)
{
    const struct narrow_fmt *f = fp8_fmt(dtype);
    return f ? (float)decode(f, bits) : NAN;
}

uint8_t sg_float_to_fp8(int32_t dtype, double v, unsigned flags)
{
    const struct narrow_fmt *f = fp8_fmt(dtype);
    if (!f)
        return 0;
    bool sat = flags & SG_FP8_SATURATE;
    uint8_t sign = signbit(v) ? 0x80 : 0;
    uint8_t nan = f->fnuz ? f->nan : (uint8_t)(sign | f->nan);
    if (isnan(v))
        return nan;
    if (isinf(v)) {
        if (sat)
            return (uint8_t)(sign | f->max);
        return f->inf ? (uint8_t)(sign | (f->max + 1)) : nan;
    }
    uint8_t mag;
    if (!round_mag(f, fabs(v), &mag)) {
        if (sat)
            return (uint8_t)(sign | f->max);
        return f->inf ? (uint8_t)(sign | (f->max + 1)) : nan;
    }
    if (mag == 0 && f->fnuz)
        return 0; /* no negative zero */
    return (uint8_t)(sign | mag);
}

float sg_fp4_to_float(uint8_t code)
{
    return (float)decode(&fmt_e2m1, code & 0xf);
}

uint8_t sg_float_to_fp4(double v)
{
    uint8_t sign = signbit(v) ? 0x8 : 0;
    /* NaN: -0, as the ONNX reference (ml_dtypes) and so the backend tests
     * make it; float4.md's table says 6. */
    if (isnan(v))
        return 0x8;
    uint8_t mag;
    if (isinf(v) || !round_mag(&fmt_e2m1, fabs(v), &mag))
        return (uint8_t)(sign | fmt_e2m1.max);
    return (uint8_t)(sign | mag);
}

uint8_t sg_dtype_nibble(int32_t dtype, uint8_t nibble)
{
    nibble &= 0xf;
    if (dtype == SG_DTYPE_INT4)
        return (uint8_t)(int8_t)((int)(nibble ^ 8) - 8);
    return nibble;
}

uint8_t sg_int4_wrap(int32_t dtype, int64_t v)
{
    return sg_dtype_nibble(dtype, (uint8_t)((uint64_t)v & 0xf));
}

void sg_dtype_unpack4(int32_t dtype, const uint8_t *packed, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = sg_dtype_nibble(dtype, (uint8_t)(packed[i / 2] >> (4 * (i & 1))));
}

void sg_dtype_pack4(const uint8_t *elems, size_t n, uint8_t *packed)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        packed[i / 2] = (uint8_t)((elems[i] & 0xf) | (elems[i + 1] & 0xf) << 4);
    if (n & 1)
        packed[n / 2] = elems[n - 1] & 0xf;
}

double sg_dtype_get_f64(int32_t dtype, const void *data, size_t i)
{
    const uint8_t *p = data;
    switch (dtype) {
    case SG_DTYPE_FLOAT: {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    case SG_DTYPE_DOUBLE: {
        double d;
        memcpy(&d, p + 8 * i, 8);
        return d;
    }
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16:
    case SG_DTYPE_UINT16:
    case SG_DTYPE_INT16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return dtype == SG_DTYPE_FLOAT16    ? sg_half_to_float(h)
               : dtype == SG_DTYPE_BFLOAT16 ? sg_bf16_to_float(h)
               : dtype == SG_DTYPE_INT16    ? (double)(int16_t)h
                                            : (double)h;
    }
    case SG_DTYPE_INT32:
    case SG_DTYPE_UINT32: {
        uint32_t u;
        memcpy(&u, p + 4 * i, 4);
        return dtype == SG_DTYPE_INT32 ? (double)(int32_t)u : (double)u;
    }
    case SG_DTYPE_INT64:
    case SG_DTYPE_UINT64: {
        uint64_t u;
        memcpy(&u, p + 8 * i, 8);
        return dtype == SG_DTYPE_INT64 ? (double)(int64_t)u : (double)u;
    }
    case SG_DTYPE_INT8:
    case SG_DTYPE_INT4:
        return (int8_t)p[i];
    case SG_DTYPE_UINT8:
    case SG_DTYPE_BOOL:
    case SG_DTYPE_UINT4:
        return p[i];
    case SG_DTYPE_FLOAT8E4M3FN:
    case SG_DTYPE_FLOAT8E4M3FNUZ:
    case SG_DTYPE_FLOAT8E5M2:
    case SG_DTYPE_FLOAT8E5M2FNUZ:
        return sg_fp8_to_float(dtype, p[i]);
    case SG_DTYPE_FLOAT4E2M1:
        return sg_fp4_to_float(p[i]);
    default:
        return 0;
    }
}
