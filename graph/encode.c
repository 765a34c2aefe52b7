/*
 * encode.c - IR -> ONNX bytes, in two passes over the IR.
 *
 * Every message is written by one function that runs twice: first to size
 * it (each message's size is recorded, in visiting order), then to write
 * it (the recorded sizes give the length prefixes). So nothing is sized
 * twice and no message structs are built. Fields go out in field-number
 * order and unknown fields last, as protobuf-c and python write them, so an
 * unchanged model comes out byte for byte as it came in.
 *
 * Where a tensor's payload goes (inline, its original external file, a new
 * external file) is decided by save.c and read here through a plan
 * (struct sg__tensor_plan, found through sg_tensor.save_plan).
 */
#include "encode_impl.h"
#include "load_impl.h"
#include "sg_alloc.h"
#include "wire.h"

#include <errno.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct enc {
    bool write;
    /* sizes of messages in visiting order */
    size_t *sizes;
    size_t n_sizes, cap_sizes, cursor;
    bool nomem;
    struct sg__sink *sink;
    struct sg__tensor_plan *const *plans;
    sg__place_fn place;
    void *place_ctx;
    const char *data_file; /* location written for new external tensors */
};

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

/* ------------------------------------------------------------ primitives */

static inline void out(struct enc *E, const void *p, size_t n)
{
    if (!E->write || n == 0) /* empty payloads may come with a NULL pointer */
        return;
    struct sg__sink *s = E->sink;
    if (n <= s->cap - s->used) { /* the common case: room in the buffer */
        memcpy(s->buf + s->used, p, n);
        s->used += n;
    } else {
        sg__sink_append(s, p, n);
    }
}

static size_t put_tag(struct enc *E, uint32_t field, int type)
{
    uint8_t b[10];
    uint8_t *end = varint_put(b, ((uint64_t)field << 3) | (uint64_t)type);
    out(E, b, (size_t)(end - b));
    return (size_t)(end - b);
}

static size_t put_varint_raw(struct enc *E, uint64_t v)
{
    uint8_t b[10];
    uint8_t *end = varint_put(b, v);
    out(E, b, (size_t)(end - b));
    return (size_t)(end - b);
}

static size_t put_varint(struct enc *E, uint32_t field, uint64_t v)
{
    return put_tag(E, field, WT_VARINT) + put_varint_raw(E, v);
}

/* int32/enum fields: negative values go out sign-extended to 64 bits. */
static size_t put_int32(struct enc *E, uint32_t field, int32_t v)
{
    return put_varint(E, field, (uint64_t)(int64_t)v);
}

static size_t put_len_bytes(struct enc *E, uint32_t field, const void *p, size_t n)
{
    size_t k = put_tag(E, field, WT_LEN) + put_varint_raw(E, n);
    out(E, p, n);
    return k + n;
}

static size_t put_string(struct enc *E, uint32_t field, const char *s)
{
    if (!s)
        return 0;
    if (!E->write) { /* sizing: nothing to write, nothing to format */
        size_t n = strlen(s);
        return varint_size((uint64_t)field << 3) + varint_size(n) + n;
    }
    /* Writing a short string with room in the buffer: the bytes are copied
     * as they are counted and the one-byte length put in front after
     * (strlen, then memcpy, of every name was a third of saving a graph of
     * small nodes). Longer strings fall through; the copy is overwritten. */
    struct sg__sink *k = E->sink;
    if (field < 16 && k->cap - k->used >= 2 + 127) {
        uint8_t *d = k->buf + k->used;
        size_t n = 0;
        while (n < 127 && s[n]) {
            d[2 + n] = (uint8_t)s[n];
            n++;
        }
        if (!s[n]) {
            d[0] = (uint8_t)(field << 3 | WT_LEN);
            d[1] = (uint8_t)n;
            k->used += 2 + n;
            return 2 + n;
        }
    }
    return put_len_bytes(E, field, s, strlen(s));
}

static size_t put_unknown(struct enc *E, sg_unknown u)
{
    out(E, u.data, u.len);
    return u.len;
}

/* Message size bookkeeping: begin() takes the message's slot in visiting
 * order; end() records the size in the sizing pass. */
