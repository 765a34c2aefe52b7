#!/usr/bin/python3
"""surgeon extract straight from the file (graph/extract_stream.c) against
the loaded model (--in-memory, sg_model_extract): the reference.

Usage: extract_stream_test.py SURGEON [MODEL_DIR...]

For every model (Debian's libonnx-testdata, generated random graphs with
the features the file path must copy or refuse, and every .onnx under the
MODEL_DIRs: the real networks, the downloaded real models) a set of random
cuts, by tensor names (some typed on the command line) and by node names.
Each cut runs both ways and must give the same exit code, the same stdout
and stderr (but for the -v note) and, when it succeeds, the same model
(parsed and compared as protobuf messages). Malformed models (truncated and
corrupted copies, the loader's fuzz regressions) must fail the same way
with nothing written. The test also fails when the file path was taken for
too few of the successful cuts: agreement because every cut fell back
would prove nothing.
"""
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

S = sys.argv[1]
DIRS = sys.argv[2:]
HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = "/usr/share/libonnx-testdata/data"
failures = []
counts = {"cuts": 0, "ok": 0, "stream": 0, "bad": 0}
by_source = {}


def fail(what):
    failures.append(what)
    print("FAIL", what)


def run(model, out, args, stream):
    cmd = [S, "extract", model, "-o", out] + args + (["-v"] if stream else ["--in-memory"])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired:
        return None
    note = [l for l in p.stderr.splitlines() if l.startswith("surgeon extract: ")]
    err = [l for l in p.stderr.splitlines() if not l.startswith("surgeon extract: ")]
    return (p.returncode, p.stdout.replace(out, "OUT"), "\n".join(err),
            any("cut from the file" in l for l in note))


def differ(a, b):
    ta, tb = str(a).splitlines(), str(b).splitlines()
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x != y:
            return "line %d: %r vs %r" % (i + 1, x, y)
    return "lengths %d vs %d lines" % (len(ta), len(tb))


def one_cut(work, model, args, label, source, malformed=False):
    a_out, b_out = os.path.join(work, "stream.onnx"), os.path.join(work, "memory.onnx")
    for f in (a_out, b_out):
        if os.path.exists(f):
            os.remove(f)
    a, b = run(model, a_out, args, True), run(model, b_out, args, False)
    counts["cuts"] += 1
    if a is None or b is None:
        fail("%s: a run timed out (%s)" % (label, " ".join(args)))
        return
    what = "%s: extract %s" % (label, " ".join(args))
    if a[:3] != b[:3]:
        fail("%s: the two ways disagree\n  file:   rc %d %r %r\n  memory: rc %d %r %r" %
             (what, a[0], a[1][:300], a[2][:300], b[0], b[1][:300], b[2][:300]))
        return
    if a[0] != 0:
        if os.path.exists(a_out) or os.path.exists(b_out):
            fail("%s: failed (rc %d) but wrote its output" % (what, a[0]))
        if malformed:
            counts["bad"] += 1
        return
    counts["ok"] += 1
    src = by_source.setdefault(source, [0, 0])
    src[0] += 1
    if a[3]:
        counts["stream"] += 1
        src[1] += 1
    try:
        ma, mb = onnx.load(a_out), onnx.load(b_out)
    except Exception as e:  # noqa
        fail("%s: an output does not parse: %s" % (what, e))
        return
    if ma != mb:
        fail("%s: the models differ (%s)" % (what, differ(ma, mb)))


# ------------------------------------------------------------------ cuts

def graph_facts(m):
    g = m.graph
    inits = {i.name for i in g.initializer}
    producer = {}
    for k, n in enumerate(g.node):
        for o in n.output:
            if o:
                producer[o] = k
    return g, inits, producer


def ancestors(g, producer, names):
    seen, stack = set(), list(names)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        k = producer.get(v)
        if k is not None:
            stack.extend(i for i in g.node[k].input if i)
    return seen


