#!/usr/bin/python3
"""Generates the tiny ONNX models of the toolchain tests (Debian's onnx 1.12).

usage: make_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import make_hostile_models

rng = np.random.default_rng(1234)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)


def mobilenet_like(out):
    """Conv+BN+HardSwish-ish, depthwise, SE block, pools, head with shape chain."""
    inits = [
        numpy_helper.from_array(f32(8, 3, 3, 3), "w1"),
        numpy_helper.from_array(np.abs(f32(8)) + 0.5, "bn_s"), numpy_helper.from_array(f32(8), "bn_b"),
        numpy_helper.from_array(f32(8), "bn_m"), numpy_helper.from_array(np.abs(f32(8)) + 0.5, "bn_v"),
        numpy_helper.from_array(f32(8, 1, 3, 3), "wdw"), numpy_helper.from_array(f32(8), "bdw"),
        numpy_helper.from_array(f32(4, 8, 1, 1), "wse1"), numpy_helper.from_array(f32(4), "bse1"),
        numpy_helper.from_array(f32(8, 4, 1, 1), "wse2"), numpy_helper.from_array(f32(8), "bse2"),
        numpy_helper.from_array(f32(16, 10), "fc_w"), numpy_helper.from_array(f32(10), "fc_b"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
        numpy_helper.from_array(np.array(0.0, np.float32), "clip_lo"),
        numpy_helper.from_array(np.array(6.0, np.float32), "clip_hi"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn1"], name="bn1"),
        helper.make_node("Clip", ["bn1", "clip_lo", "clip_hi"], ["r1"], name="relu6"),
        helper.make_node("Conv", ["r1", "wdw", "bdw"], ["dw"], name="dwconv", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["dw"], ["dwr"], name="dwrelu"),
        helper.make_node("GlobalAveragePool", ["dwr"], ["gap"], name="se_pool"),
        helper.make_node("Conv", ["gap", "wse1", "bse1"], ["se1"], name="se_conv1"),
        helper.make_node("Relu", ["se1"], ["se1r"], name="se_relu"),
        helper.make_node("Conv", ["se1r", "wse2", "bse2"], ["se2"], name="se_conv2"),
        helper.make_node("HardSigmoid", ["se2"], ["se2h"], name="se_hsig", alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["dwr", "se2h"], ["se"], name="se_mul"),
        helper.make_node("Identity", ["se"], ["se_id"], name="ident"),
        helper.make_node("MaxPool", ["se_id"], ["mp"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["mp"], ["ap"], name="avgpool", kernel_shape=[2, 2], strides=[2, 2]),
        # [1,8,2,2] -> shape chain -> [1, 32] ... then slice to 16 via Reshape to [2,16]
        helper.make_node("Shape", ["ap"], ["shp"], name="shape"),
        helper.make_node("Gather", ["shp", "zero"], ["batch"], name="gather", axis=0),
        helper.make_node("Concat", ["batch", "minus1"], ["newshape"], name="concat_shape", axis=0),
        helper.make_node("Reshape", ["ap", "newshape"], ["flat"], name="reshape"),
        helper.make_node("Transpose", ["flat"], ["flat_t"], name="transpose", perm=[1, 0]),
        helper.make_node("Reshape", ["flat_t", "two_by_16"], ["flat2"], name="reshape2"),
        helper.make_node("MatMul", ["flat2", "fc_w"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fc_b"], ["logits"], name="fc_bias"),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=-1),
        helper.make_node("Concat", ["prob", "logits"], ["both"], name="concat_out", axis=1),
    ]
    inits.append(numpy_helper.from_array(np.array([2, 16], np.int64), "two_by_16"))
    graph = helper.make_graph(
        nodes, "mobilenet_like",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 16, 16])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [2, 10]),
         helper.make_tensor_value_info("both", TensorProto.FLOAT, [2, 20])],
        inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "mobilenet_like.onnx"))


def dynamic(out):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    graph = helper.make_graph(nodes, "dynamic",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "height"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "height"])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "dynamic.onnx"))


def conv_pool(out):
    """Conv stride 2 + MaxPool ceil_mode on x [N, 3, H, W]: output sizes are long
    expressions of H and W (the CLI summary shows their ranges)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                              ceil_mode=1)]
    graph = helper.make_graph(nodes, "conv_pool",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "OH", "OW"])],
                              [numpy_helper.from_array(f32(4, 3, 3, 3), "w")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "conv_pool.onnx"))


def passthrough(out):
    """Output = Identity(input) and a UTF-8 name: needs a copy dispatch."""
    nodes = [helper.make_node("Identity", ["入力:0"], ["out/put"], name="id")]
    graph = helper.make_graph(nodes, "画像",
                              [helper.make_tensor_value_info("入力:0", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("out/put", TensorProto.FLOAT, [2, 3])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "passthrough.onnx"))


def external(out, name, location):
    w = numpy_helper.from_array(f32(4), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "16")):
        e = w.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "ext", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name))


def sequence_io(out):
    """Sequence and optional graph I/O: x seq(float [3]), opt optional(float [3]);
    y = x[1] + opt, cat = Concat(x), s = x with y appended (a sequence output),
    o = Optional(y) (an optional output)."""
    vi = helper.make_tensor_value_info
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    nodes = [helper.make_node("SequenceAt", ["x", "one"], ["x1"], name="at"),
             helper.make_node("OptionalGetElement", ["opt"], ["o1"], name="get"),
             helper.make_node("Add", ["x1", "o1"], ["y"], name="add"),
             helper.make_node("ConcatFromSequence", ["x"], ["cat"], name="cat", axis=0),
             helper.make_node("SequenceInsert", ["x", "y"], ["s"], name="insert"),
             helper.make_node("Optional", ["y"], ["o"], name="optional")]
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [3]))
    graph = helper.make_graph(
        nodes, "sequence_io",
        [helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_value_info("opt", opt_type)],
        [vi("y", TensorProto.FLOAT, [3]), vi("cat", TensorProto.FLOAT, [None]),
         helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [3]), helper.make_value_info("o", opt_type)],
        [one])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), os.path.join(out, "sequence_io.onnx"))


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    mobilenet_like(out)
    dynamic(out)
    passthrough(out)
    sequence_io(out)
    with open(os.path.join(out, "w.bin"), "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    external(out, "external_ok.onnx", "w.bin")
    external(out, "external_escape.onnx", "../w.bin")
    external(out, "external_abs.onnx", "/etc/passwd")
    make_hostile_models.write_all(out)
    conv_pool(out)
    with open(os.path.join(out, "garbage.onnx"), "wb") as f:
        f.write(b"\xff\xfe this is not a protobuf \x00\x01" * 7)
