#!/usr/bin/env bash
# oaax-run end to end on test bundles (tests/runtime/write_test_bundle):
# random and .npy inputs, outputs as .npy checked with numpy, JSON and text
# reports, manifest mode, and every user-facing error path (exit status and
# a message naming what is wrong).
# usage: oaax_run_cli.sh PYTHON OAAX_RUN WRITE_TEST_BUNDLE FAKE_RUNTIME_SO
set -uo pipefail
py=$1 run=$2 mkbundle=$3 fake=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The Vulkan loader unloads drivers at instance destruction, so LeakSanitizer
# (sanitized build) cannot attribute their allocations; the runtime tests
# check leaks with the drivers pinned.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$mkbundle" affine 13 "$tmp/affine.oinf" || exit 1
"$mkbundle" two 7 "$tmp/two.oinf" || exit 1
"$mkbundle" dynamic 100 "$tmp/dyn.oinf" || exit 1     # x, y [1, K], K in [1, 100]
"$mkbundle" dyntwo 50 "$tmp/dyntwo.oinf" || exit 1    # "input:0" [1, N], "画像" [N], N in [1, 50]
"$mkbundle" dynrows 64 "$tmp/dynrows.oinf" || exit 1  # x [R, L] -> y [R], R in [1, 64], L in [4, 64] on multiples of 4
"$py" - "$tmp" <<'PY' || exit 1
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
np.save(f"{d}/x.npy", rng.uniform(-2, 2, (1, 13)).astype(np.float32))
np.save(f"{d}/x64.npy", rng.uniform(-2, 2, (1, 13)))
np.save(f"{d}/x12.npy", rng.uniform(-2, 2, (1, 12)).astype(np.float32))
np.save(f"{d}/a.npy", rng.uniform(-2, 2, (1, 7)).astype(np.float32))
np.save(f"{d}/b.npy", rng.uniform(-2, 2, (7,)).astype(np.float32))
np.save(f"{d}/x37.npy", rng.uniform(-2, 2, (1, 37)).astype(np.float32))
np.save(f"{d}/x101.npy", rng.uniform(-2, 2, (1, 101)).astype(np.float32))
open(f"{d}/garbage.npy", "wb").write(b"hello, not numpy")
open(f"{d}/model.txt", "w").write("not a model\n")
open(f"{d}/model.onnx", "wb").write(b"\x08\x07")  # the start of an ONNX ModelProto
# A bundle the runtime rejects at load (oaax-run reads only its I/O): the
# first kernel's SPIR-V magic number zeroed.
b = bytearray(open(f"{d}/affine.oinf", "rb").read())
i = b.find(bytes([0x03, 0x02, 0x23, 0x07]))
assert i > 0
b[i:i + 4] = bytes(4)
open(f"{d}/broken.oinf", "wb").write(b)
# A valid OINF file of another format.
b = open(f"{d}/affine.oinf", "rb").read()
assert b.count(b"oaax-vulkan-bundle") == 1
open(f"{d}/plain.oinf", "wb").write(b.replace(b"oaax-vulkan-bundle", b"another-format-xyz"))
PY

# expect_error NAME EXIT_CODE FRAGMENT -- ARGS...: oaax-run exits with EXIT_CODE and stderr holds FRAGMENT.
expect_error() {
  local name=$1 code=$2 fragment=$3
  shift 4
  "$run" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
  local rc=$?
  if [ "$rc" != "$code" ]; then fail "$name: exit $rc, expected $code; stderr: $(cat "$tmp/err.txt")"; return; fi
  if ! grep -qF -- "$fragment" "$tmp/err.txt"; then fail "$name: '$fragment' not in stderr: $(cat "$tmp/err.txt")"; return; fi
  echo "ok: $name: $(grep -F -- "$fragment" "$tmp/err.txt" | head -1)"
}

# ---- successful runs ----
# Random inputs from the bundle's declared inputs, queued 3 deep, JSON report.
if "$run" --model "$tmp/affine.oinf" --iterations 40 --warmup 3 --depth 3 --seed 9 --json \
     --output-dir "$tmp/rand" --arg validation=1 >"$tmp/rand.json" 2>"$tmp/err.txt"; then
  "$py" - "$tmp" <<'PY' && echo "ok: random inputs, JSON report" || fail "random inputs JSON report"
