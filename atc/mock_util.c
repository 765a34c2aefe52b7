/*
 * mock_util.c - pattern helpers of the mock compiler and the one way a
 * pattern becomes a fused node (see mock_impl.h).
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sg__atc_warn(sg_mock_report *r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (r->n_warnings == r->cap_warnings) {
        size_t cap = r->cap_warnings ? 2 * r->cap_warnings : 8;
        char **grown = sg_realloc(r->warnings, cap * sizeof *grown);
        if (!grown) {
            r->oom = true;
            return;
        }
        r->warnings = grown;
        r->cap_warnings = cap;
    }
    char *s = sg_strdup(buf);
    if (!s) {
        r->oom = true;
        return;
    }
    r->warnings[r->n_warnings++] = s;
}

bool sg__atc_is(const sg_node *n, const char *op)
{
    return n && (!n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0) &&
           strcmp(n->op_type, op) == 0;
}

sg_node *sg__atc_only_reader(const sg_value *v)
{
    if (!v || v->n_uses != 1 || v->uses[0].index == SG_USE_IMPLICIT || (v->flags & SG_VALUE_OUTPUT))
        return NULL;
    return v->uses[0].node;
}

bool sg__atc_inside(const sg_value *v, sg_node *const *nodes, size_t n)
{
    if (!v || (v->flags & SG_VALUE_OUTPUT))
        return false;
    for (uint32_t u = 0; u < v->n_uses; u++) {
        bool in = false;
        for (size_t k = 0; k < n && !in; k++)
            in = v->uses[u].node == nodes[k] && v->uses[u].index != SG_USE_IMPLICIT;
        if (!in)
            return false;
    }
    return true;
}

sg_tensor *sg__atc_const(const sg_value *v)
{
    if (!v)
        return NULL;
    while (v->outer)
        v = v->outer;
    if (v->init)
        return (v->flags & SG_VALUE_INPUT) ? NULL : v->init; /* an input may override it */
    const sg_node *p = v->producer;
    if (sg__atc_is(p, "Constant") && p->n_outputs == 1) {
        const sg_attr *a = sg_node_attr(p, "value");
        if (a && a->type == SG_ATTR_TENSOR)
            return a->t;
    }
    return NULL;
}

bool sg__atc_const_doubles(struct sg__atc_mock *c, const sg_value *v, double **out, int64_t *n)
{
    *out = NULL;
    *n = 0;
    sg_tensor *t = sg__atc_const(v);
    if (!t || !t->has_dtype || t->dtype == SG_DTYPE_STRING || !sg_dtype_size(t->dtype))
        return false;
    int64_t numel = sg_tensor_numel(t);
    size_t nbytes;
    const void *data = numel >= 0 ? sg_tensor_data(c->m, t, &nbytes, NULL) : NULL;
    if (!data || nbytes != (size_t)numel * sg_dtype_size(t->dtype))
        return false;
    double *d = sg_malloc(((size_t)numel + 1) * sizeof *d);
    if (!d)
        return false;
    for (int64_t i = 0; i < numel; i++) {
        switch (t->dtype) {
        case SG_DTYPE_FLOAT:
            d[i] = ((const float *)data)[i];
            break;
        case SG_DTYPE_DOUBLE:
            d[i] = ((const double *)data)[i];
            break;
        case SG_DTYPE_FLOAT16:
            d[i] = sg_half_to_float(((const uint16_t *)data)[i]);
            break;
        case SG_DTYPE_BFLOAT16:
            d[i] = sg_bf16_to_float(((const uint16_t *)data)[i]);
            break;
        case SG_DTYPE_INT64:
            d[i] = (double)((const int64_t *)data)[i];
            break;
        case SG_DTYPE_INT32:
            d[i] = ((const int32_t *)data)[i];
            break;
        default:
            sg_free(d);
            return false;
        }
    }
    *out = d;
    *n = numel;
    return true;
}

bool sg__atc_const_scalar(struct sg__atc_mock *c, const sg_value *v, double *out)
{
    double *d;
    int64_t n;
    if (!sg__atc_const_doubles(c, v, &d, &n))
        return false;
    bool ok = n == 1;
    if (ok)
        *out = d[0];
    sg_free(d);
    return ok;
}

