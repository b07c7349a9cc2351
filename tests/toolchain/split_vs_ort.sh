#!/usr/bin/env bash
# Weights over the binding limit (make_split_models.py, max_binding_bytes =
# 32768 from its config.json) are split by the toolchain (Gemm with and
# without transB, MatMul, Conv with a fused residual) and the bundle, run by
# oaax-run on each DRIVER (lavapipe, swiftshader), matches ONNX Runtime:
# |diff| <= 1e-5 * (1 + |ref|) per element. The same model converted with a
# limit below one output column is refused, naming the weight and the limit,
# and one below an activation's size is refused naming the activation.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: split_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR DRIVER...
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$1" "$2" "$3"
shift 3
"$py" "$root/tests/toolchain/make_split_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" --config "$tmp/config.json" "$tmp/split_mix.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
log="$tmp/bundle/conversion-log.json"
grep -q "split Gemm 'gemm_tb_pre': weight 'w1' \[200, 96\] (76800 bytes) into 4 pieces of at most 64 columns" "$log"
grep -q "split Gemm 'gemm_nt': weight 'w2' \[96, 203\] (77952 bytes) into 4 pieces of at most 64 columns" "$log"
grep -q "split MatMul 'matmul': weight 'w3' \[96, 150\] (57600 bytes) into 3 pieces" "$log"
grep -q "split Conv 'conv_pre': weight 'wc' \[96, 16, 3, 3\] (55296 bytes) into 2 pieces of at most 48 channels" "$log"
grep -q "split Conv 'conv_res_pre': weight 'wr2' \[64, 16, 3, 3\] (36864 bytes) into 2 pieces of at most 32 channels" "$log"
if grep -q "weight 'wres' " "$log"; then echo "wres (4096 bytes) is under the limit but was split"; exit 1; fi
# One output column of w1 is 384 bytes: no split fits a 256-byte binding.
echo '{"limits": {"max_binding_bytes": 256}}' > "$tmp/tiny.json"
if "$build/oaax-vulkan-toolchain" --config "$tmp/tiny.json" "$tmp/split_mix.onnx" "$tmp/refused" > /dev/null 2>&1; then
  echo "a 256-byte binding limit was accepted"; exit 1
fi
grep -q "Gemm 'gemm_tb_pre': weight 'w1' \[200, 96\] is 76800 bytes, over the binding limit max_binding_bytes = 256, and one output column alone takes 384 bytes" "$tmp/refused/conversion-log.json"
# An activation over the limit (the 96 x 6 x 6 Conv output, 13824 bytes) has
# no split: the memory plan refuses it, naming the tensor and its node.
echo '{"limits": {"max_binding_bytes": 8192}}' > "$tmp/act.json"
if "$build/oaax-vulkan-toolchain" --config "$tmp/act.json" "$tmp/split_mix.onnx" "$tmp/refused_act" > /dev/null 2>&1; then
  echo "an 8192-byte binding limit was accepted"; exit 1
fi
grep -q "tensor 'conv' (bound by node 'conv_pre/concat' (Concat)) takes 13824 bytes, over the binding limit max_binding_bytes = 8192" "$tmp/refused_act/conversion-log.json"
vs_ort_reference "$tmp/split_mix.onnx" "$tmp/in" "$tmp/ort"
fail=0
for drv in "$@"; do
  vs_ort_use_driver "$drv" || continue
  vs_ort_run "$tmp/bundle" "$tmp/in" "$tmp/$drv" >/dev/null
  vs_ort_compare "$drv" "$tmp/ort" "$tmp/$drv" || fail=1
done
exit $fail
