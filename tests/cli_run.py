#!/usr/bin/python3
"""End-to-end tests of `surgeon run` (run by ctest: cli_run.py SURGEON SRCDIR).

Checks exit codes, the error messages for bad input (they must name the
input or node and both shapes), that a failed run leaves no output folder
behind, that --random runs repeat exactly, that --dump all writes every
node output and that --check lists missing kernels.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def run(surgeon, *args):
    p = subprocess.run([surgeon, "run"] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def save(model, path):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def matmul_model(path):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["m", "k"])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["k2", "n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", "n"])
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm_1")],
                          "mm", [a, b], [y])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def fixed_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu.0/a"),
                           helper.make_node("Neg", ["r"], ["y"], name="neg_1")],
                          "fixed", [x], [y])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def long_name_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("Abs", ["x"], ["t"], name="blocks/" + "a" * 300),
                           helper.make_node("Neg", ["t"], ["y"], name="neg")],
                          "long", [x], [y])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def custom_model(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("Foo", ["x"], ["t"], name="foo_1", domain="my.ops"),
                           helper.make_node("Bar", ["t"], ["y"], name="bar_2", domain="my.ops")],
                          "custom", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("my.ops", 1)])
    m.ir_version = 8
    onnx.save(m, path)


def npy_raw(path, descr, shape, data):
    """A .npy with any descr, as np.save writes an ml_dtypes array: numpy
    itself has no float8 or 4-bit dtype."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    pad = 64 - (10 + len(d) + 1) % 64
    hdr = d + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data)


