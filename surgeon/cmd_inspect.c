/*
 * cmd_inspect.c - `surgeon inspect`: what a model contains, as text or JSON.
 */
#include "cli.h"
#include "inspect_shapes.h"
#include "sg_alloc.h"
#include "sg_io.h"
#include "sg_json.h"
#include "sg_kernel.h"
#include "sg_opschema.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_inspect = {
    "inspect",
    "show a model's inputs, outputs, opsets, operators and weights",
    "usage: surgeon inspect MODEL [--json] [--nodes] [--shapes]\n\n"
    "Print the IR version, opsets, producer, graph inputs and outputs (dtype and\n"
    "shape, symbolic dims by name), node counts (top level and with subgraphs),\n"
    "the op-type histogram, weights (initializers, and tensors held in Constant\n"
    "nodes, every graph) and external data files.\n\n"
    "  --json    machine-readable output\n"
    "  --nodes   also list the nodes in topological order with their inputs/outputs\n"
    "  --shapes  infer shapes and list every value with its type and shape, the\n"
    "            conflicts with recorded shapes and the nodes not shaped\n",
    run,
};

struct op_count {
    const char *op;
    const char *domain;
    size_t count;
};

struct stats {
    struct op_count *ops;
    size_t n_ops, cap_ops;
    size_t inits, init_bytes;
    size_t consts, const_bytes; /* tensors in Constant nodes' `value`, every graph */
    size_t subgraph_nodes;
    struct ext_file {
        const char *path;
        size_t tensors;
        size_t bytes;
    } * files;
    size_t n_files, cap_files;
    bool oom;
};

static void *grow(void *arr, size_t *cap, size_t n, size_t item, bool *oom)
{
    if (n < *cap)
        return arr;
    size_t c = *cap ? *cap * 2 : 16;
    void *g = sg_realloc(arr, c * item);
    if (!g) {
        *oom = true;
        return arr;
    }
    *cap = c;
    return g;
}

static void count_op(struct stats *s, const sg_node *n)
{
    const char *dom = n->domain && *n->domain && strcmp(n->domain, "ai.onnx") ? n->domain : "";
    for (size_t i = 0; i < s->n_ops; i++)
        if (strcmp(s->ops[i].op, n->op_type) == 0 && strcmp(s->ops[i].domain, dom) == 0) {
            s->ops[i].count++;
            return;
        }
    s->ops = grow(s->ops, &s->cap_ops, s->n_ops, sizeof *s->ops, &s->oom);
    if (s->n_ops < s->cap_ops)
        s->ops[s->n_ops++] = (struct op_count){n->op_type, dom, 1};
}

static size_t tensor_size(const sg_tensor *t);

/* Weights held in a Constant node (Paddle and spox exports keep them there
 * rather than in initializers). */
static void count_constant(struct stats *s, const sg_node *n)
{
    if (strcmp(n->op_type, "Constant") != 0 ||
        (n->domain && *n->domain && strcmp(n->domain, "ai.onnx")))
        return;
    const sg_attr *at = sg_node_attr(n, "value");
    if (!at || !at->t)
        return;
    s->consts++;
    s->const_bytes += tensor_size(at->t);
}

static void count_graph(struct stats *s, const sg_graph *g, bool top)
{
    for (const sg_node *n = g->first; n; n = n->next) {
        count_op(s, n);
        count_constant(s, n);
        if (!top)
            s->subgraph_nodes++;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            const sg_attr *at = n->attrs[a];
            if (at->g)
                count_graph(s, at->g, false);
            for (size_t k = 0; k < at->n_graphs; k++)
                count_graph(s, at->graphs[k], false);
        }
    }
}

static sg_status count_tensor(sg_tensor *t, void *ctx)
{
    struct stats *s = ctx;
    if (!sg_tensor_is_external(t))
        return SG_OK;
    const sg_tensor_extra *x = t->extra; /* set: t is external */
    const char *path = x->ext_blob ? x->ext_blob->path : "(unresolved)";
    for (size_t i = 0; i < s->n_files; i++)
        if (strcmp(s->files[i].path, path) == 0) {
            s->files[i].tensors++;
            s->files[i].bytes += x->ext_len;
            return SG_OK;
        }
    s->files = grow(s->files, &s->cap_files, s->n_files, sizeof *s->files, &s->oom);
    if (s->n_files < s->cap_files)
        s->files[s->n_files++] = (struct ext_file){path, 1, x->ext_len};
    return SG_OK;
}

