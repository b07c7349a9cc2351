#!/usr/bin/env bash
# The GPU-class GEMM tiles (conv2d_gemm_gpu, gemm_gpu and their _f16w forms;
# docs/kernels.md "GPU-class GEMM tiles") against NumPy: the shapes of
# make_gpu_kernel_models.py (one per output tile, odd sizes, partial slices,
# vec4 and scalar loads, groups, strides, padding, dilation, residual, batch
# 1 and 8), converted twice and run with kernel_variant=gpu:
#   fp32  config "fp16_weights": false: every tiled row is conv2d_gemm_gpu /
#         gemm_gpu, on lavapipe (and SwiftShader with PART = swiftshader:
#         both have 32 KiB of shared memory), |diff| <= 1e-5 * (1 + |ref|)
#         + 2^-20 * sum|x * w| per element (fp32 rounding of the sum);
#   fp16  the default conversion with the runtime argument fp16_weights=1 on
#         lavapipe: the _f16w forms, matching the binary16-weight reference at
#         that tolerance and the float32 one within 2^-11 * sum|x * w|
#         + 1e-5 * (1 + |ref|).
#   fp32  also the default conversion without the opt-in on lavapipe: the
#         _f16w rows run their fp32 form (kernel.<j>.fp32_kernel);
#   fp16p both bundles with the runtime argument precision=fp16 on lavapipe:
#         every tiled row runs its _fp16 form (binary16 operands, fp32 sums),
#         within (2^-10 + 2^-22) * sum|x * w| more than the fp32 tolerance
#         (docs/kernels.md "fp16 precision");
#   dyn   (lavapipe) a Conv and a MatMul with a symbolic batch N in [1, 8]
#         (sizes read from the parameter buffer), fp32 tiles and
#         precision=fp16, N = 1 and 5.
#   convtiles (lavapipe) Convs whose default grid fills a GPU, converted
#         with config "gpu_conv_tiles": "all" (the only way a Conv gets the
#         128x128, 128x64 and 64x128 tiles), fp32 tiles.
# No row may keep its default row. The bundles' load requirement
# (device.max_shared_memory_bytes) stays the default table's 8 KiB.
# usage: gpu_kernels.sh PYTHON REPO_ROOT BUILD_DIR [lavapipe|swiftshader]
set -euo pipefail
py=$1 root=$2 build=$3 part=${4:-lavapipe}
case "$part" in lavapipe|swiftshader) ;; *) echo "gpu_kernels.sh: unknown part '$part'" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"  # as in kernel_variants.sh
"$py" "$root/tests/runtime/make_gpu_kernel_models.py" "$tmp"
echo '{"fp16_weights": false}' > "$tmp/fp32.json"
"$build/oaax-vulkan-toolchain" --config "$tmp/fp32.json" "$tmp/gpu_kernels.onnx" "$tmp/b32" > "$tmp/tc32.log"
"$build/oaax-vulkan-toolchain" "$tmp/gpu_kernels.onnx" "$tmp/b16" > "$tmp/tc16.log"
fail=0
for b in b32 b16; do
  "$build/oinf-inspect" "$tmp/$b/model.oinf" > "$tmp/$b.txt"
  want='"conv2d_gemm_gpu" "gemm_gpu"'
  [ $b = b16 ] && want='"conv2d_gemm_gpu_f16w" "gemm_gpu_f16w"'
  for entry in $want 'requires: str = "sharedMemory32KiB"' "device.max_shared_memory_bytes: u32 = 8192"; do
    grep -q "$entry" "$tmp/$b.txt" || { echo "FAIL: bundle $b has no '$entry'"; grep -n "name\|requires\|shared" "$tmp/$b.txt" | head -20; fail=1; }
  done
done
# Every tile of lower.cpp kGpuTiles is chosen for some case (the conversion log names each row's tile).
for t in 128x128 128x64 64x128 64x64 64x32 32x64 32x32 32x16 16x32 16x16; do
  grep -q "_gpu tile $t[], ]" "$tmp/b32/conversion-log.json" ||
    { echo "FAIL: no case gets the $t tile (make_gpu_kernel_models.py's shapes no longer cover it):"; \
      grep -o "gpu: [a-z0-9_]* tile [0-9x]*" "$tmp/b32/conversion-log.json" | sort | uniq -c; fail=1; }
done
# The three largest tiles reach a Conv only through "gpu_conv_tiles": "all".
"$build/oaax-vulkan-toolchain" --config "$tmp/convtiles/config.json" "$tmp/convtiles/convtiles.onnx" \
  "$tmp/convtiles/bundle" > "$tmp/tcct.log"
for t in 128x128 128x64 64x128; do
  grep -q "conv2d_gemm_gpu tile $t[], ]" "$tmp/convtiles/bundle/conversion-log.json" ||
    { echo "FAIL: no Conv of convtiles gets the $t tile with \"gpu_conv_tiles\": \"all\":"; \
      grep -o "gpu: [a-z0-9_]*[ a-z0-9()]*" "$tmp/convtiles/bundle/conversion-log.json" | sort | uniq -c; fail=1; }
done
cat > "$tmp/check.py" <<'PY'
import json, sys
import numpy as np
tmp, got_dir, what, check = sys.argv[1:5]
def load(kind):
    man = json.load(open(f"{tmp}/{kind}/manifest.json"))
    return man, {r["name"]: np.fromfile(f"{tmp}/{kind}/{r['file']}", dtype=np.float32).astype(np.float64) for r in man}
