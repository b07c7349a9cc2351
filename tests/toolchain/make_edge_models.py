#!/usr/bin/env python3
"""Builds small models whose answers depend on details that are easy to get
silently wrong, each with config.json where it has dynamic shapes or run-time
values, and input sets (edge_cases_vs_ort.sh converts them, runs them with
oaax-run and compares with ONNX Runtime):

  int_act      int32 / int64 Add, Sub, Mul followed by Relu, Neg or Abs (an
               activation after an integer operator is its own operator,
               never fused into the integer kernel)
  fold_wrap    constants folded at conversion: Cast of int64 values outside
               int32 to int32 and an int32 Mul 65536 x 65536 wrap (two's
               complement), added to an int32 input
  cast_int64   Cast of float32 to int64 written as an int64 graph output:
               values beyond int32 exactly, NaN and out-of-range values as
               ONNX Runtime gives them (INT64_MIN)
  rnn_layout1  RNN, GRU and LSTM, bidirectional, layout 1 (batch first), with
               initial_h / initial_c inputs, batch 2 and 3 (the reference:
               the layout-0 layer between Transposes, which ONNX Runtime runs)
  resize_len   Resize linear align_corners upsampling 7 -> 16 (scale 2.3) and
               pytorch_half_pixel down to an output length of 1
  pad_runtime  Pad with run-time `pads` of a [1, 3, 224, 224] tensor, pads
               named in config.json with ranges
  pool_ceil    MaxPool and AveragePool, kernel 4, stride 4, pads 1,
               ceil_mode 1, with H dynamic in [8, 24]

OUT_DIR/<model>/model.onnx, OUT_DIR/<model>/config.json (when needed),
OUT_DIR/<model>/reference.onnx (the model ONNX Runtime runs, when it differs) and
OUT_DIR/<model>/<set>/ (manifest.json + raw inputs) for each input set;
OUT_DIR/models.txt lists "<model> <set>..." per line.

usage: make_edge_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

F32, I32, I64 = T.FLOAT, T.INT32, T.INT64
NP = {F32: np.float32, I32: np.int32, I64: np.int64}
NAMES = {np.float32: "float32", np.int32: "int32", np.int64: "int64"}


def model(name, nodes, inputs, outputs, inits, opset):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="make_edge_models.py")
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    return m


def save(out, name, nodes, inputs, outputs, inits=(), opset=14, config=None, sets=(), ref_nodes=None):
    """ref_nodes: the nodes of an equivalent model for ONNX Runtime (reference.onnx) where it lacks the
    operator's mode."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(model(name, nodes, inputs, outputs, inits, opset), os.path.join(d, "model.onnx"))
    if ref_nodes is not None:
        onnx.save(model(name, ref_nodes, inputs, outputs, inits, opset), os.path.join(d, "reference.onnx"))
    if config is not None:
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
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
    rng = np.random.default_rng(11)
    lines = []

    # Integer arithmetic with an activation after it.
    nodes, outs = [], []
    # (ONNX Runtime has no int64 Relu.)
    for t, sfx, pairs in ((I32, "32", (("Add", "Relu"), ("Sub", "Neg"), ("Mul", "Abs"))),
                          (I64, "64", (("Add", "Abs"), ("Sub", "Neg"), ("Mul", "Abs")))):
        for op, act in pairs:
            mid = f"{op.lower()}{sfx}"
            nodes.append(h.make_node(op, [f"a{sfx}", f"b{sfx}"], [mid], name=mid))
            nodes.append(h.make_node(act, [mid], [f"{mid}_{act.lower()}"], name=f"{mid}_{act.lower()}"))
            outs.append((f"{mid}_{act.lower()}", t))
    a = np.array([-5, 3, -1, 7, 0, -40000, 123456, -2], np.int32)
    b = np.array([1, -9, -2, 2, 0, 30000, -7, -2], np.int32)
    lines.append(save(out, "int_act", nodes, [("a32", I32, [8]), ("b32", I32, [8]), ("a64", I64, [8]), ("b64", I64, [8])],
                      outs, sets=[("s0", [a, b, a.astype(np.int64), b.astype(np.int64)])]))

    # Integer constants folded at conversion.
    big = nh.from_array(np.array([2**31 + 5, -2**31 - 7], np.int64), "big")
    m16 = nh.from_array(np.array([65536, 65536 * 3], np.int32), "m16")
    nodes = [h.make_node("Cast", ["big"], ["big32"], to=I32, name="cast_big"),
             h.make_node("Mul", ["m16", "m16"], ["sq"], name="square"),
             h.make_node("Add", ["x", "big32"], ["cast_plus_x"], name="add_cast"),
             h.make_node("Add", ["x", "sq"], ["mul_plus_x"], name="add_mul")]
    lines.append(save(out, "fold_wrap", nodes, [("x", I32, [2])], [("cast_plus_x", I32), ("mul_plus_x", I32)],
                      inits=[big, m16], sets=[("s0", [np.array([1, -1], np.int32)])]))

    # Float -> int64 at the graph boundary.
    x = np.array([3e9, -3e9, 2.5, -7.9, 1e10, -2**31, 2**31, 9.3e18, np.nan, np.inf, 1e19, -0.5], np.float32)
    lines.append(save(out, "cast_int64", [h.make_node("Cast", ["x"], ["y"], to=I64, name="cast")],
                      [("x", F32, [12])], [("y", I64)], sets=[("s0", [x])]))

    # Recurrent layers, batch first, with initial states. ONNX Runtime has no
    # layout 1: its reference is the layout-0 layer between Transposes.
    nodes, ref_nodes, ins, outs, inits, arrays = [], [], [], [], [], []
    H, I, S = 3, 4, 5
    for op, gates in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        for B in (2, 3):
            p = f"{op.lower()}_b{B}"
            inits += [nh.from_array((rng.standard_normal((2, gates * H, I)) * 0.5).astype(np.float32), p + "_W"),
                      nh.from_array((rng.standard_normal((2, gates * H, H)) * 0.5).astype(np.float32), p + "_R"),
                      nh.from_array((rng.standard_normal((2, 2 * gates * H)) * 0.3).astype(np.float32), p + "_B")]
            node_in = [p + "_X", p + "_W", p + "_R", p + "_B", "", p + "_h0"]
            ins += [(p + "_X", F32, [B, S, I]), (p + "_h0", F32, [B, 2, H])]
            arrays += [rng.standard_normal((B, S, I)).astype(np.float32), rng.standard_normal((B, 2, H)).astype(np.float32)]
            if op == "LSTM":
                node_in.append(p + "_c0")
                ins.append((p + "_c0", F32, [B, 2, H]))
                arrays.append(rng.standard_normal((B, 2, H)).astype(np.float32))
            node_out = [p + "_Y", p + "_Yh"] + ([p + "_Yc"] if op == "LSTM" else [])
            nodes.append(h.make_node(op, node_in, node_out, name=p, hidden_size=H, direction="bidirectional", layout=1))
            outs += [(o, F32) for o in node_out]
            t_in = [h.make_node("Transpose", [node_in[0]], [p + "_X0"], perm=[1, 0, 2])]
            t_in += [h.make_node("Transpose", [i], [i + "0"], perm=[1, 0, 2]) for i in node_in[5:]]
            t_out = [h.make_node("Transpose", [node_out[0] + "0"], [node_out[0]], perm=[2, 0, 1, 3])]
            t_out += [h.make_node("Transpose", [o + "0"], [o], perm=[1, 0, 2]) for o in node_out[1:]]
            ref_nodes += t_in + [h.make_node(op, [p + "_X0"] + node_in[1:5] + [i + "0" for i in node_in[5:]],
                                             [o + "0" for o in node_out], hidden_size=H, direction="bidirectional")]
            ref_nodes += t_out
    lines.append(save(out, "rnn_layout1", nodes, ins, outs, inits=inits, sets=[("s0", arrays)], ref_nodes=ref_nodes))

    # Resize: align_corners with a fractional in x scale, pytorch_half_pixel to one element.
    inits = [nh.from_array(np.array([], np.float32), "no_roi"),
             nh.from_array(np.array([1, 1, 1, 2.3], np.float32), "up"),
             nh.from_array(np.array([1, 1, 0.4, 0.2], np.float32), "to_one")]
    nodes = [h.make_node("Resize", ["x", "no_roi", "up"], ["ac_linear"], mode="linear",
                         coordinate_transformation_mode="align_corners", name="ac_linear"),
             h.make_node("Resize", ["x", "no_roi", "up"], ["ac_cubic"], mode="cubic",
                         coordinate_transformation_mode="align_corners", name="ac_cubic"),
             h.make_node("Resize", ["x", "no_roi", "to_one"], ["php_one"], mode="linear",
                         coordinate_transformation_mode="pytorch_half_pixel", name="php_one")]
    x = (np.arange(21, dtype=np.float32) * 10 % 61).reshape(1, 1, 3, 7)
    x[0, 0, 0] = np.arange(7) * 10
    lines.append(save(out, "resize_len", nodes, [("x", F32, [1, 1, 3, 7])],
                      [("ac_linear", F32), ("ac_cubic", F32), ("php_one", F32)], inits=inits, opset=13,
                      sets=[("s0", [x])]))

    # Pad with run-time pads at a realistic size.
    names = [f"p{i}" for i in range(8)]
    config = {"input_values": {"pads": names},
              "dimensions": {n: {"min": 0, "max": 0 if i in (0, 4) else 3} for i, n in enumerate(names)}}
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    sets = [(f"s{k}", [x, np.array(p, np.int64)]) for k, p in enumerate(
        [[0, 0, 0, 0, 0, 0, 0, 0], [0, 1, 2, 3, 0, 3, 2, 1], [0, 3, 3, 3, 0, 3, 3, 3]])]
    lines.append(save(out, "pad_runtime", [h.make_node("Pad", ["x", "pads", "cv"], ["y"], mode="constant", name="pad")],
                      [("x", F32, [1, 3, 224, 224]), ("pads", I64, [8])], [("y", F32)],
                      inits=[nh.from_array(np.array(0.5, np.float32), "cv")], opset=13, config=config, sets=sets))

    # Pooling with ceil_mode over a dynamic height.
    config = {"input_shapes": {"x": [1, 2, "H", 9]}, "dimensions": {"H": {"min": 8, "max": 24}}}
    nodes = [h.make_node(op, ["x"], [op.lower()], name=op.lower(), kernel_shape=[4, 4], strides=[4, 4],
                         pads=[1, 1, 1, 1], ceil_mode=1) for op in ("MaxPool", "AveragePool")]
    sets = [(f"h{hh}", [rng.standard_normal((1, 2, hh, 9)).astype(np.float32)]) for hh in (8, 11, 15, 19, 24)]
    lines.append(save(out, "pool_ceil", nodes, [("x", F32, [1, 2, "H", 9])], [("maxpool", F32), ("averagepool", F32)],
                      config=config, sets=sets))

    with open(os.path.join(out, "models.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
