#!/usr/bin/env python3
"""Builds ops_mix.onnx: one small graph whose many outputs exercise the
device operators added for PP-OCRv4 in their less common modes (Resize
coordinate / nearest / linear modes, ConvTranspose with groups, pads,
dilations and output_padding, Pow with negative bases, Max/Min, Slice with
negative steps, ReduceMean, unary functions, the fused Swish / HardSwish
chains and a residual Add fused into a Conv), plus its input (manifest dir).

usage: make_op_models.py OUT_DIR
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
    rng = np.random.default_rng(7)
    nodes, inits, outputs = [], [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def output(name):
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))

    x = "x"
    f32 = np.float32
    # Resize in several modes
    sc_up = const("sc_up", np.array([1, 1, 2, 2], f32))
    sc_mix = const("sc_mix", np.array([1, 1, 1.5, 0.5], f32))
    sizes = const("sizes", np.array([1, 4, 9, 5], np.int64))
    for i, (mode, ctm, nm, sc, sz) in enumerate([
            ("nearest", "half_pixel", "round_prefer_floor", sc_up, ""),
            ("nearest", "asymmetric", "ceil", sc_mix, ""),
            ("nearest", "align_corners", "round_prefer_ceil", "", sizes),
            ("nearest", "pytorch_half_pixel", "floor", sc_mix, ""),
            ("linear", "half_pixel", "round_prefer_floor", sc_mix, ""),
            ("linear", "align_corners", "round_prefer_floor", "", sizes),
            ("linear", "pytorch_half_pixel", "round_prefer_floor", sc_up, ""),
            ("linear", "asymmetric", "round_prefer_floor", sc_mix, "")]):
        ins = [x, "", sc] if sz == "" else [x, "", "", sz]
        output(node("Resize", ins, f"resize{i}", mode=mode, coordinate_transformation_mode=ctm, nearest_mode=nm))
    # ConvTranspose: groups 2, stride 2, pads, dilation 2, output_padding 1, bias
    wt = const("wt", rng.standard_normal((4, 3, 3, 3)).astype(f32))
    bt = const("bt", rng.standard_normal((6,)).astype(f32))
    output(node("ConvTranspose", [x, wt, bt], "convT", group=2, strides=[2, 2], pads=[1, 0, 2, 1],
                dilations=[2, 1], output_padding=[1, 1]))
    # Pow / Max / Min
    output(node("Pow", [x, const("two", np.array(2, f32))], "pow2"))
    output(node("Pow", [x, const("three", np.array([3], f32))], "pow3"))
    ax = node("Abs", [x], "absx")
    output(node("Pow", [ax, const("p07", np.array(0.7, f32))], "pow07"))
    output(node("Max", [x, const("mx", rng.standard_normal((1, 4, 1, 8)).astype(f32))], "max"))
    output(node("Min", [x, const("mn", rng.standard_normal((6, 1)).astype(f32))], "min"))
    # Slice with negative and positive steps (device copy)
    output(node("Slice", [x, const("st", np.array([-1, 1], np.int64)), const("en", np.array([-100, 6], np.int64)),
                          const("axs", np.array([3, 2], np.int64)), const("sps", np.array([-2, 2], np.int64))], "slice"))
    # ReduceMean (opset 13: axes attribute)
    output(node("ReduceMean", [x], "rmean_last", axes=[-1], keepdims=0))
    output(node("ReduceMean", [x], "rmean_hw", axes=[2, 3]))
    # unary functions
    for op in ["Exp", "Tanh", "Neg", "Sigmoid"]:
        output(node(op, [x], op.lower()))
    output(node("Sqrt", [ax], "sqrt"))
    output(node("Reciprocal", [node("Add", [ax, const("one", np.array(1, f32))], "abs1")], "recip"))
    # fused chains: x*sigmoid(1.5x), (x+3) clip /6 HardSwish
    s = node("Sigmoid", [node("Mul", [x, const("c15", np.array([1.5], f32))], "m15")], "sg")
    output(node("Mul", [x, s], "swish"))
    t = node("Clip", [node("Add", [x, const("c3", np.array(3, f32))], "a3"), const("z", np.array(0, f32)),
                      const("six", np.array(6, f32))], "clip6")
    output(node("Div", [node("Mul", [x, t], "xm"), "six"], "hswish"))
    # Conv + residual Add + Relu, and a Softmax over a middle axis
    wc = const("wc", rng.standard_normal((4, 4, 3, 3)).astype(f32) * 0.3)
    c = node("Conv", [x, wc], "conv", pads=[1, 1, 1, 1])
    output(node("Relu", [node("Add", [c, x], "resadd")], "res_relu"))
    output(node("Softmax", [x], "softmax_ax1", axis=1))
    # Constant affine after a Conv (folded into its weights and bias:
    # per-channel Mul, scalar Add) and after a non-Conv value (Affine unary);
    # ConvTranspose 2x2 stride 2 (the CPU-class tap4 kernel) followed by a
    # per-channel Add and Mul (folded into it).
    wa = const("wa", rng.standard_normal((5, 4, 3, 3)).astype(f32) * 0.3)
    ca = node("Conv", [x, wa], "conv_aff", pads=[1, 1, 1, 1])
    ma = node("Mul", [const("sa", rng.standard_normal((5, 1, 1)).astype(f32)), ca], "conv_aff_mul")
    output(node("Add", [ma, const("ba", np.array([0.75], f32))], "conv_aff_add"))
    output(node("Add", [node("Mul", [node("Tanh", [x], "tanh_aff"), const("a_aff", np.array(1.5, f32))], "mul_aff"),
                        const("b_aff", np.array(-0.25, f32))], "affine"))
    wt4 = const("wt4", rng.standard_normal((4, 3, 2, 2)).astype(f32))
    ct4 = node("ConvTranspose", [x, wt4], "convT_tap4", strides=[2, 2], kernel_shape=[2, 2])
    at4 = node("Add", [ct4, const("bt4", rng.standard_normal((1, 3, 1, 1)).astype(f32))], "convT_tap4_add")
    output(node("Mul", [at4, const("st4", rng.standard_normal((3, 1, 1)).astype(f32))], "convT_tap4_mul"))
    # TfIdfVectorizer (decomposed: windows gathered and compared with the
    # pool): IDF with weights over uni-, bi- and trigrams with skips on int64
    # rows, TFIDF without weights (weights 1) over bigrams of an int32 vector,
    # TF with two n-grams counted into one column.
    pool = [0, 1, 2, 3, 4,  0, 1, 2, 2, 4, 0, 3, 3,  1, 2, 0, 3, 3, 3]
    output(node("TfIdfVectorizer", ["ids"], "tfidf_idf", mode="IDF", min_gram_length=1, max_gram_length=3,
                max_skip_count=2, ngram_counts=[0, 5, 13], ngram_indexes=[7, 0, 2, 4, 6, 1, 3, 5, 8, 9, 10],
                pool_int64s=pool, weights=[0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 2.5, 1.25, 4.0, 0.125]))
    output(node("TfIdfVectorizer", ["ids32"], "tfidf_tfidf", mode="TFIDF", min_gram_length=2, max_gram_length=2,
                max_skip_count=1, ngram_counts=[0, 2], ngram_indexes=[5, 0, 1, 2, 3, 4],
                pool_int64s=[1, 5,  0, 1, 1, 1, 2, 3, 1, 0]))
    output(node("TfIdfVectorizer", ["ids"], "tfidf_tf", mode="TF", min_gram_length=1, max_gram_length=2,
                max_skip_count=3, ngram_counts=[0, 3], ngram_indexes=[2, 0, 1, 3, 1],
                pool_int64s=[1, 2, 4,  2, 2, 0, 4]))
    inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4, 6, 8]),
              helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 12]),
              helper.make_tensor_value_info("ids32", TensorProto.INT32, [10])]
    graph = helper.make_graph(nodes, "ops_mix", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_op_models.py")
    model.ir_version = 7
    model = onnx.shape_inference.infer_shapes(model)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "ops_mix.onnx"))
    xv = (rng.standard_normal((1, 4, 6, 8)) * 2).astype(f32)
    xv.tofile(os.path.join(out, "in", "0.bin"))
    ids = rng.integers(0, 5, (2, 12)).astype(np.int64)
    ids.tofile(os.path.join(out, "in", "1.bin"))
    ids32 = rng.integers(0, 4, (10,)).astype(np.int32)
    ids32.tofile(os.path.join(out, "in", "2.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": [1, 4, 6, 8], "file": "0.bin"},
                   {"name": "ids", "dtype": "int64", "shape": [2, 12], "file": "1.bin"},
                   {"name": "ids32", "dtype": "int32", "shape": [10], "file": "2.bin"}], f)


if __name__ == "__main__":
    main()
