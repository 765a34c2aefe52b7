/*
 * mock_precision.c - the compute dtype of every node, as ATC decides it.
 *
 * For each node of every graph (fusion bodies excepted: they copy their
 * parts' decisions), each side that has a float tensor (inputs, outputs)
 * gets float16 or float32, recorded as _input_dtype / _output_dtype:
 *
 *   precision mode kind      cube ops (sg_mock_cube_ops)   other ops
 *   FP16  force_fp16 ...     float16                       float16
 *   FP32_TO_FP16             float16                       float32
 *   ORIGIN must_keep_origin  float32                       float32
 *   FP32  force_fp32 ...     float16 in, float32 out       float32
 *   MIXED allow_mix_prec...  float16                       float16, float32 for
 *                                                          sg_mock_mixed_fp32_ops
 *
 * then keep_dtype (a node or op type kept at its original dtype: float32
 * both sides) and customize_dtypes (per side, float16 or float32 as the
 * entry says) override it, node entries before type entries, customize
 * before keep. Node entries match a node's name or, for a fused node, one
 * of the names it replaces; OpType:: entries match ATC's op type (Conv2D,
 * SoftmaxV2, ...), as ATC reads them. Entries that match nothing become
 * warnings. Standard nodes whose ATC type differs get _atc_type.
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <string.h>

const char *const sg_mock_mixed_fp32_ops[] = {
    "Softmax",
    "LogSoftmax",
    "SoftmaxV2",
    "LayerNormalization",
    "LayerNorm",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
    "Exp",
    "Log",
    "Pow",
    NULL,
};

const char *const sg_mock_cube_ops[] = {
    "MatMul", "Gemm", "Conv", "ConvTranspose", "Conv2D", "BatchMatMulV2", "MatMulV2", NULL,
};

enum side { SIDE_FP16, SIDE_FP32 };

static bool listed(const char *op, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(list[i], op) == 0)
            return true;
    return false;
}

static bool is_mock(const sg_node *n)
{
    return n->domain && strcmp(n->domain, SG_MOCKOM_DOMAIN) == 0;
}

const char *sg__atc_type(const sg_node *n)
{
    if (is_mock(n))
        return n->op_type;
    const char *alias = sg_atc_optype_for_onnx(n->op_type);
    return alias ? alias : n->op_type;
}

/* Float tensors, or tensors of unknown dtype (the runtime rounds only
 * float32 values, so counting an unknown one as float changes nothing). */
static bool is_float_dtype(int32_t dt)
{
    return dt == SG_DTYPE_UNDEFINED || dt == SG_DTYPE_FLOAT || dt == SG_DTYPE_FLOAT16 ||
           dt == SG_DTYPE_BFLOAT16;
}

static bool any_float(sg_value *const *vals, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (vals[i] && is_float_dtype(sg_value_dtype(vals[i])))
            return true;
    return false;
}

/* What each kind of precision mode does (the table at the top). */
static const struct mode_rule {
    enum side cube_in, cube_out, other_in, other_out;
    bool mixed_list; /* sg_mock_mixed_fp32_ops stay float32 */
} mode_rules[SG_PRECISION_KIND_COUNT] = {
    [SG_PRECISION_FP16] = {SIDE_FP16, SIDE_FP16, SIDE_FP16, SIDE_FP16, false},
    [SG_PRECISION_FP32_TO_FP16] = {SIDE_FP16, SIDE_FP16, SIDE_FP32, SIDE_FP32, false},
    [SG_PRECISION_ORIGIN] = {SIDE_FP32, SIDE_FP32, SIDE_FP32, SIDE_FP32, false},
    [SG_PRECISION_FP32] = {SIDE_FP16, SIDE_FP32, SIDE_FP32, SIDE_FP32, false},
    [SG_PRECISION_MIXED] = {SIDE_FP16, SIDE_FP16, SIDE_FP16, SIDE_FP16, true},
};

struct decide {
    struct sg__atc_mock *c;
    enum sg_precision_kind kind;
    bool *keep_hit, *cust_hit; /* per entry: matched a node */
};

/* Note entry i of f as matched, and as the one found if it comes first. */
static void take(long i, bool *hit, long *found)
{
    if (i < 0)
        return;
    hit[i] = true;
    if (*found < 0 || i < *found)
        *found = i;
}

/* The entry of f that applies to n, or -1: a node entry naming n or one
 * of the nodes it replaces (the first in the file), else the entry of its
 * ATC op type. Every entry that names n is marked in `hit`. Lookups by
 * name: a file of 100,000 entries on a big model stays linear. */
static long find_entry(const sg_prec_file *f, const sg_node *n, bool *hit)
{
    long found = -1;
    if (!f)
        return -1;
    if (n->name)
        take(sg_prec_file_find(f, SG_PREC_NODE, n->name), hit, &found);
    const sg_attr *a = sg_node_attr(n, SG_MOCKOM_ATTR_ORIGINAL);
    for (size_t i = 0; a && a->type == SG_ATTR_STRINGS && i < a->n_strings; i++)
        take(sg_prec_file_find_n(f, SG_PREC_NODE, (const char *)a->strings[i].data,
                                 a->strings[i].len),
             hit, &found);
    if (found < 0)
        take(sg_prec_file_find(f, SG_PREC_OPTYPE, sg__atc_type(n)), hit, &found);
    return found;
}

