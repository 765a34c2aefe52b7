/*
 * analysis.c - from rows to an answer: the verdict on the network outputs,
 * the first failing operator, its cause and what to do.
 *
 * Every value of the model gets a state, in topological order:
 *   - graph inputs and initializers agree by definition;
 *   - a value with a compared row agrees or is in error by that row (a
 *     shape mismatch is an error);
 *   - a value computed inside a fused op whose output is in error is in
 *     error with it;
 *   - any other value (not dumped on both sides) is in error when one of
 *     its node's inputs is, else agrees by inference.
 * The first failing operator is the first row in topological order whose
 * output is in error while every input of the node(s) behind it (for a
 * fused op: the inputs from outside the fused group) agrees.
 *
 * Cause: overflow when the target has NaN/Inf where the golden side is
 * finite; otherwise a jump when every input stays below half of every
 * threshold (sg_metrics_severity < 0.5), reported as a fused op when the
 * row covers several ONNX nodes; otherwise accumulated error.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_arena.h"
#include "sg_dtype.h"
#include "sg_tensorfile.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JUMP_INPUT_SEVERITY 0.5
#define MAX_HIDDEN 64

/* V_ROUNDING: in error by the thresholds, but by no more than rounding the
 * golden values to the target's dtype does: the precision, not the op. */
enum vstate { V_AGREES, V_CONSTANT, V_INFERRED, V_ERROR, V_ROUNDING };

struct ctx {
    sg_compare_result *r;
    sg_arena *arena;
    sg_graph *g;
    const sg_dump_names *names;
    sg_node *const *order;
    uint32_t n;
    uint32_t *off;       /* off[pos]: first output slot of the node at pos */
    ptrdiff_t *row_at;   /* output slot -> row index, or -1 */
    uint8_t *state;      /* output slot -> enum vstate */
    bool *ov;            /* output slot -> overflows (NaN/Inf on the target only), measured
                            or carried from an input */
    bool *fused_error;   /* pos -> covered by a fused op whose output is in error */
    const char **advice; /* growing lists in the arena */
    size_t n_advice, cap_advice;
    const char **notes;
    size_t n_notes, cap_notes;
    struct sg_diag *diag;
    bool oom;
    int hunt; /* enum hunt that found the first failing row */
};

static void push(struct ctx *c, const char ***list, size_t *n, size_t *cap, const char *s)
{
    if (!s) {
        c->oom = true;
        return;
    }
    if (*n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        const char **grown = sg_arena_grow(c->arena, *list, *n, ncap, sizeof **list);
        if (!grown) {
            c->oom = true;
            return;
        }
        *list = grown;
        *cap = ncap;
    }
    (*list)[(*n)++] = s;
}

#define ADVICE(c, ...)                                                                             \
    push(c, &(c)->advice, &(c)->n_advice, &(c)->cap_advice, sg__cmp_printf((c)->arena, __VA_ARGS__))
#define NOTE(c, ...)                                                                               \
    push(c, &(c)->notes, &(c)->n_notes, &(c)->cap_notes, sg__cmp_printf((c)->arena, __VA_ARGS__))

/* The slot of value v, or -1 when no node of the main graph makes it. */
static ptrdiff_t slot_of(const struct ctx *c, const sg_value *v)
{
    if (!v || !v->producer || v->producer->graph != c->g || v->producer->dead)
        return -1;
    return (ptrdiff_t)c->off[v->producer->mark] + v->producer_index;
}

static enum vstate value_state(const struct ctx *c, const sg_value *v)
{
    ptrdiff_t s = slot_of(c, v);
    return s < 0 ? V_CONSTANT : (enum vstate)c->state[s];
}

/* The nodes behind a row: its map op's original nodes, or its own node. */
static size_t row_nodes(const struct ctx *c, const struct sg_compare_row *row, const sg_node **out,
                        size_t max)
{
    size_t n = 0;
    if (row->op && row->op->n_orig) {
        for (size_t i = 0; i < row->op->n_orig && n < max; i++) {
            const sg_node *node = sg_dump_names_node(c->names, row->op->orig[i]);
            if (node)
                out[n++] = node;
        }
    } else if (row->node) {
        out[n++] = row->node;
    }
    return n;
}

static bool in_set(const sg_node *const *set, size_t n, const sg_node *x)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == x)
            return true;
    return false;
}

/* A compared row's state: mis-shaped or past a threshold is an error,
 * unless rounding alone explains it. */
static enum vstate row_state(const struct sg_compare_row *row)
{
    if (row->mismatch)
        return V_ERROR;
    if (!row->is_error)
        return V_AGREES;
    return row->within_rounding ? V_ROUNDING : V_ERROR;
}

