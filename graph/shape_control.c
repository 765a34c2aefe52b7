/*
 * shape_control.c - shape rules of If, Loop and Scan: their bodies are
 * inferred in place (every value of a body gets its shape), and the node
 * outputs take the body outputs' shapes. If branches that disagree give
 * the dims they share; a Loop- or Scan-carried value whose shape changes
 * from one iteration to the next loses the dims that change (the body is
 * inferred again with them unknown, a few rounds at most); the iteration
 * count of Loop scan outputs is a fresh symbol.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

static sg_graph *graph_attr(const sg_node *n, const char *name)
{
    const sg_attr *a = sg_node_attr(n, name);
    return a && a->type == SG_ATTR_GRAPH ? a->g : NULL;
}

/* *dst becomes what a and b share: dims that differ are unknown, ranks
 * that differ make the rank unknown. */
static void join(struct sh *dst, const struct sh *a, const struct sh *b)
{
    if (!a || !b || a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        dst->rank = -1;
        return;
    }
    for (int i = 0; i < a->rank; i++)
        dst->d[i] = a->d[i] == b->d[i] ? a->d[i] : SH_UNK;
}

static sg_status copy_rec(struct sh_ctx *c, struct sh *dst, const struct sh *src)
{
    dst->done = true;
    dst->nval = -1;
    dst->kind = src ? src->kind : SH_TENSOR;
    dst->rank = src ? src->rank : -1;
    if (src && src->dtype)
        dst->dtype = src->dtype;
    dst->d = NULL;
    if (dst->rank > 0) {
        dst->d = sg_arena_memdup(c->a, src->d, (size_t)dst->rank * sizeof *dst->d);
        if (!dst->d)
            return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    }
    return SG_OK;
}

sg_status sh_if(struct sh_ctx *c, sg_node *n)
{
    sg_graph *t = graph_attr(n, "then_branch"), *e = graph_attr(n, "else_branch");
    if (!t || !e)
        return sh_fail(c, n, "missing then_branch or else_branch");
    sg_status st = sh_infer_graph(c, t);
    if (!st)
        st = sh_infer_graph(c, e);
    if (st)
        return st;
    if (t->n_outputs != n->n_outputs || e->n_outputs != n->n_outputs)
        return sh_fail(c, n, "branches have %u and %u outputs for %u node outputs", t->n_outputs,
                       e->n_outputs, n->n_outputs);
    const int64_t *cv;
    int32_t ck;
    int pick = -1; /* a constant condition takes one branch */
    if (sh_in_ints(c, n, 0, &cv, &ck) && ck == 1)
        pick = cv[0] != 0;
    for (uint32_t i = 0; i < n->n_outputs && !st; i++) {
        struct sh *a = sh_rec(c, t->outputs[i]), *b = sh_rec(c, e->outputs[i]);
        sh_set_dtype(c, n, i, a && a->dtype ? a->dtype : b ? b->dtype : 0);
        struct sh *one = pick == 1 ? a : pick == 0 ? b : NULL;
        if (one) {
            st = sh_set_kind(c, n, i, (enum sh_kind)one->kind, one->rank, one->d);
            sh_set_dtype(c, n, i, one->dtype);
            continue;
        }
        if (a && b && (a->kind != SH_TENSOR || b->kind != SH_TENSOR)) {
            bool seqs = a->kind == SH_SEQ && b->kind == SH_SEQ;
            st = sh_set_kind(c, n, i, seqs ? SH_SEQ : SH_OPAQUE, -1, NULL);
            if (!seqs || a->rank < 0 || a->rank != b->rank)
                continue;
        }
        if (!a || !b || a->rank < 0 || b->rank < 0 || a->rank != b->rank)
            continue;
        int64_t d[SG_MAX_RANK];
        struct sh j = {.rank = a->rank, .d = d};
        join(&j, a, b);
        st = sh_set_kind(c, n, i, (enum sh_kind)a->kind, j.rank, d);
    }
    return st;
}

/* Whether the carried input's record bi already covers what the body
 * makes of it (bo): then another round would change nothing. */