static size_t begin(struct enc *E)
{
    if (E->write)
        return E->cursor++;
    if (E->n_sizes == E->cap_sizes) {
        size_t cap = E->cap_sizes ? E->cap_sizes * 2 : 1024;
        size_t *grown = sg_grow(E->sizes, E->cap_sizes * sizeof *grown, cap * sizeof *grown);
        if (!grown) {
            E->nomem = true;
            return 0;
        }
        E->sizes = grown;
        E->cap_sizes = cap;
    }
    E->sizes[E->n_sizes] = 0;
    return E->n_sizes++;
}

static size_t end(struct enc *E, size_t slot, size_t size)
{
    if (!E->write && !E->nomem)
        E->sizes[slot] = size;
    return size;
}

/* The size of the message about to be written (its slot is next). */
static size_t next_size(const struct enc *E)
{
    return E->cursor < E->n_sizes ? E->sizes[E->cursor] : 0;
}

/* A sub-message field: tag, length, then the message itself (written by
 * fn, which also records or consumes the message's size slot). */
typedef size_t (*enc_fn)(struct enc *E, const void *obj);

static size_t put_msg(struct enc *E, uint32_t field, enc_fn fn, const void *obj)
{
    if (E->write) {
        size_t n = put_tag(E, field, WT_LEN);
        n += put_varint_raw(E, next_size(E));
        return n + fn(E, obj);
    }
    size_t inner = fn(E, obj);
    return varint_size((uint64_t)field << 3) + varint_size(inner) + inner;
}

#define PUT_MSG(E, field, fn, obj) put_msg((E), (field), fn, (obj))

/* ------------------------------------------------------- small messages */

static size_t enc_kv(struct enc *E, const void *obj)
{
    const sg_kv *kv = obj;
    size_t slot = begin(E), n = 0;
    n += put_string(E, 1, kv->key);
    n += put_string(E, 2, kv->value);
    n += put_unknown(E, kv->unknown);
    return end(E, slot, n);
}

static size_t put_kvs(struct enc *E, uint32_t field, const sg_kv *kv, size_t count)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        n += PUT_MSG(E, field, enc_kv, &kv[i]);
    return n;
}

static size_t enc_opset(struct enc *E, const void *obj)
{
    const sg_opset *o = obj;
    size_t slot = begin(E), n = 0;
    n += put_string(E, 1, o->domain);
    if (o->has_version)
        n += put_varint(E, 2, (uint64_t)o->version);
    n += put_unknown(E, o->unknown);
    return end(E, slot, n);
}

/* ------------------------------------------------------------------ types */

static size_t enc_type(struct enc *E, const void *obj);

static size_t enc_dim(struct enc *E, const void *obj)
{
    const sg_dim *d = obj;
    size_t slot = begin(E), n = 0;
    if (d->kind == SG_DIM_VALUE)
        n += put_varint(E, 1, (uint64_t)d->value);
    else if (d->kind == SG_DIM_PARAM)
        n += put_string(E, 2, d->param);
    n += put_string(E, 3, d->denotation);
    n += put_unknown(E, d->unknown);
    return end(E, slot, n);
}

static size_t enc_shape(struct enc *E, const void *obj)
{
    const sg_shape *s = obj;
    size_t slot = begin(E), n = 0;
    for (uint32_t i = 0; i < s->rank; i++)
        n += PUT_MSG(E, 1, enc_dim, &s->dims[i]);
    n += put_unknown(E, s->unknown);
    return end(E, slot, n);
}

/* TypeProto.Tensor / SparseTensor / Sequence / Optional / Map. */
static size_t enc_type_inner(struct enc *E, const void *obj)
{
    const sg_type *t = obj;
    size_t slot = begin(E), n = 0;
    switch (t->kind) {
    case SG_TYPE_TENSOR:
    case SG_TYPE_SPARSE_TENSOR:
        if (t->has_elem_type)
            n += put_int32(E, 1, t->elem_type);
        if (t->shape)
            n += PUT_MSG(E, 2, enc_shape, t->shape);
        break;
    case SG_TYPE_SEQUENCE:
    case SG_TYPE_OPTIONAL:
        if (t->elem)
            n += PUT_MSG(E, 1, enc_type, t->elem);
        break;
    case SG_TYPE_MAP:
        if (t->has_key_type)
            n += put_int32(E, 1, t->key_type);
        if (t->elem)
            n += PUT_MSG(E, 2, enc_type, t->elem);
        break;
    default:
        break;
    }
    n += put_unknown(E, t->inner_unknown);
    return end(E, slot, n);
}

