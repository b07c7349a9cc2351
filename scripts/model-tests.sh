#!/usr/bin/env bash
# The PP-OCR model tests (orientation classifier, PP-OCRv4 detection and
# recognition against ONNX Runtime, and the OCR pipeline on three real text
# images with dynamic and static bundles) on one Vulkan driver. CI runs them on lavapipe as part of scripts/test.sh; this
# command runs them by hand, e.g. on SwiftShader:
#
#   scripts/model-tests.sh --swiftshader     # needs a built build/ (scripts/test.sh or quickstart)
#   scripts/model-tests.sh                   # lavapipe (the default ICD)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
case "${1:-}" in
  --swiftshader) export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"; echo "driver: SwiftShader" ;;
  "") echo "driver: default ICD (lavapipe on machines without a GPU)" ;;
  *) echo "usage: scripts/model-tests.sh [--swiftshader]" >&2; exit 2 ;;
esac
bash scripts/fetch-reference.sh >/dev/null
ctest --test-dir build --output-on-failure -V -R 'e2e\.classifier|toolchain\.e2e_ppocrv4|ocr\.images_oaax' 2>&1 |
  grep -E 'max\|diff\||lines|match|passed|failed|Failed|SKIP|driver' || true
