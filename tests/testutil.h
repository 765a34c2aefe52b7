/*
 * testutil.h - helpers shared by the Check suites.
 */
#ifndef SG_TESTUTIL_H
#define SG_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include "sg_ir.h"

Suite *suite_graph(void);
Suite *suite_dtypes(void);
Suite *suite_io(void);
Suite *suite_kernels_seq(void);
Suite *suite_tensorfile(void);
Suite *suite_files(void);
Suite *suite_passes(void);
Suite *suite_pass_numerics(void);
Suite *suite_json(void);
Suite *suite_fusion(void);
Suite *suite_atc(void);
Suite *suite_compare(void);
Suite *suite_runtime(void);
Suite *suite_kernels_nn(void);
Suite *suite_mock(void);
Suite *suite_verify(void);

/* Test cases of a suite kept in a file of their own. */
TCase *tcase_blas(void); /* runtime: check_blas.c */

/* Assert a status is SG_OK, printing the diagnostic when it is not. */
#define ck_assert_ok(expr, diag)                                                                   \
    do {                                                                                           \
        sg_status st_ = (expr);                                                                    \
        ck_assert_msg(st_ == SG_OK, "%s failed: %s (%s)", #expr, sg_status_name(st_),              \
                      (diag)->msg);                                                                \
    } while (0)

/* Verify the model and fail the test with the diagnostic if broken. */
void ck_verify(sg_model *m);

/* A fresh empty directory under the build tree for one test; sg_free'd by caller. */
char *test_tmpdir(const char *tag);

/* Path of a file under the source tree. Static buffer. */
const char *test_src_path(const char *rel);

#endif
