/*
 * shape_seq.c - shape rules of the sequence and optional ops. A sequence's
 * record holds what its elements share (the join of their shapes), so
 * SequenceAt gives a tensor shape; optionals are opaque (never written as
 * tensor types), except that OptionalGetElement of a plain tensor is it.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

/* The elements' shape of a sequence record; SEQ_NONE for an empty one. */
#define SEQ_NONE (-2)

static void join_into(struct sh *acc, int64_t *d, const struct sh *x)
{
    if (acc->rank == SEQ_NONE) {
        acc->rank = x ? x->rank : -1;
        for (int i = 0; i < acc->rank; i++)
            d[i] = x->d[i];
        return;
    }
    if (!x || x->rank < 0 || acc->rank < 0 || x->rank != acc->rank) {
        acc->rank = -1;
        return;
    }
    for (int i = 0; i < acc->rank; i++)
        if (d[i] != x->d[i])
            d[i] = SH_UNK;
}

static int32_t in_dtype(struct sh_ctx *c, sg_node *n, uint32_t i)
{
    struct sh *s = sh_in(c, n, i);
    return s ? s->dtype : 0;
}

static sg_status set_seq(struct sh_ctx *c, sg_node *n, const struct sh *acc, const int64_t *d)
{
    int32_t dt = in_dtype(c, n, 0);
    if (!dt && n->n_inputs > 1)
        dt = in_dtype(c, n, 1);
    if (!strcmp(n->op_type, "SequenceEmpty"))
        dt = (int32_t)sg_attr_int(n, "dtype", SG_DTYPE_FLOAT);
    sh_set_dtype(c, n, 0, dt);
    sg_status st = sh_set_kind(c, n, 0, SH_SEQ, acc->rank < 0 ? -1 : acc->rank, d);
    struct sh *o = n->n_outputs ? sh_rec(c, n->outputs[0]) : NULL;
    if (!st && o && acc->rank == SEQ_NONE)
        o->rank = SEQ_NONE;
    return st;
}

sg_status sh_seq_construct(struct sh_ctx *c, sg_node *n)
{
    int64_t d[SG_MAX_RANK];
    struct sh acc = {.rank = SEQ_NONE};
    for (uint32_t i = 0; i < n->n_inputs; i++)
        join_into(&acc, d, sh_in(c, n, i));
    return set_seq(c, n, &acc, d);
}

sg_status sh_seq_empty(struct sh_ctx *c, sg_node *n)
{
    struct sh acc = {.rank = SEQ_NONE};
    return set_seq(c, n, &acc, NULL);
}

sg_status sh_seq_insert(struct sh_ctx *c, sg_node *n)
{
    struct sh *s = sh_in(c, n, 0);
    int64_t d[SG_MAX_RANK];
    struct sh acc = {.rank = -1};
    if (s && s->kind == SH_SEQ) {
        acc.rank = s->rank;
        for (int i = 0; i < s->rank; i++)
            d[i] = s->d[i];
    }
    join_into(&acc, d, sh_in(c, n, 1));
    return set_seq(c, n, &acc, d);
}

/* SequenceErase: the elements keep their shape. */
sg_status sh_seq_keep(struct sh_ctx *c, sg_node *n)
{
    struct sh *s = sh_in(c, n, 0);
    if (!s || s->kind != SH_SEQ)
        return sh_set_kind(c, n, 0, SH_SEQ, -1, NULL);
    struct sh acc = {.rank = s->rank};
    return set_seq(c, n, &acc, s->d);
}

sg_status sh_seq_at(struct sh_ctx *c, sg_node *n)
{
    struct sh *s = sh_in(c, n, 0);
    if (!s || s->kind != SH_SEQ)
        return SG_OK;
    sh_set_dtype(c, n, 0, s->dtype);
    return s->rank < 0 ? SG_OK : sh_set_out(c, n, 0, s->rank, s->d);
}

