#!/usr/bin/python3
"""Run Debian's python3-onnx checker on every .onnx file under the folders
given (the models the golden pass tests and the CLI tests wrote). A model
the checker rejects fails the test; so does a folder with no model at all,
since that means the producing test did not run."""
import glob
import os
import sys

import onnx


def main():
    files = []
    for folder in sys.argv[1:]:
        files += sorted(glob.glob(os.path.join(folder, "**", "*.onnx"), recursive=True))
    if not files:
        print("FAIL no models found in %s" % " ".join(sys.argv[1:]))
        return 1
    failed = 0
    for path in files:
        try:
            onnx.checker.check_model(onnx.load(path))
        except Exception as e:  # the checker raises several exception types
            print("FAIL %s: %s" % (path, str(e).splitlines()[0]))
            failed += 1
    print("%d passed, %d failed" % (len(files) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
