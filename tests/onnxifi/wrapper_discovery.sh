#!/usr/bin/env bash
# Discovery through Debian's ONNXIFI wrapper (package libonnxifi):
# /usr/lib/libonnxifi.so scans the fixed directory /usr/lib/ for
# libonnxifi-*.so and multiplexes their backends. This test installs
# libonnxifi-vulkan.so there without touching the real /usr/lib: inside a
# private mount namespace (`unshare -rm`; unprivileged where user namespaces
# are enabled) it bind-mounts a directory over /usr/lib that holds a link to
# every entry of the real /usr/lib (itself bind-mounted elsewhere) plus a copy
# of our library, then runs a C client (discover.c) that dlopens the wrapper,
# finds the backend named "oaax-vulkan" and runs a model through it.
#
# usage: wrapper_discovery.sh LIBONNXIFI_VULKAN_SO DISCOVER_BIN [PYTHON]
# Exit 0 pass, 1 fail, 77 skip (no wrapper, no mount namespaces, no device).
set -uo pipefail
lib=$(readlink -f "$1") discover=$(readlink -f "$2") python=${3:-/usr/bin/python3}
wrapper=/usr/lib/libonnxifi.so
if [ ! -e "$wrapper" ]; then echo "SKIP: $wrapper missing (Debian package libonnxifi)"; exit 77; fi
if ! unshare -rm true 2>/dev/null; then
  echo "SKIP: cannot create a mount namespace here (unshare -rm); install by hand instead:"
  echo "  sudo install -m 644 build/libonnxifi-vulkan.so /usr/lib/libonnxifi-vulkan.so"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# y = Relu(x) * 2, x and y float[6]
"$python" - "$tmp/model.onnx" <<'PY' || exit 1
import sys
from onnx import helper, TensorProto, save
g = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "r"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY

cat > "$tmp/inside.sh" <<'INSIDE'
set -euo pipefail
tmp=$1 lib=$2 discover=$3
mkdir -p "$tmp/real" "$tmp/view"
mount --bind /usr/lib "$tmp/real"
for e in "$tmp"/real/* "$tmp"/real/.[!.]*; do
  [ -e "$e" ] || [ -L "$e" ] || continue
  ln -s "$e" "$tmp/view/$(basename "$e")"
done
cp "$lib" "$tmp/view/libonnxifi-vulkan.so"
mount --bind "$tmp/view" /usr/lib
ls /usr/lib/libonnxifi-*.so
"$discover" "$tmp/model.onnx" 6 6
INSIDE
out=$(unshare -rm bash "$tmp/inside.sh" "$tmp" "$lib" "$discover" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
  if echo "$out" | grep -q "no oaax-vulkan backend among the 0 backend"; then echo "SKIP: no Vulkan device"; exit 77; fi
  echo "FAIL: the client could not discover and run the backend through $wrapper (exit $rc)"; exit 1
fi
# x = -3 -2 -1 0 1 2  ->  y = 2 * relu(x)
if ! echo "$out" | grep -qx "y = 0 0 0 0 2 4"; then echo "FAIL: wrong outputs"; exit 1; fi
echo "$out" | grep -q "^backend [0-9]*: oaax-vulkan on " || { echo "FAIL: backend not listed"; exit 1; }
echo "OK: discovered through $wrapper and ran"
