/*
 * sg_verify.h - the workflows that prove a model, as library calls.
 *
 * The accuracy workflow of ../shared/BACKGROUND.md is a few steps, each a
 * call here, so that the end-to-end compare, bisection and single-op checks
 * share one engine:
 *
 *   inputs    struct sg_verify_inputs: a run's inputs as a command line
 *             gives them (-i files, --input-shape, --random, --range),
 *             made into values once a model says which ones it needs
 *   run       sg_verify_run: one run of a model (float32, or a mock OM as
 *             its compiler decided: float16 emulation) on given values, its
 *             tensors dumped into a folder
 *   compile   sg_verify_compile: a model through the real atc or the mock
 *             compiler, every option checked first; sg_verify_map: the
 *             `atc --mode=1` map of a compiled model
 *   compare   sg_compare_run (compare/sg_compare.h) on two dump folders
 *   all four  sg_verify_compare_model: golden run, compile, target run and
 *             compare, into a result folder that appears whole or not at
 *             all (sg_outdir.h)
 *
 * A bisection step is the same sequence on a sub-model: sg_verify_run of
 * the full model once (the golden run), then per step sg_verify_compile of
 * the sub-model, sg_verify_run of the compiled sub-model on values taken
 * from the golden dumps (struct sg_verify_values, by name), and
 * sg_compare_run or sg_metrics_compute on its outputs.
 *
 * Contract
 *   - Nothing here prints or exits. What a person should see while a
 *     workflow runs comes through struct sg_verify_events: a step starting
 *     (progress), result lines (info, for stdout), notes (a file written, a
 *     command about to run, for stderr) and warnings. The caller decides
 *     where each goes, or drops them.
 *   - Every call returns an sg_status and fills a struct sg_diag (which may
 *     be NULL). The *_check calls look at the options alone, touch no file
 *     and fail only with SG_EINVAL: a caller that checks first tells a usage
 *     error (the options) from bad input (what the workflow calls report
 *     after a successful check). The workflow calls run the checks again
 *     and fail with their SG_EINVAL when skipped.
 *   - Strings and arrays in option structs are borrowed for the call.
 *     Results belong to the caller and are freed with their _free or
 *     _clear (NULL and zeroed results are fine).
 */
#ifndef SG_VERIFY_H
#define SG_VERIFY_H

#include "sg_compare.h"
#include "sg_cut.h"
#include "sg_dump.h"
#include "sg_ir.h"
#include "sg_runtime.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- events */

enum sg_verify_event {
    SG_VERIFY_PROGRESS, /* a step starts ("golden run (float32)"); text NULL: it ended */
    SG_VERIFY_INFO,     /* a result line ("golden run: m.onnx in float32, ...") */
    SG_VERIFY_NOTE,     /* a side effect: a file written, a command about to run */
    SG_VERIFY_WARNING,  /* something the user should know; the work goes on */
    SG_VERIFY_EVENT_COUNT
};

/*
 * Where a workflow reports. fn may be NULL (events dropped); text is valid
 * during the call only. A NOTE "running atc: ..." comes right before atc
 * runs with the caller's stdout and stderr, so a caller that buffers output
 * flushes it there. `compare` receives the comparison's per-row progress.
 */
struct sg_verify_events {
    void (*fn)(void *ctx, enum sg_verify_event kind, const char *text);
    void *ctx;
    struct sg_compare_progress compare;
};

/* ------------------------------------------------------------- inputs */

/* One --input-shape entry: static dims only (a run needs sizes). */
struct sg_verify_shape {
    char name[256];
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
};

/* A run's inputs as given. Owns its strings; init before use, free after. */
struct sg_verify_inputs {
    char **files; /* -i arguments as given: FILE or NAME=FILE */
    size_t n_files, cap_files;
    struct sg_verify_shape *shapes;
    size_t n_shapes, cap_shapes;
    bool random, have_range;
    unsigned long long seed;
    double lo, hi; /* --range, default [0, 1) */
};

/* The shape-argument syntax, for usage messages. */
#define SG_VERIFY_SHAPE_SYNTAX "\"x:1,3,224,224;y:4\""

