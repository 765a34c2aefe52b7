/*
 * attention.c - the transformer ops of opsets 23 and 24: Attention (23,
 * and 24's nonpad_kv_seqlen input), RotaryEmbedding, RMSNormalization,
 * Swish (24) and TensorScatter (24, the KV-cache update).
 *
 * Everything is computed in double from the inputs' values and rounded once
 * to the output type; the ONNX reference (onnx/reference/ops of v1.22.0)
 * computes in the inputs' type, so float32 results agree to rounding.
 *
 * Attention follows the spec of Attention-23: Q, K, V are 4-D [batch,
 * heads, seq, head_size] or 3-D [batch, seq, heads * head_size] (then
 * q_num_heads and kv_num_heads are required); past_key/past_value are
 * prepended to K/V along the sequence (present_key/present_value); the
 * scores Q K^T * scale (scale defaults to 1/sqrt(head_size)) are softcapped
 * (softcap * tanh(s / softcap) when softcap > 0), the bias added, and a
 * softmax over the total sequence weighs V. The bias is the sum of the
 * attention mask (a bool mask: false is -inf; any other type is added as
 * it is; a last dim shorter than the total sequence is padded with -inf;
 * broadcast to [batch, q_heads, q_seq, total_seq]), the causal mask when
 * is_causal (-inf where key position j > past_seq + query position i) and,
 * from opset 24, -inf where j >= nonpad_kv_seqlen[batch]. With more query
 * heads than key/value heads (a multiple), query head h reads kv head
 * h / (q_heads / kv_heads). qk_matmul_output is, per qk_matmul_output_mode,
 * the scaled scores (0), after softcap (1), after bias (2) or after softmax
 * (3). A row whose bias is -inf everywhere gives NaN, as the reference's
 * softmax does.
 * Where the v1.22.0 reference departs from the spec we follow the spec:
 * with is_causal and a bool mask the reference multiplies 0 by -inf and
 * gets NaN for every allowed position; mode 0 with a softcap returns the
 * softcapped scores there. softmax_precision is accepted (a float type);
 * the softmax runs in double anyway.
 *
 * RotaryEmbedding rotates the first rotary_embedding_dim (default: all)
 * values of each head of X (4-D [batch, heads, seq, head_size] or 3-D
 * [batch, seq, hidden] with num_heads) by the angles whose cos/sin are
 * cos_cache/sin_cache: [batch, seq, dim/2], or [max_position, dim/2] rows
 * picked by position_ids [batch, seq]. Pairs are (i, i + dim/2), or
 * (2i, 2i + 1) when interleaved.
 *
 * RMSNormalization: Y = X / sqrt(mean(X^2 over axes [axis, rank)) +
 * epsilon) * Scale, Scale broadcast against X (numpy rules). stash_type
 * must be 1 (float), as the reference requires.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

/* The elements of v as doubles in scratch; NULL when out of memory. */
static double *as_f64(struct sg_kctx *k, const sg_rt_value *v)
{
    double *d = sg_kscratch(k, (size_t)(v->numel ? v->numel : 1) * sizeof *d);
    if (d)
        for (int64_t i = 0; i < v->numel; i++)
            d[i] = sg_rt_get_f64(v, i);
    return d;
}

/* ---------------------------------------------------------- Attention */

struct att {
    int64_t B, Hq, Hkv, Sq, Skv, Spast, St, D, Dv;
    bool in3; /* 3-D Q, K, V */
};

/* Element (b, h, s, d) of a [B, H, S, D] tensor stored 4-D, or 3-D as
 * [B, S, H * D]. */
static int64_t at4(bool in3, int64_t H, int64_t S, int64_t D, int64_t b, int64_t h, int64_t s,
                   int64_t d)
{
    return in3 ? ((b * S + s) * H + h) * D + d : ((b * H + h) * S + s) * D + d;
}

