/*
 * sg_compare.h - layer-by-layer comparison of a target run against a golden
 * run, as msit / msaccucmp do it, and the answer a person can act on.
 *
 * The pipeline, top to bottom (compare.c runs it):
 *
 *   sg_dumpset_scan      a folder of .npy dumps, named the msit ONNX way
 *                        (<node>.<i>.<ts>.npy) or the device way
 *                        (<OpType>.<OpName>.<task>.<stream>.<ts>.output.<i>.npy)
 *   sg_atc_map_read   optional `atc --mode=1`-style JSON: compiled op ->
 *                        original ONNX nodes (many-to-one for fused ops)
 *   match                one row per compared tensor, in topological order of
 *                        the original model; tensors present on one side only
 *                        get a row too
 *   sg_metrics_compute   the ten metrics of FORMATS.md for each row
 *   analysis             verdict on the network outputs, first failing
 *                        operator, its cause (overflow, fused op, accumulated
 *                        error) and advice
 *   reports              result_<timestamp>.csv (msit columns), result.json,
 *                        report.html
 *
 * Metrics: x is the target tensor, y the golden one, both flattened and
 * converted to float32 whatever their dtype (bool: cosine and relative
 * Euclidean distance only; string and complex are refused). Accumulation is
 * in double. See FORMATS.md for the definitions; where FORMATS.md leaves a
 * case open this library decides as follows:
 *   - empty tensors: every metric NaN, reason "empty tensor";
 *   - KL, a side whose max equals its min is uniform (normalisation skipped);
 *   - NaN/Inf go through the formulas as they would in numpy (NaN propagates,
 *     max of anything with NaN is NaN);
 *   - a row is a precision error when a threshold is crossed (comparisons
 *     with NaN are false, as in msit) OR when it overflows: the target holds
 *     NaN/Inf at an element where the golden value is finite.
 *
 * Nothing here prints or exits; errors come back as sg_status + sg_diag.
 */
#ifndef SG_COMPARE_H
#define SG_COMPARE_H

#include "sg_atcmap.h"
#include "sg_dumpname.h"
#include "sg_ir.h"
#include "sg_status.h"
#include "sg_tensorfile.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ------------------------------------------------------------- metrics */

/* FORMATS.md's eps (DBL_EPSILON). */
#define SG_METRIC_EPS 2.220446049250313e-16

/* Notes on how a metric came out, for CompareFailReason. */
enum sg_metric_flags {
    SG_METRIC_TARGET_ZERO = 1u << 0, /* ||x|| <= eps and ||y|| > eps: cosine NaN */
    SG_METRIC_GOLDEN_ZERO = 1u << 1, /* ||y|| <= eps and ||x|| > eps: cosine NaN */
    SG_METRIC_BOOL = 1u << 2,        /* bool data: only cosine and RED computed */
    SG_METRIC_EMPTY = 1u << 3,       /* no elements: everything NaN */
    SG_METRIC_NONFINITE = 1u << 4,   /* NaN/Inf on some side */
};

struct sg_metrics {
    double cosine;         /* CosineSimilarity */
    double max_abs;        /* MaxAbsoluteError */
    double accum_rel;      /* AccumulatedRelativeError */
    double red;            /* RelativeEuclideanDistance */
    double kl;             /* KullbackLeiblerDivergence (P target, Q golden) */
    double mean_abs;       /* MeanAbsoluteError */
    double rmse;           /* RootMeanSquareError */
    double max_rel;        /* MaxRelativeError */
    double mean_rel;       /* MeanRelativeError */
    double mean_rel_floor; /* the same with |y_i| floored at thresholds.mre_floor * max |y|
                              (filled by the comparison when that threshold is on, else NaN) */
    double target_mean, target_std, golden_mean, golden_std; /* StandardDeviation */
    uint64_t n;                                              /* elements compared */
    uint64_t target_nonfinite;                               /* NaN/Inf elements of the target */
    uint64_t golden_nonfinite; /* NaN/Inf elements of the golden side */
    uint64_t overflow;         /* elements non-finite on the target, finite on the golden side */
    unsigned flags;            /* enum sg_metric_flags */
};

