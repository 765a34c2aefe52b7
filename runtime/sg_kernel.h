/*
 * sg_kernel.h - the kernel API of the reference runtime (implementer tier).
 *
 * A kernel computes one ONNX node. Kernels live in families, one file per
 * operator family: runtime/kernels/<family>.c. Each file ends with a static
 * table of entries and exports it as a family:
 *
 *     static sg_status run_relu(struct sg_kctx *k) { ... }
 *
 *     static const struct sg_kernel kernels[] = {
 *         {"", "Relu", 6, 0, SG_KT_FLOATS, 0, run_relu, "r"},
 *         {"", "Relu", 14, 0, SG_KT_FLOATS | SG_KT_SINTS, 0, run_relu, "r"},
 *     };
 *     SG_KERNEL_FAMILY(activation, kernels);
 *
 * and gets one line in runtime/kernels/families.inc:
 *
 *     SG_FAMILY(activation)
 *
 * Nothing else registers a kernel: the lookup, `surgeon run --check` and
 * the tests all read these tables.
 *
 * Lookup. For a node of (domain, op_type) in a model importing that domain
 * at opset V, the entries with since_version <= V are considered and those
 * with the highest since_version win (like the ONNX schema lookup). Among
 * the winners, the first whose `types` mask holds the dtype of input
 * `type_input` is used (and, for an entry with SG_KF_OUT_TYPES, the
 * dtype of output 0 too, which the planner infers from the node's
 * attributes and inputs). Register an op at every since_version where its
 * semantics changed, one entry per version (a function may serve several:
 * it can read k->opset). No entry, or no dtype match, is an error naming the
 * node, op, domain and opset, reported when the model is planned if the
 * dtype is known then (declared in the model, or inferred along the graph
 * from the nodes before: sg_node_output_dtype) and otherwise when the node
 * first runs.
 *
 * Inputs. An entry's `inputs` says which inputs of the node run() needs,
 * one letter per input position: 'r' required (given, not the empty name
 * ''), 'o' optional (may be '' or left off the end). A '+' after the last
 * letter repeats it for one or more positions, a '*' for zero or more
 * (variadic inputs): "rro" is Conv (X, W, optional B), "r+" Concat, "oor*"
 * Loop, "" an op without inputs. Inputs past the pattern are refused. For
 * ai.onnx ops the pattern is the ONNX schema's formal inputs at that
 * version (tests/kernel_inputs_test.py checks it against python3-onnx);
 * an ONNX input whose requirement changed between versions is a new entry.
 * The executor checks every node against its entry once, when the graph
 * is planned (before anything runs; `surgeon run --check` lists the
 * failures), so run() may take every required input as present.
 *
 * Calling convention. run(k) reads inputs k->in[0..n_in) (NULL: omitted
 * optional input), attributes through sg_kattr_*, and creates every output
 * with sg_kout (new zeroed tensor), sg_kout_uninit (new, not cleared),
 * sg_kout_inplace (over a dead input's elements: elementwise ops),
 * sg_kout_alias (same elements, new shape: Reshape, Identity), or
 * sg_kout_value (an existing value). It returns SG_OK
 * or the status of sg_kfail(), which writes one line naming the node
 * ("node 'mm' (MatMul, ai.onnx v13): ...") and whatever the kernel says
 * (put the shapes in: sg_kshape). Inputs are shared and immutable: never
 * write to them. Unless the entry has SG_KF_NONTENSOR, every present input
 * is a tensor (the executor checks). Temporary memory comes from
 * sg_kscratch() and is freed when the node is done. Kernels do not print,
 * exit, or keep state between calls.
 *
 * Shapes. Every tensor's shape obeys sg_dims_extent() (graph/sg_dims.h:
 * its non-zero dims times the element size fit int64), so any product of
 * an input's dims, its strides and offsets need no check. Sizes computed
 * from attributes or input values (pads, repeats, starts, window sizes,
 * counts read from a tensor) do: use the checked helpers of sg_dims.h, and
 * sg_dim_from_double() for a float read as a size or index; an overflow
 * is an error naming the node (sg_kfail, SG_ERANGE). Inputs other than the
 * one that selected the entry may be of any dtype: check those that must
 * match.
 *
 * Numerics. k->compute_dtype is the dtype the node runs in (the model's in
 * the golden run). Rounding at node boundaries for emulated float16 is done
 * by the executor, so a kernel written for float32 needs no change; a kernel
 * that models a compiler's internal precision may read it.
 *
 * Strings. String tensors hold sg_bytes entries; a kernel may point output
 * entries at input strings or at sg_kscratch() memory: once the kernel
 * returns, the executor copies them into the output's own storage.
 *
 * Shared helpers. Broadcasting (numpy rules): sg_bcast_init() computes the
 * output shape of up to SG_BCAST_MAX inputs and sg_bcast_next() walks the
 * output in contiguous runs, giving each input's offset and step (0 or 1)
 * per run. sg_rt_copy_strided() gathers any strided view (Transpose, Slice,
 * Expand, Tile are one call each). sg_kwindow() sizes convolution and
 * pooling windows (pads, auto_pad, ceil_mode). sg_kin_ints(), sg_kaxis()
 * and sg_kfloats() (half types through float32) cover the common input
 * chores; sg_rt_get_f64() & co. (sg_runtime.h) read and write any element.
 *
 * Testing a family. The backend runner (tests/backend_runner.c, ctest
 * `backend`) runs the ONNX node tests; after adding kernels, refresh
 * tests/backend_known_failures.txt with tests/update_known_failures.py.
 * Cases the backend tests miss go in tests/runtime_cases.py (numpy
 * formulas; checked by tests/check_runtime.c with tolerances).
 */
