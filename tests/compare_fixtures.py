#!/usr/bin/python3
"""Dump folders for the comparison tests, made deterministically with numpy.

Usage: compare_fixtures.py WHAT OUTDIR SOURCE_DIR

The golden side is an fp32 run of a small model written the msit ONNX way
(<node>.<output>.<timestamp>.npy, '.' and '/' of node names as '_'),
nested as msit nests it (<out>/<timestamp>/onnx/). The target side is
either another ONNX-form run or device dumps
(<OpType>.<OpName>.<task>.<stream>.<timestamp>.output.<i>.npy) with an
`atc --mode=1`-style JSON map. The model runs are numpy code written node by
node here; the target emulates float16 (every op rounds to float16, so Exp
overflows to inf and inf * 0 gives NaN, as on the device).

WHAT:
  overflow   models/exp_overflow.onnx, inputs that overflow float16:
             golden/ (fp32), target/ (fp16, ONNX form), target_partial/ (the
             same without Sub_1 and Sub_2), device/ (fp16, device
             form) with map_plain.json (one op per node) and map_fused.json
             (Exp..Mul_6 fused into one op, plus an NPU-only TransData)
  identical  the same model with safe inputs: golden/ and target/ equal
  badexp     fp32 target whose Exp is 8% off: device/ + map_fused.json (a
             fused op hides the culprit, no overflow) and target/ (plain)
  masked     fp32 target whose Exp is off only where Mul_6 masks it away:
             golden/, target/ (an intermediate fails, the output passes)
  oddnames   odd.onnx whose node names hold '/', ':', '.', spaces, quotes,
             braces and a comma, plus one 300-character name (shortened,
             listed in mapping.csv): golden/, target/, device/
  badinput   shape mismatch and a truncated .npy among good dumps, an empty
             folder, a folder of non-dump .npy files, a folder with two runs,
             maps naming unknown nodes or holding bad JSON
"""
import json
import os
import sys

import numpy as np

TS0 = 1700000000000000


def sanitize(name):
    return name.replace(".", "_").replace("/", "_")


