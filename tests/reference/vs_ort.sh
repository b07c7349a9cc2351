# Sourced by the tests that convert models, run them with oaax-run and compare
# the outputs with ONNX Runtime's (tests/toolchain/*_vs_ort.sh).
#
# vs_ort_setup PYTHON ROOT BUILD
#   sets py, root, build, nm (ONNX Runtime's node_modules) and tmp (a new
#   directory removed when the script exits); exits 77 (ctest SKIP) when
#   ONNX Runtime is missing (scripts/fetch-reference.sh) or PYTHON is not an
#   executable.
# vs_ort_reference MODEL INPUT_DIR OUTPUT_DIR
#   runs MODEL on the inputs of INPUT_DIR with ONNX Runtime
#   (tools/reference/ort_run.js), writing OUTPUT_DIR/manifest.json and the
#   raw outputs.
# vs_ort_use_driver DRIVER
#   lavapipe: the ICD the environment gives (the default); swiftshader:
#   VK_ICD_FILENAMES = ROOT/third_party/swiftshader/vk_swiftshader_icd.json,
#   so lavapipe must come first in a list of drivers. Returns 1 (after a
#   note) when that file is missing.
# vs_ort_run BUNDLE_DIR INPUT_DIR OUTPUT_DIR [INPUT_DIR OUTPUT_DIR ...]
#   runs BUNDLE_DIR/model.oinf with oaax-run (validation layer on) on every
#   input set in order, on one loaded bundle, writing each OUTPUT_DIR.
# vs_ort_compare LABEL REF_DIR GOT_DIR [REF_DIR GOT_DIR ...] [OPTIONS]
#   tests/reference/compare_outputs.py: the same names, dtypes and shapes,
#   integers exactly, floats to --tol (default 1e-5) relative to 1 + |ref|.
# vs_ort_model_sets DRIVERS [COMPARE OPTIONS]
#   for every line "MODEL SET..." of tmp/models.txt: converts
#   tmp/MODEL/model.onnx (with tmp/MODEL/config.json when there is one) into
#   tmp/MODEL/bundle, runs every SET (an input directory tmp/MODEL/SET)
#   through ONNX Runtime (on tmp/MODEL/reference.onnx when there is one: a
#   form of the model ONNX Runtime can run) and through the bundle on each of
#   DRIVERS (a space-separated list), and compares each. Returns 1 when
#   anything fails, naming it, and 77 when no driver of DRIVERS is installed.

vs_ort_setup() {
  py=$1 root=$2 build=$3
  nm="$root/third_party/cache/node/node_modules"
  if [ ! -x "$(command -v "$py")" ]; then
    echo "SKIP: $py missing; run scripts/python-env.sh (or scripts/setup.sh)"; exit 77
  fi
  if [ ! -d "$nm/onnxruntime-node" ]; then
    echo "SKIP: ONNX Runtime missing; run scripts/fetch-reference.sh"; exit 77
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}

vs_ort_reference() {
  NODE_PATH="$nm" node "$root/tools/reference/ort_run.js" "$1" "$2" "$3" >/dev/null
}

vs_ort_use_driver() {
  if [ "$1" = swiftshader ]; then
    local icd="$root/third_party/swiftshader/vk_swiftshader_icd.json"
    if [ ! -f "$icd" ]; then echo "swiftshader: $icd missing, skipped"; return 1; fi
    export VK_ICD_FILENAMES="$icd"
  fi
}

vs_ort_run() {
  local bundle=$1 args=()
  shift
  while [ $# -ge 2 ]; do args+=(--inputs "$1" --outputs "$2"); shift 2; done
  # LeakSanitizer: see tests/e2e/classifier.sh (the loader dlcloses the
  # drivers).
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$bundle/model.oinf" "${args[@]}" --arg validation=1
}

vs_ort_compare() {
  "$py" "$root/tests/reference/compare_outputs.py" "$@"
}

vs_ort_model_sets() {
  local drivers=$1 fail=0 ran=0 m sets s d ref drv
  shift
  local -a cfg run
  while read -r m sets; do
    d="$tmp/$m"
    cfg=()
    [ -f "$d/config.json" ] && cfg=(--config "$d/config.json")
    if ! "$build/oaax-vulkan-toolchain" "${cfg[@]}" "$d/model.onnx" "$d/bundle" > "$d/toolchain.log" 2>&1; then
      echo "$m: conversion failed:"; tail -5 "$d/toolchain.log"; fail=1; continue
    fi
    ref="$d/model.onnx"
    [ -f "$d/reference.onnx" ] && ref="$d/reference.onnx"
    for s in $sets; do vs_ort_reference "$ref" "$d/$s" "$d/$s.ort"; done
  done < "$tmp/models.txt"
  for drv in $drivers; do
    vs_ort_use_driver "$drv" || continue
    ran=$((ran + 1))
    while read -r m sets; do
      d="$tmp/$m"
      [ -f "$d/bundle/model.oinf" ] || continue
      run=()
      for s in $sets; do run+=("$d/$s" "$d/$s.$drv"); done
      if ! vs_ort_run "$d/bundle" "${run[@]}" > "$d/$drv.log" 2>&1; then
        echo "$drv: $m: oaax-run failed:"; tail -5 "$d/$drv.log"; fail=1; continue
      fi
      for s in $sets; do
        vs_ort_compare "$drv: $m $s" "$d/$s.ort" "$d/$s.$drv" "$@" || fail=1
      done
    done < "$tmp/models.txt"
  done
  [ "$ran" -gt 0 ] || return 77  # no requested driver installed: ctest's SKIP
  return $fail
}
