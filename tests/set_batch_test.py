#!/usr/bin/python3
"""set-batch on look-alikes of the real models it once got wrong, end to end.

Usage: set_batch_test.py SURGEON WORK_DIR

- state_batch: Silero VAD's inputs (`input` [batch, 8], `state` [2, batch, 4],
  a scalar `sr`) and an unrelated ConstantOfShape of [2]. The batch is the
  symbolic dim the inputs share, so `state` becomes [2, 4, 4], not [4, batch,
  4], and the ConstantOfShape stays.
- traced_batch: a transformer encoder exported at batch 1 (seq-first,
  [6, 1, 8]) whose attention Reshape hard-codes batch * heads; and the same
  with a symbolic batch ([6, batch, 8]) whose Reshape was still traced at 1.
  set-batch fails the model, writing nothing; force=true writes it with a
  warning status and exit code 3.
- convnet: Conv, Relu, GlobalAveragePool, Flatten, Gemm at batch 1: the
  output's recorded [1, 10] becomes [8, 10] (not [?, ?]).
- two_inputs: static inputs that disagree at axis 0 and share no symbolic
  dim: the batch axis is not known, so the model fails unless axis= says it.

Every model written passes onnx.checker (full_check) and is run by ONNX
Runtime (the npm package onnxruntime-node, installed into WORK_DIR the way
tools/bench/bench_runtime.sh does) at the new batch, each row compared with
the original model run on that row alone. Without node and npm that
comparison is skipped, saying so; the rest still runs.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

S, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ORT_VERSION = "1.30.0"
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def surgeon(*args):
    p = subprocess.run([S, *args], capture_output=True, text=True, cwd=WORK)
    return p.returncode, p.stdout, p.stderr


def save(model, name):
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(WORK, name)
    onnx.save(model, path)
    return path


def c(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, name, inputs, outputs, inits=(), value_info=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(value_info))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def state_batch():
    rng = np.random.default_rng(3)
    nodes = [
        # an unrelated ConstantOfShape of [2]: the pads of the input's time axis
        helper.make_node("ConstantOfShape", ["two"], ["zeros"], name="pad_zeros",
                         value=helper.make_tensor("z", T.INT64, [1], [0])),
        helper.make_node("Concat", ["zeros", "pad_tail"], ["pads"], name="pads", axis=0),
        helper.make_node("Pad", ["input", "pads"], ["padded"], name="pad"),
        helper.make_node("MatMul", ["padded", "w"], ["proj"], name="proj"),
        helper.make_node("Gather", ["state", "zero"], ["h"], name="h", axis=0),
        helper.make_node("Add", ["proj", "h"], ["pre"], name="add"),
        helper.make_node("Tanh", ["pre"], ["output"], name="tanh"),
        helper.make_node("Unsqueeze", ["output", "axes0"], ["o1"], name="unsq"),
        helper.make_node("Gather", ["state", "one"], ["c1"], name="c1", axis=0),
        helper.make_node("Unsqueeze", ["c1", "axes0"], ["c2"], name="unsq_c"),
        helper.make_node("Concat", ["o1", "c2"], ["stateN"], name="stack", axis=0),
        helper.make_node("Cast", ["sr"], ["srf"], name="sr_cast", to=T.FLOAT),
        helper.make_node("Mul", ["srf", "tiny"], ["srs"], name="sr_scale"),
        helper.make_node("Add", ["output", "srs"], ["out"], name="sr_add"),
    ]
    inits = [c("two", np.array([2], np.int64)), c("pad_tail", np.array([0, 4], np.int64)),
             c("w", rng.normal(0, 0.3, [12, 4]).astype(np.float32)),
             c("zero", np.array(0, np.int64)), c("one", np.array(1, np.int64)),
             c("axes0", np.array([0], np.int64)), c("tiny", np.array(1e-6, np.float32))]
    return model(nodes, "state_batch",
                 [vi("input", T.FLOAT, ["batch", 8]), vi("state", T.FLOAT, [2, "batch", 4]),
                  vi("sr", T.INT64, [])],
                 [vi("out", T.FLOAT, ["batch", 4]), vi("stateN", T.FLOAT, [2, "batch", 4])],
                 inits)


def traced_batch(batch_dim):
    rng = np.random.default_rng(5)
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
        # torch's MultiheadAttention at batch 1: [seq, batch * heads, head_dim]
        helper.make_node("Reshape", ["q", "heads"], ["qh"], name="attn_reshape"),
        helper.make_node("Transpose", ["qh"], ["qt"], name="attn_t", perm=[1, 0, 2]),
        helper.make_node("MatMul", ["qt", "k"], ["s"], name="scores"),
        helper.make_node("Softmax", ["s"], ["p"], name="softmax", axis=-1),
        helper.make_node("Transpose", ["p"], ["pt"], name="back_t", perm=[1, 0, 2]),
        helper.make_node("Reshape", ["pt", "merge"], ["y"], name="merge_reshape"),
    ]
    inits = [c("wq", rng.normal(0, 0.3, [8, 8]).astype(np.float32)),
             c("heads", np.array([6, 2, 4], np.int64)),
             c("k", rng.normal(0, 0.3, [4, 4]).astype(np.float32)),
             c("merge", np.array([6, 1, 8], np.int64))]
    return model(nodes, "traced_batch", [vi("x", T.FLOAT, [6, batch_dim, 8])],
                 [vi("y", T.FLOAT, [6, batch_dim, 8])], inits)


def convnet():
    rng = np.random.default_rng(9)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], name="fc", transB=1),
    ]
    inits = [c("w", rng.normal(0, 0.3, [4, 3, 3, 3]).astype(np.float32)),
             c("b", rng.normal(0, 0.1, [4]).astype(np.float32)),
             c("fc", rng.normal(0, 0.3, [10, 4]).astype(np.float32)),
             c("fb", rng.normal(0, 0.1, [10]).astype(np.float32))]
    return model(nodes, "convnet", [vi("x", T.FLOAT, [1, 3, 8, 8])], [vi("y", T.FLOAT, [1, 10])],
                 inits, value_info=[vi("f", T.FLOAT, [1, 4])])


def two_inputs():
    nodes = [helper.make_node("ReduceSum", ["b", "ax"], ["bs"], name="sum", keepdims=1),
             helper.make_node("Add", ["a", "bs"], ["y"], name="add")]
    return model(nodes, "two_inputs", [vi("a", T.FLOAT, [1, 4]), vi("b", T.FLOAT, [2, 4])],
                 [vi("y", T.FLOAT, [1, 4])], [c("ax", np.array([0], np.int64))])


# ----------------------------------------------------------- the oracle

def install_ort():
    if not shutil.which("node") or not shutil.which("npm"):
        return None, "node and npm are not installed"
    base = os.path.join(WORK, "..", "ort")
    pkg = os.path.join(base, "node_modules", "onnxruntime-node", "package.json")
    if os.path.exists(pkg) and json.load(open(pkg)).get("version") == ORT_VERSION:
        return base, None
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, "package.json"), "w") as f:
        f.write('{"private": true}\n')
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
    p = subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
                        "--silent", f"onnxruntime-node@{ORT_VERSION}"],
                       cwd=base, env=env, capture_output=True, text=True)
    if p.returncode or not os.path.exists(pkg):
        return None, f"npm could not install onnxruntime-node: {p.stderr.strip()[-300:]}"
    return base, None


ORT_JS = r"""
const ort = require(process.argv[2]);
const spec = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));
(async () => {
  const s = await ort.InferenceSession.create(spec.model);
  const feeds = {};
  for (const [name, t] of Object.entries(spec.inputs))
    feeds[name] = t.dtype === 'int64'
      ? new ort.Tensor('int64', BigInt64Array.from(t.data.map(BigInt)), t.dims)
      : new ort.Tensor('float32', Float32Array.from(t.data), t.dims);
  const out = await s.run(feeds);
  const res = {};
  for (const n of s.outputNames) res[n] = {dims: out[n].dims, data: Array.from(out[n].data)};
  console.log(JSON.stringify(res));
})().catch(e => { console.log(JSON.stringify({error: e.message})); });
"""


def ort_run(ort_dir, path, inputs):
    spec = {"model": path, "inputs": {
        k: {"dtype": "int64" if v.dtype == np.int64 else "float32", "dims": list(v.shape),
            "data": v.reshape(-1).tolist()} for k, v in inputs.items()}}
    sp = os.path.join(WORK, "ort_spec.json")
    with open(sp, "w") as f:
        json.dump(spec, f)
    js = os.path.join(WORK, "ort_run.js")
    with open(js, "w") as f:
        f.write(ORT_JS)
    mod = os.path.join(ort_dir, "node_modules", "onnxruntime-node")
    p = subprocess.run(["node", js, mod, sp], capture_output=True, text=True)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if "error" in res:
        return res["error"]
    return {k: np.array(v["data"], np.float32).reshape(v["dims"]) for k, v in res.items()}


def rows_match(ort_dir, orig, rebatched, inputs, batch_axes, name):
    """Run `rebatched` on inputs; each row must equal `orig` run on that row."""
    got = ort_run(ort_dir, rebatched, inputs)
    check(isinstance(got, dict), f"{name}: ONNX Runtime cannot run the rebatched model: {got}")
    if not isinstance(got, dict):
        return
    n = next(v.shape[batch_axes[k]] for k, v in inputs.items() if k in batch_axes)
    for row in range(n):
        one = {k: (np.take(v, [row], axis=batch_axes[k]) if k in batch_axes else v)
               for k, v in inputs.items()}
        want = ort_run(ort_dir, orig, one)
        check(isinstance(want, dict), f"{name}: the original does not run on row {row}: {want}")
        if not isinstance(want, dict):
            return
        for out, w in want.items():
            axis = 1 if out == "stateN" else 0
            g = np.take(got[out], [row], axis=axis)
            check(np.allclose(g, w, rtol=1e-5, atol=1e-6),
                  f"{name}: output {out} row {row} differs from the original's")
    print(f"ok: {name}: ONNX Runtime runs it at batch {n}, every row as the original")


def recorded(path, name):
    m = onnx.load(path)
    for v in list(m.graph.output) + list(m.graph.value_info) + list(m.graph.input):
        if v.name == name:
            return [d.dim_value if d.HasField("dim_value") else
                    d.dim_param if d.HasField("dim_param") else "?"
                    for d in v.type.tensor_type.shape.dim]
    return None


def main():
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    ort_dir, why = install_ort()
    if not ort_dir:
        print(f"note: the ONNX Runtime comparisons are skipped: {why}")
    rng = np.random.default_rng(1)

    # --- the batch axis from the symbolic dim the inputs share -------------
    src = save(state_batch(), "state_batch.onnx")
    rc, out, err = surgeon("optimize", src, "-o", "state4.onnx", "--pass", "set-batch:batch=4")
    check(rc == 0, f"state_batch: exit {rc}: {err}")
    check("batch axis: 1 (the symbolic dim 'batch' the inputs share)" in out, out)
    check("state: float32[2,batch,4] -> float32[2,4,4]" in out, out)
    check("input: float32[batch,8] -> float32[4,8]" in out, out)
    check("sr (no dim 'batch')" in out, out)
    check("pad_zeros" not in out, f"the unrelated ConstantOfShape was touched: {out}")
    dst = os.path.join(WORK, "state4.onnx")
    if os.path.exists(dst):
        m = onnx.load(dst)
        onnx.checker.check_model(m, full_check=True)
        two = [i for i in m.graph.initializer if i.name == "two"]
        check(len(two) == 1 and list(numpy_helper.to_array(two[0])) == [2],
              "the ConstantOfShape's shape is not [2] any more")
        check(recorded(dst, "stateN") == [2, 4, 4] or recorded(dst, "stateN")[1] == 4,
              f"stateN recorded as {recorded(dst, 'stateN')}")
        if ort_dir:
            rows_match(ort_dir, src, dst, {
                "input": rng.normal(0, 1, [4, 8]).astype(np.float32),
                "state": rng.normal(0, 1, [2, 4, 4]).astype(np.float32),
                "sr": np.array(16000, np.int64)}, {"input": 0, "state": 1}, "state_batch")

    # --- hard-coded batch in a traced Reshape: fail, or force --------------
    for dim, args, why in [(1, "set-batch:batch=4,axis=1", "is not the old batch"),
                           ("batch", "set-batch:batch=4", "while the inputs' batch was symbolic")]:
        src = save(traced_batch(dim), f"traced_{dim}.onnx")
        out_path = os.path.join(WORK, f"traced4_{dim}.onnx")
        rc, out, err = surgeon("optimize", src, "-o", out_path, "--pass", args)
        check(rc == 1, f"traced {dim}: exit {rc}, want 1: {out} {err}")
        check("attn_reshape (Reshape) input 1 = [6,2,4]" in err and why in err, err)
        check("force=true writes it anyway" in err, err)
        check("traced_" in out and "FAILED" in out, out)
        check(not os.path.exists(out_path), f"traced {dim}: a model was written")
        rc, out, err = surgeon("optimize", src, "-o", out_path, "--pass", args + ",force=true")
        check(rc == 3, f"traced {dim} force: exit {rc}, want 3: {err}")
        check("written with" in err and "warnings" in err, err)
        check("warning: hard-coded shape not proven safe: 2" in out, out)
        # Shape inference after the change sees the Reshape that cannot fit.
        check("warning: shape conflict after the change" in out and
              "node 'attn_reshape' (Reshape)" in out, out)
        check(" warn " in out and "(1 with warnings)" in out, out)
        check(os.path.exists(out_path), f"traced {dim} force: nothing written")
        if ort_dir and os.path.exists(out_path):
            got = ort_run(ort_dir, out_path, {"x": rng.normal(0, 1, [6, 4, 8]).astype(np.float32)})
            check(not isinstance(got, dict),
                  f"traced {dim}: the forced model ran at batch 4, so the warning was wrong")
            print(f"ok: traced {dim}: the forced model fails in ONNX Runtime, as warned: "
                  f"{str(got)[:100]}")

    # --- shapes rebatched, not cleared --------------------------------------
    src = save(convnet(), "convnet.onnx")
    dst = os.path.join(WORK, "convnet8.onnx")
    rc, out, err = surgeon("optimize", src, "-o", dst, "--pass", "set-batch:batch=8")
    check(rc == 0, f"convnet: exit {rc}: {err}")
    check("y: float32[1,10] -> float32[8,10]" in out, out)
    check(recorded(dst, "y") == [8, 10], f"convnet output recorded as {recorded(dst, 'y')}")
    check(recorded(dst, "f") == [8, 4], f"convnet f recorded as {recorded(dst, 'f')}")
    if os.path.exists(dst):
        onnx.checker.check_model(onnx.load(dst), full_check=True)
        if ort_dir:
            rows_match(ort_dir, src, dst, {"x": rng.normal(0, 1, [8, 3, 8, 8]).astype(np.float32)},
                       {"x": 0}, "convnet")

    # --- no shared symbolic dim and disagreeing leading dims ---------------
    src = save(two_inputs(), "two_inputs.onnx")
    rc, out, err = surgeon("optimize", src, "-o", "two8.onnx", "--pass", "set-batch:batch=8")
    check(rc == 1 and "share no symbolic dim and disagree at axis 0" in err, f"{rc}: {err}")
    check(not os.path.exists(os.path.join(WORK, "two8.onnx")), "two_inputs: a model was written")
    rc, out, err = surgeon("optimize", src, "-o", "two8.onnx", "--pass",
                           "set-batch:batch=8,inputs=a,axis=0")
    check(rc == 0 and "a: float32[1,4] -> float32[8,4]" in out, f"{rc}: {out} {err}")

    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
