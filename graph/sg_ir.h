/*
 * sg_ir.h - surgeon's in-memory ONNX IR.
 *
 * A model owns an arena (sg_arena.h) holding every graph, node, value,
 * attribute, type, tensor header and string; sg_model_free releases it all.
 * Large tensor payloads are not copied: they point into the arena (inline
 * data of a loaded model), into a memory-mapped external data file, or into a
 * reference-counted block (sg_blob) owned by the tensor.
 *
 * The structs are visible so that passes and kernels can read them without
 * an accessor per field, but they are READ-ONLY outside graph/: every change
 * of an edge, a name or a list goes through the functions below, which keep
 * producer and consumer lists, name maps and subgraph captures right.
 * sg_graph_verify checks that they are.
 *
 * Strings are NUL-terminated UTF-8 in the arena. A NULL string means the
 * field is absent from the file, "" that it is present and empty: both
 * round-trip as they were.
 *
 * Values and scopes. A value is a named edge of one graph. A subgraph (If,
 * Loop, Scan bodies, any graph attribute) that reads a name of an enclosing
 * graph gets a capture value (sg_value.outer points to the enclosing value)
 * and the node owning the subgraph gets an implicit use of the enclosing
 * value (sg_use.index == SG_USE_IMPLICIT). So "who reads this value" is
 * always answered by its use list, at every nesting depth.
 */
#ifndef SG_IR_H
#define SG_IR_H

#include "sg_arena.h"
#include "sg_dtype.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sg_model sg_model;
typedef struct sg_graph sg_graph;
typedef struct sg_node sg_node;
typedef struct sg_value sg_value;
typedef struct sg_tensor sg_tensor;
typedef struct sg_attr sg_attr;
typedef struct sg_type sg_type;
typedef struct sg_blob sg_blob;

/* Byte strings (attribute `s`, string tensors): not NUL-terminated. */
typedef struct sg_bytes {
    const uint8_t *data;
    size_t len;
} sg_bytes;

/* Fields a newer ONNX adds, kept verbatim so they round-trip: the encoded
 * fields (tag and payload) in file order, written back after the known
 * fields. Empty for nearly every message. */
typedef struct sg_unknown {
    const uint8_t *data;
    size_t len;
} sg_unknown;

/* key/value pairs (metadata_props, external_data, bindings), kept in order. */
typedef struct sg_kv {
    const char *key;
    const char *value;
    sg_unknown unknown;
} sg_kv;

/* ------------------------------------------------------------------ types */

enum sg_type_kind {
    SG_TYPE_NONE = 0, /* TypeProto with no value set */
    SG_TYPE_TENSOR,
    SG_TYPE_SEQUENCE,
    SG_TYPE_MAP,
    SG_TYPE_OPTIONAL,
    SG_TYPE_SPARSE_TENSOR,
    SG_TYPE_KIND_COUNT
};

enum sg_dim_kind { SG_DIM_UNSET = 0, SG_DIM_VALUE, SG_DIM_PARAM };

typedef struct sg_dim {
    enum sg_dim_kind kind;
    int64_t value;          /* SG_DIM_VALUE */
    const char *param;      /* SG_DIM_PARAM: symbolic name such as "batch" */
    const char *denotation; /* NULL when absent */
    sg_unknown unknown;
} sg_dim;

typedef struct sg_shape {
    sg_dim *dims;
    uint32_t rank;
    sg_unknown unknown;
} sg_shape;

struct sg_type {
    enum sg_type_kind kind;
    const char *denotation;
    /* TENSOR and SPARSE_TENSOR */
    bool has_elem_type;
    int32_t elem_type;
    sg_shape *shape; /* NULL: rank unknown */
    /* SEQUENCE, OPTIONAL: elem; MAP: key_type and elem (the value type) */
    sg_type *elem;
    bool has_key_type;
    int32_t key_type;
    sg_unknown unknown, inner_unknown;
};

/* ---------------------------------------------------------------- tensors */

#define SG_MAX_RANK 64

/* The TensorProto fields most tensors do not have, out of line so that
 * the hundreds of thousands of small initializers of a big model do not
 * each carry them (sg_tensor.extra is NULL when all are absent). Typed
 * payloads: a file's choice of field survives a round trip; more than one
 * set, or one set beside raw data, only in malformed files. */
