/*
 * mock_fused.c - the fused ops of a mock OM (domain surgeon.mock, see
 * sg_mockom.h), each what one ATC fusion pass makes on the device:
 *
 *   Conv2D(X, W, [B])      a Conv (same attributes) whose output goes
 *                          through `activation` ("Relu", or "Clip" with
 *                          clip_min / clip_max) in the same kernel, as UB
 *                          fusion applies it in the output buffer
 *   BatchMatMulV2(A, B, bias)       MatMul(A, B) + bias (numpy broadcast)
 *   MatMulV2(A, B, [C])    Gemm (alpha, beta, transA, transB)
 *   SoftmaxV2(X)           softmax along `axis` (default -1)
 *   LayerNorm(X, [gamma], [beta])   (X - mean) / sqrt(var + epsilon) over
 *                          the trailing `axes`, then * gamma + beta
 *   FusedElementwise(...)  its `body` graph (the fused element-wise chain),
 *                          run as a subgraph: only its output is observed,
 *                          as only the last output of a UB-fused kernel is
 *                          dumped on the device
 *
 * The cube parts (Conv, MatMul, Gemm) and broadcasting epilogues are the
 * ai.onnx kernels, called with this node's attributes, so a fused op
 * computes exactly what its parts compute; the executor rounds at the fused
 * node's own boundary only, as the device keeps intermediate results of a
 * fused kernel in its buffers.
 */
#include "rt_impl.h"
#include "sg_mockom.h"

#include <math.h>
#include <string.h>

/* The ai.onnx opset whose semantics the fused ops use for their parts. */
#define PART_OPSET 21

static bool part_input_given(const void *ctx, uint32_t i)
{
    return ((sg_rt_value *const *)ctx)[i] != NULL;
}

/* Run ai.onnx `op` with k's node attributes on in[0..n_in) into *out. The
 * fused op's own entry requires what its parts need (in[0] at least); the
 * part's entry is checked again, as the executor would. */
static sg_status part(struct sg_kctx *k, const char *op, sg_rt_value *const *in, uint32_t n_in,
                      sg_rt_value **out)
{
    const char *why = "no kernel";
    char msg[128];
    const struct sg_kernel *e =
        n_in && in[0] ? sg_kernel_find("", op, PART_OPSET, in[0]->dtype, &why) : NULL;
    if (!e)
        return sg_kfail(k, SG_EUNSUPPORTED, "its %s part: %s for %s", op, why,
                        n_in && in[0] ? sg_kshape(k, in[0]) : "no input");
    if (!sg_kernel_inputs_fit(e, n_in, part_input_given, in, msg, sizeof msg))
        return sg_kfail(k, SG_EARITY, "its %s part: %s", op, msg);
    sg_rt_value *o[1] = {NULL};
    /* Kernels may tell ops apart by op_type: give them a view of the node
     * as `op` (same name, attributes and outputs). */
    sg_node as_op = *k->node;
    as_op.op_type = op;
    as_op.domain = NULL;
    struct sg_kctx sub = *k;
    sub.node = &as_op;
    sub.opset = PART_OPSET;
    sub.in = in;
    sub.n_in = n_in;
    sub.out = o;
    sub.n_out = 1;
    sg_status st = e->run(&sub);
    if (st) {
        sg_rt_value_unref(o[0]);
        return st;
    }
    *out = o[0];
    return SG_OK;
}

/* Hand `v` (one reference, now the caller's) over as output 0. */
static sg_status give(struct sg_kctx *k, sg_rt_value *v)
{
    sg_status st = sg_kout_value(k, 0, v);
    sg_rt_value_unref(v);
    return st;
}

/* An output tensor of a part, which nobody else holds, to write in place. */
static sg_status own(struct sg_kctx *k, sg_rt_value **v)
{
    if (sg__rt_exclusive(*v))
        return SG_OK;
    sg_rt_value *c;
    if (sg__rt_tensor_copy(*v, &c))
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    sg_rt_value_unref(*v);
    *v = c;
    return SG_OK;
}

