/*
 * fold_bn.c - `fold-bn`: fold an inference BatchNormalization into the
 * Conv, ConvTranspose, Gemm or MatMul that feeds it.
 *
 * BatchNormalization computes y = x * s + t per channel (axis 1), with
 * s = scale / sqrt(var + epsilon) and t = B - mean * s. When x comes from
 * a node that applies a constant weight per output channel, the weight's
 * channel slices are multiplied by s and the bias becomes b * s + t (a
 * bias input is created when there was none). The channel is the output
 * channel: dim 0 of a Conv weight, group * dim 1 of a ConvTranspose weight,
 * the column of a Gemm's B (its row with transB) or of a MatMul's
 * rank-2 weight; Gemm's C absorbs beta (set to 1); MatMul has no bias
 * input, so the BatchNormalization becomes an Add of t. The math is exact
 * up to rounding only where BatchNormalization's channel axis is the
 * weight's output axis, so MatMul folds only when its output has rank 2.
 * Values are computed in double and stored once in the weight's dtype
 * (float32, float64, float16, bfloat16).
 *
 * Folded only when: the BatchNormalization has one output (inference form,
 * not training_mode, spatial), its input has no other reader and is not a
 * graph output, its scale, B, mean and var and the producer's weight and
 * bias are constant (initializers that are not graph inputs, except under
 * IR < 4 where all are inputs, or Constant nodes, of this graph or an
 * enclosing one) with one value per channel. Every BatchNormalization that
 * is not folded is reported with the reason.
 *
 * Keeps intact: the BatchNormalization's output value (name, readers, type,
 * graph output listing), now made by the producer (or the Add). A weight
 * or bias initializer only the producer reads is rewritten in place and
 * keeps its name; one read elsewhere too (or a Constant, a graph input or
 * output, a value of an enclosing graph) is copied under a fresh name and
 * never changed. Constants left unread are removed.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { OPT_OPS, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_OPS] = {"ops", SG_OPT_STRINGS, "Conv,ConvTranspose,Gemm,MatMul",
                 "producers to fold into (Conv, ConvTranspose, Gemm, MatMul)"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

/* A new bias to make: input `slot` of `reader`. Name base and payload live
 * in the model arena. */
struct pending {
    sg_node *reader;
    uint32_t slot;
    const char *base;
    int32_t dtype;
    int64_t dims[2];
    uint32_t rank;
    const void *data;
    size_t nbytes;
};

struct ctx {
    sg_model *m;
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    /* IR < 4: initializers are also graph inputs, and constant (as ONNX
     * Runtime reads such models); new ones are listed as inputs too. */
    bool old_ir;
    /* The weights and statistics replaced, removed at the end if unread. */
    sg_value **olds;
    size_t n_olds, cap_olds;
    /* Per graph: producer outputs the BatchNormalizations' outputs replaced. */
    sg_value **dead;
    size_t n_dead, cap_dead;
    /* New biases, made once the replaced constants are gone (the value map
     * then never holds both: one with 350k names would grow to 1M slots). */
    struct pending *pend;
    size_t n_pend, cap_pend;
};

static sg_status push(sg_value ***arr, size_t *n, size_t *cap, sg_value *v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        sg_value **grown = sg_grow(*arr, *cap * sizeof *grown, c * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        *arr = grown;
        *cap = c;
    }
    (*arr)[(*n)++] = v;
    return SG_OK;
}

static bool default_domain(const sg_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static sg_value *resolve(sg_value *v)
{
    while (v && v->outer)
        v = v->outer;
    return v;
}

/* The constant tensor behind v (see sg__const_tensor), or NULL. */
static sg_tensor *const_tensor(const struct ctx *c, sg_value *v)
{
    sg_value *r = resolve(v);
    if (c->old_ir && r->init)
        return r->init;
    return sg_value_constant(v);
}

static bool float_dtype(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT || dt == SG_DTYPE_DOUBLE || dt == SG_DTYPE_FLOAT16 ||
           dt == SG_DTYPE_BFLOAT16;
}

static double get_elem(int32_t dt, const void *p, int64_t i)
{
    switch (dt) {
    case SG_DTYPE_FLOAT:
        return ((const float *)p)[i];
    case SG_DTYPE_DOUBLE:
        return ((const double *)p)[i];
    case SG_DTYPE_FLOAT16:
        return sg_half_to_float(((const uint16_t *)p)[i]);
    default:
        return sg_bf16_to_float(((const uint16_t *)p)[i]);
    }
}

static void put_elem(int32_t dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case SG_DTYPE_FLOAT:
        ((float *)p)[i] = (float)v;
        break;
    case SG_DTYPE_DOUBLE:
        ((double *)p)[i] = v;
        break;
    case SG_DTYPE_FLOAT16:
        ((uint16_t *)p)[i] = sg_float_to_half((float)v);
        break;
    default:
        ((uint16_t *)p)[i] = sg_float_to_bf16((float)v);
        break;
    }
}

