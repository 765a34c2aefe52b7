/*
 * to_fp16.c - `to-fp16`: run the graph in float16 except a keep list (op
 * types, default LayerNormalization, Softmax, ReduceMean, Exp, Log, Pow,
 * and node names), with Casts where float16 and float32 parts meet: the
 * graph-level analogue of ATC's precision_mode=force_fp16 with keep_dtype.
 *
 * Converted: float32 outputs of converted nodes, the float32 constants they
 * read (a float16 copy; values beyond the range are clamped to +-65504 and
 * reported), and float32 settings of Cast `to`, Constant and ConstantOfShape
 * values and random/EyeLike `dtype`. Kept in float32: keep-listed nodes,
 * nodes of other domains or of unknown element types, ops without float16
 * support, If/Loop/Scan themselves (their bodies are converted with
 * float32 boundaries), and the float32-only inputs of Resize and Upsample.
 *
 * Keeps intact: graph input and output names and, unless keep_io is false,
 * their float32 types (a Cast produces each output under its own name);
 * subgraph inputs and outputs stay float32; Shape and Size read whatever
 * type they get. One Cast per value and direction is shared by all readers.
 */
#include "pass_impl.h"
#include "sg_alloc.h"

#include <math.h>
#include <string.h>

enum { OPT_KEEP_OPS, OPT_KEEP_NODES, OPT_KEEP_IO, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_KEEP_OPS] = {"keep_ops", SG_OPT_STRINGS,
                      "LayerNormalization,Softmax,ReduceMean,Exp,Log,Pow",
                      "op types kept in float32"},
    [OPT_KEEP_NODES] = {"keep_nodes", SG_OPT_STRINGS, NULL, "node names kept in float32"},
    [OPT_KEEP_IO] = {"keep_io", SG_OPT_BOOL, "true",
                     "keep main graph inputs and outputs float32 (Casts at the boundary)"},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

enum { KEPT = 0, CONV = 1, AGNOSTIC = 2 };

static const char *const no_fp16[] = {"NonMaxSuppression", "QuantizeLinear", "DequantizeLinear",
                                      "DynamicQuantizeLinear", "TfIdfVectorizer"};

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    sg_model *m;
    int64_t opset;
    struct sg__strmap keep_nodes;
    struct sg__ptrset converted;  /* values made float16 by this pass */
    struct sg__ptrset made;       /* Cast nodes this pass created */
    struct sg__strmap to16, to32; /* per graph: value name -> its converted twin */
};

static bool default_domain(const sg_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static bool has_subgraph(const sg_node *n)
{
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a]->g || n->attrs[a]->n_graphs)
            return true;
    return false;
}

static bool fp32_only(const struct ctx *c, const sg_node *n, uint32_t slot)
{
    if (strcmp(n->op_type, "Resize") == 0)
        return slot == (c->opset && c->opset < 11 ? 1u : 2u);
    if (strcmp(n->op_type, "Upsample") == 0)
        return slot == 1;
    return false;
}

static bool was_converted(const struct ctx *c, const sg_value *v)
{
    for (; v; v = v->outer)
        if (sg__ptrset_has(&c->converted, v))
            return true;
    return false;
}

static int classify(struct ctx *c, sg_node *n)
{
    bool involved = false, unknown = false;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i]) {
            int32_t d = sg_value_dtype(n->inputs[i]);
            involved |= d == SG_DTYPE_FLOAT;
            unknown |= d == 0;
        }
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i]) {
            int32_t d = sg_value_dtype(n->outputs[i]);
            involved |= d == SG_DTYPE_FLOAT;
            unknown |= d == 0;
        }
    if (!involved)
        return KEPT;
    if (default_domain(n) && !strcmp(n->op_type, "Cast") && n->n_inputs && n->inputs[0]) {
        /* Cast reads any type. Casts to float16 (and to non-float types)
         * stay as they are; a Cast from float16 up to float32 is an explicit
         * boundary, kept; a Cast to float32 from anything else is converted
         * to make float16. */
        int32_t in = sg_value_dtype(n->inputs[0]);
        if (sg_attr_int(n, "to", 0) != SG_DTYPE_FLOAT)
            return AGNOSTIC;
        if (in == SG_DTYPE_FLOAT16)
            return KEPT;
    }
    const char *label = sg__node_label(n);
    const char *why = NULL;
    if (!default_domain(n))
        why = "custom domain";
    else if (has_subgraph(n))
        why = "has subgraphs; its bodies are converted on their own";
    else if (!strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size"))
        return AGNOSTIC;
    else if (sg__opt_has(&c->opts[OPT_KEEP_OPS], n->op_type))
        why = "keep_ops";
    else if (n->name && sg__strmap_get(&c->keep_nodes, n->name))
        why = "keep_nodes";
    else if (unknown)
        why = "element type unknown";
    else if (!strcmp(n->op_type, "Constant") && !sg_node_attr(n, "value"))
        why = "Constant without a tensor value";
    for (size_t i = 0; !why && i < sizeof no_fp16 / sizeof no_fp16[0]; i++)
        if (!strcmp(n->op_type, no_fp16[i]))
            why = "no float16 support";
    if (why) {
        sg_report_info(c->rep, "kept in float32", "%s (%s)", label, why);
        return KEPT;
    }
    return CONV;
}

