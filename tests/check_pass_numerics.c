/*
 * check_pass_numerics.c - passes checked on the reference runtime.
 *
 * A semantics-preserving pass must keep the outputs of a model: each case
 * runs the model before and after its pipeline on the same seeded random
 * inputs (an input gets the same values on both sides, found by name, so a
 * pass may drop or reorder inputs) and compares every graph output,
 * bit for bit or within the case's stated tolerance, printing both values
 * at the first difference. The fix passes are checked for what they fix:
 * insert-clip removes the float16 overflow of exp_overflow.onnx under the
 * runtime's float16 emulation, and to-fp16 keeps outputs within a float16
 * tolerance.
 */
#include "testutil.h"
#include "sg_io.h"
#include "sg_pass.h"
#include "sg_runtime.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MODELS_DIR SG_BINARY_DIR "/test-models"
#define SEEDS 3 /* runs per case; enough for both branches of the If models */

/* ------------------------------------------------------------- inputs */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/*
 * The value of graph input v for run `seed`: its declared dtype and shape
 * (symbolic or unknown dims take free_dim), floats uniform in [lo, hi),
 * integers uniform in [-50, 50), bools 0 or 1. Depends only on the seed,
 * the input's name and type, so both sides of a comparison agree.
 */
static sg_rt_value *make_input(const sg_value *v, uint64_t seed, double lo, double hi,
                               int64_t free_dim)
{
    const sg_type *t = v->type;
    ck_assert_msg(t && t->kind == SG_TYPE_TENSOR && t->has_elem_type && t->shape,
                  "input '%s' has no tensor type with a shape", v->name);
    int64_t dims[SG_MAX_RANK];
    for (uint32_t i = 0; i < t->shape->rank; i++)
        dims[i] = t->shape->dims[i].kind == SG_DIM_VALUE ? t->shape->dims[i].value : free_dim;
    sg_rt_value *x;
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_tensor_create(t->elem_type, dims, t->shape->rank, &x, &d), &d);
    uint64_t s = seed * 0x100000001b3ull ^ name_hash(v->name);
    for (int64_t i = 0; i < x->numel; i++) {
        double u = (double)(splitmix(&s) >> 11) * 0x1.0p-53;
        if (x->dtype == SG_DTYPE_BOOL)
            sg_rt_set_i64(x, i, u < 0.5);
        else if (x->dtype == SG_DTYPE_FLOAT || x->dtype == SG_DTYPE_DOUBLE ||
                 x->dtype == SG_DTYPE_FLOAT16 || x->dtype == SG_DTYPE_BFLOAT16)
            sg_rt_set_f64(x, i, lo + (hi - lo) * u);
        else
            sg_rt_set_i64(x, i, (int64_t)floor(-50 + 100 * u));
    }
    return x;
}

/* ---------------------------------------------------------- running */

static sg_model *load(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", MODELS_DIR, name);
    struct sg_diag d = {0};
    sg_model *m = NULL;
    ck_assert_ok(sg_model_load(path, NULL, &m, &d), &d);
    return m;
}

/* Run the pipeline `specs` on m (verifying after every pass); returns the
 * number of changes. */
static size_t rewrite(sg_model *m, const char *const *specs)
{
    struct sg_pipeline *p;
    struct sg_diag d = {0};
    ck_assert_int_eq(sg_pipeline_create(&p), SG_OK);
    p->verify = true;
    for (; *specs; specs++)
        ck_assert_ok(sg_pipeline_add_spec(p, *specs, &d), &d);
    struct sg_run_report rep = {0};
    ck_assert_ok(sg_pipeline_run(p, m, &rep, &d), &d);
    size_t changes = rep.changes;
    sg_run_report_clear(&rep);
    sg_pipeline_free(p);
    return changes;
}

struct run {
    sg_rt *rt;
    uint32_t n_out;
};

/* Run m with the inputs of `seed`; the outputs stay in r->rt. */
static void run_model(sg_model *m, enum sg_numerics numerics, uint64_t seed, double lo, double hi,
                      int64_t free_dim, struct run *r)
{
    struct sg_rt_opts opts = {0};
    opts.numerics = numerics;
    struct sg_diag d = {0};
    ck_assert_ok(sg_rt_create(m, &opts, &r->rt, &d), &d);
    for (uint32_t i = 0; i < sg_rt_n_inputs(r->rt); i++) {
        const sg_value *v = sg_rt_input(r->rt, i);
        sg_rt_value *x = make_input(v, seed, lo, hi, free_dim);
        ck_assert_ok(sg_rt_set_input(r->rt, v->name, x, &d), &d);
        sg_rt_value_unref(x);
    }
    ck_assert_ok(sg_rt_run(r->rt, &d), &d);
    r->n_out = sg_rt_n_outputs(r->rt);
}