#ifndef SG_KERNEL_H
#define SG_KERNEL_H

#include "sg_runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------ dtype masks */

#define SG_KT(code) (1u << (code))
#define SG_KT_F32 SG_KT(SG_DTYPE_FLOAT)
#define SG_KT_F64 SG_KT(SG_DTYPE_DOUBLE)
#define SG_KT_F16 SG_KT(SG_DTYPE_FLOAT16)
#define SG_KT_BF16 SG_KT(SG_DTYPE_BFLOAT16)
#define SG_KT_BOOL SG_KT(SG_DTYPE_BOOL)
#define SG_KT_STRING SG_KT(SG_DTYPE_STRING)
#define SG_KT_FLOATS (SG_KT_F32 | SG_KT_F64 | SG_KT_F16 | SG_KT_BF16)
#define SG_KT_SINTS                                                                                \
    (SG_KT(SG_DTYPE_INT8) | SG_KT(SG_DTYPE_INT16) | SG_KT(SG_DTYPE_INT32) | SG_KT(SG_DTYPE_INT64))
#define SG_KT_UINTS                                                                                \
    (SG_KT(SG_DTYPE_UINT8) | SG_KT(SG_DTYPE_UINT16) | SG_KT(SG_DTYPE_UINT32) |                     \
     SG_KT(SG_DTYPE_UINT64))
#define SG_KT_INTS (SG_KT_SINTS | SG_KT_UINTS)
#define SG_KT_NUMERIC (SG_KT_FLOATS | SG_KT_INTS)
#define SG_KT_ALL (SG_KT_NUMERIC | SG_KT_BOOL | SG_KT_STRING)
/* The narrow types of opsets 19 (float8), 21 (4-bit integers) and 23
 * (float4e2m1), which few ops take; not in SG_KT_ALL. */
#define SG_KT_F8                                                                                   \
    (SG_KT(SG_DTYPE_FLOAT8E4M3FN) | SG_KT(SG_DTYPE_FLOAT8E4M3FNUZ) | SG_KT(SG_DTYPE_FLOAT8E5M2) |  \
     SG_KT(SG_DTYPE_FLOAT8E5M2FNUZ))
#define SG_KT_INT4 (SG_KT(SG_DTYPE_UINT4) | SG_KT(SG_DTYPE_INT4))
#define SG_KT_F4 SG_KT(SG_DTYPE_FLOAT4E2M1)
#define SG_KT_ANY 0xffffffffu /* no dtype check (Shape, sequences, ...) */

