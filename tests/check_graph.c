/*
 * check_graph.c - the IR API: every mutation keeps producers, uses, maps and
 * captures consistent (verified after each step); the verifier catches each
 * broken invariant; toposort is stable and handles shuffled graphs; every
 * allocation failure is a clean error without leaks.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_dims.h"
#include "sg_io.h"
#include "sg_print.h"
#include "strmap.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static sg_value *val(sg_graph *g, const char *name)
{
    sg_value *v = sg_graph_value(g, name);
    if (v)
        return v;
    struct sg_diag d = {0};
    ck_assert_ok(sg_graph_add_value(g, name, NULL, &v, &d), &d);
    return v;
}

/* A node `op` named `name` reading `in` (comma list, "" entries allowed)
 * and writing `out` (comma list). */
static sg_node *node(sg_graph *g, const char *op, const char *name, const char *in, const char *out)
{
    struct sg_diag d = {0};
    sg_node *n = sg_node_create(g, op, NULL, name, &d);
    ck_assert_msg(n != NULL, "%s", d.msg);
    char buf[256];
    const char *lists[2] = {in, out};
    for (int k = 0; k < 2; k++) {
        if (!lists[k] || !*lists[k])
            continue;
        snprintf(buf, sizeof buf, "%s", lists[k]);
        uint32_t slot = 0;
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            sg_value *v = strcmp(tok, "-") == 0 ? NULL : val(g, tok);
            sg_status st = k == 0 ? sg_node_set_input(n, slot, v) : sg_node_set_output(n, slot, v);
            ck_assert_int_eq(st, SG_OK);
            slot++;
        }
    }
    return n;
}

/* x -> Relu(a) -> y1 ; y1 -> Neg(b) -> y2 ; (x, y2) -> Add(c) -> out */
static sg_model *chain_model(void)
{
    sg_model *m = sg_model_create();
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(sg_model_set_opset(m, "", 13), SG_OK);
    sg_graph *g = m->graph;
    ck_assert_int_eq(sg_graph_add_input(g, val(g, "x")), SG_OK);
    node(g, "Relu", "a", "x", "y1");
    node(g, "Neg", "b", "y1", "y2");
    node(g, "Add", "c", "x,y2", "out");
    ck_assert_int_eq(sg_graph_add_output(g, val(g, "out")), SG_OK);
    ck_verify(m);
    return m;
}

static bool has_use(const sg_value *v, const sg_node *n, int32_t index)
{
    for (uint32_t i = 0; i < v->n_uses; i++)
        if (v->uses[i].node == n && v->uses[i].index == index)
            return true;
    return false;
}

/* ------------------------------------------------------------- mutations */

START_TEST(test_build_and_edit)
{
    sg_model *m = chain_model();
    sg_graph *g = m->graph;
    sg_value *x = sg_graph_value(g, "x"), *y1 = sg_graph_value(g, "y1");
    sg_node *a = sg_graph_node(g, "a"), *c = sg_graph_node(g, "c");
    ck_assert_ptr_eq(y1->producer, a);
    ck_assert(has_use(x, a, 0) && has_use(x, c, 0));
    ck_assert_uint_eq(x->n_uses, 2);

    /* set_input moves a use from one value to another. */
    ck_assert_int_eq(sg_node_set_input(c, 0, y1), SG_OK);
    ck_assert(!has_use(x, c, 0) && has_use(y1, c, 0));
    ck_verify(m);

    /* replace_uses moves every reader of x to a new input x2. */
    struct sg_diag d = {0};
    sg_value *y2 = sg_graph_value(g, "y2");
    sg_value *x2 = val(g, "x2");
    ck_assert_int_eq(sg_graph_add_input(g, x2), SG_OK);
    ck_assert_ok(sg_value_replace_uses(x, x2, false, &d), &d);
    ck_assert_uint_eq(x->n_uses, 0);
    ck_assert(has_use(x2, a, 0));
    ck_verify(m);
    ck_assert_ok(sg_value_replace_uses(x2, x, false, &d), &d);

    /* Omitted optional input, append and remove. */
    ck_assert_int_eq(sg_node_set_input(c, 2, NULL), SG_OK);
    ck_assert_uint_eq(c->n_inputs, 3);
    ck_assert_int_eq(sg_node_set_input(c, 2, x), SG_OK);
    ck_assert(has_use(x, c, 2));
    ck_assert_int_eq(sg_node_remove_input(c, 0), SG_OK);
    ck_assert(has_use(x, c, 1) && !has_use(x, c, 2));
    ck_verify(m);

    /* A value with a producer cannot get a second one. */
    sg_node *extra = sg_node_create(g, "Relu", NULL, "extra", &d);
    ck_assert_int_eq(sg_node_set_output(extra, 0, y2), SG_EDUP);
    ck_assert_int_eq(sg_node_set_input(extra, 0, x), SG_OK);
    ck_assert_int_eq(sg_node_set_output(extra, 0, val(g, "extra_out")), SG_OK);
    ck_verify(m);
    ck_assert_ok(sg_node_remove(extra, &d), &d);
    ck_assert_ptr_null(sg_graph_value(g, "extra_out"));
    ck_assert_ptr_null(sg_graph_node(g, "extra"));
    ck_assert(!has_use(x, extra, 0));
    ck_verify(m);

    /* Removing a node whose output is still read fails and changes nothing. */
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_node_remove(a, &d), SG_EINUSE);
    ck_assert_ptr_nonnull(strstr(d.msg, "y1"));
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

/* Many values off the lists at once: order of the rest kept, flags and
 * initializers cleared, the values then removable; others untouched. */
