/* check_tensorfile.c - .npy/.pb/.bin tensors against numpy and onnx. */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_dumpname.h"
#include "sg_tensorfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* numpy writes one file per dtype/order; we must read each exactly. */
static const struct {
    const char *file;
    const char *expr; /* numpy expression for the array */
    int32_t dtype;
} npy_cases[] = {
    {"f4.npy", "np.arange(6, dtype='<f4').reshape(2,3)/3", SG_DTYPE_FLOAT},
    {"f4be.npy", "(np.arange(6, dtype='>f4').reshape(2,3)/3).astype('>f4')", SG_DTYPE_FLOAT},
    {"f4fortran.npy", "np.asfortranarray(np.arange(24, dtype='<f4').reshape(2,3,4))",
     SG_DTYPE_FLOAT},
    {"f2.npy", "np.array([1.5, -2, 65504, 1e-7], dtype='<f2')", SG_DTYPE_FLOAT16},
    {"f8.npy", "np.array([[1e300, -0.5]], dtype='<f8')", SG_DTYPE_DOUBLE},
    {"i8.npy", "np.array([-(2**62), 5], dtype='<i8')", SG_DTYPE_INT64},
    {"i8be.npy", "np.array([-(2**62), 5], dtype='>i8')", SG_DTYPE_INT64},
    {"u1.npy", "np.arange(7, dtype=np.uint8)", SG_DTYPE_UINT8},
    {"b1.npy", "np.array([True, False, True])", SG_DTYPE_BOOL},
    {"c8.npy", "np.array([1+2j, 3-4j], dtype=np.complex64)", SG_DTYPE_COMPLEX64},
    {"scalar.npy", "np.array(3.25, dtype=np.float32)", SG_DTYPE_FLOAT},
    {"empty.npy", "np.zeros((0, 4), dtype=np.int32)", SG_DTYPE_INT32},
};

#define N_CASES (sizeof npy_cases / sizeof npy_cases[0])

static char *dir;

static void gen_npy(void)
{
    dir = test_tmpdir("npy");
    char script[8192];
    size_t pos = (size_t)snprintf(script, sizeof script, "import numpy as np\n");
    for (size_t i = 0; i < N_CASES; i++) {
        pos += (size_t)snprintf(script + pos, sizeof script - pos,
                                "a = %s\nnp.save('%s/%s', a)\n"
                                "open('%s/%s.txt','w').write(a.astype(np.complex128).ravel()"
                                ".__repr__() if a.dtype.kind=='c' else "
                                "' '.join(repr(float(v)) for v in a.ravel(order='C')))\n",
                                npy_cases[i].expr, dir, npy_cases[i].file, dir, npy_cases[i].file);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/gen.py", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(script, f);
    fclose(f);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", path);
    ck_assert_int_eq(system(cmd), 0);
}

static double element(const struct sg_array *a, int64_t i)
{
    switch (a->dtype) {
    case SG_DTYPE_FLOAT:
        return ((const float *)a->data)[i];
    case SG_DTYPE_FLOAT16:
        return sg_half_to_float(((const uint16_t *)a->data)[i]);
    case SG_DTYPE_DOUBLE:
        return ((const double *)a->data)[i];
    case SG_DTYPE_INT64:
        return (double)((const int64_t *)a->data)[i];
    case SG_DTYPE_INT32:
        return ((const int32_t *)a->data)[i];
    case SG_DTYPE_UINT8:
    case SG_DTYPE_BOOL:
        return ((const uint8_t *)a->data)[i];
    default:
        return 0;
    }
}

START_TEST(test_npy_read_numpy_files)
{
    gen_npy();
    for (size_t i = 0; i < N_CASES; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, npy_cases[i].file);
        struct sg_array a;
        struct sg_diag d = {0};
        ck_assert_ok(sg_npy_read(path, &a, &d), &d);
        ck_assert_int_eq(a.dtype, npy_cases[i].dtype);
        if (a.dtype == SG_DTYPE_COMPLEX64) {
            const float *c = a.data;
            ck_assert(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == -4);
        } else {
            char txt[620];
            snprintf(txt, sizeof txt, "%s.txt", path);
            FILE *f = fopen(txt, "r");
            ck_assert_ptr_nonnull(f);
            int64_t n = sg_array_numel(&a);
            for (int64_t k = 0; k < n; k++) {
                double want;
                ck_assert_int_eq(fscanf(f, "%lf", &want), 1);
                ck_assert_msg(element(&a, k) == want, "%s[%lld]: %g != %g", npy_cases[i].file,
                              (long long)k, element(&a, k), want);
            }
            fclose(f);
        }
        /* Our writer's output must read back identically (and numpy must
         * accept it: checked below in test_npy_numpy_reads_ours). */
        char out[620];
        snprintf(out, sizeof out, "%s.ours.npy", path);
        ck_assert_ok(sg_npy_write(out, &a, &d), &d);
        struct sg_array b;
        ck_assert_ok(sg_npy_read(out, &b, &d), &d);
        ck_assert_int_eq(b.rank, a.rank);
        ck_assert_mem_eq(b.dims, a.dims, a.rank * sizeof a.dims[0]);
        ck_assert_uint_eq(b.nbytes, a.nbytes);
        if (a.nbytes)
            ck_assert_mem_eq(b.data, a.data, a.nbytes);
        sg_array_free(&a);
        sg_array_free(&b);
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import numpy as np, glob\n"
             "for f in glob.glob('%s/*.ours.npy'):\n"
             "    a = np.load(f); b = np.load(f.replace('.ours.npy', ''))\n"
             "    assert a.dtype.str[1:] == b.dtype.str[1:] and a.shape == b.shape and (a == "
             "b).all(), f\"",
             dir);
    ck_assert_int_eq(system(cmd), 0);
    sg_free(dir);
}
END_TEST

