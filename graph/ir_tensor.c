/* ir_tensor.c - tensor payload access in native layout. */
#include "ir_impl.h"
#include "sg_alloc.h"

#include <stdint.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "ONNX raw data is little-endian; big-endian hosts need byte swapping");

int64_t sg_tensor_numel(const sg_tensor *t)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            return -1;
        if (t->dims[i] && n > INT64_MAX / t->dims[i])
            return -1;
        n *= t->dims[i];
    }
    return n;
}

size_t sg_tensor_nbytes(const sg_tensor *t)
{
    size_t n;
    return sg_dtype_storage_bytes(t->dtype, sg_tensor_numel(t), &n) ? n : 0;
}

const sg_tensor_extra sg__tensor_no_extra;

sg_tensor_extra *sg_tensor_make_extra(sg_model *m, sg_tensor *t)
{
    if (!t->extra)
        t->extra = sg_arena_calloc(m->arena, 1, sizeof *t->extra);
    return t->extra;
}

bool sg_tensor_is_external(const sg_tensor *t)
{
    return t->extra && t->extra->has_data_location && t->extra->data_location == 1;
}

static const char *tname(const sg_tensor *t)
{
    return t->name ? t->name : "(unnamed)";
}

/* Narrow int32_data / uint64_data entries to the element width. */
static void *narrow(sg_model *m, const void *src, size_t count, size_t src_size, size_t dst_size)
{
    uint8_t *dst = sg_arena_alloc(m->arena, count * dst_size);
    if (!dst)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        uint64_t v;
        if (src_size == 4) {
            int32_t x;
            memcpy(&x, (const uint8_t *)src + i * 4, 4);
            v = (uint64_t)(int64_t)x;
        } else {
            memcpy(&v, (const uint8_t *)src + i * 8, 8);
        }
        memcpy(dst + i * dst_size, &v, dst_size); /* little-endian: low bytes first */
    }
    return dst;
}

/* The n elements of a 4-bit tensor from its packed payload, one per byte
 * in the arena. */
static void *unpack(sg_model *m, const uint8_t *packed, int32_t dtype, size_t n)
{
    uint8_t *dst = sg_arena_alloc(m->arena, n ? n : 1);
    if (dst)
        sg_dtype_unpack4(dtype, packed, n, dst);
    return dst;
}

const void *sg_tensor_data(sg_model *m, sg_tensor *t, size_t *nbytes, struct sg_diag *diag)
{
    int64_t numel = sg_tensor_numel(t);
    size_t es = sg_dtype_size(t->dtype);
    bool packed = sg_dtype_is_4bit(t->dtype);
    if (numel < 0) {
        sg_diag_set(diag, SG_ERANGE, "tensor '%s' has a negative or overflowing dimension",
                    tname(t));
        return NULL;
    }
    if (!es) {
        sg_diag_set(diag, SG_EUNSUPPORTED, "tensor '%s' of type %s has no fixed-size data",
                    tname(t), sg_dtype_name(t->dtype));
        return NULL;
    }
    size_t stored; /* bytes of the payload in the file */
    if ((uint64_t)numel > SIZE_MAX / es || !sg_dtype_storage_bytes(t->dtype, numel, &stored)) {
        sg_diag_set(diag, SG_ETOOBIG, "tensor '%s' is too large", tname(t));
        return NULL;
    }
    size_t want = (size_t)numel * es;
    *nbytes = want;
    if (t->native)
        return t->native;

    const void *src = NULL;
    size_t have = 0, count = 0, src_size = 0;
    bool direct = false;
    const sg_tensor_extra *x = sg_tensor_get_extra(t);
    if (sg_tensor_is_external(t)) {
        if (!x->ext_data && want) {
            sg_diag_set(diag, SG_ENOTFOUND, "external data of tensor '%s' is not loaded", tname(t));
            return NULL;
        }
        src = x->ext_data;
        have = x->ext_len;
        direct = true;
    } else if (t->has_raw) {
        src = t->raw;
        have = t->raw_len;
        direct = true;
    } else {
        size_t per = (t->dtype == SG_DTYPE_COMPLEX64 || t->dtype == SG_DTYPE_COMPLEX128) ? 2 : 1;
        size_t need = (size_t)numel * per;
        switch (t->dtype) {
        case SG_DTYPE_FLOAT:
        case SG_DTYPE_COMPLEX64:
            src = x->float_data, count = x->n_float, src_size = 4, direct = true;
            break;
        case SG_DTYPE_DOUBLE:
        case SG_DTYPE_COMPLEX128:
            src = x->double_data, count = x->n_double, src_size = 8, direct = true;
            break;
        case SG_DTYPE_INT64:
            src = x->int64_data, count = x->n_int64, src_size = 8, direct = true;
            break;
        case SG_DTYPE_UINT64:
            src = x->uint64_data, count = x->n_uint64, src_size = 8, direct = true;
            break;
        case SG_DTYPE_INT32:
            src = x->int32_data, count = x->n_int32, src_size = 4, direct = true;
            break;
        case SG_DTYPE_UINT32:
            src = x->uint64_data, count = x->n_uint64, src_size = 8;
            break;
        default: /* 4- to 16-bit types and bool travel in int32_data, the
                  * 4-bit ones a packed pair of elements per entry */
            src = x->int32_data, count = x->n_int32, src_size = 4;
            if (packed)
                need = stored;
            break;
        }
        if (count != need) {
            sg_diag_set(diag, SG_ESHAPE, "tensor '%s' has %zu data elements but its dims need %zu",
                        tname(t), count, need);
            return NULL;
        }
        have = direct ? count * src_size : stored;
    }
    if (have != stored) {
        sg_diag_set(diag, SG_ESHAPE, "tensor '%s' has %zu bytes of data but its dims need %zu",
                    tname(t), have, stored);
        return NULL;
    }
    if (want == 0) {
        t->native = sg_arena_alloc(m->arena, 0);
        return t->native;
    }
    if (packed && direct) {
        t->native = unpack(m, src, t->dtype, want);
    } else if (packed) {
        const uint8_t *bytes = narrow(m, src, stored, src_size, 1);
        t->native = bytes ? unpack(m, bytes, t->dtype, want) : NULL;
    } else if (direct) {
        size_t align = es >= 8 ? 8 : es;
        if (((uintptr_t)src & (align - 1)) == 0)
            return src;
        t->native = sg_arena_memdup(m->arena, src, want); /* misaligned external data */
    } else {
        t->native = narrow(m, src, want / es, src_size, es);
    }
    if (!t->native)
        sg_diag_set(diag, SG_ENOMEM, "out of memory reading tensor '%s'", tname(t));
    return t->native;
}

