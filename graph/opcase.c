/*
 * opcase.c - single-op test cases: one node of a model with its golden
 * inputs and outputs, in the layout of the ONNX backend tests, so that any
 * backend runner (surgeon run --case, onnxruntime's, a device's) can check
 * the operator alone.
 *
 * The case model comes from sg_model_extract with every input of the node
 * listed: nothing but the node stays. Inputs computed from constants
 * (Constant nodes, shape arithmetic on weights) become initializers holding
 * their golden values, as the backend tests hold attributes-as-inputs.
 */
#include "cut_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"
#include "sg_dumpname.h"
#include "sg_io.h"
#include "sg_json_read.h"
#include "sg_tensorfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *label(const sg_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

/* Is v computed from constants alone? (Bounded depth: past it, v is taken
 * for a tensor of the run, which is only less compact.) */
static bool is_const(sg_value *v, int depth)
{
    if (!v || v->init || v->sparse_init)
        return v && !(v->flags & SG_VALUE_INPUT);
    if (!v->producer || depth > 32)
        return false;
    sg_node *p = v->producer;
    if (strcmp(p->op_type, "Constant") == 0 && (!p->domain || !*p->domain))
        return true;
    if (p->graph->has_subgraphs) {
        bool has_sub = false;
        for (uint32_t i = 0; i < p->n_attrs; i++)
            has_sub |= p->attrs[i]->type == SG_ATTR_GRAPH || p->attrs[i]->type == SG_ATTR_GRAPHS;
        if (has_sub)
            return false;
    }
    if (p->n_inputs == 0)
        return false; /* random generators and the like */
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i] && !is_const(p->inputs[i], depth + 1))
            return false;
    return true;
}

struct typer_ctx {
    const struct sg_case_source *src;
};

static sg_status type_from_src(void *ctx, sg_model *m, const sg_value *v, sg_type **type,
                               struct sg_diag *diag)
{
    struct typer_ctx *t = ctx;
    struct sg_array a = {0};
    sg_status st = t->src->get(t->src->ctx, v->name, &a, diag);
    if (st)
        return st;
    *type = sg_type_tensor(m, a.dtype, a.dims, (int)a.rank);
    sg_array_free(&a);
    return *type ? SG_OK : sg_diag_set(diag, SG_ENOMEM, "out of memory");
}

static sg_status push_name(sg_value *v, void *arg)
{
    return sg__ptrvec_push(arg, (void *)v->name);
}

