#!/usr/bin/python3
"""One zoo model end to end: export (if not cached), convert with
oaax-vulkan-toolchain (default settings, no config.json), run every input case
(tests/zoo/make_inputs.py) through the OAAX runtime with oaax-run and through
ONNX Runtime (tools/reference/ort_run.js), and compare (tests/zoo/compare.py).
Before the comparison, ONNX Runtime's outputs must depend on the input
(input_dependence): a model whose random weights make it output the same
values for any input is refused as a reference.

Writes the result as one JSON object to --result (and prints a summary line):
  {"name", "family", "input" (shapes), "opset", "converts", "matches",
   "metric", "convert_s", "load_ms", "run_ms", "error"}
converts / matches are true, false or null (not reached). error is the
first line of the failing step's message, prefixed by the step (export,
convert, ONNX Runtime, reference, run, compare). Exit 0 when the model converts and
matches, 1 otherwise (the summary line and the result say why), 77 when the
reference tools, or torch for an export, are missing.

usage: run_model.py NAME --build BUILD_DIR [--cache DIR] [--driver lavapipe|swiftshader]
                    [--timeout S] [--validation] [--result FILE] [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CACHE = os.path.join(ROOT, "third_party", "cache")
PY = sys.executable


def first_error_line(text):
    """The line of a tool's output that says what went wrong: the first one
    naming an error, else the last non-empty one."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        low = ln.lower()
        if "error" in low or "unsupported" in low or "cannot" in low or "refused" in low or "fail" in low:
            return ln[:400]
    return lines[-1][:400] if lines else "(no message)"


def conversion_error(bundle):
    """The toolchain's reason for a failed conversion: the last entry of
    bundle/conversion-log.json carries it as "Technical Error" (the text the
    console prints on stderr, without the progress lines around it)."""
    try:
        log = json.load(open(os.path.join(bundle, "conversion-log.json")))
        data = log[-1].get("Data", {})
        return (data.get("Technical Error") or data.get("Human Error") or "").splitlines()[0][:400] or None
    except (OSError, ValueError, IndexError, KeyError, AttributeError):
        return None


def input_dependence(model, in_dir, ref_dir, work, env, timeout):
    """None when ONNX Runtime's outputs change with the input, else why not.
    Random weights can make activations vanish so that a model outputs the
    same values for any input; a comparison would then test its biases only.
    The check feeds the first case's inputs replaced by constants (0.5 for
    floats, 1 for integers) and requires some output to move by a relative L2
    of at least 1e-3."""
    import numpy as np
    os.makedirs(os.path.join(work, "in"), exist_ok=True)
    manifest = json.load(open(os.path.join(in_dir, "manifest.json")))
    for e in manifest:
        a = np.fromfile(os.path.join(in_dir, e["file"]), dtype=e["dtype"])
        np.full_like(a, 0.5 if a.dtype.kind == "f" else 1).tofile(os.path.join(work, "in", e["file"]))
    with open(os.path.join(work, "in", "manifest.json"), "w") as f:
        json.dump(manifest, f)
    rc, _, out = step(["node", os.path.join(ROOT, "tools", "reference", "ort_run.js"), model,
                       os.path.join(work, "in"), os.path.join(work, "out")], timeout, env)
    if rc != 0:
        return "ONNX Runtime on constant inputs: " + first_error_line(out)
    moved = 0.0
    for e in json.load(open(os.path.join(ref_dir, "manifest.json"))):
        r = np.fromfile(os.path.join(ref_dir, e["file"]), dtype=e["dtype"]).astype(np.float64)
        c = np.fromfile(os.path.join(work, "out", e["file"]), dtype=e["dtype"]).astype(np.float64)
        if r.shape != c.shape:
            return None
        moved = max(moved, float(np.linalg.norm(r - c)) / max(float(np.linalg.norm(r)), 1e-30))
    if moved < 1e-3:
        return (f"ONNX Runtime's outputs hardly depend on the input (rel. L2 {moved:.1e} between the image and a "
                f"constant input): with these random weights the comparison would test the biases only; "
                f"change the model's initialization in tests/zoo/export_models.py")
    return None


