/* ir_type.c - value types: construction, copying and formatting. */
#include "ir_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

sg_type *sg_type_tensor(sg_model *m, int32_t elem_type, const int64_t *dims, int rank)
{
    sg_type *t = sg_arena_calloc(m->arena, 1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = SG_TYPE_TENSOR;
    t->has_elem_type = true;
    t->elem_type = elem_type;
    if (rank < 0)
        return t;
    t->shape = sg_arena_calloc(m->arena, 1, sizeof *t->shape);
    if (!t->shape)
        return NULL;
    t->shape->rank = (uint32_t)rank;
    t->shape->dims = sg_arena_calloc(m->arena, (size_t)rank, sizeof *t->shape->dims);
    if (!t->shape->dims)
        return NULL;
    for (int i = 0; i < rank; i++)
        if (dims && dims[i] >= 0) {
            t->shape->dims[i].kind = SG_DIM_VALUE;
            t->shape->dims[i].value = dims[i];
        }
    return t;
}

sg_type *sg_type_clone(sg_model *m, const sg_type *src)
{
    if (!src)
        return NULL;
    sg_type *t = sg_arena_memdup(m->arena, src, sizeof *src);
    if (!t)
        return NULL;
    if (src->shape) {
        t->shape = sg_arena_memdup(m->arena, src->shape, sizeof *src->shape);
        if (!t->shape)
            return NULL;
        t->shape->dims =
            sg_arena_memdup(m->arena, src->shape->dims, src->shape->rank * sizeof(sg_dim));
        if (!t->shape->dims)
            return NULL;
    }
    if (src->elem && !(t->elem = sg_type_clone(m, src->elem)))
        return NULL;
    return t;
}

/* Append formatted text at *pos without overflowing; keeps *pos <= size-1. */
static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
    if (*pos + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *pos, size - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n < size - *pos ? (size_t)n : size - *pos - 1;
}

static void format_rec(const sg_type *t, char *buf, size_t size, size_t *pos)
{
    if (!t) {
        put(buf, size, pos, "?");
        return;
    }
    switch (t->kind) {
    case SG_TYPE_TENSOR:
    case SG_TYPE_SPARSE_TENSOR:
        put(buf, size, pos, "%s%s", t->kind == SG_TYPE_SPARSE_TENSOR ? "sparse " : "",
            t->has_elem_type ? sg_dtype_name(t->elem_type) : "?");
        if (!t->shape) {
            put(buf, size, pos, "[...]");
            break;
        }
        put(buf, size, pos, "[");
        for (uint32_t i = 0; i < t->shape->rank; i++) {
            const sg_dim *d = &t->shape->dims[i];
            if (i)
                put(buf, size, pos, ",");
            if (d->kind == SG_DIM_VALUE)
                put(buf, size, pos, "%" PRId64, d->value);
            else if (d->kind == SG_DIM_PARAM)
                put(buf, size, pos, "%s", d->param);
            else
                put(buf, size, pos, "?");
        }
        put(buf, size, pos, "]");
        break;
    case SG_TYPE_SEQUENCE:
        put(buf, size, pos, "seq(");
        format_rec(t->elem, buf, size, pos);
        put(buf, size, pos, ")");
        break;
    case SG_TYPE_OPTIONAL:
        put(buf, size, pos, "optional(");
        format_rec(t->elem, buf, size, pos);
        put(buf, size, pos, ")");
        break;
    case SG_TYPE_MAP:
        put(buf, size, pos, "map(%s,", t->has_key_type ? sg_dtype_name(t->key_type) : "?");
        format_rec(t->elem, buf, size, pos);
        put(buf, size, pos, ")");
        break;
    default:
        put(buf, size, pos, "?");
        break;
    }
}

char *sg_type_format(const sg_type *t, char *buf, size_t size)
{
    size_t pos = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    format_rec(t, buf, size, &pos);
    return buf;
}

sg_type *sg_type_with_elem(sg_model *m, const sg_type *t, int32_t elem_type)
{
    if (!t || (t->kind != SG_TYPE_TENSOR && t->kind != SG_TYPE_SPARSE_TENSOR))
        return sg_type_tensor(m, elem_type, NULL, -1);
    sg_type *c = sg_type_clone(m, t);
    if (!c)
        return NULL;
    c->has_elem_type = true;
    c->elem_type = elem_type;
    return c;
}
