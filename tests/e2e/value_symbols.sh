#!/usr/bin/env bash
# End to end, run-time value symbols: an integer graph input that fixes a
# shape or a size is left unbound at conversion; the runtime reads its values
# at send_input and computes the output shapes per inference. Ten
# models, each converted once with no config:
#   Reshape `shape` (int64 [3]) of a [2,3,4] tensor, opset 13;
#   Unsqueeze `axes` (int64 [2]) of [3,4] and Squeeze `axes` of [1,3,1,4], opset 13;
#   CumSum `axis` (int32 scalar) of [3,4,2], plain and exclusive=1 reverse=1, opset 14;
#   TopK `K` (int64 [1]) of [3,5], axis=-1 and axis=0 largest=0, opset 11
#   (outputs Values and Indices, [3,K] / [K,5]);
#   Slice of [20,10,5], opset 13, with `starts`, `ends`, `axes`, `steps` (int64 [2]
#   each) and with only `starts`, `ends` (axes and steps omitted);
#   and the Reshape followed by Abs and Sqrt (elementwise kernels sized by the
#   value-determined shape).
# Each bundle runs through libRuntimeLibrary.so (oaax-run, validation layer
# on) on lavapipe and SwiftShader with many value sets (0 copies a dimension,
# -1 infers one, negative axes, every K; Slice bounds past either end, negative
# starts/ends/steps, INT64_MAX as "to the end", an empty [0,0,5] output). Every
# output's dtype, shape and data (byte size too: 0 bytes for an empty output)
# must equal numpy's reshape / expand_dims / squeeze / cumsum / sort /
# x[tuple(slices)] exactly (CumSum data are small integers, so sums are exact;
# TopK data are distinct, so the order is unique), and invalid values (wrong
# element count, two -1s, an element outside its range, a repeated axis,
# squeezing a dimension that is not 1, an axis or K out of range, a Slice step
# of 0) must make send_input fail with a message naming the rule. Needs only
# numpy and onnx in PYTHON.
# usage: value_symbols.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py"
# Models, and one input directory per value set (with want.npz, numpy's
# outputs, for valid sets). cases.txt lists "MODEL DIR" for valid sets and
# "MODEL DIR EXPECTED-MESSAGE" for invalid ones; models.txt the models.
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
out = sys.argv[1]
rng = np.random.default_rng(3)
F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
NP = {F: np.float32, I32: np.int32, I64: np.int64}
def onnx_reshape(x, s):
    return x.reshape([x.shape[i] if v == 0 else v for i, v in enumerate(s)])
def cumsum(x, a, exclusive=0, reverse=0):
    x = np.flip(x, a) if reverse else x
    y = np.cumsum(x, a) - (x if exclusive else 0)  # exact: x holds small integers
    return np.flip(y, a) if reverse else y
def topk(x, k, axis, largest=1):
    i = np.take(np.argsort(-x if largest else x, axis), np.arange(k), axis)
    return np.take_along_axis(x, i, axis), i.astype(np.int64)