static sg_status build_states(struct ctx *c)
{
    sg_compare_result *r = c->r;
    uint32_t slots = 0;
    c->off = sg_arena_calloc(c->arena, c->n + 1, sizeof *c->off);
    c->fused_error = sg_arena_calloc(c->arena, c->n + 1, sizeof *c->fused_error);
    bool *fused_ov = sg_arena_calloc(c->arena, c->n + 1, sizeof *fused_ov);
    if (!c->off || !c->fused_error || !fused_ov)
        return SG_ENOMEM;
    for (uint32_t p = 0; p < c->n; p++) {
        c->off[p] = slots;
        slots += c->order[p]->n_outputs;
    }
    c->off[c->n] = slots;
    c->row_at = sg_arena_alloc(c->arena, (slots + 1) * sizeof *c->row_at);
    c->state = sg_arena_calloc(c->arena, slots + 1, 1);
    c->ov = sg_arena_calloc(c->arena, slots + 1, sizeof *c->ov);
    if (!c->row_at || !c->state || !c->ov)
        return SG_ENOMEM;
    for (uint32_t s = 0; s < slots; s++)
        c->row_at[s] = -1;
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        if (!row->node || row->node->graph != c->g || row->index >= row->node->n_outputs)
            continue;
        if (row->status != SG_ROW_COMPARED && !row->mismatch)
            continue;
        c->row_at[c->off[row->node->mark] + row->index] = (ptrdiff_t)i;
        /* A fused op in error: everything it computes is in error. */
        if (row->op && row->op->n_orig > 1 && row_state(row) == V_ERROR) {
            for (size_t k = 0; k < row->op->n_orig; k++) {
                const sg_node *node = sg_dump_names_node(c->names, row->op->orig[k]);
                if (node) {
                    c->fused_error[node->mark] = true;
                    fused_ov[node->mark] |= row->m.overflow > 0;
                }
            }
        }
    }
    for (uint32_t p = 0; p < c->n; p++) {
        const sg_node *node = c->order[p];
        bool input_error = false, input_ov = false;
        for (uint32_t k = 0; k < node->n_inputs; k++) {
            input_error |= value_state(c, node->inputs[k]) == V_ERROR;
            ptrdiff_t s = slot_of(c, node->inputs[k]);
            input_ov |= s >= 0 && c->ov[s];
        }
        for (uint32_t o = 0; o < node->n_outputs; o++) {
            uint32_t s = c->off[p] + o;
            ptrdiff_t ri = c->row_at[s];
            if (ri >= 0) {
                c->state[s] = row_state(&r->rows[ri]);
                c->ov[s] = r->rows[ri].m.overflow > 0;
            } else {
                c->state[s] = input_error || c->fused_error[p] ? V_ERROR : V_INFERRED;
                c->ov[s] = input_ov || fused_ov[p];
            }
        }
    }
    return SG_OK;
}

/* Nodes between inferred inputs and measured values: not dumped. Walks up
 * through producers whose outputs have no row; `stack` has room for every
 * node (each is pushed once: `seen` is set on push). */
static void collect_undumped(struct ctx *c, const sg_value *v, const sg_node **hidden,
                             size_t *n_hidden, size_t *n_more, bool *seen, const sg_node **stack)
{
    size_t sp = 0;
    ptrdiff_t s = slot_of(c, v);
    if (s < 0 || c->row_at[s] >= 0 || seen[v->producer->mark])
        return;
    seen[v->producer->mark] = true;
    stack[sp++] = v->producer;
    while (sp) {
        const sg_node *node = stack[--sp];
        if (*n_hidden < MAX_HIDDEN)
            hidden[(*n_hidden)++] = node;
        else
            (*n_more)++;
        for (uint32_t k = 0; k < node->n_inputs; k++) {
            const sg_value *in = node->inputs[k];
            ptrdiff_t t = slot_of(c, in);
            if (t >= 0 && c->row_at[t] < 0 && !seen[in->producer->mark]) {
                seen[in->producer->mark] = true;
                stack[sp++] = in->producer;
            }
        }
    }
}

static int cmp_nodes_pos(const void *a, const void *b)
{
    const sg_node *x = *(const sg_node *const *)a, *y = *(const sg_node *const *)b;
    return (x->mark > y->mark) - (x->mark < y->mark);
}

static const char *fmt_metric(struct ctx *c, double v)
{
    return isnan(v) ? "NaN" : sg__cmp_printf(c->arena, "%.6f", v);
}

/* How the first failing row is looked for, in turn. */
enum hunt {
    HUNT_OVERFLOW, /* an overflow outranks a threshold breach: the first row that overflows
                      while none of its inputs does */
    HUNT_JUMP,     /* the first row past a threshold (beyond rounding) whose inputs agree */
    HUNT_ROUNDING, /* none: the first row in error by rounding alone, inputs agreeing */
};

static bool is_candidate(const struct sg_compare_row *row, enum hunt h)
{
    if (h == HUNT_OVERFLOW)
        return row->status == SG_ROW_COMPARED && row->m.overflow > 0;
    if (h == HUNT_JUMP)
        return row->mismatch || (row->status == SG_ROW_COMPARED && row_state(row) == V_ERROR);
    return row->status == SG_ROW_COMPARED && row_state(row) == V_ROUNDING;
}

/* Whether the inputs from outside `set` allow the row to be the culprit:
 * none overflows (HUNT_OVERFLOW), none is in error (the others). */
static bool inputs_ok(const struct ctx *c, const sg_node *const *set, size_t n_set, enum hunt h)
{
    for (size_t k = 0; k < n_set; k++)
        for (uint32_t j = 0; j < set[k]->n_inputs; j++) {
            const sg_value *v = set[k]->inputs[j];
            if (!v || (v->producer && in_set(set, n_set, v->producer)))
                continue;
            ptrdiff_t s = slot_of(c, v);
            if (h == HUNT_OVERFLOW ? s >= 0 && c->ov[s] : value_state(c, v) == V_ERROR)
                return false;
        }
    return true;
}

