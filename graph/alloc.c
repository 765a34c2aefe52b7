/* alloc.c - counted allocation with failure injection (see sg_alloc.h). */
#include "sg_alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static _Atomic int64_t live_blocks;
static _Atomic uint64_t alloc_count; /* allocations since the last sg_alloc_fail_at */
static _Atomic uint64_t fail_at;     /* 0: off; else fail allocation number fail_at and later */

static int should_fail(void)
{
    uint64_t n = atomic_fetch_add(&alloc_count, 1) + 1;
    uint64_t f = atomic_load(&fail_at);
    return f != 0 && n >= f;
}

void *sg_malloc(size_t size)
{
    if (should_fail())
        return NULL;
    void *p = malloc(size ? size : 1);
    if (p)
        atomic_fetch_add(&live_blocks, 1);
    return p;
}

void *sg_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p)
        atomic_fetch_add(&live_blocks, 1);
    return p;
}

#define TABLE_MIN (1u << 20)
#define GROW_HUGE ((size_t)2 << 20) /* sg_grow: huge pages from here */
#define HUGE_PAGE ((uintptr_t)2 << 20)

void *sg_malloc_huge(size_t *size)
{
    if (*size > SIZE_MAX - HUGE_PAGE || should_fail())
        return NULL;
    size_t bytes = (*size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
        return NULL;
    atomic_fetch_add(&live_blocks, 1);
    madvise(p, bytes, MADV_HUGEPAGE); /* advice only: refused, small pages are used */
    *size = bytes;
    return p;
}

void *sg_grow(void *p, size_t old_size, size_t new_size)
{
    if (new_size < GROW_HUGE)
        return sg_realloc(p, new_size);
    size_t bytes = new_size;
    void *q = sg_malloc_huge(&bytes);
    if (!q)
        return NULL;
    if (old_size)
        memcpy(q, p, old_size < new_size ? old_size : new_size);
    sg_free(p);
    return q;
}

void *sg_calloc_table(size_t count, size_t size)
{
    if (size == 0 || count < TABLE_MIN / size || count > (SIZE_MAX - HUGE_PAGE) / size)
        return sg_calloc(count, size);
    /* Writing the zeros (not reading untouched pages first) makes every
     * page writable at once. */
    size_t bytes = count * size;
    void *p = sg_malloc_huge(&bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

void *sg_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return sg_malloc(size);
    if (size == 0) {
        sg_free(ptr);
        return NULL;
    }
    if (should_fail())
        return NULL;
    return realloc(ptr, size);
}

void sg_free(void *ptr)
{
    if (!ptr)
        return;
    atomic_fetch_sub(&live_blocks, 1);
    free(ptr);
}

char *sg_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = sg_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

uint64_t sg_alloc_fail_at(uint64_t n)
{
    uint64_t made = atomic_exchange(&alloc_count, 0);
    atomic_store(&fail_at, n);
    return made;
}

int64_t sg_alloc_live(void)
{
    return atomic_load(&live_blocks);
}
