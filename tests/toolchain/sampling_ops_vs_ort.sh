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
py=$1 root=$2 build=$3
shift 3
drivers=${*:-lavapipe}
if [ ! -x "$py" ]; then
  echo "SKIP: $py missing; run scripts/python-env.sh (or scripts/setup.sh)"; exit 77
fi
nm="$root/third_party/cache/node/node_modules"
if [ ! -d "$nm/onnxruntime-node" ]; then
  echo "SKIP: ONNX Runtime missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/sampling_ops.onnx" "$tmp/in" "$tmp/ort" \
  >/dev/null 2>"$tmp/ort.log" || { cat "$tmp/ort.log"; exit 1; }
fail=0
for drv in $drivers; do
  if [ "$drv" = swiftshader ]; then
    [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ] || { echo "SKIP: SwiftShader not installed"; exit 77; }
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  # See tests/e2e/classifier.sh for why leak checking is off in this process.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/bundle/model.oinf" --inputs "$tmp/in" --outputs "$tmp/$drv" --arg validation=1 >/dev/null
  "$py" - "$tmp/ort" "$tmp/$drv" "$drv" <<'PY' || fail=1
import json, sys
import numpy as np
ref_dir, got_dir, drv = sys.argv[1:4]
ref = json.load(open(f"{ref_dir}/manifest.json"))
got = json.load(open(f"{got_dir}/manifest.json"))
assert [r["name"] for r in ref] == [g["name"] for g in got], (ref, got)
bad = []
for r, g in zip(ref, got):
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=np.float32)
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32)
    if r["shape"] != g["shape"] or a.shape != b.shape:
        bad.append(f"{r['name']}: shape {g['shape']} != {r['shape']}")
        continue
    if r["name"].startswith("qmm"):
        if not np.array_equal(a, b):
            bad.append(f"{r['name']}: {int(np.sum(a != b))} of {a.size} values differ")
        continue
    err = float(np.max(np.abs(a - b) / (1 + np.abs(a))))
    if not err <= 1e-5:
        bad.append(f"{r['name']}: relative error {err:.3g}")
print(f"{drv}: {len(ref) - len(bad)}/{len(ref)} outputs match ONNX Runtime")
if bad:
    sys.exit(f"{drv}: " + "; ".join(bad))
PY
done
exit $fail
