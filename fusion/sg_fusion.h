/*
 * sg_fusion.h - ATC's fusion passes: the catalogue, fusion switch files, and
 * the compiled-op map that says which pass made which op.
 *
 * Catalogue. A static table of ATC fusion passes (name exactly as ATC spells
 * it, graph or UB fusion, the ONNX pattern it fuses and what it becomes).
 * `surgeon fusion-switch --list` prints it; the fusion switch reader uses it
 * to warn about names ATC does not know; the mock compiler refers to its
 * entries by id (SG_FP_*) so that each emulated rule is switched by the same
 * file, under the same name, as the real pass it imitates.
 *
 * Fusion switch file (atc --fusion_switch_file). ATC reads two formats:
 *   JSON  {"Switch":{"GraphFusion":{"ALL":"off","SoftmaxFusionPass":"on"},
 *                    "UBFusion":{"ALL":"off"}}}
 *   lines SoftmaxFusionPass:off      (one pass per line, no section)
 * Everything is on by default; in a section a named pass overrides ALL.
 * We read both and write JSON.
 *
 * Compiled-op map. `atc --mode=1 --om=m.om --json=m.json` writes the compiled
 * graph; each op's attrs `_datadump_original_op_names` (list), `pass_name`
 * (list) and `pass_name_ub` (string) say which ONNX nodes it covers and which
 * graph / UB fusion passes made it. The mock compiler writes the same JSON.
 */
#ifndef SG_FUSION_H
#define SG_FUSION_H

#include "sg_atcmap.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- catalogue */

enum sg_fusion_kind { SG_FUSION_GRAPH, SG_FUSION_UB, SG_FUSION_KIND_COUNT };

/*
 * X(ID, ATC pass name, kind, what it fuses (ONNX ops), what it becomes).
 * Append only: ids are used by the mock compiler and in tests.
 */
#define SG_FUSION_PASS_MAP(X)                                                                      \
    X(CONV_BATCHNORM, "ConvBatchnormFusionPass", GRAPH, "Conv + BatchNormalization",               \
      "Conv2D with the batch norm folded into its weights and bias")                               \
    X(CONV_SCALE, "ConvScaleFusionPass", GRAPH, "Conv + per-channel scale (Mul, Add)",             \
      "Conv2D with the scale folded into its weights and bias")                                    \
    X(CONV_TO_FC, "ConvToFullyConnectionFusionPass", GRAPH,                                        \
      "Conv whose kernel covers its whole input", "FullyConnection")                               \
    X(CONV_CONCAT, "ConvConcatFusionPass", GRAPH,                                                  \
      "Conv x N (each optionally + dequant, Relu) + Concat",                                       \
      "convolutions writing straight into the Concat output")                                      \
    X(SPLIT_CONV_CONCAT, "SplitConvConcatFusionPass", GRAPH, "Split + Conv x N + Concat",          \
      "convolutions reading and writing the slices in place")                                      \
    X(GROUP_CONV2D, "GroupConv2DFusionPass", GRAPH, "Conv with group > 1",                         \
      "grouped Conv2D rearranged for the cube unit")                                               \
    X(MATMUL_BIASADD, "MatMulBiasAddFusionPass", GRAPH,                                            \
      "MatMul + Add of a constant bias (and Gemm's C input)", "MatMul with a bias input")          \
    X(BATCHMATMUL_TO_MUL, "BatchMatMul2MulFusionPass", GRAPH,                                      \
      "BatchMatMul whose reduced dimension is 1", "Mul (a broadcast product)")                     \
    X(SOFTMAX, "SoftmaxFusionPass", GRAPH, "ReduceMax, Sub, Exp, ReduceSum, Div (a softmax)",      \
      "SoftmaxV2")                                                                                 \
    X(LAYERNORM_ONNX, "LayerNormONNXFusionPass", GRAPH,                                            \
      "ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (+ Mul, Add of gamma, beta)", "LayerNorm") \
    X(LAYERNORM, "LayerNormFusionPass", GRAPH,                                                     \
      "ReduceMean, SquaredDifference, ReduceMean, Add, Rsqrt, Mul, Sub (TensorFlow style)",        \
      "LayerNorm")                                                                                 \
    X(POOLING, "PoolingFusionPass", GRAPH, "MaxPool / AveragePool", "Pooling")                     \
    X(REQUANT, "RequantFusionPass", GRAPH, "AscendDequant + AscendQuant (quantised models)",       \
      "AscendRequant")                                                                             \
    X(AUTOMATIC_UB, "AutomaticUbFusion", UB,                                                       \
      "up to 28 connected element-wise ops (Mul, Sub, Add, Exp, ...) not fused otherwise",         \
      "one element-wise kernel; only its last output is dumped")                                   \
    X(COMMON_RULES0, "TbeCommonRules0FusionPass", UB,                                              \
      "Conv + (dequant) + up to 5 element-wise ops (Relu, LeakyRelu, Add, ...) + (quant)",         \
      "Conv2D with the activation applied in the output buffer")                                   \
    X(COMMON_RULES2, "TbeCommonRules2FusionPass", UB,                                              \
      "as TbeCommonRules0FusionPass, element-wise ops with several consumers",                     \
      "Conv2D with the element-wise ops applied in the output buffer")                             \
    X(CONV_CLIP, "ConvClipByValueFusionPass", UB,                                                  \
      "Conv + Clip (ClipByValue, Relu6) + up to two Relu/Add", "one Conv2D kernel")                \
    X(BATCHMATMUL_ELEMWISE, "TbeBatchMatmulElementWiseFusionPass", UB,                             \
      "BatchMatMul/Gemm + element-wise (Add, Div, Relu, Mul, Sigmoid)", "one BatchMatMul kernel")  \
    X(CONV_DEQUANT_VADD_RELU, "TbeConvDequantVaddReluFusionPass", UB,                              \
      "Conv + AscendDequant + Add + Relu (quantised models)", "one Conv2D kernel")                 \
    X(ELTWISE_QUANT, "TbeEltwiseQuantFusionPass", UB,                                              \
      "element-wise op + (AscendQuant) (quantised models)", "one element-wise kernel")             \
    X(POOL2D_QUANT, "TbePool2dQuantFusionPass", UB, "Pooling + AscendQuant (quantised models)",    \
      "one Pooling kernel")

