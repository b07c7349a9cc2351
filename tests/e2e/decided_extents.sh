#!/usr/bin/env bash
# End to end, data-dependent extents read back into decided symbols
# (docs/toolchain.md "Data-dependent extents", ir/extent.h
# DecidedExtentDim): a NonZero / Compress result read by a node that does
# not keep its extent ends a segment, the host reads the extent back, and
# the rest of the program is sized by it. Models (opset 13), compared with
# ONNX Runtime:
#   nonzero_shape      NonZero(x > t) -> Shape -> the count n builds a
#                      ConstantOfShape [n], a Range(0, n) and a Reshape of
#                      the indices to [n, 2];
#   topk_min           the torchvision detection post-processing pattern:
#                      s = GatherND(scores, Transpose(NonZero(scores > t)))
#                      (the scores above t), K = Min(Shape(s)[0], 3),
#                      TopK(s, K) and a Gather of the boxes by its indices;
#   concat_extents     Concat along the extent axis of two Compress results
#                      (x rows where a > 0, x rows where b > 0), and
#                      its Shape;
#   nonzero_nonzero    NonZero of a NonZero result;
#   nonzero_shape_only the Shape of a NonZero result, the only reader;
#   nms_of_selected    NonMaxSuppression of the boxes and scores above a
#                      threshold (one NonZero gathers both);
#   nms_reshaped       NonMaxSuppression whose boxes pass a Reshape to
#                      [n, -1] and [1, -1, 4] (the counts of boxes and
#                      scores through different shape arithmetic);
#   if_empty_known     If(Size(scores above t) == 0) with an empty constant
#                      then-branch and a compute else-branch: the condition
#                      is an expression of the extent, so no readback; then
#                      a Slice keeping the first 3;
#   nms_two_counts     (lavapipe, no ONNX Runtime run) NonMaxSuppression
#                      of boxes counted by a > t and scores by b > t: the
#                      two extents are unified under a run-time guard; equal
#                      counts run, different ones fail the frame naming the
#                      node (as ONNX Runtime refuses them);
#   dynamic_nonzero    NonZero of an [N, 4] input, N in 1..6 (config.json),
#                      its Shape and its Concat with itself along the
#                      extent axis, at N = 1, 3 and 6.
# Each runs with inputs that give a zero, a middle and the full extent
# (zero-size outputs come back with 0 bytes), on lavapipe and SwiftShader
# through libRuntimeLibrary.so (oaax-run, validation layer on). Exit 77
# (skip) without numpy / onnx or the reference tools
# (scripts/fetch-reference.sh).
# usage: decided_extents.sh PYTHON REPO_ROOT BUILD_DIR
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
from onnx import TensorProto, helper as h
out = sys.argv[1]
rng = np.random.default_rng(11)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
models = {}  # name: (inputs [(name, type, shape)], [value sets {input: array}])
def add(name, nodes, ins, outs, sets, inits=()):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(*i) for i in ins],
                     [h.make_tensor_value_info(*o) for o in outs], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
    models[name] = (ins, sets)
def i64(name, v, shape=None):
    v = np.asarray(v, np.int64)
    return h.make_tensor(name, I64, list(v.shape) if shape is None else shape, v.ravel().tolist())
def f32(name, v):
    v = np.asarray(v, np.float32)
    return h.make_tensor(name, F, list(v.shape), v.ravel().tolist())
def mixed(shape, frac):
    """Positive at about `frac` of the positions, else negative."""
    x = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    return np.where(rng.random(shape) < frac, x, -x).astype(np.float32)
def three(shape):  # zero, middle and full extent of x > 0
    return [-np.abs(mixed(shape, 0)), mixed(shape, 0.5), np.abs(mixed(shape, 1))]
def zeros3(shape):  # zero, middle and full extent of NonZero(x)
    return [np.zeros(shape, np.float32), np.maximum(mixed(shape, 0.5), 0), np.abs(mixed(shape, 1))]

add("nonzero_shape",
    [h.make_node("Greater", ["x", "t"], ["m"], name="gt"),
     h.make_node("NonZero", ["m"], ["nz"], name="nz"),
     h.make_node("Shape", ["nz"], ["s"], name="shape"),
     h.make_node("Slice", ["s", "one", "two"], ["n"], name="count"),
     h.make_node("ConstantOfShape", ["n"], ["ones"], name="cos", value=f32("v", [1.5])),
     h.make_node("Squeeze", ["n"], ["n0"], name="squeeze"),
     h.make_node("Range", ["zero", "n0", "step"], ["r"], name="range"),
     h.make_node("Cast", ["r"], ["rf"], name="cast", to=F),
     h.make_node("Add", ["ones", "rf"], ["y"], name="add"),
     h.make_node("Concat", ["n", "two"], ["shp"], name="shp", axis=0),
     h.make_node("Transpose", ["nz"], ["nzt"], name="nzt"),
     h.make_node("Reshape", ["nzt", "shp"], ["pairs"], name="reshape")],
    [("x", F, [3, 4])], [("y", F, ["n"]), ("pairs", I64, ["n", 2]), ("n", I64, [1])],
    [{"x": x} for x in three([3, 4])],
    [f32("t", 0.0), i64("one", [1]), i64("two", [2]), i64("zero", 0, []), i64("step", 1, [])])

