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

#include <assert.h>
#include <string.h>

/*
 * The exceptions, one table sorted by op type so that the common case (an
 * op that is in none of them) costs a binary search, not fifty strcmps:
 * inference runs over every node of the graph each time a pass needs types.
 */
enum rule_kind {
    FIXED,      /* output `out` (-1: all) has `dtype` */
    FROM_INPUT, /* outputs take the type of input `in` (dtype: fallback) */
    CAST,       /* attribute `to` */
    CONSTANT,   /* the value attribute's type */
    FILL,       /* ConstantOfShape: the value tensor's type, else float */
    BODY,       /* If/Loop/Scan: the body's output type */
    ATTR_DTYPE, /* attribute `dtype`, else `dtype` (0: the first input's) */
    OUT_DTYPE,  /* attribute `output_datatype`, else `dtype` (the window ops) */
    QUANT,      /* the zero point's type, else attribute `output_dtype`, else uint8 */
    DEQUANT,    /* attribute `output_dtype`, else the scale's type, else float */
};

static const struct rule {
    const char *op;
    enum rule_kind kind;
    int out;
    int32_t dtype;
    uint32_t in;
} rules[] = {
    {"And", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"ArgMax", FIXED, -1, SG_DTYPE_INT64, 0},
    {"ArgMin", FIXED, -1, SG_DTYPE_INT64, 0},
    {"Bernoulli", ATTR_DTYPE, -1, 0, 0},
    {"BlackmanWindow", OUT_DTYPE, -1, SG_DTYPE_FLOAT, 0},
    {"Cast", CAST, -1, 0, 0},
    {"CastLike", FROM_INPUT, -1, 0, 1},
    {"Constant", CONSTANT, -1, 0, 0},
    {"ConstantOfShape", FILL, -1, 0, 0},
    {"ConvInteger", FIXED, -1, SG_DTYPE_INT32, 0},
    {"DequantizeLinear", DEQUANT, -1, 0, 0},
    {"Dropout", FIXED, 1, SG_DTYPE_BOOL, 0},
    {"DynamicQuantizeLinear", FIXED, 0, SG_DTYPE_UINT8, 0},
    {"DynamicQuantizeLinear", FIXED, 1, SG_DTYPE_FLOAT, 0},
    {"DynamicQuantizeLinear", FIXED, 2, SG_DTYPE_UINT8, 0},
    {"Equal", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"EyeLike", ATTR_DTYPE, -1, 0, 0},
    {"Greater", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"GreaterOrEqual", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"HammingWindow", OUT_DTYPE, -1, SG_DTYPE_FLOAT, 0},
    {"HannWindow", OUT_DTYPE, -1, SG_DTYPE_FLOAT, 0},
    {"If", BODY, -1, 0, 0},
    {"ImageDecoder", FIXED, -1, SG_DTYPE_UINT8, 0},
    {"IsInf", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"IsNaN", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"LayerNormalization", FIXED, 1, SG_DTYPE_FLOAT, 0},
    {"LayerNormalization", FIXED, 2, SG_DTYPE_FLOAT, 0},
    {"Less", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"LessOrEqual", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"Loop", BODY, -1, 0, 0},
    {"MatMulInteger", FIXED, -1, SG_DTYPE_INT32, 0},
    {"MaxPool", FIXED, 1, SG_DTYPE_INT64, 0},
    {"MelWeightMatrix", OUT_DTYPE, -1, SG_DTYPE_FLOAT, 0},
    {"Multinomial", ATTR_DTYPE, -1, SG_DTYPE_INT32, 0},
    {"NonMaxSuppression", FIXED, -1, SG_DTYPE_INT64, 0},
    {"NonZero", FIXED, -1, SG_DTYPE_INT64, 0},
    {"Not", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"OneHot", FROM_INPUT, -1, 0, 2},
    {"Or", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"QLinearConv", FROM_INPUT, -1, 0, 7},
    {"QLinearMatMul", FROM_INPUT, -1, 0, 7},
    {"QuantizeLinear", QUANT, -1, 0, 2},
    {"RandomNormal", ATTR_DTYPE, -1, SG_DTYPE_FLOAT, 0},
    {"RandomNormalLike", ATTR_DTYPE, -1, 0, 0},
    {"RandomUniform", ATTR_DTYPE, -1, SG_DTYPE_FLOAT, 0},
    {"RandomUniformLike", ATTR_DTYPE, -1, 0, 0},
    {"RegexFullMatch", FIXED, -1, SG_DTYPE_BOOL, 0},
    {"Scan", BODY, -1, 0, 0},
    {"Shape", FIXED, -1, SG_DTYPE_INT64, 0},
    {"Size", FIXED, -1, SG_DTYPE_INT64, 0},
    {"StringNormalizer", FIXED, -1, SG_DTYPE_STRING, 0},
    {"StringSplit", FIXED, 0, SG_DTYPE_STRING, 0},
    {"StringSplit", FIXED, 1, SG_DTYPE_INT64, 0},
    {"TfIdfVectorizer", FIXED, -1, SG_DTYPE_FLOAT, 0},
    {"TopK", FIXED, 1, SG_DTYPE_INT64, 0},
    {"Unique", FIXED, 1, SG_DTYPE_INT64, 0},
    {"Unique", FIXED, 2, SG_DTYPE_INT64, 0},
    {"Unique", FIXED, 3, SG_DTYPE_INT64, 0},
    {"Where", FROM_INPUT, -1, 0, 1},
    {"Xor", FIXED, -1, SG_DTYPE_BOOL, 0},
};
enum { N_RULES = sizeof rules / sizeof rules[0] };