/* Everything one fold needs, gathered before anything changes. */
struct plan {
    sg_node *bn, *p;
    enum { CONV, CONV_T, GEMM, MATMUL } kind;
    sg_tensor *w, *b; /* producer weight and bias (b may be NULL) */
    sg_value *w_src, *b_src;
    sg_tensor *par[4]; /* scale, B, mean, var */
    sg_value *par_src[4];
    int64_t channels;
    double *s, *t; /* per channel */
};

/* The rank of v when its type says so, else -1. */
static int value_rank(const sg_value *v)
{
    v = resolve((sg_value *)v);
    if (v->init)
        return (int)v->init->rank;
    const sg_type *t = v->type;
    return t && t->kind == SG_TYPE_TENSOR && t->shape ? (int)t->shape->rank : -1;
}

/* Why BatchNormalization bn cannot be folded, or NULL with *pl filled
 * (except s and t). `why` may point into buf. */
static const char *check(struct ctx *c, sg_node *bn, struct plan *pl, char *buf, size_t size)
{
    memset(pl, 0, sizeof *pl);
    pl->bn = bn;
    int64_t opset = sg_model_opset(c->m, "");
    if (bn->n_inputs != 5 || !bn->outputs[0])
        return "not 5 inputs and an output";
    for (uint32_t i = 1; i < bn->n_outputs; i++)
        if (bn->outputs[i])
            return "training outputs are present";
    if (opset >= 14 && sg_attr_int(bn, "training_mode", 0))
        return "training_mode=1";
    if (opset < 9 && sg_attr_int(bn, "spatial", 1) == 0)
        return "spatial=0 (per-element statistics)";
    sg_value *x = bn->inputs[0];
    sg_node *p = x ? x->producer : NULL;
    if (!p || !default_domain(p) || !sg__opt_has(&c->opts[OPT_OPS], p->op_type))
        return "its input is not made by one of the ops to fold into";
    pl->p = p;
    const char *op = p->op_type;
    if (!strcmp(op, "Conv"))
        pl->kind = CONV;
    else if (!strcmp(op, "ConvTranspose"))
        pl->kind = CONV_T;
    else if (!strcmp(op, "Gemm"))
        pl->kind = GEMM;
    else if (!strcmp(op, "MatMul"))
        pl->kind = MATMUL;
    else {
        snprintf(buf, size, "cannot fold into %s", op);
        return buf;
    }
    if (x->producer_index != 0 || x->n_uses != 1 || (x->flags & SG_VALUE_OUTPUT)) {
        snprintf(buf, size, "'%s' has other readers or is a graph output", x->name);
        return buf;
    }
    for (int i = 0; i < 4; i++) {
        sg_value *v = bn->inputs[i + 1];
        pl->par[i] = v ? const_tensor(c, v) : NULL;
        pl->par_src[i] = resolve(v);
        if (!pl->par[i])
            return "scale, B, mean or var is not constant";
        if (!float_dtype(pl->par[i]->dtype))
            return "scale, B, mean or var is not a float tensor";
    }
    if (p->n_inputs < 2 || !p->inputs[1] || !(pl->w = const_tensor(c, p->inputs[1]))) {
        snprintf(buf, size, "the weight of %s '%s' is not constant", op, sg__node_label(p));
        return buf;
    }
    pl->w_src = resolve(p->inputs[1]);
    if (!float_dtype(pl->w->dtype)) {
        snprintf(buf, size, "weight dtype %s", sg_dtype_name(pl->w->dtype));
        return buf;
    }
    if (pl->kind != MATMUL && p->n_inputs > 2 && p->inputs[2]) {
        if (!(pl->b = const_tensor(c, p->inputs[2]))) {
            snprintf(buf, size, "the bias of %s '%s' is not constant", op, sg__node_label(p));
            return buf;
        }
        pl->b_src = resolve(p->inputs[2]);
        if (pl->b->dtype != pl->w->dtype)
            return "bias and weight dtypes differ";
    }
    const sg_tensor *w = pl->w;
    switch (pl->kind) {
    case CONV:
        if (w->rank < 2)
            return "Conv weight of rank < 2";
        pl->channels = w->dims[0];
        break;
    case CONV_T:
        if (w->rank < 2)
            return "ConvTranspose weight of rank < 2";
        pl->channels = sg_attr_int(p, "group", 1) * w->dims[1];
        if (sg_attr_int(p, "group", 1) < 1 || w->dims[0] % sg_attr_int(p, "group", 1))
            return "ConvTranspose group does not divide the weight";
        break;
    case GEMM:
        if (w->rank != 2)
            return "Gemm weight is not rank 2";
        pl->channels = sg_attr_int(p, "transB", 0) ? w->dims[0] : w->dims[1];
        break;
    case MATMUL: {
        int ra = value_rank(p->inputs[0]);
        if (w->rank != 2)
            return "MatMul weight is not rank 2";
        if (ra < 0)
            return "MatMul input rank unknown (the channel axis must be the weight's columns)";
        if (ra != 2) {
            snprintf(buf, size,
                     "MatMul output has rank %d: BatchNormalization's channel axis is not the "
                     "weight's column axis",
                     ra);
            return buf;
        }
        pl->channels = w->dims[1];
        break;
    }
    }
    if (pl->channels <= 0)
        return "the weight has no output channels";
    for (int i = 0; i < 4; i++)
        if (sg_tensor_numel(pl->par[i]) != pl->channels) {
            snprintf(buf, size, "%lld channels but %s has %lld values", (long long)pl->channels,
                     bn->inputs[i + 1]->name, (long long)sg_tensor_numel(pl->par[i]));
            return buf;
        }
    if (pl->b && pl->kind != GEMM && sg_tensor_numel(pl->b) != pl->channels)
        return "bias length is not the channel count";
    if (pl->b && pl->kind == GEMM) {
        /* C broadcasts to [N, M]: scalar, [1], [M], [R, 1] or [R, M]. */
        const sg_tensor *b = pl->b;
        int64_t last = b->rank ? b->dims[b->rank - 1] : 1;
        if (b->rank > 2 || (last != 1 && last != pl->channels))
            return "Gemm C does not broadcast per column";
    }
    return NULL;
}

