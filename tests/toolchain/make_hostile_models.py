"""Hostile and malformed ONNX models for hostile_test.cpp: each one once
crashed, aborted, exhausted memory or got an unclear error from the
toolchain. Written without onnx.checker (most would not pass it).

Called by make_models.py: write_all(OUTDIR) writes OUTDIR/hostile/*.onnx.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])


def model(nodes, inputs=(X,), outputs=(Y,), inits=(), opsets=(("", 13),)):
    g = helper.make_graph(list(nodes), "hostile", list(inputs), list(outputs), initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m


def weight(dims, raw_bytes=None, floats=None):
    """Float tensor 'w' with `dims` and data that need not match them."""
    t = helper.make_tensor("w", TensorProto.FLOAT, [1], [0.0])
    t.ClearField("float_data")
    t.dims[:] = dims
    if raw_bytes is not None:
        t.raw_data = b"\0" * raw_bytes
    else:
        t.float_data.extend(floats)
    return t


def add_w(w):
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[w])


def constant_add(w):
    return model([helper.make_node("Constant", [], ["w"], name="c", value=w),
                  helper.make_node("Add", ["x", "w"], ["y"], name="add")])


def constant_of_shape(dims):
    """A model of a few hundred bytes asking for a dims-sized float tensor, summed to a scalar."""
    shape = helper.make_tensor("s", TensorProto.INT64, [len(dims)], dims)
    nodes = [helper.make_node("Constant", [], ["shape"], name="shape", value=shape),
             helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill",
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
             helper.make_node("ReduceSum", ["big"], ["sum"], name="sum", keepdims=0),
             helper.make_node("Add", ["x", "sum"], ["y"], name="add")]
    return model(nodes, inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                 outputs=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])


def external(out, name, **keys):
    t = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in keys.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    write(out, name, model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [xs], [ys], [t]))


def write(out, name, m):
    with open(os.path.join(out, name), "wb") as f:
        f.write(m.SerializeToString())


def write_all(out):
    out = os.path.join(out, "hostile")
    os.makedirs(out, exist_ok=True)
    # Initializer / Constant data that disagrees with the dims.
    write(out, "raw_short.onnx", add_w(weight([1 << 20], raw_bytes=16)))
    write(out, "raw_long.onnx", add_w(weight([1], raw_bytes=64)))
    write(out, "typed_short_constant.onnx", constant_add(weight([1 << 20], floats=[1.0, 2.0])))
    write(out, "negative_dim.onnx", add_w(weight([-4], raw_bytes=16)))
    write(out, "dims_overflow.onnx", add_w(weight([1 << 32, 1 << 32], raw_bytes=16)))
    write(out, "dims_huge_constant.onnx", constant_add(weight([1 << 62], floats=[1.0])))
    # Declared graph dimensions.
    write(out, "input_dim_2_62.onnx",
          model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 62])]))
    # Shapes computed from the model, and constant folding.
    write(out, "constant_of_shape_2_40.onnx", constant_of_shape([1 << 20, 1 << 20]))
    write(out, "constant_of_shape_2_62.onnx", constant_of_shape([1 << 31, 1 << 31]))
    write(out, "constant_of_shape_2_61.onnx", constant_of_shape([1 << 30, 1 << 31]))
    write(out, "constant_of_shape_20000.onnx", constant_of_shape([20000, 20000]))
    # Graph structure.
    write(out, "dangling_input.onnx", model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")]))
    write(out, "cycle.onnx", model([helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
                                    helper.make_node("Relu", ["a"], ["b"], name="n2"),
                                    helper.make_node("Relu", ["b"], ["y"], name="n3")]))
    write(out, "duplicate_output.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="n1"),
                                               helper.make_node("Sigmoid", ["x"], ["y"], name="n2")]))
    write(out, "output_never_produced.onnx", model([helper.make_node("Relu", ["x"], ["z"], name="relu")]))
    # Opsets.
    relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    write(out, "opset_2_40.onnx", model(relu, opsets=[("", 1 << 40)]))
    write(out, "opset_future.onnx", model(relu, opsets=[("", 99)]))
    write(out, "opset_zero.onnx", model(relu, opsets=[("", 0)]))
    write(out, "opset_ml_huge.onnx", model(relu, opsets=[("", 13), ("ai.onnx.ml", 1 << 40)]))
    # External data.
    with open(os.path.join(out, "w.bin"), "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    os.makedirs(os.path.join(out, "subdir"), exist_ok=True)
    external(out, "external_ok.onnx", location="w.bin")
    external(out, "external_abs.onnx", location="/etc/passwd")
    external(out, "external_dotdot.onnx", location="subdir/../../w.bin")
    external(out, "external_missing.onnx", location="absent.bin")
    external(out, "external_directory.onnx", location="subdir")
    external(out, "external_offset_past_end.onnx", location="w.bin", offset="8")
    external(out, "external_offset_2_62.onnx", location="w.bin", offset=str(1 << 62))
    external(out, "external_offset_negative.onnx", location="w.bin", offset="-8")
    external(out, "external_length_2_62.onnx", location="w.bin", length=str(1 << 62))
