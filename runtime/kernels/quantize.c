/*
 * quantize.c - linear quantization: QuantizeLinear and DequantizeLinear
 * (per tensor; per axis from opset 13; float16/bfloat16 scales and float8
 * from 19; blocks along the axis, int16/uint16, uint4/int4 and
 * output_dtype from 21; float4e2m1, QuantizeLinear's `precision` and
 * DequantizeLinear's `output_dtype` from 23), DynamicQuantizeLinear,
 * MatMulInteger and QLinearMatMul.
 *
 * Quantizing divides x by the scale in the precision the ONNX reference
 * uses: numpy's promotion of the two types (float32, float16 for two
 * float16s, float64 for int32 x), from opset 23 the `precision` attribute
 * or else the scale's type, as the spec says (the operands are rounded to
 * it first). Integers then round half to even, add the zero point and
 * saturate to the output type (int4 [-8, 7], uint4 [0, 15]); float8 rounds
 * to nearest even with the `saturate` rules of Cast's tables of the same
 * opset; float4e2m1 adds the zero point and rounds as Cast does. The zero
 * point of a float8 or float4 type must be 0: the spec's formula would add
 * it, the reference ignores it (QuantizeLinear) or refuses it
 * (DequantizeLinear), so a result could not be vouched for.
 * Dequantizing computes (x - zero point) * scale in float32, as the
 * reference does, and rounds to the output type (the scale's, or
 * output_dtype).
 *
 * The integer matrix products subtract the zero points (per tensor, per
 * row of A, per column of B) and multiply on BLAS in double, which is exact
 * for any realistic inner dimension (|sum| < 2^53), with MatMul's batch
 * broadcasting. QLinearMatMul rescales each int32 sum by
 * float32(a_scale * b_scale / y_scale) in double before rounding.
 */
#include "rt_impl.h"
#include "sg_blas.h"
#include "sg_dims.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* The representable range of a quantized integer type. */
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
    case SG_DTYPE_UINT4:
        *lo = 0, *hi = 15;
        return true;
    case SG_DTYPE_INT4:
        *lo = -8, *hi = 7;
        return true;
    default:
        return false;
    }
}

/* The quantized types of each opset, as QuantizeLinear's outputs and
 * DequantizeLinear's inputs (int32 aside, which only DequantizeLinear
 * takes). */
static bool qtype_at(int32_t dt, int64_t opset)
{
    if (dt == SG_DTYPE_UINT8 || dt == SG_DTYPE_INT8)
        return true;
    if (sg_dtype_is_float8(dt))
        return opset >= 19;
    if (dt == SG_DTYPE_UINT16 || dt == SG_DTYPE_INT16 || dt == SG_DTYPE_UINT4 ||
        dt == SG_DTYPE_INT4)
        return opset >= 21;
    return dt == SG_DTYPE_FLOAT4E2M1 && opset >= 23;
}

/* The zero point of a float8 or float4 tensor must be all zeros. */
static sg_status zero_zp(struct sg_kctx *k, const sg_rt_value *Z)
{
    for (int64_t i = 0; Z && i < Z->numel; i++)
        if (sg_rt_get_f64(Z, i) != 0)
            return sg_kfail(k, SG_EUNSUPPORTED,
                            "zero point %s is not 0 (element %lld): for %s the spec's formula "
                            "would add it and the ONNX reference ignores or refuses it",
                            sg_kshape(k, Z), (long long)i, sg_dtype_name(Z->dtype));
    return SG_OK;
}

/* v rounded to float type dt (float64: unchanged). Operands of a
 * division already in dt: computing in double and rounding once is the
 * correctly rounded result in dt. */
static double round_to(int32_t dt, double v)
{
    switch (dt) {
    case SG_DTYPE_FLOAT:
        return (float)v;
    case SG_DTYPE_FLOAT16:
        return sg_half_to_float(sg_float_to_half((float)v));
    case SG_DTYPE_BFLOAT16:
        return sg_bf16_to_float(sg_float_to_bf16((float)v));
    default:
        return v;
    }
}

