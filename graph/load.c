/*
 * load.c - ONNX file -> IR.
 *
 * The file is mapped and unpacked by protobuf-c straight into the model
 * arena, so the IR uses the unpacked strings and payloads in place; the
 * message structs themselves are abandoned in the arena. Every field is
 * carried over with its presence so that save.c writes back the same
 * ModelProto. Untrusted input is validated here: names, producers, dims,
 * payload sizes and external data locations.
 */
#include "ir_impl.h"
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_opschema.h"

#include "onnx.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Hashes of the input and output names of the nodes being loaded, computed
 * once when their lookups are prefetched (see load_graph). */
#define PREFETCH_AHEAD 8
#define RING 16
#define RING_NAMES 8

struct name_hashes {
    uint64_t h[RING_NAMES];
    const void *node; /* the NodeProto they belong to */
};

/* What the arity check needs per (op type, domain), looked up once. */
struct op_info {
    const char *op, *domain;
    const struct sg_op_schema *schema;
    int64_t opset;
    struct op_info *next; /* same op type, another domain */
};

struct loader {
    sg_model *m;
    sg_arena *a;
    struct sg_diag *diag;
    struct sg__strmap ops; /* op type -> struct op_info list */
    struct name_hashes ring[RING];
};

#define UNKNOWN(msg) ((sg_unknown){(msg)->base.n_unknown_fields, (msg)->base.unknown_fields})

static sg_status nomem(struct loader *L)
{
    return sg_diag_set(L->diag, SG_ENOMEM, "out of memory");
}

static sg_kv *convert_kvs(struct loader *L, Onnx__StringStringEntryProto **src, size_t n)
{
    sg_kv *kv = sg_arena_calloc(L->a, n, sizeof *kv);
    if (!kv)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        kv[i].key = src[i]->key;
        kv[i].value = src[i]->value;
    }
    return kv;
}

static sg_opset *convert_opsets(struct loader *L, Onnx__OperatorSetIdProto **src, size_t n)
{
    sg_opset *o = sg_arena_calloc(L->a, n, sizeof *o);
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        o[i].domain = src[i]->domain;
        o[i].has_version = src[i]->has_version;
        o[i].version = src[i]->version;
        o[i].unknown = UNKNOWN(src[i]);
    }
    return o;
}

/* ------------------------------------------------------------------ types */

#define MAX_TYPE_DEPTH 64

static sg_type *convert_type(struct loader *L, const Onnx__TypeProto *p, int depth);

static sg_shape *convert_shape(struct loader *L, const Onnx__TensorShapeProto *p)
{
    sg_shape *s = sg_arena_calloc(L->a, 1, sizeof *s);
    if (!s)
        return NULL;
    s->rank = (uint32_t)p->n_dim;
    s->unknown = UNKNOWN(p);
    s->dims = sg_arena_calloc(L->a, p->n_dim, sizeof *s->dims);
    if (!s->dims)
        return NULL;
    for (size_t i = 0; i < p->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = p->dim[i];
        sg_dim *o = &s->dims[i];
        o->denotation = d->denotation;
        o->unknown = UNKNOWN(d);
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            o->kind = SG_DIM_VALUE;
            o->value = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            o->kind = SG_DIM_PARAM;
            o->param = d->dim_param;
        }
    }
    return s;
}

