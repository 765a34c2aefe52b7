/*
 * single_op.c - the single-op compare (sg_verify_single_op): each flagged
 * operator alone on the target, fed its own golden inputs, to tell an
 * operator that is wrong from one that only inherits its inputs' error.
 *
 * Per node: its single-op case (sg_verify_case_write, from a golden run
 * kept in memory) into DIR/<node>/case, the case's model run on the target
 * (sg_verify_exec_run: mock, or atc with the device command) into
 * DIR/<node>/target, and its outputs compared with the golden ones under
 * the comparison's thresholds. A node that cannot be made a case or run is
 * a row with its error, not a failure of the whole: the others still say
 * what they can.
 */
#include "sg_alloc.h"
#include "sg_csv.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_tensorfile.h"
#include "verify_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static sg_status oom(struct sg_diag *d)
{
    return sg_diag_set(d, SG_ENOMEM, "out of memory");
}

void sg_verify_single_clear(struct sg_verify_single_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        sg_free(r->rows[i].node);
        sg_free(r->rows[i].op_type);
        sg_free(r->rows[i].dir);
        sg_free(r->rows[i].output);
        sg_free(r->rows[i].error);
    }
    sg_free(r->rows);
    memset(r, 0, sizeof *r);
}

/* Compare the case's outputs with the golden ones; the worst output (in
 * error first, then the lowest cosine) goes into the row. */
static sg_status judge(const struct sg_verify_single_opts *o, sg_verify_tensors *golden,
                       const struct sg_verify_values *got, struct sg_verify_single_row *row,
                       struct sg_diag *d)
{
    double worst = -1;
    for (uint32_t i = 0; i < got->n; i++) {
        sg_rt_value *y = sg_verify_tensors_find(golden, got->names[i]);
        if (!y)
            return sg_diag_set(d, SG_ENOTFOUND, "no golden value of '%s'", got->names[i]);
        struct sg_array ta = {0}, ya = {0};
        struct sg_metrics m;
        sg_status st = sg_rt_tensor_to_array(got->values[i], &ta, d);
        if (!st)
            st = sg_rt_tensor_to_array(y, &ya, d);
        if (!st)
            st = sg_metrics_compute(&ta, &ya, &m, d);
        if (!st)
            m.mean_rel_floor = o->thresholds.mre_floor > 0
                                   ? sg_metrics_mre_floor(&ta, &ya, o->thresholds.mre_floor)
                                   : NAN;
        sg_array_free(&ta);
        sg_array_free(&ya);
        if (st)
            return st;
        bool err = sg_metrics_is_error(&m, &o->thresholds);
        double sev = sg_metrics_severity(&m, &o->thresholds) + (err ? 1e300 : 0);
        if (isnan(sev))
            sev = err ? INFINITY : 0;
        if (sev > worst || !row->output) {
            worst = sev;
            sg_free(row->output);
            if (!(row->output = sg_strdup(got->names[i])))
                return oom(d);
            row->m = m;
            row->crossed = sg_metrics_crossed(&m, &o->thresholds);
        }
        row->fails |= err;
    }
    return SG_OK;
}

/* One node: case, target run, verdict. Errors of the node's own go into
 * row->error; only SG_ENOMEM and folder errors are returned. */
