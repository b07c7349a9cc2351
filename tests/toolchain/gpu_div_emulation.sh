#!/usr/bin/env bash
# Shows that the kernels' correctly rounded division (shaders/exact_math.glsl)
# is what keeps gpu_ties_vs_ort.sh green on a GPU: lavapipe and SwiftShader
# divide exactly, so a test build of the kernels (BUILD_DIR, configured here
# with OAAXVK_SHADER_DEFINES) replaces every raw division by a product with a
# reciprocal one ULP off, away from zero and toward zero. With the correction
# the ties must all match ONNX Runtime; without it (FM_NO_DIV_CORRECTION)
# they must not. A separate command (it builds the toolchain a second time):
# not part of ctest. Exit 77 (skip) without ONNX Runtime.
# usage: gpu_div_emulation.sh PYTHON REPO_ROOT BUILD_DIR
set -uo pipefail
py=$1 root=$2 build=$3
[ -d "$root/third_party/cache/node/node_modules/onnxruntime-node" ] || { echo "SKIP: ONNX Runtime missing"; exit 77; }
fail=0
for ulps in 1 -1; do
  for correction in on off; do
    defs="FM_EMULATE_GPU_DIV;FM_GPU_DIV_ULPS=$ulps"
    [ $correction = off ] && defs="$defs;FM_NO_DIV_CORRECTION"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DOAAXVK_SHADER_DEFINES=$defs" >/dev/null || exit 1
    cmake --build "$build" -j 2 --target oaax-vulkan-toolchain oaax-run >/dev/null || exit 1
    out=$(bash "$root/tests/toolchain/gpu_ties_vs_ort.sh" "$py" "$root" "$build" 2>&1); rc=$?
    bad=$(grep -v "outputs match" <<<"$out" | cut -d: -f1-2 | sort -u | tr '\n' ' ')
    if [ $correction = on ] && [ $rc -ne 0 ]; then
      echo "reciprocal $ulps ULP, correction on: ties differ from ONNX Runtime:"; echo "$out"; fail=1
    elif [ $correction = off ] && [ $rc -eq 0 ]; then
      echo "reciprocal $ulps ULP, correction off: every tie still matches (the emulation shows nothing)"; fail=1
    else
      echo "reciprocal $ulps ULP, correction $correction: as expected${bad:+ (differ: $bad)}"
    fi
  done
done
exit $fail
