/*
 * bisect.c - binary localisation on a target (sg_verify_bisect): the
 * earliest prefix of a model, in topological order, whose run on the
 * target (the rest on the golden runtime) breaks the network outputs.
 *
 * The steps, top to bottom (sg_verify_bisect):
 *   check     the options: SG_EINVAL
 *   load      MODEL, its nodes in topological order (N of them)
 *   golden    MODEL in float32, every main-graph tensor kept in memory;
 *             its inputs saved as OUT/inputs/<input>.npy and its outputs
 *             as OUT/golden/<output>.npy
 *   full      step 0: MODEL on the target; outputs that pass end the
 *             search (nothing to find)
 *   steps     prefix k on the target: MODEL split after its k-th node
 *             (sg_model_split), the front run on the target on the golden
 *             inputs, the back on the golden runtime on the front's
 *             outputs, the network outputs compared with the golden ones.
 *             Bisect mode keeps pass(lo) and fail(hi) (lo 0: nothing on
 *             the target; hi N: the full run) and halves (lo, hi) until
 *             hi = lo + 1: ceil(log2 N) steps, so at most ceil(log2 N) + 1
 *             target runs. Linear mode tries k = 1, 2, ... in order.
 *   culprit   node hi (1-based): its single-op case in OUT/case from the
 *             golden tensors, and the commands that reproduce it.
 *
 * Each step is made in OUT/.step_K.tmp and renamed to OUT/step_K when
 * complete; a failing step's folder is removed and the earlier ones stay.
 * OUT itself follows sg_outdir.h (tag "bisect"): published once the golden
 * run worked, so a later failure keeps what was done; OUT/bisect.json
 * is written last, when the search ended.
 */
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_outdir.h"
#include "sg_tensorfile.h"
#include "verify_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct job {
    const struct sg_verify_bisect_opts *o;
    const struct sg_verify_events *ev;
    char *out;
    sg_model *model;
    sg_node **order;
    size_t n;
    sg_verify_tensors *golden;
    struct sg_verify_values inputs;
    char **input_files; /* OUT/inputs/<file>, per input */
    sg_verify_bisect_result *res;
};

static sg_status oom(struct sg_diag *d)
{
    return sg_diag_set(d, SG_ENOMEM, "out of memory");
}

static const char *node_label(const sg_node *n)
{
    return n->name && *n->name ? n->name : n->op_type;
}

const char *sg_verify_bisect_mode_name(enum sg_verify_bisect_mode m)
{
    return m == SG_VERIFY_BISECT_LINEAR ? "linear" : "bisect";
}

sg_status sg_verify_bisect_check(const struct sg_verify_bisect_opts *o, struct sg_diag *d)
{
    if (!o->model)
        return sg_diag_set(d, SG_EINVAL, "missing MODEL");
    if (!o->out)
        return sg_diag_set(d, SG_EINVAL, "missing -o OUT");
    if (!o->inputs)
        return sg_diag_set(d, SG_EINVAL, "no inputs given");
    if (o->inputs->have_range && !o->inputs->random)
        return sg_diag_set(d, SG_EINVAL, "--range needs --random");
    if ((unsigned)o->mode >= SG_VERIFY_BISECT_MODE_COUNT)
        return sg_diag_set(d, SG_EINVAL, "unknown mode %d", (int)o->mode);
    return sg_verify_exec_check(&o->target, d);
}

/* ------------------------------------------------------ comparing */

static void outputs_clear(struct sg_verify_bisect_output *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sg_free(v[i].name);
    sg_free(v);
}

/* The network outputs of one run against the golden ones: *fail when any
 * is in error. got holds (at least) every graph output of MODEL by name. */
