#!/usr/bin/env bash
# Device operators in their less common modes (make_op_models.py: Resize
# modes, ConvTranspose with groups/pads/dilations/output_padding, Pow, Max,
# Min, Slice with negative steps, ReduceMean, unary functions, fused Swish /
# HardSwish chains, residual Add fused into a Conv, Softmax on a middle axis,
# TfIdfVectorizer in TF, IDF and TFIDF modes on int64 and int32 ids)
# compiled by oaax-vulkan-toolchain and run by oaax-run on lavapipe and
# SwiftShader match ONNX Runtime: |diff| <= 1e-5 * (1 + |ref|) per element.
# Exit 77 (skip) without ONNX Runtime (scripts/fetch-reference.sh).
# usage: ops_vs_ort.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
. "$2/tests/reference/vs_ort.sh"
vs_ort_setup "$@"
"$py" "$root/tests/toolchain/make_op_models.py" "$tmp"
"$build/oaax-vulkan-toolchain" "$tmp/ops_mix.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
log="$tmp/bundle/conversion-log.json"
grep -q "fused residual Add 'resadd' into Conv 'conv'" "$log"
grep -q "into one Swish" "$log"
grep -q "into one HardSwish" "$log"
grep -q "folded Mul 'conv_aff_mul' by a constant into Conv 'conv_aff'" "$log"
grep -q "folded Add 'conv_aff_add' by a constant into Conv 'conv_aff'" "$log"
grep -q "folded Mul 'convT_tap4_mul' by a constant into ConvTranspose 'convT_tap4'" "$log"
grep -q "ending at Add 'affine' into one Affine" "$log"
grep -q "conv_transpose2d_tap4_cpu" "$log"
vs_ort_reference "$tmp/ops_mix.onnx" "$tmp/in" "$tmp/ort"
fail=0
for drv in lavapipe swiftshader; do
  vs_ort_use_driver "$drv" || continue
  vs_ort_run "$tmp/bundle" "$tmp/in" "$tmp/$drv" >/dev/null
  vs_ort_compare "$drv" "$tmp/ort" "$tmp/$drv" || fail=1
done
exit $fail
