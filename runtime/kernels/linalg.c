/*
 * linalg.c - Det (opset 11) and Einsum (opset 12).
 *
 * Det factors each matrix by LU with partial pivoting in double.
 *
 * Einsum parses the equation (explicit "->" or implicit output, ellipsis
 * broadcasting), takes diagonals for labels repeated within an operand,
 * then contracts the operands left to right: two operands become one
 * batched GEMM (cblas_dgemm) after labels that only one side carries and
 * nothing later needs are summed away. Everything runs in double and is
 * stored once in the output dtype (integers are exact while |values| stay
 * below 2^53).
 */
#include "rt_impl.h"
#include "sg_blas.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ Det */

static sg_status run_det(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    if (X->rank < 2 || X->dims[X->rank - 1] != X->dims[X->rank - 2])
        return sg_kfail(k, SG_ESHAPE, "input must be [..., M, M], got %s", sg_kshape(k, X));
    int64_t n = X->dims[X->rank - 1], count = 1;
    for (uint32_t d = 0; d + 2 < X->rank; d++)
        count *= X->dims[d];
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank - 2, &Y);
    if (st)
        return st;
    double *a = sg_kscratch(k, (size_t)(n * n + 1) * sizeof *a);
    if (!a)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t m = 0; m < count; m++) {
        for (int64_t i = 0; i < n * n; i++)
            a[i] = sg_rt_get_f64(X, m * n * n + i);
        double det = 1;
        for (int64_t c = 0; c < n && det != 0; c++) {
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
            double piv = a[c * n + c];
            det *= piv;
            for (int64_t r = c + 1; r < n; r++) {
                double f = a[r * n + c] / piv;
                for (int64_t j = c + 1; j < n; j++)
                    a[r * n + j] -= f * a[c * n + j];
            }
        }
        sg_rt_set_f64(Y, m, det);
    }
    return SG_OK;
}

/* --------------------------------------------------------------- Einsum */

/* Labels: a-z are 0..25, A-Z 26..51, ellipsis dims 52.. (aligned right). */
#define EIN_ELL 52
#define EIN_LABELS (EIN_ELL + SG_MAX_RANK)

/* An operand (or intermediate) in double with a label per dim. */
struct eop {
    double *v;
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
    int lab[SG_MAX_RANK];
};

struct einsum {
    uint32_t n_in;
    int ell; /* ellipsis dims of the output broadcast */
    int n_out, out[EIN_LABELS];
    int64_t size[EIN_LABELS]; /* -1: label unused */
    int term_lab[16][SG_MAX_RANK];
    uint32_t term_len[16];
    bool term_ell[16];
    int term_ell_at[16]; /* position of "..." in the term */
};

static int label_of(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + c - 'A';
    return -1;
}

/* Parse one term (between separators) into e->term_*[t]; returns false on
 * a bad character or a second ellipsis. */
static bool parse_term(const char *s, size_t len, int *lab, uint32_t *n, bool *ell, int *ell_at)
{
    *n = 0;
    *ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ')
            continue;
        if (s[i] == '.') {
            if (*ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return false;
            *ell = true;
            *ell_at = (int)*n;
            i += 2;
            continue;
        }
        int l = label_of(s[i]);
        if (l < 0 || *n >= SG_MAX_RANK)
            return false;
        lab[(*n)++] = l;
    }
    return true;
}

static bool has_label(const int *lab, uint32_t n, int l)
{
    for (uint32_t i = 0; i < n; i++)
        if (lab[i] == l)
            return true;
    return false;
}