/* Empty: no files, no shapes, no random values, range [0, 1). */
void sg_verify_inputs_init(struct sg_verify_inputs *in);
/* Free what `in` holds and leave it empty. NULL is a no-op. */
void sg_verify_inputs_free(struct sg_verify_inputs *in);

/* Record one -i argument (copied). False when out of memory. */
bool sg_verify_inputs_add_file(struct sg_verify_inputs *in, const char *arg);

/* Parse "x:1,3,224,224;y:4" (a name may hold ':'; the last one ends it).
 * False on bad syntax, a negative dim or out of memory. */
bool sg_verify_inputs_add_shapes(struct sg_verify_inputs *in, const char *text);

/* --random SEED (a decimal integer); false when it is not one. */
bool sg_verify_inputs_set_seed(struct sg_verify_inputs *in, const char *text);

/* --range LO,HI with LO < HI, both finite and HI - LO finite; false
 * otherwise. */
bool sg_verify_inputs_set_range(struct sg_verify_inputs *in, const char *text);

/* The --input-shape entries as ATC's --input_shape text ("x:1,3;y:4"),
 * sg_malloc'd; NULL when there are none or when out of memory. */
char *sg_verify_inputs_shape_text(const struct sg_verify_inputs *in);

/* Named runtime values: a run's inputs. Owns names and references. */
struct sg_verify_values {
    uint32_t n;
    char **names;
    sg_rt_value **values;
};

/* Unref and free everything; v is left empty. NULL is a no-op. */
void sg_verify_values_clear(struct sg_verify_values *v);

/* The value named `name`, borrowed, or NULL. */
sg_rt_value *sg_verify_values_find(const struct sg_verify_values *v, const char *name);

/*
 * The value of every input rt needs (sg_rt_n_inputs), in its order, into
 * *out (which must be empty): named -i files first, then positional ones in
 * model order, then random values for the rest when in->random. Errors name
 * the input and the file: an --input-shape or -i NAME that is no input of
 * the model (SG_ENOTFOUND), an input given twice (SG_EDUP), more files than
 * inputs (SG_EINVAL), an input not given (SG_EUNDEF), and the file readers'
 * errors (wrong dtype, shape or size). *out is empty on failure.
 */
sg_status sg_verify_inputs_load(const struct sg_verify_inputs *in, const sg_rt *rt,
                                struct sg_verify_values *out, struct sg_diag *diag);

/*
 * Save each value as DIR/<name>.npy, DIR created if missing; names are
 * sanitized as dumps are ('.' and '/' as '_') and numbered where two would
 * share a file (a_b.npy, a_b_1.npy). files[i] (may be NULL) receives the
 * sg_malloc'd file name of value i, relative to DIR. SG_EIO names the file;
 * SG_ENOMEM.
 */
sg_status sg_verify_values_save(const struct sg_verify_values *v, const char *dir, char **files,
                                struct sg_diag *diag);

/* ---------------------------------------------------------------- run */

struct sg_verify_run_opts {
    const char *dump_dir;         /* an existing folder, private to the run: dumps go there */
    enum sg_dump_mode dump;       /* which tensors are dumped */
    int threads;                  /* BLAS threads; 0: the BLAS default */
    const char *label;            /* how messages name the model (its path); NULL: "the model" */
    uint64_t max_loop_iterations; /* sg_rt_opts.max_loop_iterations (0: the default) */
    struct sg_verify_values *outputs; /* non-NULL (and empty): receives the graph outputs, by
                                         name in graph order (emptied on failure) */
};

/* What a run did. Strings point into the model (valid while it lives). */
struct sg_verify_run_info {
    size_t n_tensors;           /* tensor files written */
    size_t n_nonfinite;         /* of them, tensors holding NaN/Inf */
    size_t n_nonfinite_outputs; /* graph outputs among them */
    char nonfinite[1024];       /* what sg_verify_nonfinite_text says of them ("" when none) */
    bool mock;                  /* the model was a mock OM, run with float16 emulation */
    const char *soc;            /* mock OM: its SoC, precision mode and overflow mode */
    const char *precision;      /*   (NULL when the file does not say) */
    const char *overflow;
};

