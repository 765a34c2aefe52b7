/*
 * shape_misc.c - shape rules of the remaining ops the runtime runs: Einsum
 * (from its equation), Det, GridSample, MaxUnpool, the losses, the signal
 * ops (DFT, STFT, MelWeightMatrix), Col2Im, the text ops and SequenceMap.
 */
#include "ir_impl.h"
#include "shape_impl.h"

#include <string.h>

sg_status sh_det(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    if (x->rank < 2)
        return sh_fail(c, n, "input rank %d is below 2", x->rank);
    return sh_set_out(c, n, 0, x->rank - 2, x->d);
}

sg_status sh_grid_sample(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *g = sh_in_ranked(c, n, 1);
    if (!x || !g)
        return SG_OK;
    if (x->rank < 3 || g->rank != x->rank)
        return sh_fail(c, n, "input rank %d and grid rank %d", x->rank, g->rank);
    int64_t out[SG_MAX_RANK];
    if (!sh_unify(x->d[0], g->d[0], &out[0]))
        return sh_fail(c, n, "input and grid batches differ");
    out[1] = x->d[1];
    for (int i = 1; i + 1 < g->rank; i++)
        out[1 + i] = g->d[i];
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_max_unpool(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    if (x->rank < 3)
        return sh_fail(c, n, "input rank %d is below 3", x->rank);
    int k = x->rank - 2;
    const int64_t *os;
    int32_t nos;
    int64_t out[SG_MAX_RANK];
    if (n->n_inputs > 2 && n->inputs[2]) {
        if (!sh_in_ints(c, n, 2, &os, &nos) || nos != x->rank) {
            for (int i = 0; i < x->rank; i++)
                out[i] = SH_UNK;
            return sh_set_out(c, n, 0, x->rank, out);
        }
        return sh_set_out(c, n, 0, x->rank, os);
    }
    size_t nk, ns, np;
    const int64_t *ks = sh_attr_ints(n, "kernel_shape", &nk);
    const int64_t *st = sh_attr_ints(n, "strides", &ns);
    const int64_t *pd = sh_attr_ints(n, "pads", &np);
    if (!ks || nk != (size_t)k || (st && ns != (size_t)k) || (pd && np != 2 * (size_t)k))
        return sh_fail(c, n, "kernel_shape, strides or pads do not match %d spatial dims", k);
    out[0] = x->d[0];
    out[1] = x->d[1];
    for (int i = 0; i < k; i++) {
        int64_t in = x->d[2 + i], s = st ? st[i] : 1, v;
        if (!sh_num(in)) {
            out[2 + i] = SH_UNK;
            continue;
        }
        if (in < 1 || !sg_dim_mul(in - 1, s, &v) || !sg_dim_add(v, ks[i], &v) ||
            !sg_dim_sub(v, pd ? pd[i] + pd[k + i] : 0, &v) || v < 0)
            return sh_fail(c, n, "spatial dim %d of the output is negative or overflows", i);
        out[2 + i] = v;
    }
    return sh_set_out(c, n, 0, x->rank, out);
}

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. */
sg_status sh_loss(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    sg_bytes red = sg_attr_bytes(n, "reduction", (sg_bytes){(const uint8_t *)"mean", 4});
    sg_status st = SG_OK;
    if (red.len == 4 && !memcmp(red.data, "none", 4)) {
        if (x && x->rank >= 2) {
            int64_t out[SG_MAX_RANK];
            out[0] = x->d[0];
            for (int i = 2; i < x->rank; i++)
                out[i - 1] = x->d[i];
            st = sh_set_out(c, n, 0, x->rank - 1, out);
        }
    } else {
        st = sh_set_out(c, n, 0, 0, NULL);
    }
    return st || n->n_outputs < 2 ? st : sh_copy_out(c, n, 1, 0);
}

static int64_t in_scalar(struct sh_ctx *c, sg_node *n, uint32_t i)
{
    const int64_t *v;
    int32_t k;
    return i < n->n_inputs && n->inputs[i] && sh_in_ints(c, n, i, &v, &k) && k == 1 ? v[0] : SH_UNK;
}

sg_status sh_dft(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x)
        return SG_OK;
    if (x->rank < 2)
        return sh_fail(c, n, "input rank %d is below 2", x->rank);
    int64_t axis = c->opset >= 20 ? in_scalar(c, n, 2) : sg_attr_int(n, "axis", 1);
    if (c->opset >= 20 && (n->n_inputs < 3 || !n->inputs[2]))
        axis = -2;
    int64_t out[SG_MAX_RANK];
    sh_dims_copy(out, x->d, x->rank);
    out[x->rank - 1] = 2;
    if (axis == SH_UNK) {
        for (int i = 0; i + 1 < x->rank; i++)
            out[i] = i ? SH_UNK : x->d[0];
        return sh_set_out(c, n, 0, x->rank, out);
    }
    /* The axis counts the last (complex) dim in opset 20, not before. */
    int64_t a;
    if (!sh_axis(axis, c->opset >= 20 ? x->rank : x->rank - 1, &a) || a == x->rank - 1)
        return sh_fail(c, n, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    int64_t len = n->n_inputs > 1 && n->inputs[1] ? in_scalar(c, n, 1) : x->d[a];
    if (sg_attr_int(n, "onesided", 0) && sh_num(len))
        len = len / 2 + 1;
    else if (sg_attr_int(n, "onesided", 0))
        len = SH_UNK;
    out[a] = len;
    return sh_set_out(c, n, 0, x->rank, out);
}

sg_status sh_stft(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0), *w = sh_in_ranked(c, n, 2);
    if (!x)
        return SG_OK;
    if (x->rank != 3)
        return sh_fail(c, n, "signal rank %d, not 3", x->rank);
    int64_t step = in_scalar(c, n, 1), fl = in_scalar(c, n, 3);
    if (fl == SH_UNK && w && w->rank == 1)
        fl = w->d[0];
    int64_t frames = SH_UNK, bins = SH_UNK;
    if (sh_num(step) && step > 0 && sh_num(fl) && sh_num(x->d[1])) {
        if (fl > x->d[1])
            return sh_fail(c, n, "frame length %lld is longer than the signal %lld", (long long)fl,
                           (long long)x->d[1]);
        frames = (x->d[1] - fl) / step + 1;
    }
    if (sh_num(fl))
        bins = sg_attr_int(n, "onesided", 1) ? fl / 2 + 1 : fl;
    int64_t out[4] = {x->d[0], frames, bins, 2};
    return sh_set_out(c, n, 0, 4, out);
}

