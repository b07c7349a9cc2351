#!/usr/bin/env bash
# Bundle feature kernel_variants (docs/bundle-format.md, "Kernel variants"):
# Conv / Gemm / MatMul shapes from make_variant_models.py, compiled by
# oaax-vulkan-toolchain, run by oaax-run on lavapipe and SwiftShader with the
# runtime argument kernel_variant=gpu (tiled shared-memory kernels) and =cpu
# (CPU-class kernels), and =auto on lavapipe. All must match the NumPy reference,
# |diff| <= 1e-5 * (1 + |ref|) per element, and auto must pick the CPU
# variants on these CPU-type devices; a bad value must be rejected by name.
# usage: kernel_variants.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/runtime/make_variant_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/variants.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
model="$tmp/bundle/model.oinf"
"$build/oinf-inspect" "$model" > "$tmp/inspect.txt"
grep -q "program.dispatch.cpu: u32\[" "$tmp/inspect.txt" || { echo "FAIL: no program.dispatch.cpu tensor"; exit 1; }
# See tests/e2e/classifier.sh for why leak checking is off in these processes.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fail=0
for drv in lavapipe swiftshader; do
  if [ "$drv" = swiftshader ]; then
    [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ] || { echo "swiftshader: not installed, skipped"; continue; }
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  # auto on SwiftShader would run the cpu table again (both drivers are CPU
  # devices, which lavapipe's auto run already checks); SwiftShader compiles
  # each conv pipeline in about a second, so it runs gpu and cpu only.
  variants="gpu cpu auto"; [ "$drv" = swiftshader ] && variants="gpu cpu"
  for variant in $variants; do
    "$build/oaax-run" --model "$model" --inputs "$tmp/in" --outputs "$tmp/$drv-$variant" --quiet \
      --arg validation=1 --arg log_level=2 --arg kernel_variant=$variant > /dev/null 2> "$tmp/$drv-$variant.log" ||
      { echo "FAIL: $drv kernel_variant=$variant:"; cat "$tmp/$drv-$variant.log"; fail=1; continue; }
    want=$variant; [ "$variant" = auto ] && want=cpu  # both drivers are VK_PHYSICAL_DEVICE_TYPE_CPU
    grep -q "running the $want kernel variants" "$tmp/$drv-$variant.log" ||
      { echo "FAIL: $drv kernel_variant=$variant did not run the $want variants:"; cat "$tmp/$drv-$variant.log"; fail=1; }
    "$py" - "$tmp/ref" "$tmp/$drv-$variant" "$drv kernel_variant=$variant" <<'PY' || fail=1
import json, sys
import numpy as np
ref_dir, got_dir, what = sys.argv[1:4]
ref = json.load(open(f"{ref_dir}/manifest.json"))
got = {g["name"]: g for g in json.load(open(f"{got_dir}/manifest.json"))}
bad = []
for r in ref:
    g = got.get(r["name"])
    if g is None or g["shape"] != r["shape"]:
        bad.append(f"{r['name']}: missing or shape {g and g['shape']} != {r['shape']}")
        continue
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=np.float32)
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32)
    err = float(np.max(np.abs(a - b) / (1 + np.abs(a))))
    if not err <= 1e-5:
        bad.append(f"{r['name']}: relative error {err:.3g}")
print(f"{what}: {len(ref) - len(bad)}/{len(ref)} outputs match the NumPy reference")
if bad:
    sys.exit(f"{what}: " + "; ".join(bad))
PY
  done
done
unset VK_ICD_FILENAMES
if "$build/oaax-run" --model "$model" --inputs "$tmp/in" --outputs "$tmp/bad" --quiet --arg kernel_variant=fast \
    > /dev/null 2> "$tmp/bad.log"; then
  echo "FAIL: kernel_variant=fast was accepted"; fail=1
elif ! grep -q "kernel_variant is 'fast' (expected auto, gpu or cpu)" "$tmp/bad.log"; then
  echo "FAIL: kernel_variant=fast error does not say what and where:"; cat "$tmp/bad.log"; fail=1
fi
exit $fail
