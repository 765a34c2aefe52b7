/* check_graph.c - the IR API: mutations keep every invariant. */
#include "testutil.h"

START_TEST(test_create)
{
    sg_model *m = sg_model_create();
    ck_assert_ptr_nonnull(m);
    ck_verify(m);
    sg_model_free(m);
}
END_TEST

Suite *suite_graph(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, test_create);
    suite_add_tcase(s, tc);
    return s;
}
