/*
 * fuzz_runtime.c - libFuzzer harness for the reference runtime.
 *
 * Loads arbitrary bytes as a model (sg_model_load_buffer, no folder), and
 * for every model that loads lists the nodes it cannot run (sg_rt_check),
 * plans it (sg_rt_create; a mock OM with its float16 emulation), binds
 * tiny inputs made from the declared types (symbolic and unknown dims 2,
 * values drawn from a generator seeded by the bytes) and runs it, under
 * the limits a caller evaluating untrusted models sets: one output at most
 * 1 MB (max_tensor_bytes, scan outputs and loop-carried values included)
 * and 256 iterations per Loop. Any error is fine; a crash, a sanitizer
 * report, a leak, a hang or a run past the memory limit is a finding.
 *
 * Built and run by tools/fuzz/run_runtime.sh (clang, libFuzzer, ASan and
 * UBSan); tests/io/fuzz_regressions/runtime/ holds inputs it once failed on,
 * replayed by ctest fuzz_runtime (tests/fuzz_replay.c).
 */
#include "sg_io.h"
#include "sg_mockom.h"
#include "sg_runtime.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT_BYTES (64u << 10) /* larger declared inputs: planned, not run */

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void ignore(const sg_node *n, const char *reason, void *ctx)
{
    (void)n;
    (void)reason;
    (void)ctx;
}

/* A tensor of declared type t (elements from *seed): small integers,
 * floats in [-2, 2], bools; NULL when the type cannot be made small. */
static sg_rt_value *make_tensor(const sg_type *t, uint64_t *seed)
{
    int32_t dt = t && t->has_elem_type ? t->elem_type : SG_DTYPE_FLOAT;
    int64_t dims[SG_MAX_RANK];
    uint32_t rank = 1;
    dims[0] = 2;
    if (t && t->shape) {
        if (t->shape->rank > SG_MAX_RANK)
            return NULL;
        rank = t->shape->rank;
        for (uint32_t d = 0; d < rank; d++)
            dims[d] = t->shape->dims[d].kind == SG_DIM_VALUE ? t->shape->dims[d].value : 2;
    }
    size_t es = sg_rt_elem_size(dt), bytes = es;
    for (uint32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || (dims[d] && bytes > MAX_INPUT_BYTES / (size_t)dims[d]))
            return NULL;
        bytes *= (size_t)dims[d];
    }
    sg_rt_value *v = NULL;
    struct sg_diag diag = {0};
    if (!es || sg_rt_tensor_create(dt, dims, rank, &v, &diag) != SG_OK)
        return NULL;
    if (dt == SG_DTYPE_STRING)
        return v; /* empty strings */
    for (int64_t i = 0; i < v->numel; i++) {
        uint64_t r = next(seed);
        if (sg_dtype_is_float(dt))
            sg_rt_set_f64(v, i, (double)(r >> 11) * (4.0 / 9007199254740992.0) - 2.0);
        else
            sg_rt_set_i64(v, i, (int64_t)(r % 6) - 2);
    }
    return v;
}

/* A value for graph input gv: a tensor, a sequence of two, an optional. */
static sg_rt_value *make_input(const sg_value *gv, uint64_t *seed)
{
    const sg_type *t = gv->type;
    if (t && t->kind == SG_TYPE_SEQUENCE) {
        sg_rt_value *s = NULL, *a = NULL;
        const sg_type *e = t->elem;
        if (e && e->kind != SG_TYPE_TENSOR)
            return NULL;
        if (sg_rt_sequence_create(e && e->has_elem_type ? e->elem_type : SG_DTYPE_FLOAT, &s))
            return NULL;
        for (int i = 0; i < 2; i++) {
            if (!(a = make_tensor(e, seed)) || sg_rt_sequence_append(s, a)) {
                sg_rt_value_unref(a);
                sg_rt_value_unref(s);
                return NULL;
            }
            sg_rt_value_unref(a);
        }
        return s;
    }
    if (t && t->kind == SG_TYPE_OPTIONAL) {
        const sg_type *e = t->elem;
        if (e && e->kind != SG_TYPE_TENSOR)
            return NULL;
        sg_rt_value *a = make_tensor(e, seed), *o = NULL;
        if (a && sg_rt_optional_create(a, SG_RT_TENSOR, a->dtype, &o))
            o = NULL;
        sg_rt_value_unref(a);
        return o;
    }
    if (t && t->kind != SG_TYPE_TENSOR && t->kind != SG_TYPE_NONE)
        return NULL;
    return make_tensor(t, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sg_model *m = NULL;
    struct sg_diag d = {0};
    if (sg_model_load_buffer(data, size, NULL, "fuzz", NULL, &m, &d) != SG_OK)
        return 0;
    if (!m->graph)
        goto out;
    sg_rt_check(m, ignore, NULL);
    struct sg_rt_opts o = {0};
    o.threads = 1;
    o.max_tensor_bytes = 1u << 20;
    o.max_loop_iterations = 256;
    if (sg_mockom_is(m) && sg_rt_opts_mock(m, &o, &d) != SG_OK)
        goto out;
    sg_rt *rt = NULL;
    if (sg_rt_create(m, &o, &rt, &d) != SG_OK)
        goto out;
    uint64_t seed = size;
    for (size_t i = 0; i < size && i < 64; i++)
        seed = seed * 131 + data[i];
    bool ok = true;
    for (uint32_t i = 0; ok && i < sg_rt_n_inputs(rt); i++) {
        const sg_value *gv = sg_rt_input(rt, i);
        sg_rt_value *v = make_input(gv, &seed);
        ok = v && sg_rt_set_input(rt, gv->name, v, &d) == SG_OK;
        sg_rt_value_unref(v);
    }
    if (ok)
        (void)sg_rt_run(rt, &d);
    sg_rt_free(rt);
out:
    sg_model_free(m);
    return 0;
}