static sg_status att_shapes(struct sg_kctx *k, struct att *a)
{
    const sg_rt_value *Q = sg_kin(k, 0), *K = sg_kin(k, 1), *V = sg_kin(k, 2);
    const sg_rt_value *PK = sg_kin(k, 4), *PV = sg_kin(k, 5);
    memset(a, 0, sizeof *a);
    if (Q->rank != K->rank || Q->rank != V->rank || (Q->rank != 3 && Q->rank != 4))
        return sg_kfail(k, SG_ESHAPE, "Q %s, K %s and V %s must all be 3-D or all 4-D",
                        sg_kshape(k, Q), sg_kshape(k, K), sg_kshape(k, V));
    if (K->dtype != Q->dtype || V->dtype != Q->dtype)
        return sg_kfail(k, SG_ETYPE, "Q %s, K %s and V %s must have one element type",
                        sg_kshape(k, Q), sg_kshape(k, K), sg_kshape(k, V));
    a->B = Q->dims[0];
    if (Q->rank == 3) {
        a->in3 = true;
        int64_t hq = sg_kattr_int(k, "q_num_heads", 0), hkv = sg_kattr_int(k, "kv_num_heads", 0);
        if (hq <= 0 || hkv <= 0 || Q->dims[2] % hq || K->dims[2] % hkv || V->dims[2] % hkv)
            return sg_kfail(k, SG_EINVAL,
                            "3-D Q %s, K %s, V %s need positive q_num_heads (%lld) and "
                            "kv_num_heads (%lld) dividing their hidden sizes",
                            sg_kshape(k, Q), sg_kshape(k, K), sg_kshape(k, V), (long long)hq,
                            (long long)hkv);
        a->Hq = hq, a->Hkv = hkv, a->Sq = Q->dims[1], a->Skv = K->dims[1];
        a->D = Q->dims[2] / hq, a->Dv = V->dims[2] / hkv;
        if (K->dims[2] / hkv != a->D || V->dims[1] != a->Skv || K->dims[0] != a->B ||
            V->dims[0] != a->B)
            return sg_kfail(k, SG_ESHAPE, "Q %s, K %s and V %s do not agree", sg_kshape(k, Q),
                            sg_kshape(k, K), sg_kshape(k, V));
    } else {
        a->Hq = Q->dims[1], a->Sq = Q->dims[2], a->D = Q->dims[3];
        a->Hkv = K->dims[1], a->Skv = K->dims[2], a->Dv = V->dims[3];
        if (K->dims[0] != a->B || V->dims[0] != a->B || K->dims[3] != a->D ||
            V->dims[1] != a->Hkv || V->dims[2] != a->Skv)
            return sg_kfail(k, SG_ESHAPE, "Q %s, K %s and V %s do not agree", sg_kshape(k, Q),
                            sg_kshape(k, K), sg_kshape(k, V));
    }
    if (a->Hkv == 0 || a->Hq % a->Hkv)
        return sg_kfail(k, SG_ESHAPE,
                        "q_num_heads %lld must be a multiple of kv_num_heads %lld (Q %s, K %s)",
                        (long long)a->Hq, (long long)a->Hkv, sg_kshape(k, Q), sg_kshape(k, K));
    if (!PK != !PV)
        return sg_kfail(k, SG_EINVAL, "past_key and past_value must be given together");
    if (PK) {
        if (PK->rank != 4 || PV->rank != 4 || PK->dims[0] != a->B || PK->dims[1] != a->Hkv ||
            PK->dims[3] != a->D || PV->dims[0] != a->B || PV->dims[1] != a->Hkv ||
            PV->dims[2] != PK->dims[2] || PV->dims[3] != a->Dv || PK->dtype != Q->dtype ||
            PV->dtype != Q->dtype)
            return sg_kfail(k, SG_ESHAPE,
                            "past_key %s and past_value %s must be [%lld, %lld, past, %lld] "
                            "and [%lld, %lld, past, %lld] of Q's type",
                            sg_kshape(k, PK), sg_kshape(k, PV), (long long)a->B, (long long)a->Hkv,
                            (long long)a->D, (long long)a->B, (long long)a->Hkv, (long long)a->Dv);
        a->Spast = PK->dims[2];
    }
    a->St = a->Spast + a->Skv;
    return SG_OK;
}

/* The additive bias [B, Hq, Sq, St] (broadcast view through strides of
 * the mask; NULL m: none). */
