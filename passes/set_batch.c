/*
 * set_batch.c - `set-batch`: set the batch dimension of all or the named
 * main graph inputs, and rewrite the constant shape tensors of Reshape,
 * Expand, ConstantOfShape and Resize whose leading value is the old batch.
 * Raising the batch from 4 to 1024 took a speech model from 174 to 1,869
 * inferences per second on Ascend (BACKGROUND.md).
 *
 * The batch axis: `axis=` when given; else, in each input, the position of
 * the symbolic dim the inputs share (Silero VAD's `batch` is axis 0 of
 * `input` and axis 1 of `state`; an input without it is left, reported);
 * else of a symbolic dim named like a batch ("batch", "batch_size", "N":
 * [seq, batch, d]); else axis 0, which is only a guess: when the inputs
 * disagree there (x: 1, state: 2) the batch is not known and the model
 * fails.
 *
 * A hard-coded shape is rewritten when that is proven right: a leading old
 * batch in the shape of a Reshape/Expand/Resize whose data carries a
 * rebatched input. Every other hard-coded shape that may hold the batch is
 * "not proven safe": a leading old batch on data that carries no input (a
 * batch-sized constant), a leading value other than the batch on data that
 * carries one (a Reshape merging or dropping the batch, or one traced at a
 * fixed batch while the inputs said it was free), the old batch as a
 * multiple or past position 0, a ConstantOfShape of the old batch (no data
 * to prove it), Tile repeats, Slice bounds on axis 0 and Resize sizes
 * holding it (from opset 18 Resize's `axes` may put the batch past
 * position 0 of sizes, or leave it out: then sizes hold no batch). Each is listed in the report,
 * and then the model fails: a model set-batch knows may be wrong is never written as if it were
 * right. With force=true it is written anyway, the findings listed as warnings (optimize shows the
 * model's status as "warning" and exits 3). A model whose old batch was symbolic declared it free,
 * so a constant-shaped tensor (ConstantOfShape of constants) in it is left as it is.
 *
 * Keeps intact: element types and ranks, other dims of the inputs, shared
 * constants (a rewritten shape gets its own initializer; the old one goes
 * only when nothing reads it any more). Recorded shapes downstream are
 * brought up to date by sg__rebatch_shapes (the new batch where it provably
 * is, the numbers cleared elsewhere) and then recomputed by shape inference
 * (sg__recompute_shapes).
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum { OPT_BATCH, OPT_INPUTS, OPT_AXIS, OPT_FORCE, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_BATCH] = {"batch", SG_OPT_DIM, NULL, "the new batch: a positive integer or a name"},
    [OPT_INPUTS] = {"inputs", SG_OPT_STRINGS, NULL, "inputs to change [default: all]"},
    [OPT_AXIS] = {"axis", SG_OPT_INT, NULL,
                  "the batch axis of the inputs [default: where they share a symbolic dim, "
                  "else 0]",
                  0, 63},
    [OPT_FORCE] = {"force", SG_OPT_BOOL, "false",
                   "write the model even when a hard-coded shape is not proven safe (warnings)"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

#define MAX_OLD 16

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    sg_model *m;
    int64_t old[MAX_OLD]; /* numeric old batches */
    size_t n_old;
    const char *old_params[MAX_OLD]; /* symbolic old batches */
    size_t n_params;
    bool symbolic_old;           /* some input had a symbolic or unknown batch */
    struct sg__ptrset down;      /* downstream of the rebatched inputs */
    struct sg__ptrset data;      /* ... through data, not through Shape or Size */
    struct sg__strmap rewritten; /* per graph: old const name -> new value */
    size_t unsafe;               /* hard-coded shapes not proven safe */
    char first_unsafe[256];      /* the first of them, for the error */
};

static bool is_old(const struct ctx *c, int64_t v)
{
    for (size_t i = 0; i < c->n_old; i++)
        if (c->old[i] == v)
            return true;
    return false;
}