/* ------------------------------------------------------------ Conv2D */

static sg_status run_conv2d(struct sg_kctx *k)
{
    sg_rt_value *y = NULL;
    sg_status st = part(k, "Conv", k->in, k->n_in, &y);
    if (st)
        return st;
    const char *act = sg_kattr_string(k, "activation", "");
    double lo, hi;
    if (!*act) {
        return give(k, y);
    } else if (strcmp(act, "Relu") == 0) {
        lo = 0, hi = INFINITY;
    } else if (strcmp(act, "Clip") == 0) {
        lo = sg_kattr_float(k, "clip_min", -INFINITY);
        hi = sg_kattr_float(k, "clip_max", INFINITY);
    } else {
        sg_rt_value_unref(y);
        return sg_kfail(k, SG_EUNSUPPORTED, "unknown activation '%s' (Relu or Clip)", act);
    }
    if ((st = own(k, &y))) {
        sg_rt_value_unref(y);
        return st;
    }
    /* The comparisons of ai.onnx Relu and Clip: NaN passes through. */
    if (y->dtype == SG_DTYPE_FLOAT) {
        float *f = y->data, l = (float)lo, h = (float)hi;
        for (int64_t i = 0; i < y->numel; i++) {
            float v = f[i] < l ? l : f[i];
            f[i] = v > h ? h : v;
        }
    } else {
        for (int64_t i = 0; i < y->numel; i++) {
            double v = sg_rt_get_f64(y, i);
            v = v < lo ? lo : v;
            sg_rt_set_f64(y, i, v > hi ? hi : v);
        }
    }
    return give(k, y);
}

/* ------------------------------------------------------ MatMul + bias */

static sg_status run_batchmatmul_v2(struct sg_kctx *k)
{
    if (k->n_in != 3 || !k->in[2])
        return sg_kfail(k, SG_EARITY, "takes A, B and a bias");
    sg_rt_value *mm = NULL, *y = NULL;
    sg_status st = part(k, "MatMul", k->in, 2, &mm);
    if (st)
        return st;
    sg_rt_value *add_in[2] = {mm, k->in[2]};
    st = part(k, "Add", add_in, 2, &y);
    sg_rt_value_unref(mm);
    return st ? st : give(k, y);
}

static sg_status run_matmul_v2(struct sg_kctx *k)
{
    sg_rt_value *y = NULL;
    sg_status st = part(k, "Gemm", k->in, k->n_in, &y);
    return st ? st : give(k, y);
}

/* ----------------------------------------------------------- softmax */

static sg_status run_softmax_v2(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    uint32_t axis;
    sg_status st;
    if (X->rank == 0)
        return sg_kfail(k, SG_ESHAPE, "needs rank >= 1");
    if ((st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), X->rank, &axis)))
        return st;
    int64_t outer = 1, n = X->dims[axis], inner = 1;
    for (uint32_t d = 0; d < X->rank; d++) {
        if (d < axis)
            outer *= X->dims[d];
        else if (d > axis)
            inner *= X->dims[d];
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    double *row = sg_kscratch(k, (size_t)(n + 1) * sizeof *row);
    if (!row)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * n * inner + in;
            double m = -INFINITY, s = 0;
            for (int64_t i = 0; i < n; i++) {
                row[i] = sg_rt_get_f64(X, base + i * inner);
                m = row[i] > m ? row[i] : m;
            }
            for (int64_t i = 0; i < n; i++)
                s += row[i] = exp(row[i] - m);
            for (int64_t i = 0; i < n; i++)
                sg_rt_set_f64(Y, base + i * inner, row[i] / s);
        }
    return SG_OK;
}

/* --------------------------------------------------------- layer norm */

