#!/usr/bin/python3
"""Every kernel entry against missing inputs, huge values and empty tensors.

Run: kernel_adversarial.py SURGEON SG_KERNEL_TABLE WORKDIR [-j N] [--only OP,...]

For every entry of the runtime's kernel tables (listed by
tests/kernel_table_tool.c, so nothing registered is left out) it builds
models and runs each through the `surgeon` binary under test:

  omitted   a model of the node (made here for every entry, and taken from
            the ONNX backend tests Debian ships where they have the op) with
            each input in turn the empty name ''. A required input (by the
            entry's `inputs` pattern) must give exit 1 naming the node and
            "input I is required", from `run` and from `run --check`; an
            optional one may run (exit 0) or fail with a message. The
            backend-test variants also go through `optimize --pass
            fold-constants` with their inputs as initializers, which must
            not fail (a node it cannot evaluate is reported, not an error).
  huge      backend-test models with, in turn, every integer attribute set
            to INT64_MAX and to INT64_MIN, and every integer input set to
            those values (pads, shapes, repeats, starts, steps, counts...).
  empty     backend-test models with a zero-size dim in their float inputs
            (the first dim of input 0; the trailing dims of the others, as
            a Conv weight of W [2,1,0,0]).

A huge or empty variant may run or fail with a message. Whatever the
outcome, a run must exit 0 or 1 within its time limit, print its error as
"surgeon: error: ..." and leave no sanitizer report on stderr: a crash, a
hang, an abort, a UBSan "runtime error" (signed overflow in shape
arithmetic) or an AddressSanitizer report fails the test. The binary runs
with ASan's allocator returning NULL past 1 GB instead of aborting (a huge
request must become an error, and none may take the machine's memory).
"""
import argparse
import concurrent.futures
import copy
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, defs, helper, numpy_helper

BACKEND = "/usr/share/libonnx-testdata/data/node"
MOCK = "surgeon.mock"
I64_MAX, I64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
SANITIZER = re.compile(r"runtime error:|ERROR: AddressSanitizer|LeakSanitizer|SUMMARY:")
# The allocator's note that it returned NULL past max_allocation_size_mb:
# what the runtime then reports as out of memory is the behaviour wanted.
ENV = dict(os.environ)
ENV["ASAN_OPTIONS"] = ":".join(filter(None, [
    os.environ.get("ASAN_OPTIONS", ""), "allocator_may_return_null=1",
    "max_allocation_size_mb=1024", "hard_rss_limit_mb=3072"]))
TIMEOUT = 120
LOOP_LIMIT = 100000  # a Loop with a huge trip count stops here, with an error
FP = defs.OpSchema.FormalParameterOption

DTYPES = {  # TensorProto code -> numpy
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
    7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
}
TYPE_NAMES = {"tensor(%s)" % n: c for n, c in [
    ("float", 1), ("uint8", 2), ("int8", 3), ("uint16", 4), ("int16", 5), ("int32", 6),
    ("int64", 7), ("string", 8), ("bool", 9), ("float16", 10), ("double", 11), ("uint32", 12),
    ("uint64", 13), ("bfloat16", 16)]}
PREFERRED = [1, 7, 6, 9, 2, 3, 11, 10]


class Entry:
    def __init__(self, line):
        (self.family, self.domain, self.op, since, ti, types, flags,
         self.inputs) = line.split("\t")
        self.since, self.type_input = int(since), int(ti)
        self.types, self.flags = int(types, 16), int(flags, 16)
        self.letters = self.inputs.rstrip("+*")
        self.rep = self.inputs[len(self.letters):]

    def letter(self, i):
        if i < len(self.letters):
            return self.letters[i]
        return self.letters[-1] if self.rep else None

    def accepts(self, dtype):
        return self.types == 0xffffffff or bool(self.types >> dtype & 1)

    def key(self):
        return "%s_%s_v%d" % (self.domain.replace(".", "_"), self.op, self.since)


def schema(op, version):
    try:
        return defs.get_schema(op, min(version, defs.onnx_opset_version()), "")
    except Exception:
        return None


# ------------------------------------------------------------- outcomes

