#!/usr/bin/python3
"""`compare --model` with golden dumps named by tensor (issue 12 part 6).

    compare_tensor_dumps_test.py SURGEON SRCDIR BUILDDIR WORKDIR

A torch-export look-alike (tensor names such as /conv/Conv_output_0 and
TensorFlow's Split__7:0, unnamed nodes, a node name with '.') is run on ONNX
Runtime 1.30 (onnxruntime-node, installed into BUILDDIR/real-models/ort as
tests/real_models_test.py does) with every node output exposed, and its
tensors saved the ways people save them: <name with '/' as '_'>.npy, also
':' as '_', np.savez and np.savez_compressed keyed by tensor name. Each is
compared with surgeon's own --dump all of the same inputs: every node
output must be matched and agree. A changed tensor in the .npz must be the
first failing operator; without --model, and for broken archives (cut
short, a damaged CRC, a member that inflates past its declared size, a
member that is not stored or deflated), compare must exit 1 with a message
naming the archive. Without ORT (no npm) the ORT part is skipped, saying
why; the numpy-written dumps are checked regardless.
"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

S, SRC, BUILD, WORK = [os.path.abspath(a) for a in sys.argv[1:5]]
sys.path.insert(0, os.path.join(SRC, "tests"))
import real_models_test as rmt  # noqa: E402 (install_ort, the ORT runner)

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def sh(*a):
    return subprocess.run([S] + list(a), capture_output=True, text=True, timeout=600)


def vi(n, s, t=T.FLOAT):
    return h.make_tensor_value_info(n, t, s)


rng = np.random.default_rng(12)
w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
nodes = [
    h.make_node("Conv", ["input", "conv.weight"], ["/conv/Conv_output_0"], name="/conv/Conv", pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["/conv/Conv_output_0"], ["/relu/Relu_output_0"], name="/relu/Relu"),
    h.make_node("Constant", [], ["onnx::Mul_7"], value=nh.from_array(np.float32(0.5), "c")),
    h.make_node("Mul", ["/relu/Relu_output_0", "onnx::Mul_7"], ["/Mul_output_0"]),
    h.make_node("Split", ["/Mul_output_0"], ["Split__7:0", "Split__7:1"], axis=1),
    h.make_node("Add", ["Split__7:0", "Split__7:1"], ["head.out"], name="head.add"),
    h.make_node("Sigmoid", ["head.out"], ["output"]),
]
g = h.make_graph(nodes, "torchish", [vi("input", [1, 2, 8, 8])], [vi("output", [1, 2, 8, 8])],
                 [nh.from_array(w, "conv.weight")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
model = os.path.join(WORK, "torchish.onnx")
onnx.save(m, model)
x = rng.standard_normal((1, 2, 8, 8)).astype(np.float32)
np.save(os.path.join(WORK, "input.npy"), x)
x.tofile(os.path.join(WORK, "input.bin"))
tensors = [o for n in nodes for o in n.output]

target = os.path.join(WORK, "surgeon")
p = sh("run", model, "-i", "input=" + os.path.join(WORK, "input.npy"), "-o", target, "--dump", "all")
check(p.returncode == 0, "surgeon run --dump all: %s" % p.stderr.strip()[-200:])
man = json.load(open(os.path.join(target, "manifest.json")))
ours = {t["value"]: np.load(os.path.join(target, t["file"])) for t in man["tensors"]}


def write_layouts(values, tag):
    """The ways people save a dict of tensors; returns {layout: path}."""
    out = {}
    d = os.path.join(WORK, tag + "_slash")
    os.makedirs(d)
    for k, v in values.items():
        np.save(os.path.join(d, k.replace("/", "_") + ".npy"), v)
    out["'/' as '_'"] = d
    d = os.path.join(WORK, tag + "_safe")
    os.makedirs(d)
    for k, v in values.items():
        np.save(os.path.join(d, k.replace("/", "_").replace(":", "_").lstrip("_") + ".npy"), v)
    out["'/' and ':' as '_', no leading '_'"] = d
    out["np.savez"] = os.path.join(WORK, tag + ".npz")
    np.savez(out["np.savez"], **values)
    out["np.savez_compressed"] = os.path.join(WORK, tag + "_z.npz")
    np.savez_compressed(out["np.savez_compressed"], **values)
    return out


def compare(golden, tag, *extra):
    out = os.path.join(WORK, "cmp_" + tag)
    p = sh("compare", "-g", golden, "-t", target, "-o", out, "-q", *extra)
    res = json.load(open(os.path.join(out, "result.json"))) if os.path.exists(os.path.join(out, "result.json")) else None
    return p, res


def layouts_agree(values, source):
    for layout, path in write_layouts(values, source.split()[0]).items():
        p, res = compare(path, source.split()[0] + str(abs(hash(layout)) % 1000), "--model", model)
        n = res["counts"]["compared"] if res else 0
        check(p.returncode == 0 and n == len(tensors),
              "%s dump, %s: exit %d, %d of %d node outputs compared (%s)"
              % (source, layout, p.returncode, n, len(tensors), p.stderr.strip()[-160:]))


# numpy-written dumps of surgeon's own tensors: the layouts alone.
layouts_agree({k: ours[k] for k in tensors}, "numpy")

# ONNX Runtime's dump, every node output exposed.
ort_dir, why = rmt.install_ort(BUILD)
if ort_dir is None:
    print("SKIP the ONNX Runtime dump: %s" % why)
else:
    me = onnx.ModelProto()
    me.CopyFrom(m)
    for t in tensors:
        if t != "output":
            me.graph.output.append(h.make_tensor_value_info(t, T.FLOAT, None))
    exposed = os.path.join(WORK, "exposed.onnx")
    onnx.save(me, exposed)
    job = {"ort": ort_dir, "model": exposed, "level": "disabled", "threads": 1,
           "inputs": {"input": {"file": os.path.join(WORK, "input.bin"), "dtype": "float32", "dims": [1, 2, 8, 8]}},
           "outputs": tensors, "out_dir": os.path.join(WORK, "ort")}
    with open(os.path.join(WORK, "job.json"), "w") as f:
        json.dump(job, f)
    p = subprocess.run(["node", os.path.join(SRC, "tests", "real_models", "ort_run.js"),
                        os.path.join(WORK, "job.json")], capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "ONNX Runtime ran the exposed model: %s" % p.stderr.strip()[-200:])
    res = json.load(open(os.path.join(WORK, "ort", "outputs.json")))
    ort = {o["name"]: np.fromfile(o["file"], np.float32).reshape(o["dims"]) for o in res["outputs"]}
    layouts_agree(ort, "ONNX Runtime")

# A changed tensor in the .npz: its node is the first failing operator.
bent = {k: ours[k] for k in tensors}
bent["/Mul_output_0"] = bent["/Mul_output_0"] + 3.0
np.savez(os.path.join(WORK, "bent.npz"), **bent)
p, res = compare(os.path.join(WORK, "bent.npz"), "bent", "--model", model)
first = (res or {}).get("analysis", {}).get("first_failing") or {}
check(p.returncode == 0 and first.get("GroundTruth") == "Mul_3",
      "a changed tensor in the .npz (outputs unchanged: exit 0): exit %d, first failing %s (want Mul_3, "
      "msit's name of the unnamed Mul)"
      % (p.returncode, first.get("GroundTruth")))

# Without --model: refused, saying --model is needed.
slash = os.path.join(WORK, "numpy_slash")
p, _ = compare(slash, "nomodel")
check(p.returncode == 1 and "--model" in p.stderr, "a tensor-named folder without --model: exit %d, %s"
      % (p.returncode, p.stderr.strip()[-200:]))
p, _ = compare(os.path.join(WORK, "numpy.npz"), "nomodel_npz")
check(p.returncode == 1 and "--model" in p.stderr, "an .npz without --model: exit %d, %s"
      % (p.returncode, p.stderr.strip()[-200:]))

# A folder of files that name nothing in the model.
odd = os.path.join(WORK, "odd")
os.makedirs(odd)
np.save(os.path.join(odd, "not_a_tensor.npy"), x)
p, _ = compare(odd, "odd", "--model", model)
check(p.returncode == 1 and "names a node output" in p.stderr, "files naming no tensor: exit %d, %s"
      % (p.returncode, p.stderr.strip()[-200:]))


# Broken archives: exit 1, the archive named, no crash (the tests run under ASan).
def member_bytes(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


good = open(os.path.join(WORK, "numpy_z.npz"), "rb").read()
bad = {"cut short": good[:len(good) // 2], "empty": b"", "not a zip": b"PK\x03\x04" + b"\0" * 100}
crc = bytearray(open(os.path.join(WORK, "numpy.npz"), "rb").read())
i = crc.find(b"NUMPY")  # inside the first stored member's data
crc[i + 20] ^= 0xFF
bad["damaged CRC"] = bytes(crc)
# A member that inflates far past the size its directory entry declares.
raw = member_bytes(np.zeros(1 << 20, np.float32))
b = io.BytesIO()
with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("output.npy", raw)
data = bytearray(b.getvalue())
cd = data.rfind(b"PK\x01\x02")
struct.pack_into("<I", data, cd + 24, 128)  # uncompressed size: 128 bytes
bad["inflates past its size"] = bytes(data)
struct.pack_into("<I", data, cd + 24, 0xFFFFFFF0)  # 4 GB from about a kilobyte: past deflate's 1032:1
bad["claims more than deflate can make"] = bytes(data)
b = io.BytesIO()
with zipfile.ZipFile(b, "w", zipfile.ZIP_BZIP2) as z:
    z.writestr("output.npy", member_bytes(x))
bad["bzip2 member"] = b.getvalue()
for what, blob in bad.items():
    path = os.path.join(WORK, "bad_%s.npz" % what.replace(" ", "_"))
    with open(path, "wb") as f:
        f.write(blob)
    p, _ = compare(path, "bad_" + what.replace(" ", "_"), "--model", model)
    check(p.returncode == 1 and path in p.stderr and "AddressSanitizer" not in p.stderr,
          "broken archive (%s): exit %d, %s" % (what, p.returncode, p.stderr.strip()[-200:]))
    out = os.path.join(WORK, "cmp_bad_" + what.replace(" ", "_"))
    if what in ("damaged CRC", "inflates past its size"):
        # One bad member: its row says why, the others are compared (as for
        # an unreadable .npy), and the run exits 1.
        res = json.load(open(os.path.join(out, "result.json")))
        check(res["counts"]["unreadable"] == 1, "broken archive (%s): one unreadable row" % what)
    else:
        check(not os.path.exists(out), "broken archive (%s): nothing written" % what)

print("compare_tensor_dumps: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
