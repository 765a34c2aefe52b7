/*
 * extract_stream_types.c - element types for the extract that cuts from the
 * file: the types sg_model_extract's inference (sg_dtype_resolve) gives the
 * exposed tensors the model leaves untyped, and the value_info entries it
 * types on its way (see extract_stream.c).
 */
#include "extract_stream_impl.h"
#include "sg_alloc.h"
#include "sg_dtype.h"
#include "sg_ir.h"

#include <string.h>

/* The element type of a TypeProto as sg_value_dtype reads it: *fixed when
 * it is one (a tensor type with one, or another kind: 0), else the
 * initializer's counts. */
static int32_t type_elem(struct wr ty, bool *fixed)
{
    uint32_t f;
    int t;
    int32_t elem = 0;
    *fixed = false;
    while (wr_tag(&ty, &f, &t)) {
        if (f == 1 && t == WT_LEN) {
            struct wr tensor = wr_len(&ty);
            uint32_t ef;
            int et;
            *fixed = false;
            elem = 0;
            while (wr_tag(&tensor, &ef, &et)) {
                if (ef == 1 && et == WT_VARINT) {
                    elem = (int32_t)wr_varint(&tensor);
                    *fixed = true;
                } else {
                    wr_skip(&tensor, et);
                }
            }
        } else if (f == 4 || f == 5 || f == 8 || f == 9) {
            *fixed = true;
            elem = 0;
            wr_skip(&ty, t);
        } else {
            wr_skip(&ty, t);
        }
    }
    return elem;
}

/* A node as the element type rules (sg_node_output_dtype) read it: op,
 * domain, which inputs are given, the output count, and the attributes'
 * names, types, ints and tensor element types. The parts point into the
 * caller's buffers; false: more than 64 attributes. */
struct rule_node {
    sg_node n;
    char op[256], domain[256];
    sg_attr attr[64];
    sg_attr *attrs[64];
    sg_tensor tensor[64];
    char attr_name[64][64];
};

static void span_name(const struct xs *x, struct span s, char *buf, size_t size)
{
    /* A name too long to be one the rules know stands for none of them. */
    if (!sg__xs_span_str(x, s, buf, size))
        strcpy(buf, "\x01");
}

static bool rule_attr(const struct xs *x, struct rule_node *rn, struct wr a)
{
    uint32_t k = rn->n.n_attrs, f;
    int t;
    if (k == 64)
        return false;
    sg_attr *at = &rn->attr[k];
    memset(at, 0, sizeof *at);
    rn->attr_name[k][0] = '\0';
    at->name = rn->attr_name[k];
    while (wr_tag(&a, &f, &t)) {
        if (f == 1 && t == WT_LEN) {
            span_name(x, sg__xs_span_of(x, wr_len(&a)), rn->attr_name[k], sizeof rn->attr_name[k]);
        } else if (f == 20 && t == WT_VARINT) {
            at->has_type = true;
            at->type = (enum sg_attr_type)(int32_t)wr_varint(&a);
        } else if (f == 3 && t == WT_VARINT) {
            at->has_i = true;
            at->i = (int64_t)wr_varint(&a);
        } else if (f == 5 && t == WT_LEN) {
            struct wr tp = wr_len(&a);
            sg_tensor *tn = &rn->tensor[k];
            memset(tn, 0, sizeof *tn);
            uint32_t tf;
            int tt;
            while (wr_tag(&tp, &tf, &tt)) {
                if (tf == 2 && tt == WT_VARINT) {
                    tn->dtype = (int32_t)wr_varint(&tp);
                    tn->has_dtype = true;
                } else {
                    wr_skip(&tp, tt);
                }
            }
            at->t = tn;
        } else {
            wr_skip(&a, t);
        }
    }
    rn->attrs[k] = at;
    rn->n.n_attrs = k + 1;
    return true;
}

