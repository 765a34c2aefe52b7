/*
 * save_emit.c - the bytes of a ModelProto, sized once.
 *
 * protobuf-c computes a submessage's size again at every level it packs, and
 * its streaming packer calls the output once per field. For a model with
 * 100,000 nodes that is most of the save. So the two outer levels are framed
 * here by hand: the ModelProto fields before `graph` (1-6), then `graph`
 * (field 7) whose body is every NodeProto (field 1, each sized once and
 * packed straight into the output buffer) followed by the rest of the
 * GraphProto, then the ModelProto fields after `graph` (8 and up, and its
 * unknown fields). Protobuf-c packs each piece; field order, and therefore
 * the bytes, are the same as packing the whole model at once.
 */
#include "save_impl.h"
#include "sg_arena.h"
#include "sg_alloc.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define TAG_LEN(field) ((uint8_t)(((field) << 3) | 2))
#define MODEL_GRAPH_FIELD 7
#define GRAPH_NODE_FIELD 1

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* ------------------------------------------------------------------- sink */

static void sink_write(struct sg__sink *s, const uint8_t *p, size_t len)
{
    while (len && !s->err) {
        ssize_t n = write(s->fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            s->err = errno;
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

void sg__sink_flush(struct sg__sink *s)
{
    if (!s->grow && s->used) {
        sink_write(s, s->buf, s->used);
        s->used = 0;
    }
}

/* Make room for `len` more bytes in the buffer; false when it cannot. */
static bool sink_reserve(struct sg__sink *s, size_t len)
{
    if (s->err)
        return false;
    if (s->cap - s->used >= len)
        return true;
    if (!s->grow) {
        sg__sink_flush(s);
        return !s->err && s->cap >= len;
    }
    size_t cap = s->cap ? s->cap : 4096;
    while (cap - s->used < len) {
        if (cap > SIZE_MAX / 2) {
            s->err = ENOMEM;
            return false;
        }
        cap *= 2;
    }
    uint8_t *grown = sg_realloc(s->buf, cap);
    if (!grown) {
        s->err = ENOMEM;
        return false;
    }
    s->buf = grown;
    s->cap = cap;
    return true;
}

void sg__sink_append(struct sg__sink *s, const void *data, size_t len)
{
    if (!len || s->err)
        return; /* empty bytes fields may come with a NULL pointer */
    if (!s->grow && len >= s->cap / 4) {
        /* Big payloads go straight from their mapping to the file. */
        sg__sink_flush(s);
        sink_write(s, data, len);
        return;
    }
    if (sink_reserve(s, len)) {
        memcpy(s->buf + s->used, data, len);
        s->used += len;
    }
}

struct sink_adapter {
    ProtobufCBuffer base;
    struct sg__sink *sink;
};

static void adapter_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    sg__sink_append(((struct sink_adapter *)b)->sink, data, len);
}

/* Pack a message of known size: in place when it fits the buffer, else
 * streamed (large initializers). */
static void pack_msg(struct sg__sink *s, const ProtobufCMessage *msg, size_t size)
{
    if (size == 0 || s->err)
        return;
    if ((s->grow || size <= s->cap / 2) && sink_reserve(s, size)) {
        protobuf_c_message_pack(msg, s->buf + s->used);
        s->used += size;
        return;
    }
    struct sink_adapter a = {{adapter_append}, s};
    protobuf_c_message_pack_to_buffer(msg, &a.base);
}

static void put_len_prefix(struct sg__sink *s, uint8_t tag, size_t len)
{
    uint8_t hdr[16];
    hdr[0] = tag;
    size_t n = 1 + varint_put(hdr + 1, len);
    sg__sink_append(s, hdr, n);
}

/* ---------------------------------------------------------------- pieces */

/* The ModelProto fields before `graph`. */
static Onnx__ModelProto model_head(const Onnx__ModelProto *p)
{
    Onnx__ModelProto h = *p;
    h.base.n_unknown_fields = 0;
    h.base.unknown_fields = NULL;
    h.graph = NULL;
    h.n_opset_import = 0;
    h.n_metadata_props = 0;
    h.n_training_info = 0;
    h.n_functions = 0;
    return h;
}

/* The ModelProto fields after `graph`, and its unknown fields. */
static Onnx__ModelProto model_tail(const Onnx__ModelProto *p)
{
    Onnx__ModelProto t = ONNX__MODEL_PROTO__INIT;
    t.base = p->base;
    t.n_opset_import = p->n_opset_import, t.opset_import = p->opset_import;
    t.n_metadata_props = p->n_metadata_props, t.metadata_props = p->metadata_props;
    t.n_training_info = p->n_training_info, t.training_info = p->training_info;
    t.n_functions = p->n_functions, t.functions = p->functions;
    return t;
}

/* The GraphProto without its nodes (which come first, as field 1). */
static Onnx__GraphProto graph_rest(const Onnx__GraphProto *g)
{
    Onnx__GraphProto r = *g;
    r.n_node = 0;
    r.node = NULL;
    return r;
}

sg_status sg__emit_measure(struct sg__saver *S, Onnx__ModelProto *p, struct sg__emit_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (!p->graph) {
        plan->total = protobuf_c_message_get_packed_size(&p->base);
        return SG_OK;
    }
    Onnx__ModelProto head = model_head(p), tail = model_tail(p);
    Onnx__GraphProto rest = graph_rest(p->graph);
    plan->head = protobuf_c_message_get_packed_size(&head.base);
    plan->tail = protobuf_c_message_get_packed_size(&tail.base);
    plan->graph_rest = protobuf_c_message_get_packed_size(&rest.base);
    plan->n_nodes = p->graph->n_node;
    plan->node_sizes = sg_malloc((plan->n_nodes + 1) * sizeof *plan->node_sizes);
    if (!plan->node_sizes)
        return SG_ENOMEM;
    size_t body = plan->graph_rest;
    for (size_t i = 0; i < plan->n_nodes; i++) {
        Onnx__NodeProto *node = sg__save_main_node(S, p, i);
        if (!node)
            return SG_ENOMEM;
        size_t n = protobuf_c_message_get_packed_size(&node->base);
        plan->node_sizes[i] = n;
        body += 1 + varint_size(n) + n;
    }
    plan->graph_body = body;
    plan->total = plan->head + 1 + varint_size(body) + body + plan->tail;
    return SG_OK;
}

void sg__emit(struct sg__saver *S, Onnx__ModelProto *p, const struct sg__emit_plan *plan,
              struct sg__sink *sink)
{
    if (!p->graph) {
        pack_msg(sink, &p->base, plan->total);
        return;
    }
    Onnx__ModelProto head = model_head(p), tail = model_tail(p);
    Onnx__GraphProto rest = graph_rest(p->graph);
    pack_msg(sink, &head.base, plan->head);
    put_len_prefix(sink, TAG_LEN(MODEL_GRAPH_FIELD), plan->graph_body);
    for (size_t i = 0; i < plan->n_nodes && !sink->err; i++) {
        Onnx__NodeProto *node = sg__save_main_node(S, p, i);
        if (!node) {
            sink->err = ENOMEM;
            return;
        }
        put_len_prefix(sink, TAG_LEN(GRAPH_NODE_FIELD), plan->node_sizes[i]);
        pack_msg(sink, &node->base, plan->node_sizes[i]);
    }
    pack_msg(sink, &rest.base, plan->graph_rest);
    pack_msg(sink, &tail.base, plan->tail);
}

void sg__emit_plan_free(struct sg__emit_plan *plan)
{
    sg_free(plan->node_sizes);
    plan->node_sizes = NULL;
}
