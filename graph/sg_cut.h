/*
 * sg_cut.h - cutting models apart and putting them together: extract a
 * region between tensors (or between nodes), split a model in two halves
 * whose run in sequence is the whole run, and concatenate two models.
 *
 * These are graph operations on the IR alone: nothing here runs a model.
 * Extraction and splitting rewrite the model they are given in place (the
 * caller loads it, cuts it, saves it): only what the region uses is left,
 * so saving writes (or references, for external data) only the weights the
 * region needs. Every operation costs O(nodes + edges) of the model.
 *
 * Types. A tensor the cut exposes (a new graph input or output) keeps the
 * type the model declares for it. Where the model declares none, the
 * caller's type provider (struct sg_cut_typer: a golden run's tensors, or
 * shape inference once surgeon has it) is asked, and failing that the
 * element type is inferred (sg_dtype_resolve) with an unknown rank. A
 * tensor whose element type cannot be known is an error naming it.
 */
#ifndef SG_CUT_H
#define SG_CUT_H

#include "sg_ir.h"

#include <stdbool.h>
#include <stddef.h>

/* Gives exposed value v (of model m) a type: set *type to a type in m's
 * arena, or leave it NULL when the provider does not know v. A status
 * other than SG_OK stops the cut and is returned. */
struct sg_cut_typer {
    sg_status (*type_of)(void *ctx, sg_model *m, const sg_value *v, sg_type **type,
                         struct sg_diag *diag);
    void *ctx;
};

/* A type the user gives for a tensor (`name:dtype:d0,d1` on the command
 * line): it wins over the model's and the provider's. */
struct sg_cut_decl {
    const char *name;
    sg_type *type; /* in the model's arena */
};

struct sg_extract_spec {
    /* Either tensor names ... */
    const char *const *inputs;
    size_t n_inputs;
    const char *const *outputs;
    size_t n_outputs;
    /* ... or node names (msit's form): the start nodes' non-constant inputs
     * become the inputs, the end nodes' outputs the outputs. Both forms may
     * be combined; the lists are merged. */
    const char *const *start_nodes;
    size_t n_start_nodes;
    const char *const *end_nodes;
    size_t n_end_nodes;
    const struct sg_cut_decl *decls;
    size_t n_decls;
    struct sg_cut_typer typer; /* type_of NULL: none */
    /* Drop listed inputs no kept node reads (split does; by default a
     * listed input stays, as the user asked for it). */
    bool prune_inputs;
};

/* What the cut did, for the caller to print. Strings are malloc'd; free
 * the report with sg_extract_report_free. */
struct sg_extract_report {
    size_t n_kept, n_removed; /* main-graph nodes */
    size_t n_inits;           /* initializers kept */
    /* An unclosed cut (SG_EUNDEF): every tensor that is needed and is
     * neither an input of the cut nor computable from constants, each as
     * "NAME (read by node 'N')". */
    char **missing;
    size_t n_missing;
    /* Outer-scope names that a kept If/Loop/Scan body reads and that lie
     * outside the cut: they became inputs of the sub-model. */
    char **implicit_inputs;
    size_t n_implicit_inputs;
    /* The result's inputs and outputs, in order (sg_extract_file only:
     * after sg_model_extract the model itself says). */
    char **input_names, **output_names;
    size_t n_input_names, n_output_names;
};

void sg_extract_report_free(struct sg_extract_report *r);

/*
 * Cut m down to the region between spec's inputs and outputs, in place.
 * The result holds exactly the main-graph nodes needed to compute the
 * outputs from the inputs (with their subgraphs), the initializers and
 * Constant nodes they read, the value_info of values that remain, the
 * model-local functions they call (and those these call), the opset
 * imports they use (the default domain always), and the model's metadata;
 * training information is dropped. A kept node's subgraph that reads an
 * outer-scope name pulls that name in: its producers when the cut can
 * compute it, else it becomes an input (listed in rep->implicit_inputs).
 *
 * Errors, with m left unchanged (diag says what, rep lists what is
 * missing): SG_ENOTFOUND (an unknown tensor or node name; close names
 * are suggested), SG_EINVAL (a name inside a subgraph, a start node that
 * no end node depends on, an empty cut, nothing asked), SG_EUNDEF (the cut
 * is not closed: rep->missing), SG_ETYPE (an exposed tensor whose type
 * cannot be known), SG_ECYCLE, SG_ENOMEM. rep may be NULL.
 */
