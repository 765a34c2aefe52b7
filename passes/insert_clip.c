/*
 * insert_clip.c - `insert-clip`: put a Clip before chosen inputs or after
 * chosen outputs of nodes picked by op type (default Exp) or name, so that
 * values stay inside the fp16 range on the device. The Zipformer fix:
 * clipping Exp's input to ln(65504) keeps exp() finite in fp16.
 *
 * Bounds default to [-inf, ln(65504)] before an Exp and to the fp16 range
 * [-65504, 65504] otherwise. They are stored in the dtype of the clipped
 * tensor (fp16, bf16, fp32, fp64), rounded inward so the clip never lets
 * through more than asked: ln(65504) becomes 11.0859375, not 11.09375
 * (whose exp overflows); the default stays float16-exact even on float32
 * tensors because the compiler may turn the constant into float16. Opset < 11 models get Clip-6
 * attributes, newer ones min/max inputs; an unbounded side is left out.
 *
 * An Exp whose input is provably no larger than the upper bound is left
 * alone and reported as skipped with the reason: the `x - ReduceMax(x)` of a
 * softmax written out (at most 0), a Clip or Min already bounding it, or
 * any bound that follows from those through the value-preserving and simple
 * arithmetic ops of `bound_rules` (a few levels up, so the walk stays
 * cheap). Clipping such an Exp changes no value and would break the
 * pattern ATC's SoftmaxFusionPass fuses.
 *
 * Keeps intact: every value name (the Clip takes a fresh one), graph
 * outputs (a Clip after a graph output produces it under its old name),
 * values already clipped at least as tightly (nothing inserted: the pass is
 * idempotent), and tensors of non-float or unknown type (reported).
 */
#include "pass_impl.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum { OPT_OPS, OPT_NODES, OPT_POSITION, OPT_MIN, OPT_MAX, OPT_INPUTS, OPT_OUTPUTS, OPT_COUNT };

static const struct sg_opt_spec options[] = {
    [OPT_OPS] = {"ops", SG_OPT_STRINGS, "Exp",
                 "op types to clip (when only `nodes` is given, none by type)"},
    [OPT_NODES] = {"nodes", SG_OPT_STRINGS, NULL, "node names to clip"},
    [OPT_POSITION] = {"position", SG_OPT_ENUM, "before", "clip the inputs or the outputs", 0, 0,
                      "before|after"},
    [OPT_MIN] = {"min", SG_OPT_FLOAT, NULL, "lower bound [default: -inf before Exp, else -65504]"},
    [OPT_MAX] = {"max", SG_OPT_FLOAT, NULL,
                 "upper bound [default: ln(65504) before Exp, else 65504]"},
    [OPT_INPUTS] = {"inputs", SG_OPT_INTS, "0", "input slots to clip (position=before)", 0, 1000},
    [OPT_OUTPUTS] = {"outputs", SG_OPT_INTS, "0", "output slots to clip (position=after)", 0, 1000},
};
_Static_assert(sizeof options / sizeof options[0] == OPT_COUNT, "option table");

#define FP16_MAX 65504.0
#define LN_FP16_MAX 11.089866488461016 /* ln(65504) */

struct cached {
    sg_graph *g;
    int32_t dtype;
    double v;
    sg_value *value;
};

struct ctx {
    const struct sg_opt_value *opts;
    struct sg_pass_report *rep;
    struct sg_diag *diag;
    sg_model *m;
    int64_t opset;
    bool before;
    struct sg__strmap names;
    struct sg__ptrset inserted;
    sg_dtype_resolver types; /* element types of the values clipped, on demand */
    struct cached cache[32];
    size_t n_cache;
    /* The report's "[lo, hi]" for the last bounds: formatting two doubles
     * per inserted Clip was a tenth of the pass on big models. */
    double text_lo, text_hi;
    char text[64];
    /* Whether an op type is clipped, for the last few seen: a loaded
     * model's nodes share one op_type string per op type, so the walk
     * compares pointers instead of strings at every node. */
    struct {
        const char *op;
        bool hit;
    } seen[8];
    unsigned n_seen;
};

