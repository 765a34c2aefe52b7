#!/usr/bin/python3
"""Time one network of tools/export_nets.py on torch (for bench_runtime.py).

    torch_bench.py NET INPUT.pb THREADS REPEAT

Builds the network exactly as export_nets.py does (same seed, same
recalibrated BatchNorm), runs it in eval mode under torch.inference_mode
on the test input, once to warm up and then REPEAT times, and prints one
JSON line: the first run and the best and median of the others in
milliseconds, and the sum of |y| (to check that every runtime computed the
same thing).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    net, inp, threads, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    import torch
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    import torch.nn as nn
    import torchvision as tv
    from onnx import TensorProto, numpy_helper

    import export_nets

    t = TensorProto()
    with open(inp, "rb") as f:
        t.ParseFromString(f.read())
    x = torch.from_numpy(numpy_helper.to_array(t).copy())
    model = export_nets.build(net, torch, nn, tv)
    times = []
    with torch.inference_mode():
        t0 = time.perf_counter()
        y = model(x)
        first = (time.perf_counter() - t0) * 1e3
        for _ in range(repeat):
            t0 = time.perf_counter()
            y = model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(json.dumps({"first_ms": first, "best_ms": times[0], "median_ms": times[len(times) // 2],
                      "abs_sum": float(y.double().abs().sum()), "version": torch.__version__}))


if __name__ == "__main__":
    main()
