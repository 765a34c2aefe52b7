/*
 * cmd_run_case.c - `surgeon run --case CASE_DIR`: run an ONNX backend-test
 * folder (a single-op case from `surgeon extract --node`, or any backend
 * test) on the runtime and check it with the backend rule; a folder of
 * cases with index.json (`extract --all`) runs every case it lists.
 */
#include "cli.h"
#include "sg_case.h"
#include "sg_json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sg__run_case(int argc, char **argv, const struct sg_command *cmd);

/* One case: 0 pass, 3 mismatch, 1 error. */
static int one(const char *dir, const char *label)
{
    struct sg_diag d = {0};
    struct sg_case_result r;
    if (sg_rt_case_run(dir, NULL, &r, &d)) {
        cli_error("%s: %s", label, d.msg);
        return SG_EXIT_FAIL;
    }
    if (!r.pass) {
        printf("FAIL %s: %s\n", label, r.why);
        return SG_EXIT_THRESHOLDS;
    }
    printf("PASS %s (%zu data set%s, %zu output%s, rtol %g, atol %g)\n", label, r.n_sets,
           r.n_sets == 1 ? "" : "s", r.n_outputs, r.n_outputs == 1 ? "" : "s", SG_CASE_RTOL,
           SG_CASE_ATOL);
    return SG_EXIT_OK;
}

int sg__run_case(int argc, char **argv, const struct sg_command *cmd)
{
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--case") == 0 && i + 1 < argc && !dir)
            dir = argv[++i];
        else if (strncmp(argv[i], "--case=", 7) == 0 && !dir)
            dir = argv[i] + 7;
        else
            return cli_usage(cmd, "--case CASE_DIR takes no other argument ('%s')", argv[i]);
    }
    if (!dir)
        return cli_usage(cmd, "--case needs a folder");
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/index.json", dir);
    if (stat(path, &sb) != 0)
        return one(dir, dir);
    struct sg_diag d = {0};
    struct sg_jdoc *doc = NULL;
    if (sg_json_parse_file(path, NULL, &doc, &d))
        return cli_fail(&d);
    const struct sg_jval *cases = sg_jval_get(doc->root, "cases");
    if (!cases || cases->type != SG_JSON_ARRAY) {
        cli_error("%s: no \"cases\" list", path);
        sg_jdoc_free(doc);
        return SG_EXIT_FAIL;
    }
    int rc = SG_EXIT_OK;
    size_t pass = 0, fail = 0, err = 0;
    for (size_t i = 0; i < cases->n_items; i++) {
        const struct sg_jval *sub = sg_jval_get(cases->items[i], "dir");
        const struct sg_jval *node = sg_jval_get(cases->items[i], "node");
        if (!sub || sub->type != SG_JSON_STRING || strchr(sub->str, '/') ||
            strcmp(sub->str, "..") == 0) {
            err++;
            continue; /* a node extract could not make a case of */
        }
        char cdir[8300];
        snprintf(cdir, sizeof cdir, "%s/%s", dir, sub->str);
        int r = one(cdir, node && node->type == SG_JSON_STRING ? node->str : sub->str);
        pass += r == SG_EXIT_OK;
        fail += r == SG_EXIT_THRESHOLDS;
        err += r == SG_EXIT_FAIL;
    }
    printf("%zu passed, %zu failed, %zu errors\n", pass, fail, err);
    if (err)
        rc = SG_EXIT_FAIL;
    else if (fail)
        rc = SG_EXIT_THRESHOLDS;
    sg_jdoc_free(doc);
    return rc;
}