/* Element i of an integer tensor of a quantized type. */
static inline int64_t qget(const sg_rt_value *v, int64_t i)
{
    switch (v->dtype) {
    case SG_DTYPE_UINT8:
        return ((const uint8_t *)v->data)[i];
    case SG_DTYPE_INT8:
        return ((const int8_t *)v->data)[i];
    case SG_DTYPE_UINT16:
        return ((const uint16_t *)v->data)[i];
    case SG_DTYPE_INT16:
        return ((const int16_t *)v->data)[i];
    case SG_DTYPE_INT32:
        return ((const int32_t *)v->data)[i];
    case SG_DTYPE_INT4:
        return ((const int8_t *)v->data)[i]; /* held one per byte */
    case SG_DTYPE_UINT4:
        return ((const uint8_t *)v->data)[i];
    default:
        return sg_rt_get_i64(v, i);
    }
}

/* Store an already saturated value. */
static inline void qput(sg_rt_value *v, int64_t i, double x)
{
    switch (v->dtype) {
    case SG_DTYPE_UINT8:
        ((uint8_t *)v->data)[i] = (uint8_t)x;
        break;
    case SG_DTYPE_INT8:
        ((int8_t *)v->data)[i] = (int8_t)x;
        break;
    case SG_DTYPE_UINT16:
        ((uint16_t *)v->data)[i] = (uint16_t)x;
        break;
    case SG_DTYPE_INT16:
        ((int16_t *)v->data)[i] = (int16_t)x;
        break;
    case SG_DTYPE_INT4:
        ((int8_t *)v->data)[i] = (int8_t)x;
        break;
    case SG_DTYPE_UINT4:
        ((uint8_t *)v->data)[i] = (uint8_t)x;
        break;
    default:
        ((int32_t *)v->data)[i] = (int32_t)x;
        break;
    }
}

/* x saturated to [lo, hi]; NaN gives lo (0 for unsigned types) instead of
 * an undefined conversion to an integer. */
static inline double clampd(double x, double lo, double hi)
{
    return x != x ? (lo > 0 ? lo : hi < 0 ? hi : 0) : x < lo ? lo : x > hi ? hi : x;
}

/* How the scale and zero point map onto x: one value, one per index of
 * `axis`, or one per block of `block` indices along it. x is seen as
 * [outer, D, inner]; the scale of element (o, a, j) is at
 * per tensor 0, per axis a, blocked (o * Db + a / block) * inner + j. */
struct qmap {
    enum { Q_TENSOR, Q_AXIS, Q_BLOCK } kind;
    int64_t outer, D, inner, Db, block;
};

static int64_t qmap_index(const struct qmap *q, int64_t o, int64_t a, int64_t j)
{
    switch (q->kind) {
    case Q_TENSOR:
        return 0;
    case Q_AXIS:
        return a;
    default:
        return (o * q->Db + a / q->block) * q->inner + j;
    }
}

