#!/usr/bin/python3
"""Round-trip every ONNX backend test model through surgeon and compare.

For each model.onnx under the given folders, surgeon loads and saves it
(tests/roundtrip_tool), then python3-onnx checks that the saved ModelProto
equals the original field for field (protobuf message equality, which for
proto2 includes field presence) and that onnx.checker accepts the saved
model wherever it accepted the original. Exit status 1 on any difference.
"""
import glob
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import checker

DATA = "/usr/share/libonnx-testdata/data"
FOLDERS = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def main():
    tool = sys.argv[1]
    if not os.path.isdir(DATA):
        print("SKIP: %s is missing (install libonnx-testdata)" % DATA)
        return 0
    models = []
    for f in FOLDERS:
        models += sorted(glob.glob(os.path.join(DATA, f, "*", "model.onnx")))
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([tool, out], input="\n".join(models) + "\n",
                              capture_output=True, text=True)
        sys.stderr.write(proc.stderr)
        failures = 0
        checked = 0
        for line in proc.stdout.splitlines():
            idx, status, rest = line.split(" ", 2)
            if status != "OK":
                print("FAIL load/save %s" % rest)
                failures += 1
                continue
            orig = onnx.load(rest)
            saved = onnx.load(os.path.join(out, idx + ".onnx"))
            if orig != saved:
                print("FAIL differs after round trip: %s" % rest)
                failures += 1
                continue
            try:
                checker.check_model(orig)
            except Exception:
                continue
            try:
                checker.check_model(saved)
            except Exception as e:
                print("FAIL checker rejects the saved %s: %s" % (rest, str(e).splitlines()[0]))
                failures += 1
                continue
            checked += 1
        total = len(models)
        print("%d models, %d identical and checker-clean, %d failed" % (total, checked, failures))
        if proc.returncode not in (0, 1) or len(proc.stdout.splitlines()) != total:
            print("FAIL roundtrip tool exited with %d" % proc.returncode)
            return 1
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
