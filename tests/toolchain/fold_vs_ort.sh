#!/usr/bin/env bash
# The shape computations of exported detection, Swin and ViT models
# (make_fold_models.py: Shape -> Cast -> Mul -> Floor -> Cast -> Concat ->
# Resize / Pad, Mod -> Pad, Equal -> Where -> Expand) fold at conversion, and
# the bundle run by oaax-run on lavapipe and SwiftShader matches ONNX Runtime:
# |diff| <= 1e-5 * (1 + |ref|) per element, same output shapes. The Swin and
# ViT chains over a symbolic height and width (window_dyn.onnx, converted
# with ranges) fold into size expressions: one bundle matches ONNX Runtime
# at three sizes on lavapipe.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: fold_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
nm="$root/third_party/cache/node/node_modules"
if [ ! -d "$nm/onnxruntime-node" ]; then
  echo "SKIP: ONNX Runtime missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/toolchain/make_fold_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/shape_chains.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
# Every shape computation folded: only the data operators reach the device.
"$py" - "$tmp/bundle/conversion-log.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
nodes = {n["Node"] for e in log if e["Message"] == "Kernels selected" for n in e["Data"]["Nodes"]}
left = nodes - {"resize", "pad", "win_pad_op", "pooled", "token", "tokens"}
if left:
    sys.exit("shape computations left to the device: " + ", ".join(sorted(left)))
PY
NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/shape_chains.onnx" "$tmp/in" "$tmp/ort" >/dev/null 2>&1
compare() {  # compare REF_DIR GOT_DIR LABEL
  "$py" - "$1" "$2" "$3" <<'PY'
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
    err = float(np.max(np.abs(a - b) / (1 + np.abs(a))))
    if not err <= 1e-5:
        bad.append(f"{r['name']}: relative error {err:.3g}")
print(f"{drv}: {len(ref) - len(bad)}/{len(ref)} outputs match ONNX Runtime")
if bad:
    sys.exit(f"{drv}: " + "; ".join(bad))
PY
}
fail=0
"$build/oaax-vulkan-toolchain" --config "$tmp/window_dyn.json" "$tmp/window_dyn.onnx" "$tmp/dyn_bundle" > "$tmp/dyn.log"
for size in 105_150 120_160 100_147; do
  NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/window_dyn.onnx" "$tmp/in_$size" "$tmp/ort_$size" >/dev/null 2>&1
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/dyn_bundle/model.oinf" --inputs "$tmp/in_$size" --outputs "$tmp/dyn_$size" \
    --arg validation=1 >/dev/null
  compare "$tmp/ort_$size" "$tmp/dyn_$size" "ranges, at ${size/_/ x }" || fail=1
done
for drv in lavapipe swiftshader; do
  if [ "$drv" = swiftshader ]; then
    [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ] || { echo "swiftshader: not installed, skipped"; continue; }
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  # See tests/e2e/classifier.sh for why leak checking is off in this process.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/bundle/model.oinf" --inputs "$tmp/in" --outputs "$tmp/$drv" --arg validation=1 >/dev/null
  compare "$tmp/ort" "$tmp/$drv" "$drv" || fail=1
done
exit $fail
