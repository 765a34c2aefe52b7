/*
 * generator.c - ops that make tensors from attributes or shapes: Constant,
 * ConstantOfShape, Range, EyeLike, OneHot, the window functions (Hann,
 * Hamming, Blackman), and the random ops (RandomUniform, RandomNormal,
 * their Like forms, Bernoulli).
 *
 * Random ops are deterministic: the generator is seeded from the `seed`
 * attribute, or from the node's name when there is none, so two runs of
 * one model give the same values (they cannot match another runtime's).
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

static sg_status run_constant(struct sg_kctx *k)
{
    const sg_attr *a;
    sg_rt_value *Y;
    sg_status st;
    if ((a = sg_kattr(k, "value")) && a->type == SG_ATTR_TENSOR) {
        sg_rt_value *v;
        if ((st = sg_kattr_tensor(k, "value", &v)))
            return st;
        st = sg_kout_value(k, 0, v);
        sg_rt_value_unref(v);
        return st;
    }
    if ((a = sg_kattr(k, "value_float")) && a->type == SG_ATTR_FLOAT) {
        if (!(st = sg_kout(k, 0, SG_DTYPE_FLOAT, NULL, 0, &Y)))
            *(float *)Y->data = a->f;
        return st;
    }
    if ((a = sg_kattr(k, "value_int")) && a->type == SG_ATTR_INT) {
        if (!(st = sg_kout(k, 0, SG_DTYPE_INT64, NULL, 0, &Y)))
            *(int64_t *)Y->data = a->i;
        return st;
    }
    if ((a = sg_kattr(k, "value_floats")) && a->type == SG_ATTR_FLOATS) {
        int64_t n = (int64_t)a->n_floats;
        if (!(st = sg_kout(k, 0, SG_DTYPE_FLOAT, &n, 1, &Y)) && n)
            memcpy(Y->data, a->floats, (size_t)n * sizeof(float));
        return st;
    }
    if ((a = sg_kattr(k, "value_ints")) && a->type == SG_ATTR_INTS) {
        int64_t n = (int64_t)a->n_ints;
        if (!(st = sg_kout(k, 0, SG_DTYPE_INT64, &n, 1, &Y)) && n)
            memcpy(Y->data, a->ints, (size_t)n * sizeof(int64_t));
        return st;
    }
    if ((a = sg_kattr(k, "value_string")) && a->type == SG_ATTR_STRING) {
        if (!(st = sg_kout(k, 0, SG_DTYPE_STRING, NULL, 0, &Y)))
            *(sg_bytes *)Y->data = a->s;
        return st;
    }
    if ((a = sg_kattr(k, "value_strings")) && a->type == SG_ATTR_STRINGS) {
        int64_t n = (int64_t)a->n_strings;
        if (!(st = sg_kout(k, 0, SG_DTYPE_STRING, &n, 1, &Y)) && n)
            memcpy(Y->data, a->strings, (size_t)n * sizeof(sg_bytes));
        return st;
    }
    if (sg_kattr(k, "sparse_value"))
        return sg_kfail(k, SG_EUNSUPPORTED, "sparse constants are not supported");
    return sg_kfail(k, SG_EINVAL, "no value attribute");
}

static sg_status run_constant_of_shape(struct sg_kctx *k)
{
    const int64_t *shape;
    int64_t n;
    sg_status st = sg_kin_ints(k, 0, &shape, &n);
    if (st)
        return st;
    if (n > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "rank %lld is too large", (long long)n);
    sg_rt_value *v = NULL;
    int32_t dt = SG_DTYPE_FLOAT;
    const sg_attr *a = sg_kattr(k, "value");
    if (a && a->type == SG_ATTR_TENSOR) {
        if ((st = sg_kattr_tensor(k, "value", &v)))
            return st;
        if (v->numel != 1) {
            sg_rt_value_unref(v);
            return sg_kfail(k, SG_ESHAPE, "value must hold one element");
        }
        dt = v->dtype;
    }
    /* The types each version adds: bfloat16 and float8 (20), 4-bit
     * integers (21), float4e2m1 (23). */
    int need = 9;
    if (dt == SG_DTYPE_BFLOAT16 || (SG_KT_F8 & SG_KT(dt)))
        need = 20;
    else if (SG_KT_INT4 & SG_KT(dt))
        need = 21;
    else if (dt == SG_DTYPE_FLOAT4E2M1)
        need = 23;
    if (k->opset < need) {
        sg_rt_value_unref(v);
        return sg_kfail(k, SG_ETYPE, "a value of type %s needs opset %d", sg_dtype_name(dt), need);
    }
    sg_rt_value *Y;
    st = sg_kout(k, 0, dt, shape, (uint32_t)n, &Y);
    if (!st && v) {
        size_t es = sg_rt_elem_size(dt);
        for (int64_t i = 0; i < Y->numel; i++)
            memcpy((char *)Y->data + i * (int64_t)es, v->data, es);
    }
    sg_rt_value_unref(v);
    return st;
}