static sg_type *convert_type(struct loader *L, const Onnx__TypeProto *p, int depth)
{
    if (!p)
        return NULL;
    if (depth > MAX_TYPE_DEPTH) {
        sg_diag_set(L->diag, SG_EPARSE, "type nested deeper than %d levels", MAX_TYPE_DEPTH);
        return NULL;
    }
    sg_type *t = sg_arena_calloc(L->a, 1, sizeof *t);
    if (!t) {
        nomem(L);
        return NULL;
    }
    t->denotation = p->denotation;
    t->unknown = UNKNOWN(p);
    const Onnx__TypeProto *elem = NULL;
    switch (p->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: {
        /* Tensor and SparseTensor have the same layout of fields. */
        const Onnx__TypeProto__Tensor *tt = p->tensor_type;
        const Onnx__TypeProto__SparseTensor *st = p->sparse_tensor_type;
        bool sparse = p->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
        t->kind = sparse ? SG_TYPE_SPARSE_TENSOR : SG_TYPE_TENSOR;
        t->has_elem_type = sparse ? st->has_elem_type : tt->has_elem_type;
        t->elem_type = sparse ? st->elem_type : tt->elem_type;
        t->inner_unknown = sparse ? UNKNOWN(st) : UNKNOWN(tt);
        const Onnx__TensorShapeProto *shape = sparse ? st->shape : tt->shape;
        if (shape && !(t->shape = convert_shape(L, shape))) {
            nomem(L);
            return NULL;
        }
        return t;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        t->kind = SG_TYPE_SEQUENCE;
        t->inner_unknown = UNKNOWN(p->sequence_type);
        elem = p->sequence_type->elem_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        t->kind = SG_TYPE_OPTIONAL;
        t->inner_unknown = UNKNOWN(p->optional_type);
        elem = p->optional_type->elem_type;
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        t->kind = SG_TYPE_MAP;
        t->inner_unknown = UNKNOWN(p->map_type);
        t->has_key_type = p->map_type->has_key_type;
        t->key_type = p->map_type->key_type;
        elem = p->map_type->value_type;
        break;
    default:
        t->kind = SG_TYPE_NONE;
        return t;
    }
    if (elem && !(t->elem = convert_type(L, elem, depth + 1)))
        return NULL;
    return t;
}

/* ---------------------------------------------------------------- tensors */

static const char *tlabel(const sg_tensor *t)
{
    return t->name && *t->name ? t->name : "(unnamed)";
}

/* Check that the in-file payload agrees with dims and dtype. */
static sg_status check_payload(struct loader *L, const sg_tensor *t)
{
    for (uint32_t i = 0; i < t->rank; i++)
        if (t->dims[i] < 0)
            return sg_diag_set(L->diag, SG_ERANGE, "tensor '%s' has negative dimension %" PRId64,
                               tlabel(t), t->dims[i]);
    int64_t numel = sg_tensor_numel(t);
    if (numel < 0)
        return sg_diag_set(L->diag, SG_ERANGE, "tensor '%s' has dimensions whose product overflows",
                           tlabel(t));
    if (t->has_segment || sg_tensor_is_external(t) || !t->has_dtype || !sg_dtype_valid(t->dtype))
        return SG_OK; /* partial, elsewhere, or a type we cannot size */
    size_t es = sg_dtype_size(t->dtype);
    size_t payloads = (t->has_raw ? 1 : 0) + (t->n_float ? 1 : 0) + (t->n_int32 ? 1 : 0) +
                      (t->n_int64 ? 1 : 0) + (t->n_double ? 1 : 0) + (t->n_uint64 ? 1 : 0) +
                      (t->n_string ? 1 : 0);
    if (payloads == 0)
        return SG_OK; /* no data given: an empty or shape-only tensor */
    if (t->dtype == SG_DTYPE_STRING) {
        if (t->n_string != (uint64_t)numel)
            return sg_diag_set(L->diag, SG_ESHAPE,
                               "tensor '%s' has %zu strings but its dims need %" PRId64, tlabel(t),
                               t->n_string, numel);
        return SG_OK;
    }
    if (es == 0)
        return sg_diag_set(L->diag, SG_EPARSE, "tensor '%s' has data but data type %s", tlabel(t),
                           sg_dtype_name(t->dtype));
    if ((uint64_t)numel > SIZE_MAX / es)
        return sg_diag_set(L->diag, SG_ERANGE, "tensor '%s' is too large", tlabel(t));
    if (t->has_raw) {
        if (t->raw_len != (size_t)numel * es)
            return sg_diag_set(L->diag, SG_ESHAPE,
                               "tensor '%s' has %zu bytes of data but dims %s need %zu", tlabel(t),
                               t->raw_len, sg__dims_str(t->dims, t->rank), (size_t)numel * es);
        return SG_OK;
    }
    size_t dummy;
    struct sg_diag d = {0};
    if (!sg_tensor_data(L->m, (sg_tensor *)t, &dummy, &d))
        return sg_diag_set(L->diag, d.status, "%s", d.msg);
    return SG_OK;
}

sg_tensor *sg__convert_tensor(struct loader *L, const Onnx__TensorProto *p);

sg_tensor *sg__convert_tensor(struct loader *L, const Onnx__TensorProto *p)
{
    sg_tensor *t = sg_arena_calloc(L->a, 1, sizeof *t);
    if (!t) {
        nomem(L);
        return NULL;
    }
    t->name = p->name;
    t->doc = p->doc_string;
    t->has_dtype = p->has_data_type;
    t->dtype = p->data_type;
    t->dims = p->dims;
    t->rank = (uint32_t)p->n_dims;
    if (p->n_dims > SG_MAX_RANK) {
        sg_diag_set(L->diag, SG_ERANGE, "tensor '%s' has rank %zu (more than %d)",
                    p->name ? p->name : "(unnamed)", p->n_dims, SG_MAX_RANK);
        return NULL;
    }
    if (p->segment) {
        t->has_segment = true;
        t->has_seg_begin = p->segment->has_begin;
        t->seg_begin = p->segment->begin;
        t->has_seg_end = p->segment->has_end;
        t->seg_end = p->segment->end;
        t->seg_unknown = UNKNOWN(p->segment);
    }
    t->has_raw = p->has_raw_data;
    t->raw = p->raw_data.data;
    t->raw_len = p->raw_data.len;
    t->float_data = p->float_data, t->n_float = p->n_float_data;
    t->int32_data = p->int32_data, t->n_int32 = p->n_int32_data;
    t->int64_data = p->int64_data, t->n_int64 = p->n_int64_data;
    t->double_data = p->double_data, t->n_double = p->n_double_data;
    t->uint64_data = p->uint64_data, t->n_uint64 = p->n_uint64_data;
    /* ProtobufCBinaryData and sg_bytes share layout (pointer, length) but not
     * field order; copy them. */
    if (p->n_string_data) {
        sg_bytes *s = sg_arena_calloc(L->a, p->n_string_data, sizeof *s);
        if (!s) {
            nomem(L);
            return NULL;
        }
        for (size_t i = 0; i < p->n_string_data; i++) {
            s[i].data = p->string_data[i].data;
            s[i].len = p->string_data[i].len;
        }
        t->string_data = s;
        t->n_string = p->n_string_data;
    }
    t->has_data_location = p->has_data_location;
    t->data_location = (int32_t)p->data_location;
    if (sg_tensor_is_external(t))
        L->m->has_external = true;
    if (p->n_external_data) {
        t->external = convert_kvs(L, p->external_data, p->n_external_data);
        t->n_external = p->n_external_data;
        if (!t->external) {
            nomem(L);
            return NULL;
        }
    }
    t->unknown = UNKNOWN(p);
    if (check_payload(L, t))
        return NULL;
    return t;
}

sg_tensor *sg__tensor_from_proto(sg_model *m, const void *proto, struct sg_diag *diag)
{
    struct loader L = {.m = m, .a = m->arena, .diag = diag};
    return sg__convert_tensor(&L, proto);
}

static sg_sparse *convert_sparse(struct loader *L, const Onnx__SparseTensorProto *p)
{
    sg_sparse *s = sg_arena_calloc(L->a, 1, sizeof *s);
    if (!s) {
        nomem(L);
        return NULL;
    }
    s->dims = p->dims;
    s->rank = (uint32_t)p->n_dims;
    s->unknown = UNKNOWN(p);
    if (p->values && !(s->values = sg__convert_tensor(L, p->values)))
        return NULL;
    if (p->indices && !(s->indices = sg__convert_tensor(L, p->indices)))
        return NULL;
    return s;
}

/* ------------------------------------------------------------- attributes */

static sg_attr *convert_attr(struct loader *L, const Onnx__AttributeProto *p, const sg_node *owner)
{
    sg_attr *at = sg_arena_calloc(L->a, 1, sizeof *at);
    if (!at) {
        nomem(L);
        return NULL;
    }
    at->name = p->name;
    at->ref_attr_name = p->ref_attr_name;
    at->doc = p->doc_string;
    at->has_type = p->has_type;
    at->type = (enum sg_attr_type)p->type;
    at->has_f = p->has_f, at->f = p->f;
    at->has_i = p->has_i, at->i = p->i;
    at->has_s = p->has_s, at->s.data = p->s.data, at->s.len = p->s.len;
    at->floats = p->floats, at->n_floats = p->n_floats;
    at->ints = p->ints, at->n_ints = p->n_ints;
    at->unknown = UNKNOWN(p);
    if (p->n_strings) {
        at->strings = sg_arena_calloc(L->a, p->n_strings, sizeof *at->strings);
        if (!at->strings) {
            nomem(L);
            return NULL;
        }
        for (size_t i = 0; i < p->n_strings; i++) {
            at->strings[i].data = p->strings[i].data;
            at->strings[i].len = p->strings[i].len;
        }
        at->n_strings = p->n_strings;
    }
    if (p->t && !(at->t = sg__convert_tensor(L, p->t)))
        goto fail;
    if (p->sparse_tensor && !(at->sparse = convert_sparse(L, p->sparse_tensor)))
        goto fail;
    if (p->tp && !(at->tp = convert_type(L, p->tp, 0)))
        goto fail;
    if (p->n_tensors) {
        at->tensors = sg_arena_calloc(L->a, p->n_tensors, sizeof *at->tensors);
        if (!at->tensors)
            goto nomem;
        for (size_t i = 0; i < p->n_tensors; i++)
            if (!(at->tensors[i] = sg__convert_tensor(L, p->tensors[i])))
                goto fail;
        at->n_tensors = p->n_tensors;
    }
    if (p->n_sparse_tensors) {
        at->sparses = sg_arena_calloc(L->a, p->n_sparse_tensors, sizeof *at->sparses);
        if (!at->sparses)
            goto nomem;
        for (size_t i = 0; i < p->n_sparse_tensors; i++)
            if (!(at->sparses[i] = convert_sparse(L, p->sparse_tensors[i])))
                goto fail;
        at->n_sparses = p->n_sparse_tensors;
    }
    if (p->n_type_protos) {
        at->tps = sg_arena_calloc(L->a, p->n_type_protos, sizeof *at->tps);
        if (!at->tps)
            goto nomem;
        for (size_t i = 0; i < p->n_type_protos; i++)
            if (!(at->tps[i] = convert_type(L, p->type_protos[i], 0)))
                goto fail;
        at->n_tps = p->n_type_protos;
    }
    /* Graph attributes are converted after the enclosing graph's names are
     * all known (see load_subgraphs); reserve the slots now. */
    if (p->n_graphs) {
        at->graphs = sg_arena_calloc(L->a, p->n_graphs, sizeof *at->graphs);
        if (!at->graphs)
            goto nomem;
        at->n_graphs = p->n_graphs;
    }
    return at;
nomem:
    nomem(L);
fail:
    sg_diag_prefix(L->diag, "node '%.200s' (%.60s) attribute '%s'",
                   owner->name && *owner->name ? owner->name : "(unnamed)", owner->op_type,
                   p->name ? p->name : "");
    return NULL;
}

/* ----------------------------------------------------------------- graphs */

static sg_value *get_value(struct loader *L, sg_graph *g, const char *name)
{
    uint64_t h = sg__strhash(name);
    sg_value *v = sg__strmap_get_h(g->values_map, name, h);
    if (v)
        return v;
    v = sg__value_new_h(g, name, h);
    if (!v) {
        nomem(L);
        return NULL;
    }
    return v;
}

/* get_value for name number k of node p, with the hash computed when the
 * lookup was prefetched. */
static sg_value *get_value_k(struct loader *L, sg_graph *g, const Onnx__NodeProto *p, size_t k,
                             const char *name)
{
    const struct name_hashes *r = NULL;
    for (size_t i = 0; i < RING; i++)
        if (L->ring[i].node == p) {
            r = &L->ring[i];
            break;
        }
    if (!r || k >= RING_NAMES)
        return get_value(L, g, name);
    sg_value *v = sg__strmap_get_h(g->values_map, name, r->h[k]);
    if (v)
        return v;
    v = sg__value_new_h(g, name, r->h[k]);
    if (!v)
        nomem(L);
    return v;
}

/* The schema of an op type in a domain at the model's opset, looked up once
 * per load. Also gives every node of that op type the same op_type string. */
static sg_status op_lookup(struct loader *L, const char **op_type, const char *domain,
                           const struct op_info **out)
{
    struct op_info *head = sg__strmap_get(&L->ops, *op_type), *it;
    for (it = head; it; it = it->next)
        if (it->domain == domain || (it->domain && domain && strcmp(it->domain, domain) == 0))
            break;
    if (!it) {
        it = sg_arena_calloc(L->a, 1, sizeof *it);
        if (!it)
            return nomem(L);
        it->op = *op_type;
        it->domain = domain;
        it->opset = sg_model_opset(L->m, domain);
        it->schema = it->opset ? sg_op_schema_find(domain, *op_type, it->opset) : NULL;
        it->next = head;
        if (sg__strmap_put(&L->ops, it->op, it) != SG_OK)
            return nomem(L);
    }
    *op_type = it->op;
    *out = it;
    return SG_OK;
}

static const char *node_label(const sg_node *n)
{
    return n->name && *n->name ? n->name : "(unnamed)";
}

static sg_status add_vi(struct loader *L, sg_graph *g, const Onnx__ValueInfoProto *p, uint32_t flag,
                        const char *what)
{
    if (!p->name || !*p->name)
        return sg_diag_set(L->diag, SG_EPARSE, "graph '%s' has a %s without a name",
                           g->name ? g->name : "", what);
    sg_value *v = get_value(L, g, p->name);
    if (!v)
        return SG_ENOMEM;
    if ((v->flags & flag) && flag != SG_VALUE_OUTPUT)
        return sg_diag_set(L->diag, SG_EDUP, "%s '%s' is listed twice", what, p->name);
    if (!(v->flags & (SG_VALUE_INPUT | SG_VALUE_OUTPUT | SG_VALUE_INFO))) {
        if (p->type && !(v->type = convert_type(L, p->type, 0))) {
            sg_diag_prefix(L->diag, "%s '%s'", what, p->name);
            return L->diag ? L->diag->status : SG_EPARSE;
        }
        v->doc = p->doc_string;
        v->vi_unknown = UNKNOWN(p);
    }
    sg_status st;
    switch (flag) {
    case SG_VALUE_INPUT:
        st = sg__ptr_push(L->a, (void ***)&g->inputs, &g->n_inputs, &g->cap_inputs, v);
        break;
    case SG_VALUE_OUTPUT:
        st = sg__ptr_push(L->a, (void ***)&g->outputs, &g->n_outputs, &g->cap_outputs, v);
        break;
    default:
        st = sg__ptr_push(L->a, (void ***)&g->value_info, &g->n_value_info, &g->cap_value_info, v);
        break;
    }
    if (st)
        return nomem(L);
    v->flags |= flag;
    return SG_OK;
}

static sg_graph *load_graph(struct loader *L, const Onnx__GraphProto *p, enum sg_graph_kind kind,
                            sg_graph *parent, sg_node *owner, int depth);

#define MAX_GRAPH_DEPTH 64

static sg_status load_node(struct loader *L, sg_graph *g, const Onnx__NodeProto *p)
{
    sg_node *n = sg_arena_calloc(L->a, 1, sizeof *n);
    if (!n)
        return nomem(L);
    n->graph = g;
    n->name = p->name;
    n->op_type = p->op_type ? p->op_type : "";
    n->domain = p->domain;
    n->doc = p->doc_string;
    n->unknown = UNKNOWN(p);
    if (!p->op_type)
        return sg_diag_set(L->diag, SG_EPARSE, "node '%s' has no op_type", node_label(n));
    if (p->n_input > UINT32_MAX / 2 || p->n_output > UINT32_MAX / 2 ||
        p->n_attribute > UINT32_MAX / 2)
        return sg_diag_set(L->diag, SG_ERANGE, "node '%s' is too large", node_label(n));
    n->n_inputs = n->cap_inputs = (uint32_t)p->n_input;
    n->n_outputs = n->cap_outputs = (uint32_t)p->n_output;
    n->n_attrs = n->cap_attrs = (uint32_t)p->n_attribute;
    /* Zero-length lists stay NULL: a calloc per empty list would cost more
     * than the rest of a small node. */
    n->inputs = p->n_input ? sg_arena_calloc(L->a, p->n_input, sizeof *n->inputs) : NULL;
    n->use_pos = p->n_input ? sg_arena_alloc(L->a, p->n_input * sizeof *n->use_pos) : NULL;
    n->outputs = p->n_output ? sg_arena_calloc(L->a, p->n_output, sizeof *n->outputs) : NULL;
    n->attrs = p->n_attribute ? sg_arena_calloc(L->a, p->n_attribute, sizeof *n->attrs) : NULL;
    if ((p->n_input && (!n->inputs || !n->use_pos)) || (p->n_output && !n->outputs) ||
        (p->n_attribute && !n->attrs))
        return nomem(L);
    for (size_t i = 0; i < p->n_input; i++) {
        if (!*p->input[i])
            continue; /* omitted optional input */
        sg_value *v = get_value_k(L, g, p, i, p->input[i]);
        if (!v || sg__value_add_use(v, n, (int32_t)i) != SG_OK)
            return nomem(L);
        n->inputs[i] = v;
        if (!v->producer && !v->init && !v->sparse_init && !(v->flags & SG_VALUE_INPUT))
            g->maybe_unsorted = true; /* read before it is made (or from outside) */
    }
    for (size_t i = 0; i < p->n_output; i++) {
        if (!*p->output[i])
            continue;
        sg_value *v = get_value_k(L, g, p, p->n_input + i, p->output[i]);
        if (!v)
            return SG_ENOMEM;
        if (v->producer)
            return sg_diag_set(L->diag, SG_EDUP,
                               "value '%s' is produced by node '%s' and again by node '%s'",
                               v->name, node_label(v->producer), node_label(n));
        v->producer = n;
        v->producer_index = (uint32_t)i;
        n->outputs[i] = v;
    }
    for (size_t i = 0; i < p->n_attribute; i++)
        if (!(n->attrs[i] = convert_attr(L, p->attribute[i], n)))
            return L->diag ? L->diag->status : SG_EPARSE;
    if (sg__node_map_add(g, n) != SG_OK)
        return nomem(L);
    for (size_t i = 0; i < p->n_attribute; i++)
        if (p->attribute[i]->g || p->attribute[i]->n_graphs)
            g->has_subgraphs = true;
    sg_status ast;
    if (g->kind == SG_GRAPH_MAIN || g->kind == SG_GRAPH_SUB) {
        const struct op_info *oi = NULL;
        if ((ast = op_lookup(L, &n->op_type, n->domain, &oi)) ||
            (ast = sg__node_check_arity_schema(n, oi->schema, oi->opset, L->diag)))
            return ast;
    }
    n->prev = g->last;
    if (g->last)
        g->last->next = n;
    else
        g->first = n;
    g->last = n;
    g->n_nodes++;
    return SG_OK;
}

/* Values read but not defined in g: captures of an enclosing graph, or an
 * error in the main graph. Checked in node order for a stable message. */
static sg_status resolve_free_names(struct loader *L, sg_graph *g)
{
    bool lenient = g->kind == SG_GRAPH_FUNCTION || g->kind == SG_GRAPH_TRAINING;
    for (sg_node *n = g->first; n; n = n->next) {
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            sg_value *v = n->inputs[i];
            if (!v || v->producer || v->outer || v->init || v->sparse_init ||
                (v->flags & SG_VALUE_INPUT))
                continue;
            sg_value *outer = g->parent ? sg_graph_resolve(g->parent, v->name, L->diag) : NULL;
            if (outer) {
                if (sg__value_add_use(outer, g->owner, SG_USE_IMPLICIT) != SG_OK)
                    return nomem(L);
                v->outer = outer;
            } else if (!lenient) {
                return sg_diag_set(L->diag, SG_EUNDEF,
                                   "node '%s' (%s) reads '%s', which nothing defines",
                                   node_label(n), n->op_type, v->name);
            }
        }
    }
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        sg_value *v = g->outputs[i];
        if (v->producer || v->outer || v->init || v->sparse_init || (v->flags & SG_VALUE_INPUT))
            continue;
        sg_value *outer = g->parent ? sg_graph_resolve(g->parent, v->name, L->diag) : NULL;
        if (outer) {
            if (sg__value_add_use(outer, g->owner, SG_USE_IMPLICIT) != SG_OK)
                return nomem(L);
            v->outer = outer;
        } else if (!lenient) {
            return sg_diag_set(L->diag, SG_EUNDEF, "graph output '%s' is never defined", v->name);
        }
    }
    return SG_OK;
}