START_TEST(test_unlist_values)
{
    sg_model *m = sg_model_create();
    ck_assert_int_eq(sg_model_set_opset(m, "", 13), SG_OK);
    sg_graph *g = m->graph;
    const char *names[6] = {"a", "b", "c", "d", "e", "f"};
    sg_value *v[6];
    int64_t one = 1;
    for (int i = 0; i < 6; i++) {
        v[i] = val(g, names[i]);
        sg_tensor *t = sg_tensor_create(m, names[i], SG_DTYPE_FLOAT, &one, 1);
        static const float x = 1.0f;
        ck_assert_int_eq(sg_tensor_set_raw(m, t, &x, sizeof x, NULL), SG_OK);
        ck_assert_int_eq(sg_value_set_initializer(v[i], t), SG_OK);
        ck_assert_int_eq(sg_graph_add_value_info(g, v[i]), SG_OK);
        if (i >= 4)
            ck_assert_int_eq(sg_graph_add_input(g, v[i]), SG_OK);
    }
    node(g, "Neg", "n", "c", "y");
    ck_assert_int_eq(sg_graph_add_output(g, val(g, "y")), SG_OK);
    ck_verify(m);
    sg_value *drop[5] = {v[1], NULL, v[3], v[5], v[3]}; /* repeats and NULL are fine */
    sg_graph_unlist_values(g, drop, 5, SG_VALUE_INFO | SG_VALUE_INITIALIZER | SG_VALUE_INPUT);
    const char *want_inits[3] = {"a", "c", "e"};
    ck_assert_uint_eq(g->n_inits, 3);
    ck_assert_uint_eq(g->n_value_info, 3);
    ck_assert_uint_eq(g->n_inputs, 1);
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(g->inits[i]->name, want_inits[i]);
        ck_assert_str_eq(g->value_info[i]->name, want_inits[i]);
    }
    ck_assert_str_eq(g->inputs[0]->name, "e");
    for (int i = 0; i < 6; i++) {
        bool gone = i == 1 || i == 3 || i == 5;
        ck_assert_msg(gone == (v[i]->init == NULL), "%s init", names[i]);
        ck_assert_msg(gone == !(v[i]->flags & (SG_VALUE_INFO | SG_VALUE_INITIALIZER)), "%s flags",
                      names[i]);
        if (gone)
            ck_assert_uint_eq(v[i]->flags, 0);
    }
    ck_verify(m);
    /* Only value_info of a: inits and inputs stay. */
    sg_graph_unlist_values(g, &v[0], 1, SG_VALUE_INFO);
    ck_assert_ptr_nonnull(v[0]->init);
    ck_assert_uint_eq(g->n_value_info, 2);
    for (int i = 1; i < 6; i += 2)
        ck_assert_int_eq(sg_value_remove(v[i]), SG_OK);
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

START_TEST(test_insert_after_and_before)
{
    sg_model *m = chain_model();
    sg_graph *g = m->graph;
    struct sg_diag d = {0};
    sg_node *c = sg_graph_node(g, "c");
    sg_value *out = sg_graph_value(g, "out");

    /* Clip after the graph output: the output keeps its name, now from Clip. */
    sg_node *clip = sg_node_create(g, "Clip", NULL, sg_model_fresh_name(m, "c_clip"), &d);
    ck_assert_ok(sg_node_insert_after_output(c, 0, clip, &d), &d);
    ck_assert_ptr_eq(out->producer, clip);
    ck_assert_ptr_eq(g->outputs[0], out);
    ck_assert_ptr_eq(c->outputs[0], clip->inputs[0]);
    ck_assert_ptr_eq(c->next, clip);
    ck_verify(m);

    /* Cast before input 1 of c. */
    sg_node *cast = sg_node_create(g, "Cast", NULL, sg_model_fresh_name(m, "c_cast"), &d);
    sg_value *y2 = sg_graph_value(g, "y2");
    ck_assert_ok(sg_node_insert_before_input(c, 1, cast, &d), &d);
    ck_assert_ptr_eq(cast->inputs[0], y2);
    ck_assert_ptr_eq(c->inputs[1], cast->outputs[0]);
    ck_assert_ptr_eq(cast->next, c);
    ck_assert(!has_use(y2, c, 1));
    ck_verify(m);

    /* Fresh names never repeat and never clash with existing names. */
    const char *n1 = sg_model_fresh_name(m, "x");
    const char *n2 = sg_model_fresh_name(m, "x");
    ck_assert_str_ne(n1, "x");
    ck_assert_str_ne(n1, n2);
    ck_assert_str_ne(sg_model_fresh_name(m, "c_clip"), "c_clip");

    /* Rename keeps maps and initializer names right. */
    ck_assert_ok(sg_value_rename(y2, "renamed", &d), &d);
    ck_assert_ptr_eq(sg_graph_value(g, "renamed"), y2);
    ck_assert_ptr_null(sg_graph_value(g, "y2"));
    ck_assert_int_eq(sg_value_rename(y2, "x", &d), SG_EDUP);
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

/* A model with an If whose branches read outer values (x, bias). */
static sg_model *if_model(void)
{
    sg_model *m = chain_model();
    sg_graph *g = m->graph;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_graph_add_input(g, val(g, "cond")), SG_OK);
    sg_node *iff = node(g, "If", "iff", "cond", "if_out");
    sg_graph *sub = sg_node_set_attr_graph(iff, "then_branch");
    ck_assert_ptr_nonnull(sub);
    sg_value *cx = sg_graph_resolve(sub, "x", &d);
    sg_value *cy = sg_graph_resolve(sub, "y1", &d);
    ck_assert_ptr_nonnull(cx);
    ck_assert_ptr_eq(cx->outer, sg_graph_value(g, "x"));
    sg_node *add = sg_node_create(sub, "Add", NULL, "sub_add", &d);
    ck_assert_int_eq(sg_node_set_input(add, 0, cx), SG_OK);
    ck_assert_int_eq(sg_node_set_input(add, 1, cy), SG_OK);
    sg_value *so = NULL;
    ck_assert_ok(sg_graph_add_value(sub, "sub_out", NULL, &so, &d), &d);
    ck_assert_int_eq(sg_node_set_output(add, 0, so), SG_OK);
    ck_assert_int_eq(sg_graph_add_output(sub, so), SG_OK);
    ck_verify(m);
    return m;
}

/* Fresh names avoid the names of every graph: the main graph's values and
 * nodes (checked through its own maps), subgraph names, names handed out
 * and not used yet, and names given to new subgraph values later. */
