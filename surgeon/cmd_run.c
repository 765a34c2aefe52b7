/*
 * cmd_run.c - `surgeon run`: run a model on the reference runtime and dump
 * its outputs (or every tensor) in the msit naming, with manifest.json.
 *
 * Everything is written into a temporary folder beside DIR and renamed to
 * DIR at the end, so a failed run leaves nothing behind; a DIR from an
 * earlier run (it has manifest.json) is replaced, any other non-empty DIR
 * is refused.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_dump.h"
#include "sg_io.h"
#include "sg_runtime.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_run = {
    "run",
    "run a model on the CPU reference runtime and dump its tensors",
    "usage: surgeon run MODEL [-i FILE | -i NAME=FILE ...] [--input-shape SHAPES]\n"
    "                   [--random SEED [--range LO,HI]] -o DIR [--dump all|outputs]\n"
    "                   [--threads N]\n"
    "       surgeon run MODEL --check\n\n"
    "Run MODEL in float32 (the golden reference) and write the results to DIR:\n"
    "<node>.<output>.<timestamp_us>.npy files in the msit naming (mapping.csv\n"
    "for names too long for a file), inputs/<input>.npy with the inputs used,\n"
    "and manifest.json listing every tensor in execution order.\n\n"
    "  -i, --input FILE|NAME=FILE  an input as .npy, .pb (TensorProto) or .bin\n"
    "                        (raw data of the model's dtype and shape; a float16\n"
    "                        file for a float32 input is accepted by its size).\n"
    "                        Without NAME, files fill the inputs in model order.\n"
    "  --input-shape SHAPES  \"x:1,3,224,224;y:4,77\": shapes for .bin and random\n"
    "                        inputs, needed when the model's shape is symbolic\n"
    "  --random SEED         fill every input not given with -i with uniform\n"
    "                        random values in [0,1) (like msit), reproducible per\n"
    "                        SEED; integer inputs get floor(value) (so 0 unless\n"
    "                        --range is given), bool inputs 0 or 1\n"
    "  --range LO,HI         the interval for --random (default 0,1)\n"
    "  -o, --output DIR      where to write (replaced if it holds an earlier run)\n"
    "  --dump all|outputs    every node output of the main graph, or only the\n"
    "                        graph outputs (default)\n"
    "  --threads N           BLAS threads (default: OpenBLAS's choice)\n"
    "  --check               list every node without a kernel and exit (0: none)\n\n"
    "Bad input (unknown name, missing input, wrong dtype, shape or size, a shape\n"
    "a node cannot take) is an error naming the input or node and both shapes.\n",
    run,
};

#define MAX_INPUTS 256

struct input_arg {
    const char *name; /* NULL: positional */
    const char *file;
};

struct shape_arg {
    char name[256];
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
};

