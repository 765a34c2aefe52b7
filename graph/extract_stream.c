/*
 * extract_stream.c - extract without loading: cut a sub-model out of a
 * model file by copying the kept messages' bytes straight from the file.
 *
 * sg_model_extract works on the loaded IR, which costs about 500 bytes a
 * node: 50 MB for a 100,000-node model of 3.5 MB. This path reads the
 * model's wire format through a read-only mapping and keeps only an index,
 * sized by a first pass and held in anonymous mappings: per distinct
 * tensor name its place in the file, a hash, its producer and flags (16
 * bytes, and 4 of hash table), per node its first input edge (4), a keep
 * bit, and per node input its name's number (4). The pages of the file are
 * given back as each pass goes by them. Every message goes through the
 * loader's checks (decode_impl.h's single-message checks), the graph
 * through those of the loader that concern the cut (one producer per name,
 * no cycle, defined reads, operator arity), and exposed tensors
 * the model leaves untyped get the element type the IR's inference gives
 * (and so do the value_info entries that inference types on its way). The
 * result is written by copying the byte ranges of every kept message in
 * their order, with new entries for the inputs and outputs.
 *
 * It covers the common case, and answers SG_EUNSUPPORTED, having written
 * nothing, for everything else: subgraphs (If/Loop/Scan bodies), model-local
 * functions, training information, sparse or external tensors, a tensor
 * with two entries that the result keeps, a graph whose file order is too
 * far from a topological one to infer types in a few passes,
 * and every defect the loader or sg_model_extract would report. The caller
 * then runs the loader and sg_model_extract, whose result and messages are
 * the reference: for every cut this path takes, both write the same model
 * (tests/extract_stream_test.py).
 */
#include "extract_stream_impl.h"
#include "sg_alloc.h"
#include "sg_file.h"
#include "sg_io.h"
#include "strmap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* -------------------------------------------------------------- the cut */

bool sg__xs_push_id(uint32_t **v, size_t *n, size_t *cap, uint32_t id)
{
    if (!sg__xs_grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = id;
    return true;
}

static sg_status lookup(struct xs *x, const char *name, uint32_t *id)
{
    if (!sg__xs_name_id(x, (const uint8_t *)name, strlen(name), false, id) || !*id)
        return sg__xs_no(x, "no tensor named '%s'", name);
    return SG_OK;
}

/* F_CONST on every name computable from initializers alone: a node is
 * constant when all it reads is (a bit per node, passes in file order
 * until none changes), and so are its outputs. */
static sg_status mark_const(struct xs *x)
{
    uint8_t *cnode = sg_calloc((size_t)x->n_nodes / 8 + 1, 1);
    if (!cnode)
        return sg__xs_no(x, "out of memory%s", NULL);
    /* In file order; a graph out of order takes passes until nothing
     * changes (a node only ever becomes constant). */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = 0; k < x->n_nodes; k++) {
            bool all = !(cnode[k >> 3] >> (k & 7) & 1);
            for (uint32_t e = x->first_edge[k]; e < x->first_edge[k + 1] && all; e++) {
                const struct sname *v = &x->names[x->edges[e]];
                if (x->edges[e] && !(v->flags & F_INIT) &&
                    !(v->producer >= 0 && cnode[v->producer >> 3] >> (v->producer & 7) & 1))
                    all = false;
            }
            if (all) {
                cnode[k >> 3] |= (uint8_t)(1u << (k & 7));
                changed = x->unsorted;
            }
        }
    }
    for (uint32_t id = 1; id < x->n_names; id++) {
        struct sname *v = &x->names[id];
        if ((v->flags & F_INIT) ||
            (v->producer >= 0 && cnode[v->producer >> 3] >> (v->producer & 7) & 1))
            v->flags |= F_CONST;
    }
    sg_free(cnode);
    return SG_OK;
}

/* Name id, once, on a list of the cut: its inputs (flag F_LISTED) or
 * outputs (F_OUT). */
static sg_status add_once(struct xs *x, uint32_t id, uint16_t flag, uint32_t **v, size_t *n,
                          size_t *cap)
{
    if (x->names[id].flags & flag)
        return SG_OK;
    x->names[id].flags |= flag;
    return sg__xs_push_id(v, n, cap, id) ? SG_OK : sg__xs_no(x, "out of memory%s", NULL);
}