/* The state of an input of the culprit, as the report names it. */
static enum sg_input_state input_state(const struct ctx *c, const sg_value *v)
{
    ptrdiff_t s = slot_of(c, v);
    if (s < 0) {
        bool from_graph = (v->flags & SG_VALUE_INPUT) && !v->init && !v->outer;
        return from_graph ? SG_INPUT_GRAPH_INPUT : SG_INPUT_CONSTANT;
    }
    if (v->producer->n_inputs == 0 && v->producer->op_type &&
        strcmp(v->producer->op_type, "Constant") == 0)
        return SG_INPUT_CONSTANT; /* a Constant node, dumped or not: it agrees by definition */
    switch ((enum vstate)c->state[s]) {
    case V_ERROR:
        return SG_INPUT_IN_ERROR;
    case V_ROUNDING:
        return SG_INPUT_ROUNDING;
    case V_AGREES:
        return c->row_at[s] >= 0 ? SG_INPUT_AGREES : SG_INPUT_NOT_DUMPED;
    default:
        return SG_INPUT_NOT_DUMPED;
    }
}

/* Fill the analysis for culprit row i (nodes `set`): its inputs, the
 * nodes it hides, how far its inputs are into their thresholds. */
static sg_status describe(struct ctx *c, size_t i, const sg_node *const *set, size_t n_set)
{
    sg_compare_result *r = c->r;
    struct sg_compare_analysis *an = &r->analysis;
    const struct sg_compare_row *row = &r->rows[i];
    an->first_fail = (ptrdiff_t)i;
    size_t cap = 0;
    for (size_t k = 0; k < n_set; k++)
        cap += set[k]->n_inputs;
    an->inputs = sg_arena_calloc(c->arena, cap ? cap : 1, sizeof *an->inputs);
    bool *seen = sg_arena_calloc(c->arena, c->n + 1, sizeof *seen);
    const sg_node **hidden = sg_arena_calloc(c->arena, MAX_HIDDEN + n_set, sizeof *hidden);
    const sg_node **stack = sg_arena_calloc(c->arena, c->n + 1, sizeof *stack);
    if (!an->inputs || !seen || !hidden || !stack)
        return SG_ENOMEM;
    for (size_t k = 0; k < n_set; k++)
        seen[set[k]->mark] = true; /* the row's own nodes are not "undumped" */
    size_t n_hidden = 0, n_more = 0, n_fused_hidden = 0;
    for (size_t k = 0; k < n_set; k++)
        if (set[k] != row->node) {
            hidden[n_hidden++] = set[k];
            n_fused_hidden++;
        }
    an->input_severity = 0;
    for (size_t k = 0; k < n_set; k++)
        for (uint32_t j = 0; j < set[k]->n_inputs; j++) {
            const sg_value *v = set[k]->inputs[j];
            if (!v || (v->producer && in_set(set, n_set, v->producer)))
                continue;
            bool dup = false;
            for (size_t q = 0; q < an->n_inputs; q++)
                dup |= strcmp(an->inputs[q].value, v->name) == 0;
            if (dup)
                continue;
            struct sg_compare_input *in = &an->inputs[an->n_inputs++];
            in->value = sg_arena_strdup(c->arena, v->name);
            in->row = -1;
            if (!in->value)
                return SG_ENOMEM;
            in->state = input_state(c, v);
            ptrdiff_t s = slot_of(c, v);
            if (s >= 0 && c->row_at[s] >= 0) {
                in->row = c->row_at[s];
                /* An input off by rounding alone carries no error of an op. */
                if (in->state == SG_INPUT_AGREES || in->state == SG_INPUT_IN_ERROR)
                    an->input_severity =
                        fmax(an->input_severity,
                             sg_metrics_severity(&r->rows[in->row].m, &r->thresholds));
            } else if (in->state == SG_INPUT_NOT_DUMPED) {
                collect_undumped(c, v, hidden, &n_hidden, &n_more, seen, stack);
            }
        }
    qsort(hidden + n_fused_hidden, n_hidden - n_fused_hidden, sizeof *hidden, cmp_nodes_pos);
    an->hidden = sg_arena_calloc(c->arena, n_hidden + 1, sizeof *an->hidden);
    if (!an->hidden)
        return SG_ENOMEM;
    for (size_t k = 0; k < n_hidden; k++)
        if (!(an->hidden[an->n_hidden++] =
                  sg_arena_strdup(c->arena, sg_dump_names_of(c->names, hidden[k]))))
            return SG_ENOMEM;
    an->n_undumped = n_hidden - n_fused_hidden + n_more;
    if (n_hidden > n_fused_hidden)
        NOTE(c,
             "%zu node(s)%s between the agreeing inputs and %s have no dump on both sides: "
             "the error arose among them or in %s",
             n_hidden - n_fused_hidden + n_more, n_more ? " (the first 64 listed)" : "",
             row->target, row->target);
    return SG_OK;
}

/* The first failing row with a model: an overflow first, then a jump past
 * the thresholds, then an error of rounding alone; inputs checked. */
