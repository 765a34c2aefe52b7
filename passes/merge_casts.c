/*
 * merge_casts.c - `merge-casts`: remove Casts to the type their input
 * already has, remove round trips Cast(Cast(x, A), type of x) when A holds
 * every value of x's type exactly (the 4-bit and float8 types included),
 * and shorten Cast(Cast(x, A), B) to
 * Cast(x, B) under the same condition (the intermediate rounding is then a
 * no-op, so the result is the same).
 *
 * Keeps intact: results (only exact intermediate types are skipped), graph
 * input and output names (see sg__bypass_node), Casts whose input type is
 * unknown. Types are taken from the file or inferred (sg_graph_infer_dtypes).
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <string.h>

/* Can type `to` represent every value of type `from` exactly? */
static bool exact(int32_t from, int32_t to)
{
    if (from == to)
        return true;
    switch (from) {
    case SG_DTYPE_BOOL:
        return to != SG_DTYPE_STRING && sg_dtype_valid(to) && to != SG_DTYPE_UNDEFINED;
    case SG_DTYPE_UINT8:
        return to == SG_DTYPE_INT16 || to == SG_DTYPE_UINT16 || to == SG_DTYPE_INT32 ||
               to == SG_DTYPE_UINT32 || to == SG_DTYPE_INT64 || to == SG_DTYPE_UINT64 ||
               to == SG_DTYPE_FLOAT16 || to == SG_DTYPE_BFLOAT16 || to == SG_DTYPE_FLOAT ||
               to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_INT8:
        return to == SG_DTYPE_INT16 || to == SG_DTYPE_INT32 || to == SG_DTYPE_INT64 ||
               to == SG_DTYPE_FLOAT16 || to == SG_DTYPE_BFLOAT16 || to == SG_DTYPE_FLOAT ||
               to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_UINT16:
        return to == SG_DTYPE_INT32 || to == SG_DTYPE_UINT32 || to == SG_DTYPE_INT64 ||
               to == SG_DTYPE_UINT64 || to == SG_DTYPE_FLOAT || to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_INT16:
        return to == SG_DTYPE_INT32 || to == SG_DTYPE_INT64 || to == SG_DTYPE_FLOAT ||
               to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_UINT32:
        return to == SG_DTYPE_INT64 || to == SG_DTYPE_UINT64 || to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_INT32:
        return to == SG_DTYPE_INT64 || to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16:
        return to == SG_DTYPE_FLOAT || to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_FLOAT:
        return to == SG_DTYPE_DOUBLE;
    case SG_DTYPE_UINT4:
        return exact(SG_DTYPE_UINT8, to) || to == SG_DTYPE_UINT8 || to == SG_DTYPE_INT8;
    case SG_DTYPE_INT4:
        return exact(SG_DTYPE_INT8, to) || to == SG_DTYPE_INT8;
    case SG_DTYPE_FLOAT8E4M3FN:
    case SG_DTYPE_FLOAT8E4M3FNUZ:
    case SG_DTYPE_FLOAT8E5M2:
    case SG_DTYPE_FLOAT8E5M2FNUZ:
    case SG_DTYPE_FLOAT4E2M1:
        /* their exponents and 1-3 mantissa bits fit float16 and bfloat16
         * (subnormals, +-Inf and NaN included; the way back is exact with or
         * without `saturate`, a value that came from the type being in it) */
        return to == SG_DTYPE_FLOAT16 || to == SG_DTYPE_BFLOAT16 || to == SG_DTYPE_FLOAT ||
               to == SG_DTYPE_DOUBLE;
    default:
        return false;
    }
}

static bool is_cast(const sg_node *n)
{
    return (!n->domain || !*n->domain) && strcmp(n->op_type, "Cast") == 0 && n->n_inputs >= 1 &&
           n->inputs[0] && n->n_outputs == 1 && n->outputs[0] && sg_attr_int(n, "to", 0) != 0;
}

struct ctx {
    struct sg_pass_report *rep;
    struct sg_diag *diag;
};

/* Remove Cast c0 once nothing reads its result. */
static sg_status drop_if_unused(struct ctx *c, sg_node *c0)
{
    sg_value *x = c0->outputs[0];
    if (c0->dead || x->n_uses || (x->flags & SG_VALUE_OUTPUT))
        return SG_OK;
    const char *label = sg__node_label(c0);
    sg_status st = sg_node_remove(c0, c->diag);
    if (!st)
        sg_report_change(c->rep, "unused Cast removed", "%s", label);
    return st;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    if (!g->n_nodes)
        return SG_OK;
    uint32_t total = g->n_nodes;
    sg_node **order = sg_malloc(total * sizeof *order);
    if (!order)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_graph_toposort(g, order, c->diag);
    for (uint32_t k = 0; !st && k < total; k++) {
        sg_node *n = order[k];
        if (n->dead || !is_cast(n))
            continue;
        int32_t to = (int32_t)sg_attr_int(n, "to", 0);
        sg_value *x = n->inputs[0];
        const char *label = sg__node_label(n);
        sg_node *c0 = x->producer;
        if (c0 && is_cast(c0) && !(x->flags & SG_VALUE_OUTPUT)) {
            sg_value *x0 = c0->inputs[0];
            int32_t s0 = sg_value_dtype(x0);
            int32_t a = (int32_t)sg_attr_int(c0, "to", 0);
            if (s0 && exact(s0, a)) {
                if ((st = sg_node_set_input(n, 0, x0)))
                    break;
                if (s0 != to)
                    sg_report_change(c->rep, "Cast chain shortened", "%s", label);
                if ((st = drop_if_unused(c, c0)))
                    break;
                x = x0;
            }
        }
        if (sg_value_dtype(x) == to) {
            bool kept;
            const char *why;
            if ((st = sg__bypass_node(n, &kept, &why, c->diag)))
                break;
            if (kept)
                sg_report_info(c->rep, "kept", "%s (%s)", label, why);
            else
                sg_report_change(c->rep, "no-op Cast removed", "%s", label);
        }
    }
    sg_free(order);
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    (void)opts;
    struct ctx c = {rep, diag};
    if (!m->graph)
        return SG_OK;
    sg_status st = sg_graph_infer_dtypes(m->graph, true, diag);
    return st ? st : sg__walk_graphs(m->graph, run_graph, &c);
}

const struct sg_pass sg_pass_merge_casts = {
    .name = "merge-casts",
    .summary = "remove no-op Casts and exact Cast round trips, shorten Cast chains",
    .run = run,
};