/* ---------------------------------------------------- kernel entries */

enum sg_kernel_flags {
    SG_KF_NONTENSOR = 1u << 0,  /* inputs may be sequences or optionals */
    SG_KF_POST_CLAMP = 1u << 1, /* run() applies sg_kpost() to output 0 */
    /* `types` also bounds the dtype of output 0, which an attribute or
     * another input sets (Cast's `to`, CastLike's target_type,
     * QuantizeLinear's y_zero_point or output_dtype): the mask then holds
     * the input and the output dtypes the entry takes, and the planner
     * checks both where it can infer them. */
    SG_KF_OUT_TYPES = 1u << 2,
};

struct sg_kctx;
typedef sg_status (*sg_kernel_fn)(struct sg_kctx *k);

struct sg_kernel {
    const char *domain;  /* "" for the default domain (ai.onnx) */
    const char *op_type; /* "Relu" */
    int since_version;   /* opset version this entry implements from */
    int type_input;      /* input whose dtype selects the entry; -1: none */
    uint32_t types;      /* SG_KT_* mask of accepted dtypes of that input */
    uint32_t flags;      /* enum sg_kernel_flags */
    sg_kernel_fn run;
    const char *inputs; /* which inputs run() needs: see "Inputs" above */
};

struct sg_kernel_family {
    const char *name;
    const struct sg_kernel *kernels;
    size_t count;
};

#define SG_KERNEL_FAMILY(fam, table)                                                               \
    const struct sg_kernel_family sg_kernels_##fam = {#fam, table, sizeof table / sizeof table[0]}

/*
 * Whether a node with n_in inputs, of which present(ctx, i) says which are
 * given, fits e's `inputs` pattern. When not, false with the reason in
 * msg ("input 1 is required but omitted", "takes at most 3 inputs, got 4").
 * An entry without a pattern (NULL) accepts anything.
 */
bool sg_kernel_inputs_fit(const struct sg_kernel *e, uint32_t n_in,
                          bool (*present)(const void *ctx, uint32_t i), const void *ctx, char *msg,
                          size_t size);

/* Whether `inputs` is a well-formed pattern (letters r/o, at most one
 * trailing + or * after a letter). */
bool sg_kernel_inputs_valid(const char *inputs);

/* Every family, from runtime/kernels/families.inc, and their number. */
extern const struct sg_kernel_family *const sg_kernel_families[];
extern const size_t sg_kernel_n_families;

/* The newest since_version among the kernels of `domain` ("" or "ai.onnx"
 * for the default one): the highest opset whose operator changes the
 * runtime was written for. 0 when the domain has no kernels. */
int sg_kernel_newest_opset(const char *domain);

/*
 * The entry for (domain, op_type) at `opset` accepting `dtype`
 * (SG_DTYPE_UNDEFINED: dtype unknown, any winner will do). NULL when there
 * is none; then *why (if non-NULL) says "no kernel" or "no kernel for
 * dtype X" (static text).
 */
const struct sg_kernel *sg_kernel_find(const char *domain, const char *op_type, int64_t opset,
                                       int32_t dtype, const char **why);

/* --------------------------------------------------- kernel context */

struct sg__kpriv; /* executor state: scratch, frame, subgraph plans */

struct sg_kctx {
    const sg_node *node;
    sg_model *model;
    int64_t opset;         /* the model's opset for the node's domain */
    int32_t compute_dtype; /* see "Numerics" above */
    uint32_t n_in, n_out;  /* node->n_inputs, node->n_outputs */
    sg_rt_value *const *in;
    sg_rt_value **out; /* set through sg_kout* */
    struct sg_diag *diag;
    struct sg__kpriv *priv;
};

/* Input i, or NULL when omitted or i >= n_in. */
static inline const sg_rt_value *sg_kin(const struct sg_kctx *k, uint32_t i)
{
    return i < k->n_in ? k->in[i] : NULL;
}

/* True when output i exists in the node (not omitted): kernels may skip
 * work for unwanted optional outputs (they still may create them). */
bool sg_kout_wanted(const struct sg_kctx *k, uint32_t i);

