/*
 * binary.c - elementwise ops of two or more inputs with numpy broadcasting:
 * arithmetic (Add Sub Mul Div Pow Mod PRelu BitShift), comparisons (Equal
 * Less Greater LessOrEqual GreaterOrEqual), logic (And Or Xor, and on
 * integers BitwiseAnd BitwiseOr BitwiseXor), variadic
 * (Sum Mean Max Min) and Where.
 *
 * Every numeric dtype is computed natively except float16 and bfloat16,
 * which are widened to float32, computed, and rounded back once. Before
 * opset 7 the binary ops broadcast only with broadcast=1, aligning B to A at
 * `axis` (legacy rule); that is mapped onto numpy broadcasting here.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

enum binop {
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_POW,
    OP_MOD,  /* sign of the divisor (Python) */
    OP_FMOD, /* sign of the dividend (C) */
    OP_MAX,
    OP_MIN,
    OP_PRELU,
    OP_EQ,
    OP_LT,
    OP_GT,
    OP_LE,
    OP_GE,
    OP_AND,
    OP_OR,
    OP_XOR,
    OP_SHL,
    OP_SHR,
    OP_BAND, /* BitwiseAnd, BitwiseOr, BitwiseXor (18): integers */
    OP_BOR,
    OP_BXOR,
};

static bool is_compare(enum binop op)
{
    return op >= OP_EQ && op <= OP_GE;
}

