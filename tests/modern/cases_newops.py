"""Generated-corpus cases for the operators that opsets 19 to 24 added or
changed in the ways issue 16 lists beside the Reduce/Pad/... family of
cases_ops: GridSample (16, 20 with N-D inputs and the modes linear/
nearest/cubic, 22), AffineGrid (20), DeformConv (19, 22), Attention (23,
24), RotaryEmbedding (23), RMSNormalization (23), RegexFullMatch,
StringConcat and StringSplit (20), and refusals of bad input.

Interface: see cases_dtypes.py (cases() yields (case_name, model, inputs,
expected); expected None takes ONNX Runtime 1.30's outputs).

ONNX Runtime is the oracle wherever it runs the case. Cases it does not run
carry numpy formulas written here from the spec's text (GridSample on 3-D
and 5-D inputs in cubic mode, which ONNX Runtime's CPU kernel refuses).
The known differences to the ONNX reference are stated in the kernels'
comments (runtime/kernels/grid.c, attention.c).
"""

import numpy as np
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def model(name, nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="cases_newops")
    m.ir_version = 9 if opset < 21 else 10 if opset < 24 else 11
    return m


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def one_op(name, op, ins, outs, opset, attrs=None, inits=()):
    """A model of one node; ins/outs are (name, dtype, shape), a name ''
    leaves an optional input out."""
    node = helper.make_node(op, [i[0] for i in ins], [o[0] for o in outs], name="n0",
                            **(attrs or {}))
    init_names = {t.name for t in inits}
    return model(name, [node], [vi(*i) for i in ins if i[0] and i[0] not in init_names],
                 [vi(*o) for o in outs], opset, inits)


def rng(seed):
    return np.random.RandomState(seed)


# --------------------------------------------------------- GridSample


def gs_formula(x, grid, mode, pad, align):
    """GridSample from the spec's text, for any number of spatial dims:
    denormalise (align_corners picks corner centres or edges), nearest rounds
    half to even, the point is clamped (border, not for cubic) or reflected
    into the image, and the pixels read are padded per dim."""
    nd = x.ndim - 2
    dims = x.shape[2:]
    lo = [0.0 if align else -0.5] * nd
    hi = [(d - 1.0) if align else (d - 0.5) for d in dims]

    def reflect(v, a, b):
        r = b - a
        if r <= 0:
            return a
        if v < a:
            dv = a - v
            k, m = divmod(dv, r)
            return a + m if k % 2 == 0 else b - m
        if v > b:
            dv = v - b
            k, m = divmod(dv, r)
            return b - m if k % 2 == 0 else a + m
        return v

    def pixel(plane, idx):
        j = []
        for d, i in enumerate(idx):
            if pad == "zeros":
                if i < 0 or i >= dims[d]:
                    return 0.0
            elif pad == "border":
                i = min(max(i, 0), dims[d] - 1)
            elif i < 0 or i >= dims[d]:
                i = int(reflect(float(i), lo[d], hi[d]))
                i = min(max(i, 0), dims[d] - 1)
            j.append(i)
        return float(plane[tuple(j)])

    def cubic_w(t):
        a = -0.75

        def k(s):
            s = abs(s)
            if s <= 1:
                return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
            if s < 2:
                return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a
            return 0.0
        return [k(t + 1), k(t), k(1 - t), k(2 - t)]

    out_sp = grid.shape[1:-1]
    y = np.zeros(x.shape[:2] + out_sp, dtype=np.float64)
    for n in range(x.shape[0]):
        for o in np.ndindex(*out_sp):
            g = grid[(n,) + o]
            p = []
            for d in range(nd):
                v = float(g[nd - 1 - d])
                L = dims[d]
                v = (v + 1) / 2 * (L - 1) if align else ((v + 1) * L - 1) / 2
                if mode == "nearest":
                    v = float(np.rint(v))
                if v < lo[d] or v > hi[d]:
                    if pad == "border" and mode != "cubic":
                        v = min(max(v, 0.0), L - 1.0)
                    elif pad == "reflection":
                        v = reflect(v, lo[d], hi[d])
                p.append(v)
            for c in range(x.shape[1]):
                plane = x[n, c]
                if mode == "nearest":
                    y[(n, c) + o] = pixel(plane, [int(v) for v in p])
                    continue
                taps = []
                for v in p:
                    f = int(np.floor(v))
                    t = v - f
                    if mode == "linear":
                        taps.append([(f, 1 - t), (f + 1, t)])
                    else:
                        taps.append(list(zip(range(f - 1, f + 3), cubic_w(t))))
                s = 0.0
                for combo in np.ndindex(*[len(t) for t in taps]):
                    w = 1.0
                    idx = []
                    for d, k in enumerate(combo):
                        idx.append(taps[d][k][0])
                        w *= taps[d][k][1]
                    s += w * pixel(plane, idx)
                y[(n, c) + o] = s
    return y.astype(x.dtype)