START_TEST(test_fresh_names_scopes)
{
    sg_model *m = if_model();
    sg_graph *g = m->graph;
    struct sg_diag d = {0};
    sg_graph *sub = sg_node_attr(sg_graph_node(g, "iff"), "then_branch")->g;
    const char *taken[] = {"x", "y1", "iff", "sub_add", "sub_out", "if_out"};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        ck_assert_str_ne(sg_model_fresh_name(m, taken[i]), taken[i]);
    /* A node made fresh in the main graph holds its name through the map. */
    sg_node *a = sg_node_create_fresh(g, "Identity", NULL, "ident", &d);
    sg_node *b = sg_node_create_fresh(g, "Identity", NULL, "ident", &d);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(a->name, "ident");
    ck_assert_str_ne(b->name, "ident");
    ck_assert_str_ne(sg_model_fresh_name(m, "ident"), "ident");
    ck_assert_str_ne(sg_model_fresh_name(m, b->name), b->name);
    /* A name added to a subgraph after the set was built is seen too. */
    ck_assert_ok(sg_graph_add_value(sub, "late", NULL, NULL, &d), &d);
    ck_assert_str_ne(sg_model_fresh_name(m, "late"), "late");
    /* Values and nodes are named apart, as ONNX keeps them. */
    sg_value *nv = NULL;
    ck_assert_ok(sg_graph_add_value_fresh(g, "iff", NULL, &nv, &d), &d);
    ck_assert_str_eq(nv->name, "iff");
    sg_node *ny = sg_node_create_fresh(g, "Identity", NULL, "y2", &d);
    ck_assert_str_eq(ny->name, "y2");
    ck_assert_ok(sg_graph_add_value_fresh(g, "y2", NULL, &nv, &d), &d);
    ck_assert_str_ne(nv->name, "y2");
    sg_node *c = sg_node_create_fresh(sub, "Identity", NULL, "sub_ident", &d);
    ck_assert_str_eq(c->name, "sub_ident");
    ck_assert_str_ne(sg_model_fresh_name(m, "sub_ident"), "sub_ident");
    sg_model_free(m);
}
END_TEST

/* The hash of a NUL-terminated name equals the hash of its bytes, for every
 * length around the 8-byte steps, and names one digit apart differ. */
START_TEST(test_strhash)
{
    char buf[40];
    for (size_t len = 0; len < 33; len++) {
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)('a' + (i * 7 + len) % 26);
        buf[len] = '\0';
        ck_assert_uint_eq(sg__strhash(buf), sg__strhash_n(buf, len));
        if (len) {
            uint64_t h = sg__strhash(buf);
            buf[len - 1] ^= 1;
            ck_assert_uint_ne(sg__strhash(buf), h);
        }
    }
    ck_assert_uint_ne(sg__strhash("t1234") & 0xffff, sg__strhash("t1235") & 0xffff);
}
END_TEST

/* The map under churn: growth, deletions that shift entries back, lookups
 * of present and absent keys, reinsertion. */
START_TEST(test_strmap_churn)
{
    enum { N = 6000 };
    static char keys[N][16];
    struct sg__strmap m = {0};
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        ck_assert_int_eq(sg__strmap_put(&m, keys[i], keys[i]), SG_OK);
    }
    ck_assert_uint_eq(m.count, N);
    for (int i = 0; i < N; i += 3)
        ck_assert(sg__strmap_del(&m, keys[i]));
    ck_assert(!sg__strmap_del(&m, keys[0]));
    for (int i = 0; i < N; i++)
        ck_assert_ptr_eq(sg__strmap_get(&m, keys[i]), i % 3 ? keys[i] : NULL);
    for (int i = 0; i < N; i += 3)
        ck_assert_int_eq(sg__strmap_put(&m, keys[i], keys[i]), SG_OK);
    ck_assert_int_eq(sg__strmap_reserve(&m, 4 * N), SG_OK);
    for (int i = 0; i < N; i++)
        ck_assert_ptr_eq(sg__strmap_get(&m, keys[i]), keys[i]);
    ck_assert_ptr_null(sg__strmap_get(&m, "absent"));
    ck_assert_uint_eq(m.count, N);
    sg__strmap_free(&m);
}
END_TEST

/* sg_grow keeps the contents across the switch to huge pages and back. */
START_TEST(test_grow)
{
    size_t cap = 1024;
    uint32_t *a = sg_grow(NULL, 0, cap * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < cap; i++)
        a[i] = (uint32_t)i * 2654435761u;
    int64_t live = sg_alloc_live();
    while (cap < ((size_t)8 << 20) / sizeof *a) { /* 4 KB -> 8 MB */
        uint32_t *b = sg_grow(a, cap * sizeof *a, 2 * cap * sizeof *a);
        ck_assert_ptr_nonnull(b);
        size_t bad = 0; /* one check per size: millions of ck_asserts take seconds */
        for (size_t i = 0; i < cap; i++)
            bad += b[i] != (uint32_t)i * 2654435761u;
        ck_assert_uint_eq(bad, 0);
        for (size_t i = cap; i < 2 * cap; i++)
            b[i] = (uint32_t)i * 2654435761u;
        a = b;
        cap *= 2;
        ck_assert_int_eq(sg_alloc_live(), live); /* one block throughout */
    }
    sg_alloc_fail_at(1);
    ck_assert_ptr_null(sg_grow(a, cap * sizeof *a, 2 * cap * sizeof *a));
    sg_alloc_fail_at(0);
    ck_assert_uint_eq(a[cap - 1], (uint32_t)(cap - 1) * 2654435761u); /* untouched */
    sg_free(a);
}
END_TEST

/* Batch removal: big batches (sorted by slot) and small ones (one by one)
 * leave the map as single deletions would; absent keys, repeats and equal
 * keys at other addresses are fine. */
START_TEST(test_strmap_del_many)
{
    enum { N = 6000 };
    static char keys[N][16], copies[N][16];
    const char *batch[N + 3];
    for (int small = 0; small < 2; small++) {
        struct sg__strmap m = {0};
        for (int i = 0; i < N; i++) {
            snprintf(keys[i], sizeof keys[i], "k%d", i);
            snprintf(copies[i], sizeof copies[i], "k%d", i);
            ck_assert_int_eq(sg__strmap_put(&m, keys[i], keys[i]), SG_OK);
        }
        size_t n = 0, want = 0;
        for (int i = 0; i < N && n < (small ? 300u : (size_t)N); i += 3, want++)
            batch[n++] = i % 2 ? keys[i] : copies[i];
        batch[n++] = "absent";
        batch[n++] = keys[0]; /* again */
        batch[n++] = "k0x";
        ck_assert_uint_eq(sg__strmap_del_many(&m, batch, n), want);
        ck_assert_uint_eq(m.count, N - want);
        for (int i = 0; i < N; i++)
            ck_assert_ptr_eq(sg__strmap_get(&m, keys[i]),
                             i % 3 || (size_t)i / 3 >= want ? keys[i] : NULL);
        sg__strmap_free(&m);
    }
}
END_TEST

