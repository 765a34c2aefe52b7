/*
 * verify.c - check every IR invariant of a graph and its subgraphs.
 *
 * Run after loading and, in tests, after every pass. It trusts nothing the
 * mutation API is supposed to maintain: node list links, producer and use
 * lists, captures, graph input/output lists, acyclicity and, for operators
 * the schema table knows, the number of inputs and outputs.
 */
#include "ir_impl.h"
#include "sg_alloc.h"
#include "sg_opschema.h"

#include <stdatomic.h>
#include <string.h>

uint32_t sg__next_stamp(void)
{
    static _Atomic uint32_t counter;
    const uint32_t base = 1u << 24, span = (1u << 31) - (1u << 24);
    return base + ++counter % span;
}

static const char *nlabel(const sg_node *n)
{
    return n->name && *n->name ? n->name : "(unnamed)";
}

static const char *gname(const sg_graph *g)
{
    return g->name && *g->name ? g->name : "(unnamed graph)";
}

static uint32_t count_uses(const sg_value *v, const sg_node *n, int32_t index)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < v->n_uses; i++)
        if (v->uses[i].node == n && v->uses[i].index == index)
            c++;
    return c;
}

static bool is_defined(const sg_value *v)
{
    return v->producer || v->outer || v->init || v->sparse_init || (v->flags & SG_VALUE_INPUT);
}

/* Function bodies and training graphs may read names they do not define
 * (function attributes, the inference graph's initializers). */
static bool lenient(const sg_graph *g)
{
    return g->kind == SG_GRAPH_FUNCTION || g->kind == SG_GRAPH_TRAINING;
}

struct capture_count {
    const sg_value *outer;
    uint32_t count;
};

static sg_status count_capture(sg_graph *sub, void *ctx)
{
    struct capture_count *c = ctx;
    sg_value *cap = sg_graph_value(sub, c->outer->name);
    if (cap && cap->outer == c->outer)
        c->count++;
    return SG_OK;
}

sg_status sg__node_check_arity_schema(const sg_node *n, const struct sg_op_schema *s, int64_t opset,
                                      struct sg_diag *diag)
{
    if (!s)
        return SG_OK; /* unknown ops round-trip unchanged */
    int in = (int)n->n_inputs, out = (int)n->n_outputs;
    /* Trailing omitted optional inputs/outputs do not count. */
    while (in > 0 && !n->inputs[in - 1])
        in--;
    while (out > 0 && !n->outputs[out - 1])
        out--;
    if (in < s->min_inputs || (s->max_inputs >= 0 && in > s->max_inputs))
        return sg_diag_set(diag, SG_EARITY,
                           "node '%s' (%s, opset %lld) has %d inputs; the operator takes %d to %d",
                           nlabel(n), n->op_type, (long long)opset, in, s->min_inputs,
                           s->max_inputs);
    if (out < s->min_outputs || (s->max_outputs >= 0 && out > s->max_outputs))
        return sg_diag_set(diag, SG_EARITY,
                           "node '%s' (%s, opset %lld) has %d outputs; the operator makes %d to %d",
                           nlabel(n), n->op_type, (long long)opset, out, s->min_outputs,
                           s->max_outputs);
    return SG_OK;
}

/* Schemas of the op types met in one walk, by op_type and domain pointer
 * (nodes of one op type share their string once loaded): looking each up
 * by name was a third of verifying a big graph. */
#define ARITY_MEMO 8
struct arity_memo {
    const char *op, *domain;
    const struct sg_op_schema *schema;
    int64_t opset;
};