def slice_(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    sl = [slice(None)] * x.ndim
    for b, e, a, s in zip(starts, ends, axes, steps):
        sl[a] = slice(b, e, s)
    return x[tuple(sl)]
Y, VI = [("y", F)], [("Values", F), ("Indices", I64)]
SE = [("starts", I64, [2]), ("ends", I64, [2])]
SEAS = SE + [("axes", I64, [2]), ("steps", I64, [2])]
# name: (op, attributes, opset, data input, its shape, value inputs [(name, type, shape)], outputs, numpy).
# A value set is the one input's values, or with several value inputs a tuple of theirs.
models = {
    "reshape": ("Reshape", {}, 13, "data", [2, 3, 4], [("shape", I64, [3])], Y, lambda x, s: [onnx_reshape(x, s)]),
    "unsqueeze": ("Unsqueeze", {}, 13, "x", [3, 4], [("axes", I64, [2])], Y,
                  lambda x, a: [np.expand_dims(x, tuple(a))]),
    "squeeze": ("Squeeze", {}, 13, "x", [1, 3, 1, 4], [("axes", I64, [2])], Y,
                lambda x, a: [np.squeeze(x, tuple(a))]),
    "cumsum": ("CumSum", {}, 14, "x", [3, 4, 2], [("axis", I32, [])], Y, lambda x, a: [cumsum(x, a)]),
    "cumsum_excl_rev": ("CumSum", {"exclusive": 1, "reverse": 1}, 14, "x", [3, 4, 2], [("axis", I32, [])], Y,
                        lambda x, a: [cumsum(x, a, 1, 1)]),
    "topk": ("TopK", {"axis": -1}, 11, "X", [3, 5], [("K", I64, [1])], VI, lambda x, k: topk(x, k[0], -1)),
    "topk_axis0_smallest": ("TopK", {"axis": 0, "largest": 0}, 11, "X", [3, 5], [("K", I64, [1])], VI,
                            lambda x, k: topk(x, k[0], 0, 0)),
    "slice": ("Slice", {}, 13, "x", [20, 10, 5], SEAS, Y, lambda x, v: [slice_(x, *v)]),
    "slice_starts_ends": ("Slice", {}, 13, "x", [20, 10, 5], SE, Y, lambda x, v: [slice_(x, *v)]),
    "reshape_then_sqrt": ("Reshape", {}, 13, "data", [2, 3, 4], [("shape", I64, [3])], Y,
                          lambda x, s: [np.sqrt(np.abs(onnx_reshape(x, s)))]),
}
# Models whose one output goes through these activations after the op (a
# value-determined shape reaching elementwise kernels).
POST = {"reshape_then_sqrt": ["Abs", "Sqrt"]}
MAX = 2**63 - 1
valid = {
    "reshape": [[4, 3, 2], [2, -1, 4], [0, 12, -1], [24, 1, 1], [1, 1, 24], [-1, 2, 2],
                [0, 0, 4], [4, 0, -1], [2, 3, 4]],
    "unsqueeze": [[0, 1], [-1, 0], [3, 1], [1, -2], [0, 3], [-4, -1]],
    "squeeze": [[0, 2], [2, 0], [-2, -4], [0, -2]],
    "cumsum": [0, 1, 2, -1, -3],
    "cumsum_excl_rev": [0, 1, 2, -1, -3],
    "topk": [[1], [3], [5]],
    "topk_axis0_smallest": [[1], [2], [3]],
    "slice": [([0, 0], [3, 10], [0, 1], [1, 1]), ([1, -1], [20, 0], [0, 1], [2, -1]),
              ([-5, 2], [100, -2], [1, 2], [1, 1]), ([19, 0], [-100, 5], [0, 2], [-3, 2]),
              ([0, 0], [1, 1], [2, 0], [1, 1]), ([0, 9], [20, -100], [-3, -2], [7, -4]),
              ([0, 0], [MAX, MAX], [0, 1], [1, 1]),  # INT64_MAX: to the end
              ([5, 5], [5, 5], [0, 1], [1, 1])],  # empty: [0, 0, 5]
    "slice_starts_ends": [([2, 0], [5, 3]), ([-3, -20], [20, 20])],
    "reshape_then_sqrt": [[4, 3, 2], [0, 12, -1], [1, 1, 24], [-1, 2, 2]],
}
invalid = {
    "reshape": [([5, 5, 1], "the target shape must hold the input's 24 elements"),
                ([3, 0, -1], "the target shape must hold the input's 24 elements"),
                ([-1, -1, 24], "the target shape has more than one -1"),
                ([2, 99, 1], "element 1 (shape[1]) is 99, outside shape[1]'s range")],
    "unsqueeze": [([1, 1], "Unsqueeze 'unsqueeze': an axis is repeated")],
    "squeeze": [([0, 1], "a squeezed dimension of the input [1, 3, 1, 4] is not 1")],
    "cumsum": [(3, "element 0 (axis) is 3, outside axis's range [-3, 2]")],
    "cumsum_excl_rev": [(-4, "element 0 (axis) is -4, outside axis's range [-3, 2]")],
    "topk": [([6], "element 0 (K[0]) is 6, outside K[0]'s range [1, 5]"),
             ([0], "element 0 (K[0]) is 0, outside K[0]'s range [1, 5]")],
    "topk_axis0_smallest": [([4], "element 0 (K[0]) is 4, outside K[0]'s range [1, 3]")],
    "slice": [(([0, 0], [3, 3], [0, 1], [0, 1]), "a step is 0"),
              (([0, 0], [3, 3], [1, 1], [1, 1]), "an axis is repeated"),
              (([0, 0], [3, 3], [3, 0], [1, 1]), "element 0 (axes[0]) is 3, outside axes[0]'s range [-3, 2]")],
}
def data(name, xs):
    if name.startswith("cumsum"):
        return rng.integers(-5, 5, xs).astype(np.float32)  # sums exact in any order
    if name.startswith("topk"):
        return rng.permutation(int(np.prod(xs))).reshape(xs).astype(np.float32)  # distinct
    return rng.standard_normal(xs).astype(np.float32)
def write(d, name, vals):
    _, _, _, xn, xs, vins, _, _ = models[name]
    os.makedirs(d)
    x = data(name, xs)
    x.tofile(f"{d}/0.bin")
    manifest = [{"name": xn, "dtype": "float32", "shape": xs, "file": "0.bin"}]
    for i, ((vn, vt, vs), v) in enumerate(zip(vins, vals if len(vins) > 1 else [vals]), 1):
        np.array(v, NP[vt]).reshape(vs).tofile(f"{d}/{i}.bin")
        manifest.append({"name": vn, "dtype": np.dtype(NP[vt]).name, "shape": vs, "file": f"{i}.bin"})
    json.dump(manifest, open(f"{d}/manifest.json", "w"))
    return x
for name, (op, attrs, opset, xn, xs, vins, outs, ref) in models.items():
    ranks = [y.ndim for y in ref(np.zeros(xs, np.float32), valid[name][0])]
    post = POST.get(name, [])
    heads = [o + "_pre" for o, _ in outs] if post else [o for o, _ in outs]
    nodes = [h.make_node(op, [xn] + [v[0] for v in vins], heads, name=name, **attrs)]
    for k, act in enumerate(post):
        nodes.append(h.make_node(act, [heads[0] if k == 0 else f"post{k}"],
                                 [outs[0][0] if k == len(post) - 1 else f"post{k + 1}"], name=f"{name}_{act}"))
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info(xn, F, xs)] + [h.make_tensor_value_info(*v) for v in vins],
                     [h.make_tensor_value_info(o, t, [f"{o}{i}" for i in range(r)])
                      for (o, t), r in zip(outs, ranks)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
with open(f"{out}/cases.txt", "w") as cases:
    for name, sets in valid.items():
        outs, ref = models[name][6:]
        for i, vals in enumerate(sets):
            x = write(f"{out}/{name}/in{i}", name, vals)
            np.savez(f"{out}/{name}/in{i}/want.npz", **{o: y for (o, _), y in zip(outs, ref(x, vals))})
            cases.write(f"{name} in{i}\n")
    for name, sets in invalid.items():
        for vals, msg in sets:
            d = "bad" + "_".join(map(str, np.ravel(vals)))
            write(f"{out}/{name}/{d}", name, vals)
            cases.write(f"{name} {d} {msg}\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")
PY
while read -r m; do
  "$build/oaax-vulkan-toolchain" "$tmp/$m/model.onnx" "$tmp/$m/bundle" > "$tmp/$m/toolchain.log"
done < "$tmp/models.txt"
fail=0
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv = sys.argv[1:3]
def load(d, entry):
    return np.fromfile(f"{d}/{entry['file']}", dtype=entry["dtype"]).reshape(entry["shape"])
bad = 0
for line in open(f"{tmp}/cases.txt"):
    m, d = line.split()[:2]
    if d.startswith("bad"):
        continue
    vals = [load(f"{tmp}/{m}/{d}", e).tolist() for e in json.load(open(f"{tmp}/{m}/{d}/manifest.json"))[1:]]
    vals = vals[0] if len(vals) == 1 else tuple(vals)
    od = f"{tmp}/{m}/{drv}-{d}"
    if not os.path.exists(f"{od}/manifest.json"):
        print(f"{drv}: {m} {vals}: no output"); bad = 1; continue
    got = {e["name"]: e for e in json.load(open(f"{od}/manifest.json"))}
    report = []
    for name, want in np.load(f"{tmp}/{m}/{d}/want.npz").items():
        e = got.get(name)
        if e is None:
            report.append(f"{name} MISSING"); bad = 1; continue
        size = os.path.getsize(f"{od}/{e['file']}")
        if e["dtype"] != want.dtype.name or list(e["shape"]) != list(want.shape) or size != want.nbytes:
            report.append(f"{name} WRONG: {e['dtype']}{e['shape']} in {size} bytes, expected "
                          f"{want.dtype}{list(want.shape)} in {want.nbytes}"); bad = 1; continue
        y = load(od, e)
        report.append(f"{name} {y.dtype}{list(y.shape)}" + (f" ({size} bytes)" if not size else ""))
        if want.size <= 60 and not np.array_equal(y, want):
            report[-1] += f" WRONG values: got {y.tolist()}, numpy {want.tolist()}"; bad = 1
        elif not np.array_equal(y, want):
            wrong = np.argwhere(y != want)
            report[-1] += (f" WRONG values at {len(wrong)} of {want.size} indices, first "
                           + ", ".join(f"{list(i)}: got {y[tuple(i)]}, numpy {want[tuple(i)]}" for i in wrong[:4]))
            bad = 1
    print(f"{drv}: {m} {vals}: " + ", ".join(report))
sys.exit(bad)
PY
done
exit $fail
