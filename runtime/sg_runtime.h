/*
 * sg_runtime.h - surgeon's reference runtime: run an ONNX model on the CPU.
 *
 * Overview
 *   sg_rt_create() plans a model: it orders every graph (main graph and
 *   every If/Loop/Scan body) with sg_graph_toposort, finds a kernel for each
 *   node by (domain, op_type, opset) and, where the IR knows it, the input
 *   dtype, and fails BEFORE anything runs when a node has none, naming the
 *   node, op, domain and opset. sg_rt_check() lists every missing kernel at
 *   once instead of stopping at the first.
 *   sg_rt_set_input() binds graph inputs, sg_rt_run() executes, and
 *   sg_rt_output() returns the graph outputs. A run may be repeated with new
 *   inputs on the same sg_rt.
 *
 * Values
 *   A runtime value (sg_rt_value) is a reference-counted tensor, sequence or
 *   optional. Tensors hold their elements in native little-endian layout:
 *   float16/bfloat16 as uint16 bits, bool and float8 one byte each, strings
 *   as an sg_bytes array, and the 4-bit types unpacked, one element a byte
 *   (uint4 0..15, int4 sign-extended, float4e2m1 its code): every kernel
 *   that moves elements by size (Transpose, Reshape, Pad, Concat...) then
 *   works on them unchanged and indexing stays a byte offset; the packed
 *   form is only that of files (tensors are unpacked when read, packed when
 *   written). Values are immutable once produced: many consumers may
 *   hold the same value, and Reshape-like kernels share storage with their
 *   input. The executor drops its reference to a value after its last reader
 *   has run (dumps are written as soon as a value is produced, so dumping
 *   does not keep values alive).
 *
 * Numerics
 *   SG_NUMERICS_FP32 (the default) is the golden run: every node computes in
 *   its model dtype. The FP16 modes emulate a compiler that runs chosen
 *   nodes in float16: for each node whose compute dtype (opts.compute_dtype,
 *   default float16 for every node) is SG_DTYPE_FLOAT16, the executor rounds
 *   the node's float32 inputs and outputs to float16 values at the node
 *   boundary (kept in float32 storage), with overflow going to +-inf
 *   (SG_NUMERICS_FP16_INF) or saturating at +-65504 with NaN becoming 0
 *   (SG_NUMERICS_FP16_SAT, Ascend's saturation mode).
 *   opts.fp16_sides, when set, says per node which boundary is float16
 *   instead: inputs, outputs, both or none (a cube unit reading float16
 *   and writing float32 rounds only its inputs).
 *   Kernels accumulate in float32 (MatMul, Conv) in every mode, as a cube
 *   unit does; a kernel that wants to know reads sg_kctx.compute_dtype.
 *   sg_rt_opts_mock() sets all of this from a mock OM (sg_mockom.h).
 *
 * Observing a run
 *   opts.on_output is called for every output of every node of the main
 *   graph (and of subgraphs when opts.observe_subgraphs) right after the
 *   node ran, in execution order; the dump writer (sg_dump.h) is such an
 *   observer.
 *
 * Errors name the node ("node 'mm' (MatMul, ai.onnx v13): ...") and the
 * shapes involved. Nothing here prints or exits.
 */
#ifndef SG_RUNTIME_H
#define SG_RUNTIME_H

#include "sg_ir.h"
#include "sg_tensorfile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- values */

enum sg_rt_kind {
    SG_RT_TENSOR = 0,
    SG_RT_SEQUENCE, /* ordered list of values (tensors, or nested sequences) */
    SG_RT_OPTIONAL, /* zero or one value */
    SG_RT_KIND_COUNT
};

/* Shared element memory of tensors (internal layout, see runtime/value.c). */
typedef struct sg_rt_storage sg_rt_storage;

typedef struct sg_rt_value sg_rt_value;

