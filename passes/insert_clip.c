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
    sg_tensor *t = sg__const_tensor(n->inputs[slot]);
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
