#!/usr/bin/env bash
# The sampling and cache operators of opsets 19 to 24 (make_sampling_ops_models.py:
# DeformConv with groups, offset groups, mask and bias; TensorScatter linear
# and circular; GridSample on 5-D inputs in every mode, padding and
# align_corners; Resize with antialias and half_pixel_symmetric;
# QLinearMatMul with float16 scales) compiled by oaax-vulkan-toolchain and
# run by oaax-run match ONNX Runtime: |diff| <= 1e-5 * (1 + |ref|) per
# element (the QLinearMatMul output, an integer, exactly); and a cubic
# GridSample on a 5-D input, a DeformConv and an antialiased Resize whose
# loops exceed the per-invocation budget are refused, naming why.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh) or
# without the project's Python environment.
# usage: sampling_ops_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR [DRIVER...]
#   PYTHON: the project's Python environment with the pinned onnx
#   (scripts/python-env.sh; CMake's OAAXVK_ONNX_PYTHON), whose checker knows
#   opset 24
#   DRIVER: lavapipe and/or swiftshader (default lavapipe)
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$1" "$2" "$3"
shift 3
drivers=${*:-lavapipe}
"$py" "$root/tests/toolchain/make_sampling_ops_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/sampling_ops.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
if "$build/oaax-vulkan-toolchain" "$tmp/refused_gridsample3d_cubic.onnx" "$tmp/refused" > "$tmp/refused.log" 2>&1; then
  echo "FAIL: the toolchain converted a cubic GridSample on a 5-D input"; exit 1
fi
grep -q "node 'gs3_cubic' (GridSample): mode bicubic (cubic) is defined only for 4-D inputs" "$tmp/refused.log" \
  || { cat "$tmp/refused.log"; echo "FAIL: the 5-D cubic GridSample refusal does not name the node and the reason"; exit 1; }
for m in deformconv_budget resize_aa_budget; do
  if "$build/oaax-vulkan-toolchain" "$tmp/refused_$m.onnx" "$tmp/refused_$m" > "$tmp/refused_$m.log" 2>&1; then
    echo "FAIL: the toolchain converted refused_$m.onnx, whose loops exceed the per-invocation budget"; exit 1
  fi
  grep -q "above the per-invocation budget" "$tmp/refused_$m.log" \
    || { cat "$tmp/refused_$m.log"; echo "FAIL: refused_$m.onnx is not refused for the loop budget"; exit 1; }
done
# ONNX Runtime warns on stderr that its TensorScatter copies the cache; the
# log is shown only if it fails.
vs_ort_reference "$tmp/sampling_ops.onnx" "$tmp/in" "$tmp/ort" 2>"$tmp/ort.log" || { cat "$tmp/ort.log"; exit 1; }
fail=0 ran=0
for drv in $drivers; do
  vs_ort_use_driver "$drv" || continue
  ran=$((ran + 1))
  vs_ort_run "$tmp/bundle" "$tmp/in" "$tmp/$drv" >/dev/null
  vs_ort_compare "$drv" "$tmp/ort" "$tmp/$drv" || fail=1
done
[ "$ran" -gt 0 ] || exit 77  # no requested driver installed
exit $fail
