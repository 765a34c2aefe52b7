/*
 * inputs.c - a run's inputs from a command line's -i files, --input-shape
 * and --random, and saving them (see sg_verify.h).
 */
#include "sg_alloc.h"
#include "sg_dumpname.h"
#include "sg_io.h"
#include "sg_verify.h"

#include <errno.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sg_verify_inputs_init(struct sg_verify_inputs *in)
{
    memset(in, 0, sizeof *in);
    in->lo = 0;
    in->hi = 1;
}

void sg_verify_inputs_free(struct sg_verify_inputs *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n_files; i++)
        sg_free(in->files[i]);
    sg_free(in->files);
    sg_free(in->shapes);
    sg_verify_inputs_init(in);
}

bool sg_verify_inputs_add_file(struct sg_verify_inputs *in, const char *arg)
{
    if (in->n_files == in->cap_files) {
        size_t cap = in->cap_files ? in->cap_files * 2 : 4;
        char **g = sg_realloc(in->files, cap * sizeof *g);
        if (!g)
            return false;
        in->files = g;
        in->cap_files = cap;
    }
    if (!(in->files[in->n_files] = sg_strdup(arg)))
        return false;
    in->n_files++;
    return true;
}

static struct sg_verify_shape *new_shape(struct sg_verify_inputs *in)
{
    if (in->n_shapes == in->cap_shapes) {
        size_t cap = in->cap_shapes ? in->cap_shapes * 2 : 4;
        struct sg_verify_shape *g = sg_realloc(in->shapes, cap * sizeof *g);
        if (!g)
            return NULL;
        in->shapes = g;
        in->cap_shapes = cap;
    }
    struct sg_verify_shape *a = &in->shapes[in->n_shapes++];
    memset(a, 0, sizeof *a);
    return a;
}

bool sg_verify_inputs_add_shapes(struct sg_verify_inputs *in, const char *s)
{
    while (*s) {
        struct sg_verify_shape *a = new_shape(in);
        if (!a)
            return false;
        const char *semi = strchr(s, ';');
        const char *end = semi ? semi : s + strlen(s);
        /* The name may contain ':' (e.g. "input:0"): split at the last one
         * before this entry's end. */
        const char *colon = NULL;
        for (const char *p = s; p < end; p++)
            if (*p == ':')
                colon = p;
        if (!colon || colon == s || (size_t)(colon - s) >= sizeof a->name)
            return false;
        memcpy(a->name, s, (size_t)(colon - s));
        const char *p = colon + 1;
        while (p < end) {
            char *e;
            long long v = strtoll(p, &e, 10);
            if (e == p || v < 0 || a->rank == SG_MAX_RANK)
                return false;
            a->dims[a->rank++] = v;
            p = e;
            if (p < end && *p != ',')
                return false;
            if (p < end)
                p++;
        }
        s = semi ? semi + 1 : end;
    }
    return true;
}

bool sg_verify_inputs_set_seed(struct sg_verify_inputs *in, const char *text)
{
    char *e;
    unsigned long long seed = strtoull(text, &e, 10);
    if (!*text || *e || *text == '-')
        return false;
    in->seed = seed;
    in->random = true;
    return true;
}

bool sg_verify_inputs_set_range(struct sg_verify_inputs *in, const char *text)
{
    char *e;
    double lo = strtod(text, &e);
    if (e == text || *e != ',')
        return false;
    const char *p = e + 1;
    double hi = strtod(p, &e);
    /* Finite bounds and a finite width: inf, nan or -1e308,1e308 would
     * fill every input with inf or NaN. */
    if (e == p || *e || !(lo < hi) || !isfinite(lo) || !isfinite(hi) || !isfinite(hi - lo))
        return false;
    in->lo = lo;
    in->hi = hi;
    in->have_range = true;
    return true;
}

