/*
 * shape_tensor.c - shape rules of the ops that make, move or pick dims:
 * Constant, Shape, Size, Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
 * Concat, Split, Slice, the Gathers, Tile, Pad, ConstantOfShape, Range,
 * TopK, DepthToSpace/SpaceToDepth, Resize/Upsample, OneHot, and the
 * data-dependent ones (NonZero, Compress, Unique: fresh symbols).
 *
 * The ops that shape computations use (Shape, Gather, Concat, Slice,
 * Squeeze, Unsqueeze, Reshape, Split, ConstantOfShape, Range) also carry
 * small integer values through, so a Reshape fed by them gets its target.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <math.h>
#include <string.h>

/* Axes of a node: input `in` from opset `since` (when present), else the
 * attribute. *given false when neither is there; false when the input is
 * there but not known. */
static bool node_axes(struct sh_ctx *c, sg_node *n, int64_t since, uint32_t in,
                      const int64_t **axes, int32_t *count, bool *given)
{
    *given = false;
    *count = 0;
    *axes = NULL;
    if (c->opset >= since) {
        if (in >= n->n_inputs || !n->inputs[in])
            return true;
        *given = true;
        return sh_in_ints(c, n, in, axes, count);
    }
    size_t k;
    const int64_t *a = sh_attr_ints(n, "axes", &k);
    if (a) {
        *given = true;
        *axes = a;
        *count = (int32_t)k;
    }
    return true;
}

/* Normalise axes into flags[0..r): false (after a finding) on a bad or
 * repeated axis. */
static bool axes_flags(struct sh_ctx *c, sg_node *n, const int64_t *axes, int32_t k, int r,
                       bool *flags, sg_status *st)
{
    memset(flags, 0, (size_t)(r > 0 ? r : 1) * sizeof *flags);
    for (int32_t i = 0; i < k; i++) {
        int64_t a;
        if (!sh_axis(axes[i], r, &a) || flags[a]) {
            *st = sh_fail(c, n, "axis %lld is out of range or repeated for rank %d",
                          (long long)axes[i], r);
            return false;
        }
        flags[a] = true;
    }
    return true;
}

/* ------------------------------------------------------- Constant, Shape */

sg_status sh_constant(struct sh_ctx *c, sg_node *n)
{
    const sg_attr *at = sg_node_attr(n, "value");
    if (at && at->t) {
        sg_tensor *t = at->t;
        int64_t d[SG_MAX_RANK];
        if (t->rank > SG_MAX_RANK)
            return SG_OK;
        for (uint32_t i = 0; i < t->rank; i++)
            d[i] = t->dims[i] >= 0 ? t->dims[i] : SH_UNK;
        sg_status st = sh_set_out(c, n, 0, (int)t->rank, d);
        if (st || !t->has_dtype || !sg_dtype_is_int(t->dtype) || t->rank > 1)
            return st;
        int64_t numel = sg_tensor_numel(t);
        size_t nb;
        const void *data =
            numel > 0 && numel <= SH_MAX_VAL ? sg_tensor_data(c->m, t, &nb, NULL) : NULL;
        if (numel == 0)
            return sh_set_val(c, n, 0, 0, NULL, NULL);
        if (!data)
            return SG_OK;
        int64_t v[SH_MAX_VAL];
        for (int64_t i = 0; i < numel; i++)
            v[i] = t->dtype == SG_DTYPE_INT64
                       ? ((const int64_t *)data)[i]
                       : sg_dim_from_double(sg_dtype_get_f64(t->dtype, data, (size_t)i));
        return sh_set_val(c, n, 0, (int32_t)numel, v, NULL);
    }
    if ((at = sg_node_attr(n, "value_int")) != NULL) {
        sg_status st = sh_set_out(c, n, 0, 0, NULL);
        return st ? st : sh_set_val(c, n, 0, 1, &at->i, NULL);
    }
    if ((at = sg_node_attr(n, "value_ints")) != NULL) {
        int64_t d = (int64_t)at->n_ints;
        sg_status st = sh_set_out(c, n, 0, 1, &d);
        return st || at->n_ints > SH_MAX_VAL
                   ? st
                   : sh_set_val(c, n, 0, (int32_t)at->n_ints, at->ints, NULL);
    }
    if ((at = sg_node_attr(n, "value_float")) != NULL || (at = sg_node_attr(n, "value_string")))
        return sh_set_out(c, n, 0, 0, NULL);
    if ((at = sg_node_attr(n, "value_floats")) != NULL) {
        int64_t d = (int64_t)at->n_floats;
        return sh_set_out(c, n, 0, 1, &d);
    }
    if ((at = sg_node_attr(n, "value_strings")) != NULL) {
        int64_t d = (int64_t)at->n_strings;
        return sh_set_out(c, n, 0, 1, &d);
    }
    if ((at = sg_node_attr(n, "sparse_value")) != NULL && at->sparse &&
        at->sparse->rank <= SG_MAX_RANK)
        return sh_set_out(c, n, 0, (int)at->sparse->rank, at->sparse->dims);
    return SG_OK;
}

