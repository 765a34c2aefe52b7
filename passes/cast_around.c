/*
 * cast_around.c - `cast-around`: wrap nodes of chosen op types (default
 * Expand) as Cast(to) -> node -> Cast(back) when their data input has a
 * given element type (default bool -> int32). On Ascend, Expand on bool
 * ran about 1,800 times slower than on int32 (BACKGROUND.md).
 *
 * Keeps intact: results when the round trip through the working type is
 * exact (bool, widening integer and float casts, float8/4-bit types into
 * float16 and up; any other pair is reported as a warning), value names (the wrapped
 * node's outputs keep their names and readers; the Casts get fresh names),
 * and nodes whose data input has another or an unknown type (reported).
 * A value read by several wrapped nodes gets one shared Cast.
 */
#include "pass_impl.h"

#include <string.h>

enum { OPT_OPS, OPT_NODES, OPT_FROM, OPT_TO, OPT_INPUTS, OPT_OUTPUTS, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_OPS] = {"ops", SG_OPT_STRINGS, "Expand",
                 "op types to wrap (when only `nodes` is given, none by type)"},
    [OPT_NODES] = {"nodes", SG_OPT_STRINGS, NULL, "node names to wrap"},
    [OPT_FROM] = {"from", SG_OPT_DTYPE, "bool", "element type of the data input that triggers it"},
    [OPT_TO] = {"to", SG_OPT_DTYPE, "int32", "working element type inside the Casts"},
    [OPT_INPUTS] = {"inputs", SG_OPT_INTS, "0", "input slots to cast (the first one decides)", 0,
                    1000},
    [OPT_OUTPUTS] = {"outputs", SG_OPT_INTS, "0", "output slots to cast back", 0, 1000},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    sg_model *m;
    struct sg__strmap names;
    struct sg__ptrset inserted;
    bool lossy; /* from -> to -> from loses values: warned at the first wrap */
};

static sg_node *new_cast(struct ctx *c, sg_node *n, const char *what, uint32_t idx, int32_t to)
{
    char base[600];
    snprintf(base, sizeof base, "%s_cast_%s%u", sg__node_label(n), what, idx);
    const char *name = sg_model_fresh_name(c->m, base);
    sg_node *cast = name ? sg_node_create(n->graph, "Cast", NULL, name, c->diag) : NULL;
    if (!cast || sg_node_set_attr_int(cast, "to", to) || sg__ptrset_add(&c->inserted, cast)) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    return cast;
}

static sg_status retype(struct ctx *c, sg_value *v, int32_t dtype)
{
    sg_type *t = sg_type_with_elem(c->m, v->type, dtype);
    if (!t)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_value_set_type(v, t);
    return SG_OK;
}

static sg_status wrap(struct ctx *c, sg_node *n, int32_t from, int32_t to)
{
    const struct sg_opt_value *ins = &c->opts[OPT_INPUTS], *outs = &c->opts[OPT_OUTPUTS];
    sg_status st;
    for (size_t k = 0; k < ins->n; k++) {
        uint32_t idx = (uint32_t)ins->ints[k];
        sg_value *x = idx < n->n_inputs ? n->inputs[idx] : NULL;
        if (!x || sg_value_dtype(x) != from)
            continue;
        sg_node *shared = NULL;
        for (uint32_t u = 0; u < x->n_uses && !shared; u++)
            if (x->uses[u].index == 0 && sg__ptrset_has(&c->inserted, x->uses[u].node) &&
                sg_attr_int(x->uses[u].node, "to", 0) == to)
                shared = x->uses[u].node;
        if (shared) {
            if ((st = sg_node_set_input(n, idx, shared->outputs[0])))
                return sg_diag_set(c->diag, st, "out of memory");
            continue;
        }
        sg_node *cast = new_cast(c, n, "in", idx, to);
        if (!cast)
            return SG_ENOMEM;
        if ((st = sg_node_insert_before_input(n, idx, cast, c->diag)) ||
            (st = retype(c, cast->outputs[0], to)))
            return st;
    }
    for (size_t k = 0; k < outs->n; k++) {
        uint32_t idx = (uint32_t)outs->ints[k];
        if (idx >= n->n_outputs || !n->outputs[idx])
            continue;
        sg_node *cast = new_cast(c, n, "out", idx, from);
        if (!cast)
            return SG_ENOMEM;
        if ((st = sg_node_insert_after_output(n, idx, cast, c->diag)) ||
            (st = retype(c, n->outputs[idx], to)))
            return st;
    }
    return SG_OK;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    int32_t from = c->opts[OPT_FROM].dtype, to = c->opts[OPT_TO].dtype;
    const struct sg_opt_value *ins = &c->opts[OPT_INPUTS], *outs = &c->opts[OPT_OUTPUTS];
    bool by_type = c->opts[OPT_OPS].given || !c->opts[OPT_NODES].given;
    for (sg_node *n = g->first, *next; n; n = next) {
        next = n->next;
        if (sg__ptrset_has(&c->inserted, n))
            continue;
        bool pick = (by_type && (!n->domain || !*n->domain) &&
                     sg__opt_has(&c->opts[OPT_OPS], n->op_type)) ||
                    (n->name && sg__strmap_get(&c->names, n->name));
        if (!pick)
            continue;
        const char *label = sg__node_label(n);
        uint32_t first = ins->n ? (uint32_t)ins->ints[0] : 0;
        sg_value *data = first < n->n_inputs ? n->inputs[first] : NULL;
        int32_t d = data ? sg_value_dtype(data) : 0;
        if (d != from) {
            sg_report_info(c->rep, "skipped", "%s (input %u is %s)", label, first,
                           d ? sg_dtype_name(d) : "of unknown type");
            continue;
        }
        /* Every output cast back must really be `from`, or readers break. */
        bool ok = true;
        for (size_t k = 0; k < outs->n && ok; k++) {
            uint32_t idx = (uint32_t)outs->ints[k];
            ok = idx < n->n_outputs && n->outputs[idx] && sg_value_dtype(n->outputs[idx]) == from;
        }
        if (!ok) {
            sg_report_info(c->rep, "skipped", "%s (an output to cast back is not %s)", label,
                           sg_dtype_name(from));
            continue;
        }
        sg_status st = wrap(c, n, from, to);
        if (st)
            return st;
        sg_report_change(c->rep, "node wrapped in Casts", "%s (%s -> %s)", label,
                         sg_dtype_name(from), sg_dtype_name(to));
        if (c->lossy)
            sg_report_warn(c->rep, "lossy working type",
                           "%s (%s -> %s -> %s does not give every value back: it may compute "
                           "other results)",
                           label, sg_dtype_name(from), sg_dtype_name(to), sg_dtype_name(from));
        next = n->next;
        while (next && sg__ptrset_has(&c->inserted, next))
            next = next->next;
    }
    return SG_OK;
}