static sg_status add_in(struct xs *x, uint32_t id)
{
    return add_once(x, id, F_LISTED, &x->ins, &x->n_ins, &x->cap_ins);
}

static sg_status add_out(struct xs *x, uint32_t id)
{
    return add_once(x, id, F_OUT, &x->outs, &x->n_outs, &x->cap_outs);
}

/* The outputs of node message `node` as cut outputs, in order. */
static sg_status add_outputs_of(struct xs *x, struct span node)
{
    struct wr r = {x->base + node.off, x->base + node.off + node.len, false};
    uint32_t f;
    int t;
    while (wr_tag(&r, &f, &t)) {
        if (f != 2 || t != WT_LEN) {
            wr_skip(&r, t);
            continue;
        }
        struct wr n = wr_len(&r);
        uint32_t id;
        sg__xs_name_id(x, n.p, (size_t)(n.end - n.p), false, &id);
        sg_status st = id ? add_out(x, id) : SG_OK;
        if (st)
            return st;
    }
    return SG_OK;
}

static sg_status resolve(struct xs *x, const struct sg_extract_spec *s)
{
    sg_status st;
    uint32_t id;
    for (size_t i = 0; i < s->n_inputs; i++)
        if ((st = lookup(x, s->inputs[i], &id)) || (st = add_in(x, id)))
            return st;
    for (size_t i = 0; i < s->n_outputs; i++)
        if ((st = lookup(x, s->outputs[i], &id)) || (st = add_out(x, id)))
            return st;
    size_t n_want = s->n_start_nodes + s->n_end_nodes;
    if (x->asked_twice)
        return sg__xs_no(x, "two nodes have an asked name%s", NULL);
    for (size_t i = 0; i < n_want; i++) {
        bool start = i < s->n_start_nodes;
        const char *name = start ? s->start_nodes[i] : s->end_nodes[i - s->n_start_nodes];
        uintptr_t first = (uintptr_t)sg__strmap_get(&x->want, name);
        int32_t k = first ? x->found[first - 1] : -1;
        if (k < 0)
            return sg__xs_no(x, "no node named '%s'", name);
        uint32_t e0 = x->first_edge[k], e1 = x->first_edge[k + 1];
        if (start) {
            if (kept(x, (uint32_t)k)) /* listed already (the bit is cleared below) */
                continue;
            set_kept(x, (uint32_t)k, true);
            for (uint32_t e = e0; e < e1; e++)
                if (x->edges[e] && !(x->names[x->edges[e]].flags & F_CONST) &&
                    (st = add_in(x, x->edges[e])))
                    return st;
        } else {
            if ((st = add_outputs_of(x, x->found_node[first - 1])))
                return st;
        }
    }
    for (size_t i = 0; i < s->n_start_nodes; i++) {
        uintptr_t first = (uintptr_t)sg__strmap_get(&x->want, s->start_nodes[i]);
        set_kept(x, (uint32_t)x->found[first - 1], false);
    }
    return SG_OK;
}

/* Back from the outputs, keeping the producers of what is read. */
static sg_status walk_back(struct xs *x)
{
    for (size_t i = x->n_outs; i-- > 0;)
        if (!sg__xs_push_id(&x->stack, &x->n_stack, &x->cap_stack, x->outs[i]))
            return sg__xs_no(x, "out of memory%s", NULL);
    while (x->n_stack) {
        struct sname *v = &x->names[x->stack[--x->n_stack]];
        if (v->flags & F_SEEN)
            continue;
        v->flags |= F_SEEN;
        if (v->flags & (F_LISTED | F_INIT))
            continue;
        if (v->producer < 0)
            return sg__xs_no(x, "the cut is not closed%s", NULL);
        uint32_t p = (uint32_t)v->producer;
        if (kept(x, p))
            continue;
        set_kept(x, p, true);
        x->n_kept++;
        /* What needs no visit stays off the stack (a chain would pile up
         * its weights there). */
        for (uint32_t e = x->first_edge[p + 1]; e-- > x->first_edge[p];) {
            uint32_t id = x->edges[e];
            if (id && !(x->names[id].flags & (F_SEEN | F_LISTED | F_INIT)) &&
                !sg__xs_push_id(&x->stack, &x->n_stack, &x->cap_stack, id))
                return sg__xs_no(x, "out of memory%s", NULL);
        }
    }
    return SG_OK;
}

