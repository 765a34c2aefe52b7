/*
 * kctx.c - what kernels call: outputs, errors, scratch, attributes, input
 * helpers, element access and numpy broadcasting.
 */
#include "rt_impl.h"
#include "sg_alloc.h"
#include "sg_dims.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ outputs */

bool sg_kout_wanted(const struct sg_kctx *k, uint32_t i)
{
    return i < k->n_out && k->node->outputs[i] != NULL;
}

static sg_status set_out(struct sg_kctx *k, uint32_t i, sg_rt_value *v)
{
    if (i >= k->n_out) {
        sg_rt_value_unref(v);
        return sg_kfail(k, SG_EARITY, "output %u does not exist (the node has %u)", i, k->n_out);
    }
    sg_rt_value_unref(k->out[i]);
    k->out[i] = v;
    return SG_OK;
}

/* A new output tensor (cleared when `zero`), within max_tensor_bytes. */
static sg_status new_out(struct sg_kctx *k, uint32_t i, int32_t dtype, const int64_t *dims,
                         uint32_t rank, bool zero, sg_rt_value **out)
{
    sg_rt_value *v;
    struct sg_diag d = {0};
    if (out)
        *out = NULL;
    size_t limit = k->priv ? k->priv->max_tensor_bytes : 0;
    if (limit && rank <= SG_MAX_RANK) {
        /* Refuse before allocating: an expansion of constants may ask for
         * more memory than the machine has. */
        uint64_t bytes = sg_rt_elem_size(dtype);
        bool over = false;
        for (uint32_t d_ = 0; d_ < rank && !over; d_++) {
            if (dims[d_] < 0)
                break; /* sg_rt_tensor_create names the bad dim */
            over = dims[d_] && bytes > limit / (uint64_t)dims[d_];
            bytes *= (uint64_t)dims[d_];
        }
        if (over || bytes > limit)
            return sg_kfail(k, SG_ETOOBIG, "output %u %s%s is over the limit of %zu bytes", i,
                            sg_dtype_name(dtype), sg_kdims(k, dims, rank), limit);
    }
    sg_status st = sg__rt_tensor_new(dtype, dims, rank, zero, &v, &d);
    if (st)
        return sg_kfail(k, st, "output %u: %s", i, d.msg);
    if (dtype == SG_DTYPE_STRING)
        v->storage->interned = false; /* the kernel points entries anywhere */
    st = set_out(k, i, v);
    if (!st && out)
        *out = v;
    return st;
}

sg_status sg_kout(struct sg_kctx *k, uint32_t i, int32_t dtype, const int64_t *dims, uint32_t rank,
                  sg_rt_value **out)
{
    return new_out(k, i, dtype, dims, rank, true, out);
}

sg_status sg_kout_uninit(struct sg_kctx *k, uint32_t i, int32_t dtype, const int64_t *dims,
                         uint32_t rank, sg_rt_value **out)
{
    return new_out(k, i, dtype, dims, rank, false, out);
}

sg_status sg_kout_inplace(struct sg_kctx *k, uint32_t oi, uint32_t ii, sg_rt_value **out)
{
    const sg_rt_value *X = sg_kin(k, ii);
    *out = NULL;
    if (!X || X->kind != SG_RT_TENSOR)
        return sg_kfail(k, SG_EINVAL, "input %u is not a tensor", ii);
    if (X->dtype == SG_DTYPE_STRING || !sg__rt_input_dead(k->priv, ii, X) || !sg__rt_exclusive(X))
        return sg_kout_uninit(k, oi, X->dtype, X->dims, X->rank, out);
    sg_rt_value *v = sg__rt_view(X->storage, X->dtype, X->data, X->dims, X->rank);
    if (!v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_status st = set_out(k, oi, v);
    if (!st)
        *out = v;
    return st;
}

sg_status sg_kout_alias(struct sg_kctx *k, uint32_t i, const sg_rt_value *src, const int64_t *dims,
                        uint32_t rank)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < rank; d++) {
        if (dims[d] < 0)
            return sg_kfail(k, SG_ERANGE, "output %u: negative dimension in %s", i,
                            sg_kdims(k, dims, rank));
        n *= dims[d];
    }
    if (src->kind != SG_RT_TENSOR || n != src->numel || rank > SG_MAX_RANK)
        return sg_kfail(k, SG_ESHAPE, "output %u: cannot view %s as %s", i, sg_kshape(k, src),
                        sg_kdims(k, dims, rank));
    sg_rt_value *v = sg__rt_view(src->storage, src->dtype, src->data, dims, rank);
    if (!v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    return set_out(k, i, v);
}

