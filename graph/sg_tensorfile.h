/*
 * sg_tensorfile.h - tensors in files: numpy .npy, ONNX TensorProto .pb and
 * headerless .bin, as used for model inputs, dumps and golden data.
 *
 * An sg_array is a standalone tensor (not part of a model) in native
 * little-endian layout: float16/bfloat16 as uint16 bits, bool and float8
 * one byte per element, the 4-bit types unpacked one per byte (sg_dtype.h),
 * complex as (real, imaginary) pairs. String tensors keep their elements
 * in `strings` instead of `data`.
 */
#ifndef SG_TENSORFILE_H
#define SG_TENSORFILE_H

#include "sg_file.h"
#include "sg_ir.h"

#include <stddef.h>
#include <stdint.h>

struct sg_array {
    int32_t dtype; /* sg_dtype */
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
    void *data;        /* sg_malloc'd, nbytes long; may be NULL when nbytes is 0 */
    size_t nbytes;     /* numel * element size */
    char *name;        /* TensorProto name from a .pb, or NULL; sg_malloc'd */
    sg_bytes *strings; /* STRING tensors: numel entries; the bytes live in the same block */
};

/* Free the contents of a (and zero it). NULL is a no-op. */
void sg_array_free(struct sg_array *a);

/* Number of elements; -1 if a dim is negative or the product overflows. */
int64_t sg_array_numel(const struct sg_array *a);

/* The NaN and the +-Inf elements of a float array (float32, float64,
 * float16, bfloat16; other dtypes have none), counted from the bits of its
 * first nbytes of data. nan and inf may be NULL. */
void sg_array_count_nonfinite(const struct sg_array *a, uint64_t *nan, uint64_t *inf);

/* The same for value v of model m when the model holds its data: an
 * initializer (of v or, for a capture, of the value it captures). False,
 * counts untouched, for any other value or when its data cannot be read. */
bool sg_value_count_nonfinite(sg_model *m, const sg_value *v, uint64_t *nan, uint64_t *inf);

/*
 * Allocate a->data for dtype and dims (zeroed), replacing nothing: `a` must
 * be empty. SG_ERANGE on bad dims, SG_ENOMEM.
 */
sg_status sg_array_alloc(struct sg_array *a, int32_t dtype, const int64_t *dims, uint32_t rank);

/*
 * .npy (format 1.0, 2.0 and 3.0): bool, int8..int64, uint8..uint64,
 * float16/32/64, complex64/128, in either byte order and C or Fortran
 * order (converted to little-endian C order). Errors name the file and say
 * what is wrong (bad magic, truncated header or data, unsupported dtype).
 *
 * The _as forms also read the types numpy lacks as the ml_dtypes package
 * saves them (sg_dtype.h): "V2" as bfloat16, "V1" as a float8 type or a
 * 4-bit type held one element a byte (its low nibble), "f1" as
 * float8e5m2, when `expect` is that type. Such a descr without a type
 * that fits is SG_ETYPE, saying why. SG_DTYPE_UNDEFINED expects nothing.
 */
sg_status sg_npy_read(const char *path, struct sg_array *out, struct sg_diag *diag);
sg_status sg_npy_read_as(const char *path, int32_t expect, struct sg_array *out,
                         struct sg_diag *diag);
sg_status sg_npy_read_buffer(const void *buf, size_t len, const char *label, struct sg_array *out,
                             struct sg_diag *diag);
sg_status sg_npy_read_buffer_as(const void *buf, size_t len, const char *label, int32_t expect,
                                struct sg_array *out, struct sg_diag *diag);

/* Write a as .npy (version 1.0, or 2.0 when the header needs it).
 * Atomic: temp file + rename. Strings are refused (SG_EUNSUPPORTED);
 * bfloat16, float8 and the 4-bit types are written as ml_dtypes writes
 * them ("<V2", "<V1" one element a byte, int4 in the low nibble), which
 * sg_npy_read_as reads back. */
sg_status sg_npy_write(const char *path, const struct sg_array *a, struct sg_diag *diag);

/* Write a as .npy into a new file at path, in place (not atomic; SG_EIO if
 * the file exists): for folders private to the writer, such as a run's
 * temporary folder that is renamed into place once complete. Header and
 * data go out in one writev; on failure the partial file is removed. */
sg_status sg_npy_write_new(const char *path, const struct sg_array *a, struct sg_diag *diag);

/* Serialize a as .npy into a new sg_malloc'd buffer. */
sg_status sg_npy_encode(const struct sg_array *a, uint8_t **buf, size_t *len, struct sg_diag *diag);

/* ONNX TensorProto files (the backend tests' input_0.pb, output_0.pb).
 * Every payload field and dtype is accepted, strings included; external
 * data is refused. Writing uses raw_data (string_data for strings; the
 * 4-bit types packed two per byte). */
sg_status sg_pb_read(const char *path, struct sg_array *out, struct sg_diag *diag);
sg_status sg_pb_write(const char *path, const struct sg_array *a, struct sg_diag *diag);

/*
 * ONNX SequenceProto / OptionalProto files (onnx-data.proto), which the
 * backend tests use for sequence and optional inputs and outputs. Nesting
 * (an optional of a sequence of tensors) is kept; maps and sparse tensors
 * are refused. `elem_type` is the proto's own code: 0 undefined, 1 tensor,
 * 3 sequence, 5 optional.
 */
enum sg_pb_kind { SG_PB_TENSOR, SG_PB_SEQUENCE, SG_PB_OPTIONAL };

struct sg_pb_value {
    enum sg_pb_kind kind;
    struct sg_array tensor;    /* SG_PB_TENSOR */
    struct sg_pb_value *items; /* SEQUENCE: n_items items; OPTIONAL: 0 or 1 */
    size_t n_items;
    int32_t elem_type;
};

/* Read a file holding a TensorProto, SequenceProto or OptionalProto
 * (`kind` says which: the file itself does not). */
sg_status sg_pb_read_value(const char *path, enum sg_pb_kind kind, struct sg_pb_value *out,
                           struct sg_diag *diag);

/* Free the contents of v (and zero it). NULL is a no-op. */
void sg_pb_value_free(struct sg_pb_value *v);

/*
 * Headerless little-endian .bin of a known dtype and shape. When the file
 * size is half the expected size of a float32 tensor, it is read as float16
 * (as msit does) and converted to float32. A 4-bit tensor is either packed
 * two per byte (as raw_data) or one element a byte (as numpy's tofile
 * writes an ml_dtypes array). Any other size mismatch is an error naming
 * both sizes.
 */
sg_status sg_bin_read(const char *path, int32_t dtype, const int64_t *dims, uint32_t rank,
                      struct sg_array *out, struct sg_diag *diag);

/*
 * Read by extension: .npy, .pb, or .bin (which needs dtype/dims; pass
 * dtype SG_DTYPE_UNDEFINED when unknown to get an error for .bin).
 */
sg_status sg_tensor_file_read(const char *path, int32_t dtype, const int64_t *dims, uint32_t rank,
                              struct sg_array *out, struct sg_diag *diag);

#endif
