/*
 * extract_stream_scan.c - the index of the extract that cuts from the file:
 * the read-only mapping and its release, the table of names, the passes
 * that size and fill the index, and the loader's checks of every message
 * (see extract_stream.c).
 */
#include "decode_impl.h"
#include "extract_stream_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"
#include "sg_opschema.h"
#include "strmap.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

sg_status sg__xs_no(struct xs *x, const char *fmt, const char *arg)
{
    /* The reason is only for a caller who wants to tell the user which path ran. */
    return sg_diag_set(x->why, SG_EUNSUPPORTED, fmt, arg ? arg : "");
}

/* Give back the pages of the mapping below `upto` once 128 KB of them
 * has been read, with those a name comparison brought back in since (they
 * are reread from the page cache when needed again). */
void sg__xs_release_below(struct xs *x, const uint8_t *upto)
{
    size_t pos = (size_t)(upto - x->base);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t aligned = pos / page * page;
    if (aligned > x->released + (128u << 10)) {
        size_t from = x->touched_low < x->released ? x->touched_low / page * page : x->released;
        madvise((void *)(x->base + from), aligned - from, MADV_DONTNEED);
        x->released = aligned;
        x->touched_low = SIZE_MAX;
    }
}

/* Before another pass over the file: give back every page. */
void sg__xs_release_all(struct xs *x)
{
    madvise((void *)x->base, x->size, MADV_DONTNEED);
    x->released = 0;
    x->touched_low = SIZE_MAX;
}

static uint32_t hash_bytes(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h ? h : 1;
}

bool sg__xs_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *q = sg_realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

/* An array of n zeroed elements in an anonymous mapping of its own (slot
 * `which` of x->maps): its pages count only once written, and the heap
 * holds no second copy as it would growing an array by copying. */
void *sg__xs_map_array(struct xs *x, int which, size_t n, size_t elem)
{
    size_t bytes = (n ? n : 1) * elem;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    x->maps[which].p = p;
    x->maps[which].bytes = bytes;
    return p;
}

/* The slot a hash starts its probe at (a multiply, not a modulo: the
 * table's size is no power of two). */
static uint32_t home_slot(const struct xs *x, uint32_t h)
{
    return (uint32_t)(((uint64_t)h * x->n_slots) >> 32);
}

/* The id of the name at p[0..n) (0 for the empty name); with add, a new
 * id for one not seen. *id 0 and false: out of memory or not found. */
bool sg__xs_name_id(struct xs *x, const uint8_t *p, size_t n, bool add, uint32_t *id)
{
    *id = 0;
    if (n == 0)
        return true;
    if (n >= NAME_MAX_LEN)
        return false;
    uint32_t h = hash_bytes(p, n);
    uint32_t i = home_slot(x, h);
    for (uint32_t s; (s = x->slots[i]); i = i + 1 == x->n_slots ? 0 : i + 1) {
        const struct sname *e = &x->names[s];
        if (e->hash == h && e->len == n) {
            if (e->off < x->touched_low)
                x->touched_low = e->off;
            if (memcmp(x->base + e->off, p, n) != 0)
                continue;
            *id = s;
            return true;
        }
    }
    if (!add || x->n_names == x->cap_names)
        return false;
    uint32_t nid = x->n_names++;
    x->names[nid] = (struct sname){.off = (uint32_t)(p - x->base),
                                   .hash = h,
                                   .producer = -1,
                                   .len = (uint32_t)n & (NAME_MAX_LEN - 1)};
    x->slots[i] = nid;
    *id = nid;
    return true;
}

/* A length-delimited field's payload as a name id (adding it). */
static sg_status intern(struct xs *x, struct wr *r, uint32_t *id)
{
    struct wr s = wr_len(r);
    if (r->bad)
        return sg__xs_no(x, "malformed model%s", NULL);
    if (!sg__xs_name_id(x, s.p, (size_t)(s.end - s.p), true, id))
        return sg__xs_no(x,
                         "a name over 32 KB, or more names than outputs, initializers and "
                         "entries%s",
                         NULL);
    return SG_OK;
}