START_TEST(test_npy_bad)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *want;
    } bad[] = {
        {"", 0, "bad magic"},
        {"\x93NUMPX\x01\x00\x10\x00", 10, "bad magic"},
        {"\x93NUMPY\x01\x00\xff\x00{'descr'", 19, "truncated .npy header"},
        {"\x93NUMPY\x01\x00\x10\x00{'descr': 1}   ", 26, "malformed"},
        {"\x93NUMPY\x09\x00\x10\x00", 10, "version 9"},
        /* A NUL in the descr once ended the C string: '<f4\0junk' read as '<f4'. */
        {"\x93NUMPY\x01\x00\x40\x00{'descr': '<f4\0junk', 'fortran_order': False, 'shape': "
         "(1,), } \n\0\0\x80\x3f",
         78, "malformed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sg_array a;
        struct sg_diag d = {0};
        ck_assert_int_ne(sg_npy_read_buffer(bad[i].bytes, bad[i].len, "x.npy", &a, &d), SG_OK);
        ck_assert_msg(strstr(d.msg, bad[i].want) && strstr(d.msg, "x.npy"), "case %zu: %s", i,
                      d.msg);
    }
    /* Truncated data: header says 6 floats, only 2 present. */
    struct sg_array a;
    int64_t dims[2] = {2, 3};
    struct sg_diag d = {0};
    ck_assert_ok(sg_array_alloc(&a, SG_DTYPE_FLOAT, dims, 2), &d);
    uint8_t *buf;
    size_t len;
    ck_assert_ok(sg_npy_encode(&a, &buf, &len, &d), &d);
    struct sg_array b;
    ck_assert_int_eq(sg_npy_read_buffer(buf, len - 16, "t.npy", &b, &d), SG_EPARSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "truncated .npy data"));
    sg_free(buf);
    sg_array_free(&a);
}
END_TEST

START_TEST(test_pb_backend_files)
{
    /* Every input/output .pb of a few backend tests reads, and writing it
     * back gives a TensorProto that onnx reads to the same numpy array. */
    static const char *files[] = {
        "node/test_abs/test_data_set_0/input_0.pb",
        "node/test_cast_FLOAT_to_FLOAT16/test_data_set_0/output_0.pb",
        "node/test_cast_FLOAT_to_STRING/test_data_set_0/output_0.pb",
        "node/test_argmax_default_axis_example/test_data_set_0/output_0.pb",
        "node/test_and2d/test_data_set_0/output_0.pb",
    };
    char *out = test_tmpdir("pb");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char src[600], dst[600];
        snprintf(src, sizeof src, "/usr/share/libonnx-testdata/data/%s", files[i]);
        snprintf(dst, sizeof dst, "%s/%zu.pb", out, i);
        struct sg_array a;
        struct sg_diag d = {0};
        ck_assert_ok(sg_pb_read(src, &a, &d), &d);
        ck_assert_ok(sg_pb_write(dst, &a, &d), &d);
        char cmd[2400];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import onnx, numpy as np\n"
                 "from onnx import numpy_helper as h\n"
                 "a = h.to_array(onnx.load_tensor('%s')); b = h.to_array(onnx.load_tensor('%s'))\n"
                 "assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all()\"",
                 src, dst);
        ck_assert_msg(system(cmd) == 0, "%s differs after a .pb round trip", files[i]);
        sg_array_free(&a);
    }
    sg_free(out);
}
END_TEST

