#!/usr/bin/env bash
# The benchmark suite (issue 7), one command, not part of the test command:
#   bash scripts/bench.sh [--quick] [--swiftshader] [--build-dir DIR] [--seconds S] [--budget S] [--only A,B]
# Builds what it needs (toolchain, runtime, oaax-run, oaaxvk-roofline) in
# build/ (or DIR), then measures in ONE run: the device roofline, single-node
# kernels, the PP-OCR and torchvision models beside ONNX Runtime CPU, and the
# host overhead; writes bench/RESULTS.md, bench/results.json, bench/roofline.png;
# then NonMaxSuppression (1k-50k boxes, a detector with and without it) beside
# ONNX Runtime: bench/nms.json and RESULTS.md's section (bench/nms_bench.py).
#   --quick        a small subset with short measurements (< 3 minutes)
#   --swiftshader  run on SwiftShader (VK_ICD_FILENAMES) instead of the default ICD
# Full run: about 30 minutes on a 2-core lavapipe machine. See docs/benchmarks.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$here/build"
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|--swiftshader) pass+=("$1"); shift ;;
    --build-dir) build=$(realpath -m "$2"); shift 2 ;;
    --seconds|--budget|--only) pass+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

bash "$here/scripts/setup.sh"
bash "$here/scripts/fetch-reference.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
jobs=$(nproc)
cmake --build "$build" -j"$jobs" --target oaax-vulkan-toolchain RuntimeLibrary oaax-run oaaxvk-roofline
if [ ! -x "$build/oaaxvk-roofline" ]; then
  echo "bench.sh: $build/oaaxvk-roofline was not built (Google Benchmark missing or OAAXVK_BENCH=OFF?)" >&2
  exit 1
fi
/usr/bin/python3 "$here/bench/run_bench.py" --build-dir "$build" "${pass[@]}"
exec /usr/bin/python3 "$here/bench/nms_bench.py" --build-dir "$build" "${pass[@]}"