enum sg_fusion_pass_id {
#define SG__FP_ENUM(id, name, kind, fuses, result) SG_FP_##id,
    SG_FUSION_PASS_MAP(SG__FP_ENUM)
#undef SG__FP_ENUM
        SG_FUSION_PASS_COUNT
};

struct sg_fusion_pass {
    enum sg_fusion_pass_id id;
    const char *name; /* as ATC spells it, e.g. "SoftmaxFusionPass" */
    enum sg_fusion_kind kind;
    const char *fuses;  /* the ONNX pattern */
    const char *result; /* what it becomes on the device */
};

/* The entry for an id (never NULL for a valid id; NULL otherwise). */
const struct sg_fusion_pass *sg_fusion_pass_get(enum sg_fusion_pass_id id);

/* The entry named `name` (exact, case-sensitive), or NULL. */
const struct sg_fusion_pass *sg_fusion_pass_find(const char *name);

/* The entry whose name is nearest to a name not in the catalogue, when it
 * looks mistyped ("AutomaticUBFusion": AutomaticUbFusion; sg_suggest.h),
 * else NULL. */
const struct sg_fusion_pass *sg_fusion_pass_suggest(const char *name);

/* "GraphFusion" / "UBFusion": the section names of the switch file. */
const char *sg_fusion_kind_name(enum sg_fusion_kind kind);

/* The word for a pass's kind in the catalogue listing: "graph" / "UB". */
const char *sg_fusion_kind_word(enum sg_fusion_kind kind);

/* ----------------------------------------------------- fusion switch file */

/* The name that stands for every pass of a section. */
#define SG_FUSION_ALL "ALL"

enum sg_fusion_format { SG_FUSION_FORMAT_JSON, SG_FUSION_FORMAT_LINES };

struct sg_fusion_switch_entry {
    char *name; /* a pass name or SG_FUSION_ALL (owned) */
    enum sg_fusion_kind kind;
    bool any_kind; /* from the line format, which has no sections: applies to both */
    bool on;
    uint32_t line, col; /* where it was read; 0 when set through the API */
};

/* A switch file in memory: entries in file (or insertion) order, at most one
 * per (section, name). Read-only outside fusion/: change it with the setters. */