static size_t enc_type(struct enc *E, const void *obj)
{
    const sg_type *t = obj;
    static const uint32_t field_of[SG_TYPE_KIND_COUNT] = {
        [SG_TYPE_TENSOR] = 1,        [SG_TYPE_SEQUENCE] = 4, [SG_TYPE_MAP] = 5,
        [SG_TYPE_SPARSE_TENSOR] = 8, [SG_TYPE_OPTIONAL] = 9,
    };
    size_t slot = begin(E), n = 0;
    uint32_t field = t->kind < SG_TYPE_KIND_COUNT ? field_of[t->kind] : 0;
    /* Fields in number order: the value may come before or after the
     * denotation (6). */
    if (field && field < 6)
        n += PUT_MSG(E, field, enc_type_inner, t);
    n += put_string(E, 6, t->denotation);
    if (field > 6)
        n += PUT_MSG(E, field, enc_type_inner, t);
    n += put_unknown(E, t->unknown);
    return end(E, slot, n);
}

/* ---------------------------------------------------------------- tensors */

static size_t put_packed_fixed(struct enc *E, uint32_t field, const void *p, size_t count,
                               size_t width)
{
    return count ? put_len_bytes(E, field, p, count * width) : 0;
}

static size_t put_packed_varints(struct enc *E, uint32_t field, const void *p, size_t count,
                                 bool is_int32)
{
    if (!count)
        return 0;
    size_t body = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t v =
            is_int32 ? (uint64_t)(int64_t)((const int32_t *)p)[i] : ((const uint64_t *)p)[i];
        body += varint_size(v);
    }
    size_t n = put_tag(E, field, WT_LEN) + put_varint_raw(E, body);
    if (E->write)
        for (size_t i = 0; i < count; i++)
            put_varint_raw(E, is_int32 ? (uint64_t)(int64_t)((const int32_t *)p)[i]
                                       : ((const uint64_t *)p)[i]);
    return n + body;
}

static size_t enc_segment(struct enc *E, const void *obj)
{
    const sg_tensor_extra *x = obj;
    size_t slot = begin(E), n = 0;
    if (x->has_seg_begin)
        n += put_varint(E, 1, (uint64_t)x->seg_begin);
    if (x->has_seg_end)
        n += put_varint(E, 2, (uint64_t)x->seg_end);
    n += put_unknown(E, x->seg_unknown);
    return end(E, slot, n);
}

static size_t enc_tensor(struct enc *E, const void *obj)
{
    sg_tensor *t = (sg_tensor *)obj;
    const sg_tensor_extra *x = sg_tensor_get_extra(t);
    if (!t->save_plan && E->place && !E->write && E->place(E->place_ctx, t) != SG_OK)
        E->nomem = true;
    const struct sg__tensor_plan *plan = t->save_plan ? &(*E->plans)[t->save_plan - 1] : NULL;
    enum sg__disposition how = plan ? plan->how : SG__KEEP_STORED;
    /* Payload fields are written as stored, unless the plan moves them. */
    bool stored = how == SG__KEEP_STORED || (how == SG__KEEP_INLINE && !sg_tensor_is_external(t));
    size_t slot = begin(E), n = 0;
    for (uint32_t i = 0; i < t->rank; i++)
        n += put_varint(E, 1, (uint64_t)t->dims[i]);
    if (t->has_dtype)
        n += put_int32(E, 2, t->dtype);
    if (x->has_segment)
        n += PUT_MSG(E, 3, enc_segment, x);
    if (stored) {
        n += put_packed_fixed(E, 4, x->float_data, x->n_float, 4);
        n += put_packed_varints(E, 5, x->int32_data, x->n_int32, true);
    }
    for (size_t i = 0; i < x->n_string; i++)
        n += put_len_bytes(E, 6, x->string_data[i].data, x->string_data[i].len);
    if (stored)
        n += put_packed_varints(E, 7, x->int64_data, x->n_int64, false);
    n += put_string(E, 8, t->name);
    if (stored && t->has_raw)
        n += put_len_bytes(E, 9, t->raw, t->raw_len);
    else if (how == SG__KEEP_INLINE && sg_tensor_is_external(t))
        n += put_len_bytes(E, 9, x->ext_data, x->ext_len); /* brought inline */
    if (stored) {
        n += put_packed_fixed(E, 10, x->double_data, x->n_double, 8);
        n += put_packed_varints(E, 11, x->uint64_data, x->n_uint64, false);
    }
    n += put_string(E, 12, x->doc);
    if (how == SG__NEW_EXTERNAL) {
        char off[24], len[24];
        snprintf(off, sizeof off, "%" PRIu64, plan->offset);
        snprintf(len, sizeof len, "%zu", plan->len);
        sg_kv kv[3] = {{"location", E->data_file, {0}}, {"offset", off, {0}}, {"length", len, {0}}};
        n += put_kvs(E, 13, kv, 3);
        n += put_int32(E, 14, 1);
    } else if (how != SG__KEEP_INLINE || !sg_tensor_is_external(t)) {
        n += put_kvs(E, 13, x->external, x->n_external);
        if (x->has_data_location)
            n += put_int32(E, 14, x->data_location);
    }
    n += put_unknown(E, x->unknown);
    return end(E, slot, n);
}

