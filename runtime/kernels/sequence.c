/*
 * sequence.c - sequence and optional values: SequenceEmpty,
 * SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
 * SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap,
 * Optional, OptionalHasElement, OptionalGetElement.
 *
 * Sequences are immutable values: Insert and Erase build a new sequence
 * holding references to the same items.
 */
#include "rt_impl.h"
#include "sg_dims.h"
#include "sg_alloc.h"

#include <string.h>

static sg_status new_seq(struct sg_kctx *k, int32_t dtype, sg_rt_value **out)
{
    if (sg_rt_sequence_create(dtype, out))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static sg_status push(struct sg_kctx *k, sg_rt_value *seq, sg_rt_value *item)
{
    if (sg_rt_sequence_append(seq, item))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    return SG_OK;
}

/* Output 0 is seq, which the caller drops its reference to. */
static sg_status give(struct sg_kctx *k, sg_rt_value *seq, sg_status st)
{
    if (!st)
        st = sg_kout_value(k, 0, seq);
    sg_rt_value_unref(seq);
    return st;
}

static const sg_rt_value *seq_in(struct sg_kctx *k, uint32_t i)
{
    const sg_rt_value *s = sg_kin(k, i);
    return s && s->kind == SG_RT_SEQUENCE ? s : NULL;
}

static sg_status position(struct sg_kctx *k, uint32_t i, int64_t n, bool insert, int64_t dflt,
                          int64_t *out)
{
    const sg_rt_value *P = sg_kin(k, i);
    if (!P) {
        *out = dflt;
        return SG_OK;
    }
    if (P->kind != SG_RT_TENSOR || P->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "position must hold one value, got %s", sg_kshape(k, P));
    int64_t p = sg_rt_get_i64(P, 0), w = p < 0 ? p + n : p;
    if (w < 0 || w > n || (!insert && w == n))
        return sg_kfail(k, SG_ERANGE, "position %lld is out of range for %lld items", (long long)p,
                        (long long)n);
    *out = w;
    return SG_OK;
}

static sg_status run_seq_empty(struct sg_kctx *k)
{
    sg_rt_value *s;
    sg_status st = new_seq(k, (int32_t)sg_kattr_int(k, "dtype", SG_DTYPE_FLOAT), &s);
    return st ? st : give(k, s, SG_OK);
}

static sg_status run_seq_construct(struct sg_kctx *k)
{
    sg_rt_value *s;
    const sg_rt_value *f = sg_kin(k, 0);
    sg_status st = new_seq(k, f ? f->dtype : SG_DTYPE_UNDEFINED, &s);
    for (uint32_t i = 0; !st && i < k->n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        if (x && x->dtype != f->dtype)
            st = sg_kfail(k, SG_ETYPE, "items differ in type: %s and %s", sg_kshape(k, f),
                          sg_kshape(k, x));
        else if (x)
            st = push(k, s, (sg_rt_value *)x);
    }
    return st && !s ? st : give(k, s, st);
}

static sg_status run_seq_at(struct sg_kctx *k)
{
    const sg_rt_value *s = seq_in(k, 0);
    if (!s)
        return sg_kfail(k, SG_ETYPE, "input 0 must be a sequence");
    int64_t p = 0;
    sg_status st = position(k, 1, (int64_t)s->n_items, false, 0, &p);
    if (st)
        return st;
    if (!sg_kin(k, 1))
        return sg_kfail(k, SG_EUNDEF, "position is required");
    return sg_kout_value(k, 0, s->items[p]);
}

static sg_status copy_seq(struct sg_kctx *k, const sg_rt_value *src, int64_t skip,
                          int64_t insert_at, sg_rt_value *insert, sg_rt_value **out)
{
    sg_status st = new_seq(k, src->dtype, out);
    int64_t n = (int64_t)src->n_items;
    for (int64_t i = 0; !st && i <= n; i++) {
        if (i == insert_at)
            st = push(k, *out, insert);
        if (!st && i < n && i != skip)
            st = push(k, *out, src->items[i]);
    }
    return st;
}

static sg_status run_seq_insert(struct sg_kctx *k)
{
    const sg_rt_value *s = seq_in(k, 0), *x = sg_kin(k, 1);
    if (!s || !x || x->kind != SG_RT_TENSOR)
        return sg_kfail(k, SG_ETYPE, "needs a sequence and a tensor");
    if (s->n_items && x->dtype != s->dtype)
        return sg_kfail(k, SG_ETYPE, "cannot insert %s into a sequence of %s", sg_kshape(k, x),
                        sg_dtype_name(s->dtype));
    int64_t p = 0;
    sg_status st = position(k, 2, (int64_t)s->n_items, true, (int64_t)s->n_items, &p);
    if (st)
        return st;
    sg_rt_value *o = NULL;
    st = copy_seq(k, s, -1, p, (sg_rt_value *)x, &o);
    return !o ? st : give(k, o, st);
}

static sg_status run_seq_erase(struct sg_kctx *k)
{
    const sg_rt_value *s = seq_in(k, 0);
    if (!s)
        return sg_kfail(k, SG_ETYPE, "input 0 must be a sequence");
    int64_t p = 0;
    sg_status st = position(k, 1, (int64_t)s->n_items, false, (int64_t)s->n_items - 1, &p);
    if (st)
        return st;
    if (s->n_items == 0)
        return sg_kfail(k, SG_ERANGE, "cannot erase from an empty sequence");
    sg_rt_value *o = NULL;
    st = copy_seq(k, s, p, -1, NULL, &o);
    return !o ? st : give(k, o, st);
}

static sg_status run_seq_length(struct sg_kctx *k)
{
    const sg_rt_value *s = seq_in(k, 0);
    if (!s)
        return sg_kfail(k, SG_ETYPE, "input 0 must be a sequence");
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_INT64, NULL, 0, &Y);
    if (!st)
        *(int64_t *)Y->data = (int64_t)s->n_items;
    return st;
}