sg_status sg_kout_value(struct sg_kctx *k, uint32_t i, sg_rt_value *v)
{
    return set_out(k, i, sg_rt_value_ref(v));
}

/* ------------------------------------------------------ errors, scratch */

sg_status sg_kfail(struct sg_kctx *k, sg_status status, const char *fmt, ...)
{
    char label[512], msg[SG_DIAG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sg__rt_node_label(k->node, k->opset, label, sizeof label);
    sg_diag_set(k->diag, status, "%s: %s", label, msg);
    return status;
}

/* A large scratch block from the pool, listed for release after the node. */
struct sg__kblock {
    void *p;
    size_t cap;
    struct sg__kblock *next;
};

#define SCRATCH_BIG ((size_t)64 << 10)

void *sg_kscratch(struct sg_kctx *k, size_t size)
{
    if (!k->priv->scratch && !(k->priv->scratch = sg_arena_create()))
        return NULL;
    if (size < SCRATCH_BIG)
        return sg_arena_alloc(k->priv->scratch, size);
    struct sg__kblock *b = sg_arena_alloc(k->priv->scratch, sizeof *b);
    if (!b || !(b->p = sg__rt_block_get(size, &b->cap)))
        return NULL;
    b->next = k->priv->big;
    k->priv->big = b;
    return b->p;
}

void sg__kscratch_release(struct sg__kpriv *p)
{
    for (struct sg__kblock *b = p->big; b; b = b->next)
        sg__rt_block_put(b->p, b->cap);
    p->big = NULL;
    sg_arena_free(p->scratch);
    p->scratch = NULL;
}

const char *sg_kshape(struct sg_kctx *k, const sg_rt_value *v)
{
    char buf[1024];
    sg_rt_value_format(v, buf, sizeof buf);
    char *p = sg_kscratch(k, strlen(buf) + 1);
    if (!p)
        return "?";
    return strcpy(p, buf);
}

const char *sg_kdims(struct sg_kctx *k, const int64_t *dims, uint32_t rank)
{
    char buf[1024];
    sg_rt_dims_format(dims, rank, buf, sizeof buf);
    char *p = sg_kscratch(k, strlen(buf) + 1);
    if (!p)
        return "?";
    return strcpy(p, buf);
}

/* ---------------------------------------------------------- attributes */

const sg_attr *sg_kattr(const struct sg_kctx *k, const char *name)
{
    return sg_node_attr(k->node, name);
}

int64_t sg_kattr_int(const struct sg_kctx *k, const char *name, int64_t dflt)
{
    const sg_attr *a = sg_kattr(k, name);
    return a && a->type == SG_ATTR_INT ? a->i : dflt;
}

float sg_kattr_float(const struct sg_kctx *k, const char *name, float dflt)
{
    const sg_attr *a = sg_kattr(k, name);
    if (a && a->type == SG_ATTR_FLOAT)
        return a->f;
    if (a && a->type == SG_ATTR_INT)
        return (float)a->i;
    return dflt;
}

const char *sg_kattr_string(struct sg_kctx *k, const char *name, const char *dflt)
{
    const sg_attr *a = sg_kattr(k, name);
    if (!a || a->type != SG_ATTR_STRING)
        return dflt;
    char *s = sg_kscratch(k, a->s.len + 1);
    if (!s)
        return dflt;
    if (a->s.len)
        memcpy(s, a->s.data, a->s.len);
    s[a->s.len] = 0;
    return s;
}

int64_t sg_kattr_ints(const struct sg_kctx *k, const char *name, const int64_t **v)
{
    const sg_attr *a = sg_kattr(k, name);
    if (!a || a->type != SG_ATTR_INTS) {
        *v = NULL;
        return -1;
    }
    *v = a->ints;
    return (int64_t)a->n_ints;
}

int64_t sg_kattr_floats(const struct sg_kctx *k, const char *name, const float **v)
{
    const sg_attr *a = sg_kattr(k, name);
    if (!a || a->type != SG_ATTR_FLOATS) {
        *v = NULL;
        return -1;
    }
    *v = a->floats;
    return (int64_t)a->n_floats;
}

sg_graph *sg_kattr_graph(const struct sg_kctx *k, const char *name)
{
    const sg_attr *a = sg_kattr(k, name);
    return a && a->type == SG_ATTR_GRAPH ? a->g : NULL;
}

sg_status sg_ktensor_value(struct sg_kctx *k, sg_tensor *t, sg_rt_value **out)
{
    struct sg_diag d = {0};
    sg_status st;
    *out = NULL;
    if (t->dtype == SG_DTYPE_STRING) {
        const sg_tensor_extra *x = sg_tensor_get_extra(t);
        int64_t n = sg_tensor_numel(t);
        if (n < 0 || (uint64_t)n != x->n_string)
            return sg_kfail(k, SG_ESHAPE, "string tensor with %zu strings for shape %s",
                            x->n_string, sg_kdims(k, t->dims, t->rank));
        st = sg__rt_borrow(SG_DTYPE_STRING, x->string_data, t->dims, t->rank, out, &d);
    } else {
        size_t nbytes;
        const void *data = sg_tensor_data(k->model, t, &nbytes, &d);
        if (!data)
            return sg_kfail(k, d.status ? d.status : SG_EPARSE, "%s", d.msg);
        st = sg__rt_borrow(t->dtype, data, t->dims, t->rank, out, &d);
    }
    if (st)
        return sg_kfail(k, st, "%s", d.msg);
    return SG_OK;
}

sg_status sg_kattr_tensor(struct sg_kctx *k, const char *name, sg_rt_value **out)
{
    const sg_attr *a = sg_kattr(k, name);
    *out = NULL;
    if (!a || a->type != SG_ATTR_TENSOR || !a->t)
        return sg_kfail(k, SG_ENOTFOUND, "tensor attribute '%s' is missing", name);
    return sg_ktensor_value(k, a->t, out);
}

/* -------------------------------------------------------- input helpers */

sg_status sg_kin_ints(struct sg_kctx *k, uint32_t i, const int64_t **v, int64_t *n)
{
    const sg_rt_value *t = sg_kin(k, i);
    *v = NULL;
    *n = 0;
    if (!t)
        return sg_kfail(k, SG_EUNDEF, "input %u is required", i);
    if ((t->dtype != SG_DTYPE_INT64 && t->dtype != SG_DTYPE_INT32) || t->rank > 1)
        return sg_kfail(k, SG_ETYPE, "input %u must be an int32/int64 scalar or 1-D tensor, got %s",
                        i, sg_kshape(k, t));
    if (t->dtype == SG_DTYPE_INT64) {
        *v = t->data;
    } else {
        int64_t *w = sg_kscratch(k, (size_t)(t->numel + 1) * sizeof *w);
        if (!w)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t j = 0; j < t->numel; j++)
            w[j] = ((const int32_t *)t->data)[j];
        *v = w;
    }
    *n = t->numel;
    return SG_OK;
}

