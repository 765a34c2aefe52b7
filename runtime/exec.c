/*
 * exec.c - the executor: plans (one per graph, subgraphs included) and runs.
 *
 * A plan numbers every value a graph touches (its "slots"): graph inputs,
 * initializers, node inputs and outputs, graph outputs, and captures (values
 * read from an enclosing graph). Nodes run in sg_graph_toposort order, each
 * with the slots whose last reader it is listed for release; a subgraph's
 * captures count as reads by the node that owns the subgraph. A frame is one
 * execution of a plan: an array of value references, one per slot; a
 * subgraph's frame finds its captures in the frame of the enclosing graph.
 */
#include "rt_impl.h"
#include "sg_alloc.h"
#include "sg_blas.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NO_SLOT UINT32_MAX

struct rt_node {
    sg_node *node;
    uint32_t index; /* position in the plan's order */
    int64_t opset;
    const struct sg_kernel *kernel; /* chosen for `kernel_dtype` */
    int32_t kernel_dtype;           /* dtype it was chosen for (UNDEFINED: any) */
    uint32_t *in, *out;             /* slots; NO_SLOT for omitted */
    uint32_t *release;
    uint32_t n_release;
    struct rt_plan **subs;
    uint32_t n_subs;
    /* Fusion (fuse_clamps): a Clip or Relu applied by this node's kernel to
     * its output 0 (sg_kpost), or, on that Clip or Relu, the mark that its
     * input already is its output. */
    bool post, pass;
    float post_lo, post_hi;
};

struct rt_plan {
    const sg_graph *g;
    struct rt_plan *parent;
    uint32_t n_slots, cap_slots;
    const sg_value **slot_val;
    sg_rt_value **consts;
    struct rt_node *nodes;
    uint32_t n_nodes;
    uint32_t *inputs, *outputs;
    uint32_t n_inputs, n_outputs;
    uint32_t *caps, *cap_outer;
    uint32_t n_caps;
    struct sg__ptrmap map;
    /* Planning: the element type of slots [0, n_typed) as declared or as
     * inferred from their producers (0: unknown), for the kernel checks. */
    int32_t *slot_dtype;
    uint32_t n_typed;
};

struct rt_frame {
    struct rt_plan *plan;
    sg_rt_value **vals;
    struct rt_frame *parent;
    int depth;
};

struct sg_rt {
    sg_model *m;
    struct sg_rt_opts opts;
    sg_arena *arena; /* plan structures */
    struct rt_plan *main;
    struct rt_plan **plans;
    size_t n_plans, cap_plans;
    sg_rt_value **bound;   /* main plan input i -> bound value */
    sg_rt_value **results; /* main plan output i after a run */
    uint32_t *required;    /* indices into main->inputs without initializer */
    uint32_t n_required;
};

struct build {
    sg_rt *rt;
    struct sg_diag *diag;
    sg_rt_missing_fn missing; /* check mode: report and go on */
    void *missing_ctx;
    size_t n_missing;
};

/* ------------------------------------------------------------ labels */

static const char *domain_name(const char *d)
{
    return d && *d ? d : "ai.onnx";
}

const char *sg__rt_node_label(const sg_node *n, int64_t opset, char *buf, size_t size)
{
    if (n->name && *n->name)
        snprintf(buf, size, "node '%s' (%s, %s v%lld)", n->name, n->op_type, domain_name(n->domain),
                 (long long)opset);
    else if (n->n_outputs && n->outputs[0])
        snprintf(buf, size, "node producing '%s' (%s, %s v%lld)", n->outputs[0]->name, n->op_type,
                 domain_name(n->domain), (long long)opset);
    else
        snprintf(buf, size, "unnamed node (%s, %s v%lld)", n->op_type, domain_name(n->domain),
                 (long long)opset);
    return buf;
}

/* ------------------------------------------------------------- plans */

static uint32_t slot_of(struct rt_plan *p, const sg_value *v)
{
    return sg__ptrmap_get(&p->map, v);
}

static sg_status add_slot(sg_rt *rt, struct rt_plan *p, const sg_value *v, uint32_t *out)
{
    uint32_t s = slot_of(p, v);
    if (s != NO_SLOT) {
        *out = s;
        return SG_OK;
    }
    if (p->n_slots == p->cap_slots) {
        uint32_t cap = p->cap_slots ? p->cap_slots * 2 : 16;
        const sg_value **sv =
            sg_arena_grow(rt->arena, p->slot_val, p->n_slots, cap, sizeof *p->slot_val);
        if (!sv)
            return SG_ENOMEM;
        p->slot_val = sv;
        p->cap_slots = cap;
    }
    s = p->n_slots++;
    p->slot_val[s] = v;
    if (sg__ptrmap_put(&p->map, v, s))
        return SG_ENOMEM;
    *out = s;
    return SG_OK;
}

/* The tensor dtype the IR declares for v, or UNDEFINED. */
static int32_t static_dtype(const sg_value *v)
{
    if (!v)
        return SG_DTYPE_UNDEFINED;
    if (v->init && v->init->has_dtype)
        return v->init->dtype;
    if (v->outer)
        return static_dtype(v->outer);
    const sg_type *t = v->type;
    while (t && (t->kind == SG_TYPE_SEQUENCE || t->kind == SG_TYPE_OPTIONAL))
        t = t->elem;
    if (t && t->kind == SG_TYPE_TENSOR && t->has_elem_type)
        return t->elem_type;
    return SG_DTYPE_UNDEFINED;
}

/* The element type of v while planning p: declared, else inferred from
 * its producer (in p or, for a capture, in an enclosing plan). */
static int32_t plan_dtype(const struct rt_plan *p, const sg_value *v)
{
    int32_t d = static_dtype(v);
    if (d || !v)
        return d;
    uint32_t s = slot_of((struct rt_plan *)p, v);
    if (s != NO_SLOT && s < p->n_typed && p->slot_dtype[s])
        return p->slot_dtype[s];
    return v->outer && p->parent ? plan_dtype(p->parent, v->outer) : SG_DTYPE_UNDEFINED;
}

/* What a missing kernel lacks: an input or an output (SG_KF_OUT_TYPES) of
 * `dtype`, or anything for the op at that opset. */
enum missing { MISSING_OP, MISSING_INPUT, MISSING_OUTPUT };