/* Permute op's dims to the label order `want` (a permutation of op->lab). */
static sg_status eop_permute(struct sg_kctx *k, struct eop *op, const int *want)
{
    int64_t str[SG_MAX_RANK], nstr[SG_MAX_RANK], nd[SG_MAX_RANK];
    bool same = true;
    sg_rt_strides(op->dims, op->rank, str);
    for (uint32_t i = 0; i < op->rank; i++) {
        uint32_t j = 0;
        while (op->lab[j] != want[i])
            j++;
        nd[i] = op->dims[j];
        nstr[i] = str[j];
        same &= j == i;
    }
    if (same)
        return SG_OK;
    int64_t n = 1;
    for (uint32_t i = 0; i < op->rank; i++)
        n *= nd[i];
    double *v = sg_kscratch(k, (size_t)(n + 1) * sizeof *v);
    if (!v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_rt_copy_strided(v, op->v, sizeof *v, op->rank, nd, nstr, 0);
    op->v = v;
    memcpy(op->dims, nd, op->rank * sizeof nd[0]);
    memcpy(op->lab, want, op->rank * sizeof want[0]);
    return SG_OK;
}

/* Sum away the labels of op for which drop[label] is set. */
static sg_status eop_sum(struct sg_kctx *k, struct eop *op, const bool *drop)
{
    int order[SG_MAX_RANK];
    uint32_t nk = 0, r = op->rank;
    for (uint32_t i = 0; i < r; i++)
        if (!drop[op->lab[i]])
            order[nk++] = op->lab[i];
    if (nk == r)
        return SG_OK;
    for (uint32_t i = 0, j = nk; i < r; i++)
        if (drop[op->lab[i]])
            order[j++] = op->lab[i];
    sg_status st = eop_permute(k, op, order);
    if (st)
        return st;
    int64_t keep = 1, sum = 1;
    for (uint32_t i = 0; i < r; i++)
        if (i < nk)
            keep *= op->dims[i];
        else
            sum *= op->dims[i];
    double *v = sg_kscratch(k, (size_t)(keep + 1) * sizeof *v);
    if (!v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < keep; i++) {
        double s = 0;
        for (int64_t j = 0; j < sum; j++)
            s += op->v[i * sum + j];
        v[i] = s;
    }
    op->v = v;
    op->rank = nk;
    return SG_OK;
}

/* Contract A with B into A, keeping the labels in keep[]. */
static sg_status eop_contract(struct sg_kctx *k, struct eop *A, struct eop *B, const bool *keep)
{
    bool dropA[EIN_LABELS] = {false}, dropB[EIN_LABELS] = {false};
    for (uint32_t i = 0; i < A->rank; i++)
        dropA[A->lab[i]] = !keep[A->lab[i]] && !has_label(B->lab, B->rank, A->lab[i]);
    for (uint32_t i = 0; i < B->rank; i++)
        dropB[B->lab[i]] = !keep[B->lab[i]] && !has_label(A->lab, A->rank, B->lab[i]);
    sg_status st;
    if ((st = eop_sum(k, A, dropA)) || (st = eop_sum(k, B, dropB)))
        return st;
    /* A -> [batch, a-only, contracted], B -> [batch, contracted, b-only] */
    int ao[SG_MAX_RANK], bo[SG_MAX_RANK], rl[SG_MAX_RANK];
    uint32_t nb = 0, nc = 0, na = 0, nbk = 0;
    int batch[SG_MAX_RANK], con[SG_MAX_RANK], aonly[SG_MAX_RANK], bonly[SG_MAX_RANK];
    int64_t M = 1, N = 1, K = 1, NB = 1;
    for (uint32_t i = 0; i < A->rank; i++) {
        int l = A->lab[i];
        if (!has_label(B->lab, B->rank, l)) {
            aonly[na++] = l;
            M *= A->dims[i];
        } else if (keep[l]) {
            batch[nb++] = l;
            NB *= A->dims[i];
        } else {
            con[nc++] = l;
            K *= A->dims[i];
        }
    }
    for (uint32_t i = 0; i < B->rank; i++)
        if (!has_label(A->lab, A->rank, B->lab[i])) {
            bonly[nbk++] = B->lab[i];
            N *= B->dims[i];
        }
    if (nb + na + nc + nbk > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "an intermediate result needs more than %d dims",
                        SG_MAX_RANK);
    uint32_t p = 0;
    for (uint32_t i = 0; i < nb; i++)
        ao[p++] = batch[i];
    for (uint32_t i = 0; i < na; i++)
        ao[p++] = aonly[i];
    for (uint32_t i = 0; i < nc; i++)
        ao[p++] = con[i];
    p = 0;
    for (uint32_t i = 0; i < nb; i++)
        bo[p++] = batch[i];
    for (uint32_t i = 0; i < nc; i++)
        bo[p++] = con[i];
    for (uint32_t i = 0; i < nbk; i++)
        bo[p++] = bonly[i];
    if ((st = eop_permute(k, A, ao)) || (st = eop_permute(k, B, bo)))
        return st;
    double *C = sg_kscratch(k, (size_t)(NB * M * N + 1) * sizeof *C);
    if (!C)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (K == 0 || M * N == 0) {
        memset(C, 0, (size_t)(NB * M * N) * sizeof *C);
    } else {
        for (int64_t b = 0; b < NB; b++)
            sg_blas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0,
                          A->v + b * M * K, (int)K, B->v + b * K * N, (int)N, 0.0, C + b * M * N,
                          (int)N);
    }
    /* result labels: batch, a-only, b-only */
    int64_t dims[SG_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t i = 0; i < nb + na; i++) {
        rl[r] = A->lab[i];
        dims[r++] = A->dims[i];
    }
    for (uint32_t i = nb + nc; i < B->rank; i++) {
        rl[r] = B->lab[i];
        dims[r++] = B->dims[i];
    }
    A->v = C;
    A->rank = r;
    memcpy(A->dims, dims, r * sizeof dims[0]);
    memcpy(A->lab, rl, r * sizeof rl[0]);
    return SG_OK;
}

