/* arena.c - chunked bump allocator (see sg_arena.h). */
#include "sg_arena.h"
#include "sg_alloc.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARENA_ALIGN 8
#define ARENA_FIRST_CHUNK (16 * 1024)
#define ARENA_MAX_CHUNK (16 * 1024 * 1024)
#define HUGE_PAGE (2 * 1024 * 1024)

struct chunk {
    struct chunk *next;
    size_t size; /* usable bytes after the header */
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

struct sg_arena {
    struct sg__arena_cursor cur; /* free space of head (first: sg_arena.h) */
    struct chunk *head;          /* the chunk being filled; older chunks follow */
    size_t next_size;
    size_t reserve; /* size wanted for the next chunk (sg_arena_reserve), or 0 */
    size_t footprint;
};

_Static_assert(offsetof(struct sg_arena, cur) == 0, "sg_arena.h reads the cursor first");

sg_arena *sg_arena_create(void)
{
    sg_arena *a = sg_calloc(1, sizeof *a);
    if (a)
        a->next_size = ARENA_FIRST_CHUNK;
    return a;
}

void sg_arena_free(sg_arena *arena)
{
    if (!arena)
        return;
    struct chunk *c = arena->head;
    while (c) {
        struct chunk *next = c->next;
        sg_free(c);
        c = next;
    }
    sg_free(arena);
}

static struct chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(struct chunk))
        return NULL;
    /* Big chunks are filled front to back right away: on huge pages, so
     * that filling them costs a few faults instead of thousands (and the
     * rounding up is usable space). */
    size_t bytes = sizeof(struct chunk) + size;
    struct chunk *c = size >= 2 * HUGE_PAGE ? sg_malloc_huge(&bytes) : sg_malloc(bytes);
    if (!c)
        return NULL;
    c->next = NULL;
    c->size = bytes - sizeof *c;
    return c;
}

void *sg__arena_alloc_slow(sg_arena *arena, size_t size)
{
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need < size)
        return NULL;
    if (need == 0)
        need = ARENA_ALIGN;
    if ((size_t)(arena->cur.end - arena->cur.next) >= need) {
        void *p = arena->cur.next;
        arena->cur.next += need;
        return p;
    }
    struct chunk *c = arena->head;
    if (need > arena->next_size / 4 && need > arena->reserve / 4) {
        /* A big block gets a chunk of its own placed behind the current one,
         * so the space left in the current chunk is not wasted. */
        struct chunk *big = chunk_new(need);
        if (!big)
            return NULL;
        arena->footprint += big->size;
        if (c) {
            big->next = c->next;
            c->next = big;
        } else {
            arena->head = big; /* full: the cursor stays empty */
        }
        return big->data;
    }
    size_t chunk_size = arena->reserve > arena->next_size ? arena->reserve : arena->next_size;
    struct chunk *fresh = chunk_new(chunk_size);
    if (!fresh)
        return NULL;
    arena->reserve = 0;
    arena->footprint += fresh->size;
    if (arena->next_size < ARENA_MAX_CHUNK)
        arena->next_size *= 2;
    /* Growth past a big reserved chunk (a pass adding nodes to a loaded
     * model) goes on in chunks of a size to match, on huge pages, not
     * again from a few kilobytes in thousands of small faults. */
    if (chunk_size > arena->next_size)
        arena->next_size = chunk_size / 4 < ARENA_MAX_CHUNK ? chunk_size / 4 : ARENA_MAX_CHUNK;
    fresh->next = c;
    arena->head = fresh;
    arena->cur.next = fresh->data + need;
    arena->cur.end = fresh->data + fresh->size;
    return fresh->data;
}

void *sg_arena_calloc(sg_arena *arena, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = sg_arena_alloc(arena, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

char *sg_arena_strndup(sg_arena *arena, const char *s, size_t len)
{
    char *p = sg_arena_alloc(arena, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *sg_arena_strdup(sg_arena *arena, const char *s)
{
    return s ? sg_arena_strndup(arena, s, strlen(s)) : NULL;
}

void *sg_arena_memdup(sg_arena *arena, const void *p, size_t len)
{
    void *q = sg_arena_alloc(arena, len);
    if (q && len)
        memcpy(q, p, len);
    return q;
}

void *sg_arena_grow(sg_arena *arena, const void *old, size_t old_count, size_t new_count,
                    size_t item_size)
{
    if (item_size && new_count > SIZE_MAX / item_size)
        return NULL;
    void *p = sg_arena_alloc(arena, new_count * item_size);
    if (p && old_count)
        memcpy(p, old, (old_count < new_count ? old_count : new_count) * item_size);
    return p;
}

void sg_arena_reserve(sg_arena *arena, size_t bytes)
{
    arena->reserve = bytes;
}

void sg_arena_reset(sg_arena *arena)
{
    struct chunk *c = arena->head;
    if (!c)
        return;
    struct chunk *old = c->next;
    while (old) {
        struct chunk *next = old->next;
        arena->footprint -= old->size;
        sg_free(old);
        old = next;
    }
    c->next = NULL;
    arena->cur.next = c->data;
    arena->cur.end = c->data + c->size;
}

size_t sg_arena_footprint(const sg_arena *arena)
{
    return arena->footprint;
}
