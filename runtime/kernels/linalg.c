/*
 * linalg.c - Einsum (explicit and implicit output, ellipsis with
 * broadcasting, repeated labels for diagonals) and Det (LU with partial
 * pivoting). Both compute in float64; Einsum walks every label combination,
 * which is the reference behaviour rather than a fast contraction order.
 */
#include "rt_impl.h"

#include <math.h>
#include <string.h>

#define MAX_LABELS (52 + SG_MAX_RANK)

struct term {
    int labels[SG_MAX_RANK];
    uint32_t n;
};

static int label_id(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + c - 'A';
    return -1;
}

/* Parse one term for an operand of `rank` dims (rank < 0: the output, whose
 * ellipsis takes n_ell dims). */
static sg_status parse_term(struct sg_kctx *k, const char *s, size_t len, int rank, uint32_t *n_ell,
                            struct term *t)
{
    uint32_t letters = 0;
    bool ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (ell || i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.')
                return sg_kfail(k, SG_EINVAL, "bad ellipsis in '%.*s'", (int)len, s);
            ell = true;
            i += 2;
        } else if (label_id(s[i]) >= 0) {
            letters++;
        } else {
            return sg_kfail(k, SG_EINVAL, "bad character '%c' in equation", s[i]);
        }
    }
    uint32_t e = 0;
    if (rank >= 0) {
        if ((!ell && letters != (uint32_t)rank) || (ell && letters > (uint32_t)rank))
            return sg_kfail(k, SG_ESHAPE, "term '%.*s' does not fit a rank-%d input", (int)len, s,
                            rank);
        e = ell ? (uint32_t)rank - letters : 0;
        if (ell && e > *n_ell)
            *n_ell = e;
    } else {
        e = ell ? *n_ell : 0;
    }
    t->n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            /* ellipsis dims are right-aligned across operands */
            uint32_t total = rank >= 0 ? e : *n_ell;
            for (uint32_t j = 0; j < total; j++)
                t->labels[t->n++] = 52 + (int)(*n_ell >= total ? *n_ell - total + j : j);
            i += 2;
        } else {
            t->labels[t->n++] = label_id(s[i]);
        }
        if (t->n > SG_MAX_RANK)
            return sg_kfail(k, SG_ERANGE, "too many labels");
    }
    return SG_OK;
}