/* Work out the mapping of scale S (and zero point Z, same shape) onto X. */
static sg_status qmap_make(struct sg_kctx *k, const sg_rt_value *X, const sg_rt_value *S,
                           const sg_rt_value *Z, struct qmap *q)
{
    const char *sn = strcmp(k->node->op_type, "QuantizeLinear") == 0 ? "y_scale" : "x_scale";
    memset(q, 0, sizeof *q);
    q->outer = 1;
    q->D = 1;
    q->inner = X->numel;
    /* One value either way ([] and [1]) is one shape, as the reference and
     * ONNX's own backend tests take it. */
    bool one = Z && Z->numel == 1 && S->numel == 1 && Z->rank <= 1 && S->rank <= 1;
    if (Z && !one && (Z->rank != S->rank || memcmp(Z->dims, S->dims, S->rank * sizeof S->dims[0])))
        return sg_kfail(k, SG_ESHAPE, "zero point %s and %s %s differ in shape", sg_kshape(k, Z),
                        sn, sg_kshape(k, S));
    int64_t block = k->opset >= 21 ? sg_kattr_int(k, "block_size", 0) : 0;
    if (S->numel == 1 && S->rank <= 1 && block == 0) {
        q->kind = Q_TENSOR;
        return SG_OK;
    }
    if (k->opset < 13)
        return sg_kfail(k, SG_ESHAPE, "%s must be a scalar before opset 13, got %s (x is %s)", sn,
                        sg_kshape(k, S), sg_kshape(k, X));
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 1), X->rank, &axis);
    if (st)
        return st;
    q->D = X->dims[axis];
    q->inner = 1;
    for (uint32_t d = 0; d < X->rank; d++)
        if (d < axis)
            q->outer *= X->dims[d];
        else if (d > axis)
            q->inner *= X->dims[d];
    if (block > 0) {
        bool ok = S->rank == X->rank && S->dims[axis] == sg_dim_ceildiv(X->dims[axis], block);
        for (uint32_t d = 0; ok && d < X->rank; d++)
            ok = d == axis || S->dims[d] == X->dims[d];
        if (!ok)
            return sg_kfail(k, SG_ESHAPE,
                            "%s %s does not give one value per block of %lld along axis %u of "
                            "x %s",
                            sn, sg_kshape(k, S), (long long)block, axis, sg_kshape(k, X));
        q->kind = Q_BLOCK;
        q->block = block;
        q->Db = S->dims[axis];
        return SG_OK;
    }
    if (block < 0)
        return sg_kfail(k, SG_EINVAL, "block_size %lld is negative", (long long)block);
    if (S->rank != 1 || S->dims[0] != X->dims[axis])
        return sg_kfail(k, SG_ESHAPE,
                        "%s %s must be a scalar or hold one value per index of axis %u "
                        "of x %s",
                        sn, sg_kshape(k, S), axis, sg_kshape(k, X));
    q->kind = Q_AXIS;
    return SG_OK;
}

/* ---------------------------------------------- Quantize / Dequantize */

/* The precision QuantizeLinear divides in (see the top of the file). */
static int32_t division_dtype(struct sg_kctx *k, int32_t x, int32_t s)
{
    if (k->opset >= 23) {
        int64_t p = sg_kattr_int(k, "precision", 0);
        return p ? (int32_t)p : s;
    }
    if (x == SG_DTYPE_INT32 || s == SG_DTYPE_INT32)
        return SG_DTYPE_DOUBLE;
    return x == s ? x : SG_DTYPE_FLOAT;
}