static sg_status load_subgraphs(struct loader *L, sg_graph *g, const Onnx__GraphProto *p, int depth)
{
    size_t k = 0;
    for (sg_node *n = g->first; n; n = n->next, k++) {
        const Onnx__NodeProto *np = p->node[k];
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const Onnx__AttributeProto *ap = np->attribute[a];
            sg_attr *at = n->attrs[a];
            if (ap->g && !(at->g = load_graph(L, ap->g, SG_GRAPH_SUB, g, n, depth + 1)))
                goto fail;
            for (size_t i = 0; i < ap->n_graphs; i++)
                if (!(at->graphs[i] = load_graph(L, ap->graphs[i], SG_GRAPH_SUB, g, n, depth + 1)))
                    goto fail;
            continue;
        fail:
            sg_diag_prefix(L->diag, "in subgraph '%s' of node '%s'", ap->name ? ap->name : "",
                           node_label(n));
            return L->diag ? L->diag->status : SG_EPARSE;
        }
    }
    return SG_OK;
}

static void prefetch_names(struct loader *L, const sg_graph *g, const Onnx__NodeProto *p, size_t i)
{
    struct name_hashes *r = &L->ring[i % RING];
    r->node = p;
    size_t k = 0;
    for (size_t j = 0; j < p->n_input + p->n_output; j++) {
        const char *name = j < p->n_input ? p->input[j] : p->output[j - p->n_input];
        uint64_t h = sg__strhash(name);
        if (k < RING_NAMES)
            r->h[k++] = h;
        sg__strmap_prefetch_h(g->values_map, h);
    }
}