def random_cuts(m, rng, n):
    """n argument lists: tensor cuts (closed with the graph inputs, some
    tensors typed) and node cuts."""
    g, inits, producer = graph_facts(m)
    outs = [o for nd in g.node for o in nd.output if o]
    if not outs:
        return []
    graph_ins = [i.name for i in g.input if i.name not in inits]
    cuts = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.65:
            chosen = rng.sample(outs, min(len(outs), rng.choice([1, 1, 2, 3])))
            anc = ancestors(g, producer, chosen) - set(chosen) - inits
            inner = sorted(v for v in anc if v in producer)
            ins = rng.sample(inner, min(len(inner), rng.choice([0, 0, 1, 2])))
            if rng.random() < 0.85:
                ins += [v for v in graph_ins if v in anc and v not in ins]
            items = []
            for v in ins:
                r = rng.random()
                items.append(v + (":float" if r < 0.15 else ":float:2,?" if r < 0.25 else ""))
            oitems = [v + (":float" if rng.random() < 0.1 else "") for v in chosen]
            args = (["--inputs", ";".join(items)] if items else []) + ["--outputs", ";".join(oitems)]
        else:
            named = [nd.name for nd in g.node if nd.name]
            if not named:
                continue
            end = rng.choice(named)
            args = ["--end-nodes", end]
            if rng.random() < 0.7:
                args += ["--start-nodes", rng.choice(named)]
        cuts.append(args)
    return cuts


# ------------------------------------------------------ generated models

def random_model(rng, seed):
    """A random graph with what the file path must copy or refuse: value_info
    typed, untyped and missing, initializers (as inputs under IR 3), Constant
    and Cast nodes, multi-output nodes, optional inputs left empty, custom
    domains, duplicate and empty node names, metadata, annotations,
    training info, doc strings, sometimes the nodes out of order or in a
    cycle."""
    f32 = TensorProto.FLOAT
    ir3 = rng.random() < 0.2
    inputs = [helper.make_tensor_value_info("x%d" % i, f32, [2, rng.choice([3, "n"])])
              for i in range(rng.randint(1, 3))]
    inits = [numpy_helper.from_array(np.full([3], i, np.float32), "w%d" % i)
             for i in range(rng.randint(0, 3))]
    avail = [v.name for v in inputs] + [t.name for t in inits]
    nodes, vinfo, made = [], [], []
    for k in range(rng.randint(2, 24)):
        name = rng.choice(["n%d" % k] * 8 + ["", "dup", "n%d" % max(0, k - 1)])
        out = "t%d" % k
        r = rng.random()
        a = rng.choice(avail)
        if r < 0.35:
            nd = helper.make_node(rng.choice(["Add", "Mul", "Sub"]), [a, rng.choice(avail)], [out])
        elif r < 0.55:
            nd = helper.make_node(rng.choice(["Relu", "Exp", "Neg", "Identity"]), [a], [out])
        elif r < 0.62:
            nd = helper.make_node("Cast", [a], [out], to=rng.choice([1, 6, 7, 10]))
        elif r < 0.68:
            nd = helper.make_node("Constant", [], [out],
                                  value=numpy_helper.from_array(np.ones([2], np.float32)))
        elif r < 0.75:
            o2 = out + "b"
            nd = helper.make_node("Split", [a], [out, o2], axis=0)
            made.append(o2)
        elif r < 0.80:
            nd = helper.make_node("Clip", [a, "", rng.choice(avail)], [out])
        elif r < 0.85:
            nd = helper.make_node("Shape", [a], [out])
        elif r < 0.92:
            nd = helper.make_node("FusedThing", [a], [out], domain="com.example")
        else:
            nd = helper.make_node("Concat", [a, rng.choice(avail), rng.choice(avail)], [out], axis=0)
        nd.name = name
        if rng.random() < 0.1:
            nd.doc_string = "node %d" % k
        nodes.append(nd)
        made.append(out)
        avail.append(out)
        r = rng.random()
        if r < 0.3:
            vinfo.append(helper.make_tensor_value_info(out, f32, None))
        elif r < 0.35:
            vi = onnx.ValueInfoProto()
            vi.name = out
            vinfo.append(vi)  # no type at all
        elif r < 0.38:
            vi = onnx.ValueInfoProto()
            vi.name = out
            vi.type.tensor_type.SetInParent()  # a tensor type without elem_type
            vinfo.append(vi)
    if rng.random() < 0.1:
        vinfo.append(helper.make_tensor_value_info("orphan", f32, [1]))
    outs = rng.sample(made, min(len(made), rng.randint(1, 2)))
    outputs = [helper.make_tensor_value_info(o, f32, None) for o in outs]
    r = rng.random()
    if r < 0.1 and len(nodes) > 2:
        nodes[0], nodes[-1] = nodes[-1], nodes[0]  # out of order
    elif r < 0.15 and len(nodes) > 2:
        nodes.append(nodes.pop(rng.randrange(len(nodes) - 1)))  # a converter's appended node
    elif r < 0.18 and len(nodes) > 2 and nodes[0].input:
        nodes[0].input[0] = nodes[-1].output[0]  # a cycle, when the last node depends on the first
    g = helper.make_graph(nodes, "g%d" % seed, inputs, outputs, inits, value_info=vinfo)
    if ir3:
        g.input.extend(helper.make_tensor_value_info(t.name, f32, [3]) for t in inits)
    if rng.random() < 0.3:
        ann = g.quantization_annotation.add()
        ann.tensor_name = rng.choice(made)
        kv = ann.quant_parameter_tensor_names.add()
        kv.key, kv.value = "SCALE_TENSOR", "s"
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]
    if rng.random() < 0.5:
        opsets.append(helper.make_opsetid("ai.onnx.ml", 3))
    m = helper.make_model(g, opset_imports=opsets, producer_name="gen", doc_string="seed %d" % seed)
    m.ir_version = 3 if ir3 else 8
    if rng.random() < 0.3:
        p = m.metadata_props.add()
        p.key, p.value = "author", "test"
    if rng.random() < 0.05:
        t = m.training_info.add()
        t.initialization.name = "init"
    return m


