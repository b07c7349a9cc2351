#!/usr/bin/python3
"""Writes the seed corpus of the ONNX import fuzzer: small valid models that
together reach the importer's main paths (initializers as raw_data and as
typed fields, Constant nodes, convolutions, pooling, recurrent layers,
reductions, scans, shape arithmetic, control flow, dynamic dimensions).

Usage: make_seed_models.py OUT_DIR   (needs Debian's python3-onnx)
Each model is OUT_DIR/<name>.onnx; deterministic (fixed seed).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="oaaxvk-fuzz-seed")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def seeds():
    yield "add_relu", model("add_relu", [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
                            [vi("x", [1, 4])], [vi("y", [1, 4])], [numpy_helper.from_array(f32(1, 4), "b")])
    yield "int_add_relu", model("int_add_relu", [helper.make_node("Add", ["x", "b"], ["s"]),
                                                 helper.make_node("Relu", ["s"], ["y"])],
                                [vi("x", [4], TensorProto.INT32)], [vi("y", [4], TensorProto.INT32)],
                                [numpy_helper.from_array(np.array([1, -9, -2, 2], np.int32), "b")])
    w = f32(4, 3, 3, 3)
    yield "conv_pool", model("conv_pool", [
        helper.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node("GlobalAveragePool", ["p"], ["y"])],
        [vi("x", [1, 3, 9, 9])], [vi("y", [1, 4, 1, 1])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(f32(4), "cb")])
    # Typed (non-raw) initializer data.
    t = helper.make_tensor("m", TensorProto.FLOAT, [4, 2], f32(4, 2).flatten().tolist())
    yield "matmul_typed", model("matmul_typed", [helper.make_node("MatMul", ["x", "m"], ["y"])],
                                [vi("x", [3, 4])], [vi("y", [3, 2])], [t])
    yield "reshape_transpose", model("reshape_transpose", [
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0])],
        [vi("x", [2, 6])], [vi("y", [4, 3])], [numpy_helper.from_array(np.array([3, 4], np.int64), "shape")])
    yield "constant_of_shape_reduce", model("constant_of_shape_reduce", [
        helper.make_node("ConstantOfShape", ["shape"], ["c"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
        helper.make_node("Add", ["c", "x"], ["a"]),
        helper.make_node("ReduceSum", ["a"], ["y"], keepdims=0)],
        [vi("x", [4, 4])], [vi("y", [])], [numpy_helper.from_array(np.array([4, 4], np.int64), "shape")])
    yield "cumsum_topk", model("cumsum_topk", [
        helper.make_node("CumSum", ["x", "axis"], ["c"]),
        helper.make_node("TopK", ["c", "k"], ["v", "i"], axis=1)],
        [vi("x", [2, 16])], [vi("v", [2, 3]), vi("i", [2, 3], TensorProto.INT64)],
        [numpy_helper.from_array(np.array(1, np.int64), "axis"), numpy_helper.from_array(np.array([3], np.int64), "k")])
    yield "softmax_cast", model("softmax_cast", [
        helper.make_node("Softmax", ["x"], ["s"], axis=-1),
        helper.make_node("Cast", ["s"], ["y"], to=TensorProto.INT64)],
        [vi("x", [3, 5])], [vi("y", [3, 5], TensorProto.INT64)])
    h = 3
    yield "lstm", model("lstm", [helper.make_node("LSTM", ["x", "W", "R", "B"], ["Y", "Yh"], hidden_size=h,
                                                  direction="bidirectional")],
                        [vi("x", [2, 1, 4])], [vi("Y", [2, 2, 1, h]), vi("Yh", [2, 1, h])],
                        [numpy_helper.from_array(f32(2, 4 * h, 4), "W"), numpy_helper.from_array(f32(2, 4 * h, h), "R"),
                         numpy_helper.from_array(f32(2, 8 * h), "B")])
    yield "resize_pad", model("resize_pad", [
        helper.make_node("Resize", ["x", "", "scales"], ["r"], mode="linear", coordinate_transformation_mode="align_corners"),
        helper.make_node("Pad", ["r", "pads"], ["y"], mode="constant")],
        [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 10, 10])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
         numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")], opset=13)
    yield "shape_arith", model("shape_arith", [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["d"], axis=0),
        helper.make_node("Mul", ["d", "two"], ["d2"]),
        helper.make_node("Unsqueeze", ["d2", "zero"], ["d2u"]),
        helper.make_node("Concat", ["d2u", "one_u"], ["shape"], axis=0),
        helper.make_node("Expand", ["x1", "shape"], ["y"])],
        [vi("x", [1, 3]), vi("x1", [1, 1])], [vi("y", [6, 1])],
        [numpy_helper.from_array(np.array(1, np.int64), "one"), numpy_helper.from_array(np.array(2, np.int64), "two"),
         numpy_helper.from_array(np.array([0], np.int64), "zero"),
         numpy_helper.from_array(np.array([1], np.int64), "one_u")])
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [], [vi("t", [2])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [], [vi("e", [2])])
    yield "if_const", model("if_const", [
        helper.make_node("Constant", [], ["c"], value=helper.make_tensor("cv", TensorProto.BOOL, [], [True])),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [vi("x", [2])], [vi("y", [2])])
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x"], ["s_out"]),
                              helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                             [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("s_in", [2])],
                             [vi("cond_out", [], TensorProto.BOOL), vi("s_out", [2])])
    yield "loop", model("loop", [helper.make_node("Loop", ["trip", "", "s0"], ["y"], body=body)],
                        [vi("x", [2]), vi("s0", [2])], [vi("y", [2])],
                        [numpy_helper.from_array(np.array(3, np.int64), "trip")])
    yield "dynamic_batch", model("dynamic_batch", [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)],
                                 [vi("x", ["N", 4])], [vi("y", ["N", 2])], [numpy_helper.from_array(f32(2, 4), "w")])
    yield "gather_where", model("gather_where", [
        helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
        helper.make_node("Greater", ["g", "zero_f"], ["m"]),
        helper.make_node("Where", ["m", "g", "zero_f"], ["y"])],
        [vi("x", [2, 5])], [vi("y", [2, 3])],
        [numpy_helper.from_array(np.array([4, 0, 2], np.int64), "idx"),
         numpy_helper.from_array(np.array(0, np.float32), "zero_f")])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seed_models.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for name, m in seeds():
        onnx.save(m, os.path.join(out, name + ".onnx"))
        n += 1
    print(f"{n} seed models in {out}")


if __name__ == "__main__":
    main()