sg_status sh_shape(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x) {
        int64_t d = SH_UNK;
        return sh_set_out(c, n, 0, 1, &d);
    }
    int64_t r = x->rank, s = sg_attr_int(n, "start", 0), e = sg_attr_int(n, "end", r);
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = sg_dim_clamp(s, 0, r);
    e = sg_dim_clamp(e, 0, r);
    int64_t len = e > s ? e - s : 0;
    sg_status st = sh_set_out(c, n, 0, 1, &len);
    int64_t v[SG_MAX_RANK], sy[SG_MAX_RANK];
    for (int64_t i = 0; i < len; i++) {
        int64_t d = x->d[s + i];
        v[i] = sh_num(d) ? d : 0;
        sy[i] = sh_num(d) ? 0 : d;
    }
    return st ? st : sh_set_val(c, n, 0, (int32_t)len, v, sy);
}

sg_status sh_size(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_set_out(c, n, 0, 0, NULL);
    struct sh *x = sh_in_ranked(c, n, 0);
    int64_t numel = 1;
    for (int i = 0; !st && x && i < x->rank; i++)
        if (!sh_num(x->d[i]) || !sg_dim_mul(numel, x->d[i], &numel))
            return st;
    return st || !x ? st : sh_set_val(c, n, 0, 1, &numel, NULL);
}

/* ------------------------------------------------------------- Reshape */

/* Pass an input's value on to a rank-0/1 output with the same elements. */
static sg_status pass_val(struct sh_ctx *c, sg_node *n, uint32_t out, uint32_t in)
{
    const int64_t *v, *vs;
    int32_t k;
    struct sh *o = out < n->n_outputs ? sh_rec(c, n->outputs[out]) : NULL;
    if (!o || o->rank > 1 || !sh_in_val(c, n, in, &v, &vs, &k))
        return SG_OK;
    return sh_set_val(c, n, out, k, v, vs);
}

sg_status sh_reshape(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in(c, n, 0), *shp = sh_in(c, n, 1);
    const int64_t *v, *vs;
    int32_t k;
    if (!sh_in_val(c, n, 1, &v, &vs, &k)) {
        if (shp && shp->rank == 1 && sh_num(shp->d[0]) && shp->d[0] <= SG_MAX_RANK) {
            int64_t d[SG_MAX_RANK];
            for (int64_t i = 0; i < shp->d[0]; i++)
                d[i] = SH_UNK;
            return sh_set_out(c, n, 0, (int)shp->d[0], d);
        }
        return SG_OK;
    }
    if (k > SG_MAX_RANK)
        return sh_fail(c, n, "shape input has %d elements", k);
    bool allowzero = sg_attr_int(n, "allowzero", 0) != 0;
    int64_t out[SG_MAX_RANK];
    int minus = -1;
    for (int32_t i = 0; i < k; i++) {
        if (vs && vs[i]) {
            out[i] = vs[i];
        } else if (v[i] == -1) {
            if (minus >= 0)
                return sh_fail(c, n, "shape input has more than one -1");
            minus = i;
            out[i] = SH_UNK;
        } else if (v[i] == 0 && !allowzero) {
            if (!x || x->rank < 0) {
                out[i] = SH_UNK;
            } else if (i >= x->rank) {
                char a[256];
                return sh_fail(c, n, "shape element %d is 0 (copy) past the input rank: %s", i,
                               sh_fmt(c, x, a, sizeof a));
            } else {
                out[i] = x->d[i];
            }
        } else if (v[i] < 0) {
            return sh_fail(c, n, "shape input has a negative dim %lld", (long long)v[i]);
        } else {
            out[i] = v[i];
        }
    }
    if (x && x->rank >= 0) {
        /* Cancel equal symbols, multiply the numbers: what is left must
         * match (or give the -1). */
        int64_t in_syms[SG_MAX_RANK], num_in = 1, num_out = 1;
        int n_in = 0;
        bool in_unknown = false, out_unknown = false, ovf = false;
        for (int i = 0; i < x->rank; i++) {
            if (sh_num(x->d[i]))
                ovf = ovf || !sg_dim_mul(num_in, x->d[i], &num_in);
            else if (sh_sym(x->d[i]))
                in_syms[n_in++] = x->d[i];
            else
                in_unknown = true;
        }
        int64_t out_left = 0;
        int n_out_left = 0;
        for (int32_t i = 0; i < k; i++) {
            if (i == minus)
                continue;
            if (sh_num(out[i])) {
                ovf = ovf || !sg_dim_mul(num_out, out[i], &num_out);
                continue;
            }
            int j = 0;
            while (j < n_in && in_syms[j] != out[i])
                j++;
            if (j < n_in && sh_sym(out[i])) {
                in_syms[j] = in_syms[--n_in];
            } else if (sh_sym(out[i])) {
                out_left = out[i];
                n_out_left++;
            } else {
                out_unknown = true;
            }
        }
        if (ovf)
            return sh_fail(c, n, "element count overflows");
        bool exact = !in_unknown && !out_unknown && !n_out_left;
        if (exact && !n_in) {
            if (minus >= 0) {
                if (num_out == 0 || num_in % num_out) {
                    char a[256], b[256];
                    return sh_fail(c, n, "input %s does not reshape to %s",
                                   sh_fmt(c, x, a, sizeof a), sh_fmt_dims(c, k, out, b, sizeof b));
                }
                out[minus] = num_in / num_out;
            } else if (num_in != num_out) {
                char a[256], b[256];
                return sh_fail(c, n, "input %s does not reshape to %s", sh_fmt(c, x, a, sizeof a),
                               sh_fmt_dims(c, k, out, b, sizeof b));
            }
        } else if (exact && n_in == 1 && minus >= 0 && num_in == num_out) {
            out[minus] = in_syms[0];
        }
        (void)out_left;
    }
    sg_status st = sh_set_out(c, n, 0, k, out);
    return st ? st : pass_val(c, n, 0, 0);
}