static sg_status run_quantize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *Z = sg_kin(k, 2);
    bool half = X->dtype == SG_DTYPE_FLOAT16 || X->dtype == SG_DTYPE_BFLOAT16;
    if (X->dtype != SG_DTYPE_FLOAT && X->dtype != SG_DTYPE_INT32 && !(half && k->opset >= 19))
        return sg_kfail(k, SG_ETYPE, "cannot quantize %s at opset %lld", sg_kshape(k, X),
                        (long long)k->opset);
    if (!S)
        return sg_kfail(k, SG_EUNDEF, "y_scale is required");
    if (!sg_dtype_is_float(S->dtype) && !(k->opset >= 23 && S->dtype == SG_DTYPE_INT32))
        return sg_kfail(k, SG_ETYPE, "y_scale must be a float tensor, got %s", sg_kshape(k, S));
    int32_t odt = SG_DTYPE_UINT8;
    int64_t attr_dt = k->opset >= 21 ? sg_kattr_int(k, "output_dtype", 0) : 0;
    if (Z && attr_dt && attr_dt != Z->dtype)
        return sg_kfail(k, SG_ETYPE, "output_dtype %s differs from y_zero_point %s",
                        sg_dtype_name((int32_t)attr_dt), sg_kshape(k, Z));
    if (Z)
        odt = Z->dtype;
    else if (attr_dt)
        odt = (int32_t)attr_dt;
    if (!qtype_at(odt, k->opset))
        return sg_kfail(k, SG_ETYPE, "cannot quantize to %s at opset %lld", sg_dtype_name(odt),
                        (long long)k->opset);
    int32_t pdt = division_dtype(k, X->dtype, S->dtype);
    if (!sg_dtype_is_float(pdt))
        return sg_kfail(k, SG_ETYPE, "precision %s is not a float type", sg_dtype_name(pdt));
    bool narrow = sg_dtype_is_float8(odt) || odt == SG_DTYPE_FLOAT4E2M1;
    sg_status st;
    if (narrow && (st = zero_zp(k, Z)))
        return st;
    unsigned flags = sg_kattr_int(k, "saturate", 1) ? SG_FP8_SATURATE : 0;
    struct qmap q;
    if ((st = qmap_make(k, X, S, Z, &q)))
        return st;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, odt, X->dims, X->rank, &Y)))
        return st;
    double lo = 0, hi = 0;
    qrange(odt, &lo, &hi);
    for (int64_t o = 0, i = 0; o < q.outer; o++)
        for (int64_t a = 0; a < q.D; a++)
            for (int64_t j = 0; j < q.inner; j++, i++) {
                int64_t si = qmap_index(&q, o, a, j);
                double x = round_to(pdt, sg_rt_get_f64(X, i));
                double v = round_to(pdt, x / round_to(pdt, sg_rt_get_f64(S, si)));
                if (sg_dtype_is_float8(odt))
                    ((uint8_t *)Y->data)[i] = sg_float_to_fp8(odt, v, flags);
                else if (odt == SG_DTYPE_FLOAT4E2M1) /* + a zero 0: -0 becomes +0 */
                    ((uint8_t *)Y->data)[i] =
                        sg_float_to_fp4((float)(v + (Z ? sg_rt_get_f64(Z, si) : 0)));
                else
                    qput(Y, i, clampd(rint(v) + (Z ? (double)qget(Z, si) : 0), lo, hi));
            }
    return SG_OK;
}

static sg_status run_dequantize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1), *Z = sg_kin(k, 2);
    if (X->dtype != SG_DTYPE_INT32 && !qtype_at(X->dtype, k->opset))
        return sg_kfail(k, SG_ETYPE, "cannot dequantize %s at opset %lld", sg_kshape(k, X),
                        (long long)k->opset);
    if (!S)
        return sg_kfail(k, SG_EUNDEF, "x_scale is required");
    if (!sg_dtype_is_float(S->dtype) || S->dtype == SG_DTYPE_DOUBLE)
        return sg_kfail(k, SG_ETYPE, "x_scale must be float32, float16 or bfloat16, got %s",
                        sg_kshape(k, S));
    if (Z && Z->dtype != X->dtype)
        return sg_kfail(k, SG_ETYPE, "x_zero_point %s and x %s differ in type", sg_kshape(k, Z),
                        sg_kshape(k, X));
    bool narrow = sg_dtype_is_float8(X->dtype) || X->dtype == SG_DTYPE_FLOAT4E2M1;
    sg_status st;
    if (narrow && (st = zero_zp(k, Z)))
        return st;
    struct qmap q;
    if ((st = qmap_make(k, X, S, Z, &q)))
        return st;
    int32_t odt = k->opset >= 19 ? S->dtype : SG_DTYPE_FLOAT;
    int64_t attr_dt = k->opset >= 23 ? sg_kattr_int(k, "output_dtype", 0) : 0;
    if (attr_dt) {
        odt = (int32_t)attr_dt;
        if (!sg_dtype_is_float(odt) || odt == SG_DTYPE_DOUBLE)
            return sg_kfail(k, SG_ETYPE, "output_dtype %s is not float32, float16 or bfloat16",
                            sg_dtype_name(odt));
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, odt, X->dims, X->rank, &Y)))
        return st;
    const float *s = sg_kfloats(k, S);
    float *y = odt == SG_DTYPE_FLOAT ? Y->data : sg_kscratch(k, (size_t)(X->numel + 1) * 4);
    if (!s || !y)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t o = 0, i = 0; o < q.outer; o++)
        for (int64_t a = 0; a < q.D; a++)
            for (int64_t j = 0; j < q.inner; j++, i++) {
                int64_t si = qmap_index(&q, o, a, j);
                if (narrow) {
                    y[i] = (float)sg_rt_get_f64(X, i) * s[si];
                    continue;
                }
                int64_t zp = Z ? qget(Z, si) : 0;
                y[i] = (float)(qget(X, i) - zp) * s[si];
            }
    if (odt != SG_DTYPE_FLOAT)
        for (int64_t i = 0; i < X->numel; i++)
            sg_rt_set_f64(Y, i, y[i]);
    return SG_OK;
}

