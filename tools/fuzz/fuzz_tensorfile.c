/*
 * fuzz_tensorfile.c - libFuzzer harness for the tensor file readers
 * (graph/npy.c, graph/tensorpb.c, graph/fileio.c's .bin), as `run -i` and
 * compare read them.
 *
 * The first byte chooses the reader, the rest is the file: 0 .npy (from
 * memory), 1 .npy through the file reader, 2 .pb TensorProto, 3 .pb
 * SequenceProto, 4 .pb OptionalProto, 5 .bin (its dtype and shape from the
 * next bytes). Whatever a reader accepts must be self-consistent (byte
 * count = elements x element size) and, for .npy, written back and read
 * again to the same tensor. Build and run with tools/fuzz/run.sh tensorfile.
 */
#include "fuzz_common.h"
#include "sg_alloc.h"
#include "sg_tensorfile.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_array(const struct sg_array *a)
{
    int64_t n = sg_array_numel(a);
    FUZZ_CHECK(n >= 0, "a tensor read with a bad shape");
    if (a->dtype == SG_DTYPE_STRING)
        return;
    FUZZ_CHECK(sg_dtype_size(a->dtype) && (uint64_t)n * sg_dtype_size(a->dtype) == a->nbytes,
               "byte count does not match the shape");
}

static void npy_roundtrip(const struct sg_array *a)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    if (sg_npy_encode(a, &buf, &len, NULL) != SG_OK)
        return; /* a dtype numpy has no name for */
    struct sg_array b;
    struct sg_diag d = {0};
    FUZZ_CHECK(sg_npy_read_buffer(buf, len, "again", &b, &d) == SG_OK, "written .npy unreadable");
    FUZZ_CHECK(b.dtype == a->dtype && b.rank == a->rank && b.nbytes == a->nbytes &&
                   !memcmp(b.dims, a->dims, a->rank * sizeof *a->dims) &&
                   (!a->nbytes || !memcmp(b.data, a->data, a->nbytes)),
               ".npy round trip changed the tensor");
    sg_array_free(&b);
    sg_free(buf);
}

static void check_value(const struct sg_pb_value *v, int depth)
{
    FUZZ_CHECK(depth < 64, "value nested too deep");
    if (v->kind == SG_PB_TENSOR)
        check_array(&v->tensor);
    for (size_t i = 0; i < v->n_items; i++)
        check_value(&v->items[i], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int which = data[0] % 6;
    data++, size--;
    struct sg_array a;
    struct sg_diag d = {0};
    if (which == 0 || which == 1) {
        const char *path = which ? fuzz_file(data, size) : NULL;
        if (which && !path)
            return 0;
        sg_status st =
            which ? sg_npy_read(path, &a, &d) : sg_npy_read_buffer(data, size, "fuzz", &a, &d);
        if (st == SG_OK) {
            check_array(&a);
            npy_roundtrip(&a);
            sg_array_free(&a);
        }
    } else if (which == 2) {
        const char *path = fuzz_file(data, size);
        if (path && sg_pb_read(path, &a, &d) == SG_OK) {
            check_array(&a);
            sg_array_free(&a);
        }
    } else if (which == 3 || which == 4) {
        struct sg_pb_value v;
        const char *path = fuzz_file(data, size);
        if (path &&
            sg_pb_read_value(path, which == 3 ? SG_PB_SEQUENCE : SG_PB_OPTIONAL, &v, &d) == SG_OK) {
            check_value(&v, 0);
            sg_pb_value_free(&v);
        }
    } else {
        if (size < 2)
            return 0;
        int32_t dtype = data[0] % SG_DTYPE_COUNT;
        uint32_t rank = data[1] % 4;
        if (size < 2 + rank)
            return 0;
        int64_t dims[4];
        for (uint32_t i = 0; i < rank; i++)
            dims[i] = data[2 + i] % 9;
        const char *path = fuzz_file(data + 2 + rank, size - 2 - rank);
        if (path && sg_bin_read(path, dtype, dims, rank, &a, &d) == SG_OK) {
            check_array(&a);
            sg_array_free(&a);
        }
    }
    return 0;
}
