"""Writes the suite's results: results.json (everything measured), RESULTS.md
(markdown tables + the machine description) and roofline.png (gnuplot: % of
the roofline per kernel and model)."""
import json
import os
import shutil
import subprocess


def host_overhead_cause(h, submit_us):
    """Why the one-node round trip exceeds 2x ONNX Runtime's run(), from this run's figures."""
    text = (f"of the round trip, host work (building inputs, freeing outputs) is "
            f"{h['oaax_host_us_mean']:.1f} µs (mean)")
    if submit_us is None:
        return text + "; the rest is submission, the device's run of the dispatch and the fence wait, not separated in this run"
    share = 100.0 * submit_us / h["oaax_round_trip_us_p50"] if h.get("oaax_round_trip_us_p50") else 0.0
    text += (f"; an empty, pre-recorded command buffer submitted and waited for with a fence takes {submit_us:.1f} µs "
             f"on this device (roofline `submit_round_trip`, same run) = {share:.0f}% of the round trip and "
             f"{submit_us / h['ort_run_us_p50']:.1f}× ONNX Runtime's whole run()")
    if submit_us >= 2.0 * h["ort_run_us_p50"]:
        return text + ": the driver's submission latency alone exceeds the target"
    return text + "; the rest is the dispatch itself and the runtime's own work"


def _f(v, fmt="{:.1f}", none="—"):
    return none if v is None else fmt.format(v)


def _mib(b):
    return None if b is None else b / 2**20


# gemm_probe variants (bench/roofline/gemm_probe.glsl): where W (the
# workgroup-uniform operand, gemm_cpu's A) and L (the lane-varying one,
# gemm_cpu's B) come from.
PROBE_VARIANTS = {
    "ssbo": ("SSBO vec4 (gemm_cpu before texel bindings)", "SSBO vec4"), "w_scalar": ("SSBO scalar", "SSBO vec4"),
    "l_scalar": ("SSBO vec4", "SSBO scalar"), "ubo": ("UBO vec4", "SSBO vec4"),
    "shared": ("shared (filled once)", "SSBO vec4"), "w_regs": ("registers", "SSBO vec4"),
    "l_regs": ("SSBO vec4", "registers"), "ubo_l_regs": ("UBO vec4", "registers"),
    "shared_l_regs": ("shared", "registers"), "no_loads": ("registers", "registers"),
    "l_texel": ("SSBO vec4", "uniform texel buffer, vec4 texels"),
    "ubo_l_texel": ("UBO vec4", "uniform texel buffer, vec4 texels"),
    "ubo_l_image": ("UBO vec4", "storage texel buffer (imageLoad), vec4 texels"),
    "texel": ("uniform texel buffer, vec4 texels", "uniform texel buffer, vec4 texels"),
    "w_texel_l_regs": ("uniform texel buffer, vec4 texels", "registers"),
    "texel_r32": ("uniform texel buffer, R32 texels (4 fetches)", "uniform texel buffer, R32 texels (4 fetches)"),
}
MEMORY_KERNELS = ("dwconv3x3_112x112x96", "relu_4M")  # bench/models.py's depthwise and elementwise kernels
ISSUE_RESNET50_MS = 430.0  # issue 7: ResNet-50 at >= 20% of the roofline is "<= about 430 ms"


def _probe(r):
    """{variant: entry} of the probe variants that have a time, or {}."""
    return {v["name"]: v for v in r.get("gemm_probe", {}).get("variants", []) if v.get("ms")}


def _device(r):
    dev = r["machine"].get("vulkan_device", {})
    return f"{dev.get('name', '?')}, {dev.get('driver_info', '?')}"


def _not_run(r, part):
    """Why `part` ("gemm_probe", a kernel or model name) has no figures in this run."""
    if part == "gemm_probe":
        g = r.get("gemm_probe")
        if not g:
            return "the GEMM load-path probe was not part of this run"
        return g.get("skipped") or g.get("error") or "the probe wrote no variant times"
    for e in r.get("kernels", []) + r.get("models", []):
        if e.get("name") == part:
            return e.get("error", "no figure recorded")
    return "not part of this run" + (" (--only)" if r["suite"].get("only") else
                                      " (--quick)" if r["suite"].get("quick") else "")