static sg_status run_split_to_seq(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), X->rank, &axis);
    if (st)
        return st;
    bool keep = sg_kattr_int(k, "keepdims", 1) != 0;
    int64_t n = X->dims[axis];
    /* One entry per part: n at most, or one per given split size. */
    int64_t nparts = S && S->rank > 0 && S->numel > n ? S->numel : n;
    int64_t *sizes = sg_kscratch(k, (size_t)(nparts + 2) * sizeof *sizes), count = 0;
    if (!sizes)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (!S) {
        for (int64_t i = 0; i < n; i++)
            sizes[count++] = 1;
    } else if (S->rank == 0) {
        int64_t c = sg_rt_get_i64(S, 0);
        if (c <= 0)
            return sg_kfail(k, SG_ERANGE, "split size %lld must be positive", (long long)c);
        for (int64_t left = n; left > 0; left -= c)
            sizes[count++] = left < c ? left : c;
        keep = true;
    } else {
        int64_t sum = 0;
        bool ok = true;
        for (int64_t i = 0; i < S->numel && ok; i++) {
            sizes[count] = sg_rt_get_i64(S, i);
            ok = sizes[count] >= 0 && sg_dim_add(sum, sizes[count], &sum);
            count++;
        }
        if (!ok || sum != n)
            return sg_kfail(k, SG_ESHAPE, "split sizes add up to %lld, axis %u of %s has %lld",
                            (long long)sum, axis, sg_kshape(k, X), (long long)n);
        keep = true;
    }
    int64_t outer = 1, inner = 1;
    for (uint32_t d = 0; d < axis; d++)
        outer *= X->dims[d];
    for (uint32_t d = axis + 1; d < X->rank; d++)
        inner *= X->dims[d];
    size_t es = sg_rt_elem_size(X->dtype);
    sg_rt_value *seq;
    if ((st = new_seq(k, X->dtype, &seq)))
        return st;
    int64_t start = 0;
    for (int64_t i = 0; i < count && !st; i++) {
        int64_t dims[SG_MAX_RANK];
        uint32_t r = 0;
        for (uint32_t d = 0; d < X->rank; d++) {
            if (d == axis && !keep)
                continue;
            dims[r++] = d == axis ? sizes[i] : X->dims[d];
        }
        sg_rt_value *part;
        struct sg_diag dg = {0};
        if ((st = sg_rt_tensor_create(X->dtype, dims, r, &part, &dg))) {
            st = sg_kfail(k, st, "%s", dg.msg);
            break;
        }
        size_t row = (size_t)(sizes[i] * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)part->data + o * row,
                   (const char *)X->data + (size_t)(o * n + start) * (size_t)inner * es, row);
        start += sizes[i];
        if (X->dtype == SG_DTYPE_STRING) { /* own the bytes: X may go first */
            part->storage->interned = false;
            if (sg__rt_intern_strings(part))
                st = sg_kfail(k, SG_ENOMEM, "out of memory");
        }
        if (!st)
            st = push(k, seq, part);
        sg_rt_value_unref(part);
    }
    return give(k, seq, st);
}