/* A float16 copy of a float32 tensor, clamped to the float16 range. */
static sg_tensor *half_tensor(struct ctx *c, sg_tensor *t, const char *name)
{
    size_t nbytes;
    struct sg_diag d = {0};
    const float *src = sg_tensor_data(c->m, t, &nbytes, &d);
    if (!src) {
        sg_diag_set(c->diag, d.status, "%s", d.msg);
        return NULL;
    }
    size_t count = nbytes / 4, clamped = 0;
    uint16_t *dst = sg_arena_alloc(c->m->arena, count * 2 + 1);
    sg_tensor *h = dst ? sg_tensor_create(c->m, name, SG_DTYPE_FLOAT16, t->dims, t->rank) : NULL;
    if (!h) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        float f = src[i];
        if (f > 65504.0f || f < -65504.0f) {
            f = f > 0 ? 65504.0f : -65504.0f;
            clamped++;
        }
        dst[i] = sg_float_to_half(f);
    }
    if (sg_tensor_set_raw(c->m, h, dst, count * 2, NULL)) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    if (t->extra && t->extra->doc) {
        sg_tensor_extra *x = sg_tensor_make_extra(c->m, h);
        if (!x) {
            sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            return NULL;
        }
        x->doc = t->extra->doc;
    }
    if (clamped)
        sg_report_info(c->rep, "values clamped to +-65504", "%s: %zu", name ? name : "(tensor)",
                       clamped);
    return h;
}

static sg_status retype(struct ctx *c, sg_value *v, int32_t dtype)
{
    sg_type *t = sg_type_with_elem(c->m, v->type, dtype);
    if (!t)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_value_set_type(v, t);
    return SG_OK;
}

/* Phase 1: a converted node computes in float16. */
static sg_status convert_node(struct ctx *c, sg_node *n)
{
    sg_status st;
    bool float_out = false;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        sg_value *v = n->outputs[i];
        if (!v || sg_value_dtype(v) != SG_DTYPE_FLOAT)
            continue;
        float_out = true;
        if ((st = retype(c, v, SG_DTYPE_FLOAT16)) || sg__ptrset_add(&c->converted, v))
            return st ? st : sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    const char *op = n->op_type;
    st = SG_OK;
    if (!strcmp(op, "Cast")) {
        if (sg_attr_int(n, "to", 0) == SG_DTYPE_FLOAT)
            st = sg_node_set_attr_int(n, "to", SG_DTYPE_FLOAT16);
    } else if (!strcmp(op, "Constant") || !strcmp(op, "ConstantOfShape")) {
        sg_attr *at = sg_node_attr(n, "value");
        if (at && at->t && at->t->dtype == SG_DTYPE_FLOAT) {
            sg_tensor *h = half_tensor(c, at->t, at->t->name);
            if (!h)
                return SG_ENOMEM;
            st = sg_node_set_attr_tensor(n, "value", h);
        } else if (!at && float_out) { /* ConstantOfShape's default: float32 zero */
            int64_t one = 1;
            uint16_t zero = 0;
            sg_tensor *h = sg_tensor_create(c->m, NULL, SG_DTYPE_FLOAT16, &one, 1);
            void *data = sg_arena_memdup(c->m->arena, &zero, 2);
            if (!h || !data || sg_tensor_set_raw(c->m, h, data, 2, NULL))
                return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            st = sg_node_set_attr_tensor(n, "value", h);
        }
    } else if (float_out &&
               (!strcmp(op, "EyeLike") || !strncmp(op, "Random", 6) || !strcmp(op, "Bernoulli"))) {
        if (sg_node_attr(n, "dtype") || !strcmp(op, "RandomNormal") || !strcmp(op, "RandomUniform"))
            st = sg_node_set_attr_int(n, "dtype", SG_DTYPE_FLOAT16);
    }
    if (st)
        return sg_diag_set(c->diag, st, "out of memory");
    if (float_out)
        sg_report_change(c->rep, "node converted to float16", "%s", sg__node_label(n));
    return SG_OK;
}

