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

/*
 * X(NAME, onnx code, bits per element in a tensor's storage (0: not
 * fixed-size), display name, numpy descr of a .npy file).
 *
 * The 4-bit types (uint4, int4, float4e2m1) are stored two per byte in
 * raw_data, external data and int32_data (the first element in the low
 * nibble, an odd count padded with a zero nibble). In memory, in the
 * values sg_tensor_data() returns, in sg_array and in runtime values, they
 * are held one element per byte, unpacked: uint4 as 0..15, int4
 * sign-extended (-8..7, an int8), float4e2m1 as its 4-bit code. So
 * sg_dtype_size() is the in-memory size (1 for them) and
 * sg_dtype_storage_bytes() the size of their packed payload.
 *
 * numpy descrs: numpy has no bfloat16, float8, 4-bit or float4 type; the
 * ml_dtypes package's arrays of them are written by np.save as "<V2"
 * (bfloat16) and "<V1" (the rest: the file does not say which type; float4
 * and 4-bit integers one element per byte), which only a reader that knows
 * the expected type can take (sg_npy_read_as). ml_dtypes writes float8_e5m2
 * as "<f1", which numpy cannot load; surgeon reads it and writes "<V1".
 */
#define SG_DTYPE_MAP(X)                                                                            \
    X(UNDEFINED, 0, 0, "undefined", "")                                                            \
    X(FLOAT, 1, 32, "float32", "<f4")                                                              \
    X(UINT8, 2, 8, "uint8", "|u1")                                                                 \
    X(INT8, 3, 8, "int8", "|i1")                                                                   \
    X(UINT16, 4, 16, "uint16", "<u2")                                                              \
    X(INT16, 5, 16, "int16", "<i2")                                                                \
    X(INT32, 6, 32, "int32", "<i4")                                                                \
    X(INT64, 7, 64, "int64", "<i8")                                                                \
    X(STRING, 8, 0, "string", "")                                                                  \
    X(BOOL, 9, 8, "bool", "|b1")                                                                   \
    X(FLOAT16, 10, 16, "float16", "<f2")                                                           \
    X(DOUBLE, 11, 64, "float64", "<f8")                                                            \
    X(UINT32, 12, 32, "uint32", "<u4")                                                             \
    X(UINT64, 13, 64, "uint64", "<u8")                                                             \
    X(COMPLEX64, 14, 64, "complex64", "<c8")                                                       \
    X(COMPLEX128, 15, 128, "complex128", "<c16")                                                   \
    X(BFLOAT16, 16, 16, "bfloat16", "<V2")                                                         \
    X(FLOAT8E4M3FN, 17, 8, "float8e4m3fn", "<V1")                                                  \
    X(FLOAT8E4M3FNUZ, 18, 8, "float8e4m3fnuz", "<V1")                                              \
    X(FLOAT8E5M2, 19, 8, "float8e5m2", "<V1")                                                      \
    X(FLOAT8E5M2FNUZ, 20, 8, "float8e5m2fnuz", "<V1")                                              \
    X(UINT4, 21, 4, "uint4", "<V1")                                                                \
    X(INT4, 22, 4, "int4", "<V1")                                                                  \
    X(FLOAT4E2M1, 23, 4, "float4e2m1", "<V1")

typedef enum sg_dtype {
#define SG__DTYPE_ENUM(name, code, bits, str, npy) SG_DTYPE_##name = (code),
    SG_DTYPE_MAP(SG__DTYPE_ENUM)
#undef SG__DTYPE_ENUM
        SG_DTYPE_COUNT
} sg_dtype;

/* True for the codes listed above. */
bool sg_dtype_valid(int32_t code);

/* Bytes per element in memory (1 for the 4-bit types, held unpacked);
 * 0 for STRING, UNDEFINED and unknown codes. */
size_t sg_dtype_size(int32_t code);

/* Bits per element in a tensor's storage: 4 for the 4-bit types, 8 times
 * the size for the others; 0 for STRING, UNDEFINED and unknown codes. */
unsigned sg_dtype_bits(int32_t code);

/* Bytes of the stored payload (raw_data, external data) of numel elements:
 * ceil(numel * bits / 8). False for a negative numel, a type without a
 * fixed size, or a count that overflows size_t. */