bool sg__atc_reduce_axes(struct sg__atc_mock *c, const sg_node *n, int64_t *axes, size_t max,
                         size_t *count)
{
    *count = 0;
    const sg_attr *a = sg_node_attr(n, "axes");
    if (a && a->type == SG_ATTR_INTS) {
        if (a->n_ints > max)
            return false;
        memcpy(axes, a->ints, a->n_ints * sizeof *axes);
        *count = a->n_ints;
        return true;
    }
    if (n->n_inputs < 2 || !n->inputs[1])
        return !a; /* no axes: all of them */
    double *d;
    int64_t k;
    if (!sg__atc_const_doubles(c, n->inputs[1], &d, &k))
        return false;
    bool ok = (uint64_t)k <= max;
    for (int64_t i = 0; ok && i < k; i++)
        axes[i] = (int64_t)d[i];
    if (ok)
        *count = (size_t)k;
    sg_free(d);
    return ok;
}

int sg__atc_rank(const sg_value *v)
{
    const sg_type *t = v ? v->type : NULL;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape)
        return -1;
    return (int)t->shape->rank;
}

sg_value *sg__atc_new_const_f32(struct sg__atc_mock *c, const char *base, const float *data,
                                const int64_t *dims, uint32_t rank)
{
    const char *name = sg_model_fresh_name(c->m, base);
    int64_t numel = 1;
    for (uint32_t i = 0; i < rank; i++)
        numel *= dims[i];
    size_t nbytes = (size_t)numel * sizeof(float);
    sg_tensor *t = name ? sg_tensor_create(c->m, name, SG_DTYPE_FLOAT, dims, rank) : NULL;
    void *copy = t ? sg_arena_memdup(c->m->arena, data, nbytes ? nbytes : 1) : NULL;
    sg_type *type = copy ? sg_type_tensor(c->m, SG_DTYPE_FLOAT, dims, (int)rank) : NULL;
    sg_value *v = NULL;
    if (!type || sg_tensor_set_raw(c->m, t, copy, nbytes, NULL) ||
        sg_graph_add_value(c->g, name, type, &v, NULL) || sg_value_set_initializer(v, t)) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    return v;
}

sg_node **sg__atc_snapshot(struct sg__atc_mock *c, size_t *n)
{
    *n = 0;
    sg_node **order = sg_malloc((c->g->n_nodes + 1) * sizeof *order);
    if (!order) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    if (sg_graph_toposort(c->g, order, c->diag)) {
        sg_free(order);
        return NULL;
    }
    *n = c->g->n_nodes;
    return order;
}

sg_status sg__atc_each_node(struct sg__atc_mock *c,
                            sg_status (*fn)(struct sg__atc_mock *c, sg_node *n, void *ctx),
                            void *ctx)
{
    size_t n;
    sg_node **order = sg__atc_snapshot(c, &n);
    if (!order)
        return c->diag->status;
    sg_status st = SG_OK;
    for (size_t i = 0; i < n && !st; i++)
        if (!order[i]->dead)
            st = fn(c, order[i], ctx);
    sg_free(order);
    return st;
}

struct each_op {
    const char *op;
    sg_status (*fn)(struct sg__atc_mock *c, sg_node *n);
};

static sg_status if_op(struct sg__atc_mock *c, sg_node *n, void *ctx)
{
    const struct each_op *e = ctx;
    return sg__atc_is(n, e->op) ? e->fn(c, n) : SG_OK;
}

sg_status sg__atc_each_op(struct sg__atc_mock *c, const char *op,
                          sg_status (*fn)(struct sg__atc_mock *c, sg_node *n))
{
    struct each_op e = {op, fn};
    return sg__atc_each_node(c, if_op, &e);
}

sg_status sg__atc_copy_attr(sg_node *n, const sg_attr *a)
{
    char name[256];
    snprintf(name, sizeof name, "%s", a->name);
    switch (a->type) {
    case SG_ATTR_INT:
        return sg_node_set_attr_int(n, name, a->i);
    case SG_ATTR_FLOAT:
        return sg_node_set_attr_float(n, name, a->f);
    case SG_ATTR_INTS:
        return sg_node_set_attr_ints(n, name, a->ints, a->n_ints);
    case SG_ATTR_FLOATS:
        return sg_node_set_attr_floats(n, name, a->floats, a->n_floats);
    case SG_ATTR_STRING: {
        char *s = sg_malloc(a->s.len + 1);
        if (!s)
            return SG_ENOMEM;
        memcpy(s, a->s.data, a->s.len);
        s[a->s.len] = '\0';
        sg_status st = sg_node_set_attr_string(n, name, s);
        sg_free(s);
        return st;
    }
    case SG_ATTR_STRINGS: {
        char **v = sg_calloc(a->n_strings + 1, sizeof *v);
        sg_status st = v ? SG_OK : SG_ENOMEM;
        for (size_t i = 0; !st && i < a->n_strings; i++) {
            v[i] = sg_malloc(a->strings[i].len + 1);
            if (!v[i]) {
                st = SG_ENOMEM;
                break;
            }
            memcpy(v[i], a->strings[i].data, a->strings[i].len);
            v[i][a->strings[i].len] = '\0';
        }
        if (!st)
            st = sg_node_set_attr_strings(n, name, (const char *const *)v, a->n_strings);
        for (size_t i = 0; v && i < a->n_strings; i++)
            sg_free(v[i]);
        sg_free(v);
        return st;
    }
    default:
        return SG_EUNSUPPORTED;
    }
}