static void fmt_shape(const int64_t *v, size_t n, char *buf, size_t size)
{
    size_t pos = 0;
    pos += (size_t)snprintf(buf, size, "[");
    for (size_t i = 0; i < n && pos < size; i++) {
        if (i == 8 && n > 9) {
            pos += (size_t)snprintf(buf + pos, size - pos, ",...");
            break;
        }
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%" PRId64, i ? "," : "", v[i]);
    }
    if (pos < size)
        snprintf(buf + pos, size - pos, "]");
}

/* Shape constants longer than this are not shapes of a batched tensor. */
enum { MAX_SHAPE_INTS = 64 };

/* Reads a 1-D integer constant of at most MAX_SHAPE_INTS values into vals;
 * false when v is anything else. No allocation, so an allocation failure can
 * never be mistaken for "not a constant" and skip a rewrite silently. */
static bool read_ints(struct ctx *c, sg_value *v, int64_t vals[MAX_SHAPE_INTS], size_t *n)
{
    sg_tensor *t = sg_value_constant(v);
    if (!t || t->rank != 1 || (t->dtype != SG_DTYPE_INT64 && t->dtype != SG_DTYPE_INT32))
        return false;
    int64_t count = sg_tensor_numel(t);
    if (count < 0 || count > MAX_SHAPE_INTS)
        return false;
    for (int64_t i = 0; i < count; i++)
        if (!sg__tensor_get_i64(c->m, t, (size_t)i, &vals[i]))
            return false;
    *n = (size_t)count;
    return true;
}

/* A hard-coded shape that is not proven safe: the model fails unless
 * force=true, which writes it with a warning. */
static void check_by_hand(struct ctx *c, const sg_node *n, uint32_t slot, const int64_t *v,
                          size_t count, const char *why)
{
    char shape[160];
    fmt_shape(v, count, shape, sizeof shape);
    if (!c->unsafe++)
        snprintf(c->first_unsafe, sizeof c->first_unsafe, "%s (%s) input %u = %s: %s",
                 sg__node_label(n), n->op_type, slot, shape, why);
    if (c->opts[OPT_FORCE].b)
        sg_report_warn(c->rep, "hard-coded shape not proven safe", "%s (%s) input %u = %s: %s",
                       sg__node_label(n), n->op_type, slot, shape, why);
    else
        sg_report_info(c->rep, "hard-coded shape not proven safe", "%s (%s) input %u = %s: %s",
                       sg__node_label(n), n->op_type, slot, shape, why);
}

static bool contains_old(const struct ctx *c, const int64_t *v, size_t n, bool skip_first)
{
    for (size_t i = skip_first ? 1 : 0; i < n; i++)
        if (is_old(c, v[i]) && v[i] > 1)
            return true;
    return false;
}

static bool multiple_of_old(const struct ctx *c, int64_t v)
{
    for (size_t i = 0; i < c->n_old; i++)
        if (c->old[i] > 1 && v > c->old[i] && v % c->old[i] == 0)
            return true;
    return false;
}

