#!/usr/bin/python3
"""Write the generated corpus of opsets 18 to 23 (issue 16) as ONNX
backend-test folders, for tests/backend_runner.c.

    make_corpus.py OUTDIR [--ort DIR] [--no-ort WHY] [--only SUBSTR]

Every module tests/modern/cases_<suite>.py is imported; its cases()
yields (case_name, model, inputs, expected) (see cases_dtypes.py's
docstring: inputs maps each graph input to a numpy array or an
onnx.TensorProto, expected maps each graph output likewise, or is None to
take ONNX Runtime's outputs). Each case becomes
OUTDIR/<suite>/test_<case_name>/ holding model.onnx and
test_data_set_0/input_K.pb, output_K.pb (K in graph order, initializers
left out).

Expected None: the model runs on ONNX Runtime (onnxruntime-node in DIR,
tests/modern/ort_batch.js, all such cases in one node process). A case
ONNX Runtime fails on, or cannot be fed (its JavaScript API has no float8,
bfloat16 or 4-bit tensors), or that needs it when it is not installed
(--no-ort WHY), gets a skip.txt with the reason instead of outputs: the
runner prints it as SKIP. A folder is rewritten only when its case
changed (case.key holds a hash of model, inputs, expected and oracle), so
a rerun is quick; folders of cases that no longer exist are removed.
Prints per suite how many cases were written, came from ONNX Runtime and
were skipped, and every skip's reason; exits 1 when a cases module fails
or names a case twice.
"""
import argparse
import glob
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_VERSION = "1.30.0"

# numpy dtype -> ONNX Runtime's JavaScript tensor type
ORT_TYPES = {
    np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
    np.dtype(np.float16): "float16", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
    np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64",
    np.dtype(np.bool_): "bool",
}
ORT_NP = {v: k for k, v in ORT_TYPES.items()}


def to_proto(name, v):
    """A TensorProto named name for a numpy array (strings as object) or a
    TensorProto (copied, renamed)."""
    if isinstance(v, TensorProto):
        t = TensorProto()
        t.CopyFrom(v)
        t.name = name
        return t
    a = np.asarray(v)
    if a.dtype.kind in "US":
        a = a.astype(object)
    return numpy_helper.from_array(a, name)


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def case_key(model_bytes, inputs, expected):
    h = hashlib.sha256(model_bytes)
    for n in sorted(inputs):
        h.update(n.encode() + b"\0" + to_proto(n, inputs[n]).SerializeToString())
    if expected is None:
        h.update(b"ORT " + ORT_VERSION.encode())
    else:
        for n in sorted(expected):
            h.update(n.encode() + b"\1" + to_proto(n, expected[n]).SerializeToString())
    return h.hexdigest()


def write_file(path, data):
    mode = "w" if isinstance(data, str) else "wb"
    with open(path, mode) as f:
        f.write(data)


def ort_feed(name, v, folder):
    """The job entry for one input, or raises ValueError saying why ONNX
    Runtime's JavaScript API cannot take it."""
    if isinstance(v, TensorProto):
        raise ValueError("input '%s' has element type %d, which ONNX Runtime's JavaScript API "
                         "cannot feed" % (name, v.data_type))
    a = np.asarray(v)
    f = os.path.join(folder, "ort_in_%s" % hashlib.md5(name.encode()).hexdigest()[:12])
    if a.dtype.kind in "USO":
        write_file(f, json.dumps([s.decode() if isinstance(s, bytes) else str(s)
                                  for s in a.ravel()]))
        return {"file": f, "dtype": "string", "dims": list(a.shape)}
    if a.dtype not in ORT_TYPES:
        raise ValueError("input '%s' has numpy dtype %s" % (name, a.dtype))
    np.ascontiguousarray(a).tofile(f)
    return {"file": f, "dtype": ORT_TYPES[a.dtype], "dims": list(a.shape)}


def ort_output(o):
    if o["dtype"] == "string":
        with open(o["file"]) as f:
            vals = json.load(f)
        return np.array([s.encode() for s in vals], dtype=object).reshape(o["dims"])
    return np.fromfile(o["file"], dtype=ORT_NP[o["dtype"]]).reshape(o["dims"])


def load_suites(only_suite=None):
    suites = []
    for path in sorted(glob.glob(os.path.join(HERE, "cases_*.py"))):
        name = os.path.basename(path)[len("cases_"):-3]
        if only_suite and name != only_suite:
            continue
        suites.append((name, importlib.import_module("cases_" + name)))
    return suites


