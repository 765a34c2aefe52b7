/*
 * check_compare.c - the comparison engine: metrics against an independent
 * numpy reference and hand-derived values, dump folders, the fusion map,
 * matching, first-failure analysis and the reports.
 *
 * Fixtures are generated with numpy (/usr/bin/python3) by
 * tests/compare_fixtures.py into the build tree; the metric reference is
 * tests/compare_ref.py.
 */
#include "testutil.h"
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_compare.h"
#include "sg_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

/* Run a python snippet with tests/ on its path; fails the test if it fails. */
static void run_py(const char *dir, const char *body)
{
    char path[700];
    snprintf(path, sizeof path, "%s/gen.py", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "import sys\nsys.path.insert(0, '%s/tests')\nimport numpy as np\n%s\n",
            SG_SOURCE_DIR, body);
    fclose(f);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", path);
    ck_assert_msg(system(cmd) == 0, "python failed: %s", path);
}

/* Make a fixture with tests/compare_fixtures.py: `what` into `dir`. */
static void fixture(const char *dir, const char *what)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/compare_fixtures.py %s %s %s",
             SG_SOURCE_DIR, what, dir, SG_SOURCE_DIR);
    ck_assert_msg(system(cmd) == 0, "fixture %s failed", what);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = sg_malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* NaN equals NaN, infinities match exactly, numbers within tolerance. */
static bool close_to(double got, double want, double rel)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= rel * fmax(1.0, fabs(want));
}

static const char *const metric_names[] = {
    "cosine",  "max_abs",  "accum_rel",   "red",        "kl",          "mean_abs",   "rmse",
    "max_rel", "mean_rel", "target_mean", "target_std", "golden_mean", "golden_std",
};
#define N_METRICS (sizeof metric_names / sizeof metric_names[0])

static void metric_values(const struct sg_metrics *m, double *v)
{
    const double all[N_METRICS] = {m->cosine,    m->max_abs,     m->accum_rel,  m->red,
                                   m->kl,        m->mean_abs,    m->rmse,       m->max_rel,
                                   m->mean_rel,  m->target_mean, m->target_std, m->golden_mean,
                                   m->golden_std};
    memcpy(v, all, sizeof all);
}

/* ------------------------------------------------------ metrics vs numpy */

/* x is the target, y the golden side (numpy expressions; rng is seeded). */
static const struct {
    const char *name;
    const char *x, *y;
    unsigned flags; /* sg_metric_flags expected to be set */
} ref_cases[] = {
    {"close", "y * (1 + 1e-3 * rng.standard_normal(1000)).astype(np.float32)",
     "rng.standard_normal(1000).astype(np.float32)", 0},
    {"identical", "y.copy()", "rng.standard_normal(1001).astype(np.float32)", 0},
    {"far", "rng.standard_normal(999).astype(np.float32)",
     "rng.standard_normal(999).astype(np.float32) * 3 + 1", 0},
    {"both_zero", "np.zeros(7, np.float32)", "np.zeros(7, np.float32)", 0},
    {"target_zero", "np.zeros(5, np.float32)", "np.arange(5, dtype=np.float32)",
     SG_METRIC_TARGET_ZERO},
    {"golden_zero", "np.arange(5, dtype=np.float32)", "np.zeros(5, np.float32)",
     SG_METRIC_GOLDEN_ZERO},
    {"below_eps", "np.full(3, 1e-20, np.float32)", "np.full(3, 2e-20, np.float32)", 0},
    {"around_eps", "np.array([1e-16, 3e-16, 5e-16, 1, 0], np.float32)",
     "np.array([2e-16, 2.5e-16, 1e-15, 1.5, 0], np.float32)", 0},
    {"kl_direction", "np.array([0, 1, 1], np.float32)", "np.array([0, 0, 1], np.float32)", 0},
    {"kl_reversed", "np.array([0, 0, 1], np.float32)", "np.array([0, 1, 1], np.float32)", 0},
    {"kl_both_const", "np.full(10, 3, np.float32)", "np.full(10, 3, np.float32)", 0},
    {"kl_target_const", "np.full(10, -2, np.float32)", "np.arange(10, dtype=np.float32)", 0},
    {"kl_golden_const", "np.arange(10, dtype=np.float32)", "np.full(10, 7, np.float32)", 0},
    {"negated", "-y", "rng.standard_normal(64).astype(np.float32)", 0},
    {"nan_target", "np.where(np.arange(9) == 4, np.nan, y).astype(np.float32)",
     "rng.standard_normal(9).astype(np.float32)", SG_METRIC_NONFINITE},
    {"inf_target", "np.where(np.arange(9) == 2, np.inf, y).astype(np.float32)",
     "rng.standard_normal(9).astype(np.float32)", SG_METRIC_NONFINITE},
    {"ninf_target", "np.where(np.arange(9) < 2, -np.inf, y).astype(np.float32)",
     "rng.standard_normal(9).astype(np.float32)", SG_METRIC_NONFINITE},
    {"inf_both", "y.copy()",
     "np.where(np.arange(9) == 3, np.inf, rng.standard_normal(9))"
     ".astype(np.float32)",
     SG_METRIC_NONFINITE},
    {"nan_golden", "rng.standard_normal(9).astype(np.float32)",
     "np.where(np.arange(9) == 0, np.nan, 1).astype(np.float32)", SG_METRIC_NONFINITE},
    {"inf_all_target", "np.full(4, np.inf, np.float32)", "np.ones(4, np.float32)",
     SG_METRIC_NONFINITE},
    {"float16_target", "y.astype(np.float16)", "rng.standard_normal(333).astype(np.float32)", 0},
    {"float16_overflow", "(y * 1000).astype(np.float16)",
     "(rng.standard_normal(50) * 100).astype(np.float32)", SG_METRIC_NONFINITE},
    {"float64", "y.astype(np.float64) + 1e-9", "rng.standard_normal(77).astype(np.float32)", 0},
    {"int32_int64", "np.arange(-5, 5, dtype=np.int32)", "np.arange(-4, 6, dtype=np.int64)", 0},
    {"int8_uint8", "np.array([-3, 0, 5, 127], np.int8)", "np.array([0, 1, 5, 255], np.uint8)", 0},
    {"uint16_int16", "np.array([1, 2, 3], np.uint16)", "np.array([-1, 2, 4], np.int16)", 0},
    {"uint32_uint64", "np.array([7, 8, 9], np.uint32)", "np.array([7, 9, 9], np.uint64)", 0},
    {"bool", "np.array([True, False, True, True])", "np.array([True, True, True, False])",
     SG_METRIC_BOOL},
    {"bool_all_false", "np.zeros(6, bool)", "np.zeros(6, bool)", SG_METRIC_BOOL},
    {"tail_lanes", "y + np.float32(0.01)", "rng.standard_normal(100003).astype(np.float32)", 0},
    {"single", "np.array([2.5], np.float32)", "np.array([2.0], np.float32)", 0},
    {"shaped", "y.reshape(2, 3, 4) * 1.01", "rng.standard_normal(24).astype(np.float32)", 0},
    {"huge_values", "y * np.float32(1.001)", "(rng.standard_normal(40) * 1e30).astype(np.float32)",
     0},
    {"empty", "np.zeros((0, 3), np.float32)", "np.zeros((0, 3), np.float32)", SG_METRIC_EMPTY},
};
#define N_REF_CASES (sizeof ref_cases / sizeof ref_cases[0])