/*
 * The metrics of n float32 pairs (x: target, y: golden). Never fails; the
 * pointers may be NULL when n is 0. One pass over the data for everything
 * but KL, which needs the ranges of the first pass and reads the data once
 * more; data with NaN/Inf takes a slower exact path.
 */
void sg_metrics_f32(const float *x, const float *y, size_t n, struct sg_metrics *out);

/*
 * The metrics of two tensors of any numeric dtype (converted to float32 in
 * chunks, never copied whole). Shapes must hold the same number of elements
 * (SG_ESHAPE otherwise, both shapes in the message); string and complex
 * dtypes are SG_EUNSUPPORTED. Bool data (either side) gives cosine and RED
 * only, the rest NaN.
 */
sg_status sg_metrics_compute(const struct sg_array *target, const struct sg_array *golden,
                             struct sg_metrics *out, struct sg_diag *diag);

/*
 * Thresholds (msit's defaults by SG_THRESHOLDS_DEFAULT). A NaN threshold is
 * off (no comparison with NaN is true). The scale-free alternatives are off
 * by default: rmse_relative replaces the absolute RMSE test by RMSE /
 * std(golden) > rmse_relative (for tensors whose values are large, where
 * float16's spacing alone puts RMSE past 1); mre_floor > 0 computes the
 * relative errors over max(|y_i|, mre_floor * max |y|) (for tensors that
 * cross zero, where a near-zero golden value makes one relative error
 * huge).
 */
struct sg_thresholds {
    double cosine;        /* error when CosineSimilarity < cosine */
    double red;           /* error when RelativeEuclideanDistance > red */
    double kl;            /* error when KullbackLeiblerDivergence > kl */
    double rmse;          /* error when RootMeanSquareError > rmse */
    double mre;           /* error when MeanRelativeError > mre */
    double rmse_relative; /* NaN: off; else error when RMSE / std(golden) > it (not rmse) */
    double mre_floor;     /* 0: off; else MeanRelativeError's floor, a fraction of max |y| */
};
#define SG_THRESHOLDS_DEFAULT                                                                      \
    {                                                                                              \
        0.99, 0.05, 0.005, 1.0, 1.0, NAN, 0                                                        \
    }

/* Which test a row failed: bits of sg_metrics_crossed. */
enum sg_crossed {
    SG_CROSSED_COSINE = 1u << 0,
    SG_CROSSED_RED = 1u << 1,
    SG_CROSSED_KL = 1u << 2,
    SG_CROSSED_RMSE = 1u << 3, /* RMSE, or RMSE / std(golden) with rmse_relative */
    SG_CROSSED_MRE = 1u << 4,  /* MeanRelativeError, floored with mre_floor */
    SG_CROSSED_OVERFLOW = 1u << 5,
};

/* The tests the metrics fail (enum sg_crossed bits; 0: none). */
unsigned sg_metrics_crossed(const struct sg_metrics *m, const struct sg_thresholds *t);

/* Whether the metrics cross a threshold or overflow (see the top). */
bool sg_metrics_is_error(const struct sg_metrics *m, const struct sg_thresholds *t);

/* The value the RMSE test compares (RMSE, or RMSE / std(golden)), the
 * limit it compares with, and the value the MRE test compares. */
double sg_metrics_rmse_tested(const struct sg_metrics *m, const struct sg_thresholds *t);
double sg_metrics_rmse_limit(const struct sg_thresholds *t);
double sg_metrics_mre_tested(const struct sg_metrics *m, const struct sg_thresholds *t);

/*
 * "RootMeanSquareError 1.530000 > 1; KullbackLeiblerDivergence 0.006600 >
 * 0.005" for the bits of `crossed` (msit's metric names; "RMSE/std(golden)"
 * and "MeanRelativeError(floor 0.01)" for the alternatives, "OverFlow 12 of
 * 64" for an overflow) into buf; "" for 0. Returns buf.
 */