/*
 * Run model m once with its tensors dumped into o->dump_dir (msit's ONNX
 * names; for a mock OM, device dump names and the numerics its compiler
 * chose), the inputs saved in the dump folder too (inputs/<name>.npy).
 * Inputs: when *values is empty and spec is given, they are made from spec
 * for the inputs m needs and left in *values for the caller (to free with
 * sg_verify_values_clear, or to give to the next run); otherwise every
 * input m needs is taken from *values by name (SG_ENOTFOUND names one it
 * lacks, saying the model may be compiled from another). info may be NULL.
 * Statuses: those of sg_rt_create, sg_rt_opts_mock, sg_verify_inputs_load,
 * sg_rt_run and the dump writer, the model named by o->label. The folder
 * may hold partial files on failure.
 */
sg_status sg_verify_run(sg_model *m, const struct sg_verify_run_opts *o,
                        const struct sg_verify_inputs *spec, struct sg_verify_values *values,
                        struct sg_verify_run_info *info, struct sg_diag *diag);

/*
 * One sentence on what a run's dumps held that is not finite (from
 * sg_dump_nonfinite), for a warning: which graph output holds NaN/Inf and
 * the first node whose output did (with `all`, every node output was seen;
 * otherwise only outputs were, and the sentence says --dump all finds the
 * node), or an input that held NaN/Inf. "" when everything is finite.
 * Returns buf.
 */
char *sg_verify_nonfinite_text(const struct sg_dump_nonfinite *nf, bool all, char *buf,
                               size_t size);

/* ------------------------------------------- a golden run, in memory */

/* The tensors of a golden run by value name: the run's inputs and every
 * main-graph node output (values inside subgraphs are not kept). */
typedef struct sg_verify_tensors sg_verify_tensors;

struct sg_verify_golden_opts {
    const struct sg_verify_inputs *inputs; /* used when *values is empty */
    const char *label;                     /* how messages name the model; NULL: "the model" */
    int threads;
    uint64_t max_loop_iterations;
};

/*
 * Run m in float32 and keep every main-graph tensor in *out (free with
 * sg_verify_tensors_free). Inputs as sg_verify_run takes them: made from
 * o->inputs into *values when it is empty (left there for the caller),
 * else taken from *values by name. Statuses of sg_rt_create,
 * sg_verify_inputs_load and sg_rt_run, prefixed "golden run of LABEL";
 * *out is NULL on failure.
 */
sg_status sg_verify_golden(sg_model *m, const struct sg_verify_golden_opts *o,
                           struct sg_verify_values *values, sg_verify_tensors **out,
                           struct sg_diag *diag);

/* The value named `name` (borrowed) or NULL; t may be NULL. */
sg_rt_value *sg_verify_tensors_find(const sg_verify_tensors *t, const char *name);
size_t sg_verify_tensors_count(const sg_verify_tensors *t);
/* The tensors as a case source (sg_cut.h); t must outlive it. */
struct sg_case_source sg_verify_tensors_source(sg_verify_tensors *t);
/* The tensors as the types of a cut's exposed values (sg_cut.h): their
 * dtypes and shapes; t must outlive it. */
struct sg_cut_typer sg_verify_tensors_typer(sg_verify_tensors *t);
void sg_verify_tensors_free(sg_verify_tensors *t);

/* ---------------------------------------------------- single-op cases */

struct sg_save_opts;

/*
 * The single-op case of node `node` of m into folder `dir` (existing,
 * empty): a copy of m cut to the node (sg_case_make) and written as an
 * ONNX backend-test folder (sg_case_write) with the tensors of src. m is
 * not changed. save may be NULL. Statuses of those calls.
 */
sg_status sg_verify_case_write(sg_model *m, const char *node, const struct sg_case_source *src,
                               const char *dir, const struct sg_save_opts *save,
                               struct sg_diag *diag);

struct sg_verify_cases_opts {
    const char *const *nodes; /* node names (an unnamed node by its dump name) */
    size_t n_nodes;
    bool all;    /* instead: every main-graph node, by its dump name (sg_dumpname.h) */
    bool single; /* one node, its case is `out` itself (no index.json) */
    const struct sg_case_source *src;
    const struct sg_save_opts *save; /* NULL: defaults */
    const char *out;                 /* the result folder (sg_outdir.h, tag "extract") */
};

