#!/usr/bin/env bash
# Operator forms of ai.onnx opset 18 (make_opset18_models.py: ReduceMean,
# ReduceL2 and ReduceLogSumExp with `axes` as an input, ReduceMax without
# axes, Split with `num_outputs` and an
# uneven last chunk, Pad with `axes`; and an opset-23 model of definitions newer than opset 17
# that only admit more types or, Cast, add float8 saturation: Conv-22,
# Transpose / Reshape / Unsqueeze / Identity / Shape / Cast-23) compiled by
# oaax-vulkan-toolchain and run by oaax-run on
# lavapipe match ONNX Runtime: |diff| <= 1e-5 * (1 + |ref|) per element; and
# ReduceMax / ReduceMin-20 of bool values (any / all) and of floats.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh) or
# without the project's Python environment.
# usage: opset18_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
#   PYTHON: the project's Python environment with the pinned onnx
#   (scripts/python-env.sh; CMake's OAAXVK_ONNX_PYTHON), whose checker knows
#   the opsets these models use
set -euo pipefail
py=$1 root=$2 build=$3
if [ ! -x "$py" ]; then
  echo "SKIP: $py missing; run scripts/python-env.sh (or scripts/setup.sh)"; exit 77
fi
nm="$root/third_party/cache/node/node_modules"
if [ ! -d "$nm/onnxruntime-node" ]; then
  echo "SKIP: ONNX Runtime missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/toolchain/make_opset18_models.py" "$tmp"

check() {  # MODEL INPUT_DIR
"$build/oaax-vulkan-toolchain" "$tmp/$1.onnx" "$tmp/$1.bundle" > "$tmp/toolchain.log"
NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$tmp/$1.onnx" "$tmp/$2" "$tmp/$1.ort" >/dev/null
# See tests/e2e/classifier.sh for why leak checking is off in this process.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
"$build/oaax-run" --model "$tmp/$1.bundle/model.oinf" --inputs "$tmp/$2" --outputs "$tmp/$1.got" --arg validation=1 >/dev/null
"$py" - "$tmp/$1.ort" "$tmp/$1.got" "$1" <<'PY'
import json, sys
import numpy as np
ref_dir, got_dir, what = sys.argv[1:4]
ref = json.load(open(f"{ref_dir}/manifest.json"))
got = json.load(open(f"{got_dir}/manifest.json"))
assert [r["name"] for r in ref] == [g["name"] for g in got], (ref, got)
bad = []
for r, g in zip(ref, got):
    a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=np.float32)
    b = np.fromfile(f"{got_dir}/{g['file']}", dtype=np.float32)
    if r["shape"] != g["shape"] or a.shape != b.shape:
        bad.append(f"{r['name']}: shape {g['shape']} != {r['shape']}")
        continue
    err = float(np.max(np.abs(a - b) / (1 + np.abs(a))))
    if not err <= 1e-5:
        bad.append(f"{r['name']}: relative error {err:.3g}")
print(f"lavapipe: {what}: {len(ref) - len(bad)}/{len(ref)} outputs match ONNX Runtime")
if bad:
    sys.exit("; ".join(bad))
PY
}
check opset18_mix in
check opset23_mix in23
check opset20_reduce in20
