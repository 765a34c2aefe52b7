/*
 * fuse_softmax.c - SoftmaxFusionPass: a softmax written out as
 *
 *   m = ReduceMax(x, axes=[a], keepdims=1)
 *   e = Exp(Sub(x, m))
 *   y = Div(e, ReduceSum(e, axes=[a], keepdims=1))
 *
 * becomes one SoftmaxV2(x, axis=a). The axes may be attributes or constant
 * inputs (newer opsets); both reductions must use the same single axis and
 * every intermediate value must stay inside the pattern. The fused op takes
 * the name of the Div, whose output it produces.
 */
#include "mock_impl.h"

#include "sg_alloc.h"

/* The one axis of Reduce node n with keepdims on, normalised by x's rank
 * when negative and the rank is known; false otherwise. */
static bool one_axis(struct sg__atc_mock *c, const sg_node *n, int rank, int64_t *axis)
{
    int64_t axes[2];
    size_t k;
    if (sg_attr_int(n, "keepdims", 1) != 1 || !sg__atc_reduce_axes(c, n, axes, 2, &k) || k != 1)
        return false;
    *axis = axes[0] < 0 && rank > 0 ? axes[0] + rank : axes[0];
    return true;
}

static sg_status try_fuse(struct sg__atc_mock *c, sg_node *rmax)
{
    if (rmax->n_inputs < 1 || rmax->n_outputs != 1 || !rmax->inputs[0])
        return SG_OK;
    sg_value *x = rmax->inputs[0];
    int rank = sg__atc_rank(x);
    int64_t a, a2;
    if (!one_axis(c, rmax, rank, &a))
        return SG_OK;
    sg_node *sub = sg__atc_only_reader(rmax->outputs[0]);
    if (!sg__atc_is(sub, "Sub") || sub->n_inputs != 2 || sub->inputs[0] != x ||
        sub->inputs[1] != rmax->outputs[0])
        return SG_OK;
    sg_node *exp = sg__atc_only_reader(sub->outputs[0]);
    if (!sg__atc_is(exp, "Exp") || exp->n_outputs != 1)
        return SG_OK;
    sg_value *e = exp->outputs[0];
    if (!e || e->n_uses != 2 || (e->flags & SG_VALUE_OUTPUT))
        return SG_OK;
    sg_node *rsum = NULL, *div = NULL;
    for (uint32_t u = 0; u < 2; u++) {
        sg_node *r = e->uses[u].node;
        if (sg__atc_is(r, "ReduceSum") && e->uses[u].index == 0)
            rsum = r;
        else if (sg__atc_is(r, "Div") && e->uses[u].index == 0)
            div = r;
    }
    if (!rsum || !div || rsum->n_outputs != 1 || !one_axis(c, rsum, rank, &a2) || a2 != a ||
        div->n_inputs != 2 || div->inputs[1] != rsum->outputs[0] ||
        sg__atc_only_reader(rsum->outputs[0]) != div || !div->outputs[0])
        return SG_OK;
    sg_node *pattern[5] = {rmax, sub, exp, rsum, div};
    sg_value *ins[1] = {x};
    struct sg__atc_fusion f = {pattern,   5,    ins,          1, div->outputs[0], "SoftmaxV2",
                               div->name, NULL, SG_FP_SOFTMAX};
    sg_node *fused;
    sg_status st = sg__atc_fuse(c, &f, &fused);
    if (!st && sg_node_set_attr_int(fused, "axis", a))
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    return st;
}

static sg_status run(struct sg__atc_mock *c, enum sg_fusion_pass_id pass)
{
    (void)pass;
    return sg__atc_each_op(c, "ReduceMax", try_fuse);
}

const struct sg__atc_rule sg__atc_rule_softmax = {SG_FP_SOFTMAX, false, run};
