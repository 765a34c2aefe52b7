/*
 * shape.c - the shape inference driver (sg_graph_infer_shapes, sg_shape.h)
 * and the helpers the rules share (shape_impl.h).
 *
 * One walk: number every value of every graph (value->mark), seed the
 * records from graph inputs, initializers and recorded types, run the rule
 * of each node in topological order (subgraphs from their owner's rule),
 * merge each output with its recorded shape, and write the types back.
 */
#include "ir_impl.h"
#include "sg_alloc.h"
#include "shape_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ findings */

static void add_finding(struct sg_shape_result *r, char ***list, size_t *n, const char *msg)
{
    if (!r)
        return;
    char **nl = sg_realloc(*list, (*n + 1) * sizeof **list);
    char *s = nl ? sg_strdup(msg) : NULL;
    if (nl)
        *list = nl;
    if (!s) {
        r->oom = true;
        return;
    }
    (*list)[(*n)++] = s;
}

void sg_shape_result_clear(struct sg_shape_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_conflicts; i++)
        sg_free(r->conflicts[i]);
    for (size_t i = 0; i < r->n_unknown; i++)
        sg_free(r->unknown[i]);
    sg_free(r->conflicts);
    sg_free(r->unknown);
    memset(r, 0, sizeof *r);
}

static const char *node_name(const sg_node *n)
{
    return n->name && *n->name ? n->name : "(unnamed)";
}

sg_status sh_fail(struct sh_ctx *c, const sg_node *n, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->strict)
        return sg_diag_set(c->diag, SG_ESHAPE, "node '%s' (%s): %s", node_name(n), n->op_type, msg);
    char line[1024];
    snprintf(line, sizeof line, "node '%s' (%s): %s", node_name(n), n->op_type, msg);
    add_finding(c->res, &c->res->conflicts, &c->res->n_conflicts, line);
    return c->res && c->res->oom ? sg_diag_set(c->diag, SG_ENOMEM, "out of memory") : SG_OK;
}

static void note_unknown(struct sh_ctx *c, const sg_node *n, const char *why)
{
    if (!c->res)
        return;
    char line[512];
    snprintf(line, sizeof line, "node '%s' (%s): %s", node_name(n), n->op_type, why);
    add_finding(c->res, &c->res->unknown, &c->res->n_unknown, line);
}

/* ------------------------------------------------------------- symbols */

static sg_status add_sym(struct sh_ctx *c, const char *name, int64_t *out)
{
    void *e = sg__strmap_get(&c->symmap, name);
    if (e) {
        *out = -(int64_t)(uintptr_t)e;
        return SG_OK;
    }
    if (c->n_syms == c->cap_syms) {
        size_t cap = c->cap_syms ? 2 * c->cap_syms : 16;
        const char **ns = sg_realloc(c->syms, cap * sizeof *ns);
        if (!ns)
            return SG_ENOMEM;
        c->syms = ns;
        c->cap_syms = cap;
    }
    const char *key = sg_arena_strdup(c->a, name);
    if (!key || sg__strmap_put(&c->symmap, key, (void *)(uintptr_t)(c->n_syms + 1)))
        return SG_ENOMEM;
    c->syms[c->n_syms++] = key;
    *out = -(int64_t)c->n_syms;
    return SG_OK;
}

int64_t sh_symbol(struct sh_ctx *c, const char *name)
{
    int64_t d;
    return add_sym(c, name, &d) ? SH_UNK : d;
}

const char *sh_symname(const struct sh_ctx *c, int64_t d)
{
    size_t k = (size_t)(-(d + 1));
    return k < c->n_syms ? c->syms[k] : "?";
}

int64_t sh_fresh(struct sh_ctx *c)
{
    char name[48];
    for (;;) {
        snprintf(name, sizeof name, "unk__sg%" PRIu64, c->fresh++);
        if (!sg__strmap_get(&c->symmap, name))
            return sh_symbol(c, name);
    }
}

/* --------------------------------------------------------------- records */

struct sh *sh_rec(struct sh_ctx *c, const sg_value *v)
{
    if (!v)
        return NULL;
    while (v->outer)
        v = v->outer;
    return v->mark < c->n_recs ? &c->recs[v->mark] : NULL;
}

struct sh *sh_in(struct sh_ctx *c, const sg_node *n, uint32_t i)
{
    return i < n->n_inputs ? sh_rec(c, n->inputs[i]) : NULL;
}

