#!/usr/bin/env bash
# End to end, training-mode Dropout with training_mode and ratio sent at run
# time (opset 13, X float [100, 1000], outputs Y and mask): one bundle,
# converted with no config, run through libRuntimeLibrary.so (oaax-run,
# validation layer on) on lavapipe and SwiftShader with
#   (ratio, training_mode) = (0.75, true), (0.5, true), (0.1, true),
#   (0, true), (0.6, false).
# In training mode with ratio r > 0, the fraction of dropped elements must be
# r within 0.01 (100,000 draws: about 7 standard deviations), every kept
# element must be X / (1 - r) (rtol 1e-6), every dropped one 0, and the mask
# true exactly where the element was kept; the same inputs must give the same
# draw again. With ratio 0 or training_mode false, Y = X exactly and the mask
# is all true. (The draw itself cannot equal numpy's, so the ONNX node tests
# with a nonzero ratio are skipped in the conformance run.) Needs numpy and
# onnx in PYTHON.
# usage: dropout_training.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py"
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h
out = sys.argv[1] + "/dropout"
os.makedirs(out)
g = h.make_graph([h.make_node("Dropout", ["x", "ratio", "training_mode"], ["y", "mask"], name="dropout")], "dropout",
                 [h.make_tensor_value_info("x", T.FLOAT, [100, 1000]), h.make_tensor_value_info("ratio", T.FLOAT, []),
                  h.make_tensor_value_info("training_mode", T.BOOL, [])],
                 [h.make_tensor_value_info("y", T.FLOAT, [100, 1000]), h.make_tensor_value_info("mask", T.BOOL, [100, 1000])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, f"{out}/model.onnx")
x = np.random.default_rng(5).standard_normal((100, 1000)).astype(np.float32)
sets = [(0.75, True), (0.5, True), (0.1, True), (0.0, True), (0.6, False), (0.75, True)]
for i, (r, t) in enumerate(sets):
    d = f"{out}/in{i}"
    os.makedirs(d)
    x.tofile(f"{d}/0.bin")
    np.array(r, np.float32).tofile(f"{d}/1.bin")
    np.array(t, np.bool_).tofile(f"{d}/2.bin")
    json.dump([{"name": "x", "dtype": "float32", "shape": [100, 1000], "file": "0.bin"},
               {"name": "ratio", "dtype": "float32", "shape": [], "file": "1.bin"},
               {"name": "training_mode", "dtype": "bool", "shape": [], "file": "2.bin"}], open(f"{d}/manifest.json", "w"))
np.save(f"{out}/x.npy", x)
json.dump(sets, open(f"{out}/sets.json", "w"))
open(f"{out}/../cases.txt", "w").write("".join(f"dropout in{i}\n" for i in range(len(sets))))
PY
"$build/oaax-vulkan-toolchain" "$tmp/dropout/model.onnx" "$tmp/dropout/bundle" > "$tmp/toolchain.log"
fail=0
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, sys
import numpy as np
tmp, drv = sys.argv[1:3]
tmp += "/dropout"
x = np.load(f"{tmp}/x.npy")
sets = json.load(open(f"{tmp}/sets.json"))
bad = 0
draws = {}
for i, (r, t) in enumerate(sets):
    od = f"{tmp}/{drv}-in{i}"
    try:
        got = {e["name"]: e for e in json.load(open(f"{od}/manifest.json"))}
        y = np.fromfile(f"{od}/{got['y']['file']}", got["y"]["dtype"]).reshape(got["y"]["shape"])
        mask = np.fromfile(f"{od}/{got['mask']['file']}", got["mask"]["dtype"]).reshape(got["mask"]["shape"])
    except (OSError, KeyError) as e:
        print(f"{drv}: set {i}: no output ({e})"); bad = 1; continue
    if y.dtype != np.float32 or mask.dtype != np.bool_ or y.shape != x.shape or mask.shape != x.shape:
        print(f"{drv}: set {i}: WRONG types/shapes {y.dtype}{y.shape} {mask.dtype}{mask.shape}"); bad = 1; continue
    if not t or r == 0:
        ok = np.array_equal(y, x) and mask.all()
        print(f"{drv}: ratio {r} training {t}: Y = X and mask all true: {ok}")
        bad |= not ok
        continue
    dropped = 1.0 - mask.mean()
    kept_ok = np.allclose(y[mask], x[mask] / np.float32(1 - r), rtol=1e-6, atol=0)
    zero_ok = not np.any(y[~mask])
    rate_ok = abs(dropped - r) <= 0.01
    same = draws.setdefault(r, mask)
    repeat_ok = np.array_equal(same, mask)
    print(f"{drv}: ratio {r}: dropped {dropped:.4f} (|diff| <= 0.01: {rate_ok}), kept scaled by 1/(1-r): {kept_ok}, "
          f"dropped are 0: {zero_ok}, same draw as before: {repeat_ok}")
    bad |= not (kept_ok and zero_ok and rate_ok and repeat_ok)
sys.exit(1 if bad else 0)
PY
done
exit $fail
