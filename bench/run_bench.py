#!/usr/bin/python3
"""oaax-vulkan benchmark suite driver (issue 7). Run through scripts/bench.sh.

One run measures, on the default Vulkan device (lavapipe here; SwiftShader with
--swiftshader):
  roofline   oaaxvk-roofline: sustained FMA GFLOP/s (fp32, fp16) and copy GB/s
  kernels    single-node ONNX models through toolchain + runtime: kernel GPU time
             (runtime profile=1 timestamps), GFLOP/s or GB/s, % of the roofline
  models     PP-OCRv4 det/rec/cls, torchvision ResNet-50 / MobileNetV2: load time,
             latency p50 (depth 1), throughput (depth 2-4), arena vs intermediates,
             dispatches vs ONNX nodes, each beside ONNX Runtime CPU
  overhead   send -> receive round trip of a 16-element Relu vs ORT run()
  load time  per model: runtime_model_loading with empty caches, then again with
             the caches the first load wrote, beside ONNX Runtime's session creation
  probe      oaaxvk-roofline --gemm-probe: the GEMM inner loop per load path
and writes bench/RESULTS.md, bench/results.json and bench/roofline.png.
Iteration counts are adaptive: every figure is measured for about --seconds
(at least 3 iterations), and a model whose single inference is slow gets
fewer depths (what ran is recorded).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import models  # noqa: E402

NODE_MODULES = os.path.join(ROOT, "third_party", "cache", "node", "node_modules")
OCR_DIR = os.path.join(NODE_MODULES, "@gutenye", "ocr-models", "assets")
OCR_MODELS = {  # name -> (file, input shape bound at conversion, description)
    "ppocrv4_det": ("ch_PP-OCRv4_det_infer.onnx", [1, 3, 192, 384], "PP-OCRv4 detection (DBNet)"),
    "ppocrv4_rec": ("ch_PP-OCRv4_rec_infer.onnx", [1, 3, 48, 640], "PP-OCRv4 recognition (SVTR + CTC)"),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", [1, 3, 48, 192], "PP-OCR mobile v2.0 orientation"),
}
TORCHVISION = {"resnet50": "torchvision ResNet-50 (random weights)",
               "mobilenet_v2": "torchvision MobileNetV2 (random weights)"}


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Failure(Exception):
    pass


def _ms(v):
    return f"{v:.0f} ms" if v is not None else "—"


def run(cmd, timeout, env=None, cwd=None):
    """Runs `cmd`; returns stdout. Raises Failure with the command's stderr tail."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise Failure(f"{os.path.basename(cmd[0])} timed out after {timeout:.0f} s")
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        raise Failure(f"{os.path.basename(cmd[0])} exit {p.returncode}: " + " | ".join(tail))
    return p.stdout


