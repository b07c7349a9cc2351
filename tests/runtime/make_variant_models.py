#!/usr/bin/env python3
"""Conv / Gemm / MatMul shapes that stress every kernel variant (bundle
feature kernel_variants: the tiled default kernels conv2d_gemm / gemm /
depthwise_conv2d and the CPU-class kernels conv2d_cpu / gemm_cpu* /
depthwise_cpu; feature device_variants: the GPU-class conv2d_gemm_gpu_f16w /
gemm_gpu_f16w with binary16 weights): row and column counts that are not
multiples of the register blocks or tiles, padding, strides, dilations,
groups, batches, transposes, alpha/beta, broadcast bias, fused activations
and a fused residual Add; plus Softmax / LogSoftmax / Hardmax / ReduceMean /
GlobalAveragePool rows of many lengths for softmax_sg and reduce_mean_sg.
Writes variants.onnx, its input (manifest dir `in`) and three NumPy
references per output, all in float32 files with one manifest each:
  ref      the float32 model (computed in float64);
  ref16    the model whose Conv / Gemm / MatMul weights that the _f16w
           kernels read are rounded to binary16 (np.float16 round trip, ties
           to even): what a GPU row reading weights_f16 computes, up to fp32
           rounding (equal to ref for outputs without such weights);
  bound    2^-11 * sum|x * w| over each output's reduction (0 without such
           weights): the documented bound of |fp16-weight result - ref|
           (docs/bundle-format.md, "Device-specific variants"); it holds for
           weights whose binary16 copy is normal (|w| >= 2^-14), a subnormal
           one errs by up to 2^-25 absolute instead.

usage: make_variant_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


F16_EPS = 2.0 ** -11  # unit roundoff of binary16: |w - fp16(w)| <= F16_EPS * |w| (normal range)


def to_f16(w):
    """w rounded to the nearest binary16 (ties to even), as float32."""
    return w.astype(np.float16).astype(np.float32)


def is_depthwise(x, w, group):
    """Whether the toolchain lowers this Conv to depthwise_conv2d (no binary16 weights) rather
    than conv2d_gemm (whose GPU row reads W as binary16); mirrors lower.cpp."""
    return group > 1 and group == x.shape[1] and w.shape[0] == x.shape[1] and w.shape[1] == 1


def conv_refs(x, w, b, stride, pads, dil, group):
    """(ref, ref16, bound) of a Conv: float32 weights, binary16-rounded weights (conv2d_gemm
    only; a depthwise Conv keeps float32 weights on every row) and the bound
    2^-11 * sum|x * w| (0 for a depthwise Conv)."""
    ref = conv_ref(x, w, b, stride, pads, dil, group)
    if is_depthwise(x, w, group):
        return ref, ref, np.zeros_like(ref)
    return (ref, conv_ref(x, to_f16(w), b, stride, pads, dil, group),
            F16_EPS * conv_ref(np.abs(x), np.abs(w), None, stride, pads, dil, group))


def matmul_refs(a, b, alpha=1.0):
    """(ref, ref16, bound) of alpha * a @ b with a constant b (read as binary16 by gemm_gpu_f16w)."""
    a = a.astype(np.float64)
    return (alpha * (a @ b.astype(np.float64)), alpha * (a @ to_f16(b).astype(np.float64)),
            abs(alpha) * F16_EPS * (np.abs(a) @ np.abs(b).astype(np.float64)))


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


def add_conv(init, nodes, output, name, xname, xin, wt, bs, k, stride, pads, dil, group, act=None, res=False):
    """Appends Conv `name` on graph value `xname` (NumPy value `xin`) with
    weights `wt` and bias `bs` (None: no bias), an optional fused residual Add
    of its input and an optional activation ("relu", "clip", "sigmoid"), and
    registers output y_<name> with its NumPy reference."""
    ins = [xname, init(name + "_w", wt)] + ([init(name + "_b", bs)] if bs is not None else [])
    conv_out = name + "_c" if (act or res) else "y_" + name
    nodes.append(helper.make_node("Conv", ins, [conv_out], name=name, kernel_shape=list(k), strides=list(stride),
                                  pads=list(pads), dilations=list(dil), group=group))
    ref, ref16, bound = conv_refs(xin, wt, bs, stride, pads, dil, group)
    last = conv_out
    if res:
        out = name + "_a" if act else "y_" + name
        nodes.append(helper.make_node("Add", [last, xname], [out], name=name + "_add"))
        ref, ref16, last = ref + xin, ref16 + xin, out
    # The activations are 1-Lipschitz (Sigmoid 1/4), so the bound carries over.
    if act == "relu":
        nodes.append(helper.make_node("Relu", [last], ["y_" + name], name=name + "_relu"))
        fn = lambda v: np.maximum(v, 0)
    elif act == "clip":
        nodes.append(helper.make_node("Clip", [last, init(name + "_lo", np.array(0, np.float32)),
                                               init(name + "_hi", np.array(6, np.float32))], ["y_" + name],
                                      name=name + "_clip"))
        fn = lambda v: np.clip(v, 0, 6)
    elif act == "sigmoid":
        nodes.append(helper.make_node("Sigmoid", [last], ["y_" + name], name=name + "_sig"))
        fn = lambda v: 1 / (1 + np.exp(-v))
    else:
        fn = lambda v: v
    output("y_" + name, fn(ref), fn(ref16), bound)


def write_case(out, inputs, refs):
    """The input manifest dir `in` and the reference dirs ref / ref16 / bound
    (refs: (name, ref, ref16, bound)) under out."""
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    for i, (n, a) in enumerate(inputs):
        a.tofile(os.path.join(out, "in", f"{i}.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as f:
        json.dump([{"name": n, "dtype": "float32", "shape": list(a.shape), "file": f"{i}.bin"}
                   for i, (n, a) in enumerate(inputs)], f)
    for k, kind in enumerate(("ref", "ref16", "bound")):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        man = []
        for i, r in enumerate(refs):
            a = np.asarray(r[1 + k], np.float32)
            a.tofile(os.path.join(out, kind, f"{i}.bin"))
            man.append({"name": r[0], "dtype": "float32", "shape": list(a.shape), "file": f"{i}.bin"})
        with open(os.path.join(out, kind, "manifest.json"), "w") as f:
            json.dump(man, f)


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(7)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    x = f32(2, 6, 11, 13)
    inits, nodes, outs, refs = [], [], [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    def output(name, ref, ref16=None, bound=None):
        """Registers graph output `name` with its references (module docstring); without
        ref16 / bound the output reads no binary16 weights (ref16 = ref, bound = 0)."""
        outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(ref.shape)))
        refs.append((name, ref, ref if ref16 is None else ref16, np.zeros_like(ref) if bound is None else bound))

    # Conv 3x3, pad 1, bias, Relu (fused): 10 output channels (not a multiple of 4).
    w1, b1 = f32(10, 6, 3, 3), f32(10)
    nodes.append(helper.make_node("Conv", ["x", init("w1", w1), init("b1", b1)], ["c1"], name="conv3x3",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["y_conv3x3_relu"], name="relu1"))
    r = conv_refs(x, w1, b1, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    output("y_conv3x3_relu", np.maximum(r[0], 0), np.maximum(r[1], 0), r[2])
    # Conv 3x3, stride 2, dilation 2, asymmetric pads, no bias.
    w2 = f32(7, 6, 3, 3)
    nodes.append(helper.make_node("Conv", ["x", init("w2", w2)], ["y_conv_s2_d2"], name="conv_s2_d2",
                                  kernel_shape=[3, 3], strides=[2, 2], dilations=[2, 2], pads=[2, 1, 0, 2]))
    output("y_conv_s2_d2", *conv_refs(x, w2, None, (2, 2), (2, 1, 0, 2), (2, 2), 1))
    # Grouped Conv 1x3 (group 2), bias.
    w3, b3 = f32(6, 3, 1, 3), f32(6)
    nodes.append(helper.make_node("Conv", ["x", init("w3", w3), init("b3", b3)], ["y_conv_g2"], name="conv_g2",
                                  kernel_shape=[1, 3], pads=[0, 1, 0, 1], group=2))
    output("y_conv_g2", *conv_refs(x, w3, b3, (1, 1), (0, 1, 0, 1), (1, 1), 2))
    # Conv 1x1 + residual Add (fused into the Conv) + Relu.
    w4, b4 = f32(6, 6, 1, 1), f32(6)
    nodes.append(helper.make_node("Conv", ["x", init("w4", w4), init("b4", b4)], ["c4"], name="conv1x1",
                                  kernel_shape=[1, 1]))
    nodes.append(helper.make_node("Add", ["c4", "x"], ["a4"], name="resadd"))
    nodes.append(helper.make_node("Relu", ["a4"], ["y_conv1x1_res"], name="relu4"))
    r = conv_refs(x, w4, b4, (1, 1), (0, 0, 0, 0), (1, 1), 1)
    output("y_conv1x1_res", np.maximum(r[0] + x, 0), np.maximum(r[1] + x, 0), r[2])
    # Gemm transB, alpha/beta, row-broadcast bias: M=22 (2*11), N=45, K=78.
    a = x.reshape(22, 78)
    gb, gc = f32(45, 78), f32(45)
    nodes.append(helper.make_node("Reshape", ["x", init("shape_a", np.array([22, 78], np.int64))], ["a"], name="flat"))
    nodes.append(helper.make_node("Gemm", ["a", init("gb", gb), init("gc", gc)], ["y_gemm"], name="gemm",
                                  transB=1, alpha=0.5, beta=2.0))
    r = matmul_refs(a, gb.T, 0.5)
    output("y_gemm", r[0] + 2.0 * gc, r[1] + 2.0 * gc, r[2])
    # Gemm transA with a [M, 1] bias and Sigmoid-free plain output: M=78, N=9, K=22.
    gb2, gc2 = f32(22, 9), f32(78, 1)
    nodes.append(helper.make_node("Gemm", ["a", init("gb2", gb2), init("gc2", gc2)], ["y_gemm_ta"], name="gemm_ta",
                                  transA=1))
    r = matmul_refs(a.T, gb2)
    output("y_gemm_ta", r[0] + gc2, r[1] + gc2, r[2])
    # Batched MatMul [2, 66, 13] x [13, 17].
    mb = f32(13, 17)
    nodes.append(helper.make_node("Reshape", ["x", init("shape_m", np.array([2, 66, 13], np.int64))], ["xm"],
                                  name="rs"))
    nodes.append(helper.make_node("MatMul", ["xm", init("mb", mb)], ["y_matmul"], name="matmul"))
    output("y_matmul", *matmul_refs(x.reshape(2, 66, 13), mb))

    # Second input with vector-friendly sizes (H*W and C multiples of 4, OW a
    # multiple of 4): the vec4 / row-reuse paths of the CPU kernels.
    x2 = f32(2, 8, 6, 8)
    w5, b5 = f32(5, 8, 1, 1), f32(5)
    nodes.append(helper.make_node("Conv", ["x2", init("w5", w5), init("b5", b5)], ["y_pointwise"], name="pointwise",
                                  kernel_shape=[1, 1]))
    output("y_pointwise", *conv_refs(x2, w5, b5, (1, 1), (0, 0, 0, 0), (1, 1), 1))
    w6 = f32(6, 8, 3, 3)
    nodes.append(helper.make_node("Conv", ["x2", init("w6", w6)], ["c6"], name="conv3x3_row", kernel_shape=[3, 3],
                                  pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Sigmoid", ["c6"], ["y_conv3x3_row_sigmoid"], name="sig6"))
    r = conv_refs(x2, w6, None, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    output("y_conv3x3_row_sigmoid", 1 / (1 + np.exp(-r[0])), 1 / (1 + np.exp(-r[1])), r[2])
    w7 = f32(9, 8, 3, 3)
    nodes.append(helper.make_node("Conv", ["x2", init("w7", w7)], ["y_conv3x3_s2"], name="conv3x3_s2",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    output("y_conv3x3_s2", *conv_refs(x2, w7, None, (2, 2), (1, 1, 1, 1), (1, 1), 1))
    m2 = f32(24, 20)
    nodes.append(helper.make_node("Reshape", ["x2", init("shape_2", np.array([32, 24], np.int64))], ["a2"],
                                  name="flat2"))
    nodes.append(helper.make_node("MatMul", ["a2", init("m2", m2)], ["y_matmul_vec"], name="matmul_vec"))
    output("y_matmul_vec", *matmul_refs(x2.reshape(32, 24), m2))

    inputs = ([("x", x), ("x2", x2)] + gemm_depthwise_cases(init, nodes, output, x, x2) +
              conv_cases(init, nodes, output) + reduction_cases(nodes, output))
    graph = helper.make_graph(nodes, "kernel_variants",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
                              outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "variants.onnx"))
    write_case(out, inputs, refs)


# ---- Gemm / MatMul and depthwise Conv cases (CPU kernels gemm_cpu* and
# depthwise_cpu*): every texel-view flavour of gemm_cpu (A and B as RGBA32 'v'
# or R32 'f' views; A along k or m, B along n or k), a K % 4 tail, batches,
# broadcast / row / column / full bias, several column panels; depthwise
# windows for stride 1 (8 and 16 outputs per invocation, dilation 1, 2 and 3,
# X as R32 or RGBA32 texels with every pad remainder), stride 2, the per-tap
# path (stride 3, KW = 1 at stride 2), vec4 and scalar stores, bias,
# activations and a fused residual Add.
def gemm_depthwise_cases(init, nodes, output, x, x2):
    """Appends the cases' nodes and outputs; returns the extra graph inputs [(name, array)]."""
    rng = np.random.default_rng(11)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    sig = lambda v: 1 / (1 + np.exp(-v))
    g_a, g_at, g_k13, g_b, g_f = f32(2, 20, 36), f32(12, 20), f32(13, 12), f32(20, 16), f32(10, 13)
    d_x, d_x4 = f32(1, 3, 20, 37), f32(2, 4, 9, 24)
    # gemm_cpu, A along k, B along n: batch 2 with broadcast B, N = 44 (last
    # block half outside), fused Relu.
    w = f32(36, 44)
    nodes.append(helper.make_node("MatMul", ["g_a", init("g_w1", w)], ["g_c1"], name="g_mm_vv"))
    nodes.append(helper.make_node("Relu", ["g_c1"], ["y_g_mm_vv_relu"], name="g_relu1"))
    r = matmul_refs(g_a, w)
    output("y_g_mm_vv_relu", np.maximum(r[0], 0), np.maximum(r[1], 0), r[2])
    # gemm_cpu, batched B, N = 140: three column panels (8, 8, 2 blocks).
    w = f32(2, 36, 140)
    nodes.append(helper.make_node("MatMul", ["g_a", init("g_w2", w)], ["y_g_mm_batched"], name="g_mm_batched"))
    output("y_g_mm_batched", *matmul_refs(g_a, w))
    # gemm_cpu, transA: A along m; B along n; row bias, alpha / beta, Sigmoid.
    b, c = f32(12, 28), f32(28)
    nodes.append(helper.make_node("Gemm", ["g_at", init("g_b3", b), init("g_c3", c)], ["g_c3o"], name="g_gemm_ta",
                                  transA=1, alpha=0.75, beta=-1.5))
    nodes.append(helper.make_node("Sigmoid", ["g_c3o"], ["y_g_gemm_ta_sigmoid"], name="g_sig3"))
    r = matmul_refs(g_at.T, b, 0.75)
    output("y_g_gemm_ta_sigmoid", sig(r[0] - 1.5 * c), sig(r[1] - 1.5 * c), r[2])
    # gemm_cpu, transA, K = 13: the K % 4 tail with A along m and B along n; full [M, N] bias.
    b, c = f32(13, 20), f32(12, 20)
    nodes.append(helper.make_node("Gemm", ["g_k13", init("g_b4", b), init("g_c4", c)], ["y_g_gemm_tail"],
                                  name="g_gemm_tail", transA=1))
    r = matmul_refs(g_k13.T, b)
    output("y_g_gemm_tail", r[0] + c, r[1] + c, r[2])
    # gemm_cpu, transB: A along k, B along k; column bias [M, 1], beta.
    b, c = f32(24, 16), f32(20, 1)
    nodes.append(helper.make_node("Gemm", ["g_b", init("g_b5", b), init("g_c5", c)], ["y_g_gemm_tb"], name="g_gemm_tb",
                                  transB=1, beta=0.5))
    r = matmul_refs(g_b, b.T)
    output("y_g_gemm_tb", r[0] + 0.5 * c, r[1] + 0.5 * c, r[2])
    # gemm_cpu_vf: B rows of 9 (R32 view).
    w = f32(16, 9)
    nodes.append(helper.make_node("MatMul", ["g_b", init("g_w6", w)], ["y_g_mm_vf"], name="g_mm_vf"))
    output("y_g_mm_vf", *matmul_refs(g_b, w))
    # gemm_cpu_fv: A rows of 13 (R32 view), B along n with the K % 4 tail.
    w = f32(13, 24)
    nodes.append(helper.make_node("MatMul", ["g_f", init("g_w7", w)], ["y_g_mm_fv"], name="g_mm_fv"))
    output("y_g_mm_fv", *matmul_refs(g_f, w))
    # gemm_cpu_fv over three column panels, scalar bias broadcast.
    b, c = f32(13, 140), f32(1)
    nodes.append(helper.make_node("Gemm", ["g_f", init("g_b8", b), init("g_c8", c)], ["y_g_gemm_panels"],
                                  name="g_gemm_panels"))
    r = matmul_refs(g_f, b)
    output("y_g_gemm_panels", r[0] + c, r[1] + c, r[2])

    def dw(name, xin, xname, k, stride, pads, dil, bias=True, act=None, res=False):
        cch = xin.shape[1]
        wt = f32(cch, 1, *k)
        bs = f32(cch) if bias else None
        add_conv(init, nodes, output, name, xname, xin, wt, bs, k, stride, pads, dil, cch, act, res)

    dw("dw3x3_vec4", x2, "x2", (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), act="relu")  # OW = 8: vec4 stores
    dw("dw3x3_s2", x, "x", (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), act="clip")  # stride-2 window, OW = 7
    dw("dw3x5_d2", x, "x", (3, 5), (1, 1), (2, 1, 0, 3), (2, 2), bias=False)  # stride-1 window shifted by 2
    dw("dw3x3_s3", x, "x", (3, 3), (3, 3), (0, 2, 1, 0), (1, 1))  # per-tap path
    dw("dw3x1_s2", x, "x", (3, 1), (2, 2), (1, 0, 1, 0), (1, 1))  # KW = 1 at stride 2: per-tap path
    dw("dw3x3_res", x, "x", (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), act="relu", res=True)  # fused residual Add
    dw("dw3x3_s12", x2, "x2", (3, 3), (1, 2), (1, 1, 1, 1), (1, 1))  # OW = 4: one vec4 store per row
    dw("dw5x5_s2", d_x, "d_x", (5, 5), (2, 2), (2, 2, 2, 2), (1, 1))  # OW = 19: 3 blocks per row
    dw("dw3x3_wide", d_x, "d_x", (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), act="relu")  # OW = 37: 16 per invocation
    # Rows of 24 (a multiple of 4): depthwise_cpu_xv (X as vec4 texels) at stride 1.
    dw("dw_xv16_res", d_x4, "d_x4", (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), act="relu", res=True)  # 16 + 8 of 16
    dw("dw_xv_p0", d_x4, "d_x4", (3, 3), (1, 1), (0, 0, 0, 0), (1, 1))  # OW = 22: scalar stores, no skip
    dw("dw_xv_5x5", d_x4, "d_x4", (5, 5), (1, 1), (2, 2, 2, 2), (1, 1))  # skip 2, segment of 22
    dw("dw_xv_d2", d_x4, "d_x4", (3, 3), (1, 1), (2, 2, 2, 2), (2, 2))  # window shifted by 2
    dw("dw_xv_asym", d_x4, "d_x4", (3, 3), (1, 1), (0, 3, 1, 1), (1, 1), act="clip")  # left pad 3: skip 1
    dw("dw_xv_8", d_x4, "d_x4", (3, 3), (1, 3), (1, 1, 1, 1), (1, 1))  # stride 3 (depthwise_cpu, OW = 8)
    dw("dw_f_d3", d_x4, "d_x4", (5, 5), (1, 1), (6, 6, 6, 6), (3, 3))  # segment of 30: depthwise_cpu
    return [("g_a", g_a), ("g_at", g_at), ("g_k13", g_k13), ("g_b", g_b), ("g_f", g_f), ("d_x", d_x),
            ("d_x4", d_x4)]