/* One node of a sweep: dir (relative to out) or error is set. */
struct sg_verify_case {
    char *node, *op_type, *dir, *error;
};

struct sg_verify_cases_result {
    struct sg_verify_case *v;
    size_t n, n_failed;
};

void sg_verify_cases_clear(struct sg_verify_cases_result *r);

/*
 * The cases of o->nodes into o->out, all or nothing: with single, the one
 * case is the folder; otherwise one subfolder per node (names made safe
 * for file systems, numbered when two collide) and index.json listing
 * them (format "surgeon-cases"). In a sweep a node that cannot be made a
 * case is a WARNING event and an entry with its error, not a failure; each
 * case written is an INFO event "NODE (OP) -> DIR". Fails with the
 * statuses of sg_outdir_begin/commit and, for a single case, of
 * sg_verify_case_write; o->out is then as it was.
 */
sg_status sg_verify_cases_write(sg_model *m, const struct sg_verify_cases_opts *o,
                                const struct sg_verify_events *ev, struct sg_verify_cases_result *r,
                                struct sg_diag *diag);

/* ------------------------------------------------------------ compile */

/* Which compiler runs is always said, never guessed: a machine without
 * CANN does not get a mock OM where it asked for a real one. */
enum sg_verify_compiler {
    SG_VERIFY_COMPILER_ATC,   /* the real atc; SG_ENOTFOUND when it is not installed */
    SG_VERIFY_COMPILER_MOCK,  /* the mock compiler */
    SG_VERIFY_COMPILER_PRINT, /* nothing runs: the atc command line is returned */
    SG_VERIFY_COMPILER_COUNT
};

/* One compile job, as `surgeon atc` takes it. */
struct sg_verify_compile_opts {
    const char *model;       /* required: the ONNX model */
    const char *out;         /* required: ATC's --output prefix (ATC adds .om) */
    const char *soc;         /* required: --soc_version */
    const char *input_shape; /* ATC's --input_shape text; NULL: none */
    const char *precision;   /* a precision mode's name (sg_precision_mode_find); NULL: ATC's */
    const char *keep_dtype;  /* files ATC reads, given by the user; NULL: none */
    const char *customize_dtypes;
    const char *op_precision_mode;
    const char *fusion;            /* "off" (written as OUT.fusion_switch.cfg) or a switch file */
    const char *log;               /* ATC's --log level; NULL: none */
    const char *overflow;          /* the mock's "inf" or "saturation"; NULL: the SoC's */
    const char *const *keep_ops;   /* op types kept in float32 (OUT.keep_dtype.cfg) */
    size_t n_keep_ops;             /*   excludes keep_dtype */
    const char *const *keep_nodes; /* node names kept in float32 (the same file) */
    size_t n_keep_nodes;
    enum sg_verify_compiler compiler;
    const char *const *extra; /* atc arguments after "--", passed as given */
    size_t n_extra;
    const char *shown; /* how messages name `out`; NULL: as it is */
};

/* What a compile (or map) job did. Clear with sg_verify_compile_clear. */
struct sg_verify_compile_result {
    enum sg_verify_compiler compiler; /* the one that ran (never AUTO) */
    char *command;                    /* the atc command line (PRINT: the answer) */
    int atc_exit;                     /* atc's exit status when it ran, else 0 */
};

void sg_verify_compile_clear(struct sg_verify_compile_result *r);

/*
 * The options of a compile job, alone: SoC name, precision mode, log level,
 * --overflow (and that only the mock takes it), --input-shape syntax,
 * keep_dtype file against --keep lists, the entries of those lists, print
 * against mock, and the atc command line (extra arguments that set what
 * surgeon sets), and for the mock a SoC it knows (sg_soc.h, ignoring case;
 * another one only with --overflow, the error suggesting the nearest known
 * name). Reads no file. SG_EINVAL with the message of a usage error;
 * SG_ENOMEM.
 */
sg_status sg_verify_compile_check(const struct sg_verify_compile_opts *o, struct sg_diag *diag);

