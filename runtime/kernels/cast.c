/*
 * cast.c - Cast and CastLike between every numeric type, bool and string,
 * float8 (opset 19), uint4/int4 (21) and float4e2m1 (23) included.
 *
 * Float to integer truncates toward zero; values outside int64 saturate
 * and NaN becomes 0 (C leaves both undefined), then narrower integers wrap
 * as numpy's astype does on x86. Float to string writes the shortest text
 * that reads back to the same value (numpy's str()); string to number
 * parses C syntax, including "nan" and "inf".
 *
 * To float8: round to nearest even from the value itself (a float64 is not
 * rounded through float32), then Cast's tables: with saturate (the
 * default) out-of-range values and +-Inf become +-max, without it Inf or
 * NaN by type. At every opset, as the ONNX reference and ONNX Runtime 1.30
 * do: the tables of Cast 19 to 23 make +-Inf NaN for the FNUZ types even
 * when saturating, those of Cast 24 on +-max.
 * To uint4/int4 from a float: rounded to the nearest integer, ties to
 * even, then the low 4 bits kept, as ONNX's int4.md says (ONNX Runtime
 * 1.30 rounds ties away from zero, the ONNX reference truncates toward
 * zero; they agree away from ties). From an integer: the low 4 bits.
 * To float4e2m1: nearest even, +-Inf and values beyond +-6 saturate, NaN
 * becomes -0 as in the ONNX reference and backend tests (float4.md's
 * table says 6). The saturate attribute concerns float8 only. To bool, -0 is
 * False in every type (ONNX Runtime 1.30 makes a float8 -0 True).
 */
#include "rt_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest %g text that reads back as the same float / double. */
static int format_float(char *buf, size_t size, double v, bool single)
{
    if (isnan(v))
        return snprintf(buf, size, "nan");
    if (isinf(v))
        return snprintf(buf, size, v > 0 ? "inf" : "-inf");
    for (int prec = 1; prec <= 17; prec++) {
        int n = snprintf(buf, size, "%.*g", prec, v);
        if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            return n;
    }
    return snprintf(buf, size, "%.17g", v);
}

/* Floating-point types, narrow ones included. */
static bool is_real(int32_t dt)
{
    return sg_dtype_is_float(dt) || sg_dtype_is_float8(dt) || dt == SG_DTYPE_FLOAT4E2M1;
}

/* Store real v as element i of Y, float8 under Cast's `flags`. */
static void put_real(sg_rt_value *Y, int64_t i, double v, unsigned flags)
{
    if (sg_dtype_is_float8(Y->dtype))
        ((uint8_t *)Y->data)[i] = sg_float_to_fp8(Y->dtype, v, flags);
    else if (Y->dtype == SG_DTYPE_UINT4 || Y->dtype == SG_DTYPE_INT4)
        ((uint8_t *)Y->data)[i] = sg_int4_wrap(Y->dtype, sg_rt_f64_to_i64(rint(v)));
    else
        sg_rt_set_f64(Y, i, v);
}

static sg_status to_string(struct sg_kctx *k, const sg_rt_value *X, sg_rt_value *Y)
{
    sg_bytes *out = Y->data;
    for (int64_t i = 0; i < X->numel; i++) {
        char buf[64];
        int n;
        if (X->dtype == SG_DTYPE_STRING) {
            out[i] = ((const sg_bytes *)X->data)[i];
            continue;
        }
        if (is_real(X->dtype))
            n = format_float(buf, sizeof buf, sg_rt_get_f64(X, i), X->dtype != SG_DTYPE_DOUBLE);
        else if (X->dtype == SG_DTYPE_UINT64)
            n = snprintf(buf, sizeof buf, "%llu",
                         (unsigned long long)((const uint64_t *)X->data)[i]);
        else if (X->dtype == SG_DTYPE_BOOL)
            n = snprintf(buf, sizeof buf, "%s", ((const uint8_t *)X->data)[i] ? "True" : "False");
        else
            n = snprintf(buf, sizeof buf, "%lld", (long long)sg_rt_get_i64(X, i));
        char *s = sg_kscratch(k, (size_t)n + 1);
        if (!s)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        memcpy(s, buf, (size_t)n + 1);
        out[i].data = (const uint8_t *)s;
        out[i].len = (size_t)n;
    }
    return SG_OK;
}