char *sg_metrics_crossed_text(const struct sg_metrics *m, const struct sg_thresholds *t,
                              unsigned crossed, char *buf, size_t size);

/*
 * The metrics of golden tensor g rounded to `dtype` (float16 or bfloat16;
 * others round to float32) against itself: the error that the target's
 * precision makes of these very values, to tell a rounding from a jump
 * (mean_rel_floor too when mre_floor > 0).
 * SG_EUNSUPPORTED for string, complex and bool data; SG_ENOMEM.
 */
sg_status sg_metrics_rounding(const struct sg_array *g, int32_t dtype, double mre_floor,
                              struct sg_metrics *out, struct sg_diag *diag);

/* MeanRelativeError with |y_i| floored at floor * max |y| (NaN when empty
 * or unsupported). */
double sg_metrics_mre_floor(const struct sg_array *target, const struct sg_array *golden,
                            double floor);

/*
 * How far the metrics are into their thresholds: the largest of
 * (1 - cosine) / (1 - t->cosine), red / t->red, kl / t->kl, rmse / t->rmse,
 * mean_rel / t->mre over the metrics that are numbers. Above 1 means error;
 * +Inf on overflow; 0 when nothing could be computed.
 */
double sg_metrics_severity(const struct sg_metrics *m, const struct sg_thresholds *t);

/* ---------------------------------------------------------- dump folders */

/* One dump file of an operator output (input dumps are skipped). */
struct sg_dump_file {
    char *path;         /* the file */
    char *key;          /* match key: the node or op name as exactly as the folder gives
                           it (mapping.csv, else as the file spells it: '.' and '/' as '_'
                           in ONNX-form names, as msit writes them, '/' as '_' in device
                           ones) */
    char *name;         /* the node or op name as best known: from mapping.csv, the file
                           name (ONNX form), or the device op name (device form) */
    char *op_type;      /* device form: the op type of the file name; NULL otherwise */
    uint32_t index;     /* output index */
    uint64_t timestamp; /* dump order */
    bool device;        /* named the device way */
    bool input;         /* an ONNX-form input dump (input_<node>...); key is "input_<node>" */
    long member;        /* a member of the set's .npz (path names the archive), or -1 */
};

/* A scanned folder. Read-only for callers. */
typedef struct sg_dumpset {
    char *dir;
    struct sg_dump_file *files; /* outputs sorted by (timestamp, key, index), then
                                   n_input_files ONNX-form input dumps */
    size_t n_files;             /* operator outputs */
    size_t n_input_files;       /* ONNX-form input dumps after them */
    size_t n_inputs;            /* input dumps of either form (not compared) */
    size_t n_ignored;           /* other .npy files whose names are not dumps */
    void *by_key;               /* (key, index) -> file (internal) */
    void *by_loose;             /* (key as a file spells it, index) -> file (internal) */
    void *arena;                /* strings (internal) */
    struct sg_npz *npz;         /* the archive of a set read from an .npz, or NULL */
    size_t n_unmatched;         /* tensor-named sets: files that name no node output */
    const char *layout;         /* "msit" (dump names), "tensors" (.npy named after
                                   tensors) or "npz" */
} sg_dumpset;

/*
 * Scan `dir` and its subfolders (msit nests dumps under timestamp and model
 * folders) for dump files and read mapping.csv where present (shortened
 * names). SG_ENOTFOUND: no such folder, or no dump file in it ("no .npy dump
 * files"); SG_EDUP: the same output dumped twice (two runs in one folder:
 * both files named); SG_EIO; SG_ENOMEM. *out is NULL on failure.
 */
sg_status sg_dumpset_scan(const char *dir, sg_dumpset **out, struct sg_diag *diag);

