/*
 * tensorpb.c - tensors stored as a serialized ONNX TensorProto (.pb), the
 * format of the ONNX backend tests' input_N.pb / output_N.pb files.
 */
#include "decode_impl.h"
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_tensorfile.h"

#include "onnx.pb-c.h"

#include <string.h>

#define PB_MAX_FILE ((size_t)2147483647)

static sg_status copy_out(sg_model *m, sg_tensor *t, const char *path, struct sg_array *out,
                          struct sg_diag *diag)
{
    struct sg_array a = {.dtype = t->dtype, .rank = t->rank};
    if (t->rank > SG_MAX_RANK)
        return sg_diag_set(diag, SG_ERANGE, "%s: rank %u is too large", path, t->rank);
    if (t->rank)
        memcpy(a.dims, t->dims, t->rank * sizeof *t->dims);
    if (sg_tensor_is_external(t))
        return sg_diag_set(diag, SG_EUNSUPPORTED,
                           "%s: tensor files with external data are not "
                           "supported",
                           path);
    if (t->name && !(a.name = sg_strdup(t->name)))
        goto nomem;
    if (t->dtype == SG_DTYPE_STRING) {
        const sg_tensor_extra *x = sg_tensor_get_extra(t);
        int64_t n = sg_tensor_numel(t);
        if (n < 0 || (uint64_t)n != x->n_string) {
            sg_array_free(&a);
            return sg_diag_set(diag, SG_ESHAPE, "%s: %zu strings for shape %s", path, x->n_string,
                               sg__dims_str(t->dims, t->rank));
        }
        size_t total = 0;
        for (size_t i = 0; i < x->n_string; i++)
            total += x->string_data[i].len;
        /* One block: the entries, then the bytes they point to. */
        a.strings = sg_malloc(x->n_string * sizeof *a.strings + total + 1);
        if (!a.strings)
            goto nomem;
        uint8_t *bytes = (uint8_t *)(a.strings + x->n_string);
        for (size_t i = 0; i < x->n_string; i++) {
            if (x->string_data[i].len)
                memcpy(bytes, x->string_data[i].data, x->string_data[i].len);
            a.strings[i].data = bytes;
            a.strings[i].len = x->string_data[i].len;
            bytes += x->string_data[i].len;
        }
        *out = a;
        return SG_OK;
    }
    size_t n;
    const void *data = sg_tensor_data(m, t, &n, diag);
    if (!data) {
        sg_array_free(&a);
        sg_diag_prefix(diag, "%s", path);
        return diag ? diag->status : SG_EPARSE;
    }
    a.nbytes = n;
    if (!(a.data = sg_malloc(n ? n : 1)))
        goto nomem;
    if (n)
        memcpy(a.data, data, n);
    *out = a;
    return SG_OK;
nomem:
    sg_array_free(&a);
    return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
}

/* Decode one serialized TensorProto; `label` names it in errors. */
static sg_status decode_tensor(const uint8_t *buf, size_t len, const char *label,
                               struct sg_array *out, struct sg_diag *diag)
{
    sg_status st;
    memset(out, 0, sizeof *out);
    sg_model *m = sg_model_create();
    if (!m)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    if (!len) {
        st = sg_diag_set(diag, SG_EPARSE, "%s: not a valid TensorProto file", label);
    } else {
        sg_tensor *t = sg__decode_tensor_bytes(m, buf, len, diag);
        if (!t) {
            sg_diag_prefix(diag, "%s", label);
            st = diag ? diag->status : SG_EPARSE;
        } else if (!t->has_dtype || !sg_dtype_valid(t->dtype) || t->dtype == SG_DTYPE_UNDEFINED) {
            st = sg_diag_set(diag, SG_EUNSUPPORTED, "%s: tensor has no known data type", label);
        } else {
            st = copy_out(m, t, label, out, diag);
        }
    }
    sg_model_free(m);
    return st;
}

sg_status sg_pb_read(const char *path, struct sg_array *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    uint8_t *buf;
    size_t len;
    sg_status st = sg_file_read_all(path, PB_MAX_FILE, &buf, &len, diag);
    if (st)
        return st;
    st = decode_tensor(buf, len, path, out, diag);
    sg_free(buf);
    return st;
}

void sg_pb_value_free(struct sg_pb_value *v)
{
    if (!v)
        return;
    sg_array_free(&v->tensor);
    for (size_t i = 0; i < v->n_items; i++)
        sg_pb_value_free(&v->items[i]);
    sg_free(v->items);
    memset(v, 0, sizeof *v);
}

/* Protobuf wire format, just enough for SequenceProto and OptionalProto
 * (onnx-data.proto is not compiled with protoc-c). */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return false;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static sg_status push_item(struct sg_pb_value *v, struct sg_pb_value **item)
{
    struct sg_pb_value *grown = sg_realloc(v->items, (v->n_items + 1) * sizeof *grown);
    if (!grown)
        return SG_ENOMEM;
    v->items = grown;
    *item = &grown[v->n_items++];
    memset(*item, 0, sizeof **item);
    return SG_OK;
}