sg_status sg_kaxis(struct sg_kctx *k, int64_t axis, uint32_t rank, uint32_t *out)
{
    int64_t a = axis < 0 ? axis + (int64_t)rank : axis;
    if (a < 0 || a >= (int64_t)rank || rank == 0)
        return sg_kfail(k, SG_ERANGE, "axis %lld is out of range for rank %u", (long long)axis,
                        rank);
    *out = (uint32_t)a;
    return SG_OK;
}

const float *sg_kfloats(struct sg_kctx *k, const sg_rt_value *v)
{
    if (v->dtype == SG_DTYPE_FLOAT)
        return v->data;
    float *f = sg_kscratch(k, (size_t)(v->numel + 1) * sizeof *f);
    if (!f)
        return NULL;
    for (int64_t i = 0; i < v->numel; i++)
        f[i] = (float)sg_rt_get_f64(v, i);
    return f;
}

double sg_rt_get_f64(const sg_rt_value *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case SG_DTYPE_FLOAT:
        return ((const float *)d)[i];
    case SG_DTYPE_DOUBLE:
        return ((const double *)d)[i];
    case SG_DTYPE_FLOAT16:
        return sg_half_to_float(((const uint16_t *)d)[i]);
    case SG_DTYPE_BFLOAT16:
        return sg_bf16_to_float(((const uint16_t *)d)[i]);
    case SG_DTYPE_INT8:
        return ((const int8_t *)d)[i];
    case SG_DTYPE_INT16:
        return ((const int16_t *)d)[i];
    case SG_DTYPE_INT32:
        return ((const int32_t *)d)[i];
    case SG_DTYPE_INT64:
        return (double)((const int64_t *)d)[i];
    case SG_DTYPE_UINT8:
    case SG_DTYPE_BOOL:
        return ((const uint8_t *)d)[i];
    case SG_DTYPE_UINT16:
        return ((const uint16_t *)d)[i];
    case SG_DTYPE_UINT32:
        return ((const uint32_t *)d)[i];
    case SG_DTYPE_UINT64:
        return (double)((const uint64_t *)d)[i];
    default: /* float8, 4-bit (held one per byte) */
        return sg_dtype_get_f64(t->dtype, d, (size_t)i);
    }
}