static sg_status run_concat_from_seq(struct sg_kctx *k)
{
    const sg_rt_value *s = seq_in(k, 0);
    if (!s || s->n_items == 0)
        return sg_kfail(k, SG_ESHAPE, "needs a non-empty sequence");
    bool new_axis = sg_kattr_int(k, "new_axis", 0) != 0;
    const sg_rt_value *f = s->items[0];
    uint32_t r = f->rank + (new_axis ? 1 : 0), axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), r, &axis);
    if (st)
        return st;
    int64_t dims[SG_MAX_RANK], outer = 1, inner = 1, total = 0;
    for (size_t i = 0; i < s->n_items; i++) {
        const sg_rt_value *x = s->items[i];
        bool ok = x->kind == SG_RT_TENSOR && x->rank == f->rank && x->dtype == f->dtype;
        for (uint32_t d = 0; ok && d < f->rank; d++)
            ok = (!new_axis && d == axis) || x->dims[d] == f->dims[d];
        if (!ok)
            return sg_kfail(k, SG_ESHAPE, "item %zu %s does not match %s", i, sg_kshape(k, x),
                            sg_kshape(k, f));
        if (!sg_dim_add(total, new_axis ? 1 : x->dims[axis], &total))
            return sg_kfail(k, SG_ERANGE, "the items' sizes along axis %u add up past 2^63", axis);
    }
    for (uint32_t d = 0, src = 0; d < r; d++) {
        if (d == axis) {
            dims[d] = total;
            if (!new_axis)
                src++;
            continue;
        }
        dims[d] = f->dims[src++];
        if (d < axis)
            outer *= dims[d];
        else
            inner *= dims[d];
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, f->dtype, dims, r, &Y)))
        return st;
    size_t es = sg_rt_elem_size(f->dtype), pos = 0, orow = (size_t)(total * inner) * es;
    for (size_t i = 0; i < s->n_items; i++) {
        const sg_rt_value *x = s->items[i];
        size_t row = (size_t)((new_axis ? 1 : x->dims[axis]) * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)Y->data + (size_t)o * orow + pos, (const char *)x->data + o * row, row);
        pos += row;
    }
    return SG_OK;
}

/* SequenceMap: run the body once per item; non-sequence inputs are passed
 * to every iteration whole. */
static sg_status run_seq_map(struct sg_kctx *k)
{
    const sg_graph *body = sg_kattr_graph(k, "body");
    const sg_rt_value *s0 = seq_in(k, 0);
    if (!body || !s0)
        return sg_kfail(k, SG_EINVAL, "needs a body and a sequence");
    if (body->n_inputs != k->n_in || body->n_outputs != k->n_out)
        return sg_kfail(k, SG_EARITY, "body has %u inputs and %u outputs for %u and %u",
                        body->n_inputs, body->n_outputs, k->n_in, k->n_out);
    size_t n = s0->n_items;
    for (uint32_t i = 1; i < k->n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        if (x && x->kind == SG_RT_SEQUENCE && x->n_items != n)
            return sg_kfail(k, SG_ESHAPE, "sequence input %u has %zu items, input 0 has %zu", i,
                            x->n_items, n);
    }
    sg_rt_value **in = sg_kscratch(k, (k->n_in + 1) * sizeof *in);
    sg_rt_value **out = sg_kscratch(k, (k->n_out + 1) * sizeof *out);
    sg_rt_value **seqs = sg_kscratch(k, (k->n_out + 1) * sizeof *seqs);
    if (!in || !out || !seqs)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_status st = SG_OK;
    for (uint32_t j = 0; j < k->n_out; j++) {
        const sg_type *t = body->outputs[j]->type;
        int32_t dt =
            t && t->kind == SG_TYPE_TENSOR && t->has_elem_type ? t->elem_type : SG_DTYPE_UNDEFINED;
        seqs[j] = NULL;
        if (!st)
            st = new_seq(k, dt, &seqs[j]);
    }
    for (size_t t = 0; t < n && !st; t++) {
        for (uint32_t i = 0; i < k->n_in; i++) {
            sg_rt_value *x = k->in[i];
            in[i] = x && x->kind == SG_RT_SEQUENCE ? x->items[t] : x;
        }
        st = sg_ksubgraph_run(k, body, k->n_in, in, out);
        for (uint32_t j = 0; j < k->n_out; j++) {
            if (!st)
                st = push(k, seqs[j], out[j]);
            sg_rt_value_unref(out[j]);
            out[j] = NULL;
        }
    }
    for (uint32_t j = 0; j < k->n_out; j++) {
        if (!st && seqs[j])
            st = sg_kout_value(k, j, seqs[j]);
        sg_rt_value_unref(seqs[j]);
    }
    return st;
}