static const struct sg_verify_shape *find_shape(const struct sg_verify_inputs *in, const char *name)
{
    for (size_t i = 0; i < in->n_shapes; i++)
        if (strcmp(in->shapes[i].name, name) == 0)
            return &in->shapes[i];
    return NULL;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The values random inputs of a dtype can hold: floats up to their
 * largest finite value, integers (filled with floor(v), v < HI) from their
 * minimum to their maximum + 1; false for dtypes without a range here
 * (bool takes 0 or 1 whatever the range). */
static bool dtype_range(int32_t dtype, double *min, double *max)
{
    static const struct {
        int32_t dtype;
        double min, max;
    } ranges[] = {
        {SG_DTYPE_FLOAT16, -65504.0, 65504.0},
        {SG_DTYPE_BFLOAT16, -3.3895313892515355e38, 3.3895313892515355e38},
        {SG_DTYPE_FLOAT, -3.4028234663852886e38, 3.4028234663852886e38},
        {SG_DTYPE_INT8, -128.0, 128.0},
        {SG_DTYPE_UINT8, 0.0, 256.0},
        {SG_DTYPE_INT16, -32768.0, 32768.0},
        {SG_DTYPE_UINT16, 0.0, 65536.0},
        {SG_DTYPE_INT32, -2147483648.0, 2147483648.0},
        {SG_DTYPE_UINT32, 0.0, 4294967296.0},
        {SG_DTYPE_INT64, -9223372036854775808.0, 9223372036854775808.0},
        {SG_DTYPE_UINT64, 0.0, 9223372036854775808.0}, /* set as int64 */
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (ranges[i].dtype == dtype) {
            *min = ranges[i].min;
            *max = ranges[i].max;
            return true;
        }
    return false;
}

static sg_status random_input(const sg_value *gv, int32_t dtype, const int64_t *dims, uint32_t rank,
                              uint64_t seed, double lo, double hi, sg_rt_value **out,
                              struct sg_diag *d)
{
    if (dtype == SG_DTYPE_STRING || !sg_rt_elem_size(dtype))
        return sg_diag_set(d, SG_EUNSUPPORTED, "input '%s': cannot make random %s values", gv->name,
                           sg_dtype_name(dtype));
    double min, max;
    if (dtype_range(dtype, &min, &max) && (lo < min || hi > max))
        return sg_diag_set(d, SG_ERANGE, "input '%s': --range %g,%g does not fit %s", gv->name, lo,
                           hi, sg_dtype_name(dtype));
    sg_status st = sg_rt_tensor_create(dtype, dims, rank, out, d);
    if (st) {
        sg_diag_prefix(d, "input '%s'", gv->name);
        return st;
    }
    uint64_t s = seed;
    for (const char *p = gv->name; *p; p++)
        s = (s ^ (uint8_t)*p) * 0x100000001b3ull;
    for (int64_t i = 0; i < (*out)->numel; i++) {
        double u = (double)(mix(&s) >> 11) * (1.0 / 9007199254740992.0);
        double v = lo + (hi - lo) * u;
        if (dtype == SG_DTYPE_BOOL)
            sg_rt_set_i64(*out, i, u < 0.5);
        else if (sg_dtype_is_float(dtype) || sg_dtype_is_float8(dtype) ||
                 dtype == SG_DTYPE_FLOAT4E2M1)
            sg_rt_set_f64(*out, i, v); /* rounded to the type, saturating */
        else
            sg_rt_set_i64(*out, i, (int64_t)floor(v));
    }
    return SG_OK;
}

/* The dtype and shape an input file or random value should have. */
static sg_status input_spec(const sg_value *gv, const struct sg_verify_shape *given, int32_t *dtype,
                            int64_t *dims, uint32_t *rank, bool need_shape, struct sg_diag *d)
{
    const sg_type *t = gv->type;
    char buf[512];
    if (!t || t->kind != SG_TYPE_TENSOR || !t->has_elem_type)
        return sg_diag_set(d, SG_EUNSUPPORTED, "input '%s' is not a tensor of a known type",
                           gv->name);
    *dtype = t->elem_type;
    if (given) {
        if (t->shape && t->shape->rank != given->rank)
            return sg_diag_set(d, SG_ESHAPE,
                               "--input-shape for '%s' has rank %u, the model expects %s", gv->name,
                               given->rank, sg_type_format(t, buf, sizeof buf));
        *rank = given->rank;
        memcpy(dims, given->dims, given->rank * sizeof dims[0]);
        return SG_OK;
    }
    if (!t->shape) {
        if (need_shape)
            return sg_diag_set(d, SG_ESHAPE, "input '%s' has no known shape: give --input-shape",
                               gv->name);
        *rank = 0;
        return SG_OK;
    }
    *rank = t->shape->rank;
    for (uint32_t i = 0; i < *rank; i++) {
        if (t->shape->dims[i].kind != SG_DIM_VALUE) {
            if (need_shape)
                return sg_diag_set(d, SG_ESHAPE,
                                   "input '%s' has shape %s with a symbolic dimension: give "
                                   "--input-shape \"%s:...\"",
                                   gv->name, sg_type_format(t, buf, sizeof buf), gv->name);
            dims[i] = -1;
        } else {
            dims[i] = t->shape->dims[i].value;
        }
    }
    return SG_OK;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static sg_status load_input(const sg_value *gv, const char *file,
                            const struct sg_verify_shape *given, sg_rt_value **out,
                            struct sg_diag *d)
{
    int32_t dtype;
    int64_t dims[SG_MAX_RANK];
    uint32_t rank = 0;
    bool bin = has_suffix(file, ".bin");
    sg_status st = input_spec(gv, given, &dtype, dims, &rank, bin, d);
    if (st)
        return st;
    struct sg_array a;
    st = sg_tensor_file_read(file, dtype, dims, rank, &a, d);
    if (st) {
        sg_diag_prefix(d, "input '%s'", gv->name);
        return st;
    }
    if (given && (a.rank != given->rank || memcmp(a.dims, given->dims, a.rank * sizeof dims[0]))) {
        char s1[256], s2[256];
        st = sg_diag_set(d, SG_ESHAPE, "input '%s': %s has shape %s, --input-shape says %s",
                         gv->name, file, sg_rt_dims_format(a.dims, a.rank, s1, sizeof s1),
                         sg_rt_dims_format(given->dims, given->rank, s2, sizeof s2));
        sg_array_free(&a);
        return st;
    }
    st = sg_rt_tensor_from_array(&a, out, d);
    sg_array_free(&a);
    return st;
}

char *sg_verify_inputs_shape_text(const struct sg_verify_inputs *in)
{
    if (!in->n_shapes)
        return NULL;
    size_t cap = 1;
    for (size_t i = 0; i < in->n_shapes; i++)
        cap += strlen(in->shapes[i].name) + 2 + in->shapes[i].rank * 21;
    char *s = sg_malloc(cap);
    if (!s)
        return NULL;
    size_t len = 0;
    for (size_t i = 0; i < in->n_shapes; i++) {
        const struct sg_verify_shape *sh = &in->shapes[i];
        len += (size_t)snprintf(s + len, cap - len, "%s%s:", i ? ";" : "", sh->name);
        for (uint32_t k = 0; k < sh->rank; k++)
            len += (size_t)snprintf(s + len, cap - len, "%s%lld", k ? "," : "",
                                    (long long)sh->dims[k]);
    }
    return s;
}

void sg_verify_values_clear(struct sg_verify_values *v)
{
    if (!v)
        return;
    for (uint32_t r = 0; r < v->n; r++) {
        if (v->values)
            sg_rt_value_unref(v->values[r]);
        if (v->names)
            sg_free(v->names[r]);
    }
    sg_free(v->values);
    sg_free(v->names);
    memset(v, 0, sizeof *v);
}

sg_rt_value *sg_verify_values_find(const struct sg_verify_values *v, const char *name)
{
    for (uint32_t r = 0; r < v->n; r++)
        if (strcmp(v->names[r], name) == 0)
            return v->values[r];
    return NULL;
}

sg_status sg_verify_values_save(const struct sg_verify_values *v, const char *dir, char **files,
                                struct sg_diag *d)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return sg_diag_set(d, SG_EIO, "cannot create '%s': %s", dir, strerror(errno));
    char **rel = sg_calloc(v->n + 1, sizeof *rel);
    if (!rel)
        return sg_diag_set(d, SG_ENOMEM, "out of memory");
    sg_status st = SG_OK;
    for (uint32_t r = 0; r < v->n && !st; r++) {
        char safe[SG_DUMP_NAME_MAX + 1], name[SG_DUMP_NAME_MAX + 32];
        sg_dump_sanitize(v->names[r], safe, SG_DUMP_NAME_MAX - 16);
        /* Two names may sanitize alike: number the later ones. */
        for (unsigned n = 0;; n++) {
            if (n)
                snprintf(name, sizeof name, "%s_%u.npy", safe, n);
            else
                snprintf(name, sizeof name, "%s.npy", safe);
            bool clash = false;
            for (uint32_t k = 0; k < r; k++)
                clash |= strcmp(rel[k], name) == 0;
            if (!clash)
                break;
        }
        size_t plen = strlen(dir) + strlen(name) + 2;
        char *path = sg_malloc(plen);
        if (!(rel[r] = sg_strdup(name)) || !path) {
            sg_free(path);
            st = sg_diag_set(d, SG_ENOMEM, "out of memory");
            break;
        }
        snprintf(path, plen, "%s/%s", dir, name);
        struct sg_array a;
        st = sg_rt_tensor_to_array(v->values[r], &a, d);
        if (!st) {
            st = sg_npy_write(path, &a, d);
            sg_array_free(&a);
        }
        sg_free(path);
    }
    for (uint32_t r = 0; r < v->n; r++) {
        if (files && !st)
            files[r] = rel[r];
        else
            sg_free(rel[r]);
    }
    sg_free(rel);
    return st;
}

/* The input of rt named by the first `len` bytes of s, or n_req. */
static uint32_t input_named(const sg_rt *rt, const char *s, size_t len)
{
    uint32_t n_req = sg_rt_n_inputs(rt), r;
    for (r = 0; r < n_req; r++)
        if (strlen(sg_rt_input(rt, r)->name) == len &&
            strncmp(sg_rt_input(rt, r)->name, s, len) == 0)
            break;
    return r;
}

sg_status sg_verify_inputs_load(const struct sg_verify_inputs *in, const sg_rt *rt,
                                struct sg_verify_values *values, struct sg_diag *d)
{
    uint32_t n_req = sg_rt_n_inputs(rt);
    size_t n_files = in->n_files;
    sg_rt_value **bound = sg_calloc(n_req + 1, sizeof *bound);
    /* Per -i: the input it names (n_req: positional) and the file part. */
    uint32_t *named = sg_calloc(n_files + 1, sizeof *named);
    const char **file = sg_calloc(n_files + 1, sizeof *file);
    sg_status st = SG_OK;
    if (!bound || !named || !file) {
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < in->n_shapes; i++) {
        if (input_named(rt, in->shapes[i].name, strlen(in->shapes[i].name)) == n_req) {
            st = sg_diag_set(d, SG_ENOTFOUND,
                             "--input-shape names '%s', which is not an input of the model",
                             in->shapes[i].name);
            goto out;
        }
    }
    /* NAME=FILE names an input when NAME is one; otherwise the whole
     * argument is a file name (that may hold '='), which must exist. */
    for (size_t i = 0; i < n_files; i++) {
        const char *arg = in->files[i];
        const char *eq = strchr(arg, '=');
        named[i] = n_req;
        file[i] = arg;
        if (!eq)
            continue;
        size_t nl = (size_t)(eq - arg);
        uint32_t r = input_named(rt, arg, nl);
        if (r < n_req) {
            named[i] = r;
            file[i] = eq + 1;
        } else if (access(arg, F_OK) != 0) {
            st = sg_diag_set(d, SG_ENOTFOUND, "-i %s: the model has no input named '%.*s'", arg,
                             (int)nl, arg);
            goto out;
        }
    }
    for (size_t i = 0; i < n_files; i++) {
        uint32_t r = named[i];
        if (r < n_req) {
            if (bound[r]) {
                st = sg_diag_set(d, SG_EDUP, "input '%s' is given twice", sg_rt_input(rt, r)->name);
                goto out;
            }
        } else {
            /* The first input not named by any -i NAME=FILE and not yet bound. */
            for (r = 0; r < n_req; r++) {
                bool is_named = false;
                for (size_t j = 0; j < n_files; j++)
                    is_named |= named[j] == r;
                if (!is_named && !bound[r])
                    break;
            }
            if (r == n_req) {
                st = sg_diag_set(d, SG_EINVAL, "-i %s: the model has only %u inputs", file[i],
                                 n_req);
                goto out;
            }
        }
        const sg_value *gv = sg_rt_input(rt, r);
        if ((st = load_input(gv, file[i], find_shape(in, gv->name), &bound[r], d)))
            goto out;
    }
    for (uint32_t r = 0; r < n_req; r++) {
        const sg_value *gv = sg_rt_input(rt, r);
        if (bound[r])
            continue;
        char buf[512];
        if (!in->random) {
            st = sg_diag_set(d, SG_EUNDEF, "input '%s' (%s) was not given; use -i or --random",
                             gv->name, sg_type_format(gv->type, buf, sizeof buf));
            goto out;
        }
        int32_t dtype;
        int64_t dims[SG_MAX_RANK];
        uint32_t rank;
        if ((st = input_spec(gv, find_shape(in, gv->name), &dtype, dims, &rank, true, d)) ||
            (st = random_input(gv, dtype, dims, rank, in->seed, in->lo, in->hi, &bound[r], d)))
            goto out;
    }
out:
    sg_free(named);
    sg_free(file);
    memset(values, 0, sizeof *values);
    char **names = st ? NULL : sg_calloc(n_req + 1, sizeof *names);
    if (!st && !names)
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
    for (uint32_t r = 0; !st && r < n_req; r++)
        if (!(names[r] = sg_strdup(sg_rt_input(rt, r)->name)))
            st = sg_diag_set(d, SG_ENOMEM, "out of memory");
    values->n = n_req;
    values->names = names;
    values->values = bound;
    if (st)
        sg_verify_values_clear(values);
    return st;
}
