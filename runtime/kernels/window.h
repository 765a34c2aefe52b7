/*
 * window.h - sliding-window geometry shared by conv.c and pool.c: the
 * strides, dilations, pads and auto_pad attributes of Conv, ConvTranspose
 * and the pooling ops, the output size they give, and odometer helpers for
 * walking N spatial dimensions.
 *
 * Everything here is static inline: each family compiles what it uses.
 */
#ifndef SG_KERNELS_WINDOW_H
#define SG_KERNELS_WINDOW_H

#include "rt_impl.h"
#include "sg_dims.h"

#include <string.h>

/* The geometry of one windowed op over n spatial dimensions. */
struct sg_win {
    uint32_t n;               /* spatial dims */
    int64_t in[SG_MAX_RANK];  /* input spatial dims */
    int64_t k[SG_MAX_RANK];   /* kernel (window) dims */
    int64_t out[SG_MAX_RANK]; /* output spatial dims */
    int64_t stride[SG_MAX_RANK];
    int64_t dil[SG_MAX_RANK];
    int64_t pad0[SG_MAX_RANK];         /* before: may be negative for ConvTranspose */
    int64_t pad1[SG_MAX_RANK];         /* after */
    int64_t in_size, k_size, out_size; /* products of in, k, out */
};

/* Floor division for possibly negative a (b > 0). */
static inline int64_t sg_win_floordiv(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The `name` ints attribute with n entries (or `dflt` everywhere when it is
 * absent) into v; fails naming the attribute when the count is wrong or an
 * entry is below `min`. */
static inline sg_status sg_win_ints(struct sg_kctx *k, const char *name, uint32_t n, int64_t dflt,
                                    int64_t min, int64_t *v)
{
    const int64_t *a;
    int64_t c = sg_kattr_ints(k, name, &a);
    if (c < 0 || (c == 0 && n > 0)) {
        for (uint32_t i = 0; i < n; i++)
            v[i] = dflt;
        return SG_OK;
    }
    if (c != (int64_t)n)
        return sg_kfail(k, SG_EINVAL, "attribute %s has %lld values for %u spatial dims", name,
                        (long long)c, n);
    for (uint32_t i = 0; i < n; i++) {
        if (a[i] < min)
            return sg_kfail(k, SG_EINVAL, "attribute %s has %lld at index %u (minimum %lld)", name,
                            (long long)a[i], i, (long long)min);
        v[i] = a[i];
    }
    return SG_OK;
}

/*
 * Read strides, dilations (when `has_dil`) and pads for the n spatial dims
 * of input X (rank n + 2) with window w->k[] already set.
 */
static inline sg_status sg_win_attrs(struct sg_kctx *k, struct sg_win *w, const sg_rt_value *X,
                                     bool has_dil)
{
    uint32_t n = w->n;
    sg_status st;
    for (uint32_t i = 0; i < n; i++)
        w->in[i] = X->dims[i + 2];
    if ((st = sg_win_ints(k, "strides", n, 1, 1, w->stride)))
        return st;
    if (has_dil) {
        if ((st = sg_win_ints(k, "dilations", n, 1, 1, w->dil)))
            return st;
    } else {
        for (uint32_t i = 0; i < n; i++)
            w->dil[i] = 1;
    }
    const int64_t *p;
    int64_t c = sg_kattr_ints(k, "pads", &p);
    if (c > 0 && c != 2 * (int64_t)n)
        return sg_kfail(k, SG_EINVAL, "attribute pads has %lld values for %u spatial dims",
                        (long long)c, n);
    for (uint32_t i = 0; i < n; i++) {
        w->pad0[i] = c > 0 ? p[i] : 0;
        w->pad1[i] = c > 0 ? p[i + n] : 0;
        if (w->pad0[i] < 0 || w->pad1[i] < 0)
            return sg_kfail(k, SG_EINVAL, "attribute pads has a negative value");
    }
    return SG_OK;
}

/* Products of in, k and out; false when one overflows (a window or output
 * made from attributes, not yet checked as a tensor's shape). */
static inline bool sg_win_sizes(struct sg_win *w)
{
    return sg_dims_numel(w->in, w->n, &w->in_size) && sg_dims_numel(w->k, w->n, &w->k_size) &&
           sg_dims_numel(w->out, w->n, &w->out_size);
}

/* sg_win_sizes, failing with a message naming the dims. */
static inline sg_status sg_win_sizes_k(struct sg_kctx *k, struct sg_win *w)
{
    if (sg_win_sizes(w))
        return SG_OK;
    return sg_kfail(k, SG_ERANGE, "window %s over %s gives %s: too many elements",
                    sg_kdims(k, w->k, w->n), sg_kdims(k, w->in, w->n), sg_kdims(k, w->out, w->n));
}

/* Output dims and pads of a forward window op (Conv, pooling, Col2Im)
 * under the node's auto_pad and ceil_mode, by the core's sg_kwindow. */
static inline sg_status sg_win_forward(struct sg_kctx *k, struct sg_win *w, bool ceil_mode)
{
    sg_status st =
        sg_kwindow(k, w->n, w->in, w->k, w->stride, w->dil, w->pad0, w->pad1, ceil_mode, w->out);
    return st ? st : sg_win_sizes_k(k, w);
}

/* Advance the odometer idx over dims[0..n); false after the last. */
static inline bool sg_win_next(int64_t *idx, const int64_t *dims, uint32_t n)
{
    for (uint32_t d = n; d-- > 0;) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/*
 * The output range [*lo, *hi) along one axis for which input index
 * o * s - pad0 + off lies in [0, in).
 */
static inline void sg_win_range(int64_t out, int64_t s, int64_t pad0, int64_t off, int64_t in,
                                int64_t *lo, int64_t *hi)
{
    int64_t base = off - pad0; /* input index at o = 0 */
    int64_t l = base >= 0 ? 0 : sg_dim_ceildiv(-base, s);
    int64_t h = in - base <= 0 ? 0 : (in - base - 1) / s + 1;
    *lo = l < out ? l : out;
    *hi = h < out ? h : out;
    if (*hi < *lo)
        *hi = *lo;
}

#endif
