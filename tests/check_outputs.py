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
    failed = skipped = 0
    newest = onnx.defs.onnx_opset_version()
    for path in files:
        model = onnx.load(path)
        newer = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx") and
                 o.version > newest]
        if newer:
            print("SKIP %s: opset %d is newer than python3-onnx %s knows (%d)" %
                  (path, newer[0], onnx.__version__, newest))
            skipped += 1
            continue
        try:
            onnx.checker.check_model(model)
        except Exception as e:  # the checker raises several exception types
            print("FAIL %s: %s" % (path, str(e).splitlines()[0]))
            failed += 1
    print("%d passed, %d failed, %d skipped" % (len(files) - failed - skipped, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