static size_t enc_sparse(struct enc *E, const void *obj)
{
    const sg_sparse *s = obj;
    size_t slot = begin(E), n = 0;
    if (s->values)
        n += PUT_MSG(E, 1, enc_tensor, s->values);
    if (s->indices)
        n += PUT_MSG(E, 2, enc_tensor, s->indices);
    for (uint32_t i = 0; i < s->rank; i++)
        n += put_varint(E, 3, (uint64_t)s->dims[i]);
    n += put_unknown(E, s->unknown);
    return end(E, slot, n);
}

/* ------------------------------------------------------- nodes and graphs */

static size_t enc_graph(struct enc *E, const void *obj);

static size_t enc_attr(struct enc *E, const void *obj)
{
    const sg_attr *a = obj;
    size_t slot = begin(E), n = 0;
    n += put_string(E, 1, a->name);
    if (a->has_f) {
        uint32_t bits;
        memcpy(&bits, &a->f, 4);
        n += put_tag(E, 2, WT_I32);
        out(E, &bits, 4);
        n += 4;
    }
    if (a->has_i)
        n += put_varint(E, 3, (uint64_t)a->i);
    if (a->has_s)
        n += put_len_bytes(E, 4, a->s.data, a->s.len);
    if (a->t)
        n += PUT_MSG(E, 5, enc_tensor, a->t);
    if (a->g)
        n += PUT_MSG(E, 6, enc_graph, a->g);
    for (size_t i = 0; i < a->n_floats; i++) {
        uint32_t bits;
        memcpy(&bits, &a->floats[i], 4);
        n += put_tag(E, 7, WT_I32);
        out(E, &bits, 4);
        n += 4;
    }
    for (size_t i = 0; i < a->n_ints; i++)
        n += put_varint(E, 8, (uint64_t)a->ints[i]);
    for (size_t i = 0; i < a->n_strings; i++)
        n += put_len_bytes(E, 9, a->strings[i].data, a->strings[i].len);
    for (size_t i = 0; i < a->n_tensors; i++)
        n += PUT_MSG(E, 10, enc_tensor, a->tensors[i]);
    for (size_t i = 0; i < a->n_graphs; i++)
        n += PUT_MSG(E, 11, enc_graph, a->graphs[i]);
    n += put_string(E, 13, a->doc);
    if (a->tp)
        n += PUT_MSG(E, 14, enc_type, a->tp);
    for (size_t i = 0; i < a->n_tps; i++)
        n += PUT_MSG(E, 15, enc_type, a->tps[i]);
    if (a->has_type)
        n += put_int32(E, 20, (int32_t)a->type);
    n += put_string(E, 21, a->ref_attr_name);
    if (a->sparse)
        n += PUT_MSG(E, 22, enc_sparse, a->sparse);
    for (size_t i = 0; i < a->n_sparses; i++)
        n += PUT_MSG(E, 23, enc_sparse, a->sparses[i]);
    n += put_unknown(E, a->unknown);
    return end(E, slot, n);
}

static size_t put_names(struct enc *E, uint32_t field, sg_value *const *vals, uint32_t count)
{
    size_t n = 0;
    for (uint32_t i = 0; i < count; i++)
        n += vals[i] ? put_string(E, field, vals[i]->name) : put_len_bytes(E, field, "", 0);
    return n;
}

