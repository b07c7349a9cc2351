#!/usr/bin/env bash
# The shape computations of exported detection, Swin and ViT models
# (make_fold_models.py: Shape -> Cast -> Mul -> Floor -> Cast -> Concat ->
# Resize / Pad, Mod -> Pad, Equal -> Where -> Expand) fold at conversion, and
# the bundle run by oaax-run on lavapipe and SwiftShader matches ONNX Runtime:
# |diff| <= 1e-5 * (1 + |ref|) per element, same output shapes. The Swin and
# ViT chains over a symbolic height and width (window_dyn.onnx, converted
# with ranges) fold into size expressions: one bundle matches ONNX Runtime
# at three sizes on lavapipe.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: fold_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$@"
"$py" "$root/tests/toolchain/make_fold_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/shape_chains.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
# Every shape computation folded: only the data operators reach the device.
"$py" - "$tmp/bundle/conversion-log.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
nodes = {n["Node"] for e in log if e["Message"] == "Kernels selected" for n in e["Data"]["Nodes"]}
left = nodes - {"resize", "pad", "win_pad_op", "pooled", "token", "tokens"}
if left:
    sys.exit("shape computations left to the device: " + ", ".join(sorted(left)))
PY
vs_ort_reference "$tmp/shape_chains.onnx" "$tmp/in" "$tmp/ort"
fail=0
"$build/oaax-vulkan-toolchain" --config "$tmp/window_dyn.json" "$tmp/window_dyn.onnx" "$tmp/dyn_bundle" > "$tmp/dyn.log"
for size in 105_150 120_160 100_147; do
  vs_ort_reference "$tmp/window_dyn.onnx" "$tmp/in_$size" "$tmp/ort_$size"
  vs_ort_run "$tmp/dyn_bundle" "$tmp/in_$size" "$tmp/dyn_$size" >/dev/null
  vs_ort_compare "ranges, at ${size/_/ x }" "$tmp/ort_$size" "$tmp/dyn_$size" || fail=1
done
for drv in lavapipe swiftshader; do
  vs_ort_use_driver "$drv" || continue
  vs_ort_run "$tmp/bundle" "$tmp/in" "$tmp/$drv" >/dev/null
  vs_ort_compare "$drv" "$tmp/ort" "$tmp/$drv" || fail=1
done
exit $fail