static sg_status from_string(struct sg_kctx *k, const sg_rt_value *X, sg_rt_value *Y,
                             unsigned flags)
{
    const sg_bytes *in = X->data;
    for (int64_t i = 0; i < X->numel; i++) {
        char buf[128];
        size_t len = in[i].len < sizeof buf - 1 ? in[i].len : sizeof buf - 1;
        if (len)
            memcpy(buf, in[i].data, len);
        buf[len] = 0;
        char *end;
        if (is_real(Y->dtype)) {
            double v = strtod(buf, &end);
            if (end == buf)
                return sg_kfail(k, SG_EPARSE, "element %lld: '%s' is not a number", (long long)i,
                                buf);
            put_real(Y, i, v, flags);
        } else if (Y->dtype == SG_DTYPE_BOOL) {
            sg_rt_set_i64(Y, i,
                          strcmp(buf, "True") == 0 || strcmp(buf, "true") == 0 ||
                              strtod(buf, NULL) != 0);
        } else if (Y->dtype == SG_DTYPE_UINT64) {
            errno = 0;
            unsigned long long v = strtoull(buf, &end, 10);
            if (end == buf)
                return sg_kfail(k, SG_EPARSE, "element %lld: '%s' is not an integer", (long long)i,
                                buf);
            ((uint64_t *)Y->data)[i] = v;
        } else {
            long long v = strtoll(buf, &end, 10);
            if (end == buf)
                return sg_kfail(k, SG_EPARSE, "element %lld: '%s' is not an integer", (long long)i,
                                buf);
            sg_rt_set_i64(Y, i, v);
        }
    }
    return SG_OK;
}

/* Round a double to the nearest half (ties to even) without going through
 * float32, which could round twice. */
static uint16_t double_to_half(double v)
{
    uint16_t h = sg_float_to_half((float)v);
    double hv = sg_half_to_float(h);
    if (isnan(v) || isinf(hv) || hv == v)
        return h;
    uint16_t mag = h & 0x7fff;
    uint16_t other;
    if (fabs(v) > fabs(hv))
        other = (uint16_t)(h + 1);
    else if (mag > 0)
        other = (uint16_t)(h - 1);
    else
        return h;
    double ov = sg_half_to_float(other);
    double dh = fabs(hv - v), dov = fabs(ov - v);
    if (isinf(ov))
        return h;
    if (dov < dh || (dov == dh && !(other & 1)))
        return other;
    return h;
}

/* Convert n elements of X into Y (already shaped); `flags` (SG_FP8_*) for
 * float8 results. */
static sg_status convert(struct sg_kctx *k, const sg_rt_value *X, sg_rt_value *Y, unsigned flags)
{
    int32_t from = X->dtype, to = Y->dtype;
    int64_t n = X->numel;
    if (to == SG_DTYPE_STRING)
        return to_string(k, X, Y);
    if (from == SG_DTYPE_STRING)
        return from_string(k, X, Y, flags);
    if (from == to) {
        memcpy(Y->data, X->data, (size_t)n * sg_rt_elem_size(from));
        return SG_OK;
    }
    /* Fast paths for the common float conversions. */
    if (from == SG_DTYPE_FLOAT && to == SG_DTYPE_FLOAT16) {
        const float *x = X->data;
        uint16_t *y = Y->data;
        for (int64_t i = 0; i < n; i++)
            y[i] = sg_float_to_half(x[i]);
        return SG_OK;
    }
    if (from == SG_DTYPE_FLOAT16 && to == SG_DTYPE_FLOAT) {
        const uint16_t *x = X->data;
        float *y = Y->data;
        for (int64_t i = 0; i < n; i++)
            y[i] = sg_half_to_float(x[i]);
        return SG_OK;
    }
    if (from == SG_DTYPE_DOUBLE && to == SG_DTYPE_FLOAT16) {
        /* Through float32 would round twice. */
        const double *x = X->data;
        uint16_t *y = Y->data;
        for (int64_t i = 0; i < n; i++)
            y[i] = double_to_half(x[i]);
        return SG_OK;
    }
    if (from == SG_DTYPE_FLOAT && sg_dtype_is_float8(to)) {
        const float *x = X->data;
        uint8_t *y = Y->data;
        for (int64_t i = 0; i < n; i++)
            y[i] = sg_float_to_fp8(to, x[i], flags);
        return SG_OK;
    }
    if (sg_dtype_is_float8(from) && to == SG_DTYPE_FLOAT) {
        const uint8_t *x = X->data;
        float *y = Y->data;
        for (int64_t i = 0; i < n; i++)
            y[i] = sg_fp8_to_float(from, x[i]);
        return SG_OK;
    }
    bool to_real = is_real(to);
    bool from_real = is_real(from);
    for (int64_t i = 0; i < n; i++) {
        if (to == SG_DTYPE_BOOL)
            ((uint8_t *)Y->data)[i] =
                from_real ? sg_rt_get_f64(X, i) != 0 : sg_rt_get_i64(X, i) != 0;
        else if (to_real || from_real)
            put_real(Y, i,
                     from == SG_DTYPE_UINT64 ? (double)((const uint64_t *)X->data)[i]
                                             : sg_rt_get_f64(X, i),
                     flags);
        else
            sg_rt_set_i64(Y, i, sg_rt_get_i64(X, i));
    }
    return SG_OK;
}