class Dumper:
    """Writes one run's dumps in the ONNX or the device form."""

    def __init__(self, folder, form="onnx", mapping=None):
        self.folder = folder
        self.form = form
        self.ts = TS0
        self.mapping = mapping  # {file name: node name} for shortened names
        os.makedirs(folder, exist_ok=True)

    def dump(self, name, op_type, outputs, file_name=None):
        for i, a in enumerate(outputs):
            self.ts += 7
            if file_name:
                fname = file_name % (i, self.ts)
                self.mapping[fname] = name
            elif self.form == "onnx":
                fname = "%s.%d.%d.npy" % (sanitize(name), i, self.ts)
            else:
                fname = "%s.%s.%d.%d.%d.output.%d.npy" % (op_type, name.replace("/", "_"), 3,
                                                          1, self.ts, i)
            np.save(os.path.join(self.folder, fname), a)

    def close(self):
        if self.mapping:
            import csv
            with open(os.path.join(self.folder, "mapping.csv"), "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                for k, v in self.mapping.items():
                    w.writerow([k, v])


# ------------------------------------------------------------ exp_overflow

EXP_NODES = [  # name, op type, output values of run() in order
    ("Mul_0", "Mul"), ("Sub_1", "Sub"), ("Sub_2", "Sub"), ("Exp_3", "Exp"),
    ("Less_4", "Less"), ("Cast_5", "Cast"), ("Mul_6", "Mul"), ("Sub_7", "Sub"),
    ("Mul_8", "Mul"), ("Add_9", "Add"),
]


def run_exp_overflow(x, dtype, exp_scale=1.0):
    """models/exp_overflow.onnx node by node in `dtype` (rounded after each op)."""
    f = lambda v: np.asarray(v).astype(dtype)
    with np.errstate(all="ignore"):
        scaled = f(f(x) * f(4.0))
        sub1 = f(scaled - f(0.5))
        t = f(sub1 - f(0.25))
        e = f(np.exp(t) * (exp_scale(t) if callable(exp_scale) else exp_scale))
        m = t < f(5.0)
        mf = f(m)
        a = f(e * mf)
        inv = f(f(1.0) - mf)
        b = f(t * inv)
        y = f(a + b)
    return [scaled, sub1, t, e, m, mf, a, inv, b, y]


def write_run(dumper, values, skip=()):
    for (name, op), v in zip(EXP_NODES, values):
        if name not in skip:
            dumper.dump(name, op, [v])
    dumper.close()


def atc_op(name, op_type, orig=None, passes=None, ub=None):
    attr = []
    if orig is not None:
        attr.append({"key": "_datadump_original_op_names",
                     "value": {"list": {"val_type": 1, "s": orig}}})
    if passes:
        attr.append({"key": "pass_name", "value": {"list": {"s": passes}}})
    if ub:
        attr.append({"key": "pass_name_ub", "value": {"s": ub}})
    return {"name": name, "type": op_type, "input": [], "attr": attr,
            "output_desc": [{"dtype": "DT_FLOAT16", "attr": []}]}


def write_map(path, ops):
    doc = {"name": "exp_overflow", "graph": [{"name": "graph", "op": ops}]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


FUSED = ["Exp_3", "Less_4", "Cast_5", "Mul_6"]


def exp_maps(out):
    plain = [atc_op("x", "Data")] + [atc_op(n, t, [n]) for n, t in EXP_NODES]
    write_map(os.path.join(out, "map_plain.json"), plain)
    fused = [atc_op("x", "Data"), atc_op("trans_TransData_0", "TransData", [])]
    for n, t in EXP_NODES:
        if n == "Exp_3":
            fused.append(atc_op("fused/Exp_3_Mul_6", "FusedExpMul", FUSED, [],
                                "AutomaticUbFusion"))
        elif n not in FUSED:
            fused.append(atc_op(n, t, [n]))
    write_map(os.path.join(out, "map_fused.json"), fused)


def write_fused_device(folder, values):
    """Device dumps of the fused compilation: the fused op dumps Mul_6's output."""
    d = Dumper(folder, "device")
    d.dump("trans_TransData_0", "TransData", [values[0]])
    for (name, op), v in zip(EXP_NODES, values):
        if name == "Exp_3":
            d.dump("fused/Exp_3_Mul_6", "FusedExpMul", [values[6]])
        elif name not in FUSED:
            d.dump(name, op, [v])
    d.close()


def overflow(out):
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 5, (1, 4, 16)).astype(np.float32)
    gold = run_exp_overflow(x, np.float32)
    half = run_exp_overflow(x, np.float16)
    assert np.isinf(half[3]).any() and np.isfinite(gold[3]).all()
    assert np.isnan(half[9]).any() and np.isfinite(gold[9]).all()
    write_run(Dumper(os.path.join(out, "golden", "20240101120000", "onnx")), gold)
    write_run(Dumper(os.path.join(out, "target")), half)
    write_run(Dumper(os.path.join(out, "target_partial")), half, skip=("Sub_1", "Sub_2"))
    write_run(Dumper(os.path.join(out, "device"), "device"), half)
    write_fused_device(os.path.join(out, "device_fused"), half)
    exp_maps(out)


def identical(out):
    rng = np.random.default_rng(8)
    x = rng.uniform(0, 1, (1, 4, 16)).astype(np.float32)
    gold = run_exp_overflow(x, np.float32)
    write_run(Dumper(os.path.join(out, "golden")), gold)
    write_run(Dumper(os.path.join(out, "target")), [v.copy() for v in gold])


def masked(out):
    """Exp is 10% off only where its result is masked away (t >= 5): the
    intermediate fails, the network output does not."""
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 5, (1, 4, 16)).astype(np.float32)
    gold = run_exp_overflow(x, np.float32)
    bad = run_exp_overflow(x, np.float32, exp_scale=lambda t: np.where(t >= 5, 1.1, 1.0))
    assert (bad[9] == gold[9]).all() and not (bad[3] == gold[3]).all()
    write_run(Dumper(os.path.join(out, "golden")), gold)
    write_run(Dumper(os.path.join(out, "target")), bad)


def badexp(out):
    rng = np.random.default_rng(9)
    x = rng.uniform(0, 1, (1, 4, 16)).astype(np.float32)
    gold = run_exp_overflow(x, np.float32)
    bad = run_exp_overflow(x, np.float32, exp_scale=1.08)
    write_run(Dumper(os.path.join(out, "golden")), gold)
    write_run(Dumper(os.path.join(out, "target")), bad)
    write_fused_device(os.path.join(out, "device_fused"), bad)
    exp_maps(out)


# ---------------------------------------------------------------- oddnames

LONG = "encoder/" + "block_with_a_long_name/" * 13 + "Relu"  # > 255 characters
ODD = ["input/proj:0", "has space", 'quote"d', "{brace}", "a.b/c", "comma,name", LONG]


