/*
 * unary.c - elementwise ops of one input: math (Abs Neg Exp Log Sqrt
 * Reciprocal, trigonometric and hyperbolic functions, Erf, Floor Ceil Round
 * Sign), activations (Relu Sigmoid Tanh Elu Selu LeakyRelu HardSigmoid
 * HardSwish Softplus Softsign ThresholdedRelu Celu Shrink Mish Gelu), Clip,
 * Not, BitwiseNot, IsNaN and IsInf (Dropout is in space.c).
 *
 * float32 and float64 are computed in their own precision (type-generic
 * math); float16 and bfloat16 through float32. Integer inputs, where the
 * op allows them, go through int64.
 */
#include "rt_impl.h"
#include "vmath.h"

#include <float.h>
#include <string.h>
#include <tgmath.h>

struct uparam {
    double alpha, beta, gamma;
};

typedef void (*ufn_f32)(const float *in, float *out, int64_t n, const struct uparam *p);
typedef void (*ufn_f64)(const double *in, double *out, int64_t n, const struct uparam *p);
typedef int64_t (*ufn_int)(int64_t x, const struct uparam *p);

#define UNARY(NAME, EXPR)                                                                          \
    SG_RT_CLONES static void NAME##_f32(const float *in, float *out, int64_t n,                    \
                                        const struct uparam *p)                                    \
    {                                                                                              \
        typedef float T;                                                                           \
        const T alpha = (T)p->alpha, beta = (T)p->beta, gamma = (T)p->gamma;                       \
        (void)alpha, (void)beta, (void)gamma;                                                      \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T x = in[i];                                                                           \
            out[i] = (T)(EXPR);                                                                    \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_f64(const double *in, double *out, int64_t n, const struct uparam *p)       \
    {                                                                                              \
        typedef double T;                                                                          \
        const T alpha = (T)p->alpha, beta = (T)p->beta, gamma = (T)p->gamma;                       \
        (void)alpha, (void)beta, (void)gamma;                                                      \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T x = in[i];                                                                           \
            out[i] = (T)(EXPR);                                                                    \
        }                                                                                          \
    }

/* The same with a float32 formula of its own (vectorisable exp and erf). */
#define UNARY2(NAME, EXPR32, EXPR64)                                                               \
    SG_RT_CLONES static void NAME##_f32(const float *in, float *out, int64_t n,                    \
                                        const struct uparam *p)                                    \
    {                                                                                              \
        (void)p;                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            float x = in[i];                                                                       \
            out[i] = EXPR32;                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_f64(const double *in, double *out, int64_t n, const struct uparam *p)       \
    {                                                                                              \
        (void)p;                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            double x = in[i];                                                                      \
            out[i] = EXPR64;                                                                       \
        }                                                                                          \
    }