int64_t sg_rt_get_i64(const sg_rt_value *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case SG_DTYPE_INT8:
    case SG_DTYPE_INT4:
        return ((const int8_t *)d)[i];
    case SG_DTYPE_INT16:
        return ((const int16_t *)d)[i];
    case SG_DTYPE_INT32:
        return ((const int32_t *)d)[i];
    case SG_DTYPE_INT64:
        return ((const int64_t *)d)[i];
    case SG_DTYPE_UINT8:
    case SG_DTYPE_UINT4:
    case SG_DTYPE_BOOL:
        return ((const uint8_t *)d)[i];
    case SG_DTYPE_UINT16:
        return ((const uint16_t *)d)[i];
    case SG_DTYPE_UINT32:
        return ((const uint32_t *)d)[i];
    case SG_DTYPE_UINT64:
        return (int64_t)((const uint64_t *)d)[i];
    default:
        return sg_rt_f64_to_i64(sg_rt_get_f64(t, i));
    }
}

int64_t sg_rt_f64_to_i64(double v)
{
    if (v != v)
        return 0;
    if (v >= 9.2233720368547758e18)
        return INT64_MAX;
    if (v <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)v;
}

void sg_rt_set_f64(sg_rt_value *t, int64_t i, double v)
{
    void *d = t->data;
    switch (t->dtype) {
    case SG_DTYPE_FLOAT:
        ((float *)d)[i] = (float)v;
        break;
    case SG_DTYPE_DOUBLE:
        ((double *)d)[i] = v;
        break;
    case SG_DTYPE_FLOAT16:
        ((uint16_t *)d)[i] = sg_float_to_half((float)v);
        break;
    case SG_DTYPE_BFLOAT16:
        ((uint16_t *)d)[i] = sg_float_to_bf16((float)v);
        break;
    case SG_DTYPE_BOOL:
        ((uint8_t *)d)[i] = v != 0;
        break;
    case SG_DTYPE_FLOAT8E4M3FN:
    case SG_DTYPE_FLOAT8E4M3FNUZ:
    case SG_DTYPE_FLOAT8E5M2:
    case SG_DTYPE_FLOAT8E5M2FNUZ:
        ((uint8_t *)d)[i] = sg_float_to_fp8(t->dtype, v, SG_FP8_SATURATE);
        break;
    case SG_DTYPE_FLOAT4E2M1:
        ((uint8_t *)d)[i] = sg_float_to_fp4(v);
        break;
    default: {
        int64_t x = sg_rt_f64_to_i64(v);
        if (t->dtype == SG_DTYPE_UINT64 && v >= 9.2233720368547758e18 && v < 1.8446744073709552e19)
            ((uint64_t *)d)[i] = (uint64_t)v;
        else
            sg_rt_set_i64(t, i, x);
        break;
    }
    }
}