typedef struct sg_tensor_extra {
    const char *doc;
    bool has_segment, has_seg_begin, has_seg_end;
    int64_t seg_begin, seg_end;
    sg_unknown seg_unknown;

    const float *float_data;
    size_t n_float;
    const int32_t *int32_data;
    size_t n_int32;
    const int64_t *int64_data;
    size_t n_int64;
    const double *double_data;
    size_t n_double;
    const uint64_t *uint64_data;
    size_t n_uint64;
    const sg_bytes *string_data;
    size_t n_string;

    /* External data: entries as read (location, offset, length, checksum,
     * and any other key), and the mapped bytes once resolved. */
    bool has_data_location;
    int32_t data_location; /* 0 DEFAULT, 1 EXTERNAL */
    sg_kv *external;
    size_t n_external;
    const uint8_t *ext_data; /* into ext_blob's mapping, NULL if unresolved */
    size_t ext_len;
    sg_blob *ext_blob; /* borrowed: the model keeps its mappings until freed */

    sg_unknown unknown; /* fields of TensorProto this version does not know */
} sg_tensor_extra;

/* A tensor: header, raw payload, and the rest in `extra`. Use
 * sg_tensor_data() for the values. */
struct sg_tensor {
    const char *name;
    int64_t *dims;
    uint32_t rank;
    int32_t dtype;
    bool has_dtype;
    bool has_raw;       /* raw_data given (possibly empty) */
    bool listed;        /* in the model's list of tensors holding a blob */
    uint32_t save_plan; /* scratch of the saver: index + 1 of its placement */
    const uint8_t *raw;
    size_t raw_len;
    sg_blob *owner;         /* holds `raw` when it is not in the arena (one reference) */
    void *native;           /* cached native-layout copy made by sg_tensor_data */
    sg_tensor_extra *extra; /* NULL: none of its fields is set */
};

/* t's extra fields, all absent (zero) when it has none: never NULL. */
extern const sg_tensor_extra sg__tensor_no_extra;
static inline const sg_tensor_extra *sg_tensor_get_extra(const sg_tensor *t)
{
    return t->extra ? t->extra : &sg__tensor_no_extra;
}

/* t's extra fields for writing, made (zeroed, in m's arena) on first use;
 * NULL when out of memory. */
sg_tensor_extra *sg_tensor_make_extra(sg_model *m, sg_tensor *t);

/* Reference-counted memory: a malloc'd block or a read-only file mapping. */
struct sg_blob {
    int refs;
    bool mapped;
    void *data;
    size_t size;
    char *path; /* for mappings: the file, as given (relative to the model folder) */
    char *real; /* for mappings: its resolved absolute path */
};

/* A malloc'd blob of `size` bytes (uninitialised) with one reference. */
sg_blob *sg_blob_create(size_t size);
void sg_blob_ref(sg_blob *blob);
/* Drop a reference; frees or unmaps at zero. NULL is a no-op. */
void sg_blob_unref(sg_blob *blob);

/* Number of elements (product of dims, 1 for rank 0); -1 on a negative dim
 * or overflow. */
int64_t sg_tensor_numel(const sg_tensor *t);

/* Byte size of the payload as stored (raw_data or external data): numel *
 * element size, the 4-bit types packed two per byte (sg_dtype_storage_bytes);
 * 0 for strings. */
size_t sg_tensor_nbytes(const sg_tensor *t);

/* True when the payload lives in an external data file. */
bool sg_tensor_is_external(const sg_tensor *t);

/*
 * The tensor's values in native little-endian layout: float32 as floats,
 * float16/bfloat16 as uint16 bits, bool and float8 as one byte each,
 * complex as pairs, the 4-bit types unpacked to one byte each (sg_dtype.h;
 * *nbytes is then numel, not the packed size).
 * Returns raw or external bytes in place when they are already native and
 * suitably aligned, otherwise converts once into the arena (cached).
 * Fills *nbytes. NULL on failure with the reason in `diag` (size disagrees
 * with dims, string tensor, unresolved external data, out of memory).
 * The memory stays valid until the payload changes or the model is freed.
 */
const void *sg_tensor_data(sg_model *m, sg_tensor *t, size_t *nbytes, struct sg_diag *diag);

/*
 * Replace the payload of t (a tensor of model m) with `nbytes` of native
 * data held by `owner` (a reference is taken and the previous owner's is
 * dropped; NULL means `data` lives in the model arena).
 * Clears typed fields and external entries: the tensor is inline raw data
 * from now on. dtype and dims are not changed. For a 4-bit dtype, `data`
 * holds one element per byte (nbytes must be numel, else SG_ESHAPE) and is
 * packed into a copy in the arena (owner is not kept).
 */