/*
 * Check (as above), then read and check the model and every file ATC would
 * read (errors name file:line:column), build in memory what surgeon writes
 * for ATC (OUT.keep_dtype.cfg, OUT.fusion_switch.cfg) and, for the mock,
 * the compiled model; only then write: the files, and OUT.om + OUT.json
 * (mock), or run atc (its output streams through). Nothing is written when
 * a check fails. result may be NULL. SG_EIO when atc fails (its exit status
 * in result->atc_exit and the message), SG_ENOTFOUND when atc is needed and
 * not installed; the readers', the mock compiler's and the writers'
 * statuses otherwise.
 */
sg_status sg_verify_compile(const struct sg_verify_compile_opts *o,
                            const struct sg_verify_events *ev,
                            struct sg_verify_compile_result *result, struct sg_diag *diag);

/*
 * Everything sg_verify_compile checks and reads, without writing or running
 * anything: the options, the model, every file ATC would read and, for the
 * mock, the compile in memory; o->out's folder need not exist yet. No
 * events (the real compile reports its warnings). For a workflow that must
 * find bad compile input before its long first step (the end-to-end
 * compare's golden run). The statuses of sg_verify_compile but SG_EIO from
 * atc.
 */
sg_status sg_verify_compile_dry(const struct sg_verify_compile_opts *o, struct sg_diag *d);

/*
 * The `atc --mode=1` map of compiled model `om` into `json`: for a mock OM
 * surgeon writes it; otherwise atc runs (`atc --mode=1 --om=OM --json=JSON
 * [extra...]`), or with print its command line is returned in
 * result->command. SG_EINVAL when the arguments do not fit (a usage error:
 * print or extra with a mock OM, an extra argument setting --om or
 * --json); SG_ENOTFOUND when om is no file, json's folder does not exist
 * or atc is not installed; SG_EIO when atc fails (result->atc_exit).
 */
sg_status sg_verify_map(const char *om, const char *json, const char *const *extra, size_t n_extra,
                        bool print, const struct sg_verify_events *ev,
                        struct sg_verify_compile_result *result, struct sg_diag *diag);

/* ------------------------------------------------- a run on a target */

/* What runs a model for the bisection and the single-op compare. */
enum sg_verify_exec_kind {
    SG_VERIFY_EXEC_MOCK, /* the mock compiler, the mock OM run here with float16 emulation */
    SG_VERIFY_EXEC_ATC,  /* the real atc, the OM run by the device command */
    SG_VERIFY_EXEC_CMD,  /* the user's command on the ONNX model */
    SG_VERIFY_EXEC_COUNT
};

struct sg_verify_exec {
    enum sg_verify_exec_kind kind;
    const char *command;        /* CMD: the shell command ({model}, {inputs}, {out}) */
    const char *device_command; /* ATC: the shell command that runs {om} ({inputs}, {out}) */
    double timeout;             /* seconds a command may run; 0: no limit */
    /* MOCK, ATC: compile options as sg_verify_compile_opts takes them. */
    const char *soc, *precision, *keep_dtype, *fusion, *overflow;
    const char *const *keep_ops;
    size_t n_keep_ops;
    const char *const *keep_nodes;
    size_t n_keep_nodes;
    int threads;                  /* MOCK: BLAS threads of the run */
    uint64_t max_loop_iterations; /* MOCK: sg_rt_opts.max_loop_iterations */
};

/* "mock", "atc", "cmd". */
const char *sg_verify_exec_name(enum sg_verify_exec_kind k);

/* "mock", "atc" or "cmd:COMMAND" (command borrowed from target) into t's
 * kind and command; SG_EINVAL names the targets. */
sg_status sg_verify_exec_parse(const char *target, struct sg_verify_exec *t, struct sg_diag *diag);

/* The options alone (usage errors, SG_EINVAL): a command with {model}
 * and {out}, compile options only for mock and atc (checked as
 * sg_verify_compile_check does, --soc required), a device command for atc
 * only, a timeout only for commands. */
sg_status sg_verify_exec_check(const struct sg_verify_exec *t, struct sg_diag *diag);

/* `command` with its placeholders replaced by the paths, each quoted for
 * sh; NULL paths leave theirs as they are. sg_malloc'd; NULL when out of
 * memory. */
