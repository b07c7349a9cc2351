#!/usr/bin/python3
"""Compares a zoo model's outputs from the OAAX runtime with ONNX Runtime's,
case by case (directories in the manifest form of tools/reference/ort_run.js).

Criteria (docs/model-zoo.md):
  * every case: the same output names in the same order, the same dtypes and
    shapes (for a detector the shapes carry the detection count, so the
    counts must be equal);
  * integer and bool outputs (detector labels): equal;
  * dense float outputs (every family but detection, and a detector's masks,
    rank 4): relative L2 error ||got - ref|| / ||ref|| <= 1e-3;
  * a detector's other float outputs (boxes [N,4], scores [N], keypoints
    [N,K,3], keypoint scores [N,K]) are compared in order, element by element:
    max |got - ref| <= 1e-4 * max(1, max |ref|) - absolute for scores in
    [0,1], relative to the coordinate scale (the image size in pixels) for
    boxes and keypoints;
  * a detector's "blank" case (a uniform gray image) must have zero
    detections in ONNX Runtime's result: the zoo's zero-detection check (if
    the reference finds something there the case does not test what it
    should, and the comparison fails saying so).
Prints one line per output and, last, a JSON object
{"matches": bool, "metric": str, "why": str}; exit 0 when it matches.

usage: compare.py META.json REF_DIR GOT_DIR CASE...
"""
import json
import sys

import numpy as np

REL_L2 = 1e-3
DET_TOL = 1e-4


def load(d):
    m = json.load(open(f"{d}/manifest.json"))
    return [(e["name"], np.fromfile(f"{d}/{e['file']}", dtype=e["dtype"]).reshape(e["shape"])) for e in m]


def main():
    meta_path, ref_root, got_root, *cases = sys.argv[1:]
    meta = json.load(open(meta_path))
    det = meta["family"] == "detection"
    problems, worst_l2, worst_det, counts = [], 0.0, 0.0, []
    for c in cases:
        ref, got = load(f"{ref_root}/{c}"), load(f"{got_root}/{c}")
        if [n for n, _ in ref] != [n for n, _ in got]:
            problems.append(f"{c}: outputs {[n for n, _ in got]}, ONNX Runtime {[n for n, _ in ref]}")
            continue
        if det:
            n = ref[0][1].shape[0] if ref[0][1].ndim else 0
            counts.append(f"{c} {n}")
            if c == "blank" and n != 0:
                problems.append(f"blank: ONNX Runtime finds {n} detections on the uniform gray image; "
                                f"the zero-detection case needs a model or image that gives none")
        for (name, r), (_, g) in zip(ref, got):
            if r.dtype != g.dtype or r.shape != g.shape:
                problems.append(f"{c}: {name} {g.dtype}{list(g.shape)}, ONNX Runtime {r.dtype}{list(r.shape)}")
                continue
            if r.dtype.kind in "iub":
                bad = int((r != g).sum())
                print(f"{c}: {name} {r.dtype}{list(r.shape)}: {bad} elements differ")
                if bad:
                    problems.append(f"{c}: {name}: {bad} of {r.size} elements differ")
                continue
            r64, g64 = r.astype(np.float64), g.astype(np.float64)
            if not np.isfinite(g64).all() and not np.array_equal(np.isfinite(g64), np.isfinite(r64)):
                problems.append(f"{c}: {name}: non-finite values where ONNX Runtime has finite ones")
                continue
            if det and r.ndim != 4:
                scale = max(1.0, float(np.abs(r64).max())) if r.size else 1.0
                err = float(np.abs(g64 - r64).max()) / scale if r.size else 0.0
                worst_det = max(worst_det, err)
                print(f"{c}: {name} {list(r.shape)}: max|diff| / max(1, max|ref|) = {err:.3g}")
                if not err <= DET_TOL:
                    problems.append(f"{c}: {name}: max|diff| {err:.3g} of scale {scale:.3g} (> {DET_TOL})")
            else:
                norm = float(np.linalg.norm(r64))
                diff = float(np.linalg.norm(g64 - r64))
                l2 = diff / norm if norm > 0 else diff
                worst_l2 = max(worst_l2, l2)
                print(f"{c}: {name} {list(r.shape)}: rel. L2 {l2:.3g}")
                if not l2 <= REL_L2:
                    problems.append(f"{c}: {name}: rel. L2 {l2:.3g} (> {REL_L2})")
    metric = f"rel. L2 {worst_l2:.1e}"
    if det:
        metric = f"detections {', '.join(counts)}; boxes/scores {worst_det:.1e}, " + metric
    print(json.dumps({"matches": not problems, "metric": metric, "why": "; ".join(problems)}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