sg_status sg_tensor_set_raw(sg_model *m, sg_tensor *t, const void *data, size_t nbytes,
                            sg_blob *owner);

/* A new detached tensor in the model arena with a copy of `dims`; no data. */
sg_tensor *sg_tensor_create(sg_model *m, const char *name, int32_t dtype, const int64_t *dims,
                            uint32_t rank);

/* Call fn on every tensor of the model: initializers, sparse initializers
 * and attribute tensors of every graph, subgraph, function and training
 * graph, in file order. Stops at the first non-OK status and returns it. */
typedef sg_status (*sg_tensor_fn)(sg_tensor *t, void *ctx);
sg_status sg_model_for_each_tensor(sg_model *m, sg_tensor_fn fn, void *ctx);

/* -------------------------------------------------------------- attributes */

enum sg_attr_type {
    SG_ATTR_UNDEFINED = 0,
    SG_ATTR_FLOAT = 1,
    SG_ATTR_INT = 2,
    SG_ATTR_STRING = 3,
    SG_ATTR_TENSOR = 4,
    SG_ATTR_GRAPH = 5,
    SG_ATTR_FLOATS = 6,
    SG_ATTR_INTS = 7,
    SG_ATTR_STRINGS = 8,
    SG_ATTR_TENSORS = 9,
    SG_ATTR_GRAPHS = 10,
    SG_ATTR_SPARSE_TENSOR = 11,
    SG_ATTR_SPARSE_TENSORS = 12,
    SG_ATTR_TYPE_PROTO = 13,
    SG_ATTR_TYPE_PROTOS = 14,
    SG_ATTR_TYPE_COUNT
};

typedef struct sg_sparse {
    sg_tensor *values;  /* NULL when absent */
    sg_tensor *indices; /* NULL when absent */
    int64_t *dims;
    uint32_t rank;
    sg_unknown unknown;
} sg_sparse;

/* All AttributeProto fields, each with its presence, so any attribute
 * round-trips; `type` says which one is meant. */
struct sg_attr {
    const char *name;
    const char *ref_attr_name;
    const char *doc;
    bool has_type;
    enum sg_attr_type type;
    bool has_f, has_i, has_s;
    float f;
    int64_t i;
    sg_bytes s;
    sg_tensor *t;
    sg_graph *g;
    sg_sparse *sparse;
    sg_type *tp;
    float *floats;
    size_t n_floats;
    int64_t *ints;
    size_t n_ints;
    sg_bytes *strings;
    size_t n_strings;
    sg_tensor **tensors;
    size_t n_tensors;
    sg_graph **graphs;
    size_t n_graphs;
    sg_sparse **sparses;
    size_t n_sparses;
    sg_type **tps;
    size_t n_tps;
    sg_unknown unknown;
};

/* ------------------------------------------------------------------ nodes */

#define SG_USE_IMPLICIT (-1)

/* One reading of a value: input slot `index` of `node`, or an implicit use
 * (index SG_USE_IMPLICIT) by a subgraph of `node`. Use lists are unordered:
 * removing a use moves the last one into its place (O(1), found through the
 * node's use_pos). */
typedef struct sg_use {
    sg_node *node;
    int32_t index;
} sg_use;

/* The fields few nodes or values have (a doc string, the fields of a
 * newer ONNX kept for the round trip), out of line: `more` is NULL when
 * both are absent. */
typedef struct sg_more {
    const char *doc;
    sg_unknown unknown;
} sg_more;

static inline const char *sg_more_doc(const sg_more *m)
{
    return m ? m->doc : NULL;
}

static inline sg_unknown sg_more_unknown(const sg_more *m)
{
    return m ? m->unknown : (sg_unknown){NULL, 0};
}

struct sg_node {
    const char *name; /* NULL: absent; names may repeat in a loaded file */
    const char *op_type;
    const char *domain; /* NULL: absent (the default domain) */
    sg_more *more;
    sg_graph *graph;
    sg_value **inputs; /* NULL entry: omitted optional input ("") */
    uint32_t *use_pos; /* for each input slot: its entry in inputs[i]->uses */
    uint32_t n_inputs, cap_inputs;
    sg_value **outputs; /* NULL entry: omitted optional output ("") */
    uint32_t n_outputs, cap_outputs;
    sg_attr **attrs;
    uint32_t n_attrs, cap_attrs;
    sg_node *prev, *next; /* the graph's node list (file order) */
    uint32_t mark;        /* scratch for algorithms: toposort, passes; below 2^31 (the
                           * verifier numbers nodes from there up) */
    bool dead;            /* removed: no longer in any list */
};

