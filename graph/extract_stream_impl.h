/*
 * extract_stream_impl.h - internal to the extract that cuts from the file
 * (sg_extract_file, sg_cut.h): its index, shared by
 *   extract_stream_scan.c   the mapping, the name table, the scans and the
 *                           loader's checks,
 *   extract_stream.c        the cut (as sg_model_extract makes it) and the
 *                           entry point,
 *   extract_stream_types.c  element types as the IR infers them,
 *   extract_stream_write.c  writing the result from the file's bytes.
 */
#ifndef SG_EXTRACT_STREAM_IMPL_H
#define SG_EXTRACT_STREAM_IMPL_H

#include "sg_cut.h"
#include "sg_ir.h"
#include "strmap.h"
#include "wire.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
    uint32_t off;       /* of the name's bytes in the file */
    uint32_t hash;      /* FNV-1a: probes compare it, not the file's bytes (whose
                         * pages a comparison would bring back, 64 KB at a time) */
    int32_t producer;   /* node index; -1: none */
    uint32_t len : 15;  /* names are shorter than NAME_MAX_LEN */
    uint32_t in_vi : 1; /* listed in value_info (twice: the loader refuses) */
    uint32_t flags : 16;
};
#define NAME_MAX_LEN 32768
_Static_assert(sizeof(struct sname) == 16, "a name's index entry stays 16 bytes");

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
    bool all_opsets;    /* the kept nodes use no imported domain: keep them all */
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

/* Node k is kept (a bit per node). */
static inline bool kept(const struct xs *x, uint32_t k)
{
    return x->keep[k >> 3] >> (k & 7) & 1;
}

static inline void set_kept(struct xs *x, uint32_t k, bool on)
{
    if (on)
        x->keep[k >> 3] |= (uint8_t)(1u << (k & 7));
    else
        x->keep[k >> 3] &= (uint8_t) ~(1u << (k & 7));
}

/* extract_stream_scan.c. The index: no() flags why this path cannot take
 * the model (SG_EUNSUPPORTED in x->why, fmt with one %s for arg: the
 * caller loads it instead); release_below / release_all give pages of the
 * mapping back as a pass moves on / before one; grow and map_array make
 * room (a heap array, an array of its own mapping in x->maps[which]);
 * name_id finds (or, with add, makes) a name's id; span_str and span_of
 * between file bytes and strings; message_name reads the name field of a
 * message. The passes: scan_model (the ModelProto's fields), count_graph
 * (the index's sizes), scan_graph (fills it, checking every message),
 * check_graph (what the loader checks of the graph as a whole). */
sg_status sg__xs_no(struct xs *x, const char *fmt, const char *arg);
void sg__xs_release_below(struct xs *x, const uint8_t *upto);
void sg__xs_release_all(struct xs *x);
bool sg__xs_grow(void **p, size_t *cap, size_t need, size_t elem);
void *sg__xs_map_array(struct xs *x, int which, size_t n, size_t elem);
bool sg__xs_name_id(struct xs *x, const uint8_t *p, size_t n, bool add, uint32_t *id);
bool sg__xs_span_str(const struct xs *x, struct span s, char *buf, size_t size);
struct span sg__xs_span_of(const struct xs *x, struct wr s);
const char *sg__xs_canon(const char *d);
bool sg__xs_message_name(struct xs *x, struct wr m, uint32_t field, uint32_t *id, bool add,
                         bool *external);
sg_status sg__xs_scan_model(struct xs *x);
sg_status sg__xs_count_graph(struct xs *x, size_t *nodes, size_t *edges, size_t *names);
sg_status sg__xs_scan_graph(struct xs *x);
sg_status sg__xs_check_graph(struct xs *x);

/* A pass over the graph's message fields numbered lo to hi, in file
 * order, giving pages back behind it: sg__xs_pass_begin, then
 * sg__xs_pass_next for each (its number in *f, its payload in *m) until it
 * answers false. */
struct xs_pass {
    struct wr r;
    uint32_t lo, hi;
};
struct xs_pass sg__xs_pass_begin(struct xs *x, uint32_t lo, uint32_t hi);
bool sg__xs_pass_next(struct xs *x, struct xs_pass *p, uint32_t *f, struct wr *m);

/* extract_stream.c: push an id on a heap array */
bool sg__xs_push_id(uint32_t **v, size_t *n, size_t *cap, uint32_t id);

/* extract_stream_types.c: x->dt for every name, then F_RESOLVED */
sg_status sg__xs_infer_dtypes(struct xs *x);
sg_status sg__xs_mark_resolved(struct xs *x);

/* extract_stream_write.c: a tensor with two entries left to the loader;
 * the domains the kept nodes use; the writer for sg_file_write_atomic_with
 * (ctx: the struct xs) */
sg_status sg__xs_check_multi(struct xs *x);
sg_status sg__xs_collect_domains(struct xs *x);
sg_status sg__xs_write_model(FILE *out, void *ctx);

#endif
