#!/usr/bin/python3
"""surgeon bisect end to end (issue 14, parts 5, 7 and 8).

Usage: bisect_test.py SURGEON SOURCE_DIR

- a planted culprit found in the stated number of target runs: the seed's
  Exp overflow on the mock target (float16), and a cmd: target script
  (tests/bisect_target.py) that perturbs one named node of a generated
  model, in bisect mode (at most ceil(log2 N) + 1 runs, counted by the
  script itself) and linear mode;
- every step kept under OUT with bisect.json, the culprit's single-op
  case passing `surgeon run --case`, the reproduce commands running;
- bad input: unknown targets, commands without placeholders, a command
  that fails (at the first step and at a later one), hangs past --timeout
  or writes nothing: exit 1 naming the step, earlier steps kept, no
  half-written step folder; a foreign OUT left alone; usage errors exit 2.
"""
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

S, SRC = sys.argv[1], sys.argv[2]
PY = "/usr/bin/python3"
SCRIPT = os.path.join(SRC, "tests", "bisect_target.py")
EXP = os.path.join(SRC, "models", "exp_overflow.onnx")
failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print("FAIL", what)


def sg(*args, expect=0, env=None):
    t = time.time()
    p = subprocess.run([S] + [str(a) for a in args], capture_output=True, text=True, env=env)
    p.seconds = time.time() - t
    if expect is not None and p.returncode != expect:
        failures.append("exit %d (want %d): surgeon %s\n%s%s" %
                        (p.returncode, expect, " ".join(map(str, args)), p.stdout, p.stderr))
        print("FAIL", failures[-1])
    return p


def chain_model(path, n):
    """n nodes: a chain of Add/Mul/Tanh/Sub with a side branch that joins
    again, so that cuts cross more than one tensor."""
    nodes, inits = [], []
    prev, side = "x", None
    for i in range(n):
        name, out = "n%d" % i, "t%d" % i
        kind = i % 4
        if i == 3:
            side = prev
        if i == n - 2 and side:
            nodes.append(helper.make_node("Add", [prev, side], [out], name=name))
        elif kind == 0:
            inits.append(numpy_helper.from_array(np.full((2, 8), 0.25, np.float32), "c%d" % i))
            nodes.append(helper.make_node("Add", [prev, "c%d" % i], [out], name=name))
        elif kind == 1:
            inits.append(numpy_helper.from_array(np.full((2, 8), 0.9, np.float32), "c%d" % i))
            nodes.append(helper.make_node("Mul", [prev, "c%d" % i], [out], name=name))
        elif kind == 2:
            nodes.append(helper.make_node("Tanh", [prev], [out], name=name))
        else:
            inits.append(numpy_helper.from_array(np.full((2, 8), 0.1, np.float32), "c%d" % i))
            nodes.append(helper.make_node("Sub", [prev, "c%d" % i], [out], name=name))
        prev = out
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def runs(log):
    return len(open(log).read().splitlines()) if os.path.exists(log) else 0


def target(node, behaviour=""):
    return "cmd:%s %s %s {model} {inputs} {out} %s %s" % (PY, SCRIPT, S, node, behaviour)


