#!/usr/bin/python3
"""Bad input to the kernels of opsets 19 to 24 (issue 16 part 7), through
`surgeon run` as a user meets it: each model must fail with exit status 1,
one error naming the node, its op and what is wrong, and no output folder
left behind; `surgeon run --check` must list every node without a kernel
(node, op, domain, opset) at once.

    bad_input_test.py SURGEON
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
FAILS = []


def model(nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, "bad", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9 if opset < 21 else 10
    return m


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def init(name, a):
    a = np.asarray(a)
    if a.dtype.kind in "US":
        a = a.astype(object)
    return numpy_helper.from_array(a, name)


def one(op, ins, outs, opset, attrs=None, inits=()):
    """One node 'bad_node' of op; ins are (name, dtype, shape) graph inputs
    (or '' for an omitted optional input), inits initializers read too."""
    names = [i[0] for i in ins] + [t.name for t in inits]
    node = helper.make_node(op, names, [o[0] for o in outs], name="bad_node", **(attrs or {}))
    return model([node], [vi(*i) for i in ins if i[0]], [vi(*o) for o in outs], opset, inits)


def cases():
    r = np.random.RandomState(0)
    f = lambda *s: r.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    yield ("gridsample 5-D at opset 16",
           one("GridSample", [("X", F, [1, 1, 2, 3, 4]), ("g", F, [1, 2, 2, 2, 3])],
               [("Y", F, None)], 16),
           ["(GridSample, ai.onnx v16)", "k = 2 before opset 20"])
    yield ("gridsample opset-16 mode name at 20",
           one("GridSample", [("X", F, [1, 1, 3, 4]), ("g", F, [1, 2, 2, 2])], [("Y", F, None)],
               20, {"mode": "bilinear"}),
           ["(GridSample, ai.onnx v20)", "mode 'bilinear' is not one of opset 20's modes"])
    yield ("gridsample grid of the wrong rank",
           one("GridSample", [("X", F, [1, 1, 3, 4]), ("g", F, [1, 2, 2])], [("Y", F, None)], 20),
           ["(GridSample, ai.onnx v20)", "grid float32[1,2,2]"])
    yield ("affinegrid theta for 3-D with a 2-D size",
           one("AffineGrid", [("t", F, [1, 3, 4])], [("Y", F, None)], 20,
               inits=[init("size", np.array([1, 1, 4, 4], np.int64))]),
           ["(AffineGrid, ai.onnx v20)", "theta float32[1,3,4] must be [N, 2, 3]"])
    yield ("attention 3-D without head counts",
           one("Attention", [("Q", F, [1, 2, 8]), ("K", F, [1, 2, 8]), ("V", F, [1, 2, 8])],
               [("Y", F, None)], 23),
           ["(Attention, ai.onnx v23)", "need positive q_num_heads"])
    yield ("attention heads that do not divide",
           one("Attention", [("Q", F, [1, 3, 2, 4]), ("K", F, [1, 2, 2, 4]),
                             ("V", F, [1, 2, 2, 4])], [("Y", F, None)], 23),
           ["(Attention, ai.onnx v23)", "q_num_heads 3 must be a multiple of kv_num_heads 2"])
    yield ("attention past_key without past_value",
           one("Attention", [("Q", F, [1, 2, 2, 4]), ("K", F, [1, 2, 2, 4]),
                             ("V", F, [1, 2, 2, 4]), ("", F, None), ("pk", F, [1, 2, 1, 4])],
               [("Y", F, None)], 23),
           ["(Attention, ai.onnx v23)", "past_key and past_value must be given together"])
    yield ("attention mask that does not broadcast",
           one("Attention", [("Q", F, [1, 2, 2, 4]), ("K", F, [1, 2, 3, 4]),
                             ("V", F, [1, 2, 3, 4]), ("m", F, [3, 3])], [("Y", F, None)], 23),
           ["(Attention, ai.onnx v23)", "attn_mask float32[3,3] does not broadcast"])
    yield ("rotary odd rotary_embedding_dim",
           one("RotaryEmbedding", [("X", F, [1, 1, 2, 8]), ("c", F, [1, 2, 4]),
                                   ("s", F, [1, 2, 4])], [("Y", F, None)], 23,
               {"rotary_embedding_dim": 3}),
           ["(RotaryEmbedding, ai.onnx v23)", "rotary_embedding_dim 3 must be even"])
    yield ("rotary position id past the cache",
           one("RotaryEmbedding", [("X", F, [1, 1, 2, 4]), ("c", F, [3, 2]), ("s", F, [3, 2])],
               [("Y", F, None)], 23, inits=[init("pos", np.array([[0, 7]], np.int64))]),
           ["(RotaryEmbedding, ai.onnx v23)", "position_ids[1] = 7 is outside [0, 3)"])
    yield ("rmsnorm scale that does not broadcast",
           one("RMSNormalization", [("X", F, [2, 3, 4]), ("s", F, [3])], [("Y", F, None)], 23),
           ["(RMSNormalization, ai.onnx v23)", "do not broadcast"])
    yield ("rmsnorm stash_type double",
           one("RMSNormalization", [("X", F, [2, 4]), ("s", F, [4])], [("Y", F, None)], 23,
               {"stash_type": 11}),
           ["(RMSNormalization, ai.onnx v23)", "stash_type 11 is not supported"])
    yield ("deformconv offset of the wrong size",
           one("DeformConv", [("X", F, [1, 2, 5, 5]), ("W", F, [1, 2, 3, 3]),
                              ("o", F, [1, 9, 3, 3])], [("Y", F, None)], 19),
           ["(DeformConv, ai.onnx v19)", "offset float32[1,9,3,3] must be [1, 18, 3, 3]"])
    yield ("deformconv 3-D",
           one("DeformConv", [("X", F, [1, 2, 5]), ("W", F, [1, 2, 3]), ("o", F, [1, 6, 3])],
               [("Y", F, None)], 19),
           ["(DeformConv, ai.onnx v19)", "only 2-D DeformConv is supported"])
    yield ("quantize block_size that does not fit the scale",
           one("QuantizeLinear", [("x", F, [2, 4])], [("y", TensorProto.INT8, None)], 21,
               {"axis": 1, "block_size": 3},
               [init("s", np.ones((2, 1), np.float32)), init("z", np.zeros((2, 1), np.int8))]),
           ["(QuantizeLinear, ai.onnx v21)", "block"])
    yield ("dequantize negative block_size",
           one("DequantizeLinear", [("x", TensorProto.INT8, [2, 4])], [("y", F, None)], 21,
               {"axis": 1, "block_size": -2}, [init("s", np.ones((2, 2), np.float32))]),
           ["(DequantizeLinear, ai.onnx v21)", "block_size -2"])
    S = TensorProto.STRING
    for pat, why in (("(?i)abc", "'(?' groups other than (?:...)"),
                     (r"\bword\b", r"\b is not supported"),
                     ("[[:alpha:]]+", "POSIX classes"),
                     (r"\p{Greek}", r"\p is not supported"),
                     ("a{2000}", "bad repeat count"),
                     ("(ab", "missing ')'")):
        yield ("regex %s" % pat,
               one("RegexFullMatch", [], [("Y", TensorProto.BOOL, None)], 20, {"pattern": pat},
                   [init("X", np.array(["abc"]))]),
               ["(RegexFullMatch, ai.onnx v20)", "pattern '%s'" % pat, why])
    yield ("stringconcat of a number",
           one("StringConcat", [], [("Y", S, None)], 20,
               inits=[init("a", np.array(["x"])), init("b", np.array([1.0], np.float32))]),
           ["(StringConcat, ai.onnx v20)", "float32"])


def run(surgeon, *args):
    p = subprocess.run([surgeon] + list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL " + what)


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    surgeon = sys.argv[1]
    import onnx
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, m, wants in cases():
            n += 1
            path = os.path.join(tmp, "m%d.onnx" % n)
            onnx.save(m, path)
            out = os.path.join(tmp, "out%d" % n)
            args = ["run", path, "-o", out] + (["--random", "1"] if m.graph.input else [])
            rc, msg = run(surgeon, *args)
            ok = rc == 1 and all(w in msg for w in wants) and "bad_node" in msg
            check(ok, "%s: exit %d, wanted %s in: %s" % (what, rc, wants, msg.strip()[-400:]))
            check(not os.path.exists(out), "%s: left %s behind" % (what, out))
            if ok:
                print("ok   %s: %s" % (what, msg.strip().splitlines()[-1][:160]))
        # --check lists every node without a kernel, all at once
        nodes = [helper.make_node("CumProd", ["x", "ax"], ["a"], name="cumprod_1"),
                 helper.make_node("Relu", ["a"], ["b"], name="relu_1"),
                 helper.make_node("CumProd", ["b", "ax"], ["y"], name="cumprod_2")]
        m = model(nodes, [vi("x", F, [2])], [vi("y", F, [2])], 26,
                  [init("ax", np.array(0, np.int64))])
        path = os.path.join(tmp, "check.onnx")
        onnx.save(m, path)
        rc, msg = run(surgeon, "run", path, "--check")
        n += 1
        for node in ("cumprod_1", "cumprod_2"):
            check(rc == 1 and node in msg and "CumProd" in msg and "opset 26" in msg,
                  "run --check: exit %d, %s (CumProd, opset 26) not listed: %s" %
                  (rc, node, msg.strip()[-400:]))
        check("relu_1" not in msg, "run --check lists relu_1, which has a kernel: %s" % msg)
        if rc == 1:
            print("ok   run --check: %s" % " | ".join(msg.strip().splitlines()[-3:])[:300])
    print("%d cases, %d failures" % (n, len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
