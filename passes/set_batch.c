/*
 * set_batch.c - `set-batch`: set the batch dimension (axis 0 by default) of
 * all or the named main graph inputs, and rewrite the constant shape
 * tensors of Reshape, Expand and ConstantOfShape whose leading value is the
 * old batch. Raising the batch from 4 to 1024 took a speech model from 174
 * to 1,869 inferences per second on Ascend (BACKGROUND.md).
 *
 * A rewritten shape is proven safe when the Reshape/Expand data input is
 * computed from a rebatched input; ConstantOfShape has no data input, so
 * its rewrite is listed for a check by hand. Every hard-coded shape it could
 * not prove safe is listed in the report and left unchanged: a leading old
 * batch on data that does not depend on the inputs, the old batch in
 * another position or as a multiple (Reshape to [B*T, C]), Tile repeats,
 * Slice bounds and Resize sizes holding the old batch, and leading dims
 * when the old batch was symbolic.
 *
 * Keeps intact: element types and ranks, other dims of the inputs, shared
 * constants (a rewritten shape gets its own initializer; the old one goes
 * only when nothing reads it any more). Recorded shapes downstream of the
 * inputs lose their dims, as in set-input-shape.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum { OPT_BATCH, OPT_INPUTS, OPT_AXIS, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_BATCH] = {"batch", SG_OPT_DIM, NULL, "the new batch: a positive integer or a name"},
    [OPT_INPUTS] = {"inputs", SG_OPT_STRINGS, NULL, "inputs to change [default: all]"},
    [OPT_AXIS] = {"axis", SG_OPT_INT, "0", "the batch axis of the inputs", 0, 63},
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
    bool symbolic_old; /* some input had a symbolic or unknown batch */
    struct sg__ptrset down;
    struct sg__strmap rewritten; /* per graph: old const name -> new value */
    sg_graph *cur;
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
    sg_tensor *t = sg__const_tensor(v);
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