def probe_cause(r):
    """The measured cause of the compute kernels' speed, from the probe's
    numbers of the same run (None-safe: says when the probe did not run)."""
    v = _probe(r)
    if "ssbo" not in v or "no_loads" not in v:
        return f"no probe figures in this run ({_not_run(r, 'gemm_probe')})"

    def pct(n):
        return v[n].get("pct_fma_roofline")
    t0, t_ssbo = v["no_loads"]["ms"], v["ssbo"]["ms"]
    if pct("ssbo") is None or pct("no_loads") is None:
        return "no FMA roofline in this run to compare the probe with"
    if pct("no_loads") < 2 * pct("ssbo"):
        return (f"the GEMM load-path probe does not show a load bound in this run: `ssbo` (gemm_cpu's operand "
                f"sources) reaches {pct('ssbo'):.1f}% of the FMA roofline and `no_loads` {pct('no_loads'):.1f}%")
    s = (f"the GEMM load-path probe (same run) puts gemm_cpu's inner loop with both operands from storage buffers "
         f"(`ssbo`) at {pct('ssbo'):.1f}% of the FMA roofline while the same FMAs with no loads (`no_loads`) reach "
         f"{pct('no_loads'):.1f}%: {100 * (1 - t0 / t_ssbo):.0f}% of the time goes to loads, so the kernels are bound "
         f"by per-lane storage-buffer loads on {_device(r)}, not by FMAs")
    if "l_regs" in v and "ubo_l_regs" in v:
        w_ssbo, w_ubo = v["l_regs"]["ms"] - t0, v["ubo_l_regs"]["ms"] - t0
        if w_ubo > 0 and w_ssbo > 0:
            s += (f"; a UBO for the workgroup-uniform operand makes those loads {w_ssbo / w_ubo:.0f}× cheaper "
                  f"({w_ssbo:.1f} → {w_ubo:.2f} ms, `l_regs` vs `ubo_l_regs` minus `no_loads`)")
        elif w_ssbo > 0:
            s += f"; from a UBO the workgroup-uniform operand's loads cost no measurable time (SSBO: {w_ssbo:.1f} ms)"
        if "ubo" in v and pct("ubo") is not None:
            s += f" but the per-lane operand from an SSBO still bounds the kernel at {pct('ubo'):.1f}% (`ubo`)"
    if "texel" in v and pct("texel") is not None:
        s += (f"; with both operands read through uniform texel buffers (`texel`, texelFetch: the sampler's "
              f"vectorised gather instead of a per-lane loop) the same loop reaches {pct('texel'):.1f}%, which is "
              f"what the CPU-class kernels now use (bundle feature texel_bindings)")
    return s


def probe_load_ns(r):
    """GPU ns per lane-varying SSBO vec4 load in the probe (`w_regs` - `no_loads`
    over its M*N*K/32 L loads), or None."""
    v, st = _probe(r), r.get("gemm_probe", {}).get("settings", {})
    if "w_regs" not in v or "no_loads" not in v or not all(k in st for k in "mnk"):
        return None
    d = v["w_regs"]["ms"] - v["no_loads"]["ms"]
    return d * 1e6 / (st["m"] * st["n"] * st["k"] / 32) if d > 0 else None


def _yes(ok):
    return "—" if ok is None else ("yes" if ok else "no")