# --------------------------------------------------------- malformed

def corrupt(data, rng):
    b = bytearray(data)
    r = rng.random()
    if r < 0.4:
        return bytes(b[:rng.randint(1, max(1, len(b) - 1))])
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def main():
    work = tempfile.mkdtemp(prefix="sg_xstream_")
    rng = random.Random(20261202)
    try:
        # Generated models, and corrupted copies of some.
        for seed in range(160):
            m = random_model(rng, seed)
            path = os.path.join(work, "gen.onnx")
            onnx.save(m, path)
            for args in random_cuts(m, rng, 6):
                one_cut(work, path, args, "generated seed %d" % seed, "generated")
            if seed % 4 == 0:
                data = open(path, "rb").read()
                cuts = random_cuts(m, rng, 1) or [["--outputs", "t0"]]
                for i in range(4):
                    bad = os.path.join(work, "bad.onnx")
                    with open(bad, "wb") as f:
                        f.write(corrupt(data, rng))
                    one_cut(work, bad, cuts[0], "corrupted seed %d #%d" % (seed, i), "corrupted",
                            malformed=True)
        # The loader's fuzz regressions: malformed by construction.
        for path in sorted(glob.glob(os.path.join(HERE, "io", "fuzz_regressions", "*.onnx"))):
            one_cut(work, path, ["--outputs", "y"], os.path.basename(path), "regressions",
                    malformed=True)
        # Debian's testdata and the given folders.
        paths = sorted(glob.glob(TESTDATA + "/*/*/model.onnx"))
        for d in DIRS:
            paths += sorted(glob.glob(os.path.join(d, "**", "*.onnx"), recursive=True))
        for path in paths:
            if os.path.getsize(path) > 200 << 20:
                continue
            try:
                m = onnx.load(path, load_external_data=False)
            except Exception:  # noqa
                continue
            source = "testdata" if path.startswith(TESTDATA) else "models"
            n = 2 if source == "testdata" else 4
            for args in random_cuts(m, rng, n):
                one_cut(work, path, args, os.path.relpath(path, os.path.dirname(path) + "/../.."),
                        source)
        # The output guard: the model itself as the output.
        m = random_model(random.Random(1), 1)
        path = os.path.join(work, "self.onnx")
        onnx.save(m, path)
        before = open(path, "rb").read()
        a = run(path, path, ["--inputs", ";".join(i.name for i in m.graph.input),
                             "--outputs", m.graph.node[0].output[0]], True)
        if a[0] == 0 or open(path, "rb").read() != before or "refusing to write" not in a[2]:
            fail("extract MODEL -o MODEL: rc %d %r, model %s" %
                 (a[0], a[2], "kept" if open(path, "rb").read() == before else "changed"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d cuts: %d made (%d from the file), %d malformed inputs refused both ways" %
          (counts["cuts"], counts["ok"], counts["stream"], counts["bad"]))
    for src, (ok, stream) in sorted(by_source.items()):
        print("  %s: %d made, %d from the file" % (src, ok, stream))
    gen = by_source.get("generated", [0, 0])
    if gen[0] < 200 or gen[1] * 2 < gen[0]:
        fail("the file path made %d of %d generated cuts (want at least half of 200 or more)" %
             (gen[1], gen[0]))
    if counts["bad"] < 20:
        fail("only %d malformed inputs were refused" % counts["bad"])
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


main()