sg_status sh_mel(struct sh_ctx *c, sg_node *n)
{
    int64_t bins = in_scalar(c, n, 0), len = in_scalar(c, n, 1);
    int64_t out[2] = {sh_num(len) ? len / 2 + 1 : SH_UNK, sh_num(bins) ? bins : SH_UNK};
    return sh_set_out(c, n, 0, 2, out);
}

sg_status sh_col2im(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    const int64_t *img, *blk;
    int32_t ni, nb;
    if (!x || !sh_in_ints(c, n, 1, &img, &ni) || !sh_in_ints(c, n, 2, &blk, &nb))
        return SG_OK;
    if (x->rank != 3 || ni != nb || ni + 2 > SG_MAX_RANK)
        return sh_fail(c, n, "input rank %d, image_shape of %d and block_shape of %d", x->rank, ni,
                       nb);
    int64_t prod = 1;
    for (int32_t i = 0; i < nb; i++)
        if (blk[i] < 1 || !sg_dim_mul(prod, blk[i], &prod))
            return sh_fail(c, n, "block_shape entry %lld", (long long)blk[i]);
    int64_t out[SG_MAX_RANK];
    out[0] = x->d[0];
    out[1] = SH_UNK;
    if (sh_num(x->d[1])) {
        if (x->d[1] % prod)
            return sh_fail(c, n, "dim 1 (%lld) is not a multiple of the block size %lld",
                           (long long)x->d[1], (long long)prod);
        out[1] = x->d[1] / prod;
    }
    for (int32_t i = 0; i < ni; i++)
        out[2 + i] = img[i];
    return sh_set_out(c, n, 0, ni + 2, out);
}

sg_status sh_string_normalizer(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    if (!x || x->rank < 1 || x->rank > 2)
        return SG_OK;
    int64_t out[2] = {x->d[0], SH_UNK};
    if (x->rank == 1) {
        out[0] = sh_fresh(c);
        return sh_set_out(c, n, 0, 1, out);
    }
    out[1] = sh_fresh(c);
    return sh_set_out(c, n, 0, 2, out);
}

sg_status sh_tfidf(struct sh_ctx *c, sg_node *n)
{
    struct sh *x = sh_in_ranked(c, n, 0);
    size_t k;
    const int64_t *idx = sh_attr_ints(n, "ngram_indexes", &k);
    if (!x || x->rank < 1 || x->rank > 2)
        return SG_OK;
    int64_t m = -1;
    for (size_t i = 0; i < k; i++)
        m = idx[i] > m ? idx[i] : m;
    int64_t out[2] = {x->d[0], m + 1};
    if (x->rank == 1)
        return sh_set_out(c, n, 0, 1, out + 1);
    return sh_set_out(c, n, 0, 2, out);
}

sg_status sh_sequence_map(struct sh_ctx *c, sg_node *n)
{
    sg_status st = SG_OK;
    for (uint32_t i = 0; i < n->n_outputs && !st; i++)
        st = sh_set_kind(c, n, i, SH_SEQ, -1, NULL);
    return st;
}