sg_status sg_model_extract(sg_model *m, const struct sg_extract_spec *spec,
                           struct sg_extract_report *rep, struct sg_diag *diag);

/* A type given for a tensor by element type and dims, before any model is
 * loaded (sg_cut_decl's type lives in a model's arena). rank -1: unknown;
 * a dim below 0: unknown. */
struct sg_cut_dims_decl {
    const char *name;
    int32_t dtype;
    int rank;
    const int64_t *dims;
};

/*
 * Extract from the file `model` into the file `out` without loading the
 * model: the kept messages are copied byte for byte from a read-only
 * mapping whose pages are given back as they are passed, and the index
 * costs some 30 bytes a tensor name and 4 an edge, so memory stays well
 * under the file's size. The result is the model sg_model_extract would
 * write for the same cut (spec's decls and typer must be empty: give
 * types in `decls`).
 *
 * For what it does not cover (subgraphs, model-local functions, training
 * information, sparse or external tensors, a tensor with two entries that
 * the result keeps, and any defect the loader or
 * sg_model_extract would report) it returns SG_EUNSUPPORTED with the
 * reason in diag and nothing written: load the model and run
 * sg_model_extract, whose messages are the reference. Other statuses are
 * the writer's (the output guard's SG_EEXISTS, SG_EIO). rep (may be NULL)
 * gets the counts and input_names/output_names.
 */
sg_status sg_extract_file(const char *model, const char *out, const struct sg_extract_spec *spec,
                          const struct sg_cut_dims_decl *decls, size_t n_decls,
                          struct sg_extract_report *rep, struct sg_diag *diag);

/* ------------------------------------------------------------------ split */

enum sg_split_kind {
    SG_SPLIT_AT_NODE, /* the front ends with node `at` (in topological order) */
    SG_SPLIT_INDEX,   /* the front is the first `index` nodes in topological order */
    SG_SPLIT_TENSORS  /* the front computes `tensors` (and what they need) */
};

struct sg_split_spec {
    enum sg_split_kind kind;
    const char *at;
    size_t index;
    const char *const *tensors;
    size_t n_tensors;
    struct sg_cut_typer typer;
};

/* The tensors that cross a split (malloc'd names; sg_split_report_free). */
struct sg_split_report {
    size_t n_front, n_back; /* main-graph nodes on each side */
    char **crossing;        /* back's inputs that the front computes */
    size_t n_crossing;
};

void sg_split_report_free(struct sg_split_report *r);

/*
 * Split a model in two: `front` and `back` are two loaded copies of the
 * same model (sg_model_clone), rewritten in place. front's outputs are
 * every tensor the back half reads from it (values computable from
 * constants alone are recomputed in the back instead) plus the model's
 * outputs it computes; back's inputs are the same tensors, with their
 * types, plus the model's inputs it reads; back's outputs are the model's
 * outputs it computes. Running front, then back on front's outputs, gives
 * the model's outputs. A node or tensor inside a subgraph is refused
 * (SG_EINVAL), as is a split that leaves one side empty (SG_ERANGE).
 * Other statuses as sg_model_extract.
 */
sg_status sg_model_split(sg_model *front, sg_model *back, const struct sg_split_spec *spec,
                         struct sg_split_report *rep, struct sg_diag *diag);

/* A copy of m (through its encoding; external data stays referenced, so
 * the copy sees the same files). */
sg_status sg_model_clone(sg_model *m, sg_model **out, struct sg_diag *diag);

/* Main-graph nodes of m in topological order (sg_malloc'd, *n entries; the
 * caller frees with sg_free). */
sg_status sg_model_topo_nodes(sg_model *m, sg_node ***order, size_t *n, struct sg_diag *diag);

/* Names of the main graph's values closest to `name` (edit distance),
 * best first, for "did you mean" messages: writes up to `max` of them,
 * comma-separated, into buf. */