/*
 * A golden dump named by tensor, as people dump ONNX Runtime with every
 * node output exposed: `path` a folder of <tensor>.npy files (the tensor
 * name as is, or made file-safe: '/' as '_', also ':' as '_', or every
 * character but A-Za-z0-9._- as '_', msit's '.' and '/' as '_'; each
 * possibly without its leading '_'), or one .npz holding a member per
 * tensor (np.savez / np.savez_compressed with tensor names as keys). Each
 * file is matched to the node output of model m's main graph that makes
 * that tensor and keyed by the node's dump name (names: sg_dump_names of
 * m), so it meets a dump of either form. A spelling two tensors share is
 * used for neither; files naming graph inputs, initializers or nothing are
 * counted in n_unmatched. SG_ENOTFOUND when no file names a node output
 * (the message says how files must be named); sg_npz_open's statuses for a
 * bad archive; SG_EIO, SG_ENOMEM.
 */
sg_status sg_dumpset_scan_tensors(const char *path, const sg_model *m, const sg_dump_names *names,
                                  sg_dumpset **out, struct sg_diag *diag);

/* Read file f of set ds (an .npy, or a member of its .npz). */
sg_status sg_dump_file_read(const sg_dumpset *ds, const struct sg_dump_file *f,
                            struct sg_array *out, struct sg_diag *diag);

/* Free. NULL is a no-op. */
void sg_dumpset_free(sg_dumpset *ds);

/* The file dumped for output `index` of the node or op called `key`: the
 * file whose key it is, else the one file whose key a file name spells as
 * it spells `key` (a dump that lost the '.' and '/' of names, as msit's
 * do); NULL when there is none, or several spell it alike. */
const struct sg_dump_file *sg_dumpset_find(const sg_dumpset *ds, const char *key, uint32_t index);

/* The compiled-op map (sg_atc_map, sg_atc_op) is graph/sg_atcmap.h. */

/* ------------------------------------------------------------ comparison */

enum sg_compare_status {
    SG_ROW_COMPARED,    /* metrics computed */
    SG_ROW_GOLDEN_ONLY, /* no target dump for this golden tensor */
    SG_ROW_TARGET_ONLY, /* no golden dump for this target tensor */
    SG_ROW_FUSED_AWAY,  /* golden tensor inside a fused op (not its compared output) */
    SG_ROW_FAILED,      /* both sides present but not comparable: see reason */
    SG_ROW_STATUS_COUNT
};

struct sg_compare_row {
    enum sg_compare_status status;
    uint32_t position;       /* topological position of `node` in the model; without a model
                                the dump order of the golden file; UINT32_MAX: neither */
    const char *op_type;     /* OpType: target op type (device form) or the node's op type */
    const char *target;      /* NPUDump: target op / node name, "*" when none */
    const char *golden;      /* GroundTruth: comma-joined ONNX node names, "*" when none */
    const char *golden_node; /* the node whose output is compared (last covered), or NULL */
    uint32_t index;          /* output index */
    const struct sg_dump_file *target_file, *golden_file; /* NULL when absent */
    int32_t target_dtype, golden_dtype;
    int64_t dims[SG_MAX_RANK]; /* golden shape (target shape when no golden file) */
    uint32_t rank;
    bool has_shape;
    struct sg_metrics m;        /* valid when status == SG_ROW_COMPARED */
    uint64_t golden_nonfinite;  /* NaN/Inf elements of the golden tensor, and of them */
    uint64_t golden_nan;        /* NaN: known for compared rows; for the others read only
                                   when a compared golden tensor holds NaN/Inf, up to where
                                   they began (0 otherwise) */
    int32_t compute_dtype;      /* the dtype the target op wrote this output in: the map's
                                   output dtype, else the target file's (0: not read) */
    unsigned crossed;           /* enum sg_crossed: the tests it fails (0 when none) */
    bool within_rounding;       /* in error, no overflow, and no failed test by more than
                                   twice what rounding the golden tensor to compute_dtype
                                   fails it by: the target's precision, not the op */
    bool has_rounding;          /* `rounding` is set (rows in error without overflow) */
    struct sg_metrics rounding; /* golden rounded to compute_dtype against golden */
    bool is_error;              /* IsPrecisionError */
    bool is_output;             /* IsOutputNode: the compared tensor is a graph output */
    bool fused;                 /* the target op covers more than one ONNX node */
    bool unreadable;            /* a file could not be read (reason says which) */
    bool mismatch;              /* the shapes differ: the target tensor is wrong */
    const struct sg_atc_op *op; /* the map op, or NULL */
    const sg_node *node;        /* the golden node in the model (valid while the model
                                   lives), or NULL; NULL for a body node: */
    const sg_node *body_node;   /* the node inside an If/Loop/Scan body whose execution
                                   (golden_node names it) the row compares, or NULL */
    const char *reason;         /* CompareFailReason, "" when none */
};