START_TEST(test_bin)
{
    char *out = test_tmpdir("bin");
    char path[600];
    snprintf(path, sizeof path, "%s/x.bin", out);
    float vals[6] = {1, 2, 3, 4, 5, 6};
    struct sg_diag d = {0};
    ck_assert_ok(sg_file_write_atomic(path, vals, sizeof vals, &d), &d);
    int64_t dims[2] = {2, 3};
    struct sg_array a;
    ck_assert_ok(sg_bin_read(path, SG_DTYPE_FLOAT, dims, 2, &a, &d), &d);
    ck_assert_mem_eq(a.data, vals, sizeof vals);
    sg_array_free(&a);
    /* Half the size: read as float16 and widened (msit's convention). */
    uint16_t halves[6];
    for (int i = 0; i < 6; i++)
        halves[i] = sg_float_to_half(vals[i]);
    ck_assert_ok(sg_file_write_atomic(path, halves, sizeof halves, &d), &d);
    ck_assert_ok(sg_bin_read(path, SG_DTYPE_FLOAT, dims, 2, &a, &d), &d);
    ck_assert_mem_eq(a.data, vals, sizeof vals);
    sg_array_free(&a);
    /* Wrong size: an error naming both sizes. */
    ck_assert_ok(sg_file_write_atomic(path, vals, 10, &d), &d);
    ck_assert_int_eq(sg_bin_read(path, SG_DTYPE_FLOAT, dims, 2, &a, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "10 bytes") && strstr(d.msg, "24"), "%s", d.msg);
    sg_free(out);
}
END_TEST

START_TEST(test_dump_names)
{
    static const char *names[] = {
        "Exp_3", "/encoder/layer.0/Exp", "a:0 with space", "q'\"{}[]", "x", "...",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char buf[SG_DUMP_NAME_MAX + 1], want[SG_DUMP_NAME_MAX + 1];
        for (int input = 0; input < 2; input++) {
            ck_assert(!sg_dump_onnx_name(names[i], input, 3, 1700000000123456ull, buf, sizeof buf));
            struct sg_dump_onnx d;
            ck_assert_msg(sg_dump_parse_onnx(buf, &d), "%s", buf);
            ck_assert_str_eq(d.node, sg_dump_sanitize(names[i], want, sizeof want));
            ck_assert_int_eq(d.input, input);
            ck_assert_uint_eq(d.index, 3);
            ck_assert_uint_eq(d.timestamp, 1700000000123456ull);
            /* Not a device name. */
            struct sg_dump_device dv;
            ck_assert(!sg_dump_parse_device(buf, &dv));
        }
        ck_assert(sg_dump_device_name("Exp", names[i], 7, 1, 99, false, 0, buf, sizeof buf));
        struct sg_dump_device dv;
        ck_assert_msg(sg_dump_parse_device(buf, &dv), "%s", buf);
        ck_assert_str_eq(dv.op_type, "Exp");
        ck_assert_uint_eq(dv.task, 7);
        ck_assert_uint_eq(dv.stream, 1);
        ck_assert_uint_eq(dv.timestamp, 99);
        ck_assert(!dv.input);
    }
    /* A 300-character name is shortened, stays unique and parseable. */
    char longname[301], other[301], a[SG_DUMP_NAME_MAX + 1], b[SG_DUMP_NAME_MAX + 1];
    memset(longname, 'n', 300);
    longname[300] = '\0';
    memcpy(other, longname, sizeof other);
    other[299] = 'm';
    ck_assert(sg_dump_onnx_name(longname, false, 0, 1, a, sizeof a));
    ck_assert(sg_dump_onnx_name(other, false, 0, 1, b, sizeof b));
    ck_assert_uint_le(strlen(a), SG_DUMP_NAME_MAX);
    ck_assert_str_ne(a, b);
    struct sg_dump_onnx d;
    ck_assert(sg_dump_parse_onnx(a, &d));
    /* Not dump names at all. */
    ck_assert(!sg_dump_parse_onnx("model.onnx", &d));
    ck_assert(!sg_dump_parse_onnx("x.1.npy", &d));
    ck_assert(!sg_dump_parse_onnx(".0.1.npy", &d));
}
END_TEST

/* The names dumps give nodes: msit's for unnamed ones, stems made unique
 * where names spell alike, and which ones mapping.csv must list. */
