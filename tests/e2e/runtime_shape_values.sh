#!/usr/bin/env bash
# End to end, shape-deciding inputs read at run time with ranges
# (docs/toolchain.md "Run-time values with ranges"): each model is converted
# once with config.json "input_values" naming the elements of its shape input
# and "dimensions" giving their ranges, then one loaded bundle runs several
# frames with different values, so the outputs change shape from frame to
# frame. Models (one node each), compared with ONNX Runtime:
#   center_crop_pad   CenterCropPad-18 of a [5, 6, 3] tensor, `shape` (int64
#                     [2], axes [0, 1]) in [1, 10] x [1, 12]: crop both,
#                     pad both, crop one and pad the other (odd
#                     differences), unchanged;
#   resize_not_larger / resize_not_smaller
#                     Resize-18 (nearest) of a [1, 1, 4, 6] tensor, `sizes`
#                     (int64 [2], axes [2, 3]) in [1, 10] x [1, 12] with
#                     keep_aspect_ratio_policy not_larger / not_smaller
#                     (the interpolation's scale is the policy's, not
#                     output / input); and not_larger with the sizes bound
#                     at conversion;
#   resize_scales_axes Resize-18 (linear) of a [1, 1, 4, 6] tensor, `scales`
#                     (float [2], axes [3, 2]: W listed first) in
#                     [0.5, 2.5] x [0.5, 2];
#   pad_axes          Pad-18 (constant) of a [3, 4] tensor, `pads` (int64
#                     [2]) in [0, 2] and `axes` (int64 [1]) in [-2, 1]:
#                     each axis, by a positive and a negative number;
#   pad_wrap          Pad-19 (wrap) of a [3, 4] tensor, `pads` (int64 [4])
#                     in [0, 3] x [0, 4] x [0, 3] x [0, 4], zero pads among
#                     them;
#   col2im            Col2Im-18 of a [1, 4, 6] input, `image_shape` in
#                     [1, 8] x [1, 8] and `block_shape` in [1, 4] x [1, 4]:
#                     one and two channels, blocks 2 x 2, 1 x 2, 2 x 1;
#   col2im_3d         Col2Im-18 of a [1, 4, 12] input into 3-D images,
#                     `image_shape` in [1, 8]^3 and `block_shape` in [1, 4]^3;
#   col2im_3d_bound   the same with the sizes bound at conversion, pads and
#                     strides;
#   dft_axis          DFT-20 of a [1, 5, 5, 2] signal, `axis` (int64 scalar)
#                     in [-3, 2]: axes 1 and 2, given both ways (the DFT
#                     along each, selected on the device);
#   affine_grid / affine_grid_align
#                     AffineGrid-20 of theta [2, 2, 3], `size` (int64 [4])
#                     N in [1, 4], C in [1, 3], H in [1, 5], W in [1, 6],
#                     align_corners 0 and 1, extents of 1 among them.
# Then values that break a rule the toolchain turned into a run-time guard
# must fail their frame naming the node: Col2Im sizes whose block grid is
# not the input's block count, a DFT axis that is not a signal
# axis, an AffineGrid batch other than theta's, a repeated Pad axis. Every bundle runs through
# libRuntimeLibrary.so (oaax-run, validation layer on) on lavapipe and
# SwiftShader. Exit 77 (skip) without numpy / onnx or the reference tools
# (scripts/fetch-reference.sh).
# usage: runtime_shape_values.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
# Models, their config.json and one input directory per value set.
# cases.txt: "MODEL DIR" (compared with ONNX Runtime); guard/cases.txt:
# "MODEL DIR MESSAGE" (the frame must fail with MESSAGE).
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
out = sys.argv[1]
rng = np.random.default_rng(27)
F, I64 = TensorProto.FLOAT, TensorProto.INT64
models = {}  # name: (inputs [(name, type, shape)], [value sets {input: array}])

def add(name, node, opset, ins, out_rank, names, sets, where=out):
    """One node; `names`: value input -> {element name: (min, max)} (config.json)."""
    outs = [h.make_tensor_value_info("y", F, [f"d{i}" for i in range(out_rank)])]
    g = h.make_graph([node], name, [h.make_tensor_value_info(*i) for i in ins], outs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    os.makedirs(f"{where}/{name}")
    onnx.save(m, f"{where}/{name}/model.onnx")
    cfg = {"input_values": {k: list(v) for k, v in names.items()},
           "dimensions": {e: {"min": lo, "max": hi} for v in names.values() for e, (lo, hi) in v.items()}}
    json.dump(cfg, open(f"{where}/{name}/config.json", "w"))
    models[name] = (ins, sets, where)

def data(shape):
    return rng.uniform(-2, 2, shape).astype(np.float32)

x = data([5, 6, 3])
add("center_crop_pad", h.make_node("CenterCropPad", ["x", "shape"], ["y"], name="ccp", axes=[0, 1]), 18,
    [("x", F, [5, 6, 3]), ("shape", I64, [2])], 3, {"shape": {"s0": (1, 10), "s1": (1, 12)}},
    [{"x": x, "shape": np.array(v, np.int64)} for v in ([2, 3], [8, 11], [3, 9], [10, 1], [5, 6])])
x = data([1, 1, 4, 6])
for policy in ("not_larger", "not_smaller"):
    add(f"resize_{policy}",
        h.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", axes=[2, 3],
                    keep_aspect_ratio_policy=policy),
        18, [("x", F, [1, 1, 4, 6]), ("sizes", I64, [2])], 4, {"sizes": {"h": (1, 10), "w": (1, 12)}},
        [{"x": x, "sizes": np.array(v, np.int64)} for v in ([2, 3], [8, 5], [7, 12], [3, 10], [10, 12])])