def oddnames(out, source):
    import onnx
    from onnx import TensorProto, helper
    assert len(LONG) > 255
    nodes = []
    prev = "x"
    for i, name in enumerate(ODD):
        op = ["Relu", "Neg", "Abs", "Relu", "Neg", "Abs", "Relu"][i]
        nodes.append(helper.make_node(op, [prev], ["v%d" % i], name=name))
        prev = "v%d" % i
    g = helper.make_graph(nodes, "odd", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [2, 3])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, "odd.onnx"))
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3) + 0.5
    vals = []
    v = x
    for i in range(len(ODD)):
        v = [np.maximum(v, 0), -v, np.abs(v)][i % 3].astype(np.float32)
        vals.append(v)
    for side, scale in (("golden", 1.0), ("target", 1.0001)):
        d = Dumper(os.path.join(out, side), mapping={})
        for name, v in zip(ODD, vals):
            if name == LONG:
                d.dump(name, "Relu", [v * np.float32(scale)],
                       file_name=sanitize(name)[:200] + "_%s" % side + ".%d.%d.npy")
            else:
                d.dump(name, "Relu", [v * np.float32(scale)])
        d.close()
    d = Dumper(os.path.join(out, "device"), "device")
    for name, v in zip(ODD, vals):
        if name != LONG:  # device names have no mapping.csv
            d.dump(name, "Relu", [v * np.float32(1.0001)])
    d.close()
    with open(os.path.join(out, "names.json"), "w") as f:
        json.dump(ODD, f)


# ---------------------------------------------------------------- badinput

def badinput(out, source):
    import onnx
    from onnx import TensorProto, helper
    names = ["first", "reshaped", "squeezable", "truncated", "last"]
    nodes = [helper.make_node("Relu", ["x" if i == 0 else "v%d" % (i - 1)], ["v%d" % i],
                              name=n) for i, n in enumerate(names)]
    gr = helper.make_graph(nodes, "bad", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "v4", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(gr, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, "bad.onnx"))
    rng = np.random.default_rng(10)
    g = os.path.join(out, "golden")
    t = os.path.join(out, "target")
    gd, td = Dumper(g), Dumper(t)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    gd.dump("first", "Relu", [a])
    td.dump("first", "Relu", [a])
    gd.dump("reshaped", "Relu", [a])
    td.dump("reshaped", "Relu", [a.reshape(3, 2).T.copy().reshape(3, 2)])  # [3,2] vs [2,3]
    gd.dump("squeezable", "Relu", [a.reshape(1, 2, 3)])
    td.dump("squeezable", "Relu", [a])  # [2,3] vs [1,2,3]: the same tensor
    gd.dump("truncated", "Relu", [a])
    td.dump("truncated", "Relu", [a])
    gd.dump("last", "Relu", [a * 2])
    td.dump("last", "Relu", [a * 2])
    # Cut the target's "truncated" dump in the middle of its data.
    for f in os.listdir(t):
        if f.startswith("truncated."):
            p = os.path.join(t, f)
            data = open(p, "rb").read()
            open(p, "wb").write(data[:len(data) - 10])
    os.makedirs(os.path.join(out, "empty"), exist_ok=True)
    nd = os.path.join(out, "nondump")
    os.makedirs(nd, exist_ok=True)
    np.save(os.path.join(nd, "weights.npy"), a)
    np.save(os.path.join(nd, "features_v2.npy"), a)
    two = Dumper(os.path.join(out, "tworuns"))
    two.dump("first", "Relu", [a])
    two.dump("first", "Relu", [a])
    write_map(os.path.join(out, "map_unknown.json"),
              [atc_op("first", "Relu", ["first"]), atc_op("ghost", "Relu", ["NoSuchNode"])])
    with open(os.path.join(out, "map_broken.json"), "w") as f:
        f.write('{"graph": [{"op": [\n  {"name": "first", "type": "Relu",}\n]}]}\n')
    with open(os.path.join(out, "map_wrongtype.json"), "w") as f:
        f.write('{"graph": [{"op": [{"name": "first", "attr": [\n'
                '  {"key": "_datadump_original_op_names", "value": {"list": {"s": [1, 2]}}}'
                ']}]}]}\n')


def main():
    what, out, source = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    if what == "overflow":
        overflow(out)
    elif what == "identical":
        identical(out)
    elif what == "masked":
        masked(out)
    elif what == "badexp":
        badexp(out)
    elif what == "oddnames":
        oddnames(out, source)
    elif what == "badinput":
        badinput(out, source)
    else:
        sys.exit("unknown fixture " + what)


if __name__ == "__main__":
    main()
