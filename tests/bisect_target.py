#!/usr/bin/python3
"""A stand-in for a user's device script, for `surgeon bisect --target cmd:`.

Usage: bisect_target.py SURGEON MODEL INPUTS OUT NODE [BEHAVIOUR]

Runs MODEL on surgeon's reference runtime with the inputs INPUTS/<name>.npy
and writes OUT/<output>.npy, as ../shared/FORMATS.md asks of a target
command; when MODEL holds a node named NODE, that node's first output is
multiplied by 1.5 first: a target that gets exactly one operator wrong.
Each call appends a line to $BISECT_TARGET_LOG (the tests count the runs).
BEHAVIOUR makes a bad target: fail (exit 1), hang (sleeps), silent (exit 0,
writes nothing), fail-front (fails on a split front only).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper

surgeon, model, inputs, out, node = sys.argv[1:6]
behaviour = sys.argv[6] if len(sys.argv) > 6 else ""
log = os.environ.get("BISECT_TARGET_LOG")
if log:
    with open(log, "a") as f:
        f.write(model + "\n")
if behaviour == "fail" or (behaviour == "fail-front" and model.endswith("front.onnx")):
    print("device error: the model does not run", file=sys.stderr)
    sys.exit(1)
if behaviour == "hang":
    time.sleep(600)
if behaviour == "silent":
    sys.exit(0)

m = onnx.load(model)
for n in m.graph.node:
    if n.name == node:
        raw = n.output[0] + "__raw"
        orig = n.output[0]
        n.output[0] = raw
        m.graph.initializer.append(numpy_helper.from_array(np.array(1.5, np.float32), raw + "_k"))
        m.graph.node.append(helper.make_node("Mul", [raw, raw + "_k"], [orig], name=node + "_perturb"))
        break
inits = {i.name for i in m.graph.initializer}
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "m.onnx")
    onnx.save(m, path)
    args = [surgeon, "run", path, "-o", os.path.join(tmp, "run")]
    for i in m.graph.input:
        if i.name not in inits:
            args += ["-i", "%s=%s" % (i.name, os.path.join(inputs, i.name.replace("/", "_") + ".npy"))]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        sys.stderr.write(p.stderr)
        sys.exit(p.returncode)
    man = json.load(open(os.path.join(tmp, "run", "manifest.json")))
    for t in man["tensors"]:
        if t.get("graph_output"):
            v = np.load(os.path.join(tmp, "run", t["file"]))
            np.save(os.path.join(out, t["value"].replace("/", "_") + ".npy"), v)