typedef struct sg_fusion_switch {
    enum sg_fusion_format format; /* how it was read (JSON when built) */
    struct sg_fusion_switch_entry *entries;
    size_t n_entries, cap_entries;
} sg_fusion_switch;

/* An empty switch (everything on); NULL when out of memory. */
sg_fusion_switch *sg_fusion_switch_create(void);

/* Free a switch. NULL is a no-op. */
void sg_fusion_switch_free(sg_fusion_switch *sw);

/*
 * Switch `name` (a pass name or SG_FUSION_ALL) on or off in section `kind`,
 * replacing an earlier setting of the same name there. The name is copied.
 * SG_EINVAL for an empty name or one with whitespace, quotes, backslashes or
 * control characters (ATC pass names are identifiers); SG_ENOMEM.
 */
sg_status sg_fusion_switch_set(sg_fusion_switch *sw, enum sg_fusion_kind kind, const char *name,
                               bool on, struct sg_diag *diag);

/* Whether pass `name` of section `kind` runs under this switch: its own
 * entry, else the section's ALL, else on. sw NULL: on. */
bool sg_fusion_switch_enabled(const sg_fusion_switch *sw, enum sg_fusion_kind kind,
                              const char *name);

/* The same for a catalogue pass (what the mock compiler asks). */
bool sg_fusion_switch_pass_enabled(const sg_fusion_switch *sw, enum sg_fusion_pass_id id);

/*
 * Parse a switch file held in memory, in either format (JSON when the first
 * non-blank character is '{'). `label` names it in messages. Errors carry
 * label:line:col (JSON syntax, a top level other than {"Switch":{...}}, a
 * section other than GraphFusion/UBFusion, a value other than "on"/"off", a
 * line not of the form NAME:on|off, a name given twice in a section).
 * Names unknown to the catalogue are not errors: see sg_fusion_switch_check_entry.
 * Statuses: SG_EPARSE, SG_ETOOBIG, SG_ENOMEM.
 */
sg_status sg_fusion_switch_parse(const char *text, size_t len, const char *label,
                                 sg_fusion_switch **out, struct sg_diag *diag);

/* Read and parse the file at `path`. Adds SG_EIO. */
sg_status sg_fusion_switch_read(const char *path, sg_fusion_switch **out, struct sg_diag *diag);

/* Write sw as ATC's JSON to `out` (two-space indentation; ALL first in each
 * section, then the passes in order; empty sections left out; line-format
 * entries go to both sections). Returns SG_EIO if the stream reports an error. */
sg_status sg_fusion_switch_print(const sg_fusion_switch *sw, FILE *out);

/* Write sw as JSON to `path`, atomically (temporary file + rename): on
 * failure nothing is left behind and an existing file is unchanged. */
sg_status sg_fusion_switch_write(const sg_fusion_switch *sw, const char *path,
                                 struct sg_diag *diag);

enum sg_fusion_entry_check {
    SG_FUSION_ENTRY_OK,           /* ALL, or a catalogue pass in its own section */
    SG_FUSION_ENTRY_UNKNOWN,      /* not in the catalogue (ATC may still know it) */
    SG_FUSION_ENTRY_WRONG_SECTION /* a catalogue pass listed under the other section */
};

/* How an entry relates to the catalogue, for warnings. */
enum sg_fusion_entry_check sg_fusion_switch_check_entry(const struct sg_fusion_switch_entry *e);

/* The compiled-op map (sg_atc_map) is graph/sg_atcmap.h. */

/*
 * Switch off in `sw` every pass that made a compiled op covering one of
 * `nodes`: pass_name entries in GraphFusion, pass_name_ub in UBFusion.
 * uncovered (n_nodes entries, may be NULL) tells which nodes no op covers;
 * *n_off (may be NULL) receives how many distinct passes were found behind
 * the nodes (each is off afterwards, even if `sw` had it on).
 * Statuses: SG_EINVAL (a pass name the switch file cannot hold), SG_ENOMEM.
 */
sg_status sg_fusion_switch_off_for_nodes(sg_fusion_switch *sw, const sg_atc_map *map,
                                         const char *const *nodes, size_t n_nodes, bool *uncovered,
                                         size_t *n_off, struct sg_diag *diag);

#endif
