/*
 * quantize.c - QuantizeLinear, DequantizeLinear (per tensor or per axis)
 * and DynamicQuantizeLinear. Rounding is half to even and results saturate
 * to the range of the quantized type. (MatMulInteger and QLinearMatMul are
 * in matmul.c, ConvInteger and QLinearConv in conv.c.)
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

static bool qrange(int32_t dt, double *lo, double *hi)
{
    switch (dt) {
    case SG_DTYPE_UINT8:
        *lo = 0, *hi = 255;
        return true;
    case SG_DTYPE_INT8:
        *lo = -128, *hi = 127;
        return true;
    case SG_DTYPE_UINT16:
        *lo = 0, *hi = 65535;
        return true;
    case SG_DTYPE_INT16:
        *lo = -32768, *hi = 32767;
        return true;
    case SG_DTYPE_INT32:
        *lo = -2147483648.0, *hi = 2147483647.0;
        return true;
    default:
        return false;
    }
}

/* The per-element parameter index: scale/zero point are scalars or 1-D
 * along `axis` of X. */
struct qaxis {
    int64_t inner, n; /* element i uses parameter (i / inner) % n */
};

static sg_status param_axis(struct sg_kctx *k, const sg_rt_value *X, const sg_rt_value *S,
                            const sg_rt_value *Z, struct qaxis *q)
{
    q->inner = 1;
    q->n = 1;
    if (S->numel == 1 && S->rank <= 1)
        return SG_OK;
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 1), X->rank, &axis);
    if (st)
        return st;
    if (S->rank != 1 || S->dims[0] != X->dims[axis] || (Z && Z->numel != S->numel))
        return sg_kfail(k, SG_ESHAPE, "scale %s does not fit axis %u of %s", sg_kshape(k, S), axis,
                        sg_kshape(k, X));
    for (uint32_t d = axis + 1; d < X->rank; d++)
        q->inner *= X->dims[d];
    q->n = X->dims[axis];
    return SG_OK;
}

static sg_status run_quantize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *Z = sg_kin(k, 2);
    int32_t dt = Z ? Z->dtype : SG_DTYPE_UINT8;
    double lo, hi;
    if (!qrange(dt, &lo, &hi))
        return sg_kfail(k, SG_ETYPE, "cannot quantize to %s", sg_dtype_name(dt));
    struct qaxis q;
    sg_status st = param_axis(k, X, S, Z, &q);
    if (st)
        return st;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, dt, X->dims, X->rank, &Y)))
        return st;
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t p = (i / q.inner) % q.n;
        double s = sg_rt_get_f64(S, p), z = Z ? sg_rt_get_f64(Z, p) : 0;
        /* float32 inputs divide in float32, as the reference does: the
         * quotient may round onto a .5 that double would not reach. */
        double v = X->dtype == SG_DTYPE_FLOAT
                       ? (double)nearbyintf(((const float *)X->data)[i] / (float)s) + z
                       : nearbyint(sg_rt_get_f64(X, i) / s) + z;
        v = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
        sg_rt_set_f64(Y, i, v);
    }
    return SG_OK;
}

static sg_status run_dequantize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *Z = sg_kin(k, 2);
    struct qaxis q;
    sg_status st = param_axis(k, X, S, Z, &q);
    if (st)
        return st;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, S->dtype, X->dims, X->rank, &Y)))
        return st;
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t p = (i / q.inner) % q.n;
        double z = Z ? sg_rt_get_f64(Z, p) : 0;
        sg_rt_set_f64(Y, i, (sg_rt_get_f64(X, i) - z) * sg_rt_get_f64(S, p));
    }
    return SG_OK;
}

static sg_status run_dynamic_quantize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    double mn = 0, mx = 0;
    for (int64_t i = 0; i < X->numel; i++) {
        double v = sg_rt_get_f64(X, i);
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    /* The reference computes in float32. */
    float scale = (float)((float)mx - (float)mn) / 255.0f;
    float zpf = scale != 0 ? nearbyintf(0.0f - (float)mn / scale) : 0.0f;
    double zp = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
    sg_rt_value *Y, *S, *Z;
    sg_status st;
    if ((st = sg_kout(k, 0, SG_DTYPE_UINT8, X->dims, X->rank, &Y)) ||
        (st = sg_kout(k, 1, SG_DTYPE_FLOAT, NULL, 0, &S)) ||
        (st = sg_kout(k, 2, SG_DTYPE_UINT8, NULL, 0, &Z)))
        return st;
    *(float *)S->data = scale;
    *(uint8_t *)Z->data = (uint8_t)zp;
    for (int64_t i = 0; i < X->numel; i++) {
        double v = scale != 0 ? nearbyint((float)sg_rt_get_f64(X, i) / scale) + zp : zp;
        ((uint8_t *)Y->data)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "QuantizeLinear", 10, 0, SG_KT_F32 | SG_KT(SG_DTYPE_INT32), 0, run_quantize},
    {"", "DequantizeLinear", 10, 0, SG_KT_INTS, 0, run_dequantize},
    {"", "DynamicQuantizeLinear", 11, 0, SG_KT_F32, 0, run_dynamic_quantize},
};
SG_KERNEL_FAMILY(quantize, kernels);
