/*
 * ir_impl.h - functions shared by the files of graph/ (not installed).
 */
#ifndef SG_IR_IMPL_H
#define SG_IR_IMPL_H

#include "sg_ir.h"
#include "strmap.h"

/* A new graph in m's arena with empty maps. */
sg_graph *sg__graph_create(sg_model *m, enum sg_graph_kind kind, sg_graph *parent, sg_node *owner);

/* Release the maps of g and of every graph nested in it (arena memory stays). */
void sg__graph_release(sg_graph *g);

/* Build the model-wide name set if it does not exist yet (see ir_model.c),
 * and with `nodes` the main graph's node-name map. */
sg_status sg__names_ensure(sg_model *m, bool nodes);

/* Record `name`, just given to a value or node of g, as used in the model
 * (for fresh names); whether a name is used anywhere in the model. */
sg_status sg__name_reserve(sg_graph *g, const char *name);
bool sg__name_used(const sg_model *m, const char *name);

/* sg_model_fresh_name; with hold false the name is not reserved, for a
 * caller that gives it right away to a value or node of the main graph
 * (whose maps then hold it). A name for a value only needs to differ from
 * value names, one for a node from node names (ONNX keeps the two apart);
 * ANY avoids both. */
enum sg__name_kind { SG__NAME_ANY, SG__NAME_VALUE, SG__NAME_NODE };
const char *sg__fresh_name(sg_model *m, const char *base, bool hold, enum sg__name_kind kind);
/* The same, also giving the name's sg__strhash (callers that insert it). */
const char *sg__fresh_name_h(sg_model *m, const char *base, bool hold, enum sg__name_kind kind,
                             uint64_t *hash);

/* Build g's node-name map if it does not exist yet. */
sg_status sg__nodes_map_ensure(sg_graph *g);

/* Use-list edits: add appends (node, index); drop removes one matching entry
 * and, when a capture value ends up unused, removes the capture too. */
sg_status sg__value_add_use(sg_value *v, sg_node *n, int32_t index);
void sg__value_drop_use(sg_value *v, sg_node *n, int32_t index);

/* Create a value in g without checking the model-wide name set (loader);
 * _h with the name's sg__strhash already computed. */
sg_value *sg__value_new(sg_graph *g, const char *name);
sg_value *sg__value_new_h(sg_graph *g, const char *name, uint64_t h);

/* Append n to g's node list (n->next becomes NULL). */
void sg__node_link_last(sg_graph *g, sg_node *n);

/* Register node n under its name in g's node map; _h with the name's
 * sg__strhash known. */
sg_status sg__node_map_add(sg_graph *g, sg_node *n);
sg_status sg__node_map_add_h(sg_graph *g, sg_node *n, uint64_t h);

/* Append to an arena array of pointers with capacity doubling. */
sg_status sg__ptr_push(sg_arena *a, void ***arr, uint32_t *n, uint32_t *cap, void *item);

/* Release the implicit uses held by the captures of subgraph `sub` / of
 * every subgraph of n (the captures are detached, their map entries stay). */
void sg__graph_release_captures(sg_graph *sub);
void sg__node_release_captures(sg_node *n);

/* The number of inputs and outputs of n against its schema, looked up for
 * its op type at `opset` (verify.c; NULL schema: not checked). */
struct sg_op_schema;
sg_status sg__node_check_arity_schema(const sg_node *n, const struct sg_op_schema *s, int64_t opset,
                                      struct sg_diag *diag);

/* What loading must still check after building the lists: acyclicity of g
 * and its subgraphs, where file order does not prove it (see verify.c). */
sg_status sg__graph_check_loaded(sg_graph *g, struct sg_diag *diag);

/* A number no value->mark holds from an earlier use of this counter
 * (values are zeroed when created, and 0 is never handed out): the
 * verifier and the dtype resolver mark the values they have seen with it.
 * Stamps lie in [2^24, 2^31): never one of the small flag sets other
 * algorithms leave in marks (sg_model_extract's), never the verifier's node
 * numbers (2^31 up). */
uint32_t sg__next_stamp(void);

/* t's payload as it is stored (sg_tensor_nbytes bytes): sg_tensor_data
 * but for the 4-bit types, which stay (or are put back) packed two per
 * byte. NULL on failure, as sg_tensor_data. */
const void *sg__tensor_stored(sg_model *m, sg_tensor *t, size_t *nbytes, struct sg_diag *diag);

/* Map an opset domain spelling to the canonical one ("" for ai.onnx). */
const char *sg__canon_domain(const char *domain);

#endif
