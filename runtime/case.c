/*
 * case.c - backend-test folders on the runtime (sg_case.h): the backend
 * rule, and a run of every data set of a case.
 */
#include "sg_case.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_tensorfile.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir starting with prefix, sorted; NULL when none. */
static char **list_prefixed(const char *dir, const char *prefix, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **v = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            char **g = realloc(v, cap * sizeof *g);
            if (!g)
                break;
            v = g;
        }
        if (!(v[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static enum sg_pb_kind pb_kind(const sg_type *t)
{
    if (t && t->kind == SG_TYPE_SEQUENCE)
        return SG_PB_SEQUENCE;
    if (t && t->kind == SG_TYPE_OPTIONAL)
        return SG_PB_OPTIONAL;
    return SG_PB_TENSOR;
}

sg_status sg_rt_value_read_pb(const char *path, const sg_type *t, sg_rt_value **out,
                              struct sg_diag *d)
{
    struct sg_pb_value pv;
    sg_status st = sg_pb_read_value(path, pb_kind(t), &pv, d);
    if (st)
        return st;
    /* The ONNX 1.12 test data stores bfloat16 tensors as uint16. */
    if (pv.kind == SG_PB_TENSOR && pv.tensor.dtype == SG_DTYPE_UINT16 && t &&
        t->kind == SG_TYPE_TENSOR && t->elem_type == SG_DTYPE_BFLOAT16)
        pv.tensor.dtype = SG_DTYPE_BFLOAT16;
    st = sg_rt_value_from_pb(&pv, t, out, d);
    sg_pb_value_free(&pv);
    return st;
}

static bool is_float(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT || dt == SG_DTYPE_DOUBLE || dt == SG_DTYPE_FLOAT16 ||
           dt == SG_DTYPE_BFLOAT16 || dt == SG_DTYPE_COMPLEX64 || dt == SG_DTYPE_COMPLEX128;
}

static double elem_f(const sg_rt_value *v, int64_t i)
{
    switch (v->dtype) {
    case SG_DTYPE_FLOAT:
        return ((const float *)v->data)[i];
    case SG_DTYPE_DOUBLE:
        return ((const double *)v->data)[i];
    case SG_DTYPE_FLOAT16:
        return sg_half_to_float(((const uint16_t *)v->data)[i]);
    case SG_DTYPE_BFLOAT16:
        return sg_bf16_to_float(((const uint16_t *)v->data)[i]);
    case SG_DTYPE_COMPLEX64:
        return ((const float *)v->data)[i];
    case SG_DTYPE_COMPLEX128:
        return ((const double *)v->data)[i];
    default:
        return 0;
    }
}

bool sg_rt_backend_match(const sg_rt_value *got, const sg_rt_value *want, char *why, size_t size)
{
    char a[300], b[300];
    if (got->kind != want->kind || (got->kind != SG_RT_OPTIONAL && got->dtype != want->dtype &&
                                    !(got->kind == SG_RT_SEQUENCE && want->n_items == 0))) {
        snprintf(why, size, "got %s, want %s", sg_rt_value_format(got, a, sizeof a),
                 sg_rt_value_format(want, b, sizeof b));
        return false;
    }
    if (got->kind != SG_RT_TENSOR) {
        if (got->n_items != want->n_items) {
            snprintf(why, size, "got %s, want %s", sg_rt_value_format(got, a, sizeof a),
                     sg_rt_value_format(want, b, sizeof b));
            return false;
        }
        for (size_t i = 0; i < got->n_items; i++) {
            char inner[400];
            if (!sg_rt_backend_match(got->items[i], want->items[i], inner, sizeof inner)) {
                snprintf(why, size, "item %zu: %s", i, inner);
                return false;
            }
        }
        return true;
    }
    if (got->rank != want->rank || memcmp(got->dims, want->dims, got->rank * sizeof got->dims[0])) {
        snprintf(why, size, "got shape %s, want %s", sg_rt_value_format(got, a, sizeof a),
                 sg_rt_value_format(want, b, sizeof b));
        return false;
    }
    int64_t n = got->numel;
    if (got->dtype == SG_DTYPE_COMPLEX64 || got->dtype == SG_DTYPE_COMPLEX128)
        n *= 2;
    if (got->dtype == SG_DTYPE_STRING) {
        const sg_bytes *x = got->data, *y = want->data;
        for (int64_t i = 0; i < n; i++)
            if (x[i].len != y[i].len || (x[i].len && memcmp(x[i].data, y[i].data, x[i].len))) {
                snprintf(why, size, "[%lld]: got \"%.*s\", want \"%.*s\"", (long long)i,
                         (int)(x[i].len > 60 ? 60 : x[i].len), (const char *)x[i].data,
                         (int)(y[i].len > 60 ? 60 : y[i].len), (const char *)y[i].data);
                return false;
            }
        return true;
    }
    if (is_float(got->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            double x = elem_f(got, i), y = elem_f(want, i);
            if (x == y || (isnan(x) && isnan(y)))
                continue;
            if (!(fabs(x - y) <= SG_CASE_ATOL + SG_CASE_RTOL * fabs(y))) {
                snprintf(why, size, "[%lld] of %s: got %.9g, want %.9g", (long long)i,
                         sg_rt_value_format(want, b, sizeof b), x, y);
                return false;
            }
        }
        return true;
    }
    size_t es = sg_rt_elem_size(got->dtype);
    for (int64_t i = 0; i < n; i++)
        if (memcmp((const char *)got->data + i * es, (const char *)want->data + i * es, es)) {
            /* integer or bool: show as integers */
            long long x = 0, y = 0;
            memcpy(&x, (const char *)got->data + i * es, es < 8 ? es : 8);
            memcpy(&y, (const char *)want->data + i * es, es < 8 ? es : 8);
            snprintf(why, size, "[%lld] of %s: got %lld, want %lld (raw bits)", (long long)i,
                     sg_rt_value_format(want, b, sizeof b), x, y);
            return false;
        }
    return true;
}

sg_status sg_rt_case_run(const char *dir, const struct sg_rt_opts *opts, struct sg_case_result *r,
                         struct sg_diag *diag)
{
    memset(r, 0, sizeof *r);
    char path[4096];
    sg_model *m = NULL;
    sg_rt *rt = NULL;
    char **sets = NULL;
    size_t n_sets = 0;
    if (snprintf(path, sizeof path, "%s/model.onnx", dir) >= (int)sizeof path)
        return sg_diag_set(diag, SG_ERANGE, "%s: path too long", dir);
    sg_status st = sg_model_load(path, NULL, &m, diag);
    if (st)
        return st;
    if ((st = sg_rt_create(m, opts, &rt, diag)))
        goto out;
    sets = list_prefixed(dir, "test_data_set_", &n_sets);
    if (!n_sets) {
        st = sg_diag_set(diag, SG_EINVAL, "%s: no test_data_set_* folder", dir);
        goto out;
    }
    r->pass = true;
    for (size_t k = 0; k < n_sets && !st && r->pass; k++) {
        char sdir[4200];
        snprintf(sdir, sizeof sdir, "%s/%s", dir, sets[k]);
        size_t n_in, n_out;
        char **ins = list_prefixed(sdir, "input_", &n_in);
        char **outs = list_prefixed(sdir, "output_", &n_out);
        free_list(ins, n_in);
        free_list(outs, n_out);
        const sg_graph *g = m->graph;
        bool all = n_in != sg_rt_n_inputs(rt) && n_in == g->n_inputs;
        if (n_in != sg_rt_n_inputs(rt) && !all) {
            st = sg_diag_set(diag, SG_EINVAL, "%s: %zu input files for %u inputs", sdir, n_in,
                             sg_rt_n_inputs(rt));
            break;
        }
        if (n_out != sg_rt_n_outputs(rt)) {
            st = sg_diag_set(diag, SG_EINVAL, "%s: %zu output files for %u outputs", sdir, n_out,
                             sg_rt_n_outputs(rt));
            break;
        }
        for (size_t i = 0; i < n_in && !st; i++) {
            char f[4300];
            snprintf(f, sizeof f, "%s/input_%zu.pb", sdir, i);
            const sg_value *gv = all ? g->inputs[i] : sg_rt_input(rt, (uint32_t)i);
            sg_rt_value *v = NULL;
            if (!(st = sg_rt_value_read_pb(f, gv->type, &v, diag)))
                st = sg_rt_set_input(rt, gv->name, v, diag);
            sg_rt_value_unref(v);
        }
        if (!st)
            st = sg_rt_run(rt, diag);
        for (size_t i = 0; i < n_out && !st && r->pass; i++) {
            char f[4300];
            snprintf(f, sizeof f, "%s/output_%zu.pb", sdir, i);
            const sg_value *gv = sg_rt_output_info(rt, (uint32_t)i);
            sg_rt_value *want = NULL;
            if ((st = sg_rt_value_read_pb(f, gv->type, &want, diag)))
                break;
            char reason[700];
            r->n_outputs++;
            if (!sg_rt_backend_match(sg_rt_output(rt, (uint32_t)i), want, reason, sizeof reason)) {
                snprintf(r->why, sizeof r->why, "%s: output %zu '%s' %s", sets[k], i, gv->name,
                         reason);
                r->pass = false;
            }
            sg_rt_value_unref(want);
        }
        r->n_sets++;
    }
    if (st)
        r->pass = false;
out:
    free_list(sets, n_sets);
    sg_rt_free(rt);
    sg_model_free(m);
    return st;
}