static sg_node *new_cast(struct ctx *c, sg_graph *g, const char *base, int32_t to)
{
    const char *name = sg_model_fresh_name(c->m, base);
    sg_node *cast = name ? sg_node_create(g, "Cast", NULL, name, c->diag) : NULL;
    if (!cast || sg_node_set_attr_int(cast, "to", to) || sg__ptrset_add(&c->made, cast)) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    cast->mark = AGNOSTIC; /* phase 2 leaves the Casts it made alone */
    return cast;
}

/* The value carrying v's data as `want` (float16 or float32) in g. */
static sg_value *twin(struct ctx *c, sg_graph *g, sg_value *v, int32_t want)
{
    struct sg__strmap *cache = want == SG_DTYPE_FLOAT16 ? &c->to16 : &c->to32;
    sg_value *t = sg__strmap_get(cache, v->name);
    if (t)
        return t;
    char base[600];
    const char *suffix = want == SG_DTYPE_FLOAT16 ? "fp16" : "fp32";
    snprintf(base, sizeof base, "%s_%s", v->name, suffix);
    if (want == SG_DTYPE_FLOAT16 && v->init && !v->outer && !(v->flags & SG_VALUE_INPUT)) {
        const char *name = sg_model_fresh_name(c->m, base);
        sg_tensor *h = name ? half_tensor(c, v->init, name) : NULL;
        if (!h)
            return NULL;
        sg_type *type = sg_type_with_elem(c->m, v->type, SG_DTYPE_FLOAT16);
        if (!type || sg_graph_add_value(g, name, type, &t, c->diag) ||
            sg_value_set_initializer(t, h)) {
            sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            return NULL;
        }
        sg_report_change(c->rep, "initializer converted", "%s", v->name);
    } else {
        char cname[640];
        snprintf(cname, sizeof cname, "%s_to_%s", v->name, suffix);
        sg_node *cast = new_cast(c, g, cname, want);
        const char *name = cast ? sg_model_fresh_name(c->m, base) : NULL;
        sg_type *type = name ? sg_type_with_elem(c->m, v->type, want) : NULL;
        if (!type || sg_graph_add_value(g, name, type, &t, c->diag) ||
            sg_node_set_input(cast, 0, v) || sg_node_set_output(cast, 0, t)) {
            sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            return NULL;
        }
        if (v->producer && v->producer->graph == g)
            sg_node_move_after(cast, v->producer);
        else if (g->first != cast)
            sg_node_move_before(cast, g->first);
        sg_report_change(c->rep, "Cast inserted", "%s to %s", v->name, sg_dtype_name(want));
    }
    if (want == SG_DTYPE_FLOAT16 && sg__ptrset_add(&c->converted, t))
        t = NULL;
    if (!t || sg__strmap_put(cache, v->name, t)) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    return t;
}

