/*
 * controlflow.c - If, Loop and Scan: they run their subgraphs through
 * sg_ksubgraph_run, which finds the values a body reads from enclosing
 * graphs (captures) itself. Loop-carried values may be tensors, sequences
 * or optionals; scan outputs are stacked along a new axis.
 */
#include "rt_impl.h"
#include "sg_alloc.h"

#include <string.h>

static sg_status run_if(struct sg_kctx *k)
{
    const sg_rt_value *C = sg_kin(k, 0);
    if (!C || C->kind != SG_RT_TENSOR || C->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "cond must hold one element, got %s", sg_kshape(k, C));
    bool cond = sg_rt_get_f64(C, 0) != 0;
    const sg_graph *g = sg_kattr_graph(k, cond ? "then_branch" : "else_branch");
    if (!g)
        return sg_kfail(k, SG_EINVAL, "branch graph is missing");
    if (g->n_outputs != k->n_out)
        return sg_kfail(k, SG_EARITY, "branch has %u outputs, the node %u", g->n_outputs, k->n_out);
    sg_rt_value **outs = sg_kscratch(k, (g->n_outputs + 1) * sizeof *outs);
    if (!outs)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    /* A branch takes no inputs: one that declares some fails in
     * sg_ksubgraph_run, which still sets every entry of outs. */
    sg_status st = sg_ksubgraph_run(k, g, 0, NULL, outs);
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        if (!st)
            st = sg_kout_value(k, i, outs[i]);
        sg_rt_value_unref(outs[i]);
    }
    return st;
}

static sg_status new_tensor(struct sg_kctx *k, int32_t dt, const int64_t *dims, uint32_t r,
                            sg_rt_value **out)
{
    struct sg_diag d = {0};
    sg_status st = sg_rt_tensor_create(dt, dims, r, out, &d);
    return st ? sg_kfail(k, st, "%s", d.msg) : SG_OK;
}

/*
 * A scan output (or Scan-8's per-batch results) as it grows: the items of
 * every iteration so far back to back in one block that doubles, held to
 * max_tensor_bytes at every push. One allocation rather than a value per
 * iteration keeps a long loop's memory at what its output holds. String
 * items are kept too: their storage holds the bytes the entries point at.
 */
struct scan_acc {
    int32_t dtype;
    uint32_t rank;
    int64_t dims[SG_MAX_RANK]; /* of one item */
    size_t item_bytes;
    int64_t n; /* items so far */
    char *buf;
    size_t cap;
    sg_rt_value **keep; /* string items */
};

static void acc_free(struct scan_acc *a)
{
    for (int64_t i = 0; a->keep && i < a->n; i++)
        sg_rt_value_unref(a->keep[i]);
    sg_free(a->keep);
    sg_free(a->buf);
}

/* Append v (the caller's reference is taken over) as item `it` of scan
 * output oi. */
static sg_status acc_push(struct sg_kctx *k, struct scan_acc *a, uint32_t oi, sg_rt_value *v,
                          int64_t it)
{
    sg_status st = SG_OK;
    char got[256], want[256];
    if (!v || v->kind != SG_RT_TENSOR) {
        st = sg_kfail(k, SG_ETYPE, "scan output %u is %s at iteration %lld, a tensor is needed", oi,
                      v ? sg_rt_value_format(v, got, sizeof got) : "missing", (long long)it);
        goto out;
    }
    if (a->n == 0) {
        a->dtype = v->dtype;
        a->rank = v->rank;
        memcpy(a->dims, v->dims, v->rank * sizeof v->dims[0]);
        a->item_bytes = (size_t)v->numel * sg_rt_elem_size(v->dtype);
    } else if (v->dtype != a->dtype || v->rank != a->rank ||
               memcmp(v->dims, a->dims, a->rank * sizeof a->dims[0])) {
        sg_rt_dims_format(a->dims, a->rank, want, sizeof want);
        st = sg_kfail(k, SG_ESHAPE, "scan output %u changes from %s%s to %s at iteration %lld", oi,
                      sg_dtype_name(a->dtype), want, sg_rt_value_format(v, got, sizeof got),
                      (long long)it);
        goto out;
    }
    size_t need, limit = k->priv ? k->priv->max_tensor_bytes : 0;
    if (__builtin_mul_overflow((size_t)(a->n + 1), a->item_bytes, &need) ||
        (limit && need > limit)) {
        st = sg_kfail(k, SG_ETOOBIG,
                      "scan output %u of %lld items of %s grows over the limit of %zu bytes at "
                      "iteration %lld",
                      oi, (long long)(a->n + 1), sg_rt_value_format(v, got, sizeof got), limit,
                      (long long)it);
        goto out;
    }
    if (need > a->cap) {
        size_t cap = a->cap ? a->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *grown = sg_realloc(a->buf, cap);
        if (!grown) {
            st = sg_kfail(k, SG_ENOMEM, "out of memory for scan output %u (%zu bytes)", oi, cap);
            goto out;
        }
        a->buf = grown;
        a->cap = cap;
    }
    if (a->dtype == SG_DTYPE_STRING) {
        sg_rt_value **keep = sg_realloc(a->keep, (size_t)(a->n + 1) * sizeof *keep);
        if (!keep) {
            st = sg_kfail(k, SG_ENOMEM, "out of memory");
            goto out;
        }
        a->keep = keep;
        keep[a->n] = v;
        v = NULL;
    }
    if (a->item_bytes)
        memcpy(a->buf + (size_t)a->n * a->item_bytes, v ? v->data : a->keep[a->n]->data,
               a->item_bytes);
    a->n++;
out:
    sg_rt_value_unref(v);
    return st;
}