/* ----------------------------------------------------------------- values */

enum sg_value_flags {
    SG_VALUE_INPUT = 1u << 0,      /* listed in graph inputs */
    SG_VALUE_OUTPUT = 1u << 1,     /* listed in graph outputs */
    SG_VALUE_INFO = 1u << 2,       /* listed in value_info */
    SG_VALUE_INITIALIZER = 1u << 3 /* has an initializer (init != NULL) */
};

struct sg_value {
    const char *name;
    sg_graph *graph;
    uint32_t flags;
    uint32_t mark;          /* scratch (in the first cache line with the fields verify reads) */
    sg_type *type;          /* NULL: unknown (no input/output/value_info entry) */
    sg_node *producer;      /* NULL for inputs, initializers and captures */
    sg_tensor *init;        /* initializer, or NULL */
    sg_sparse *sparse_init; /* sparse initializer, or NULL */
    sg_value *outer;        /* capture of an enclosing graph's value, or NULL */
    sg_use *uses;
    sg_more *more; /* of its input/output/value_info entry */
    uint32_t producer_index;
    uint32_t n_uses, cap_uses;
};

/* ----------------------------------------------------------------- graphs */

enum sg_graph_kind {
    SG_GRAPH_MAIN,     /* ModelProto.graph */
    SG_GRAPH_SUB,      /* a graph attribute of a node */
    SG_GRAPH_FUNCTION, /* body of a model-local function */
    SG_GRAPH_TRAINING  /* TrainingInfoProto initialization/algorithm */
};

typedef struct sg_annotation {
    const char *tensor_name;
    sg_kv *params;
    size_t n_params;
    sg_unknown unknown;
} sg_annotation;

struct sg_graph {
    sg_model *model;
    enum sg_graph_kind kind;
    sg_graph *parent; /* enclosing graph for SUB, else NULL */
    sg_node *owner;   /* node holding this graph for SUB, else NULL */
    const char *name;
    const char *doc;
    sg_node *first, *last; /* node list in file order */
    uint32_t n_nodes;
    sg_value **inputs, **outputs, **value_info;
    uint32_t n_inputs, n_outputs, n_value_info;
    uint32_t cap_inputs, cap_outputs, cap_value_info;
    sg_value **inits; /* values with initializers, in file order */
    uint32_t n_inits, cap_inits;
    sg_sparse **sparse_inits;
    uint32_t n_sparse_inits;
    sg_annotation *annotations;
    uint32_t n_annotations;
    void *values_map;     /* name -> sg_value (internal) */
    void *nodes_map;      /* node name -> first sg_node with it (internal) */
    bool nodes_map_built; /* nodes_map exists (built on the first lookup) */
    bool has_subgraphs;   /* some node has (or had) a graph attribute */
    bool maybe_unsorted;  /* loaded with a forward reference: order unproven */
    bool dup_node_names;  /* some node names repeat (a lookup may need a scan) */
    sg_unknown unknown;
};

/* ------------------------------------------------------------------ model */

typedef struct sg_opset {
    const char *domain; /* NULL: absent; "" and "ai.onnx" are the default */
    bool has_version;
    int64_t version;
    sg_unknown unknown;
} sg_opset;

typedef struct sg_function {
    const char *name;
    const char *domain;
    const char *doc;
    const char **attributes;
    size_t n_attributes;
    sg_opset *opsets;
    size_t n_opsets;
    sg_graph *body; /* inputs/outputs are its formal parameters */
    sg_unknown unknown;
} sg_function;

typedef struct sg_training {
    sg_graph *initialization; /* NULL when absent */
    sg_graph *algorithm;
    sg_kv *init_binding;
    size_t n_init_binding;
    sg_kv *update_binding;
    size_t n_update_binding;
    sg_unknown unknown;
} sg_training;

struct sg_model {
    sg_arena *arena;
    bool has_ir_version, has_model_version;
    int64_t ir_version, model_version;
    sg_opset *opsets;
    size_t n_opsets;
    const char *producer_name, *producer_version, *domain, *doc;
    sg_graph *graph; /* NULL only when the file has no graph */
    sg_kv *metadata;
    size_t n_metadata;
    sg_training *training;
    size_t n_training;
    sg_function *functions;
    size_t n_functions;
    sg_unknown unknown;

