#!/usr/bin/env python3
"""Builds models whose answers sit exactly on a rounding tie, where a GPU
driver's approximate division, fused multiply-adds, flushed subnormals or
short-range sin/cos would give a different answer from ONNX Runtime
(gpu_ties_vs_ort.sh converts them, runs them with oaax-run and compares):

  div_ties     Div, Floor(Div), Ceil(Div) and Mod(fmod=1) on integer quotients
               ((82, 41), (21, 7), (1e6, 1e3), (-82, 41), and q * b for many
               integers), IEEE special cases (x / 0, 0 / 0, inf / inf, x / inf)
               and random float pairs (Div compared bit for bit)
  resize_ties  Resize nearest: half_pixel + floor 3 -> 13, asymmetric x2 with
               round_prefer_floor / round_prefer_ceil (coordinates on .5),
               align_corners 3 -> 5 with round_prefer_ceil
  nms_ties     NonMaxSuppression with the IoU of two boxes exactly at the
               threshold (1/3 and 1/4, run-time iou_threshold): kept, as in ORT
  subnormals   NonZero, Unique (sorted, all outputs), ArgMax / ArgMin, TopK and
               Cast to bool on subnormals beside +0.0 and -0.0
  sincos       Sin, Cos and Tan at 1000, 1e4, -1e4, 3.14159274 and others
               (outputs named *_approx: compared to 1e-6 relative to 1 + |ref|,
               the rest bit for bit)
  log_special  Log of +-0, negatives, +-inf, NaN and 1 (bit for bit) and of
               subnormals and normal values (log_approx)
  det_singular Det of singular 3x3 and 4x4 integer matrices (exactly 0)

OUT_DIR/<model>/model.onnx and OUT_DIR/<model>/<set>/ (manifest.json + raw
inputs); OUT_DIR/models.txt lists "<model> <set>..." per line.

usage: make_gpu_tie_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

F32, I64 = T.FLOAT, T.INT64
NAMES = {np.float32: "float32", np.int32: "int32", np.int64: "int64"}


def save(out, name, nodes, inputs, outputs, inits=(), opset=13, sets=()):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="make_gpu_tie_models.py")
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    names = []
    for set_name, arrays in sets:
        sd = os.path.join(d, set_name)
        os.makedirs(sd, exist_ok=True)
        man = []
        for i, ((n, _, _), a) in enumerate(zip(inputs, arrays)):
            a.tofile(os.path.join(sd, f"{i}.bin"))
            man.append({"name": n, "dtype": NAMES[a.dtype.type], "shape": list(a.shape), "file": f"{i}.bin"})
        with open(os.path.join(sd, "manifest.json"), "w") as f:
            json.dump(man, f)
        names.append(set_name)
    return f"{name} {' '.join(names)}"


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    lines = []

    # Integer quotients (every q * b below 2^24 is exact), specials, random pairs.
    pairs = [(82, 41), (21, 7), (1e6, 1e3), (-82, 41), (82, -41), (-21, -7), (49, 7), (0.3, 0.1),
             (1, 0), (-1, 0), (0, 0), (np.inf, np.inf), (5, np.inf), (-5, np.inf), (np.inf, 3), (0, 5)]
    b = rng.integers(1, 4096, 2000)
    q = rng.integers(-4096, 4096, 2000)
    pairs += list(zip((q * b).tolist(), b.tolist()))
    pairs += list(zip(rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 7, 2000),
                      rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 7, 2000)))
    a = np.array([p[0] for p in pairs], np.float32)
    bb = np.array([p[1] for p in pairs], np.float32)
    n = len(pairs)
    nodes = [h.make_node("Div", ["a", "b"], ["div"]),
             h.make_node("Floor", ["div"], ["floor"]),
             h.make_node("Ceil", ["div"], ["ceil"]),
             h.make_node("Mod", ["a", "b"], ["fmod"], fmod=1)]
    lines.append(save(out, "div_ties", nodes, [("a", F32, [n]), ("b", F32, [n])],
                      [("div", F32), ("floor", F32), ("ceil", F32), ("fmod", F32)], sets=[("s0", [a, bb])]))

    # Resize nearest at coordinates exactly on a tie.
    inits = [nh.from_array(np.array([], np.float32), "no_roi"),
             nh.from_array(np.array([1, 1, 13, 13], np.int64), "to13"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "x2"),
             nh.from_array(np.array([1, 1, 5, 5], np.int64), "to5")]
    nodes = [h.make_node("Resize", ["x", "no_roi", "", "to13"], ["hp_floor"], mode="nearest",
                         coordinate_transformation_mode="half_pixel", nearest_mode="floor"),
             h.make_node("Resize", ["x", "no_roi", "", "to13"], ["hp_ceil"], mode="nearest",
                         coordinate_transformation_mode="half_pixel", nearest_mode="ceil"),
             h.make_node("Resize", ["x", "no_roi", "x2"], ["asym_pf"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="round_prefer_floor"),
             h.make_node("Resize", ["x", "no_roi", "x2"], ["asym_pc"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="round_prefer_ceil"),
             h.make_node("Resize", ["x", "no_roi", "", "to5"], ["ac_pc"], mode="nearest",
                         coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_ceil"),
             h.make_node("Resize", ["x", "no_roi", "", "to5"], ["ac_pf"], mode="nearest",
                         coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_floor")]
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    lines.append(save(out, "resize_ties", nodes, [("x", F32, [1, 1, 3, 3])],
                      [(o, F32) for o in ("hp_floor", "hp_ceil", "asym_pf", "asym_pc", "ac_pc", "ac_pf")],
                      inits=inits, sets=[("s0", [x])]))

    # NMS: B and C overlap A with IoU exactly 1/3 and 1/4; D overlaps A above both.
    boxes = np.array([[[0, 0, 2, 2], [1, 0, 3, 2], [0, 0, 1, 1], [0, 0, 2, 1.9]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    inits = [nh.from_array(np.array([10], np.int64), "max_out")]
    nodes = [h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"], ["selected"])]
    sets = [(f"t{i}", [boxes, scores, np.array([t], np.float32)])
            for i, t in enumerate((np.float32(1) / np.float32(3), np.float32(0.25), np.float32(0.3)))]
    lines.append(save(out, "nms_ties", nodes, [("boxes", F32, [1, 4, 4]), ("scores", F32, [1, 1, 4]),
                                                ("iou", F32, [1])],
                      [("selected", I64)], inits=inits, sets=sets))

    # Subnormals beside signed zeros.
    v = np.array([1e-40, 0.0, -1e-40, -0.0, 2e-40, 1e-40, 5.0, 0.0, -3e-45, 1.0], np.float32)
    nodes = [h.make_node("NonZero", ["x"], ["nonzero"]),
             h.make_node("Unique", ["x"], ["uniq", "uniq_first", "uniq_inverse", "uniq_counts"], sorted=1),
             h.make_node("ArgMax", ["xs"], ["argmax"], axis=0, keepdims=0),
             h.make_node("ArgMin", ["xs"], ["argmin"], axis=0, keepdims=0),
             h.make_node("TopK", ["x", "k"], ["topk_v", "topk_i"], largest=1, sorted=1),
             h.make_node("TopK", ["x", "k"], ["bottomk_v", "bottomk_i"], largest=0, sorted=1),
             h.make_node("Cast", ["x"], ["cast_bool"], to=T.BOOL)]
    inits = [nh.from_array(np.array([4], np.int64), "k")]
    xs = np.array([0.0, -0.0, 1e-40, 3e-40, 2e-40, -1e-40, -4e-40], np.float32)
    lines.append(save(out, "subnormals", nodes, [("x", F32, [10]), ("xs", F32, [7])],
                      [("nonzero", I64), ("uniq", F32), ("uniq_first", I64), ("uniq_inverse", I64),
                       ("uniq_counts", I64), ("argmax", I64), ("argmin", I64), ("topk_v", F32), ("topk_i", I64),
                       ("bottomk_v", F32), ("bottomk_i", I64), ("cast_bool", T.BOOL)], inits=inits, sets=[("s0", [v, xs])]))

    # Sin / Cos outside [-pi, pi].
    x = np.array([1000, 1e4, -1e4, 3.14159274, -3.14159274, 0, 1, -1000, 100, 12345.678, 6.2831855, 0.5],
                 np.float32)
    nodes = [h.make_node("Sin", ["x"], ["sin_approx"]), h.make_node("Cos", ["x"], ["cos_approx"]),
             h.make_node("Tan", ["x"], ["tan_approx"])]
    lines.append(save(out, "sincos", nodes, [("x", F32, [len(x)])],
                      [("sin_approx", F32), ("cos_approx", F32), ("tan_approx", F32)],
                      sets=[("s0", [x])]))

    # Log at its special values and on subnormals (GLSL leaves log(x <= 0)
    # undefined: SwiftShader's log(0) is -88.03; a driver may flush a
    # subnormal argument to 0). The special values must be exact; the rest
    # within 1e-6 (log_approx).
    sp = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1.0], np.float32)
    xl = np.array([1e-40, 1.4e-45, 1.1754942e-38, 1.17549435e-38, 2.5, 1e30, 0.5, 3e-39], np.float32)
    nodes = [h.make_node("Log", ["sp"], ["log_special"]), h.make_node("Log", ["xl"], ["log_approx"])]
    lines.append(save(out, "log_special", nodes, [("sp", F32, [len(sp)]), ("xl", F32, [len(xl)])],
                      [("log_special", F32), ("log_approx", F32)], sets=[("s0", [sp, xl])]))

    # Det of singular integer matrices.
    m3 = np.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[2, 4, 6], [1, 3, 5], [3, 7, 11]],
                   [[3, 1, 2], [6, 2, 4], [1, 7, 5]]], np.float32)
    m4 = np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]],
                   [[2, 0, 1, 3], [1, 1, 1, 1], [3, 1, 2, 4], [0, 5, 2, 7]]], np.float32)
    nodes = [h.make_node("Det", ["m3"], ["det3"]), h.make_node("Det", ["m4"], ["det4"])]
    lines.append(save(out, "det_singular", nodes, [("m3", F32, [3, 3, 3]), ("m4", F32, [2, 4, 4])],
                      [("det3", F32), ("det4", F32)], sets=[("s0", [m3, m4])]))

    with open(os.path.join(out, "models.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