import json, sys, numpy as np
d = sys.argv[1]
r = json.load(open(f"{d}/rand.json"))
assert r["iterations"] == 40 and r["warmup"] == 3 and r["depth"] == 3, r
lat = r["latency_ms"]
assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
assert r["throughput_per_s"] > 0 and r["load_ms"] > 0 and r["host_overhead_ms"]["mean"] >= 0, r
assert r["runtime"]["name"] == "OAAX Vulkan Runtime", r["runtime"]
assert r["inputs"] == [{"name": "x", "dtype": "float32", "shape": [1, 13], "source": "random(seed 9)"}], r["inputs"]
(o,) = r["outputs"]
assert o["name"] == "y" and o["shape"] == [1, 13] and o["dtype"] == "float32", o
y = np.load(o["file"])
assert y.shape == (1, 13) and y.dtype == np.float32 and (y >= 0).all() and (y > 0).any(), y
PY
else
  fail "random inputs: $(cat "$tmp/err.txt")"
fi

# Same seed, same outputs; text report with percentiles.
if "$run" --model "$tmp/affine.oinf" --seed 9 --output-dir "$tmp/rand2" --quiet >"$tmp/text.txt" 2>"$tmp/err.txt" &&
   cmp -s "$tmp/rand/y.npy" "$tmp/rand2/y.npy" && grep -q "latency ms   p50 .* p90 .* p99" "$tmp/text.txt" &&
   grep -q "throughput   .* inferences/s$" "$tmp/text.txt" && grep -q "loaded in" "$tmp/text.txt" &&
   grep -q "^inferences   1 timed (+0 warm-up), depth 1, " "$tmp/text.txt" && ! grep -q "items/s" "$tmp/text.txt"; then
  echo "ok: seeded random inputs are reproducible; text report at the default depth 1, no items/s for batch 1"
else
  fail "seeded rerun / text report: $(cat "$tmp/err.txt" "$tmp/text.txt")"
fi

# Given .npy input: y = relu(2x - 1) exactly.
if "$run" --model "$tmp/affine.oinf" --input "x=$tmp/x.npy" --output-dir "$tmp/given" --quiet >/dev/null 2>"$tmp/err.txt"; then
  "$py" - "$tmp" <<'PY' && echo "ok: .npy input -> .npy output matches relu(2x - 1)" || fail ".npy round trip values"
import sys, numpy as np
d = sys.argv[1]
x = np.load(f"{d}/x.npy")
y = np.load(f"{d}/given/y.npy")
want = np.maximum(np.float32(2) * x - np.float32(1), np.float32(0))
assert y.dtype == np.float32 and y.shape == x.shape and np.array_equal(y, want), (y, want)
PY
else
  fail ".npy input: $(cat "$tmp/err.txt")"
fi

# Two inputs and outputs with names that are not file names ("input:0", "画像", "sum/out", "prod:0").
if "$run" --model "$tmp/two.oinf" --input "画像=$tmp/b.npy" --input "input:0=$tmp/a.npy" --output-dir "$tmp/two" \
     --iterations 5 --depth 1 --quiet >/dev/null 2>"$tmp/err.txt"; then
  "$py" - "$tmp" <<'PY' && echo "ok: two named inputs/outputs" || fail "two inputs/outputs values"
import sys, numpy as np
d = sys.argv[1]
a, b = np.load(f"{d}/a.npy"), np.load(f"{d}/b.npy")
s, p = np.load(f"{d}/two/sum_out.npy"), np.load(f"{d}/two/prod_0.npy")
assert s.shape == (7,) and p.shape == (1, 7), (s.shape, p.shape)
assert np.array_equal(s, a.reshape(7) + b) and np.array_equal(p, a * b.reshape(1, 7))
PY
else
  fail "two inputs: $(cat "$tmp/err.txt")"
fi

# Manifest mode (tools/reference/ort_run.js's form).
mkdir -p "$tmp/man_in"
"$py" -c "
import json, numpy as np, sys
x = np.load('$tmp/x.npy'); x.tofile('$tmp/man_in/0.bin')
json.dump([{'name': 'x', 'dtype': 'float32', 'shape': [1, 13], 'file': '0.bin'}], open('$tmp/man_in/manifest.json', 'w'))"
if "$run" --model "$tmp/affine.oinf" --inputs "$tmp/man_in" --outputs "$tmp/man_out" --quiet >/dev/null 2>"$tmp/err.txt" &&
   "$py" -c "
