/*
 * mock_map.c - the `atc --mode=1` style JSON of a mock OM (see sg_mock.h):
 * what each compiled op covers and which fusion passes made it, in the form
 * fusion/'s sg_atc_map_parse and the comparison engine read for real OMs.
 */
#include "mock_impl.h"

#include "sg_alloc.h"
#include "sg_atcmap.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ATC's dtype names (GE's DT_*): the map's table. */
static const char *dt_name(int32_t dtype)
{
    return sg_atc_dtype_name(dtype);
}

static void string_attr(struct sg_json *j, const char *key, const sg_bytes *s)
{
    sg_json_object_begin(j);
    sg_json_key(j, "key");
    sg_json_string(j, key);
    sg_json_key(j, "value");
    sg_json_object_begin(j);
    sg_json_key(j, "s");
    sg_json_string_n(j, (const char *)s->data, s->len);
    sg_json_object_end(j);
    sg_json_object_end(j);
}

/* {"key": key, "value": {"list": {"s": [...]}}} from a strings attribute, or
 * the one string `self` when the node has none. */
static void list_attr(struct sg_json *j, const char *key, const sg_attr *a, const char *self)
{
    sg_json_object_begin(j);
    sg_json_key(j, "key");
    sg_json_string(j, key);
    sg_json_key(j, "value");
    sg_json_object_begin(j);
    sg_json_key(j, "list");
    sg_json_object_begin(j);
    sg_json_key(j, "s");
    sg_json_array_begin(j);
    if (a && a->type == SG_ATTR_STRINGS)
        for (size_t i = 0; i < a->n_strings; i++)
            sg_json_string_n(j, (const char *)a->strings[i].data, a->strings[i].len);
    else if (self)
        sg_json_string(j, self);
    sg_json_array_end(j);
    sg_json_object_end(j);
    sg_json_object_end(j);
    sg_json_object_end(j);
}

static void shape_of(struct sg_json *j, const sg_value *v)
{
    const sg_type *t = v->type;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape)
        return;
    sg_json_key(j, "shape");
    sg_json_object_begin(j);
    sg_json_key(j, "dim");
    sg_json_array_begin(j);
    for (uint32_t d = 0; d < t->shape->rank; d++)
        sg_json_int(j, t->shape->dims[d].kind == SG_DIM_VALUE ? t->shape->dims[d].value : -1);
    sg_json_array_end(j);
    sg_json_object_end(j);
}

static void data_op(struct sg_json *j, const sg_value *v)
{
    sg_json_object_begin(j);
    sg_json_key(j, "name");
    sg_json_string(j, v->name);
    sg_json_key(j, "type");
    sg_json_string(j, "Data");
    sg_json_key(j, "input");
    sg_json_array_begin(j);
    sg_json_array_end(j);
    sg_json_key(j, "attr");
    sg_json_array_begin(j);
    sg_json_array_end(j);
    sg_json_key(j, "output_desc");
    sg_json_array_begin(j);
    sg_json_object_begin(j);
    sg_json_key(j, "dtype");
    sg_json_string(j, dt_name(sg_value_dtype(v)));
    shape_of(j, v);
    sg_json_object_end(j);
    sg_json_array_end(j);
    sg_json_object_end(j);
}

static void node_op(struct sg_json *j, const sg_node *n)
{
    char type[128], ref[1200];
    sg_json_object_begin(j);
    sg_json_key(j, "name");
    sg_json_string(j, n->name);
    sg_json_key(j, "type");
    sg_json_string(j, sg_mockom_op_type(n, type, sizeof type));
    sg_json_key(j, "input");
    sg_json_array_begin(j);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const sg_value *v = n->inputs[i];
        if (!v)
            snprintf(ref, sizeof ref, "%s", "");
        else if (v->producer)
            snprintf(ref, sizeof ref, "%s:%u", v->producer->name, v->producer_index);
        else
            snprintf(ref, sizeof ref, "%s:0", v->name);
        sg_json_string(j, ref);
    }
    sg_json_array_end(j);

    sg_json_key(j, "attr");
    sg_json_array_begin(j);
    const sg_attr *orig = sg_node_attr(n, SG_MOCKOM_ATTR_ORIGINAL);
    list_attr(j, SG_MOCKOM_ATTR_ORIGINAL, orig, n->name);
    const sg_attr *passes = sg_node_attr(n, SG_MOCKOM_ATTR_PASS);
    if (passes && passes->type == SG_ATTR_STRINGS && passes->n_strings)
        list_attr(j, SG_MOCKOM_ATTR_PASS, passes, NULL);
    static const char *const strings[] = {SG_MOCKOM_ATTR_PASS_UB, SG_MOCKOM_ATTR_INPUT_DTYPE,
                                          SG_MOCKOM_ATTR_OUTPUT_DTYPE};
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) {
        const sg_attr *a = sg_node_attr(n, strings[k]);
        if (a && a->type == SG_ATTR_STRING)
            string_attr(j, strings[k], &a->s);
    }
    sg_json_array_end(j);

    /* Which original output each output stands for: a fused op's one
     * output is the last original node's (patterns end in their output). */
    const char *origin = n->name;
    size_t origin_len = strlen(n->name);
    if (orig && orig->type == SG_ATTR_STRINGS && orig->n_strings) {
        origin = (const char *)orig->strings[orig->n_strings - 1].data;
        origin_len = orig->strings[orig->n_strings - 1].len;
    }
    bool fp16_out = sg_mockom_node_fp16(n) & SG_MOCKOM_FP16_OUT;
    sg_json_key(j, "output_desc");
    sg_json_array_begin(j);
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        const sg_value *v = n->outputs[i];
        sg_json_object_begin(j);
        if (v) {
            sg_json_key(j, "name");
            sg_json_string(j, v->name);
            int32_t dt = sg_value_dtype(v);
            sg_json_key(j, "dtype");
            sg_json_string(j, dt_name(fp16_out && dt == SG_DTYPE_FLOAT ? SG_DTYPE_FLOAT16 : dt));
            shape_of(j, v);
        }
        sg_json_key(j, "attr");
        sg_json_array_begin(j);
        sg_json_object_begin(j);
        sg_json_key(j, "key");
        sg_json_string(j, "_datadump_origin_name");
        sg_json_key(j, "value");
        sg_json_object_begin(j);
        sg_json_key(j, "s");
        sg_json_string_n(j, origin, origin_len);
        sg_json_object_end(j);
        sg_json_object_end(j);
        sg_json_object_begin(j);
        sg_json_key(j, "key");
        sg_json_string(j, "_datadump_origin_output_index");
        sg_json_key(j, "value");
        sg_json_object_begin(j);
        sg_json_key(j, "i");
        sg_json_int(j, orig && orig->n_strings ? 0 : i);
        sg_json_object_end(j);
        sg_json_object_end(j);
        sg_json_array_end(j);
        sg_json_object_end(j);
    }
    sg_json_array_end(j);
    sg_json_object_end(j);
}

