/*
 * reduce.c - reductions: ReduceSum ReduceMean ReduceMax ReduceMin
 * ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp
 * ReduceSumSquare (axes as attribute, or as input since opset 18 (13 for
 * ReduceSum), keepdims, noop_with_empty_axes; bool ReduceMax/ReduceMin
 * since 20), ArgMax, ArgMin and CumSum.
 *
 * The reduced axes are moved last (one strided copy when they are not
 * already), then each row is reduced. Floats accumulate in double, integers
 * in int64 (wrapping to the output type).
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

enum rop { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };

static const struct {
    const char *name;
    enum rop op;
    int axes_input_since; /* opset from which axes is an input */
} rops[] = {
    {"ReduceSum", R_SUM, 13},
    {"ReduceMean", R_MEAN, 18},
    {"ReduceMax", R_MAX, 18},
    {"ReduceMin", R_MIN, 18},
    {"ReduceProd", R_PROD, 18},
    {"ReduceL1", R_L1, 18},
    {"ReduceL2", R_L2, 18},
    {"ReduceLogSum", R_LOGSUM, 18},
    {"ReduceLogSumExp", R_LOGSUMEXP, 18},
    {"ReduceSumSquare", R_SUMSQ, 18},
};

/* Reduce one contiguous row of doubles. */
static double reduce_row_f(enum rop op, const double *x, int64_t n)
{
    double acc;
    switch (op) {
    case R_MAX:
    case R_MIN:
        acc = op == R_MAX ? -INFINITY : INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(x[i]))
                return x[i];
            if (op == R_MAX ? x[i] > acc : x[i] < acc)
                acc = x[i];
        }
        return acc;
    case R_PROD:
        acc = 1;
        for (int64_t i = 0; i < n; i++)
            acc *= x[i];
        return acc;
    case R_LOGSUMEXP: {
        double m = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            if (x[i] > m)
                m = x[i];
        if (isinf(m))
            m = 0;
        acc = 0;
        for (int64_t i = 0; i < n; i++)
            acc += exp(x[i] - m);
        return log(acc) + m;
    }
    default:
        acc = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = x[i];
            acc += op == R_L1 ? fabs(v) : (op == R_L2 || op == R_SUMSQ) ? v * v : v;
        }
        switch (op) {
        case R_MEAN:
            return n ? acc / (double)n : NAN;
        case R_L2:
            return sqrt(acc);
        case R_LOGSUM:
            return log(acc);
        default:
            return acc;
        }
    }
}

static int64_t reduce_row_i(enum rop op, const int64_t *x, int64_t n)
{
    int64_t acc;
    switch (op) {
    case R_MAX:
    case R_MIN:
        acc = op == R_MAX ? INT64_MIN : INT64_MAX;
        for (int64_t i = 0; i < n; i++)
            if (op == R_MAX ? x[i] > acc : x[i] < acc)
                acc = x[i];
        return acc;
    case R_PROD: {
        uint64_t p = 1;
        for (int64_t i = 0; i < n; i++)
            p *= (uint64_t)x[i];
        return (int64_t)p;
    }
    default: {
        uint64_t s = 0;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)x[i];
            if (op == R_L1 && x[i] < 0)
                v = 0 - v;
            if (op == R_SUMSQ)
                v = v * v;
            s += v;
        }
        if (op == R_MEAN)
            return n ? (int64_t)s / n : 0;
        return (int64_t)s;
    }
    }
}

/*
 * Move the axes marked in `red` last: returns the element buffer (X's own
 * data when they already are) viewed as [rows, cols].
 */
static const void *reduced_last(struct sg_kctx *k, const sg_rt_value *X, const bool *red,
                                int64_t *rows, int64_t *cols)
{
    int64_t str[SG_MAX_RANK], dims[SG_MAX_RANK], pstr[SG_MAX_RANK];
    sg_rt_strides(X->dims, X->rank, str);
    uint32_t r = 0;
    bool in_order = true, seen_red = false;
    *rows = 1;
    *cols = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (red[d]) {
            seen_red = true;
            *cols *= X->dims[d];
        } else {
            if (seen_red && X->dims[d] != 1)
                in_order = false;
            dims[r] = X->dims[d];
            pstr[r++] = str[d];
            *rows *= X->dims[d];
        }
    }
    if (in_order)
        return X->data;
    for (uint32_t d = 0; d < X->rank; d++)
        if (red[d]) {
            dims[r] = X->dims[d];
            pstr[r++] = str[d];
        }
    size_t es = sg_rt_elem_size(X->dtype);
    void *buf = sg_kscratch(k, (size_t)X->numel * es + 1);
    if (buf)
        sg_rt_copy_strided(buf, X->data, es, X->rank, dims, pstr, 0);
    return buf;
}

