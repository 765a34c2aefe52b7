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
__attribute__((unused)) static void fixture(const char *dir, const char *what)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/compare_fixtures.py %s %s %s",
             SG_SOURCE_DIR, what, dir, SG_SOURCE_DIR);
    ck_assert_msg(system(cmd) == 0, "fixture %s failed", what);
}

__attribute__((unused)) static char *read_text(const char *path)
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

Suite *suite_compare(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_metrics_vs_numpy);
    tcase_add_test(tc, test_metrics_hand);
    tcase_add_test(tc, test_metrics_kl_direction);
    tcase_add_test(tc, test_metrics_dtypes_by_hand);
    tcase_add_test(tc, test_metrics_is_error);
    suite_add_tcase(s, tc);
    return s;
}
