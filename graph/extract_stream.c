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
 * topological order, defined reads, operator arity), and exposed tensors
 * the model leaves untyped get the element type the IR's inference gives
 * (and so do the value_info entries that inference types on its way). The
 * result is written by copying the byte ranges of every kept message in
 * their order, with new entries for the inputs and outputs.
 *
 * It covers the common case, and answers SG_EUNSUPPORTED, having written
 * nothing, for everything else: subgraphs (If/Loop/Scan bodies), model-local
 * functions, training information, sparse or external tensors, a graph not
 * in topological order, a tensor with two entries that the result keeps,
 * and every defect the loader or sg_model_extract would report. The caller
 * then runs the loader and sg_model_extract, whose result and messages are
 * the reference: for every cut this path takes, both write the same model
 * (tests/extract_stream_test.py).
 */
#include "decode_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"
#include "sg_cut.h"
#include "sg_io.h"
#include "sg_file.h"
#include "sg_opschema.h"
#include "strmap.h"
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ the index */

/* Flags of a name. */
enum {
    F_INIT = 1 << 0,      /* an initializer */
    F_INPUT = 1 << 1,     /* a graph input of the model */
    F_ENTRY = 1 << 2,     /* has a ValueInfoProto (input, output or value_info) */
    F_MULTI = 1 << 3,     /* has more than one */
    F_TYPED = 1 << 4,     /* its (first) entry gives an element type */
    F_CONST = 1 << 5,     /* computable from initializers alone */
    F_LISTED = 1 << 6,    /* an input of the cut */
    F_OUT = 1 << 7,       /* an output of the cut */
    F_SEEN = 1 << 8,      /* visited by the walk back */
    F_READ = 1 << 9,      /* read by a kept node */
    F_NEWIN = 1 << 10,    /* an input of the result (listed, or an IR<4 initializer input) */
    F_OUTPUT = 1 << 11,   /* a graph output of the model */
    F_HASTYPE = 1 << 12,  /* its (first) entry has a type field: never inferred */
    F_RETYPED = 1 << 13,  /* exposed with a type of the cut's (given or inferred) */
    F_RESOLVED = 1 << 14, /* typed on the way by the IR's inference (see mark_resolved) */
    F_DTSET = 1 << 15,    /* infer_dtypes met its first entry */
};

struct sname {
    uint32_t off;     /* of the name's bytes in the file */
    uint32_t hash;    /* FNV-1a: probes compare it, not the file's bytes (whose
                       * pages a comparison would bring back, 64 KB at a time) */
    int32_t producer; /* node index; -1: none */
    uint16_t len;
    uint16_t flags;
};

/* A byte range of the file. */
struct span {
    uint32_t off, len;
};

struct xs {
    const uint8_t *base;
    size_t size;
    size_t released;    /* pages below this were given back */
    size_t touched_low; /* since: the lowest offset a comparison read */
    struct sg_diag *why;
    /* names; id 0 is the empty name */
    struct sname *names;
    uint32_t n_names, cap_names;
    uint32_t *slots; /* open addressing: name id, 0 empty */
    uint32_t n_slots;
    /* nodes */
    uint32_t *first_edge; /* n_nodes + 1: node k's inputs are edges [k], [k+1] */
    uint8_t *keep;        /* a bit per node */
    uint32_t n_nodes, cap_nodes;
    uint32_t *edges;
    size_t n_edges, cap_edges;
    /* the mappings that hold the arrays above */
    struct {
        void *p;
        size_t bytes;
    } maps[5];
    /* the model */
    struct span graph;
    struct span opset_domain[64];
    int64_t opset_version[64];
    bool opset_has_version[64];
    size_t n_opsets;
    /* the asked node names -> index into found */
    struct sg__strmap want;
    int32_t *found;          /* node index per asked node name, -1 */
    struct span *found_node; /* and its NodeProto (an end node's outputs are read there) */
    /* the cut */
    uint32_t *ins, *outs, *stack;
    size_t n_ins, n_outs, n_stack;
    size_t cap_ins, cap_outs, cap_stack;
    /* the inputs of the result: ins, then IR<4 initializer inputs */
    uint32_t *new_in;
    size_t n_new_in;
    struct span *entry; /* per new input, then per output: its ValueInfoProto */
    /* domains the kept nodes use (canonical, NUL-terminated copies) */
    char *domains[64];
    size_t n_domains;
    size_t n_kept, n_inits_kept;
    bool asked_twice;   /* two nodes have an asked name */
    bool unsorted;      /* a node reads what a later one makes */
    bool dt_changed;    /* infer_node changed a type (passes over an unsorted graph) */
    size_t n_two_types; /* entries with two type fields */
    sg_model *scratch;  /* what check_message decodes into */
    size_t n_checked;
    size_t max_outputs; /* of a node */
    /* Per exposed tensor, the type the cut gives it (dtype 0: its entry's),
     * and the inferred element types of every name behind them. */
    struct retype {
        int32_t dtype; /* -1 while to be inferred */
        int rank;
        const int64_t *dims;
    } * retype;
    uint8_t *dt;
    /* scratch of infer_node, sized by the largest node */
    struct rule_node *rule_node;
    uint32_t *rule_in, *rule_out;
    int32_t *rule_in_dt;
    sg_value **rule_in_ptr;
    size_t cap_rule_in, cap_rule_out;
};

static bool kept(const struct xs *x, uint32_t k)
{
    return x->keep[k >> 3] >> (k & 7) & 1;
}

static void set_kept(struct xs *x, uint32_t k, bool on)
{
    if (on)
        x->keep[k >> 3] |= (uint8_t)(1u << (k & 7));
    else
        x->keep[k >> 3] &= (uint8_t) ~(1u << (k & 7));
}

static sg_status no(struct xs *x, const char *fmt, const char *arg)
{
    /* The reason is only for a caller who wants to tell the user which path ran. */
    return sg_diag_set(x->why, SG_EUNSUPPORTED, fmt, arg ? arg : "");
}

