/*
 * rt_impl.h - what the files of runtime/ share (not installed).
 */
#ifndef SG_RT_IMPL_H
#define SG_RT_IMPL_H

#include "sg_arena.h"
#include "sg_kernel.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hot loops built for AVX-512, AVX2 and the baseline, chosen when the
 * library is loaded (x86-64 with GCC or clang on glibc; not under ASan). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SG_RT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SG_RT_CLONES
#endif

/* Element memory shared by tensors (views share one storage). */
struct sg_rt_storage {
    int refs;
    bool borrowed; /* data belongs to the model (initializer, attribute) */
    bool interned; /* strings: every entry points into memory this storage owns */
    void *data;
    size_t size;
    size_t cap;  /* bytes allocated at data (>= size; from sg__rt_block_get) */
    void *bytes; /* strings: the block entries point into (owned), or NULL */
};

/*
 * Large blocks (tensor elements, kernel scratch) are recycled while a
 * session exists: the executor frees and allocates blocks of the same few
 * sizes node after node, and memory the C library hands back to the
 * system costs a page fault per 4 KB when it is touched again (a quarter of
 * MobileNet's run time). sg__rt_block_get returns a block of at least
 * `size` bytes (*cap: its real size; contents undefined) or NULL;
 * sg__rt_block_put takes it back (NULL is a no-op). Blocks go back to the
 * C library when the last session is freed. Thread-safe.
 */
void *sg__rt_block_get(size_t size, size_t *cap);
void sg__rt_block_put(void *p, size_t cap);
/* Sessions alive: the pool keeps blocks only while there is one. */
void sg__rt_pool_session(int delta);

/* sg_rt_tensor_create, with the elements left undefined unless `zero`
 * (strings are always empty). */
sg_status sg__rt_tensor_new(int32_t dtype, const int64_t *dims, uint32_t rank, bool zero,
                            sg_rt_value **out, struct sg_diag *diag);

/* A tensor value over existing storage (a reference is taken). */
sg_rt_value *sg__rt_view(sg_rt_storage *s, int32_t dtype, void *data, const int64_t *dims,
                         uint32_t rank);

/* A tensor over borrowed (model-owned) memory. */
sg_status sg__rt_borrow(int32_t dtype, const void *data, const int64_t *dims, uint32_t rank,
                        sg_rt_value **out, struct sg_diag *diag);

/* Copy string entries into one block owned by v's storage (after a kernel
 * filled them with pointers to memory it does not own). */
sg_status sg__rt_intern_strings(sg_rt_value *v);

/* True when v is the only holder of its storage and may be written. */
bool sg__rt_exclusive(const sg_rt_value *v);

/* The element bytes v holds: a tensor's (string contents included), the
 * sum of a sequence's or optional's items; SIZE_MAX past size_t. */
size_t sg__rt_value_bytes(const sg_rt_value *v);

/* A deep copy of tensor v with its own storage. */
sg_status sg__rt_tensor_copy(const sg_rt_value *v, sg_rt_value **out);

/* Executor state a kernel context points to. */
struct rt_plan;
struct rt_frame;
struct rt_node;
struct sg__kpriv {
    struct sg_rt *rt;
    struct rt_frame *frame;
    const struct rt_node *pn;
    sg_arena *scratch;            /* created on first use, freed after the node */
    size_t max_tensor_bytes;      /* sg_rt_opts.max_tensor_bytes (0: no limit) */
    uint64_t max_loop_iterations; /* sg_rt_opts.max_loop_iterations, the default applied */
    struct sg__kblock *big;       /* large scratch blocks (pooled), freed after the node */
};

/* True when input i of the running node is v, read for the last time by
 * this node, and held by nothing else (exec.c). */
bool sg__rt_input_dead(const struct sg__kpriv *p, uint32_t i, const sg_rt_value *v);

/* Free a node's scratch (arena and large blocks). */
void sg__kscratch_release(struct sg__kpriv *p);

/* Pointer-keyed hash map (open addressing). */
struct sg__ptrmap {
    const void **keys;
    uint32_t *vals;
    size_t cap, count;
};
void sg__ptrmap_free(struct sg__ptrmap *m);
/* UINT32_MAX when absent. */
uint32_t sg__ptrmap_get(const struct sg__ptrmap *m, const void *key);
sg_status sg__ptrmap_put(struct sg__ptrmap *m, const void *key, uint32_t val);

/* "name" (op_type, domain vN) of a node for messages, into buf. */
const char *sg__rt_node_label(const sg_node *n, int64_t opset, char *buf, size_t size);

#endif
