#!/usr/bin/python3
"""Write models that use every corner of the ONNX schema, for round-trip tests.

Usage: make_kitchen_sink.py OUTDIR. Writes kitchen_sink.onnx (functions,
training info, sparse initializers, every attribute type, every tensor
dtype in typed fields and raw_data, strings, segments, annotations, unknown
domains, doc strings, metadata), unknown_fields.onnx (fields from a future
ONNX added to several messages) and external.onnx + weights.bin.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def typed_tensors():
    out = []
    # One tensor per dtype in its typed field ...
    out.append(helper.make_tensor("t_f32", TensorProto.FLOAT, [2], [1.5, -2.0]))
    out.append(helper.make_tensor("t_u8", TensorProto.UINT8, [3], [0, 7, 255]))
    out.append(helper.make_tensor("t_i8", TensorProto.INT8, [2], [-128, 127]))
    out.append(helper.make_tensor("t_u16", TensorProto.UINT16, [1], [65535]))
    out.append(helper.make_tensor("t_i16", TensorProto.INT16, [2], [-32768, 5]))
    out.append(helper.make_tensor("t_i32", TensorProto.INT32, [2], [-7, 2**31 - 1]))
    out.append(helper.make_tensor("t_i64", TensorProto.INT64, [2], [-(2**63), 2**63 - 1]))
    out.append(helper.make_tensor("t_str", TensorProto.STRING, [3], [b"a", b"", b"\xff\x00z"]))
    out.append(helper.make_tensor("t_bool", TensorProto.BOOL, [2], [True, False]))
    out.append(helper.make_tensor("t_f16", TensorProto.FLOAT16, [2],
                                  np.array([1.0, -0.5], dtype=np.float16).view(np.uint16)))
    out.append(helper.make_tensor("t_f64", TensorProto.DOUBLE, [1], [1e300]))
    out.append(helper.make_tensor("t_u32", TensorProto.UINT32, [1], [2**32 - 1]))
    out.append(helper.make_tensor("t_u64", TensorProto.UINT64, [1], [2**64 - 1]))
    out.append(helper.make_tensor("t_c64", TensorProto.COMPLEX64, [1], [1 + 2j]))
    out.append(helper.make_tensor("t_c128", TensorProto.COMPLEX128, [1], [3 - 4j]))
    out.append(helper.make_tensor("t_bf16", TensorProto.BFLOAT16, [1], [0x3f80]))
    # ... and the same kinds in raw_data.
    for dt, arr in [(TensorProto.FLOAT, np.arange(4, dtype=np.float32)),
                    (TensorProto.FLOAT16, np.arange(3, dtype=np.float16)),
                    (TensorProto.INT64, np.arange(3, dtype=np.int64)),
                    (TensorProto.BOOL, np.array([1, 0, 1], dtype=np.bool_)),
                    (TensorProto.COMPLEX128, np.array([1 + 1j], dtype=np.complex128))]:
        t = helper.make_tensor("raw_%d" % dt, dt, arr.shape, arr.tobytes(), raw=True)
        out.append(t)
    seg = helper.make_tensor("t_seg", TensorProto.FLOAT, [2], [0.0, 1.0])
    seg.segment.begin = 0
    seg.segment.end = 2
    seg.doc_string = "segmented"
    out.append(seg)
    empty = helper.make_tensor("t_empty", TensorProto.FLOAT, [0, 3], [])
    out.append(empty)
    return out


def kitchen_sink():
    inits = typed_tensors()
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sp", TensorProto.FLOAT, [2], [5.0, 6.0]),
        helper.make_tensor("sp_idx", TensorProto.INT64, [2], [1, 3]), [4])
    tp = helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 3])
    seq_tp = helper.make_sequence_type_proto(tp)
    map_tp = onnx.TypeProto()
    map_tp.map_type.key_type = TensorProto.STRING
    map_tp.map_type.value_type.CopyFrom(tp)
    opt_tp = helper.make_optional_type_proto(tp)
    body = helper.make_graph(
        [helper.make_node("Add", ["x", "outer_bias"], ["y_then"], name="then_add")],
        "then_g", [], [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, None)])
    body2 = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y_else"], name="else_id")],
        "else_g", [], [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, None)])
    custom = helper.make_node(
        "Fancy", ["x"], ["fancy_out"], name="fancy", domain="com.example",
        doc_string="an op nobody knows",
        f=0.5, i=-3, s=b"bytes\x00", t=numpy_helper.from_array(np.ones(2, np.float32), "attr_t"),
        floats=[1.0, 2.5], ints=[1, -2, 3], strings=[b"a", b"bc"],
        tensors=[numpy_helper.from_array(np.zeros(1, np.int32), "attr_t2")])
    # Attribute kinds helper.make_node cannot express directly.
    a = helper.make_attribute("g", body2)
    custom.attribute.append(a)
    custom.attribute.append(helper.make_attribute("gs", [body2, body2]))
    sa = onnx.AttributeProto(name="sparse", type=onnx.AttributeProto.SPARSE_TENSOR)
    sa.sparse_tensor.CopyFrom(sparse)
    custom.attribute.append(sa)
    sas = onnx.AttributeProto(name="sparses", type=onnx.AttributeProto.SPARSE_TENSORS)
    sas.sparse_tensors.extend([sparse, sparse])
    custom.attribute.append(sas)
    tpa = onnx.AttributeProto(name="tp", type=onnx.AttributeProto.TYPE_PROTO)
    tpa.tp.CopyFrom(seq_tp)
    custom.attribute.append(tpa)
    tps = onnx.AttributeProto(name="tps", type=onnx.AttributeProto.TYPE_PROTOS)
    tps.type_protos.extend([map_tp, opt_tp])
    custom.attribute.append(tps)
    ref = onnx.AttributeProto(name="refd", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT,
                              doc_string="refers to a function attribute")
    custom.attribute.append(ref)
    nodes = [
        helper.make_node("If", ["cond"], ["if_out"], name="if_node",
                         then_branch=helper.make_graph(
                             [helper.make_node("Add", ["x", "outer_bias"], ["y_then"],
                                               name="then_add")],
                             "then_g", [],
                             [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, None)]),
                         else_branch=body2),
        custom,
        helper.make_node("MyFunc", ["x"], ["func_out"], name="call", domain="local"),
        helper.make_node("Identity", ["t_f32"], ["", "unused_out"] if False else ["id_out"],
                         name=""),
    ]
    graph = helper.make_graph(
        nodes, "kitchen",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         onnx.ValueInfoProto(name="seq_in", type=seq_tp, doc_string="a sequence input")],
        [helper.make_tensor_value_info("if_out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("fancy_out", TensorProto.FLOAT, [None, 3]),
         helper.make_tensor_value_info("func_out", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("id_out", TensorProto.FLOAT, [2])],
        inits + [numpy_helper.from_array(np.ones(3, np.float32), "outer_bias")],
        doc_string="graph doc",
        value_info=[helper.make_tensor_value_info("y_unused_info", TensorProto.INT64, [1])],
        sparse_initializer=[sparse])
    ann = onnx.TensorAnnotation(tensor_name="x")
    ann.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="outer_bias")
    graph.quantization_annotation.append(ann)
    graph.input[0].type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    graph.input[0].type.denotation = "TENSOR"
    func = onnx.FunctionProto(name="MyFunc", domain="local", input=["a"], output=["b"],
                              attribute=["alpha"], doc_string="a local function")
    func.node.append(helper.make_node("Neg", ["a"], ["b"], name="neg"))
    func.opset_import.append(helper.make_opsetid("", 13))
    model = helper.make_model(graph, producer_name="kitchen", producer_version="1.0",
                              domain="org.surgeon", model_version=7, doc_string="model doc",
                              opset_imports=[helper.make_opsetid("", 16),
                                             helper.make_opsetid("com.example", 1),
                                             helper.make_opsetid("local", 1)],
                              functions=[func])
    model.ir_version = 8
    helper.set_model_props(model, {"author": "surgeon", "empty": ""})
    ti = model.training_info.add()
    ti.initialization.CopyFrom(helper.make_graph(
        [helper.make_node("Constant", [], ["init_c"], value_float=0.0)], "init", [],
        [helper.make_tensor_value_info("init_c", TensorProto.FLOAT, [])]))
    ti.algorithm.CopyFrom(helper.make_graph(
        [helper.make_node("Add", ["outer_bias", "outer_bias"], ["upd"])], "algo", [],
        [helper.make_tensor_value_info("upd", TensorProto.FLOAT, [3])]))
    ti.initialization_binding.add(key="outer_bias", value="init_c")
    ti.update_binding.add(key="outer_bias", value="upd")
    return model


def add_unknown(msg_bytes, field_no=99):
    """Append an unknown varint field and an unknown length-delimited field."""
    tag = (field_no << 3) | 0
    out = bytearray(msg_bytes)

    def varint(v):
        b = bytearray()
        while True:
            c = v & 0x7f
            v >>= 7
            if v:
                b.append(c | 0x80)
            else:
                b.append(c)
                return bytes(b)
    out += varint(tag) + varint(12345)
    out += varint(((field_no + 1) << 3) | 2) + varint(3) + b"abc"
    return bytes(out)


def unknown_fields():
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    node_bytes = add_unknown(node.SerializeToString())
    n2 = onnx.NodeProto()
    n2.ParseFromString(node_bytes)
    g = helper.make_graph([n2], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    g2 = onnx.GraphProto()
    g2.ParseFromString(add_unknown(g.SerializeToString(), 77))
    m = helper.make_model(g2, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    m2 = onnx.ModelProto()
    m2.ParseFromString(add_unknown(m.SerializeToString(), 90))
    return m2


def external(out):
    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    b = np.arange(64, dtype=np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    g = helper.make_graph([helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="gemm")], "ext",
                          [x], [y], [numpy_helper.from_array(w, "w"),
                                     numpy_helper.from_array(b, "b"),
                                     numpy_helper.from_array(np.ones(2, np.float32), "small")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save_model(m, os.path.join(out, "external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=1024)


def main():
    out = sys.argv[1]
    onnx.save(kitchen_sink(), os.path.join(out, "kitchen_sink.onnx"))
    with open(os.path.join(out, "unknown_fields.onnx"), "wb") as f:
        f.write(unknown_fields().SerializeToString())
    external(out)


if __name__ == "__main__":
    main()
