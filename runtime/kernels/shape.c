/*
 * shape.c - ops that move elements without computing on them: Identity,
 * Reshape, Flatten, Squeeze, Unsqueeze (views sharing the input's
 * storage), Shape, Size, Transpose, Concat, Split, Slice, Expand, Tile,
 * Pad, CenterCropPad, Trilu, DepthToSpace, SpaceToDepth.
 *
 * They work on every dtype, strings included, by element size.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <string.h>

static size_t esize(const sg_rt_value *v)
{
    return sg_rt_elem_size(v->dtype);
}

/* The int64 list of attribute `name` (opset < since) or of input `in`. */
static sg_status ints_from(struct sg_kctx *k, const char *name, uint32_t in, int64_t since,
                           const int64_t **v, int64_t *n)
{
    if (k->opset < since) {
        *n = sg_kattr_ints(k, name, v);
        return SG_OK;
    }
    if (!sg_kin(k, in)) {
        *v = NULL;
        *n = -1;
        return SG_OK;
    }
    return sg_kin_ints(k, in, v, n);
}

/* ------------------------------------------------------------- views */

static sg_status run_identity(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    return sg_kout_value(k, 0, (sg_rt_value *)X);
}

static sg_status run_reshape(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *shape;
    int64_t n;
    sg_status st = ints_from(k, "shape", 1, 5, &shape, &n);
    if (st)
        return st;
    if (n < 0)
        return sg_kfail(k, SG_EUNDEF, "no shape given");
    if (n > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "rank %lld is too large", (long long)n);
    bool allowzero = sg_kattr_int(k, "allowzero", 0) != 0;
    int64_t dims[SG_MAX_RANK], known = 1;
    int infer = -1;
    for (int64_t i = 0; i < n; i++) {
        dims[i] = shape[i];
        if (shape[i] == 0 && !allowzero) {
            if (i >= X->rank)
                return sg_kfail(k, SG_ESHAPE, "shape %s copies dimension %lld of %s",
                                sg_kdims(k, shape, (uint32_t)n), (long long)i, sg_kshape(k, X));
            dims[i] = X->dims[i];
        }
        if (dims[i] == -1) {
            if (infer >= 0)
                return sg_kfail(k, SG_ESHAPE, "shape %s has more than one -1",
                                sg_kdims(k, shape, (uint32_t)n));
            infer = (int)i;
        } else if (dims[i] < 0) {
            return sg_kfail(k, SG_ESHAPE, "bad shape %s", sg_kdims(k, shape, (uint32_t)n));
        } else if (!sg_dim_mul(known, dims[i], &known)) {
            return sg_kfail(k, SG_ERANGE, "shape %s has too many elements",
                            sg_kdims(k, shape, (uint32_t)n));
        }
    }
    if (infer >= 0) {
        if (known == 0 || X->numel % known)
            return sg_kfail(k, SG_ESHAPE, "cannot reshape %s to %s", sg_kshape(k, X),
                            sg_kdims(k, shape, (uint32_t)n));
        dims[infer] = X->numel / known;
    }
    return sg_kout_alias(k, 0, X, dims, (uint32_t)n);
}

static sg_status run_flatten(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t axis = sg_kattr_int(k, "axis", 1);
    if (axis < 0)
        axis += X->rank;
    if (axis < 0 || axis > X->rank)
        return sg_kfail(k, SG_ERANGE, "axis %lld is out of range for %s",
                        (long long)sg_kattr_int(k, "axis", 1), sg_kshape(k, X));
    int64_t dims[2] = {1, 1};
    for (uint32_t d = 0; d < X->rank; d++)
        dims[d < axis ? 0 : 1] *= X->dims[d];
    return sg_kout_alias(k, 0, X, dims, 2);
}

static sg_status run_squeeze(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *axes;
    int64_t n;
    sg_status st = ints_from(k, "axes", 1, 13, &axes, &n);
    if (st)
        return st;
    bool drop[SG_MAX_RANK] = {false};
    if (n < 0) {
        for (uint32_t d = 0; d < X->rank; d++)
            drop[d] = X->dims[d] == 1;
    } else {
        for (int64_t i = 0; i < n; i++) {
            uint32_t a;
            if ((st = sg_kaxis(k, axes[i], X->rank, &a)))
                return st;
            if (X->dims[a] != 1)
                return sg_kfail(k, SG_ESHAPE, "cannot squeeze axis %lld of %s", (long long)axes[i],
                                sg_kshape(k, X));
            drop[a] = true;
        }
    }
    int64_t dims[SG_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t d = 0; d < X->rank; d++)
        if (!drop[d])
            dims[r++] = X->dims[d];
    return sg_kout_alias(k, 0, X, dims, r);
}

