"""The convolution-tile probe of the GPU device check (bench/gpu_check.py step
`probe`, docs/gpu-check.md): prices what the GPU-class convolution tile
`conv2d_gemm_gpu` adds to the GEMM tile `gemm_gpu` they share
(shaders/gpu_tile.glsl), one suspect at a time, on ResNet-50's shapes.

Each case is one node of a small ONNX model built here with onnx.helper (a
few cases per model, so a model is one conversion and one run per kernel
table). The models are converted with config.json "gpu_conv_tiles": "all"
(every Conv gets its GPU tile, whatever its grid) and "fp16_weights": false,
and run with the runtime's timestamp profile (profile=1) under three kernel
tables on the same bundle and inputs:
  gpu       kernel_variant=gpu: conv2d_gemm_gpu / gemm_gpu (fp32)
  default   kernel_variant=default: the portable conv2d_gemm / gemm (64 x 64)
  gpu_fp16  kernel_variant=gpu precision=fp16: the fp16 forms, on cooperative
            matrices where the device has them and their load-time check keeps them
Per case and table: the node's dispatch time (median over the profiled
frames after the first), its FLOPs and TFLOP/s, its grid, and the conversion
log's text for the node (the GPU tile and vec4 loads). The gpu and gpu_fp16
outputs are compared with the default table's (relative L2), so a probe that
times a wrong answer says so.

The cases pair every Conv with a MatMul of the same M, N and K (its "GEMM
twin", no im2col and the GEMM epilogue), and vary one thing at a time
(bias, Relu, the fused residual Add, scalar X loads, the reduction depth,
3 x 3 im2col, a small grid); bench/GPU-NOTES.md lists which line answers
which hypothesis. Shapes shrink with small=True (--local / --quick) so the
step stays a few seconds on lavapipe.

Only onnx.helper / numpy_helper and numpy are used: the device's onnx (1.23)
and this machine's (1.12) both have them.
"""
import json
import os
import re
import statistics

# The runtime's per-dispatch profile line (runtime/profiling.cpp): frame,
# dispatch index, µs, kernel, groups and the node ("op") it belongs to.
DISPATCH_RE = re.compile(r"profile frame #(\d+) dispatch (\d+): ([\d.]+) us kernel '([^']+)' \(#\d+\) "
                         r"groups \((\d+), (\d+), (\d+)\) op '([^']*)'")

VARIANTS = {
    "gpu": ["kernel_variant=gpu"],
    "default": ["kernel_variant=default"],
    "gpu_fp16": ["kernel_variant=gpu", "precision=fp16"],
}
# Relative L2 of a table's outputs against the default table's: fp32 tiles
# sum in the same order (a compiler may fuse differently); the fp16 forms
# round both operands to binary16 (2^-11 each), so their error is of that order.
AGREE = {"gpu": 1e-5, "gpu_fp16": 1e-2}


def conv_case(name, what, x, m, k=1, pad=0, bias=False, act=None, residual=False, twin=None, xname=None):
    """A Conv of input shape x ([N, C, H, W]) to m channels, k x k, stride 1,
    `pad` on every side; optional bias, fused residual Add (a second input
    of the output's shape) and Relu. xname: its input's name (Convs of one
    model may share one input), <name>_x by default."""
    n, c, h, w = x
    oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
    return {"name": name, "what": what, "op": "conv", "x": list(x), "xname": xname or name + "_x", "m": m, "k": k,
            "pad": pad, "bias": bias, "act": act, "residual": residual, "twin": twin, "y": [n, m, oh, ow],
            "gemm": [m, n * oh * ow, c * k * k]}


def matmul_case(name, what, a, b, a_const):
    """MatMul a x b (shapes; the constant operand is the weights): A constant
    ([M, K]) times an input B, or an input A times a constant B."""
    m, k = a[-2], a[-1]
    nn = b[-1]
    batch = b[0] if len(b) == 3 else 1
    return {"name": name, "what": what, "op": "matmul", "a": list(a), "b": list(b), "a_const": a_const,
            "y": ([batch] if len(b) == 3 else []) + [m, nn], "gemm": [m, nn * batch, k]}