static size_t tensor_size(const sg_tensor *t)
{
    const sg_tensor_extra *x = sg_tensor_get_extra(t);
    if (sg_tensor_is_external(t))
        return x->ext_len;
    if (t->has_raw)
        return t->raw_len;
    if (t->dtype == SG_DTYPE_STRING) {
        size_t total = 0;
        for (size_t i = 0; i < x->n_string; i++)
            total += x->string_data[i].len;
        return total;
    }
    return sg_tensor_nbytes(t);
}

static int cmp_ops(const void *a, const void *b)
{
    const struct op_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    int c = strcmp(x->domain, y->domain);
    return c ? c : strcmp(x->op, y->op);
}

static const char *domain_name(const char *d)
{
    return !d || !*d ? "ai.onnx" : d;
}

/* Graph inputs that are not initializers (old models list weights as inputs). */
static bool is_real_input(const sg_value *v)
{
    return !v->init && !v->sparse_init;
}

static void print_text(const char *path, sg_model *m, struct stats *s, sg_node **order, bool nodes)
{
    char buf[512], b2[32];
    sg_graph *g = m->graph;
    printf("model:        %s\n", path);
    if (m->has_ir_version)
        printf("ir_version:   %" PRId64 "\n", m->ir_version);
    printf("opsets:       ");
    for (size_t i = 0; i < m->n_opsets; i++)
        printf("%s%s %" PRId64, i ? ", " : "", domain_name(m->opsets[i].domain),
               m->opsets[i].version);
    printf("%s\n", m->n_opsets ? "" : "(none)");
    for (size_t i = 0; i < m->n_opsets; i++) {
        const char *dom = m->opsets[i].domain;
        int newest = sg_op_schema_newest_opset(dom), kernels = sg_kernel_newest_opset(dom);
        if (kernels)
            printf("runtime:      %s opsets 1 to %d (the newest its kernels implement)\n",
                   domain_name(dom), kernels);
        else
            printf("runtime:      no kernels for domain %s\n", domain_name(dom));
        if (newest && m->opsets[i].version > newest)
            printf("note:         %s %" PRId64 " is newer than the operator table (%d): node "
                   "arities are not checked\n",
                   domain_name(dom), m->opsets[i].version, newest);
    }
    if (m->producer_name || m->producer_version)
        printf("producer:     %s%s%s\n", m->producer_name ? m->producer_name : "",
               m->producer_version ? " " : "", m->producer_version ? m->producer_version : "");
    if (g->name && *g->name)
        printf("graph:        %s\n", g->name);
    for (size_t i = 0; i < m->n_metadata; i++)
        printf("metadata:     %s = %s\n", m->metadata[i].key ? m->metadata[i].key : "",
               m->metadata[i].value ? m->metadata[i].value : "");
    printf("inputs:\n");
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (is_real_input(g->inputs[i]))
            printf("  %-24s %s\n", g->inputs[i]->name,
                   sg_type_format(g->inputs[i]->type, buf, sizeof buf));
    printf("outputs:\n");
    for (uint32_t i = 0; i < g->n_outputs; i++)
        printf("  %-24s %s\n", g->outputs[i]->name,
               sg_type_format(g->outputs[i]->type, buf, sizeof buf));
    printf("nodes:        %u top level, %zu with subgraphs\n", g->n_nodes,
           (size_t)g->n_nodes + s->subgraph_nodes);
    printf("op types:     %zu\n", s->n_ops);
    for (size_t i = 0; i < s->n_ops; i++)
        printf("  %-24s %zu\n",
               s->ops[i].domain[0]
                   ? (snprintf(buf, sizeof buf, "%s.%s", s->ops[i].domain, s->ops[i].op), buf)
                   : s->ops[i].op,
               s->ops[i].count);
    printf("initializers: %zu, %s\n", s->inits, cli_human_bytes(s->init_bytes, b2, sizeof b2));
    printf("constants:    %zu Constant node tensor%s, %s\n", s->consts, s->consts == 1 ? "" : "s",
           cli_human_bytes(s->const_bytes, b2, sizeof b2));
    if (s->n_files) {
        printf("external data:\n");
        for (size_t i = 0; i < s->n_files; i++)
            printf("  %-24s %zu tensors, %s\n", s->files[i].path, s->files[i].tensors,
                   cli_human_bytes(s->files[i].bytes, b2, sizeof b2));
    }
    if (m->n_functions)
        printf("functions:    %zu\n", m->n_functions);
    if (nodes) {
        printf("node list (topological order):\n");
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node *n = order[i];
            printf("  %5u  %-16s %s  (", i, n->op_type, n->name && *n->name ? n->name : "-");
            for (uint32_t k = 0; k < n->n_inputs; k++)
                printf("%s%s", k ? ", " : "", n->inputs[k] ? n->inputs[k]->name : "");
            printf(") -> (");
            for (uint32_t k = 0; k < n->n_outputs; k++)
                printf("%s%s", k ? ", " : "", n->outputs[k] ? n->outputs[k]->name : "");
            printf(")\n");
        }
    }
}