struct sh *sh_in_ranked(struct sh_ctx *c, const sg_node *n, uint32_t i)
{
    struct sh *s = sh_in(c, n, i);
    return s && s->rank >= 0 ? s : NULL;
}

sg_status sh_set_out(struct sh_ctx *c, const sg_node *n, uint32_t i, int rank, const int64_t *dims)
{
    struct sh *s = i < n->n_outputs ? sh_rec(c, n->outputs[i]) : NULL;
    if (!s)
        return SG_OK;
    if (rank > SG_MAX_RANK)
        return sh_fail(c, n, "output rank %d is over %d", rank, SG_MAX_RANK);
    s->kind = SH_TENSOR;
    s->rank = rank < 0 ? -1 : rank;
    s->d = NULL;
    s->nval = -1;
    if (rank > 0) {
        s->d = sg_arena_memdup(c->a, dims, (size_t)rank * sizeof *dims);
        if (!s->d)
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    return SG_OK;
}

sg_status sh_set_val(struct sh_ctx *c, const sg_node *n, uint32_t i, int32_t numel,
                     const int64_t *val, const int64_t *vsym)
{
    struct sh *s = i < n->n_outputs ? sh_rec(c, n->outputs[i]) : NULL;
    if (!s || numel < 0 || numel > SH_MAX_VAL)
        return SG_OK;
    bool any = false;
    for (int32_t k = 0; vsym && k < numel; k++)
        any = any || vsym[k];
    s->val = numel ? sg_arena_memdup(c->a, val, (size_t)numel * sizeof *val) : NULL;
    s->vsym = any ? sg_arena_memdup(c->a, vsym, (size_t)numel * sizeof *vsym) : NULL;
    if ((numel && !s->val) || (any && !s->vsym))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    s->nval = numel;
    return SG_OK;
}

sg_status sh_training(struct sh_ctx *c, sg_node *n)
{
    /* Adagrad (R, T, X.., G.., H..) -> (X.., H..), Adam (.., V.., H..) ->
     * (X.., V.., H..), Momentum (.., V..) -> (X.., V..): n tensors each. */
    if (n->n_inputs < 2 + n->n_outputs)
        return sh_fail(c, n, "%u inputs for %u outputs", n->n_inputs, n->n_outputs);
    uint32_t k = n->n_inputs - 2 - n->n_outputs;
    sg_status st = SG_OK;
    for (uint32_t i = 0; k && i < n->n_outputs && !st; i++) {
        struct sh *x = sh_in(c, n, 2 + i % k);
        st = sh_copy_out(c, n, i, 2 + i % k);
        sh_set_dtype(c, n, i, x ? x->dtype : 0);
    }
    return st;
}

sg_status sh_set_kind(struct sh_ctx *c, const sg_node *n, uint32_t i, enum sh_kind kind, int rank,
                      const int64_t *dims)
{
    sg_status st = sh_set_out(c, n, i, kind == SH_OPAQUE ? -1 : rank, dims);
    struct sh *s = i < n->n_outputs ? sh_rec(c, n->outputs[i]) : NULL;
    if (s)
        s->kind = (int8_t)kind;
    return st;
}

void sh_set_dtype(struct sh_ctx *c, const sg_node *n, uint32_t i, int32_t dtype)
{
    struct sh *s = i < n->n_outputs ? sh_rec(c, n->outputs[i]) : NULL;
    if (s)
        s->dtype = dtype;
}

sg_status sh_copy_out(struct sh_ctx *c, const sg_node *n, uint32_t i, uint32_t j)
{
    struct sh *in = sh_in(c, n, j);
    return sh_set_out(c, n, i, in ? in->rank : -1, in ? in->d : NULL);
}

char *sh_fmt_dims(const struct sh_ctx *c, int rank, const int64_t *d, char *buf, size_t size)
{
    size_t pos = 0;
    if (!size)
        return buf;
    buf[0] = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(buf + pos, size - pos, __VA_ARGS__);                                     \
        pos = k_ < 0 || (size_t)k_ >= size - pos ? size - 1 : pos + (size_t)k_;                    \
    } while (0)
    if (rank < 0) {
        PUT("(rank unknown)");
        return buf;
    }
    PUT("[");
    for (int i = 0; i < rank; i++) {
        if (i)
            PUT(",");
        if (sh_num(d[i]))
            PUT("%" PRId64, d[i]);
        else if (sh_sym(d[i]))
            PUT("'%s'", sh_symname(c, d[i]));
        else
            PUT("?");
    }
    PUT("]");
#undef PUT
    return buf;
}