/* The types of one node's untyped outputs from its inputs' (x->dt). */
static sg_status infer_node(struct xs *x, struct wr m)
{
    static sg_value present; /* stands for a given input: the rules test for NULL */
    struct rule_node *rn = x->rule_node;
    memset(&rn->n, 0, sizeof rn->n);
    rn->n.op_type = "\x01";
    rn->n.attrs = rn->attrs;
    size_t n_in = 0, n_out = 0;
    uint32_t f;
    int t;
    for (struct wr r = m; wr_tag(&r, &f, &t);) {
        if (t != WT_LEN) {
            wr_skip(&r, t);
            continue;
        }
        struct wr s = wr_len(&r);
        if (f == 1 || f == 2) {
            uint32_t id;
            sg__xs_name_id(x, s.p, (size_t)(s.end - s.p), false, &id);
            if (f == 1) {
                if (n_in == x->cap_rule_in)
                    return sg__xs_no(x, "more inputs than counted%s", NULL);
                x->rule_in[n_in] = id;
                x->rule_in_dt[n_in] = id ? x->dt[id] : 0;
                x->rule_in_ptr[n_in++] = id ? &present : NULL;
            } else {
                if (n_out == x->cap_rule_out)
                    return sg__xs_no(x, "more outputs than counted%s", NULL);
                x->rule_out[n_out++] = id;
            }
        } else if (f == 4) {
            span_name(x, sg__xs_span_of(x, s), rn->op, sizeof rn->op);
            rn->n.op_type = rn->op;
        } else if (f == 7) {
            span_name(x, sg__xs_span_of(x, s), rn->domain, sizeof rn->domain);
            rn->n.domain = rn->domain;
        } else if (f == 5 && !rule_attr(x, rn, s)) {
            return sg__xs_no(x, "a node with over 64 attributes%s", NULL);
        }
    }
    rn->n.inputs = x->rule_in_ptr;
    rn->n.n_inputs = (uint32_t)n_in;
    rn->n.n_outputs = (uint32_t)n_out;
    for (size_t i = 0; i < n_out; i++) {
        uint32_t id = x->rule_out[i];
        if (!id || (x->names[id].flags & F_HASTYPE))
            continue;
        int32_t d = sg_node_output_dtype(&rn->n, (uint32_t)i, x->rule_in_dt);
        uint8_t v = d > 0 && d < SG_DTYPE_COUNT ? (uint8_t)d : 0;
        x->dt_changed |= x->dt[id] != v;
        x->dt[id] = v;
    }
    return SG_OK;
}

/* x->dt for every name: first what is fixed (an initializer's data_type,
 * then an entry's type over it), then, node by node in the file's order
 * (again while a type changes, when that order is not topological), the
 * outputs without a typed entry by the rules.
 * 0: unknown. The IR types a value from these same facts on demand. */