char *sg_verify_exec_fill(const char *command, const char *model, const char *om,
                          const char *inputs, const char *out);

/*
 * Run ONNX model file `model` (loaded as m) on target t with inputs `in`
 * (by graph input name), its artefacts in existing folder `dir`: MOCK and
 * ATC compile into DIR/model.om (+ .json); MOCK runs the mock OM (output
 * dumps in DIR/dumps); CMD and ATC write DIR/inputs/<input>.npy, run the
 * command (a NOTE event first; its output in DIR/target.log) and read
 * DIR/out/<output>.npy. *out (empty) receives m's graph outputs in order;
 * *command the command as run (sg_malloc'd, NULL for MOCK). Errors name
 * the step's file or command: a command that fails, is killed, runs past
 * the timeout (SG_EIO) or writes no output (SG_ENOTFOUND); the compiler's,
 * the runtime's and the npy reader's statuses. *out is empty on failure.
 */
sg_status sg_verify_exec_run(const struct sg_verify_exec *t, const char *model, sg_model *m,
                             const struct sg_verify_values *in, const char *dir,
                             const struct sg_verify_events *ev, struct sg_verify_values *out,
                             char **command, struct sg_diag *diag);

/* ---------------------------------------------------------- bisection */

enum sg_verify_bisect_mode {
    SG_VERIFY_BISECT_BINARY, /* halve the range: ceil(log2 N) steps */
    SG_VERIFY_BISECT_LINEAR, /* prefixes 1, 2, ... until one fails */
    SG_VERIFY_BISECT_MODE_COUNT
};

struct sg_verify_bisect_opts {
    const char *model;                     /* required: MODEL.onnx */
    const char *out;                       /* required: the result folder (tag "bisect") */
    const struct sg_verify_inputs *inputs; /* required */
    struct sg_verify_exec target;          /* what runs each prefix */
    enum sg_verify_bisect_mode mode;
    struct sg_thresholds thresholds; /* a network output in error fails a step */
    int threads;                     /* BLAS threads of the golden runs */
    uint64_t max_loop_iterations;
};

/* One network output of a step against the golden run. */
struct sg_verify_bisect_output {
    char *name;
    struct sg_metrics m;
    bool error; /* sg_metrics_is_error */
};

/* One target run. Prefix lengths count nodes in topological order. */
struct sg_verify_bisect_step {
    size_t index;  /* 0: the full model, then 1, 2, ... */
    size_t lo, hi; /* the culprit's range before the step: a node in lo+1..hi (1-based) */
    size_t cut;    /* nodes 1..cut ran on the target (cut == N: the full model) */
    char *cut_node;
    bool fail;
    char *dir;     /* OUT/step_<index>_... */
    char *command; /* the command as run (cmd, atc), else NULL */
    struct sg_verify_bisect_output *outputs;
    size_t n_outputs;
};

typedef struct sg_verify_bisect_result {
    size_t n_nodes;
    struct sg_verify_bisect_step *steps;
    size_t n_steps;
    size_t target_runs;
    bool full_fails;    /* the full model fails on the target */
    bool found;         /* ... and the culprit is known */
    size_t culprit;     /* its index in topological order (0-based) */
    char *culprit_node; /* its name (its op type when it has none) */
    char *culprit_op;
    char *case_dir;     /* OUT/case, its single-op case (NULL when none could be made) */
    char **case_inputs; /* the case's inputs as NAME=FILE */
    size_t n_case_inputs;
    char **reproduce; /* command lines that reproduce the result, quoted for sh */
    size_t n_reproduce;
    char *out;
} sg_verify_bisect_result;

void sg_verify_bisect_free(sg_verify_bisect_result *r);

/* "bisect" or "linear". */
const char *sg_verify_bisect_mode_name(enum sg_verify_bisect_mode m);

/* The options alone (usage errors, SG_EINVAL): MODEL, -o, inputs, mode,
 * and the target (sg_verify_exec_check). */
sg_status sg_verify_bisect_check(const struct sg_verify_bisect_opts *o, struct sg_diag *diag);

