/*
 * infer.c - element-type inference (see sg_graph_infer_dtypes in sg_ir.h).
 *
 * Only element types, not shapes: that is what passes need to decide where
 * a Cast or a typed constant goes. Rules are a table of exceptions over one
 * default: an output of a standard operator has the type of the operator's
 * first input. Values that cannot be typed stay untyped; nothing is guessed
 * for unknown domains.
 */
#include "ir_impl.h"
#include "sg_alloc.h"

#include <string.h>

/* Outputs whose type is fixed: (op, output index or -1 for all, dtype). */
static const struct fixed {
    const char *op;
    int out;
    int32_t dtype;
} fixed_types[] = {
    {"Shape", -1, SG_DTYPE_INT64},
    {"Size", -1, SG_DTYPE_INT64},
    {"NonZero", -1, SG_DTYPE_INT64},
    {"ArgMax", -1, SG_DTYPE_INT64},
    {"ArgMin", -1, SG_DTYPE_INT64},
    {"NonMaxSuppression", -1, SG_DTYPE_INT64},
    {"Equal", -1, SG_DTYPE_BOOL},
    {"Less", -1, SG_DTYPE_BOOL},
    {"Greater", -1, SG_DTYPE_BOOL},
    {"LessOrEqual", -1, SG_DTYPE_BOOL},
    {"GreaterOrEqual", -1, SG_DTYPE_BOOL},
    {"Not", -1, SG_DTYPE_BOOL},
    {"And", -1, SG_DTYPE_BOOL},
    {"Or", -1, SG_DTYPE_BOOL},
    {"Xor", -1, SG_DTYPE_BOOL},
    {"IsNaN", -1, SG_DTYPE_BOOL},
    {"IsInf", -1, SG_DTYPE_BOOL},
    {"Dropout", 1, SG_DTYPE_BOOL},
    {"MaxPool", 1, SG_DTYPE_INT64},
    {"TopK", 1, SG_DTYPE_INT64},
    {"Unique", 1, SG_DTYPE_INT64},
    {"Unique", 2, SG_DTYPE_INT64},
    {"Unique", 3, SG_DTYPE_INT64},
    {"LayerNormalization", 1, SG_DTYPE_FLOAT},
    {"LayerNormalization", 2, SG_DTYPE_FLOAT},
    {"DynamicQuantizeLinear", 0, SG_DTYPE_UINT8},
    {"DynamicQuantizeLinear", 1, SG_DTYPE_FLOAT},
    {"DynamicQuantizeLinear", 2, SG_DTYPE_UINT8},
    {"MatMulInteger", -1, SG_DTYPE_INT32},
    {"ConvInteger", -1, SG_DTYPE_INT32},
    {"StringNormalizer", -1, SG_DTYPE_STRING},
    {"RandomNormal", -1, SG_DTYPE_FLOAT}, /* unless `dtype` says otherwise */
    {"RandomUniform", -1, SG_DTYPE_FLOAT},
    {"Multinomial", -1, SG_DTYPE_INT32},
};

/* Outputs that take the type of another input than the first. */
static const struct from_input {
    const char *op;
    uint32_t in;
} from_inputs[] = {
    {"Where", 1},       {"CastLike", 1},      {"OneHot", 2},
    {"QLinearConv", 7}, {"QLinearMatMul", 7}, {"QuantizeLinear", 2},
};

/* Operators that make sequences, optionals or maps: never typed here. */
static bool non_tensor_op(const char *op)
{
    return strncmp(op, "Sequence", 8) == 0 || strncmp(op, "Optional", 8) == 0 ||
           strcmp(op, "SplitToSequence") == 0;
}

static bool is_default_domain(const sg_node *n)
{
    return !n->domain || !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
}

static int32_t input_dtype(const sg_node *n, uint32_t i)
{
    return i < n->n_inputs && n->inputs[i] ? sg_value_dtype(n->inputs[i]) : SG_DTYPE_UNDEFINED;
}

static int32_t attr_dtype(const sg_node *n, const char *name, int32_t dflt)
{
    int64_t d = sg_attr_int(n, name, -1);
    return d >= 0 && sg_dtype_valid((int32_t)d) ? (int32_t)d : dflt;
}