static sg_status report_missing(struct build *b, const sg_node *n, int64_t opset, int32_t dtype,
                                enum missing what)
{
    char label[512], msg[800], dname[32];
    sg__rt_node_label(n, opset, label, sizeof label);
    if (sg_dtype_valid(dtype))
        snprintf(dname, sizeof dname, "%s", sg_dtype_name(dtype));
    else
        snprintf(dname, sizeof dname, "data type %d", (int)dtype);
    if (what == MISSING_INPUT)
        snprintf(msg, sizeof msg, "%s: no kernel for %s inputs", label, dname);
    else if (what == MISSING_OUTPUT)
        snprintf(msg, sizeof msg, "%s: no kernel making %s outputs", label, dname);
    else
        snprintf(msg, sizeof msg, "%s: no kernel for %s in domain %s at opset %lld", label,
                 n->op_type, domain_name(n->domain), (long long)opset);
    if (b->missing) {
        b->n_missing++;
        b->missing(n, msg, b->missing_ctx);
        return SG_OK;
    }
    return sg_diag_set(b->diag, SG_EUNSUPPORTED, "%s", msg);
}

static bool node_input_given(const void *ctx, uint32_t i)
{
    return ((const sg_node *)ctx)->inputs[i] != NULL;
}

/* The node's inputs against the `inputs` pattern of its kernel (the one
 * check that lets kernels take required inputs as given); reported like a
 * missing kernel. */
static sg_status check_inputs(struct build *b, const sg_node *n, int64_t opset,
                              const struct sg_kernel *k)
{
    char why[128], label[512], msg[800];
    if (sg_kernel_inputs_fit(k, n->n_inputs, node_input_given, n, why, sizeof why))
        return SG_OK;
    snprintf(msg, sizeof msg, "%s: %s", sg__rt_node_label(n, opset, label, sizeof label), why);
    if (b->missing) {
        b->n_missing++;
        b->missing(n, msg, b->missing_ctx);
        return SG_OK;
    }
    return sg_diag_set(b->diag, SG_EARITY, "%s", msg);
}

static sg_status build_plan(struct build *b, const sg_graph *g, struct rt_plan *parent,
                            struct rt_plan **out);

struct sub_walk {
    struct build *b;
    struct rt_plan *p;
    struct rt_node *rn;
    sg_status st;
};

static sg_status plan_sub(sg_graph *sub, void *ctx)
{
    struct sub_walk *w = ctx;
    struct rt_plan *sp = NULL;
    sg_status st = build_plan(w->b, sub, w->p, &sp);
    if (st)
        return st;
    struct rt_plan **subs =
        sg_arena_grow(w->b->rt->arena, w->rn->subs, w->rn->n_subs, w->rn->n_subs + 1, sizeof *subs);
    if (!subs)
        return SG_ENOMEM;
    subs[w->rn->n_subs++] = sp;
    w->rn->subs = subs;
    return SG_OK;
}

/*
 * The kernel of rn for the dtypes its inputs have (declared, or inferred
 * from the nodes before it), checking the dtype of output 0 too where the
 * entry says its mask bounds it; then the dtypes of rn's outputs for the
 * nodes after it, and the plans of its subgraphs (which may add capture
 * slots to p).
 */
static sg_status plan_kernel(struct build *b, struct rt_plan *p, struct rt_node *rn)
{
    sg_node *n = rn->node;
    int32_t ins_local[16], *ins = ins_local;
    if (n->n_inputs > 16 && !(ins = sg_malloc(n->n_inputs * sizeof *ins)))
        return sg_diag_set(b->diag, SG_ENOMEM, "out of memory");
    for (uint32_t j = 0; j < n->n_inputs; j++)
        ins[j] = plan_dtype(p, n->inputs[j]);
    const char *why = "no kernel";
    const struct sg_kernel *k =
        sg_kernel_find(n->domain, n->op_type, rn->opset, SG_DTYPE_UNDEFINED, &why);
    int32_t dt = SG_DTYPE_UNDEFINED;
    enum missing what = MISSING_OP;
    if (k && k->type_input >= 0 && (uint32_t)k->type_input < n->n_inputs)
        dt = ins[k->type_input];
    if (k && dt != SG_DTYPE_UNDEFINED) {
        k = sg_kernel_find(n->domain, n->op_type, rn->opset, dt, &why);
        what = MISSING_INPUT;
    }
    int32_t out0 = SG_DTYPE_UNDEFINED;
    for (uint32_t j = 0; j < n->n_outputs; j++) {
        const sg_value *v = n->outputs[j];
        int32_t d = static_dtype(v);
        if (!d && v)
            d = sg_node_output_dtype(n, j, ins);
        if (j == 0)
            out0 = d;
        if (rn->out[j] != NO_SLOT && rn->out[j] < p->n_typed)
            p->slot_dtype[rn->out[j]] = d;
    }
    if (ins != ins_local)
        sg_free(ins);
    if (k && (k->flags & SG_KF_OUT_TYPES) && out0 && k->types != SG_KT_ANY &&
        (out0 < 0 || out0 >= 32 || !(k->types & SG_KT(out0)))) {
        k = NULL;
        dt = out0;
        what = MISSING_OUTPUT;
    }
    rn->kernel = k;
    rn->kernel_dtype = what == MISSING_OUTPUT ? SG_DTYPE_UNDEFINED : dt;
    sg_status st;
    if (!k && (st = report_missing(b, n, rn->opset, dt, what)))
        return st;
    if (k && (st = check_inputs(b, n, rn->opset, k)))
        return st;
    struct sub_walk w = {b, p, rn, SG_OK};
    return sg_node_for_each_subgraph(n, plan_sub, &w);
}

sg_status sg_rt_value_from_tensor(sg_model *m, sg_tensor *t, sg_rt_value **out,
                                  struct sg_diag *diag)
{
    *out = NULL;
    if (t->dtype == SG_DTYPE_STRING) {
        const sg_tensor_extra *x = sg_tensor_get_extra(t);
        int64_t n = sg_tensor_numel(t);
        if (n < 0 || (uint64_t)n != x->n_string)
            return sg_diag_set(diag, SG_ESHAPE, "string tensor '%s' has %zu strings for %lld",
                               t->name ? t->name : "", x->n_string, (long long)n);
        return sg__rt_borrow(SG_DTYPE_STRING, x->string_data, t->dims, t->rank, out, diag);
    }
    size_t nbytes;
    const void *data = sg_tensor_data(m, t, &nbytes, diag);
    if (!data)
        return diag && diag->status ? diag->status : SG_EPARSE;
    return sg__rt_borrow(t->dtype, data, t->dims, t->rank, out, diag);
}

/* An empty plan of g, listed in rt->plans so that it is freed with the
 * session even when planning fails. NULL when out of memory. */
static struct rt_plan *new_plan(sg_rt *rt, const sg_graph *g, struct rt_plan *parent)
{
    struct rt_plan *p = sg_arena_calloc(rt->arena, 1, sizeof *p);
    if (!p)
        return NULL;
    p->g = g;
    p->parent = parent;
    if (rt->n_plans == rt->cap_plans) {
        size_t cap = rt->cap_plans ? rt->cap_plans * 2 : 8;
        struct rt_plan **grown = sg_realloc(rt->plans, cap * sizeof *grown);
        if (!grown)
            return NULL;
        rt->plans = grown;
        rt->cap_plans = cap;
    }
    rt->plans[rt->n_plans++] = p;
    return p;
}

