/*
 * softmax.c - Softmax, LogSoftmax and Hardmax. Before opset 13 the input is
 * coerced to 2-D at `axis` (default 1) and normalised over the second
 * dimension; from 13 on the op works along `axis` (default -1).
 */
#include "rt_impl.h"
#include "vmath.h"

#include <math.h>
#include <string.h>

enum smode { SOFTMAX, LOGSOFTMAX, HARDMAX };

/* Normalise n values at stride `inner` in place (doubles). */
static void normalise(enum smode mode, double *x, int64_t n)
{
    double m = -INFINITY;
    int64_t arg = 0;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > m) {
            m = x[i];
            arg = i;
        }
    if (mode == HARDMAX) {
        for (int64_t i = 0; i < n; i++)
            x[i] = i == arg;
        return;
    }
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += exp(x[i] - m);
    for (int64_t i = 0; i < n; i++)
        x[i] = mode == SOFTMAX ? exp(x[i] - m) / s : x[i] - m - log(s);
}

/* float32 rows, the common case, without the double round trip: exp
 * vectorised (vmath.h), the sum in double over sixteen partial sums. */
SG_RT_CLONES static void softmax_rows_f32(enum smode mode, const float *x, float *y, int64_t rows,
                                          int64_t n)
{
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        float m = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            m = x[i] > m ? x[i] : m;
        for (int64_t i = 0; i < n; i++)
            y[i] = sg_expf(x[i] - m);
        double part[16] = {0}, s = 0;
        int64_t i = 0;
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 16; j++)
                part[j] += y[i + j];
        for (; i < n; i++)
            s += y[i];
        for (int j = 0; j < 16; j++)
            s += part[j];
        if (mode == SOFTMAX) {
            float inv = (float)(1.0 / s);
            for (int64_t k = 0; k < n; k++)
                y[k] *= inv;
        } else {
            float ls = (float)log(s);
            for (int64_t k = 0; k < n; k++)
                y[k] = x[k] - m - ls;
        }
    }
}

static sg_status run_softmax(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const char *op = k->node->op_type;
    enum smode mode = strcmp(op, "Softmax") == 0      ? SOFTMAX
                      : strcmp(op, "LogSoftmax") == 0 ? LOGSOFTMAX
                                                      : HARDMAX;
    bool legacy = k->opset < 13;
    int64_t a = sg_kattr_int(k, "axis", legacy ? 1 : -1);
    uint32_t axis = 0;
    sg_status st;
    if (X->rank == 0)
        return sg_kfail(k, SG_ESHAPE, "needs rank >= 1");
    if (legacy && a == (int64_t)X->rank)
        axis = X->rank; /* 2-D coercion at the end: one element per row */
    else if ((st = sg_kaxis(k, a, X->rank, &axis)))
        return st;
    int64_t outer = 1, n = 1, inner = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            outer *= X->dims[d];
        else if (d == axis || legacy)
            n *= X->dims[d];
        else
            inner *= X->dims[d];
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    if (X->dtype == SG_DTYPE_FLOAT && inner == 1 && mode != HARDMAX) {
        softmax_rows_f32(mode, X->data, Y->data, outer, n);
        return SG_OK;
    }
    double *row = sg_kscratch(k, (size_t)(n + 1) * sizeof *row);
    if (!row)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * n * inner + in;
            for (int64_t i = 0; i < n; i++)
                row[i] = sg_rt_get_f64(X, base + i * inner);
            normalise(mode, row, n);
            for (int64_t i = 0; i < n; i++)
                sg_rt_set_f64(Y, base + i * inner, row[i]);
        }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "Softmax", 1, 0, SG_KT_FLOATS, 0, run_softmax, "r"},
    {"", "LogSoftmax", 1, 0, SG_KT_FLOATS, 0, run_softmax, "r"},
    {"", "Hardmax", 1, 0, SG_KT_FLOATS, 0, run_softmax, "r"},
};
SG_KERNEL_FAMILY(softmax, kernels);