static sg_status check_arity(const sg_node *n, struct arity_memo *memo, struct sg_diag *diag)
{
    if (n->graph->kind != SG_GRAPH_MAIN && n->graph->kind != SG_GRAPH_SUB)
        return SG_OK; /* functions and training graphs have opsets of their own */
    size_t i = 0;
    while (i < ARITY_MEMO && memo[i].op &&
           !(memo[i].op == n->op_type && memo[i].domain == n->domain))
        i++;
    if (i == ARITY_MEMO || !memo[i].op) {
        i = 0;
        memmove(memo + 1, memo, (ARITY_MEMO - 1) * sizeof *memo);
        memo[0].op = n->op_type;
        memo[0].domain = n->domain;
        memo[0].opset = sg_model_opset(n->graph->model, n->domain);
        memo[0].schema = memo[0].opset ? sg_op_schema_find(n->domain, n->op_type, memo[0].opset)
                                       : NULL; /* domain not imported: nothing to check */
    }
    return sg__node_check_arity_schema(n, memo[i].schema, memo[i].opset, diag);
}

struct sub_ctx {
    sg_graph *parent;
    sg_node *owner;
    struct sg_diag *diag;
};

static sg_status verify_sub(sg_graph *sub, void *ctx)
{
    struct sub_ctx *c = ctx;
    if (sub->parent != c->parent || sub->owner != c->owner || sub->model != c->parent->model)
        return sg_diag_set(c->diag, SG_EINVAL, "subgraph '%s' of node '%s' has a wrong parent link",
                           gname(sub), nlabel(c->owner));
    return sg_graph_verify(sub, c->diag);
}

/* Each input slot (n, i) must be the use entry n->use_pos[i] of its value;
 * with the counts of slots and of explicit entries equal (checked by the
 * caller) that makes slots and entries match one to one. */
static sg_status check_value(sg_graph *g, sg_value *v, uint64_t *entries, struct sg_diag *diag);

static sg_status check_node(sg_graph *g, sg_node *n, uint64_t *slots, uint64_t *entries,
                            uint64_t *produced, uint32_t stamp, uint32_t base, bool *in_order,
                            struct arity_memo *memo, struct sg_diag *diag)
{
    if (n->graph != g || n->dead)
        return sg_diag_set(diag, SG_EINVAL, "node '%s' is listed in graph '%s' but not part of it",
                           nlabel(n), gname(g));
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        sg_value *v = n->inputs[i];
        if (!v)
            continue;
        uint32_t pos = n->use_pos[i];
        if (pos >= v->n_uses || v->uses[pos].node != n || v->uses[pos].index != (int32_t)i)
            return sg_diag_set(diag, SG_EINVAL,
                               "node '%s' input %u: value '%s' does not list it as a use",
                               nlabel(n), i, v->name);
        (*slots)++;
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        sg_value *v = n->inputs[i];
        if (!v)
            continue;
        if (v->graph != g || v->mark != stamp)
            return sg_diag_set(diag, SG_EINVAL,
                               "node '%s' input %u '%s' is not a value of its graph", nlabel(n), i,
                               v->name);
        /* The producer was numbered earlier in this walk, or it comes later
         * in the list (or is n itself). */
        const sg_node *p = v->producer;
        if (p && p->graph == g && !(p->mark > base && p->mark < n->mark))
            *in_order = false;
        if (!is_defined(v) && !lenient(g))
            return sg_diag_set(diag, SG_EUNDEF, "node '%s' (%s) reads undefined value '%s'",
                               nlabel(n), n->op_type, v->name);
    }
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        sg_value *v = n->outputs[i];
        if (!v)
            continue;
        if (v->graph != g || v->mark != stamp)
            return sg_diag_set(diag, SG_EINVAL,
                               "node '%s' output %u '%s' is not a value of its graph", nlabel(n), i,
                               v->name);
        if (v->producer != n || v->producer_index != i) {
            const sg_node *p = v->producer;
            if (!p || p->dead || p->graph != g || v->producer_index >= p->n_outputs ||
                p->outputs[v->producer_index] != v)
                return sg_diag_set(diag, SG_EINVAL,
                                   "value '%s' names a producer that does not make it", v->name);
            return sg_diag_set(diag, SG_EDUP, "value '%s' has more than one producer (node '%s')",
                               v->name, nlabel(n));
        }
        if (v->init || v->sparse_init || (v->flags & SG_VALUE_INPUT))
            return sg_diag_set(diag, SG_EDUP,
                               "value '%s' is produced by node '%s' and is also a graph %s",
                               v->name, nlabel(n), v->init ? "initializer" : "input");
        /* Its uses here, beside its producer in memory (sg_graph_verify). */
        sg_status st = check_value(g, v, entries, diag);
        if (st)
            return st;
        (*produced)++;
    }
    sg_status st = check_arity(n, memo, diag);
    if (st)
        return st;
    struct sub_ctx c = {g, n, diag};
    return sg_node_for_each_subgraph(n, verify_sub, &c);
}

