/*
 * strmap.h - string-keyed hash map (internal to surgeon).
 *
 * Open addressing with linear probing and backward-shift deletion. Keys are
 * borrowed: the caller keeps them alive (they live in the model arena) and
 * must not change them while they are in the map. Values are pointers.
 */
#ifndef SG_STRMAP_H
#define SG_STRMAP_H

#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sg__strmap_slot {
    const char *key; /* NULL: empty */
    void *value;
};

struct sg__strmap {
    struct sg__strmap_slot *slots;
    uint32_t *tags; /* per slot: hash bits, 0 when empty (probed first) */
    size_t cap;     /* power of two, or 0 */
    size_t count;
};

uint64_t sg__strhash(const char *s);
/* The same hash of len bytes that need no NUL (equal to sg__strhash of the
 * same characters NUL-terminated). */
uint64_t sg__strhash_n(const char *s, size_t len);

/* Zero-initialised maps are valid and empty; free releases the table. */
void sg__strmap_free(struct sg__strmap *m);

/* The value stored for key, or NULL. */
void *sg__strmap_get(const struct sg__strmap *m, const char *key);

/* Start loading the memory a lookup of key will touch, for a lookup a few
 * steps later (loaders call it ahead of time to overlap cache misses). */
void sg__strmap_prefetch(const struct sg__strmap *m, const char *key);

/* The same operations with the key's hash (sg__strhash) already known, for
 * callers that look a name up and then insert it. */
void *sg__strmap_get_h(const struct sg__strmap *m, const char *key, uint64_t h);
sg_status sg__strmap_put_h(struct sg__strmap *m, const char *key, uint64_t h, void *value);
void sg__strmap_prefetch_h(const struct sg__strmap *m, uint64_t h);

/* Lookup of a key given as len bytes that need no NUL and hold none (a
 * name still in the file being read), with its sg__strhash_n. */
void *sg__strmap_get_n(const struct sg__strmap *m, const char *key, size_t len, uint64_t h);

/* Insert key unless it is there: *existing is then its value and the map
 * is unchanged, else NULL. One hash and one probe for "add if new". */
sg_status sg__strmap_add_h(struct sg__strmap *m, const char *key, uint64_t h, void *value,
                           void **existing);

/* Insert or replace. SG_ENOMEM leaves the map unchanged. */
sg_status sg__strmap_put(struct sg__strmap *m, const char *key, void *value);

/* Make room for `count` entries in total without rehashing later. */
sg_status sg__strmap_reserve(struct sg__strmap *m, size_t count);

/* Remove key; returns whether it was present. */
bool sg__strmap_del(struct sg__strmap *m, const char *key);

/* Remove each of keys[0..n) that is present, like n calls of
 * sg__strmap_del, but in table order: a big batch then walks the table
 * about once instead of missing the cache on every key. Returns how many
 * were removed. */
size_t sg__strmap_del_many(struct sg__strmap *m, const char *const *keys, size_t n);

#endif
