/* ptrmap.c - pointer-keyed hash map with uint32 values (open addressing). */
#include "rt_impl.h"
#include "sg_alloc.h"

#include <string.h>

static size_t hash_ptr(const void *p, size_t mask)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & mask;
}

void sg__ptrmap_free(struct sg__ptrmap *m)
{
    sg_free(m->keys);
    sg_free(m->vals);
    memset(m, 0, sizeof *m);
}

uint32_t sg__ptrmap_get(const struct sg__ptrmap *m, const void *key)
{
    if (!m->cap)
        return UINT32_MAX;
    for (size_t i = hash_ptr(key, m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (!m->keys[i])
            return UINT32_MAX;
    }
}

static sg_status grow(struct sg__ptrmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    const void **keys = sg_calloc(cap, sizeof *keys);
    uint32_t *vals = sg_calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        sg_free(keys);
        sg_free(vals);
        return SG_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = hash_ptr(m->keys[i], cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    sg_free(m->keys);
    sg_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return SG_OK;
}

sg_status sg__ptrmap_put(struct sg__ptrmap *m, const void *key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m))
        return SG_ENOMEM;
    size_t i = hash_ptr(key, m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return SG_OK;
}
