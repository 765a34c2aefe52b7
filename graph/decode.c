/*
 * decode.c - ONNX bytes -> IR, in one pass per message.
 *
 * The wire format is read directly into the IR: no message structs are
 * built and nothing is allocated per field beyond what the IR keeps.
 * Strings are copied into the model arena (NUL-terminated); byte payloads
 * (raw_data, string data, attribute bytes) point into the source buffer,
 * which the model keeps alive. Every field is carried over with its
 * presence, and fields this ONNX version does not know are kept as encoded
 * bytes, so encode.c writes the same ModelProto back.
 *
 * Untrusted input is validated here: wire format, nesting depth, names,
 * producers, dims and payload sizes. Errors name the node or tensor and,
 * for malformed bytes, the message and byte offset.
 */
#include "decode_impl.h"
#include "ir_impl.h"
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_opschema.h"
#include "wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Hashes of the input and output names of the nodes being loaded, computed
 * once when their lookups are prefetched (see decode_graph). */
#define PREFETCH_AHEAD 8
#define RING 16
#define RING_NAMES 8
#define MAX_GRAPH_DEPTH 64
#define MAX_TYPE_DEPTH 64

struct name_hashes {
    uint64_t h[RING_NAMES]; /* input and output names, in order */
    uint64_t node_h;        /* the node's own name (valid when has_node_h) */
    bool has_node_h;
    const void *node; /* the NodeProto bytes they belong to */
};

/* The names of the initializers a few ahead of the one being decoded,
 * hashed and their value-map slots prefetched (a model of hundreds of
 * thousands of small weights otherwise misses the cache once per weight). */
struct init_name {
    const uint8_t *msg; /* the TensorProto bytes */
    size_t len;
    uint64_t h;
};

struct init_ahead {
    struct wr r; /* the graph message, at the next initializer to look at */
    size_t issued, done;
    struct init_name ring[RING];
};

/* What the arity check needs per (op type, domain), looked up once. */
struct op_info {
    const char *op, *domain;
    const struct sg_op_schema *schema;
    int64_t opset;
    struct op_info *next; /* same op type, another domain */
};

struct dec {
    sg_model *m;
    sg_arena *a;
    struct sg_diag *diag;
    const uint8_t *base; /* the whole buffer, for byte offsets in messages */
    struct sg__strmap ops;
    struct name_hashes ring[RING];
};

/* A graph attribute to decode once its enclosing graph is complete. */
struct pending {
    sg_node *node;
    sg_attr *attr;
    int64_t index; /* into attr->graphs, or -1 for attr->g */
    struct wr bytes;
};

struct pendings {
    struct pending *v;
    size_t n, cap;
};

static sg_status nomem(struct dec *D)
{
    return sg_diag_set(D->diag, SG_ENOMEM, "out of memory");
}

static sg_status malformed(struct dec *D, const struct wr *r, const char *what)
{
    return sg_diag_set(D->diag, SG_EPARSE,
                       "not a valid ONNX protobuf (truncated or corrupt): bad %s at byte %zu", what,
                       (size_t)(r->p - D->base));
}

static sg_status status_of(struct dec *D)
{
    return D->diag && D->diag->status ? D->diag->status : SG_EPARSE;
}

/* ---------------------------------------------------------------- scalars */

/* A string field left in the source buffer (*name, *len: no NUL, none
 * inside), for names that are looked up before they are copied: most
 * input names are already known, and every op type is. */
static bool read_name(struct dec *D, struct wr *r, int type, const char *what, const char **name,
                      size_t *len)
{
    if (type != WT_LEN) {
        malformed(D, r, what);
        return false;
    }
    struct wr s = wr_len(r);
    if (r->bad) {
        malformed(D, r, what);
        return false;
    }
    size_t n = (size_t)(s.end - s.p);
    if (n && memchr(s.p, 0, n)) {
        sg_diag_set(D->diag, SG_EPARSE, "%s holds a NUL byte (at byte %zu); not supported", what,
                    (size_t)(s.p - D->base));
        return false;
    }
    *name = (const char *)s.p;
    *len = n;
    return true;
}

/* A string field: copied into the arena with a NUL. protobuf strings may
 * not hold NUL bytes here (the IR and protobuf-c use C strings). */
static const char *read_string(struct dec *D, struct wr *r, int type, const char *what)
{
    const char *p;
    size_t n;
    if (!read_name(D, r, type, what, &p, &n))
        return NULL;
    char *c = sg_arena_strndup(D->a, p, n);
    if (!c)
        nomem(D);
    return c;
}

/* A bytes field: points into the source buffer. */
static bool read_bytes(struct dec *D, struct wr *r, int type, sg_bytes *out, const char *what)
{
    if (type != WT_LEN) {
        malformed(D, r, what);
        return false;
    }
    struct wr s = wr_len(r);
    if (r->bad) {
        malformed(D, r, what);
        return false;
    }
    out->data = s.p;
    out->len = (size_t)(s.end - s.p);
    return true;
}

static bool read_varint(struct dec *D, struct wr *r, int type, uint64_t *v, const char *what)
{
    if (type != WT_VARINT) {
        malformed(D, r, what);
        return false;
    }
    *v = wr_varint(r);
    if (r->bad) {
        malformed(D, r, what);
        return false;
    }
    return true;
}

/* A sub-message field's bytes. */
static bool read_msg(struct dec *D, struct wr *r, int type, struct wr *sub, const char *what)
{
    if (type != WT_LEN) {
        malformed(D, r, what);
        return false;
    }
    *sub = wr_len(r);
    if (r->bad) {
        malformed(D, r, what);
        return false;
    }
    return true;
}

/* Unknown fields: appended, encoded as found, to one arena buffer. */
struct ubuf {
    uint8_t *data;
    size_t len, cap;
};

static bool keep_unknown(struct dec *D, struct ubuf *u, const uint8_t *from, const uint8_t *to)
{
    size_t n = (size_t)(to - from);
    if (u->len + n > u->cap) {
        size_t cap = (u->cap ? u->cap * 2 : 64) + n;
        uint8_t *grown = sg_arena_grow(D->a, u->data, u->len, cap, 1);
        if (!grown) {
            nomem(D);
            return false;
        }
        u->data = grown;
        u->cap = cap;
    }
    memcpy(u->data + u->len, from, n);
    u->len += n;
    return true;
}

static sg_unknown unknown_of(const struct ubuf *u)
{
    return (sg_unknown){u->data, u->len};
}

/* Skip an unknown field starting at `start`, keeping its bytes. */
static bool skip_unknown(struct dec *D, struct wr *r, int type, const uint8_t *start,
                         struct ubuf *u, const char *msg)
{
    wr_skip(r, type);
    if (r->bad) {
        malformed(D, r, msg);
        return false;
    }
    return keep_unknown(D, u, start, r->p);
}

/*
 * Repeated scalars arrive packed (one LEN field) or one per field; a
 * message may even mix both. count_scalars counts the elements of field
 * `field` in message bytes `msg`; read_scalars appends them to `out`.
 * `width` is 4 or 8 for fixed-size fields and 0 for varints.
 */
/* The elements of a packed run: fixed-width ones, or varints (each ends
 * with a byte below 0x80). */
static size_t packed_count(struct wr s, int width)
{
    size_t n = 0;
    if (width)
        return (size_t)(s.end - s.p) / (size_t)width;
    for (const uint8_t *p = s.p; p < s.end; p++)
        n += !(*p & 0x80);
    return n;
}

static size_t count_scalars(struct wr msg, uint32_t field, int width)
{
    size_t n = 0;
    uint32_t f;
    int t;
    while (wr_tag(&msg, &f, &t)) {
        if (f != field) {
            wr_skip(&msg, t);
            continue;
        }
        if (t == WT_LEN) {
            struct wr s = wr_len(&msg);
            if (msg.bad)
                return 0;
            n += packed_count(s, width);
        } else {
            wr_skip(&msg, t);
            n++;
        }
    }
    return n; /* up to any malformation: the decoding loop stops at the same place */
}

static bool read_scalars(struct dec *D, struct wr *r, int type, int width, void *out, size_t *n,
                         size_t cap, const char *what)
{
    struct wr s;
    bool packed = type == WT_LEN;
    if (packed) {
        s = wr_len(r);
        if (r->bad || (width && (size_t)(s.end - s.p) % (size_t)width)) {
            malformed(D, r, what);
            return false;
        }
    } else {
        int want = width == 4 ? WT_I32 : width == 8 ? WT_I64 : WT_VARINT;
        if (type != want) {
            malformed(D, r, what);
            return false;
        }
        s = *r;
    }
    do {
        if (*n >= cap) {
            malformed(D, r, what);
            return false;
        }
        if (width == 4) {
            uint32_t v = wr_fixed32(&s);
            memcpy((uint8_t *)out + *n * 4, &v, 4);
        } else if (width == 8) {
            uint64_t v = wr_fixed64(&s);
            memcpy((uint8_t *)out + *n * 8, &v, 8);
        } else {
            uint64_t v = wr_varint(&s);
            memcpy((uint8_t *)out + *n * 8, &v, 8);
        }
        if (s.bad) {
            malformed(D, r, what);
            return false;
        }
        (*n)++;
    } while (packed && s.p < s.end);
    if (!packed)
        *r = s;
    return true;
}

/* Number of occurrences of field `field` in a message. */
static size_t count_field(struct wr msg, uint32_t field)
{
    size_t n = 0;
    uint32_t f;
    int t;
    while (wr_tag(&msg, &f, &t)) {
        n += f == field;
        wr_skip(&msg, t);
    }
    return n; /* up to any malformation: the decoding loop stops at the same place */
}

/* ------------------------------------------------------- small messages */