static sg_status run_unsqueeze(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *axes;
    int64_t n;
    sg_status st = ints_from(k, "axes", 1, 13, &axes, &n);
    if (st)
        return st;
    if (n < 0)
        return sg_kfail(k, SG_EUNDEF, "no axes given");
    uint32_t r = X->rank + (uint32_t)n;
    if (r > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "rank %u is too large", r);
    bool ins[SG_MAX_RANK] = {false};
    for (int64_t i = 0; i < n; i++) {
        uint32_t a;
        if ((st = sg_kaxis(k, axes[i], r, &a)))
            return st;
        if (ins[a])
            return sg_kfail(k, SG_EINVAL, "axis %lld is repeated", (long long)axes[i]);
        ins[a] = true;
    }
    int64_t dims[SG_MAX_RANK];
    for (uint32_t d = 0, s = 0; d < r; d++)
        dims[d] = ins[d] ? 1 : X->dims[s++];
    return sg_kout_alias(k, 0, X, dims, r);
}

static sg_status run_shape(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t r = X->rank;
    int64_t start = sg_kattr_int(k, "start", 0), end = sg_kattr_int(k, "end", r);
    if (start < 0)
        start += r;
    if (end < 0)
        end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t n = end > start ? end - start : 0;
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_INT64, &n, 1, &Y);
    if (st)
        return st;
    for (int64_t i = 0; i < n; i++)
        ((int64_t *)Y->data)[i] = X->dims[start + i];
    return SG_OK;
}

static sg_status run_size(struct sg_kctx *k)
{
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_INT64, NULL, 0, &Y);
    if (!st)
        *(int64_t *)Y->data = sg_kin(k, 0)->numel;
    return st;
}

/* ------------------------------------------------------------ copies */

static sg_status run_transpose(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *perm;
    int64_t n = sg_kattr_ints(k, "perm", &perm);
    int64_t rev[SG_MAX_RANK];
    if (n < 0) {
        for (uint32_t d = 0; d < X->rank; d++)
            rev[d] = X->rank - 1 - d;
        perm = rev;
        n = X->rank;
    }
    if (n != X->rank)
        return sg_kfail(k, SG_ESHAPE, "perm %s does not fit %s", sg_kdims(k, perm, (uint32_t)n),
                        sg_kshape(k, X));
    int64_t str[SG_MAX_RANK], dims[SG_MAX_RANK], ostr[SG_MAX_RANK];
    bool used[SG_MAX_RANK] = {false};
    sg_rt_strides(X->dims, X->rank, str);
    for (uint32_t d = 0; d < X->rank; d++) {
        if (perm[d] < 0 || perm[d] >= X->rank || used[perm[d]])
            return sg_kfail(k, SG_EINVAL, "perm %s is not a permutation",
                            sg_kdims(k, perm, (uint32_t)n));
        used[perm[d]] = true;
        dims[d] = X->dims[perm[d]];
        ostr[d] = str[perm[d]];
    }
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, dims, X->rank, &Y);
    if (!st)
        sg_rt_copy_strided(Y->data, X->data, esize(X), X->rank, dims, ostr, 0);
    return st;
}

