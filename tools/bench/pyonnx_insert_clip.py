#!/usr/bin/python3
"""The python peer of `surgeon optimize --pass insert-clip:position=after`:
onnx.load, a Clip (opset >= 11 form, float16 range) after every Exp whose
consumers are rewired, onnx.save (external data kept external)."""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

src, dst = sys.argv[1], sys.argv[2]
m = onnx.load(src)
g = m.graph
g.initializer.extend([numpy_helper.from_array(np.array(-65504, np.float32), "clip_lo"),
                      numpy_helper.from_array(np.array(65504, np.float32), "clip_hi")])
consumers = {}
for n in g.node:
    for i, name in enumerate(n.input):
        consumers.setdefault(name, []).append((n, i))
outputs = {o.name for o in g.output}
new_nodes = []
for n in g.node:
    new_nodes.append(n)
    if n.op_type != "Exp":
        continue
    out = n.output[0]
    pre = out + "_pre"
    n.output[0] = pre
    new_nodes.append(helper.make_node("Clip", [pre, "clip_lo", "clip_hi"], [out],
                                      name=n.name + "_clip"))
del g.node[:]
g.node.extend(new_nodes)
external = any(t.data_location == onnx.TensorProto.EXTERNAL
               for t in onnx.load(src, load_external_data=False).graph.initializer)
if external:
    onnx.save_model(m, dst, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(dst) + ".data", size_threshold=1024)
else:
    onnx.save(m, dst)
