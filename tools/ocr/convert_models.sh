#!/usr/bin/env bash
# Converts the PP-OCR models with oaax-vulkan-toolchain, shapes bound through
# each archive's config.json, and writes OUT_DIR/{det,rec,cls}/model.oinf
# (+ conversion-log.json).
#
# usage: convert_models.sh TOOLCHAIN ASSETS_DIR OUT_DIR [DET_H DET_W REC_W]
#
# Default (dynamic shapes, one bundle per model for every image):
#   det  x = [1, 3, H, W], H and W in 32..960, multiple of 32 (every PP-OCR
#        detection size: the longer side scaled to <= 960, both sides
#        rounded to multiples of 32)
#   rec  x = [1, 3, 48, W], W in 32..1280, multiple of 32 (a text line's
#        width at height 48; a multiple of 32 keeps the vec4 kernels of the
#        static bundle, and 1280 holds a line 26.7 times longer than high)
# With DET_H DET_W REC_W (static shapes): det [1, 3, DET_H, DET_W] and rec
# [1, 3, 48, REC_W], e.g. 192 384 640.
# The orientation classifier is converted at [1, 3, 48, 192] either way.
set -euo pipefail
if [ $# -ne 3 ] && [ $# -ne 6 ]; then
  echo "usage: convert_models.sh TOOLCHAIN ASSETS_DIR OUT_DIR [DET_H DET_W REC_W]" >&2
  exit 2
fi
tc=$1 assets=$2 out=$3
mode=dynamic det_h=0 det_w=0 rec_w=0
if [ $# -eq 6 ]; then
  mode=static det_h=$4 det_w=$5 rec_w=$6
  for v in "$det_h" "$det_w" "$rec_w"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "convert_models.sh: '$v' is not a positive size" >&2; exit 2; }
  done
fi
for f in ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx; do
  [ -f "$assets/$f" ] || { echo "convert_models.sh: $assets/$f not found (run scripts/fetch-reference.sh)" >&2; exit 1; }
done
mkdir -p "$out"
/usr/bin/python3 - "$assets" "$out" "$mode" "$det_h" "$det_w" "$rec_w" <<'PY'
import json, sys, zipfile
assets, out, mode = sys.argv[1:4]
det_h, det_w, rec_w = map(int, sys.argv[4:7])
if mode == "dynamic":
    side = {"min": 32, "max": 960, "multiple_of": 32}
    det = {"input_shapes": {"x": [1, 3, "H", "W"]}, "dimensions": {"H": side, "W": side}}
    rec = {"input_shapes": {"x": [1, 3, 48, "W"]}, "dimensions": {"W": {"min": 32, "max": 1280, "multiple_of": 32}}}
else:
    det = {"input_shapes": {"x": [1, 3, det_h, det_w]}}
    rec = {"input_shapes": {"x": [1, 3, 48, rec_w]}}
cls = {"input_shapes": {"x": [1, 3, 48, 192]}}
for name, onnx, config in [("det", "ch_PP-OCRv4_det_infer.onnx", det),
                           ("rec", "ch_PP-OCRv4_rec_infer.onnx", rec),
                           ("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", cls)]:
    with zipfile.ZipFile(f"{out}/{name}.zip", "w") as z:
        z.write(f"{assets}/{onnx}", "model.onnx")
        z.writestr("config.json", json.dumps(config))
PY
for m in det rec cls; do
  "$tc" "$out/$m.zip" "$out/$m" > "$out/$m.log" || { cat "$out/$m.log"; echo "conversion of $m failed"; exit 1; }
  rm -f "$out/$m.zip"
done
echo "convert_models.sh: $mode bundles in $out/{det,rec,cls}/model.oinf"
