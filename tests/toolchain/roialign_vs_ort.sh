#!/usr/bin/env bash
# RoiAlign without a coordinate_transformation_mode attribute at opset 14
# (RoiAlign-10: output_half_pixel, the grid of torchvision's aligned=False
# MultiScaleRoIAlign exports) and at opset 16 (half_pixel), in avg mode with
# a fixed and an adaptive sampling ratio and in max mode, over ROIs with
# fractional corners, smaller than a pixel, past the borders and on pixel
# boundaries (make_roialign_models.py), converted by oaax-vulkan-toolchain and run
# by oaax-run on lavapipe and SwiftShader, match ONNX Runtime:
# |diff| <= 1e-5 * (1 + |ref|) per element.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: roialign_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$@"
"$py" "$root/tests/toolchain/make_roialign_models.py" "$tmp"
vs_ort_model_sets "lavapipe swiftshader"
