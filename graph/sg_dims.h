/*
 * sg_dims.h - checked arithmetic on tensor dimensions and element counts.
 *
 * Shapes come from untrusted models (attributes, constant shape tensors,
 * input files), so every sum, product and window size computed from them
 * can overflow int64. Kernels, shape inference and the file readers use
 * these helpers instead of writing `a * b` or their own INT64_MAX / b test:
 * each returns false on overflow (and leaves *out unspecified), so the
 * caller reports an error naming the node and its shapes.
 *
 * A dim is an int64 >= 0; helpers that take dims refuse negative ones.
 */
#ifndef SG_DIMS_H
#define SG_DIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* a + b, a - b, a * b in int64; false on overflow. */
static inline bool sg_dim_add(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

static inline bool sg_dim_sub(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_sub_overflow(a, b, out);
}

static inline bool sg_dim_mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b. */
static inline int64_t sg_dim_ceildiv(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* v truncated to an integer, saturated at +-2^62 (NaN gives 0): a float
 * read as a size, index or coordinate, without the undefined behaviour of
 * converting an out-of-range double (the margin lets one more sum of two
 * such values fit). */
static inline int64_t sg_dim_from_double(double v)
{
    const double lim = 4611686018427387904.0; /* 2^62 */
    return v != v ? 0 : v >= lim ? (int64_t)lim : v <= -lim ? -(int64_t)lim : (int64_t)v;
}

/* v clamped to [lo, hi] (lo <= hi). */
static inline int64_t sg_dim_clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * The element count of `rank` dims: false when a dim is negative or the
 * product overflows int64. A zero dim gives 0 whatever the others are.
 */
bool sg_dims_numel(const int64_t *dims, size_t rank, int64_t *out);

/*
 * The element count of `rank` dims of elem_size-byte elements, by numpy's
 * rule for what an array may be: false when a dim is negative or when the
 * product of the non-zero dims, times elem_size, overflows int64, even if
 * a zero dim makes the tensor empty ([0, 2^62] of float32 is refused, as
 * numpy refuses it). Every product of some of such dims, every stride and
 * every byte offset into the tensor then fits int64, so code walking a
 * tensor made under this rule needs no check of its own.
 */
bool sg_dims_extent(const int64_t *dims, size_t rank, size_t elem_size, int64_t *numel);

/*
 * numel elements of elem_size bytes as a size_t: false when numel is
 * negative or the byte count does not fit size_t.
 */
bool sg_dims_nbytes(int64_t numel, size_t elem_size, size_t *out);

/*
 * The output length of a sliding window (Conv, Pool, Col2Im...):
 * floor((in + pad_begin + pad_end - (dilation * (kernel - 1) + 1)) / stride)
 * + 1, or with ceil_mode the ceiling. false when any step overflows, when
 * stride or dilation is below 1, kernel below 0, or the window is larger
 * than the padded input (a negative length).
 */
bool sg_dim_window(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                   int64_t pad_end, bool ceil_mode, int64_t *out);

#endif
