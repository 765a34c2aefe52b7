/*
 * backend_runner.c - run the ONNX backend tests Debian ships
 * (libonnx-testdata) on surgeon's runtime.
 *
 *   sg_backend [--known FILE] [--only SUBSTR] [--verbose] ROOT FOLDER...
 *
 * For every test folder ROOT/FOLDER/<test> (model.onnx plus
 * test_data_set_N/input_K.pb and output_K.pb) it prints one line,
 *     PASS node/test_abs
 *     FAIL node/test_x: <reason>
 *     SKIP node/test_y: <reason>
 * then per-folder and overall totals as "N passed, N failed, N skipped".
 * Outputs are compared with the ONNX backend rule |a-b| <= atol + rtol*|b|
 * (rtol 1e-3, atol 1e-7), NaN equal to NaN, integers, bools and strings
 * exactly. Training ops (ai.onnx.preview.training) are skipped; models with
 * random ops run (their kernels are seeded) but are not compared. A test
 * folder holding skip.txt (a generated case without an oracle,
 * tests/modern/make_corpus.py) is skipped with that file's text as reason.
 *
 * --known FILE lists expected failures, one "FOLDER/TEST reason" per line,
 * and "min_pass FOLDER N" lines. The exit status is 1 when a test fails that
 * is not listed, when a listed test passes (the list is stale), or when a
 * folder passes fewer tests than its min_pass; 0 otherwise.
 */
#include "sg_alloc.h"
#include "sg_case.h"
#include "sg_io.h"
#include "sg_runtime.h"
#include "sg_tensorfile.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct known {
    char name[256];
    char reason[512];
    bool seen;
};

struct minpass {
    char folder[64];
    long n;
};

static struct known *known;
static size_t n_known;
static struct minpass minpass[16];
static size_t n_minpass;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of dir whose names start with prefix; caller frees. */
static char **list_dir(const char *dir, const char *prefix, size_t *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof *v);
        }
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (*n > 1)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static const char *const random_ops[] = {"Bernoulli",     "RandomNormal",      "RandomNormalLike",
                                         "RandomUniform", "RandomUniformLike", NULL};

struct scan {
    bool training;
    const char *random;
};

static void scan_graph(const sg_graph *g, struct scan *s);

static sg_status scan_sub(sg_graph *sub, void *ctx)
{
    scan_graph(sub, ctx);
    return SG_OK;
}

static void scan_graph(const sg_graph *g, struct scan *s)
{
    for (sg_node *n = g->first; n; n = n->next) {
        if (n->domain && strcmp(n->domain, "ai.onnx.preview.training") == 0)
            s->training = true;
        for (int i = 0; random_ops[i]; i++)
            if (strcmp(n->op_type, random_ops[i]) == 0 && (!n->domain || !*n->domain))
                s->random = random_ops[i];
        sg_node_for_each_subgraph(n, scan_sub, s);
    }
}

enum result { R_PASS, R_FAIL, R_SKIP };

