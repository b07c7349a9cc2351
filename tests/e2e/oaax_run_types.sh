#!/usr/bin/env bash
# oaax-run's .npy forms of the types numpy lacks (tools/oaax_run/npy_tensor.h,
# docs/runtime.md "oaax-run"): a model (opset 24) with one input of each of
# float16, bfloat16, the five 8-bit floats, int4, uint4 and float4e2m1, each
# Cast to float32, and one float32 input Cast to each of those types, run on
# lavapipe and compared with the ONNX reference evaluator (bit for bit):
#   - inputs given in every accepted form: numpy's '<f2', the ml_dtypes name
#     as descr, np.save's form of an ml_dtypes array ('<V2', '<V1', '<f1'),
#     and float32 / float64 files rounded by --cast-inputs;
#   - outputs read back with np.load after `import ml_dtypes` (their dtype is
#     the ml_dtypes type), and as float32 with --float32-outputs;
#   - the errors: a float32 file without --cast-inputs, a '<V2' file for an
#     8-bit input, a 4-bit file with a high nibble set, each naming the input,
#     the file and the fix.
# Exit 77 (skip) without numpy, ml_dtypes and onnx >= 1.19 (FLOAT8E8M0).
# usage: oaax_run_types.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
if ! "$py" -c 'import ml_dtypes, onnx.reference; onnx.TensorProto.FLOAT8E8M0' 2>/dev/null; then
  echo "SKIP: $py lacks ml_dtypes or onnx >= 1.19 (FLOAT8E8M0)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=("$build/oaax-run" --model "$tmp/bundle/model.oinf" --quiet)

"$py" - "$tmp" <<'PY'
import os, sys
import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h
from onnx.reference import ReferenceEvaluator
tmp = sys.argv[1]
TYPES = {"float16": T.FLOAT16, "bfloat16": T.BFLOAT16, "float8_e4m3fn": T.FLOAT8E4M3FN,
         "float8_e4m3fnuz": T.FLOAT8E4M3FNUZ, "float8_e5m2": T.FLOAT8E5M2, "float8_e5m2fnuz": T.FLOAT8E5M2FNUZ,
         "float8_e8m0fnu": T.FLOAT8E8M0, "int4": T.INT4, "uint4": T.UINT4, "float4_e2m1fn": T.FLOAT4E2M1}
N = 5  # odd: the last 4-bit byte holds one element
nodes, ins, outs = [], [h.make_tensor_value_info("x", T.FLOAT, [N])], []
for n, t in TYPES.items():
    ins.append(h.make_tensor_value_info("a_" + n, t, [N]))
    nodes += [h.make_node("Cast", ["a_" + n], ["f_" + n], to=T.FLOAT), h.make_node("Cast", ["x"], ["y_" + n], to=t)]
    outs += [h.make_tensor_value_info("f_" + n, T.FLOAT, [N]), h.make_tensor_value_info("y_" + n, t, [N])]
m = h.make_model(h.make_graph(nodes, "types", ins, outs), opset_imports=[h.make_opsetid("", 24)])
m.ir_version = 11
onnx.checker.check_model(m, full_check=True)
onnx.save(m, f"{tmp}/model.onnx")