static sg_status one(const struct sg_verify_single_opts *o, sg_verify_tensors *golden,
                     const struct sg_verify_events *ev, struct sg_verify_single_row *row,
                     const char *safe, struct sg_diag *d)
{
    char *dir = sg__verify_join(o->dir, safe);
    char *case_dir = dir ? sg__verify_join(dir, "case") : NULL;
    char *target = dir ? sg__verify_join(dir, "target") : NULL;
    char *model = case_dir ? sg__verify_join(case_dir, "model.onnx") : NULL;
    char *command = NULL;
    sg_model *cm = NULL;
    struct sg_verify_values in = {0}, got = {0};
    struct sg_diag cd = {0};
    sg_status st = SG_OK;
    if (!model || !target || !(row->dir = sg_strdup(safe))) {
        st = oom(d);
        goto out;
    }
    if (mkdir(dir, 0777) != 0 || mkdir(case_dir, 0777) != 0 || mkdir(target, 0777) != 0) {
        st = sg_diag_set(d, SG_EIO, "cannot create '%s': %s", target, strerror(errno));
        goto out;
    }
    struct sg_case_source src = sg_verify_tensors_source(golden);
    sg_status cs = sg_verify_case_write(o->model, row->node, &src, case_dir, NULL, &cd);
    if (!cs)
        cs = sg_model_load(model, NULL, &cm, &cd);
    for (uint32_t i = 0; !cs && i < cm->graph->n_inputs; i++) {
        const sg_value *v = cm->graph->inputs[i];
        sg_rt_value *x = v->init ? NULL : sg_verify_tensors_find(golden, v->name);
        if (!v->init)
            cs = x ? sg__verify_values_add(&in, v->name, x, &cd)
                   : sg_diag_set(&cd, SG_ENOTFOUND, "no golden value of input '%s'", v->name);
    }
    if (!cs)
        cs = sg_verify_exec_run(&o->target, model, cm, &in, target, ev, &got, &command, &cd);
    if (!cs)
        cs = judge(o, golden, &got, row, &cd);
    if (cs == SG_ENOMEM) {
        *d = cd;
        st = cs;
        goto out;
    }
    if (cs) {
        row->error = sg_strdup(cd.msg);
        if (!row->error)
            st = oom(d);
        sg__verify_emit(ev, SG_VERIFY_WARNING, "single-op %s (%s): %s", row->node, row->op_type,
                        cd.msg);
        goto out;
    }
    row->made = true;
    char crossed[512] = "", cos[32];
    if (row->crossed)
        sg_metrics_crossed_text(&row->m, &o->thresholds, row->crossed, crossed, sizeof crossed);
    snprintf(cos, sizeof cos, isnan(row->m.cosine) ? "NaN" : "%.6f", row->m.cosine);
    sg__verify_emit(ev, SG_VERIFY_INFO, "single-op %s (%s): %s (%s: cosine %s%s%s) -> %s/%s",
                    row->node, row->op_type,
                    row->fails ? "FAILS alone on its golden inputs"
                               : "passes alone on its golden inputs: its error is inherited",
                    row->output, cos, *crossed ? "; " : "", crossed, o->shown ? o->shown : o->dir,
                    safe);
out:
    sg_verify_values_clear(&in);
    sg_verify_values_clear(&got);
    sg_model_free(cm);
    sg_free(command);
    sg_free(model);
    sg_free(target);
    sg_free(case_dir);
    sg_free(dir);
    return st;
}

static bool taken(const struct sg_verify_single_row *rows, size_t n, const char *dir)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].dir && strcmp(rows[i].dir, dir) == 0)
            return true;
    return false;
}

sg_status sg_verify_single_op(const struct sg_verify_single_opts *o,
                              const struct sg_verify_events *ev, struct sg_verify_single_result *r,
                              struct sg_diag *d)
{
    memset(r, 0, sizeof *r);
    sg_verify_tensors *golden = NULL;
    struct sg_verify_values values = {0};
    for (uint32_t i = 0; i < o->inputs->n; i++) {
        sg_status st = sg__verify_values_add(&values, o->inputs->names[i], o->inputs->values[i], d);
        if (st) {
            sg_verify_values_clear(&values);
            return st;
        }
    }
    if (!(r->rows = sg_calloc(o->n_nodes + 1, sizeof *r->rows))) {
        sg_verify_values_clear(&values);
        return oom(d);
    }
    sg__verify_emit(ev, SG_VERIFY_PROGRESS, "single-op: golden tensors (float32)");
    struct sg_verify_golden_opts go = {
        .label = o->label, .threads = o->threads, .max_loop_iterations = o->max_loop_iterations};
    sg_status st = sg_verify_golden(o->model, &go, &values, &golden, d);
    sg__verify_emit(ev, SG_VERIFY_PROGRESS, NULL);
    if (st)
        goto out;
    if (mkdir(o->dir, 0777) != 0 && errno != EEXIST) {
        st = sg_diag_set(d, SG_EIO, "cannot create '%s': %s", o->dir, strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < o->n_nodes && !st; i++) {
        struct sg_verify_single_row *row = &r->rows[r->n++];
        const sg_node *n = sg_model_find_node(o->model, o->nodes[i]);
        if (!(row->node = sg_strdup(o->nodes[i])) ||
            !(row->op_type = sg_strdup(n ? n->op_type : "?"))) {
            st = oom(d);
            break;
        }
        char safe[160];
        sg_case_dir_name(o->nodes[i], safe, sizeof safe);
        size_t base = strlen(safe);
        for (int k = 2; taken(r->rows, r->n - 1, safe); k++)
            snprintf(safe + base, sizeof safe - base, "_%d", k);
        sg__verify_emit(ev, SG_VERIFY_PROGRESS, "single-op %zu/%zu: %s", i + 1, o->n_nodes,
                        o->nodes[i]);
        st = one(o, golden, ev, row, safe, d);
        sg__verify_emit(ev, SG_VERIFY_PROGRESS, NULL);
        r->n_fail += row->made && row->fails;
        r->n_pass += row->made && !row->fails;
        r->n_error += !row->made;
    }
out:
    if (st)
        sg_verify_single_clear(r);
    sg_verify_tensors_free(golden);
    sg_verify_values_clear(&values);
    return st;
}

/* ------------------------------------------------------------ reports */

static void csv_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",NaN", f);
    else
        fprintf(f, ",%.6f", v);
}

