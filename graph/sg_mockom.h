/*
 * sg_mockom.h - the mock OM: the compiled model surgeon's mock compiler
 * (atc/) writes and the runtime (runtime/) runs with float16 emulation.
 * Shared here, like sg_dumpname.h, so that writer and reader agree.
 *
 * A mock OM is an ONNX model (the same protobuf; saved as OUT_PREFIX.om):
 *
 *   metadata_props
 *     surgeon.mock_om         "1": the format version; marks the file
 *     surgeon.soc             the --soc it was compiled for
 *     surgeon.precision_mode  the precision mode (ATC's name)
 *     surgeon.overflow        "inf" (overflow gives +-inf, then NaN) or
 *                             "saturation" (overflow clamps at +-65504)
 *   opset_import "surgeon.mock" version 1, the domain of fused ops.
 *
 *   On any node (standard or fused), the dtype the compiled op computes in:
 *     _input_dtype   "float16" | "float32": its float inputs are read in
 *                    that dtype (float16: rounded at the node boundary)
 *     _output_dtype  "float16" | "float32": its float outputs are written
 *                    in that dtype
 *   (absent: the node has no float tensor on that side), and
 *     _atc_type      the op type ATC gives the compiled op when it is not
 *                    the ONNX op_type (Conv -> Conv2D, ...); dump file names
 *                    and the --mode=1 map use it.
 *
 *   On fused nodes (domain surgeon.mock), what made them, with the same
 *   keys as ATC's --mode=1 JSON:
 *     _datadump_original_op_names  (strings) the ONNX nodes it replaces,
 *                                  in topological order
 *     pass_name                    (strings) graph fusion passes (ATC names)
 *     pass_name_ub                 (string) the UB fusion pass, if any
 *
 * The fused ops themselves (Conv2D, BatchMatMulV2, MatMulV2, SoftmaxV2,
 * LayerNorm, FusedElementwise) are described in README.md and implemented
 * by runtime/kernels/mock_fused.c.
 */
#ifndef SG_MOCKOM_H
#define SG_MOCKOM_H

#include "sg_ir.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>

#define SG_MOCKOM_DOMAIN "surgeon.mock"
#define SG_MOCKOM_DOMAIN_VERSION 1

#define SG_MOCKOM_META_FORMAT "surgeon.mock_om"
#define SG_MOCKOM_FORMAT_VERSION "1"
#define SG_MOCKOM_META_SOC "surgeon.soc"
#define SG_MOCKOM_META_PRECISION "surgeon.precision_mode"
#define SG_MOCKOM_META_OVERFLOW "surgeon.overflow"

#define SG_MOCKOM_ATTR_INPUT_DTYPE "_input_dtype"
#define SG_MOCKOM_ATTR_OUTPUT_DTYPE "_output_dtype"
#define SG_MOCKOM_ATTR_ATC_TYPE "_atc_type"
#define SG_MOCKOM_ATTR_ORIGINAL "_datadump_original_op_names"
#define SG_MOCKOM_ATTR_PASS "pass_name"
#define SG_MOCKOM_ATTR_PASS_UB "pass_name_ub"

/* The two overflow modes, as surgeon.overflow spells them. */
#define SG_MOCKOM_OVERFLOW_INF "inf"
#define SG_MOCKOM_OVERFLOW_SATURATION "saturation"

/* True when m carries the mock OM marker (any version). */
bool sg_mockom_is(const sg_model *m);

/*
 * Check that m is a mock OM this build can run: the marker with a known
 * version and a known overflow mode. SG_EINVAL when it is not a mock OM,
 * SG_EUNSUPPORTED for another format version, SG_EPARSE for a bad overflow
 * entry; `diag` says which.
 */
sg_status sg_mockom_check(const sg_model *m, struct sg_diag *diag);

/* True when the mock OM saturates at +-65504 (surgeon.overflow is
 * "saturation"); false for "inf" and for models without the entry. */
bool sg_mockom_saturates(const sg_model *m);

/* Which float boundaries of node n are float16 (bits below); 0 for nodes
 * without the attributes (nothing rounded). */
enum { SG_MOCKOM_FP16_IN = 1u << 0, SG_MOCKOM_FP16_OUT = 1u << 1 };
unsigned sg_mockom_node_fp16(const sg_node *n);

/* The compiled op type of n: its _atc_type, else its op_type, copied into
 * buf (truncated to size - 1 bytes); returns buf. */
const char *sg_mockom_op_type(const sg_node *n, char *buf, size_t size);

#endif
