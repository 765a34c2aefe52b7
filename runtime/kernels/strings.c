/*
 * strings.c - the string ops of opset 20: RegexFullMatch, StringConcat and
 * StringSplit.
 *
 * RegexFullMatch: true where the whole string matches `pattern`. ONNX
 * specifies RE2's syntax; the matcher (regex.h) supports the subset listed
 * there, linear time, on UTF-8 code points. A pattern outside the subset
 * fails the node with the reason ("... is not supported"), never matches
 * differently; so does a string that is not valid UTF-8.
 *
 * StringConcat: X + Y elementwise, numpy broadcasting.
 *
 * StringSplit: each string of X split on `delimiter` (every occurrence,
 * empty pieces kept, like Python's str.split(delimiter)) or, with no or an
 * empty delimiter, on runs of ASCII whitespace with the leading and
 * trailing whitespace dropped (str.split()); at most `maxsplit` splits,
 * the rest staying in the last piece. Y is X's shape plus one dim, the
 * largest number of pieces, the shorter rows padded with ""; Z (int64,
 * X's shape) the number of pieces of each. This is the ONNX reference
 * (numpy's char.split); ONNX Runtime 1.30 differs: an empty string split
 * on a delimiter gives it no piece (the reference one, ""), and it splits
 * "whitespace" on spaces alone (the reference also on \t \n \v \f \r),
 * and drops trailing whitespace from a maxsplit remainder (the reference
 * keeps it).
 * Whitespace here is ASCII; Python's also counts \x1c-\x1f and Unicode
 * spaces.
 */
#include "regex.h"
#include "rt_impl.h"

#include <string.h>

static sg_status run_regex_full_match(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_attr *pa = sg_kattr(k, "pattern");
    if (!pa || pa->type != SG_ATTR_STRING)
        return sg_kfail(k, SG_EINVAL, "needs the string attribute 'pattern'");
    struct sg_rx *rx;
    char msg[256];
    if (!sg_rx_compile(pa->s.data, pa->s.len, &rx, msg, sizeof msg))
        return sg_kfail(k, SG_EUNSUPPORTED, "pattern '%.*s': %s",
                        (int)(pa->s.len > 80 ? 80 : pa->s.len), (const char *)pa->s.data, msg);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_BOOL, X->dims, X->rank, &Y);
    const sg_bytes *xs = X->data;
    for (int64_t i = 0; !st && i < X->numel; i++) {
        int r = sg_rx_full_match(rx, xs[i].data, xs[i].len);
        if (r < 0)
            st = sg_kfail(k, SG_EINVAL, "string %lld is not valid UTF-8 (or out of memory)",
                          (long long)i);
        else
            ((uint8_t *)Y->data)[i] = (uint8_t)r;
    }
    sg_rx_free(rx);
    return st;
}

static sg_status run_string_concat(struct sg_kctx *k)
{
    const sg_rt_value *ts[2] = {sg_kin(k, 0), sg_kin(k, 1)};
    if (ts[1]->dtype != SG_DTYPE_STRING)
        return sg_kfail(k, SG_ETYPE, "input Y %s must be a string tensor", sg_kshape(k, ts[1]));
    struct sg_bcast b;
    sg_status st = sg_bcast_init(k, &b, 2, ts);
    sg_rt_value *Y;
    if (st || (st = sg_kout(k, 0, SG_DTYPE_STRING, b.dims, b.rank, &Y)))
        return st;
    const sg_bytes *x = ts[0]->data, *y = ts[1]->data;
    sg_bytes *o = Y->data;
    while (sg_bcast_next(&b))
        for (int64_t j = 0; j < b.run; j++) {
            const sg_bytes *a = &x[b.off[0] + j * b.step[0]], *c = &y[b.off[1] + j * b.step[1]];
            uint8_t *d = sg_kscratch(k, a->len + c->len + 1);
            if (!d)
                return sg_kfail(k, SG_ENOMEM, "out of memory");
            if (a->len)
                memcpy(d, a->data, a->len);
            if (c->len)
                memcpy(d + a->len, c->data, c->len);
            o[b.pos + j].data = d;
            o[b.pos + j].len = a->len + c->len;
        }
    return SG_OK;
}

static bool is_space(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The pieces of s into out (NULL: count only); returns their number. */
static int64_t split_one(const sg_bytes *s, const sg_bytes *delim, int64_t maxsplit, sg_bytes *out)
{
    int64_t n = 0;
    const uint8_t *p = s->data, *end = s->data + s->len;
    if (delim->len) {
        for (;;) {
            const uint8_t *q = NULL;
            if (maxsplit < 0 || n < maxsplit)
                for (const uint8_t *t = p; (size_t)(end - t) >= delim->len; t++)
                    if (memcmp(t, delim->data, delim->len) == 0) {
                        q = t;
                        break;
                    }
            if (out)
                out[n] = (sg_bytes){p, (size_t)((q ? q : end) - p)};
            n++;
            if (!q)
                return n;
            p = q + delim->len;
        }
    }
    for (;;) {
        while (p < end && is_space(*p))
            p++;
        if (p == end)
            return n;
        const uint8_t *q = p;
        if (maxsplit >= 0 && n == maxsplit) {
            q = end; /* the rest, trailing whitespace kept (Python's) */
        } else {
            while (q < end && !is_space(*q))
                q++;
        }
        if (out)
            out[n] = (sg_bytes){p, (size_t)(q - p)};
        n++;
        p = q;
    }
}

static sg_status run_string_split(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_attr *da = sg_kattr(k, "delimiter");
    sg_bytes delim = {(const uint8_t *)"", 0};
    if (da && da->type == SG_ATTR_STRING)
        delim = da->s;
    int64_t maxsplit = sg_kattr(k, "maxsplit") ? sg_kattr_int(k, "maxsplit", -1) : -1;
    if (X->rank + 1 > SG_MAX_RANK)
        return sg_kfail(k, SG_ESHAPE, "input %s has too many dims for one more", sg_kshape(k, X));
    const sg_bytes *xs = X->data;
    int64_t most = 0;
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t c = split_one(&xs[i], &delim, maxsplit, NULL);
        most = c > most ? c : most;
    }
    int64_t yd[SG_MAX_RANK];
    memcpy(yd, X->dims, X->rank * sizeof yd[0]);
    yd[X->rank] = most;
    sg_rt_value *Y, *Z = NULL;
    sg_status st = sg_kout(k, 0, SG_DTYPE_STRING, yd, X->rank + 1, &Y);
    if (st || (sg_kout_wanted(k, 1) && (st = sg_kout(k, 1, SG_DTYPE_INT64, X->dims, X->rank, &Z))))
        return st;
    sg_bytes *ys = Y->data;
    for (int64_t i = 0; i < X->numel; i++) {
        int64_t c = split_one(&xs[i], &delim, maxsplit, ys + i * most);
        if (Z)
            ((int64_t *)Z->data)[i] = c;
    }
    return SG_OK;
}

#define STR SG_KT_STRING
/* One entry per line, as in the other families. */
/* clang-format off */
static const struct sg_kernel kernels[] = {
    {"", "RegexFullMatch", 20, 0, STR, 0, run_regex_full_match, "r"},
    {"", "StringConcat", 20, 0, STR, 0, run_string_concat, "rr"},
    {"", "StringSplit", 20, 0, STR, 0, run_string_split, "r"},
};
/* clang-format on */
SG_KERNEL_FAMILY(strings, kernels);