static sg_status decode_kv(struct dec *D, struct wr msg, sg_kv *kv)
{
    struct ubuf u = {0};
    uint32_t f;
    int t;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &t)) {
        if (f == 1) {
            if (!(kv->key = read_string(D, &msg, t, "StringStringEntryProto.key")))
                return status_of(D);
        } else if (f == 2) {
            if (!(kv->value = read_string(D, &msg, t, "StringStringEntryProto.value")))
                return status_of(D);
        } else if (!skip_unknown(D, &msg, t, start, &u, "StringStringEntryProto")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "StringStringEntryProto");
    kv->unknown = unknown_of(&u);
    return SG_OK;
}

typedef sg_status (*elem_decoder)(struct dec *D, struct wr msg, void *elem);

/* Decode every occurrence of message field `field` of msg into an arena
 * array of elements of `size` bytes, one decode call each. */
static sg_status decode_repeated(struct dec *D, struct wr msg, uint32_t field, size_t size,
                                 elem_decoder decode, const char *what, void **out, size_t *n)
{
    size_t count = count_field(msg, field);
    *n = 0;
    *out = NULL;
    if (!count)
        return SG_OK;
    uint8_t *elems = sg_arena_calloc(D->a, count, size);
    if (!elems)
        return nomem(D);
    uint32_t f;
    int t;
    while (wr_tag(&msg, &f, &t)) {
        if (f != field) {
            wr_skip(&msg, t);
            continue;
        }
        struct wr sub;
        if (!read_msg(D, &msg, t, &sub, what))
            return status_of(D);
        sg_status st = decode(D, sub, elems + *n * size);
        if (st)
            return st;
        (*n)++;
    }
    *out = elems;
    return SG_OK;
}

static sg_status decode_kv_elem(struct dec *D, struct wr msg, void *kv)
{
    return decode_kv(D, msg, kv);
}

static sg_status decode_kvs(struct dec *D, struct wr msg, uint32_t field, sg_kv **out, size_t *n)
{
    void *arr;
    sg_status st =
        decode_repeated(D, msg, field, sizeof **out, decode_kv_elem, "key/value entry", &arr, n);
    *out = arr;
    return st;
}

static sg_status decode_opset(struct dec *D, struct wr msg, sg_opset *o)
{
    struct ubuf u = {0};
    uint32_t f;
    int t;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &t)) {
        uint64_t v = 0;
        if (f == 1) {
            if (!(o->domain = read_string(D, &msg, t, "OperatorSetIdProto.domain")))
                return status_of(D);
        } else if (f == 2) {
            if (!read_varint(D, &msg, t, &v, "OperatorSetIdProto.version"))
                return status_of(D);
            o->has_version = true;
            o->version = (int64_t)v;
        } else if (!skip_unknown(D, &msg, t, start, &u, "OperatorSetIdProto")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "OperatorSetIdProto");
    o->unknown = unknown_of(&u);
    return SG_OK;
}

static sg_status decode_opset_elem(struct dec *D, struct wr msg, void *o)
{
    return decode_opset(D, msg, o);
}

static sg_status decode_opsets(struct dec *D, struct wr msg, uint32_t field, sg_opset **out,
                               size_t *n)
{
    void *arr;
    sg_status st =
        decode_repeated(D, msg, field, sizeof **out, decode_opset_elem, "opset_import", &arr, n);
    *out = arr;
    return st;
}

/* ------------------------------------------------------------------ types */

static sg_type *decode_type(struct dec *D, struct wr msg, int depth);

static sg_status decode_dim(struct dec *D, struct wr msg, sg_dim *d)
{
    struct ubuf u = {0};
    uint32_t f;
    int t;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &t)) {
        uint64_t v = 0;
        if (f == 1) {
            if (!read_varint(D, &msg, t, &v, "Dimension.dim_value"))
                return status_of(D);
            d->kind = SG_DIM_VALUE;
            d->value = (int64_t)v;
            d->param = NULL;
        } else if (f == 2) {
            if (!(d->param = read_string(D, &msg, t, "Dimension.dim_param")))
                return status_of(D);
            d->kind = SG_DIM_PARAM;
        } else if (f == 3) {
            if (!(d->denotation = read_string(D, &msg, t, "Dimension.denotation")))
                return status_of(D);
        } else if (!skip_unknown(D, &msg, t, start, &u, "Dimension")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "TensorShapeProto.Dimension");
    d->unknown = unknown_of(&u);
    return SG_OK;
}

static sg_shape *decode_shape(struct dec *D, struct wr msg)
{
    sg_shape *s = sg_arena_calloc(D->a, 1, sizeof *s);
    size_t count = count_field(msg, 1);
    if (!s || (count && !(s->dims = sg_arena_calloc(D->a, count, sizeof *s->dims)))) {
        nomem(D);
        return NULL;
    }
    struct ubuf u = {0};
    uint32_t f;
    int t;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &t)) {
        if (f == 1) {
            struct wr sub;
            if (s->rank >= count) {
                malformed(D, &msg, "TensorShapeProto.dim");
                return NULL;
            }
            if (!read_msg(D, &msg, t, &sub, "TensorShapeProto.dim") ||
                decode_dim(D, sub, &s->dims[s->rank]))
                return NULL;
            s->rank++;
        } else if (!skip_unknown(D, &msg, t, start, &u, "TensorShapeProto")) {
            return NULL;
        }
        start = msg.p;
    }
    if (msg.bad) {
        malformed(D, &msg, "TensorShapeProto");
        return NULL;
    }
    s->unknown = unknown_of(&u);
    return s;
}

/* TypeProto.Tensor / SparseTensor / Sequence / Map / Optional into t. */
static sg_status decode_type_inner(struct dec *D, struct wr msg, sg_type *t, int depth)
{
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    bool tensor = t->kind == SG_TYPE_TENSOR || t->kind == SG_TYPE_SPARSE_TENSOR;
    while (wr_tag(&msg, &f, &wt)) {
        uint64_t v = 0;
        struct wr sub;
        if (tensor && f == 1) {
            if (!read_varint(D, &msg, wt, &v, "TypeProto.Tensor.elem_type"))
                return status_of(D);
            t->has_elem_type = true;
            t->elem_type = (int32_t)v;
        } else if (tensor && f == 2) {
            if (!read_msg(D, &msg, wt, &sub, "TypeProto.Tensor.shape") ||
                !(t->shape = decode_shape(D, sub)))
                return status_of(D);
        } else if (t->kind == SG_TYPE_MAP && f == 1) {
            if (!read_varint(D, &msg, wt, &v, "TypeProto.Map.key_type"))
                return status_of(D);
            t->has_key_type = true;
            t->key_type = (int32_t)v;
        } else if ((t->kind == SG_TYPE_MAP && f == 2) ||
                   ((t->kind == SG_TYPE_SEQUENCE || t->kind == SG_TYPE_OPTIONAL) && f == 1)) {
            if (!read_msg(D, &msg, wt, &sub, "TypeProto element type") ||
                !(t->elem = decode_type(D, sub, depth + 1)))
                return status_of(D);
        } else if (!skip_unknown(D, &msg, wt, start, &u, "TypeProto")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "TypeProto");
    t->inner_unknown = unknown_of(&u);
    return SG_OK;
}

static sg_type *decode_type(struct dec *D, struct wr msg, int depth)
{
    if (depth > MAX_TYPE_DEPTH) {
        sg_diag_set(D->diag, SG_EPARSE, "type nested deeper than %d levels", MAX_TYPE_DEPTH);
        return NULL;
    }
    sg_type *t = sg_arena_calloc(D->a, 1, sizeof *t);
    if (!t) {
        nomem(D);
        return NULL;
    }
    static const enum sg_type_kind kinds[10] = {
        [1] = SG_TYPE_TENSOR,        [4] = SG_TYPE_SEQUENCE, [5] = SG_TYPE_MAP,
        [8] = SG_TYPE_SPARSE_TENSOR, [9] = SG_TYPE_OPTIONAL,
    };
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &wt)) {
        if (f < 10 && kinds[f]) {
            /* oneof value: the last one set wins, as in protobuf */
            struct wr sub;
            if (!read_msg(D, &msg, wt, &sub, "TypeProto value"))
                return NULL;
            sg_type fresh = {.denotation = t->denotation, .unknown = t->unknown};
            *t = fresh;
            t->kind = kinds[f];
            if (decode_type_inner(D, sub, t, depth))
                return NULL;
        } else if (f == 6) {
            if (!(t->denotation = read_string(D, &msg, wt, "TypeProto.denotation")))
                return NULL;
        } else if (!skip_unknown(D, &msg, wt, start, &u, "TypeProto")) {
            return NULL;
        }
        start = msg.p;
    }
    if (msg.bad) {
        malformed(D, &msg, "TypeProto");
        return NULL;
    }
    t->unknown = unknown_of(&u);
    return t;
}

/* ---------------------------------------------------------------- tensors */

static const char *tlabel(const sg_tensor *t)
{
    return t->name && *t->name ? t->name : "(unnamed)";
}

