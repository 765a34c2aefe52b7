/*
 * golden.c - a golden run kept in memory (sg_verify_golden): the float32
 * run of a model with every main-graph tensor held by name, for the
 * workflows that cut the model (single-op cases, bisection) and need the
 * golden value of any tensor at any cut without reading dumps back.
 */
#include "sg_alloc.h"
#include "strmap.h"
#include "verify_impl.h"

#include <string.h>

struct sg_verify_tensors {
    char **names;
    sg_rt_value **values;
    size_t n, cap;
    struct sg__strmap by_name; /* name -> index + 1 */
    bool oom;
};

static void add(sg_verify_tensors *t, const char *name, const sg_rt_value *v)
{
    if (t->oom || sg__strmap_get(&t->by_name, name))
        return; /* a name once: the first value is the graph's */
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **nn = sg_realloc(t->names, cap * sizeof *nn);
        if (nn)
            t->names = nn;
        sg_rt_value **nv = nn ? sg_realloc(t->values, cap * sizeof *nv) : NULL;
        if (!nv) {
            t->oom = true;
            return;
        }
        t->values = nv;
        t->cap = cap;
    }
    char *s = sg_strdup(name);
    if (!s || sg__strmap_put_h(&t->by_name, s, sg__strhash(s), (void *)(uintptr_t)(t->n + 1))) {
        sg_free(s);
        t->oom = true;
        return;
    }
    t->names[t->n] = s;
    t->values[t->n++] = sg_rt_value_ref((sg_rt_value *)v);
}

static sg_status observe(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                         void *ctx, struct sg_diag *diag)
{
    sg_verify_tensors *t = ctx;
    if (depth == 0 && v && v->kind == SG_RT_TENSOR && n->outputs[index])
        add(t, n->outputs[index]->name, v);
    return t->oom ? sg_diag_set(diag, SG_ENOMEM, "out of memory keeping the golden tensors")
                  : SG_OK;
}

void sg_verify_tensors_free(sg_verify_tensors *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        sg_free(t->names[i]);
        sg_rt_value_unref(t->values[i]);
    }
    sg__strmap_free(&t->by_name);
    sg_free(t->names);
    sg_free(t->values);
    sg_free(t);
}

sg_rt_value *sg_verify_tensors_find(const sg_verify_tensors *t, const char *name)
{
    uintptr_t i = t ? (uintptr_t)sg__strmap_get(&t->by_name, name) : 0;
    return i ? t->values[i - 1] : NULL;
}

size_t sg_verify_tensors_count(const sg_verify_tensors *t)
{
    return t ? t->n : 0;
}

static sg_status source_get(void *ctx, const char *name, struct sg_array *out, struct sg_diag *diag)
{
    sg_rt_value *v = sg_verify_tensors_find(ctx, name);
    if (!v)
        return sg_diag_set(diag, SG_ENOTFOUND,
                           "the golden run produced no tensor '%s' (not a tensor, or inside a "
                           "subgraph)",
                           name);
    return sg_rt_tensor_to_array(v, out, diag);
}

struct sg_case_source sg_verify_tensors_source(sg_verify_tensors *t)
{
    return (struct sg_case_source){source_get, t};
}

static sg_status type_of(void *ctx, sg_model *m, const sg_value *v, sg_type **type,
                         struct sg_diag *diag)
{
    const sg_rt_value *x = sg_verify_tensors_find(ctx, v->name);
    if (!x || x->kind != SG_RT_TENSOR)
        return SG_OK; /* not known here: the cut infers what it can */
    *type = sg_type_tensor(m, x->dtype, x->dims, (int)x->rank);
    return *type ? SG_OK : sg_diag_set(diag, SG_ENOMEM, "out of memory");
}

struct sg_cut_typer sg_verify_tensors_typer(sg_verify_tensors *t)
{
    return (struct sg_cut_typer){type_of, t};
}

sg_status sg_verify_golden(sg_model *m, const struct sg_verify_golden_opts *o,
                           struct sg_verify_values *values, sg_verify_tensors **out,
                           struct sg_diag *d)
{
    *out = NULL;
    sg_verify_tensors *t = sg_calloc(1, sizeof *t);
    if (!t)
        return sg_diag_set(d, SG_ENOMEM, "out of memory");
    struct sg_rt_opts opts = {.on_output = observe,
                              .observe_ctx = t,
                              .threads = o->threads,
                              .max_loop_iterations = o->max_loop_iterations};
    sg_rt *rt = NULL;
    bool made = false;
    sg_status st = sg_rt_create(m, &opts, &rt, d);
    if (st)
        goto out;
    if (!values->n) {
        if (!o->inputs) {
            st = sg_diag_set(d, SG_EINVAL, "no inputs given");
            goto out;
        }
        if ((st = sg_verify_inputs_load(o->inputs, rt, values, d)))
            goto out;
        made = true;
    }
    for (uint32_t r = 0; r < sg_rt_n_inputs(rt) && !st; r++) {
        const char *name = sg_rt_input(rt, r)->name;
        sg_rt_value *v = sg_verify_values_find(values, name);
        if (!v)
            st = sg_diag_set(d, SG_ENOTFOUND, "no value for input '%s'", name);
        else if (!(st = sg_rt_set_input(rt, name, v, d)))
            add(t, name, v);
    }
    if (!st && t->oom)
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
    if (!st)
        st = sg_rt_run(rt, d);
    if (st)
        sg_diag_prefix(d, "golden run of %s", o->label ? o->label : "the model");
out:
    sg_rt_free(rt);
    if (st) {
        if (made)
            sg_verify_values_clear(values);
        sg_verify_tensors_free(t);
        return st;
    }
    *out = t;
    return SG_OK;
}