/*
 * Find the earliest prefix of MODEL (topological order) whose run on the
 * target, with the rest on the golden runtime, breaks the network outputs
 * (README "surgeon bisect"): a golden run, one run of the full model on
 * the target, then one per step (at most ceil(log2 N) in bisect mode),
 * each step an INFO event; the culprit's single-op case and the commands
 * that reproduce the result. OUT holds inputs/, golden/, step_*, case/
 * and bisect.json. A full model that passes is no error: SG_OK with
 * full_fails false. Errors name the step: a target that fails, hangs or
 * writes nothing, a cut that cannot run; the steps done before stay in
 * OUT (bad input found before the golden run ends leaves OUT as it was).
 * The golden run's outputs holding NaN/Inf is SG_ERANGE.
 */
sg_status sg_verify_bisect(const struct sg_verify_bisect_opts *o, const struct sg_verify_events *ev,
                           sg_verify_bisect_result **out, struct sg_diag *diag);

/* ---------------------------------------------------- single-op compare */

struct sg_verify_single_opts {
    sg_model *model;                       /* the original model */
    const char *label;                     /* how messages name it */
    const struct sg_verify_values *inputs; /* the golden run's inputs, by name */
    const char *const *nodes;              /* the operators to try alone */
    size_t n_nodes;
    struct sg_verify_exec target; /* what runs each case */
    struct sg_thresholds thresholds;
    const char *dir;   /* the folder of the cases (created if missing): DIR/<node>/ */
    const char *shown; /* how messages name dir; NULL: as it is */
    int threads;
    uint64_t max_loop_iterations;
};

/* One operator alone. Strings sg_malloc'd. */
struct sg_verify_single_row {
    char *node, *op_type;
    char *dir;    /* its folder under dir: case/ (the single-op case), target/ */
    bool made;    /* the case was made, ran and was compared */
    bool fails;   /* an output of the case is in error on the node's own golden inputs */
    char *output; /* the worst output, its metrics and the tests it crossed */
    struct sg_metrics m;
    unsigned crossed;
    char *error; /* !made: why */
};

struct sg_verify_single_result {
    struct sg_verify_single_row *rows;
    size_t n, n_fail, n_pass, n_error;
};

void sg_verify_single_clear(struct sg_verify_single_result *r);

/*
 * For each node: its single-op case from a golden run of o->model on
 * o->inputs (kept in memory), the case run on o->target
 * (sg_verify_exec_run), its outputs compared with the golden ones: `fails`
 * says the operator is wrong on its own golden inputs, `!fails` that its
 * error in the whole run is inherited. An INFO event per node; a node
 * that cannot be made a case or run is a row with its error (a WARNING).
 * Fails (r empty) on the golden run's errors, folders that cannot be made
 * and SG_ENOMEM.
 */
sg_status sg_verify_single_op(const struct sg_verify_single_opts *o,
                              const struct sg_verify_events *ev, struct sg_verify_single_result *r,
                              struct sg_diag *diag);

/* DIR/single_op.csv (Node, OpType, Case, Output, six metrics, OverFlow,
 * FailsAlone, Error) and DIR/single_op.json ("surgeon-single-op"). */
sg_status sg_verify_single_write(const struct sg_verify_single_result *r, const char *dir,
                                 struct sg_diag *diag);

/* ------------------------------------------- the end-to-end comparison */

enum sg_verify_target {
    SG_VERIFY_TARGET_MOCK,    /* "mock": the mock compiler; the mock OM runs here */
    SG_VERIFY_TARGET_ATC,     /* "atc": the real compiler; dumps from the device */
    SG_VERIFY_TARGET_FILE,    /* a compiled model not yet read (before classify) */
    SG_VERIFY_TARGET_MOCK_OM, /* a mock OM file: runs here */
    SG_VERIFY_TARGET_REAL_OM, /* any other file: a real OM; dumps from the device */
    SG_VERIFY_TARGET_COUNT
};

