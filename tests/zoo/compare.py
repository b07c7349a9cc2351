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
  * a detector's order: detections come sorted by score, and the order of
    detections whose reference scores lie within the score tolerance of each
    other (a near tie) is decided by float rounding, which no two
    implementations share. Within each run of such reference detections
    (consecutive, each within 1e-4 of the next) the result's detections are
    first paired with the reference's: each to one with the same label whose
    boxes and scores are within the tolerances above. The comparison then
    runs in that pairing's order on every output (masks and keypoints
    follow their detection). A detection with no such partner keeps its
    place, so a real difference still fails;
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


def pair_near_ties(ref, got):
    """(order, moved) when pairing reorders the result, else None: order
    indexes the result's detections so that got[order] follows the
    reference's order inside near-tied score runs (see the module's
    docstring), moved counts the detections that changed place. The
    detections' outputs are those whose first dimension is the reference's
    detection count; the scores are the first float output of shape [N], the
    labels the first integer one, the boxes the float outputs of shape
    [N, 4]."""
    if not ref or ref[0][1].ndim == 0:
        return None
    n = ref[0][1].shape[0]
    if any(r.shape != g.shape or r.dtype != g.dtype or r.ndim == 0 or r.shape[0] != n
           for (_, r), (_, g) in zip(ref, got)) or len(ref) != len(got) or n < 2:
        return None
    scores = next((i for i, (_, r) in enumerate(ref) if r.dtype.kind == "f" and r.ndim == 1), None)
    if scores is None:
        return None
    labels = next((i for i, (_, r) in enumerate(ref) if r.dtype.kind in "iu" and r.ndim == 1), None)
    boxes = [i for i, (_, r) in enumerate(ref) if r.dtype.kind == "f" and r.shape == (n, 4)]
    rs = ref[scores][1].astype(np.float64)
    tol = {i: DET_TOL * max(1.0, float(np.abs(ref[i][1]).max())) for i in boxes + [scores]}

    def partners(i, j):
        """Reference detection i and result detection j are the same detection."""
        if labels is not None and ref[labels][1][i] != got[labels][1][j]:
            return False
        return all(float(np.abs(ref[k][1][i].astype(np.float64) - got[k][1][j].astype(np.float64)).max()) <= tol[k]
                   for k in boxes + [scores])

    order = np.arange(n)
    start = 0
    while start < n:
        end = start + 1
        while end < n and abs(rs[end] - rs[end - 1]) <= tol[scores]:
            end += 1
        if end - start > 1:
            free = list(range(start, end))
            unpaired = []
            for i in range(start, end):
                j = next((j for j in ([i] + free) if j in free and partners(i, j)), None)
                if j is None:
                    unpaired.append(i)
                else:
                    order[i] = j
                    free.remove(j)
            for i in unpaired:  # keeps its own place when free, else any free one: the comparison fails there
                j = i if i in free else free[0]
                order[i] = j
                free.remove(j)
        start = end
    moved = int((order != np.arange(n)).sum())
    return (order, moved) if moved else None


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
        if det:
            moved = pair_near_ties(ref, got)
            if moved:
                got = [(name, g[moved[0]]) for name, g in got]
                print(f"{c}: {moved[1]} detections in near-tied score runs paired out of order")
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
