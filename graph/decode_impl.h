/*
 * decode_impl.h - the ONNX wire decoder (decode.c), internal to graph/.
 */
#ifndef SG_DECODE_IMPL_H
#define SG_DECODE_IMPL_H

#include "sg_ir.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Decode a ModelProto from data[0..len) into m (a fresh model from
 * sg_model_create). Byte payloads of tensors and attributes point into
 * `data`, which must outlive m (the loader keeps it as m->source). On
 * failure diag names the offending node/tensor/field and m must be freed.
 */
sg_status sg__decode_model(sg_model *m, const uint8_t *data, size_t len, struct sg_diag *diag);

/* Decode one TensorProto (a .pb tensor file) into a tensor of m. Its
 * payload points into data. NULL with diag on failure. */
sg_tensor *sg__decode_tensor_bytes(sg_model *m, const uint8_t *data, size_t len,
                                   struct sg_diag *diag);

/* The loader's checks of one NodeProto (its strings, wire types and
 * attributes, an op_type given) and of one ValueInfoProto (its strings and
 * type), decoding into m's arena what a check needs and binding nothing:
 * for a reader that copies messages without building the IR
 * (extract_stream.c). Stricter than a load where a load skips a part (a
 * second entry of a name): such a reader then loads the model. */
sg_status sg__check_node_bytes(sg_model *m, const uint8_t *data, size_t len, struct sg_diag *diag);
sg_status sg__check_value_info_bytes(sg_model *m, const uint8_t *data, size_t len,
                                     struct sg_diag *diag);

#endif