static sg_status run_concat(struct sg_kctx *k)
{
    const sg_rt_value *first = NULL;
    for (uint32_t i = 0; i < k->n_in && !first; i++)
        first = sg_kin(k, i);
    if (!first)
        return sg_kfail(k, SG_EUNDEF, "no inputs");
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 1), first->rank, &axis);
    if (st)
        return st;
    int64_t dims[SG_MAX_RANK];
    memcpy(dims, first->dims, first->rank * sizeof dims[0]);
    dims[axis] = 0;
    for (uint32_t i = 0; i < k->n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        if (!x)
            continue;
        bool ok = x->rank == first->rank && x->dtype == first->dtype;
        for (uint32_t d = 0; ok && d < x->rank; d++)
            ok = d == axis || x->dims[d] == first->dims[d];
        if (!ok)
            return sg_kfail(k, SG_ESHAPE, "input %u %s does not match %s along axis %u", i,
                            sg_kshape(k, x), sg_kshape(k, first), axis);
        if (!sg_dim_add(dims[axis], x->dims[axis], &dims[axis]))
            return sg_kfail(k, SG_ERANGE, "the inputs' sizes along axis %u add up past 2^63", axis);
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, first->dtype, dims, first->rank, &Y)))
        return st;
    int64_t outer = 1, inner = 1;
    for (uint32_t d = 0; d < axis; d++)
        outer *= dims[d];
    for (uint32_t d = axis + 1; d < first->rank; d++)
        inner *= dims[d];
    size_t es = esize(first);
    size_t orow = (size_t)(dims[axis] * inner) * es;
    size_t pos = 0;
    for (uint32_t i = 0; i < k->n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        if (!x || !x->numel)
            continue;
        size_t row = (size_t)(x->dims[axis] * inner) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)Y->data + (size_t)o * orow + pos,
                   (const char *)x->data + (size_t)o * row, row);
        pos += row;
    }
    return SG_OK;
}

static sg_status run_split(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), X->rank, &axis);
    if (st)
        return st;
    const int64_t *split;
    int64_t n;
    if ((st = ints_from(k, "split", 1, 13, &split, &n)))
        return st;
    uint32_t nout = k->n_out;
    /* num_outputs (18): the count of equal parts, which must be the node's
     * output count; it excludes the split input. */
    const sg_attr *num = k->opset >= 18 ? sg_kattr(k, "num_outputs") : NULL;
    if (num) {
        int64_t want = sg_kattr_int(k, "num_outputs", 0);
        if (n >= 0)
            return sg_kfail(k, SG_EINVAL, "both the split input and num_outputs are given");
        if (want != (int64_t)nout)
            return sg_kfail(k, SG_EINVAL, "num_outputs is %lld but the node has %u outputs",
                            (long long)want, nout);
    }
    int64_t *sizes = sg_kscratch(k, (nout + 1) * sizeof *sizes);
    if (!sizes)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t total = X->dims[axis];
    if (n >= 0) {
        int64_t sum = 0;
        bool ok = true;
        for (int64_t i = 0; i < n && ok; i++)
            ok = split[i] >= 0 && sg_dim_add(sum, split[i], &sum);
        if (n != nout || !ok || sum != total)
            return sg_kfail(k, SG_ESHAPE, "split %s does not fit %u outputs of axis %u of %s",
                            sg_kdims(k, split, (uint32_t)n), nout, axis, sg_kshape(k, X));
        memcpy(sizes, split, nout * sizeof *sizes);
    } else {
        /* Equal parts; since opset 18 the last may be smaller. */
        int64_t part = (total + nout - 1) / nout;
        if (k->opset < 18 && total % nout)
            return sg_kfail(k, SG_ESHAPE, "axis %u of %s does not split into %u equal parts", axis,
                            sg_kshape(k, X), nout);
        for (uint32_t i = 0; i < nout; i++) {
            int64_t left = total - part * i;
            sizes[i] = left < 0 ? 0 : left < part ? left : part;
        }
    }
    int64_t outer = 1, inner = 1;
    for (uint32_t d = 0; d < axis; d++)
        outer *= X->dims[d];
    for (uint32_t d = axis + 1; d < X->rank; d++)
        inner *= X->dims[d];
    size_t es = esize(X);
    size_t irow = (size_t)(total * inner) * es, pos = 0;
    for (uint32_t i = 0; i < nout; i++) {
        int64_t dims[SG_MAX_RANK];
        memcpy(dims, X->dims, X->rank * sizeof dims[0]);
        dims[axis] = sizes[i];
        sg_rt_value *Y;
        if ((st = sg_kout(k, i, X->dtype, dims, X->rank, &Y)))
            return st;
        size_t row = (size_t)(sizes[i] * inner) * es;
        for (int64_t o = 0; o < outer && row; o++)
            memcpy((char *)Y->data + (size_t)o * row,
                   (const char *)X->data + (size_t)o * irow + pos, row);
        pos += row;
    }
    return SG_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static sg_status run_slice(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    int64_t ns, ne, na = -1, nst = -1;
    sg_status st;
    if (k->opset < 10) {
        ns = sg_kattr_ints(k, "starts", &starts);
        ne = sg_kattr_ints(k, "ends", &ends);
        na = sg_kattr_ints(k, "axes", &axes);
    } else {
        if ((st = sg_kin_ints(k, 1, &starts, &ns)) || (st = sg_kin_ints(k, 2, &ends, &ne)))
            return st;
        if (sg_kin(k, 3) && (st = sg_kin_ints(k, 3, &axes, &na)))
            return st;
        if (sg_kin(k, 4) && (st = sg_kin_ints(k, 4, &steps, &nst)))
            return st;
    }
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return sg_kfail(k, SG_EINVAL, "starts, ends, axes and steps differ in length");
    int64_t start[SG_MAX_RANK], step[SG_MAX_RANK], dims[SG_MAX_RANK];
    bool seen[SG_MAX_RANK] = {false};
    for (uint32_t d = 0; d < X->rank; d++) {
        start[d] = 0;
        step[d] = 1;
        dims[d] = X->dims[d];
    }
    for (int64_t i = 0; i < ns; i++) {
        uint32_t a;
        if ((st = sg_kaxis(k, axes ? axes[i] : i, X->rank, &a)))
            return st;
        if (seen[a])
            return sg_kfail(k, SG_EINVAL, "axis %u is repeated", a);
        seen[a] = true;
        int64_t dim = X->dims[a], s = steps ? steps[i] : 1, b = starts[i], e = ends[i];
        if (s == 0)
            return sg_kfail(k, SG_EINVAL, "step 0 on axis %u", a);
        if (b < 0)
            b += dim;
        if (e < 0)
            e += dim;
        /* ceil(span / |s|); |INT64_MIN| is past any span, one element. */
        if (s > 0) {
            b = clamp64(b, 0, dim);
            e = clamp64(e, 0, dim);
            dims[a] = e > b ? sg_dim_ceildiv(e - b, s) : 0;
        } else {
            b = clamp64(b, 0, dim - 1);
            e = clamp64(e, -1, dim - 1);
            dims[a] = b <= e ? 0 : s == INT64_MIN ? 1 : sg_dim_ceildiv(b - e, -s);
        }
        start[a] = b;
        step[a] = s;
    }
    /* A step matters only where two or more elements are taken, and then
     * |step| < dim: the strides stay within the input. */
    int64_t str[SG_MAX_RANK], sstr[SG_MAX_RANK], off = 0;
    sg_rt_strides(X->dims, X->rank, str);
    for (uint32_t d = 0; d < X->rank; d++) {
        sstr[d] = dims[d] > 1 ? str[d] * step[d] : 0;
        if (dims[d])
            off += start[d] * str[d];
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, X->rank, &Y)))
        return st;
    sg_rt_copy_strided(Y->data, X->data, esize(X), X->rank, dims, sstr, off);
    return SG_OK;
}

