/*
 * sg_blas.h - OpenBLAS, loaded on first use.
 *
 * surgeon does not link OpenBLAS: loading it costs every process about 2 ms
 * and starts its worker threads, though most commands (inspect, optimize
 * without fold-constants, ...) never multiply a matrix. runtime/blas.c
 * opens it with dlopen the first time it is needed and resolves the few
 * functions the runtime calls.
 * <cblas.h> is included for its enums and types only: no code may call the
 * cblas/openblas functions it declares, since nothing defines them at link
 * time (a call fails to link).
 *
 * Contract
 *   sg_blas_load() loads the library once per process (thread-safe; later
 *   calls, from any thread, only read a flag) and reports failure in diag.
 *   A runtime session calls it when it is created (sg_rt_create,
 *   sg_rt_run_node), so a machine without OpenBLAS gets a clean error there.
 *   The wrappers below take the parameters of the cblas/openblas function
 *   they are named after and make sure the library is loaded first. When
 *   loading fails inside a wrapper, which can only happen when a kernel
 *   runs outside a runtime session, the wrapper prints the error to stderr
 *   and calls abort(): the wrappers have no way to report an error, and a
 *   kernel that silently skipped its product would compute wrong numbers.
 *
 * OpenBLAS reads OPENBLAS_NUM_THREADS and OPENBLAS_CORETYPE from the
 * environment when it is loaded, so setting them before the first session
 * is enough (surgeon/main.c does so at the top of main).
 */
#ifndef SG_BLAS_H
#define SG_BLAS_H

#include "sg_status.h"

#include <cblas.h>

/* Load OpenBLAS and resolve the functions below, once. SG_ENOTFOUND when
 * no candidate library loads or one lacks a function; diag then names each
 * library tried and what the dynamic loader said. A failure is final: later
 * calls report the same error without trying again. */
sg_status sg_blas_load(struct sg_diag *diag);

/* cblas_sgemm, cblas_dgemm and cblas_sgemv. */
void sg_blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                   blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                   const float *b, blasint ldb, float beta, float *c, blasint ldc);
void sg_blas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                   blasint m, blasint n, blasint k, double alpha, const double *a, blasint lda,
                   const double *b, blasint ldb, double beta, double *c, blasint ldc);
void sg_blas_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans, blasint m, blasint n,
                   float alpha, const float *a, blasint lda, const float *x, blasint incx,
                   float beta, float *y, blasint incy);

/* openblas_set_num_threads and openblas_get_num_threads: the number of
 * threads OpenBLAS uses for one product. */
void sg_blas_set_threads(int threads);
int sg_blas_threads(void);

/* openblas_get_corename: the kernel family OpenBLAS chose for this CPU,
 * e.g. "SkylakeX" or "Haswell". Never NULL. */
const char *sg_blas_corename(void);

#endif
