#!/usr/bin/env bash
# End to end, zero-size tensors (docs/toolchain.md "Zero-size tensors"):
# tensors with a 0 extent flow through the graph and come back with their
# shape in 0 bytes, as ONNX Runtime returns them. Models (opset 13), compared
# with ONNX Runtime:
#   symbolic_zero  x: [N, 4] with N in [0, 6] (config.json "dimensions"):
#                  ReduceSum and ReduceMax over axis 0 (at N = 0 the empty
#                  set's 0 and -inf), Concat of x and the sum along axis 0,
#                  Split of x along axis 1, MatMul of a piece by a [2, 3]
#                  weight (a [N, 3] output: [0, 3] in 0 bytes at N = 0),
#                  and MatMul(x^T, x) (K = N: zeros at N = 0); at N = 0, 1
#                  and 6, in that order, in one model load;
#   static_empty   x: [2, 0, 4] (0 bytes sent): its ReduceSum over axis 1
#                  (zeros), ReduceProd (ones), its Relu (a [2, 0, 4]
#                  output), MatMul(x^T, x) (K = 0: zeros [2, 4, 4]), and
#                  y: [5] split into [2, 0, 3] (an empty middle piece);
#   value_shaped   (opset 14) x: [2, 0, 4], b: [2, 3, 4], `axes` and a
#                  Reshape `shape` read at run time: Log of x's ReduceSum
#                  (-inf, or empty where the reduced axis is not the empty
#                  one), Reshape of x with allowzero to [3, 4, 0], [0, 8, 5],
#                  ... with its Relu and its Cast to int32 (as empty), and
#                  Exp of b's ReduceSum at axes 1, 2 and 0
#                  (ONNX Runtime 1.x reduces an empty input over a negative
#                  axis as if no axis were given, so none is used here);
#   split_empty    (lavapipe, no ONNX Runtime run) x: [0] split by sizes
#                  read at run time: [0, 0, 0] gives three [0] pieces,
#                  [1, 0, 2] fails the frame (each size's range is [0, 0]).
# On lavapipe and SwiftShader through libRuntimeLibrary.so (oaax-run,
# validation layer on). Exit 77 (skip) without numpy / onnx or the reference
# tools (scripts/fetch-reference.sh).
# usage: zero_size.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
# Models and one input directory per value set. cases.txt: "MODEL DIR";
# models.txt the models to convert.
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(25)
F = TensorProto.FLOAT
cases, names = [], []
def add(name, nodes, ins, outs, inits, sets, config=None, opset=13):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(*i) for i in ins],
                     [h.make_tensor_value_info(*o) for o in outs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
    if config:
        json.dump(config, open(f"{out}/{name}/config.json", "w"))
    names.append(name)
    for k, values in enumerate(sets):
        d = f"{out}/{name}/in{k}"
        os.makedirs(d)
        manifest = []
        for j, (iname, v) in enumerate(values.items()):
            v.tofile(f"{d}/{j}.bin")
            manifest.append({"name": iname, "dtype": str(v.dtype), "shape": list(v.shape), "file": f"{j}.bin"})
        json.dump(manifest, open(f"{d}/manifest.json", "w"))
        cases.append(f"{name} in{k}")
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
f32 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.float32), name)

add("symbolic_zero",
    [h.make_node("ReduceSum", ["x", "axes0"], ["sum"], keepdims=1),
     h.make_node("ReduceMax", ["x"], ["max"], axes=[0], keepdims=1),
     h.make_node("Concat", ["x", "sum"], ["cat"], axis=0),
     h.make_node("Split", ["x"], ["left", "right"], axis=1),
     h.make_node("MatMul", ["left", "w"], ["proj"]),
     h.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
     h.make_node("MatMul", ["xt", "x"], ["gram"])],
    [("x", F, ["N", 4])],
    [("sum", F, [1, 4]), ("max", F, [1, 4]), ("cat", F, ["M", 4]), ("right", F, ["N", 2]),
     ("proj", F, ["N", 3]), ("gram", F, [4, 4])],
    [i64("axes0", [0]), f32("w", rng.standard_normal((2, 3)))],
    [{"x": rng.standard_normal((n, 4)).astype(np.float32)} for n in (0, 1, 6)],
    {"dimensions": {"N": {"min": 0, "max": 6}}})