/* Give back the pages of the mapping below `upto` once 128 KB of them
 * has been read, with those a name comparison brought back in since (they
 * are reread from the page cache when needed again). */
static void release_below(struct xs *x, const uint8_t *upto)
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
static void release_all(struct xs *x)
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

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
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
static void *map_array(struct xs *x, int which, size_t n, size_t elem)
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
static bool name_id(struct xs *x, const uint8_t *p, size_t n, bool add, uint32_t *id)
{
    *id = 0;
    if (n == 0)
        return true;
    if (n > UINT16_MAX)
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
    x->names[nid] = (struct sname){(uint32_t)(p - x->base), h, -1, (uint16_t)n, 0};
    x->slots[i] = nid;
    *id = nid;
    return true;
}

/* A length-delimited field's payload as a name id (adding it). */
static sg_status intern(struct xs *x, struct wr *r, uint32_t *id)
{
    struct wr s = wr_len(r);
    if (r->bad)
        return no(x, "malformed model%s", NULL);
    if (!name_id(x, s.p, (size_t)(s.end - s.p), true, id))
        return no(x,
                  "a name over 64 KB, or more names than outputs, initializers and "
                  "entries%s",
                  NULL);
    return SG_OK;
}

/* ------------------------------------------------------ the model's parts */

/* A span's bytes as a C string in buf (false when it does not fit). */
static bool span_str(const struct xs *x, struct span s, char *buf, size_t size)
{
    if (s.len >= size)
        return false;
    memcpy(buf, x->base + s.off, s.len);
    buf[s.len] = '\0';
    return true;
}

static struct span span_of(const struct xs *x, struct wr s)
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
static sg_status scan_model(struct xs *x)
{
    struct wr r = {x->base, x->base + x->size, false};
    uint32_t f;
    int t;
    bool have_graph = false;
    while (wr_tag(&r, &f, &t)) {
        if (f == 7) {
            if (have_graph || t != WT_LEN)
                return no(x, "the model has two graph fields%s", NULL);
            have_graph = true;
            x->graph = span_of(x, wr_len(&r));
        } else if (f == 8) {
            if (t != WT_LEN)
                return no(x, "malformed opset import%s", NULL);
            struct wr o = wr_len(&r);
            if (x->n_opsets == 64)
                return no(x, "more than 64 opset imports%s", NULL);
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
                        return no(x, "malformed opset import%s", NULL);
                    x->opset_domain[k] = span_of(x, wr_len(&d));
                } else if (of == 2) {
                    if (ot != WT_VARINT)
                        return no(x, "malformed opset import%s", NULL);
                    x->opset_version[k] = (int64_t)wr_varint(&o);
                    x->opset_has_version[k] = true;
                } else {
                    wr_skip(&o, ot);
                }
            }
            if (o.bad)
                return no(x, "malformed opset import%s", NULL);
        } else if (f == 25 || f == 20) {
            return no(x, "the model has local functions or training information%s", NULL);
        } else if (f == 1 || f == 5) {
            if (t != WT_VARINT)
                return no(x, "malformed model%s", NULL);
            wr_varint(&r);
        } else if (f == 2 || f == 3 || f == 4 || f == 6) {
            if (!string_ok(&r, t))
                return no(x, "malformed model string%s", NULL);
        } else if (f == 14) {
            if (t != WT_LEN || !strings_ok(wr_len(&r), 2))
                return no(x, "malformed metadata%s", NULL);
        } else {
            wr_skip(&r, t);
        }
    }
    if (r.bad)
        return no(x, "malformed model%s", NULL);
    if (!have_graph || !x->n_opsets)
        return no(x, "the model has no graph or imports no opset%s", NULL);
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
            return no(x, "out of memory%s", NULL);
    }
    struct sg_diag d = {0};
    size_t n = (size_t)(m.end - m.p);
    bool ok = field == 1   ? !sg__check_node_bytes(x->scratch, m.p, n, &d)
              : field == 5 ? sg__decode_tensor_bytes(x->scratch, m.p, n, &d) != NULL
                           : !sg__check_value_info_bytes(x->scratch, m.p, n, &d);
    return ok ? SG_OK : no(x, "the loader refuses a message: %s", d.msg);
}

static const char *canon(const char *d)
{
    return sg__canon_domain(d);
}

/* The opset the model imports for `domain` (as sg_model_opset: the first
 * import of it; 0 when none). */