struct sg_verify_compare_opts {
    const char *model;                     /* required: MODEL.onnx */
    const char *target;                    /* required: "mock", "atc" or a compiled model */
    const char *dumps;                     /* a real OM's device dumps (-t) */
    const char *map;                       /* a real OM's `atc --mode=1` JSON (-m) */
    const char *out;                       /* required: the result folder */
    const struct sg_verify_inputs *inputs; /* required */
    /* Compile options, as sg_verify_compile_opts takes them (targets mock, atc). */
    const char *soc, *precision, *keep_dtype, *fusion, *overflow;
    const char *const *keep_ops;
    size_t n_keep_ops;
    const char *const *keep_nodes;
    size_t n_keep_nodes;
    struct sg_thresholds thresholds;
    int threads;                  /* BLAS threads of both runs; 0: the BLAS default */
    uint64_t max_loop_iterations; /* of both runs: sg_rt_opts.max_loop_iterations */
    /* The single-op compare (targets mock and atc): every operator behind a
     * row in error, or single_nodes when given, alone on the target
     * (sg_verify_single_op) into OUT/single_op/, OUT/single_op.csv, .json. */
    bool single_op;
    const char *const *single_nodes;
    size_t n_single_nodes;
    const char *device_command; /* atc: runs each case's OM (sg_verify_exec) */
    double timeout;             /* of the device command; 0: none */
};

/* What the end-to-end compare made. Free with sg_verify_compare_free. */
typedef struct sg_verify_compare_result {
    enum sg_verify_target target; /* the kind the target turned out to be */
    sg_compare_result *compare;   /* the comparison */
    char *out;                    /* the result folder, as reports name it */
    char *csv;                    /* OUT/result_<timestamp>.csv */
    char *repeat;                 /* the command that repeats the run on the saved inputs */
    char *compiled;               /* the compiled model (OUT/<model>.om or the given one) */
    char *map_path;               /* the map the comparison read */
    char *target_dumps;           /* the target's dumps (OUT/target or -t) */
    size_t golden_tensors, target_tensors;
    struct sg_verify_single_result single; /* with single_op */
} sg_verify_compare_result;

void sg_verify_compare_free(sg_verify_compare_result *r);

/* "mock" and "atc" are those targets; anything else is TARGET_FILE. */
enum sg_verify_target sg_verify_target_of(const char *target);

/*
 * What the compiled model at `path` is: TARGET_MOCK_OM (an ONNX file with
 * the mock OM marker, checked) or TARGET_REAL_OM (anything that does not
 * read as ONNX). Fails, never with SG_EINVAL, when there is no such file
 * (SG_ENOTFOUND), when it is an ONNX model that is not compiled, or when a
 * mock OM is of another format version.
 */
sg_status sg_verify_target_classify(const char *path, enum sg_verify_target *kind,
                                    struct sg_diag *diag);

/*
 * The options of an end-to-end compare for a target of `kind` (from
 * sg_verify_target_of, then sg_verify_target_classify for a file; with
 * TARGET_FILE only what holds for any compiled model is checked): -o
 * present, --range only with --random, compile options only where there
 * is a compile (and checked as sg_verify_compile_check does), -t and -m
 * only for a real OM (-t required there and for atc). SG_EINVAL only.
 */
sg_status sg_verify_compare_check(const struct sg_verify_compare_opts *o,
                                  enum sg_verify_target kind, struct sg_diag *diag);

/*
 * The whole workflow (README "surgeon compare MODEL.onnx --target"):
 * classify and check (as above); check the input (MODEL loads and is not a
 * mock OM, OUT may be replaced, nothing this run reads lies inside OUT, atc
 * is installed where it is needed, -t is a folder); then in a temporary
 * folder beside OUT: the golden run (MODEL in float32, every node dumped
 * into golden/, its inputs saved in inputs/), the compile (as
 * sg_verify_compile into <model>.om and .json; atc --mode=1 maps a real OM
 * unless -m gave the map), the target run (a mock OM on the very inputs,
 * dumped as device dumps into target/; a real OM's dumps come from -t) and
 * run.json (what ran, the command that repeats it); that folder becomes
 * OUT, and the comparison (sg_compare_run + sg_compare_write_reports) runs
 * on OUT's paths. On any failure OUT is as it was before and *out is NULL.
 * On success *out holds the comparison: whether the network outputs pass
 * is its analysis' verdict, not the status.
 */
sg_status sg_verify_compare_model(const struct sg_verify_compare_opts *o,
                                  const struct sg_verify_events *ev, sg_verify_compare_result **out,
                                  struct sg_diag *diag);

#endif
