#!/usr/bin/env python3
"""Builds models that apply math operators to the special values at the edges
of their domains: +-0, +-inf, NaN, subnormals, +-1 for the inverse
trigonometric functions, arguments that overflow or underflow exp, and
exponents on both sides of 0 (special_values_vs_ort.sh converts them, runs
them with oaax-run and compares with ONNX Runtime). Each special value comes
in through a graph input, so nothing is folded at conversion time:

  unary       every elementwise float operator (Abs ... Gelu, IsInf, IsNaN,
              Clip) on one vector of special values
  binary      Pow, Div, Mod (fmod = 1), Min, Max, Add, Sub, Mul on pairs of
              special values (pow(0, y), negative bases with integral
              exponents, infinite bases and exponents, x / +-0, ...)
  cast        Cast of finite floats (-0, halves, values near the limits of
              the target type) to int32, int64, int8, uint8 and bool
  consts      activations at degenerate parameters (alpha = 0, gamma = 0,
              lambd = 0 or below, Clip to [0, 0]) and Add(Mul(x, a), b)
              chains with 0 and 1 constants, which the conversion fuses into
              one activation whose parameters are specialization constants
              (a driver may fold 0 * v to 0 and v * 1 + 0 to v there)
  rows        Softmax, LogSoftmax, ReduceLogSumExp, ReduceMax, ReduceMin,
              ReduceSum, ReduceLogSum, ReduceL2 along rows holding -inf, +inf
              and NaN (a row of all -inf among them), LayerNormalization of
              constant rows (variance 0)

OUT_DIR/<model>/model.onnx and OUT_DIR/<model>/<set>/ (manifest.json + raw
inputs); OUT_DIR/models.txt lists "<model> <set>..." per line.

usage: make_special_value_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

F32 = T.FLOAT
INF, NAN = np.float32(np.inf), np.float32(np.nan)
FMAX = np.float32(3.4028235e38)


def save(out, name, nodes, inputs, outputs, arrays, inits=(), opset=20):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "specials"), exist_ok=True)
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, F32, a.shape) for n, a in zip(inputs, arrays)],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="make_special_value_models.py")
    m.ir_version = 9
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    man = []
    for i, (n, a) in enumerate(zip(inputs, arrays)):
        a.tofile(os.path.join(d, "specials", f"{i}.bin"))
        man.append({"name": n, "dtype": "float32", "shape": list(a.shape), "file": f"{i}.bin"})
    with open(os.path.join(d, "specials", "manifest.json"), "w") as f:
        json.dump(man, f)
    return f"{name} specials"


def unary(out):
    sub = np.float32(1e-40)  # subnormal
    x = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0, -2.0, 3.0, -3.0, INF, -INF, NAN,
                  sub, -sub, 1e-45, 88.0, 89.0, -88.0, -104.0, -110.0, 100.0, -100.0, 20.0, -20.0, 10.0, -10.0,
                  1e30, -1e30, FMAX, -FMAX, 0.99999994, -0.99999994, 1.0000001, 6.0, -6.0, 0.49999997, 4e9,
                  -4e9, 1e-8, -1e-8], np.float32)
    ops = [("Abs", {}), ("Neg", {}), ("Sign", {}), ("Sqrt", {}), ("Reciprocal", {}), ("Exp", {}), ("Log", {}),
           ("Floor", {}), ("Ceil", {}), ("Round", {}), ("Sin", {}), ("Cos", {}), ("Tan", {}), ("Asin", {}),
           ("Acos", {}), ("Atan", {}), ("Sinh", {}), ("Cosh", {}), ("Tanh", {}), ("Asinh", {}), ("Acosh", {}),
           ("Atanh", {}), ("Erf", {}), ("Sigmoid", {}), ("Softplus", {}), ("Softsign", {}), ("Elu", {}),
           ("Selu", {}), ("Celu", {}), ("Mish", {}), ("HardSwish", {}), ("HardSigmoid", {}), ("Relu", {}),
           ("LeakyRelu", {}), ("ThresholdedRelu", {}), ("Shrink", {"lambd": 0.5, "bias": 0.25}), ("Gelu", {}),
           ("Gelu", {"approximate": "tanh"}), ("IsNaN", {}), ("IsInf", {}), ("Clip", {})]
    nodes, outs, inits = [], [], []
    for op, attrs in ops:
        name = op.lower() + ("_tanh" if attrs.get("approximate") else "")
        ins = ["x"]
        if op == "Clip":
            inits = [nh.from_array(np.array(-1.0, np.float32), "clip_lo"),
                     nh.from_array(np.array(2.0, np.float32), "clip_hi")]
            ins += ["clip_lo", "clip_hi"]
        nodes.append(h.make_node(op, ins, [name], **attrs))
        outs.append((name, T.BOOL if op in ("IsNaN", "IsInf") else F32))
    return save(out, "unary", nodes, ["x"], outs, [x], inits)


def binary(out):
    # Pow's edge cases follow C99 Annex F pow, Div's IEEE division, Mod's C fmod.
    pairs = [(0, -1), (0, -2), (-0.0, -1), (-0.0, -3), (-0.0, -2), (0, 0), (-0.0, 0), (0, 1), (0, 2), (0, 3),
             (-0.0, 3), (0, 0.5), (-0.0, 0.5), (0, 1.5), (-2, 3), (-2, 2), (-2, 0.5), (-2, -1), (-2, -2),
             (-2, -3), (-8, 1 / 3), (-3, 3), (3, 3), (2, 10), (INF, -1), (INF, 2), (INF, 0.5), (-INF, 3),
             (-INF, 2), (-INF, -3), (-INF, -2), (-INF, 0.5), (-INF, -0.5), (2, INF), (0.5, INF), (2, -INF),
             (0.5, -INF), (-1, INF), (-1, -INF), (-2, INF), (-0.5, INF), (1, NAN), (1, INF), (1, -INF), (NAN, 0),
             (NAN, -0.0), (NAN, 1), (NAN, 2), (2, NAN), (10, 38), (10, 39), (2, -149), (2, -150), (-10, 39),
             (1.5, 0.5), (4, -0.5), (0, -0.5), (-0.0, -0.5), (1, 0), (-1, 0), (1, -0.0), (-1, -0.0), (INF, 0),
             (INF, INF), (-INF, INF), (5, INF), (-5, INF), (5, -INF), (1e30, 1e-30), (1e-30, 1e30), (5.5, 2),
             (-5.5, 2), (5, 0), (-0.0, 5), (NAN, NAN), (-0.0, 0), (0, -0.0), (INF, -INF), (7, 3.5),
             (-7, 3.5), (1e-40, 1e-40), (FMAX, FMAX), (-FMAX, 2)]
    x = np.array([p[0] for p in pairs], np.float32)
    y = np.array([p[1] for p in pairs], np.float32)
    ops = [("Pow", {}), ("Div", {}), ("Mod", {"fmod": 1}), ("Min", {}), ("Max", {}), ("Add", {}), ("Sub", {}),
           ("Mul", {})]
    nodes = [h.make_node(op, ["x", "y"], [op.lower()], **attrs) for op, attrs in ops]
    return save(out, "binary", nodes, ["x", "y"], [(op.lower(), F32) for op, _ in ops], [x, y])


def cast(out):
    # Finite values in every target's range: what ONNX Runtime gives for NaN,
    # infinities and out-of-range values is the platform's (docs/kernels.md).
    x = np.array([0.0, -0.0, 0.5, -0.5, 0.99999994, -0.99999994, 1.5, -2.5, 2.7, -2.7, 127.9, -128.9, 1e-40,
                  -1e-40], np.float32)
    big = np.array([2147483520.0, -2147483648.0, 1e15, -1e15, 255.5, 16777217.0], np.float32)
    targets = [("int32", T.INT32, x), ("int64", T.INT64, x), ("int8", T.INT8, x), ("uint8", T.UINT8, np.abs(x)),
               ("bool", T.BOOL, x), ("int32_big", T.INT32, big[:2]), ("int64_big", T.INT64, big[:4])]
    nodes, outs, inputs, arrays = [], [], [], []
    for name, to, a in targets:
        inputs.append("x_" + name)
        arrays.append(a)
        nodes.append(h.make_node("Cast", ["x_" + name], [name], to=to))
        outs.append((name, to))
    return save(out, "cast", nodes, inputs, outs, arrays)


def consts(out):
    sub = np.float32(1e-40)  # subnormal
    x = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, INF, -INF, NAN, sub, -sub], np.float32)
    scalars = {"zero": 0.0, "nzero": -0.0, "one": 1.0, "half": 0.5, "two": 2.0}
    inits = [nh.from_array(np.array(v, np.float32), n) for n, v in scalars.items()]
    inits.append(nh.from_array(np.zeros([1], np.float32), "slope0"))
    acts = [("LeakyRelu", "leakyrelu_a0", {"alpha": 0.0}), ("Elu", "elu_a0", {"alpha": 0.0}),
            ("Selu", "selu_a0", {"alpha": 0.0}), ("Selu", "selu_g0", {"gamma": 0.0}),
            ("Selu", "selu_a0_gneg", {"alpha": 0.0, "gamma": -1.0}),
            ("HardSigmoid", "hardsigmoid_a0", {"alpha": 0.0, "beta": 0.5}),
            ("HardSigmoid", "hardsigmoid_a0_b0", {"alpha": 0.0, "beta": 0.0}),
            ("ThresholdedRelu", "thresholdedrelu_a0", {"alpha": 0.0}),
            ("Shrink", "shrink_l0", {"lambd": 0.0, "bias": 0.0}),
            ("Shrink", "shrink_lneg", {"lambd": -1.0, "bias": 0.0}), ("Celu", "celu_a1", {"alpha": 1.0})]
    nodes = [h.make_node(op, ["x"], [name], **attrs) for op, name, attrs in acts]
    outs = [name for _, name, _ in acts]
    nodes.append(h.make_node("Clip", ["x", "zero", "zero"], ["clip_00"]))
    nodes.append(h.make_node("PRelu", ["x", "slope0"], ["prelu_0"]))
    outs += ["clip_00", "prelu_0"]
    # Add(Mul(x, a), b): fused into one affine activation a * x + b.
    for a, b in [("zero", "half"), ("one", "zero"), ("zero", "zero"), ("nzero", "zero"), ("one", "nzero"),
                 ("two", "zero")]:
        name = f"affine_{a}_{b}"
        nodes += [h.make_node("Mul", ["x", a], [name + "_m"]), h.make_node("Add", [name + "_m", b], [name])]
        outs.append(name)
    # x * Sigmoid(x * 0): fused into Swish(alpha = 0).
    nodes += [h.make_node("Mul", ["x", "zero"], ["swish_0_m"]), h.make_node("Sigmoid", ["swish_0_m"], ["swish_0_s"]),
              h.make_node("Mul", ["x", "swish_0_s"], ["swish_0"])]
    # An activation fused into an elementwise host, and the same constants as
    # a binary operator's second operand.
    nodes += [h.make_node("Add", ["x", "x"], ["leaky_host_t"]),
              h.make_node("LeakyRelu", ["leaky_host_t"], ["leaky_host"], alpha=0.0),
              h.make_node("Mul", ["x", "zero"], ["mul_0"]), h.make_node("Add", ["x", "zero"], ["add_0"]),
              h.make_node("Sub", ["x", "nzero"], ["sub_n0"]), h.make_node("Div", ["x", "one"], ["div_1"])]
    outs += ["swish_0", "leaky_host", "mul_0", "add_0", "sub_n0", "div_1"]
    return save(out, "consts", nodes, ["x"], [(n, F32) for n in outs], [x], inits)


def rows(out):
    r = np.array([[-INF] * 6,
                  [1.0, -INF, 2.0, -INF, 0.0, -1.0],
                  [1.0, INF, 2.0, 0.0, -INF, 3.0],
                  [INF, INF, 1.0, 0.0, 0.0, 0.0],
                  [1.0, NAN, 2.0, 0.0, 0.0, 0.0],
                  [-INF, NAN, -INF, -INF, -INF, -INF],
                  [100.0, 100.0, 100.0, 100.0, 100.0, 100.0],
                  [FMAX, FMAX, 0.0, 1.0, 2.0, 3.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                  [-0.0, -0.0, -0.0, -0.0, -0.0, -0.0],
                  [88.0, 89.0, 90.0, -88.0, -89.0, -90.0],
                  [3.0, 3.0, 3.0, 3.0, 3.0, 3.0]], np.float32)
    nodes = [h.make_node("Softmax", ["x"], ["softmax"], axis=-1),
             h.make_node("LogSoftmax", ["x"], ["logsoftmax"], axis=-1),
             h.make_node("Softmax", ["x"], ["softmax_cols"], axis=0),
             h.make_node("LogSoftmax", ["x"], ["logsoftmax_cols"], axis=0),
             h.make_node("ReduceLogSumExp", ["x", "axes"], ["logsumexp"], keepdims=0),
             h.make_node("ReduceMax", ["x", "axes"], ["max"], keepdims=0),
             h.make_node("ReduceMin", ["x", "axes"], ["min"], keepdims=0),
             h.make_node("ReduceSum", ["x", "axes"], ["sum"], keepdims=0),
             h.make_node("ReduceLogSum", ["x", "axes"], ["logsum"], keepdims=0),
             h.make_node("ReduceL2", ["x", "axes"], ["l2"], keepdims=0),
             h.make_node("LayerNormalization", ["ln", "scale", "bias"], ["layernorm"], axis=-1, epsilon=1e-5)]
    inits = [nh.from_array(np.array([1], np.int64), "axes"),
             nh.from_array(np.linspace(0.5, 1.5, 6).astype(np.float32), "scale"),
             nh.from_array(np.linspace(-0.25, 0.25, 6).astype(np.float32), "bias")]
    # LayerNormalization: constant rows (variance 0) of several magnitudes.
    ln = np.array([[0.0] * 6, [-0.0] * 6, [3.0] * 6, [-100.0] * 6, [1e18] * 6, [1e30] * 6, [1e-40] * 6,
                   [1.0, 2.0, INF, 0.0, 0.0, 0.0], [1.0, NAN, 0.0, 0.0, 0.0, 0.0],
                   [1.0, 1.0, 1.0, 1.0, 1.0, 1.0000001]], np.float32)
    outs = [(n.output[0], F32) for n in nodes]
    return save(out, "rows", nodes, ["x", "ln"], outs, [r, ln], inits)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    lines = [unary(out), binary(out), cast(out), consts(out), rows(out)]
    with open(os.path.join(out, "models.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