/* Sigmoid through e = exp(-|x|), which never overflows. */
static inline float sigmoid_f32(float x)
{
    float e = sg_expf(x < 0 ? x : -x);
    return x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

#define ONE ((T)1)
#define ZERO ((T)0)

UNARY(Abs, fabs(x))
UNARY(Neg, -x)
UNARY(Exp, exp(x))
UNARY(Log, log(x))
UNARY(Sqrt, sqrt(x))
UNARY(Reciprocal, ONE / x)
UNARY(Sin, sin(x))
UNARY(Cos, cos(x))
UNARY(Tan, tan(x))
UNARY(Asin, asin(x))
UNARY(Acos, acos(x))
UNARY(Atan, atan(x))
UNARY(Sinh, sinh(x))
UNARY(Cosh, cosh(x))
UNARY(Asinh, asinh(x))
UNARY(Acosh, acosh(x))
UNARY(Atanh, atanh(x))
UNARY2(Erf, sg_erff(x), erf(x))
UNARY(Floor, floor(x))
UNARY(Ceil, ceil(x))
UNARY(Round, nearbyint(x)) /* halves to even in the default rounding mode */
UNARY(Sign, x != x ? x : (x > ZERO ? ONE : (x < ZERO ? -ONE : ZERO)))
UNARY(Relu, x < ZERO ? ZERO : x)
UNARY2(Sigmoid, sigmoid_f32(x), x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)))
UNARY(Tanh, tanh(x))
UNARY(Softplus, x > ZERO ? x + log1p(exp(-x)) : log1p(exp(x)))
UNARY(Softsign, x / (ONE + fabs(x)))
UNARY(Elu, x < ZERO ? alpha * expm1(x) : x)
UNARY(Selu, x <= ZERO ? gamma * (alpha * exp(x) - alpha) : gamma * x)
UNARY(LeakyRelu, x < ZERO ? alpha * x : x)
UNARY(HardSigmoid, fmax(ZERO, fmin(ONE, alpha *x + beta)))
UNARY(HardSwish, x *fmax(ZERO, fmin(ONE, x / (T)6 + (T)0.5)))
UNARY(ThresholdedRelu, x > alpha ? x : ZERO)
UNARY(Celu, fmax(ZERO, x) + fmin(ZERO, alpha *expm1(x / alpha)))
UNARY(Shrink, x < -gamma ? x + beta : (x > gamma ? x - beta : ZERO))
/* Mish (18): x tanh(softplus(x)); Gelu (20): x/2 (1 + erf(x / sqrt 2)),
 * approximate="tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
UNARY(Mish, x *tanh(x > ZERO ? x + log1p(exp(-x)) : log1p(exp(x))))
UNARY2(Gelu, 0.5f * x * (1.0f + sg_erff(x * 0.70710678118654752f)),
       0.5 * x * (1.0 + erf(x * 0.70710678118654752440)))
/* (float32 through float64: 1 + tanh(u) cancels for large negative x) */
#define GELU_TANH(x)                                                                               \
    (0.5 * (x) * (1.0 + tanh(0.79788456080286535588 * ((x) + 0.044715 * (x) * (x) * (x)))))
UNARY2(GeluTanh, (float)GELU_TANH((double)x), GELU_TANH(x))

