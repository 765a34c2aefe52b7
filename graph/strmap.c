/*
 * strmap.c - string-keyed hash map (see strmap.h).
 *
 * Probing reads a dense array of 32-bit tags (hash bits, never 0 for a used
 * slot) and touches a slot's key only when its tag matches: a lookup in a
 * table of a few hundred thousand names then costs about one cache miss in
 * the tags and one on the key that matches, instead of one per probe.
 */
#include "strmap.h"
#include "sg_alloc.h"

#include <string.h>

static inline uint64_t finish(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* Eight bytes at a time (names are hashed several times per node a pass
 * creates, and a byte-wise hash was a tenth of such a pass), each word
 * multiplied in, then a full 64-bit finalizer (murmur3's fmix64) so that
 * the low bits, which pick the slot, depend on every byte: names that
 * differ only in their last digits ("t1234", "t1235") spread well. */
uint64_t sg__strhash_n(const char *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (i < len) {
        /* The last len - i bytes as a little-endian number: from the word
         * that ends the string when there is one (no call to memcpy of a
         * variable size), else byte by byte. */
        size_t r = len - i;
        uint64_t w = 0;
        if (len >= 8) {
            memcpy(&w, s + len - 8, 8);
            w >>= (8 - r) * 8;
        } else {
            for (size_t k = 0; k < r; k++)
                w |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
        }
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return finish(h);
}

uint64_t sg__strhash(const char *s)
{
    return sg__strhash_n(s, strlen(s));
}

/* The tag kept for a hash is its low half (0 is reserved for "empty", so a
 * zero half becomes 1), and an entry's home slot is its tag masked by the
 * table size: growing the table and deleting, which must find every
 * moved entry's home slot, then never hash a key again (that was a tenth
 * of a pass removing 50,000 values). Tables stay below 2^32 slots. */
static uint32_t tag_of(uint64_t h)
{
    uint32_t t = (uint32_t)h;
    return t ? t : 1;
}

void sg__strmap_free(struct sg__strmap *m)
{
    sg_free(m->slots);
    sg_free(m->tags);
    m->slots = NULL;
    m->tags = NULL;
    m->cap = 0;
    m->count = 0;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find_slot(const struct sg__strmap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;
    uint32_t tag = tag_of(h);
    size_t i = tag & mask;
    for (;;) {
        uint32_t t = m->tags[i];
        if (t == 0 || (t == tag && strcmp(m->slots[i].key, key) == 0))
            return i;
        i = (i + 1) & mask;
    }
}

void *sg__strmap_get_h(const struct sg__strmap *m, const char *key, uint64_t h)
{
    if (!m->cap)
        return NULL;
    size_t i = find_slot(m, key, h);
    return m->tags[i] ? m->slots[i].value : NULL;
}

void *sg__strmap_get_n(const struct sg__strmap *m, const char *key, size_t len, uint64_t h)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    uint32_t tag = tag_of(h);
    for (size_t i = tag & mask;; i = (i + 1) & mask) {
        uint32_t t = m->tags[i];
        if (t == 0)
            return NULL;
        const char *k = m->slots[i].key;
        if (t == tag && strncmp(k, key, len) == 0 && k[len] == '\0')
            return m->slots[i].value;
    }
}

void *sg__strmap_get(const struct sg__strmap *m, const char *key)
{
    if (!m->count)
        return NULL;
    return sg__strmap_get_h(m, key, sg__strhash(key));
}

void sg__strmap_prefetch_h(const struct sg__strmap *m, uint64_t h)
{
    if (m->cap) {
        size_t i = tag_of(h) & (m->cap - 1);
        __builtin_prefetch(&m->tags[i]);
        __builtin_prefetch(&m->slots[i]);
    }
}

void sg__strmap_prefetch(const struct sg__strmap *m, const char *key)
{
    sg__strmap_prefetch_h(m, sg__strhash(key));
}

static sg_status rehash(struct sg__strmap *m, size_t new_cap)
{
    struct sg__strmap_slot *slots = sg_calloc_table(new_cap, sizeof *slots);
    uint32_t *tags = sg_calloc_table(new_cap, sizeof *tags);
    if (!slots || !tags) {
        sg_free(slots);
        sg_free(tags);
        return SG_ENOMEM;
    }
    struct sg__strmap old = *m;
    m->slots = slots;
    m->tags = tags;
    m->cap = new_cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.tags[i])
            continue;
        size_t j = old.tags[i] & (new_cap - 1);
        while (tags[j])
            j = (j + 1) & (new_cap - 1);
        slots[j] = old.slots[i];
        tags[j] = old.tags[i];
    }
    sg_free(old.slots);
    sg_free(old.tags);
    return SG_OK;
}

sg_status sg__strmap_reserve(struct sg__strmap *m, size_t count)
{
    size_t cap = m->cap ? m->cap : 16;
    while (count * 4 >= cap * 3) {
        if (cap >= ((size_t)1 << 31)) /* home slots come from 32-bit tags */
            return SG_ENOMEM;
        cap *= 2;
    }
    return cap == m->cap ? SG_OK : rehash(m, cap);
}

sg_status sg__strmap_put(struct sg__strmap *m, const char *key, void *value)
{
    return sg__strmap_put_h(m, key, sg__strhash(key), value);
}

sg_status sg__strmap_put_h(struct sg__strmap *m, const char *key, uint64_t h, void *value)
{
    sg_status st = sg__strmap_reserve(m, m->count + 1);
    if (st)
        return st;
    size_t i = find_slot(m, key, h);
    if (!m->tags[i]) {
        m->slots[i].key = key;
        m->tags[i] = tag_of(h);
        m->count++;
    }
    m->slots[i].value = value;
    return SG_OK;
}

sg_status sg__strmap_add_h(struct sg__strmap *m, const char *key, uint64_t h, void *value,
                           void **existing)
{
    sg_status st = sg__strmap_reserve(m, m->count + 1);
    if (st)
        return st;
    size_t i = find_slot(m, key, h);
    if (m->tags[i]) {
        *existing = m->slots[i].value;
        return SG_OK;
    }
    m->slots[i].key = key;
    m->slots[i].value = value;
    m->tags[i] = tag_of(h);
    m->count++;
    *existing = NULL;
    return SG_OK;
}

/* Delete the entry at slot i; backward-shift deletion keeps every probe
 * chain unbroken. */
static void del_slot(struct sg__strmap *m, size_t i)
{
    size_t mask = m->cap - 1, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->tags[j])
            break;
        size_t home = m->tags[j] & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            m->tags[i] = m->tags[j];
            i = j;
        }
    }
    m->slots[i].key = NULL;
    m->slots[i].value = NULL;
    m->tags[i] = 0;
    m->count--;
}

