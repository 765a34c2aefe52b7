/*
 * rebatch_shapes.c - the recorded shapes after set-batch changed the batch
 * of some inputs (sg__rebatch_shapes in pass_impl.h).
 *
 * Until surgeon infers shapes, a recorded shape downstream of the inputs is
 * kept only where it is provably the old one with the batch replaced. The
 * proof follows the batch axis forward in topological order through ops
 * whose rule is plain (the table `rules`): element-wise ops and those that
 * keep their input's shape, broadcasting ops whose other operands have a 1
 * (or nothing) at the batch position, Conv and the pools, Flatten, Gemm,
 * MatMul, Transpose, the reductions, Concat, Split, Slice and Gather away
 * from the batch axis, Squeeze/Unsqueeze with constant axes, and a Reshape
 * whose constant shape set-batch proved. A value so followed, whose
 * recorded shape has the followed rank and the old batch at the followed
 * axis, gets the new batch there and keeps its other dims (resnet50's
 * [1,1000] becomes [8,1000]). Every other recorded shape downstream keeps
 * its symbolic dims (a dim named like the inputs' old batch takes the new
 * one, as ONNX reads equal names as equal sizes) and loses its numbers.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <stdint.h>
#include <string.h>

/* Where the batch is in a value: axis `axis` of a tensor of rank `rank`. */
struct track {
    int axis, rank;
};

struct rb {
    const struct sg__rebatch *in;
    struct sg__strmap tracks; /* value name -> encoded track */
    struct sg_pass_report *rep;
    struct sg_diag *diag;
};

static void *encode(struct track t)
{
    return (void *)(uintptr_t)(1 + (uintptr_t)t.axis * 128 + (uintptr_t)t.rank);
}

static bool tracked(const struct rb *r, const sg_value *v, struct track *t)
{
    uintptr_t e = v ? (uintptr_t)sg__strmap_get(&r->tracks, v->name) : 0;
    if (!e)
        return false;
    t->axis = (int)((e - 1) / 128);
    t->rank = (int)((e - 1) % 128);
    return true;
}

static bool in_down(const struct rb *r, const sg_value *v)
{
    return v && sg__ptrset_has(r->in->down, v);
}

/* The dims of a value that does not carry the batch: a constant's, or its
 * recorded shape when every dim is a number. */
static bool static_dims(const sg_value *v, int64_t *dims, int *rank)
{
    const sg_tensor *t = sg_value_constant(v);
    if (t) {
        *rank = (int)t->rank;
        for (uint32_t i = 0; i < t->rank; i++)
            dims[i] = t->dims[i];
        return true;
    }
    const sg_type *ty = v->type;
    if (!ty || ty->kind != SG_TYPE_TENSOR || !ty->shape || ty->shape->rank > SG_MAX_RANK)
        return false;
    *rank = (int)ty->shape->rank;
    for (uint32_t i = 0; i < ty->shape->rank; i++) {
        if (ty->shape->dims[i].kind != SG_DIM_VALUE)
            return false;
        dims[i] = ty->shape->dims[i].value;
    }
    return true;
}

/* The constant integer list in input `slot` or attribute `attr` (opset
 * moved several axes lists from attributes to inputs); false when absent
 * or not constant. */
static bool int_list(const sg_node *n, uint32_t slot, const char *attr, int64_t *vals,
                     size_t *count)
{
    const sg_attr *a = attr ? sg_node_attr(n, attr) : NULL;
    if (a && a->n_ints <= SG_MAX_RANK) {
        memcpy(vals, a->ints, a->n_ints * sizeof *vals);
        *count = a->n_ints;
        return true;
    }
    if (slot >= n->n_inputs || !n->inputs[slot])
        return false;
    sg_tensor *t = sg_value_constant(n->inputs[slot]);
    int64_t k = t ? sg_tensor_numel(t) : -1;
    if (!t || t->rank > 1 || k < 0 || k > SG_MAX_RANK)
        return false;
    for (int64_t i = 0; i < k; i++)
        if (!sg__tensor_get_i64(n->graph->model, t, (size_t)i, &vals[i]))
            return false;
    *count = (size_t)k;
    return true;
}

/* Axis a of a rank-`rank` tensor, negative counted from the end; -1 when
 * out of range. */
