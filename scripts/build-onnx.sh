#!/usr/bin/env bash
# Builds the pinned upstream ONNX C++ libraries (onnx, onnx_proto) that the
# toolchain, the ONNXIFI backend and the ONNX-import fuzzer link.
#
# Debian's libonnx-dev is too old to check models written by current
# exporters, so the release named in scripts/onnx-version is built from its
# PyPI source distribution against the system protobuf (libprotobuf-dev,
# protoc) - upstream's CMake would otherwise download its own protobuf.
# Only the two static libraries (-fPIC, so they can go into shared objects)
# are built: no tests, no Python module.
#
# The install lands in a cache OUTSIDE the clone so that later runs and fresh
# clones reuse it:
#   ${OAAXVK_DEPS_DIR:-$HOME/.cache/oaax-vulkan/deps}/onnx-<version>
# A stamp file written last marks a complete install; when it is present this
# script only makes sure the source distribution is cached (the conformance
# suite reads its node tests). Remove that directory to force a rebuild.
# Needs: cmake, ninja, a C++17 compiler, protoc + libprotobuf-dev, python3
# with pip (to fetch the sdist; ONNX's build also runs python3 to generate
# its .proto files). Prints the build time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ver=$(tr -d ' \n' < "$here/scripts/onnx-version")
deps=${OAAXVK_DEPS_DIR:-$HOME/.cache/oaax-vulkan/deps}
prefix="$deps/onnx-$ver"
stamp="$prefix/.oaaxvk-complete"

# The sdist stays in the cache also after a build: the conformance suite
# (tests/conformance/extract_node_tests.py) takes the node tests from it.
py=""
for cand in python3 /usr/bin/python3; do
  if "$cand" -m pip --version >/dev/null 2>&1; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "build-onnx.sh: no python3 with pip to download the onnx $ver source (pip install or apt-get install python3-pip)" >&2; exit 1; }

src_dir="$deps/src"
mkdir -p "$src_dir"
sdist="$src_dir/onnx-$ver.tar.gz"
if [ ! -f "$sdist" ]; then
  echo "build-onnx.sh: downloading the onnx $ver source distribution from PyPI"
  "$py" -m pip download -q --no-binary :all: --no-deps "onnx==$ver" -d "$src_dir" >/dev/null
  [ -f "$sdist" ] || { echo "build-onnx.sh: pip did not leave $sdist; check network access to PyPI" >&2; exit 1; }
fi

if [ -f "$stamp" ]; then exit 0; fi

for tool in cmake ninja protoc; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "build-onnx.sh: $tool is missing; run scripts/setup.sh (it installs the Debian packages first)" >&2; exit 1; }
done
work=$(mktemp -d "$deps/onnx-$ver-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$sdist" -C "$work"
rm -rf "$prefix"

echo "build-onnx.sh: building onnx $ver (onnx, onnx_proto) into $prefix"
start=$(date +%s)
# ONNX_ML and the onnx namespace match Debian's libonnx build, so the proto
# types are the ones Debian's python3-onnx writes and the code reads.
cmake -S "$work/onnx-$ver" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DBUILD_SHARED_LIBS=OFF \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON \
  -DONNX_BUILD_TESTS=OFF -DONNX_BUILD_PYTHON=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_ML=ON -DONNX_NAMESPACE=onnx \
  -DPython3_EXECUTABLE="$(command -v "$py")" >"$work/configure.log" 2>&1 \
  || { tail -30 "$work/configure.log" >&2; echo "build-onnx.sh: configuring onnx $ver failed (log above)" >&2; exit 1; }
cmake --build "$work/build" -j "$(nproc)" --target onnx onnx_proto >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log" >&2; echo "build-onnx.sh: building onnx $ver failed (log above)" >&2; exit 1; }
cmake --install "$work/build" >"$work/install.log" 2>&1 \
  || { tail -20 "$work/install.log" >&2; echo "build-onnx.sh: installing onnx $ver into $prefix failed" >&2; exit 1; }
echo "$ver" > "$stamp"
echo "build-onnx.sh: onnx $ver built and installed in $(( $(date +%s) - start )) s"
