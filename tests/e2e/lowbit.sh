#!/usr/bin/env bash
# End to end, int4 weights with blocked quantization (docs/toolchain.md
# "Low-bit types"): the LLM weight form, a DequantizeLinear (block_size 32,
# int4 zero points) of a packed int4 initializer feeding a MatMul, compared
# with ONNX Runtime on lavapipe and SwiftShader (oaax-run, validation layer
# on). Models:
#   matmul_int4   x [4, 64] @ DequantizeLinear(W int4 [64, 48]) (opset 21);
#   block_int4    a tiny transformer block (opset 23): RMSNormalization,
#                 q / k / v / output projections with int4 weights,
#                 RotaryEmbedding on q and k, causal Attention, residual Add.
# ONNX Runtime runs with graph optimizations off: its optimizer fuses
# DequantizeLinear + MatMul into MatMulNBits, whose lower-precision
# arithmetic is not the model's float32 result. The bundles must keep the
# int4 weights packed: the `weights` tensor of matmul_int4 holds the packed
# weight (1536 bytes), not its float32 form (12288 bytes).
# Exit 77 (skip) without numpy / onnx >= 1.16 (INT4) or the reference tools
# (scripts/fetch-reference.sh).
# usage: lowbit.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
if ! "$py" -c 'import onnx; onnx.TensorProto.INT4' 2>/dev/null; then
  echo "SKIP: $py has no onnx with INT4 (onnx >= 1.16)"; exit 77
fi
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py" "$root"
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h
out = sys.argv[1]
rng = np.random.default_rng(7)
models = []

def save(name, nodes, ins, outs, inits, opset, ir, feeds):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(*i) for i in ins],
                     [h.make_tensor_value_info(*o) for o in outs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    onnx.checker.check_model(m, full_check=True)
    os.makedirs(f"{out}/{name}/in0")
    onnx.save(m, f"{out}/{name}/model.onnx")
    manifest = []
    for i, (n, a) in enumerate(feeds.items()):
        a.tofile(f"{out}/{name}/in0/{i}.bin")
        manifest.append({"name": n, "dtype": a.dtype.name, "shape": list(a.shape), "file": f"{i}.bin"})
    json.dump(manifest, open(f"{out}/{name}/in0/manifest.json", "w"))
    models.append(name)

# An int4 weight [K, N] quantized in blocks of 32 along K, with int4 zero
# points: the initializers and the DequantizeLinear node writing `name`.
def int4_weight(name, K, N, inits, nodes, scale=0.05):
    w = rng.integers(-8, 8, (K, N))
    zp = rng.integers(-2, 3, (K // 32, N))
    s = (rng.random((K // 32, N)) * scale + scale / 5).astype(np.float32)
    inits += [h.make_tensor(name + "_q", T.INT4, [K, N], w.ravel().tolist()),
              h.make_tensor(name + "_zp", T.INT4, [K // 32, N], zp.ravel().tolist()),
              h.make_tensor(name + "_scale", T.FLOAT, [K // 32, N], s.ravel().tolist())]
    nodes.append(h.make_node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"], [name], axis=0,
                             block_size=32))

inits, nodes = [], []
int4_weight("w", 64, 48, inits, nodes)
nodes.append(h.make_node("MatMul", ["x", "w"], ["y"]))
save("matmul_int4", nodes, [("x", T.FLOAT, [4, 64])], [("y", T.FLOAT, [4, 48])], inits, 21, 10,
     {"x": rng.standard_normal((4, 64)).astype(np.float32)})

S, D, H = 8, 64, 4
hd = D // H
inits, nodes = [], []
inits.append(h.make_tensor("gamma", T.FLOAT, [D], (1 + 0.1 * rng.standard_normal(D)).astype(np.float32).tolist()))
nodes.append(h.make_node("RMSNormalization", ["x", "gamma"], ["hn"], axis=-1, epsilon=1e-5))
for w in ("wq", "wk", "wv", "wo"):
    int4_weight(w, D, D, inits, nodes, scale=0.02)
nodes += [h.make_node("MatMul", ["hn", w], [w[1]]) for w in ("wq", "wk", "wv")]
angle = np.arange(S)[:, None] / (10000.0 ** (np.arange(0, hd, 2) / hd))[None]
inits += [h.make_tensor("cos", T.FLOAT, [1, S, hd // 2], np.cos(angle).astype(np.float32).ravel().tolist()),
          h.make_tensor("sin", T.FLOAT, [1, S, hd // 2], np.sin(angle).astype(np.float32).ravel().tolist())]
nodes += [h.make_node("RotaryEmbedding", ["q", "cos", "sin"], ["qr"], num_heads=H),
          h.make_node("RotaryEmbedding", ["k", "cos", "sin"], ["kr"], num_heads=H),
          h.make_node("Attention", ["qr", "kr", "v"], ["att"], q_num_heads=H, kv_num_heads=H, is_causal=1),
          h.make_node("MatMul", ["att", "wo"], ["o"]),
          h.make_node("Add", ["x", "o"], ["y"])]
save("block_int4", nodes, [("x", T.FLOAT, [1, S, D])], [("y", T.FLOAT, [1, S, D])], inits, 23, 11,
     {"x": rng.standard_normal((1, S, D)).astype(np.float32)})

open(f"{out}/cases.txt", "w").write("".join(f"{m} in0\n" for m in models))
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")
PY
fail=0
ORT_SESSION_OPTIONS='{"graphOptimizationLevel":"disabled"}' \
  e2e_check_against_ort "$py" "$root" "$build" "$tmp" "$node_modules" || fail=1
# The int4 weight and its blocked scales stay as they are in the bundle
# (1536 + 48 + 384 bytes, each padded): far below the float32 weight (12288).
"$py" - "$tmp/matmul_int4/bundle/conversion-log.json" <<'PY' || fail=1
import json, sys
log = json.load(open(sys.argv[1]))
kernels = [k["Kernel"] for e in log if e["Message"] == "Kernels selected" for k in e["Data"]["Nodes"]]
weights = [e["Data"]["Weights bytes"] for e in log if e["Message"] == "Memory plan"][0]
if "convert (INT4 -> float32)" not in kernels:
    print(f"FAIL: matmul_int4: no on-device int4 conversion among the kernels {kernels}"); sys.exit(1)
if weights >= 12288:
    print(f"FAIL: matmul_int4: {weights} weight bytes, as many as the float32 weight (12288)"); sys.exit(1)
print(f"matmul_int4: the int4 weight is converted on the device; {weights} weight bytes (float32: 12288)")
PY
exit $fail