static sg_status run_expand(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *shape;
    int64_t n;
    sg_status st = sg_kin_ints(k, 1, &shape, &n);
    if (st)
        return st;
    if (n > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "rank %lld is too large", (long long)n);
    struct sg_bcast b;
    const int64_t *dl[2] = {X->dims, shape};
    uint32_t rl[2] = {X->rank, (uint32_t)n};
    if ((st = sg_bcast_init_dims(k, &b, 2, dl, rl)))
        return st;
    int64_t str[SG_MAX_RANK], sstr[SG_MAX_RANK];
    sg_rt_strides(X->dims, X->rank, str);
    for (uint32_t d = 0; d < b.rank; d++) {
        int64_t xd = (int64_t)d - (int64_t)(b.rank - X->rank);
        sstr[d] = xd < 0 || X->dims[xd] == 1 ? 0 : str[xd];
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, b.dims, b.rank, &Y)))
        return st;
    sg_rt_copy_strided(Y->data, X->data, esize(X), b.rank, b.dims, sstr, 0);
    return SG_OK;
}

static sg_status run_tile(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *rep;
    int64_t n;
    sg_status st = sg_kin_ints(k, 1, &rep, &n);
    if (st)
        return st;
    if (n != X->rank || 2 * X->rank > SG_MAX_RANK)
        return sg_kfail(k, SG_ESHAPE, "repeats %s do not fit %s", sg_kdims(k, rep, (uint32_t)n),
                        sg_kshape(k, X));
    /* Tile is a broadcast of X viewed as [1,d0,1,d1,...] to [r0,d0,r1,d1,...]. */
    int64_t str[SG_MAX_RANK], vdims[SG_MAX_RANK], vstr[SG_MAX_RANK], dims[SG_MAX_RANK];
    sg_rt_strides(X->dims, X->rank, str);
    for (uint32_t d = 0; d < X->rank; d++) {
        if (rep[d] < 0)
            return sg_kfail(k, SG_ERANGE, "negative repeat %lld", (long long)rep[d]);
        vdims[2 * d] = rep[d];
        vstr[2 * d] = 0;
        vdims[2 * d + 1] = X->dims[d];
        vstr[2 * d + 1] = str[d];
        if (!sg_dim_mul(X->dims[d], rep[d], &dims[d]))
            return sg_kfail(k, SG_ERANGE, "repeats %s make axis %u of %s overflow",
                            sg_kdims(k, rep, (uint32_t)n), d, sg_kshape(k, X));
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, X->rank, &Y)))
        return st;
    sg_rt_copy_strided(Y->data, X->data, esize(X), 2 * X->rank, vdims, vstr, 0);
    return SG_OK;
}

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

