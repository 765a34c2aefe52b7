/*
 * print.c - deterministic text dump of a model (see sg_print.h).
 *
 * Every choice here serves exact comparison: floats with "%.9g" (enough to
 * round-trip float32), captures sorted by name, large tensors summarised by
 * element count and an FNV-1a checksum of their native bytes.
 */
#include "ir_impl.h"
#include "sg_alloc.h"
#include "sg_print.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHOWN 16 /* tensors with more elements are summarised */

static void pad(FILE *out, int indent)
{
    fprintf(out, "%*s", indent, "");
}

static void put_float(FILE *out, double v)
{
    if (isnan(v))
        fputs("nan", out);
    else if (isinf(v))
        fputs(v < 0 ? "-inf" : "inf", out);
    else
        fprintf(out, "%.9g", v);
}

static void put_bytes(FILE *out, const uint8_t *p, size_t len)
{
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '"' || p[i] == '\\')
            fprintf(out, "\\%c", p[i]);
        else if (p[i] < 0x20 || p[i] >= 0x7f)
            fprintf(out, "\\x%02x", p[i]);
        else
            fputc(p[i], out);
    }
    fputc('"', out);
}

static void put_dims(FILE *out, const int64_t *dims, uint32_t rank)
{
    fputc('[', out);
    for (uint32_t i = 0; i < rank; i++)
        fprintf(out, "%s%" PRId64, i ? "," : "", dims[i]);
    fputc(']', out);
}

static void put_element(FILE *out, int32_t dtype, const uint8_t *p)
{
    switch (dtype) {
    case SG_DTYPE_FLOAT: {
        float f;
        memcpy(&f, p, 4);
        put_float(out, f);
        break;
    }
    case SG_DTYPE_DOUBLE: {
        double d;
        memcpy(&d, p, 8);
        put_float(out, d);
        break;
    }
    case SG_DTYPE_FLOAT16:
    case SG_DTYPE_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        put_float(out, dtype == SG_DTYPE_FLOAT16 ? sg_half_to_float(h) : sg_bf16_to_float(h));
        break;
    }
    case SG_DTYPE_BOOL:
        fputs(*p ? "true" : "false", out);
        break;
    case SG_DTYPE_INT8:
    case SG_DTYPE_INT4:
        fprintf(out, "%d", (int8_t)*p);
        break;
    case SG_DTYPE_UINT8:
    case SG_DTYPE_UINT4:
        fprintf(out, "%u", *p);
        break;
    case SG_DTYPE_FLOAT8E4M3FN:
    case SG_DTYPE_FLOAT8E4M3FNUZ:
    case SG_DTYPE_FLOAT8E5M2:
    case SG_DTYPE_FLOAT8E5M2FNUZ:
    case SG_DTYPE_FLOAT4E2M1:
        put_float(out, sg_dtype_get_f64(dtype, p, 0));
        break;
    case SG_DTYPE_INT16:
    case SG_DTYPE_UINT16: {
        uint16_t u;
        memcpy(&u, p, 2);
        if (dtype == SG_DTYPE_INT16)
            fprintf(out, "%d", (int16_t)u);
        else
            fprintf(out, "%u", u);
        break;
    }
    case SG_DTYPE_INT32:
    case SG_DTYPE_UINT32: {
        uint32_t u;
        memcpy(&u, p, 4);
        if (dtype == SG_DTYPE_INT32)
            fprintf(out, "%" PRId32, (int32_t)u);
        else
            fprintf(out, "%" PRIu32, u);
        break;
    }
    case SG_DTYPE_INT64:
    case SG_DTYPE_UINT64: {
        uint64_t u;
        memcpy(&u, p, 8);
        if (dtype == SG_DTYPE_INT64)
            fprintf(out, "%" PRId64, (int64_t)u);
        else
            fprintf(out, "%" PRIu64, u);
        break;
    }
    default: {
        size_t es = sg_dtype_size(dtype);
        fputs("0x", out);
        for (size_t i = es; i > 0; i--)
            fprintf(out, "%02x", p[i - 1]);
        break;
    }
    }
}

