/*
 * matmul.c - MatMul (numpy semantics, batch broadcasting) and Gemm, through
 * BLAS (cblas_sgemm / cblas_dgemm) for float32 and float64 (the integer
 * forms MatMulInteger and QLinearMatMul are in quantize.c). float16 and
 * bfloat16 are widened to float32 (accumulation in float32); integer types
 * use a plain triple loop accumulating in int64.
 */
#include "rt_impl.h"
#include "sg_blas.h"

#include <math.h>
#include <limits.h>
#include <string.h>

/* C[M,N] (+)= A[M,K] * B[K,N] for one matrix, any dtype, through doubles or
 * int64 (the slow path for non-BLAS types). */
static void gemm_generic(const sg_rt_value *A, int64_t ao, const sg_rt_value *B, int64_t bo,
                         sg_rt_value *C, int64_t co, int64_t M, int64_t N, int64_t K)
{
    bool fl = sg_dtype_is_float(C->dtype);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            if (fl) {
                double s = 0;
                for (int64_t p = 0; p < K; p++)
                    s += sg_rt_get_f64(A, ao + i * K + p) * sg_rt_get_f64(B, bo + p * N + j);
                sg_rt_set_f64(C, co + i * N + j, s);
            } else {
                uint64_t s = 0;
                for (int64_t p = 0; p < K; p++)
                    s += (uint64_t)sg_rt_get_i64(A, ao + i * K + p) *
                         (uint64_t)sg_rt_get_i64(B, bo + p * N + j);
                sg_rt_set_i64(C, co + i * N + j, (int64_t)s);
            }
        }
}

static bool is_half(int32_t dt)
{
    return dt == SG_DTYPE_FLOAT16 || dt == SG_DTYPE_BFLOAT16;
}

/* A float32 view of v (widened in scratch for half types). */
static const sg_rt_value *as_f32(struct sg_kctx *k, const sg_rt_value *v)
{
    if (!is_half(v->dtype))
        return v;
    sg_rt_value *w = sg_kscratch(k, sizeof *w);
    const float *f = sg_kfloats(k, v);
    if (!w || !f)
        return NULL;
    memcpy(w, v, sizeof *w);
    w->dtype = SG_DTYPE_FLOAT;
    w->data = (void *)f;
    return w;
}

/* Fails unless the GEMM dimensions fit BLAS's int arguments. */
static sg_status blas_fits(struct sg_kctx *k, int64_t M, int64_t N, int64_t K)
{
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return sg_kfail(k, SG_ETOOBIG, "a GEMM of %lld x %lld x %lld exceeds the BLAS int range",
                        (long long)M, (long long)N, (long long)K);
    return SG_OK;
}

/* Y = A0 @ B0 by numpy rules, as output oi (oi < 0: a new tensor in *made
 * that the caller owns). */