START_TEST(test_node_dump_names)
{
    static const struct {
        const char *op, *name;                 /* name NULL: unnamed */
        const char *want, *stem, *device_stem; /* what the table says */
        bool listed;                           /* ONNX form */
    } nodes[] = {
        {"Constant", NULL, "Constant_0", "Constant_0", "Constant_0", false},
        {"Constant", NULL, "Constant_1_999", "Constant_1_999", "Constant_1_999", false},
        {"Add", "a.b", "a.b", "a_b", "a.b", true},
        {"Mul", "a_b", "a_b", "a_b_2", "a_b", true},
        {"Sub", "a/b", "a/b", "a_b_3", "a_b_2", true},
        {"Abs", "a_b_1", "a_b_1", "a_b_1", "a_b_1", false},
        {"Relu", "Constant_1", "Constant_1", "Constant_1", "Constant_1", false},
        {"Relu", NULL, "Relu_7", "Relu_7", "Relu_7", false},
        {"Relu", "Relu_8_999", "Relu_8_999", "Relu_8_999", "Relu_8_999", false},
        {"Relu", NULL, "Relu_9", "Relu_9", "Relu_9", false},
        {"Tanh", NULL, "Tanh_10_1000", "Tanh_10_1000", "Tanh_10_1000", false},
        {"Relu", "Tanh_10", "Tanh_10", "Tanh_10", "Tanh_10", false},
    };
    enum { N = sizeof nodes / sizeof nodes[0] };
    sg_model *m = sg_model_create();
    ck_assert_ptr_nonnull(m);
    struct sg_diag d = {0};
    sg_node *made[N];
    for (size_t i = 0; i < N; i++)
        ck_assert_ptr_nonnull(made[i] =
                                  sg_node_create(m->graph, nodes[i].op, NULL, nodes[i].name, &d));
    sg_dump_names *t = NULL;
    ck_assert_ok(sg_dump_names_create(m, &t, &d), &d);
    for (size_t i = 0; i < N; i++) {
        bool listed, dlisted;
        ck_assert_str_eq(sg_dump_names_of(t, made[i]), nodes[i].want);
        ck_assert_str_eq(sg_dump_names_stem(t, made[i], false, &listed), nodes[i].stem);
        ck_assert_str_eq(sg_dump_names_stem(t, made[i], true, &dlisted), nodes[i].device_stem);
        ck_assert_msg(listed == nodes[i].listed, "node %zu", i);
        ck_assert(dlisted == (strcmp(nodes[i].device_stem, nodes[i].want) != 0));
        ck_assert_ptr_eq(sg_dump_names_by_stem(t, nodes[i].stem, false), made[i]);
    }
    /* Nodes by name; unnamed ones by their msit name (the counter k is
     * shared: Constant_1_999, then Tanh_10_1000). */
    ck_assert_ptr_eq(sg_dump_names_node(t, "Tanh_10"), made[11]);
    ck_assert_ptr_eq(sg_dump_names_node(t, "Tanh_10_1000"), made[10]);
    ck_assert_ptr_eq(sg_dump_names_node(t, "Constant_1_999"), made[1]);
    ck_assert_ptr_null(sg_dump_names_node(t, "Constant_1_1000"));
    ck_assert_ptr_null(sg_dump_names_of(t, NULL));
    sg_dump_names_free(t);
    sg_dump_names_free(NULL);
    sg_model_free(m);
}
END_TEST

/* NaN and Inf counted from the bits of each float layout. */
START_TEST(test_count_nonfinite)
{
    float f[] = {1.0f, INFINITY, -INFINITY, NAN, -0.0f, 3e38f};
    double g[] = {NAN, 1e308, -INFINITY};
    uint16_t h[] = {0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x3c00}; /* inf, -inf, nan, 65504, 1 */
    uint16_t bf[] = {0x7f80, 0x7fc1, 0x3f80};                /* inf, nan, 1 */
    int32_t i[] = {0x7f800000, 0x7fc00000};                  /* not a float tensor */
    const struct {
        int32_t dtype;
        void *data;
        size_t nbytes;
        uint64_t nan, inf;
    } cases[] = {
        {SG_DTYPE_FLOAT, f, sizeof f, 1, 2},   {SG_DTYPE_DOUBLE, g, sizeof g, 1, 1},
        {SG_DTYPE_FLOAT16, h, sizeof h, 1, 2}, {SG_DTYPE_BFLOAT16, bf, sizeof bf, 1, 1},
        {SG_DTYPE_INT32, i, sizeof i, 0, 0},   {SG_DTYPE_FLOAT, NULL, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct sg_array a = {
            .dtype = cases[k].dtype, .data = cases[k].data, .nbytes = cases[k].nbytes};
        uint64_t nan = 99, inf = 99;
        sg_array_count_nonfinite(&a, &nan, &inf);
        ck_assert_msg(nan == cases[k].nan && inf == cases[k].inf, "case %zu: %llu NaN, %llu Inf", k,
                      (unsigned long long)nan, (unsigned long long)inf);
    }
}
END_TEST

Suite *suite_tensorfile(void)
{
    Suite *s = suite_create("tensorfile");
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_npy_read_numpy_files);
    tcase_add_test(tc, test_npy_bad);
    tcase_add_test(tc, test_pb_backend_files);
    tcase_add_test(tc, test_bin);
    tcase_add_test(tc, test_dump_names);
    tcase_add_test(tc, test_node_dump_names);
    tcase_add_test(tc, test_count_nonfinite);
    suite_add_tcase(s, tc);
    return s;
}