static int64_t dims_product(const int64_t *d, int from, int to)
{
    int64_t p = 1, sym = 0;
    int n_sym = 0;
    for (int i = from; i < to; i++) {
        if (d[i] == 1)
            continue;
        if (!sh_num(d[i])) {
            sym = d[i];
            n_sym++;
            continue;
        }
        if (!sg_dim_mul(p, d[i], &p))
            return SH_UNK; /* overflows: not a number the runtime could make */
    }
    if (n_sym == 0)
        return p;
    if (n_sym == 1 && p == 1)
        return sym;
    for (int i = from; i < to; i++)
        if (d[i] == 0)
            return 0;
    return SH_UNK;
}

sg_status sh_flatten(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x) {
        int64_t unk[2] = {SH_UNK, SH_UNK};
        return sh_set_out(c, n, 0, 2, unk);
    }
    int64_t axis = sg_attr_int(n, "axis", 1);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return sh_fail(c, n, "axis %lld out of range for rank %d",
                       (long long)sg_attr_int(n, "axis", 1), x->rank);
    int64_t out[2] = {dims_product(x->d, 0, (int)axis), dims_product(x->d, (int)axis, x->rank)};
    return sh_set_out(c, n, 0, 2, out);
}

sg_status sh_transpose(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    size_t np;
    const int64_t *perm = sh_attr_ints(n, "perm", &np);
    int64_t out[SG_MAX_RANK];
    bool seen[SG_MAX_RANK] = {0};
    if (perm && np != (size_t)x->rank)
        return sh_fail(c, n, "perm has %zu entries for rank %d", np, x->rank);
    for (int i = 0; i < x->rank; i++) {
        int64_t p = perm ? perm[i] : x->rank - 1 - i;
        if (perm && !sh_axis(p, x->rank, &p))
            return sh_fail(c, n, "perm entry %lld out of range", (long long)perm[i]);
        if (seen[p])
            return sh_fail(c, n, "perm repeats %lld", (long long)p);
        seen[p] = true;
        out[i] = x->d[p];
    }
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_squeeze(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    const int64_t *axes;
    int32_t k;
    bool given;
    if (!x || !node_axes(c, n, 13, 1, &axes, &k, &given))
        return SG_OK;
    bool flags[SG_MAX_RANK];
    sg_status st = SG_OK;
    if (given) {
        if (!axes_flags(c, n, axes, k, x->rank, flags, &st))
            return st;
    } else {
        for (int i = 0; i < x->rank; i++) {
            if (!sh_num(x->d[i]))
                return SG_OK; /* whether it is 1 is not known */
            flags[i] = x->d[i] == 1;
        }
    }
    int64_t out[SG_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!flags[i]) {
            out[r++] = x->d[i];
        } else if (sh_num(x->d[i]) && x->d[i] != 1) {
            char a[256];
            return sh_fail(c, n, "squeezes axis %d of %s, which is not 1", i,
                           sh_fmt(c, x, a, sizeof a));
        }
    }
    st = sh_set_out(c, n, 0, r, out);
    return st ? st : pass_val(c, n, 0, 0);
}

sg_status sh_unsqueeze(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    const int64_t *axes;
    int32_t k;
    bool given;
    if (!x || !node_axes(c, n, 13, 1, &axes, &k, &given))
        return SG_OK;
    if (!given)
        return sh_fail(c, n, "no axes");
    int r = x->rank + k;
    if (r > SG_MAX_RANK)
        return sh_fail(c, n, "output rank %d is over %d", r, SG_MAX_RANK);
    bool flags[SG_MAX_RANK];
    sg_status st = SG_OK;
    if (!axes_flags(c, n, axes, k, r, flags, &st))
        return st;
    int64_t out[SG_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++)
        out[i] = flags[i] ? 1 : x->d[j++];
    st = sh_set_out(c, n, 0, r, out);
    return st ? st : pass_val(c, n, 0, 0);
}

/* ------------------------------------------------------ Concat, Split */

sg_status sh_concat(struct sh_ctx *c, sg_node *n)
{
    struct sh *first = NULL;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct sh *s = sh_in(c, n, i);
        if (!s)
            continue;
        if (s->rank < 0)
            return SG_OK;
        if (!first)
            first = s;
        else if (s->rank != first->rank) {
            char a[256], b[256];
            return sh_fail(c, n, "inputs of different ranks: %s and %s",
                           sh_fmt(c, first, a, sizeof a), sh_fmt(c, s, b, sizeof b));
        }
    }
    if (!first)
        return SG_OK;
    int r = first->rank;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", 0), r, &axis))
        return sh_fail(c, n, "axis %lld out of range for rank %d",
                       (long long)sg_attr_int(n, "axis", 0), r);
    int64_t out[SG_MAX_RANK];
    sh_dims_copy(out, first->d, r);
    int64_t sum = 0;
    bool known = true;
    int64_t vals[SH_MAX_VAL], syms[SH_MAX_VAL];
    int32_t nv = 0;
    bool have_vals = r == 1;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        struct sh *s = sh_in(c, n, i);
        if (!s)
            continue;
        for (int k = 0; k < r; k++) {
            if (k == axis)
                continue;
            if (!sh_unify(out[k], s->d[k], &out[k])) {
                char a[256], b[256];
                return sh_fail(c, n, "dim %d differs: %s and %s", k, sh_fmt(c, first, a, sizeof a),
                               sh_fmt(c, s, b, sizeof b));
            }
        }
        if (!sh_num(s->d[axis]))
            known = false;
        else if (!sg_dim_add(sum, s->d[axis], &sum))
            return sh_fail(c, n, "the concatenated dim overflows");
        const int64_t *v, *vs;
        int32_t k;
        if (have_vals && sh_in_val(c, n, i, &v, &vs, &k) && nv + k <= SH_MAX_VAL) {
            for (int32_t j = 0; j < k; j++) {
                vals[nv] = v[j];
                syms[nv++] = vs ? vs[j] : 0;
            }
        } else {
            have_vals = false;
        }
    }
    if (known)
        out[axis] = sum;
    else {
        /* Zero-sized and unknown parts: a single non-zero part keeps its dim. */
        int64_t only = SH_UNK;
        int parts = 0;
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            struct sh *s = sh_in(c, n, i);
            if (s && s->d[axis] != 0) {
                only = s->d[axis];
                parts++;
            }
        }
        out[axis] = parts == 1 ? only : SH_UNK;
    }
    sg_status st = sh_set_out(c, n, 0, r, out);
    return st || !have_vals ? st : sh_set_val(c, n, 0, nv, vals, syms);
}

