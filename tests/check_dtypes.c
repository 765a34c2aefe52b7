/*
 * check_dtypes.c - the float8, float4e2m1 and 4-bit integer types of
 * graph/narrow.c: every code decoded against the formulas of ONNX's
 * float8.md / float4.md, encoding (ties to even, saturation, NaN, Inf and
 * zero rules of Cast's tables), packing, and tensors of these types in
 * models (raw_data and int32_data forms, odd counts, byte-for-byte saves).
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_tensorfile.h"

#include "onnx.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------ the formulas, again */

/* The formats as float8.md and float4.md define them, written out
 * separately from graph/narrow.c's parameter rows. */
static const struct spec {
    int32_t dtype;
    int ebits, mbits, bias;
    const char *kind; /* "fn": all-ones NaN, "ieee": Inf and NaNs, "fnuz": 0x80 NaN, "" none */
    double max;
} specs[] = {
    {SG_DTYPE_FLOAT8E4M3FN, 4, 3, 7, "fn", 448},
    {SG_DTYPE_FLOAT8E4M3FNUZ, 4, 3, 8, "fnuz", 240},
    {SG_DTYPE_FLOAT8E5M2, 5, 2, 15, "ieee", 57344},
    {SG_DTYPE_FLOAT8E5M2FNUZ, 5, 2, 16, "fnuz", 57344},
};

/* NaN for NaN codes; the value otherwise (sign of zero kept). */
static double spec_value(const struct spec *s, unsigned code)
{
    unsigned bits = 1 + s->ebits + s->mbits;
    unsigned sign = code >> (bits - 1) & 1;
    unsigned e = code >> s->mbits & ((1u << s->ebits) - 1);
    unsigned m = code & ((1u << s->mbits) - 1);
    if (strcmp(s->kind, "fnuz") == 0 && code == 1u << (bits - 1))
        return NAN;
    if (strcmp(s->kind, "fn") == 0 && e == (1u << s->ebits) - 1 && m == (1u << s->mbits) - 1)
        return NAN;
    if (strcmp(s->kind, "ieee") == 0 && e == (1u << s->ebits) - 1)
        return m ? NAN : (sign ? -INFINITY : INFINITY);
    double v = e ? pow(2.0, (double)e - s->bias) * (1 + m / pow(2.0, s->mbits))
                 : pow(2.0, 1.0 - s->bias) * (m / pow(2.0, s->mbits));
    return sign ? -v : v;
}