# The same policy with the sizes bound at conversion (config.json numbers): the
# interpolation's scale follows the policy there too.
add("resize_not_larger_bound",
    h.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
    18, [("x", F, [1, 1, 4, 6]), ("sizes", I64, [2])], 4, {}, [{"x": x, "sizes": np.array([8, 5], np.int64)}])
json.dump({"input_values": {"sizes": [8, 5]}}, open(f"{out}/resize_not_larger_bound/config.json", "w"))
add("resize_scales_axes",
    h.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", axes=[3, 2], mode="linear"),
    18, [("x", F, [1, 1, 4, 6]), ("scales", F, [2])], 4, {"scales": {"sw": (0.5, 2.5), "sh": (0.5, 2.0)}},
    [{"x": x, "scales": np.array(v, np.float32)} for v in ([0.5, 2.0], [2.5, 0.5], [1.5, 1.25])])
x = data([3, 4])
add("pad_axes", h.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad", mode="constant"), 18,
    [("x", F, [3, 4]), ("pads", I64, [2]), ("axes", I64, [1])], 2,
    {"pads": {"p0": (0, 2), "p1": (0, 2)}, "axes": {"a": (-2, 1)}},
    [{"x": x, "pads": np.array(p, np.int64), "axes": np.array([a], np.int64)}
     for p, a in (([1, 2], 0), ([2, 0], 1), ([0, 1], -1), ([2, 2], -2))])
add("pad_wrap", h.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="wrap"), 19,
    [("x", F, [3, 4]), ("pads", I64, [4])], 2,
    {"pads": {"b0": (0, 3), "b1": (0, 4), "e0": (0, 3), "e1": (0, 4)}},
    [{"x": x, "pads": np.array(p, np.int64)} for p in ([1, 2, 0, 3], [0, 0, 0, 0], [3, 4, 3, 4], [2, 0, 1, 1])])
cols = data([1, 4, 6])
add("col2im", h.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], name="col2im"), 18,
    [("x", F, [1, 4, 6]), ("image_shape", I64, [2]), ("block_shape", I64, [2])], 4,
    {"image_shape": {"ih": (1, 8), "iw": (1, 8)}, "block_shape": {"bh": (1, 4), "bw": (1, 4)}},
    [{"x": cols, "image_shape": np.array(i, np.int64), "block_shape": np.array(k, np.int64)}
     for i, k in (([3, 4], [2, 2]), ([4, 3], [2, 2]), ([6, 2], [1, 2]), ([3, 3], [2, 1]))])
# A 3-D image: sizes read at run time, and bound at conversion (numbers in
# config.json) with pads and strides.
cols3 = data([1, 4, 12])
add("col2im_3d", h.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], name="col2im"), 18,
    [("x", F, [1, 4, 12]), ("image_shape", I64, [3]), ("block_shape", I64, [3])], 5,
    {"image_shape": {"id": (1, 8), "ih": (1, 8), "iw": (1, 8)},
     "block_shape": {"bd": (1, 4), "bh": (1, 4), "bw": (1, 4)}},
    [{"x": cols3, "image_shape": np.array(i, np.int64), "block_shape": np.array(k, np.int64)}
     for i, k in (([3, 2, 4], [2, 1, 2]), ([4, 3, 2], [2, 2, 1]), ([2, 4, 3], [1, 2, 2]))])
add("col2im_3d_bound",
    h.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], name="col2im", pads=[0, 1, 0, 0, 1, 0],
                strides=[1, 1, 2]),
    18, [("x", F, [1, 4, 16]), ("image_shape", I64, [3]), ("block_shape", I64, [3])], 5, {},
    [{"x": data([1, 4, 16]), "image_shape": np.array([3, 2, 4], np.int64), "block_shape": np.array([2, 1, 2], np.int64)}])