static sg_status run_range(struct sg_kctx *k)
{
    const sg_rt_value *S = sg_kin(k, 0), *L = sg_kin(k, 1), *D = sg_kin(k, 2);
    if (!S || !L || !D || S->numel != 1 || L->numel != 1 || D->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "start, limit and delta must be scalars");
    sg_rt_value *Y;
    sg_status st;
    int64_t n;
    if (sg_dtype_is_float(S->dtype)) {
        double s = sg_rt_get_f64(S, 0), l = sg_rt_get_f64(L, 0), d = sg_rt_get_f64(D, 0);
        if (d == 0)
            return sg_kfail(k, SG_EINVAL, "delta is 0");
        double c = ceil((l - s) / d);
        n = c > 0 ? sg_dim_from_double(c) : 0; /* NaN: none; huge: refused by sg_kout */
        if ((st = sg_kout(k, 0, S->dtype, &n, 1, &Y)))
            return st;
        /* Accumulate in the output type, as the reference does. */
        if (S->dtype == SG_DTYPE_FLOAT) {
            float v = (float)s, fd = (float)d;
            for (int64_t i = 0; i < n; i++, v += fd)
                ((float *)Y->data)[i] = v;
        } else {
            for (int64_t i = 0; i < n; i++)
                sg_rt_set_f64(Y, i, s + (double)i * d);
        }
        return SG_OK;
    }
    int64_t s = sg_rt_get_i64(S, 0), l = sg_rt_get_i64(L, 0), d = sg_rt_get_i64(D, 0);
    if (d == 0)
        return sg_kfail(k, SG_EINVAL, "delta is 0");
    /* ceil((l - s) / d), in 128 bits: l - s may not fit int64. */
    __int128 span = (__int128)l - s, q = span / d;
    if (span % d != 0 && (span > 0) == (d > 0))
        q++;
    if (q > INT64_MAX)
        return sg_kfail(k, SG_ERANGE, "range(%lld, %lld, %lld) has more than 2^63 elements",
                        (long long)s, (long long)l, (long long)d);
    n = q < 0 ? 0 : (int64_t)q;
    if ((st = sg_kout(k, 0, S->dtype, &n, 1, &Y)))
        return st;
    /* Every s + i * d lies between s and l; the wrap-around sum gets it
     * even where i * d alone would overflow. */
    for (int64_t i = 0; i < n; i++)
        sg_rt_set_i64(Y, i, (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    return SG_OK;
}

static sg_status run_eyelike(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->rank != 2)
        return sg_kfail(k, SG_ESHAPE, "needs a 2-d input, got %s", sg_kshape(k, X));
    int32_t dt = (int32_t)sg_kattr_int(k, "dtype", X->dtype);
    int64_t off = sg_kattr_int(k, "k", 0);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, dt, X->dims, 2, &Y);
    if (st)
        return st;
    /* A diagonal off the matrix (|k| at least a dim) has no ones: this
     * also keeps i + k within int64. */
    for (int64_t i = 0; off > -X->dims[0] && off < X->dims[1] && i < X->dims[0]; i++) {
        int64_t j = i + off;
        if (j >= 0 && j < X->dims[1])
            sg_rt_set_f64(Y, i * X->dims[1] + j, 1);
    }
    return SG_OK;
}

