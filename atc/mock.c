/*
 * mock.c - the mock compiler's driver (see sg_mock.h): the compile written
 * out as the plain sequence of steps it is, the rule table, overflow modes,
 * and the whole job from struct sg_atc_opts.
 */
#include "mock_impl.h"
#include "sg_dumpname.h"

#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_pass.h"

#include <string.h>

/* ----------------------------------------------------------- overflow */

const char *sg_overflow_name(enum sg_overflow o)
{
    switch (o) {
    case SG_OVERFLOW_INF:
        return SG_MOCKOM_OVERFLOW_INF;
    case SG_OVERFLOW_SATURATION:
        return SG_MOCKOM_OVERFLOW_SATURATION;
    default:
        return "default";
    }
}

bool sg_overflow_parse(const char *s, enum sg_overflow *out)
{
    if (strcmp(s, SG_MOCKOM_OVERFLOW_INF) == 0)
        *out = SG_OVERFLOW_INF;
    else if (strcmp(s, SG_MOCKOM_OVERFLOW_SATURATION) == 0)
        *out = SG_OVERFLOW_SATURATION;
    else
        return false;
    return true;
}

/* ------------------------------------------------------------- report */

void sg_mock_report_clear(sg_mock_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_warnings; i++)
        sg_free(r->warnings[i]);
    sg_free(r->warnings);
    memset(r, 0, sizeof *r);
}

/* -------------------------------------------------------------- rules */

/* In the order they run: graph fusion, then (after the precision step)
 * UB fusion, the specific UB patterns before the automatic one. */
static const struct sg__atc_rule *const rules[] = {
    &sg__atc_rule_conv_bn,   &sg__atc_rule_matmul_bias, &sg__atc_rule_softmax,
    &sg__atc_rule_layernorm, &sg__atc_rule_conv_relu,   &sg__atc_rule_conv_clip,
    &sg__atc_rule_eltwise,
};

static sg_status run_rules(struct sg__atc_mock *c, bool ub)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const struct sg__atc_rule *r = rules[i];
        if (r->ub != ub || !sg_fusion_switch_pass_enabled(c->in->fusion_switch, r->pass))
            continue;
        sg_status st = r->run(c, r->pass);
        if (st) {
            sg_diag_prefix(c->diag, "%s", sg_fusion_pass_get(r->pass)->name);
            return st;
        }
    }
    return SG_OK;
}

/* ------------------------------------------------------------- steps */

/* --input_shape on the graph inputs (set-input-shape); ranges and -1 stay
 * dynamic: the runtime takes the size of the input it is given. */
static sg_status apply_shapes(struct sg__atc_mock *c)
{
    const sg_input_shapes *s = c->in->shapes;
    if (!s || !s->n)
        return SG_OK;
    sg_status st = sg_input_shapes_check(s, c->m, c->diag);
    if (st)
        return st;
    struct sg_shape_spec *specs = sg_calloc(s->n, sizeof *specs);
    size_t total = 0;
    for (size_t i = 0; i < s->n; i++)
        total += s->items[i].rank;
    struct sg_dim_spec *dims = sg_calloc(total + 1, sizeof *dims);
    struct sg_pass_report rep = {0};
    if (!specs || !dims) {
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    total = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct sg_input_shape *in = &s->items[i];
        specs[i].name = in->name;
        specs[i].dims = dims + total;
        specs[i].rank = in->rank;
        for (uint32_t d = 0; d < in->rank; d++) {
            const struct sg_shape_range *r = &in->dims[d];
            struct sg_dim_spec *ds = &dims[total + d];
            if (r->lo == r->hi && r->lo >= 0) {
                ds->kind = SG_DIM_VALUE;
                ds->value = r->lo;
            } else {
                ds->kind = SG_DIM_UNSET;
                if (r->lo != r->hi)
                    sg__atc_warn(c->rep,
                                 "input shape of '%s': dimension %u is the range %lld~%lld; the "
                                 "mock OM keeps it dynamic (it runs at the size it is given)",
                                 in->name, d, (long long)r->lo, (long long)r->hi);
            }
        }
        total += in->rank;
    }
    struct sg_opt_value opt = {.present = true, .given = true, .shapes = specs, .n_shapes = s->n};
    st = sg_pass_set_input_shape.run(c->m, &opt, &rep, c->diag);
    if (!st && rep.oom)
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    if (st)
        sg_diag_prefix(c->diag, "input shape");
out:
    sg_pass_report_clear(&rep);
    sg_free(specs);
    sg_free(dims);
    return st;
}