/* ------------------------------------------------------------ fusion */

static bool is_onnx_domain(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

/* The float32 scalar that v always holds when it is known before the run:
 * an initializer that is not a graph input, or the output of a Constant
 * node. */
static bool static_scalar(sg_model *m, const sg_value *v, float *out)
{
    const sg_tensor *t = NULL;
    if (v->init && !(v->flags & SG_VALUE_INPUT))
        t = v->init;
    else if (v->producer && !v->init && strcmp(v->producer->op_type, "Constant") == 0 &&
             is_onnx_domain(v->producer->domain) && v->producer->n_outputs == 1) {
        const sg_attr *a = sg_node_attr(v->producer, "value_float");
        if (a && a->type == SG_ATTR_FLOAT && v->producer->n_attrs == 1) {
            *out = a->f;
            return true;
        }
        a = sg_node_attr(v->producer, "value");
        if (!a || a->type != SG_ATTR_TENSOR || v->producer->n_attrs != 1)
            return false;
        t = a->t;
    }
    size_t nbytes;
    const void *data;
    if (!t || !t->has_dtype || t->dtype != SG_DTYPE_FLOAT || sg_tensor_numel(t) != 1 ||
        !(data = sg_tensor_data(m, (sg_tensor *)t, &nbytes, NULL)) || nbytes != sizeof(float))
        return false;
    memcpy(out, data, sizeof *out);
    return true;
}

/* The bounds of node rn when it is a Clip or Relu whose bounds are float32
 * scalars known before the run, on an input the IR declares float32 or
 * does not type (the kernel clamps whatever it produces as Clip would). */
static bool clamp_bounds(sg_model *m, const struct rt_node *rn, float *lo, float *hi)
{
    const sg_node *n = rn->node;
    *lo = -INFINITY;
    *hi = INFINITY;
    int32_t dt = n->n_inputs ? static_dtype(n->inputs[0]) : SG_DTYPE_UNDEFINED;
    if (!is_onnx_domain(n->domain) || n->n_outputs != 1 || n->n_inputs < 1 || !n->inputs[0] ||
        (dt != SG_DTYPE_FLOAT && dt != SG_DTYPE_UNDEFINED))
        return false;
    if (strcmp(n->op_type, "Relu") == 0) {
        *lo = 0;
        return n->n_inputs == 1;
    }
    if (strcmp(n->op_type, "Clip") != 0 || n->n_inputs > 3)
        return false;
    if (rn->opset < 11) {
        /* The attributes, read as run_clip does. */
        const sg_attr *a = sg_node_attr(n, "min"), *b = sg_node_attr(n, "max");
        if ((a && a->type != SG_ATTR_FLOAT) || (b && b->type != SG_ATTR_FLOAT) || n->n_inputs != 1)
            return false;
        *lo = a ? a->f : -FLT_MAX;
        *hi = b ? b->f : FLT_MAX;
        return true;
    }
    return (n->n_inputs < 2 || !n->inputs[1] || static_scalar(m, n->inputs[1], lo)) &&
           (n->n_inputs < 3 || !n->inputs[2] || static_scalar(m, n->inputs[2], hi));
}

/*
 * Fuse each Clip or Relu into the node producing its input when that
 * node's kernel can apply it (SG_KF_POST_CLAMP) and the unclamped value
 * is visible to no one: FP32 numerics, no observer of every output
 * (observe_graph_outputs is fine), the value is output 0 of its producer,
 * read by the Clip or Relu alone (no other node, input slot or subgraph
 * capture) and not a graph output. The producer then
 * clamps (sg_kpost) and the Clip or Relu passes its input through, so
 * results are exactly those of the unfused graph.
 */
static sg_status fuse_clamps(struct build *b, struct rt_plan *p)
{
    const struct sg_rt_opts *o = &b->rt->opts;
    if ((o->on_output && !o->observe_graph_outputs) || o->numerics != SG_NUMERICS_FP32 ||
        !p->n_nodes)
        return SG_OK;
    uint32_t *reads = sg_calloc(p->n_slots + 1, sizeof *reads);
    uint32_t *prod = sg_malloc((p->n_slots + 1) * sizeof *prod);
    if (!reads || !prod) {
        sg_free(reads);
        sg_free(prod);
        return sg_diag_set(b->diag, SG_ENOMEM, "out of memory planning graph");
    }
    for (uint32_t s = 0; s < p->n_slots; s++)
        prod[s] = NO_SLOT;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        struct rt_node *rn = &p->nodes[i];
        for (uint32_t j = 0; j < rn->node->n_inputs; j++)
            if (rn->in[j] != NO_SLOT)
                reads[rn->in[j]]++;
        for (uint32_t k = 0; k < rn->n_subs; k++)
            for (uint32_t c = 0; c < rn->subs[k]->n_caps; c++)
                reads[rn->subs[k]->cap_outer[c]] += 2; /* never fused */
        for (uint32_t j = 0; j < rn->node->n_outputs; j++)
            if (rn->out[j] != NO_SLOT)
                prod[rn->out[j]] = j == 0 ? i : NO_SLOT;
    }
    for (uint32_t i = 0; i < p->n_outputs; i++)
        reads[p->outputs[i]] += 2;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        struct rt_node *rn = &p->nodes[i];
        float lo, hi;
        uint32_t s = rn->node->n_inputs ? rn->in[0] : NO_SLOT;
        if (s == NO_SLOT || reads[s] != 1 || prod[s] == NO_SLOT || prod[s] >= i ||
            p->slot_val[s]->init || (p->slot_val[s]->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)))
            continue;
        struct rt_node *pn = &p->nodes[prod[s]];
        if (pn->post || !pn->kernel || !(pn->kernel->flags & SG_KF_POST_CLAMP) ||
            !clamp_bounds(b->rt->m, rn, &lo, &hi))
            continue;
        pn->post = true;
        pn->post_lo = lo;
        pn->post_hi = hi;
        rn->pass = true;
    }
    sg_free(reads);
    sg_free(prod);
    return SG_OK;
}

bool sg_kpost(const struct sg_kctx *k, float *lo, float *hi)
{
    const struct rt_node *rn = k->priv ? k->priv->pn : NULL;
    if (!rn || !rn->post)
        return false;
    *lo = rn->post_lo;
    *hi = rn->post_hi;
    return true;
}

static sg_status build_plan(struct build *b, const sg_graph *g, struct rt_plan *parent,
                            struct rt_plan **out)
{
    sg_rt *rt = b->rt;
    struct sg_diag *diag = b->diag;
    sg_status st = SG_OK;
    sg_node **order = NULL;
    int64_t *last = NULL;
    struct rt_plan *p = new_plan(rt, g, parent);
    if (!p)
        return SG_ENOMEM;