static int64_t opset_of(const struct xs *x, const char *domain)
{
    const char *want = canon(domain);
    char buf[256];
    for (size_t i = 0; i < x->n_opsets; i++) {
        if (!span_str(x, x->opset_domain[i], buf, sizeof buf))
            continue;
        if (strcmp(canon(buf), want) == 0)
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
            return no(x, "a node has a subgraph%s", NULL);
        if (f == 22 || f == 23)
            return no(x, "a node has a sparse tensor attribute%s", NULL);
        if ((f == 5 || f == 10) && t == WT_LEN) {
            bool bad;
            if (tensor_external(wr_len(&a), &bad) || bad)
                return no(x, "a node's tensor attribute is external or malformed%s", NULL);
        } else {
            wr_skip(&a, t);
        }
    }
    return a.bad ? no(x, "malformed attribute%s", NULL) : SG_OK;
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
        if (span_str(x, op, o, sizeof o) && span_str(x, domain, d, sizeof d)) {
            memo->opset = opset_of(x, d);
            memo->schema = memo->opset ? sg_op_schema_find(d, o, memo->opset) : NULL;
        }
    }
    const struct sg_op_schema *s = memo->schema;
    if (!s)
        return SG_OK;
    if (in < s->min_inputs || (s->max_inputs >= 0 && in > s->max_inputs) || out < s->min_outputs ||
        (s->max_outputs >= 0 && out > s->max_outputs))
        return no(x, "a node has the wrong number of inputs or outputs%s", NULL);
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
    span_str(x, name, buf, sizeof buf);
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
static sg_status count_graph(struct xs *x, size_t *nodes, size_t *edges, size_t *names)
{
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    uint32_t f;
    int t;
    *nodes = *edges = *names = 0;
    while (wr_tag(&r, &f, &t)) {
        release_below(x, r.p);
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
        return no(x, "malformed or oversized graph%s", NULL);
    return SG_OK;
}

static sg_status scan_node(struct xs *x, struct wr node, struct arity_memo *memo)
{
    uint32_t k = x->n_nodes;
    if (k == x->cap_nodes)
        return no(x, "more nodes than counted%s", NULL);
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
                        return no(x, "more edges than counted%s", NULL);
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
                            return no(x, "a tensor has two producers%s", NULL);
                        x->names[id].producer = (int32_t)k;
                    }
                }
            } else if (pass == 3 && t == WT_LEN && (f == 3 || f == 4 || f == 5 || f == 7)) {
                struct wr s = wr_len(&r);
                if (f == 3)
                    name = span_of(x, s);
                else if (f == 4)
                    op = span_of(x, s);
                else if (f == 7)
                    domain = span_of(x, s);
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
            return no(x, "malformed node%s", NULL);
    }
    x->n_nodes++;
    x->first_edge[x->n_nodes] = (uint32_t)x->n_edges;
    match_node(x, name, k, span_of(x, node));
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
                return no(x, "a value info has two names%s", NULL);
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
                        return no(x, "malformed type%s", NULL);
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
                return no(x, "malformed type%s", NULL);
        } else {
            wr_skip(&e, t);
        }
    }
    if (e.bad || !have_name || !id)
        return no(x, "malformed or unnamed value info%s", NULL);
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
    if ((flag & (F_INPUT | F_OUTPUT)) && (n->flags & flag))
        return no(x, "a name is listed twice as a graph input or output%s", NULL);
    n->flags |= F_ENTRY | flag;
    return SG_OK;
}

/* The name of an initializer (TensorProto field 8) or of a quantization
 * annotation (field 1), without adding it. *id 0: none or unknown. */