static sg_status run_cast(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t to;
    if (strcmp(k->node->op_type, "CastLike") == 0) {
        const sg_rt_value *L = sg_kin(k, 1);
        if (!L)
            return sg_kfail(k, SG_EUNDEF, "needs a target_type input");
        to = L->dtype;
    } else {
        const sg_attr *a = sg_kattr(k, "to");
        if (!a || (a->type != SG_ATTR_INT && a->type != SG_ATTR_STRING))
            return sg_kfail(k, SG_EINVAL, "attribute 'to' is missing or not an int");
        to = a->i;
        if (a->type == SG_ATTR_STRING) { /* opset 1 spelled the type */
            char name[32];
            size_t n = a->s.len < sizeof name - 1 ? a->s.len : sizeof name - 1;
            if (n)
                memcpy(name, a->s.data, n);
            name[n] = 0;
            to = sg_dtype_from_name(name);
        }
    }
    if (!sg_dtype_valid((int32_t)to) || to == SG_DTYPE_UNDEFINED || !sg_rt_elem_size((int32_t)to))
        return sg_kfail(k, SG_EUNSUPPORTED, "cannot cast to type %lld", (long long)to);
    if (to == X->dtype)
        return sg_kout_alias(k, 0, X, X->dims, X->rank);
    if (to == SG_DTYPE_COMPLEX64 || to == SG_DTYPE_COMPLEX128 || X->dtype == SG_DTYPE_COMPLEX64 ||
        X->dtype == SG_DTYPE_COMPLEX128)
        return sg_kfail(k, SG_EUNSUPPORTED, "complex casts are not supported");
    unsigned flags = k->opset < 19 || sg_kattr_int(k, "saturate", 1) ? SG_FP8_SATURATE : 0;
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, (int32_t)to, X->dims, X->rank, &Y);
    if (st)
        return st;
    return convert(k, X, Y, flags);
}

/* The types of each version, as inputs and as outputs (SG_KF_OUT_TYPES);
 * complex, which the masks leave out, is refused by the kernel. */
#define T19 (SG_KT_ALL | SG_KT_F8)
#define T21 (T19 | SG_KT_INT4)
#define T23 (T21 | SG_KT_F4)
static const struct sg_kernel kernels[] = {
    {"", "Cast", 1, 0, SG_KT_ALL, SG_KF_OUT_TYPES, run_cast, "r"},
    {"", "Cast", 19, 0, T19, SG_KF_OUT_TYPES, run_cast, "r"},
    {"", "Cast", 21, 0, T21, SG_KF_OUT_TYPES, run_cast, "r"},
    {"", "Cast", 23, 0, T23, SG_KF_OUT_TYPES, run_cast, "r"},
    {"", "CastLike", 15, 0, SG_KT_ALL, SG_KF_OUT_TYPES, run_cast, "rr"},
    {"", "CastLike", 19, 0, T19, SG_KF_OUT_TYPES, run_cast, "rr"},
    {"", "CastLike", 21, 0, T21, SG_KF_OUT_TYPES, run_cast, "rr"},
    {"", "CastLike", 23, 0, T23, SG_KF_OUT_TYPES, run_cast, "rr"},
};
SG_KERNEL_FAMILY(cast, kernels);