static int norm_axis(int64_t a, int rank)
{
    if (a < 0)
        a += rank;
    return a >= 0 && a < rank ? (int)a : -1;
}

/* The one batched input of n, which must be input `slot`; false when
 * another input is batched too (nothing is proven then). */
static bool only_batched(struct rb *r, const sg_node *n, uint32_t slot, struct track *t)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (i != slot && in_down(r, n->inputs[i]))
            return false;
    return slot < n->n_inputs && tracked(r, n->inputs[slot], t);
}

typedef bool (*rule_fn)(struct rb *r, const sg_node *n, struct track *out);

static bool same_rule(struct rb *r, const sg_node *n, struct track *out)
{
    return only_batched(r, n, 0, out);
}

/* Broadcasting: every batched input agrees on the (right-aligned) batch
 * position, and every other input has a 1 or nothing there. */
static bool broadcast_rule(struct rb *r, const sg_node *n, struct track *out)
{
    int rank = 0, axis = -1;
    int64_t dims[SG_MAX_RANK];
    int ranks[64];
    if (n->n_inputs > 64)
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct track t;
        ranks[i] = -1;
        if (!n->inputs[i])
            continue;
        if (tracked(r, n->inputs[i], &t))
            ranks[i] = t.rank;
        else if (in_down(r, n->inputs[i]) || !static_dims(n->inputs[i], dims, &ranks[i]))
            return false;
        if (ranks[i] > rank)
            rank = ranks[i];
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct track t;
        if (n->inputs[i] && tracked(r, n->inputs[i], &t)) {
            int a = t.axis + (rank - t.rank);
            if (axis >= 0 && a != axis)
                return false;
            axis = a;
        }
    }
    if (axis < 0)
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct track t;
        int rk;
        if (!n->inputs[i] || tracked(r, n->inputs[i], &t))
            continue;
        static_dims(n->inputs[i], dims, &rk);
        int at = axis - (rank - rk);
        if (at >= 0 && dims[at] != 1)
            return false;
    }
    out->axis = axis;
    out->rank = rank;
    return true;
}

/* Conv, ConvTranspose and the pools: the batch is axis 0 and stays there. */
static bool spatial_rule(struct rb *r, const sg_node *n, struct track *out)
{
    return only_batched(r, n, 0, out) && out->axis == 0;
}

static bool flatten_rule(struct rb *r, const sg_node *n, struct track *out)
{
    if (!only_batched(r, n, 0, out) || out->axis != 0)
        return false;
    int64_t a = sg_attr_int(n, "axis", 1);
    if (a < 0)
        a += out->rank;
    if (a < 1)
        return false;
    out->rank = 2;
    return true;
}

static bool gemm_rule(struct rb *r, const sg_node *n, struct track *out)
{
    if (!only_batched(r, n, 0, out) || out->axis != 0 || out->rank != 2 ||
        sg_attr_int(n, "transA", 0))
        return false;
    return true;
}

static bool matmul_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track a;
    int64_t dims[SG_MAX_RANK];
    int rb;
    if (!only_batched(r, n, 0, &a) || n->n_inputs < 2 || !n->inputs[1] ||
        !static_dims(n->inputs[1], dims, &rb) || a.rank < 2 || a.axis > a.rank - 2 || rb < 1)
        return false;
    if (rb == 1) {
        out->rank = a.rank - 1;
        out->axis = a.axis;
        return true;
    }
    out->rank = a.rank > rb ? a.rank : rb;
    out->axis = a.axis + (out->rank - a.rank);
    return true;
}

static bool transpose_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t;
    if (!only_batched(r, n, 0, &t))
        return false;
    const sg_attr *perm = sg_node_attr(n, "perm");
    out->rank = t.rank;
    if (!perm) {
        out->axis = t.rank - 1 - t.axis;
        return true;
    }
    if ((int)perm->n_ints != t.rank)
        return false;
    for (size_t i = 0; i < perm->n_ints; i++)
        if (perm->ints[i] == t.axis) {
            out->axis = (int)i;
            return true;
        }
    return false;
}

