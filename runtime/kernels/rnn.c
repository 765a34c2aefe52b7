/*
 * rnn.c - the recurrent ops RNN, GRU (linear_before_reset either way) and
 * LSTM (peepholes, input_forget), with clip, every direction (forward,
 * reverse, bidirectional), both layouts (opset 14), sequence_lens, initial
 * states, the activation list with its alpha/beta values, and all outputs.
 *
 * Per direction, the input projections of every time step are one GEMM
 * (X * W^T, with the biases that can be folded in added once); each step
 * then adds H_{t-1} * R^T for the whole batch with one GEMM and applies the
 * gate math row by row. float32 and float64 compute in their own precision
 * (cblas_sgemm / cblas_dgemm); float16 and bfloat16 through float32.
 *
 * sequence_lens: batch entry b runs its first lens[b] steps (the reverse
 * direction walks them from lens[b] - 1 down to 0); Y is zero past them and
 * Y_h / Y_c hold the state after the last step run (zero when lens[b] is 0,
 * as in ONNX Runtime). Like ONNX Runtime, clip bounds every gate's input to its
 * activation (after the biases and peepholes are added) but not the cell
 * state LSTM's h() is applied to, and a list of
 * activations for one direction serves both directions of a bidirectional
 * node.
 */
#include "rt_impl.h"
#include "sg_dims.h"
#include "sg_blas.h"

#include <string.h>
#include <strings.h>
#include <tgmath.h>

enum cell { CELL_RNN, CELL_GRU, CELL_LSTM };

enum act_fn {
    ACT_RELU,
    ACT_TANH,
    ACT_SIGMOID,
    ACT_AFFINE,
    ACT_LEAKYRELU,
    ACT_THRESHOLDEDRELU,
    ACT_SCALEDTANH,
    ACT_HARDSIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
};

/* The activation functions the ops accept, how many of activation_alpha
 * and activation_beta each consumes, and their defaults (those of the ONNX
 * operators of the same name). */
static const struct act_info {
    const char *name;
    enum act_fn fn;
    int n_alpha, n_beta;
    float alpha, beta;
} act_table[] = {
    {"Relu", ACT_RELU, 0, 0, 0.0f, 0.0f},
    {"Tanh", ACT_TANH, 0, 0, 0.0f, 0.0f},
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0.0f, 0.0f},
    {"Affine", ACT_AFFINE, 1, 1, 1.0f, 0.0f},
    {"LeakyRelu", ACT_LEAKYRELU, 1, 0, 0.01f, 0.0f},
    {"ThresholdedRelu", ACT_THRESHOLDEDRELU, 1, 0, 1.0f, 0.0f},
    {"ScaledTanh", ACT_SCALEDTANH, 1, 1, 1.0f, 1.0f},
    {"HardSigmoid", ACT_HARDSIGMOID, 1, 1, 0.2f, 0.5f},
    {"Elu", ACT_ELU, 1, 0, 1.0f, 0.0f},
    {"Softsign", ACT_SOFTSIGN, 0, 0, 0.0f, 0.0f},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0.0f, 0.0f},
};

struct act {
    enum act_fn fn;
    float alpha, beta;
};

/* One node's problem, with every tensor in the compute dtype. */
struct rnn {
    enum cell cell;
    int32_t dt;             /* SG_DTYPE_FLOAT or SG_DTYPE_DOUBLE */
    size_t es;              /* bytes per element of dt */
    int64_t S, B, In, H, G; /* steps, batch, input size, hidden size, gates */
    int ndir;
    bool reverse; /* direction "reverse" (one direction) */
    bool layout1; /* batch-major X, Y, initial and final states */
    bool lbr, input_forget, has_clip;
    double clip;
    struct act act[2][3]; /* per direction: f (RNN); f, g (GRU); f, g, h (LSTM) */
    const void *X, *W, *R, *Bias, *P, *h0, *c0;
    const int64_t *lens; /* [B] */
    void *Y, *Yh, *Yc;   /* NULL when not wanted */
};

/* Element offsets of the layout-dependent tensors. */
static int64_t x_row(const struct rnn *r, int64_t t, int64_t b)
{
    return r->layout1 ? b * r->S + t : t * r->B + b;
}

