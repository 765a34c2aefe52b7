/*
 * shape_elementwise.c - shape rules of the ops whose output has their
 * input's shape, of the broadcasting ops (numpy's rule, with the integer
 * arithmetic on shape values that exported graphs do before a Reshape),
 * Where, Expand and Cast.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

sg_status sh_same(struct sh_ctx *c, sg_node *n)
{
    return sh_copy_out(c, n, 0, 0);
}

sg_status sh_clip(struct sh_ctx *c, sg_node *n)
{
    return sh_copy_out(c, n, 0, 0);
}

/* Cast keeps the shape, and an integer value when it casts to an integer. */
sg_status sh_cast(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_copy_out(c, n, 0, 0);
    const int64_t *v, *vs;
    int32_t k;
    int64_t to = strcmp(n->op_type, "Cast") == 0 ? sg_attr_int(n, "to", 0) : 0;
    if (strcmp(n->op_type, "CastLike") == 0) {
        struct sh *t = sh_in(c, n, 1);
        to = t ? t->dtype : 0;
    }
    if (!st && (to == SG_DTYPE_INT64 || to == SG_DTYPE_INT32) && sh_in_val(c, n, 0, &v, &vs, &k)) {
        struct sh *in = sh_in(c, n, 0);
        if (sg_dtype_is_int(in->dtype))
            st = sh_set_val(c, n, 0, k, v, vs);
    }
    return st;
}

/* The broadcast shape of ins[0..n_in) into out; false with the pair that
 * does not broadcast in *bad_a, *bad_b. */
static bool bcast(struct sh **ins, uint32_t n_in, int64_t *out, int *rank, uint32_t *bad)
{
    int r = 0;
    for (uint32_t i = 0; i < n_in; i++)
        if (ins[i]->rank > r)
            r = ins[i]->rank;
    for (int k = 0; k < r; k++)
        out[k] = 1;
    for (uint32_t i = 0; i < n_in; i++) {
        int off = r - ins[i]->rank;
        for (int k = 0; k < ins[i]->rank; k++)
            if (!sh_bcast_dim(out[off + k], ins[i]->d[k], &out[off + k])) {
                *bad = i;
                return false;
            }
    }
    *rank = r;
    return true;
}

/* Integer arithmetic on values (shape computations): element k of the
 * result, or SH_UNK-coded when it cannot be known exactly. */
static bool arith(const char *op, int64_t a, int64_t b, int64_t *out)
{
    if (!strcmp(op, "Add"))
        return sg_dim_add(a, b, out);
    if (!strcmp(op, "Sub"))
        return sg_dim_sub(a, b, out);
    if (!strcmp(op, "Mul"))
        return sg_dim_mul(a, b, out);
    if (!strcmp(op, "Div")) {
        /* Truncation and floor agree on non-negative operands only. */
        if (b <= 0 || a < 0)
            return false;
        *out = a / b;
        return true;
    }
    if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
        *out = (a > b) == !strcmp(op, "Max") ? a : b;
        return true;
    }
    if (!strcmp(op, "Equal")) {
        *out = a == b;
        return true;
    }
    if (!strcmp(op, "Less") || !strcmp(op, "Greater")) {
        *out = !strcmp(op, "Less") ? a < b : a > b;
        return true;
    }
    return false;
}

/* Symbol s combined with number x: s itself where the op is an identity. */
static bool sym_identity(const char *op, int64_t x, bool sym_left)
{
    if (!strcmp(op, "Add"))
        return x == 0;
    if (!strcmp(op, "Sub"))
        return sym_left && x == 0;
    if (!strcmp(op, "Mul"))
        return x == 1;
    if (!strcmp(op, "Div"))
        return sym_left && x == 1;
    return false;
}

static sg_status bcast_values(struct sh_ctx *c, sg_node *n)
{
    if (n->n_inputs != 2)
        return SG_OK;
    const int64_t *va, *sa, *vb, *sb;
    int32_t na, nb;
    if (!sh_in_val(c, n, 0, &va, &sa, &na) || !sh_in_val(c, n, 1, &vb, &sb, &nb))
        return SG_OK;
    if (na != nb && na != 1 && nb != 1)
        return SG_OK;
    struct sh *out = sh_rec(c, n->outputs[0]);
    int32_t len = na > nb ? na : nb;
    if (!out || out->rank > 1 || (na == 0 || nb == 0))
        return SG_OK;
    int64_t v[SH_MAX_VAL], s[SH_MAX_VAL];
    bool eq = !strcmp(n->op_type, "Equal");
    for (int32_t k = 0; k < len; k++) {
        int32_t ia = na == 1 ? 0 : k, ib = nb == 1 ? 0 : k;
        int64_t xa = sa ? sa[ia] : 0, xb = sb ? sb[ib] : 0;
        v[k] = 0;
        s[k] = 0;
        if (!xa && !xb) {
            if (!arith(n->op_type, va[ia], vb[ib], &v[k]))
                s[k] = SH_UNK;
        } else if (xa && !xb && sym_identity(n->op_type, vb[ib], true)) {
            s[k] = xa;
        } else if (!xa && xb && sym_identity(n->op_type, va[ia], false)) {
            s[k] = xb;
        } else if (eq && xa && xa == xb && xa != SH_UNK) {
            v[k] = 1;
        } else if (eq && ((xa && !xb && vb[ib] < 0) || (xb && !xa && va[ia] < 0))) {
            v[k] = 0; /* a size is never negative */
        } else {
            s[k] = SH_UNK;
        }
    }
    return sh_set_val(c, n, 0, len, v, s);
}