struct sg_rt_value {
    int refs;
    enum sg_rt_kind kind;
    /* TENSOR: element type, shape and elements. For SEQUENCE and OPTIONAL,
     * `dtype` is the tensor element type of the items when known (an empty
     * sequence still has one), SG_DTYPE_UNDEFINED otherwise. */
    int32_t dtype;
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
    int64_t numel;
    void *data; /* numel * sg_rt_elem_size(dtype) bytes; sg_bytes[] for strings */
    sg_rt_storage *storage;
    /* SEQUENCE: n_items items; OPTIONAL: n_items is 0 (empty) or 1. Each
     * item holds one reference. `elem_kind` is the kind of the items (for
     * an empty optional of a sequence it says "sequence"). */
    sg_rt_value **items;
    size_t n_items, cap_items;
    enum sg_rt_kind elem_kind;
};

/* Bytes per element in runtime layout: sg_dtype_size(), and sizeof(sg_bytes)
 * for strings. 0 for UNDEFINED and unknown codes. */
size_t sg_rt_elem_size(int32_t dtype);

/*
 * A new tensor of dtype and shape with zeroed elements (strings empty),
 * one reference. SG_ERANGE on a negative dim, rank > SG_MAX_RANK or an
 * overflowing size; SG_EINVAL on an unknown dtype; SG_ENOMEM.
 */
sg_status sg_rt_tensor_create(int32_t dtype, const int64_t *dims, uint32_t rank, sg_rt_value **out,
                              struct sg_diag *diag);

/* A new tensor that takes over the contents of `a` (which is left empty),
 * strings included. */
sg_status sg_rt_tensor_from_array(struct sg_array *a, sg_rt_value **out, struct sg_diag *diag);

/* A copy of tensor v as an sg_array (strings into one block as
 * sg_tensorfile.h describes). */
sg_status sg_rt_tensor_to_array(const sg_rt_value *v, struct sg_array *out, struct sg_diag *diag);

/* A value from a .pb test file (sg_pb_read_value), taking over its
 * tensors (pv is left empty). `type` (may be NULL) supplies the element
 * dtype of an empty sequence or optional. */
sg_status sg_rt_value_from_pb(struct sg_pb_value *pv, const sg_type *type, sg_rt_value **out,
                              struct sg_diag *diag);

/* An empty sequence of tensors of elem dtype (UNDEFINED when unknown). */
sg_status sg_rt_sequence_create(int32_t elem_dtype, sg_rt_value **out);

/* Append `item` to sequence seq, taking a new reference to it. */
sg_status sg_rt_sequence_append(sg_rt_value *seq, sg_rt_value *item);

/* An optional holding `item` (a new reference is taken) or, when item is
 * NULL, an empty optional whose item would be of kind elem_kind and dtype. */
sg_status sg_rt_optional_create(sg_rt_value *item, enum sg_rt_kind elem_kind, int32_t dtype,
                                sg_rt_value **out);

/* Reference counting. unref frees at zero; NULL is a no-op for both. */
sg_rt_value *sg_rt_value_ref(sg_rt_value *v);
void sg_rt_value_unref(sg_rt_value *v);

/* "float32[2,3]" / "seq(float32)[4]" / "optional(none)" into buf. */
char *sg_rt_value_format(const sg_rt_value *v, char *buf, size_t size);

/* Element i of a numeric or bool tensor as double / int64, and set from
 * one (converting to the tensor's dtype: float to integer truncates toward
 * zero and saturates at the int64 range, NaN becomes 0; integers then wrap
 * to narrower types, int4 and uint4 included; float8 rounds to nearest
 * even and saturates, float4e2m1 as its table says). Slow but general: for
 * rare ops and tools. */
double sg_rt_get_f64(const sg_rt_value *t, int64_t i);
int64_t sg_rt_get_i64(const sg_rt_value *t, int64_t i);
void sg_rt_set_f64(sg_rt_value *t, int64_t i, double v);
void sg_rt_set_i64(sg_rt_value *t, int64_t i, int64_t v);
/* That conversion of a double to int64 (toward zero, saturating, NaN 0):
 * for a kernel that computes an integer result in double. */
int64_t sg_rt_f64_to_i64(double v);

/* "[2,3,4]" into buf. */
char *sg_rt_dims_format(const int64_t *dims, uint32_t rank, char *buf, size_t size);

/* ----------------------------------------------------------- sessions */

enum sg_numerics {
    SG_NUMERICS_FP32 = 0, /* golden: everything in its model dtype */
    SG_NUMERICS_FP16_INF, /* float16 nodes; overflow becomes +-inf */
    SG_NUMERICS_FP16_SAT, /* float16 nodes; overflow saturates at +-65504, NaN is 0 */
    SG_NUMERICS_COUNT
};