static sg_status judge(struct job *j, const struct sg_verify_values *got,
                       struct sg_verify_bisect_step *s, struct sg_diag *d)
{
    const sg_graph *g = j->model->graph;
    if (!(s->outputs = sg_calloc(g->n_outputs + 1, sizeof *s->outputs)))
        return oom(d);
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const char *name = g->outputs[i]->name;
        struct sg_verify_bisect_output *e = &s->outputs[s->n_outputs++];
        if (!(e->name = sg_strdup(name)))
            return oom(d);
        sg_rt_value *t = sg_verify_values_find(got, name);
        sg_rt_value *y = sg_verify_tensors_find(j->golden, name);
        if (!t || !y)
            return sg_diag_set(d, SG_ENOTFOUND, "no %s value of network output '%s'",
                               t ? "golden" : "target", name);
        struct sg_array ta = {0}, ya = {0};
        sg_status st = sg_rt_tensor_to_array(t, &ta, d);
        if (!st)
            st = sg_rt_tensor_to_array(y, &ya, d);
        if (!st)
            st = sg_metrics_compute(&ta, &ya, &e->m, d);
        if (!st)
            e->m.mean_rel_floor = j->o->thresholds.mre_floor > 0
                                      ? sg_metrics_mre_floor(&ta, &ya, j->o->thresholds.mre_floor)
                                      : NAN;
        sg_array_free(&ta);
        sg_array_free(&ya);
        if (st) {
            sg_diag_prefix(d, "comparing network output '%s'", name);
            return st;
        }
        e->error = sg_metrics_is_error(&e->m, &j->o->thresholds);
        s->fail |= e->error;
    }
    return SG_OK;
}

/* "y: cosine 0.123456, max abs 1.5, overflow 3" for the worst output. */
static void metrics_text(const struct sg_verify_bisect_step *s, const struct sg_thresholds *t,
                         char *buf, size_t size)
{
    buf[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < s->n_outputs && len < size; i++) {
        const struct sg_verify_bisect_output *e = &s->outputs[i];
        char crossed[256] = "";
        if (e->error)
            sg_metrics_crossed_text(&e->m, t, sg_metrics_crossed(&e->m, t), crossed,
                                    sizeof crossed);
        char cos[32], mae[32];
        snprintf(cos, sizeof cos, isnan(e->m.cosine) ? "NaN" : "%.6f", e->m.cosine);
        snprintf(mae, sizeof mae, isnan(e->m.max_abs) ? "NaN" : "%.6g", e->m.max_abs);
        int w = snprintf(buf + len, size - len, "%s%s: cosine %s, max abs error %s%s%s%s",
                         i ? "; " : "", e->name, cos, mae, *crossed ? " (" : "", crossed,
                         *crossed ? ")" : "");
        len += w > 0 ? (size_t)w : 0;
    }
}

/* ---------------------------------------------------------- a step */

static void step_clear(struct sg_verify_bisect_step *s)
{
    outputs_clear(s->outputs, s->n_outputs);
    sg_free(s->cut_node);
    sg_free(s->dir);
    sg_free(s->command);
}

static sg_status add_step(struct job *j, struct sg_verify_bisect_step **out, struct sg_diag *d)
{
    sg_verify_bisect_result *r = j->res;
    struct sg_verify_bisect_step *v = sg_realloc(r->steps, (r->n_steps + 1) * sizeof *v);
    if (!v)
        return oom(d);
    r->steps = v;
    *out = memset(&v[r->n_steps++], 0, sizeof *v);
    return SG_OK;
}

/* Run the back half on the golden runtime: its inputs from the front's
 * target outputs, else the golden tensors (MODEL's inputs). */
static sg_status run_back(struct job *j, sg_model *back, const struct sg_verify_values *front,
                          struct sg_verify_values *got, struct sg_diag *d)
{
    struct sg_rt_opts ro = {.threads = j->o->threads,
                            .max_loop_iterations = j->o->max_loop_iterations};
    sg_rt *rt = NULL;
    sg_status st = sg_rt_create(back, &ro, &rt, d);
    for (uint32_t r = 0; !st && r < sg_rt_n_inputs(rt); r++) {
        const char *name = sg_rt_input(rt, r)->name;
        sg_rt_value *v = sg_verify_values_find(front, name);
        if (!v)
            v = sg_verify_tensors_find(j->golden, name);
        st = v ? sg_rt_set_input(rt, name, v, d)
               : sg_diag_set(d, SG_ENOTFOUND, "no value for the back half's input '%s'", name);
    }
    if (!st)
        st = sg_rt_run(rt, d);
    for (uint32_t i = 0; !st && i < sg_rt_n_outputs(rt); i++)
        st = sg__verify_values_add(got, sg_rt_output_info(rt, i)->name, sg_rt_output(rt, i), d);
    if (st)
        sg_diag_prefix(d, "the back half on the golden runtime");
    sg_rt_free(rt);
    return st;
}