/* Significant bits of a float type's values (implicit bit included). */
static unsigned float_digits(int32_t d)
{
    switch (d) {
    case SG_DTYPE_DOUBLE:
        return 53;
    case SG_DTYPE_FLOAT:
        return 24;
    case SG_DTYPE_FLOAT16:
        return 11;
    case SG_DTYPE_BFLOAT16:
        return 8;
    default:
        return 0;
    }
}

/* Whether every value of `from` survives from -> to -> from unchanged:
 * bool into anything; integers into wider integers of the same
 * signedness, or signed ones wider by a bit, or floats whose significand
 * holds them; float8 and float4e2m1 into float16, bfloat16 and up (their
 * exponents and mantissas fit); floats into floats at least as wide in
 * both. Anything else (a narrowing, float into int, between float8 types)
 * is reported as lossy. */
static bool exact_round_trip(int32_t from, int32_t to)
{
    if (from == SG_DTYPE_BOOL)
        return to != SG_DTYPE_STRING;
    unsigned fb = sg_dtype_bits(from), tb = sg_dtype_bits(to);
    bool fint = sg_dtype_is_int(from) || from == SG_DTYPE_UINT4 || from == SG_DTYPE_INT4;
    bool tint = sg_dtype_is_int(to) || to == SG_DTYPE_UINT4 || to == SG_DTYPE_INT4;
    bool fsigned = from == SG_DTYPE_INT4 || from == SG_DTYPE_INT8 || from == SG_DTYPE_INT16 ||
                   from == SG_DTYPE_INT32 || from == SG_DTYPE_INT64;
    bool tsigned = to == SG_DTYPE_INT4 || to == SG_DTYPE_INT8 || to == SG_DTYPE_INT16 ||
                   to == SG_DTYPE_INT32 || to == SG_DTYPE_INT64;
    if (fint && tint)
        return fsigned == tsigned ? tb >= fb : tsigned && tb > fb;
    if (fint)
        return float_digits(to) >= fb - (fsigned ? 1 : 0);
    if (sg_dtype_is_float8(from) || from == SG_DTYPE_FLOAT4E2M1)
        return float_digits(to) >= 8;
    if (sg_dtype_is_float(from) && sg_dtype_is_float(to))
        return from == SG_DTYPE_FLOAT16    ? to != SG_DTYPE_BFLOAT16
               : from == SG_DTYPE_BFLOAT16 ? to != SG_DTYPE_FLOAT16
                                           : float_digits(to) >= float_digits(from);
    return false;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    if (opts[OPT_FROM].dtype == opts[OPT_TO].dtype)
        return sg_diag_set(diag, SG_EINVAL, "'from' and 'to' are both %s",
                           sg_dtype_name(opts[OPT_TO].dtype));

    struct ctx c = {.opts = opts, .rep = rep, .diag = diag, .m = m};
    c.lossy = !exact_round_trip(opts[OPT_FROM].dtype, opts[OPT_TO].dtype);
    if (!m->graph)
        return SG_OK;
    sg_status st = sg__strset_from(&c.names, &opts[OPT_NODES]);
    if (st)
        st = sg_diag_set(diag, st, "out of memory");
    if (!st)
        st = sg_graph_infer_dtypes(m->graph, true, diag);
    if (!st)
        st = sg__walk_graphs(m->graph, run_graph, &c);
    sg__strmap_free(&c.names);
    sg__ptrset_free(&c.inserted);
    return st;
}

const struct sg_pass sg_pass_cast_around = {
    .name = "cast-around",
    .summary = "wrap nodes (default: Expand on bool) in Casts to a faster working type",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