/* SequenceLength, OptionalHasElement: a scalar. */
sg_status sh_scalar(struct sh_ctx *c, sg_node *n)
{
    sh_set_dtype(c, n, 0, !strcmp(n->op_type, "SequenceLength") ? SG_DTYPE_INT64 : SG_DTYPE_BOOL);
    return sh_set_out(c, n, 0, 0, NULL);
}

sg_status sh_split_to_seq(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    sh_set_dtype(c, n, 0, in_dtype(c, n, 0));
    if (!x)
        return sh_set_kind(c, n, 0, SH_SEQ, -1, NULL);
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", 0), x->rank, &axis))
        return sh_fail(c, n, "axis out of range for rank %d", x->rank);
    int64_t d[SG_MAX_RANK];
    sh_dims_copy(d, x->d, x->rank);
    bool has_split = n->n_inputs > 1 && n->inputs[1];
    if (!has_split) {
        if (sg_attr_int(n, "keepdims", 1)) {
            d[axis] = 1;
            return sh_set_kind(c, n, 0, SH_SEQ, x->rank, d);
        }
        for (int i = (int)axis; i + 1 < x->rank; i++)
            d[i] = d[i + 1];
        return sh_set_kind(c, n, 0, SH_SEQ, x->rank - 1, d);
    }
    const int64_t *v;
    int32_t k;
    struct sh *sp = sh_in(c, n, 1);
    d[axis] = SH_UNK;
    if (sh_in_ints(c, n, 1, &v, &k) && sp && sp->rank == 0 && k == 1 && v[0] > 0 &&
        sh_num(x->d[axis]) && x->d[axis] % v[0] == 0)
        d[axis] = v[0];
    return sh_set_kind(c, n, 0, SH_SEQ, x->rank, d);
}

sg_status sh_concat_from_seq(struct sh_ctx *c, sg_node *n)
{
    struct sh *s = sh_in(c, n, 0);
    if (!s || s->kind != SH_SEQ || s->rank < 0)
        return SG_OK;
    sh_set_dtype(c, n, 0, s->dtype);
    bool new_axis = sg_attr_int(n, "new_axis", 0) != 0;
    int r = s->rank + new_axis;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", 0), r, &axis))
        return sh_fail(c, n, "axis out of range for rank %d", r);
    int64_t d[SG_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++)
        d[i] = new_axis && i == axis ? SH_UNK : s->d[j++];
    d[axis] = SH_UNK;
    return sh_set_out(c, n, 0, r, d);
}

sg_status sh_optional(struct sh_ctx *c, sg_node *n)
{
    return sh_set_kind(c, n, 0, SH_OPAQUE, -1, NULL);
}

sg_status sh_optional_get(struct sh_ctx *c, sg_node *n)
{
    struct sh *s = sh_in(c, n, 0);
    if (s && s->kind == SH_TENSOR && n->inputs[0] && n->inputs[0]->type &&
        n->inputs[0]->type->kind == SG_TYPE_TENSOR)
        return sh_copy_out(c, n, 0, 0);
    if (s && s->kind == SH_SEQ)
        return sh_seq_keep(c, n);
    /* An optional declared with its element type (a graph input). */
    const sg_value *v = n->n_inputs ? n->inputs[0] : NULL;
    while (v && v->outer)
        v = v->outer;
    const sg_type *t = v ? v->type : NULL;
    if (t && t->kind == SG_TYPE_OPTIONAL && t->elem && t->elem->kind != SG_TYPE_OPTIONAL) {
        struct sh e = {.rank = -1, .nval = -1};
        sg_status st = sh_seed_type(c, &e, t->elem);
        if (st)
            return sg_diag_set(c->diag, st, "out of memory");
        sh_set_dtype(c, n, 0, e.dtype);
        return sh_set_kind(c, n, 0, (enum sh_kind)e.kind, e.rank, e.d);
    }
    return sh_set_kind(c, n, 0, SH_OPAQUE, -1, NULL);
}