/* The values m reads as graph inputs, from the golden tensors. */
static sg_status inputs_of(struct job *j, sg_model *m, struct sg_verify_values *in,
                           struct sg_diag *d)
{
    const sg_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const sg_value *v = g->inputs[i];
        if (v->init)
            continue;
        sg_rt_value *x = sg_verify_tensors_find(j->golden, v->name);
        if (!x)
            return sg_diag_set(d, SG_ENOTFOUND, "no golden value of input '%s'", v->name);
        sg_status st = sg__verify_values_add(in, v->name, x, d);
        if (st)
            return st;
    }
    return SG_OK;
}

/* Step s: prefix k (k == n: the full model) on the target, in a folder
 * made whole or removed. */
static sg_status run_step(struct job *j, size_t k, struct sg_verify_bisect_step *s,
                          struct sg_diag *d)
{
    const struct sg_verify_bisect_opts *o = j->o;
    size_t index = j->res->n_steps - 1;
    char name[64], tmpname[80];
    if (k == j->n)
        snprintf(name, sizeof name, "step_%02zu_full", index);
    else
        snprintf(name, sizeof name, "step_%02zu_prefix_%zu", index, k);
    snprintf(tmpname, sizeof tmpname, ".%s.tmp", name);
    s->cut = k;
    s->index = index;
    if (!(s->cut_node = sg_strdup(node_label(j->order[k - 1]))))
        return oom(d);
    char *tmp = sg__verify_join(j->out, tmpname), *final = sg__verify_join(j->out, name);
    char *front_path = NULL;
    sg_model *front = NULL, *back = NULL;
    struct sg_verify_values in = {0}, got = {0}, all = {0};
    sg_status st = SG_OK;
    int handle = -1;
    if (!tmp || !final || !(front_path = sg__verify_join(tmp, "front.onnx"))) {
        st = oom(d);
        goto out;
    }
    if (mkdir(tmp, 0777) != 0) {
        st = sg_diag_set(d, SG_EIO, "cannot create '%s': %s", tmp, strerror(errno));
        goto out;
    }
    handle = sg_cleanup_add(SG_CLEANUP_TREE, tmp, NULL);
    const char *model_path = o->model;
    sg_model *runs = j->model;
    if (k < j->n) {
        char *back_path = sg__verify_join(tmp, "back.onnx");
        struct sg_split_spec sp = {
            .kind = SG_SPLIT_INDEX, .index = k, .typer = sg_verify_tensors_typer(j->golden)};
        struct sg_split_report rep = {0};
        if (!back_path)
            st = oom(d);
        if (!st && !(st = sg_model_clone(j->model, &front, d)))
            st = sg_model_clone(j->model, &back, d);
        if (!st)
            st = sg_model_split(front, back, &sp, &rep, d);
        sg_split_report_free(&rep);
        if (!st)
            st = sg_model_save(front, front_path, NULL, d);
        if (!st)
            st = sg_model_save(back, back_path, NULL, d);
        sg_free(back_path);
        if (st)
            goto out;
        model_path = front_path;
        runs = front;
    }
    if ((st = inputs_of(j, runs, &in, d)))
        goto out;
    sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, "step %zu: nodes 1..%zu of %zu on the %s target",
                    index, k, j->n, sg_verify_exec_name(o->target.kind));
    st = sg_verify_exec_run(&o->target, model_path, runs, &in, tmp, j->ev, &got, &s->command, d);
    j->res->target_runs++;
    sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, NULL);
    if (st)
        goto out;
    if (k < j->n) {
        if ((st = run_back(j, back, &got, &all, d)))
            goto out;
        for (uint32_t i = 0; i < got.n && !st; i++) /* MODEL's outputs the front makes */
            if (!sg_verify_values_find(&all, got.names[i]))
                st = sg__verify_values_add(&all, got.names[i], got.values[i], d);
        if (st || (st = judge(j, &all, s, d)))
            goto out;
    } else if ((st = judge(j, &got, s, d))) {
        goto out;
    }
    if (rename(tmp, final) != 0) {
        st = sg_diag_set(d, SG_EIO, "cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
        goto out;
    }
    sg_cleanup_forget(handle);
    handle = -1;
    s->dir = final;
    final = NULL;
    if (s->command) { /* the command as the user reruns it: paths in the kept folder */
        char *dir = tmp;
        size_t n = strlen(dir);
        char *c = s->command, *fixed = sg_malloc(strlen(c) * 2 + 64);
        if (!fixed) {
            st = oom(d);
            goto out;
        }
        char *w = fixed;
        for (const char *p = c; *p;) {
            if (strncmp(p, dir, n) == 0) {
                w += sprintf(w, "%s", s->dir);
                p += n;
            } else {
                *w++ = *p++;
            }
        }
        *w = '\0';
        sg_free(c);
        s->command = fixed;
    }
out:
    if (st) {
        if (handle >= 0) {
            sg_cleanup_remove_tree(tmp);
            sg_cleanup_forget(handle);
        }
        sg_diag_prefix(d, "step %zu (nodes 1..%zu of %zu on the target%s%s%s)", index, k, j->n,
                       k < j->n ? ", cut after '" : "", k < j->n ? s->cut_node : "",
                       k < j->n ? "'" : "");
    }
    sg_verify_values_clear(&in);
    sg_verify_values_clear(&got);
    sg_verify_values_clear(&all);
    sg_model_free(front);
    sg_model_free(back);
    sg_free(front_path);
    sg_free(tmp);
    sg_free(final);
    return st;
}