/* Parse the equation against the inputs: labels per operand, sizes, and
 * the output labels. */
static sg_status einsum_parse(struct sg_kctx *k, const char *eq, struct einsum *e)
{
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    e->n_in = 0;
    e->ell = 0;
    for (int l = 0; l < EIN_LABELS; l++)
        e->size[l] = -1;
    int count[EIN_LABELS] = {0};
    const char *s = eq;
    for (;;) {
        const char *comma = memchr(s, ',', lhs_len - (size_t)(s - eq));
        size_t len = comma ? (size_t)(comma - s) : lhs_len - (size_t)(s - eq);
        uint32_t t = e->n_in;
        if (t >= k->n_in || t >= 16)
            return sg_kfail(k, SG_EARITY, "equation '%s' has more terms than the %u inputs", eq,
                            k->n_in);
        if (!parse_term(s, len, e->term_lab[t], &e->term_len[t], &e->term_ell[t],
                        &e->term_ell_at[t]))
            return sg_kfail(k, SG_EINVAL, "cannot parse term %u of equation '%s'", t, eq);
        const sg_rt_value *X = sg_kin(k, t);
        if (!X)
            return sg_kfail(k, SG_EUNDEF, "input %u is missing", t);
        int nell = (int)X->rank - (int)e->term_len[t];
        if (nell < 0 || (nell > 0 && !e->term_ell[t]))
            return sg_kfail(k, SG_ESHAPE, "term %u of '%s' does not fit input %u %s", t, eq, t,
                            sg_kshape(k, X));
        if (nell > e->ell)
            e->ell = nell;
        e->n_in++;
        if (!comma)
            break;
        s = comma + 1;
    }
    if (e->n_in != k->n_in)
        return sg_kfail(k, SG_EARITY, "equation '%s' has %u terms for %u inputs", eq, e->n_in,
                        k->n_in);
    /* sizes, with ellipsis dims numbered from the right */
    for (uint32_t t = 0; t < e->n_in; t++) {
        const sg_rt_value *X = sg_kin(k, t);
        int nell = (int)X->rank - (int)e->term_len[t];
        for (uint32_t d = 0; d < X->rank; d++) {
            int pos = (int)d, l;
            if (e->term_ell[t] && pos >= e->term_ell_at[t] && pos < e->term_ell_at[t] + nell)
                l = EIN_ELL + e->ell - nell + (pos - e->term_ell_at[t]);
            else
                l = e->term_lab[t][e->term_ell[t] && pos >= e->term_ell_at[t] ? pos - nell : pos];
            int64_t x = X->dims[d], have = e->size[l];
            if (have < 0 || have == x)
                e->size[l] = x;
            else if (l >= EIN_ELL && (have == 1 || x == 1))
                e->size[l] = have > x ? have : x;
            else
                return sg_kfail(k, SG_ESHAPE,
                                "label '%c' is %lld in input %u %s but %lld elsewhere",
                                l < 26        ? 'a' + l
                                : l < EIN_ELL ? 'A' + l - 26
                                              : '.',
                                (long long)x, t, sg_kshape(k, X), (long long)have);
            count[l]++;
        }
    }
    e->n_out = 0;
    if (arrow) {
        int lab[SG_MAX_RANK], at = 0;
        uint32_t n;
        bool ell;
        if (!parse_term(arrow + 2, strlen(arrow + 2), lab, &n, &ell, &at))
            return sg_kfail(k, SG_EINVAL, "cannot parse the output of equation '%s'", eq);
        for (uint32_t i = 0; i <= n; i++) {
            if (ell && (int)i == at)
                for (int j = 0; j < e->ell; j++)
                    e->out[e->n_out++] = EIN_ELL + j;
            if (i == n)
                break;
            if (count[lab[i]] == 0 || has_label(e->out, (uint32_t)e->n_out, lab[i]))
                return sg_kfail(k, SG_EINVAL,
                                "output label '%c' of '%s' is not an input label "
                                "or repeats",
                                lab[i] < 26 ? 'a' + lab[i] : 'A' + lab[i] - 26, eq);
            e->out[e->n_out++] = lab[i];
        }
        if (!ell && e->ell > 0)
            for (int j = 0; j < e->ell; j++)
                if (e->size[EIN_ELL + j] != 1)
                    return sg_kfail(k, SG_EINVAL,
                                    "equation '%s' drops broadcast dimensions without '...'", eq);
    } else {
        for (int j = 0; j < e->ell; j++)
            e->out[e->n_out++] = EIN_ELL + j;
        /* implicit: labels seen once, in ASCII order (A-Z before a-z) */
        for (int l = 26; l < EIN_ELL; l++)
            if (count[l] == 1)
                e->out[e->n_out++] = l;
        for (int l = 0; l < 26; l++)
            if (count[l] == 1)
                e->out[e->n_out++] = l;
    }
    if (e->n_out > SG_MAX_RANK)
        return sg_kfail(k, SG_ERANGE, "the output of '%s' has more than %d dims", eq, SG_MAX_RANK);
    return SG_OK;
}

