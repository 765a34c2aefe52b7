/*
 * value.c - runtime values: reference-counted tensors over shared storage,
 * sequences and optionals.
 */
#include "rt_impl.h"
#include "sg_alloc.h"
#include "sg_dims.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic size_t bytes_live, bytes_peak;

/* ------------------------------------------------------- block pool */

#define POOL_MIN ((size_t)64 << 10) /* smaller blocks: malloc recycles them well */
#define POOL_SLOTS 64
/*
 * Free blocks are kept while the pool holds no more than the tensor
 * high-water mark minus the bytes live now, plus two of the largest blocks
 * seen (kernel scratch is not counted as tensors); the oldest go first.
 * Shapes recur from node to node and run to run, so most requests find a
 * block, but the pool never makes the process hold much more than its
 * peak of live tensors (keeping one block of every size a model ever used
 * would: 30% more memory on MobileNet).
 */
/*
 * A recycled block holds an earlier tensor's elements, which would hide a
 * kernel that reads an element before writing it from the tests that fill
 * fresh memory: ASan's malloc fill (sanitized builds: blocks in the pool
 * are poisoned too, so a read through a stale pointer is reported) and
 * glibc's MALLOC_PERTURB_. A reused block gets the same treatment as a
 * fresh one: ASan's fill byte under ASan, glibc's perturb byte when that
 * variable is set; otherwise it is handed out as it is (the fast path).
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#define POOL_FILL_ASAN 1
#else
#define POOL_POISON(p, n) ((void)(p), (void)(n))
#define POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#define POOL_FILL_ASAN 0
#endif

/* The byte a reused block is filled with, or -1 for none. */
static int pool_fill_byte(void)
{
    static _Atomic int fill = -2;
    int f = atomic_load(&fill);
    if (f == -2) {
        const char *s = getenv("MALLOC_PERTURB_");
        int perturb = s ? atoi(s) & 0xff : 0;
        /* glibc fills new memory with perturb ^ 0xff; ASan with 0xbe */
        f = POOL_FILL_ASAN ? 0xbe : perturb ? perturb ^ 0xff : -1;
        atomic_store(&fill, f);
    }
    return f;
}

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
    uint64_t stamp; /* pool_clock when it came back */
} pool[POOL_SLOTS];
static size_t pool_n, pool_bytes;
static uint64_t pool_clock;
static size_t pool_largest;
static int pool_sessions;

void *sg__rt_block_get(size_t size, size_t *cap)
{
    if (size >= POOL_MIN) {
        size = (size + 4095) & ~(size_t)4095; /* near sizes share blocks */
        /* Best fit among blocks at most four times as large. */
        void *p = NULL;
        pthread_mutex_lock(&pool_lock);
        size_t best = POOL_SLOTS, limit = 4 * size;
        for (size_t i = 0; i < pool_n; i++)
            if (pool[i].cap >= size && pool[i].cap <= limit &&
                (best == POOL_SLOTS || pool[i].cap < pool[best].cap))
                best = i;
        if (best != POOL_SLOTS) {
            p = pool[best].p;
            *cap = pool[best].cap;
            pool_bytes -= pool[best].cap;
            pool[best] = pool[--pool_n];
        }
        pthread_mutex_unlock(&pool_lock);
        if (p) {
            POOL_UNPOISON(p, *cap);
            int fill = pool_fill_byte();
            if (fill >= 0)
                memset(p, fill, *cap);
            return p;
        }
    }
    *cap = size ? size : 1;
    return sg_malloc(*cap);
}

