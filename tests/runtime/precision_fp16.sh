#!/usr/bin/env bash
# The fp16 precision mode and the load-time check of cooperative-matrix
# kernels (docs/kernels.md "fp16 precision", "Cooperative-matrix kernels") on
# lavapipe, with the small CNN of make_precision_model.py (Conv 3x3, Conv 1x1
# with a residual, Gemm) run with kernel_variant=gpu:
#   fp32      no precision argument: the fp32 rows, within 1e-5 (1 + |ref|);
#   fp16      precision=fp16: every GEMM / convolution row runs its fp16 form,
#             the matrix forms kept for the capabilities lavapipe lacks (the
#             load log says which); within the derived bound of the model
#             (make_precision_model.py) of the float64 reference and, when
#             ONNX Runtime is installed, of its result;
#   standin   the fault-injection runtime with OAAXVK_INJECT_FAULT =
#             matrix:standin: each matrix kernel is its fp16 form; the check
#             runs it, keeps it, and the rows use it;
#   wrong     matrix:wrong: the same with the bias left out in the checked
#             run; the check drops both kernels, the rows run the fp16 forms
#             and the results stay within the bound;
#   auto      precision=fp16 with kernel_variant=auto on lavapipe: the CPU
#             table, fp32 results, the log saying it has no fp16 forms;
#   swiftshader  precision=fp16 on SwiftShader, which lacks shaderFloat16:
#             every row keeps its fp32 kernel with that reason, fp32 results.
# The fp16 and matrix runs have the validation layer on (the check's own
# Vulkan work included).
# usage: precision_fp16.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"  # as in kernel_variants.sh
"$py" "$root/tests/runtime/make_precision_model.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/model.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
"$build/oinf-inspect" "$tmp/bundle/model.oinf" > "$tmp/inspect.txt"
fail=0
for entry in '"conv2d_gemm_gpu_fp16"' '"gemm_gpu_fp16"' '"conv2d_gemm_gpu_coopmat"' '"gemm_gpu_coopmat"' \
             'fp16_kernel' 'matrix_kernel'; do
  grep -q "$entry" "$tmp/inspect.txt" || { echo "FAIL: the bundle has no $entry"; fail=1; }
done
ort=""
nm="$root/third_party/cache/node/node_modules"
if [ -d "$nm/onnxruntime-node" ]; then
  NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/model.onnx" "$tmp/in" "$tmp/ort" > /dev/null
  ort="$tmp/ort"
else
  echo "ONNX Runtime missing (scripts/fetch-reference.sh): compared with the float64 reference only"
fi
cat > "$tmp/check.py" <<'PY'
import json, sys
import numpy as np
tmp, got_dir, what, mode, ort = sys.argv[1:6]
def load(d):
    man = json.load(open(f"{d}/manifest.json"))
    return {r["name"]: np.fromfile(f"{d}/{r['file']}", dtype=np.float32).astype(np.float64) for r in man}
ref, bound, got = load(f"{tmp}/ref"), load(f"{tmp}/bound"), load(got_dir)
refs = [("float64", ref)] + ([("ONNX Runtime", load(ort))] if ort else [])
bad = []
for name, r in ref.items():
    g = got[name]
    for label, rr in refs:
        lim = 1e-5 * (1 + np.abs(rr[name])) + (bound[name] if mode == "fp16" else 0)
        err = np.abs(g - rr[name])
        if not np.all(err <= lim):
            i = int(np.argmax(err - lim))
            bad.append(f"{name} vs {label}: |diff| {err[i]:.3g} > {lim[i]:.3g} at {i}")
    if mode == "fp16":
        print(f"{what}: largest error {np.max(np.abs(g - ref[name]) / bound[name]):.3f} of the bound")
if bad:
    sys.exit(f"FAIL: {what}: " + "; ".join(bad))