def flops(case):
    """2 M N K: multiply-adds of the implicit (or explicit) GEMM, counted as two FLOPs."""
    m, n, k = case["gemm"]
    return 2 * m * n * k


def groups(small):
    """[(model name, [cases])]: ResNet-50's shapes at batch 32 (small: batch 1,
    14 x 14, fewer channels, a few MFLOP per case for lavapipe)."""
    b, s = (1, 14) if small else (32, 56)
    hw = b * s * s
    # Stage-1 1x1 Conv 64 -> 256 and its epilogue, with the same GEMM three ways.
    pw = [
        conv_case("pw", f"1x1 Conv 64→256 on [{b},64,{s},{s}]", [b, 64, s, s], 256, twin="mm_wx",
                  xname="pw_x"),
        conv_case("pw_bias", "the same with bias", [b, 64, s, s], 256, bias=True, twin="mm_wx", xname="pw_x"),
        conv_case("pw_relu", "with bias + Relu", [b, 64, s, s], 256, bias=True, act="relu", twin="mm_wx",
                  xname="pw_x"),
        conv_case("pw_res", "with bias + residual Add + Relu", [b, 64, s, s], 256, bias=True, act="relu",
                  residual=True, twin="mm_wx", xname="pw_x"),
        conv_case("pw_odd", f"1x1 Conv 64→256 on [{b},64,{s - 1},{s - 1}] (H·W odd: scalar X loads)",
                  [b, 64, s - 1, s - 1], 256, twin="mm_wx"),
        matmul_case("mm_xw", f"MatMul X[{hw},64] × W[64,256] (pixels as rows)", [hw, 64], [64, 256], False),
        matmul_case("mm_wx", f"MatMul W[256,64] × X[64,{hw}] (the Conv's roles)", [256, 64], [64, hw], True),
        matmul_case("bmm_wx", f"MatMul W[256,64] × X[{b},64,{s * s}] (the Conv's output layout)", [256, 64],
                    [b, 64, s * s], True),
    ]
    # A long reduction: stage 3's 1x1 Conv 1024 -> 256 (vec4 X) beside the GEMM.
    c3, s3 = (256, 8) if small else (1024, 14)
    deep = [
        conv_case("pw_deep", f"1x1 Conv {c3}→256 on [{b},{c3},{s3},{s3}] (K {c3})", [b, c3, s3, s3], 256,
                  bias=True, twin="mm_deep"),
        matmul_case("mm_deep", f"MatMul W[256,{c3}] × X[{c3},{b * s3 * s3}]", [256, c3], [c3, b * s3 * s3], True),
    ]
    # 3x3 Convs (im2col, scalar X loads) and the same GEMMs without im2col.
    w3, w5 = (32, 64) if small else (256, 512)
    k3, k5 = 9 * w3, 9 * w5
    im2col = [
        conv_case("c3", f"3x3 Conv {w3}→{w3} on [{b},{w3},14,14]", [b, w3, 14, 14], w3, k=3, pad=1, bias=True,
                  act="relu", twin="mm_c3"),
        matmul_case("mm_c3", f"MatMul W[{w3},{k3}] × X[{k3},{b * 196}]", [w3, k3], [k3, b * 196], True),
        conv_case("c3_b1", f"3x3 Conv {w5}→{w5} on [1,{w5},7,7] (batch 1: a small grid)", [1, w5, 7, 7], w5, k=3,
                  pad=1, bias=True, act="relu", twin="mm_c3_b1"),
        matmul_case("mm_c3_b1", f"MatMul W[{w5},{k5}] × X[{k5},49]", [w5, k5], [k5, 49], True),
    ]
    return [("pointwise", pw), ("deep", deep), ("im2col", im2col)]