void sg_rt_set_i64(sg_rt_value *t, int64_t i, int64_t v)
{
    void *d = t->data;
    switch (t->dtype) {
    case SG_DTYPE_INT8:
        ((int8_t *)d)[i] = (int8_t)v;
        break;
    case SG_DTYPE_INT16:
        ((int16_t *)d)[i] = (int16_t)v;
        break;
    case SG_DTYPE_INT32:
        ((int32_t *)d)[i] = (int32_t)v;
        break;
    case SG_DTYPE_INT64:
        ((int64_t *)d)[i] = v;
        break;
    case SG_DTYPE_UINT8:
        ((uint8_t *)d)[i] = (uint8_t)v;
        break;
    case SG_DTYPE_BOOL:
        ((uint8_t *)d)[i] = v != 0;
        break;
    case SG_DTYPE_UINT16:
        ((uint16_t *)d)[i] = (uint16_t)v;
        break;
    case SG_DTYPE_UINT32:
        ((uint32_t *)d)[i] = (uint32_t)v;
        break;
    case SG_DTYPE_UINT64:
        ((uint64_t *)d)[i] = (uint64_t)v;
        break;
    case SG_DTYPE_UINT4:
    case SG_DTYPE_INT4:
        ((uint8_t *)d)[i] = sg_int4_wrap(t->dtype, v);
        break;
    default:
        /* The float types; any other (strings, complex) has no integer
         * value, and sending it back to sg_rt_set_f64 would recurse. */
        if (sg_dtype_is_float(t->dtype))
            sg_rt_set_f64(t, i, (double)v);
        break;
    }
}

void sg_rt_strides(const int64_t *dims, uint32_t rank, int64_t *strides)
{
    int64_t s = 1;
    for (uint32_t i = rank; i-- > 0;) {
        strides[i] = s;
        s *= dims[i];
    }
}

#define COPY_ROW(T)                                                                                \
    do {                                                                                           \
        const T *s_ = (const T *)src + off;                                                        \
        T *d_ = (T *)d;                                                                            \
        if (step == 1)                                                                             \
            for (int64_t i = 0; i < inner; i++)                                                    \
                d_[i] = s_[i];                                                                     \
        else                                                                                       \
            for (int64_t i = 0; i < inner; i++)                                                    \
                d_[i] = s_[i * step];                                                              \
    } while (0)

void sg_rt_copy_strided(void *dst, const void *src, size_t elem_size, uint32_t rank,
                        const int64_t *dims, const int64_t *src_strides, int64_t src_offset)
{
    int64_t idx[SG_MAX_RANK];
    for (uint32_t d = 0; d < rank; d++) {
        if (dims[d] == 0)
            return;
        idx[d] = 0;
    }
    if (rank == 0) {
        memcpy(dst, (const char *)src + src_offset * (int64_t)elem_size, elem_size);
        return;
    }
    int64_t inner = dims[rank - 1], step = src_strides[rank - 1], off = src_offset;
    char *d = dst;
    for (;;) {
        switch (elem_size) {
        case 1:
            COPY_ROW(uint8_t);
            break;
        case 2:
            COPY_ROW(uint16_t);
            break;
        case 4:
            COPY_ROW(uint32_t);
            break;
        case 8:
            COPY_ROW(uint64_t);
            break;
        default:
            for (int64_t i = 0; i < inner; i++)
                memcpy(d + i * (int64_t)elem_size,
                       (const char *)src + (off + i * step) * (int64_t)elem_size, elem_size);
            break;
        }
        d += inner * (int64_t)elem_size;
        int k = (int)rank - 2;
        for (; k >= 0; k--) {
            idx[k]++;
            off += src_strides[k];
            if (idx[k] < dims[k])
                break;
            off -= src_strides[k] * dims[k];
            idx[k] = 0;
        }
        if (k < 0)
            return;
    }
}

/* ------------------------------------------------------- sliding windows */