sg_status sg__xs_infer_dtypes(struct xs *x)
{
    if (x->n_two_types)
        return sg__xs_no(x, "a value info has two types%s", NULL);
    size_t max_in = 0;
    for (uint32_t k = 0; k < x->n_nodes; k++)
        if (x->first_edge[k + 1] - x->first_edge[k] > max_in)
            max_in = x->first_edge[k + 1] - x->first_edge[k];
    x->cap_rule_in = max_in;
    x->cap_rule_out = x->max_outputs;
    if (!(x->dt = sg_calloc(x->n_names + 1, 1)) ||
        !(x->rule_node = sg_malloc(sizeof *x->rule_node)) ||
        !(x->rule_in = sg_calloc(max_in + 1, sizeof *x->rule_in)) ||
        !(x->rule_in_dt = sg_calloc(max_in + 1, sizeof *x->rule_in_dt)) ||
        !(x->rule_in_ptr = sg_calloc(max_in + 1, sizeof *x->rule_in_ptr)) ||
        !(x->rule_out = sg_calloc(x->max_outputs + 1, sizeof *x->rule_out)))
        return sg__xs_no(x, "out of memory%s", NULL);
    const uint8_t *g0 = x->base + x->graph.off;
    /* The loader's order: initializers, inputs, then outputs and
     * value_info; a name's first entry gives its type. */
    int rounds = 0;
    for (int pass = 0; pass < 4; pass++) {
        struct wr r = {g0, g0 + x->graph.len, false};
        uint32_t f;
        int t;
        sg__xs_release_all(x);
        x->dt_changed = false;
        while (wr_tag(&r, &f, &t)) {
            sg__xs_release_below(x, r.p);
            bool want = t == WT_LEN && (pass == 0   ? f == 5
                                        : pass == 1 ? f == 11
                                        : pass == 2 ? f == 12 || f == 13
                                                    : f == 1);
            if (!want) {
                wr_skip(&r, t);
                continue;
            }
            struct wr m = wr_len(&r);
            int32_t d = 0;
            uint32_t id = 0, mf;
            int mt;
            if (pass == 3) {
                sg_status st = infer_node(x, m);
                if (st)
                    return st;
                continue;
            }
            bool fixed = false, named = false;
            while (wr_tag(&m, &mf, &mt)) {
                if (mf == (pass == 0 ? 8u : 1u) && mt == WT_LEN) {
                    struct wr nm = wr_len(&m);
                    sg__xs_name_id(x, nm.p, (size_t)(nm.end - nm.p), false, &id);
                    named = true;
                } else if (pass == 0 && mf == 2 && mt == WT_VARINT) {
                    d = (int32_t)wr_varint(&m);
                    fixed = true;
                } else if (pass > 0 && mf == 2 && mt == WT_LEN) {
                    d = type_elem(wr_len(&m), &fixed);
                } else {
                    wr_skip(&m, mt);
                }
            }
            if (!named || !id || (pass > 0 && (x->names[id].flags & F_DTSET)))
                continue;
            if (pass > 0)
                x->names[id].flags |= F_DTSET;
            if (!fixed)
                continue;
            if (d < 0 || d > 254)
                return sg__xs_no(x, "an element type code over 254%s", NULL);
            x->dt[id] = (uint8_t)d;
        }
        /* Nodes out of order: again until no type changes (a fixed point
         * of an acyclic graph is the one its topological order gives). */
        if (pass == 3 && x->unsorted && x->dt_changed) {
            if (++rounds == 16)
                return sg__xs_no(x, "the graph is too far out of order to infer types%s", NULL);
            pass = 2;
        }
    }
    return SG_OK;
}

/*
 * F_RESOLVED on the names sg_dtype_resolve types as a side effect when
 * sg_model_extract asks for the exposed tensors to be inferred: it walks
 * up from each through the producers of tensors without an element type
 * (stopping at typed ones) and types every output of each producer it
 * reaches that has no type field. The IR then writes those types into
 * their value_info entries, so this path does too.
 */
sg_status sg__xs_mark_resolved(struct xs *x)
{
    uint8_t *visited = sg_calloc((size_t)x->n_nodes / 8 + 1, 1);
    if (!visited)
        return sg__xs_no(x, "out of memory%s", NULL);
    x->n_stack = 0;
    sg_status st = SG_OK;
    for (size_t i = 0; i < x->n_new_in + x->n_outs && !st; i++)
        if (x->retype[i].dtype < 0 &&
            !sg__xs_push_id(&x->stack, &x->n_stack, &x->cap_stack,
                            i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in]))
            st = sg__xs_no(x, "out of memory%s", NULL);
    while (!st && x->n_stack) {
        uint32_t id = x->stack[--x->n_stack];
        const struct sname *v = &x->names[id];
        /* typed before any inference: an entry's or an initializer's type */
        if (((v->flags & (F_HASTYPE | F_INIT)) && x->dt[id]) || v->producer < 0)
            continue;
        uint32_t p = (uint32_t)v->producer;
        if (visited[p >> 3] >> (p & 7) & 1)
            continue;
        visited[p >> 3] |= (uint8_t)(1u << (p & 7));
        for (uint32_t e = x->first_edge[p]; e < x->first_edge[p + 1] && !st; e++)
            if (x->edges[e] && !sg__xs_push_id(&x->stack, &x->n_stack, &x->cap_stack, x->edges[e]))
                st = sg__xs_no(x, "out of memory%s", NULL);
    }
    for (uint32_t id = 1; id < x->n_names && !st; id++) {
        struct sname *v = &x->names[id];
        if (v->producer >= 0 && (visited[v->producer >> 3] >> (v->producer & 7) & 1) &&
            !(v->flags & F_HASTYPE) && x->dt[id])
            v->flags |= F_RESOLVED;
    }
    sg_free(visited);
    return st;
}

/* The checks of sg_model_extract after the walk, and the interface. */
