#!/usr/bin/env python3
"""Conv / Gemm / MatMul shapes that stress both kernel variants (bundle
feature kernel_variants: the tiled GPU kernels conv2d_gemm / gemm and the
CPU-class kernels conv2d_cpu / gemm_cpu): row and column counts that are not
multiples of the register blocks or tiles, padding, strides, dilations,
groups, batches, transposes, alpha/beta, broadcast bias, fused activations
and a fused residual Add. Writes variants.onnx, its input (manifest dir `in`)
and the NumPy reference outputs (manifest dir `ref`).

usage: make_variant_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_ref(x, w, b, stride, pads, dil, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    mg = m // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * mg:(g + 1) * mg] += np.einsum("ncyx,mc->nmyx", patch, w[g * mg:(g + 1) * mg, :, i, j])
    if b is not None:
        y += b.reshape(1, m, 1, 1)
    return y


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    os.makedirs(os.path.join(out, "ref"), exist_ok=True)
    rng = np.random.default_rng(7)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    x = f32(2, 6, 11, 13)
    inits, nodes, outs, refs = [], [], [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    def output(name, ref):
        outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(ref.shape)))
        refs.append((name, ref.astype(np.float32)))

    # Conv 3x3, pad 1, bias, Relu (fused): 10 output channels (not a multiple of 4).
    w1, b1 = f32(10, 6, 3, 3), f32(10)
    nodes.append(helper.make_node("Conv", ["x", init("w1", w1), init("b1", b1)], ["c1"], name="conv3x3",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["y_conv3x3_relu"], name="relu1"))
    output("y_conv3x3_relu", np.maximum(conv_ref(x, w1, b1, (1, 1), (1, 1, 1, 1), (1, 1), 1), 0))
    # Conv 3x3, stride 2, dilation 2, asymmetric pads, no bias.
    w2 = f32(7, 6, 3, 3)
    nodes.append(helper.make_node("Conv", ["x", init("w2", w2)], ["y_conv_s2_d2"], name="conv_s2_d2",
                                  kernel_shape=[3, 3], strides=[2, 2], dilations=[2, 2], pads=[2, 1, 0, 2]))
    output("y_conv_s2_d2", conv_ref(x, w2, None, (2, 2), (2, 1, 0, 2), (2, 2), 1))
    # Grouped Conv 1x3 (group 2), bias.
    w3, b3 = f32(6, 3, 1, 3), f32(6)
    nodes.append(helper.make_node("Conv", ["x", init("w3", w3), init("b3", b3)], ["y_conv_g2"], name="conv_g2",
                                  kernel_shape=[1, 3], pads=[0, 1, 0, 1], group=2))
    output("y_conv_g2", conv_ref(x, w3, b3, (1, 1), (0, 1, 0, 1), (1, 1), 2))
    # Conv 1x1 + residual Add (fused into the Conv) + Relu.
    w4, b4 = f32(6, 6, 1, 1), f32(6)
    nodes.append(helper.make_node("Conv", ["x", init("w4", w4), init("b4", b4)], ["c4"], name="conv1x1",
                                  kernel_shape=[1, 1]))
    nodes.append(helper.make_node("Add", ["c4", "x"], ["a4"], name="resadd"))
    nodes.append(helper.make_node("Relu", ["a4"], ["y_conv1x1_res"], name="relu4"))
    output("y_conv1x1_res", np.maximum(conv_ref(x, w4, b4, (1, 1), (0, 0, 0, 0), (1, 1), 1) + x, 0))
    # Gemm transB, alpha/beta, row-broadcast bias: M=22 (2*11), N=45, K=78.
    a = x.reshape(22, 78)
    gb, gc = f32(45, 78), f32(45)
    nodes.append(helper.make_node("Reshape", ["x", init("shape_a", np.array([22, 78], np.int64))], ["a"], name="flat"))
    nodes.append(helper.make_node("Gemm", ["a", init("gb", gb), init("gc", gc)], ["y_gemm"], name="gemm",
                                  transB=1, alpha=0.5, beta=2.0))
    output("y_gemm", 0.5 * (a.astype(np.float64) @ gb.T.astype(np.float64)) + 2.0 * gc)
    # Gemm transA with a [M, 1] bias and Sigmoid-free plain output: M=78, N=9, K=22.
    gb2, gc2 = f32(22, 9), f32(78, 1)
    nodes.append(helper.make_node("Gemm", ["a", init("gb2", gb2), init("gc2", gc2)], ["y_gemm_ta"], name="gemm_ta",
                                  transA=1))
    output("y_gemm_ta", a.T.astype(np.float64) @ gb2 + gc2)
    # Batched MatMul [2, 66, 13] x [13, 17].
    mb = f32(13, 17)
    nodes.append(helper.make_node("Reshape", ["x", init("shape_m", np.array([2, 66, 13], np.int64))], ["xm"],
                                  name="rs"))
    nodes.append(helper.make_node("MatMul", ["xm", init("mb", mb)], ["y_matmul"], name="matmul"))
    output("y_matmul", x.reshape(2, 66, 13).astype(np.float64) @ mb)

    # Second input with vector-friendly sizes (H*W and C multiples of 4, OW a
    # multiple of 4): the vec4 / row-reuse paths of the CPU kernels.
    x2 = f32(2, 8, 6, 8)
    w5, b5 = f32(5, 8, 1, 1), f32(5)
    nodes.append(helper.make_node("Conv", ["x2", init("w5", w5), init("b5", b5)], ["y_pointwise"], name="pointwise",
                                  kernel_shape=[1, 1]))
    output("y_pointwise", conv_ref(x2, w5, b5, (1, 1), (0, 0, 0, 0), (1, 1), 1))
    w6 = f32(6, 8, 3, 3)
    nodes.append(helper.make_node("Conv", ["x2", init("w6", w6)], ["c6"], name="conv3x3_row", kernel_shape=[3, 3],
                                  pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Sigmoid", ["c6"], ["y_conv3x3_row_sigmoid"], name="sig6"))
    output("y_conv3x3_row_sigmoid", 1 / (1 + np.exp(-conv_ref(x2, w6, None, (1, 1), (1, 1, 1, 1), (1, 1), 1))))
    w7 = f32(9, 8, 3, 3)
    nodes.append(helper.make_node("Conv", ["x2", init("w7", w7)], ["y_conv3x3_s2"], name="conv3x3_s2",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    output("y_conv3x3_s2", conv_ref(x2, w7, None, (2, 2), (1, 1, 1, 1), (1, 1), 1))
    m2 = f32(24, 20)
    nodes.append(helper.make_node("Reshape", ["x2", init("shape_2", np.array([32, 24], np.int64))], ["a2"],
                                  name="flat2"))
    nodes.append(helper.make_node("MatMul", ["a2", init("m2", m2)], ["y_matmul_vec"], name="matmul_vec"))
    output("y_matmul_vec", x2.reshape(32, 24).astype(np.float64) @ m2)

    graph = helper.make_graph(nodes, "kernel_variants",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
                               helper.make_tensor_value_info("x2", TensorProto.FLOAT, list(x2.shape))], outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "variants.onnx"))
    x.tofile(os.path.join(out, "in", "0.bin"))
    x2.tofile(os.path.join(out, "in", "1.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": list(x.shape), "file": "0.bin"},
                   {"name": "x2", "dtype": "float32", "shape": list(x2.shape), "file": "1.bin"}], f)
    man = []
    for i, (name, r) in enumerate(refs):
        r.tofile(os.path.join(out, "ref", f"{i}.bin"))
        man.append({"name": name, "dtype": "float32", "shape": list(r.shape), "file": f"{i}.bin"})
    with open(os.path.join(out, "ref", "manifest.json"), "w") as f:
        json.dump(man, f)


if __name__ == "__main__":
    main()
