/*
 * save_build.c - IR -> protobuf-c messages for saving.
 *
 * Messages live in the saver's scratch arena and point at the IR's own
 * strings, arrays and payloads: nothing is copied. Every tensor message is
 * recorded in S->tensors so save.c can decide afterwards where its payload
 * goes (inline, kept external, or a new external file).
 */
#include "ir_impl.h"
#include "save_impl.h"
#include "sg_alloc.h"

#include <string.h>

/* A message of `type` in the scratch arena, set to its INIT value. */
#define NEW_MSG(S, type, init) ((type *)new_msg((S), &(type)init, sizeof(type)))

static void *new_msg(struct sg__saver *S, const void *init, size_t size)
{
    void *m = sg_arena_alloc(S->a, size);
    if (m)
        memcpy(m, init, size);
    else
        S->st = SG_ENOMEM;
    return m;
}

#define ARRAY(S, n, type) ((type *)array_alloc((S), (n), sizeof(type)))

static void *array_alloc(struct sg__saver *S, size_t n, size_t size)
{
    if (n == 0)
        return NULL;
    void *p = sg_arena_calloc(S->a, n, size);
    if (!p)
        S->st = SG_ENOMEM;
    return p;
}

static void set_unknown(ProtobufCMessage *base, sg_unknown u)
{
    base->n_unknown_fields = u.count;
    base->unknown_fields = u.fields;
}

static char *str(const char *s)
{
    return (char *)s; /* protobuf-c only reads it */
}

Onnx__StringStringEntryProto **sg__save_build_kvs(struct sg__saver *S, const sg_kv *kv, size_t n)
{
    Onnx__StringStringEntryProto **arr = ARRAY(S, n, Onnx__StringStringEntryProto *);
    for (size_t i = 0; arr && i < n; i++) {
        arr[i] = NEW_MSG(S, Onnx__StringStringEntryProto, ONNX__STRING_STRING_ENTRY_PROTO__INIT);
        if (!arr[i])
            return NULL;
        arr[i]->key = str(kv[i].key);
        arr[i]->value = str(kv[i].value);
    }
    return arr;
}

static Onnx__OperatorSetIdProto **build_opsets(struct sg__saver *S, const sg_opset *o, size_t n)
{
    Onnx__OperatorSetIdProto **arr = ARRAY(S, n, Onnx__OperatorSetIdProto *);
    for (size_t i = 0; arr && i < n; i++) {
        arr[i] = NEW_MSG(S, Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT);
        if (!arr[i])
            return NULL;
        arr[i]->domain = str(o[i].domain);
        arr[i]->has_version = o[i].has_version;
        arr[i]->version = o[i].version;
        set_unknown(&arr[i]->base, o[i].unknown);
    }
    return arr;
}

/* ------------------------------------------------------------------ types */

static Onnx__TensorShapeProto *build_shape(struct sg__saver *S, const sg_shape *s)
{
    Onnx__TensorShapeProto *p = NEW_MSG(S, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
    if (!p)
        return NULL;
    set_unknown(&p->base, s->unknown);
    p->n_dim = s->rank;
    p->dim = ARRAY(S, s->rank, Onnx__TensorShapeProto__Dimension *);
    for (uint32_t i = 0; p->dim && i < s->rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = NEW_MSG(S, Onnx__TensorShapeProto__Dimension,
                                                       ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
        if (!d)
            return NULL;
        const sg_dim *src = &s->dims[i];
        d->denotation = str(src->denotation);
        set_unknown(&d->base, src->unknown);
        if (src->kind == SG_DIM_VALUE) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = src->value;
        } else if (src->kind == SG_DIM_PARAM) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = str(src->param);
        }
        p->dim[i] = d;
    }
    return p;
}

