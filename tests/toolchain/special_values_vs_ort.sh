#!/usr/bin/env bash
# Math operators at the edges of their domains (make_special_value_models.py:
# +-0, +-inf, NaN, subnormals, +-1 for the inverse trigonometric functions,
# exp overflow and underflow, Pow's C99 special cases, x / +-0, fmod by 0,
# Min / Max / Clip with NaN, Cast, softmax / log-sum-exp rows holding -inf,
# +inf and NaN, LayerNormalization of constant rows) converted by
# oaax-vulkan-toolchain and run by oaax-run match ONNX Runtime: NaN exactly
# where ONNX Runtime has NaN, +-inf exactly, the sign of every zero, and
# finite values to |diff| <= 1e-5 * (1 + |ref|). The kernels decide these
# cases on the bits (shaders/float_math.glsl; docs/kernels.md, "Special
# values"), since GLSL leaves the built-ins undefined there and the drivers
# differ.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: special_values_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR [DRIVER...]
#   DRIVER: lavapipe and/or swiftshader (default both, in that order)
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$1" "$2" "$3"
shift 3
"$py" "$root/tests/toolchain/make_special_value_models.py" "$tmp"
vs_ort_model_sets "${*:-lavapipe swiftshader}" --tol 1e-5 --signed-zeros