def narrow_runs(surgeon, tmp):
    """Inputs, outputs and dumps of the opset 19-23 types (issue 16, part 3):
    int4 and float8 inputs from .npy as ml_dtypes saves them, .bin packed or
    not, and .pb; dumps in int8 / float32 with the type in the manifest; the
    saved inputs read back; and --check naming a node without a kernel for
    the dtype a Cast gives it."""
    def vi(n, t, shape):
        return helper.make_tensor_value_info(n, t, shape)

    def save_narrow(nodes, ins, outs, opset, path):
        m = helper.make_model(helper.make_graph(nodes, "narrow", ins, outs),
                              opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 10
        onnx.save(m, path)  # onnx.checker of python3-onnx 1.12 knows no int4

    i4 = os.path.join(tmp, "int4.onnx")
    save_narrow([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT, name="to_f"),
                 helper.make_node("Identity", ["x"], ["x_id"], name="id")],
                [vi("x", 22, [5])], [vi("y", TensorProto.FLOAT, [5]), vi("x_id", 22, [5])], 21, i4)
    vals = [1, -2, 3, -8, 7]
    nibbles = bytes(v & 0xF for v in vals)
    npy_raw(os.path.join(tmp, "x4.npy"), "<V1", [5], nibbles)
    with open(os.path.join(tmp, "x4p.bin"), "wb") as f:
        f.write(bytes([0xe1, 0x83, 0x07]))  # packed, as raw_data
    with open(os.path.join(tmp, "x4u.bin"), "wb") as f:
        f.write(nibbles)  # one a byte, as numpy's tofile writes them
    t = TensorProto()
    t.name, t.data_type, t.raw_data = "x", 22, bytes([0xe1, 0x83, 0x07])
    t.dims.append(5)
    with open(os.path.join(tmp, "x4.pb"), "wb") as f:
        f.write(t.SerializeToString())
    for name in ("x4.npy", "x4p.bin", "x4u.bin", "x4.pb"):
        out = os.path.join(tmp, "o_" + name)
        rc, msg = run(surgeon, i4, "-i", os.path.join(tmp, name), "-o", out, "--dump", "all")
        check(rc == 0, "int4 input %s: rc %d: %s" % (name, rc, msg))
        if rc:
            continue
        man = json.load(open(os.path.join(out, "manifest.json")))
        files = {e["node"]: e for e in man["tensors"]}
        y = np.load(os.path.join(out, files["to_f"]["file"]))
        check(y.tolist() == vals, "int4 input %s read as %s" % (name, y.tolist()))
        d = np.load(os.path.join(out, files["id"]["file"]))
        check(d.dtype == np.int8 and d.tolist() == vals and files["id"]["dtype"] == "int4" and
              files["id"]["file_dtype"] == "int8", "int4 dump %s %s: %s" % (d.dtype, d, files["id"]))
        saved = open(os.path.join(out, "inputs", "x.npy"), "rb").read()
        check(b"'<V1'" in saved and saved.endswith(nibbles), "saved int4 input: %r" % saved[-16:])
    out = os.path.join(tmp, "o_again")
    rc, msg = run(surgeon, i4, "-i", os.path.join(tmp, "o_x4.npy", "inputs", "x.npy"), "-o", out)
    check(rc == 0, "saved int4 input reads back: rc %d: %s" % (rc, msg))
    np.save(os.path.join(tmp, "i8.npy"), np.array(vals, np.int8))
    rc, msg = run(surgeon, i4, "-i", os.path.join(tmp, "i8.npy"), "-o", out + "2")
    check(rc == 1 and "'x'" in msg and "int8" in msg and "int4" in msg,
          "int8 file for an int4 input: rc %d: %s" % (rc, msg))
    rc, msg = run(surgeon, i4, "--random", "3", "--range", "-8,8", "-o", out + "3")
    check(rc == 0, "random int4 input: rc %d: %s" % (rc, msg))

    f8 = os.path.join(tmp, "f8.onnx")
    save_narrow([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT, name="to_f"),
                 helper.make_node("Identity", ["x"], ["x_id"], name="id")],
                [vi("x", 19, [4])], [vi("y", TensorProto.FLOAT, [4]), vi("x_id", 19, [4])], 19, f8)
    npy_raw(os.path.join(tmp, "x8.npy"), "<f1", [4], bytes([0x3c, 0xc4, 0x7b, 0x7c]))
    out = os.path.join(tmp, "o_f8")
    rc, msg = run(surgeon, f8, "-i", os.path.join(tmp, "x8.npy"), "-o", out, "--dump", "all")
    check(rc == 0, "float8e5m2 '<f1' input: rc %d: %s" % (rc, msg))
    if rc == 0:
        man = json.load(open(os.path.join(out, "manifest.json")))
        files = {e["node"]: e for e in man["tensors"]}
        for node in ("to_f", "id"):
            v = np.load(os.path.join(out, files[node]["file"]))
            check(v.dtype == np.float32 and v.tolist() == [1.0, -4.0, 57344.0, float("inf")],
                  "float8e5m2 %s: %s" % (node, v))
    npy_raw(os.path.join(tmp, "x8v.npy"), "<V1", [4], bytes([0x3c, 0xc4, 0x7b, 0x7c]))
    rc, msg = run(surgeon, f8, "-i", os.path.join(tmp, "x8v.npy"), "-o", out + "2")
    check(rc == 0, "'<V1' holds a float8 too (the file does not say which): rc %d: %s" % (rc, msg))
    fixed = os.path.join(tmp, "fixed.onnx")
    rc, msg = run(surgeon, fixed, "-i", os.path.join(tmp, "x4.npy"), "-o", out + "3")
    check(rc == 1 and "ml_dtypes" in msg and "float32" in msg,
          "'<V1' for a float32 input: rc %d: %s" % (rc, msg))

    # The case: a Cast to int4 whose reader has no int4 kernel.
    bad = os.path.join(tmp, "cast_int4.onnx")
    save_narrow([helper.make_node("Cast", ["x"], ["q"], to=22, name="to_int4"),
                 helper.make_node("Relu", ["q"], ["r"], name="relu"),
                 helper.make_node("Cast", ["x"], ["e"], to=24, name="to_e8m0")],
                [vi("x", TensorProto.FLOAT, [5])], [vi("r", 22, [5]), vi("e", 24, [5])], 21, bad)
    rc, msg = run(surgeon, bad, "--check")
    check(rc == 1 and "node 'relu' (Relu, ai.onnx v21): no kernel for int4 inputs" in msg and
          "node 'to_e8m0' (Cast, ai.onnx v21): no kernel making data type 24 outputs" in msg and
          "2 of 3 nodes" in msg, "--check of dtypes: rc %d: %s" % (rc, msg))