import json, numpy as np
m = json.load(open('$tmp/man_out/manifest.json'))
assert m == [{'name': 'y', 'dtype': 'float32', 'shape': [1, 13], 'file': '0.bin'}], m
y = np.fromfile('$tmp/man_out/0.bin', dtype=np.float32)
assert np.array_equal(y, np.load('$tmp/given/y.npy').reshape(-1))"; then
  echo "ok: manifest mode"
else
  fail "manifest mode: $(cat "$tmp/err.txt")"
fi

# Several input sets on one loaded model: each set's outputs in its own
# directory, a rejected set (wrong shape) named by its directory while the
# sets after it still run, exit status 1.
mkdir -p "$tmp/man_bad" "$tmp/man_in2"
"$py" -c "
import json, numpy as np
np.load('$tmp/x12.npy').tofile('$tmp/man_bad/0.bin')
json.dump([{'name': 'x', 'dtype': 'float32', 'shape': [1, 12], 'file': '0.bin'}], open('$tmp/man_bad/manifest.json', 'w'))
(-np.load('$tmp/x.npy')).tofile('$tmp/man_in2/0.bin')
json.dump([{'name': 'x', 'dtype': 'float32', 'shape': [1, 13], 'file': '0.bin'}], open('$tmp/man_in2/manifest.json', 'w'))"
"$run" --model "$tmp/affine.oinf" --inputs "$tmp/man_in" --outputs "$tmp/sets_0" --inputs "$tmp/man_bad" \
  --outputs "$tmp/sets_1" --inputs "$tmp/man_in2" --outputs "$tmp/sets_2" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc = 1 ] && grep -qF "input set 2 of 3 ('$tmp/man_bad'): send_input failed" "$tmp/err.txt" &&
   grep -qF "shape [1, 12], the model expects [1, 13]" "$tmp/err.txt" && [ ! -e "$tmp/sets_1" ] &&
   "$py" -c "
import json, numpy as np
y0 = np.fromfile('$tmp/sets_0/0.bin', dtype=np.float32)
assert np.array_equal(y0, np.load('$tmp/given/y.npy').reshape(-1)), y0
x2 = -np.load('$tmp/x.npy').reshape(-1)
y2 = np.fromfile('$tmp/sets_2/0.bin', dtype=np.float32)
assert json.load(open('$tmp/sets_2/manifest.json'))[0]['shape'] == [1, 13]
assert not np.array_equal(y2, y0)"; then
  echo "ok: several input sets (one rejected, the others run)"
else
  fail "several input sets: exit $rc: $(cat "$tmp/err.txt")"
fi

# Dynamic shapes (bundle feature dynamic_shapes): random inputs at the maximum
# shape by default, at the --shape given, a shared symbol filled in for the
# other input; a .npy input of any valid shape; outputs at the actual shape.
if "$run" --model "$tmp/dyn.oinf" --json --output-dir "$tmp/dmax" --arg validation=1 >"$tmp/dmax.json" 2>"$tmp/err.txt" &&
   "$run" --model "$tmp/dyn.oinf" --shape x=1,37 --iterations 5 --json --output-dir "$tmp/d37" --arg validation=1 \
     >"$tmp/d37.json" 2>"$tmp/err.txt" &&
   "$run" --model "$tmp/dyn.oinf" --input "x=$tmp/x37.npy" --output-dir "$tmp/dnpy" --quiet >/dev/null 2>"$tmp/err.txt" &&
   "$run" --model "$tmp/dyntwo.oinf" --shape "input:0=1,9" --json --output-dir "$tmp/dtwo" >"$tmp/dtwo.json" 2>"$tmp/err.txt"; then
  "$py" - "$tmp" <<'PY' && echo "ok: --shape and dynamic-shape bundles" || fail "--shape outputs"