START_TEST(test_metrics_vs_numpy)
{
    char *dir = test_tmpdir("metrics");
    char body[32768];
    size_t pos = (size_t)snprintf(body, sizeof body, "import compare_ref\n");
    for (size_t i = 0; i < N_REF_CASES; i++)
        pos += (size_t)snprintf(body + pos, sizeof body - pos,
                                "rng = np.random.default_rng(%zu)\n"
                                "with np.errstate(all='ignore'):\n"
                                "    y = %s\n"
                                "    x = %s\n"
                                "np.save('%s/%s.x.npy', x)\nnp.save('%s/%s.y.npy', y)\n"
                                "compare_ref.write_ref('%s/%s.ref', x, y)\n",
                                i + 1, ref_cases[i].y, ref_cases[i].x, dir, ref_cases[i].name, dir,
                                ref_cases[i].name, dir, ref_cases[i].name);
    ck_assert_uint_lt(pos, sizeof body);
    run_py(dir, body);

    for (int generic = 0; generic < 2; generic++) {
        bool old = sg__metrics_force_generic(generic);
        for (size_t i = 0; i < N_REF_CASES; i++) {
            const char *name = ref_cases[i].name;
            char path[800];
            struct sg_diag d = {0};
            struct sg_array x = {0}, y = {0};
            snprintf(path, sizeof path, "%s/%s.x.npy", dir, name);
            ck_assert_ok(sg_npy_read(path, &x, &d), &d);
            snprintf(path, sizeof path, "%s/%s.y.npy", dir, name);
            ck_assert_ok(sg_npy_read(path, &y, &d), &d);
            struct sg_metrics m;
            ck_assert_ok(sg_metrics_compute(&x, &y, &m, &d), &d);
            double got[N_METRICS];
            metric_values(&m, got);
            snprintf(path, sizeof path, "%s/%s.ref", dir, name);
            FILE *f = fopen(path, "r");
            ck_assert_ptr_nonnull(f);
            for (size_t k = 0; k < N_METRICS; k++) {
                char key[64], val[64];
                ck_assert_int_eq(fscanf(f, "%63s %63s", key, val), 2);
                ck_assert_str_eq(key, metric_names[k]);
                double want = strcmp(val, "nan") == 0    ? NAN
                              : strcmp(val, "inf") == 0  ? INFINITY
                              : strcmp(val, "-inf") == 0 ? -INFINITY
                                                         : strtod(val, NULL);
                ck_assert_msg(close_to(got[k], want, 1e-9),
                              "%s (%s kernels): %s = %.17g, numpy %.17g", name,
                              generic ? "portable" : "dispatched", metric_names[k], got[k], want);
            }
            unsigned long long want_overflow;
            ck_assert_int_eq(fscanf(f, " overflow %llu", &want_overflow), 1);
            fclose(f);
            ck_assert_msg((m.flags & ref_cases[i].flags) == ref_cases[i].flags,
                          "%s: flags %#x lack %#x", name, m.flags, ref_cases[i].flags);
            ck_assert_msg(m.overflow == want_overflow, "%s: overflow %llu, numpy %llu", name,
                          (unsigned long long)m.overflow, want_overflow);
            sg_array_free(&x);
            sg_array_free(&y);
        }
        sg__metrics_force_generic(old);
    }
    sg_free(dir);
}
END_TEST

/* ------------------------------------------------- hand-derived metrics */