sg_status sh_split(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", 0), x->rank, &axis))
        return sh_fail(c, n, "axis %lld out of range for rank %d",
                       (long long)sg_attr_int(n, "axis", 0), x->rank);
    uint32_t no = n->n_outputs;
    const int64_t *split = NULL;
    int32_t ns = 0;
    if (c->opset >= 13) {
        if (n->n_inputs > 1 && n->inputs[1] && !sh_in_ints(c, n, 1, &split, &ns))
            return SG_OK;
    } else {
        size_t k;
        split = sh_attr_ints(n, "split", &k);
        ns = (int32_t)k;
    }
    int64_t dim = x->d[axis];
    int64_t parts[256];
    if (no > 256)
        return SG_OK;
    if (split) {
        if ((uint32_t)ns != no)
            return sh_fail(c, n, "split has %d entries for %u outputs", ns, no);
        int64_t sum = 0;
        for (uint32_t i = 0; i < no; i++) {
            if (split[i] < 0 || !sg_dim_add(sum, split[i], &sum))
                return sh_fail(c, n, "split entry %lld is negative or the sum overflows",
                               (long long)split[i]);
            parts[i] = split[i];
        }
        if (sh_num(dim) && sum != dim)
            return sh_fail(c, n, "split sums to %lld, the axis is %lld", (long long)sum,
                           (long long)dim);
    } else if (!sh_num(dim)) {
        for (uint32_t i = 0; i < no; i++)
            parts[i] = no == 1 ? dim : SH_UNK;
    } else {
        int64_t num = sg_attr_int(n, "num_outputs", 0);
        if (num > 0 && (uint64_t)num != no)
            return sh_fail(c, n, "num_outputs %lld for %u outputs", (long long)num, no);
        if (!no)
            return SG_OK;
        if (num > 0) {
            int64_t chunk = sg_dim_ceildiv(dim, (int64_t)no);
            for (uint32_t i = 0; i < no; i++) {
                int64_t left = dim - chunk * (int64_t)i;
                parts[i] = left < 0 ? 0 : left < chunk ? left : chunk;
            }
        } else {
            if (dim % (int64_t)no)
                return sh_fail(c, n, "axis of %lld does not split into %u equal parts",
                               (long long)dim, no);
            for (uint32_t i = 0; i < no; i++)
                parts[i] = dim / (int64_t)no;
        }
    }
    int64_t out[SG_MAX_RANK];
    sh_dims_copy(out, x->d, x->rank);
    const int64_t *v, *vs;
    int32_t k;
    bool vals = x->rank == 1 && sh_in_val(c, n, 0, &v, &vs, &k);
    int64_t off = 0;
    sg_status st = SG_OK;
    for (uint32_t i = 0; i < no && !st; i++) {
        out[axis] = parts[i];
        st = sh_set_out(c, n, i, x->rank, out);
        if (!st && vals && sh_num(parts[i]) && off + parts[i] <= k)
            st = sh_set_val(c, n, i, (int32_t)parts[i], v + off, vs ? vs + off : NULL);
        off += sh_num(parts[i]) ? parts[i] : 0;
    }
    return st;
}

/* ---------------------------------------------------------------- Slice */

/* ONNX's start/end adjustment for one axis of length d (a number). */
static int64_t slice_len(int64_t d, int64_t s, int64_t e, int64_t step, int64_t *first)
{
    if (s < 0)
        s = s < -d ? (step > 0 ? 0 : -1) : s + d;
    if (e < 0)
        e = e < -d ? -1 : e + d;
    if (step > 0) {
        s = sg_dim_clamp(s, 0, d);
        e = sg_dim_clamp(e, 0, d);
    } else {
        s = sg_dim_clamp(s, -1, d - 1);
        e = sg_dim_clamp(e, -1, d - 1);
    }
    *first = s;
    int64_t span = step > 0 ? e - s : s - e, st = step > 0 ? step : -step;
    return span <= 0 ? 0 : sg_dim_ceildiv(span, st);
}

