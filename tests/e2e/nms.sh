#!/usr/bin/env bash
# End to end, NonMaxSuppression on the device (shaders/nms_select.comp,
# nms_gather.comp; bundle feature data_dependent_outputs): selected_indices
# [K, 3] int64 comes back at its actual K. Models, opset 13, each converted
# once (with no config but for dyn_boxes):
#   corner_in   center_point_box 0, boxes [2,300,4], scores [2,3,300];
#               max_output_boxes_per_class (int64 [1]), iou_threshold and
#               score_threshold (float [1]) graph inputs;
#   center_in   center_point_box 1, boxes [3,250,4], scores [3,2,250]; the
#               three thresholds scalar ([]) graph inputs;
#   const       center_point_box 0, boxes [1,400,4], scores [1,5,400];
#               thresholds from Constant nodes (max 7, iou 0.45, score 0.2);
#   no_score    center_point_box 1, boxes [2,120,4], scores [2,2,120]; max
#               an initializer (1000), iou a graph input, no score_threshold;
#   no_max      boxes and scores only (ONNX: max_output_boxes_per_class 0,
#               nothing selected);
#   one_box     boxes [1,1,4], scores [1,1,1], initializer thresholds;
#   large       center_point_box 0, 3000 boxes x 3 classes, unique scores,
#               max (int64 graph input), iou 0.5 and score 0.0 initializers;
#   exact_iou   4 boxes with IoUs of exactly 1/2 and 1/3 (float32) against
#               iou_threshold graph inputs 0.5, 0.49, float32(1/3), 0.333;
#   many_pairs  boxes [2,20,4], scores [2,150,20]: 300 batch/class pairs
#               (more than nms_gather's 256 invocations), max 3 and 20;
#   dyn_boxes   boxes [1,N,4], scores [1,2,N] with N in 1..500 (config.json
#               "dimensions"; one bundle), run at N = 1, 37 and 500.
# Boxes are random, for center_point_box 0 with a third of them given with
# inverted corners ([y2, x2, y1, x1] and mixed), for 1 with a few negative
# widths / heights; some exact duplicates (IoU 1) and zero-area boxes among
# them. Scores are unique float32 values in [0, 1) (ONNX Runtime leaves ties
# to its heap's order). Value sets: max_output_boxes_per_class hit and not
# hit, 0 and negative (empty), iou 0 (any overlap suppresses) and 1 (nothing
# does), a score threshold above every score (an empty [0, 3] result), a NaN
# score threshold (empty), NaN and +-inf scores with a score threshold (NaN
# never passes it).
# Each bundle runs through libRuntimeLibrary.so (oaax-run, validation layer
# on) on lavapipe and SwiftShader; selected_indices (the only output: the
# hidden '#extent' output must not come back) must equal ONNX Runtime's
# exactly: dtype, shape [K, 3], byte size and every value in order.
# Invalid values: a run-time iou_threshold of 1.5, -0.1 and NaN must make
# send_input fail (oaax-run exits 1, no crash, no validation-layer message)
# with "lies outside [0, 1]: the iou_threshold of NonMaxSuppression '<name>'
# must lie in [0, 1]" (ONNX Runtime refuses them as well, checked), and a
# constant iou_threshold of 2.0 must fail conversion (exit 1, no model.oinf,
# conversion-log.json's last entry "Conversion Failed" naming the range).
# Exit 77 (skip) without numpy / onnx or the reference tools
# (scripts/fetch-reference.sh).
# usage: nms.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
# Models and one input directory per value set. cases.txt: "MODEL DIR" for
# valid sets, "MODEL DIR MESSAGE" for sets send_input must refuse;
# models.txt the models to convert, refused.txt those whose conversion must
# fail ("MODEL MESSAGE").
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh
out = sys.argv[1]
rng = np.random.default_rng(11)
F, I64 = TensorProto.FLOAT, TensorProto.INT64

def unique_scores(shape):
    """Distinct float32 values k / 2^20 in [0, 1) (exact in float32)."""
    n = int(np.prod(shape))
    return (rng.choice(1 << 20, n, replace=False) / float(1 << 20)).astype(np.float32).reshape(shape)

