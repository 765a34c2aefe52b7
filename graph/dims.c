/* dims.c - checked dimension arithmetic (see sg_dims.h). */
#include "sg_dims.h"

bool sg_dims_numel(const int64_t *dims, size_t rank, int64_t *out)
{
    int64_t n = 1;
    bool zero = false;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return false;
        if (dims[i] == 0)
            zero = true;
        else if (!zero && !sg_dim_mul(n, dims[i], &n))
            return false;
    }
    *out = zero ? 0 : n;
    return true;
}

bool sg_dims_extent(const int64_t *dims, size_t rank, size_t elem_size, int64_t *numel)
{
    int64_t span = elem_size ? (int64_t)elem_size : 1, n = 1;
    if (elem_size > INT64_MAX)
        return false;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return false;
        if (dims[i] && !sg_dim_mul(span, dims[i], &span))
            return false;
        n = dims[i] ? n * dims[i] : 0; /* n <= span / elem_size: no overflow */
    }
    *numel = n;
    return true;
}

bool sg_dims_nbytes(int64_t numel, size_t elem_size, size_t *out)
{
    if (numel < 0 || (uint64_t)numel > SIZE_MAX)
        return false;
    return !__builtin_mul_overflow((size_t)numel, elem_size, out);
}

bool sg_dim_window(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                   int64_t pad_end, bool ceil_mode, int64_t *out)
{
    int64_t padded, span, room;
    if (stride < 1 || dilation < 1 || kernel < 0 || in < 0)
        return false;
    if (!sg_dim_add(in, pad_begin, &padded) || !sg_dim_add(padded, pad_end, &padded))
        return false;
    /* span = dilation * (kernel - 1) + 1, the input extent one window covers */
    if (!sg_dim_mul(dilation, kernel - 1, &span) || !sg_dim_add(span, 1, &span))
        return false;
    if (!sg_dim_sub(padded, span, &room) || room < 0)
        return false;
    int64_t q = room / stride;
    if (ceil_mode && room % stride)
        q++;
    return sg_dim_add(q, 1, out);
}