static sg_graph *load_graph(struct loader *L, const Onnx__GraphProto *p, enum sg_graph_kind kind,
                            sg_graph *parent, sg_node *owner, int depth)
{
    if (depth > MAX_GRAPH_DEPTH) {
        sg_diag_set(L->diag, SG_EPARSE, "subgraphs nested deeper than %d levels", MAX_GRAPH_DEPTH);
        return NULL;
    }
    sg_graph *g = sg__graph_create(L->m, kind, parent, owner);
    if (!g) {
        nomem(L);
        return NULL;
    }
    g->name = p->name;
    g->doc = p->doc_string;
    g->unknown = UNKNOWN(p);
    /* Every value is a graph input, an initializer or a node output (names
     * read from outside come on top, rarely): size the map once. */
    size_t expect = p->n_input + p->n_initializer + p->n_sparse_initializer;
    for (size_t i = 0; i < p->n_node; i++)
        expect += p->node[i]->n_output;
    if (sg__strmap_reserve(g->values_map, expect)) {
        nomem(L);
        goto fail;
    }
    for (size_t i = 0; i < p->n_initializer; i++) {
        const Onnx__TensorProto *tp = p->initializer[i];
        if (!tp->name || !*tp->name) {
            sg_diag_set(L->diag, SG_EPARSE, "initializer #%zu has no name", i);
            goto fail;
        }
        sg_value *v = get_value(L, g, tp->name);
        if (!v)
            goto fail;
        if (v->init) {
            sg_diag_set(L->diag, SG_EDUP, "initializer '%s' is defined twice", tp->name);
            goto fail;
        }
        if (!(v->init = sg__convert_tensor(L, tp)))
            goto fail;
        v->flags |= SG_VALUE_INITIALIZER;
        if (sg__ptr_push(L->a, (void ***)&g->inits, &g->n_inits, &g->cap_inits, v)) {
            nomem(L);
            goto fail;
        }
    }
    if (p->n_sparse_initializer) {
        g->sparse_inits = sg_arena_calloc(L->a, p->n_sparse_initializer, sizeof *g->sparse_inits);
        if (!g->sparse_inits) {
            nomem(L);
            goto fail;
        }
    }
    for (size_t i = 0; i < p->n_sparse_initializer; i++) {
        sg_sparse *s = convert_sparse(L, p->sparse_initializer[i]);
        if (!s)
            goto fail;
        g->sparse_inits[g->n_sparse_inits++] = s;
        const char *name = s->values ? s->values->name : NULL;
        if (!name || !*name) {
            sg_diag_set(L->diag, SG_EPARSE, "sparse initializer #%zu has no name", i);
            goto fail;
        }
        sg_value *v = get_value(L, g, name);
        if (!v)
            goto fail;
        if (v->init || v->sparse_init) {
            sg_diag_set(L->diag, SG_EDUP, "initializer '%s' is defined twice", name);
            goto fail;
        }
        v->sparse_init = s;
        v->flags |= SG_VALUE_INITIALIZER;
    }
    for (size_t i = 0; i < p->n_input; i++)
        if (add_vi(L, g, p->input[i], SG_VALUE_INPUT, "graph input"))
            goto fail;
    /* The name lookups of each node miss the cache in a big graph: start
     * those of a node a few places ahead so they overlap. */
    for (size_t i = 0; i < PREFETCH_AHEAD && i < p->n_node; i++)
        prefetch_names(L, g, p->node[i], i);
    for (size_t i = 0; i < p->n_node; i++) {
        if (i + PREFETCH_AHEAD < p->n_node)
            prefetch_names(L, g, p->node[i + PREFETCH_AHEAD], i + PREFETCH_AHEAD);
        if (load_node(L, g, p->node[i])) {
            sg_diag_prefix(L->diag, "node #%zu", i);
            goto fail;
        }
    }
    for (sg_node *n = g->first; n; n = n->next)
        for (uint32_t i = 0; i < n->n_outputs; i++) {
            sg_value *v = n->outputs[i];
            if (v && (v->init || v->sparse_init || (v->flags & SG_VALUE_INPUT))) {
                sg_diag_set(L->diag, SG_EDUP, "node '%s' (%s) output '%s' is also a graph %s",
                            node_label(n), n->op_type, v->name,
                            v->flags & SG_VALUE_INPUT ? "input" : "initializer");
                goto fail;
            }
        }
    for (size_t i = 0; i < p->n_output; i++)
        if (add_vi(L, g, p->output[i], SG_VALUE_OUTPUT, "graph output"))
            goto fail;
    for (size_t i = 0; i < p->n_value_info; i++)
        if (add_vi(L, g, p->value_info[i], SG_VALUE_INFO, "value_info"))
            goto fail;
    if (p->n_quantization_annotation) {
        g->annotations =
            sg_arena_calloc(L->a, p->n_quantization_annotation, sizeof *g->annotations);
        if (!g->annotations) {
            nomem(L);
            goto fail;
        }
        for (size_t i = 0; i < p->n_quantization_annotation; i++) {
            const Onnx__TensorAnnotation *ap = p->quantization_annotation[i];
            sg_annotation *an = &g->annotations[i];
            an->tensor_name = ap->tensor_name;
            an->unknown = UNKNOWN(ap);
            an->n_params = ap->n_quant_parameter_tensor_names;
            an->params = convert_kvs(L, ap->quant_parameter_tensor_names, an->n_params);
            if (!an->params) {
                nomem(L);
                goto fail;
            }
        }
        g->n_annotations = (uint32_t)p->n_quantization_annotation;
    }
    if (resolve_free_names(L, g) || load_subgraphs(L, g, p, depth))
        goto fail;
    return g;
fail:
    /* The arena keeps the memory; only the maps of graphs created so far
     * need releasing, which sg_model_free does through graph_list. */
    sg__graph_release(g);
    g->values_map = NULL;
    g->nodes_map = NULL;
    return NULL;
}