static size_t enc_node(struct enc *E, const void *obj)
{
    const sg_node *nd = obj;
    size_t slot = begin(E), n = 0;
    n += put_names(E, 1, nd->inputs, nd->n_inputs);
    n += put_names(E, 2, nd->outputs, nd->n_outputs);
    n += put_string(E, 3, nd->name);
    n += put_string(E, 4, nd->op_type);
    for (uint32_t i = 0; i < nd->n_attrs; i++)
        n += PUT_MSG(E, 5, enc_attr, nd->attrs[i]);
    n += put_string(E, 6, sg_more_doc(nd->more));
    n += put_string(E, 7, nd->domain);
    n += put_unknown(E, sg_more_unknown(nd->more));
    return end(E, slot, n);
}

static size_t enc_value_info(struct enc *E, const void *obj)
{
    const sg_value *v = obj;
    size_t slot = begin(E), n = 0;
    n += put_string(E, 1, v->name);
    if (v->type)
        n += PUT_MSG(E, 2, enc_type, v->type);
    n += put_string(E, 3, sg_more_doc(v->more));
    n += put_unknown(E, sg_more_unknown(v->more));
    return end(E, slot, n);
}

static size_t enc_annotation(struct enc *E, const void *obj)
{
    const sg_annotation *an = obj;
    size_t slot = begin(E), n = 0;
    n += put_string(E, 1, an->tensor_name);
    n += put_kvs(E, 2, an->params, an->n_params);
    n += put_unknown(E, an->unknown);
    return end(E, slot, n);
}

/* Prefetch distances, in nodes or initializers, of the two stages below. */
#define AHEAD_FAR 8
#define AHEAD_NEAR 3

/* Start loading what encoding node n will read from far away: the values
 * it reads (far stage), then their names (near stage, once the values are
 * in). Those are often initializers, decoded before all nodes: in a big
 * graph a cache miss each, that started a few nodes early overlap. Its
 * outputs were made beside it and need no help. */
static void prefetch_inputs(const sg_node *n, bool near)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i])
            __builtin_prefetch(near ? (const void *)n->inputs[i]->name : n->inputs[i]);
}

static size_t enc_graph(struct enc *E, const void *obj)
{
    const sg_graph *g = obj;
    size_t slot = begin(E), n = 0;
    /* Worth it when many inputs are initializers (decoded apart from the
     * nodes); a chain of nodes reading each other's outputs reads values
     * made beside each node, and would pay for nothing. */
    bool scout = g->n_inits >= g->n_nodes / 4;
    const sg_node *far = scout ? g->first : NULL, *near = far;
    for (int i = 0; far && i < AHEAD_FAR; i++)
        far = far->next;
    for (int i = 0; near && i < AHEAD_NEAR; i++)
        near = near->next;
    for (const sg_node *nd = g->first; nd; nd = nd->next) {
        if (far) {
            prefetch_inputs(far, false);
            far = far->next;
        }
        if (near) {
            prefetch_inputs(near, true);
            near = near->next;
        }
        n += PUT_MSG(E, 1, enc_node, nd);
    }
    n += put_string(E, 2, g->name);
    for (uint32_t i = 0; i < g->n_inits; i++) {
        if (i + AHEAD_FAR < g->n_inits)
            __builtin_prefetch(g->inits[i + AHEAD_FAR]->init);
        if (i + AHEAD_NEAR < g->n_inits) {
            const sg_tensor *t = g->inits[i + AHEAD_NEAR]->init;
            __builtin_prefetch(t->name);
            __builtin_prefetch(t->dims);
        }
        n += PUT_MSG(E, 5, enc_tensor, g->inits[i]->init);
    }
    n += put_string(E, 10, g->doc);
    for (uint32_t i = 0; i < g->n_inputs; i++)
        n += PUT_MSG(E, 11, enc_value_info, g->inputs[i]);
    for (uint32_t i = 0; i < g->n_outputs; i++)
        n += PUT_MSG(E, 12, enc_value_info, g->outputs[i]);
    for (uint32_t i = 0; i < g->n_value_info; i++)
        n += PUT_MSG(E, 13, enc_value_info, g->value_info[i]);
    for (uint32_t i = 0; i < g->n_annotations; i++)
        n += PUT_MSG(E, 14, enc_annotation, &g->annotations[i]);
    for (uint32_t i = 0; i < g->n_sparse_inits; i++)
        n += PUT_MSG(E, 15, enc_sparse, g->sparse_inits[i]);
    n += put_unknown(E, g->unknown);
    return end(E, slot, n);
}