/* ------------------------------------------------------ the model's parts */

/* A span's bytes as a C string in buf (false when it does not fit). */
bool sg__xs_span_str(const struct xs *x, struct span s, char *buf, size_t size)
{
    if (s.len >= size)
        return false;
    memcpy(buf, x->base + s.off, s.len);
    buf[s.len] = '\0';
    return true;
}

struct span sg__xs_span_of(const struct xs *x, struct wr s)
{
    return (struct span){(uint32_t)(s.p - x->base), (uint32_t)(s.end - s.p)};
}

/* The ModelProto's fields: the graph's place, the opset imports. */
/* A string field as the loader reads one: length-delimited, no NUL. */
static bool string_ok(struct wr *r, int t)
{
    if (t != WT_LEN)
        return false;
    struct wr s = wr_len(r);
    return !r->bad && !memchr(s.p, 0, (size_t)(s.end - s.p));
}

/* A message of string fields only (StringStringEntryProto, the parts of a
 * TensorAnnotation), checked as the loader reads it. */
static bool strings_ok(struct wr m, uint32_t max_field)
{
    uint32_t f;
    int t;
    while (wr_tag(&m, &f, &t)) {
        if (f >= 1 && f <= max_field ? !string_ok(&m, t) : (wr_skip(&m, t), m.bad))
            return false;
    }
    return !m.bad;
}

/* The ModelProto's fields: the graph's place, the opset imports, and the
 * loader's checks of the rest (wire types, strings). Training information
 * (which the cut drops, but the loader checks as graphs) is left to it. */
sg_status sg__xs_scan_model(struct xs *x)
{
    struct wr r = {x->base, x->base + x->size, false};
    uint32_t f;
    int t;
    bool have_graph = false;
    while (wr_tag(&r, &f, &t)) {
        if (f == 7) {
            if (have_graph || t != WT_LEN)
                return sg__xs_no(x, "the model has two graph fields%s", NULL);
            have_graph = true;
            x->graph = sg__xs_span_of(x, wr_len(&r));
        } else if (f == 8) {
            if (t != WT_LEN)
                return sg__xs_no(x, "malformed opset import%s", NULL);
            struct wr o = wr_len(&r);
            if (x->n_opsets == 64)
                return sg__xs_no(x, "more than 64 opset imports%s", NULL);
            size_t k = x->n_opsets++;
            x->opset_domain[k] = (struct span){0, 0};
            x->opset_version[k] = 0;
            x->opset_has_version[k] = false;
            uint32_t of;
            int ot;
            while (wr_tag(&o, &of, &ot)) {
                if (of == 1) {
                    struct wr d = o;
                    if (!string_ok(&o, ot))
                        return sg__xs_no(x, "malformed opset import%s", NULL);
                    x->opset_domain[k] = sg__xs_span_of(x, wr_len(&d));
                } else if (of == 2) {
                    if (ot != WT_VARINT)
                        return sg__xs_no(x, "malformed opset import%s", NULL);
                    x->opset_version[k] = (int64_t)wr_varint(&o);
                    x->opset_has_version[k] = true;
                } else {
                    wr_skip(&o, ot);
                }
            }
            if (o.bad)
                return sg__xs_no(x, "malformed opset import%s", NULL);
        } else if (f == 25 || f == 20) {
            return sg__xs_no(x, "the model has local functions or training information%s", NULL);
        } else if (f == 1 || f == 5) {
            if (t != WT_VARINT)
                return sg__xs_no(x, "malformed model%s", NULL);
            wr_varint(&r);
        } else if (f == 2 || f == 3 || f == 4 || f == 6) {
            if (!string_ok(&r, t))
                return sg__xs_no(x, "malformed model string%s", NULL);
        } else if (f == 14) {
            if (t != WT_LEN || !strings_ok(wr_len(&r), 2))
                return sg__xs_no(x, "malformed metadata%s", NULL);
        } else {
            wr_skip(&r, t);
        }
    }
    if (r.bad)
        return sg__xs_no(x, "malformed model%s", NULL);
    if (!have_graph || !x->n_opsets)
        return sg__xs_no(x, "the model has no graph or imports no opset%s", NULL);
    return SG_OK;
}