static sg_status run_optional(struct sg_kctx *k)
{
    const sg_rt_value *x = sg_kin(k, 0);
    enum sg_rt_kind ek = SG_RT_TENSOR;
    int32_t dt = SG_DTYPE_UNDEFINED;
    const sg_attr *a = sg_kattr(k, "type");
    if (a && a->tp) {
        const sg_type *t = a->tp;
        if (t->kind == SG_TYPE_SEQUENCE) {
            ek = SG_RT_SEQUENCE;
            t = t->elem;
        }
        if (t && t->kind == SG_TYPE_TENSOR && t->has_elem_type)
            dt = t->elem_type;
    }
    sg_rt_value *o;
    if (sg_rt_optional_create((sg_rt_value *)x, ek, dt, &o))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_status st = sg_kout_value(k, 0, o);
    sg_rt_value_unref(o);
    return st;
}

static sg_status run_optional_has(struct sg_kctx *k)
{
    const sg_rt_value *x = sg_kin(k, 0);
    bool has = x && (x->kind != SG_RT_OPTIONAL || x->n_items > 0);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_BOOL, NULL, 0, &Y);
    if (!st)
        *(uint8_t *)Y->data = has;
    return st;
}

static sg_status run_optional_get(struct sg_kctx *k)
{
    const sg_rt_value *x = sg_kin(k, 0);
    if (!x)
        return sg_kfail(k, SG_EUNDEF, "input is missing");
    if (x->kind != SG_RT_OPTIONAL)
        return sg_kout_value(k, 0, (sg_rt_value *)x);
    if (!x->n_items)
        return sg_kfail(k, SG_EUNDEF, "the optional is empty");
    return sg_kout_value(k, 0, x->items[0]);
}

#define SEQ SG_KT_ANY, SG_KF_NONTENSOR
static const struct sg_kernel kernels[] = {
    {"", "SequenceEmpty", 11, -1, SEQ, run_seq_empty, ""},
    {"", "SequenceConstruct", 11, -1, SEQ, run_seq_construct, "r+"},
    {"", "SequenceAt", 11, -1, SEQ, run_seq_at, "rr"},
    {"", "SequenceInsert", 11, -1, SEQ, run_seq_insert, "rro"},
    {"", "SequenceErase", 11, -1, SEQ, run_seq_erase, "ro"},
    {"", "SequenceLength", 11, -1, SEQ, run_seq_length, "r"},
    {"", "SplitToSequence", 11, -1, SEQ, run_split_to_seq, "ro"},
    {"", "ConcatFromSequence", 11, -1, SEQ, run_concat_from_seq, "r"},
    {"", "SequenceMap", 17, -1, SEQ, run_seq_map, "rr*"},
    {"", "Optional", 15, -1, SEQ, run_optional, "o"},
    {"", "OptionalHasElement", 15, -1, SEQ, run_optional_has, "r"},
    /* 18: a plain tensor or an omitted input (false) too */
    {"", "OptionalHasElement", 18, -1, SEQ, run_optional_has, "o"},
    {"", "OptionalGetElement", 15, -1, SEQ, run_optional_get, "r"},
    {"", "OptionalGetElement", 18, -1, SEQ, run_optional_get, "r"},
};
SG_KERNEL_FAMILY(sequence, kernels);
