/* strmap.c - string-keyed hash map (see strmap.h). */
#include "strmap.h"
#include "sg_alloc.h"

#include <string.h>

uint64_t sg__strhash(const char *s)
{
    /* FNV-1a over the bytes, then a full 64-bit finalizer (murmur3's fmix64):
     * FNV alone leaves the low bits, which pick the slot, poorly mixed for
     * names that differ only in their last digits ("t1234", "t1235"). */
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

void sg__strmap_free(struct sg__strmap *m)
{
    sg_free(m->slots);
    m->slots = NULL;
    m->cap = 0;
    m->count = 0;
}

static size_t find_slot(const struct sg__strmap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)h & mask;
    while (m->slots[i].key && !(m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0))
        i = (i + 1) & mask;
    return i;
}

void *sg__strmap_get(const struct sg__strmap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = find_slot(m, key, sg__strhash(key));
    return m->slots[i].key ? m->slots[i].value : NULL;
}

static sg_status rehash(struct sg__strmap *m, size_t new_cap)
{
    struct sg__strmap_slot *slots = sg_calloc(new_cap, sizeof *slots);
    if (!slots)
        return SG_ENOMEM;
    struct sg__strmap old = *m;
    m->slots = slots;
    m->cap = new_cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.slots[i].key)
            continue;
        size_t j = (size_t)old.slots[i].hash & (new_cap - 1);
        while (slots[j].key)
            j = (j + 1) & (new_cap - 1);
        slots[j] = old.slots[i];
    }
    sg_free(old.slots);
    return SG_OK;
}

sg_status sg__strmap_reserve(struct sg__strmap *m, size_t count)
{
    size_t cap = m->cap ? m->cap : 16;
    while (count * 4 >= cap * 3) {
        if (cap > SIZE_MAX / 2)
            return SG_ENOMEM;
        cap *= 2;
    }
    return cap == m->cap ? SG_OK : rehash(m, cap);
}

sg_status sg__strmap_put(struct sg__strmap *m, const char *key, void *value)
{
    sg_status st = sg__strmap_reserve(m, m->count + 1);
    if (st)
        return st;
    uint64_t h = sg__strhash(key);
    size_t i = find_slot(m, key, h);
    if (!m->slots[i].key) {
        m->slots[i].key = key;
        m->slots[i].hash = h;
        m->count++;
    }
    m->slots[i].value = value;
    return SG_OK;
}

bool sg__strmap_del(struct sg__strmap *m, const char *key)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1;
    size_t i = find_slot(m, key, sg__strhash(key));
    if (!m->slots[i].key)
        return false;
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->slots[j].key)
            break;
        size_t home = (size_t)m->slots[j].hash & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].key = NULL;
    m->count--;
    return true;
}