static void check_by_hand(struct ctx *c, const sg_node *n, uint32_t slot, const int64_t *v,
                          size_t count, const char *why)
{
    char shape[160];
    fmt_shape(v, count, shape, sizeof shape);
    sg_report_info(c->rep, "hard-coded shape not proven safe, left unchanged",
                   "%s (%s) input %u = %s: %s", sg__node_label(n), n->op_type, slot, shape, why);
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

static sg_status shape_node(struct ctx *c, sg_node *n, uint32_t slot, bool has_data)
{
    if (slot >= n->n_inputs || !n->inputs[slot])
        return SG_OK;
    size_t count = 0;
    int64_t vals[MAX_SHAPE_INTS];
    if (!read_ints(c, n->inputs[slot], vals, &count) || !count)
        return SG_OK; /* computed at run time: follows the inputs */
    const struct sg_dim_spec *nb = &c->opts[OPT_BATCH].dim;
    bool data_down = has_data && n->inputs[0] && sg__ptrset_has(&c->down, n->inputs[0]);
    sg_status st = SG_OK;
    int64_t lead = vals[0];
    if (is_old(c, lead)) {
        if (has_data && !data_down) {
            check_by_hand(c, n, slot, vals, count,
                          "leading old batch, but the data does not come from a rebatched input");
        } else if (nb->kind == SG_DIM_VALUE) {
            st = rewrite(c, n, slot, vals, count, nb->value, has_data);
        } else if (strcmp(n->op_type, "Reshape") == 0) {
            bool other_minus = false;
            for (size_t i = 1; i < count; i++)
                other_minus |= vals[i] == -1;
            if (other_minus)
                check_by_hand(c, n, slot, vals, count,
                              "symbolic batch and another -1 in the shape");
            else
                st = rewrite(c, n, slot, vals, count, -1, true);
        } else {
            check_by_hand(c, n, slot, vals, count, "the new batch is symbolic");
        }
        if (!st && contains_old(c, vals, count, true))
            check_by_hand(c, n, slot, vals, count, "the old batch also appears past position 0");
    } else if (multiple_of_old(c, lead)) {
        check_by_hand(c, n, slot, vals, count, "leading value is a multiple of the old batch");
    } else if (contains_old(c, vals, count, true)) {
        check_by_hand(c, n, slot, vals, count, "the old batch appears past position 0");
    } else if (c->symbolic_old && lead > 0 && (!has_data || data_down)) {
        check_by_hand(c, n, slot, vals, count,
                      "hard-coded leading dim while the old batch was symbolic");
    }
    return st;
}

static sg_status other_consts(struct ctx *c, sg_node *n, uint32_t from, uint32_t to)
{
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
            st = other_consts(c, n, 1, 2);
        else if (!strcmp(op, "Resize"))
            st = other_consts(c, n, 3, 3);
    }
    sg__strmap_free(&c->rewritten);
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    const struct sg_dim_spec *nb = &opts[OPT_BATCH].dim;
    if (!opts[OPT_BATCH].present)
        return sg_diag_set(diag, SG_EINVAL, "needs batch=N");
    sg_graph *g = m->graph;
    if (!g)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    uint32_t axis = (uint32_t)opts[OPT_AXIS].i;
    const struct sg_opt_value *names = &opts[OPT_INPUTS];
    for (size_t i = 0; i < names->n; i++) {
        sg_value *v = sg_graph_value(g, names->strs[i]);
        if (!v || !(v->flags & SG_VALUE_INPUT) || v->init)
            return sg_diag_set(diag, SG_ENOTFOUND, "the model has no input '%s'", names->strs[i]);
        if (!v->type || !v->type->shape || v->type->shape->rank <= axis)
            return sg_diag_set(diag, SG_ESHAPE, "input '%s' has no known dim %u", v->name, axis);
    }
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag, .m = m};
    sg_value **changed = sg_malloc((g->n_inputs + 1) * sizeof *changed);
    if (!changed)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    size_t n_changed = 0;
    sg_status st = SG_OK;
    for (uint32_t i = 0; i < g->n_inputs && !st; i++) {
        sg_value *v = g->inputs[i];
        if (v->init || (names->present && !sg__opt_has(names, v->name)))
            continue;
        const sg_type *t = v->type;
        if (!t || t->kind != SG_TYPE_TENSOR || !t->shape || t->shape->rank <= axis) {
            sg_report_info(rep, "input skipped", "%s (no known dim %u)", v->name, axis);
            continue;
        }
        const sg_dim *d = &t->shape->dims[axis];
        if (d->kind == SG_DIM_VALUE) {
            bool seen = is_old(&c, d->value);
            if (!seen && c.n_old < MAX_OLD)
                c.old[c.n_old++] = d->value;
        } else {
            c.symbolic_old = true;
        }
        if ((d->kind == SG_DIM_VALUE && nb->kind == SG_DIM_VALUE && d->value == nb->value) ||
            (d->kind == SG_DIM_PARAM && nb->kind == SG_DIM_PARAM &&
             strcmp(d->param, nb->param) == 0)) {
            sg_report_info(rep, "unchanged", "%s", v->name);
            continue;
        }
        char before[256], after[256];
        sg_type_format(t, before, sizeof before);
        sg_type *nt = sg_type_clone(m, t);
        const char *param = nb->kind == SG_DIM_PARAM ? sg_model_strdup(m, nb->param) : NULL;
        if (!nt || (nb->kind == SG_DIM_PARAM && !param)) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            break;
        }
        sg_dim *nd = &nt->shape->dims[axis];
        nd->kind = nb->kind;
        nd->value = nb->kind == SG_DIM_VALUE ? nb->value : 0;
        nd->param = param;
        sg_value_set_type(v, nt);
        changed[n_changed++] = v;
        sg_report_change(rep, "input batch set", "%s: %s -> %s", v->name, before,
                         sg_type_format(nt, after, sizeof after));
    }
    if (!st && n_changed) {
        if (sg__mark_downstream(changed, n_changed, &c.down))
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        if (!st)
            st = sg__walk_graphs(g, run_graph, &c);
        if (!st)
            st = sg__clear_shapes(g, &c.down, rep, diag);
    }
    sg__ptrset_free(&c.down);
    sg__strmap_free(&c.rewritten);
    sg_free(changed);
    return st;
}

const struct sg_pass sg_pass_set_batch = {
    .name = "set-batch",
    .summary = "set the batch of the inputs and rewrite constant shapes that hold it",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
