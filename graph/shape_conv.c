/*
 * shape_conv.c - shape rules of the windowed ops (Conv, ConvTranspose, the
 * pools) and of the matrix products (MatMul, Gemm and their quantized
 * forms). Window sizes go through sg_dim_window, so an overflowing or
 * impossible window is a finding naming the node, not a wrapped number.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

struct win {
    int k; /* spatial rank */
    int64_t kernel[SG_MAX_RANK], stride[SG_MAX_RANK], dil[SG_MAX_RANK];
    int64_t pb[SG_MAX_RANK], pe[SG_MAX_RANK];
    enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } autopad;
};

static sg_status read_win(struct sh_ctx *c, sg_node *n, int k, const int64_t *kernel, struct win *w,
                          bool *ok)
{
    *ok = false;
    w->k = k;
    size_t ns, nd, np;
    const int64_t *s = sh_attr_ints(n, "strides", &ns);
    const int64_t *d = sh_attr_ints(n, "dilations", &nd);
    const int64_t *p = sh_attr_ints(n, "pads", &np);
    if ((s && ns != (size_t)k) || (d && nd != (size_t)k) || (p && np != 2 * (size_t)k))
        return sh_fail(c, n, "strides, dilations or pads do not match %d spatial dims", k);
    for (int i = 0; i < k; i++) {
        w->kernel[i] = kernel[i];
        w->stride[i] = s ? s[i] : 1;
        w->dil[i] = d ? d[i] : 1;
        w->pb[i] = p ? p[i] : 0;
        w->pe[i] = p ? p[k + i] : 0;
        if (w->stride[i] < 1 || w->dil[i] < 1 || w->kernel[i] < 0 || w->pb[i] < 0 || w->pe[i] < 0)
            return sh_fail(c, n, "kernel, stride or dilation below 1, or a negative pad");
    }
    sg_bytes ap = sg_attr_bytes(n, "auto_pad", (sg_bytes){(const uint8_t *)"NOTSET", 6});
    w->autopad = PAD_NOTSET;
    if (ap.len == 10 && !memcmp(ap.data, "SAME_UPPER", 10))
        w->autopad = PAD_SAME_UPPER;
    else if (ap.len == 10 && !memcmp(ap.data, "SAME_LOWER", 10))
        w->autopad = PAD_SAME_LOWER;
    else if (ap.len == 5 && !memcmp(ap.data, "VALID", 5))
        w->autopad = PAD_VALID;
    *ok = true;
    return SG_OK;
}

/* Output spatial dims of a forward window (conv, pool). */
static sg_status window_dims(struct sh_ctx *c, sg_node *n, const struct win *w, const int64_t *in,
                             bool ceil_mode, int64_t *out, bool *ok)
{
    *ok = false;
    for (int i = 0; i < w->k; i++) {
        if (!sh_num(in[i])) {
            out[i] = SH_UNK;
            continue;
        }
        if (w->autopad == PAD_SAME_UPPER || w->autopad == PAD_SAME_LOWER) {
            out[i] = sg_dim_ceildiv(in[i], w->stride[i]);
            continue;
        }
        bool valid = w->autopad == PAD_VALID;
        if (!sg_dim_window(in[i], w->kernel[i], w->stride[i], w->dil[i], valid ? 0 : w->pb[i],
                           valid ? 0 : w->pe[i], ceil_mode, &out[i]))
            return sh_fail(c, n,
                           "spatial dim %d: window of kernel %lld (dilation %lld) does not fit "
                           "input %lld with pads %lld,%lld, or overflows",
                           i, (long long)w->kernel[i], (long long)w->dil[i], (long long)in[i],
                           (long long)w->pb[i], (long long)w->pe[i]);
        /* With ceil_mode a last window that starts in the end padding is
         * dropped (ONNX's rule since opset 19, what runtimes do). */
        int64_t start;
        if (ceil_mode && (!sg_dim_mul(out[i] - 1, w->stride[i], &start) ||
                          start >= in[i] + (valid ? 0 : w->pb[i])))
            out[i]--;
    }
    *ok = true;
    return SG_OK;
}