struct att_mask {
    const sg_rt_value *m;
    int64_t str[4], len_last;
};

static sg_status att_mask_init(struct sg_kctx *k, const struct att *a, struct att_mask *am)
{
    const sg_rt_value *M = sg_kin(k, 3);
    memset(am, 0, sizeof *am);
    if (!M)
        return SG_OK;
    int64_t want[4] = {a->B, a->Hq, a->Sq, a->St};
    if (M->rank < 1 || M->rank > 4 || M->dtype == SG_DTYPE_STRING)
        return sg_kfail(k, SG_ESHAPE,
                        "attn_mask %s must be a numeric or bool tensor of rank 1 to 4",
                        sg_kshape(k, M));
    int64_t s = 1;
    for (uint32_t i = 0; i < 4; i++)
        am->str[i] = 0;
    for (uint32_t r = M->rank; r-- > 0;) {
        uint32_t d = 4 - M->rank + r;
        int64_t n = M->dims[r];
        bool ok = d == 3 ? n <= want[3] : (n == want[d] || n == 1);
        if (!ok)
            return sg_kfail(k, SG_ESHAPE,
                            "attn_mask %s does not broadcast to [%lld, %lld, %lld, %lld]",
                            sg_kshape(k, M), (long long)want[0], (long long)want[1],
                            (long long)want[2], (long long)want[3]);
        am->str[d] = n == 1 && d != 3 ? 0 : s;
        s *= n;
    }
    am->m = M;
    am->len_last = M->dims[M->rank - 1];
    /* A last dim shorter than the total sequence (1 included) is padded
     * with -inf, as the reference does, not broadcast. */
    return SG_OK;
}

static double att_bias(const struct att_mask *am, int64_t b, int64_t h, int64_t i, int64_t j)
{
    if (!am->m)
        return 0;
    if (j >= am->len_last)
        return -INFINITY;
    int64_t off = b * am->str[0] + h * am->str[1] + i * am->str[2] + j * am->str[3];
    if (am->m->dtype == SG_DTYPE_BOOL)
        return ((const uint8_t *)am->m->data)[off] ? 0 : -INFINITY;
    return sg_rt_get_f64(am->m, off);
}