/*
 * CenterCropPad (18): each listed axis (all by default, else the `axes`
 * attribute) becomes its `shape` entry, cropped or zero-padded about the
 * centre; an odd difference leaves the extra element at the end (the
 * reference's slices start at difference / 2, rounded down).
 */
static sg_status run_center_crop_pad(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *shape, *axes = NULL;
    int64_t ns, na;
    sg_status st = sg_kin_ints(k, 1, &shape, &ns);
    if (st)
        return st;
    na = sg_kattr_ints(k, "axes", &axes);
    if (na <= 0)
        na = -1;
    uint32_t nax = na < 0 ? X->rank : (uint32_t)na;
    if (ns != (int64_t)nax)
        return sg_kfail(k, SG_ESHAPE, "shape %s has %lld entries for %u axes of %s",
                        sg_kdims(k, shape, (uint32_t)(ns < 0 ? 0 : ns)), (long long)ns, nax,
                        sg_kshape(k, X));
    int64_t dims[SG_MAX_RANK], in0[SG_MAX_RANK], out0[SG_MAX_RANK], len[SG_MAX_RANK];
    bool seen[SG_MAX_RANK] = {false};
    for (uint32_t d = 0; d < X->rank; d++) {
        dims[d] = len[d] = X->dims[d];
        in0[d] = out0[d] = 0;
    }
    for (uint32_t i = 0; i < nax; i++) {
        uint32_t a = i;
        if (na >= 0 && (st = sg_kaxis(k, axes[i], X->rank, &a)))
            return st;
        if (seen[a])
            return sg_kfail(k, SG_EINVAL, "axis %u is listed twice", a);
        seen[a] = true;
        if (shape[i] < 0)
            return sg_kfail(k, SG_ERANGE, "shape entry %lld is negative", (long long)shape[i]);
        int64_t dim = X->dims[a], sh = shape[i];
        dims[a] = sh;
        len[a] = sh < dim ? sh : dim;
        if (sh < dim)
            in0[a] = (dim - sh) / 2;
        else
            out0[a] = (sh - dim) / 2;
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, X->rank, &Y)))
        return st;
    if (!Y->numel || X->rank == 0) {
        if (X->rank == 0)
            memcpy(Y->data, X->data, esize(X));
        return SG_OK;
    }
    for (uint32_t d = 0; d < X->rank; d++)
        if (!len[d])
            return SG_OK;
    /* Copy the kept block row by row (the last axis is contiguous). */
    int64_t xs[SG_MAX_RANK], ys[SG_MAX_RANK], idx[SG_MAX_RANK] = {0};
    sg_rt_strides(X->dims, X->rank, xs);
    sg_rt_strides(dims, X->rank, ys);
    size_t es = esize(X);
    uint32_t last = X->rank - 1;
    for (;;) {
        int64_t xo = 0, yo = 0;
        for (uint32_t d = 0; d < X->rank; d++) {
            xo += (in0[d] + (d == last ? 0 : idx[d])) * xs[d];
            yo += (out0[d] + (d == last ? 0 : idx[d])) * ys[d];
        }
        memcpy((char *)Y->data + (size_t)yo * es, (const char *)X->data + (size_t)xo * es,
               (size_t)len[last] * es);
        uint32_t d = last;
        while (d > 0) {
            d--;
            if (++idx[d] < len[d])
                break;
            idx[d] = 0;
            if (d == 0)
                return SG_OK;
        }
        if (last == 0)
            return SG_OK;
    }
}