class Suite:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build_dir)
        self.work = os.path.join(self.build, "bench")
        os.makedirs(self.work, exist_ok=True)
        self.env = dict(os.environ)
        if a.swiftshader:
            self.env["VK_ICD_FILENAMES"] = os.path.join(ROOT, "third_party", "swiftshader", "vk_swiftshader_icd.json")
        self.cores = os.cpu_count() or 1
        self.t0 = time.time()
        self.model_bundles = {}  # model name -> (bundle, inputs dir), for device_variants
        self.results = {"suite": {"quick": a.quick, "swiftshader": a.swiftshader, "seconds_per_figure": a.seconds,
                                  "only": sorted(a.only)},
                        "machine": {}, "roofline": {}, "kernels": [], "models": [], "host_overhead": {},
                        "device_variants": {}, "load_time": [], "notes": []}

    # ---- helpers ----
    def tool(self, name):
        p = os.path.join(self.build, name)
        if not os.path.exists(p):
            raise Failure(f"{p} is missing (build it first: scripts/bench.sh builds it)")
        return p

    def write_inputs(self, onnx_path, shapes, dirname):
        """Seeded random float32 inputs (uniform [0, 1)) in the manifest form both
        oaax-run --inputs and ort_bench.js read."""
        import numpy as np
        import onnx
        m = onnx.load(onnx_path, load_external_data=False)
        inits = {t.name for t in m.graph.initializer}
        rng = np.random.default_rng(1234)
        os.makedirs(dirname, exist_ok=True)
        manifest = []
        for i, vi in enumerate(x for x in m.graph.input if x.name not in inits):
            if vi.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
                raise Failure(f"input '{vi.name}' is not float32")
            shape = shapes.get(vi.name) if shapes else None
            if shape is None:
                shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
                if any(d <= 0 for d in shape):
                    raise Failure(f"input '{vi.name}' has symbolic dims and no bound shape")
            data = rng.random(int(np.prod(shape)) if shape else 1, dtype=np.float32)
            data.tofile(os.path.join(dirname, f"{i}.bin"))
            manifest.append({"name": vi.name, "dtype": "float32", "shape": list(shape), "file": f"{i}.bin"})
        with open(os.path.join(dirname, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        return dirname

    def convert(self, onnx_path, out_dir, shapes=None):
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        cmd = [self.tool("oaax-vulkan-toolchain")]
        if shapes:
            # The toolchain's input form for symbolic dims: an archive holding
            # model.onnx and config.json (stored, not compressed: it is local).
            import zipfile
            arc = out_dir + ".zip"
            with zipfile.ZipFile(arc, "w", zipfile.ZIP_STORED) as z:
                z.write(onnx_path, "model.onnx")
                z.writestr("config.json", json.dumps({"input_shapes": shapes}))
            onnx_path = arc
        t = time.time()
        run(cmd + [onnx_path, out_dir], timeout=900)
        conv_s = time.time() - t
        with open(os.path.join(out_dir, "conversion-log.json")) as f:
            entries = json.load(f)
        data = {e["Message"]: e.get("Data", {}) for e in entries}
        plan = data.get("Memory plan", {})
        done = data.get("Successful Conversion", {})
        return {"conversion_s": conv_s, "dispatches": done.get("Dispatches"),
                "nodes_after_passes": done.get("Nodes after passes"),
                "onnx_nodes_imported": data.get("Model imported", {}).get("ONNX nodes"),
                "arena_bytes": plan.get("Arena bytes"), "arena_bytes_no_reuse": plan.get("Arena bytes without reuse"),
                "weights_bytes": plan.get("Weights bytes"), "barriers": plan.get("Barriers"),
                "barriers_lower_bound": plan.get("Barriers lower bound"),
                "pipelines": plan.get("Distinct pipelines"), "bundle": os.path.join(out_dir, "model.oinf")}

    def oaax_run(self, bundle, inputs, iterations, depth, warmup, profile=False, timeout=900, kernel_variant=None,
                 outputs=None):
        cmd = [self.tool("oaax-run"), "--model", bundle, "--inputs", inputs, "--iterations", str(iterations),
               "--depth", str(depth), "--warmup", str(warmup), "--json", "--quiet",
               # One frame slot per inference in flight: depth 1 runs with
               # frames_in_flight=1, so depth 2 vs 1 is the frames_in_flight gain.
               "--arg", f"frames_in_flight={depth}"]
        if kernel_variant:
            cmd += ["--arg", f"kernel_variant={kernel_variant}"]
            if kernel_variant == "gpu":
                cmd += ["--arg", "fp16_weights=1"]  # the gpu table with its fp16-weight rows (opt-in)
        if outputs:
            cmd += ["--outputs", outputs]
        logf = None
        if profile:
            logf = bundle + f".profile.{int(time.time() * 1000)}.log"
            cmd += ["--arg", "profile=1", "--arg", "log_level=2", "--arg", f"log_file={logf}"]
        r = json.loads(run(cmd, timeout=timeout, env=self.env))
        if profile:
            frames = {}
            with open(logf) as f:
                for line in f:
                    m = re.search(r"profile frame #(\d+): (\d+) dispatches, ([\d.]+) us in dispatches", line)
                    if m:
                        frames[int(m.group(1))] = (int(m.group(2)), float(m.group(3)))
                    m = re.search(r"running the (\w+) kernel variants on '[^']*'(.*)$", line)
                    if m:
                        r["variant_table"] = m.group(1)
                        r["variant_note"] = m.group(2).strip().strip("()")
            os.remove(logf)
            # The highest-numbered frames are the timed ones (load warm-up and
            # --warmup frames come first).
            timed = [frames[k][1] for k in sorted(frames)[-iterations:]]
            r["gpu_us"] = statistics.median(timed) if timed else None
            r["profiled_dispatches"] = frames[max(frames)][0] if frames else None
        return r

    def ort(self, onnx_path, inputs, seconds, depths, min_iter=3, optimized=None, timeout=900):
        cmd = ["node", os.path.join(HERE, "ort_bench.js"), "--model", onnx_path, "--inputs", inputs,
               "--threads", str(self.cores), "--seconds", str(seconds), "--min-iterations", str(min_iter)]
        if depths:
            cmd += ["--depths", ",".join(map(str, depths))]
        if optimized:
            cmd += ["--optimized-model", optimized]
        env = dict(self.env, NODE_PATH=NODE_MODULES)
        return json.loads(run(cmd, timeout=timeout, env=env).strip().splitlines()[-1])

    def estimate_ms(self, flops):
        """A model's latency estimated from its Conv/Gemm/MatMul FLOPs at the
        slowest compute kernel's measured rate (None without both)."""
        rates = [k["gflops"] for k in self.results["kernels"] if k.get("kind") == "compute" and k.get("gflops")]
        if not flops or not rates:
            return None
        # Whole models ran about 2x slower than their slowest kernel in development.
        return 2.0 * flops / (min(rates) * 1e9) * 1000.0

    def iters(self, latency_ms, lo, hi=2000):
        return int(max(lo, min(hi, round(self.a.seconds * 1000.0 / max(latency_ms, 1e-3)))))

    # ---- parts ----
    def machine(self):
        m = self.results["machine"]
        cpu = "unknown"
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        m["cpu"] = cpu
        m["cores"] = self.cores
        try:
            m["memory_gib"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
        except (ValueError, OSError):
            pass
        m["kernel"] = platform.release()
        m["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        try:
            commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True).stdout.strip()
            m["git_commit"] = commit + (" (+ uncommitted changes)" if dirty else "")
        except OSError:
            m["git_commit"] = "unknown"
        m["load_average_start"] = list(os.getloadavg())
        m["icd"] = "SwiftShader" if self.a.swiftshader else "default (lavapipe when no GPU)"
        try:
            m["ort_version"] = json.load(open(os.path.join(NODE_MODULES, "onnxruntime-node", "package.json")))["version"]
        except (OSError, ValueError, KeyError):
            m["ort_version"] = "unknown"

    def roofline(self):
        log("roofline: FMA fp32/fp16 and copy bandwidth")
        out = os.path.join(self.work, "roofline.json")
        dev = os.path.join(self.work, "device.json")
        cmd = [self.tool("oaaxvk-roofline"), f"--device-json={dev}", f"--benchmark_out={out}",
               "--benchmark_out_format=json", f"--benchmark_min_time={0.2 if self.a.quick else 1.0}"]
        if self.a.quick:
            cmd += ["--fma-iterations=256", "--copy-mib=32"]
        run(cmd, timeout=900, env=self.env)
        with open(dev) as f:
            self.results["machine"]["vulkan_device"] = json.load(f)
        with open(out) as f:
            bm = json.load(f)["benchmarks"]
        r = self.results["roofline"]
        for b in bm:
            name = b["name"].split("/")[0]
            if "GFLOPs" in b:
                key = name + "_gflops"
                r.setdefault(name + "_variants", {})[b["name"]] = b["GFLOPs"]
                r[key] = max(r.get(key, 0.0), b["GFLOPs"])
            if "GBs" in b:
                r[name + "_gbs"] = b["GBs"]  # copy_gbs, copy_texel_gbs, copy_texel_image_gbs, transfer_copy_gbs
            if name == "submit_round_trip" and b.get("time_unit") == "us":
                r["submit_round_trip_us"] = b["real_time"]  # empty submit + fence wait, wall clock
        # The copy roofline is the best compute-shader copy (storage-buffer read,
        # texel-buffer read, texel-buffer read + image store): what a kernel on
        # this device can sustain. vkCmdCopyBuffer stays context only.
        shader_copies = {k[:-4]: v for k, v in r.items()
                         if k.startswith("copy") and k.endswith("_gbs") and k != "copy_gbs_best"}
        if shader_copies:
            best = max(shader_copies, key=shader_copies.get)
            r["copy_variants_gbs"] = shader_copies
            r["copy_ssbo_gbs"] = shader_copies.get("copy")
            r["copy_gbs"] = shader_copies[best]
            r["copy_best"] = best
        log(f"roofline: {r}")

    def device_features(self):
        """What the device exposes for issue 7's device-specific variants
        (fp16 storage, subgroups, cooperative matrix), from vulkaninfo; the
        section of the device the roofline program picked (by name)."""
        feat = {"source": "vulkaninfo"}
        want = self.results["machine"].get("vulkan_device", {}).get("name")
        try:
            txt = run(["vulkaninfo"], timeout=60, env=self.env)
        except (Failure, OSError) as e:
            feat["error"] = f"vulkaninfo: {e}"
            return feat
        sections = re.split(r"^GPU\d+:\s*$", txt, flags=re.M)[1:]
        sec = next((x for x in sections if want and re.search(r"deviceName\s*=\s*" + re.escape(want), x)),
                   sections[0] if sections else "")
        if not sec:
            feat["error"] = "vulkaninfo listed no device"
            return feat

        def flag(name):
            m = re.search(r"^\s*" + name + r"\s*=\s*(true|false)", sec, flags=re.M)
            return None if m is None else m.group(1) == "true"
        feat["storage_buffer_16bit_access"] = flag("storageBuffer16BitAccess")
        feat["shader_float16"] = flag("shaderFloat16")
        m = re.search(r"^\s*subgroupSize\s*=\s*(\d+)", sec, flags=re.M)
        feat["subgroup_size"] = int(m.group(1)) if m else None
        m = re.search(r"subgroupSupportedOperations: count = \d+\n((?:\t\t\S+\n)*)", sec)
        feat["subgroup_operations"] = [o.strip().replace("SUBGROUP_FEATURE_", "").replace("_BIT", "").lower()
                                       for o in m.group(1).splitlines()] if m else []
        feat["cooperative_matrix"] = bool(re.search(r"^\s*VK_KHR_cooperative_matrix\b", sec, flags=re.M))
        # Whether this machine's shader compiler and Vulkan headers can build a
        # cooperative-matrix kernel at all (the cause recorded when none exists).
        src = os.path.join(self.work, "coopmat_check.comp")
        with open(src, "w") as fh:
            fh.write("#version 450\n#extension GL_KHR_cooperative_matrix : require\n"
                     "layout(local_size_x = 32) in;\nvoid main() {}\n")
        p = subprocess.run(["glslangValidator", "-V", "--target-env", "vulkan1.1", "-o", src + ".spv", src],
                           capture_output=True, text=True)
        ver = subprocess.run(["glslangValidator", "--version"], capture_output=True, text=True).stdout
        m = re.search(r"Glslang Version: (\S+)", ver)
        err = next((x.strip() for x in p.stdout.splitlines() if "ERROR" in x), "")
        feat["glslang_cooperative_matrix"] = ("compiles" if p.returncode == 0 else
                                              f"glslang {m.group(1) if m else '?'}: {err}")
        hdr = "/usr/include/vulkan/vulkan_core.h"
        if os.path.exists(hdr):
            m = re.search(r"#define VK_HEADER_VERSION (\d+)", open(hdr).read())
            feat["vulkan_headers"] = f"Vulkan headers 1.3.{m.group(1)}" if m else None
        return feat

    def gemm_probe(self):
        """The GEMM load-path probe (docs/benchmarks.md, "GEMM load-path probe"):
        oaaxvk-roofline --gemm-probe with the documented settings, beside its
        own fma_f32 run. Every variant's % is against the suite's FMA roofline
        (the denominator of every other figure); the probe run's own fma_f32
        best is kept too."""
        g = self.results["gemm_probe"] = {}
        m, n, k = 64, 2048, 256
        reps, min_time = (1, 0.05) if self.a.quick else (3, 0.3)
        g["settings"] = {"m": m, "n": n, "k": k, "fma_iterations": 256, "benchmark_min_time": min_time,
                         "repetitions": reps, "statistic": "median" if reps > 1 else "single run"}
        log(f"gemm probe: {m}x{n}x{k}, {reps} repetition(s)")
        out = os.path.join(self.work, "gemm_probe.json")
        if os.path.exists(out):
            os.remove(out)
        cmd = [self.tool("oaaxvk-roofline"), "--gemm-probe", "--fma-iterations=256", f"--gemm-m={m}",
               f"--gemm-n={n}", f"--gemm-k={k}", "--benchmark_filter=^(fma_f32|gemm_probe)/",
               f"--benchmark_min_time={min_time}", f"--benchmark_out={out}", "--benchmark_out_format=json"]
        if reps > 1:
            cmd += [f"--benchmark_repetitions={reps}", "--benchmark_report_aggregates_only=true"]
        t = time.time()
        try:
            run(cmd, timeout=600, env=self.env)
        except Failure as e:
            g["error"] = str(e)  # a failed variant: the others (if written) are still recorded
            log(f"gemm probe: FAILED {e}")
        g["wall_s"] = time.time() - t
        try:
            with open(out) as f:
                bm = json.load(f)["benchmarks"]
        except (OSError, ValueError, KeyError) as e:
            g.setdefault("error", f"no probe output: {e}")
            return
        # The medians (or the single runs); a failed variant has no aggregate,
        # only its failed repetitions: keep one of those.
        stat, seen = [], set()
        for b in bm:
            name = b.get("run_name", b["name"])
            if (b.get("error_occurred") and name not in seen) or (
                    not b.get("error_occurred") and (b.get("aggregate_name") == "median") == (reps > 1)):
                stat.append(b)
                seen.add(name)
        fma = [b["GFLOPs"] for b in stat if b.get("run_name", b["name"]).startswith("fma_f32/") and "GFLOPs" in b]
        g["probe_fma_f32_gflops"] = max(fma) if fma else None
        peak = self.results["roofline"].get("fma_f32_gflops")
        g["roofline_fma_f32_gflops"] = peak
        # The FMA roofline is the best fp32 FMA rate measured in this run: on a
        # shared machine one measurement can land in a slow moment, and a low
        # denominator would overstate every kernel's and model's %.
        if fma and (peak is None or max(fma) > peak):
            rf = self.results["roofline"]
            rf["fma_f32_gflops_roofline_run"] = peak
            rf["fma_f32_gflops"] = peak = max(fma)
            rf["fma_f32_source"] = "the GEMM probe run's fma_f32 (higher than the roofline run's)"
            log(f"roofline: FMA roofline raised to the probe run's fma_f32, {peak:.1f} GFLOP/s")
        g["variants"] = []
        for b in stat:
            name = b.get("run_name", b["name"]).replace("/manual_time", "")
            if not name.startswith("gemm_probe/"):
                continue
            v = {"name": name.split("/", 1)[1]}
            if b.get("error_occurred"):
                v["error"] = b.get("error_message", "failed")
            elif "GFLOPs" in b:
                scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ms")]
                v["ms"] = b["real_time"] * scale  # manual time: GPU timestamps
                v["gflops"] = b["GFLOPs"]
                v["pct_fma_roofline"] = 100.0 * b["GFLOPs"] / peak if peak else None
                v["pct_probe_fma_f32"] = b.get("pct_fma_roofline")
            g["variants"].append(v)
        log("gemm probe: " + ", ".join(f"{v['name']} {v.get('gflops', 0):.2f}" for v in g["variants"]))

    def kernels(self):
        names = models.QUICK_KERNELS if self.a.quick else list(models.KERNELS)
        if self.a.only:
            names = [n for n in models.KERNELS if n in self.a.only]
        peak, bw = self.results["roofline"].get("fma_f32_gflops"), self.results["roofline"].get("copy_gbs")
        for name in names:
            _, kind, desc = models.KERNELS[name]
            entry = {"name": name, "kind": kind, "description": desc}
            self.results["kernels"].append(entry)
            try:
                d = os.path.join(self.work, "kernels", name)
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, "model.onnx")
                models.make_kernel_model(name, path)
                st = models.analyze(path)
                entry["flops"] = st["flops"]
                io_bytes = self._io_bytes(path)
                entry["bytes"] = io_bytes
                inputs = self.write_inputs(path, None, os.path.join(d, "inputs"))
                conv = self.convert(path, os.path.join(d, "out"))
                entry["dispatches"] = conv["dispatches"]
                probe = self.oaax_run(conv["bundle"], inputs, 1, 1, 0, profile=True)
                lat = probe["latency_ms"]["p50"]
                if lat >= self.a.seconds * 1000 / 2:
                    r, n = probe, 1  # one slow inference is the measurement: more would blow the budget
                    entry.setdefault("notes", []).append(
                        f"one timed iteration: a single inference took {lat / 1000:.1f} s")
                else:
                    n = self.iters(lat, 3, 200)
                    r = self.oaax_run(conv["bundle"], inputs, n, 1, 1, profile=True)
                entry["iterations"] = n
                entry["gpu_us"] = r["gpu_us"]
                entry["latency_ms_p50"] = r["latency_ms"]["p50"]
                s = r["gpu_us"] * 1e-6
                entry["gflops"] = st["flops"] / s * 1e-9 if st["flops"] else None
                entry["gbs"] = io_bytes / s * 1e-9
                if kind == "compute" and peak:
                    entry["pct_roofline"] = 100.0 * entry["gflops"] / peak
                    entry["roofline"] = "fma_f32"
                elif bw:
                    entry["pct_roofline"] = 100.0 * entry["gbs"] / bw
                    entry["roofline"] = "copy"
                if kind != "compute" and lat < 1000:
                    # frames_in_flight on a model where host copies matter: a memory-bound
                    # one-node model (inputs written and outputs read by the host every
                    # inference), depth 1 (one frame slot) vs depth 2 (two), no timestamps.
                    n = self.iters(lat, 10, 200)
                    entry["throughput"] = {str(dep): self.oaax_run(conv["bundle"], inputs, n, dep, 2)["throughput_per_s"]
                                           for dep in (1, 2)}
                    entry["host_copy_bytes"] = io_bytes
                o = self.ort(path, inputs, self.a.seconds / 2, [], min_iter=3)
                entry["ort_latency_ms_p50"] = o["latency_ms"]["p50"]
                entry["ort_gflops"] = st["flops"] / (o["latency_ms"]["p50"] * 1e-3) * 1e-9 if st["flops"] else None
                log(f"kernel {name}: {entry.get('gflops') or 0:.2f} GFLOP/s, {entry['gbs']:.2f} GB/s, "
                    f"{entry.get('pct_roofline', 0):.1f}% of roofline, {entry['dispatches']} dispatch(es)")
            except Failure as e:
                entry["error"] = str(e)
                log(f"kernel {name}: FAILED {e}")

    @staticmethod
    def _io_bytes(path):
        """Compulsory traffic of a one-node model: every input, weight and output once."""
        import onnx
        import numpy as np
        m = onnx.load(path)
        total = 0
        for t in m.graph.initializer:
            total += int(np.prod(t.dims)) * 4
        for vi in list(m.graph.input) + list(m.graph.output):
            if vi.name in {t.name for t in m.graph.initializer}:
                continue
            total += int(np.prod([d.dim_value for d in vi.type.tensor_type.shape.dim])) * 4
        return total

    def model_list(self):
        out = []
        for name, (fname, shape, desc) in OCR_MODELS.items():
            out.append((name, os.path.join(OCR_DIR, fname), {"x": shape}, desc))
        for name, desc in TORCHVISION.items():
            out.append((name, os.path.join(self.work, "models", name + ".onnx"), None, desc))
        # Cheapest first, so a tight budget loses the most expensive model.
        order = ["ppocr_cls", "ppocrv4_rec", "ppocrv4_det", "mobilenet_v2", "resnet50"]
        out.sort(key=lambda m: order.index(m[0]))
        if self.a.quick:
            out = [m for m in out if m[0] == "ppocr_cls"]
        if self.a.only:
            out = [m for m in out if m[0] in self.a.only]
        return out

    def models(self):
        peak = self.results["roofline"].get("fma_f32_gflops")
        todo = self.model_list()
        # Every model's cost of one load + one inference, estimated up front, so
        # that an early model's iterations never take the budget a later model
        # needs for its first figures.
        est_cost = {}
        for name, path, shapes, _ in todo:
            try:
                if os.path.exists(path):
                    e = self.estimate_ms(models.analyze(path, shapes)["flops"])
                    est_cost[name] = 3 * e / 1000 if e else 0.0
            except Exception:  # noqa: BLE001 - the loop below reports a broken model
                est_cost[name] = 0.0
        for idx, (name, path, shapes, desc) in enumerate(todo):
            entry = {"name": name, "description": desc}
            reserve = sum(est_cost.get(m[0], 0.0) for m in todo[idx + 1:])
            self.results["models"].append(entry)
            remaining = self.a.budget - (time.time() - self.t0)
            if remaining < 30:
                entry["error"] = f"skipped: the suite's time budget ({self.a.budget:.0f} s) is spent"
                log(f"model {name}: {entry['error']}")
                continue
            try:
                d = os.path.join(self.work, "models", name)
                os.makedirs(d, exist_ok=True)
                if name in TORCHVISION and not os.path.exists(path):
                    log(f"model {name}: exporting from torchvision (random weights)")
                    t = time.time()
                    models.export_torchvision(name, path)
                    entry["export_s"] = time.time() - t
                if not os.path.exists(path):
                    raise Failure(f"{path} is missing (run scripts/fetch-reference.sh)")
                entry["input_shapes"] = shapes
                st = models.analyze(path, shapes)
                entry.update({k: st[k] for k in ("onnx_nodes", "flops", "intermediate_tensors", "intermediate_bytes",
                                                 "peak_live_bytes", "unknown_tensors")})
                inputs = self.write_inputs(path, shapes, os.path.join(d, "inputs"))
                log(f"model {name}: converting")
                conv = self.convert(path, os.path.join(d, "out"), shapes)
                entry.update({k: conv[k] for k in ("conversion_s", "dispatches", "nodes_after_passes", "arena_bytes",
                                                   "arena_bytes_no_reuse", "weights_bytes", "barriers",
                                                   "barriers_lower_bound")})
                # ORT first: its optimized graph gives the fused node count.
                log(f"model {name}: ONNX Runtime")
                opt = os.path.join(d, "ort_optimized.onnx")
                o = self.ort(path, inputs, self.a.seconds, [2, 4] if self.a.quick else [2, 3, 4], optimized=opt)
                entry["ort"] = o
                try:
                    entry["ort_optimized_nodes"] = models.count_nodes(opt)
                except Exception as e:  # noqa: BLE001 - an unreadable file only loses this figure
                    entry["ort_optimized_nodes"] = None
                    entry.setdefault("notes", []).append(f"ORT optimized graph unreadable: {e}")
                lat_est = self.estimate_ms(entry["flops"])
                if lat_est is None:
                    log(f"model {name}: oaax-vulkan probe")
                    lat_est = self.oaax_run(conv["bundle"], inputs, 1, 1, 0, timeout=1800)["latency_ms"]["p50"]
                slow = lat_est > 2000
                left = self.a.budget - (time.time() - self.t0)
                # A run costs the load (pipelines + one warm-up inference) plus n inferences.
                n1 = self.iters(lat_est, 3, 500)
                while n1 > 1 and (n1 + 2) * lat_est / 1000 > left - reserve:
                    n1 -= 1
                if (n1 + 2) * lat_est / 1000 > left:
                    raise Failure(f"skipped: about {3 * lat_est / 1000:.0f} s needed for one load and one inference "
                                  f"(estimated from the kernels' GFLOP/s), {left:.0f} s of budget left")
                if n1 < 3:
                    entry.setdefault("notes", []).append(f"depth 1 with {n1} iteration(s) only: the time budget")
                if not slow:
                    log(f"model {name}: oaax-vulkan profile=1 (1 inference)")
                    probe = self.oaax_run(conv["bundle"], inputs, 1, 1, 0, profile=True, timeout=1800)
                    entry["gpu_ms_in_dispatches"] = probe["gpu_us"] / 1000.0 if probe.get("gpu_us") else None
                log(f"model {name}: depth 1, {n1} iterations (estimate {lat_est / 1000:.1f} s each)")
                # Slow models: the depth-1 run is also the profiled one (one load less).
                r1 = self.oaax_run(conv["bundle"], inputs, n1, 1, 0 if slow else 1, profile=slow, timeout=3600)
                if slow:
                    entry["gpu_ms_in_dispatches"] = r1["gpu_us"] / 1000.0 if r1.get("gpu_us") else None
                    entry.setdefault("notes", []).append("depth-1 latency measured with profile=1 (timestamps on)")
                entry["load_ms"] = r1["load_ms"]
                entry["latency_ms"] = r1["latency_ms"]
                entry["iterations_depth1"] = n1
                entry["host_overhead_ms_mean"] = r1["host_overhead_ms"]["mean"]
                entry["throughput"] = {"1": r1["throughput_per_s"]}
                entry["_bundle"], entry["_inputs"] = conv["bundle"], inputs
                self.model_bundles[name] = (conv["bundle"], inputs)
                p50 = entry["latency_ms"]["p50"]
                entry["speedup_vs_ort_latency"] = o["latency_ms"]["p50"] / p50
                if entry["flops"] and peak:
                    entry["gflops"] = entry["flops"] / (p50 * 1e-3) * 1e-9
                    entry["pct_roofline"] = 100.0 * entry["gflops"] / peak
                log(f"model {name}: p50 {p50:.1f} ms (ORT {o['latency_ms']['p50']:.1f} ms), "
                    f"{entry['dispatches']} dispatches / {entry['onnx_nodes']} ONNX nodes")
            except Failure as e:
                entry["error"] = str(e)
                log(f"model {name}: FAILED {e}")
        self.model_throughput()

    def model_throughput(self):
        """Phase 2: throughput at depth 2-4, after every model has its depth-1
        figures; fastest model first, depth 2 before 4 before 3, each only if
        it fits in what is left of the budget."""
        done = sorted((e for e in self.results["models"] if "_bundle" in e), key=lambda e: e["latency_ms"]["p50"])
        for dep in (2, 4, 3):
            for e in done:
                lat = e["latency_ms"]["p50"]
                if dep == 3 and (self.a.quick or lat > 2000):
                    continue
                left = self.a.budget - (time.time() - self.t0)
                # Slow models: depth + 2 inferences (the pipeline fills and drains once).
                n = dep + 2 if lat > 2000 else self.iters(lat, 2 * dep, 1000)
                # Load = pipelines + one warm-up inference; in flight, at best 1.5x faster.
                need = (n / (1.0 if lat > 2000 else 1.5) + 2) * lat / 1000
                if need > left - 20:
                    e.setdefault("notes", []).append(
                        f"depth {dep} not measured: ~{need:.0f} s needed, {left:.0f} s of budget left")
                    continue
                log(f"model {e['name']}: depth {dep}, {n} iterations")
                try:
                    r = self.oaax_run(e["_bundle"], e["_inputs"], n, dep, 0, timeout=3600)
                    e["throughput"][str(dep)] = r["throughput_per_s"]
                except Failure as err:
                    e.setdefault("notes", []).append(f"depth {dep} failed: {err}")
        for e in self.results["models"]:
            e.pop("_bundle", None)
            e.pop("_inputs", None)

    def host_overhead(self):
        h = self.results["host_overhead"]
        try:
            d = os.path.join(self.work, "relu16")
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "model.onnx")
            models.make_relu16(path)
            inputs = self.write_inputs(path, None, os.path.join(d, "inputs"))
            conv = self.convert(path, os.path.join(d, "out"))
            n = 300 if self.a.quick else 3000
            r = self.oaax_run(conv["bundle"], inputs, n, 1, 50)
            h["iterations"] = n
            h["oaax_round_trip_us_p50"] = r["latency_ms"]["p50"] * 1000
            h["oaax_round_trip_us_mean"] = r["latency_ms"]["mean"] * 1000
            h["oaax_host_us_mean"] = r["host_overhead_ms"]["mean"] * 1000
            o = self.ort(path, inputs, 1.0 if self.a.quick else 3.0, [], min_iter=n)
            h["ort_run_us_p50"] = o["latency_ms"]["p50"] * 1000
            h["ort_run_us_mean"] = o["latency_ms"]["mean"] * 1000
            h["ratio_p50"] = h["oaax_round_trip_us_p50"] / h["ort_run_us_p50"]
            log(f"host overhead: oaax {h['oaax_round_trip_us_p50']:.1f} us, ORT {h['ort_run_us_p50']:.1f} us")
        except Failure as e:
            h["error"] = str(e)
            log(f"host overhead: FAILED {e}")

    @staticmethod
    def _max_rel_diff(a_dir, b_dir):
        """max |a - b| / max |a| per float32 output of two `oaax-run --outputs`
        directories (the largest over the outputs): the difference relative
        to the output's scale, which stays meaningful for outputs far from 1
        (MobileNetV2 with random weights gives logits near 1e-9)."""
        import numpy as np
        a_man = {o["name"]: o for o in json.load(open(os.path.join(a_dir, "manifest.json")))}
        worst = 0.0
        for o in json.load(open(os.path.join(b_dir, "manifest.json"))):
            x = np.fromfile(os.path.join(a_dir, a_man[o["name"]]["file"]), dtype=np.float32)
            y = np.fromfile(os.path.join(b_dir, o["file"]), dtype=np.float32)
            scale = float(np.max(np.abs(x))) if x.size else 0.0
            if scale > 0:
                worst = max(worst, float(np.max(np.abs(x - y))) / scale)
        return worst

    def device_variants(self):
        """Issue 7's device-specific variants (docs/bundle-format.md, feature
        device_variants), table by table in one run: every kernel of
        models.VARIANT_KERNELS and MobileNetV2 under kernel_variant = default
        (portable kernels), gpu with fp16_weights=1 (fp16-weight GEMMs and
        subgroup reductions where the device has the capability) and cpu (the CPU-class table): time in
        dispatches, the table the runtime reports, and the largest relative
        output difference to the default table (the fp16 weights' rounding)."""
        dv = self.results["device_variants"]
        tables = ("default", "gpu", "cpu")
        names = [n for n in models.VARIANT_KERNELS if not self.a.only or n in self.a.only]
        if self.a.quick:
            names = names[:1]
        todo = [(n, os.path.join(self.work, "kernels", n), None) for n in names]
        if not self.a.quick and (not self.a.only or "mobilenet_v2" in self.a.only):
            m = self.model_bundles.get("mobilenet_v2")
            if m:
                todo.append(("mobilenet_v2", os.path.dirname(m[0]), m))
        for name, d, model in todo:
            entry = {"name": name}
            dv.setdefault("rows", []).append(entry)
            try:
                if model:
                    bundle, inputs = model
                else:
                    path = os.path.join(d, "model.onnx")
                    bundle = os.path.join(d, "out", "model.oinf")
                    inputs = os.path.join(d, "inputs")
                    if not os.path.exists(bundle):
                        os.makedirs(d, exist_ok=True)
                        models.make_kernel_model(name, path)
                        inputs = self.write_inputs(path, None, inputs)
                        self.convert(path, os.path.join(d, "out"))
                for t in tables:
                    if self.a.budget - (time.time() - self.t0) < 20:
                        raise Failure(f"skipped: the suite's time budget ({self.a.budget:.0f} s) is spent")
                    out = os.path.join(d, "variant-" + t)
                    r = self.oaax_run(bundle, inputs, 1, 1, 0, profile=True, kernel_variant=t, outputs=out,
                                      timeout=1800)
                    lat = r["latency_ms"]["p50"]
                    if not model and lat < 2000:
                        n = self.iters(lat, 3, 50)
                        r2 = self.oaax_run(bundle, inputs, n, 1, 1, profile=True, kernel_variant=t)
                        r["gpu_us"], n1 = r2["gpu_us"], n
                    else:
                        n1 = 1
                    entry[t] = {"gpu_us": r["gpu_us"], "iterations": n1, "table": r.get("variant_table"),
                                "note": r.get("variant_note", "")}
                    if t != "default":
                        entry[t]["max_rel_diff_vs_default"] = self._max_rel_diff(os.path.join(d, "variant-default"),
                                                                                 out)
                base = entry["default"]["gpu_us"]
                for t in ("gpu", "cpu"):
                    if base and entry[t]["gpu_us"]:
                        entry[t]["speedup_vs_default"] = base / entry[t]["gpu_us"]
                log(f"device variants {name}: " + ", ".join(
                    f"{t} {entry[t]['gpu_us'] / 1000:.2f} ms" for t in tables if entry[t].get("gpu_us")))
            except (Failure, OSError, KeyError, ValueError) as e:
                entry["error"] = str(e)
                log(f"device variants {name}: FAILED {e}")

    LOAD_RE = re.compile(r"; ([\d.]+) ms: weights ([\d.]+), pipelines ([\d.]+), frame slots and recording "
                         r"([\d.]+), warm-up ([\d.]+)")
    CREATED_RE = re.compile(r"(\d+) pipelines created in ([\d.]+) ms on (\d+) thread")

    def load_times(self):
        """Load time (docs/runtime.md, "Load time and the pipeline cache"): per
        measured model, oaax-run's runtime_model_loading in a new process with
        empty caches (a fresh XDG_CACHE_HOME: no pipeline cache file and no Mesa
        shader cache), then in another process with the caches the first load
        wrote; beside ONNX Runtime's InferenceSession.create from the model's
        ORT run. Not bound by --budget (cold loads compile every shader) unless
        the suite is 10 minutes past it."""
        for e in self.results["models"]:
            name = e["name"]
            if name not in self.model_bundles:
                continue
            entry = {"name": name, "ort_session_ms": e.get("ort", {}).get("load_ms")}
            self.results["load_time"].append(entry)
            if time.time() - self.t0 > self.a.budget + 600:
                entry["error"] = "skipped: the suite ran 10 minutes past its time budget"
                continue
            bundle, inputs = self.model_bundles[name]
            cache = tempfile.mkdtemp(prefix=f"load-{name}-", dir=self.work)
            try:
                for k in ("first", "second"):
                    logf = os.path.join(cache, f"{k}.log")
                    log(f"load time {name}: {k} load")
                    cmd = [self.tool("oaax-run"), "--model", bundle, "--inputs", inputs, "--iterations", "1",
                           "--depth", "1", "--warmup", "0", "--json", "--quiet", "--arg", "frames_in_flight=1",
                           "--arg", "log_level=2", "--arg", f"log_file={logf}"]
                    r = json.loads(run(cmd, timeout=3600, env=dict(self.env, XDG_CACHE_HOME=cache)))
                    entry[f"{k}_ms"] = r["load_ms"]
                    with open(logf) as f:
                        text = f.read()
                    m = self.LOAD_RE.search(text)
                    if m:
                        entry[f"{k}_parts_ms"] = dict(zip(("total", "weights", "pipelines", "slots", "warmup"),
                                                          map(float, m.groups())))
                    m = self.CREATED_RE.search(text)
                    if m:
                        entry["pipelines"], entry["threads"] = int(m.group(1)), int(m.group(3))
                    entry["pipeline_cache_read"] = entry.get("pipeline_cache_read", False) or (
                        k == "second" and "': read " in text)
                if entry.get("ort_session_ms"):
                    entry["second_vs_ort"] = entry["second_ms"] / entry["ort_session_ms"]
                log(f"load time {name}: first {entry['first_ms']:.0f} ms, second {entry['second_ms']:.0f} ms, "
                    f"ORT session {_ms(entry.get('ort_session_ms'))}")
            except (Failure, OSError, KeyError, ValueError) as err:
                entry["error"] = str(err)
                log(f"load time {name}: FAILED {err}")
            finally:
                shutil.rmtree(cache, ignore_errors=True)

    def go(self):
        self.machine()
        self.roofline()
        self.results["machine"]["device_features"] = self.device_features()
        if not self.a.only or "gemm_probe" in self.a.only:
            self.gemm_probe()
        else:
            self.results["gemm_probe"] = {"skipped": "--only without gemm_probe"}
        self.kernels()
        if not self.a.only or "host_overhead" in self.a.only:
            self.host_overhead()
        self.models()
        self.load_times()
        self.device_variants()
        self.results["machine"]["load_average_end"] = list(os.getloadavg())
        self.results["suite"]["wall_s"] = time.time() - self.t0
        import report
        suffix = "-swiftshader" if self.a.swiftshader else ""
        report.write_all(self.results, self.a.out_dir, suffix)
        log(f"done in {self.results['suite']['wall_s']:.0f} s: {self.a.out_dir}/RESULTS{suffix}.md, "
            f"results{suffix}.json, roofline{suffix}.png")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True, help="build directory with the toolchain, runtime, oaax-run, roofline")
    p.add_argument("--out-dir", default=None, help="where RESULTS.md, results.json, roofline.png go (default bench/; "
                   "with --quick or --only: BUILD/bench/dev-results, so the committed results stay)")
    p.add_argument("--quick", action="store_true", help="small subset, short measurements (< 3 minutes)")
    p.add_argument("--swiftshader", action="store_true", help="run on SwiftShader instead of the default ICD")
    p.add_argument("--seconds", type=float, default=None, help="measuring time per figure (default 10, quick 1)")
    p.add_argument("--budget", type=float, default=None, help="wall-time budget in s (default 1380, quick 170)")
    p.add_argument("--only", default="", help="development: comma-separated kernel / model names (and "
                   "'host_overhead', 'gemm_probe') to run; the roofline always runs")
    a = p.parse_args()
    a.only = set(x for x in a.only.split(",") if x)
    if a.out_dir is None:
        a.out_dir = os.path.join(os.path.abspath(a.build_dir), "bench", "dev-results") if (a.quick or a.only) else HERE
    if a.seconds is None:
        a.seconds = 1.0 if a.quick else 10.0
    if a.budget is None:
        a.budget = 170.0 if a.quick else 1380.0
    Suite(a).go()


if __name__ == "__main__":
    main()