/* One step, then its line. lo and hi: the open range before it. */
static sg_status step(struct job *j, size_t k, size_t lo, size_t hi, bool *fail, struct sg_diag *d)
{
    struct sg_verify_bisect_step *s = NULL;
    sg_status st = add_step(j, &s, d);
    if (st)
        return st;
    s->lo = lo;
    s->hi = hi;
    if ((st = run_step(j, k, s, d)))
        return st;
    *fail = s->fail;
    char metrics[2048];
    metrics_text(s, &j->o->thresholds, metrics, sizeof metrics);
    const sg_node *n = j->order[k - 1];
    if (k == j->n)
        sg__verify_emit(j->ev, SG_VERIFY_INFO,
                        "step %zu: the full model (%zu nodes) on the target: %s; %s -> %s",
                        s->index, j->n, s->fail ? "FAIL" : "pass", metrics, s->dir);
    else
        sg__verify_emit(j->ev, SG_VERIFY_INFO,
                        "step %zu: range %zu..%zu, cut after node %zu '%s' (%s): nodes 1..%zu on "
                        "the target, %zu..%zu golden: %s; %s -> %s",
                        s->index, lo + 1, hi, k, node_label(n), n->op_type, k, k + 1, j->n,
                        s->fail ? "FAIL" : "pass", metrics, s->dir);
    return SG_OK;
}

/* ---------------------------------------------------------- record */

static void add_compile(struct sg__words *w, const struct sg_verify_exec *t)
{
    sg__words_opt(w, "--soc", t->soc);
    sg__words_opt(w, "--precision", t->precision);
    sg__words_opt(w, "--fusion", t->fusion);
    sg__words_opt(w, "--keep-dtype", t->keep_dtype);
    sg__words_list(w, "--keep", t->keep_ops, t->n_keep_ops);
    sg__words_list(w, "--keep-nodes", t->keep_nodes, t->n_keep_nodes);
    sg__words_opt(w, "--overflow", t->overflow);
}

static sg_status add_repro(struct job *j, char *line, struct sg_diag *d)
{
    sg_verify_bisect_result *r = j->res;
    if (!line)
        return oom(d);
    char **v = sg_realloc(r->reproduce, (r->n_reproduce + 1) * sizeof *v);
    if (!v) {
        sg_free(line);
        return oom(d);
    }
    r->reproduce = v;
    v[r->n_reproduce++] = line;
    return SG_OK;
}

static char *target_word(const struct sg_verify_exec *t)
{
    if (t->kind != SG_VERIFY_EXEC_CMD)
        return sg_strdup(sg_verify_exec_name(t->kind));
    size_t n = strlen(t->command) + 5;
    char *s = sg_malloc(n);
    if (s)
        snprintf(s, n, "cmd:%s", t->command);
    return s;
}

