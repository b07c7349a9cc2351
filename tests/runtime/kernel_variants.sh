#!/usr/bin/env bash
# Bundle features kernel_variants and device_variants (docs/bundle-format.md,
# "Kernel variants", "Device-specific variants"): the Conv / Gemm / MatMul /
# Softmax / ReduceMean shapes of make_variant_models.py, compiled by
# oaax-vulkan-toolchain, run by oaax-run on lavapipe and SwiftShader with the
# runtime argument kernel_variant =
#   default  program.dispatch only (tiled shared-memory kernels),
#   cpu      program.dispatch.cpu (CPU-class kernels),
#   gpu      program.dispatch.gpu with the runtime argument fp16_weights=1
#            (conv2d_gemm_gpu_f16w / gemm_gpu_f16w reading binary16 weights,
#            softmax_sg / reduce_mean_sg with subgroup reductions), each row
#            keeping its default row on a device without the capability its
#            kernel requires,
#   gpu_fp32 (lavapipe only) program.dispatch.gpu without fp16_weights: the
#            fp16-weight rows keep their default rows (the log says why), the
#            subgroup rows run, results float32,
#   auto     (lavapipe only) the cpu table on these CPU-type devices.
# The cpu table on SwiftShader (about a minute of pipeline creation: its
# compiler takes ~1 s per CPU-class conv pipeline) is its own part, PART =
# swiftshader-cpu (ctest runtime.kernel_variants.swiftshader_cpu, label slow:
# README "Tests"); the default part runs everything else. The CPU-class
# kernels also run on SwiftShader in the test command through the classifier
# model (e2e.classifier_vs_onnxruntime, kernel_variant=auto).
# default, cpu and auto must match the NumPy reference of the float32 model,
# |diff| <= 1e-5 * (1 + |ref|) per element. gpu on lavapipe (16-bit storage and
# subgroup arithmetic: every GPU row runs) must match the reference with
# binary16-rounded weights at the same tolerance AND the float32 reference
# within the documented bound 2^-11 * sum|x * w| + 1e-5 * (1 + |ref|); gpu on
# SwiftShader (no storageBuffer16BitAccess) must say in its log that the fp16
# rows keep their default rows, and then match the float32 reference at 1e-5
# (its subgroup rows run). The gpu table also runs on lavapipe with subgroups
# of 4 to 128. A bad kernel_variant value must be rejected by name.
# usage: kernel_variants.sh PYTHON REPO_ROOT BUILD_DIR [swiftshader-cpu]
set -euo pipefail
py=$1 root=$2 build=$3 part=${4:-main}
case "$part" in main|swiftshader-cpu) ;; *) echo "kernel_variants.sh: unknown part '$part'" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/runtime/make_variant_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/variants.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
model="$tmp/bundle/model.oinf"
"$build/oinf-inspect" "$model" > "$tmp/inspect.txt"
for entry in "program.dispatch.cpu: u32\[" "program.dispatch.gpu: u32\[" "weights_f16: u8\[" \
             'requires: str = "storageBuffer16BitAccess-sharedMemory32KiB"' 'requires: str = "subgroupArithmetic"'; do
  grep -q "$entry" "$tmp/inspect.txt" || { echo "FAIL: the bundle has no '$entry'"; exit 1; }
done
# Output check: check.py TMP GOT_DIR WHAT fp32|fp16 (see the header).
cat > "$tmp/check.py" <<'PY'
import json, sys
import numpy as np
tmp, got_dir, what, check = sys.argv[1:5]
def load(kind):
    man = json.load(open(f"{tmp}/{kind}/manifest.json"))
    return man, {r["name"]: np.fromfile(f"{tmp}/{kind}/{r['file']}", dtype=np.float32) for r in man}
man, ref = load("ref")
_, ref16 = load("ref16")
_, bound = load("bound")
got = {g["name"]: g for g in json.load(open(f"{got_dir}/manifest.json"))}
bad, f16_outputs, worst_ratio = [], 0, 0.0
for r in man:
    name = r["name"]
    g = got.get(name)
    if g is None or g["shape"] != r["shape"]:
        bad.append(f"{name}: missing or shape {g and g['shape']} != {r['shape']}")
        continue
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32).astype(np.float64)
    a = ref[name].astype(np.float64)
    if check == "fp16":
        # The fp32 result of the binary16-weight model ...
        a16 = ref16[name].astype(np.float64)
        err = float(np.max(np.abs(a16 - b) / (1 + np.abs(a16))))
        if not err <= 1e-5:
            bad.append(f"{name}: relative error {err:.3g} to the binary16-weight reference")
        # ... within the documented bound of the float32 model's.
        lim = bound[name].astype(np.float64) + 1e-5 * (1 + np.abs(a))
        over = np.abs(a - b) - lim
        if not np.all(over <= 0):
            i = int(np.argmax(over))
            bad.append(f"{name}: |diff| {abs(a[i] - b[i]):.3g} to the float32 reference exceeds the bound "
                       f"{lim[i]:.3g} at element {i}")
        if bound[name].max() > 0:
            f16_outputs += 1
            worst_ratio = max(worst_ratio, float(np.max(np.abs(a - b) / lim)))
    else:
        err = float(np.max(np.abs(a - b) / (1 + np.abs(a))))
        if not err <= 1e-5:
            bad.append(f"{name}: relative error {err:.3g}")
if check == "fp16":
    print(f"{what}: {len(man) - len(bad)}/{len(man)} outputs match the binary16-weight NumPy reference and the "
          f"float32 one within 2^-11 * sum|x*w| ({f16_outputs} read binary16 weights; largest |diff| / "
          f"(bound + slack) {worst_ratio:.3g})")
    if f16_outputs == 0:
        bad.append("no output reads binary16 weights")
