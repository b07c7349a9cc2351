#!/usr/bin/env python3
"""Builds split_mix.onnx: weights just over a lowered binding limit
(config.json "limits": max_binding_bytes = 32768, written next to it) so the
toolchain splits them along their output axis (passes/split_large.h), plus
its input (manifest dir). Every split kind is an output:
  gemm_tb    Gemm, transB = 1, bias [N], fused Relu (pieces of 64 columns)
  gemm_nt    Gemm, transB = 0, bias [1, N], alpha / beta != 1, N not a
             multiple of the piece size (a shorter last piece)
  matmul     MatMul, A of rank 3, B [K, N]
  conv       Conv (group 1) over output channels, bias, fused Relu
  conv_res   Conv 3x3 with a residual Add (a 1x1 Conv of x) and Relu fused
             (the Add moves after the Concat, with the activation)
Each weight is at most a few times the limit, so the model stays tiny.

usage: make_split_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(11)
    f32 = np.float32
    nodes, inits, outputs = [], [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, f32), name))
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def output(name):
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))

    # v: [2, 96] (768 bytes); gemm weights [200, 96] and [96, 203] are 76800
    # and 77952 bytes, over 32768.
    v = "v"
    w1 = const("w1", rng.standard_normal((200, 96)) * 0.1)
    b1 = const("b1", rng.standard_normal((200,)))
    g1 = node("Gemm", [v, w1, b1], "gemm_tb_pre", transB=1)
    output(node("Relu", [g1], "gemm_tb"))
    w2 = const("w2", rng.standard_normal((96, 203)) * 0.1)
    b2 = const("b2", rng.standard_normal((1, 203)))
    output(node("Gemm", [v, w2, b2], "gemm_nt", alpha=0.5, beta=2.0))
    # MatMul: [2, 3, 96] x [96, 150] (57600 bytes)
    inits.append(numpy_helper.from_array(np.array([2, 3, 96], np.int64), "shape3"))
    a3 = node("Reshape", [node("Concat", [v, v, v], "v3", axis=1), "shape3"], "a3")
    output(node("MatMul", [a3, const("w3", rng.standard_normal((96, 150)) * 0.1)], "matmul"))
    # Conv: x [1, 16, 6, 6]; W [96, 16, 3, 3] (55296 bytes), output 96x6x6
    # floats = 13824 bytes.
    x = "x"
    wc = const("wc", rng.standard_normal((96, 16, 3, 3)) * 0.1)
    bc = const("bc", rng.standard_normal((96,)))
    output(node("Relu", [node("Conv", [x, wc, bc], "conv_pre", pads=[1, 1, 1, 1])], "conv"))
    wr2 = const("wr2", rng.standard_normal((64, 16, 3, 3)) * 0.1)  # 36864 bytes
    br2 = const("br2", rng.standard_normal((64,)))
    res = node("Conv", [x, const("wres", rng.standard_normal((64, 16, 1, 1)))], "res_src")  # 4096 bytes: not split
    y = node("Conv", [x, wr2, br2], "conv_res_pre", pads=[1, 1, 1, 1])
    output(node("Relu", [node("Add", [y, res], "conv_res_add")], "conv_res"))
    inputs = [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 96]),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 6, 6])]
    graph = helper.make_graph(nodes, "split_mix", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_split_models.py")
    model.ir_version = 7
    model = onnx.shape_inference.infer_shapes(model)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "split_mix.onnx"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"limits": {"max_binding_bytes": 32768}}, f)
    vv = rng.standard_normal((2, 96)).astype(f32)
    xv = rng.standard_normal((1, 16, 6, 6)).astype(f32)
    vv.tofile(os.path.join(out, "in", "0.bin"))
    xv.tofile(os.path.join(out, "in", "1.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as f:
        json.dump([{"name": "v", "dtype": "float32", "shape": [2, 96], "file": "0.bin"},
                   {"name": "x", "dtype": "float32", "shape": [1, 16, 6, 6], "file": "1.bin"}], f)


if __name__ == "__main__":
    main()