static sg_status run_reduce(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    enum rop op = R_SUM;
    int since = 13;
    for (size_t i = 0; i < sizeof rops / sizeof rops[0]; i++)
        if (strcmp(rops[i].name, k->node->op_type) == 0) {
            op = rops[i].op;
            since = rops[i].axes_input_since;
        }
    const int64_t *axes = NULL;
    int64_t na = -1;
    sg_status st;
    if (k->opset < since) {
        na = sg_kattr_ints(k, "axes", &axes);
    } else if (sg_kin(k, 1)) {
        if ((st = sg_kin_ints(k, 1, &axes, &na)))
            return st;
    }
    bool keep = sg_kattr_int(k, "keepdims", 1) != 0;
    /* noop_with_empty_axes: a reduction over the empty set of axes (the
     * reference's axis=()), so each element is reduced alone: the ops with
     * an elementwise part still apply it (ReduceLogSum gives log(x),
     * ReduceSumSquare x*x, ReduceL1 |x|), the others return x. */
    bool noop = na <= 0 && sg_kattr_int(k, "noop_with_empty_axes", 0);
    if (noop && (op == R_SUM || op == R_MEAN || op == R_MAX || op == R_MIN || op == R_PROD ||
                 op == R_LOGSUMEXP))
        return sg_kout_alias(k, 0, X, X->dims, X->rank);
    bool red[SG_MAX_RANK] = {false};
    for (uint32_t d = 0; d < X->rank; d++)
        red[d] = na <= 0 && !noop;
    for (int64_t i = 0; i < na; i++) {
        uint32_t a;
        if ((st = sg_kaxis(k, axes[i], X->rank, &a)))
            return st;
        red[a] = true;
    }
    int64_t dims[SG_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (!red[d])
            dims[r++] = X->dims[d];
        else if (keep)
            dims[r++] = 1;
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, dims, r, &Y)))
        return st;
    int64_t rows, cols;
    const void *data = reduced_last(k, X, red, &rows, &cols);
    if (!data)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_rt_value view;
    memcpy(&view, X, sizeof view);
    view.data = (void *)data;
    bool fl = sg_dtype_is_float(X->dtype);
    bool float_math = fl || op == R_L2 || op == R_LOGSUM || op == R_LOGSUMEXP;
    if (float_math) {
        double *row = sg_kscratch(k, (size_t)(cols + 1) * sizeof *row);
        if (!row)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t i = 0; i < rows; i++) {
            if (X->dtype == SG_DTYPE_FLOAT) {
                const float *f = (const float *)data + i * cols;
                for (int64_t j = 0; j < cols; j++)
                    row[j] = f[j];
            } else {
                for (int64_t j = 0; j < cols; j++)
                    row[j] = sg_rt_get_f64(&view, i * cols + j);
            }
            double v = reduce_row_f(op, row, cols);
            if (!fl && (op == R_MAX || op == R_MIN) && cols == 0)
                v = 0;
            sg_rt_set_f64(Y, i, v);
        }
        return SG_OK;
    }
    int64_t *row = sg_kscratch(k, (size_t)(cols + 1) * sizeof *row);
    if (!row)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++)
            row[j] = sg_rt_get_i64(&view, i * cols + j);
        sg_rt_set_i64(Y, i, reduce_row_i(op, row, cols));
    }
    return SG_OK;
}