man, ref = load("ref")
_, ref16 = load("ref16")
_, bound = load("bound")
got = {g["name"]: g for g in json.load(open(f"{got_dir}/manifest.json"))}
bad = []
for r in man:
    name = r["name"]
    g = got.get(name)
    if g is None or g["shape"] != r["shape"]:
        bad.append(f"{name}: missing or shape {g and g['shape']} != {r['shape']}")
        continue
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32).astype(np.float64)
    a = ref16[name] if check == "fp16" else ref[name]
    # fp32 summation: 1e-5 * (1 + |ref|) plus 2^-20 * sum|x * w| (bound is
    # 2^-11 * sum|x * w|), which a reduction over hundreds of terms can reach
    # where they cancel.
    lim = 1e-5 * (1 + np.abs(a)) + 2.0 ** -9 * bound[name]
    if check == "fp16p":
        # precision=fp16: both operands rounded to binary16, each product
        # within 2^-10 + 2^-22 (2 + 2^-11 bounds), the fp32 sum as above.
        lim += (2.0 + 2.0 ** -11) * bound[name]
    if not np.all(np.abs(a - b) <= lim):
        i = int(np.argmax(np.abs(a - b) - lim))
        bad.append(f"{name}: |diff| {abs(a[i] - b[i]):.3g} > {lim[i]:.3g} at element {i} (got {b[i]:.7g}, "
                   f"want {a[i]:.7g})")
    if check == "fp16":
        over = np.abs(ref[name] - b) - (bound[name] + 1e-5 * (1 + np.abs(ref[name])))
        if not np.all(over <= 0):
            bad.append(f"{name}: beyond the binary16 bound of the float32 reference at element {int(np.argmax(over))}")
print(f"{what}: {len(man) - len(bad)}/{len(man)} outputs match the NumPy reference")
if bad:
    sys.exit(f"{what}: " + "; ".join(bad))
PY
run() {  # run DRIVER BUNDLE CHECK [ARGS...]; $cdir: the directory of the inputs and references
  local drv=$1 b=$2 check=$3; shift 3
  local at=${cdir#"$tmp"}
  local what="$drv $b kernel_variant=gpu $*${at:+ on ${at#/}}" out="$cdir/$drv-${b//\//-}"
  local icd=()
  [ "$drv" = swiftshader ] && icd=(env "VK_ICD_FILENAMES=$root/third_party/swiftshader/vk_swiftshader_icd.json")
  "${icd[@]}" "$build/oaax-run" --model "$tmp/$b/model.oinf" --inputs "$cdir/in" --outputs "$out" --quiet \
    --arg log_level=2 --arg kernel_variant=gpu "$@" > /dev/null 2> "$out.log" ||
    { echo "FAIL: $what:"; cat "$out.log"; fail=1; return; }
  grep -q "running the gpu kernel variants" "$out.log" || { echo "FAIL: $what: not the gpu table:"; cat "$out.log"; fail=1; }
  if grep -q "keep the default kernel" "$out.log"; then echo "FAIL: $what kept default rows:"; cat "$out.log"; fail=1; fi
  "$py" "$tmp/check.py" "$cdir" "$out" "$what" "$check" || fail=1
}
cdir=$tmp
if [ "$part" = lavapipe ]; then
  run lavapipe b32 fp32
  run lavapipe b16 fp16 --arg fp16_weights=1
  # precision=fp16: every tiled row runs its fp16 form (binary16 operands,
  # fp32 sums), from the fp32 bundle and, through the fp32 form, from the
  # binary16-weight one; no cooperative matrices on lavapipe.
  for b in b32 b16; do
    run lavapipe $b fp16p --arg precision=fp16
    grep -qE "precision fp16: [0-9]+ rows run fp16 forms, 0 of them on cooperative matrices" "$cdir/lavapipe-$b.log" &&
      ! grep -q "keep fp32" "$cdir/lavapipe-$b.log" ||
      { echo "FAIL: lavapipe $b precision=fp16: not every row ran its fp16 form:"; cat "$cdir/lavapipe-$b.log"; fail=1; }
  done
  # The default conversion without the opt-in: the _f16w rows run their fp32
  # form (kernel.<j>.fp32_kernel), the same tiles on the fp32 weights.
  run lavapipe b16 fp32
  grep -q "of fp16-weight kernels run their fp32 form" "$cdir/lavapipe-b16.log" ||
    { echo "FAIL: lavapipe b16 without fp16_weights=1: no row ran its fp32 form:"; cat "$cdir/lavapipe-b16.log"; fail=1; }
  "$build/oaax-vulkan-toolchain" --config "$tmp/dyn/config.json" "$tmp/dyn/dyn.onnx" "$tmp/dyn/bundle" > "$tmp/tcdyn.log"
  for n in 1 5; do
    cdir=$tmp/dyn/b$n
    run lavapipe dyn/bundle fp32
    run lavapipe dyn/bundle fp16p --arg precision=fp16
  done
  cdir=$tmp/convtiles
  run lavapipe convtiles/bundle fp32
elif [ -f "$root/third_party/swiftshader/vk_swiftshader_icd.json" ]; then
  run swiftshader b32 fp32
else
  echo "swiftshader: not installed, skipped"
fi
exit $fail