/* Integer forms, through int64 (wrapping where C would overflow). */
static int64_t iabs(int64_t x, const struct uparam *p)
{
    (void)p;
    return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
static int64_t ineg(int64_t x, const struct uparam *p)
{
    (void)p;
    return (int64_t)(0 - (uint64_t)x);
}
static int64_t isign(int64_t x, const struct uparam *p)
{
    (void)p;
    return (x > 0) - (x < 0);
}
static int64_t irelu(int64_t x, const struct uparam *p)
{
    (void)p;
    return x < 0 ? 0 : x;
}
static int64_t ishrink(int64_t x, const struct uparam *p)
{
    double v = (double)x;
    return sg_rt_f64_to_i64(v < -p->gamma ? v + p->beta : (v > p->gamma ? v - p->beta : 0));
}

struct unary_op {
    const char *name;
    ufn_f32 f32;
    ufn_f64 f64;
    ufn_int fint; /* NULL: float types only */
    /* attribute names and defaults for alpha, beta, gamma */
    const char *a, *b, *g;
    double da, db, dg;
};

#define U(N) #N, N##_f32, N##_f64
static const struct unary_op uops[] = {
    {U(Abs), iabs, 0, 0, 0, 0, 0, 0},
    {U(Neg), ineg, 0, 0, 0, 0, 0, 0},
    {U(Exp), 0, 0, 0, 0, 0, 0, 0},
    {U(Log), 0, 0, 0, 0, 0, 0, 0},
    {U(Sqrt), 0, 0, 0, 0, 0, 0, 0},
    {U(Reciprocal), 0, 0, 0, 0, 0, 0, 0},
    {U(Sin), 0, 0, 0, 0, 0, 0, 0},
    {U(Cos), 0, 0, 0, 0, 0, 0, 0},
    {U(Tan), 0, 0, 0, 0, 0, 0, 0},
    {U(Asin), 0, 0, 0, 0, 0, 0, 0},
    {U(Acos), 0, 0, 0, 0, 0, 0, 0},
    {U(Atan), 0, 0, 0, 0, 0, 0, 0},
    {U(Sinh), 0, 0, 0, 0, 0, 0, 0},
    {U(Cosh), 0, 0, 0, 0, 0, 0, 0},
    {U(Asinh), 0, 0, 0, 0, 0, 0, 0},
    {U(Acosh), 0, 0, 0, 0, 0, 0, 0},
    {U(Atanh), 0, 0, 0, 0, 0, 0, 0},
    {U(Erf), 0, 0, 0, 0, 0, 0, 0},
    {U(Floor), 0, 0, 0, 0, 0, 0, 0},
    {U(Ceil), 0, 0, 0, 0, 0, 0, 0},
    {U(Round), 0, 0, 0, 0, 0, 0, 0},
    {U(Sign), isign, 0, 0, 0, 0, 0, 0},
    {U(Relu), irelu, 0, 0, 0, 0, 0, 0},
    {U(Sigmoid), 0, 0, 0, 0, 0, 0, 0},
    {U(Tanh), 0, 0, 0, 0, 0, 0, 0},
    {U(Softplus), 0, 0, 0, 0, 0, 0, 0},
    {U(Softsign), 0, 0, 0, 0, 0, 0, 0},
    {U(Elu), 0, "alpha", 0, 0, 1.0, 0, 0},
    {U(Selu), 0, "alpha", 0, "gamma", 1.67326319217681884765625, 0, 1.05070102214813232421875},
    {U(LeakyRelu), 0, "alpha", 0, 0, 0.01, 0, 0},
    {U(HardSigmoid), 0, "alpha", "beta", 0, 0.2, 0.5, 0},
    {U(HardSwish), 0, 0, 0, 0, 0, 0, 0},
    {U(ThresholdedRelu), 0, "alpha", 0, 0, 1.0, 0, 0},
    {U(Celu), 0, "alpha", 0, 0, 1.0, 0, 0},
    {U(Shrink), ishrink, 0, "bias", "lambd", 0, 0.0, 0.5},
    {U(Mish), 0, 0, 0, 0, 0, 0, 0},
    {U(Gelu), 0, 0, 0, 0, 0, 0, 0},
    {U(GeluTanh), 0, 0, 0, 0, 0, 0, 0},
};

static const struct unary_op *find_uop(const char *name)
{
    for (size_t i = 0; i < sizeof uops / sizeof uops[0]; i++)
        if (strcmp(uops[i].name, name) == 0)
            return &uops[i];
    return NULL;
}

static sg_status run_unary(struct sg_kctx *k)
{
    const struct unary_op *op = find_uop(k->node->op_type);
    const sg_rt_value *X = sg_kin(k, 0);
    if (!op || !X)
        return sg_kfail(k, SG_EINVAL, "not a unary op of this family");
    if (strcmp(op->name, "Gelu") == 0) {
        const char *a = sg_kattr_string(k, "approximate", "none");
        if (strcmp(a, "tanh") == 0)
            op = find_uop("GeluTanh");
        else if (strcmp(a, "none") != 0)
            return sg_kfail(k, SG_EINVAL, "approximate must be 'none' or 'tanh', not '%s'", a);
    }
    struct uparam p = {0, 0, 0};
    p.alpha = op->a ? sg_kattr_float(k, op->a, (float)op->da) : op->da;
    p.beta = op->b ? sg_kattr_float(k, op->b, (float)op->db) : op->db;
    p.gamma = op->g ? sg_kattr_float(k, op->g, (float)op->dg) : op->dg;
    sg_rt_value *Y;
    /* float32/64 functions read element i before writing it: in place. */
    bool native = X->dtype == SG_DTYPE_FLOAT || X->dtype == SG_DTYPE_DOUBLE;
    sg_status st =
        native ? sg_kout_inplace(k, 0, 0, &Y) : sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    switch (X->dtype) {
    case SG_DTYPE_FLOAT:
        op->f32(X->data, Y->data, X->numel, &p);
        return SG_OK;
    case SG_DTYPE_DOUBLE:
        op->f64(X->data, Y->data, X->numel, &p);
        return SG_OK;
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16: {
        const float *in = sg_kfloats(k, X);
        float *out = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *out);
        if (!in || !out)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        op->f32(in, out, X->numel, &p);
        for (int64_t i = 0; i < X->numel; i++)
            sg_rt_set_f64(Y, i, out[i]);
        return SG_OK;
    }
    default:
        if (!op->fint || !sg_dtype_is_int(X->dtype))
            return sg_kfail(k, SG_EUNSUPPORTED, "not defined for %s", sg_dtype_name(X->dtype));
        for (int64_t i = 0; i < X->numel; i++)
            sg_rt_set_i64(Y, i, op->fint(sg_rt_get_i64(X, i), &p));
        return SG_OK;
    }
}

