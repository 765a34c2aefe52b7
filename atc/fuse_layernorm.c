/*
 * fuse_layernorm.c - LayerNormONNXFusionPass: a layer norm written out as
 * ONNX exporters write it,
 *
 *   mean = ReduceMean(x, axes, keepdims=1)
 *   d    = Sub(x, mean)
 *   var  = ReduceMean(Pow(d, 2), axes, keepdims=1)
 *   n    = Div(d, Sqrt(Add(var, epsilon)))
 *   y    = Add(Mul(n, gamma), beta)          (gamma, beta optional)
 *
 * becomes one LayerNorm(x, [gamma], [beta], axes, epsilon). The axes must
 * be the trailing dimensions of x, epsilon and the exponent 2 constants,
 * gamma and beta constants, and every intermediate value must stay inside
 * the pattern. The fused op takes the name of the pattern's last node.
 * On the device (and in the mock) it computes its statistics in float32
 * even when its inputs and output are float16, which is why the fused op
 * does not overflow where the unfused Pow can.
 */
#include "mock_impl.h"

#include "sg_alloc.h"

#include <string.h>

#define MAX_AXES 8

/* The reduction axes of n as the trailing-axes count k (axes -k..-1), or 0
 * when they are not the trailing axes of a tensor of rank `rank`. */
static size_t trailing(struct sg__atc_mock *c, const sg_node *n, int rank)
{
    int64_t axes[MAX_AXES];
    size_t k;
    if (sg_attr_int(n, "keepdims", 1) != 1 || !sg__atc_reduce_axes(c, n, axes, MAX_AXES, &k) ||
        k == 0)
        return 0;
    bool seen[MAX_AXES] = {false};
    for (size_t i = 0; i < k; i++) {
        int64_t a = axes[i];
        if (a >= 0) {
            if (rank < 0)
                return 0;
            a -= rank; /* as a negative axis */
        }
        if (a >= 0 || a < -(int64_t)k || seen[-a - 1])
            return 0;
        seen[-a - 1] = true;
    }
    return k;
}

/* The other operand of binary node n when one operand is v. */
static sg_value *other(const sg_node *n, const sg_value *v)
{
    if (n->n_inputs != 2)
        return NULL;
    if (n->inputs[0] == v)
        return n->inputs[1] != v ? n->inputs[1] : NULL;
    return n->inputs[1] == v ? n->inputs[0] : NULL;
}

static sg_status try_fuse(struct sg__atc_mock *c, sg_node *rm1)
{
    if (rm1->n_inputs < 1 || rm1->n_outputs != 1 || !rm1->inputs[0])
        return SG_OK;
    sg_value *x = rm1->inputs[0];
    int rank = sg__atc_rank(x);
    size_t k = trailing(c, rm1, rank);
    if (!k)
        return SG_OK;
    sg_node *sub = sg__atc_only_reader(rm1->outputs[0]);
    if (!sg__atc_is(sub, "Sub") || sub->n_inputs != 2 || sub->inputs[0] != x ||
        sub->inputs[1] != rm1->outputs[0] || sub->n_outputs != 1)
        return SG_OK;
    sg_value *d = sub->outputs[0];
    if (!d || d->n_uses != 2 || (d->flags & SG_VALUE_OUTPUT))
        return SG_OK;
    sg_node *pow = NULL, *div = NULL;
    for (uint32_t u = 0; u < 2; u++) {
        if (d->uses[u].index != 0)
            return SG_OK;
        if (sg__atc_is(d->uses[u].node, "Pow"))
            pow = d->uses[u].node;
        else if (sg__atc_is(d->uses[u].node, "Div"))
            div = d->uses[u].node;
    }
    double two, eps;
    if (!pow || !div || pow->n_inputs != 2 || !sg__atc_const_scalar(c, pow->inputs[1], &two) ||
        two != 2.0)
        return SG_OK;
    sg_node *rm2 = sg__atc_only_reader(pow->outputs[0]);
    if (!sg__atc_is(rm2, "ReduceMean") || rm2->inputs[0] != pow->outputs[0] ||
        trailing(c, rm2, rank) != k)
        return SG_OK;
    sg_node *add = sg__atc_only_reader(rm2->outputs[0]);
    if (!sg__atc_is(add, "Add") || !sg__atc_const_scalar(c, other(add, rm2->outputs[0]), &eps))
        return SG_OK;
    sg_node *sq = sg__atc_only_reader(add->outputs[0]);
    if (!sg__atc_is(sq, "Sqrt") || sg__atc_only_reader(sq->outputs[0]) != div ||
        div->n_inputs != 2 || div->inputs[1] != sq->outputs[0] || !div->outputs[0])
        return SG_OK;
    sg_node *pattern[9] = {rm1, sub, pow, rm2, add, sq, div};
    size_t n_pat = 7;
    sg_value *ins[3] = {x, NULL, NULL};
    size_t n_ins = 1;
    sg_value *out = div->outputs[0];
    sg_node *mul = sg__atc_only_reader(out);
    sg_value *gamma = sg__atc_is(mul, "Mul") ? other(mul, out) : NULL;
    if (gamma && sg__atc_const(gamma) && mul->outputs[0]) {
        pattern[n_pat++] = mul;
        ins[n_ins++] = gamma;
        out = mul->outputs[0];
        sg_node *add2 = sg__atc_only_reader(out);
        sg_value *beta = sg__atc_is(add2, "Add") ? other(add2, out) : NULL;
        if (beta && sg__atc_const(beta) && add2->outputs[0]) {
            pattern[n_pat++] = add2;
            ins[n_ins++] = beta;
            out = add2->outputs[0];
        }
    }
    int64_t axes[MAX_AXES];
    for (size_t i = 0; i < k; i++)
        axes[i] = -(int64_t)k + (int64_t)i;
    struct sg__atc_fusion f = {pattern,
                               n_pat,
                               ins,
                               n_ins,
                               out,
                               "LayerNorm",
                               pattern[n_pat - 1]->name,
                               NULL,
                               SG_FP_LAYERNORM_ONNX};
    sg_node *fused;
    sg_status st = sg__atc_fuse(c, &f, &fused);
    if (!st && (sg_node_set_attr_ints(fused, "axes", axes, k) ||
                sg_node_set_attr_float(fused, "epsilon", (float)eps)))
        st = sg_diag_set(c->diag, SG_ENOMEM, "out of memory");
    return st;
}

static sg_status run(struct sg__atc_mock *c, enum sg_fusion_pass_id pass)
{
    (void)pass;
    return sg__atc_each_op(c, "ReduceMean", try_fuse);
}

const struct sg__atc_rule sg__atc_rule_layernorm = {SG_FP_LAYERNORM_ONNX, false, run};