static sg_status matmul_core(struct sg_kctx *k, const sg_rt_value *A0, const sg_rt_value *B0,
                             int oi, sg_rt_value **made)
{
    if (A0->dtype != B0->dtype)
        return sg_kfail(k, SG_ETYPE, "inputs differ in type: %s and %s", sg_kshape(k, A0),
                        sg_kshape(k, B0));
    if (A0->rank == 0 || B0->rank == 0)
        return sg_kfail(k, SG_ESHAPE, "inputs must have rank >= 1, got %s and %s", sg_kshape(k, A0),
                        sg_kshape(k, B0));
    /* Promote 1-D operands to matrices. */
    int64_t ad[SG_MAX_RANK], bd[SG_MAX_RANK];
    uint32_t ar = A0->rank, br = B0->rank;
    memcpy(ad, A0->dims, ar * sizeof ad[0]);
    memcpy(bd, B0->dims, br * sizeof bd[0]);
    bool a_vec = ar == 1, b_vec = br == 1;
    if (a_vec) {
        ad[1] = ad[0];
        ad[0] = 1;
        ar = 2;
    }
    if (b_vec) {
        bd[1] = 1;
        br = 2;
    }
    int64_t M = ad[ar - 2], K = ad[ar - 1], N = bd[br - 1];
    if (bd[br - 2] != K)
        return sg_kfail(k, SG_ESHAPE, "inner dimensions differ: A is %s, B is %s", sg_kshape(k, A0),
                        sg_kshape(k, B0));
    /* Broadcast the batch dims. */
    struct sg_bcast b;
    const int64_t *dl[2] = {ad, bd};
    uint32_t rl[2] = {ar - 2, br - 2};
    sg_status st = sg_bcast_init_dims(k, &b, 2, dl, rl);
    if (st)
        return st;
    int64_t od[SG_MAX_RANK];
    uint32_t orank = 0;
    for (uint32_t d = 0; d < b.rank; d++)
        od[orank++] = b.dims[d];
    if (!a_vec)
        od[orank++] = M;
    if (!b_vec)
        od[orank++] = N;
    sg_rt_value *Y;
    if (oi >= 0) {
        st = sg_kout(k, (uint32_t)oi, A0->dtype, od, orank, &Y);
    } else {
        struct sg_diag d = {0};
        if ((st = sg_rt_tensor_create(A0->dtype, od, orank, &Y, &d)))
            st = sg_kfail(k, st, "%s", d.msg);
        else
            *made = Y;
    }
    if (st)
        return st;
    if (!Y->numel)
        return SG_OK;
    const sg_rt_value *A = as_f32(k, A0), *B = as_f32(k, B0);
    if (!A || !B)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int32_t dt = A->dtype;
    sg_rt_value Yc;
    memcpy(&Yc, Y, sizeof Yc);
    if (is_half(A0->dtype)) {
        Yc.dtype = SG_DTYPE_FLOAT;
        Yc.data = sg_kscratch(k, (size_t)Y->numel * sizeof(float));
        if (!Yc.data)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
    }
    int64_t batches = b.numel;
    /* B shared by every batch and A contiguous: one GEMM with M*batches rows. */
    bool b_shared = true;
    for (uint32_t d = 0; d < br - 2; d++)
        if (bd[d] != 1)
            b_shared = false;
    if (b_shared && batches > 1) {
        M *= batches; /* rows of Y: it fits */
        batches = 1;
    }
    if ((dt == SG_DTYPE_FLOAT || dt == SG_DTYPE_DOUBLE) && (st = blas_fits(k, M, N, K)))
        return st;
    while (sg_bcast_next(&b) || batches == 1) {
        int64_t nrun = batches == 1 ? 1 : b.run;
        for (int64_t r = 0; r < nrun; r++) {
            int64_t ai = batches == 1 ? 0 : b.off[0] + r * b.step[0];
            int64_t bi = batches == 1 ? 0 : b.off[1] + r * b.step[1];
            int64_t yi = batches == 1 ? 0 : b.pos + r;
            int64_t ao = ai * M * K, bo = bi * K * N, yo = yi * M * N;
            if (dt == SG_DTYPE_FLOAT)
                sg_blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K,
                              1.0f, (const float *)A->data + ao, (int)K,
                              (const float *)B->data + bo, (int)N, 0.0f, (float *)Yc.data + yo,
                              (int)N);
            else if (dt == SG_DTYPE_DOUBLE)
                sg_blas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K,
                              1.0, (const double *)A->data + ao, (int)K,
                              (const double *)B->data + bo, (int)N, 0.0, (double *)Yc.data + yo,
                              (int)N);
            else
                gemm_generic(A, ao, B, bo, &Yc, yo, M, N, K);
        }
        if (batches == 1)
            break;
    }
    if (is_half(A0->dtype))
        for (int64_t i = 0; i < Y->numel; i++)
            sg_rt_set_f64(Y, i, ((const float *)Yc.data)[i]);
    return SG_OK;
}

static sg_status run_matmul(struct sg_kctx *k)
{
    return matmul_core(k, sg_kin(k, 0), sg_kin(k, 1), 0, NULL);
}

