/*
 * sg_atc.h - driving Huawei's ATC compiler: precision modes, input shapes,
 * the exact command line, and finding and running `atc`.
 *
 * The command line is built as ATC documents it: `--key=value` words, no
 * space after '=', ONNX as --framework=5:
 *
 *   atc --framework=5 --model=m.onnx --output=out --soc_version=Ascend310P3
 *       --input_shape=x:4,77,40;cache:128,4,128 --precision_mode=force_fp16
 *       --keep_dtype=keep.cfg --fusion_switch_file=fusion_switch.cfg --log=error
 *
 * The argv is what we exec (no shell involved); sg_argv_format quotes it for
 * a shell when it is shown to a user. The mock compiler (sg_mock.h,
 * sg_mock_compile) takes the same struct sg_atc_opts, so a caller chooses
 * real or mock with one switch.
 */
#ifndef SG_ATC_H
#define SG_ATC_H

#include "sg_ir.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------- precision modes */

/* What a precision mode does, for the mock compiler. Cube ops are the
 * matrix ops (MatMul, Gemm, Conv); vector ops are all others. */
enum sg_precision_kind {
    SG_PRECISION_FP16,         /* float ops in float16 wherever a float16 kernel exists */
    SG_PRECISION_FP32_TO_FP16, /* cube ops float16; vector ops keep float32 when they can */
    SG_PRECISION_ORIGIN,       /* every op keeps the model's dtype (keep_dtype has no effect) */
    SG_PRECISION_FP32,         /* cube ops float16 in, float32 out; vector ops float32 */
    SG_PRECISION_MIXED,        /* float16 except ops on the compiler's keep-in-float32 list */
    SG_PRECISION_KIND_COUNT
};

/* X(name, ATC option it is given with, kind, summary) */
#define SG_PRECISION_MODE_MAP(X)                                                                   \
    X("force_fp16", "precision_mode", FP16, "float ops in float16 (ATC's default for inference)")  \
    X("allow_fp32_to_fp16", "precision_mode", FP32_TO_FP16,                                        \
      "cube ops (MatMul, Conv) in float16; other ops keep float32 where they can")                 \
    X("must_keep_origin_dtype", "precision_mode", ORIGIN,                                          \
      "every op keeps the model's dtype; keep_dtype has no effect")                                \
    X("force_fp32", "precision_mode", FP32,                                                        \
      "cube ops float16 in, float32 out; other ops float32 (same as cube_fp16in_fp32out)")         \
    X("cube_fp16in_fp32out", "precision_mode", FP32,                                               \
      "cube ops float16 in, float32 out; other ops float32")                                       \
    X("allow_mix_precision", "precision_mode", MIXED,                                              \
      "float16 except the ops ATC's built-in list keeps in float32")                               \
    X("allow_mix_precision_fp16", "precision_mode", MIXED, "same as allow_mix_precision")          \
    X("fp16", "precision_mode_v2", FP16, "same as force_fp16 (precision_mode_v2)")                 \
    X("origin", "precision_mode_v2", ORIGIN,                                                       \
      "same as must_keep_origin_dtype (precision_mode_v2); keep_dtype has no effect")              \
    X("mixed_float16", "precision_mode_v2", MIXED,                                                 \
      "same as allow_mix_precision (precision_mode_v2)")

struct sg_precision_mode {
    const char *name;   /* the value ATC takes, e.g. "force_fp16" */
    const char *option; /* "precision_mode" or "precision_mode_v2" */
    enum sg_precision_kind kind;
    const char *summary;
};

/* The mode named `name` (exact), or NULL. */
const struct sg_precision_mode *sg_precision_mode_find(const char *name);

/* The i-th mode of the table (NULL past the end), for listings. */
const struct sg_precision_mode *sg_precision_mode_at(size_t i);

/* ATC's --log levels: debug, info, warning, error, null. */
bool sg_atc_log_level_valid(const char *level);

/* ---------------------------------------------------------- input shapes */

/* One dimension: fixed (lo == hi >= 0), unknown (lo == hi == -1), or a
 * range lo~hi (hi == -1: unbounded). */