# ---- end of the Gemm / MatMul and depthwise Conv cases


# ---- Conv cases (CPU kernels conv2d_cpu, conv2d_cpu_xv, conv2d_cpu_wide,
# conv2d_cpu_wide_xv, conv2d_cpu_pw; shaders/conv2d_cpu.glsl): every kernel
# and path: pointwise with 4-pixel halves in different images, groups and a
# partial channel block; filter widths 1, 2, 3, 4, 6 (row groups), 5 and 7
# (one pass per row phase) and 9 (plain loop); X as R32 (W % 4 != 0) and
# RGBA32 texels; W rows with static phase 0, static non-zero phases
# (M % 4 == 0, KD % 4 != 0) and run-time phases; strides, dilations,
# asymmetric padding, groups with a channel multiplier, several position and
# channel blocks (partial last ones), batches, bias, activations and fused
# residual Adds with vec4 and scalar stores.
def conv_cases(init, nodes, output):
    """Appends the cases' nodes and outputs; returns the extra graph inputs [(name, array)]."""
    rng = np.random.default_rng(13)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    c_a = f32(2, 16, 5, 4)    # H*W = 20: a block of 8 pixels spans two images
    c_b = f32(1, 3, 19, 21)   # W = 21: X as R32 texels
    c_c = f32(2, 3, 10, 24)   # W = 24: X as RGBA32 texels
    c_d = f32(1, 4, 30, 60)   # 30 rows x 8 position blocks: several workgroups
    xs = {"c_a": c_a, "c_b": c_b, "c_c": c_c, "c_d": c_d}

    def conv(name, xname, m, k, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1, bias=True, act=None,
             res=False):
        xin = xs[xname]
        wt = f32(m, xin.shape[1] // group, *k)
        bs = f32(m) if bias else None
        add_conv(init, nodes, output, name, xname, xin, wt, bs, k, stride, pads, dil, group, act, res)

    # conv2d_cpu_pw: residual + Clip; group 2 with 6 channels per group.
    conv("c_pw_res", "c_a", 16, (1, 1), act="clip", res=True)
    conv("c_pw_g2", "c_a", 12, (1, 1), group=2, bias=False)
    # conv2d_cpu_wide (X as R32): stem-like 7x7 stride 2 with 16 channels
    # (KD = 147: static phases 0, 3, 2, 1); 5x5 dilation 2 with asymmetric pads
    # and 6 channels (run-time phases); 1x9 (plain loop).
    conv("c_k7_f", "c_b", 16, (7, 7), (2, 2), (3, 3, 3, 3), act="relu")
    conv("c_k5_d2_f", "c_b", 6, (5, 5), (1, 1), (3, 2, 1, 4), (2, 2), bias=False)
    conv("c_k1x9_f", "c_b", 5, (1, 9), (1, 1), (0, 4, 0, 4))
    # conv2d_cpu (X as R32): 3x3 dilation 2 (KD = 27, M = 8: static phases).
    conv("c_k3_d2_f", "c_b", 8, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), act="sigmoid")
    # conv2d_cpu_wide_xv: 7x7 stride 2 with 12 channels (the last block's
    # channels 12..15 reuse channels 8..11's rows); 5x5 + residual (M = 3);
    # 1x9 with stride (1, 2).
    conv("c_k7_v", "c_c", 12, (7, 7), (2, 2), (3, 3, 3, 3), act="sigmoid")
    conv("c_k5_res_v", "c_c", 3, (5, 5), (1, 1), (2, 2, 2, 2), res=True)
    conv("c_k1x9_v", "c_c", 5, (1, 9), (1, 2), (0, 4, 0, 4), bias=False)
    # conv2d_cpu_xv: widths 3 (M = 12, KD = 27), 2 (stride 2), 4 (stride 4),
    # 6 (asymmetric pads), 1 at stride 2, 3x3 + residual (vec4 stores).
    conv("c_k3_m12_v", "c_c", 12, (3, 3), (1, 1), (1, 1, 1, 1), act="relu")
    conv("c_k2_s2_v", "c_c", 8, (2, 2), (2, 2))
    conv("c_k4_s4_v", "c_c", 10, (4, 4), (4, 4), bias=False)
    conv("c_k1x6_v", "c_c", 4, (1, 6), (1, 1), (0, 2, 0, 3))
    conv("c_k1_s2_v", "c_c", 7, (1, 1), (2, 2))
    conv("c_k3_res_v", "c_c", 3, (3, 3), (1, 1), (1, 1, 1, 1), act="relu", res=True)
    # Several workgroups along positions (240 blocks) and 3 channel blocks;
    # OW = 60: the last block of a row has its second half outside.
    conv("c_big_v", "c_d", 20, (3, 3), (1, 1), (1, 1, 1, 1), act="relu")
    # Group 4 with 2 output channels per input channel (CG = 1), stride 2.
    conv("c_g4_m2_v", "c_d", 8, (3, 3), (2, 2), (1, 1, 1, 1), group=4)
    return [(n, xs[n]) for n in ("c_a", "c_b", "c_c", "c_d")]