static sg_status run_arg(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    bool max = strcmp(k->node->op_type, "ArgMax") == 0;
    bool keep = sg_kattr_int(k, "keepdims", 1) != 0;
    bool last = sg_kattr_int(k, "select_last_index", 0) != 0;
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", 0), X->rank, &axis);
    if (st)
        return st;
    int64_t dims[SG_MAX_RANK], outer = 1, inner = 1, n = X->dims[axis];
    /* No element, no index: ONNX's reference (numpy's argmax) refuses it
     * whatever the other dims are. */
    if (n == 0)
        return sg_kfail(k, SG_ESHAPE, "axis %u of %s is empty: there is no %s to index", axis,
                        sg_kshape(k, X), max ? "maximum" : "minimum");
    uint32_t r = 0;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            outer *= X->dims[d];
        if (d > axis)
            inner *= X->dims[d];
        if (d != axis)
            dims[r++] = X->dims[d];
        else if (keep)
            dims[r++] = 1;
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, SG_DTYPE_INT64, dims, r, &Y)))
        return st;
    int64_t *y = Y->data;
    bool fl = sg_dtype_is_float(X->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t best = 0;
            int64_t base = o * n * inner + in;
            for (int64_t j = 1; j < n; j++) {
                int64_t a = base + j * inner, b = base + best * inner;
                bool better;
                if (fl) {
                    double va = sg_rt_get_f64(X, a), vb = sg_rt_get_f64(X, b);
                    better = max ? (last ? va >= vb : va > vb) : (last ? va <= vb : va < vb);
                } else {
                    int64_t va = sg_rt_get_i64(X, a), vb = sg_rt_get_i64(X, b);
                    better = max ? (last ? va >= vb : va > vb) : (last ? va <= vb : va < vb);
                }
                if (better)
                    best = j;
            }
            y[o * inner + in] = best;
        }
    return SG_OK;
}

static sg_status run_cumsum(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *A = sg_kin(k, 1);
    if (!A || A->numel != 1)
        return sg_kfail(k, SG_ESHAPE, "axis must be a scalar");
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_rt_get_i64(A, 0), X->rank, &axis);
    if (st)
        return st;
    bool excl = sg_kattr_int(k, "exclusive", 0) != 0, rev = sg_kattr_int(k, "reverse", 0) != 0;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    int64_t outer = 1, inner = 1, n = X->dims[axis];
    for (uint32_t d = 0; d < axis; d++)
        outer *= X->dims[d];
    for (uint32_t d = axis + 1; d < X->rank; d++)
        inner *= X->dims[d];
    bool fl = sg_dtype_is_float(X->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double accf = 0;
            uint64_t acci = 0;
            for (int64_t t = 0; t < n; t++) {
                int64_t j = rev ? n - 1 - t : t;
                int64_t idx = (o * n + j) * inner + in;
                if (fl) {
                    double v = sg_rt_get_f64(X, idx);
                    if (!excl)
                        accf += v;
                    sg_rt_set_f64(Y, idx, accf);
                    if (excl)
                        accf += v;
                } else {
                    uint64_t v = (uint64_t)sg_rt_get_i64(X, idx);
                    if (!excl)
                        acci += v;
                    sg_rt_set_i64(Y, idx, (int64_t)acci);
                    if (excl)
                        acci += v;
                }
            }
        }
    return SG_OK;
}

#define NUM SG_KT_NUMERIC
static const struct sg_kernel kernels[] = {
    {"", "ReduceSum", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceSum", 13, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceMean", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceMean", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceMax", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceMax", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceMax", 20, 0, NUM | SG_KT_BOOL, 0, run_reduce, "ro"},
    {"", "ReduceMin", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceMin", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceMin", 20, 0, NUM | SG_KT_BOOL, 0, run_reduce, "ro"},
    {"", "ReduceProd", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceProd", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceL1", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceL1", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceL2", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceL2", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceLogSum", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceLogSum", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceLogSumExp", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceLogSumExp", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ReduceSumSquare", 1, 0, NUM, 0, run_reduce, "r"},
    {"", "ReduceSumSquare", 18, 0, NUM, 0, run_reduce, "ro"},
    {"", "ArgMax", 1, 0, NUM, 0, run_arg, "r"},
    {"", "ArgMin", 1, 0, NUM, 0, run_arg, "r"},
    {"", "CumSum", 11, 0, NUM, 0, run_cumsum, "rr"},
};
SG_KERNEL_FAMILY(reduce, kernels);
