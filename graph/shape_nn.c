/*
 * shape_nn.c - shape rules of the network layers with more than one output
 * or a shape of their own: normalizations, Dropout, the recurrent layers,
 * RoiAlign/MaxRoiPool, NonMaxSuppression, DynamicQuantizeLinear, the
 * random generators and the window functions.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

sg_status sh_batchnorm(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_copy_out(c, n, 0, 0);
    struct sh *x = sh_in_ranked(c, n, 0);
    /* Training-mode outputs: running mean and variance, [C]. */
    for (uint32_t i = 1; !st && i < n->n_outputs && i < 5; i++) {
        int64_t ch = x && x->rank >= 2 ? x->d[1] : SH_UNK;
        st = sh_set_out(c, n, i, 1, &ch);
    }
    return st;
}

sg_status sh_layernorm(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_copy_out(c, n, 0, 0);
    struct sh *x = sh_in_ranked(c, n, 0);
    if (st || !x || n->n_outputs < 2)
        return st;
    int64_t axis;
    if (!sh_axis(sg_attr_int(n, "axis", -1), x->rank, &axis))
        return sh_fail(c, n, "axis out of range for rank %d", x->rank);
    int64_t out[SG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        out[i] = i < axis ? x->d[i] : 1;
    for (uint32_t i = 1; !st && i < n->n_outputs && i < 3; i++)
        st = sh_set_out(c, n, i, x->rank, out);
    return st;
}

sg_status sh_dropout(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_copy_out(c, n, 0, 0);
    return st ? st : sh_copy_out(c, n, 1, 0);
}

sg_status sh_rnn(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    int64_t unk[3] = {SH_UNK, SH_UNK, SH_UNK};
    struct sh none = {.rank = 3, .d = unk};
    if (!x)
        x = &none; /* the outputs' ranks and hidden size are the op's own */
    if (x->rank != 3)
        return sh_fail(c, n, "input rank %d, not 3", x->rank);
    bool batch_first = sg_attr_int(n, "layout", 0) != 0;
    sg_bytes dir = sg_attr_bytes(n, "direction", (sg_bytes){(const uint8_t *)"forward", 7});
    int64_t dirs = dir.len == 13 && !memcmp(dir.data, "bidirectional", 13) ? 2 : 1;
    int64_t hidden = sg_attr_int(n, "hidden_size", -1);
    if (hidden < 0) {
        struct sh *r = sh_in_ranked(c, n, 2); /* R: [dirs, gates * hidden, hidden] */
        hidden = r && r->rank == 3 ? r->d[2] : SH_UNK;
    }
    int64_t seq = x->d[batch_first ? 1 : 0], batch = x->d[batch_first ? 0 : 1];
    int64_t y[4], h[3];
    if (batch_first) {
        int64_t a[4] = {batch, seq, dirs, hidden}, b[3] = {batch, dirs, hidden};
        memcpy(y, a, sizeof a);
        memcpy(h, b, sizeof b);
    } else {
        int64_t a[4] = {seq, dirs, batch, hidden}, b[3] = {dirs, batch, hidden};
        memcpy(y, a, sizeof a);
        memcpy(h, b, sizeof b);
    }
    sg_status st = sh_set_out(c, n, 0, 4, y);
    for (uint32_t i = 1; !st && i < n->n_outputs && i < 3; i++)
        st = sh_set_out(c, n, i, 3, h);
    return st;
}

sg_status sh_roialign(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *rois = sh_in_ranked(c, n, 1);
    if (!x || x->rank != 4)
        return x ? sh_fail(c, n, "input rank %d, not 4", x->rank) : SG_OK;
    int64_t num = rois && rois->rank == 2 ? rois->d[0] : SH_UNK;
    int64_t out[4] = {num, x->d[1], 1, 1};
    if (strcmp(n->op_type, "MaxRoiPool") == 0) {
        size_t k;
        const int64_t *p = sh_attr_ints(n, "pooled_shape", &k);
        if (!p || k != 2)
            return sh_fail(c, n, "pooled_shape must have 2 entries");
        out[2] = p[0];
        out[3] = p[1];
    } else {
        out[2] = sg_attr_int(n, "output_height", 1);
        out[3] = sg_attr_int(n, "output_width", 1);
    }
    if (out[2] < 0 || out[3] < 0)
        return sh_fail(c, n, "negative output size");
    return sh_set_out(c, n, 0, 4, out);
}

sg_status sh_nms(struct sh_ctx *c, sg_node *n)
{
    int64_t out[2] = {sh_fresh(c), 3};
    return sh_set_out(c, n, 0, 2, out);
}

sg_status sh_dynquant(struct sh_ctx *c, sg_node *n)
{
    sg_status st = sh_copy_out(c, n, 0, 0);
    if (!st)
        st = sh_set_out(c, n, 1, 0, NULL);
    return st ? st : sh_set_out(c, n, 2, 0, NULL);
}

sg_status sh_random(struct sh_ctx *c, sg_node *n)
{
    if (strstr(n->op_type, "Like"))
        return sh_copy_out(c, n, 0, 0);
    size_t k;
    const int64_t *s = sh_attr_ints(n, "shape", &k);
    if (!s)
        return sh_fail(c, n, "no shape attribute");
    if (k > SG_MAX_RANK)
        return sh_fail(c, n, "rank %zu", k);
    for (size_t i = 0; i < k; i++)
        if (s[i] < 0)
            return sh_fail(c, n, "negative dim %lld", (long long)s[i]);
    return sh_set_out(c, n, 0, (int)k, s);
}

/* HannWindow, HammingWindow, BlackmanWindow: [size]. */
sg_status sh_window(struct sh_ctx *c, sg_node *n)
{
    const int64_t *v;
    int32_t k;
    int64_t len = SH_UNK;
    if (sh_in_ints(c, n, 0, &v, &k) && k == 1) {
        if (v[0] < 0)
            return sh_fail(c, n, "negative size %lld", (long long)v[0]);
        len = v[0];
    }
    return sh_set_out(c, n, 0, 1, &len);
}