/* Check that the in-file payload agrees with dims and dtype. */
static sg_status check_payload(struct dec *D, sg_tensor *t)
{
    for (uint32_t i = 0; i < t->rank; i++)
        if (t->dims[i] < 0)
            return sg_diag_set(D->diag, SG_ERANGE, "tensor '%s' has negative dimension %" PRId64,
                               tlabel(t), t->dims[i]);
    int64_t numel = sg_tensor_numel(t);
    if (numel < 0)
        return sg_diag_set(D->diag, SG_ERANGE, "tensor '%s' has dimensions whose product overflows",
                           tlabel(t));
    const sg_tensor_extra *x = sg_tensor_get_extra(t);
    if (x->has_segment || sg_tensor_is_external(t) || !t->has_dtype || !sg_dtype_valid(t->dtype))
        return SG_OK; /* partial, elsewhere, or a type we cannot size */
    size_t es = sg_dtype_size(t->dtype);
    size_t payloads = (t->has_raw ? 1 : 0) + (x->n_float ? 1 : 0) + (x->n_int32 ? 1 : 0) +
                      (x->n_int64 ? 1 : 0) + (x->n_double ? 1 : 0) + (x->n_uint64 ? 1 : 0) +
                      (x->n_string ? 1 : 0);
    if (payloads == 0)
        return SG_OK; /* no data given: an empty or shape-only tensor */
    if (t->dtype == SG_DTYPE_STRING) {
        if (x->n_string != (uint64_t)numel)
            return sg_diag_set(D->diag, SG_ESHAPE,
                               "tensor '%s' has %zu strings but its dims need %" PRId64, tlabel(t),
                               x->n_string, numel);
        return SG_OK;
    }
    if (es == 0)
        return sg_diag_set(D->diag, SG_EPARSE, "tensor '%s' has data but data type %s", tlabel(t),
                           sg_dtype_name(t->dtype));
    size_t stored; /* the 4-bit types: two elements per byte */
    if ((uint64_t)numel > SIZE_MAX / es || !sg_dtype_storage_bytes(t->dtype, numel, &stored))
        return sg_diag_set(D->diag, SG_ERANGE, "tensor '%s' is too large", tlabel(t));
    if (t->has_raw) {
        if (t->raw_len != stored)
            return sg_diag_set(D->diag, SG_ESHAPE,
                               "tensor '%s' has %zu bytes of data but dims %s need %zu%s",
                               tlabel(t), t->raw_len, sg__dims_str(t->dims, t->rank), stored,
                               sg_dtype_is_4bit(t->dtype) ? " (two 4-bit elements per byte)" : "");
        return SG_OK;
    }
    size_t dummy;
    struct sg_diag d = {0};
    if (!sg_tensor_data(D->m, t, &dummy, &d))
        return sg_diag_set(D->diag, d.status, "%s", d.msg);
    return SG_OK;
}

static sg_status decode_segment(struct dec *D, struct wr msg, sg_tensor_extra *x)
{
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    x->has_segment = true;
    while (wr_tag(&msg, &f, &wt)) {
        uint64_t v = 0;
        if (f == 1 || f == 2) {
            if (!read_varint(D, &msg, wt, &v, "TensorProto.Segment"))
                return status_of(D);
            if (f == 1)
                x->has_seg_begin = true, x->seg_begin = (int64_t)v;
            else
                x->has_seg_end = true, x->seg_end = (int64_t)v;
        } else if (!skip_unknown(D, &msg, wt, start, &u, "TensorProto.Segment")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "TensorProto.Segment");
    x->seg_unknown = unknown_of(&u);
    return SG_OK;
}

static void *scalars(struct dec *D, size_t n, size_t size, bool *ok)
{
    if (!n)
        return NULL;
    void *p = sg_arena_calloc(D->a, n, size);
    if (!p) {
        nomem(D);
        *ok = false;
    }
    return p;
}

/* Element counts of a TensorProto's repeated fields (see count_scalars),
 * in one walk over the message. */
struct tensor_counts {
    size_t dims, floats, int32s, strings, int64s, doubles, uint64s, external;
};

static void count_tensor(struct wr msg, struct tensor_counts *c)
{
    uint32_t f;
    int t;
    while (wr_tag(&msg, &f, &t)) {
        size_t *n;
        int width = 0;
        switch (f) {
        case 1:
            n = &c->dims;
            break;
        case 4:
            n = &c->floats, width = 4;
            break;
        case 5:
            n = &c->int32s;
            break;
        case 7:
            n = &c->int64s;
            break;
        case 10:
            n = &c->doubles, width = 8;
            break;
        case 11:
            n = &c->uint64s;
            break;
        default:
            c->strings += f == 6;
            c->external += f == 13;
            wr_skip(&msg, t);
            continue;
        }
        if (t != WT_LEN) {
            wr_skip(&msg, t);
            (*n)++;
            continue;
        }
        struct wr s = wr_len(&msg);
        if (msg.bad)
            return; /* the decoding loop stops here too */
        *n += packed_count(s, width);
    }
}

/* t's extra fields, made on the first field that needs them. */
static sg_tensor_extra *extra(struct dec *D, sg_tensor *t)
{
    if (!t->extra && !(t->extra = sg_arena_calloc(D->a, 1, sizeof *t->extra)))
        nomem(D);
    return t->extra;
}

/* A node's or value's rare fields, when it has any. */
static sg_more *more_of(struct dec *D, const char *doc, sg_unknown unknown)
{
    sg_more *m = sg_arena_alloc(D->a, sizeof *m);
    if (m)
        *m = (sg_more){doc, unknown};
    return m;
}

static sg_tensor *decode_tensor(struct dec *D, struct wr msg)
{
    sg_tensor *t = sg_arena_calloc(D->a, 1, sizeof *t);
    if (!t) {
        nomem(D);
        return NULL;
    }
    /* Counts first: repeated fields become exact arrays. */
    bool ok = true;
    struct tensor_counts cap = {0};
    count_tensor(msg, &cap);
    if (cap.dims > SG_MAX_RANK) {
        sg_diag_set(D->diag, SG_ERANGE, "a tensor has rank %zu (more than %d)", cap.dims,
                    SG_MAX_RANK);
        return NULL;
    }
    int64_t *dims = scalars(D, cap.dims ? cap.dims : 1, sizeof *dims, &ok);
    float *fd = scalars(D, cap.floats, sizeof *fd, &ok);
    uint64_t *i32 = scalars(D, cap.int32s, sizeof *i32, &ok); /* varints, narrowed below */
    int64_t *i64 = scalars(D, cap.int64s, sizeof *i64, &ok);
    double *dd = scalars(D, cap.doubles, sizeof *dd, &ok);
    uint64_t *u64 = scalars(D, cap.uint64s, sizeof *u64, &ok);
    sg_bytes *sd = scalars(D, cap.strings, sizeof *sd, &ok);
    sg_kv *ext = scalars(D, cap.external, sizeof *ext, &ok);
    if (!ok)
        return NULL;
    size_t nd = 0, nf = 0, ni32 = 0, ni64 = 0, ndd = 0, nu64 = 0, ns = 0, next = 0;
    sg_tensor_extra *x = NULL;
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &wt)) {
        uint64_t v = 0;
        struct wr sub;
        switch (f) {
        case 1:
            ok = read_scalars(D, &msg, wt, 0, dims, &nd, cap.dims, "TensorProto.dims");
            break;
        case 2:
            ok = read_varint(D, &msg, wt, &v, "TensorProto.data_type");
            t->has_dtype = true;
            t->dtype = (int32_t)v;
            break;
        case 3:
            ok = read_msg(D, &msg, wt, &sub, "TensorProto.segment") && (x = extra(D, t)) &&
                 !decode_segment(D, sub, x);
            break;
        case 4:
            ok = read_scalars(D, &msg, wt, 4, fd, &nf, cap.floats, "TensorProto.float_data");
            break;
        case 5:
            ok = read_scalars(D, &msg, wt, 0, i32, &ni32, cap.int32s, "TensorProto.int32_data");
            break;
        case 6:
            /* The count walk saw every entry the decoding reaches. */
            ok = ns < cap.strings ? read_bytes(D, &msg, wt, &sd[ns], "TensorProto.string_data")
                                  : (malformed(D, &msg, "TensorProto.string_data"), false);
            ns += ok;
            break;
        case 7:
            ok = read_scalars(D, &msg, wt, 0, i64, &ni64, cap.int64s, "TensorProto.int64_data");
            break;
        case 8:
            ok = (t->name = read_string(D, &msg, wt, "TensorProto.name")) != NULL;
            break;
        case 9: {
            sg_bytes b;
            ok = read_bytes(D, &msg, wt, &b, "TensorProto.raw_data");
            t->has_raw = true;
            t->raw = b.data;
            t->raw_len = b.len;
            break;
        }
        case 10:
            ok = read_scalars(D, &msg, wt, 8, dd, &ndd, cap.doubles, "TensorProto.double_data");
            break;
        case 11:
            ok = read_scalars(D, &msg, wt, 0, u64, &nu64, cap.uint64s, "TensorProto.uint64_data");
            break;
        case 12:
            ok = (x = extra(D, t)) &&
                 (x->doc = read_string(D, &msg, wt, "TensorProto.doc_string")) != NULL;
            break;
        case 13:
            ok = next < cap.external ? read_msg(D, &msg, wt, &sub, "TensorProto.external_data") &&
                                           !decode_kv(D, sub, &ext[next])
                                     : (malformed(D, &msg, "TensorProto.external_data"), false);
            next += ok;
            break;
        case 14:
            ok = read_varint(D, &msg, wt, &v, "TensorProto.data_location") && (x = extra(D, t));
            if (ok) {
                x->has_data_location = true;
                x->data_location = (int32_t)v;
            }
            break;
        default:
            ok = skip_unknown(D, &msg, wt, start, &u, "TensorProto");
            break;
        }
        if (!ok) {
            if (t->name)
                sg_diag_prefix(D->diag, "tensor '%s'", t->name);
            return NULL;
        }
        start = msg.p;
    }
    if (msg.bad) {
        malformed(D, &msg, "TensorProto");
        return NULL;
    }
    t->dims = dims;
    t->rank = (uint32_t)nd;
    sg_unknown unknown = unknown_of(&u);
    if (nf || ni32 || ni64 || ndd || nu64 || ns || next || unknown.len) {
        if (!(x = extra(D, t)))
            return NULL;
        x->float_data = fd, x->n_float = nf;
        if (ni32) {
            /* int32 fields are sign-extended varints: keep the low 32 bits. */
            int32_t *narrow = (int32_t *)i32;
            for (size_t i = 0; i < ni32; i++)
                narrow[i] = (int32_t)(uint32_t)i32[i];
            x->int32_data = narrow;
        }
        x->n_int32 = ni32;
        x->int64_data = i64, x->n_int64 = ni64;
        x->double_data = dd, x->n_double = ndd;
        x->uint64_data = u64, x->n_uint64 = nu64;
        x->string_data = sd, x->n_string = ns;
        x->external = ext, x->n_external = next;
        x->unknown = unknown;
    }
    if (sg_tensor_is_external(t))
        D->m->has_external = true;
    if (check_payload(D, t))
        return NULL;
    return t;
}

