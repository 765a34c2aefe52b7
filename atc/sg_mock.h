/*
 * sg_mock.h - the mock compiler: what ATC would do to a model's numerics,
 * emulated on the CPU, for machines without the CANN toolkit.
 *
 * It takes what `atc` takes (struct sg_atc_opts, or the parsed files) and
 * writes a mock OM (OUT_PREFIX.om, an ONNX file: sg_mockom.h, README.md)
 * plus the `atc --mode=1` style map of it (OUT_PREFIX.json), which the
 * comparison engine reads exactly as it reads a real OM's map. The runtime
 * runs a mock OM with float16 emulation (sg_rt_opts_mock in sg_runtime.h).
 *
 * Compiling, in order (each step a plain call in mock.c):
 *   1. input shapes (--input_shape) are set on the graph inputs;
 *   2. graph fusion rules, each imitating one ATC pass and switched by the
 *      fusion switch file under that pass's name (one file per rule):
 *        fuse_conv_bn.c      ConvBatchnormFusionPass
 *        fuse_matmul_bias.c  MatMulBiasAddFusionPass
 *        fuse_softmax.c      SoftmaxFusionPass
 *        fuse_layernorm.c    LayerNormONNXFusionPass
 *   3. every node's compute dtype, from the precision mode, then keep_dtype
 *      and customize_dtypes (sg_mock_precision_rules below);
 *   4. UB fusion rules, which join only ops of the same compute dtype:
 *        fuse_conv_act.c     TbeCommonRules0FusionPass (Conv + Relu),
 *                            ConvClipByValueFusionPass (Conv + Clip)
 *        fuse_eltwise.c      AutomaticUbFusion (chains of element-wise ops)
 *   5. the overflow mode: --overflow, else the SoC's (sg_soc.h); a SoC
 *      surgeon does not know needs --overflow.
 *
 * Nothing here prints: warnings (a keep_dtype entry naming no node, ...)
 * are returned in the report.
 */
#ifndef SG_MOCK_H
#define SG_MOCK_H

#include "sg_atc.h"
#include "sg_fusion.h"
#include "sg_ir.h"
#include "sg_precision.h"
#include "sg_soc.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---------------------------------------------------------- overflow */

/* "inf", "saturation" ("default" for SG_OVERFLOW_DEFAULT). */
const char *sg_overflow_name(enum sg_overflow o);

/* "inf" or "saturation" into *out; false for anything else. */
bool sg_overflow_parse(const char *s, enum sg_overflow *out);

/* -------------------------------------------------------- precision */

/* Op types allow_mix_precision keeps in float32 (NULL-terminated): softmax,
 * layer norm (ONNX and fused), reductions, Exp, Log, Pow. */
extern const char *const sg_mock_mixed_fp32_ops[];

/* Cube-unit op types (NULL-terminated): MatMul, Gemm, Conv, ConvTranspose
 * and their fused forms. force_fp32 runs them float16 in, float32 out;
 * allow_fp32_to_fp16 runs them in float16. */
extern const char *const sg_mock_cube_ops[];

/* ----------------------------------------------------------- compile */

/* Everything the mock compiler reads, parsed. Borrowed for the call. */
struct sg_mock_inputs {
    const char *soc;                           /* required */
    const struct sg_precision_mode *precision; /* NULL: force_fp16, ATC's default */
    const sg_input_shapes *shapes;             /* NULL: the model's own */
    const sg_prec_file *keep_dtype;            /* NULL: none (format keep_dtype) */
    const char *keep_dtype_label;              /* names it in warnings (a path) */
    const sg_prec_file *customize_dtypes;      /* NULL: none (format customize_dtypes) */
    const char *customize_dtypes_label;
    const sg_fusion_switch *fusion_switch; /* NULL: every pass on */
    enum sg_overflow overflow;             /* DEFAULT: the SoC's */
};

/* What a compile did. Zero-initialise; free with sg_mock_report_clear. */
typedef struct sg_mock_report {
    size_t fired[SG_FUSION_PASS_COUNT]; /* fused ops each pass made */
    size_t n_nodes;                     /* main-graph nodes before */
    size_t n_ops;                       /* compiled ops (main-graph nodes) after */
    size_t n_fp16;                      /* compiled ops computing in float16 */
    size_t n_fp16_in;          /* compiled ops reading float16, writing float32 (cube ops) */
    size_t n_fp32;             /* compiled float ops in float32 (or a mix of the two) */
    enum sg_overflow overflow; /* resolved */
    const char *precision;     /* the mode's name */
    char **warnings;           /* one line each, in order */
    size_t n_warnings, cap_warnings;
    bool oom; /* a warning could not be recorded */
} sg_mock_report;

/* Free what the report holds and zero it. NULL is a no-op. */
void sg_mock_report_clear(sg_mock_report *r);

/*
 * Compile model m in place into a mock OM. `rep` and `diag` may be NULL;
 * rep receives what happened (clear it after, even on failure). Errors
 * leave m partly rewritten (discard it). Statuses: SG_EINVAL (no graph, no
 * SoC, m is a mock OM already), SG_ENOTFOUND / SG_ESHAPE (an input shape
 * names no input of m or has another rank), SG_EUNSUPPORTED (a
 * customize_dtypes entry giving one side both float16 and float32),
 * SG_ENOMEM, and the verifier's when a rewrite broke the graph (a bug).
 */
sg_status sg_mock_compile_model(sg_model *m, const struct sg_mock_inputs *in, sg_mock_report *rep,
                                struct sg_diag *diag);

/*
 * Write mock OM `om` as OUT_PREFIX.om and its map as OUT_PREFIX.json, each
 * through a temporary file renamed at the end: on failure neither is left
 * behind (an existing file of the same name is then unchanged).
 * SG_EINVAL when om is not a mock OM; SG_EIO; SG_ENOMEM.
 */
sg_status sg_mock_save(sg_model *om, const char *out_prefix, struct sg_diag *diag);

/*
 * The whole job from the options the real driver takes: read the model and
 * every file o names (errors name file:line), compile, save. overflow may
 * be DEFAULT. o->op_precision_mode is checked but changes nothing (a
 * warning says so); extra atc arguments and the log level are ignored
 * (extra arguments with a warning). Nothing is written unless everything
 * succeeded. Statuses: those of the readers, sg_mock_compile_model and
 * sg_mock_save.
 */
sg_status sg_mock_compile(const struct sg_atc_opts *o, enum sg_overflow overflow,
                          sg_mock_report *rep, struct sg_diag *diag);

/* ---------------------------------------------------------- the map */

/*
 * Write the `atc --mode=1` style JSON of mock OM `om`:
 *   {"graph":[{"name", "op":[{"name","type","input":[...],
 *     "attr":[{"key":"_datadump_original_op_names","value":{"list":{"s":[...]}}},
 *             {"key":"pass_name","value":{"list":{"s":[...]}}},
 *             {"key":"pass_name_ub","value":{"s":"..."}}],
 *     "output_desc":[{"dtype","attr":[_datadump_origin_name, _datadump_origin_output_index]}]}]}]}
 * One op per graph input ("Data") and per main-graph node, in topological
 * order; sg_atc_map_parse (fusion/) and the comparison engine read it.
 * sg_mock_map_print: SG_EIO on a stream error. sg_mock_map_write: to a
 * path, atomically.
 */
sg_status sg_mock_map_print(sg_model *om, FILE *out, struct sg_diag *diag);
sg_status sg_mock_map_write(sg_model *om, const char *path, struct sg_diag *diag);

#endif