    order = sg_malloc((g->n_nodes + 1) * sizeof *order);
    if (!order)
        return SG_ENOMEM;
    st = sg_graph_toposort((sg_graph *)g, order, diag);
    if (st)
        goto out;

    p->n_inputs = g->n_inputs;
    p->inputs = sg_arena_calloc(rt->arena, g->n_inputs + 1, sizeof *p->inputs);
    p->n_outputs = g->n_outputs;
    p->outputs = sg_arena_calloc(rt->arena, g->n_outputs + 1, sizeof *p->outputs);
    p->n_nodes = g->n_nodes;
    p->nodes = sg_arena_calloc(rt->arena, g->n_nodes + 1, sizeof *p->nodes);
    if (!p->inputs || !p->outputs || !p->nodes)
        goto nomem;
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (add_slot(rt, p, g->inputs[i], &p->inputs[i]))
            goto nomem;
    for (uint32_t i = 0; i < g->n_inits; i++) {
        uint32_t s;
        if (add_slot(rt, p, g->inits[i], &s))
            goto nomem;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        sg_node *n = order[i];
        struct rt_node *rn = &p->nodes[i];
        rn->node = n;
        rn->index = i;
        rn->opset = sg_model_opset(rt->m, n->domain);
        rn->in = sg_arena_calloc(rt->arena, n->n_inputs + 1, sizeof *rn->in);
        rn->out = sg_arena_calloc(rt->arena, n->n_outputs + 1, sizeof *rn->out);
        if (!rn->in || !rn->out)
            goto nomem;
        for (uint32_t j = 0; j < n->n_inputs; j++) {
            rn->in[j] = NO_SLOT;
            if (n->inputs[j] && add_slot(rt, p, n->inputs[j], &rn->in[j]))
                goto nomem;
        }
        for (uint32_t j = 0; j < n->n_outputs; j++) {
            rn->out[j] = NO_SLOT;
            if (n->outputs[j] && add_slot(rt, p, n->outputs[j], &rn->out[j]))
                goto nomem;
        }
    }
    for (uint32_t i = 0; i < g->n_outputs; i++)
        if (add_slot(rt, p, g->outputs[i], &p->outputs[i]))
            goto nomem;

    /* Kernels, and the plans of subgraphs (which may add capture slots,
     * untyped but for their declared types). */
    p->n_typed = p->n_slots;
    p->slot_dtype = sg_arena_calloc(rt->arena, p->n_typed + 1, sizeof *p->slot_dtype);
    if (!p->slot_dtype)
        goto nomem;
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if ((st = plan_kernel(b, p, &p->nodes[i])))
            goto out;

    /* Constants and captures. */
    p->consts = sg_arena_calloc(rt->arena, p->n_slots + 1, sizeof *p->consts);
    p->caps = sg_arena_calloc(rt->arena, p->n_slots + 1, sizeof *p->caps);
    p->cap_outer = sg_arena_calloc(rt->arena, p->n_slots + 1, sizeof *p->cap_outer);
    if (!p->consts || !p->caps || !p->cap_outer)
        goto nomem;
    for (uint32_t s = 0; s < p->n_slots; s++) {
        const sg_value *v = p->slot_val[s];
        if (v->init) {
            st = sg_rt_value_from_tensor(rt->m, v->init, &p->consts[s], diag);
            if (st) {
                sg_diag_prefix(diag, "initializer '%s'", v->name);
                goto out;
            }
        } else if (v->outer) {
            if (!parent) {
                st = sg_diag_set(diag, SG_EUNDEF,
                                 "value '%s' captures an outer value outside "
                                 "any subgraph",
                                 v->name);
                goto out;
            }
            uint32_t ps;
            if (add_slot(rt, parent, v->outer, &ps))
                goto nomem;
            p->caps[p->n_caps] = s;
            p->cap_outer[p->n_caps++] = ps;
        }
    }

    /* Last readers. Graph outputs and constants are never released. */
    last = sg_malloc((p->n_slots + 1) * sizeof *last);
    if (!last)
        goto nomem;
    for (uint32_t s = 0; s < p->n_slots; s++)
        last[s] = -1;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        struct rt_node *rn = &p->nodes[i];
        for (uint32_t j = 0; j < rn->node->n_outputs; j++)
            if (rn->out[j] != NO_SLOT && last[rn->out[j]] < (int64_t)i)
                last[rn->out[j]] = i; /* unread outputs go right away */
        for (uint32_t j = 0; j < rn->node->n_inputs; j++)
            if (rn->in[j] != NO_SLOT)
                last[rn->in[j]] = i;
        for (uint32_t k = 0; k < rn->n_subs; k++) {
            struct rt_plan *sp = rn->subs[k];
            for (uint32_t c = 0; c < sp->n_caps; c++)
                last[sp->cap_outer[c]] = i;
        }
    }
    for (uint32_t i = 0; i < p->n_outputs; i++)
        last[p->outputs[i]] = -1;
    for (uint32_t s = 0; s < p->n_slots; s++)
        if (p->slot_val[s]->init)
            last[s] = -1;
    {
        uint32_t *count = sg_calloc(p->n_nodes + 1, sizeof *count);
        if (!count)
            goto nomem;
        for (uint32_t s = 0; s < p->n_slots; s++)
            if (last[s] >= 0)
                count[last[s]]++;
        for (uint32_t i = 0; i < p->n_nodes; i++) {
            p->nodes[i].release = sg_arena_calloc(rt->arena, count[i] + 1, sizeof(uint32_t));
            if (!p->nodes[i].release) {
                sg_free(count);
                goto nomem;
            }
        }
        sg_free(count);
        for (uint32_t s = 0; s < p->n_slots; s++)
            if (last[s] >= 0) {
                struct rt_node *rn = &p->nodes[last[s]];
                rn->release[rn->n_release++] = s;
            }
    }
    if ((st = fuse_clamps(b, p)))
        goto out;
    *out = p;
    goto out;
nomem:
    st = sg_diag_set(diag, SG_ENOMEM, "out of memory planning graph '%s'", g->name ? g->name : "");
out:
    sg_free(last);
    sg_free(order);
    return st;
}

static void free_plans(sg_rt *rt)
{
    for (size_t i = 0; i < rt->n_plans; i++) {
        struct rt_plan *p = rt->plans[i];
        if (p->consts)
            for (uint32_t s = 0; s < p->n_slots; s++)
                sg_rt_value_unref(p->consts[s]);
        sg__ptrmap_free(&p->map);
    }
    sg_free(rt->plans);
    rt->plans = NULL;
    rt->n_plans = 0;
}