/* s and t of the plan, from the BatchNormalization's constants. */
static sg_status scale_shift(struct ctx *c, struct plan *pl)
{
    int64_t C = pl->channels;
    pl->s = sg_calloc((size_t)C + 1, sizeof *pl->s);
    pl->t = sg_calloc((size_t)C + 1, sizeof *pl->t);
    if (!pl->s || !pl->t)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    double eps = sg_attr_float(pl->bn, "epsilon", 1e-5f);
    for (int64_t k = 0; k < C; k++) {
        double v[4];
        for (int i = 0; i < 4; i++)
            if (!sg__tensor_get_f64(c->m, pl->par[i], (size_t)k, &v[i]))
                return sg_diag_set(c->diag, SG_EPARSE, "cannot read '%s'",
                                   pl->bn->inputs[i + 1]->name);
        pl->s[k] = v[0] / sqrt(v[3] + eps);
        pl->t[k] = v[1] - v[2] * pl->s[k];
    }
    return SG_OK;
}

/* The output channel of element i of the weight. */
static int64_t channel_of(const struct plan *pl, int64_t i)
{
    const sg_tensor *w = pl->w;
    switch (pl->kind) {
    case CONV:
        return i / (sg_tensor_numel(w) / w->dims[0]);
    case CONV_T: {
        int64_t inner = sg_tensor_numel(w) / (w->dims[0] * w->dims[1]);
        int64_t per_group = w->dims[1];
        int64_t group = sg_attr_int(pl->p, "group", 1);
        int64_t cin = i / (inner * per_group), j = (i / inner) % per_group;
        return (cin / (w->dims[0] / group)) * per_group + j;
    }
    case GEMM:
        if (sg_attr_int(pl->p, "transB", 0))
            return i / w->dims[1];
        return i % w->dims[1];
    default:
        return i % w->dims[1];
    }
}

/* A new constant of the graph of `reader`: an initializer, listed as an
 * input too under IR < 4, where a subgraph (whose inputs are its formal
 * parameters) gets a Constant node placed before `reader` instead. */