add("topk_min",
    [h.make_node("Greater", ["scores", "t"], ["m"], name="gt"),
     h.make_node("NonZero", ["m"], ["nz"], name="nz"),
     h.make_node("Transpose", ["nz"], ["idx"], name="idx"),
     h.make_node("GatherND", ["scores", "idx"], ["s"], name="above"),
     h.make_node("Shape", ["s"], ["ss"], name="shape"),
     h.make_node("Min", ["ss", "cap"], ["k"], name="k"),
     h.make_node("TopK", ["s", "k"], ["top", "order"], name="topk"),
     h.make_node("Gather", ["boxes", "order"], ["picked"], name="pick", axis=0)],
    [("scores", F, [8]), ("boxes", F, [8, 4])], [("top", F, ["k"]), ("picked", F, ["k", 4])],
    [{"scores": s, "boxes": rng.standard_normal((8, 4)).astype(np.float32)}
     for s in [-np.abs(mixed([8], 0)), np.array([0.9, -1, 0.3, 1.7, -0.2, 0.5, -3, 1.1], np.float32),
               np.array([-1, 0.4, -1, -1, -1, -1, 2.5, -1], np.float32), np.abs(mixed([8], 1))]],
    [f32("t", 0.0), i64("cap", [3])])

add("concat_extents",
    [h.make_node("Greater", ["a", "t"], ["ma"], name="gta"),
     h.make_node("Greater", ["b", "t"], ["mb"], name="gtb"),
     h.make_node("Compress", ["x", "ma"], ["ca"], name="ca", axis=0),
     h.make_node("Compress", ["x", "mb"], ["cb"], name="cb", axis=0),
     h.make_node("Concat", ["ca", "cb"], ["y"], name="concat", axis=0),
     h.make_node("Shape", ["y"], ["total"], name="total")],
    [("x", F, [5, 3]), ("a", F, [5]), ("b", F, [5])], [("y", F, ["k", 3]), ("total", I64, [2])],
    [{"x": rng.standard_normal((5, 3)).astype(np.float32), "a": a, "b": b}
     for a, b in [(-np.abs(mixed([5], 0)), -np.abs(mixed([5], 0))),
                  (mixed([5], 0.5), mixed([5], 0.5)), (-np.abs(mixed([5], 0)), mixed([5], 0.5)),
                  (np.abs(mixed([5], 1)), np.abs(mixed([5], 1)))]],
    [f32("t", 0.0)])

# NonZero of a NonZero result, and the Shape of a NonZero result alone (the
# NonZero still runs: its extent sizes the output).
add("nonzero_nonzero",
    [h.make_node("NonZero", ["x"], ["nz"], name="nz"), h.make_node("NonZero", ["nz"], ["y"], name="nz2")],
    [("x", F, [3, 4])], [("y", I64, [2, "m"])], [{"x": x} for x in zeros3([3, 4])])
add("nonzero_shape_only",
    [h.make_node("NonZero", ["x"], ["nz"], name="nz"), h.make_node("Shape", ["nz"], ["y"], name="shape")],
    [("x", F, [3, 4])], [("y", I64, [2])], [{"x": x} for x in zeros3([3, 4])])

# NonMaxSuppression of the boxes and scores above a threshold (one NonZero
# gathers both, so both counts are its extent; a zero count gives no boxes).
add("nms_of_selected",
    [h.make_node("Greater", ["scores", "t"], ["keep"], name="gt"),
     h.make_node("NonZero", ["keep"], ["nz"], name="nz"),
     h.make_node("Squeeze", ["nz", "axes0"], ["idx"], name="idx"),
     h.make_node("Gather", ["boxes", "idx"], ["b"], name="gboxes", axis=0),
     h.make_node("Gather", ["scores", "idx"], ["sc"], name="gscores", axis=0),
     h.make_node("Unsqueeze", ["b", "axes0"], ["b3"], name="b3"),
     h.make_node("Unsqueeze", ["sc", "axes01"], ["s3"], name="s3"),
     h.make_node("NonMaxSuppression", ["b3", "s3", "maxk", "iou"], ["sel"], name="nms")],
    [("boxes", F, [6, 4]), ("scores", F, [6])], [("sel", I64, ["k", 3])],
    [{"boxes": np.sort(rng.uniform(0, 10, (6, 4)).astype(np.float32).reshape(6, 2, 2), axis=1).reshape(6, 4),
      "scores": sc} for sc in three([6])],
    [f32("t", 0.0), i64("axes0", [0]), i64("axes01", [0, 1]), i64("maxk", [10]), f32("iou", [0.5])])