static sg_status run_attention(struct sg_kctx *k)
{
    const sg_rt_value *Q = sg_kin(k, 0), *K = sg_kin(k, 1), *V = sg_kin(k, 2);
    const sg_rt_value *PK = sg_kin(k, 4), *PV = sg_kin(k, 5);
    const sg_rt_value *NP = k->opset >= 24 ? sg_kin(k, 6) : NULL;
    struct att a;
    struct att_mask am;
    sg_status st;
    if ((st = att_shapes(k, &a)) || (st = att_mask_init(k, &a, &am)))
        return st;
    const int64_t *nonpad = NULL;
    if (NP) {
        int64_t nn;
        if ((st = sg_kin_ints(k, 6, &nonpad, &nn)))
            return st;
        if (nn != a.B)
            return sg_kfail(k, SG_ESHAPE,
                            "nonpad_kv_seqlen %s must hold one length per batch (%lld)",
                            sg_kshape(k, NP), (long long)a.B);
    }
    int64_t mode = sg_kattr_int(k, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return sg_kfail(k, SG_EINVAL, "qk_matmul_output_mode %lld is not 0, 1, 2 or 3",
                        (long long)mode);
    const sg_attr *sp = sg_kattr(k, "softmax_precision");
    if (sp && !sg_dtype_is_float((int32_t)sp->i))
        return sg_kfail(k, SG_EINVAL, "softmax_precision %lld is not a float type",
                        (long long)sp->i);
    bool causal = sg_kattr_int(k, "is_causal", 0) != 0;
    double scale = sg_kattr(k, "scale") ? sg_kattr_float(k, "scale", 1) : 1.0 / sqrt((double)a.D);
    double softcap = sg_kattr_float(k, "softcap", 0);

    /* present K/V: [B, Hkv, St, D] and [B, Hkv, St, Dv] */
    int64_t pkd[4] = {a.B, a.Hkv, a.St, a.D}, pvd[4] = {a.B, a.Hkv, a.St, a.Dv};
    int64_t yd[4] = {a.B, a.Hq, a.Sq, a.Dv}, y3[3] = {a.B, a.Sq, a.Hq * a.Dv};
    int64_t qkd[4] = {a.B, a.Hq, a.Sq, a.St};
    double *kk = sg_kscratch(k, (size_t)(a.B * a.Hkv * a.St * a.D + 1) * sizeof(double));
    double *vv = sg_kscratch(k, (size_t)(a.B * a.Hkv * a.St * a.Dv + 1) * sizeof(double));
    double *q = as_f64(k, Q), *row = sg_kscratch(k, (size_t)(a.St + 1) * sizeof(double));
    if (!kk || !vv || !q || !row)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t b = 0; b < a.B; b++)
        for (int64_t h = 0; h < a.Hkv; h++)
            for (int64_t s = 0; s < a.St; s++) {
                bool past = s < a.Spast;
                int64_t sk = s - a.Spast;
                for (int64_t d = 0; d < a.D; d++)
                    kk[((b * a.Hkv + h) * a.St + s) * a.D + d] =
                        past ? sg_rt_get_f64(PK, ((b * a.Hkv + h) * a.Spast + s) * a.D + d)
                             : sg_rt_get_f64(K, at4(a.in3, a.Hkv, a.Skv, a.D, b, h, sk, d));
                for (int64_t d = 0; d < a.Dv; d++)
                    vv[((b * a.Hkv + h) * a.St + s) * a.Dv + d] =
                        past ? sg_rt_get_f64(PV, ((b * a.Hkv + h) * a.Spast + s) * a.Dv + d)
                             : sg_rt_get_f64(V, at4(a.in3, a.Hkv, a.Skv, a.Dv, b, h, sk, d));
            }
    sg_rt_value *Y, *QK = NULL, *P;
    if ((st = sg_kout(k, 0, Q->dtype, a.in3 ? y3 : yd, a.in3 ? 3 : 4, &Y)))
        return st;
    if (sg_kout_wanted(k, 1)) {
        if ((st = sg_kout(k, 1, Q->dtype, pkd, 4, &P)))
            return st;
        for (int64_t i = 0; i < P->numel; i++)
            sg_rt_set_f64(P, i, kk[i]);
    }
    if (sg_kout_wanted(k, 2)) {
        if ((st = sg_kout(k, 2, Q->dtype, pvd, 4, &P)))
            return st;
        for (int64_t i = 0; i < P->numel; i++)
            sg_rt_set_f64(P, i, vv[i]);
    }
    if (sg_kout_wanted(k, 3) && (st = sg_kout(k, 3, Q->dtype, qkd, 4, &QK)))
        return st;
    int64_t reps = a.Hq / a.Hkv;
    for (int64_t b = 0; b < a.B; b++)
        for (int64_t h = 0; h < a.Hq; h++) {
            int64_t hk = h / reps;
            const double *kb = kk + (b * a.Hkv + hk) * a.St * a.D;
            const double *vb = vv + (b * a.Hkv + hk) * a.St * a.Dv;
            for (int64_t i = 0; i < a.Sq; i++) {
                int64_t qk_off = ((b * a.Hq + h) * a.Sq + i) * a.St;
                double mx = -INFINITY;
                for (int64_t j = 0; j < a.St; j++) {
                    double s = 0;
                    for (int64_t d = 0; d < a.D; d++)
                        s += q[at4(a.in3, a.Hq, a.Sq, a.D, b, h, i, d)] * kb[j * a.D + d];
                    s *= scale;
                    if (QK && mode == 0)
                        sg_rt_set_f64(QK, qk_off + j, s);
                    if (softcap > 0)
                        s = softcap * tanh(s / softcap);
                    if (QK && mode == 1)
                        sg_rt_set_f64(QK, qk_off + j, s);
                    s += att_bias(&am, b, h, i, j);
                    if (causal && j > a.Spast + i)
                        s = -INFINITY;
                    if (nonpad && j >= nonpad[b])
                        s = -INFINITY;
                    if (QK && mode == 2)
                        sg_rt_set_f64(QK, qk_off + j, s);
                    row[j] = s;
                    mx = fmax(mx, s);
                }
                double sum = 0;
                for (int64_t j = 0; j < a.St; j++) {
                    row[j] = exp(row[j] - mx); /* all -inf: NaN, as the reference */
                    sum += row[j];
                }
                for (int64_t j = 0; j < a.St; j++) {
                    row[j] /= sum;
                    if (QK && mode == 3)
                        sg_rt_set_f64(QK, qk_off + j, row[j]);
                }
                for (int64_t d = 0; d < a.Dv; d++) {
                    double y = 0;
                    for (int64_t j = 0; j < a.St; j++)
                        y += row[j] * vb[j * a.Dv + d];
                    sg_rt_set_f64(Y, at4(a.in3, a.Hq, a.Sq, a.Dv, b, h, i, d), y);
                }
            }
        }
    return SG_OK;
}