import json, sys, numpy as np
d = sys.argv[1]
r = json.load(open(f"{d}/dmax.json"))
assert r["inputs"][0]["shape"] == [1, 100] and r["outputs"][0]["shape"] == [1, 100], r
assert r["depth"] == 1 and r["batch"] == 1 and r["items_per_s"] == r["throughput_per_s"], r
r = json.load(open(f"{d}/d37.json"))
assert r["inputs"] == [{"name": "x", "dtype": "float32", "shape": [1, 37], "source": "random(seed 0)"}], r["inputs"]
assert r["outputs"][0]["shape"] == [1, 37], r["outputs"]
assert np.load(f"{d}/d37/y.npy").shape == (1, 37)
x = np.load(f"{d}/x37.npy")
y = np.load(f"{d}/dnpy/y.npy")
want = np.maximum(np.float32(2) * x - np.float32(1), np.float32(0))
assert y.shape == (1, 37) and np.array_equal(y, want), (y, want)
r = json.load(open(f"{d}/dtwo.json"))
assert [i["shape"] for i in r["inputs"]] == [[1, 9], [9]], r["inputs"]
assert [o["shape"] for o in r["outputs"]] == [[9], [1, 9]], r["outputs"]
PY
else
  fail "dynamic shapes: $(cat "$tmp/err.txt")"
fi

# A batch (the first input's first dimension): items/s beside inferences/s,
# in the text and the JSON report; an output directory ending in '/' gives
# clean file paths.
if "$run" --model "$tmp/dynrows.oinf" --shape x=8,16 --iterations 4 --output-dir "$tmp/rows/" --quiet \
     >"$tmp/rows.txt" 2>"$tmp/err.txt" &&
   "$run" --model "$tmp/dynrows.oinf" --shape x=8,16 --iterations 4 --depth 2 --json --quiet >"$tmp/rows.json" \
     2>"$tmp/err.txt" &&
   grep -q "^throughput   .* inferences/s, .* items/s (batch 8: the first dimension of input 'x')$" "$tmp/rows.txt" &&
   grep -qF -- "-> $tmp/rows/y.npy" "$tmp/rows.txt" && ! grep -qF "//" "$tmp/rows.txt" &&
   "$py" -c "
import json
r = json.load(open('$tmp/rows.json'))
assert r['depth'] == 2 and r['batch'] == 8, r
assert abs(r['items_per_s'] - 8 * r['throughput_per_s']) <= 1e-6 * r['items_per_s'], r"; then
  echo "ok: items/s for a batch of 8; clean output paths"
else
  fail "items/s or output paths: $(cat "$tmp/err.txt" "$tmp/rows.txt")"
fi

# --help: every argument of the OAAX Vulkan runtime (force_staging is an
# undocumented test knob), one line each, and what depth 1 measures.
"$run" --help >"$tmp/help.txt" 2>&1
missing=""
for key in device frames_in_flight receive_timeout_ms log_level log_file validation pipeline_cache \
           pipeline_cache_dir load_warmup profile kernel_variant fp16_weights shape_cache_size; do
  grep -q "^  $key=" "$tmp/help.txt" || missing="$missing $key"
done
if [ -z "$missing" ] && grep -q "default 1: latency" "$tmp/help.txt"; then
  echo "ok: --help lists every runtime argument"
else
  fail "--help lacks runtime argument(s):$missing: $(cat "$tmp/help.txt")"
fi

# ---- errors ----
expect_error "missing runtime library" 1 "cannot load runtime library '$tmp/nope.so'" -- \
  --runtime "$tmp/nope.so" --model "$tmp/affine.oinf"
expect_error "library lacking OAAX symbols" 1 "missing symbol(s) runtime_initialization_with_args, runtime_model_loading, send_input" -- \
  --runtime "$fake" --model "$tmp/affine.oinf"
expect_error "model rejected by the runtime" 1 "runtime_model_loading('$tmp/broken.oinf') failed: the runtime rejects the model" -- \
  --model "$tmp/broken.oinf"
expect_error "an ONNX file" 1 "model '$tmp/model.onnx': this is an ONNX file: convert it first with oaax-vulkan-toolchain $tmp/model.onnx out/ and run out/model.oinf" -- \
  --model "$tmp/model.onnx"
expect_error "an ONNX file with inputs" 1 "this is an ONNX file: convert it first" -- \
  --model "$tmp/model.onnx" --input "x=$tmp/x.npy"
expect_error "another file" 1 "model '$tmp/model.txt': not an oaax-vulkan bundle" -- \
  --model "$tmp/model.txt" --input "x=$tmp/x.npy"
expect_error "an OINF file that is not a bundle" 1 "an OINF file but not an oaax-vulkan bundle" -- \
  --model "$tmp/plain.oinf"