static sg_status check_value(sg_graph *g, sg_value *v, uint64_t *entries, struct sg_diag *diag)
{
    if (v->graph != g)
        return sg_diag_set(diag, SG_EINVAL, "value '%s' is mapped in the wrong graph", v->name);
    if (v->producer) {
        sg_node *p = v->producer;
        if (p->dead || p->graph != g || v->producer_index >= p->n_outputs ||
            p->outputs[v->producer_index] != v)
            return sg_diag_set(diag, SG_EINVAL, "value '%s' names a producer that does not make it",
                               v->name);
    }
    if (v->outer) {
        if (!g->parent || v->outer->graph != g->parent)
            return sg_diag_set(diag, SG_EINVAL,
                               "capture '%s' does not point to the enclosing graph", v->name);
        if (count_uses(v->outer, g->owner, SG_USE_IMPLICIT) == 0)
            return sg_diag_set(diag, SG_EINVAL,
                               "outer value '%s' does not list node '%s' as an implicit use",
                               v->name, nlabel(g->owner));
        if (v->producer || v->init)
            return sg_diag_set(diag, SG_EDUP, "value '%s' is both captured and defined", v->name);
    }
    if ((v->flags & SG_VALUE_INITIALIZER) && !v->init && !v->sparse_init)
        return sg_diag_set(diag, SG_EINVAL, "value '%s' is flagged initializer without one",
                           v->name);
    for (uint32_t i = 0; i < v->n_uses; i++) {
        sg_use u = v->uses[i];
        if (!u.node || u.node->dead || u.node->graph != g)
            return sg_diag_set(diag, SG_EINVAL, "value '%s' lists a use by a node not in its graph",
                               v->name);
        if (u.index >= 0) {
            if ((uint32_t)u.index >= u.node->n_inputs || u.node->inputs[u.index] != v)
                return sg_diag_set(
                    diag, SG_EINVAL,
                    "value '%s' lists node '%s' input %d, which reads something else", v->name,
                    nlabel(u.node), u.index);
            (*entries)++;
        } else if (u.index == SG_USE_IMPLICIT) {
            struct capture_count c = {v, 0};
            sg_node_for_each_subgraph(u.node, count_capture, &c);
            if (c.count != count_uses(v, u.node, SG_USE_IMPLICIT))
                return sg_diag_set(
                    diag, SG_EINVAL, "value '%s' has %u implicit uses by node '%s' but %u captures",
                    v->name, count_uses(v, u.node, SG_USE_IMPLICIT), nlabel(u.node), c.count);
        } else {
            return sg_diag_set(diag, SG_EINVAL, "value '%s' has a use with a bad index", v->name);
        }
    }
    return SG_OK;
}

static sg_status check_list(sg_graph *g, sg_value **list, uint32_t n, uint32_t flag,
                            const char *what, uint32_t stamp, struct sg_diag *diag)
{
    for (uint32_t i = 0; i < n; i++) {
        sg_value *v = list[i];
        if (!v || v->graph != g || v->mark != stamp || !(v->flags & flag))
            return sg_diag_set(diag, SG_EINVAL, "graph '%s' %s %u is not a listed value of it",
                               gname(g), what, i);
        if (flag == SG_VALUE_OUTPUT && !is_defined(v) && !lenient(g))
            return sg_diag_set(diag, SG_EUNDEF, "graph '%s' output '%s' is never defined", gname(g),
                               v->name);
    }
    return SG_OK;
}