static bool same_float(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

START_TEST(t_fp8_decode_every_code)
{
    const struct spec *s = &specs[_i];
    for (unsigned c = 0; c < 256; c++) {
        double want = spec_value(s, c);
        float got = sg_fp8_to_float(s->dtype, (uint8_t)c);
        ck_assert_msg(same_float(got, want), "%s code 0x%02x: %.9g, the formula gives %.9g",
                      sg_dtype_name(s->dtype), c, got, want);
    }
}
END_TEST

/* Every code to float32 and back, saturating or not: the same code for
 * every number (and infinity), a NaN code for NaN. */
START_TEST(t_fp8_every_code_round_trips)
{
    const struct spec *s = &specs[_i];
    const unsigned modes[] = {0, SG_FP8_SATURATE};
    for (unsigned c = 0; c < 256; c++) {
        float f = sg_fp8_to_float(s->dtype, (uint8_t)c);
        for (size_t k = 0; k < 2; k++) {
            uint8_t back = sg_float_to_fp8(s->dtype, f, modes[k]);
            if (isnan(f))
                ck_assert_msg(isnan(sg_fp8_to_float(s->dtype, back)), "%s NaN 0x%02x -> 0x%02x",
                              sg_dtype_name(s->dtype), c, back);
            else if (isinf(f) && modes[k])
                ck_assert_int_eq(back, (c & 0x80) | sg_float_to_fp8(s->dtype, s->max, 0));
            else
                ck_assert_msg(back == c, "%s 0x%02x (%g) -> 0x%02x (flags %u)",
                              sg_dtype_name(s->dtype), c, f, back, modes[k]);
        }
    }
}
END_TEST

/* Halfway between two neighbours goes to the one with the even mantissa
 * (the even code), a hair either side to the nearer one; on both signs. */
START_TEST(t_fp8_ties_to_even)
{
    const struct spec *s = &specs[_i];
    uint8_t top = sg_float_to_fp8(s->dtype, s->max, 0);
    for (unsigned c = 0; c < top; c++) {
        double a = sg_fp8_to_float(s->dtype, (uint8_t)c);
        double b = sg_fp8_to_float(s->dtype, (uint8_t)(c + 1));
        double mid = (a + b) / 2, eps = (b - a) / 1024;
        unsigned even = c % 2 == 0 ? c : c + 1;
        for (int neg = 0; neg < 2; neg++) {
            double sg = neg ? -1 : 1;
            unsigned sb = neg ? 0x80 : 0;
            unsigned lo = c == 0 && neg && strcmp(s->kind, "fnuz") == 0 ? 0 : (sb | c);
            unsigned ev = even == 0 && neg && strcmp(s->kind, "fnuz") == 0 ? 0 : (sb | even);
            ck_assert_int_eq(sg_float_to_fp8(s->dtype, sg * mid, SG_FP8_SATURATE), ev);
            ck_assert_int_eq(sg_float_to_fp8(s->dtype, sg * (mid - eps), SG_FP8_SATURATE), lo);
            ck_assert_int_eq(sg_float_to_fp8(s->dtype, sg * (mid + eps), 0), sb | (c + 1));
        }
    }
}
END_TEST

/* The special rows of Cast's two tables, for each type. */
START_TEST(t_fp8_special_values)
{
    const struct spec *s = &specs[_i];
    int32_t dt = s->dtype;
    bool fnuz = strcmp(s->kind, "fnuz") == 0, ieee = strcmp(s->kind, "ieee") == 0;
    uint8_t max = sg_float_to_fp8(dt, s->max, 0);
    ck_assert(sg_fp8_to_float(dt, max) == s->max);
    /* zeros: FNUZ has no negative zero */
    ck_assert_int_eq(sg_float_to_fp8(dt, 0.0, SG_FP8_SATURATE), 0);
    ck_assert_int_eq(sg_float_to_fp8(dt, -0.0, SG_FP8_SATURATE), fnuz ? 0 : 0x80);
    ck_assert_int_eq(sg_float_to_fp8(dt, -1e-30, 0), fnuz ? 0 : 0x80);
    /* NaN is NaN either way; -NaN keeps its sign where the type has one */
    for (unsigned f = 0; f < 4; f++) {
        ck_assert(isnan(sg_fp8_to_float(dt, sg_float_to_fp8(dt, NAN, f))));
        uint8_t nn = sg_float_to_fp8(dt, -NAN, f);
        ck_assert(isnan(sg_fp8_to_float(dt, nn)));
        ck_assert_int_eq(nn & 0x80, 0x80); /* FNUZ's only NaN is 0x80 too */
    }
    /* saturate: +-Inf and [x] beyond the range go to +-max */
    double big = s->max * 1.5;
    ck_assert_int_eq(sg_float_to_fp8(dt, INFINITY, SG_FP8_SATURATE), max);
    ck_assert_int_eq(sg_float_to_fp8(dt, -INFINITY, SG_FP8_SATURATE), 0x80 | max);
    ck_assert_int_eq(sg_float_to_fp8(dt, big, SG_FP8_SATURATE), max);
    ck_assert_int_eq(sg_float_to_fp8(dt, -big, SG_FP8_SATURATE), 0x80 | max);
    /* no saturation: E5M2 has infinities, the others make NaN */
    uint8_t pinf = sg_float_to_fp8(dt, INFINITY, 0), minf = sg_float_to_fp8(dt, -INFINITY, 0);
    uint8_t pbig = sg_float_to_fp8(dt, big, 0), mbig = sg_float_to_fp8(dt, -big, 0);
    if (ieee) {
        ck_assert(sg_fp8_to_float(dt, pinf) == INFINITY && pbig == pinf);
        ck_assert(sg_fp8_to_float(dt, minf) == -INFINITY && mbig == minf);
    } else {
        ck_assert(isnan(sg_fp8_to_float(dt, pinf)) && isnan(sg_fp8_to_float(dt, minf)));
        ck_assert(isnan(sg_fp8_to_float(dt, pbig)) && isnan(sg_fp8_to_float(dt, mbig)));
        if (fnuz)
            ck_assert(pinf == 0x80 && minf == 0x80 && pbig == 0x80 && mbig == 0x80);
        else
            ck_assert(minf == 0xff && mbig == 0xff); /* -NaN */
    }
    /* The largest value that still rounds to max (ties to even keep it). */
    double next = s->max + (s->max - sg_fp8_to_float(dt, (uint8_t)(max - 1)));
    ck_assert_int_eq(sg_float_to_fp8(dt, (s->max + next) / 2 - 1e-9 * s->max, 0), max);
}
END_TEST

/*
 * The ONNX backend tests' cast cases (onnx v1.22.0,
 * onnx/backend/test/data/node/test_cast_[no_saturate_]FLOAT_to_FLOAT8*,
 * made by the ONNX reference with ml_dtypes): inputs and the bytes of the
 * expected outputs.
 */
static const float cast_in[15] = {0.47892547f, 0.48033667f, 0.49968487f, 0.81910545f, 0.47031248f,
                                  0.7229038f,  1000000.0f,  1e-7f,       NAN,         INFINITY,
                                  INFINITY,    -INFINITY,   -1e-7f,      1e-7f,       -1000000.0f};
static const struct {
    int32_t dtype;
    unsigned flags;
    const char *hex;
} cast_out[] = {
    {SG_DTYPE_FLOAT8E4M3FN, SG_FP8_SATURATE, "2f2f30352f347e007f7e7efe8000fe"},
    {SG_DTYPE_FLOAT8E4M3FN, 0, "2f2f30352f347f007f7f7fff8000ff"},
    {SG_DTYPE_FLOAT8E4M3FNUZ, SG_FP8_SATURATE, "3737383d373c7f00807f7fff0000ff"},
    {SG_DTYPE_FLOAT8E4M3FNUZ, 0, "3737383d373c800080808080000080"},
    {SG_DTYPE_FLOAT8E5M2, SG_FP8_SATURATE, "3838383b383a7b007e7b7bfb8000fb"},
    {SG_DTYPE_FLOAT8E5M2, 0, "3838383b383a7c007e7c7cfc8000fc"},
    {SG_DTYPE_FLOAT8E5M2FNUZ, SG_FP8_SATURATE, "3c3c3c3f3c3e7f00807f7fff0000ff"},
};

START_TEST(t_fp8_backend_cases)
{
    for (size_t k = 0; k < sizeof cast_out / sizeof cast_out[0]; k++)
        for (size_t i = 0; i < 15; i++) {
            unsigned want;
            sscanf(cast_out[k].hex + 2 * i, "%2x", &want);
            uint8_t got = sg_float_to_fp8(cast_out[k].dtype, cast_in[i], cast_out[k].flags);
            ck_assert_msg(got == want, "%s flags %u, %g: 0x%02x, ONNX has 0x%02x",
                          sg_dtype_name(cast_out[k].dtype), cast_out[k].flags, cast_in[i], got,
                          want);
        }
}
END_TEST

/* A double between two float8 values whose float32 rounding is a tie:
 * rounded directly it goes up, through float32 it would go to even. */
START_TEST(t_fp8_from_double_rounds_once)
{
    /* E4M3FN 1.0 (0x38) and 1.125 (0x39): 1.0625 is the tie */
    double v = 1.0625 + 1e-12;
    ck_assert((float)v == 1.0625f);
    ck_assert_int_eq(sg_float_to_fp8(SG_DTYPE_FLOAT8E4M3FN, v, SG_FP8_SATURATE), 0x39);
    ck_assert_int_eq(sg_float_to_fp8(SG_DTYPE_FLOAT8E4M3FN, (float)v, SG_FP8_SATURATE), 0x38);
}
END_TEST

/* ------------------------------------------------------------- float4 */

START_TEST(t_fp4_codes)
{
    /* float4.md: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives */
    const double mags[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (unsigned c = 0; c < 16; c++) {
        double want = c & 8 ? -mags[c & 7] : mags[c & 7];
        ck_assert(same_float(sg_fp4_to_float((uint8_t)c), want));
        ck_assert_int_eq(sg_float_to_fp4(want), c);
    }
    for (unsigned c = 0; c < 7; c++) { /* ties to even, on both signs */
        double mid = (mags[c] + mags[c + 1]) / 2;
        unsigned even = c % 2 == 0 ? c : c + 1;
        ck_assert_int_eq(sg_float_to_fp4(mid), even);
        ck_assert_int_eq(sg_float_to_fp4(-mid), 8 | even);
        ck_assert_int_eq(sg_float_to_fp4(mid * 1.0001), c + 1);
    }
    /* the table: beyond +-6 and +-Inf saturate, NaN is 6 */
    ck_assert_int_eq(sg_float_to_fp4(7), 7);
    ck_assert_int_eq(sg_float_to_fp4(-1e30), 15);
    ck_assert_int_eq(sg_float_to_fp4(INFINITY), 7);
    ck_assert_int_eq(sg_float_to_fp4(-INFINITY), 15);
    ck_assert_int_eq(sg_float_to_fp4(NAN), 8); /* -0, as the ONNX reference */
    ck_assert_int_eq(sg_float_to_fp4(-0.0), 8);
    /* onnx v1.22.0 test_cast_FLOAT_to_FLOAT4E2M1: inputs and packed
     * output, byte for byte (NaN, element 8, is -0: the low nibble 8 of
     * byte 4; float4.md's table says 6). */
    const float in[15] = {0.48f, 0.25f,    1.05f,    -3.5f,     -8, 9,     1000000, 1e-7f,
                          NAN,   INFINITY, INFINITY, -INFINITY, -4, 0.01f, -0.0f};
    const uint8_t want[8] = {0x01, 0xe2, 0x7f, 0x07, 0x78, 0xf7, 0x0e, 0x08};
    uint8_t codes[15], packed[8];
    for (size_t i = 0; i < 15; i++)
        codes[i] = sg_float_to_fp4(in[i]);
    sg_dtype_pack4(codes, 15, packed);
    ck_assert_mem_eq(packed, want, 8);
}
END_TEST

/* ------------------------------------------------ 4-bit ints, packing */

START_TEST(t_int4_wrap_and_pack)
{
    for (int v = -20; v <= 20; v++) {
        int8_t s = (int8_t)sg_int4_wrap(SG_DTYPE_INT4, v);
        ck_assert_int_eq(s, ((v % 16) + 16 + 8) % 16 - 8);
        ck_assert_int_eq(sg_int4_wrap(SG_DTYPE_UINT4, v), ((v % 16) + 16) % 16);
    }
    ck_assert_int_eq((int8_t)sg_dtype_nibble(SG_DTYPE_INT4, 0xf8), -8);
    ck_assert_int_eq(sg_dtype_nibble(SG_DTYPE_UINT4, 0xf8), 8);
    ck_assert_int_eq(sg_dtype_nibble(SG_DTYPE_FLOAT4E2M1, 0x3c), 0xc);
    /* odd counts: a zero nibble pads the last byte */
    const int8_t vals[5] = {1, -2, 3, -8, 7};
    uint8_t packed[3] = {0xaa, 0xaa, 0xaa}, back[5];
    sg_dtype_pack4((const uint8_t *)vals, 5, packed);
    const uint8_t want[3] = {0xe1, 0x83, 0x07};
    ck_assert_mem_eq(packed, want, 3);
    sg_dtype_unpack4(SG_DTYPE_INT4, packed, 5, back);
    ck_assert_mem_eq(back, vals, 5);
    sg_dtype_unpack4(SG_DTYPE_UINT4, packed, 5, back);
    const uint8_t uwant[5] = {1, 14, 3, 8, 7};
    ck_assert_mem_eq(back, uwant, 5);
    size_t n;
    ck_assert(sg_dtype_storage_bytes(SG_DTYPE_INT4, 0, &n) && n == 0);
    ck_assert(sg_dtype_storage_bytes(SG_DTYPE_INT4, 1, &n) && n == 1);
    ck_assert(sg_dtype_storage_bytes(SG_DTYPE_FLOAT4E2M1, 7, &n) && n == 4);
    ck_assert(sg_dtype_storage_bytes(SG_DTYPE_UINT4, INT64_MAX, &n) && n == (size_t)1 << 62);
    ck_assert(sg_dtype_storage_bytes(SG_DTYPE_FLOAT8E5M2, 7, &n) && n == 7);
    ck_assert(!sg_dtype_storage_bytes(SG_DTYPE_FLOAT, INT64_MAX, &n));
    ck_assert(!sg_dtype_storage_bytes(SG_DTYPE_INT4, -1, &n));
    ck_assert(!sg_dtype_storage_bytes(SG_DTYPE_STRING, 1, &n));
}
END_TEST

START_TEST(t_names)
{
    static const struct {
        int32_t code;
        const char *name, *onnx, *ml;
        unsigned bits;
    } t[] = {
        {17, "float8e4m3fn", "FLOAT8E4M3FN", "float8_e4m3fn", 8},
        {18, "float8e4m3fnuz", "FLOAT8E4M3FNUZ", "float8_e4m3fnuz", 8},
        {19, "float8e5m2", "FLOAT8E5M2", "float8_e5m2", 8},
        {20, "float8e5m2fnuz", "FLOAT8E5M2FNUZ", "float8_e5m2fnuz", 8},
        {21, "uint4", "UINT4", "uint4", 4},
        {22, "int4", "INT4", "int4", 4},
        {23, "float4e2m1", "FLOAT4E2M1", "float4_e2m1fn", 4},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        ck_assert(sg_dtype_valid(t[i].code));
        ck_assert_str_eq(sg_dtype_name(t[i].code), t[i].name);
        ck_assert_int_eq(sg_dtype_from_name(t[i].onnx), t[i].code);
        ck_assert_int_eq(sg_dtype_from_name(t[i].ml), t[i].code);
        ck_assert_uint_eq(sg_dtype_bits(t[i].code), t[i].bits);
        ck_assert_uint_eq(sg_dtype_size(t[i].code), 1);
        ck_assert_str_eq(sg_dtype_npy_descr(t[i].code), "<V1");
    }
    ck_assert(!sg_dtype_valid(24));
    ck_assert_uint_eq(sg_dtype_bits(24), 0);
    ck_assert(sg_dtype_is_float8(17) && sg_dtype_is_float8(20) && !sg_dtype_is_float8(21));
    ck_assert(sg_dtype_is_4bit(21) && sg_dtype_is_4bit(23) && !sg_dtype_is_4bit(20));
    ck_assert(!sg_dtype_is_float(17) && !sg_dtype_is_int(22));
}
END_TEST

/* -------------------------------------------------- tensors in models */

/* A model whose graph has one initializer per tensor in `ts`. */
static uint8_t *model_with(Onnx__TensorProto **ts, size_t n, size_t *len)
{
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "g";
    g.n_initializer = n;
    g.initializer = ts;
    Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    op.has_version = 1;
    op.version = 21;
    Onnx__OperatorSetIdProto *ops[1] = {&op};
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    m.has_ir_version = 1;
    m.ir_version = 10;
    m.n_opset_import = 1;
    m.opset_import = ops;
    m.graph = &g;
    *len = protobuf_c_message_get_packed_size(&m.base);
    uint8_t *buf = sg_malloc(*len);
    ck_assert_ptr_nonnull(buf);
    protobuf_c_message_pack(&m.base, buf);
    return buf;
}

static sg_tensor *init_named(sg_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->graph->n_inits; i++)
        if (strcmp(m->graph->inits[i]->name, name) == 0)
            return m->graph->inits[i]->init;
    ck_abort_msg("no initializer %s", name);
    return NULL;
}

START_TEST(t_tensor_forms)
{
    /* int4 [5] as raw_data (3 bytes, padded), uint4 [3] as int32_data (two
     * entries of a packed pair each), float8e5m2 [2] as int32_data, float4
     * [1] raw */
    int64_t d5[1] = {5}, d3[1] = {3}, d2[1] = {2}, d1[1] = {1};
    uint8_t raw5[3] = {0xe1, 0x83, 0x07}, raw1[1] = {0x0f};
    int32_t i32u4[2] = {0xf1, 0x02}, i32f8[2] = {0x3c, 0xfb};
    Onnx__TensorProto a = ONNX__TENSOR_PROTO__INIT, b = ONNX__TENSOR_PROTO__INIT,
                      c = ONNX__TENSOR_PROTO__INIT, e = ONNX__TENSOR_PROTO__INIT;
    a.name = "a", a.has_data_type = 1, a.data_type = SG_DTYPE_INT4, a.n_dims = 1, a.dims = d5;
    a.has_raw_data = 1, a.raw_data.data = raw5, a.raw_data.len = 3;
    b.name = "b", b.has_data_type = 1, b.data_type = SG_DTYPE_UINT4, b.n_dims = 1, b.dims = d3;
    b.n_int32_data = 2, b.int32_data = i32u4;
    c.name = "c", c.has_data_type = 1, c.data_type = SG_DTYPE_FLOAT8E5M2, c.n_dims = 1;
    c.dims = d2, c.n_int32_data = 2, c.int32_data = i32f8;
    e.name = "e", e.has_data_type = 1, e.data_type = SG_DTYPE_FLOAT4E2M1, e.n_dims = 1;
    e.dims = d1, e.has_raw_data = 1, e.raw_data.data = raw1, e.raw_data.len = 1;
    Onnx__TensorProto *ts[4] = {&a, &b, &c, &e};
    size_t len;
    uint8_t *buf = model_with(ts, 4, &len);
    struct sg_diag d = {0};
    sg_model *m;
    ck_assert_ok(sg_model_load_buffer(buf, len, NULL, "forms", NULL, &m, &d), &d);
    size_t nb;
    const int8_t *va = sg_tensor_data(m, init_named(m, "a"), &nb, &d);
    const int8_t want_a[5] = {1, -2, 3, -8, 7};
    ck_assert_ptr_nonnull(va);
    ck_assert_uint_eq(nb, 5);
    ck_assert_mem_eq(va, want_a, 5);
    ck_assert_uint_eq(sg_tensor_nbytes(init_named(m, "a")), 3);
    const uint8_t *vb = sg_tensor_data(m, init_named(m, "b"), &nb, &d);
    const uint8_t want_b[3] = {1, 15, 2};
    ck_assert_ptr_nonnull(vb);
    ck_assert_mem_eq(vb, want_b, 3);
    const uint8_t *vc = sg_tensor_data(m, init_named(m, "c"), &nb, &d);
    ck_assert(vc && nb == 2 && vc[0] == 0x3c && vc[1] == 0xfb);
    ck_assert(sg_fp8_to_float(SG_DTYPE_FLOAT8E5M2, vc[0]) == 1.0f);
    ck_assert(sg_fp8_to_float(SG_DTYPE_FLOAT8E5M2, vc[1]) == -57344.0f);
    const uint8_t *ve = sg_tensor_data(m, init_named(m, "e"), &nb, &d);
    ck_assert(ve && nb == 1 && sg_fp4_to_float(ve[0]) == -6.0f);

    /* Saved byte for byte: the payloads keep their form. */
    uint8_t *out;
    size_t out_len;
    ck_assert_ok(sg_model_save_buffer(m, &out, &out_len, &d), &d);
    ck_assert_uint_eq(out_len, len);
    ck_assert_mem_eq(out, buf, len);
    sg_free(out);

    /* A new native payload is stored packed. */
    sg_tensor *ta = init_named(m, "a");
    int8_t nv[5] = {-1, 2, -3, 4, -5};
    ck_assert_int_eq(sg_tensor_set_raw(m, ta, nv, 5, NULL), SG_OK);
    ck_assert_uint_eq(ta->raw_len, 3);
    const uint8_t want_raw[3] = {0x2f, 0x4d, 0x0b};
    ck_assert_mem_eq(ta->raw, want_raw, 3);
    ck_assert_mem_eq(sg_tensor_data(m, ta, &nb, &d), nv, 5);
    ck_assert_int_eq(sg_tensor_set_raw(m, ta, nv, 4, NULL), SG_ESHAPE);
    sg_model_free(m);
    sg_free(buf);
}
END_TEST

/* Payloads that disagree with the packed size are load errors naming the
 * tensor; an int32_data count of elements instead of pairs too. */
START_TEST(t_tensor_bad_sizes)
{
    int64_t d5[1] = {5};
    uint8_t raw[5] = {0};
    int32_t i32[5] = {0};
    const struct {
        int32_t dtype;
        size_t raw_len, n_i32;
    } bad[] = {
        {SG_DTYPE_INT4, 5, 0},  /* one byte per element: not packed */
        {SG_DTYPE_INT4, 2, 0},  /* too short */
        {SG_DTYPE_UINT4, 0, 5}, /* an int32 per element */
        {SG_DTYPE_FLOAT8E4M3FN, 3, 0}, {SG_DTYPE_FLOAT8E4M3FN, 0, 3},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
        t.name = "w", t.has_data_type = 1, t.data_type = bad[k].dtype, t.n_dims = 1, t.dims = d5;
        if (bad[k].raw_len)
            t.has_raw_data = 1, t.raw_data.data = raw, t.raw_data.len = bad[k].raw_len;
        t.n_int32_data = bad[k].n_i32, t.int32_data = i32;
        Onnx__TensorProto *ts[1] = {&t};
        size_t len;
        uint8_t *buf = model_with(ts, 1, &len);
        struct sg_diag d = {0};
        sg_model *m = NULL;
        ck_assert_int_ne(sg_model_load_buffer(buf, len, NULL, "bad", NULL, &m, &d), SG_OK);
        ck_assert_ptr_null(m);
        ck_assert_msg(strstr(d.msg, "'w'"), "case %zu: %s", k, d.msg);
        sg_free(buf);
    }
}
END_TEST

/* .pb, .npy (as ml_dtypes writes them) and .bin files of these types. */
START_TEST(t_tensor_files)
{
    char *dir = test_tmpdir("dtypes_files");
    char path[700];
    struct sg_diag d = {0};
    const int8_t vals[5] = {1, -2, 3, -8, 7};
    struct sg_array a = {.dtype = SG_DTYPE_INT4, .rank = 1, .dims = {5}};
    a.data = sg_malloc(5);
    memcpy(a.data, vals, 5);
    a.nbytes = 5;
    /* .pb: raw_data packed */
    snprintf(path, sizeof path, "%s/x.pb", dir);
    ck_assert_ok(sg_pb_write(path, &a, &d), &d);
    struct sg_array b;
    ck_assert_ok(sg_pb_read(path, &b, &d), &d);
    ck_assert(b.dtype == SG_DTYPE_INT4 && b.nbytes == 5 && memcmp(b.data, vals, 5) == 0);
    sg_array_free(&b);
    /* .npy: '<V1', the low nibble per byte */
    snprintf(path, sizeof path, "%s/x.npy", dir);
    ck_assert_ok(sg_npy_write(path, &a, &d), &d);
    uint8_t *raw;
    size_t len;
    ck_assert_ok(sg_file_read_all(path, 1 << 20, &raw, &len, &d), &d);
    ck_assert(len == 128 + 5 && strstr((const char *)raw + 10, "'descr': '<V1'"));
    const uint8_t nibbles[5] = {1, 14, 3, 8, 7};
    ck_assert_mem_eq(raw + 128, nibbles, 5);
    sg_free(raw);
    ck_assert_int_eq(sg_npy_read(path, &b, &d), SG_ETYPE);
    ck_assert_msg(strstr(d.msg, "ml_dtypes"), "%s", d.msg);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_npy_read_as(path, SG_DTYPE_FLOAT, &b, &d), SG_ETYPE);
    sg_diag_clear(&d);
    ck_assert_ok(sg_npy_read_as(path, SG_DTYPE_INT4, &b, &d), &d);
    ck_assert(b.dtype == SG_DTYPE_INT4 && memcmp(b.data, vals, 5) == 0);
    sg_array_free(&b);
    ck_assert_ok(sg_npy_read_as(path, SG_DTYPE_FLOAT8E4M3FN, &b, &d), &d);
    ck_assert(b.dtype == SG_DTYPE_FLOAT8E4M3FN && memcmp(b.data, nibbles, 5) == 0);
    sg_array_free(&b);
    /* .bin: packed (3 bytes) or one element a byte (5) */
    const int64_t dims[1] = {5};
    snprintf(path, sizeof path, "%s/p.bin", dir);
    const uint8_t packed[3] = {0xe1, 0x83, 0x07};
    ck_assert_ok(sg_file_write_atomic(path, packed, 3, &d), &d);
    ck_assert_ok(sg_bin_read(path, SG_DTYPE_INT4, dims, 1, &b, &d), &d);
    ck_assert(b.nbytes == 5 && memcmp(b.data, vals, 5) == 0);
    sg_array_free(&b);
    snprintf(path, sizeof path, "%s/u.bin", dir);
    ck_assert_ok(sg_file_write_atomic(path, nibbles, 5, &d), &d);
    ck_assert_ok(sg_bin_read(path, SG_DTYPE_INT4, dims, 1, &b, &d), &d);
    ck_assert(b.nbytes == 5 && memcmp(b.data, vals, 5) == 0);
    sg_array_free(&b);
    ck_assert_int_eq(sg_bin_read(path, SG_DTYPE_FLOAT, dims, 1, &b, &d), SG_ESHAPE);
    sg_array_free(&a);
    sg_free(dir);
}
END_TEST

Suite *suite_dtypes(void)
{
    Suite *s = suite_create("dtypes");
    TCase *tc = tcase_create("float8");
    tcase_add_loop_test(tc, t_fp8_decode_every_code, 0, 4);
    tcase_add_loop_test(tc, t_fp8_every_code_round_trips, 0, 4);
    tcase_add_loop_test(tc, t_fp8_ties_to_even, 0, 4);
    tcase_add_loop_test(tc, t_fp8_special_values, 0, 4);
    tcase_add_test(tc, t_fp8_backend_cases);
    tcase_add_test(tc, t_fp8_from_double_rounds_once);
    suite_add_tcase(s, tc);
    tc = tcase_create("narrow");
    tcase_add_test(tc, t_fp4_codes);
    tcase_add_test(tc, t_int4_wrap_and_pack);
    tcase_add_test(tc, t_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("tensors");
    tcase_add_test(tc, t_tensor_forms);
    tcase_add_test(tc, t_tensor_bad_sizes);
    tcase_add_test(tc, t_tensor_files);
    suite_add_tcase(s, tc);
    return s;
}
