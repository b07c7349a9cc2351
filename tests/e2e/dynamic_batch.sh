#!/usr/bin/env bash
# End to end, dynamic shapes: one classifier bundle converted with a batch
# range (config.json "dimensions": N in 1..8) serves N = 1, 3 and 8 through
# libRuntimeLibrary.so (oaax-run, every batch size on one loaded bundle) on
# lavapipe and SwiftShader with the validation layer on; each output matches ONNX Runtime to 1e-4, and the rows
# of the N = 3 batch equal three batch-1 runs of the same images. Exit 77
# (skip) without the reference tools (scripts/fetch-reference.sh).
# usage: dynamic_batch.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
cache="$root/third_party/cache"
if [ ! -d "$cache/node/node_modules/onnxruntime-node" ]; then
  echo "SKIP: reference tools missing; run scripts/fetch-reference.sh"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
rng = np.random.default_rng(7)
f = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
inits = [numpy_helper.from_array(f(8, 3, 3, 3), "w1"), numpy_helper.from_array(f(8), "b1"),
         numpy_helper.from_array(f(16, 8, 3, 3), "w2"), numpy_helper.from_array(f(16), "b2"),
         numpy_helper.from_array(f(8, 16, 1, 1), "w3"),
         numpy_helper.from_array(f(8, 10), "fc"), numpy_helper.from_array(f(10), "fcb")]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Sigmoid", ["c2"], ["s2"]),
    helper.make_node("Mul", ["c2", "s2"], ["a2"]),
    helper.make_node("GlobalAveragePool", ["a2"], ["g"]),
    helper.make_node("Conv", ["g", "w3"], ["c3"]),
    helper.make_node("Flatten", ["c3"], ["fl"]),
    helper.make_node("Gemm", ["fl", "fc", "fcb"], ["logits"]),
    helper.make_node("Softmax", ["logits"], ["y"], axis=1),
]
g = helper.make_graph(nodes, "dyn_cls", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 20, 20])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "model.onnx"))
imgs = rng.standard_normal((8, 3, 20, 20)).astype(np.float32)
def write(name, x):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    x.tofile(os.path.join(d, "0.bin"))
    json.dump([{"name": "x", "dtype": "float32", "shape": list(x.shape), "file": "0.bin"}],
              open(os.path.join(d, "manifest.json"), "w"))
for n in (1, 3, 8):
    write(f"in{n}", imgs[:n])
for i in range(3):
    write(f"one{i}", imgs[i:i + 1])
PY
echo '{"dimensions": {"N": {"min": 1, "max": 8}}}' > "$tmp/config.json"
"$build/oaax-vulkan-toolchain" --config "$tmp/config.json" "$tmp/model.onnx" "$tmp/bundle" > "$tmp/toolchain.log"
for n in 1 3 8; do
  NODE_PATH="$cache/node/node_modules" node "$root/tools/reference/ort_run.js" "$tmp/model.onnx" "$tmp/in$n" "$tmp/ort$n" >/dev/null
done
fail=0
for drv in lavapipe swiftshader; do
  if [ "$drv" = swiftshader ]; then
    export VK_ICD_FILENAMES="$root/third_party/swiftshader/vk_swiftshader_icd.json"
  fi
  # Every run on one loaded bundle (oaax-run with several input sets).
  sets=()
  for run in in1 in3 in8 one0 one1 one2; do sets+=(--inputs "$tmp/$run" --outputs "$tmp/$drv-$run"); done
  # LeakSanitizer: see classifier.sh (the loader dlcloses the drivers).
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
  "$build/oaax-run" --model "$tmp/bundle/model.oinf" "${sets[@]}" --arg validation=1 >/dev/null
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, sys
import numpy as np
tmp, drv = sys.argv[1:3]
def load(d):
    m = json.load(open(f"{tmp}/{d}/manifest.json"))[0]
    return m["shape"], np.fromfile(f"{tmp}/{d}/{m['file']}", dtype=np.float32).reshape(m["shape"])
for n in (1, 3, 8):
    rs, ref = load(f"ort{n}")
    gs, got = load(f"{drv}-in{n}")
    assert gs == [n, 10] == rs, (gs, rs)
    err = float(np.abs(ref - got).max())
    print(f"{drv}: N={n} output {gs} max|diff| vs ONNX Runtime = {err:.3g}")
    if not err <= 1e-4:
        sys.exit(f"{drv}: N={n} differs from ONNX Runtime by {err}")
_, batch = load(f"{drv}-in3")
for i in range(3):
    _, one = load(f"{drv}-one{i}")
    err = float(np.abs(batch[i] - one[0]).max())
    if not err <= 1e-5:
        sys.exit(f"{drv}: row {i} of the N=3 batch differs from its batch-1 run by {err}")
print(f"{drv}: the N=3 batch equals three batch-1 runs")
PY
done
exit $fail
