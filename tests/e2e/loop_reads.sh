#!/usr/bin/env bash
# End to end, values read back inside the body of a Loop run on the device
# (docs/toolchain.md "Values read back inside a loop body",
# src/toolchain/ir/loop_reads.h): the body sizes its tensors from device
# data each iteration, as Mask R-CNN's paste_masks_in_image does. Models
# (opset 13), compared with ONNX Runtime on lavapipe and SwiftShader
# (oaax-run, validation layer on):
#   paste         box i (four integers cast from a float input) sizes the
#                 linear Resize of patch i, which is pasted at the box into
#                 a 12 x 16 canvas (Pad with pads computed from the box,
#                 clamped to the canvas), stacked per iteration; the sums
#                 of the resized patches are a loop-carried total and a
#                 second scan output; 0, 1 and 6 iterations of boxes inside
#                 the canvas, 4 of boxes reaching past it;
#   paste_capped  the same with config.json "limits" "max_loop_read_value"
#                 64: boxes within it run, a coordinate of 100 fails the
#                 frame naming the node that computes the box.
# Exit 77 (skip) without numpy / onnx or the reference tools
# (scripts/fetch-reference.sh).
# usage: loop_reads.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
out = sys.argv[1]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
rng = np.random.default_rng(7)
def i64(name, v):
    v = np.asarray(v, np.int64)
    return h.make_tensor(name, I64, list(v.shape), v.ravel().tolist())
H, W = 12, 16
# The body: box i (y0, x0, y1, x1, integers) sizes the Resize of patch i,
# which is pasted at the box into an H x W canvas (Pad), as Mask R-CNN's
# paste_masks_in_image does; the sum of the resized patch is a loop-carried
# total and a second scan output.
body = h.make_graph(
    [h.make_node("Gather", ["bint", "i"], ["b"], axis=0),
     h.make_node("Slice", ["b", "c0", "c2"], ["lo"]),
     h.make_node("Slice", ["b", "c2", "c4"], ["hi"]),
     h.make_node("Sub", ["hi", "lo"], ["ext"]),
     h.make_node("Max", ["ext", "one"], ["ext1"]),
     h.make_node("Min", ["ext1", "hw"], ["size"]),
     h.make_node("Sub", ["hw", "size"], ["room"]),
     h.make_node("Min", ["lo", "room"], ["off0"]),
     h.make_node("Max", ["off0", "zero"], ["off"]),
     h.make_node("Sub", ["room", "off"], ["after"]),
     h.make_node("Concat", ["ones", "size"], ["sizes"], axis=0),
     h.make_node("Gather", ["patches", "i"], ["p"], axis=0),
     h.make_node("Unsqueeze", ["p", "c0"], ["p4"]),
     h.make_node("Resize", ["p4", "", "", "sizes"], ["r"], mode="linear",
                 coordinate_transformation_mode="half_pixel"),
     h.make_node("Squeeze", ["r", "axes01"], ["r2"]),
     h.make_node("Concat", ["off", "after"], ["pads"], axis=0),
     h.make_node("Pad", ["r2", "pads"], ["pasted"]),
     h.make_node("ReduceSum", ["r"], ["total"], keepdims=0),
     h.make_node("Add", ["acc", "total"], ["acc_next"])],
    "paste",
    [h.make_tensor_value_info("i", I64, []), h.make_tensor_value_info("cond_in", B, []),
     h.make_tensor_value_info("acc", F, [])],
    [h.make_tensor_value_info("cond_in", B, []), h.make_tensor_value_info("acc_next", F, []),
     h.make_tensor_value_info("pasted", F, [H, W]), h.make_tensor_value_info("total", F, [])],
    [i64("c0", [0]), i64("c2", [2]), i64("c4", [4]), i64("one", [1]), i64("zero", [0]), i64("hw", [H, W]),
     i64("ones", [1, 1]), i64("axes01", [0, 1])])

cases, models = open(f"{out}/cases.txt", "w"), []
def model(name, sets, config=None):
    g = h.make_graph(
        [h.make_node("Cast", ["boxes", ], ["bint"], to=I64),
         h.make_node("Loop", ["n", "", "acc0"], ["acc", "pasted", "totals"], name="paste_loop", body=body)],
        name,
        [h.make_tensor_value_info("n", I64, []), h.make_tensor_value_info("boxes", F, [6, 4]),
         h.make_tensor_value_info("patches", F, [6, 1, 5, 5])],
        [h.make_tensor_value_info("acc", F, []), h.make_tensor_value_info("pasted", F, ["k", H, W]),
         h.make_tensor_value_info("totals", F, ["k"])],
        [h.make_tensor("acc0", F, [], [0.0])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m, full_check=True)
    os.makedirs(f"{out}/{name}", exist_ok=True)
    onnx.save(m, f"{out}/{name}/model.onnx")
    if config is not None:
        json.dump(config, open(f"{out}/{name}/config.json", "w"))
    for k, v in enumerate(sets):
        d = f"{out}/{name}/in{k}"
        os.makedirs(d, exist_ok=True)
        manifest = []
        for j, nm in enumerate(("n", "boxes", "patches")):
            a = np.array(v[nm], copy=True)
            a.tofile(f"{d}/{j}.bin")
            manifest.append({"name": nm, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{j}.bin"})
        json.dump(manifest, open(f"{d}/manifest.json", "w"))
        if (name, k) != ("paste_capped", 1): cases.write(f"{name} in{k}\n")  # over the bound: its message
    models.append(name)

def boxes(rows):
    return np.array(rows, np.float32) + np.float32(0.25)  # Cast truncates the fractions
inside = [[0, 0, 4, 7], [3, 5, 11, 16], [6, 2, 7, 3], [1, 9, 12, 15], [0, 0, 12, 16], [2, 2, 9, 4]]
# Boxes reaching past the canvas (and a degenerate one): clamped by the body.
outside = [[-3, -4, 5, 6], [8, 12, 20, 30], [5, 5, 5, 5], [-9, 3, 2, 40], [4, 4, 9, 7], [0, 0, 1, 1]]
patches = lambda: rng.standard_normal((6, 1, 5, 5)).astype(np.float32)
model("paste", [{"n": np.array(t, np.int64), "boxes": boxes(b), "patches": patches()}
                for t, b in ((0, inside), (1, inside), (6, inside), (4, outside))])
model("paste_capped", [{"n": np.array(2, np.int64), "boxes": boxes(b), "patches": patches()}
                       for b in (inside, [[0, 0, 4, 7], [3, 5, 11, 100]] + inside[2:])],
      config={"limits": {"max_loop_read_value": 64}})
cases.close()
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")
PY
fail=0
e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules" || fail=1
# Over the bound: the frame fails, naming the node and the bound.
printf '%s\n' "paste_capped in0" \
  "paste_capped in1 element 3 of 'paste_loop/body/b' (computed by node 'paste_loop/body/" > "$tmp/cases.txt"
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
done
exit $fail