static const struct sg_cut_dims_decl *find_decl(const struct sg_cut_dims_decl *d, size_t n,
                                                const struct xs *x, uint32_t id)
{
    const struct sname *v = &x->names[id];
    for (size_t i = 0; i < n; i++)
        if (strlen(d[i].name) == v->len && memcmp(d[i].name, x->base + v->off, v->len) == 0)
            return &d[i];
    return NULL;
}

static sg_status settle(struct xs *x, const struct sg_extract_spec *s,
                        const struct sg_cut_dims_decl *decls, size_t n_decls)
{
    if (!x->n_kept)
        return sg__xs_no(x, "the cut is empty%s", NULL);
    for (size_t i = 0; i < x->n_ins; i++) {
        int32_t p = x->names[x->ins[i]].producer;
        if (p >= 0 && kept(x, (uint32_t)p))
            return sg__xs_no(x, "an input of the cut is computed inside it%s", NULL);
    }
    for (size_t i = 0; i < s->n_start_nodes; i++) {
        uintptr_t first = (uintptr_t)sg__strmap_get(&x->want, s->start_nodes[i]);
        if (!kept(x, (uint32_t)x->found[first - 1]))
            return sg__xs_no(x, "a start node is not upstream of the outputs%s", NULL);
    }
    for (uint32_t k = 0; k < x->n_nodes; k++)
        if (kept(x, k))
            for (uint32_t e = x->first_edge[k]; e < x->first_edge[k + 1]; e++)
                if (x->edges[e])
                    x->names[x->edges[e]].flags |= F_READ;
    /* The inputs: the listed ones, then initializers the model lists as
     * inputs (IR < 4) that the cut still reads, in the model's order. */
    size_t cap = 0;
    for (size_t i = 0; i < x->n_ins; i++) {
        if (!sg__xs_push_id(&x->new_in, &x->n_new_in, &cap, x->ins[i]))
            return sg__xs_no(x, "out of memory%s", NULL);
        x->names[x->ins[i]].flags |= F_NEWIN;
    }
    struct xs_pass p = sg__xs_pass_begin(x, 11, 11);
    uint32_t f;
    struct wr m;
    while (sg__xs_pass_next(x, &p, &f, &m)) {
        uint32_t id;
        sg__xs_message_name(x, m, 1, &id, false, NULL);
        struct sname *v = &x->names[id];
        if (id && (v->flags & F_INIT) && (v->flags & F_READ) && !(v->flags & F_NEWIN)) {
            v->flags |= F_NEWIN;
            if (!sg__xs_push_id(&x->new_in, &x->n_new_in, &cap, id))
                return sg__xs_no(x, "out of memory%s", NULL);
        }
    }
    /* Every exposed tensor needs a type: one given, or the model's one
     * entry with an element type. Initializers the model lists as inputs
     * keep their entry as it is (sg_model_extract types only the cut's
     * inputs and outputs). */
    size_t n_exposed = x->n_new_in + x->n_outs;
    bool need_infer = false;
    if (!(x->entry = sg_calloc(n_exposed + 1, sizeof *x->entry)) ||
        !(x->retype = sg_calloc(n_exposed + 1, sizeof *x->retype)))
        return sg__xs_no(x, "out of memory%s", NULL);
    for (size_t i = 0; i < n_exposed; i++) {
        bool init_input = i >= x->n_ins && i < x->n_new_in;
        uint32_t id = i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in];
        const struct sname *v = &x->names[id];
        const struct sg_cut_dims_decl *d = init_input ? NULL : find_decl(decls, n_decls, x, id);
        /* As sg_model_extract: a given type wins, then the model's, then
         * an element type inferred for a computed tensor that has no
         * type field. An entry's other fields stay (doc_string...). */
        struct retype *rt = &x->retype[i];
        bool ok = !(v->flags & F_MULTI);
        if (init_input || !ok) {
        } else if (d) {
            *rt = (struct retype){d->dtype, d->rank, d->dims};
        } else if (v->flags & F_TYPED) {
        } else if (!(v->flags & (F_INIT | F_HASTYPE)) && v->producer >= 0) {
            *rt = (struct retype){-1, -1, NULL};
            need_infer = true;
        } else {
            ok = false;
        }
        if (!ok)
            return sg__xs_no(x, "an exposed tensor's type needs the loaded model%s", NULL);
    }
    if (need_infer) {
        sg_status st = sg__xs_infer_dtypes(x);
        if (!st)
            st = sg__xs_mark_resolved(x);
        if (st)
            return st;
    }
    for (size_t i = 0; i < n_exposed; i++) {
        uint32_t id = i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in];
        if (x->retype[i].dtype < 0 && !(x->retype[i].dtype = x->dt[id]))
            return sg__xs_no(x, "the type of an exposed tensor is not known%s", NULL);
        if (x->retype[i].dtype)
            x->names[id].flags |= F_RETYPED;
    }
    return SG_OK;
}