/* The loader's checks of a message this path copies: decoded into a
 * scratch model (made anew every 256 checks, so that it stays
 * small), nothing kept. */
static sg_status check_message(struct xs *x, uint32_t field, struct wr m)
{
    if (x->n_checked++ % 256 == 0) {
        sg_model_free(x->scratch);
        if (!(x->scratch = sg_model_create()))
            return sg__xs_no(x, "out of memory%s", NULL);
    }
    struct sg_diag d = {0};
    size_t n = (size_t)(m.end - m.p);
    bool ok = field == 1   ? !sg__check_node_bytes(x->scratch, m.p, n, &d)
              : field == 5 ? sg__decode_tensor_bytes(x->scratch, m.p, n, &d) != NULL
                           : !sg__check_value_info_bytes(x->scratch, m.p, n, &d);
    return ok ? SG_OK : sg__xs_no(x, "the loader refuses a message: %s", d.msg);
}

const char *sg__xs_canon(const char *d)
{
    return sg__canon_domain(d);
}

/* The opset the model imports for `domain` (as sg_model_opset: the first
 * import of it; 0 when none). */
static int64_t opset_of(const struct xs *x, const char *domain)
{
    const char *want = sg__xs_canon(domain);
    char buf[256];
    for (size_t i = 0; i < x->n_opsets; i++) {
        if (!sg__xs_span_str(x, x->opset_domain[i], buf, sizeof buf))
            continue;
        if (strcmp(sg__xs_canon(buf), want) == 0)
            return x->opset_has_version[i] ? x->opset_version[i] : 0;
    }
    return 0;
}

/* A TensorProto that is external (data_location EXTERNAL) or malformed. */
static bool tensor_external(struct wr t, bool *bad)
{
    uint32_t f;
    int ty;
    bool ext = false;
    while (wr_tag(&t, &f, &ty)) {
        if (f == 14 && ty == WT_VARINT)
            ext = wr_varint(&t) == 1;
        else
            wr_skip(&t, ty);
    }
    *bad = t.bad;
    return ext;
}

/* An AttributeProto this path can copy as it is: no subgraph, no sparse
 * or external tensor. */
static sg_status check_attribute(struct xs *x, struct wr a)
{
    uint32_t f;
    int t;
    while (wr_tag(&a, &f, &t)) {
        if (f == 6 || f == 11)
            return sg__xs_no(x, "a node has a subgraph%s", NULL);
        if (f == 22 || f == 23)
            return sg__xs_no(x, "a node has a sparse tensor attribute%s", NULL);
        if ((f == 5 || f == 10) && t == WT_LEN) {
            bool bad;
            if (tensor_external(wr_len(&a), &bad) || bad)
                return sg__xs_no(x, "a node's tensor attribute is external or malformed%s", NULL);
        } else {
            wr_skip(&a, t);
        }
    }
    return a.bad ? sg__xs_no(x, "malformed attribute%s", NULL) : SG_OK;
}

struct arity_memo {
    struct span op, domain;
    const struct sg_op_schema *schema;
    int64_t opset;
    bool set;
};

static bool span_eq(const struct xs *x, struct span a, struct span b)
{
    return a.len == b.len && memcmp(x->base + a.off, x->base + b.off, a.len) == 0;
}

