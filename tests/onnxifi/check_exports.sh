#!/usr/bin/env bash
# libonnxifi-vulkan.so exports exactly the 15 core ONNXIFI functions of
# onnx/onnxifi.h (ONNX 1.12), nothing else (no C++ symbol of the toolchain,
# runtime, onnx or protobuf leaks out).
set -euo pipefail
lib=$1
want="onnxGetBackendCompatibility onnxGetBackendIDs onnxGetBackendInfo onnxGetEventState onnxInitBackend
onnxInitEvent onnxInitGraph onnxReleaseBackend onnxReleaseBackendID onnxReleaseEvent onnxReleaseGraph
onnxRunGraph onnxSetGraphIO onnxSignalEvent onnxWaitEvent"
want=$(echo $want | tr ' ' '\n' | sort)
got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbVvRr]$/ {print $3}' | grep -v '^_\(init\|fini\|edata\|end\|_bss_start\)$' | sort)
if [ "$got" != "$want" ]; then
  echo "FAIL: exported symbols differ from the 15 ONNXIFI functions:"
  diff <(echo "$want") <(echo "$got") || true
  exit 1
fi
# Every function the header declares is among them (the header is the reference).
hdr=$(grep -o 'onnx[A-Z][A-Za-z]*(' /usr/include/onnx/onnxifi.h | tr -d '(' | grep -v '^onnxStatus$' | sort -u)
missing=$(comm -23 <(echo "$hdr") <(echo "$got"))
if [ -n "$missing" ]; then echo "FAIL: declared in onnxifi.h but not exported: $missing"; exit 1; fi
echo "OK: exactly the 15 ONNXIFI functions are exported"