sg_status sg_kwindow(struct sg_kctx *k, uint32_t nsp, const int64_t *in, const int64_t *kk,
                     const int64_t *stride, const int64_t *dil, int64_t *pad0, int64_t *pad1,
                     bool ceil_mode, int64_t *out)
{
    const char *ap = sg_kattr_string(k, "auto_pad", "NOTSET");
    bool same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown auto_pad '%s'", ap);
    for (uint32_t i = 0; i < nsp; i++) {
        /* ext = dil * (kernel - 1) + 1, the input span of one window */
        int64_t ext, padded, span;
        if (stride[i] < 1 || dil[i] < 1 || kk[i] < 0)
            return sg_kfail(k, SG_EINVAL,
                            "kernel %lld, stride %lld, dilation %lld on spatial axis %u",
                            (long long)kk[i], (long long)stride[i], (long long)dil[i], i);
        if (!sg_dim_mul(dil[i], kk[i] - 1, &ext) || !sg_dim_add(ext, 1, &ext))
            return sg_kfail(k, SG_ERANGE,
                            "window of kernel %lld, dilation %lld overflows on spatial axis %u",
                            (long long)kk[i], (long long)dil[i], i);
        if (same_upper || same_lower) {
            /* o = ceil(in / stride); total = (o - 1) * stride + ext - in */
            int64_t o = in[i] / stride[i] + (in[i] % stride[i] != 0), total;
            if (!sg_dim_mul(o - 1, stride[i], &total) || !sg_dim_add(total, ext, &total))
                return sg_kfail(k, SG_ERANGE, "padding overflows on spatial axis %u", i);
            total -= in[i];
            if (total < 0)
                total = 0;
            pad0[i] = same_upper ? total / 2 : total - total / 2;
            pad1[i] = total - pad0[i];
            out[i] = o;
            continue;
        }
        if (valid)
            pad0[i] = pad1[i] = 0;
        if (!sg_dim_add(in[i], pad0[i], &padded) || !sg_dim_add(padded, pad1[i], &padded))
            return sg_kfail(k, SG_ERANGE, "pads %lld and %lld overflow spatial axis %u of %lld",
                            (long long)pad0[i], (long long)pad1[i], i, (long long)in[i]);
        if (!sg_dim_sub(padded, ext, &span) || span < 0)
            return sg_kfail(k, SG_ESHAPE,
                            "window of %lld (kernel %lld, dilation %lld) is larger than the "
                            "padded input %lld on spatial axis %u",
                            (long long)ext, (long long)kk[i], (long long)dil[i], (long long)padded,
                            i);
        out[i] = span / stride[i] + (ceil_mode && span % stride[i] != 0) + 1;
        /* A last window starting in the end padding is dropped (in + pad0
         * <= padded fits; a start past int64 is past it). */
        int64_t start;
        if (ceil_mode && (!sg_dim_mul(out[i] - 1, stride[i], &start) || start >= in[i] + pad0[i]))
            out[i]--;
    }
    return SG_OK;
}

/* -------------------------------------------------------- broadcasting */