    /* Where the model came from (for external data); NULL when built in memory. */
    char *path;
    char *dir;
    sg_blob *source;    /* the loaded file's bytes: tensor payloads point into it */
    sg_blob **mappings; /* external data files mapped so far */
    size_t n_mappings;
    bool has_external; /* some tensor was loaded with external data */
    sg_tensor **owned; /* tensors holding a blob reference, released at free */
    size_t n_owned, cap_owned;
    void *names; /* every value and node name in the model, built on demand (internal) */
    bool names_built;
    uint64_t fresh; /* counter for fresh names */
    /* Models whose strings, tensors and mappings this one shares (concat
     * takes the second model in): freed with it. */
    struct sg_model **kept;
    size_t n_kept;
    /* The verifier numbers nodes from here up (node->mark), so a number of
     * the current walk is told from any older mark without clearing them
     * (internal, see verify.c). */
    uint32_t mark_base;
};

/* ------------------------------------------------------------ model API */

/* An empty model with an empty main graph; NULL when out of memory. */
sg_model *sg_model_create(void);

/* Free the model, its arena and its references to external data.
 * NULL is a no-op. */
void sg_model_free(sg_model *m);

/* Opset version of `domain` ("" or NULL for the default domain; "ai.onnx" is
 * the same), or 0 when the model does not import it. */
int64_t sg_model_opset(const sg_model *m, const char *domain);

/* Set (add or replace) the opset of a domain. */
sg_status sg_model_set_opset(sg_model *m, const char *domain, int64_t version);

/* Add or replace a metadata_props entry. */
sg_status sg_model_set_metadata(sg_model *m, const char *key, const char *value);

/* The metadata value for key, or NULL. */
const char *sg_model_metadata(const sg_model *m, const char *key);

/* Copy a string into the model arena (NULL stays NULL). Returns NULL only on
 * a non-NULL input when out of memory. */
const char *sg_model_strdup(sg_model *m, const char *s);

/* ------------------------------------------------------------ graph API */

/* The value named `name` in graph g itself (not enclosing graphs), or NULL. */
sg_value *sg_graph_value(const sg_graph *g, const char *name);

/* The value a node of g sees under `name`: g's own, else a capture created
 * on demand from an enclosing graph (NULL if no scope defines it, or when
 * out of memory with the reason in `diag`). */
sg_value *sg_graph_resolve(sg_graph *g, const char *name, struct sg_diag *diag);

/* The first node of g named `name`, or NULL. */
sg_node *sg_graph_node(const sg_graph *g, const char *name);

/* The first node named `name` in the main graph or any subgraph, or NULL. */
sg_node *sg_model_find_node(const sg_model *m, const char *name);

/*
 * A name not used by any value or node anywhere in the model, built from
 * `base` ("Exp_3_clip", then "Exp_3_clip_1", ...). The returned string lives
 * in the arena and is reserved: later calls will not return it again.
 */
const char *sg_model_fresh_name(sg_model *m, const char *base);

/* A hint for passes that create many nodes or values: start loading what a
 * fresh node name (`node`) or value name made from base + suffix will be
 * checked against, a few creations before it is made. In a big graph each
 * check is a cache miss; started early, they overlap. Changes nothing. */
void sg_model_prefetch_fresh(const sg_model *m, const char *base, const char *suffix, bool node);

/* A new value named `name` in g (must not exist yet in g: SG_EDUP). `name`
 * is copied. `type` may be NULL; it is used, not copied. */
sg_status sg_graph_add_value(sg_graph *g, const char *name, sg_type *type, sg_value **out,
                             struct sg_diag *diag);

/* sg_graph_add_value with a fresh name built from `base`: unused by any
 * value of the model (it may equal a node name, as ONNX allows); cheaper
 * than sg_model_fresh_name and sg_graph_add_value when adding many. */
sg_status sg_graph_add_value_fresh(sg_graph *g, const char *base, sg_type *type, sg_value **out,
                                   struct sg_diag *diag);

/* Make an existing value of g a graph input / output (appended), or drop it
 * from the list (all its entries). */
sg_status sg_graph_add_input(sg_graph *g, sg_value *v);
sg_status sg_graph_add_output(sg_graph *g, sg_value *v);
sg_status sg_graph_remove_input(sg_graph *g, sg_value *v);
sg_status sg_graph_remove_output(sg_graph *g, sg_value *v);
/* Replace graph output slot i with value v (keeps position). */
sg_status sg_graph_set_output(sg_graph *g, uint32_t i, sg_value *v);
/* List v in value_info (no-op if listed) or remove it from value_info. */
sg_status sg_graph_add_value_info(sg_graph *g, sg_value *v);
void sg_graph_remove_value_info(sg_graph *g, sg_value *v);