sg_status sh_bcast(struct sh_ctx *c, sg_node *n)
{
    struct sh *ins[64];
    uint32_t n_in = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct sh *s = sh_in(c, n, i);
        if (!s)
            continue;
        if (s->rank < 0 || n_in == 64)
            return SG_OK;
        ins[n_in++] = s;
    }
    if (!n_in)
        return SG_OK;
    int64_t out[SG_MAX_RANK];
    int rank;
    uint32_t bad = 0;
    if (!bcast(ins, n_in, out, &rank, &bad)) {
        char a[256], b[256];
        return sh_fail(c, n, "shapes do not broadcast: %s and %s",
                       sh_fmt(c, ins[bad ? 0 : 1], a, sizeof a), sh_fmt(c, ins[bad], b, sizeof b));
    }
    sg_status st = sh_set_out(c, n, 0, rank, out);
    return st ? st : bcast_values(c, n);
}

sg_status sh_where(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_bcast(c, n);
    const int64_t *vc, *sc, *vx, *sx, *vy, *sy;
    int32_t nc, nx, ny;
    struct sh *out = n->n_outputs ? sh_rec(c, n->outputs[0]) : NULL;
    if (st || !out || out->rank != 1 || !sh_in_val(c, n, 0, &vc, &sc, &nc) || sc ||
        !sh_in_val(c, n, 1, &vx, &sx, &nx) || !sh_in_val(c, n, 2, &vy, &sy, &ny))
        return st;
    int32_t len = out->d[0] >= 0 && out->d[0] <= SH_MAX_VAL ? (int32_t)out->d[0] : -1;
    if (len < 0 || (nc != len && nc != 1) || (nx != len && nx != 1) || (ny != len && ny != 1))
        return st;
    int64_t v[SH_MAX_VAL], s[SH_MAX_VAL];
    for (int32_t k = 0; k < len; k++) {
        bool pick = vc[nc == 1 ? 0 : k] != 0;
        int32_t j = pick ? (nx == 1 ? 0 : k) : (ny == 1 ? 0 : k);
        v[k] = pick ? vx[j] : vy[j];
        s[k] = pick ? (sx ? sx[j] : 0) : (sy ? sy[j] : 0);
    }
    return sh_set_val(c, n, 0, len, v, s);
}

sg_status sh_expand(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *sv = sh_in_ranked(c, n, 1);
    const int64_t *v, *vs;
    int32_t k;
    if (x && sv && sv->rank == 1 && sh_num(sv->d[0]) && sv->d[0] <= SG_MAX_RANK &&
        !sh_in_val(c, n, 1, &v, &vs, &k)) {
        /* The shape's values unknown, its length known: a dim of x other
         * than 1 is the output's (the shape has it or 1 there). */
        int r = x->rank > sv->d[0] ? x->rank : (int)sv->d[0];
        int64_t out[SG_MAX_RANK];
        for (int i = 0; i < r; i++) {
            int j = i - (r - x->rank), q = i - (r - (int)sv->d[0]);
            if (q < 0)
                out[i] = x->d[j]; /* the shape is shorter: x's dim as it is */
            else
                out[i] = j >= 0 && sh_num(x->d[j]) && x->d[j] != 1 ? x->d[j] : SH_UNK;
        }
        return sh_set_out(c, n, 0, r, out);
    }
    if (!x || !sh_in_val(c, n, 1, &v, &vs, &k))
        return SG_OK;
    if (k > SG_MAX_RANK)
        return sh_fail(c, n, "shape input has %d elements", k);
    struct sh shp = {.rank = k};
    int64_t d[SG_MAX_RANK];
    for (int32_t i = 0; i < k; i++) {
        d[i] = sh_val_dim(v, vs, i);
        if (!vs || !vs[i])
            if (v[i] < 0)
                return sh_fail(c, n, "shape input has a negative dim %lld", (long long)v[i]);
    }
    shp.d = d;
    struct sh *ins[2] = {x, &shp};
    int64_t out[SG_MAX_RANK];
    int rank;
    uint32_t bad;
    if (!bcast(ins, 2, out, &rank, &bad)) {
        char a[256], b[256];
        return sh_fail(c, n, "input %s does not expand to %s", sh_fmt(c, x, a, sizeof a),
                       sh_fmt(c, &shp, b, sizeof b));
    }
    return sh_set_out(c, n, 0, rank, out);
}