#define E SG_METRIC_EPS
static const struct {
    const char *name;
    float x[4], y[4];
    size_t n;
    double cosine, max_abs, accum_rel, red, kl, mean_abs, rmse, max_rel, mean_rel;
} hand_cases[] = {
    /* identical: everything 0, cosine 1 */
    {"same", {1, 2, 3}, {1, 2, 3}, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    /* x = 2y: r_i = 1; d = (1, 2); both normalise to (eps, 1): KL 0 */
    {"double", {2, 4}, {1, 2}, 2, 1, 2, 2, 1, 0, 1.5, 1.5811388300841898, 1, 1},
    /* orthogonal: cosine 0; RED sqrt(2/1) */
    {"orthogonal",
     {0, 1},
     {1, 0},
     2,
     0,
     1,
     1,
     1.4142135623730951,
     /* p = (eps, 1), q = (1, eps): KL = (1 - eps)/(1 + eps) ln(1/eps) */
     (1 - E) / (1 + E) * 36.04365338911715,
     1,
     1,
     1,
     0.5},
    /* golden zero where target is not: r_i = 0 there (|y| <= eps) */
    /* (p and q normalise to (1, eps) and (eps, 1): the orthogonal KL) */
    {"zero_golden_elem",
     {5, 2},
     {0, 1},
     2,
     0.3713906763541037,
     5,
     1,
     5.0990195135927845,
     (1 - E) / (1 + E) * 36.04365338911715,
     3,
     3.605551275463989,
     1,
     0.5},
    /* opposite: cosine -1, r = 2 */
    {"opposite",
     {-1, -2},
     {1, 2},
     2,
     -1,
     4,
     4,
     2,
     (1 - E) / (1 + E) * 36.04365338911715,
     3,
     3.1622776601683795,
     2,
     2},
};

START_TEST(test_metrics_hand)
{
    for (int generic = 0; generic < 2; generic++) {
        bool old = sg__metrics_force_generic(generic);
        for (size_t i = 0; i < sizeof hand_cases / sizeof hand_cases[0]; i++) {
            struct sg_metrics m;
            sg_metrics_f32(hand_cases[i].x, hand_cases[i].y, hand_cases[i].n, &m);
            const double want[9] = {
                hand_cases[i].cosine, hand_cases[i].max_abs, hand_cases[i].accum_rel,
                hand_cases[i].red,    hand_cases[i].kl,      hand_cases[i].mean_abs,
                hand_cases[i].rmse,   hand_cases[i].max_rel, hand_cases[i].mean_rel};
            double got[N_METRICS];
            metric_values(&m, got);
            for (int k = 0; k < 9; k++)
                ck_assert_msg(close_to(got[k], want[k], 1e-12), "%s: %s = %.17g, want %.17g",
                              hand_cases[i].name, metric_names[k], got[k], want[k]);
        }
        sg__metrics_force_generic(old);
    }
}
END_TEST

/* KL direction, by hand: x = (0,1,1) target, y = (0,0,1) golden. After
 * normalising and flooring, p = (e,1,1), q = (e,e,1); P = p/(2+e),
 * Q = q/(1+2e); KL(P||Q) is about 17.33, KL(Q||P) about 0.69. */
/* Identical sides give cosine exactly 1, whatever the magnitudes (a product
 * of two square roots misses 1 by an ulp for many sums). */
START_TEST(test_metrics_identical_cosine)
{
    enum { N = 4096 };
    static float x[N];
    uint64_t s = 12345;
    for (int generic = 0; generic < 2; generic++) {
        bool old = sg__metrics_force_generic(generic);
        for (int trial = 0; trial < 200; trial++) {
            size_t n = 1 + (size_t)(trial * 37) % N;
            for (size_t i = 0; i < n; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
                x[i] = (float)exp(-3.0 + 14.0 * u) * (s >> 63 ? -1.0f : 1.0f);
            }
            struct sg_metrics m;
            sg_metrics_f32(x, x, n, &m);
            ck_assert_msg(m.cosine == 1.0, "trial %d (n %zu, %s kernels): cosine %.17g", trial, n,
                          generic ? "generic" : "default", m.cosine);
            ck_assert(m.max_abs == 0 && m.red == 0 && m.rmse == 0);
        }
        sg__metrics_force_generic(old);
    }
}
END_TEST

START_TEST(test_metrics_kl_direction)
{
    const float x[3] = {0, 1, 1}, y[3] = {0, 0, 1};
    double sp = 2 + E, sq = 1 + 2 * E;
    double P[3] = {E / sp, 1 / sp, 1 / sp}, Q[3] = {E / sq, E / sq, 1 / sq};
    double pq = 0, qp = 0;
    for (int i = 0; i < 3; i++) {
        pq += P[i] * log(P[i] / Q[i]);
        qp += Q[i] * log(Q[i] / P[i]);
    }
    struct sg_metrics m;
    sg_metrics_f32(x, y, 3, &m);
    ck_assert_msg(close_to(m.kl, pq, 1e-12), "KL %.17g, want %.17g", m.kl, pq);
    ck_assert(m.kl > 17 && m.kl < 18);
    sg_metrics_f32(y, x, 3, &m);
    ck_assert_msg(close_to(m.kl, qp, 1e-12), "reversed KL %.17g, want %.17g", m.kl, qp);
}
END_TEST

START_TEST(test_metrics_dtypes_by_hand)
{
    /* bfloat16 (numpy has none): 1.5 and -2 exactly; bool counts as 0/1. */
    uint16_t bf[2] = {sg_float_to_bf16(1.5f), sg_float_to_bf16(-2.0f)};
    float f[2] = {1.5f, -2.0f};
    struct sg_array a = {
        .dtype = SG_DTYPE_BFLOAT16, .rank = 1, .dims = {2}, .data = bf, .nbytes = 4};
    struct sg_array b = {.dtype = SG_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = f, .nbytes = 8};
    struct sg_metrics m;
    struct sg_diag d = {0};
    ck_assert_ok(sg_metrics_compute(&a, &b, &m, &d), &d);
    ck_assert(m.cosine == 1.0 && m.max_abs == 0 && m.kl == 0);

    /* Different element counts: an error naming both shapes. */
    struct sg_array c = {
        .dtype = SG_DTYPE_FLOAT, .rank = 2, .dims = {1, 1}, .data = f, .nbytes = 4};
    ck_assert_int_eq(sg_metrics_compute(&a, &c, &m, &d), SG_ESHAPE);
    ck_assert_msg(strstr(d.msg, "[2]") && strstr(d.msg, "[1,1]"), "%s", d.msg);

    /* Strings and complex cannot be compared. */
    sg_diag_clear(&d);
    struct sg_array z = {
        .dtype = SG_DTYPE_COMPLEX64, .rank = 1, .dims = {1}, .data = f, .nbytes = 8};
    ck_assert_int_eq(sg_metrics_compute(&z, &z, &m, &d), SG_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(d.msg, "complex64"));
}
END_TEST

/* float8 and float4 compare by their exact float32 values, 4-bit
 * integers as integers. */
START_TEST(test_metrics_narrow_types)
{
    struct sg_metrics m;
    struct sg_diag d = {0};
    float f[3] = {1.5f, -2.0f, 448.0f};
    struct sg_array g = {.dtype = SG_DTYPE_FLOAT, .rank = 1, .dims = {3}, .data = f, .nbytes = 12};
    uint8_t f8[3] = {sg_float_to_fp8(SG_DTYPE_FLOAT8E4M3FN, 1.5, SG_FP8_SATURATE),
                     sg_float_to_fp8(SG_DTYPE_FLOAT8E4M3FN, -2, SG_FP8_SATURATE),
                     sg_float_to_fp8(SG_DTYPE_FLOAT8E4M3FN, 448, SG_FP8_SATURATE)};
    struct sg_array t = {
        .dtype = SG_DTYPE_FLOAT8E4M3FN, .rank = 1, .dims = {3}, .data = f8, .nbytes = 3};
    ck_assert_ok(sg_metrics_compute(&t, &g, &m, &d), &d);
    ck_assert(m.max_abs == 0 && m.cosine == 1.0);
    f[0] = 1.0f;
    ck_assert_ok(sg_metrics_compute(&t, &g, &m, &d), &d);
    ck_assert(m.max_abs == 0.5);
    /* int4 -8, 7, -1 (held sign-extended) against float32 */
    int8_t i4[3] = {-8, 7, -1};
    float fi[3] = {-8, 7, -1};
    struct sg_array a = {.dtype = SG_DTYPE_INT4, .rank = 1, .dims = {3}, .data = i4, .nbytes = 3};
    struct sg_array b = {.dtype = SG_DTYPE_FLOAT, .rank = 1, .dims = {3}, .data = fi, .nbytes = 12};
    ck_assert_ok(sg_metrics_compute(&a, &b, &m, &d), &d);
    ck_assert(m.max_abs == 0);
    uint8_t fp4[3] = {sg_float_to_fp4(-6), sg_float_to_fp4(6), sg_float_to_fp4(-1)};
    fi[0] = -6, fi[1] = 6;
    a.dtype = SG_DTYPE_FLOAT4E2M1, a.data = fp4;
    ck_assert_ok(sg_metrics_compute(&a, &b, &m, &d), &d);
    ck_assert(m.max_abs == 0);
    uint8_t u4[3] = {15, 0, 3};
    fi[0] = 15, fi[1] = 0, fi[2] = 3;
    a.dtype = SG_DTYPE_UINT4, a.data = u4;
    ck_assert_ok(sg_metrics_compute(&a, &b, &m, &d), &d);
    ck_assert(m.max_abs == 0);
}
END_TEST

/* msit's rule: an error when a threshold is crossed (strictly), plus
 * overflow; NaN metrics cross nothing. */
START_TEST(test_metrics_is_error)
{
    const struct sg_thresholds t = SG_THRESHOLDS_DEFAULT;
    static const struct {
        double cosine, red, kl, rmse, mre;
        uint64_t overflow;
        bool error;
    } cases[] = {
        {1, 0, 0, 0, 0, 0, false},
        {0.99, 0.05, 0.005, 1.0, 1.0, 0, false}, /* exactly at every threshold */
        {0.989999, 0, 0, 0, 0, 0, true},
        {1, 0.050001, 0, 0, 0, 0, true},
        {1, 0, 0.0050001, 0, 0, 0, true},
        {1, 0, 0, 1.000001, 0, 0, true},
        {1, 0, 0, 0, 1.000001, 0, true},
        {NAN, 0, 0, 0, 0, 0, false}, /* one side all zero, the rest fine */
        {NAN, NAN, NAN, NAN, NAN, 0, false},
        {NAN, NAN, NAN, NAN, NAN, 3, true}, /* overflow */
        {1, 0, 0, 0, 0, 1, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sg_metrics m = {.cosine = cases[i].cosine,
                               .red = cases[i].red,
                               .kl = cases[i].kl,
                               .rmse = cases[i].rmse,
                               .mean_rel = cases[i].mre,
                               .overflow = cases[i].overflow};
        ck_assert_msg(sg_metrics_is_error(&m, &t) == cases[i].error, "case %zu", i);
        double sev = sg_metrics_severity(&m, &t);
        if (!cases[i].overflow && !isnan(cases[i].cosine))
            ck_assert_msg((sev > 1) == cases[i].error, "case %zu: severity %g", i, sev);
    }
}
END_TEST

/* ------------------------------------------------------------ fixtures */

/* Fixture folders, made once per test process (each test runs in a fork,
 * so a test that needs one makes it itself when missing). */
static const char *fixture_dir(const char *what)
{
    static char dirs[8][600];
    static const char *names[8];
    for (int i = 0; i < 8; i++) {
        if (names[i] && strcmp(names[i], what) == 0)
            return dirs[i];
        if (!names[i]) {
            char *d = test_tmpdir(what);
            snprintf(dirs[i], sizeof dirs[i], "%s", d);
            sg_free(d);
            fixture(dirs[i], what);
            names[i] = what;
            return dirs[i];
        }
    }
    ck_abort_msg("too many fixtures");
    return NULL;
}

struct run {
    sg_model *model;
    sg_compare_result *r;
    struct sg_diag diag;
    sg_status st;
};

/* Compare fixture folders; map and model are paths relative to the fixture
 * (model: relative to the source tree when it starts with "models/"). */
static struct run compare_in(const char *what, const char *golden, const char *target,
                             const char *map, const char *model)
{
    const char *dir = fixture_dir(what);
    char g[800], t[800], m[800], mo[800];
    snprintf(g, sizeof g, "%s/%s", dir, golden);
    snprintf(t, sizeof t, "%s/%s", dir, target);
    if (map)
        snprintf(m, sizeof m, "%s/%s", dir, map);
    struct run run = {0};
    struct sg_compare_opts opts;
    sg_compare_opts_init(&opts);
    opts.golden_dir = g;
    opts.target_dir = t;
    opts.map_path = map ? m : NULL;
    if (model) {
        if (strncmp(model, "models/", 7) == 0)
            snprintf(mo, sizeof mo, "%s", test_src_path(model));
        else
            snprintf(mo, sizeof mo, "%s/%s", dir, model);
        ck_assert_ok(sg_model_load(mo, NULL, &run.model, &run.diag), &run.diag);
        opts.model = run.model;
        opts.model_label = mo;
    }
    run.st = sg_compare_run(&opts, &run.r, &run.diag);
    return run;
}

static void run_free(struct run *run)
{
    sg_compare_result_free(run->r);
    sg_model_free(run->model);
}

static const struct sg_compare_row *row_named(const sg_compare_result *r, const char *target,
                                              const char *golden)
{
    for (size_t i = 0; i < r->n_rows; i++)
        if ((!target || strcmp(r->rows[i].target, target) == 0) &&
            (!golden || strcmp(r->rows[i].golden, golden) == 0))
            return &r->rows[i];
    ck_abort_msg("no row %s / %s", target ? target : "*", golden ? golden : "*");
    return NULL;
}

static const struct sg_compare_row *first_fail(const sg_compare_result *r)
{
    ck_assert_msg(r->analysis.first_fail >= 0, "no first failing operator: %s",
                  r->analysis.summary);
    return &r->rows[r->analysis.first_fail];
}

static bool has_advice(const sg_compare_result *r, const char *text)
{
    for (size_t i = 0; i < r->analysis.n_advice; i++)
        if (strstr(r->analysis.advice[i], text))
            return true;
    return false;
}

/* The CSV of a result in memory. */
static char *csv_of(const sg_compare_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sg_compare_write_csv(r, f), SG_OK);
    fclose(f);
    return buf; /* free() */
}

/* ------------------------------------------------------------- dumpsets */

START_TEST(test_dumpset_scan)
{
    char path[800];
    snprintf(path, sizeof path, "%s/golden", fixture_dir("overflow"));
    sg_dumpset *ds;
    struct sg_diag d = {0};
    ck_assert_ok(sg_dumpset_scan(path, &ds, &d), &d);
    ck_assert_uint_eq(ds->n_files, 10); /* nested under <timestamp>/onnx */
    for (size_t i = 1; i < ds->n_files; i++)
        ck_assert(ds->files[i - 1].timestamp < ds->files[i].timestamp);
    const struct sg_dump_file *f = sg_dumpset_find(ds, "Exp_3", 0);
    ck_assert_ptr_nonnull(f);
    ck_assert(!f->device && f->index == 0);
    ck_assert_ptr_nonnull(strstr(f->path, "/20240101120000/onnx/Exp_3.0."));
    ck_assert_ptr_null(sg_dumpset_find(ds, "Exp_3", 1));
    sg_dumpset_free(ds);

    snprintf(path, sizeof path, "%s/device_fused", fixture_dir("overflow"));
    ck_assert_ok(sg_dumpset_scan(path, &ds, &d), &d);
    f = sg_dumpset_find(ds, "fused_Exp_3_Mul_6", 0);
    ck_assert_ptr_nonnull(f);
    ck_assert(f->device);
    ck_assert_str_eq(f->op_type, "FusedExpMul");
    ck_assert_str_eq(f->name, "fused_Exp_3_Mul_6");
    sg_dumpset_free(ds);

    /* Long names come back through mapping.csv; input_ names stay outputs
     * when a node is called so. */
    snprintf(path, sizeof path, "%s/golden", fixture_dir("oddnames"));
    ck_assert_ok(sg_dumpset_scan(path, &ds, &d), &d);
    ck_assert_uint_eq(ds->n_files + ds->n_input_files, 7);
    bool long_found = false;
    for (size_t i = 0; i < ds->n_files; i++)
        long_found |= strncmp(ds->files[i].name, "encoder/block_with_a_long_name/", 31) == 0;
    ck_assert(long_found);
    ck_assert_ptr_nonnull(sg_dumpset_find(ds, "input_proj:0", 0));
    sg_dumpset_free(ds);
}
END_TEST

/* ------------------------------------------------------------- the runs */

START_TEST(test_compare_identical)
{
    struct run run = compare_in("identical", "golden", "target", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    const sg_compare_result *r = run.r;
    ck_assert_uint_eq(r->n_rows, 10);
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        ck_assert_msg(row->status == SG_ROW_COMPARED && !row->is_error, "%s", row->target);
        ck_assert_msg(row->m.cosine == 1.0, "%s: cosine %.17g", row->target, row->m.cosine);
        ck_assert(row->position == i); /* topological order */
    }
    ck_assert_int_eq(r->analysis.verdict, SG_VERDICT_PASS);
    ck_assert_int_eq(r->analysis.first_fail, -1);
    ck_assert_uint_eq(r->analysis.n_outputs, 1);
    /* In the CSV every row says cosine 1 and no precision error. */
    char *csv = csv_of(r);
    size_t lines = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        lines++;
        char *end = strchr(line + 1, '\n');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        ck_assert_msg(strstr(line + 1, ",1.000000,") != NULL, "row: %s", line + 1);
        ck_assert_msg(strcmp(end - 3, ",NO") == 0, "row: %s", line + 1);
        *end = '\n';
    }
    ck_assert_uint_eq(lines, 10);
    free(csv);
    run_free(&run);
}
END_TEST