static sg_status first_failure_model(struct ctx *c)
{
    sg_compare_result *r = c->r;
    const sg_node *set[1024];
    for (enum hunt h = HUNT_OVERFLOW; h <= HUNT_ROUNDING; h++) {
        ptrdiff_t fallback = -1;
        for (size_t i = 0; i < r->n_rows; i++) {
            const struct sg_compare_row *row = &r->rows[i];
            if (!is_candidate(row, h))
                continue;
            if (!row->node && row->body_node) {
                /* Inside a body: the first such row in run order is the
                 * first failure in it, when what the body's main-graph
                 * ancestor reads is right. */
                const sg_node *top = row->body_node;
                while (top->graph && top->graph != c->g && top->graph->owner)
                    top = top->graph->owner;
                if (top->graph != c->g || !inputs_ok(c, &top, 1, h))
                    continue;
                c->hunt = h;
                r->analysis.first_fail = (ptrdiff_t)i;
                return SG_OK;
            }
            if (!row->node) {
                if (fallback < 0)
                    fallback = (ptrdiff_t)i; /* not in the model */
                continue;
            }
            size_t n_set = row_nodes(c, row, set, sizeof set / sizeof set[0]);
            if (!inputs_ok(c, set, n_set, h))
                continue;
            c->hunt = h;
            return describe(c, i, set, n_set);
        }
        if (fallback >= 0) {
            c->hunt = h;
            r->analysis.first_fail = fallback;
            return SG_OK;
        }
    }
    return SG_OK;
}

/* s as one shell word: as it is when it is plain, else in single quotes. */
static const char *shell_quote(struct ctx *c, const char *s)
{
    if (!s)
        return NULL;
    bool plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("_-./:=,+@%", *p);
    if (plain)
        return s;
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = sg_arena_alloc(c->arena, n);
    if (!q)
        return NULL;
    size_t k = 0;
    q[k++] = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(q + k, "'\\''", 4);
            k += 4;
        } else {
            q[k++] = *p;
        }
    }
    q[k++] = '\'';
    q[k] = '\0';
    return q;
}

static const char *join_names(struct ctx *c, const char *const *names, size_t n, size_t max)
{
    size_t len = 1;
    for (size_t i = 0; i < n && i < max; i++)
        len += strlen(names[i]) + 2;
    len += 32;
    char *s = sg_arena_alloc(c->arena, len);
    if (!s)
        return NULL;
    size_t pos = 0;
    for (size_t i = 0; i < n && i < max; i++)
        pos += (size_t)snprintf(s + pos, len - pos, "%s%s", i ? ", " : "", names[i]);
    if (n > max)
        snprintf(s + pos, len - pos, " and %zu more", n - max);
    else
        s[pos] = '\0';
    return s;
}

static void verdict(struct ctx *c)
{
    sg_compare_result *r = c->r;
    struct sg_compare_analysis *an = &r->analysis;
    if (!c->g) {
        an->outputs_known = false;
        for (size_t i = 0; i < r->n_rows; i++)
            an->n_outputs_golden_nonfinite +=
                r->rows[i].status == SG_ROW_COMPARED && r->rows[i].golden_nonfinite;
        an->verdict = an->n_errors || an->n_mismatch   ? SG_VERDICT_FAIL
                      : an->n_outputs_golden_nonfinite ? SG_VERDICT_GOLDEN_NOT_FINITE
                      : an->n_compared                 ? SG_VERDICT_PASS
                                                       : SG_VERDICT_UNKNOWN;
        NOTE(c, "no model given: the network outputs are unknown, so the verdict covers every "
                "compared tensor, rows follow the golden dump order, and inputs of the failing "
                "operator are not checked (pass --model)");
        return;
    }
    an->outputs_known = true;
    for (uint32_t i = 0; i < c->g->n_outputs; i++) {
        const sg_value *v = c->g->outputs[i];
        ptrdiff_t s = slot_of(c, v);
        if (s < 0)
            continue; /* a graph input passed straight through */
        an->n_outputs++;
        ptrdiff_t ri = c->row_at[s];
        if (ri < 0) {
            an->n_outputs_missing++;
            NOTE(c, "network output '%s' was not compared: no dump on both sides", v->name);
            continue;
        }
        const struct sg_compare_row *row = &r->rows[ri];
        if (row->is_error || row->mismatch)
            an->n_outputs_failed++;
        an->n_outputs_golden_nonfinite += row->golden_nonfinite > 0;
    }
    /* A golden output that is not finite proves nothing: never a PASS. */
    an->verdict = an->n_outputs_failed             ? SG_VERDICT_FAIL
                  : an->n_outputs_golden_nonfinite ? SG_VERDICT_GOLDEN_NOT_FINITE
                  : an->n_outputs_missing          ? SG_VERDICT_UNKNOWN
                  : an->n_outputs                  ? SG_VERDICT_PASS
                                                   : SG_VERDICT_UNKNOWN;
}

/* Names of the network outputs in error, for the summary: "y (Add_9)". */
static const char *failed_outputs(struct ctx *c)
{
    sg_compare_result *r = c->r;
    const char *names[8];
    size_t n = 0, total = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        if (!row->is_output || !(row->is_error || row->mismatch))
            continue;
        if (n < 8) {
            const sg_value *v = row->node->outputs[row->index];
            names[n++] = sg__cmp_printf(c->arena, "%s (from %s)", v->name, row->golden_node);
            if (!names[n - 1])
                return NULL;
        }
        total++;
    }
    return join_names(c, names, n, 8);
}

/* Where the golden run broke: the sentence of the summary, and advice that
 * fits the op where NaN/Inf first appear. */
/* Where the golden run's NaN/Inf began (rows sorted): the first node that
 * makes NaN/Inf out of finite inputs (an overflow, a division by zero);
 * else, when they all start from a constant's (a mask of -inf), the first
 * that makes NaN out of inputs without NaN; else (no model, or nothing
 * known of the inputs) the first row holding any. *how: 1, 2 or 0 for
 * those. -1 when no golden tensor holds NaN/Inf; -2 when out of memory. */