static bool reduce_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t;
    int64_t axes[SG_MAX_RANK];
    size_t k = 0;
    if (!only_batched(r, n, 0, &t) || !int_list(n, 1, "axes", axes, &k) || !k)
        return false; /* no axes: every axis reduced (or none: noop_with_empty_axes) */
    bool keep = sg_attr_int(n, "keepdims", 1) != 0;
    int below = 0;
    for (size_t i = 0; i < k; i++) {
        int a = norm_axis(axes[i], t.rank);
        if (a < 0 || a == t.axis)
            return false;
        below += a < t.axis;
    }
    out->axis = keep ? t.axis : t.axis - below;
    out->rank = keep ? t.rank : t.rank - (int)k;
    return true;
}

/* Concat and Split along another axis: every part keeps the batch. */
static bool concat_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t = {-1, -1};
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct track u;
        if (!n->inputs[i] || !tracked(r, n->inputs[i], &u) || (t.rank >= 0 && u.axis != t.axis) ||
            (t.rank >= 0 && u.rank != t.rank))
            return false;
        t = u;
    }
    if (t.rank < 0 || norm_axis(sg_attr_int(n, "axis", 0), t.rank) == t.axis)
        return false;
    *out = t;
    return true;
}

static bool split_rule(struct rb *r, const sg_node *n, struct track *out)
{
    return only_batched(r, n, 0, out) &&
           norm_axis(sg_attr_int(n, "axis", 0), out->rank) != out->axis;
}

/* Slice along other axes (its axes constant, or its starts, whose count
 * gives the default axes 0..n-1). */
static bool slice_rule(struct rb *r, const sg_node *n, struct track *out)
{
    int64_t axes[SG_MAX_RANK];
    size_t k = 0;
    if (!only_batched(r, n, 0, out))
        return false;
    if (n->n_inputs > 3 && n->inputs[3]) {
        if (!int_list(n, 3, NULL, axes, &k))
            return false;
    } else if (int_list(n, 1, NULL, axes, &k)) {
        for (size_t i = 0; i < k; i++)
            axes[i] = (int64_t)i;
    } else {
        return false;
    }
    for (size_t i = 0; i < k; i++)
        if (norm_axis(axes[i], out->rank) == out->axis || norm_axis(axes[i], out->rank) < 0)
            return false;
    return true;
}

/* Gather away from the batch axis of batched data, or with batched
 * indices into data that is not (an embedding lookup). */
static bool gather_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t;
    int64_t dims[SG_MAX_RANK];
    int rk;
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1])
        return false;
    if (only_batched(r, n, 1, &t)) {
        if (!static_dims(n->inputs[0], dims, &rk))
            return false;
        int a = norm_axis(sg_attr_int(n, "axis", 0), rk);
        if (a < 0)
            return false;
        out->rank = rk - 1 + t.rank;
        out->axis = a + t.axis;
        return true;
    }
    if (!only_batched(r, n, 0, &t) || !static_dims(n->inputs[1], dims, &rk))
        return false;
    int a = norm_axis(sg_attr_int(n, "axis", 0), t.rank);
    if (a < 0 || a == t.axis)
        return false;
    out->rank = t.rank - 1 + rk;
    out->axis = t.axis < a ? t.axis : t.axis - 1 + rk;
    return true;
}

static bool unsqueeze_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t;
    int64_t axes[SG_MAX_RANK];
    size_t k = 0;
    if (!only_batched(r, n, 0, &t) || !int_list(n, 1, "axes", axes, &k) || !k ||
        t.rank + (int)k > SG_MAX_RANK)
        return false;
    int rank = t.rank + (int)k;
    bool inserted[SG_MAX_RANK] = {false};
    for (size_t i = 0; i < k; i++) {
        int a = norm_axis(axes[i], rank);
        if (a < 0 || inserted[a])
            return false;
        inserted[a] = true;
    }
    /* The input's axes fill the output's positions that were not inserted,
     * in order. */
    for (int pos = 0, in = 0; pos < rank; pos++) {
        if (inserted[pos])
            continue;
        if (in++ == t.axis) {
            out->axis = pos;
            out->rank = rank;
            return true;
        }
    }
    return false;
}

