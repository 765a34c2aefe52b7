#!/usr/bin/python3
"""The python peer: onnx.load + onnx.save (external data kept external)."""
import os
import sys

import onnx

src, dst = sys.argv[1], sys.argv[2]
external = any(t.data_location == onnx.TensorProto.EXTERNAL
               for t in onnx.load(src, load_external_data=False).graph.initializer)
m = onnx.load(src)
if external:
    onnx.save_model(m, dst, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(dst) + ".data", size_threshold=1024)
else:
    onnx.save(m, dst)
