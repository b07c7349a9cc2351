#!/usr/bin/env bash
# End to end, run-time value symbols: an int64 graph input used only as a
# Reshape `shape` or a Squeeze/Unsqueeze (opset 13) `axes` input is left
# unbound at conversion; the runtime reads its values at send_input and
# computes the output shape per inference. Three one-node models (Reshape of a
# [2,3,4] tensor, Unsqueeze of [3,4] by two axes, Squeeze of [1,3,1,4] by two
# axes) are each converted once, with no config, then run through
# libRuntimeLibrary.so (oaax-run, validation layer on) on lavapipe and
# SwiftShader with many value sets (0 copies a dimension, -1 infers one,
# negative axes). Every output's shape and data must equal numpy's
# reshape / expand_dims / squeeze exactly, and invalid values (wrong element
# count, two -1s, an element outside its range, a repeated axis, squeezing a
# dimension that is not 1) must make send_input fail with a message naming
# the rule. Needs only numpy and onnx in PYTHON.
# usage: value_symbols.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
if ! "$py" -c 'import numpy, onnx' 2>/dev/null; then
  echo "SKIP: $py lacks numpy or onnx"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Models, and one input directory per value set. cases.txt lists
# "MODEL DIR" for valid sets and "MODEL DIR EXPECTED-MESSAGE" for invalid ones.
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
out = sys.argv[1]
rng = np.random.default_rng(3)
F, I64 = TensorProto.FLOAT, TensorProto.INT64
models = {  # name: (op, data input, its shape, value input, output rank)
    "reshape": ("Reshape", "data", [2, 3, 4], "shape", 3),
    "unsqueeze": ("Unsqueeze", "x", [3, 4], "axes", 4),
    "squeeze": ("Squeeze", "x", [1, 3, 1, 4], "axes", 2),
}
for name, (op, xn, xs, vn, rank) in models.items():
    g = h.make_graph([h.make_node(op, [xn, vn], ["y"], name=name)], name,
                     [h.make_tensor_value_info(xn, F, xs), h.make_tensor_value_info(vn, I64, [len(xs) if op == "Reshape" else 2])],
                     [h.make_tensor_value_info("y", F, [f"y{i}" for i in range(rank)])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
valid = {
    "reshape": [[4, 3, 2], [2, -1, 4], [0, 12, -1], [24, 1, 1], [1, 1, 24], [-1, 2, 2],
                [0, 0, 4], [4, 0, -1], [2, 3, 4]],
    "unsqueeze": [[0, 1], [-1, 0], [3, 1], [1, -2], [0, 3], [-4, -1]],
    "squeeze": [[0, 2], [2, 0], [-2, -4], [0, -2]],
}
invalid = {
    "reshape": [([5, 5, 1], "the target shape must hold the input's 24 elements"),
                ([3, 0, -1], "the target shape must hold the input's 24 elements"),
                ([-1, -1, 24], "the target shape has more than one -1"),
                ([2, 99, 1], "element 1 (shape[1]) is 99, outside shape[1]'s range")],
    "unsqueeze": [([1, 1], "Unsqueeze 'unsqueeze': an axis is repeated")],
    "squeeze": [([0, 1], "a squeezed dimension of the input [1, 3, 1, 4] is not 1")],
}
def write(d, name, vals):
    _, xn, xs, vn, _ = models[name]
    os.makedirs(d)
    rng.standard_normal(xs).astype(np.float32).tofile(f"{d}/0.bin")
    np.array(vals, np.int64).tofile(f"{d}/1.bin")
    json.dump([{"name": xn, "dtype": "float32", "shape": xs, "file": "0.bin"},
               {"name": vn, "dtype": "int64", "shape": [len(vals)], "file": "1.bin"}],
              open(f"{d}/manifest.json", "w"))
with open(f"{out}/cases.txt", "w") as cases:
    for name, sets in valid.items():
        for i, vals in enumerate(sets):
            write(f"{out}/{name}/in{i}", name, vals)
            cases.write(f"{name} in{i}\n")
    for name, sets in invalid.items():
        for vals, msg in sets:
            d = "bad" + "_".join(map(str, vals))
            write(f"{out}/{name}/{d}", name, vals)
            cases.write(f"{name} {d} {msg}\n")
PY
for m in reshape unsqueeze squeeze; do
  "$build/oaax-vulkan-toolchain" "$tmp/$m/model.onnx" "$tmp/$m/bundle" > "$tmp/$m/toolchain.log"
done
fail=0
for drv in lavapipe swiftshader; do
  if [ "$drv" = swiftshader ]; then
    icd="$root/third_party/swiftshader/vk_swiftshader_icd.json"
    if [ ! -f "$icd" ]; then echo "note: $icd missing; SwiftShader not run"; break; fi
    export VK_ICD_FILENAMES="$icd"
  fi
  while read -r m dir msg; do
    rc=0
    # LeakSanitizer: see classifier.sh (the loader dlcloses the drivers).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
    "$build/oaax-run" --model "$tmp/$m/bundle/model.oinf" --inputs "$tmp/$m/$dir" \
      --outputs "$tmp/$m/$drv-$dir" --arg validation=1 < /dev/null > "$tmp/log" 2>&1 || rc=$?
    if [ -z "$msg" ] && [ $rc -ne 0 ]; then
      echo "FAIL $drv: $m $dir: oaax-run exited $rc"; cat "$tmp/log"; fail=1
    elif [ -n "$msg" ] && [ $rc -eq 0 ]; then
      echo "FAIL $drv: $m $dir: invalid values accepted"; fail=1
    elif [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/log"; then
      echo "FAIL $drv: $m $dir: no message \"$msg\""; cat "$tmp/log"; fail=1
    elif [ -n "$msg" ]; then
      echo "$drv: $m $dir rejected: $(grep -m1 -oF -- "$msg" "$tmp/log")"
    fi
  done < "$tmp/cases.txt"
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv = sys.argv[1:3]
def load(d, i=0, dtype=np.float32):
    m = json.load(open(f"{d}/manifest.json"))[i]
    return np.fromfile(f"{d}/{m['file']}", dtype=dtype).reshape(m["shape"])
def onnx_reshape(x, s):
    return x.reshape([x.shape[i] if v == 0 else v for i, v in enumerate(s)])
ref = {"reshape": onnx_reshape,
       "unsqueeze": lambda x, a: np.expand_dims(x, tuple(a)),
       "squeeze": lambda x, a: np.squeeze(x, tuple(a))}
bad = 0
for line in open(f"{tmp}/cases.txt"):
    m, d = line.split()[:2]
    if d.startswith("bad"):
        continue
    x, vals = load(f"{tmp}/{m}/{d}"), load(f"{tmp}/{m}/{d}", 1, np.int64).tolist()
    if not os.path.exists(f"{tmp}/{m}/{drv}-{d}/manifest.json"):
        print(f"{drv}: {m} {vals}: no output"); bad = 1; continue
    want, got = ref[m](x, vals), load(f"{tmp}/{m}/{drv}-{d}")
    if got.shape != want.shape:
        err = f" WRONG, expected {list(want.shape)}"
    elif not np.array_equal(got, want):
        err = f" WRONG values, max|diff| vs numpy = {float(np.abs(got - want).max())}"
    else:
        err = ""
    print(f"{drv}: {m} {vals}: {list(got.shape)}{err}")
    bad |= bool(err)
sys.exit(bad)
PY
done
exit $fail