def build_model(cases, path, seed=0):
    """Writes the ONNX model of `cases` (opset 13, IR version 8, which the
    toolchain's ONNX reads); returns its inputs [(name, dtype, shape)]."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    inits, nodes, ins, outs = [], [], [], []

    def const(name, shape, scale):
        inits.append(numpy_helper.from_array((scale * rng.standard_normal(shape)).astype(np.float32), name))
        return name

    def inp(name, shape):
        if all(n != name for n, _, _ in ins):
            ins.append((name, "float32", list(shape)))
        return name

    for c in cases:
        n = c["name"]
        y = "y_" + n
        if c["op"] == "conv":
            kd = c["x"][1] * c["k"] * c["k"]
            args = [inp(c["xname"], c["x"]), const(n + "_w", [c["m"], c["x"][1], c["k"], c["k"]], kd ** -0.5)]
            if c["bias"]:
                args.append(const(n + "_b", [c["m"]], 1.0))
            last = n + "_c" if (c["residual"] or c["act"]) else y
            nodes.append(helper.make_node("Conv", args, [last], name=n, kernel_shape=[c["k"], c["k"]],
                                          pads=[c["pad"]] * 4))
            if c["residual"]:
                out = n + "_a" if c["act"] else y
                nodes.append(helper.make_node("Add", [last, inp(n + "_r", c["y"])], [out], name=n + "_add"))
                last = out
            if c["act"] == "relu":
                nodes.append(helper.make_node("Relu", [last], [y], name=n + "_relu"))
        else:
            k = c["a"][-1]
            a = const(n + "_a", c["a"], k ** -0.5) if c["a_const"] else inp(n + "_a", c["a"])
            b = inp(n + "_b", c["b"]) if c["a_const"] else const(n + "_b", c["b"], k ** -0.5)
            nodes.append(helper.make_node("MatMul", [a, b], [y], name=n))
        outs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, c["y"]))
    graph = helper.make_graph(nodes, "conv_probe",
                              [helper.make_tensor_value_info(nm, TensorProto.FLOAT, s) for nm, _, s in ins],
                              outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return ins


def dispatch_times(log_path):
    """{frame: [(dispatch, µs, kernel, [gx, gy, gz], op)]} from a profile=1 log."""
    frames = {}
    with open(log_path) as f:
        for line in f:
            m = DISPATCH_RE.search(line)
            if m:
                frames.setdefault(int(m.group(1)), []).append(
                    (int(m.group(2)), float(m.group(3)), m.group(4), [int(m.group(k)) for k in (5, 6, 7)],
                     m.group(8)))
    return frames


def node_times(frames, node):
    """The node's time per frame (its dispatches summed), median over the
    frames after the first (which pays first-use costs), its kernels and its
    largest dispatch's groups; None when no dispatch names the node."""
    per, kernels, grid, best = [], [], None, -1.0
    for fr in sorted(frames)[1:] if len(frames) > 1 else sorted(frames):
        mine = [d for d in frames[fr] if d[4] == node]
        if not mine:
            continue
        per.append(sum(d[1] for d in mine))
        for d in mine:
            if d[2] not in kernels:
                kernels.append(d[2])
            if d[1] > best:
                best, grid = d[1], d[3]
    if not per:
        return None
    return {"us": round(statistics.median(per), 1), "frames": len(per), "kernels": kernels, "groups": grid}


def rel_l2(ref_dir, got_dir):
    """{output name: relative L2 of got against ref} (manifest directories)."""
    import numpy as np

    def load(d):
        return {e["name"]: (os.path.join(d, e["file"]), e["dtype"])
                for e in json.load(open(os.path.join(d, "manifest.json")))}
    ref, got = load(ref_dir), load(got_dir)
    out = {}
    for name, (path, dt) in ref.items():
        if name not in got:
            out[name] = None
            continue
        r = np.fromfile(path, dtype=dt).astype(np.float64)
        g = np.fromfile(got[name][0], dtype=got[name][1]).astype(np.float64)
        if r.shape != g.shape or not np.all(np.isfinite(g)):
            out[name] = float("inf")
            continue
        out[name] = float(np.linalg.norm(g - r) / max(np.linalg.norm(r), 1e-30))
    return out