static sg_status run_onehot(struct sg_kctx *k)
{
    const sg_rt_value *I = sg_kin(k, 0), *Dp = sg_kin(k, 1), *V = sg_kin(k, 2);
    if (!Dp || Dp->numel != 1 || !V || V->numel != 2)
        return sg_kfail(k, SG_ESHAPE, "depth must be a scalar and values hold two elements");
    int64_t depth = sg_dim_from_double(sg_rt_get_f64(Dp, 0));
    if (depth <= 0)
        return sg_kfail(k, SG_ERANGE, "depth %lld must be positive", (long long)depth);
    uint32_t r = I->rank + 1, axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), r, &axis);
    if (st)
        return st;
    int64_t dims[SG_MAX_RANK];
    for (uint32_t d = 0, s = 0; d < r; d++)
        dims[d] = d == axis ? depth : I->dims[s++];
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, V->dtype, dims, r, &Y)))
        return st;
    size_t es = sg_rt_elem_size(V->dtype);
    const char *off = V->data, *on = (const char *)V->data + es;
    int64_t outer = 1, inner = 1;
    for (uint32_t d = 0; d < axis; d++)
        outer *= dims[d];
    for (uint32_t d = axis + 1; d < r; d++)
        inner *= dims[d];
    for (int64_t i = 0; i < Y->numel; i++)
        memcpy((char *)Y->data + i * (int64_t)es, off, es);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t idx = sg_dim_from_double(sg_rt_get_f64(I, o * inner + in));
            if (idx < 0)
                idx += depth;
            if (idx < 0 || idx >= depth)
                continue;
            memcpy((char *)Y->data + ((o * depth + idx) * inner + in) * (int64_t)es, on, es);
        }
    return SG_OK;
}

static sg_status run_window(struct sg_kctx *k)
{
    const sg_rt_value *S = sg_kin(k, 0);
    if (!S || S->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "size must be a scalar");
    int64_t n = sg_rt_get_i64(S, 0);
    if (n < 0)
        return sg_kfail(k, SG_ERANGE, "negative size %lld", (long long)n);
    int32_t dt = (int32_t)sg_kattr_int(k, "output_datatype", SG_DTYPE_FLOAT);
    bool periodic = sg_kattr_int(k, "periodic", 1) != 0;
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, dt, &n, 1, &Y);
    if (st)
        return st;
    double N = periodic ? (double)n : (double)(n - 1);
    const char *op = k->node->op_type;
    for (int64_t i = 0; i < n; i++) {
        double x = N > 0 ? 2 * M_PI * (double)i / N : 0, v;
        if (strcmp(op, "HannWindow") == 0)
            v = 0.5 - 0.5 * cos(x);
        else if (strcmp(op, "HammingWindow") == 0)
            v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(x);
        else
            v = 0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x);
        sg_rt_set_f64(Y, i, v);
    }
    return SG_OK;
}

/* ------------------------------------------------------------- random */

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static struct rng rng_for(const struct sg_kctx *k)
{
    const sg_attr *a = sg_kattr(k, "seed");
    struct rng r = {0x5eed};
    if (a && a->type == SG_ATTR_FLOAT) {
        r.s = (uint64_t)sg_dim_from_double(a->f);
    } else {
        const char *name = k->node->name ? k->node->name : "";
        for (const char *p = name; *p; p++)
            r.s = (r.s ^ (uint8_t)*p) * 0x100000001b3ull;
    }
    return r;
}