static sg_status csv_writer(FILE *f, void *ctx)
{
    const struct sg_verify_single_result *r = ctx;
    fputs("Node,OpType,Case,Output,CosineSimilarity,MaxAbsoluteError,RelativeEuclideanDistance,"
          "KullbackLeiblerDivergence,RootMeanSquareError,MeanRelativeError,OverFlow,"
          "FailsAlone,Error\n",
          f);
    for (size_t i = 0; i < r->n; i++) {
        const struct sg_verify_single_row *w = &r->rows[i];
        sg_csv_field(f, w->node);
        fputc(',', f);
        sg_csv_field(f, w->op_type);
        fputc(',', f);
        sg_csv_field(f, w->dir ? w->dir : "");
        fputc(',', f);
        sg_csv_field(f, w->output ? w->output : "");
        if (w->made) {
            csv_num(f, w->m.cosine);
            csv_num(f, w->m.max_abs);
            csv_num(f, w->m.red);
            csv_num(f, w->m.kl);
            csv_num(f, w->m.rmse);
            csv_num(f, w->m.mean_rel);
            fprintf(f, ",%s,%s,", w->m.overflow ? "YES" : "NO", w->fails ? "YES" : "NO");
        } else {
            fputs(",NaN,NaN,NaN,NaN,NaN,NaN,NaN,NaN,", f);
            sg_csv_field(f, w->error ? w->error : "");
        }
        fputc('\n', f);
    }
    return ferror(f) ? SG_EIO : SG_OK;
}

static sg_status json_writer(FILE *f, void *ctx)
{
    const struct sg_verify_single_result *r = ctx;
    struct sg_json j;
    sg_json_init(&j, f, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "format");
    sg_json_string(&j, "surgeon-single-op");
    sg_json_key(&j, "version");
    sg_json_int(&j, 1);
    sg_json_key(&j, "operators");
    sg_json_array_begin(&j);
    for (size_t i = 0; i < r->n; i++) {
        const struct sg_verify_single_row *w = &r->rows[i];
        sg_json_object_begin(&j);
        sg_json_key(&j, "node");
        sg_json_string(&j, w->node);
        sg_json_key(&j, "op_type");
        sg_json_string(&j, w->op_type);
        sg_json_key(&j, "dir");
        if (w->dir)
            sg_json_string(&j, w->dir);
        else
            sg_json_null(&j);
        if (w->made) {
            sg_json_key(&j, "fails_alone");
            sg_json_bool(&j, w->fails);
            sg_json_key(&j, "output");
            sg_json_string(&j, w->output);
            sg_json_key(&j, "CosineSimilarity");
            sg_json_double(&j, w->m.cosine);
            sg_json_key(&j, "MaxAbsoluteError");
            sg_json_double(&j, w->m.max_abs);
            sg_json_key(&j, "OverFlow");
            sg_json_int(&j, (int64_t)w->m.overflow);
        } else {
            sg_json_key(&j, "error");
            sg_json_string(&j, w->error ? w->error : "");
        }
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_object_end(&j);
    fputc('\n', f);
    return ferror(f) ? SG_EIO : SG_OK;
}

sg_status sg_verify_single_write(const struct sg_verify_single_result *r, const char *dir,
                                 struct sg_diag *d)
{
    char *csv = sg__verify_join(dir, "single_op.csv"),
         *json = sg__verify_join(dir, "single_op.json");
    sg_status st = csv && json ? SG_OK : oom(d);
    if (!st)
        st = sg_file_write_atomic_with(csv, csv_writer, (void *)r, d);
    if (!st)
        st = sg_file_write_atomic_with(json, json_writer, (void *)r, d);
    sg_free(csv);
    sg_free(json);
    return st;
}
