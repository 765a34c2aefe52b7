/*
 * bench_metrics.c - throughput of the comparison metrics on one core.
 *
 * Usage: sg_bench_metrics [MILLION_PAIRS] [REPEATS]   (default 16 and 7)
 * Prints GB/s of float32 pairs (8 bytes per pair: target + golden) for all
 * ten metrics together, best and median of the repeats. Build it with
 * optimisation (an -O2 build dir, e.g. CMAKE_BUILD_TYPE=RelWithDebInfo or
 * Release) and without sanitizers; it is not a test.
 */
#include "sg_alloc.h"
#include "compare_impl.h"
#include "sg_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t n = (size_t)((argc > 1 ? atof(argv[1]) : 16.0) * 1e6);
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (n == 0 || reps <= 0 || reps > 1000) {
        fprintf(stderr, "usage: %s [MILLION_PAIRS] [REPEATS]\n", argv[0]);
        return 2;
    }
    float *x = sg_malloc(n * sizeof *x), *y = sg_malloc(n * sizeof *y);
    if (!x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* Golden values spread over a few orders of magnitude, some zeros; the
     * target is the golden value with a relative error of about 1e-3. */
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u = (double)(s >> 11) / 9007199254740992.0;
        double g = (u - 0.5) * 8.0;
        if ((s & 1023) == 0)
            g = 0;
        y[i] = (float)g;
        x[i] = (float)(g * (1.0 + ((double)((s >> 20) & 1023) - 512.0) * 2e-6));
    }
    double *t = malloc((size_t)reps * sizeof *t);
    double bytes = (double)n * 8.0;
    printf("metrics, float32 pairs: %zu pairs (%.0f MB), %d runs, all ten metrics\n", n,
           bytes / 1e6, reps);
    static const char *const kernels[2] = {"dispatched (AVX2 where the CPU has it)",
                                           "portable (2 lanes, SSE2/NEON)"};
    for (int k = 0; k < 2; k++) {
        sg__metrics_force_generic(k == 1);
        struct sg_metrics m;
        sg_metrics_f32(x, y, n, &m); /* warm up */
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            sg_metrics_f32(x, y, n, &m);
            t[r] = now() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        printf("%s:\n", kernels[k]);
        printf("  best   %.3f s  %.2f GB/s\n", t[0], bytes / t[0] / 1e9);
        printf("  median %.3f s  %.2f GB/s\n", t[reps / 2], bytes / t[reps / 2] / 1e9);
        printf("  (cosine %.6f, KL %.6f, RMSE %.6f: computed, not optimised away)\n", m.cosine,
               m.kl, m.rmse);
    }
    sg__metrics_force_generic(false);
    free(t);
    sg_free(x);
    sg_free(y);
    return 0;
}