sg_status sg_bcast_init_dims(struct sg_kctx *k, struct sg_bcast *b, uint32_t n,
                             const int64_t *const *dims, const uint32_t *ranks)
{
    memset(b, 0, offsetof(struct sg_bcast, dims));
    if (n > SG_BCAST_MAX)
        return sg_kfail(k, SG_EINVAL, "cannot broadcast %u inputs at once", n);
    uint32_t rank = 0;
    for (uint32_t j = 0; j < n; j++)
        if (ranks[j] > rank)
            rank = ranks[j];
    b->rank = rank;
    b->n = n;
    for (uint32_t d = 0; d < rank; d++) {
        int64_t out = 1;
        for (uint32_t j = 0; j < n; j++) {
            int64_t off = (int64_t)d - (int64_t)(rank - ranks[j]);
            int64_t x = off < 0 ? 1 : dims[j][off];
            if (x == 1)
                continue;
            if (out == 1) {
                out = x;
            } else if (x != out) {
                char msg[SG_DIAG_MAX];
                size_t pos = 0;
                for (uint32_t i = 0; i < n && pos < sizeof msg; i++) {
                    char s[256];
                    int w = snprintf(msg + pos, sizeof msg - pos, "%s%s", i ? " and " : "",
                                     sg_rt_dims_format(dims[i], ranks[i], s, sizeof s));
                    pos += w > 0 ? (size_t)w : 0;
                }
                return sg_kfail(k, SG_ESHAPE, "shapes %s do not broadcast (dimension %u)", msg, d);
            }
        }
        b->dims[d] = out;
    }
    /* Shapes of tensors fit by construction; a shape given as values
     * (Expand's) need not: its output must be a shape a tensor may have,
     * which keeps the strides below within int64 too. */
    if (!sg_dims_extent(b->dims, rank, 1, &b->numel)) {
        bool neg = false;
        for (uint32_t d = 0; d < rank; d++)
            neg |= b->dims[d] < 0;
        return sg_kfail(k, SG_ERANGE, "the broadcast shape %s %s", sg_kdims(k, b->dims, rank),
                        neg ? "has a negative dimension" : "has too many elements");
    }
    /* Per-input strides over the output dims (0 where broadcast). */
    int64_t str[SG_BCAST_MAX][SG_MAX_RANK];
    for (uint32_t j = 0; j < n; j++) {
        int64_t s = 1;
        for (uint32_t d = rank; d-- > 0;) {
            int64_t off = (int64_t)d - (int64_t)(rank - ranks[j]);
            int64_t x = off < 0 ? 1 : dims[j][off];
            str[j][d] = x == 1 ? 0 : s;
            s *= x;
        }
    }
    /* Merge adjacent dims where every input is contiguous across both (or
     * broadcast across both), so runs are as long as possible. */
    uint32_t cr = 0;
    for (uint32_t d = 0; d < rank; d++) {
        if (b->dims[d] == 1)
            continue;
        bool merge = cr > 0;
        for (uint32_t j = 0; merge && j < n; j++) {
            int64_t prev = b->cstr[j][cr - 1];
            int64_t cur = str[j][d];
            if (!((prev == 0 && cur == 0) || (cur != 0 && prev == cur * b->dims[d])))
                merge = false;
        }
        if (merge) {
            b->cdims[cr - 1] *= b->dims[d];
            for (uint32_t j = 0; j < n; j++)
                b->cstr[j][cr - 1] = str[j][d];
        } else {
            b->cdims[cr] = b->dims[d];
            for (uint32_t j = 0; j < n; j++)
                b->cstr[j][cr] = str[j][d];
            cr++;
        }
    }
    b->crank = cr;
    b->started = false;
    return SG_OK;
}

sg_status sg_bcast_init(struct sg_kctx *k, struct sg_bcast *b, uint32_t n,
                        const sg_rt_value *const *ts)
{
    const int64_t *dims[SG_BCAST_MAX];
    uint32_t ranks[SG_BCAST_MAX];
    if (n > SG_BCAST_MAX)
        return sg_kfail(k, SG_EINVAL, "cannot broadcast %u inputs at once", n);
    for (uint32_t j = 0; j < n; j++) {
        dims[j] = ts[j]->dims;
        ranks[j] = ts[j]->rank;
    }
    return sg_bcast_init_dims(k, b, n, dims, ranks);
}

bool sg_bcast_next(struct sg_bcast *b)
{
    uint32_t cr = b->crank;
    if (b->numel == 0)
        return false;
    if (!b->started) {
        b->started = true;
        for (uint32_t d = 0; d < cr; d++)
            b->idx[d] = 0;
        b->pos = 0;
        for (uint32_t j = 0; j < b->n; j++)
            b->off[j] = 0;
    } else if (cr == 0) {
        return false;
    } else {
        /* Advance the outer index (all dims but the last). */
        b->pos += b->run;
        uint32_t d = cr - 1;
        for (;;) {
            if (d == 0)
                return false;
            d--;
            b->idx[d]++;
            for (uint32_t j = 0; j < b->n; j++)
                b->off[j] += b->cstr[j][d];
            if (b->idx[d] < b->cdims[d])
                break;
            for (uint32_t j = 0; j < b->n; j++)
                b->off[j] -= b->cstr[j][d] * b->cdims[d];
            b->idx[d] = 0;
        }
    }
    if (cr == 0) {
        b->run = 1;
        for (uint32_t j = 0; j < b->n; j++)
            b->step[j] = 0;
        return true;
    }
    b->run = b->cdims[cr - 1];
    for (uint32_t j = 0; j < b->n; j++)
        b->step[j] = b->cstr[j][cr - 1];
    return true;
}