PY
run() {  # run NAME CHECK [oaax-run args...]
  local name=$1 check=$2
  shift 2
  "$build/oaax-run" --model "$tmp/bundle/model.oinf" --inputs "$tmp/in" --outputs "$tmp/$name" --quiet \
    --arg log_level=2 --arg kernel_variant=gpu "$@" > /dev/null 2> "$tmp/$name.log" ||
    { echo "FAIL: $name:"; cat "$tmp/$name.log"; fail=1; return; }
  if grep -q "VUID" "$tmp/$name.log"; then echo "FAIL: $name: validation messages:"; grep "VUID" "$tmp/$name.log"; fail=1; fi
  "$py" "$tmp/check.py" "$tmp" "$tmp/$name" "$name" "$check" "$ort" || fail=1
}
expect() {  # expect NAME PATTERN: the load log of run NAME has a line matching PATTERN
  grep -qE "$2" "$tmp/$1.log" || { echo "FAIL: $1: no log line matching '$2':"; cat "$tmp/$1.log"; fail=1; }
}
run fp32 fp32
if grep -q "precision fp16" "$tmp/fp32.log"; then echo "FAIL: fp32 ran fp16 forms:"; cat "$tmp/fp32.log"; fail=1; fi
run fp16 fp16 --arg precision=fp16 --arg validation=1
expect fp16 "precision fp16: 3 rows run fp16 forms, 0 of them on cooperative matrices; 3 rows keep the fp16 form \
instead of cooperative matrices \(capabilities the device lacks: .*cooperativeMatrixNV16x16x16f16f32 \(3 rows\)"
if cmp -s "$tmp/fp32/0.bin" "$tmp/fp16/0.bin"; then echo "FAIL: precision=fp16 gave the fp32 results bit for bit"; fail=1; fi
fi_lib="$build/tests/runtime/libRuntimeLibraryFaultInjection.so"
OAAXVK_INJECT_FAULT=matrix:standin run standin fp16 --runtime "$fi_lib" --arg precision=fp16 --arg validation=1
expect standin "cooperative-matrix kernel 'conv2d_gemm_gpu_coopmat' passed its load-time check"
expect standin "cooperative-matrix kernel 'gemm_gpu_coopmat' passed its load-time check"
expect standin "precision fp16: 3 rows run fp16 forms, 3 of them on cooperative matrices"
OAAXVK_INJECT_FAULT=matrix:wrong run wrong fp16 --runtime "$fi_lib" --arg precision=fp16 --arg validation=1
expect wrong "dropped cooperative-matrix kernel 'conv2d_gemm_gpu_coopmat' .*: at tile 128x128 output [0-9]+ is"
expect wrong "dropped cooperative-matrix kernel 'gemm_gpu_coopmat' .*; its rows run 'gemm_gpu_fp16' instead"
expect wrong "precision fp16: 3 rows run fp16 forms, 0 of them on cooperative matrices; 3 rows keep the fp16 form \
instead of cooperative matrices \(3 whose cooperative-matrix kernel failed its load-time check\)"
if ! cmp -s "$tmp/fp16/0.bin" "$tmp/wrong/0.bin"; then
  echo "FAIL: with the matrix kernels dropped the results differ from the fp16 forms'"; fail=1
fi
# kernel_variant=auto on lavapipe (a CPU device) runs the CPU table, which
# has no fp16 forms: fp32 results, and the log says so.
run auto fp32 --arg precision=fp16 --arg kernel_variant=auto
expect auto "precision fp16: the cpu table runs, whose kernels have no fp16 forms"
# SwiftShader has no shaderFloat16: every row keeps its fp32 kernel, says
# why, and the results are the fp32 ones.
icd="$root/third_party/swiftshader/vk_swiftshader_icd.json"
if [ -f "$icd" ]; then
  VK_ICD_FILENAMES="$icd" run swiftshader fp32 --arg precision=fp16
  expect swiftshader "precision fp16: 0 rows run fp16 forms, 0 of them on cooperative matrices; 3 rows keep fp32 \
\(capabilities the device lacks: shaderFloat16 \(3 rows\)\)"
else
  echo "swiftshader: $icd missing, skipped"
fi
[ $fail = 0 ] && echo "precision_fp16: fp32, fp16, matrix stand-in kept and dropped: all within their bounds"
exit $fail
