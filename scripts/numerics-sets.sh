#!/usr/bin/env bash
# Writes the numerics model sets that the device check's `numerics` step runs
# (bench/gpu_check.py; docs/gpu-check.md): the models and input sets of the
# ctests toolchain.e2e_special_values_vs_onnxruntime (special values: NaN,
# +-inf, signed zeros, subnormals) and toolchain.e2e_gpu_ties_vs_onnxruntime
# (rounding ties: integer quotients, .5 coordinates, IoU at the threshold,
# large Sin arguments), made by the same model makers, with the comparison
# options those tests give tests/reference/compare_outputs.py:
#   OUT_DIR/suites.json          [{"suite", "test", "compare": [options]}]
#   OUT_DIR/compare_outputs.py   the comparison, a copy
#   OUT_DIR/SUITE/models.txt     "MODEL SET..." per line
#   OUT_DIR/SUITE/MODEL/         model.onnx, config.json and reference.onnx
#                                where the maker writes them, one directory
#                                per input set (manifest.json + raw inputs)
# usage: scripts/numerics-sets.sh BUILD_DIR OUT_DIR
#   BUILD_DIR: a configured build; its OAAXVK_ONNX_PYTHON (the project's
#   Python environment, scripts/python-env.sh) runs the makers, as in the
#   ctests: the special-value models are opset 20, beyond Debian's onnx.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -eq 2 ] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$1 out=$2
py=$(sed -n 's/^OAAXVK_ONNX_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [ -z "$py" ] || [ ! -x "$py" ]; then
  echo "numerics-sets.sh: no project Python environment (OAAXVK_ONNX_PYTHON of $build/CMakeCache.txt:" \
       "'${py:-unset}'): run scripts/python-env.sh and configure $build" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out"
suites=()
for suite in special_values:make_special_value_models.py:special_values_vs_ort.sh \
             gpu_ties:make_gpu_tie_models.py:gpu_ties_vs_ort.sh; do
  IFS=: read -r name maker test <<<"$suite"
  # The options are read from the ctest's own script, so both compare alike.
  opts=$(sed -n 's/^vs_ort_model_sets "[^"]*" *//p' "$root/tests/toolchain/$test")
  [ -n "$opts" ] || { echo "numerics-sets.sh: no 'vs_ort_model_sets' line in tests/toolchain/$test" >&2; exit 1; }
  "$py" "$root/tests/toolchain/$maker" "$out/$name"
  suites+=("$name" "tests/toolchain/$test" "$opts")
done
cp "$root/tests/reference/compare_outputs.py" "$out/"
"$py" - "$out/suites.json" "${suites[@]}" <<'EOF'
import json, sys
a = sys.argv[2:]
json.dump([{"suite": a[i], "test": a[i + 1], "compare": a[i + 2].split()} for i in range(0, len(a), 3)],
          open(sys.argv[1], "w"), indent=1)
EOF
