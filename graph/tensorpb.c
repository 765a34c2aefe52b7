/*
 * tensorpb.c - tensors stored as a serialized ONNX TensorProto (.pb), the
 * format of the ONNX backend tests' input_N.pb / output_N.pb files.
 */
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_tensorfile.h"

#include "onnx.pb-c.h"

#include <string.h>

#define PB_MAX_FILE ((size_t)2147483647)

static void *pb_alloc(void *ctx, size_t size)
{
    return sg_arena_alloc(ctx, size);
}

static void pb_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

static sg_status copy_out(sg_model *m, sg_tensor *t, const char *path, struct sg_array *out,
                          struct sg_diag *diag)
{
    struct sg_array a = {.dtype = t->dtype, .rank = t->rank};
    if (t->rank > SG_MAX_RANK)
        return sg_diag_set(diag, SG_ERANGE, "%s: rank %u is too large", path, t->rank);
    memcpy(a.dims, t->dims, t->rank * sizeof *t->dims);
    if (sg_tensor_is_external(t))
        return sg_diag_set(diag, SG_EUNSUPPORTED,
                           "%s: tensor files with external data are not "
                           "supported",
                           path);
    if (t->name && !(a.name = sg_strdup(t->name)))
        goto nomem;
    if (t->dtype == SG_DTYPE_STRING) {
        int64_t n = sg_tensor_numel(t);
        if (n < 0 || (uint64_t)n != t->n_string) {
            sg_array_free(&a);
            return sg_diag_set(diag, SG_ESHAPE, "%s: %zu strings for shape %s", path, t->n_string,
                               sg__dims_str(t->dims, t->rank));
        }
        size_t total = 0;
        for (size_t i = 0; i < t->n_string; i++)
            total += t->string_data[i].len;
        /* One block: the entries, then the bytes they point to. */
        a.strings = sg_malloc(t->n_string * sizeof *a.strings + total + 1);
        if (!a.strings)
            goto nomem;
        uint8_t *bytes = (uint8_t *)(a.strings + t->n_string);
        for (size_t i = 0; i < t->n_string; i++) {
            if (t->string_data[i].len)
                memcpy(bytes, t->string_data[i].data, t->string_data[i].len);
            a.strings[i].data = bytes;
            a.strings[i].len = t->string_data[i].len;
            bytes += t->string_data[i].len;
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

sg_status sg_pb_read(const char *path, struct sg_array *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    uint8_t *buf;
    size_t len;
    sg_status st = sg_file_read_all(path, PB_MAX_FILE, &buf, &len, diag);
    if (st)
        return st;
    sg_model *m = sg_model_create();
    if (!m) {
        sg_free(buf);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    ProtobufCAllocator alloc = {pb_alloc, pb_free, m->arena};
    Onnx__TensorProto *p = len ? onnx__tensor_proto__unpack(&alloc, len, buf) : NULL;
    if (!p) {
        st = sg_diag_set(diag, SG_EPARSE, "%s: not a valid TensorProto file", path);
    } else {
        sg_tensor *t = sg__tensor_from_proto(m, p, diag);
        if (!t) {
            sg_diag_prefix(diag, "%s", path);
            st = diag ? diag->status : SG_EPARSE;
        } else if (!t->has_dtype || !sg_dtype_valid(t->dtype) || t->dtype == SG_DTYPE_UNDEFINED) {
            st = sg_diag_set(diag, SG_EUNSUPPORTED, "%s: tensor has no known data type", path);
        } else {
            st = copy_out(m, t, path, out, diag);
        }
    }
    sg_model_free(m);
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
    return st;
}