static sg_status run_dynamic_quantize(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->dtype != SG_DTYPE_FLOAT)
        return sg_kfail(k, SG_ETYPE, "x must be float32, got %s", sg_kshape(k, X));
    const float *x = X->data;
    /* the range always includes 0, so that 0 is exact */
    float mn = 0, mx = 0;
    for (int64_t i = 0; i < X->numel; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    float scale = (float)(((double)mx - (double)mn) / 255.0);
    double zp = scale > 0 ? clampd(rint(-(double)mn / (double)scale), 0, 255) : 0;
    sg_rt_value *Y, *S, *Z;
    sg_status st;
    if ((st = sg_kout(k, 0, SG_DTYPE_UINT8, X->dims, X->rank, &Y)) ||
        (st = sg_kout(k, 1, SG_DTYPE_FLOAT, NULL, 0, &S)) ||
        (st = sg_kout(k, 2, SG_DTYPE_UINT8, NULL, 0, &Z)))
        return st;
    *(float *)S->data = scale;
    *(uint8_t *)Z->data = (uint8_t)zp;
    uint8_t *y = Y->data;
    for (int64_t i = 0; i < X->numel; i++)
        y[i] = (uint8_t)(scale > 0 ? clampd((double)rintf(x[i] / scale) + zp, 0, 255) : zp);
    return SG_OK;
}

/* ------------------------------------------------ integer matrix products */

/* One operand of an integer product: its matrix dims after promoting 1-D,
 * its batch dims, and its elements minus the zero point, as doubles. */
struct qmat {
    int64_t dims[SG_MAX_RANK];
    uint32_t rank;
    bool vec;
    double *v;
};

/*
 * Elements of T minus zero point zp (NULL: 0), as doubles over T's
 * promoted dims. zp is a scalar, or per row (for A: [M] or [..., M, 1]) or
 * per column (for B: [N] or [..., 1, N]); it must broadcast to T.
 */
