/* mockom.c - reading the marks of a mock OM (see sg_mockom.h). */
#include "sg_mockom.h"

#include <stdio.h>
#include <string.h>

bool sg_mockom_is(const sg_model *m)
{
    return sg_model_metadata(m, SG_MOCKOM_META_FORMAT) != NULL;
}

sg_status sg_mockom_check(const sg_model *m, struct sg_diag *diag)
{
    const char *v = sg_model_metadata(m, SG_MOCKOM_META_FORMAT);
    if (!v)
        return sg_diag_set(diag, SG_EINVAL,
                           "not a mock OM: no metadata entry '" SG_MOCKOM_META_FORMAT "'");
    if (strcmp(v, SG_MOCKOM_FORMAT_VERSION) != 0)
        return sg_diag_set(
            diag, SG_EUNSUPPORTED,
            "mock OM format version '%s'; this surgeon reads version " SG_MOCKOM_FORMAT_VERSION, v);
    const char *o = sg_model_metadata(m, SG_MOCKOM_META_OVERFLOW);
    if (!o ||
        (strcmp(o, SG_MOCKOM_OVERFLOW_INF) != 0 && strcmp(o, SG_MOCKOM_OVERFLOW_SATURATION) != 0))
        return sg_diag_set(diag, SG_EPARSE,
                           "mock OM: metadata '" SG_MOCKOM_META_OVERFLOW
                           "' is %s%s%s, expected '" SG_MOCKOM_OVERFLOW_INF
                           "' or '" SG_MOCKOM_OVERFLOW_SATURATION "'",
                           o ? "'" : "", o ? o : "missing", o ? "'" : "");
    return SG_OK;
}

bool sg_mockom_saturates(const sg_model *m)
{
    const char *o = sg_model_metadata(m, SG_MOCKOM_META_OVERFLOW);
    return o && strcmp(o, SG_MOCKOM_OVERFLOW_SATURATION) == 0;
}

static bool attr_is(const sg_node *n, const char *name, const char *value)
{
    const sg_attr *a = sg_node_attr(n, name);
    size_t len = strlen(value);
    return a && a->type == SG_ATTR_STRING && a->s.len == len && memcmp(a->s.data, value, len) == 0;
}

unsigned sg_mockom_node_fp16(const sg_node *n)
{
    unsigned bits = 0;
    if (attr_is(n, SG_MOCKOM_ATTR_INPUT_DTYPE, "float16"))
        bits |= SG_MOCKOM_FP16_IN;
    if (attr_is(n, SG_MOCKOM_ATTR_OUTPUT_DTYPE, "float16"))
        bits |= SG_MOCKOM_FP16_OUT;
    return bits;
}

const char *sg_mockom_op_type(const sg_node *n, char *buf, size_t size)
{
    if (!size)
        return buf;
    const sg_attr *a = sg_node_attr(n, SG_MOCKOM_ATTR_ATC_TYPE);
    if (a && a->type == SG_ATTR_STRING && a->s.len) {
        size_t len = a->s.len < size - 1 ? a->s.len : size - 1;
        memcpy(buf, a->s.data, len);
        buf[len] = '\0';
        return buf;
    }
    snprintf(buf, size, "%s", n->op_type);
    return buf;
}