/* The commands that reproduce the result, gathered in w. */
static sg_status reproduce_into(struct job *j, struct sg__words *w, struct sg_diag *d)
{
    const struct sg_verify_bisect_opts *o = j->o;
    sg_verify_bisect_result *r = j->res;
    char *target = target_word(&o->target);
    if (!target)
        return oom(d);
    /* The bisection again, on the saved inputs. */
    sg__words_add(w, "surgeon");
    sg__words_add(w, "bisect");
    sg__words_add(w, o->model);
    sg__words_opt(w, "--target", target);
    sg__words_opt(w, "--device-cmd", o->target.device_command);
    add_compile(w, &o->target);
    for (uint32_t i = 0; i < j->inputs.n; i++) {
        char arg[8192];
        snprintf(arg, sizeof arg, "%s=%s", j->inputs.names[i], j->input_files[i]);
        sg__words_opt(w, "-i", arg);
    }
    if (o->target.timeout > 0) {
        char t[32];
        snprintf(t, sizeof t, "%g", o->target.timeout);
        sg__words_opt(w, "--timeout", t);
    }
    sg__words_opt(w, "--mode", sg_verify_bisect_mode_name(o->mode));
    sg__words_thresholds(w, &o->thresholds);
    sg__words_opt(w, "-o", o->out);
    sg_free(target);
    sg_status st = add_repro(j, sg__words_join(w), d);
    if (st)
        return st;
    /* The culprit's case: the reference passes it ... */
    if (r->case_dir) {
        sg__words_add(w, "surgeon");
        sg__words_add(w, "run");
        sg__words_opt(w, "--case", r->case_dir);
        if ((st = add_repro(j, sg__words_join(w), d)))
            return st;
    }
    /* ... and the target, where a command gives the case to the target. */
    if (r->case_dir && o->target.kind == SG_VERIFY_EXEC_MOCK) {
        sg__words_add(w, "surgeon");
        sg__words_add(w, "compare");
        char path[8192];
        snprintf(path, sizeof path, "%s/model.onnx", r->case_dir);
        sg__words_add(w, path);
        sg__words_opt(w, "--target", "mock");
        add_compile(w, &o->target);
        for (size_t i = 0; i < r->n_case_inputs; i++)
            sg__words_opt(w, "-i", r->case_inputs[i]);
        snprintf(path, sizeof path, "%s.case_compare", j->out);
        sg__words_opt(w, "-o", path);
        sg__words_thresholds(w, &o->thresholds);
        if ((st = add_repro(j, sg__words_join(w), d)))
            return st;
    }
    /* The failing step's own command as it ran (cmd and atc targets). */
    for (size_t i = r->n_steps; i-- > 0;)
        if (r->steps[i].fail && r->steps[i].cut == r->culprit + 1 && r->steps[i].command)
            return add_repro(j, sg_strdup(r->steps[i].command), d);
    return SG_OK;
}

static sg_status reproduce(struct job *j, struct sg_diag *d)
{
    struct sg__words w = {.ok = true};
    sg_status st = reproduce_into(j, &w, d);
    sg__words_free(&w);
    return st;
}