/* Integer helpers: defined results where C leaves them undefined. */
#define INT_HELPERS(T, S)                                                                          \
    static inline T div_##S(T x, T y)                                                              \
    {                                                                                              \
        if (y == 0)                                                                                \
            return 0;                                                                              \
        if ((T)-1 < 0 && y == (T)-1)                                                               \
            return (T)(0 - (uint64_t)x);                                                           \
        return (T)(x / y);                                                                         \
    }                                                                                              \
    static inline T fmod_##S(T x, T y)                                                             \
    {                                                                                              \
        if (y == 0 || ((T)-1 < 0 && y == (T)-1))                                                   \
            return 0;                                                                              \
        return (T)(x % y);                                                                         \
    }                                                                                              \
    static inline T mod_##S(T x, T y)                                                              \
    {                                                                                              \
        T r = fmod_##S(x, y);                                                                      \
        if (r != 0 && ((r < 0) != (y < 0)))                                                        \
            r = (T)((uint64_t)r + (uint64_t)y);                                                    \
        return r;                                                                                  \
    }                                                                                              \
    static inline T pow_##S(T x, T y)                                                              \
    {                                                                                              \
        if (y < 0)                                                                                 \
            return x == 1 ? 1 : (x == (T)-1 ? ((y & 1) ? (T)-1 : 1) : 0);                          \
        T r = 1;                                                                                   \
        uint64_t e = (uint64_t)y;                                                                  \
        while (e) {                                                                                \
            if (e & 1)                                                                             \
                r = (T)((uint64_t)r * (uint64_t)x);                                                \
            x = (T)((uint64_t)x * (uint64_t)x);                                                    \
            e >>= 1;                                                                               \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    static inline T shl_##S(T x, T y)                                                              \
    {                                                                                              \
        return (uint64_t)y >= sizeof(T) * 8 ? 0 : (T)((uint64_t)x << y);                           \
    }                                                                                              \
    static inline T shr_##S(T x, T y)                                                              \
    {                                                                                              \
        return (uint64_t)y >= sizeof(T) * 8 ? 0 : (T)(x >> y);                                     \
    }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wsign-compare"
INT_HELPERS(int8_t, i8)
INT_HELPERS(int16_t, i16)
INT_HELPERS(int32_t, i32)
INT_HELPERS(int64_t, i64)
INT_HELPERS(uint8_t, u8)
INT_HELPERS(uint16_t, u16)
INT_HELPERS(uint32_t, u32)
INT_HELPERS(uint64_t, u64)

static inline float pymod_f(float x, float y)
{
    float r = fmodf(x, y);
    if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
    return r;
}

static inline double pymod_d(double x, double y)
{
    double r = fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
    return r;
}

/* One broadcast walk computing out = EXPR(x, y), with the common stride
 * patterns split out so the compiler can vectorise them. */
#define WALK(TA, TO, EXPR)                                                                         \
    do {                                                                                           \
        while (sg_bcast_next(b)) {                                                                 \
            const TA *pa = (const TA *)A->data + b->off[0];                                        \
            const TA *pb = (const TA *)B->data + b->off[1];                                        \
            TO *po = (TO *)Y->data + b->pos;                                                       \
            int64_t n = b->run;                                                                    \
            if (b->step[0] && b->step[1]) {                                                        \
                for (int64_t i = 0; i < n; i++) {                                                  \
                    TA x = pa[i], y = pb[i];                                                       \
                    po[i] = (TO)(EXPR);                                                            \
                }                                                                                  \
            } else if (b->step[0]) {                                                               \
                TA y = pb[0];                                                                      \
                for (int64_t i = 0; i < n; i++) {                                                  \
                    TA x = pa[i];                                                                  \
                    po[i] = (TO)(EXPR);                                                            \
                }                                                                                  \
            } else if (b->step[1]) {                                                               \
                TA x = pa[0];                                                                      \
                for (int64_t i = 0; i < n; i++) {                                                  \
                    TA y = pb[i];                                                                  \
                    po[i] = (TO)(EXPR);                                                            \
                }                                                                                  \
            } else {                                                                               \
                TA x = pa[0], y = pb[0];                                                           \
                TO r = (TO)(EXPR);                                                                 \
                for (int64_t i = 0; i < n; i++)                                                    \
                    po[i] = r;                                                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define COMPARE_CASES(T)                                                                           \
    case OP_EQ:                                                                                    \
        WALK(T, uint8_t, x == y);                                                                  \
        return true;                                                                               \
    case OP_LT:                                                                                    \
        WALK(T, uint8_t, x < y);                                                                   \
        return true;                                                                               \
    case OP_GT:                                                                                    \
        WALK(T, uint8_t, x > y);                                                                   \
        return true;                                                                               \
    case OP_LE:                                                                                    \
        WALK(T, uint8_t, x <= y);                                                                  \
        return true;                                                                               \
    case OP_GE:                                                                                    \
        WALK(T, uint8_t, x >= y);                                                                  \
        return true;

#define INT_FN(T, S, U)                                                                            \
    static bool bin_##S(enum binop op, struct sg_bcast *b, const sg_rt_value *A,                   \
                        const sg_rt_value *B, sg_rt_value *Y)                                      \
    {                                                                                              \
        switch (op) {                                                                              \
        case OP_ADD:                                                                               \
            WALK(T, T, (U)x + (U)y);                                                               \
            return true;                                                                           \
        case OP_SUB:                                                                               \
            WALK(T, T, (U)x - (U)y);                                                               \
            return true;                                                                           \
        case OP_MUL:                                                                               \
            WALK(T, T, (U)x *(U)y);                                                                \
            return true;                                                                           \
        case OP_DIV:                                                                               \
            WALK(T, T, div_##S(x, y));                                                             \
            return true;                                                                           \
        case OP_POW:                                                                               \
            WALK(T, T, pow_##S(x, y));                                                             \
            return true;                                                                           \
        case OP_MOD:                                                                               \
            WALK(T, T, mod_##S(x, y));                                                             \
            return true;                                                                           \
        case OP_FMOD:                                                                              \
            WALK(T, T, fmod_##S(x, y));                                                            \
            return true;                                                                           \
        case OP_MAX:                                                                               \
            WALK(T, T, x > y ? x : y);                                                             \
            return true;                                                                           \
        case OP_MIN:                                                                               \
            WALK(T, T, x < y ? x : y);                                                             \
            return true;                                                                           \
        case OP_PRELU:                                                                             \
            WALK(T, T, x < 0 ? (U)x * (U)y : (U)x);                                                \
            return true;                                                                           \
        case OP_SHL:                                                                               \
            WALK(T, T, shl_##S(x, y));                                                             \
            return true;                                                                           \
        case OP_SHR:                                                                               \
            WALK(T, T, shr_##S(x, y));                                                             \
            return true;                                                                           \
        case OP_BAND:                                                                              \
            WALK(T, T, x &y);                                                                      \
            return true;                                                                           \
        case OP_BOR:                                                                               \
            WALK(T, T, x | y);                                                                     \
            return true;                                                                           \
        case OP_BXOR:                                                                              \
            WALK(T, T, x ^ y);                                                                     \
            return true;                                                                           \
            COMPARE_CASES(T)                                                                       \
        default:                                                                                   \
            return false;                                                                          \
        }                                                                                          \
    }

INT_FN(int8_t, i8, uint32_t)
INT_FN(int16_t, i16, uint32_t)
INT_FN(int32_t, i32, uint32_t)
INT_FN(int64_t, i64, uint64_t)
INT_FN(uint8_t, u8, uint32_t)
INT_FN(uint16_t, u16, uint32_t)
INT_FN(uint32_t, u32, uint32_t)
INT_FN(uint64_t, u64, uint64_t)
#pragma GCC diagnostic pop

#define FLOAT_FN(T, S, POW, FMOD, PYMOD)                                                           \
    static bool bin_##S(enum binop op, struct sg_bcast *b, const sg_rt_value *A,                   \
                        const sg_rt_value *B, sg_rt_value *Y)                                      \
    {                                                                                              \
        switch (op) {                                                                              \
        case OP_ADD:                                                                               \
            WALK(T, T, x + y);                                                                     \
            return true;                                                                           \
        case OP_SUB:                                                                               \
            WALK(T, T, x - y);                                                                     \
            return true;                                                                           \
        case OP_MUL:                                                                               \
            WALK(T, T, x *y);                                                                      \
            return true;                                                                           \
        case OP_DIV:                                                                               \
            WALK(T, T, x / y);                                                                     \
            return true;                                                                           \
        case OP_POW:                                                                               \
            WALK(T, T, POW(x, y));                                                                 \
            return true;                                                                           \
        case OP_MOD:                                                                               \
            WALK(T, T, PYMOD(x, y));                                                               \
            return true;                                                                           \
        case OP_FMOD:                                                                              \
            WALK(T, T, FMOD(x, y));                                                                \
            return true;                                                                           \
        case OP_MAX:                                                                               \
            WALK(T, T, (x != x || y != y) ? x + y : (x > y ? x : y));                              \
            return true;                                                                           \
        case OP_MIN:                                                                               \
            WALK(T, T, (x != x || y != y) ? x + y : (x < y ? x : y));                              \
            return true;                                                                           \
        case OP_PRELU:                                                                             \
            WALK(T, T, x < 0 ? x * y : x);                                                         \
            return true;                                                                           \
            COMPARE_CASES(T)                                                                       \
        default:                                                                                   \
            return false;                                                                          \
        }                                                                                          \
    }

FLOAT_FN(float, f32, powf, fmodf, pymod_f)
FLOAT_FN(double, f64, pow, fmod, pymod_d)

static bool bin_bool(enum binop op, struct sg_bcast *b, const sg_rt_value *A, const sg_rt_value *B,
                     sg_rt_value *Y)
{
    switch (op) {
    case OP_AND:
        WALK(uint8_t, uint8_t, x && y);
        return true;
    case OP_OR:
        WALK(uint8_t, uint8_t, x || y);
        return true;
    case OP_XOR:
        WALK(uint8_t, uint8_t, (x != 0) != (y != 0));
        return true;
    case OP_EQ:
        WALK(uint8_t, uint8_t, (x != 0) == (y != 0));
        return true;
    case OP_MAX:
        WALK(uint8_t, uint8_t, x || y);
        return true;
    case OP_MIN:
        WALK(uint8_t, uint8_t, x && y);
        return true;
    default:
        return false;
    }
}

static bool bin_string(enum binop op, struct sg_bcast *b, const sg_rt_value *A,
                       const sg_rt_value *B, sg_rt_value *Y)
{
    if (op != OP_EQ)
        return false;
    while (sg_bcast_next(b)) {
        const sg_bytes *pa = (const sg_bytes *)A->data + b->off[0];
        const sg_bytes *pb = (const sg_bytes *)B->data + b->off[1];
        uint8_t *po = (uint8_t *)Y->data + b->pos;
        for (int64_t i = 0; i < b->run; i++) {
            const sg_bytes *x = pa + i * b->step[0], *y = pb + i * b->step[1];
            po[i] = x->len == y->len && (!x->len || memcmp(x->data, y->data, x->len) == 0);
        }
    }
    return true;
}

static bool dispatch(int32_t dt, enum binop op, struct sg_bcast *b, const sg_rt_value *A,
                     const sg_rt_value *B, sg_rt_value *Y)
{
    switch (dt) {
    case SG_DTYPE_FLOAT:
        return bin_f32(op, b, A, B, Y);
    case SG_DTYPE_DOUBLE:
        return bin_f64(op, b, A, B, Y);
    case SG_DTYPE_INT8:
        return bin_i8(op, b, A, B, Y);
    case SG_DTYPE_INT16:
        return bin_i16(op, b, A, B, Y);
    case SG_DTYPE_INT32:
        return bin_i32(op, b, A, B, Y);
    case SG_DTYPE_INT64:
        return bin_i64(op, b, A, B, Y);
    case SG_DTYPE_UINT8:
        return bin_u8(op, b, A, B, Y);
    case SG_DTYPE_UINT16:
        return bin_u16(op, b, A, B, Y);
    case SG_DTYPE_UINT32:
        return bin_u32(op, b, A, B, Y);
    case SG_DTYPE_UINT64:
        return bin_u64(op, b, A, B, Y);
    case SG_DTYPE_BOOL:
        return bin_bool(op, b, A, B, Y);
    case SG_DTYPE_STRING:
        return bin_string(op, b, A, B, Y);
    default:
        return false;
    }
}

static bool is_half(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT16 || dt == SG_DTYPE_BFLOAT16;
}

/* A float32 copy of a half-precision tensor, as a scratch value. */
static const sg_rt_value *widen(struct sg_kctx *k, const sg_rt_value *v)
{
    sg_rt_value *w = sg_kscratch(k, sizeof *w);
    const float *f = sg_kfloats(k, v);
    if (!w || !f)
        return NULL;
    memcpy(w, v, sizeof *w);
    w->dtype = SG_DTYPE_FLOAT;
    w->data = (void *)f;
    return w;
}

/* A copy of v converted to dtype dt (for Pow's exponent), in scratch. */
static const sg_rt_value *convert(struct sg_kctx *k, const sg_rt_value *v, int32_t dt)
{
    sg_rt_value *w = sg_kscratch(k, sizeof *w);
    void *data = sg_kscratch(k, (size_t)(v->numel + 1) * sg_rt_elem_size(dt));
    if (!w || !data)
        return NULL;
    memcpy(w, v, sizeof *w);
    w->dtype = dt;
    w->data = data;
    bool fl = sg_dtype_is_float(dt);
    for (int64_t i = 0; i < v->numel; i++) {
        if (fl)
            sg_rt_set_f64(w, i, sg_rt_get_f64(v, i));
        else
            sg_rt_set_i64(w, i, sg_rt_get_i64(v, i));
    }
    return w;
}

/* True when tensor v has the broadcast output's shape. */
static bool same_shape(const sg_rt_value *v, const struct sg_bcast *b)
{
    if (v->rank != b->rank)
        return false;
    for (uint32_t d = 0; d < b->rank; d++)
        if (v->dims[d] != b->dims[d])
            return false;
    return true;
}

/*
 * Y = op(A, B) with broadcasting; Y is created as output `oi` unless
 * `into` is given (then it must have the broadcast shape). A and B have the
 * same dtype except for Pow.
 */
static sg_status apply(struct sg_kctx *k, enum binop op, const sg_rt_value *A, const sg_rt_value *B,
                       uint32_t oi, sg_rt_value **made)
{
    struct sg_bcast b;
    const sg_rt_value *ts[2] = {A, B};
    sg_status st = sg_bcast_init(k, &b, 2, ts);
    if (st)
        return st;
    int32_t dt = A->dtype;
    if (B->dtype != dt) {
        if (op != OP_POW)
            return sg_kfail(k, SG_ETYPE, "inputs differ in type: %s and %s", sg_kshape(k, A),
                            sg_kshape(k, B));
        if (!(B = convert(k, B, dt)))
            return sg_kfail(k, SG_ENOMEM, "out of memory");
    }
    int32_t out_dt =
        is_compare(op) || op == OP_AND || op == OP_OR || op == OP_XOR ? SG_DTYPE_BOOL : dt;
    sg_rt_value *Y;
    /* Plain float ops may write over an input of the output's shape that
     * dies here (sg_kout_inplace): element i is read, then written. */
    int in_place = -1;
    if (!made && out_dt == dt && (dt == SG_DTYPE_FLOAT || dt == SG_DTYPE_DOUBLE)) {
        if (A == sg_kin(k, 0) && same_shape(A, &b))
            in_place = 0;
        else if (B == sg_kin(k, 1) && same_shape(B, &b))
            in_place = 1;
    }
    if (made && *made) {
        Y = *made;
    } else if (in_place >= 0) {
        if ((st = sg_kout_inplace(k, oi, (uint32_t)in_place, &Y)))
            return st;
    } else {
        st = sg_kout(k, oi, out_dt, b.dims, b.rank, &Y);
        if (st)
            return st;
        if (made)
            *made = Y;
    }
    if (is_half(dt)) {
        const sg_rt_value *wa = widen(k, A), *wb = widen(k, B);
        float *tmp = sg_kscratch(k, (size_t)(Y->numel + 1) * sizeof *tmp);
        if (!wa || !wb || !tmp)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        sg_rt_value ty;
        memcpy(&ty, Y, sizeof ty);
        if (out_dt != SG_DTYPE_BOOL) {
            ty.dtype = SG_DTYPE_FLOAT;
            ty.data = tmp;
        }
        if (!dispatch(SG_DTYPE_FLOAT, op, &b, wa, wb, &ty))
            return sg_kfail(k, SG_EUNSUPPORTED, "not defined for %s", sg_dtype_name(dt));
        if (out_dt != SG_DTYPE_BOOL)
            for (int64_t i = 0; i < Y->numel; i++)
                sg_rt_set_f64(Y, i, tmp[i]);
        return SG_OK;
    }
    if (!dispatch(dt, op, &b, A, B, Y))
        return sg_kfail(k, SG_EUNSUPPORTED, "not defined for %s inputs", sg_dtype_name(dt));
    return SG_OK;
}

static const struct {
    const char *name;
    enum binop op;
} ops[] = {
    {"Add", OP_ADD},       {"Sub", OP_SUB},         {"Mul", OP_MUL},
    {"Div", OP_DIV},       {"Pow", OP_POW},         {"Mod", OP_MOD},
    {"PRelu", OP_PRELU},   {"Equal", OP_EQ},        {"Less", OP_LT},
    {"Greater", OP_GT},    {"LessOrEqual", OP_LE},  {"GreaterOrEqual", OP_GE},
    {"And", OP_AND},       {"Or", OP_OR},           {"Xor", OP_XOR},
    {"BitShift", OP_SHL},  {"Max", OP_MAX},         {"Min", OP_MIN},
    {"Sum", OP_ADD},       {"Mean", OP_ADD},        {"BitwiseAnd", OP_BAND},
    {"BitwiseOr", OP_BOR}, {"BitwiseXor", OP_BXOR},
};

static enum binop op_of(const struct sg_kctx *k)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, k->node->op_type) == 0)
            return ops[i].op;
    return OP_ADD;
}

static sg_status run_binary(struct sg_kctx *k)
{
    const sg_rt_value *A = sg_kin(k, 0), *B = sg_kin(k, 1);
    if (!A || !B)
        return sg_kfail(k, SG_EUNDEF, "needs two inputs");
    enum binop op = op_of(k);
    if (op == OP_MOD && sg_kattr_int(k, "fmod", 0))
        op = OP_FMOD;
    if (op == OP_SHL) {
        const char *dir = sg_kattr_string(k, "direction", "");
        if (strcmp(dir, "RIGHT") == 0)
            op = OP_SHR;
        else if (strcmp(dir, "LEFT") != 0)
            return sg_kfail(k, SG_EINVAL, "direction must be LEFT or RIGHT, not '%s'", dir);
    }
    /* Legacy broadcasting (opset < 7): B aligned to A at `axis`; PRelu's
     * slope was per channel (axis 1). */
    const char *op_type = k->node->op_type;
    if (k->opset < 7 && op == OP_PRELU && B->rank == 1 && A->rank >= 2 &&
        B->dims[0] == A->dims[1] && B->dims[0] != 1) {
        sg_rt_value *nb = sg_kscratch(k, sizeof *nb);
        if (!nb)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        memcpy(nb, B, sizeof *nb);
        nb->rank = A->rank - 1;
        for (uint32_t d = 0; d < nb->rank; d++)
            nb->dims[d] = d == 0 ? B->dims[0] : 1;
        B = nb;
    }
    if (k->opset < 7 && strcmp(op_type, "PRelu") != 0) {
        if (!sg_kattr_int(k, "broadcast", 0)) {
            if (A->rank != B->rank || memcmp(A->dims, B->dims, A->rank * sizeof A->dims[0]))
                return sg_kfail(k, SG_ESHAPE, "shapes %s and %s differ and broadcast is not set",
                                sg_kshape(k, A), sg_kshape(k, B));
        } else if (B->rank < A->rank) {
            int64_t axis = sg_kattr_int(k, "axis", (int64_t)A->rank - (int64_t)B->rank);
            if (axis < 0)
                axis += A->rank;
            if (axis < 0 || axis + B->rank > A->rank)
                return sg_kfail(k, SG_ERANGE, "axis %lld does not fit %s into %s", (long long)axis,
                                sg_kshape(k, B), sg_kshape(k, A));
            sg_rt_value *nb = sg_kscratch(k, sizeof *nb);
            if (!nb)
                return sg_kfail(k, SG_ENOMEM, "out of memory");
            memcpy(nb, B, sizeof *nb);
            nb->rank = A->rank - (uint32_t)axis;
            for (uint32_t d = 0; d < nb->rank; d++)
                nb->dims[d] = d < B->rank ? B->dims[d] : 1;
            B = nb;
        }
    }
    return apply(k, op, A, B, 0, NULL);
}

/* Sum, Mean, Max, Min over any number of inputs. */
static sg_status run_variadic(struct sg_kctx *k)
{
    enum binop op = op_of(k);
    bool mean = strcmp(k->node->op_type, "Mean") == 0;
    uint32_t n = 0, f = 0;
    const sg_rt_value *first = NULL;
    for (uint32_t i = 0; i < k->n_in; i++)
        if (sg_kin(k, i)) {
            n++;
            if (!first) {
                first = sg_kin(k, i);
                f = i;
            }
        }
    if (!first)
        return sg_kfail(k, SG_EUNDEF, "needs at least one input");
    if (n == 1 && !mean)
        return sg_kout_alias(k, 0, first, first->dims, first->rank);
    /* Fold left; intermediate results are plain tensors dropped at the end. */
    sg_rt_value *acc = NULL;
    const sg_rt_value *cur = first;
    sg_status st = SG_OK;
    uint32_t seen = 1;
    for (uint32_t i = f + 1; i < k->n_in && !st; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        if (!x)
            continue;
        seen++;
        sg_rt_value *next = NULL;
        if (seen == n && !mean) {
            st = apply(k, op, cur, x, 0, NULL);
        } else {
            struct sg_bcast b;
            const sg_rt_value *ts[2] = {cur, x};
            st = sg_bcast_init(k, &b, 2, ts);
            if (!st) {
                struct sg_diag d = {0};
                st = sg_rt_tensor_create(cur->dtype, b.dims, b.rank, &next, &d);
                if (st)
                    st = sg_kfail(k, st, "%s", d.msg);
            }
            if (!st)
                st = apply(k, op, cur, x, 0, &next);
        }
        sg_rt_value_unref(acc);
        acc = next;
        cur = acc;
    }
    if (!st && mean) {
        const sg_rt_value *src = acc ? acc : first;
        sg_rt_value *Y;
        st = sg_kout(k, 0, src->dtype, src->dims, src->rank, &Y);
        for (int64_t i = 0; !st && i < Y->numel; i++)
            sg_rt_set_f64(Y, i, sg_rt_get_f64(src, i) / n);
    }
    sg_rt_value_unref(acc);
    return st;
}

/* Where(cond, X, Y): element copies of any type. */
static sg_status run_where(struct sg_kctx *k)
{
    const sg_rt_value *C = sg_kin(k, 0), *X = sg_kin(k, 1), *Y = sg_kin(k, 2);
    if (!C || !X || !Y)
        return sg_kfail(k, SG_EUNDEF, "needs three inputs");
    if (C->dtype != SG_DTYPE_BOOL || X->dtype != Y->dtype)
        return sg_kfail(k, SG_ETYPE, "bad input types %s, %s, %s", sg_kshape(k, C), sg_kshape(k, X),
                        sg_kshape(k, Y));
    struct sg_bcast b;
    const sg_rt_value *ts[3] = {C, X, Y};
    sg_status st = sg_bcast_init(k, &b, 3, ts);
    if (st)
        return st;
    sg_rt_value *O;
    st = sg_kout(k, 0, X->dtype, b.dims, b.rank, &O);
    if (st)
        return st;
    size_t es = sg_rt_elem_size(X->dtype);
    const uint8_t *c = C->data;
    const char *x = X->data, *y = Y->data;
    char *o = O->data;
    while (sg_bcast_next(&b)) {
        for (int64_t i = 0; i < b.run; i++) {
            bool t = c[b.off[0] + i * b.step[0]];
            const char *src = t ? x + (b.off[1] + i * b.step[1]) * (int64_t)es
                                : y + (b.off[2] + i * b.step[2]) * (int64_t)es;
            memcpy(o + (b.pos + i) * (int64_t)es, src, es);
        }
    }
    return SG_OK;
}

#define NUM SG_KT_NUMERIC
static const struct sg_kernel kernels[] = {
    {"", "Add", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "Sub", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "Mul", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "Div", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "Pow", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "Mod", 10, 0, NUM, 0, run_binary, "rr"},
    {"", "PRelu", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "BitShift", 11, 0, SG_KT_UINTS, 0, run_binary, "rr"},
    {"", "BitwiseAnd", 18, 0, SG_KT_INTS, 0, run_binary, "rr"},
    {"", "BitwiseOr", 18, 0, SG_KT_INTS, 0, run_binary, "rr"},
    {"", "BitwiseXor", 18, 0, SG_KT_INTS, 0, run_binary, "rr"},
    {"", "Equal", 1, 0, NUM | SG_KT_BOOL | SG_KT_STRING, 0, run_binary, "rr"},
    {"", "Less", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "Greater", 1, 0, NUM, 0, run_binary, "rr"},
    {"", "LessOrEqual", 12, 0, NUM, 0, run_binary, "rr"},
    {"", "GreaterOrEqual", 12, 0, NUM, 0, run_binary, "rr"},
    {"", "And", 1, 0, SG_KT_BOOL, 0, run_binary, "rr"},
    {"", "Or", 1, 0, SG_KT_BOOL, 0, run_binary, "rr"},
    {"", "Xor", 1, 0, SG_KT_BOOL, 0, run_binary, "rr"},
    {"", "Max", 1, 0, NUM, 0, run_variadic, "o+"},
    {"", "Min", 1, 0, NUM, 0, run_variadic, "o+"},
    {"", "Sum", 1, 0, NUM, 0, run_variadic, "o+"},
    {"", "Mean", 1, 0, SG_KT_FLOATS, 0, run_variadic, "o+"},
    {"", "Where", 9, 1, SG_KT_ALL, 0, run_where, "rrr"},
};
SG_KERNEL_FAMILY(binary, kernels);
