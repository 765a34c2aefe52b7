/*
 * run.c - one run of a model with its tensors dumped (sg_verify_run): the
 * golden run of a model in float32 and the target run of a mock OM share
 * it, so both see their inputs, dumps and errors the same way.
 */
#include "sg_alloc.h"
#include "sg_mockom.h"
#include "verify_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

char *sg_verify_nonfinite_text(const struct sg_dump_nonfinite *nf, bool all, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t len = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(buf + len, size > len ? size - len : 0, __VA_ARGS__);                    \
        len += w_ > 0 ? (size_t)w_ : 0;                                                            \
    } while (0)
    if (nf->input)
        ADD("input '%s' holds NaN/Inf; ", nf->input);
    if (nf->output)
        ADD("output '%s' holds %" PRIu64 " NaN/Inf value%s%s", nf->output, nf->output_count,
            nf->output_count == 1 ? "" : "s", nf->n_outputs > 1 ? " (and other outputs too)" : "");
    if (all && nf->node)
        ADD("%s%s '%s' (%s, output %" PRIu32 ": %" PRIu64 " %s)%s", nf->output ? "; " : "",
            nf->from_finite ? "NaN/Inf begin at"
            : nf->nan       ? "NaN begins at"
                            : "NaN/Inf begin at",
            nf->node, nf->op_type ? nf->op_type : "?", nf->index, nf->count,
            nf->from_finite ? "values, from finite inputs"
            : nf->nan       ? "NaN, from inputs without NaN"
                            : "values",
            nf->output ? "" : "; the outputs are finite");
    else if (nf->output)
        ADD(" (--dump all names the node that made it)");
#undef ADD
    if (len && len < size && buf[len - 1] == ' ')
        buf[len - 2] = '\0'; /* an input alone: drop the "; " */
    return buf;
}

/* Bind every input rt needs from `values`, by name. */
static sg_status bind(sg_rt *rt, sg_dump *dump, const struct sg_verify_values *values,
                      const char *label, struct sg_diag *d)
{
    for (uint32_t r = 0; r < sg_rt_n_inputs(rt); r++) {
        const char *name = sg_rt_input(rt, r)->name;
        sg_rt_value *v = sg_verify_values_find(values, name);
        if (!v)
            return sg_diag_set(d, SG_ENOTFOUND,
                               "%s needs input '%s', which the inputs given do not have: is it "
                               "compiled from another model?",
                               label, name);
        sg_status st = sg_rt_set_input(rt, name, v, d);
        if (!st)
            st = sg_dump_input(dump, name, v, d);
        if (st)
            return st;
    }
    return SG_OK;
}

sg_status sg_verify_run(sg_model *m, const struct sg_verify_run_opts *o,
                        const struct sg_verify_inputs *spec, struct sg_verify_values *values,
                        struct sg_verify_run_info *info, struct sg_diag *d)
{
    const char *label = o->label ? o->label : "the model";
    struct sg_verify_run_info scratch;
    if (!info)
        info = &scratch;
    memset(info, 0, sizeof *info);
    sg_dump *dump = NULL;
    sg_rt *rt = NULL;
    bool made = false;
    sg_status st = sg_dump_create(o->dump_dir, o->dump, &dump, d);
    if (st)
        return st;
    struct sg_rt_opts opts = {0};
    opts.threads = o->threads;
    opts.max_loop_iterations = o->max_loop_iterations;
    sg_dump_rt_opts(dump, &opts);
    if (sg_mockom_is(m)) {
        if ((st = sg_rt_opts_mock(m, &opts, d)))
            goto out_label;
        sg_dump_set_device_names(dump, true);
        info->mock = true;
        info->soc = sg_model_metadata(m, SG_MOCKOM_META_SOC);
        info->precision = sg_model_metadata(m, SG_MOCKOM_META_PRECISION);
        info->overflow = sg_model_metadata(m, SG_MOCKOM_META_OVERFLOW);
    }
    if ((st = sg_rt_create(m, &opts, &rt, d)))
        goto out_label;
    if (!values->n && spec) {
        if ((st = sg_verify_inputs_load(spec, rt, values, d)))
            goto out;
        made = true;
    }
    if ((st = bind(rt, dump, values, label, d)))
        goto out;
    if ((st = sg_rt_run(rt, d)) || (st = sg_dump_finish(dump, rt, d)))
        goto out_label;
    for (uint32_t i = 0; o->outputs && i < sg_rt_n_outputs(rt); i++)
        if ((st = sg__verify_values_add(o->outputs, sg_rt_output_info(rt, i)->name,
                                        sg_rt_output(rt, i), d)))
            goto out;
    info->n_tensors = sg_dump_count(dump);
    struct sg_dump_nonfinite nf;
    sg_dump_nonfinite(dump, &nf);
    info->n_nonfinite = nf.n_tensors;
    info->n_nonfinite_outputs = nf.n_outputs;
    sg_verify_nonfinite_text(&nf, o->dump == SG_DUMP_ALL, info->nonfinite, sizeof info->nonfinite);
    goto out;
out_label:
    sg_diag_prefix(d, "%s", label);
out:
    if (st && made)
        sg_verify_values_clear(values);
    if (st && o->outputs)
        sg_verify_values_clear(o->outputs);
    /* The writer's thread stops before the caller removes the folder. */
    sg_dump_free(dump);
    sg_rt_free(rt);
    return st;
}
