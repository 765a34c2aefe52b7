/*
 * fuse_matmul_bias.c - MatMulBiasAddFusionPass: the bias add moves into
 * the matrix multiplication, whose cube unit adds it while accumulating.
 *
 *   MatMul(A, B) + bias     -> BatchMatMulV2(A, B, bias)
 *   Gemm(A, B) + bias       -> MatMulV2(A, B, bias)  (alpha, trans kept, beta 1)
 *   Gemm(A, B, C)           -> MatMulV2(A, B, C)     (ATC's form of Gemm's C)
 *
 * The bias must be a constant holding one value per output column (shape
 * [N] or [1, ..., 1, N], N the last dimension of the product) and the
 * product must be read by the Add alone. The fused op keeps the MatMul's
 * (Gemm's) name; Add's operand order does not matter (addition commutes).
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <string.h>

/* The last dimension of value v when its type fixes it, else -1. */
static int64_t last_dim(const sg_value *v)
{
    const sg_type *t = v ? v->type : NULL;
    if (!t || t->kind != SG_TYPE_TENSOR || !t->shape || !t->shape->rank)
        return -1;
    const sg_dim *d = &t->shape->dims[t->shape->rank - 1];
    return d->kind == SG_DIM_VALUE ? d->value : -1;
}

/* The columns of B (for Gemm with transB, its first dimension). */
static int64_t columns(const sg_node *n)
{
    const sg_value *b = n->inputs[1];
    sg_tensor *t = sg__atc_const(b);
    bool trans = sg__atc_is(n, "Gemm") && sg_attr_int(n, "transB", 0);
    if (t && t->rank >= 1)
        return trans ? (t->rank == 2 ? t->dims[0] : -1) : t->dims[t->rank - 1];
    if (trans) {
        const sg_type *ty = b->type;
        if (!ty || ty->kind != SG_TYPE_TENSOR || !ty->shape || ty->shape->rank != 2 ||
            ty->shape->dims[0].kind != SG_DIM_VALUE)
            return -1;
        return ty->shape->dims[0].value;
    }
    return last_dim(b);
}

/* The Add reading n's product with a per-column constant bias, or NULL;
 * *bias is its constant operand. max_rank bounds the bias's rank. */
static sg_node *bias_add(const sg_node *n, int max_rank, sg_value **bias)
{
    sg_node *add = sg__atc_only_reader(n->outputs[0]);
    if (!sg__atc_is(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1)
        return NULL;
    sg_value *b = add->inputs[0] == n->outputs[0] ? add->inputs[1] : add->inputs[0];
    if (b == n->outputs[0])
        return NULL;
    sg_tensor *t = sg__atc_const(b);
    int64_t N = columns(n);
    if (!t || N < 1 || t->rank < 1 || (max_rank >= 0 && (int)t->rank > max_rank) ||
        t->dims[t->rank - 1] != N)
        return NULL;
    for (uint32_t d = 0; d + 1 < t->rank; d++)
        if (t->dims[d] != 1)
            return NULL;
    *bias = b;
    return add;
}

static sg_status fuse_matmul(struct sg__atc_mock *c, sg_node *mm)
{
    if (mm->n_inputs != 2 || mm->n_outputs != 1 || !mm->inputs[0] || !mm->inputs[1])
        return SG_OK;
    int rank = sg__atc_rank(mm->inputs[0]);
    int rb = sg__atc_rank(mm->inputs[1]);
    sg_value *bias;
    sg_node *add = bias_add(mm, rank > rb ? rank : rb, &bias);
    if (!add)
        return SG_OK;
    sg_node *pattern[2] = {mm, add};
    sg_value *ins[3] = {mm->inputs[0], mm->inputs[1], bias};
    struct sg__atc_fusion f = {
        pattern, 2, ins, 3, add->outputs[0], "BatchMatMulV2", mm->name, NULL, SG_FP_MATMUL_BIASADD};
    sg_node *fused;
    return sg__atc_fuse(c, &f, &fused);
}

static sg_status fuse_gemm(struct sg__atc_mock *c, sg_node *gemm)
{
    if (gemm->n_inputs < 2 || gemm->n_outputs != 1 || !gemm->inputs[0] || !gemm->inputs[1])
        return SG_OK;
    bool has_c = gemm->n_inputs > 2 && gemm->inputs[2];
    sg_value *bias = has_c ? gemm->inputs[2] : NULL;
    sg_node *add = has_c ? NULL : bias_add(gemm, 2, &bias);
    if (!has_c && !add)
        return SG_OK;
    sg_attr **attrs = gemm->attrs;
    uint32_t n_attrs = gemm->n_attrs;
    sg_node *pattern[2] = {gemm, add};
    sg_value *ins[3] = {gemm->inputs[0], gemm->inputs[1], bias};
    sg_value *out = add ? add->outputs[0] : gemm->outputs[0];
    struct sg__atc_fusion f = {pattern, add ? 2 : 1,         ins, 3, out, "MatMulV2", gemm->name,
                               NULL,    SG_FP_MATMUL_BIASADD};
    sg_node *fused;
    sg_status st = sg__atc_fuse(c, &f, &fused);
    for (uint32_t i = 0; i < n_attrs && !st; i++) {
        const char *an = attrs[i]->name;
        if (strcmp(an, "alpha") == 0 || strcmp(an, "transA") == 0 || strcmp(an, "transB") == 0 ||
            (has_c && strcmp(an, "beta") == 0))
            st = sg__atc_copy_attr(fused, attrs[i]);
    }
    if (!st && !has_c)
        st = sg_node_set_attr_float(fused, "beta", 1.0f); /* the bias is added as it is */
    return st ? sg_diag_set(c->diag, st, "out of memory") : SG_OK;
}

static sg_status fuse_node(struct sg__atc_mock *c, sg_node *n, void *ctx)
{
    (void)ctx;
    if (sg__atc_is(n, "MatMul"))
        return fuse_matmul(c, n);
    return sg__atc_is(n, "Gemm") ? fuse_gemm(c, n) : SG_OK;
}

static sg_status run(struct sg__atc_mock *c, enum sg_fusion_pass_id pass)
{
    (void)pass;
    return sg__atc_each_node(c, fuse_node, NULL);
}

const struct sg__atc_rule sg__atc_rule_matmul_bias = {SG_FP_MATMUL_BIASADD, false, run};