sg_status sg_case_make(sg_model *m, const char *node, const struct sg_case_source *src,
                       struct sg_diag *diag)
{
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    sg_graph *g = m->graph;
    sg_node *n = NULL;
    for (sg_node *x = g->first; x && !n; x = x->next)
        if (x->name && strcmp(x->name, node) == 0)
            n = x;
    if (!n) {
        /* an unnamed node by the name its dumps carry (msit's <OpType>_<i>) */
        sg_dump_names *t = NULL;
        sg_status ts = sg_dump_names_create(m, &t, diag);
        if (ts == SG_ENOMEM)
            return ts;
        sg_node *x = t ? sg_dump_names_node(t, node) : NULL;
        if (x && (!x->name || !*x->name) && x->graph == g)
            n = x;
        sg_dump_names_free(t);
    }
    if (!n) {
        sg_node *owner = sg__graph_sub_owner_of(g, node, true);
        if (owner)
            return sg_diag_set(diag, SG_EINVAL,
                               "node '%s' is inside a subgraph of node '%s' (%s): a case is made "
                               "of a main-graph node (its subgraphs come with it)",
                               node, label(owner), owner->op_type);
        char close[256];
        sg_graph_close_names(g, node, true, close, sizeof close);
        return sg_diag_set(diag, SG_ENOTFOUND, "no node named '%s' in the main graph%s%s%s", node,
                           *close ? " (close names: " : "", close, *close ? ")" : "");
    }
    struct sg__ptrvec ins = {0}, outs = {0}, consts = {0};
    sg_status st = SG_OK;
    for (uint32_t i = 0; i < n->n_inputs && !st; i++) {
        sg_value *v = n->inputs[i];
        if (!v || (v->init && !(v->flags & SG_VALUE_INPUT)))
            continue;
        st = sg__ptrvec_push(&ins, (void *)v->name);
        if (!st && is_const(v, 0))
            st = sg__ptrvec_push(&consts, (void *)v->name);
    }
    if (!st)
        st = sg__node_for_each_outer_read(n, push_name, &ins);
    for (uint32_t i = 0; i < n->n_outputs && !st; i++)
        if (n->outputs[i])
            st = sg__ptrvec_push(&outs, (void *)n->outputs[i]->name);
    if (st) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    struct typer_ctx tc = {src};
    struct sg_extract_spec spec = {.inputs = (const char *const *)ins.v,
                                   .n_inputs = ins.n,
                                   .outputs = (const char *const *)outs.v,
                                   .n_outputs = outs.n,
                                   .typer = {type_from_src, &tc}};
    if ((st = sg_model_extract(m, &spec, NULL, diag)))
        goto out;
    /* Constant inputs become initializers holding their golden values. */
    for (size_t i = 0; i < consts.n; i++) {
        sg_value *v = sg_graph_value(g, consts.v[i]);
        if (!v || v->init)
            continue;
        struct sg_array a = {0};
        if ((st = src->get(src->ctx, v->name, &a, diag)))
            goto out;
        sg_tensor *t = sg_tensor_create(m, v->name, a.dtype, a.dims, a.rank);
        sg_blob *b = t ? sg_blob_create(a.nbytes ? a.nbytes : 1) : NULL;
        if (!b) {
            sg_array_free(&a);
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            goto out;
        }
        if (a.nbytes)
            memcpy(b->data, a.data, a.nbytes);
        st = a.dtype == SG_DTYPE_STRING
                 ? sg_diag_set(diag, SG_EUNSUPPORTED, "constant string input '%s'", v->name)
                 : sg_tensor_set_raw(m, t, b->data, a.nbytes, b);
        sg_blob_unref(b);
        sg_array_free(&a);
        if (st || (st = sg_graph_remove_input(g, v)) || (st = sg_value_set_initializer(v, t)))
            goto out;
    }
out:
    sg__ptrvec_free(&ins);
    sg__ptrvec_free(&outs);
    sg__ptrvec_free(&consts);
    return st;
}

static sg_status write_pb(const char *dir, const char *kind, uint32_t k, sg_value *v,
                          const struct sg_case_source *src, struct sg_diag *diag)
{
    struct sg_array a = {0};
    sg_status st = src->get(src->ctx, v->name, &a, diag);
    if (st)
        return st;
    char path[4096];
    snprintf(path, sizeof path, "%s/test_data_set_0/%s_%u.pb", dir, kind, k);
    sg_free(a.name);
    a.name = sg_strdup(v->name);
    st = a.name ? sg_pb_write(path, &a, diag) : sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_array_free(&a);
    return st;
}

sg_status sg_case_write(sg_model *m, const char *dir, const struct sg_case_source *src,
                        const struct sg_save_opts *opts, struct sg_diag *diag)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/test_data_set_0", dir) >= (int)sizeof path)
        return sg_diag_set(diag, SG_ERANGE, "%s: path too long", dir);
    if (mkdir(path, 0777) != 0)
        return sg_diag_set(diag, SG_EIO, "%s: %s", path, strerror(errno));
    sg_graph *g = m->graph;
    sg_status st = SG_OK;
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n_inputs && !st; i++)
        if (!g->inputs[i]->init)
            st = write_pb(dir, "input", k++, g->inputs[i], src, diag);
    for (uint32_t i = 0; i < g->n_outputs && !st; i++)
        st = write_pb(dir, "output", i, g->outputs[i], src, diag);
    if (st)
        return st;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    return sg_model_save(m, path, opts, diag);
}

/* ------------------------------------------------------- dump folders */