/*
 * Take values vals[0..n) of g off the lists named by `lists`, a mask of
 * SG_VALUE_INPUT, SG_VALUE_INFO and SG_VALUE_INITIALIZER (which also
 * detaches the initializer), walking each list once: removing k values
 * costs O(k + list lengths) where k calls of sg_graph_remove_input,
 * sg_graph_remove_value_info or sg_value_set_initializer(v, NULL) cost
 * k list walks. NULL entries, values of other graphs and values not on a
 * list are skipped. Cannot fail. For passes that remove many constants.
 */
void sg_graph_unlist_values(sg_graph *g, sg_value *const *vals, size_t n, uint32_t lists);

/* Attach tensor t (its name is set to v's) as the initializer of v, or
 * detach it (t == NULL). */
sg_status sg_value_set_initializer(sg_value *v, sg_tensor *t);

/* The constant tensor v holds (v, or the outer value a body reads): its
 * initializer unless v is also a graph input (which a caller may feed),
 * or the `value` of the default-domain Constant node that makes it; NULL
 * otherwise. Borrowed from the model. */
sg_tensor *sg_value_constant(const sg_value *v);

/* Delete a value that nothing produces, reads, lists or captures. */
sg_status sg_value_remove(sg_value *v);

/* sg_value_remove on each of the *count values of vals (repeats allowed),
 * all of graph g and none produced, read, captured or listed as a graph
 * input or output; value_info and initializer entries go too. The lists
 * and the name index are each updated in one sweep (one sg_value_remove
 * per value costs a cache miss per value in the index). On SG_OK the
 * first *count entries of vals are the values removed, each once, in
 * first-seen order. On SG_EINUSE (one does not qualify) or SG_ENOMEM
 * nothing is removed, though vals may be reordered. */
sg_status sg_graph_remove_values(sg_graph *g, sg_value **vals, size_t *count);

/* Rename a value; the new name must be free in the model (SG_EDUP).
 * Captures in subgraphs are renamed with it. */
sg_status sg_value_rename(sg_value *v, const char *name, struct sg_diag *diag);

/* Rename v to a fresh name built from `base` (sg_model_fresh_name), with its
 * captures. For making shadowed or repeated names unique. */
sg_status sg_value_rename_fresh(sg_value *v, const char *base, struct sg_diag *diag);

/* Set the type of v (used, not copied; NULL: unknown). Types may be shared
 * between values, so change a type by setting a new one, never in place. */
void sg_value_set_type(sg_value *v, sg_type *type);

/*
 * Element type of v when known: its declared tensor type, else its
 * initializer's dtype, else (for a capture) that of the value it captures.
 * 0 (SG_DTYPE_UNDEFINED) when unknown or not a tensor.
 */
int32_t sg_value_dtype(const sg_value *v);

/* Call fn for every value of g: its own and its captures, in hash order
 * (deterministic for a given model and history, not file order). fn must
 * not add or remove values of g. Stops at the first non-OK status. */
typedef sg_status (*sg_value_fn)(sg_value *v, void *ctx);
sg_status sg_graph_for_each_value(sg_graph *g, sg_value_fn fn, void *ctx);

/* ------------------------------------------------------------- node API */

/*
 * A new node in g, appended to the node list, with no inputs or outputs.
 * `name` is used as given (copy) when non-NULL; pass sg_model_fresh_name()
 * for a unique one. `domain` NULL is the default domain.
 */
sg_node *sg_node_create(sg_graph *g, const char *op_type, const char *domain, const char *name,
                        struct sg_diag *diag);

/* sg_node_create with a fresh name built from `base`: unused by any node
 * of the model (it may equal a value name, as ONNX allows); cheaper than
 * sg_model_fresh_name and sg_node_create when inserting many nodes. */
sg_node *sg_node_create_fresh(sg_graph *g, const char *op_type, const char *domain,
                              const char *base, struct sg_diag *diag);

/* Move node n right before / after `ref` in the node list (same graph). */
void sg_node_move_before(sg_node *n, sg_node *ref);
void sg_node_move_after(sg_node *n, sg_node *ref);

/* Set input slot i (i <= n_inputs: i == n_inputs appends) to v, which may be
 * NULL for an omitted input. v must belong to n's graph. */
sg_status sg_node_set_input(sg_node *n, uint32_t i, sg_value *v);