static sg_status record_writer(FILE *f, void *ctx)
{
    const struct job *j = ctx;
    const sg_verify_bisect_result *r = j->res;
    struct sg_json js;
    sg_json_init(&js, f, true);
    sg_json_object_begin(&js);
    sg_json_key(&js, "format");
    sg_json_string(&js, "surgeon-bisect");
    sg_json_key(&js, "version");
    sg_json_int(&js, 1);
    sg_json_key(&js, "model");
    sg_json_string(&js, j->o->model);
    sg_json_key(&js, "target");
    sg_json_string(&js, sg_verify_exec_name(j->o->target.kind));
    sg_json_key(&js, "mode");
    sg_json_string(&js, sg_verify_bisect_mode_name(j->o->mode));
    sg_json_key(&js, "nodes");
    sg_json_int(&js, (int64_t)r->n_nodes);
    sg_json_key(&js, "target_runs");
    sg_json_int(&js, (int64_t)r->target_runs);
    sg_json_key(&js, "steps");
    sg_json_array_begin(&js);
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct sg_verify_bisect_step *s = &r->steps[i];
        sg_json_object_begin(&js);
        sg_json_key(&js, "step");
        sg_json_int(&js, (int64_t)s->index);
        sg_json_key(&js, "range");
        sg_json_array_begin(&js);
        sg_json_int(&js, (int64_t)s->lo + 1);
        sg_json_int(&js, (int64_t)s->hi);
        sg_json_array_end(&js);
        sg_json_key(&js, "prefix");
        sg_json_int(&js, (int64_t)s->cut);
        sg_json_key(&js, "cut_after");
        sg_json_string(&js, s->cut_node);
        sg_json_key(&js, "verdict");
        sg_json_string(&js, s->fail ? "FAIL" : "PASS");
        sg_json_key(&js, "dir");
        sg_json_string(&js, s->dir);
        if (s->command) {
            sg_json_key(&js, "command");
            sg_json_string(&js, s->command);
        }
        sg_json_key(&js, "outputs");
        sg_json_array_begin(&js);
        for (size_t k = 0; k < s->n_outputs; k++) {
            const struct sg_verify_bisect_output *e = &s->outputs[k];
            sg_json_object_begin(&js);
            sg_json_key(&js, "name");
            sg_json_string(&js, e->name);
            sg_json_key(&js, "CosineSimilarity");
            sg_json_double(&js, e->m.cosine);
            sg_json_key(&js, "MaxAbsoluteError");
            sg_json_double(&js, e->m.max_abs);
            sg_json_key(&js, "RelativeEuclideanDistance");
            sg_json_double(&js, e->m.red);
            sg_json_key(&js, "OverFlow");
            sg_json_int(&js, (int64_t)e->m.overflow);
            sg_json_key(&js, "IsPrecisionError");
            sg_json_bool(&js, e->error);
            sg_json_object_end(&js);
        }
        sg_json_array_end(&js);
        sg_json_object_end(&js);
    }
    sg_json_array_end(&js);
    sg_json_key(&js, "culprit");
    if (r->found) {
        sg_json_object_begin(&js);
        sg_json_key(&js, "index");
        sg_json_int(&js, (int64_t)r->culprit + 1);
        sg_json_key(&js, "node");
        sg_json_string(&js, r->culprit_node);
        sg_json_key(&js, "op_type");
        sg_json_string(&js, r->culprit_op);
        sg_json_key(&js, "case");
        if (r->case_dir)
            sg_json_string(&js, r->case_dir);
        else
            sg_json_null(&js);
        sg_json_object_end(&js);
    } else {
        sg_json_null(&js);
    }
    sg_json_key(&js, "reproduce");
    sg_json_array_begin(&js);
    for (size_t i = 0; i < r->n_reproduce; i++)
        sg_json_string(&js, r->reproduce[i]);
    sg_json_array_end(&js);
    sg_json_object_end(&js);
    fputc('\n', f);
    return ferror(f) ? SG_EIO : SG_OK;
}

/* ------------------------------------------------------------ the job */

void sg_verify_bisect_free(sg_verify_bisect_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_steps; i++)
        step_clear(&r->steps[i]);
    sg_free(r->steps);
    for (size_t i = 0; i < r->n_reproduce; i++)
        sg_free(r->reproduce[i]);
    sg_free(r->reproduce);
    for (size_t i = 0; i < r->n_case_inputs; i++)
        sg_free(r->case_inputs[i]);
    sg_free(r->case_inputs);
    sg_free(r->culprit_node);
    sg_free(r->culprit_op);
    sg_free(r->case_dir);
    sg_free(r->out);
    sg_free(r);
}

