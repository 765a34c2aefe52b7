/*
 * sg_opschema.h - arity of the standard ONNX operators, per opset version.
 *
 * The table (op_schemas.inc) is generated from Debian's python3-onnx by
 * tools/gen_op_schemas.py; a test checks it against the installed onnx.
 */
#ifndef SG_OPSCHEMA_H
#define SG_OPSCHEMA_H

#include <stdint.h>

struct sg_op_schema {
    const char *domain; /* "" for the default domain */
    const char *op_type;
    int since_version;
    int min_inputs, max_inputs;   /* max -1: unbounded */
    int min_outputs, max_outputs; /* max -1: unbounded */
};

/*
 * The schema in force for op_type of `domain` (NULL, "" or "ai.onnx" for the
 * default domain) at `opset`: the entry with the highest since_version not
 * above opset. NULL when the op is unknown or newer than opset.
 */
const struct sg_op_schema *sg_op_schema_find(const char *domain, const char *op_type,
                                             int64_t opset);

/* True when the table knows op_type in `domain` at any version. */
int sg_op_schema_known(const char *domain, const char *op_type);

#endif
