/*
 * fold_constants.c - `fold-constants`: evaluate on the reference runtime
 * every node whose inputs are all constant, and replace its outputs by
 * constants.
 *
 * Constants are initializers that are not graph inputs (an input with a
 * default may be fed at run time; but in a model of IR version < 4, where
 * every initializer must be an input, initializers are constant, as ONNX
 * Runtime reads them), outputs of Constant nodes, and what this pass
 * folded, in the node's own graph or any enclosing one. A node
 * with subgraphs (If, Loop, Scan) folds when its inputs and every outer
 * value its subgraphs read are constant. Graphs are walked outside in, so a
 * subgraph sees what its enclosing graphs folded. With `shapes`, Shape and
 * Size of a main graph input whose declared shape is fully static fold too
 * (the runtime refuses inputs of another shape, so the result holds).
 *
 * Never folded, each reported with the reason: random ops (RandomNormal,
 * RandomUniform and their Like forms, Bernoulli, Multinomial, Dropout with
 * a training_mode input) and nodes whose subgraphs hold one; op types in
 * `skip_ops`; nodes with an output that is not a numeric tensor (strings,
 * sequences, optionals); results over `max_bytes` (the runtime stops such
 * an expansion before allocating it) unless `keep_size` and the outputs
 * together are no larger than the constant inputs; nodes the runtime
 * cannot evaluate (no kernel, a kernel error).
 *
 * Keeps intact: value names, readers and value_info entries (a folded
 * value keeps its name and becomes an initializer of its graph, with its
 * exact type); graph outputs at every level, which are made by a Constant
 * node instead (as is every folded value of a model with IR version < 4,
 * where a new initializer would have to be an input too). Only values
 * something outside the folded nodes still reads are kept. With
 * `eliminate` (the default) the constants only folded nodes read are
 * removed afterwards (with their input entry under IR < 4); other unused
 * constants are left to eliminate-dead.
 */
#include "pass_impl.h"
#include "sg_alloc.h"
#include "sg_runtime.h"

#include <string.h>

enum {
    OPT_MAX_BYTES,
    OPT_KEEP_SIZE,
    OPT_SKIP_OPS,
    OPT_SHAPES,
    OPT_ELIMINATE,
    OPT_MAX_LOOP,
    OPT_COUNT
};

static const struct sg_opt_spec options[] = {
    [OPT_MAX_BYTES] = {"max_bytes", SG_OPT_INT, "1048576",
                       "largest tensor a fold may produce, in bytes (0: no limit)", 0,
                       (int64_t)1 << 40},
    [OPT_KEEP_SIZE] = {"keep_size", SG_OPT_BOOL, "true",
                       "also fold larger results no bigger than the node's constant inputs "
                       "together (Transpose of a large weight)"},
    [OPT_SKIP_OPS] = {"skip_ops", SG_OPT_STRINGS, NULL,
                      "op types never to fold (random ops never fold)"},
    [OPT_SHAPES] = {"shapes", SG_OPT_BOOL, "false",
                    "fold Shape and Size of main graph inputs whose shape is fully static"},
    [OPT_ELIMINATE] = {"eliminate", SG_OPT_BOOL, "true",
                       "remove the constants that only folded nodes read"},
    [OPT_MAX_LOOP] = {"max_loop_iterations", SG_OPT_INT, "10000000",
                      "iterations a Loop may run when folded; one that needs more is not "
                      "folded (0: no limit)",
                      0, INT64_MAX},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

/* ------------------------------------------------- value -> runtime value */

struct vmap_slot {
    const sg_value *key;
    sg_rt_value *val; /* one reference */
};

struct vmap {
    struct vmap_slot *slots;
    size_t cap, count;
};

static size_t vmap_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static sg_rt_value *vmap_get(const struct vmap *m, const sg_value *key)
{
    if (!m->cap)
        return NULL;
    for (size_t j = vmap_hash(key) & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1))
        if (m->slots[j].key == key)
            return m->slots[j].val;
    return NULL;
}