sg_status sh_conv(struct sh_ctx *c, sg_node *n)
{
    bool q = strcmp(n->op_type, "QLinearConv") == 0;
    struct sh *x = sh_in_ranked(c, n, 0), *wt = sh_in_ranked(c, n, q ? 3 : 1);
    if (!x || (!wt && !sh_has_attr(n, "kernel_shape")))
        return SG_OK;
    if (x->rank < 3 || (wt && wt->rank != x->rank))
        return sh_fail(c, n, "input rank %d and weight rank %d do not make a convolution", x->rank,
                       wt ? wt->rank : -1);
    int k = x->rank - 2;
    size_t nk;
    const int64_t *ks = sh_attr_ints(n, "kernel_shape", &nk);
    int64_t kernel[SG_MAX_RANK];
    for (int i = 0; i < k; i++)
        kernel[i] = ks && nk == (size_t)k ? ks[i] : wt ? wt->d[2 + i] : SH_UNK;
    int64_t out[SG_MAX_RANK];
    out[0] = x->d[0];
    out[1] = wt ? wt->d[0] : SH_UNK;
    bool known = true;
    for (int i = 0; i < k; i++)
        known = known && sh_num(kernel[i]);
    if (!known) {
        for (int i = 0; i < k; i++)
            out[2 + i] = SH_UNK;
        return sh_set_out(c, n, 0, x->rank, out);
    }
    struct win w;
    bool ok;
    sg_status st = read_win(c, n, k, kernel, &w, &ok);
    if (!st && ok)
        st = window_dims(c, n, &w, x->d + 2, false, out + 2, &ok);
    if (st || !ok)
        return st;
    int64_t group = sg_attr_int(n, "group", 1);
    if (wt && sh_num(x->d[1]) && sh_num(wt->d[1]) && group >= 1) {
        int64_t cin;
        if (!sg_dim_mul(wt->d[1], group, &cin) || cin != x->d[1]) {
            char a[256], b[256];
            return sh_fail(c, n, "input %s has not weight %s channels times group %lld",
                           sh_fmt(c, x, a, sizeof a), sh_fmt(c, wt, b, sizeof b), (long long)group);
        }
    }
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_conv_transpose(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *wt = sh_in_ranked(c, n, 1);
    if (!x || !wt)
        return SG_OK;
    if (x->rank < 3 || wt->rank != x->rank)
        return sh_fail(c, n, "input rank %d and weight rank %d do not make a convolution", x->rank,
                       wt->rank);
    int k = x->rank - 2;
    int64_t group = sg_attr_int(n, "group", 1);
    int64_t out[SG_MAX_RANK];
    out[0] = x->d[0];
    out[1] = SH_UNK;
    if (sh_num(wt->d[1]) && (group < 1 || !sg_dim_mul(wt->d[1], group, &out[1])))
        return sh_fail(c, n, "group %lld times %lld output channels overflows", (long long)group,
                       (long long)wt->d[1]);
    size_t nos, nop, nk;
    const int64_t *os = sh_attr_ints(n, "output_shape", &nos);
    const int64_t *op = sh_attr_ints(n, "output_padding", &nop);
    const int64_t *ks = sh_attr_ints(n, "kernel_shape", &nk);
    if (os && nos >= (size_t)k) {
        for (int i = 0; i < k; i++)
            out[2 + i] = os[nos - (size_t)k + (size_t)i];
        return sh_set_out(c, n, 0, x->rank, out);
    }
    int64_t kernel[SG_MAX_RANK];
    for (int i = 0; i < k; i++) {
        kernel[i] = ks && nk == (size_t)k ? ks[i] : wt->d[2 + i];
        if (!sh_num(kernel[i])) {
            for (int j = 0; j < k; j++)
                out[2 + j] = SH_UNK;
            return sh_set_out(c, n, 0, x->rank, out);
        }
    }
    struct win w;
    bool ok;
    sg_status st = read_win(c, n, k, kernel, &w, &ok);
    if (st || !ok)
        return st;
    for (int i = 0; i < k; i++) {
        int64_t in = x->d[2 + i];
        if (!sh_num(in)) {
            out[2 + i] = SH_UNK;
            continue;
        }
        int64_t opad = op && nop == (size_t)k ? op[i] : 0, v, span;
        bool fine;
        if (w.autopad == PAD_SAME_UPPER || w.autopad == PAD_SAME_LOWER) {
            fine = sg_dim_mul(in, w.stride[i], &v);
        } else {
            int64_t pads = w.autopad == PAD_VALID ? 0 : w.pb[i] + w.pe[i];
            fine = in >= 1 && sg_dim_mul(w.stride[i], in - 1, &v) && sg_dim_add(v, opad, &v) &&
                   sg_dim_mul(w.dil[i], kernel[i] - 1, &span) && sg_dim_add(v, span + 1, &v) &&
                   sg_dim_sub(v, pads, &v) && v >= 0;
        }
        if (!fine)
            return sh_fail(c, n, "spatial dim %d of the output is negative or overflows", i);
        out[2 + i] = v;
    }
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_pool(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    if (x->rank < 3)
        return sh_fail(c, n, "input rank %d is below 3", x->rank);
    int k = x->rank - 2;
    size_t nk;
    const int64_t *ks = sh_attr_ints(n, "kernel_shape", &nk);
    if (!ks || nk != (size_t)k)
        return sh_fail(c, n, "kernel_shape has %zu dims for %d spatial dims", nk, k);
    struct win w;
    bool ok;
    sg_status st = read_win(c, n, k, ks, &w, &ok);
    int64_t out[SG_MAX_RANK];
    out[0] = x->d[0];
    out[1] = x->d[1];
    bool ceil_mode = sg_attr_int(n, "ceil_mode", 0) != 0;
    if (!st && ok)
        st = window_dims(c, n, &w, x->d + 2, ceil_mode, out + 2, &ok);
    if (st || !ok)
        return st;
    st = sh_set_out(c, n, 0, x->rank, out);
    return st ? st : sh_set_out(c, n, 1, x->rank, out);
}

sg_status sh_global_pool(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    if (x->rank < 2)
        return sh_fail(c, n, "input rank %d is below 2", x->rank);
    int64_t out[SG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        out[i] = i < 2 ? x->d[i] : 1;
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_matmul(struct sh_ctx *c, sg_node *n)
{
    bool q = strcmp(n->op_type, "QLinearMatMul") == 0;
    struct sh *a = sh_in_ranked(c, n, 0), *b = sh_in_ranked(c, n, q ? 3 : 1);
    if (!a || !b)
        return SG_OK;
    if (!a->rank || !b->rank)
        return sh_fail(c, n, "an operand is a scalar");
    int64_t da[SG_MAX_RANK + 1] = {0}, db[SG_MAX_RANK + 1] = {0};
    int ra = a->rank, rb = b->rank;
    sh_dims_copy(da, a->d, ra);
    sh_dims_copy(db, b->d, rb);
    bool a1 = ra == 1, b1 = rb == 1;
    if (a1) {
        da[1] = da[0];
        da[0] = 1;
        ra = 2;
    }
    if (b1) {
        db[1] = 1;
        rb = 2;
    }
    int64_t kk;
    if (!sh_unify(da[ra - 1], db[rb - 2], &kk)) {
        char x[256], y[256];
        return sh_fail(c, n, "inner dims differ: %s times %s", sh_fmt(c, a, x, sizeof x),
                       sh_fmt(c, b, y, sizeof y));
    }
    int r = (ra > rb ? ra : rb);
    int64_t out[SG_MAX_RANK + 1];
    for (int i = 0; i < r - 2; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t x = ia >= 0 ? da[ia] : 1, y = ib >= 0 ? db[ib] : 1;
        if (!sh_bcast_dim(x, y, &out[i])) {
            char s1[256], s2[256];
            return sh_fail(c, n, "batch dims do not broadcast: %s and %s",
                           sh_fmt(c, a, s1, sizeof s1), sh_fmt(c, b, s2, sizeof s2));
        }
    }
    int o = r - 2;
    if (!a1)
        out[o++] = da[ra - 2];
    if (!b1)
        out[o++] = db[rb - 1];
    return sh_set_out(c, n, 0, o, out);
}

sg_status sh_gemm(struct sh_ctx *c, sg_node *n)
{
    struct sh *a = sh_in_ranked(c, n, 0), *b = sh_in_ranked(c, n, 1);
    int64_t unk[2] = {SH_UNK, SH_UNK};
    struct sh none = {.rank = 2, .d = unk};
    if (!a && !b)
        return sh_set_out(c, n, 0, 2, unk);
    a = a ? a : &none;
    b = b ? b : &none;
    if (a->rank != 2 || b->rank != 2)
        return sh_fail(c, n, "operands of rank %d and %d, not 2", a->rank, b->rank);
    bool ta = sg_attr_int(n, "transA", 0) != 0, tb = sg_attr_int(n, "transB", 0) != 0;
    int64_t m = a->d[ta ? 1 : 0], ka = a->d[ta ? 0 : 1];
    int64_t kb = b->d[tb ? 1 : 0], nn = b->d[tb ? 0 : 1], k;
    if (!sh_unify(ka, kb, &k)) {
        char x[256], y[256];
        return sh_fail(c, n, "inner dims differ: %s and %s (transA %d, transB %d)",
                       sh_fmt(c, a, x, sizeof x), sh_fmt(c, b, y, sizeof y), ta, tb);
    }
    int64_t out[2] = {m, nn};
    struct sh *bias = sh_in_ranked(c, n, 2);
    if (bias && bias->rank <= 2) {
        /* C broadcasts to [M, N]: its numbers tell unknown M or N. */
        for (int i = 0; i < bias->rank; i++) {
            int64_t *o = &out[2 - bias->rank + i];
            if (bias->d[i] != 1 && sh_num(bias->d[i]) && !sh_num(*o))
                *o = bias->d[i];
        }
    }
    return sh_set_out(c, n, 0, 2, out);
}