static ptrdiff_t golden_origin(struct ctx *c, int *how)
{
    sg_compare_result *r = c->r;
    ptrdiff_t first = -1, from_finite = -1, nan_from_none = -1;
    *how = 0;
    for (size_t i = 0; i < r->n_rows && first < 0; i++)
        if (r->rows[i].golden_nonfinite)
            first = (ptrdiff_t)i;
    if (first < 0 || !c->g)
        return first;
    uint32_t slots = c->off[c->n];
    uint64_t *nan = sg_arena_calloc(c->arena, slots + 1, sizeof *nan);
    uint64_t *bad = sg_arena_calloc(c->arena, slots + 1, sizeof *bad);
    if (!nan || !bad)
        return -2;
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        if (row->node && row->node->graph == c->g && row->index < row->node->n_outputs) {
            nan[c->off[row->node->mark] + row->index] = row->golden_nan;
            bad[c->off[row->node->mark] + row->index] = row->golden_nonfinite;
        }
    }
    for (size_t i = 0; i < r->n_rows && (from_finite < 0 || nan_from_none < 0); i++) {
        const struct sg_compare_row *row = &r->rows[i];
        if (!row->golden_nonfinite || !row->node)
            continue;
        bool finite = true, no_nan = true;
        for (uint32_t k = 0; k < row->node->n_inputs; k++) {
            const sg_value *v = row->node->inputs[k];
            uint64_t vn = 0, vi = 0;
            if (!v)
                continue;
            ptrdiff_t s = slot_of(c, v);
            if (s >= 0) {
                vn = nan[s];
                vi = bad[s] - nan[s];
            } else {
                sg_value_count_nonfinite(c->g->model, v, &vn, &vi);
            }
            finite &= vn + vi == 0;
            no_nan &= vn == 0;
        }
        if (finite && from_finite < 0)
            from_finite = (ptrdiff_t)i;
        if (row->golden_nan && no_nan && nan_from_none < 0)
            nan_from_none = (ptrdiff_t)i;
    }
    *how = from_finite >= 0 ? 1 : nan_from_none >= 0 ? 2 : 0;
    return from_finite >= 0 ? from_finite : nan_from_none >= 0 ? nan_from_none : first;
}

static const char *golden_broken(struct ctx *c)
{
    sg_compare_result *r = c->r;
    struct sg_compare_analysis *an = &r->analysis;
    int how;
    an->golden_nonfinite = golden_origin(c, &how);
    if (an->golden_nonfinite == -2) {
        an->golden_nonfinite = -1;
        return NULL;
    }
    if (an->golden_nonfinite < 0)
        return "";
    const struct sg_compare_row *row = &r->rows[an->golden_nonfinite];
    const char *name = row->golden_node ? row->golden_node : row->golden;
    /* The ONNX op type: the advice is about the model's own node. */
    const char *op = row->node                     ? row->node->op_type
                     : strcmp(row->op_type, "NaN") ? row->op_type
                                                   : NULL;
    static const char *const exp_like[] = {"Exp",  "Pow",       "Mul",        "MatMul", "Gemm",
                                           "Conv", "ReduceSum", "ReduceProd", NULL};
    static const char *const softmax_like[] = {"Softmax", "LogSoftmax", "ReduceLogSumExp",
                                               "SoftmaxV2", NULL};
    static const char *const domain_like[] = {"Div", "Log", "Sqrt", "Reciprocal", NULL};
    int kind = 0;
    for (int k = 0; op && exp_like[k]; k++)
        kind = strcmp(op, exp_like[k]) == 0 ? 1 : kind;
    for (int k = 0; op && softmax_like[k]; k++)
        kind = strcmp(op, softmax_like[k]) == 0 ? 2 : kind;
    for (int k = 0; op && domain_like[k]; k++)
        kind = strcmp(op, domain_like[k]) == 0 ? 3 : kind;
    bool fp16 = row->golden_dtype == SG_DTYPE_FLOAT16;
    if (kind == 1)
        ADVICE(c,
               "%s makes NaN/Inf in the golden run itself%s: a value past the range of the "
               "model's own dtype (float16 ends at 65504). Run that part of the model in float32 "
               "(cast its inputs), or clip the input, then compare again.",
               name, fp16 ? " (it computes in float16 there)" : "");
    else if (kind == 2)
        ADVICE(c,
               "%s gives NaN in the golden run itself: a softmax over a row whose every value is "
               "-inf (a mask that hides every position) divides 0 by 0. Mask with a large "
               "negative finite value, or keep one position unmasked, then compare again.",
               name);
    else if (kind == 3)
        ADVICE(c,
               "%s gives NaN/Inf in the golden run itself: a division by zero or a log or square "
               "root outside its domain on these inputs. Check the inputs (--range) or guard the "
               "operation, then compare again.",
               name);
    else
        ADVICE(c,
               "NaN/Inf first appear in the golden run at %s: check the inputs (a NaN in them, a "
               "--range the model does not expect) and that node, then compare again.",
               name);
    ADVICE(c, "`surgeon run MODEL --dump all` names where they begin.");
    return sg__cmp_printf(
        c->arena, " %s in the golden run at %s%s%s%s, position %u (%" PRIu64 " %s).",
        how == 2 ? "NaN begins" : "NaN/Inf begin", name, op ? " (" : "", op ? op : "",
        op ? ")" : "", row->position, how == 2 ? row->golden_nan : row->golden_nonfinite,
        how == 1   ? "values, from finite inputs"
        : how == 2 ? "NaN, from inputs without NaN"
                   : "values");
}