/* The items of a stacked along a new axis `axis` (reversed when `reverse`)
 * into a new value; oi names the output in messages; when no item came,
 * an empty tensor of body output body_out's declared type. */
static sg_status acc_value(struct sg_kctx *k, const struct scan_acc *a, uint32_t oi, int64_t axis,
                           bool reverse, const sg_graph *body, uint32_t body_out, sg_rt_value **res)
{
    *res = NULL;
    if (a->n == 0) {
        const sg_type *t = body_out < body->n_outputs ? body->outputs[body_out]->type : NULL;
        int32_t dt =
            t && t->kind == SG_TYPE_TENSOR && t->has_elem_type ? t->elem_type : SG_DTYPE_FLOAT;
        int64_t dims[SG_MAX_RANK] = {0};
        uint32_t r = 1;
        if (t && t->shape && t->shape->rank + 1 <= SG_MAX_RANK) {
            r = t->shape->rank + 1;
            for (uint32_t d = 1; d < r; d++) {
                const sg_dim *sd = &t->shape->dims[d - 1];
                dims[d] = sd->kind == SG_DIM_VALUE && sd->value >= 0 ? sd->value : 0;
            }
        }
        return new_tensor(k, dt, dims, r, res);
    }
    uint32_t r = a->rank + 1;
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r || r > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "scan output %u: axis %lld is out of range for rank %u", oi,
                        (long long)axis, r);
    /* The block is [T, item...]; the output puts T at `axis`. */
    int64_t T = a->n, dims[SG_MAX_RANK], bdims[SG_MAX_RANK], bstr[SG_MAX_RANK], str[SG_MAX_RANK];
    bdims[0] = T;
    memcpy(bdims + 1, a->dims, a->rank * sizeof a->dims[0]);
    sg_rt_strides(bdims, r, bstr);
    int64_t off = reverse ? (T - 1) * bstr[0] : 0;
    for (uint32_t d = 0, s = 1; d < r; d++) {
        uint32_t from = d == axis ? 0 : s++;
        dims[d] = bdims[from];
        str[d] = from == 0 && reverse ? -bstr[0] : bstr[from];
    }
    sg_rt_value *Y;
    sg_status st = new_tensor(k, a->dtype, dims, r, &Y);
    if (st)
        return st;
    sg_rt_copy_strided(Y->data, a->buf, sg_rt_elem_size(a->dtype), r, dims, str, off);
    if (a->dtype == SG_DTYPE_STRING) {
        Y->storage->interned = false;
        if (sg__rt_intern_strings(Y)) {
            sg_rt_value_unref(Y);
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        }
    }
    *res = Y;
    return SG_OK;
}

/* acc_value as output oi. */
static sg_status acc_output(struct sg_kctx *k, const struct scan_acc *a, uint32_t oi, int64_t axis,
                            bool reverse, const sg_graph *body, uint32_t body_out)
{
    sg_rt_value *v;
    sg_status st = acc_value(k, a, oi, axis, reverse, body, body_out, &v);
    if (!st)
        st = sg_kout_value(k, oi, v);
    sg_rt_value_unref(v);
    return st;
}