/* Run one test folder; the reason goes into why. */
static enum result run_test(const char *dir, char *why, size_t size)
{
    char path[4096];
    struct sg_diag d = {0};
    sg_model *m = NULL;
    sg_rt *rt = NULL;
    enum result r = R_PASS;
    char **sets = NULL;
    size_t n_sets = 0;
    snprintf(path, sizeof path, "%s/skip.txt", dir);
    FILE *skip = fopen(path, "r");
    if (skip) {
        size_t got = fread(why, 1, size - 1, skip);
        why[got] = 0;
        why[strcspn(why, "\r\n")] = 0;
        fclose(skip);
        return R_SKIP;
    }
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (sg_model_load(path, NULL, &m, &d)) {
        snprintf(why, size, "load: %s", d.msg);
        return R_FAIL;
    }
    struct scan s = {false, NULL};
    scan_graph(m->graph, &s);
    if (s.training) {
        snprintf(why, size, "training op (ai.onnx.preview.training) is out of scope");
        r = R_SKIP;
        goto out;
    }
    if (sg_rt_create(m, NULL, &rt, &d)) {
        snprintf(why, size, "%s", d.msg);
        r = R_FAIL;
        goto out;
    }
    sets = list_dir(dir, "test_data_set_", &n_sets);
    if (!n_sets) {
        snprintf(why, size, "no test_data_set_* folder");
        r = R_FAIL;
        goto out;
    }
    for (size_t k = 0; k < n_sets && r == R_PASS; k++) {
        char sdir[4096];
        snprintf(sdir, sizeof sdir, "%s/%s", dir, sets[k]);
        size_t n_in, n_out;
        char **ins = list_dir(sdir, "input_", &n_in);
        char **outs = list_dir(sdir, "output_", &n_out);
        const sg_graph *g = m->graph;
        bool all = n_in != sg_rt_n_inputs(rt) && n_in == g->n_inputs;
        if (n_in != sg_rt_n_inputs(rt) && !all) {
            snprintf(why, size, "%zu input files for %u inputs", n_in, sg_rt_n_inputs(rt));
            r = R_FAIL;
        }
        for (size_t i = 0; i < n_in && r == R_PASS; i++) {
            /* input_<i>.pb: the numeric order, not the string order */
            char f[4200];
            snprintf(f, sizeof f, "%s/input_%zu.pb", sdir, i);
            const sg_value *gv = all ? g->inputs[i] : sg_rt_input(rt, (uint32_t)i);
            sg_rt_value *v = NULL;
            if (sg_rt_value_read_pb(f, gv->type, &v, &d) || sg_rt_set_input(rt, gv->name, v, &d)) {
                snprintf(why, size, "%s", d.msg);
                r = R_FAIL;
            }
            sg_rt_value_unref(v);
        }
        if (r == R_PASS && sg_rt_run(rt, &d)) {
            snprintf(why, size, "%s", d.msg);
            r = R_FAIL;
        }
        if (r == R_PASS && s.random) {
            snprintf(why, size, "random op %s: outputs are not comparable", s.random);
            r = R_SKIP;
        }
        if (r == R_PASS && n_out != sg_rt_n_outputs(rt)) {
            snprintf(why, size, "%zu output files for %u outputs", n_out, sg_rt_n_outputs(rt));
            r = R_FAIL;
        }
        for (size_t i = 0; i < n_out && r == R_PASS; i++) {
            char f[4200];
            snprintf(f, sizeof f, "%s/output_%zu.pb", sdir, i);
            const sg_value *gv = sg_rt_output_info(rt, (uint32_t)i);
            sg_rt_value *want = NULL;
            if (sg_rt_value_read_pb(f, gv->type, &want, &d)) {
                snprintf(why, size, "%s", d.msg);
                r = R_FAIL;
                break;
            }
            char reason[700];
            if (!sg_rt_backend_match(sg_rt_output(rt, (uint32_t)i), want, reason, sizeof reason)) {
                snprintf(why, size, "%s: output %zu '%s' %s", sets[k], i, gv->name, reason);
                r = R_FAIL;
            }
            sg_rt_value_unref(want);
        }
        free_list(ins, n_in);
        free_list(outs, n_out);
        memset(&d, 0, sizeof d);
    }
out:
    free_list(sets, n_sets);
    sg_rt_free(rt);
    sg_model_free(m);
    return r;
}

static void load_known(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "sg_backend: cannot read %s\n", path);
        exit(2);
    }
    char line[1024];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        if (strncmp(line, "min_pass ", 9) == 0) {
            if (n_minpass < 16 &&
                sscanf(line + 9, "%63s %ld", minpass[n_minpass].folder, &minpass[n_minpass].n) == 2)
                n_minpass++;
            continue;
        }
        if (n_known == cap) {
            cap = cap ? cap * 2 : 128;
            known = realloc(known, cap * sizeof *known);
        }
        struct known *k = &known[n_known++];
        memset(k, 0, sizeof *k);
        size_t sp = strcspn(line, " \t");
        snprintf(k->name, sizeof k->name, "%.*s", (int)sp, line);
        const char *rest = line + sp;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        snprintf(k->reason, sizeof k->reason, "%s", rest);
    }
    fclose(f);
}