static void json_value_list(struct sg_json *j, sg_value *const *vals, uint32_t n, bool skip_init)
{
    char buf[512];
    sg_json_array_begin(j);
    for (uint32_t i = 0; i < n; i++) {
        const sg_value *v = vals[i];
        if (skip_init && !is_real_input(v))
            continue;
        sg_json_object_begin(j);
        sg_json_key(j, "name");
        sg_json_string(j, v->name);
        const sg_type *t = v->type;
        sg_json_key(j, "dtype");
        sg_json_string(j, t && t->kind == SG_TYPE_TENSOR && t->has_elem_type
                              ? sg_dtype_name(t->elem_type)
                              : NULL);
        sg_json_key(j, "shape");
        if (t && t->kind == SG_TYPE_TENSOR && t->shape) {
            sg_json_array_begin(j);
            for (uint32_t k = 0; k < t->shape->rank; k++) {
                const sg_dim *d = &t->shape->dims[k];
                if (d->kind == SG_DIM_VALUE)
                    sg_json_int(j, d->value);
                else if (d->kind == SG_DIM_PARAM)
                    sg_json_string(j, d->param);
                else
                    sg_json_null(j);
            }
            sg_json_array_end(j);
        } else {
            sg_json_null(j);
        }
        sg_json_key(j, "type");
        sg_json_string(j, sg_type_format(t, buf, sizeof buf));
        sg_json_object_end(j);
    }
    sg_json_array_end(j);
}