def targets(r):
    """Issue 7's "Make it fast" targets against this run's figures: a list of
    {target, measured, met (True / False / None = not measured), note}."""
    rf, T = r["roofline"], []
    peak, bw = rf.get("fma_f32_gflops"), rf.get("copy_gbs")
    kern = {k["name"]: k for k in r.get("kernels", [])}
    mods = {e["name"]: e for e in r.get("models", [])}
    dev = r["machine"].get("vulkan_device", {})

    def row(target, measured, met, note):
        T.append({"target": target, "measured": measured, "met": met, "note": note})

    def kpct(name):
        k = kern.get(name, {})
        return k.get("pct_roofline") if "error" not in k else None

    # ResNet-50 end to end.
    e = mods.get("resnet50", {})
    if e.get("pct_roofline") is not None:
        p50, ok = e["latency_ms"]["p50"], e["pct_roofline"] >= 20.0
        ms20 = e["flops"] / (0.2 * peak * 1e9) * 1e3
        kp = ", ".join(f"{n} {kpct(n):.1f}%" for n in kern if kpct(n) is not None and kern[n].get("roofline") == "fma_f32")
        row("ResNet-50 ≥ 20% of the FMA roofline (issue: ≤ ~430 ms at its ~95 GFLOP/s)",
            f"p50 {p50:.0f} ms = {e['pct_roofline']:.1f}% of {peak:.1f} GFLOP/s ({e['gflops']:.2f} GFLOP/s); 20% of "
            f"this run's roofline = ≤ {ms20:.0f} ms (issue's ≤ {ISSUE_RESNET50_MS:.0f} ms)", ok,
            "" if ok else f"{p50 / ms20:.0f}× too slow; compute kernels in this run: {kp or 'none measured'}; "
            + probe_cause(r) + ". Peer (issue 7): ncnn Vulkan fp16 ≈ 0.95 s, about 9%")
    else:
        row("ResNet-50 ≥ 20% of the FMA roofline (issue: ≤ ~430 ms)", "—", None,
            f"not measured in this run: {_not_run(r, 'resnet50')}")

    # GEMM / implicit-GEMM convolution.
    gemm = ["matmul_1024"] + [n for n, k in kern.items() if n.startswith("conv") and k.get("kind") == "compute"]
    got = [(n, kpct(n)) for n in gemm if kpct(n) is not None]
    if kpct("matmul_1024") is not None:
        ok = all(p >= 30.0 for _, p in got)
        row("GEMM / implicit-GEMM Conv ≥ 30% of the FMA roofline at 1024³-class sizes",
            "; ".join(f"{n} {p:.1f}% ({kern[n]['gflops']:.2f} GFLOP/s)" for n, p in got), ok,
            "" if ok else probe_cause(r))
    else:
        row("GEMM / implicit-GEMM Conv ≥ 30% of the FMA roofline at 1024³-class sizes", "—", None,
            f"not measured in this run: matmul_1024: {_not_run(r, 'matmul_1024')}")

    # Depthwise and elementwise vs the copy bandwidth.
    mem = [n for n in MEMORY_KERNELS if n not in kern] + [n for n, k in kern.items() if k.get("kind") != "compute"]
    got = [(n, kpct(n)) for n in mem if kpct(n) is not None]
    if got and bw:
        low = [n for n, p in got if p < 50.0]
        ns = probe_load_ns(r)
        note = ""
        if low:
            rf = r.get("roofline", {})
            note = (f"below: {', '.join(low)}. The copy roofline is this run's best compute-shader copy "
                    f"(`{rf.get('copy_best', 'copy')}`; storage-buffer read and write: "
                    f"{_f(rf.get('copy_ssbo_gbs'), '{:.2f}')} GB/s); every kernel writes through per-lane "
                    f"storage-buffer stores (llvmpipe loops over the lanes per component); "
                    + (f"the probe prices one lane-varying SSBO vec4 load at ≈ {ns:.0f} ns of GPU time in this run "
                       f"(`w_regs` − `no_loads`)" if ns else f"no probe load cost in this run ({_not_run(r, 'gemm_probe')})")
                    + ("; a 3×3 depthwise window loads each input up to 9 times where GB/s counts it once"
                       if any(n.startswith("dw") for n in low) else ""))
        above = [n for n, p in got if p > 100.0]
        if above:
            note = "; ".join(x for x in [note, (
                f"above 100%: {', '.join(above)} move(s) fewer bytes than the copy roofline's 2 × "
                f"{r.get('suite', {}).get('copy_mib', 64)} MiB, so more of their traffic stays in the CPU's caches "
                f"(lavapipe's \"device memory\" is host memory)")] if x)
        missing = [f"{n}: not measured ({_not_run(r, n)})" for n in mem if kpct(n) is None]
        row("depthwise and elementwise kernels ≥ 50% of the copy bandwidth",
            "; ".join(f"{n} {p:.1f}% of {bw:.2f} GB/s" for n, p in got), False if low else None if missing else True,
            "; ".join(x for x in [note] + missing if x))
    else:
        row("depthwise and elementwise kernels ≥ 50% of the copy bandwidth", "—", None,
            "not measured in this run: " + ("; ".join(f"{n}: {_not_run(r, n)}" for n in mem)
                                            or "no depthwise or elementwise kernel " + _not_run(r, "dwconv3x3")))

    # Per-model graph figures.
    def per_model(target, have, fmt, good, note_bad, why_none, why=lambda e: e.get("error", "no figure")):
        ms = [e for e in r.get("models", []) if have(e)]
        skipped = [f"{e['name']}: not measured ({why(e)})" for e in r.get("models", []) if not have(e)]
        if not ms:
            row(target, "—", None, f"not measured in this run: {why_none}" + (f" ({'; '.join(skipped)})" if skipped else ""))
            return
        bad = [e for e in ms if not good(e)]
        row(target, "; ".join(fmt(e) for e in ms), not bad,
            "; ".join(([note_bad(bad)] if bad else []) + skipped))

    per_model("dispatches ≤ ONNX Runtime's optimized-graph nodes (per model)",
              lambda e: e.get("dispatches") is not None and e.get("ort_optimized_nodes") is not None,
              lambda e: f"{e['name']} {e['dispatches']} vs {e['ort_optimized_nodes']}",
              lambda e: e["dispatches"] <= e["ort_optimized_nodes"],
              lambda b: "more dispatches than ORT nodes: " + ", ".join(
                  f"{e['name']} (+{e['dispatches'] - e['ort_optimized_nodes']})" for e in b),
              "no model was converted")
    ms = [e for e in r.get("models", []) if e.get("barriers") is not None and e.get("dispatches")]
    mb = [e for e in ms if e.get("barriers_lower_bound") is not None]
    if mb and len(mb) == len(ms):
        extra = [e for e in mb if e["barriers"] > e["barriers_lower_bound"]]
        row("zero avoidable barriers",
            "; ".join(f"{e['name']} {e['barriers']} barriers, lower bound {e['barriers_lower_bound']} "
                      f"({e['dispatches']} dispatches)" for e in mb), not extra,
            "lower bound = the longest chain of read/write hazards between dispatches minus one (toolchain "
            "`BarrierLowerBound`: no dispatch order with the same memory plan needs fewer); a barrier is recorded "
            "only before a dispatch that touches a range written (or overwrites a range read) since the last one"
            + ("" if not extra else "; avoidable by reordering: " + ", ".join(
                f"{e['name']} {e['barriers'] - e['barriers_lower_bound']}" for e in extra)
               + " (the toolchain keeps the graph's node order)"))
    else:
        row("zero avoidable barriers",
            "; ".join(f"{e['name']} {e['barriers']} barriers / {e['dispatches']} dispatches" for e in ms) or "—", None,
            "not measured in this run: the conversion log has no barrier lower bound for "
            + (", ".join(e["name"] for e in ms if e not in mb) or "any model"))
    per_model("activation arena ≤ 1.2× the liveness lower bound (per model)",
              lambda e: e.get("arena_bytes") is not None and e.get("peak_live_bytes"),
              lambda e: f"{e['name']} {e['arena_bytes'] / e['peak_live_bytes']:.2f}×",
              lambda e: e["arena_bytes"] <= 1.2 * e["peak_live_bytes"],
              lambda b: "above 1.2×: " + ", ".join(e["name"] for e in b),
              "no model was converted")
    bound = ("bound used: the peak live intermediate bytes of the ONNX graph in its node order (shape inference), "
             "not of the toolchain's fused program, whose liveness bound this run does not measure")
    T[-1]["note"] = (f"{T[-1]['note']}; {bound}" if T[-1]["met"] is None else
                     bound + (f"; {T[-1]['note']}" if T[-1]["note"] else ""))
    prof = lambda e: any("profile=1" in n for n in e.get("notes", []))  # noqa: E731
    per_model("frames_in_flight = 2 gives more throughput than 1 (on a model; per model)",
              lambda e: e.get("throughput", {}).get("1") and e["throughput"].get("2"),
              lambda e: f"{e['name']} {e['throughput']['2'] / e['throughput']['1']:.2f}×" + ("¹" if prof(e) else ""),
              lambda e: e["throughput"]["2"] > e["throughput"]["1"],
              lambda b: "depth 2 ≤ depth 1: " + ", ".join(e["name"] for e in b), "no model ran at depth 1 and 2",
              lambda e: e.get("error") or next((n for n in e.get("notes", []) if n.startswith("depth 2")),
                                               "no depth-2 figure"))
    # The issue asks for one model (where host copies matter) with more
    # throughput at 2; a depth-1 figure taken with timestamps on does not count.
    gain = [e for e in r.get("models", []) if e.get("throughput", {}).get("2")
            and e["throughput"].get("1") and e["throughput"]["2"] > e["throughput"]["1"]]
    if T[-1]["met"] is not None:
        T[-1]["met"] = any(not prof(e) for e in gain)
    # Memory-bound one-node models (bench/models.py KERNELS, kind != compute):
    # host copies of the inputs and outputs are a large share of each inference.
    hc = [k for k in r.get("kernels", []) if k.get("throughput", {}).get("1") and k["throughput"].get("2")]
    if hc:
        txt = "; ".join(f"{k['name']} (host copies {k.get('host_copy_bytes', 0) / 2**20:.0f} MiB per inference) "
                        f"{k['throughput']['2'] / k['throughput']['1']:.2f}×" for k in hc)
        T[-1]["measured"] = txt if T[-1]["measured"] == "—" else T[-1]["measured"] + "; " + txt
        if any(k["throughput"]["2"] > k["throughput"]["1"] for k in hc):
            T[-1]["met"] = True
        elif not T[-1]["met"]:
            T[-1]["met"] = False
    if any(prof(e) for e in r.get("models", []) if e.get("throughput", {}).get("2")):
        T[-1]["note"] = ("¹ depth 1 measured with profile=1 (timestamps on), depth 2 without, so ¹ ratios do not "
                         "count" + (f"; {T[-1]['note']}" if T[-1]["note"] else ""))

    h = r.get("host_overhead", {})
    if h.get("ratio_p50") is not None:
        ok = h["ratio_p50"] <= 2.0
        row("host overhead per inference ≤ 2× ONNX Runtime's (one-node model)",
            f"{h['oaax_round_trip_us_p50']:.1f} µs vs {h['ort_run_us_p50']:.1f} µs p50 = {h['ratio_p50']:.2f}×", ok,
            "" if ok else host_overhead_cause(h, r["roofline"].get("submit_round_trip_us")))
    else:
        row("host overhead per inference ≤ 2× ONNX Runtime's (one-node model)", "—", None,
            "not measured in this run: " + h.get("error", "the host-overhead part did not run (--only)"))

    f = r["machine"].get("device_features", {})
    dv = [e for e in r.get("device_variants", {}).get("rows", []) if "error" not in e]

    def yn(x):
        return "?" if x is None else ("yes" if x else "no")
    exposes = ("device exposes: storageBuffer16BitAccess " + yn(f.get("storage_buffer_16bit_access"))
               + f", subgroups of {f.get('subgroup_size', '?')} ("
               + (", ".join(f.get("subgroup_operations") or []) or "no operations") + ")") if f and "error" not in f \
        else "what the device exposes was not measured (" + f.get("error", "no vulkaninfo query") + ")"
    if dv:
        ran = all(e.get("gpu", {}).get("table") == "gpu" for e in dv)
        parts = [f"{e['name']} {_f(e['gpu'].get('speedup_vs_default'), '{:.2f}×')}" for e in dv]
        diffs = [f"{e['name']} {e['gpu']['max_rel_diff_vs_default']:.2g}" for e in dv
                 if e["gpu"].get("max_rel_diff_vs_default") is not None]
        row("fp16 storage (fp32 accumulation) and subgroup variants chosen at load time from the bundle",
            f"{exposes}; gpu table vs default table, GPU time: " + ", ".join(parts)
            + "; output rel. diff vs default: " + ", ".join(diffs), ran,
            "the runtime picks program.dispatch.gpu rows by the device's capabilities (rows whose capability is "
            "missing keep the default kernel; SwiftShader has no 16-bit storage); `auto` runs them on GPU-class "
            "devices, while on this CPU-class device it runs the CPU table, which is faster here (section "
            "\"Device-specific variants\")" + (f". fp16 arithmetic runs at {rf16:.1f} vs {rf32:.1f} GFLOP/s fp32 "
               "on this device (same run) and loads cost per instruction, not per byte, so fp16 storage saves "
               "bandwidth on GPUs, not time on lavapipe" if (rf16 := r["roofline"].get("fma_f16_gflops"))
               and (rf32 := r["roofline"].get("fma_f32_gflops")) else ""))
    else:
        row("fp16 storage (fp32 accumulation) and subgroup variants chosen at load time from the bundle", exposes,
            None, "not measured in this run: the device-variant part did not run or failed")
    g = f.get("glslang_cooperative_matrix")
    row("VK_KHR_cooperative_matrix GEMM variant", "VK_KHR_cooperative_matrix exposed by the device: "
        + yn(f.get("cooperative_matrix")), False,
        "no such variant: " + (f"the shader compiler cannot express it ({g}); " if g else "")
        + "the Vulkan headers in use (" + (f.get("vulkan_headers") or "?") + ") predate the extension "
        "(VK_KHR_cooperative_matrix arrived in 1.3.255), and no device here exposes it, so nothing could run "
        "or test such a kernel")
    if dev.get("vendor_id") == 0x10DE:
        row("the suite on an NVIDIA GPU beside PyTorch (cuDNN)", f"this run is on {_device(r)}", None,
            "not measured in this run: the PyTorch (cuDNN) side is not part of the suite")
    else:
        row("the suite on an NVIDIA GPU beside PyTorch (cuDNN)", "—", None,
            f"not measured in this run: its Vulkan device is {_device(r)} (no NVIDIA GPU)")
    return T