void sg_rt_free(sg_rt *rt)
{
    if (!rt)
        return;
    if (rt->main) {
        for (uint32_t i = 0; rt->bound && i < rt->main->n_inputs; i++)
            sg_rt_value_unref(rt->bound[i]);
        for (uint32_t i = 0; rt->results && i < rt->main->n_outputs; i++)
            sg_rt_value_unref(rt->results[i]);
    }
    sg_free(rt->bound);
    sg_free(rt->results);
    sg_free(rt->required);
    free_plans(rt);
    sg_arena_free(rt->arena);
    sg_free(rt);
    sg__rt_pool_session(-1);
}

static sg_status rt_alloc(sg_model *m, const struct sg_rt_opts *opts, sg_rt **out)
{
    sg_rt *rt = sg_calloc(1, sizeof *rt);
    if (!rt)
        return SG_ENOMEM;
    rt->m = m;
    if (opts)
        rt->opts = *opts;
    rt->arena = sg_arena_create();
    if (!rt->arena) {
        sg_free(rt);
        return SG_ENOMEM;
    }
    sg__rt_pool_session(1);
    *out = rt;
    return SG_OK;
}

sg_status sg_rt_create(sg_model *m, const struct sg_rt_opts *opts, sg_rt **out,
                       struct sg_diag *diag)
{
    *out = NULL;
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    if (opts && (unsigned)opts->numerics >= SG_NUMERICS_COUNT)
        return sg_diag_set(diag, SG_EINVAL, "unknown numerics mode %d", (int)opts->numerics);
    /* Kernels call OpenBLAS through wrappers that abort when it cannot be
     * loaded (sg_blas.h); loading it here turns that into an error. */
    sg_status st = sg_blas_load(diag);
    if (st)
        return st;
    sg_rt *rt;
    if (rt_alloc(m, opts, &rt))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    struct build b = {rt, diag, NULL, NULL, 0};
    st = build_plan(&b, m->graph, NULL, &rt->main);
    if (st) {
        if (diag && diag->status == SG_OK)
            sg_diag_set(diag, st, "%s", sg_strerror(st));
        sg_rt_free(rt);
        return st;
    }
    struct rt_plan *p = rt->main;
    rt->bound = sg_calloc(p->n_inputs + 1, sizeof *rt->bound);
    rt->results = sg_calloc(p->n_outputs + 1, sizeof *rt->results);
    rt->required = sg_calloc(p->n_inputs + 1, sizeof *rt->required);
    if (!rt->bound || !rt->results || !rt->required) {
        sg_rt_free(rt);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (!p->consts[p->inputs[i]])
            rt->required[rt->n_required++] = i;
    *out = rt;
    return SG_OK;
}

size_t sg_rt_check(sg_model *m, sg_rt_missing_fn fn, void *ctx)
{
    if (!m->graph)
        return 0;
    sg_rt *rt;
    if (rt_alloc(m, NULL, &rt))
        return 0;
    struct sg_diag d = {0};
    struct build b = {rt, &d, fn, ctx, 0};
    struct rt_plan *p;
    build_plan(&b, m->graph, NULL, &p);
    size_t n = b.n_missing;
    sg_rt_free(rt);
    return n;
}

/* --------------------------------------------------------- inputs */

uint32_t sg_rt_n_inputs(const sg_rt *rt)
{
    return rt->n_required;
}

const sg_value *sg_rt_input(const sg_rt *rt, uint32_t i)
{
    return i < rt->n_required ? rt->main->g->inputs[rt->required[i]] : NULL;
}

uint32_t sg_rt_n_outputs(const sg_rt *rt)
{
    return rt->main->n_outputs;
}

const sg_value *sg_rt_output_info(const sg_rt *rt, uint32_t i)
{
    return i < rt->main->n_outputs ? rt->main->g->outputs[i] : NULL;
}

sg_rt_value *sg_rt_output(const sg_rt *rt, uint32_t i)
{
    return i < rt->main->n_outputs ? rt->results[i] : NULL;
}

static const char *kind_name(enum sg_rt_kind k)
{
    return k == SG_RT_SEQUENCE ? "a sequence" : k == SG_RT_OPTIONAL ? "an optional" : "a tensor";
}

static enum sg_rt_kind type_kind(const sg_type *t)
{
    return t->kind == SG_TYPE_SEQUENCE   ? SG_RT_SEQUENCE
           : t->kind == SG_TYPE_OPTIONAL ? SG_RT_OPTIONAL
                                         : SG_RT_TENSOR;
}

/* Check v against the declared tensor type t (fixed dims only). */
static sg_status check_tensor(const char *name, const sg_type *t, const sg_rt_value *v,
                              struct sg_diag *diag)
{
    char want[512], got[512];
    if (t->has_elem_type && t->elem_type != v->dtype)
        return sg_diag_set(diag, SG_ETYPE, "input '%s': got %s, the model expects %s", name,
                           sg_rt_value_format(v, got, sizeof got),
                           sg_type_format(t, want, sizeof want));
    if (!t->shape)
        return SG_OK;
    bool bad = t->shape->rank != v->rank;
    for (uint32_t d = 0; !bad && d < v->rank; d++)
        if (t->shape->dims[d].kind == SG_DIM_VALUE && t->shape->dims[d].value != v->dims[d])
            bad = true;
    if (bad)
        return sg_diag_set(diag, SG_ESHAPE, "input '%s': got shape %s, the model expects %s", name,
                           sg_rt_dims_format(v->dims, v->rank, got, sizeof got),
                           sg_type_format(t, want, sizeof want));
    return SG_OK;
}

sg_status sg_rt_set_input(sg_rt *rt, const char *name, sg_rt_value *v, struct sg_diag *diag)
{
    struct rt_plan *p = rt->main;
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        const sg_value *gv = p->g->inputs[i];
        if (strcmp(gv->name, name) != 0)
            continue;
        const sg_type *t = gv->type;
        if (t && t->kind != SG_TYPE_NONE && type_kind(t) != v->kind)
            return sg_diag_set(diag, SG_ETYPE, "input '%s': got %s, the model expects %s", name,
                               kind_name(v->kind), kind_name(type_kind(t)));
        if (t && t->kind == SG_TYPE_TENSOR && v->kind == SG_RT_TENSOR) {
            sg_status st = check_tensor(name, t, v, diag);
            if (st)
                return st;
        }
        sg_rt_value_unref(rt->bound[i]);
        rt->bound[i] = sg_rt_value_ref(v);
        return SG_OK;
    }
    return sg_diag_set(diag, SG_ENOTFOUND, "the model has no input named '%s'", name);
}

