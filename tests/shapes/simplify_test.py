#!/usr/bin/python3
"""`simplify` on the real networks (ctest `simplify_nets`).

    simplify_test.py SURGEON NETS_DIR

For every NETS_DIR/*/model.onnx: `surgeon optimize --pass simplify`; the
output must pass onnx.checker with full_check, keep no Shape or Size node
and no node whose inputs are all constants (the shape arithmetic of static
shapes is folded), and run on test_data_set_0 bit for bit like the input
(`surgeon run`, every graph output, NaN where NaN). Prints one line per
network (nodes before and after); exit 1 on a failure, 77 without networks.
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

SHAPE_OPS = {"Shape", "Size"}


def constant_names(g):
    names = {i.name for i in g.initializer}
    names |= {o for n in g.node if n.op_type == "Constant" for o in n.output}
    return names


def run(surgeon, model, inputs, out):
    cmd = [surgeon, "run", model, "-o", out]
    for name, f in inputs:
        cmd += ["-i", "%s=%s" % (name, f)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(r.stderr.strip()[-300:])
    got = {}
    for f in glob.glob(os.path.join(out, "*.npy")):
        got[os.path.basename(f).split(".")[0]] = np.load(f)
    return got


def main():
    surgeon, nets = sys.argv[1], sys.argv[2]
    models = sorted(glob.glob(os.path.join(nets, "*", "model.onnx")))
    if not models:
        print("SKIP: no networks under %s (ctest -R nets makes them)" % nets)
        return 77
    failed = 0
    for path in models:
        label = os.path.basename(os.path.dirname(path))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sim.onnx")
            r = subprocess.run([surgeon, "optimize", path, "-o", out, "--pass", "simplify"],
                               capture_output=True, text=True, timeout=900)
            problems = []
            if r.returncode != 0:
                print("FAIL %s: simplify exit %d: %s" % (label, r.returncode, r.stderr.strip()[-300:]))
                failed += 1
                continue
            orig, sim = onnx.load(path), onnx.load(out)
            try:
                onnx.checker.check_model(sim, full_check=True)
            except Exception as e:
                problems.append("onnx.checker: %s" % str(e).splitlines()[0][:200])
            left = [n.name or n.op_type for n in sim.graph.node if n.op_type in SHAPE_OPS]
            if left:
                problems.append("Shape/Size left: %s" % ", ".join(left[:5]))
            consts = constant_names(sim.graph)
            foldable = [n.name or n.op_type for n in sim.graph.node
                        if n.op_type != "Constant" and n.input and all(i in consts for i in n.input if i)]
            if foldable:
                problems.append("all-constant nodes left: %s" % ", ".join(foldable[:5]))
            inits = {i.name for i in orig.graph.initializer}
            names = [i.name for i in orig.graph.input if i.name not in inits]
            files = sorted(glob.glob(os.path.join(os.path.dirname(path), "test_data_set_0", "input_*.pb")))
            try:
                a = run(surgeon, path, list(zip(names, files)), os.path.join(tmp, "a"))
                b = run(surgeon, out, list(zip(names, files)), os.path.join(tmp, "b"))
                if sorted(a) != sorted(b):
                    problems.append("outputs differ in names: %s vs %s" % (sorted(a), sorted(b)))
                for k in a:
                    if k in b and not (a[k].shape == b[k].shape and a[k].dtype == b[k].dtype and
                                       np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f")):
                        problems.append("output %s differs" % k)
            except RuntimeError as e:
                problems.append("run: %s" % e)
            status = "FAIL" if problems else "ok"
            failed += bool(problems)
            print("%s %s: %d -> %d nodes%s" % (status, label, len(orig.graph.node), len(sim.graph.node),
                                                "".join("\n    " + p for p in problems)))
    print("%d networks, %d failed" % (len(models), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