static sg_status run_not(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_BOOL, X->dims, X->rank, &Y);
    if (st)
        return st;
    const uint8_t *x = X->data;
    uint8_t *y = Y->data;
    for (int64_t i = 0; i < X->numel; i++)
        y[i] = !x[i];
    return SG_OK;
}

/* BitwiseNot (18): every bit of an integer flipped. */
static sg_status run_bitwise_not(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    size_t es = sg_rt_elem_size(X->dtype);
    const uint8_t *x = X->data;
    uint8_t *y = Y->data;
    for (size_t i = 0; i < (size_t)X->numel * es; i++)
        y[i] = (uint8_t)~x[i];
    return SG_OK;
}

static sg_status run_isnan_isinf(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    bool inf = strcmp(k->node->op_type, "IsInf") == 0;
    bool pos = sg_kattr_int(k, "detect_positive", 1) != 0;
    bool neg = sg_kattr_int(k, "detect_negative", 1) != 0;
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_BOOL, X->dims, X->rank, &Y);
    if (st)
        return st;
    uint8_t *y = Y->data;
    for (int64_t i = 0; i < X->numel; i++) {
        double v = sg_rt_get_f64(X, i);
        y[i] = inf ? (isinf(v) && ((v > 0 && pos) || (v < 0 && neg))) : isnan(v);
    }
    return SG_OK;
}

/* y = min(max(x, lo), hi), NaN kept (y may be x). */
SG_RT_CLONES static void clip_f32(const float *x, float *y, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
    }
}

/* Clip: bounds from inputs 1 and 2 (opset 11+) or attributes min/max. */
static sg_status run_clip(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_rt_value *Lo = sg_kin(k, 1), *Hi = sg_kin(k, 2);
    bool fl = sg_dtype_is_float(X->dtype);
    double lo = -INFINITY, hi = INFINITY;
    int64_t ilo = INT64_MIN, ihi = INT64_MAX;
    if (k->opset < 11) {
        lo = sg_kattr_float(k, "min", -FLT_MAX);
        hi = sg_kattr_float(k, "max", FLT_MAX);
    }
    /* One type T for all three (the uint64 path reads the bounds raw). */
    for (int i = 1; i <= 2; i++) {
        const sg_rt_value *B = i == 1 ? Lo : Hi;
        if (B && B->dtype != X->dtype)
            return sg_kfail(k, SG_ETYPE, "%s is %s but the input is %s: Clip takes one type",
                            i == 1 ? "min" : "max", sg_dtype_name(B->dtype),
                            sg_dtype_name(X->dtype));
    }
    if (Lo) {
        if (Lo->numel != 1)
            return sg_kfail(k, SG_ESHAPE, "min must be a scalar, got %s", sg_kshape(k, Lo));
        lo = sg_rt_get_f64(Lo, 0);
        ilo = sg_rt_get_i64(Lo, 0);
    }
    if (Hi) {
        if (Hi->numel != 1)
            return sg_kfail(k, SG_ESHAPE, "max must be a scalar, got %s", sg_kshape(k, Hi));
        hi = sg_rt_get_f64(Hi, 0);
        ihi = sg_rt_get_i64(Hi, 0);
    }
    sg_rt_value *Y;
    sg_status st = X->dtype == SG_DTYPE_FLOAT ? sg_kout_inplace(k, 0, 0, &Y)
                                              : sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    if (X->dtype == SG_DTYPE_FLOAT) {
        clip_f32(X->data, Y->data, X->numel, (float)lo, (float)hi);
        return SG_OK;
    }
    for (int64_t i = 0; i < X->numel; i++) {
        if (fl) {
            double v = sg_rt_get_f64(X, i);
            v = v < lo ? lo : v;
            sg_rt_set_f64(Y, i, v > hi ? hi : v);
        } else if (X->dtype == SG_DTYPE_UINT64) {
            uint64_t v = ((const uint64_t *)X->data)[i];
            uint64_t l = Lo ? ((const uint64_t *)Lo->data)[0] : 0;
            uint64_t h = Hi ? ((const uint64_t *)Hi->data)[0] : UINT64_MAX;
            v = v < l ? l : v;
            ((uint64_t *)Y->data)[i] = v > h ? h : v;
        } else {
            int64_t v = sg_rt_get_i64(X, i);
            v = v < ilo ? ilo : v;
            sg_rt_set_i64(Y, i, v > ihi ? ihi : v);
        }
    }
    return SG_OK;
}

