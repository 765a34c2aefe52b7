/*
 * sg_pass.h - rewrite passes, the pass registry, pipelines and reports.
 *
 * A pass is a `const struct sg_pass` (one file per pass under passes/): a
 * name as typed on the command line ("insert-clip"), a one-line summary, a
 * typed option schema with defaults, and a run function that rewrites a
 * model through the graph/ API and records what it changed in a report.
 * A pipeline is an ordered list of (pass, parsed options), built from
 * "NAME:key=value,..." specs or a YAML file (the only libyaml code is in
 * passes/yaml.c). A pipeline is read-only while it runs, so one pipeline
 * can serve several threads, each with its own model.
 *
 * The library never prints: reports and option schemas are data; the
 * sg_*_print functions write to a FILE the caller gives.
 */
#ifndef SG_PASS_H
#define SG_PASS_H

#include "sg_arena.h"
#include "sg_ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- options */

enum sg_opt_type {
    SG_OPT_BOOL,    /* true/false, yes/no, on/off, 1/0 */
    SG_OPT_INT,     /* integer in [min, max] */
    SG_OPT_FLOAT,   /* number; inf and -inf allowed */
    SG_OPT_STRING,  /* any text */
    SG_OPT_ENUM,    /* one of `choices`, written "a|b|c" */
    SG_OPT_DTYPE,   /* element type: float32, float16, bfloat16, int32, bool, ... */
    SG_OPT_STRINGS, /* list: YAML sequence or comma-separated text */
    SG_OPT_INTS,    /* list of integers in [min, max] */
    SG_OPT_SHAPES,  /* "x:4,77,40;mask:4,-1" or a YAML mapping name -> dims */
    SG_OPT_DIM,     /* a positive integer or a symbolic dimension name */
    SG_OPT_PATH,    /* a file; relative to the YAML file's folder when read from YAML */
    SG_OPT_TYPE_COUNT
};

/* One option of a pass. min/max bound INT, INTS and DIM when not both 0. */
struct sg_opt_spec {
    const char *name;
    enum sg_opt_type type;
    const char *dflt; /* default as typed on the command line; NULL: unset */
    const char *help;
    int64_t min, max;
    const char *choices; /* ENUM only: "before|after" */
};

/* A dimension of a shape option: a number, a symbolic name, or unknown. */
struct sg_dim_spec {
    enum sg_dim_kind kind; /* SG_DIM_VALUE, SG_DIM_PARAM or SG_DIM_UNSET (-1 / ?) */
    int64_t value;
    const char *param;
};

struct sg_shape_spec {
    const char *name;
    struct sg_dim_spec *dims;
    uint32_t rank;
};

/* A parsed option; which fields hold the value depends on the type. */
struct sg_opt_value {
    bool present;                 /* given by the user or defaulted; false: unset */
    bool given;                   /* given by the user */
    bool b;                       /* BOOL */
    int64_t i;                    /* INT */
    double f;                     /* FLOAT */
    const char *s;                /* STRING, ENUM, PATH */
    int32_t dtype;                /* DTYPE */
    const char **strs;            /* STRINGS */
    int64_t *ints;                /* INTS */
    size_t n;                     /* entries of strs or ints */
    struct sg_shape_spec *shapes; /* SHAPES */
    size_t n_shapes;
    struct sg_dim_spec dim; /* DIM */
};

/* Name of an option type for messages and `surgeon passes` ("int", "list"). */
const char *sg_opt_type_name(enum sg_opt_type type);

/* -------------------------------------------------------------- reports */

/* One line of a report: what happened, how often, to which nodes/values. */
struct sg_report_item {
    char *what;
    bool change; /* counts as a change of the model */
    size_t count;
    char **names;
    size_t n_names, cap_names;
};

struct sg_pass_report {
    const char *pass; /* the pass name (static) */
    size_t changes;   /* total of the change items; 0: the model is untouched */
    size_t warnings;  /* findings that make the result doubtful (sg_report_warn) */
    struct sg_report_item *items;
    size_t n_items, cap_items;
    double seconds;
    bool oom;         /* an entry could not be recorded (the run then fails) */
    bool counts_only; /* count, but do not keep the names (sg_run_report) */
};

/*
 * Record one change (sg_report_change) or one non-change finding such as a
 * skipped node (sg_report_info) under the heading `what` (a static or
 * caller-owned string, copied). `fmt` NULL counts without a name; else the
 * formatted text (a node name, maybe with details) is listed. Never fails:
 * out of memory sets r->oom, which the pass manager turns into SG_ENOMEM.
 */
