#!/usr/bin/env bash
# Installs every Debian package oaax-vulkan needs to build, test and run.
# Idempotent: prints nothing and installs nothing when everything is present.
# Then builds the pinned ONNX C++ libraries once (scripts/build-onnx.sh) and
# makes the Python environment with the same ONNX release (scripts/python-env.sh).
# Usable as root or through sudo. Also fetches the SwiftShader ICD (from
# Debian's chromium-common) into third_party/swiftshader/ when missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-tools vulkan-validationlayers
  glslang-tools spirv-tools
  libonnx-dev libonnxifi libonnx-testdata libprotobuf-dev protobuf-compiler
  python3-onnx python3-numpy python3-pil python3-pip
  nlohmann-json3-dev libcli11-dev libarchive-dev libspng-dev libjpeg62-turbo-dev
  python3-torch python3-torchvision gnuplot-nox
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup.sh: not root and sudo is missing; run as root" >&2; exit 1; fi
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# SwiftShader: second software Vulkan driver, shipped inside chromium-common.
ss_dir="$here/third_party/swiftshader"
if [ ! -f "$ss_dir/vk_swiftshader_icd.json" ] || [ ! -f "$ss_dir/libvk_swiftshader.so" ]; then
  echo "setup.sh: extracting SwiftShader from chromium-common into $ss_dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -qq chromium-common >/dev/null 2>&1)
  deb=$(ls "$tmp"/chromium-common_*.deb)
  mkdir -p "$tmp/x" "$ss_dir"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" \
    ./usr/lib/chromium/libvk_swiftshader.so ./usr/lib/chromium/vk_swiftshader_icd.json
  cp "$tmp/x/usr/lib/chromium/libvk_swiftshader.so" "$ss_dir/"
  # Point the manifest at the library beside it (absolute path: the loader
  # resolves relative paths against the manifest directory only for some versions).
  sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$ss_dir/libvk_swiftshader.so\"#" \
    "$tmp/x/usr/lib/chromium/vk_swiftshader_icd.json" > "$ss_dir/vk_swiftshader_icd.json"
fi

# The pinned upstream ONNX C++ libraries (scripts/onnx-version), built once
# into a cache outside the clone (see scripts/build-onnx.sh). Under sudo the
# cache belongs to the invoking user, who configures and builds the project.
# Then the Python environment with the same ONNX release (scripts/python-env.sh).
for step in build-onnx.sh python-env.sh; do
  if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
    sudo -u "$SUDO_USER" -H ${OAAXVK_DEPS_DIR:+OAAXVK_DEPS_DIR="$OAAXVK_DEPS_DIR"} bash "$here/scripts/$step"
  else
    bash "$here/scripts/$step"
  fi
done
