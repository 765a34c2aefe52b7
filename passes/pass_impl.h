/*
 * pass_impl.h - what the files of passes/ share (not installed).
 */
#ifndef SG_PASS_IMPL_H
#define SG_PASS_IMPL_H

#include "sg_pass.h"
#include "strmap.h"

#include <stdbool.h>

/* ------------------------------------------------------------ options.c */

/* Parse `text` as a value of option `spec` into `out` (strings copied into
 * arena `a`). base_dir, when non-NULL, resolves relative PATH values.
 * On failure returns SG_EPARSE or SG_ERANGE with the reason in `diag`
 * (without the option name; the caller prefixes it). */
sg_status sg__opt_parse(const struct sg_opt_spec *spec, const char *text, sg_arena *a,
                        const char *base_dir, struct sg_opt_value *out, struct sg_diag *diag);

/* Parse a list option from separate items (a YAML sequence). */
sg_status sg__opt_parse_items(const struct sg_opt_spec *spec, const char *const *items, size_t n,
                              sg_arena *a, struct sg_opt_value *out, struct sg_diag *diag);

/* Fill the defaults of every option not given yet. */
sg_status sg__opt_defaults(const struct sg_pass *pass, struct sg_opt_value *vals, sg_arena *a,
                           struct sg_diag *diag);

/* Index of option `name` in the pass's schema, or -1. */
int sg__opt_index(const struct sg_pass *pass, const char *name, size_t len);

/* The option of `pass` nearest to name[0..len) (sg_suggest.h), or NULL. */
const char *sg__opt_suggest(const struct sg_pass *pass, const char *name, size_t len);

/* SG_EINVAL "pass P has no option 'X'", with the nearest option when one is
 * near. */
sg_status sg__no_option(const struct sg_pass *pass, const char *name, size_t len,
                        struct sg_diag *diag);

/* Append a step for `pass` with option values `opts` (arena memory). */
sg_status sg__pipeline_push(struct sg_pipeline *p, const struct sg_pass *pass,
                            struct sg_opt_value *opts, const char *origin);

/* The pass named name[0..len), or SG_ENOTFOUND naming it. */
sg_status sg__pass_lookup(const char *name, size_t len, const struct sg_pass **out,
                          struct sg_diag *diag);

/* ------------------------------------------------------ pipeline_vars.c */

/* `text` with its ${NAME} / ${NAME:-DEFAULT} references replaced (marking
 * the variables used); *out is text itself when it holds no '$', else a
 * copy in p's arena. SG_EPARSE / SG_EINVAL with the reason (no location:
 * the caller adds it), SG_ENOMEM. */
sg_status sg__vars_expand(struct sg_pipeline *p, const char *text, const char **out,
                          struct sg_diag *diag);

/* ---------------------------------------------------------- pass_util.c */

/* Call fn on g, then on every subgraph nested in it, depth first. */
typedef sg_status (*sg__graph_fn)(sg_graph *g, void *ctx);
sg_status sg__walk_graphs(sg_graph *g, sg__graph_fn fn, void *ctx);

/* Membership in a STRINGS option (linear; options are short) and in a set. */
bool sg__opt_has(const struct sg_opt_value *v, const char *s);

/* A set of strings built from a STRINGS option, for long name lists. */
sg_status sg__strset_from(struct sg__strmap *set, const struct sg_opt_value *v);

/* Pointer set (open addressing), zero-initialised = empty. */
struct sg__ptrset {
    const void **slots;
    size_t cap, count;
};
sg_status sg__ptrset_add(struct sg__ptrset *s, const void *p); /* SG_OK also if present */
bool sg__ptrset_has(const struct sg__ptrset *s, const void *p);
void sg__ptrset_free(struct sg__ptrset *s);

/* A node label for reports: its name, else "<OpType> #k" style "(unnamed Exp)". */
const char *sg__node_label(const sg_node *n);

/* A new initializer in g with a fresh name from `base`, holding a copy of
 * `nbytes` of native data. The value gets a matching (unlisted) type. */
sg_status sg__add_const(sg_graph *g, const char *base, int32_t dtype, const int64_t *dims,
                        uint32_t rank, const void *data, size_t nbytes, sg_value **out,
                        struct sg_diag *diag);