struct sg_dump_source {
    char *dir;
    struct sg_jdoc *doc;
    struct sg__strmap files; /* value name -> file (in the document) */
};

static sg_status dump_get(void *ctx, const char *name, struct sg_array *out, struct sg_diag *diag)
{
    sg_dump_source *ds = ctx;
    const char *file = sg__strmap_get(&ds->files, name);
    if (!file)
        return sg_diag_set(diag, SG_ENOTFOUND,
                           "the dump %s has no tensor '%s' (make it with `surgeon run MODEL "
                           "--dump all`, on the same model)",
                           ds->dir, name);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ds->dir, file);
    return sg_npy_read(path, out, diag);
}

static sg_status add_files(sg_dump_source *ds, const struct sg_jval *list, const char *key)
{
    if (!list || list->type != SG_JSON_ARRAY)
        return SG_OK;
    for (size_t i = 0; i < list->n_items; i++) {
        const struct sg_jval *e = list->items[i];
        const struct sg_jval *name = sg_jval_get(e, key), *file = sg_jval_get(e, "file");
        if (!name || name->type != SG_JSON_STRING || !file || file->type != SG_JSON_STRING)
            continue; /* strings, sequences: numpy cannot hold them */
        if (strchr(file->str, '/') && strncmp(file->str, "inputs/", 7) != 0)
            continue; /* never read outside the folder */
        if (strstr(file->str, ".."))
            continue;
        const struct sg_jval *fd = sg_jval_get(e, "file_dtype");
        if (fd)
            continue; /* a bfloat16 tensor written as float32: not its golden bytes */
        if (!sg__strmap_get(&ds->files, name->str) &&
            sg__strmap_put(&ds->files, name->str, (void *)file->str))
            return SG_ENOMEM;
    }
    return SG_OK;
}

sg_status sg_dump_source_open(const char *dir, sg_dump_source **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_dump_source *ds = sg_calloc(1, sizeof *ds);
    if (!ds || !(ds->dir = sg_strdup(dir))) {
        sg_free(ds);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    sg_status st = sg_json_parse_file(path, NULL, &ds->doc, diag);
    if (!st) {
        const struct sg_jval *fmt = sg_jval_get(ds->doc->root, "format");
        if (!fmt || fmt->type != SG_JSON_STRING || strcmp(fmt->str, "surgeon-dump") != 0)
            st = sg_diag_set(diag, SG_EPARSE, "%s: not a surgeon dump manifest", path);
    }
    if (!st && ((st = add_files(ds, sg_jval_get(ds->doc->root, "tensors"), "value")) ||
                (st = add_files(ds, sg_jval_get(ds->doc->root, "inputs"), "name"))))
        st = sg_diag_set(diag, st, "out of memory");
    if (st) {
        sg_dump_source_free(ds);
        return st;
    }
    *out = ds;
    return SG_OK;
}

struct sg_case_source sg_dump_source_get(sg_dump_source *ds)
{
    return (struct sg_case_source){dump_get, ds};
}

void sg_dump_source_free(sg_dump_source *ds)
{
    if (!ds)
        return;
    sg__strmap_free(&ds->files);
    sg_jdoc_free(ds->doc);
    sg_free(ds->dir);
    sg_free(ds);
}

char *sg_case_dir_name(const char *node, char *buf, size_t size)
{
    size_t len = strlen(node), w = 0;
    bool dots = strcmp(node, ".") == 0 || strcmp(node, "..") == 0 || len == 0;
    if (dots && size > 1)
        buf[w++] = '_';
    for (size_t i = 0; i < len && w + 1 < size && w < 100; i++) {
        unsigned char c = (unsigned char)node[i];
        buf[w++] = (c < 0x20 || c == '/' || c == '\\' || c == ':' || c == 0x7f) ? '_' : (char)c;
    }
    buf[w] = '\0';
    if (len > 100 && size >= 129) /* shortened: a hash keeps it unique */
        snprintf(buf + w, size - w, "_%016llx", (unsigned long long)sg__strhash(node));
    return buf;
}