/* The golden inputs and outputs into OUT/inputs and OUT/golden. */
static sg_status save_golden(struct job *j, struct sg_diag *d)
{
    char *dir = sg__verify_join(j->out, "inputs");
    if (!dir || !(j->input_files = sg_calloc(j->inputs.n + 1, sizeof *j->input_files))) {
        sg_free(dir);
        return oom(d);
    }
    sg_status st = sg_verify_values_save(&j->inputs, dir, j->input_files, d);
    for (uint32_t i = 0; !st && i < j->inputs.n; i++) {
        char *f = sg__verify_join(dir, j->input_files[i]);
        if (!f)
            st = oom(d);
        sg_free(j->input_files[i]);
        j->input_files[i] = f;
    }
    sg_free(dir);
    if (st)
        return st;
    struct sg_verify_values outs = {0};
    const sg_graph *g = j->model->graph;
    for (uint32_t i = 0; !st && i < g->n_outputs; i++) {
        sg_rt_value *v = sg_verify_tensors_find(j->golden, g->outputs[i]->name);
        st = v ? sg__verify_values_add(&outs, g->outputs[i]->name, v, d)
               : sg_diag_set(d, SG_ENOTFOUND, "the golden run made no output '%s'",
                             g->outputs[i]->name);
        if (!st && v->kind == SG_RT_TENSOR) {
            struct sg_array a = {0};
            uint64_t nan = 0, inf = 0;
            if (!(st = sg_rt_tensor_to_array(v, &a, d)))
                sg_array_count_nonfinite(&a, &nan, &inf);
            sg_array_free(&a);
            if (!st && nan + inf)
                st = sg_diag_set(d, SG_ERANGE,
                                 "the golden run's output '%s' holds %llu NaN/Inf values: the "
                                 "reference itself is not finite, so no target run can be judged "
                                 "(try other inputs, e.g. a smaller --range)",
                                 g->outputs[i]->name, (unsigned long long)(nan + inf));
        }
    }
    if (!st && (dir = sg__verify_join(j->out, "golden")) == NULL)
        st = oom(d);
    if (!st) {
        st = sg_verify_values_save(&outs, dir, NULL, d);
        sg_free(dir);
    }
    sg_verify_values_clear(&outs);
    return st;
}

/* The culprit's single-op case into OUT/case (a warning when it cannot be
 * made: the search's result stands without it). */
static sg_status culprit_case(struct job *j, struct sg_diag *d)
{
    sg_verify_bisect_result *r = j->res;
    const sg_node *n = j->order[r->culprit];
    if (!n->name || !*n->name) {
        sg__verify_emit(j->ev, SG_VERIFY_WARNING,
                        "the culprit (a %s node) has no name: no single-op case written",
                        n->op_type);
        return SG_OK;
    }
    char *dir = sg__verify_join(j->out, "case");
    if (!dir)
        return oom(d);
    struct sg_case_source src = sg_verify_tensors_source(j->golden);
    struct sg_diag cd = {0};
    sg_status st = SG_OK;
    if (mkdir(dir, 0777) != 0)
        st = sg_diag_set(&cd, SG_EIO, "cannot create '%s': %s", dir, strerror(errno));
    if (!st)
        st = sg_verify_case_write(j->model, n->name, &src, dir, NULL, &cd);
    if (st == SG_ENOMEM) {
        sg_free(dir);
        *d = cd;
        return st;
    }
    if (st) {
        sg_cleanup_remove_tree(dir);
        sg__verify_emit(j->ev, SG_VERIFY_WARNING, "no single-op case of '%s': %s", n->name, cd.msg);
        sg_free(dir);
        return SG_OK;
    }
    r->case_dir = dir;
    /* The case's inputs as -i NAME=FILE for a compare of the case. */
    sg_model *cm = NULL;
    char *path = sg__verify_join(dir, "model.onnx");
    if (!path)
        return oom(d);
    st = sg_model_load(path, NULL, &cm, d);
    sg_free(path);
    if (st)
        return st;
    size_t k = 0;
    for (uint32_t i = 0; !st && i < cm->graph->n_inputs; i++) {
        if (cm->graph->inputs[i]->init)
            continue;
        char **v = sg_realloc(r->case_inputs, (r->n_case_inputs + 1) * sizeof *v);
        size_t len = strlen(cm->graph->inputs[i]->name) + strlen(dir) + 64;
        char *s = v ? sg_malloc(len) : NULL;
        if (v)
            r->case_inputs = v;
        if (!s) {
            st = oom(d);
            break;
        }
        snprintf(s, len, "%s=%s/test_data_set_0/input_%zu.pb", cm->graph->inputs[i]->name, dir,
                 k++);
        r->case_inputs[r->n_case_inputs++] = s;
    }
    sg_model_free(cm);
    return st;
}

