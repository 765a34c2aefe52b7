/*
 * sg_alloc.h - the one allocator every surgeon module goes through.
 *
 * All heap memory of the library comes from sg_malloc/sg_calloc/sg_realloc
 * and returns through sg_free, so that tests can make the N-th allocation
 * fail (sg_alloc_fail_at) and check that every error path cleans up: the
 * count of live blocks must return to where it was.
 */
#ifndef SG_ALLOC_H
#define SG_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* Like malloc/calloc/realloc/free; NULL on failure (or injected failure).
 * sg_free(NULL) is a no-op. sg_realloc(p, 0) frees p and returns NULL. */
void *sg_malloc(size_t size);
void *sg_calloc(size_t count, size_t size);
void *sg_realloc(void *ptr, size_t size);
void sg_free(void *ptr);

/* At least *size bytes (uninitialised) in whole huge pages, aligned to
 * one and advised as such, where the system has them: a block filled all
 * over right away (an arena's big chunk) then costs a few faults, none of
 * them on small pages at its ends. *size becomes the size given. Freed
 * with sg_free. */
void *sg_malloc_huge(size_t *size);

/* sg_calloc for a table of a megabyte or more that is probed all over
 * (hash tables): whole huge pages where the system has them, written up
 * front. calloc's untouched pages would fault twice each as they are
 * probed (a read maps the zero page, the first write replaces it, with a
 * TLB flush on every core running the process), and its block leaves
 * small pages at both ends: that was a third of a pass building a
 * 100,000-name map. Freed with sg_free. */
void *sg_calloc_table(size_t count, size_t size);

/* sg_realloc for an array that grows by doubling: the block for new_size
 * bytes keeps the first old_size bytes of p (which goes). From 2 MB on it
 * is on huge pages (sg_malloc_huge): realloc's fresh 4 KB pages fault one
 * by one as they are written, hundreds of faults for a pass that lists a
 * few hundred thousand values. NULL (p untouched) when out of memory.
 * Freed with sg_free. */
void *sg_grow(void *p, size_t old_size, size_t new_size);

/* Duplicate a NUL-terminated string / a byte range with sg_malloc. */
char *sg_strdup(const char *s);

/*
 * Failure injection for tests: after this call the n-th allocation from now
 * (n >= 1) fails, and so does every one after it until the next call;
 * n = 0 turns injection off. Returns how many allocations were made since
 * the previous call, so a loop can tell when a run no longer reached n.
 * Not thread-safe: tests call it from one thread.
 */
uint64_t sg_alloc_fail_at(uint64_t n);

/* Number of blocks currently allocated through sg_malloc & co. */
int64_t sg_alloc_live(void);

#endif
