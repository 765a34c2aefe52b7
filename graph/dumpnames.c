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
    const char *name;
    const char *stem[2]; /* ONNX form, device form */
    bool listed[2];
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
static const char *unnamed(sg_dump_names *t, const sg_node *n, size_t i, unsigned *next)
{
    const char *op = n->op_type && *n->op_type ? n->op_type : "Node";
    size_t len = strlen(op) + 48;
    char *s = sg_arena_alloc(t->arena, len);
    if (!s)
        return NULL;
    snprintf(s, len, "%s_%zu", op, i);
    if (!sg__strmap_get(&t->by_name, s))
        return s;
    char *u = sg_arena_alloc(t->arena, len + 16);
    if (!u)
        return NULL;
    do
        snprintf(u, len + 16, "%s_%u", s, (*next)++);
    while (sg__strmap_get(&t->by_name, u));
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

sg_status sg_dump_names_create(const sg_model *m, sg_dump_names **out, struct sg_diag *diag)
{
    *out = NULL;
    if (!m || !m->graph)
        return sg_diag_set(diag, SG_EINVAL, "the model has no graph");
    const sg_graph *g = m->graph;
    sg_dump_names *t = sg_calloc(1, sizeof *t);
    if (!t)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    t->arena = sg_arena_create();
    t->e = sg_calloc(g->n_nodes + 1, sizeof *t->e);
    t->cap = 16;
    while (t->cap < 2 * (size_t)g->n_nodes + 2)
        t->cap *= 2;
    t->slots = sg_calloc(t->cap, sizeof *t->slots);
    sg_status st = SG_OK;
    if (!t->arena || !t->e || !t->slots)
        goto nomem;
    /* Named nodes first: an unnamed node's name must not take theirs. */
    for (const sg_node *n = g->first; n; n = n->next)
        if (n->name && *n->name && !sg__strmap_get(&t->by_name, n->name) &&
            sg__strmap_put(&t->by_name, n->name, (void *)n))
            goto nomem;
    unsigned next = 999;
    size_t pos = 0;
    for (const sg_node *n = g->first; n; n = n->next, pos++) {
        struct entry *e = &t->e[t->n];
        e->node = n;
        if (n->name && *n->name) {
            e->name = n->name;
        } else {
            if (!(e->name = unnamed(t, n, pos, &next)) ||
                sg__strmap_put(&t->by_name, e->name, (void *)n))
                goto nomem;
        }
        size_t i = ptr_hash(n) & (t->cap - 1);
        while (t->slots[i])
            i = (i + 1) & (t->cap - 1);
        t->slots[i] = ++t->n;
    }
    if (make_stems(t, 0) || make_stems(t, 1))
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

sg_node *sg_dump_names_node(const sg_dump_names *t, const char *name)
{
    return t && name ? sg__strmap_get(&t->by_name, name) : NULL;
}

sg_node *sg_dump_names_by_stem(const sg_dump_names *t, const char *stem, bool device)
{
    return t && stem ? sg__strmap_get(&t->by_stem[device], stem) : NULL;
}
