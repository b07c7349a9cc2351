#!/usr/bin/env bash
# C++ and Python OINF implementations agree:
#  * both writers give the same bytes for the spec's minimal/simple examples;
#  * oinf-inspect and verify_oinf.py print the same text for files from either writer.
# usage: crosscheck.sh PYTHON REPO_ROOT OINF_INSPECT OINF_REWRITE
set -euo pipefail
py=$1 root=$2 inspect=$3 rewrite=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$py" "$root/tools/python/examples/minimal_oinf.py" "$tmp/py_minimal.oinf" >/dev/null
"$py" "$root/tools/python/examples/simple_oinf.py" "$tmp/py_simple.oinf" >/dev/null
"$rewrite" --sample "$tmp/cpp_sample.oinf"
for ex in minimal simple; do
  "$rewrite" "$tmp/py_$ex.oinf" "$tmp/cpp_$ex.oinf"
  if cmp -s "$tmp/py_$ex.oinf" "$tmp/cpp_$ex.oinf"; then
    echo "ok: $ex example: C++ writer bytes == Python writer bytes ($(stat -c %s "$tmp/py_$ex.oinf") bytes)"
  else
    echo "FAIL: $ex example: writers differ"; cmp "$tmp/py_$ex.oinf" "$tmp/cpp_$ex.oinf" || true; fail=1
  fi
done
for f in py_minimal py_simple cpp_minimal cpp_simple cpp_sample; do
  "$inspect" "$tmp/$f.oinf" > "$tmp/$f.cpp.txt"
  "$py" "$root/tools/python/verify_oinf.py" "$tmp/$f.oinf" > "$tmp/$f.py.txt"
  if cmp -s "$tmp/$f.cpp.txt" "$tmp/$f.py.txt"; then
    echo "ok: $f: oinf-inspect == verify_oinf.py ($(wc -l < "$tmp/$f.cpp.txt") lines)"
  else
    echo "FAIL: $f: outputs differ"; diff "$tmp/$f.cpp.txt" "$tmp/$f.py.txt" | head -20; fail=1
  fi
done
# A file whose metadata "format" says oaax-vulkan bundle: both print its
# rank-1 u8 text arrays (names) as quoted strings, other u8 arrays as numbers.
# oinf-inspect prints the bundle summary first (none here: the entries are
# missing, said on stderr), so the views are compared after it.
PYTHONPATH="$root/tools/python" "$py" - "$tmp/bundle_text.oinf" <<'PYEOF'
import sys
from dataclasses import dataclass
import numpy as np
from dataclass_to_oinf import NdArray, write_oinf

@dataclass
class BundleText:
    format: str
    name: NdArray
    quoted: NdArray
    flags: NdArray

write_oinf(BundleText(
    format="oaax-vulkan-bundle",
    name=NdArray(np.frombuffer("/conv/Conv_0 \u00e9\u6f22".encode(), dtype=np.uint8)),
    quoted=NdArray(np.frombuffer(b'a "b" \\ c\td\n', dtype=np.uint8)),
    flags=NdArray(np.array([0, 1, 1], dtype=np.uint8))), sys.argv[1])
PYEOF
"$inspect" "$tmp/bundle_text.oinf" 2>/dev/null | sed -n '/^flags: /,$p' > "$tmp/bundle_text.cpp.txt"
"$py" "$root/tools/python/verify_oinf.py" "$tmp/bundle_text.oinf" | sed -n '/^flags: /,$p' > "$tmp/bundle_text.py.txt"
if [ -s "$tmp/bundle_text.cpp.txt" ] && cmp -s "$tmp/bundle_text.cpp.txt" "$tmp/bundle_text.py.txt"; then
  echo "ok: bundle_text: oinf-inspect == verify_oinf.py ($(wc -l < "$tmp/bundle_text.cpp.txt") lines)"
else
  echo "FAIL: bundle_text: outputs differ"; diff "$tmp/bundle_text.cpp.txt" "$tmp/bundle_text.py.txt" | head -20; fail=1
fi
for line in 'flags: ndarray<u8>[3] = { 0, 1, 1 }' 'name: ndarray<u8>[18] = "/conv/Conv_0 é漢"' \
            'quoted: ndarray<u8>[12] = "a \"b\" \\ c\td\n"'; do
  grep -qxF -- "$line" "$tmp/bundle_text.py.txt" || { echo "FAIL: bundle_text lacks line: $line"; fail=1; }
done
# Spot checks of the spec's example output.
for line in 'B := 1024' 'D := 128' 'mode: str = "clamp_up"' 'x: f32 = 10.35' 'y: i16[] -- uninitialized' \
            'kernel: u8[128, 128] = {'; do
  grep -qxF -- "$line" "$tmp/py_simple.cpp.txt" || { echo "FAIL: simple example lacks line: $line"; fail=1; }
done
for prefix in 'a: f16[1024] = { ' 'W.0: f32[128] = { ' '- [nbytes: 16384, min: 0, max: 255, '; do
  grep -qF -- "$prefix" "$tmp/py_simple.cpp.txt" || { echo "FAIL: simple example lacks: $prefix"; fail=1; }
done
grep -q '^a: f32\[1024\] = { ' "$tmp/py_minimal.cpp.txt" || { echo "FAIL: minimal example lacks tensor a"; fail=1; }
exit $fail
