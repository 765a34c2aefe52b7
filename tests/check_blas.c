/*
 * check_blas.c - OpenBLAS loaded on first use (runtime/blas.c): loading,
 * loading from two threads at once, and products through the wrappers.
 * Part of the runtime suite. Check runs each test in a fresh child
 * process, so every test starts with the library not loaded yet (unless
 * CK_FORK=no).
 */
#include "testutil.h"
#include "sg_blas.h"

#include <pthread.h>
#include <string.h>

START_TEST(test_blas_load)
{
    struct sg_diag d = {0};
    ck_assert_ok(sg_blas_load(&d), &d);
    ck_assert_ok(sg_blas_load(&d), &d); /* again: a flag check */
    ck_assert_int_ge(sg_blas_threads(), 1);
    ck_assert_int_gt((int)strlen(sg_blas_corename()), 0);
    sg_blas_set_threads(1);
    ck_assert_int_eq(sg_blas_threads(), 1);
}
END_TEST

struct racer {
    pthread_barrier_t *start;
    sg_status st;
    struct sg_diag d;
};

static void *race_load(void *arg)
{
    struct racer *r = arg;
    pthread_barrier_wait(r->start);
    r->st = sg_blas_load(&r->d);
    return NULL;
}

/* Two threads load at once (optimize -j 2 folding constants in both
 * workers); both succeed and the functions work afterwards. */
START_TEST(test_blas_load_two_threads)
{
    pthread_barrier_t start;
    ck_assert_int_eq(pthread_barrier_init(&start, NULL, 2), 0);
    struct racer r[2] = {{&start, SG_EINVAL, {0}}, {&start, SG_EINVAL, {0}}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race_load, &r[i]), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_ok(r[i].st, &r[i].d);
    }
    pthread_barrier_destroy(&start);
    ck_assert_int_ge(sg_blas_threads(), 1);
}
END_TEST

/* A 2x3 by 3x2 product, plain and with A transposed, in float and double,
 * and a GEMV: small integers, so the results are exact. The wrappers load
 * the library themselves (no sg_blas_load first). */
START_TEST(test_blas_products)
{
    const float a[6] = {1, 2, 3, 4, 5, 6};    /* 2x3 */
    const float at[6] = {1, 4, 2, 5, 3, 6};   /* the same, stored 3x2 */
    const float b[6] = {7, 8, 9, 10, 11, 12}; /* 3x2 */
    const float want[4] = {58, 64, 139, 154}; /* a b */
    float c[4] = {1, 1, 1, 1};
    sg_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1.0f, a, 3, b, 2, 0.0f, c, 2);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(c[i], want[i]);
    /* beta 1 accumulates: c = 2 a b */
    sg_blas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 2, 2, 3, 1.0f, at, 2, b, 2, 1.0f, c, 2);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(c[i], 2 * want[i]);

    const double ad[6] = {1, 2, 3, 4, 5, 6}, bd[6] = {7, 8, 9, 10, 11, 12};
    double cd[4];
    sg_blas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 0.5, ad, 3, bd, 2, 0.0, cd,
                  2);
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq(cd[i], 0.5 * want[i]);

    const float x[3] = {1, -1, 2};
    float y[2] = {0, 0};
    sg_blas_sgemv(CblasRowMajor, CblasNoTrans, 2, 3, 1.0f, a, 3, x, 1, 0.0f, y, 1);
    ck_assert_float_eq(y[0], 1 - 2 + 6);
    ck_assert_float_eq(y[1], 4 - 5 + 12);
}
END_TEST

TCase *tcase_blas(void)
{
    TCase *tc = tcase_create("blas");
    tcase_add_test(tc, test_blas_load);
    tcase_add_test(tc, test_blas_load_two_threads);
    tcase_add_test(tc, test_blas_products);
    return tc;
}