static sg_status qmat_make(struct sg_kctx *k, const sg_rt_value *T, const sg_rt_value *zp,
                           bool is_a, struct qmat *m)
{
    const char *name = is_a ? "a" : "b";
    double lo, hi;
    if (T->rank == 0)
        return sg_kfail(k, SG_ESHAPE, "%s must have rank >= 1, got %s", name, sg_kshape(k, T));
    if (!qrange(T->dtype, &lo, &hi) || T->dtype == SG_DTYPE_INT32)
        return sg_kfail(k, SG_ETYPE, "%s must be int8 or uint8, got %s", name, sg_kshape(k, T));
    if (zp && zp->dtype != T->dtype)
        return sg_kfail(k, SG_ETYPE, "%s's zero point %s and %s %s differ in type", name,
                        sg_kshape(k, zp), name, sg_kshape(k, T));
    memcpy(m->dims, T->dims, T->rank * sizeof m->dims[0]);
    m->rank = T->rank;
    m->vec = T->rank == 1;
    if (m->vec) {
        if (is_a) {
            m->dims[1] = m->dims[0];
            m->dims[0] = 1;
        } else {
            m->dims[1] = 1;
        }
        m->rank = 2;
    }
    m->v = sg_kscratch(k, (size_t)(T->numel + 1) * sizeof *m->v);
    if (!m->v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (!zp || zp->numel == 1) {
        int64_t z = zp ? qget(zp, 0) : 0;
        for (int64_t i = 0; i < T->numel; i++)
            m->v[i] = (double)(qget(T, i) - z);
        return SG_OK;
    }
    /* per row / per column: [M] is [M, 1] for a; [N] stays [N] for b */
    int64_t zd[SG_MAX_RANK];
    uint32_t zr = zp->rank;
    memcpy(zd, zp->dims, zr * sizeof zd[0]);
    if (is_a && zr == 1) {
        zd[1] = 1;
        zr = 2;
    }
    struct sg_bcast b;
    const int64_t *dl[2] = {m->dims, zd};
    uint32_t rl[2] = {m->rank, zr};
    sg_status st = sg_bcast_init_dims(k, &b, 2, dl, rl);
    if (st)
        return st;
    if (b.numel != T->numel || b.rank != m->rank)
        return sg_kfail(k, SG_ESHAPE, "%s's zero point %s does not fit %s %s", name,
                        sg_kshape(k, zp), name, sg_kshape(k, T));
    while (sg_bcast_next(&b))
        for (int64_t i = 0; i < b.run; i++)
            m->v[b.pos + i] =
                (double)(qget(T, b.off[0] + i * b.step[0]) - qget(zp, b.off[1] + i * b.step[1]));
    return SG_OK;
}

/* C = A * B over broadcast batch dims, in double; od and orank get the
 * output dims (1-D operands dropped as MatMul does). */
static sg_status qmatmul(struct sg_kctx *k, const struct qmat *A, const struct qmat *B, int64_t *od,
                         uint32_t *orank, double **C)
{
    int64_t M = A->dims[A->rank - 2], K = A->dims[A->rank - 1], N = B->dims[B->rank - 1];
    if (B->dims[B->rank - 2] != K)
        return sg_kfail(k, SG_ESHAPE, "inner dimensions differ: a is %s, b is %s",
                        sg_kshape(k, sg_kin(k, 0)),
                        sg_kshape(k, sg_kin(k, strcmp(k->node->op_type, "MatMulInteger") ? 3 : 1)));
    struct sg_bcast b;
    const int64_t *dl[2] = {A->dims, B->dims};
    uint32_t rl[2] = {A->rank - 2, B->rank - 2};
    sg_status st = sg_bcast_init_dims(k, &b, 2, dl, rl);
    if (st)
        return st;
    *orank = 0;
    for (uint32_t d = 0; d < b.rank; d++)
        od[(*orank)++] = b.dims[d];
    if (!A->vec)
        od[(*orank)++] = M;
    if (!B->vec)
        od[(*orank)++] = N;
    int64_t nc;
    if (!sg_dims_extent(od, *orank, sizeof **C, &nc))
        return sg_kfail(k, SG_ERANGE, "output %s is too large", sg_kdims(k, od, *orank));
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return sg_kfail(k, SG_ETOOBIG, "a GEMM of %lld x %lld x %lld exceeds the BLAS int range",
                        (long long)M, (long long)N, (long long)K);
    *C = sg_kscratch(k, (size_t)(nc + 1) * sizeof **C);
    if (!*C)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (M * N == 0)
        return SG_OK;
    if (K == 0) {
        memset(*C, 0, (size_t)(b.numel * M * N) * sizeof **C);
        return SG_OK;
    }
    while (sg_bcast_next(&b))
        for (int64_t r = 0; r < b.run; r++) {
            int64_t ai = b.off[0] + r * b.step[0], bi = b.off[1] + r * b.step[1];
            sg_blas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0,
                          A->v + ai * M * K, (int)K, B->v + bi * K * N, (int)N, 0.0,
                          *C + (b.pos + r) * M * N, (int)N);
        }
    return SG_OK;
}

