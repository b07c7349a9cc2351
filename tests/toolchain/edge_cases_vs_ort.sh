#!/usr/bin/env bash
# Models whose answers hinge on details that are easy to get silently wrong
# (make_edge_models.py: activations after integer operators, integer
# constants folded with wrap-around, float -> int64 Cast outputs beyond int32,
# batch-first recurrent layers with initial states, Resize align_corners /
# pytorch_half_pixel lengths, run-time Pad pads at [1, 3, 224, 224], ceil_mode
# pooling over a dynamic height) converted by oaax-vulkan-toolchain and run by
# oaax-run on lavapipe and SwiftShader for every input set match ONNX
# Runtime (on the model's reference.onnx where ONNX Runtime lacks the mode,
# batch-first recurrent layers): the same dtype and shape, integers exactly, floats to
# |diff| <= 1e-4 * (1 + |ref|) (NaN where ONNX Runtime has NaN).
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: edge_cases_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR [DRIVER...]
#   DRIVER: lavapipe and/or swiftshader (default both, in that order)
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$1" "$2" "$3"
shift 3
"$py" "$root/tests/toolchain/make_edge_models.py" "$tmp"
vs_ort_model_sets "${*:-lavapipe swiftshader}" --tol 1e-4