/* Point input `slot` of n at a copy of its constant with vals[0] = lead. */
static sg_status rewrite(struct ctx *c, sg_node *n, uint32_t slot, int64_t *vals, size_t count,
                         int64_t lead, bool proven)
{
    sg_value *old = n->inputs[slot];
    sg_value *nv = sg__strmap_get(&c->rewritten, old->name);
    char before[160], after[160];
    fmt_shape(vals, count, before, sizeof before);
    vals[0] = lead;
    fmt_shape(vals, count, after, sizeof after);
    sg_status st;
    if (!nv) {
        char base[600];
        snprintf(base, sizeof base, "%s_batch", old->name);
        int64_t dims[1] = {(int64_t)count};
        if ((st = sg__add_const(n->graph, base, SG_DTYPE_INT64, dims, 1, vals, count * sizeof *vals,
                                &nv, c->diag)))
            return st;
        if (sg__strmap_put(&c->rewritten, old->name, nv))
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    if ((st = sg_node_set_input(n, slot, nv)))
        return sg_diag_set(c->diag, st, "out of memory");
    if (!old->n_uses && !(old->flags & (SG_VALUE_OUTPUT | SG_VALUE_INPUT))) {
        if (old->init && !old->producer) {
            sg_value_set_initializer(old, NULL);
            sg_value_remove(old);
        } else if (old->producer && strcmp(old->producer->op_type, "Constant") == 0) {
            if ((st = sg_node_remove(old->producer, c->diag)))
                return st;
        }
    }
    if (proven)
        sg_report_change(c->rep, "shape constant rewritten", "%s (%s) input %u: %s -> %s",
                         sg__node_label(n), n->op_type, slot, before, after);
    else
        sg_report_change(c->rep, "shape constant rewritten, check by hand",
                         "%s (%s) input %u: %s -> %s (no data input to prove it)",
                         sg__node_label(n), n->op_type, slot, before, after);
    return SG_OK;
}

static bool is_op(const sg_node *n, const char *op)
{
    return strcmp(n->op_type, op) == 0;
}

/* The constant shape in input `slot` of n (Reshape, Expand, Resize sizes:
 * data in input 0; ConstantOfShape: none). */
static sg_status shape_node(struct ctx *c, sg_node *n, uint32_t slot, bool has_data)
{
    if (slot >= n->n_inputs || !n->inputs[slot])
        return SG_OK;
    size_t count = 0;
    int64_t vals[MAX_SHAPE_INTS];
    if (!read_ints(c, n->inputs[slot], vals, &count) || !count)
        return SG_OK; /* computed at run time: follows the inputs */
    const struct sg_dim_spec *nb = &c->opts[OPT_BATCH].dim;
    bool batched = has_data && n->inputs[0] && sg__ptrset_has(&c->data, n->inputs[0]);
    bool reshape = is_op(n, "Reshape"), expand = is_op(n, "Expand");
    int64_t lead = vals[0];
    if (!has_data) {
        /* ConstantOfShape: a constant-shaped tensor. In a model whose batch
         * was free it cannot be batch-sized; otherwise a leading old batch
         * probably is the batch, but nothing proves it. */
        if (!c->n_old)
            return SG_OK;
        if (is_old(c, lead)) {
            check_by_hand(c, n, slot, vals, count,
                          "leading old batch, but no data input proves it is the batch");
            if (nb->kind == SG_DIM_VALUE)
                return rewrite(c, n, slot, vals, count, nb->value, false);
        } else if (contains_old(c, vals, count, true)) {
            check_by_hand(c, n, slot, vals, count, "the old batch appears past position 0");
        }
        return SG_OK;
    }
    if (!batched) {
        /* Data that carries no input: the same constant as before, which
         * breaks only where it was batch-sized (and broadcasting 1 keeps
         * working). */
        if (is_old(c, lead) && lead > 1)
            check_by_hand(c, n, slot, vals, count,
                          "leading old batch, but the data does not come from a rebatched input");
        return SG_OK;
    }
    sg_status st = SG_OK;
    if (is_old(c, lead)) {
        if (nb->kind == SG_DIM_VALUE) {
            st = rewrite(c, n, slot, vals, count, nb->value, true);
        } else if (reshape) {
            bool other_minus = false;
            for (size_t i = 1; i < count; i++)
                other_minus |= vals[i] == -1;
            if (other_minus)
                check_by_hand(c, n, slot, vals, count,
                              "symbolic batch and another -1 in the shape");
            else
                st = rewrite(c, n, slot, vals, count, -1, true);
        } else if (expand && lead == 1) {
            return SG_OK; /* broadcasts to any batch */
        } else {
            check_by_hand(c, n, slot, vals, count, "the new batch is symbolic");
        }
        if (!st && contains_old(c, vals, count, true))
            check_by_hand(c, n, slot, vals, count, "the old batch also appears past position 0");
        return st;
    }
    if ((reshape && lead == 0 && !sg_attr_int(n, "allowzero", 0)) || (expand && lead == 1) ||
        (reshape && lead == -1)) {
        /* copied, broadcast or inferred: follows the data */
        if (contains_old(c, vals, count, true))
            check_by_hand(c, n, slot, vals, count, "the old batch appears past position 0");
    } else if (multiple_of_old(c, lead)) {
        check_by_hand(c, n, slot, vals, count, "leading value is a multiple of the old batch");
    } else if (c->symbolic_old && !c->n_old) {
        check_by_hand(c, n, slot, vals, count,
                      "hard-coded leading dim on batched data while the inputs' batch was "
                      "symbolic (traced at one batch?)");
    } else {
        check_by_hand(c, n, slot, vals, count,
                      "hard-coded leading dim on batched data is not the old batch (the batch "
                      "would be merged, moved or dropped)");
    }
    return st;
}

/* Tile repeats and the like holding the old batch, on data that carries
 * a rebatched input. */
static sg_status other_consts(struct ctx *c, sg_node *n, uint32_t from, uint32_t to)
{
    if (!n->n_inputs || !n->inputs[0] || !sg__ptrset_has(&c->data, n->inputs[0]))
        return SG_OK;
    for (uint32_t slot = from; slot <= to && slot < n->n_inputs; slot++) {
        if (!n->inputs[slot])
            continue;
        size_t count = 0;
        int64_t vals[MAX_SHAPE_INTS];
        if (read_ints(c, n->inputs[slot], vals, &count) &&
            (contains_old(c, vals, count, false) || (count && multiple_of_old(c, vals[0]))))
            check_by_hand(c, n, slot, vals, count, "holds the old batch");
    }
    return SG_OK;
}

/* Slice bounds on axis 0 of batched data that are the old batch (x[:4]). */
static sg_status slice_node(struct ctx *c, sg_node *n)
{
    if (n->n_inputs < 3 || !n->inputs[0] || !sg__ptrset_has(&c->data, n->inputs[0]))
        return SG_OK;
    int64_t starts[MAX_SHAPE_INTS], ends[MAX_SHAPE_INTS], axes[MAX_SHAPE_INTS];
    size_t ns = 0, ne = 0, na = 0;
    if (!n->inputs[1] || !n->inputs[2] || !read_ints(c, n->inputs[1], starts, &ns) ||
        !read_ints(c, n->inputs[2], ends, &ne) || ns != ne)
        return SG_OK;
    bool have_axes = n->n_inputs > 3 && n->inputs[3] && read_ints(c, n->inputs[3], axes, &na);
    if (n->n_inputs > 3 && n->inputs[3] && (!have_axes || na != ns))
        return SG_OK;
    for (size_t i = 0; i < ns; i++) {
        int64_t axis = have_axes ? axes[i] : (int64_t)i;
        if (axis == 0 && (is_old(c, ends[i]) || (is_old(c, starts[i]) && starts[i] > 0)))
            check_by_hand(c, n, is_old(c, ends[i]) ? 2 : 1, is_old(c, ends[i]) ? ends : starts, ns,
                          "slices axis 0 at the old batch");
    }
    return SG_OK;
}

/* Resize sizes: from opset 18 an `axes` attribute says which axis each
 * value of sizes is for. The batch is resized only where axes names axis 0
 * (or -rank): first in axes, the leading value is the batch's as before;
 * later, that value is listed for checking by hand; absent, sizes hold no
 * batch (a leading old batch there is another axis's size). */
static sg_status resize_node(struct ctx *c, sg_node *n)
{
    const sg_attr *ax = sg_node_attr(n, "axes");
    if (!ax)
        return shape_node(c, n, 3, true);
    const sg_type *t = n->n_inputs && n->inputs[0] ? n->inputs[0]->type : NULL;
    int64_t rank = t && t->kind == SG_TYPE_TENSOR && t->shape ? (int64_t)t->shape->rank : -1;
    int64_t pos = -1;
    for (uint32_t i = 0; i < ax->n_ints && pos < 0; i++)
        if (ax->ints[i] == 0 || (rank > 0 && ax->ints[i] == -rank))
            pos = i;
    if (pos == 0)
        return shape_node(c, n, 3, true);
    size_t count = 0;
    int64_t vals[MAX_SHAPE_INTS];
    if (pos < 0 && rank < 0) {
        bool neg = false;
        for (uint32_t i = 0; i < ax->n_ints; i++)
            neg |= ax->ints[i] < 0;
        if (neg && n->n_inputs > 3 && n->inputs[3] && read_ints(c, n->inputs[3], vals, &count) &&
            contains_old(c, vals, count, false))
            check_by_hand(c, n, 3, vals, count,
                          "negative axes on an input of unknown rank: the batch may be among them");
        return SG_OK;
    }
    if (pos > 0 && n->inputs[0] && sg__ptrset_has(&c->data, n->inputs[0]) && n->n_inputs > 3 &&
        n->inputs[3] && read_ints(c, n->inputs[3], vals, &count) && (size_t)pos < count &&
        is_old(c, vals[pos]))
        check_by_hand(c, n, 3, vals, count, "axes put the batch past position 0 of sizes");
    return SG_OK;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    sg__strmap_free(&c->rewritten);
    sg_status st = SG_OK;
    for (sg_node *n = g->first; n && !st; n = n->next) { /* n itself is never removed */
        if (n->domain && *n->domain)
            continue;
        const char *op = n->op_type;
        if (!strcmp(op, "Reshape") || !strcmp(op, "Expand"))
            st = shape_node(c, n, 1, true);
        else if (!strcmp(op, "ConstantOfShape"))
            st = shape_node(c, n, 0, false);
        else if (!strcmp(op, "Tile"))
            st = other_consts(c, n, 1, 1);
        else if (!strcmp(op, "Slice"))
            st = slice_node(c, n);
        else if (!strcmp(op, "Resize"))
            st = resize_node(c, n);
    }
    sg__strmap_free(&c->rewritten);
    return st;
}

/* The inputs set-batch may change: named by inputs= (all when absent),
 * not initializers, tensors of known rank. */
static bool candidate(const struct sg_opt_value *names, const sg_value *v)
{
    const sg_type *t = v->type;
    return !v->init && (!names->present || sg__opt_has(names, v->name)) && t &&
           t->kind == SG_TYPE_TENSOR && t->shape;
}

static int param_at(const sg_type *t, const char *param)
{
    for (uint32_t k = 0; k < t->shape->rank; k++)
        if (t->shape->dims[k].kind == SG_DIM_PARAM && strcmp(t->shape->dims[k].param, param) == 0)
            return (int)k;
    return -1;
}

/* A symbolic dim named as exporters name the batch: "batch",
 * "batch_size", "N", "B", "bs"... */
static bool batch_named(const char *p)
{
    static const char *const exact[] = {"N", "B", "n", "b", "bs", "BS", "nb"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(p, exact[i]) == 0)
            return true;
    return strcasestr(p, "batch") != NULL;
}

/*
 * The batch axis of each main graph input into axes[] (-1: not changed):
 * axis= when given, else the position of the symbolic dim most inputs share
 * (at least two; ties go to the one at axis 0 in more inputs), else of a
 * symbolic dim named like a batch ("batch", "batch_size", "N"), else 0.
 * *guess is set when axis 0 was a guess that the inputs contradict (they
 * disagree at axis 0).
 */
static sg_status batch_axes(struct ctx *c, sg_graph *g, int *axes, bool *guess)
{
    const struct sg_opt_value *names = &c->opts[OPT_INPUTS];
    *guess = false;
    if (c->opts[OPT_AXIS].given) {
        int axis = (int)c->opts[OPT_AXIS].i;
        for (uint32_t i = 0; i < g->n_inputs; i++) {
            sg_value *v = g->inputs[i];
            axes[i] = -1;
            if (!candidate(names, v) && !v->init &&
                (!names->present || sg__opt_has(names, v->name)))
                sg_report_info(c->rep, "input skipped", "%s (rank unknown)", v->name);
            else if (candidate(names, v) && (int)v->type->shape->rank <= axis)
                sg_report_info(c->rep, "input skipped", "%s (no dim %d)", v->name, axis);
            else if (candidate(names, v))
                axes[i] = axis;
        }
        return SG_OK;
    }
    /* The symbolic dims, each counted once per input. */
    enum { MAX_PARAMS = 64 };
    const char *params[MAX_PARAMS];
    size_t count[MAX_PARAMS], lead[MAX_PARAMS], n_params = 0;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        sg_value *v = g->inputs[i];
        if (!candidate(names, v))
            continue;
        for (uint32_t k = 0; k < v->type->shape->rank; k++) {
            const sg_dim *d = &v->type->shape->dims[k];
            if (d->kind != SG_DIM_PARAM || param_at(v->type, d->param) != (int)k)
                continue;
            size_t p = 0;
            while (p < n_params && strcmp(params[p], d->param) != 0)
                p++;
            if (p == n_params) {
                if (n_params == MAX_PARAMS)
                    continue;
                params[n_params] = d->param;
                count[n_params] = lead[n_params] = 0;
                n_params++;
            }
            count[p]++;
            lead[p] += k == 0;
        }
    }
    size_t best = n_params;
    for (size_t p = 0; p < n_params; p++)
        if (count[p] >= 2 && (best == n_params || count[p] > count[best] ||
                              (count[p] == count[best] && lead[p] > lead[best])))
            best = p;
    const char *how = "the symbolic dim '%s' the inputs share";
    for (size_t p = 0; best == n_params && p < n_params; p++)
        if (batch_named(params[p])) {
            best = p;
            how = "the symbolic dim named '%s'";
        }
    const sg_dim *first = NULL;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        sg_value *v = g->inputs[i];
        axes[i] = -1;
        if (!candidate(names, v)) {
            if (!v->init && (!names->present || sg__opt_has(names, v->name)))
                sg_report_info(c->rep, "input skipped", "%s (rank unknown)", v->name);
            continue;
        }
        if (best < n_params) {
            axes[i] = param_at(v->type, params[best]);
            if (axes[i] < 0)
                sg_report_info(c->rep, "input skipped", "%s (no dim '%s')", v->name, params[best]);
            continue;
        }
        if (!v->type->shape->rank) {
            sg_report_info(c->rep, "input skipped", "%s (a scalar)", v->name);
            continue;
        }
        axes[i] = 0;
        const sg_dim *d = &v->type->shape->dims[0];
        if (!first)
            first = d;
        else if (first->kind != d->kind || (d->kind == SG_DIM_VALUE && d->value != first->value) ||
                 (d->kind == SG_DIM_PARAM && strcmp(d->param, first->param) != 0) ||
                 d->kind == SG_DIM_UNSET)
            *guess = true;
    }
    if (best < n_params)
        sg_report_info(c->rep, "batch axis", how, params[best]);
    return SG_OK;
}

