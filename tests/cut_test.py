#!/usr/bin/python3
"""surgeon extract / split / single-op cases end to end (issue 14, part 7-8).

Usage: cut_test.py SURGEON

- extract parity with python3-onnx's onnx.utils.extract_model (same node
  set) on the multi-node models of Debian's libonnx-testdata and on
  generated random DAGs, every result passing onnx.checker;
- the cases where extract_model is wrong: an If body reading an outer name
  (its producer must come along, or the name must become an input) and a
  needed input that is not listed (every missing tensor named);
- split: front then back reproduces the whole run bit for bit;
- single-op cases: onnx.checker and `surgeon run --case` pass, and a case
  whose expected output is altered fails;
- bad input: exact messages and exit codes, nothing written.
"""
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.utils
from onnx import TensorProto, helper, numpy_helper

S = sys.argv[1]
TESTDATA = "/usr/share/libonnx-testdata/data"
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


def node_set(m):
    return sorted((n.op_type, tuple(n.output)) for n in m.graph.node)


def vi(name, dtype=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def mk(nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def parity(work, path, ins, outs, label):
    ref = os.path.join(work, "ref.onnx")
    ours = os.path.join(work, "ours.onnx")
    for f in (ref, ours):
        if os.path.exists(f):
            os.remove(f)
    onnx.utils.extract_model(path, ref, ins, outs, check_model=False)
    args = ["extract", path, "-o", ours]
    if ins:
        args += ["--inputs", ";".join(ins)]
    args += ["--outputs", ";".join(outs)]
    p = sg(*args, expect=None)
    if p.returncode != 0 and "is not known" in p.stderr and any(
            o.type.HasField("sequence_type") for o in onnx.load(ref).graph.output):
        print("SKIP %s: a sequence-typed output the model declares no type for "
              "(element-type inference covers tensors only)" % label)
        return
    if p.returncode != 0:
        check(False, "%s: surgeon extract failed: %s" % (label, p.stderr.strip()))
        return
    a, b = onnx.load(ref), onnx.load(ours)
    check(node_set(a) == node_set(b), "%s: node sets differ\n  onnx %s\n  ours %s" %
          (label, node_set(a), node_set(b)))
    # initializers that are also inputs (IR < 4 requires it) stay listed
    b_inits = {i.name for i in b.graph.initializer}
    check([i.name for i in b.graph.input if i.name not in b_inits] == ins,
          "%s: inputs %s" % (label, [i.name for i in b.graph.input]))
    check([o.name for o in b.graph.output] == outs, "%s: outputs" % label)
    check(sorted(i.name for i in a.graph.initializer) == sorted(i.name for i in b.graph.initializer),
          "%s: initializers differ" % label)
    # surgeon has no shape inference yet (issue 15): an exposed tensor the
    # model gives no shape for has its element type only. Check that type
    # against onnx's inferred one, then run the checker with onnx's shapes
    # grafted on (it wants a shape on every main-graph input and output).
    ref_types = {v.name: v.type for v in list(a.graph.input) + list(a.graph.output)}
    for v in list(b.graph.input) + list(b.graph.output):
        t = ref_types.get(v.name)
        if t is None:
            continue
        check(v.type.tensor_type.elem_type == t.tensor_type.elem_type,
              "%s: dtype of %s" % (label, v.name))
        if not v.type.tensor_type.HasField("shape"):
            v.type.CopyFrom(t)
    try:
        onnx.checker.check_model(b)
        check(True, "")
    except Exception as e:  # noqa
        check(False, "%s: onnx.checker: %s" % (label, e))


def testdata_parity(work):
    """Every testdata model with at least 3 main-graph nodes and no
    subgraphs: cut from the graph inputs to a middle node's outputs."""
    n = 0
    for path in sorted(glob.glob(TESTDATA + "/*/*/model.onnx")):
        try:
            m = onnx.load(path)
        except Exception:  # noqa
            continue
        g = m.graph
        if len(g.node) < 3 or any(a.type in (5, 10) for nd in g.node for a in nd.attribute):
            continue
        inits = {i.name for i in g.initializer}
        ins = [i.name for i in g.input if i.name not in inits]
        mid = g.node[len(g.node) // 2]
        outs = [o for o in mid.output if o]
        if not ins or not outs:
            continue
        parity(work, path, ins, outs, os.path.relpath(path, TESTDATA))
        n += 1
    print("testdata parity: %d models" % n)
    check(n >= 5, "testdata parity ran on %d models" % n)


def random_dag(rng, n):
    nodes, avail = [], ["x0", "x1"]
    inits = [numpy_helper.from_array(np.full((2, 3), 0.5, np.float32), "c")]
    for i in range(n):
        op = rng.choice(["Add", "Mul", "Relu", "Sub", "Neg"])
        k = 2 if op in ("Add", "Mul", "Sub") else 1
        srcs = [rng.choice(avail + ["c"]) for _ in range(k)]
        nodes.append(helper.make_node(op, srcs, ["v%d" % i], name="n%d" % i))
        avail.append("v%d" % i)
    m = mk(nodes, [vi("x0"), vi("x1")], [vi("v%d" % (n - 1))], inits,
           value_info=[vi("v%d" % i) for i in range(n - 1)])
    return m


def generated_parity(work):
    rng = random.Random(14)
    for k in range(20):
        m = random_dag(rng, 40)
        path = os.path.join(work, "dag%d.onnx" % k)
        onnx.save(m, path)
        # inputs: a few tensors at 1/3; outputs: a few at 2/3 that depend
        # only on them (found with onnx's own walk), so the cut is closed.
        names = [n.output[0] for n in m.graph.node]
        cut_in = rng.sample(names[5:15], 3) + ["x0", "x1"]
        outs = rng.sample(names[25:], 2)
        parity(work, path, cut_in, outs, "dag%d" % k)


def outer_scope(work):
    """If branches read 'h' (computed in the main graph). extract_model
    leaves h's producer out: its model reads an undefined name."""
    then_g = helper.make_graph([helper.make_node("Add", ["h", "h"], ["t"], name="then_add")],
                               "then", [], [vi("t")])
    else_g = helper.make_graph([helper.make_node("Neg", ["h"], ["e"], name="else_neg")],
                               "else", [], [vi("e")])
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="relu"),
             helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
             helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g,
                              else_branch=else_g)]
    zero = numpy_helper.from_array(np.array(0, np.float32), "zero")
    m = mk(nodes, [vi("x")], [vi("y")], [zero],
           value_info=[vi("h"), vi("s", shape=()), vi("cond", TensorProto.BOOL, ())])
    path = os.path.join(work, "if.onnx")
    onnx.save(m, path)
    ref = os.path.join(work, "if_ref.onnx")
    onnx.utils.extract_model(path, ref, ["cond", "x"], ["y"], check_model=False)
    r = onnx.load(ref)
    check("relu" not in [n.name for n in r.graph.node],
          "expected onnx.utils.extract_model to miss the outer read (it kept relu)")
    out = os.path.join(work, "if_ours.onnx")
    sg("extract", path, "-o", out, "--inputs", "cond,x", "--outputs", "y")
    o = onnx.load(out)
    check(sorted(n.name for n in o.graph.node) == ["if", "relu"],
          "outer read: nodes %s" % [n.name for n in o.graph.node])
    onnx.checker.check_model(o)
    # h outside the cut: it becomes an input.
    out2 = os.path.join(work, "if_ours2.onnx")
    p = sg("extract", path, "-o", out2, "--inputs", "cond", "--outputs", "y")
    o2 = onnx.load(out2)
    check([i.name for i in o2.graph.input] == ["cond", "h"],
          "outer read outside the cut: inputs %s" % [i.name for i in o2.graph.input])
    check([n.name for n in o2.graph.node] == ["if"], "outer read outside: nodes")
    check("'h' is read by a subgraph" in p.stdout, "note about h: %r" % p.stdout)
    onnx.checker.check_model(o2)


