/*
 * text.c - StringNormalizer (opset 10) and TfIdfVectorizer (opset 9).
 *
 * StringNormalizer drops stopwords (exactly, or ignoring case) and then
 * changes case. Case mapping is ASCII: it needs no locale data and agrees
 * with every locale on ASCII text except Turkish and Azeri (dotted and
 * dotless i). Where a case operation would meet non-ASCII text, or a
 * Turkish/Azeri locale, the node fails rather than guess: that mapping
 * needs locale data this runtime does not carry.
 *
 * TfIdfVectorizer counts, per row, the n-grams of the pool found with every
 * skip distance 0..max_skip_count (unigrams counted once), then applies the
 * TF, IDF or TFIDF weighting, as ONNX Runtime does (weights are taken per
 * output column).
 */
#include "rt_impl.h"

#include <string.h>

/* ---------------------------------------------------- StringNormalizer */

static bool ascii_only(const sg_bytes *s)
{
    for (size_t i = 0; i < s->len; i++)
        if (s->data[i] & 0x80)
            return false;
    return true;
}

static bool eq_nocase(const sg_bytes *a, const sg_bytes *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++) {
        uint8_t x = a->data[i], y = b->data[i];
        x = x >= 'A' && x <= 'Z' ? (uint8_t)(x + 32) : x;
        y = y >= 'A' && y <= 'Z' ? (uint8_t)(y + 32) : y;
        if (x != y)
            return false;
    }
    return true;
}

static sg_status run_string_normalizer(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->dtype != SG_DTYPE_STRING || X->rank < 1 || X->rank > 2 ||
        (X->rank == 2 && X->dims[0] != 1))
        return sg_kfail(k, SG_ESHAPE, "X must be string [C] or [1, C], got %s", sg_kshape(k, X));
    const char *action = sg_kattr_string(k, "case_change_action", "NONE");
    int change = strcmp(action, "LOWER") == 0 ? 1 : strcmp(action, "UPPER") == 0 ? 2 : 0;
    if (!change && strcmp(action, "NONE") != 0)
        return sg_kfail(k, SG_EINVAL, "case_change_action '%s' is not LOWER, UPPER or NONE",
                        action);
    bool sensitive = sg_kattr_int(k, "is_case_sensitive", 0) != 0;
    const sg_attr *sw = sg_kattr(k, "stopwords");
    size_t n_sw = sw && sw->type == SG_ATTR_STRINGS ? sw->n_strings : 0;
    const char *locale = sg_kattr_string(k, "locale", "en_US");
    bool needs_case = change || (n_sw && !sensitive);
    if (needs_case && (strncmp(locale, "tr", 2) == 0 || strncmp(locale, "az", 2) == 0))
        return sg_kfail(k, SG_EUNSUPPORTED,
                        "case mapping for locale '%s' needs locale data (dotted and dotless i)",
                        locale);
    const sg_bytes *in = X->data;
    int64_t C = X->numel;
    bool *keep = sg_kscratch(k, (size_t)C + 1);
    if (!keep)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int64_t nk = 0;
    for (int64_t i = 0; i < C; i++) {
        if (needs_case && !ascii_only(&in[i]))
            return sg_kfail(k, SG_EUNSUPPORTED,
                            "element %lld is not ASCII: its case mapping needs locale data",
                            (long long)i);
        keep[i] = true;
        for (size_t j = 0; j < n_sw && keep[i]; j++) {
            const sg_bytes *w = &sw->strings[j];
            keep[i] = sensitive ? !(w->len == in[i].len &&
                                    (!w->len || memcmp(w->data, in[i].data, w->len) == 0))
                                : !eq_nocase(w, &in[i]);
        }
        nk += keep[i];
    }
    /* all dropped: one empty string */
    int64_t od[2] = {1, nk ? nk : 1};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_STRING, X->rank == 2 ? od : od + 1, X->rank, &Y);
    if (st)
        return st;
    sg_bytes *out = Y->data;
    for (int64_t i = 0, o = 0; i < C; i++) {
        if (!keep[i])
            continue;
        uint8_t *s = sg_kscratch(k, in[i].len + 1);
        if (!s)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (size_t j = 0; j < in[i].len; j++) {
            uint8_t ch = in[i].data[j];
            if (change == 1 && ch >= 'A' && ch <= 'Z')
                ch = (uint8_t)(ch + 32);
            else if (change == 2 && ch >= 'a' && ch <= 'z')
                ch = (uint8_t)(ch - 32);
            s[j] = ch;
        }
        out[o++] = (sg_bytes){s, in[i].len};
    }
    return SG_OK;
}

/* ----------------------------------------------------- TfIdfVectorizer */

/* The n-grams of the pool of one length, sorted for binary search. */
struct gram_set {
    int64_t n, count;
    int64_t *order; /* pool n-gram numbers (0-based over the whole pool) */
    int64_t first;  /* pool element where this length starts */
};