static void print_json(const char *path, sg_model *m, struct stats *s, sg_node **order, bool nodes,
                       const struct sg_shape_result *shapes)
{
    struct sg_json j;
    sg_json_init(&j, stdout, true);
    sg_graph *g = m->graph;
    sg_json_object_begin(&j);
    sg_json_key(&j, "model");
    sg_json_string(&j, path);
    sg_json_key(&j, "ir_version");
    if (m->has_ir_version)
        sg_json_int(&j, m->ir_version);
    else
        sg_json_null(&j);
    sg_json_key(&j, "opsets");
    sg_json_object_begin(&j);
    for (size_t i = 0; i < m->n_opsets; i++) {
        sg_json_key(&j, domain_name(m->opsets[i].domain));
        sg_json_int(&j, m->opsets[i].version);
    }
    sg_json_object_end(&j);
    /* the newest opset the runtime's kernels implement, per model domain */
    sg_json_key(&j, "runtime_opsets");
    sg_json_object_begin(&j);
    for (size_t i = 0; i < m->n_opsets; i++) {
        sg_json_key(&j, domain_name(m->opsets[i].domain));
        sg_json_int(&j, sg_kernel_newest_opset(m->opsets[i].domain));
    }
    sg_json_object_end(&j);
    sg_json_key(&j, "producer_name");
    sg_json_string(&j, m->producer_name);
    sg_json_key(&j, "producer_version");
    sg_json_string(&j, m->producer_version);
    sg_json_key(&j, "graph_name");
    sg_json_string(&j, g->name);
    sg_json_key(&j, "metadata");
    sg_json_object_begin(&j);
    for (size_t i = 0; i < m->n_metadata; i++) {
        sg_json_key(&j, m->metadata[i].key ? m->metadata[i].key : "");
        sg_json_string(&j, m->metadata[i].value);
    }
    sg_json_object_end(&j);
    sg_json_key(&j, "inputs");
    json_value_list(&j, g->inputs, g->n_inputs, true);
    sg_json_key(&j, "outputs");
    json_value_list(&j, g->outputs, g->n_outputs, false);
    sg_json_key(&j, "nodes");
    sg_json_int(&j, g->n_nodes);
    sg_json_key(&j, "nodes_with_subgraphs");
    sg_json_int(&j, (int64_t)(g->n_nodes + s->subgraph_nodes));
    sg_json_key(&j, "op_types");
    sg_json_object_begin(&j);
    for (size_t i = 0; i < s->n_ops; i++) {
        char key[300];
        snprintf(key, sizeof key, "%s%s%s", s->ops[i].domain, s->ops[i].domain[0] ? "." : "",
                 s->ops[i].op);
        sg_json_key(&j, key);
        sg_json_int(&j, (int64_t)s->ops[i].count);
    }
    sg_json_object_end(&j);
    sg_json_key(&j, "initializers");
    sg_json_int(&j, (int64_t)s->inits);
    sg_json_key(&j, "initializer_bytes");
    sg_json_int(&j, (int64_t)s->init_bytes);
    sg_json_key(&j, "constant_nodes");
    sg_json_int(&j, (int64_t)s->consts);
    sg_json_key(&j, "constant_bytes");
    sg_json_int(&j, (int64_t)s->const_bytes);
    sg_json_key(&j, "external_data");
    sg_json_array_begin(&j);
    for (size_t i = 0; i < s->n_files; i++) {
        sg_json_object_begin(&j);
        sg_json_key(&j, "file");
        sg_json_string(&j, s->files[i].path);
        sg_json_key(&j, "tensors");
        sg_json_int(&j, (int64_t)s->files[i].tensors);
        sg_json_key(&j, "bytes");
        sg_json_int(&j, (int64_t)s->files[i].bytes);
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_key(&j, "functions");
    sg_json_int(&j, (int64_t)m->n_functions);
    if (nodes) {
        sg_json_key(&j, "node_list");
        sg_json_array_begin(&j);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const sg_node *n = order[i];
            sg_json_object_begin(&j);
            sg_json_key(&j, "name");
            sg_json_string(&j, n->name);
            sg_json_key(&j, "op_type");
            sg_json_string(&j, n->op_type);
            sg_json_key(&j, "domain");
            sg_json_string(&j, n->domain);
            sg_json_key(&j, "inputs");
            sg_json_array_begin(&j);
            for (uint32_t k = 0; k < n->n_inputs; k++)
                sg_json_string(&j, n->inputs[k] ? n->inputs[k]->name : "");
            sg_json_array_end(&j);
            sg_json_key(&j, "outputs");
            sg_json_array_begin(&j);
            for (uint32_t k = 0; k < n->n_outputs; k++)
                sg_json_string(&j, n->outputs[k] ? n->outputs[k]->name : "");
            sg_json_array_end(&j);
            sg_json_object_end(&j);
        }
        sg_json_array_end(&j);
    }
    if (shapes)
        sg__inspect_shapes_json(&j, m, shapes);
    sg_json_object_end(&j);
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"nodes", no_argument, NULL, 'n'},
        {"shapes", no_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, nodes = false, shapes = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'n':
            nodes = true;
            break;
        case 's':
            shapes = true;
            break;
        default:
            return cli_unknown_option(&sg_cmd_inspect, longopts, argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage(&sg_cmd_inspect, optind >= argc ? "missing MODEL" : "too many arguments");
    const char *path = argv[optind];

    struct sg_diag diag = {0};
    sg_model *m = NULL;
    if (sg_model_load(path, NULL, &m, &diag))
        return cli_fail(&diag);

    struct stats s = {0};
    count_graph(&s, m->graph, true);
    sg_model_for_each_tensor(m, count_tensor, &s);
    for (uint32_t i = 0; i < m->graph->n_inits; i++) {
        s.inits++;
        s.init_bytes += tensor_size(m->graph->inits[i]->init);
    }
    if (s.n_ops)
        qsort(s.ops, s.n_ops, sizeof *s.ops, cmp_ops);
    sg_node **order = sg_malloc((m->graph->n_nodes + 1) * sizeof *order);
    int rc = SG_EXIT_OK;
    struct sg_shape_result res = {0};
    if (!order || s.oom) {
        sg_diag_set(&diag, SG_ENOMEM, "out of memory");
        rc = cli_fail(&diag);
    } else if (sg_graph_toposort(m->graph, order, &diag)) {
        rc = cli_fail(&diag);
    } else if (shapes && sg__inspect_infer(m, &res, &diag)) {
        rc = cli_fail(&diag);
    } else if (json) {
        print_json(path, m, &s, order, nodes, shapes ? &res : NULL);
    } else {
        print_text(path, m, &s, order, nodes);
        if (shapes)
            sg__inspect_shapes_text(stdout, m, &res);
    }
    sg_shape_result_clear(&res);
    sg_free(order);
    sg_free(s.ops);
    sg_free(s.files);
    sg_model_free(m);
    return rc;
}
