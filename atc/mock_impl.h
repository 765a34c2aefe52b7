/*
 * mock_impl.h - what the files of the mock compiler share (not installed):
 * the compile context, the fusion rule table type, and helpers for
 * matching patterns and replacing them by one fused node.
 */
#ifndef SG_MOCK_IMPL_H
#define SG_MOCK_IMPL_H

#include "sg_mock.h"
#include "sg_mockom.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One compile. */
struct sg__atc_mock {
    sg_model *m;
    sg_graph *g; /* the main graph: fusion works there only */
    const struct sg_mock_inputs *in;
    sg_mock_report *rep; /* never NULL inside the compiler */
    struct sg_diag *diag;
};

/*
 * A fusion rule, one per file, named as the ATC pass it imitates and
 * switched by that pass's entry of the fusion switch file. run() rewrites
 * every match in c->g and adds the number of fused ops it made to
 * c->rep->fired[pass]. UB rules run after the compute dtypes are known and
 * join only nodes of the same dtype.
 */
struct sg__atc_rule {
    enum sg_fusion_pass_id pass;
    bool ub; /* runs after the precision step */
    sg_status (*run)(struct sg__atc_mock *c, enum sg_fusion_pass_id pass);
};

extern const struct sg__atc_rule sg__atc_rule_conv_bn;
extern const struct sg__atc_rule sg__atc_rule_matmul_bias;
extern const struct sg__atc_rule sg__atc_rule_softmax;
extern const struct sg__atc_rule sg__atc_rule_layernorm;
extern const struct sg__atc_rule sg__atc_rule_conv_relu;
extern const struct sg__atc_rule sg__atc_rule_conv_clip;
extern const struct sg__atc_rule sg__atc_rule_eltwise;

/* ------------------------------------------------------------- precision */

/* Decide and record every node's compute dtype (mock_precision.c). */
sg_status sg__atc_precision(struct sg__atc_mock *c);

/* The op type ATC gives node n (Conv -> Conv2D; fused ops their own). */
const char *sg__atc_type(const sg_node *n);

/* Add a warning line to the report (printf style). */
void sg__atc_warn(sg_mock_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------- pattern helpers */

/* n is an ai.onnx node of type op. */
bool sg__atc_is(const sg_node *n, const char *op);

/* The one node reading v (one explicit use, v not a graph output), or NULL. */
sg_node *sg__atc_only_reader(const sg_value *v);

/* True when every use of v is by one of nodes[0..n) and v is no graph
 * output: the value stays inside a pattern. */
bool sg__atc_inside(const sg_value *v, sg_node *const *nodes, size_t n);

/* The constant behind v: its initializer, or the `value` of the Constant
 * node producing it. NULL when v is not constant. */
sg_tensor *sg__atc_const(const sg_value *v);

/* The values of constant v as doubles (any numeric dtype) into a sg_malloc'd
 * array; false when v is not a readable numeric constant. */
bool sg__atc_const_doubles(struct sg__atc_mock *c, const sg_value *v, double **out, int64_t *n);

/* A constant scalar (one element) of v; false otherwise. */
bool sg__atc_const_scalar(struct sg__atc_mock *c, const sg_value *v, double *out);

/* The reduction axes of a Reduce* node (attribute `axes`, or its constant
 * input 1 from the opsets that moved them there) into axes[max]; false when
 * they are not known constants or there are more than max. *n 0: all axes. */
bool sg__atc_reduce_axes(struct sg__atc_mock *c, const sg_node *n, int64_t *axes, size_t max,
                         size_t *count);

/* The rank of v when its type gives one, else -1. */
int sg__atc_rank(const sg_value *v);

/* A new float32 initializer of g named from `base` holding data[numel]. */
sg_value *sg__atc_new_const_f32(struct sg__atc_mock *c, const char *base, const float *data,
                                const int64_t *dims, uint32_t rank);

/* The nodes of c->g in topological order (sg_malloc'd, *n of them): rules
 * walk this snapshot and skip nodes a fusion removed (node->dead). */
sg_node **sg__atc_snapshot(struct sg__atc_mock *c, size_t *n);

/* Call fn on every node still in c->g, in the topological order of a
 * snapshot taken first (nodes a fusion removed meanwhile are skipped);
 * stops at the first failure. The common loop of the rules. */
sg_status sg__atc_each_node(struct sg__atc_mock *c,
                            sg_status (*fn)(struct sg__atc_mock *c, sg_node *n, void *ctx),
                            void *ctx);

/* sg__atc_each_node for the nodes of op type `op` (default domain): rules
 * anchored on one op. */
sg_status sg__atc_each_op(struct sg__atc_mock *c, const char *op,
                          sg_status (*fn)(struct sg__atc_mock *c, sg_node *n));

/* ----------------------------------------------------------- replacing */

/* A pattern that becomes one fused node. */
struct sg__atc_fusion {
    sg_node **nodes; /* the pattern, in topological order */
    size_t n_nodes;
    sg_value *const *ins; /* the fused node's inputs (NULL: omitted) */
    size_t n_ins;
    sg_value *out;        /* the pattern's one visible output */
    const char *op_type;  /* the fused op (domain surgeon.mock) */
    const char *name;     /* wanted name; a fresh one when taken */
    const char *atc_type; /* _atc_type, NULL when op_type says it */
    enum sg_fusion_pass_id pass;
};

/*
 * Replace f->nodes by one node of domain surgeon.mock: it reads f->ins,
 * produces f->out (same value: name, readers, listing and type kept), and
 * carries _datadump_original_op_names (the patterns' own original names,
 * or their names), pass_name / pass_name_ub (those of the pattern nodes
 * plus f->pass) and, when every pattern node has them, their compute dtype
 * attributes. The pattern nodes are removed, then constants nothing reads
 * any more (initializers, Constant nodes). *fused receives the node, to
 * which the caller adds the op's own attributes.
 */
sg_status sg__atc_fuse(struct sg__atc_mock *c, const struct sg__atc_fusion *f, sg_node **fused);

/* Copy attribute `a` (int, float, string, ints, floats, strings) to n.
 * SG_EUNSUPPORTED for other types. */
sg_status sg__atc_copy_attr(sg_node *n, const sg_attr *a);

/* Copy an op's own attributes (not the mock OM's marks: names starting
 * with '_', pass_name, pass_name_ub) to n; errors name `what`. */
sg_status sg__atc_copy_op_attrs(struct sg__atc_mock *c, sg_node *n, sg_attr *const *attrs,
                                uint32_t n_attrs, const char *what);

/* The name UB fusion gives a fused op: the names of its parts joined (as
 * ATC does), or, past 120 bytes, the first name and the count. In the
 * model arena; NULL when out of memory. */
const char *sg__atc_joined_name(struct sg__atc_mock *c, sg_node *const *nodes, size_t n);

/* The original node names of n: its _datadump_original_op_names, or its
 * name. Appends to a growing array of borrowed strings. */
sg_status sg__atc_orig_names(const sg_node *n, const char ***names, size_t *count, size_t *cap);

#endif