#define FL SG_KT_FLOATS
#define SI (SG_KT_FLOATS | SG_KT_SINTS)
#define NUM SG_KT_NUMERIC
static const struct sg_kernel kernels[] = {
    {"", "Abs", 1, 0, NUM, 0, run_unary, "r"},
    {"", "Neg", 1, 0, SI, 0, run_unary, "r"},
    {"", "Exp", 1, 0, FL, 0, run_unary, "r"},
    {"", "Log", 1, 0, FL, 0, run_unary, "r"},
    {"", "Sqrt", 1, 0, FL, 0, run_unary, "r"},
    {"", "Reciprocal", 1, 0, FL, 0, run_unary, "r"},
    {"", "Sin", 7, 0, FL, 0, run_unary, "r"},
    {"", "Cos", 7, 0, FL, 0, run_unary, "r"},
    {"", "Tan", 7, 0, FL, 0, run_unary, "r"},
    {"", "Asin", 7, 0, FL, 0, run_unary, "r"},
    {"", "Acos", 7, 0, FL, 0, run_unary, "r"},
    {"", "Atan", 7, 0, FL, 0, run_unary, "r"},
    {"", "Sinh", 9, 0, FL, 0, run_unary, "r"},
    {"", "Cosh", 9, 0, FL, 0, run_unary, "r"},
    {"", "Asinh", 9, 0, FL, 0, run_unary, "r"},
    {"", "Acosh", 9, 0, FL, 0, run_unary, "r"},
    {"", "Atanh", 9, 0, FL, 0, run_unary, "r"},
    {"", "Erf", 9, 0, FL, 0, run_unary, "r"},
    {"", "Floor", 1, 0, FL, 0, run_unary, "r"},
    {"", "Ceil", 1, 0, FL, 0, run_unary, "r"},
    {"", "Round", 11, 0, FL, 0, run_unary, "r"},
    {"", "Sign", 9, 0, NUM, 0, run_unary, "r"},
    {"", "Relu", 1, 0, SI, 0, run_unary, "r"},
    {"", "Sigmoid", 1, 0, FL, 0, run_unary, "r"},
    {"", "Tanh", 1, 0, FL, 0, run_unary, "r"},
    {"", "Softplus", 1, 0, FL, 0, run_unary, "r"},
    {"", "Softsign", 1, 0, FL, 0, run_unary, "r"},
    {"", "Elu", 1, 0, FL, 0, run_unary, "r"},
    {"", "Selu", 1, 0, FL, 0, run_unary, "r"},
    {"", "LeakyRelu", 1, 0, FL, 0, run_unary, "r"},
    {"", "HardSigmoid", 1, 0, FL, 0, run_unary, "r"},
    {"", "HardSwish", 14, 0, FL, 0, run_unary, "r"},
    {"", "ThresholdedRelu", 10, 0, FL, 0, run_unary, "r"},
    {"", "Celu", 12, 0, FL, 0, run_unary, "r"},
    {"", "Shrink", 9, 0, NUM, 0, run_unary, "r"},
    {"", "Not", 1, 0, SG_KT_BOOL, 0, run_not, "r"},
    {"", "IsNaN", 9, 0, FL, 0, run_isnan_isinf, "r"},
    {"", "IsInf", 10, 0, FL, 0, run_isnan_isinf, "r"},
    /* 20: the float8 types too (bfloat16 and float16 already here). */
    {"", "IsNaN", 20, 0, FL | SG_KT_F8, 0, run_isnan_isinf, "r"},
    {"", "IsInf", 20, 0, FL | SG_KT_F8, 0, run_isnan_isinf, "r"},
    {"", "Mish", 18, 0, FL, 0, run_unary, "r"},
    {"", "Gelu", 20, 0, FL, 0, run_unary, "r"},
    {"", "BitwiseNot", 18, 0, SG_KT_INTS, 0, run_bitwise_not, "r"},
    {"", "Clip", 1, 0, NUM, 0, run_clip, "r"},
    {"", "Clip", 11, 0, NUM, 0, run_clip, "roo"},
};
SG_KERNEL_FAMILY(unary, kernels);