static sg_status scalar(struct sg_kctx *k, int32_t dt, int64_t v, sg_rt_value **out)
{
    sg_status st = new_tensor(k, dt, NULL, 0, out);
    if (st)
        return st;
    sg_rt_set_i64(*out, 0, v);
    return SG_OK;
}

/* After iteration `it`: the carried values within max_tensor_bytes (a
 * sequence appended to every iteration grows without any node making a
 * large tensor). */
static sg_status check_carried(struct sg_kctx *k, sg_rt_value *const *v, uint32_t n, int64_t it)
{
    size_t limit = k->priv ? k->priv->max_tensor_bytes : 0;
    for (uint32_t i = 0; limit && i < n; i++) {
        size_t bytes = sg__rt_value_bytes(v[i]);
        if (bytes > limit) {
            char what[256];
            return sg_kfail(k, SG_ETOOBIG,
                            "loop-carried value %u (%s, %zu bytes) is over the limit of %zu bytes "
                            "after iteration %lld",
                            i, sg_rt_value_format(v[i], what, sizeof what), bytes, limit,
                            (long long)it);
        }
    }
    return SG_OK;
}

static sg_status run_loop(struct sg_kctx *k)
{
    const sg_graph *body = sg_kattr_graph(k, "body");
    if (!body)
        return sg_kfail(k, SG_EINVAL, "body graph is missing");
    const sg_rt_value *M = sg_kin(k, 0), *C = sg_kin(k, 1);
    uint32_t n_carried = k->n_in >= 2 ? k->n_in - 2 : 0;
    if (body->n_inputs != n_carried + 2 || body->n_outputs < n_carried + 1)
        return sg_kfail(k, SG_EARITY,
                        "body takes %u inputs and gives %u outputs for %u carried "
                        "values",
                        body->n_inputs, body->n_outputs, n_carried);
    uint32_t n_scan = body->n_outputs - 1 - n_carried;
    if (k->n_out != n_carried + n_scan)
        return sg_kfail(k, SG_EARITY, "node has %u outputs, body makes %u", k->n_out,
                        n_carried + n_scan);
    int64_t max_trip = INT64_MAX;
    bool cond = true;
    if (M) {
        if (M->kind != SG_RT_TENSOR || M->numel != 1)
            return sg_kfail(k, SG_ESHAPE, "M must hold one value, got %s", sg_kshape(k, M));
        max_trip = sg_rt_get_i64(M, 0);
    }
    if (C) {
        if (C->kind != SG_RT_TENSOR || C->numel != 1)
            return sg_kfail(k, SG_ESHAPE, "cond must hold one value, got %s", sg_kshape(k, C));
        cond = sg_rt_get_f64(C, 0) != 0;
    }
    uint64_t limit = k->priv ? k->priv->max_loop_iterations : SG_RT_MAX_LOOP_ITERATIONS;
    sg_status st = SG_OK;
    uint32_t nb_in = body->n_inputs, nb_out = body->n_outputs;
    sg_rt_value **in = sg_calloc(nb_in + 1, sizeof *in);
    sg_rt_value **out = sg_calloc(nb_out + 1, sizeof *out);
    struct scan_acc *scans = sg_calloc(n_scan + 1, sizeof *scans);
    if (!in || !out || !scans) {
        st = sg_kfail(k, SG_ENOMEM, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < n_carried; i++)
        in[2 + i] = sg_rt_value_ref(k->in[2 + i]);
    int64_t it = 0;
    for (; it < max_trip && cond; it++) {
        if ((uint64_t)it >= limit) {
            st = sg_kfail(k, SG_ERANGE,
                          "stopped at the limit of %llu iterations (trip count %lld%s): raise "
                          "max_loop_iterations for a longer loop",
                          (unsigned long long)limit, (long long)max_trip, M ? "" : ", none given");
            goto done;
        }
        if ((st = scalar(k, SG_DTYPE_INT64, it, &in[0])) ||
            (st = scalar(k, SG_DTYPE_BOOL, cond, &in[1])))
            goto done;
        st = sg_ksubgraph_run(k, body, nb_in, in, out);
        sg_rt_value_unref(in[0]);
        sg_rt_value_unref(in[1]);
        in[0] = in[1] = NULL;
        if (st)
            goto done;
        const sg_rt_value *c = out[0];
        if (!c || c->kind != SG_RT_TENSOR || c->numel != 1) {
            st = sg_kfail(k, SG_ESHAPE, "body's cond output must hold one value");
            goto done;
        }
        cond = sg_rt_get_f64(c, 0) != 0;
        for (uint32_t i = 0; i < n_carried; i++) {
            sg_rt_value_unref(in[2 + i]);
            in[2 + i] = out[1 + i];
            out[1 + i] = NULL;
        }
        if ((st = check_carried(k, in + 2, n_carried, it)))
            goto done;
        for (uint32_t j = 0; j < n_scan; j++) {
            sg_rt_value *v = out[1 + n_carried + j];
            out[1 + n_carried + j] = NULL;
            if ((st = acc_push(k, &scans[j], n_carried + j, v, it)))
                goto done;
        }
        for (uint32_t i = 0; i < nb_out; i++) {
            sg_rt_value_unref(out[i]);
            out[i] = NULL;
        }
    }
    for (uint32_t i = 0; i < n_carried && !st; i++)
        st = sg_kout_value(k, i, in[2 + i]);
    for (uint32_t j = 0; j < n_scan && !st; j++)
        st = acc_output(k, &scans[j], n_carried + j, 0, false, body, 1 + n_carried + j);
done:
    for (uint32_t i = 0; in && i < nb_in; i++)
        sg_rt_value_unref(in[i]);
    for (uint32_t i = 0; out && i < nb_out; i++)
        sg_rt_value_unref(out[i]);
    for (uint32_t j = 0; scans && j < n_scan; j++)
        acc_free(&scans[j]);
    sg_free(in);
    sg_free(out);
    sg_free(scans);
    return st;
}

/* Slice t along `axis` of X (a copy with that axis removed). */
static sg_status slice_at(struct sg_kctx *k, const sg_rt_value *X, uint32_t axis, int64_t t,
                          sg_rt_value **out)
{
    int64_t dims[SG_MAX_RANK] = {0}, outer = 1, inner = 1, n = X->dims[axis];
    uint32_t r = 0;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            outer *= X->dims[d];
        if (d > axis)
            inner *= X->dims[d];
        if (d != axis)
            dims[r++] = X->dims[d];
    }
    struct sg_diag dg = {0};
    sg_status st = sg_rt_tensor_create(X->dtype, dims, r, out, &dg);
    if (st)
        return sg_kfail(k, st, "%s", dg.msg);
    size_t row = (size_t)inner * sg_rt_elem_size(X->dtype);
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)(*out)->data + o * row, (const char *)X->data + (size_t)(o * n + t) * row,
               row);
    if (X->dtype == SG_DTYPE_STRING)
        (*out)->storage->interned = false, st = sg__rt_intern_strings(*out);
    return st ? sg_kfail(k, st, "out of memory") : SG_OK;
}

