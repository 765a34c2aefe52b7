/*
 * index.c - ops driven by index tensors: Gather, GatherElements, GatherND,
 * Scatter, ScatterElements, ScatterND (with reductions), Compress, NonZero,
 * TopK, Unique and ReverseSequence.
 *
 * Indices may be negative (counted from the end) where ONNX allows it; an
 * index out of range is an error naming the index, the axis and the shape.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

static size_t esize(const sg_rt_value *v)
{
    return sg_rt_elem_size(v->dtype);
}

/* Index i of an index tensor, wrapped and checked against dim. */
static sg_status get_index(struct sg_kctx *k, const sg_rt_value *I, int64_t i, int64_t dim,
                           uint32_t axis, int64_t *out)
{
    int64_t v = sg_rt_get_i64(I, i);
    int64_t w = v < 0 ? v + dim : v;
    if (w < 0 || w >= dim)
        return sg_kfail(k, SG_ERANGE, "index %lld is out of range for axis %u of size %lld",
                        (long long)v, axis, (long long)dim);
    *out = w;
    return SG_OK;
}

/* True when index tensor I (of X's rank) is no larger than X on every axis
 * but `axis`: the positions it addresses besides that axis lie in X. */
static bool fits_besides(const sg_rt_value *I, const sg_rt_value *X, uint32_t axis)
{
    for (uint32_t d = 0; d < I->rank; d++)
        if (d != axis && I->dims[d] > X->dims[d])
            return false;
    return true;
}

static bool is_index_type(const sg_rt_value *I)
{
    return I->dtype == SG_DTYPE_INT64 || I->dtype == SG_DTYPE_INT32;
}

static sg_status run_gather(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *I = sg_kin(k, 1);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), X->rank, &axis);
    if (st)
        return st;
    if (!is_index_type(I))
        return sg_kfail(k, SG_ETYPE, "indices must be int32 or int64, got %s", sg_kshape(k, I));
    uint32_t r = X->rank - 1 + I->rank;
    if (r > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "output rank %u is too large", r);
    int64_t dims[SG_MAX_RANK], outer = 1, inner = 1;
    uint32_t n = 0;
    for (uint32_t d = 0; d < axis; d++)
        outer *= dims[n++] = X->dims[d];
    for (uint32_t d = 0; d < I->rank; d++)
        dims[n++] = I->dims[d];
    for (uint32_t d = axis + 1; d < X->rank; d++)
        inner *= dims[n++] = X->dims[d];
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, r, &Y)))
        return st;
    size_t row = (size_t)inner * esize(X);
    int64_t dim = X->dims[axis];
    char *y = Y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < I->numel; i++) {
            int64_t idx = 0;
            if ((st = get_index(k, I, i, dim, axis, &idx)))
                return st;
            memcpy(y, (const char *)X->data + (size_t)(o * dim + idx) * row, row);
            y += row;
        }
    return SG_OK;
}

