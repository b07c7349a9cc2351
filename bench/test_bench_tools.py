#!/usr/bin/python3
"""Checks the benchmark suite's own arithmetic (ctest bench.tools): FLOP counts
of the generated kernels, the intermediate-tensor and peak-live analysis on a
graph with known sizes, and the report on a synthetic result set."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_probe  # noqa: E402
import models  # noqa: E402
import report  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402


class KernelModels(unittest.TestCase):
    def analyze(self, name):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.onnx")
            models.make_kernel_model(name, p)
            return models.analyze(p)

    def test_conv3x3_flops(self):
        self.assertEqual(self.analyze("conv3x3_56x56x64-64")["flops"], 2 * 64 * 56 * 56 * 64 * 9)

    def test_strided_conv_flops(self):
        self.assertEqual(self.analyze("conv3x3s2_56x56x128-128")["flops"], 2 * 128 * 28 * 28 * 128 * 9)

    def test_depthwise_flops_count_one_input_channel(self):
        self.assertEqual(self.analyze("dwconv3x3_112x112x96")["flops"], 2 * 96 * 112 * 112 * 9)

    def test_matmul_flops(self):
        self.assertEqual(self.analyze("matmul_1024")["flops"], 2 * 1024 ** 3)
        self.assertEqual(self.analyze("matmul_256")["flops"], 2 * 256 ** 3)

    def test_single_node_has_no_intermediates(self):
        st = self.analyze("relu_4M")
        self.assertEqual((st["onnx_nodes"], st["intermediate_bytes"], st["peak_live_bytes"]), (1, 0, 0))


class Liveness(unittest.TestCase):
    def test_chain_and_branch(self):
        # x[13] -> a = Relu(x) -> b = Neg(a) -> c = Add(a, b)[13] -> y = Abs(c)
        # a lives from node 0 to node 2, b from 1 to 2, c from 2 to 3:
        # peak = a + b + c at node 2 = 3 * 52 bytes; all intermediates = 3 * 52.
        f = TensorProto.FLOAT
        nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
                 helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Abs", ["c"], ["y"])]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [13])],
                              [helper.make_tensor_value_info("y", f, [13])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.onnx")
            import onnx
            onnx.save(m, p)
            st = models.analyze(p)
        self.assertEqual(st["onnx_nodes"], 4)
        self.assertEqual(st["intermediate_bytes"], 3 * 52)
        self.assertEqual(st["peak_live_bytes"], 3 * 52)
        self.assertEqual(st["unknown_tensors"], 0)

    def test_symbolic_input_bound(self):
        f = TensorProto.FLOAT
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", f, ["n", 7])],
                              [helper.make_tensor_value_info("y", f, ["n", 7])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.onnx")
            import onnx
            onnx.save(m, p)
            self.assertEqual(models.analyze(p, {"x": [3, 7]})["intermediate_bytes"], 3 * 7 * 4)
            self.assertEqual(models.analyze(p)["unknown_tensors"], 1)


class Report(unittest.TestCase):
    def test_markdown_carries_the_figures(self):
        r = {"suite": {"quick": False, "swiftshader": False, "wall_s": 600},
             "machine": {"cpu": "Test CPU", "cores": 2, "date": "d", "git_commit": "abc", "icd": "x",
                         "load_average_start": [1, 1, 1], "load_average_end": [2, 2, 2],
                         "vulkan_device": {"name": "llvmpipe", "driver_info": "Mesa"}},
             "roofline": {"fma_f32_gflops": 95.0, "copy_gbs": 4.0},
             "kernels": [{"name": "k", "description": "d", "kind": "compute", "dispatches": 1, "gpu_us": 1000.0,
                          "gflops": 19.0, "gbs": 1.0, "pct_roofline": 20.0, "roofline": "fma_f32"}],
             "models": [{"name": "m", "input_shapes": None, "latency_ms": {"p50": 50.0}, "onnx_nodes": 10,
                         "dispatches": 4, "arena_bytes": 2 ** 20, "peak_live_bytes": 2 ** 21,
                         "intermediate_bytes": 2 ** 22, "throughput": {"1": 20.0, "2": 30.0},
                         "ort": {"latency_ms": {"p50": 100.0}, "throughput": {}},
                         "speedup_vs_ort_latency": 2.0}],
             "host_overhead": {"oaax_round_trip_us_p50": 18.0, "ort_run_us_p50": 9.0, "ratio_p50": 2.0,
                               "oaax_round_trip_us_mean": 20.0, "ort_run_us_mean": 10.0, "oaax_host_us_mean": 1.0,
                               "iterations": 10}}
        md = report.markdown(r)
        for s in ("Test CPU", "llvmpipe", "95.0 GFLOP/s", "20.0% of FMA", "| 2.000 |", "| 0.50 |", "1.50×",
                  "18.0 µs", "2.00×"):
            self.assertIn(s, md)

    def test_load_time_section(self):
        r = {"load_time": [{"name": "m", "ort_session_ms": 40.0, "first_ms": 9000.0, "second_ms": 1000.0,
                            "second_vs_ort": 25.0, "pipelines": 30, "threads": 2,
                            "second_parts_ms": {"weights": 12.0, "pipelines": 900.0, "warmup": 80.0}},
                           {"name": "n", "ort_session_ms": 50.0, "error": "boom"}]}
        md = "\n".join(report.load_time_section(r))
        self.assertIn("| m | 30 (2) | 9000 | 1000 | 40 | 25.0× | 12 / 900 / 80 |", md)
        self.assertIn("| n | | not measured: boom | | 50 | | |", md)
        self.assertIn("not measured in this run", "\n".join(report.load_time_section({})))



def _probe_results():
    """A synthetic run: roofline 20 GFLOP/s, a probe at 64x2048x256 whose
    times make the arithmetic checkable by hand, and kernels / models that
    miss some targets and meet others."""
    t = {"ssbo": 100.0, "ubo": 55.0, "w_regs": 50.0, "l_regs": 52.0, "ubo_l_regs": 4.0, "no_loads": 2.0}
    flops = 2.0 * 64 * 2048 * 256
    variants = [{"name": n, "ms": ms, "gflops": flops / (ms * 1e-3) * 1e-9,
                 "pct_fma_roofline": 100.0 * flops / (ms * 1e-3) * 1e-9 / 20.0} for n, ms in t.items()]
    variants.append({"name": "shared", "error": "boom"})
    return {
        "suite": {"quick": False, "swiftshader": False, "wall_s": 600},
        "machine": {"cpu": "Test CPU", "cores": 2, "date": "d", "git_commit": "abc", "icd": "x",
                    "load_average_start": [1, 1, 1], "load_average_end": [2, 2, 2],
                    "vulkan_device": {"name": "llvmpipe", "driver_info": "Mesa 22.3.6", "vendor_id": 65541},
                    "device_features": {"storage_buffer_16bit_access": True, "shader_float16": True,
                                        "subgroup_size": 8, "subgroup_operations": ["basic", "vote"],
                                        "cooperative_matrix": False}},
        "roofline": {"fma_f32_gflops": 20.0, "copy_gbs": 1.0},
        "gemm_probe": {"settings": {"m": 64, "n": 2048, "k": 256, "repetitions": 3, "benchmark_min_time": 0.3,
                                    "statistic": "median"},
                       "roofline_fma_f32_gflops": 20.0, "probe_fma_f32_gflops": 21.0, "variants": variants},
        "kernels": [
            {"name": "matmul_1024", "description": "d", "kind": "compute", "roofline": "fma_f32", "dispatches": 1,
             "gpu_us": 1e6, "gflops": 2.0, "gbs": 0.1, "pct_roofline": 10.0},
            {"name": "conv3x3", "description": "d", "kind": "compute", "roofline": "fma_f32", "dispatches": 1,
             "gpu_us": 1e6, "gflops": 8.0, "gbs": 0.1, "pct_roofline": 40.0},
            {"name": "dwconv3x3", "description": "d", "kind": "memory", "roofline": "copy", "dispatches": 1,
             "gpu_us": 1e6, "gbs": 0.6, "pct_roofline": 60.0},
            {"name": "relu_4M", "description": "d", "kind": "memory", "error": "oaax-run exit 1: x"}],
        "models": [
            {"name": "resnet50", "input_shapes": None, "flops": 8e9, "latency_ms": {"p50": 4000.0},
             "gflops": 2.0, "pct_roofline": 10.0, "onnx_nodes": 169, "ort_optimized_nodes": 58, "dispatches": 60,
             "barriers": 59, "arena_bytes": 130, "peak_live_bytes": 100, "throughput": {"1": 0.25},
             "notes": ["depth 2 not measured: ~599 s needed, 285 s of budget left"],
             "ort": {"latency_ms": {"p50": 400.0}, "throughput": {}}},
            {"name": "mobilenet_v2", "input_shapes": None, "flops": 6e8, "latency_ms": {"p50": 100.0},
             "gflops": 6.0, "pct_roofline": 30.0, "onnx_nodes": 209, "ort_optimized_nodes": 56, "dispatches": 54,
             "barriers": 50, "arena_bytes": 110, "peak_live_bytes": 100, "throughput": {"1": 10.0, "2": 12.0},
             "ort": {"latency_ms": {"p50": 50.0}, "throughput": {}}},
            {"name": "ppocr_cls", "error": "skipped: the suite's time budget (1380 s) is spent"}],
        "host_overhead": {"error": "oaax-run timed out after 900 s"},
        "device_variants": {"rows": [
            {"name": "matmul_1024", "default": {"gpu_us": 2000.0}, "cpu": {"gpu_us": 500.0, "speedup_vs_default": 4.0},
             "gpu": {"gpu_us": 2500.0, "speedup_vs_default": 0.8, "table": "gpu", "note": "",
                     "max_rel_diff_vs_default": 3e-4}},
            {"name": "softmax", "error": "oaax-run exit 1: y"}]}}


class Targets(unittest.TestCase):
    def setUp(self):
        self.r = _probe_results()
        self.t = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}

    def test_probe_arithmetic(self):
        # W loads: l_regs - no_loads = 50 ms from an SSBO, ubo_l_regs - no_loads = 2 ms from a UBO: 25x.
        # Loads take 1 - 2/100 = 98% of ssbo's time. ssbo: 0.671 GFLOP/s = 3.4% of 20; no_loads 167.8%.
        c = report.probe_cause(self.r)
        for s in ("`ssbo`) at 3.4% of the FMA roofline", "(`no_loads`) reach 167.8%", "98% of the time",
                  "25× cheaper", "50.0 → 2.00 ms", "bounds the kernel at 6.1% (`ubo`)", "llvmpipe, Mesa 22.3.6"):
            self.assertIn(s, c)
        # L loads: w_regs - no_loads = 48 ms over 64*2048*256/32 = 1048576 loads = 45.8 ns.
        self.assertAlmostEqual(report.probe_load_ns(self.r), 48e6 / 1048576, places=6)

    def test_probe_without_a_load_bound_says_so(self):
        for v in self.r["gemm_probe"]["variants"]:
            if v["name"] == "no_loads":
                v["pct_fma_roofline"] = 5.0
        self.assertIn("does not show a load bound", report.probe_cause(self.r))

    def test_targets_met_and_unmet(self):
        t = self.t
        self.assertIs(t["ResNet-50"]["met"], False)
        # 20% of 20 GFLOP/s = 4 GFLOP/s: 8 GFLOP in 2000 ms.
        self.assertIn("≤ 2000 ms", t["ResNet-50"]["measured"])
        self.assertIn("4000 ms = 10.0%", t["ResNet-50"]["measured"])
        self.assertIn("3.4% of the FMA roofline", t["ResNet-50"]["note"])  # quotes the probe
        self.assertIs(t["GEMM"]["met"], False)  # matmul 10% < 30 although conv3x3 is at 40%
        self.assertIn("167.8%", t["GEMM"]["note"])
        self.assertIsNone(t["depthwise"]["met"])  # dwconv3x3 at 60%, but relu_4M failed and the real dwconv absent
        self.assertIn("relu_4M: not measured (oaax-run exit 1: x)", t["depthwise"]["note"])
        self.assertIn("dwconv3x3_112x112x96: not measured (not part of this run)", t["depthwise"]["note"])
        self.assertIs(t["dispatches"]["met"], False)  # resnet50 60 > 58
        self.assertIn("resnet50 (+2)", t["dispatches"]["note"])
        self.assertIn("ppocr_cls: not measured (skipped: the suite's time budget", t["dispatches"]["note"])
        self.assertIsNone(t["zero"]["met"])
        self.assertIn("resnet50 59 barriers / 60 dispatches", t["zero"]["measured"])
        self.assertIs(t["activation"]["met"], False)  # resnet50 1.30x
        self.assertIn("resnet50 1.30×; mobilenet_v2 1.10×", t["activation"]["measured"])
        self.assertIn("bound used: the peak live", t["activation"]["note"])
        self.assertIs(t["frames_in_flight"]["met"], True)  # mobilenet_v2 1.20x, no profile=1 bias
        self.assertIn("resnet50: not measured (depth 2 not measured: ~599 s", t["frames_in_flight"]["note"])
        self.assertIsNone(t["host"]["met"])
        self.assertIn("not measured in this run: oaax-run timed out", t["host"]["note"])
        self.assertIs(t["fp16"]["met"], True)  # the gpu table ran; the failed softmax row is left out
        self.assertIn("storageBuffer16BitAccess yes", t["fp16"]["measured"])
        self.assertIn("matmul_1024 0.80×", t["fp16"]["measured"])
        self.assertIn("matmul_1024 0.0003", t["fp16"]["measured"])
        self.assertIs(t["VK_KHR_cooperative_matrix"]["met"], False)
        self.assertIn("exposed by the device: no", t["VK_KHR_cooperative_matrix"]["measured"])
        self.r["device_variants"]["rows"][0]["gpu"]["table"] = "default"  # the runtime fell back everywhere
        self.assertIs({row["target"].split(" ")[0]: row for row in report.targets(self.r)}["fp16"]["met"], False)
        # With the toolchain's barrier lower bound on every converted model.
        self.r["models"][0]["barriers_lower_bound"] = 57
        self.r["models"][1]["barriers_lower_bound"] = 50
        z = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}["zero"]
        self.assertIs(z["met"], False)
        self.assertIn("resnet50 59 barriers, lower bound 57 (60 dispatches)", z["measured"])
        self.assertIn("avoidable by reordering: resnet50 2", z["note"])
        self.r["models"][0]["barriers_lower_bound"] = 59
        z = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}["zero"]
        self.assertIs(z["met"], True)
        md = report.markdown(self.r)
        self.assertIn("| matmul_1024 | 2.00 | 2.50 (0.80×) | 0.50 (4.00×) | 0.0003 |", md)
        self.assertIn("| softmax | failed: oaax-run exit 1: y |", md)

    def test_host_overhead_cause_prices_the_submission(self):
        h = {"oaax_round_trip_us_p50": 100.0, "ort_run_us_p50": 10.0, "oaax_host_us_mean": 0.5}
        c = report.host_overhead_cause(h, 80.0)
        for s in ("takes 80.0 µs", "= 80% of the round trip", "8.0× ONNX Runtime", "0.5 µs (mean)",
                  "alone exceeds the target"):
            self.assertIn(s, c)
        self.assertIn("the rest is the dispatch itself", report.host_overhead_cause(h, 15.0))
        self.assertIn("not separated in this run", report.host_overhead_cause(h, None))

    def test_memory_bound_below_half_of_copy(self):
        self.r["kernels"][3] = {"name": "relu_4M", "description": "d", "kind": "memory", "roofline": "copy",
                                "dispatches": 1, "gpu_us": 1e6, "gbs": 0.4, "pct_roofline": 40.0}
        self.r["kernels"][2]["name"] = "dwconv3x3_112x112x96"
        t = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}
        self.assertIs(t["depthwise"]["met"], False)
        # probe: (50 - 2) ms over 64*2048*256/32 L loads = 45.8 ns per lane-varying SSBO vec4 load.
        self.assertIn("below: relu_4M", t["depthwise"]["note"])
        self.assertIn("≈ 46 ns of GPU time", t["depthwise"]["note"])
        self.r["kernels"][3]["pct_roofline"] = 55.0
        t = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}
        self.assertIs(t["depthwise"]["met"], True)

    def test_biased_fif_gain_does_not_count(self):
        self.r["models"][1]["notes"] = ["depth-1 latency measured with profile=1 (timestamps on)"]
        t = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}
        self.assertIs(t["frames_in_flight"]["met"], False)
        self.assertIn("1.20×¹", t["frames_in_flight"]["measured"])

    def test_markdown_sections(self):
        md = report.markdown(self.r)
        self.assertIn("## Targets (issue 7)", md)
        self.assertIn("| host overhead per inference ≤ 2× ONNX Runtime's (one-node model) | — | — | not measured", md)
        self.assertIn("## GEMM load-path probe", md)
        self.assertIn("| `ssbo` | SSBO vec4 (gemm_cpu before texel bindings) | SSBO vec4 | 100.00 | 0.67 | 3.4% |", md)
        self.assertIn("| `shared` | shared (filled once) | SSBO vec4 | failed: boom |", md)
        self.assertLess(md.index("## Targets"), md.index("## GEMM load-path probe"))

    def test_missing_probe_and_model(self):
        del self.r["gemm_probe"]
        self.r["models"] = [m for m in self.r["models"] if m["name"] != "resnet50"]
        t = {row["target"].split(" ")[0]: row for row in report.targets(self.r)}
        self.assertIsNone(t["ResNet-50"]["met"])
        self.assertIn("not measured in this run", t["ResNet-50"]["note"])
        self.assertIn("no probe figures in this run", t["GEMM"]["note"])
        self.assertIn("not measured in this run: the GEMM load-path probe was not part of this run",
                      report.markdown(self.r))


class GpuCheckNumerics(unittest.TestCase):
    """The device check's numerics step (gpu_check.py) compares with the
    ctests' compare_outputs.py and options: a reference with one value changed
    is reported with its first differing element and fails the run."""

    def setUp(self):
        import numpy as np
        import gpu_check
        self.np, self.gc = np, gpu_check
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.co = gpu_check.load_compare_outputs(os.path.join(root, "tests", "reference", "compare_outputs.py"))
        self.tmp = tempfile.TemporaryDirectory()
        self.y = np.array([1.0, -0.0, np.nan, np.inf, 2.5], np.float32)
        self.idx = np.array([3, 1, 0], np.int64)
        self.got = self.write("got", self.y, self.idx)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, y, idx):
        import json
        d = os.path.join(self.tmp.name, name)
        os.makedirs(d)
        y.tofile(os.path.join(d, "0.bin"))
        idx.tofile(os.path.join(d, "1.bin"))
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump([{"name": "y", "dtype": "float32", "shape": [5], "file": "0.bin"},
                       {"name": "idx", "dtype": "int64", "shape": [3], "file": "1.bin"}], f)
        return d

    def compare(self, ref, options):
        return self.co.compare_dirs(self.co.parser().parse_args(["t", ref, self.got] + options))

    def test_same_outputs_match(self):
        ref = self.write("ref", self.y.copy(), self.idx.copy())
        self.assertEqual(self.compare(ref, ["--tol", "1e-5", "--signed-zeros"]), (2, []))
        self.assertEqual(self.compare(ref, ["--bitwise"]), (2, []))

    def test_a_wrong_reference_is_reported_and_fails_the_run(self):
        y = self.y.copy()
        y[4] = 2.6
        count, bad = self.compare(self.write("ref", y, self.idx.copy()), ["--tol", "1e-5", "--signed-zeros"])
        self.assertEqual(count, 2)
        self.assertEqual(len(bad), 1)
        self.assertIn("element 4 is", bad[0])
        self.assertIn("ONNX Runtime 2.6", bad[0])
        n = {"variants": ["auto"], "suites": {"special_values": {"test": "t.sh", "compare": "--tol 1e-5"}},
             "outputs_compared": 2, "mismatches": 1, "errors": 0, "seconds": 1.0,
             "models": [{"suite": "special_values", "model": "m", "sets": ["s"],
                         "variants": {"auto": {"table": "gpu", "outputs": count, "mismatches": bad}}}]}
        self.assertEqual(len(self.gc.numerics_wrong(n)), 1)
        self.assertEqual(self.gc.numerics_errors(n), [])
        md = "\n".join(self.gc.render_numerics(n))
        self.assertIn("| special_values/m | s | gpu, 1/2 ✘ |", md)
        self.assertIn("special_values/m (auto): " + bad[0], md)

    def test_sign_of_zero_and_index_outputs(self):
        y = self.y.copy()
        y[1] = 0.0
        idx = self.idx.copy()
        idx[0] = 4
        ref = self.write("ref", y, idx)
        _, bad = self.compare(ref, ["--tol", "1e-5", "--signed-zeros"])
        self.assertEqual(len(bad), 2)
        self.assertIn("sign of zero differs; element 1", bad[0])
        self.assertIn("idx: 1 of 3 differ; element 0 is 3, ONNX Runtime 4", bad[1])
        self.assertEqual(len(self.compare(ref, ["--tol", "1e-5"])[1]), 1)  # the zero's sign is not asked for
        self.assertEqual(len(self.compare(ref, ["--bitwise"])[1]), 2)  # +0 and -0 differ in their bits

    def test_errors_fail_the_run(self):
        n = {"models": [{"suite": "gpu_ties", "model": "m", "sets": ["s0"], "error": "conversion failed",
                         "variants": {}}]}
        self.assertEqual(self.gc.numerics_errors(n), ["numerics gpu_ties/m: conversion failed"])
        self.assertEqual(self.gc.numerics_errors({"error": "no sets"}), ["numerics: no sets"])


class ConvProbe(unittest.TestCase):
    """bench/conv_probe.py (gpu_check.py's probe step): each Conv's GEMM twin
    has the Conv's M, N and K, the profile log is read per node, and the
    table says when a table's outputs disagree with the default's."""

    def test_twins_have_the_convs_gemm(self):
        for small in (False, True):
            for _, cases in conv_probe.groups(small):
                by = {c["name"]: c for c in cases}
                for c in cases:
                    if c.get("twin"):
                        self.assertIn(c["twin"], by, c["name"])
                        if c["name"] != "pw_odd":  # its odd H*W is the point: one column per pixel fewer
                            self.assertEqual(c["gemm"], by[c["twin"]]["gemm"], c["name"])
        pw = {c["name"]: c for _, cs in conv_probe.groups(False) for c in cs}
        # ResNet-50 stage 1 at batch 32: 256 x (32 * 56 * 56) x 64; the 3x3 stage-3 Conv: K = 256 * 9.
        self.assertEqual(pw["pw"]["gemm"], [256, 100352, 64])
        self.assertEqual(conv_probe.flops(pw["pw"]), 2 * 256 * 100352 * 64)
        self.assertEqual(pw["c3"]["gemm"], [256, 32 * 196, 2304])
        self.assertEqual(pw["mm_xw"]["gemm"], [100352, 256, 64])
        self.assertEqual(pw["bmm_wx"]["gemm"], [256, 100352, 64])

    def test_models_check_and_name_their_nodes(self):
        import onnx
        with tempfile.TemporaryDirectory() as d:
            for name, cases in conv_probe.groups(True):
                p = os.path.join(d, name + ".onnx")
                ins = conv_probe.build_model(cases, p)
                m = onnx.load(p)
                self.assertEqual(m.ir_version, 8)
                self.assertEqual({n.name for n in m.graph.node if n.op_type in ("Conv", "MatMul")},
                                 {c["name"] for c in cases})
                self.assertEqual([o.name for o in m.graph.output], ["y_" + c["name"] for c in cases])
                self.assertEqual(len({n for n, _, _ in ins}), len(ins))
                if name == "pointwise":
                    # pw, pw_bias, pw_relu and pw_res share one input; pw_res adds its residual.
                    self.assertEqual(sum(1 for n, _, _ in ins if n == "pw_x"), 1)
                    self.assertIn("pw_res_r", [n for n, _, _ in ins])

    def test_node_times_median_after_the_first_frame(self):
        lines = []
        for f, (a, b) in enumerate([(900.0, 50.0), (100.0, 10.0), (120.0, 11.0), (110.0, 30.0)]):
            lines.append(f"[info] profile frame #{f} dispatch 0: {a} us kernel 'conv2d_gemm_gpu' (#3) "
                         f"groups (784, 2, 1) op 'pw'")
            lines.append(f"[info] profile frame #{f} dispatch 1: {b} us kernel 'gemm_gpu' (#4) "
                         f"groups (2, 784, 1) op 'mm_xw'")
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "log")
            with open(p, "w") as f:
                f.write("\n".join(lines) + "\n")
            frames = conv_probe.dispatch_times(p)
        t = conv_probe.node_times(frames, "pw")
        self.assertEqual((t["us"], t["frames"], t["kernels"], t["groups"]),
                         (110.0, 3, ["conv2d_gemm_gpu"], [784, 2, 1]))
        self.assertEqual(conv_probe.node_times(frames, "mm_xw")["us"], 11.0)
        self.assertIsNone(conv_probe.node_times(frames, "absent"))

    def test_report_rows_and_disagreements(self):
        res = {"small": False, "seconds": 40.0, "cases": [
            {"name": "pw", "what": "1x1 Conv", "gemm_mnk": [256, 100352, 64], "gflop": 3.29, "twin": "mm_wx",
             "selected": "conv2d_gemm (1x1 s1 g1) [gpu: conv2d_gemm_gpu tile 128x128 vec4 A vec4 B, cpu: x]",
             "variants": {"gpu": {"us": 600.0, "tflops": 5.48, "kernels": ["conv2d_gemm_gpu"],
                                  "groups": [784, 2, 1]},
                          "default": {"us": 200.0, "tflops": 16.4, "kernels": ["conv2d_gemm"], "groups": [1568, 4, 1]},
                          "gpu_fp16": {"error": "no profiled dispatch names this node"}},
             "agrees": {"gpu": 3e-7, "gpu_fp16": 0.5}},
            {"name": "mm_wx", "what": "MatMul", "gemm_mnk": [256, 100352, 64], "gflop": 3.29, "twin": None,
             "selected": None,
             "variants": {"gpu": {"us": 150.0, "tflops": 21.9, "kernels": ["gemm_gpu"], "groups": [784, 2, 1]}},
             "agrees": {}}],
            "models": [{"name": "pointwise", "variants": {"gpu_fp16": {"precision": "8 rows run fp16 forms, 8 of "
                                                                        "them on cooperative matrices"}}}]}
        md = "\n".join(conv_probe.render(res))
        self.assertIn("| `pw` 1x1 Conv | 256·100352·64 | 3.29 | 128x128 v4A v4B | 600 µs, **5.48** "
                      "(conv2d_gemm_gpu, 784×2×1) | 200 µs, **16.4** (conv2d_gemm, 1568×4×1) | error: no profiled "
                      "dispatch names this node | 4.00 | 3.0e-07 / 5.0e-01 |", md)
        self.assertIn("| `mm_wx` MatMul | 256·100352·64 | 3.29 | — | 150 µs, **21.9** (gemm_gpu, 784×2×1) | — | — "
                      "| — | — / — |", md)
        self.assertIn("8 of them on cooperative matrices", md)
        self.assertIn("- Conv ÷ twin (`gpu`): `pw` (K 64) 4.00, `pw_deep` (K ?) —, `c3` (im2col) —", md)
        self.assertIn("- The shape in `gemm_gpu`: `mm_wx` 21.9, `mm_xw` —, `bmm_wx` — TFLOP/s", md)
        self.assertIn("- Equal tiles (`gpu` against `default`): `pw_deep` — / —", md)
        bad = conv_probe.disagreements(res)
        self.assertEqual(len(bad), 1)
        self.assertIn("pw gpu_fp16: rel. L2 0.5", bad[0])
        self.assertEqual(conv_probe.errors(res), ["probe pw gpu_fp16: no profiled dispatch names this node"])
        self.assertEqual(conv_probe.render({}), [])

    def test_key_figures_price_the_epilogue_steps(self):
        def case(name, us, twin=None, mnk=(256, 100352, 64)):
            return {"name": name, "twin": twin, "gemm_mnk": list(mnk),
                    "variants": {"gpu": {"us": us, "tflops": 2 * 256 * 100352 * 64 / us / 1e6}}}
        res = {"cases": [case("pw", 100.0, "mm_wx"), case("pw_bias", 110.0), case("pw_relu", 111.0),
                         case("pw_res", 150.0), case("mm_wx", 25.0),
                         case("pw_deep", 50.0, "mm_deep", (256, 6272, 1024)),
                         case("mm_deep", 50.0, None, (256, 6272, 1024))]}
        lines = conv_probe.key_figures(res)
        self.assertEqual(lines[0], "Conv ÷ twin (`gpu`): `pw` (K 64) 4.00, `pw_deep` (K 1024) 1.00, `c3` (im2col) —, "
                                   "`c3_b1` — (questions 1, 3, 4, 5)")
        self.assertEqual(lines[1], "Epilogue, each over `pw` (`gpu`): bias +10 µs, bias + Relu +11 µs, bias + "
                                   "residual + Relu +50 µs (question 2)")

    def test_pipeline_statistics_reach_their_cases(self):
        # A stand-in for oaaxvk-pipeline-stats printing its JSON: each pipeline's statistics go to the
        # cases whose node (op) uses it, per table; a device without the extension (exit 77) is noted.
        out = {"device": "X", "pipelines": [
            {"table": "gpu", "kernel": "conv2d_gemm_gpu", "ops": ["pw", "pw_bias"],
             "executables": [{"name": "main", "statistics": {"Register Count": 168, "Spill": True}}]},
            {"table": "default", "kernel": "conv2d_gemm", "ops": ["pw"], "missing_capabilities": ["x"]}]}

        class FakeCheck:
            env = dict(os.environ)

            class budget:  # noqa: N801 - the attribute gpu_check.Check has
                @staticmethod
                def left():
                    return 100.0

        with tempfile.TemporaryDirectory() as d:
            FakeCheck.bin = d
            tool = os.path.join(d, "oaaxvk-pipeline-stats")
            for rc, text in ((0, json.dumps(out)), (77, json.dumps({"error": "no VK_KHR_pipeline_executable"}))):
                with open(tool, "w") as f:
                    f.write(f"#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\nexit {rc}\n")
                os.chmod(tool, 0o755)
                rows = {"pw": {"name": "pw"}, "pw_bias": {"name": "pw_bias"}, "mm_wx": {"name": "mm_wx"}}
                how = conv_probe.pipeline_stats(FakeCheck, "b.oinf", rows)
                if rc == 0:
                    self.assertEqual(how, "ok")
                    self.assertEqual(rows["pw"]["stats"], {"gpu": {"kernel": "conv2d_gemm_gpu", "statistics": {
                        "Register Count": 168, "Spill": True}}})
                    self.assertIn("gpu", rows["pw_bias"]["stats"])
                    self.assertNotIn("stats", rows["mm_wx"])
                    res = {"cases": [dict(r, what="", gemm_mnk=[1, 1, 1], gflop=1.0, variants={}, agrees={})
                                     for r in rows.values()], "models": [{"name": "m", "pipeline_stats": how}]}
                    md = "\n".join(conv_probe.render(res))
                    self.assertIn("| `pw` | gpu | `conv2d_gemm_gpu` | Register Count 168; Spill True |", md)
                else:
                    self.assertEqual(how, "unavailable: no VK_KHR_pipeline_executable")
                    res = {"cases": [], "models": [{"name": "m", "pipeline_stats": how}]}
                    self.assertIn("- Pipeline statistics: unavailable: no VK_KHR_pipeline_executable",
                                  "\n".join(conv_probe.render(res)))
                    self.assertEqual(conv_probe.errors(res), [])
            with open(tool, "w") as f:
                f.write("#!/bin/sh\necho boom >&2\nexit 1\n")
            how = conv_probe.pipeline_stats(FakeCheck, "b.oinf", {})
            self.assertEqual(how, "failed: oaaxvk-pipeline-stats exit 1: boom")
            self.assertEqual(conv_probe.errors({"models": [{"name": "m", "pipeline_stats": how}]}),
                             ["probe m pipeline statistics: failed: oaaxvk-pipeline-stats exit 1: boom"])


if __name__ == "__main__":
    unittest.main()
