/*
 * cutargs.h - command-line pieces that extract, split and concat share:
 * where the written models keep their tensors (as convert), and types
 * given for cut tensors (`name:dtype:d0,d1`).
 */
#ifndef SG_CLI_CUTARGS_H
#define SG_CLI_CUTARGS_H

#include "cli.h"
#include "sg_cut.h"
#include "sg_io.h"

#include <stdbool.h>

/* Long options of the save placement, to append to a command's table. */
#define CLI_SAVE_LONGOPTS                                                                          \
    {"external-data", required_argument, NULL, 0x101}, {"inline", no_argument, NULL, 0x102},       \
    {                                                                                              \
        "size-threshold", required_argument, NULL, 0x103                                           \
    }

#define CLI_SAVE_USAGE                                                                             \
    "  --external-data FILE      put every tensor of at least the threshold in FILE,\n"            \
    "                            a file name beside the output\n"                                  \
    "  --inline                  put every tensor inside the output (fails past 2 GB)\n"           \
    "  --size-threshold BYTES    smallest tensor moved to external data (default 1024)\n"          \
    "  By default external tensors keep pointing at their data file when the output\n"             \
    "  is in the model's folder and are copied (only those the output uses) otherwise.\n"

struct cli_save {
    struct sg_save_opts opts;
    bool inline_all;
};

/* Handle option `c` (0x101..0x103) of CLI_SAVE_LONGOPTS: returns -1 when c
 * is not one of them, SG_EXIT_OK when taken, SG_EXIT_USAGE (message
 * printed) on a bad value. */
int cli_save_option(const struct sg_command *cmd, struct cli_save *s, int c, const char *arg);

/* Check the combination once options are parsed (usage error or OK). */
int cli_save_finish(const struct sg_command *cmd, struct cli_save *s);

/* A tensor given as NAME or NAME:DTYPE:D0,D1 (a dim: N, ? or -1 unknown;
 * NAME:DTYPE alone leaves the rank unknown; NAME:DTYPE: is a scalar). */
struct cli_decl {
    char *name;
    bool typed;
    int32_t dtype;
    int rank; /* -1: unknown */
    int64_t dims[SG_MAX_RANK];
};

struct cli_decls {
    struct cli_decl *v;
    size_t n, cap;
};

/* Add the items of a list of tensors. Items are separated by ';', and by
 * ',' except inside the dims of a typed item, where a comma followed by a
 * digit, '?' or '-' continues them. A name may hold ':' ("onnx::Mul_5"):
 * an item is typed only when it ends in ":DTYPE" or ":DTYPE:DIMS". False
 * with a message in err. */
bool cli_decls_add(struct cli_decls *d, const char *text, char *err, size_t errsize);
void cli_decls_free(struct cli_decls *d);

/* The names, for sg_extract_spec (an array of d->n borrowed pointers,
 * malloc'd), and the typed ones as sg_cut_decl in m's arena. */
const char **cli_decls_names(const struct cli_decls *d);
struct sg_cut_decl *cli_decls_types(const struct cli_decls *d, sg_model *m, size_t *n);

/* Print an extraction report's missing tensors (one per line) and its
 * implicit inputs as a note. */
void cli_print_missing(const struct sg_extract_report *r);

#endif