enum sg_verdict {
    SG_VERDICT_PASS,              /* every network output compared and within thresholds */
    SG_VERDICT_FAIL,              /* a network output is in error (or mis-shaped) */
    SG_VERDICT_UNKNOWN,           /* no output in error, but some could not be compared */
    SG_VERDICT_GOLDEN_NOT_FINITE, /* no output in error, but the golden run's own network
                                     outputs hold NaN/Inf: nothing is proved */
    SG_VERDICT_COUNT
};

/* How an input of the first failing operator stands. */
enum sg_input_state {
    SG_INPUT_AGREES,      /* dumped on both sides, within the thresholds */
    SG_INPUT_CONSTANT,    /* an initializer or a Constant node: agrees by definition */
    SG_INPUT_NOT_DUMPED,  /* not dumped on both sides; everything upstream agrees */
    SG_INPUT_IN_ERROR,    /* its row (or the fused op making it) is in error */
    SG_INPUT_GRAPH_INPUT, /* a graph input: both runs read the same values */
    SG_INPUT_ROUNDING,    /* dumped, past a threshold by no more than the target's rounding */
    SG_INPUT_STATE_COUNT
};

struct sg_compare_input {
    const char *value; /* the ONNX value name */
    enum sg_input_state state;
    ptrdiff_t row; /* its row, or -1 */
};

enum sg_cause {
    SG_CAUSE_NONE,        /* nothing fails */
    SG_CAUSE_OVERFLOW,    /* NaN/Inf appear on the target side only */
    SG_CAUSE_FUSED,       /* a fused op: its inner nodes are hidden */
    SG_CAUSE_JUMP,        /* one operator: its inputs agree, its output does not */
    SG_CAUSE_ACCUMULATED, /* no single jump: error grows gradually */
    SG_CAUSE_PRECISION,   /* no op is wrong: the error is the rounding of the target's dtype */
    SG_CAUSE_COUNT
};

struct sg_compare_analysis {
    enum sg_verdict verdict;
    bool outputs_known; /* a model told which tensors are network outputs */
    size_t n_outputs, n_outputs_failed, n_outputs_missing;
    size_t n_compared, n_errors, n_overflow, n_golden_only, n_target_only, n_failed, n_fused_away,
        n_unreadable, n_mismatch;
    ptrdiff_t first_fail; /* the first failing operator's row, or -1 */
    enum sg_cause cause;
    bool overflow;                   /* the first failing row overflows */
    bool fused;                      /* ... is a fused op */
    struct sg_compare_input *inputs; /* its inputs (model given) */
    size_t n_inputs;
    const char **hidden; /* ONNX nodes the failing row hides: fused, then not dumped */
    size_t n_hidden;
    size_t n_undumped;                 /* how many of them (or more) simply have no dump */
    double input_severity;             /* worst sg_metrics_severity of its inputs' rows */
    size_t n_outputs_golden_nonfinite; /* network outputs (without a model: compared tensors)
                                          whose golden values hold NaN/Inf */
    ptrdiff_t golden_nonfinite;        /* the first row in order whose golden tensor holds
                                          NaN/Inf (where the golden run broke), or -1 */
    const char *summary;               /* one paragraph in plain words */
    const char **advice;               /* what to do next, one line each */
    size_t n_advice;
    const char **notes; /* caveats (no model, unknown names, ...) */
    size_t n_notes;
};

