/*
 * fuzz_json.c - libFuzzer harness for the JSON reader (graph/json_read.c)
 * and the ATC map reader on top of it (graph/atcmap.c, what compare -m and
 * fusion-switch --from-map read).
 *
 * Every document the reader accepts is written again with surgeon's JSON
 * writer (graph/json_write.c) and must read back equal: same types, keys,
 * numbers and string bytes (names that are not UTF-8 included). The same
 * bytes go to the map reader, which must accept or refuse them cleanly.
 * Build and run with tools/fuzz/run.sh json.
 */
#include "fuzz_common.h"
#include "sg_alloc.h"
#include "sg_atcmap.h"
#include "sg_json.h"
#include "sg_json_read.h"

#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_value(struct sg_json *j, const struct sg_jval *v)
{
    switch (v->type) {
    case SG_JSON_NULL:
        sg_json_null(j);
        break;
    case SG_JSON_BOOL:
        sg_json_bool(j, v->b);
        break;
    case SG_JSON_NUMBER:
        if (v->is_int)
            sg_json_int(j, v->i);
        else
            sg_json_double(j, v->num);
        break;
    case SG_JSON_STRING:
        sg_json_string_n(j, v->str, v->len);
        break;
    case SG_JSON_ARRAY:
        sg_json_array_begin(j);
        for (size_t i = 0; i < v->n_items; i++)
            write_value(j, v->items[i]);
        sg_json_array_end(j);
        break;
    case SG_JSON_OBJECT:
        sg_json_object_begin(j);
        for (size_t i = 0; i < v->n_members; i++) {
            sg_json_key(j, v->members[i].key);
            write_value(j, v->members[i].value);
        }
        sg_json_object_end(j);
        break;
    case SG_JSON_TYPE_COUNT:
        break;
    }
}

static bool same(const struct sg_jval *a, const struct sg_jval *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case SG_JSON_NULL:
        return true;
    case SG_JSON_BOOL:
        return a->b == b->b;
    case SG_JSON_NUMBER:
        if (a->is_int && b->is_int)
            return a->i == b->i;
        return a->num == b->num || (isnan(a->num) && isnan(b->num));
    case SG_JSON_STRING:
        return a->len == b->len && !memcmp(a->str, b->str, a->len);
    case SG_JSON_ARRAY:
        if (a->n_items != b->n_items)
            return false;
        for (size_t i = 0; i < a->n_items; i++)
            if (!same(a->items[i], b->items[i]))
                return false;
        return true;
    case SG_JSON_OBJECT:
        if (a->n_members != b->n_members)
            return false;
        for (size_t i = 0; i < a->n_members; i++)
            if (strcmp(a->members[i].key, b->members[i].key) ||
                !same(a->members[i].value, b->members[i].value))
                return false;
        return true;
    case SG_JSON_TYPE_COUNT:
        break;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The writer nests 64 levels: deeper documents are the reader's alone. */
    struct sg_json_limits lim = {.max_depth = SG_JSON_MAX_DEPTH - 2};
    struct sg_jdoc *doc = NULL;
    struct sg_diag d = {0};
    if (sg_json_parse((const char *)data, size, "fuzz", &lim, &doc, &d) == SG_OK) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        FUZZ_CHECK(f, "open_memstream");
        struct sg_json j;
        sg_json_init(&j, f, size % 2);
        write_value(&j, doc->root);
        fclose(f);
        struct sg_jdoc *again = NULL;
        struct sg_diag d2 = {0};
        FUZZ_CHECK(sg_json_parse(text, len, "again", &lim, &again, &d2) == SG_OK,
                   "written JSON does not read back");
        FUZZ_CHECK(same(doc->root, again->root), "JSON round trip changed the document");
        sg_jdoc_free(again);
        free(text);
        sg_jdoc_free(doc);
    }
    sg_atc_map *map = NULL;
    struct sg_diag md = {0};
    if (sg_atc_map_parse((const char *)data, size, "fuzz.json", &map, &md) == SG_OK)
        sg_atc_map_free(map);
    return 0;
}