/* ---------------------------------------------------- RotaryEmbedding */

static sg_status run_rotary(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *CC = sg_kin(k, 1), *SC = sg_kin(k, 2);
    const sg_rt_value *PI = sg_kin(k, 3);
    int64_t B, S, H, D;
    bool in3 = X->rank == 3;
    if (X->rank == 4) {
        B = X->dims[0], H = X->dims[1], S = X->dims[2], D = X->dims[3];
    } else if (in3) {
        H = sg_kattr_int(k, "num_heads", 0);
        if (H <= 0 || X->dims[2] % H)
            return sg_kfail(k, SG_EINVAL,
                            "3-D input %s needs num_heads (%lld) dividing its hidden size",
                            sg_kshape(k, X), (long long)H);
        B = X->dims[0], S = X->dims[1], D = X->dims[2] / H;
    } else {
        return sg_kfail(k, SG_ESHAPE,
                        "input %s must be [batch, heads, seq, head_size] or [batch, seq, hidden]",
                        sg_kshape(k, X));
    }
    int64_t rd = sg_kattr_int(k, "rotary_embedding_dim", 0);
    if (rd == 0)
        rd = D;
    if (rd < 0 || rd > D || rd % 2)
        return sg_kfail(k, SG_EINVAL,
                        "rotary_embedding_dim %lld must be even and at most the head size %lld",
                        (long long)rd, (long long)D);
    int64_t half = rd / 2;
    bool inter = sg_kattr_int(k, "interleaved", 0) != 0;
    const int64_t *pos = NULL;
    int64_t npos = 0;
    sg_status st;
    if (PI) {
        if ((PI->rank != 2 || PI->dims[0] != B || PI->dims[1] != S))
            return sg_kfail(k, SG_ESHAPE, "position_ids %s must be [%lld, %lld]", sg_kshape(k, PI),
                            (long long)B, (long long)S);
        if (PI->dtype != SG_DTYPE_INT64)
            return sg_kfail(k, SG_ETYPE, "position_ids %s must be int64", sg_kshape(k, PI));
        pos = PI->data;
        npos = PI->numel;
        if (CC->rank != 2 || SC->rank != 2 || CC->dims[1] != half || SC->dims[0] != CC->dims[0] ||
            SC->dims[1] != half)
            return sg_kfail(k, SG_ESHAPE,
                            "with position_ids, cos_cache %s and sin_cache %s must be "
                            "[max_position, %lld]",
                            sg_kshape(k, CC), sg_kshape(k, SC), (long long)half);
        for (int64_t i = 0; i < npos; i++)
            if (pos[i] < 0 || pos[i] >= CC->dims[0])
                return sg_kfail(k, SG_ERANGE, "position_ids[%lld] = %lld is outside [0, %lld)",
                                (long long)i, (long long)pos[i], (long long)CC->dims[0]);
    } else if (CC->rank != 3 || SC->rank != 3 || CC->dims[0] != B || CC->dims[1] != S ||
               CC->dims[2] != half || memcmp(CC->dims, SC->dims, 3 * sizeof CC->dims[0])) {
        return sg_kfail(k, SG_ESHAPE,
                        "without position_ids, cos_cache %s and sin_cache %s must be "
                        "[%lld, %lld, %lld]",
                        sg_kshape(k, CC), sg_kshape(k, SC), (long long)B, (long long)S,
                        (long long)half);
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            int64_t crow = pos ? pos[b * S + s] * half : (b * S + s) * half;
            for (int64_t h = 0; h < H; h++) {
                int64_t base = in3 ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
                for (int64_t i = 0; i < half; i++) {
                    int64_t i1 = inter ? 2 * i : i, i2 = inter ? 2 * i + 1 : i + half;
                    double c = sg_rt_get_f64(CC, crow + i), sn = sg_rt_get_f64(SC, crow + i);
                    double x1 = sg_rt_get_f64(X, base + i1), x2 = sg_rt_get_f64(X, base + i2);
                    sg_rt_set_f64(Y, base + i1, c * x1 - sn * x2);
                    sg_rt_set_f64(Y, base + i2, sn * x1 + c * x2);
                }
                for (int64_t d = rd; d < D; d++)
                    sg_rt_set_f64(Y, base + d, sg_rt_get_f64(X, base + d));
            }
        }
    return SG_OK;
}

