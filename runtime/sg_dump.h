/*
 * sg_dump.h - the dump writer: node outputs of a run as .npy files in the
 * msit ONNX naming, plus manifest.json.
 *
 * A dump folder holds
 *     <node>.<output index>.<timestamp_us>.npy   (names from sg_dumpname.h)
 *     mapping.csv      (only when a file name had to be shortened)
 *     inputs/<input>.npy   (the inputs of the run, when sg_dump_input is used)
 *     manifest.json
 * manifest.json lists every tensor in execution order:
 *     {"format": "surgeon-dump", "version": 1, "mode": "all"|"outputs",
 *      "tensors": [{"index", "file", "node", "op_type", "output_index",
 *                   "value", "depth", "dtype", "shape", "graph_output", "nan",
 *                   "inf"}, ...],
 *      "inputs": [{"name", "file", "dtype", "shape"}, ...],
 *      "outputs": [{"name", "file"}, ...]}
 * "file" is null for values numpy cannot hold (strings, sequences,
 * optionals), and in "outputs" for a graph output that no node produces (a
 * graph input or initializer passed straight through); bfloat16 tensors are
 * written as float32 and say so in "file_dtype". Nodes are named as
 * sg_dump_names says (a node without a name as msit names it,
 * <OpType>_<position>; names that file names would spell alike get file
 * stems of their own, listed in mapping.csv); "node" in the manifest says
 * which name was used; "nan" and "inf" count its NaN and +-Inf elements.
 * With SG_DUMP_ALL the nodes inside If/Loop/Scan bodies are dumped at each
 * execution, under the instance names of sg_dumpname.h
 * (Loop_3::body[2]::Add_1: the iteration in the name); "depth" is 0 for a
 * main-graph node, else how deep in bodies it lies, and "value" is the
 * body's own value name (the same for every iteration).
 * Each tensor entry also has "kind" (tensor, sequence, optional) and, when
 * the file's dtype differs, "file_dtype".
 *
 * Device naming (sg_dump_set_device_names), for runs of a mock OM: files
 * are named as device dumps converted to npy,
 *     <OpType>.<OpName>.<task>.<stream>.<timestamp>.output.<i>.npy
 * with the compiled op type (sg_mockom_op_type), the node's position in
 * the run as task and stream 0; an op name too long for a file name is
 * shortened to a prefix and a hash, and listed in mapping.csv.
 *
 * The writer is an observer (sg_rt_opts.on_output): each value is written
 * as soon as its node has run, by a thread of the writer's own (so the run
 * goes on meanwhile; a value stays alive until its file is written, and at
 * most 256 MB wait). The
 * folder must exist and be private to the writer: tensor files are written
 * in place, not through a temporary file each (that doubled the cost of
 * --dump all), so a failed run leaves partial files there; the CLI writes
 * into a temporary folder and renames it into place once the run is done.
 * manifest.json and mapping.csv are written atomically.
 */
#ifndef SG_DUMP_H
#define SG_DUMP_H

#include "sg_runtime.h"

enum sg_dump_mode {
    SG_DUMP_OUTPUTS = 0, /* graph outputs only */
    SG_DUMP_ALL,         /* every output of every node, those inside If/Loop/Scan
                            bodies included (once per execution, named as
                            sg_dumpname.h says) */
    SG_DUMP_MODE_COUNT
};

typedef struct sg_dump sg_dump;

/* A writer into existing folder `dir` (copied). */
sg_status sg_dump_create(const char *dir, enum sg_dump_mode mode, sg_dump **out,
                         struct sg_diag *diag);

/* Name files as device dumps (see above) instead of msit's ONNX naming.
 * Call before the run. */
void sg_dump_set_device_names(sg_dump *d, bool on);

/* Free the writer (files stay). NULL is a no-op. */
void sg_dump_free(sg_dump *d);

/* Set opts' observer fields for writer d: on_output, observe_ctx, and which
 * values are observed (graph outputs only, or every node's, bodies' too). */
void sg_dump_rt_opts(sg_dump *d, struct sg_rt_opts *opts);

/* The observer: pass as sg_rt_opts.on_output with observe_ctx = the writer
 * (sg_dump_rt_opts does). */
sg_status sg_dump_observe(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                          void *ctx, struct sg_diag *diag);

/* Save a run input as inputs/<sanitized name>.npy and list it. */
sg_status sg_dump_input(sg_dump *d, const char *name, const sg_rt_value *v, struct sg_diag *diag);

/* Wait until every tensor file queued so far is written; the first write
 * failure, if any (files are written by a thread of the writer's own while
 * the run goes on, and a failure also shows at the next observed output). */
sg_status sg_dump_flush(sg_dump *d, struct sg_diag *diag);

/* Flush, then write mapping.csv (when needed) and manifest.json. */
sg_status sg_dump_finish(sg_dump *d, const sg_rt *rt, struct sg_diag *diag);

/* Number of tensor files written so far. */
size_t sg_dump_count(const sg_dump *d);

/* What the written tensors held that is not finite (NaN or +-Inf, in float
 * tensors), in the order they were produced. Strings point into the writer
 * (valid while it lives). */
struct sg_dump_nonfinite {
    size_t n_tensors;    /* dumped node outputs holding NaN/Inf */
    const char *node;    /* where they began (execution order): the first node that makes
                            NaN/Inf out of finite inputs (an overflow, a division by zero);
                            else, when all start from a constant's (a mask of -inf), the
                            first that makes NaN out of inputs without NaN; else the first
                            whose output holds any; NULL when none */
    const char *op_type; /*   its op type */
    uint32_t index;      /*   which output */
    uint64_t count;      /*   how many elements (NaN only when `nan`) */
    bool from_finite;    /*   its inputs are finite */
    bool nan;            /*   it was chosen for making NaN (count: its NaN) */
    size_t n_outputs;    /* graph outputs among them */
    const char *output;  /* the first such graph output (value name), or NULL */
    uint64_t output_count;
    const char *input; /* the first run input holding NaN/Inf (sg_dump_input), or NULL */
};

/* Fill *out once sg_dump_finish (or sg_dump_flush) returned: before, tensors
 * still being written are not counted. The run's model must still live (its
 * nodes' inputs and initializers are looked at). */
void sg_dump_nonfinite(const sg_dump *d, struct sg_dump_nonfinite *out);

#endif