static const char *bounds_text(struct ctx *c, double lo, double hi)
{
    if (!c->text[0] || c->text_lo != lo || c->text_hi != hi) {
        snprintf(c->text, sizeof c->text, "[%.9g, %.9g]", lo, hi);
        c->text_lo = lo;
        c->text_hi = hi;
    }
    return c->text;
}

/* ------------------------------------------------------------ rounding */

/* The largest value of `dtype` not above v (v itself when representable). */
static double round_down(int32_t dtype, double v)
{
    if (isinf(v))
        return v;
    switch (dtype) {
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16: {
        bool half = dtype == SG_DTYPE_FLOAT16;
        float f = (float)v;
        if ((double)f > v)
            f = nextafterf(f, -INFINITY);
        uint16_t h = half ? sg_float_to_half(f) : sg_float_to_bf16(f);
        float back = half ? sg_half_to_float(h) : sg_bf16_to_float(h);
        if ((double)back > v) /* rounded up: one step towards -inf */
            h = (h & 0x8000) ? (uint16_t)(h + 1) : (h == 0 ? 0x8001 : (uint16_t)(h - 1));
        back = half ? sg_half_to_float(h) : sg_bf16_to_float(h);
        return back;
    }
    case SG_DTYPE_FLOAT: {
        float f = (float)v;
        if ((double)f > v)
            f = nextafterf(f, -INFINITY);
        return f;
    }
    default:
        return v;
    }
}

static double round_up(int32_t dtype, double v)
{
    return -round_down(dtype, -v);
}

static void encode(int32_t dtype, double v, uint8_t *buf, size_t *len)
{
    switch (dtype) {
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16: {
        uint16_t h =
            dtype == SG_DTYPE_FLOAT16 ? sg_float_to_half((float)v) : sg_float_to_bf16((float)v);
        memcpy(buf, &h, 2);
        *len = 2;
        break;
    }
    case SG_DTYPE_FLOAT: {
        float f = (float)v;
        memcpy(buf, &f, 4);
        *len = 4;
        break;
    }
    default:
        memcpy(buf, &v, 8);
        *len = 8;
        break;
    }
}

/* ------------------------------------------------------ existing clips */

static bool is_clip(const sg_node *n)
{
    return (!n->domain || !*n->domain) && strcmp(n->op_type, "Clip") == 0;
}

static bool const_bound(sg_model *m, const sg_node *n, uint32_t slot, double dflt, double *out)
{
    if (slot >= n->n_inputs || !n->inputs[slot]) {
        *out = dflt;
        return true;
    }
    sg_tensor *t = sg_value_constant(n->inputs[slot]);
    return t && sg_tensor_numel(t) == 1 && sg__tensor_get_f64(m, t, 0, out);
}

/* Bounds of an existing Clip node; false when they are not constant. */
static bool clip_bounds(struct ctx *c, const sg_node *n, double *lo, double *hi)
{
    if (c->opset && c->opset < 11) {
        *lo = sg_attr_float(n, "min", -FLT_MAX);
        *hi = sg_attr_float(n, "max", FLT_MAX);
        return true;
    }
    return const_bound(c->m, n, 1, -INFINITY, lo) && const_bound(c->m, n, 2, INFINITY, hi);
}

static bool within(struct ctx *c, const sg_node *clip, double lo, double hi)
{
    double a, b;
    return clip_bounds(c, clip, &a, &b) && a >= lo && b <= hi;
}

/* ------------------------------------------------------------ inserting */

/* The constant holding bound v for clip, shared by every Clip of the graph
 * with that bound and dtype; a new one is named after clip (`suffix`). */
static sg_value *bound_value(struct ctx *c, const sg_node *clip, int32_t dtype, double v,
                             const char *suffix)
{
    sg_graph *g = clip->graph;
    for (size_t i = 0; i < c->n_cache; i++)
        if (c->cache[i].g == g && c->cache[i].dtype == dtype && c->cache[i].v == v)
            return c->cache[i].value;
    char base[600];
    snprintf(base, sizeof base, "%s%s", clip->name, suffix);
    uint8_t buf[8];
    size_t len;
    encode(dtype, v, buf, &len);
    sg_value *out;
    if (sg__add_const(g, base, dtype, NULL, 0, buf, len, &out, c->diag))
        return NULL;
    if (c->n_cache < sizeof c->cache / sizeof c->cache[0])
        c->cache[c->n_cache++] = (struct cached){g, dtype, v, out};
    return out;
}