/* --------------------------------------------------- RMSNormalization */

static sg_status run_rms_norm(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0), *S = sg_kin(k, 1);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -1), X->rank, &axis);
    if (st)
        return st;
    int64_t stash = sg_kattr_int(k, "stash_type", 1);
    if (stash != SG_DTYPE_FLOAT)
        return sg_kfail(k, SG_EINVAL, "stash_type %lld is not supported (only 1, float)",
                        (long long)stash);
    if (!sg_dtype_is_float(S->dtype))
        return sg_kfail(k, SG_ETYPE, "scale %s must be a float tensor", sg_kshape(k, S));
    double eps = sg_kattr_float(k, "epsilon", 1e-5f);
    int64_t n = 1;
    for (uint32_t d = axis; d < X->rank; d++)
        n *= X->dims[d];
    const sg_rt_value *ts[2] = {X, S};
    struct sg_bcast bc;
    if ((st = sg_bcast_init(k, &bc, 2, ts)))
        return st;
    if (bc.rank != X->rank || memcmp(bc.dims, X->dims, X->rank * sizeof X->dims[0]))
        return sg_kfail(k, SG_ESHAPE, "scale %s does not broadcast to input %s", sg_kshape(k, S),
                        sg_kshape(k, X));
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)))
        return st;
    if (!X->numel)
        return SG_OK;
    int64_t rows = X->numel / n;
    double *inv = sg_kscratch(k, (size_t)rows * sizeof *inv);
    if (!inv)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    for (int64_t r = 0; r < rows; r++) {
        double ss = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = sg_rt_get_f64(X, r * n + i);
            ss += v * v;
        }
        inv[r] = 1.0 / sqrt(ss / (double)n + eps);
    }
    while (sg_bcast_next(&bc))
        for (int64_t j = 0; j < bc.run; j++) {
            int64_t o = bc.pos + j;
            double x = sg_rt_get_f64(X, bc.off[0] + j * bc.step[0]);
            double s = sg_rt_get_f64(S, bc.off[1] + j * bc.step[1]);
            sg_rt_set_f64(Y, o, x * inv[o / n] * s);
        }
    return SG_OK;
}

/* -------------------------------------------------------------- Swish */

/* Swish (24): x * sigmoid(alpha * x). */
static sg_status run_swish(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    double alpha = sg_kattr_float(k, "alpha", 1.0f);
    sg_rt_value *Y;
    sg_status st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y);
    for (int64_t i = 0; !st && i < X->numel; i++) {
        double x = sg_rt_get_f64(X, i);
        sg_rt_set_f64(Y, i, x / (1.0 + exp(-alpha * x)));
    }
    return st;
}

/* ------------------------------------------------------ TensorScatter */

/* TensorScatter (24): present = past with update written along `axis`
 * (not 0) from write_indices[batch] (default 0) on; "linear" needs the
 * update to fit, "circular" wraps the sequence index. */