/* Symbolic dims ("batch") must mean one number across all inputs. */
static sg_status check_symbols(sg_rt *rt, struct sg_diag *diag)
{
    struct rt_plan *p = rt->main;
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        const sg_value *a = p->g->inputs[i];
        sg_rt_value *va = rt->bound[i];
        if (!va || va->kind != SG_RT_TENSOR || !a->type || a->type->kind != SG_TYPE_TENSOR ||
            !a->type->shape)
            continue;
        for (uint32_t d = 0; d < a->type->shape->rank && d < va->rank; d++) {
            const sg_dim *da = &a->type->shape->dims[d];
            if (da->kind != SG_DIM_PARAM || !da->param || !*da->param)
                continue;
            for (uint32_t j = 0; j < i; j++) {
                const sg_value *b = p->g->inputs[j];
                sg_rt_value *vb = rt->bound[j];
                if (!vb || vb->kind != SG_RT_TENSOR || !b->type ||
                    b->type->kind != SG_TYPE_TENSOR || !b->type->shape)
                    continue;
                for (uint32_t e = 0; e < b->type->shape->rank && e < vb->rank; e++) {
                    const sg_dim *db = &b->type->shape->dims[e];
                    if (db->kind == SG_DIM_PARAM && db->param &&
                        strcmp(db->param, da->param) == 0 && vb->dims[e] != va->dims[d]) {
                        char sa[256], sb[256];
                        return sg_diag_set(
                            diag, SG_ESHAPE,
                            "inputs '%s' %s and '%s' %s disagree on dimension '%s' (%lld vs %lld)",
                            b->name, sg_rt_dims_format(vb->dims, vb->rank, sb, sizeof sb), a->name,
                            sg_rt_dims_format(va->dims, va->rank, sa, sizeof sa), da->param,
                            (long long)vb->dims[e], (long long)va->dims[d]);
                    }
                }
            }
        }
    }
    return SG_OK;
}

/* ------------------------------------------------------------ running */

static sg_status run_plan(sg_rt *rt, struct rt_plan *p, struct rt_frame *parent,
                          sg_rt_value *const *inputs, uint32_t n_inputs, sg_rt_value **outputs,
                          int depth, struct sg_diag *diag);

static float round_half(float x, bool saturate)
{
    float r = sg_half_to_float(sg_float_to_half(x));
    if (saturate && isinf(r))
        r = r > 0 ? 65504.0f : -65504.0f;
    return r;
}

/* A float32 tensor rounded to float16 values: in place when v is exclusive,
 * else a rounded copy replacing *slot. */
static sg_status round_value(sg_rt_value **slot, bool saturate)
{
    sg_rt_value *v = *slot;
    if (!v || v->kind != SG_RT_TENSOR || v->dtype != SG_DTYPE_FLOAT)
        return SG_OK;
    if (!sg__rt_exclusive(v)) {
        sg_rt_value *c;
        sg_status st = sg__rt_tensor_copy(v, &c);
        if (st)
            return st;
        sg_rt_value_unref(v);
        *slot = v = c;
    }
    float *f = v->data;
    for (int64_t i = 0; i < v->numel; i++)
        f[i] = round_half(f[i], saturate);
    return SG_OK;
}

static int32_t value_dtype(const sg_rt_value *v)
{
    return v ? v->dtype : SG_DTYPE_UNDEFINED;
}

bool sg__rt_input_dead(const struct sg__kpriv *p, uint32_t i, const sg_rt_value *v)
{
    const struct rt_node *rn = p->pn;
    if (!rn || i >= rn->node->n_inputs || rn->in[i] == NO_SLOT || p->frame->vals[rn->in[i]] != v)
        return false;
    for (uint32_t r = 0; r < rn->n_release; r++)
        if (rn->release[r] == rn->in[i])
            return true;
    return false;
}

