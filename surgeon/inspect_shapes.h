/*
 * inspect_shapes.h - `surgeon inspect --shapes`: every value's inferred
 * type and shape, as text or inside inspect's JSON object.
 */
#ifndef SG_INSPECT_SHAPES_H
#define SG_INSPECT_SHAPES_H

#include "sg_ir.h"
#include "sg_json.h"
#include "sg_shape.h"

#include <stdio.h>

/* Infer the shapes of m (sg_graph_infer_shapes, not strict) into res.
 * SG_OK, or the failure with the reason in diag. */
sg_status sg__inspect_infer(sg_model *m, struct sg_shape_result *res, struct sg_diag *diag);

/* The listing: every node output of every graph in topological order
 * (subgraphs indented under their node), then the conflicts and the nodes
 * not shaped. */
void sg__inspect_shapes_text(FILE *out, sg_model *m, const struct sg_shape_result *res);

/* The same as JSON members "values", "shape_conflicts" and
 * "shapes_not_inferred" of the object being written. */
void sg__inspect_shapes_json(struct sg_json *j, sg_model *m, const struct sg_shape_result *res);

#endif
