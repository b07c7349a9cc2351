#!/usr/bin/env bash
# Runs ONNX 1.12's ONNXIFI test driver (onnxifi_test_driver_gtests, compiled
# from Debian's python3-onnx sources at build time) on one libonnx-testdata
# data set with libonnxifi-vulkan.so reachable as libonnx's default name
# libonnxifi.so (a symlink in a private directory on LD_LIBRARY_PATH), then
# judges the outcome of every case against tests/onnxifi/expected/<set>.txt.
#
# usage: run_driver.sh DRIVER LIBRARY PYTHON DATA_DIR EXPECTED_FILE OUT_DIR
# Exit 0: every case as expected; 1: a regression or a crash; 77: skipped
# (no test data, or no Vulkan device).
set -uo pipefail
driver=$1 lib=$2 python=$3 data=$4 expected=$5 out=$6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
set_name=$(basename "$data")

if [ ! -d "$data" ]; then
  echo "SKIP: $data is missing (Debian package libonnx-testdata; scripts/setup.sh installs it)"
  exit 77
fi
mkdir -p "$out"
libdir=$(mktemp -d)
trap 'rm -rf "$libdir"' EXIT
ln -s "$(readlink -f "$lib")" "$libdir/libonnxifi.so"

# Unnamed tensors of the data (the pytorch sets) get the names of the graph
# inputs/outputs at their positions, in a copy under OUT_DIR.
data=$("$python" "$here/name_test_data.py" "$data" "$out/$set_name.named") || exit 1
[ "$data" = "$4" ] || echo "unnamed test data: running on the named copy $data"

# The driver's known defects: cases it cannot judge, excluded by name.
"$python" "$here/driver_exclusions.py" "$data" > "$out/$set_name.excluded.txt" || exit 1
filter=$("$python" "$here/driver_exclusions.py" "$data" --filter) || exit 1

json="$out/$set_name.json"
rm -f "$json"
start=$(date +%s)
OAAXVK_ONNXIFI_LOG_LEVEL=2 LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$driver" --gtest_filter="$filter" --gtest_output="json:$json" "$data" > "$out/$set_name.log" 2>&1
rc=$?
end=$(date +%s)
echo "driver exit $rc after $((end - start)) s; log: $out/$set_name.log"
if [ ! -s "$json" ]; then
  echo "FAIL: the driver wrote no report (crash?); last lines of its log:"
  tail -30 "$out/$set_name.log"
  exit 1
fi
"$python" "$here/driver_summary.py" "$json" "$out/$set_name.excluded.txt" "$expected" "$set_name" "$out/$set_name.log" "$data"
