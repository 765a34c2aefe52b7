/*
 * compare.c - sg_compare_run: the whole comparison, top to bottom.
 *
 *   scan both dump folders                       (dumpset.c)
 *   read the map, check it against the model     (fusion_map.c)
 *   match: one row per tensor                    (below)
 *   metrics for every row with both sides        (metrics.c)
 *   sort rows into topological order
 *   analyse: verdict, first failing operator     (analysis.c)
 *
 * Matching. Without a map, a target file meets the golden file with the
 * same match key and output index (sg_dump_file.key: the node name as msit
 * writes it into file names), whichever form each is named in. With a map,
 * a target file is found by its op name; the op's output i is compared with
 * the golden output i of the LAST original node it covers (topological
 * order when a model is given, the map's order otherwise), unless the map's
 * output_desc names the original node and output. Golden tensors inside a
 * fused op that are not its compared output are listed as fused away; every
 * other tensor on one side only is listed as such, never dropped.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_arena.h"
#include "sg_dumpname.h"
#include "sg_npz.h"
#include "strmap.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_compare_opts_init(struct sg_compare_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->thresholds = (struct sg_thresholds)SG_THRESHOLDS_DEFAULT;
}

/* ------------------------------------------------------------- strings */

char *sg__cmp_printf(sg_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = sg_arena_alloc(a, (size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* Append "; " + text to a reason (NULL/"" start). */
static const char *add_reason(sg_arena *a, const char *old, const char *text)
{
    if (!text)
        return old;
    if (!old || !*old)
        return sg_arena_strdup(a, text);
    return sg__cmp_printf(a, "%s; %s", old, text);
}

/* The match key of a node name (msit's file-name form) into the arena. */
static char *key_of(sg_arena *a, const char *name)
{
    size_t len = strlen(name) + 1;
    char *k = sg_arena_alloc(a, len);
    if (k)
        sg_dump_sanitize(name, k, len);
    return k;
}

/* The device form of an op name ('/' as '_', as in device dump names). */
static char *device_key_of(sg_arena *a, const char *name)
{
    char *k = sg_arena_strdup(a, name);
    for (char *p = k; p && *p; p++)
        if (*p == '/')
            *p = '_';
    return k;
}

/* ----------------------------------------------------------- the model */

struct model_info {
    sg_graph *g;
    sg_node **order; /* topological order */
    uint32_t n;
    sg_dump_names *names; /* what dumps call each node (msit's names for unnamed ones) */
};

static sg_status model_info_init(struct model_info *mi, sg_model *m, sg_arena *arena,
                                 struct sg_diag *diag)
{
    memset(mi, 0, sizeof *mi);
    if (!m || !m->graph)
        return SG_OK;
    mi->g = m->graph;
    mi->n = m->graph->n_nodes;
    mi->order = sg_arena_calloc(arena, mi->n ? mi->n : 1, sizeof *mi->order);
    if (!mi->order)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_graph_toposort(mi->g, mi->order, diag);
    if (st)
        return st;
    if ((st = sg_dump_names_create(m, &mi->names, diag)))
        return st;
    for (uint32_t i = 0; i < mi->n; i++)
        mi->order[i]->mark = i; /* its position: rows and the analysis read it */
    return SG_OK;
}

static void model_info_free(struct model_info *mi)
{
    sg_dump_names_free(mi->names);
    mi->names = NULL;
}

/* --------------------------------------------------------------- rows */

struct builder {
    sg_compare_result *r;
    sg_arena *arena;
    struct model_info mi;
    size_t cap;
    struct sg__strmap used_golden; /* golden file path -> the file, once in a row */
    struct sg__strmap covered;     /* name of an original node -> op */
    struct sg__strmap covered_key; /* ... the name as a file spells it -> op */
    struct sg__strmap op_rows;     /* op name -> 1 when the op has a compared row */
    struct sg_diag *diag;
};

static struct sg_compare_row *new_row(struct builder *b)
{
    sg_compare_result *r = b->r;
    if (r->n_rows == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        void *grown = sg_realloc(r->rows, cap * sizeof *r->rows);
        if (!grown)
            return NULL;
        r->rows = grown;
        b->cap = cap;
    }
    struct sg_compare_row *row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    row->position = UINT32_MAX;
    row->target = "*";
    row->golden = "*";
    row->op_type = "NaN";
    row->reason = "";
    return row;
}

/* The node a dump names `key`: by the name dumps give it, else by the file
 * stem of that name (a dump that lost '.' and '/', as msit's do). */
static const sg_node *node_for_key(struct builder *b, const char *key)
{
    if (!b->mi.g)
        return NULL;
    const sg_node *n = sg_dump_names_node(b->mi.names, key);
    if (n)
        return n;
    char buf[1024];
    size_t len = strlen(key) + 1;
    char *k = len <= sizeof buf ? buf : sg_malloc(len);
    if (!k)
        return NULL;
    sg_dump_sanitize(key, k, len);
    n = sg_dump_names_by_stem(b->mi.names, k, false);
    if (k != buf)
        sg_free(k);
    return n;
}

/* The name dumps give node n (its own, or msit's for an unnamed node). */
static const char *node_name(struct builder *b, const sg_node *n)
{
    const char *name = sg_dump_names_of(b->mi.names, n);
    return name ? name : n->name ? n->name : "";
}

/* Whether file f may be node n's (without a model, any file may). */
static bool file_of(struct builder *b, const struct sg_dump_file *f, const sg_node *n)
{
    return !f || !b->mi.g || !n || node_for_key(b, f->key) == n;
}

/* Fill in what the golden side and the model say about a row. */
static sg_status set_golden(struct builder *b, struct sg_compare_row *row,
                            const struct sg_dump_file *gf, const sg_node *node)
{
    row->golden_file = gf;
    if (node && b->mi.g && node->graph != b->mi.g) {
        /* Inside an If/Loop/Scan body: in order where its main-graph
         * ancestor runs (the dump order puts it before that node's own
         * outputs), named by the execution dumped. */
        const sg_node *top = node;
        while (top->graph && top->graph != b->mi.g && top->graph->owner)
            top = top->graph->owner;
        row->body_node = node;
        row->position = top->graph == b->mi.g ? top->mark : UINT32_MAX;
        row->golden_node = gf ? gf->name : NULL;
        if (gf && sg__strmap_put(&b->used_golden, gf->path, (void *)gf))
            return sg_diag_set(b->diag, SG_ENOMEM, "out of memory");
        return SG_OK;
    }
    row->node = node;
    if (node) {
        row->position = node->mark;
        row->golden_node = sg_arena_strdup(b->arena, node_name(b, node));
        if (row->index < node->n_outputs && node->outputs[row->index])
            row->is_output = (node->outputs[row->index]->flags & SG_VALUE_OUTPUT) != 0;
    } else if (gf) {
        row->golden_node = gf->name;
    }
    if (gf && sg__strmap_put(&b->used_golden, gf->path, (void *)gf))
        return sg_diag_set(b->diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

/* Rows without a map: by match key and output index. */
static sg_status match_by_name(struct builder *b)
{
    sg_compare_result *r = b->r;
    struct sg__strmap used_target = {0};
    sg_status st = SG_OK;
    for (size_t i = 0; i < r->golden->n_files + r->golden->n_input_files; i++) {
        const struct sg_dump_file *gf = &r->golden->files[i];
        if (gf->input && !node_for_key(b, gf->key))
            continue; /* a node input, not a node called input_... */
        const sg_node *node = node_for_key(b, gf->key);
        const struct sg_dump_file *tf = sg_dumpset_find(r->target, gf->key, gf->index);
        if (!file_of(b, tf, node) || (tf && sg__strmap_get(&used_target, tf->path)))
            tf = NULL;
        struct sg_compare_row *row = new_row(b);
        if (!row)
            goto nomem;
        row->index = gf->index;
        if ((st = set_golden(b, row, gf, node)))
            goto out;
        row->golden = node ? row->golden_node : gf->name;
        if (!node && b->mi.g)
            row->reason = add_reason(b->arena, row->reason, "not a node of the model");
        if (node)
            row->op_type = sg_arena_strdup(b->arena, node->op_type);
        if (!tf) {
            row->status = SG_ROW_GOLDEN_ONLY;
            row->reason = add_reason(b->arena, row->reason, "no target dump");
            continue;
        }
        row->status = SG_ROW_COMPARED;
        row->target_file = tf;
        row->target = tf->device ? tf->name : row->golden;
        if (tf->device)
            row->op_type = tf->op_type;
        if (sg__strmap_put(&used_target, tf->path, (void *)tf))
            goto nomem;
    }
    for (size_t i = 0; i < r->target->n_files; i++) {
        const struct sg_dump_file *tf = &r->target->files[i];
        if (sg__strmap_get(&used_target, tf->path))
            continue;
        struct sg_compare_row *row = new_row(b);
        if (!row)
            goto nomem;
        row->status = SG_ROW_TARGET_ONLY;
        row->index = tf->index;
        row->target_file = tf;
        row->target = tf->name;
        const sg_node *node = node_for_key(b, tf->key);
        if ((st = set_golden(b, row, NULL, node)))
            goto out;
        row->op_type = tf->device ? tf->op_type
                       : node     ? sg_arena_strdup(b->arena, node->op_type)
                                  : "NaN";
        row->reason = add_reason(b->arena, row->reason, "no golden dump");
    }
    goto out;
nomem:
    st = sg_diag_set(b->diag, SG_ENOMEM, "out of memory");
out:
    sg__strmap_free(&used_target);
    return st;
}

/* The original node an op's output stands for: out_orig, else the last of
 * its original nodes in topological order (map order without a model). */
static const char *op_golden_node(struct builder *b, const struct sg_atc_op *op, size_t out,
                                  uint32_t *index)
{
    *index = (uint32_t)out;
    if (out < op->n_outputs && op->out_orig[out]) {
        if (op->out_index[out] >= 0)
            *index = (uint32_t)op->out_index[out];
        return op->out_orig[out];
    }
    if (op->n_orig == 0)
        return op->name;
    const char *best = op->orig[op->n_orig - 1];
    if (b->mi.g) {
        uint32_t best_pos = 0;
        bool found = false;
        for (size_t i = 0; i < op->n_orig; i++) {
            const sg_node *n = sg_dump_names_node(b->mi.names, op->orig[i]);
            if (n && (!found || n->mark >= best_pos)) {
                best = op->orig[i];
                best_pos = n->mark;
                found = true;
            }
        }
    }
    return best;
}

/* Every ONNX node a map names must be in the model. */
static sg_status check_map(struct builder *b, const char *model_label)
{
    const sg_atc_map *map = b->r->map;
    for (size_t i = 0; i < map->n_ops; i++) {
        const struct sg_atc_op *op = &map->ops[i];
        for (size_t k = 0; k < op->n_orig; k++)
            if (op->orig[k][0] && !sg_dump_names_node(b->mi.names, op->orig[k]))
                return sg_diag_set(b->diag, SG_EINVAL,
                                   "%s:%u: op '%s' (%s) names ONNX node '%s', which is not in %s: "
                                   "is this the map of another model?",
                                   map->doc->label, op->line, op->name, op->type, op->orig[k],
                                   model_label ? model_label : "the model");
        for (size_t k = 0; k < op->n_outputs; k++)
            if (op->out_orig[k] && !sg_dump_names_node(b->mi.names, op->out_orig[k]))
                return sg_diag_set(b->diag, SG_EINVAL,
                                   "%s:%u: op '%s' (%s) output %zu stands for ONNX node '%s', "
                                   "which is not in %s",
                                   map->doc->label, op->line, op->name, op->type, k,
                                   op->out_orig[k], model_label ? model_label : "the model");
    }
    return SG_OK;
}

static const char *join_orig(struct builder *b, const struct sg_atc_op *op)
{
    if (op->n_orig == 0)
        return op->name;
    size_t len = 1;
    for (size_t i = 0; i < op->n_orig; i++)
        len += strlen(op->orig[i]) + 1;
    char *s = sg_arena_alloc(b->arena, len);
    if (!s)
        return NULL;
    size_t pos = 0;
    for (size_t i = 0; i < op->n_orig; i++) {
        size_t l = strlen(op->orig[i]);
        if (i)
            s[pos++] = ',';
        memcpy(s + pos, op->orig[i], l);
        pos += l;
    }
    s[pos] = '\0';
    return s;
}

static sg_status match_by_map(struct builder *b)
{
    sg_compare_result *r = b->r;
    const sg_atc_map *map = r->map;
    struct sg__strmap by_name = {0}, by_dev = {0}, by_key = {0};
    sg_status st = SG_OK;
    for (size_t i = 0; i < map->n_ops; i++) {
        const struct sg_atc_op *op = &map->ops[i];
        char *dk = device_key_of(b->arena, op->name), *k = key_of(b->arena, op->name);
        if (!dk || !k)
            goto nomem;
        if (!sg__strmap_get(&by_name, op->name) && sg__strmap_put(&by_name, op->name, (void *)op))
            goto nomem;
        if (!sg__strmap_get(&by_dev, dk) && sg__strmap_put(&by_dev, dk, (void *)op))
            goto nomem;
        if (!sg__strmap_get(&by_key, k) && sg__strmap_put(&by_key, k, (void *)op))
            goto nomem;
        for (size_t o = 0; o < op->n_orig; o++) {
            char *ok = key_of(b->arena, op->orig[o]);
            if (!ok)
                goto nomem;
            if (!sg__strmap_get(&b->covered, op->orig[o]) &&
                sg__strmap_put(&b->covered, op->orig[o], (void *)op))
                goto nomem;
            if (!sg__strmap_get(&b->covered_key, ok) &&
                sg__strmap_put(&b->covered_key, ok, (void *)op))
                goto nomem;
        }
    }
    for (size_t i = 0; i < r->target->n_files; i++) {
        const struct sg_dump_file *tf = &r->target->files[i];
        /* The op by its exact name, else as a device or an ONNX file name
         * spells it. */
        char *dk = device_key_of(b->arena, tf->key), *k = key_of(b->arena, tf->key);
        if (!dk || !k)
            goto nomem;
        const struct sg_atc_op *op = sg__strmap_get(&by_name, tf->key);
        if (!op && tf->device)
            op = sg__strmap_get(&by_dev, dk);
        if (!op)
            op = sg__strmap_get(&by_key, k);
        struct sg_compare_row *row = new_row(b);
        if (!row)
            goto nomem;
        row->target_file = tf;
        row->target = tf->name;
        row->op_type = tf->op_type ? tf->op_type : "NaN";
        if (!op) {
            /* Not in the map: try the op name as an ONNX node name. */
            const struct sg_dump_file *gf = sg_dumpset_find(r->golden, tf->key, tf->index);
            const sg_node *node = node_for_key(b, tf->key);
            if (!file_of(b, gf, node))
                gf = NULL;
            row->index = tf->index;
            if (!node || node->graph == b->mi.g) /* a body's nodes are never in it */
                row->reason = add_reason(b->arena, row->reason, "op not in the map");
            if (gf && !sg__strmap_get(&b->used_golden, gf->path)) {
                row->status = SG_ROW_COMPARED;
                if ((st = set_golden(b, row, gf, node)))
                    goto out;
                row->golden = node ? row->golden_node : gf->name;
            } else {
                row->status = SG_ROW_TARGET_ONLY;
                if ((st = set_golden(b, row, NULL, node)))
                    goto out;
                row->reason = add_reason(b->arena, row->reason, "no golden dump");
            }
            if (!tf->op_type && node)
                row->op_type = sg_arena_strdup(b->arena, node->op_type);
            continue;
        }
        row->op = op;
        row->target = op->name;
        if (op->type[0])
            row->op_type = op->type;
        row->fused = op->n_orig > 1;
        if (!(row->golden = join_orig(b, op)))
            goto nomem;
        uint32_t gindex;
        const char *gname = op_golden_node(b, op, tf->index, &gindex);
        row->index = gindex;
        const sg_node *node = b->mi.g ? sg_dump_names_node(b->mi.names, gname) : NULL;
        const struct sg_dump_file *gf = sg_dumpset_find(r->golden, gname, gindex);
        if (!file_of(b, gf, node))
            gf = NULL;
        if (gf && sg__strmap_get(&b->used_golden, gf->path)) {
            row->status = SG_ROW_TARGET_ONLY;
            row->reason = add_reason(b->arena, row->reason,
                                     sg__cmp_printf(b->arena,
                                                    "golden output %" PRIu32
                                                    " of '%s' is compared in another row",
                                                    gindex, gname));
            gf = NULL;
        }
        if ((st = set_golden(b, row, gf, node)))
            goto out;
        if (!node)
            row->golden_node = sg_arena_strdup(b->arena, gname);
        if (!gf) {
            if (row->status != SG_ROW_TARGET_ONLY && op->n_orig == 0 && !node) {
                /* An op the compiler made (TransData, Cast, ...): msit's "*". */
                row->status = SG_ROW_TARGET_ONLY;
                row->golden = "*";
                row->golden_node = NULL;
                row->reason = add_reason(b->arena, row->reason,
                                         "no ONNX node behind this op of the compiled model");
            } else if (row->status != SG_ROW_TARGET_ONLY) {
                row->status = SG_ROW_TARGET_ONLY;
                row->reason = add_reason(
                    b->arena, row->reason,
                    sg__cmp_printf(b->arena, "no golden dump of output %" PRIu32 " of '%s'", gindex,
                                   gname));
            }
            continue;
        }
        row->status = SG_ROW_COMPARED;
        if (sg__strmap_put(&b->op_rows, op->name, (void *)op))
            goto nomem;
    }
    /* Golden tensors nobody compared: fused away, or on the golden side only. */
    for (size_t i = 0; i < r->golden->n_files + r->golden->n_input_files; i++) {
        const struct sg_dump_file *gf = &r->golden->files[i];
        if (sg__strmap_get(&b->used_golden, gf->path) || (gf->input && !node_for_key(b, gf->key)))
            continue;
        struct sg_compare_row *row = new_row(b);
        if (!row)
            goto nomem;
        row->index = gf->index;
        const sg_node *node = node_for_key(b, gf->key);
        if ((st = set_golden(b, row, gf, node)))
            goto out;
        row->golden = node ? row->golden_node : gf->name;
        if (node)
            row->op_type = sg_arena_strdup(b->arena, node->op_type);
        const struct sg_atc_op *op = sg__strmap_get(&b->covered, gf->key);
        if (!op) {
            char *k = key_of(b->arena, gf->key);
            if (!k)
                goto nomem;
            op = sg__strmap_get(&b->covered_key, k);
        }
        if (op && sg__strmap_get(&b->op_rows, op->name)) {
            row->status = SG_ROW_FUSED_AWAY;
            row->op = op;
            row->target = op->name;
            row->fused = op->n_orig > 1;
            row->reason = add_reason(
                b->arena, row->reason,
                sg__cmp_printf(b->arena, "inside fused op '%s': only its last output is dumped",
                               op->name));
        } else {
            row->status = SG_ROW_GOLDEN_ONLY;
            row->reason = add_reason(
                b->arena, row->reason,
                op ? sg__cmp_printf(b->arena, "no target dump of op '%s' that covers it", op->name)
                   : "no target dump and no op of the map covers it");
        }
    }
    goto out;
nomem:
    st = sg_diag_set(b->diag, SG_ENOMEM, "out of memory");
out:
    sg__strmap_free(&by_name);
    sg__strmap_free(&by_dev);
    sg__strmap_free(&by_key);
    return st;
}

/* ------------------------------------------------------------- metrics */

static void format_dims(const int64_t *dims, uint32_t rank, char *buf, size_t size)
{
    size_t pos = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < rank && pos < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (pos < size)
        snprintf(buf + pos, size - pos, "]");
}

/* Same shape once dims of 1 are dropped (a [1,4,16] dump meets a [4,16] one). */
static bool same_shape(const struct sg_array *a, const struct sg_array *b)
{
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < a->rank && a->dims[i] == 1)
            i++;
        while (j < b->rank && b->dims[j] == 1)
            j++;
        if (i == a->rank || j == b->rank)
            return i == a->rank && j == b->rank;
        if (a->dims[i++] != b->dims[j++])
            return false;
    }
}

static void mark_unreadable(struct builder *b, struct sg_compare_row *row, const struct sg_diag *d)
{
    row->status = SG_ROW_FAILED;
    row->unreadable = true;
    row->reason = add_reason(b->arena, row->reason, d->msg);
    b->r->analysis.n_unreadable++;
    if (b->r->first_unreadable.status == SG_OK)
        b->r->first_unreadable = *d;
}

/* Twice the error of rounding the golden values to the op's dtype: one
 * rounding of its inputs, one of its output. */
#define ROUNDING_SLACK 2.0

/* What rounding g to the row's compute dtype alone fails its tests by,
 * and whether the row's error is no larger (then it is the precision's,
 * not the op's). */
static sg_status rounding_of(struct builder *b, struct sg_compare_row *row,
                             const struct sg_array *g)
{
    struct sg_diag d = {0};
    const struct sg_thresholds *th = &b->r->thresholds;
    sg_status st = sg_metrics_rounding(g, row->compute_dtype, th->mre_floor, &row->rounding, &d);
    if (st == SG_ENOMEM)
        return sg_diag_set(b->diag, st, "%s", d.msg);
    if (st)
        return SG_OK; /* bool data and the like: no rounding to speak of */
    row->has_rounding = true;
    const struct sg_metrics *m = &row->m, *r = &row->rounding;
    bool within = true;
    if (row->crossed & SG_CROSSED_COSINE)
        within &= 1 - m->cosine <= ROUNDING_SLACK * (1 - r->cosine);
    if (row->crossed & SG_CROSSED_RED)
        within &= m->red <= ROUNDING_SLACK * r->red;
    if (row->crossed & SG_CROSSED_KL)
        within &= m->kl <= ROUNDING_SLACK * r->kl;
    if (row->crossed & SG_CROSSED_RMSE)
        within &= sg_metrics_rmse_tested(m, th) <= ROUNDING_SLACK * sg_metrics_rmse_tested(r, th);
    if (row->crossed & SG_CROSSED_MRE)
        within &= sg_metrics_mre_tested(m, th) <= ROUNDING_SLACK * sg_metrics_mre_tested(r, th);
    row->within_rounding = within;
    return SG_OK;
}

static sg_status compare_row(struct builder *b, struct sg_compare_row *row)
{
    struct sg_array t = {0}, g = {0};
    struct sg_diag d = {0};
    sg_status st = SG_OK;
    const struct sg_thresholds *th = &b->r->thresholds;
    if ((st = sg_dump_file_read(b->r->golden, row->golden_file, &g, &d))) {
        if (st == SG_ENOMEM)
            goto fail;
        mark_unreadable(b, row, &d);
        st = SG_OK;
        goto out;
    }
    row->golden_dtype = g.dtype;
    row->rank = g.rank;
    memcpy(row->dims, g.dims, g.rank * sizeof *g.dims);
    row->has_shape = true;
    if ((st = sg_dump_file_read(b->r->target, row->target_file, &t, &d))) {
        if (st == SG_ENOMEM)
            goto fail;
        mark_unreadable(b, row, &d);
        st = SG_OK;
        goto out;
    }
    row->target_dtype = t.dtype;
    row->compute_dtype = t.dtype;
    if (row->op && row->target_file->index < row->op->n_outputs &&
        row->op->out_dtype[row->target_file->index])
        row->compute_dtype = row->op->out_dtype[row->target_file->index];
    else if (row->body_node && b->r->map) {
        /* A body's nodes are not in the map: they ran in the precision of
         * the compiled op that holds the body (its first output's dtype). */
        const sg_node *top = row->body_node;
        while (top->graph && top->graph != b->mi.g && top->graph->owner)
            top = top->graph->owner;
        const struct sg_atc_op *op = sg__strmap_get(&b->covered, node_name(b, top));
        if (op && op->n_outputs && op->out_dtype[0])
            row->compute_dtype = op->out_dtype[0];
    }
    if (!same_shape(&t, &g)) {
        char a[512], c[512];
        format_dims(t.dims, t.rank, a, sizeof a);
        format_dims(g.dims, g.rank, c, sizeof c);
        row->status = SG_ROW_FAILED;
        row->mismatch = true;
        row->reason =
            add_reason(b->arena, row->reason,
                       sg__cmp_printf(b->arena, "shape mismatch: target %s, golden %s", a, c));
        goto out;
    }
    if ((st = sg_metrics_compute(&t, &g, &row->m, &d))) {
        if (st == SG_ENOMEM)
            goto fail;
        row->status = SG_ROW_FAILED;
        row->reason = add_reason(b->arena, row->reason, d.msg);
        st = SG_OK;
        goto out;
    }
    if (th->mre_floor > 0)
        row->m.mean_rel_floor = sg_metrics_mre_floor(&t, &g, th->mre_floor);
    row->crossed = sg_metrics_crossed(&row->m, th);
    row->is_error = row->crossed != 0;
    row->golden_nonfinite = row->m.golden_nonfinite;
    if (row->is_error && !row->m.overflow && (st = rounding_of(b, row, &g)))
        goto fail_status;
    unsigned tests = row->crossed & ~(unsigned)SG_CROSSED_OVERFLOW; /* said below */
    if (tests) {
        char text[512];
        sg_metrics_crossed_text(&row->m, th, tests, text, sizeof text);
        row->reason = add_reason(b->arena, row->reason, text);
        if (row->within_rounding)
            row->reason = add_reason(
                b->arena, row->reason,
                sg__cmp_printf(b->arena,
                               "within %s rounding (no more than twice what rounding the golden "
                               "values to %s fails by)",
                               sg_dtype_name(row->compute_dtype),
                               sg_dtype_name(row->compute_dtype)));
    }
    sg_array_count_nonfinite(&g, &row->golden_nan, NULL);
    const struct sg_metrics *m = &row->m;
    if (m->overflow)
        row->reason = add_reason(
            b->arena, row->reason,
            sg__cmp_printf(b->arena,
                           "overflow: %" PRIu64 " of %" PRIu64
                           " target values are NaN/Inf where the golden values are finite",
                           m->overflow, m->n));
    if (m->golden_nonfinite)
        row->reason = add_reason(
            b->arena, row->reason,
            sg__cmp_printf(b->arena, "golden has %" PRIu64 " NaN/Inf values", m->golden_nonfinite));
    if (m->flags & SG_METRIC_TARGET_ZERO)
        row->reason =
            add_reason(b->arena, row->reason, "target all zero: cosine similarity undefined");
    if (m->flags & SG_METRIC_GOLDEN_ZERO)
        row->reason =
            add_reason(b->arena, row->reason, "golden all zero: cosine similarity undefined");
    if (m->flags & SG_METRIC_BOOL)
        row->reason = add_reason(b->arena, row->reason,
                                 "bool data: only cosine similarity and relative Euclidean "
                                 "distance apply");
    if (m->flags & SG_METRIC_EMPTY)
        row->reason = add_reason(b->arena, row->reason, "empty tensor");
    goto out;
fail:
    sg_diag_set(b->diag, st, "%s", d.msg);
    goto out;
fail_status:
    /* rounding_of filled b->diag */
out:
    sg_array_free(&t);
    sg_array_free(&g);
    return st;
}

/* NaN/Inf elements of a golden file (none when it cannot be read: the
 * comparison goes on, it only looks for where the golden run broke). */
static sg_status count_golden_nonfinite(struct builder *b, struct sg_compare_row *row)
{
    struct sg_array g = {0};
    struct sg_diag d = {0};
    sg_status st = sg_dump_file_read(b->r->golden, row->golden_file, &g, &d);
    if (st)
        return st == SG_ENOMEM ? sg_diag_set(b->diag, st, "%s", d.msg) : SG_OK;
    uint64_t inf;
    sg_array_count_nonfinite(&g, &row->golden_nan, &inf);
    row->golden_nonfinite = row->golden_nan + inf;
    sg_array_free(&g);
    return SG_OK;
}

/* When a compared golden tensor holds NaN/Inf, the golden tensors of the
 * rows before it that were not compared (fused away, golden only) are read
 * too, up to the last network output holding NaN/Inf (without a model, the
 * first compared tensor): the analysis looks there for where the golden
 * run broke. Rows are sorted. */
static sg_status golden_nonfinite_before(struct builder *b)
{
    sg_compare_result *r = b->r;
    size_t end = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        if (row->status != SG_ROW_COMPARED || !row->golden_nonfinite)
            continue;
        if (row->is_output || (!b->mi.g && !end))
            end = i + 1;
    }
    for (size_t i = 0; i < end; i++) {
        struct sg_compare_row *row = &r->rows[i];
        if (row->status == SG_ROW_COMPARED || !row->golden_file)
            continue;
        sg_status st = count_golden_nonfinite(b, row);
        if (st)
            return st;
    }
    return SG_OK;
}

/* The dumps of one side: msit's names, else (with a model) files or .npz
 * members named by tensor. */
static sg_status scan_side(struct builder *b, const char *path, sg_dumpset **out,
                           struct sg_diag *diag)
{
    if (sg_npz_is_path(path))
        return sg_dumpset_scan_tensors(path, b->mi.g ? b->mi.g->model : NULL, b->mi.names, out,
                                       diag);
    sg_status st = sg_dumpset_scan(path, out, diag);
    if (st != SG_ENOTFOUND || !b->mi.g)
        return st;
    struct sg_diag d2 = {0};
    sg_status st2 = sg_dumpset_scan_tensors(path, b->mi.g->model, b->mi.names, out, &d2);
    if (st2 == SG_ENOTFOUND && strstr(diag->msg, "no .npy dump files"))
        return st; /* no .npy at all: say so */
    if (st2)
        *diag = d2;
    return st2;
}

/* Topological position; then dump order; one-sided rows without a place last. */
static int cmp_rows(const void *pa, const void *pb)
{
    const struct sg_compare_row *a = pa, *b = pb;
    if (a->position != b->position)
        return a->position < b->position ? -1 : 1;
    uint64_t ta = a->golden_file   ? a->golden_file->timestamp
                  : a->target_file ? a->target_file->timestamp
                                   : 0;
    uint64_t tb = b->golden_file   ? b->golden_file->timestamp
                  : b->target_file ? b->target_file->timestamp
                                   : 0;
    if (ta != tb)
        return ta < tb ? -1 : 1;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return strcmp(a->target, b->target);
}

sg_status sg_compare_run(const struct sg_compare_opts *opts, sg_compare_result **out,
                         struct sg_diag *diag)
{
    *out = NULL;
    if (!opts->golden_dir || !opts->target_dir)
        return sg_diag_set(diag, SG_EINVAL, "both a golden and a target dump folder are needed");
    sg_compare_result *r = sg_calloc(1, sizeof *r);
    sg_arena *arena = sg_arena_create();
    struct builder b = {.r = r, .arena = arena, .diag = diag};
    sg_status st = SG_OK;
    if (!r || !arena) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out_free;
    }
    r->arena = arena;
    r->thresholds = opts->thresholds;
    r->golden_dir = sg_arena_strdup(arena, opts->golden_dir);
    r->target_dir = sg_arena_strdup(arena, opts->target_dir);
    r->map_path = sg_arena_strdup(arena, opts->map_path);
    r->model_label = sg_arena_strdup(arena, opts->model_label);
    if (!r->golden_dir || !r->target_dir || (opts->map_path && !r->map_path) ||
        (opts->model_label && !r->model_label)) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out_free;
    }
    if ((st = model_info_init(&b.mi, opts->model, arena, diag)))
        goto out_free;
    if ((st = scan_side(&b, opts->golden_dir, &r->golden, diag)))
        goto out_free;
    if ((st = scan_side(&b, opts->target_dir, &r->target, diag)))
        goto out_free;
    if (opts->map_path && (st = sg_atc_map_read(opts->map_path, &r->map, diag)))
        goto out_free;
    if (r->map && b.mi.g && (st = check_map(&b, opts->model_label)))
        goto out_free;
    st = r->map ? match_by_map(&b) : match_by_name(&b);
    if (st)
        goto out_free;

    /* Without a model, dump order stands in for topological order. */
    if (!b.mi.g)
        for (size_t i = 0; i < r->n_rows; i++)
            if (r->rows[i].golden_file)
                r->rows[i].position = (uint32_t)(r->rows[i].golden_file - r->golden->files);

    size_t total = 0, done = 0;
    for (size_t i = 0; i < r->n_rows; i++)
        total += r->rows[i].status == SG_ROW_COMPARED;
    for (size_t i = 0; i < r->n_rows; i++) {
        struct sg_compare_row *row = &r->rows[i];
        if (row->status != SG_ROW_COMPARED)
            continue;
        if (opts->progress.fn)
            opts->progress.fn(opts->progress.ctx, done, total, row->target);
        if ((st = compare_row(&b, row)))
            goto out_free;
        done++;
    }
    if (opts->progress.fn)
        opts->progress.fn(opts->progress.ctx, done, total, NULL);
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        /* A NULL string here is an allocation that failed on the way. */
        if (!row->reason || !row->golden || !row->target || !row->op_type ||
            (row->node && !row->golden_node)) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            goto out_free;
        }
    }
    if (r->n_rows)
        qsort(r->rows, r->n_rows, sizeof *r->rows, cmp_rows);
    if ((st = golden_nonfinite_before(&b)))
        goto out_free;
    if ((st = sg__compare_analyse(r, b.mi.g, b.mi.order, b.mi.n, b.mi.names, diag)))
        goto out_free;
    model_info_free(&b.mi);
    sg__strmap_free(&b.used_golden);
    sg__strmap_free(&b.covered);
    sg__strmap_free(&b.covered_key);
    sg__strmap_free(&b.op_rows);
    *out = r;
    return SG_OK;