struct sg_shape_range {
    int64_t lo, hi;
};

struct sg_input_shape {
    char *name; /* owned */
    struct sg_shape_range *dims;
    uint32_t rank;
};

typedef struct sg_input_shapes {
    struct sg_input_shape *items;
    size_t n;
} sg_input_shapes;

/*
 * Parse ATC's --input_shape text "name:d0,d1;name2:d0" where a dim is N, -1
 * or LO~HI (HI may be -1). The name ends at the last ':' of its item, so
 * names holding ':' (TensorFlow-style "x:0") work. An empty dim list is a
 * scalar. SG_EPARSE names the item and the column; SG_EDUP a repeated name;
 * SG_ENOMEM.
 */
sg_status sg_input_shapes_parse(const char *text, sg_input_shapes **out, struct sg_diag *diag);

/* Free. NULL is a no-op. */
void sg_input_shapes_free(sg_input_shapes *s);

/*
 * Check the shapes against model m: every name must be an input of the main
 * graph that is not an initializer (SG_ENOTFOUND, listing the inputs), and
 * the number of dims must equal the input's rank when the model gives one
 * (SG_ESHAPE).
 */
sg_status sg_input_shapes_check(const sg_input_shapes *s, const sg_model *m, struct sg_diag *diag);

/* ------------------------------------------------------------- commands */

struct sg_atc_opts {
    const char *model;                         /* required */
    const char *output;                        /* required: output prefix (ATC adds .om) */
    const char *soc;                           /* required: --soc_version */
    const char *input_shape;                   /* NULL: none; passed as given */
    const struct sg_precision_mode *precision; /* NULL: ATC's default */
    const char *keep_dtype;                    /* files, NULL: none */
    const char *customize_dtypes;
    const char *op_precision_mode;
    const char *fusion_switch;
    const char *log;          /* NULL: none */
    const char *const *extra; /* more ATC arguments, appended verbatim */
    size_t n_extra;
};

/*
 * The argv (NULL-terminated, argv[0] "atc") for compiling with `o`.
 * SG_EINVAL, naming the option, when a required field is missing or empty, a
 * value holds a line break, the log level is not one of ATC's, or an extra
 * argument sets an option that `o` sets too (--precision_mode and
 * --precision_mode_v2 count as one). Free with sg_argv_free.
 */
sg_status sg_atc_command(const struct sg_atc_opts *o, char ***argv, struct sg_diag *diag);

/* The argv of `atc --mode=1 --om=OM --json=JSON [extra...]`: the compiled
 * graph as JSON. Same errors. */
sg_status sg_atc_json_command(const char *om, const char *json, const char *const *extra,
                              size_t n_extra, char ***argv, struct sg_diag *diag);

/* Free an argv from this module. NULL is a no-op. */
void sg_argv_free(char **argv);

/*
 * One line a POSIX shell reads back as `argv`: words that need it are quoted
 * with double quotes, and for `--key=value` only the value is quoted
 * (--input_shape="x:1,3;y:2"). sg_malloc'd; NULL when out of memory.
 */
char *sg_argv_format(char *const *argv);

/*
 * Find the atc executable: each folder of `path_env` (a PATH value; NULL or
 * "" searches none), then under `toolkit_home` (the value of
 * $ASCEND_TOOLKIT_HOME, NULL meaning /usr/local/Ascend/ascend-toolkit/latest)
 * bin/atc, compiler/bin/atc and atc/bin/atc. On success *found is the
 * sg_malloc'd path. SG_ENOTFOUND says where it looked.
 */
sg_status sg_atc_find(const char *path_env, const char *toolkit_home, char **found,
                      struct sg_diag *diag);

/*
 * Run `exe` with `argv` (argv[0] is passed as given), inheriting stdin,
 * stdout, stderr and the environment so its output streams through, and
 * wait for it. *exit_code is its exit status (128 + signal when killed, and
 * then SG_EIO says so). SG_EIO also when it cannot be started.
 */
sg_status sg_atc_exec(const char *exe, char *const *argv, int *exit_code, struct sg_diag *diag);

#endif