/* sg_graph_remove_values: all or nothing, lists kept in order. */
START_TEST(test_remove_values)
{
    enum { N = 3000 };
    sg_model *m = sg_model_create();
    ck_assert_int_eq(sg_model_set_opset(m, "", 13), SG_OK);
    sg_graph *g = m->graph;
    static sg_value *v[N], *drop[N];
    int64_t one = 1;
    static const float x = 1.0f;
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        v[i] = val(g, name);
        sg_tensor *t = sg_tensor_create(m, name, SG_DTYPE_FLOAT, &one, 1);
        ck_assert_int_eq(sg_tensor_set_raw(m, t, &x, sizeof x, NULL), SG_OK);
        ck_assert_int_eq(sg_value_set_initializer(v[i], t), SG_OK);
        if (i % 7 == 0)
            ck_assert_int_eq(sg_graph_add_value_info(g, v[i]), SG_OK);
    }
    node(g, "Neg", "n", "w1", "y");
    ck_assert_int_eq(sg_graph_add_output(g, val(g, "y")), SG_OK);
    sg_value *plain = val(g, "plain"), *vi_only = val(g, "vi_only");
    ck_assert_int_eq(sg_graph_add_value_info(g, vi_only), SG_OK);
    size_t n = 0;
    for (int i = 0; i < N; i++)
        if (i % 2)
            drop[n++] = v[i];
    ck_assert_int_eq(sg_graph_remove_values(g, drop, &n), SG_EINUSE); /* w1 is read */
    ck_assert_uint_eq(g->n_inits, N);
    ck_verify(m);
    n = 0;
    drop[n++] = v[0];
    for (int i = 3; i < N; i += 2)
        drop[n++] = v[i];
    drop[n++] = v[3]; /* a repeat */
    drop[n++] = plain;
    drop[n++] = vi_only;
    size_t count = n;
    ck_assert_int_eq(sg_graph_remove_values(g, drop, &count), SG_OK);
    ck_assert_uint_eq(count, n - 1);
    ck_assert_ptr_eq(drop[0], v[0]);
    ck_assert_ptr_eq(drop[count - 1], vi_only);
    ck_assert_uint_eq(g->n_inits, N - (n - 3));
    ck_assert_ptr_null(sg_graph_value(g, "plain"));
    ck_assert_ptr_null(sg_graph_value(g, "vi_only"));
    ck_verify(m);
    for (int i = 0; i < N; i++)
        if (i == 1 || (i % 2 == 0 && i != 0))
            ck_assert_uint_eq(v[i]->flags,
                              SG_VALUE_INITIALIZER | (i % 7 == 0 ? SG_VALUE_INFO : 0u));
    for (size_t k = 0; k < g->n_inits; k++) {
        char name[16];
        snprintf(name, sizeof name, "w%zu", k == 0 ? (size_t)1 : 2 * k);
        ck_assert_str_eq(g->inits[k]->name, name);
    }
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        bool kept = i == 1 || (i % 2 == 0 && i != 0);
        ck_assert_msg(kept == (sg_graph_value(g, name) != NULL), "%s", name);
    }
    for (size_t k = 0; k < g->n_value_info; k++)
        ck_assert_ptr_nonnull(sg_graph_value(g, g->value_info[k]->name));
    sg_model_free(m);
}
END_TEST

START_TEST(test_captures)
{
    sg_model *m = if_model();
    sg_graph *g = m->graph;
    struct sg_diag d = {0};
    sg_node *iff = sg_graph_node(g, "iff");
    sg_value *x = sg_graph_value(g, "x"), *y1 = sg_graph_value(g, "y1");
    ck_assert(has_use(x, iff, SG_USE_IMPLICIT));
    ck_assert(has_use(y1, iff, SG_USE_IMPLICIT));

    /* Toposort puts the If after Relu (it reads y1 through its branch). */
    sg_node *order[8];
    ck_assert_ok(sg_graph_toposort(g, order, &d), &d);
    int pos_a = -1, pos_if = -1;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (order[i] == sg_graph_node(g, "a"))
            pos_a = (int)i;
        if (order[i] == iff)
            pos_if = (int)i;
    }
    ck_assert_int_lt(pos_a, pos_if);

    /* Replacing y1 by a new input z redirects the capture inside the branch. */
    sg_value *y2 = val(g, "z");
    ck_assert_int_eq(sg_graph_add_input(g, y2), SG_OK);
    ck_assert_ok(sg_value_replace_uses(y1, y2, false, &d), &d);
    sg_graph *sub = sg_node_attr(iff, "then_branch")->g;
    ck_assert_ptr_null(sg_graph_value(sub, "y1"));
    ck_assert_ptr_nonnull(sg_graph_value(sub, "z"));
    ck_assert(!has_use(y1, iff, SG_USE_IMPLICIT));
    ck_assert(has_use(y2, iff, SG_USE_IMPLICIT));
    ck_verify(m);

    /* Renaming an outer value renames its capture. */
    ck_assert_ok(sg_value_rename(x, "x_renamed", &d), &d);
    ck_assert_ptr_nonnull(sg_graph_value(sub, "x_renamed"));
    ck_verify(m);

    /* Removing the If releases its implicit uses. */
    sg_graph_remove_output(g, sg_graph_value(g, "out"));
    ck_assert_ok(sg_node_remove(iff, &d), &d);
    ck_assert(!has_use(x, iff, SG_USE_IMPLICIT));
    ck_assert(!has_use(y2, iff, SG_USE_IMPLICIT));
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

/* -------------------------------------------------------------- verifier */

typedef void (*breaker)(sg_model *m);

