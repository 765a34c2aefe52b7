#!/usr/bin/python3
"""Script-built blocks of opsets 18 and 21 (tests/modern/cases_blocks.py)
through the command line as a user runs them, ONNX Runtime 1.30 as the
oracle (ctest `modern_block`, issue 16 parts 6 and 7).

    modern_block_test.py SURGEON SRCDIR BUILDDIR

For each block: `inspect` exits 0 and names the opset; `run --check` says
every node has a kernel; `run` on the block's input matches ONNX Runtime
(|a-b| <= 1e-4 + 1e-4 |b|); `optimize -c configs/cleanup.yaml` keeps the
outputs. Then a model at opset 22 with two operators that have no kernel
(ImageDecoder, Multinomial) beside one that has: `run --check` exits 1
and lists both at once, each with its node, op, domain and opset. ONNX
Runtime is installed into BUILDDIR/real-models/ort as
tests/real_models_test.py does; without it the comparisons are skipped,
saying why, and the rest still runs.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

SRC = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SRC)
sys.path.insert(0, os.path.join(SRC, "modern"))

import cases_blocks  # noqa: E402
import real_models_test  # noqa: E402

failures = []


def check(ok, what):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def sh(*cmd):
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=600)
    return p.returncode, (p.stdout + p.stderr).strip()


def outputs(run_dir):
    with open(os.path.join(run_dir, "manifest.json")) as f:
        man = json.load(f)
    return {o["name"]: np.load(os.path.join(run_dir, o["file"])) for o in man["outputs"]}


def ort_outputs(ort_dir, model, inputs, work):
    """ONNX Runtime's outputs through tests/modern/ort_batch.js."""
    feeds = {}
    for n, a in inputs.items():
        f = os.path.join(work, "ort_%s.bin" % n)
        a.tofile(f)
        feeds[n] = {"file": f, "dtype": "float32", "dims": list(a.shape)}
    out = os.path.join(work, "ort")
    jf = os.path.join(work, "ort_job.json")
    with open(jf, "w") as f:
        json.dump({"ort": os.path.abspath(ort_dir),
                   "jobs": [{"model": model, "inputs": feeds, "out_dir": out}]}, f)
    rc, msg = sh("node", os.path.join(SRC, "modern", "ort_batch.js"), jf)
    if rc:
        return None, msg
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    if "error" in res:
        return None, res["error"]
    return {o["name"]: np.fromfile(o["file"], np.float32).reshape(o["dims"])
            for o in res["outputs"]}, None


def close(got, want, what):
    for n, w in want.items():
        g = got.get(n)
        if g is None or g.shape != w.shape:
            check(False, "%s: output %s has shape %s, want %s" %
                  (what, n, None if g is None else list(g.shape), list(w.shape)))
            continue
        err = np.abs(g.astype(np.float64) - w)
        bad = err > 1e-4 + 1e-4 * np.abs(w)
        check(not bad.any(), "%s: output %s %s (max|a-b| %.3g)" %
              (what, n, list(w.shape), float(err.max()) if err.size else 0.0))


def block(surgeon, srcdir, work, name, ort_dir, ort_why):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    model, inputs = cases_blocks.BLOCKS[name]()
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    opset = model.opset_import[0].version
    rc, msg = sh(surgeon, "inspect", path)
    check(rc == 0 and "ai.onnx %d" % opset in msg, "%s: inspect exits %d and names opset %d" %
          (name, rc, opset))
    rc, msg = sh(surgeon, "run", path, "--check")
    check(rc == 0 and "every node has a kernel" in msg, "%s: run --check: rc %d: %s" %
          (name, rc, msg.splitlines()[-1] if msg else ""))
    args = []
    for n, a in inputs.items():
        np.save(os.path.join(d, n + ".npy"), a)
        args += ["-i", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
    rc, msg = sh(surgeon, "run", path, *args, "-o", os.path.join(d, "run"))
    check(rc == 0, "%s: run exits %d %s" % (name, rc, msg[-300:] if rc else ""))
    if rc:
        return
    got = outputs(os.path.join(d, "run"))
    opt = os.path.join(d, "opt.onnx")
    rc, msg = sh(surgeon, "optimize", path, "-c", os.path.join(srcdir, "configs", "cleanup.yaml"),
                 "-o", opt)
    check(rc == 0, "%s: optimize -c configs/cleanup.yaml exits %d %s" %
          (name, rc, msg[-300:] if rc else ""))
    if rc == 0:
        rc, msg = sh(surgeon, "run", opt, *args, "-o", os.path.join(d, "run_opt"))
        check(rc == 0, "%s: run of the optimized model exits %d" % (name, rc))
        if rc == 0:
            close(outputs(os.path.join(d, "run_opt")),
                  {k: v.astype(np.float64) for k, v in got.items()}, name + " optimized vs not")
    if ort_dir is None:
        print("skip %s against ONNX Runtime: %s" % (name, ort_why))
        return
    want, err = ort_outputs(ort_dir, path, inputs, d)
    check(want is not None, "%s: ONNX Runtime runs it %s" % (name, err or ""))
    if want is not None:
        close(got, {k: v.astype(np.float64) for k, v in want.items()}, name + " vs ONNX Runtime")


def missing_kernels(surgeon, work):
    """run --check on opset 22 with two ops that have no kernel."""
    n = helper.make_node
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        [n("ImageDecoder", ["bytes"], ["img"], name="decode"),
         n("Multinomial", ["p"], ["draw"], name="sample", sample_size=2),
         n("Relu", ["q"], ["r"], name="relu")], "missing",
        [vi("bytes", TensorProto.UINT8, [16]), vi("p", TensorProto.FLOAT, [1, 3]),
         vi("q", TensorProto.FLOAT, [2])],
        [vi("img", TensorProto.UINT8, None), vi("draw", TensorProto.INT32, None),
         vi("r", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = 10
    path = os.path.join(work, "missing_kernels.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    rc, msg = sh(surgeon, "run", path, "--check")
    lines = msg.splitlines()
    for node, op in (("decode", "ImageDecoder"), ("sample", "Multinomial")):
        hit = [ln for ln in lines if "'%s'" % node in ln]
        ok = len(hit) == 1 and op in hit[0] and "ai.onnx" in hit[0] and "opset 22" in hit[0]
        check(ok, "run --check names node %s (%s, ai.onnx, opset 22): %s" %
              (node, op, hit[0] if hit else "not listed"))
    check(rc == 1 and not any("'relu'" in ln for ln in lines) and "2 of 3 nodes" in msg,
          "run --check exits 1 and lists just the two: rc %d, %s" %
          (rc, lines[-1] if lines else ""))


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    surgeon, srcdir, build = sys.argv[1:]
    work = os.path.join(build, "modern-block")
    os.makedirs(work, exist_ok=True)
    ort_dir, why = real_models_test.install_ort(build)
    for name in cases_blocks.BLOCKS:
        block(surgeon, srcdir, work, name, ort_dir, why)
    missing_kernels(surgeon, work)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