static int64_t y_off(const struct rnn *r, int64_t t, int d, int64_t b)
{
    return (r->layout1 ? (b * r->S + t) * r->ndir + d : (t * r->ndir + d) * r->B + b) * r->H;
}

static int64_t state_off(const struct rnn *r, int d, int64_t b)
{
    return (r->layout1 ? b * r->ndir + d : d * r->B + b) * r->H;
}

/* C[M,N] (+)= A[M,K] * B[N,K]^T, row-major with leading dimensions. */
static void gemm_nt(int32_t dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                    const void *B, int64_t ldb, bool acc, void *C, int64_t ldc)
{
    if (M == 0 || N == 0)
        return;
    if (K == 0) {
        size_t es = dt == SG_DTYPE_FLOAT ? sizeof(float) : sizeof(double);
        for (int64_t i = 0; i < M && !acc; i++)
            memset((char *)C + (size_t)(i * ldc) * es, 0, (size_t)N * es);
        return;
    }
    if (dt == SG_DTYPE_FLOAT)
        sg_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0f, A,
                      (int)lda, B, (int)ldb, acc ? 1.0f : 0.0f, C, (int)ldc);
    else
        sg_blas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0, A,
                      (int)lda, B, (int)ldb, acc ? 1.0 : 0.0, C, (int)ldc);
}

/*
 * The gate math, once for float and once for double. Rows of the gate
 * buffer g hold G*H pre-activations per batch entry (gate order: LSTM
 * i o f c, GRU z r h) with the input projection and folded biases in.
 */
