/*
 * sg_print.h - a deterministic text dump of a model, for golden tests and
 * for reading what a pass did.
 *
 * The dump lists, per graph and in list order: inputs, initializers (values
 * of small tensors, a size and checksum of large ones), nodes with their
 * inputs, outputs and attributes, subgraphs indented under their node (with
 * the names they capture from enclosing graphs), outputs and value_info
 * entries. Only what the file would hold is shown: types a pass inferred in
 * memory for unlisted values are not. The same model always gives the same
 * text.
 */
#ifndef SG_PRINT_H
#define SG_PRINT_H

#include "sg_ir.h"

#include <stdio.h>

/*
 * Write the dump of m to `out` (not closed). Tensor values are read through
 * sg_tensor_data; a tensor whose data cannot be read is shown as
 * "<unreadable: reason>". Returns SG_EIO when writing fails, else SG_OK.
 */
sg_status sg_model_print_text(sg_model *m, FILE *out);

/* The same for one graph and its subgraphs, indented by `indent` spaces. */
sg_status sg_graph_print_text(sg_graph *g, FILE *out, int indent);

#endif