static sg_status run_tensor_scatter(struct sg_kctx *k)
{
    const sg_rt_value *P = sg_kin(k, 0), *U = sg_kin(k, 1), *WI = sg_kin(k, 2);
    uint32_t axis;
    sg_status st = sg_kaxis(k, sg_kattr_int(k, "axis", -2), P->rank, &axis);
    if (st)
        return st;
    if (axis == 0)
        return sg_kfail(k, SG_EINVAL, "axis must not be the batch axis 0");
    const char *mode = sg_kattr_string(k, "mode", "linear");
    bool circular = strcmp(mode, "circular") == 0;
    if (!circular && strcmp(mode, "linear") != 0)
        return sg_kfail(k, SG_EINVAL, "mode '%s' is not linear or circular", mode);
    bool same = U->dtype == P->dtype && U->rank == P->rank;
    for (uint32_t d = 0; same && d < P->rank; d++)
        same = d == axis ? U->dims[d] <= P->dims[d] : U->dims[d] == P->dims[d];
    if (!same)
        return sg_kfail(k, SG_ESHAPE,
                        "update %s must be past_cache %s but for a sequence (axis %u) no longer",
                        sg_kshape(k, U), sg_kshape(k, P), axis);
    int64_t B = P->dims[0], maxs = P->dims[axis], seq = U->dims[axis];
    const int64_t *wi = NULL;
    if (WI) {
        if (WI->dtype != SG_DTYPE_INT64 || WI->rank != 1 || WI->dims[0] != B)
            return sg_kfail(k, SG_ESHAPE, "write_indices %s must be int64[%lld]", sg_kshape(k, WI),
                            (long long)B);
        wi = WI->data;
        for (int64_t b = 0; b < B; b++)
            if (wi[b] < 0 || (!circular && wi[b] > maxs - seq))
                return sg_kfail(k, SG_ERANGE,
                                "write_indices[%lld] = %lld: the update of %lld does not fit the "
                                "cache of %lld (mode %s)",
                                (long long)b, (long long)wi[b], (long long)seq, (long long)maxs,
                                mode);
    }
    sg_rt_value *Y;
    if ((st = sg_kout(k, 0, P->dtype, P->dims, P->rank, &Y)))
        return st;
    size_t es = sg_rt_elem_size(P->dtype);
    if (P->numel)
        memcpy(Y->data, P->data, (size_t)P->numel * es);
    if (!U->numel || !maxs)
        return SG_OK;
    int64_t inner = 1, outer = 1;
    for (uint32_t d = axis + 1; d < P->rank; d++)
        inner *= P->dims[d];
    for (uint32_t d = 1; d < axis; d++)
        outer *= P->dims[d];
    uint8_t *y = Y->data;
    const uint8_t *u = U->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t o = 0; o < outer; o++)
            for (int64_t s = 0; s < seq; s++) {
                /* wi[b] is >= 0, and <= maxs - seq unless circular */
                int64_t at = circular ? ((wi ? wi[b] % maxs : 0) + s) % maxs : (wi ? wi[b] : 0) + s;
                int64_t yo = ((b * outer + o) * maxs + at) * inner;
                int64_t uo = ((b * outer + o) * seq + s) * inner;
                memcpy(y + (size_t)yo * es, u + (size_t)uo * es, (size_t)inner * es);
            }
    return SG_OK;
}

#define FL SG_KT_FLOATS
/* One entry per line, as in the other families. */
/* clang-format off */
static const struct sg_kernel kernels[] = {
    {"", "Attention", 23, 0, FL, 0, run_attention, "rrrooo"},
    {"", "Attention", 24, 0, FL, 0, run_attention, "rrroooo"},
    {"", "RMSNormalization", 23, 0, FL, 0, run_rms_norm, "rr"},
    {"", "RotaryEmbedding", 23, 0, FL, 0, run_rotary, "rrro"},
    {"", "Swish", 24, 0, FL, 0, run_swish, "r"},
    {"", "TensorScatter", 24, 0, SG_KT_ALL | SG_KT_F8 | SG_KT_INT4 | SG_KT_F4, 0, run_tensor_scatter, "rro"},
};
/* clang-format on */
SG_KERNEL_FAMILY(attention, kernels);