static bool covers(const struct sh *bi, const struct sh *bo)
{
    if (bi->kind == SH_OPAQUE)
        return true;
    if (!bo || bo->kind != bi->kind)
        return false;
    if (bi->rank == -1)
        return true;
    if (bi->rank != bo->rank)
        return false;
    for (int i = 0; i < bi->rank; i++)
        if (bi->d[i] != SH_UNK && bi->d[i] != bo->d[i])
            return false;
    return true;
}

/* bi made to cover bo: the dims that differ unknown, or (`top`, or when
 * the kinds or ranks differ) no shape at all. */
static sg_status widen(struct sh_ctx *c, struct sh *bi, const struct sh *bo, bool top)
{
    if (bo && bi->kind == SH_SEQ && bo->kind == SH_SEQ && bi->rank == -2 && !top)
        return copy_rec(c, bi, bo); /* an empty sequence gets the elements inserted */
    if (!bo || bo->kind != bi->kind) {
        bi->kind = SH_OPAQUE;
        bi->rank = -1;
        return SG_OK;
    }
    int64_t d[SG_MAX_RANK];
    struct sh j = {.rank = bi->rank, .d = d};
    join(&j, bi, bo);
    struct sh keep = *bi;
    keep.rank = top ? -1 : j.rank;
    keep.d = d;
    return copy_rec(c, bi, &keep);
}

/*
 * Infer `body` with its carried inputs (in_first.., n_carried of them)
 * seeded from `init` (the node inputs' records), widening them until they
 * cover what the body makes of them (body outputs out_first..): the body's
 * shapes then hold for every iteration. Two rounds join dims, the third
 * drops what still changes, so a body is inferred at most four times; past
 * the context's work budget (nested loops) the carried values start with
 * no shape and the body is inferred once.
 */
static sg_status fixpoint(struct sh_ctx *c, sg_graph *body, uint32_t in_first, uint32_t out_first,
                          uint32_t n_carried, struct sh *const *init)
{
    bool tight = c->work > c->budget;
    for (uint32_t k = 0; k < n_carried; k++) {
        struct sh *bi = sh_rec(c, body->inputs[in_first + k]);
        sg_status st = SG_OK;
        if (bi && init[k] && (init[k]->rank >= 0 || init[k]->kind != SH_TENSOR))
            st = copy_rec(c, bi, init[k]);
        if (bi && tight)
            bi->rank = -1;
        if (st)
            return st;
    }
    for (int round = 0;; round++) {
        sg_status st = sh_infer_graph(c, body);
        if (st || tight)
            return st;
        bool stable = true;
        for (uint32_t k = 0; k < n_carried && !st; k++) {
            struct sh *bi = sh_rec(c, body->inputs[in_first + k]);
            struct sh *bo = sh_rec(c, body->outputs[out_first + k]);
            if (!bi || covers(bi, bo))
                continue;
            stable = false;
            st = widen(c, bi, bo, round >= 2);
        }
        if (st || stable)
            return st;
    }
}