static sg_status run_random(struct sg_kctx *k)
{
    const char *op = k->node->op_type;
    bool like = strstr(op, "Like") != NULL, normal = strstr(op, "Normal") != NULL;
    int64_t dims[SG_MAX_RANK];
    uint32_t rank;
    int32_t dt;
    if (like) {
        const sg_rt_value *X = sg_kin(k, 0);
        rank = X->rank;
        memcpy(dims, X->dims, rank * sizeof dims[0]);
        dt = (int32_t)sg_kattr_int(k, "dtype", X->dtype);
    } else {
        const int64_t *shape;
        int64_t n = sg_kattr_ints(k, "shape", &shape);
        if (n < 0 || n > SG_MAX_RANK)
            return sg_kfail(k, SG_EINVAL, "attribute 'shape' is missing or too long");
        rank = (uint32_t)n;
        memcpy(dims, shape, rank * sizeof dims[0]);
        dt = (int32_t)sg_kattr_int(k, "dtype", SG_DTYPE_FLOAT);
    }
    if (!sg_dtype_is_float(dt))
        return sg_kfail(k, SG_ETYPE, "dtype %s is not a float type", sg_dtype_name(dt));
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, dt, dims, rank, &Y);
    if (st)
        return st;
    struct rng r = rng_for(k);
    double a = normal ? sg_kattr_float(k, "mean", 0) : sg_kattr_float(k, "low", 0);
    double b = normal ? sg_kattr_float(k, "scale", 1) : sg_kattr_float(k, "high", 1);
    for (int64_t i = 0; i < Y->numel; i++) {
        double v;
        if (normal) {
            double u1 = rng_uniform(&r), u2 = rng_uniform(&r);
            v = a + b * sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
        } else {
            v = a + (b - a) * rng_uniform(&r);
        }
        sg_rt_set_f64(Y, i, v);
    }
    return SG_OK;
}

static sg_status run_bernoulli(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int32_t dt = (int32_t)sg_kattr_int(k, "dtype", X->dtype);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, dt, X->dims, X->rank, &Y);
    if (st)
        return st;
    struct rng r = rng_for(k);
    for (int64_t i = 0; i < Y->numel; i++)
        sg_rt_set_f64(Y, i, rng_uniform(&r) < sg_rt_get_f64(X, i) ? 1 : 0);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "Constant", 1, -1, SG_KT_ANY, 0, run_constant, ""},
    {"", "ConstantOfShape", 9, 0, SG_KT(SG_DTYPE_INT64), 0, run_constant_of_shape, "r"},
    {"", "ConstantOfShape", 20, 0, SG_KT(SG_DTYPE_INT64), 0, run_constant_of_shape, "r"},
    {"", "ConstantOfShape", 21, 0, SG_KT(SG_DTYPE_INT64), 0, run_constant_of_shape, "r"},
    {"", "ConstantOfShape", 23, 0, SG_KT(SG_DTYPE_INT64), 0, run_constant_of_shape, "r"},
    {"", "Range", 11, 0, SG_KT_FLOATS | SG_KT_SINTS, 0, run_range, "rrr"},
    {"", "EyeLike", 9, 0, SG_KT_ANY, 0, run_eyelike, "r"},
    {"", "OneHot", 9, 0, SG_KT_NUMERIC, 0, run_onehot, "rrr"},
    {"", "HannWindow", 17, 0, SG_KT_SINTS, 0, run_window, "r"},
    {"", "HammingWindow", 17, 0, SG_KT_SINTS, 0, run_window, "r"},
    {"", "BlackmanWindow", 17, 0, SG_KT_SINTS, 0, run_window, "r"},
    {"", "RandomUniform", 1, -1, SG_KT_ANY, 0, run_random, ""},
    {"", "RandomNormal", 1, -1, SG_KT_ANY, 0, run_random, ""},
    {"", "RandomUniformLike", 1, 0, SG_KT_ANY, 0, run_random, "r"},
    {"", "RandomNormalLike", 1, 0, SG_KT_ANY, 0, run_random, "r"},
    {"", "Bernoulli", 15, 0, SG_KT_FLOATS, 0, run_bernoulli, "r"},
};
SG_KERNEL_FAMILY(generator, kernels);