static bool squeeze_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t;
    int64_t axes[SG_MAX_RANK];
    size_t k = 0;
    if (!only_batched(r, n, 0, &t) || !int_list(n, 1, "axes", axes, &k) || !k)
        return false; /* no axes: every 1 goes, maybe a batch of 1 */
    int below = 0;
    for (size_t i = 0; i < k; i++) {
        int a = norm_axis(axes[i], t.rank);
        if (a < 0 || a == t.axis)
            return false;
        below += a < t.axis;
    }
    out->axis = t.axis - below;
    out->rank = t.rank - (int)k;
    return true;
}

/* Pad with constant pads that are 0 on both sides of the batch axis. */
static bool pad_rule(struct rb *r, const sg_node *n, struct track *out)
{
    int64_t pads[2 * SG_MAX_RANK], axes[SG_MAX_RANK];
    size_t k = 0, na = 0;
    if (!only_batched(r, n, 0, out))
        return false;
    const sg_attr *a = sg_node_attr(n, "pads");
    if (a && a->n_ints <= 2 * SG_MAX_RANK) {
        memcpy(pads, a->ints, a->n_ints * sizeof *pads);
        k = a->n_ints;
    } else if (!int_list(n, 1, NULL, pads, &k)) {
        return false;
    }
    bool have_axes = n->n_inputs > 3 && n->inputs[3];
    if (have_axes && !int_list(n, 3, NULL, axes, &na))
        return false;
    if (!have_axes) {
        na = (size_t)out->rank;
        for (size_t i = 0; i < na; i++)
            axes[i] = (int64_t)i;
    }
    if (k != 2 * na)
        return false;
    for (size_t i = 0; i < na; i++)
        if (norm_axis(axes[i], out->rank) == out->axis && (pads[i] || pads[i + na]))
            return false;
    return true;
}

/* A Reshape whose constant shape keeps the batch first: the leading value
 * set-batch wrote (the new batch, or -1 for a symbolic one) or 0 (copied). */
static bool reshape_rule(struct rb *r, const sg_node *n, struct track *out)
{
    struct track t;
    int64_t vals[SG_MAX_RANK];
    size_t k = 0;
    if (!only_batched(r, n, 0, &t) || t.axis != 0 || !int_list(n, 1, NULL, vals, &k) || !k)
        return false;
    const struct sg_dim_spec *nb = r->in->batch;
    bool lead = (nb->kind == SG_DIM_VALUE && vals[0] == nb->value) ||
                (nb->kind != SG_DIM_VALUE && vals[0] == -1) ||
                (vals[0] == 0 && !sg_attr_int(n, "allowzero", 0));
    for (size_t i = 1; lead && i < k; i++)
        lead = vals[i] != -1 || (nb->kind == SG_DIM_VALUE);
    if (!lead)
        return false;
    out->axis = 0;
    out->rank = (int)k;
    return true;
}

