#!/usr/bin/env python3
"""Builds models of the operator forms that changed in ai.onnx opset 18 and
checks each with the checker of the pinned ONNX release: run it with the
project's Python environment (scripts/python-env.sh), whose onnx knows these
opsets:
  opset18_mix.onnx  (x: [2, 6, 5], and its input in the manifest dir in/)
    mean_axis1   ReduceMean-18, axes [1] as an initializer input, keepdims 1
    mean_last0   ReduceMean-18, axes [-1, 0] as an input, keepdims 0
    max_default  ReduceMax-18 without axes: every axis, keepdims 1
    l2_02        ReduceL2-18, axes [0, 2] as an input, keepdims 1
    lse_2        ReduceLogSumExp-18, axes [2] as an input, keepdims 0
    split_a/b/c  Split-18 on axis 2 with num_outputs 3: 5 = 2 + 2 + 1 (the
                 last chunk is smaller), each output through a Relu
    pad_axes2    Pad-18 with `axes` [2] as an input: pads [1, 1] on axis 2
  opset23_mix.onnx  (x: [1, 3, 8, 8], input in in23/), opset 23, IR 11:
                 Conv-22 -> Transpose-23 -> Reshape-23 -> Unsqueeze-23 ->
                 Identity-23 -> Cast-23 (y), and Shape-23 -> Cast-23 (sf)
  opset20_reduce.onnx  (x: [2, 6, 5], input in in20/), opset 20:
                 ReduceMax-20 / ReduceMin-20 over axis 1 of x > 0 (bool: any,
                 all; rows of x all positive, all negative and mixed), cast to
                 float (any, all), and ReduceMax-20 of x (max)

usage: make_opset18_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(graph, path, opset=18, ir_version=8, check=True):
    model = helper.make_model(graph, producer_name="make_opset18_models.py",
                              opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)
    if check:
        onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def main():
    if onnx.defs.onnx_opset_version() < 23:
        sys.exit(f"make_opset18_models.py: onnx {onnx.__version__} knows opsets up to "
                 f"{onnx.defs.onnx_opset_version()}; run it with the project's Python environment "
                 "(scripts/python-env.sh)")
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(18)
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    f = TensorProto.FLOAT

    nodes = [
        helper.make_node("ReduceMean", ["x", "axes1"], ["mean_axis1"], name="mean_axis1", keepdims=1),
        helper.make_node("ReduceMean", ["x", "axes_last0"], ["mean_last0"], name="mean_last0", keepdims=0),
        helper.make_node("ReduceMax", ["x"], ["max_default"], name="max_default", keepdims=1),
        helper.make_node("ReduceL2", ["x", "axes02"], ["l2_02"], name="l2_02", keepdims=1),
        helper.make_node("ReduceLogSumExp", ["x", "axes2"], ["lse_2"], name="lse_2", keepdims=0),
        helper.make_node("Split", ["x"], ["sa", "sb", "sc"], name="split", axis=2, num_outputs=3),
        helper.make_node("Relu", ["sa"], ["split_a"], name="relu_a"),
        helper.make_node("Relu", ["sb"], ["split_b"], name="relu_b"),
        helper.make_node("Relu", ["sc"], ["split_c"], name="relu_c"),
        helper.make_node("Pad", ["x", "pads", "", "pad_axes"], ["pad_axes2"], name="pad18", mode="constant"),
    ]
    outputs = [helper.make_tensor_value_info("mean_axis1", f, [2, 1, 5]),
               helper.make_tensor_value_info("mean_last0", f, [6]),
               helper.make_tensor_value_info("max_default", f, [1, 1, 1]),
               helper.make_tensor_value_info("l2_02", f, [1, 6, 1]),
               helper.make_tensor_value_info("lse_2", f, [2, 6]),
               helper.make_tensor_value_info("split_a", f, [2, 6, 2]),
               helper.make_tensor_value_info("split_b", f, [2, 6, 2]),
               helper.make_tensor_value_info("split_c", f, [2, 6, 1]),
               helper.make_tensor_value_info("pad_axes2", f, [2, 6, 7])]
    graph = helper.make_graph(nodes, "opset18_mix", [helper.make_tensor_value_info("x", f, [2, 6, 5])], outputs,
                              [i64("axes1", [1]), i64("axes_last0", [-1, 0]), i64("axes02", [0, 2]), i64("axes2", [2]),
                               i64("pads", [1, 1]), i64("pad_axes", [2])])
    save(graph, os.path.join(out, "opset18_mix.onnx"))
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    x.tofile(os.path.join(out, "in", "0.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as fh:
        json.dump([{"name": "x", "dtype": "float32", "shape": [2, 6, 5], "file": "0.bin"}], fh)

    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv22", pads=[1, 1, 1, 1]),
        helper.make_node("Transpose", ["c"], ["t"], name="transpose23", perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["r"], name="reshape23"),
        helper.make_node("Unsqueeze", ["r", "axes0"], ["u"], name="unsqueeze23"),
        helper.make_node("Identity", ["u"], ["i"], name="identity23"),
        helper.make_node("Shape", ["i"], ["s"], name="shape23"),
        helper.make_node("Cast", ["s"], ["sf"], name="cast23_shape", to=f),
        helper.make_node("Cast", ["i"], ["y"], name="cast23", to=f),
    ]
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(nodes, "opset23_mix", [helper.make_tensor_value_info("x", f, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", f, [1, 1, 64, 4]),
                               helper.make_tensor_value_info("sf", f, [4])],
                              [w, i64("shape", [1, 64, 4]), i64("axes0", [0])])
    save(graph, os.path.join(out, "opset23_mix.onnx"), opset=23, ir_version=11)
    os.makedirs(os.path.join(out, "in23"), exist_ok=True)
    rng.standard_normal((1, 3, 8, 8)).astype(np.float32).tofile(os.path.join(out, "in23", "0.bin"))
    with open(os.path.join(out, "in23", "manifest.json"), "w") as fh:
        json.dump([{"name": "x", "dtype": "float32", "shape": [1, 3, 8, 8], "file": "0.bin"}], fh)

    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["pos"], name="positive"),
        helper.make_node("ReduceMax", ["pos", "axes1"], ["any_b"], name="reducemax20_bool", keepdims=1),
        helper.make_node("ReduceMin", ["pos", "axes1"], ["all_b"], name="reducemin20_bool", keepdims=0),
        helper.make_node("Cast", ["any_b"], ["any"], name="cast_any", to=f),
        helper.make_node("Cast", ["all_b"], ["all"], name="cast_all", to=f),
        helper.make_node("ReduceMax", ["x", "axes1"], ["max"], name="reducemax20", keepdims=1),
    ]
    graph = helper.make_graph(nodes, "opset20_reduce", [helper.make_tensor_value_info("x", f, [2, 6, 5])],
                              [helper.make_tensor_value_info("any", f, [2, 1, 5]),
                               helper.make_tensor_value_info("all", f, [2, 5]),
                               helper.make_tensor_value_info("max", f, [2, 1, 5])],
                              [i64("axes1", [1]), numpy_helper.from_array(np.array(0, np.float32), "zero")])
    save(graph, os.path.join(out, "opset20_reduce.onnx"), opset=20, ir_version=9)
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    x[:, :, 0] = np.abs(x[:, :, 0]) + 0.5   # all positive: any and all true
    x[:, :, 1] = -np.abs(x[:, :, 1]) - 0.5  # all negative: any and all false
    os.makedirs(os.path.join(out, "in20"), exist_ok=True)
    x.tofile(os.path.join(out, "in20", "0.bin"))
    with open(os.path.join(out, "in20", "manifest.json"), "w") as fh:
        json.dump([{"name": "x", "dtype": "float32", "shape": [2, 6, 5], "file": "0.bin"}], fh)


if __name__ == "__main__":
    main()