def main():
    surgeon, src = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="cli_run.")
    try:
        mm = os.path.join(tmp, "mm.onnx")
        fixed = os.path.join(tmp, "fixed.onnx")
        custom = os.path.join(tmp, "custom.onnx")
        matmul_model(mm)
        fixed_model(fixed)
        custom_model(custom)
        out = os.path.join(tmp, "out")
        a = np.ones((2, 3), np.float32)
        np.save(os.path.join(tmp, "a.npy"), a)
        np.save(os.path.join(tmp, "b_bad.npy"), np.ones((4, 5), np.float32))
        np.save(os.path.join(tmp, "b.npy"), np.ones((3, 4), np.float32))
        np.save(os.path.join(tmp, "a64.npy"), a.astype(np.float64))
        a.tofile(os.path.join(tmp, "x.bin"))
        a[:1, :2].tofile(os.path.join(tmp, "x_short.bin"))  # not half: no fp16 rule

        rc, msg = run(surgeon, mm, "-i", "a=" + tmp + "/a.npy", "-i", "b=" + tmp + "/b_bad.npy",
                      "-o", out)
        check(rc == 1 and "mm_1" in msg and "[2,3]" in msg and "[4,5]" in msg,
              "MatMul inner dims: rc %d: %s" % (rc, msg))
        check(not os.path.exists(out), "failed run left %s" % out)
        check(not [f for f in os.listdir(tmp) if f.startswith(".out")], "temp folder left")

        rc, msg = run(surgeon, mm, "-i", tmp + "/a64.npy", "-i", tmp + "/b.npy", "-o", out)
        check(rc == 1 and "'a'" in msg and "float64" in msg and "float32" in msg,
              "wrong dtype: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, mm, "-i", "c=" + tmp + "/a.npy", "-o", out)
        check(rc == 1 and "'c'" in msg, "unknown input: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, mm, "-i", tmp + "/a.npy", "-o", out)
        check(rc == 1 and "'b'" in msg and "not given" in msg, "missing input: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, fixed, "-i", tmp + "/x_short.bin", "-o", out)
        check(rc == 1 and "x_short.bin" in msg and "bytes" in msg, "short .bin: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, fixed, "-i", tmp + "/b.npy", "-o", out)
        check(rc == 1 and "'x'" in msg and "[3,4]" in msg and "[2,3]" in msg,
              "wrong shape: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, mm, "--random", "1", "-o", out)
        check(rc == 1 and "--input-shape" in msg, "symbolic random: rc %d: %s" % (rc, msg))
        check(not os.path.exists(out), "failed runs left %s" % out)

        # usage errors
        for args in (["--dump", "some"], ["--random", "x"], ["--range", "1,0", "--random", "1"],
                     []):
            rc, msg = run(surgeon, fixed, *(args + (["-o", out] if args else [])))
            check(rc == 2, "usage %s: rc %d: %s" % (args, rc, msg))

        # a folder that is not an earlier run is refused and left alone
        other = os.path.join(tmp, "other")
        os.mkdir(other)
        open(os.path.join(other, "keep.txt"), "w").write("mine")
        rc, msg = run(surgeon, fixed, "-i", tmp + "/x.bin", "-o", other)
        check(rc == 1 and os.path.exists(os.path.join(other, "keep.txt")),
              "non-run folder: rc %d: %s" % (rc, msg))

        # .bin input, dump all, names sanitised
        rc, msg = run(surgeon, fixed, "-i", tmp + "/x.bin", "-o", out, "--dump", "all")
        check(rc == 0, "fixed run: rc %d: %s" % (rc, msg))
        man = json.load(open(os.path.join(out, "manifest.json")))
        files = [e["file"] for e in man["tensors"]]
        check(len(files) == 2 and files[0].startswith("relu_0_a.0.") and
              files[1].startswith("neg_1.0."), "dump names: %s" % files)
        y = np.load(os.path.join(out, man["outputs"][0]["file"]))
        check(np.array_equal(y, -np.maximum(a, 0)), "fixed output %s" % y)

        # a node name too long for a file name is shortened and mapped
        longm = os.path.join(tmp, "long.onnx")
        long_name_model(longm)
        rc, msg = run(surgeon, longm, "--random", "3", "-o", out, "--dump", "all")
        man = json.load(open(os.path.join(out, "manifest.json")))
        f0 = man["tensors"][0]["file"]
        mapping = open(os.path.join(out, "mapping.csv")).read() if os.path.exists(
            os.path.join(out, "mapping.csv")) else ""
        check(rc == 0 and len(f0) <= 255 and os.path.exists(os.path.join(out, f0)) and
              mapping.startswith(f0 + ",blocks/" + "a" * 300), "long name: %s %s" % (f0, mapping))
        rc, msg = run(surgeon, longm, "--random", "3", "-o", out)
        man = json.load(open(os.path.join(out, "manifest.json")))
        check(rc == 0 and [e["node"] for e in man["tensors"]] == ["neg"] and
              man["mode"] == "outputs", "--dump outputs wrote %s" % man["tensors"])

        # random runs repeat exactly, and a rerun replaces the folder
        rc1, _ = run(surgeon, mm, "--random", "7", "--range", "-2,2", "--input-shape",
                     "a:2,3;b:3,5", "-o", out)
        y1 = np.load(os.path.join(out, json.load(open(out + "/manifest.json"))["outputs"][0]["file"]))
        a1 = np.load(os.path.join(out, "inputs", "a.npy"))
        rc2, _ = run(surgeon, mm, "--random", "7", "--range", "-2,2", "--input-shape",
                     "a:2,3;b:3,5", "-o", out)
        y2 = np.load(os.path.join(out, json.load(open(out + "/manifest.json"))["outputs"][0]["file"]))
        b2 = np.load(os.path.join(out, "inputs", "b.npy"))
        check(rc1 == 0 and rc2 == 0 and np.array_equal(y1, y2) and y1.shape == (2, 5),
              "random runs differ")
        check(a1.min() >= -2 and a1.max() < 2 and a1.std() > 0.1, "random range %s" % a1)
        check(np.allclose(y2, a1 @ b2, rtol=1e-5), "random output is not a @ b")
        out_file = json.load(open(out + "/manifest.json"))["outputs"][0]["file"]
        check(sorted(os.listdir(out)) == sorted([".surgeon-outdir", "inputs", "manifest.json",
                                                  out_file]),
              "stale files in a replaced folder: %s" % os.listdir(out))

        # --check
        rc, msg = run(surgeon, custom, "--check")
        check(rc == 1 and "foo_1" in msg and "bar_2" in msg and "my.ops" in msg and
              "2 of 2 nodes" in msg, "--check: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, custom, "--random", "1", "-o", out + "2")
        check(rc == 1 and "foo_1" in msg and not os.path.exists(out + "2"),
              "missing kernel run: rc %d: %s" % (rc, msg))
        rc, msg = run(surgeon, os.path.join(src, "models", "exp_overflow.onnx"), "--check")
        check(rc == 0 and "every node has a kernel" in msg, "--check ok: rc %d: %s" % (rc, msg))
        narrow_runs(surgeon, tmp)
    finally:
        shutil.rmtree(tmp)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
