/*
 * bench_runtime.c - time one model on surgeon's runtime in a warm process,
 * the way tools/bench/ort_bench.js times ONNX Runtime (built as
 * sg_bench_runtime; run it on an optimised, unsanitized build):
 *
 *   sg_bench_runtime [--profile] MODEL THREADS REPEAT INPUT.pb...
 *
 * Loads and plans the model once, binds the inputs in order, runs once
 * (the first run: pages of weights and activations are touched), then
 * REPEAT more times, and prints one JSON line with the load and plan time,
 * the first run, the best and median of the others (milliseconds), the
 * best CPU time of the calling thread (what one thread costs when the
 * machine is shared; BLAS threads not included), the
 * runtime's tensor high-water mark, the sum of |y| over the first output
 * and the OpenBLAS kernels in use.
 * --profile adds the time per op type over the timed runs (from one node's
 * outputs to the next's, so it includes the executor's work between them),
 * slowest first, on stderr; --profile-shapes per op type and output shape.
 */
#include "sg_alloc.h"
#include "sg_blas.h"
#include "sg_io.h"
#include "sg_runtime.h"
#include "sg_tensorfile.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROF_MAX 512

struct prof {
    char op[PROF_MAX][96];
    double ms[PROF_MAX];
    int calls[PROF_MAX];
    int n;
    double last;
    bool on, shapes;
};

static double clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

static sg_status observe(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                         void *ctx, struct sg_diag *diag)
{
    (void)depth;
    (void)diag;
    struct prof *p = ctx;
    if (index != 0 || !p->on)
        return SG_OK;
    double t = now_ms();
    char key[96], shape[64];
    const sg_attr *g = sg_node_attr(n, "group");
    snprintf(key, sizeof key, "%s%s %s", n->op_type, g && g->i > 1 ? " (grouped)" : "",
             p->shapes && v ? sg_rt_value_format(v, shape, sizeof shape) : "");
    int i = 0;
    while (i < p->n && strcmp(p->op[i], key) != 0)
        i++;
    if (i == p->n && p->n < PROF_MAX)
        snprintf(p->op[p->n++], sizeof p->op[0], "%s", key);
    if (i < PROF_MAX) {
        p->ms[i] += t - p->last;
        p->calls[i]++;
    }
    p->last = t;
    return SG_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    static struct prof prof;
    bool profile = argc > 1 && strncmp(argv[1], "--profile", 9) == 0;
    prof.shapes = profile && strcmp(argv[1], "--profile-shapes") == 0;
    if (profile) {
        argv++;
        argc--;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: %s [--profile|--profile-shapes] MODEL THREADS REPEAT INPUT.pb...\n",
                argv[0]);
        return 2;
    }
    int threads = atoi(argv[2]), repeat = atoi(argv[3]);
    if (repeat < 1)
        repeat = 1;
    struct sg_diag d = {0};
    sg_model *m = NULL;
    sg_rt *rt = NULL;
    double *times = calloc((size_t)repeat, sizeof *times);
    double *cpu = calloc((size_t)repeat, sizeof *cpu);
    int rc = 1;
    double t0 = now_ms();
    if (!times || !cpu || sg_model_load(argv[1], NULL, &m, &d))
        goto out;
    struct sg_rt_opts opts = {0};
    opts.threads = threads;
    if (profile) {
        opts.on_output = observe;
        opts.observe_ctx = &prof;
    }
    if (sg_rt_create(m, &opts, &rt, &d))
        goto out;
    for (int i = 4; i < argc; i++) {
        uint32_t r = (uint32_t)(i - 4);
        if (r >= sg_rt_n_inputs(rt)) {
            fprintf(stderr, "%s: the model has %u inputs\n", argv[i], sg_rt_n_inputs(rt));
            goto out;
        }
        struct sg_array a = {0};
        sg_rt_value *v = NULL;
        if (sg_pb_read(argv[i], &a, &d) || sg_rt_tensor_from_array(&a, &v, &d)) {
            sg_array_free(&a);
            goto out;
        }
        sg_array_free(&a);
        sg_status st = sg_rt_set_input(rt, sg_rt_input(rt, r)->name, v, &d);
        sg_rt_value_unref(v);
        if (st)
            goto out;
    }
    double t1 = now_ms();
    if (sg_rt_run(rt, &d))
        goto out;
    double first = now_ms() - t1;
    prof.on = true;
    for (int i = 0; i < repeat; i++) {
        double s = now_ms(), c = clock_ms(CLOCK_THREAD_CPUTIME_ID);
        prof.last = s;
        if (sg_rt_run(rt, &d))
            goto out;
        times[i] = now_ms() - s;
        cpu[i] = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c;
    }
    qsort(times, (size_t)repeat, sizeof *times, cmp_double);
    qsort(cpu, (size_t)repeat, sizeof *cpu, cmp_double);
    double sum = 0;
    const sg_rt_value *y = sg_rt_output(rt, 0);
    for (int64_t i = 0; y && y->kind == SG_RT_TENSOR && i < y->numel; i++)
        sum += fabs(sg_rt_get_f64(y, i));
    printf("{\"load_ms\": %.3f, \"first_ms\": %.3f, \"best_ms\": %.3f, \"median_ms\": %.3f, "
           "\"best_cpu_ms\": %.3f, \"tensor_peak_bytes\": %zu, \"abs_sum\": %.6f, "
           "\"blas_core\": \"%s\"}\n",
           t1 - t0, first, times[0], times[repeat / 2], cpu[0], sg_rt_bytes_peak(), sum,
           sg_blas_corename());
    for (int i = 0; profile && i < prof.n; i++) {
        int best = i;
        for (int j = i + 1; j < prof.n; j++)
            if (prof.ms[j] > prof.ms[best])
                best = j;
        fprintf(stderr, "%-48s %8.3f ms/run %5d nodes\n", prof.op[best], prof.ms[best] / repeat,
                prof.calls[best] / repeat);
        prof.ms[best] = prof.ms[i];
        prof.calls[best] = prof.calls[i];
        memcpy(prof.op[best], prof.op[i], sizeof prof.op[0]);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "error: %s\n", d.msg);
    sg_rt_free(rt);
    sg_model_free(m);
    free(times);
    free(cpu);
    return rc;
}