def main():
    work = tempfile.mkdtemp(prefix="bisect_test.")
    os.chdir(work)
    env = dict(os.environ)

    # --- 1. the mock target: the seed's Exp overflow in float16 ----------
    mock = ["--target", "mock", "--soc", "Ascend910B1", "--precision", "force_fp16"]
    p = sg("bisect", EXP, *mock, "--random", "1", "--range", "0,5", "-o", "m1", expect=3)
    r = json.load(open("m1/bisect.json"))
    n = r["nodes"]
    check(n == 10, "exp_overflow has 10 nodes, not %d" % n)
    check(r["culprit"] and r["culprit"]["node"] == "Exp_3",
          "mock culprit is Exp_3, not %s" % r["culprit"])
    check(r["target_runs"] <= math.ceil(math.log2(n)) + 1,
          "mock: %d target runs > ceil(log2 %d) + 1" % (r["target_runs"], n))
    check(len(r["steps"]) == r["target_runs"], "one step per target run")
    check("culprit: node 4 of 10, 'Exp_3' (Exp)" in p.stdout, "culprit line:\n" + p.stdout)
    for s in r["steps"]:
        check(os.path.isdir(s["dir"]), "step folder kept: %s" % s["dir"])
        check(("step %d:" % s["step"]) in p.stdout, "step %d printed" % s["step"])
    check(r["steps"][0]["verdict"] == "FAIL" and r["steps"][0]["prefix"] == n,
          "step 0 is the full model and fails")
    check(not [x for x in os.listdir("m1") if x.endswith(".tmp")], "no temporary step left")
    # Every verdict agrees with the culprit: prefixes ending before it pass.
    for s in r["steps"][1:]:
        check((s["verdict"] == "FAIL") == (s["prefix"] >= 4),
              "step %d (prefix %d) verdict %s" % (s["step"], s["prefix"], s["verdict"]))
    case = r["culprit"]["case"]
    onnx.checker.check_model(onnx.load(os.path.join(case, "model.onnx")))
    check([x.op_type for x in onnx.load(os.path.join(case, "model.onnx")).graph.node] == ["Exp"],
          "the case holds the Exp alone")
    # The reproduce commands run: the bisection again on the saved inputs
    # (same culprit), the case on the reference (passes), the case on the
    # target (fails: an overflow).
    rep = r["reproduce"]
    check(len(rep) == 3, "three reproduce commands: %s" % rep)
    again = subprocess.run([S] + shlex.split(rep[0])[1:], capture_output=True, text=True)
    check(again.returncode == 3 and "'Exp_3' (Exp)" in again.stdout,
          "reproduce bisect: %d %s%s" % (again.returncode, again.stdout, again.stderr))
    check(open("m1/inputs/x.npy", "rb").read() == open("m1/inputs/x.npy", "rb").read(), "inputs kept")
    rc = subprocess.run([S] + shlex.split(rep[1])[1:], capture_output=True, text=True)
    check(rc.returncode == 0 and "PASS" in rc.stdout, "case passes on the reference: " + rc.stdout)
    rc = subprocess.run([S] + shlex.split(rep[2])[1:], capture_output=True, text=True)
    check(rc.returncode == 3 and "cause: overflow" in rc.stdout,
          "case fails on the mock: %d %s%s" % (rc.returncode, rc.stdout, rc.stderr))
    # float32 on the mock: nothing to find, one target run.
    p = sg("bisect", EXP, "--target", "mock", "--soc", "Ascend910B1", "--precision", "force_fp32",
           "--random", "1", "--range", "0,5", "-o", "m2", expect=0)
    r = json.load(open("m2/bisect.json"))
    check(r["target_runs"] == 1 and r["culprit"] is None and "nothing to bisect" in p.stdout,
          "float32 passes in one run: " + p.stdout)

    # --- 2. a cmd: target that perturbs one named node ----------------------
    for n_nodes, culprit in ((20, 13), (33, 0), (33, 32), (7, 5)):
        path = "chain%d.onnx" % n_nodes
        chain_model(path, n_nodes)
        for mode in ("bisect", "linear"):
            log = os.path.abspath("runs_%d_%d_%s.log" % (n_nodes, culprit, mode))
            env["BISECT_TARGET_LOG"] = log
            out = "c_%d_%d_%s" % (n_nodes, culprit, mode)
            p = sg("bisect", path, "--target", target("n%d" % culprit), "--random", "7",
                   "--mode", mode, "-o", out, expect=3, env=env)
            if p.returncode != 3:
                continue
            r = json.load(open(os.path.join(out, "bisect.json")))
            check(r["culprit"]["node"] == "n%d" % culprit,
                  "%s: culprit n%d, not %s" % (out, culprit, r["culprit"]))
            want = (math.ceil(math.log2(n_nodes)) + 1 if mode == "bisect"
                    else min(culprit + 1, n_nodes - 1) + 1)
            check(runs(log) == r["target_runs"],
                  "%s: the script ran %d times, bisect.json says %d" % (out, runs(log), r["target_runs"]))
            if mode == "bisect":
                check(runs(log) <= want, "%s: %d runs > %d" % (out, runs(log), want))
            else:
                check(runs(log) == want, "%s: %d runs, want %d" % (out, runs(log), want))
            check(any(x.startswith(PY) and "front.onnx" in x for x in r["reproduce"]) or culprit == n_nodes - 1,
                  "%s: the failing step's command is a reproduce line: %s" % (out, r["reproduce"]))
            # The failing step's folder holds what the command got and made.
            last = [s for s in r["steps"] if s["verdict"] == "FAIL" and s["prefix"] == culprit + 1]
            if last and culprit + 1 < n_nodes:
                d = last[0]["dir"]
                check(os.path.exists(os.path.join(d, "front.onnx")) and
                      os.path.exists(os.path.join(d, "inputs", "x.npy")) and
                      os.listdir(os.path.join(d, "out")), "%s: step artefacts in %s" % (out, d))
    env.pop("BISECT_TARGET_LOG", None)

    # --- 2b. atc: each front compiled by atc (the stand-in tests/fake_atc),
    # the OM run by --device-cmd ------------------------------------------
    aenv = dict(env)
    aenv["PATH"] = os.path.join(SRC, "tests", "fake_atc") + os.pathsep + env["PATH"]
    aenv["FAKE_ATC_LOG"] = os.path.abspath("atc.log")
    aenv["BISECT_TARGET_LOG"] = os.path.abspath("device.log")
    dev = "%s %s %s {model} {inputs} {out} n13 {om}" % (PY, SCRIPT, S)
    p = sg("bisect", "chain20.onnx", "--target", "atc", "--soc", "Ascend910B1", "--device-cmd",
           dev, "--random", "7", "-o", "a1", expect=3, env=aenv)
    if p.returncode == 3:
        r = json.load(open("a1/bisect.json"))
        compiles = open("atc.log").read().count("--framework=5")
        check(r["culprit"]["node"] == "n13" and compiles == r["target_runs"] == runs("device.log")
              and r["target_runs"] <= math.ceil(math.log2(20)) + 1,
              "atc: culprit %s, %d compiles, %d device runs" % (r["culprit"], compiles, runs("device.log")))
        check(all(os.path.exists(os.path.join(s["dir"], "model.om")) for s in r["steps"]),
              "atc: every step keeps its OM")
    aenv["FAKE_ATC_EXIT"] = "1"
    p = sg("bisect", "chain20.onnx", "--target", "atc", "--soc", "Ascend910B1", "--device-cmd",
           dev, "--random", "7", "-o", "a2", expect=1, env=aenv)
    check("step 0" in p.stderr and "atc" in p.stderr, "atc failing:\n" + p.stderr)

    # --- 3. bad targets: the step named, earlier steps kept -----------------
    chain = "chain20.onnx"
    p = sg("bisect", chain, "--target", target("n13", "fail"), "--random", "7", "-o", "f1", expect=1)
    check("step 0" in p.stderr and "failed with exit status 1" in p.stderr and
          "device error: the model does not run" in p.stderr, "failing command:\n" + p.stderr)
    check(not os.path.exists("f1/bisect.json") and
          not [x for x in os.listdir("f1") if x.startswith("step") or x.startswith(".step")],
          "failing first step: no step folder, no record: %s" % os.listdir("f1"))
    p = sg("bisect", chain, "--target", target("n13", "fail-front"), "--random", "7", "-o", "f2",
           expect=1)
    check("step 1 (nodes 1..10 of 20" in p.stderr, "a later step fails:\n" + p.stderr)
    check(sorted(x for x in os.listdir("f2") if "step" in x) == ["step_00_full"],
          "earlier step kept, failing one removed: %s" % os.listdir("f2"))
    p = sg("bisect", chain, "--target", target("n13", "hang"), "--timeout", "1", "--random", "7",
           "-o", "f3", expect=1)
    check("ran past --timeout 1 s and was killed" in p.stderr and p.seconds < 30,
          "hanging command (%.1f s):\n%s" % (p.seconds, p.stderr))
    p = sg("bisect", chain, "--target", target("n13", "silent"), "--random", "7", "-o", "f4", expect=1)
    check("exited 0 but wrote no" in p.stderr and "output 't19'" in p.stderr,
          "silent command:\n" + p.stderr)
    # A foreign OUT is left alone.
    os.makedirs("mine")
    open("mine/notes.txt", "w").write("mine")
    p = sg("bisect", chain, "--target", target("n13"), "--random", "7", "-o", "mine", expect=1)
    check(os.listdir("mine") == ["notes.txt"] and "'mine'" in p.stderr, "foreign OUT: " + p.stderr)
    # An earlier bisect result is replaced.
    p = sg("bisect", chain, "--target", target("n13"), "--random", "7", "-o", "f2", expect=3)
    # Usage errors.
    for args, msg in (
        (["--target", "bogus"], "unknown target 'bogus'"),
        (["--target", "cmd:true {model}"], "has no {out}"),
        (["--target", "cmd:"], "needs a command after 'cmd:'"),
        (["--target", "mock"], "--target mock needs --soc SOC"),
        (["--target", "atc", "--soc", "Ascend910B1"], "give --device-cmd"),
        (["--target", "mock", "--soc", "Ascend910B1", "--timeout", "3"], "--timeout limits a command"),
        (["--target", target("n13"), "--soc", "Ascend910B1"], "compile options"),
        (["--target", target("n13"), "--mode", "ternary"], "--mode takes bisect or linear"),
        (["--target", target("n13"), "--timeout", "-1"], "bad --timeout"),
        ([], "missing --target"),
    ):
        p = sg("bisect", chain, *args, "--random", "1", "-o", "u", expect=2)
        check(msg in p.stderr, "usage %s: want %r in\n%s" % (args, msg, p.stderr))
        check(not os.path.exists("u"), "usage error wrote nothing")
    p = sg("bisect", "nosuch.onnx", "--target", target("n13"), "--random", "1", "-o", "u", expect=1)
    check("nosuch.onnx" in p.stderr and not os.path.exists("u"), "missing model: " + p.stderr)

    shutil.rmtree(work)
    print("%d checks passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)


main()
