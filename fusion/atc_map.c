/*
 * atc_map.c - switching off the fusion passes behind chosen ONNX nodes, from
 * the compiled-op map of an `atc --mode=1` JSON (graph/sg_atcmap.h).
 */
#include "sg_fusion.h"

#include "sg_alloc.h"

#include <string.h>

/* The passes found behind the nodes so far (names point into the map). */
struct found {
    const char **names;
    enum sg_fusion_kind *kinds;
    size_t n, cap;
};

/* Switch `name` off in section `kind` (an explicit entry that is off
 * already stays as it is) and remember it once. */
static sg_status switch_off(sg_fusion_switch *sw, struct found *f, enum sg_fusion_kind kind,
                            const char *name, const struct sg_atc_op *op, struct sg_diag *diag)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->kinds[i] == kind && strcmp(f->names[i], name) == 0)
            return SG_OK;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        const char **names = sg_realloc(f->names, cap * sizeof *names);
        if (!names)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        f->names = names;
        enum sg_fusion_kind *kinds = sg_realloc(f->kinds, cap * sizeof *kinds);
        if (!kinds)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        f->kinds = kinds;
        f->cap = cap;
    }
    bool already = false;
    for (size_t i = 0; i < sw->n_entries; i++) {
        const struct sg_fusion_switch_entry *e = &sw->entries[i];
        if (!e->any_kind && e->kind == kind && !e->on && strcmp(e->name, name) == 0)
            already = true;
    }
    sg_status st = already ? SG_OK : sg_fusion_switch_set(sw, kind, name, false, diag);
    if (st) {
        sg_diag_prefix(diag, "pass of op \"%s\"", op->name);
        return st;
    }
    f->names[f->n] = name;
    f->kinds[f->n++] = kind;
    return SG_OK;
}

sg_status sg_fusion_switch_off_for_nodes(sg_fusion_switch *sw, const sg_atc_map *map,
                                         const char *const *nodes, size_t n_nodes, bool *uncovered,
                                         size_t *n_off, struct sg_diag *diag)
{
    struct found f = {0};
    sg_status st = SG_OK;
    for (size_t i = 0; i < n_nodes; i++) {
        bool covered = false;
        for (size_t k = 0; k < map->n_ops; k++) {
            const struct sg_atc_op *op = &map->ops[k];
            if (!sg_atc_op_covers(op, nodes[i]))
                continue;
            covered = true;
            for (size_t p = 0; p < op->n_passes; p++)
                if (*op->passes[p] &&
                    (st = switch_off(sw, &f, SG_FUSION_GRAPH, op->passes[p], op, diag)))
                    goto out;
            if (op->ub_pass && (st = switch_off(sw, &f, SG_FUSION_UB, op->ub_pass, op, diag)))
                goto out;
        }
        if (uncovered)
            uncovered[i] = !covered;
    }
    if (n_off)
        *n_off = f.n;
out:
    sg_free(f.names);
    sg_free(f.kinds);
    return st;
}