static sg_sparse *decode_sparse(struct dec *D, struct wr msg)
{
    sg_sparse *s = sg_arena_calloc(D->a, 1, sizeof *s);
    size_t n_dims = count_scalars(msg, 3, 0);
    bool ok = s != NULL;
    int64_t *dims = ok ? scalars(D, n_dims, sizeof *dims, &ok) : NULL;
    if (!ok) {
        nomem(D);
        return NULL;
    }
    size_t nd = 0;
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &wt)) {
        struct wr sub;
        if (f == 1 || f == 2) {
            if (!read_msg(D, &msg, wt, &sub, "SparseTensorProto"))
                return NULL;
            sg_tensor *t = decode_tensor(D, sub);
            if (!t)
                return NULL;
            *(f == 1 ? &s->values : &s->indices) = t;
        } else if (f == 3) {
            if (!read_scalars(D, &msg, wt, 0, dims, &nd, n_dims, "SparseTensorProto.dims"))
                return NULL;
        } else if (!skip_unknown(D, &msg, wt, start, &u, "SparseTensorProto")) {
            return NULL;
        }
        start = msg.p;
    }
    if (msg.bad) {
        malformed(D, &msg, "SparseTensorProto");
        return NULL;
    }
    s->dims = dims;
    s->rank = (uint32_t)nd;
    s->unknown = unknown_of(&u);
    return s;
}

/* ------------------------------------------------------------- attributes */

static sg_attr *decode_attr(struct dec *D, struct wr msg, sg_node *owner, struct pendings *pg)
{
    sg_attr *at = sg_arena_calloc(D->a, 1, sizeof *at);
    if (!at) {
        nomem(D);
        return NULL;
    }
    bool ok = true, have_g = false;
    size_t cap_floats = count_scalars(msg, 7, 4), cap_ints = count_scalars(msg, 8, 0);
    size_t cap_strings = count_field(msg, 9), cap_tensors = count_field(msg, 10);
    size_t cap_graphs = count_field(msg, 11), cap_tps = count_field(msg, 15);
    size_t cap_sparses = count_field(msg, 23);
    float *floats = scalars(D, cap_floats, sizeof *floats, &ok);
    int64_t *ints = scalars(D, cap_ints, sizeof *ints, &ok);
    at->strings = scalars(D, cap_strings, sizeof *at->strings, &ok);
    at->tensors = scalars(D, cap_tensors, sizeof *at->tensors, &ok);
    at->graphs = scalars(D, cap_graphs, sizeof *at->graphs, &ok);
    at->tps = scalars(D, cap_tps, sizeof *at->tps, &ok);
    at->sparses = scalars(D, cap_sparses, sizeof *at->sparses, &ok);
    if (!ok)
        return NULL;
    size_t nf = 0, ni = 0;
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &wt)) {
        uint64_t v = 0;
        struct wr sub;
        switch (f) {
        case 1:
            ok = (at->name = read_string(D, &msg, wt, "AttributeProto.name")) != NULL;
            break;
        case 2:
            if (wt != WT_I32) {
                ok = false;
                malformed(D, &msg, "AttributeProto.f");
                break;
            }
            {
                uint32_t bits = wr_fixed32(&msg);
                memcpy(&at->f, &bits, 4);
            }
            at->has_f = true;
            break;
        case 3:
            ok = read_varint(D, &msg, wt, &v, "AttributeProto.i");
            at->has_i = true;
            at->i = (int64_t)v;
            break;
        case 4:
            ok = read_bytes(D, &msg, wt, &at->s, "AttributeProto.s");
            at->has_s = true;
            break;
        case 5:
            /* A singular message twice would be merged by protobuf: refused
             * here, like ModelProto.graph (nothing writes that). */
            if (at->t) {
                sg_diag_set(D->diag, SG_EPARSE, "AttributeProto.t appears twice; not supported");
                return NULL;
            }
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.t") &&
                 (at->t = decode_tensor(D, sub)) != NULL;
            break;
        case 6:
            if (have_g) {
                sg_diag_set(D->diag, SG_EPARSE, "AttributeProto.g appears twice; not supported");
                return NULL;
            }
            have_g = true;
            /* Graphs wait until the enclosing graph's names are all known. */
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.g");
            if (ok && pg) {
                if (pg->n == pg->cap) {
                    size_t cap = pg->cap ? pg->cap * 2 : 8;
                    struct pending *grown = sg_realloc(pg->v, cap * sizeof *grown);
                    if (!grown) {
                        nomem(D);
                        return NULL;
                    }
                    pg->v = grown;
                    pg->cap = cap;
                }
                pg->v[pg->n++] = (struct pending){owner, at, -1, sub};
            }
            break;
        case 7:
            ok = read_scalars(D, &msg, wt, 4, floats, &nf, cap_floats, "AttributeProto.floats");
            break;
        case 8:
            ok = read_scalars(D, &msg, wt, 0, ints, &ni, cap_ints, "AttributeProto.ints");
            break;
        case 9:
            ok = read_bytes(D, &msg, wt, &at->strings[at->n_strings], "AttributeProto.strings");
            at->n_strings += ok;
            break;
        case 10:
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.tensors") &&
                 (at->tensors[at->n_tensors] = decode_tensor(D, sub)) != NULL;
            at->n_tensors += ok;
            break;
        case 11:
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.graphs");
            if (ok && pg) {
                if (pg->n == pg->cap) {
                    size_t cap = pg->cap ? pg->cap * 2 : 8;
                    struct pending *grown = sg_realloc(pg->v, cap * sizeof *grown);
                    if (!grown) {
                        nomem(D);
                        return NULL;
                    }
                    pg->v = grown;
                    pg->cap = cap;
                }
                pg->v[pg->n++] = (struct pending){owner, at, (int64_t)at->n_graphs, sub};
            }
            at->n_graphs += ok;
            break;
        case 13:
            ok = (at->doc = read_string(D, &msg, wt, "AttributeProto.doc_string")) != NULL;
            break;
        case 14:
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.tp") &&
                 (at->tp = decode_type(D, sub, 0)) != NULL;
            break;
        case 15:
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.type_protos") &&
                 (at->tps[at->n_tps] = decode_type(D, sub, 0)) != NULL;
            at->n_tps += ok;
            break;
        case 20:
            ok = read_varint(D, &msg, wt, &v, "AttributeProto.type");
            at->has_type = true;
            at->type = (enum sg_attr_type)(int32_t)v;
            break;
        case 21:
            ok = (at->ref_attr_name = read_string(D, &msg, wt, "AttributeProto.ref_attr_name")) !=
                 NULL;
            break;
        case 22:
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.sparse_tensor") &&
                 (at->sparse = decode_sparse(D, sub)) != NULL;
            break;
        case 23:
            ok = read_msg(D, &msg, wt, &sub, "AttributeProto.sparse_tensors") &&
                 (at->sparses[at->n_sparses] = decode_sparse(D, sub)) != NULL;
            at->n_sparses += ok;
            break;
        default:
            ok = skip_unknown(D, &msg, wt, start, &u, "AttributeProto");
            break;
        }
        if (!ok || msg.bad)
            goto fail;
        start = msg.p;
    }
    if (msg.bad) {
        malformed(D, &msg, "AttributeProto");
        goto fail;
    }
    at->floats = floats, at->n_floats = nf;
    at->ints = ints, at->n_ints = ni;
    at->unknown = unknown_of(&u);
    return at;
fail:
    if (msg.bad)
        malformed(D, &msg, "AttributeProto");
    sg_diag_prefix(D->diag, "node '%.200s' (%.60s) attribute '%s'",
                   owner->name && *owner->name ? owner->name : "(unnamed)",
                   owner->op_type ? owner->op_type : "?", at->name ? at->name : "");
    return NULL;
}

/* ----------------------------------------------------------------- graphs */

static const char *node_label(const sg_node *n)
{
    return n->name && *n->name ? n->name : "(unnamed)";
}

/* The value named by len bytes of the file (hash h), made on first sight. */
static sg_value *get_value_n(struct dec *D, sg_graph *g, const char *bytes, size_t len, uint64_t h)
{
    sg_value *v = sg__strmap_get_n(g->values_map, bytes, len, h);
    if (v)
        return v;
    const char *name = sg_arena_strndup(D->a, bytes, len);
    if (!name || !(v = sg__value_new_h(g, name, h)))
        nomem(D);
    return v;
}

static sg_value *get_value_h(struct dec *D, sg_graph *g, const char *name, uint64_t h)
{
    sg_value *v = sg__strmap_get_h(g->values_map, name, h);
    if (v)
        return v;
    v = sg__value_new_h(g, name, h);
    if (!v)
        nomem(D);
    return v;
}

static sg_value *get_value(struct dec *D, sg_graph *g, const char *name)
{
    return get_value_h(D, g, name, sg__strhash(name));
}

/* The schema of an op type in a domain at the model's opset, looked up once
 * per load. Also gives every node of that op type the same op_type string. */