#define RNN_MATH(SFX, TYPE)                                                                        \
    static void act_##SFX(const struct act *a, TYPE *x, int64_t n, const struct rnn *r, bool clip) \
    {                                                                                              \
        typedef TYPE T;                                                                            \
        const T al = (T)a->alpha, be = (T)a->beta, one = 1, zero = 0;                              \
        if (clip && r->has_clip) {                                                                 \
            const T c = (T)r->clip;                                                                \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] < -c ? -c : (x[i] > c ? c : x[i]);                                     \
        }                                                                                          \
        switch (a->fn) {                                                                           \
        case ACT_RELU:                                                                             \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] < zero ? zero : x[i];                                                  \
            break;                                                                                 \
        case ACT_TANH:                                                                             \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = tanh(x[i]);                                                                 \
            break;                                                                                 \
        case ACT_SIGMOID:                                                                          \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T e = exp(-fabs(x[i]));                                                            \
                x[i] = x[i] >= zero ? one / (one + e) : e / (one + e);                             \
            }                                                                                      \
            break;                                                                                 \
        case ACT_AFFINE:                                                                           \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = al * x[i] + be;                                                             \
            break;                                                                                 \
        case ACT_LEAKYRELU:                                                                        \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] < zero ? al * x[i] : x[i];                                             \
            break;                                                                                 \
        case ACT_THRESHOLDEDRELU:                                                                  \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] > al ? x[i] : zero;                                                    \
            break;                                                                                 \
        case ACT_SCALEDTANH:                                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = al * tanh(be * x[i]);                                                       \
            break;                                                                                 \
        case ACT_HARDSIGMOID:                                                                      \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = fmax(zero, fmin(one, al * x[i] + be));                                      \
            break;                                                                                 \
        case ACT_ELU:                                                                              \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] < zero ? al * expm1(x[i]) : x[i];                                      \
            break;                                                                                 \
        case ACT_SOFTSIGN:                                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] / (one + fabs(x[i]));                                                  \
            break;                                                                                 \
        case ACT_SOFTPLUS:                                                                         \
            for (int64_t i = 0; i < n; i++)                                                        \
                x[i] = x[i] > zero ? x[i] + log1p(exp(-x[i])) : log1p(exp(x[i]));                  \
            break;                                                                                 \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Rows of g: + Wb on every gate, + Rb on the first n_rb columns. */                           \
    static void add_bias_##SFX(TYPE *g, int64_t rows, int64_t gh, const TYPE *wb, const TYPE *rb,  \
                               int64_t n_rb)                                                       \
    {                                                                                              \
        for (int64_t i = 0; i < rows; i++, g += gh) {                                              \
            for (int64_t j = 0; j < gh; j++)                                                       \
                g[j] += wb[j];                                                                     \
            for (int64_t j = 0; j < n_rb; j++)                                                     \
                g[j] += rb[j];                                                                     \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void rnn_cells_##SFX(const struct rnn *r, int d, TYPE *g, TYPE *h, const bool *active)  \
    {                                                                                              \
        for (int64_t b = 0; b < r->B; b++) {                                                       \
            if (!active[b])                                                                        \
                continue;                                                                          \
            TYPE *gb = g + b * r->H;                                                               \
            act_##SFX(&r->act[d][0], gb, r->H, r, true);                                           \
            memcpy(h + b * r->H, gb, (size_t)r->H * sizeof *gb);                                   \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void lstm_cells_##SFX(const struct rnn *r, int d, TYPE *g, TYPE *h, TYPE *c,            \
                                 const TYPE *P, const bool *active)                                \
    {                                                                                              \
        typedef TYPE T;                                                                            \
        const int64_t H = r->H;                                                                    \
        for (int64_t b = 0; b < r->B; b++) {                                                       \
            if (!active[b])                                                                        \
                continue;                                                                          \
            T *gi = g + b * 4 * H, *go = gi + H, *gf = gi + 2 * H, *gc = gi + 3 * H;               \
            T *hb = h + b * H, *cb = c + b * H;                                                    \
            if (P)                                                                                 \
                for (int64_t j = 0; j < H; j++) {                                                  \
                    gi[j] += P[j] * cb[j];                                                         \
                    gf[j] += P[2 * H + j] * cb[j];                                                 \
                }                                                                                  \
            act_##SFX(&r->act[d][0], gi, H, r, true);                                              \
            if (r->input_forget)                                                                   \
                for (int64_t j = 0; j < H; j++)                                                    \
                    gf[j] = (T)1 - gi[j];                                                          \
            else                                                                                   \
                act_##SFX(&r->act[d][0], gf, H, r, true);                                          \
            act_##SFX(&r->act[d][1], gc, H, r, true);                                              \
            for (int64_t j = 0; j < H; j++)                                                        \
                cb[j] = gf[j] * cb[j] + gi[j] * gc[j];                                             \
            if (P)                                                                                 \
                for (int64_t j = 0; j < H; j++)                                                    \
                    go[j] += P[H + j] * cb[j];                                                     \
            act_##SFX(&r->act[d][0], go, H, r, true);                                              \
            memcpy(gc, cb, (size_t)H * sizeof *gc);                                                \
            act_##SFX(&r->act[d][2], gc, H, r, false);                                             \
            for (int64_t j = 0; j < H; j++)                                                        \
                hb[j] = go[j] * gc[j];                                                             \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* GRU, first half: z and r; rh = r (.) H_{t-1} for the h gate's GEMM. */                      \
    static void gru_zr_cells_##SFX(const struct rnn *r, int d, TYPE *g, const TYPE *h, TYPE *rh,   \
                                   const bool *active)                                             \
    {                                                                                              \
        const int64_t H = r->H;                                                                    \
        for (int64_t b = 0; b < r->B; b++) {                                                       \
            if (!active[b])                                                                        \
                continue;                                                                          \
            TYPE *gz = g + b * 3 * H, *gr = gz + H;                                                \
            act_##SFX(&r->act[d][0], gz, 2 * H, r, true);                                          \
            if (!r->lbr)                                                                           \
                for (int64_t j = 0; j < H; j++)                                                    \
                    rh[b * H + j] = gr[j] * h[b * H + j];                                          \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* GRU, second half; hr is H_{t-1} * Rh^T (linear_before_reset) or NULL. */                    \
    static void gru_h_cells_##SFX(const struct rnn *r, int d, TYPE *g, const TYPE *hr,             \
                                  const TYPE *rbh, TYPE *h, const bool *active)                    \
    {                                                                                              \
        typedef TYPE T;                                                                            \
        const int64_t H = r->H;                                                                    \
        for (int64_t b = 0; b < r->B; b++) {                                                       \
            if (!active[b])                                                                        \
                continue;                                                                          \
            T *gz = g + b * 3 * H, *gr = gz + H, *gh = gz + 2 * H, *hb = h + b * H;                \
            if (hr)                                                                                \
                for (int64_t j = 0; j < H; j++)                                                    \
                    gh[j] += gr[j] * (hr[b * H + j] + (rbh ? rbh[j] : (T)0));                      \
            act_##SFX(&r->act[d][1], gh, H, r, true);                                              \
            for (int64_t j = 0; j < H; j++)                                                        \
                hb[j] = ((T)1 - gz[j]) * gh[j] + gz[j] * hb[j];                                    \
        }                                                                                          \
    }

RNN_MATH(f32, float)
RNN_MATH(f64, double)

#define TYPED(r, fn, ...)                                                                          \
    ((r)->dt == SG_DTYPE_FLOAT ? fn##_f32(__VA_ARGS__) : fn##_f64(__VA_ARGS__))

static const void *at(const void *p, int64_t off, size_t es)
{
    return p ? (const char *)p + (size_t)off * es : NULL;
}

/* Run direction d of the node over all steps. */
static sg_status run_dir(struct sg_kctx *k, const struct rnn *r, int d)
{
    const size_t es = r->es;
    const int64_t H = r->H, B = r->B, S = r->S, GH = r->G * H;
    const bool reverse = r->ndir == 2 ? d == 1 : r->reverse;
    const void *W = at(r->W, d * GH * r->In, es), *R = at(r->R, d * GH * H, es);
    const void *wb = at(r->Bias, d * 2 * GH, es), *rb = at(r->Bias, d * 2 * GH + GH, es);
    const void *P = at(r->P, d * 3 * H, es);
    void *xw = sg_kscratch(k, (size_t)(S * B * GH) * es + 1);
    char *g = sg_kscratch(k, (size_t)(B * GH) * es + 1);
    char *h = sg_kscratch(k, (size_t)(B * H) * es + 1);
    char *c = sg_kscratch(k, (size_t)(B * H) * es + 1);
    char *tmp = sg_kscratch(k, (size_t)(B * H) * es + 1);
    bool *active = sg_kscratch(k, (size_t)B + 1);
    if (!xw || !g || !h || !c || !tmp || !active)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    memset(g, 0, (size_t)(B * GH) * es);
    memset(tmp, 0, (size_t)(B * H) * es);

    /* Input projections of every step at once (rows in X's order). */
    gemm_nt(r->dt, S * B, GH, r->In, r->X, r->In, W, r->In, false, xw, GH);
    if (wb) {
        /* GRU with linear_before_reset keeps Rbh for inside r (.) (...). */
        int64_t n_rb = r->cell == CELL_GRU && r->lbr ? 2 * H : GH;
        TYPED(r, add_bias, xw, S * B, GH, wb, rb, n_rb);
    }
    for (int64_t b = 0; b < B; b++) {
        if (r->h0)
            memcpy(h + b * H * es, at(r->h0, state_off(r, d, b), es), (size_t)H * es);
        else
            memset(h + b * H * es, 0, (size_t)H * es);
        if (r->c0)
            memcpy(c + b * H * es, at(r->c0, state_off(r, d, b), es), (size_t)H * es);
        else
            memset(c + b * H * es, 0, (size_t)H * es);
    }

    for (int64_t s = 0; s < S; s++) {
        bool any = false;
        for (int64_t b = 0; b < B; b++) {
            active[b] = s < r->lens[b];
            if (!active[b])
                continue;
            any = true;
            int64_t t = reverse ? r->lens[b] - 1 - s : s;
            memcpy(g + b * GH * es, at(xw, x_row(r, t, b) * GH, es), (size_t)GH * es);
        }
        if (!any)
            break;
        switch (r->cell) {
        case CELL_RNN:
            gemm_nt(r->dt, B, GH, H, h, H, R, H, true, g, GH);
            TYPED(r, rnn_cells, r, d, (void *)g, (void *)h, active);
            break;
        case CELL_LSTM:
            gemm_nt(r->dt, B, GH, H, h, H, R, H, true, g, GH);
            TYPED(r, lstm_cells, r, d, (void *)g, (void *)h, (void *)c, P, active);
            break;
        case CELL_GRU: {
            const void *Rh = at(R, 2 * H * H, es);
            gemm_nt(r->dt, B, 2 * H, H, h, H, R, H, true, g, GH);
            TYPED(r, gru_zr_cells, r, d, (void *)g, (void *)h, (void *)tmp, active);
            if (r->lbr) {
                /* tmp = H_{t-1} * Rh^T, Rbh added inside */
                gemm_nt(r->dt, B, H, H, h, H, Rh, H, false, tmp, H);
                TYPED(r, gru_h_cells, r, d, (void *)g, (void *)tmp, at(rb, 2 * H, es), (void *)h,
                      active);
            } else {
                gemm_nt(r->dt, B, H, H, tmp, H, Rh, H, true, g + 2 * H * es, GH);
                TYPED(r, gru_h_cells, r, d, (void *)g, NULL, NULL, (void *)h, active);
            }
            break;
        }
        }
        if (r->Y)
            for (int64_t b = 0; b < B; b++)
                if (active[b]) {
                    int64_t t = reverse ? r->lens[b] - 1 - s : s;
                    memcpy((char *)r->Y + (size_t)y_off(r, t, d, b) * es, h + b * H * es,
                           (size_t)H * es);
                }
    }
    for (int64_t b = 0; b < B; b++) {
        if (r->lens[b] == 0) {
            memset(h + b * H * es, 0, (size_t)H * es);
            memset(c + b * H * es, 0, (size_t)H * es);
        }
        if (r->Yh)
            memcpy((char *)r->Yh + (size_t)state_off(r, d, b) * es, h + b * H * es, (size_t)H * es);
        if (r->Yc)
            memcpy((char *)r->Yc + (size_t)state_off(r, d, b) * es, c + b * H * es, (size_t)H * es);
    }
    return SG_OK;
}

static const struct act_info *find_act(const sg_bytes *name)
{
    for (size_t i = 0; i < sizeof act_table / sizeof act_table[0]; i++)
        if (strlen(act_table[i].name) == name->len &&
            strncasecmp(act_table[i].name, (const char *)name->data, name->len) == 0)
            return &act_table[i];
    return NULL;
}

/* The activation functions of every direction, with their alpha/beta. */
static sg_status parse_acts(struct sg_kctx *k, struct rnn *r, int nact)
{
    static const enum act_fn dflt[3][3] = {
        {ACT_TANH},
        {ACT_SIGMOID, ACT_TANH},
        {ACT_SIGMOID, ACT_TANH, ACT_TANH},
    };
    const sg_attr *a = sg_kattr(k, "activations");
    size_t n = a && a->type == SG_ATTR_STRINGS ? a->n_strings : 0;
    if (n == 0) {
        for (int d = 0; d < r->ndir; d++)
            for (int i = 0; i < nact; i++)
                r->act[d][i] = (struct act){dflt[nact - 1][i], 0.0f, 0.0f};
        return SG_OK;
    }
    if (n != (size_t)(nact * r->ndir) && n != (size_t)nact)
        return sg_kfail(k, SG_EINVAL, "activations has %zu entries; %s takes %d per direction", n,
                        k->node->op_type, nact);
    const float *al, *be;
    int64_t n_al = sg_kattr_floats(k, "activation_alpha", &al);
    int64_t n_be = sg_kattr_floats(k, "activation_beta", &be);
    int64_t ia = 0, ib = 0;
    for (size_t i = 0; i < n; i++) {
        const struct act_info *info = find_act(&a->strings[i]);
        if (!info)
            return sg_kfail(k, SG_EUNSUPPORTED, "unknown activation '%.*s'", (int)a->strings[i].len,
                            (const char *)a->strings[i].data);
        struct act *x = &r->act[i / (size_t)nact][i % (size_t)nact];
        x->fn = info->fn;
        x->alpha = info->n_alpha && ia < n_al ? al[ia++] : info->alpha;
        x->beta = info->n_beta && ib < n_be ? be[ib++] : info->beta;
    }
    if (n == (size_t)nact && r->ndir == 2)
        memcpy(r->act[1], r->act[0], sizeof r->act[0]);
    return SG_OK;
}

/* Input i (optional) in the compute dtype, checked against the expected
 * dims; *out is NULL when the input is omitted. */
static sg_status get_input(struct sg_kctx *k, const struct rnn *r, uint32_t i, const char *name,
                           const int64_t *dims, uint32_t rank, const void **out)
{
    const sg_rt_value *v = sg_kin(k, i);
    const sg_rt_value *X = sg_kin(k, 0);
    *out = NULL;
    if (!v)
        return SG_OK;
    if (v->dtype != X->dtype)
        return sg_kfail(k, SG_ETYPE, "%s is %s but X is %s", name, sg_kshape(k, v),
                        sg_kshape(k, X));
    if (v->rank != rank || memcmp(v->dims, dims, rank * sizeof dims[0]))
        return sg_kfail(k, SG_ESHAPE, "%s is %s, expected %s (X is %s)", name, sg_kshape(k, v),
                        sg_kdims(k, dims, rank), sg_kshape(k, X));
    if (v->dtype == r->dt) {
        *out = v->data;
        return SG_OK;
    }
    if (!(*out = sg_kfloats(k, v)))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    return SG_OK;
}

/* Output i with dims; *buf receives where to write (the output's data or,
 * for half types, float scratch converted by finish_output). */
static sg_status make_output(struct sg_kctx *k, const struct rnn *r, uint32_t i,
                             const int64_t *dims, uint32_t rank, void **buf)
{
    *buf = NULL;
    if (!sg_kout_wanted(k, i))
        return SG_OK;
    sg_rt_value *v;
    sg_status st = sg_kout(k, i, sg_kin(k, 0)->dtype, dims, rank, &v);
    if (st)
        return st;
    if (v->dtype == r->dt) {
        *buf = v->data;
        return SG_OK;
    }
    *buf = sg_kscratch(k, (size_t)v->numel * r->es + 1);
    if (!*buf)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    memset(*buf, 0, (size_t)v->numel * r->es);
    return SG_OK;
}

static void finish_output(struct sg_kctx *k, const struct rnn *r, uint32_t i, const void *buf)
{
    sg_rt_value *v = k->out[i];
    if (!buf || v->data == buf)
        return;
    const float *f = buf;
    if (v->dtype == SG_DTYPE_FLOAT16)
        for (int64_t j = 0; j < v->numel; j++)
            ((uint16_t *)v->data)[j] = sg_float_to_half(f[j]);
    else if (v->dtype == SG_DTYPE_BFLOAT16)
        for (int64_t j = 0; j < v->numel; j++)
            ((uint16_t *)v->data)[j] = sg_float_to_bf16(f[j]);
    (void)r;
}

static sg_status run_rnn(struct sg_kctx *k)
{
    struct rnn r;
    memset(&r, 0, sizeof r);
    const char *op = k->node->op_type;
    r.cell = op[0] == 'L' ? CELL_LSTM : op[0] == 'G' ? CELL_GRU : CELL_RNN;
    r.G = r.cell == CELL_LSTM ? 4 : r.cell == CELL_GRU ? 3 : 1;
    int nact = r.cell == CELL_LSTM ? 3 : r.cell == CELL_GRU ? 2 : 1;
    const sg_rt_value *X = sg_kin(k, 0), *W = sg_kin(k, 1), *R = sg_kin(k, 2);
    if (!X || !W || !R)
        return sg_kfail(k, SG_EUNDEF, "X, W and R are required");
    if (X->rank != 3 || W->rank != 3 || R->rank != 3)
        return sg_kfail(k, SG_ESHAPE, "X, W and R must be 3-D, got %s, %s and %s", sg_kshape(k, X),
                        sg_kshape(k, W), sg_kshape(k, R));
    r.dt = X->dtype == SG_DTYPE_DOUBLE ? SG_DTYPE_DOUBLE : SG_DTYPE_FLOAT;
    r.es = r.dt == SG_DTYPE_FLOAT ? sizeof(float) : sizeof(double);
    int64_t layout = k->opset >= 14 ? sg_kattr_int(k, "layout", 0) : 0;
    if (layout != 0 && layout != 1)
        return sg_kfail(k, SG_EINVAL, "layout must be 0 or 1, got %lld", (long long)layout);
    r.layout1 = layout == 1;
    r.S = r.layout1 ? X->dims[1] : X->dims[0];
    r.B = r.layout1 ? X->dims[0] : X->dims[1];
    r.In = X->dims[2];
    const char *dir = sg_kattr_string(k, "direction", "forward");
    if (strcmp(dir, "bidirectional") == 0)
        r.ndir = 2;
    else if (strcmp(dir, "forward") == 0 || strcmp(dir, "reverse") == 0)
        r.ndir = 1;
    else
        return sg_kfail(k, SG_EINVAL, "direction '%s' is not forward, reverse or bidirectional",
                        dir);
    r.reverse = strcmp(dir, "reverse") == 0;
    r.H = sg_kattr_int(k, "hidden_size", R->dims[2]);
    if (r.H <= 0)
        return sg_kfail(k, SG_EINVAL, "hidden_size %lld is not positive", (long long)r.H);
    r.lbr = r.cell == CELL_GRU && sg_kattr_int(k, "linear_before_reset", 0) != 0;
    r.input_forget = r.cell == CELL_LSTM && sg_kattr_int(k, "input_forget", 0) != 0;
    const sg_attr *clip = sg_kattr(k, "clip");
    if (clip && clip->type == SG_ATTR_FLOAT) {
        r.has_clip = true;
        r.clip = clip->f;
    }
    sg_status st = parse_acts(k, &r, nact);
    if (st)
        return st;

    /* The shapes W, R, B and P must have (hidden_size is an attribute). */
    int64_t GH, GH2, H3, nd = r.ndir;
    if (!sg_dim_mul(r.G, r.H, &GH) || !sg_dim_mul(2, GH, &GH2) || !sg_dim_mul(3, r.H, &H3))
        return sg_kfail(k, SG_ERANGE, "hidden_size %lld is too large", (long long)r.H);
    int64_t wd[3] = {nd, GH, r.In}, rd[3] = {nd, GH, r.H}, bd[2] = {nd, GH2}, pd[2] = {nd, H3};
    int64_t sd[3] = {nd, r.B, r.H};
    if (r.layout1) {
        sd[0] = r.B;
        sd[1] = nd;
    }
    r.X = X->dtype == r.dt ? X->data : sg_kfloats(k, X);
    if (!r.X)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if ((st = get_input(k, &r, 1, "W", wd, 3, &r.W)) ||
        (st = get_input(k, &r, 2, "R", rd, 3, &r.R)) ||
        (st = get_input(k, &r, 3, "B", bd, 2, &r.Bias)) ||
        (st = get_input(k, &r, 5, "initial_h", sd, 3, &r.h0)))
        return st;
    if (r.cell == CELL_LSTM && ((st = get_input(k, &r, 6, "initial_c", sd, 3, &r.c0)) ||
                                (st = get_input(k, &r, 7, "P", pd, 2, &r.P))))
        return st;

    int64_t *lens = sg_kscratch(k, (size_t)(r.B + 1) * sizeof *lens);
    if (!lens)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    const sg_rt_value *L = sg_kin(k, 4);
    if (L && (L->rank != 1 || L->dims[0] != r.B || sg_dtype_is_float(L->dtype)))
        return sg_kfail(k, SG_ESHAPE, "sequence_lens is %s, expected int32[%lld] (X is %s)",
                        sg_kshape(k, L), (long long)r.B, sg_kshape(k, X));
    for (int64_t b = 0; b < r.B; b++) {
        lens[b] = L ? sg_rt_get_i64(L, b) : r.S;
        if (lens[b] < 0 || lens[b] > r.S)
            return sg_kfail(k, SG_ERANGE, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                            (long long)b, (long long)lens[b], (long long)r.S);
    }
    r.lens = lens;

    int64_t yd[4] = {r.S, nd, r.B, r.H};
    if (r.layout1) {
        yd[0] = r.B;
        yd[1] = r.S;
        yd[2] = nd;
    }
    if ((st = make_output(k, &r, 0, yd, 4, &r.Y)) || (st = make_output(k, &r, 1, sd, 3, &r.Yh)))
        return st;
    if (r.cell == CELL_LSTM && (st = make_output(k, &r, 2, sd, 3, &r.Yc)))
        return st;
    for (int d = 0; d < r.ndir; d++)
        if ((st = run_dir(k, &r, d)))
            return st;
    finish_output(k, &r, 0, r.Y);
    finish_output(k, &r, 1, r.Yh);
    if (r.cell == CELL_LSTM)
        finish_output(k, &r, 2, r.Yc);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "RNN", 1, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "RNN", 7, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "RNN", 14, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "GRU", 1, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "GRU", 3, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "GRU", 7, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "GRU", 14, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooo"},
    {"", "LSTM", 1, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooooo"},
    {"", "LSTM", 7, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooooo"},
    {"", "LSTM", 14, 0, SG_KT_FLOATS, 0, run_rnn, "rrrooooo"},
};
SG_KERNEL_FAMILY(rnn, kernels);
