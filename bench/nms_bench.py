#!/usr/bin/python3
"""NonMaxSuppression beside ONNX Runtime CPU, in one run (scripts/bench.sh runs
it after bench/run_bench.py; alone: /usr/bin/python3 bench/nms_bench.py
--build-dir build).

  nms_1k, nms_10k, nms_50k   one NonMaxSuppression node (bench/nms_models.py
      nms_model) over 1 000 / 10 000 / 50 000 random boxes, 1 batch, 1
      class, unique scores, iou_threshold 0.5, score_threshold 0.0,
      max_output_boxes_per_class 200;
  detector, detector_pre_nms  the SSD-style detector of
      tests/e2e/detector.sh (bench/nms_models.py detector(): [1, 3, 96, 128],
      576 anchors, 3 classes) with and without its NonMaxSuppression node, on
      page.png (third_party/cache) or seeded random pixels without it.

For each: oaax-run latency p50 at depth 1 (frames_in_flight 1; send_input
to receive_output, uploads and downloads included), the GPU time of the
dispatches (runtime profile=1 timestamps, median over frames), and ONNX
Runtime's session.run() p50 (bench/ort_bench.js, the suite's ORT timing, all
cores); the outputs of oaax-run are checked against ONNX Runtime's
(tools/reference/ort_run.js): selected_indices exactly, other outputs within
1e-4. Writes OUT/nms{suffix}.json and replaces the section
"## NonMaxSuppression" of OUT/RESULTS{suffix}.md (appended when missing).
OUT is bench/, or BUILD/bench/dev-results with --quick or --only (as
run_bench.py). --only runs this part only when it names nms (or one of the
names above).
"""
import argparse
import datetime
import json
import os
import shutil
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import nms_models  # noqa: E402
import run_bench  # noqa: E402  (Suite: convert, oaax_run, ort; the suite's mechanisms)

SECTION = "## NonMaxSuppression"
NMS_SIZES = {"nms_1k": 1000, "nms_10k": 10000, "nms_50k": 50000}
DETECTOR = ("detector_pre_nms", "detector")
MAX_PER_CLASS, IOU, SCORE = 200, 0.5, 0.0


