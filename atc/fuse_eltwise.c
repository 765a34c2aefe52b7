/*
 * fuse_eltwise.c - AutomaticUbFusion: a chain of element-wise ops, each
 * read only by the next, becomes one kernel that keeps the intermediate
 * results in its buffer, so that only the chain's last output is dumped
 * (the seed's "mul_sub_sub" op: the Exp inside such a kernel overflowed
 * where nobody could see it).
 *
 * A chain starts at an element-wise op (table below) with a float output
 * and grows while the last op's output has exactly one reader that is an
 * element-wise op of the same compute dtype (UB fusion runs after the
 * precision step) and is no graph output; at most 28 ops, as ATC's
 * automatic UB fusion. Chains of two or more ops become FusedElementwise
 * nodes whose `body` graph holds the original ops (names, attributes and
 * compute dtypes kept); the runtime runs the body as a subgraph and
 * reports only the fused node's output. The fused op is named by joining
 * its parts' names and its compiled type (_atc_type) is that of the last
 * part, as the op types of UB-fused kernels read in device dumps.
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <string.h>

#define MAX_CHAIN 28

static const char *const eltwise_ops[] = {
    "Add", "Sub",  "Mul",        "Div",  "Exp",     "Log",  "Neg",
    "Abs", "Sqrt", "Reciprocal", "Relu", "Sigmoid", "Tanh", NULL,
};

static bool eltwise(const sg_node *n)
{
    if (!n || n->n_outputs != 1 || !n->outputs[0] || n->n_inputs < 1 ||
        !sg_node_attr(n, SG_MOCKOM_ATTR_OUTPUT_DTYPE))
        return false;
    for (size_t i = 0; eltwise_ops[i]; i++)
        if (sg__atc_is(n, eltwise_ops[i]))
            return true;
    return false;
}

/* What the body needs of one chain op, read before the op is removed. */
struct part {
    const char *op_type, *domain, *name;
    sg_attr **attrs;
    uint32_t n_attrs;
    int32_t in[4]; /* >= 0: external input index; -1: the previous op's output */
    uint32_t n_in;
    sg_type *out_type;
    const char *out_name;
};

static sg_status build_body(struct sg__atc_mock *c, sg_node *fused, const struct part *parts,
                            size_t n, sg_value *const *ext, size_t n_ext)
{
    sg_status st = SG_OK;
    sg_graph *body = sg_node_set_attr_graph(fused, "body");
    sg_value **bin = sg_calloc(n_ext + 1, sizeof *bin);
    if (!body || !bin)
        goto nomem;
    char gname[300];
    snprintf(gname, sizeof gname, "%s_body", fused->name);
    if (!(body->name = sg_model_strdup(c->m, gname)))
        goto nomem;
    for (size_t k = 0; k < n_ext; k++) {
        const char *name = sg_model_fresh_name(c->m, ext[k]->name);
        if (!name || sg_graph_add_value(body, name, ext[k]->type, &bin[k], NULL) ||
            sg_graph_add_input(body, bin[k]))
            goto nomem;
    }
    sg_value *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct part *p = &parts[i];
        sg_node *bn = sg_node_create(body, p->op_type, p->domain, p->name, c->diag);
        if (!bn)
            goto fail;
        for (uint32_t j = 0; j < p->n_in; j++)
            if (sg_node_set_input(bn, j, p->in[j] < 0 ? prev : bin[p->in[j]]))
                goto nomem;
        for (uint32_t a = 0; a < p->n_attrs; a++)
            if ((st = sg__atc_copy_attr(bn, p->attrs[a]))) {
                st = sg_diag_set(c->diag, st, "'%s': attribute '%s' cannot be copied", p->name,
                                 p->attrs[a]->name);
                goto fail;
            }
        /* The last value must not shadow the fused op's output outside. */
        const char *vname = i + 1 < n ? p->out_name : sg_model_fresh_name(c->m, p->out_name);
        sg_value *v;
        if (!vname || (st = sg_graph_add_value(body, vname, p->out_type, &v, c->diag)) ||
            sg_node_set_output(bn, 0, v))
            goto fail;
        prev = v;
    }
    if (sg_graph_add_output(body, prev))
        goto nomem;
    sg_free(bin);
    return SG_OK;
nomem:
    sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
fail:
    sg_free(bin);
    return c->diag->status ? c->diag->status : SG_ENOMEM;
}

static sg_status fuse_chain(struct sg__atc_mock *c, sg_node **chain, size_t n)
{
    struct part parts[MAX_CHAIN];
    sg_value *ext[MAX_CHAIN * 4];
    size_t n_ext = 0;
    for (size_t i = 0; i < n; i++) {
        sg_node *op = chain[i];
        struct part *p = &parts[i];
        if (op->n_inputs > 4)
            return SG_OK;
        *p = (struct part){op->op_type,  op->domain,           op->name,
                           op->attrs,    op->n_attrs,          {0},
                           op->n_inputs, op->outputs[0]->type, op->outputs[0]->name};
        for (uint32_t j = 0; j < op->n_inputs; j++) {
            sg_value *v = op->inputs[j];
            if (!v)
                return SG_OK; /* omitted inputs: not an element-wise op we know */
            if (i > 0 && v == chain[i - 1]->outputs[0]) {
                p->in[j] = -1;
                continue;
            }
            size_t k = 0;
            while (k < n_ext && ext[k] != v)
                k++;
            if (k == n_ext)
                ext[n_ext++] = v;
            p->in[j] = (int32_t)k;
        }
    }
    const char *name = sg__atc_joined_name(c, chain, n);
    const char *atc_type = sg__atc_type(chain[n - 1]);
    if (!name)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    struct sg__atc_fusion f = {chain,
                               n,
                               ext,
                               n_ext,
                               chain[n - 1]->outputs[0],
                               "FusedElementwise",
                               name,
                               atc_type,
                               SG_FP_AUTOMATIC_UB};
    sg_node *fused;
    sg_status st = sg__atc_fuse(c, &f, &fused);
    return st ? st : build_body(c, fused, parts, n, ext, n_ext);
}

static sg_status run(struct sg__atc_mock *c, enum sg_fusion_pass_id pass)
{
    (void)pass;
    size_t n;
    sg_node **order = sg__atc_snapshot(c, &n);
    if (!order)
        return c->diag->status;
    sg_status st = SG_OK;
    for (size_t i = 0; i < n && !st; i++) {
        sg_node *chain[MAX_CHAIN];
        size_t len = 0;
        if (order[i]->dead || !eltwise(order[i]))
            continue;
        chain[len++] = order[i];
        unsigned fp16 = sg_mockom_node_fp16(order[i]);
        while (len < MAX_CHAIN) {
            sg_node *next = sg__atc_only_reader(chain[len - 1]->outputs[0]);
            if (!eltwise(next) || next->dead || sg_mockom_node_fp16(next) != fp16)
                break;
            chain[len++] = next;
        }
        if (len >= 2)
            st = fuse_chain(c, chain, len);
    }
    sg_free(order);
    return st;
}

const struct sg__atc_rule sg__atc_rule_eltwise = {SG_FP_AUTOMATIC_UB, true, run};
