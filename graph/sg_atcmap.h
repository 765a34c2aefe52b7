/*
 * sg_atcmap.h - the compiled-op map of an `atc --mode=1` JSON (FORMATS.md):
 * for each compiled op, the ONNX nodes it came from
 * (_datadump_original_op_names), the fusion passes that made it (pass_name,
 * pass_name_ub), and per output the original output it stands for
 * (output_desc _datadump_origin_name / _datadump_origin_output_index).
 * fusion/ reads it to switch passes off behind nodes; compare/ to match a
 * device dump with the golden dump. The mock compiler writes the same JSON.
 */
#ifndef SG_ATCMAP_H
#define SG_ATCMAP_H

#include "sg_json_read.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One op of the compiled graph. Strings point into the map's document. */
struct sg_atc_op {
    const char *name;
    const char *type;  /* "" when absent */
    const char **orig; /* _datadump_original_op_names */
    size_t n_orig;
    const char **passes; /* pass_name: graph fusion passes */
    size_t n_passes;
    const char *ub_pass;   /* pass_name_ub, or NULL */
    const char **out_orig; /* per output: output_desc _datadump_origin_name, or NULL */
    int64_t *out_index;    /* per output: _datadump_origin_output_index, or -1 */
    int32_t *out_dtype;    /* per output: its "dtype" (DT_FLOAT16, ...) as an sg_dtype, or 0 */
    size_t n_outputs;      /* entries of output_desc (0 when absent) */
    uint32_t line, col;    /* where the op's object starts in the file */
};

typedef struct sg_atc_map {
    struct sg_jdoc *doc;
    struct sg_atc_op *ops; /* every op of every graph, in file order */
    size_t n_ops;
} sg_atc_map;

/*
 * Read an `atc --mode=1` JSON ({"graph":[{"op":[{"name","type","attr":[...]}]}]}).
 * Unknown members are ignored; the members used must have the right types
 * (errors name file:line:col). An attr value may hold its strings as
 * {"list":{"s":[...]}} or {"s":"..."}; a list without "s" is empty.
 * Statuses: SG_EIO, SG_EPARSE, SG_ETOOBIG, SG_ENOMEM.
 */
sg_status sg_atc_map_read(const char *path, sg_atc_map **out, struct sg_diag *diag);

/* Parse one from memory (`label` names it in messages). */
sg_status sg_atc_map_parse(const char *text, size_t len, const char *label, sg_atc_map **out,
                           struct sg_diag *diag);

/* GE's name of a dtype ("DT_FLOAT16"; "DT_UNDEFINED" for one it lacks),
 * and the dtype of a name (0, SG_DTYPE_UNDEFINED, for an unknown one). */
const char *sg_atc_dtype_name(int32_t dtype);
int32_t sg_atc_dtype_parse(const char *name);

/* Free a map. NULL is a no-op. */
void sg_atc_map_free(sg_atc_map *map);

/* Whether compiled op `op` covers ONNX node `node`: the node is among its
 * original names, or it has none and carries the node's own name. */
bool sg_atc_op_covers(const struct sg_atc_op *op, const char *node);

#endif