void sg__rt_block_put(void *p, size_t cap)
{
    if (!p)
        return;
    void *drop[POOL_SLOTS + 1];
    size_t n_drop = 0;
    bool kept = false;
    if (cap >= POOL_MIN) {
        pthread_mutex_lock(&pool_lock);
        pool_clock++;
        pool_largest = cap > pool_largest ? cap : pool_largest;
        size_t peak = atomic_load(&bytes_peak), live = atomic_load(&bytes_live);
        size_t budget = (peak > live ? peak - live : 0) + 2 * pool_largest;
        while (pool_n && pool_bytes + cap > budget) {
            size_t old = 0;
            for (size_t i = 1; i < pool_n; i++)
                if (pool[i].stamp < pool[old].stamp)
                    old = i;
            POOL_UNPOISON(pool[old].p, pool[old].cap);
            drop[n_drop++] = pool[old].p;
            pool_bytes -= pool[old].cap;
            pool[old] = pool[--pool_n];
        }
        kept = pool_sessions > 0 && pool_n < POOL_SLOTS && pool_bytes + cap <= budget;
        if (kept) {
            POOL_POISON(p, cap);
            pool[pool_n].p = p;
            pool[pool_n].cap = cap;
            pool[pool_n++].stamp = pool_clock;
            pool_bytes += cap;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    if (!kept)
        drop[n_drop++] = p;
    for (size_t i = 0; i < n_drop; i++)
        sg_free(drop[i]);
}

void sg__rt_pool_session(int delta)
{
    void *drop[POOL_SLOTS];
    size_t n = 0;
    pthread_mutex_lock(&pool_lock);
    pool_sessions += delta;
    if (pool_sessions <= 0) {
        for (size_t i = 0; i < pool_n; i++) {
            POOL_UNPOISON(pool[i].p, pool[i].cap);
            drop[n++] = pool[i].p;
        }
        pool_n = pool_bytes = pool_largest = 0;
    }
    pthread_mutex_unlock(&pool_lock);
    for (size_t i = 0; i < n; i++)
        sg_free(drop[i]);
}

static void count_alloc(size_t n)
{
    size_t now = atomic_fetch_add(&bytes_live, n) + n;
    size_t peak = atomic_load(&bytes_peak);
    while (now > peak && !atomic_compare_exchange_weak(&bytes_peak, &peak, now)) {
    }
}

size_t sg_rt_bytes_live(void)
{
    return atomic_load(&bytes_live);
}

size_t sg_rt_bytes_peak(void)
{
    return atomic_load(&bytes_peak);
}

size_t sg_rt_elem_size(int32_t dtype)
{
    if (dtype == SG_DTYPE_STRING)
        return sizeof(sg_bytes);
    return sg_dtype_size(dtype);
}

static void storage_unref(sg_rt_storage *s)
{
    if (!s || --s->refs > 0)
        return;
    if (!s->borrowed) {
        atomic_fetch_sub(&bytes_live, s->size);
        if (s->cap)
            sg__rt_block_put(s->data, s->cap);
        else
            sg_free(s->data);
    }
    sg_free(s->bytes);
    sg_free(s);
}

static sg_rt_value *value_new(enum sg_rt_kind kind)
{
    sg_rt_value *v = sg_malloc(sizeof *v);
    if (!v)
        return NULL;
    memset(v, 0, offsetof(sg_rt_value, dims));
    v->refs = 1;
    v->kind = kind;
    v->numel = 1;
    v->data = NULL;
    v->storage = NULL;
    v->items = NULL;
    v->n_items = v->cap_items = 0;
    v->elem_kind = SG_RT_TENSOR;
    return v;
}

sg_rt_value *sg_rt_value_ref(sg_rt_value *v)
{
    if (v)
        v->refs++;
    return v;
}

void sg_rt_value_unref(sg_rt_value *v)
{
    if (!v || --v->refs > 0)
        return;
    storage_unref(v->storage);
    for (size_t i = 0; i < v->n_items; i++)
        sg_rt_value_unref(v->items[i]);
    sg_free(v->items);
    sg_free(v);
}

static sg_status set_shape(sg_rt_value *v, int32_t dtype, const int64_t *dims, uint32_t rank,
                           struct sg_diag *diag)
{
    char buf[256];
    size_t es = sg_rt_elem_size(dtype);
    if (!es)
        return sg_diag_set(diag, SG_EINVAL, "tensor of unsupported type %s", sg_dtype_name(dtype));
    if (rank > SG_MAX_RANK)
        return sg_diag_set(diag, SG_ERANGE, "tensor rank %u exceeds %d", rank, SG_MAX_RANK);
    /* numpy's rule (sg_dims.h), which keeps every product of dims and
     * every byte offset of the tensor within int64 for the kernels. */
    int64_t n;
    if (!sg_dims_extent(dims, rank, es, &n)) {
        bool neg = false;
        for (uint32_t i = 0; i < rank; i++)
            neg |= dims[i] < 0;
        return sg_diag_set(
            diag, SG_ERANGE,
            neg ? "bad tensor shape %s: negative dimension"
                : "tensor shape %s is too large (its non-zero dims span over 2^63 bytes)",
            sg_rt_dims_format(dims, rank, buf, sizeof buf));
    }
    v->dtype = dtype;
    v->rank = rank;
    if (rank)
        memcpy(v->dims, dims, rank * sizeof *dims);
    v->numel = n;
    return SG_OK;
}

sg_status sg_rt_tensor_create(int32_t dtype, const int64_t *dims, uint32_t rank, sg_rt_value **out,
                              struct sg_diag *diag)
{
    return sg__rt_tensor_new(dtype, dims, rank, true, out, diag);
}

sg_status sg__rt_tensor_new(int32_t dtype, const int64_t *dims, uint32_t rank, bool zero,
                            sg_rt_value **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_rt_value *v = value_new(SG_RT_TENSOR);
    if (!v)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_status st = set_shape(v, dtype, dims, rank, diag);
    if (st) {
        sg_free(v);
        return st;
    }
    size_t size = (size_t)v->numel * sg_rt_elem_size(dtype), cap = 0;
    sg_rt_storage *s = sg_calloc(1, sizeof *s);
    void *data = s ? sg__rt_block_get(size, &cap) : NULL;
    if (data && (zero || dtype == SG_DTYPE_STRING))
        memset(data, 0, size ? size : 1);
    if (!data) {
        sg_free(s);
        sg_free(v);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory allocating %zu bytes for a tensor",
                           size);
    }
    count_alloc(size);
    s->refs = 1;
    s->data = data;
    s->size = size;
    s->cap = cap;
    s->interned = true; /* empty strings point nowhere */
    v->storage = s;
    v->data = data;
    *out = v;
    return SG_OK;
}

sg_rt_value *sg__rt_view(sg_rt_storage *s, int32_t dtype, void *data, const int64_t *dims,
                         uint32_t rank)
{
    sg_rt_value *v = value_new(SG_RT_TENSOR);
    if (!v)
        return NULL;
    if (set_shape(v, dtype, dims, rank, NULL)) {
        sg_free(v);
        return NULL;
    }
    s->refs++;
    v->storage = s;
    v->data = data;
    return v;
}

sg_status sg__rt_borrow(int32_t dtype, const void *data, const int64_t *dims, uint32_t rank,
                        sg_rt_value **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_rt_storage *s = sg_calloc(1, sizeof *s);
    if (!s)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    s->refs = 0;
    s->borrowed = true;
    s->interned = true;
    s->data = (void *)data;
    sg_rt_value *v = value_new(SG_RT_TENSOR);
    if (!v) {
        sg_free(s);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    sg_status st = set_shape(v, dtype, dims, rank, diag);
    if (st) {
        sg_free(v);
        sg_free(s);
        return st;
    }
    s->refs = 1;
    s->size = (size_t)v->numel * sg_rt_elem_size(dtype);
    v->storage = s;
    v->data = (void *)data;
    *out = v;
    return SG_OK;
}

sg_status sg_rt_tensor_from_array(struct sg_array *a, sg_rt_value **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_rt_value *v = value_new(SG_RT_TENSOR);
    if (!v)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_status st = set_shape(v, a->dtype, a->dims, a->rank, diag);
    if (st) {
        sg_free(v);
        return st;
    }
    sg_rt_storage *s = sg_calloc(1, sizeof *s);
    if (!s) {
        sg_free(v);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    s->refs = 1;
    s->interned = true;
    size_t want = (size_t)v->numel * sg_rt_elem_size(a->dtype);
    if (a->dtype == SG_DTYPE_STRING) {
        /* The entries and their bytes share one block. */
        s->data = a->strings;
        s->size = want;
        a->strings = NULL;
    } else {
        if (a->nbytes != want) {
            sg_free(s);
            sg_free(v);
            return sg_diag_set(diag, SG_ESHAPE, "array holds %zu bytes, its shape needs %zu",
                               a->nbytes, want);
        }
        s->data = a->data;
        s->size = a->nbytes;
        a->data = NULL;
        if (!s->data) { /* empty tensors may come without a buffer */
            s->data = sg_malloc(1);
            if (!s->data) {
                sg_free(s);
                sg_free(v);
                return sg_diag_set(diag, SG_ENOMEM, "out of memory");
            }
        }
    }
    count_alloc(s->size);
    sg_array_free(a);
    v->storage = s;
    v->data = s->data;
    *out = v;
    return SG_OK;
}

sg_status sg_rt_tensor_to_array(const sg_rt_value *v, struct sg_array *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (v->kind != SG_RT_TENSOR)
        return sg_diag_set(diag, SG_ETYPE, "value is not a tensor");
    out->dtype = v->dtype;
    out->rank = v->rank;
    memcpy(out->dims, v->dims, v->rank * sizeof *v->dims);
    if (v->dtype == SG_DTYPE_STRING) {
        const sg_bytes *src = v->data;
        size_t total = 0;
        for (int64_t i = 0; i < v->numel; i++)
            total += src[i].len;
        out->strings = sg_malloc((size_t)v->numel * sizeof(sg_bytes) + total + 1);
        if (!out->strings)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        uint8_t *p = (uint8_t *)(out->strings + v->numel);
        for (int64_t i = 0; i < v->numel; i++) {
            if (src[i].len)
                memcpy(p, src[i].data, src[i].len);
            out->strings[i].data = p;
            out->strings[i].len = src[i].len;
            p += src[i].len;
        }
        return SG_OK;
    }
    size_t n = (size_t)v->numel * sg_rt_elem_size(v->dtype);
    out->nbytes = n;
    out->data = sg_malloc(n ? n : 1);
    if (!out->data)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    if (n)
        memcpy(out->data, v->data, n);
    return SG_OK;
}

sg_status sg__rt_intern_strings(sg_rt_value *v)
{
    sg_rt_storage *s = v->storage;
    if (v->kind != SG_RT_TENSOR || v->dtype != SG_DTYPE_STRING || !s || s->interned)
        return SG_OK;
    sg_bytes *e = v->data;
    size_t total = 0;
    for (int64_t i = 0; i < v->numel; i++)
        total += e[i].len;
    uint8_t *block = sg_malloc(total + 1);
    if (!block)
        return SG_ENOMEM;
    uint8_t *p = block;
    for (int64_t i = 0; i < v->numel; i++) {
        if (e[i].len)
            memcpy(p, e[i].data, e[i].len);
        e[i].data = p;
        p += e[i].len;
    }
    sg_free(s->bytes);
    s->bytes = block;
    s->interned = true;
    return SG_OK;
}

bool sg__rt_exclusive(const sg_rt_value *v)
{
    return v->refs == 1 && v->storage && v->storage->refs == 1 && !v->storage->borrowed;
}

sg_status sg__rt_tensor_copy(const sg_rt_value *v, sg_rt_value **out)
{
    sg_status st = sg_rt_tensor_create(v->dtype, v->dims, v->rank, out, NULL);
    if (st)
        return st;
    size_t n = (size_t)v->numel * sg_rt_elem_size(v->dtype);
    if (n)
        memcpy((*out)->data, v->data, n);
    if (v->dtype == SG_DTYPE_STRING) {
        (*out)->storage->interned = false;
        st = sg__rt_intern_strings(*out);
        if (st) {
            sg_rt_value_unref(*out);
            *out = NULL;
        }
    }
    return st;
}

sg_status sg_rt_sequence_create(int32_t elem_dtype, sg_rt_value **out)
{
    *out = value_new(SG_RT_SEQUENCE);
    if (!*out)
        return SG_ENOMEM;
    (*out)->dtype = elem_dtype;
    (*out)->numel = 0;
    return SG_OK;
}

size_t sg__rt_value_bytes(const sg_rt_value *v)
{
    if (!v)
        return 0;
    if (v->kind == SG_RT_TENSOR) {
        size_t n = (size_t)v->numel * sg_rt_elem_size(v->dtype);
        if (v->dtype == SG_DTYPE_STRING)
            for (int64_t i = 0; i < v->numel; i++)
                n = __builtin_add_overflow(n, ((const sg_bytes *)v->data)[i].len, &n) ? SIZE_MAX
                                                                                      : n;
        return n;
    }
    size_t n = 0;
    for (size_t i = 0; i < v->n_items; i++)
        if (__builtin_add_overflow(n, sg__rt_value_bytes(v->items[i]), &n))
            return SIZE_MAX;
    return n;
}

sg_status sg_rt_sequence_append(sg_rt_value *seq, sg_rt_value *item)
{
    if (seq->n_items == seq->cap_items) {
        size_t cap = seq->cap_items ? seq->cap_items * 2 : 4;
        sg_rt_value **grown = sg_realloc(seq->items, cap * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        seq->items = grown;
        seq->cap_items = cap;
    }
    seq->items[seq->n_items++] = sg_rt_value_ref(item);
    seq->numel = (int64_t)seq->n_items;
    if (seq->dtype == SG_DTYPE_UNDEFINED)
        seq->dtype = item->dtype;
    seq->elem_kind = item->kind;
    return SG_OK;
}

sg_status sg_rt_optional_create(sg_rt_value *item, enum sg_rt_kind elem_kind, int32_t dtype,
                                sg_rt_value **out)
{
    sg_rt_value *v = value_new(SG_RT_OPTIONAL);
    if (!v)
        return SG_ENOMEM;
    v->numel = 0;
    v->dtype = dtype;
    v->elem_kind = elem_kind;
    if (item) {
        v->items = sg_malloc(sizeof *v->items);
        if (!v->items) {
            sg_free(v);
            return SG_ENOMEM;
        }
        v->items[0] = sg_rt_value_ref(item);
        v->n_items = v->cap_items = 1;
        v->numel = 1;
        v->dtype = item->dtype;
        v->elem_kind = item->kind;
    }
    *out = v;
    return SG_OK;
}

char *sg_rt_dims_format(const int64_t *dims, uint32_t rank, char *buf, size_t size)
{
    size_t pos = 0;
    if (size == 0)
        return buf;
    buf[0] = 0;
    int n = snprintf(buf, size, "[");
    pos = n > 0 ? (size_t)n : 0;
    for (uint32_t i = 0; i < rank && pos < size; i++) {
        n = snprintf(buf + pos, size - pos, "%s%lld", i ? "," : "", (long long)dims[i]);
        pos += n > 0 ? (size_t)n : 0;
    }
    if (pos < size)
        snprintf(buf + pos, size - pos, "]");
    return buf;
}

char *sg_rt_value_format(const sg_rt_value *v, char *buf, size_t size)
{
    char dims[200];
    if (!v) {
        snprintf(buf, size, "(none)");
        return buf;
    }
    switch (v->kind) {
    case SG_RT_SEQUENCE:
        snprintf(buf, size, "seq(%s)[%zu]", sg_dtype_name(v->dtype), v->n_items);
        break;
    case SG_RT_OPTIONAL:
        if (v->n_items) {
            char inner[220];
            sg_rt_value_format(v->items[0], inner, sizeof inner);
            snprintf(buf, size, "optional(%s)", inner);
        } else {
            snprintf(buf, size, "optional(none)");
        }
        break;
    default:
        snprintf(buf, size, "%s%s", sg_dtype_name(v->dtype),
                 sg_rt_dims_format(v->dims, v->rank, dims, sizeof dims));
        break;
    }
    return buf;
}

static int32_t type_elem_dtype(const sg_type *t)
{
    while (t && (t->kind == SG_TYPE_SEQUENCE || t->kind == SG_TYPE_OPTIONAL))
        t = t->elem;
    return t && t->kind == SG_TYPE_TENSOR && t->has_elem_type ? t->elem_type : SG_DTYPE_UNDEFINED;
}

sg_status sg_rt_value_from_pb(struct sg_pb_value *pv, const sg_type *type, sg_rt_value **out,
                              struct sg_diag *diag)
{
    *out = NULL;
    const sg_type *inner =
        type && (type->kind == SG_TYPE_SEQUENCE || type->kind == SG_TYPE_OPTIONAL) ? type->elem
                                                                                   : NULL;
    if (pv->kind == SG_PB_TENSOR)
        return sg_rt_tensor_from_array(&pv->tensor, out, diag);
    sg_rt_value *v = NULL;
    sg_status st;
    if (pv->kind == SG_PB_SEQUENCE) {
        st = sg_rt_sequence_create(type_elem_dtype(type), &v);
        if (st)
            return sg_diag_set(diag, st, "out of memory");
        for (size_t i = 0; i < pv->n_items; i++) {
            sg_rt_value *item;
            st = sg_rt_value_from_pb(&pv->items[i], inner, &item, diag);
            if (st)
                goto fail;
            st = sg_rt_sequence_append(v, item);
            sg_rt_value_unref(item);
            if (st) {
                sg_diag_set(diag, st, "out of memory");
                goto fail;
            }
        }
        *out = v;
        return SG_OK;
    }
    sg_rt_value *item = NULL;
    if (pv->n_items && (st = sg_rt_value_from_pb(&pv->items[0], inner, &item, diag)))
        return st;
    enum sg_rt_kind ek = SG_RT_TENSOR;
    if (inner && inner->kind == SG_TYPE_SEQUENCE)
        ek = SG_RT_SEQUENCE;
    else if (pv->elem_type == 3)
        ek = SG_RT_SEQUENCE;
    st = sg_rt_optional_create(item, ek, type_elem_dtype(type), &v);
    sg_rt_value_unref(item);
    if (st)
        return sg_diag_set(diag, st, "out of memory");
    *out = v;
    return SG_OK;
fail:
    sg_rt_value_unref(v);
    return st;
}
