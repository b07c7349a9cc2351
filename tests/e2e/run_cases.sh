# Sourced by the e2e scripts that run one-node models over many input sets
# (value_symbols.sh, value_ranges.sh, data_dependent.sh, dropout_training.sh,
# nms.sh, control_flow.sh).
#
# e2e_setup PYTHON [ROOT]
#   exits 77 (ctest SKIP) when PYTHON lacks numpy or onnx, or, with ROOT,
#   when ONNX Runtime for node (ROOT/third_party/cache/node/node_modules,
#   scripts/fetch-reference.sh) or node is missing; otherwise sets `tmp` to a
#   new directory removed when the script exits, and with ROOT
#   `node_modules` to that directory.
# e2e_use_driver DRIVER ROOT
#   lavapipe: the default ICD; swiftshader: VK_ICD_FILENAMES =
#   ROOT/third_party/swiftshader/vk_swiftshader_icd.json. Returns 1 (after a
#   note) when that file is missing.
# e2e_run_cases DRIVER TMP BUILD
#   runs the lines "MODEL DIR [EXPECTED-MESSAGE]" of TMP/cases.txt through
#   BUILD/oaax-run (validation layer on), one process per MODEL with every
#   one of its input sets in order (oaax-run --inputs repeated: one model
#   load, as a host serving many requests would), with the bundle
#   TMP/MODEL/bundle/model.oinf (a model without one is passed over), the
#   inputs TMP/MODEL/DIR and the outputs into TMP/MODEL/DRIVER-DIR. A line
#   without a message must run (its outputs written, no error for its set,
#   no validation-layer message in the process); one with a message must be
#   rejected with that text in oaax-run's error line for its set. Returns 1
#   when any line fails, naming it.
# e2e_convert PYTHON BUILD TMP [MESSAGE]
#   converts TMP/MODEL/model.onnx (with TMP/MODEL/config.json when there is
#   one) into TMP/MODEL/bundle for every MODEL of
#   TMP/models.txt (each must convert), and for every line "MODEL [TEXT]" of
#   TMP/refused.txt (TEXT defaults to MESSAGE) checks that the conversion
#   fails: exit status 1, no model.oinf, the last conversion-log.json entry
#   "Conversion Failed" containing TEXT. Returns 1 when any model fails that,
#   naming it.

