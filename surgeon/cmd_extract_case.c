/*
 * cmd_extract_case.c - `surgeon extract MODEL --node NAME | --nodes .. |
 * --all -o CASE_DIR`: single-op cases in the ONNX backend-test layout,
 * from a golden dump or from a golden run made here.
 */
#include "cli.h"
#include "cutargs.h"
#include "sg_outdir.h"
#include "sg_verify.h"
#include "sg_alloc.h"
#include "sg_cut.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_runtime.h"
#include "sg_tensorfile.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sg__extract_cases(int argc, char **argv, const struct sg_command *cmd);

/* ------------------------------------------------ golden run, in memory */

/* The tensors a golden run computed, by value name (the main graph's node
 * outputs and the inputs), kept for the cases to read. */
struct capture {
    char **names;
    sg_rt_value **values;
    size_t n, cap;
    bool oom;
};

static void capture_add(struct capture *c, const char *name, const sg_rt_value *v)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        char **nn = sg_realloc(c->names, cap * sizeof *nn);
        if (nn)
            c->names = nn;
        sg_rt_value **nv = nn ? sg_realloc(c->values, cap * sizeof *nv) : NULL;
        if (!nv) {
            c->oom = true;
            return;
        }
        c->values = nv;
        c->cap = cap;
    }
    if (!(c->names[c->n] = sg_strdup(name))) {
        c->oom = true;
        return;
    }
    c->values[c->n++] = sg_rt_value_ref((sg_rt_value *)v);
}

static sg_status capture_observe(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                                 void *ctx, struct sg_diag *diag)
{
    struct capture *c = ctx;
    if (depth == 0 && v && v->kind == SG_RT_TENSOR && n->outputs[index])
        capture_add(c, n->outputs[index]->name, v);
    return c->oom ? sg_diag_set(diag, SG_ENOMEM, "out of memory keeping the golden tensors")
                  : SG_OK;
}

static sg_status capture_get(void *ctx, const char *name, struct sg_array *out,
                             struct sg_diag *diag)
{
    struct capture *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0)
            return sg_rt_tensor_to_array(c->values[i], out, diag);
    return sg_diag_set(diag, SG_ENOTFOUND,
                       "the golden run produced no tensor '%s' (not a tensor, or inside a "
                       "subgraph)",
                       name);
}

static void capture_free(struct capture *c)
{
    for (size_t i = 0; i < c->n; i++) {
        sg_free(c->names[i]);
        sg_rt_value_unref(c->values[i]);
    }
    sg_free(c->names);
    sg_free(c->values);
    memset(c, 0, sizeof *c);
}

/* The golden run of m in float32 on the inputs as given, every main-graph
 * tensor kept in c. */
static sg_status golden_run(sg_model *m, const struct sg_verify_inputs *in, struct capture *c,
                            struct sg_diag *d)
{
    struct sg_rt_opts opts = {.on_output = capture_observe, .observe_ctx = c};
    sg_rt *rt = NULL;
    struct sg_verify_values bound = {0};
    sg_status st = sg_rt_create(m, &opts, &rt, d);
    if (st)
        goto out;
    if ((st = sg_verify_inputs_load(in, rt, &bound, d)))
        goto out;
    for (uint32_t r = 0; r < bound.n && !st; r++) {
        const char *name = bound.names[r];
        if (!(st = sg_rt_set_input(rt, name, bound.values[r], d)))
            capture_add(c, name, bound.values[r]);
    }
    if (!st && c->oom)
        st = sg_diag_set(d, SG_ENOMEM, "out of memory");
    if (!st)
        st = sg_rt_run(rt, d);
    if (st)
        sg_diag_prefix(d, "golden run");
out:
    sg_verify_values_clear(&bound);
    sg_rt_free(rt);
    return st;
}

/* ------------------------------------------------------------- cases */

struct made {
    char *node, *dir, *op_type, *error;
};

static bool dir_taken(const struct made *v, size_t n, const char *dir)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].dir && strcmp(v[i].dir, dir) == 0)
            return true;
    return false;
}

struct index_ctx {
    const struct made *v;
    size_t n;
};

