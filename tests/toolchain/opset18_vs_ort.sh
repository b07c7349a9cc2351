#!/usr/bin/env bash
# Operator forms of ai.onnx opset 18 (make_opset18_models.py: ReduceMean,
# ReduceL2 and ReduceLogSumExp with `axes` as an input, ReduceMax without
# axes, Split with `num_outputs` and an
# uneven last chunk, Pad with `axes`; and an opset-23 model of definitions newer than opset 17
# that only admit more types or, Cast, add float8 saturation: Conv-22,
# Transpose / Reshape / Unsqueeze / Identity / Shape / Cast-23) compiled by
# oaax-vulkan-toolchain and run by oaax-run on
# lavapipe match ONNX Runtime: |diff| <= 1e-5 * (1 + |ref|) per element; and
# ReduceMax / ReduceMin-20 of bool values (any / all) and of floats.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh) or
# without the project's Python environment.
# usage: opset18_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
#   PYTHON: the project's Python environment with the pinned onnx
#   (scripts/python-env.sh; CMake's OAAXVK_ONNX_PYTHON), whose checker knows
#   the opsets these models use
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$@"
"$py" "$root/tests/toolchain/make_opset18_models.py" "$tmp"

check() {  # MODEL INPUT_DIR
  "$build/oaax-vulkan-toolchain" "$tmp/$1.onnx" "$tmp/$1.bundle" > "$tmp/toolchain.log"
  vs_ort_reference "$tmp/$1.onnx" "$tmp/$2" "$tmp/$1.ort"
  vs_ort_run "$tmp/$1.bundle" "$tmp/$2" "$tmp/$1.got" >/dev/null
  vs_ort_compare "lavapipe: $1" "$tmp/$1.ort" "$tmp/$1.got"
}
check opset18_mix in
check opset23_mix in23
check opset20_reduce in20