static bool message_name(struct xs *x, struct wr m, uint32_t field, uint32_t *id, bool add,
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
            if (!name_id(x, s.p, (size_t)(s.end - s.p), add, id) && add)
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

static sg_status scan_graph(struct xs *x)
{
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    struct arity_memo memo = {0};
    uint32_t f;
    int t;
    while (wr_tag(&r, &f, &t)) {
        sg_status st = SG_OK;
        if (f == 2 || f == 10) { /* name, doc_string */
            if (!string_ok(&r, t))
                return no(x, "malformed graph string%s", NULL);
            continue;
        }
        if (!(f == 1 || f == 5 || (f >= 11 && f <= 15))) {
            wr_skip(&r, t);
            continue;
        }
        if (t != WT_LEN)
            return no(x, "malformed graph%s", NULL);
        struct wr m = wr_len(&r);
        if (r.bad)
            break;
        if (f == 15)
            return no(x, "the model has sparse initializers%s", NULL);
        if (f == 14) {
            if (!annotation_ok(m))
                return no(x, "malformed quantization annotation%s", NULL);
            continue;
        }
        if ((st = check_message(x, f, m)))
            return st;
        if (f == 1) {
            st = scan_node(x, m, &memo);
        } else if (f == 5) {
            uint32_t id;
            bool ext;
            if (!message_name(x, m, 8, &id, true, &ext) || !id)
                return no(x, "malformed or unnamed initializer%s", NULL);
            if (ext)
                return no(x, "the model has external data%s", NULL);
            if (x->names[id].flags & F_INIT)
                return no(x, "two initializers have one name%s", NULL);
            x->names[id].flags |= F_INIT;
        } else {
            st = scan_entry(x, m, f == 11 ? F_INPUT : f == 12 ? F_OUTPUT : 0);
        }
        if (st)
            return st;
        release_below(x, r.p);
    }
    if (r.bad)
        return no(x, "malformed graph%s", NULL);
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
    sg_status st = state ? SG_OK : no(x, "out of memory%s", NULL);
    for (uint32_t s = 0; s < x->n_nodes && !st; s++) {
        if (state[s])
            continue;
        for (uint32_t k = s;;) {
            if (k != UINT32_MAX) {
                if (!grow((void **)&stack, &cap, n + 1, sizeof *stack)) {
                    st = no(x, "out of memory%s", NULL);
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
                st = no(x, "the graph has a cycle%s", NULL);
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
static sg_status check_graph(struct xs *x)
{
    for (uint32_t id = 1; id < x->n_names; id++) {
        const struct sname *n = &x->names[id];
        if (n->producer >= 0 && (n->flags & (F_INIT | F_INPUT)))
            return no(x, "a tensor is produced by a node and is also an input or initializer%s",
                      NULL);
        if ((n->flags & F_OUTPUT) && n->producer < 0 && !(n->flags & (F_INIT | F_INPUT)))
            return no(x, "a graph output is never computed%s", NULL);
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
                return no(x, "a node reads an undefined tensor%s", NULL);
        }
    return x->unsorted ? check_acyclic(x) : SG_OK;
}

/* -------------------------------------------------------------- the cut */

static bool push_id(uint32_t **v, size_t *n, size_t *cap, uint32_t id)
{
    if (!grow((void **)v, cap, *n + 1, sizeof **v))
        return false;
    (*v)[(*n)++] = id;
    return true;
}

static sg_status lookup(struct xs *x, const char *name, uint32_t *id)
{
    if (!name_id(x, (const uint8_t *)name, strlen(name), false, id) || !*id)
        return no(x, "no tensor named '%s'", name);
    return SG_OK;
}

/* F_CONST on every name computable from initializers alone: a node is
 * constant when all it reads is (in topological order, a bit per node),
 * and so are its outputs. */
static sg_status mark_const(struct xs *x)
{
    uint8_t *cnode = sg_calloc((size_t)x->n_nodes / 8 + 1, 1);
    if (!cnode)
        return no(x, "out of memory%s", NULL);
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

static sg_status add_in(struct xs *x, uint32_t id)
{
    if (x->names[id].flags & F_LISTED)
        return SG_OK;
    x->names[id].flags |= F_LISTED;
    return push_id(&x->ins, &x->n_ins, &x->cap_ins, id) ? SG_OK : no(x, "out of memory%s", NULL);
}

static sg_status add_out(struct xs *x, uint32_t id)
{
    if (x->names[id].flags & F_OUT)
        return SG_OK;
    x->names[id].flags |= F_OUT;
    return push_id(&x->outs, &x->n_outs, &x->cap_outs, id) ? SG_OK : no(x, "out of memory%s", NULL);
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
        name_id(x, n.p, (size_t)(n.end - n.p), false, &id);
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
        return no(x, "two nodes have an asked name%s", NULL);
    for (size_t i = 0; i < n_want; i++) {
        bool start = i < s->n_start_nodes;
        const char *name = start ? s->start_nodes[i] : s->end_nodes[i - s->n_start_nodes];
        uintptr_t first = (uintptr_t)sg__strmap_get(&x->want, name);
        int32_t k = first ? x->found[first - 1] : -1;
        if (k < 0)
            return no(x, "no node named '%s'", name);
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
        if (!push_id(&x->stack, &x->n_stack, &x->cap_stack, x->outs[i]))
            return no(x, "out of memory%s", NULL);
    while (x->n_stack) {
        struct sname *v = &x->names[x->stack[--x->n_stack]];
        if (v->flags & F_SEEN)
            continue;
        v->flags |= F_SEEN;
        if (v->flags & (F_LISTED | F_INIT))
            continue;
        if (v->producer < 0)
            return no(x, "the cut is not closed%s", NULL);
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
                !push_id(&x->stack, &x->n_stack, &x->cap_stack, id))
                return no(x, "out of memory%s", NULL);
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

/* ------------------------------------------------------- element types */

/* The element type of a TypeProto as sg_value_dtype reads it: *fixed when
 * it is one (a tensor type with one, or another kind: 0), else the
 * initializer's counts. */
static int32_t type_elem(struct wr ty, bool *fixed)
{
    uint32_t f;
    int t;
    int32_t elem = 0;
    *fixed = false;
    while (wr_tag(&ty, &f, &t)) {
        if (f == 1 && t == WT_LEN) {
            struct wr tensor = wr_len(&ty);
            uint32_t ef;
            int et;
            *fixed = false;
            elem = 0;
            while (wr_tag(&tensor, &ef, &et)) {
                if (ef == 1 && et == WT_VARINT) {
                    elem = (int32_t)wr_varint(&tensor);
                    *fixed = true;
                } else {
                    wr_skip(&tensor, et);
                }
            }
        } else if (f == 4 || f == 5 || f == 8 || f == 9) {
            *fixed = true;
            elem = 0;
            wr_skip(&ty, t);
        } else {
            wr_skip(&ty, t);
        }
    }
    return elem;
}

/* A node as the element type rules (sg_node_output_dtype) read it: op,
 * domain, which inputs are given, the output count, and the attributes'
 * names, types, ints and tensor element types. The parts point into the
 * caller's buffers; false: more than 64 attributes. */
struct rule_node {
    sg_node n;
    char op[256], domain[256];
    sg_attr attr[64];
    sg_attr *attrs[64];
    sg_tensor tensor[64];
    char attr_name[64][64];
};

static void span_name(const struct xs *x, struct span s, char *buf, size_t size)
{
    /* A name too long to be one the rules know stands for none of them. */
    if (!span_str(x, s, buf, size))
        strcpy(buf, "\x01");
}

static bool rule_attr(const struct xs *x, struct rule_node *rn, struct wr a)
{
    uint32_t k = rn->n.n_attrs, f;
    int t;
    if (k == 64)
        return false;
    sg_attr *at = &rn->attr[k];
    memset(at, 0, sizeof *at);
    rn->attr_name[k][0] = '\0';
    at->name = rn->attr_name[k];
    while (wr_tag(&a, &f, &t)) {
        if (f == 1 && t == WT_LEN) {
            span_name(x, span_of(x, wr_len(&a)), rn->attr_name[k], sizeof rn->attr_name[k]);
        } else if (f == 20 && t == WT_VARINT) {
            at->has_type = true;
            at->type = (enum sg_attr_type)(int32_t)wr_varint(&a);
        } else if (f == 3 && t == WT_VARINT) {
            at->has_i = true;
            at->i = (int64_t)wr_varint(&a);
        } else if (f == 5 && t == WT_LEN) {
            struct wr tp = wr_len(&a);
            sg_tensor *tn = &rn->tensor[k];
            memset(tn, 0, sizeof *tn);
            uint32_t tf;
            int tt;
            while (wr_tag(&tp, &tf, &tt)) {
                if (tf == 2 && tt == WT_VARINT) {
                    tn->dtype = (int32_t)wr_varint(&tp);
                    tn->has_dtype = true;
                } else {
                    wr_skip(&tp, tt);
                }
            }
            at->t = tn;
        } else {
            wr_skip(&a, t);
        }
    }
    rn->attrs[k] = at;
    rn->n.n_attrs = k + 1;
    return true;
}

/* The types of one node's untyped outputs from its inputs' (x->dt). */
static sg_status infer_node(struct xs *x, struct wr m)
{
    static sg_value present; /* stands for a given input: the rules test for NULL */
    struct rule_node *rn = x->rule_node;
    memset(&rn->n, 0, sizeof rn->n);
    rn->n.op_type = "\x01";
    rn->n.attrs = rn->attrs;
    size_t n_in = 0, n_out = 0;
    uint32_t f;
    int t;
    for (struct wr r = m; wr_tag(&r, &f, &t);) {
        if (t != WT_LEN) {
            wr_skip(&r, t);
            continue;
        }
        struct wr s = wr_len(&r);
        if (f == 1 || f == 2) {
            uint32_t id;
            name_id(x, s.p, (size_t)(s.end - s.p), false, &id);
            if (f == 1) {
                if (n_in == x->cap_rule_in)
                    return no(x, "more inputs than counted%s", NULL);
                x->rule_in[n_in] = id;
                x->rule_in_dt[n_in] = id ? x->dt[id] : 0;
                x->rule_in_ptr[n_in++] = id ? &present : NULL;
            } else {
                if (n_out == x->cap_rule_out)
                    return no(x, "more outputs than counted%s", NULL);
                x->rule_out[n_out++] = id;
            }
        } else if (f == 4) {
            span_name(x, span_of(x, s), rn->op, sizeof rn->op);
            rn->n.op_type = rn->op;
        } else if (f == 7) {
            span_name(x, span_of(x, s), rn->domain, sizeof rn->domain);
            rn->n.domain = rn->domain;
        } else if (f == 5 && !rule_attr(x, rn, s)) {
            return no(x, "a node with over 64 attributes%s", NULL);
        }
    }
    rn->n.inputs = x->rule_in_ptr;
    rn->n.n_inputs = (uint32_t)n_in;
    rn->n.n_outputs = (uint32_t)n_out;
    for (size_t i = 0; i < n_out; i++) {
        uint32_t id = x->rule_out[i];
        if (!id || (x->names[id].flags & F_HASTYPE))
            continue;
        int32_t d = sg_node_output_dtype(&rn->n, (uint32_t)i, x->rule_in_dt);
        uint8_t v = d > 0 && d < SG_DTYPE_COUNT ? (uint8_t)d : 0;
        x->dt_changed |= x->dt[id] != v;
        x->dt[id] = v;
    }
    return SG_OK;
}

/* x->dt for every name: first what is fixed (an initializer's data_type,
 * then an entry's type over it), then, node by node in the file's order
 * (topological: checked), the outputs without a typed entry by the rules.
 * 0: unknown. The IR types a value from these same facts on demand. */
static sg_status infer_dtypes(struct xs *x)
{
    if (x->n_two_types)
        return no(x, "a value info has two types%s", NULL);
    size_t max_in = 0;
    for (uint32_t k = 0; k < x->n_nodes; k++)
        if (x->first_edge[k + 1] - x->first_edge[k] > max_in)
            max_in = x->first_edge[k + 1] - x->first_edge[k];
    x->cap_rule_in = max_in;
    x->cap_rule_out = x->max_outputs;
    if (!(x->dt = sg_calloc(x->n_names + 1, 1)) ||
        !(x->rule_node = sg_malloc(sizeof *x->rule_node)) ||
        !(x->rule_in = sg_calloc(max_in + 1, sizeof *x->rule_in)) ||
        !(x->rule_in_dt = sg_calloc(max_in + 1, sizeof *x->rule_in_dt)) ||
        !(x->rule_in_ptr = sg_calloc(max_in + 1, sizeof *x->rule_in_ptr)) ||
        !(x->rule_out = sg_calloc(x->max_outputs + 1, sizeof *x->rule_out)))
        return no(x, "out of memory%s", NULL);
    const uint8_t *g0 = x->base + x->graph.off;
    /* The loader's order: initializers, inputs, then outputs and
     * value_info; a name's first entry gives its type. */
    int rounds = 0;
    for (int pass = 0; pass < 4; pass++) {
        struct wr r = {g0, g0 + x->graph.len, false};
        uint32_t f;
        int t;
        release_all(x);
        x->dt_changed = false;
        while (wr_tag(&r, &f, &t)) {
            release_below(x, r.p);
            bool want = t == WT_LEN && (pass == 0   ? f == 5
                                        : pass == 1 ? f == 11
                                        : pass == 2 ? f == 12 || f == 13
                                                    : f == 1);
            if (!want) {
                wr_skip(&r, t);
                continue;
            }
            struct wr m = wr_len(&r);
            int32_t d = 0;
            uint32_t id = 0, mf;
            int mt;
            if (pass == 3) {
                sg_status st = infer_node(x, m);
                if (st)
                    return st;
                continue;
            }
            bool fixed = false, named = false;
            while (wr_tag(&m, &mf, &mt)) {
                if (mf == (pass == 0 ? 8u : 1u) && mt == WT_LEN) {
                    struct wr nm = wr_len(&m);
                    name_id(x, nm.p, (size_t)(nm.end - nm.p), false, &id);
                    named = true;
                } else if (pass == 0 && mf == 2 && mt == WT_VARINT) {
                    d = (int32_t)wr_varint(&m);
                    fixed = true;
                } else if (pass > 0 && mf == 2 && mt == WT_LEN) {
                    d = type_elem(wr_len(&m), &fixed);
                } else {
                    wr_skip(&m, mt);
                }
            }
            if (!named || !id || (pass > 0 && (x->names[id].flags & F_DTSET)))
                continue;
            if (pass > 0)
                x->names[id].flags |= F_DTSET;
            if (!fixed)
                continue;
            if (d < 0 || d > 254)
                return no(x, "an element type code over 254%s", NULL);
            x->dt[id] = (uint8_t)d;
        }
        /* Nodes out of order: again until no type changes (a fixed point
         * of an acyclic graph is the one its topological order gives). */
        if (pass == 3 && x->unsorted && x->dt_changed) {
            if (++rounds == 16)
                return no(x, "the graph is too far out of order to infer types%s", NULL);
            pass = 2;
        }
    }
    return SG_OK;
}

/*
 * F_RESOLVED on the names sg_dtype_resolve types as a side effect when
 * sg_model_extract asks for the exposed tensors to be inferred: it walks
 * up from each through the producers of tensors without an element type
 * (stopping at typed ones) and types every output of each producer it
 * reaches that has no type field. The IR then writes those types into
 * their value_info entries, so this path does too.
 */
static sg_status mark_resolved(struct xs *x)
{
    uint8_t *visited = sg_calloc((size_t)x->n_nodes / 8 + 1, 1);
    if (!visited)
        return no(x, "out of memory%s", NULL);
    x->n_stack = 0;
    sg_status st = SG_OK;
    for (size_t i = 0; i < x->n_new_in + x->n_outs && !st; i++)
        if (x->retype[i].dtype < 0 &&
            !push_id(&x->stack, &x->n_stack, &x->cap_stack,
                     i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in]))
            st = no(x, "out of memory%s", NULL);
    while (!st && x->n_stack) {
        uint32_t id = x->stack[--x->n_stack];
        const struct sname *v = &x->names[id];
        /* typed before any inference: an entry's or an initializer's type */
        if (((v->flags & (F_HASTYPE | F_INIT)) && x->dt[id]) || v->producer < 0)
            continue;
        uint32_t p = (uint32_t)v->producer;
        if (visited[p >> 3] >> (p & 7) & 1)
            continue;
        visited[p >> 3] |= (uint8_t)(1u << (p & 7));
        for (uint32_t e = x->first_edge[p]; e < x->first_edge[p + 1] && !st; e++)
            if (x->edges[e] && !push_id(&x->stack, &x->n_stack, &x->cap_stack, x->edges[e]))
                st = no(x, "out of memory%s", NULL);
    }
    for (uint32_t id = 1; id < x->n_names && !st; id++) {
        struct sname *v = &x->names[id];
        if (v->producer >= 0 && (visited[v->producer >> 3] >> (v->producer & 7) & 1) &&
            !(v->flags & F_HASTYPE) && x->dt[id])
            v->flags |= F_RESOLVED;
    }
    sg_free(visited);
    return st;
}

/* The checks of sg_model_extract after the walk, and the interface. */
static sg_status settle(struct xs *x, const struct sg_extract_spec *s,
                        const struct sg_cut_dims_decl *decls, size_t n_decls)
{
    if (!x->n_kept)
        return no(x, "the cut is empty%s", NULL);
    for (size_t i = 0; i < x->n_ins; i++) {
        int32_t p = x->names[x->ins[i]].producer;
        if (p >= 0 && kept(x, (uint32_t)p))
            return no(x, "an input of the cut is computed inside it%s", NULL);
    }
    for (size_t i = 0; i < s->n_start_nodes; i++) {
        uintptr_t first = (uintptr_t)sg__strmap_get(&x->want, s->start_nodes[i]);
        if (!kept(x, (uint32_t)x->found[first - 1]))
            return no(x, "a start node is not upstream of the outputs%s", NULL);
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
        if (!push_id(&x->new_in, &x->n_new_in, &cap, x->ins[i]))
            return no(x, "out of memory%s", NULL);
        x->names[x->ins[i]].flags |= F_NEWIN;
    }
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    uint32_t f;
    int t;
    release_all(x);
    while (wr_tag(&r, &f, &t)) {
        release_below(x, r.p);
        if (f != 11 || t != WT_LEN) {
            wr_skip(&r, t);
            continue;
        }
        uint32_t id;
        message_name(x, wr_len(&r), 1, &id, false, NULL);
        struct sname *v = &x->names[id];
        if (id && (v->flags & F_INIT) && (v->flags & F_READ) && !(v->flags & F_NEWIN)) {
            v->flags |= F_NEWIN;
            if (!push_id(&x->new_in, &x->n_new_in, &cap, id))
                return no(x, "out of memory%s", NULL);
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
        return no(x, "out of memory%s", NULL);
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
            return no(x, "an exposed tensor's type needs the loaded model%s", NULL);
    }
    if (need_infer) {
        sg_status st = infer_dtypes(x);
        if (!st)
            st = mark_resolved(x);
        if (st)
            return st;
    }
    for (size_t i = 0; i < n_exposed; i++) {
        uint32_t id = i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in];
        if (x->retype[i].dtype < 0 && !(x->retype[i].dtype = x->dt[id]))
            return no(x, "the type of an exposed tensor is not known%s", NULL);
        if (x->retype[i].dtype)
            x->names[id].flags |= F_RETYPED;
    }
    return SG_OK;
}

/* The first entry of each exposed name, found in one pass. */
static void find_entries(struct xs *x)
{
    size_t n_exposed = x->n_new_in + x->n_outs;
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    uint32_t f;
    int t;
    release_all(x);
    while (wr_tag(&r, &f, &t)) {
        release_below(x, r.p);
        if (t != WT_LEN || f < 11 || f > 13) {
            wr_skip(&r, t);
            continue;
        }
        struct wr m = wr_len(&r);
        uint32_t id;
        message_name(x, m, 1, &id, false, NULL);
        if (!id || !(x->names[id].flags & (F_NEWIN | F_OUT)))
            continue;
        for (size_t i = 0; i < n_exposed; i++) {
            uint32_t want = i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in];
            if (want == id && !x->entry[i].len)
                x->entry[i] = span_of(x, m);
        }
    }
}

/* ------------------------------------------------------------- writing */

/* Counts bytes, or writes them. */
struct sink {
    FILE *f;
    uint64_t n;
};

static void put(struct sink *k, const void *p, size_t n)
{
    k->n += n;
    if (k->f && n)
        fwrite(p, 1, n, k->f);
}

static void put_varint(struct sink *k, uint64_t v)
{
    uint8_t buf[10];
    put(k, buf, (size_t)(varint_put(buf, v) - buf));
}

static void put_len_field(struct sink *k, uint32_t field, const void *p, uint64_t n)
{
    put_varint(k, (uint64_t)field << 3 | WT_LEN);
    put_varint(k, n);
    put(k, p, (size_t)n);
}

/* A name is still a value of the result (for value_info and annotations). */
static bool alive(const struct xs *x, uint32_t id)
{
    if (!id)
        return false;
    const struct sname *v = &x->names[id];
    if (v->flags & (F_READ | F_NEWIN | F_OUT))
        return true;
    return v->producer >= 0 && kept(x, (uint32_t)v->producer);
}

/* A name with two entries (say an input also in value_info) is one value
 * with one type in the IR, which writes it once: left to the loader when
 * it stays in the result. */
static sg_status check_multi(struct xs *x)
{
    for (uint32_t id = 1; id < x->n_names; id++)
        if ((x->names[id].flags & F_MULTI) && alive(x, id))
            return no(x, "a tensor has two value infos%s", NULL);
    return SG_OK;
}

/* The bytes of a TypeProto of a tensor: element type and, for rank 0 or
 * more, the dims (one below 0: unknown); sized when k is a counting sink. */
static void put_tensor_type(struct sink *k, const struct retype *rt)
{
    uint64_t shape = 0;
    for (int i = 0; i < rt->rank; i++) {
        uint64_t dim = rt->dims[i] >= 0 ? 1 + varint_size((uint64_t)rt->dims[i]) : 0;
        shape += 1 + varint_size(dim) + dim;
    }
    uint64_t tensor = 1 + varint_size((uint64_t)rt->dtype);
    if (rt->rank >= 0)
        tensor += 1 + varint_size(shape) + shape;
    put_varint(k, 1 << 3 | WT_LEN);
    put_varint(k, tensor);
    put_varint(k, 1 << 3 | WT_VARINT);
    put_varint(k, (uint64_t)rt->dtype);
    if (rt->rank < 0)
        return;
    put_varint(k, 2 << 3 | WT_LEN);
    put_varint(k, shape);
    for (int i = 0; i < rt->rank; i++) {
        uint64_t dim = rt->dims[i] >= 0 ? 1 + varint_size((uint64_t)rt->dims[i]) : 0;
        put_varint(k, 1 << 3 | WT_LEN);
        put_varint(k, dim);
        if (rt->dims[i] >= 0) {
            put_varint(k, 1 << 3 | WT_VARINT);
            put_varint(k, (uint64_t)rt->dims[i]);
        }
    }
}

/* Bytes [from, to) of the file, a megabyte at a time with the pages
 * behind given back (a large initializer would otherwise be resident
 * whole). */
static void put_file_bytes(struct sink *k, struct xs *x, const uint8_t *from, const uint8_t *to)
{
    while (to - from > (1 << 20)) {
        put(k, from, 1 << 20);
        from += 1 << 20;
        if (k->f)
            release_below(x, from);
    }
    put(k, from, (size_t)(to - from));
}

/* The fields of ValueInfoProto `entry` but its name and type, as they are. */
static void put_rest(struct sink *k, const struct xs *x, struct span entry)
{
    struct wr r = {x->base + entry.off, x->base + entry.off + entry.len, false};
    uint32_t f;
    int t;
    for (const uint8_t *start = r.p; wr_tag(&r, &f, &t); start = r.p) {
        wr_skip(&r, t);
        if (f != 1 && f != 2)
            put(k, start, (size_t)(r.p - start));
    }
}

/* A ValueInfoProto as field `field`: name id's, typed by rt, with the
 * other fields of `entry` (len 0: none), as the IR writes a value whose
 * type the cut set. */
static void put_entry(struct sink *k, uint32_t field, const struct xs *x, uint32_t id,
                      const struct retype *rt, struct span entry)
{
    const struct sname *v = &x->names[id];
    struct sink c = {NULL, 0};
    put_tensor_type(&c, rt);
    uint64_t type = c.n;
    c.n = 0;
    put_rest(&c, x, entry);
    uint64_t vi = 1 + varint_size(v->len) + v->len + 1 + varint_size(type) + type + c.n;
    put_varint(k, (uint64_t)field << 3 | WT_LEN);
    put_varint(k, vi);
    put_len_field(k, 1, x->base + v->off, v->len);
    put_varint(k, 2 << 3 | WT_LEN);
    put_varint(k, type);
    put_tensor_type(k, rt);
    put_rest(k, x, entry);
}

/* The retype of exposed name id. */
static const struct retype *retype_of(const struct xs *x, uint32_t id)
{
    for (size_t i = 0; i < x->n_new_in + x->n_outs; i++)
        if ((i < x->n_new_in ? x->new_in[i] : x->outs[i - x->n_new_in]) == id && x->retype[i].dtype)
            return &x->retype[i];
    return NULL;
}

struct emit {
    struct xs *x;
    const struct sg_cut_dims_decl *decls;
    size_t n_decls;
};

/* The new GraphProto's fields (its payload). */
static void emit_graph(struct emit *E, struct sink *k)
{
    struct xs *x = E->x;
    const uint8_t *g0 = x->base + x->graph.off;
    struct wr r = {g0, g0 + x->graph.len, false};
    uint32_t f, node = 0;
    int t;
    release_all(x);
    x->n_inits_kept = 0;
    for (const uint8_t *start = r.p; wr_tag(&r, &f, &t); start = r.p) {
        bool keep = true;
        if (t == WT_LEN && (f == 1 || f == 5 || f == 11 || f == 12 || f == 13 || f == 14)) {
            struct wr m = wr_len(&r);
            uint32_t id = 0;
            if (f == 1) {
                keep = kept(x, node++);
            } else if (f == 5) {
                message_name(x, m, 8, &id, false, NULL);
                keep = id && (x->names[id].flags & (F_READ | F_NEWIN | F_OUT));
                x->n_inits_kept += keep;
            } else if (f == 11 || f == 12) {
                keep = false;
            } else if (f == 13) {
                message_name(x, m, 1, &id, false, NULL);
                keep = alive(x, id);
                if (keep && (x->names[id].flags & F_RETYPED)) {
                    put_entry(k, 13, x, id, retype_of(x, id), span_of(x, m));
                    keep = false;
                } else if (keep && (x->names[id].flags & F_RESOLVED)) {
                    struct retype rt = {x->dt[id], -1, NULL};
                    put_entry(k, 13, x, id, &rt, span_of(x, m));
                    keep = false;
                }
            } else {
                message_name(x, m, 1, &id, false, NULL);
                keep = alive(x, id);
            }
        } else {
            wr_skip(&r, t);
        }
        if (keep)
            put_file_bytes(k, x, start, r.p);
        release_below(x, r.p);
    }
    for (size_t i = 0; i < x->n_new_in + x->n_outs; i++) {
        bool in = i < x->n_new_in;
        uint32_t id = in ? x->new_in[i] : x->outs[i - x->n_new_in];
        if (x->retype[i].dtype)
            put_entry(k, in ? 11 : 12, x, id, &x->retype[i], x->entry[i]);
        else
            put_len_field(k, in ? 11 : 12, x->base + x->entry[i].off, x->entry[i].len);
    }
}

static bool domain_used(const struct xs *x, const char *d)
{
    const char *c = canon(d);
    if (!*c)
        return true;
    for (size_t i = 0; i < x->n_domains; i++)
        if (strcmp(x->domains[i], c) == 0)
            return true;
    return false;
}

/* The domains of the kept nodes. */
static sg_status collect_domains(struct xs *x)
{
    struct wr r = {x->base + x->graph.off, x->base + x->graph.off + x->graph.len, false};
    uint32_t f, node = 0;
    int t;
    release_all(x);
    while (wr_tag(&r, &f, &t)) {
        release_below(x, r.p);
        if (f != 1 || t != WT_LEN) {
            wr_skip(&r, t);
            continue;
        }
        struct wr m = wr_len(&r);
        if (!kept(x, node++))
            continue;
        uint32_t nf;
        int nt;
        while (wr_tag(&m, &nf, &nt)) {
            if (nf != 7 || nt != WT_LEN) {
                wr_skip(&m, nt);
                continue;
            }
            char buf[256];
            if (!span_str(x, span_of(x, wr_len(&m)), buf, sizeof buf))
                return no(x, "a domain name over 255 bytes%s", NULL);
            if (domain_used(x, buf))
                continue;
            if (x->n_domains == 64)
                return no(x, "more than 64 domains%s", NULL);
            if (!(x->domains[x->n_domains] = sg_strdup(canon(buf))))
                return no(x, "out of memory%s", NULL);
            x->n_domains++;
        }
        release_below(x, r.p);
    }
    return SG_OK;
}

static sg_status write_model(FILE *out, void *ctx)
{
    struct emit *E = ctx;
    struct xs *x = E->x;
    struct sink count = {NULL, 0}, k = {out, 0};
    emit_graph(E, &count);
    uint64_t graph_len = count.n;
    struct wr r = {x->base, x->base + x->size, false};
    uint32_t f;
    int t;
    for (const uint8_t *start = r.p; wr_tag(&r, &f, &t); start = r.p) {
        bool keep = f != 20; /* training information is dropped */
        if (f == 7 && t == WT_LEN) {
            wr_len(&r);
            put_varint(&k, 7 << 3 | WT_LEN);
            put_varint(&k, graph_len);
            emit_graph(E, &k);
            continue;
        }
        if (f == 8 && t == WT_LEN) {
            struct wr o = wr_len(&r);
            uint32_t of;
            int ot;
            char buf[256] = "";
            while (wr_tag(&o, &of, &ot)) {
                if (of == 1 && ot == WT_LEN)
                    span_str(x, span_of(x, wr_len(&o)), buf, sizeof buf);
                else
                    wr_skip(&o, ot);
            }
            keep = domain_used(x, buf);
        } else {
            wr_skip(&r, t);
        }
        if (keep)
            put(&k, start, (size_t)(r.p - start));
    }
    return ferror(out) ? SG_EIO : SG_OK;
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
        return no(x, "out of memory%s", NULL);
    for (size_t i = 0; i < n_want; i++) {
        x->found[i] = -1;
        const char *name = i < spec->n_start_nodes ? spec->start_nodes[i]
                                                   : spec->end_nodes[i - spec->n_start_nodes];
        if (!sg__strmap_get(&x->want, name) &&
            sg__strmap_put(&x->want, name, (void *)(uintptr_t)(i + 1)))
            return no(x, "out of memory%s", NULL);
    }
    size_t n_nodes, n_edges, n_names;
    if ((st = scan_model(x)) || (st = count_graph(x, &n_nodes, &n_edges, &n_names)))
        return st;
    /* Sized once: names (and the empty one), slots for a load of 6/7. */
    x->n_slots = (uint32_t)(n_names + n_names / 6 + 1);
    x->cap_names = (uint32_t)n_names + 1;
    x->cap_nodes = (uint32_t)n_nodes;
    x->cap_edges = n_edges;
    if (!(x->names = map_array(x, 0, x->cap_names, sizeof *x->names)) ||
        !(x->slots = map_array(x, 1, x->n_slots, sizeof *x->slots)) ||
        !(x->first_edge = map_array(x, 2, n_nodes + 1, sizeof *x->first_edge)) ||
        !(x->keep = map_array(x, 3, n_nodes / 8 + 1, 1)) ||
        !(x->edges = map_array(x, 4, n_edges, sizeof *x->edges)))
        return no(x, "out of memory%s", NULL);
    x->names[0] = (struct sname){0, 0, -1, 0, 0};
    x->n_names = 1;
    release_all(x);
    if ((st = scan_graph(x)) || (st = check_graph(x)))
        return st;
    if (spec->n_start_nodes && (st = mark_const(x)))
        return st;
    if ((st = resolve(x, spec)) || (st = walk_back(x)) || (st = settle(x, spec, decls, n_decls)) ||
        (st = check_multi(x)) || (st = collect_domains(x)))
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
        struct emit E = {&x, decls, n_decls};
        st = sg_file_write_atomic_with(out, write_model, &E, diag);
        if (!st && report(&x, rep))
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    xs_free(&x);
    munmap(map, x.size);
    return st;
}
