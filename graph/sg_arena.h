/*
 * sg_arena.h - bump allocator whose blocks are all freed at once.
 *
 * A model owns one arena for its nodes, values, attributes and strings
 * (DESIGN.md, "The IR"); the protobuf-c unpacker allocates into the same
 * arena so that strings of a loaded model are used in place, not copied.
 * Memory handed out is 8-byte aligned (enough for every ONNX element
 * type; kernels use unaligned vector loads) and lives until sg_arena_free.
 */
#ifndef SG_ARENA_H
#define SG_ARENA_H

#include <stddef.h>

typedef struct sg_arena sg_arena;

/* A new empty arena, or NULL when out of memory. */
sg_arena *sg_arena_create(void);

/* Free every block of the arena and the arena itself. NULL is a no-op. */
void sg_arena_free(sg_arena *arena);

/* `size` bytes, 8-byte aligned, uninitialised; NULL when out of memory.
 * A zero size returns a valid unique pointer. Inline: the loader makes a
 * few allocations per node, and the call was a tenth of loading. */
static inline void *sg_arena_alloc(sg_arena *arena, size_t size);

/* Internal. The free space of the chunk being filled (an arena starts with
 * it), and the allocation that takes a new chunk. */
struct sg__arena_cursor {
    unsigned char *next, *end;
};
void *sg__arena_alloc_slow(sg_arena *arena, size_t size);

static inline void *sg_arena_alloc(sg_arena *arena, size_t size)
{
    struct sg__arena_cursor *c = (struct sg__arena_cursor *)arena;
    size_t need = (size + 7) & ~(size_t)7;
    if (need >= size && need && (size_t)(c->end - c->next) >= need) {
        void *p = c->next;
        c->next += need;
        return p;
    }
    return sg__arena_alloc_slow(arena, size);
}

/* Like sg_arena_alloc but zeroed; NULL also when count * size overflows. */
void *sg_arena_calloc(sg_arena *arena, size_t count, size_t size);

/* Copies into the arena; NULL when out of memory. sg_arena_strdup(a, NULL)
 * returns NULL without failing (absent strings stay absent). */
char *sg_arena_strdup(sg_arena *arena, const char *s);
char *sg_arena_strndup(sg_arena *arena, const char *s, size_t len);
void *sg_arena_memdup(sg_arena *arena, const void *p, size_t len);

/* Grow an array that lives in the arena: returns a copy of `old` (`old_count`
 * items of `item_size`) with room for `new_count` items; the old block is
 * simply abandoned. NULL when out of memory. */
void *sg_arena_grow(sg_arena *arena, const void *old, size_t old_count, size_t new_count,
                    size_t item_size);

/* Make the next chunk the arena takes from the system at least `bytes`
 * long: a caller that knows roughly how much it will allocate (the loader,
 * from the file size) gets one big chunk instead of a dozen growing ones. */
void sg_arena_reserve(sg_arena *arena, size_t bytes);

/* Forget everything allocated so far but keep the newest chunk for reuse
 * (older chunks are freed): a scratch arena refilled many times. */
void sg_arena_reset(sg_arena *arena);

/* Total bytes obtained from the system for this arena. */
size_t sg_arena_footprint(const sg_arena *arena);

#endif