sg_status sh_loop(struct sh_ctx *c, sg_node *n)
{
    sg_graph *body = graph_attr(n, "body");
    if (!body)
        return sh_fail(c, n, "no body");
    if (body->n_inputs < 2 || body->n_inputs - 2 + 2 != n->n_inputs || body->n_outputs < 1 ||
        body->n_outputs - 1 < body->n_inputs - 2 || body->n_outputs - 1 != n->n_outputs)
        return sh_fail(c, n, "body of %u inputs and %u outputs for a node of %u and %u",
                       body->n_inputs, body->n_outputs, n->n_inputs, n->n_outputs);
    uint32_t carried = body->n_inputs - 2;
    struct sh *it = sh_rec(c, body->inputs[0]), *cond = sh_rec(c, body->inputs[1]);
    if (it) {
        it->done = true;
        it->rank = 0;
        it->dtype = SG_DTYPE_INT64;
    }
    if (cond) {
        cond->done = true;
        cond->rank = 0;
        cond->dtype = SG_DTYPE_BOOL;
    }
    struct sh *init[256] = {0};
    if (carried > 256)
        return SG_OK;
    for (uint32_t k = 0; k < carried; k++)
        init[k] = sh_in(c, n, 2 + k);
    sg_status st = fixpoint(c, body, 2, 1, carried, init);
    for (uint32_t k = 0; k < carried && !st; k++) {
        struct sh *bi = sh_rec(c, body->inputs[2 + k]);
        if (bi && (bi->rank >= 0 || bi->kind != SH_TENSOR))
            st = sh_set_kind(c, n, k, (enum sh_kind)bi->kind, bi->rank, bi->d);
        if (bi)
            sh_set_dtype(c, n, k, bi->dtype);
    }
    int64_t trips = SH_UNK;
    for (uint32_t k = carried; k < n->n_outputs && !st; k++) {
        struct sh *bo = sh_rec(c, body->outputs[1 + k]);
        if (bo)
            sh_set_dtype(c, n, k, bo->dtype);
        if (!bo || bo->kind != SH_TENSOR || bo->rank < 0 || bo->rank >= SG_MAX_RANK)
            continue;
        if (trips == SH_UNK)
            trips = sh_fresh(c);
        int64_t d[SG_MAX_RANK];
        d[0] = trips;
        for (int i = 0; i < bo->rank; i++)
            d[1 + i] = bo->d[i];
        st = sh_set_out(c, n, k, bo->rank + 1, d);
    }
    return st;
}

/* Scan before opset 9: input 0 is sequence_lens, every other input and
 * output has a batch axis first, scan inputs and outputs then the
 * sequence axis. */
static sg_status scan8(struct sh_ctx *c, sg_node *n, sg_graph *body)
{
    int64_t m = sg_attr_int(n, "num_scan_inputs", -1);
    if (m < 1 || (uint64_t)m + 1 > n->n_inputs || body->n_inputs != n->n_inputs - 1 ||
        body->n_outputs != n->n_outputs || n->n_inputs - 1 - m > n->n_outputs)
        return sh_fail(c, n,
                       "num_scan_inputs %lld does not fit %u inputs, body of %u inputs and "
                       "%u outputs",
                       (long long)m, n->n_inputs, body->n_inputs, body->n_outputs);
    uint32_t states = n->n_inputs - 1 - (uint32_t)m;
    if (states > 256)
        return SG_OK;
    int64_t batch = SH_UNK, seq = SH_UNK;
    struct sh tmp[256], *init[256] = {0};
    int64_t *dims = sg_arena_alloc(c->a, (size_t)(states + 1) * SG_MAX_RANK * sizeof *dims);
    if (!dims)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    for (uint32_t k = 0; k < n->n_inputs - 1; k++) {
        struct sh *x = sh_in_ranked(c, n, 1 + k);
        bool scan = k >= states;
        if (!x)
            continue;
        if (x->rank < (scan ? 2 : 1))
            return sh_fail(c, n, "input %u of rank %d has no batch%s axis", 1 + k, x->rank,
                           scan ? " and sequence" : "");
        if (!sh_unify(batch, x->d[0], &batch) || (scan && !sh_unify(seq, x->d[1], &seq)))
            return sh_fail(c, n, "inputs of different batches or sequence lengths");
        int drop = scan ? 2 : 1;
        struct sh e = {.rank = x->rank - drop, .dtype = x->dtype, .nval = -1};
        if (scan) {
            e.d = x->d + drop;
            struct sh *bi = sh_rec(c, body->inputs[k]);
            sg_status st = bi ? copy_rec(c, bi, &e) : SG_OK;
            if (st)
                return st;
        } else {
            e.d = dims + (size_t)k * SG_MAX_RANK;
            sh_dims_copy(e.d, x->d + 1, e.rank);
            tmp[k] = e;
            init[k] = &tmp[k];
        }
    }
    sg_status st = fixpoint(c, body, 0, 0, states, init);
    for (uint32_t k = 0; k < n->n_outputs && !st; k++) {
        struct sh *b = k < states ? sh_rec(c, body->inputs[k]) : sh_rec(c, body->outputs[k]);
        if (!b || b->kind != SH_TENSOR || b->rank < 0 || b->rank + 2 > SG_MAX_RANK)
            continue;
        int lead = k < states ? 1 : 2;
        int64_t d[SG_MAX_RANK];
        d[0] = batch;
        d[1] = seq;
        for (int i = 0; i < b->rank; i++)
            d[lead + i] = b->d[i];
        st = sh_set_out(c, n, k, b->rank + lead, d);
        sh_set_dtype(c, n, k, b->dtype);
    }
    return st;
}