static sg_status run_matmul_integer(struct sg_kctx *k)
{
    struct qmat A, B;
    int64_t od[SG_MAX_RANK];
    uint32_t orank;
    double *C;
    sg_rt_value *Y;
    sg_status st;
    if ((st = qmat_make(k, sg_kin(k, 0), sg_kin(k, 2), true, &A)) ||
        (st = qmat_make(k, sg_kin(k, 1), sg_kin(k, 3), false, &B)) ||
        (st = qmatmul(k, &A, &B, od, &orank, &C)) ||
        (st = sg_kout(k, 0, SG_DTYPE_INT32, od, orank, &Y)))
        return st;
    int32_t *y = Y->data;
    for (int64_t i = 0; i < Y->numel; i++)
        y[i] = (int32_t)(int64_t)C[i];
    return SG_OK;
}

/* A scale input as float32 (*out), and its shape for broadcasting against
 * the output: per row ([M] -> [M, 1]) for a, per column for b. */
static sg_status qscale(struct sg_kctx *k, uint32_t i, const char *name, bool per_row,
                        int64_t *dims, uint32_t *rank, const float **out)
{
    const sg_rt_value *S = sg_kin(k, i);
    if (!S || !sg_dtype_is_float(S->dtype))
        return sg_kfail(k, SG_ETYPE, "%s must be a float tensor, got %s", name,
                        S ? sg_kshape(k, S) : "nothing");
    memcpy(dims, S->dims, S->rank * sizeof dims[0]);
    *rank = S->rank;
    if (S->numel == 1) {
        *rank = 0;
    } else if (per_row && S->rank == 1) {
        dims[1] = 1;
        *rank = 2;
    }
    if (!(*out = sg_kfloats(k, S)))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static sg_status run_qlinear_matmul(struct sg_kctx *k)
{
    const sg_rt_value *Yz = sg_kin(k, 7), *Ys = sg_kin(k, 6);
    struct qmat A, B;
    int64_t od[SG_MAX_RANK];
    uint32_t orank;
    double *C;
    sg_status st;
    if ((st = qmat_make(k, sg_kin(k, 0), sg_kin(k, 2), true, &A)) ||
        (st = qmat_make(k, sg_kin(k, 3), sg_kin(k, 5), false, &B)) ||
        (st = qmatmul(k, &A, &B, od, &orank, &C)))
        return st;
    double lo, hi;
    if (!Yz || !qrange(Yz->dtype, &lo, &hi) || Yz->dtype == SG_DTYPE_INT32)
        return sg_kfail(k, SG_ETYPE, "y_zero_point must be int8 or uint8, got %s",
                        Yz ? sg_kshape(k, Yz) : "nothing");
    if (!Ys || Ys->numel != 1 || Yz->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "y_scale and y_zero_point must be scalars, got %s and %s",
                        Ys ? sg_kshape(k, Ys) : "nothing", sg_kshape(k, Yz));
    int64_t ad[SG_MAX_RANK], bd[SG_MAX_RANK];
    uint32_t ar, br;
    const float *as, *bs, *ys;
    if ((st = qscale(k, 1, "a_scale", true, ad, &ar, &as)) ||
        (st = qscale(k, 4, "b_scale", false, bd, &br, &bs)))
        return st;
    if (!(ys = sg_kfloats(k, Ys)))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, Yz->dtype, od, orank, &Y)))
        return st;
    struct sg_bcast b;
    const int64_t *dl[3] = {od, ad, bd};
    uint32_t rl[3] = {orank, ar, br};
    if ((st = sg_bcast_init_dims(k, &b, 3, dl, rl)))
        return st;
    if (b.numel != Y->numel || b.rank != orank)
        return sg_kfail(k, SG_ESHAPE, "a_scale %s and b_scale %s do not fit the output %s",
                        sg_kshape(k, sg_kin(k, 1)), sg_kshape(k, sg_kin(k, 4)),
                        sg_kdims(k, od, orank));
    double zp = (double)qget(Yz, 0);
    while (sg_bcast_next(&b))
        for (int64_t i = 0; i < b.run; i++) {
            float mul = as[b.off[1] + i * b.step[1]] * bs[b.off[2] + i * b.step[2]] / ys[0];
            double v = rint(C[b.pos + i] * (double)mul) + zp;
            qput(Y, b.pos + i, clampd(v, lo, hi));
        }
    return SG_OK;
}