# NonMaxSuppression whose box count reaches it through other shape
# arithmetic than the scores' (a Reshape to [n, -1], then to [1, -1, 4]):
# the two counts are unified (ir/dim.h UnifyDims). ONNX Runtime refuses the
# Reshape of 0 boxes with -1, so the counts here are at least 1.
add("nms_reshaped",
    [h.make_node("Greater", ["scores", "t"], ["keep"], name="gt"),
     h.make_node("NonZero", ["keep"], ["nz"], name="nz"),
     h.make_node("Squeeze", ["nz", "axes0"], ["idx"], name="idx"),
     h.make_node("Gather", ["boxes", "idx"], ["b"], name="gboxes", axis=0),
     h.make_node("Gather", ["scores", "idx"], ["sc"], name="gscores", axis=0),
     h.make_node("Shape", ["sc"], ["n"], name="n"),
     h.make_node("Concat", ["n", "minus1"], ["rows"], name="rows", axis=0),
     h.make_node("Reshape", ["b", "rows"], ["b2"], name="b2"),
     h.make_node("Reshape", ["b2", "shape3"], ["b3"], name="b3"),
     h.make_node("Unsqueeze", ["sc", "axes01"], ["s3"], name="s3"),
     h.make_node("NonMaxSuppression", ["b3", "s3", "maxk", "iou"], ["sel"], name="nms")],
    [("boxes", F, [6, 4]), ("scores", F, [6])], [("sel", I64, ["k", 3])],
    [{"boxes": np.sort(rng.uniform(0, 10, (6, 4)).astype(np.float32).reshape(6, 2, 2), axis=1).reshape(6, 4),
      "scores": sc} for sc in three([6])[1:] + [np.array([-1, -1, 0.7, -1, -1, -1], np.float32)]],
    [f32("t", 0.0), i64("axes0", [0]), i64("axes01", [0, 1]), i64("maxk", [10]), f32("iou", [0.5]),
     i64("minus1", [-1]), i64("shape3", [1, -1, 4])])

# torchvision's "if boxes.numel() == 0: return empty" If: the condition
# Size(s) == 0 of the scores above a threshold is an expression of the
# extent read back, so the shape program decides the If (no readback of the
# condition); the then-branch is an empty constant, the else-branch
# computes (a ReduceMax over the possibly empty scores, unused when empty),
# and a Slice with constant bounds keeps the first 3 of the result.
then_g = h.make_graph([h.make_node("Constant", [], ["empty"], name="empty", value=f32("e", np.zeros([0])))],
                      "then", [], [h.make_tensor_value_info("empty", F, [0])])
else_g = h.make_graph([h.make_node("ReduceMax", ["s"], ["mx"], name="mx", keepdims=0),
                       h.make_node("Add", ["s", "mx"], ["shifted"], name="shifted")],
                      "else", [], [h.make_tensor_value_info("shifted", F, ["n"])])
