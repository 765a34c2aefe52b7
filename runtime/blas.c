/*
 * blas.c - OpenBLAS opened with dlopen on first use (see sg_blas.h).
 *
 * Candidates, in order:
 *   SG_OPENBLAS_PATH, the libopenblas.so.0 in the directory pkg-config gave
 *     at build time: the variant (pthread, openmp, serial) whose cblas.h we
 *     were compiled against;
 *   libopenblas.so.0, whatever Debian's alternatives point at;
 *   libopenblas.so, for systems with only the development link.
 * Each is opened RTLD_NOW (a library missing a symbol fails here, not in
 * the middle of a run) and RTLD_LOCAL (its symbols stay out of the global
 * namespace, where they could capture another library's BLAS calls). The
 * library is never closed: OpenBLAS keeps worker threads running its code.
 */
#include "sg_blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, float, const float *, blasint, const float *, blasint,
                         float, float *, blasint);
typedef void (*dgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, double, const double *, blasint, const double *, blasint,
                         double, double *, blasint);
typedef void (*sgemv_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, blasint, blasint, float,
                         const float *, blasint, const float *, blasint, float, float *, blasint);
typedef void (*set_threads_fn)(int);
typedef int (*get_threads_fn)(void);
typedef char *(*corename_fn)(void);

/* The pointer types above, the header's prototypes and the wrappers'
 * prototypes agree (the header's const on by-value parameters does not
 * count); checked without referencing the functions at link time, since
 * _Generic does not evaluate its operand. */
#define SAME_TYPE(f, T) _Generic(&(f), T : 1, default : 0)
_Static_assert(SAME_TYPE(cblas_sgemm, sgemm_fn) && SAME_TYPE(sg_blas_sgemm, sgemm_fn), "sgemm");
_Static_assert(SAME_TYPE(cblas_dgemm, dgemm_fn) && SAME_TYPE(sg_blas_dgemm, dgemm_fn), "dgemm");
_Static_assert(SAME_TYPE(cblas_sgemv, sgemv_fn) && SAME_TYPE(sg_blas_sgemv, sgemv_fn), "sgemv");
_Static_assert(SAME_TYPE(openblas_set_num_threads, set_threads_fn), "set_num_threads");
_Static_assert(SAME_TYPE(openblas_get_num_threads, get_threads_fn), "get_num_threads");
_Static_assert(SAME_TYPE(openblas_get_corename, corename_fn), "get_corename");

struct blas {
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    sgemv_fn sgemv;
    set_threads_fn set_threads;
    get_threads_fn get_threads;
    corename_fn corename;
};

static const char *const candidates[] = {
#ifdef SG_OPENBLAS_PATH
    SG_OPENBLAS_PATH,
#endif
    "libopenblas.so.0",
    "libopenblas.so",
};

/* Written once by load_once, before `loaded` is set (release); read only
 * after `loaded` was seen set (acquire) or pthread_once returned. */
static struct blas blas;
static atomic_bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[SG_DIAG_MAX];

/* Append to load_error, truncating (the start names the first failure). */
static void note(size_t *used, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(size_t *used, const char *fmt, ...)
{
    if (*used >= sizeof load_error - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(load_error + *used, sizeof load_error - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += (size_t)n < sizeof load_error - *used ? (size_t)n : sizeof load_error - 1 - *used;
}

/* The loader's message for `name` without the "name: " it usually starts
 * with (we print the name ourselves, since not every loader does). */
static const char *loader_error(const char *name)
{
    const char *e = dlerror();
    if (!e)
        return "unknown error";
    size_t n = strlen(name);
    return strncmp(e, name, n) == 0 && strncmp(e + n, ": ", 2) == 0 ? e + n + 2 : e;
}

/* Resolve every function from handle h into *b; the name of the first one
 * missing, or NULL. Casting dlsym's void * to a function pointer is what
 * POSIX requires dlsym to support. */
static const char *resolve(void *h, struct blas *b)
{
#define SYM(field, T, name)                                                                        \
    if (!(b->field = (T)dlsym(h, name)))                                                           \
        return name;
    SYM(sgemm, sgemm_fn, "cblas_sgemm")
    SYM(dgemm, dgemm_fn, "cblas_dgemm")
    SYM(sgemv, sgemv_fn, "cblas_sgemv")
    SYM(set_threads, set_threads_fn, "openblas_set_num_threads")
    SYM(get_threads, get_threads_fn, "openblas_get_num_threads")
    SYM(corename, corename_fn, "openblas_get_corename")
#undef SYM
    return NULL;
}

static void load_once(void)
{
    size_t used = 0;
    note(&used, "cannot load OpenBLAS (MatMul, Gemm, Conv and others need it): ");
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        const char *path = candidates[i];
        if (i > 0)
            note(&used, "; ");
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            note(&used, "%s: %s", path, loader_error(path));
            continue;
        }
        struct blas b;
        const char *missing = resolve(h, &b);
        if (missing) {
            /* Not the OpenBLAS we need. Left open like any other (its
             * constructors may have started threads); one handle leaks. */
            note(&used, "%s: no function %s", path, missing);
            continue;
        }
        blas = b;
        load_error[0] = '\0';
        atomic_store_explicit(&loaded, true, memory_order_release);
        return;
    }
}

sg_status sg_blas_load(struct sg_diag *diag)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire))
        return SG_OK;
    pthread_once(&once, load_once);
    if (atomic_load_explicit(&loaded, memory_order_acquire))
        return SG_OK;
    return sg_diag_set(diag, SG_ENOTFOUND, "%s", load_error);
}

/* The wrappers' contract (sg_blas.h): load, or print why not and abort. */
static void __attribute__((noinline, cold)) load_or_abort(void)
{
    struct sg_diag d = {0};
    if (sg_blas_load(&d)) {
        fprintf(stderr, "surgeon: %s\n", d.msg);
        abort();
    }
}

static inline void need_blas(void)
{
    if (!atomic_load_explicit(&loaded, memory_order_acquire))
        load_or_abort();
}

void sg_blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                   blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                   const float *b, blasint ldb, float beta, float *c, blasint ldc)
{
    need_blas();
    blas.sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sg_blas_dgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                   blasint m, blasint n, blasint k, double alpha, const double *a, blasint lda,
                   const double *b, blasint ldb, double beta, double *c, blasint ldc)
{
    need_blas();
    blas.dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sg_blas_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans, blasint m, blasint n,
                   float alpha, const float *a, blasint lda, const float *x, blasint incx,
                   float beta, float *y, blasint incy)
{
    need_blas();
    blas.sgemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

void sg_blas_set_threads(int threads)
{
    need_blas();
    blas.set_threads(threads);
}

int sg_blas_threads(void)
{
    need_blas();
    return blas.get_threads();
}

const char *sg_blas_corename(void)
{
    need_blas();
    const char *name = blas.corename();
    return name ? name : "unknown";
}
