/*
 * save_impl.h - the three parts of saving (internal to graph/):
 *   save_build.c  IR -> protobuf-c messages that point at the IR's data;
 *   save_emit.c   sizes and bytes of a ModelProto, framed by hand at the
 *                 top two levels so every node is sized once;
 *   save.c        where tensors go (inline / external), files, atomicity.
 */
#ifndef SG_SAVE_IMPL_H
#define SG_SAVE_IMPL_H

#include "sg_ir.h"

#include "onnx.pb-c.h"

#include <stddef.h>
#include <stdint.h>

enum sg__disposition { SG__KEEP_INLINE, SG__KEEP_EXTERNAL, SG__NEW_EXTERNAL };

/* A tensor of the model and the message built for it. */
struct sg__planned {
    sg_tensor *t;
    Onnx__TensorProto *msg;
    enum sg__disposition how;
    uint64_t offset; /* NEW_EXTERNAL: where in the new data file */
    size_t len;
};

struct sg__saver {
    sg_model *m;
    sg_arena *a; /* scratch for messages, freed after the write */
    struct sg_diag *diag;
    sg_status st;
    struct sg__planned *tensors; /* every tensor message built, in order */
    size_t n_tensors, cap_tensors;
    /* Main-graph nodes whose message is built when it is written (NULL in
     * the GraphProto's node array): those without tensor or graph
     * attributes, which is nearly all of them. Their messages are rebuilt
     * in `scratch` for sizing and again for packing, so a 100,000-node
     * model never holds 100,000 node messages at once. */
    sg_node **main_nodes; /* per main-graph node index */
    sg_arena *scratch;
};

/* The message of main-graph node i: the prebuilt one, or one built now in
 * S->scratch (valid until the next call). NULL when out of memory. */
Onnx__NodeProto *sg__save_main_node(struct sg__saver *S, Onnx__ModelProto *p, size_t i);

/* Build the ModelProto of S->m in S->a; NULL with S->st set on failure. */
Onnx__ModelProto *sg__save_build_model(struct sg__saver *S);

/* Messages for key/value lists (shared with the external-data planner). */
Onnx__StringStringEntryProto **sg__save_build_kvs(struct sg__saver *S, const sg_kv *kv, size_t n);

/* Set a tensor message's payload fields from t's in-file payloads / clear
 * every payload and external-data field. */
void sg__payload_typed(Onnx__TensorProto *p, const sg_tensor *t);
void sg__payload_clear(Onnx__TensorProto *p);

/*
 * Where bytes go: a growing memory buffer (fd < 0) or a file written
 * through a buffer, big payloads passed straight to write(2).
 */
struct sg__sink {
    int fd;
    uint8_t *buf;
    size_t used, cap;
    bool grow; /* memory sink: buf grows and holds everything */
    int err;   /* errno of the first failed write, or ENOMEM */
};

/* Sizes of the pieces of a model, computed once (sg__emit_measure). */
struct sg__emit_plan {
    size_t *node_sizes; /* main graph nodes, in order (sg_malloc'd) */
    size_t n_nodes;
    size_t head, graph_rest, graph_body, tail, total;
};

/* Measure p (whose graph node list is p->graph->node, streamed nodes built
 * through S). SG_ENOMEM when memory runs out. */
sg_status sg__emit_measure(struct sg__saver *S, Onnx__ModelProto *p, struct sg__emit_plan *plan);

/* Write p as measured into sink (sink->err set on failure). */
void sg__emit(struct sg__saver *S, Onnx__ModelProto *p, const struct sg__emit_plan *plan,
              struct sg__sink *sink);

void sg__emit_plan_free(struct sg__emit_plan *plan);

/* Append bytes to a sink; flush a file sink's buffer. */
void sg__sink_append(struct sg__sink *s, const void *data, size_t len);
void sg__sink_flush(struct sg__sink *s);

#endif