sg_status sh_slice(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    int32_t ks, ke, ka = 0, kst = 0;
    if (c->opset >= 10) {
        if (!sh_in_ints(c, n, 1, &starts, &ks) || !sh_in_ints(c, n, 2, &ends, &ke))
            goto unknown;
        if (n->n_inputs > 3 && n->inputs[3] && !sh_in_ints(c, n, 3, &axes, &ka))
            goto unknown;
        if (n->n_inputs > 4 && n->inputs[4] && !sh_in_ints(c, n, 4, &steps, &kst))
            goto unknown;
    } else {
        size_t a, b, d;
        starts = sh_attr_ints(n, "starts", &a);
        ends = sh_attr_ints(n, "ends", &b);
        axes = sh_attr_ints(n, "axes", &d);
        ks = (int32_t)a;
        ke = (int32_t)b;
        ka = (int32_t)d;
        if (!starts || !ends)
            return sh_fail(c, n, "no starts or ends");
    }
    if (ks != ke || (axes && ka != ks) || (steps && kst != ks))
        return sh_fail(c, n, "starts, ends, axes and steps differ in length (%d, %d, %d, %d)", ks,
                       ke, axes ? ka : ks, steps ? kst : ks);
    int64_t out[SG_MAX_RANK], first[SG_MAX_RANK], step_of[SG_MAX_RANK];
    bool seen[SG_MAX_RANK] = {0};
    sh_dims_copy(out, x->d, x->rank);
    for (int i = 0; i < x->rank; i++) {
        first[i] = 0;
        step_of[i] = 1;
    }
    for (int32_t i = 0; i < ks; i++) {
        int64_t a;
        if (!sh_axis(axes ? axes[i] : i, x->rank, &a) || seen[a])
            return sh_fail(c, n, "axis %lld out of range or repeated for rank %d",
                           (long long)(axes ? axes[i] : i), x->rank);
        seen[a] = true;
        int64_t step = steps ? steps[i] : 1;
        if (!step)
            return sh_fail(c, n, "step 0");
        step_of[a] = step;
        if (sh_num(x->d[a]))
            out[a] = slice_len(x->d[a], starts[i], ends[i], step, &first[a]);
        else if (!(starts[i] == 0 && step == 1 && ends[i] >= INT32_MAX))
            out[a] = SH_UNK;
    }
    sg_status st = sh_set_out(c, n, 0, x->rank, out);
    const int64_t *v, *vs;
    int32_t k;
    if (st || x->rank != 1 || !sh_num(out[0]) || !sh_in_val(c, n, 0, &v, &vs, &k) || k != x->d[0])
        return st;
    int64_t nv[SH_MAX_VAL], ns[SH_MAX_VAL];
    for (int64_t i = 0; i < out[0]; i++) {
        int64_t j = first[0] + i * step_of[0];
        nv[i] = v[j];
        ns[i] = vs ? vs[j] : 0;
    }
    return sh_set_val(c, n, 0, (int32_t)out[0], nv, ns);
unknown:;
    /* Rank is kept; the sliced axes are not known. */
    int64_t d[SG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        d[i] = SH_UNK;
    return sh_set_out(c, n, 0, x->rank, d);
}

/* --------------------------------------------------------------- Gathers */

sg_status sh_gather(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *idx = sh_in_ranked(c, n, 1);
    if (!x || !idx)
        return SG_OK;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", 0), x->rank, &axis))
        return sh_fail(c, n, "axis %lld out of range for rank %d",
                       (long long)sg_attr_int(n, "axis", 0), x->rank);
    int r = x->rank - 1 + idx->rank;
    if (r > SG_MAX_RANK)
        return sh_fail(c, n, "output rank %d is over %d", r, SG_MAX_RANK);
    int64_t out[SG_MAX_RANK];
    int o = 0;
    for (int i = 0; i < axis; i++)
        out[o++] = x->d[i];
    for (int i = 0; i < idx->rank; i++)
        out[o++] = idx->d[i];
    for (int i = (int)axis + 1; i < x->rank; i++)
        out[o++] = x->d[i];
    const int64_t *iv;
    int32_t ni;
    bool have_idx = sh_in_ints(c, n, 1, &iv, &ni);
    if (have_idx && sh_num(x->d[axis]))
        for (int32_t i = 0; i < ni; i++)
            if (iv[i] < -x->d[axis] || iv[i] >= x->d[axis]) {
                char a[256];
                return sh_fail(c, n, "index %lld is out of range for axis %lld of %s",
                               (long long)iv[i], (long long)axis, sh_fmt(c, x, a, sizeof a));
            }
    sg_status st = sh_set_out(c, n, 0, r, out);
    const int64_t *v, *vs;
    int32_t k;
    if (st || x->rank != 1 || !have_idx || idx->rank > 1 || !sh_in_val(c, n, 0, &v, &vs, &k))
        return st;
    int64_t nv[SH_MAX_VAL], ns[SH_MAX_VAL];
    for (int32_t i = 0; i < ni; i++) {
        int64_t j = iv[i] < 0 ? iv[i] + k : iv[i];
        if (j < 0 || j >= k)
            return st;
        nv[i] = v[j];
        ns[i] = vs ? vs[j] : 0;
    }
    return sh_set_val(c, n, 0, ni, nv, ns);
}

sg_status sh_gather_elements(struct sh_ctx *c, sg_node *n)
{
    return sh_copy_out(c, n, 0, 1);
}

sg_status sh_gather_nd(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *idx = sh_in_ranked(c, n, 1);
    if (!x || !idx)
        return SG_OK;
    int64_t b = sg_attr_int(n, "batch_dims", 0);
    if (idx->rank < 1 || b < 0 || b >= idx->rank || b >= x->rank)
        return sh_fail(c, n, "batch_dims %lld for data rank %d and indices rank %d", (long long)b,
                       x->rank, idx->rank);
    int64_t last = idx->d[idx->rank - 1];
    if (!sh_num(last))
        return SG_OK;
    if (last < 1 || b + last > x->rank)
        return sh_fail(c, n, "index tuples of %lld for data rank %d", (long long)last, x->rank);
    int64_t out[SG_MAX_RANK];
    int o = 0;
    for (int i = 0; i < idx->rank - 1; i++)
        out[o++] = idx->d[i];
    for (int64_t i = b + last; i < x->rank && o < SG_MAX_RANK; i++)
        out[o++] = x->d[i];
    return sh_set_out(c, n, 0, o, out);
}

/* ------------------------------------------------------------ Tile, Pad */

sg_status sh_tile(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    const int64_t *rep;
    int32_t k;
    if (!x)
        return SG_OK;
    if (!sh_in_ints(c, n, 1, &rep, &k)) {
        int64_t d[SG_MAX_RANK];
        for (int i = 0; i < x->rank; i++)
            d[i] = SH_UNK;
        return sh_set_out(c, n, 0, x->rank, d);
    }
    if (k != x->rank)
        return sh_fail(c, n, "repeats has %d entries for rank %d", k, x->rank);
    int64_t out[SG_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (rep[i] < 0)
            return sh_fail(c, n, "negative repeat %lld", (long long)rep[i]);
        if (rep[i] == 1 || x->d[i] == 0)
            out[i] = x->d[i];
        else if (!sh_num(x->d[i]))
            out[i] = rep[i] == 0 ? 0 : SH_UNK;
        else if (!sg_dim_mul(x->d[i], rep[i], &out[i]))
            return sh_fail(c, n, "tiled dim %d overflows", i);
    }
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_pad(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    const int64_t *pads, *axes = NULL;
    int32_t k, ka = 0;
    if (c->opset >= 11) {
        if (!sh_in_ints(c, n, 1, &pads, &k))
            goto unknown;
        if (n->n_inputs > 3 && n->inputs[3] && !sh_in_ints(c, n, 3, &axes, &ka))
            goto unknown;
    } else {
        size_t np;
        pads = sh_attr_ints(n, "pads", &np);
        k = (int32_t)np;
        if (!pads)
            return sh_fail(c, n, "no pads");
    }
    int na = axes ? ka : x->rank;
    if (k != 2 * na)
        return sh_fail(c, n, "pads has %d entries for %d axes", k, na);
    int64_t out[SG_MAX_RANK];
    sh_dims_copy(out, x->d, x->rank);
    for (int i = 0; i < na; i++) {
        int64_t a = i;
        if (axes && !sh_axis(axes[i], x->rank, &a))
            return sh_fail(c, n, "axis %lld out of range for rank %d", (long long)axes[i], x->rank);
        if (!sh_num(out[a])) {
            if (pads[i] || pads[na + i])
                out[a] = SH_UNK;
            continue;
        }
        int64_t v;
        if (!sg_dim_add(out[a], pads[i], &v) || !sg_dim_add(v, pads[na + i], &v) || v < 0)
            return sh_fail(c, n, "padded axis %lld is negative or overflows", (long long)a);
        out[a] = v;
    }
    return sh_set_out(c, n, 0, x->rank, out);
unknown:;
    int64_t d[SG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        d[i] = SH_UNK;
    return sh_set_out(c, n, 0, x->rank, d);
}

/* ------------------------------------------ ConstantOfShape, Range, ... */

sg_status sh_constant_of_shape(struct sh_ctx *c, sg_node *n)
{
    const int64_t *v, *vs;
    int32_t k;
    if (!sh_in_val(c, n, 0, &v, &vs, &k)) {
        struct sh *s = sh_in_ranked(c, n, 0);
        if (s && s->rank == 1 && sh_num(s->d[0]) && s->d[0] <= SG_MAX_RANK) {
            int64_t d[SG_MAX_RANK];
            for (int64_t i = 0; i < s->d[0]; i++)
                d[i] = SH_UNK;
            return sh_set_out(c, n, 0, (int)s->d[0], d);
        }
        return SG_OK;
    }
    if (k > SG_MAX_RANK)
        return sh_fail(c, n, "shape input has %d elements", k);
    int64_t d[SG_MAX_RANK];
    int64_t numel = 1;
    for (int32_t i = 0; i < k; i++) {
        if ((!vs || !vs[i]) && v[i] < 0)
            return sh_fail(c, n, "negative dim %lld", (long long)v[i]);
        d[i] = sh_val_dim(v, vs, i);
        if (numel >= 0 && sh_num(d[i]) && !sg_dim_mul(numel, d[i], &numel))
            return sh_fail(c, n, "element count overflows");
        if (!sh_num(d[i]))
            numel = -1;
    }
    sg_status st = sh_set_out(c, n, 0, k, d);
    if (st || k > 1 || numel < 0 || numel > SH_MAX_VAL)
        return st;
    /* The fill value, for the shape arithmetic that starts from it. */
    const sg_attr *at = sg_node_attr(n, "value");
    int64_t fill = 0;
    if (at && at->t) {
        if (!at->t->has_dtype || !sg_dtype_is_int(at->t->dtype))
            return st;
        size_t nb;
        const void *data = sg_tensor_data(c->m, at->t, &nb, NULL);
        if (!data || sg_tensor_numel(at->t) != 1)
            return st;
        fill = at->t->dtype == SG_DTYPE_INT64
                   ? *(const int64_t *)data
                   : sg_dim_from_double(sg_dtype_get_f64(at->t->dtype, data, 0));
    } else {
        return st; /* float zeros */
    }
    int64_t vals[SH_MAX_VAL];
    for (int64_t i = 0; i < numel; i++)
        vals[i] = fill;
    return sh_set_val(c, n, 0, (int32_t)numel, vals, NULL);
}

sg_status sh_range(struct sh_ctx *c, sg_node *n)
{
    const double *s, *l, *d;
    size_t ns, nl, nd;
    if (!sh_in_f64(c, n, 0, &s, &ns) || !sh_in_f64(c, n, 1, &l, &nl) ||
        !sh_in_f64(c, n, 2, &d, &nd)) {
        int64_t f = sh_fresh(c);
        return sh_set_out(c, n, 0, 1, &f);
    }
    if (ns != 1 || nl != 1 || nd != 1)
        return sh_fail(c, n, "start, limit and delta must be scalars");
    if (d[0] == 0)
        return sh_fail(c, n, "delta is 0");
    double cnt = ceil((l[0] - s[0]) / d[0]);
    if (!(cnt < 9.0e18))
        return sh_fail(c, n, "the range has too many elements");
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    sg_status st = sh_set_out(c, n, 0, 1, &len);
    struct sh *t = sh_in(c, n, 0);
    if (st || len > SH_MAX_VAL || !t || !sg_dtype_is_int(t->dtype))
        return st;
    int64_t v[SH_MAX_VAL];
    for (int64_t i = 0; i < len; i++)
        v[i] = (int64_t)s[0] + i * (int64_t)d[0];
    return sh_set_val(c, n, 0, (int32_t)len, v, NULL);
}

sg_status sh_nonzero(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    int64_t out[2] = {x ? x->rank : SH_UNK, sh_fresh(c)};
    return sh_set_out(c, n, 0, 2, out);
}

sg_status sh_fresh_1d(struct sh_ctx *c, sg_node *n)
{
    int64_t f = sh_fresh(c);
    return sh_set_out(c, n, 0, 1, &f);
}

sg_status sh_compress(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!sh_has_attr(n, "axis"))
        return sh_fresh_1d(c, n);
    if (!x)
        return SG_OK;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", 0), x->rank, &axis))
        return sh_fail(c, n, "axis out of range for rank %d", x->rank);
    int64_t out[SG_MAX_RANK];
    sh_dims_copy(out, x->d, x->rank);
    out[axis] = sh_fresh(c);
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_unique(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    int64_t u = sh_fresh(c);
    sg_status st = SG_OK;
    if (!sh_has_attr(n, "axis")) {
        st = sh_set_out(c, n, 0, 1, &u);
        int64_t numel = 1;
        for (int i = 0; x && i < x->rank && numel != SH_UNK; i++)
            if (!sh_num(x->d[i]) || !sg_dim_mul(numel, x->d[i], &numel))
                numel = SH_UNK;
        if (!x)
            numel = SH_UNK;
        if (!st && x && x->rank == 1)
            numel = x->d[0];
        if (!st)
            st = sh_set_out(c, n, 2, 1, &numel);
    } else if (x) {
        int64_t axis;
        if (!sh_axis(sg_attr_int(n, "axis", 0), x->rank, &axis))
            return sh_fail(c, n, "axis out of range for rank %d", x->rank);
        int64_t out[SG_MAX_RANK];
        sh_dims_copy(out, x->d, x->rank);
        out[axis] = u;
        st = sh_set_out(c, n, 0, x->rank, out);
        if (!st)
            st = sh_set_out(c, n, 2, 1, &x->d[axis]);
    }
    if (!st)
        st = sh_set_out(c, n, 1, 1, &u);
    if (!st)
        st = sh_set_out(c, n, 3, 1, &u);
    return st;
}

sg_status sh_topk(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", -1), x->rank, &axis))
        return sh_fail(c, n, "axis out of range for rank %d", x->rank);
    int64_t k = SH_UNK;
    if (c->opset < 10) {
        k = sg_attr_int(n, "k", -1);
    } else {
        const int64_t *v;
        int32_t nk;
        if (sh_in_ints(c, n, 1, &v, &nk)) {
            if (nk != 1)
                return sh_fail(c, n, "k has %d elements", nk);
            k = v[0];
        }
    }
    if (k != SH_UNK && (k < 0 || (sh_num(x->d[axis]) && k > x->d[axis])))
        return sh_fail(c, n, "k %lld is negative or larger than axis %lld", (long long)k,
                       (long long)x->d[axis]);
    int64_t out[SG_MAX_RANK];
    sh_dims_copy(out, x->d, x->rank);
    out[axis] = k;
    sg_status st = sh_set_out(c, n, 0, x->rank, out);
    return st ? st : sh_set_out(c, n, 1, x->rank, out);
}

static sg_status space_depth(struct sh_ctx *c, sg_node *n, bool to_space)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    int64_t b = sg_attr_int(n, "blocksize", 0), bb;
    if (x->rank != 4 || b < 1 || !sg_dim_mul(b, b, &bb))
        return sh_fail(c, n, "rank %d (not 4) or blocksize %lld", x->rank, (long long)b);
    int64_t out[4] = {x->d[0], SH_UNK, SH_UNK, SH_UNK};
    if (to_space) {
        if (sh_num(x->d[1])) {
            if (x->d[1] % bb)
                return sh_fail(c, n, "channels %lld not divisible by %lld", (long long)x->d[1],
                               (long long)bb);
            out[1] = x->d[1] / bb;
        }
        for (int i = 2; i < 4; i++)
            if (sh_num(x->d[i]) && !sg_dim_mul(x->d[i], b, &out[i]))
                return sh_fail(c, n, "output overflows");
    } else {
        if (sh_num(x->d[1]) && !sg_dim_mul(x->d[1], bb, &out[1]))
            return sh_fail(c, n, "output overflows");
        for (int i = 2; i < 4; i++)
            if (sh_num(x->d[i])) {
                if (x->d[i] % b)
                    return sh_fail(c, n, "dim %lld not divisible by %lld", (long long)x->d[i],
                                   (long long)b);
                out[i] = x->d[i] / b;
            }
    }
    return sh_set_out(c, n, 0, 4, out);
}

sg_status sh_depth_to_space(struct sh_ctx *c, sg_node *n)
{
    return space_depth(c, n, true);
}

sg_status sh_space_to_depth(struct sh_ctx *c, sg_node *n)
{
    return space_depth(c, n, false);
}

/* -------------------------------------------------------------- Resize */

sg_status sh_resize(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    bool upsample = strcmp(n->op_type, "Upsample") == 0;
    int64_t out[SG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        out[i] = SH_UNK;
    size_t nax;
    const int64_t *axes = sh_attr_ints(n, "axes", &nax);
    int na = axes ? (int)nax : x->rank;
    int64_t ax[SG_MAX_RANK];
    if (na > SG_MAX_RANK)
        return sh_fail(c, n, "%d axes", na);
    for (int i = 0; i < na; i++)
        if (!sh_axis(axes ? axes[i] : i, x->rank, &ax[i]))
            return sh_fail(c, n, "axis out of range for rank %d", x->rank);
    if (axes)
        sh_dims_copy(out, x->d, x->rank);
    uint32_t scales_in = upsample || c->opset < 11 ? 1 : 2;
    const int64_t *sz, *szs;
    int32_t nsz;
    bool has_sizes = !upsample && c->opset >= 11 && n->n_inputs > 3 && n->inputs[3];
    if (has_sizes && sh_in_val(c, n, 3, &sz, &szs, &nsz)) {
        if (nsz != na)
            return sh_fail(c, n, "sizes has %d entries for %d axes", nsz, na);
        sg_bytes pol = sg_attr_bytes(n, "keep_aspect_ratio_policy", (sg_bytes){NULL, 0});
        if (pol.len && !(pol.len == 7 && !memcmp(pol.data, "stretch", 7))) {
            for (int i = 0; i < na; i++)
                out[ax[i]] = SH_UNK;
        } else {
            for (int i = 0; i < na; i++) {
                if ((!szs || !szs[i]) && sz[i] < 0)
                    return sh_fail(c, n, "negative size %lld", (long long)sz[i]);
                out[ax[i]] = sh_val_dim(sz, szs, i);
            }
        }
        return sh_set_out(c, n, 0, x->rank, out);
    }
    const double *sc = NULL;
    size_t nsc = 0;
    if (upsample && c->opset < 9) {
        const sg_attr *at = sg_node_attr(n, "scales");
        if (at && at->n_floats == (size_t)x->rank) {
            double *b = sg_arena_alloc(c->a, (size_t)x->rank * sizeof *b);
            if (!b)
                return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
            for (int i = 0; i < x->rank; i++)
                b[i] = at->floats[i];
            sc = b;
            nsc = at->n_floats;
        }
    } else if (n->n_inputs > scales_in && n->inputs[scales_in]) {
        if (!sh_in_f64(c, n, scales_in, &sc, &nsc))
            sc = NULL;
        else if (nsc == 0 && has_sizes)
            sc = NULL; /* empty scales beside unknown sizes */
    }
    if (sc && nsc) {
        if (nsc != (size_t)na)
            return sh_fail(c, n, "scales has %zu entries for %d axes", nsc, na);
        for (int i = 0; i < na; i++) {
            int64_t d = x->d[ax[i]];
            if (!(sc[i] > 0) && !(sc[i] == 0))
                return sh_fail(c, n, "scale %g is negative or not a number", sc[i]);
            if (sc[i] == 1.0)
                out[ax[i]] = d;
            else if (sh_num(d)) {
                double v = floor((double)d * sc[i]);
                if (!(v < 9.0e18))
                    return sh_fail(c, n, "scaled dim overflows");
                out[ax[i]] = (int64_t)v;
            } else
                out[ax[i]] = SH_UNK;
        }
    }
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_onehot(struct sh_ctx *c, sg_node *n)
{
    struct sh *idx = sh_in_ranked(c, n, 0);
    if (!idx)
        return SG_OK;
    int r = idx->rank + 1;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", -1), r, &axis))
        return sh_fail(c, n, "axis out of range for rank %d", r);
    const double *dv;
    size_t nd;
    int64_t depth = SH_UNK;
    if (sh_in_f64(c, n, 1, &dv, &nd) && nd == 1) {
        if (!(dv[0] >= 1) || !(dv[0] < 9.0e18))
            return sh_fail(c, n, "depth %g", dv[0]);
        depth = (int64_t)dv[0];
    }
    int64_t out[SG_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++)
        out[i] = i == axis ? depth : idx->d[j++];
    return sh_set_out(c, n, 0, r, out);
}

sg_status sh_eyelike(struct sh_ctx *c, sg_node *n)
{
    return sh_copy_out(c, n, 0, 0);
}
