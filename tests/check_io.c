/* check_io.c - load/save in C: buffers, external data, models past 2 GB. */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_io.h"

#include "onnx.pb-c.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

START_TEST(test_load_abs)
{
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(
        sg_model_load("/usr/share/libonnx-testdata/data/node/test_abs/model.onnx", NULL, &m, &d),
        &d);
    ck_assert_uint_eq(m->graph->n_nodes, 1);
    ck_assert_str_eq(m->graph->first->op_type, "Abs");
    sg_model_free(m);
}
END_TEST

static int commit_calls;

static sg_status refuse_commit(void *ctx, struct sg_diag *diag)
{
    commit_calls++;
    return ctx ? sg_diag_set(diag, SG_EINVAL, "refused by the caller") : SG_OK;
}

/* before_commit runs once the bytes are written; its refusal leaves no file
 * (not even a temporary one) and is returned; its consent saves. */
START_TEST(test_save_before_commit)
{
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(
        sg_model_load("/usr/share/libonnx-testdata/data/node/test_abs/model.onnx", NULL, &m, &d),
        &d);
    char *dir = test_tmpdir("commit");
    char path[4096];
    snprintf(path, sizeof path, "%s/out.onnx", dir);
    int yes = 1;
    struct sg_save_opts o = {.before_commit = refuse_commit, .before_commit_ctx = &yes};
    commit_calls = 0;
    ck_assert_int_eq(sg_model_save(m, path, &o, &d), SG_EINVAL);
    ck_assert_str_eq(d.msg, "refused by the caller");
    ck_assert_int_eq(commit_calls, 1);
    DIR *dd = opendir(dir);
    ck_assert_ptr_nonnull(dd);
    for (struct dirent *e; (e = readdir(dd));)
        ck_assert_msg(e->d_name[0] == '.', "'%s' left behind", e->d_name);
    closedir(dd);
    o.before_commit_ctx = NULL;
    ck_assert_ok(sg_model_save(m, path, &o, &d), &d);
    ck_assert_int_eq(commit_calls, 2);
    ck_assert_int_eq(access(path, R_OK), 0);
    sg_model_free(m);
    sg_free(dir);
}
END_TEST

START_TEST(test_buffer_round_trip)
{
    const char *path = "/usr/share/libonnx-testdata/data/node/test_loop11/model.onnx";
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(sg_model_load(path, NULL, &m, &d), &d);
    uint8_t *a, *b;
    size_t la, lb;
    ck_assert_ok(sg_model_save_buffer(m, &a, &la, &d), &d);
    sg_model *m2 = NULL;
    ck_assert_ok(sg_model_load_buffer(a, la, NULL, "buffer", NULL, &m2, &d), &d);
    ck_assert_ok(sg_model_save_buffer(m2, &b, &lb, &d), &d);
    ck_assert_uint_eq(la, lb);
    ck_assert_mem_eq(a, b, la);
    sg_free(a);
    sg_free(b);
    sg_model_free(m);
    sg_model_free(m2);
}
END_TEST

/* The model codec against protobuf-c's generated code (the reference): for
 * every backend-test model, our decode + encode gives exactly the bytes of
 * protobuf-c's unpack + pack, and a mutated model is either refused by both
 * or written identically. */

/* The IR keeps one type per value: a name listed twice among the main
 * graph's inputs, outputs and value_info with different ValueInfoProtos
 * keeps the first (a documented limit), so such files are not compared. */
static bool has_conflicting_value_infos(const Onnx__ModelProto *p)
{
    if (!p->graph)
        return false;
    const Onnx__GraphProto *g = p->graph;
    size_t n = g->n_input + g->n_output + g->n_value_info;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const Onnx__ValueInfoProto *a = i < g->n_input ? g->input[i]
                                            : i < g->n_input + g->n_output
                                                ? g->output[i - g->n_input]
                                                : g->value_info[i - g->n_input - g->n_output];
            const Onnx__ValueInfoProto *b = j < g->n_input ? g->input[j]
                                            : j < g->n_input + g->n_output
                                                ? g->output[j - g->n_input]
                                                : g->value_info[j - g->n_input - g->n_output];
            if (a->name && b->name && strcmp(a->name, b->name) == 0)
                return true;
        }
    return false;
}

