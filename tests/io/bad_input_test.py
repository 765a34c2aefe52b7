#!/usr/bin/python3
"""Bad input for the loader (issue 2, part 7), through the CLI.

Usage: bad_input_test.py SURGEON. Every case must give exit code 1, a single
line on stderr naming the file and the offending node or tensor, no crash,
and no output file (nor temporary file) left behind.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "bad", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape=(2,), dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def write(path, m):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def external_model(folder, name, location, offset=None, length=None):
    t = numpy_helper.from_array(np.ones(4, np.float32), "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=location)
    if offset is not None:
        t.external_data.add(key="offset", value=str(offset))
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", (4,))],
              [vi("y", (4,))], [t])
    write(os.path.join(folder, name), m)


def cases(tmp):
    """(file, words the error must contain) pairs."""
    out = []

    def add(name, data_or_model, *words):
        path = os.path.join(tmp, name)
        if isinstance(data_or_model, bytes):
            with open(path, "wb") as f:
                f.write(data_or_model)
        else:
            write(path, data_or_model)
        out.append((path, words))

    add("empty.onnx", b"", "empty")
    rng = random.Random(1234)
    for i in range(8):
        add("random%d.onnx" % i, bytes(rng.getrandbits(8) for _ in range(200 + 97 * i)))
    # A real model truncated at every 1/16 of its length.
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_kitchen_sink.py"), tmp],
                   check=True)
    for src in [os.path.join(tmp, "kitchen_sink.onnx"),
                "/usr/share/libonnx-testdata/data/pytorch-converted/test_ConvTranspose2d/model.onnx"]:
        data = open(src, "rb").read()
        for k in range(1, 16):
            add("trunc_%s_%02d.onnx" % (os.path.basename(src).replace(".onnx", "") if "kitchen" in src else os.path.basename(os.path.dirname(src)), k),
                data[:len(data) * k // 16])
    add("output_is_input.onnx", model([helper.make_node("Relu", ["x"], ["x"], name="node_r")],
                                      [vi("x")], [vi("x")]), "node_r", "also a graph input")
    add("output_is_init.onnx",
        model([helper.make_node("Relu", ["x"], ["w"], name="node_w")], [vi("x")], [vi("w")],
              inits=[helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])]),
        "node_w", "also a graph initializer")
    add("cycle.onnx", model([helper.make_node("Add", ["x", "c"], ["a"], name="node_a"),
                             helper.make_node("Relu", ["a"], ["c"], name="node_b")],
                            [vi("x")], [vi("a")]), "cycle", "node_")
    add("undefined.onnx", model([helper.make_node("Relu", ["nowhere"], ["y"], name="reader")],
                                [vi("x")], [vi("y")]), "reader", "nowhere")
    add("dup_producer.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                                    helper.make_node("Neg", ["x"], ["y"], name="second")],
                                   [vi("x")], [vi("y")]), "first", "second", "'y'")
    add("undefined_output.onnx", model([], [vi("x")], [vi("ghost")]), "ghost")
    neg = helper.make_tensor("negdim", TensorProto.FLOAT, [2, 1], [1.0, 2.0])
    neg.dims[1] = -1
    add("negative_dim.onnx", model([helper.make_node("Add", ["x", "negdim"], ["y"], name="n")],
                                   [vi("x")], [vi("y")], [neg]), "negdim", "negative")
    big = helper.make_tensor("hugedims", TensorProto.FLOAT, [1], [1.0])
    big.ClearField("dims")
    big.dims.extend([2 ** 40, 2 ** 40])
    add("overflow_dim.onnx", model([helper.make_node("Add", ["x", "hugedims"], ["y"], name="n")],
                                   [vi("x")], [vi("y")], [big]), "hugedims")
    short = helper.make_tensor("shortdata", TensorProto.FLOAT, [4],
                               np.ones(4, np.float32).tobytes(), raw=True)
    short.raw_data = np.ones(3, np.float32).tobytes()
    add("short_data.onnx", model([helper.make_node("Add", ["x", "shortdata"], ["y"], name="n")],
                                 [vi("x", (4,))], [vi("y", (4,))], [short]), "shortdata", "12")
    typed = helper.make_tensor("typedlong", TensorProto.INT64, [2], [1, 2])
    typed.int64_data.append(3)
    add("typed_count.onnx", model([helper.make_node("Add", ["x", "typedlong"], ["y"], name="n")],
                                  [vi("x", (2,), TensorProto.INT64)],
                                  [vi("y", (2,), TensorProto.INT64)], [typed]), "typedlong")
    add("arity.onnx", model([helper.make_node("Relu", ["x", "x"], ["y"], name="tworelu")],
                            [vi("x")], [vi("y")]), "tworelu", "inputs")
    add("no_opset.onnx", onnx.ModelProto(ir_version=8, graph=helper.make_graph(
        [], "g", [vi("x")], [vi("x")])), "opset")
    # External data, each in its own folder.
    ext = [
        ("missing", "nothere.bin", None, None, "nothere.bin"),
        ("offset", "w.bin", 100, None, "offset"),
        ("length", "w.bin", 16, 16, "past the end"),
        ("dotdot", "../w.bin", None, None, "outside"),
        ("absolute", "/etc/passwd", None, None, "outside"),
        ("symlink", "link.bin", None, None, "outside"),
        ("size", "w.bin", 0, 8, "need 16"),
    ]
    for tag, loc, off, length, word in ext:
        d = os.path.join(tmp, "ext_" + tag)
        os.mkdir(d)
        with open(os.path.join(d, "w.bin"), "wb") as f:
            f.write(np.ones(6, np.float32).tobytes())
        with open(os.path.join(tmp, "w.bin"), "wb") as f:
            f.write(np.ones(4, np.float32).tobytes())
        if tag == "symlink":
            os.symlink(os.path.join(tmp, "w.bin"), os.path.join(d, "link.bin"))
        external_model(d, "m.onnx", loc, off, length)
        out.append((os.path.join(d, "m.onnx"), (word, "'w'")))
    return out


def main():
    surgeon = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="sg-bad-")
    failures = 0
    try:
        for path, words in cases(tmp):
            outdir = tempfile.mkdtemp(dir=tmp)
            out = os.path.join(outdir, "out.onnx")
            for cmd in (["convert", path, "-o", out], ["inspect", path]):
                p = subprocess.run([surgeon] + cmd, capture_output=True, text=True)
                lines = p.stderr.strip().splitlines()
                problems = []
                if p.returncode != 1:
                    problems.append("exit %d" % p.returncode)
                if len(lines) != 1:
                    problems.append("%d stderr lines" % len(lines))
                msg = lines[0] if lines else ""
                if path not in msg:
                    problems.append("file not named")
                for w in words:
                    if w not in msg:
                        problems.append("missing '%s'" % w)
                if os.listdir(outdir):
                    problems.append("left %s" % os.listdir(outdir))
                name = "%s %s" % (cmd[0], os.path.relpath(path, tmp))
                if problems:
                    failures += 1
                    print("FAIL %s: %s | %s" % (name, ", ".join(problems), p.stderr.strip()))
                else:
                    print("ok   %s: %s" % (name, msg))
    finally:
        shutil.rmtree(tmp)
    # Inputs the fuzzer once crashed on (tools/fuzz): they must now load or
    # fail cleanly, with exit 0 or 1 and nothing else.
    # Where the finding was a model accepted that should not have been, the
    # error it must now give.
    refused = {"self-loop-outputs-before-inputs.onnx": "has a cycle",
               "training-algorithm-twice.onnx": "TrainingInfoProto.algorithm appears twice",
               "attribute-graph-twice.onnx": "AttributeProto.g appears twice"}
    reg = os.path.join(HERE, "fuzz_regressions")
    for f in sorted(os.listdir(reg)):
        if not os.path.isfile(os.path.join(reg, f)):
            continue  # another harness's folder (tests/fuzz_replay.c replays those)
        p = subprocess.run([surgeon, "inspect", os.path.join(reg, f)], capture_output=True,
                           text=True)
        want = refused.get(f)
        if want and (p.returncode != 1 or want not in p.stderr):
            failures += 1
            print("FAIL fuzz regression %s: want exit 1 and '%s', got exit %d %s"
                  % (f, want, p.returncode, p.stderr.strip()))
        elif p.returncode not in (0, 1) or "runtime error" in p.stderr or "Sanitizer" in p.stderr:
            failures += 1
            print("FAIL fuzz regression %s: exit %d %s" % (f, p.returncode, p.stderr.strip()))
        else:
            print("ok   fuzz regression %s: exit %d" % (f, p.returncode))
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