static void explain(struct ctx *c)
{
    sg_compare_result *r = c->r;
    struct sg_compare_analysis *an = &r->analysis;
    const char *verdict_text;
    const char *broken = golden_broken(c);
    if (!broken) {
        c->oom = true;
        return;
    }
    switch (an->verdict) {
    case SG_VERDICT_PASS:
        verdict_text =
            an->outputs_known
                ? sg__cmp_printf(c->arena,
                                 "The network output%s match%s the golden run within the "
                                 "thresholds.",
                                 an->n_outputs > 1 ? "s" : "", an->n_outputs > 1 ? "" : "es")
                : sg__cmp_printf(c->arena, "Every compared tensor (%zu) is within the thresholds.",
                                 an->n_compared);
        break;
    case SG_VERDICT_FAIL:
        verdict_text =
            an->outputs_known
                ? sg__cmp_printf(c->arena, "%zu of %zu network output%s in error: %s.",
                                 an->n_outputs_failed, an->n_outputs,
                                 an->n_outputs > 1 ? "s are" : " is", failed_outputs(c))
                : sg__cmp_printf(c->arena, "%zu of %zu compared tensors %s in error.",
                                 an->n_errors + an->n_mismatch, an->n_compared + an->n_mismatch,
                                 an->n_errors + an->n_mismatch == 1 ? "is" : "are");
        break;
    case SG_VERDICT_GOLDEN_NOT_FINITE:
        verdict_text = sg__cmp_printf(
            c->arena,
            "The golden run is not finite: %zu %s hold%s NaN/Inf in the float32 reference run "
            "itself, so comparing against %s proves nothing.%s",
            an->n_outputs_golden_nonfinite,
            an->outputs_known
                ? (an->n_outputs_golden_nonfinite == 1 ? "network output" : "network outputs")
                : (an->n_outputs_golden_nonfinite == 1 ? "compared tensor" : "compared tensors"),
            an->n_outputs_golden_nonfinite == 1 ? "s" : "",
            an->n_outputs_golden_nonfinite == 1 ? "it" : "them", broken);
        break;
    default:
        verdict_text = an->n_compared || an->n_outputs
                           ? sg__cmp_printf(c->arena,
                                            "The network outputs could not all be compared "
                                            "(%zu of %zu missing); none of those compared is in "
                                            "error.",
                                            an->n_outputs_missing, an->n_outputs)
                           : sg__cmp_printf(c->arena, "Nothing could be compared.");
        break;
    }
    if (an->verdict == SG_VERDICT_FAIL && an->n_outputs_golden_nonfinite)
        NOTE(c, "%zu network output(s) hold NaN/Inf in the golden run itself.%s",
             an->n_outputs_golden_nonfinite, broken);
    if (an->first_fail < 0) {
        an->cause = SG_CAUSE_NONE;
        an->summary = verdict_text;
        return;
    }
    const struct sg_compare_row *row = &r->rows[an->first_fail];
    bool golden_bad = an->verdict == SG_VERDICT_GOLDEN_NOT_FINITE;
    bool intermediate_only = an->verdict == SG_VERDICT_PASS || golden_bad;
    an->overflow = row->m.overflow > 0;
    an->fused = row->fused;
    bool jump = an->n_inputs == 0 || an->input_severity < JUMP_INPUT_SEVERITY;
    if (!c->g)
        jump = true; /* inputs unknown: nothing says the error built up */
    an->cause = an->overflow                   ? SG_CAUSE_OVERFLOW
                : row_state(row) == V_ROUNDING ? SG_CAUSE_PRECISION
                : !jump                        ? SG_CAUSE_ACCUMULATED
                : an->fused                    ? SG_CAUSE_FUSED
                                               : SG_CAUSE_JUMP;
    const char *what =
        row->fused ? sg__cmp_printf(c->arena, "fused op %s (%s, covering %s)", row->target,
                                    row->op_type, row->golden)
        : strcmp(row->op_type, "NaN") == 0
            ? (row->golden_node ? row->golden_node : row->target)
            : sg__cmp_printf(c->arena, "%s (%s)", row->golden_node ? row->golden_node : row->target,
                             row->op_type);
    char crossed[512];
    sg_metrics_crossed_text(&row->m, &r->thresholds, row->crossed, crossed, sizeof crossed);
    const char *metrics =
        row->mismatch ? row->reason
                      : sg__cmp_printf(c->arena,
                                       "%s; cosine similarity %s, relative Euclidean distance %s, "
                                       "KL %s, RMSE %s, mean relative error %s",
                                       crossed, fmt_metric(c, row->m.cosine),
                                       fmt_metric(c, row->m.red), fmt_metric(c, row->m.kl),
                                       fmt_metric(c, row->m.rmse), fmt_metric(c, row->m.mean_rel));
    bool measured = false, rounded = false;
    for (size_t i = 0; i < an->n_inputs; i++) {
        measured |= an->inputs[i].state == SG_INPUT_AGREES;
        rounded |= an->inputs[i].state == SG_INPUT_ROUNDING;
    }
    const sg_node *top = row->body_node;
    while (top && top->graph && top->graph != c->g && top->graph->owner)
        top = top->graph->owner;
    const char *inputs_text =
        !c->g                      ? "its inputs were not checked (no model)"
        : top                      ? sg__cmp_printf(c->arena,
                                                    "it runs inside the body of %s, whose inputs agree with the golden "
                                                                         "run, and no row of the body before it %s",
                                                    sg_dump_names_of(c->names, top),
                               c->hunt == HUNT_OVERFLOW ? "overflows" : "is in error")
        : an->n_inputs == 0        ? "it has no inputs"
        : c->hunt == HUNT_OVERFLOW ? "none of its inputs overflows"
        : measured && rounded
            ? sg__cmp_printf(c->arena,
                             "its inputs agree with the golden run (some within the target's "
                             "rounding, the others at most %.1f%% of a threshold)",
                             100 * an->input_severity)
        : rounded ? "its inputs agree with the golden run within the target's rounding"
        : measured
            ? sg__cmp_printf(c->arena,
                             "its inputs agree with the golden run (the worst at %.1f%% of a "
                             "threshold)",
                             100 * an->input_severity)
            : "its inputs agree with the golden run (by inference: they were not dumped on "
              "both sides, everything upstream agrees)";
    an->summary = sg__cmp_printf(c->arena,
                                 "%s %s first failing operator is %s, position %u in %s: "
                                 "%s, its output does not (%s).",
                                 verdict_text,
                                 golden_bad          ? "Against that reference, the"
                                 : intermediate_only ? "Intermediate errors do not reach the "
                                                       "outputs, so no fix is needed; the"
                                                     : "The",
                                 what, row->position, c->g ? "topological order" : "dump order",
                                 inputs_text, metrics);

    const char *name = row->golden_node ? row->golden_node : row->target;
    if (golden_bad)
        return; /* the golden run comes first: its advice is given */
    bool absolute_only =
        row->crossed && !(row->crossed & ~(unsigned)(SG_CROSSED_RMSE | SG_CROSSED_MRE));
    if (intermediate_only) {
        if (an->overflow)
            ADVICE(c,
                   "No fix is needed: the NaN/Inf of %s do not reach the network outputs (they "
                   "are masked on the way, e.g. by a Where or a multiplication by 0). Compare "
                   "again when the inputs change.",
                   row->target);
        else if (an->cause == SG_CAUSE_PRECISION)
            ADVICE(c,
                   "No fix is needed: %s is off by no more than rounding its golden values to "
                   "%s does, and the network outputs pass.",
                   row->target, sg_dtype_name(row->compute_dtype));
        else if (absolute_only)
            ADVICE(c,
                   "No fix is needed: %s fails only an absolute test (%s) and the network "
                   "outputs pass; --rmse-relative or --mre-floor judge such tensors by their "
                   "scale.",
                   row->target, crossed);
        else
            ADVICE(c,
                   "No fix is needed: the error at %s fades before the network outputs, which "
                   "pass. Compare again when the inputs change.",
                   row->target);
        return;
    }
    if (an->cause == SG_CAUSE_PRECISION) {
        ADVICE(c,
               "No operator is at fault: %s is off by no more than rounding its golden values to "
               "%s does (%s), so the error is the target's precision on these values.",
               row->target, sg_dtype_name(row->compute_dtype), crossed);
        if (absolute_only)
            ADVICE(c, "Only an absolute test fails, on values whose scale makes it strict: judge "
                      "them by their scale with --rmse-relative T (RMSE over the golden standard "
                      "deviation) or --mre-floor F (relative errors over at least F times the "
                      "largest |golden| value).");
        else
            ADVICE(c,
                   "If the outputs need more than %s gives, keep the nodes that compute them "
                   "in float32 (--keep-nodes, keep_dtype) or choose a precision mode that keeps "
                   "float32 (--precision allow_fp32_to_fp16 or must_keep_origin_dtype).",
                   sg_dtype_name(row->compute_dtype));
        return;
    }
    if (!an->overflow && absolute_only && !row->mismatch)
        ADVICE(c,
               "Only %s: if %s's values are large or cross zero, that test alone is strict; "
               "--rmse-relative T or --mre-floor F judge it by the tensor's scale.",
               crossed, row->target);
    if (an->overflow) {
        ADVICE(c,
               "%s produces NaN/Inf on the target side only (%" PRIu64 " of %" PRIu64
               " values) while the golden values are finite: an overflow of the target's "
               "precision (float16 ends at 65504).",
               row->target, row->m.overflow, row->m.n);
        if (row->fused)
            ADVICE(c, "It is a fused op, so the node that overflows first is hidden inside it; "
                      "see the fusion advice below.");
        else if (strcmp(row->op_type, "Exp") == 0)
            ADVICE(c,
                   "Clip the input of %s to at most ln(65504) = 11.09 (insert a Clip before it) "
                   "or keep it in float32 (keep_dtype), then convert and compare again.",
                   name);
        else
            ADVICE(c,
                   "Keep %s in float32 (keep_dtype) or clip its input or output to the float16 "
                   "range (insert a Clip), then convert and compare again.",
                   name);
    }
    if (row->fused && (an->cause == SG_CAUSE_FUSED || an->cause == SG_CAUSE_OVERFLOW)) {
        const struct sg_atc_op *op = row->op;
        const char *passes = NULL;
        if (op && (op->n_passes || op->ub_pass)) {
            const char *list[33];
            size_t n = 0;
            for (size_t i = 0; i < op->n_passes && n < 32; i++)
                list[n++] = op->passes[i];
            if (op->ub_pass && n < 33)
                list[n++] = op->ub_pass;
            passes = join_names(c, list, n, 33);
        }
        /* One covered node names the op for fusion-switch; --nodes splits
         * on commas, so pick one without. */
        const char *node = NULL;
        for (size_t i = 0; op && i <= op->n_orig && !node; i++) {
            const char *cand = i == 0 ? row->golden_node : op->orig[i - 1];
            if (cand && !strchr(cand, ','))
                node = cand;
        }
        const char *qmap = shell_quote(c, r->map_path ? r->map_path : "MAP.json");
        const char *qnode = node ? shell_quote(c, node) : "";
        const char *qmodel = r->model_label ? shell_quote(c, r->model_label) : "";
        if (!qmap || !qnode || !qmodel) {
            c->oom = true;
            return;
        }
        const char *cmd =
            node ? sg__cmp_printf(c->arena,
                                  "surgeon fusion-switch -o fusion_switch.cfg --from-map %s "
                                  "--nodes %s%s%s",
                                  qmap, qnode, r->model_label ? " --model " : "", qmodel)
                 : "surgeon fusion-switch --from-map MAP.json --nodes NODE";
        ADVICE(c,
               "%s fuses %zu ONNX nodes (%s)%s%s; their own results are hidden. Switch that "
               "fusion off with `%s`, recompile with --fusion_switch_file=fusion_switch.cfg, and "
               "compare again to see which inner node fails.",
               row->target, op ? op->n_orig : 0, row->golden, passes ? ", made by " : "",
               passes ? passes : "", cmd);
    }
    if (row->mismatch)
        ADVICE(c,
               "The target's %s has another shape than the golden one: check the compiled "
               "graph's shapes (--input_shape, dynamic dimensions) and how the device dump was "
               "converted to ND layout.",
               row->target);
    else if (an->cause == SG_CAUSE_JUMP)
        ADVICE(c,
               "Study %s alone: extract it as a one-node model fed with the golden inputs and run "
               "it on both sides; if it is precision-sensitive, keep it in float32 (keep_dtype).",
               name);
    if (an->cause == SG_CAUSE_ACCUMULATED)
        ADVICE(c,
               "No single operator jumps out: the inputs of %s already use %.1f%% of a threshold, "
               "so the error builds up gradually. Bisect: run the first half of the network on the "
               "target and the rest on the reference, compare the final outputs, and recurse into "
               "the half that breaks them.",
               row->target, 100 * an->input_severity);
    if (!intermediate_only && an->n_undumped)
        ADVICE(c,
               "Dump the %zu node(s) before %s that have no dump on both sides to narrow the "
               "search down.",
               an->n_undumped, row->target);
}