static sg_status set_bounds(struct ctx *c, sg_node *clip, int32_t dtype, double lo, double hi)
{
    sg_status st = SG_OK;
    if (c->opset && c->opset < 11) {
        if (!isinf(lo))
            st = sg_node_set_attr_float(clip, "min", (float)lo);
        if (!st && !isinf(hi))
            st = sg_node_set_attr_float(clip, "max", (float)hi);
        return st ? sg_diag_set(c->diag, st, "out of memory") : SG_OK;
    }
    sg_value *vlo = NULL, *vhi = NULL;
    if (!isinf(lo) && !(vlo = bound_value(c, clip, dtype, lo, "_min")))
        return SG_ENOMEM;
    if (!isinf(hi) && !(vhi = bound_value(c, clip, dtype, hi, "_max")))
        return SG_ENOMEM;
    if (vlo || vhi)
        st = sg_node_set_input(clip, 1, vlo);
    if (!st && vhi)
        st = sg_node_set_input(clip, 2, vhi);
    return st ? sg_diag_set(c->diag, st, "cannot wire Clip '%s'", clip->name) : SG_OK;
}

/* Check the dtype of v; false (with a report line) when it cannot be clipped. */
static bool clippable(struct ctx *c, const sg_node *n, const char *where, sg_value *v,
                      int32_t *dtype)
{
    int32_t d = sg_value_dtype(v);
    const char *why = NULL;
    if (!d)
        why = "element type unknown";
    else if (!sg_dtype_is_float(d))
        why = "not a floating-point tensor";
    else if (d == SG_DTYPE_BFLOAT16 && c->opset && c->opset < 13)
        why = "bfloat16 Clip needs opset 13";
    if (why) {
        sg_report_info(c->rep, "skipped", "%s %s '%s' (%s)", sg__node_label(n), where, v->name,
                       why);
        return false;
    }
    *dtype = d;
    return true;
}