static sg_status run_layernorm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const int64_t *axes;
    int64_t n_axes = sg_kattr_ints(k, "axes", &axes);
    sg_status st;
    if (n_axes < 1 || (uint64_t)n_axes > X->rank)
        return sg_kfail(k, SG_EINVAL, "needs 1 to %u trailing axes, got %lld", X->rank,
                        (long long)n_axes);
    /* The axes must be the last n_axes dims, in any order. */
    bool used[SG_MAX_RANK] = {false};
    for (int64_t i = 0; i < n_axes; i++) {
        uint32_t a;
        if ((st = sg_kaxis(k, axes[i], X->rank, &a)))
            return st;
        if (a < X->rank - (uint32_t)n_axes || used[a])
            return sg_kfail(k, SG_EINVAL, "axes %s are not the trailing dims of %s",
                            sg_kdims(k, axes, (uint32_t)n_axes), sg_kshape(k, X));
        used[a] = true;
    }
    float eps = sg_kattr_float(k, "epsilon", 1e-5f);
    int64_t n = 1;
    for (uint32_t d = X->rank - (uint32_t)n_axes; d < X->rank; d++)
        n *= X->dims[d];
    int64_t rows = n ? X->numel / n : 0;
    sg_rt_value *Y = NULL;
    if ((st = sg_rt_tensor_create(X->dtype, X->dims, X->rank, &Y, k->diag)))
        return st;
    for (int64_t r = 0; r < rows; r++) {
        int64_t base = r * n;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; i++)
            mean += sg_rt_get_f64(X, base + i);
        mean /= (double)n;
        for (int64_t i = 0; i < n; i++) {
            double d = sg_rt_get_f64(X, base + i) - mean;
            var += d * d;
        }
        var /= (double)n;
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t i = 0; i < n; i++)
            sg_rt_set_f64(Y, base + i, (sg_rt_get_f64(X, base + i) - mean) * inv);
    }
    /* gamma and beta broadcast as the Mul and Add they came from did. */
    static const char *const ops[2] = {"Mul", "Add"};
    for (uint32_t j = 1; j < 3; j++) {
        if (!sg_kin(k, j))
            continue;
        sg_rt_value *in[2] = {Y, k->in[j]}, *next = NULL;
        st = part(k, ops[j - 1], in, 2, &next);
        sg_rt_value_unref(Y);
        if (st)
            return st;
        Y = next;
    }
    return give(k, Y);
}

/* ------------------------------------------------ element-wise chains */

static sg_status run_fused_elementwise(struct sg_kctx *k)
{
    sg_graph *body = sg_kattr_graph(k, "body");
    if (!body)
        return sg_kfail(k, SG_EINVAL, "has no 'body' graph");
    if (body->n_outputs != 1 || k->n_out != 1)
        return sg_kfail(k, SG_EARITY, "its body must have one output (it has %u)", body->n_outputs);
    sg_rt_value *y = NULL;
    sg_status st = sg_ksubgraph_run(k, body, k->n_in, k->in, &y);
    return st ? st : give(k, y);
}

#define D SG_MOCKOM_DOMAIN
static const struct sg_kernel kernels[] = {
    {D, "Conv2D", 1, 0, SG_KT_FLOATS, 0, run_conv2d, "rro"},
    {D, "BatchMatMulV2", 1, 0, SG_KT_FLOATS, 0, run_batchmatmul_v2, "rrr"},
    {D, "MatMulV2", 1, 0, SG_KT_FLOATS, 0, run_matmul_v2, "rro"},
    {D, "SoftmaxV2", 1, 0, SG_KT_FLOATS, 0, run_softmax_v2, "r"},
    {D, "LayerNorm", 1, 0, SG_KT_FLOATS, 0, run_layernorm, "roo"},
    {D, "FusedElementwise", 1, -1, SG_KT_ANY, 0, run_fused_elementwise, "r*"},
};
#undef D
SG_KERNEL_FAMILY(mock_fused, kernels);