static sg_status op_lookup(struct dec *D, const char **op_type, uint64_t h, const char *domain,
                           struct op_info *seen, const struct op_info **out)
{
    /* seen: the entries of this op type, when the caller found them. */
    struct op_info *head = seen ? seen : sg__strmap_get_h(&D->ops, *op_type, h), *it;
    for (it = head; it; it = it->next)
        if (it->domain == domain || (it->domain && domain && strcmp(it->domain, domain) == 0))
            break;
    if (!it) {
        it = sg_arena_calloc(D->a, 1, sizeof *it);
        if (!it)
            return nomem(D);
        it->op = *op_type;
        it->domain = domain;
        it->opset = sg_model_opset(D->m, domain);
        it->schema = it->opset ? sg_op_schema_find(domain, *op_type, it->opset) : NULL;
        it->next = head;
        if (sg__strmap_put_h(&D->ops, it->op, h, it) != SG_OK)
            return nomem(D);
    }
    *op_type = it->op;
    *out = it;
    return SG_OK;
}

/* Hash the names of node bytes `msg` into ring slot `slot` and start their
 * lookups, a few nodes before they are decoded: in a big graph every name
 * lookup misses the cache, and this lets the misses overlap. */
static void prefetch_names(struct dec *D, const sg_graph *g, struct wr msg, size_t slot)
{
    struct name_hashes *r = &D->ring[slot % RING];
    r->node = msg.p;
    r->has_node_h = false;
    size_t k = 0;
    uint32_t f;
    int t;
    while (wr_tag(&msg, &f, &t)) {
        if ((f != 1 && f != 2 && f != 3) || t != WT_LEN || (f != 3 && k == RING_NAMES)) {
            wr_skip(&msg, t);
            continue;
        }
        struct wr s = wr_len(&msg);
        if (msg.bad)
            break;
        uint64_t h = sg__strhash_n((const char *)s.p, (size_t)(s.end - s.p));
        if (f == 3) {
            r->node_h = h;
            r->has_node_h = true;
            sg__strmap_prefetch_h(g->nodes_map, h);
        } else {
            r->h[k++] = h;
            sg__strmap_prefetch_h(g->values_map, h);
        }
    }
}

/* The prefetched hashes of node number `ordinal`, if they are still there. */
static const struct name_hashes *ring_hashes(struct dec *D, const uint8_t *node, size_t ordinal)
{
    const struct name_hashes *r = &D->ring[ordinal % RING];
    return r->node == node ? r : NULL;
}

/* Hash the name of the next initializer of a->r and prefetch its slot in
 * g's value map; false when there is none. */
static bool prefetch_init_name(const sg_graph *g, struct init_ahead *a)
{
    uint32_t f;
    int t;
    while (wr_tag(&a->r, &f, &t)) {
        if (f != 5 || t != WT_LEN) {
            wr_skip(&a->r, t);
            continue;
        }
        struct wr msg = wr_len(&a->r);
        if (a->r.bad)
            return false;
        struct init_name *n = &a->ring[a->issued % RING];
        *n = (struct init_name){msg.p, 0, 0};
        struct wr name = {0};
        bool found = false;
        while (wr_tag(&msg, &f, &t)) {
            if (f == 8 && t == WT_LEN) {
                name = wr_len(&msg); /* the last one counts, as in decode_tensor */
                found = !msg.bad;
            } else {
                wr_skip(&msg, t);
            }
        }
        if (found) {
            n->len = (size_t)(name.end - name.p);
            n->h = sg__strhash_n((const char *)name.p, n->len);
            sg__strmap_prefetch_h(g->values_map, n->h);
        } else {
            n->msg = NULL;
        }
        return true;
    }
    return false;
}

/* Bind input or output `slot` of n to the value named by len bytes of the
 * file (hash h), made on first sight. */
static sg_status bind_name(struct dec *D, sg_graph *g, sg_node *n, bool output, uint32_t slot,
                           const char *name, size_t len, uint64_t h)
{
    sg_value *v = get_value_n(D, g, name, len, h);
    if (!v)
        return SG_ENOMEM;
    if (!output) {
        if (sg__value_add_use(v, n, (int32_t)slot) != SG_OK)
            return nomem(D);
        n->inputs[slot] = v;
        /* Read before it is made (or from outside), or made by this very
         * node when its outputs precede its inputs on the wire: either way
         * only a sort can tell whether there is a cycle. */
        if ((!v->producer && !v->init && !v->sparse_init && !(v->flags & SG_VALUE_INPUT)) ||
            v->producer == n)
            g->maybe_unsorted = true;
        return SG_OK;
    }
    if (v->producer)
        return sg_diag_set(D->diag, SG_EDUP,
                           "value '%s' is produced by node '%s' and again by node '%s'", v->name,
                           node_label(v->producer), node_label(n));
    /* Initializers and inputs were all read before the first node. */
    if (v->init || v->sparse_init || (v->flags & SG_VALUE_INPUT))
        return sg_diag_set(D->diag, SG_EDUP, "node '%s' (%s) output '%s' is also a graph %s",
                           node_label(n), n->op_type, v->name,
                           v->flags & SG_VALUE_INPUT ? "input" : "initializer");
    v->producer = n;
    v->producer_index = slot;
    n->outputs[slot] = v;
    return SG_OK;
}

/* The end of a node: indexed by name (from the hash taken when it was
 * prefetched or parsed, when there is one: built later, the index cost a
 * cache miss per node), its arity checked against its op type's schema,
 * linked last. */
static sg_status finish_node(struct dec *D, sg_graph *g, sg_node *n, uint64_t op_h,
                             struct op_info *seen, const uint64_t *node_h)
{
    if (n->name && *n->name) {
        void *first;
        uint64_t h = node_h ? *node_h : sg__strhash(n->name);
        if (sg__strmap_add_h(g->nodes_map, n->name, h, n, &first) != SG_OK)
            return nomem(D);
        if (first)
            g->dup_node_names = true;
    }
    if (g->kind == SG_GRAPH_MAIN || g->kind == SG_GRAPH_SUB) {
        const struct op_info *oi = NULL;
        sg_status st;
        if ((st = op_lookup(D, &n->op_type, op_h, n->domain, seen, &oi)) ||
            (st = sg__node_check_arity_schema(n, oi->schema, oi->opset, D->diag)))
            return st;
    }
    sg__node_link_last(g, n);
    return SG_OK;
}

/* Decode NodeProto bytes `msg` into a node of g bound to its values (*out,
 * as soon as it exists); *op_h, *node_h and *has_node_h are the hashes
 * finish_node takes. */
/* Inputs, outputs and attributes noted in parse_node's scan, to be read in
 * wire order once the node exists (a node with more is scanned again). */
#define NODE_FIELDS_MAX 24

struct field_at {
    const uint8_t *p; /* the field's value */
    uint32_t f;
    int wt;
};

/* Read field f (1 input, 2 output, 5 attribute) whose value starts at r:
 * names are bound to values, attributes decoded. *k numbers the names, for
 * the prefetched hashes. */
static sg_status node_field(struct dec *D, sg_graph *g, sg_node *n, struct wr *r, uint32_t f,
                            int wt, const uint64_t *hashes, size_t *k, struct pendings *pg)
{
    if (f == 1 || f == 2) {
        const char *name;
        size_t len;
        if (!read_name(D, r, wt, "NodeProto input/output name", &name, &len))
            return status_of(D);
        uint32_t slot = f == 1 ? n->n_inputs++ : n->n_outputs++;
        size_t at = (*k)++;
        if (!len) /* omitted optional input/output */
            return SG_OK;
        uint64_t h = hashes && at < RING_NAMES ? hashes[at] : sg__strhash_n(name, len);
        return bind_name(D, g, n, f == 2, slot, name, len, h);
    }
    struct wr sub;
    if (!read_msg(D, r, wt, &sub, "NodeProto.attribute"))
        return status_of(D);
    size_t before = pg->n;
    sg_attr *at = decode_attr(D, sub, n, pg);
    if (!at)
        return status_of(D);
    n->attrs[n->n_attrs++] = at;
    if (pg->n > before)
        g->has_subgraphs = true;
    return SG_OK;
}

static sg_status parse_node(struct dec *D, sg_graph *g, struct wr msg, size_t ordinal,
                            struct pendings *pg, sg_node **out, uint64_t *op_h,
                            struct op_info **op_seen, uint64_t *node_h, bool *has_node_h)
{
    const struct name_hashes *ring = ring_hashes(D, msg.p, ordinal);
    const uint64_t *hashes = ring ? ring->h : NULL;

    /* One scan reads the scalars (so that messages about inputs and
     * attributes can name the node), counts the lists and notes where
     * their fields are: scanning a node three times was a fifth of
     * loading a big graph. */
    const char *name = NULL, *op_type = NULL, *doc = NULL, *domain = NULL;
    struct field_at fields[NODE_FIELDS_MAX];
    size_t n_fields = 0, n_in = 0, n_out = 0, n_attr = 0;
    struct ubuf u = {0};
    struct wr r = msg;
    uint32_t f;
    int wt;
    const uint8_t *start = r.p;
    *op_h = 0;
    *op_seen = NULL;
    while (wr_tag(&r, &f, &wt)) {
        const char **dst = f == 3 ? &name : f == 6 ? &doc : f == 7 ? &domain : NULL;
        if (f == 1 || f == 2 || f == 5) {
            n_in += f == 1;
            n_out += f == 2;
            n_attr += f == 5;
            if (n_fields < NODE_FIELDS_MAX)
                fields[n_fields] = (struct field_at){r.p, f, wt};
            n_fields++;
            wr_skip(&r, wt);
        } else if (f == 4) {
            /* Nodes of one op type share the string of the first. */
            const char *op;
            size_t len;
            if (!read_name(D, &r, wt, "NodeProto string", &op, &len))
                return status_of(D);
            *op_h = sg__strhash_n(op, len);
            struct op_info *seen = sg__strmap_get_n(&D->ops, op, len, *op_h);
            if (!(op_type = seen ? seen->op : sg_arena_strndup(D->a, op, len)))
                return nomem(D);
            *op_seen = seen;
        } else if (dst) {
            if (!(*dst = read_string(D, &r, wt, "NodeProto string")))
                return status_of(D);
        } else if (!skip_unknown(D, &r, wt, start, &u, "NodeProto")) {
            return status_of(D);
        }
        start = r.p;
    }
    if (r.bad)
        return malformed(D, &r, "NodeProto");
    if (n_in > UINT32_MAX / 2 || n_out > UINT32_MAX / 2 || n_attr > UINT32_MAX / 2)
        return sg_diag_set(D->diag, SG_ERANGE, "a node is too large");