/* The first entry of each exposed name, found in one pass. */
static void find_entries(struct xs *x)
{
    size_t n_exposed = x->n_new_in + x->n_outs;
    struct xs_pass p = sg__xs_pass_begin(x, 11, 13);
    uint32_t f;
    struct wr m;
    while (sg__xs_pass_next(x, &p, &f, &m)) {
        uint32_t id;
        sg__xs_message_name(x, m, 1, &id, false, NULL);
        if (!id || !(x->names[id].flags & (F_NEWIN | F_OUT)))
            continue;
        for (size_t i = 0; i < n_exposed; i++) {
            uint32_t want = i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in];
            if (want == id && !x->entry[i].len)
                x->entry[i] = sg__xs_span_of(x, m);
        }
    }
}

/* ----------------------------------------------------------------- entry */

/* n names of ids as malloc'd strings in *out (counted in *n_out as they
 * are made, so sg_extract_report_free frees a partial list). */
static bool name_list(const struct xs *x, const uint32_t *ids, size_t n, char ***out, size_t *n_out)
{
    if (!(*out = calloc(n + 1, sizeof **out)))
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct sname *v = &x->names[ids[i]];
        char *s = sg_malloc((size_t)v->len + 1);
        if (!s)
            return false;
        memcpy(s, x->base + v->off, v->len);
        s[v->len] = '\0';
        (*out)[(*n_out)++] = s;
    }
    return true;
}

static sg_status report(struct xs *x, struct sg_extract_report *rep)
{
    if (!rep)
        return SG_OK;
    rep->n_kept = x->n_kept;
    rep->n_removed = x->n_nodes - x->n_kept;
    rep->n_inits = x->n_inits_kept;
    if (!name_list(x, x->new_in, x->n_new_in, &rep->input_names, &rep->n_input_names) ||
        !name_list(x, x->outs, x->n_outs, &rep->output_names, &rep->n_output_names))
        return SG_ENOMEM;
    return SG_OK;
}

static void xs_free(struct xs *x)
{
    sg_model_free(x->scratch);
    for (size_t i = 0; i < sizeof x->maps / sizeof x->maps[0]; i++)
        if (x->maps[i].p)
            munmap(x->maps[i].p, x->maps[i].bytes);
    sg_free(x->found);
    sg_free(x->found_node);
    sg_free(x->retype);
    sg_free(x->dt);
    sg_free(x->rule_node);
    sg_free(x->rule_in);
    sg_free(x->rule_in_dt);
    sg_free(x->rule_in_ptr);
    sg_free(x->rule_out);
    sg_free(x->ins);
    sg_free(x->outs);
    sg_free(x->stack);
    sg_free(x->new_in);
    sg_free(x->entry);
    for (size_t i = 0; i < x->n_domains; i++)
        sg_free(x->domains[i]);
    sg__strmap_free(&x->want);
}