add("static_empty",
    [h.make_node("ReduceSum", ["x", "axes1"], ["sum"], keepdims=1),
     h.make_node("ReduceProd", ["x"], ["prod"], axes=[1], keepdims=0),
     h.make_node("Relu", ["x"], ["relu"]),
     h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
     h.make_node("MatMul", ["xt", "x"], ["gram"]),
     h.make_node("Split", ["y", "sizes"], ["y0", "y1", "y2"], axis=0)],
    [("x", F, [2, 0, 4]), ("y", F, [5])],
    [("sum", F, [2, 1, 4]), ("prod", F, [2, 4]), ("relu", F, [2, 0, 4]), ("gram", F, [2, 4, 4]),
     ("y0", F, [2]), ("y1", F, [0]), ("y2", F, [3])],
    [i64("axes1", [1]), i64("sizes", [2, 0, 3])],
    [{"x": np.zeros((2, 0, 4), np.float32), "y": rng.standard_normal(5).astype(np.float32)}])

# Sizes computed from values read at run time (opset 14): ReduceSum over
# `axes` of the empty x, then Log (a [2, 1, 4] of -inf, or an empty [2, 0,
# 1] / [1, 0, 4] whose Log dispatch has no work), a Reshape of x to `shape`
# with allowzero (an empty output of the values' shape), and Exp of the
# ReduceSum of a full b over the same axes (6 elements at the conversion's
# point, axes = 2, but 8 and 12 at axes 1 and 0: planned at b's region).
I64 = TensorProto.INT64
add("value_shaped",
    [h.make_node("ReduceSum", ["x", "axes"], ["xs"], keepdims=1),
     h.make_node("Log", ["xs"], ["log_sum"]),
     h.make_node("Reshape", ["x", "shape"], ["reshaped"], allowzero=1),
     h.make_node("Relu", ["reshaped"], ["relu_reshaped"]),
     h.make_node("Cast", ["reshaped"], ["int_reshaped"], to=TensorProto.INT32),
     h.make_node("ReduceSum", ["b", "axes"], ["bs"], keepdims=1),
     h.make_node("Exp", ["bs"], ["exp_sum"])],
    [("x", F, [2, 0, 4]), ("axes", I64, [1]), ("shape", I64, [3]), ("b", F, [2, 3, 4])],
    [("log_sum", F, ["l0", "l1", "l2"]), ("reshaped", F, ["r0", "r1", "r2"]), ("exp_sum", F, ["e0", "e1", "e2"]),
     ("relu_reshaped", F, ["r0", "r1", "r2"]), ("int_reshaped", TensorProto.INT32, ["r0", "r1", "r2"])],
    [],
    [{"x": np.zeros((2, 0, 4), np.float32), "axes": np.array(a, np.int64), "shape": np.array(s, np.int64),
      "b": rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)}
     for a, s in (([1], [3, 4, 0]), ([2], [0, 8, 5]), ([0], [4, 0, 7]), ([1], [0, 0, 0]))],
    opset=14)

open(f"{out}/cases.txt", "w").write("\n".join(cases) + "\n")
open(f"{out}/models.txt", "w").write("\n".join(names) + "\n")

# Split sizes read at run time over an empty axis (lavapipe, no ONNX Runtime
# run): sizes of 0 run; any other size is outside the range the toolchain
# derives for them ([0, 0]) and fails the frame.
g = h.make_graph([h.make_node("Split", ["x", "split"], ["p0", "p1", "p2"], axis=0)], "split_empty",
                 [h.make_tensor_value_info("x", F, [0]), h.make_tensor_value_info("split", TensorProto.INT64, [3])],
                 [h.make_tensor_value_info(f"p{k}", F, [0]) for k in range(3)])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8)
onnx.checker.check_model(m)
os.makedirs(f"{out}/guard/split_empty")
onnx.save(m, f"{out}/guard/split_empty/model.onnx")
for k, sizes in enumerate([[0, 0, 0], [1, 0, 2]]):
    d = f"{out}/guard/split_empty/in{k}"
    os.makedirs(d)
    np.zeros(0, np.float32).tofile(f"{d}/0.bin")
    np.array(sizes, np.int64).tofile(f"{d}/1.bin")
    json.dump([{"name": "x", "dtype": "float32", "shape": [0], "file": "0.bin"},
               {"name": "split", "dtype": "int64", "shape": [3], "file": "1.bin"}], open(f"{d}/manifest.json", "w"))
open(f"{out}/guard/models.txt", "w").write("split_empty\n")
open(f"{out}/guard/cases.txt", "w").write(
    "split_empty in0\nsplit_empty in1 element 0 (split[0]) is 1, outside split[0]'s range [0, 0]\n")
PY
fail=0
e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules" || fail=1
e2e_convert "$py" "$build" "$tmp/guard" || fail=1
e2e_run_cases lavapipe "$tmp/guard" "$build" || fail=1
exit $fail