static void codec_vs_protobuf_c(const uint8_t *data, size_t len, const char *label, bool must_load)
{
    Onnx__ModelProto *p = onnx__model_proto__unpack(NULL, len, data);
    if (p && !must_load && has_conflicting_value_infos(p)) {
        onnx__model_proto__free_unpacked(p, NULL);
        return;
    }
    struct sg_load_opts lo = {.skip_verify = true, .skip_external = true};
    sg_model *m = NULL;
    struct sg_diag d = {0};
    sg_status st = sg_model_load_buffer(data, len, NULL, label, &lo, &m, &d);
    if (must_load)
        ck_assert_msg(st == SG_OK && p, "%s: %s", label, d.msg);
    if (st == SG_OK && p) {
        uint8_t *ours;
        size_t n;
        ck_assert_ok(sg_model_save_buffer(m, &ours, &n, &d), &d);
        size_t want = onnx__model_proto__get_packed_size(p);
        uint8_t *ref = malloc(want ? want : 1);
        onnx__model_proto__pack(p, ref);
        ck_assert_msg(n == want && memcmp(ours, ref, n) == 0,
                      "%s: %zu bytes from surgeon, %zu from protobuf-c", label, n, want);
        free(ref);
        sg_free(ours);
    }
    sg_model_free(m);
    if (p)
        onnx__model_proto__free_unpacked(p, NULL);
}

START_TEST(test_codec_matches_protobuf_c)
{
    static const char *folders[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    size_t checked = 0;
    uint32_t seed = 12345;
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++) {
        char dir[512];
        snprintf(dir, sizeof dir, "/usr/share/libonnx-testdata/data/%s", folders[f]);
        DIR *dp = opendir(dir);
        if (!dp) {
            printf("SKIP test_codec_matches_protobuf_c: %s is missing\n", dir);
            return;
        }
        struct dirent *e;
        while ((e = readdir(dp))) {
            if (e->d_name[0] == '.')
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
            FILE *fp = fopen(path, "rb");
            if (!fp)
                continue;
            fseek(fp, 0, SEEK_END);
            long len = ftell(fp);
            fseek(fp, 0, SEEK_SET);
            uint8_t *buf = malloc((size_t)len + 1);
            ck_assert_uint_eq(fread(buf, 1, (size_t)len, fp), (size_t)len);
            fclose(fp);
            codec_vs_protobuf_c(buf, (size_t)len, path, true);
            /* A few single-byte mutations: both refuse, or both agree. */
            for (int k = 0; k < 4 && len > 0; k++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = (seed >> 8) % (size_t)len;
                uint8_t old = buf[at];
                buf[at] ^= (uint8_t)(1u << (seed & 7));
                codec_vs_protobuf_c(buf, (size_t)len, path, false);
                buf[at] = old;
            }
            free(buf);
            checked++;
        }
        closedir(dp);
    }
    ck_assert_uint_ge(checked, 1000);
}
END_TEST

/* A zeroed blob of `size` bytes: calloc'd pages stay untouched until read. */
static sg_blob *zero_blob(size_t size)
{
    sg_blob *b = sg_calloc(1, sizeof *b);
    ck_assert_ptr_nonnull(b);
    b->data = sg_calloc(1, size);
    ck_assert_ptr_nonnull(b->data);
    b->refs = 1;
    b->size = size;
    return b;
}

