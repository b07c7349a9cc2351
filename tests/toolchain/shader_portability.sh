#!/usr/bin/env bash
# Portability lint over every compiled kernel (build/src/toolchain/shaders):
# constructs whose result GLSL leaves undefined, which a CPU driver computes
# "as expected" while a GPU driver may not. Each rule names the instruction,
# why it is banned, and what to write instead.
#   OpSRem / OpSMod: the GLSL `%` on signed integers. GLSL leaves the
#   remainder of a negative operand undefined; one NVIDIA driver computes it
#   as if the operand were unsigned (Pad's reflect mode read the wrong
#   element). Write the remainder on uint values (fold the sign first), or
#   `x - y * (x / y)` where a signed result is wanted.
# Usage: shader_portability.sh <build-dir>
set -euo pipefail
dir="$1/src/toolchain/shaders"
command -v spirv-dis >/dev/null || { echo "shader_portability: spirv-dis not found (scripts/setup.sh installs spirv-tools)" >&2; exit 2; }
shopt -s nullglob
spvs=("$dir"/*.spv)
[ ${#spvs[@]} -gt 0 ] || { echo "shader_portability: no compiled shaders under $dir (build the project first)" >&2; exit 2; }
bad=0
for f in "${spvs[@]}"; do
  hits=$(spirv-dis --no-color "$f" | grep -E '= Op(SRem|SMod) ' || true)
  if [ -n "$hits" ]; then
    echo "$(basename "$f" .spv): signed remainder (GLSL '%' on int operands), undefined for negative operands on GPUs:" >&2
    echo "$hits" | sed 's/^/    /' >&2
    bad=1
  fi
done
[ $bad = 0 ] && echo "shader_portability: ${#spvs[@]} kernels, no signed remainder"
exit $bad
