#!/usr/bin/env python3
"""Conv / Gemm / MatMul shapes for the GPU-class GEMM tiles (conv2d_gemm_gpu,
gemm_gpu and their _f16w forms; shaders/gpu_tile.glsl, docs/kernels.md
"GPU-class GEMM tiles"): one case per output tile the conversion chooses
(128x128 down to 16x16, lower.cpp ChooseGpuTile; the tile each case gets is
noted beside it), every size off the tile and K off the 16-deep slice
(including K < 16), vec4 and scalar loads of each operand (strides, sizes
not in fours, transposes, a 1x1 Conv with an end pad), groups, strides,
padding, dilation, bias, alpha / beta, activations, the fused residual Add,
batch 1 and 8, a batched MatMul with a computed B.

Writes gpu_kernels.onnx, its input (manifest dir `in`) and the references
ref / ref16 / bound of make_variant_models.py (float32 model; binary16-
rounded weights; 2^-11 * sum|x * w|). Also a model with a symbolic batch N in
[1, 8] (parameter-buffer sizes in the tiles' spec constants, the tile chosen
for N = 8): dyn/dyn.onnx, dyn/config.json (fp32 tiles) and, for N = 1 and 5,
dyn/b<N>/ with the same input and reference directories.
And convolutions whose default grid fills a GPU, which get the 128x128,
128x64 and 64x128 tiles only with config.json "gpu_conv_tiles": "all":
convtiles/convtiles.onnx, convtiles/config.json and its in / ref / ref16 /
bound directories.

usage: make_gpu_kernel_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_variant_models import F16_EPS, add_conv, conv_ref, matmul_refs, write_case  # noqa: E402


def dynamic_case(out):
    """x [N, 16, 12, 12] -> Conv 3x3 stride 2 (40 channels) -> Relu -> Flatten -> MatMul [1440, 52],
    N in [1, 8]: both outputs, for N = 1 and 5."""
    rng = np.random.default_rng(5)
    w = (0.3 * rng.standard_normal((40, 16, 3, 3))).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    mw = (0.1 * rng.standard_normal((1440, 52))).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat", axis=1),
             helper.make_node("MatMul", ["f", "mw"], ["y"], name="matmul")]
    graph = helper.make_graph(
        nodes, "gpu_kernels_dynamic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 52]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, ["N", 40, 6, 6])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"), numpy_helper.from_array(mw, "mw")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "dyn.onnx"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"dimensions": {"N": {"min": 1, "max": 8}}, "fp16_weights": False}, f)
    for n in (1, 5):
        x = rng.standard_normal((n, 16, 12, 12)).astype(np.float32)
        r = np.maximum(conv_ref(x, w, b, (2, 2), (1, 1, 1, 1), (1, 1), 1), 0)
        y = r.reshape(n, -1) @ mw.astype(np.float64)
        # bound: 2^-11 * sum|x * w| as in make_variant_models.py (the fp32 check's scale).
        br = F16_EPS * conv_ref(np.abs(x), np.abs(w), None, (2, 2), (1, 1, 1, 1), (1, 1), 1)
        by = F16_EPS * (np.abs(r).reshape(n, -1) @ np.abs(mw).astype(np.float64))
        write_case(os.path.join(out, f"b{n}"), [("x", x)], [("y", y, y, by), ("r", r, r, br)])


def conv_tiles_case(out):
    """Convolutions whose default 64 x 64 grid fills a GPU (lower.cpp
    DefaultGridFillsGpu), so only config.json "gpu_conv_tiles": "all" gives
    them conv2d_gemm_gpu, with the three largest tiles (noted beside each):
    convtiles.onnx, config.json and the input / reference directories."""
    rng = np.random.default_rng(17)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    inits, nodes, outs, refs, inputs = [], [], [], [], []

    def conv(name, x, m, k, pads, bias, residual):
        """Conv `name` of input x (k x k, `m` channels); with `residual` a second input of the
        output's shape is added (fused as a residual Add) and Relu applied."""
        xname = name + "_x"
        inputs.append((xname, x))
        w = 0.5 * f32(m, x.shape[1], k, k)
        b = f32(m) if bias else None
        inits.append(numpy_helper.from_array(w, name + "_w"))
        ins = [xname, name + "_w"]
        if bias:
            inits.append(numpy_helper.from_array(b, name + "_b"))
            ins.append(name + "_b")
        # Run with fp32 weights only (config "fp16_weights": false): no binary16 reference (ref16 = ref).
        ref = conv_ref(x, w, b, (1, 1), pads, (1, 1), 1)
        bound = F16_EPS * conv_ref(np.abs(x), np.abs(w), None, (1, 1), pads, (1, 1), 1)
        y = "y_" + name
        nodes.append(helper.make_node("Conv", ins, [name + "_c" if residual else y], name=name,
                                      kernel_shape=[k, k], pads=list(pads)))
        if residual:
            r = f32(*ref.shape)
            inputs.append((name + "_r", r))
            nodes.append(helper.make_node("Add", [name + "_c", name + "_r"], [name + "_a"], name=name + "_add"))
            nodes.append(helper.make_node("Relu", [name + "_a"], [y], name=name + "_relu"))
            ref = np.maximum(ref + r, 0)
        outs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, list(ref.shape)))
        refs.append((y, ref, ref, bound))

    # 128x128: 256 x 11264 outputs over two images, W and X vec4 (X's columns cross the image boundary), bias,
    # residual, Relu.
    conv("t128x128", f32(2, 8, 44, 128), 256, 1, (0, 0, 0, 0), True, True)
    # 128x64: 256 x 7040, 3x3 im2col (scalar X), KD 36 (W vec4).
    conv("t128x64", f32(1, 4, 55, 128), 256, 3, (1, 1, 1, 1), False, False)
    # 64x128: 192 x 11264 (192 rows: 128-row tiles would waste a quarter), KD 6 (W scalar), X vec4.
    conv("t64x128", f32(1, 6, 88, 128), 192, 1, (0, 0, 0, 0), True, False)
    graph = helper.make_graph(nodes, "gpu_conv_tiles",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
                              outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "convtiles.onnx"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"gpu_conv_tiles": "all", "fp16_weights": False}, f)
    write_case(out, inputs, refs)


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(11)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    inits, nodes, outs, refs, inputs = [], [], [], [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    def inp(name, a):
        inputs.append((name, a))
        return a

    def output(name, ref, ref16=None, bound=None):
        outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(ref.shape)))
        refs.append((name, ref, ref if ref16 is None else ref16, np.zeros_like(ref) if bound is None else bound))

    def matmul(name, m, k, n, vec_a=True):
        """MatMul of input [m, k] by a constant [k, n] (A along k: vec4 when k % 4 == 0)."""
        a, b = inp(name + "_a", f32(m, k)), f32(k, n)
        nodes.append(helper.make_node("MatMul", [name + "_a", init(name + "_b", b)], ["y_" + name], name=name))
        output("y_" + name, *matmul_refs(a, b))

    def gemm(name, m, k, n, ta, tb, alpha, beta, bias_shape, act=None):
        a = inp(name + "_a", f32(k, m) if ta else f32(m, k))
        b = f32(n, k) if tb else f32(k, n)
        c = f32(*bias_shape)
        y = name + "_g" if act else "y_" + name
        nodes.append(helper.make_node("Gemm", [name + "_a", init(name + "_b", b), init(name + "_c", c)], [y],
                                      name=name, transA=ta, transB=tb, alpha=alpha, beta=beta))
        r = matmul_refs(a.T if ta else a, b.T if tb else b, alpha)
        fn = (lambda v: np.maximum(v, 0)) if act == "relu" else (lambda v: v)
        if act:
            nodes.append(helper.make_node("Relu", [y], ["y_" + name], name=name + "_relu"))
        output("y_" + name, fn(r[0] + beta * c), fn(r[1] + beta * c), r[2])

    matmul("g128x128", 2000, 20, 2100)                             # 128x128, A and B vec4, 2 slices
    gemm("g128x64", 1000, 37, 2100, 0, 1, 0.5, 2.0, (2100,), "relu")  # 128x64, B along k (scalar), row bias
    matmul("g64x128", 2100, 50, 1000)                              # 64x128, A scalar (K % 4 = 2), B vec4
    matmul("g64x64", 777, 36, 1000)                                # 64x64, A vec4 with a partial slice
    gemm("g64x32", 300, 17, 1300, 1, 0, 1.0, -1.0, (300, 1))       # 64x32, transA (A along m), column bias
    matmul("g32x64", 257, 8, 2000)                                 # 32x64, K = 8 < one slice
    gemm("g32x32", 130, 24, 1302, 0, 0, 1.0, 1.0, (130, 1302))     # 32x32, N % 4 = 2: B scalar, full bias
    matmul("g32x16", 200, 45, 500)                                 # 32x16
    matmul("g16x32", 66, 13, 1300)                                 # 16x32, K = 13
    matmul("g16x16", 22, 78, 45)                                   # 16x16, N = 45
    # Batched MatMul with a computed B (both inputs; 16x32 tiles over 2 batches, B never binary16).
    a, b = inp("bm_a", f32(2, 130, 12)), inp("bm_b", f32(2, 12, 600))
    nodes.append(helper.make_node("MatMul", ["bm_a", "bm_b"], ["y_bm"], name="bm"))
    # Its bound is the fp32 check's scale 2^-11 * sum|a * b| like every case's:
    # precision=fp16 rounds both operands.
    output("y_bm", np.matmul(a.astype(np.float64), b.astype(np.float64)), None,
           2.0 ** -11 * np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))))

    def conv(name, xname, m, k, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1, bias=True, act=None,
             res=False):
        xin = dict(inputs)[xname]
        wt = 0.5 * f32(m, xin.shape[1] // group, *k)
        bs = f32(m) if bias else None
        add_conv(init, nodes, output, name, xname, xin, wt, bs, k, stride, pads, dil, group, act, res)

    inp("c7", f32(1, 64, 7, 7))       # ResNet-50's last stage, scaled down: batch 1, 49 pixels
    inp("c16", f32(1, 32, 16, 16))
    inp("c8a", f32(8, 6, 11, 13))     # batch 8, odd sizes
    inp("c8b", f32(8, 16, 14, 14))
    inp("c8c", f32(8, 24, 10, 10))
    inp("crgb", f32(8, 3, 9, 9))
    # Below the 264 workgroups of conv2d_gemm's 64 x 64 grid, where a Conv keeps
    # its GPU row (lower.cpp DefaultGridFillsGpu); 130 channels: a partial row tile.
    inp("cbig", f32(1, 4, 66, 66))
    inp("cbigp", f32(1, 8, 66, 68))
    conv("c_stage4", "c7", 96, (3, 3), pads=(1, 1, 1, 1), act="relu")      # 16x16, W vec4 (KD 576)
    conv("c_pw7", "c7", 40, (1, 1), bias=False)                           # 49 pixels: X scalar
    conv("c_pw_res", "c16", 32, (1, 1), act="relu", res=True)             # X vec4, fused residual
    conv("c_g2_s2_d2", "c8a", 8, (3, 3), (2, 2), (2, 1, 0, 2), (2, 2), group=2, bias=False)  # groups, KD 27
    conv("c_b8", "c8b", 40, (3, 3), pads=(1, 1, 1, 1), act="clip")        # batch 8
    conv("c_pw_b8", "c8c", 36, (1, 1), act="sigmoid")                     # batch 8, X vec4 (H*W = 100)
    conv("c_pw_pad", "c8c", 12, (1, 1), pads=(0, 0, 1, 1))                # 1x1 with an end pad: X scalar
    conv("c_rgb", "crgb", 20, (3, 3), (1, 1), (1, 1, 1, 1))               # KD 27: W scalar
    conv("c_big", "cbig", 130, (3, 3), pads=(1, 1, 1, 1), res=False)      # 32x64, im2col scalar
    conv("c_big_pw", "cbigp", 130, (1, 1), bias=False)                    # 64x64, X vec4

    graph = helper.make_graph(nodes, "gpu_kernels",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
                              outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "gpu_kernels.onnx"))
    write_case(out, inputs, refs)
    dynamic_case(os.path.join(out, "dyn"))
    conv_tiles_case(os.path.join(out, "convtiles"))


if __name__ == "__main__":
    main()
