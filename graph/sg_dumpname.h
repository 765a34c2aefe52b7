/*
 * sg_dumpname.h - file names of tensor dumps, shared by the writer
 * (runtime/) and the reader (compare/) so both sides agree on them.
 *
 * Reference (ONNX) dumps, as msit writes them:
 *     <node>.<output index>.<timestamp us>.npy
 *     input_<node>.<input index>.<timestamp us>.npy   (node inputs, optional)
 * where every '.' and '/' of the node name becomes '_'. A file name longer
 * than 255 bytes (the Linux limit) is shortened to a prefix plus a hash and
 * the pair is listed in mapping.csv in the dump folder as
 *     <file name>,<node name>
 * (the node name in CSV quoting when it needs it).
 *
 * Device dumps (converted to npy):
 *     <OpType>.<OpName>.<task>.<stream>.<timestamp>.output.<i>.npy
 *     <OpType>.<OpName>.<task>.<stream>.<timestamp>.input.<i>.npy
 * parsed from the right, so an OpName that contains '.' still parses.
 *
 * Which name a node's dumps carry (sg_dump_names): its own; for a node
 * without one, msit's: <OpType>_<i>, i its 0-based position in its graph's
 * node list in file order, or <OpType>_<i>_<k> (k = 999, 1000, ...: the
 * first free) where that is another node's name. The mock compiler names
 * unnamed nodes so, and the comparison finds them so, with no renaming pass
 * first. Two names that file names spell alike ("a.b", "a_b" and "a/b" are
 * all "a_b") get distinct file stems: the first in file order keeps the
 * plain one, the others "<stem>_<k>" (k = 1, 2, ...: the first stem no
 * node has). mapping.csv lists every file whose stem is not the node's
 * name (a '.' or '/' replaced, a stem made unique, a name shortened) with
 * that name, so a reader learns each file's node exactly and never sees one
 * node's dump twice nor one file for two nodes.
 *
 * Nodes inside the bodies of If, Loop, Scan and SequenceMap (default
 * domain; the bodies of other ops, such as a mock OM's fused ops, are not
 * dumped) are named under their owner:
 *     <owner>::<attribute>::<node>          (If: then_branch, else_branch)
 *     <owner>::<attribute>[<i>]::<node>     (Loop, Scan, SequenceMap: body,
 *                                            i the 0-based iteration)
 * where <owner> is the owner's own dump name (so nesting repeats the
 * pattern: Loop_3::body[2]::If_0::then_branch::Add_1) and <node> is the
 * node's name, or for an unnamed one <OpType>_<i> with i its position in
 * its body (unique within the body as above). A graph-list attribute
 * numbers its graphs (<attribute><k>). The table holds each body node once,
 * under its template (the name with every "[<i>]" left out), and finds an
 * instance name by its template.
 */
#ifndef SG_DUMPNAME_H
#define SG_DUMPNAME_H

#include "sg_ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_DUMP_NAME_MAX 255

/* Replace '.' and '/' by '_' (msit's rule) into buf; returns buf. An empty
 * name stays empty. Truncates to size-1 bytes. */
char *sg_dump_sanitize(const char *node_name, char *buf, size_t size);

/*
 * The reference dump file name for output `index` of `node_name` into buf
 * (at least SG_DUMP_NAME_MAX + 1 bytes). Returns true when the name had to
 * be shortened: the caller must then list (buf, node_name) in mapping.csv.
 * `input` selects the input_<node> form.
 */
bool sg_dump_onnx_name(const char *node_name, bool input, uint32_t index, uint64_t timestamp_us,
                       char *buf, size_t size);

/* A parsed reference dump file name. `node` is the sanitized (or shortened)
 * name as it appears in the file name. */
struct sg_dump_onnx {
    char node[SG_DUMP_NAME_MAX + 1];
    bool input;
    uint32_t index;
    uint64_t timestamp;
};

/* Parse "<node>.<i>.<ts>.npy" (or "input_<node>..."); false if it is not
 * one. Device dump names are rejected (they have more fields). */
bool sg_dump_parse_onnx(const char *file_name, struct sg_dump_onnx *out);

/* A parsed device dump file name. */
struct sg_dump_device {
    char op_type[128];
    char op_name[SG_DUMP_NAME_MAX + 1];
    uint64_t task, stream, timestamp;
    bool input; /* .input.<i> rather than .output.<i> */
    uint32_t index;
};

/* The device dump file name into buf (at least SG_DUMP_NAME_MAX + 1 bytes);
 * '/' in op names becomes '_'. Returns false when it does not fit. */
bool sg_dump_device_name(const char *op_type, const char *op_name, uint64_t task, uint64_t stream,
                         uint64_t timestamp, bool input, uint32_t index, char *buf, size_t size);

/* Parse a device dump file name; false if it is not one. */
bool sg_dump_parse_device(const char *file_name, struct sg_dump_device *out);

/* ------------------------------------------------------ node dump names */

/* The dump names of a model's nodes (see the top). Read-only once made. */
typedef struct sg_dump_names sg_dump_names;

/*
 * The names of the nodes of m's main graph and of the bodies above. m must outlive the table and
 * keep its nodes (a node added later has no entry; renaming one makes the
 * table stale). SG_ENOMEM; SG_EINVAL for a model without a graph.
 */
sg_status sg_dump_names_create(const sg_model *m, sg_dump_names **out, struct sg_diag *diag);

/* Free. NULL is a no-op. */
void sg_dump_names_free(sg_dump_names *t);

/* The name node n's dumps carry, or NULL when n has no entry. */
const char *sg_dump_names_of(const sg_dump_names *t, const sg_node *n);

/*
 * The file stem of n's dumps, unique among the table's nodes: ONNX form
 * ('.' and '/' as '_'), or with `device` the device form ('/' as '_').
 * *listed (may be NULL) says whether it differs from the name, so that
 * mapping.csv must give the name back. NULL when n has no entry.
 */
const char *sg_dump_names_stem(const sg_dump_names *t, const sg_node *n, bool device, bool *listed);

/* The node whose dumps carry `name` (the first in file order when names
 * repeat), or NULL. */
sg_node *sg_dump_names_node(const sg_dump_names *t, const char *name);

/* The node whose ONNX-form (or with `device`, device-form) file stem is
 * `stem`, or NULL. Both lookups take a body node's instance names (with
 * "[<i>]") as well as its template. */
sg_node *sg_dump_names_by_stem(const sg_dump_names *t, const char *stem, bool device);

/* How many iterations a body node's name holds (its enclosing Loop, Scan
 * and SequenceMap bodies); 0 for other nodes and nodes without an entry. */
uint32_t sg_dump_names_slots(const sg_dump_names *t, const sg_node *n);

/*
 * The name and file stem (ONNX form, or device form with `device`) of one
 * execution of node n: its template with iters[k] (outermost first, as many
 * as sg_dump_names_slots says) in slot k. *listed (may be NULL) as for
 * sg_dump_names_stem. False when n has no entry or a buffer is too small.
 */
bool sg_dump_names_instance(const sg_dump_names *t, const sg_node *n, const uint64_t *iters,
                            bool device, char *name, size_t name_size, char *stem, size_t stem_size,
                            bool *listed);

#endif