else:
    print(f"{what}: {len(man) - len(bad)}/{len(man)} outputs match the NumPy reference")
if bad:
    sys.exit(f"{what}: " + "; ".join(bad))
PY
# See tests/e2e/classifier.sh for why leak checking is off in these processes.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fail=0
# $1 log, $2 what ran, $3 the reason the load log must give for the
# fp16-weight rows running their fp32 form; no row may keep its default row.
expect_fp32_forms() {
  if ! grep -q "of fp16-weight kernels run their fp32 form: $3" "$1"; then
    echo "FAIL: $2: the log does not say that fp16-weight rows run their fp32 form ($3):"; cat "$1"; fail=1
  elif grep -q "keep the default kernel" "$1"; then
    echo "FAIL: $2: rows keep their default kernel:"; cat "$1"; fail=1
  fi
}
drivers="lavapipe swiftshader"; [ "$part" = swiftshader-cpu ] && drivers=swiftshader
for drv in $drivers; do
  if [ "$drv" = swiftshader ]; then
    [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ] || { echo "swiftshader: not installed, skipped"; continue; }
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  # auto on SwiftShader would run the cpu table again (both drivers are CPU
  # devices, which lavapipe's auto run already checks); SwiftShader compiles
  # each conv pipeline in about a second, so its cpu run is the separate part.
  variants="default gpu gpu_fp32 cpu auto"; [ "$drv" = swiftshader ] && variants="default gpu"
  [ "$part" = swiftshader-cpu ] && variants=cpu
  for variant in $variants; do
    log="$tmp/$drv-$variant.log"
    args=(--arg kernel_variant=${variant%_fp32})
    [ "$variant" = gpu ] && args+=(--arg fp16_weights=1)
    "$build/oaax-run" --model "$model" --inputs "$tmp/in" --outputs "$tmp/$drv-$variant" --quiet \
      --arg validation=1 --arg log_level=2 "${args[@]}" > /dev/null 2> "$log" ||
      { echo "FAIL: $drv ${args[*]}:"; cat "$log"; fail=1; continue; }
    want=${variant%_fp32}; [ "$variant" = auto ] && want=cpu  # both drivers are VK_PHYSICAL_DEVICE_TYPE_CPU
    grep -q "running the $want kernel variants" "$log" ||
      { echo "FAIL: $drv kernel_variant=$variant did not run the $want variants:"; cat "$log"; fail=1; }
    check=fp32
    if [ "$variant" = gpu_fp32 ]; then
      # Without the opt-in the fp16-weight rows run their fp32 form; no row
      # keeps its default row.
      expect_fp32_forms "$log" "lavapipe kernel_variant=gpu without fp16_weights=1" \
        "fp16 weights need the runtime argument fp16_weights=1"
    elif [ "$variant" = gpu ] && [ "$drv" = lavapipe ]; then
      # Both capabilities: no row may keep its default row.
      check=fp16
      if grep -q "keep the default kernel" "$log"; then
        echo "FAIL: lavapipe kernel_variant=gpu kept default rows:"; cat "$log"; fail=1
      fi
    elif [ "$variant" = gpu ]; then
      # No 16-bit storage: the _f16w rows run their fp32 form, and say why;
      # the subgroup rows run; no row keeps its default row.
      expect_fp32_forms "$log" "swiftshader kernel_variant=gpu" "the device lacks storageBuffer16BitAccess"
      grep -o "[0-9]* rows* of fp16-weight kernels run.*" "$log" | sed "s/^/swiftshader kernel_variant=gpu: /"
    fi
    "$py" "$tmp/check.py" "$tmp" "$tmp/$drv-$variant" "$drv kernel_variant=$variant" "$check" || fail=1
  done
done
unset VK_ICD_FILENAMES
[ "$part" = main ] || exit $fail
# softmax_sg / reduce_mean_sg for any subgroup size: lavapipe's subgroup size
# is its SIMD width / 32 (LP_NATIVE_VECTOR_WIDTH), so the gpu table also runs
# with subgroups of 2, 4, 16, 32, 64 and 128 (larger than the 64-wide
# workgroup). (Subgroups of 1, LP_NATIVE_VECTOR_WIDTH=32, crash lavapipe 15's
# shader compiler on softmax_sg's second subgroup reduction.)
for width in 64 128 512 1024 2048 4096; do
  size=$((width / 32)) what="lavapipe with subgroups of $((width / 32)) kernel_variant=gpu"
  LP_NATIVE_VECTOR_WIDTH=$width "$build/oaax-run" --model "$model" --inputs "$tmp/in" --outputs "$tmp/w$width" --quiet \
    --arg validation=1 --arg log_level=1 --arg kernel_variant=gpu --arg fp16_weights=1 > /dev/null 2> "$tmp/w$width.log" ||
    { echo "FAIL: $what:"; cat "$tmp/w$width.log"; fail=1; continue; }
  grep -q "subgroupSize $size," "$tmp/w$width.log" ||
    { echo "FAIL: $what: the device log does not say subgroupSize $size:"; grep -i subgroup "$tmp/w$width.log"; fail=1; }
  "$py" "$tmp/check.py" "$tmp" "$tmp/w$width" "$what" fp16 || fail=1
done
if "$build/oaax-run" --model "$model" --inputs "$tmp/in" --outputs "$tmp/bad" --quiet --arg kernel_variant=fast \
    > /dev/null 2> "$tmp/bad.log"; then
  echo "FAIL: kernel_variant=fast was accepted"; fail=1
elif ! grep -q "kernel_variant is 'fast' (expected auto, default, gpu or cpu)" "$tmp/bad.log"; then
  echo "FAIL: kernel_variant=fast error does not say what and where:"; cat "$tmp/bad.log"; fail=1
fi
exit $fail