    /* The node and its lists in one block; empty lists stay NULL. */
    size_t bytes =
        sizeof(sg_node) + (n_in + n_out + n_attr) * sizeof(void *) + n_in * sizeof(uint32_t);
    uint8_t *block = sg_arena_alloc(D->a, bytes);
    if (!block)
        return nomem(D);
    memset(block, 0, bytes);
    sg_node *n = (sg_node *)block;
    *out = n;
    uint8_t *p = block + sizeof *n;
    n->graph = g;
    n->name = name;
    n->op_type = op_type;
    n->domain = domain;
    if ((doc || u.len) && !(n->more = more_of(D, doc, unknown_of(&u))))
        return nomem(D);
    n->inputs = n_in ? (sg_value **)p : NULL;
    p += n_in * sizeof(void *);
    n->outputs = n_out ? (sg_value **)p : NULL;
    p += n_out * sizeof(void *);
    n->attrs = n_attr ? (sg_attr **)p : NULL;
    p += n_attr * sizeof(void *);
    n->use_pos = n_in ? (uint32_t *)p : NULL;
    n->cap_inputs = (uint32_t)n_in;
    n->cap_outputs = (uint32_t)n_out;
    n->cap_attrs = (uint32_t)n_attr;
    if (!n->op_type)
        return sg_diag_set(D->diag, SG_EPARSE, "node '%s' has no op_type", node_label(n));
    *has_node_h = ring ? ring->has_node_h : n->name && *n->name;
    if (*has_node_h)
        *node_h = ring ? ring->node_h : sg__strhash(n->name);

    /* Inputs, outputs and attributes in wire order. */
    size_t k = 0;
    sg_status st = SG_OK;
    if (n_fields <= NODE_FIELDS_MAX) {
        for (size_t i = 0; i < n_fields && !st; i++) {
            struct wr fr = {fields[i].p, msg.end, false};
            st = node_field(D, g, n, &fr, fields[i].f, fields[i].wt, hashes, &k, pg);
        }
        return st;
    }
    r = msg;
    while (!st && wr_tag(&r, &f, &wt)) {
        if (f == 1 || f == 2 || f == 5)
            st = node_field(D, g, n, &r, f, wt, hashes, &k, pg);
        else
            wr_skip(&r, wt);
    }
    return st;
}

static sg_status decode_node(struct dec *D, sg_graph *g, struct wr msg, size_t ordinal,
                             struct pendings *pg)
{
    sg_node *n = NULL;
    uint64_t op_h, node_h = 0;
    struct op_info *op_seen;
    bool has_node_h = false;
    sg_status st = parse_node(D, g, msg, ordinal, pg, &n, &op_h, &op_seen, &node_h, &has_node_h);
    return st ? st : finish_node(D, g, n, op_h, op_seen, has_node_h ? &node_h : NULL);
}

/* A graph input, output or value_info entry. */
static sg_status add_vi(struct dec *D, sg_graph *g, struct wr msg, uint32_t flag, const char *what)
{
    const char *name = NULL, *doc = NULL;
    struct wr type = {NULL, NULL, true};
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    while (wr_tag(&msg, &f, &wt)) {
        if (f == 1) {
            if (!(name = read_string(D, &msg, wt, "ValueInfoProto.name")))
                return status_of(D);
        } else if (f == 2) {
            if (!read_msg(D, &msg, wt, &type, "ValueInfoProto.type"))
                return status_of(D);
        } else if (f == 3) {
            if (!(doc = read_string(D, &msg, wt, "ValueInfoProto.doc_string")))
                return status_of(D);
        } else if (!skip_unknown(D, &msg, wt, start, &u, "ValueInfoProto")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "ValueInfoProto");
    if (!name || !*name)
        return sg_diag_set(D->diag, SG_EPARSE, "graph '%s' has a %s without a name",
                           g->name ? g->name : "", what);
    sg_value *v = get_value(D, g, name);
    if (!v)
        return SG_ENOMEM;
    if ((v->flags & flag) && flag != SG_VALUE_OUTPUT)
        return sg_diag_set(D->diag, SG_EDUP, "%s '%s' is listed twice", what, name);
    if (!(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT | SG_VALUE_INFO))) {
        if (!type.bad && !(v->type = decode_type(D, type, 0))) {
            sg_diag_prefix(D->diag, "%s '%s'", what, name);
            return status_of(D);
        }
        if ((doc || u.len) && !(v->more = more_of(D, doc, unknown_of(&u))))
            return nomem(D);
    }
    sg_status st;
    switch (flag) {
    case SG_VALUE_INPUT:
        st = sg__ptr_push(D->a, (void ***)&g->inputs, &g->n_inputs, &g->cap_inputs, v);
        break;
    case SG_VALUE_OUTPUT:
        st = sg__ptr_push(D->a, (void ***)&g->outputs, &g->n_outputs, &g->cap_outputs, v);
        break;
    default:
        st = sg__ptr_push(D->a, (void ***)&g->value_info, &g->n_value_info, &g->cap_value_info, v);
        break;
    }
    if (st)
        return nomem(D);
    v->flags |= flag;
    return SG_OK;
}

/* Values read but not defined in g: captures of an enclosing graph, or an
 * error in the main graph. Checked in node order for a stable message. */
static sg_status resolve_free_names(struct dec *D, sg_graph *g)
{
    bool lenient = g->kind == SG_GRAPH_FUNCTION || g->kind == SG_GRAPH_TRAINING;
    /* Without a forward reference every input was defined when it was read. */
    for (sg_node *n = g->maybe_unsorted ? g->first : NULL; n; n = n->next) {
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            sg_value *v = n->inputs[i];
            if (!v || v->producer || v->outer || v->init || v->sparse_init ||
                (v->flags & SG_VALUE_INPUT))
                continue;
            sg_value *outer = g->parent ? sg_graph_resolve(g->parent, v->name, D->diag) : NULL;
            if (outer) {
                if (sg__value_add_use(outer, g->owner, SG_USE_IMPLICIT) != SG_OK)
                    return nomem(D);
                v->outer = outer;
            } else if (!lenient) {
                return sg_diag_set(D->diag, SG_EUNDEF,
                                   "node '%s' (%s) reads '%s', which nothing defines",
                                   node_label(n), n->op_type, v->name);
            }
        }
    }
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        sg_value *v = g->outputs[i];
        if (v->producer || v->outer || v->init || v->sparse_init || (v->flags & SG_VALUE_INPUT))
            continue;
        sg_value *outer = g->parent ? sg_graph_resolve(g->parent, v->name, D->diag) : NULL;
        if (outer) {
            if (sg__value_add_use(outer, g->owner, SG_USE_IMPLICIT) != SG_OK)
                return nomem(D);
            v->outer = outer;
        } else if (!lenient) {
            return sg_diag_set(D->diag, SG_EUNDEF, "graph output '%s' is never defined", v->name);
        }
    }
    return SG_OK;
}

static sg_status decode_annotation(struct dec *D, struct wr msg, sg_annotation *an)
{
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    sg_status st = decode_kvs(D, msg, 2, &an->params, &an->n_params);
    if (st)
        return st;
    while (wr_tag(&msg, &f, &wt)) {
        if (f == 1) {
            if (!(an->tensor_name = read_string(D, &msg, wt, "TensorAnnotation.tensor_name")))
                return status_of(D);
        } else if (f == 2) {
            wr_skip(&msg, wt);
        } else if (!skip_unknown(D, &msg, wt, start, &u, "TensorAnnotation")) {
            return status_of(D);
        }
        start = msg.p;
    }
    if (msg.bad)
        return malformed(D, &msg, "TensorAnnotation");
    an->unknown = unknown_of(&u);
    return SG_OK;
}

/* The graph fields: a function body has no GraphProto, so its parts come
 * from the FunctionProto (see decode_function). */
struct graph_src {
    struct wr msg;      /* GraphProto bytes, or the FunctionProto for a body */
    bool function_body; /* inputs/outputs are name strings (fields 4, 5), nodes field 7 */
};

static sg_graph *decode_graph(struct dec *D, struct graph_src src, enum sg_graph_kind kind,
                              sg_graph *parent, sg_node *owner, int depth);

static sg_status decode_pending(struct dec *D, sg_graph *g, struct pendings *pg, int depth)
{
    for (size_t i = 0; i < pg->n; i++) {
        struct pending *p = &pg->v[i];
        struct graph_src src = {p->bytes, false};
        sg_graph *sub = decode_graph(D, src, SG_GRAPH_SUB, g, p->node, depth + 1);
        if (!sub) {
            sg_diag_prefix(D->diag, "in subgraph '%s' of node '%s'",
                           p->attr->name ? p->attr->name : "", node_label(p->node));
            return status_of(D);
        }
        if (p->index < 0)
            p->attr->g = sub;
        else
            p->attr->graphs[p->index] = sub;
    }
    return SG_OK;
}