out_free:
    model_info_free(&b.mi);
    sg__strmap_free(&b.used_golden);
    sg__strmap_free(&b.covered);
    sg__strmap_free(&b.covered_key);
    sg__strmap_free(&b.op_rows);
    sg_compare_result_free(r);
    if (!r)
        sg_arena_free(arena);
    return st;
}

void sg_compare_result_free(sg_compare_result *r)
{
    if (!r)
        return;
    sg_dumpset_free(r->golden);
    sg_dumpset_free(r->target);
    sg_atc_map_free(r->map);
    sg_free(r->rows);
    sg_arena_free(r->arena);
    sg_free(r);
}

const char *sg_compare_status_name(enum sg_compare_status s)
{
    static const char *const names[SG_ROW_STATUS_COUNT] = {"compared", "golden only", "target only",
                                                           "fused away", "failed"};
    return (unsigned)s < SG_ROW_STATUS_COUNT ? names[s] : "?";
}

const char *sg_verdict_name(enum sg_verdict v)
{
    static const char *const names[SG_VERDICT_COUNT] = {"PASS", "FAIL", "UNKNOWN",
                                                        "GOLDEN_NOT_FINITE"};
    return (unsigned)v < SG_VERDICT_COUNT ? names[v] : "?";
}

const char *sg_cause_name(enum sg_cause c)
{
    static const char *const names[SG_CAUSE_COUNT] = {"none", "overflow",          "fused op",
                                                      "jump", "accumulated error", "precision"};
    return (unsigned)c < SG_CAUSE_COUNT ? names[c] : "?";
}

const char *sg_input_state_name(enum sg_input_state s)
{
    static const char *const names[SG_INPUT_STATE_COUNT] = {"dumped, agrees",
                                                            "constant (initializer or Constant)",
                                                            "not dumped (upstream agrees)",
                                                            "in error",
                                                            "graph input",
                                                            "within the target's rounding"};
    return (unsigned)s < SG_INPUT_STATE_COUNT ? names[s] : "?";
}
