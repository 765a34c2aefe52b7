#!/usr/bin/python3
"""`run --dump all` and `compare` inside If/Loop/Scan bodies (issue 12 part 7).

    dump_bodies_test.py SURGEON WORKDIR

A model with an If in the main graph, a Loop whose body starts with an If
(so that a new iteration begins with a nested owner) and holds a second one
on the iteration's parity, and a Scan, unnamed nodes everywhere. Checked
against numpy, which computes every body tensor of every iteration here:

  - the dump holds one file per body node per execution, named
    <owner>::<attribute>[<i>]::<node> (sg_dumpname.h; the names are worked
    out below from the rule, not read back), with the values numpy gives;
  - `compare` of the dump against itself compares every body row, and
    against a copy with one body tensor of iteration 1 changed names that
    execution as the first failing operator;
  - the end-to-end compare on the mock names a float16 overflow inside
    iteration 3 of a Loop body as the culprit, with the same names on the
    target side.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from html import unescape

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

S, WORK = sys.argv[1], sys.argv[2]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
failures = []


def vi(n, s, t=T.FLOAT):
    return h.make_tensor_value_info(n, t, s)


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def sh(*a):
    return subprocess.run([S] + list(a), capture_output=True, text=True, timeout=600)


def bodies_model():
    then_b = h.make_graph([h.make_node("Add", ["x", "one"], ["t1"]),
                           h.make_node("Mul", ["t1", "t1"], ["t2"], name="sq")],
                          "then", [], [vi("t2", [4])], [nh.from_array(np.float32(1), "one")])
    else_b = h.make_graph([h.make_node("Neg", ["x"], ["e1"])], "else", [], [vi("e1", [4])])
    first_then = h.make_graph([h.make_node("Mul", ["v", "two"], ["f1"])], "ft", [], [vi("f1", [4])],
                              [nh.from_array(np.float32(2), "two")])
    first_else = h.make_graph([h.make_node("Identity", ["v"], ["f2"])], "fe", [], [vi("f2", [4])])
    par_then = h.make_graph([h.make_node("Sub", ["f", "half"], ["p1"])], "pt", [], [vi("p1", [4])],
                            [nh.from_array(np.float32(0.5), "half")])
    par_else = h.make_graph([h.make_node("Add", ["f", "three"], ["p2"])], "pe", [], [vi("p2", [4])],
                            [nh.from_array(np.float32(3), "three")])
    body = h.make_graph([
        h.make_node("If", ["cond"], ["f"], then_branch=first_then, else_branch=first_else),
        h.make_node("Mod", ["i", "k2"], ["par"]),
        h.make_node("Equal", ["par", "k0"], ["even"]),
        h.make_node("If", ["even"], ["w"], then_branch=par_then, else_branch=par_else),
        h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
        h.make_node("Add", ["w", "fi"], ["v_out"]),
        h.make_node("Identity", ["cond"], ["cond_out"]),
        h.make_node("Identity", ["v_out"], ["scan"]),
    ], "body", [vi("i", [], T.INT64), vi("cond", [], T.BOOL), vi("v", [4])],
        [vi("cond_out", [], T.BOOL), vi("v_out", [4]), vi("scan", [4])],
        [nh.from_array(np.int64(2), "k2"), nh.from_array(np.int64(0), "k0")])
    scan_body = h.make_graph([h.make_node("Add", ["acc", "row"], ["acc_out"]),
                              h.make_node("Mul", ["acc_out", "acc_out"], ["sq_out"])],
                             "scan_body", [vi("acc", [4]), vi("row", [4])],
                             [vi("acc_out", [4]), vi("sq_out", [4])])
    g = h.make_graph([
        h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        h.make_node("Greater", ["s", "zero"], ["c"]),
        h.make_node("If", ["c"], ["y1"], then_branch=then_b, else_branch=else_b),
        h.make_node("Loop", ["trip", "", "y1"], ["y2", "scans"], body=body),
        h.make_node("Scan", ["y2", "scans"], ["acc_final", "sqs"], body=scan_body, num_scan_inputs=1),
        h.make_node("Relu", ["acc_final"], ["y"]),
    ], "g", [vi("x", [4])], [vi("y", [4]), vi("sqs", [3, 4])],
        [nh.from_array(np.float32(0), "zero"), nh.from_array(np.int64(3), "trip")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def expected(x):
    """{dump name: value} for every node output of one run, by numpy."""
    e = {}
    s = x.sum()
    e["ReduceSum_0"], e["Greater_1"] = s, s > 0
    t1 = x + 1
    e["If_2::then_branch::Add_0"], e["If_2::then_branch::sq"] = t1, t1 * t1
    v = t1 * t1
    e["If_2"] = v
    scans = []
    for i in range(3):
        p = "Loop_3::body[%d]::" % i
        f = v * 2
        e[p + "If_0::then_branch::Mul_0"], e[p + "If_0"] = f, f
        e[p + "Mod_1"], e[p + "Equal_2"] = np.int64(i % 2), i % 2 == 0
        w = f - 0.5 if i % 2 == 0 else f + 3
        e[p + "If_3::%s::%s_0" % (("then_branch", "Sub") if i % 2 == 0 else ("else_branch", "Add"))] = w
        e[p + "If_3"] = w
        e[p + "Cast_4"] = np.float32(i)
        v = w + i
        e[p + "Add_5"], e[p + "Identity_6"], e[p + "Identity_7"] = v, True, v
        scans.append(v)
    e["Loop_3"] = v  # output 0; output 1 below
    acc = v
    for i in range(3):
        p = "Scan_4::body[%d]::" % i
        acc = acc + scans[i]
        e[p + "Add_0"], e[p + "Mul_1"] = acc, acc * acc
    e["Scan_4"] = acc
    e["Relu_5"] = np.maximum(acc, 0)
    return e, np.stack(scans)


m = bodies_model()
model = os.path.join(WORK, "bodies.onnx")
onnx.save(m, model)
x = np.array([0.5, -1, 2, 0.25], np.float32)
np.save(os.path.join(WORK, "x.npy"), x)
dump = os.path.join(WORK, "dump")
p = sh("run", model, "-i", "x=" + os.path.join(WORK, "x.npy"), "-o", dump, "--dump", "all")
check(p.returncode == 0, "run --dump all exits 0 (%s)" % p.stderr.strip()[-200:])
man = json.load(open(os.path.join(dump, "manifest.json")))
want, scans = expected(x)
got = {}
for t in man["tensors"]:
    got.setdefault(t["node"], {})[t["output_index"]] = t
check(set(got) == set(want), "one dump per body node and execution, named by the rule: extra %s, missing %s"
      % (sorted(set(got) - set(want))[:4], sorted(set(want) - set(got))[:4]))
bad = []
for name, val in want.items():
    if name in got:
        arr = np.load(os.path.join(dump, got[name][0]["file"]))
        if arr.shape != np.shape(val) or not np.allclose(arr, val, rtol=1e-6):
            bad.append("%s: %s, numpy %s" % (name, arr, val))
check(not bad, "every dumped tensor equals numpy's (%s)" % "; ".join(bad[:3]))
check(np.allclose(np.load(os.path.join(dump, got["Loop_3"][1]["file"])), scans),
      "the Loop's scan output stacks the dumped iterations")
depths = {t["node"]: t["depth"] for t in man["tensors"]}
check(depths["Loop_3::body[2]::If_3::then_branch::Sub_0"] == 2 and depths["If_2"] == 0
      and depths["Scan_4::body[1]::Mul_1"] == 1, "manifest depth: 0 main graph, 1 and 2 in nested bodies")
check(all(not t["graph_output"] for t in man["tensors"] if t["depth"]), "no body tensor is a graph output")
# Files: names with '/' or '.' would be listed; these have none, so the file
# stem is the name itself.
check(all(t["file"].startswith(t["node"] + ".") for t in man["tensors"]), "file stems are the dump names")

# compare: the dump against itself compares every body row.
out = os.path.join(WORK, "self")
p = sh("compare", "-g", dump, "-t", dump, "--model", model, "-o", out, "-q")
r = json.load(open(os.path.join(out, "result.json")))
check(p.returncode == 0 and r["counts"]["compared"] == len(man["tensors"]),
      "compare of the dump with itself: exit %d, %d of %d rows compared"
      % (p.returncode, r["counts"]["compared"], len(man["tensors"])))
order = [row["GroundTruth"] for row in r["rows"]]
check(order.index("Loop_3::body[0]::If_0") < order.index("Loop_3::body[1]::If_0") < order.index("Loop_3")
      < order.index("Scan_4::body[0]::Add_0"), "rows in run order, a body's rows before its owner's")

# report.html: a long name is cut in the middle, so that its end (which
# tells body nodes apart) shows; the full name is the tooltip.
html = open(os.path.join(out, "report.html")).read()
cells = re.findall(r'<td class="name(?: gt)?" title="([^"]*)">(.*?)</td>', html)
long_ = [(t, v) for t, v in cells if len(t) > 24]
check(long_ and all(unescape(v).endswith(unescape(t)[-8:]) and "\u2026" in unescape(v) for t, v in long_),
      "long names in report.html keep their end (%d cut, e.g. %s)" % (len(long_), long_[:1]))

# One body tensor of iteration 1 changed: that execution is the culprit.
bent = os.path.join(WORK, "bent")
shutil.copytree(dump, bent)
f = os.path.join(bent, got["Loop_3::body[1]::Cast_4"][0]["file"])
np.save(f, np.float32(5.0))
out = os.path.join(WORK, "bent_cmp")
p = sh("compare", "-g", dump, "-t", bent, "--model", model, "-o", out, "-q")
r = json.load(open(os.path.join(out, "result.json")))
first = r["analysis"]["first_failing"] or {}
check(p.returncode == 0 and first.get("GroundTruth") == "Loop_3::body[1]::Cast_4" and first.get("cause") == "jump",
      "a wrong tensor in iteration 1 (not reaching the outputs: exit 0) is the first failing operator "
      "(exit %d, %s, cause %s)"
      % (p.returncode, first.get("GroundTruth"), first.get("cause")))

# End to end on the mock: float16 overflow of an Exp in iteration 3.
body = h.make_graph([
    h.make_node("Exp", ["v"], ["e"]),
    h.make_node("Add", ["v", "four"], ["v_out"]),
    h.make_node("Identity", ["cond"], ["cond_out"]),
    h.make_node("Mul", ["e", "half"], ["scan"]),
], "body", [vi("i", [], T.INT64), vi("cond", [], T.BOOL), vi("v", [4])],
    [vi("cond_out", [], T.BOOL), vi("v_out", [4]), vi("scan", [4])],
    [nh.from_array(np.float32(4), "four"), nh.from_array(np.float32(0.5), "half")])
g = h.make_graph([h.make_node("Loop", ["trip", "", "x"], ["y2", "scans"], body=body, name="loop"),
                  h.make_node("ReduceSum", ["scans"], ["y"], keepdims=0)],
                 "g", [vi("x", [4])], [vi("y", [])], [nh.from_array(np.int64(4), "trip")])
m2 = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m2.ir_version = 8
model2 = os.path.join(WORK, "loop_exp.onnx")
onnx.save(m2, model2)
np.save(os.path.join(WORK, "x2.npy"), np.array([3, 2.5, 1, 0], np.float32))  # exp(3 + 12) > 65504
out = os.path.join(WORK, "e2e")
p = sh("compare", model2, "--target", "mock", "--soc", "Ascend910B1", "-i",
       "x=" + os.path.join(WORK, "x2.npy"), "-o", out, "-q")
r = json.load(open(os.path.join(out, "result.json")))
first = r["analysis"]["first_failing"] or {}
check(p.returncode == 3 and first.get("NPUDump") == "loop::body[3]::Exp_0" and first.get("cause") == "overflow",
      "mock: the Exp of iteration 3 overflows and is the culprit (exit %d, %s, cause %s)"
      % (p.returncode, first.get("NPUDump"), first.get("cause")))
rows = {row["NPUDump"]: row for row in r["rows"]}
check(all(("loop::body[%d]::Exp_0" % i) in rows and rows["loop::body[%d]::Exp_0" % i]["GroundTruth"]
          == "loop::body[%d]::Exp_0" % i for i in range(4)),
      "target and golden rows of every iteration meet under the same names")
r2 = rows["loop::body[2]::Exp_0"]
check(r2["OverFlow"] in ("NO", False) and "within float16 rounding" in r2["CompareFailReason"],
      "iteration 2 (exp(11) < 65504) does not overflow, its RMSE is float16's rounding (%s)"
      % r2["CompareFailReason"])
tfiles = os.listdir(os.path.join(out, "target"))
check(any(n.startswith("Exp.loop::body[3]::Exp_0.") for n in tfiles), "the target's device dump names carry the iteration")

print("dump_bodies: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
