/*
 * shape_reduce.c - shape rules of the reductions (Reduce*: axes as an
 * attribute, or as input 1 from opset 13 for ReduceSum and 18 for the
 * others) and ArgMax/ArgMin.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

static sg_status reduce_out(struct sh_ctx *c, sg_node *n, const struct sh *x, const bool *flags,
                            bool keep)
{
    int64_t out[SG_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!flags[i])
            out[r++] = x->d[i];
        else if (keep)
            out[r++] = 1;
    }
    return sh_set_out(c, n, 0, r, out);
}

sg_status sh_reduce(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    bool keep = sg_attr_int(n, "keepdims", 1) != 0;
    bool noop = sg_attr_int(n, "noop_with_empty_axes", 0) != 0;
    int64_t since = strcmp(n->op_type, "ReduceSum") == 0 ? 13 : 18;
    const int64_t *axes = NULL;
    int32_t k = 0;
    bool flags[SG_MAX_RANK] = {0};
    if (c->opset >= since) {
        if (n->n_inputs > 1 && n->inputs[1] && !sh_in_ints(c, n, 1, &axes, &k)) {
            if (!keep)
                return SG_OK;
            int64_t d[SG_MAX_RANK];
            for (int i = 0; i < x->rank; i++)
                d[i] = x->d[i] == 1 ? 1 : SH_UNK;
            return sh_set_out(c, n, 0, x->rank, d);
        }
    } else {
        size_t na;
        axes = sh_attr_ints(n, "axes", &na);
        k = (int32_t)na;
    }
    if (!k) {
        if (noop && c->opset >= since)
            return sh_copy_out(c, n, 0, 0);
        for (int i = 0; i < x->rank; i++)
            flags[i] = true;
        return reduce_out(c, n, x, flags, keep);
    }
    for (int32_t i = 0; i < k; i++) {
        int64_t a;
        if (!sh_axis(axes[i], x->rank, &a))
            return sh_fail(c, n, "axis %lld out of range for rank %d", (long long)axes[i], x->rank);
        flags[a] = true;
    }
    return reduce_out(c, n, x, flags, keep);
}

sg_status sh_argminmax(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    int64_t a;
    if (!sh_axis(sg_attr_int(n, "axis", 0), x->rank, &a))
        return sh_fail(c, n, "axis %lld out of range for rank %d",
                       (long long)sg_attr_int(n, "axis", 0), x->rank);
    bool flags[SG_MAX_RANK] = {0};
    flags[a] = true;
    return reduce_out(c, n, x, flags, sg_attr_int(n, "keepdims", 1) != 0);
}