def grid_sample_cases():
    r = rng(1)
    x4 = r.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)
    # points inside, on and past the borders (up to 1.6 x outside)
    g4 = r.uniform(-1.6, 1.6, (1, 3, 3, 2)).astype(np.float32)
    g4[0, 0, 0] = [-1, -1]
    g4[0, 0, 1] = [1, 1]
    g4[0, 0, 2] = [0.5, -0.25]  # a tie for nearest at some sizes
    names16 = {"linear": "bilinear", "nearest": "nearest", "cubic": "bicubic"}
    for opset in (16, 20, 22):
        for mode in ("linear", "nearest", "cubic"):
            for pad in ("zeros", "border", "reflection"):
                for align in (0, 1):
                    mname = names16[mode] if opset < 20 else mode
                    m = one_op("gs", "GridSample", [("X", F, x4.shape), ("grid", F, g4.shape)],
                               [("Y", F, [1, 2, 3, 3])], opset,
                               {"mode": mname, "padding_mode": pad, "align_corners": align})
                    yield ("gridsample_%s_%s_align%d_op%d" % (mode, pad, align, opset), m,
                           {"X": x4, "grid": g4}, None)
    # issue 16 part 4: cubic + border far outside, against the formula too
    # (ONNX Runtime's values, our formula: pixels clamped, point not)
    gfar = np.array([[[[-3.0, 0.2], [2.5, -2.5], [0.95, 1.4]]]], dtype=np.float32)
    m = one_op("gs", "GridSample", [("X", F, x4.shape), ("grid", F, gfar.shape)],
               [("Y", F, [1, 2, 1, 3])], 20, {"mode": "cubic", "padding_mode": "border"})
    yield "gridsample_cubic_border_far_op20", m, {"X": x4, "grid": gfar}, None
    yield ("gridsample_cubic_border_far_formula_op20", m, {"X": x4, "grid": gfar},
           {"Y": gs_formula(x4, gfar, "cubic", "border", 0)})
    # 5-D (volumetric) and 3-D (one spatial dim) inputs at opset 20
    x5 = r.uniform(-1, 1, (1, 2, 2, 3, 4)).astype(np.float32)
    g5 = r.uniform(-1.4, 1.4, (1, 2, 2, 3, 3)).astype(np.float32)
    x3 = r.uniform(-1, 1, (2, 2, 5)).astype(np.float32)
    g3 = r.uniform(-1.4, 1.4, (2, 4, 1)).astype(np.float32)
    for mode in ("linear", "nearest", "cubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                attrs = {"mode": mode, "padding_mode": pad, "align_corners": align}
                m = one_op("gs", "GridSample", [("X", F, x5.shape), ("grid", F, g5.shape)],
                           [("Y", F, [1, 2, 2, 2, 3])], 20, attrs)
                # ONNX Runtime runs linear and nearest on 5-D; cubic is 4-D only there
                exp = None if mode != "cubic" else {"Y": gs_formula(x5, g5, mode, pad, align)}
                yield "gridsample_5d_%s_%s_align%d_op20" % (mode, pad, align), m, \
                    {"X": x5, "grid": g5}, exp
                m = one_op("gs", "GridSample", [("X", F, x3.shape), ("grid", F, g3.shape)],
                           [("Y", F, [2, 2, 4])], 20, attrs)
                yield ("gridsample_3d_%s_%s_align%d_op20" % (mode, pad, align), m,
                       {"X": x3, "grid": g3}, {"Y": gs_formula(x3, g3, mode, pad, align)})
    # float64 and float16
    for dt, npdt in ((TensorProto.DOUBLE, np.float64), (TensorProto.FLOAT16, np.float16)):
        m = one_op("gs", "GridSample", [("X", dt, x4.shape), ("grid", dt, g4.shape)],
                   [("Y", dt, [1, 2, 3, 3])], 20, {"mode": "linear"})
        yield ("gridsample_linear_%s_op20" % np.dtype(npdt).name, m,
               {"X": x4.astype(npdt), "grid": g4.astype(npdt)}, None)


def ag_formula(theta, size, align):
    """AffineGrid from the spec: theta times the homogeneous base grid
    (x along the last dim), linspace(-1, 1, n) with align_corners (-1 for
    n = 1, as the reference), pixel centres otherwise."""
    sp = size[2:]

    def lin(n):
        if align:
            return np.array([-1.0]) if n == 1 else np.linspace(-1, 1, n)
        return (2 * np.arange(n) + 1) / n - 1
    axes = [lin(n) for n in sp]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m for m in mesh[::-1]] + [np.ones(mesh[0].shape)], axis=-1)
    out = np.einsum("nij,...j->n...i", theta.astype(np.float64), base)
    return out.astype(np.float32)