char *sh_fmt(const struct sh_ctx *c, const struct sh *s, char *buf, size_t size)
{
    return sh_fmt_dims(c, s ? s->rank : -1, s ? s->d : NULL, buf, size);
}

/* ------------------------------------------------------------ constants */

bool sh_in_val(struct sh_ctx *c, const sg_node *n, uint32_t i, const int64_t **vals,
               const int64_t **vsym, int32_t *cnt)
{
    struct sh *s = sh_in(c, n, i);
    if (!s || s->nval < 0)
        return false;
    *vals = s->val;
    *vsym = s->vsym;
    *cnt = s->nval;
    return true;
}

bool sh_in_ints(struct sh_ctx *c, const sg_node *n, uint32_t i, const int64_t **vals, int32_t *cnt)
{
    const int64_t *vsym;
    return sh_in_val(c, n, i, vals, &vsym, cnt) && !vsym;
}

bool sh_in_f64(struct sh_ctx *c, const sg_node *n, uint32_t i, const double **vals, size_t *cnt)
{
    sg_tensor *t = i < n->n_inputs ? sg_value_constant(n->inputs[i]) : NULL;
    if (!t) {
        const int64_t *iv;
        int32_t k;
        if (!sh_in_ints(c, n, i, &iv, &k))
            return false;
        double *d = sg_arena_alloc(c->a, (size_t)(k ? k : 1) * sizeof *d);
        if (!d)
            return false;
        for (int32_t j = 0; j < k; j++)
            d[j] = (double)iv[j];
        *vals = d;
        *cnt = (size_t)k;
        return true;
    }
    size_t nb;
    const void *data = sg_tensor_data(c->m, t, &nb, NULL);
    int64_t numel = sg_tensor_numel(t);
    if (!data || numel < 0 || numel > SH_MAX_VAL || !t->has_dtype ||
        !(sg_dtype_is_float(t->dtype) || sg_dtype_is_int(t->dtype)))
        return false;
    double *d = sg_arena_alloc(c->a, (size_t)(numel ? numel : 1) * sizeof *d);
    if (!d)
        return false;
    for (int64_t j = 0; j < numel; j++)
        d[j] = sg_dtype_get_f64(t->dtype, data, (size_t)j);
    *vals = d;
    *cnt = (size_t)numel;
    return true;
}