static sg_status run_gather_elements(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *I = sg_kin(k, 1);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), X->rank, &axis);
    if (st)
        return st;
    if (I->rank != X->rank || !is_index_type(I) || !fits_besides(I, X, axis))
        return sg_kfail(k, SG_ESHAPE, "indices %s do not match data %s", sg_kshape(k, I),
                        sg_kshape(k, X));
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, I->dims, I->rank, &Y)))
        return st;
    int64_t xs[SG_MAX_RANK], idx[SG_MAX_RANK] = {0};
    sg_rt_strides(X->dims, X->rank, xs);
    size_t es = esize(X);
    for (int64_t o = 0; o < Y->numel; o++) {
        int64_t off = 0, j = 0;
        if ((st = get_index(k, I, o, X->dims[axis], axis, &j)))
            return st;
        for (uint32_t d = 0; d < X->rank; d++)
            off += (d == axis ? j : idx[d]) * xs[d];
        memcpy((char *)Y->data + o * (int64_t)es, (const char *)X->data + off * (int64_t)es, es);
        for (int d = (int)I->rank - 1; d >= 0; d--) {
            if (++idx[d] < I->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return SG_OK;
}

static sg_status run_gather_nd(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *I = sg_kin(k, 1);
    int64_t b = sg_kattr_int(k, "batch_dims", 0);
    if (I->rank < 1 || b < 0 || b >= I->rank || b >= X->rank)
        return sg_kfail(k, SG_ESHAPE, "bad indices %s for data %s with batch_dims %lld",
                        sg_kshape(k, I), sg_kshape(k, X), (long long)b);
    int64_t m = I->dims[I->rank - 1];
    if (m < 1 || b + m > X->rank)
        return sg_kfail(k, SG_ESHAPE, "index depth %lld does not fit data %s", (long long)m,
                        sg_kshape(k, X));
    if (memcmp(I->dims, X->dims, (size_t)b * sizeof X->dims[0]))
        return sg_kfail(k, SG_ESHAPE, "indices %s and data %s differ in their %lld batch dims",
                        sg_kshape(k, I), sg_kshape(k, X), (long long)b);
    int64_t dims[SG_MAX_RANK], batch = 1, inner = 1;
    uint32_t r = 0;
    for (int64_t d = 0; d < I->rank - 1; d++)
        dims[r++] = I->dims[d];
    for (int64_t d = b + m; d < X->rank; d++)
        inner *= dims[r++] = X->dims[d];
    for (int64_t d = 0; d < b; d++)
        batch *= X->dims[d];
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, dims, r, &Y);
    if (st)
        return st;
    int64_t xs[SG_MAX_RANK];
    sg_rt_strides(X->dims, X->rank, xs);
    int64_t per_batch = (I->numel / m) / (batch ? batch : 1);
    size_t row = (size_t)inner * esize(X);
    for (int64_t t = 0; t < I->numel / m; t++) {
        int64_t bi = per_batch ? t / per_batch : 0, off = bi * (b ? xs[b - 1] : 0);
        for (int64_t j = 0; j < m; j++) {
            int64_t idx = 0;
            if ((st = get_index(k, I, t * m + j, X->dims[b + j], (uint32_t)(b + j), &idx)))
                return st;
            off += idx * xs[b + j];
        }
        memcpy((char *)Y->data + (size_t)t * row, (const char *)X->data + off * (int64_t)esize(X),
               row);
    }
    return SG_OK;
}

enum red { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static sg_status reduction(struct sg_kctx *k, enum red *out)
{
    const char *r = sg_kattr_string(k, "reduction", "none");
    if (strcmp(r, "none") == 0)
        *out = RED_NONE;
    else if (strcmp(r, "add") == 0)
        *out = RED_ADD;
    else if (strcmp(r, "mul") == 0)
        *out = RED_MUL;
    else if (strcmp(r, "max") == 0)
        *out = RED_MAX;
    else if (strcmp(r, "min") == 0)
        *out = RED_MIN;
    else
        return sg_kfail(k, SG_EINVAL, "unknown reduction '%s'", r);
    /* add and mul came with opset 16, max and min with 18 */
    int need = *out == RED_NONE ? 0 : *out == RED_ADD || *out == RED_MUL ? 16 : 18;
    if (k->opset < need)
        return sg_kfail(k, SG_EINVAL, "reduction '%s' needs opset %d", r, need);
    return SG_OK;
}

/* Y[dst] = reduce(Y[dst], U[src]). */
static void scatter_one(sg_rt_value *Y, int64_t dst, const sg_rt_value *U, int64_t src,
                        enum red red)
{
    if (red == RED_NONE) {
        size_t es = esize(Y);
        memcpy((char *)Y->data + dst * (int64_t)es, (const char *)U->data + src * (int64_t)es, es);
        return;
    }
    if (sg_dtype_is_float(Y->dtype)) {
        double a = sg_rt_get_f64(Y, dst), b = sg_rt_get_f64(U, src);
        double v = red == RED_ADD   ? a + b
                   : red == RED_MUL ? a * b
                   : red == RED_MAX ? fmax(a, b)
                                    : fmin(a, b);
        sg_rt_set_f64(Y, dst, v);
    } else {
        int64_t a = sg_rt_get_i64(Y, dst), b = sg_rt_get_i64(U, src);
        int64_t v = red == RED_ADD   ? (int64_t)((uint64_t)a + (uint64_t)b)
                    : red == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                    : red == RED_MAX ? (a > b ? a : b)
                                     : (a < b ? a : b);
        sg_rt_set_i64(Y, dst, v);
    }
}

static sg_status run_scatter_elements(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *I = sg_kin(k, 1), *U = sg_kin(k, 2);
    uint32_t axis;
    enum red red = RED_NONE;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), X->rank, &axis);
    if (st || (st = reduction(k, &red)))
        return st;
    if (U->dtype != X->dtype || !is_index_type(I))
        return sg_kfail(k, SG_ETYPE,
                        "updates %s must have the type of data %s, indices %s int32/64",
                        sg_kshape(k, U), sg_kshape(k, X), sg_kshape(k, I));
    if (I->rank != X->rank || U->rank != I->rank ||
        memcmp(I->dims, U->dims, I->rank * sizeof I->dims[0]) || !fits_besides(I, X, axis))
        return sg_kfail(k, SG_ESHAPE, "indices %s and updates %s do not fit data %s",
                        sg_kshape(k, I), sg_kshape(k, U), sg_kshape(k, X));
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    memcpy(Y->data, X->data, (size_t)X->numel * esize(X));
    int64_t xs[SG_MAX_RANK], idx[SG_MAX_RANK] = {0};
    sg_rt_strides(X->dims, X->rank, xs);
    for (int64_t o = 0; o < I->numel; o++) {
        int64_t off = 0, j = 0;
        if ((st = get_index(k, I, o, X->dims[axis], axis, &j)))
            return st;
        for (uint32_t d = 0; d < X->rank; d++)
            off += (d == axis ? j : idx[d]) * xs[d];
        scatter_one(Y, off, U, o, red);
        for (int d = (int)I->rank - 1; d >= 0; d--) {
            if (++idx[d] < I->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return SG_OK;
}

static sg_status run_scatter_nd(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *I = sg_kin(k, 1), *U = sg_kin(k, 2);
    enum red red = RED_NONE;
    sg_status st = reduction(k, &red);
    if (st)
        return st;
    if (U->dtype != X->dtype || !is_index_type(I))
        return sg_kfail(k, SG_ETYPE,
                        "updates %s must have the type of data %s, indices %s int32/64",
                        sg_kshape(k, U), sg_kshape(k, X), sg_kshape(k, I));
    if (I->rank < 1)
        return sg_kfail(k, SG_ESHAPE, "indices %s need rank >= 1", sg_kshape(k, I));
    int64_t m = I->dims[I->rank - 1];
    if (m > X->rank)
        return sg_kfail(k, SG_ESHAPE, "index depth %lld exceeds the rank of %s", (long long)m,
                        sg_kshape(k, X));
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    memcpy(Y->data, X->data, (size_t)X->numel * esize(X));
    int64_t xs[SG_MAX_RANK], inner = 1;
    sg_rt_strides(X->dims, X->rank, xs);
    for (int64_t d = m; d < X->rank; d++)
        inner *= X->dims[d];
    int64_t n = m ? I->numel / m : 0;
    if (U->numel != n * inner)
        return sg_kfail(k, SG_ESHAPE, "updates %s do not fit indices %s and data %s",
                        sg_kshape(k, U), sg_kshape(k, I), sg_kshape(k, X));
    for (int64_t t = 0; t < n; t++) {
        int64_t off = 0;
        for (int64_t j = 0; j < m; j++) {
            int64_t idx = 0;
            if ((st = get_index(k, I, t * m + j, X->dims[j], (uint32_t)j, &idx)))
                return st;
            off += idx * xs[j];
        }
        for (int64_t e = 0; e < inner; e++)
            scatter_one(Y, off + e, U, t * inner + e, red);
    }
    return SG_OK;
}

static sg_status run_compress(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *C = sg_kin(k, 1);
    const sg_attr *a = sg_kattr(k, "axis");
    if (C->rank != 1)
        return sg_kfail(k, SG_ESHAPE, "condition must be 1-d, got %s", sg_kshape(k, C));
    int64_t outer = 1, inner = 1, n;
    int64_t dims[SG_MAX_RANK];
    uint32_t r, axis = 0;
    sg_status st;
    if (a) {
        if ((st = sg_kaxis(k, a->i, X->rank, &axis)))
            return st;
        for (uint32_t d = 0; d < axis; d++)
            outer *= X->dims[d];
        for (uint32_t d = axis + 1; d < X->rank; d++)
            inner *= X->dims[d];
        n = X->dims[axis];
        r = X->rank;
        memcpy(dims, X->dims, r * sizeof dims[0]);
    } else {
        n = X->numel;
        r = 1;
    }
    int64_t kept = 0;
    for (int64_t i = 0; i < C->numel && i < n; i++)
        kept += ((const uint8_t *)C->data)[i] != 0;
    dims[a ? axis : 0] = kept;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, r, &Y)))
        return st;
    size_t row = (size_t)inner * esize(X);
    char *y = Y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < C->numel && i < n; i++)
            if (((const uint8_t *)C->data)[i]) {
                memcpy(y, (const char *)X->data + (size_t)(o * n + i) * row, row);
                y += row;
            }
    return SG_OK;
}