/* Create output i as a new zeroed tensor; *out (may be NULL) receives it
 * for writing. Fails (named) on bad dims or out of memory. */
sg_status sg_kout(struct sg_kctx *k, uint32_t i, int32_t dtype, const int64_t *dims, uint32_t rank,
                  sg_rt_value **out);

/* As sg_kout, but the elements are left undefined: for kernels that write
 * every element of the output (saves clearing it). */
sg_status sg_kout_uninit(struct sg_kctx *k, uint32_t i, int32_t dtype, const int64_t *dims,
                         uint32_t rank, sg_rt_value **out);

/*
 * Output oi with input ii's dtype and shape, over input ii's own elements
 * when this node is the last reader of that value and nothing else shares
 * them (elementwise ops then need no new buffer and stay in cache);
 * otherwise a new tensor with undefined elements. Either way the kernel
 * writes every element and reads element j of input ii (or of any input
 * that may be the same value) only before writing element j of *out.
 */
sg_status sg_kout_inplace(struct sg_kctx *k, uint32_t oi, uint32_t ii, sg_rt_value **out);

/* Output i shares src's elements with shape dims (same numel, checked). */
sg_status sg_kout_alias(struct sg_kctx *k, uint32_t i, const sg_rt_value *src, const int64_t *dims,
                        uint32_t rank);

/* Output i is v (a new reference is taken). */
sg_status sg_kout_value(struct sg_kctx *k, uint32_t i, sg_rt_value *v);

/* Record a failure naming the node; returns status. */
sg_status sg_kfail(struct sg_kctx *k, sg_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The clamp of a Clip or Relu fused into this node, for kernels whose
 * entry has SG_KF_POST_CLAMP: true when output 0 must leave the kernel as
 * Clip(y, *lo, *hi) would make it, elementwise in y's dtype (NaN stays
 * NaN; Relu is lo = 0, hi = +inf). The executor fuses only when the
 * unclamped value can be seen by no one: output 0 read by that Clip or
 * Relu alone, not a graph output, no observer (sg_rt_opts.on_output) and
 * FP32 numerics; the Clip or Relu then passes its input through. False:
 * no clamp.
 */
bool sg_kpost(const struct sg_kctx *k, float *lo, float *hi);

/* Scratch memory (16-byte aligned, uninitialised) freed after the node;
 * NULL when out of memory (return sg_kfail(k, SG_ENOMEM, ...)). */
void *sg_kscratch(struct sg_kctx *k, size_t size);

/* "float32[2,3]" for messages, in scratch ("?" if out of memory). */
const char *sg_kshape(struct sg_kctx *k, const sg_rt_value *v);
const char *sg_kdims(struct sg_kctx *k, const int64_t *dims, uint32_t rank);

/* ------------------------------------------------------- attributes */

/* The attribute, or NULL when absent. */
const sg_attr *sg_kattr(const struct sg_kctx *k, const char *name);
int64_t sg_kattr_int(const struct sg_kctx *k, const char *name, int64_t dflt);
float sg_kattr_float(const struct sg_kctx *k, const char *name, float dflt);
/* NUL-terminated copy in scratch, or dflt when absent. */
const char *sg_kattr_string(struct sg_kctx *k, const char *name, const char *dflt);
/* Number of ints / floats and *v pointing at them; -1 when absent. */
int64_t sg_kattr_ints(const struct sg_kctx *k, const char *name, const int64_t **v);
int64_t sg_kattr_floats(const struct sg_kctx *k, const char *name, const float **v);
/* The graph attribute, or NULL. */
sg_graph *sg_kattr_graph(const struct sg_kctx *k, const char *name);
/* A tensor attribute as a value (elements borrowed from the model; the
 * caller owns one reference). SG_ENOTFOUND when absent. */
sg_status sg_kattr_tensor(struct sg_kctx *k, const char *name, sg_rt_value **out);
/* Any IR tensor of the model as a value, as above. */
sg_status sg_ktensor_value(struct sg_kctx *k, sg_tensor *t, sg_rt_value **out);

/* ----------------------------------------------------- input helpers */