static sg_status add_const(struct ctx *c, sg_node *reader, const char *base, int32_t dt,
                           const int64_t *dims, uint32_t rank, const void *data, size_t nbytes,
                           sg_value **out)
{
    sg_graph *g = reader->graph;
    if (!c->old_ir || g->kind == SG_GRAPH_MAIN) {
        sg_status st = sg__add_const(g, base, dt, dims, rank, data, nbytes, out, c->diag);
        if (!st && c->old_ir && (st = sg_graph_add_input(g, *out)))
            st = sg_diag_set(c->diag, st, "out of memory");
        return st;
    }
    const char *name = sg_model_fresh_name(c->m, base);
    sg_tensor *t = name ? sg_tensor_create(c->m, name, dt, dims, rank) : NULL;
    void *copy = t ? sg_arena_memdup(c->m->arena, data, nbytes ? nbytes : 1) : NULL;
    sg_type *type = copy ? sg_type_tensor(c->m, dt, dims, (int)rank) : NULL;
    sg_node *n = type ? sg_node_create(g, "Constant", NULL, name, c->diag) : NULL;
    sg_value *v = NULL;
    if (!n || sg_tensor_set_raw(c->m, t, copy, nbytes, NULL) ||
        sg_node_set_attr_tensor(n, "value", t) || sg_graph_add_value(g, name, type, &v, c->diag) ||
        sg_node_set_output(n, 0, v))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory adding constant '%s'", base);
    sg_node_move_before(n, reader);
    *out = v;
    return SG_OK;
}

/* Whether folded values may replace the tensor of v, input `slot` of p, in
 * place (v keeps its name): an initializer of p's own graph that only p
 * reads there, listed neither as a graph input nor as an output. */
static bool in_place(const struct ctx *c, const sg_node *p, uint32_t slot)
{
    const sg_value *v = slot < p->n_inputs ? p->inputs[slot] : NULL;
    return !c->old_ir && v && v->init && !v->outer && v->n_uses == 1 &&
           !(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT));
}

/* Rewrite constant `slot` of p in place with the folded payload (in the
 * model arena, kept as it is) when in_place allows and the shape stays:
 * true (*out is that constant) or false (nothing changed; *st is set when
 * out of memory). */
static bool rewrite(struct ctx *c, sg_node *p, uint32_t slot, const int64_t *dims, uint32_t rank,
                    const void *data, size_t nbytes, sg_value **out, sg_status *st)
{
    *st = SG_OK;
    if (!in_place(c, p, slot))
        return false;
    sg_tensor *t = p->inputs[slot]->init;
    if (t->rank != rank || memcmp(t->dims, dims, rank * sizeof *dims))
        return false;
    if (sg_tensor_set_raw(c->m, t, data, nbytes, NULL)) {
        *st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return false;
    }
    *out = p->inputs[slot];
    return true;
}

/* The folded weight and bias: the producer's own constants rewritten, or
 * new constants of its graph. */