/* Remove input slot i, shifting later inputs down. */
sg_status sg_node_remove_input(sg_node *n, uint32_t i);

/* Set output slot i (i <= n_outputs) to v, which must have no producer
 * (SG_EDUP otherwise); NULL leaves the slot as an omitted output. */
sg_status sg_node_set_output(sg_node *n, uint32_t i, sg_value *v);

/*
 * Remove a node: its input uses are dropped and its output values deleted.
 * The outputs must no longer be read, listed as graph outputs or captured
 * (SG_EINUSE). Subgraphs of the node are detached (their captures released).
 */
sg_status sg_node_remove(sg_node *n, struct sg_diag *diag);

/*
 * Insert `n` (a node of the same graph with exactly one output slot free)
 * after output `idx` of `after`: the output value keeps its name, consumers,
 * graph-output listing and type, but is now produced by n; `after` gets a
 * fresh value (named from the old one) that becomes n's input 0. n is moved
 * behind `after` in the node list.
 */
sg_status sg_node_insert_after_output(sg_node *after, uint32_t idx, sg_node *n,
                                      struct sg_diag *diag);

/*
 * Insert `n` before input `idx` of `before`: n reads the old value as input
 * 0 and produces a fresh value that `before` now reads in slot idx. n is
 * moved right before `before`.
 */
sg_status sg_node_insert_before_input(sg_node *before, uint32_t idx, sg_node *n,
                                      struct sg_diag *diag);

/*
 * Make every reader of `old` read `new_` instead: node inputs, implicit uses
 * (captures in subgraphs are re-pointed), and, when `outputs_too`, graph
 * output slots. Both values must belong to the same graph.
 */
sg_status sg_value_replace_uses(sg_value *old, sg_value *new_, bool outputs_too,
                                struct sg_diag *diag);

/*
 * Rename node n. The new name (copied) must not name another node of n's
 * graph (SG_EDUP); it is reserved model-wide so fresh names avoid it. An
 * empty or NULL name is SG_EINVAL. Node names of other graphs are not
 * checked: ONNX does not require node names to be unique.
 */
sg_status sg_node_rename(sg_node *n, const char *name, struct sg_diag *diag);

/* Attributes. sg_node_attr returns the attribute named `name` or NULL.
 * sg_node_set_attr_* add or replace. */
sg_attr *sg_node_attr(const sg_node *n, const char *name);
sg_status sg_node_set_attr_int(sg_node *n, const char *name, int64_t v);
sg_status sg_node_set_attr_float(sg_node *n, const char *name, float v);
sg_status sg_node_set_attr_string(sg_node *n, const char *name, const char *v);
sg_status sg_node_set_attr_ints(sg_node *n, const char *name, const int64_t *v, size_t count);
sg_status sg_node_set_attr_floats(sg_node *n, const char *name, const float *v, size_t count);
/* Each string is copied (into a byte string without its NUL). */
sg_status sg_node_set_attr_strings(sg_node *n, const char *name, const char *const *v,
                                   size_t count);
/* Takes the tensor (which must live in the model's arena). */
sg_status sg_node_set_attr_tensor(sg_node *n, const char *name, sg_tensor *t);
/* Add or replace graph attribute `name` with a new empty subgraph of n
 * (enclosing graph n->graph) and return it; NULL when out of memory. */
sg_graph *sg_node_set_attr_graph(sg_node *n, const char *name);
void sg_node_remove_attr(sg_node *n, const char *name);
/* Typed getters with a default for absent or mistyped attributes. */
int64_t sg_attr_int(const sg_node *n, const char *name, int64_t dflt);
float sg_attr_float(const sg_node *n, const char *name, float dflt);
/* Returns NULL-terminated copy-free view: data/len of `s`, or dflt if absent. */
sg_bytes sg_attr_bytes(const sg_node *n, const char *name, sg_bytes dflt);

/* Number of nodes of a graph including those of all its subgraphs. */
size_t sg_graph_count_nodes(const sg_graph *g, bool recursive);

/* Calls fn for each graph-valued attribute of n (g and graphs). */
typedef sg_status (*sg_subgraph_fn)(sg_graph *sub, void *ctx);
sg_status sg_node_for_each_subgraph(sg_node *n, sg_subgraph_fn fn, void *ctx);

/* --------------------------------------------------------- types API */

/* A tensor type of elem_type with `rank` dims (dims NULL: all unset; a
 * negative entry means unknown, written as an unset dim); rank < 0 means
 * unknown rank. */
