/* check_io.c - load/save: round trips, external data, bad input. */
#include "testutil.h"
#include "sg_io.h"

START_TEST(test_load_abs)
{
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(
        sg_model_load("/usr/share/libonnx-testdata/data/node/test_abs/model.onnx", NULL, &m, &d),
        &d);
    ck_assert_uint_eq(m->graph->n_nodes, 1);
    sg_model_free(m);
}
END_TEST

Suite *suite_io(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_load_abs);
    suite_add_tcase(s, tc);
    return s;
}