static sg_status run_nonzero(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t nnz = 0;
    for (int64_t i = 0; i < X->numel; i++)
        nnz += sg_rt_get_f64(X, i) != 0;
    int64_t dims[2] = {X->rank, nnz};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_INT64, dims, 2, &Y);
    if (st)
        return st;
    int64_t idx[SG_MAX_RANK] = {0}, j = 0;
    int64_t *y = Y->data;
    for (int64_t i = 0; i < X->numel; i++) {
        if (sg_rt_get_f64(X, i) != 0) {
            for (uint32_t d = 0; d < X->rank; d++)
                y[d * nnz + j] = idx[d];
            j++;
        }
        for (int d = (int)X->rank - 1; d >= 0; d--) {
            if (++idx[d] < X->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return SG_OK;
}

/* Stable merge sort of idx[0..n) by cmp(a, b) < 0 meaning a first. */
typedef int (*cmp_fn)(int64_t a, int64_t b, const void *ctx);

static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, cmp_fn cmp, const void *ctx)
{
    if (n < 2)
        return;
    int64_t h = n / 2;
    merge_sort(idx, tmp, h, cmp, ctx);
    merge_sort(idx + h, tmp, n - h, cmp, ctx);
    int64_t i = 0, j = h, t = 0;
    while (i < h && j < n)
        tmp[t++] = cmp(idx[j], idx[i], ctx) < 0 ? idx[j++] : idx[i++];
    while (i < h)
        tmp[t++] = idx[i++];
    while (j < n)
        tmp[t++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

struct topk_ctx {
    const double *v;
    bool largest;
};

static int topk_cmp(int64_t a, int64_t b, const void *p)
{
    const struct topk_ctx *c = p;
    double x = c->v[a], y = c->v[b];
    /* NaN sorts as the largest value. */
    bool xn = isnan(x), yn = isnan(y);
    if (xn || yn)
        return xn == yn ? 0 : ((xn == c->largest) ? -1 : 1);
    if (x == y)
        return 0;
    return (c->largest ? x > y : x < y) ? -1 : 1;
}

static sg_status run_topk(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t kk;
    if (k->opset < 10) {
        kk = sg_kattr_int(k, "k", -1);
    } else {
        const sg_rt_value *K = sg_kin(k, 1);
        if (!K || K->numel != 1)
            return sg_kfail(k, SG_ESHAPE, "K must hold one value");
        kk = sg_rt_get_i64(K, 0);
    }
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), X->rank, &axis);
    if (st)
        return st;
    int64_t n = X->dims[axis];
    if (kk < 0 || kk > n)
        return sg_kfail(k, SG_ERANGE, "k %lld is out of range for axis %u of %s", (long long)kk,
                        axis, sg_kshape(k, X));
    bool largest = sg_kattr_int(k, "largest", 1) != 0;
    int64_t dims[SG_MAX_RANK], outer = 1, inner = 1;
    memcpy(dims, X->dims, X->rank * sizeof dims[0]);
    dims[axis] = kk;
    for (uint32_t d = 0; d < axis; d++)
        outer *= X->dims[d];
    for (uint32_t d = axis + 1; d < X->rank; d++)
        inner *= X->dims[d];
    sg_rt_value *V, *I;
    if ((st = sg_kout(k, 0, X->dtype, dims, X->rank, &V)) ||
        (st = sg_kout(k, 1, SG_DTYPE_INT64, dims, X->rank, &I)))
        return st;
    double *vals = sg_kscratch(k, (size_t)(n + 1) * sizeof *vals);
    int64_t *idx = sg_kscratch(k, (size_t)(n + 1) * sizeof *idx);
    int64_t *tmp = sg_kscratch(k, (size_t)(n + 1) * sizeof *tmp);
    if (!vals || !idx || !tmp)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    struct topk_ctx c = {vals, largest};
    size_t es = esize(X);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            for (int64_t j = 0; j < n; j++) {
                vals[j] = sg_rt_get_f64(X, (o * n + j) * inner + in);
                idx[j] = j;
            }
            merge_sort(idx, tmp, n, topk_cmp, &c);
            for (int64_t j = 0; j < kk; j++) {
                int64_t dst = (o * kk + j) * inner + in, src = (o * n + idx[j]) * inner + in;
                memcpy((char *)V->data + dst * (int64_t)es,
                       (const char *)X->data + src * (int64_t)es, es);
                ((int64_t *)I->data)[dst] = idx[j];
            }
        }
    return SG_OK;
}

