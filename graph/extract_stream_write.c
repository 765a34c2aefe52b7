/*
 * extract_stream_write.c - the result of the extract that cuts from the
 * file: the kept messages' bytes in their order, new entries for the inputs
 * and outputs, the opset imports the kept nodes use (see extract_stream.c).
 */
#include "extract_stream_impl.h"
#include "ir_impl.h"
#include "sg_alloc.h"

#include <string.h>

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
sg_status sg__xs_check_multi(struct xs *x)
{
    for (uint32_t id = 1; id < x->n_names; id++)
        if ((x->names[id].flags & F_MULTI) && alive(x, id))
            return sg__xs_no(x, "a tensor has two value infos%s", NULL);
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
            sg__xs_release_below(x, from);
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

/* The new GraphProto's fields (its payload). */
static void emit_graph(struct xs *x, struct sink *k)
{
    const uint8_t *g0 = x->base + x->graph.off;
    struct wr r = {g0, g0 + x->graph.len, false};
    uint32_t f, node = 0;
    int t;
    sg__xs_release_all(x);
    x->n_inits_kept = 0;
    for (const uint8_t *start = r.p; wr_tag(&r, &f, &t); start = r.p) {
        bool keep = true;
        if (t == WT_LEN && (f == 1 || f == 5 || f == 11 || f == 12 || f == 13 || f == 14)) {
            struct wr m = wr_len(&r);
            uint32_t id = 0;
            if (f == 1) {
                keep = kept(x, node++);
            } else if (f == 5) {
                sg__xs_message_name(x, m, 8, &id, false, NULL);
                keep = id && (x->names[id].flags & (F_READ | F_NEWIN | F_OUT));
                x->n_inits_kept += keep;
            } else if (f == 11 || f == 12) {
                keep = false;
            } else if (f == 13) {
                sg__xs_message_name(x, m, 1, &id, false, NULL);
                keep = alive(x, id);
                if (keep && (x->names[id].flags & F_RETYPED)) {
                    put_entry(k, 13, x, id, retype_of(x, id), sg__xs_span_of(x, m));
                    keep = false;
                } else if (keep && (x->names[id].flags & F_RESOLVED)) {
                    struct retype rt = {x->dt[id], -1, NULL};
                    put_entry(k, 13, x, id, &rt, sg__xs_span_of(x, m));
                    keep = false;
                }
            } else {
                sg__xs_message_name(x, m, 1, &id, false, NULL);
                keep = alive(x, id);
            }
        } else {
            wr_skip(&r, t);
        }
        if (keep)
            put_file_bytes(k, x, start, r.p);
        sg__xs_release_below(x, r.p);
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
    const char *c = sg__xs_canon(d);
    if (!*c)
        return true;
    for (size_t i = 0; i < x->n_domains; i++)
        if (strcmp(x->domains[i], c) == 0)
            return true;
    return false;
}

/* The domains of the kept nodes. */
sg_status sg__xs_collect_domains(struct xs *x)
{
    struct xs_pass p = sg__xs_pass_begin(x, 1, 1);
    uint32_t f, node = 0;
    struct wr m;
    while (sg__xs_pass_next(x, &p, &f, &m)) {
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
            if (!sg__xs_span_str(x, sg__xs_span_of(x, wr_len(&m)), buf, sizeof buf))
                return sg__xs_no(x, "a domain name over 255 bytes%s", NULL);
            if (domain_used(x, buf))
                continue;
            if (x->n_domains == 64)
                return sg__xs_no(x, "more than 64 domains%s", NULL);
            if (!(x->domains[x->n_domains] = sg_strdup(sg__xs_canon(buf))))
                return sg__xs_no(x, "out of memory%s", NULL);
            x->n_domains++;
        }
    }
    /* As sg_model_extract: all imports stay when the kept nodes use none. */
    x->all_opsets = true;
    for (size_t i = 0; i < x->n_opsets && x->all_opsets; i++) {
        char buf[256];
        if (sg__xs_span_str(x, x->opset_domain[i], buf, sizeof buf) && domain_used(x, buf))
            x->all_opsets = false;
    }
    return SG_OK;
}

sg_status sg__xs_write_model(FILE *out, void *ctx)
{
    struct xs *x = ctx;
    struct sink count = {NULL, 0}, k = {out, 0};
    emit_graph(x, &count);
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
            emit_graph(x, &k);
            continue;
        }
        if (f == 8 && t == WT_LEN) {
            struct wr o = wr_len(&r);
            uint32_t of;
            int ot;
            char buf[256] = "";
            while (wr_tag(&o, &of, &ot)) {
                if (of == 1 && ot == WT_LEN)
                    sg__xs_span_str(x, sg__xs_span_of(x, wr_len(&o)), buf, sizeof buf);
                else
                    wr_skip(&o, ot);
            }
            keep = x->all_opsets || domain_used(x, buf);
        } else {
            wr_skip(&r, t);
        }
        if (keep)
            put(&k, start, (size_t)(r.p - start));
    }
    return ferror(out) ? SG_EIO : SG_OK;
}
