/*
 * cases.c - single-op cases as a workflow (sg_verify_case_write,
 * sg_verify_cases_write): one node of a model cut out with its golden
 * tensors into an ONNX backend-test folder, or one folder per node with an
 * index.json, the result folder appearing whole or not at all.
 *
 * `surgeon extract --node/--nodes/--all`, the single-op compare and the
 * bisection's culprit case all write their cases here.
 */
#include "sg_alloc.h"
#include "sg_cut.h"
#include "sg_dumpname.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_outdir.h"
#include "verify_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

sg_status sg_verify_case_write(sg_model *m, const char *node, const struct sg_case_source *src,
                               const char *dir, const struct sg_save_opts *save, struct sg_diag *d)
{
    sg_model *cm = NULL;
    sg_status st = sg_model_clone(m, &cm, d);
    if (!st)
        st = sg_case_make(cm, node, src, d);
    if (!st)
        st = sg_case_write(cm, dir, src, save, d);
    sg_model_free(cm);
    return st;
}

void sg_verify_cases_clear(struct sg_verify_cases_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        sg_free(r->v[i].node);
        sg_free(r->v[i].op_type);
        sg_free(r->v[i].dir);
        sg_free(r->v[i].error);
    }
    sg_free(r->v);
    memset(r, 0, sizeof *r);
}

static bool dir_taken(const struct sg_verify_case *v, size_t n, const char *dir)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].dir && strcmp(v[i].dir, dir) == 0)
            return true;
    return false;
}

static sg_status index_writer(FILE *f, void *arg)
{
    const struct sg_verify_cases_result *r = arg;
    struct sg_json j;
    sg_json_init(&j, f, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "format");
    sg_json_string(&j, "surgeon-cases");
    sg_json_key(&j, "version");
    sg_json_int(&j, 1);
    sg_json_key(&j, "cases");
    sg_json_array_begin(&j);
    for (size_t i = 0; i < r->n; i++) {
        sg_json_object_begin(&j);
        sg_json_key(&j, "node");
        sg_json_string(&j, r->v[i].node);
        sg_json_key(&j, "op_type");
        sg_json_string(&j, r->v[i].op_type);
        sg_json_key(&j, "dir");
        sg_json_string(&j, r->v[i].dir);
        if (r->v[i].error) {
            sg_json_key(&j, "error");
            sg_json_string(&j, r->v[i].error);
        }
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_object_end(&j);
    fputc('\n', f);
    return ferror(f) ? SG_EIO : SG_OK;
}

/* One entry of a sweep: its case folder under tmp, or its error. */
static sg_status sweep_one(sg_model *m, const struct sg_verify_cases_opts *o,
                           const sg_dump_names *names, const char *tmp,
                           struct sg_verify_cases_result *r, size_t i,
                           const struct sg_verify_events *ev, struct sg_diag *d)
{
    struct sg_verify_case *e = &r->v[r->n++];
    const char *name = o->nodes[i];
    sg_node *n = sg_model_find_node(m, name);
    if (!n)
        n = sg_dump_names_node(names, name);
    char safe[160], dir[4096];
    if (!(e->node = sg_strdup(name)) || !(e->op_type = sg_strdup(n ? n->op_type : "")))
        return sg_diag_set(d, SG_ENOMEM, "out of memory");
    sg_case_dir_name(name, safe, sizeof safe);
    size_t base = strlen(safe);
    for (int k = 2; !o->single && dir_taken(r->v, r->n - 1, safe); k++)
        snprintf(safe + base, sizeof safe - base, "_%d", k);
    if (o->single)
        snprintf(dir, sizeof dir, "%s", tmp);
    else
        snprintf(dir, sizeof dir, "%s/%s", tmp, safe);
    struct sg_diag cd = {0};
    sg_status st = SG_OK;
    if (!o->single && mkdir(dir, 0777) != 0)
        st = sg_diag_set(&cd, SG_EIO, "%s: %s", dir, strerror(errno));
    if (!st)
        st = sg_verify_case_write(m, name, o->src, dir, o->save, &cd);
    if (st == SG_ENOMEM || (st && o->single)) {
        *d = cd;
        return st;
    }
    if (st) {
        if (!(e->error = sg_strdup(cd.msg)))
            return sg_diag_set(d, SG_ENOMEM, "out of memory");
        sg__verify_emit(ev, SG_VERIFY_WARNING, "node '%s': %s", name, cd.msg);
        r->n_failed++;
        return SG_OK;
    }
    if (!(e->dir = sg_strdup(safe)))
        return sg_diag_set(d, SG_ENOMEM, "out of memory");
    sg__verify_emit(ev, SG_VERIFY_INFO, "%s (%s) -> %s%s%s", name, e->op_type, o->out,
                    o->single ? "" : "/", o->single ? "" : safe);
    return SG_OK;
}

sg_status sg_verify_cases_write(sg_model *m, const struct sg_verify_cases_opts *o,
                                const struct sg_verify_events *ev, struct sg_verify_cases_result *r,
                                struct sg_diag *d)
{
    memset(r, 0, sizeof *r);
    struct sg_verify_cases_opts all = *o;
    sg_dump_names *names = NULL;
    const char **every = NULL;
    sg_status st;
    /* the names dumps carry: an unnamed node is msit's <OpType>_<i> */
    if ((st = sg_dump_names_create(m, &names, d)))
        return st;
    if (o->all) {
        size_t k = 0;
        for (sg_node *n = m->graph->first; n; n = n->next)
            k++;
        if (!(every = sg_calloc(k + 1, sizeof *every))) {
            sg_dump_names_free(names);
            return sg_diag_set(d, SG_ENOMEM, "out of memory");
        }
        k = 0;
        for (sg_node *n = m->graph->first; n; n = n->next)
            every[k++] = sg_dump_names_of(names, n);
        all.nodes = every, all.n_nodes = k, o = &all;
    }
    if (o->single && o->n_nodes != 1) {
        st = sg_diag_set(d, SG_EINVAL, "a single case is of one node, not %zu", o->n_nodes);
        goto out;
    }
    struct sg_outdir od = {0};
    if ((st = sg_outdir_begin(&od, o->out, "extract", d)))
        goto out;
    if (!(r->v = sg_calloc(o->n_nodes + 1, sizeof *r->v))) {
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < o->n_nodes; i++)
        if ((st = sweep_one(m, o, names, od.tmp, r, i, ev, d)))
            goto fail;
    if (!o->single) {
        char *path = sg__verify_join(od.tmp, "index.json");
        if (!path) {
            st = sg_diag_set(d, SG_ENOMEM, "out of memory");
            goto fail;
        }
        st = sg_file_write_atomic_with(path, index_writer, r, d);
        sg_free(path);
        if (st)
            goto fail;
    }
    if ((st = sg_outdir_commit(&od, d)))
        goto fail_cleared;
    goto out;
fail:
    sg_outdir_abort(&od);
fail_cleared:
    sg_verify_cases_clear(r);
out:
    sg_free(every);
    sg_dump_names_free(names);
    return st;
}