/* The dtype node n computes in under an FP16 mode: SG_DTYPE_FLOAT16 to
 * round at its boundaries, SG_DTYPE_FLOAT (or anything else) to keep it. */
typedef int32_t (*sg_rt_dtype_fn)(const sg_node *n, void *ctx);

/* Which float32 boundaries of node n are float16 under an FP16 mode:
 * SG_RT_FP16_* bits (0: the node keeps float32). */
enum { SG_RT_FP16_INPUTS = 1u << 0, SG_RT_FP16_OUTPUTS = 1u << 1 };
typedef unsigned (*sg_rt_sides_fn)(const sg_node *n, void *ctx);

/*
 * Called for each node output right after the node ran. `depth` is 0 for
 * the main graph. `v` is NULL for an omitted optional output. Returning
 * non-OK stops the run with that status (the observer fills `diag`).
 */
typedef sg_status (*sg_rt_observe_fn)(const sg_node *n, uint32_t index, const sg_rt_value *v,
                                      int depth, void *ctx, struct sg_diag *diag);

struct sg_rt_opts {
    enum sg_numerics numerics;
    sg_rt_dtype_fn compute_dtype; /* NULL: every node float16 in FP16 modes */
    void *compute_dtype_ctx;
    sg_rt_sides_fn fp16_sides; /* when set, replaces compute_dtype */
    void *fp16_sides_ctx;
    int threads; /* BLAS threads; 0 leaves the BLAS default */
    sg_rt_observe_fn on_output;
    void *observe_ctx;
    bool observe_subgraphs; /* also report nodes of If/Loop/Scan bodies */
    /* Report only the main graph's outputs. Other values are then seen by
     * no one, which lets the runtime fuse nodes (Clip into Conv) that any
     * observer of every output rules out. */
    bool observe_graph_outputs;
    /* Largest tensor one node output may be, in bytes; 0: no limit. A
     * larger output fails its node with SG_ETOOBIG, before it is allocated
     * when the kernel makes it with sg_kout (nearly all do), else right
     * after the node ran. Lets a caller evaluate expansions of constants
     * (ConstantOfShape, Expand, Tile, ...) without exhausting memory. The
     * scan outputs of Loop and Scan are held to it as they grow, iteration
     * by iteration, and so are a Loop's carried values (a sequence that
     * grows every iteration included). */
    size_t max_tensor_bytes;
    /* Iterations one execution of a Loop node may make: one more fails the
     * node with SG_ERANGE (a Loop whose trip count and condition never stop
     * it would run forever). 0: SG_RT_MAX_LOOP_ITERATIONS; UINT64_MAX: no
     * limit. */
    uint64_t max_loop_iterations;
};

/* The default of sg_rt_opts.max_loop_iterations: far more than loops over
 * tokens, frames or boxes make, reached in seconds by an empty body. */
#define SG_RT_MAX_LOOP_ITERATIONS ((uint64_t)10000000)

typedef struct sg_rt sg_rt;

/*
 * Set opts (numerics and fp16_sides; the other fields are left alone) to
 * run mock OM m as its compiler decided: each node's float boundaries in
 * the dtypes its _input_dtype/_output_dtype attributes give, overflow to
 * inf or saturation as its metadata says. Fused ops (domain surgeon.mock)
 * have kernels like any other op. Statuses of sg_mockom_check (m is not a
 * mock OM, or one of another format version).
 */
sg_status sg_rt_opts_mock(const sg_model *m, struct sg_rt_opts *opts, struct sg_diag *diag);

/*
 * Plan model m for running. m must stay alive (and unchanged) while the
 * sg_rt exists. opts may be NULL (defaults). Statuses: SG_EUNSUPPORTED (a
 * node has no kernel: the first one is named in diag), SG_EARITY (a node
 * lacks an input its kernel requires, or has too many), SG_ECYCLE, SG_ENOMEM,
 * SG_EINVAL (model without a graph), SG_ENOTFOUND (OpenBLAS, which the
 * first session loads, cannot be loaded: sg_blas.h).
 */
