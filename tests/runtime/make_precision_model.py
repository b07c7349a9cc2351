"""A small CNN for the fp16 precision test (precision_fp16.sh) and its
references: Conv 3x3 (8 -> 16 channels, pad 1) + ReLU, Conv 1x1 (16 -> 16)
plus the first ReLU's output (a residual) + ReLU, GlobalAveragePool, Flatten,
Gemm (16 -> 10).
Writes OUT/model.onnx, the input manifest OUT/in, and OUT/ref (the float64
result) and OUT/bound (per output, the largest error precision=fp16 may
make; docs/kernels.md "fp16 precision"):

  one GEMM or convolution output: |err| <= u(K) * sum_k |a_k b_k|,
  u(K) = 2^-10 + 2^-22 + K * 2^-24
  (each operand rounded to binary16 within 2^-11 relative, so a product
  within 2^-10 + 2^-22; the K products summed in fp32 within K * 2^-24),

and through the layers an input error e adds sum_k |w_k| e_k (ReLU, the
residual add and the average do not grow it).
usage: make_precision_model.py OUT"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def u(k):
    return 2.0 ** -10 + 2.0 ** -22 + k * 2.0 ** -24


def conv(x, w, pad):
    """float64 NCHW convolution (stride 1), batch 1: returns [K, H, W]."""
    c, h, wd = x.shape
    ko, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((ko, h, wd))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("kc,chw->khw", w[:, :, i, j], xp[:, i:i + h, j:j + wd])
    return y


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 8, 12, 12)).astype(np.float32)
    w1 = (rng.standard_normal((16, 8, 3, 3)) * 0.3).astype(np.float32)
    b1 = rng.standard_normal(16).astype(np.float32) * 0.1
    w2 = (rng.standard_normal((16, 16, 1, 1)) * 0.3).astype(np.float32)
    b2 = rng.standard_normal(16).astype(np.float32) * 0.1
    w3 = (rng.standard_normal((10, 16)) * 0.3).astype(np.float32)
    b3 = rng.standard_normal(10).astype(np.float32) * 0.1
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3"), (b3, "b3"))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["a1"]),
        helper.make_node("Conv", ["a1", "w2", "b2"], ["c2"]),
        helper.make_node("Add", ["c2", "a1"], ["s2"]),
        helper.make_node("Relu", ["s2"], ["a2"]),
        helper.make_node("GlobalAveragePool", ["a2"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1),
    ]
    g = helper.make_graph(nodes, "precision_fp16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 10))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(out, "model.onnx"))

    d = lambda a: a.astype(np.float64)
    x64, w1d, w2d, w3d = d(x[0]), d(w1), d(w2), d(w3)
    c1 = conv(x64, w1d, 1) + d(b1)[:, None, None]
    a1 = np.maximum(c1, 0)
    e1 = u(8 * 9) * conv(np.abs(x64), np.abs(w1d), 1)
    c2 = conv(a1, w2d, 0) + d(b2)[:, None, None]
    a2 = np.maximum(c2 + a1, 0)
    e2 = conv(e1, np.abs(w2d), 0) + u(16) * conv(a1 + e1, np.abs(w2d), 0) + e1
    f, ef = a2.mean(axis=(1, 2)), e2.mean(axis=(1, 2))
    y = w3d @ f + d(b3)
    ey = np.abs(w3d) @ ef + u(f.size) * (np.abs(w3d) @ (f + ef))

    x.tofile(os.path.join(out, "in", "0.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as fh:
        json.dump([{"name": "x", "dtype": "float32", "shape": list(x.shape), "file": "0.bin"}], fh)
    for kind, a in (("ref", y), ("bound", ey)):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        a.reshape(1, 10).astype(np.float32).tofile(os.path.join(out, kind, "0.bin"))
        with open(os.path.join(out, kind, "manifest.json"), "w") as fh:
            json.dump([{"name": "y", "dtype": "float32", "shape": [1, 10], "file": "0.bin"}], fh)


if __name__ == "__main__":
    main()