/* Fused ops and the map name ONNX nodes: give unnamed nodes of the main
 * graph the names their dumps carry in a reference run (sg_dump_names:
 * msit's <OpType>_<position>), before any rule moves a node. */
static sg_status name_nodes(struct sg__atc_mock *c)
{
    sg_dump_names *t = NULL;
    sg_status st = sg_dump_names_create(c->m, &t, c->diag);
    for (sg_node *n = c->g->first; n && !st; n = n->next) {
        if (n->name && *n->name)
            continue;
        if (sg_node_rename(n, sg_dump_names_of(t, n), c->diag))
            st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory naming nodes");
    }
    sg_dump_names_free(t);
    return st;
}

/* List every typed node output in value_info, so that the saved mock OM
 * keeps the dtypes the map and a reader need (ONNX drops unlisted types). */
static sg_status list_types(sg_graph *g, void *ctx)
{
    for (sg_node *n = g->first; n; n = n->next) {
        for (uint32_t i = 0; i < n->n_outputs; i++) {
            sg_value *v = n->outputs[i];
            if (v && v->type && !(v->flags & SG_VALUE_OUTPUT) && sg_graph_add_value_info(g, v))
                return SG_ENOMEM;
        }
        sg_status st = sg_node_for_each_subgraph(n, list_types, ctx);
        if (st)
            return st;
    }
    return SG_OK;
}

static sg_status mark(struct sg__atc_mock *c)
{
    if (list_types(c->g, NULL))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    const struct sg_mock_inputs *in = c->in;
    const char *prec = in->precision ? in->precision->name : "force_fp16";
    if (sg_model_set_metadata(c->m, SG_MOCKOM_META_FORMAT, SG_MOCKOM_FORMAT_VERSION) ||
        sg_model_set_metadata(c->m, SG_MOCKOM_META_SOC,
                              sg_soc_find(in->soc) ? sg_soc_find(in->soc)->name : in->soc) ||
        sg_model_set_metadata(c->m, SG_MOCKOM_META_PRECISION, prec) ||
        sg_model_set_metadata(c->m, SG_MOCKOM_META_OVERFLOW, sg_overflow_name(c->rep->overflow)) ||
        sg_model_set_opset(c->m, SG_MOCKOM_DOMAIN, SG_MOCKOM_DOMAIN_VERSION))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    c->rep->precision = prec;
    return SG_OK;
}