def targets_section(r):
    L = ["## Targets (issue 7)\n",
         "Issue 7's \"Make it fast\" targets against this run's figures (every number below is from this run; "
         "`—`: not measured).\n",
         "| target | measured (this run) | met? | cause / note |", "|---|---|---|---|"]
    for t in targets(r):
        L.append(f"| {t['target']} | {t['measured']} | {_yes(t['met'])} | {t['note'].replace('|', '/')} |")
    L.append("")
    return L


def probe_section(r):
    g = r.get("gemm_probe", {})
    L = ["## GEMM load-path probe\n"]
    v = g.get("variants") or []
    if not v:
        L.append(f"not measured in this run: {_not_run(r, 'gemm_probe')}\n")
        return L
    st = g.get("settings", {})
    L.append(f"`oaaxvk-roofline --gemm-probe`, {st.get('m')}×{st.get('n')}×{st.get('k')} (M×N×K), "
             f"{st.get('repetitions')} repetition(s) of ≥ {st.get('benchmark_min_time')} s, "
             f"{st.get('statistic')}: gemm_cpu's inner loop with the same FLOPs in every variant, only the operands' "
             "source changes (W: workgroup-uniform operand, L: lane-varying; see docs/benchmarks.md). % is of this "
             f"run's FMA roofline ({_f(g.get('roofline_fma_f32_gflops'))} GFLOP/s); the probe's own `fma_f32` "
             f"(256 iterations, run beside it) reached {_f(g.get('probe_fma_f32_gflops'))} GFLOP/s.\n")
    L.append("| variant | W from | L from | ms | GFLOP/s | % of FMA roofline | % of the probe's fma_f32 |")
    L.append("|---|---|---|---|---|---|---|")
    for x in v:
        w, l = PROBE_VARIANTS.get(x["name"], ("?", "?"))
        if "error" in x:
            L.append(f"| `{x['name']}` | {w} | {l} | failed: {x['error']} | | | |")
            continue
        L.append(f"| `{x['name']}` | {w} | {l} | {_f(x.get('ms'), '{:.2f}')} | {_f(x.get('gflops'), '{:.2f}')} | "
                 f"{_f(x.get('pct_fma_roofline'))}% | {_f(x.get('pct_probe_fma_f32'))}% |")
    over = [x["name"] for x in v if (x.get("pct_fma_roofline") or 0) > 100]
    if over:
        L.append(f"\n{', '.join(over)} above 100 %: the probe's sixteen independent accumulators are more FMA "
                 "chains than `fma_f32`'s best (ACC = 8), and the two roofline figures are taken seconds apart on a "
                 "shared machine.")
    if g.get("error"):
        L.append(f"\nThe probe run reported: {g['error']}")
    L.append(f"\nReading: {probe_cause(r)}.\n")
    return L