/* Read element i of a numeric tensor as double / int64; false when the
 * data cannot be read or the type is not numeric. */
bool sg__tensor_get_f64(sg_model *m, sg_tensor *t, size_t i, double *out);
bool sg__tensor_get_i64(sg_model *m, sg_tensor *t, size_t i, int64_t *out);

/*
 * Remove node n whose output `out` carries the same data as its input 0
 * (Identity, a no-op Cast): readers of the output read the input instead.
 * Graph output names never change: when the output is a graph output, the
 * input's producer is made to produce it directly; when that is impossible
 * (the input is itself a graph input, output, initializer or capture), n is
 * kept and *kept is set with the reason. SG_OK in both cases.
 */
sg_status sg__bypass_node(sg_node *n, bool *kept, const char **why, struct sg_diag *diag);

/*
 * Remove the constants among vals[0..n) (each an initializer or the
 * output of a Constant node; repeats are taken once) that nothing reads, lists
 * as a graph output or, unless old_ir (IR < 4: a main graph initializer's
 * input entry goes with it), lists as a graph input; each one is reported
 * as an "unused constant removed" change: Constant nodes first, then
 * initializers, each in the order given. Every list
 * is walked once per graph (sg_graph_remove_values), so removing k of
 * them is O(k + list lengths) (O(k log k) when they span graphs). Reorders
 * vals.
 */
sg_status sg__remove_constants(sg_value **vals, size_t n, bool old_ir, struct sg_pass_report *rep,
                               struct sg_diag *diag);

/* Values reachable forward from `from` (through node outputs and into
 * subgraphs that capture them), added to `set`. */
sg_status sg__mark_downstream(sg_value *const *from, size_t n, struct sg__ptrset *set);

/* The same, not going on through the outputs of Shape and Size: they hold
 * the shape of what is downstream, not its data (set-batch asks whether a
 * Reshape's data carries the batch). */
sg_status sg__mark_downstream_data(sg_value *const *from, size_t n, struct sg__ptrset *set);

/* ------------------------------------------------------ rebatch_shapes.c */

/* What set-batch changed, for sg__rebatch_shapes. */
struct sg__rebatch {
    sg_value *const *inputs; /* the rebatched main graph inputs (new types set) */
    const uint32_t *axes;    /* the batch axis of each */
    size_t n;
    const struct sg_dim_spec *batch; /* the new batch */
    const int64_t *old;              /* numeric old batches */
    size_t n_old;
    const char *const *old_params; /* symbolic old batches ("batch") */
    size_t n_params;
    const struct sg__ptrset *down; /* every value downstream of the inputs */
};

/*
 * Bring the recorded shapes downstream of the rebatched inputs up to date
 * (graph outputs and value_info, every graph): a shape that provably is the
 * old one with the batch at a known axis gets the new batch there ("shape
 * rebatched"); any other keeps its symbolic dims (the old batch's name
 * becomes the new batch) and loses its numbers ("shape not proven: numbers
 * cleared"). Each change is reported. Shape inference, when surgeon has
 * it, replaces this call. SG_ENOMEM.
 */
sg_status sg__rebatch_shapes(sg_graph *g, const struct sg__rebatch *in, struct sg_pass_report *rep,
                             struct sg_diag *diag);

/* Forget the shape of every listed value (graph outputs, value_info; not
 * inputs) in `set`, keeping element type and rank: dims become unknown.
 * Each one is reported as a "stale shape cleared" change. */
sg_status sg__clear_shapes(sg_graph *g, const struct sg__ptrset *set, struct sg_pass_report *rep,
                           struct sg_diag *diag);

/* -------------------------------------------------------- infer_shapes.c */
/* Shape inference after set-batch or set-input-shape changed an input:
 * the recorded shapes (graph outputs, value_info, every graph) are
 * recomputed, each change reported as "shape recomputed" with the old and
 * new type; conflicts and values that could not be shaped are counted as
 * findings. Nothing is newly listed. SG_ENOMEM, SG_ECYCLE. */
sg_status sg__recompute_shapes(sg_model *m, struct sg_pass_report *rep, struct sg_diag *diag);

#endif
