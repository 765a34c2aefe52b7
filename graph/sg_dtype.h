/*
 * sg_dtype.h - ONNX element types and half-precision conversion.
 *
 * The enum values are those of ONNX TensorProto.DataType so they can be
 * stored and compared without translation.
 */
#ifndef SG_DTYPE_H
#define SG_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(NAME, onnx code, element bytes (0: not fixed-size), display name, numpy descr) */
#define SG_DTYPE_MAP(X)                                                                            \
    X(UNDEFINED, 0, 0, "undefined", "")                                                            \
    X(FLOAT, 1, 4, "float32", "<f4")                                                               \
    X(UINT8, 2, 1, "uint8", "|u1")                                                                 \
    X(INT8, 3, 1, "int8", "|i1")                                                                   \
    X(UINT16, 4, 2, "uint16", "<u2")                                                               \
    X(INT16, 5, 2, "int16", "<i2")                                                                 \
    X(INT32, 6, 4, "int32", "<i4")                                                                 \
    X(INT64, 7, 8, "int64", "<i8")                                                                 \
    X(STRING, 8, 0, "string", "")                                                                  \
    X(BOOL, 9, 1, "bool", "|b1")                                                                   \
    X(FLOAT16, 10, 2, "float16", "<f2")                                                            \
    X(DOUBLE, 11, 8, "float64", "<f8")                                                             \
    X(UINT32, 12, 4, "uint32", "<u4")                                                              \
    X(UINT64, 13, 8, "uint64", "<u8")                                                              \
    X(COMPLEX64, 14, 8, "complex64", "<c8")                                                        \
    X(COMPLEX128, 15, 16, "complex128", "<c16")                                                    \
    X(BFLOAT16, 16, 2, "bfloat16", "")

typedef enum sg_dtype {
#define SG__DTYPE_ENUM(name, code, size, str, npy) SG_DTYPE_##name = (code),
    SG_DTYPE_MAP(SG__DTYPE_ENUM)
#undef SG__DTYPE_ENUM
        SG_DTYPE_COUNT
} sg_dtype;

/* True for the codes listed above. */
bool sg_dtype_valid(int32_t code);

/* Bytes per element; 0 for STRING, UNDEFINED and unknown codes. */
size_t sg_dtype_size(int32_t code);

/* Display name ("float32"), or "dtype(N)" style "unknown" for unknown codes. */
const char *sg_dtype_name(int32_t code);

/* numpy descr ("<f4") or "" when numpy has no such type (bfloat16, string). */
const char *sg_dtype_npy_descr(int32_t code);

/* The code whose display name is `name` (also accepts ONNX spellings such as
 * "FLOAT" and "fp16"); SG_DTYPE_UNDEFINED when unknown. */
sg_dtype sg_dtype_from_name(const char *name);

bool sg_dtype_is_float(int32_t code); /* float16/32/64, bfloat16 */
bool sg_dtype_is_int(int32_t code);   /* signed and unsigned integers (not bool) */

/* IEEE half and bfloat16 <-> float. Round to nearest even; NaN stays NaN;
 * values beyond the half range become infinity. */
float sg_half_to_float(uint16_t h);
uint16_t sg_float_to_half(float f);
float sg_bf16_to_float(uint16_t b);
uint16_t sg_float_to_bf16(float f);

#endif
