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
py=$1 root=$2 build=$3
shift 3
drivers=${*:-lavapipe swiftshader}
nm="$root/third_party/cache/node/node_modules"
if [ ! -d "$nm/onnxruntime-node" ]; then
  echo "SKIP: ONNX Runtime missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/toolchain/make_nd_window_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/nd_windows.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
"$build/oaax-vulkan-toolchain" "$tmp/nd_resize_cubic.onnx" "$tmp/cubic_bundle" > "$tmp/cubic_toolchain.log"
# 3-D convolutions over a small binding limit: taken in output-depth chunks.
(cd "$tmp" && mkdir chunk_archive && cp nd_conv3d_chunks.onnx chunk_archive/model.onnx &&
 cp chunk_config.json chunk_archive/config.json && tar -czf chunks.tar.gz -C chunk_archive model.onnx config.json)
"$build/oaax-vulkan-toolchain" "$tmp/chunks.tar.gz" "$tmp/chunk_bundle" > "$tmp/chunk_toolchain.log"
NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/nd_windows.onnx" "$tmp/in" "$tmp/ort" >/dev/null
NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/nd_conv3d_chunks.onnx" "$tmp/chunk_in" "$tmp/chunk_ort" >/dev/null
fail=0 ran=0
for drv in $drivers; do
  if [ "$drv" = swiftshader ]; then
    [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ] || { echo "swiftshader: not installed, skipped"; continue; }
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  ran=$((ran + 1))
  # See tests/e2e/classifier.sh for why leak checking is off in this process.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/bundle/model.oinf" --inputs "$tmp/in" --outputs "$tmp/$drv" --arg validation=1 >/dev/null
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/cubic_bundle/model.oinf" --inputs "$tmp/cubic_in" --outputs "$tmp/$drv-cubic" \
    --arg validation=1 >/dev/null
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/chunk_bundle/model.oinf" --inputs "$tmp/chunk_in" --outputs "$tmp/$drv-chunks" \
    --arg validation=1 >/dev/null
  "$py" - "$tmp/ort" "$tmp/$drv" "$drv" "$tmp/cubic_ref" "$tmp/$drv-cubic" "$tmp/chunk_ort" "$tmp/$drv-chunks" <<'PY' || fail=1
import json, sys
import numpy as np
ref_dir, got_dir, drv, cubic_ref_dir, cubic_got_dir, chunk_ref_dir, chunk_got_dir = sys.argv[1:8]
pairs = []
for rd, gd in ((ref_dir, got_dir), (cubic_ref_dir, cubic_got_dir), (chunk_ref_dir, chunk_got_dir)):
    ref = json.load(open(f"{rd}/manifest.json"))
    got = json.load(open(f"{gd}/manifest.json"))
    assert [r["name"] for r in ref] == [g["name"] for g in got], (ref, got)
    pairs += [(rd, r, gd, g) for r, g in zip(ref, got)]
bad = []
for ref_dir, r, got_dir, g in pairs:
    if r["dtype"] != g["dtype"]:
        bad.append(f"{r['name']}: dtype {g['dtype']} != {r['dtype']}")
        continue
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=r["dtype"])
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=g["dtype"])
    if r["shape"] != g["shape"] or a.shape != b.shape:
        bad.append(f"{r['name']}: shape {g['shape']} != {r['shape']}")
        continue
    if r["dtype"] != "float32":  # MaxPool Indices: exact
        if not np.array_equal(a, b):
            bad.append(f"{r['name']}: {int(np.sum(a != b))} of {a.size} indices differ")
        continue
    err = float(np.max(np.abs(a - b) / (1 + np.abs(a))))
    if not err <= 1e-5:
        bad.append(f"{r['name']}: relative error {err:.3g}")
print(f"{drv}: {len(pairs) - len(bad)}/{len(pairs)} outputs match ONNX Runtime (cubic Resize: the ONNX reference; "
      f"3-D convolutions in depth chunks included)")
if bad:
    sys.exit(f"{drv}: " + "; ".join(bad))
PY
done
[ "$ran" -gt 0 ] || exit 77  # no requested driver installed
exit $fail