/* Operand t as doubles with labels; repeated labels become diagonals and
 * size-1 broadcast dims are dropped. */
static sg_status einsum_operand(struct sg_kctx *k, const struct einsum *e, uint32_t t,
                                struct eop *op)
{
    const sg_rt_value *X = sg_kin(k, t);
    int nell = (int)X->rank - (int)e->term_len[t];
    double *v = sg_kscratch(k, (size_t)(X->numel + 1) * sizeof *v);
    if (!v)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    if (X->dtype == SG_DTYPE_FLOAT)
        for (int64_t i = 0; i < X->numel; i++)
            v[i] = ((const float *)X->data)[i];
    else if (X->dtype == SG_DTYPE_DOUBLE)
        memcpy(v, X->data, (size_t)X->numel * sizeof *v);
    else
        for (int64_t i = 0; i < X->numel; i++)
            v[i] = sg_rt_get_f64(X, i);
    int lab[SG_MAX_RANK];
    for (uint32_t d = 0; d < X->rank; d++) {
        int pos = (int)d;
        if (e->term_ell[t] && pos >= e->term_ell_at[t] && pos < e->term_ell_at[t] + nell)
            lab[d] = EIN_ELL + e->ell - nell + (pos - e->term_ell_at[t]);
        else
            lab[d] = e->term_lab[t][e->term_ell[t] && pos >= e->term_ell_at[t] ? pos - nell : pos];
    }
    /* unique labels; strides add up for a diagonal */
    int64_t str[SG_MAX_RANK], nstr[SG_MAX_RANK], nd[SG_MAX_RANK];
    sg_rt_strides(X->dims, X->rank, str);
    uint32_t r = 0;
    for (uint32_t d = 0; d < X->rank; d++) {
        uint32_t j = 0;
        while (j < r && op->lab[j] != lab[d])
            j++;
        if (j < r) {
            if (nd[j] != X->dims[d])
                return sg_kfail(k, SG_ESHAPE, "repeated label in term %u needs equal dims, got %s",
                                t, sg_kshape(k, X));
            nstr[j] += str[d];
            continue;
        }
        op->lab[r] = lab[d];
        nd[r] = X->dims[d];
        nstr[r++] = str[d];
    }
    op->rank = 0;
    int64_t n = 1;
    for (uint32_t i = 0; i < r; i++)
        n *= nd[i];
    if (r != X->rank) {
        double *w = sg_kscratch(k, (size_t)(n + 1) * sizeof *w);
        if (!w)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
        sg_rt_copy_strided(w, v, sizeof *w, r, nd, nstr, 0);
        v = w;
    }
    op->v = v;
    for (uint32_t i = 0; i < r; i++) {
        if (nd[i] == 1 && e->size[op->lab[i]] != 1)
            continue; /* broadcast: constant along this label */
        op->lab[op->rank] = op->lab[i];
        op->dims[op->rank++] = nd[i];
    }
    return SG_OK;
}