static sg_status run_gemm(struct sg_kctx *k)
{
    const sg_rt_value *A0 = sg_kin(k, 0), *B0 = sg_kin(k, 1), *C = sg_kin(k, 2);
    if (A0->rank != 2 || B0->rank != 2)
        return sg_kfail(k, SG_ESHAPE, "A and B must be matrices, got %s and %s", sg_kshape(k, A0),
                        sg_kshape(k, B0));
    bool ta = sg_kattr_int(k, "transA", 0) != 0, tb = sg_kattr_int(k, "transB", 0) != 0;
    float alpha = sg_kattr_float(k, "alpha", 1.0f), beta = sg_kattr_float(k, "beta", 1.0f);
    int64_t M = ta ? A0->dims[1] : A0->dims[0], K = ta ? A0->dims[0] : A0->dims[1];
    int64_t Kb = tb ? B0->dims[1] : B0->dims[0], N = tb ? B0->dims[0] : B0->dims[1];
    if (K != Kb)
        return sg_kfail(k, SG_ESHAPE, "inner dimensions differ: A is %s%s, B is %s%s",
                        sg_kshape(k, A0), ta ? " (transposed)" : "", sg_kshape(k, B0),
                        tb ? " (transposed)" : "");
    int64_t od[2] = {M, N};
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, A0->dtype, od, 2, &Y);
    if (st)
        return st;
    const sg_rt_value *A = as_f32(k, A0), *B = as_f32(k, B0);
    if (!A || !B)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    int32_t dt = A->dtype;
    sg_rt_value Yc;
    memcpy(&Yc, Y, sizeof Yc);
    if (is_half(A0->dtype)) {
        Yc.dtype = SG_DTYPE_FLOAT;
        Yc.data = sg_kscratch(k, (size_t)Y->numel * sizeof(float) + 1);
        if (!Yc.data)
            return sg_kfail(k, SG_ENOMEM, "out of memory");
    }
    /* Y = beta * C (broadcast to [M, N]) first, then accumulate. */
    bool have_c = C && beta != 0;
    if (have_c) {
        struct sg_bcast b;
        const int64_t *dl[2] = {od, C->dims};
        uint32_t rl[2] = {2, C->rank};
        if ((st = sg_bcast_init_dims(k, &b, 2, dl, rl)))
            return st;
        if (b.rank != 2 || b.dims[0] != M || b.dims[1] != N)
            return sg_kfail(k, SG_ESHAPE, "C %s does not broadcast to [%lld,%lld]", sg_kshape(k, C),
                            (long long)M, (long long)N);
        while (sg_bcast_next(&b)) {
            if (Yc.dtype == SG_DTYPE_FLOAT && C->dtype == SG_DTYPE_FLOAT) {
                const float *c = (const float *)C->data + b.off[1];
                float *y = (float *)Yc.data + b.pos, fb = beta;
                if (b.step[1])
                    for (int64_t i = 0; i < b.run; i++)
                        y[i] = fb * c[i];
                else
                    for (int64_t i = 0; i < b.run; i++)
                        y[i] = fb * c[0];
                continue;
            }
            for (int64_t i = 0; i < b.run; i++)
                sg_rt_set_f64(&Yc, b.pos + i, beta * sg_rt_get_f64(C, b.off[1] + i * b.step[1]));
        }
    }
    if (!Y->numel)
        goto done;
    if (dt == SG_DTYPE_FLOAT || dt == SG_DTYPE_DOUBLE) {
        if ((st = blas_fits(k, M, N, K)))
            return st;
        int lda = (int)A->dims[1], ldb = (int)B->dims[1];
        if (M == 1 && dt == SG_DTYPE_FLOAT) {
            /* One row (a batch-1 classifier): a GEMV, without the packing
             * of B that GEMM does first. A's K values are contiguous
             * either way; y = op(B)^T a. */
            sg_blas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, (int)B->dims[0], ldb,
                          alpha, B->data, ldb, A->data, 1, have_c ? 1.0f : 0.0f, Yc.data, 1);
            goto done;
        }
        if (dt == SG_DTYPE_FLOAT)
            sg_blas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                          tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, A->data,
                          lda, B->data, ldb, have_c ? 1.0f : 0.0f, Yc.data, (int)N);
        else
            sg_blas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                          tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, A->data,
                          lda, B->data, ldb, have_c ? 1.0 : 0.0, Yc.data, (int)N);
    } else {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t p = 0; p < K; p++)
                    s += sg_rt_get_f64(A, ta ? p * M + i : i * K + p) *
                         sg_rt_get_f64(B, tb ? j * K + p : p * N + j);
                double prev = have_c ? sg_rt_get_f64(&Yc, i * N + j) : 0;
                sg_rt_set_f64(&Yc, i * N + j, prev + alpha * s);
            }
    }
done:
    if (is_half(A0->dtype))
        for (int64_t i = 0; i < Y->numel; i++)
            sg_rt_set_f64(Y, i, ((const float *)Yc.data)[i]);
    return SG_OK;
}

static const struct sg_kernel kernels[] = {
    {"", "MatMul", 1, 0, SG_KT_NUMERIC, 0, run_matmul, "rr"},
    {"", "Gemm", 1, 0, SG_KT_NUMERIC, 0, run_gemm, "rrr"},
    {"", "Gemm", 11, 0, SG_KT_NUMERIC, 0, run_gemm, "rro"},
};
SG_KERNEL_FAMILY(matmul, kernels);
