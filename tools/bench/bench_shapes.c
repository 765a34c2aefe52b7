/*
 * bench_shapes.c - time of shape inference alone (sg_graph_infer_shapes),
 * without load and save, for tools/bench/bench_shapes.sh.
 *
 * Usage: sg_bench_shapes MODEL [REPEATS]   (default 5)
 * Prints "infer-shapes MODEL: best S s, median S s, N values (R ranked, T
 * static)". Each repeat loads the model afresh (not timed), so every run
 * infers the same file. Build with optimisation and without sanitizers.
 */
#include "sg_io.h"
#include "sg_shape.h"

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
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (argc < 2 || reps <= 0 || reps > 100) {
        fprintf(stderr, "usage: %s MODEL [REPEATS]\n", argv[0]);
        return 2;
    }
    double t[100];
    struct sg_shape_result res = {0};
    for (int r = 0; r < reps; r++) {
        struct sg_diag d = {0};
        sg_model *m = NULL;
        if (sg_model_load(argv[1], NULL, &m, &d)) {
            fprintf(stderr, "%s\n", d.msg);
            return 1;
        }
        sg_shape_result_clear(&res);
        double t0 = now();
        sg_status st = sg_graph_infer_shapes(m->graph, NULL, &res, &d);
        t[r] = now() - t0;
        sg_model_free(m);
        if (st) {
            fprintf(stderr, "%s\n", d.msg);
            return 1;
        }
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("infer-shapes %s: best %.4f s, median %.4f s, %zu values (%zu ranked, %zu static)\n",
           argv[1], t[0], t[reps / 2], res.n_values, res.n_ranked, res.n_static);
    sg_shape_result_clear(&res);
    return 0;
}