static sg_status run_einsum(struct sg_kctx *k)
{
    const char *eq = sg_kattr_string(k, "equation", NULL);
    if (!eq)
        return sg_kfail(k, SG_EINVAL, "attribute equation is required");
    struct einsum e;
    sg_status st = einsum_parse(k, eq, &e);
    if (st)
        return st;
    int32_t dt = sg_kin(k, 0)->dtype;
    for (uint32_t t = 1; t < e.n_in; t++)
        if (sg_kin(k, t)->dtype != dt)
            return sg_kfail(k, SG_ETYPE, "inputs 0 and %u differ in type: %s and %s", t,
                            sg_kshape(k, sg_kin(k, 0)), sg_kshape(k, sg_kin(k, t)));
    bool in_out[EIN_LABELS] = {false};
    for (int i = 0; i < e.n_out; i++)
        in_out[e.out[i]] = true;
    struct eop cur, next;
    if ((st = einsum_operand(k, &e, 0, &cur)))
        return st;
    for (uint32_t t = 1; t < e.n_in; t++) {
        bool keep[EIN_LABELS];
        memcpy(keep, in_out, sizeof keep);
        for (uint32_t u = t + 1; u < e.n_in; u++)
            for (uint32_t i = 0; i < e.term_len[u]; i++)
                keep[e.term_lab[u][i]] = true;
        for (int j = 0; j < e.ell; j++)
            for (uint32_t u = t + 1; u < e.n_in; u++)
                if (e.term_ell[u])
                    keep[EIN_ELL + j] = true;
        if ((st = einsum_operand(k, &e, t, &next)) || (st = eop_contract(k, &cur, &next, keep)))
            return st;
    }
    bool drop[EIN_LABELS];
    for (int l = 0; l < EIN_LABELS; l++)
        drop[l] = !in_out[l];
    if ((st = eop_sum(k, &cur, drop)))
        return st;
    /* output order; labels missing from cur have size 1 */
    int order[SG_MAX_RANK];
    uint32_t n = 0;
    int64_t od[SG_MAX_RANK];
    for (int i = 0; i < e.n_out; i++) {
        od[i] = e.size[e.out[i]];
        if (has_label(cur.lab, cur.rank, e.out[i]))
            order[n++] = e.out[i];
    }
    if ((st = eop_permute(k, &cur, order)))
        return st;
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, dt, od, (uint32_t)e.n_out, &Y)))
        return st;
    if (dt == SG_DTYPE_DOUBLE)
        memcpy(Y->data, cur.v, (size_t)Y->numel * sizeof(double));
    else if (dt == SG_DTYPE_FLOAT)
        for (int64_t i = 0; i < Y->numel; i++)
            ((float *)Y->data)[i] = (float)cur.v[i];
    else
        for (int64_t i = 0; i < Y->numel; i++)
            sg_rt_set_f64(Y, i, cur.v[i]);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "Det", 11, 0, SG_KT_FLOATS, 0, run_det, "r"},
    {"", "Einsum", 12, 0, SG_KT_NUMERIC, 0, run_einsum, "r+"},
};
SG_KERNEL_FAMILY(linalg, kernels);