/* One Scan (opset 9 form) over states in[0..n_state) and scan inputs. */
static sg_status scan_once(struct sg_kctx *k, const sg_graph *body, uint32_t n_state,
                           const sg_rt_value *const *state0, uint32_t n_sin,
                           const sg_rt_value *const *sin, sg_rt_value **final_state,
                           struct scan_acc *scans, uint32_t n_sout)
{
    const int64_t *in_axes = NULL, *in_dirs = NULL;
    int64_t nia = sg_kattr_ints(k, "scan_input_axes", &in_axes);
    int64_t nid = sg_kattr_ints(k, "scan_input_directions", &in_dirs);
    if (k->opset < 9) { /* opset 8: axis 0 of each batch slice, "directions" */
        nia = -1;
        nid = sg_kattr_ints(k, "directions", &in_dirs);
    }
    int64_t T = -1;
    uint32_t axes[SG_MAX_RANK];
    for (uint32_t j = 0; j < n_sin; j++) {
        int64_t a = nia > (int64_t)j ? in_axes[j] : 0;
        sg_status st = sg_kaxis(k, a, sin[j]->rank, &axes[j % SG_MAX_RANK]);
        if (st)
            return st;
        int64_t len = sin[j]->dims[axes[j % SG_MAX_RANK]];
        if (T >= 0 && len != T)
            return sg_kfail(k, SG_ESHAPE, "scan inputs differ in length: %lld and %lld",
                            (long long)T, (long long)len);
        T = len;
    }
    if (n_sin > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "too many scan inputs");
    if (T < 0)
        T = 0;
    uint32_t nb_in = body->n_inputs, nb_out = body->n_outputs;
    sg_rt_value **in = sg_calloc(nb_in + 1, sizeof *in);
    sg_rt_value **out = sg_calloc(nb_out + 1, sizeof *out);
    sg_status st = SG_OK;
    if (!in || !out) {
        st = sg_kfail(k, SG_ENOMEM, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < n_state; i++)
        in[i] = sg_rt_value_ref((sg_rt_value *)state0[i]);
    for (int64_t t = 0; t < T; t++) {
        for (uint32_t j = 0; j < n_sin; j++) {
            bool rev = nid > (int64_t)j && in_dirs[j];
            if ((st = slice_at(k, sin[j], axes[j], rev ? T - 1 - t : t, &in[n_state + j])))
                goto done;
        }
        st = sg_ksubgraph_run(k, body, nb_in, in, out);
        for (uint32_t j = 0; j < n_sin; j++) {
            sg_rt_value_unref(in[n_state + j]);
            in[n_state + j] = NULL;
        }
        if (st)
            goto done;
        for (uint32_t i = 0; i < n_state; i++) {
            sg_rt_value_unref(in[i]);
            in[i] = out[i];
            out[i] = NULL;
        }
        for (uint32_t j = 0; j < n_sout; j++) {
            sg_rt_value *v = out[n_state + j];
            out[n_state + j] = NULL;
            if ((st = acc_push(k, &scans[j], n_state + j, v, t)))
                goto done;
        }
    }
    for (uint32_t i = 0; i < n_state; i++) {
        final_state[i] = in[i];
        in[i] = NULL;
    }
done:
    for (uint32_t i = 0; in && i < nb_in; i++)
        sg_rt_value_unref(in[i]);
    for (uint32_t i = 0; out && i < nb_out; i++)
        sg_rt_value_unref(out[i]);
    sg_free(in);
    sg_free(out);
    return st;
}

static sg_status run_scan(struct sg_kctx *k)
{
    const sg_graph *body = sg_kattr_graph(k, "body");
    int64_t n_sin = sg_kattr_int(k, "num_scan_inputs", -1);
    if (!body || n_sin < 0)
        return sg_kfail(k, SG_EINVAL, "body or num_scan_inputs is missing");
    bool v8 = k->opset < 9;
    uint32_t first = v8 ? 1 : 0; /* opset 8: input 0 is sequence_lens */
    if (n_sin > k->n_in || k->n_in < first + (uint32_t)n_sin)
        return sg_kfail(k, SG_EARITY, "%u inputs for %lld scan inputs", k->n_in, (long long)n_sin);
    uint32_t n_state = k->n_in - first - (uint32_t)n_sin;
    if (body->n_outputs < n_state)
        return sg_kfail(k, SG_EARITY, "body gives fewer outputs than states");
    uint32_t n_sout = body->n_outputs - n_state;
    if (v8 && sg_kin(k, 0))
        return sg_kfail(k, SG_EUNSUPPORTED, "sequence_lens is not supported");
    const int64_t *out_axes = NULL, *out_dirs = NULL;
    int64_t noa = sg_kattr_ints(k, "scan_output_axes", &out_axes);
    int64_t nod = sg_kattr_ints(k, "scan_output_directions", &out_dirs);
    if (v8)
        noa = nod = -1;
    struct scan_acc *scans = sg_calloc(n_sout + 1, sizeof *scans);
    sg_rt_value **fin = sg_calloc(n_state + 1, sizeof *fin);
    /* Opset 8: per batch, the final states and the scan outputs. */
    struct scan_acc *bstate = NULL, *bscan = NULL;
    sg_rt_value **slices = NULL;
    sg_status st = SG_OK;
    if (!scans || !fin) {
        st = sg_kfail(k, SG_ENOMEM, "out of memory");
        goto done;
    }
    if (!v8) {
        st = scan_once(k, body, n_state, (const sg_rt_value *const *)k->in, (uint32_t)n_sin,
                       (const sg_rt_value *const *)k->in + n_state, fin, scans, n_sout);
        for (uint32_t i = 0; i < n_state && !st; i++)
            st = sg_kout_value(k, i, fin[i]);
        for (uint32_t j = 0; j < n_sout && !st; j++) {
            int64_t a = noa > (int64_t)j ? out_axes[j] : 0;
            bool rev = nod > (int64_t)j && out_dirs[j];
            st = acc_output(k, &scans[j], n_state + j, a, rev, body, n_state + j);
        }
        goto done;
    }
    /* Opset 8: every input has a leading batch axis; scan each batch. */
    int64_t B = -1;
    for (uint32_t i = first; i < k->n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        if (!x || x->rank < 1) {
            st = sg_kfail(k, SG_ESHAPE, "input %u needs a batch axis", i);
            goto done;
        }
        if (B >= 0 && x->dims[0] != B) {
            st = sg_kfail(k, SG_ESHAPE, "inputs differ in batch size");
            goto done;
        }
        B = x->dims[0];
    }
    bstate = sg_calloc(n_state + 1, sizeof *bstate);
    bscan = sg_calloc(n_sout + 1, sizeof *bscan);
    slices = sg_calloc(k->n_in + 1, sizeof *slices);
    if (!bstate || !bscan || !slices) {
        st = sg_kfail(k, SG_ENOMEM, "out of memory");
        goto done;
    }
    for (int64_t b = 0; b < B && !st; b++) {
        for (uint32_t i = first; i < k->n_in && !st; i++)
            st = slice_at(k, k->in[i], 0, b, &slices[i]);
        struct scan_acc *sc = sg_calloc(n_sout + 1, sizeof *sc);
        if (!st && !sc)
            st = sg_kfail(k, SG_ENOMEM, "out of memory");
        if (!st)
            st = scan_once(k, body, n_state, (const sg_rt_value *const *)slices + first,
                           (uint32_t)n_sin, (const sg_rt_value *const *)slices + first + n_state,
                           fin, sc, n_sout);
        for (uint32_t i = first; i < k->n_in; i++) {
            sg_rt_value_unref(slices[i]);
            slices[i] = NULL;
        }
        for (uint32_t i = 0; i < n_state && !st; i++) {
            st = acc_push(k, &bstate[i], i, fin[i], b);
            fin[i] = NULL;
        }
        for (uint32_t j = 0; j < n_sout && sc && !st; j++) {
            /* This batch's scan outputs, stacked along time. */
            sg_rt_value *v = NULL;
            st = acc_value(k, &sc[j], n_state + j, 0, false, body, n_state + j, &v);
            if (!st)
                st = acc_push(k, &bscan[j], n_state + j, v, b);
        }
        for (uint32_t j = 0; sc && j < n_sout; j++)
            acc_free(&sc[j]);
        sg_free(sc);
    }
    for (uint32_t i = 0; i < n_state && !st; i++)
        st = acc_output(k, &bstate[i], i, 0, false, body, i);
    for (uint32_t j = 0; j < n_sout && !st; j++)
        st = acc_output(k, &bscan[j], n_state + j, 0, false, body, n_state + j);
done:
    for (uint32_t i = 0; bstate && i < n_state; i++)
        acc_free(&bstate[i]);
    for (uint32_t j = 0; bscan && j < n_sout; j++)
        acc_free(&bscan[j]);
    sg_free(bstate);
    sg_free(bscan);
    sg_free(slices);
    for (uint32_t i = 0; fin && i < n_state; i++)
        sg_rt_value_unref(fin[i]);
    for (uint32_t j = 0; scans && j < n_sout; j++)
        acc_free(&scans[j]);
    sg_free(scans);
    sg_free(fin);
    return st;
}

static const struct sg_kernel kernels[] = {
    {"", "If", 1, -1, SG_KT_ANY, SG_KF_NONTENSOR, run_if, "r"},
    {"", "Loop", 1, -1, SG_KT_ANY, SG_KF_NONTENSOR, run_loop, "oor+"},
    {"", "Loop", 11, -1, SG_KT_ANY, SG_KF_NONTENSOR, run_loop, "oor*"},
    {"", "Scan", 8, -1, SG_KT_ANY, SG_KF_NONTENSOR, run_scan, "or+"},
    {"", "Scan", 9, -1, SG_KT_ANY, SG_KF_NONTENSOR, run_scan, "r+"},
};
SG_KERNEL_FAMILY(controlflow, kernels);