def device_variants_section(r):
    """The device-specific variant tables (feature device_variants) side by
    side: time in dispatches under kernel_variant = default / gpu / cpu."""
    rows = r.get("device_variants", {}).get("rows", [])
    if not rows:
        return []
    L = ["## Device-specific variants: the three dispatch tables side by side\n",
         "Runtime argument `kernel_variant` = `default` (portable kernels: tiled shared-memory GEMMs, shared-memory "
         "reductions), `gpu` with `fp16_weights=1` (the GPU table: fp16-weight GEMMs where the device has storageBuffer16BitAccess, "
         "subgroup reductions where it has subgroupArithmetic; other rows as default) and `cpu` (the CPU-class "
         "table, what `auto` runs on this device). GPU ms = sum of the dispatches' timestamps, median over the "
         "timed frames (models: one inference). Rel. diff = max |y − y_default| / max |y_default| (per output, the "
         "largest over the outputs): the gpu table's difference is the fp16 rounding of the weights (bound and tests: "
         "docs/bundle-format.md, \"Device-specific variants\").\n",
         "| kernel / model | default GPU ms | gpu GPU ms (× default) | cpu GPU ms (× default) | gpu rel. diff | "
         "cpu rel. diff | the runtime's log for gpu |", "|---|---|---|---|---|---|---|"]
    for e in rows:
        if "error" in e:
            L.append(f"| {e['name']} | failed: {e['error']} ||||||")
            continue

        def ms(t):
            x = e.get(t, {})
            v = _f(x["gpu_us"] / 1000 if x.get("gpu_us") else None, "{:.2f}")
            return v + (f" ({x['speedup_vs_default']:.2f}×)" if x.get("speedup_vs_default") else "")
        g = e.get("gpu", {})
        note = (f"{g.get('table', '?')} table" + (f": {g['note']}" if g.get("note") else "")).replace("|", "/")
        L.append(f"| {e['name']} | {ms('default')} | {ms('gpu')} | {ms('cpu')} | "
                 f"{_f(g.get('max_rel_diff_vs_default'), '{:.2g}')} | "
                 f"{_f(e.get('cpu', {}).get('max_rel_diff_vs_default'), '{:.2g}')} | {note} |")
    L.append("")
    return L