/* The quantized types of each version (qtype_at); QuantizeLinear's masks
 * hold its inputs and outputs both (SG_KF_OUT_TYPES). */
#define Q_IN (SG_KT_F32 | SG_KT(SG_DTYPE_INT32))
#define Q_IN19 (Q_IN | SG_KT_F16 | SG_KT_BF16)
#define Q_INT (SG_KT(SG_DTYPE_INT8) | SG_KT(SG_DTYPE_UINT8))
#define Q_INT19 (Q_INT | SG_KT_F8)
#define Q_INT21 (Q_INT19 | SG_KT(SG_DTYPE_INT16) | SG_KT(SG_DTYPE_UINT16) | SG_KT_INT4)
#define Q_INT23 (Q_INT21 | SG_KT_F4)
#define Q_OUT SG_KF_OUT_TYPES

static const struct sg_kernel kernels[] = {
    {"", "QuantizeLinear", 10, 0, Q_IN | Q_INT, Q_OUT, run_quantize, "rro"},
    {"", "QuantizeLinear", 13, 0, Q_IN | Q_INT, Q_OUT, run_quantize, "rro"},
    {"", "QuantizeLinear", 19, 0, Q_IN19 | Q_INT19, Q_OUT, run_quantize, "rro"},
    {"", "QuantizeLinear", 21, 0, Q_IN19 | Q_INT21, Q_OUT, run_quantize, "rro"},
    {"", "QuantizeLinear", 23, 0, Q_IN19 | Q_INT23, Q_OUT, run_quantize, "rro"},
    {"", "DequantizeLinear", 10, 0, Q_INT | SG_KT(SG_DTYPE_INT32), 0, run_dequantize, "rro"},
    {"", "DequantizeLinear", 13, 0, Q_INT | SG_KT(SG_DTYPE_INT32), 0, run_dequantize, "rro"},
    {"", "DequantizeLinear", 19, 0, Q_INT19 | SG_KT(SG_DTYPE_INT32), 0, run_dequantize, "rro"},
    {"", "DequantizeLinear", 21, 0, Q_INT21 | SG_KT(SG_DTYPE_INT32), 0, run_dequantize, "rro"},
    {"", "DequantizeLinear", 23, 0, Q_INT23 | SG_KT(SG_DTYPE_INT32), 0, run_dequantize, "rro"},
    {"", "DynamicQuantizeLinear", 11, 0, SG_KT_F32, 0, run_dynamic_quantize, "r"},
    {"", "MatMulInteger", 10, 0, Q_INT, 0, run_matmul_integer, "rroo"},
    {"", "QLinearMatMul", 10, 0, Q_INT, 0, run_qlinear_matmul, "rrrrrrrr"},
    {"", "QLinearMatMul", 21, 0, Q_INT, 0, run_qlinear_matmul, "rrrrrrrr"},
};
SG_KERNEL_FAMILY(quantize, kernels);
