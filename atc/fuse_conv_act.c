/*
 * fuse_conv_act.c - UB fusion of a convolution with the activation after
 * it, applied in the convolution's output buffer:
 *
 *   TbeCommonRules0FusionPass   Conv + Relu -> Conv2D(activation="Relu")
 *   ConvClipByValueFusionPass   Conv + Clip -> Conv2D(activation="Clip",
 *                                                     clip_min, clip_max)
 *
 * Two rules, one per pass, sharing the matching. The convolution is an
 * ONNX Conv or a Conv2D made by ConvBatchnormFusionPass (its pass stays in
 * pass_name); it must be read by the activation alone and compute in the
 * same dtype (UB fusion runs after the precision step). Clip bounds must be
 * constants (inputs from opset 11, attributes before). The fused op is
 * named by joining the two names, as ATC names UB-fused ops.
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <float.h>
#include <math.h>
#include <string.h>

static bool is_conv(const sg_node *n)
{
    if (sg__atc_is(n, "Conv"))
        return true;
    return n->domain && strcmp(n->domain, SG_MOCKOM_DOMAIN) == 0 &&
           strcmp(n->op_type, "Conv2D") == 0 && !sg_node_attr(n, "activation");
}

/* Clip's bounds when they are constants. */
static bool clip_bounds(struct sg__atc_mock *c, const sg_node *clip, double *lo, double *hi)
{
    if (sg_model_opset(c->m, "") < 11) {
        *lo = sg_attr_float(clip, "min", -FLT_MAX);
        *hi = sg_attr_float(clip, "max", FLT_MAX);
        return true;
    }
    *lo = -INFINITY;
    *hi = INFINITY;
    if (clip->n_inputs > 1 && clip->inputs[1] && !sg__atc_const_scalar(c, clip->inputs[1], lo))
        return false;
    if (clip->n_inputs > 2 && clip->inputs[2] && !sg__atc_const_scalar(c, clip->inputs[2], hi))
        return false;
    return true;
}

static sg_status try_fuse(struct sg__atc_mock *c, sg_node *conv, enum sg_fusion_pass_id pass)
{
    if (conv->n_outputs != 1 || !conv->outputs[0])
        return SG_OK;
    sg_node *act = sg__atc_only_reader(conv->outputs[0]);
    bool relu = pass == SG_FP_COMMON_RULES0;
    if (!sg__atc_is(act, relu ? "Relu" : "Clip") || act->inputs[0] != conv->outputs[0] ||
        act->n_outputs != 1 || !act->outputs[0] ||
        sg_mockom_node_fp16(act) != sg_mockom_node_fp16(conv))
        return SG_OK;
    double lo = 0, hi = INFINITY;
    if (!relu && !clip_bounds(c, act, &lo, &hi))
        return SG_OK;
    sg_node *pattern[2] = {conv, act};
    const char *name = sg__atc_joined_name(c, pattern, 2);
    if (!name)
        return sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    sg_attr **attrs = conv->attrs;
    uint32_t n_attrs = conv->n_attrs;
    sg_value *ins[3] = {conv->inputs[0], conv->n_inputs > 1 ? conv->inputs[1] : NULL,
                        conv->n_inputs > 2 ? conv->inputs[2] : NULL};
    struct sg__atc_fusion f = {
        pattern, 2, ins, conv->n_inputs > 2 ? 3 : 2, act->outputs[0], "Conv2D", name, NULL, pass};
    sg_node *fused;
    sg_status st = sg__atc_fuse(c, &f, &fused);
    if (!st)
        st = sg__atc_copy_op_attrs(c, fused, attrs, n_attrs, name);
    if (!st && (sg_node_set_attr_string(fused, "activation", relu ? "Relu" : "Clip") ||
                (!relu && (sg_node_set_attr_float(fused, "clip_min", (float)lo) ||
                           sg_node_set_attr_float(fused, "clip_max", (float)hi)))))
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    return st;
}

static sg_status fuse_node(struct sg__atc_mock *c, sg_node *n, void *pass)
{
    return is_conv(n) ? try_fuse(c, n, *(enum sg_fusion_pass_id *)pass) : SG_OK;
}

static sg_status run(struct sg__atc_mock *c, enum sg_fusion_pass_id pass)
{
    return sg__atc_each_node(c, fuse_node, &pass);
}

const struct sg__atc_rule sg__atc_rule_conv_relu = {SG_FP_COMMON_RULES0, true, run};
const struct sg__atc_rule sg__atc_rule_conv_clip = {SG_FP_CONV_CLIP, true, run};
