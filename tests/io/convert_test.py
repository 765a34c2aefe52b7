#!/usr/bin/python3
"""End-to-end tests of `surgeon convert` and `surgeon inspect` (issue 2).

Usage: convert_test.py SURGEON. Builds models with python3-onnx, runs the CLI
and checks the results with python3-onnx. Prints one line per check; exits 1
on the first failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))

SURGEON = None


def run(*args, expect=0):
    p = subprocess.run([SURGEON] + list(args), capture_output=True, text=True)
    if p.returncode != expect:
        raise AssertionError("surgeon %s: exit %d (want %d)\nstdout: %s\nstderr: %s" %
                             (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError("%s %s" % (name, detail))
    print("ok  %s" % name)


def load_full(path):
    """The model with external data read in. onnx marks tensors it loaded
    from external files as data_location DEFAULT explicitly; clear that
    marker so a model inlined by us compares equal to one inlined by onnx."""
    m = onnx.load(path, load_external_data=True)
    for t in m.graph.initializer:
        if t.data_location == onnx.TensorProto.DEFAULT:
            t.ClearField("data_location")
    return m


def modern_opsets(tmp):
    """Opset-18+ forms (ReduceMean's axes input, Split's num_outputs) load and
    round-trip, and an opset past the table's release is not checked against
    an older version's arity (issue 16, part 1)."""
    h = onnx.helper
    T = onnx.TensorProto
    for opset in (18, 21, 99):
        nodes = [
            h.make_node("ReduceMean", ["x", "axes"], ["m"], name="node_mean", keepdims=1),
            h.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1, num_outputs=2),
            # Beyond the table's release nothing can be checked: an arity no
            # known version has still loads there (a newer version may have it).
            h.make_node("Relu", ["m", "s0"] if opset == 99 else ["m"], ["r"], name="relu"),
        ]
        g = h.make_graph(nodes, "modern", [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("r", "s1")],
                         [h.make_tensor("axes", T.INT64, [1], [1])])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        src = os.path.join(tmp, "opset%d.onnx" % opset)
        onnx.save(m, src)
        out = os.path.join(tmp, "opset%d_rt.onnx" % opset)
        run("convert", src, "-o", out)
        check("opset %d model round-trips" % opset, onnx.load(out) == m)
        j = json.loads(run("inspect", src, "--json").stdout)
        check("opset %d model inspects" % opset, j["op_types"].get("ReduceMean") == 1, str(j))
        # the runtime's range: its kernels reach the opset-23 additions
        rt = list(j.get("runtime_opsets", {}).values())
        check("inspect --json names the runtime's opset range", len(rt) == 1 and rt[0] >= 23, str(j))
        text = run("inspect", src).stdout
        check("inspect names the runtime's opset range",
              "runtime:      ai.onnx opsets 1 to %d" % rt[0] in text, text)
        check("opset %d: a note exactly when past the operator table" % opset,
              ("newer than the operator table" in text) == (opset == 99), text)
    # Within the table's range the arity is still checked.
    g = h.make_graph([h.make_node("Relu", ["x", "x"], ["r"], name="relu2")], "bad",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("r", T.FLOAT, [2])])
    bad = os.path.join(tmp, "bad_arity.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 21)]), bad)
    p = run("inspect", bad, expect=1)
    check("opset 21 arity is checked", "relu2" in p.stderr and "Relu" in p.stderr, p.stderr)


def narrow_tensor(name, dtype, dims, elems, form="raw"):
    """A TensorProto of a type python3-onnx 1.12 does not know, by number:
    float8 codes one per byte, 4-bit elements packed two per byte (low
    nibble first, an odd count padded), in raw_data or int32_data."""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    b = [e & (0xF if dtype >= 21 else 0xFF) for e in elems]
    if dtype >= 21:
        b = b + [0] * (len(b) % 2)
        b = [b[i] | b[i + 1] << 4 for i in range(0, len(b), 2)]
    if form == "int32":
        t.int32_data.extend(b)
    else:
        t.raw_data = bytes(b)
    return t


def narrow_types(tmp):
    """float8, uint4/int4 and float4e2m1 tensors (issue 16, part 3): loaded,
    inspected and written back byte for byte, moved to external data with
    their packed size and brought back."""
    h = onnx.helper
    inits = [narrow_tensor("i4", 22, [5], [1, -2, 3, -8, 7]),
             narrow_tensor("u4", 21, [3], [15, 0, 9], "int32"),
             narrow_tensor("f4", 23, [3], [1, 9, 7]),
             narrow_tensor("f8a", 17, [4], [0x38, 0xc0, 0x7f, 0x01]),
             narrow_tensor("f8b", 18, [2, 2], [0x80, 1, 2, 3], "int32"),
             narrow_tensor("f8c", 19, [3], [0x7c, 0xfc, 0x7e]),
             narrow_tensor("f8d", 20, [1], [0x7f])]
    nodes = [h.make_node("Identity", [t.name], ["o_" + t.name]) for t in inits]
    outs = [h.make_tensor_value_info("o_" + t.name, t.data_type, list(t.dims)) for t in inits]
    g = h.make_graph(nodes + [h.make_node("Identity", ["x"], ["y"])], "narrow",
                     [h.make_tensor_value_info("x", 17, [2])],
                     outs + [h.make_tensor_value_info("y", 17, [2])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    m.ir_version = 10
    src = os.path.join(tmp, "narrow.onnx")
    onnx.save(m, src)
    out = os.path.join(tmp, "narrow_rt.onnx")
    run("convert", src, "-o", out)
    with open(src, "rb") as f1, open(out, "rb") as f2:
        check("narrow types round-trip byte for byte", f1.read() == f2.read())
    j = json.loads(run("inspect", src, "--json").stdout)
    check("inspect names float8 inputs", j["inputs"][0]["dtype"] == "float8e4m3fn", str(j))
    names = [o["dtype"] for o in j["outputs"]]
    check("inspect names the narrow types", names == [
        "int4", "uint4", "float4e2m1", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
        "float8e5m2fnuz", "float8e4m3fn"], str(names))
    check("inspect counts packed bytes", j["initializer_bytes"] == 3 + 2 + 2 + 4 + 4 + 3 + 1,
          str(j["initializer_bytes"]))
    # To external data: the 4-bit tensors take ceil(n/2) bytes there.
    xd = os.path.join(tmp, "narrow_xd.onnx")
    run("convert", src, "-o", xd, "--external-data", "n.bin", "--size-threshold", "1")
    mx = onnx.load(xd, load_external_data=False)
    lengths = {t.name: int({e.key: e.value for e in t.external_data}["length"])
               for t in mx.graph.initializer}
    check("external lengths are the stored sizes", lengths == {
        "i4": 3, "u4": 2, "f4": 2, "f8a": 4, "f8b": 4, "f8c": 3, "f8d": 1}, str(lengths))
    back = os.path.join(tmp, "narrow_back.onnx")
    run("convert", xd, "-o", back, "--inline")
    got = {t.name: t for t in onnx.load(back).graph.initializer}
    ok = True
    for t in inits:
        stored = bytes(t.int32_data) if len(t.int32_data) else t.raw_data
        ok &= got[t.name].raw_data == stored and got[t.name].data_type == t.data_type
    check("external and back keeps every byte", ok)
    # A payload not packed (one byte per int4 element) is refused, named.
    bad = h.make_graph([], "bad", [], [], [narrow_tensor("w4", 21, [3], [1, 2, 3])])
    bad.initializer[0].raw_data = bytes([1, 2, 3])
    bad_path = os.path.join(tmp, "narrow_bad.onnx")
    onnx.save(h.make_model(bad, opset_imports=[h.make_opsetid("", 21)]), bad_path)
    p = run("inspect", bad_path, expect=1)
    check("an unpacked uint4 payload is an error naming it",
          "'w4'" in p.stderr and "two 4-bit elements per byte" in p.stderr, p.stderr)


def main():
    global SURGEON
    SURGEON = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="sg-convert-")
    try:
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_kitchen_sink.py"), src],
                       check=True)
        for name in ("kitchen_sink.onnx", "unknown_fields.onnx"):
            out = os.path.join(tmp, "rt_" + name)
            run("convert", os.path.join(src, name), "-o", out)
            a = onnx.load(os.path.join(src, name))
            b = onnx.load(out)
            check("round trip equals original: " + name, a == b)
            with open(os.path.join(src, name), "rb") as f1, open(out, "rb") as f2:
                check("round trip is byte-identical: " + name, f1.read() == f2.read())
        check("unknown fields survive", len(onnx.load(os.path.join(tmp, "rt_unknown_fields.onnx"))
                                            .SerializeToString()) ==
              os.path.getsize(os.path.join(src, "unknown_fields.onnx")))
        try:
            onnx.checker.check_model(os.path.join(tmp, "rt_kitchen_sink.onnx"))
            kitchen_ok = True
        except Exception:
            kitchen_ok = False
        try:
            onnx.checker.check_model(os.path.join(src, "kitchen_sink.onnx"))
            orig_ok = True
        except Exception:
            orig_ok = False
        check("checker agrees on the kitchen sink", kitchen_ok == orig_ok)

        ext = os.path.join(src, "external.onnx")
        orig = onnx.load(ext, load_external_data=False)
        # Same folder: tensors keep pointing at weights.bin, no new data file.
        same = os.path.join(src, "same.onnx")
        run("convert", ext, "-o", same)
        check("same folder keeps the external reference",
              onnx.load(same, load_external_data=False) == orig)
        check("same folder writes no data file", not os.path.exists(same + ".data"))
        # Another folder: data copied to OUT.data.
        other_dir = os.path.join(tmp, "other")
        os.mkdir(other_dir)
        other = os.path.join(other_dir, "m.onnx")
        run("convert", ext, "-o", other)
        m = onnx.load(other, load_external_data=False)
        locs = {e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"}
        check("other folder uses OUT.data", locs == {"m.onnx.data"}, str(locs))
        check("other folder has the same tensors", load_full(other) == load_full(ext))
        # --inline
        inl = os.path.join(tmp, "inline.onnx")
        run("convert", ext, "-o", inl, "--inline")
        m = onnx.load(inl, load_external_data=False)
        check("--inline leaves no external tensor",
              all(t.data_location != onnx.TensorProto.EXTERNAL for t in m.graph.initializer))
        check("--inline keeps the values", load_full(inl) == load_full(ext))
        # --external-data with a threshold: the 256-byte bias goes out too.
        xd = os.path.join(tmp, "xd.onnx")
        run("convert", inl, "-o", xd, "--external-data", "w.bin", "--size-threshold", "100")
        m = onnx.load(xd, load_external_data=False)
        ext_names = sorted(t.name for t in m.graph.initializer
                           if t.data_location == onnx.TensorProto.EXTERNAL)
        check("--external-data moves tensors above the threshold", ext_names == ["b", "w"],
              str(ext_names))
        check("--external-data keeps the values", load_full(xd) == load_full(ext))
        check("onnx checker accepts external output", onnx.checker.check_model(xd) is None)
        # External data written by us is re-read by us and by onnx.
        run("convert", xd, "-o", os.path.join(tmp, "xd2.onnx"), "--inline")
        check("our external data reads back", load_full(os.path.join(tmp, "xd2.onnx")) ==
              load_full(ext))

        # The input is never overwritten without --in-place.
        before = open(inl, "rb").read()
        p = run("convert", inl, "-o", inl, expect=1)
        check("refuses to overwrite the input", "in-place" in p.stderr and
              open(inl, "rb").read() == before)
        run("convert", inl, "-o", inl, "--in-place")
        check("--in-place rewrites the input", load_full(inl) == load_full(ext))
        check("no temporary files left", not [f for f in os.listdir(tmp) if ".tmp." in f])

        # Usage errors exit 2.
        run("convert", inl, expect=2)
        run("convert", "-o", "x.onnx", expect=2)
        run("convert", inl, "-o", "y.onnx", "--inline", "--external-data", "d.bin", expect=2)
        run("convert", inl, "-o", "y.onnx", "--external-data", "../d.bin", expect=2)
        run("convert", inl, "-o", "y.onnx", "--size-threshold", "abc", expect=2)
        run("inspect", expect=2)
        run("inspect", inl, "--bogus", expect=2)
        run("frobnicate", expect=2)
        check("usage errors exit 2", True)
        p = run("--help")
        check("--help lists commands", "inspect" in p.stdout and "convert" in p.stdout)
        p = run("convert", "--help")
        check("convert --help", "--external-data" in p.stdout)
        p = run("--version")
        check("--version", p.stdout.startswith("surgeon "))

        # inspect: text and JSON.
        p = run("inspect", os.path.join(src, "kitchen_sink.onnx"), "--json", "--nodes")
        j = json.loads(p.stdout)
        check("inspect --json inputs", [i["name"] for i in j["inputs"]] == ["x", "cond", "seq_in"])
        check("inspect --json symbolic dims", j["inputs"][0]["shape"] == ["batch", 3])
        check("inspect --json subgraph nodes", j["nodes"] == 4 and j["nodes_with_subgraphs"] == 9)
        check("inspect --json op histogram", j["op_types"]["com.example.Fancy"] == 1)
        check("inspect --json node list", len(j["node_list"]) == 4)
        p = run("inspect", ext, "--json")
        j = json.loads(p.stdout)
        check("inspect lists external files", j["external_data"] ==
              [{"file": "weights.bin", "tensors": 1, "bytes": 16384}])
        p = run("inspect", ext)
        check("inspect text", "weights.bin" in p.stdout and "Gemm" in p.stdout)
        modern_opsets(tmp)
        narrow_types(tmp)
    finally:
        shutil.rmtree(tmp)
    print("all convert/inspect checks passed")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL", e)
        sys.exit(1)