/*
 * Node numbers for one walk over g: the walk gives its k-th node the mark
 * base + k, and a node carries a number of this walk exactly when its mark
 * is above base (and at most base + n). Bases start at 2^31 and only grow
 * per model, above every mark other code leaves (positions and small
 * enums) and every earlier walk's numbers; on wrap-around every node of
 * the model is cleared first. So one walk both numbers the nodes and tells
 * whether each producer came earlier (a walk over a big graph is a cache
 * miss per node).
 */
#define MARK_FLOOR (1u << 31)

static sg_status clear_marks_sub(sg_graph *sub, void *ctx);

static void clear_marks(sg_graph *g)
{
    if (!g)
        return;
    for (sg_node *n = g->first; n; n = n->next) {
        n->mark = 0;
        sg_node_for_each_subgraph(n, clear_marks_sub, NULL);
    }
}

static sg_status clear_marks_sub(sg_graph *sub, void *ctx)
{
    (void)ctx;
    clear_marks(sub);
    return SG_OK;
}

static uint32_t reserve_marks(sg_model *m, uint32_t n)
{
    if (m->mark_base < MARK_FLOOR) {
        m->mark_base = MARK_FLOOR;
    } else if (m->mark_base > UINT32_MAX - n - 1) {
        clear_marks(m->graph);
        for (size_t i = 0; i < m->n_functions; i++)
            clear_marks(m->functions[i].body);
        for (size_t i = 0; i < m->n_training; i++) {
            clear_marks(m->training[i].initialization);
            clear_marks(m->training[i].algorithm);
        }
        m->mark_base = MARK_FLOOR;
    }
    uint32_t base = m->mark_base;
    m->mark_base += n + 1;
    return base;
}

sg_status sg_graph_verify(sg_graph *g, struct sg_diag *diag)
{
    if (g->n_nodes >= MARK_FLOOR / 2)
        return sg_diag_set(diag, SG_ERANGE, "graph '%s' has too many nodes", gname(g));
    uint64_t slots = 0, entries = 0, produced = 0, mapped_produced = 0;

    /* Check and stamp every mapped value (value->mark) in one walk (values
     * are visited in hash order: a cache miss each), so that "is this value
     * live in the graph" is a compare, not a lookup, for every input and
     * list entry below. */
    sg_status st = SG_OK;
    struct sg__strmap *map = g->values_map;
    uint32_t stamp = sg__next_stamp();
    for (size_t i = 0; i < map->cap; i++) {
        /* Values come in hash order, each a cache miss: load them a few
         * slots ahead so the misses overlap (only their first line is read
         * here: name, graph, flags, mark, producer). */
        if (i + 16 < map->cap && map->slots[i + 16].key)
            __builtin_prefetch(map->slots[i + 16].value);
        if (!map->slots[i].key)
            continue;
        sg_value *v = map->slots[i].value;
        if (map->slots[i].key != v->name && strcmp(map->slots[i].key, v->name) != 0) {
            st = sg_diag_set(diag, SG_EINVAL, "value '%s' is mapped under '%s'", v->name,
                             map->slots[i].key);
            goto out;
        }
        if (v->graph != g) {
            st = sg_diag_set(diag, SG_EINVAL, "value '%s' is mapped in the wrong graph", v->name);
            goto out;
        }
        v->mark = stamp;
        /* A produced value is checked with its producer, in the node walk
         * below: in list order its node, uses and readers are near each
         * other in memory, while here values come in hash order, each a
         * cache miss and its uses more. The count tells that every one
         * was reached. */
        if (v->producer)
            mapped_produced++;
        else if ((st = check_value(g, v, &entries, diag)))
            goto out;
    }
    if ((st = check_list(g, g->inputs, g->n_inputs, SG_VALUE_INPUT, "input", stamp, diag)) ||
        (st = check_list(g, g->outputs, g->n_outputs, SG_VALUE_OUTPUT, "output", stamp, diag)) ||
        (st = check_list(g, g->value_info, g->n_value_info, SG_VALUE_INFO, "value_info", stamp,
                         diag)) ||
        (st =
             check_list(g, g->inits, g->n_inits, SG_VALUE_INITIALIZER, "initializer", stamp, diag)))
        goto out;
    /* One walk checks the list links, numbers the nodes and checks each. */
    bool in_order = !g->has_subgraphs; /* captures add dependencies the walk cannot see */
    uint32_t base = reserve_marks(g->model, g->n_nodes), count = 0;
    const sg_node *prev = NULL;
    struct arity_memo memo[ARITY_MEMO] = {{0}};
    for (sg_node *n = g->first; n; n = n->next) {
        if (n->prev != prev || ++count > g->n_nodes) {
            st = sg_diag_set(diag, SG_EINVAL, "graph '%s' node list is corrupt", gname(g));
            goto out;
        }
        n->mark = base + count;
        if ((st =
                 check_node(g, n, &slots, &entries, &produced, stamp, base, &in_order, memo, diag)))
            goto out;
        prev = n;
    }
    if (count != g->n_nodes || g->last != prev) {
        st = sg_diag_set(diag, SG_EINVAL, "graph '%s' node count is wrong", gname(g));
        goto out;
    }
    if (produced != mapped_produced) {
        /* Some mapped value names a producer outside the list: find it. */
        for (size_t i = 0; i < map->cap; i++)
            if (map->slots[i].key && (st = check_value(g, map->slots[i].value, &entries, diag)))
                goto out;
        st = sg_diag_set(diag, SG_EINVAL, "graph '%s' has values whose producers are not listed",
                         gname(g));
        goto out;
    }
    if (slots != entries) {
        st = sg_diag_set(diag, SG_EINVAL,
                         "graph '%s' has %llu input slots but %llu use entries (a use is listed "
                         "twice)",
                         gname(g), (unsigned long long)slots, (unsigned long long)entries);
        goto out;
    }

    if (g->n_nodes && !in_order) {
        sg_node **order = sg_malloc(g->n_nodes * sizeof *order);
        if (!order) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory verifying graph");
            goto out;
        }
        st = sg_graph_toposort(g, order, diag);
        sg_free(order);
    }