static sg_status run_node(sg_rt *rt, struct rt_frame *fr, struct rt_node *rn, struct sg_diag *diag)
{
    sg_node *n = rn->node;
    sg_rt_value **vals = fr->vals;
    char label[512];
    sg_status st = SG_OK;
    sg_rt_value *in_buf[16], *out_buf[16];
    sg_rt_value **ins = n->n_inputs <= 16 ? in_buf : sg_calloc(n->n_inputs, sizeof *ins);
    sg_rt_value **outs = n->n_outputs <= 16 ? out_buf : sg_calloc(n->n_outputs, sizeof *outs);
    bool *owned_in = NULL;
    struct sg__kpriv priv = {0}; /* scratch lives until the outputs are kept */
    if (!ins || !outs) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t j = 0; j < n->n_outputs; j++)
        outs[j] = NULL;
    for (uint32_t j = 0; j < n->n_inputs; j++) {
        ins[j] = rn->in[j] == NO_SLOT ? NULL : vals[rn->in[j]];
        if (rn->in[j] != NO_SLOT && !ins[j]) {
            st = sg_diag_set(diag, SG_EUNDEF, "%s: input %u '%s' has no value",
                             sg__rt_node_label(n, rn->opset, label, sizeof label), j,
                             n->inputs[j]->name);
            goto out;
        }
    }

    /* A Clip or Relu fused into the node producing its input (fuse_clamps):
     * that value already is this node's output. */
    if (rn->pass) {
        outs[0] = sg_rt_value_ref(ins[0]);
        goto keep;
    }

    /* The kernel for the dtype actually seen. */
    const struct sg_kernel *kern = rn->kernel;
    int ti = kern ? kern->type_input : -1;
    if (!kern) {
        const char *why = "no kernel";
        kern = sg_kernel_find(n->domain, n->op_type, rn->opset, SG_DTYPE_UNDEFINED, &why);
        ti = kern ? kern->type_input : -1;
    }
    if (kern && ti >= 0 && (uint32_t)ti < n->n_inputs && value_dtype(ins[ti]) != rn->kernel_dtype) {
        const char *why = "no kernel";
        int32_t dt = value_dtype(ins[ti]);
        kern = sg_kernel_find(n->domain, n->op_type, rn->opset, dt, &why);
        if (kern) {
            rn->kernel = kern;
            rn->kernel_dtype = dt;
        }
    }
    if (!kern) {
        int32_t dt = ti >= 0 && (uint32_t)ti < n->n_inputs ? value_dtype(ins[ti]) : 0;
        sg__rt_node_label(n, rn->opset, label, sizeof label);
        if (dt)
            st = sg_diag_set(diag, SG_EUNSUPPORTED, "%s: no kernel for %s inputs", label,
                             sg_dtype_name(dt));
        else
            st = sg_diag_set(diag, SG_EUNSUPPORTED, "%s: no kernel", label);
        goto out;
    }
    if (rn->post && !(kern->flags & SG_KF_POST_CLAMP)) {
        st = sg_diag_set(diag, SG_EUNSUPPORTED,
                         "%s: a Clip or Relu was fused into a kernel that "
                         "cannot apply it",
                         sg__rt_node_label(n, rn->opset, label, sizeof label));
        goto out;
    }
    if (!(kern->flags & SG_KF_NONTENSOR))
        for (uint32_t j = 0; j < n->n_inputs; j++)
            if (ins[j] && ins[j]->kind != SG_RT_TENSOR) {
                char got[300];
                st = sg_diag_set(diag, SG_ETYPE, "%s: input %u '%s' is %s, a tensor is needed",
                                 sg__rt_node_label(n, rn->opset, label, sizeof label), j,
                                 n->inputs[j]->name, sg_rt_value_format(ins[j], got, sizeof got));
                goto out;
            }

    /* Emulated float16: round float32 inputs at the node boundary. */
    int32_t cdt = SG_DTYPE_FLOAT;
    bool fp16_in = false, fp16_out = false, sat = rt->opts.numerics == SG_NUMERICS_FP16_SAT;
    if (rt->opts.numerics != SG_NUMERICS_FP32) {
        if (rt->opts.fp16_sides) {
            unsigned sides = rt->opts.fp16_sides(n, rt->opts.fp16_sides_ctx);
            fp16_in = sides & SG_RT_FP16_INPUTS;
            fp16_out = sides & SG_RT_FP16_OUTPUTS;
            cdt = fp16_in ? SG_DTYPE_FLOAT16 : SG_DTYPE_FLOAT;
        } else {
            cdt = rt->opts.compute_dtype ? rt->opts.compute_dtype(n, rt->opts.compute_dtype_ctx)
                                         : SG_DTYPE_FLOAT16;
            fp16_in = fp16_out = cdt == SG_DTYPE_FLOAT16;
        }
        if (fp16_in) {
            owned_in = sg_calloc(n->n_inputs + 1, sizeof *owned_in);
            if (!owned_in) {
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
                goto out;
            }
            for (uint32_t j = 0; j < n->n_inputs; j++) {
                if (!ins[j] || ins[j]->kind != SG_RT_TENSOR || ins[j]->dtype != SG_DTYPE_FLOAT)
                    continue;
                sg_rt_value_ref(ins[j]);
                owned_in[j] = true;
                if ((st = round_value(&ins[j], sat))) {
                    sg_diag_set(diag, st, "out of memory");
                    goto out;
                }
            }
        }
    } else {
        for (uint32_t j = 0; j < n->n_inputs && j < 1; j++)
            if (ins[j] && ins[j]->kind == SG_RT_TENSOR)
                cdt = ins[j]->dtype;
    }

    priv.rt = rt;
    priv.frame = fr;
    priv.pn = rn;
    priv.max_tensor_bytes = rt->opts.max_tensor_bytes;
    priv.max_loop_iterations =
        rt->opts.max_loop_iterations ? rt->opts.max_loop_iterations : SG_RT_MAX_LOOP_ITERATIONS;
    struct sg_kctx k = {n,   rt->m, rn->opset, cdt,  n->n_inputs, n->n_outputs,
                        ins, outs,  diag,      &priv};
    st = kern->run(&k);
    if (st) {
        if (diag && diag->status == SG_OK)
            sg_diag_set(diag, st, "%s: %s", sg__rt_node_label(n, rn->opset, label, sizeof label),
                        sg_strerror(st));
        goto out;
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) {
        if (!n->outputs[j])
            continue;
        if (!outs[j]) {
            st = sg_diag_set(diag, SG_EUNDEF, "%s: the kernel produced no output %u",
                             sg__rt_node_label(n, rn->opset, label, sizeof label), j);
            goto out;
        }
        if (rt->opts.max_tensor_bytes && outs[j]->kind == SG_RT_TENSOR &&
            (uint64_t)outs[j]->numel * sg_rt_elem_size(outs[j]->dtype) >
                rt->opts.max_tensor_bytes) {
            char shape[300];
            st = sg_diag_set(diag, SG_ETOOBIG, "%s: output %u %s is over the limit of %zu bytes",
                             sg__rt_node_label(n, rn->opset, label, sizeof label), j,
                             sg_rt_value_format(outs[j], shape, sizeof shape),
                             rt->opts.max_tensor_bytes);
            goto out;
        }
        if (sg__rt_intern_strings(outs[j]) || (fp16_out && round_value(&outs[j], sat))) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            goto out;
        }
    }
keep: /* a fused pass-through node's output is observed like any other */
    for (uint32_t j = 0; j < n->n_outputs; j++) {
        if (!n->outputs[j])
            continue;
        bool seen = fr->depth == 0 ? !rt->opts.observe_graph_outputs ||
                                         (n->outputs[j]->flags & SG_VALUE_OUTPUT)
                                   : rt->opts.observe_subgraphs && !rt->opts.observe_graph_outputs;
        if (rt->opts.on_output && seen) {
            st = rt->opts.on_output(n, j, outs[j], fr->depth, rt->opts.observe_ctx, diag);
            if (st)
                goto out;
        }
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) {
        if (rn->out[j] != NO_SLOT) {
            sg_rt_value_unref(vals[rn->out[j]]);
            vals[rn->out[j]] = outs[j];
            outs[j] = NULL;
        }
    }
    for (uint32_t r = 0; r < rn->n_release; r++) {
        sg_rt_value_unref(vals[rn->release[r]]);
        vals[rn->release[r]] = NULL;
    }
out:
    sg__kscratch_release(&priv);
    if (outs)
        for (uint32_t j = 0; j < n->n_outputs; j++)
            sg_rt_value_unref(outs[j]);
    if (owned_in)
        for (uint32_t j = 0; j < n->n_inputs; j++)
            if (owned_in[j])
                sg_rt_value_unref(ins[j]);
    sg_free(owned_in);
    if (ins != in_buf)
        sg_free(ins);
    if (outs != out_buf)
        sg_free(outs);
    return st;
}

static sg_status run_plan(sg_rt *rt, struct rt_plan *p, struct rt_frame *parent,
                          sg_rt_value *const *inputs, uint32_t n_inputs, sg_rt_value **outputs,
                          int depth, struct sg_diag *diag)
{
    sg_status st = SG_OK;
    struct rt_frame fr = {p, NULL, parent, depth};
    fr.vals = sg_calloc(p->n_slots + 1, sizeof *fr.vals);
    if (!fr.vals)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    for (uint32_t s = 0; s < p->n_slots; s++)
        fr.vals[s] = sg_rt_value_ref(p->consts[s]);
    for (uint32_t i = 0; i < p->n_inputs && i < n_inputs; i++) {
        if (!inputs[i])
            continue;
        sg_rt_value_unref(fr.vals[p->inputs[i]]);
        fr.vals[p->inputs[i]] = sg_rt_value_ref(inputs[i]);
    }
    for (uint32_t c = 0; c < p->n_caps; c++) {
        sg_rt_value *v = parent ? parent->vals[p->cap_outer[c]] : NULL;
        if (!v) {
            st = sg_diag_set(diag, SG_EUNDEF, "outer value '%s' is not available",
                             p->slot_val[p->caps[c]]->name);
            goto out;
        }
        fr.vals[p->caps[c]] = sg_rt_value_ref(v);
    }
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        st = run_node(rt, &fr, &p->nodes[i], diag);
        if (st)
            goto out;
    }
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        sg_rt_value *v = fr.vals[p->outputs[i]];
        if (!v) {
            st = sg_diag_set(diag, SG_EUNDEF, "graph output '%s' was not computed",
                             p->slot_val[p->outputs[i]]->name);
            for (uint32_t j = 0; j < i; j++) {
                sg_rt_value_unref(outputs[j]);
                outputs[j] = NULL;
            }
            goto out;
        }
        outputs[i] = sg_rt_value_ref(v);
    }
