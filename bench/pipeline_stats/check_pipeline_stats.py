#!/usr/bin/python3
"""Checks oaaxvk-pipeline-stats (ctest bench.pipeline_stats) on this
machine's Vulkan device: the probe's small "deep" model (a 1x1 Conv and its
MatMul twin, bench/conv_probe.py) converted with "gpu_conv_tiles": "all";
--compile-only must build every row's pipeline of every table (default,
gpu, gpu fp16; gpu coopmat listed with the capabilities the device lacks
where it lacks them) and name the ops; without it the tool must either list
each compiled pipeline's statistics or, on a device without
VK_KHR_pipeline_executable_properties (lavapipe, SwiftShader), exit 77 with
a JSON error naming the extension.

usage: check_pipeline_stats.py PIPELINE_STATS TOOLCHAIN
"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import conv_probe  # noqa: E402


def main():
    tool, toolchain = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as d:
        cases = dict(conv_probe.groups(True))["deep"]
        onnx_path = os.path.join(d, "model.onnx")
        conv_probe.build_model(cases, onnx_path)
        src = os.path.join(d, "model.zip")
        with zipfile.ZipFile(src, "w") as z:
            z.write(onnx_path, "model.onnx")
            z.writestr("config.json", json.dumps({"gpu_conv_tiles": "all", "fp16_weights": False}))
        subprocess.run([toolchain, src, os.path.join(d, "b")], check=True, capture_output=True)
        bundle = os.path.join(d, "b", "model.oinf")

        p = subprocess.run([tool, bundle, "--compile-only"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"--compile-only: exit {p.returncode}: {p.stderr.strip()}")
        out = json.loads(p.stdout)
        got = {(e["table"], e["kernel"]): e for e in out["pipelines"]}
        want = {("default", "conv2d_gemm"), ("default", "gemm"), ("gpu", "conv2d_gemm_gpu"), ("gpu", "gemm_gpu"),
                ("gpu fp16", "conv2d_gemm_gpu_fp16"), ("gpu fp16", "gemm_gpu_fp16"),
                ("gpu coopmat", "conv2d_gemm_gpu_coopmat"), ("gpu coopmat", "gemm_gpu_coopmat")}
        if set(got) != want:
            sys.exit(f"--compile-only: pipelines {sorted(got)}, want {sorted(want)}")
        for (table, kernel), e in got.items():
            op = "pw_deep" if kernel.startswith("conv2d") else "mm_deep"
            if e["ops"] != [op]:
                sys.exit(f"{table} {kernel}: ops {e['ops']}, want [{op}]")
            if ("executables" in e) == ("missing_capabilities" in e):
                sys.exit(f"{table} {kernel}: needs either executables or missing_capabilities: {e}")
            if table != "gpu coopmat" and "missing_capabilities" in e:
                sys.exit(f"{table} {kernel}: not compiled on {out['device']}: {e['missing_capabilities']}")
        print(f"--compile-only: {len(got)} pipelines listed on {out['device']}, "
              f"{sum('executables' in e for e in got.values())} compiled")

        p = subprocess.run([tool, bundle], capture_output=True, text=True)
        out = json.loads(p.stdout)
        if p.returncode == 77:
            if "VK_KHR_pipeline_executable_properties" not in out.get("error", ""):
                sys.exit(f"exit 77 without naming the extension: {out}")
            print(f"statistics: {out['device']}: {out['error']}")
            return 0
        if p.returncode != 0:
            sys.exit(f"exit {p.returncode}: {p.stderr.strip()}")
        for e in out["pipelines"]:
            if "executables" in e and not (e["executables"] and all(x["statistics"] for x in e["executables"])):
                sys.exit(f"{e['table']} {e['kernel']}: no statistics: {e}")
        print(f"statistics: {len(out['pipelines'])} pipelines on {out['device']}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
