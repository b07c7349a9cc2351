#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz/README.md) for a bounded time each,
# after replaying the regression corpus (tests/fuzz/regressions/<target>/:
# every input a fuzzer ever found, which must stay fixed).
#
# Usage: scripts/fuzz.sh [--seconds N] [--runs N] [--build DIR] [TARGET...]
#   --seconds N   fuzzing time per target (default $OAAXVK_FUZZ_SECONDS or 30)
#   --runs N      stop each target after N inputs instead (e.g. 100000)
#   --build DIR   the clang build with -DOAAXVK_SANITIZE=ON -DOAAXVK_FUZZ=ON
#                 (default build/fuzz; configured when missing; only the
#                 fuzz targets are built)
#   TARGET        oinf_reader onnx_import config_archive bundle_loader (default: all)
# Seeds come from tests/data/malformed, tests/fuzz/make_seed_models.py and,
# for the bundle loader, bundles the main build's toolchain (build/) writes
# from those seed models. Working corpora and findings go to DIR/fuzz/.
# Exit status 0 when no target crashed, hung or leaked.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
seconds=${OAAXVK_FUZZ_SECONDS:-30}
runs=""
build=build/fuzz
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    oinf_reader|onnx_import|config_archive|bundle_loader) targets+=("$1"); shift ;;
    *) echo "usage: scripts/fuzz.sh [--seconds N] [--runs N] [--build DIR] [TARGET...]" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(oinf_reader onnx_import config_archive bundle_loader)
jobs=${OAAXVK_JOBS:-$(nproc)}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DOAAXVK_SANITIZE=ON -DOAAXVK_FUZZ=ON -DOAAXVK_BENCH=OFF -DOAAXVK_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "$jobs" --target fuzzers

work="$build/fuzz"
mkdir -p "$work"
seed() {  # target -> seed directory (filled once)
  local d="$work/seeds-$1"
  [ -d "$d" ] && { echo "$d"; return; }
  mkdir -p "$d.tmp"
  case "$1" in
    oinf_reader)
      cp tests/data/malformed/*.oinf "$d.tmp/"
      /usr/bin/python3 tools/python/examples/simple_oinf.py "$d.tmp/simple.oinf" >/dev/null ;;
    onnx_import)
      /usr/bin/python3 tests/fuzz/make_seed_models.py "$d.tmp" >/dev/null ;;
    config_archive)
      /usr/bin/python3 - "$d.tmp" <<'PY'
import io, json, os, sys, tarfile, zipfile
out = sys.argv[1]
configs = [
    {"input_shapes": {"x": [1, 3, 224, 224]}},
    {"input_shapes": {"x": ["N", 3, "H", "W"]},
     "dimensions": {"N": {"min": 1, "max": 8}, "H": {"min": 32, "max": 960, "multiple_of": 32},
                    "W": {"min": 32, "max": 960, "multiple_of": 32}}},
    {"input_values": {"k": [3]}, "fp16_weights": False},
    {"input_values": {"trip": ["M"]}, "dimensions": {"M": {"min": 1, "max": 4}}},
    {"input_shapes": {"seq": [[2, 3], [4, 3]], "opt": None}},
]
for i, c in enumerate(configs):
    open(os.path.join(out, f"config{i}.json"), "w").write(json.dumps(c))
model = b"\x08\x08\x3a\x02\x0a\x00"  # a tiny ModelProto: ir_version 8, an empty graph
for i, c in enumerate(configs[:2]):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("model.onnx", model)
        z.writestr("config.json", json.dumps(c))
    open(os.path.join(out, f"model{i}.zip"), "wb").write(buf.getvalue())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in (("model.onnx", model), ("config.json", json.dumps(c).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    open(os.path.join(out, f"model{i}.tar.gz"), "wb").write(buf.getvalue())
PY
      ;;
    bundle_loader)
      local models="$work/seeds-onnx-models"
      [ -d "$models" ] || /usr/bin/python3 tests/fuzz/make_seed_models.py "$models" >/dev/null
      if [ -x build/oaax-vulkan-toolchain ]; then
        for m in "$models"/*.onnx; do
          local n; n=$(basename "$m" .onnx)
          if build/oaax-vulkan-toolchain "$m" "$work/convert-$n" >/dev/null 2>&1; then
            cp "$work/convert-$n/model.oinf" "$d.tmp/$n.oinf"
          fi
          rm -rf "$work/convert-$n"
        done
      fi
      cp tests/data/malformed/*.oinf "$d.tmp/" ;;
  esac
  mv "$d.tmp" "$d"
  echo "$d"
}

status=0
for t in "${targets[@]}"; do
  bin="$build/${t}_fuzzer"
  reg="tests/fuzz/regressions/$t"
  corpus="$work/corpus-$t"
  artifacts="$work/artifacts-$t/"
  mkdir -p "$corpus" "$artifacts"
  seeds=$(seed "$t")
  log="$work/$t.log"
  # Regression corpus first: each input once.
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg" 2>/dev/null)" ]; then
    if ! "$bin" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 "$reg"/* > "$work/$t.regressions.log" 2>&1; then
      tail -30 "$work/$t.regressions.log"
      echo "fuzz $t: a regression input fails again (log: $work/$t.regressions.log)"
      status=1
      continue
    fi
  fi
  limit=(-max_total_time="$seconds")
  [ -n "$runs" ] && limit=(-runs="$runs")
  if ASAN_OPTIONS=detect_leaks=1 "$bin" "${limit[@]}" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
       -artifact_prefix="$artifacts" -print_final_stats=1 "$corpus" "$seeds" > "$log" 2>&1; then
    echo "fuzz $t: $(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}') inputs, no crash, hang or leak"
  else
    tail -40 "$log"
    echo "fuzz $t: FAILED (finding in $artifacts; add it to $reg once fixed)"
    status=1
  fi
done
exit $status