/* ---------------------------------------------------------------- Einsum */

/* One term of the equation: letters (or '.' for the ellipsis). */
struct term {
    char sym[SG_MAX_RANK + 3];
    int n;
    bool ellipsis;
};

static bool parse_term(const char *s, size_t len, struct term *t)
{
    t->n = 0;
    t->ellipsis = false;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch == ' ')
            continue;
        if (ch == '.') {
            if (t->ellipsis || i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.')
                return false;
            t->ellipsis = true;
            t->sym[t->n++] = '.';
            i += 2;
            continue;
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) || t->n >= SG_MAX_RANK)
            return false;
        t->sym[t->n++] = ch;
    }
    return true;
}

sg_status sh_einsum(struct sh_ctx *c, sg_node *n)
{
    sg_bytes eq = sg_attr_bytes(n, "equation", (sg_bytes){NULL, 0});
    if (!eq.len || n->n_inputs > 16)
        return SG_OK;
    const char *s = (const char *)eq.data, *arrow = NULL;
    for (size_t i = 0; i + 1 < eq.len; i++)
        if (s[i] == '-' && s[i + 1] == '>')
            arrow = s + i;
    size_t lhs_len = arrow ? (size_t)(arrow - s) : eq.len;
    int64_t letter[128];
    bool seen[128] = {0};
    int count[128] = {0};
    for (int i = 0; i < 128; i++)
        letter[i] = SH_UNK;
    int64_t ell[SG_MAX_RANK];
    int ell_rank = -1;
    size_t start = 0;
    uint32_t k = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && s[i] != ',')
            continue;
        struct term t;
        if (k >= n->n_inputs || !parse_term(s + start, i - start, &t))
            return sh_fail(c, n, "equation '%.*s' does not parse or fit the inputs", (int)eq.len,
                           s);
        struct sh *x = sh_in_ranked(c, n, k++);
        start = i + 1;
        if (!x)
            return SG_OK;
        int fixed = t.n - t.ellipsis;
        if (x->rank < fixed || (!t.ellipsis && x->rank != fixed))
            return sh_fail(c, n, "input %u of rank %d for the term of %d letters", k - 1, x->rank,
                           fixed);
        int er = x->rank - fixed, pos = 0;
        for (int j = 0; j < t.n; j++) {
            if (t.sym[j] == '.') {
                /* Ellipsis dims broadcast, right-aligned. */
                if (ell_rank < er) {
                    for (int q = ell_rank < 0 ? 0 : ell_rank; q < er; q++)
                        ell[q] = 1;
                    if (ell_rank > 0) {
                        for (int q = er - 1; q >= er - ell_rank; q--)
                            ell[q] = ell[q - (er - ell_rank)];
                        for (int q = 0; q < er - ell_rank; q++)
                            ell[q] = 1;
                    }
                    ell_rank = er;
                }
                for (int q = 0; q < er; q++) {
                    int64_t *e = &ell[ell_rank - er + q];
                    if (!sh_bcast_dim(*e, x->d[pos + q], e))
                        return sh_fail(c, n, "ellipsis dims do not broadcast");
                }
                pos += er;
                continue;
            }
            unsigned char ch = (unsigned char)t.sym[j];
            int64_t d = x->d[pos++];
            if (!seen[ch]) {
                letter[ch] = d;
                seen[ch] = true;
            } else if (!sh_bcast_dim(letter[ch], d, &letter[ch])) {
                return sh_fail(c, n, "label '%c' has sizes that differ", ch);
            }
            count[ch]++;
        }
    }
    if (k != n->n_inputs)
        return sh_fail(c, n, "equation has %u terms for %u inputs", k, n->n_inputs);
    int64_t out[SG_MAX_RANK];
    int r = 0;
    if (ell_rank < 0)
        ell_rank = 0;
    if (arrow) {
        struct term t;
        if (!parse_term(arrow + 2, eq.len - lhs_len - 2, &t))
            return sh_fail(c, n, "output term does not parse");
        for (int j = 0; j < t.n; j++) {
            if (t.sym[j] == '.') {
                for (int q = 0; q < ell_rank && r < SG_MAX_RANK; q++)
                    out[r++] = ell[q];
                continue;
            }
            unsigned char ch = (unsigned char)t.sym[j];
            if (!seen[ch])
                return sh_fail(c, n, "output label '%c' is not an input label", ch);
            if (r < SG_MAX_RANK)
                out[r++] = letter[ch];
        }
    } else {
        for (int q = 0; q < ell_rank; q++)
            out[r++] = ell[q];
        for (int ch = 'A'; ch <= 'z' && r < SG_MAX_RANK; ch++)
            if (seen[ch] && count[ch] == 1)
                out[r++] = letter[ch];
    }
    return sh_set_out(c, n, 0, r, out);
}