/* ------------------------------------------------------------------ model */

static sg_status load_function(struct loader *L, sg_function *f, const Onnx__FunctionProto *p)
{
    f->name = p->name;
    f->domain = p->domain;
    f->doc = p->doc_string;
    f->unknown = UNKNOWN(p);
    f->attributes = (const char **)p->attribute;
    f->n_attributes = p->n_attribute;
    f->n_opsets = p->n_opset_import;
    if (!(f->opsets = convert_opsets(L, p->opset_import, p->n_opset_import)))
        return nomem(L);
    /* The body is a graph whose inputs/outputs are the formal parameters. */
    Onnx__GraphProto body = ONNX__GRAPH_PROTO__INIT;
    Onnx__ValueInfoProto *vis = sg_arena_calloc(L->a, p->n_input + p->n_output, sizeof *vis);
    Onnx__ValueInfoProto **in = sg_arena_calloc(L->a, p->n_input, sizeof *in);
    Onnx__ValueInfoProto **out = sg_arena_calloc(L->a, p->n_output, sizeof *out);
    if (!vis || !in || !out)
        return nomem(L);
    for (size_t i = 0; i < p->n_input + p->n_output; i++) {
        Onnx__ValueInfoProto init = ONNX__VALUE_INFO_PROTO__INIT;
        vis[i] = init;
        vis[i].name = i < p->n_input ? p->input[i] : p->output[i - p->n_input];
    }
    for (size_t i = 0; i < p->n_input; i++)
        in[i] = &vis[i];
    for (size_t i = 0; i < p->n_output; i++)
        out[i] = &vis[p->n_input + i];
    body.n_input = p->n_input, body.input = in;
    body.n_output = p->n_output, body.output = out;
    body.n_node = p->n_node, body.node = p->node;
    if (!(f->body = load_graph(L, &body, SG_GRAPH_FUNCTION, NULL, NULL, 0))) {
        sg_diag_prefix(L->diag, "function '%s'", p->name ? p->name : "");
        return L->diag ? L->diag->status : SG_EPARSE;
    }
    return SG_OK;
}