static size_t enc_function(struct enc *E, const void *obj)
{
    const sg_function *f = obj;
    size_t slot = begin(E), n = 0;
    const sg_graph *b = f->body;
    n += put_string(E, 1, f->name);
    n += put_names(E, 4, b->inputs, b->n_inputs);
    n += put_names(E, 5, b->outputs, b->n_outputs);
    for (size_t i = 0; i < f->n_attributes; i++)
        n += put_string(E, 6, f->attributes[i]);
    for (const sg_node *nd = b->first; nd; nd = nd->next)
        n += PUT_MSG(E, 7, enc_node, nd);
    n += put_string(E, 8, f->doc);
    for (size_t i = 0; i < f->n_opsets; i++)
        n += PUT_MSG(E, 9, enc_opset, &f->opsets[i]);
    n += put_string(E, 10, f->domain);
    n += put_unknown(E, f->unknown);
    return end(E, slot, n);
}

static size_t enc_training(struct enc *E, const void *obj)
{
    const sg_training *t = obj;
    size_t slot = begin(E), n = 0;
    if (t->initialization)
        n += PUT_MSG(E, 1, enc_graph, t->initialization);
    if (t->algorithm)
        n += PUT_MSG(E, 2, enc_graph, t->algorithm);
    n += put_kvs(E, 3, t->init_binding, t->n_init_binding);
    n += put_kvs(E, 4, t->update_binding, t->n_update_binding);
    n += put_unknown(E, t->unknown);
    return end(E, slot, n);
}

static size_t enc_model(struct enc *E, const void *obj)
{
    const sg_model *m = obj;
    size_t slot = begin(E), n = 0;
    if (m->has_ir_version)
        n += put_varint(E, 1, (uint64_t)m->ir_version);
    n += put_string(E, 2, m->producer_name);
    n += put_string(E, 3, m->producer_version);
    n += put_string(E, 4, m->domain);
    if (m->has_model_version)
        n += put_varint(E, 5, (uint64_t)m->model_version);
    n += put_string(E, 6, m->doc);
    if (m->graph)
        n += PUT_MSG(E, 7, enc_graph, m->graph);
    for (size_t i = 0; i < m->n_opsets; i++)
        n += PUT_MSG(E, 8, enc_opset, &m->opsets[i]);
    n += put_kvs(E, 14, m->metadata, m->n_metadata);
    for (size_t i = 0; i < m->n_training; i++)
        n += PUT_MSG(E, 20, enc_training, &m->training[i]);
    for (size_t i = 0; i < m->n_functions; i++)
        n += PUT_MSG(E, 25, enc_function, &m->functions[i]);
    n += put_unknown(E, m->unknown);
    return end(E, slot, n);
}

/* --------------------------------------------------------------- driver */

sg_status sg__encode_measure(struct sg__encoding *enc, const sg_model *m,
                             struct sg__tensor_plan *const *plans, sg__place_fn place, void *ctx,
                             const char *data_file)
{
    struct enc *E = sg_calloc(1, sizeof *E);
    if (!E)
        return SG_ENOMEM;
    sg__encode_free(enc);
    E->plans = plans;
    E->place = place;
    E->place_ctx = ctx;
    E->data_file = data_file;
    enc->total = enc_model(E, m);
    if (E->nomem) {
        sg_free(E->sizes);
        sg_free(E);
        return SG_ENOMEM;
    }
    enc->priv = E;
    return SG_OK;
}

void sg__encode_write(struct sg__encoding *enc, const sg_model *m, struct sg__sink *sink)
{
    struct enc *E = enc->priv;
    E->write = true;
    E->cursor = 0;
    E->sink = sink;
    enc_model(E, m);
    E->write = false;
}

void sg__encode_free(struct sg__encoding *enc)
{
    struct enc *E = enc->priv;
    if (E) {
        sg_free(E->sizes);
        sg_free(E);
    }
    enc->priv = NULL;
    enc->total = 0;
}