expect_error "missing model file" 1 "model '$tmp/missing.oinf'" -- --model "$tmp/missing.oinf"
expect_error "unknown input name" 1 "--input 'z': the model has no input of that name; its inputs are 'x'" -- \
  --model "$tmp/affine.oinf" --input "z=$tmp/x.npy"
expect_error "input dtype" 1 "input 'x': $tmp/x64.npy has dtype float64, the model expects float32" -- \
  --model "$tmp/affine.oinf" --input "x=$tmp/x64.npy"
expect_error "input shape" 1 "input 'x': $tmp/x12.npy has shape [1, 12], the model expects [1, 13]" -- \
  --model "$tmp/affine.oinf" --input "x=$tmp/x12.npy"
expect_error "malformed .npy" 1 "input 'x': $tmp/garbage.npy: not a .npy file" -- \
  --model "$tmp/affine.oinf" --input "x=$tmp/garbage.npy"
expect_error "missing .npy" 1 "input 'x': $tmp/none.npy: cannot open" -- \
  --model "$tmp/affine.oinf" --input "x=$tmp/none.npy"
expect_error "input given twice" 1 "--input 'x' is given twice" -- \
  --model "$tmp/affine.oinf" --input "x=$tmp/x.npy" --input "x=$tmp/x.npy"
expect_error "malformed --input" 1 "is not NAME=FILE.npy" -- --model "$tmp/affine.oinf" --input "x.npy"
expect_error "runtime argument rejected" 1 "runtime_initialization_with_args failed" -- \
  --model "$tmp/affine.oinf" --arg frames_in_flight=0
expect_error "malformed --arg" 2 "is not KEY=VALUE" -- --model "$tmp/affine.oinf" --arg novalue
expect_error "--input with --inputs" 2 "excludes" -- --model "$tmp/affine.oinf" --input "x=$tmp/x.npy" --inputs "$tmp/man_in"
expect_error "zero iterations" 2 "iterations" -- --model "$tmp/affine.oinf" --iterations 0
expect_error "--outputs count" 2 "1 --outputs for 2 --inputs" -- --model "$tmp/affine.oinf" --inputs "$tmp/man_in" \
  --inputs "$tmp/man_in2" --outputs "$tmp/o1"
expect_error "several sets with --iterations" 2 "apply to a single input set" -- --model "$tmp/affine.oinf" \
  --inputs "$tmp/man_in" --inputs "$tmp/man_in2" --iterations 5
expect_error "--shape outside the range" 1 "input 'x': --shape has dimension 1 (K) = 101, outside K's range [1, 100]" -- \
  --model "$tmp/dyn.oinf" --shape x=1,101
expect_error "--shape static dimension" 1 "input 'x': --shape has shape [2, 10], the model expects [1, K]" -- \
  --model "$tmp/dyn.oinf" --shape x=2,10
expect_error "--shape unknown input" 1 "--shape 'y': the model has no input of that name; its inputs are 'x'" -- \
  --model "$tmp/dyn.oinf" --shape y=1,10
expect_error "malformed --shape" 1 "--shape 'x=1,a' is not NAME=D0,D1,... (non-negative integers)" -- \
  --model "$tmp/dyn.oinf" --shape x=1,a
expect_error "--shape off multiple_of" 1 "input 'x': --shape has dimension 1 (L) = 30, not a multiple of 4 (L's range [4, 64] (multiple of 4))" -- \
  --model "$tmp/dynrows.oinf" --shape x=8,30
expect_error "--shape symbols disagree" 1 "input '画像': --shape has dimension 0 (N) = 8, but input 'input:0' (--shape) gives N = 7" -- \
  --model "$tmp/dyntwo.oinf" --shape "input:0=1,7" --shape "画像=8"
expect_error "--shape with --input" 1 "--shape 'x': the input is given with --input" -- \
  --model "$tmp/dyn.oinf" --input "x=$tmp/x37.npy" --shape x=1,10
expect_error ".npy outside the range" 1 "input 'x': $tmp/x101.npy has dimension 1 (K) = 101, outside K's range [1, 100]" -- \
  --model "$tmp/dyn.oinf" --input "x=$tmp/x101.npy"
expect_error "--shape for a non-bundle model" 1 "not an oaax-vulkan bundle" -- \
  --model "$tmp/model.txt" --input "x=$tmp/x.npy" --shape z=1

echo "oaax_run_cli: $failures failure(s)"
[ "$failures" = 0 ]