out:
    for (uint32_t s = 0; s < p->n_slots; s++)
        sg_rt_value_unref(fr.vals[s]);
    sg_free(fr.vals);
    return st;
}

sg_status sg_rt_run(sg_rt *rt, struct sg_diag *diag)
{
    struct rt_plan *p = rt->main;
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        sg_rt_value_unref(rt->results[i]);
        rt->results[i] = NULL;
    }
    for (uint32_t r = 0; r < rt->n_required; r++)
        if (!rt->bound[rt->required[r]])
            return sg_diag_set(diag, SG_EUNDEF, "input '%s' was not given",
                               p->g->inputs[rt->required[r]]->name);
    sg_status st = check_symbols(rt, diag);
    if (st)
        return st;
    if (rt->opts.threads > 0)
        sg_blas_set_threads(rt->opts.threads);
    return run_plan(rt, p, NULL, rt->bound, p->n_inputs, rt->results, 0, diag);
}

/* ------------------------------------------------------ subgraphs */

sg_status sg_ksubgraph_run(struct sg_kctx *k, const sg_graph *g, uint32_t n_in,
                           sg_rt_value *const *in, sg_rt_value **out)
{
    const struct rt_node *rn = k->priv->pn;
    struct rt_plan *sp = NULL;
    for (uint32_t i = 0; i < g->n_outputs; i++)
        out[i] = NULL; /* what the caller frees, whatever fails below */
    for (uint32_t i = 0; i < rn->n_subs; i++)
        if (rn->subs[i]->g == g)
            sp = rn->subs[i];
    if (!sp)
        return sg_kfail(k, SG_EINVAL, "graph '%s' is not a subgraph of this node",
                        g->name ? g->name : "");
    if (n_in != sp->n_inputs)
        return sg_kfail(k, SG_EARITY, "subgraph '%s' takes %u inputs, %u given",
                        g->name ? g->name : "", sp->n_inputs, n_in);
    sg_status st = run_plan(k->priv->rt, sp, k->priv->frame, in, n_in, out,
                            k->priv->frame->depth + 1, k->diag);
    if (st) {
        char label[512];
        sg_diag_prefix(k->diag, "in subgraph '%s' of %s", g->name ? g->name : "",
                       sg__rt_node_label(k->node, k->opset, label, sizeof label));
    }
    return st;
}

/* ------------------------------------------------------ one node */

/* A plan holding node n alone: slots for its inputs, its outputs and the
 * values its subgraphs read from n's graph, all filled by the caller. */
static sg_status plan_node(struct build *b, sg_node *n, struct rt_plan **out)
{
    sg_rt *rt = b->rt;
    struct rt_plan *p = new_plan(rt, n->graph, NULL);
    if (!p)
        return SG_ENOMEM;
    p->n_nodes = 1;
    p->nodes = sg_arena_calloc(rt->arena, 1, sizeof *p->nodes);
    if (!p->nodes)
        return SG_ENOMEM;
    struct rt_node *rn = &p->nodes[0];
    rn->node = n;
    rn->opset = sg_model_opset(rt->m, n->domain);
    rn->in = sg_arena_calloc(rt->arena, n->n_inputs + 1, sizeof *rn->in);
    rn->out = sg_arena_calloc(rt->arena, n->n_outputs + 1, sizeof *rn->out);
    if (!rn->in || !rn->out)
        return SG_ENOMEM;
    for (uint32_t j = 0; j < n->n_inputs; j++) {
        rn->in[j] = NO_SLOT;
        if (n->inputs[j] && add_slot(rt, p, n->inputs[j], &rn->in[j]))
            return SG_ENOMEM;
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) {
        rn->out[j] = NO_SLOT;
        if (n->outputs[j] && add_slot(rt, p, n->outputs[j], &rn->out[j]))
            return SG_ENOMEM;
    }
    sg_status st = plan_kernel(b, p, rn);
    if (!st)
        *out = p; /* no consts: the caller fills every slot */
    return st;
}

sg_status sg_rt_run_node(sg_model *m, sg_node *n, const struct sg_rt_opts *opts,
                         sg_rt_lookup_fn lookup, void *ctx, sg_rt_value **out, struct sg_diag *diag)
{
    for (uint32_t j = 0; j < n->n_outputs; j++)
        out[j] = NULL;
    if (opts && (unsigned)opts->numerics >= SG_NUMERICS_COUNT)
        return sg_diag_set(diag, SG_EINVAL, "unknown numerics mode %d", (int)opts->numerics);
    sg_status st = sg_blas_load(diag); /* as in sg_rt_create */
    if (st)
        return st;
    sg_rt *rt;
    if (rt_alloc(m, opts, &rt))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    rt->opts.on_output = NULL;
    struct build b = {rt, diag, NULL, NULL, 0};
    struct rt_plan *p = NULL;
    struct rt_frame fr = {NULL, NULL, NULL, 0};
    char label[512];
    st = plan_node(&b, n, &p);
    if (st) {
        if (!diag || diag->status == SG_OK)
            sg_diag_set(diag, st, "%s: %s",
                        sg__rt_node_label(n, sg_model_opset(m, n->domain), label, sizeof label),
                        sg_strerror(st));
        goto out;
    }
    fr.plan = p;
    fr.vals = sg_calloc(p->n_slots + 1, sizeof *fr.vals);
    if (!fr.vals) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    struct rt_node *rn = &p->nodes[0];
    for (uint32_t s = 0; s < p->n_slots; s++) {
        const sg_value *v = p->slot_val[s];
        if (v->producer == n)
            continue;
        sg_rt_value *val = lookup ? lookup(v, ctx) : NULL;
        if (!val) {
            st = sg_diag_set(diag, SG_EUNDEF, "%s: no value for '%s'",
                             sg__rt_node_label(n, rn->opset, label, sizeof label), v->name);
            goto out;
        }
        fr.vals[s] = sg_rt_value_ref(val);
    }
    if ((st = run_node(rt, &fr, rn, diag)))
        goto out;
    for (uint32_t j = 0; j < n->n_outputs; j++)
        if (rn->out[j] != NO_SLOT)
            out[j] = sg_rt_value_ref(fr.vals[rn->out[j]]);
out:
    if (fr.vals)
        for (uint32_t s = 0; s < p->n_slots; s++)
            sg_rt_value_unref(fr.vals[s]);
    sg_free(fr.vals);
    sg_rt_free(rt);
    return st;
}