__attribute__((unused)) static bool rules_sorted(void)
{
    for (size_t i = 1; i < N_RULES; i++)
        if (strcmp(rules[i - 1].op, rules[i].op) > 0)
            return false;
    return true;
}

/* The first rule for op, or NULL. */
static const struct rule *first_rule(const char *op)
{
    size_t lo = 0, hi = N_RULES;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(rules[mid].op, op) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < N_RULES && strcmp(rules[lo].op, op) == 0 ? &rules[lo] : NULL;
}

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

/* Input i's type: from `ins` (the caller's, sg_node_output_dtype) when
 * given, else the IR's. */
static int32_t input_dtype(const sg_node *n, uint32_t i, const int32_t *ins)
{
    if (i >= n->n_inputs || !n->inputs[i])
        return SG_DTYPE_UNDEFINED;
    return ins ? ins[i] : sg_value_dtype(n->inputs[i]);
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

static int32_t constant_dtype(const sg_node *n)
{
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

/* What the rules say about op: its first rule, none (NULL: the default),
 * or NON_TENSOR (never typed). Memoised by the op_type pointer in `memo`
 * (SG__OP_MEMO entries, or NULL): nodes of one op type share their string
 * once loaded, and the search with its strcmps was most of the cost of
 * typing a chain on demand. A pointer stands for the same characters as
 * long as the model lives: the IR never edits a string in place. */
static const struct rule NON_TENSOR;

static const struct rule *rules_for(const char *op, struct sg__op_memo *memo)
{
    if (memo)
        for (size_t i = 0; i < SG__OP_MEMO; i++)
            if (memo[i].op == op)
                return memo[i].rule;
    const struct rule *r = non_tensor_op(op) ? &NON_TENSOR : first_rule(op);
    if (memo) {
        /* Most recent first: a chain repeats a handful of op types. */
        memmove(memo + 1, memo, (SG__OP_MEMO - 1) * sizeof *memo);
        memo[0].op = op;
        memo[0].rule = r;
    }
    return r;
}

static int32_t output_dtype(const sg_node *n, uint32_t out, struct sg__op_memo *memo,
                            const int32_t *ins)
{
    const char *op = n->op_type;
    if (!is_default_domain(n))
        return SG_DTYPE_UNDEFINED;
    const struct rule *r = rules_for(op, memo);
    if (r == &NON_TENSOR)
        return SG_DTYPE_UNDEFINED;
    if (!r)
        return input_dtype(n, 0, ins); /* the default rule */
    for (; r < rules + N_RULES && strcmp(r->op, op) == 0; r++) {
        switch (r->kind) {
        case FIXED:
            if (r->out < 0 || (uint32_t)r->out == out)
                return r->dtype;
            continue; /* another output of the op: next rule or the default */
        case FROM_INPUT: {
            int32_t d = input_dtype(n, r->in, ins);
            return d ? d : r->dtype;
        }
        case CAST: { /* as given, even a code sg_dtype does not know */
            int64_t to = sg_attr_int(n, "to", 0);
            return to > 0 && to <= INT32_MAX ? (int32_t)to : SG_DTYPE_UNDEFINED;
        }
        case CONSTANT:
            return constant_dtype(n);
        case FILL: {
            const sg_attr *at = sg_node_attr(n, "value");
            return at && at->t ? at->t->dtype : SG_DTYPE_FLOAT;
        }
        case BODY:
            return body_dtype(n, out);
        case ATTR_DTYPE:
            return attr_dtype(n, "dtype", r->dtype ? r->dtype : input_dtype(n, 0, ins));
        case OUT_DTYPE:
            return attr_dtype(n, "output_datatype", r->dtype);
        case QUANT: {
            /* A zero point sets the type, else output_dtype (opset 21). */
            bool has_zp = r->in < n->n_inputs && n->inputs[r->in];
            if (has_zp)
                return input_dtype(n, r->in, ins);
            int32_t d = attr_dtype(n, "output_dtype", 0);
            return d ? d : SG_DTYPE_UINT8;
        }
        case DEQUANT: {
            int32_t d = attr_dtype(n, "output_dtype", 0); /* opset 23 */
            if (d)
                return d;
            int32_t s = input_dtype(n, 1, ins);
            return s ? s : SG_DTYPE_FLOAT;
        }
        }
    }
    return input_dtype(n, 0, ins);
}

int32_t sg_node_output_dtype(const sg_node *n, uint32_t out, const int32_t *in_dtypes)
{
    int32_t d = out < n->n_outputs ? output_dtype(n, out, NULL, in_dtypes) : 0;
    return d > 0 ? d : SG_DTYPE_UNDEFINED;
}

static sg_status infer_graph(sg_graph *g, bool recursive, sg_type **shared,
                             struct sg__op_memo *memo, struct sg_diag *diag);

struct sub_ctx {
    sg_type **shared;
    struct sg__op_memo *memo;
    struct sg_diag *diag;
};

static sg_status infer_sub(sg_graph *sub, void *arg)
{
    struct sub_ctx *c = arg;
    return infer_graph(sub, true, c->shared, c->memo, c->diag);
}

static sg_status type_outputs(sg_node *n, bool recursive, sg_type **shared,
                              struct sg__op_memo *memo, struct sg_diag *diag)
{
    /* Bodies first: If/Loop/Scan outputs take their body's types. */
    struct sub_ctx c = {shared, memo, diag};
    sg_status st = recursive ? sg_node_for_each_subgraph(n, infer_sub, &c) : SG_OK;
    for (uint32_t i = 0; !st && i < n->n_outputs; i++) {
        sg_value *v = n->outputs[i];
        if (!v || v->type)
            continue;
        int32_t d = output_dtype(n, i, memo, NULL);
        if (d <= 0 || d >= SG_DTYPE_COUNT)
            continue;
        if (!shared[d] && !(shared[d] = sg_type_tensor(n->graph->model, d, NULL, -1)))
            return sg_diag_set(diag, SG_ENOMEM, "out of memory inferring types");
        v->type = shared[d];
    }
    return st;
}

static sg_status infer_graph(sg_graph *g, bool recursive, sg_type **shared,
                             struct sg__op_memo *memo, struct sg_diag *diag)
{
    if (!g->n_nodes)
        return SG_OK;
    sg_node **order = sg_malloc(g->n_nodes * sizeof *order);
    if (!order)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory inferring types");
    sg_status st = sg_graph_toposort(g, order, diag);
    for (uint32_t k = 0; !st && k < g->n_nodes; k++)
        st = type_outputs(order[k], recursive, shared, memo, diag);
    sg_free(order);
    return st;
}

sg_status sg_graph_infer_dtypes(sg_graph *g, bool recursive, struct sg_diag *diag)
{
    assert(rules_sorted());
    /* Inferred types carry an element type only and are shared by every
     * value of that type (one allocation per dtype, not per value): the IR
     * replaces a value's type, never edits it in place. */
    sg_type *shared[SG_DTYPE_COUNT] = {0};
    struct sg__op_memo memo[SG__OP_MEMO] = {0};
    return infer_graph(g, recursive, shared, memo, diag);
}

/* ------------------------------------------------------ on demand */

void sg_dtype_resolver_init(sg_dtype_resolver *r, sg_model *m)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->pushed = sg__next_stamp();
    r->expanded = sg__next_stamp();
    r->done = sg__next_stamp();
}

/* The walk's stack: on the C stack for the usual short walk (a malloc per
 * call was a tenth of typing a chain), on the heap past that. */
struct vstack {
    sg_value **v;
    size_t n, cap;
    sg_value *local[64];
};

/* Push v unless it is typed, done, or on the current path (expanded: a
 * cycle). A value pushed before but not expanded yet is pushed again, so
 * that it is resolved before the value that reads it. */
static sg_status push_value(sg_dtype_resolver *r, struct vstack *s, sg_value *v)
{
    if (!v || sg_value_dtype(v) || v->mark == r->done || v->mark == r->expanded)
        return SG_OK;
    if (s->n == s->cap) {
        size_t nc = s->cap * 2;
        sg_value **grown = sg_malloc(nc * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        memcpy(grown, s->v, s->n * sizeof *grown);
        if (s->v != s->local)
            sg_free(s->v);
        s->v = grown;
        s->cap = nc;
    }
    v->mark = r->pushed;
    s->v[s->n++] = v;
    return SG_OK;
}

/*
 * Depth first from v up through producers, with value->mark as the state
 * (pushed, expanded: its inputs are being resolved, done): a value is typed
 * by its producer's rule once every input of the producer is done, and is
 * done for good after that, typed or not. So a chain costs one walk however
 * many of its values are asked for.
 */
sg_status sg_dtype_resolve(sg_dtype_resolver *r, sg_value *v, int32_t *dtype, struct sg_diag *diag)
{
    sg_model *m = r->m;
    *dtype = sg_value_dtype(v);
    if (*dtype)
        return SG_OK;
    if (r->whole || !m->graph || v->graph != m->graph || m->graph->has_subgraphs) {
        if (!r->whole) {
            r->whole = true;
            sg_status st = m->graph ? infer_graph(m->graph, true, r->shared, r->memo, diag) : SG_OK;
            if (st)
                return st;
        }
        *dtype = sg_value_dtype(v);
        return SG_OK;
    }
    struct vstack s;
    s.v = s.local;
    s.n = 0;
    s.cap = sizeof s.local / sizeof s.local[0];
    sg_status st = push_value(r, &s, v);
    while (!st && s.n) {
        sg_value *x = s.v[s.n - 1];
        if (x->mark == r->done || sg_value_dtype(x)) {
            s.n--; /* a duplicate, or typed with a sibling output */
            x->mark = r->done;
            continue;
        }
        sg_node *p = x->producer;
        if (x->mark == r->pushed) {
            x->mark = r->expanded;
            size_t before = s.n;
            for (uint32_t i = 0; p && !st && i < p->n_inputs; i++)
                st = push_value(r, &s, p->inputs[i]);
            if (st || s.n > before)
                continue; /* its inputs first */
        }
        s.n--;
        x->mark = r->done;
        if (p)
            st = type_outputs(p, false, r->shared, r->memo, diag);
    }
    if (s.v != s.local)
        sg_free(s.v);
    if (st == SG_ENOMEM)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory inferring types");
    *dtype = sg_value_dtype(v);
    return st;
}