static sg_node *new_clip(struct ctx *c, sg_node *n)
{
    /* "<label>_clip", joined by hand (snprintf was a tenth of the pass). */
    char base[600];
    const char *label = sg__node_label(n);
    size_t len = strlen(label);
    if (len > sizeof base - sizeof "_clip")
        len = sizeof base - sizeof "_clip";
    memcpy(base, label, len);
    memcpy(base + len, "_clip", sizeof "_clip");
    sg_node *clip = sg_node_create_fresh(n->graph, "Clip", NULL, base, c->diag);
    if (!clip || sg__ptrset_add(&c->inserted, clip)) {
        sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    return clip;
}

static void bounds_for(struct ctx *c, const sg_node *n, double *lo, double *hi)
{
    bool exp_before = c->before && strcmp(n->op_type, "Exp") == 0;
    *lo = c->opts[OPT_MIN].present ? c->opts[OPT_MIN].f : exp_before ? -INFINITY : -FP16_MAX;
    /* A float32 bound becomes float16 when ATC compiles with force_fp16, and
     * rounds to nearest: ln(65504) would become 11.09375, whose exp
     * overflows. So the default is float16-exact, rounded down. */
    *hi = c->opts[OPT_MAX].present ? c->opts[OPT_MAX].f
          : exp_before             ? round_down(SG_DTYPE_FLOAT16, LN_FP16_MAX)
                                   : FP16_MAX;
}

/* Where a Clip goes and what it clips to. */
struct site {
    char where[32]; /* "input 0", "output 1": for the report */
    int32_t dtype;
    double lo, hi; /* bounds, rounded inward to dtype */
};

/* "<kind> <idx>" into where (32 bytes): once per site, so by hand. */
static void where_text(char *where, const char *kind, uint32_t idx)
{
    size_t len = strlen(kind);
    memcpy(where, kind, len);
    where[len++] = ' ';
    char digits[10];
    int k = 0;
    do
        digits[k++] = (char)('0' + idx % 10);
    while (idx /= 10);
    while (k)
        where[len++] = digits[--k];
    where[len] = '\0';
}

/* The value in slot idx of n's inputs or outputs (`kind`), with its Clip
 * site filled in, or NULL (reported) when it cannot or need not be clipped. */
static sg_value *site_of(struct ctx *c, sg_node *n, const char *kind, sg_value *const *slots,
                         uint32_t n_slots, uint32_t idx, struct site *s)
{
    where_text(s->where, kind, idx);
    if (idx >= n_slots || !slots[idx]) {
        sg_report_info(c->rep, "skipped", "%s %s (absent)", sg__node_label(n), s->where);
        return NULL;
    }
    if (!clippable(c, n, s->where, slots[idx], &s->dtype))
        return NULL;
    bounds_for(c, n, &s->lo, &s->hi);
    s->lo = round_up(s->dtype, s->lo);
    s->hi = round_down(s->dtype, s->hi);
    return slots[idx];
}

/* -------------------------------------------------- provable bounds */

/* What a value is known to stay within, and the node whose rule made the
 * upper bound finite (for the report). */
struct range {
    double lo, hi;
    const sg_node *why;
    const char *rule;
};

/* Levels walked up, and nodes visited per question: a bound that needs more
 * is not proven (the Exps of a big model each ask once). */
enum { BOUND_DEPTH = 8, BOUND_VISITS = 64 };

struct bound_walk {
    struct ctx *c;
    unsigned visits;
};

static const struct range unknown_range = {-INFINITY, INFINITY, NULL, NULL};

static struct range range_of(struct bound_walk *w, const sg_value *v, int depth);

/* The range of input i of n (unknown when absent). */
static struct range in_range(struct bound_walk *w, const sg_node *n, uint32_t i, int depth)
{
    return i < n->n_inputs && n->inputs[i] ? range_of(w, n->inputs[i], depth) : unknown_range;
}

static const sg_node *why_of(const struct range *a, const struct range *b)
{
    return a->why ? a->why : b->why;
}

static const char *rule_of(const struct range *a, const struct range *b)
{
    return a->why ? a->rule : b->rule;
}

/* x - ReduceMax(x) with keepdims: each element minus the maximum of a group
 * that holds it. */
static bool minus_own_max(const sg_node *sub)
{
    if (sub->n_inputs != 2 || !sub->inputs[0] || !sub->inputs[1])
        return false;
    const sg_node *r = sub->inputs[1]->producer;
    return r && (!r->domain || !*r->domain) && strcmp(r->op_type, "ReduceMax") == 0 &&
           r->n_inputs >= 1 && r->inputs[0] == sub->inputs[0] && sg_attr_int(r, "keepdims", 1) == 1;
}

static struct range sub_range(struct bound_walk *w, const sg_node *n, int depth)
{
    struct range a = in_range(w, n, 0, depth), b = in_range(w, n, 1, depth);
    struct range r = {a.lo - b.hi, a.hi - b.lo, why_of(&a, &b), rule_of(&a, &b)};
    if (minus_own_max(n) && r.hi > 0) {
        r.hi = 0;
        r.why = n;
        r.rule = "x - ReduceMax(x), a softmax's max subtraction";
    }
    return r;
}

static struct range add_range(struct bound_walk *w, const sg_node *n, int depth)
{
    struct range a = in_range(w, n, 0, depth), b = in_range(w, n, 1, depth);
    return (struct range){a.lo + b.lo, a.hi + b.hi, why_of(&a, &b), rule_of(&a, &b)};
}

static struct range neg_range(struct bound_walk *w, const sg_node *n, int depth)
{
    struct range a = in_range(w, n, 0, depth);
    return (struct range){-a.hi, -a.lo, a.why, a.rule};
}

static struct range abs_range(struct bound_walk *w, const sg_node *n, int depth)
{
    struct range a = in_range(w, n, 0, depth);
    double m = fmax(fabs(a.lo), fabs(a.hi));
    return (struct range){a.lo >= 0 ? a.lo : a.hi <= 0 ? -a.hi : 0, m, a.why, a.rule};
}

static struct range relu_range(struct bound_walk *w, const sg_node *n, int depth)
{
    struct range a = in_range(w, n, 0, depth);
    return (struct range){fmax(a.lo, 0), fmax(a.hi, 0), a.why, a.rule};
}

/* Sigmoid and Tanh saturate whatever they are given. */
static struct range squash_range(struct bound_walk *w, const sg_node *n, int depth)
{
    (void)w, (void)depth;
    bool sigmoid = strcmp(n->op_type, "Sigmoid") == 0;
    return (struct range){sigmoid ? 0 : -1, 1, n, sigmoid ? "Sigmoid" : "Tanh"};
}

/* Interval product; an unknown side with 0 in the other (0 * inf) stays
 * unknown. */
static struct range mul_ranges(struct range a, struct range b)
{
    double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    struct range r = {INFINITY, -INFINITY, why_of(&a, &b), rule_of(&a, &b)};
    for (int i = 0; i < 4; i++) {
        if (isnan(p[i]))
            return unknown_range;
        r.lo = fmin(r.lo, p[i]);
        r.hi = fmax(r.hi, p[i]);
    }
    return r;
}

static struct range mul_range(struct bound_walk *w, const sg_node *n, int depth)
{
    return mul_ranges(in_range(w, n, 0, depth), in_range(w, n, 1, depth));
}

static struct range div_range(struct bound_walk *w, const sg_node *n, int depth)
{
    struct range b = in_range(w, n, 1, depth);
    if (!(b.lo > 0 || b.hi < 0))
        return unknown_range; /* the divisor may be 0 */
    struct range inv = {1 / b.hi, 1 / b.lo, b.why, b.rule};
    return mul_ranges(in_range(w, n, 0, depth), inv);
}

/* Clip: its constant bounds, narrowed by its input's range. */
static struct range clip_range(struct bound_walk *w, const sg_node *n, int depth)
{
    double lo, hi;
    struct range a = in_range(w, n, 0, depth);
    if (!clip_bounds(w->c, n, &lo, &hi))
        return a;
    struct range r = {fmax(a.lo, lo), fmin(a.hi, hi), a.why, a.rule};
    if (hi < a.hi) {
        r.why = n;
        r.rule = "Clip";
    }
    return r;
}

/* Min, Max, Where (its two data inputs), Concat: the union or the meet of
 * their inputs. */
static struct range minmax_range(struct bound_walk *w, const sg_node *n, int depth)
{
    bool is_min = strcmp(n->op_type, "Min") == 0;
    bool is_where = strcmp(n->op_type, "Where") == 0;
    uint32_t from = is_where ? 1 : 0;
    struct range r = is_min ? (struct range){INFINITY, INFINITY, NULL, NULL}
                            : (struct range){INFINITY, -INFINITY, NULL, NULL};
    if (n->n_inputs <= from)
        return unknown_range;
    for (uint32_t i = from; i < n->n_inputs; i++) {
        struct range a = in_range(w, n, i, depth);
        if (is_min) {
            /* min(a, b) <= each upper bound; >= the lowest lower bound */
            r.lo = i == from ? a.lo : fmin(r.lo, a.lo);
            if (a.hi < r.hi) {
                r.hi = a.hi;
                r.why = a.why ? a.why : n;
                r.rule = a.why ? a.rule : "Min";
            }
        } else if (strcmp(n->op_type, "Max") == 0) {
            r.lo = fmax(i == from ? -INFINITY : r.lo, a.lo);
            r.hi = i == from ? a.hi : fmax(r.hi, a.hi);
            r.why = r.why ? r.why : a.why;
            r.rule = r.rule ? r.rule : a.rule;
        } else {
            r.lo = fmin(r.lo, a.lo);
            r.hi = fmax(r.hi, a.hi);
            r.why = r.why ? r.why : a.why;
            r.rule = r.rule ? r.rule : a.rule;
        }
    }
    return r;
}

/* Ops whose output holds values of their data input (input 0) only. */
static struct range same_range(struct bound_walk *w, const sg_node *n, int depth)
{
    return in_range(w, n, 0, depth);
}

/* A float Cast keeps the values (rounding aside, which moves a bound by
 * less than the margins at stake); any other Cast proves nothing. */
static struct range cast_range(struct bound_walk *w, const sg_node *n, int depth)
{
    int64_t to = sg_attr_int(n, "to", 0);
    return sg_dtype_is_float((int32_t)to) ? in_range(w, n, 0, depth) : unknown_range;
}

static const struct {
    const char *op;
    struct range (*fn)(struct bound_walk *w, const sg_node *n, int depth);
} bound_rules[] = {
    {"Sub", sub_range},        {"Add", add_range},        {"Neg", neg_range},
    {"Abs", abs_range},        {"Relu", relu_range},      {"Sigmoid", squash_range},
    {"Tanh", squash_range},    {"Mul", mul_range},        {"Div", div_range},
    {"Clip", clip_range},      {"Min", minmax_range},     {"Max", minmax_range},
    {"Where", minmax_range},   {"Concat", minmax_range},  {"Identity", same_range},
    {"Cast", cast_range},      {"Reshape", same_range},   {"Transpose", same_range},
    {"Squeeze", same_range},   {"Unsqueeze", same_range}, {"Flatten", same_range},
    {"Expand", same_range},    {"Slice", same_range},     {"Gather", same_range},
    {"ReduceMax", same_range}, {"ReduceMin", same_range}, {"MaxPool", same_range},
};

/* The values of a constant tensor, if it is one small enough to read. */
static bool const_range(struct ctx *c, const sg_value *v, struct range *r)
{
    sg_tensor *t = sg_value_constant(v);
    if (!t)
        return false;
    int64_t n = sg_tensor_numel(t);
    if (n <= 0 || n > 4096)
        return false;
    r->lo = INFINITY;
    r->hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double x;
        if (!sg__tensor_get_f64(c->m, t, (size_t)i, &x) || isnan(x))
            return false;
        r->lo = fmin(r->lo, x);
        r->hi = fmax(r->hi, x);
    }
    r->why = v->producer;
    r->rule = "a constant";
    return true;
}

