#!/usr/bin/env bash
# End to end, a small SSD-style detector ending in NonMaxSuppression
# (bench/nms_models.py detector(): [1,3,96,128] image, three 3x3 stride-2
# convolutions with fixed seeded weights, a 1x1 head giving box deltas and
# class logits for 3 anchors x 12 x 16 cells = 576 anchors and 3 classes, the
# boxes decoded against the anchor grid in the graph (Slice, Mul, Add, Exp,
# Concat), Sigmoid scores, NonMaxSuppression with constant thresholds: score
# 0.6, IoU 0.45, at most 25 boxes per class). Two variants, each converted
# once with no config:
#   nms     outputs selected_indices [K, 3], boxes [1, 576, 4] and scores
#           [1, 3, 576]; the host gathers the detections;
#   gather  gathers in the graph (Gather of selected_indices' column 2, then
#           Gather of the boxes) and outputs detections [K, 4]. A node reading
#           the NMS result may still be refused at conversion; then the
#           refusal must say "only the device knows" (exit 1, no model.oinf)
#           and the script says so; when it converts, its output must match
#           ONNX Runtime like the other variant's.
# Images (third_party/cache, scripts/fetch-reference.sh), resized to 128 x 96
# with PIL, with seeded noise (sigma 0.02; flat white paper would give
# near-equal scores): page.png (28 detections, no class at the limit),
# scenetext01.jpg (13), imageTextN.png (50: two classes at
# max_output_boxes_per_class) and a uniform gray image (none: an empty [0, 3]
# result). The expected counts are checked on ONNX Runtime's results, as are
# the margins that make an exact comparison meaningful: every score at least
# 1e-4 away from the score threshold, and among the candidates NMS examines
# (those above the score threshold, for a class at the limit down to the one
# after its last selection) scores at least 1e-5 apart and every IoU at least
# 1e-4 away from the IoU threshold (the device's float results may differ
# from ONNX Runtime's by a few ulp).
# Each bundle runs through libRuntimeLibrary.so (oaax-run, validation layer
# on) on lavapipe, and on SwiftShader the nms variant on imageTextN.png and
# the gray image and the gather variant on page.png (SwiftShader compiles the
# pipelines at every load, about 6 s per run on 2 cores). selected_indices
# must equal ONNX Runtime's exactly (count, order, values); boxes, scores and
# the detections (boxes and scores gathered at the selected indices, and the
# gather variant's output) must be within 1e-4 of ONNX Runtime's. Exit 77
# (skip) without numpy / onnx / PIL in PYTHON, the reference tools or the
# images.
# usage: detector.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
cache="$root/third_party/cache"
if [ ! -d "$cache/node/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
for f in page.png scenetext01.jpg imageTextN.png; do
  if [ ! -f "$cache/$f" ]; then echo "SKIP: $cache/$f missing; run scripts/fetch-reference.sh"; exit 77; fi
done
if ! "$py" -c 'import PIL' 2>/dev/null; then echo "SKIP: $py lacks PIL"; exit 77; fi
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py"
"$py" - "$tmp" "$root" <<'PY'
import json, os, sys
import numpy as np
tmp, root = sys.argv[1:3]
sys.path.insert(0, os.path.join(root, "bench"))
import nms_models as nm
for v in ("nms", "gather"):
    os.makedirs(f"{tmp}/{v}")
    nm.detector(f"{tmp}/{v}/model.onnx", v)
cache = os.path.join(root, "third_party", "cache")
# Seeded noise (sigma 0.02) on the real images: their flat regions (white
# paper) would otherwise give candidates whose scores differ by a few ulp.
rng = np.random.default_rng(2)
images = {}
for k, f in (("page", "page.png"), ("scenetext01", "scenetext01.jpg"), ("imageTextN", "imageTextN.png")):
    a = nm.image(f"{cache}/{f}")
    images[k] = np.clip(a + rng.normal(0, 0.02, a.shape).astype(np.float32), 0, 1).astype(np.float32)
images["gray"] = np.full((1, 3, nm.HEIGHT, nm.WIDTH), 0.5, np.float32)
for k, a in images.items():
    os.makedirs(f"{tmp}/in/{k}")
    a.tofile(f"{tmp}/in/{k}/0.bin")
    json.dump([{"name": "image", "dtype": "float32", "shape": list(a.shape), "file": "0.bin"}],
              open(f"{tmp}/in/{k}/manifest.json", "w"))
open(f"{tmp}/images.txt", "w").write("\n".join(images) + "\n")
PY
fail=0
"$build/oaax-vulkan-toolchain" "$tmp/nms/model.onnx" "$tmp/nms/bundle" > "$tmp/nms/toolchain.log" 2>&1 || {
  echo "FAIL: the detector (nms variant) did not convert"; cat "$tmp/nms/toolchain.log"
  tail -c 2000 "$tmp/nms/bundle/conversion-log.json" 2>/dev/null || true; exit 1; }
rc=0
"$build/oaax-vulkan-toolchain" "$tmp/gather/model.onnx" "$tmp/gather/bundle" > "$tmp/gather/toolchain.log" 2>&1 || rc=$?
variants=nms
if [ $rc -eq 0 ]; then
  echo "gather variant (Gather after NonMaxSuppression): converted; its output is compared with ONNX Runtime"
  variants="nms gather"
else
  e2e_check_refused "$py" "$tmp/gather/bundle" "gather variant (Gather after NonMaxSuppression)" "$rc" \
    "only the device knows" || fail=1
fi
for v in $variants; do
  while read -r img; do
    NODE_PATH="$cache/node/node_modules" node "$root/tools/reference/ort_run.js" "$tmp/$v/model.onnx" \
      "$tmp/in/$img" "$tmp/$v/ort-$img" > "$tmp/ort.log" 2>&1 || { echo "FAIL: ONNX Runtime on $v $img"; cat "$tmp/ort.log"; exit 1; }
  done < "$tmp/images.txt"
done
# The reference itself: expected counts and the margins of every comparison NMS makes.
"$py" - "$tmp" "$root" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, root = sys.argv[1:3]
sys.path.insert(0, os.path.join(root, "bench"))
import nms_models as nm
def load(d):
    return {e["name"]: np.fromfile(f"{d}/{e['file']}", dtype=e["dtype"]).reshape(e["shape"])
            for e in json.load(open(f"{d}/manifest.json"))}
def iou(b):  # pairwise IoU of [n, 4] corner boxes, as ONNX Runtime computes it (float64 here)
    y0, x0 = np.minimum(b[:, 0], b[:, 2]), np.minimum(b[:, 1], b[:, 3])
    y1, x1 = np.maximum(b[:, 0], b[:, 2]), np.maximum(b[:, 1], b[:, 3])
    ih = np.clip(np.minimum(y1[:, None], y1) - np.maximum(y0[:, None], y0), 0, None)
    iw = np.clip(np.minimum(x1[:, None], x1) - np.maximum(x0[:, None], x0), 0, None)
    inter = ih * iw
    area = (y1 - y0) * (x1 - x0)
    return inter / (area[:, None] + area - inter)
want = {"page": (20, 35, False), "scenetext01": (8, 20, False), "imageTextN": (40, 75, True), "gray": (0, 0, False)}
bad = 0
for img in open(f"{tmp}/images.txt").read().split():
    o = load(f"{tmp}/nms/ort-{img}")
    sel, boxes, scores = o["selected_indices"], o["boxes"][0].astype(np.float64), o["scores"][0].astype(np.float64)
    per = [int((sel[:, 1] == c).sum()) for c in range(nm.CLASSES)]
    lo, hi, at_max = want[img]
    notes = []
    if not lo <= len(sel) <= hi:
        notes.append(f"{len(sel)} detections, expected {lo}..{hi}")
    if at_max != (nm.MAX_PER_CLASS in per):
        notes.append(f"max_output_boxes_per_class {nm.MAX_PER_CLASS} {'not ' if at_max else ''}reached")
    m_score = float(np.abs(scores - nm.SCORE_THRESHOLD).min())
    m_gap, m_iou = np.inf, np.inf
    for c in range(nm.CLASSES):
        # The candidates NMS examines, best first: all of them, or up to the
        # last one selected and the next (a class at the limit stops there).
        cand = np.flatnonzero(scores[c] > nm.SCORE_THRESHOLD)
        cand = cand[np.argsort(-scores[c, cand], kind="stable")]
        if per[c] == nm.MAX_PER_CLASS:
            last = sel[sel[:, 1] == c][-1, 2]
            cand = cand[:int(np.flatnonzero(cand == last)[0]) + 2]
        if len(cand) > 1:
            m_gap = min(m_gap, float(np.diff(np.sort(scores[c, cand])).min()))
            u = iou(boxes[cand])[np.triu_indices(len(cand), 1)]
            u = u[u > 0]
            if len(u):
                m_iou = min(m_iou, float(np.abs(u - nm.IOU_THRESHOLD).min()))
    if m_score < 1e-4 or m_gap < 1e-5 or m_iou < 1e-4:
        notes.append("margins too small for an exact comparison")
    print(f"ONNX Runtime, {img}: {len(sel)} detections (per class {per}); margins: score threshold {m_score:.2g}, "
          f"between candidate scores {m_gap:.2g}, IoU threshold {m_iou:.2g}")
    if notes:
        print(f"FAIL: the reference on {img} is not what the test was designed for: " + "; ".join(notes)); bad = 1
sys.exit(bad)
PY
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  for v in $variants; do
    # Every image of the variant on one loaded bundle (oaax-run with several
    # input sets).
    sets=()
    while read -r img; do
      # SwiftShader: three runs (see the header).
      case "$drv $v $img" in "swiftshader nms imageTextN"|"swiftshader nms gray"|"swiftshader gather page"|lavapipe*) ;; *) continue ;; esac
      sets+=(--inputs "$tmp/in/$img" --outputs "$tmp/$v/$drv-$img")
    done < "$tmp/images.txt"
    [ ${#sets[@]} -gt 0 ] || continue
    rc=0
    # LeakSanitizer: see classifier.sh (the loader dlcloses the drivers).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
    "$build/oaax-run" --model "$tmp/$v/bundle/model.oinf" "${sets[@]}" \
      --arg validation=1 < /dev/null > "$tmp/log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL $drv: $v: oaax-run exited $rc"; cat "$tmp/log"; fail=1
    elif grep -q "VUID-\|Validation Error" "$tmp/log"; then
      echo "FAIL $drv: $v: validation layer message"; cat "$tmp/log"; fail=1
    fi
  done
  "$py" - "$tmp" "$drv" "$variants" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv, variants = sys.argv[1], sys.argv[2], sys.argv[3].split()
def load(d):
    return {e["name"]: (e, np.fromfile(f"{d}/{e['file']}", dtype=e["dtype"]).reshape(e["shape"]))
            for e in json.load(open(f"{d}/manifest.json"))}
bad = 0
for v in variants:
    for img in open(f"{tmp}/images.txt").read().split():
        d = f"{tmp}/{v}/{drv}-{img}"
        if not os.path.exists(f"{d}/manifest.json"):
            if drv != "swiftshader" or (v, img) in (("nms", "imageTextN"), ("nms", "gray"), ("gather", "page")):
                print(f"FAIL {drv}: {v} {img}: no output"); bad = 1
            continue
        got, ref = load(d), load(f"{tmp}/{v}/ort-{img}")
        if list(got) != list(ref):
            print(f"FAIL {drv}: {v} {img}: outputs {list(got)}, ONNX Runtime {list(ref)}"); bad = 1; continue
        report, problems = [], []
        for name, (e, want) in ref.items():
            g = got[name][1]
            if g.dtype != want.dtype or g.shape != want.shape:
                problems.append(f"{name} {g.dtype}{list(g.shape)}, ONNX Runtime {want.dtype}{list(want.shape)}")
        if not problems and "selected_indices" in ref:
            sel, want_sel = got["selected_indices"][1], ref["selected_indices"][1]
            if not np.array_equal(sel, want_sel):
                i = int(np.argwhere((sel != want_sel).any(axis=-1))[0][0])
                problems.append(f"selected_indices differ from row {i}: {sel[i:i + 3].tolist()}, "
                                f"ONNX Runtime {want_sel[i:i + 3].tolist()}")
            else:
                b, s, i = sel[:, 0], sel[:, 1], sel[:, 2]
                ours = np.concatenate([got["boxes"][1][b, i], got["scores"][1][b, s, i][:, None]], 1)
                theirs = np.concatenate([ref["boxes"][1][b, i], ref["scores"][1][b, s, i][:, None]], 1)
                err = float(np.abs(ours - theirs).max()) if len(sel) else 0.0
                report.append(f"{len(sel)} detections equal ONNX Runtime's in order, gathered boxes and scores "
                              f"max|diff| {err:.2g}")
                if not err <= 1e-4:
                    problems.append(f"gathered detections differ by {err}")
        if not problems:
            for name in ref:
                if name == "selected_indices":
                    continue
                g, want = got[name][1], ref[name][1]
                err = float(np.abs(g - want).max()) if want.size else 0.0
                report.append(f"{name} {list(g.shape)} max|diff| {err:.2g}")
                if not err <= 1e-4:
                    problems.append(f"{name} differs by {err}")
        if problems:
            print(f"FAIL {drv}: {v} {img}: " + "; ".join(problems)); bad = 1
        else:
            print(f"{drv}: {v} {img}: " + ", ".join(report))
sys.exit(bad)
PY
done
exit $fail