/* Unique: slices along `axis` (or single elements) compared bytewise by
 * value; sorted ascending when `sorted`. */
struct uniq_ctx {
    const sg_rt_value *X;
    int64_t outer, n, inner; /* X viewed as [outer, n, inner] */
};

static int uniq_cmp(int64_t a, int64_t b, const void *p)
{
    const struct uniq_ctx *c = p;
    for (int64_t o = 0; o < c->outer; o++)
        for (int64_t i = 0; i < c->inner; i++) {
            double x = sg_rt_get_f64(c->X, (o * c->n + a) * c->inner + i);
            double y = sg_rt_get_f64(c->X, (o * c->n + b) * c->inner + i);
            if (x != y)
                return x < y ? -1 : 1;
        }
    return 0;
}

static sg_status run_unique(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_attr *a = sg_kattr(k, "axis");
    bool sorted = sg_kattr_int(k, "sorted", 1) != 0;
    struct uniq_ctx c = {X, 1, X->numel, 1};
    uint32_t axis = 0;
    sg_status st;
    if (a) {
        if ((st = sg_kaxis(k, a->i, X->rank, &axis)))
            return st;
        c.n = X->dims[axis];
        for (uint32_t d = 0; d < axis; d++)
            c.outer *= X->dims[d];
        for (uint32_t d = axis + 1; d < X->rank; d++)
            c.inner *= X->dims[d];
    }
    int64_t n = c.n;
    int64_t *order = sg_kscratch(k, (size_t)(n + 1) * sizeof *order);
    int64_t *tmp = sg_kscratch(k, (size_t)(n + 1) * sizeof *tmp);
    int64_t *first = sg_kscratch(k, (size_t)(n + 1) * sizeof *first); /* unique -> first idx */
    int64_t *count = sg_kscratch(k, (size_t)(n + 1) * sizeof *count);
    int64_t *inv = sg_kscratch(k, (size_t)(n + 1) * sizeof *inv);
    if (!order || !tmp || !first || !count || !inv)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    merge_sort(order, tmp, n, uniq_cmp, &c);
    /* Group equal runs: each group's first occurrence is its smallest index
     * (the sort is stable). */
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || uniq_cmp(order[i - 1], order[i], &c) != 0) {
            first[u] = order[i];
            count[u] = 0;
            u++;
        }
        count[u - 1]++;
        inv[order[i]] = u - 1;
    }
    /* Unsorted: groups in order of first occurrence. */
    int64_t *rank = tmp;
    if (!sorted) {
        int64_t *g = sg_kscratch(k, (size_t)(u + 1) * sizeof *g);
        int64_t *t2 = sg_kscratch(k, (size_t)(u + 1) * sizeof *t2);
        int64_t *f2 = sg_kscratch(k, (size_t)(u + 1) * sizeof *f2);
        int64_t *c2 = sg_kscratch(k, (size_t)(u + 1) * sizeof *c2);
        if (!g || !t2 || !f2 || !c2)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        /* sort group ids by first index (insertion into order by first) */
        for (int64_t i = 0; i < u; i++)
            g[i] = i;
        for (int64_t i = 1; i < u; i++)
            for (int64_t j = i; j > 0 && first[g[j]] < first[g[j - 1]]; j--) {
                int64_t s = g[j];
                g[j] = g[j - 1];
                g[j - 1] = s;
            }
        for (int64_t i = 0; i < u; i++) {
            rank[g[i]] = i;
            f2[i] = first[g[i]];
            c2[i] = count[g[i]];
        }
        memcpy(first, f2, (size_t)u * sizeof *first);
        memcpy(count, c2, (size_t)u * sizeof *count);
        for (int64_t i = 0; i < n; i++)
            inv[i] = rank[inv[i]];
    }
    int64_t dims[SG_MAX_RANK];
    uint32_t r = a ? X->rank : 1;
    if (a)
        memcpy(dims, X->dims, r * sizeof dims[0]);
    dims[a ? axis : 0] = u;
    sg_rt_value *Y, *YI = NULL, *YV = NULL, *YC = NULL;
    if ((st = sg_kout(k, 0, X->dtype, dims, r, &Y)))
        return st;
    size_t es = esize(X);
    for (int64_t o = 0; o < c.outer; o++)
        for (int64_t j = 0; j < u; j++)
            memcpy((char *)Y->data + (size_t)((o * u + j) * c.inner) * es,
                   (const char *)X->data + (size_t)((o * n + first[j]) * c.inner) * es,
                   (size_t)c.inner * es);
    if (k->n_out > 1 && (st = sg_kout(k, 1, SG_DTYPE_INT64, &u, 1, &YI)))
        return st;
    if (k->n_out > 2 && (st = sg_kout(k, 2, SG_DTYPE_INT64, &n, 1, &YV)))
        return st;
    if (k->n_out > 3 && (st = sg_kout(k, 3, SG_DTYPE_INT64, &u, 1, &YC)))
        return st;
    for (int64_t j = 0; j < u; j++) {
        if (YI)
            ((int64_t *)YI->data)[j] = first[j];
        if (YC)
            ((int64_t *)YC->data)[j] = count[j];
    }
    for (int64_t i = 0; YV && i < n; i++)
        ((int64_t *)YV->data)[i] = inv[i];
    return SG_OK;
}