/* The operator arity check of the loader (sg__node_check_arity_schema). */
static sg_status check_arity(struct xs *x, struct arity_memo *memo, struct span op,
                             struct span domain, int in, int out)
{
    if (!(memo->set && span_eq(x, memo->op, op) && span_eq(x, memo->domain, domain))) {
        char o[128], d[128];
        memo->set = true;
        memo->op = op;
        memo->domain = domain;
        memo->schema = NULL;
        memo->opset = 0;
        if (sg__xs_span_str(x, op, o, sizeof o) && sg__xs_span_str(x, domain, d, sizeof d)) {
            memo->opset = opset_of(x, d);
            memo->schema = memo->opset ? sg_op_schema_find(d, o, memo->opset) : NULL;
        }
    }
    const struct sg_op_schema *s = memo->schema;
    if (!s)
        return SG_OK;
    if (in < s->min_inputs || (s->max_inputs >= 0 && in > s->max_inputs) || out < s->min_outputs ||
        (s->max_outputs >= 0 && out > s->max_outputs))
        return sg__xs_no(x, "a node has the wrong number of inputs or outputs%s", NULL);
    return SG_OK;
}

/* The asked start or end node named by a node's name field. Two nodes of
 * an asked name: the IR takes the first in its topological order, which
 * need not be the file's, so that case is left to it. */
static void match_node(struct xs *x, struct span name, uint32_t k, struct span node)
{
    if (!x->want.count || !name.len || name.len > 4096)
        return;
    char buf[4097];
    sg__xs_span_str(x, name, buf, sizeof buf);
    uintptr_t i = (uintptr_t)sg__strmap_get(&x->want, buf);
    if (i && x->found[i - 1] < 0) {
        x->found[i - 1] = (int32_t)k;
        x->found_node[i - 1] = node;
    } else if (i)
        x->asked_twice = true;
}

/* The sizes of the index, from a pass over the graph: the nodes, the
 * edges (node inputs: an output is known by its name's producer) and a
 * bound on the distinct names (in a
 * model the loader takes, every name is a node output, an initializer or
 * an entry). */
sg_status sg__xs_count_graph(struct xs *x, size_t *nodes, size_t *edges, size_t *names)
{
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    uint32_t f;
    int t;
    *nodes = *edges = *names = 0;
    while (wr_tag(&r, &f, &t)) {
        sg__xs_release_below(x, r.p);
        if (t != WT_LEN) {
            wr_skip(&r, t);
            continue;
        }
        struct wr m = wr_len(&r);
        if (f == 5 || f == 11 || f == 12 || f == 13)
            ++*names;
        if (f != 1)
            continue;
        ++*nodes;
        uint32_t nf;
        int nt;
        size_t outs = 0;
        while (wr_tag(&m, &nf, &nt)) {
            if ((nf == 1 || nf == 2) && nt == WT_LEN) {
                *edges += nf == 1;
                outs += nf == 2;
            }
            wr_skip(&m, nt);
        }
        *names += outs;
        if (outs > x->max_outputs)
            x->max_outputs = outs;
        if (m.bad)
            break;
    }
    if (r.bad || *nodes >= UINT32_MAX / 2 || *edges >= UINT32_MAX || *names >= UINT32_MAX / 2)
        return sg__xs_no(x, "malformed or oversized graph%s", NULL);
    return SG_OK;
}