static sg_status index_writer(FILE *f, void *arg)
{
    const struct index_ctx *x = arg;
    struct sg_json j;
    sg_json_init(&j, f, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "format");
    sg_json_string(&j, "surgeon-cases");
    sg_json_key(&j, "version");
    sg_json_int(&j, 1);
    sg_json_key(&j, "cases");
    sg_json_array_begin(&j);
    for (size_t i = 0; i < x->n; i++) {
        sg_json_object_begin(&j);
        sg_json_key(&j, "node");
        sg_json_string(&j, x->v[i].node);
        sg_json_key(&j, "op_type");
        sg_json_string(&j, x->v[i].op_type);
        sg_json_key(&j, "dir");
        sg_json_string(&j, x->v[i].dir);
        if (x->v[i].error) {
            sg_json_key(&j, "error");
            sg_json_string(&j, x->v[i].error);
        }
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_object_end(&j);
    fputc('\n', f);
    return ferror(f) ? SG_EIO : SG_OK;
}

static sg_status write_index(const char *path, const struct made *v, size_t n, struct sg_diag *d)
{
    struct index_ctx x = {v, n};
    return sg_file_write_atomic_with(path, index_writer, &x, d);
}

int sg__extract_cases(int argc, char **argv, const struct sg_command *cmd)
{
    enum { O_NODE = 0x301, O_NODES, O_ALL, O_GOLDEN, O_RANDOM, O_RANGE, O_SHAPE };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"node", required_argument, NULL, O_NODE},
        {"nodes", required_argument, NULL, O_NODES},
        {"all", no_argument, NULL, O_ALL},
        {"golden", required_argument, NULL, O_GOLDEN},
        {"input", required_argument, NULL, 'i'},
        {"random", required_argument, NULL, O_RANDOM},
        {"range", required_argument, NULL, O_RANGE},
        {"input-shape", required_argument, NULL, O_SHAPE},
        CLI_SAVE_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    struct cli_save save = {0};
    struct cli_list nodes = {0};
    struct sg_verify_inputs in;
    sg_verify_inputs_init(&in);
    const char *out = NULL, *golden = NULL;
    bool all = false, single = false;
    int rc = SG_EXIT_OK, c;
    opterr = 0;
    while (rc == SG_EXIT_OK && (c = getopt_long(argc, argv, ":o:i:", longopts, NULL)) != -1) {
        int r = cli_save_option(cmd, &save, c, optarg);
        if (r >= 0) {
            rc = r;
            continue;
        }
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case O_NODE:
            single = true;
            if (!cli_list_add(&nodes, optarg))
                rc = cli_usage(cmd, "out of memory");
            break;
        case O_NODES:
            if (!cli_list_add_commas(&nodes, optarg))
                rc = cli_usage(cmd, "bad node list '%s'", optarg);
            break;
        case O_ALL:
            all = true;
            break;
        case O_GOLDEN:
            golden = optarg;
            break;
        case 'i':
            if (!sg_verify_inputs_add_file(&in, optarg))
                rc = cli_usage(cmd, "out of memory");
            break;
        case O_RANDOM:
            if (!sg_verify_inputs_set_seed(&in, optarg))
                rc = cli_usage(cmd, "bad --random '%s' (a seed: a decimal integer)", optarg);
            break;
        case O_RANGE:
            if (!sg_verify_inputs_set_range(&in, optarg))
                rc = cli_usage(cmd, "bad --range '%s' (LO,HI with LO < HI)", optarg);
            break;
        case O_SHAPE:
            if (!sg_verify_inputs_add_shapes(&in, optarg))
                rc = cli_usage(cmd, "bad --input-shape '%s' (as %s)", optarg,
                               SG_VERIFY_SHAPE_SYNTAX);
            break;
        case ':':
            rc = cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
            break;
        default:
            rc = cli_usage(cmd, "unknown option '%s' (with --node, --nodes or --all)",
                           argv[optind - 1]);
            break;
        }
    }
    sg_model *m = NULL;
    sg_dump_source *ds = NULL;
    struct capture cap = {0};
    struct made *made = NULL;
    size_t n_made = 0;
    char *tmp = NULL;
    struct sg_outdir od = {0};
    struct sg_diag d = {0};
    if (rc || (rc = cli_save_finish(cmd, &save)))
        goto done;
    if (optind != argc - 1) {
        rc = cli_usage(cmd, optind >= argc ? "missing MODEL" : "too many arguments");
        goto done;
    }
    if (!out) {
        rc = cli_usage(cmd, "missing -o CASE_DIR");
        goto done;
    }
    if ((single && (nodes.n != 1 || all)) || (all && nodes.n)) {
        rc = cli_usage(cmd, "give one of --node NAME, --nodes N1,N2 and --all");
        goto done;
    }
    if (golden && (in.n_files || in.random || in.n_shapes)) {
        rc = cli_usage(cmd, "--golden takes the tensors from the dump: -i, --random and "
                            "--input-shape are for a golden run made here");
        goto done;
    }
    if (sg_outdir_check(out, "extract", &d))
        goto fail;
    const char *model = argv[optind];
    if (sg_model_load(model, NULL, &m, &d))
        goto fail;
    if (all)
        for (sg_node *n = m->graph->first; n; n = n->next)
            if (!cli_list_add(&nodes, n->name ? n->name : "")) {
                sg_diag_set(&d, SG_ENOMEM, "out of memory");
                goto fail;
            }
    struct sg_case_source src;
    if (golden) {
        if (sg_dump_source_open(golden, &ds, &d))
            goto fail;
        src = sg_dump_source_get(ds);
    } else {
        if (golden_run(m, &in, &cap, &d))
            goto fail;
        src = (struct sg_case_source){capture_get, &cap};
    }
    if (sg_outdir_begin(&od, out, "extract", &d))
        goto fail;
    tmp = od.tmp;
    if (!(made = sg_calloc(nodes.n + 1, sizeof *made))) {
        sg_diag_set(&d, SG_ENOMEM, "out of memory");
        goto fail;
    }
    size_t n_failed = 0;
    for (size_t i = 0; i < nodes.n; i++) {
        struct made *e = &made[n_made++];
        struct sg_diag cd = {0};
        sg_model *cm = NULL;
        char safe[160], dir[4096];
        e->node = sg_strdup(nodes.v[i]);
        sg_node *n = sg_model_find_node(m, nodes.v[i]);
        e->op_type = sg_strdup(n ? n->op_type : "");
        sg_case_dir_name(nodes.v[i], safe, sizeof safe);
        size_t base = strlen(safe);
        for (int k = 2; !single && dir_taken(made, n_made - 1, safe); k++)
            snprintf(safe + base, sizeof safe - base, "_%d", k);
        if (single)
            snprintf(dir, sizeof dir, "%s", tmp);
        else
            snprintf(dir, sizeof dir, "%s/%s", tmp, safe);
        sg_status st = sg_model_clone(m, &cm, &cd);
        if (!st)
            st = sg_case_make(cm, nodes.v[i], &src, &cd);
        if (!st && !single && mkdir(dir, 0777) != 0)
            st = sg_diag_set(&cd, SG_EIO, "%s: %s", dir, strerror(errno));
        if (!st)
            st = sg_case_write(cm, dir, &src, &save.opts, &cd);
        sg_model_free(cm);
        if (st && single) {
            d = cd;
            goto fail;
        }
        if (st) {
            e->error = sg_strdup(cd.msg);
            cli_warn("node '%s': %s", nodes.v[i], cd.msg);
            n_failed++;
        } else {
            e->dir = sg_strdup(safe);
            printf("%s (%s) -> %s%s%s\n", nodes.v[i], e->op_type ? e->op_type : "", out,
                   single ? "" : "/", single ? "" : safe);
        }
    }
    if (!single) {
        char path[4096];
        snprintf(path, sizeof path, "%s/index.json", tmp);
        if (write_index(path, made, n_made, &d))
            goto fail;
    }
    tmp = NULL;
    if (sg_outdir_commit(&od, &d))
        goto fail;
    if (!single)
        printf("%zu case%s written to %s (index.json)%s\n", n_made - n_failed,
               n_made - n_failed == 1 ? "" : "s", out,
               n_failed ? ", some nodes failed (listed in index.json)" : "");
    rc = n_failed ? SG_EXIT_FAIL : SG_EXIT_OK;
    goto done;
fail:
    rc = cli_fail(&d);
done:
    sg_outdir_abort(&od); /* a no-op once committed */
    for (size_t i = 0; i < n_made; i++) {
        sg_free(made[i].node);
        sg_free(made[i].dir);
        sg_free(made[i].op_type);
        sg_free(made[i].error);
    }
    sg_free(made);
    capture_free(&cap);
    sg_dump_source_free(ds);
    sg_model_free(m);
    cli_list_free(&nodes);
    sg_verify_inputs_free(&in);
    return rc;
}