out:
    return st;
}

/* The loader builds producer and use lists itself and rejects undefined
 * names and second producers as it goes; what it cannot see locally is a
 * cycle or a wrong operator arity, checked here for g and its subgraphs. */
static sg_status light_sub(sg_graph *sub, void *ctx)
{
    return sg__graph_check_loaded(sub, ctx);
}

sg_status sg__graph_check_loaded(sg_graph *g, struct sg_diag *diag)
{
    /* Arity was checked node by node while loading. A graph read in
     * topological order (no forward reference, no subgraph that may capture
     * a later value) cannot have a cycle, so only the others are sorted. */
    sg_status st = SG_OK;
    if (g->has_subgraphs)
        for (sg_node *n = g->first; n && !st; n = n->next)
            st = sg_node_for_each_subgraph(n, light_sub, diag);
    if (!st && g->n_nodes && (g->maybe_unsorted || g->has_subgraphs)) {
        sg_node **order = sg_malloc(g->n_nodes * sizeof *order);
        if (!order)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory checking graph");
        st = sg_graph_toposort(g, order, diag);
        sg_free(order);
    }
    return st;
}

sg_status sg_model_verify(sg_model *m, struct sg_diag *diag)
{
    sg_status st = m->graph ? sg_graph_verify(m->graph, diag) : SG_OK;
    for (size_t i = 0; !st && i < m->n_functions; i++) {
        st = sg_graph_verify(m->functions[i].body, diag);
        if (st)
            sg_diag_prefix(diag, "function '%s'", m->functions[i].name ? m->functions[i].name : "");
    }
    for (size_t i = 0; !st && i < m->n_training; i++) {
        if (m->training[i].initialization)
            st = sg_graph_verify(m->training[i].initialization, diag);
        if (!st && m->training[i].algorithm)
            st = sg_graph_verify(m->training[i].algorithm, diag);
    }
    return st;
}