sg_status sg__atc_copy_op_attrs(struct sg__atc_mock *c, sg_node *n, sg_attr *const *attrs,
                                uint32_t n_attrs, const char *what)
{
    for (uint32_t i = 0; i < n_attrs; i++) {
        const char *an = attrs[i]->name;
        if (!an || an[0] == '_' || strcmp(an, SG_MOCKOM_ATTR_PASS) == 0 ||
            strcmp(an, SG_MOCKOM_ATTR_PASS_UB) == 0)
            continue;
        sg_status st = sg__atc_copy_attr(n, attrs[i]);
        if (st == SG_EUNSUPPORTED)
            return sg_diag_set(c->diag, st, "%s: attribute '%s' of a type the fused op cannot hold",
                               what, an);
        if (st)
            return sg_diag_set(c->diag, st, "out of memory");
    }
    return SG_OK;
}

const char *sg__atc_joined_name(struct sg__atc_mock *c, sg_node *const *nodes, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(nodes[i]->name);
    char *s = sg_arena_alloc(c->m->arena, len + 32);
    if (!s)
        return NULL;
    if (len <= 120) {
        size_t pos = 0;
        for (size_t i = 0; i < n; i++) {
            size_t l = strlen(nodes[i]->name);
            memcpy(s + pos, nodes[i]->name, l);
            pos += l;
        }
        s[pos] = '\0';
    } else {
        snprintf(s, len + 32, "%.100s_fused%zu", nodes[0]->name, n);
    }
    return s;
}

