#!/usr/bin/python3
"""Shape inference against onnx and against the runtime (ctest `shapes_*`).

    shapes_test.py SURGEON [--nets DIR] [--flat DIR] [--corpus] [--strip] [--known FILE] [--limit N]

For every model (the libonnx-testdata corpus with --corpus, the real
networks under --nets DIR/*/model.onnx):

1. `surgeon optimize MODEL --pass infer-shapes` writes every inferred shape
   into value_info. With --strip the recorded output and value_info shapes
   are dropped first (from the model both tools infer), so what is compared
   is inference alone, not shapes the file already had.
2. Parity: python3-onnx's onnx.shape_inference.infer_shapes(strict_mode=True)
   on the original model. Wherever onnx gives a value a type, surgeon must
   give the same element type and rank, the same number where onnx has a
   number, and the same name (or a number) where onnx has a symbol of the
   graph inputs; other symbols (onnx's fresh "unk__N", names only recorded
   in value_info or outputs) stand for sizes it does not know. A number or a shape where
   onnx has none is counted as "surgeon knows more".
3. Runtime: `surgeon run --dump all` on the model's test_data_set_0 inputs;
   every tensor's shape in manifest.json must agree with the inferred one
   (rank, every number; a symbol stands for one size throughout a run);
   a model without test data whose inputs are static runs on --random 0.

Mismatches fail the test unless listed in --known ("MODEL: reason", one a
line, for differences that are onnx's, e.g. an older rule), which must not
go stale: a listed model that now agrees fails too. Prints one line per
model with a mismatch, one per model where surgeon knows more (with
examples), and totals; exit 1 on any failure, 77 when nothing
can be checked (saying why).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import shape_inference

DATA = "/usr/share/libonnx-testdata/data"


def types_of(graph, out, prefix=""):
    """name -> (elem_type, dims or None) for every typed value of graph and
    its subgraphs; dims entries are int, str (a symbol) or None."""
    for vi in list(graph.value_info) + list(graph.output) + list(graph.input):
        t = vi.type
        if t.WhichOneof("value") != "tensor_type":
            continue
        tt = t.tensor_type
        dims = None
        if tt.HasField("shape"):
            dims = []
            for d in tt.shape.dim:
                w = d.WhichOneof("value")
                dims.append(d.dim_value if w == "dim_value" else d.dim_param if w == "dim_param" else None)
        out.setdefault(vi.name, (tt.elem_type, dims))
    for n in graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                types_of(a.g, out)
            for g in a.graphs:
                types_of(g, out)
    return out


def produced(graph, out):
    for n in graph.node:
        out.update(o for o in n.output if o)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                produced(a.g, out)
            for g in a.graphs:
                produced(g, out)
    return out


def parity(orig, ours, names):
    """(problems, more): where onnx knows and surgeon differs or knows less,
    and how many dims or shapes surgeon knows beyond onnx."""
    try:
        inferred = shape_inference.infer_shapes(orig, strict_mode=True)
    except Exception as e:  # onnx refuses the model: nothing to compare
        return None, str(e).splitlines()[0][:160] if str(e) else type(e).__name__
    theirs = types_of(inferred.graph, {})
    input_syms = {d.dim_param for i in orig.graph.input
                  for d in i.type.tensor_type.shape.dim if d.dim_param}
    problems, more = [], []
    for name in sorted(names):
        mine = ours.get(name)
        want = theirs.get(name)
        if want is None or (want[0] == 0 and want[1] is None):
            if mine is not None and mine[1] is not None:
                more.append("%s: onnx nothing, surgeon %s" % (name, fmt(mine)))
            continue
        if mine is None:
            problems.append("%s: onnx %s, surgeon nothing" % (name, fmt(want)))
            continue
        if want[0] and mine[0] != want[0]:
            problems.append("%s: element type onnx %d, surgeon %d" % (name, want[0], mine[0]))
            continue
        if want[1] is None:
            if mine[1] is not None:
                more.append("%s: onnx %s, surgeon %s" % (name, fmt(want), fmt(mine)))
            continue
        if mine[1] is None or len(mine[1]) != len(want[1]):
            problems.append("%s: onnx %s, surgeon %s" % (name, fmt(want), fmt(mine)))
            continue
        knows_more = False
        for a, b in zip(mine[1], want[1]):
            if isinstance(b, int):
                if a != b:
                    problems.append("%s: onnx %s, surgeon %s" % (name, fmt(want), fmt(mine)))
                    break
            elif isinstance(b, str) and b in input_syms:
                if isinstance(a, int):
                    knows_more = True
                elif a != b:
                    problems.append("%s: onnx %s, surgeon %s" % (name, fmt(want), fmt(mine)))
                    break
            elif isinstance(a, int):
                knows_more = True
        if knows_more:
            more.append("%s: onnx %s, surgeon %s" % (name, fmt(want), fmt(mine)))
    return problems, more


def fmt(t):
    if t is None:
        return "nothing"
    dims = "(rank unknown)" if t[1] is None else "[%s]" % ",".join(
        "?" if d is None else ("'%s'" % d if isinstance(d, str) else str(d)) for d in t[1])
    return "%s%s" % (onnx.TensorProto.DataType.Name(t[0]) if t[0] else "?", dims)


def runtime_check(surgeon, model_path, model, ours, tmp):
    """(problems, checked) against the shapes of a run, or (None, reason)."""
    case = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    files = sorted(glob.glob(os.path.join(case, "input_*.pb")),
                   key=lambda p: int(os.path.basename(p)[6:-3]))
    out = os.path.join(tmp, "run")
    cmd = [surgeon, "run", model_path, "-o", out, "--dump", "all"]
    if files and len(files) == len(inputs):
        for name, f in zip(inputs, files):
            cmd += ["-i", "%s=%s" % (name, f)]
    elif all(i.name in inits or (i.type.tensor_type.HasField("shape") and all(
            d.HasField("dim_value") for d in i.type.tensor_type.shape.dim)) for i in model.graph.input):
        cmd += ["--random", "0"]  # static inputs: random data has the shapes that count
    else:
        return None, "no test_data_set_0 inputs and inputs not static"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return None, "the runtime does not run it: %s" % (r.stderr.strip().splitlines() or ["?"])[-1][:120]
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    problems, checked, sizes = [], 0, {}
    for t in man.get("tensors", []):
        name, shape = t.get("value"), t.get("shape")
        mine = ours.get(name)
        if mine is None or mine[1] is None or shape is None:
            continue
        checked += 1
        if len(mine[1]) != len(shape):
            problems.append("%s: inferred %s, run %s" % (name, fmt(mine), shape))
            continue
        for a, b in zip(mine[1], shape):
            if isinstance(a, int) and a != b:
                problems.append("%s: inferred %s, run %s" % (name, fmt(mine), shape))
                break
            if isinstance(a, str):
                if sizes.setdefault(a, b) != b:
                    problems.append("%s: symbol '%s' is %d here, %d elsewhere in the run" %
                                    (name, a, b, sizes[a]))
                    break
    return problems, checked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("surgeon")
    ap.add_argument("--nets")
    ap.add_argument("--flat", help="a folder of *.onnx models")
    ap.add_argument("--corpus", action="store_true")
    ap.add_argument("--known")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--strip", action="store_true",
                    help="drop the recorded output and value_info shapes before inferring")
    args = ap.parse_args()

    models = []
    if args.corpus:
        if not os.path.isdir(DATA):
            print("SKIP: %s is missing (install libonnx-testdata)" % DATA)
            return 77
        for f in sorted(os.listdir(DATA)):
            models += sorted(glob.glob(os.path.join(DATA, f, "*", "model.onnx")))
    if args.nets:
        models += sorted(glob.glob(os.path.join(args.nets, "*", "model.onnx")))
    if args.flat:
        models += sorted(glob.glob(os.path.join(args.flat, "*.onnx")))
    if args.limit:
        models = models[:args.limit]
    if not models:
        print("SKIP: no models found (%s)" % (args.nets or args.flat or DATA))
        return 77
    known = {}
    if args.known and os.path.exists(args.known):
        with open(args.known) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    k, _, why = line.partition(":")
                    known[k.strip()] = why.strip()

    tot = dict(models=0, parity=0, onnx_refused=0, more=0, run=0, tensors=0, failed=0, known=0)
    for path in models:
        label = os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.dirname(path))))
        label = os.path.dirname(label) if os.path.basename(path) == "model.onnx" else os.path.basename(path)
        tot["models"] += 1
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "shaped.onnx")
            src = path
            if args.strip:
                # The recorded output and value_info shapes dropped: what is
                # compared and checked against the run is inference's alone.
                stripped = onnx.load(path)
                for o in list(stripped.graph.output) + list(stripped.graph.value_info):
                    if o.type.HasField("tensor_type"):
                        o.type.tensor_type.ClearField("shape")
                src = os.path.join(tmp, "stripped.onnx")
                onnx.save(stripped, src)
            r = subprocess.run([args.surgeon, "optimize", src, "-o", out, "--pass", "infer-shapes"],
                               capture_output=True, text=True, timeout=600)
            crashed = any(k in r.stderr for k in ("runtime error:", "Sanitizer", "ABORTING"))
            if r.returncode not in (0, 3) or crashed:
                if crashed or r.returncode != 1:
                    print("FAIL %s: infer-shapes exit %d: %s" % (label, r.returncode, r.stderr.strip()[-300:]))
                    tot["failed"] += 1
                else:
                    print("skip %s: surgeon refuses the model: %s" % (label, r.stderr.strip().splitlines()[-1][:160]))
                continue
            orig = onnx.load(path)
            shaped = onnx.load(out)
            ours = types_of(shaped.graph, {})
            names = produced(orig.graph, set())
            problems, more = parity(onnx.load(src), ours, names)
            if problems is None:
                tot["onnx_refused"] += 1
                problems = []
            else:
                tot["parity"] += 1
                tot["more"] += len(more)
                if more:
                    print("more %s: surgeon knows %d shapes or dims onnx does not, e.g. %s" % (
                        label, len(more), "; ".join(more[:2])))
            rp, checked = runtime_check(args.surgeon, path, orig, ours, tmp)
            if rp is not None:
                tot["run"] += 1
                tot["tensors"] += checked
                problems += ["runtime: " + p for p in rp]
            bad = bool(problems)
            if label in known:
                if bad:
                    tot["known"] += 1
                    continue
                print("FAIL %s: listed as known (%s) but now agrees: remove it" % (label, known[label]))
                tot["failed"] += 1
                continue
            if bad:
                tot["failed"] += 1
                print("FAIL %s: %d mismatches" % (label, len(problems)))
                for p in problems[:6]:
                    print("    " + p)
    print("%(models)d models: %(parity)d compared with onnx (%(onnx_refused)d refused by onnx's "
          "strict mode), %(more)d values whose shape surgeon knows beyond onnx; %(run)d run, "
          "%(tensors)d tensor shapes checked against the run; %(known)d known differences; "
          "%(failed)d failed" % tot)
    return 1 if tot["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