const int64_t *sh_attr_ints(const sg_node *n, const char *name, size_t *count)
{
    const sg_attr *a = sg_node_attr(n, name);
    if (!a || a->type != SG_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n_ints;
    return a->ints;
}

bool sh_has_attr(const sg_node *n, const char *name)
{
    return sg_node_attr(n, name) != NULL;
}

bool sh_axis(int64_t a, int r, int64_t *out)
{
    if (a < -(int64_t)r || a >= r)
        return false;
    *out = a < 0 ? a + r : a;
    return true;
}

bool sh_unify(int64_t a, int64_t b, int64_t *out)
{
    if (sh_num(a) && sh_num(b)) {
        *out = a;
        return a == b;
    }
    *out = sh_num(a) ? a : sh_num(b) ? b : a == SH_UNK ? b : a;
    return true;
}

bool sh_bcast_dim(int64_t a, int64_t b, int64_t *out)
{
    if (a == 1) {
        *out = b;
        return true;
    }
    if (b == 1) {
        *out = a;
        return true;
    }
    if (sh_num(a) && sh_num(b)) {
        *out = a;
        return a == b;
    }
    if (a == b) {
        *out = a;
        return true;
    }
    /* A number other than 1 is what the other dim must be (or 1, which
     * broadcasts to it): the output has it either way. */
    if (sh_num(a) || sh_num(b)) {
        *out = sh_num(a) ? a : b;
        return true;
    }
    *out = SH_UNK;
    return true;
}

/* ----------------------------------------------------------- seeding */

/* A small integer constant (a shape, axes, pads...) is followed by value. */
static sg_status seed_const(struct sh_ctx *c, struct sh *s, sg_tensor *t)
{
    if (!t->has_dtype || !sg_dtype_is_int(t->dtype))
        return SG_OK;
    int64_t numel = sg_tensor_numel(t);
    if (numel < 0 || numel > SH_MAX_VAL || t->rank > 1)
        return SG_OK;
    size_t nb;
    const void *data = sg_tensor_data(c->m, t, &nb, NULL);
    if (!data && numel)
        return SG_OK;
    int64_t *v = sg_arena_alloc(c->a, (size_t)(numel ? numel : 1) * sizeof *v);
    if (!v)
        return SG_ENOMEM;
    for (int64_t i = 0; i < numel; i++) {
        if (t->dtype == SG_DTYPE_INT64)
            v[i] = ((const int64_t *)data)[i];
        else if (t->dtype == SG_DTYPE_UINT64)
            v[i] = (int64_t)((const uint64_t *)data)[i];
        else
            v[i] = sg_dim_from_double(sg_dtype_get_f64(t->dtype, data, (size_t)i));
    }
    s->val = v;
    s->vsym = NULL;
    s->nval = (int32_t)numel;
    return SG_OK;
}

sg_status sh_seed_type(struct sh_ctx *c, struct sh *s, const sg_type *t)
{
    if (t && t->kind == SG_TYPE_SEQUENCE && t->elem && t->elem->kind == SG_TYPE_TENSOR) {
        sg_status st = sh_seed_type(c, s, t->elem);
        s->kind = SH_SEQ;
        return st;
    }
    if (t && t->kind != SG_TYPE_TENSOR && t->kind != SG_TYPE_NONE)
        s->kind = SH_OPAQUE;
    if (!t || t->kind != SG_TYPE_TENSOR)
        return SG_OK;
    if (t->has_elem_type)
        s->dtype = t->elem_type;
    if (!t->shape || t->shape->rank > SG_MAX_RANK)
        return SG_OK;
    s->rank = (int32_t)t->shape->rank;
    s->d = s->rank ? sg_arena_alloc(c->a, (size_t)s->rank * sizeof *s->d) : NULL;
    if (s->rank && !s->d)
        return SG_ENOMEM;
    for (int32_t i = 0; i < s->rank; i++) {
        const sg_dim *d = &t->shape->dims[i];
        if (d->kind == SG_DIM_VALUE && d->value >= 0)
            s->d[i] = d->value;
        else if (d->kind == SG_DIM_PARAM && d->param && *d->param)
            s->d[i] = sh_symbol(c, d->param);
        else
            s->d[i] = SH_UNK;
    }
    return SG_OK;
}

static sg_status seed_tensor(struct sh_ctx *c, struct sh *s, sg_tensor *t)
{
    if (t->rank > SG_MAX_RANK)
        return SG_OK;
    s->dtype = t->has_dtype ? t->dtype : 0;
    s->rank = (int32_t)t->rank;
    s->d = t->rank ? sg_arena_memdup(c->a, t->dims, t->rank * sizeof *t->dims) : NULL;
    if (t->rank && !s->d)
        return SG_ENOMEM;
    for (uint32_t i = 0; i < t->rank; i++)
        if (s->d[i] < 0)
            s->d[i] = SH_UNK;
    return seed_const(c, s, t);
}

/* ----------------------------------------------------------- numbering */

struct numbering {
    struct sh_ctx *c;
    sg_value **vals;
    size_t n, cap;
    sg_status st;
};

static sg_status number_value(sg_value *v, void *arg)
{
    struct numbering *nb = arg;
    if (nb->n == nb->cap) {
        size_t cap = nb->cap ? 2 * nb->cap : 256;
        sg_value **nv = sg_realloc(nb->vals, cap * sizeof *nv);
        if (!nv)
            return SG_ENOMEM;
        nb->vals = nv;
        nb->cap = cap;
    }
    v->mark = (uint32_t)nb->n;
    nb->vals[nb->n++] = v;
    /* Symbols of recorded types are reserved before any fresh one. */
    const sg_type *t = v->type;
    if (t && t->kind == SG_TYPE_TENSOR && t->shape)
        for (uint32_t i = 0; i < t->shape->rank; i++)
            if (t->shape->dims[i].kind == SG_DIM_PARAM && t->shape->dims[i].param &&
                *t->shape->dims[i].param && sh_symbol(nb->c, t->shape->dims[i].param) == SH_UNK)
                return SG_ENOMEM;
    return SG_OK;
}

static sg_status number_graph(sg_graph *g, void *arg);

static sg_status number_graph(sg_graph *g, void *arg)
{
    sg_status st = sg_graph_for_each_value(g, number_value, arg);
    for (sg_node *n = g->first; n && !st; n = n->next)
        st = sg_node_for_each_subgraph(n, number_graph, arg);
    return st;
}

/* ------------------------------------------------------------- walking */

static bool default_domain(const sg_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

/* The optimizers of the training domain: each output has the shape of the
 * tensor it updates. */
static bool training_op(const sg_node *n)
{
    return n->domain && strcmp(n->domain, "ai.onnx.preview.training") == 0 &&
           (!strcmp(n->op_type, "Adagrad") || !strcmp(n->op_type, "Adam") ||
            !strcmp(n->op_type, "Momentum"));
}

/* Merge the inferred record s of value v with v's recorded type. */
static sg_status merge_recorded(struct sh_ctx *c, sg_node *n, sg_value *v, struct sh *s)
{
    const sg_type *t = v->type;
    if (s->kind != SH_TENSOR || !t || t->kind != SG_TYPE_TENSOR || !t->shape ||
        t->shape->rank > SG_MAX_RANK)
        return SG_OK;
    struct sh rec = {.rank = -1, .nval = -1};
    if (sh_seed_type(c, &rec, t))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    if (s->rank < 0) {
        s->rank = rec.rank;
        s->d = rec.d;
        return SG_OK;
    }
    bool conflict = rec.rank != s->rank;
    for (int32_t i = 0; !conflict && i < s->rank; i++)
        conflict = sh_num(rec.d[i]) && sh_num(s->d[i]) && rec.d[i] != s->d[i];
    if (conflict) {
        char a[256], b[256];
        return sh_fail(c, n, "output '%s': recorded %s, inferred %s", v->name,
                       sh_fmt(c, &rec, a, sizeof a), sh_fmt(c, s, b, sizeof b));
    }
    for (int32_t i = 0; i < s->rank; i++)
        if (sh_num(rec.d[i]) || (s->d[i] == SH_UNK && rec.d[i] != SH_UNK))
            s->d[i] = rec.d[i];
    return SG_OK;
}

static sg_status infer_node(struct sh_ctx *c, sg_node *n)
{
    sh_rule_fn fn = default_domain(n) ? sh_rule_find(n->op_type)
                    : training_op(n)  ? sh_training
                                      : NULL;
    c->work++;
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        struct sh *s = sh_rec(c, n->outputs[i]);
        if (s) {
            s->kind = SH_TENSOR;
            s->dtype = 0;
            s->rank = -1;
            s->nval = -1;
        }
    }
    sg_status st = SG_OK;
    if (fn)
        st = fn(c, n);
    else
        note_unknown(c, n,
                     default_domain(n) ? "no shape rule for this op" : "op of another domain");
    if (st)
        return st;
    int32_t in_dt[16] = {0}, *ins = in_dt;
    int32_t *heap = NULL;
    if (n->n_inputs > 16) {
        heap = sg_calloc(n->n_inputs, sizeof *heap);
        if (!heap)
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        ins = heap;
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct sh *s = sh_in(c, n, i);
        ins[i] = s ? s->dtype : 0;
    }
    bool unknown = false;
    for (uint32_t i = 0; i < n->n_outputs && !st; i++) {
        sg_value *v = n->outputs[i];
        struct sh *s = sh_rec(c, v);
        if (!s)
            continue;
        int32_t dt = sg_node_output_dtype(n, i, ins);
        if (!dt)
            dt = s->dtype; /* set by the rule: sequences, bodies */
        if (!dt)
            dt = sg_value_dtype(v);
        s->dtype = dt;
        s->done = true;
        if (v->type && v->type->kind != SG_TYPE_TENSOR && v->type->kind != SG_TYPE_NONE)
            s->kind = SH_OPAQUE; /* recorded as a sequence, map or optional */
        if (s->kind != SH_TENSOR)
            continue;
        if (fn && s->rank < 0)
            unknown = true;
        st = merge_recorded(c, n, v, s);
    }
    sg_free(heap);
    if (!st && unknown)
        note_unknown(c, n, "output shape unknown");
    return st;
}

sg_status sh_infer_graph(struct sh_ctx *c, sg_graph *g)
{
    if (!g->n_nodes)
        return SG_OK;
    sg_node **order = sg_malloc(g->n_nodes * sizeof *order);
    if (!order)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_graph_toposort(g, order, c->diag);
    for (uint32_t i = 0; !st && i < g->n_nodes; i++)
        st = infer_node(c, order[i]);
    sg_free(order);
    return st;
}

/* The inferred record as a type, or NULL when it says nothing new. */
static sg_status write_back(struct sh_ctx *c, sg_value *v, struct sh *s, bool *changed)
{
    *changed = false;
    if (!s->done || s->kind != SH_TENSOR || (!s->dtype && s->rank < 0))
        return SG_OK;
    const sg_type *t = v->type;
    if (t && t->kind != SG_TYPE_TENSOR && t->kind != SG_TYPE_NONE)
        return SG_OK;
    sg_type *nt = sg_type_tensor(c->m, s->dtype, NULL, s->rank);
    if (!nt)
        return SG_ENOMEM;
    nt->has_elem_type = s->dtype != 0;
    for (int32_t i = 0; i < s->rank; i++) {
        sg_dim *d = &nt->shape->dims[i];
        if (sh_num(s->d[i])) {
            d->kind = SG_DIM_VALUE;
            d->value = s->d[i];
        } else if (sh_sym(s->d[i])) {
            d->kind = SG_DIM_PARAM;
            d->param = sg_model_strdup(c->m, sh_symname(c, s->d[i]));
            if (!d->param)
                return SG_ENOMEM;
        }
    }
    if (t) {
        char a[512], b[512];
        if (strcmp(sg_type_format(t, a, sizeof a), sg_type_format(nt, b, sizeof b)) == 0 &&
            t->has_elem_type == nt->has_elem_type)
            return SG_OK;
        /* Keep what the recorded type has and the format cannot show. */
        nt->denotation = t->denotation;
    }
    sg_value_set_type(v, nt);
    *changed = true;
    return SG_OK;
}

sg_status sg_graph_infer_shapes(sg_graph *g, const struct sg_shape_opts *opts,
                                struct sg_shape_result *res, struct sg_diag *diag)
{
    struct sg_shape_result local = {0};
    if (!res)
        res = &local;
    struct sh_ctx c = {.m = g->model, .strict = opts && opts->strict, .res = res, .diag = diag};
    c.opset = sg_model_opset(g->model, "");
    c.a = sg_arena_create();
    struct numbering nb = {.c = &c};
    sg_status st = c.a ? SG_OK : SG_ENOMEM;
    if (!st)
        st = number_graph(g, &nb);
    if (!st) {
        c.n_recs = nb.n;
        c.budget = 8 * (uint64_t)nb.n + 100000;
        c.recs = sg_calloc(nb.n ? nb.n : 1, sizeof *c.recs);
        if (!c.recs)
            st = SG_ENOMEM;
    }
    if (st == SG_ENOMEM)
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    /* Seeds: what nothing in the graph produces. */
    for (size_t i = 0; !st && i < nb.n; i++) {
        sg_value *v = nb.vals[i];
        struct sh *s = &c.recs[i];
        s->rank = -1;
        s->nval = -1;
        if (v->outer || v->producer)
            continue;
        s->done = true;
        if (v->init && !(v->flags & SG_VALUE_INPUT && v->type))
            st = seed_tensor(&c, s, v->init);
        else
            st = sh_seed_type(&c, s, v->type);
        if (st)
            st = sg_diag_set(diag, st, "out of memory");
    }
    if (!st)
        st = sh_infer_graph(&c, g);
    for (size_t i = 0; !st && i < nb.n; i++) {
        sg_value *v = nb.vals[i];
        if (!v->producer || v->outer)
            continue;
        struct sh *s = &c.recs[i];
        if (s->kind != SH_TENSOR)
            continue;
        res->n_values++;
        if (s->rank >= 0) {
            res->n_ranked++;
            bool all = true;
            for (int32_t k = 0; k < s->rank; k++)
                all = all && sh_num(s->d[k]);
            res->n_static += all;
        }
        bool changed;
        st = write_back(&c, v, s, &changed);
        if (st)
            st = sg_diag_set(diag, st, "out of memory");
        res->n_changed += changed;
    }
    if (!st && res->oom)
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_free(nb.vals);
    sg_free(c.recs);
    sg_free(c.syms);
    sg__strmap_free(&c.symmap);
    sg_arena_free(c.a);
    sg_shape_result_clear(&local);
    return st;
}