static void put_tensor(FILE *out, sg_model *m, sg_tensor *t)
{
    fprintf(out, "%s", t->has_dtype ? sg_dtype_name(t->dtype) : "?");
    put_dims(out, t->dims, t->rank);
    if (t->dtype == SG_DTYPE_STRING) {
        const sg_tensor_extra *x = sg_tensor_get_extra(t);
        fputs(" = [", out);
        for (size_t i = 0; i < x->n_string && i < MAX_SHOWN; i++) {
            if (i)
                fputc(',', out);
            put_bytes(out, x->string_data[i].data, x->string_data[i].len);
        }
        fputs(x->n_string > MAX_SHOWN ? ",...]" : "]", out);
        return;
    }
    if (sg_tensor_is_external(t))
        fputs(" external", out);
    size_t nbytes = 0;
    struct sg_diag d = {0};
    const uint8_t *data = sg_tensor_data(m, t, &nbytes, &d);
    if (!data) {
        fprintf(out, " = <unreadable: %s>", d.msg);
        return;
    }
    size_t es = sg_dtype_size(t->dtype);
    size_t count = es ? nbytes / es : 0;
    if (count > MAX_SHOWN) {
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < nbytes; i++) {
            h ^= data[i];
            h *= 1099511628211ull;
        }
        fprintf(out, " = <%zu values, fnv1a %016" PRIx64 ">", count, h);
        return;
    }
    fputs(" = ", out);
    if (t->rank > 0)
        fputc('[', out);
    for (size_t i = 0; i < count; i++) {
        if (i)
            fputc(',', out);
        put_element(out, t->dtype, data + i * es);
    }
    if (t->rank > 0)
        fputc(']', out);
}

static void put_type(FILE *out, const sg_type *t)
{
    char buf[512];
    fputs(sg_type_format(t, buf, sizeof buf), out);
}

static void print_graph(sg_graph *g, FILE *out, int indent);

