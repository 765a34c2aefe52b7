#!/usr/bin/python3
"""Split every real network of the `nets` tests and check that running the
front half, then the back half on its outputs, gives the whole model's
outputs bit for bit (issue 14, part 4).

Usage: cut_nets_test.py SURGEON NETS_DIR   (NETS_DIR made by the nets test;
exit 77, skipped, when it has no network)

Each network is cut three ways: at a third and at two thirds of the
topological order (--index), and after a named node (--at, the middle
node). The halves run on surgeon's runtime with the test's own input.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

S, NETS = sys.argv[1], sys.argv[2]
failures, passed = [], 0


def sg(*args):
    p = subprocess.run([S] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("surgeon %s: exit %d\n%s" % (" ".join(map(str, args)), p.returncode,
                                                        p.stderr))
    return p


def run(work, model, inputs, tag):
    d = os.path.join(work, tag)
    args = ["run", model, "-o", d]
    for name, f in inputs.items():
        args += ["-i", "%s=%s" % (name, f)]
    sg(*args)
    man = json.load(open(os.path.join(d, "manifest.json")))
    return {o["name"]: os.path.join(d, o["file"]) for o in man["outputs"]}


def one(work, net, model, inputs, whole, where):
    global passed
    front, back = os.path.join(work, "front.onnx"), os.path.join(work, "back.onnx")
    for f in glob.glob(os.path.join(work, "*")):
        if os.path.isdir(f) and os.path.basename(f) != "whole":
            shutil.rmtree(f)
        elif f.endswith(".onnx") or f.endswith(".data"):
            os.remove(f)
    sg("split", model, *where, "-o", front, back)
    fm, bm = onnx.load(front, load_external_data=False), onnx.load(back, load_external_data=False)
    f_out = run(work, front, {i.name: inputs[i.name] for i in fm.graph.input
                              if i.name in inputs}, "front")
    b_in = {i.name: f_out.get(i.name) or inputs[i.name] for i in bm.graph.input
            if not any(t.name == i.name for t in bm.graph.initializer)}
    b_out = run(work, back, b_in, "back")
    label = "%s split %s (front %d nodes, back %d, %d crossing)" % (
        net, " ".join(where), len(fm.graph.node), len(bm.graph.node),
        len([i for i in bm.graph.input if i.name in f_out]))
    for name, f in whole.items():
        got = b_out.get(name) or f_out.get(name)
        a = np.load(f)
        b = np.load(got) if got else None
        if b is None or a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
            failures.append("%s: output %s differs" % (label, name))
            print("FAIL", failures[-1])
            return
    passed += 1
    print("PASS", label)


def main():
    nets = sorted(d for d in glob.glob(os.path.join(NETS, "*")) if
                  os.path.exists(os.path.join(d, "model.onnx")))
    if not nets:
        print("SKIP: no network in %s (the nets test makes them with tools/export_nets.py)" % NETS)
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="sg_cut_nets_")
    try:
        for d in nets:
            net = os.path.basename(d)
            model = os.path.join(d, "model.onnx")
            m = onnx.load(model, load_external_data=False)
            inits = {t.name for t in m.graph.initializer}
            ins = [i.name for i in m.graph.input if i.name not in inits]
            inputs = {name: os.path.join(d, "test_data_set_0", "input_%d.pb" % k)
                      for k, name in enumerate(ins)}
            whole = run(work, model, inputs, "whole")
            n = len(m.graph.node)
            mid = m.graph.node[n // 2].name
            for where in (["--index", str(n // 3)], ["--index", str(2 * n // 3)], ["--at", mid]):
                try:
                    one(work, net, model, inputs, whole, where)
                except RuntimeError as e:
                    failures.append("%s %s: %s" % (net, " ".join(where), e))
                    print("FAIL", failures[-1])
            shutil.rmtree(os.path.join(work, "whole"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
