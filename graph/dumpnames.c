/*
 * dumpnames.c - which name and file stem each node's dumps carry
 * (sg_dump_names, see sg_dumpname.h): msit's names for unnamed nodes, and
 * stems made unique where names spell alike in a file name.
 *
 * One table serves the writer (runtime/dump.c), the mock compiler (which
 * names unnamed nodes before it fuses them) and the comparison (which finds
 * nodes by these names), so that they cannot disagree.
 */
#include "sg_alloc.h"
#include "sg_arena.h"
#include "sg_dumpname.h"
#include "strmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct entry {
    const sg_node *node;
    const char *name;    /* a body node's: the template, its iteration slots empty */
    const char *stem[2]; /* ONNX form, device form */
    bool listed[2];
    uint32_t n_slots; /* iteration slots (enclosing Loop/Scan/SequenceMap bodies) */
    uint32_t *slot;   /* their offsets in name and stems, outermost first */
};

struct sg_dump_names {
    sg_arena *arena;
    struct entry *e;
    size_t n;
    size_t *slots; /* node pointer -> entry index + 1 (0: empty), open addressing */
    size_t cap;    /* power of two, at least 2n */
    struct sg__strmap by_name;
    struct sg__strmap by_stem[2];
};

static size_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static const struct entry *find(const sg_dump_names *t, const sg_node *n)
{
    if (!t || !t->cap)
        return NULL;
    for (size_t i = ptr_hash(n) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        size_t k = t->slots[i];
        if (!k)
            return NULL;
        if (t->e[k - 1].node == n)
            return &t->e[k - 1];
    }
}

/* msit's name for the unnamed node at position i: <OpType>_<i>, or with
 * _<k> (k from *next, 999 at first) while that is taken. */
static const char *unnamed(sg_dump_names *t, const struct sg__strmap *taken, const sg_node *n,
                           size_t i, unsigned *next)
{
    const char *op = n->op_type && *n->op_type ? n->op_type : "Node";
    size_t len = strlen(op) + 48;
    char *s = sg_arena_alloc(t->arena, len);
    if (!s)
        return NULL;
    snprintf(s, len, "%s_%zu", op, i);
    if (!sg__strmap_get(taken, s))
        return s;
    char *u = sg_arena_alloc(t->arena, len + 16);
    if (!u)
        return NULL;
    do
        snprintf(u, len + 16, "%s_%u", s, (*next)++);
    while (sg__strmap_get(taken, u));
    return u;
}

/* The name as file names spell it: ONNX form '.' and '/' as '_', device
 * form '/' as '_'. */
static char *spelled(sg_arena *a, const char *name, int form)
{
    size_t len = strlen(name);
    char *s = sg_arena_alloc(a, len + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i <= len; i++)
        s[i] = name[i] == '/' || (form == 0 && name[i] == '.') ? '_' : name[i];
    return s;
}

/* Unique stems of one form: the first claimant of a spelling keeps it,
 * the others take the first free "<stem>_<k>". */
static sg_status make_stems(sg_dump_names *t, int form)
{
    struct sg__strmap *taken = &t->by_stem[form];
    char **plain = sg_calloc(t->n + 1, sizeof *plain);
    if (!plain)
        return SG_ENOMEM;
    sg_status st = SG_OK;
    for (size_t i = 0; i < t->n && !st; i++) {
        if (!(plain[i] = spelled(t->arena, t->e[i].name, form))) {
            st = SG_ENOMEM;
            break;
        }
        if (!sg__strmap_get(taken, plain[i])) {
            t->e[i].stem[form] = plain[i];
            t->e[i].listed[form] = strcmp(plain[i], t->e[i].name) != 0;
            st = sg__strmap_put(taken, plain[i], (void *)t->e[i].node);
        }
    }
    for (size_t i = 0; i < t->n && !st; i++) {
        struct entry *e = &t->e[i];
        if (e->stem[form])
            continue;
        size_t len = strlen(plain[i]) + 24;
        char *s = sg_arena_alloc(t->arena, len);
        if (!s) {
            st = SG_ENOMEM;
            break;
        }
        for (unsigned k = 1;; k++) {
            snprintf(s, len, "%s_%u", plain[i], k);
            if (!sg__strmap_get(taken, s))
                break;
        }
        e->stem[form] = s;
        e->listed[form] = true;
        st = sg__strmap_put(taken, s, (void *)e->node);
    }
    sg_free(plain);
    return st;
}

/* Whether the bodies of n are dumped (and named): those of the control-flow
 * ops the runtime runs, not those of other ops (a mock OM's fused ops hide
 * their inner nodes as the compiled op does). *iterates: Loop, Scan and
 * SequenceMap run theirs once per iteration. */
static bool dumps_bodies(const sg_node *n, bool *iterates)
{
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return false;
    *iterates = strcmp(n->op_type, "Loop") == 0 || strcmp(n->op_type, "Scan") == 0 ||
                strcmp(n->op_type, "SequenceMap") == 0;
    return *iterates || strcmp(n->op_type, "If") == 0;
}