# ---- end of the Conv cases


# ---- Softmax / LogSoftmax / Hardmax / ReduceMean / GlobalAveragePool cases
# (default kernels softmax / reduce_mean with a shared-memory tree; GPU-class
# softmax_sg / reduce_mean_sg with subgroup reductions, run by kernel_variant=gpu
# on lavapipe (subgroups of 8) and SwiftShader (4)): rows of 1, 7, 64, 100 and
# 1000 elements (fewer, as many and more elements than the 64 invocations of a
# workgroup), strided rows (axis not last), rows whose maximum sits in any
# subgroup, a shifted row (large values: the online max rescaling), ties for
# Hardmax (first maximum), and means over 1 to 4096 elements.
def softmax_ref(v, axis, mode):
    v = v.astype(np.float64)
    m = v.max(axis=axis, keepdims=True)
    if mode == "Hardmax":
        idx = np.expand_dims(np.argmax(v, axis=axis), axis)  # first maximum
        y = np.zeros_like(v)
        np.put_along_axis(y, idx, 1.0, axis=axis)
        return y
    lse = m + np.log(np.exp(v - m).sum(axis=axis, keepdims=True))
    return v - lse if mode == "LogSoftmax" else np.exp(v - lse)


def reduction_cases(nodes, output):
    """Appends the cases' nodes and outputs; returns the extra graph inputs [(name, array)]."""
    rng = np.random.default_rng(17)
    f32 = lambda *s: (3 * rng.standard_normal(s)).astype(np.float32)
    inputs = []

    def case(op, name, xin, axis=None, **attrs):
        inputs.append((name, xin))
        kw = dict(attrs)
        if axis is not None:
            kw["axis"] = axis
        nodes.append(helper.make_node(op, [name], ["y_" + name], name=name, **kw))
        if op == "ReduceMean":
            ref = xin.astype(np.float64).mean(axis=tuple(attrs["axes"]), keepdims=bool(attrs.get("keepdims", 1)))
        elif op == "GlobalAveragePool":
            ref = xin.astype(np.float64).mean(axis=(2, 3), keepdims=True)
        else:
            ref = softmax_ref(xin, axis, op)
        output("y_" + name, ref)

    for n in (1, 7, 64, 100, 1000):
        case("Softmax", f"sm_{n}", f32(5, n), axis=1)
    x = f32(3, 1000)
    x[1] += 80.0              # large values: exp() only after rescaling to the row's max
    x[2, 997] = 40.0          # the maximum in the last subgroup of the last pass
    case("Softmax", "sm_shift", x, axis=-1)
    case("Softmax", "sm_strided", f32(2, 100, 3), axis=1)  # rows with a stride of 3
    case("LogSoftmax", "lsm_100", f32(4, 100), axis=1)
    case("LogSoftmax", "lsm_1000", f32(2, 3, 1000), axis=2)
    case("LogSoftmax", "lsm_7_strided", f32(2, 7, 5), axis=1)
    for n in (1, 7, 64, 1000):  # integers: ties, the first maximum wins
        case("Hardmax", f"hm_{n}", np.round(f32(6, n) / 3).astype(np.float32), axis=1)
    case("ReduceMean", "mean_1000", f32(4, 3, 1000), axes=[2], keepdims=1)
    case("ReduceMean", "mean_hw", f32(2, 3, 9, 11), axes=[2, 3], keepdims=0)
    case("ReduceMean", "mean_1", f32(5, 1), axes=[1], keepdims=1)
    case("GlobalAveragePool", "gap_7x9", f32(2, 5, 7, 9))
    case("GlobalAveragePool", "gap_64x64", f32(1, 3, 64, 64))
    case("GlobalAveragePool", "gap_1x1", f32(1, 4, 1, 1))
    # 128 rows or more: the CPU table's one-invocation-per-row kernels
    # (softmax_rows_cpu, reduce_mean_rows_cpu), also with a partial last
    # workgroup, strided rows, the shifted maximum and ties.
    x = f32(200, 37)
    x[5] += 80.0
    case("Softmax", "sm_rows", x, axis=1)
    case("Softmax", "sm_rows_strided", f32(2, 9, 70), axis=1)  # 140 rows with a stride of 70
    case("LogSoftmax", "lsm_rows", f32(130, 64), axis=-1)
    case("Hardmax", "hm_rows", np.round(f32(129, 5, 1) / 3).astype(np.float32), axis=1)  # stride 1, opset 13 axis
    case("ReduceMean", "mean_rows", f32(3, 70, 6), axes=[2], keepdims=0)  # 210 rows of 6 (partial vec of 4)
    case("GlobalAveragePool", "gap_rows", f32(2, 160, 7, 7))
    return inputs
# ---- end of the reduction cases


if __name__ == "__main__":
    main()