json.dump({"input_values": {"image_shape": [3, 2, 4], "block_shape": [2, 1, 2]}},
          open(f"{out}/col2im_3d_bound/config.json", "w"))
sig = data([1, 5, 5, 2])
add("dft_axis", h.make_node("DFT", ["x", "", "axis"], ["y"], name="dft"), 20,
    [("x", F, [1, 5, 5, 2]), ("axis", I64, [])], 4, {"axis": {"ax": (-3, 2)}},
    [{"x": sig, "axis": np.array(v, np.int64)} for v in (1, 2, -2, -3)])
theta = data([2, 2, 3])
for align in (0, 1):
    add("affine_grid" + ("_align" if align else ""),
        h.make_node("AffineGrid", ["theta", "size"], ["y"], name="grid", align_corners=align), 20,
        [("theta", F, [2, 2, 3]), ("size", I64, [4])], 4,
        {"size": {"n": (1, 4), "c": (1, 3), "hh": (1, 5), "ww": (1, 6)}},
        [{"theta": theta, "size": np.array(v, np.int64)} for v in ([2, 1, 3, 4], [2, 3, 5, 6], [2, 1, 1, 1], [2, 2, 1, 6])])

def write_sets(name, msgs=None):
    ins, sets, where = models[name]
    lines = []
    for k, v in enumerate(sets):
        d = f"{where}/{name}/in{k}"
        os.makedirs(d)
        manifest = []
        for i, (n, t, s) in enumerate(ins):
            a = np.array(v[n], order="C")  # 0-d stays 0-d (ascontiguousarray makes it 1-d)
            a.tofile(f"{d}/{i}.bin")
            manifest.append({"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
        json.dump(manifest, open(f"{d}/manifest.json", "w"))
        lines.append(f"{name} in{k} {msgs[k] if msgs else ''}".rstrip())
    return lines

lines = [l for m in list(models) for l in write_sets(m)]
open(f"{out}/cases.txt", "w").write("\n".join(lines) + "\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")

# Guards: a valid frame, then one that breaks the rule.
g = f"{out}/guard"
os.makedirs(g)
first = set(models)
add("affine_grid_batch", h.make_node("AffineGrid", ["theta", "size"], ["y"], name="grid"), 20,
    [("theta", F, [2, 2, 3]), ("size", I64, [4])], 4,
    {"size": {"n": (1, 4), "c": (1, 3), "hh": (1, 5), "ww": (1, 6)}},
    [{"theta": theta, "size": np.array(v, np.int64)} for v in ([2, 1, 3, 4], [3, 1, 3, 4])], where=g)
add("pad_axes_repeated", h.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad"), 18,
    [("x", F, [3, 4]), ("pads", I64, [4]), ("axes", I64, [2])], 2,
    {"pads": {"p0": (0, 2), "p1": (0, 2), "p2": (0, 2), "p3": (0, 2)}, "axes": {"a0": (-2, 1), "a1": (-2, 1)}},
    [{"x": x, "pads": np.array([1, 1, 1, 1], np.int64), "axes": np.array(a, np.int64)} for a in ([0, 1], [1, -1])],
    where=g)
add("dft_axis_range", h.make_node("DFT", ["x", "", "axis"], ["y"], name="dft"), 20,
    [("x", F, [1, 5, 5, 2]), ("axis", I64, [])], 4, {"axis": {"ax": (1, 3)}},
    [{"x": sig, "axis": np.array(v, np.int64)} for v in (2, 3)], where=g)
add("col2im_grid", h.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], name="col2im"), 18,
    [("x", F, [1, 4, 6]), ("image_shape", I64, [2]), ("block_shape", I64, [2])], 4,
    {"image_shape": {"ih": (1, 8), "iw": (1, 8)}, "block_shape": {"bh": (1, 4), "bw": (1, 4)}},
    [{"x": cols, "image_shape": np.array(i, np.int64), "block_shape": np.array(k, np.int64)}
     for i, k in (([3, 4], [2, 2]), ([2, 7], [1, 4]))], where=g)
lines = write_sets("col2im_grid", ["", "Col2Im 'col2im': the input's 6 blocks must be the block grid"])
lines += write_sets("dft_axis_range", ["", "DFT 'dft': axis must be one of 1, 2"])
lines += write_sets("affine_grid_batch", ["", "AffineGrid 'grid': size[0] must equal theta's batch"])
lines += write_sets("pad_axes_repeated", ["", "Pad 'pad': an axis is repeated"])
open(f"{g}/cases.txt", "w").write("\n".join(lines) + "\n")
open(f"{g}/models.txt", "w").write("\n".join(m for m in models if m not in first) + "\n")
PY
fail=0
e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules" || fail=1
e2e_convert "$py" "$build" "$tmp/guard" || fail=1
e2e_run_cases lavapipe "$tmp/guard" "$build" || fail=1
exit $fail