def affine_grid_cases():
    r = rng(2)
    th2 = r.uniform(-1, 1, (2, 2, 3)).astype(np.float32)
    th3 = r.uniform(-1, 1, (1, 3, 4)).astype(np.float32)
    for align in (0, 1):
        for size, th in (([2, 3, 4, 5], th2), ([2, 1, 1, 3], th2), ([1, 2, 3, 4, 2], th3)):
            nd = len(size) - 2
            s = helper.make_tensor("size", TensorProto.INT64, [len(size)], size)
            out = [size[0]] + size[2:] + [nd]
            m = one_op("ag", "AffineGrid", [("theta", F, th.shape), ("size", TensorProto.INT64,
                                                                   [len(size)])],
                       [("grid", F, out)], 20, {"align_corners": align}, [s])
            # a dim of size 1 with align_corners: the reference's -1 (ONNX
            # Runtime 1.30 gives 1, PyTorch 0), from the formula
            exp = {"grid": ag_formula(th, size, align)} if align and 1 in size[2:] else None
            yield ("affinegrid_%dd_%s_align%d" % (nd, "x".join(map(str, size)), align), m,
                   {"theta": th}, exp)
    # AffineGrid feeding GridSample, the way spatial transformers use them
    x = r.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    s = helper.make_tensor("size", TensorProto.INT64, [4], [2, 3, 3, 4])
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["g"], name="ag"),
             helper.make_node("GridSample", ["X", "g"], ["Y"], name="gs", mode="linear")]
    m = model("stn", nodes, [vi("theta", F, th2.shape), vi("X", F, x.shape)],
              [vi("Y", F, [2, 3, 3, 4])], 20, [s])
    yield "affinegrid_gridsample_chain", m, {"theta": th2, "X": x}, None


# ---------------------------------------------------- transformer ops