def make(outdir, ort_dir=None, no_ort=None, only=None, log=print):
    """Write the corpus; returns the list of suite names. Raises
    RuntimeError for a broken cases module or ort_batch.js failing."""
    sys.path.insert(0, HERE)
    suites = load_suites()
    os.makedirs(outdir, exist_ok=True)
    jobs = []  # (suite, folder, key, job)
    stats = {}
    for suite, mod in suites:
        sdir = os.path.join(outdir, suite)
        os.makedirs(sdir, exist_ok=True)
        seen = set()
        st = stats[suite] = {"cases": 0, "fresh": 0, "ort": 0, "skipped": []}
        try:
            items = list(mod.cases())
        except Exception as e:  # a cases module that does not run is a test failure
            raise RuntimeError("tests/modern/cases_%s.py: cases() raised %s: %s" %
                               (suite, type(e).__name__, e))
        for case_name, model, inputs, expected in items:
            folder_name = "test_" + case_name
            if folder_name in seen:
                raise RuntimeError("cases_%s.py names case %s twice" % (suite, case_name))
            seen.add(folder_name)
            st["cases"] += 1
            if only and only not in "%s/%s" % (suite, folder_name):
                continue
            folder = os.path.join(sdir, folder_name)
            mb = model.SerializeToString()
            key = case_key(mb, inputs, expected)
            kfile = os.path.join(folder, "case.key")
            if os.path.exists(kfile) and open(kfile).read() == key:
                if os.path.exists(os.path.join(folder, "skip.txt")):
                    st["skipped"].append((case_name, open(os.path.join(folder, "skip.txt")).read()))
                elif expected is None:
                    st["ort"] += 1
                continue
            shutil.rmtree(folder, ignore_errors=True)
            ddir = os.path.join(folder, "test_data_set_0")
            os.makedirs(ddir)
            write_file(os.path.join(folder, "model.onnx"), mb)
            st["fresh"] += 1
            names = graph_inputs(model)
            missing = [n for n in names if n not in inputs]
            if missing:
                raise RuntimeError("cases_%s.py case %s gives no value for input %s" %
                                   (suite, case_name, missing[0]))
            for k, n in enumerate(names):
                write_file(os.path.join(ddir, "input_%d.pb" % k),
                           to_proto(n, inputs[n]).SerializeToString())
            if expected is not None:
                for k, o in enumerate(model.graph.output):
                    if o.name not in expected:
                        raise RuntimeError("cases_%s.py case %s gives no value for output %s" %
                                           (suite, case_name, o.name))
                    write_file(os.path.join(ddir, "output_%d.pb" % k),
                               to_proto(o.name, expected[o.name]).SerializeToString())
                write_file(kfile, key)
                continue
            if no_ort:
                why = "needs ONNX Runtime as the oracle: %s" % no_ort
                write_file(os.path.join(folder, "skip.txt"), why)
                st["skipped"].append((case_name, why))
                continue  # no case.key: made again once ORT is there
            wdir = os.path.join(folder, "ort")
            os.makedirs(wdir)
            try:
                feeds = {n: ort_feed(n, inputs[n], wdir) for n in names}
            except ValueError as e:
                why = "no oracle: %s" % e
                write_file(os.path.join(folder, "skip.txt"), why)
                write_file(kfile, key)
                st["skipped"].append((case_name, why))
                continue
            jobs.append((suite, case_name, folder, key, {
                "model": os.path.join(folder, "model.onnx"), "inputs": feeds, "out_dir": wdir}))
        # cases that are gone
        for d in os.listdir(sdir):
            if d not in seen and not only:
                shutil.rmtree(os.path.join(sdir, d), ignore_errors=True)
    for d in os.listdir(outdir):  # suites that are gone
        p = os.path.join(outdir, d)
        if d not in stats and not only and os.path.isdir(p) and \
                any(x.startswith("test_") for x in os.listdir(p)):
            shutil.rmtree(p, ignore_errors=True)
    if jobs:
        jf = os.path.join(outdir, ".ort_jobs.json")
        write_file(jf, json.dumps({"ort": os.path.abspath(ort_dir), "jobs": [j[4] for j in jobs]}))
        p = subprocess.run(["node", os.path.join(HERE, "ort_batch.js"), jf],
                           capture_output=True, text=True, timeout=3600)
        if p.returncode:
            raise RuntimeError("ort_batch.js failed: %s" % (p.stderr or p.stdout).strip())
        for suite, case_name, folder, key, job in jobs:
            st = stats[suite]
            with open(os.path.join(job["out_dir"], "result.json")) as f:
                res = json.load(f)
            ddir = os.path.join(folder, "test_data_set_0")
            if "error" in res:
                why = "ONNX Runtime %s fails on it: %s" % (ORT_VERSION, res["error"][:300])
                write_file(os.path.join(folder, "skip.txt"), why)
                st["skipped"].append((case_name, why))
            else:
                for k, o in enumerate(res["outputs"]):
                    write_file(os.path.join(ddir, "output_%d.pb" % k),
                               to_proto(o["name"], ort_output(o)).SerializeToString())
                st["ort"] += 1
            shutil.rmtree(job["out_dir"], ignore_errors=True)
            write_file(os.path.join(folder, "case.key"), key)
    for suite, st in stats.items():
        log("make_corpus: %s: %d cases (%d written now), %d with ONNX Runtime's outputs, "
            "%d skipped" % (suite, st["cases"], st["fresh"], st["ort"], len(st["skipped"])))
        for n, why in st["skipped"]:
            log("  skip %s/test_%s: %s" % (suite, n, why))
    return [s for s, _ in suites]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--ort", help="folder holding node_modules/onnxruntime-node")
    ap.add_argument("--no-ort", help="ONNX Runtime is not available, for this reason")
    ap.add_argument("--only", help="make only cases whose SUITE/test_NAME holds this")
    a = ap.parse_args()
    if not a.ort and not a.no_ort:
        a.no_ort = "no --ort folder given"
    try:
        make(a.outdir, a.ort, a.no_ort, a.only)
    except RuntimeError as e:
        print("make_corpus: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