/* Phase 3: a graph output that became float16 stays float32 under its name. */
static sg_status keep_output(struct ctx *c, sg_graph *g, sg_value *v)
{
    sg_node *p = v->producer;
    if (!p || p->graph != g || !sg__ptrset_has(&c->converted, v))
        return SG_OK;
    char base[600];
    snprintf(base, sizeof base, "%s_to_fp32", v->name);
    sg_node *cast = new_cast(c, g, base, SG_DTYPE_FLOAT);
    if (!cast)
        return SG_ENOMEM;
    sg_status st = sg_node_insert_after_output(p, v->producer_index, cast, c->diag);
    if (st)
        return st;
    sg_value *mid = cast->inputs[0];
    if ((st = retype(c, v, SG_DTYPE_FLOAT)) || (st = retype(c, mid, SG_DTYPE_FLOAT16)))
        return st;
    /* Converted readers take the float16 value straight from the producer. */
    for (uint32_t u = v->n_uses; u-- > 0;) {
        sg_use use = v->uses[u];
        if (use.index == SG_USE_IMPLICIT || use.node == cast || use.node->mark == KEPT)
            continue;
        if ((st = sg_node_set_input(use.node, (uint32_t)use.index, mid)))
            return sg_diag_set(c->diag, st, "out of memory");
    }
    if (sg__ptrset_add(&c->converted, mid))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_report_change(c->rep, "Cast inserted", "%s to float32 (graph output)", v->name);
    return SG_OK;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    sg_status st = SG_OK;
    sg__strmap_free(&c->to16);
    sg__strmap_free(&c->to32);
    for (sg_node *n = g->first; n; n = n->next)
        n->mark = sg__ptrset_has(&c->made, n) ? AGNOSTIC : (uint32_t)classify(c, n);
    for (sg_node *n = g->first; n && !st; n = n->next)
        if (n->mark == CONV && !sg__ptrset_has(&c->made, n))
            st = convert_node(c, n);
    bool main = g->kind == SG_GRAPH_MAIN;
    if (!st && main && !c->opts[OPT_KEEP_IO].b) {
        for (uint32_t i = 0; i < g->n_inputs && !st; i++) {
            sg_value *v = g->inputs[i];
            if (v->init || sg_value_dtype(v) != SG_DTYPE_FLOAT)
                continue;
            if (!(st = retype(c, v, SG_DTYPE_FLOAT16)) && sg__ptrset_add(&c->converted, v))
                st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            if (!st)
                sg_report_change(c->rep, "graph input made float16", "%s", v->name);
        }
    }
    if (!main || c->opts[OPT_KEEP_IO].b)
        for (uint32_t i = 0; i < g->n_outputs && !st; i++)
            if (sg_value_dtype(g->outputs[i]) == SG_DTYPE_FLOAT16)
                st = keep_output(c, g, g->outputs[i]);
    /* Phase 2: where a reader expects the other precision, give it a twin. */
    for (sg_node *n = g->first; n && !st; n = n->next) {
        if (n->mark == AGNOSTIC)
            continue;
        for (uint32_t i = 0; i < n->n_inputs && !st; i++) {
            sg_value *v = n->inputs[i];
            if (!v)
                continue;
            int32_t d = sg_value_dtype(v), want = d;
            bool cast = !strcmp(n->op_type, "Cast"); /* reads any type */
            if (n->mark == CONV && !cast && (d == SG_DTYPE_FLOAT || d == SG_DTYPE_FLOAT16))
                want = fp32_only(c, n, i) ? SG_DTYPE_FLOAT : SG_DTYPE_FLOAT16;
            else if (n->mark == KEPT && d == SG_DTYPE_FLOAT16 && was_converted(c, v))
                want = SG_DTYPE_FLOAT;
            if (want == d)
                continue;
            sg_value *t = twin(c, g, v, want);
            if (!t)
                return c->diag && c->diag->status ? c->diag->status : SG_ENOMEM;
            if ((st = sg_node_set_input(n, i, t)))
                st = sg_diag_set(c->diag, st, "out of memory");
        }
    }
    /* Float32 constants that only converted nodes read are gone now. */
    for (uint32_t i = g->n_inits; !st && i-- > 0;) {
        sg_value *v = g->inits[i];
        if (v->n_uses || (v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT)) ||
            !sg__strmap_get(&c->to16, v->name))
            continue;
        if ((st = sg_value_set_initializer(v, NULL)) || (st = sg_value_remove(v)))
            st = sg_diag_set(c->diag, st, "cannot remove initializer '%s'", v->name);
    }
    sg__strmap_free(&c->to16);
    sg__strmap_free(&c->to32);
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag, .m = m};
    c.opset = sg_model_opset(m, "");
    if (!m->graph)
        return SG_OK;
    sg_status st = sg__strset_from(&c.keep_nodes, &opts[OPT_KEEP_NODES]);
    if (st)
        st = sg_diag_set(diag, st, "out of memory");
    if (!st)
        st = sg_graph_infer_dtypes(m->graph, true, diag);
    if (!st)
        st = sg__walk_graphs(m->graph, run_graph, &c);
    sg__strmap_free(&c.keep_nodes);
    sg__ptrset_free(&c.converted);
    sg__ptrset_free(&c.made);
    sg__strmap_free(&c.to16);
    sg__strmap_free(&c.to32);
    return st;
}

const struct sg_pass sg_pass_to_fp16 = {
    .name = "to-fp16",
    .summary = "convert float32 to float16 except a keep list, with Casts at the boundaries",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