def missing_inputs(work):
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("Mul", ["s", "c"], ["y"], name="mul")]
    m = mk(nodes, [vi("a"), vi("b"), vi("c")], [vi("y")])
    path = os.path.join(work, "abc.onnx")
    onnx.save(m, path)
    out = os.path.join(work, "abc_out.onnx")
    p = sg("extract", path, "-o", out, "--inputs", "a", "--outputs", "y", expect=1)
    check("the cut is not closed: 2 needed tensors are neither an input of the cut nor "
          "computable from constants" in p.stderr, "missing msg: %r" % p.stderr)
    check("missing: b (read by node 'add')" in p.stderr and
          "missing: c (read by node 'mul')" in p.stderr, "missing list: %r" % p.stderr)
    check(not os.path.exists(out), "output written on error")
    # onnx's extract_model does not say so: its result reads b and c undefined.
    ref = os.path.join(work, "abc_ref.onnx")
    onnx.utils.extract_model(path, ref, ["a"], ["y"], check_model=False)
    try:
        onnx.checker.check_model(onnx.load(ref), full_check=True)
        bad = False
    except Exception:  # noqa
        bad = True
    check(bad, "expected onnx's result to be invalid")


def bad_input(work):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="Relu_1"),
             helper.make_node("Exp", ["r"], ["e"], name="Exp_2"),
             helper.make_node("Neg", ["e"], ["y"], name="Neg_3")]
    m = mk(nodes, [vi("x")], [vi("y")])
    path = os.path.join(work, "chain.onnx")
    onnx.save(m, path)
    out = os.path.join(work, "bad_out.onnx")
    cases = [
        (["extract", path, "-o", out, "--inputs", "x", "--outputs", "ee"], 1,
         "surgeon: error: no tensor named 'ee' in the main graph (close names: 'e'"),
        (["extract", path, "-o", out, "--start-nodes", "Exp_2", "--end-nodes", "Relu_1"], 1,
         "surgeon: error: start node 'Exp_2' is not upstream of any end node"),
        (["extract", path, "-o", out, "--start-nodes", "Exp_9", "--end-nodes", "Neg_3"], 1,
         "surgeon: error: no start node named 'Exp_9' in the main graph (close names: 'Exp_2'"),
        (["extract", path, "-o", out, "--inputs", "x", "--outputs", "x"], 1,
         "surgeon: error: the cut is empty: no node lies between its inputs and its outputs"),
        (["extract", path, "-o", out], 2, "say what to extract"),
        (["extract", path, "--outputs", "y"], 2, "missing -o OUT"),
        (["extract", path, "-o", path, "--inputs", "x", "--outputs", "y"], 1, "surgeon: error:"),
        (["split", path, "--index", "3", "-o", out, out + "2"], 1,
         "surgeon: error: index 3 is out of range: the main graph has 3 nodes, so the index "
         "must be 1 to 2"),
        (["split", path, "--index", "0", "-o", out, out + "2"], 1, "index 0 is out of range"),
        (["split", path, "--at", "Neg_3", "-o", out, out + "2"], 1,
         "node 'Neg_3' is the last node in topological order: the back half would be empty"),
        (["split", path, "--at", "Exp", "-o", out, out + "2"], 1,
         "no node named 'Exp' in the main graph (close names: 'Exp_2'"),
        (["split", path, "-o", out, out + "2"], 2, "say where to cut"),
        (["split", path, "--index", "1", "-o", out], 2, "missing -o FRONT.onnx BACK.onnx"),
        (["extract", path, "--node", "Exp_22", "--random", "1", "-o", os.path.join(work, "c")], 1,
         "no node named 'Exp_22' in the main graph (close names: 'Exp_2'"),
        (["run", "--case", os.path.join(work, "nowhere")], 1, "nowhere/model.onnx"),
    ]
    for args, code, msg in cases:
        p = sg(*args, expect=code)
        check(msg in p.stderr, "message for %s: %r" % (" ".join(args[:2]), p.stderr))
        check(not os.path.exists(out) and not os.path.exists(out + "2"),
              "output left by %s" % " ".join(args))
        check("Sanitizer" not in p.stderr, "sanitizer report")
    # A cut inside a subgraph is refused.
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], name="inner")], "then", [],
                               [vi("t")])
    m2 = mk([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                              else_branch=then_g)],
            [vi("c", TensorProto.BOOL, ()), vi("x")], [vi("y")])
    p2 = os.path.join(work, "sub.onnx")
    onnx.save(m2, p2)
    p = sg("extract", p2, "-o", out, "--inputs", "x", "--outputs", "t", expect=1)
    check("tensor 't' is inside a subgraph of node 'if' (If): a cut must lie in the main graph"
          in p.stderr, "subgraph cut: %r" % p.stderr)
    p = sg("split", p2, "--at", "inner", "-o", out, out + "2", expect=1)
    check("node 'inner' is inside a subgraph of node 'if' (If)" in p.stderr,
          "subgraph split: %r" % p.stderr)


