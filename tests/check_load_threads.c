/*
 * check_load_threads.c - loading with sg_load_opts.threads = 2, where a
 * helper thread parses the last part of a big graph's nodes: the model must
 * be the one a single thread makes, byte for byte once saved, and errors
 * must be the ones a single thread reports, whichever thread meets them.
 * Part of the io suite. The models are written here as protobuf bytes, so
 * that nodes can be broken in ways the IR would never build.
 */
#include "testutil.h"
#include "sg_io.h"
#include "decode_impl.h"
#include "sg_alloc.h"
#include "sg_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough nodes for the second thread (decode.c: PAR_MIN_NODES), and node
 * numbers on each side of where its part starts (30% of them in). */
#define N_NODES 20000
#define IN_MAIN_PART 100
#define IN_HELPER_PART 15000

struct buf {
    uint8_t *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void varint(struct buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[k] |= 0x80;
        k++;
    } while (v);
    put(b, t, k);
}

static void field_bytes(struct buf *b, uint32_t field, const void *p, size_t n)
{
    varint(b, (uint64_t)field << 3 | 2);
    varint(b, n);
    put(b, p, n);
}

static void field_str(struct buf *b, uint32_t field, const char *s)
{
    field_bytes(b, field, s, strlen(s));
}

static void field_msg(struct buf *b, uint32_t field, struct buf *sub)
{
    field_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    *sub = (struct buf){0};
}

static void field_varint(struct buf *b, uint32_t field, uint64_t v)
{
    varint(b, (uint64_t)field << 3);
    varint(b, v);
}

/* What node `special` gets instead of being a plain link of the chain. */
enum twist {
    PLAIN,
    TENSOR_ATTR, /* a tensor attribute: the helper leaves it to the main thread */
    GRAPH_ATTR,  /* a graph attribute: likewise, and it adds a subgraph */
    NUL_NAME,    /* an input name holding a NUL byte: a parse error */
    DUP_OUTPUT,  /* makes t5 again: a binding error */
    DUP_THEN_BAD /* makes t5 again, then an attribute that cannot be read */
};

static void add_attr(struct buf *node, enum twist t)
{
    struct buf attr = {0}, inner = {0};
    if (t == TENSOR_ATTR) {
        field_str(&attr, 1, "value");
        field_varint(&attr, 20, 4); /* TENSOR */
        field_varint(&inner, 1, 1); /* dims */
        field_varint(&inner, 2, 1); /* float */
        const uint8_t one[4] = {0, 0, 0x80, 0x3f};
        field_bytes(&inner, 9, one, 4); /* raw_data */
        field_msg(&attr, 5, &inner);
    } else if (t == GRAPH_ATTR) {
        field_str(&attr, 1, "body");
        field_varint(&attr, 20, 5); /* GRAPH */
        field_str(&inner, 2, "sub");
        field_msg(&attr, 6, &inner);
    } else {
        field_str(&attr, 1, "alpha");
        const uint8_t bad[2] = {0x0f, 0x00}; /* field 1, wire type 7: no such type */
        put(&attr, bad, sizeof bad);
    }
    field_msg(node, 5, &attr);
}

/* A chain t0 -> n0 -> t1 -> ... -> tN of Relu nodes, node `at` twisted (twice
 * when `at2` is given, with `t2`). */
static struct buf chain_model(size_t at, enum twist t, size_t at2, enum twist t2)
{
    struct buf graph = {0}, node = {0}, vi = {0}, type = {0}, tensor = {0}, model = {0};
    char name[64];
    for (size_t i = 0; i < N_NODES; i++) {
        enum twist tw = i == at ? t : i == at2 ? t2 : PLAIN;
        snprintf(name, sizeof name, "t%zu", i);
        if (tw == NUL_NAME)
            field_bytes(&node, 1, "t\0x", 3);
        else
            field_str(&node, 1, name);
        snprintf(name, sizeof name, "t%zu", tw == DUP_OUTPUT || tw == DUP_THEN_BAD ? 5 : i + 1);
        field_str(&node, 2, name);
        snprintf(name, sizeof name, "n%zu", i);
        field_str(&node, 3, name);
        field_str(&node, 4, "Relu");
        if (tw == TENSOR_ATTR || tw == GRAPH_ATTR || tw == DUP_THEN_BAD)
            add_attr(&node, tw);
        field_msg(&graph, 1, &node);
    }
    field_str(&graph, 2, "chain");
    field_varint(&tensor, 1, 1); /* elem_type float */
    field_msg(&type, 1, &tensor);
    field_str(&vi, 1, "t0");
    field_msg(&vi, 2, &type);
    field_msg(&graph, 11, &vi);
    snprintf(name, sizeof name, "t%d", N_NODES);
    field_str(&vi, 1, name);
    field_msg(&graph, 12, &vi);
    field_varint(&model, 1, 8); /* ir_version */
    struct buf opset = {0};
    field_str(&opset, 1, "");
    field_varint(&opset, 2, 13);
    field_msg(&model, 8, &opset);
    field_msg(&model, 7, &graph);
    return model;
}