struct sg_compare_progress {
    void (*fn)(void *ctx, size_t done, size_t total, const char *name);
    void *ctx;
};

struct sg_compare_opts {
    const char *golden_dir;  /* required */
    const char *target_dir;  /* required */
    const char *map_path;    /* optional `atc --mode=1` JSON */
    sg_model *model;         /* optional, borrowed: order, outputs, inputs of nodes (node
                                marks are used as scratch); must outlive the run */
    const char *model_label; /* how to name the model in messages (its path) */
    struct sg_thresholds thresholds;
    struct sg_compare_progress progress; /* optional */
};

/* The result of a comparison. Read-only; free with sg_compare_result_free. */
typedef struct sg_compare_result {
    struct sg_compare_row *rows; /* in topological order, one-sided rows too */
    size_t n_rows;
    struct sg_compare_analysis analysis;
    struct sg_thresholds thresholds;
    sg_dumpset *golden, *target;
    sg_atc_map *map;
    const char *golden_dir, *target_dir, *map_path, *model_label;
    struct sg_diag first_unreadable; /* the first file that could not be read */
    void *arena;                     /* internal */
} sg_compare_result;

/* Options with msit's thresholds and nothing else set. */
void sg_compare_opts_init(struct sg_compare_opts *opts);

/*
 * Compare the dumps of opts->golden_dir (the reference) with those of
 * opts->target_dir. This is the whole engine; `surgeon compare` calls it on
 * dump folders. The end-to-end mode (`surgeon compare MODEL --target
 * mock|atc|OM`) is meant to call it the same way once the runtime and the
 * compiler exist: the fp32 run dumps into OUT/golden (sg_dump_onnx_name
 * names), the compiler writes OUT/<model>.json in the `atc --mode=1` form,
 * the target run dumps compiled ops into OUT/target (sg_dump_device_name
 * names; a real OM's dumps come from the device through -t), and then
 * sg_compare_run({golden, target, map, model}) + sg_compare_write_reports.
 *
 * Fails (with *out NULL) on input that makes the comparison meaningless: a
 * missing or empty folder, a folder with two runs in it, a map that cannot
 * be read, a map naming ONNX nodes the model lacks (with a model given).
 * Per-tensor problems do not fail the run: a row records them in its reason
 * (shapes that differ, a truncated or unreadable .npy; the latter also
 * counted in analysis.n_unreadable and first_unreadable).
 * Statuses: SG_ENOTFOUND, SG_EDUP, SG_EIO, SG_EPARSE, SG_EINVAL, SG_ENOMEM.
 */
sg_status sg_compare_run(const struct sg_compare_opts *opts, sg_compare_result **out,
                         struct sg_diag *diag);

/* Free a result. NULL is a no-op. */
void sg_compare_result_free(sg_compare_result *r);

/* ---------------------------------------------------------------- reports */

/* The CSV header of result_<timestamp>.csv, without the newline. */
extern const char sg_compare_csv_header[];

/*
 * Write the reports into folder `dir` (created if missing):
 * result_<YYYYmmddHHMMSS>.csv, result.json and report.html, each atomically.
 * `when` stamps the CSV name and the reports. If csv_path is not NULL it
 * receives the CSV's path (sg_malloc'd). SG_EIO names the file.
 */
sg_status sg_compare_write_reports(const sg_compare_result *r, const char *dir, time_t when,
                                   char **csv_path, struct sg_diag *diag);

/* Each report alone, to a stream (not atomic: for tests and tools). */
sg_status sg_compare_write_csv(const sg_compare_result *r, FILE *out);
sg_status sg_compare_write_json(const sg_compare_result *r, time_t when, FILE *out);
sg_status sg_compare_write_html(const sg_compare_result *r, time_t when, FILE *out);

/* Names for enum values, as reports spell them ("compared", "PASS", ...). */
const char *sg_compare_status_name(enum sg_compare_status s);
const char *sg_verdict_name(enum sg_verdict v);
const char *sg_cause_name(enum sg_cause c);
const char *sg_input_state_name(enum sg_input_state s);

#endif