static void put_attr(FILE *out, sg_model *m, sg_attr *at, int indent)
{
    pad(out, indent);
    fprintf(out, "%s = ", at->name ? at->name : "?");
    if (at->ref_attr_name) {
        fprintf(out, "@%s\n", at->ref_attr_name);
        return;
    }
    switch (at->type) {
    case SG_ATTR_FLOAT:
        put_float(out, at->f);
        break;
    case SG_ATTR_INT:
        fprintf(out, "%" PRId64, at->i);
        break;
    case SG_ATTR_STRING:
        put_bytes(out, at->s.data, at->s.len);
        break;
    case SG_ATTR_TENSOR:
        if (at->t)
            put_tensor(out, m, at->t);
        break;
    case SG_ATTR_FLOATS:
        fputc('[', out);
        for (size_t i = 0; i < at->n_floats; i++) {
            if (i)
                fputc(',', out);
            put_float(out, at->floats[i]);
        }
        fputc(']', out);
        break;
    case SG_ATTR_INTS:
        put_dims(out, at->ints, (uint32_t)at->n_ints);
        break;
    case SG_ATTR_STRINGS:
        fputc('[', out);
        for (size_t i = 0; i < at->n_strings; i++) {
            if (i)
                fputc(',', out);
            put_bytes(out, at->strings[i].data, at->strings[i].len);
        }
        fputc(']', out);
        break;
    case SG_ATTR_TENSORS:
        fputc('[', out);
        for (size_t i = 0; i < at->n_tensors; i++) {
            if (i)
                fputs(", ", out);
            put_tensor(out, m, at->tensors[i]);
        }
        fputc(']', out);
        break;
    case SG_ATTR_GRAPH:
        fputs("graph\n", out);
        if (at->g)
            print_graph(at->g, out, indent + 2);
        return;
    case SG_ATTR_GRAPHS:
        fprintf(out, "%zu graphs\n", at->n_graphs);
        for (size_t i = 0; i < at->n_graphs; i++)
            print_graph(at->graphs[i], out, indent + 2);
        return;
    default:
        fprintf(out, "<attribute type %d>", (int)at->type);
        break;
    }
    fputc('\n', out);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_captures(sg_graph *g, FILE *out, int indent)
{
    struct sg__strmap *map = g->values_map;
    size_t n = 0;
    for (size_t i = 0; i < map->cap; i++)
        if (map->slots[i].key && ((sg_value *)map->slots[i].value)->outer)
            n++;
    if (!n)
        return;
    const char **names = sg_malloc(n * sizeof *names);
    pad(out, indent);
    if (!names) {
        fprintf(out, "captures %zu names\n", n);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < map->cap; i++)
        if (map->slots[i].key && ((sg_value *)map->slots[i].value)->outer)
            names[k++] = map->slots[i].key;
    qsort(names, n, sizeof *names, cmp_str);
    fputs("captures", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : " ", names[i]);
    fputc('\n', out);
    sg_free(names);
}

static void put_value_line(FILE *out, int indent, const char *what, const sg_value *v)
{
    pad(out, indent);
    fprintf(out, "%s %s: ", what, v->name);
    put_type(out, v->type);
    fputc('\n', out);
}

static void print_graph(sg_graph *g, FILE *out, int indent)
{
    sg_model *m = g->model;
    pad(out, indent);
    fprintf(out, "graph %s\n", g->name ? g->name : "");
    indent += 2;
    put_captures(g, out, indent);
    for (uint32_t i = 0; i < g->n_inputs; i++)
        put_value_line(out, indent, "input", g->inputs[i]);
    for (uint32_t i = 0; i < g->n_inits; i++) {
        sg_value *v = g->inits[i];
        pad(out, indent);
        fprintf(out, "init %s: ", v->name);
        put_tensor(out, m, v->init);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < g->n_sparse_inits; i++) {
        const sg_sparse *s = g->sparse_inits[i];
        pad(out, indent);
        fprintf(out, "sparse_init %s\n", s->values && s->values->name ? s->values->name : "?");
    }
    for (sg_node *n = g->first; n; n = n->next) {
        pad(out, indent);
        fprintf(out, "node %s: %s%s%s(", n->name ? n->name : "-",
                n->domain && *n->domain ? n->domain : "", n->domain && *n->domain ? "." : "",
                n->op_type);
        for (uint32_t i = 0; i < n->n_inputs; i++)
            fprintf(out, "%s%s", i ? ", " : "", n->inputs[i] ? n->inputs[i]->name : "");
        fputs(") -> (", out);
        for (uint32_t i = 0; i < n->n_outputs; i++)
            fprintf(out, "%s%s", i ? ", " : "", n->outputs[i] ? n->outputs[i]->name : "");
        fputs(")\n", out);
        for (uint32_t a = 0; a < n->n_attrs; a++)
            put_attr(out, m, n->attrs[a], indent + 4);
    }
    for (uint32_t i = 0; i < g->n_outputs; i++)
        put_value_line(out, indent, "output", g->outputs[i]);
    for (uint32_t i = 0; i < g->n_value_info; i++)
        put_value_line(out, indent, "value_info", g->value_info[i]);
}

sg_status sg_graph_print_text(sg_graph *g, FILE *out, int indent)
{
    print_graph(g, out, indent);
    return ferror(out) ? SG_EIO : SG_OK;
}

sg_status sg_model_print_text(sg_model *m, FILE *out)
{
    fputs("model", out);
    if (m->has_ir_version)
        fprintf(out, " ir_version=%" PRId64, m->ir_version);
    fputs(" opsets=", out);
    for (size_t i = 0; i < m->n_opsets; i++)
        fprintf(out, "%s%s:%" PRId64, i ? "," : "",
                m->opsets[i].domain && *m->opsets[i].domain ? m->opsets[i].domain : "ai.onnx",
                m->opsets[i].version);
    fputc('\n', out);
    if (m->graph)
        print_graph(m->graph, out, 0);
    for (size_t i = 0; i < m->n_functions; i++) {
        fprintf(out, "function %s.%s\n", m->functions[i].domain ? m->functions[i].domain : "",
                m->functions[i].name ? m->functions[i].name : "");
        if (m->functions[i].body)
            print_graph(m->functions[i].body, out, 2);
    }
    return ferror(out) ? SG_EIO : SG_OK;
}
