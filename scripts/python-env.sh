#!/usr/bin/env bash
# Makes the project's Python environment: a virtual environment with the
# pinned ONNX release (scripts/onnx-version) and numpy, for the tests that
# build models with onnx.helper at opsets newer than Debian's python3-onnx
# (1.12, opset 17) knows, and check them with that release's checker.
# Debian's /usr/bin/python3 (torch, torchvision) stays the interpreter of the
# model-zoo exports and of every other test.
#
# The environment lands in the dependency cache OUTSIDE the clone, beside the
# ONNX C++ build (scripts/build-onnx.sh):
#   ${OAAXVK_DEPS_DIR:-$HOME/.cache/oaax-vulkan/deps}/python-onnx-<version>
# CMake finds it there (cmake/PinnedOnnx.cmake, OAAXVK_ONNX_PYTHON). A stamp
# file written last marks a complete environment; when it is present this
# script does nothing. Remove that directory to make it anew.
# Needs: a python3 (the first on PATH, else /usr/bin/python3) with the venv
# module and pip, and access to PyPI.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ver=$(tr -d ' \n' < "$here/scripts/onnx-version")
# numpy is pinned too, so that every environment computes test data alike;
# ml_dtypes (an onnx dependency) because e2e.oaax_run_types imports it.
numpy_ver=2.4.6
ml_dtypes_ver=0.6.0
deps=${OAAXVK_DEPS_DIR:-$HOME/.cache/oaax-vulkan/deps}
env_dir="$deps/python-onnx-$ver"
stamp="$env_dir/.oaaxvk-complete"

if [ -f "$stamp" ]; then exit 0; fi

py=""
for cand in python3 /usr/bin/python3; do
  if "$cand" -c 'import venv, ensurepip' >/dev/null 2>&1; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "python-env.sh: no python3 with the venv and ensurepip modules (apt-get install python3-venv)" >&2; exit 1; }

rm -rf "$env_dir"
mkdir -p "$deps"
echo "python-env.sh: making $env_dir (onnx $ver, numpy $numpy_ver) with $(command -v "$py")"
"$py" -m venv "$env_dir"
"$env_dir/bin/python" -m pip install -q --disable-pip-version-check "onnx==$ver" "numpy==$numpy_ver" \
  "ml_dtypes==$ml_dtypes_ver" \
  || { echo "python-env.sh: pip could not install onnx==$ver numpy==$numpy_ver ml_dtypes==$ml_dtypes_ver; check network access to PyPI" >&2; exit 1; }
"$env_dir/bin/python" -c "import onnx, numpy; assert onnx.__version__ == '$ver', onnx.__version__" \
  || { echo "python-env.sh: $env_dir does not import onnx $ver" >&2; exit 1; }
echo "$ver" > "$stamp"