def load_time_section(r):
    """Load time beside ONNX Runtime's session creation (run_bench.py
    load_times)."""
    L = ["## Load time beside ONNX Runtime session creation\n",
         "`runtime_model_loading` in a new `oaax-run` process (1 frame slot): **first** with empty caches (a fresh "
         "`XDG_CACHE_HOME`: no pipeline cache file, no Mesa shader cache), **second** in another process with the "
         "caches the first wrote. ORT = `InferenceSession.create` (CPU EP, graph optimization `all`) from the "
         "model's ONNX Runtime run. Second load's parts from the runtime's `loaded` log line "
         "(docs/runtime.md, \"Load time and the pipeline cache\").\n",
         "| model | pipelines (threads) | first load ms | second load ms | ORT session ms | second ÷ ORT | "
         "second load: weights / pipelines / warm-up ms |",
         "|---|---|---|---|---|---|---|"]
    rows = r.get("load_time", [])
    if not rows:
        return L[:1] + ["not measured in this run\n"]
    for e in rows:
        if "error" in e or "second_ms" not in e:
            L.append(f"| {e['name']} | | not measured: {e.get('error', '?')} | | {_f(e.get('ort_session_ms'), '{:.0f}')} "
                     f"| | |")
            continue
        p = e.get("second_parts_ms", {})
        L.append(f"| {e['name']} | {_f(e.get('pipelines'), '{}')} ({_f(e.get('threads'), '{}')}) | "
                 f"{e['first_ms']:.0f} | {e['second_ms']:.0f} | {_f(e.get('ort_session_ms'), '{:.0f}')} | "
                 f"{_f(e.get('second_vs_ort'), '{:.1f}×')} | {_f(p.get('weights'), '{:.0f}')} / "
                 f"{_f(p.get('pipelines'), '{:.0f}')} / {_f(p.get('warmup'), '{:.0f}')} |")
    L.append("")
    return L