/* Type of a body output of If/Loop/Scan that becomes node output `out`. */
static int32_t body_dtype(const sg_node *n, uint32_t out)
{
    const char *attr = strcmp(n->op_type, "If") == 0 ? "then_branch" : "body";
    const sg_attr *at = sg_node_attr(n, attr);
    if (!at || !at->g)
        return SG_DTYPE_UNDEFINED;
    /* Loop body outputs start with the condition; node outputs do not. */
    uint32_t k = strcmp(n->op_type, "Loop") == 0 ? out + 1 : out;
    return k < at->g->n_outputs ? sg_value_dtype(at->g->outputs[k]) : SG_DTYPE_UNDEFINED;
}

static int32_t output_dtype(const sg_node *n, uint32_t out)
{
    const char *op = n->op_type;
    if (!is_default_domain(n) || non_tensor_op(op))
        return SG_DTYPE_UNDEFINED;
    if (strcmp(op, "Cast") == 0)
        return attr_dtype(n, "to", SG_DTYPE_UNDEFINED);
    if (strcmp(op, "Constant") == 0) {
        const sg_attr *at = sg_node_attr(n, "value");
        if (at && at->t)
            return at->t->dtype;
        if (sg_node_attr(n, "value_float") || sg_node_attr(n, "value_floats"))
            return SG_DTYPE_FLOAT;
        if (sg_node_attr(n, "value_int") || sg_node_attr(n, "value_ints"))
            return SG_DTYPE_INT64;
        if (sg_node_attr(n, "value_string") || sg_node_attr(n, "value_strings"))
            return SG_DTYPE_STRING;
        return SG_DTYPE_UNDEFINED;
    }
    if (strcmp(op, "ConstantOfShape") == 0) {
        const sg_attr *at = sg_node_attr(n, "value");
        return at && at->t ? at->t->dtype : SG_DTYPE_FLOAT;
    }
    if (strcmp(op, "If") == 0 || strcmp(op, "Loop") == 0 || strcmp(op, "Scan") == 0)
        return body_dtype(n, out);
    if (strcmp(op, "EyeLike") == 0 || strcmp(op, "RandomNormalLike") == 0 ||
        strcmp(op, "RandomUniformLike") == 0 || strcmp(op, "Bernoulli") == 0)
        return attr_dtype(n, "dtype", input_dtype(n, 0));
    if (strcmp(op, "RandomNormal") == 0 || strcmp(op, "RandomUniform") == 0 ||
        strcmp(op, "Multinomial") == 0)
        return attr_dtype(n, "dtype",
                          strcmp(op, "Multinomial") == 0 ? SG_DTYPE_INT32 : SG_DTYPE_FLOAT);
    if (strcmp(op, "DequantizeLinear") == 0) {
        int32_t s = input_dtype(n, 1);
        return s ? s : SG_DTYPE_FLOAT;
    }
    for (size_t i = 0; i < sizeof fixed_types / sizeof fixed_types[0]; i++)
        if (strcmp(fixed_types[i].op, op) == 0 &&
            (fixed_types[i].out < 0 || (uint32_t)fixed_types[i].out == out))
            return fixed_types[i].dtype;
    for (size_t i = 0; i < sizeof from_inputs / sizeof from_inputs[0]; i++)
        if (strcmp(from_inputs[i].op, op) == 0) {
            int32_t d = input_dtype(n, from_inputs[i].in);
            if (!d && strcmp(op, "QuantizeLinear") == 0)
                d = SG_DTYPE_UINT8;
            return d;
        }
    return input_dtype(n, 0);
}

static sg_status infer_sub(sg_graph *sub, void *ctx)
{
    return sg_graph_infer_dtypes(sub, true, ctx);
}

sg_status sg_graph_infer_dtypes(sg_graph *g, bool recursive, struct sg_diag *diag)
{
    if (!g->n_nodes)
        return SG_OK;
    sg_node **order = sg_malloc(g->n_nodes * sizeof *order);
    if (!order)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory inferring types");
    sg_status st = sg_graph_toposort(g, order, diag);
    for (uint32_t k = 0; !st && k < g->n_nodes; k++) {
        sg_node *n = order[k];
        /* Bodies first: If/Loop/Scan outputs take their body's types. */
        if (recursive && (st = sg_node_for_each_subgraph(n, infer_sub, diag)))
            break;
        for (uint32_t i = 0; i < n->n_outputs; i++) {
            sg_value *v = n->outputs[i];
            if (!v || v->type)
                continue;
            int32_t d = output_dtype(n, i);
            if (!d)
                continue;
            sg_type *t = sg_type_tensor(g->model, d, NULL, -1);
            if (!t) {
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory inferring types");
                break;
            }
            v->type = t;
        }
    }
    sg_free(order);
    return st;
}
