#!/usr/bin/python3
"""The runtime benchmark (issue 4, part 6); tools/bench/bench_runtime.sh
prepares everything and calls this.

    bench_runtime.py --work DIR --bin BUILD_DIR --ort NODE_MODULES
                     [--nets resnet50,mobilenet_v2,vit_b_16] [--threads 1,2]
                     [--rounds 3] [--reps 10]

1. Speed. For every network (batch 1, opset 17) and thread count, in one
   run: surgeon's runtime through the C API in a warm process
   (sg_bench_runtime: load once, run REPS times), onnxruntime-node (every
   graph optimisation on, intra-op threads = N) and torch (eval,
   inference_mode, N threads), each also warm and timed the same way, and
   `surgeon run` itself (one run per process, the "ran ... in" time it
   prints, and the wall time of the whole command). The measurements are
   interleaved over ROUNDS rounds and the best of each is kept (the
   machine is shared: the best is the least disturbed). Ratios are
   surgeon / peer (below 1: surgeon is faster). Every runtime must give
   the same sum of |y| (checked to 1e-4 relative).
2. Dumps. `surgeon run --dump all` against `--dump outputs` (1 thread):
   the extra time, against the time Python takes to write the same bytes
   into as many new files (os.open/os.write/os.close) in the same folder.
3. Memory. Peak RSS of `surgeon run` (outputs only) against the model's
   weights plus its largest set of live activations (tensor sizes from a
   --dump all manifest, each live from its producer to its last reader).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.strip()))
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_cli(cmd):
    """(the "ran ... in" ms, wall s) of one `surgeon run`."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.strip()))
    m = re.search(r"ran \d+ nodes in ([0-9.]+) ms", p.stdout)
    return float(m.group(1)), wall