static struct range range_of(struct bound_walk *w, const sg_value *v, int depth)
{
    struct range r;
    if (const_range(w->c, v, &r))
        return r;
    const sg_node *n = v->producer;
    if (!n || depth >= BOUND_DEPTH || ++w->visits > BOUND_VISITS || (n->domain && *n->domain))
        return unknown_range;
    for (size_t i = 0; i < sizeof bound_rules / sizeof bound_rules[0]; i++)
        if (strcmp(bound_rules[i].op, n->op_type) == 0)
            return bound_rules[i].fn(w, n, depth + 1);
    return unknown_range;
}

/* Whether clipping site s of Exp n changes nothing because its input is
 * provably within the bounds; *why (static or in `buf`) says how. */
static bool exp_in_bounds(struct ctx *c, const sg_node *n, const struct site *s, char *buf,
                          size_t size)
{
    if ((n->domain && *n->domain) || strcmp(n->op_type, "Exp") != 0 || n->n_inputs < 1 ||
        !n->inputs[0])
        return false;
    struct bound_walk w = {c, 0};
    struct range r = range_of(&w, n->inputs[0], 0);
    if (!r.why)
        return false;
    /* Before: clip x to [lo, hi]; after: clip exp(x), which is >= 0. */
    bool ok =
        c->before ? isinf(s->lo) && s->lo < 0 && r.hi <= s->hi : s->lo <= 0 && exp(r.hi) <= s->hi;
    if (ok)
        snprintf(buf, size, "its input is at most %.9g: %s (%s)", r.hi, r.rule,
                 sg__node_label(r.why));
    return ok;
}