def run_probe(check, small, iterations, start_within_s=45.0):
    """The probe step on `check` (a gpu_check.Check: its convert, write_inputs,
    oaax_run, budget and work directory). Returns the report's "probe" entry;
    raises nothing for a failing model (its error is recorded). A model
    starts only within start_within_s of the step's start (and with 10 s of
    the run's budget left), which bounds the step to about a minute; the
    models come in order of importance."""
    import time
    res = {"small": small, "iterations": iterations, "cases": [], "models": []}
    start = time.time()
    for gname, cases in groups(small):
        g = {"name": gname, "variants": {}}
        t_model = time.time()
        res["models"].append(g)
        if not check.budget.allows(10):
            g["error"] = "time budget"
            check.skip(f"probe {gname}", 10)
            continue
        if t_model - start > start_within_s:
            g["error"] = "time budget"
            check.r["skipped"].append(f"probe {gname}: started only within {start_within_s:.0f} s of the probe's "
                                      f"start, {t_model - start:.0f} s had passed")
            continue
        gdir = os.path.join(check.work, "probe", gname)
        os.makedirs(gdir, exist_ok=True)
        rows = {c["name"]: {"name": c["name"], "what": c["what"], "model": gname, "op": c["op"],
                            "gemm_mnk": c["gemm"], "gflop": round(flops(c) / 1e9, 4), "twin": c.get("twin"),
                            "variants": {}, "agrees": {}} for c in cases}
        res["cases"] += list(rows.values())
        try:
            onnx_path = os.path.join(gdir, "model.onnx")
            inputs = build_model(cases, onnx_path)
            in_dir = check.write_inputs(inputs, os.path.join(gdir, "inputs"), data="normal")
            bdir = os.path.join(gdir, "bundle")
            info = check.convert(onnx_path, bdir, inputs, fp16_weights=False,
                                 extra_config={"gpu_conv_tiles": "all"})
            g["convert_s"] = info.get("convert_s")
            bundle = os.path.join(bdir, "model.oinf")
            selected = check.selected.get(bundle, {})
            for c in cases:
                rows[c["name"]]["selected"] = selected.get(c["name"])
            g["pipeline_stats"] = pipeline_stats(check, bundle, rows)
            for v, extra in VARIANTS.items():
                if not check.budget.allows(5):
                    g["variants"][v] = {"error": "time budget"}
                    check.skip(f"probe {gname} {v}", 5)
                    continue
                logf = os.path.join(gdir, f"{v}.log")
                out_dir = os.path.join(gdir, f"out-{v}")
                if os.path.exists(logf):  # the runtime appends to its log file
                    os.remove(logf)
                t0 = time.time()
                try:
                    check.oaax_run(bundle, in_dir, iterations, 1, 1, out_dir=out_dir,
                                   extra=extra + ["profile=1", "log_level=2", f"log_file={logf}"])
                except Exception as e:  # noqa: BLE001 - one table's failure is recorded, the others run
                    g["variants"][v] = {"error": str(e)[:300]}
                    continue
                text = open(logf).read()
                gv = g["variants"][v] = {"run_s": round(time.time() - t0, 2)}
                m = re.search(r"running the (\w+) kernel variants on '([^']*)'(.*)$", text, flags=re.M)
                gv["table"] = (m.group(1) + (" " + m.group(3).strip() if m.group(3).strip() else "")) if m else None
                m = re.search(r"precision fp16: (.*)$", text, flags=re.M)
                gv["precision"] = m.group(1).strip() if m else None
                gv["matrix_check"] = {k: "kept" for k in re.findall(
                    r"cooperative-matrix kernel '([^']+)' passed its load-time check", text)}
                for k, why in re.findall(r"dropped cooperative-matrix kernel '([^']+)' \(load-time check[^)]*\): (.*)$",
                                         text, flags=re.M):
                    gv["matrix_check"][k] = "dropped: " + why.strip()[:200]
                frames = dispatch_times(logf)
                for c in cases:
                    t = node_times(frames, c["name"])
                    row = rows[c["name"]]
                    if t is None:
                        row["variants"][v] = {"error": "no profiled dispatch names this node"}
                        continue
                    t["tflops"] = float(f"{flops(c) / (t['us'] * 1e-6) / 1e12:.4g}") if t["us"] > 0 else None
                    row["variants"][v] = t
            ref = os.path.join(gdir, "out-default")
            if os.path.exists(os.path.join(ref, "manifest.json")):
                for v in AGREE:
                    got = os.path.join(gdir, f"out-{v}")
                    if not os.path.exists(os.path.join(got, "manifest.json")):
                        continue
                    for name, e in rel_l2(ref, got).items():
                        row = rows.get(name[2:]) if name.startswith("y_") else None
                        if row is not None:
                            row["agrees"][v] = e
        except Exception as e:  # noqa: BLE001 - recorded per model; the probe goes on
            g["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        g["seconds"] = round(time.time() - t_model, 1)
    res["seconds"] = round(time.time() - start, 1)
    return res


def pipeline_stats(check, bundle, rows):
    """The driver's statistics of each case's pipelines (oaaxvk-pipeline-stats:
    registers, spills, ... under the driver's names) into rows[case]["stats"]
    ({table: {"kernel", "statistics"}}); returns how it went: "ok",
    "unavailable: why" (a device without VK_KHR_pipeline_executable_properties,
    a kit without the tool) or "failed: why" (the tool's error, which errors()
    counts)."""
    exe = os.path.join(check.bin, "oaaxvk-pipeline-stats")
    if not os.path.exists(exe):
        return "unavailable: oaaxvk-pipeline-stats is not in the kit"
    import subprocess
    try:
        p = subprocess.run([exe, bundle], capture_output=True, text=True, timeout=max(5, min(60, check.budget.left())),
                           env=check.env)
    except subprocess.TimeoutExpired:
        return "failed: oaaxvk-pipeline-stats timed out"
    try:
        out = json.loads(p.stdout)
    except ValueError:
        return f"failed: oaaxvk-pipeline-stats exit {p.returncode}: {(p.stderr or p.stdout).strip()[-200:]}"
    if p.returncode == 77:
        return "unavailable: " + str(out.get("error"))
    if p.returncode != 0:
        return f"failed: oaaxvk-pipeline-stats exit {p.returncode}: {p.stderr.strip()[-200:]}"
    for pl in out.get("pipelines", []):
        exes = pl.get("executables") or []
        for op in pl.get("ops", []):
            if op in rows and exes:
                rows[op].setdefault("stats", {})[pl["table"]] = {"kernel": pl["kernel"],
                                                                 "statistics": exes[0].get("statistics", {})}
    return "ok"


def disagreements(res):
    """["case table: rel. L2 x > limit", ...]: outputs of the gpu / gpu_fp16
    tables that do not match the default table's."""
    bad = []
    for c in res.get("cases", []):
        for v, e in c.get("agrees", {}).items():
            if e is None or not e <= AGREE[v]:
                bad.append(f"{c['name']} {v}: rel. L2 {e} against the default table (limit {AGREE[v]:g})")
    return bad


def errors(res):
    """Failures of the probe's models and tables (not the time budget's skips)."""
    out = []
    for g in res.get("models", []):
        if g.get("error") and g["error"] != "time budget":
            out.append(f"probe {g['name']}: {g['error']}")
        for v, x in g.get("variants", {}).items():
            if x.get("error") and x["error"] != "time budget":
                out.append(f"probe {g['name']} {v}: {x['error']}")
        if str(g.get("pipeline_stats", "")).startswith("failed"):
            out.append(f"probe {g['name']} pipeline statistics: {g['pipeline_stats']}")
    for c in res.get("cases", []):
        for v, x in c.get("variants", {}).items():
            if x.get("error"):
                out.append(f"probe {c['name']} {v}: {x['error']}")
    return out


def key_figures(res):
    """The figures bench/GPU-NOTES.md's questions are read from, one line
    each ("—" where a case did not run): the Conv-over-twin ratios, the
    epilogue steps, scalar X, the shape, the tensor-core form, equal tiles."""
    by = {c["name"]: c for c in res.get("cases", [])}

    def t(name, table="gpu", key="tflops"):
        return by.get(name, {}).get("variants", {}).get(table, {}).get(key)

    def rate(name, table="gpu"):
        x = t(name, table)
        return "—" if x is None else f"{x:.3g}"

    def twin(name, table="gpu"):
        c = by.get(name, {})
        a, b = t(name, table), t(c.get("twin") or "", table)
        return "—" if not a or not b else f"{b / a:.2f}"

    def step(name):
        a, b = t("pw", key="us"), t(name, key="us")
        return "—" if a is None or b is None else f"{b - a:+.0f} µs"

    k_deep = by.get("pw_deep", {}).get("gemm_mnk", [0, 0, "?"])[2]
    return [
        f"Conv ÷ twin (`gpu`): `pw` (K 64) {twin('pw')}, `pw_deep` (K {k_deep}) {twin('pw_deep')}, `c3` (im2col) "
        f"{twin('c3')}, `c3_b1` {twin('c3_b1')} (questions 1, 3, 4, 5)",
        f"Epilogue, each over `pw` (`gpu`): bias {step('pw_bias')}, bias + Relu {step('pw_relu')}, bias + residual "
        f"+ Relu {step('pw_res')} (question 2)",
        f"Scalar X: `pw_odd` {rate('pw_odd')} against `pw` {rate('pw')} TFLOP/s (question 4)",
        f"The shape in `gemm_gpu`: `mm_wx` {rate('mm_wx')}, `mm_xw` {rate('mm_xw')}, `bmm_wx` {rate('bmm_wx')} "
        f"TFLOP/s (question 6)",
        f"fp16 / tensor cores: `pw` {rate('pw', 'gpu_fp16')} against `mm_wx` {rate('mm_wx', 'gpu_fp16')}, `c3` "
        f"{rate('c3', 'gpu_fp16')} against `mm_c3` {rate('mm_c3', 'gpu_fp16')} TFLOP/s (question 7)",
        f"Equal tiles (`gpu` against `default`): `pw_deep` {rate('pw_deep')} / {rate('pw_deep', 'default')}, `c3` "
        f"{rate('c3')} / {rate('c3', 'default')} TFLOP/s",
    ]


def _cell(t):
    if not t:
        return "—"
    if "error" in t:
        return "error: " + t["error"][:80]
    k = "/".join(t["kernels"])
    grid = "×".join(str(x) for x in t["groups"] or [])
    return f"{t['us']:.0f} µs, **{t['tflops']:.3g}** ({k}, {grid})"


def _tile(selected):
    """' tile 128x128 vec4 A vec4 B' of the conversion log's text, or the residual / activation note."""
    if not selected:
        return "—"
    m = re.search(r"tile (\d+x\d+)((?: vec4 [AB])*)", selected)
    tile = (m.group(1) + m.group(2).replace(" vec4 ", " v4")) if m else "—"
    return tile + (" +res" if "residual Add" in selected else "")


def render(res):
    """The Markdown section of the probe (render_markdown in gpu_check.py)."""
    if not res:
        return []
    lines = ["## Convolution-tile probe", "",
             "One node per line (ResNet-50 shapes" + (", shrunk for this device" if res.get("small") else "")
             + "), converted with `\"gpu_conv_tiles\": \"all\"` and run under three kernel tables on one bundle: "
             "each cell is the node's dispatch time (median of the profiled frames), **TFLOP/s** (2·M·N·K), "
             "kernel and groups. `gpu` is `conv2d_gemm_gpu` / `gemm_gpu`, `default` the portable "
             "`conv2d_gemm` / `gemm`, `gpu fp16` their fp16 forms (cooperative matrices where kept). "
             "÷ twin: the `gpu` TFLOP/s of the Conv's GEMM twin (same M, N, K) over the Conv's: how many "
             "times slower per FLOP the Conv runs. Agrees: relative L2 against "
             "the `default` outputs. bench/GPU-NOTES.md says which line answers which question.", "",
             "| case | M·N·K | GFLOP | GPU tile | gpu | default | gpu fp16 | ÷ twin | agrees (gpu / fp16) |",
             "|---|---|---|---|---|---|---|---|---|"]
    by = {c["name"]: c for c in res.get("cases", [])}
    for c in res.get("cases", []):
        v = c.get("variants", {})
        twin = by.get(c.get("twin") or "")
        ratio = "—"
        # Per FLOP (pw_odd has one column per pixel fewer than its twin): the twin's rate over the Conv's.
        if twin and v.get("gpu", {}).get("tflops") and twin.get("variants", {}).get("gpu", {}).get("tflops"):
            ratio = f"{twin['variants']['gpu']['tflops'] / v['gpu']['tflops']:.2f}"
        ag = c.get("agrees", {})
        agrees = " / ".join("—" if k not in ag else ("missing" if ag[k] is None else f"{ag[k]:.1e}")
                            for k in ("gpu", "gpu_fp16"))
        mnk = "·".join(str(x) for x in c["gemm_mnk"])
        lines.append(f"| `{c['name']}` {c['what']} | {mnk} | {c['gflop']:.3g} | {_tile(c.get('selected'))} | "
                     f"{_cell(v.get('gpu'))} | {_cell(v.get('default'))} | {_cell(v.get('gpu_fp16'))} | {ratio} | "
                     f"{agrees} |")
    lines.append("")
    for g in res.get("models", []):
        notes = []
        if g.get("error"):
            notes.append(f"error: {g['error']}")
        for v, x in g.get("variants", {}).items():
            if x.get("error"):
                notes.append(f"{v}: error: {x['error'][:200]}")
            elif v == "gpu_fp16" and x.get("precision"):
                checks = "; ".join(f"{k}: {w}" for k, w in sorted((x.get("matrix_check") or {}).items()))
                notes.append(f"gpu fp16: {x['precision']}" + (f" (check: {checks})" if checks else ""))
        if notes:
            lines.append(f"- model `{g['name']}`: " + "; ".join(notes))
    lines += [f"- {len(res.get('cases', []))} cases in {res.get('seconds', '—')} s", ""]
    lines += ["Key figures (bench/GPU-NOTES.md, \"What the probe tells apart\"):", ""]
    lines += [f"- {x}" for x in key_figures(res)] + [""]
    why = sorted({g.get("pipeline_stats") for g in res.get("models", [])
                  if g.get("pipeline_stats") not in (None, "ok")})
    stats = [c for c in res.get("cases", []) if c.get("stats")]
    if stats:
        lines += ["### Pipeline statistics (the driver's, `oaaxvk-pipeline-stats`)", "",
                  "What the compiler made of each case's kernel at its specialization, under the driver's names "
                  "(VK_KHR_pipeline_executable_properties); compare `conv2d_gemm_gpu` with its twin's `gemm_gpu`:", "",
                  "| case | table | kernel | statistics |", "|---|---|---|---|"]
        for c in stats:
            for t in ("gpu", "default", "gpu fp16", "gpu coopmat"):
                x = c["stats"].get(t)
                if x:
                    st = "; ".join(f"{k} {v}" for k, v in x["statistics"].items())
                    lines.append(f"| `{c['name']}` | {t} | `{x['kernel']}` | {st} |")
        lines.append("")
    if why:
        lines += [f"- Pipeline statistics: {'; '.join(why)}", ""]
    return lines