def log(msg):
    print(f"[nms-bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def write_inputs(arrays, d):
    os.makedirs(d, exist_ok=True)
    manifest = []
    for i, (name, a) in enumerate(arrays.items()):
        a = np.ascontiguousarray(a)
        a.tofile(os.path.join(d, f"{i}.bin"))
        manifest.append({"name": name, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return d


def load_outputs(d):
    return {e["name"]: np.fromfile(os.path.join(d, e["file"]), dtype=e["dtype"]).reshape(e["shape"])
            for e in json.load(open(os.path.join(d, "manifest.json")))}


def compare(ours, ref):
    """None when ours matches ONNX Runtime's outputs, else what differs."""
    if list(ours) != list(ref):
        return f"outputs {list(ours)} vs ONNX Runtime {list(ref)}"
    for name, want in ref.items():
        got = ours[name]
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"{name} {got.dtype}{list(got.shape)} vs ONNX Runtime {want.dtype}{list(want.shape)}"
        if name == "selected_indices":
            if not np.array_equal(got, want):
                return "selected_indices differ from ONNX Runtime's"
        elif want.size and not float(np.abs(got - want).max()) <= 1e-4:
            return f"{name} differs from ONNX Runtime's by {float(np.abs(got - want).max()):.3g}"
    return None


def measure(s, a, name, onnx_path, inputs, work):
    """One row: conversion, correctness, oaax p50, GPU time, ORT p50."""
    row = {"name": name}
    try:
        conv = s.convert(onnx_path, os.path.join(work, name + "-bundle"))
        row["dispatches"] = conv["dispatches"]
        ref_dir = os.path.join(work, name + "-ort-out")
        env = dict(os.environ, NODE_PATH=run_bench.NODE_MODULES)
        run_bench.run(["node", os.path.join(ROOT, "tools", "reference", "ort_run.js"), onnx_path, inputs, ref_dir],
                      timeout=600, env=env)
        out_dir = os.path.join(work, name + "-out")
        shutil.rmtree(out_dir, ignore_errors=True)
        first = s.oaax_run(conv["bundle"], inputs, 1, 1, 0, outputs=out_dir)
        ours, ref = load_outputs(out_dir), load_outputs(ref_dir)
        row["mismatch"] = compare(ours, ref)
        if "selected_indices" in ref:
            row["selected"] = int(ref["selected_indices"].shape[0])
        n = s.iters(first["latency_ms"]["p50"], 5, 500)
        r = s.oaax_run(conv["bundle"], inputs, n, 1, 2)
        row["iterations"] = n
        row["p50_ms"] = r["latency_ms"]["p50"]
        row["load_ms"] = r["load_ms"]
        version = r.get("runtime", {}).get("version", "")  # "0.1.0 (llvmpipe (LLVM ...))"
        row["device"] = version.split(" (", 1)[1][:-1] if " (" in version else version
        pr = s.oaax_run(conv["bundle"], inputs, max(3, min(n, 20)), 1, 1, profile=True)
        row["gpu_ms"] = pr["gpu_us"] / 1000.0 if pr.get("gpu_us") is not None else None
        o = s.ort(onnx_path, inputs, a.seconds, [], min_iter=5)
        row["ort_p50_ms"] = o["latency_ms"]["p50"]
        row["ort_iterations"] = o["latency_ms"]["n"]
        row["ratio"] = row["p50_ms"] / row["ort_p50_ms"]
        log(f"{name}: oaax p50 {row['p50_ms']:.2f} ms (GPU {row['gpu_ms']:.2f} ms), ORT p50 "
            f"{row['ort_p50_ms']:.3f} ms" + (f"; MISMATCH: {row['mismatch']}" if row["mismatch"] else ""))
    except (run_bench.Failure, OSError, KeyError, ValueError) as e:
        row["error"] = str(e)
        log(f"{name}: FAILED {e}")
    return row


def markdown(res):
    m = res["machine"]
    L = [SECTION, "",
         f"`bench/nms_bench.py` ({m['date']}, git {m['git_commit']}; {m['device']}; ONNX Runtime "
         f"{m['ort_version']} CPU, {m['cores']} threads; load average {m['load_start']:.1f} at start, "
         f"{m['load_end']:.1f} at end; ≈ {res['seconds']:g} s per figure). p50 = latency at depth 1: oaax-run's "
         f"send_input → receive_output (input upload and output download included), ONNX Runtime's "
         f"session.run(); GPU ms = the bundle's dispatches (profile=1 timestamps, median over the frames of a "
         f"separate run; the timestamps around every dispatch add time of their own on lavapipe, so GPU ms can "
         f"exceed p50 for short models); "
         f"oaax ÷ ORT > 1: oaax-vulkan is slower. Outputs checked against ONNX Runtime's "
         f"(selected_indices exactly).", "",
         f"NonMaxSuppression alone: 1 batch, 1 class, random boxes, unique scores, iou_threshold {IOU}, "
         f"score_threshold {SCORE}, max_output_boxes_per_class {MAX_PER_CLASS}.", "",
         "| model | boxes | selected | dispatches | p50 ms | GPU ms | ORT p50 ms | oaax ÷ ORT | matches ORT |",
         "|---|---|---|---|---|---|---|---|---|"]

    def f(v, fmt="{:.2f}"):
        return "—" if v is None else fmt.format(v)

    def ok(r):
        return "yes" if not r.get("mismatch") else "**no**: " + r["mismatch"]
    for r in res["rows"]:
        if r["name"] not in NMS_SIZES:
            continue
        if "error" in r:
            L.append(f"| {r['name']} | {NMS_SIZES[r['name']]} | — | — | — | — | — | — | failed: {r['error']} |")
            continue
        L.append(f"| {r['name']} | {NMS_SIZES[r['name']]} | {r.get('selected', '—')} | {r.get('dispatches', '—')} | "
                 f"{f(r['p50_ms'])} | {f(r['gpu_ms'])} | {f(r['ort_p50_ms'], '{:.3f}')} | {f(r['ratio'], '{:.1f}')} | "
                 f"{ok(r)} |")
    det = {r["name"]: r for r in res["rows"] if r["name"] in DETECTOR}
    if det:
        L += ["", f"Detector ({res['detector_input']}; {nms_models.N_ANCHORS} anchors, {nms_models.CLASSES} classes, "
              f"NMS score {nms_models.SCORE_THRESHOLD}, IoU {nms_models.IOU_THRESHOLD}, at most "
              f"{nms_models.MAX_PER_CLASS} per class) with and without its NonMaxSuppression node:", "",
              "| variant | selected | dispatches | p50 ms | GPU ms | ORT p50 ms | oaax ÷ ORT | matches ORT |",
              "|---|---|---|---|---|---|---|---|"]
        for n in DETECTOR:
            r = det.get(n)
            if r is None:
                continue
            if "error" in r:
                L.append(f"| {n} | — | — | — | — | — | — | failed: {r['error']} |")
                continue
            L.append(f"| {n} | {r.get('selected', '—')} | {r.get('dispatches', '—')} | {f(r['p50_ms'])} | "
                     f"{f(r['gpu_ms'])} | {f(r['ort_p50_ms'], '{:.3f}')} | {f(r['ratio'], '{:.1f}')} | {ok(r)} |")
        a, b = det.get("detector"), det.get("detector_pre_nms")
        if a and b and "error" not in a and "error" not in b:
            L += ["", f"The NMS node's share: p50 {a['p50_ms'] - b['p50_ms']:+.2f} ms on oaax-vulkan "
                  f"(GPU {f(None if a['gpu_ms'] is None or b['gpu_ms'] is None else a['gpu_ms'] - b['gpu_ms'], '{:+.2f}')} ms), "
                  f"{a['ort_p50_ms'] - b['ort_p50_ms']:+.3f} ms on ONNX Runtime (differences of medians of "
                  f"separate runs; on a loaded 2-core machine small differences are noise)."]
    return "\n".join(L) + "\n"


def replace_section(path, text):
    """Replaces the SECTION of `path` (up to the next "## " heading or the
    end) with `text`, or appends it; creates the file when missing."""
    old = open(path).read() if os.path.exists(path) else ""
    lines = old.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.rstrip("\n") == SECTION), None)
    if start is None:
        new = old + ("" if not old or old.endswith("\n\n") else "\n" if old.endswith("\n") else "\n\n") + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "".join(lines[:start]) + text + ("\n" if end < len(lines) else "") + "".join(lines[end:])
    with open(path, "w") as f:
        f.write(new)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--out-dir", default=None)
    p.add_argument("--quick", action="store_true", help="1k and 10k boxes and the detector, 1 s per figure")
    p.add_argument("--swiftshader", action="store_true")
    p.add_argument("--seconds", type=float, default=None, help="measuring time per figure (default 10, quick 1)")
    p.add_argument("--budget", type=float, default=None, help="accepted for scripts/bench.sh; not used")
    p.add_argument("--only", default="")
    a = p.parse_args()
    a.only = set(x for x in a.only.split(",") if x)
    names = list(NMS_SIZES) + list(DETECTOR)
    if a.quick:
        names.remove("nms_50k")
    if a.only:
        names = names if "nms" in a.only else [n for n in names if n in a.only]
        if not names:
            log("--only names no NMS figure (nms, " + ", ".join(list(NMS_SIZES) + list(DETECTOR)) + "): skipped")
            return
    if a.out_dir is None:
        a.out_dir = os.path.join(os.path.abspath(a.build_dir), "bench", "dev-results") if (a.quick or a.only) else HERE
    os.makedirs(a.out_dir, exist_ok=True)
    if a.seconds is None:
        a.seconds = 1.0 if a.quick else 10.0
    s = run_bench.Suite(a)
    work = os.path.join(s.work, "nms")
    os.makedirs(work, exist_ok=True)
    load_start = os.getloadavg()[0]
    rows = []
    det_input = None
    for name in names:
        if name in NMS_SIZES:
            path = os.path.join(work, name + ".onnx")
            nms_models.nms_model(path, NMS_SIZES[name], 1, MAX_PER_CLASS, IOU, SCORE)
            inputs = write_inputs(nms_models.nms_inputs(NMS_SIZES[name], 1, seed=1), os.path.join(work, name + "-in"))
        else:
            path = os.path.join(work, name + ".onnx")
            nms_models.detector(path, "nms" if name == "detector" else "pre_nms")
            page = os.path.join(ROOT, "third_party", "cache", "page.png")
            try:
                img = nms_models.image(page)
                det_input = "page.png resized to 128 × 96"
            except (ImportError, OSError):
                img = np.random.default_rng(0).random((1, 3, nms_models.HEIGHT, nms_models.WIDTH), dtype=np.float32)
                det_input = "seeded random pixels (page.png or PIL missing)"
            inputs = write_inputs({"image": img}, os.path.join(work, name + "-in"))
        log(f"{name}: converting and measuring")
        rows.append(measure(s, a, name, path, inputs, work))
    s.machine()
    m = s.results["machine"]
    device = next((r["device"] for r in rows if r.get("device")), "?")
    res = {"machine": {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                       "git_commit": m.get("git_commit"), "cpu": m.get("cpu"), "cores": m.get("cores"),
                       "device": device, "ort_version": m.get("ort_version"), "load_start": load_start,
                       "load_end": os.getloadavg()[0]},
           "seconds": a.seconds, "quick": a.quick, "swiftshader": a.swiftshader, "detector_input": det_input,
           "settings": {"max_output_boxes_per_class": MAX_PER_CLASS, "iou_threshold": IOU, "score_threshold": SCORE},
           "rows": rows}
    suffix = "-swiftshader" if a.swiftshader else ""
    with open(os.path.join(a.out_dir, f"nms{suffix}.json"), "w") as f:
        json.dump(res, f, indent=1)
    replace_section(os.path.join(a.out_dir, f"RESULTS{suffix}.md"), markdown(res))
    log(f"wrote {a.out_dir}/nms{suffix}.json and the section '{SECTION}' of {a.out_dir}/RESULTS{suffix}.md")
    bad = [r["name"] for r in rows if r.get("error") or r.get("mismatch")]
    if bad:
        log("failed or differing from ONNX Runtime: " + ", ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