static sg_status convert_model(struct loader *L, const Onnx__ModelProto *p)
{
    sg_model *m = L->m;
    m->has_ir_version = p->has_ir_version;
    m->ir_version = p->ir_version;
    m->has_model_version = p->has_model_version;
    m->model_version = p->model_version;
    m->producer_name = p->producer_name;
    m->producer_version = p->producer_version;
    m->domain = p->domain;
    m->doc = p->doc_string;
    m->unknown = UNKNOWN(p);
    m->n_opsets = p->n_opset_import;
    if (!(m->opsets = convert_opsets(L, p->opset_import, p->n_opset_import)))
        return nomem(L);
    m->n_metadata = p->n_metadata_props;
    if (!(m->metadata = convert_kvs(L, p->metadata_props, p->n_metadata_props)))
        return nomem(L);
    if (!p->graph)
        return sg_diag_set(L->diag, SG_EPARSE, "not an ONNX model: it has no graph");
    if (!p->n_opset_import)
        return sg_diag_set(L->diag, SG_EPARSE,
                           "not a valid ONNX model: it imports no opset (opset_import is empty)");
    /* Replace the empty graph sg_model_create made. */
    sg__graph_release(m->graph);
    m->graph = NULL;
    if (!(m->graph = load_graph(L, p->graph, SG_GRAPH_MAIN, NULL, NULL, 0)))
        return L->diag ? L->diag->status : SG_EPARSE;
    if (p->n_functions) {
        m->functions = sg_arena_calloc(L->a, p->n_functions, sizeof *m->functions);
        if (!m->functions)
            return nomem(L);
        for (size_t i = 0; i < p->n_functions; i++) {
            sg_status st = load_function(L, &m->functions[i], p->functions[i]);
            m->n_functions = i + (st ? 0 : 1);
            if (st)
                return st;
        }
    }
    if (p->n_training_info) {
        m->training = sg_arena_calloc(L->a, p->n_training_info, sizeof *m->training);
        if (!m->training)
            return nomem(L);
        for (size_t i = 0; i < p->n_training_info; i++) {
            const Onnx__TrainingInfoProto *tp = p->training_info[i];
            sg_training *t = &m->training[i];
            m->n_training = i + 1;
            t->unknown = UNKNOWN(tp);
            if (tp->initialization &&
                !(t->initialization =
                      load_graph(L, tp->initialization, SG_GRAPH_TRAINING, NULL, NULL, 0)))
                return L->diag ? L->diag->status : SG_EPARSE;
            if (tp->algorithm &&
                !(t->algorithm = load_graph(L, tp->algorithm, SG_GRAPH_TRAINING, NULL, NULL, 0)))
                return L->diag ? L->diag->status : SG_EPARSE;
            t->n_init_binding = tp->n_initialization_binding;
            t->init_binding = convert_kvs(L, tp->initialization_binding, t->n_init_binding);
            t->n_update_binding = tp->n_update_binding;
            t->update_binding = convert_kvs(L, tp->update_binding, t->n_update_binding);
            if (!t->init_binding || !t->update_binding)
                return nomem(L);
        }
    }
    return SG_OK;
}