def step(cmd, timeout, env=None):
    """(returncode or 'timeout', seconds, combined output)."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env,
                           stdin=subprocess.DEVNULL)
        return p.returncode, time.time() - t0, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return "timeout", time.time() - t0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("--build", required=True, help="build directory with oaax-vulkan-toolchain and oaax-run")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "zoo"), help="export cache (export_models.py --out)")
    ap.add_argument("--driver", default="lavapipe", choices=["lavapipe", "swiftshader"])
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per step (export, convert, each run)")
    ap.add_argument("--validation", action="store_true", help="run with the Vulkan validation layer")
    ap.add_argument("--result", help="write the result JSON here")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one, removed)")
    a = ap.parse_args()

    node_modules = os.path.join(CACHE, "node", "node_modules")
    if not os.path.isdir(os.path.join(node_modules, "onnxruntime-node")) or not shutil.which("node") \
            or not os.path.exists(os.path.join(CACHE, "scenetext01.jpg")):
        print("SKIP: reference tools or images missing; run scripts/fetch-reference.sh")
        return 77

    res = {"name": a.name, "family": None, "input": None, "opset": None, "converts": None, "matches": None,
           "metric": None, "convert_s": None, "load_ms": None, "run_ms": None, "error": None}

    def finish(code):
        if a.result:
            with open(a.result, "w") as f:
                json.dump(res, f)
        conv = {True: "converts", False: "does not convert", None: "-"}[res["converts"]]
        match = {True: "matches", False: "MISMATCH", None: "-"}[res["matches"]]
        print(f"zoo {a.name}: {conv}, {match}" + (f" ({res['metric']})" if res["metric"] else "") +
              (f"; convert {res['convert_s']:.1f} s" if res["convert_s"] is not None else "") +
              (f", load {res['load_ms'] / 1000:.1f} s, run {res['run_ms'] / 1000:.2f} s"
               if res["run_ms"] is not None else "") + (f"\n  error: {res['error']}" if res["error"] else ""),
              flush=True)
        return code

    model_dir = os.path.join(a.cache, a.name)
    if not os.path.exists(os.path.join(model_dir, "meta.json")) and subprocess.run(
            [PY, "-c", "import torch, torchvision, onnx"], capture_output=True).returncode != 0:
        print(f"SKIP: {PY} lacks torch, torchvision or onnx, needed to export {a.name} "
              f"(Debian: apt-get install python3-torch python3-torchvision python3-onnx)")
        return 77
    rc, _, out = step([PY, os.path.join(HERE, "export_models.py"), "--out", a.cache, a.name], a.timeout)
    if rc != 0:
        err = os.path.join(model_dir, "export-error.txt")
        msg = open(err).read() if os.path.exists(err) else out
        lines = [ln for ln in msg.splitlines() if ln.strip()]
        res["error"] = "export: " + (lines[-1][:400] if lines else f"exit {rc}")
        return finish(1)
    meta = json.load(open(os.path.join(model_dir, "meta.json")))
    res.update(family=meta["family"], opset=meta["opset"], input=[i["shape"] for i in meta["inputs"]])

    work = a.keep or tempfile.mkdtemp(prefix=f"zoo-{a.name}-")
    if a.keep:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    try:
        model = os.path.join(model_dir, "model.onnx")
        subprocess.run([PY, os.path.join(HERE, "make_inputs.py"), os.path.join(model_dir, "meta.json"),
                        os.path.join(CACHE, "scenetext01.jpg"), os.path.join(work, "in")], check=True)
        cases = open(os.path.join(work, "in", "cases.txt")).read().split()

        bundle = os.path.join(work, "bundle")
        rc, secs, out = step([os.path.join(a.build, "oaax-vulkan-toolchain"), model, bundle], a.timeout)
        res["convert_s"] = round(secs, 1)
        with open(os.path.join(work, "toolchain.log"), "w") as f:
            f.write(out)
        if rc != 0:
            res["converts"] = False
            res["error"] = "convert: " + ("timed out after %d s" % a.timeout if rc == "timeout"
                                          else conversion_error(bundle) or first_error_line(out))
            return finish(1)
        res["converts"] = True

        env = dict(os.environ, NODE_PATH=node_modules)
        for c in cases:
            rc, _, out = step(["node", os.path.join(ROOT, "tools", "reference", "ort_run.js"), model,
                               os.path.join(work, "in", c), os.path.join(work, "ort", c)], a.timeout, env)
            if rc != 0:
                res["error"] = f"ONNX Runtime ({c}): " + first_error_line(out)
                return finish(1)

        if meta["family"] != "detection":
            why = input_dependence(model, os.path.join(work, "in", cases[0]), os.path.join(work, "ort", cases[0]),
                                   os.path.join(work, "const"), env, a.timeout)
            if why:
                res["error"] = "reference: " + why
                return finish(1)

        env = dict(os.environ)
        if a.driver == "swiftshader":
            env["VK_ICD_FILENAMES"] = os.path.join(ROOT, "third_party", "swiftshader", "vk_swiftshader_icd.json")
        # LeakSanitizer: see tests/e2e/classifier.sh (the loader dlcloses the drivers).
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        for c in cases:
            cmd = [os.path.join(a.build, "oaax-run"), "--model", os.path.join(bundle, "model.oinf"),
                   "--inputs", os.path.join(work, "in", c), "--outputs", os.path.join(work, "got", c),
                   "--json", "--quiet"]
            if a.validation:
                cmd += ["--arg", "validation=1"]
            rc, secs, out = step(cmd, a.timeout, env)
            if rc != 0:
                res["error"] = f"run ({c}): " + ("timed out after %d s" % a.timeout if rc == "timeout"
                                                 else first_error_line(out))
                return finish(1)
            if a.validation and ("VUID-" in out or "Validation Error" in out):
                res["error"] = f"run ({c}): validation layer: " + first_error_line(out)
                return finish(1)
            if res["run_ms"] is None:
                rep = json.loads(out[out.index("{"):])
                res["load_ms"] = round(rep["load_ms"], 1)
                res["run_ms"] = round(rep["latency_ms"]["max"], 1)

        rc, _, out = step([PY, os.path.join(HERE, "compare.py"), os.path.join(model_dir, "meta.json"),
                           os.path.join(work, "ort"), os.path.join(work, "got")] + cases, a.timeout)
        print(out, end="")
        verdict = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        res["metric"] = verdict.get("metric")
        if rc != 0 or not verdict.get("matches"):
            res["matches"] = False
            res["error"] = "compare: " + verdict.get("why", first_error_line(out))
            return finish(1)
        res["matches"] = True
        return finish(0)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