def markdown(r, png="roofline.png"):
    m, rf, L = r["machine"], r["roofline"], []
    dev = m.get("vulkan_device", {})
    L.append("# oaax-vulkan benchmark results\n")
    L.append("Generated by `bash scripts/bench.sh" + (" --quick" if r["suite"]["quick"] else "")
             + (" --swiftshader" if r["suite"]["swiftshader"] else "")
             + (f" --only {','.join(r['suite']['only'])}" if r["suite"].get("only") else "") + "` in one run "
             f"({r['suite'].get('wall_s', 0) / 60:.1f} min); every figure below comes from that run. "
             "Method and definitions: [docs/benchmarks.md](../docs/benchmarks.md).\n")
    L.append("## Machine\n")
    L.append("| | |\n|---|---|")
    L.append(f"| CPU | {m.get('cpu')} ({m.get('cores')} cores, {m.get('memory_gib', '?')} GiB) |")
    L.append(f"| Vulkan device | {dev.get('name', '?')} ({dev.get('type', '?')}), Vulkan {dev.get('api_version', '?')} |")
    L.append(f"| driver | {dev.get('driver_name', '?')}: {dev.get('driver_info', '?')} "
             f"(driverVersion {dev.get('driver_version_raw', '?')}) |")
    L.append(f"| ICD | {m.get('icd')} |")
    L.append(f"| ONNX Runtime | onnxruntime-node {m.get('ort_version')}, CPU EP, intraOpNumThreads = {m.get('cores')} |")
    L.append(f"| date | {m.get('date')} |")
    L.append(f"| git commit | {m.get('git_commit')} |")
    la0, la1 = m.get("load_average_start", [0] * 3), m.get("load_average_end", [0] * 3)
    L.append(f"| load average (1 min) | {la0[0]:.1f} at start, {la1[0]:.1f} at end (other jobs share the CPU: "
             "every figure is what was left to this run) |")
    L.append(f"| kernel | Linux {m.get('kernel')} |\n")

    L.extend(targets_section(r))
    L.append("## Device roofline (oaaxvk-roofline, GPU timestamps)\n")
    L.append("| figure | value |\n|---|---|")
    L.append(f"| fp32 FMA rate (the FMA roofline: best fp32 FMA figure of the run) | {_f(rf.get('fma_f32_gflops'))} GFLOP/s"
             + (f" ({rf['fma_f32_source']}; the roofline run's own: {_f(rf.get('fma_f32_gflops_roofline_run'))})"
                if rf.get("fma_f32_source") else "") + " |")
    L.append(f"| fp16 FMA rate | {_f(rf.get('fma_f16_gflops')) if 'fma_f16_gflops' in rf else 'no shaderFloat16'} "
             + ("GFLOP/s |" if 'fma_f16_gflops' in rf else "|"))
    L.append(f"| copy bandwidth, compute shader (read + write; the copy roofline: best of the variants below) | "
             f"{_f(rf.get('copy_gbs'), '{:.2f}')} GB/s ({rf.get('copy_best', 'copy')}) |")
    for name, gbs in sorted((rf.get("copy_variants_gbs") or {}).items()):
        how = {"copy": "storage-buffer read and write", "copy_texel": "uniform texel buffer read, storage-buffer write",
               "copy_texel_image": "uniform texel buffer read, storage texel buffer write (imageStore)"}.get(name, name)
        L.append(f"| `{name}`: {how} | {_f(gbs, '{:.2f}')} GB/s |")
    L.append(f"| copy bandwidth, vkCmdCopyBuffer (context only) | {_f(rf.get('transfer_copy_gbs'), '{:.2f}')} GB/s |")
    L.append(f"| submission round trip, empty command buffer + fence wait (wall clock) | "
             f"{_f(rf.get('submit_round_trip_us'))} µs |")
    for k in ("fma_f32_variants", "fma_f16_variants"):
        if k in rf:
            L.append(f"| {k.replace('_variants', '')} per accumulator count | "
                     + ", ".join(f"{n.split('/')[1]}: {v:.1f}" for n, v in rf[k].items()) + " |")
    L.append("")

    L.append("## Kernels (single-node models through toolchain + runtime)\n")
    L.append("GPU time = sum of the dispatches' timestamps (runtime `profile=1`), median over the timed frames.\n")
    L.append("| kernel | dispatches | GPU ms | GFLOP/s | GB/s | % of roofline | ORT CPU ms | ORT GFLOP/s |")
    L.append("|---|---|---|---|---|---|---|---|")
    for k in r["kernels"]:
        if "error" in k:
            L.append(f"| {k['name']} ({k['description']}) | failed: {k['error']} |||||||")
            continue
        roof = "FMA" if k.get("roofline") == "fma_f32" else "copy"
        L.append(f"| {k['name']} ({k['description']}) | {k.get('dispatches')} | {_f(k['gpu_us'] / 1000, '{:.2f}')} | "
                 f"{_f(k.get('gflops'), '{:.2f}')} | {_f(k.get('gbs'), '{:.2f}')} | "
                 f"{_f(k.get('pct_roofline'))}% of {roof} | {_f(k.get('ort_latency_ms_p50'), '{:.2f}')} | "
                 f"{_f(k.get('ort_gflops'), '{:.2f}')} |")
    L.append("")

    L.extend(probe_section(r))
    L.append("## Models: latency and throughput beside ONNX Runtime CPU\n")
    L.append("Speed-up = ONNX Runtime time ÷ oaax-vulkan time (> 1: oaax-vulkan is faster).\n")
    L.append("| model | input | p50 ms (depth 1) | ORT p50 ms | speed-up | GFLOP/s | % of FMA roofline | "
             "load ms | ORT load ms | iterations |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for e in r["models"]:
        if "latency_ms" not in e:
            o = e.get("ort", {})
            L.append(f"| {e['name']} | | not measured: {e.get('error', '?')} | "
                     f"{_f(o.get('latency_ms', {}).get('p50'))} | | | | | {_f(o.get('load_ms'), '{:.0f}')} | |")
            continue
        o = e["ort"]
        shape = "×".join(map(str, list(e["input_shapes"].values())[0])) if e.get("input_shapes") else "1×3×224×224"
        L.append(f"| {e['name']} | {shape} | {_f(e['latency_ms']['p50'])} | {_f(o['latency_ms']['p50'])} | "
                 f"{_f(e.get('speedup_vs_ort_latency'), '{:.3f}')} | {_f(e.get('gflops'), '{:.2f}')} | "
                 f"{_f(e.get('pct_roofline'))}% | {_f(e.get('load_ms'), '{:.0f}')} | {_f(o.get('load_ms'), '{:.0f}')} | "
                 f"{e.get('iterations_depth1')} |")
    L.append("")
    L.append("Depth k = k inferences in flight with `frames_in_flight` = k (depth 1: one frame slot).\n")
    L.append("| model | throughput /s, depth 1 / 2 / 3 / 4 | ORT throughput /s, depth 2 / 3 / 4 | "
             "depth 2 vs depth 1 | speed-up vs ORT at depth 2 |")
    L.append("|---|---|---|---|---|")
    for e in r["models"]:
        if "throughput" not in e:
            continue
        t, ot = e["throughput"], e["ort"].get("throughput", {})
        L.append(f"| {e['name']} | " + " / ".join(_f(t.get(str(d)), "{:.2f}") for d in (1, 2, 3, 4)) + " | "
                 + " / ".join(_f(ot.get(str(d)), "{:.2f}") for d in (2, 3, 4)) + " | "
                 + (_f(t["2"] / t["1"], "{:.2f}×") if "2" in t and t.get("1") else "—") + " | "
                 + (_f(t["2"] / ot["2"], "{:.3f}") if "2" in t and ot.get("2") else "—") + " |")
    L.append("")
    L.append("## Models: graph and memory\n")
    L.append("Intermediates = every node output that is not a graph output in the ONNX model (shape inference; "
             "`peak live` = the most intermediate bytes alive at once in the model's node order). Arena = the "
             "toolchain's liveness-planned activation arena (per frame slot); `no reuse` = the same tensors "
             "after the toolchain's fusions, without sharing.\n")
    L.append("| model | ONNX nodes | ORT optimized nodes | dispatches | barriers | intermediates MiB | peak live MiB | "
             "arena MiB | arena no reuse MiB | arena ÷ peak live | GPU ms in dispatches (profile) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for e in r["models"]:
        if "onnx_nodes" not in e:
            continue
        ratio = (e["arena_bytes"] / e["peak_live_bytes"]) if e.get("arena_bytes") is not None and e.get(
            "peak_live_bytes") else None
        unk = f" ({e['unknown_tensors']} unknown)" if e.get("unknown_tensors") else ""
        L.append(f"| {e['name']} | {e['onnx_nodes']} | {_f(e.get('ort_optimized_nodes'), '{}')} | "
                 f"{_f(e.get('dispatches'), '{}')} | {_f(e.get('barriers'), '{}')} | "
                 f"{_f(_mib(e.get('intermediate_bytes')), '{:.2f}')}{unk} | {_f(_mib(e.get('peak_live_bytes')), '{:.2f}')} | "
                 f"{_f(_mib(e.get('arena_bytes')), '{:.2f}')} | {_f(_mib(e.get('arena_bytes_no_reuse')), '{:.2f}')} | "
                 f"{_f(ratio, '{:.2f}')} | {_f(e.get('gpu_ms_in_dispatches'))} |")
    L.append("")
    L.extend(load_time_section(r))
    L.extend(device_variants_section(r))
    h = r["host_overhead"]
    L.append("## Host overhead (16-element Relu, depth 1)\n")
    if "error" in h:
        L.append(f"failed: {h['error']}\n")
    elif "ratio_p50" not in h:
        L.append("not measured in this run (--only without host_overhead)\n")
    else:
        L.append("| figure | oaax-vulkan | ONNX Runtime | ratio |\n|---|---|---|---|")
        L.append(f"| send_input → receive_output round trip vs run(), p50 | {h['oaax_round_trip_us_p50']:.1f} µs | "
                 f"{h['ort_run_us_p50']:.1f} µs | {h['ratio_p50']:.2f}× |")
        L.append(f"| mean | {h['oaax_round_trip_us_mean']:.1f} µs | {h['ort_run_us_mean']:.1f} µs | |")
        L.append(f"| host work per inference (building inputs, freeing outputs), mean | {h['oaax_host_us_mean']:.1f} µs"
                 " | | |")
        L.append(f"\n{h['iterations']} iterations each (after 50 warm-up).\n")
    notes = [f"{e['name']}: {n}" for e in r["models"] for n in e.get("notes", [])] + r.get("notes", [])
    if notes:
        L.append("## Notes from this run\n")
        L.extend(f"- {n}" for n in notes)
        L.append("")
    L.append(f"![% of roofline]({png})\n")
    return "\n".join(L)


def chart(r, out_dir, png):
    """roofline.png: one bar per kernel / model, % of the FMA roofline
    (compute-bound) or of the copy bandwidth (memory-bound)."""
    gp = shutil.which("gnuplot")
    if not gp:
        r.setdefault("notes", []).append("gnuplot missing: roofline.png not written (bash scripts/setup.sh)")
        return
    rows = []
    for k in r["kernels"]:
        if k.get("pct_roofline") is not None:
            rows.append((k["name"], k["pct_roofline"], 1 if k.get("roofline") == "fma_f32" else 2))
    for e in r["models"]:
        if e.get("pct_roofline") is not None:
            rows.append((e["name"], e["pct_roofline"], 3))
    if not rows:
        r.setdefault("notes", []).append("nothing measured: roofline.png not written")
        return
    data = os.path.join(out_dir, ".roofline.dat")
    with open(data, "w") as f:
        for name, pct, c in rows:
            f.write(f'"{name}" {pct:.4f} {c}\n')
    dev = r["machine"].get("vulkan_device", {}).get("name", "?")
    rf = r["roofline"]
    title = (f"% of roofline on {dev}: FMA {rf.get('fma_f32_gflops', 0):.1f} GFLOP/s, "
             f"copy {rf.get('copy_gbs', 0):.2f} GB/s")
    script = f"""
set terminal pngcairo size 1100,560 font ",10" noenhanced
set output '{os.path.join(out_dir, png)}'
set title "{title}"
set ylabel "% of roofline"
set style fill solid 0.8 border -1
set boxwidth 0.7
set xtics rotate by -35 left nomirror
set grid ytics
set yrange [0:*]
set key top right
set offsets 0.5, 0.5, graph 0.2, 0
plot '{data}' using 0:($3==1?$2:1/0):xtic(1) with boxes lc rgb '#1f77b4' title 'kernel, % of fp32 FMA rate', \\
     '' using 0:($3==2?$2:1/0) with boxes lc rgb '#ff7f0e' title 'kernel, % of copy bandwidth', \\
     '' using 0:($3==3?$2:1/0) with boxes lc rgb '#2ca02c' title 'model (Conv/Gemm/MatMul FLOPs at p50), % of FMA rate', \\
     '' using 0:2:(sprintf('%.1f', $2)) with labels offset 0,0.7 notitle
"""
    try:
        subprocess.run([gp], input=script, text=True, check=True, capture_output=True, timeout=60)
    except (subprocess.SubprocessError, OSError) as e:
        r.setdefault("notes", []).append(f"gnuplot failed: {e}")
    finally:
        os.remove(data)


def write_all(r, out_dir, suffix=""):
    """Writes RESULTS<suffix>.md, results<suffix>.json and roofline<suffix>.png."""
    os.makedirs(out_dir, exist_ok=True)
    chart(r, out_dir, f"roofline{suffix}.png")
    with open(os.path.join(out_dir, f"results{suffix}.json"), "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, f"RESULTS{suffix}.md"), "w") as f:
        f.write(markdown(r, f"roofline{suffix}.png"))