void sg_graph_close_names(const sg_graph *g, const char *name, bool nodes, char *buf, size_t size);

/* ------------------------------------------------------- single-op cases */

struct sg_array;

/* Golden tensors by value name: get fills *out (the caller frees it with
 * sg_array_free) or returns SG_ENOTFOUND with the name in diag. */
struct sg_case_source {
    sg_status (*get)(void *ctx, const char *name, struct sg_array *out, struct sg_diag *diag);
    void *ctx;
};

/*
 * Cut m down, in place, to the model of one main-graph node `node`: the
 * node with its subgraphs, every input that is an initializer or computed
 * from constants alone (a Constant node's output) as an initializer, every
 * other input and every outer value its subgraphs read as a graph input,
 * its outputs as the graph outputs. Types and shapes of the exposed
 * tensors come from `src` (the golden tensors), so the case is fully
 * shaped. Statuses of sg_model_extract and src->get.
 */
sg_status sg_case_make(sg_model *m, const char *node, const struct sg_case_source *src,
                       struct sg_diag *diag);

/*
 * Write the ONNX backend-test folder of a case model m into `dir` (which
 * must exist and be empty): model.onnx (per opts, NULL: defaults) and
 * test_data_set_0/input_K.pb / output_K.pb, the graph inputs that have no
 * initializer and the graph outputs in graph order, each TensorProto named
 * after its value, with the data from src.
 */
struct sg_save_opts;
sg_status sg_case_write(sg_model *m, const char *dir, const struct sg_case_source *src,
                        const struct sg_save_opts *opts, struct sg_diag *diag);

/* The tensors of a dump folder written by `surgeon run --dump all` (its
 * manifest.json: node outputs and the run's inputs) as a case source.
 * SG_EIO / SG_EPARSE naming the folder when there is no readable manifest. */
typedef struct sg_dump_source sg_dump_source;
sg_status sg_dump_source_open(const char *dir, sg_dump_source **out, struct sg_diag *diag);
struct sg_case_source sg_dump_source_get(sg_dump_source *ds);
void sg_dump_source_free(sg_dump_source *ds);

/* A name made safe as a file name: '/', '\', ':' and control characters
 * become '_', "." and ".." are prefixed, long names shortened with a hash.
 * Into buf (at least 129 bytes); returns buf. */
char *sg_case_dir_name(const char *node, char *buf, size_t size);

/* ------------------------------------------------------------- concat */

struct sg_concat_spec {
    /* Pairs (output of the first model, input of the second that reads
     * it): io_map[2k], io_map[2k + 1], k < n_io_map; original names. */
    const char *const *io_map;
    size_t n_io_map;
    const char *prefix_a, *prefix_b; /* NULL: names kept */
};

struct sg_concat_report {
    char **collisions; /* "tensor 'x'", "node 'n'": names both models define */
    size_t n_collisions;
};

void sg_concat_report_free(struct sg_concat_report *r);

/*
 * Append b's graph to a's, as onnx.compose.merge_models does: the result's
 * inputs are a's, then b's not in the io map; its outputs a's not in the
 * io map, then b's; b's mapped inputs read a's outputs (in subgraphs too).
 * IR versions must be equal, opset imports of a domain the same version
 * (SG_EINVAL naming both), metadata values agree; imports, metadata and
 * functions are merged. Names of b that a also defines are collisions
 * (SG_EDUP, every one in rep) unless prefixes make them differ: prefix_a
 * renames a's main-graph tensors and nodes, prefix_b b's. On success a
 * owns b (freed with a; b must not be used or freed by the caller); on
 * failure b is the caller's; a is unchanged after a failed check, and must
 * only be freed after a later failure (SG_ENOMEM, SG_EUNSUPPORTED for
 * sparse initializers of b, or the verifier's). b's external tensors are copied when a is saved,
 * never referenced from a's folder.
 */
sg_status sg_model_concat(sg_model *a, sg_model *b, const struct sg_concat_spec *spec,
                          struct sg_concat_report *rep, struct sg_diag *diag);

#endif
