#!/usr/bin/python3
"""The generated corpus of opsets 18 to 23 on surgeon's runtime (ctest
`modern_corpus`, issue 16).

    modern_corpus_test.py SG_BACKEND SRCDIR BUILDDIR [--only SUBSTR]

Installs onnxruntime-node 1.30 into BUILDDIR/real-models/ort as
tests/real_models_test.py does (the same folder, installed once), writes
the corpus into BUILDDIR/modern-corpus with tests/modern/make_corpus.py,
then runs the backend runner (tests/backend_runner.c) on every suite with
tests/modern/known_failures.txt: the test fails on a failure not listed
there, on a listed one that passes, and when a suite passes fewer cases
than its min_pass line. Without ONNX Runtime (no npm, no network) the
cases that need it are skipped, saying why, and the min_pass lines are not
checked (the counts they record include those cases).
"""
import os
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SRC)
sys.path.insert(0, os.path.join(SRC, "modern"))

import make_corpus  # noqa: E402
import real_models_test  # noqa: E402


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    backend, srcdir, build = args
    ort_dir, why = real_models_test.install_ort(build)
    if ort_dir is None:
        print("modern_corpus: ONNX Runtime is not available (%s): the cases that need it "
              "are skipped and min_pass is not checked" % why)
    out = os.path.join(build, "modern-corpus")
    try:
        suites = make_corpus.make(out, ort_dir, why if ort_dir is None else None, only)
    except RuntimeError as e:
        print("modern_corpus: %s" % e)
        return 1
    sys.stdout.flush()
    known = os.path.join(srcdir, "tests", "modern", "known_failures.txt")
    tmp = None
    if ort_dir is None:
        with open(known) as f:
            lines = [ln for ln in f if not ln.startswith("min_pass ")]
        fd, tmp = tempfile.mkstemp(suffix=".txt")
        with os.fdopen(fd, "w") as f:
            f.writelines(lines)
        known = tmp
    cmd = [backend, "--known", known]
    if only:
        cmd += ["--only", only]
    try:
        rc = subprocess.call(cmd + [out] + suites)
    finally:
        if tmp:
            os.unlink(tmp)
    return rc


if __name__ == "__main__":
    sys.exit(main())
