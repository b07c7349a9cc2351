#!/usr/bin/env bash
# The model zoo (docs/model-zoo.md), one command, not part of the test command:
#   bash scripts/zoo.sh [--driver lavapipe|swiftshader] [--only NAME...] [--fast]
#                       [--build-dir DIR] [--cache DIR] [--timeout S] [--no-doc]
# For each model: export it from torchvision with random weights (cached in
# build/zoo, tests/zoo/export_models.py), convert it with
# oaax-vulkan-toolchain (default settings), run it through the OAAX runtime
# (oaax-run) and ONNX Runtime on inputs made from a real image, compare, and
# record the result; then write the results table of the driver into its
# section of docs/model-zoo.md (lavapipe and SwiftShader each have one).
#   --driver   lavapipe (the default ICD) or swiftshader (VK_ICD_FILENAMES)
#   --only     these models only (names as in `tests/zoo/export_models.py --list`)
#   --fast     the fast subset the test command runs (label zoo)
#   --timeout  seconds allowed per step: export, conversion, each run (default 1800)
#   --no-doc   leave docs/model-zoo.md alone (results stay in the cache)
# Results of earlier runs of the same driver stay in CACHE/results/DRIVER and
# fill the rows of models not run this time. The whole zoo takes 10 to 45
# minutes on a shared 2-core lavapipe machine (VGG and the exports of the
# detectors dominate; the models that convert take longer as support grows).
# Exit status: 0 when every model run converts and matches, 1 otherwise.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$here/build" cache="" driver=lavapipe timeout=1800 doc=1 names=() fast=0
py=/usr/bin/python3
FAST=(mobilenet_v3_small resnet18 gpt_decoder)
while [ $# -gt 0 ]; do
  case "$1" in
    --driver) driver=$2; shift 2 ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do names+=("$1"); shift; done ;;
    --fast) fast=1; shift ;;
    --build-dir) build=$(realpath -m "$2"); shift 2 ;;
    --cache) cache=$(realpath -m "$2"); shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --no-doc) doc=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#'; exit 0 ;;
    *) echo "zoo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$driver" in lavapipe|swiftshader) ;; *) echo "zoo.sh: --driver must be lavapipe or swiftshader, not '$driver'" >&2; exit 2 ;; esac
cache=${cache:-$build/zoo}
[ $fast -eq 1 ] && names+=("${FAST[@]}")
mapfile -t known < <("$py" "$here/tests/zoo/export_models.py" --list | cut -d' ' -f1)
if [ ${#names[@]} -eq 0 ]; then
  names=("${known[@]}")
fi
for n in "${names[@]}"; do
  if ! printf '%s\n' "${known[@]}" | grep -qx -- "$n"; then
    echo "zoo.sh: unknown model '$n'; the zoo's models: ${known[*]}" >&2; exit 2
  fi
done
for t in oaax-vulkan-toolchain oaax-run libRuntimeLibrary.so; do
  if [ ! -e "$build/$t" ]; then
    echo "zoo.sh: $build/$t is missing; build it: cmake --build $build --target oaax-vulkan-toolchain RuntimeLibrary oaax-run" >&2
    exit 1
  fi
done
results="$cache/results/$driver"
mkdir -p "$results"
fail=0
for n in "${names[@]}"; do
  rm -f "$results/$n.json"
  "$py" "$here/tests/zoo/run_model.py" "$n" --build "$build" --cache "$cache" --driver "$driver" \
    --timeout "$timeout" --result "$results/$n.json" || true
  if [ ! -f "$results/$n.json" ]; then
    echo "zoo.sh: $n: no result (see the messages above)" >&2; fail=1; continue
  fi
  "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["matches"] else 1)' "$results/$n.json" || fail=1
done
if [ $doc -eq 1 ]; then
  "$py" "$here/tests/zoo/table.py" "$results" "$here/docs/model-zoo.md" "$driver" "$timeout"
fi
exit $fail