sg_status sg__compare_analyse(sg_compare_result *r, sg_graph *g, sg_node *const *order, uint32_t n,
                              const sg_dump_names *names, struct sg_diag *diag)
{
    struct ctx c = {.r = r,
                    .arena = r->arena,
                    .g = g,
                    .names = names,
                    .order = order,
                    .n = n,
                    .diag = diag,
                    .hunt = -1};
    struct sg_compare_analysis *an = &r->analysis;
    size_t unreadable = an->n_unreadable;
    memset(an, 0, sizeof *an);
    an->n_unreadable = unreadable;
    an->first_fail = -1;
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        switch (row->status) {
        case SG_ROW_COMPARED:
            an->n_compared++;
            an->n_errors += row->is_error;
            an->n_overflow += row->m.overflow > 0;
            break;
        case SG_ROW_GOLDEN_ONLY:
            an->n_golden_only++;
            break;
        case SG_ROW_TARGET_ONLY:
            an->n_target_only++;
            break;
        case SG_ROW_FUSED_AWAY:
            an->n_fused_away++;
            break;
        default:
            an->n_failed++;
            an->n_mismatch += row->mismatch;
            break;
        }
    }
    sg_status st = SG_OK;
    if (g) {
        if ((st = build_states(&c)) || (st = first_failure_model(&c)))
            goto out;
        for (size_t i = 0; i < r->n_rows && an->first_fail < 0; i++)
            if ((r->rows[i].status == SG_ROW_COMPARED && r->rows[i].is_error) ||
                r->rows[i].mismatch) {
                an->first_fail = (ptrdiff_t)i;
                NOTE(&c, "no failing operator has all its inputs agreeing; showing the first row "
                         "in error");
            }
    } else {
        /* Dump order: an overflow first, then a jump, then a rounding. */
        for (enum hunt h = HUNT_OVERFLOW; h <= HUNT_ROUNDING && an->first_fail < 0; h++)
            for (size_t i = 0; i < r->n_rows && an->first_fail < 0; i++)
                if (is_candidate(&r->rows[i], h)) {
                    an->first_fail = (ptrdiff_t)i;
                    c.hunt = h;
                }
    }
    verdict(&c);
    explain(&c);
    if (r->map && !g)
        NOTE(&c, "no model given: a fused op is compared with the last node its map entry "
                 "lists, which need not be the last in topological order");
    if (an->n_unreadable)
        NOTE(&c, "%zu dump file(s) could not be read; the first: %s", an->n_unreadable,
             r->first_unreadable.msg);
    an->advice = c.advice;
    an->n_advice = c.n_advice;
    an->notes = c.notes;
    an->n_notes = c.n_notes;
    if (c.oom || !an->summary)
        st = SG_ENOMEM;
out:
    if (st)
        sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return st;
}
