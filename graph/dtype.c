/* dtype.c - element type table and half-precision conversion (see sg_dtype.h). */
#include "sg_dtype.h"

#include <string.h>
#include <strings.h>

struct dtype_info {
    unsigned bits;
    const char *name;
    const char *npy;
};

static const struct dtype_info dtype_table[] = {
#define SG__DTYPE_ROW(name, code, bits, str, npy) [code] = {bits, str, npy},
    SG_DTYPE_MAP(SG__DTYPE_ROW)
#undef SG__DTYPE_ROW
};

_Static_assert(sizeof dtype_table / sizeof dtype_table[0] == SG_DTYPE_COUNT,
               "dtype codes must be dense");

bool sg_dtype_valid(int32_t code)
{
    return code >= 0 && code < SG_DTYPE_COUNT;
}

size_t sg_dtype_size(int32_t code)
{
    return sg_dtype_valid(code) ? (dtype_table[code].bits + 7) / 8 : 0;
}

unsigned sg_dtype_bits(int32_t code)
{
    return sg_dtype_valid(code) ? dtype_table[code].bits : 0;
}

bool sg_dtype_storage_bytes(int32_t code, int64_t numel, size_t *out)
{
    unsigned bits = sg_dtype_bits(code);
    if (!bits || numel < 0)
        return false;
    if (bits < 8) { /* packed: ceil(numel * bits / 8), bits divides 8 */
        uint64_t per = 8 / bits;
        *out = (size_t)((uint64_t)numel / per + ((uint64_t)numel % per != 0));
        return true;
    }
    size_t es = bits / 8;
    if ((uint64_t)numel > SIZE_MAX / es)
        return false;
    *out = (size_t)numel * es;
    return true;
}

const char *sg_dtype_name(int32_t code)
{
    return sg_dtype_valid(code) ? dtype_table[code].name : "unknown";
}

const char *sg_dtype_npy_descr(int32_t code)
{
    return sg_dtype_valid(code) ? dtype_table[code].npy : "";
}

sg_dtype sg_dtype_from_name(const char *name)
{
    static const struct {
        const char *alias;
        sg_dtype code;
    } aliases[] = {
        {"float", SG_DTYPE_FLOAT},
        {"fp32", SG_DTYPE_FLOAT},
        {"fp16", SG_DTYPE_FLOAT16},
        {"half", SG_DTYPE_FLOAT16},
        {"double", SG_DTYPE_DOUBLE},
        {"fp64", SG_DTYPE_DOUBLE},
        {"bf16", SG_DTYPE_BFLOAT16},
        /* ml_dtypes' names */
        {"float8_e4m3fn", SG_DTYPE_FLOAT8E4M3FN},
        {"float8_e4m3fnuz", SG_DTYPE_FLOAT8E4M3FNUZ},
        {"float8_e5m2", SG_DTYPE_FLOAT8E5M2},
        {"float8_e5m2fnuz", SG_DTYPE_FLOAT8E5M2FNUZ},
        {"float4_e2m1fn", SG_DTYPE_FLOAT4E2M1},
    };
    for (int i = 1; i < SG_DTYPE_COUNT; i++)
        if (strcasecmp(name, dtype_table[i].name) == 0)
            return (sg_dtype)i;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].alias) == 0)
            return aliases[i].code;
    /* ONNX enum spellings: FLOAT16, INT64, BOOL, ... */
    static const char *onnx_names[SG_DTYPE_COUNT] = {
        [SG_DTYPE_FLOAT] = "FLOAT",
        [SG_DTYPE_UINT8] = "UINT8",
        [SG_DTYPE_INT8] = "INT8",
        [SG_DTYPE_UINT16] = "UINT16",
        [SG_DTYPE_INT16] = "INT16",
        [SG_DTYPE_INT32] = "INT32",
        [SG_DTYPE_INT64] = "INT64",
        [SG_DTYPE_STRING] = "STRING",
        [SG_DTYPE_BOOL] = "BOOL",
        [SG_DTYPE_FLOAT16] = "FLOAT16",
        [SG_DTYPE_DOUBLE] = "DOUBLE",
        [SG_DTYPE_UINT32] = "UINT32",
        [SG_DTYPE_UINT64] = "UINT64",
        [SG_DTYPE_COMPLEX64] = "COMPLEX64",
        [SG_DTYPE_COMPLEX128] = "COMPLEX128",
        [SG_DTYPE_BFLOAT16] = "BFLOAT16",
        /* The display names of the newer types are the ONNX names in lower
         * case, which the first loop matches without regard to case. */
    };
    for (int i = 1; i < SG_DTYPE_COUNT; i++)
        if (onnx_names[i] && strcasecmp(name, onnx_names[i]) == 0)
            return (sg_dtype)i;
    return SG_DTYPE_UNDEFINED;
}

bool sg_dtype_is_float(int32_t code)
{
    return code == SG_DTYPE_FLOAT || code == SG_DTYPE_FLOAT16 || code == SG_DTYPE_DOUBLE ||
           code == SG_DTYPE_BFLOAT16;
}

bool sg_dtype_is_float8(int32_t code)
{
    return code >= SG_DTYPE_FLOAT8E4M3FN && code <= SG_DTYPE_FLOAT8E5M2FNUZ;
}

bool sg_dtype_is_4bit(int32_t code)
{
    return code == SG_DTYPE_UINT4 || code == SG_DTYPE_INT4 || code == SG_DTYPE_FLOAT4E2M1;
}

bool sg_dtype_is_int(int32_t code)
{
    switch (code) {
    case SG_DTYPE_UINT8:
    case SG_DTYPE_INT8:
    case SG_DTYPE_UINT16:
    case SG_DTYPE_INT16:
    case SG_DTYPE_INT32:
    case SG_DTYPE_INT64:
    case SG_DTYPE_UINT32:
    case SG_DTYPE_UINT64:
        return true;
    default:
        return false;
    }
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float sg_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f)
        return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return bits_float(sign);
        /* Subnormal half: value = mant * 2^-24, exact in float. */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t sg_float_to_half(float f)
{
    uint32_t x = float_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) /* NaN: keep it quiet and non-zero */
        return (uint16_t)(sign | 0x7e00 | ((abs >> 13) & 0x3ff));
    if (abs >= 0x47800000u) /* >= 65536: beyond rounding range, infinity */
        return (uint16_t)(sign | 0x7c00);
    if (abs < 0x38800000u) {   /* below the smallest normal half: subnormal or zero */
        if (abs < 0x33000000u) /* < 2^-25 rounds to zero */
            return sign;
        uint32_t exp = abs >> 23;
        uint32_t mant = (abs & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - exp; /* 14..24 */
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    /* Normal: rebias exponent, round mantissa to 10 bits (ties to even);
     * a carry out of the mantissa correctly bumps the exponent, up to inf. */
    uint32_t h = ((abs - 0x38000000u) >> 13);
    uint32_t rem = abs & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

float sg_bf16_to_float(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

uint16_t sg_float_to_bf16(float f)
{
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    uint32_t rounding = 0x7fff + ((x >> 16) & 1);
    return (uint16_t)((x + rounding) >> 16);
}