def corner_boxes(b, n, extent=100.0, lo=2.0, hi=30.0):
    """[b, n, 4] as [y1, x1, y2, x2]; a third inverted ([y2, x2, y1, x1]) or mixed."""
    y = rng.uniform(0, extent, (b, n)); x = rng.uniform(0, extent, (b, n))
    hh = rng.uniform(lo, hi, (b, n)); ww = rng.uniform(lo, hi, (b, n))
    bx = np.stack([y, x, y + hh, x + ww], -1).astype(np.float32)
    flip = rng.integers(0, 3, (b, n))  # 0: as is, 1: both axes inverted, 2: x only
    bx[flip == 1] = bx[flip == 1][:, [2, 3, 0, 1]]
    bx[flip == 2] = bx[flip == 2][:, [0, 3, 2, 1]]
    return specials(bx, 0)

def center_boxes(b, n, extent=100.0, lo=2.0, hi=30.0):
    """[b, n, 4] as [x_center, y_center, width, height]; a few negative sizes."""
    bx = np.stack([rng.uniform(0, extent, (b, n)), rng.uniform(0, extent, (b, n)),
                   rng.uniform(lo, hi, (b, n)), rng.uniform(lo, hi, (b, n))], -1).astype(np.float32)
    k = rng.permutation(n)[:max(1, n // 25)]
    bx[:, k[0::3], 2] *= -1; bx[:, k[1::3], 3] *= -1; bx[:, k[2::3], 2:] *= -1
    return specials(bx, 1)

def specials(bx, center):
    """Exact duplicates of other boxes (IoU 1) and zero-area boxes."""
    n = bx.shape[1]
    if n < 8:
        return bx
    p = rng.permutation(n)
    bx[:, p[:n // 20]] = bx[:, p[n // 20:2 * (n // 20)]]
    z = p[2 * (n // 20):2 * (n // 20) + max(1, n // 50)]
    if center:
        bx[:, z, 2] = 0.0
    else:
        bx[:, z, 2] = bx[:, z, 0]
    return bx

models = {}   # name: [(graph input name, TensorProto type, shape)]
def add(name, inputs, consts=(), const_nodes=(), center=0, nms_inputs=None):
    """One NonMaxSuppression node named `name` reading `nms_inputs` (default:
    boxes, scores, max, iou, score); graph inputs `inputs`, initializers
    `consts` [(name, array)], Constant nodes `const_nodes` [(name, array)]."""
    nms_inputs = nms_inputs or ["boxes", "scores", "max", "iou", "score"]
    nodes = [h.make_node("Constant", [], [c], value=nh.from_array(v, c)) for c, v in const_nodes]
    nodes.append(h.make_node("NonMaxSuppression", nms_inputs, ["selected_indices"], name=name,
                             center_point_box=center))
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info("selected_indices", I64, ["k", 3])],
                     [nh.from_array(v, c) for c, v in consts])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
    models[name] = inputs

def f1(v): return np.array([v], np.float32)
def i1(v): return np.array([v], np.int64)
def thresholds(shape):
    return [("max", I64, shape), ("iou", F, shape), ("score", F, shape)]

add("corner_in", [("boxes", F, [2, 300, 4]), ("scores", F, [2, 3, 300])] + thresholds([1]))
add("center_in", [("boxes", F, [3, 250, 4]), ("scores", F, [3, 2, 250])] + thresholds([]), center=1)
add("const", [("boxes", F, [1, 400, 4]), ("scores", F, [1, 5, 400])],
    const_nodes=[("max", i1(7)), ("iou", f1(0.45)), ("score", f1(0.2))])
add("no_score", [("boxes", F, [2, 120, 4]), ("scores", F, [2, 2, 120]), ("iou", F, [1])],
    consts=[("max", i1(1000))], center=1, nms_inputs=["boxes", "scores", "max", "iou"])
add("no_max", [("boxes", F, [1, 50, 4]), ("scores", F, [1, 2, 50])], nms_inputs=["boxes", "scores"])
add("one_box", [("boxes", F, [1, 1, 4]), ("scores", F, [1, 1, 1])],
    consts=[("max", i1(5)), ("iou", f1(0.5)), ("score", f1(0.0))])
add("large", [("boxes", F, [1, 3000, 4]), ("scores", F, [1, 3, 3000]), ("max", I64, [1])],
    consts=[("iou", f1(0.5)), ("score", f1(0.0))])
add("exact_iou", [("boxes", F, [1, 4, 4]), ("scores", F, [1, 1, 4]), ("iou", F, [1])], consts=[("max", i1(10))],
    nms_inputs=["boxes", "scores", "max", "iou"])
add("many_pairs", [("boxes", F, [2, 20, 4]), ("scores", F, [2, 150, 20]), ("max", I64, [1])],
    consts=[("iou", f1(0.4)), ("score", f1(0.25))])
# Dynamic shapes: the number of boxes a symbol with a range (config.json).
add("dyn_boxes", [("boxes", F, [1, "N", 4]), ("scores", F, [1, 2, "N"]), ("iou", F, [1])],
    consts=[("max", i1(30)), ("score", f1(0.1))])
json.dump({"dimensions": {"N": {"min": 1, "max": 500}}}, open(f"{out}/dyn_boxes/config.json", "w"))
# Refused at conversion: a constant iou_threshold outside [0, 1].
os.makedirs(f"{out}/refuse_iou_const")
g = h.make_graph([h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["selected_indices"],
                              name="refuse_iou_const")], "refuse_iou_const",
                 [h.make_tensor_value_info("boxes", F, [1, 10, 4]), h.make_tensor_value_info("scores", F, [1, 1, 10])],
                 [h.make_tensor_value_info("selected_indices", I64, ["k", 3])],
                 [nh.from_array(i1(5), "max"), nh.from_array(f1(2.0), "iou")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, f"{out}/refuse_iou_const/model.onnx")

def rule(name):
    return f"lies outside [0, 1]: the iou_threshold of NonMaxSuppression '{name}' must lie in [0, 1]"

values = {}  # name: [({input: array}, expected message or "")]
def scal(shape, dtype, v):
    return np.array(v, dtype).reshape(shape)
for name, boxes, (b, c, n), shape in [("corner_in", corner_boxes, (2, 3, 300), [1]),
                                      ("center_in", center_boxes, (3, 2, 250), [])]:
    bx, sc = boxes(b, n), unique_scores((b, c, n))
    odd = sc.copy()  # NaN and +-inf scores, with a score threshold
    for bi in range(b):
        for ci in range(c):
            k = rng.permutation(n)[:6]
            odd[bi, ci, k[:3]] = np.nan; odd[bi, ci, k[3]] = np.inf; odd[bi, ci, k[4:]] = -np.inf
    sets = [(bx, sc, 20, 0.5, 0.3, ""),       # max hit
            (bx, sc, 1000, 0.5, 0.3, ""),     # not hit
            (bx, sc, 1000, 0.0, 0.0, ""),     # any overlap suppresses
            (bx, sc, 1000, 1.0, 0.9, ""),     # nothing suppressed (duplicates: IoU 1 is not > 1)
            (bx, sc, 1000, 0.5, 1.0, ""),     # every score below the threshold: [0, 3]
            (bx, sc, 1000, 0.5, np.nan, ""),  # a NaN score threshold: no score passes it
            (bx, sc, 0, 0.5, 0.0, ""),        # max 0: [0, 3]
            (bx, sc, -3, 0.5, 0.0, ""),       # negative max: [0, 3]
            (bx, odd, 1000, 0.3, 0.5, ""),    # NaN / inf scores
            (bx, sc, 1000, 1.5, 0.3, rule(name)),
            (bx, sc, 1000, -0.1, 0.3, rule(name)),
            (bx, sc, 1000, np.nan, 0.3, rule(name))]
    values[name] = [({"boxes": x, "scores": s, "max": scal(shape, np.int64, m), "iou": scal(shape, np.float32, i),
                      "score": scal(shape, np.float32, t)}, msg) for x, s, m, i, t, msg in sets]
values["const"] = [({"boxes": corner_boxes(1, 400), "scores": unique_scores((1, 5, 400))}, "")]
values["no_score"] = [({"boxes": x, "scores": unique_scores((2, 2, 120)) - np.float32(0.5), "iou": f1(i)}, "")
                      for x, i in [(center_boxes(2, 120), 0.6), (center_boxes(2, 120), 0.2)]]
values["no_max"] = [({"boxes": corner_boxes(1, 50), "scores": unique_scores((1, 2, 50))}, "")]
values["one_box"] = [({"boxes": np.array([[[5, 6, 1, 2]]], np.float32), "scores": f1(s).reshape(1, 1, 1)}, "")
                     for s in (0.7, -0.5)]
values["large"] = [({"boxes": corner_boxes(1, 3000, extent=500.0, lo=10.0, hi=120.0),
                     "scores": unique_scores((1, 3, 3000)), "max": i1(m)}, "") for m in (10000, 150)]
# IoU exactly at the threshold (not above it: no suppression): box 1 lies in
# box 0 with IoU 1/2, box 2 overlaps box 0 with IoU 1/3 (float32(1/3) as
# computed, equal to the threshold float32(1/3)) and touches box 1 (no
# overlap); box 3 is apart.
exact = np.array([[[0, 0, 1, 2], [0, 0, 1, 1], [0, 1, 1, 3], [5, 5, 6, 6]]], np.float32)
values["exact_iou"] = [({"boxes": exact, "scores": np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32), "iou": f1(t)}, "")
                       for t in (0.5, 0.49, np.float32(1) / np.float32(3), 0.333)]
values["dyn_boxes"] = [({"boxes": corner_boxes(1, n), "scores": unique_scores((1, 2, n)), "iou": f1(0.5)}, "")
                       for n in (1, 37, 500)]
values["many_pairs"] = [({"boxes": corner_boxes(2, 20, extent=30.0), "scores": unique_scores((2, 150, 20)),
                          "max": i1(m)}, "") for m in (3, 20)]
with open(f"{out}/cases.txt", "w") as cases:
    for name, ins in models.items():
        for k, (v, msg) in enumerate(values[name]):
            d = f"{out}/{name}/in{k}"
            os.makedirs(d)
            manifest = []
            for i, (n, t, s) in enumerate(ins):
                a = np.asarray(v[n], np.float32 if t == F else np.int64, order="C")
                assert len(a.shape) == len(s) and all(x == y for x, y in zip(a.shape, s) if isinstance(y, int)), \
                    (name, n, a.shape, s)
                a.tofile(f"{d}/{i}.bin")
                manifest.append({"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
            json.dump(manifest, open(f"{d}/manifest.json", "w"))
            cases.write(f"{name} in{k} {msg}".rstrip() + "\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")
open(f"{out}/refused.txt", "w").write("refuse_iou_const iou_threshold is 2.000000; it must lie in [0, 1]\n")
PY
fail=0
# Conversion.
e2e_convert "$py" "$build" "$tmp" || fail=1
# ONNX Runtime: the reference for the valid sets; it must refuse the invalid
# ones too. One node process for every case (a session per model), writing
# what tools/reference/ort_run.js writes: TMP/MODEL/ort-DIR/manifest.json
# and the raw outputs, or TMP/MODEL/ort-DIR/error.txt.
NODE_PATH="$node_modules" node "$root/tools/reference/ort_run.js" --cases "$tmp" || { echo "FAIL: the ONNX Runtime runs"; fail=1; }
while read -r m d msg; do
  if [ -z "$msg" ] && [ -f "$tmp/$m/ort-$d/error.txt" ]; then
    echo "FAIL: ONNX Runtime failed on $m $d: $(cat "$tmp/$m/ort-$d/error.txt")"; fail=1
  elif [ -n "$msg" ] && [ ! -f "$tmp/$m/ort-$d/error.txt" ]; then
    echo "FAIL: ONNX Runtime accepted $m $d, which the runtime must refuse"; fail=1
  elif [ -n "$msg" ]; then
    echo "ONNX Runtime refuses $m $d too: $(cat "$tmp/$m/ort-$d/error.txt")"
  fi
done < "$tmp/cases.txt"
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  while read -r m d msg; do
    [ -f "$tmp/$m/bundle/model.oinf" ] || continue
    rc=0
    # LeakSanitizer: see classifier.sh (the loader dlcloses the drivers).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
    "$build/oaax-run" --model "$tmp/$m/bundle/model.oinf" --inputs "$tmp/$m/$d" \
      --outputs "$tmp/$m/$drv-$d" --arg validation=1 < /dev/null > "$tmp/log" 2>&1 || rc=$?
    if grep -q "VUID-\|Validation Error\|Sanitizer" "$tmp/log"; then
      echo "FAIL $drv: $m $d: validation-layer or sanitizer message (exit $rc)"; cat "$tmp/log"; fail=1
    elif [ -z "$msg" ] && [ $rc -ne 0 ]; then
      echo "FAIL $drv: $m $d: oaax-run exited $rc"; cat "$tmp/log"; fail=1
    elif [ -n "$msg" ] && [ $rc -ne 1 ]; then
      echo "FAIL $drv: $m $d: oaax-run exited $rc, expected 1 (invalid iou_threshold)"; cat "$tmp/log"; fail=1
    elif [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/log"; then
      echo "FAIL $drv: $m $d: no message \"$msg\""; cat "$tmp/log"; fail=1
    elif [ -n "$msg" ]; then
      echo "$drv: $m $d rejected: $(grep -m1 -F -- "$msg" "$tmp/log")"
    fi
  done < "$tmp/cases.txt"
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv = sys.argv[1:3]
bad = 0
for line in open(f"{tmp}/cases.txt"):
    m, d, *msg = line.split(maxsplit=2)
    if msg or not os.path.exists(f"{tmp}/{m}/bundle/model.oinf"):
        continue
    ref = json.load(open(f"{tmp}/{m}/ort-{d}/manifest.json"))
    od = f"{tmp}/{m}/{drv}-{d}"
    if not os.path.exists(f"{od}/manifest.json"):
        print(f"FAIL {drv}: {m} {d}: no output"); bad = 1; continue
    got = json.load(open(f"{od}/manifest.json"))
    if [e["name"] for e in got] != [e["name"] for e in ref]:
        print(f"FAIL {drv}: {m} {d}: outputs {[e['name'] for e in got]}, ONNX Runtime {[e['name'] for e in ref]}")
        bad = 1; continue
    for g, r in zip(got, ref):
        want = np.fromfile(f"{tmp}/{m}/ort-{d}/{r['file']}", dtype=r["dtype"]).reshape(r["shape"])
        size = os.path.getsize(f"{od}/{g['file']}")
        if g["dtype"] != r["dtype"] or list(g["shape"]) != list(r["shape"]) or size != want.nbytes:
            print(f"FAIL {drv}: {m} {d}: {g['name']} {g['dtype']}{g['shape']} in {size} bytes, ONNX Runtime "
                  f"{r['dtype']}{r['shape']} in {want.nbytes}")
            if g["dtype"] == "int64" and size % 24 == 0:
                y = np.fromfile(f"{od}/{g['file']}", dtype=np.int64).reshape(-1, 3)
                print(f"  got first rows {y[:6].tolist()}, ONNX Runtime {want[:6].tolist()}")
            bad = 1; continue
        y = np.fromfile(f"{od}/{g['file']}", dtype=g["dtype"]).reshape(g["shape"])
        if not np.array_equal(y, want):
            i = int(np.argwhere((y != want).any(axis=-1))[0][0])
            print(f"FAIL {drv}: {m} {d}: {g['name']} {list(y.shape)} differs from row {i}: got "
                  f"{y[i:i + 4].tolist()}, ONNX Runtime {want[i:i + 4].tolist()}"); bad = 1; continue
        per = np.unique(y[:, :2], axis=0, return_counts=True)[1] if len(y) else np.array([0])
        print(f"{drv}: {m} {d}: {g['name']} {g['dtype']}{list(y.shape)} equals ONNX Runtime "
              f"(per batch/class pair {per.min()}..{per.max()} boxes)")
sys.exit(bad)
PY
done
exit $fail
