#!/usr/bin/python3
"""Real networks on the runtime (ctest `nets`).

    nets_test.py SURGEON SRCDIR CACHEDIR [--nets NAME,...] [--opsets 13,17]
                 [--threads N] [--skip NAME,...] [--skip-reason TEXT]

Makes the networks of tools/export_nets.py in CACHEDIR when they are missing
or stale (torch export takes minutes the first time; later runs reuse
them), runs each with `surgeon run MODEL -i input_0.pb` and compares every
graph output with torch's (output_K.pb): the cosine similarity must be at
least 0.99999 and max |a - b| at most 1e-4 * max |b|. One PASS/FAIL/SKIP
line per network with both figures, then the totals; exit 1 on any
failure, 77 (ctest's skip) when torch is not installed, saying so.
--skip leaves networks out with the reason printed on their SKIP line.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, numpy_helper

COS_MIN = 0.99999
REL_MAX = 1e-4


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(got, want):
    """(ok, text) for one output."""
    if got.shape != want.shape:
        return False, "shape %s, expected %s" % (got.shape, want.shape)
    if got.dtype != want.dtype:
        return False, "dtype %s, expected %s" % (got.dtype, want.dtype)
    a = got.astype(np.float64).ravel()
    b = want.astype(np.float64).ravel()
    if not np.all(np.isfinite(a)):
        return False, "%d non-finite values" % int(np.sum(~np.isfinite(a)))
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else (1.0 if na == nb else 0.0)
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    ok = cos >= COS_MIN and err <= REL_MAX * scale
    return ok, "cosine %.9f, max|a-b| %.3g = %.3g * max|b| (%.3g)" % (
        cos, err, err / scale if scale else float("inf"), scale)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("surgeon")
    ap.add_argument("srcdir")
    ap.add_argument("cachedir")
    ap.add_argument("--nets", default="")
    ap.add_argument("--opsets", default="13,17")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--skip", default="")
    ap.add_argument("--skip-reason", default="left out on request")
    args = ap.parse_args()

    exporter = os.path.join(args.srcdir, "tools", "export_nets.py")
    sel = ["--opsets", args.opsets] + (["--nets", args.nets] if args.nets else [])
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print("SKIP nets: python3-torch / python3-torchvision are not installed (%s); "
              "tools/export_nets.sh installs them" % e)
        return 77
    t0 = time.time()
    p = subprocess.run([sys.executable, exporter, args.cachedir] + sel)
    if p.returncode:
        print("FAIL nets: export_nets.py exited with %d" % p.returncode)
        return 1
    print("networks ready in %.1f s" % (time.time() - t0), flush=True)
    names = subprocess.run([sys.executable, exporter, args.cachedir, "--list"] + sel,
                           capture_output=True, text=True, check=True).stdout.split()
    skip = {s for s in args.skip.split(",") if s}

    passed = failed = skipped = 0
    for name in names:
        net = name.rsplit("_op", 1)[0]
        if net in skip:
            print("SKIP %s: %s" % (name, args.skip_reason), flush=True)
            skipped += 1
            continue
        folder = os.path.join(args.cachedir, name)
        data = os.path.join(folder, "test_data_set_0")
        inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
        outputs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
        tmp = tempfile.mkdtemp(prefix="sg-nets-")
        try:
            out = os.path.join(tmp, "out")
            cmd = [args.surgeon, "run", os.path.join(folder, "model.onnx"), "-o", out]
            for f in inputs:
                cmd += ["-i", os.path.join(data, f)]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            t1 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True)
            secs = time.time() - t1
            if r.returncode:
                print("FAIL %s: surgeon run exited with %d: %s" %
                      (name, r.returncode, (r.stderr or r.stdout).strip()), flush=True)
                failed += 1
                continue
            with open(os.path.join(out, "manifest.json")) as f:
                files = [o["file"] for o in json.load(f)["outputs"]]
            if len(files) != len(outputs):
                print("FAIL %s: %d outputs, expected %d" % (name, len(files), len(outputs)))
                failed += 1
                continue
            lines, ok = [], True
            for i, (f, want) in enumerate(zip(files, outputs)):
                good, text = compare(np.load(os.path.join(out, f)),
                                     read_pb(os.path.join(data, want)))
                ok = ok and good
                lines.append("output %d: %s" % (i, text))
            print("%s %s (%.2f s): %s" % ("PASS" if ok else "FAIL", name, secs, "; ".join(lines)),
                  flush=True)
            if ok:
                passed += 1
            else:
                failed += 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