const void *sg__tensor_stored(sg_model *m, sg_tensor *t, size_t *nbytes, struct sg_diag *diag)
{
    const void *native = sg_tensor_data(m, t, nbytes, diag);
    if (!native || !sg_dtype_is_4bit(t->dtype))
        return native;
    size_t n = *nbytes;
    if (!sg_dtype_storage_bytes(t->dtype, (int64_t)n, nbytes))
        return NULL; /* not reached: sg_tensor_data checked the size */
    if (sg_tensor_is_external(t))
        return sg_tensor_get_extra(t)->ext_data;
    if (t->has_raw)
        return t->raw;
    uint8_t *p = sg_arena_alloc(m->arena, *nbytes ? *nbytes : 1);
    if (!p)
        sg_diag_set(diag, SG_ENOMEM, "out of memory packing tensor '%s'", tname(t));
    else
        sg_dtype_pack4(native, n, p);
    return p;
}

sg_status sg_tensor_set_raw(sg_model *m, sg_tensor *t, const void *data, size_t nbytes,
                            sg_blob *owner)
{
    if (sg_dtype_is_4bit(t->dtype)) {
        /* Stored packed: a copy in the arena replaces the caller's bytes. */
        int64_t numel = sg_tensor_numel(t);
        size_t stored;
        if (numel < 0 || (uint64_t)numel != nbytes ||
            !sg_dtype_storage_bytes(t->dtype, numel, &stored))
            return SG_ESHAPE;
        uint8_t *p = sg_arena_alloc(m->arena, stored ? stored : 1);
        if (!p)
            return SG_ENOMEM;
        sg_dtype_pack4(data, nbytes, p);
        data = p;
        nbytes = stored;
        owner = NULL;
    }
    if (owner && !t->listed) {
        if (m->n_owned == m->cap_owned) {
            size_t cap = m->cap_owned ? m->cap_owned * 2 : 16;
            sg_tensor **grown = sg_realloc(m->owned, cap * sizeof *grown);
            if (!grown)
                return SG_ENOMEM;
            m->owned = grown;
            m->cap_owned = cap;
        }
        m->owned[m->n_owned++] = t;
        t->listed = true;
    }
    sg_blob_ref(owner);
    sg_blob_unref(t->owner);
    t->owner = owner;
    t->has_raw = true;
    t->raw = data;
    t->raw_len = nbytes;
    sg_tensor_extra *x = t->extra;
    if (x) {
        x->float_data = NULL, x->n_float = 0;
        x->int32_data = NULL, x->n_int32 = 0;
        x->int64_data = NULL, x->n_int64 = 0;
        x->double_data = NULL, x->n_double = 0;
        x->uint64_data = NULL, x->n_uint64 = 0;
        x->string_data = NULL, x->n_string = 0;
        x->has_data_location = false;
        x->data_location = 0;
        x->external = NULL, x->n_external = 0;
        x->ext_data = NULL, x->ext_len = 0, x->ext_blob = NULL;
    }
    t->native = NULL;
    return SG_OK;
}

sg_tensor *sg_tensor_create(sg_model *m, const char *name, int32_t dtype, const int64_t *dims,
                            uint32_t rank)
{
    sg_tensor *t = sg_arena_calloc(m->arena, 1, sizeof *t);
    if (!t)
        return NULL;
    t->name = sg_arena_strdup(m->arena, name);
    if (name && !t->name)
        return NULL;
    t->has_dtype = true;
    t->dtype = dtype;
    t->rank = rank;
    t->dims = sg_arena_memdup(m->arena, dims, rank * sizeof *dims);
    if (!t->dims)
        return NULL;
    return t;
}