/* Insert key (absent) with val, taking over the caller's reference. */
static sg_status vmap_put(struct vmap *m, const sg_value *key, sg_rt_value *val)
{
    if ((m->count + 1) * 4 >= m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct vmap_slot *slots = sg_calloc(cap, sizeof *slots);
        if (!slots) {
            sg_rt_value_unref(val);
            return SG_ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slots[i].key)
                continue;
            size_t j = vmap_hash(m->slots[i].key) & (cap - 1);
            while (slots[j].key)
                j = (j + 1) & (cap - 1);
            slots[j] = m->slots[i];
        }
        sg_free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    size_t j = vmap_hash(key) & (m->cap - 1);
    while (m->slots[j].key)
        j = (j + 1) & (m->cap - 1);
    m->slots[j] = (struct vmap_slot){key, val};
    m->count++;
    return SG_OK;
}

static void vmap_free(struct vmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        sg_rt_value_unref(m->slots[i].val);
    sg_free(m->slots);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------- context */

struct fold {
    sg_model *m;
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    struct sg__strmap skip;
    /* IR < 4: every initializer is also a graph input, and constant (as
     * ONNX Runtime reads such models); folded values become Constant nodes
     * since a new initializer would have to be an input too. */
    bool old_ir;
    int64_t opset; /* of the default domain */

    /* Per graph: runtime values of constants and folded values (keyed by
     * the value a capture stands for), and the nodes folded. */
    struct vmap vals;
    struct sg__ptrset folded;

    /* Whole run: constants that folded nodes read, for `eliminate`. */
    sg_value **sources;
    size_t n_sources, cap_sources;
    struct sg__ptrset source_set;

    /* A failure inside lookup(), which can only return NULL. */
    sg_status lookup_st;
    struct sg_diag lookup_diag;
};

static bool default_domain(const sg_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static bool is_op(const sg_node *n, const char *op)
{
    return default_domain(n) && strcmp(n->op_type, op) == 0;
}

static const sg_value *resolve(const sg_value *v)
{
    while (v->outer)
        v = v->outer;
    return v;
}

/* An initializer that cannot be fed at run time. */
static bool fixed_init(const struct fold *f, const sg_value *r)
{
    return r->init && (!(r->flags & SG_VALUE_INPUT) || f->old_ir);
}

/* A constant other than a value folded in the current graph. */
static bool is_source(const struct fold *f, const sg_value *r)
{
    return fixed_init(f, r) || (r->producer && is_op(r->producer, "Constant"));
}

static bool is_const(struct fold *f, const sg_value *v)
{
    const sg_value *r = resolve(v);
    return is_source(f, r) || vmap_get(&f->vals, r);
}

/* The runtime value of constant v (borrowed), made on first use; NULL
 * with f->lookup_st set on failure. */
static sg_rt_value *value_of(struct fold *f, const sg_value *v)
{
    const sg_value *r = resolve(v);
    sg_rt_value *val = vmap_get(&f->vals, r);
    if (val)
        return val;
    sg_status st;
    sg_diag_clear(&f->lookup_diag);
    if (fixed_init(f, r)) {
        st = sg_rt_value_from_tensor(f->m, r->init, &val, &f->lookup_diag);
        if (st)
            sg_diag_prefix(&f->lookup_diag, "initializer '%s'", r->name);
    } else if (r->producer && is_op(r->producer, "Constant")) {
        sg_node *c = r->producer;
        sg_rt_value *outs[1] = {NULL};
        st = c->n_outputs == 1
                 ? sg_rt_run_node(f->m, c, NULL, NULL, NULL, outs, &f->lookup_diag)
                 : sg_diag_set(&f->lookup_diag, SG_EARITY, "Constant '%s' has %u outputs",
                               sg__node_label(c), c->n_outputs);
        val = outs[0];
    } else {
        st = sg_diag_set(&f->lookup_diag, SG_EUNDEF, "'%s' is not constant", r->name);
    }
    if (!st)
        st = vmap_put(&f->vals, r, val);
    if (st) {
        f->lookup_st = st;
        return NULL;
    }
    return val;
}

static sg_rt_value *lookup(const sg_value *v, void *ctx)
{
    return value_of(ctx, v);
}

static sg_status record_source(struct fold *f, const sg_value *v)
{
    sg_value *r = (sg_value *)resolve(v);
    if (!is_source(f, r) || sg__ptrset_has(&f->source_set, r))
        return SG_OK;
    if (f->n_sources == f->cap_sources) {
        size_t cap = f->cap_sources ? f->cap_sources * 2 : 32;
        sg_value **grown = sg_realloc(f->sources, cap * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        f->sources = grown;
        f->cap_sources = cap;
    }
    if (sg__ptrset_add(&f->source_set, r))
        return SG_ENOMEM;
    f->sources[f->n_sources++] = r;
    return SG_OK;
}

/* --------------------------------------------------- what may be folded */

static bool is_random(const sg_node *n)
{
    static const char *const random_ops[] = {"RandomNormal",     "RandomUniform",
                                             "RandomNormalLike", "RandomUniformLike",
                                             "Bernoulli",        "Multinomial"};
    if (!default_domain(n))
        return false;
    for (size_t i = 0; i < sizeof random_ops / sizeof random_ops[0]; i++)
        if (strcmp(n->op_type, random_ops[i]) == 0)
            return true;
    return strcmp(n->op_type, "Dropout") == 0 && n->n_inputs > 2 && n->inputs[2];
}

/* What a node's subgraphs need: every outer value they read constant, no
 * random op anywhere inside. Also records those values as sources. */
struct sub_check {
    struct fold *f;
    bool outer_const, random, record;
    sg_status st;
};

static sg_status check_capture(sg_value *v, void *arg)
{
    struct sub_check *c = arg;
    if (!v->outer)
        return SG_OK;
    if (!is_const(c->f, v->outer))
        c->outer_const = false;
    else if (c->record && (c->st = record_source(c->f, v->outer)))
        return c->st;
    return SG_OK;
}

static sg_status check_nodes(sg_graph *g, void *arg)
{
    struct sub_check *c = arg;
    for (sg_node *n = g->first; n && !c->random; n = n->next)
        c->random = is_random(n);
    return SG_OK;
}

static sg_status check_sub(sg_graph *sub, void *arg)
{
    struct sub_check *c = arg;
    sg_status st = sg_graph_for_each_value(sub, check_capture, c);
    if (!st && !c->record && c->outer_const)
        st = sg__walk_graphs(sub, check_nodes, c);
    return st;
}

/* The fully static declared shape of a main graph input read by a Shape
 * or Size node, or NULL. */
static const sg_shape *static_input_shape(const sg_node *n)
{
    if (!(is_op(n, "Shape") || is_op(n, "Size")) || n->n_inputs < 1 || !n->inputs[0] ||
        n->n_outputs < 1 || !n->outputs[0])
        return NULL;
    const sg_value *r = resolve(n->inputs[0]);
    if (!(r->flags & SG_VALUE_INPUT) || r->init || r->graph->kind != SG_GRAPH_MAIN)
        return NULL;
    const sg_type *t = r->type;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape)
        return NULL;
    for (uint32_t i = 0; i < t->shape->rank; i++)
        if (t->shape->dims[i].kind != SG_DIM_VALUE || t->shape->dims[i].value < 0)
            return NULL;
    return t->shape;
}

/* The text of a runtime message after its "node '...' (...): " prefix. */
static const char *reason(const char *msg)
{
    const char *p = strstr(msg, "): ");
    return p && strncmp(msg, "node", 4) == 0 ? p + 3 : msg;
}

static uint64_t value_bytes(const sg_rt_value *v)
{
    return (uint64_t)v->numel * sg_rt_elem_size(v->dtype);
}

/* ------------------------------------------------------------- folding */

static sg_status fold_shape(struct fold *f, sg_node *n, const sg_shape *shape, bool *did)
{
    int64_t dims[SG_MAX_RANK], rank = shape->rank;
    int64_t start = 0, end = rank, numel = 1;
    for (int64_t i = 0; i < rank; i++) {
        dims[i] = shape->dims[i].value;
        numel *= dims[i];
    }
    bool size = strcmp(n->op_type, "Size") == 0;
    if (!size && f->opset >= 15) {
        start = sg_attr_int(n, "start", 0);
        end = sg_attr_int(n, "end", rank);
        start = start < 0 ? start + rank : start;
        end = end < 0 ? end + rank : end;
        start = start < 0 ? 0 : start > rank ? rank : start;
        end = end < 0 ? 0 : end > rank ? rank : end;
        if (end < start)
            end = start;
    }
    int64_t len = end - start;
    sg_rt_value *v;
    sg_status st = sg_rt_tensor_create(SG_DTYPE_INT64, &len, size ? 0 : 1, &v, f->diag);
    if (st)
        return st;
    int64_t *out = v->data;
    if (size)
        out[0] = numel;
    else
        memcpy(out, dims + start, (size_t)len * sizeof *out);
    if ((st = vmap_put(&f->vals, n->outputs[0], v)) || (st = sg__ptrset_add(&f->folded, n)))
        return sg_diag_set(f->diag, st, "out of memory");
    sg_report_change(f->rep, "Shape/Size of a static input folded", "%s (%s of %s)",
                     sg__node_label(n), n->op_type, n->inputs[0]->name);
    *did = true;
    return SG_OK;
}

/* Evaluate n when everything it reads is constant and it may be folded;
 * *did tells whether it was. Only out of memory is an error. */
static sg_status try_fold(struct fold *f, sg_node *n, bool *did)
{
    *did = false;
    if (is_op(n, "Constant"))
        return SG_OK; /* already a constant */
    const sg_shape *shape = f->opts[OPT_SHAPES].b ? static_input_shape(n) : NULL;
    if (shape && sg__strmap_get(&f->skip, n->op_type)) {
        sg_report_info(f->rep, "not folded: in skip_ops", "%s (%s)", sg__node_label(n), n->op_type);
        return SG_OK;
    }
    if (shape)
        return fold_shape(f, n, shape, did);
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && !is_const(f, n->inputs[i]))
            return SG_OK;
    struct sub_check sc = {f, true, false, false, SG_OK};
    sg_status st = sg_node_for_each_subgraph(n, check_sub, &sc);
    if (st)
        return sg_diag_set(f->diag, st, "out of memory");
    if (!sc.outer_const)
        return SG_OK;

    const char *label = sg__node_label(n);
    if (is_random(n) || sc.random) {
        sg_report_info(f->rep, "not folded: random", "%s (%s)", label, n->op_type);
        return SG_OK;
    }
    if (sg__strmap_get(&f->skip, n->op_type)) {
        sg_report_info(f->rep, "not folded: in skip_ops", "%s (%s)", label, n->op_type);
        return SG_OK;
    }

    /* The limit the runtime enforces per tensor. */
    uint64_t in_bytes = 0;
    f->lookup_st = SG_OK;
    for (uint32_t i = 0; i < n->n_inputs && !f->lookup_st; i++) {
        const sg_rt_value *v = n->inputs[i] ? value_of(f, n->inputs[i]) : NULL;
        if (v && v->kind == SG_RT_TENSOR)
            in_bytes += value_bytes(v);
    }
    uint64_t max = (uint64_t)f->opts[OPT_MAX_BYTES].i;
    bool keep_size = f->opts[OPT_KEEP_SIZE].b;
    struct sg_rt_opts ro = {0};
    ro.max_tensor_bytes = max && keep_size && in_bytes > max ? in_bytes : max;
    ro.max_loop_iterations =
        f->opts[OPT_MAX_LOOP].i ? (uint64_t)f->opts[OPT_MAX_LOOP].i : UINT64_MAX;

    sg_rt_value *buf[8], **outs = n->n_outputs <= 8 ? buf : sg_calloc(n->n_outputs, sizeof *outs);
    if (!outs)
        return sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
    struct sg_diag d = {0};
    if (f->lookup_st) {
        st = f->lookup_st;
        d = f->lookup_diag;
        for (uint32_t j = 0; j < n->n_outputs; j++)
            outs[j] = NULL;
    } else {
        st = sg_rt_run_node(f->m, n, &ro, lookup, f, outs, &d);
        if (f->lookup_st) {
            st = f->lookup_st;
            d = f->lookup_diag;
        }
    }
    if (st == SG_ENOMEM) {
        st = sg_diag_set(f->diag, SG_ENOMEM, "out of memory evaluating '%s'", label);
        goto out;
    }
    if (st == SG_ETOOBIG) {
        sg_report_info(f->rep, "not folded: result over max_bytes", "%s (%s)", label,
                       reason(d.msg));
        st = SG_OK;
        goto out;
    }
    if (st) {
        sg_report_info(f->rep, "not folded: cannot evaluate", "%s (%s)", label, reason(d.msg));
        st = SG_OK;
        goto out;
    }

    uint64_t out_bytes = 0;
    bool small = true;
    for (uint32_t j = 0; j < n->n_outputs; j++) {
        const sg_rt_value *v = outs[j];
        if (!n->outputs[j])
            continue;
        if (!v || v->kind != SG_RT_TENSOR || v->dtype == SG_DTYPE_STRING ||
            !sg_dtype_size(v->dtype)) {
            char what[300];
            sg_report_info(f->rep, "not folded: output is not a numeric tensor", "%s (%s: %s)",
                           label, n->outputs[j]->name,
                           v ? sg_rt_value_format(v, what, sizeof what) : "none");
            goto out;
        }
        out_bytes += value_bytes(v);
        small &= !max || value_bytes(v) <= max;
    }
    if (!small && !(keep_size && out_bytes <= in_bytes)) {
        sg_report_info(f->rep, "not folded: result over max_bytes", "%s (%llu bytes)", label,
                       (unsigned long long)out_bytes);
        goto out;
    }

    for (uint32_t j = 0; j < n->n_outputs && !st; j++)
        if (n->outputs[j]) {
            st = vmap_put(&f->vals, n->outputs[j], outs[j]);
            outs[j] = NULL;
        }
    if (!st)
        st = sg__ptrset_add(&f->folded, n);
    for (uint32_t i = 0; i < n->n_inputs && !st; i++)
        if (n->inputs[i])
            st = record_source(f, n->inputs[i]);
    if (!st) {
        sc.record = true;
        st = sg_node_for_each_subgraph(n, check_sub, &sc);
    }
    if (st) {
        st = sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    sg_report_change(f->rep, "folded", "%s (%s)", label, n->op_type);
    *did = true;
out:
    for (uint32_t j = 0; j < n->n_outputs; j++)
        sg_rt_value_unref(outs[j]);
    if (outs != buf)
        sg_free(outs);
    return st;
}

/* -------------------------------------------------------- materialising */

/* Does something other than the folded nodes read v (or list it as a
 * graph output)? */
static bool needed(struct fold *f, const sg_value *v)
{
    if (v->flags & SG_VALUE_OUTPUT)
        return true;
    for (uint32_t u = 0; u < v->n_uses; u++)
        if (!sg__ptrset_has(&f->folded, v->uses[u].node))
            return true;
    return false;
}

static sg_tensor *make_tensor(struct fold *f, const char *name, const sg_rt_value *v)
{
    size_t nbytes = (size_t)value_bytes(v);
    sg_tensor *t = sg_tensor_create(f->m, name, v->dtype, v->dims, v->rank);
    void *copy = nbytes ? sg_arena_memdup(f->m->arena, v->data, nbytes) : NULL;
    if (!t || (nbytes && !copy) || sg_tensor_set_raw(f->m, t, copy, nbytes, NULL))
        return NULL;
    return t;
}

/* Output j of folded node n becomes a constant of the same name: an
 * initializer, or the output of a new Constant node. */
static sg_status materialize(struct fold *f, sg_node *n, uint32_t j)
{
    sg_value *y = n->outputs[j];
    const sg_rt_value *v = vmap_get(&f->vals, y);
    sg_graph *g = n->graph;
    sg_tensor *t = make_tensor(f, y->name, v);
    if (!t)
        return sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_node_set_output(n, j, NULL);
    if (st)
        return sg_diag_set(f->diag, st, "cannot detach '%s'", y->name);
    if ((y->flags & SG_VALUE_OUTPUT) || f->old_ir) {
        char base[600];
        snprintf(base, sizeof base, "%s_const", y->name);
        const char *name = sg_model_fresh_name(f->m, base);
        sg_node *c = name ? sg_node_create(g, "Constant", NULL, name, f->diag) : NULL;
        if (!c || sg_node_set_attr_tensor(c, "value", t))
            return sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
        if ((st = sg_node_set_output(c, 0, y)))
            return sg_diag_set(f->diag, st, "cannot make '%s' a Constant", y->name);
        sg_node_move_before(c, n);
    } else if ((st = sg_value_set_initializer(y, t))) {
        return sg_diag_set(f->diag, st, "cannot make '%s' an initializer", y->name);
    }
    if (!(y->flags & SG_VALUE_OUTPUT) || !y->type) {
        sg_type *type = sg_type_tensor(f->m, v->dtype, v->dims, (int)v->rank);
        if (!type)
            return sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
        sg_value_set_type(y, type);
    }
    return SG_OK;
}

/* Replace the folded nodes (in topological order in folded[]) of g by the
 * constants something still reads. */
static sg_status commit(struct fold *f, sg_graph *g, sg_node **folded, size_t n_folded)
{
    sg_status st;
    size_t n_gone = 0;
    for (size_t k = 0; k < n_folded; k++) {
        sg_node *n = folded[k];
        for (uint32_t j = 0; j < n->n_outputs; j++) {
            if (!n->outputs[j])
                continue;
            if (needed(f, n->outputs[j])) {
                if ((st = materialize(f, n, j)))
                    return st;
            } else {
                n_gone++;
            }
        }
    }
    /* The values that go with their nodes leave value_info in one walk. */
    sg_value **gone = sg_malloc((n_gone + 1) * sizeof *gone);
    if (!gone)
        return sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
    n_gone = 0;
    for (size_t k = 0; k < n_folded; k++)
        for (uint32_t j = 0; j < folded[k]->n_outputs; j++)
            if (folded[k]->outputs[j])
                gone[n_gone++] = folded[k]->outputs[j];
    sg_graph_unlist_values(g, gone, n_gone, SG_VALUE_INFO);
    sg_free(gone);
    /* Readers first, so that every remaining output is unread. */
    for (size_t k = n_folded; k-- > 0;)
        if ((st = sg_node_remove(folded[k], f->diag)))
            return st;
    return SG_OK;
}

static sg_status fold_graph(sg_graph *g, void *arg)
{
    struct fold *f = arg;
    sg_node **order = sg_malloc((g->n_nodes + 1) * sizeof *order);
    if (!order)
        return sg_diag_set(f->diag, SG_ENOMEM, "out of memory");
    uint32_t count = g->n_nodes;
    size_t n_folded = 0;
    sg_status st = sg_graph_toposort(g, order, f->diag);
    for (uint32_t i = 0; i < count && !st; i++) {
        bool did;
        st = try_fold(f, order[i], &did);
        if (did)
            order[n_folded++] = order[i]; /* n_folded <= i: reuse the array */
    }
    if (!st)
        st = commit(f, g, order, n_folded);
    vmap_free(&f->vals);
    sg__ptrset_free(&f->folded);
    sg_free(order);
    return st;
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    if (!m->graph)
        return SG_OK;
    struct fold f = {.m = m, .opts = opts, .rep = rep, .diag = diag};
    f.old_ir = m->has_ir_version && m->ir_version < 4;
    f.opset = sg_model_opset(m, "");
    sg_status st = sg__strset_from(&f.skip, &opts[OPT_SKIP_OPS]);
    if (st)
        st = sg_diag_set(diag, st, "out of memory");
    if (!st)
        st = sg__walk_graphs(m->graph, fold_graph, &f);
    if (!st && opts[OPT_ELIMINATE].b)
        st = sg__remove_constants(f.sources, f.n_sources, f.old_ir, rep, diag);
    vmap_free(&f.vals);
    sg__ptrset_free(&f.folded);
    sg__ptrset_free(&f.source_set);
    sg_free(f.sources);
    sg__strmap_free(&f.skip);
    return st;
}

const struct sg_pass sg_pass_fold_constants = {
    .name = "fold-constants",
    .summary = "evaluate nodes whose inputs are all constant (on the runtime) into constants",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
