#!/usr/bin/env bash
# Convolutions, pools and resizes over 1 and 3 spatial dimensions
# (make_nd_window_models.py: Conv, ConvTranspose, MaxPool with Indices,
# AveragePool, LpPool and the global pools with groups, strides, dilations,
# asymmetric pads, auto_pad, ceil_mode and count_include_pad; Resize in
# nearest and linear modes) compiled by oaax-vulkan-toolchain and run by
# oaax-run on lavapipe and SwiftShader match ONNX Runtime:
# |diff| <= 1e-5 * (1 + |ref|) per element, Indices exactly. Cubic Resize
# over 1 and 3 axes, which ONNX Runtime refuses, is held to the ONNX Python
# reference the same way. Exit 77 (skip) without ONNX Runtime
# (scripts/fetch-reference.sh).
# usage: nd_windows_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR [DRIVER...]
#   DRIVER: lavapipe and/or swiftshader (default both; SwiftShader compiles
#   every pipeline anew, about 20 s of CPU here, so ctest runs it apart).
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$1" "$2" "$3"
shift 3
drivers=${*:-lavapipe swiftshader}
"$py" "$root/tests/toolchain/make_nd_window_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/nd_windows.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
"$build/oaax-vulkan-toolchain" "$tmp/nd_resize_cubic.onnx" "$tmp/cubic_bundle" > "$tmp/cubic_toolchain.log"
(cd "$tmp" && mkdir chunk_archive && cp nd_conv3d_chunks.onnx chunk_archive/model.onnx &&
 cp chunk_config.json chunk_archive/config.json && tar -czf chunks.tar.gz -C chunk_archive model.onnx config.json)
"$build/oaax-vulkan-toolchain" "$tmp/chunks.tar.gz" "$tmp/chunk_bundle" > "$tmp/chunk_toolchain.log"
vs_ort_reference "$tmp/nd_windows.onnx" "$tmp/in" "$tmp/ort"
vs_ort_reference "$tmp/nd_conv3d_chunks.onnx" "$tmp/chunk_in" "$tmp/chunk_ort"
fail=0 ran=0
for drv in $drivers; do
  vs_ort_use_driver "$drv" || continue
  ran=$((ran + 1))
  vs_ort_run "$tmp/bundle" "$tmp/in" "$tmp/$drv" >/dev/null
  vs_ort_run "$tmp/cubic_bundle" "$tmp/cubic_in" "$tmp/$drv-cubic" >/dev/null
  vs_ort_run "$tmp/chunk_bundle" "$tmp/chunk_in" "$tmp/$drv-chunks" >/dev/null
  # Cubic Resize: held to the ONNX reference (cubic_ref); 3-D convolutions in
  # depth chunks included.
  vs_ort_compare "$drv" "$tmp/ort" "$tmp/$drv" "$tmp/cubic_ref" "$tmp/$drv-cubic" \
    "$tmp/chunk_ort" "$tmp/$drv-chunks" || fail=1
done
[ "$ran" -gt 0 ] || exit 77  # no requested driver installed
exit $fail