START_TEST(test_over_2gb)
{
    char *dir = test_tmpdir("big");
    struct statvfs vfs;
    const uint64_t need = 6ull << 30;
    if (statvfs(dir, &vfs) != 0 || (uint64_t)vfs.f_bavail * vfs.f_frsize < need) {
        printf("SKIP test_over_2gb: less than 6 GB free under %s\n", dir);
        sg_free(dir);
        return;
    }
    /* Two 1.2 GB tensors held inline in memory: the file would pass 2 GB, so
     * the default save moves them to external data by itself. */
    sg_model *m = sg_model_create();
    sg_model_set_opset(m, "", 13);
    sg_graph *g = m->graph;
    struct sg_diag d = {0};
    const int64_t elems = 300000000; /* 1.2 GB of float32 */
    for (int i = 0; i < 2; i++) {
        char name[8], out[8];
        snprintf(name, sizeof name, "w%d", i);
        snprintf(out, sizeof out, "o%d", i);
        sg_value *v = NULL, *o = NULL;
        ck_assert_ok(sg_graph_add_value(g, name, NULL, &v, &d), &d);
        sg_tensor *t = sg_tensor_create(m, name, SG_DTYPE_FLOAT, &elems, 1);
        sg_blob *b = zero_blob((size_t)elems * 4);
        ((float *)b->data)[elems - 1] = 42.0f + (float)i;
        ck_assert_int_eq(sg_tensor_set_raw(m, t, b->data, b->size, b), SG_OK);
        sg_blob_unref(b);
        ck_assert_int_eq(sg_value_set_initializer(v, t), SG_OK);
        sg_node *n = sg_node_create(g, "Identity", NULL, out, &d);
        sg_node_set_input(n, 0, v);
        ck_assert_ok(sg_graph_add_value(g, out, NULL, &o, &d), &d);
        sg_node_set_output(n, 0, o);
        sg_graph_add_output(g, o);
    }
    ck_verify(m);
    char path[600], data[620];
    snprintf(path, sizeof path, "%s/big.onnx", dir);
    snprintf(data, sizeof data, "%s.data", path);

    struct sg_save_opts inline_opts = {.ext_mode = SG_EXT_INLINE};
    ck_assert_int_eq(sg_model_save(m, path, &inline_opts, &d), SG_ETOOBIG);
    ck_assert_ptr_nonnull(strstr(d.msg, "2 GB"));
    ck_assert_int_ne(access(path, F_OK), 0);
    sg_diag_clear(&d);

    ck_assert_ok(sg_model_save(m, path, NULL, &d), &d);
    struct stat st_model, st_data;
    ck_assert_int_eq(stat(path, &st_model), 0);
    ck_assert_int_eq(stat(data, &st_data), 0);
    ck_assert_int_lt(st_model.st_size, 4096);
    ck_assert_int_ge(st_data.st_size, 2 * elems * 4);
    sg_model_free(m);

    /* It loads back with its data mapped, values intact. */
    sg_model *back = NULL;
    ck_assert_ok(sg_model_load(path, NULL, &back, &d), &d);
    for (int i = 0; i < 2; i++) {
        sg_tensor *t = back->graph->inits[i]->init;
        ck_assert(sg_tensor_is_external(t));
        size_t n;
        const float *f = sg_tensor_data(back, t, &n, &d);
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(n, (size_t)elems * 4);
        ck_assert(f[elems - 1] == 42.0f + (float)i && f[0] == 0.0f);
    }
    sg_model_free(back);
    unlink(path);
    unlink(data);
    rmdir(dir);
    sg_free(dir);
}
END_TEST

Suite *suite_io(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("load");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_load_abs);
    tcase_add_test(tc, test_save_before_commit);
    tcase_add_test(tc, test_buffer_round_trip);
    tcase_add_test(tc, test_codec_matches_protobuf_c);
    suite_add_tcase(s, tc);
    TCase *big = tcase_create("big");
    tcase_set_timeout(big, 600);
    tcase_add_test(big, test_over_2gb);
    suite_add_tcase(s, big);
    return s;
}