/* Input i (an integer tensor of rank 0 or 1) as int64 values in scratch;
 * fails naming the input when it is missing or of another type. */
sg_status sg_kin_ints(struct sg_kctx *k, uint32_t i, const int64_t **v, int64_t *n);

/* Normalise a possibly negative axis for `rank` dims (rank + 1 when
 * inserting, as Unsqueeze does); fails naming the axis and the rank. */
sg_status sg_kaxis(struct sg_kctx *k, int64_t axis, uint32_t rank, uint32_t *out);

/* The elements of tensor v as float32 (v's own data when it is float32,
 * else a converted copy in scratch). NULL when out of memory. */
const float *sg_kfloats(struct sg_kctx *k, const sg_rt_value *v);

/* Row-major strides (in elements) of dims into strides[rank]. */
void sg_rt_strides(const int64_t *dims, uint32_t rank, int64_t *strides);

/*
 * Gather a strided view into contiguous memory: dst receives, in row-major
 * order over dims[rank], the elements of `elem_size` bytes at element
 * offsets src_offset + sum(i_d * src_strides[d]) of src. Strides may be 0
 * (broadcast) or negative. The workhorse of Transpose, Slice, Expand, Tile.
 */
void sg_rt_copy_strided(void *dst, const void *src, size_t elem_size, uint32_t rank,
                        const int64_t *dims, const int64_t *src_strides, int64_t src_offset);

/* ---------------------------------------------------- sliding windows */

/*
 * Output sizes of a sliding window (convolution, pooling) over nsp spatial
 * dims: in[], kernel kk[], stride[], dil[] and pads pad0[] (begin) / pad1[]
 * (end, updated when the node's auto_pad attribute is SAME_UPPER,
 * SAME_LOWER or VALID). ceil_mode rounds up but drops a last window that
 * would start in the end padding. Fails naming the axis when the window is
 * larger than the padded input.
 */
sg_status sg_kwindow(struct sg_kctx *k, uint32_t nsp, const int64_t *in, const int64_t *kk,
                     const int64_t *stride, const int64_t *dil, int64_t *pad0, int64_t *pad1,
                     bool ceil_mode, int64_t *out);

/* -------------------------------------------------------- broadcasting */

#define SG_BCAST_MAX 4

struct sg_bcast {
    /* Output shape by numpy rules. */
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
    int64_t numel;
    /* The current run (after sg_bcast_next returned true): `run` output
     * elements from offset `pos`; input j starts at off[j] and advances by
     * step[j] (0 or 1) per element. */
    int64_t run, pos;
    int64_t off[SG_BCAST_MAX], step[SG_BCAST_MAX];
    /* private */
    uint32_t n, crank;
    int64_t cdims[SG_MAX_RANK], cstr[SG_BCAST_MAX][SG_MAX_RANK], idx[SG_MAX_RANK];
    bool started;
};

/* Broadcast n (<= SG_BCAST_MAX) tensors; fails naming the node and every
 * shape when they do not broadcast. */
sg_status sg_bcast_init(struct sg_kctx *k, struct sg_bcast *b, uint32_t n,
                        const sg_rt_value *const *ts);
/* The same from shapes alone (dims[j] with rank[j]). */
sg_status sg_bcast_init_dims(struct sg_kctx *k, struct sg_bcast *b, uint32_t n,
                             const int64_t *const *dims, const uint32_t *ranks);
/* Advance to the next run; false when the output is exhausted. */
bool sg_bcast_next(struct sg_bcast *b);

/* --------------------------------------------------------- subgraphs */

/*
 * Run subgraph g (a graph attribute of k->node) with its n_in graph inputs
 * bound to in[] (references are taken); outputs are written to out[0..
 * g->n_outputs) (the caller owns one reference each; every entry is set,
 * NULL where nothing was made, also on failure). Values g reads from
 * enclosing graphs are found by the executor. Errors are prefixed with the
 * node owning the subgraph.
 */
sg_status sg_ksubgraph_run(struct sg_kctx *k, const sg_graph *g, uint32_t n_in,
                           sg_rt_value *const *in, sg_rt_value **out);

#endif