/* Golden run, then the search; OUT published once the golden run is in. */
static sg_status search(struct job *j, struct sg_outdir *od, struct sg_diag *d)
{
    const struct sg_verify_bisect_opts *o = j->o;
    sg_verify_bisect_result *r = j->res;
    sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, "golden run (float32)");
    struct sg_verify_golden_opts go = {.inputs = o->inputs,
                                       .label = o->model,
                                       .threads = o->threads,
                                       .max_loop_iterations = o->max_loop_iterations};
    sg_status st = sg_verify_golden(j->model, &go, &j->inputs, &j->golden, d);
    sg__verify_emit(j->ev, SG_VERIFY_PROGRESS, NULL);
    if (st)
        return st;
    if ((st = sg_outdir_publish(od, d)) || (st = save_golden(j, d)))
        return st;
    sg__verify_emit(j->ev, SG_VERIFY_INFO,
                    "golden run: %s in float32, %zu nodes in topological order (inputs in "
                    "%s/inputs, outputs in %s/golden)",
                    o->model, j->n, j->out, j->out);
    bool fail = false;
    if ((st = step(j, j->n, 0, j->n, &fail, d)))
        return st;
    if (!fail)
        return SG_OK; /* the target passes: nothing to find */
    r->full_fails = true;
    size_t lo = 0, hi = j->n;
    if (o->mode == SG_VERIFY_BISECT_LINEAR) {
        for (size_t k = 1; k < j->n; k++) {
            if ((st = step(j, k, k - 1, j->n, &fail, d)))
                return st;
            if (fail) {
                hi = k;
                break;
            }
        }
    } else {
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if ((st = step(j, mid, lo, hi, &fail, d)))
                return st;
            if (fail)
                hi = mid;
            else
                lo = mid;
        }
    }
    r->found = true;
    r->culprit = hi - 1;
    const sg_node *n = j->order[r->culprit];
    if (!(r->culprit_node = sg_strdup(node_label(n))) || !(r->culprit_op = sg_strdup(n->op_type)))
        return oom(d);
    return culprit_case(j, d);
}

static sg_status write_record(struct job *j, struct sg_diag *d)
{
    char *path = sg__verify_join(j->out, "bisect.json");
    if (!path)
        return oom(d);
    sg_status st = reproduce(j, d);
    if (!st)
        st = sg_file_write_atomic_with(path, record_writer, j, d);
    sg_free(path);
    return st;
}

sg_status sg_verify_bisect(const struct sg_verify_bisect_opts *o, const struct sg_verify_events *ev,
                           sg_verify_bisect_result **out, struct sg_diag *d)
{
    *out = NULL;
    struct job j = {.o = o, .ev = ev};
    struct sg_outdir od = {0};
    sg_status st = sg_verify_bisect_check(o, d);
    if (st)
        return st;
    if (!(j.out = sg_strdup(o->out)) || !(j.res = sg_calloc(1, sizeof *j.res))) {
        st = oom(d);
        goto out;
    }
    for (size_t n = strlen(j.out); n > 1 && j.out[n - 1] == '/'; n--)
        j.out[n - 1] = '\0';
    if ((st = sg_outdir_check(j.out, "bisect", d)) ||
        (st = sg_model_load(o->model, NULL, &j.model, d)) ||
        (st = sg_model_topo_nodes(j.model, &j.order, &j.n, d)))
        goto out;
    if (!j.n) {
        st = sg_diag_set(d, SG_EINVAL, "%s has no nodes: nothing to bisect", o->model);
        goto out;
    }
    j.res->n_nodes = j.n;
    if (!(j.res->out = sg_strdup(j.out))) {
        st = oom(d);
        goto out;
    }
    if ((st = sg_outdir_begin(&od, j.out, "bisect", d)))
        goto out;
    st = search(&j, &od, d);
    if (!st)
        st = write_record(&j, d);
    if (st && !od.published) {
        sg_outdir_abort(&od); /* nothing done yet: OUT as it was */
        goto out;
    }
    /* Published: keep what was done, also after a failing step. */
    struct sg_diag cd = {0};
    sg_status cst = sg_outdir_commit(&od, &cd);
    if (!st && cst) {
        st = cst;
        *d = cd;
    }
    if (st)
        goto out;
    *out = j.res;
    j.res = NULL;
out:
    sg_verify_bisect_free(j.res);
    sg_verify_tensors_free(j.golden);
    sg_verify_values_clear(&j.inputs);
    for (uint32_t i = 0; j.input_files && j.input_files[i]; i++)
        sg_free(j.input_files[i]);
    sg_free(j.input_files);
    sg_free(j.order);
    sg_model_free(j.model);
    sg_free(j.out);
    return st;
}