static sg_status scan_node(struct xs *x, struct wr node, struct arity_memo *memo)
{
    uint32_t k = x->n_nodes;
    if (k == x->cap_nodes)
        return sg__xs_no(x, "more nodes than counted%s", NULL);
    x->first_edge[k] = (uint32_t)x->n_edges;
    struct span op = {0, 0}, domain = {0, 0}, name = {0, 0};
    int n_in = 0, n_out = 0, trim_in = 0, trim_out = 0;
    /* Inputs, then outputs, then the rest: a pass each. */
    for (int pass = 1; pass <= 3; pass++) {
        struct wr r = node;
        uint32_t f;
        int t;
        while (wr_tag(&r, &f, &t)) {
            if (pass < 3 && f == (uint32_t)pass && t == WT_LEN) {
                uint32_t id;
                sg_status st = intern(x, &r, &id);
                if (st)
                    return st;
                if (pass == 1) {
                    if (x->n_edges == x->cap_edges)
                        return sg__xs_no(x, "more edges than counted%s", NULL);
                    x->edges[x->n_edges++] = id;
                }
                if (pass == 1) {
                    n_in++;
                    if (id)
                        trim_in = n_in;
                } else {
                    n_out++;
                    if (id) {
                        trim_out = n_out;
                        if (x->names[id].producer >= 0)
                            return sg__xs_no(x, "a tensor has two producers%s", NULL);
                        x->names[id].producer = (int32_t)k;
                    }
                }
            } else if (pass == 3 && t == WT_LEN && (f == 3 || f == 4 || f == 5 || f == 7)) {
                struct wr s = wr_len(&r);
                if (f == 3)
                    name = sg__xs_span_of(x, s);
                else if (f == 4)
                    op = sg__xs_span_of(x, s);
                else if (f == 7)
                    domain = sg__xs_span_of(x, s);
                else if (!r.bad) {
                    sg_status st = check_attribute(x, s);
                    if (st)
                        return st;
                }
            } else {
                wr_skip(&r, t);
            }
        }
        if (r.bad)
            return sg__xs_no(x, "malformed node%s", NULL);
    }
    x->n_nodes++;
    x->first_edge[x->n_nodes] = (uint32_t)x->n_edges;
    match_node(x, name, k, sg__xs_span_of(x, node));
    return check_arity(x, memo, op, domain, trim_in, trim_out);
}

/* An entry (ValueInfoProto) of input, output or value_info. */
static sg_status scan_entry(struct xs *x, struct wr e, uint16_t flag)
{
    uint32_t f;
    int t;
    uint32_t id = 0;
    bool have_name = false, typed = false;
    int n_types = 0;
    while (wr_tag(&e, &f, &t)) {
        if (f == 1 && t == WT_LEN) {
            if (have_name)
                return sg__xs_no(x, "a value info has two names%s", NULL);
            sg_status st = intern(x, &e, &id);
            if (st)
                return st;
            have_name = true;
        } else if (f == 2 && t == WT_LEN) {
            /* Typed as the loader sees it: the TypeProto's value (a oneof:
             * the last one counts) is a tensor type with a nonzero
             * element type, or another kind. Two value fields (which a
             * parser may merge) are left to the loader. */
            struct wr ty = wr_len(&e);
            n_types++;
            uint32_t tf;
            int tt, n_values = 0;
            typed = false;
            while (wr_tag(&ty, &tf, &tt)) {
                if (tf == 1 && tt == WT_LEN) {
                    struct wr tensor = wr_len(&ty);
                    uint32_t ef;
                    int et;
                    n_values++;
                    typed = false;
                    while (wr_tag(&tensor, &ef, &et)) {
                        if (ef == 1 && et == WT_VARINT)
                            typed = wr_varint(&tensor) != 0;
                        else
                            wr_skip(&tensor, et);
                    }
                    if (tensor.bad)
                        return sg__xs_no(x, "malformed type%s", NULL);
                } else if (tf == 4 || tf == 5 || tf == 8 || tf == 9) {
                    n_values++;
                    typed = true;
                    wr_skip(&ty, tt);
                } else {
                    wr_skip(&ty, tt);
                }
            }
            if (n_values > 1)
                typed = false;
            if (ty.bad)
                return sg__xs_no(x, "malformed type%s", NULL);
        } else {
            wr_skip(&e, t);
        }
    }
    if (e.bad || !have_name || !id)
        return sg__xs_no(x, "malformed or unnamed value info%s", NULL);
    if (n_types > 1) {
        typed = false;
        x->n_two_types++;
    }
    struct sname *n = &x->names[id];
    if (n->flags & F_ENTRY) {
        n->flags |= F_MULTI;
    } else {
        n->flags |= (typed ? F_TYPED : 0) | (n_types ? F_HASTYPE : 0);
    }
    if (!flag) {
        if (n->in_vi)
            return sg__xs_no(x, "a name is listed twice in value_info%s", NULL);
        n->in_vi = 1;
    }
    if ((flag & (F_INPUT | F_OUTPUT)) && (n->flags & flag))
        return sg__xs_no(x, "a name is listed twice as a graph input or output%s", NULL);
    n->flags |= F_ENTRY | flag;
    return SG_OK;
}

