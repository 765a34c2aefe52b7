/*
 * text.c - StringNormalizer and TfIdfVectorizer.
 *
 * Case changes are ASCII only (the runtime carries no locale data: bytes
 * outside ASCII pass through unchanged), which is what the `locale`
 * attribute's default en_US gives for ASCII text.
 */
#include "rt_impl.h"

#include <ctype.h>
#include <string.h>

static bool bytes_eq(const sg_bytes *a, const sg_bytes *b, bool case_sensitive)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++) {
        int x = a->data[i], y = b->data[i];
        if (!case_sensitive && x < 128 && y < 128) {
            x = tolower(x);
            y = tolower(y);
        }
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
        return sg_kfail(k, SG_ESHAPE, "input must be strings of shape [C] or [1, C], got %s",
                        sg_kshape(k, X));
    const char *act = sg_kattr_string(k, "case_change_action", "NONE");
    int change = strcmp(act, "LOWER") == 0 ? -1 : strcmp(act, "UPPER") == 0 ? 1 : 0;
    if (!change && strcmp(act, "NONE") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown case_change_action '%s'", act);
    bool cs = sg_kattr_int(k, "is_case_sensitive", 0) != 0;
    const sg_attr *sw = sg_kattr(k, "stopwords");
    const sg_bytes *in = X->data;
    int64_t kept = 0;
    bool *keep = sg_kscratch(k, (size_t)X->numel + 1);
    if (!keep)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < X->numel; i++) {
        keep[i] = true;
        for (size_t s = 0; sw && s < sw->n_strings && keep[i]; s++)
            if (bytes_eq(&in[i], &sw->strings[s], cs))
                keep[i] = false;
        kept += keep[i];
    }
    /* Everything removed: one empty string. */
    int64_t n = kept ? kept : 1;
    int64_t dims[2] = {1, n};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_STRING, X->rank == 2 ? dims : dims + 1, X->rank, &Y);
    if (st || !kept)
        return st;
    sg_bytes *out = Y->data;
    int64_t j = 0;
    for (int64_t i = 0; i < X->numel; i++) {
        if (!keep[i])
            continue;
        uint8_t *s = sg_kscratch(k, in[i].len + 1);
        if (!s)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        for (size_t c = 0; c < in[i].len; c++) {
            int ch = in[i].data[c];
            s[c] = (uint8_t)(ch >= 128 || !change ? ch : change > 0 ? toupper(ch) : tolower(ch));
        }
        out[j].data = s;
        out[j].len = in[i].len;
        j++;
    }
    return SG_OK;
}

/* Element i of the input (int or string) equals pool entry p. */
static bool pool_match(const sg_rt_value *X, int64_t i, const sg_attr *ints, const sg_attr *strs,
                       int64_t p)
{
    if (X->dtype == SG_DTYPE_STRING)
        return bytes_eq(&((const sg_bytes *)X->data)[i], &strs->strings[p], true);
    return sg_rt_get_i64(X, i) == ints->ints[p];
}

static sg_status run_tfidf(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    int64_t minn = sg_kattr_int(k, "min_gram_length", 1),
            maxn = sg_kattr_int(k, "max_gram_length", 1);
    int64_t skips = sg_kattr_int(k, "max_skip_count", 0);
    const char *mode = sg_kattr_string(k, "mode", "TF");
    const int64_t *counts, *indexes;
    int64_t ncounts = sg_kattr_ints(k, "ngram_counts", &counts);
    int64_t nindex = sg_kattr_ints(k, "ngram_indexes", &indexes);
    const float *weights;
    int64_t nweights = sg_kattr_floats(k, "weights", &weights);
    const sg_attr *pints = sg_kattr(k, "pool_int64s"), *pstrs = sg_kattr(k, "pool_strings");
    int64_t npool = pints ? (int64_t)pints->n_ints : pstrs ? (int64_t)pstrs->n_strings : 0;
    bool tf = strcmp(mode, "TF") == 0, idf = strcmp(mode, "IDF") == 0;
    if (!tf && !idf && strcmp(mode, "TFIDF") != 0)
        return sg_kfail(k, SG_EINVAL, "unknown mode '%s'", mode);
    if (minn < 1 || maxn < minn || ncounts < maxn || nindex < 0 || skips < 0 ||
        (X->dtype == SG_DTYPE_STRING ? !pstrs : !pints))
        return sg_kfail(k, SG_EINVAL, "bad n-gram attributes or pool for %s", sg_kshape(k, X));
    if (X->rank < 1 || X->rank > 2)
        return sg_kfail(k, SG_ESHAPE, "input must be [C] or [N, C], got %s", sg_kshape(k, X));
    int64_t width = 0;
    for (int64_t i = 0; i < nindex; i++)
        width = indexes[i] + 1 > width ? indexes[i] + 1 : width;
    int64_t rows = X->rank == 2 ? X->dims[0] : 1, C = X->dims[X->rank - 1];
    int64_t dims[2] = {rows, width};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, SG_DTYPE_FLOAT, X->rank == 2 ? dims : dims + 1, X->rank, &Y);
    if (st)
        return st;
    float *y = Y->data;
    for (int64_t r = 0; r < rows; r++) {
        int64_t base = r * C;
        for (int64_t n = minn; n <= maxn; n++) {
            /* Pool entries of n-grams of length n: [counts[n-1], next). */
            int64_t start = counts[n - 1];
            int64_t end = n < ncounts ? counts[n] : npool;
            int64_t first_gram = 0; /* global n-gram number of `start` */
            for (int64_t m = 1; m < n; m++) {
                int64_t e = m < ncounts ? counts[m] : npool;
                first_gram += (e - counts[m - 1]) / m;
            }
            for (int64_t skip = 0; skip <= (n == 1 ? 0 : skips); skip++) {
                int64_t step = skip + 1;
                for (int64_t s = 0; s + (n - 1) * step < C; s++)
                    for (int64_t p = start, g = first_gram; p + n <= end; p += n, g++) {
                        bool hit = true;
                        for (int64_t j = 0; j < n && hit; j++)
                            hit = pool_match(X, base + s + j * step, pints, pstrs, p + j);
                        if (hit && g < nindex)
                            y[r * width + indexes[g]] += 1;
                    }
            }
        }
        for (int64_t i = 0; i < width && !tf; i++) {
            float *v = &y[r * width + i];
            int64_t g = 0;
            while (g < nindex && indexes[g] != i)
                g++;
            float w = nweights > g ? weights[g] : 1.0f;
            *v = idf ? (*v > 0 ? w : 0) : *v * w;
        }
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "StringNormalizer", 10, 0, SG_KT_STRING, 0, run_string_normalizer},
    {"", "TfIdfVectorizer", 9, 0, SG_KT_STRING | SG_KT_INTS, 0, run_tfidf},
};
SG_KERNEL_FAMILY(text, kernels);