static sg_status new_constants(struct ctx *c, struct plan *pl, sg_value **w_out, sg_value **b_out)
{
    const sg_tensor *w = pl->w;
    int32_t dt = w->dtype;
    size_t es = sg_dtype_size(dt), nw = (size_t)sg_tensor_numel(w), nbytes;
    const void *wd = sg_tensor_data(c->m, pl->w, &nbytes, c->diag);
    if (!wd)
        return c->diag && c->diag->status ? c->diag->status : SG_EPARSE;
    /* Bias: [M], or Gemm's C broadcast to [R, M]. */
    int64_t rows = 1, bdims[2] = {pl->channels, 0};
    uint32_t brank = 1;
    const sg_tensor *b = pl->b;
    const void *bd = NULL;
    if (b) {
        if (!(bd = sg_tensor_data(c->m, pl->b, &nbytes, c->diag)))
            return c->diag && c->diag->status ? c->diag->status : SG_EPARSE;
        if (pl->kind == GEMM && b->rank == 2) {
            rows = b->dims[0];
            bdims[0] = rows;
            bdims[1] = pl->channels;
            brank = 2;
        }
    }
    size_t nb = (size_t)(rows * pl->channels);
    /* In the arena: the common outcomes (a constant rewritten in place, a
     * pending bias) keep the buffer as it is. */
    void *nwd = sg_arena_alloc(c->m->arena, nw * es + 1);
    void *nbd = sg_arena_alloc(c->m->arena, nb * es + 1);
    if (!nwd || !nbd)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_status st = SG_OK;
    for (size_t i = 0; i < nw; i++)
        put_elem(dt, nwd, (int64_t)i, get_elem(dt, wd, (int64_t)i) * pl->s[channel_of(pl, i)]);
    double beta = pl->kind == GEMM ? sg_attr_float(pl->p, "beta", 1.0f) : 1.0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < pl->channels; k++) {
            double old = 0;
            if (b) {
                int64_t last = b->rank ? b->dims[b->rank - 1] : 1;
                int64_t col = last == 1 ? 0 : k;
                old = beta * get_elem(dt, bd, (b->rank == 2 ? r * last : 0) + col);
            }
            put_elem(dt, nbd, r * pl->channels + k, old * pl->s[k] + pl->t[k]);
        }
    char base[600];
    snprintf(base, sizeof base, "%s_bn", pl->w_src->name);
    if (!rewrite(c, pl->p, 1, w->dims, w->rank, nwd, nw * es, w_out, &st) && !st)
        st = add_const(c, pl->p, base, dt, w->dims, w->rank, nwd, nw * es, w_out);
    if (st)
        return st;
    *b_out = NULL;
    if (b && (rewrite(c, pl->p, 2, bdims, brank, nbd, nb * es, b_out, &st) || st))
        return st;
    /* A new bias: made after the replaced constants are removed. */
    if (b)
        snprintf(base, sizeof base, "%s_bn", pl->b_src->name);
    else
        snprintf(base, sizeof base, "%s_bias", sg__node_label(pl->p));
    if (c->n_pend == c->cap_pend) {
        size_t cap = c->cap_pend ? c->cap_pend * 2 : 16;
        struct pending *grown = sg_grow(c->pend, c->cap_pend * sizeof *grown, cap * sizeof *grown);
        if (!grown)
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        c->pend = grown;
        c->cap_pend = cap;
    }
    struct pending *pd = &c->pend[c->n_pend];
    *pd = (struct pending){.reader = pl->p,
                           .slot = 2,
                           .base = sg_arena_strdup(c->m->arena, base),
                           .dtype = dt,
                           .dims = {bdims[0], bdims[1]},
                           .rank = brank,
                           .data = nbd,
                           .nbytes = nb * es};
    if (!pd->base)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    c->n_pend++;
    return SG_OK;
}

static sg_status fold(struct ctx *c, struct plan *pl)
{
    sg_node *bn = pl->bn, *p = pl->p;
    sg_value *w_new, *b_new, *x = bn->inputs[0], *y = bn->outputs[0];
    char bn_label[512];
    snprintf(bn_label, sizeof bn_label, "%s", sg__node_label(bn));
    sg_status st = scale_shift(c, pl);
    if (!st)
        st = new_constants(c, pl, &w_new, &b_new);
    if (st)
        return st;
    if ((st = sg_node_set_input(p, 1, w_new)))
        return sg_diag_set(c->diag, st, "out of memory");
    if (pl->kind != MATMUL) {
        /* A pending bias leaves the slot empty until it is made. */
        if ((st = sg_node_set_input(p, 2, b_new)))
            return sg_diag_set(c->diag, st, "out of memory");
        if (pl->kind == GEMM && sg_attr_float(p, "beta", 1.0f) != 1.0f &&
            (st = sg_node_set_attr_float(p, "beta", 1.0f)))
            return sg_diag_set(c->diag, st, "out of memory");
    }
    /* y, the BatchNormalization's output, is made by p (or the Add) now. */
    if ((st = sg_node_set_output(bn, 0, NULL)) || (st = sg_node_remove(bn, c->diag)))
        return sg_diag_set(c->diag, st, "cannot remove '%s'", bn_label);
    if (pl->kind == MATMUL) {
        char base[600];
        snprintf(base, sizeof base, "%s_bias", bn_label);
        const char *name = sg_model_fresh_name(c->m, base);
        sg_node *add = name ? sg_node_create(p->graph, "Add", NULL, name, c->diag) : NULL;
        if (!add || (st = sg_node_set_input(add, 0, x)) || (st = sg_node_set_output(add, 0, y)))
            return sg_diag_set(c->diag, st ? st : SG_ENOMEM, "cannot add the bias of '%s'",
                               bn_label);
        sg_node_move_after(add, p);
        c->pend[c->n_pend - 1].reader = add; /* its bias, input 1 */
        c->pend[c->n_pend - 1].slot = 1;
    } else if ((st = sg_node_set_output(p, 0, NULL)) || (st = sg_node_set_output(p, 0, y)) ||
               (st = push(&c->dead, &c->n_dead, &c->cap_dead, x))) {
        return sg_diag_set(c->diag, st, "cannot rewire '%s'", sg__node_label(p));
    }
    sg_report_change(c->rep, "BatchNormalization folded", "%s into %s (%s)", bn_label,
                     sg__node_label(p), p->op_type);
    sg_value *old[6] = {pl->w_src,      pl->b_src,      pl->par_src[0],
                        pl->par_src[1], pl->par_src[2], pl->par_src[3]};
    for (int i = 0; i < 6 && !st; i++)
        if (old[i]) /* a constant shared by several folds is listed again */
            st = push(&c->olds, &c->n_olds, &c->cap_olds, old[i]);
    return st ? sg_diag_set(c->diag, st, "out of memory") : SG_OK;
}

