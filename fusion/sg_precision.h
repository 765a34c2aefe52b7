/*
 * sg_precision.h - the per-operator precision files ATC reads.
 *
 *   keep_dtype (--keep_dtype): one entry a line, a node name of the original
 *   model or OpType::<type>; those ops keep their original dtype.
 *       Exp_12
 *       OpType::LayerNorm
 *
 *   customize_dtypes (--customize_dtypes): the dtypes of an op's inputs and
 *   outputs, by node name or by type.
 *       Exp_12::InputDtype:float32,OutputDtype:float32
 *       OpType::Softmax:InputDtype:float32,OutputDtype:float32
 *
 *   op_precision_mode (--op_precision_mode), ini: the implementation mode by
 *   type and by node name (an older form has bare lines, read as ByOpType).
 *       [ByOpType]
 *       Exp=high_precision
 *       [ByNodeName]
 *       Softmax_7=high_precision
 *
 * One in-memory form serves all three: a list of entries, each naming a node
 * or an op type, with the dtypes (customize_dtypes) or the mode
 * (op_precision_mode). Readers report malformed lines as file:line:col;
 * writers refuse entries the reader would not read back the same.
 *
 * OpType:: entries name ATC's own op types, which are not always ONNX's:
 * ATC turns ONNX Softmax into SoftmaxV2, so OpType::Softmax matches nothing.
 * sg_atc_optype_for_onnx says when a type is renamed.
 */
#ifndef SG_PRECISION_H
#define SG_PRECISION_H

#include "sg_ir.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sg_prec_format {
    SG_PREC_KEEP_DTYPE,
    SG_PREC_CUSTOMIZE_DTYPES,
    SG_PREC_OP_PRECISION_MODE,
    SG_PREC_FORMAT_COUNT
};

enum sg_prec_target { SG_PREC_NODE, SG_PREC_OPTYPE };

/* The most dtypes one customize_dtypes entry may list per side. */
#define SG_PREC_MAX_DTYPES 256

struct sg_prec_entry {
    enum sg_prec_target target;
    char *name;           /* node name or op type (owned) */
    uint32_t line;        /* where it was read; 0 when added through the API */
    int32_t *in, *out;    /* customize_dtypes: ONNX dtype codes (owned) */
    uint32_t n_in, n_out; /* either may be 0, not both */
    const char *mode;     /* op_precision_mode: one of sg_prec_modes (static) */
};

typedef struct sg_prec_file {
    enum sg_prec_format format;
    struct sg_prec_entry *entries; /* file (or insertion) order */
    size_t n_entries, cap_entries;
    struct sg__prec_index *index; /* (target, name) -> entry, kept by fusion/ */
} sg_prec_file;

/* "keep_dtype", "customize_dtypes", "op_precision_mode". */
const char *sg_prec_format_name(enum sg_prec_format format);

/* An empty file of `format`; NULL when out of memory. */
sg_prec_file *sg_prec_file_create(enum sg_prec_format format);

/* Free a file. NULL is a no-op. */
void sg_prec_file_free(sg_prec_file *f);

/*
 * Add an entry (the name is copied). For keep_dtype use sg_prec_file_add;
 * for customize_dtypes sg_prec_file_add_dtypes (dtypes: ONNX codes, at least
 * one side non-empty, each a dtype ATC names: see sg_prec_dtype_name); for
 * op_precision_mode sg_prec_file_add_mode (mode from sg_prec_modes).
 * SG_EINVAL, naming the problem, for a call that does not fit the file's
 * format, an empty name, a name with a line break, leading or trailing
 * blanks, an op type that is not an identifier, a node name the format would
 * read back differently (keep_dtype: starting with "OpType:"; op_precision_mode:
 * holding '=' or starting with '['), an unknown dtype or mode; SG_ENOMEM.
 */
sg_status sg_prec_file_add(sg_prec_file *f, enum sg_prec_target target, const char *name,
                           struct sg_diag *diag);
sg_status sg_prec_file_add_dtypes(sg_prec_file *f, enum sg_prec_target target, const char *name,
                                  const int32_t *in, uint32_t n_in, const int32_t *out,
                                  uint32_t n_out, struct sg_diag *diag);
sg_status sg_prec_file_add_mode(sg_prec_file *f, enum sg_prec_target target, const char *name,
                                const char *mode, struct sg_diag *diag);

/*
 * Parse `len` bytes of `text` in `format`. `label` names it in messages
 * ("keep.cfg:3:1: ..."). Blank lines are skipped; surrounding blanks and a
 * '\r' before the newline are trimmed. Statuses: SG_EPARSE, SG_ETOOBIG,
 * SG_ENOMEM. A line that looks like another of the three formats says so.
 */
sg_status sg_prec_file_parse(enum sg_prec_format format, const char *text, size_t len,
                             const char *label, sg_prec_file **out, struct sg_diag *diag);

/* Read and parse the file at `path`. Adds SG_EIO. */
sg_status sg_prec_file_read(enum sg_prec_format format, const char *path, sg_prec_file **out,
                            struct sg_diag *diag);

/* Write f in its format to `out`. SG_EIO if the stream reports an error. */
sg_status sg_prec_file_print(const sg_prec_file *f, FILE *out);

/* Write f to `path` atomically (temporary file + rename). */
sg_status sg_prec_file_write(const sg_prec_file *f, const char *path, struct sg_diag *diag);

/*
 * Mark the entries that name nothing in model m: a node entry when no node
 * of that name exists (main graph or any subgraph), a type entry when no node
 * has that op type or one ATC renames to it. `unmatched` has f->n_entries
 * slots. Returns how many are unmatched.
 */
size_t sg_prec_file_unmatched(const sg_prec_file *f, const sg_model *m, bool *unmatched);

/* The index of f's entry with this target and name, or -1. O(1): the
 * mock compiler looks every node up. */
long sg_prec_file_find(const sg_prec_file *f, enum sg_prec_target target, const char *name);
/* The same for a name of len bytes (no NUL needed). */
long sg_prec_file_find_n(const sg_prec_file *f, enum sg_prec_target target, const char *name,
                         size_t len);

/* ATC's name for a dtype ("float16", "float32", "int8", ...) or NULL when
 * ATC's precision files cannot name it. */
const char *sg_prec_dtype_name(int32_t dtype);

/* The ONNX dtype code for an ATC dtype name ("float" is float32), or -1. */
int32_t sg_prec_dtype_parse(const char *name, size_t len);

/* The implementation modes op_precision_mode accepts, NULL-terminated. */
extern const char *const sg_prec_modes[];

/* The mode string from sg_prec_modes equal to [name, name+len), or NULL. */
const char *sg_prec_mode_find(const char *name, size_t len);

/* ATC's op type for ONNX op type `onnx_type` when ATC names it differently
 * (Softmax -> SoftmaxV2, MatMul -> BatchMatMulV2, Conv -> Conv2D, ...);
 * NULL when the name is the same or unknown to us. */
const char *sg_atc_optype_for_onnx(const char *onnx_type);

#endif
