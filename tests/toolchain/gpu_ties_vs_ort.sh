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
py=$1 root=$2 build=$3
nm="$root/third_party/cache/node/node_modules"
if [ ! -d "$nm/onnxruntime-node" ]; then
  echo "SKIP: ONNX Runtime missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/toolchain/make_gpu_tie_models.py" "$tmp"
fail=0
while read -r m sets; do
  d="$tmp/$m"
  if ! "$build/oaax-vulkan-toolchain" "$d/model.onnx" "$d/bundle" > "$d/toolchain.log" 2>&1; then
    echo "$m: conversion failed:"; tail -5 "$d/toolchain.log"; fail=1; continue
  fi
  ref="$d/model.onnx"
  for s in $sets; do
    NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$ref" "$d/$s" "$d/$s.ort" >/dev/null
  done
done < "$tmp/models.txt"
for drv in lavapipe swiftshader; do
  if [ "$drv" = swiftshader ]; then
    [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ] || { echo "swiftshader: not installed, skipped"; continue; }
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  while read -r m sets; do
    d="$tmp/$m"
    [ -f "$d/bundle/model.oinf" ] || continue
    # Every input set of the model on one loaded bundle (oaax-run with
    # several input sets); see tests/e2e/classifier.sh for why leak checking
    # is off in this process.
    args=()
    for s in $sets; do args+=(--inputs "$d/$s" --outputs "$d/$s.$drv"); done
    if ! ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$build/oaax-run" --model "$d/bundle/model.oinf" \
        "${args[@]}" --arg validation=1 > "$d/$drv.log" 2>&1; then
      echo "$drv: $m: oaax-run failed:"; tail -5 "$d/$drv.log"; fail=1; continue
    fi
    for s in $sets; do
      "$py" - "$d/$s.ort" "$d/$s.$drv" "$drv: $m $s" <<'PY' || fail=1
import json, sys
import numpy as np
ref_dir, got_dir, what = sys.argv[1:4]
ref = json.load(open(f"{ref_dir}/manifest.json"))
got = json.load(open(f"{got_dir}/manifest.json"))
assert [r["name"] for r in ref] == [g["name"] for g in got], (ref, got)
bad = []
for r, g in zip(ref, got):
    if r["dtype"] != g["dtype"] or r["shape"] != g["shape"]:
        bad.append(f"{r['name']}: {g['dtype']} {g['shape']}, ONNX Runtime {r['dtype']} {r['shape']}")
        continue
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=r["dtype"])
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=g["dtype"])
    if a.dtype.kind == "f" and r["name"].endswith("_approx"):
        nan = np.isnan(a)
        err = float(np.max(np.abs(a - b)[~nan] / (1 + np.abs(a[~nan])), initial=0.0))
        if not (err <= 1e-6 and np.array_equal(nan, np.isnan(b))):
            bad.append(f"{r['name']}: error {err:.3g}; got {b[:8]}, ONNX Runtime {a[:8]}")
    elif a.dtype.kind == "f":
        same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
        if not same.all():
            i = int(np.argmin(same))
            bad.append(f"{r['name']}: {int((~same).sum())} of {a.size} differ; element {i} is {b[i]!r}, "
                       f"ONNX Runtime {a[i]!r}")
    elif not np.array_equal(a, b):
        i = int(np.argmax(a != b))
        bad.append(f"{r['name']}: element {i} is {b[i]}, ONNX Runtime {a[i]}")
if bad:
    sys.exit(f"{what}: " + "; ".join(bad))
print(f"{what}: {len(ref)}/{len(ref)} outputs match ONNX Runtime")
PY
    done
  done < "$tmp/models.txt"
done
exit $fail