static sg_status decode_value(const uint8_t *buf, size_t len, enum sg_pb_kind kind, int depth,
                              const char *label, struct sg_pb_value *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (kind == SG_PB_TENSOR)
        return decode_tensor(buf, len, label, &out->tensor, diag);
    if (depth > 16)
        return sg_diag_set(diag, SG_EPARSE, "%s: values nested too deeply", label);
    const uint8_t *p = buf, *end = buf + len;
    while (p < end) {
        uint64_t key, v;
        if (!read_varint(&p, end, &key))
            goto bad;
        unsigned field = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
        if (wire == 0) {
            if (!read_varint(&p, end, &v))
                goto bad;
            if (field == 2)
                out->elem_type = (int32_t)v;
            continue;
        }
        if (wire == 1 || wire == 5) {
            size_t w = wire == 1 ? 8 : 4;
            if ((size_t)(end - p) < w)
                goto bad;
            p += w;
            continue;
        }
        if (wire != 2 || !read_varint(&p, end, &v) || v > (uint64_t)(end - p))
            goto bad;
        const uint8_t *sub = p;
        p += v;
        /* Field numbers are the same in both messages: 3 tensor(s),
         * 4 sparse, 5 sequence(s), 6 map(s), 7 optional(s). */
        enum sg_pb_kind ik;
        if (field == 3)
            ik = SG_PB_TENSOR;
        else if (field == 5)
            ik = SG_PB_SEQUENCE;
        else if (field == 7)
            ik = SG_PB_OPTIONAL;
        else if (field == 4 || field == 6)
            return sg_diag_set(diag, SG_EUNSUPPORTED,
                               "%s: sparse tensors and maps are not "
                               "supported",
                               label);
        else
            continue;
        if (kind == SG_PB_OPTIONAL && out->n_items)
            return sg_diag_set(diag, SG_EPARSE, "%s: optional holds more than one value", label);
        struct sg_pb_value *item;
        if (push_item(out, &item))
            return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        sg_status st = decode_value(sub, (size_t)v, ik, depth + 1, label, item, diag);
        if (st)
            return st;
    }
    return SG_OK;
bad:
    return sg_diag_set(diag, SG_EPARSE, "%s: not a valid %s file", label,
                       kind == SG_PB_SEQUENCE ? "SequenceProto" : "OptionalProto");
}

sg_status sg_pb_read_value(const char *path, enum sg_pb_kind kind, struct sg_pb_value *out,
                           struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    uint8_t *buf;
    size_t len;
    sg_status st = sg_file_read_all(path, PB_MAX_FILE, &buf, &len, diag);
    if (st)
        return st;
    st = decode_value(buf, len, kind, 0, path, out, diag);
    if (st)
        sg_pb_value_free(out);
    sg_free(buf);
    return st;
}

sg_status sg_pb_write(const char *path, const struct sg_array *a, struct sg_diag *diag)
{
    Onnx__TensorProto p = ONNX__TENSOR_PROTO__INIT;
    p.n_dims = a->rank;
    p.dims = (int64_t *)a->dims;
    p.has_data_type = 1;
    p.data_type = a->dtype;
    p.name = a->name;
    ProtobufCBinaryData *strings = NULL;
    uint8_t *packed = NULL;
    if (a->dtype == SG_DTYPE_STRING) {
        int64_t n = sg_array_numel(a);
        if (n < 0)
            return sg_diag_set(diag, SG_ERANGE, "%s: bad shape", path);
        strings = sg_calloc((size_t)n + 1, sizeof *strings);
        if (!strings)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        for (int64_t i = 0; i < n; i++) {
            strings[i].data = (uint8_t *)a->strings[i].data;
            strings[i].len = a->strings[i].len;
        }
        p.n_string_data = (size_t)n;
        p.string_data = strings;
    } else if (sg_dtype_is_4bit(a->dtype)) {
        /* One element per byte in memory, two per byte in the file. */
        size_t stored;
        if (!sg_dtype_storage_bytes(a->dtype, (int64_t)a->nbytes, &stored))
            return sg_diag_set(diag, SG_ERANGE, "%s: bad shape", path);
        packed = sg_malloc(stored ? stored : 1);
        if (!packed)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        sg_dtype_pack4(a->data, a->nbytes, packed);
        p.has_raw_data = 1;
        p.raw_data.data = packed;
        p.raw_data.len = stored;
    } else {
        p.has_raw_data = 1;
        p.raw_data.data = a->data;
        p.raw_data.len = a->nbytes;
    }
    size_t size = protobuf_c_message_get_packed_size(&p.base);
    uint8_t *buf = sg_malloc(size ? size : 1);
    sg_status st;
    if (!buf) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    } else {
        protobuf_c_message_pack(&p.base, buf);
        st = sg_file_write_atomic(path, buf, size, diag);
    }
    sg_free(buf);
    sg_free(strings);
    sg_free(packed);
    return st;
}