static const struct {
    const char *op;
    rule_fn fn;
} rules[] = {
    /* the output has input 0's shape */
    {"Abs", same_rule},
    {"Acos", same_rule},
    {"Acosh", same_rule},
    {"Asin", same_rule},
    {"Asinh", same_rule},
    {"Atan", same_rule},
    {"Atanh", same_rule},
    {"BatchNormalization", same_rule},
    {"Cast", same_rule},
    {"CastLike", same_rule},
    {"Ceil", same_rule},
    {"Celu", same_rule},
    {"Clip", same_rule},
    {"Cos", same_rule},
    {"Cosh", same_rule},
    {"CumSum", same_rule},
    {"Dropout", same_rule},
    {"Elu", same_rule},
    {"Erf", same_rule},
    {"Exp", same_rule},
    {"Floor", same_rule},
    {"Gelu", same_rule},
    {"HardSigmoid", same_rule},
    {"HardSwish", same_rule},
    {"Hardmax", same_rule},
    {"Identity", same_rule},
    {"InstanceNormalization", same_rule},
    {"IsInf", same_rule},
    {"IsNaN", same_rule},
    {"LRN", same_rule},
    {"LayerNormalization", same_rule},
    {"LeakyRelu", same_rule},
    {"Log", same_rule},
    {"LogSoftmax", same_rule},
    {"LpNormalization", same_rule},
    {"MeanVarianceNormalization", same_rule},
    {"Mish", same_rule},
    {"Neg", same_rule},
    {"Not", same_rule},
    {"Reciprocal", same_rule},
    {"Relu", same_rule},
    {"Round", same_rule},
    {"Selu", same_rule},
    {"Shrink", same_rule},
    {"Sigmoid", same_rule},
    {"Sign", same_rule},
    {"Sin", same_rule},
    {"Sinh", same_rule},
    {"Softmax", same_rule},
    {"Softplus", same_rule},
    {"Softsign", same_rule},
    {"Sqrt", same_rule},
    {"Tan", same_rule},
    {"Tanh", same_rule},
    {"ThresholdedRelu", same_rule},
    /* numpy broadcasting */
    {"Add", broadcast_rule},
    {"And", broadcast_rule},
    {"BitShift", broadcast_rule},
    {"Div", broadcast_rule},
    {"Equal", broadcast_rule},
    {"Greater", broadcast_rule},
    {"GreaterOrEqual", broadcast_rule},
    {"Less", broadcast_rule},
    {"LessOrEqual", broadcast_rule},
    {"Max", broadcast_rule},
    {"Mean", broadcast_rule},
    {"Min", broadcast_rule},
    {"Mod", broadcast_rule},
    {"Mul", broadcast_rule},
    {"Or", broadcast_rule},
    {"PRelu", broadcast_rule},
    {"Pow", broadcast_rule},
    {"Sub", broadcast_rule},
    {"Sum", broadcast_rule},
    {"Where", broadcast_rule},
    {"Xor", broadcast_rule},
    /* the batch is axis 0 and stays there */
    {"AveragePool", spatial_rule},
    {"Conv", spatial_rule},
    {"ConvTranspose", spatial_rule},
    {"GlobalAveragePool", spatial_rule},
    {"GlobalLpPool", spatial_rule},
    {"GlobalMaxPool", spatial_rule},
    {"LpPool", spatial_rule},
    {"MaxPool", spatial_rule},
    /* layout changes */
    {"Concat", concat_rule},
    {"Flatten", flatten_rule},
    {"Gather", gather_rule},
    {"Gemm", gemm_rule},
    {"MatMul", matmul_rule},
    {"Pad", pad_rule},
    {"ReduceL1", reduce_rule},
    {"ReduceL2", reduce_rule},
    {"ReduceLogSum", reduce_rule},
    {"ReduceLogSumExp", reduce_rule},
    {"ReduceMax", reduce_rule},
    {"ReduceMean", reduce_rule},
    {"ReduceMin", reduce_rule},
    {"ReduceProd", reduce_rule},
    {"ReduceSum", reduce_rule},
    {"ReduceSumSquare", reduce_rule},
    {"Reshape", reshape_rule},
    {"Slice", slice_rule},
    {"Split", split_rule},
    {"Squeeze", squeeze_rule},
    {"Transpose", transpose_rule},
    {"Unsqueeze", unsqueeze_rule},
};

static rule_fn rule_for(const sg_node *n)
{
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return NULL;
    size_t lo = 0, hi = sizeof rules / sizeof rules[0];
    /* The groups are sorted within themselves only: a linear scan. */
    for (; lo < hi; lo++)
        if (strcmp(rules[lo].op, n->op_type) == 0)
            return rules[lo].fn;
    return NULL;
}

/* How many outputs of n a rule's answer stands for: every output of a
 * Split, the first of anything else (Dropout's mask, MaxPool's indices
 * and BatchNormalization's training outputs are not followed). */
static uint32_t followed_outputs(const sg_node *n)
{
    return strcmp(n->op_type, "Split") == 0 ? n->n_outputs : (n->n_outputs ? 1 : 0);
}