static sg_status clip_input(struct ctx *c, sg_node *n, uint32_t idx)
{
    struct site s;
    sg_value *x = site_of(c, n, "input", n->inputs, n->n_inputs, idx, &s);
    if (!x)
        return SG_OK;
    const char *where = s.where;
    int32_t dtype = s.dtype;
    double lo = s.lo, hi = s.hi;
    if (x->producer && is_clip(x->producer) && within(c, x->producer, lo, hi)) {
        sg_report_info(c->rep, "already clipped tighter", "%s %s (by %s)", sg__node_label(n), where,
                       sg__node_label(x->producer));
        return SG_OK;
    }
    char why[SG_DIAG_MAX];
    if (exp_in_bounds(c, n, &s, why, sizeof why)) {
        sg_report_info(c->rep, "skipped", "%s %s (%s)", sg__node_label(n), where, why);
        return SG_OK;
    }
    /* A Clip this run put on x already serves another reader: share it. */
    for (uint32_t u = 0; u < x->n_uses; u++) {
        sg_node *r = x->uses[u].node;
        if (x->uses[u].index == 0 && sg__ptrset_has(&c->inserted, r) && within(c, r, lo, hi)) {
            sg_status st = sg_node_set_input(n, idx, r->outputs[0]);
            if (st)
                return sg_diag_set(c->diag, st, "out of memory");
            sg_report_change(c->rep, "Clip shared", "%s %s (%s)", sg__node_label(n), where,
                             r->name);
            return SG_OK;
        }
    }
    sg_node *clip = new_clip(c, n);
    if (!clip)
        return SG_ENOMEM;
    sg_status st = sg_node_insert_before_input(n, idx, clip, c->diag);
    if (!st)
        st = set_bounds(c, clip, dtype, lo, hi);
    if (!st)
        sg_report_change(c->rep, "Clip inserted", "%s %s in %s", sg__node_label(n), where,
                         bounds_text(c, lo, hi));
    return st;
}