static sg_status run_pad(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const char *mode_s = sg_kattr_string(k, "mode", "constant");
    enum pad_mode mode;
    if (strcmp(mode_s, "constant") == 0)
        mode = PAD_CONSTANT;
    else if (strcmp(mode_s, "reflect") == 0)
        mode = PAD_REFLECT;
    else if (strcmp(mode_s, "edge") == 0)
        mode = PAD_EDGE;
    else if (strcmp(mode_s, "wrap") == 0 && k->opset >= 19)
        mode = PAD_WRAP;
    else
        return sg_kfail(k, SG_EINVAL, "unknown mode '%s'%s", mode_s,
                        strcmp(mode_s, "wrap") == 0 ? " (wrap is from opset 19)" : "");
    const int64_t *pads, *axes = NULL;
    int64_t np, na = -1;
    sg_status st;
    const sg_rt_value *C = NULL;
    double cval = 0;
    if (k->opset < 11) {
        np = sg_kattr_ints(k, k->opset < 2 ? "paddings" : "pads", &pads);
        cval = sg_kattr_float(k, "value", 0);
    } else {
        if ((st = sg_kin_ints(k, 1, &pads, &np)))
            return st;
        C = sg_kin(k, 2);
        if (C && C->numel)
            cval = sg_rt_get_f64(C, 0);
        if (sg_kin(k, 3) && (st = sg_kin_ints(k, 3, &axes, &na)))
            return st;
    }
    uint32_t nax = axes ? (uint32_t)na : X->rank;
    if (np != 2 * (int64_t)nax)
        return sg_kfail(k, SG_ESHAPE, "%lld pads for %u axes of %s", (long long)np, nax,
                        sg_kshape(k, X));
    int64_t lo[SG_MAX_RANK] = {0}, hi[SG_MAX_RANK] = {0}, dims[SG_MAX_RANK];
    for (uint32_t i = 0; i < nax; i++) {
        uint32_t a = i;
        if (axes && (st = sg_kaxis(k, axes[i], X->rank, &a)))
            return st;
        lo[a] = pads[i];
        hi[a] = pads[i + nax];
    }
    for (uint32_t d = 0; d < X->rank; d++) {
        if (!sg_dim_add(X->dims[d], lo[d], &dims[d]) || !sg_dim_add(dims[d], hi[d], &dims[d]))
            return sg_kfail(k, SG_ERANGE, "pads %lld and %lld overflow axis %u of %s",
                            (long long)lo[d], (long long)hi[d], d, sg_kshape(k, X));
        if (dims[d] < 0)
            return sg_kfail(k, SG_ESHAPE, "pads make axis %u of %s negative", d, sg_kshape(k, X));
        if (mode != PAD_CONSTANT && X->dims[d] == 0 && dims[d] > 0)
            return sg_kfail(k, SG_ESHAPE, "cannot %s-pad an empty axis", mode_s);
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, X->rank, &Y)))
        return st;
    size_t es = esize(X);
    /* The fill value in the output's type. */
    char fill[16] = {0};
    if (mode == PAD_CONSTANT && X->dtype != SG_DTYPE_STRING) {
        sg_rt_value tmp;
        memcpy(&tmp, Y, sizeof tmp);
        tmp.data = fill;
        if (C && C->dtype == X->dtype && C->numel)
            memcpy(fill, C->data, es);
        else
            sg_rt_set_f64(&tmp, 0, cval);
    }
    int64_t str[SG_MAX_RANK], idx[SG_MAX_RANK] = {0};
    sg_rt_strides(X->dims, X->rank, str);
    char *y = Y->data;
    for (int64_t o = 0; o < Y->numel; o++) {
        int64_t off = 0;
        bool outside = false;
        for (uint32_t d = 0; d < X->rank; d++) {
            /* The input index; with pads near 2^63 (a crop of INT64_MIN)
             * it only fits 128 bits, and its remainder below does. */
            __int128 s128 = (__int128)idx[d] - lo[d];
            int64_t n = X->dims[d], s = s128 < 0 ? -1 : s128 >= n ? n : (int64_t)s128;
            if (s < 0 || s >= n) {
                switch (mode) {
                case PAD_CONSTANT:
                    outside = true;
                    break;
                case PAD_EDGE:
                    s = s < 0 ? 0 : n - 1;
                    break;
                case PAD_WRAP:
                    s = (int64_t)(((s128 % n) + n) % n);
                    break;
                case PAD_REFLECT:
                    if (n == 1) {
                        s = 0;
                    } else {
                        int64_t period = 2 * (n - 1);
                        s = (int64_t)(((s128 % period) + period) % period);
                        if (s >= n)
                            s = period - s;
                    }
                    break;
                }
            }
            off += s * str[d];
        }
        if (outside)
            memcpy(y + o * (int64_t)es, fill, es);
        else
            memcpy(y + o * (int64_t)es, (const char *)X->data + off * (int64_t)es, es);
        for (int d = (int)X->rank - 1; d >= 0; d--) {
            if (++idx[d] < dims[d])
                break;
            idx[d] = 0;
        }
    }
    return SG_OK;
}