static sg_status set_input(struct ctx *c, sg_value *v, uint32_t axis, bool *changed)
{
    const struct sg_dim_spec *nb = &c->opts[OPT_BATCH].dim;
    const sg_type *t = v->type;
    const sg_dim *d = &t->shape->dims[axis];
    *changed = false;
    if (d->kind == SG_DIM_VALUE) {
        if (!is_old(c, d->value) && c->n_old < MAX_OLD)
            c->old[c->n_old++] = d->value;
    } else {
        c->symbolic_old = true;
        bool seen = false;
        for (size_t i = 0; d->kind == SG_DIM_PARAM && i < c->n_params; i++)
            seen |= strcmp(c->old_params[i], d->param) == 0;
        if (d->kind == SG_DIM_PARAM && !seen && c->n_params < MAX_OLD)
            c->old_params[c->n_params++] = d->param;
    }
    if ((d->kind == SG_DIM_VALUE && nb->kind == SG_DIM_VALUE && d->value == nb->value) ||
        (d->kind == SG_DIM_PARAM && nb->kind == SG_DIM_PARAM && strcmp(d->param, nb->param) == 0)) {
        sg_report_info(c->rep, "unchanged", "%s", v->name);
        return SG_OK;
    }
    char before[256], after[256];
    sg_type_format(t, before, sizeof before);
    sg_type *nt = sg_type_clone(c->m, t);
    const char *param = nb->kind == SG_DIM_PARAM ? sg_model_strdup(c->m, nb->param) : NULL;
    if (!nt || (nb->kind == SG_DIM_PARAM && !param))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_dim *nd = &nt->shape->dims[axis];
    nd->kind = nb->kind;
    nd->value = nb->kind == SG_DIM_VALUE ? nb->value : 0;
    nd->param = param;
    sg_value_set_type(v, nt);
    sg_report_change(c->rep, "input batch set", "%s: %s -> %s", v->name, before,
                     sg_type_format(nt, after, sizeof after));
    *changed = true;
    return SG_OK;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    if (!opts[OPT_BATCH].present)
        return sg_diag_set(diag, SG_EINVAL, "needs batch=N");
    sg_graph *g = m->graph;
    if (!g)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    const struct sg_opt_value *names = &opts[OPT_INPUTS];
    int axis = opts[OPT_AXIS].given ? (int)opts[OPT_AXIS].i : -1;
    for (size_t i = 0; i < names->n; i++) {
        sg_value *v = sg_graph_value(g, names->strs[i]);
        if (!v || !(v->flags & SG_VALUE_INPUT) || v->init)
            return sg_diag_set(diag, SG_ENOTFOUND, "the model has no input '%s'", names->strs[i]);
        if (!v->type || !v->type->shape || (axis >= 0 && (int)v->type->shape->rank <= axis))
            return sg_diag_set(diag, SG_ESHAPE, "input '%s' has no known dim %d", v->name,
                               axis < 0 ? 0 : axis);
    }
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag, .m = m};
    bool force = opts[OPT_FORCE].b, guess = false;
    int *axes = sg_malloc((g->n_inputs + 1) * sizeof *axes);
    sg_value **changed = sg_malloc((g->n_inputs + 1) * sizeof *changed);
    uint32_t *changed_axes = sg_malloc((g->n_inputs + 1) * sizeof *changed_axes);
    sg_status st = SG_OK;
    size_t n_changed = 0;
    if (!axes || !changed || !changed_axes) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = batch_axes(&c, g, axes, &guess)))
        goto out;
    if (guess && !force) {
        st = sg_diag_set(diag, SG_EINVAL,
                         "the inputs share no symbolic dim and disagree at axis 0, so which axis "
                         "is the batch is not known: give axis= (and inputs=), or force=true to "
                         "take axis 0 of every input");
        goto out;
    }
    if (guess)
        sg_report_warn(rep, "batch axis guessed",
                       "axis 0 of every input, though the inputs disagree there");
    for (uint32_t i = 0; i < g->n_inputs && !st; i++) {
        bool ch;
        if (axes[i] < 0 || (st = set_input(&c, g->inputs[i], (uint32_t)axes[i], &ch)) || !ch)
            continue;
        changed_axes[n_changed] = (uint32_t)axes[i];
        changed[n_changed++] = g->inputs[i];
    }
    if (st || !n_changed)
        goto out;
    if (sg__mark_downstream(changed, n_changed, &c.down) ||
        sg__mark_downstream_data(changed, n_changed, &c.data)) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = sg__walk_graphs(g, run_graph, &c)))
        goto out;
    if (c.unsafe && !force) {
        st = sg_diag_set(diag, SG_EINVAL,
                         "%zu hard-coded shape%s not proven safe for the new batch (listed in "
                         "the report; the first: %s): the model may not run or may compute "
                         "something else; force=true writes it anyway, with warnings",
                         c.unsafe, c.unsafe == 1 ? "" : "s", c.first_unsafe);
        goto out;
    }
    /* The recorded shapes downstream: the proven ones rebatched and the
     * others' numbers cleared, then all recomputed by shape inference. */
    struct sg__rebatch rb = {changed, changed_axes, n_changed,    &opts[OPT_BATCH].dim,
                             c.old,   c.n_old,      c.old_params, c.n_params,
                             &c.down};
    st = sg__rebatch_shapes(g, &rb, rep, diag);
    if (!st)
        st = sg__recompute_shapes(m, rep, diag);
out:
    sg__ptrset_free(&c.down);
    sg__ptrset_free(&c.data);
    sg__strmap_free(&c.rewritten);
    sg_free(axes);
    sg_free(changed);
    sg_free(changed_axes);
    return st;
}

const struct sg_pass sg_pass_set_batch = {
    .name = "set-batch",
    .summary = "set the batch of the inputs and rewrite constant shapes that hold it",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
