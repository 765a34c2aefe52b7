/*
 * fuse_conv_bn.c - ConvBatchnormFusionPass: Conv followed by an inference
 * BatchNormalization becomes one Conv2D with the normalisation folded into
 * its weights and bias:
 *
 *   s  = scale / sqrt(var + epsilon)            (per output channel)
 *   W' = W * s                                  (each output channel)
 *   B' = (B - mean) * s + beta                  (B = 0 without a bias)
 *
 * computed in double and stored as float32, as the compiler folds them
 * before converting weights to float16. Only float32 weights, constant
 * parameters of one value per channel, a Conv output read by the
 * BatchNormalization alone and a BatchNormalization without training
 * outputs are fused. The fused op keeps the Conv's name and attributes.
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <math.h>
#include <string.h>

/* A float32 constant's values, or NULL (no copy: they stay in the model). */
static const float *const_f32(struct sg__atc_mock *c, const sg_value *v, int64_t *numel)
{
    sg_tensor *t = sg__atc_const(v);
    if (!t || !t->has_dtype || t->dtype != SG_DTYPE_FLOAT)
        return NULL;
    size_t nbytes;
    *numel = sg_tensor_numel(t);
    const float *d = *numel >= 0 ? sg_tensor_data(c->m, t, &nbytes, NULL) : NULL;
    return d && nbytes == (size_t)*numel * sizeof(float) ? d : NULL;
}

/* Fold bn into conv when the pair qualifies; *done says whether it did. */
static sg_status try_fold(struct sg__atc_mock *c, sg_node *conv, bool *done)
{
    *done = false;
    if (conv->n_inputs < 2 || conv->n_outputs != 1 || !conv->inputs[0] || !conv->inputs[1])
        return SG_OK;
    sg_node *bn = sg__atc_only_reader(conv->outputs[0]);
    if (!sg__atc_is(bn, "BatchNormalization") || bn->n_inputs != 5 ||
        bn->inputs[0] != conv->outputs[0] || sg_attr_int(bn, "training_mode", 0) != 0)
        return SG_OK;
    for (uint32_t i = 1; i < bn->n_outputs; i++)
        if (bn->outputs[i])
            return SG_OK; /* running statistics asked for: training */
    sg_tensor *wt = sg__atc_const(conv->inputs[1]);
    int64_t n_w, n_b = 0, n_p[4];
    const float *w = const_f32(c, conv->inputs[1], &n_w);
    if (!w || wt->rank < 3 || wt->dims[0] <= 0)
        return SG_OK;
    int64_t M = wt->dims[0], per = n_w / M;
    const float *b = NULL;
    if (conv->n_inputs > 2 && conv->inputs[2] &&
        (!(b = const_f32(c, conv->inputs[2], &n_b)) || n_b != M))
        return SG_OK;
    const float *p[4]; /* scale, beta, mean, var */
    for (int k = 0; k < 4; k++)
        if (!(p[k] = const_f32(c, bn->inputs[1 + k], &n_p[k])) || n_p[k] != M)
            return SG_OK;
    double eps = sg_attr_float(bn, "epsilon", 1e-5f);

    float *w2 = sg_malloc((size_t)n_w * sizeof *w2 + 1), *b2 = sg_malloc((size_t)M * sizeof *b2);
    sg_status st = SG_OK;
    if (!w2 || !b2) {
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    for (int64_t m = 0; m < M; m++) {
        double s = p[0][m] / sqrt((double)p[3][m] + eps);
        for (int64_t i = 0; i < per; i++)
            w2[m * per + i] = (float)(w[m * per + i] * s);
        b2[m] = (float)(((b ? b[m] : 0.0) - p[2][m]) * s + p[1][m]);
    }
    char base[512];
    snprintf(base, sizeof base, "%s_bn_weight", conv->name);
    sg_value *wv = sg__atc_new_const_f32(c, base, w2, wt->dims, wt->rank);
    snprintf(base, sizeof base, "%s_bn_bias", conv->name);
    sg_value *bv = wv ? sg__atc_new_const_f32(c, base, b2, &M, 1) : NULL;
    if (!bv) {
        st = c->diag->status ? c->diag->status : SG_ENOMEM;
        goto out;
    }
    sg_attr **attrs = conv->attrs; /* the arena keeps them after the Conv goes */
    uint32_t n_attrs = conv->n_attrs;
    sg_node *pattern[2] = {conv, bn};
    sg_value *ins[3] = {conv->inputs[0], wv, bv};
    struct sg__atc_fusion f = {
        pattern, 2, ins, 3, bn->outputs[0], "Conv2D", conv->name, NULL, SG_FP_CONV_BATCHNORM};
    sg_node *fused;
    if ((st = sg__atc_fuse(c, &f, &fused)))
        goto out;
    st = sg__atc_copy_op_attrs(c, fused, attrs, n_attrs, fused->name);
    *done = !st;
out:
    sg_free(w2);
    sg_free(b2);
    return st;
}

static sg_status fold_conv(struct sg__atc_mock *c, sg_node *conv)
{
    bool done;
    return try_fold(c, conv, &done);
}

static sg_status run(struct sg__atc_mock *c, enum sg_fusion_pass_id pass)
{
    (void)pass;
    return sg__atc_each_op(c, "Conv", fold_conv);
}

const struct sg__atc_rule sg__atc_rule_conv_bn = {SG_FP_CONV_BATCHNORM, false, run};