/* The name of an initializer (TensorProto field 8) or of a quantization
 * annotation (field 1), without adding it. *id 0: none or unknown. */
bool sg__xs_message_name(struct xs *x, struct wr m, uint32_t field, uint32_t *id, bool add,
                         bool *external)
{
    uint32_t f;
    int t;
    *id = 0;
    bool named = false;
    if (external)
        *external = false;
    while (wr_tag(&m, &f, &t)) {
        if (f == field && t == WT_LEN) {
            struct wr s = wr_len(&m);
            if (m.bad)
                return false;
            if (!sg__xs_name_id(x, s.p, (size_t)(s.end - s.p), add, id) && add)
                return false;
            named = true;
        } else if (external && f == 14 && t == WT_VARINT) {
            *external = wr_varint(&m) == 1;
        } else {
            wr_skip(&m, t);
        }
    }
    return !m.bad && (named || !add);
}

/* A TensorAnnotation as the loader reads it: its tensor name and its
 * parameter names (StringStringEntryProto). */
static bool annotation_ok(struct wr m)
{
    uint32_t f;
    int t;
    while (wr_tag(&m, &f, &t)) {
        bool ok = f == 1   ? string_ok(&m, t)
                  : f == 2 ? t == WT_LEN && strings_ok(wr_len(&m), 2) && !m.bad
                           : (wr_skip(&m, t), !m.bad);
        if (!ok)
            return false;
    }
    return !m.bad;
}

sg_status sg__xs_scan_graph(struct xs *x)
{
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    struct arity_memo memo = {0};
    uint32_t f;
    int t;
    while (wr_tag(&r, &f, &t)) {
        sg_status st = SG_OK;
        if (f == 2 || f == 10) { /* name, doc_string */
            if (!string_ok(&r, t))
                return sg__xs_no(x, "malformed graph string%s", NULL);
            continue;
        }
        if (!(f == 1 || f == 5 || (f >= 11 && f <= 15))) {
            wr_skip(&r, t);
            continue;
        }
        if (t != WT_LEN)
            return sg__xs_no(x, "malformed graph%s", NULL);
        struct wr m = wr_len(&r);
        if (r.bad)
            break;
        if (f == 15)
            return sg__xs_no(x, "the model has sparse initializers%s", NULL);
        if (f == 14) {
            if (!annotation_ok(m))
                return sg__xs_no(x, "malformed quantization annotation%s", NULL);
            continue;
        }
        if ((st = check_message(x, f, m)))
            return st;
        if (f == 1) {
            st = scan_node(x, m, &memo);
        } else if (f == 5) {
            uint32_t id;
            bool ext;
            if (!sg__xs_message_name(x, m, 8, &id, true, &ext) || !id)
                return sg__xs_no(x, "malformed or unnamed initializer%s", NULL);
            if (ext)
                return sg__xs_no(x, "the model has external data%s", NULL);
            if (x->names[id].flags & F_INIT)
                return sg__xs_no(x, "two initializers have one name%s", NULL);
            x->names[id].flags |= F_INIT;
        } else {
            st = scan_entry(x, m, f == 11 ? F_INPUT : f == 12 ? F_OUTPUT : 0);
        }
        if (st)
            return st;
        sg__xs_release_below(x, r.p);
    }
    if (r.bad)
        return sg__xs_no(x, "malformed graph%s", NULL);
    return SG_OK;
}