struct tfidf {
    bool strings;
    const int64_t *ints;    /* pool_int64s */
    const sg_bytes *strs;   /* pool_strings */
    const int64_t *gram_at; /* ngram number -> first pool element */
};

/* Compare pool elements a and b. */
static int cmp_elem(const struct tfidf *t, int64_t a, int64_t b)
{
    if (!t->strings)
        return (t->ints[a] > t->ints[b]) - (t->ints[a] < t->ints[b]);
    const sg_bytes *x = &t->strs[a], *y = &t->strs[b];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->data, y->data, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Compare the pool n-grams numbered a and b, of n elements each. */
static int cmp_gram(const struct tfidf *t, int64_t n, int64_t a, int64_t b)
{
    int64_t x = t->gram_at[a], y = t->gram_at[b];
    for (int64_t i = 0; i < n; i++) {
        int c = cmp_elem(t, x + i, y + i);
        if (c)
            return c;
    }
    return 0;
}

/* Sort v[0..count) of n-gram numbers (bottom-up merge sort through tmp). */
static void sort_grams(const struct tfidf *t, int64_t n, int64_t *v, int64_t *tmp, int64_t count)
{
    for (int64_t w = 1; w < count; w *= 2) {
        for (int64_t lo = 0; lo < count; lo += 2 * w) {
            int64_t mid = lo + w < count ? lo + w : count;
            int64_t hi = lo + 2 * w < count ? lo + 2 * w : count;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = cmp_gram(t, n, v[j], v[i]) < 0 ? v[j++] : v[i++];
            while (i < mid)
                tmp[o++] = v[i++];
            while (j < hi)
                tmp[o++] = v[j++];
        }
        memcpy(v, tmp, (size_t)count * sizeof *v);
    }
}

/* Compare pool n-gram starting at pool element p with input elements at
 * in[pos[0..n)]. */
static int cmp_input(const struct tfidf *t, int64_t p, const sg_rt_value *X, const int64_t *pos,
                     int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        int c;
        if (t->strings) {
            const sg_bytes *x = &t->strs[p + i], *y = &((const sg_bytes *)X->data)[pos[i]];
            size_t m = x->len < y->len ? x->len : y->len;
            c = m ? memcmp(x->data, y->data, m) : 0;
            if (!c)
                c = (x->len > y->len) - (x->len < y->len);
        } else {
            int64_t a = t->ints[p + i], b = sg_rt_get_i64(X, pos[i]);
            c = (a > b) - (a < b);
        }
        if (c)
            return c;
    }
    return 0;
}

