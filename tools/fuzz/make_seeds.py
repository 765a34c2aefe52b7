#!/usr/bin/python3
"""Write the seed corpora of the readers' fuzz harnesses (tools/fuzz/seeds/).

Usage: make_seeds.py [SEEDS_DIR]. Deterministic: the same files every time,
so the committed seeds can be checked against a fresh run. Each harness
reads its first byte as the reader to use (see its opening comment); the
seeds carry that byte. Needs python3-numpy and Debian's libonnx-testdata
(for the .pb seeds, skipped with a message when it is missing).
"""
import io
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = "/usr/share/libonnx-testdata/data/node"


def npy(a, version=None):
    f = io.BytesIO()
    if version:
        np.lib.format.write_array(f, a, version=version)
    else:
        np.save(f, a)
    return f.getvalue()


def put(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def tensorfile(d):
    arrays = {
        "f4": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f2": np.array([1.5, -2, 65504], np.float16),
        "i8_big": np.arange(4, dtype=">i8"),
        "u1_scalar": np.array(7, np.uint8),
        "b1": np.array([True, False, True]),
        "c8": np.array([1 + 2j], np.complex64),
        "fortran": np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4)),
        "empty": np.zeros((0, 3), np.int32),
    }
    for name, a in arrays.items():
        put(d, "npy_%s" % name, b"\x00" + npy(a))
        put(d, "npyfile_%s" % name, b"\x01" + npy(a))
    put(d, "npy_v2", b"\x00" + npy(np.ones((2, 2), np.float32), version=(2, 0)))
    put(d, "npy_descr_nul", b"\x00" + npy(np.ones(2, np.float32)).replace(b"'<f4'", b"'<f4\x00'"))
    sources = [("pb_tensor", 2, "test_abs/test_data_set_0/input_0.pb"),
               ("pb_string", 2, "test_strnormalizer_export_monday_casesensintive_nochangecase/"
                                "test_data_set_0/input_0.pb"),
               ("pb_sequence", 3, "test_identity_sequence/test_data_set_0/input_0.pb"),
               ("pb_optional", 4, "test_optional_get_element/test_data_set_0/input_0.pb"),
               ("pb_optional_empty", 4, "test_optional_has_element_empty/test_data_set_0/input_0.pb")]
    for name, sel, rel in sources:
        path = os.path.join(TESTDATA, rel)
        if not os.path.exists(path):
            print("skip %s: %s is missing (libonnx-testdata)" % (name, path))
            continue
        put(d, name, bytes([sel]) + open(path, "rb").read())
    # .bin: dtype code, rank, dims (each mod 9), then the data.
    put(d, "bin_f32", bytes([5, 1, 2, 2]) + np.ones(4, np.float32).tobytes())
    put(d, "bin_f32_as_f16", bytes([5, 1, 2, 2]) + np.ones(4, np.float16).tobytes())
    put(d, "bin_i64", bytes([5, 7, 1, 3]) + np.arange(3, dtype=np.int64).tobytes())


MAP = b'''{"graph":[{"name":"g","op":[
 {"name":"x","type":"Data","attr":[{"key":"_datadump_original_op_names","value":{"list":{"s":["x"]}}}],
  "output_desc":[{"dtype":"DT_FLOAT","shape":{"dim":[1,3]},"attr":[
   {"key":"_datadump_origin_name","value":{"s":"x"}},{"key":"_datadump_origin_output_index","value":{"i":0}}]}]},
 {"name":"Exp_3Mul_6Add_9","type":"Add","input":["x:0"],"attr":[
  {"key":"_datadump_original_op_names","value":{"list":{"s":["Exp_3","Mul_6","Add_9"]}}},
  {"key":"pass_name_ub","value":{"s":"AutomaticUbFusion"}}],
  "output_desc":[{"dtype":"DT_FLOAT16","shape":{"dim":[1,3]},"attr":[
   {"key":"_datadump_origin_name","value":{"s":"Add_9"}}]}]}]}]}
'''


def json_seeds(d):
    put(d, "map", MAP)
    put(d, "escapes", b'{"a\\u00e9":"\\ud83d\\ude00\\n\\t\\"\\\\","n":[1,-0.5,2e300,-0,true,false,null]}')
    put(d, "not_utf8", b'{"name":"\\udcff\\udc80ok"}')
    put(d, "nested", b"[" * 40 + b"1" + b"]" * 40)
    put(d, "empty", b"{}")


def pipeline(d):
    configs = os.path.join(os.path.dirname(os.path.dirname(HERE)), "configs")
    for f in sorted(os.listdir(configs)):
        if f.endswith(".yaml"):
            shutil.copy(os.path.join(configs, f), os.path.join(d, f))
    put(d, "spec", b"insert-clip:ops=Exp,Softmax,position=before\npasses:\n  - remove-identity\n")
    put(d, "shapes", b"set-input-shape:shapes=x:4,77,40;mask:4,-1\n"
                     b"passes:\n  - set-input-shape:\n      shapes: {x: [4, 77, 40], mask: \"4,-1\"}\n")
    put(d, "anchors", b"verify: true\npasses:\n  - &a remove-identity\n  - *a\n")


def precision(d):
    put(d, "switch_json", b'\x00{"Switch": {"GraphFusion": {"ALL": "off", "ConvBatchnormFusionPass": '
                          b'"on"}, "UBFusion": {"ALL": "off"}}}')
    put(d, "switch_lines", b"\x00ConvBatchnormFusionPass:off\r\nAutomaticUbFusion:on\nMyPass:off\n")
    put(d, "keep", b"\x01Exp_12\nOpType::LayerNorm\n\n  Softmax_7  \n")
    put(d, "customize", b"\x02Exp_12::InputDtype:float32,OutputDtype:float32\n"
                        b"OpType::Softmax:InputDtype:float16,float16,OutputDtype:float32\n")
    put(d, "opmode", b"\x03[ByOpType]\nExp=high_precision\n[ByNodeName]\nSoftmax_7=keep_fp16\n")
    put(d, "opmode_old", b"\x03Exp=high_performance\n")


def npz(d):
    """Archives laid out as np.savez and np.savez_compressed write them
    (ZIP64 local headers, members <key>.npy; a fixed date so that the seeds
    are the same every time), one with a tensor name holding '/', and one
    with a member that is not .npy."""
    import zipfile
    arrays = {"/conv/Conv_output_0": np.arange(6, dtype=np.float32).reshape(2, 3),
              "Split__7:0": np.array([1.5, -2], np.float16), "i": np.arange(3)}
    for name, method in (("savez", zipfile.ZIP_STORED), ("savez_compressed", zipfile.ZIP_DEFLATED)):
        f = io.BytesIO()
        with zipfile.ZipFile(f, "w", method) as z:
            for key, a in arrays.items():
                info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = method
                with z.open(info, "w", force_zip64=True) as m:
                    m.write(npy(a))
        put(d, name, f.getvalue())
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo("notes.txt", date_time=(1980, 1, 1, 0, 0, 0)), b"not a tensor")
        z.writestr(zipfile.ZipInfo("a/b.npy", date_time=(1980, 1, 1, 0, 0, 0)), npy(np.ones((2, 2))))
    put(d, "plain_zip", f.getvalue())


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "seeds")
    for name, fn in [("tensorfile", tensorfile), ("json", json_seeds), ("pipeline", pipeline),
                     ("precision", precision), ("npz", npz)]:
        d = os.path.join(root, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        fn(d)
        print("%s: %d seeds" % (d, len(os.listdir(d))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