static sg_status push_name(const char *s, const char ***names, size_t *count, size_t *cap)
{
    if (*count == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        const char **grown = sg_realloc(*names, nc * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        *names = grown;
        *cap = nc;
    }
    (*names)[(*count)++] = s;
    return SG_OK;
}

/* Strings of attribute `key` of n as arena copies (NUL-terminated). */
static sg_status attr_strings(sg_model *m, const sg_node *n, const char *key, const char ***names,
                              size_t *count, size_t *cap)
{
    const sg_attr *a = sg_node_attr(n, key);
    if (!a)
        return SG_OK;
    size_t k = a->type == SG_ATTR_STRINGS ? a->n_strings : a->type == SG_ATTR_STRING ? 1 : 0;
    for (size_t i = 0; i < k; i++) {
        const sg_bytes *b = a->type == SG_ATTR_STRINGS ? &a->strings[i] : &a->s;
        char *s = sg_arena_alloc(m->arena, b->len + 1);
        if (!s)
            return SG_ENOMEM;
        memcpy(s, b->data, b->len);
        s[b->len] = '\0';
        sg_status st = push_name(s, names, count, cap);
        if (st)
            return st;
    }
    return SG_OK;
}

sg_status sg__atc_orig_names(const sg_node *n, const char ***names, size_t *count, size_t *cap)
{
    if (sg_node_attr(n, SG_MOCKOM_ATTR_ORIGINAL))
        return attr_strings(n->graph->model, n, SG_MOCKOM_ATTR_ORIGINAL, names, count, cap);
    return push_name(n->name ? n->name : "", names, count, cap);
}

/* Remove value v's constant source when nothing reads v any more. */
static sg_status drop_unused_const(sg_value *v, struct sg_diag *diag)
{
    if (!v || v->n_uses || (v->flags & (SG_VALUE_OUTPUT | SG_VALUE_INPUT)) || v->outer)
        return SG_OK;
    if (v->producer && sg__atc_is(v->producer, "Constant"))
        return sg_node_remove(v->producer, diag);
    if (v->init && !v->producer)
        return sg_value_remove(v);
    return SG_OK;
}

sg_status sg__atc_fuse(struct sg__atc_mock *c, const struct sg__atc_fusion *f, sg_node **fused)
{
    sg_model *m = c->m;
    sg_status st = SG_OK;
    const char **orig = NULL, **passes = NULL;
    size_t n_orig = 0, cap_orig = 0, n_passes = 0, cap_passes = 0;
    const char *ub = NULL;
    const struct sg_fusion_pass *fp = sg_fusion_pass_get(f->pass);
    *fused = NULL;

    /* What the pattern was, read before it goes. */
    for (size_t i = 0; i < f->n_nodes && !st; i++) {
        const sg_node *n = f->nodes[i];
        st = sg__atc_orig_names(n, &orig, &n_orig, &cap_orig);
        if (!st)
            st = attr_strings(m, n, SG_MOCKOM_ATTR_PASS, &passes, &n_passes, &cap_passes);
        const sg_attr *u = sg_node_attr(n, SG_MOCKOM_ATTR_PASS_UB);
        if (u && u->type == SG_ATTR_STRING && u->s.len && !ub) {
            char *s = sg_arena_alloc(m->arena, u->s.len + 1);
            if (!s)
                st = SG_ENOMEM;
            else {
                memcpy(s, u->s.data, u->s.len);
                s[u->s.len] = '\0';
                ub = s;
            }
        }
    }
    if (!st && fp->kind == SG_FUSION_GRAPH)
        st = push_name(fp->name, &passes, &n_passes, &cap_passes);
    if (!st && fp->kind == SG_FUSION_UB)
        ub = fp->name;
    if (st)
        goto nomem;

    /* The compute dtype (UB fusion joins only nodes that share one). */
    const sg_attr *dt[2] = {NULL, NULL};
    static const char *const dt_keys[2] = {SG_MOCKOM_ATTR_INPUT_DTYPE, SG_MOCKOM_ATTR_OUTPUT_DTYPE};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < f->n_nodes && !dt[s]; i++)
            dt[s] = sg_node_attr(f->nodes[i], dt_keys[s]);

    const char *tmp_name = sg_model_fresh_name(m, f->name);
    sg_node *fn =
        tmp_name ? sg_node_create(c->g, f->op_type, SG_MOCKOM_DOMAIN, tmp_name, NULL) : NULL;
    if (!fn)
        goto nomem;
    /* The visible output moves to the fused node; intermediates go with
     * the pattern. */
    sg_node *prod = f->out->producer;
    uint32_t idx = f->out->producer_index;
    if ((st = sg_node_set_output(prod, idx, NULL)) || (st = sg_node_set_output(fn, 0, f->out)))
        goto fail;
    for (size_t i = 0; i < f->n_ins; i++)
        if ((st = sg_node_set_input(fn, (uint32_t)i, f->ins[i])))
            goto fail;
    sg_node_move_after(fn, f->nodes[f->n_nodes - 1]);
    /* The pattern's inputs, to drop constants only it read. */
    sg_value **pin = NULL;
    size_t n_pin = 0;
    for (size_t i = 0; i < f->n_nodes; i++)
        n_pin += f->nodes[i]->n_inputs;
    pin = sg_calloc(n_pin + 1, sizeof *pin);
    if (!pin)
        goto nomem;
    n_pin = 0;
    for (size_t i = 0; i < f->n_nodes; i++)
        for (uint32_t j = 0; j < f->nodes[i]->n_inputs; j++)
            pin[n_pin++] = f->nodes[i]->inputs[j];
    for (size_t i = f->n_nodes; i-- > 0 && !st;)
        st = sg_node_remove(f->nodes[i], c->diag);
    for (size_t i = 0; i < n_pin && !st; i++) {
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= pin[k] == pin[i];
        if (!seen && pin[i] && pin[i]->graph == c->g &&
            sg_graph_value(c->g, pin[i]->name) == pin[i])
            st = drop_unused_const(pin[i], c->diag);
    }
    sg_free(pin);
    if (st)
        goto fail;
    /* Its own name now that the pattern's names are free. */
    if (strcmp(tmp_name, f->name) != 0 && !sg_graph_node(c->g, f->name))
        sg_node_rename(fn, f->name, NULL);
    if ((st = sg_node_set_attr_strings(fn, SG_MOCKOM_ATTR_ORIGINAL, orig, n_orig)) ||
        (n_passes && (st = sg_node_set_attr_strings(fn, SG_MOCKOM_ATTR_PASS, passes, n_passes))) ||
        (ub && (st = sg_node_set_attr_string(fn, SG_MOCKOM_ATTR_PASS_UB, ub))) ||
        (f->atc_type && (st = sg_node_set_attr_string(fn, SG_MOCKOM_ATTR_ATC_TYPE, f->atc_type))))
        goto nomem;
    for (int s = 0; s < 2; s++)
        if (dt[s] && (st = sg__atc_copy_attr(fn, dt[s])))
            goto nomem;
    c->rep->fired[f->pass]++;
    *fused = fn;
    goto out;
nomem:
    st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    goto out;
fail:
    sg_diag_set(c->diag, st, "fusing '%s' (%s): %s", f->name, fp->name, sg_strerror(st));
out:
    sg_free(orig);
    sg_free(passes);
    return st;
}