/* A name list entry of a function body (FunctionProto input/output). */
static sg_status add_param(struct dec *D, sg_graph *g, struct wr *r, int wt, uint32_t flag)
{
    const char *name = read_string(D, r, wt, "FunctionProto input/output");
    if (!name)
        return status_of(D);
    sg_value *v = get_value(D, g, name);
    if (!v)
        return SG_ENOMEM;
    sg_value ***arr = flag == SG_VALUE_INPUT ? &g->inputs : &g->outputs;
    uint32_t *n = flag == SG_VALUE_INPUT ? &g->n_inputs : &g->n_outputs;
    uint32_t *cap = flag == SG_VALUE_INPUT ? &g->cap_inputs : &g->cap_outputs;
    if (sg__ptr_push(D->a, (void ***)arr, n, cap, v))
        return nomem(D);
    v->flags |= flag;
    return SG_OK;
}

static sg_graph *decode_graph(struct dec *D, struct graph_src src, enum sg_graph_kind kind,
                              sg_graph *parent, sg_node *owner, int depth)
{
    if (depth > MAX_GRAPH_DEPTH) {
        sg_diag_set(D->diag, SG_EPARSE, "subgraphs nested deeper than %d levels", MAX_GRAPH_DEPTH);
        return NULL;
    }
    sg_graph *g = sg__graph_create(D->m, kind, parent, owner);
    if (!g) {
        nomem(D);
        return NULL;
    }
    struct pendings pg = {0};
    const uint32_t F_NODE = src.function_body ? 7 : 1;
    const uint32_t F_IN = src.function_body ? 4 : 11, F_OUT = src.function_body ? 5 : 12;
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    struct wr r;
    const uint8_t *start;
    size_t node_count = 0, n_sparse = 0;

    /* Pass 1: initializers and inputs (nodes may read them), and what sizes
     * the value map: every value is an input, an initializer or a node
     * output. Unknown fields are collected here, once. */
    size_t expect = 0;
    r = src.msg;
    start = r.p;
    while (wr_tag(&r, &f, &wt)) {
        struct wr sub;
        if (f == F_NODE) {
            if (!read_msg(D, &r, wt, &sub, "GraphProto.node"))
                goto fail;
            expect++; /* most nodes make one value; the map grows for more */
            node_count++;
        } else if (src.function_body) {
            wr_skip(&r, wt); /* the FunctionProto's other fields are not the graph's */
        } else if (f == 2) {
            if (!(g->name = read_string(D, &r, wt, "GraphProto.name")))
                goto fail;
        } else if (f == 10) {
            if (!(g->doc = read_string(D, &r, wt, "GraphProto.doc_string")))
                goto fail;
        } else if (f == 5 || f == 11 || f == 12 || f == 13 || f == 14 || f == 15) {
            expect += f == 5 || f == 11 || f == 15;
            n_sparse += f == 15;
            wr_skip(&r, wt);
        } else if (!skip_unknown(D, &r, wt, start, &u, "GraphProto")) {
            goto fail;
        }
        start = r.p;
    }
    if (r.bad) {
        malformed(D, &r, "GraphProto");
        goto fail;
    }
    g->unknown = unknown_of(&u);
    if (src.function_body)
        expect += count_field(src.msg, F_IN);
    if (sg__strmap_reserve(g->values_map, expect) || sg__strmap_reserve(g->nodes_map, node_count)) {
        nomem(D);
        goto fail;
    }
    g->nodes_map_built = true; /* kept up to date from here on */
    if (n_sparse && !(g->sparse_inits = sg_arena_calloc(D->a, n_sparse, sizeof *g->sparse_inits))) {
        nomem(D);
        goto fail;
    }
    struct init_ahead ahead = {.r = src.msg};
    r = src.msg;
    while (wr_tag(&r, &f, &wt)) {
        struct wr sub;
        if (src.function_body) {
            if (f == F_IN) {
                if (add_param(D, g, &r, wt, SG_VALUE_INPUT))
                    goto fail;
            } else {
                wr_skip(&r, wt);
            }
        } else if (f == 5) {
            if (!read_msg(D, &r, wt, &sub, "GraphProto.initializer"))
                goto fail;
            for (; ahead.issued <= ahead.done + PREFETCH_AHEAD; ahead.issued++)
                if (!prefetch_init_name(g, &ahead))
                    break;
            sg_tensor *t = decode_tensor(D, sub);
            if (!t)
                goto fail;
            if (!t->name || !*t->name) {
                sg_diag_set(D->diag, SG_EPARSE, "initializer #%u has no name", g->n_inits);
                goto fail;
            }
            const struct init_name *ring = &ahead.ring[ahead.done++ % RING];
            uint64_t h =
                ring->msg == sub.p && strlen(t->name) == ring->len ? ring->h : sg__strhash(t->name);
            sg_value *v = get_value_h(D, g, t->name, h);
            if (!v)
                goto fail;
            if (v->init) {
                sg_diag_set(D->diag, SG_EDUP, "initializer '%s' is defined twice", t->name);
                goto fail;
            }
            v->init = t;
            v->flags |= SG_VALUE_INITIALIZER;
            if (sg__ptr_push(D->a, (void ***)&g->inits, &g->n_inits, &g->cap_inits, v)) {
                nomem(D);
                goto fail;
            }
        } else if (f == 15) {
            if (!read_msg(D, &r, wt, &sub, "GraphProto.sparse_initializer"))
                goto fail;
            sg_sparse *s = decode_sparse(D, sub);
            if (!s)
                goto fail;
            g->sparse_inits[g->n_sparse_inits++] = s;
            const char *name = s->values ? s->values->name : NULL;
            if (!name || !*name) {
                sg_diag_set(D->diag, SG_EPARSE, "sparse initializer #%u has no name",
                            g->n_sparse_inits - 1);
                goto fail;
            }
            sg_value *v = get_value(D, g, name);
            if (!v)
                goto fail;
            if (v->init || v->sparse_init) {
                sg_diag_set(D->diag, SG_EDUP, "initializer '%s' is defined twice", name);
                goto fail;
            }
            v->sparse_init = s;
            v->flags |= SG_VALUE_INITIALIZER;
        } else if (f == 11) {
            if (!read_msg(D, &r, wt, &sub, "GraphProto.input") ||
                add_vi(D, g, sub, SG_VALUE_INPUT, "graph input"))
                goto fail;
        } else {
            wr_skip(&r, wt);
        }
    }

    /* Pass 2: nodes, each name lookup prefetched a few nodes ahead. */
    {
        struct wr ahead = src.msg;
        size_t issued = 0, i = 0;
        r = src.msg;
        while (wr_tag(&r, &f, &wt)) {
            if (f != F_NODE) {
                wr_skip(&r, wt);
                continue;
            }
            struct wr sub = wr_len(&r);
            while (issued < node_count && issued <= i + PREFETCH_AHEAD) {
                uint32_t af;
                int awt;
                if (!wr_tag(&ahead, &af, &awt))
                    break;
                if (af != F_NODE) {
                    wr_skip(&ahead, awt);
                    continue;
                }
                prefetch_names(D, g, wr_len(&ahead), issued);
                issued++;
            }
            if (decode_node(D, g, sub, i, &pg)) {
                sg_diag_prefix(D->diag, "node #%zu", i);
                goto fail;
            }
            i++;
        }
    }

    /* Pass 3: outputs, value_info, annotations. */
    {
        size_t n_ann = src.function_body ? 0 : count_field(src.msg, 14);
        if (n_ann && !(g->annotations = sg_arena_calloc(D->a, n_ann, sizeof *g->annotations))) {
            nomem(D);
            goto fail;
        }
        r = src.msg;
        while (wr_tag(&r, &f, &wt)) {
            struct wr sub;
            if (f == F_OUT && src.function_body) {
                if (add_param(D, g, &r, wt, SG_VALUE_OUTPUT))
                    goto fail;
            } else if (src.function_body) {
                wr_skip(&r, wt);
            } else if (f == 12 || f == 13) {
                if (!read_msg(D, &r, wt, &sub, "GraphProto value list") ||
                    add_vi(D, g, sub, f == 12 ? SG_VALUE_OUTPUT : SG_VALUE_INFO,
                           f == 12 ? "graph output" : "value_info"))
                    goto fail;
            } else if (f == 14) {
                if (!read_msg(D, &r, wt, &sub, "GraphProto.quantization_annotation") ||
                    decode_annotation(D, sub, &g->annotations[g->n_annotations]))
                    goto fail;
                g->n_annotations++;
            } else {
                wr_skip(&r, wt);
            }
        }
    }
    if (resolve_free_names(D, g) || decode_pending(D, g, &pg, depth))
        goto fail;
    sg_free(pg.v);
    return g;
fail:
    sg_free(pg.v);
    /* The arena keeps the memory; the maps of this graph (and of subgraphs
     * already attached to its nodes) are released here. */
    sg__graph_release(g);
    return NULL;
}

/* ------------------------------------------------------------------ model */