/* Everything up to the write: the index, the cut, the checks. */
static sg_status plan(struct xs *x, const struct sg_extract_spec *spec,
                      const struct sg_cut_dims_decl *decls, size_t n_decls)
{
    sg_status st;
    size_t n_want = spec->n_start_nodes + spec->n_end_nodes;
    if (!(x->found = sg_malloc((n_want + 1) * sizeof *x->found)) ||
        !(x->found_node = sg_calloc(n_want + 1, sizeof *x->found_node)))
        return sg__xs_no(x, "out of memory%s", NULL);
    for (size_t i = 0; i < n_want; i++) {
        x->found[i] = -1;
        const char *name = i < spec->n_start_nodes ? spec->start_nodes[i]
                                                   : spec->end_nodes[i - spec->n_start_nodes];
        if (!sg__strmap_get(&x->want, name) &&
            sg__strmap_put(&x->want, name, (void *)(uintptr_t)(i + 1)))
            return sg__xs_no(x, "out of memory%s", NULL);
    }
    size_t n_nodes, n_edges, n_names;
    if ((st = sg__xs_scan_model(x)) || (st = sg__xs_count_graph(x, &n_nodes, &n_edges, &n_names)))
        return st;
    /* Sized once: names (and the empty one), slots for a load of 6/7. */
    x->n_slots = (uint32_t)(n_names + n_names / 6 + 1);
    x->cap_names = (uint32_t)n_names + 1;
    x->cap_nodes = (uint32_t)n_nodes;
    x->cap_edges = n_edges;
    if (!(x->names = sg__xs_map_array(x, 0, x->cap_names, sizeof *x->names)) ||
        !(x->slots = sg__xs_map_array(x, 1, x->n_slots, sizeof *x->slots)) ||
        !(x->first_edge = sg__xs_map_array(x, 2, n_nodes + 1, sizeof *x->first_edge)) ||
        !(x->keep = sg__xs_map_array(x, 3, n_nodes / 8 + 1, 1)) ||
        !(x->edges = sg__xs_map_array(x, 4, n_edges, sizeof *x->edges)))
        return sg__xs_no(x, "out of memory%s", NULL);
    x->names[0] = (struct sname){.producer = -1};
    x->n_names = 1;
    sg__xs_release_all(x);
    if ((st = sg__xs_scan_graph(x)) || (st = sg__xs_check_graph(x)))
        return st;
    if (spec->n_start_nodes && (st = mark_const(x)))
        return st;
    if ((st = resolve(x, spec)) || (st = walk_back(x)) || (st = settle(x, spec, decls, n_decls)) ||
        (st = sg__xs_check_multi(x)) || (st = sg__xs_collect_domains(x)))
        return st;
    find_entries(x);
    return SG_OK;
}

sg_status sg_extract_file(const char *model, const char *out, const struct sg_extract_spec *spec,
                          const struct sg_cut_dims_decl *decls, size_t n_decls,
                          struct sg_extract_report *rep, struct sg_diag *diag)
{
    if (rep)
        memset(rep, 0, sizeof *rep);
    if (spec->n_decls || spec->typer.type_of || spec->prune_inputs)
        return sg_diag_set(diag, SG_EUNSUPPORTED, "a type provider needs the loaded model");
    if (!spec->n_outputs && !spec->n_end_nodes)
        return sg_diag_set(diag, SG_EUNSUPPORTED, "nothing asked");
    struct stat sb;
    struct sg_diag od = {0};
    int fd = sg_file_open_read(model, &sb, &od);
    if (fd < 0)
        return sg_diag_set(diag, SG_EUNSUPPORTED, "%s", od.msg);
    if (sb.st_size <= 0 || (uint64_t)sb.st_size > SG_PROTO_LIMIT) {
        close(fd);
        return sg_diag_set(diag, SG_EUNSUPPORTED, "%s: empty, or over 2 GB", model);
    }
    struct xs x = {.size = (size_t)sb.st_size, .why = diag, .touched_low = SIZE_MAX};
    void *map = mmap(NULL, x.size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return sg_diag_set(diag, SG_EUNSUPPORTED, "%s: cannot map it", model);
    x.base = map;
    sg_status st = plan(&x, spec, decls, n_decls);
    if (!st) {
        st = sg_file_write_atomic_with(out, sg__xs_write_model, &x, diag);
        if (!st && report(&x, rep))
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    xs_free(&x);
    munmap(map, x.size);
    return st;
}