static void break_use_list(sg_model *m)
{
    sg_graph_value(m->graph, "x")->n_uses = 0;
}
static void break_producer(sg_model *m)
{
    sg_graph_value(m->graph, "y1")->producer = sg_graph_node(m->graph, "b");
}
static void break_foreign_producer(sg_model *m)
{
    /* x (an input) claims a as its producer; a does not make it. */
    sg_graph_value(m->graph, "x")->producer = sg_graph_node(m->graph, "a");
}
static void break_cycle(sg_model *m)
{
    /* a reads out, which c makes from a's output through b. */
    sg_graph *g = m->graph;
    sg_node_set_input(sg_graph_node(g, "a"), 0, sg_graph_value(g, "out"));
}
static void break_undefined(sg_model *m)
{
    sg_graph *g = m->graph;
    sg_node_set_input(sg_graph_node(g, "a"), 0, val(g, "ghost"));
}
static void break_output(sg_model *m)
{
    sg_graph *g = m->graph;
    sg_graph_add_output(g, val(g, "nothing"));
}
static void break_arity(sg_model *m)
{
    sg_graph *g = m->graph;
    sg_node_set_input(sg_graph_node(g, "a"), 1, sg_graph_value(g, "x"));
}
static void break_list(sg_model *m)
{
    m->graph->n_nodes++;
}
static void break_map(sg_model *m)
{
    sg_graph_value(m->graph, "y2")->name = "not_y2";
}
static void break_double_def(sg_model *m)
{
    sg_graph *g = m->graph;
    sg_graph_add_input(g, sg_graph_value(g, "y2"));
}

