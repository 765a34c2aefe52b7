#!/usr/bin/python3
"""surgeon compare MODEL --target mock --single-op (issue 14, part 3).

Usage: single_op_test.py SURGEON SOURCE_DIR

On the seed's Exp overflow (models/exp_overflow.onnx, inputs in [0,5),
force_fp16): with fusion off the comparison flags Exp_3, Mul_6 and Add_9;
alone on their own golden inputs Exp_3 fails (it overflows) and Add_9
passes (its error is inherited): the test that separates a wrong operator
from inherited error. With fusion on the fused op's nodes are tried one by
one. --nodes picks operators; every case passes `surgeon run --case` and
onnx.checker; the CSV and JSON agree with the console. Bad input: unknown
--nodes names (close names suggested, OUT untouched), options that do not
fit (exit 2).
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import onnx

S, SRC = sys.argv[1], sys.argv[2]
M = os.path.join(SRC, "models", "exp_overflow.onnx")
FP16 = ["--target", "mock", "--soc", "Ascend910B1", "--precision", "force_fp16",
        "--random", "1", "--range", "0,5"]
failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print("FAIL", what)


def sg(*args, expect=0):
    p = subprocess.run([S] + [str(a) for a in args], capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        failures.append("exit %d (want %d): surgeon %s\n%s%s" %
                        (p.returncode, expect, " ".join(map(str, args)), p.stdout, p.stderr))
        print("FAIL", failures[-1])
    return p


def table(out):
    rows = list(csv.DictReader(open(os.path.join(out, "single_op.csv"))))
    js = json.load(open(os.path.join(out, "single_op.json")))
    return {r["Node"]: r for r in rows}, {o["node"]: o for o in js["operators"]}


def main():
    work = tempfile.mkdtemp(prefix="single_op_test.")
    os.chdir(work)

    # --- 1. fusion off: a wrong op and an inherited error ------------------
    p = sg("compare", M, *FP16, "--fusion", "off", "--single-op", "-o", "off", expect=3)
    rows, js = table("off")
    result = json.load(open("off/result.json"))
    in_error = [r["NPUDump"] for r in result["rows"] if r["IsPrecisionError"]]
    check(sorted(rows) == sorted(in_error), "every row in error tried: %s vs %s" % (sorted(rows), in_error))
    check(rows["Exp_3"]["FailsAlone"] == "YES" and rows["Exp_3"]["OverFlow"] == "YES",
          "Exp_3 fails alone: %s" % rows["Exp_3"])
    check(rows["Add_9"]["FailsAlone"] == "NO" and float(rows["Add_9"]["CosineSimilarity"]) > 0.99,
          "Add_9 passes alone (inherited): %s" % rows["Add_9"])
    check(js["Exp_3"]["fails_alone"] and not js["Add_9"]["fails_alone"], "JSON agrees with the CSV")
    check("single-op Exp_3 (Exp): FAILS alone on its golden inputs" in p.stdout and
          "single-op Add_9 (Add): passes alone on its golden inputs: its error is inherited" in p.stdout and
          "  fails alone: Exp_3 (Exp)" in p.stdout, "console:\n" + p.stdout)
    check("--single-op" in json.load(open("off/run.json"))["repeat"], "the repeat command keeps --single-op")
    for node in rows:
        case = os.path.join("off", "single_op", rows[node]["Case"], "case")
        m = onnx.load(os.path.join(case, "model.onnx"))
        onnx.checker.check_model(m)
        check([n.name for n in m.graph.node] == [node], "%s: the case holds the node alone" % node)
        r = sg("run", "--case", case)
        check("PASS" in r.stdout, "%s: the case passes on the reference" % node)
        check(os.path.exists(os.path.join("off", "single_op", rows[node]["Case"], "target", "model.om")),
              "%s: the compiled case is kept" % node)
    # A later compare replaces the folder (single_op/ is on its list).
    sg("compare", M, *FP16, "--fusion", "off", "--single-op", "-o", "off", expect=3)

    # --- 2. fusion on: the nodes behind the fused op, one by one -----------
    p = sg("compare", M, *FP16, "--single-op", "-o", "on", expect=3)
    rows, _ = table("on")
    check({"Exp_3", "Mul_6", "Add_9"} <= set(rows), "the fused op's nodes tried: %s" % sorted(rows))
    check(rows.get("Exp_3", {}).get("FailsAlone") == "YES" and
          rows.get("Add_9", {}).get("FailsAlone") == "NO", "fusion on: Exp_3 wrong, Add_9 inherits")

    # --- 3. --nodes ----------------------------------------------------------
    p = sg("compare", M, *FP16, "--fusion", "off", "--single-op", "--nodes", "Sub_1,Exp_3", "-o", "n",
           expect=3)
    rows, _ = table("n")
    check(list(rows) == ["Sub_1", "Exp_3"] and rows["Sub_1"]["FailsAlone"] == "NO",
          "--nodes: exactly those, Sub_1 passes: %s" % rows)
    # Nothing in error: nothing to try.
    p = sg("compare", M, "--target", "mock", "--soc", "Ascend910B1", "--precision", "force_fp32",
           "--random", "1", "--range", "0,5", "--single-op", "-o", "fp32", expect=0)
    check("no operator is in error, none to try" in p.stdout and
          "single-op: 0 operators tried alone" in p.stdout, "fp32:\n" + p.stdout)

    # --- 4. bad input and usage ---------------------------------------------
    p = sg("compare", M, *FP16, "--single-op", "--nodes", "Exp_4", "-o", "bad", expect=1)
    check("no node 'Exp_4'" in p.stderr and "Exp_3" in p.stderr, "close names:\n" + p.stderr)
    check(not os.path.exists("bad"), "unknown node: nothing written")
    for args, msg in (
        (["--nodes", "Exp_3"], "--nodes names the operators of --single-op"),
        (["--single-op", "--device-cmd", "x {out}"], "--device-cmd runs the single-op cases' OMs"),
        (["--single-op", "--timeout", "5"], "--timeout limits --device-cmd"),
    ):
        p = sg("compare", M, *FP16, *args, "-o", "u", expect=2)
        check(msg in p.stderr, "usage %s: want %r in\n%s" % (args, msg, p.stderr))
    p = sg("compare", M, "--target", "off/exp_overflow.om", "--random", "1", "--single-op", "-o", "u",
           expect=2)
    check("needs --target mock or atc" in p.stderr, "a compiled target:\n" + p.stderr)
    p = sg("compare", M, "--target", "atc", "--soc", "Ascend910B1", "-t", "off/target",
           "--random", "1", "--single-op", "-o", "u", expect=2)
    check("give --device-cmd" in p.stderr, "atc without --device-cmd:\n" + p.stderr)
    check(not os.path.exists("u"), "usage errors wrote nothing")

    shutil.rmtree(work)
    print("%d checks passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)


main()