def run_outputs(work, model, inputs, tag):
    """Run a model on surgeon's runtime; {output name: bytes of its .npy}."""
    d = os.path.join(work, "run_" + tag)
    args = ["run", model, "-o", d]
    for name, f in inputs.items():
        args += ["-i", "%s=%s" % (name, f)]
    sg(*args)
    man = json.load(open(os.path.join(d, "manifest.json")))
    return {o["name"]: os.path.join(d, o["file"]) for o in man["outputs"]}, d


def split_equal(work, model, inputs, label, where):
    front = os.path.join(work, "front.onnx")
    back = os.path.join(work, "back.onnx")
    for f in (front, back):
        if os.path.exists(f):
            os.remove(f)
    p = sg("split", model, *where, "-o", front, back, expect=None)
    if p.returncode:
        check(False, "%s: split: %s" % (label, p.stderr))
        return
    whole, _ = run_outputs(work, model, inputs, "whole")
    f_out, _ = run_outputs(work, front, {k: v for k, v in inputs.items()
                                         if k in [i.name for i in onnx.load(front).graph.input]},
                           "front")
    bm = onnx.load(back, load_external_data=False)
    b_in = {}
    for i in bm.graph.input:
        b_in[i.name] = f_out.get(i.name) or inputs[i.name]
    b_out, _ = run_outputs(work, back, b_in, "back")
    for name, f in whole.items():
        got = f_out.get(name) or b_out.get(name)
        same = got is not None and np.array_equal(np.load(f), np.load(got), equal_nan=True) \
            and np.load(f).dtype == np.load(got).dtype
        check(same, "%s: output %s differs after split" % (label, name))
    onnx.checker.check_model(onnx.load(front, load_external_data=False))
    onnx.checker.check_model(bm)