bool sg_dtype_storage_bytes(int32_t code, int64_t numel, size_t *out);

/* Display name ("float32"), or "dtype(N)" style "unknown" for unknown codes. */
const char *sg_dtype_name(int32_t code);

/* The descr a .npy file of the type carries ("<f4", "<V1"), or "" when
 * there is none (string, undefined). */
const char *sg_dtype_npy_descr(int32_t code);

/* The code whose display name is `name` (also accepts ONNX spellings such as
 * "FLOAT" and "FLOAT8E4M3FN", ml_dtypes names such as "float8_e4m3fn", and
 * "fp16"); SG_DTYPE_UNDEFINED when unknown. */
sg_dtype sg_dtype_from_name(const char *name);

bool sg_dtype_is_float(int32_t code);  /* float16/32/64, bfloat16 */
bool sg_dtype_is_int(int32_t code);    /* 8- to 64-bit signed and unsigned integers (not bool) */
bool sg_dtype_is_float8(int32_t code); /* the four float8 types */
bool sg_dtype_is_4bit(int32_t code);   /* uint4, int4, float4e2m1: packed two per byte */

/* IEEE half and bfloat16 <-> float. Round to nearest even; NaN stays NaN;
 * values beyond the half range become infinity. */
float sg_half_to_float(uint16_t h);
uint16_t sg_float_to_half(float f);
float sg_bf16_to_float(uint16_t b);
uint16_t sg_float_to_bf16(float f);

/* ------------------------------------------- float8, float4, 4-bit ints
 * (graph/narrow.c). Formats as docs/docsgen/source/technical/float8.md,
 * float4.md and int4.md of ONNX describe them. */

/* How a value out of a float8 type's range is converted. */
enum {
    /* to +-max (Cast's saturate=1), +-Inf included at every opset as the
     * ONNX reference and ONNX Runtime do (the tables of Cast 19 to 23 make
     * FNUZ Inf NaN); else Inf or NaN by type */
    SG_FP8_SATURATE = 1u << 0,
};

/* The value of float8 code `bits` of `dtype` (one of the four float8
 * types; anything else gives NaN): exact. */
float sg_fp8_to_float(int32_t dtype, uint8_t bits);

/* v rounded to the nearest float8 of `dtype` (ties to even), with the NaN,
 * zero and overflow rules of ONNX Cast under `flags` (SG_FP8_*). Rounded
 * from the double directly, so a float64 input is not rounded twice. */
uint8_t sg_float_to_fp8(int32_t dtype, double v, unsigned flags);

/* float4e2m1 (code in the low nibble) to float, exact; and v rounded to
 * the nearest float4e2m1 (ties to even; beyond +-6, +-Inf and NaN
 * saturate to +-6, NaN to +6, as ONNX's float4 table says). */
float sg_fp4_to_float(uint8_t code);
uint8_t sg_float_to_fp4(double v);

/* The in-memory byte of a uint4 or int4 element whose low nibble is
 * `nibble` (upper bits ignored): 0..15, or -8..7 as an int8 for int4.
 * Any other dtype (float4e2m1) keeps the nibble's code. */
uint8_t sg_dtype_nibble(int32_t dtype, uint8_t nibble);

/* Integer v wrapped to uint4 / int4 (higher bits dropped, as ONNX casts
 * between integers do), as an in-memory byte. */
uint8_t sg_int4_wrap(int32_t dtype, int64_t v);

/* n 4-bit elements of `dtype` from packed storage into one byte each
 * (sg_dtype_nibble), and back: `out` of pack gets ceil(n / 2) bytes, the
 * first element in the low nibble, a zero nibble padding an odd count. */
void sg_dtype_unpack4(int32_t dtype, const uint8_t *packed, size_t n, uint8_t *out);
void sg_dtype_pack4(const uint8_t *elems, size_t n, uint8_t *packed);

/* Element i of n in-memory elements of a numeric or bool dtype (every
 * type above but string, complex and undefined) as double: exact but for
 * 64-bit integers beyond 2^53. 0 for other types. */
double sg_dtype_get_f64(int32_t dtype, const void *data, size_t i);

#endif