/* Room for one more entry (entries and the pointer slots grow together). */
static sg_status reserve_entry(sg_dump_names *t, size_t *cap_e)
{
    if (t->n + 1 > *cap_e) {
        size_t cap = *cap_e * 2 + 16;
        struct entry *grown = sg_realloc(t->e, cap * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        t->e = grown;
        *cap_e = cap;
    }
    if (2 * (t->n + 1) + 2 > t->cap) {
        size_t cap = t->cap ? t->cap : 16;
        while (cap < 2 * (t->n + 1) + 2)
            cap *= 2;
        cap *= 2;
        size_t *slots = sg_calloc(cap, sizeof *slots);
        if (!slots)
            return SG_ENOMEM;
        for (size_t k = 0; k < t->n; k++) {
            size_t i = ptr_hash(t->e[k].node) & (cap - 1);
            while (slots[i])
                i = (i + 1) & (cap - 1);
            slots[i] = k + 1;
        }
        sg_free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    return SG_OK;
}

struct scope {
    const char *prefix; /* "<owner>::<attribute>::" ("" for the main graph) */
    uint32_t n_slots;
    const uint32_t *slot;
};

/* Name the nodes of graph g (and of the bodies they run, depth first):
 * locally as the main graph's nodes are named (msit's <OpType>_<i> for an
 * unnamed one, unique among g's nodes), under the scope's prefix. */
static sg_status name_graph(sg_dump_names *t, size_t *cap_e, const sg_graph *g,
                            const struct scope *sc, int depth)
{
    if (depth > 64)
        return SG_OK; /* the loader bounds nesting far below this */
    struct sg__strmap local = {0}, *taken = sc->prefix[0] ? &local : &t->by_name;
    sg_status st = SG_OK;
    /* Named nodes first: an unnamed node's name must not take theirs. */
    for (const sg_node *n = g->first; n && !st; n = n->next)
        if (n->name && *n->name && !sg__strmap_get(taken, n->name))
            st = sg__strmap_put(taken, n->name, (void *)n);
    unsigned next = 999;
    size_t pos = 0, first = t->n;
    for (const sg_node *n = g->first; n && !st; n = n->next, pos++) {
        if ((st = reserve_entry(t, cap_e)))
            break;
        struct entry *e = &t->e[t->n];
        memset(e, 0, sizeof *e);
        e->node = n;
        const char *own = n->name && *n->name ? n->name : NULL;
        if (!own &&
            (!(own = unnamed(t, taken, n, pos, &next)) || sg__strmap_put(taken, own, (void *)n))) {
            st = SG_ENOMEM;
            break;
        }
        if (sc->prefix[0]) {
            size_t pl = strlen(sc->prefix), ol = strlen(own);
            char *full = sg_arena_alloc(t->arena, pl + ol + 1);
            if (!full) {
                st = SG_ENOMEM;
                break;
            }
            memcpy(full, sc->prefix, pl);
            memcpy(full + pl, own, ol + 1);
            e->name = full;
            e->n_slots = sc->n_slots;
            e->slot = (uint32_t *)sc->slot;
            if (!sg__strmap_get(&t->by_name, full) &&
                (st = sg__strmap_put(&t->by_name, full, (void *)n)))
                break;
        } else {
            e->name = own;
        }
        size_t i = ptr_hash(n) & (t->cap - 1);
        while (t->slots[i])
            i = (i + 1) & (t->cap - 1);
        t->slots[i] = ++t->n;
    }
    sg__strmap_free(&local);
    /* The bodies, once every node of g has its name. */
    size_t end = t->n;
    for (size_t k = first; k < end && !st; k++) {
        const sg_node *n = t->e[k].node;
        bool iterates;
        if (n->graph != g || !dumps_bodies(n, &iterates))
            continue;
        const char *owner = t->e[k].name;
        for (uint32_t a = 0; a < n->n_attrs && !st; a++) {
            const sg_attr *at = n->attrs[a];
            size_t ng = at->g ? 1 : at->n_graphs;
            for (size_t q = 0; q < ng && !st; q++) {
                const sg_graph *body = at->g ? at->g : at->graphs[q];
                if (!body)
                    continue;
                const char *an = at->name ? at->name : "";
                size_t len = strlen(owner) + strlen(an) + 32;
                char *prefix = sg_arena_alloc(t->arena, len);
                uint32_t *slot = sg_arena_alloc(t->arena, (sc->n_slots + 1) * sizeof *slot);
                if (!prefix || !slot) {
                    st = SG_ENOMEM;
                    break;
                }
                int w = at->g ? snprintf(prefix, len, "%s::%s", owner, an)
                              : snprintf(prefix, len, "%s::%s%zu", owner, an, q);
                if (sc->n_slots)
                    memcpy(slot, sc->slot, sc->n_slots * sizeof *slot);
                struct scope inner = {prefix, sc->n_slots, slot};
                if (iterates)
                    slot[inner.n_slots++] = (uint32_t)w; /* "[i]" goes after the attribute */
                snprintf(prefix + w, len - (size_t)w, "::");
                st = name_graph(t, cap_e, body, &inner, depth + 1);
            }
        }
    }
    return st;
}

sg_status sg_dump_names_create(const sg_model *m, sg_dump_names **out, struct sg_diag *diag)
{
    *out = NULL;
    if (!m || !m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    sg_dump_names *t = sg_calloc(1, sizeof *t);
    if (!t)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    size_t cap_e = 0;
    sg_status st = SG_OK;
    struct scope main_scope = {"", 0, NULL};
    if (!(t->arena = sg_arena_create()) || name_graph(t, &cap_e, m->graph, &main_scope, 0) ||
        reserve_entry(t, &cap_e) || make_stems(t, 0) || make_stems(t, 1))
        goto nomem;
    *out = t;
    return SG_OK;
nomem:
    st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_dump_names_free(t);
    return st;
}

void sg_dump_names_free(sg_dump_names *t)
{
    if (!t)
        return;
    sg__strmap_free(&t->by_name);
    sg__strmap_free(&t->by_stem[0]);
    sg__strmap_free(&t->by_stem[1]);
    sg_free(t->slots);
    sg_free(t->e);
    sg_arena_free(t->arena);
    sg_free(t);
}

const char *sg_dump_names_of(const sg_dump_names *t, const sg_node *n)
{
    const struct entry *e = find(t, n);
    return e ? e->name : NULL;
}

const char *sg_dump_names_stem(const sg_dump_names *t, const sg_node *n, bool device, bool *listed)
{
    const struct entry *e = find(t, n);
    if (listed)
        *listed = e && e->listed[device];
    return e ? e->stem[device] : NULL;
}

/* name without its iteration numbers ("[<digits>]" right before "::"),
 * into buf; false when it has none or does not fit. */
static bool strip_iterations(const char *name, char *buf, size_t size)
{
    size_t o = 0;
    bool any = false;
    for (const char *p = name; *p;) {
        if (*p == '[') {
            const char *q = p + 1;
            while (*q >= '0' && *q <= '9')
                q++;
            if (q > p + 1 && q[0] == ']' && q[1] == ':' && q[2] == ':') {
                p = q + 1;
                any = true;
                continue;
            }
        }
        if (o + 1 >= size)
            return false;
        buf[o++] = *p++;
    }
    buf[o] = '\0';
    return any;
}

/* Look `key` up in map m as it is, else without its iteration numbers. */
static sg_node *lookup_name(const struct sg__strmap *m, const char *key)
{
    sg_node *n = sg__strmap_get(m, key);
    if (n || !strchr(key, '['))
        return n;
    size_t len = strlen(key) + 1;
    char buf[1024], *b = len <= sizeof buf ? buf : sg_malloc(len);
    if (!b)
        return NULL;
    if (strip_iterations(key, b, len))
        n = sg__strmap_get(m, b);
    if (b != buf)
        sg_free(b);
    return n;
}

sg_node *sg_dump_names_node(const sg_dump_names *t, const char *name)
{
    return t && name ? lookup_name(&t->by_name, name) : NULL;
}

sg_node *sg_dump_names_by_stem(const sg_dump_names *t, const char *stem, bool device)
{
    return t && stem ? lookup_name(&t->by_stem[device], stem) : NULL;
}

uint32_t sg_dump_names_slots(const sg_dump_names *t, const sg_node *n)
{
    const struct entry *e = find(t, n);
    return e ? e->n_slots : 0;
}

/* s with "[iters[k]]" inserted at offset slot[k] for each k, into buf. */
static bool with_iterations(const char *s, const uint32_t *slot, uint32_t n_slots,
                            const uint64_t *iters, char *buf, size_t size)
{
    size_t o = 0, from = 0, len = strlen(s);
    for (uint32_t k = 0; k <= n_slots; k++) {
        size_t to = k < n_slots ? slot[k] : len;
        if (to > len || to < from || o + (to - from) >= size)
            return false;
        memcpy(buf + o, s + from, to - from);
        o += to - from;
        from = to;
        if (k < n_slots) {
            int w = snprintf(buf + o, size - o, "[%" PRIu64 "]", iters[k]);
            if (w < 0 || (size_t)w >= size - o)
                return false;
            o += (size_t)w;
        }
    }
    buf[o] = '\0';
    return true;
}

bool sg_dump_names_instance(const sg_dump_names *t, const sg_node *n, const uint64_t *iters,
                            bool device, char *name, size_t name_size, char *stem, size_t stem_size,
                            bool *listed)
{
    const struct entry *e = find(t, n);
    if (!e)
        return false;
    if (listed)
        *listed = e->listed[device];
    return with_iterations(e->name, e->slot, e->n_slots, iters, name, name_size) &&
           with_iterations(e->stem[device], e->slot, e->n_slots, iters, stem, stem_size);
}