/* Non-finite elements of every float output. */
static int64_t count_nonfinite(const struct run *r)
{
    int64_t bad = 0;
    for (uint32_t o = 0; o < r->n_out; o++) {
        const sg_rt_value *v = sg_rt_output(r->rt, o);
        if (v->kind != SG_RT_TENSOR)
            continue;
        for (int64_t i = 0; i < v->numel; i++)
            bad += !isfinite(sg_rt_get_f64(v, i));
    }
    return bad;
}

/* ------------------------------------------------------------ cases */

enum cmp { EXACT, CLOSE };

static const struct num_case {
    const char *model;
    const char *specs[4];
    enum cmp cmp;
    /* CLOSE: |after - before| <= atol * max|before| of that output + rtol * |before| */
    double rtol, atol;
    double lo, hi;    /* float input range */
    int64_t free_dim; /* symbolic and unknown input dims */
} cases[] = {
    {"identities.onnx", {"remove-identity:dropout=true"}, EXACT, 0, 0, -1, 1, 1},
    {"dead.onnx", {"eliminate-dead:inputs=true"}, EXACT, 0, 0, -1, 1, 1},
    {"casts.onnx", {"merge-casts"}, EXACT, 0, 0, -4, 4, 1},
    {"names.onnx", {"unique-names"}, EXACT, 0, 0, -1, 1, 1},
    {"unsorted.onnx", {"toposort"}, EXACT, 0, 0, -1, 1, 1},
    {"exp_overflow.onnx", {"rename:prefix=p_,target=all"}, EXACT, 0, 0, 0, 1, 1},
    {"if_exp.onnx", {"rename:suffix=_r,target=all"}, EXACT, 0, 0, -1, 1, 1},
    {"fold_consts.onnx", {"fold-constants:shapes=true"}, EXACT, 0, 0, -1, 1, 1},
    {"fold_consts.onnx", {"fold-constants:max_bytes=0,eliminate=false"}, EXACT, 0, 0, -1, 1, 1},
    {"fold_if.onnx", {"fold-constants"}, EXACT, 0, 0, -1, 1, 1},
    {"rebatch.onnx", {"fold-constants"}, EXACT, 0, 0, -1, 1, 1},
    {"fold_ir3.onnx", {"fold-constants"}, EXACT, 0, 0, -1, 1, 1},
    {"fold_bn.onnx", {"fold-bn"}, CLOSE, 1e-5, 1e-5, -1, 1, 1},
    {"fold_bn_if.onnx", {"fold-bn"}, CLOSE, 1e-5, 1e-5, -1, 1, 1},
    {"fold_bn_ir3.onnx", {"fold-bn"}, CLOSE, 1e-5, 1e-5, -1, 1, 1},
    {"fold_bn_if_ir3.onnx", {"fold-bn"}, CLOSE, 1e-5, 1e-5, -1, 1, 1},
    /* float16 weights: both sides round every node to float16. */
    {"fold_bn_fp16.onnx", {"fold-bn"}, CLOSE, 4e-3, 4e-3, -1, 1, 1},
    {"fold_bn_shared.onnx", {"fold-bn"}, CLOSE, 1e-5, 1e-5, -1, 1, 1},
    {"expand_bool.onnx", {"cast-around"}, EXACT, 0, 0, 0, 1, 1},
    {"free_batch.onnx", {"set-batch:batch=4"}, EXACT, 0, 0, -1, 1, 4},
    {"exp_overflow.onnx", {"insert-clip"}, EXACT, 0, 0, 0, 1, 1},
    {"if_exp.onnx", {"insert-clip:position=after"}, EXACT, 0, 0, -1, 1, 1},
    /* to-fp16: a float16 tolerance (10 mantissa bits, a few roundings). */
    {"exp_overflow.onnx", {"to-fp16"}, CLOSE, 1e-2, 1e-3, 0, 1, 1},
};