/* "x:1,3,224,224;y:4" into shapes[]. */
static bool parse_shapes(const char *s, struct shape_arg *out, size_t *n, size_t max)
{
    while (*s) {
        if (*n == max)
            return false;
        struct shape_arg *a = &out[(*n)++];
        memset(a, 0, sizeof *a);
        const char *colon = strrchr(s, ':');
        const char *semi = strchr(s, ';');
        const char *end = semi ? semi : s + strlen(s);
        /* The name may contain ':' (e.g. "input:0"): split at the last one
         * before this entry's end. */
        colon = NULL;
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

static const struct shape_arg *find_shape(const struct shape_arg *shapes, size_t n,
                                          const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(shapes[i].name, name) == 0)
            return &shapes[i];
    return NULL;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            empty = false;
    closedir(d);
    return empty;
}

/* Whether `out` can be (re)placed: 0 absent, 1 empty, 2 an earlier run, -1 no. */
static int out_state(const char *out)
{
    struct stat st;
    if (stat(out, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return -1;
    if (dir_is_empty(out))
        return 1;
    char m[4096];
    snprintf(m, sizeof m, "%s/manifest.json", out);
    return access(m, F_OK) == 0 ? 2 : -1;
}

/* Move the finished temp folder to `out`. */
static bool publish(const char *tmp, const char *out)
{
    int state = out_state(out);
    if (state == 1 && rmdir(out) != 0)
        return false;
    if (state == 2) {
        char old[4200];
        snprintf(old, sizeof old, "%s.old.XXXXXX", out);
        if (!mkdtemp(old) || rename(out, old) != 0) {
            rmdir(old);
            return false;
        }
        if (rename(tmp, out) != 0) {
            rename(old, out);
            return false;
        }
        remove_tree(old);
        return true;
    }
    return rename(tmp, out) == 0;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static sg_status random_input(const sg_value *gv, int32_t dtype, const int64_t *dims, uint32_t rank,
                              uint64_t seed, double lo, double hi, sg_rt_value **out,
                              struct sg_diag *d)
{
    if (dtype == SG_DTYPE_STRING || !sg_rt_elem_size(dtype))
        return sg_diag_set(d, SG_EUNSUPPORTED, "input '%s': cannot make random %s values", gv->name,
                           sg_dtype_name(dtype));
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
        else if (sg_dtype_is_float(dtype))
            sg_rt_set_f64(*out, i, v);
        else
            sg_rt_set_i64(*out, i, (int64_t)floor(v));
    }
    return SG_OK;
}

/* The dtype and shape an input file or random value should have. */
static sg_status input_spec(const sg_value *gv, const struct shape_arg *given, int32_t *dtype,
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

static sg_status load_input(const sg_value *gv, const char *file, const struct shape_arg *given,
                            sg_rt_value **out, struct sg_diag *d)
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

struct missing_ctx {
    size_t n;
};

static void print_missing(const sg_node *n, const char *reason, void *ctx)
{
    (void)n;
    ((struct missing_ctx *)ctx)->n++;
    printf("%s\n", reason);
}

static int check_only(sg_model *m)
{
    struct missing_ctx mc = {0};
    size_t n = sg_rt_check(m, print_missing, &mc);
    size_t total = sg_graph_count_nodes(m->graph, true);
    if (n == 0) {
        printf("every node has a kernel (%zu nodes)\n", total);
        return SG_EXIT_OK;
    }
    printf("%zu of %zu nodes have no kernel\n", n, total);
    return SG_EXIT_FAIL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"input", required_argument, NULL, 'i'},
        {"input-shape", required_argument, NULL, 's'},
        {"random", required_argument, NULL, 'r'},
        {"range", required_argument, NULL, 'R'},
        {"output", required_argument, NULL, 'o'},
        {"dump", required_argument, NULL, 'd'},
        {"threads", required_argument, NULL, 't'},
        {"check", no_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    static struct input_arg inputs[MAX_INPUTS];
    static struct shape_arg shapes[MAX_INPUTS];
    size_t n_inputs = 0, n_shapes = 0;
    const char *out = NULL;
    bool check = false, random = false, have_range = false;
    unsigned long long seed = 0;
    double lo = 0, hi = 1;
    int threads = 0;
    enum sg_dump_mode mode = SG_DUMP_OUTPUTS;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":i:o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'i': {
            if (n_inputs == MAX_INPUTS)
                return cli_usage(&sg_cmd_run, "too many -i options");
            inputs[n_inputs].name = NULL;
            inputs[n_inputs].file = optarg;
            n_inputs++;
            break;
        }
        case 's':
            if (!parse_shapes(optarg, shapes, &n_shapes, MAX_INPUTS))
                return cli_usage(&sg_cmd_run, "bad --input-shape '%s' (want \"x:1,3,224,224;y:4\")",
                                 optarg);
            break;
        case 'r': {
            char *e;
            seed = strtoull(optarg, &e, 10);
            if (!*optarg || *e)
                return cli_usage(&sg_cmd_run, "bad --random seed '%s'", optarg);
            random = true;
            break;
        }
        case 'R': {
            char *e;
            lo = strtod(optarg, &e);
            if (e == optarg || *e != ',')
                return cli_usage(&sg_cmd_run, "bad --range '%s' (want LO,HI)", optarg);
            const char *p = e + 1;
            hi = strtod(p, &e);
            if (e == p || *e || !(lo < hi))
                return cli_usage(&sg_cmd_run, "bad --range '%s' (want LO,HI with LO < HI)", optarg);
            have_range = true;
            break;
        }
        case 'o':
            out = optarg;
            break;
        case 'd':
            if (strcmp(optarg, "all") == 0)
                mode = SG_DUMP_ALL;
            else if (strcmp(optarg, "outputs") == 0)
                mode = SG_DUMP_OUTPUTS;
            else
                return cli_usage(&sg_cmd_run, "--dump takes all or outputs, not '%s'", optarg);
            break;
        case 't': {
            char *e;
            long v = strtol(optarg, &e, 10);
            if (!*optarg || *e || v < 1 || v > 1024)
                return cli_usage(&sg_cmd_run, "bad --threads '%s'", optarg);
            threads = (int)v;
            break;
        }
        case 'c':
            check = true;
            break;
        case ':':
            return cli_usage(&sg_cmd_run, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage(&sg_cmd_run, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage(&sg_cmd_run, optind >= argc ? "missing MODEL" : "too many arguments");
    if (have_range && !random)
        return cli_usage(&sg_cmd_run, "--range needs --random");
    if (!check && !out)
        return cli_usage(&sg_cmd_run, "missing -o DIR");
    const char *model_path = argv[optind];

    struct sg_diag d = {0};
    sg_model *m = NULL;
    if (sg_model_load(model_path, NULL, &m, &d))
        return cli_fail(&d);
    if (check) {
        int rc = check_only(m);
        sg_model_free(m);
        return rc;
    }

    int rc = SG_EXIT_FAIL;
    sg_rt *rt = NULL;
    sg_dump *dump = NULL;
    char *tmp = NULL;
    sg_rt_value **bound = NULL;
    uint32_t n_req = 0;
    if (out_state(out) < 0) {
        cli_error("'%s' exists and is not an earlier surgeon run folder; remove it or choose "
                  "another -o",
                  out);
        goto done;
    }
    /* The temp folder lives beside DIR so the final rename is atomic. */
    {
        size_t len = strlen(out) + 32;
        tmp = sg_malloc(len);
        char *copy = sg_strdup(out);
        if (!tmp || !copy) {
            sg_free(copy);
            cli_error("out of memory");
            goto done;
        }
        char *base = basename(copy);
        char *dcopy = sg_strdup(out);
        char *dir = dcopy ? dirname(dcopy) : NULL;
        if (dir)
            snprintf(tmp, len, "%s/.%s.tmp.XXXXXX", dir, base);
        sg_free(copy);
        sg_free(dcopy);
        if (!dir || !mkdtemp(tmp)) {
            cli_error("cannot create a folder beside '%s': %s", out, strerror(errno));
            sg_free(tmp);
            tmp = NULL;
            goto done;
        }
        mode_t mask = umask(0);
        umask(mask);
        chmod(tmp, 0777 & ~mask); /* mkdtemp's 0700 is only for while it is private */
    }
    if (sg_dump_create(tmp, mode, &dump, &d))
        goto fail;
    struct sg_rt_opts opts = {0};
    opts.threads = threads;
    opts.on_output = sg_dump_observe;
    opts.observe_ctx = dump;
    if (sg_rt_create(m, &opts, &rt, &d))
        goto fail;

    /* Bind the inputs: named ones first, then positional ones in order. */
    n_req = sg_rt_n_inputs(rt);
    bound = sg_calloc(n_req + 1, sizeof *bound);
    if (!bound) {
        sg_diag_set(&d, SG_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n_shapes; i++) {
        bool known = false;
        for (uint32_t r = 0; r < n_req; r++)
            known |= strcmp(sg_rt_input(rt, r)->name, shapes[i].name) == 0;
        if (!known) {
            sg_diag_set(&d, SG_ENOTFOUND,
                        "--input-shape names '%s', which is not an input of "
                        "the model",
                        shapes[i].name);
            goto fail;
        }
    }
    for (size_t i = 0; i < n_inputs; i++) {
        const char *eq = strchr(inputs[i].file, '=');
        if (!eq)
            continue;
        size_t nl = (size_t)(eq - inputs[i].file);
        uint32_t r;
        for (r = 0; r < n_req; r++)
            if (strlen(sg_rt_input(rt, r)->name) == nl &&
                strncmp(sg_rt_input(rt, r)->name, inputs[i].file, nl) == 0)
                break;
        if (r < n_req) {
            inputs[i].name = sg_rt_input(rt, r)->name;
            inputs[i].file = eq + 1;
        } else if (access(inputs[i].file, F_OK) != 0) {
            sg_diag_set(&d, SG_ENOTFOUND, "-i %s: the model has no input named '%.*s'",
                        inputs[i].file, (int)nl, inputs[i].file);
            goto fail;
        }
    }
    for (size_t i = 0; i < n_inputs; i++) {
        uint32_t r = 0;
        if (inputs[i].name) {
            while (strcmp(sg_rt_input(rt, r)->name, inputs[i].name) != 0)
                r++;
            if (bound[r]) {
                sg_diag_set(&d, SG_EDUP, "input '%s' is given twice", inputs[i].name);
                goto fail;
            }
        } else {
            /* The first input not named by any -i NAME=FILE and not yet bound. */
            for (r = 0; r < n_req; r++) {
                bool named = false;
                for (size_t j = 0; j < n_inputs; j++)
                    named |=
                        inputs[j].name && strcmp(inputs[j].name, sg_rt_input(rt, r)->name) == 0;
                if (!named && !bound[r])
                    break;
            }
            if (r == n_req) {
                sg_diag_set(&d, SG_EINVAL, "-i %s: the model has only %u inputs", inputs[i].file,
                            n_req);
                goto fail;
            }
        }
        const sg_value *gv = sg_rt_input(rt, r);
        if (load_input(gv, inputs[i].file, find_shape(shapes, n_shapes, gv->name), &bound[r], &d))
            goto fail;
    }
    for (uint32_t r = 0; r < n_req; r++) {
        const sg_value *gv = sg_rt_input(rt, r);
        if (!bound[r]) {
            char buf[512];
            if (!random) {
                sg_diag_set(&d, SG_EUNDEF, "input '%s' (%s) was not given; use -i or --random",
                            gv->name, sg_type_format(gv->type, buf, sizeof buf));
                goto fail;
            }
            int32_t dtype;
            int64_t dims[SG_MAX_RANK];
            uint32_t rank;
            if (input_spec(gv, find_shape(shapes, n_shapes, gv->name), &dtype, dims, &rank, true,
                           &d) ||
                random_input(gv, dtype, dims, rank, seed, lo, hi, &bound[r], &d))
                goto fail;
        }
        if (sg_rt_set_input(rt, gv->name, bound[r], &d) ||
            sg_dump_input(dump, gv->name, bound[r], &d))
            goto fail;
    }

    double t0 = now_ms();
    if (sg_rt_run(rt, &d))
        goto fail;
    double t1 = now_ms();
    if (sg_dump_finish(dump, rt, &d))
        goto fail;
    if (!publish(tmp, out)) {
        cli_error("cannot move the results to '%s': %s", out, strerror(errno));
        goto cleanup;
    }
    printf("ran %zu nodes in %.1f ms; %zu tensor%s written to %s\n",
           sg_graph_count_nodes(m->graph, false), t1 - t0, sg_dump_count(dump),
           sg_dump_count(dump) == 1 ? "" : "s", out);
    for (uint32_t i = 0; i < sg_rt_n_outputs(rt); i++) {
        char buf[512];
        printf("  output '%s' %s\n", sg_rt_output_info(rt, i)->name,
               sg_rt_value_format(sg_rt_output(rt, i), buf, sizeof buf));
    }
    rc = SG_EXIT_OK;
    goto done;
fail:
    cli_fail(&d);
cleanup:
    if (tmp)
        remove_tree(tmp);
done:
    for (uint32_t r = 0; bound && r < n_req; r++)
        sg_rt_value_unref(bound[r]);
    sg_free(bound);
    sg_rt_free(rt);
    sg_dump_free(dump);
    sg_free(tmp);
    sg_model_free(m);
    return rc;
}