static sg_status run_trilu(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->rank < 2)
        return sg_kfail(k, SG_ESHAPE, "needs rank >= 2, got %s", sg_kshape(k, X));
    int64_t diag = 0;
    const sg_rt_value *K = sg_kin(k, 1);
    if (K) {
        if (K->numel != 1)
            return sg_kfail(k, SG_ESHAPE, "k must be a scalar, got %s", sg_kshape(k, K));
        diag = sg_rt_get_i64(K, 0);
    }
    bool upper = sg_kattr_int(k, "upper", 1) != 0;
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    size_t es = esize(X);
    int64_t rows = X->dims[X->rank - 2], cols = X->dims[X->rank - 1];
    int64_t mats = rows && cols ? X->numel / (rows * cols) : 0;
    memcpy(Y->data, X->data, (size_t)X->numel * es);
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                bool keep = upper ? j - i >= diag : j - i <= diag;
                if (!keep)
                    memset((char *)Y->data + ((m * rows + i) * cols + j) * (int64_t)es, 0, es);
            }
    return SG_OK;
}

/* DepthToSpace / SpaceToDepth as one 6-d transpose. */
static sg_status run_depth_space(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t b = sg_kattr_int(k, "blocksize", 0);
    if (X->rank != 4 || b <= 0)
        return sg_kfail(k, SG_ESHAPE, "needs a 4-d input and blocksize > 0, got %s, %lld",
                        sg_kshape(k, X), (long long)b);
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3];
    int64_t vd[6], perm[6], out[4];
    bool d2s = strcmp(k->node->op_type, "DepthToSpace") == 0;
    /* The dims that grow: H and W by b (depth to space), C by b^2. */
    int64_t bb, grown[3];
    if (!sg_dim_mul(b, b, &bb) ||
        (d2s ? !sg_dim_mul(H, b, &grown[0]) || !sg_dim_mul(W, b, &grown[1])
             : !sg_dim_mul(C, bb, &grown[2])))
        return sg_kfail(k, SG_ERANGE, "blocksize %lld is too large for %s", (long long)b,
                        sg_kshape(k, X));
    if (d2s) {
        if (C % bb)
            return sg_kfail(k, SG_ESHAPE, "channels of %s do not divide by blocksize^2",
                            sg_kshape(k, X));
        bool crd = strcmp(sg_kattr_string(k, "mode", "DCR"), "CRD") == 0;
        int64_t c = C / bb;
        if (crd) { /* [N, c, b, b, H, W] -> [N, c, H, b, W, b] */
            int64_t v[6] = {N, c, b, b, H, W}, p[6] = {0, 1, 4, 2, 5, 3};
            memcpy(vd, v, sizeof v);
            memcpy(perm, p, sizeof p);
        } else { /* [N, b, b, c, H, W] -> [N, c, H, b, W, b] */
            int64_t v[6] = {N, b, b, c, H, W}, p[6] = {0, 3, 4, 1, 5, 2};
            memcpy(vd, v, sizeof v);
            memcpy(perm, p, sizeof p);
        }
        out[0] = N, out[1] = c, out[2] = grown[0], out[3] = grown[1];
    } else {
        if (H % b || W % b)
            return sg_kfail(k, SG_ESHAPE, "height and width of %s do not divide by blocksize",
                            sg_kshape(k, X));
        /* [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b] */
        int64_t v[6] = {N, C, H / b, b, W / b, b}, p[6] = {0, 3, 5, 1, 2, 4};
        memcpy(vd, v, sizeof v);
        memcpy(perm, p, sizeof p);
        out[0] = N, out[1] = grown[2], out[2] = H / b, out[3] = W / b;
    }
    int64_t str[6], dims[6], pstr[6];
    sg_rt_strides(vd, 6, str);
    for (int d = 0; d < 6; d++) {
        dims[d] = vd[perm[d]];
        pstr[d] = str[perm[d]];
    }
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, out, 4, &Y);
    if (!st)
        sg_rt_copy_strided(Y->data, X->data, esize(X), 6, dims, pstr, 0);
    return st;
}