#define ARENA_RESERVE_MAX ((size_t)1 << 30)

static void *pb_alloc(void *ctx, size_t size)
{
    return sg_arena_alloc(ctx, size);
}

static void pb_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p; /* arena memory goes with the model */
}

sg_status sg_model_load_buffer(const void *data, size_t len, const char *dir, const char *label,
                               const struct sg_load_opts *opts, sg_model **out,
                               struct sg_diag *diag)
{
    static const struct sg_load_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    if (!label)
        label = "(buffer)";
    *out = NULL;
    if (len == 0)
        return sg_diag_set(diag, SG_EPARSE, "%s: empty file, not an ONNX model", label);
    sg_model *m = sg_model_create();
    if (!m)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    sg_status st = SG_OK;
    if (dir && !(m->dir = sg_strdup(dir))) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        goto fail;
    }
    if ((st = sg__check_depth(data, len, diag))) {
        sg_diag_prefix(diag, "%s", label);
        goto fail;
    }
    /* The unpacked messages and the IR take up to ~16 times a node-heavy
     * file (about the file itself for one made of weights); one chunk of
     * that size, mostly left untouched, spares dozens of growing ones. */
    sg_arena_reserve(m->arena,
                     len < ARENA_RESERVE_MAX / 16 ? 16 * len + (1u << 20) : ARENA_RESERVE_MAX);
    ProtobufCAllocator alloc = {pb_alloc, pb_free, m->arena};
    Onnx__ModelProto *p = onnx__model_proto__unpack(&alloc, len, data);
    if (!p) {
        /* protobuf-c does not say why; out of memory is the likely reason
         * only when the arena could not grow, which injection tests cover. */
        st = sg_diag_set(diag, SG_EPARSE, "%s: not a valid ONNX protobuf (truncated or corrupt)",
                         label);
        goto fail;
    }
    struct loader L = {.m = m, .a = m->arena, .diag = diag};
    st = convert_model(&L, p);
    sg__strmap_free(&L.ops);
    if (st)
        goto fail_prefix;
    if (!opts->skip_external && m->has_external && (st = sg__resolve_external(m, diag)))
        goto fail_prefix;
    if (!opts->skip_verify && (st = sg__graph_check_loaded(m->graph, diag)))
        goto fail_prefix;
    *out = m;
    return SG_OK;
fail_prefix:
    sg_diag_prefix(diag, "%s", label);
fail:
    sg_model_free(m);
    return st;
}

sg_status sg_model_load(const char *path, const struct sg_load_opts *opts, sg_model **out,
                        struct sg_diag *diag)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sg_diag_set(diag, SG_EIO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return sg_diag_set(diag, SG_EIO, "%s: not a regular file", path);
    }
    size_t len = (size_t)sb.st_size;
    void *map = NULL;
    if (len) {
        /* Populate: the unpacker reads every byte once, front to back. */
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (map == MAP_FAILED) {
            sg_status st = sg_diag_set(diag, SG_EIO, "%s: cannot map: %s", path, strerror(errno));
            close(fd);
            return st;
        }
    }
    close(fd);
    char *dir = sg__dirname(path);
    if (!dir) {
        if (map)
            munmap(map, len);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    sg_status st = sg_model_load_buffer(map, len, dir, path, opts, out, diag);
    sg_free(dir);
    if (map)
        munmap(map, len);
    if (!st && !((*out)->path = sg_strdup(path))) {
        sg_model_free(*out);
        *out = NULL;
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    return st;
}