add("if_empty_known",
    [h.make_node("Greater", ["x", "t"], ["m"], name="gt"),
     h.make_node("NonZero", ["m"], ["nz"], name="nz"),
     h.make_node("Squeeze", ["nz", "axes0"], ["idx"], name="idx"),
     h.make_node("Gather", ["x", "idx"], ["s"], name="above", axis=0),
     h.make_node("Size", ["s"], ["count"], name="count"),
     h.make_node("Equal", ["count", "zero"], ["none"], name="none"),
     h.make_node("If", ["none"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
     h.make_node("Slice", ["y", "zero1", "three"], ["first3"], name="first3")],
    [("x", F, [8])], [("y", F, ["k"]), ("first3", F, ["j"])],
    [{"x": x} for x in three([8])] + [{"x": np.array([-1, 0.5, -1, -1, 2, -1, -1, -1], np.float32)}],
    [f32("t", 0.0), i64("axes0", [0]), i64("zero", 0, []), i64("zero1", [0]), i64("three", [3])])

# A dynamic-shape model (N in 1..6): NonZero of an [N, 4] input lays its
# result out at N * 4 columns, which the copy at the extent read back
# follows at every N.
add("dynamic_nonzero",
    [h.make_node("NonZero", ["x"], ["nz"], name="nz"), h.make_node("Shape", ["nz"], ["s"], name="shape"),
     h.make_node("Concat", ["nz", "nz"], ["y"], name="concat", axis=1)],
    [("x", F, ["N", 4])], [("y", I64, [2, "m"]), ("s", I64, [2])],
    [{"x": x} for n in (1, 3, 6) for x in zeros3([n, 4])])
json.dump({"dimensions": {"N": {"min": 1, "max": 6}}}, open(f"{out}/dynamic_nonzero/config.json", "w"))

with open(f"{out}/cases.txt", "w") as cases:
    for name, (ins, sets) in models.items():
        for k, v in enumerate(sets):
            d = f"{out}/{name}/in{k}"
            os.makedirs(d)
            manifest = []
            for i, (n, t, s) in enumerate(ins):
                a = np.ascontiguousarray(v[n])
                assert len(a.shape) == len(s), (name, n, a.shape)
                a.tofile(f"{d}/{i}.bin")
                manifest.append({"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
            json.dump(manifest, open(f"{d}/manifest.json", "w"))
            cases.write(f"{name} in{k}\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")

# The guard of two counts the toolchain cannot prove equal (ir/dim.h
# UnifyDims): NonMaxSuppression's boxes selected by a > t and its scores by
# b > t. Equal counts run; different counts fail the frame naming the node
# (ONNX Runtime refuses them too: boxes and scores must have one count).
g = f"{out}/guard"
os.makedirs(g)
nodes = [h.make_node("Greater", ["a", "t"], ["ka"], name="gta"),
         h.make_node("Greater", ["b", "t"], ["kb"], name="gtb"),
         h.make_node("NonZero", ["ka"], ["nza"], name="nza"),
         h.make_node("NonZero", ["kb"], ["nzb"], name="nzb"),
         h.make_node("Squeeze", ["nza", "axes0"], ["ia"], name="ia"),
         h.make_node("Squeeze", ["nzb", "axes0"], ["ib"], name="ib"),
         h.make_node("Gather", ["boxes", "ia"], ["bx"], name="bx", axis=0),
         h.make_node("Gather", ["b", "ib"], ["sc"], name="sc", axis=0),
         h.make_node("Unsqueeze", ["bx", "axes0"], ["b3"], name="b3"),
         h.make_node("Unsqueeze", ["sc", "axes01"], ["s3"], name="s3"),
         h.make_node("NonMaxSuppression", ["b3", "s3", "maxk", "iou"], ["sel"], name="nms")]
gr = h.make_graph(nodes, "nms_two_counts", [h.make_tensor_value_info("a", F, [6]), h.make_tensor_value_info("b", F, [6]),
                                            h.make_tensor_value_info("boxes", F, [6, 4])],
                  [h.make_tensor_value_info("sel", I64, ["k", 3])],
                  [f32("t", 0.0), i64("axes0", [0]), i64("axes01", [0, 1]), i64("maxk", [10]), f32("iou", [0.5])])
m = h.make_model(gr, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m)
os.makedirs(f"{g}/nms_two_counts")
onnx.save(m, f"{g}/nms_two_counts/model.onnx")
boxes = np.sort(rng.uniform(0, 10, (6, 4)).astype(np.float32).reshape(6, 2, 2), axis=1).reshape(6, 4)
sets = [(np.array([1, -1, 1, -1, 1, -1], np.float32), np.array([-1, 2, -1, 3, -1, 4], np.float32), ""),
        (np.array([1, 1, 1, -1, -1, -1], np.float32), np.array([-1, 2, -1, -1, -1, 4], np.float32),
         "node 'nms' (NonMaxSuppression): the box counts of scores (dimension 2) and boxes (dimension 1) must be equal")]
with open(f"{g}/cases.txt", "w") as cases:
    for k, (a, b, msg) in enumerate(sets):
        d = f"{g}/nms_two_counts/in{k}"
        os.makedirs(d)
        manifest = []
        for i, (n, v) in enumerate([("a", a), ("b", b), ("boxes", boxes)]):
            v.tofile(f"{d}/{i}.bin")
            manifest.append({"name": n, "dtype": "float32", "shape": list(v.shape), "file": f"{i}.bin"})
        json.dump(manifest, open(f"{d}/manifest.json", "w"))
        cases.write(f"nms_two_counts in{k} {msg}".rstrip() + "\n")
open(f"{g}/models.txt", "w").write("nms_two_counts\n")
PY
fail=0
e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules" || fail=1
e2e_convert "$py" "$build" "$tmp/guard" || fail=1
e2e_run_cases lavapipe "$tmp/guard" "$build" || fail=1
exit $fail
