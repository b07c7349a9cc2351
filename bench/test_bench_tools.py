#!/usr/bin/python3
"""Checks the benchmark suite's own arithmetic (ctest bench.tools): FLOP counts
of the generated kernels, the intermediate-tensor and peak-live analysis on a
graph with known sizes, and the report on a synthetic result set."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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


if __name__ == "__main__":
    unittest.main()