static void compare(const struct num_case *c, uint64_t seed, const struct run *a,
                    const struct run *b)
{
    const char *spec = c->specs[0];
    ck_assert_msg(a->n_out == b->n_out, "%s %s: %u outputs before, %u after", c->model, spec,
                  a->n_out, b->n_out);
    for (uint32_t o = 0; o < a->n_out; o++) {
        const char *name = sg_rt_output_info(a->rt, o)->name;
        ck_assert_str_eq(name, sg_rt_output_info(b->rt, o)->name);
        const sg_rt_value *x = sg_rt_output(a->rt, o), *y = sg_rt_output(b->rt, o);
        char sx[300], sy[300];
        ck_assert_msg(x->kind == SG_RT_TENSOR && y->kind == SG_RT_TENSOR && x->dtype == y->dtype &&
                          x->rank == y->rank &&
                          !memcmp(x->dims, y->dims, x->rank * sizeof *x->dims),
                      "%s %s seed %llu output '%s': %s before, %s after", c->model, spec,
                      (unsigned long long)seed, name, sg_rt_value_format(x, sx, sizeof sx),
                      sg_rt_value_format(y, sy, sizeof sy));
        double scale = 0;
        for (int64_t i = 0; i < x->numel; i++)
            scale = fmax(scale, fabs(sg_rt_get_f64(x, i)));
        for (int64_t i = 0; i < x->numel; i++) {
            double p = sg_rt_get_f64(x, i), q = sg_rt_get_f64(y, i);
            bool ok;
            if (isnan(p) || isnan(q))
                ok = isnan(p) && isnan(q);
            else if (c->cmp == EXACT)
                ok = p == q && sg_rt_get_i64(x, i) == sg_rt_get_i64(y, i);
            else
                ok = fabs(q - p) <= c->atol * scale + c->rtol * fabs(p);
            ck_assert_msg(ok, "%s %s seed %llu output '%s'[%lld]: before %.9g, after %.9g (%s)",
                          c->model, spec, (unsigned long long)seed, name, (long long)i, p, q,
                          c->cmp == EXACT ? "must be equal" : "out of tolerance");
        }
    }
}

START_TEST(test_preserves_outputs)
{
    const struct num_case *c = &cases[_i];
    sg_model *before = load(c->model), *after = load(c->model);
    ck_assert_msg(rewrite(after, c->specs) > 0,
                  "%s on %s changed nothing: the test would prove "
                  "nothing",
                  c->specs[0], c->model);
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        struct run a, b;
        run_model(before, SG_NUMERICS_FP32, seed, c->lo, c->hi, c->free_dim, &a);
        run_model(after, SG_NUMERICS_FP32, seed, c->lo, c->hi, c->free_dim, &b);
        compare(c, seed, &a, &b);
        sg_rt_free(a.rt);
        sg_rt_free(b.rt);
    }
    sg_model_free(before);
    sg_model_free(after);
}
END_TEST

/* insert-clip fixes the float16 overflow: with inputs in [0, 5) the
 * emulated float16 run (SG_NUMERICS_FP16_INF) of exp_overflow.onnx has
 * inf/NaN outputs before the pass and none after. */
START_TEST(test_clip_fixes_overflow)
{
    sg_model *before = load("exp_overflow.onnx"), *after = load("exp_overflow.onnx");
    const char *specs[] = {"insert-clip", NULL};
    ck_assert_uint_gt(rewrite(after, specs), 0);
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        struct run a, b, g;
        run_model(before, SG_NUMERICS_FP16_INF, seed, 0, 5, 1, &a);
        run_model(after, SG_NUMERICS_FP16_INF, seed, 0, 5, 1, &b);
        int64_t bad_before = count_nonfinite(&a), bad_after = count_nonfinite(&b);
        ck_assert_msg(bad_before > 0,
                      "seed %llu: the float16 run had no inf/NaN before the fix, "
                      "so the model no longer shows the overflow",
                      (unsigned long long)seed);
        ck_assert_msg(bad_after == 0, "seed %llu: %lld inf/NaN outputs after insert-clip",
                      (unsigned long long)seed, (long long)bad_after);
        /* And the fixed float16 run is close to the float32 golden run. */
        run_model(before, SG_NUMERICS_FP32, seed, 0, 5, 1, &g);
        const sg_rt_value *x = sg_rt_output(g.rt, 0), *y = sg_rt_output(b.rt, 0);
        for (int64_t i = 0; i < x->numel; i++) {
            double p = sg_rt_get_f64(x, i), q = sg_rt_get_f64(y, i);
            ck_assert_msg(fabs(q - p) <= 1e-2 * fabs(p) + 1e-2,
                          "seed %llu y[%lld]: golden %.9g, fixed float16 %.9g",
                          (unsigned long long)seed, (long long)i, p, q);
        }
        sg_rt_free(a.rt);
        sg_rt_free(b.rt);
        sg_rt_free(g.rt);
    }
    sg_model_free(before);
    sg_model_free(after);
}
END_TEST

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

Suite *suite_pass_numerics(void)
{
    Suite *s = suite_create("pass_numerics");
    TCase *tc = tcase_create("runtime");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_preserves_outputs, 0, COUNT(cases));
    tcase_add_test(tc, test_clip_fixes_overflow);
    suite_add_tcase(s, tc);
    return s;
}