def save_named(path, a):
    """An ml_dtypes array with its ml_dtypes name as descr (oaax-run's output form)."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": a.dtype.name, "fortran_order": False, "shape": a.shape})
        f.write(a.tobytes())

# Values exact in their type except where a case says otherwise.
VALUES = {"float16": [1.5, -2.0, 0.000123, 65504.0, -0.0], "bfloat16": [1.5, -2.0, 3.0e38, 1e-3, 7.0],
          "float8_e4m3fn": [1.5, -2.0, 448.0, 0.015625, -0.5], "float8_e4m3fnuz": [1.5, -2.0, 240.0, 0.0078125, 3.0],
          "float8_e5m2": [1.5, -2.0, 57344.0, 0.25, -96.0], "float8_e5m2fnuz": [1.5, -2.0, 57344.0, 0.125, 6.0],
          "float8_e8m0fnu": [1.0, 2.0, 0.5, 1024.0, 2.0 ** -20], "int4": [-8, -1, 0, 3, 7], "uint4": [0, 1, 7, 8, 15],
          "float4_e2m1fn": [0.5, -1.5, 6.0, -0.0, 3.0]}
feeds = {"x": np.array([1.0, -2.0, 0.3, 300.0, 0.0078125], np.float32)}
np.save(f"{tmp}/x.npy", feeds["x"])
# The form each input is given in (all accepted): the file name says which.
FORM = {"float16": "native", "bfloat16": "save", "float8_e4m3fn": "named", "float8_e4m3fnuz": "save",
        "float8_e5m2": "save", "float8_e5m2fnuz": "named", "float8_e8m0fnu": "cast64", "int4": "save",
        "uint4": "named", "float4_e2m1fn": "cast32"}
# --cast-inputs rounds: float32 values that are not exact in the type.
ROUNDED = {"float4_e2m1fn": [0.7, -1.3, 9.0, -0.2, 2.6], "float8_e8m0fnu": [1.0, 3.0, 0.3, 1000.0, 2.0 ** -20]}
args = []
for n in TYPES:
    dt = getattr(ml_dtypes, n) if n != "float16" else np.float16
    form = FORM[n]
    src = np.array(ROUNDED.get(n, VALUES[n]), np.float64)
    if n == "float8_e8m0fnu":
        # ml_dtypes rounds to nearest; ONNX Cast (and --cast-inputs) rounds up.
        a = np.array([2.0 ** np.ceil(np.log2(v)) for v in src]).astype(dt)
    else:
        a = src.astype(np.float32).astype(dt)
    feeds["a_" + n] = a
    path = f"{tmp}/a_{n}.{form}.npy"
    if form in ("native", "save"):
        np.save(path, a)
    elif form == "named":
        save_named(path, a)
    else:
        np.save(path, src.astype(np.float32 if form == "cast32" else np.float64))
    args.append(f"--input a_{n}={path}")
open(f"{tmp}/args.txt", "w").write(" ".join(args) + "\n")
# The reference: the ONNX reference evaluator on the same values.
ref = ReferenceEvaluator(m).run(None, feeds)
for o, r in zip(outs, ref):
    save_named(f"{tmp}/ref_{o.name}.npy", np.asarray(r))
# Inputs for the error cases.
np.save(f"{tmp}/bad_v2.npy", np.zeros(N, ml_dtypes.bfloat16))
np.save(f"{tmp}/bad_nibble.npy", np.array([1, 2, 0x13, 4, 5], np.uint8).view(np.dtype("V1")))
PY

"$build/oaax-vulkan-toolchain" "$tmp/model.onnx" "$tmp/bundle" > "$tmp/toolchain.log" 2>&1 ||
  { cat "$tmp/toolchain.log"; echo "FAIL: conversion"; exit 1; }
read -r -a given < "$tmp/args.txt"
"${run[@]}" --input "x=$tmp/x.npy" "${given[@]}" --cast-inputs --output-dir "$tmp/out" > /dev/null
"${run[@]}" --input "x=$tmp/x.npy" "${given[@]}" --cast-inputs --float32-outputs --output-dir "$tmp/out32" > /dev/null

"$py" - "$tmp" <<'PY'
import glob, os, sys
import ml_dtypes  # noqa: F401 - registers the dtypes np.load resolves
import numpy as np
tmp = sys.argv[1]
bad = 0
refs = sorted(glob.glob(f"{tmp}/ref_*.npy"))
assert len(refs) == 20, refs
for r in refs:
    name = os.path.basename(r)[4:]
    want = np.load(r)
    got = np.load(f"{tmp}/out/{name}")
    got32 = np.load(f"{tmp}/out32/{name}")
    same = (got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes())
    w32 = want.astype(np.float32)
    same32 = got32.dtype == np.float32 and np.array_equal(got32, w32, equal_nan=True) and \
        np.array_equal(np.signbit(got32), np.signbit(w32))
    print(f"{name}: {got.dtype} {got.tolist()} {'ok' if same else 'MISMATCH: want ' + str(want.dtype) + ' ' + str(want.tolist())}"
          f"; float32 {'ok' if same32 else 'MISMATCH ' + str(got32.tolist())}")
    bad += not (same and same32)
sys.exit(1 if bad else 0)
PY

# Errors, each before the runtime is loaded: what, which input, the fix.
expect_error() {
  local want=$1; shift
  local out rc=0
  out=$("${run[@]}" "$@" 2>&1) || rc=$?
  if [ $rc -eq 0 ] || ! grep -qF -- "$want" <<< "$out"; then
    echo "FAIL: oaax-run $* gave exit $rc and '$out'; expected an error containing: $want"; exit 1
  fi
  echo "ok: $out"
}
expect_error "input 'a_float4_e2m1fn': $tmp/a_float4_e2m1fn.cast32.npy has dtype float32, the model expects float4_e2m1fn: save the array as float4_e2m1fn (np.save(path, a.astype(ml_dtypes.float4_e2m1fn))) or, from float32 or float64 values, pass --cast-inputs" \
  --input "a_float4_e2m1fn=$tmp/a_float4_e2m1fn.cast32.npy"
expect_error "input 'a_float8_e4m3fn': $tmp/bad_v2.npy has dtype void16 (untyped 2-byte elements, as np.save writes an ml_dtypes array), the model expects float8_e4m3fn" \
  --input "a_float8_e4m3fn=$tmp/bad_v2.npy"
expect_error "input 'a_int4': $tmp/bad_nibble.npy element 2 is 0x13, not a valid int4 code" --input "a_int4=$tmp/bad_nibble.npy"
expect_error "input 'x': $tmp/a_float16.native.npy has dtype float16, the model expects float32: save the array as float32 (np.save(path, a.astype(np.float32)))" \
  --input "x=$tmp/a_float16.native.npy" --cast-inputs
echo "PASS"
