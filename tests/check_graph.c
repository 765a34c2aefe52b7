/* check_graph.c - the IR API: mutations keep every invariant. */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_create)
{
    sg_model *m = sg_model_create();
    ck_assert_ptr_nonnull(m);
    ck_verify(m);
    sg_model_free(m);
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

Suite *suite_graph(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, test_create);
    tcase_add_test(tc, test_infer_dtypes);
    tcase_add_test(tc, test_renames);
    tcase_add_test(tc, test_print);
    suite_add_tcase(s, tc);
    return s;
}
