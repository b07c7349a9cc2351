#!/usr/bin/env bash
# Converts the PP-OCRv4 models with oaax-vulkan-toolchain, shapes bound through
# the archive's config.json: detection at [1, 3, DET_H, DET_W] (the padded page
# size), recognition at [1, 3, 48, REC_W], orientation classifier at [1, 3, 48, 192].
# usage: convert_models.sh TOOLCHAIN ASSETS_DIR OUT_DIR [DET_H DET_W REC_W]
# Writes OUT_DIR/{det,rec,cls}/model.oinf (+ conversion-log.json).
set -euo pipefail
tc=$1 assets=$2 out=$3 det_h=${4:-192} det_w=${5:-384} rec_w=${6:-640}
mkdir -p "$out"
/usr/bin/python3 - "$assets" "$out" "$det_h" "$det_w" "$rec_w" <<'PY'
import json, sys, zipfile
assets, out, det_h, det_w, rec_w = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
for name, onnx, shape in [("det", "ch_PP-OCRv4_det_infer.onnx", [1, 3, det_h, det_w]),
                          ("rec", "ch_PP-OCRv4_rec_infer.onnx", [1, 3, 48, rec_w]),
                          ("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", [1, 3, 48, 192])]:
    with zipfile.ZipFile(f"{out}/{name}.zip", "w") as z:
        z.write(f"{assets}/{onnx}", "model.onnx")
        z.writestr("config.json", json.dumps({"input_shapes": {"x": shape}}))
PY
for m in det rec cls; do
  "$tc" "$out/$m.zip" "$out/$m" > "$out/$m.log" || { cat "$out/$m.log"; echo "conversion of $m failed"; exit 1; }
  rm -f "$out/$m.zip"
done