sg_status sh_scan(struct sh_ctx *c, sg_node *n)
{
    sg_graph *body = graph_attr(n, "body");
    if (!body)
        return sh_fail(c, n, "no body");
    if (c->opset < 9)
        return scan8(c, n, body);
    int64_t m = sg_attr_int(n, "num_scan_inputs", -1);
    if (m < 1 || (uint64_t)m > n->n_inputs || body->n_inputs != n->n_inputs ||
        body->n_outputs != n->n_outputs || n->n_inputs - m > n->n_outputs)
        return sh_fail(c, n,
                       "num_scan_inputs %lld does not fit %u inputs, body of %u inputs and "
                       "%u outputs",
                       (long long)m, n->n_inputs, body->n_inputs, body->n_outputs);
    uint32_t states = n->n_inputs - (uint32_t)m;
    size_t nia, noa;
    const int64_t *in_axes = sh_attr_ints(n, "scan_input_axes", &nia);
    const int64_t *out_axes = sh_attr_ints(n, "scan_output_axes", &noa);
    int64_t seq = SH_UNK;
    for (uint32_t k = 0; k < (uint32_t)m; k++) {
        struct sh *x = sh_in_ranked(c, n, states + k);
        struct sh *bi = sh_rec(c, body->inputs[states + k]);
        if (!x || !bi)
            continue;
        int64_t a;
        if (!sh_axis(in_axes && k < nia ? in_axes[k] : 0, x->rank, &a))
            return sh_fail(c, n, "scan input axis out of range for rank %d", x->rank);
        if (!sh_unify(seq, x->d[a], &seq))
            return sh_fail(c, n, "scan inputs of different lengths");
        int64_t d[SG_MAX_RANK];
        for (int i = 0, j = 0; i < x->rank; i++)
            if (i != a)
                d[j++] = x->d[i];
        struct sh tmp = {.rank = x->rank - 1, .d = d, .dtype = x->dtype};
        sg_status st = copy_rec(c, bi, &tmp);
        if (st)
            return st;
    }
    struct sh *init[256] = {0};
    if (states > 256)
        return SG_OK;
    for (uint32_t k = 0; k < states; k++)
        init[k] = sh_in(c, n, k);
    sg_status st = fixpoint(c, body, 0, 0, states, init);
    for (uint32_t k = 0; k < states && !st; k++) {
        struct sh *bi = sh_rec(c, body->inputs[k]);
        if (bi && (bi->rank >= 0 || bi->kind != SH_TENSOR))
            st = sh_set_kind(c, n, k, (enum sh_kind)bi->kind, bi->rank, bi->d);
    }
    for (uint32_t k = states; k < n->n_outputs && !st; k++) {
        struct sh *bo = sh_rec(c, body->outputs[k]);
        if (!bo || bo->rank < 0 || bo->rank >= SG_MAX_RANK)
            continue;
        int64_t a;
        uint32_t j = k - states;
        if (!sh_axis(out_axes && j < noa ? out_axes[j] : 0, bo->rank + 1, &a))
            return sh_fail(c, n, "scan output axis out of range for rank %d", bo->rank + 1);
        int64_t d[SG_MAX_RANK];
        for (int i = 0, q = 0; i <= bo->rank; i++)
            d[i] = i == a ? seq : bo->d[q++];
        st = sh_set_out(c, n, k, bo->rank + 1, d);
    }
    return st;
}