static sg_status run_tfidf(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->rank < 1 || X->rank > 2)
        return sg_kfail(k, SG_ESHAPE, "X must be [C] or [N, C], got %s", sg_kshape(k, X));
    int64_t minn = sg_kattr_int(k, "min_gram_length", 0),
            maxn = sg_kattr_int(k, "max_gram_length", 0);
    int64_t maxskip = sg_kattr_int(k, "max_skip_count", 0);
    const char *mode = sg_kattr_string(k, "mode", "");
    int wmode = strcmp(mode, "TF") == 0 ? 0 : strcmp(mode, "IDF") == 0 ? 1 : 2;
    if (wmode == 2 && strcmp(mode, "TFIDF") != 0)
        return sg_kfail(k, SG_EINVAL, "mode '%s' is not TF, IDF or TFIDF", mode);
    if (minn < 1 || maxn < minn || maxskip < 0)
        return sg_kfail(k, SG_EINVAL,
                        "min_gram_length %lld, max_gram_length %lld and max_skip_count %lld are "
                        "inconsistent",
                        (long long)minn, (long long)maxn, (long long)maxskip);
    const int64_t *counts, *indexes;
    const float *weights;
    int64_t n_counts = sg_kattr_ints(k, "ngram_counts", &counts);
    int64_t n_idx = sg_kattr_ints(k, "ngram_indexes", &indexes);
    int64_t n_w = sg_kattr_floats(k, "weights", &weights);
    struct tfidf t = {0};
    const sg_attr *ps = sg_kattr(k, "pool_strings");
    int64_t pool = sg_kattr_ints(k, "pool_int64s", &t.ints);
    t.strings = ps && ps->type == SG_ATTR_STRINGS;
    if (t.strings) {
        t.strs = ps->strings;
        pool = (int64_t)ps->n_strings;
    }
    if (pool < 0 || n_counts < 1 || n_idx < 0)
        return sg_kfail(k, SG_EINVAL,
                        "pool_int64s or pool_strings, ngram_counts and "
                        "ngram_indexes are required");
    if (t.strings != (X->dtype == SG_DTYPE_STRING))
        return sg_kfail(k, SG_ETYPE, "X %s does not match the %s pool", sg_kshape(k, X),
                        t.strings ? "string" : "integer");
    /* n-gram numbers: length g (1-based) holds pool elements
     * [counts[g-1], counts[g]) in grams of g elements */
    int64_t ngrams = 0;
    for (int64_t g = 1; g <= n_counts; g++) {
        int64_t lo = counts[g - 1], hi = g < n_counts ? counts[g] : pool;
        if (lo < 0 || hi < lo || hi > pool || (hi - lo) % g)
            return sg_kfail(k, SG_EINVAL,
                            "ngram_counts does not split the pool of %lld into "
                            "whole n-grams",
                            (long long)pool);
        ngrams += (hi - lo) / g;
    }
    if (n_idx != ngrams || (n_w >= 0 && n_w != ngrams))
        return sg_kfail(k, SG_EINVAL,
                        "%lld n-grams in the pool but %lld ngram_indexes and %lld weights",
                        (long long)ngrams, (long long)n_idx, (long long)n_w);
    int64_t width = 0;
    for (int64_t i = 0; i < n_idx; i++) {
        if (indexes[i] < 0 || indexes[i] == INT64_MAX)
            return sg_kfail(k, SG_EINVAL, "ngram_indexes[%lld] is %lld", (long long)i,
                            (long long)indexes[i]);
        width = indexes[i] + 1 > width ? indexes[i] + 1 : width;
    }
    int64_t *gram_at = sg_kscratch(k, (size_t)(ngrams + 1) * sizeof *gram_at);
    struct gram_set *sets = sg_kscratch(k, (size_t)(n_counts + 1) * sizeof *sets);
    if (!gram_at || !sets)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    t.gram_at = gram_at;
    for (int64_t g = 1, id = 0; g <= n_counts; g++) {
        int64_t lo = counts[g - 1], hi = g < n_counts ? counts[g] : pool;
        struct gram_set *s = &sets[g - 1];
        s->n = g;
        s->count = (hi - lo) / g;
        s->order = sg_kscratch(k, (size_t)(s->count + 1) * sizeof *s->order);
        if (!s->order)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (int64_t j = 0; j < s->count; j++, id++) {
            gram_at[id] = lo + j * g;
            s->order[j] = id;
        }
        int64_t *tmp = sg_kscratch(k, (size_t)(s->count + 1) * sizeof *tmp);
        if (!tmp)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        sort_grams(&t, g, s->order, tmp, s->count);
    }

    int64_t rows = X->rank == 2 ? X->dims[0] : 1, C = X->dims[X->rank - 1];
    int64_t od[2] = {rows, width};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_FLOAT, X->rank == 2 ? od : od + 1, X->rank, &Y);
    if (st)
        return st;
    float *y = Y->data;
    int64_t pos[64];
    if (maxn > 64)
        return sg_kfail(k, SG_ERANGE, "max_gram_length %lld is above 64", (long long)maxn);
    /* A gram of two or more skipping C elements or more does not fit a row:
     * larger skips count nothing more (and would overflow the positions). */
    if (maxskip > C)
        maxskip = C;
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * width;
        int64_t start_n = minn;
        for (int64_t skip = 0; skip <= maxskip; skip++) {
            for (int64_t s = 0; s < C; s++)
                for (int64_t n = start_n; n <= maxn && n <= n_counts; n++) {
                    int64_t last = s + (n - 1) * (skip + 1);
                    if (last >= C)
                        break;
                    for (int64_t i = 0; i < n; i++)
                        pos[i] = r * C + s + i * (skip + 1);
                    const struct gram_set *gs = &sets[n - 1];
                    int64_t lo = 0, hi = gs->count;
                    while (lo < hi) {
                        int64_t mid = (lo + hi) / 2;
                        int c = cmp_input(&t, gram_at[gs->order[mid]], X, pos, n);
                        if (c == 0) {
                            yr[indexes[gs->order[mid]]] += 1;
                            break;
                        }
                        if (c < 0)
                            lo = mid + 1;
                        else
                            hi = mid;
                    }
                }
            /* unigrams do not depend on the skip distance: count them once */
            if (start_n == 1 && ++start_n > maxn)
                break;
        }
    }
    if (wmode != 0) {
        /* like ONNX Runtime and the ONNX reference, weights[j] weighs output
         * column j (the same as n-gram j when ngram_indexes is 0, 1, 2...) */
        if (n_w >= 0 && width > n_w)
            return sg_kfail(k, SG_EINVAL, "%lld weights for %lld output columns", (long long)n_w,
                            (long long)width);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t i = 0; i < width; i++) {
                float *v = &y[r * width + i], w = n_w >= 0 ? weights[i] : 1;
                *v = wmode == 1 ? (*v > 0 ? w : 0) : *v * w;
            }
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "StringNormalizer", 10, 0, SG_KT_STRING, 0, run_string_normalizer, "r"},
    {"", "TfIdfVectorizer", 9, 0, SG_KT_STRING | SG_KT(SG_DTYPE_INT32) | SG_KT(SG_DTYPE_INT64), 0,
     run_tfidf, "r"},
};
SG_KERNEL_FAMILY(text, kernels);