static sg_status clip_output(struct ctx *c, sg_node *n, uint32_t idx)
{
    struct site s;
    sg_value *y = site_of(c, n, "output", n->outputs, n->n_outputs, idx, &s);
    if (!y)
        return SG_OK;
    const char *where = s.where;
    int32_t dtype = s.dtype;
    double lo = s.lo, hi = s.hi;
    char why[SG_DIAG_MAX];
    if (exp_in_bounds(c, n, &s, why, sizeof why)) {
        sg_report_info(c->rep, "skipped", "%s %s (%s)", sg__node_label(n), where, why);
        return SG_OK;
    }
    bool tight = y->n_uses > 0 && !(y->flags & SG_VALUE_OUTPUT);
    for (uint32_t u = 0; u < y->n_uses && tight; u++)
        tight =
            y->uses[u].index == 0 && is_clip(y->uses[u].node) && within(c, y->uses[u].node, lo, hi);
    if (tight) {
        sg_report_info(c->rep, "already clipped tighter", "%s %s (by %s)", sg__node_label(n), where,
                       sg__node_label(y->uses[0].node));
        return SG_OK;
    }
    sg_node *clip = new_clip(c, n);
    if (!clip)
        return SG_ENOMEM;
    sg_status st = sg_node_insert_after_output(n, idx, clip, c->diag);
    if (!st)
        st = set_bounds(c, clip, dtype, lo, hi);
    if (!st)
        sg_report_change(c->rep, "Clip inserted", "%s %s in %s", sg__node_label(n), where,
                         bounds_text(c, lo, hi));
    return st;
}

static bool op_selected(struct ctx *c, const char *op)
{
    for (size_t i = 0; i < sizeof c->seen / sizeof c->seen[0]; i++)
        if (c->seen[i].op == op)
            return c->seen[i].hit;
    bool hit = sg__opt_has(&c->opts[OPT_OPS], op);
    size_t slot = c->n_seen++ % (sizeof c->seen / sizeof c->seen[0]);
    c->seen[slot].op = op;
    c->seen[slot].hit = hit;
    return hit;
}

static bool selected(struct ctx *c, const sg_node *n)
{
    bool by_type = c->opts[OPT_OPS].given || !c->opts[OPT_NODES].given;
    bool hit = (by_type && (!n->domain || !*n->domain) && op_selected(c, n->op_type)) ||
               (c->names.count && n->name && sg__strmap_get(&c->names, n->name));
    /* Clips this run inserted are never clipped again. */
    return hit && !sg__ptrset_has(&c->inserted, n);
}