static void check_exp_overflow(const sg_compare_result *r, const char *exp_target)
{
    const struct sg_compare_row *row = first_fail(r);
    ck_assert_str_eq(row->target, exp_target);
    ck_assert_str_eq(row->golden, "Exp_3");
    ck_assert_str_eq(row->op_type, "Exp");
    ck_assert(row->m.overflow > 0);
    ck_assert_int_eq(r->analysis.cause, SG_CAUSE_OVERFLOW);
    ck_assert(r->analysis.overflow);
    ck_assert_int_eq(r->analysis.verdict, SG_VERDICT_FAIL);
    ck_assert_uint_eq(r->analysis.n_outputs_failed, 1);
    /* Its input t agrees with the golden run. */
    ck_assert_uint_eq(r->analysis.n_inputs, 1);
    ck_assert_str_eq(r->analysis.inputs[0].value, "t");
    ck_assert_int_eq(r->analysis.inputs[0].state, SG_INPUT_AGREES);
    ck_assert_str_eq(r->rows[r->analysis.inputs[0].row].golden, "Sub_2");
    const struct sg_compare_row *out = row_named(r, NULL, "Add_9");
    ck_assert(out->is_output && out->is_error && out->m.overflow);
    ck_assert(has_advice(r, "ln(65504)"));
}