sg_type *sg_type_tensor(sg_model *m, int32_t elem_type, const int64_t *dims, int rank);

/* Deep copy into the model's arena. NULL in, NULL out. */
sg_type *sg_type_clone(sg_model *m, const sg_type *t);

/* A copy of tensor type t with element type elem_type (shape kept; NULL t
 * gives a rank-unknown tensor type). NULL when out of memory. */
sg_type *sg_type_with_elem(sg_model *m, const sg_type *t, int32_t elem_type);

/* Format a type as "float32[1,3,'batch',?]" into buf; returns buf. */
char *sg_type_format(const sg_type *t, char *buf, size_t size);

/* -------------------------------------------------- order and checking */

/*
 * Topological order of g's nodes: fills `order` (n_nodes entries, caller's
 * array) so that every node follows the producers of its inputs and of the
 * values its subgraphs capture. Stable: a graph already in order keeps its
 * file order, and otherwise ties keep file order. SG_ECYCLE names a node on
 * the cycle in `diag`.
 */
sg_status sg_graph_toposort(sg_graph *g, sg_node **order, struct sg_diag *diag);

/* Reorder g's node list (and, when recursive, each subgraph's) into
 * topological order. */
sg_status sg_graph_sort(sg_graph *g, bool recursive, struct sg_diag *diag);

/*
 * Check every invariant of the IR for g and its subgraphs: producer and use
 * lists agree with node inputs/outputs, one producer per value, every read
 * value is defined (producer, graph input, initializer or enclosing graph),
 * graph outputs are defined, no cycle, known ops have a legal number of
 * inputs and outputs for the model's opset, and names are unique in scope.
 * Returns the first violation with the node/value named in `diag`.
 */
sg_status sg_graph_verify(sg_graph *g, struct sg_diag *diag);

/*
 * Element-type inference: give every value of g (and, when recursive, of its
 * subgraphs) that has no type a rank-unknown tensor type whose element type
 * follows from its producer (Cast's `to`, comparison ops give bool, Shape
 * gives int64, most ops the type of their first input, If/Loop/Scan the
 * types of their body outputs...). Existing types are never changed and the
 * values are not listed in value_info, so the saved file does not change;
 * passes call it to know dtypes that the file left implicit. Values of
 * unknown-domain ops stay untyped. The inferred types are shared between
 * values of one dtype: give a value a new type, never edit one in place.
 * SG_ECYCLE or SG_ENOMEM on failure.
 */
sg_status sg_graph_infer_dtypes(sg_graph *g, bool recursive, struct sg_diag *diag);

/*
 * The element type of output `out` of n by the rules of
 * sg_graph_infer_dtypes, given the element types of n's inputs in
 * in_dtypes[0..n->n_inputs) (0: unknown) instead of the IR's, and typing
 * nothing: for a caller that tracks types on its own without changing the
 * model (the runtime's planner). 0 when the rules cannot tell; Cast's
 * `to` as given, even a code sg_dtype does not know.
 */
int32_t sg_node_output_dtype(const sg_node *n, uint32_t out, const int32_t *in_dtypes);

/*
 * The same inference on demand, for a pass that needs the types of some
 * values only: sg_dtype_resolve gives v's element type (0 when it cannot be
 * known), typing v and the values it depends on as sg_graph_infer_dtypes
 * would and no others. In a model with subgraphs the first call types the
 * whole model instead (captures make the dependencies wide). The resolver
 * holds no memory; it is valid while the model lives. SG_ENOMEM or
 * SG_ECYCLE (from the whole-model inference) on failure.
 */
/* Internal to infer.c: op type -> its rules, by the op_type pointer. */
#define SG__OP_MEMO 8
struct sg__op_memo {
    const char *op;
    const struct rule *rule;
};

typedef struct sg_dtype_resolver {
    sg_model *m;
    uint32_t pushed, expanded, done; /* value->mark states (stamps) */
    bool whole;                      /* the model had subgraphs and is typed whole */
    sg_type *shared[SG_DTYPE_COUNT];
    struct sg__op_memo memo[SG__OP_MEMO];
} sg_dtype_resolver;

void sg_dtype_resolver_init(sg_dtype_resolver *r, sg_model *m);
sg_status sg_dtype_resolve(sg_dtype_resolver *r, sg_value *v, int32_t *dtype, struct sg_diag *diag);

/* Verify the main graph, function bodies and training graphs. */
sg_status sg_model_verify(sg_model *m, struct sg_diag *diag);

#endif