static bool is_bn(const sg_node *n)
{
    return default_domain(n) && strcmp(n->op_type, "BatchNormalization") == 0;
}

/* Removing a folded BatchNormalization looks its name up in the node map:
 * a cache miss each in a big graph. Loaded in stages, a level of pointers
 * each, while the folds before it run: the node, its name, the map slot. */
static void prefetch_removal(const sg_graph *g, sg_node *const *bns, size_t k, size_t count)
{
    if (k + 12 < count)
        __builtin_prefetch(bns[k + 12]);
    if (k + 8 < count && bns[k + 8]->name)
        __builtin_prefetch(bns[k + 8]->name);
    if (k + 4 < count && bns[k + 4]->name && g->nodes_map_built)
        sg__strmap_prefetch(g->nodes_map, bns[k + 4]->name);
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    /* Listed first: folding adds and removes nodes of g as it goes. */
    size_t count = 0;
    for (sg_node *n = g->first; n; n = n->next)
        count += is_bn(n);
    if (!count)
        return SG_OK;
    sg_node **bns = sg_grow(NULL, 0, count * sizeof *bns);
    if (!bns)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    count = 0;
    for (sg_node *n = g->first; n; n = n->next)
        if (is_bn(n))
            bns[count++] = n;
    sg_status st = SG_OK;
    for (size_t k = 0; k < count && !st; k++) {
        prefetch_removal(g, bns, k, count);
        sg_node *n = bns[k];
        struct plan pl;
        char buf[600];
        const char *why = check(c, n, &pl, buf, sizeof buf);
        if (why) {
            sg_report_info(c->rep, "BatchNormalization not folded", "%s (%s)", sg__node_label(n),
                           why);
            continue;
        }
        st = fold(c, &pl);
        sg_free(pl.s);
        sg_free(pl.t);
    }
    sg_free(bns);
    /* The replaced producer outputs, unread now, go in one batch. */
    size_t n_dead = c->n_dead;
    c->n_dead = 0;
    if (!st && n_dead && (st = sg_graph_remove_values(g, c->dead, &n_dead)))
        st = sg_diag_set(c->diag, st, "cannot remove the outputs BatchNormalization replaced");
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {.m = m, .opts = opts, .rep = rep, .diag = diag};
    c.old_ir = m->has_ir_version && m->ir_version < 4;
    sg_status st = m->graph ? sg__walk_graphs(m->graph, run_graph, &c) : SG_OK;
    if (!st)
        st = sg__remove_constants(c.olds, c.n_olds, c.old_ir, rep, diag);
    for (size_t k = 0; k < c.n_pend && !st; k++) {
        if (k + 8 < c.n_pend) { /* the name check and the reader, a miss each */
            sg_model_prefetch_fresh(m, c.pend[k + 8].base, "", false);
            __builtin_prefetch(c.pend[k + 8].reader);
        }
        const struct pending *pd = &c.pend[k];
        sg_value *b;
        st = add_const(&c, pd->reader, pd->base, pd->dtype, pd->dims, pd->rank, pd->data,
                       pd->nbytes, &b);
        if (!st && (st = sg_node_set_input(pd->reader, pd->slot, b)))
            st = sg_diag_set(diag, st, "out of memory");
    }
    sg_free(c.pend);
    sg_free(c.olds);
    sg_free(c.dead);
    return st;
}

const struct sg_pass sg_pass_fold_bn = {
    .name = "fold-bn",
    .summary = "fold inference BatchNormalization into the Conv, ConvTranspose, Gemm or MatMul "
               "before it",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