/* The value in slot idx of n's clipped side, or NULL. */
static sg_value *slot_value(const struct ctx *c, const sg_node *n, uint32_t idx)
{
    return c->before ? (idx < n->n_inputs ? n->inputs[idx] : NULL)
                     : (idx < n->n_outputs ? n->outputs[idx] : NULL);
}

/* Start the name lookups that clipping n will make (sg_model_prefetch_fresh):
 * the Clip's name and the name of the value between it and n, which
 * sg_node_insert_after_output / _before_input call <value>_pre / _post. */
static void prefetch_site(const struct ctx *c, const sg_node *n)
{
    sg_model_prefetch_fresh(c->m, sg__node_label(n), "_clip", true);
    const struct sg_opt_value *slots = &c->opts[c->before ? OPT_INPUTS : OPT_OUTPUTS];
    sg_value *v = slots->n ? slot_value(c, n, (uint32_t)slots->ints[0]) : NULL;
    if (v)
        sg_model_prefetch_fresh(c->m, v->name, c->before ? "_post" : "_pre", false);
}

#define LOOKAHEAD 4

static sg_status clip_site(struct ctx *c, sg_node *n)
{
    const struct sg_opt_value *slots = &c->opts[c->before ? OPT_INPUTS : OPT_OUTPUTS];
    sg_status st = SG_OK;
    for (size_t i = 0; i < slots->n && !st; i++) {
        uint32_t idx = (uint32_t)slots->ints[i];
        sg_value *v = slot_value(c, n, idx);
        int32_t dtype;
        st = v ? sg_dtype_resolve(&c->types, v, &dtype, c->diag) : SG_OK;
        if (!st)
            st = c->before ? clip_input(c, n, idx) : clip_output(c, n, idx);
    }
    return st;
}

static sg_status run_graph(sg_graph *g, void *arg)
{
    struct ctx *c = arg;
    /* A scout walks the list LOOKAHEAD sites ahead of the clipping and
     * starts their name lookups; the nodes between are still in cache when
     * their turn comes. The Clips added go in behind the scout, which never
     * meets them. */
    sg_node *ring[LOOKAHEAD + 1], *scout = g->first;
    size_t head = 0, queued = 0;
    sg_status st = SG_OK;
    for (;;) {
        for (; scout && queued < LOOKAHEAD + 1; scout = scout->next)
            if (selected(c, scout)) {
                prefetch_site(c, scout);
                ring[(head + queued++) % (LOOKAHEAD + 1)] = scout;
            }
        if (!queued || st)
            return st;
        sg_node *n = ring[head];
        head = (head + 1) % (LOOKAHEAD + 1);
        queued--;
        st = clip_site(c, n);
    }
}

static sg_status run(sg_model *m, const struct sg_opt_value *opts, struct sg_pass_report *rep,
                     struct sg_diag *diag)
{
    struct ctx c = {.opts = opts, .rep = rep, .diag = diag, .m = m};
    c.opset = sg_model_opset(m, "");
    c.before = strcmp(opts[OPT_POSITION].s, "before") == 0;
    if (opts[OPT_MIN].present && opts[OPT_MAX].present && !(opts[OPT_MIN].f < opts[OPT_MAX].f))
        return sg_diag_set(diag, SG_ERANGE, "min (%g) must be below max (%g)", opts[OPT_MIN].f,
                           opts[OPT_MAX].f);
    if (!m->graph)
        return SG_OK;
    sg_status st = sg__strset_from(&c.names, &opts[OPT_NODES]);
    if (st)
        st = sg_diag_set(diag, st, "out of memory");
    sg_dtype_resolver_init(&c.types, m);
    if (!st)
        st = sg__walk_graphs(m->graph, run_graph, &c);
    sg__strmap_free(&c.names);
    sg__ptrset_free(&c.inserted);
    return st;
}

const struct sg_pass sg_pass_insert_clip = {
    .name = "insert-clip",
    .summary = "clip inputs or outputs of chosen nodes (default: Exp) to the fp16 range",
    .options = options,
    .n_options = OPT_COUNT,
    .run = run,
};
