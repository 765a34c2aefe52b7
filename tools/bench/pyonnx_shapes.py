#!/usr/bin/python3
"""Time of onnx.shape_inference.infer_shapes alone (the model loaded first,
not timed): pyonnx_shapes.py MODEL [REPEATS]. Prints best and median."""
import sys
import time

import onnx
from onnx import shape_inference

m = onnx.load(sys.argv[1], load_external_data=False)
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
t = []
for _ in range(reps):
    t0 = time.perf_counter()
    shape_inference.infer_shapes(m, strict_mode=True)
    t.append(time.perf_counter() - t0)
t.sort()
print("onnx.shape_inference %s: best %.4f s, median %.4f s" % (sys.argv[1], t[0], t[len(t) // 2]))