static sg_status run_reverse_sequence(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *L = sg_kin(k, 1);
    int64_t ba = sg_kattr_int(k, "batch_axis", 1), ta = sg_kattr_int(k, "time_axis", 0);
    if (X->rank < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return sg_kfail(k, SG_EINVAL, "bad batch_axis/time_axis for %s", sg_kshape(k, X));
    int64_t B = X->dims[ba], T = X->dims[ta];
    if (L->numel != B)
        return sg_kfail(k, SG_ESHAPE, "sequence_lens %s does not match batch %lld", sg_kshape(k, L),
                        (long long)B);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    if (st)
        return st;
    int64_t inner = 1;
    for (uint32_t d = 2; d < X->rank; d++)
        inner *= X->dims[d];
    size_t row = (size_t)inner * esize(X);
    for (int64_t b = 0; b < B; b++) {
        int64_t len = sg_rt_get_i64(L, b);
        if (len < 0 || len > T)
            return sg_kfail(k, SG_ERANGE, "sequence length %lld is out of range [0,%lld]",
                            (long long)len, (long long)T);
        for (int64_t t = 0; t < T; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            int64_t di = ta == 0 ? t * B + b : b * T + t;
            int64_t si = ta == 0 ? src * B + b : b * T + src;
            memcpy((char *)Y->data + (size_t)di * row, (const char *)X->data + (size_t)si * row,
                   row);
        }
    }
    return SG_OK;
}

#define ANY SG_KT_ANY
static const struct sg_kernel kernels[] = {
    {"", "Gather", 1, 0, ANY, 0, run_gather, "rr"},
    {"", "GatherElements", 11, 0, ANY, 0, run_gather_elements, "rr"},
    {"", "GatherND", 11, 0, ANY, 0, run_gather_nd, "rr"},
    {"", "Scatter", 9, 0, ANY, 0, run_scatter_elements, "rrr"},
    {"", "ScatterElements", 11, 0, ANY, 0, run_scatter_elements, "rrr"},
    {"", "ScatterElements", 16, 0, ANY, 0, run_scatter_elements, "rrr"}, /* add, mul */
    {"", "ScatterElements", 18, 0, ANY, 0, run_scatter_elements, "rrr"}, /* max, min */
    {"", "ScatterND", 11, 0, ANY, 0, run_scatter_nd, "rrr"},
    {"", "ScatterND", 16, 0, ANY, 0, run_scatter_nd, "rrr"},
    {"", "ScatterND", 18, 0, ANY, 0, run_scatter_nd, "rrr"},
    {"", "Compress", 9, 0, ANY, 0, run_compress, "rr"},
    {"", "NonZero", 9, 0, SG_KT_NUMERIC | SG_KT_BOOL, 0, run_nonzero, "r"},
    {"", "TopK", 1, 0, SG_KT_NUMERIC, 0, run_topk, "r"},
    {"", "TopK", 10, 0, SG_KT_NUMERIC, 0, run_topk, "rr"},
    {"", "Unique", 11, 0, SG_KT_NUMERIC, 0, run_unique, "r"},
    {"", "ReverseSequence", 10, 0, ANY, 0, run_reverse_sequence, "rr"},
};
SG_KERNEL_FAMILY(index, kernels);