sg_status sg_rt_create(sg_model *m, const struct sg_rt_opts *opts, sg_rt **out,
                       struct sg_diag *diag);

/* Free the session and every value it holds. NULL is a no-op. */
void sg_rt_free(sg_rt *rt);

/*
 * Call `fn` for every node of m (all graphs) that has no kernel or whose
 * inputs do not fit its kernel (a required input omitted, too few or too
 * many), with a one-line reason naming node, op, domain, opset (and dtype
 * when that is what is missing). Returns the number of such nodes.
 */
typedef void (*sg_rt_missing_fn)(const sg_node *n, const char *reason, void *ctx);
size_t sg_rt_check(sg_model *m, sg_rt_missing_fn fn, void *ctx);

/*
 * Bind graph input `name` (a non-initializer input, or an initializer the
 * caller overrides) to v, taking a reference. The value is checked against
 * the declared type: kind, dtype, rank and every fixed dim; symbolic dims
 * must agree between inputs ("batch" is one number per run). Errors name
 * the input and both shapes: SG_ENOTFOUND (no such input), SG_ETYPE,
 * SG_ESHAPE.
 */
sg_status sg_rt_set_input(sg_rt *rt, const char *name, sg_rt_value *v, struct sg_diag *diag);

/* The graph inputs the caller must bind (no initializer), in graph order. */
uint32_t sg_rt_n_inputs(const sg_rt *rt);
const sg_value *sg_rt_input(const sg_rt *rt, uint32_t i);

/*
 * Run the main graph once. Every required input must be bound (SG_EUNDEF
 * names the first missing one). On failure diag names the failing node and
 * the shapes it saw; values of the failed run are released.
 */
sg_status sg_rt_run(sg_rt *rt, struct sg_diag *diag);

/* Graph output i of the last successful run (borrowed; NULL before). */
uint32_t sg_rt_n_outputs(const sg_rt *rt);
const sg_value *sg_rt_output_info(const sg_rt *rt, uint32_t i);
sg_rt_value *sg_rt_output(const sg_rt *rt, uint32_t i);

/* ---------------------------------------------------- one node alone */

/* Where sg_rt_run_node finds the values a node reads: a borrowed value for
 * v, or NULL when there is none. */
typedef sg_rt_value *(*sg_rt_lookup_fn)(const sg_value *v, void *ctx);

/*
 * Run node n of model m by itself, without a session over the whole graph
 * (constant folding, tests of one node). Every value n reads, its inputs
 * and the values of n's graph that its subgraphs read (implicit inputs),
 * comes from lookup(v, ctx); initializers are not read by themselves, so
 * the caller decides what is constant. out[0..n->n_outputs) receive a new
 * reference to each output (NULL for omitted outputs, and all NULL on
 * failure); the caller unrefs them. opts may be NULL; numerics and
 * max_tensor_bytes apply, on_output is ignored. Statuses: SG_EUNDEF
 * (lookup has no value for one, named), SG_EUNSUPPORTED (no kernel, for n
 * or a node of its subgraphs), SG_EARITY (a required input omitted),
 * SG_ETOOBIG, SG_ENOMEM, SG_ENOTFOUND (as for sg_rt_create) and whatever
 * the kernel reports, with the node named in diag.
 */
sg_status sg_rt_run_node(sg_model *m, sg_node *n, const struct sg_rt_opts *opts,
                         sg_rt_lookup_fn lookup, void *ctx, sg_rt_value **out,
                         struct sg_diag *diag);

/*
 * A tensor value with the elements of IR tensor t of model m (a new
 * reference). The elements are borrowed where t's payload is already in
 * native layout: the value stays valid while m lives and t's payload is
 * not replaced. SG_EPARSE (payload does not match dims), SG_ESHAPE (string
 * count), SG_ENOMEM, with the tensor named in diag.
 */
sg_status sg_rt_value_from_tensor(sg_model *m, sg_tensor *t, sg_rt_value **out,
                                  struct sg_diag *diag);

/* Bytes of tensor storage currently allocated by runtime values, and the
 * high-water mark since the process started (for tests and the benchmark). */
size_t sg_rt_bytes_live(void);
size_t sg_rt_bytes_peak(void);

#endif