/* A graph out of file order (a converter appended nodes, say) must still
 * have no cycle, which the loader reports: a depth-first walk up through
 * producers, a state byte per node. */
static sg_status check_acyclic(struct xs *x)
{
    struct frame {
        uint32_t k, e;
    } *stack = NULL;
    size_t n = 0, cap = 0;
    uint8_t *state = sg_calloc((size_t)x->n_nodes + 1, 1); /* 1 on the path, 2 done */
    sg_status st = state ? SG_OK : sg__xs_no(x, "out of memory%s", NULL);
    for (uint32_t s = 0; s < x->n_nodes && !st; s++) {
        if (state[s])
            continue;
        for (uint32_t k = s;;) {
            if (k != UINT32_MAX) {
                if (!sg__xs_grow((void **)&stack, &cap, n + 1, sizeof *stack)) {
                    st = sg__xs_no(x, "out of memory%s", NULL);
                    break;
                }
                stack[n++] = (struct frame){k, x->first_edge[k]};
                state[k] = 1;
            }
            if (!n)
                break;
            struct frame *f = &stack[n - 1];
            k = UINT32_MAX;
            if (f->e == x->first_edge[f->k + 1]) {
                state[f->k] = 2;
                n--;
                continue;
            }
            uint32_t id = x->edges[f->e++];
            int32_t p = id ? x->names[id].producer : -1;
            if (p < 0 || state[p] == 2)
                continue;
            if (state[p] == 1) {
                st = sg__xs_no(x, "the graph has a cycle%s", NULL);
                break;
            }
            k = (uint32_t)p;
        }
    }
    sg_free(stack);
    sg_free(state);
    return st;
}

/* What the loader checks and this path relies on: one producer per name,
 * every read defined (in file order, or else without a cycle), the graph
 * outputs defined. */
sg_status sg__xs_check_graph(struct xs *x)
{
    for (uint32_t id = 1; id < x->n_names; id++) {
        const struct sname *n = &x->names[id];
        if (n->producer >= 0 && (n->flags & (F_INIT | F_INPUT)))
            return sg__xs_no(
                x, "a tensor is produced by a node and is also an input or initializer%s", NULL);
        if ((n->flags & F_OUTPUT) && n->producer < 0 && !(n->flags & (F_INIT | F_INPUT)))
            return sg__xs_no(x, "a graph output is never computed%s", NULL);
    }
    for (uint32_t k = 0; k < x->n_nodes; k++)
        for (uint32_t e = x->first_edge[k]; e < x->first_edge[k + 1]; e++) {
            uint32_t id = x->edges[e];
            if (!id)
                continue;
            const struct sname *n = &x->names[id];
            if (n->producer >= (int32_t)k)
                x->unsorted = true;
            if (n->producer < 0 && !(n->flags & (F_INIT | F_INPUT)))
                return sg__xs_no(x, "a node reads an undefined tensor%s", NULL);
        }
    return x->unsorted ? check_acyclic(x) : SG_OK;
}

struct xs_pass sg__xs_pass_begin(struct xs *x, uint32_t lo, uint32_t hi)
{
    const uint8_t *g0 = x->base + x->graph.off;
    sg__xs_release_all(x);
    return (struct xs_pass){{g0, g0 + x->graph.len, false}, lo, hi};
}

bool sg__xs_pass_next(struct xs *x, struct xs_pass *p, uint32_t *f, struct wr *m)
{
    int t;
    while (wr_tag(&p->r, f, &t)) {
        sg__xs_release_below(x, p->r.p);
        if (t == WT_LEN && *f >= p->lo && *f <= p->hi) {
            *m = wr_len(&p->r);
            return true;
        }
        wr_skip(&p->r, t);
    }
    return false;
}