sg_status sg_mock_compile_model(sg_model *m, const struct sg_mock_inputs *in, sg_mock_report *rep,
                                struct sg_diag *diag)
{
    sg_mock_report local = {0};
    struct sg_diag local_diag = {0}; /* the rules read the status back */
    if (!rep)
        rep = &local;
    if (!diag)
        diag = &local_diag;
    if (!m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    if (!in->soc || !*in->soc)
        return sg_diag_set(diag, SG_EINVAL, "missing the SoC version");
    if (sg_mockom_is(m))
        return sg_diag_set(diag, SG_EINVAL,
                           "the model is a mock OM already: compile the ONNX "
                           "model it was made from");
    if ((unsigned)in->overflow >= SG_OVERFLOW_COUNT)
        return sg_diag_set(diag, SG_EINVAL, "unknown overflow mode %d", (int)in->overflow);
    struct sg__atc_mock c = {m, m->graph, in, rep, diag};
    rep->n_nodes = m->graph->n_nodes;
    rep->overflow = in->overflow != SG_OVERFLOW_DEFAULT ? in->overflow : sg_soc_overflow(in->soc);
    if (rep->overflow == SG_OVERFLOW_DEFAULT) {
        const char *near = sg_soc_suggest(in->soc);
        return sg_diag_set(diag, SG_EINVAL,
                           "unknown SoC '%s'%s%s%s: its float16 overflow mode is not known, so "
                           "the mock compiler needs it given (inf or saturation)",
                           in->soc, near ? " (did you mean '" : "", near ? near : "",
                           near ? "'?)" : "");
    }

    sg_status st;
    if ((st = apply_shapes(&c)) || (st = sg_graph_infer_dtypes(m->graph, true, diag)) ||
        (st = name_nodes(&c)) || (st = run_rules(&c, false)) || (st = sg__atc_precision(&c)) ||
        (st = run_rules(&c, true)) || (st = sg_graph_sort(m->graph, true, diag)) || (st = mark(&c)))
        goto out;
    if ((st = sg_model_verify(m, diag))) {
        sg_diag_prefix(diag, "the mock OM does not verify (a mock compiler bug)");
        goto out;
    }
    if (rep->oom)
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    rep->n_ops = m->graph->n_nodes;
    for (const sg_node *n = m->graph->first; n; n = n->next) {
        bool has_in = sg_node_attr(n, SG_MOCKOM_ATTR_INPUT_DTYPE) != NULL,
             has_out = sg_node_attr(n, SG_MOCKOM_ATTR_OUTPUT_DTYPE) != NULL;
        unsigned fp16 = sg_mockom_node_fp16(n);
        if (!has_in && !has_out)
            continue; /* no float tensor */
        if ((!has_in || (fp16 & SG_MOCKOM_FP16_IN)) && (!has_out || (fp16 & SG_MOCKOM_FP16_OUT)))
            rep->n_fp16++;
        else if (fp16 == SG_MOCKOM_FP16_IN && has_out)
            rep->n_fp16_in++;
        else
            rep->n_fp32++;
    }
out:
    sg_mock_report_clear(&local);
    return st;
}

/* ------------------------------------------------------ the whole job */

static sg_status need(const char *value, const char *what, struct sg_diag *diag)
{
    if (!value || !*value)
        return sg_diag_set(diag, SG_EINVAL, "missing %s", what);
    return SG_OK;
}

sg_status sg_mock_compile(const struct sg_atc_opts *o, enum sg_overflow overflow,
                          sg_mock_report *rep, struct sg_diag *diag)
{
    sg_mock_report local = {0};
    if (!rep)
        rep = &local;
    sg_status st;
    if ((st = need(o->model, "the model", diag)) || (st = need(o->output, "the output", diag)) ||
        (st = need(o->soc, "the SoC version", diag)))
        return st;
    sg_model *m = NULL;
    sg_input_shapes *shapes = NULL;
    sg_prec_file *keep = NULL, *cust = NULL, *opmode = NULL;
    sg_fusion_switch *sw = NULL;
    if ((o->input_shape && (st = sg_input_shapes_parse(o->input_shape, &shapes, diag))) ||
        (o->keep_dtype &&
         (st = sg_prec_file_read(SG_PREC_KEEP_DTYPE, o->keep_dtype, &keep, diag))) ||
        (o->customize_dtypes &&
         (st = sg_prec_file_read(SG_PREC_CUSTOMIZE_DTYPES, o->customize_dtypes, &cust, diag))) ||
        (o->op_precision_mode && (st = sg_prec_file_read(SG_PREC_OP_PRECISION_MODE,
                                                         o->op_precision_mode, &opmode, diag))) ||
        (o->fusion_switch && (st = sg_fusion_switch_read(o->fusion_switch, &sw, diag))) ||
        (st = sg_model_load(o->model, NULL, &m, diag)))
        goto out;
    if (opmode)
        sg__atc_warn(rep,
                     "%s: op_precision_mode (implementation modes) is not emulated by the "
                     "mock compiler; it changes nothing",
                     o->op_precision_mode);
    for (size_t i = 0; i < o->n_extra; i++)
        sg__atc_warn(rep, "the mock compiler ignores the atc argument '%s'", o->extra[i]);
    struct sg_mock_inputs in = {.soc = o->soc,
                                .precision = o->precision,
                                .shapes = shapes,
                                .keep_dtype = keep,
                                .keep_dtype_label = o->keep_dtype,
                                .customize_dtypes = cust,
                                .customize_dtypes_label = o->customize_dtypes,
                                .fusion_switch = sw,
                                .overflow = overflow};
    if (!(st = sg_mock_compile_model(m, &in, rep, diag)))
        st = sg_mock_save(m, o->output, diag);
out:
    sg_model_free(m);
    sg_fusion_switch_free(sw);
    sg_prec_file_free(opmode);
    sg_prec_file_free(cust);
    sg_prec_file_free(keep);
    sg_input_shapes_free(shapes);
    sg_mock_report_clear(&local);
    return st;
}