class Results:
    def __init__(self):
        self.fails, self.counts = [], {}

    def add(self, kind, ok, what):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if not ok:
            self.fails.append(what)


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=ENV,
                           timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


# The loader drops trailing '' inputs and then refuses a node with too few
# for its ONNX schema: an error as good as the runtime's.
LOADER_ARITY = "the operator takes"


def judge(rc, out, err, need=None, check=False):
    """None when (rc, output) is a clean outcome; else what is wrong. `need`:
    the text a required-input error must hold; `check`: run --check, which
    lists the nodes on stdout."""
    if rc == "timeout":
        return "no result within %d s (a hang)" % TIMEOUT
    if SANITIZER.search(err):
        line = next(l for l in err.splitlines() if SANITIZER.search(l))
        return "sanitizer report: " + line.strip()[:300]
    if rc not in (0, 1):
        return "exit %s: %s" % (rc, err.strip()[-300:])
    if rc == 1 and "surgeon: error:" not in err and not (check and out.strip()):
        return "exit 1 without an error message: %s" % err.strip()[-300:]
    if need is not None:
        if rc != 1 or (need not in err + out and LOADER_ARITY not in err):
            return "expected exit 1 with '%s', got exit %s: %s" % (need, rc, (err + out).strip()[-300:])
    return None


def check_run(res, kind, model_path, inputs, workdir, need=None, check_too=False):
    cmd = [SURGEON, "run", model_path, "-o", os.path.join(workdir, "out"),
           "--max-loop-iterations", str(LOOP_LIMIT)]
    if inputs is None:
        cmd += ["--random", "1"]
    else:
        for name, path in inputs:
            cmd += ["-i", "%s=%s" % (name, path)]
    rc, out, err = run(cmd)
    bad = judge(rc, out, err, need)
    res.add(kind, bad is None, "%s: run: %s" % (model_path, bad))
    if check_too:
        rc, out, err = run([SURGEON, "run", model_path, "--check"])
        bad = judge(rc, out, err, need, check=True)
        res.add(kind + "/check", bad is None, "%s: run --check: %s" % (model_path, bad))
    shutil.rmtree(os.path.join(workdir, "out"), ignore_errors=True)


def check_fold(res, model_path, workdir):
    out = os.path.join(workdir, "folded.onnx")
    rc, o, err = run([SURGEON, "optimize", model_path, "-o", out, "--pass",
                      "fold-constants:max_loop_iterations=%d" % LOOP_LIMIT])
    bad = judge(rc, o, err)
    if bad is None and rc != 0 and LOADER_ARITY not in err:
        bad = "fold-constants failed instead of reporting the node: " + err.strip()[-300:]
    res.add("omitted/fold", bad is None, "%s: fold-constants: %s" % (model_path, bad))
    if os.path.exists(out):
        os.remove(out)


# -------------------------------------------------- models made here

def tensor_vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def pick_dtype(allowed, entry, position):
    codes = [TYPE_NAMES[t] for t in allowed if t in TYPE_NAMES]
    if position == entry.type_input:
        codes = [c for c in codes if entry.accepts(c)] or [c for c in PREFERRED if entry.accepts(c)]
    for c in PREFERRED:
        if c in codes:
            return c
    return codes[0] if codes else 1


def body_graph(kind, dtype):
    """Subgraphs for the control-flow ops made here."""
    x = tensor_vi("bx", dtype, None)
    if kind == "branch":
        return helper.make_graph([helper.make_node("Identity", ["outer0"], ["by"])], "branch", [],
                                 [tensor_vi("by", dtype, None)])
    if kind == "loop":
        return helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Identity", ["bx"], ["by"])], "loop_body",
            [tensor_vi("i", TensorProto.INT64, []), tensor_vi("c_in", TensorProto.BOOL, []), x],
            [tensor_vi("c_out", TensorProto.BOOL, []), tensor_vi("by", dtype, None)])
    if kind == "scan":
        return helper.make_graph(
            [helper.make_node("Add", ["bs", "bx"], ["bs2"]),
             helper.make_node("Identity", ["bx"], ["by"])], "scan_body",
            [tensor_vi("bs", dtype, None), x],
            [tensor_vi("bs2", dtype, None), tensor_vi("by", dtype, None)])
    return helper.make_graph([helper.make_node("Relu", ["bx"], ["by"])], "body", [x],
                             [tensor_vi("by", dtype, None)])


