#!/usr/bin/env bash
# README quick start #1: installs dependencies, builds in build/, and runs the
# main job. Until the OCR main job lands (issue 6), the main job is the OINF
# round trip: the Python writer produces the spec's simple_model.oinf and
# oinf-inspect validates and prints it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target oinf-inspect
/usr/bin/python3 tools/python/examples/simple_oinf.py build/simple_model.oinf
build/oinf-inspect build/simple_model.oinf