START_TEST(test_compare_overflow)
{
    /* fp32 against an fp16 ONNX run, both in the msit ONNX form. */
    struct run run = compare_in("overflow", "golden", "target", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    check_exp_overflow(run.r, "Exp_3");
    char *csv = csv_of(run.r);
    ck_assert_ptr_nonnull(strstr(csv, "\n3,Exp,Exp_3,float16,NaN,Exp_3,float32,Exp_3:output:0,"
                                      "\"[1, 4, 16]\",YES,NaN,inf,"));
    free(csv);
    run_free(&run);

    /* Device dumps with a one-op-per-node map: the same answer. */
    run = compare_in("overflow", "golden", "device", "map_plain.json", "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    check_exp_overflow(run.r, "Exp_3");
    run_free(&run);

    /* Device dumps matched by name, no map. */
    run = compare_in("overflow", "golden", "device", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    check_exp_overflow(run.r, "Exp_3");
    run_free(&run);

    /* Exp's input was not dumped on the target side, nor its producer's:
     * they agree by inference and are named as hidden. */
    run = compare_in("overflow", "golden", "target_partial", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    ck_assert_str_eq(first_fail(run.r)->target, "Exp_3");
    ck_assert_int_eq(run.r->analysis.inputs[0].state, SG_INPUT_NOT_DUMPED);
    ck_assert_uint_eq(run.r->analysis.n_hidden, 2);
    ck_assert_uint_eq(run.r->analysis.n_undumped, 2);
    ck_assert_str_eq(run.r->analysis.hidden[0], "Sub_1");
    ck_assert_str_eq(run.r->analysis.hidden[1], "Sub_2");
    ck_assert_int_eq(row_named(run.r, NULL, "Sub_1")->status, SG_ROW_GOLDEN_ONLY);
    ck_assert(has_advice(run.r, "Dump the 2 node(s) before Exp_3"));
    run_free(&run);

    /* No model: dump order, every tensor judged, inputs unknown. */
    run = compare_in("overflow", "golden", "target", NULL, NULL);
    ck_assert_ok(run.st, &run.diag);
    ck_assert_str_eq(first_fail(run.r)->target, "Exp_3");
    ck_assert(!run.r->analysis.outputs_known);
    ck_assert_int_eq(run.r->analysis.verdict, SG_VERDICT_FAIL);
    ck_assert_uint_eq(run.r->analysis.n_inputs, 0);
    ck_assert_uint_ge(run.r->analysis.n_notes, 1);
    run_free(&run);
}
END_TEST

START_TEST(test_compare_fusion_hides_culprit)
{
    /* Exp..Mul_6 fused into one op: the fused op is reported, and the
     * advice points to the fusion switch. */
    struct run run = compare_in("overflow", "golden", "device_fused", "map_fused.json",
                                "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    const sg_compare_result *r = run.r;
    const struct sg_compare_row *row = first_fail(r);
    ck_assert_str_eq(row->target, "fused/Exp_3_Mul_6");
    ck_assert_str_eq(row->golden, "Exp_3,Less_4,Cast_5,Mul_6");
    ck_assert_str_eq(row->golden_node, "Mul_6"); /* the last node it covers */
    ck_assert(row->fused && r->analysis.fused && r->analysis.overflow);
    ck_assert(has_advice(r, "surgeon fusion-switch -o fusion_switch.cfg --from-map"));
    ck_assert(has_advice(r, "AutomaticUbFusion"));
    /* The advised command works: it switches exactly that pass off. */
    for (size_t i = 0; i < r->analysis.n_advice; i++) {
        const char *a = strstr(r->analysis.advice[i], "`surgeon fusion-switch ");
        if (!a)
            continue;
        const char *end = strchr(a + 1, '`');
        ck_assert_ptr_nonnull(end);
        char *dir = test_tmpdir("advice");
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "cd %s && %s/%.*s >log.txt 2>&1", dir, SG_BINARY_DIR,
                 (int)(end - a - 1), a + 1);
        ck_assert_msg(system(cmd) == 0, "advised command failed: %s", cmd);
        char path[800];
        snprintf(path, sizeof path, "%s/fusion_switch.cfg", dir);
        char *cfg = read_text(path);
        ck_assert_msg(strstr(cfg, "\"AutomaticUbFusion\": \"off\""), "%s", cfg);
        sg_free(cfg);
        sg_free(dir);
    }
    ck_assert_uint_eq(r->analysis.n_hidden, 3);
    ck_assert_str_eq(r->analysis.hidden[0], "Exp_3");
    /* The nodes inside are listed, not dropped; so is the NPU-only op. */
    ck_assert_int_eq(row_named(r, NULL, "Exp_3")->status, SG_ROW_FUSED_AWAY);
    ck_assert_int_eq(row_named(r, NULL, "Less_4")->status, SG_ROW_FUSED_AWAY);
    const struct sg_compare_row *td = row_named(r, "trans_TransData_0", NULL);
    ck_assert_int_eq(td->status, SG_ROW_TARGET_ONLY);
    ck_assert_str_eq(td->golden, "*");
    ck_assert_uint_eq(r->analysis.n_fused_away, 3);
    ck_assert_uint_eq(r->analysis.n_target_only, 1);
    char *csv = csv_of(r);
    ck_assert_ptr_nonnull(strstr(csv, ",trans_TransData_0,NaN,NaN,*,NaN,"));
    ck_assert_ptr_nonnull(strstr(csv, ",YES,NO,NO\n")); /* IsNpuOps of the TransData row */
    ck_assert_ptr_nonnull(
        strstr(csv, ",fused/Exp_3_Mul_6,float16,NaN,\"Exp_3,Less_4,Cast_5,Mul_6\","));
    free(csv);
    run_free(&run);

    /* Fusion off (one op per node): Exp is reported. */
    run = compare_in("overflow", "golden", "device", "map_plain.json", "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    ck_assert_str_eq(first_fail(run.r)->target, "Exp_3");
    ck_assert(!has_advice(run.r, "fusion-switch"));
    run_free(&run);

    /* A precision fault (no overflow) inside a fused op. */
    run = compare_in("badexp", "golden", "device_fused", "map_fused.json",
                     "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    row = first_fail(run.r);
    ck_assert_str_eq(row->target, "fused/Exp_3_Mul_6");
    ck_assert_int_eq(run.r->analysis.cause, SG_CAUSE_FUSED);
    ck_assert(!run.r->analysis.overflow);
    ck_assert(has_advice(run.r, "surgeon fusion-switch -o fusion_switch.cfg --from-map"));
    run_free(&run);

    /* ... and without fusion the culprit is Exp itself, a jump. */
    run = compare_in("badexp", "golden", "target", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    ck_assert_str_eq(first_fail(run.r)->target, "Exp_3");
    ck_assert_int_eq(run.r->analysis.cause, SG_CAUSE_JUMP);
    run_free(&run);
}
END_TEST

/* The network output verdict comes first: a failing intermediate that
 * does not reach the output needs no fix, and the run passes. */
START_TEST(test_compare_intermediate_only)
{
    struct run run = compare_in("masked", "golden", "target", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    ck_assert_int_eq(run.r->analysis.verdict, SG_VERDICT_PASS);
    ck_assert_str_eq(first_fail(run.r)->target, "Exp_3");
    ck_assert_msg(strncmp(run.r->analysis.summary, "The network output matches", 26) == 0 &&
                      strstr(run.r->analysis.summary, "no fix is needed"),
                  "%s", run.r->analysis.summary);
    ck_assert(!row_named(run.r, NULL, "Add_9")->is_error);
    run_free(&run);
    char *out = test_tmpdir("masked");
    char args[2000], log[700];
    snprintf(log, sizeof log, "%s/log.txt", out);
    snprintf(args, sizeof args, "compare -g %s/golden -t %s/target --model %s -o %s/r",
             fixture_dir("masked"), fixture_dir("masked"),
             test_src_path("models/exp_overflow.onnx"), out);
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "%s/surgeon %s >%s 2>&1", SG_BINARY_DIR, args, log);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d", WEXITSTATUS(st));
    sg_free(out);
}
END_TEST

/* Accumulated error: each tensor is a little further off than the one
 * before (Less and Cast exact), so the first to cross a threshold (Mul_6,
 * 6.3%) has an input already well into it (Exp_3, 3.6% of RED's 5%). */
START_TEST(test_compare_accumulated)
{
    const char *dir = fixture_dir("badexp");
    char body[2000];
    snprintf(body, sizeof body,
             "import compare_fixtures as cf\n"
             "rng = np.random.default_rng(11)\n"
             "x = rng.uniform(0, 1, (1, 4, 16)).astype(np.float32)\n"
             "g = cf.run_exp_overflow(x, np.float32)\n"
             "t = [v if k in (4, 5) else v * np.float32(1 + 0.009 * (k + 1)) "
             "for k, v in enumerate(g)]\n"
             "cf.write_run(cf.Dumper('%s/acc_golden'), g)\n"
             "cf.write_run(cf.Dumper('%s/acc_target'), t)\n",
             dir, dir);
    run_py(dir, body);
    struct run run =
        compare_in("badexp", "acc_golden", "acc_target", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    ck_assert_str_eq(first_fail(run.r)->target, "Mul_6");
    ck_assert_int_eq(run.r->analysis.cause, SG_CAUSE_ACCUMULATED);
    ck_assert_msg(run.r->analysis.input_severity >= 0.5, "input severity %g",
                  run.r->analysis.input_severity);
    ck_assert(has_advice(run.r, "Bisect"));
    run_free(&run);
}
END_TEST

START_TEST(test_compare_odd_names)
{
    const char *dir = fixture_dir("oddnames");
    char out[800], body[4096];
    for (int form = 0; form < 2; form++) {
        struct run run =
            compare_in("oddnames", "golden", form ? "device" : "target", NULL, "odd.onnx");
        ck_assert_ok(run.st, &run.diag);
        const sg_compare_result *r = run.r;
        ck_assert_uint_eq(r->analysis.n_compared, form ? 6 : 7);
        ck_assert_uint_eq(r->analysis.n_errors, 0);
        ck_assert_int_eq(r->analysis.verdict, form ? SG_VERDICT_UNKNOWN : SG_VERDICT_PASS);
        snprintf(out, sizeof out, "%s/report%d", dir, form);
        struct sg_diag d = {0};
        ck_assert_ok(sg_compare_write_reports(r, out, 1700000000, NULL, &d), &d);
        run_free(&run);
    }
    /* Python's csv and json read back exactly the ONNX node names. */
    snprintf(
        body, sizeof body,
        "import csv, json, glob, html\n"
        "names = json.load(open('%s/names.json'))\n"
        "for form in (0, 1):\n"
        "    rows = list(csv.reader(open(glob.glob('%s/report%%d/result_*.csv' %% form)[0])))\n"
        "    gt = [r[5] for r in rows[1:]]\n"
        "    assert gt == names, (gt, names)\n"
        "    npu = [r[2] for r in rows[1:]]\n"
        "    want = names if form == 0 else [n.replace('/', '_') for n in names[:-1]] + "
        "[names[-1]]\n"
        "    assert npu[:len(want) - form] == want[:len(want) - form], (npu, want)\n"
        "    j = json.load(open('%s/report%%d/result.json' %% form))\n"
        "    assert [r['GroundTruth'] for r in j['rows']] == names\n"
        "    assert len(j['rows']) == len(rows) - 1\n"
        "    page = open('%s/report%%d/report.html' %% form).read()\n"
        "    for n in names:\n"
        "        assert html.escape(n) in page, n\n",
        dir, dir, dir, dir);
    run_py(dir, body);
}
END_TEST

/* --------------------------------------------------------- bad input */

START_TEST(test_compare_bad_dumps)
{
    struct run run = compare_in("badinput", "golden", "target", NULL, "bad.onnx");
    ck_assert_ok(run.st, &run.diag);
    const sg_compare_result *r = run.r;
    const struct sg_compare_row *row = row_named(r, NULL, "reshaped");
    ck_assert_int_eq(row->status, SG_ROW_FAILED);
    ck_assert(row->mismatch && !row->unreadable);
    ck_assert_msg(strstr(row->reason, "shape mismatch: target [3, 2], golden [2, 3]"), "%s",
                  row->reason);
    row = row_named(r, NULL, "squeezable"); /* [2,3] against [1,2,3]: the same tensor */
    ck_assert_int_eq(row->status, SG_ROW_COMPARED);
    ck_assert(row->m.cosine == 1.0);
    row = row_named(r, NULL, "truncated");
    ck_assert_int_eq(row->status, SG_ROW_FAILED);
    ck_assert(row->unreadable);
    ck_assert_msg(strstr(row->reason, "/target/truncated.0.") && strstr(row->reason, "truncated"),
                  "%s", row->reason);
    ck_assert_uint_eq(r->analysis.n_unreadable, 1);
    ck_assert_ptr_nonnull(strstr(r->first_unreadable.msg, "truncated.0."));
    /* The run went on past both. */
    ck_assert_int_eq(row_named(r, NULL, "last")->status, SG_ROW_COMPARED);
    ck_assert_int_eq(row_named(r, NULL, "first")->status, SG_ROW_COMPARED);
    /* A mis-shaped tensor is wrong: the first failing one. */
    ck_assert_str_eq(first_fail(r)->golden, "reshaped");
    char *csv = csv_of(r);
    ck_assert_ptr_nonnull(
        strstr(csv, ",\"shape mismatch: target [3, 2], golden [2, 3]\",NO,NO,YES\n"));
    free(csv);
    run_free(&run);
}
END_TEST

START_TEST(test_compare_bad_folders_and_maps)
{
    static const struct {
        const char *golden, *target, *map, *model;
        sg_status st;
        const char *msg[2];
    } cases[] = {
        {"golden", "empty", NULL, NULL, SG_ENOTFOUND, {"/empty: no .npy dump files", NULL}},
        {"empty", "target", NULL, NULL, SG_ENOTFOUND, {"/empty: no .npy dump files", NULL}},
        {"golden",
         "nondump",
         NULL,
         NULL,
         SG_ENOTFOUND,
         {"2 .npy files, none named like a dump", NULL}},
        {"golden", "missing", NULL, NULL, SG_ENOTFOUND, {"/missing: No such file", NULL}},
        {"tworuns",
         "target",
         NULL,
         NULL,
         SG_EDUP,
         {"output 0 of 'first' is dumped twice", "point at the folder of one run"}},
        {"golden",
         "target",
         "map_unknown.json",
         "bad.onnx",
         SG_EINVAL,
         {"map_unknown.json:", "op 'ghost' (Relu) names ONNX node 'NoSuchNode', which is not in"}},
        {"golden",
         "target",
         "map_broken.json",
         NULL,
         SG_EPARSE,
         {"map_broken.json:2:36: ", "trailing comma"}},
        {"golden",
         "target",
         "map_wrongtype.json",
         NULL,
         SG_EPARSE,
         {"attr \"_datadump_original_op_names\" of op \"first\" lists a number", NULL}},
        {"golden", "target", "no_such_map.json", NULL, SG_EIO, {"no_such_map.json", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct run run =
            compare_in("badinput", cases[i].golden, cases[i].target, cases[i].map, cases[i].model);
        ck_assert_msg(run.st == cases[i].st, "case %zu: %s (%s)", i, sg_status_name(run.st),
                      run.diag.msg);
        ck_assert_ptr_null(run.r);
        for (int k = 0; k < 2; k++)
            ck_assert_msg(!cases[i].msg[k] || strstr(run.diag.msg, cases[i].msg[k]),
                          "case %zu: '%s' lacks '%s'", i, run.diag.msg, cases[i].msg[k]);
        run_free(&run);
    }
    /* Without a model, a map naming unknown nodes is only a row-level matter. */
    struct run run = compare_in("badinput", "golden", "target", "map_unknown.json", NULL);
    ck_assert_ok(run.st, &run.diag);
    run_free(&run);
}
END_TEST

START_TEST(test_fusion_map_parse)
{
    static const char good[] =
        "\xef\xbb\xbf{\"graph\":[{\"op\":[{\"name\":\"a/b\",\"type\":\"Conv2D\",\"attr\":["
        "{\"key\":\"_datadump_original_op_names\",\"value\":{\"list\":{\"s\":[\"x\",\"y\\u00e9\","
        "\"z\\ud83d\\ude00\"]}}},{\"key\":\"pass_name\",\"value\":{\"list\":{\"s\":"
        "[\"ConvBatchnormFusionPass\"]}}},{\"key\":\"pass_name_ub\",\"value\":{\"s\":"
        "\"TbeCommonRules0FusionPass\"}},{\"key\":\"other\",\"value\":{\"i\":3}}],"
        "\"output_desc\":[{\"attr\":[{\"key\":\"_datadump_origin_name\",\"value\":{\"s\":\"y\"}},"
        "{\"key\":\"_datadump_origin_output_index\",\"value\":{\"i\":1}}]}]},"
        "{\"name\":\"c\",\"type\":\"Const\",\"attr\":[{\"key\":\"_datadump_original_op_names\","
        "\"value\":{\"list\":{\"val_type\":1}}}]}]},{\"op\":[{\"name\":\"d\"}]}], \"x\": [1e3, "
        "-0.5, true, false, null]}";
    sg_atc_map *map;
    struct sg_diag d = {0};
    ck_assert_ok(sg_atc_map_parse(good, sizeof good - 1, "m.json", &map, &d), &d);
    ck_assert_uint_eq(map->n_ops, 3);
    const struct sg_atc_op *op = &map->ops[0];
    ck_assert_str_eq(op->name, "a/b");
    ck_assert_uint_eq(op->n_orig, 3);
    ck_assert_str_eq(op->orig[1], "y\xc3\xa9");
    ck_assert_str_eq(op->orig[2], "z\xf0\x9f\x98\x80");
    ck_assert_uint_eq(op->n_passes, 1);
    ck_assert_str_eq(op->passes[0], "ConvBatchnormFusionPass");
    ck_assert_str_eq(op->ub_pass, "TbeCommonRules0FusionPass");
    ck_assert_uint_eq(op->n_outputs, 1);
    ck_assert_str_eq(op->out_orig[0], "y");
    ck_assert_int_eq(op->out_index[0], 1);
    ck_assert_uint_eq(map->ops[1].n_orig, 0); /* a list without "s" */
    ck_assert_str_eq(map->ops[2].type, "");
    sg_atc_map_free(map);

    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"", "m.json:1:1: no JSON value"},
        {"[]", "m.json:1:1: no \"graph\" array: not the JSON of 'atc --mode=1'"},
        {"{\"graph\":{}}", "no \"graph\" array"},
        {"{\"graph\":[{\"op\":[{\"type\":\"X\"}]}]}", "m.json:1:18: op without a string \"name\""},
        {"{\"graph\":[{\"op\":[{\"name\":\"a\",\"attr\":{}}]}]}",
         "m.json:1:37: \"attr\" of op \"a\" must be an array"},
        {"{\"graph\":[{\"op\":[{\"name\":\"a\",\"attr\":[{\"key\":\"pass_name\",\"value\":"
         "{\"list\":{\"s\":[1]}}}]}]}]}",
         "m.json:1:79: attr \"pass_name\" of op \"a\" lists a number"},
        {"{\"graph\":[{\"op\":[{\"name\":\"a\",\"output_desc\":[{\"attr\":[{\"key\":"
         "\"_datadump_origin_output_index\",\"value\":{\"i\":-1}}]}]}]}]}",
         "_datadump_origin_output_index of op \"a\" must be"},
        {"{\"graph\":[]} x", "m.json:1:14: unexpected 'x'"},
        {"{\"graph\":[\n\n\"\\q\"]}", "m.json:3:2: invalid escape"},
        {"{\"graph\":[],\"graph\":[]}", "duplicate key \"graph\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sg_diag_clear(&d);
        ck_assert_int_eq(sg_atc_map_parse(bad[i].text, strlen(bad[i].text), "m.json", &map, &d),
                         SG_EPARSE);
        ck_assert_ptr_null(map);
        ck_assert_msg(strstr(d.msg, bad[i].msg), "case %zu: '%s' lacks '%s'", i, d.msg, bad[i].msg);
    }
}
END_TEST

/* Every allocation of a run may fail: a clean SG_ENOMEM, nothing leaked. */
START_TEST(test_compare_alloc_failures)
{
    const char *dir = fixture_dir("overflow");
    char g[800], t[800], m[800];
    snprintf(g, sizeof g, "%s/golden", dir);
    snprintf(t, sizeof t, "%s/device_fused", dir);
    snprintf(m, sizeof m, "%s/map_fused.json", dir);
    struct sg_diag d = {0};
    sg_model *model;
    ck_assert_ok(sg_model_load(test_src_path("models/exp_overflow.onnx"), NULL, &model, &d), &d);
    struct sg_compare_opts opts;
    sg_compare_opts_init(&opts);
    opts.golden_dir = g;
    opts.target_dir = t;
    opts.map_path = m;
    opts.model = model;
    /* One run first: the model builds its name maps lazily and keeps them. */
    sg_compare_result *warm = NULL;
    ck_assert_ok(sg_compare_run(&opts, &warm, &d), &d);
    sg_compare_result_free(warm);
    int64_t live = sg_alloc_live();
    sg_status st = SG_ENOMEM;
    uint64_t n;
    for (n = 1; st == SG_ENOMEM && n < 100000; n++) {
        sg_compare_result *r = NULL;
        sg_diag_clear(&d);
        sg_alloc_fail_at(n);
        st = sg_compare_run(&opts, &r, &d);
        sg_alloc_fail_at(0);
        ck_assert_msg(st == SG_OK || st == SG_ENOMEM, "allocation %llu: %s (%s)",
                      (unsigned long long)n, sg_status_name(st), d.msg);
        ck_assert_msg((st == SG_OK) == (r != NULL), "allocation %llu", (unsigned long long)n);
        sg_compare_result_free(r);
        ck_assert_msg(sg_alloc_live() == live, "allocation %llu: %lld blocks leaked",
                      (unsigned long long)n, (long long)(sg_alloc_live() - live));
    }
    ck_assert_int_eq(st, SG_OK);
    ck_assert_uint_gt(n, 20); /* it did fail on the way */
    sg_model_free(model);
}
END_TEST

/* ------------------------------------------------------------ reports */

/* FORMATS.md, "Comparison result CSV", column list joined with ','. */
static const char formats_md_header[] =
    "Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,TensorIndex,Shape,OverFlow,"
    "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
    "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
    "MaxRelativeError,MeanRelativeError,CompareFailReason,IsNpuOps,IsOutputNode,"
    "IsPrecisionError";

START_TEST(test_reports)
{
    ck_assert_str_eq(sg_compare_csv_header, formats_md_header);
    struct run run = compare_in("overflow", "golden", "target", NULL, "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    char *out = test_tmpdir("reports");
    char dir[700];
    snprintf(dir, sizeof dir, "%s/nested/out", out); /* created */
    struct sg_diag d = {0};
    char *csv_path;
    /* 2023-11-14 22:13:20 UTC; the name is in local time. */
    time_t when = 1700000000;
    ck_assert_ok(sg_compare_write_reports(run.r, dir, when, &csv_path, &d), &d);
    char want[64];
    struct tm tm;
    localtime_r(&when, &tm);
    strftime(want, sizeof want, "/result_%Y%m%d%H%M%S.csv", &tm);
    ck_assert_msg(strstr(csv_path, want) && strstr(csv_path, dir) == csv_path, "%s", csv_path);
    char *csv = read_text(csv_path);
    /* Header byte for byte, then one line per row. */
    size_t hl = strlen(formats_md_header);
    ck_assert_int_eq(memcmp(csv, formats_md_header, hl), 0);
    ck_assert_int_eq(csv[hl], '\n');
    size_t lines = 0;
    for (char *p = csv; *p; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, run.r->n_rows + 1);
    /* StandardDeviation with 3 decimals, target first: Mul_0's sides. */
    ck_assert_ptr_nonnull(strstr(csv, ",\"(9.827;5.670),(9.827;5.670)\","));
    sg_free(csv);
    char body[2048];
    snprintf(body, sizeof body,
             "import json, csv\n"
             "j = json.load(open('%s/result.json'))\n"
             "rows = list(csv.reader(open('%s')))\n"
             "assert j['columns'] == rows[0], j['columns']\n"
             "assert len(j['rows']) == len(rows) - 1 == 10\n"
             "assert j['verdict'] == 'FAIL'\n"
             "ff = j['analysis']['first_failing']\n"
             "assert ff['NPUDump'] == 'Exp_3' and ff['cause'] == 'overflow' and ff['overflow']\n"
             "assert ff['inputs'][0]['value'] == 't' and ff['inputs'][0]['state'] == 'dumped, agrees'\n"
             "for r, c in zip(j['rows'], rows[1:]):\n"
             "    assert r['NPUDump'] == c[2] and r['GroundTruth'] == c[5]\n"
             "    v = r['CosineSimilarity']\n"
             "    assert (v == 'NaN' and c[10] == 'NaN') or '%%.6f' %% v == c[10], (v, c[10])\n"
             "    assert r['IsPrecisionError'] == (c[23] == 'YES')\n",
             dir, csv_path);
    run_py(out, body);
    sg_free(csv_path);

    /* A folder that cannot be made: a clean error naming it. */
    char bad_dir[800];
    snprintf(bad_dir, sizeof bad_dir, "%s/result.json/sub", dir);
    sg_diag_clear(&d);
    ck_assert_int_eq(sg_compare_write_reports(run.r, bad_dir, when, &csv_path, &d), SG_EIO);
    ck_assert_ptr_null(csv_path);
    ck_assert_msg(strstr(d.msg, "result.json"), "%s", d.msg);

    /* Failing allocations: SG_ENOMEM, nothing leaked, no temporary left. */
    snprintf(bad_dir, sizeof bad_dir, "%s/oom", out);
    int64_t live = sg_alloc_live();
    sg_status st = SG_ENOMEM;
    for (uint64_t n = 1; st == SG_ENOMEM && n < 1000; n++) {
        sg_diag_clear(&d);
        sg_alloc_fail_at(n);
        st = sg_compare_write_reports(run.r, bad_dir, when, &csv_path, &d);
        sg_alloc_fail_at(0);
        ck_assert_msg(st == SG_OK || st == SG_ENOMEM, "%s", d.msg);
        ck_assert_int_eq(sg_alloc_live(), live + (st == SG_OK));
    }
    ck_assert_int_eq(st, SG_OK);
    sg_free(csv_path);
    snprintf(body, sizeof body,
             "import os\nleft = [f for f in os.listdir('%s') if '.tmp.' in f]\n"
             "assert not left, left\nassert len(os.listdir('%s')) == 3\n",
             bad_dir, bad_dir);
    run_py(out, body);
    sg_free(out);
    run_free(&run);
}
END_TEST

START_TEST(test_report_html_chromium)
{
    if (access("/usr/bin/chromium", X_OK) != 0) {
        printf("SKIP test_report_html_chromium: /usr/bin/chromium is missing "
               "(install the Debian package chromium: tools/install-deps.sh --test)\n");
        return;
    }
    struct run run = compare_in("overflow", "golden", "device_fused", "map_fused.json",
                                "models/exp_overflow.onnx");
    ck_assert_ok(run.st, &run.diag);
    char *out = test_tmpdir("html");
    struct sg_diag d = {0};
    ck_assert_ok(sg_compare_write_reports(run.r, out, 1700000000, NULL, &d), &d);
    run_free(&run);
    char cmd[4096];
    const char *flags = "--headless --no-sandbox --disable-gpu --disable-background-networking "
                        "--disable-component-update --disable-sync --no-first-run "
                        "--window-size=1400,1000";
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p profile1 profile2 && "
             "timeout 120 /usr/bin/chromium %s --user-data-dir=%s/profile1 "
             "--screenshot=%s/shot.png file://%s/report.html >chromium1.log 2>&1 && "
             "timeout 120 /usr/bin/chromium %s --user-data-dir=%s/profile2 --dump-dom "
             "file://%s/report.html >dom.html 2>chromium2.log",
             out, flags, out, out, out, flags, out, out);
    ck_assert_msg(system(cmd) == 0, "chromium failed: see %s/chromium*.log", out);
    char path[800];
    snprintf(path, sizeof path, "%s/shot.png", out);
    char *png = read_text(path);
    ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
    sg_free(png);
    snprintf(path, sizeof path, "%s/dom.html", out);
    char *dom = read_text(path);
    /* The rendered page has the plot, its thresholds and marks, and the
     * table (with the filter script having run over it). */
    static const char *const want[] = {"<svg id=\"plot\"",
                                       "class=\"threshold\"",
                                       "class=\"point pass\"",
                                       "class=\"point overflow",
                                       "first failing: fused/Exp_3_Mul_6",
                                       "<table id=\"rows\"",
                                       "id=\"f-text\"",
                                       "11 of 11 rows",
                                       "surgeon fusion-switch -o fusion_switch.cfg --from-map"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(dom, want[i]), "rendered page lacks %s", want[i]);
    sg_free(dom);
    sg_free(out);
}
END_TEST

/* ----------------------------------------------------------------- CLI */

static int cli(const char *args, const char *log)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s/surgeon %s >%s 2>&1", SG_BINARY_DIR, args, log);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_cli_exit_codes)
{
    const char *ov = fixture_dir("overflow");
    const char *id = fixture_dir("identical");
    const char *be = fixture_dir("badexp");
    const char *bad = fixture_dir("badinput");
    char *out = test_tmpdir("cli");
    char log[700];
    snprintf(log, sizeof log, "%s/log.txt", out);
    const char *model = test_src_path("models/exp_overflow.onnx");
    char model_path[800];
    snprintf(model_path, sizeof model_path, "%s", model);
    static const struct {
        const char *fmt; /* %1$s: a fixture, %2$s: out, %3$s: the model */
        int which;       /* fixture: 0 overflow, 1 identical, 2 badexp, 3 badinput */
        int rc;
        const char *log;
    } cases[] = {
        {"compare -g %1$s/golden -t %1$s/target --model %3$s -o %2$s/a", 1, 0, "verdict: PASS"},
        {"compare -g %1$s/golden -t %1$s/target --model %3$s -o %2$s/b", 0, 3, "cause: overflow"},
        {"compare -g %1$s/golden -t %1$s/device_fused -m %1$s/map_fused.json --model %3$s "
         "-o %2$s/c",
         0, 3, "surgeon fusion-switch -o fusion_switch.cfg --from-map"},
        /* Thresholds are configurable: loose enough, the bad Exp passes. */
        {"compare -g %1$s/golden -t %1$s/target --model %3$s -o %2$s/d --cosine -1 --red 1e9 "
         "--kl 1e9 --rmse 1e9 --mre 1e9",
         2, 0, "verdict: PASS"},
        {"compare -g %1$s/golden -t %1$s/target --model %3$s -o %2$s/e --red 0.001", 2, 3,
         "verdict: FAIL"},
        {"compare -q -g %1$s/golden -t %1$s/target --model %3$s -o %2$s/f", 2, 3, NULL},
        {"compare -g %1$s/golden -t %1$s/target -o %2$s/g", 3, 1, "truncated.0."},
        {"compare -g %1$s/golden -t %1$s/empty -o %2$s/h", 3, 1, "no .npy dump files"},
        {"compare -g %1$s/golden -t %1$s/target -m %1$s/map_unknown.json --model %1$s/bad.onnx "
         "-o %2$s/i",
         3, 1, "NoSuchNode"},
        {"compare -g %1$s/golden -t %1$s/target", 0, 2, "missing -o OUT"},
        {"compare -t %1$s/target -o %2$s/j", 0, 2, "missing -g GOLDEN_DIR"},
        {"compare -g %1$s/golden -t %1$s/target -o %2$s/k --cosine 2", 0, 2, "bad threshold"},
        {"compare -g %1$s/golden -t %1$s/target -o %2$s/l --bogus", 0, 2, "unknown option"},
        {"compare %3$s --target mock -o %2$s/m", 0, 2, "--target mock needs --soc"},
        {"compare %3$s -o %2$s/n", 0, 2, "missing --target"},
        {"compare %3$s --target mock --soc Ascend910B1 -g %1$s/golden -o %2$s/o", 0, 2,
         "-g belongs to the dump-folder form"},
        {"compare -g %1$s/golden -t %1$s/target -o %2$s/p --precision force_fp16", 0, 2,
         "--precision belongs to the end-to-end form"},
    };
    const char *fx[4] = {ov, id, be, bad};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[3000];
        snprintf(args, sizeof args, cases[i].fmt, fx[cases[i].which], out, model_path);
        int rc = cli(args, log);
        char *text = read_text(log);
        ck_assert_msg(rc == cases[i].rc, "case %zu: exit %d, want %d: %s", i, rc, cases[i].rc,
                      text);
        ck_assert_msg(!cases[i].log || strstr(text, cases[i].log), "case %zu lacks '%s': %s", i,
                      cases[i].log, text);
        /* Not a terminal: no progress line. */
        ck_assert_msg(!strstr(text, "comparing "), "case %zu printed progress: %s", i, text);
        if (cases[i].which == 2 && cases[i].rc == 3 && !cases[i].log)
            ck_assert_msg(text[0] == '\0', "-q printed: %s", text);
        sg_free(text);
    }
    sg_free(out);
}
END_TEST

Suite *suite_compare(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_metrics_vs_numpy);
    tcase_add_test(tc, test_metrics_hand);
    tcase_add_test(tc, test_metrics_identical_cosine);
    tcase_add_test(tc, test_metrics_kl_direction);
    tcase_add_test(tc, test_metrics_dtypes_by_hand);
    tcase_add_test(tc, test_metrics_narrow_types);
    tcase_add_test(tc, test_metrics_is_error);
    suite_add_tcase(s, tc);

    tc = tcase_create("engine");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_dumpset_scan);
    tcase_add_test(tc, test_compare_identical);
    tcase_add_test(tc, test_compare_overflow);
    tcase_add_test(tc, test_compare_fusion_hides_culprit);
    tcase_add_test(tc, test_compare_intermediate_only);
    tcase_add_test(tc, test_compare_accumulated);
    tcase_add_test(tc, test_compare_odd_names);
    tcase_add_test(tc, test_compare_bad_dumps);
    tcase_add_test(tc, test_compare_bad_folders_and_maps);
    tcase_add_test(tc, test_fusion_map_parse);
    tcase_add_test(tc, test_compare_alloc_failures);
    tcase_add_test(tc, test_reports);
    tcase_add_test(tc, test_report_html_chromium);
    tcase_add_test(tc, test_cli_exit_codes);
    suite_add_tcase(s, tc);
    return s;
}