/* Load bytes with `threads`: the status, the message and (when it loads)
 * the model saved again. */
struct outcome {
    sg_status st;
    struct sg_diag d;
    uint8_t *saved;
    size_t n_saved;
    bool has_n_last;
};

static struct outcome load(const struct buf *b, int threads)
{
    struct outcome o = {0};
    struct sg_load_opts opts = {.threads = threads};
    sg_model *m = NULL;
    o.st = sg_model_load_buffer(b->p, b->n, NULL, "chain", &opts, &m, &o.d);
    if (o.st)
        return o;
    struct sg_diag d = {0};
    ck_assert_ok(sg_model_verify(m, &d), &d);
    ck_assert_ok(sg_model_save_buffer(m, &o.saved, &o.n_saved, &d), &d);
    /* The node-name index was built as the nodes came, on both threads. */
    o.has_n_last = sg_graph_node(m->graph, "n19999") != NULL && sg_graph_node(m->graph, "n0");
    sg_model_free(m);
    return o;
}

static void check_same(size_t at, enum twist t, size_t at2, enum twist t2, bool loads)
{
    struct buf b = chain_model(at, t, at2, t2);
    unsigned long helpers = sg__decode_helpers;
    struct outcome one = load(&b, 1);
    ck_assert_uint_eq(sg__decode_helpers, helpers); /* one thread: none */
    struct outcome two = load(&b, 2);
    ck_assert_uint_eq(sg__decode_helpers, helpers + 1);
    ck_assert_int_eq(two.st, one.st);
    ck_assert_str_eq(two.d.msg, one.d.msg);
    ck_assert_int_eq(one.st == SG_OK, loads);
    if (loads) {
        ck_assert_uint_eq(two.n_saved, one.n_saved);
        ck_assert(memcmp(two.saved, one.saved, one.n_saved) == 0);
        ck_assert(one.has_n_last && two.has_n_last);
    }
    sg_free(one.saved);
    sg_free(two.saved);
    free(b.p);
}

START_TEST(test_threads_plain)
{
    check_same(N_NODES, PLAIN, N_NODES, PLAIN, true);
}
END_TEST

START_TEST(test_threads_tensor_attr_in_helper_part)
{
    check_same(IN_HELPER_PART, TENSOR_ATTR, N_NODES, PLAIN, true);
}
END_TEST

START_TEST(test_threads_graph_attr_in_helper_part)
{
    check_same(IN_HELPER_PART, GRAPH_ATTR, N_NODES, PLAIN, true);
}
END_TEST

START_TEST(test_threads_parse_error_in_helper_part)
{
    check_same(IN_HELPER_PART, NUL_NAME, N_NODES, PLAIN, false);
}
END_TEST

START_TEST(test_threads_parse_error_in_main_part)
{
    /* The helper is still parsing when the main thread fails: joined, and
     * nothing it made leaks (ASan). */
    check_same(IN_MAIN_PART, NUL_NAME, N_NODES, PLAIN, false);
}
END_TEST

START_TEST(test_threads_earlier_binding_error_wins)
{
    /* A duplicate output before a node the helper cannot parse: the
     * duplicate is reported, as one thread reading in order would. */
    check_same(IN_HELPER_PART - 3000, DUP_OUTPUT, IN_HELPER_PART, NUL_NAME, false);
}
END_TEST

START_TEST(test_threads_binding_error_before_parse_error_in_one_node)
{
    /* In one node: an output made twice, then an unreadable attribute. */
    check_same(IN_HELPER_PART, DUP_THEN_BAD, N_NODES, PLAIN, false);
}
END_TEST

START_TEST(test_threads_error_messages_name_the_node)
{
    struct buf b = chain_model(IN_HELPER_PART, NUL_NAME, N_NODES, PLAIN);
    struct outcome two = load(&b, 2);
    ck_assert_int_eq(two.st, SG_EPARSE);
    ck_assert_msg(strstr(two.d.msg, "node #15000") && strstr(two.d.msg, "NUL"), "%s", two.d.msg);
    free(b.p);
}
END_TEST

TCase *tcase_load_threads(void)
{
    TCase *tc = tcase_create("load_threads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_threads_plain);
    tcase_add_test(tc, test_threads_tensor_attr_in_helper_part);
    tcase_add_test(tc, test_threads_graph_attr_in_helper_part);
    tcase_add_test(tc, test_threads_parse_error_in_helper_part);
    tcase_add_test(tc, test_threads_parse_error_in_main_part);
    tcase_add_test(tc, test_threads_earlier_binding_error_wins);
    tcase_add_test(tc, test_threads_binding_error_before_parse_error_in_one_node);
    tcase_add_test(tc, test_threads_error_messages_name_the_node);
    return tc;
}
