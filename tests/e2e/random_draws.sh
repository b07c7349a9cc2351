#!/usr/bin/env bash
# End to end, the random generators (opset 15: RandomUniformLike,
# RandomNormalLike and Bernoulli on X float [200, 500] of probabilities):
# one bundle run through libRuntimeLibrary.so (oaax-run, validation layer on)
# on lavapipe and SwiftShader, twice with the same input. Over the 100,000
# draws of each output:
#   uniform [-2, 3) (seed 1): every value in range, the mean within 0.03 of
#     0.5 and the variance within 2% of 25/12, each tenth of the range
#     holding 10% within 0.5% (each at least 5 standard deviations);
#   normal, mean 1.5, scale 0.5 (seed 1): mean within 0.01, standard
#     deviation within 0.01, 68.27% within one deviation of the mean, +-1%;
#   normal without seed and mean 0 / scale 1: mean within 0.02, deviation
#     within 0.02, and not the seeded draw rescaled;
#   Bernoulli (seed 3, float output) and Bernoulli (no seed, dtype bool):
#     0 / 1 only, the fraction of ones within 0.01 of the mean probability,
#     and within 0.02 of it in each tenth of the probabilities (so the draw
#     follows X, as the ONNX definition states: 1 with probability x);
# and the second run gives the same draws (a deterministic counter-based
# generator; the draws cannot equal numpy's, so the ONNX node tests of
# Bernoulli are skipped in the conformance run). Needs numpy and onnx in
# PYTHON.
# usage: random_draws.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py"
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h
out = sys.argv[1] + "/random"
os.makedirs(out)
shape = [200, 500]
nodes = [
    h.make_node("RandomUniformLike", ["x"], ["uni"], name="uni", low=-2.0, high=3.0, seed=1.0),
    h.make_node("RandomNormalLike", ["x"], ["nor"], name="nor", mean=1.5, scale=0.5, seed=1.0),
    h.make_node("RandomNormalLike", ["x"], ["nor_unseeded"], name="nor_unseeded"),
    h.make_node("Bernoulli", ["x"], ["bern"], name="bern", seed=3.0),
    h.make_node("Bernoulli", ["x"], ["bern_bool"], name="bern_bool", dtype=T.BOOL),
]
outs = [h.make_tensor_value_info(n, T.FLOAT, shape) for n in ("uni", "nor", "nor_unseeded", "bern")]
outs.append(h.make_tensor_value_info("bern_bool", T.BOOL, shape))
g = h.make_graph(nodes, "random", [h.make_tensor_value_info("x", T.FLOAT, shape)], outs)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 15)])
onnx.checker.check_model(m)
onnx.save(m, f"{out}/model.onnx")
x = np.random.default_rng(7).uniform(0, 1, shape).astype(np.float32)
for i in range(2):
    d = f"{out}/in{i}"
    os.makedirs(d)
    x.tofile(f"{d}/0.bin")
    json.dump([{"name": "x", "dtype": "float32", "shape": shape, "file": "0.bin"}], open(f"{d}/manifest.json", "w"))
np.save(f"{out}/x.npy", x)
open(f"{out}/../cases.txt", "w").write("random in0\nrandom in1\n")
PY
"$build/oaax-vulkan-toolchain" "$tmp/random/model.onnx" "$tmp/random/bundle" > "$tmp/toolchain.log"
fail=0
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, sys
import numpy as np
tmp, drv = sys.argv[1:3]
tmp += "/random"
x = np.load(f"{tmp}/x.npy").ravel()
runs = []
for i in range(2):
    od = f"{tmp}/{drv}-in{i}"
    got = {e["name"]: e for e in json.load(open(f"{od}/manifest.json"))}
    runs.append({k: np.fromfile(f"{od}/{e['file']}", e["dtype"]) for k, e in got.items()})
r = runs[0]
checks = []
def check(what, ok):
    checks.append((what, bool(ok)))
u = r["uni"]
check("uniform in [-2, 3)", u.min() >= -2 and u.max() < 3)
check(f"uniform mean {u.mean():.4f} ~ 0.5", abs(u.mean() - 0.5) < 0.03)
check(f"uniform variance {u.var():.4f} ~ {25 / 12:.4f}", abs(u.var() / (25 / 12) - 1) < 0.02)
hist = np.histogram(u, bins=10, range=(-2, 3))[0] / u.size
check(f"uniform tenths {hist.min():.4f}..{hist.max():.4f} ~ 0.1", np.all(np.abs(hist - 0.1) < 0.005))
nrm = r["nor"]
check(f"normal mean {nrm.mean():.4f} ~ 1.5", abs(nrm.mean() - 1.5) < 0.01)
check(f"normal deviation {nrm.std():.4f} ~ 0.5", abs(nrm.std() - 0.5) < 0.01)
inside = np.mean(np.abs(nrm - 1.5) < 0.5)
check(f"normal within one deviation {inside:.4f} ~ 0.6827", abs(inside - 0.6827) < 0.01)
z = r["nor_unseeded"]
check(f"unseeded normal mean {z.mean():.4f} ~ 0, deviation {z.std():.4f} ~ 1", abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02)
check("unseeded normal is another draw than the seeded one", not np.allclose(z, (nrm - 1.5) / 0.5, atol=1e-4))
for name in ("bern", "bern_bool"):
    b = r[name].astype(np.float64)
    check(f"{name} is 0 or 1", np.all((b == 0) | (b == 1)))
    check(f"{name} ones {b.mean():.4f} ~ mean probability {x.mean():.4f}", abs(b.mean() - x.mean()) < 0.01)
    tenth = np.minimum((x * 10).astype(int), 9)
    worst = max(abs(b[tenth == k].mean() - x[tenth == k].mean()) for k in range(10))
    check(f"{name} follows the probabilities per tenth (worst {worst:.4f})", worst < 0.02)
check("bool and float Bernoulli are different draws (one seeded)", not np.array_equal(r["bern"], r["bern_bool"].astype(np.float32)))
check("the second run draws the same", all(np.array_equal(runs[0][k], runs[1][k]) for k in r))
bad = [w for w, ok in checks if not ok]
for w, ok in checks:
    print(f"{drv}: {w}: {'ok' if ok else 'WRONG'}")
sys.exit(1 if bad else 0)
PY
done
exit $fail