REQUIRED_ATTRS = {
    "Cast": {"to": 1}, "Constant": {"value": "tensor"}, "Einsum": {"equation": "ij->ij"},
    "Upsample": {"scales": [1.0, 1.0]}, "RandomUniform": {"shape": [2, 3]},
    "RandomNormal": {"shape": [2, 3]}, "If": {"then_branch": "branch", "else_branch": "branch"},
    "Loop": {"body": "loop"}, "Scan": {"body": "scan", "num_scan_inputs": 1},
    "SequenceMap": {"body": "body"}, "FusedElementwise": {"body": "body"},
    "TfIdfVectorizer": {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1,
                        "max_skip_count": 0, "ngram_counts": [0], "ngram_indexes": [0],
                        "pool_int64s": [1]},
    "LSTM": {"hidden_size": 2}, "GRU": {"hidden_size": 2}, "RNN": {"hidden_size": 2},
    "Conv2D": {}, "LayerNorm": {"axes": [-1]},
}


# Shapes the node can take, for ops no backend test has (the mock OM's
# fused ops), so that the huge attributes reach the kernel's arithmetic.
SHAPES = {
    "Conv2D": [[1, 1, 4, 4], [1, 1, 2, 2], [1]], "BatchMatMulV2": [[2, 3], [3, 4], [4]],
    "MatMulV2": [[2, 3], [3, 4], [4]], "LayerNorm": [[2, 3], [3], [3]],
    "Col2Im": [[1, 4, 9], [2], [2]],
}
# Integer attributes to try huge values on where python3-onnx has no schema.
INT_ATTRS = {
    "Conv2D": {"strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1], "group": 1},
    "MatMulV2": {"transA": 0, "transB": 0}, "SoftmaxV2": {"axis": -1}, "LayerNorm": {"axes": [-1]},
    "Col2Im": {"strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1]},
}


def make_attr(name, value, dtype):
    if value == "tensor":
        return helper.make_attribute(name, numpy_helper.from_array(np.ones(2, np.float32)))
    if value in ("branch", "loop", "scan", "body"):
        return helper.make_attribute(name, body_graph(value, dtype))
    return helper.make_attribute(name, value)


def synth_model(entry):
    """(model, graph inputs) of one node of the entry, every input given."""
    s = schema(entry.op, entry.since) if entry.domain == "ai.onnx" else None
    n_in = len(entry.letters) + (1 if entry.rep == "+" else 0)
    if entry.op == "Scan" and entry.since >= 9:
        n_in = 2
    formal = []
    for i in range(n_in):
        if s and s.inputs:
            p = s.inputs[min(i, len(s.inputs) - 1)]
            allowed = next((c.allowed_type_strs for c in s.type_constraints
                            if c.type_param_str == p.typeStr), [p.typeStr])
        else:
            allowed = ["tensor(float)"]
        formal.append(allowed)
    dtypes = [pick_dtype(a, entry, i) for i, a in enumerate(formal)]
    # A shared type parameter gets one dtype (ONNX's T for both of Add's inputs).
    if s and s.inputs:
        by_param = {}
        for i in range(n_in):
            p = s.inputs[min(i, len(s.inputs) - 1)].typeStr
            by_param.setdefault(p, dtypes[i])
            dtypes[i] = by_param[p]
    nodes, ginputs, names = [], [], []
    data_dtype = dtypes[0] if dtypes else 1
    for i in range(n_in):
        kinds = formal[i]
        name = "in%d" % i
        if all(k.startswith("seq(") for k in kinds):
            elem = TYPE_NAMES.get(kinds[0][4:-1], 1)
            ginputs.append(tensor_vi(name + "_t", elem, [2, 3]))
            nodes.append(helper.make_node("SequenceConstruct", [name + "_t"], [name]))
        elif all(k.startswith("optional(") for k in kinds):
            ginputs.append(tensor_vi(name + "_t", 1, [2, 3]))
            nodes.append(helper.make_node("Optional", [name + "_t"], [name]))
        else:
            shape = SHAPES.get(entry.op, [])[i:i + 1]
            shape = shape[0] if shape else [2] if dtypes[i] == TensorProto.INT64 and i > 0 else [2, 3]
            if entry.op == "If" or (entry.op == "Loop" and i == 1):
                ginputs.append(tensor_vi(name, TensorProto.BOOL, []))
            elif entry.op == "Loop" and i == 0:
                ginputs.append(tensor_vi(name, TensorProto.INT64, []))
            else:
                ginputs.append(tensor_vi(name, dtypes[i], shape))
        names.append(name)
    if entry.op == "If":
        ginputs.append(tensor_vi("outer0", 1, [2, 3]))
    attrs = {}
    if s:
        for a in s.attributes.values():
            if a.required and a.name not in REQUIRED_ATTRS.get(entry.op, {}):
                t = a.type
                A = defs.OpSchema.AttrType
                attrs[a.name] = {A.INT: 1, A.FLOAT: 1.0, A.STRING: "a", A.INTS: [1],
                                 A.FLOATS: [1.0], A.STRINGS: ["a"]}.get(t, 1)
    for k, v in REQUIRED_ATTRS.get(entry.op, {}).items():
        attrs[k] = v
    n_out = 1
    if s:
        n_out = max(1, s.min_output)
    if entry.op in ("Loop", "Scan"):
        n_out = 2 if entry.op == "Scan" else 1
    outs = ["out%d" % j for j in range(n_out)]
    node = helper.make_node(entry.op, names, outs, name="node_under_test",
                            domain="" if entry.domain == "ai.onnx" else entry.domain)
    for k, v in attrs.items():
        node.attribute.append(make_attr(k, v, data_dtype))
    nodes.append(node)
    graph = helper.make_graph(nodes, "adversarial", ginputs,
                              [helper.make_value_info(o, onnx.TypeProto()) for o in outs])
    opsets = [helper.make_opsetid("", entry.since if entry.domain == "ai.onnx" else 17)]
    if entry.domain != "ai.onnx":
        opsets.append(helper.make_opsetid(entry.domain, entry.since))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def omitted_variants(model, node_index=-1):
    """(i, model with input i of the node under test as '')."""
    node = model.graph.node[node_index]
    for i in range(len(node.input)):
        if not node.input[i]:
            continue
        m = copy.deepcopy(model)
        m.graph.node[node_index].input[i] = ""
        yield i, m


def synth_int_attrs(entry, model):
    """The node under test with each integer attribute (those set, those its
    schema declares, those INT_ATTRS lists) at INT64_MAX and INT64_MIN."""
    node = model.graph.node[-1]
    have = {a.name: a for a in node.attribute}
    names = dict(INT_ATTRS.get(entry.op, {}))
    s = schema(entry.op, entry.since) if entry.domain == "ai.onnx" else None
    A = defs.OpSchema.AttrType
    for a in (s.attributes.values() if s else ()):
        if a.type in (A.INT, A.INTS) and a.name not in names:
            names[a.name] = 1 if a.type == A.INT else [1]
    for name, dflt in sorted(names.items()):
        if name in have and have[name].type not in (onnx.AttributeProto.INT,
                                                    onnx.AttributeProto.INTS):
            continue
        for val, tag in ((I64_MAX, "max"), (I64_MIN, "min")):
            m = copy.deepcopy(model)
            n = m.graph.node[-1]
            for a in list(n.attribute):
                if a.name == name:
                    n.attribute.remove(a)
            size = len(have[name].ints) if name in have and have[name].ints else (
                len(dflt) if isinstance(dflt, list) else 0)
            n.attribute.append(helper.make_attribute(name, [int(val)] * size if size or
                                                     isinstance(dflt, list) else int(val)))
            yield "attr_%s_%s" % (name, tag), m


def run_synth(entry, workdir, res, huge):
    try:
        model = synth_model(entry)
    except Exception as e:  # a generator bug, not a runtime one
        res.add("omitted", False, "%s: cannot make a model: %r" % (entry.key(), e))
        return
    base = os.path.join(workdir, entry.key())
    os.makedirs(base, exist_ok=True)
    for i, m in omitted_variants(model):
        path = os.path.join(base, "omit%d.onnx" % i)
        onnx.save(m, path)
        need = "input %d is required" % i if entry.letter(i) == "r" else None
        check_run(res, "omitted", path, None, base, need, check_too=need is not None)
    for name, m in synth_int_attrs(entry, model) if huge else ():
        path = os.path.join(base, "%s.onnx" % name)
        onnx.save(m, path)
        check_run(res, "huge", path, None, base)


# ------------------------------------------------ backend-test models

def backend_models():
    """{(domain, op): [(test folder, model)]} of single-node backend tests."""
    found = {}
    if not os.path.isdir(BACKEND):
        return found
    for t in sorted(os.listdir(BACKEND)):
        path = os.path.join(BACKEND, t, "model.onnx")
        if not os.path.exists(path) or not os.path.isdir(os.path.join(BACKEND, t, "test_data_set_0")):
            continue
        try:
            m = onnx.load(path)
        except Exception:
            continue
        if len(m.graph.node) != 1:
            continue
        n = m.graph.node[0]
        dom = n.domain or "ai.onnx"
        opset = next((o.version for o in m.opset_import if (o.domain or "ai.onnx") == dom), 0)
        found.setdefault((dom, n.op_type), []).append((os.path.join(BACKEND, t), m, opset))
    return found


def inputs_of(folder, model):
    """The graph inputs (name, tensor) of a backend test's first data set."""
    out = []
    names = [i.name for i in model.graph.input
             if i.name not in {x.name for x in model.graph.initializer}]
    for k, name in enumerate(names):
        p = os.path.join(folder, "test_data_set_0", "input_%d.pb" % k)
        if not os.path.exists(p):
            return None
        t = onnx.TensorProto()
        try:  # sequences and optionals are other messages
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            if t.data_type == TensorProto.STRING:
                return None
            out.append((name, numpy_helper.to_array(t)))
        except Exception:
            return None
    return out


def save_inputs(base, arrays):
    files = []
    for name, a in arrays:
        p = os.path.join(base, "in_%s.npy" % re.sub(r"[^A-Za-z0-9_]", "_", name))
        np.save(p, a)
        files.append((name, p))
    return files


def as_initializers(model, arrays):
    m = copy.deepcopy(model)
    keep = []
    for gi in m.graph.input:
        a = dict(arrays).get(gi.name)
        if a is None:
            keep.append(gi)
            continue
        m.graph.initializer.append(numpy_helper.from_array(a, gi.name))
    del m.graph.input[:]
    m.graph.input.extend(keep)
    return m


def int_attr_variants(model):
    node = model.graph.node[0]
    for a in node.attribute:
        if a.type not in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS):
            continue
        for val, tag in ((I64_MAX, "max"), (I64_MIN, "min")):
            m = copy.deepcopy(model)
            b = next(x for x in m.graph.node[0].attribute if x.name == a.name)
            if a.type == onnx.AttributeProto.INT:
                b.i = int(val)
            else:
                b.ints[:] = [int(val)] * max(1, len(a.ints))
            yield "attr_%s_%s" % (a.name, tag), m


def run_backend(entry, cases, workdir, res, seen):
    base = os.path.join(workdir, entry.key() + "_bk")
    os.makedirs(base, exist_ok=True)
    done = 0
    for folder, model, _opset in cases:
        arrays = inputs_of(folder, model)
        if arrays is None:
            continue
        done += 1
        if done > 3:
            break
        tag = os.path.basename(folder)
        files = save_inputs(base, arrays)
        # omitted inputs, in run and in fold-constants (the first model only)
        for i, m in omitted_variants(model, 0) if done == 1 else ():
            if (tag, "omit", i) in seen:
                continue
            seen.add((tag, "omit", i))
            path = os.path.join(base, "%s_omit%d.onnx" % (tag, i))
            onnx.save(m, path)
            need = "input %d is required" % i if entry.letter(i) == "r" else None
            check_run(res, "omitted", path, files, base, need)
            fpath = os.path.join(base, "%s_omit%d_const.onnx" % (tag, i))
            onnx.save(as_initializers(m, arrays), fpath)
            check_fold(res, fpath, base)
        # huge attributes, once per attribute and value for the entry
        for name, m in int_attr_variants(model):
            if (entry.key(), name) in seen:
                continue
            seen.add((entry.key(), name))
            path = os.path.join(base, "%s_%s.onnx" % (tag, name))
            onnx.save(m, path)
            check_run(res, "huge", path, files, base)
        # huge integer inputs
        for k, (name, a) in enumerate(arrays):
            if a.dtype.kind not in "iu" or a.size == 0:
                continue
            for val, vt in ((I64_MAX, "max"), (I64_MIN, "min")):
                if (entry.key(), "input", k, vt) in seen:
                    continue
                seen.add((entry.key(), "input", k, vt))
                info = np.iinfo(a.dtype)
                b = np.full(a.shape, max(min(val, info.max), info.min), a.dtype)
                huge = [(n, b if n == name else x) for n, x in arrays]
                path = os.path.join(base, "%s_input%d_%s.onnx" % (tag, k, vt))
                onnx.save(as_initializers(model, [(name, b)]), path)
                check_run(res, "huge", path, [f for f in save_inputs(base, huge) if f[0] != name],
                          base)
        # empty tensors
        if (entry.key(), "empty") not in seen:
            seen.add((entry.key(), "empty"))
            for variant in ("first", "trailing"):
                changed = []
                for k, (name, a) in enumerate(arrays):
                    if a.dtype.kind != "f" or a.ndim == 0:
                        changed.append((name, a))
                        continue
                    shape = list(a.shape)
                    if variant == "first" and k == 0:
                        shape[0] = 0
                    elif variant == "trailing" and k > 0 and a.ndim >= 3:
                        shape[2:] = [0] * (a.ndim - 2)
                    changed.append((name, np.zeros(shape, a.dtype)))
                if all(x.shape == y.shape for (_, x), (_, y) in zip(changed, arrays)):
                    continue
                m = copy.deepcopy(model)
                for gi in m.graph.input:  # the declared shapes would refuse the new ones
                    gi.type.tensor_type.ClearField("shape")
                path = os.path.join(base, "%s_empty_%s.onnx" % (tag, variant))
                onnx.save(m, path)
                ebase = os.path.join(base, "empty_" + variant)
                os.makedirs(ebase, exist_ok=True)
                check_run(res, "empty", path, save_inputs(ebase, changed), base)


def serves(entry, entries, opset):
    """Whether entry is the one the lookup takes at `opset`."""
    if opset < entry.since:
        return False
    later = [e.since for e in entries if e.op == entry.op and e.domain == entry.domain and
             entry.since < e.since <= opset]
    return not later


def main():
    global SURGEON
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("surgeon")
    ap.add_argument("table")
    ap.add_argument("workdir")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    SURGEON = os.path.abspath(args.surgeon)
    lines = subprocess.run([args.table], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    entries = [Entry(l) for l in lines]
    only = set(filter(None, args.only.split(",")))
    if only:
        entries = [e for e in entries if e.op in only]
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    bk = backend_models()
    if not bk:
        print("backend-test models not found in %s (libonnx-testdata): only the models made "
              "here are run" % BACKEND)
    res = Results()
    seen = set()

    def one(e):
        r = Results()
        cases = [c for c in bk.get((e.domain, e.op), []) if serves(e, entries, c[2])]
        run_synth(e, args.workdir, r, huge=not cases)
        run_backend(e, cases, args.workdir, r, seen)
        return e, r

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        for e, r in pool.map(one, entries):
            for k, v in r.counts.items():
                res.counts[k] = res.counts.get(k, 0) + v
            res.fails += r.fails
            print("%-40s %s" % (e.key(), "FAIL (%d)" % len(r.fails) if r.fails else "ok"),
                  flush=True)
    print("runs: " + ", ".join("%s %d" % kv for kv in sorted(res.counts.items())))
    for f in res.fails:
        print("FAIL " + f)
    print("%d entries, %d failures" % (len(entries), len(res.fails)))
    if not res.fails:
        shutil.rmtree(args.workdir, ignore_errors=True)
    sys.exit(1 if res.fails else 0)


if __name__ == "__main__":
    main()