def run_rss(cmd):
    """Peak RSS (MB) of cmd. Measured by GNU time: the rusage of a child
    forked from this (large) Python process would count Python's own pages,
    which the kernel carries into the child's high-water mark at exec."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return int(p.stderr.strip().splitlines()[-1]) / 1024.0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def fmt_ratio(a, b):
    return "%.2fx" % (a / b) if a and b else "-"


def live_activation_peak(model_path, manifest):
    """Largest sum of live tensor bytes over the execution order."""
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    size = {}
    for t in manifest["tensors"]:
        if t.get("kind") != "tensor":
            continue
        n = int(np.prod(t["shape"])) if t["shape"] else 1
        size[t["value"]] = n * np.dtype(t["dtype"]).itemsize
    for i in manifest["inputs"]:
        size[i["name"]] = int(np.prod(i["shape"]) if i["shape"] else 1) * np.dtype(
            i["dtype"]).itemsize
    # step of each node in execution order (manifest indices follow it)
    steps = {}
    for t in manifest["tensors"]:
        steps.setdefault(t["node"], len(steps))
    born, last = {}, {}
    for i in manifest["inputs"]:
        born[i["name"]] = -1
    outputs = {o.name for o in m.graph.output}
    for node in m.graph.node:
        s = steps.get(node.name)
        if s is None:
            continue
        for o in node.output:
            if o:
                born.setdefault(o, s)
                last[o] = max(last.get(o, s), s)
        for i in node.input:
            if i and i not in inits:
                last[i] = max(last.get(i, s), s)
    end = len(steps)
    for o in outputs:
        last[o] = end
    peak = 0
    for s in range(-1, end + 1):
        live = sum(size.get(v, 0) for v, b in born.items() if b <= s <= last.get(v, b))
        peak = max(peak, live)
    return peak


def weight_bytes(model_path):
    m = onnx.load(model_path, load_external_data=False)
    total = 0
    for t in m.graph.initializer:
        total += int(np.prod(t.dims) if t.dims else 1) * np.dtype(
            onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]).itemsize
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--bin", required=True, help="Release build folder (surgeon, sg_bench_runtime)")
    ap.add_argument("--ort", required=True, help="node_modules holding onnxruntime-node")
    ap.add_argument("--nets", default="resnet50,mobilenet_v2,vit_b_16")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    nets = args.nets.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    surgeon = os.path.join(args.bin, "surgeon")
    harness = os.path.join(args.bin, "sg_bench_runtime")
    node_env = dict(os.environ, NODE_PATH=args.ort)
    tmp = os.path.join(args.work, "runs")
    os.makedirs(tmp, exist_ok=True)

    print("machine: %d CPUs, %s; OPENBLAS_CORETYPE=%s; load average %.2f" % (
        os.cpu_count(), cpu_model(), os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
        os.getloadavg()[0]))
    best = {}  # (net, threads, runtime) -> dict with best_ms etc.
    sums = {}

    def keep(key, r):
        old = best.get(key)
        if old is None:
            best[key] = dict(r)
        else:
            for f in ("best_ms", "first_ms"):
                if f in r and r[f] < old[f]:
                    old[f] = r[f]
        sums.setdefault(key[0], []).append((key[2], r.get("abs_sum")))

    for rnd in range(args.rounds):
        for net in nets:
            folder = os.path.join(args.work, "nets", net + "_op17")
            model = os.path.join(folder, "model.onnx")
            inp = os.path.join(folder, "test_data_set_0", "input_0.pb")
            raw = os.path.join(args.work, net + ".input.bin")
            x = read_pb(inp)
            if rnd == 0:
                x.tofile(raw)
            reps = args.reps if net != "vit_b_16" else max(2, args.reps // 3)
            for t in threads:
                keep((net, t, "surgeon"), run_json([harness, model, str(t), str(reps), inp]))
                keep((net, t, "onnxruntime"),
                     run_json(["node", os.path.join(HERE, "ort_bench.js"), model, "input",
                               "float32", ",".join(map(str, x.shape)), raw, str(t), str(reps)],
                              env=node_env))
                keep((net, t, "torch"), run_json([sys.executable, os.path.join(HERE, "torch_bench.py"),
                                                  net, inp, str(t), str(reps)]))
                out = os.path.join(tmp, "cli")
                ran, wall = run_cli([surgeon, "run", model, "-i", inp, "-o", out, "--threads",
                                     str(t)])
                keep((net, t, "surgeon run"), {"best_ms": ran, "wall_s": wall})
        print("round %d of %d done" % (rnd + 1, args.rounds), flush=True)

    # Same results everywhere (sum of |y|).
    for net, pairs in sums.items():
        vals = [v for _, v in pairs if v is not None]
        if vals and (max(vals) - min(vals)) > 1e-4 * max(vals):
            sys.exit("%s: the runtimes disagree on sum |y|: %s" % (net, pairs))

    print()
    print("== Speed: best time per run, batch 1 (ms); ratio = surgeon / peer, below 1 is faster")
    print("%-13s %3s %9s %9s %9s %10s %10s" % ("network", "thr", "surgeon", "ORT", "torch",
                                               "vs ORT", "vs torch"))
    for net in nets:
        for t in threads:
            s = best[(net, t, "surgeon")]["best_ms"]
            o = best[(net, t, "onnxruntime")]["best_ms"]
            p = best[(net, t, "torch")]["best_ms"]
            print("%-13s %3d %9.2f %9.2f %9.2f %10s %10s" % (net, t, s, o, p, fmt_ratio(s, o),
                                                             fmt_ratio(s, p)))
    print("surgeon: warm runs through the C API (sg_bench_runtime), OpenBLAS kernels %s;" %
          best[(nets[0], threads[0], "surgeon")].get("blas_core"))
    print("ORT %s and torch %s: warm runs the same way." % (
        best[(nets[0], threads[0], "onnxruntime")].get("version"),
        best[(nets[0], threads[0], "torch")].get("version")))
    for net in ("resnet50", "mobilenet_v2"):
        if (net, 1, "surgeon") in best:
            r = best[(net, 1, "surgeon")]["best_ms"] / best[(net, 1, "onnxruntime")]["best_ms"]
            print("target %s, 1 thread, within 1.5x of ONNX Runtime: %.2fx -> %s" %
                  (net, r, "met" if r <= 1.5 else "NOT met"))
    print()
    print("== First run in a fresh process (ms): memory is touched for the first time")
    print("%-13s %3s %12s %9s %9s %9s %10s" % ("network", "thr", "surgeon run", "surgeon", "ORT",
                                               "torch", "run vs ORT"))
    for net in nets:
        for t in threads:
            c = best[(net, t, "surgeon run")]["best_ms"]
            f = [best[(net, t, r)]["first_ms"] for r in ("surgeon", "onnxruntime", "torch")]
            print("%-13s %3d %12.2f %9.2f %9.2f %9.2f %10s" % (net, t, c, f[0], f[1], f[2],
                                                                fmt_ratio(c, f[1])))
    print("surgeon run: the time `surgeon run` prints (one run per process, outputs written);")
    print("the others: the first run after loading (best over the rounds).")

    print()
    print("== --dump all: extra time against writing the same bytes (1 thread)")
    print("%-13s %8s %10s %10s %10s %10s %8s" % ("network", "files", "MB", "outputs", "all",
                                                "write", "extra/write"))
    for net in nets:
        folder = os.path.join(args.work, "nets", net + "_op17")
        model = os.path.join(folder, "model.onnx")
        inp = os.path.join(folder, "test_data_set_0", "input_0.pb")
        t_out = t_all = t_write = None
        dump = os.path.join(tmp, "dump_" + net)
        for _ in range(args.rounds):
            t, _ = run_cli([surgeon, "run", model, "-i", inp, "-o", dump + "_o", "--threads", "1"])
            t_out = t if t_out is None else min(t_out, t)
            t, _ = run_cli([surgeon, "run", model, "-i", inp, "-o", dump, "--threads", "1",
                            "--dump", "all"])
            t_all = t if t_all is None else min(t_all, t)
        files = [os.path.join(dump, f) for f in os.listdir(dump) if f.endswith(".npy")]
        sizes = [os.path.getsize(f) for f in files]
        buf = bytes(max(sizes))
        wdir = os.path.join(tmp, "write_" + net)
        for _ in range(args.rounds):
            shutil.rmtree(wdir, ignore_errors=True)
            os.makedirs(wdir)
            t0 = time.perf_counter()
            for i, n in enumerate(sizes):
                fd = os.open(os.path.join(wdir, "%d.npy" % i), os.O_WRONLY | os.O_CREAT, 0o644)
                mv = memoryview(buf)[:n]
                while mv:
                    mv = mv[os.write(fd, mv):]
                os.close(fd)
            t = (time.perf_counter() - t0) * 1e3
            t_write = t if t_write is None else min(t_write, t)
        shutil.rmtree(wdir, ignore_errors=True)
        print("%-13s %8d %10.1f %9.1fms %9.1fms %9.1fms %10.2f" % (
            net, len(files), sum(sizes) / 1e6, t_out, t_all, t_write, (t_all - t_out) / t_write))

        with open(os.path.join(dump, "manifest.json")) as f:
            manifest = json.load(f)
        best[(net, "live")] = live_activation_peak(model, manifest)
        best[(net, "weights")] = weight_bytes(model)

    print()
    print("== Peak memory of `surgeon run` (outputs only, 1 thread) against weights + largest"
          " live activations")
    print("%-13s %10s %10s %10s %10s %8s" % ("network", "weights", "live act.", "sum",
                                          "peak RSS", "ratio"))
    for net in nets:
        folder = os.path.join(args.work, "nets", net + "_op17")
        rss = min(run_rss([surgeon, "run", os.path.join(folder, "model.onnx"), "-i",
                           os.path.join(folder, "test_data_set_0", "input_0.pb"), "-o",
                           os.path.join(tmp, "mem"), "--threads", "1"]) for _ in range(2))
        w, a = best[(net, "weights")] / 2**20, best[(net, "live")] / 2**20
        print("%-13s %8.1fMB %8.1fMB %8.1fMB %8.1fMB %7.2fx" % (net, w, a, w + a, rss,
                                                              rss / (w + a)))
    base = min(run_rss([surgeon, "--version"]) for _ in range(2))
    print("(the surgeon process alone, `surgeon --version`: %.1f MB)" % base)


if __name__ == "__main__":
    main()