def att_formula(Q, K, V, mask=None, pk=None, pv=None, causal=False, qh=None, kvh=None):
    """Attention-23 from the spec's text (default scale, no softcap)."""
    in3 = Q.ndim == 3

    def heads(x, h):
        return x.reshape(x.shape[0], x.shape[1], h, -1).transpose(0, 2, 1, 3) if in3 else x
    q, k, v = heads(Q, qh), heads(K, kvh), heads(V, kvh)
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    if pk is not None:
        k = np.concatenate([pk, k], axis=2)
        v = np.concatenate([pv, v], axis=2)
    past = 0 if pk is None else pk.shape[2]
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + (np.where(mask, 0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        i = np.arange(s.shape[2])[:, None]
        j = np.arange(s.shape[3])[None, :]
        s = np.where(j > past + i, -np.inf, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    y = (e / e.sum(-1, keepdims=True)) @ v
    if in3:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y.astype(np.float32)


def attention_cases():
    r = rng(3)
    B, Hq, Hkv, Sq, Skv, D, Dv, P = 2, 4, 2, 3, 5, 8, 6, 2

    def t(*shape):
        return r.uniform(-1, 1, shape).astype(np.float32)

    q4, k4, v4 = t(B, Hq, Sq, D), t(B, Hkv, Skv, D), t(B, Hkv, Skv, Dv)
    outs4 = [("Y", F, [B, Hq, Sq, Dv])]
    for name, attrs in (("basic", {}), ("scale", {"scale": 0.3}), ("causal", {"is_causal": 1}),
                        ("softcap", {"softcap": 2.0})):
        m = one_op("att", "Attention", [("Q", F, q4.shape), ("K", F, k4.shape),
                                         ("V", F, v4.shape)], outs4, 23, attrs)
        yield "attention_gqa_4d_%s" % name, m, {"Q": q4, "K": k4, "V": v4}, None
    # MHA 3-D inputs
    q3, k3, v3 = t(B, Sq, 2 * D), t(B, Skv, 2 * D), t(B, Skv, 2 * Dv)
    m = one_op("att", "Attention", [("Q", F, q3.shape), ("K", F, k3.shape), ("V", F, v3.shape)],
               [("Y", F, [B, Sq, 2 * Dv])], 23, {"q_num_heads": 2, "kv_num_heads": 2})
    yield "attention_mha_3d", m, {"Q": q3, "K": k3, "V": v3}, None
    k1, v1 = t(B, Skv, D), t(B, Skv, Dv)
    m = one_op("att", "Attention", [("Q", F, q3.shape), ("K", F, k1.shape), ("V", F, v1.shape)],
               [("Y", F, [B, Sq, 2 * Dv])], 23,
               {"q_num_heads": 2, "kv_num_heads": 1, "is_causal": 1})
    yield "attention_mqa_3d_causal", m, {"Q": q3, "K": k1, "V": v1}, None
    yield ("attention_mqa_3d_causal_formula", m, {"Q": q3, "K": k1, "V": v1},
           {"Y": att_formula(q3, k1, v1, causal=True, qh=2, kvh=1)})
    # masks: float (full and shorter than the total sequence), bool
    fm = t(Sq, Skv)
    bm = r.uniform(0, 1, (B, 1, Sq, Skv)) > 0.3
    bm[..., 0] = True  # every row keeps a position
    for mname, mv, dt in (("float", fm, F), ("bool", bm, TensorProto.BOOL)):
        m = one_op("att", "Attention", [("Q", F, q4.shape), ("K", F, k4.shape),
                                         ("V", F, v4.shape), ("attn_mask", dt, mv.shape)],
                   outs4, 23)
        yield "attention_mask_%s" % mname, m, {"Q": q4, "K": k4, "V": v4, "attn_mask": mv}, None
    # past key/value, present outputs and qk_matmul_output in every mode
    pk, pv = t(B, Hkv, P, D), t(B, Hkv, P, Dv)
    mask = t(B, Hq, Sq, P + Skv)
    for mode in (0, 1, 2, 3):
        m = one_op("att", "Attention",
                   [("Q", F, q4.shape), ("K", F, k4.shape), ("V", F, v4.shape),
                    ("attn_mask", F, mask.shape), ("past_key", F, pk.shape),
                    ("past_value", F, pv.shape)],
                   outs4 + [("present_key", F, [B, Hkv, P + Skv, D]),
                            ("present_value", F, [B, Hkv, P + Skv, Dv]),
                            ("qk", F, [B, Hq, Sq, P + Skv])], 23,
                   {"qk_matmul_output_mode": mode, "softcap": 3.0})
        yield ("attention_past_qk_mode%d" % mode, m,
               {"Q": q4, "K": k4, "V": v4, "attn_mask": mask, "past_key": pk, "past_value": pv},
               None)
    m = one_op("att", "Attention",
               [("Q", F, q4.shape), ("K", F, k4.shape), ("V", F, v4.shape), ("", F, []),
                ("past_key", F, pk.shape), ("past_value", F, pv.shape)],
               outs4, 23, {"is_causal": 1})
    # ONNX Runtime 1.30 fails on is_causal with a past (attention.cc:313):
    # from the formula
    yield ("attention_past_causal", m, {"Q": q4, "K": k4, "V": v4, "past_key": pk,
                                        "past_value": pv},
           {"Y": att_formula(q4, k4, v4, pk=pk, pv=pv, causal=True)})
    m = one_op("att", "Attention", [("Q", F, q4.shape), ("K", F, k4.shape), ("V", F, v4.shape),
                                     ("attn_mask", TensorProto.BOOL, bm.shape)],
               outs4, 23, {"is_causal": 1})
    # is_causal with a bool mask: the spec's sum of both; the v1.22.0
    # reference gives NaN here (0 * -inf)
    yield ("attention_causal_bool_mask", m, {"Q": q4, "K": k4, "V": v4, "attn_mask": bm},
           {"Y": att_formula(q4, k4, v4, mask=bm, causal=True)})


def rotary_cases():
    r = rng(4)
    B, H, S, D = 2, 3, 4, 8
    x4 = r.uniform(-1, 1, (B, H, S, D)).astype(np.float32)
    ang = r.uniform(0, 3, (B, S, D // 2))
    for inter in (0, 1):
        m = one_op("rope", "RotaryEmbedding", [("X", F, x4.shape), ("cos", F, ang.shape),
                                                ("sin", F, ang.shape)],
                   [("Y", F, x4.shape)], 23, {"interleaved": inter})
        yield ("rotary_4d_interleaved%d" % inter, m,
               {"X": x4, "cos": np.cos(ang).astype(np.float32),
                "sin": np.sin(ang).astype(np.float32)}, None)
    # 3-D input with num_heads, position_ids and a partial rotation
    x3 = r.uniform(-1, 1, (B, S, H * D)).astype(np.float32)
    ang2 = r.uniform(0, 3, (10, 2)).astype(np.float64)
    pos = r.randint(0, 10, (B, S)).astype(np.int64)
    for inter in (0, 1):
        m = one_op("rope", "RotaryEmbedding",
                   [("X", F, x3.shape), ("cos", F, ang2.shape), ("sin", F, ang2.shape),
                    ("pos", TensorProto.INT64, pos.shape)],
                   [("Y", F, x3.shape)], 23,
                   {"interleaved": inter, "num_heads": H, "rotary_embedding_dim": 4})
        yield ("rotary_3d_positions_partial_interleaved%d" % inter, m,
               {"X": x3, "cos": np.cos(ang2).astype(np.float32),
                "sin": np.sin(ang2).astype(np.float32), "pos": pos}, None)


def rms_cases():
    r = rng(5)
    x = r.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    for axis, sshape in ((-1, (4,)), (1, (3, 4)), (1, (1, 4)), (0, (2, 3, 4))):
        s = r.uniform(0.5, 1.5, sshape).astype(np.float32)
        m = one_op("rms", "RMSNormalization", [("X", F, x.shape), ("scale", F, s.shape)],
                   [("Y", F, x.shape)], 23, {"axis": axis, "epsilon": 1e-3})
        yield ("rmsnorm_axis%d_scale%s" % (axis, "x".join(map(str, sshape))), m,
               {"X": x, "scale": s}, None)
    x16 = x.astype(np.float16)
    m = one_op("rms", "RMSNormalization", [("X", TensorProto.FLOAT16, x.shape),
                                            ("scale", TensorProto.FLOAT16, [4])],
               [("Y", TensorProto.FLOAT16, x.shape)], 23)
    yield "rmsnorm_float16", m, {"X": x16, "scale": np.ones(4, np.float16) * 0.75}, None


# ---------------------------------------------------------- DeformConv


def deform_formula(x, w, off, b=None, mask=None, pads=(0, 0, 0, 0), strides=(1, 1),
                   dil=(1, 1), group=1, og=1):
    """DeformConv from the spec: each tap sampled bilinearly (zeros outside)
    at its moved place, times the mask and the weight."""
    N, C, H, W = x.shape
    OC, cg, kH, kW = w.shape
    oh, ow = off.shape[2:]
    off = off.reshape(N, og, kH, kW, 2, oh, ow)
    mask = np.ones((N, og * kH * kW, oh, ow)) if mask is None else mask
    mask = mask.reshape(N, og, kH, kW, oh, ow)

    def sample(p, yy, xx):
        y0, x0 = int(np.floor(yy)), int(np.floor(xx))
        v = 0.0
        for dy in (0, 1):
            for dx in (0, 1):
                r, c = y0 + dy, x0 + dx
                if 0 <= r < H and 0 <= c < W:
                    v += (1 - abs(yy - r)) * (1 - abs(xx - c)) * p[r, c]
        return v
    y = np.zeros((N, OC, oh, ow))
    for n in range(N):
        for oc in range(OC):
            g = oc // (OC // group)
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0 if b is None else float(b[oc])
                    for ci in range(cg):
                        c = g * cg + ci
                        o = c // (C // og)
                        for kh in range(kH):
                            for kw in range(kW):
                                yy = -pads[0] + i * strides[0] + kh * dil[0] + off[n, o, kh, kw, 0, i, j]
                                xx = -pads[1] + j * strides[1] + kw * dil[1] + off[n, o, kh, kw, 1, i, j]
                                acc += w[oc, ci, kh, kw] * mask[n, o, kh, kw, i, j] * \
                                    sample(x[n, c], yy, xx)
                    y[n, oc, i, j] = acc
    return y.astype(np.float32)


def deform_cases():
    r = rng(6)
    x = r.uniform(-1, 1, (1, 4, 5, 6)).astype(np.float32)
    for name, attrs, wshape, oshape, with_b, with_m in (
            ("basic", {}, (2, 4, 3, 3), (1, 18, 3, 4), False, False),
            ("bias_mask", {}, (3, 4, 2, 2), (1, 8, 4, 5), True, True),
            ("pads_strides_dil", {"pads": [1, 2, 1, 0], "strides": [2, 1], "dilations": [1, 2]},
             (2, 4, 3, 2), (1, 12, 3, 6), True, False),
            ("groups", {"group": 2, "offset_group": 2}, (4, 2, 2, 2), (1, 16, 4, 5), False, True)):
        w = r.uniform(-1, 1, wshape).astype(np.float32)
        off = r.uniform(-1.5, 1.5, oshape).astype(np.float32)
        og = attrs.get("offset_group", 1)
        ins = [("X", F, x.shape), ("W", F, w.shape), ("offset", F, off.shape)]
        feeds = {"X": x, "W": w, "offset": off}
        b = m = None
        if with_b or with_m:
            b = r.uniform(-1, 1, (wshape[0],)).astype(np.float32) if with_b else None
            ins.append(("B" if with_b else "", F, [wshape[0]]))
            if with_b:
                feeds["B"] = b
        if with_m:
            m = r.uniform(0, 1, (1, og * wshape[2] * wshape[3]) + oshape[2:]).astype(np.float32)
            ins.append(("mask", F, m.shape))
            feeds["mask"] = m
        oh, ow = oshape[2:]
        for opset in (19, 22):
            mdl = one_op("dc", "DeformConv", ins, [("Y", F, [1, wshape[0], oh, ow])], opset, attrs)
            want = deform_formula(x, w, off, b, m, tuple(attrs.get("pads", (0, 0, 0, 0))),
                                  tuple(attrs.get("strides", (1, 1))),
                                  tuple(attrs.get("dilations", (1, 1))), attrs.get("group", 1), og)
            yield "deformconv_%s_op%d" % (name, opset), mdl, feeds, {"Y": want}
        yield "deformconv_%s_ort" % name, mdl, feeds, None


# -------------------------------------------------------------- strings

S = TensorProto.STRING


def strs(*v, shape=None):
    a = np.array([s.encode() for s in v], dtype=object)
    return a.reshape(shape) if shape else a


REGEX = [
    (r"\d+", ["123", "12a", "", "0"]),
    (r"[a-z]+@[a-z]+\.(com|org)", ["bob@mail.com", "bob@mail.net", "a@b.org", "@b.org"]),
    (r"(?:ab|cd)*e?", ["", "abcd", "abcde", "abce", "e", "ee"]),
    (r"^a.{2,3}z$", ["abbz", "abbbz", "az", "abbbbz", "a\nbz"]),
    (r"[^\s,]+(,[^\s,]+)*", ["a,b,c", "a, b", "x", ",a"]),
    (r"\w{3}-\W", ["abc-!", "ab_-x", "a_9- "]),
    (r"caf.", ["caf\u00e9", "cafe", "caf\u00e9\u00e9"]),
    ("[\u00e0-\u00ff]+x?", ["\u00e9\u00e8x", "\u00e9a", "x"]),
    (r"a+?b*?", ["aab", "b", "aaa"]),
    (r"(a|b)*abb", ["abb", "aabb", "babb", "ab", "abba"]),
    (r"(a*)*b|c{0}d", ["b", "aaab", "d", "cd", ""]),
    (r"(x|xy)z", ["xz", "xyz", "xyyz"]),
    (r"a(|b)c", ["ac", "abc", "abbc"]),
    (r"\.\*\+\?\[\]\(\)\{\}\|\\", [".*+?[](){}|\\", "a*+?[](){}|\\"]),
    (r"[]a-]+", ["]a-", "a", "b", "]]"]),
    (r"[a\-z]\x41\x{263a}", ["-A\u263a", "bA\u263a", "zA\u263a"]),
    (r"[^a-c\d]{2,}", ["xyz", "x1", "dd", "d"]),
    (r"\D\S\W", ["a! ", "1! ", "aa!"]),
    (r"(?:\s*\w+\s*,)*\s*\w+", ["a, b ,c", "a,,b", " x "]),
]


def string_cases():
    for i, (pat, texts) in enumerate(REGEX):
        m = one_op("re", "RegexFullMatch", [("X", S, [len(texts)])],
                   [("Y", TensorProto.BOOL, [len(texts)])], 20, {"pattern": pat})
        yield "regexfullmatch_%d" % i, m, {"X": strs(*texts)}, None
    x = strs("a", "bc", "", "d\u00e9", "e", "f", shape=(2, 3))
    for name, y in (("same", strs("1", "2", "3", "", "5", "6", shape=(2, 3))),
                    ("bcast_row", strs("_x", "", "!", shape=(3,))),
                    ("bcast_scalar", strs("-", shape=()))):
        m = one_op("sc", "StringConcat", [("X", S, [2, 3]), ("Y", S, list(y.shape))],
                   [("Z", S, [2, 3])], 20)
        yield "stringconcat_%s" % name, m, {"X": x, "Y": y}, None
    # ONNX Runtime as the oracle where it agrees with the reference
    # (Python's str.split); the formula where it does not: ONNX Runtime
    # gives no piece for an empty string with a delimiter (Python: one
    # empty piece), splits "whitespace" on spaces alone and strips the
    # remainder after maxsplit
    for formula, texts in ((False, strs("a,b,,c", "d", "no", ",,", "x,y", "a,b,c,d",
                                        shape=(2, 3))),
                           (True, strs("a,b,,c", "", "no", ",,", "", "a,b,c,d", shape=(2, 3)))):
        for name, attrs in (("comma", {"delimiter": ","}),
                            ("comma_max1", {"delimiter": ",", "maxsplit": 1}),
                            ("word", {"delimiter": ",,"})):
            m = one_op("ss", "StringSplit", [("X", S, [2, 3])],
                       [("Y", S, None), ("Z", TensorProto.INT64, [2, 3])], 20, attrs)
            exp = split_formula(texts, attrs) if formula else None
            yield "stringsplit_%s%s" % (name, "_empty_formula" if formula else ""), m, \
                {"X": texts}, exp
    for formula, ws in ((False, strs("  a b c", "q", "one", " x  y  z", shape=(4,))),
                        (True, strs("  a b\tc ", "", "one", " x \n y\r\n  z\v", shape=(4,)))):
        for name, attrs in (("whitespace", {}), ("whitespace_max1", {"maxsplit": 1}),
                            ("empty_delim", {"delimiter": ""})):
            m = one_op("ss", "StringSplit", [("X", S, [4])],
                       [("Y", S, None), ("Z", TensorProto.INT64, [4])], 20, attrs)
            exp = split_formula(ws, attrs) if formula else None
            yield "stringsplit_%s%s" % (name, "_tabs_formula" if formula else ""), m, \
                {"X": ws}, exp


def split_formula(x, attrs):
    d = attrs.get("delimiter") or None
    mx = attrs.get("maxsplit", -1)
    parts = [s.decode().split(d, mx) for s in x.ravel()]
    most = max([len(p) for p in parts] + [0])
    y = np.array([[q.encode() for q in p] + [b""] * (most - len(p)) for p in parts],
                 dtype=object).reshape(x.shape + (most,))
    return {"Y": y, "Z": np.array([len(p) for p in parts], np.int64).reshape(x.shape)}

# ------------------------------------------------------------ opset 24


def scatter_formula(past, upd, wi, axis, circular):
    out = past.copy()
    maxs = past.shape[axis]
    for pre in np.ndindex(*past.shape[:axis]):
        for s in range(upd.shape[axis]):
            at = (0 if wi is None else wi[pre[0]]) + s
            at = at % maxs if circular else at
            out[pre + (at,)] = upd[pre + (s,)]
    return out


def opset24_cases():
    r = rng(7)
    x = r.uniform(-4, 4, (3, 5)).astype(np.float32)
    for alpha in (1.0, 0.5):
        m = one_op("sw", "Swish", [("X", F, x.shape)], [("Y", F, x.shape)], 24, {"alpha": alpha})
        yield "swish_alpha%g" % alpha, m, {"X": x}, None
        yield ("swish_alpha%g_formula" % alpha, m, {"X": x},
               {"Y": (x / (1 + np.exp(-alpha * x.astype(np.float64)))).astype(np.float32)})
    past = r.uniform(-1, 1, (2, 3, 6, 4)).astype(np.float32)
    upd = r.uniform(-1, 1, (2, 3, 2, 4)).astype(np.float32)
    for mode, wi in (("linear", None), ("linear", np.array([1, 4], np.int64)),
                     ("circular", np.array([5, 2], np.int64))):
        ins = [("past", F, past.shape), ("upd", F, upd.shape)]
        feeds = {"past": past, "upd": upd}
        if wi is not None:
            ins.append(("wi", TensorProto.INT64, [2]))
            feeds["wi"] = wi
        m = one_op("ts", "TensorScatter", ins, [("Y", F, past.shape)], 24, {"mode": mode})
        name = "tensorscatter_%s%s" % (mode, "" if wi is None else "_indices")
        yield name, m, feeds, None
        yield (name + "_formula", m, feeds,
               {"Y": scatter_formula(past, upd, wi, 2, mode == "circular")})
    # TopK at 24 (bfloat16 added; the rest as at 11)
    t = r.uniform(-1, 1, (3, 6)).astype(np.float32)
    kk = helper.make_tensor("k", TensorProto.INT64, [1], [3])
    for largest in (0, 1):
        m = one_op("tk", "TopK", [("X", F, t.shape), ("k", TensorProto.INT64, [1])],
                   [("V", F, [3, 3]), ("I", TensorProto.INT64, [3, 3])], 24,
                   {"largest": largest, "axis": -1}, [kk])
        yield "topk_op24_largest%d" % largest, m, {"X": t}, None
    # Attention 24: nonpad_kv_seqlen masks the padded tail of each batch
    q, k, v = (r.uniform(-1, 1, s).astype(np.float32) for s in
               ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)))
    lens = np.array([3, 5], np.int64)
    m = one_op("att", "Attention", [("Q", F, q.shape), ("K", F, k.shape), ("V", F, v.shape),
                                     ("", F, None), ("", F, None), ("", F, None),
                                     ("lens", TensorProto.INT64, [2])],
               [("Y", F, [2, 2, 3, 4])], 24)
    mask = np.arange(5)[None, None, None, :] < lens[:, None, None, None]
    yield "attention_op24_nonpad", m, {"Q": q, "K": k, "V": v, "lens": lens}, None
    yield ("attention_op24_nonpad_formula", m, {"Q": q, "K": k, "V": v, "lens": lens},
           {"Y": att_formula(q, k, v, mask=mask)})


def cases():
    yield from grid_sample_cases()
    yield from affine_grid_cases()
    yield from attention_cases()
    yield from rotary_cases()
    yield from rms_cases()
    yield from deform_cases()
    yield from string_cases()
    yield from opset24_cases()