static sg_status run_einsum(struct sg_kctx *k)
{
    const char *eq0 = sg_kattr_string(k, "equation", NULL);
    if (!eq0)
        return sg_kfail(k, SG_EINVAL, "attribute 'equation' is missing");
    char *eq = sg_kscratch(k, strlen(eq0) + 1);
    if (!eq)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    size_t L = 0;
    for (const char *p = eq0; *p; p++)
        if (*p != ' ')
            eq[L++] = *p;
    eq[L] = 0;
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : L;
    uint32_t n_in = k->n_in, n_ell = 0;
    struct term *terms = sg_kscratch(k, (n_in + 1) * sizeof *terms);
    if (!terms)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    /* First pass sizes the ellipsis, second assigns labels with it. */
    for (int pass = 0; pass < 2; pass++) {
        const char *p = eq;
        for (uint32_t i = 0; i < n_in; i++) {
            const char *comma = memchr(p, ',', (size_t)(eq + lhs_len - p));
            size_t len = comma ? (size_t)(comma - p) : (size_t)(eq + lhs_len - p);
            if ((i + 1 < n_in) != (comma != NULL))
                return sg_kfail(k, SG_EINVAL, "equation '%s' does not have %u operands", eq0, n_in);
            const sg_rt_value *x = sg_kin(k, i);
            sg_status st = parse_term(k, p, len, (int)x->rank, &n_ell, &terms[i]);
            if (st)
                return st;
            p += len + 1;
        }
    }
    /* Label sizes (ellipsis dims broadcast). */
    int64_t size[MAX_LABELS];
    int count[MAX_LABELS] = {0};
    for (int l = 0; l < MAX_LABELS; l++)
        size[l] = -1;
    for (uint32_t i = 0; i < n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        for (uint32_t d = 0; d < terms[i].n; d++) {
            int l = terms[i].labels[d];
            int64_t s = x->dims[d];
            count[l]++;
            if (size[l] < 0 || (l >= 52 && size[l] == 1))
                size[l] = s;
            else if (s != size[l] && !(l >= 52 && s == 1))
                return sg_kfail(k, SG_ESHAPE,
                                "label '%c' is %lld in one operand and %lld in another",
                                l < 26   ? 'a' + l
                                : l < 52 ? 'A' + l - 26
                                         : '.',
                                (long long)size[l], (long long)s);
        }
    }
    struct term out;
    if (arrow) {
        sg_status st = parse_term(k, arrow + 2, strlen(arrow + 2), -1, &n_ell, &out);
        if (st)
            return st;
    } else {
        out.n = 0;
        for (uint32_t j = 0; j < n_ell; j++)
            out.labels[out.n++] = 52 + (int)j;
        for (int l = 0; l < 52; l++)
            if (count[l] == 1)
                out.labels[out.n++] = l;
    }
    bool in_out[MAX_LABELS] = {false};
    int64_t od[SG_MAX_RANK];
    for (uint32_t d = 0; d < out.n; d++) {
        int l = out.labels[d];
        if (size[l] < 0)
            return sg_kfail(k, SG_EINVAL, "output label does not appear in any input");
        in_out[l] = true;
        od[d] = size[l];
    }
    int sum_labels[MAX_LABELS], n_sum = 0;
    for (int l = 0; l < MAX_LABELS; l++)
        if (size[l] >= 0 && !in_out[l])
            sum_labels[n_sum++] = l;
    const sg_rt_value *x0 = sg_kin(k, 0);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, x0->dtype, od, out.n, &Y);
    if (st)
        return st;
    /* Strides of each operand per label (summed over repeats: diagonals). */
    int64_t(*lstr)[MAX_LABELS] = sg_kscratch(k, (n_in + 1) * sizeof *lstr);
    if (!lstr)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n_in; i++) {
        const sg_rt_value *x = sg_kin(k, i);
        int64_t str[SG_MAX_RANK];
        sg_rt_strides(x->dims, x->rank, str);
        memset(lstr[i], 0, sizeof lstr[i]);
        for (uint32_t d = 0; d < terms[i].n; d++)
            if (x->dims[d] != 1 || terms[i].labels[d] < 52)
                lstr[i][terms[i].labels[d]] += str[d];
    }
    int64_t sum_total = 1;
    for (int j = 0; j < n_sum; j++)
        sum_total *= size[sum_labels[j]];
    int64_t val[MAX_LABELS] = {0};
    for (int64_t o = 0; o < Y->numel; o++) {
        /* output coordinates -> label values */
        int64_t rest = o;
        for (int d = (int)out.n - 1; d >= 0; d--) {
            val[out.labels[d]] = rest % od[d];
            rest /= od[d];
        }
        double acc = 0;
        for (int64_t s = 0; s < sum_total; s++) {
            int64_t r2 = s;
            for (int j = n_sum - 1; j >= 0; j--) {
                val[sum_labels[j]] = r2 % size[sum_labels[j]];
                r2 /= size[sum_labels[j]];
            }
            double prod = 1;
            for (uint32_t i = 0; i < n_in; i++) {
                int64_t off = 0;
                for (int l = 0; l < MAX_LABELS; l++)
                    if (lstr[i][l])
                        off += val[l] * lstr[i][l];
                prod *= sg_rt_get_f64(sg_kin(k, i), off);
            }
            acc += prod;
        }
        sg_rt_set_f64(Y, o, acc);
    }
    return SG_OK;
}

static sg_status run_det(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->rank < 2 || X->dims[X->rank - 1] != X->dims[X->rank - 2])
        return sg_kfail(k, SG_ESHAPE, "needs square matrices [..., M, M], got %s", sg_kshape(k, X));
    int64_t n = X->dims[X->rank - 1];
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank - 2, &Y);
    if (st)
        return st;
    double *a = sg_kscratch(k, (size_t)(n * n + 1) * sizeof *a);
    if (!a)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t m = 0; m < Y->numel; m++) {
        for (int64_t i = 0; i < n * n; i++)
            a[i] = sg_rt_get_f64(X, m * n * n + i);
        double det = 1;
        for (int64_t c = 0; c < n; c++) {
            int64_t p = c;
            for (int64_t r = c + 1; r < n; r++)
                if (fabs(a[r * n + c]) > fabs(a[p * n + c]))
                    p = r;
            if (a[p * n + c] == 0) {
                det = 0;
                break;
            }
            if (p != c) {
                for (int64_t j = 0; j < n; j++) {
                    double t = a[c * n + j];
                    a[c * n + j] = a[p * n + j];
                    a[p * n + j] = t;
                }
                det = -det;
            }
            det *= a[c * n + c];
            for (int64_t r = c + 1; r < n; r++) {
                double f = a[r * n + c] / a[c * n + c];
                for (int64_t j = c; j < n; j++)
                    a[r * n + j] -= f * a[c * n + j];
            }
        }
        sg_rt_set_f64(Y, m, det);
    }
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "Einsum", 12, 0, SG_KT_NUMERIC, 0, run_einsum},
    {"", "Det", 11, 0, SG_KT_FLOATS, 0, run_det},
};
SG_KERNEL_FAMILY(linalg, kernels);
