#!/usr/bin/env bash
# Models whose answers sit exactly on a rounding tie (make_gpu_tie_models.py:
# integer quotients through Div / Floor / Ceil / Mod, Resize nearest on .5
# coordinates, NMS with the IoU at the threshold, subnormals in NonZero /
# Unique / ArgMax / TopK / Cast, Sin / Cos / Tan far outside [-pi, pi], Det
# of singular matrices) converted by oaax-vulkan-toolchain and run by
# oaax-run on lavapipe and SwiftShader match ONNX Runtime: the same dtype and
# shape and the same values bit for bit (NaN where ONNX Runtime has NaN),
# except outputs named *_approx, to |diff| <= 1e-6 * (1 + |ref|). The kernels
# compute these with shaders/exact_math.glsl and shaders/float_order.glsl
# (docs/kernels.md, "Numerics on GPUs"); gpu_div_emulation.sh runs this
# script on a test build with a GPU's approximate division, which these CPU
# drivers do not have.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: gpu_ties_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$@"
"$py" "$root/tests/toolchain/make_gpu_tie_models.py" "$tmp"
vs_ort_model_sets "lavapipe swiftshader" --bitwise --approx-suffix _approx --approx-tol 1e-6