START_TEST(test_verifier_catches)
{
    static const struct {
        breaker fn;
        sg_status want;
        const char *word;
    } cases[] = {
        {break_use_list, SG_EINVAL, "x"},     {break_producer, SG_EINVAL, "y1"},
        {break_cycle, SG_ECYCLE, "cycle"},    {break_undefined, SG_EUNDEF, "ghost"},
        {break_output, SG_EUNDEF, "nothing"}, {break_arity, SG_EARITY, "Relu"},
        {break_list, SG_EINVAL, "node"},      {break_map, SG_EINVAL, "y2"},
        {break_double_def, SG_EDUP, "y2"},    {break_foreign_producer, SG_EINVAL, "x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sg_model *m = chain_model();
        cases[i].fn(m);
        struct sg_diag d = {0};
        sg_status st = sg_model_verify(m, &d);
        ck_assert_msg(st == cases[i].want, "case %zu: got %s (%s)", i, sg_status_name(st), d.msg);
        ck_assert_msg(strstr(d.msg, cases[i].word), "case %zu: '%s' not in '%s'", i, cases[i].word,
                      d.msg);
        if (cases[i].fn == break_list)
            m->graph->n_nodes--;
        sg_model_free(m);
    }
}
END_TEST

/* The verifier numbers nodes from a per-model base; whatever marks other
 * code left on the nodes and wherever the base stands (near wrap-around
 * too), a cycle is found and a sound graph passes, verified twice. */
START_TEST(test_verifier_marks)
{
    const uint32_t bases[] = {0, 1u << 31, UINT32_MAX - 3, UINT32_MAX - 1, UINT32_MAX};
    const uint32_t stale[] = {0, 3, 1u << 31, (1u << 31) + 2, UINT32_MAX - 2, UINT32_MAX};
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        for (size_t k = 0; k < sizeof stale / sizeof stale[0]; k++)
            for (int broken = 0; broken < 2; broken++) {
                sg_model *m = chain_model();
                if (broken)
                    break_cycle(m);
                m->mark_base = bases[b];
                for (sg_node *n = m->graph->first; n; n = n->next)
                    n->mark = stale[k];
                struct sg_diag d = {0};
                for (int twice = 0; twice < 2; twice++) {
                    sg_status st = sg_model_verify(m, &d);
                    ck_assert_msg(st == (broken ? SG_ECYCLE : SG_OK),
                                  "base %u, marks %u, broken %d: %s (%s)", bases[b], stale[k],
                                  broken, sg_status_name(st), d.msg);
                }
                sg_model_free(m);
            }
}
END_TEST

/* -------------------------------------------------------------- toposort */

START_TEST(test_toposort_shuffled)
{
    /* A random DAG of 300 nodes: node i reads up to 3 earlier nodes. Shuffle
     * the list, sort, and check every producer precedes its readers. */
    srand(7);
    for (int round = 0; round < 20; round++) {
        sg_model *m = sg_model_create();
        sg_model_set_opset(m, "", 13);
        sg_graph *g = m->graph;
        enum { N = 300 };
        sg_node *nodes[N];
        ck_assert_int_eq(sg_graph_add_input(g, val(g, "in")), SG_OK);
        for (int i = 0; i < N; i++) {
            char name[32], out[32];
            snprintf(name, sizeof name, "n%d", i);
            snprintf(out, sizeof out, "v%d", i);
            nodes[i] = sg_node_create(g, "Sum", NULL, name, NULL);
            int k = i ? 1 + rand() % 3 : 1;
            for (int j = 0; j < k; j++) {
                char src[32];
                if (i)
                    snprintf(src, sizeof src, "v%d", rand() % i);
                else
                    snprintf(src, sizeof src, "in");
                sg_node_set_input(nodes[i], (uint32_t)j, val(g, src));
            }
            sg_node_set_output(nodes[i], 0, val(g, out));
        }
        sg_graph_add_output(g, sg_graph_value(g, "v299"));
        /* Already sorted: the order is the file order exactly. */
        sg_node *order[N];
        struct sg_diag d = {0};
        ck_assert_ok(sg_graph_toposort(g, order, &d), &d);
        for (int i = 0; i < N; i++)
            ck_assert_ptr_eq(order[i], nodes[i]);
        /* Shuffle the list. */
        for (int i = N - 1; i > 0; i--) {
            int j = rand() % (i + 1);
            sg_node *t = nodes[i];
            nodes[i] = nodes[j];
            nodes[j] = t;
        }
        for (int i = 1; i < N; i++)
            sg_node_move_after(nodes[i], nodes[i - 1]);
        ck_assert_ok(sg_graph_sort(g, false, &d), &d);
        ck_verify(m);
        int idx = 0;
        for (sg_node *n = g->first; n; n = n->next)
            n->mark = (uint32_t)idx++;
        for (sg_node *n = g->first; n; n = n->next)
            for (uint32_t k = 0; k < n->n_inputs; k++)
                if (n->inputs[k]->producer)
                    ck_assert_uint_lt(n->inputs[k]->producer->mark, n->mark);
        sg_model_free(m);
    }
}
END_TEST

START_TEST(test_toposort_long_chain)
{
    /* 200,000 nodes in reverse file order: no recursion depth problem. */
    sg_model *m = sg_model_create();
    sg_model_set_opset(m, "", 13);
    sg_graph *g = m->graph;
    enum { N = 200000 };
    ck_assert_int_eq(sg_graph_add_input(g, val(g, "v0")), SG_OK);
    sg_node *prev = NULL;
    for (int i = N; i >= 1; i--) {
        char in[32], out[32];
        snprintf(in, sizeof in, "v%d", i - 1);
        snprintf(out, sizeof out, "v%d", i);
        sg_node *n = sg_node_create(g, "Relu", NULL, NULL, NULL);
        sg_node_set_input(n, 0, val(g, in));
        sg_node_set_output(n, 0, val(g, out));
        if (prev)
            sg_node_move_before(n, prev);
        prev = n;
    }
    sg_graph_add_output(g, sg_graph_value(g, "v200000"));
    struct sg_diag d = {0};
    ck_assert_ok(sg_graph_sort(g, false, &d), &d);
    ck_assert_str_eq(g->first->outputs[0]->name, "v1");
    ck_assert_str_eq(g->last->outputs[0]->name, "v200000");
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

/* ---------------------------------------------------- allocation failures */

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Work that allocates: load a model with subgraphs, edit it, save it. */
static sg_status alloc_workload(const uint8_t *data, size_t len)
{
    sg_model *m = NULL;
    struct sg_diag d = {0};
    sg_status st = sg_model_load_buffer(data, len, NULL, "if.onnx", NULL, &m, &d);
    if (st)
        return st;
    sg_graph *g = m->graph;
    sg_node *n = g->first;
    sg_node *clip = sg_node_create(g, "Identity", NULL, sg_model_fresh_name(m, "ident"), &d);
    if (!clip) {
        st = d.status;
        goto out;
    }
    if ((st = sg_node_insert_after_output(n, 0, clip, &d)))
        goto out;
    if ((st = sg_graph_sort(g, true, &d)))
        goto out;
    uint8_t *buf;
    size_t blen;
    if ((st = sg_model_save_buffer(m, &buf, &blen, &d)))
        goto out;
    sg_free(buf);
out:
    sg_model_free(m);
    return st;
}

START_TEST(test_alloc_failures)
{
    size_t len;
    uint8_t *data = read_file("/usr/share/libonnx-testdata/data/node/test_if/model.onnx", &len);
    int64_t base = sg_alloc_live();
    uint64_t n;
    for (n = 1;; n++) {
        sg_alloc_fail_at(n);
        sg_status st = alloc_workload(data, len);
        uint64_t made = sg_alloc_fail_at(0);
        ck_assert_msg(sg_alloc_live() == base, "leak after failing allocation %llu: %lld live",
                      (unsigned long long)n, (long long)(sg_alloc_live() - base));
        if (st == SG_OK) {
            ck_assert_uint_lt(made, n); /* succeeded because it needed fewer than n */
            break;
        }
        ck_assert_msg(st == SG_ENOMEM || st == SG_EPARSE, "allocation %llu: %s",
                      (unsigned long long)n, sg_status_name(st));
    }
    ck_assert_uint_gt(n, 10);
    free(data);
}
END_TEST

/* x -> Cast(to=int32) -> a -> Less(a, a) -> b -> Where(b, x, x) -> y */
static sg_model *small_model(void)
{
    struct sg_diag d = {0};
    sg_model *m = sg_model_create();
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    sg_graph *g = m->graph;
    sg_value *x, *a, *b, *y;
    int64_t dims[1] = {2};
    ck_assert_ok(sg_graph_add_value(g, "x", sg_type_tensor(m, SG_DTYPE_FLOAT, dims, 1), &x, &d),
                 &d);
    ck_assert_ok(sg_graph_add_input(g, x), &d);
    ck_assert_ok(sg_graph_add_value(g, "a", NULL, &a, &d), &d);
    ck_assert_ok(sg_graph_add_value(g, "b", NULL, &b, &d), &d);
    ck_assert_ok(sg_graph_add_value(g, "y", NULL, &y, &d), &d);
    sg_node *cast = sg_node_create(g, "Cast", NULL, "cast", &d);
    sg_node *less = sg_node_create(g, "Less", NULL, "less", &d);
    sg_node *where = sg_node_create(g, "Where", NULL, "where", &d);
    ck_assert_ok(sg_node_set_attr_int(cast, "to", SG_DTYPE_INT32), &d);
    ck_assert_ok(sg_node_set_input(cast, 0, x), &d);
    ck_assert_ok(sg_node_set_output(cast, 0, a), &d);
    ck_assert_ok(sg_node_set_input(less, 0, a), &d);
    ck_assert_ok(sg_node_set_input(less, 1, a), &d);
    ck_assert_ok(sg_node_set_output(less, 0, b), &d);
    ck_assert_ok(sg_node_set_input(where, 0, b), &d);
    ck_assert_ok(sg_node_set_input(where, 1, x), &d);
    ck_assert_ok(sg_node_set_input(where, 2, x), &d);
    ck_assert_ok(sg_node_set_output(where, 0, y), &d);
    ck_assert_ok(sg_graph_add_output(g, y), &d);
    ck_verify(m);
    return m;
}

START_TEST(test_infer_dtypes)
{
    sg_model *m = small_model();
    struct sg_diag d = {0};
    sg_graph *g = m->graph;
    ck_assert_int_eq(sg_value_dtype(sg_graph_value(g, "a")), 0);
    ck_assert_ok(sg_graph_infer_dtypes(g, true, &d), &d);
    ck_assert_int_eq(sg_value_dtype(sg_graph_value(g, "a")), SG_DTYPE_INT32);
    ck_assert_int_eq(sg_value_dtype(sg_graph_value(g, "b")), SG_DTYPE_BOOL);
    ck_assert_int_eq(sg_value_dtype(sg_graph_value(g, "y")), SG_DTYPE_FLOAT);
    /* Inferred types are not listed: the file would not change. */
    ck_assert_uint_eq(g->n_value_info, 0);
    sg_model_free(m);
}
END_TEST

/* The resolver types exactly as the whole-graph inference does: every value
 * of every backend node-test model (If/Loop/Scan ones through the whole
 * path) and of the test models, asked for one by one in reverse order. */
START_TEST(test_resolve_matches_inference)
{
    char pattern[2][512] = {"/usr/share/libonnx-testdata/data/node/*/model.onnx", ""};
    snprintf(pattern[1], sizeof pattern[1], "%s", test_src_path("models/*.onnx"));
    size_t models = 0, values = 0;
    for (int k = 0; k < 2; k++) {
        glob_t gl;
        if (glob(pattern[k], 0, NULL, &gl) != 0)
            continue;
        for (size_t f = 0; f < gl.gl_pathc; f++) {
            struct sg_diag d = {0};
            sg_model *a = NULL, *b = NULL;
            if (sg_model_load(gl.gl_pathv[f], NULL, &a, &d) ||
                sg_model_load(gl.gl_pathv[f], NULL, &b, &d)) {
                sg_model_free(a);
                continue; /* the bad-input models */
            }
            ck_assert_ok(sg_graph_infer_dtypes(a->graph, true, &d), &d);
            sg_dtype_resolver r;
            sg_dtype_resolver_init(&r, b);
            for (sg_node *n = b->graph->last; n; n = n->prev)
                for (uint32_t i = 0; i < n->n_outputs; i++) {
                    sg_value *v = n->outputs[i];
                    if (!v)
                        continue;
                    int32_t got;
                    ck_assert_ok(sg_dtype_resolve(&r, v, &got, &d), &d);
                    int32_t want = sg_value_dtype(sg_graph_value(a->graph, v->name));
                    ck_assert_msg(got == want, "%s: '%s' resolved to %d, inferred %d",
                                  gl.gl_pathv[f], v->name, got, want);
                    values++;
                }
            models++;
            sg_model_free(a);
            sg_model_free(b);
        }
        globfree(&gl);
    }
    ck_assert_uint_gt(models, 900);
    ck_assert_uint_gt(values, 2000);
}
END_TEST

/* Reads that reach a value still waiting lower on the stack (a diamond,
 * in a list out of order) are resolved first; a chain whose head cannot be
 * typed costs one walk however many of its values are asked for. */
START_TEST(test_resolve_order_and_cost)
{
    struct sg_diag d = {0};
    sg_model *m = sg_model_create();
    ck_assert_ok(sg_model_set_opset(m, "", 13), &d);
    sg_graph *g = m->graph;
    int64_t dims[1] = {2};
    sg_value *x;
    ck_assert_ok(sg_graph_add_value(g, "x", sg_type_tensor(m, SG_DTYPE_FLOAT, dims, 1), &x, &d),
                 &d);
    ck_assert_ok(sg_graph_add_input(g, x), &d);
    node(g, "Add", "add", "b,c", "a");
    node(g, "Relu", "relu", "b", "c");
    sg_node *cast = node(g, "Cast", "cast", "x", "b");
    ck_assert_ok(sg_node_set_attr_int(cast, "to", SG_DTYPE_FLOAT16), &d);
    sg_dtype_resolver r;
    sg_dtype_resolver_init(&r, m);
    int32_t dt;
    ck_assert_ok(sg_dtype_resolve(&r, sg_graph_value(g, "a"), &dt, &d), &d);
    ck_assert_int_eq(dt, SG_DTYPE_FLOAT16);
    ck_assert_int_eq(sg_value_dtype(sg_graph_value(g, "c")), SG_DTYPE_FLOAT16);

    /* 20,000 nodes under an op of an unknown domain: nothing can be typed. */
    sg_node *head = sg_node_create(g, "Mystery", "com.example", "head", &d);
    ck_assert_ok(sg_node_set_input(head, 0, x), &d);
    ck_assert_ok(sg_node_set_output(head, 0, val(g, "h0")), &d);
    char in[32], out[32], name[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(in, sizeof in, "h%d", i);
        snprintf(out, sizeof out, "h%d", i + 1);
        snprintf(name, sizeof name, "r%d", i);
        node(g, "Relu", name, in, out);
    }
    sg_dtype_resolver_init(&r, m);
    for (int i = 20000; i >= 0; i -= 7) {
        snprintf(out, sizeof out, "h%d", i);
        ck_assert_ok(sg_dtype_resolve(&r, sg_graph_value(g, out), &dt, &d), &d);
        ck_assert_int_eq(dt, 0);
    }
    sg_model_free(m);
}
END_TEST

START_TEST(test_renames)
{
    sg_model *m = small_model();
    struct sg_diag d = {0};
    sg_graph *g = m->graph;
    sg_node *cast = sg_graph_node(g, "cast");
    ck_assert_int_eq(sg_node_rename(cast, "less", &d), SG_EDUP);
    sg_diag_clear(&d);
    ck_assert_ok(sg_node_rename(cast, "to_int", &d), &d);
    ck_assert_ptr_eq(sg_graph_node(g, "to_int"), cast);
    ck_assert_ptr_null(sg_graph_node(g, "cast"));
    ck_assert_int_eq(sg_node_rename(cast, "", &d), SG_EINVAL);
    sg_diag_clear(&d);
    sg_value *a = sg_graph_value(g, "a");
    ck_assert_ok(sg_value_rename_fresh(a, "b", &d), &d);
    ck_assert_str_ne(a->name, "b");
    ck_assert_ptr_eq(sg_graph_value(g, a->name), a);
    /* A fresh name is never handed out again. */
    const char *f = sg_model_fresh_name(m, a->name);
    ck_assert_str_ne(f, a->name);
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

START_TEST(test_print)
{
    sg_model *m = small_model();
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(sg_model_print_text(m, f), SG_OK);
    fclose(f);
    const char *want = "model opsets=ai.onnx:13\n"
                       "graph \n"
                       "  input x: float32[2]\n"
                       "  node cast: Cast(x) -> (a)\n"
                       "      to = 6\n"
                       "  node less: Less(a, a) -> (b)\n"
                       "  node where: Where(b, x, x) -> (y)\n"
                       "  output y: ?\n";
    ck_assert_str_eq(text, want);
    free(text);
    sg_model_free(m);
}
END_TEST

/* Names from a model may hold any bytes: diagnostics stay one line of
 * valid UTF-8, with the odd bytes written as \xNN, in set and prefix. */
/* Checked dim arithmetic: exact at the int64 edges, false past them. */
START_TEST(test_dims_checked)
{
    int64_t r;
    ck_assert(sg_dim_mul(INT64_MAX / 2, 2, &r) && r == INT64_MAX - 1);
    ck_assert(!sg_dim_mul(INT64_MAX / 2 + 1, 2, &r));
    ck_assert(!sg_dim_add(INT64_MAX, 1, &r));
    ck_assert(!sg_dim_sub(INT64_MIN, 1, &r));
    const int64_t big[] = {(int64_t)1 << 62, 4}, zero[] = {(int64_t)1 << 62, 0, 1 << 30, 1 << 30};
    const int64_t neg[] = {3, -1};
    ck_assert(!sg_dims_numel(big, 2, &r));
    ck_assert(sg_dims_numel(zero, 4, &r) && r == 0);
    ck_assert(!sg_dims_numel(neg, 2, &r));
    ck_assert(sg_dims_numel(NULL, 0, &r) && r == 1);
    /* numpy's rule: the non-zero dims and the element size must fit. */
    const int64_t empty_big[] = {0, (int64_t)1 << 62}, ok[] = {0, (int64_t)1 << 60, 7};
    ck_assert(!sg_dims_extent(empty_big, 2, 4, &r));
    ck_assert(sg_dims_extent(empty_big, 2, 1, &r) && r == 0);
    ck_assert(sg_dims_extent(ok, 3, 1, &r) && r == 0);
    ck_assert(!sg_dims_extent(ok, 3, 2, &r));
    ck_assert(!sg_dims_extent(zero, 4, 1, &r));
    ck_assert(!sg_dims_extent(neg, 2, 1, &r));
    ck_assert(sg_dims_extent(big, 1, 1, &r) && r == (int64_t)1 << 62);
    ck_assert(sg_dims_extent(NULL, 0, 8, &r) && r == 1);
    const int64_t edge[] = {(int64_t)1 << 31, ((int64_t)1 << 31) - 1};
    ck_assert(sg_dims_extent(edge, 2, 2, &r) && r == ((int64_t)1 << 62) - ((int64_t)1 << 31));
    size_t b;
    ck_assert(!sg_dims_nbytes(INT64_MAX, 8, &b));
    ck_assert(sg_dims_nbytes(10, 4, &b) && b == 40);
    /* in 5, kernel 3, stride 2, pads 1/1: (5 + 2 - 3) / 2 + 1 = 3 */
    ck_assert(sg_dim_window(5, 3, 2, 1, 1, 1, false, &r) && r == 3);
    ck_assert(sg_dim_window(6, 3, 2, 1, 0, 0, true, &r) && r == 3);
    ck_assert(!sg_dim_window(2, 3, 1, 1, 0, 0, false, &r)); /* too big */
    ck_assert(!sg_dim_window(5, 3, 1, 1, (int64_t)1 << 62, (int64_t)1 << 62, false, &r));
    ck_assert(!sg_dim_window(5, 3, 0, 1, 0, 0, false, &r));
    ck_assert(!sg_dim_window(5, (int64_t)1 << 62, 1, 4, 0, 0, false, &r));
}
END_TEST

START_TEST(test_diag_printable)
{
    struct sg_diag d = {0};
    sg_diag_set(&d, SG_EPARSE, "node '%s' and '%s'", "a\nb\x01", "caf\xc3\xa9 \xa0\xff!");
    ck_assert_str_eq(d.msg, "node 'a\\x0ab\\x01' and 'caf\xc3\xa9 \\xa0\\xff!'");
    sg_diag_prefix(&d, "file '%s'", "x\ty");
    ck_assert_str_eq(d.msg, "file 'x\\x09y': node 'a\\x0ab\\x01' and 'caf\xc3\xa9 \\xa0\\xff!'");
    /* Cut to fit, never in the middle of an escape. */
    char big[SG_DIAG_MAX + 8];
    memset(big, 0x01, sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sg_diag_clear(&d);
    sg_diag_set(&d, SG_EPARSE, "%s", big);
    size_t len = strlen(d.msg);
    ck_assert_uint_lt(len, SG_DIAG_MAX);
    ck_assert_uint_eq(len % 4, 0);
    ck_assert_str_eq(d.msg + len - 4, "\\x01");
}
END_TEST

Suite *suite_graph(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_build_and_edit);
    tcase_add_test(tc, test_insert_after_and_before);
    tcase_add_test(tc, test_unlist_values);
    tcase_add_test(tc, test_captures);
    tcase_add_test(tc, test_fresh_names_scopes);
    tcase_add_test(tc, test_strhash);
    tcase_add_test(tc, test_strmap_churn);
    tcase_add_test(tc, test_strmap_del_many);
    tcase_add_test(tc, test_grow);
    tcase_add_test(tc, test_remove_values);
    tcase_add_test(tc, test_verifier_catches);
    tcase_add_test(tc, test_verifier_marks);
    tcase_add_test(tc, test_toposort_shuffled);
    tcase_add_test(tc, test_toposort_long_chain);
    tcase_add_test(tc, test_alloc_failures);
    tcase_add_test(tc, test_infer_dtypes);
    tcase_add_test(tc, test_resolve_matches_inference);
    tcase_add_test(tc, test_resolve_order_and_cost);
    tcase_add_test(tc, test_renames);
    tcase_add_test(tc, test_print);
    tcase_add_test(tc, test_diag_printable);
    tcase_add_test(tc, test_dims_checked);
    suite_add_tcase(s, tc);
    return s;
}