static sg_status decode_function(struct dec *D, struct wr msg, sg_function *fn)
{
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    size_t n_attr = count_field(msg, 6);
    if (n_attr && !(fn->attributes = sg_arena_calloc(D->a, n_attr, sizeof *fn->attributes)))
        return nomem(D);
    sg_status st = decode_opsets(D, msg, 9, &fn->opsets, &fn->n_opsets);
    if (st)
        return st;
    struct wr r = msg;
    while (wr_tag(&r, &f, &wt)) {
        if (f == 1) {
            if (!(fn->name = read_string(D, &r, wt, "FunctionProto.name")))
                return status_of(D);
        } else if (f == 6) {
            if (!(fn->attributes[fn->n_attributes++] =
                      read_string(D, &r, wt, "FunctionProto.attribute")))
                return status_of(D);
        } else if (f == 8) {
            if (!(fn->doc = read_string(D, &r, wt, "FunctionProto.doc_string")))
                return status_of(D);
        } else if (f == 10) {
            if (!(fn->domain = read_string(D, &r, wt, "FunctionProto.domain")))
                return status_of(D);
        } else if (f == 4 || f == 5 || f == 7 || f == 9) {
            wr_skip(&r, wt);
        } else if (!skip_unknown(D, &r, wt, start, &u, "FunctionProto")) {
            return status_of(D);
        }
        start = r.p;
    }
    if (r.bad)
        return malformed(D, &r, "FunctionProto");
    fn->unknown = unknown_of(&u);
    struct graph_src src = {msg, true};
    if (!(fn->body = decode_graph(D, src, SG_GRAPH_FUNCTION, NULL, NULL, 0))) {
        sg_diag_prefix(D->diag, "function '%s'", fn->name ? fn->name : "");
        return status_of(D);
    }
    return SG_OK;
}

static sg_status decode_training(struct dec *D, struct wr msg, sg_training *t)
{
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    const uint8_t *start = msg.p;
    sg_status st;
    if ((st = decode_kvs(D, msg, 3, &t->init_binding, &t->n_init_binding)) ||
        (st = decode_kvs(D, msg, 4, &t->update_binding, &t->n_update_binding)))
        return st;
    struct wr r = msg;
    while (wr_tag(&r, &f, &wt)) {
        struct wr sub;
        if (f == 1 || f == 2) {
            if (!read_msg(D, &r, wt, &sub, "TrainingInfoProto graph"))
                return status_of(D);
            sg_graph **dst = f == 1 ? &t->initialization : &t->algorithm;
            if (*dst)
                return sg_diag_set(D->diag, SG_EPARSE,
                                   "TrainingInfoProto.%s appears twice; "
                                   "not supported",
                                   f == 1 ? "initialization" : "algorithm");
            struct graph_src src = {sub, false};
            if (!(*dst = decode_graph(D, src, SG_GRAPH_TRAINING, NULL, NULL, 0)))
                return status_of(D);
        } else if (f == 3 || f == 4) {
            wr_skip(&r, wt);
        } else if (!skip_unknown(D, &r, wt, start, &u, "TrainingInfoProto")) {
            return status_of(D);
        }
        start = r.p;
    }
    if (r.bad)
        return malformed(D, &r, "TrainingInfoProto");
    t->unknown = unknown_of(&u);
    return SG_OK;
}

sg_status sg__decode_model(sg_model *m, const uint8_t *data, size_t len, struct sg_diag *diag)
{
    struct dec *D = sg_calloc(1, sizeof *D);
    if (!D)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    D->m = m;
    D->a = m->arena;
    D->diag = diag;
    D->base = data;
    struct wr msg = {data, data + len, false};
    struct ubuf u = {0};
    uint32_t f;
    int wt;
    sg_status st = SG_OK;
    struct wr graph = {NULL, NULL, true};
    size_t n_fn = count_field(msg, 25), n_ti = count_field(msg, 20);

    /* Model scalars and opsets first: the graph's arity checks need the
     * opsets, which come after the graph in the file. */
    if ((st = decode_opsets(D, msg, 8, &m->opsets, &m->n_opsets)) ||
        (st = decode_kvs(D, msg, 14, &m->metadata, &m->n_metadata)))
        goto out;
    struct wr r = msg;
    const uint8_t *start = r.p;
    while (wr_tag(&r, &f, &wt)) {
        uint64_t v = 0;
        bool ok = true;
        switch (f) {
        case 1:
            ok = read_varint(D, &r, wt, &v, "ModelProto.ir_version");
            m->has_ir_version = true;
            m->ir_version = (int64_t)v;
            break;
        case 2:
            ok = (m->producer_name = read_string(D, &r, wt, "ModelProto.producer_name")) != NULL;
            break;
        case 3:
            ok = (m->producer_version = read_string(D, &r, wt, "ModelProto.producer_version")) !=
                 NULL;
            break;
        case 4:
            ok = (m->domain = read_string(D, &r, wt, "ModelProto.domain")) != NULL;
            break;
        case 5:
            ok = read_varint(D, &r, wt, &v, "ModelProto.model_version");
            m->has_model_version = true;
            m->model_version = (int64_t)v;
            break;
        case 6:
            ok = (m->doc = read_string(D, &r, wt, "ModelProto.doc_string")) != NULL;
            break;
        case 7:
            if (!graph.bad) {
                st = sg_diag_set(diag, SG_EPARSE, "ModelProto.graph appears twice; not supported");
                goto out;
            }
            ok = read_msg(D, &r, wt, &graph, "ModelProto.graph");
            break;
        case 8:
        case 14:
        case 20:
        case 25:
            wr_skip(&r, wt);
            break;
        default:
            ok = skip_unknown(D, &r, wt, start, &u, "ModelProto");
            break;
        }
        if (!ok) {
            st = status_of(D);
            goto out;
        }
        start = r.p;
    }
    if (r.bad) {
        st = malformed(D, &r, "ModelProto");
        goto out;
    }
    m->unknown = unknown_of(&u);
    if (graph.bad) {
        st = sg_diag_set(diag, SG_EPARSE, "not an ONNX model: it has no graph");
        goto out;
    }
    if (!m->n_opsets) {
        st = sg_diag_set(diag, SG_EPARSE,
                         "not a valid ONNX model: it imports no opset (opset_import is empty)");
        goto out;
    }
    /* Replace the empty graph sg_model_create made. */
    sg__graph_release(m->graph);
    m->graph = NULL;
    struct graph_src src = {graph, false};
    if (!(m->graph = decode_graph(D, src, SG_GRAPH_MAIN, NULL, NULL, 0))) {
        st = status_of(D);
        goto out;
    }
    if (n_fn && !(m->functions = sg_arena_calloc(D->a, n_fn, sizeof *m->functions))) {
        st = nomem(D);
        goto out;
    }
    if (n_ti && !(m->training = sg_arena_calloc(D->a, n_ti, sizeof *m->training))) {
        st = nomem(D);
        goto out;
    }
    r = msg;
    while (wr_tag(&r, &f, &wt)) {
        struct wr sub;
        if (f == 25) {
            if (!read_msg(D, &r, wt, &sub, "ModelProto.functions")) {
                st = status_of(D);
                goto out;
            }
            st = decode_function(D, sub, &m->functions[m->n_functions]);
            if (st)
                goto out;
            m->n_functions++;
        } else if (f == 20) {
            if (!read_msg(D, &r, wt, &sub, "ModelProto.training_info")) {
                st = status_of(D);
                goto out;
            }
            m->n_training++;
            st = decode_training(D, sub, &m->training[m->n_training - 1]);
            if (st)
                goto out;
        } else {
            wr_skip(&r, wt);
        }
    }
out:
    sg__strmap_free(&D->ops);
    sg_free(D);
    return st;
}

sg_tensor *sg__decode_tensor_bytes(sg_model *m, const uint8_t *data, size_t len,
                                   struct sg_diag *diag)
{
    struct dec D = {.m = m, .a = m->arena, .diag = diag, .base = data};
    struct wr msg = {data, data + len, false};
    return decode_tensor(&D, msg);
}

/* ------------------------------------------- checks of single messages */

sg_status sg__check_node_bytes(sg_model *m, const uint8_t *data, size_t len, struct sg_diag *diag)
{
    struct dec D = {.m = m, .a = m->arena, .diag = diag, .base = data};
    struct wr r = {data, data + len, false};
    struct pendings pg = {0};
    sg_node owner = {0};
    uint32_t f;
    int wt;
    bool has_op = false;
    sg_status st = SG_OK;
    while (!st && wr_tag(&r, &f, &wt)) {
        const char *s;
        size_t n;
        struct wr sub;
        if (f == 1 || f == 2) {
            if (!read_name(&D, &r, wt, "NodeProto input/output name", &s, &n))
                st = status_of(&D);
        } else if (f == 3 || f == 4 || f == 6 || f == 7) {
            if (!read_name(&D, &r, wt, "NodeProto string", &s, &n))
                st = status_of(&D);
            has_op |= f == 4;
        } else if (f == 5) {
            if (!read_msg(&D, &r, wt, &sub, "NodeProto.attribute") ||
                !decode_attr(&D, sub, &owner, &pg))
                st = status_of(&D);
        } else {
            wr_skip(&r, wt);
            if (r.bad)
                st = malformed(&D, &r, "NodeProto");
        }
    }
    sg_free(pg.v);
    if (!st && r.bad)
        st = malformed(&D, &r, "NodeProto");
    if (!st && !has_op)
        st = sg_diag_set(diag, SG_EPARSE, "a node has no op_type");
    return st;
}

sg_status sg__check_value_info_bytes(sg_model *m, const uint8_t *data, size_t len,
                                     struct sg_diag *diag)
{
    struct dec D = {.m = m, .a = m->arena, .diag = diag, .base = data};
    struct wr r = {data, data + len, false};
    uint32_t f;
    int wt;
    while (wr_tag(&r, &f, &wt)) {
        const char *s;
        size_t n;
        struct wr sub;
        if (f == 1 || f == 3) {
            if (!read_name(&D, &r, wt, "ValueInfoProto string", &s, &n))
                return status_of(&D);
        } else if (f == 2) {
            if (!read_msg(&D, &r, wt, &sub, "ValueInfoProto.type") || !decode_type(&D, sub, 0))
                return status_of(&D);
        } else {
            wr_skip(&r, wt);
            if (r.bad)
                return malformed(&D, &r, "ValueInfoProto");
        }
    }
    return r.bad ? malformed(&D, &r, "ValueInfoProto") : SG_OK;
}