sg_status sg_mock_map_print(sg_model *om, FILE *out, struct sg_diag *diag)
{
    sg_status st = sg_mockom_check(om, diag);
    if (st)
        return st;
    sg_graph *g = om->graph;
    sg_node **order = sg_malloc((g->n_nodes + 1) * sizeof *order);
    if (!order)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    if ((st = sg_graph_toposort(g, order, diag))) {
        sg_free(order);
        return st;
    }
    struct sg_json j;
    sg_json_init(&j, out, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "graph");
    sg_json_array_begin(&j);
    sg_json_object_begin(&j);
    sg_json_key(&j, "name");
    sg_json_string(&j, g->name ? g->name : "");
    sg_json_key(&j, "op");
    sg_json_array_begin(&j);
    for (uint32_t i = 0; i < g->n_inputs; i++)
        if (!g->inputs[i]->init)
            data_op(&j, g->inputs[i]);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        node_op(&j, order[i]);
    sg_json_array_end(&j);
    sg_json_object_end(&j);
    sg_json_array_end(&j);
    sg_json_object_end(&j);
    fputc('\n', out);
    sg_free(order);
    return ferror(out) ? sg_diag_set(diag, SG_EIO, "write error: %s", strerror(errno ? errno : EIO))
                       : SG_OK;
}

/* Write the map of om to a new temporary file beside `path`, kept there on
 * success for the caller to rename once the model is saved too (so that
 * the pair appears together, which sg_file.h's writer cannot do). */
static sg_status map_to_temp(sg_model *om, const char *path, struct sg_file_temp *tmp,
                             struct sg_diag *diag)
{
    sg_status st = sg_file_temp_open(path, tmp, diag);
    if (st)
        return st;
    FILE *f = fdopen(tmp->fd, "w");
    if (!f) {
        close(tmp->fd);
        sg_file_temp_discard(tmp);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    errno = 0;
    struct sg_diag pd = {0};
    st = sg_mock_map_print(om, f, &pd);
    int err = errno ? errno : EIO;
    if (fclose(f) != 0 && !st) {
        st = SG_EIO;
        err = errno;
    }
    if (st == SG_EIO)
        sg_diag_set(diag, st, "writing '%s': %s", path, strerror(err));
    else if (st)
        sg_diag_set(diag, st, "%s: %s", path, pd.msg);
    if (st)
        sg_file_temp_discard(tmp);
    return st;
}

static sg_status print_cb(FILE *out, void *ctx)
{
    return sg_mock_map_print(ctx, out, NULL);
}

sg_status sg_mock_map_write(sg_model *om, const char *path, struct sg_diag *diag)
{
    sg_status st = sg_mockom_check(om, diag);
    return st ? st : sg_file_write_atomic_with(path, print_cb, om, diag);
}

sg_status sg_mock_save(sg_model *om, const char *out_prefix, struct sg_diag *diag)
{
    sg_status st = sg_mockom_check(om, diag);
    if (st)
        return st;
    size_t len = strlen(out_prefix) + 8;
    char *om_path = sg_malloc(len), *json_path = sg_malloc(len);
    struct sg_file_temp tmp = {.handle = -1};
    if (!om_path || !json_path) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(om_path, len, "%s.om", out_prefix);
    snprintf(json_path, len, "%s.json", out_prefix);
    if ((st = map_to_temp(om, json_path, &tmp, diag)))
        goto out;
    if ((st = sg_model_save(om, om_path, NULL, diag))) {
        sg_file_temp_discard(&tmp);
        goto out;
    }
    if ((st = sg_file_temp_commit(&tmp, json_path, diag)))
        unlink(om_path); /* the pair or nothing */
out:
    sg_free(om_path);
    sg_free(json_path);
    return st;
}