static sg_status follow(struct rb *r, sg_graph *g)
{
    sg_node **order = sg_malloc((g->n_nodes + 1) * sizeof *order);
    if (!order)
        return sg_diag_set(r->diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_graph_toposort(g, order, r->diag);
    for (uint32_t i = 0; i < g->n_nodes && !st; i++) {
        const sg_node *n = order[i];
        rule_fn fn = rule_for(n);
        struct track t;
        if (!fn || !fn(r, n, &t) || t.rank > SG_MAX_RANK || t.axis >= t.rank)
            continue;
        for (uint32_t o = 0; o < followed_outputs(n) && !st; o++)
            if (n->outputs[o] && sg__strmap_put(&r->tracks, n->outputs[o]->name, encode(t)))
                st = sg_diag_set(r->diag, SG_ENOMEM, "out of memory");
    }
    sg_free(order);
    return st;
}

static bool is_old_dim(const struct sg__rebatch *in, const sg_dim *d)
{
    if (d->kind == SG_DIM_UNSET)
        return true;
    if (d->kind == SG_DIM_VALUE) {
        for (size_t i = 0; i < in->n_old; i++)
            if (in->old[i] == d->value)
                return true;
        return false;
    }
    for (size_t i = 0; i < in->n_params; i++)
        if (d->param && strcmp(in->old_params[i], d->param) == 0)
            return true;
    return false;
}

static void set_new(sg_dim *d, const struct sg_dim_spec *nb, const char *param)
{
    d->kind = nb->kind == SG_DIM_VALUE ? SG_DIM_VALUE : SG_DIM_PARAM;
    d->value = nb->kind == SG_DIM_VALUE ? nb->value : 0;
    d->param = nb->kind == SG_DIM_VALUE ? NULL : param;
}

static sg_status update_value(struct rb *r, sg_value *v)
{
    const sg_type *t = v->type;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape || (v->flags & SG_VALUE_INPUT) ||
        !in_down(r, v))
        return SG_OK; /* inputs carry the shapes just set */
    sg_model *m = v->graph->model;
    const struct sg_dim_spec *nb = r->in->batch;
    const char *param = nb->kind == SG_DIM_VALUE ? NULL : sg_model_strdup(m, nb->param);
    sg_type *nt = sg_type_clone(m, t);
    if (!nt || (nb->kind != SG_DIM_VALUE && !param))
        return sg_diag_set(r->diag, SG_ENOMEM, "out of memory");
    struct track tr;
    bool proven = tracked(r, v, &tr) && (int)t->shape->rank == tr.rank &&
                  is_old_dim(r->in, &t->shape->dims[tr.axis]);
    bool changed = false;
    for (uint32_t i = 0; i < nt->shape->rank; i++) {
        sg_dim *d = &nt->shape->dims[i];
        if (proven ? (int)i == tr.axis : d->kind == SG_DIM_PARAM && is_old_dim(r->in, d)) {
            set_new(d, nb, param);
            changed = true;
        } else if (!proven && d->kind == SG_DIM_VALUE) {
            d->kind = SG_DIM_UNSET;
            d->value = 0;
            changed = true;
        }
    }
    if (!changed)
        return SG_OK;
    char before[256], after[256];
    sg_type_format(t, before, sizeof before);
    sg_type_format(nt, after, sizeof after);
    if (strcmp(before, after) == 0)
        return SG_OK;
    sg_value_set_type(v, nt);
    if (proven)
        sg_report_change(r->rep, "shape rebatched", "%s: %s -> %s", v->name, before, after);
    else
        sg_report_change(r->rep, "shape not proven: numbers cleared", "%s: %s -> %s", v->name,
                         before, after);
    return SG_OK;
}

static sg_status update_graph(sg_graph *g, void *ctx)
{
    struct rb *r = ctx;
    sg_status st;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if ((st = update_value(r, g->outputs[i])))
            return st;
    for (uint32_t i = 0; i < g->n_value_info; i++)
        if ((st = update_value(r, g->value_info[i])))
            return st;
    return SG_OK;
}

sg_status sg__rebatch_shapes(sg_graph *g, const struct sg__rebatch *in, struct sg_pass_report *rep,
                             struct sg_diag *diag)
{
    struct rb r = {.in = in, .rep = rep, .diag = diag};
    sg_status st = SG_OK;
    for (size_t i = 0; i < in->n && !st; i++) {
        const sg_type *t = in->inputs[i]->type;
        struct track tr = {(int)in->axes[i], (int)t->shape->rank};
        if (sg__strmap_put(&r.tracks, in->inputs[i]->name, encode(tr)))
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    if (!st)
        st = follow(&r, g);
    if (!st)
        st = sg__walk_graphs(g, update_graph, &r);
    sg__strmap_free(&r.tracks);
    return st;
}