/* The float side a customize_dtypes list asks for: -1 none, else a side;
 * -2 when it lists both float16 and float32. */
static int custom_side(const int32_t *dt, uint32_t n)
{
    bool h = false, s = false;
    for (uint32_t i = 0; i < n; i++) {
        h |= dt[i] == SG_DTYPE_FLOAT16;
        s |= dt[i] == SG_DTYPE_FLOAT;
    }
    return h && s ? -2 : h ? SIDE_FP16 : s ? SIDE_FP32 : -1;
}

static sg_status decide_node(struct decide *d, sg_node *n)
{
    struct sg__atc_mock *c = d->c;
    const struct sg_mock_inputs *in = c->in;
    bool fin = any_float(n->inputs, n->n_inputs), fout = any_float(n->outputs, n->n_outputs);
    const char *type = n->op_type; /* ONNX's, or the fused op's (ATC's name) */
    bool cube = listed(type, sg_mock_cube_ops);
    const struct mode_rule *r = &mode_rules[d->kind];
    enum side si = cube ? r->cube_in : r->other_in, so = cube ? r->cube_out : r->other_out;
    if (r->mixed_list && listed(type, sg_mock_mixed_fp32_ops))
        si = so = SIDE_FP32;
    if (find_entry(in->keep_dtype, n, d->keep_hit) >= 0)
        si = so = SIDE_FP32;
    long ce = find_entry(in->customize_dtypes, n, d->cust_hit);
    if (ce >= 0) {
        const struct sg_prec_entry *e = &in->customize_dtypes->entries[ce];
        int ci = custom_side(e->in, e->n_in), co = custom_side(e->out, e->n_out);
        if (ci == -2 || co == -2)
            return sg_diag_set(c->diag, SG_EUNSUPPORTED,
                               "%s:%u: %s lists both float16 and float32 on one side; the mock "
                               "compiler gives all float inputs (outputs) of an op one dtype",
                               in->customize_dtypes_label ? in->customize_dtypes_label
                                                          : "customize_dtypes",
                               e->line, e->name);
        if (ci >= 0)
            si = (enum side)ci;
        if (co >= 0)
            so = (enum side)co;
    }
    static const char *const names[2] = {"float16", "float32"};
    if ((fin && sg_node_set_attr_string(n, SG_MOCKOM_ATTR_INPUT_DTYPE, names[si])) ||
        (fout && sg_node_set_attr_string(n, SG_MOCKOM_ATTR_OUTPUT_DTYPE, names[so])))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    const char *atc = sg__atc_type(n);
    if (strcmp(atc, n->op_type) != 0 && sg_node_set_attr_string(n, SG_MOCKOM_ATTR_ATC_TYPE, atc))
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static sg_status decide_graph(sg_graph *g, void *ctx)
{
    for (sg_node *n = g->first; n; n = n->next) {
        sg_status st = decide_node(ctx, n);
        if (!st)
            st = sg_node_for_each_subgraph(n, decide_graph, ctx);
        if (st)
            return st;
    }
    return SG_OK;
}

static void warn_unmatched(sg_mock_report *r, const sg_prec_file *f, const char *label,
                           const bool *hit)
{
    for (size_t i = 0; f && i < f->n_entries; i++) {
        const struct sg_prec_entry *e = &f->entries[i];
        if (hit[i])
            continue;
        bool type = e->target == SG_PREC_OPTYPE;
        char where[600];
        if (e->line)
            snprintf(where, sizeof where, "%s:%u", label, e->line);
        else
            snprintf(where, sizeof where, "%s", label);
        sg__atc_warn(r, "%s: %s%s names no %s of the model; it changes nothing", where,
                     type ? "OpType::" : "", e->name, type ? "op type (as ATC names it)" : "node");
    }
}

sg_status sg__atc_precision(struct sg__atc_mock *c)
{
    const struct sg_mock_inputs *in = c->in;
    size_t nk = in->keep_dtype ? in->keep_dtype->n_entries : 0;
    size_t nc = in->customize_dtypes ? in->customize_dtypes->n_entries : 0;
    struct decide d = {c, in->precision ? in->precision->kind : SG_PRECISION_FP16, NULL, NULL};
    d.keep_hit = sg_calloc(nk + 1, sizeof *d.keep_hit);
    d.cust_hit = sg_calloc(nc + 1, sizeof *d.cust_hit);
    sg_status st = SG_OK;
    if (!d.keep_hit || !d.cust_hit)
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    if (!st)
        st = decide_graph(c->g, &d);
    if (!st) {
        warn_unmatched(c->rep, in->keep_dtype,
                       in->keep_dtype_label ? in->keep_dtype_label : "keep_dtype", d.keep_hit);
        warn_unmatched(c->rep, in->customize_dtypes,
                       in->customize_dtypes_label ? in->customize_dtypes_label : "customize_dtypes",
                       d.cust_hit);
    }
    sg_free(d.keep_hit);
    sg_free(d.cust_hit);
    return st;
}