def split_tests(work):
    rng = random.Random(7)
    m = random_dag(rng, 30)
    path = os.path.join(work, "dag_split.onnx")
    onnx.save(m, path)
    ins = {}
    for name in ("x0", "x1"):
        f = os.path.join(work, name + ".npy")
        np.save(f, np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32))
        ins[name] = f
    for k in (1, 10, 29):
        split_equal(work, path, ins, "dag index %d" % k, ["--index", str(k)])
    split_equal(work, path, ins, "dag tensors", ["--tensors", "v12"])


def case_tests(work):
    model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models",
                         "exp_overflow.onnx")
    cases = os.path.join(work, "cases")
    sg("extract", model, "--all", "--random", "1", "--range", "0,5", "-o", cases)
    idx = json.load(open(os.path.join(cases, "index.json")))
    n = len(onnx.load(model).graph.node)
    check(len(idx["cases"]) == n and all(c["dir"] for c in idx["cases"]), "index.json")
    for c in idx["cases"]:
        cm = onnx.load(os.path.join(cases, c["dir"], "model.onnx"))
        check(len(cm.graph.node) == 1 and cm.graph.node[0].name == c["node"], "one node")
        onnx.checker.check_model(cm, full_check=True)
    p = sg("run", "--case", cases)
    check("%d passed, 0 failed, 0 errors" % n in p.stdout, "run --case: %r" % p.stdout)
    # From a dump instead of a fresh run: the same data.
    dump = os.path.join(work, "dump")
    sg("run", model, "--random", "1", "--range", "0,5", "--dump", "all", "-o", dump)
    one = os.path.join(work, "case_exp")
    sg("extract", model, "--node", "Exp_3", "--golden", dump, "-o", one)
    a = onnx.load_tensor(os.path.join(one, "test_data_set_0", "output_0.pb"))
    b = onnx.load_tensor(os.path.join(cases, "Exp_3", "test_data_set_0", "output_0.pb"))
    check(a.raw_data == b.raw_data and a.name == "e", "dump and golden run agree")
    sg("run", "--case", one)
    # A wrong expected output fails with exit 3.
    arr = onnx.numpy_helper.to_array(a).copy()
    arr.flat[0] += 1.0 + abs(arr.flat[0])
    t = onnx.numpy_helper.from_array(arr, "e")
    with open(os.path.join(one, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(t.SerializeToString())
    p = sg("run", "--case", one, expect=3)
    check(p.stdout.startswith("FAIL"), "altered case: %r" % p.stdout)
    # Unnamed nodes (PaddleOCR's Constants, tf2onnx): --all names them as
    # their dumps do, msit's <OpType>_<i>, from a fresh run or a dump, and
    # --node takes that name.
    h = onnx.helper
    T = onnx.TensorProto
    g = h.make_graph([h.make_node("Constant", [], ["c"], value=h.make_tensor("v", T.FLOAT, [2], [1, 2])),
                      h.make_node("Add", ["x", "c"], ["a"]),
                      h.make_node("Relu", ["a"], ["y"], name="relu")], "unnamed",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    um = os.path.join(work, "unnamed.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), um)
    udump = os.path.join(work, "unnamed_dump")
    sg("run", um, "--random", "1", "--dump", "all", "-o", udump)
    for how, args in (("fresh run", ["--random", "1"]), ("dump", ["--golden", udump])):
        out = os.path.join(work, "unnamed_cases_" + how.replace(" ", "_"))
        sg("extract", um, "--all", "-o", out, *args)
        idx = json.load(open(os.path.join(out, "index.json")))["cases"]
        got = [(c["node"], c["op_type"], c["dir"], c.get("error")) for c in idx]
        check(got == [("Constant_0", "Constant", "Constant_0", None), ("Add_1", "Add", "Add_1", None),
                      ("relu", "Relu", "relu", None)], "unnamed nodes from a %s: %r" % (how, got))
        p = sg("run", "--case", out)
        check("3 passed, 0 failed, 0 errors" in p.stdout, "their cases pass: %r" % p.stdout)
    sg("extract", um, "--node", "Add_1", "--golden", udump, "-o", os.path.join(work, "case_add1"))


def concat_tests(work):
    """Parity with onnx.compose.merge_models; an If body reading a mapped
    input (merge_models leaves it undefined); collisions and prefixes."""
    import onnx.compose
    then_g = helper.make_graph([helper.make_node("Add", ["p", "w"], ["t"], name="then_add")],
                               "then", [], [vi("t")])
    a = mk([helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Exp", ["r"], ["e"], name="exp")], [vi("x")], [vi("e"), vi("r")])
    inits = [numpy_helper.from_array(np.ones((2, 3), np.float32), "w"),
             numpy_helper.from_array(np.array(0, np.float32), "z")]
    b = mk([helper.make_node("Mul", ["p", "w"], ["q"], name="mul")], [vi("p")], [vi("q")], inits)
    bi = mk([helper.make_node("Mul", ["p", "w"], ["q"], name="mul"),
             helper.make_node("ReduceSum", ["p"], ["s"], name="sum", keepdims=0),
             helper.make_node("Greater", ["s", "z"], ["c"], name="gt"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g,
                              else_branch=then_g)], [vi("p")], [vi("q"), vi("y")], inits)
    pa, pb, pbi = (os.path.join(work, f) for f in ("A.onnx", "B.onnx", "Bi.onnx"))
    onnx.save(a, pa)
    onnx.save(b, pb)
    onnx.save(bi, pbi)
    out = os.path.join(work, "AB.onnx")
    ref = onnx.compose.merge_models(a, b, io_map=[("e", "p")])
    sg("concat", pa, pb, "--io-map", "e:p", "-o", out)
    o = onnx.load(out)
    onnx.checker.check_model(o)
    key = lambda m: sorted((n.op_type, tuple(n.input), tuple(n.output)) for n in m.graph.node)
    check(key(o) == key(ref), "concat node set")
    check([i.name for i in o.graph.input] == [i.name for i in ref.graph.input], "concat inputs")
    check([i.name for i in o.graph.output] == [i.name for i in ref.graph.output], "concat outputs")
    check(sorted(i.name for i in o.graph.initializer) ==
          sorted(i.name for i in ref.graph.initializer), "concat initializers")
    try:
        onnx.compose.merge_models(a, bi, io_map=[("e", "p")])
        check(False, "expected merge_models to fail on the If body's read of p")
    except Exception:  # noqa
        check(True, "")
    sg("concat", pa, pbi, "--io-map", "e:p", "-o", out)
    o = onnx.load(out)
    onnx.checker.check_model(o)
    check([x.name for x in o.graph.output] == ["r", "q", "y"], "concat with If: outputs")
    check(list(o.graph.node[-1].attribute[0].g.node[0].input) == ["e", "w"],
          "the If body reads A's output")
    os.remove(out)
    p = sg("concat", pa, pa, "--io-map", "e:x", "-o", out, expect=1)
    check("concat: 4 names of the second model are also in the first" in p.stderr and
          "collision: tensor 'r'" in p.stderr and "collision: node 'exp'" in p.stderr,
          "collisions: %r" % p.stderr)
    check(not os.path.exists(out), "concat wrote on error")
    sg("concat", pa, pa, "--io-map", "e:x", "--prefix-b", "b_", "-o", out)
    r2 = onnx.compose.merge_models(a, a, io_map=[("e", "x")], prefix2="b_")
    check(key(onnx.load(out)) == key(r2), "concat with prefix: node set")
    a17 = mk(list(a.graph.node), list(a.graph.input), list(a.graph.output), opset=17)
    p17 = os.path.join(work, "A17.onnx")
    onnx.save(a17, p17)
    p = sg("concat", pa, p17, "--io-map", "e:x", "--prefix-b", "b_", "-o", out + "2", expect=1)
    check("import different versions of domain 'ai.onnx': 13 in the first, 17 in the second"
          in p.stderr, "opset conflict: %r" % p.stderr)


def main():
    work = tempfile.mkdtemp(prefix="sg_cut_")
    try:
        testdata_parity(work)
        generated_parity(work)
        outer_scope(work)
        missing_inputs(work)
        bad_input(work)
        split_tests(work)
        case_tests(work)
        concat_tests(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