void sg_report_change(struct sg_pass_report *r, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sg_report_info(struct sg_pass_report *r, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A finding that the pass went ahead despite (set-batch force=true writing
 * a shape it could not prove safe): listed under "warning: <what>" and
 * counted in r->warnings, which callers report as a warning status. */
void sg_report_warn(struct sg_pass_report *r, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Free what the report holds and zero it (the struct itself is the
 * caller's). NULL is a no-op. */
void sg_pass_report_clear(struct sg_pass_report *r);

/* Write the report as text: a "NAME: N changes" line and one indented line
 * per item listing at most max_names names (0: all). */
void sg_pass_report_print(const struct sg_pass_report *r, FILE *out, size_t max_names);

/* --------------------------------------------------------------- passes */

typedef sg_status (*sg_pass_fn)(sg_model *m, const struct sg_opt_value *opts,
                                struct sg_pass_report *rep, struct sg_diag *diag);

struct sg_pass {
    const char *name;    /* command-line name, e.g. "insert-clip" */
    const char *summary; /* one line */
    const struct sg_opt_spec *options;
    size_t n_options;
    sg_pass_fn run; /* opts has n_options entries, in schema order */
};

extern const struct sg_pass sg_pass_insert_clip;
extern const struct sg_pass sg_pass_cast_around;
extern const struct sg_pass sg_pass_set_input_shape;
extern const struct sg_pass sg_pass_set_batch;
extern const struct sg_pass sg_pass_remove_identity;
extern const struct sg_pass sg_pass_eliminate_dead;
extern const struct sg_pass sg_pass_merge_casts;
extern const struct sg_pass sg_pass_unique_names;
extern const struct sg_pass sg_pass_toposort;
extern const struct sg_pass sg_pass_rename;
extern const struct sg_pass sg_pass_to_fp16;
extern const struct sg_pass sg_pass_fold_constants;
extern const struct sg_pass sg_pass_fold_bn;
extern const struct sg_pass sg_pass_infer_shapes;
extern const struct sg_pass sg_pass_simplify;

/* Every pass, in display order; sets *count. */
const struct sg_pass *const *sg_pass_list(size_t *count);

/* The pass with this command-line name, or NULL. */
const struct sg_pass *sg_pass_find(const char *name);

/* The pass name nearest to name[0..len) when it looks mistyped
 * (sg_suggest.h: "did you mean"), else NULL. A static string. */
const char *sg_pass_suggest(const char *name, size_t len);

/* ------------------------------------------------------------ pipelines */

struct sg_pipeline_step {
    const struct sg_pass *pass;
    struct sg_opt_value *opts; /* pass->n_options entries */
    const char *origin;        /* where it was given: "p.yaml:4:5" or "--pass insert-clip" */
};

/* A pipeline variable, set before the YAML files that refer to it are read. */
struct sg_pipeline_var {
    const char *name, *value;
    bool used; /* some file read so far refers to it */
};

struct sg_pipeline {
    sg_arena *arena; /* holds steps, option values and strings */
    struct sg_pipeline_step *steps;
    size_t n_steps, cap_steps;
    bool verify; /* run sg_model_verify after every pass */
    struct sg_pipeline_var *vars;
    size_t n_vars, cap_vars;
};

/* A new empty pipeline (verify off). SG_ENOMEM. */
sg_status sg_pipeline_create(struct sg_pipeline **out);

/* Free the pipeline and everything it holds. NULL is a no-op. */
void sg_pipeline_free(struct sg_pipeline *p);

/*
 * Append a step from "NAME" or "NAME:key=value,key=value". A comma starts a
 * new option only when `key=` follows it, so values may hold commas
 * ("ops=Exp,Softmax", "shapes=x:4,77,40;mask:4,-1"). Errors (SG_ENOTFOUND
 * unknown pass, SG_EINVAL unknown or repeated option, SG_EPARSE /
 * SG_ERANGE bad value) name the pass and option.
 */
sg_status sg_pipeline_add_spec(struct sg_pipeline *p, const char *spec, struct sg_diag *diag);

/*
 * Append the steps of a YAML pipeline file (schema in README.md). Errors
 * carry "path:line:column". A top-level `verify: true` turns verification
 * on. SG_EIO when the file cannot be read.
 */
sg_status sg_pipeline_load_yaml(struct sg_pipeline *p, const char *path, struct sg_diag *diag);

/*
 * Pipeline variables. In a YAML pipeline's option values (scalars and list
 * items), `${NAME}` is replaced by the variable's value and `${NAME:-TEXT}`
 * by the value, or TEXT when the variable is not set; `$${` is a literal
 * `${`. The result is then parsed as the option's type. Set variables
 * before loading the files that use them: sg_pipeline_set_var takes
 * "NAME=VALUE" (SG_EPARSE for a bad name, SG_EINVAL when NAME is set
 * already). A reference to an unset variable without a default fails the
 * load (SG_EINVAL, with file:line:column). sg_pipeline_check_vars fails
 * (SG_EINVAL, naming it) when a set variable was never referred to by the
 * files read.
 */
sg_status sg_pipeline_set_var(struct sg_pipeline *p, const char *assignment, struct sg_diag *diag);
sg_status sg_pipeline_check_vars(const struct sg_pipeline *p, struct sg_diag *diag);

/* The same from memory; `label` names the text in errors, `base_dir` (may be
 * NULL) is where relative paths in options point. */
sg_status sg_pipeline_parse_yaml(struct sg_pipeline *p, const char *text, size_t len,
                                 const char *label, const char *base_dir, struct sg_diag *diag);

/* What one pipeline run did: one report per pass that ran. */
struct sg_run_report {
    struct sg_pass_report *passes;
    size_t n;
    size_t changes;
    size_t warnings;  /* of every pass */
    bool counts_only; /* set by the caller: the names will not be shown, so
                       * the passes only count (formatting and keeping
                       * 25,000 of them was a tenth of a big insert-clip) */
};

/*
 * Run every step on m in order. Each pass's report goes to rep (which the
 * caller zero-initialises and clears with sg_run_report_clear). A failing
 * pass stops the run: its diagnostic is prefixed with the pass name, and m
 * may be partly rewritten (the caller discards it). With p->verify, a model
 * that fails sg_model_verify after a pass is an error naming the pass.
 */
sg_status sg_pipeline_run(const struct sg_pipeline *p, sg_model *m, struct sg_run_report *rep,
                          struct sg_diag *diag);

/* Free the reports of a run and zero it. NULL is a no-op. */
void sg_run_report_clear(struct sg_run_report *rep);

/* Write `surgeon passes` style help for one pass: summary and options. */
void sg_pass_print_help(const struct sg_pass *pass, FILE *out);

#endif