static struct known *find_known(const char *name)
{
    for (size_t i = 0; i < n_known; i++)
        if (strcmp(known[i].name, name) == 0)
            return &known[i];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    bool verbose = false;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "--known") == 0 && a + 1 < argc)
            load_known(argv[++a]);
        else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc)
            only = argv[++a];
        else if (strcmp(argv[a], "--verbose") == 0)
            verbose = true;
        else {
            fprintf(stderr, "usage: sg_backend [--known FILE] [--only SUBSTR] [--verbose] ROOT "
                            "FOLDER...\n");
            return 2;
        }
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: sg_backend [--known FILE] [--only SUBSTR] ROOT FOLDER...\n");
        return 2;
    }
    const char *root = argv[a++];
    DIR *rd = opendir(root);
    if (!rd) {
        /* Like roundtrip_corpus.py: no test data, nothing to check. */
        printf("SKIP: %s is missing (install libonnx-testdata)\n", root);
        return 0;
    }
    closedir(rd);
    long tot[3] = {0, 0, 0}, unexpected = 0, stale = 0;
    bool below = false;
    for (; a < argc; a++) {
        const char *folder = argv[a];
        char fdir[1024];
        snprintf(fdir, sizeof fdir, "%s/%s", root, folder);
        size_t n;
        char **tests = list_dir(fdir, "test_", &n);
        if (!tests) {
            printf("SKIP %s: folder %s is missing (install libonnx-testdata)\n", folder, fdir);
            continue;
        }
        long cnt[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            char name[512], dir[1600], why[2048] = "";
            snprintf(name, sizeof name, "%s/%s", folder, tests[i]);
            if (only && !strstr(name, only))
                continue;
            snprintf(dir, sizeof dir, "%s/%s", fdir, tests[i]);
            int64_t live = sg_alloc_live();
            enum result r = run_test(dir, why, sizeof why);
            if (sg_alloc_live() != live && r != R_FAIL) {
                snprintf(why, sizeof why, "leaked %lld blocks",
                         (long long)(sg_alloc_live() - live));
                r = R_FAIL;
            }
            struct known *k = find_known(name);
            cnt[r]++;
            if (r == R_PASS) {
                if (k) {
                    printf("PASS %s (listed as a known failure: remove it from the list)\n", name);
                    stale++;
                } else {
                    printf("PASS %s\n", name);
                }
            } else if (r == R_SKIP) {
                printf("SKIP %s: %s\n", name, why);
            } else {
                printf("FAIL %s: %s%s\n", name, why, k ? " (known)" : "");
                if (k)
                    k->seen = true;
                else
                    unexpected++;
            }
            if (verbose)
                fflush(stdout);
        }
        printf("%s: %ld passed, %ld failed, %ld skipped\n", folder, cnt[0], cnt[1], cnt[2]);
        for (size_t i = 0; i < n_minpass; i++)
            if (!only && strcmp(minpass[i].folder, folder) == 0 && cnt[0] < minpass[i].n) {
                printf("%s: %ld passed is below the recorded minimum of %ld\n", folder, cnt[0],
                       minpass[i].n);
                below = true;
            }
        for (int r = 0; r < 3; r++)
            tot[r] += cnt[r];
        free_list(tests, n);
        fflush(stdout);
    }
    printf("%ld passed, %ld failed, %ld skipped\n", tot[0], tot[1], tot[2]);
    if (unexpected)
        printf("%ld unexpected failures (not in the known-failures list)\n", unexpected);
    if (stale)
        printf("%ld known failures now pass: update the list\n", stale);
    free(known);
    return unexpected || stale || below ? 1 : 0;
}