static Onnx__TypeProto *build_type(struct sg__saver *S, const sg_type *t)
{
    if (!t)
        return NULL;
    Onnx__TypeProto *p = NEW_MSG(S, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
    if (!p)
        return NULL;
    p->denotation = str(t->denotation);
    set_unknown(&p->base, t->unknown);
    switch (t->kind) {
    case SG_TYPE_TENSOR: {
        Onnx__TypeProto__Tensor *tt =
            NEW_MSG(S, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
        if (!tt)
            return NULL;
        tt->has_elem_type = t->has_elem_type;
        tt->elem_type = t->elem_type;
        tt->shape = t->shape ? build_shape(S, t->shape) : NULL;
        set_unknown(&tt->base, t->inner_unknown);
        p->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        p->tensor_type = tt;
        break;
    }
    case SG_TYPE_SPARSE_TENSOR: {
        Onnx__TypeProto__SparseTensor *st =
            NEW_MSG(S, Onnx__TypeProto__SparseTensor, ONNX__TYPE_PROTO__SPARSE_TENSOR__INIT);
        if (!st)
            return NULL;
        st->has_elem_type = t->has_elem_type;
        st->elem_type = t->elem_type;
        st->shape = t->shape ? build_shape(S, t->shape) : NULL;
        set_unknown(&st->base, t->inner_unknown);
        p->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
        p->sparse_tensor_type = st;
        break;
    }
    case SG_TYPE_SEQUENCE: {
        Onnx__TypeProto__Sequence *sq =
            NEW_MSG(S, Onnx__TypeProto__Sequence, ONNX__TYPE_PROTO__SEQUENCE__INIT);
        if (!sq)
            return NULL;
        sq->elem_type = build_type(S, t->elem);
        set_unknown(&sq->base, t->inner_unknown);
        p->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        p->sequence_type = sq;
        break;
    }
    case SG_TYPE_OPTIONAL: {
        Onnx__TypeProto__Optional *op =
            NEW_MSG(S, Onnx__TypeProto__Optional, ONNX__TYPE_PROTO__OPTIONAL__INIT);
        if (!op)
            return NULL;
        op->elem_type = build_type(S, t->elem);
        set_unknown(&op->base, t->inner_unknown);
        p->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        p->optional_type = op;
        break;
    }
    case SG_TYPE_MAP: {
        Onnx__TypeProto__Map *mp = NEW_MSG(S, Onnx__TypeProto__Map, ONNX__TYPE_PROTO__MAP__INIT);
        if (!mp)
            return NULL;
        mp->has_key_type = t->has_key_type;
        mp->key_type = t->key_type;
        mp->value_type = build_type(S, t->elem);
        set_unknown(&mp->base, t->inner_unknown);
        p->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        p->map_type = mp;
        break;
    }
    default:
        break;
    }
    return p;
}

/* ---------------------------------------------------------------- tensors */

void sg__payload_typed(Onnx__TensorProto *p, const sg_tensor *t)
{
    p->has_raw_data = t->has_raw;
    p->raw_data.data = (uint8_t *)t->raw;
    p->raw_data.len = t->raw_len;
    p->n_float_data = t->n_float, p->float_data = (float *)t->float_data;
    p->n_int32_data = t->n_int32, p->int32_data = (int32_t *)t->int32_data;
    p->n_int64_data = t->n_int64, p->int64_data = (int64_t *)t->int64_data;
    p->n_double_data = t->n_double, p->double_data = (double *)t->double_data;
    p->n_uint64_data = t->n_uint64, p->uint64_data = (uint64_t *)t->uint64_data;
}

void sg__payload_clear(Onnx__TensorProto *p)
{
    p->has_raw_data = 0;
    p->raw_data.data = NULL;
    p->raw_data.len = 0;
    p->n_float_data = p->n_int32_data = p->n_int64_data = 0;
    p->n_double_data = p->n_uint64_data = 0;
    p->has_data_location = 0;
    p->n_external_data = 0;
    p->external_data = NULL;
}

static sg_status plan_push(struct sg__saver *S, sg_tensor *t, Onnx__TensorProto *msg)
{
    if (S->n_tensors == S->cap_tensors) {
        size_t cap = S->cap_tensors ? S->cap_tensors * 2 : 64;
        struct sg__planned *grown = sg_realloc(S->tensors, cap * sizeof *grown);
        if (!grown)
            return S->st = SG_ENOMEM;
        S->tensors = grown;
        S->cap_tensors = cap;
    }
    S->tensors[S->n_tensors++] = (struct sg__planned){t, msg, SG__KEEP_INLINE, 0, 0};
    return SG_OK;
}

/* Build the message with the payload as stored; dispositions are applied
 * later by apply_plan once the output layout is decided. */
static Onnx__TensorProto *build_tensor(struct sg__saver *S, sg_tensor *t)
{
    Onnx__TensorProto *p = NEW_MSG(S, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
    if (!p)
        return NULL;
    p->n_dims = t->rank;
    p->dims = t->dims;
    p->has_data_type = t->has_dtype;
    p->data_type = t->dtype;
    if (t->has_segment) {
        p->segment = NEW_MSG(S, Onnx__TensorProto__Segment, ONNX__TENSOR_PROTO__SEGMENT__INIT);
        if (!p->segment)
            return NULL;
        p->segment->has_begin = t->has_seg_begin;
        p->segment->begin = t->seg_begin;
        p->segment->has_end = t->has_seg_end;
        p->segment->end = t->seg_end;
        set_unknown(&p->segment->base, t->seg_unknown);
    }
    sg__payload_typed(p, t);
    if (t->n_string) {
        p->string_data = ARRAY(S, t->n_string, ProtobufCBinaryData);
        if (!p->string_data)
            return NULL;
        for (size_t i = 0; i < t->n_string; i++) {
            p->string_data[i].data = (uint8_t *)t->string_data[i].data;
            p->string_data[i].len = t->string_data[i].len;
        }
        p->n_string_data = t->n_string;
    }
    p->name = str(t->name);
    p->doc_string = str(t->doc);
    p->has_data_location = t->has_data_location;
    p->data_location = (Onnx__TensorProto__DataLocation)t->data_location;
    if (t->n_external) {
        p->external_data = sg__save_build_kvs(S, t->external, t->n_external);
        if (!p->external_data)
            return NULL;
        p->n_external_data = t->n_external;
    }
    set_unknown(&p->base, t->unknown);
    if (plan_push(S, t, p))
        return NULL;
    return p;
}

static Onnx__SparseTensorProto *build_sparse(struct sg__saver *S, sg_sparse *s)
{
    Onnx__SparseTensorProto *p =
        NEW_MSG(S, Onnx__SparseTensorProto, ONNX__SPARSE_TENSOR_PROTO__INIT);
    if (!p)
        return NULL;
    if (s->values && !(p->values = build_tensor(S, s->values)))
        return NULL;
    if (s->indices && !(p->indices = build_tensor(S, s->indices)))
        return NULL;
    p->n_dims = s->rank;
    p->dims = s->dims;
    set_unknown(&p->base, s->unknown);
    return p;
}

/* ------------------------------------------------------- nodes and graphs */

static Onnx__GraphProto *build_graph(struct sg__saver *S, sg_graph *g);

static Onnx__AttributeProto *build_attr(struct sg__saver *S, sg_attr *at)
{
    Onnx__AttributeProto *p = NEW_MSG(S, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
    if (!p)
        return NULL;
    p->name = str(at->name);
    p->ref_attr_name = str(at->ref_attr_name);
    p->doc_string = str(at->doc);
    p->has_type = at->has_type;
    p->type = (Onnx__AttributeProto__AttributeType)at->type;
    p->has_f = at->has_f, p->f = at->f;
    p->has_i = at->has_i, p->i = at->i;
    p->has_s = at->has_s;
    p->s.data = (uint8_t *)at->s.data;
    p->s.len = at->s.len;
    p->n_floats = at->n_floats, p->floats = at->floats;
    p->n_ints = at->n_ints, p->ints = at->ints;
    set_unknown(&p->base, at->unknown);
    if (at->t && !(p->t = build_tensor(S, at->t)))
        return NULL;
    if (at->g && !(p->g = build_graph(S, at->g)))
        return NULL;
    if (at->sparse && !(p->sparse_tensor = build_sparse(S, at->sparse)))
        return NULL;
    if (at->tp && !(p->tp = build_type(S, at->tp)))
        return NULL;
    if (at->n_strings) {
        if (!(p->strings = ARRAY(S, at->n_strings, ProtobufCBinaryData)))
            return NULL;
        for (size_t i = 0; i < at->n_strings; i++) {
            p->strings[i].data = (uint8_t *)at->strings[i].data;
            p->strings[i].len = at->strings[i].len;
        }
        p->n_strings = at->n_strings;
    }
    if (at->n_tensors) {
        if (!(p->tensors = ARRAY(S, at->n_tensors, Onnx__TensorProto *)))
            return NULL;
        for (size_t i = 0; i < at->n_tensors; i++)
            if (!(p->tensors[i] = build_tensor(S, at->tensors[i])))
                return NULL;
        p->n_tensors = at->n_tensors;
    }
    if (at->n_graphs) {
        if (!(p->graphs = ARRAY(S, at->n_graphs, Onnx__GraphProto *)))
            return NULL;
        for (size_t i = 0; i < at->n_graphs; i++)
            if (!(p->graphs[i] = build_graph(S, at->graphs[i])))
                return NULL;
        p->n_graphs = at->n_graphs;
    }
    if (at->n_sparses) {
        if (!(p->sparse_tensors = ARRAY(S, at->n_sparses, Onnx__SparseTensorProto *)))
            return NULL;
        for (size_t i = 0; i < at->n_sparses; i++)
            if (!(p->sparse_tensors[i] = build_sparse(S, at->sparses[i])))
                return NULL;
        p->n_sparse_tensors = at->n_sparses;
    }
    if (at->n_tps) {
        if (!(p->type_protos = ARRAY(S, at->n_tps, Onnx__TypeProto *)))
            return NULL;
        for (size_t i = 0; i < at->n_tps; i++)
            if (!(p->type_protos[i] = build_type(S, at->tps[i])))
                return NULL;
        p->n_type_protos = at->n_tps;
    }
    return p;
}

static char **value_names(struct sg__saver *S, sg_value *const *vals, uint32_t n)
{
    char **names = ARRAY(S, n, char *);
    for (uint32_t i = 0; names && i < n; i++)
        names[i] = vals[i] ? str(vals[i]->name) : "";
    return names;
}

/* A node whose message holds no tensor and no graph: building it again is
 * cheap and gives the same bytes, so it can be built when written. */
static bool streamable(const sg_node *n)
{
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const sg_attr *a = n->attrs[i];
        if (a->t || a->n_tensors || a->g || a->n_graphs || a->sparse || a->n_sparses)
            return false;
    }
    return true;
}

static Onnx__NodeProto *build_node(struct sg__saver *S, sg_node *n)
{
    Onnx__NodeProto *p = NEW_MSG(S, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
    if (!p)
        return NULL;
    p->name = str(n->name);
    p->op_type = str(n->op_type);
    p->domain = str(n->domain);
    p->doc_string = str(n->doc);
    set_unknown(&p->base, n->unknown);
    p->n_input = n->n_inputs;
    p->n_output = n->n_outputs;
    if ((n->n_inputs && !(p->input = value_names(S, n->inputs, n->n_inputs))) ||
        (n->n_outputs && !(p->output = value_names(S, n->outputs, n->n_outputs))))
        return NULL;
    if (n->n_attrs) {
        if (!(p->attribute = ARRAY(S, n->n_attrs, Onnx__AttributeProto *)))
            return NULL;
        for (uint32_t i = 0; i < n->n_attrs; i++)
            if (!(p->attribute[i] = build_attr(S, n->attrs[i])))
                return NULL;
        p->n_attribute = n->n_attrs;
    }
    return p;
}

static Onnx__ValueInfoProto **build_vis(struct sg__saver *S, sg_value *const *vals, uint32_t n)
{
    Onnx__ValueInfoProto **arr = ARRAY(S, n, Onnx__ValueInfoProto *);
    for (uint32_t i = 0; arr && i < n; i++) {
        Onnx__ValueInfoProto *p = NEW_MSG(S, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
        if (!p)
            return NULL;
        p->name = str(vals[i]->name);
        p->doc_string = str(vals[i]->doc);
        set_unknown(&p->base, vals[i]->vi_unknown);
        if (vals[i]->type && !(p->type = build_type(S, vals[i]->type)))
            return NULL;
        arr[i] = p;
    }
    return arr;
}

static Onnx__GraphProto *build_graph(struct sg__saver *S, sg_graph *g)
{
    Onnx__GraphProto *p = NEW_MSG(S, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
    if (!p)
        return NULL;
    p->name = str(g->name);
    p->doc_string = str(g->doc);
    set_unknown(&p->base, g->unknown);
    if (g->n_nodes) {
        if (!(p->node = ARRAY(S, g->n_nodes, Onnx__NodeProto *)))
            return NULL;
        bool stream = g == S->m->graph && S->scratch;
        if (stream && !(S->main_nodes = ARRAY(S, g->n_nodes, sg_node *)))
            return NULL;
        size_t k = 0;
        for (sg_node *n = g->first; n; n = n->next, k++) {
            if (stream && streamable(n))
                S->main_nodes[k] = n; /* built when written */
            else if (!(p->node[k] = build_node(S, n)))
                return NULL;
        }
        p->n_node = k;
    }
    if (g->n_inits) {
        if (!(p->initializer = ARRAY(S, g->n_inits, Onnx__TensorProto *)))
            return NULL;
        for (uint32_t i = 0; i < g->n_inits; i++)
            if (!(p->initializer[i] = build_tensor(S, g->inits[i]->init)))
                return NULL;
        p->n_initializer = g->n_inits;
    }
    if (g->n_sparse_inits) {
        if (!(p->sparse_initializer = ARRAY(S, g->n_sparse_inits, Onnx__SparseTensorProto *)))
            return NULL;
        for (uint32_t i = 0; i < g->n_sparse_inits; i++)
            if (!(p->sparse_initializer[i] = build_sparse(S, g->sparse_inits[i])))
                return NULL;
        p->n_sparse_initializer = g->n_sparse_inits;
    }
    if ((g->n_inputs && !(p->input = build_vis(S, g->inputs, g->n_inputs))) ||
        (g->n_outputs && !(p->output = build_vis(S, g->outputs, g->n_outputs))) ||
        (g->n_value_info && !(p->value_info = build_vis(S, g->value_info, g->n_value_info))))
        return NULL;
    p->n_input = g->n_inputs;
    p->n_output = g->n_outputs;
    p->n_value_info = g->n_value_info;
    if (g->n_annotations) {
        if (!(p->quantization_annotation = ARRAY(S, g->n_annotations, Onnx__TensorAnnotation *)))
            return NULL;
        for (uint32_t i = 0; i < g->n_annotations; i++) {
            const sg_annotation *an = &g->annotations[i];
            Onnx__TensorAnnotation *ap =
                NEW_MSG(S, Onnx__TensorAnnotation, ONNX__TENSOR_ANNOTATION__INIT);
            if (!ap)
                return NULL;
            ap->tensor_name = str(an->tensor_name);
            set_unknown(&ap->base, an->unknown);
            if (an->n_params && !(ap->quant_parameter_tensor_names =
                                      sg__save_build_kvs(S, an->params, an->n_params)))
                return NULL;
            ap->n_quant_parameter_tensor_names = an->n_params;
            p->quantization_annotation[i] = ap;
        }
        p->n_quantization_annotation = g->n_annotations;
    }
    return p;
}

static Onnx__FunctionProto *build_function(struct sg__saver *S, const sg_function *f)
{
    Onnx__FunctionProto *p = NEW_MSG(S, Onnx__FunctionProto, ONNX__FUNCTION_PROTO__INIT);
    if (!p)
        return NULL;
    p->name = str(f->name);
    p->domain = str(f->domain);
    p->doc_string = str(f->doc);
    set_unknown(&p->base, f->unknown);
    p->n_attribute = f->n_attributes;
    p->attribute = (char **)f->attributes;
    if (f->n_opsets && !(p->opset_import = build_opsets(S, f->opsets, f->n_opsets)))
        return NULL;
    p->n_opset_import = f->n_opsets;
    sg_graph *b = f->body;
    p->n_input = b->n_inputs;
    p->n_output = b->n_outputs;
    if ((b->n_inputs && !(p->input = value_names(S, b->inputs, b->n_inputs))) ||
        (b->n_outputs && !(p->output = value_names(S, b->outputs, b->n_outputs))))
        return NULL;
    if (b->n_nodes) {
        if (!(p->node = ARRAY(S, b->n_nodes, Onnx__NodeProto *)))
            return NULL;
        size_t k = 0;
        for (sg_node *n = b->first; n; n = n->next)
            if (!(p->node[k++] = build_node(S, n)))
                return NULL;
        p->n_node = k;
    }
    return p;
}

Onnx__NodeProto *sg__save_main_node(struct sg__saver *S, Onnx__ModelProto *p, size_t i)
{
    if (p->graph->node[i])
        return p->graph->node[i];
    /* Build into the scratch arena, then put the saver's arena back. */
    sg_arena *keep = S->a;
    sg_arena_reset(S->scratch);
    S->a = S->scratch;
    Onnx__NodeProto *msg = build_node(S, S->main_nodes[i]);
    S->a = keep;
    return msg;
}

Onnx__ModelProto *sg__save_build_model(struct sg__saver *S)
{
    sg_model *m = S->m;
    Onnx__ModelProto *p = NEW_MSG(S, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
    if (!p)
        return NULL;
    p->has_ir_version = m->has_ir_version;
    p->ir_version = m->ir_version;
    p->has_model_version = m->has_model_version;
    p->model_version = m->model_version;
    p->producer_name = str(m->producer_name);
    p->producer_version = str(m->producer_version);
    p->domain = str(m->domain);
    p->doc_string = str(m->doc);
    set_unknown(&p->base, m->unknown);
    if (m->n_opsets && !(p->opset_import = build_opsets(S, m->opsets, m->n_opsets)))
        return NULL;
    p->n_opset_import = m->n_opsets;
    if (m->n_metadata && !(p->metadata_props = sg__save_build_kvs(S, m->metadata, m->n_metadata)))
        return NULL;
    p->n_metadata_props = m->n_metadata;
    if (m->graph && !(p->graph = build_graph(S, m->graph)))
        return NULL;
    if (m->n_training) {
        if (!(p->training_info = ARRAY(S, m->n_training, Onnx__TrainingInfoProto *)))
            return NULL;
        for (size_t i = 0; i < m->n_training; i++) {
            const sg_training *t = &m->training[i];
            Onnx__TrainingInfoProto *tp =
                NEW_MSG(S, Onnx__TrainingInfoProto, ONNX__TRAINING_INFO_PROTO__INIT);
            if (!tp)
                return NULL;
            set_unknown(&tp->base, t->unknown);
            if (t->initialization && !(tp->initialization = build_graph(S, t->initialization)))
                return NULL;
            if (t->algorithm && !(tp->algorithm = build_graph(S, t->algorithm)))
                return NULL;
            if (t->n_init_binding && !(tp->initialization_binding = sg__save_build_kvs(
                                           S, t->init_binding, t->n_init_binding)))
                return NULL;
            tp->n_initialization_binding = t->n_init_binding;
            if (t->n_update_binding && !(tp->update_binding = sg__save_build_kvs(
                                             S, t->update_binding, t->n_update_binding)))
                return NULL;
            tp->n_update_binding = t->n_update_binding;
            p->training_info[i] = tp;
        }
        p->n_training_info = m->n_training;
    }
    if (m->n_functions) {
        if (!(p->functions = ARRAY(S, m->n_functions, Onnx__FunctionProto *)))
            return NULL;
        for (size_t i = 0; i < m->n_functions; i++)
            if (!(p->functions[i] = build_function(S, &m->functions[i])))
                return NULL;
        p->n_functions = m->n_functions;
    }
    return p;
}