e2e_setup() {
  if ! "$1" -c 'import numpy, onnx' 2>/dev/null; then
    echo "SKIP: $1 lacks numpy or onnx"; exit 77
  fi
  if [ $# -ge 2 ]; then
    node_modules="$2/third_party/cache/node/node_modules"
    if [ ! -d "$node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
      echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
    fi
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}

e2e_use_driver() {
  if [ "$1" = swiftshader ]; then
    local icd="$2/third_party/swiftshader/vk_swiftshader_icd.json"
    if [ ! -f "$icd" ]; then echo "note: $icd missing; SwiftShader not run"; return 1; fi
    export VK_ICD_FILENAMES="$icd"
  fi
}

e2e_run_cases() {
  local drv=$1 tmp=$2 build=$3 failed=0 m dir msg rc log set_line
  local -a models=()
  while read -r m dir msg; do
    [[ " ${models[*]} " == *" $m "* ]] || models+=("$m")
  done < "$tmp/cases.txt"
  for m in "${models[@]}"; do
    [ -f "$tmp/$m/bundle/model.oinf" ] || continue
    local -a sets=()
    while read -r mm dir msg; do
      [ "$mm" = "$m" ] || continue
      rm -rf "${tmp:?}/$m/$drv-$dir"
      sets+=(--inputs "$tmp/$m/$dir" --outputs "$tmp/$m/$drv-$dir")
    done < "$tmp/cases.txt"
    log="$tmp/$m/$drv.log" rc=0
    # LeakSanitizer: see classifier.sh (the loader dlcloses the drivers).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
    "$build/oaax-run" --model "$tmp/$m/bundle/model.oinf" "${sets[@]}" --arg validation=1 \
      < /dev/null > "$log" 2>&1 || rc=$?
    if [ $rc -gt 1 ]; then
      echo "FAIL $drv: $m: oaax-run exited $rc"; cat "$log"; failed=1; continue
    fi
    while read -r mm dir msg; do
      [ "$mm" = "$m" ] || continue
      set_line=$(grep -F "('$tmp/$m/$dir'): " "$log" | grep -v ' ms -> ' || true)
      if [ -z "$msg" ] && [ -n "$set_line" ]; then
        echo "FAIL $drv: $m $dir: $set_line"; failed=1
      elif [ -z "$msg" ] && [ ! -f "$tmp/$m/$drv-$dir/manifest.json" ]; then
        echo "FAIL $drv: $m $dir: no outputs written"; cat "$log"; failed=1
      elif [ -z "$msg" ] && grep -q "VUID-\|Validation Error" "$log"; then
        echo "FAIL $drv: $m $dir: validation layer message"; cat "$log"; failed=1
      elif [ -n "$msg" ] && [ -z "$set_line" ]; then
        echo "FAIL $drv: $m $dir: invalid values accepted"; failed=1
      elif [ -n "$msg" ] && ! grep -qF -- "$msg" <<< "$set_line"; then
        echo "FAIL $drv: $m $dir: no message \"$msg\" in: $set_line"; failed=1
      elif [ -n "$msg" ]; then
        echo "$drv: $m $dir rejected: $msg"
      fi
    done < "$tmp/cases.txt"
  done
  return $failed
}

# e2e_check_refused PYTHON BUNDLE_DIR LABEL RC NEED: a conversion that must be
# refused: exit status 1, the last conversion-log.json entry "Conversion
# Failed" containing NEED, and no model.oinf written. Prints the refusal.
e2e_check_refused() {
  "$1" - "$2" "$3" "$4" "$5" <<'PY'
import json, os, sys
d, m, rc, need = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    last = json.load(open(f"{d}/conversion-log.json"))[-1]
except Exception as e:
    print(f"FAIL: {m}: exit {rc}, no readable conversion-log.json ({e})"); sys.exit(1)
text = json.dumps(last)
problems = [p for p, bad in [(f"exit status {rc}, expected 1", rc != 1),
                             (f"last message {last.get('Message')!r}", last.get("Message") != "Conversion Failed"),
                             (f"the log entry lacks {need!r}", need not in text),
                             ("model.oinf written", os.path.exists(f"{d}/model.oinf"))] if bad]
if problems:
    print(f"FAIL: {m}: " + "; ".join(problems) + f"; last entry: {text}"); sys.exit(1)
print(f"{m} refused: {last.get('Data', {}).get('Technical Error', text)}")
PY
}

e2e_convert() {
  local py=$1 build=$2 tmp=$3 default=${4:-} failed=0 m msg rc config
  while read -r m; do
    config=()
    [ -f "$tmp/$m/config.json" ] && config=(--config "$tmp/$m/config.json")
    if ! "$build/oaax-vulkan-toolchain" "${config[@]}" "$tmp/$m/model.onnx" "$tmp/$m/bundle" > "$tmp/$m/toolchain.log" 2>&1; then
      echo "FAIL: $m: conversion failed"; cat "$tmp/$m/toolchain.log"
      tail -c 2000 "$tmp/$m/bundle/conversion-log.json" 2>/dev/null || true; echo; failed=1
    fi
  done < "$tmp/models.txt"
  [ -f "$tmp/refused.txt" ] || return $failed
  while read -r m msg; do
    rc=0
    "$build/oaax-vulkan-toolchain" "$tmp/$m/model.onnx" "$tmp/$m/bundle" > "$tmp/$m/toolchain.log" 2>&1 || rc=$?
    e2e_check_refused "$py" "$tmp/$m/bundle" "$m" "$rc" "${msg:-$default}" || failed=1
  done < "$tmp/refused.txt"
  return $failed
}

# e2e_check_against_ort PYTHON ROOT BUILD TMP NODE_MODULES
#   converts every model of TMP/models.txt (e2e_convert), runs every line
#   "MODEL DIR" of TMP/cases.txt through ONNX Runtime (one node process, a
#   session per model; TMP/MODEL/ort-DIR) and through the bundle on lavapipe
#   and SwiftShader (e2e_run_cases), and compares each output with ONNX
#   Runtime's: the same names, dtype, shape and byte size, floats within
#   rtol = atol = 1e-5, everything else exactly. Returns 1 when anything
#   fails, naming it. ORT_SESSION_OPTIONS (environment, JSON): ONNX
#   Runtime's session options (tools/reference/ort_run.js). E2E_DRIVERS
#   (environment): the drivers to run, in order (default "lavapipe
#   swiftshader"; lavapipe, if listed, first).
e2e_check_against_ort() {
  local py=$1 root=$2 build=$3 tmp=$4 node_modules=$5 fail m d drv
  fail=0
  # Conversion.
  e2e_convert "$py" "$build" "$tmp" || fail=1
  # ONNX Runtime: the reference. One node process for every case (a session
  # per model), writing what tools/reference/ort_run.js writes:
  # TMP/MODEL/ort-DIR/manifest.json and the raw outputs, or
  # TMP/MODEL/ort-DIR/error.txt.
  NODE_PATH="$node_modules" node "$root/tools/reference/ort_run.js" --cases "$tmp" || { echo "FAIL: the ONNX Runtime runs"; fail=1; }
  while read -r m d; do
    if [ -f "$tmp/$m/ort-$d/error.txt" ]; then
      echo "FAIL: ONNX Runtime failed on $m $d: $(cat "$tmp/$m/ort-$d/error.txt")"; fail=1
    fi
  done < "$tmp/cases.txt"
  for drv in ${E2E_DRIVERS:-lavapipe swiftshader}; do
    e2e_use_driver "$drv" "$root" || break
    e2e_run_cases "$drv" "$tmp" "$build" || fail=1
    "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv = sys.argv[1:3]
bad = 0
for line in open(f"{tmp}/cases.txt"):
    m, d = line.split()
    if not os.path.exists(f"{tmp}/{m}/bundle/model.oinf") or not os.path.exists(f"{tmp}/{m}/ort-{d}/manifest.json"):
        continue
    ref = json.load(open(f"{tmp}/{m}/ort-{d}/manifest.json"))
    od = f"{tmp}/{m}/{drv}-{d}"
    if not os.path.exists(f"{od}/manifest.json"):
        print(f"FAIL {drv}: {m} {d}: no output"); bad = 1; continue
    got = json.load(open(f"{od}/manifest.json"))
    if [e["name"] for e in got] != [e["name"] for e in ref]:
        print(f"FAIL {drv}: {m} {d}: outputs {[e['name'] for e in got]}, ONNX Runtime {[e['name'] for e in ref]}")
        bad = 1; continue
    report = []
    for g, r in zip(got, ref):
        want = np.fromfile(f"{tmp}/{m}/ort-{d}/{r['file']}", dtype=r["dtype"]).reshape(r["shape"])
        size = os.path.getsize(f"{od}/{g['file']}")
        if g["dtype"] != r["dtype"] or list(g["shape"]) != list(r["shape"]) or size != want.nbytes:
            print(f"FAIL {drv}: {m} {d}: {g['name']} {g['dtype']}{g['shape']} in {size} bytes, ONNX Runtime "
                  f"{r['dtype']}{r['shape']} in {want.nbytes}"); bad = 1; continue
        y = np.fromfile(f"{od}/{g['file']}", dtype=g["dtype"]).reshape(g["shape"])
        ok = np.allclose(y, want, rtol=1e-5, atol=1e-5) if want.dtype.kind == "f" else np.array_equal(y, want)
        if not ok:
            print(f"FAIL {drv}: {m} {d}: {g['name']} {g['dtype']}{list(y.shape)}: got {y.tolist()}, "
                  f"ONNX Runtime {want.tolist()}"); bad = 1; continue
        err = float(np.max(np.abs(y.astype(np.float64) - want))) if want.size else 0.0
        report.append(f"{g['name']} {g['dtype']}{list(y.shape)} (max |diff| {err:.2g})")
    if len(report) == len(ref):
        print(f"{drv}: {m} {d}: " + ", ".join(report) + " match ONNX Runtime")
sys.exit(bad)
PY
  done
  return $fail
}