#define ANY SG_KT_ANY
static const struct sg_kernel kernels[] = {
    {"", "Identity", 1, 0, ANY, SG_KF_NONTENSOR, run_identity, "r"},
    {"", "Reshape", 1, 0, ANY, 0, run_reshape, "r"},
    {"", "Reshape", 5, 0, ANY, 0, run_reshape, "rr"},
    {"", "Flatten", 1, 0, ANY, 0, run_flatten, "r"},
    {"", "Squeeze", 1, 0, ANY, 0, run_squeeze, "r"},
    {"", "Squeeze", 13, 0, ANY, 0, run_squeeze, "ro"},
    {"", "Unsqueeze", 1, 0, ANY, 0, run_unsqueeze, "r"},
    {"", "Unsqueeze", 13, 0, ANY, 0, run_unsqueeze, "rr"},
    {"", "Shape", 1, 0, ANY, 0, run_shape, "r"},
    {"", "Size", 1, 0, ANY, 0, run_size, "r"},
    {"", "Transpose", 1, 0, ANY, 0, run_transpose, "r"},
    {"", "Concat", 1, 0, ANY, 0, run_concat, "r+"},
    {"", "Split", 1, 0, ANY, 0, run_split, "ro"},
    {"", "Split", 2, 0, ANY, 0, run_split, "r"},
    {"", "Split", 13, 0, ANY, 0, run_split, "ro"},
    {"", "Split", 18, 0, ANY, 0, run_split, "ro"}, /* num_outputs */
    {"", "Slice", 1, 0, ANY, 0, run_slice, "r"},
    {"", "Slice", 10, 0, ANY, 0, run_slice, "rrroo"},
    {"", "Expand", 8, 0, ANY, 0, run_expand, "rr"},
    {"", "Tile", 6, 0, ANY, 0, run_tile, "rr"},
    {"", "Pad", 1, 0, SG_KT_NUMERIC | SG_KT_BOOL, 0, run_pad, "r"},
    {"", "Pad", 11, 0, SG_KT_NUMERIC | SG_KT_BOOL, 0, run_pad, "rro"},
    {"", "Pad", 18, 0, SG_KT_NUMERIC | SG_KT_BOOL, 0, run_pad, "rroo"}, /* axes */
    {"", "Pad", 19, 0, SG_KT_NUMERIC | SG_KT_BOOL, 0, run_pad, "rroo"}, /* wrap */
    /* The narrow types, held one element a byte (sg_runtime.h). */
    {"", "Pad", 21, 0, SG_KT_NUMERIC | SG_KT_BOOL | SG_KT_F8 | SG_KT_INT4, 0, run_pad, "rroo"},
    {"", "Pad", 23, 0, SG_KT_NUMERIC | SG_KT_BOOL | SG_KT_F8 | SG_KT_INT4 | SG_KT_F4, 0, run_pad,
     "rroo"},
    {"", "CenterCropPad", 18, 0, SG_KT_ALL, 0, run_center_crop_pad, "rr"},
    {"", "Trilu", 14, 0, ANY, 0, run_trilu, "ro"},
    {"", "DepthToSpace", 1, 0, ANY, 0, run_depth_space, "r"},
    {"", "SpaceToDepth", 1, 0, ANY, 0, run_depth_space, "r"},
};
SG_KERNEL_FAMILY(shape, kernels);
