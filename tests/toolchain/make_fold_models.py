"""Writes shape_chains.onnx: the shape computations exported models use,
which the toolchain must fold at conversion (ir/eval*.cpp), plus an input.

- torchvision's detection transform: Shape -> Cast -> Div / Mul -> Floor ->
  Cast -> Concat -> Resize `sizes`, then padding to a multiple of 32 (Ceil)
  -> Pad `pads`. The input side 108 is a case where float32 and double
  disagree: floor(108.0f * (320.0f / 108.0f)) is 320 in float32, 319 in double.
- Swin's window padding: Mod(window - Mod(W, window), window) -> Pad `pads`.
- ViT's class-token expansion: Concat(N, -1, -1) -> Equal(-1) -> Where ->
  Expand `shape`.

Also writes window_dyn.onnx: the Swin and ViT chains over an input of
symbolic height and width (x = [1, 3, H, W]), converted with ranges
(window_dyn.json); its integer shape arithmetic folds into expressions of
H and W, and the bundle runs at every size in in_<H>_<W>/.

usage: make_fold_models.py OUT_DIR   (writes OUT_DIR/shape_chains.onnx, OUT_DIR/in/,
       OUT_DIR/window_dyn.onnx, OUT_DIR/window_dyn.json and OUT_DIR/in_<H>_<W>/)
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def const(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def main():
    out = sys.argv[1]
    f32, i64 = np.float32, np.int64
    inits = [
        const("min_size", 320.0, f32), const("i2", [2], i64), const("i4", [4], i64), const("i0", [0], i64),
        const("i1", [1], i64), const("nc", [1, 3], i64), const("f32_", 32.0, f32), const("zeros4", [0, 0, 0, 0], i64),
        const("zeros2", [0, 0], i64), const("win", 7, i64), const("zeros6", [0, 0, 0, 0, 0, 0], i64),
        const("minus1", [-1, -1], i64), const("m1", -1, i64), const("axes1", [1], i64),
        const("cls", np.arange(3, dtype=f32).reshape(1, 1, 3) * 0.5 - 0.25, f32),
    ]
    N = helper.make_node
    nodes = [
        # Detection transform: resize the short side to min_size, pad to a multiple of 32.
        N("Shape", ["x"], ["shape"], name="shape"),
        N("Slice", ["shape", "i2", "i4"], ["hw"], name="hw"),
        N("Cast", ["hw"], ["hwf"], to=TensorProto.FLOAT, name="hw_float"),
        N("ReduceMin", ["hwf"], ["short"], keepdims=0, name="short_side"),
        N("Div", ["min_size", "short"], ["scale"], name="scale"),
        N("Mul", ["hwf", "scale"], ["scaled"], name="scaled"),
        N("Floor", ["scaled"], ["floored"], name="floor"),
        N("Cast", ["floored"], ["new_hw"], to=TensorProto.INT64, name="new_hw"),
        N("Concat", ["nc", "new_hw"], ["sizes"], axis=0, name="sizes"),
        N("Resize", ["x", "", "", "sizes"], ["resized"], mode="linear", name="resize"),
        N("Cast", ["new_hw"], ["new_hwf"], to=TensorProto.FLOAT, name="new_hw_float"),
        N("Div", ["new_hwf", "f32_"], ["blocks"], name="blocks"),
        N("Ceil", ["blocks"], ["blocks_up"], name="ceil"),
        N("Mul", ["blocks_up", "f32_"], ["padded_f"], name="padded_f"),
        N("Cast", ["padded_f"], ["padded"], to=TensorProto.INT64, name="padded"),
        N("Sub", ["padded", "new_hw"], ["pad_end"], name="pad_end"),
        N("Concat", ["zeros4", "zeros2", "pad_end"], ["pads"], axis=0, name="pads"),
        N("Pad", ["resized", "pads"], ["batched"], name="pad"),
        # Swin: pad W up to a multiple of the window.
        N("Slice", ["shape", "i2", "i4"], ["hw2"], name="hw2"),
        N("Mod", ["hw2", "win"], ["rem"], name="rem"),
        N("Sub", ["win", "rem"], ["short_by"], name="short_by"),
        N("Mod", ["short_by", "win"], ["win_pad"], name="win_pad"),
        N("Concat", ["zeros6", "win_pad"], ["win_pads"], axis=0, name="win_pads"),
        N("Pad", ["x", "win_pads"], ["windowed"], name="win_pad_op"),
        # ViT: expand the class token to the batch.
        N("Slice", ["shape", "i0", "i1"], ["batch"], name="batch"),
        N("Concat", ["batch", "minus1"], ["target"], axis=0, name="target"),
        N("Equal", ["target", "m1"], ["is_keep"], name="is_keep"),
        N("Shape", ["target"], ["target_len"], name="target_len"),
        N("ConstantOfShape", ["target_len"], ["ones"], value=numpy_helper.from_array(np.array([1], i64)), name="ones"),
        N("Where", ["is_keep", "ones", "target"], ["expand_shape"], name="where"),
        N("Expand", ["cls", "expand_shape"], ["cls_b"], name="expand"),
        N("ReduceMean", ["x"], ["pooled"], axes=[2, 3], keepdims=0, name="pooled"),
        N("Unsqueeze", ["pooled", "axes1"], ["token"], name="token"),
        N("Concat", ["cls_b", "token"], ["tokens"], axis=1, name="tokens"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 108, 150])
    outputs = [helper.make_tensor_value_info("batched", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("windowed", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("tokens", TensorProto.FLOAT, None)]
    graph = helper.make_graph(nodes, "shape_chains", [x], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_fold_models.py")
    model.ir_version = 7
    onnx.save(model, os.path.join(out, "shape_chains.onnx"))
    write_input(out, "in", 108, 150, 0)
    # The Swin and ViT chains alone, over a symbolic height and width.
    keep = {"windowed", "tokens"}
    need = set(keep)
    for n in reversed(nodes):
        if any(o in need for o in n.output):
            need.update(i for i in n.input if i)
    dyn_nodes = [n for n in nodes if any(o in need for o in n.output)]
    used = {i for n in dyn_nodes for i in n.input}
    xd = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", "W"])
    dyn = helper.make_graph(dyn_nodes, "window_dyn", [xd], [o for o in outputs if o.name in keep],
                            [t for t in inits if t.name in used])
    model = helper.make_model(dyn, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_fold_models.py")
    model.ir_version = 7
    onnx.save(model, os.path.join(out, "window_dyn.onnx"))
    with open(os.path.join(out, "window_dyn.json"), "w") as f:
        json.dump({"input_shapes": {"x": [1, 3, "H", "W"]},
                   "dimensions": {"H": {"min": 100, "max": 120}, "W": {"min": 140, "max": 160}}}, f)
    for h, w in [(105, 150), (120, 160), (100, 147)]:
        write_input(out, f"in_{h}_{w}", h, w, h)


def write_input(out, name, h, w, seed):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    rng = np.random.default_rng(seed)
    rng.standard_normal((1, 3, h, w)).astype(np.float32).tofile(os.path.join(out, name, "0.bin"))
    with open(os.path.join(out, name, "manifest.json"), "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": [1, 3, h, w], "file": "0.bin"}], f)


if __name__ == "__main__":
    main()
