/*
 * fuzz_precision.c - libFuzzer harness for the files atc takes from the
 * user: fusion switch files (fusion/fusion_switch.c, JSON or PassName:on
 * lines) and keep_dtype, customize_dtypes and op_precision_mode files
 * (fusion/precision_files.c).
 *
 * The first byte chooses the reader, the rest is the file. What a reader
 * accepts is written back with the matching writer and must read back to
 * the same meaning: every pass switched on or off alike, the same entries
 * with the same dtypes and modes. Build and run with tools/fuzz/run.sh
 * precision.
 */
#include "fuzz_common.h"
#include "sg_alloc.h"
#include "sg_fusion.h"
#include "sg_precision.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print with `print`, read back with `parse`; the text, or abort. */
static char *print_to_text(sg_status (*print)(const void *, FILE *), const void *obj, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    FUZZ_CHECK(f, "open_memstream");
    FUZZ_CHECK(print(obj, f) == SG_OK, "writing what was read failed");
    fclose(f);
    return text;
}

static sg_status print_switch(const void *sw, FILE *f)
{
    return sg_fusion_switch_print(sw, f);
}

static sg_status print_prec(const void *p, FILE *f)
{
    return sg_prec_file_print(p, f);
}

static void check_switch(const uint8_t *data, size_t size)
{
    sg_fusion_switch *sw = NULL;
    struct sg_diag d = {0};
    if (sg_fusion_switch_parse((const char *)data, size, "fuzz.cfg", &sw, &d) != SG_OK)
        return;
    size_t len;
    char *text = print_to_text(print_switch, sw, &len);
    sg_fusion_switch *again = NULL;
    struct sg_diag d2 = {0};
    FUZZ_CHECK(sg_fusion_switch_parse(text, len, "again", &again, &d2) == SG_OK,
               "written switch file does not read back");
    for (int k = 0; k < SG_FUSION_KIND_COUNT; k++) {
        for (size_t i = 0; i < sw->n_entries; i++)
            FUZZ_CHECK(sg_fusion_switch_enabled(sw, k, sw->entries[i].name) ==
                           sg_fusion_switch_enabled(again, k, sw->entries[i].name),
                       "switch round trip changed a pass");
        for (int id = 0; id < SG_FUSION_PASS_COUNT; id++) {
            const char *name = sg_fusion_pass_get(id)->name;
            FUZZ_CHECK(sg_fusion_switch_enabled(sw, k, name) ==
                           sg_fusion_switch_enabled(again, k, name),
                       "switch round trip changed a catalogue pass");
        }
    }
    sg_fusion_switch_free(again);
    sg_fusion_switch_free(sw);
    free(text);
}

static const struct sg_prec_entry *find(const sg_prec_file *f, const struct sg_prec_entry *e)
{
    for (size_t i = 0; i < f->n_entries; i++)
        if (f->entries[i].target == e->target && !strcmp(f->entries[i].name, e->name))
            return &f->entries[i];
    return NULL;
}

static void check_prec(enum sg_prec_format format, const uint8_t *data, size_t size)
{
    sg_prec_file *f = NULL;
    struct sg_diag d = {0};
    if (sg_prec_file_parse(format, (const char *)data, size, "fuzz.cfg", &f, &d) != SG_OK)
        return;
    size_t len;
    char *text = print_to_text(print_prec, f, &len);
    sg_prec_file *again = NULL;
    struct sg_diag d2 = {0};
    FUZZ_CHECK(sg_prec_file_parse(format, text, len, "again", &again, &d2) == SG_OK,
               "written precision file does not read back");
    FUZZ_CHECK(again->n_entries == f->n_entries, "precision round trip changed the entry count");
    for (size_t i = 0; i < f->n_entries; i++) {
        const struct sg_prec_entry *a = &f->entries[i], *b = find(again, a);
        FUZZ_CHECK(b, "precision round trip lost an entry");
        FUZZ_CHECK(a->n_in == b->n_in && a->n_out == b->n_out &&
                       (!a->n_in || !memcmp(a->in, b->in, a->n_in * sizeof *a->in)) &&
                       (!a->n_out || !memcmp(a->out, b->out, a->n_out * sizeof *a->out)) &&
                       a->mode == b->mode,
                   "precision round trip changed an entry");
    }
    sg_prec_file_free(again);
    sg_prec_file_free(f);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int which = data[0] % 4;
    data++, size--;
    if (which == 0)
        check_switch(data, size);
    else
        check_prec((enum sg_prec_format)(which - 1), data, size);
    return 0;
}
