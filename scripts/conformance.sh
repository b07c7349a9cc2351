#!/usr/bin/env bash
# Runs the ONNX backend node tests of the pinned ONNX release (scripts/onnx-version) through
# oaax-vulkan-toolchain and libRuntimeLibrary.so by hand (docs/conformance.md).
#
# usage: scripts/conformance.sh [--swiftshader] [--update] [--table] [--filter REGEX]
#                               [--build DIR] [--jobs N] [--timeout S] [-- RUNNER_ARGS...]
#   --swiftshader  run on SwiftShader (third_party/swiftshader) instead of lavapipe
#   --update       rewrite tests/conformance/expected.txt for the cases that ran
#   --table        rewrite the per-operator table in docs/conformance.md and the README summary
#   --filter RE    only the cases whose name matches RE (e.g. '^test_conv')
#   --build DIR    build directory (default build/); it is configured and built if needed
# Environment: OAAXVK_JOBS (default 2).
# Exit: 0 no failure, 1 failures (regression, wrong, crash, timeout), 2 usage, 77 no device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build" driver=lavapipe jobs=${OAAXVK_JOBS:-2} timeout=120
runner_args=()
usage() { sed -n '5,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --swiftshader) driver=swiftshader ;;
    --update) runner_args+=(--update) ;;
    --table) runner_args+=(--table "$root/docs/conformance.md"); table=1 ;;
    --filter) [ $# -ge 2 ] || usage; runner_args+=(--filter "$2"); shift ;;
    --build) [ $# -ge 2 ] || usage; build=$(cd "$2" 2>/dev/null && pwd || echo "$2"); shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift ;;
    --timeout) [ $# -ge 2 ] || usage; timeout=$2; shift ;;
    --) shift; runner_args+=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "conformance.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done

if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
if ! cmake --build "$build" -j "$jobs" --target oaaxvk_conformance; then
  echo "conformance.sh: cannot build oaaxvk_conformance in $build (is 'conformance' in tests/CMakeLists.txt's subdirectory list?)" >&2
  exit 2
fi
runner="$build/oaaxvk_conformance"
[ -x "$runner" ] || runner="$build/tests/conformance/oaaxvk_conformance"
if [ ! -x "$runner" ]; then
  echo "conformance.sh: no oaaxvk_conformance in $build (is tests/conformance added to the build?)" >&2
  exit 2
fi

device_args=(--arg device=llvmpipe)
if [ "$driver" = swiftshader ]; then
  icd="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  [ -f "$icd" ] || { echo "conformance.sh: $icd missing; run scripts/setup.sh" >&2; exit 2; }
  export VK_ICD_FILENAMES="$icd"
  device_args=(--arg device=swiftshader)
fi
rc=0
"$runner" \
  --cases "$build/tests/conformance/node_tests/node" \
  --toolchain "$build/oaax-vulkan-toolchain" \
  --runtime "$build/libRuntimeLibrary.so" \
  --expected "$root/tests/conformance/expected.txt" \
  --work "$build/tests/conformance/work-$driver" \
  --jobs "$jobs" --timeout "$timeout" --arg log_level=4 "${device_args[@]}" \
  "${runner_args[@]}" || rc=$?
# The README's conformance summary follows the per-operator table.
if [ "${table:-0}" = 1 ] && [ "$rc" -ne 2 ]; then
  /usr/bin/python3 "$root/tests/conformance/readme_summary.py" "$root"
fi
exit $rc
