/*
 * sg_shape.h - shape inference: the element type and shape of every value
 * from the graph inputs, the initializers and the operators' rules.
 *
 * A dim is a number, a symbol (a name such as "batch": equal names are equal
 * sizes, as in ONNX) or unknown. Symbols of the model are kept by name and
 * pass through the ops that only move dims (Concat of `batch` and 3 stays
 * `batch`,3; broadcasting `batch` with 1 gives `batch`). Small integer
 * tensors are followed by value (Shape, Gather, Concat, Slice, Unsqueeze,
 * arithmetic...), so a Reshape, Expand, ConstantOfShape, Tile, Range, Slice,
 * Pad, Resize or TopK whose shape input is computed from shapes gets its
 * output shape. A size that depends on data (NonZero, a Reshape target that
 * is not known) gets a fresh symbol ("unk__sg<N>"), never a guessed number.
 * Subgraphs are inferred with their nodes: If branches that disagree give
 * the dims they share, Loop-carried values that change shape lose the dims
 * that change.
 *
 * A recorded shape (graph output, value_info) that says more than the rules
 * (a number where they give a symbol or nothing) refines the inferred one;
 * one that contradicts them (another rank, another number) is a conflict,
 * reported naming the node and both shapes; the inferred shape is kept.
 * Bad input (a Reshape target that does not fit, dims that do not broadcast,
 * a negative or overflowing dim, a Concat of different ranks) is likewise a
 * conflict naming the node and the shapes, or with `strict` an error
 * (SG_ESHAPE) that stops inference.
 */
#ifndef SG_SHAPE_H
#define SG_SHAPE_H

#include "sg_ir.h"

#include <stdbool.h>
#include <stddef.h>

struct sg_shape_opts {
    bool strict; /* a conflict or bad shape is an error (SG_ESHAPE), not a finding */
};

/* What inference found. Strings are malloc'd, freed by sg_shape_result_clear. */
struct sg_shape_result {
    size_t n_values;  /* tensor values produced by nodes, all graphs */
    size_t n_ranked;  /* ... of them with a known rank */
    size_t n_static;  /* ... with every dim a number */
    size_t n_changed; /* ... whose type was changed (set or refined) */
    /* "node 'N' (Op) output 'y': recorded float32[2,3], inferred float32[6]"
     * and the bad-input findings ("node 'N' (Reshape): ..."). */
    char **conflicts;
    size_t n_conflicts;
    /* Nodes whose outputs could not be shaped: "node 'N' (Op): no shape
     * rule for this op" or "...: input shapes unknown". */
    char **unknown;
    size_t n_unknown;
    bool oom; /* a finding could not be recorded */
};

/* Free the strings of r and zero it. NULL is a no-op. */
void sg_shape_result_clear(struct sg_shape_result *r);

/*
 * Infer the types of every value produced by a node of g and of its
 * subgraphs, and set them (new sg_type objects in the model arena; graph
 * inputs and initializers keep theirs). Values are not listed in
 * value_info: the caller (the infer-shapes pass) decides what is saved.
 * opts may be NULL (defaults); res may be NULL. Returns SG_OK, SG_ESHAPE
 * (strict, naming the node and shapes in diag), SG_ECYCLE or SG_ENOMEM.
 * O(nodes + edges) apart from subgraph re-inference of Loop bodies (at most
 * a few rounds each).
 */
sg_status sg_graph_infer_shapes(sg_graph *g, const struct sg_shape_opts *opts,
                                struct sg_shape_result *res, struct sg_diag *diag);

#endif