bool sg__strmap_del(struct sg__strmap *m, const char *key)
{
    if (!m->cap)
        return false;
    size_t i = find_slot(m, key, sg__strhash(key));
    if (!m->tags[i])
        return false;
    del_slot(m, i);
    return true;
}

/* Below this many keys, or a sixty-fourth of the table, one by one. */
#define DEL_MANY_MIN 1024

size_t sg__strmap_del_many(struct sg__strmap *m, const char *const *keys, size_t n)
{
    size_t removed = 0;
    if (!m->cap || !n)
        return 0;
    uint64_t *order =
        n >= DEL_MANY_MIN && n >= m->cap / 64 ? sg_grow(NULL, 0, 2 * n * sizeof *order) : NULL;
    if (!order) {
        for (size_t k = 0; k < n; k++)
            removed += sg__strmap_del(m, keys[k]);
        return removed;
    }
    /* Entries sorted by home slot: (tag << 32 | index), by the tag's low
     * bits (the home slot), in two buffers for a least-significant-digit
     * radix sort. */
    uint64_t *tmp = order + n;
    for (size_t k = 0; k < n; k++) { /* n < 2^32: n <= count < cap */
        if (k + 16 < n)
            __builtin_prefetch(keys[k + 16]); /* keys live all over: overlap the misses */
        order[k] = (uint64_t)tag_of(sg__strhash(keys[k])) << 32 | (uint64_t)k;
    }
    unsigned bits = 0;
    while (((size_t)1 << bits) < m->cap)
        bits++;
    for (unsigned shift = 32; shift < 32 + bits; shift += 11) {
        size_t count[2048] = {0};
        unsigned width = 32 + bits - shift < 11 ? 32 + bits - shift : 11;
        uint64_t digit = ((uint64_t)1 << width) - 1;
        for (size_t k = 0; k < n; k++)
            count[(order[k] >> shift) & digit]++;
        for (size_t d = 0, sum = 0; d <= digit; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t k = 0; k < n; k++)
            tmp[count[(order[k] >> shift) & digit]++] = order[k];
        uint64_t *swap = order;
        order = tmp;
        tmp = swap;
    }
    size_t mask = m->cap - 1;
    for (size_t k = 0; k < n; k++) {
        const char *key = keys[(uint32_t)order[k]];
        uint32_t tag = (uint32_t)(order[k] >> 32);
        for (size_t i = tag & mask; m->tags[i]; i = (i + 1) & mask) {
            const char *have = m->slots[i].key;
            if (m->tags[i] == tag && (have == key || strcmp(have, key) == 0)) {
                del_slot(m, i);
                removed++;
                break;
            }
        }
    }
    sg_free(order < tmp ? order : tmp);
    return removed;
}
