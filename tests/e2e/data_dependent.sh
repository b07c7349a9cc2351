#!/usr/bin/env bash
# End to end, data-dependent output extents (bundle feature
# data_dependent_outputs): Compress with a run-time `condition` and NonZero
# run on the device into a buffer planned at the largest result, and the
# runtime returns the result trimmed to the extent the device wrote. Models,
# each converted once with no config:
#   Compress, opset 11, condition a bool graph input: float [4,5] axis=0
#   (cond [4]), axis=1 (cond [5]), int32 [4,5] axis=-1 (cond [5]), float
#   [4,5] without axis (flattened, cond [20]), condition shorter than the
#   axis (axis=1 cond [3]; no axis cond [7]), float [2,3,4] axis=1 (outer and
#   inner blocks both above 1), int64 [3,600] axis=-1 (more slices than the
#   256 invocations);
#   NonZero, opset 13: float [3,4], int64 [2,3,4], bool [5], int32 [259]
#   (256 + 3 elements: chunks of unequal length), float [100,1000] (all 256
#   chunks used), float [1];
#   one model with three outputs: NonZero(x), Compress(x, cond, axis=0) and
#   Relu(x) (two hidden extent outputs, each trimming its own output).
# Each bundle runs through libRuntimeLibrary.so (oaax-run, validation layer
# on) on lavapipe and SwiftShader with many value sets: random, all true /
# all nonzero, all false / all zero (an empty result: [0,5], [rank,0], ...
# in 0 bytes), a single true / nonzero at the first and at the last position,
# alternating; float data with -0.0 (a zero for NonZero), NaN and +-Inf
# (nonzero). Unique (sorted and first-occurrence order, without an axis and
# along axes 0, 1 and -1; float32, int32 and int64 data with repeats, all
# equal, all distinct) must equal numpy's np.unique with return_index,
# return_inverse and return_counts (reordered by first occurrence when not
# sorted). Every output's name set (the hidden extent outputs must not be
# returned), dtype, shape, byte size and bytes must equal numpy's
# np.compress(cond, x, axis) (np.compress(cond, x.ravel()) without axis) and
# np.stack(np.nonzero(x)).astype(int64) exactly. Nodes reading such a result
# keep its extent (Compress -> Relu, NonZero -> Transpose, and Compress ->
# Relu with the Compress result a graph output as well) and match numpy too.
# A node reducing such a result over its data-dependent axis (Compress ->
# ReduceSum; the extent becomes a decided symbol,
# tests/e2e/decided_extents.sh, and may be 0) matches numpy too, an empty
# selection summing to 0. Needs only numpy and onnx in PYTHON.
# usage: data_dependent.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py"
# Models, and one input directory per value set with want.npz (numpy's
# outputs). cases.txt lists "MODEL DIR"; models.txt the models to run,
# refused.txt the models whose conversion must fail.
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
out = sys.argv[1]
rng = np.random.default_rng(5)
F, I32, I64, B = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL
NP = {F: np.float32, I32: np.int32, I64: np.int64, B: np.bool_}
def compress(x, c, axis=None):
    return np.compress(c, x.ravel() if axis is None else x, axis)
def nonzero(x):
    return np.stack(np.nonzero(x)).astype(np.int64).reshape(x.ndim, -1)
def sym(name, r):
    return [f"{name}{i}" for i in range(r)]
models = {}  # name: (graph, inputs {name: (type, shape)}, numpy(inputs) -> {output: array})
def add(name, nodes, ins, outs, opset, ref):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, (t, s) in ins.items()],
                     [h.make_tensor_value_info(n, t, s) for n, t, s in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    os.makedirs(f"{out}/{name}")
    onnx.save(m, f"{out}/{name}/model.onnx")
    models[name] = (ins, ref)
# Compress: (data type, data shape, condition length, axis or None).
compress_models = {
    "compress_axis0": (F, [4, 5], 4, 0),
    "compress_axis1": (F, [4, 5], 5, 1),
    "compress_axism1_int32": (I32, [4, 5], 5, -1),
    "compress_flat": (F, [4, 5], 20, None),
    "compress_short_axis1": (F, [4, 5], 3, 1),
    "compress_short_flat": (F, [4, 5], 7, None),
    "compress_3d_axis1": (F, [2, 3, 4], 3, 1),
    "compress_wide_int64": (I64, [3, 600], 600, -1),
}
for name, (t, xs, c, axis) in compress_models.items():
    attrs = {} if axis is None else {"axis": axis}
    r = 1 if axis is None else len(xs)
    add(name, [h.make_node("Compress", ["x", "cond"], ["y"], name=name, **attrs)],
        {"x": (t, xs), "cond": (B, [c])}, [("y", t, sym("y", r))], 11,
        lambda v, axis=axis: {"y": compress(v["x"], v["cond"], axis)})
# NonZero: (data type, shape).
nonzero_models = {
    "nonzero_f32": (F, [3, 4]),
    "nonzero_i64": (I64, [2, 3, 4]),
    "nonzero_bool": (B, [5]),
    "nonzero_i32_259": (I32, [259]),
    "nonzero_large": (F, [100, 1000]),
    "nonzero_len1": (F, [1]),
}
for name, (t, xs) in nonzero_models.items():
    add(name, [h.make_node("NonZero", ["x"], ["y"], name=name)], {"x": (t, xs)},
        [("y", I64, [len(xs), "n"])], 13, lambda v: {"y": nonzero(v["x"])})
# A reduction over the data-dependent axis (small integers in float32: sums
# exact in any order); an empty selection sums to 0.
add("compress_reducesum", [h.make_node("Compress", ["x", "cond"], ["c"], name="c", axis=1),
                           h.make_node("ReduceSum", ["c"], ["y"], name="sum", axes=[1])],
    {"x": (F, [4, 5]), "cond": (B, [5])}, [("y", F, [4, 1])], 11,
    lambda v: {"y": compress(v["x"], v["cond"], 1).sum(axis=1, keepdims=True).astype(np.float32)})
add("multi", [h.make_node("NonZero", ["x"], ["nz"], name="nz"),
              h.make_node("Compress", ["x", "cond"], ["c"], name="c", axis=0),
              h.make_node("Relu", ["x"], ["r"], name="r")],
    {"x": (F, [3, 4]), "cond": (B, [3])},
    [("nz", I64, [2, "n"]), ("c", F, ["c0", 4]), ("r", F, [3, 4])], 13,
    lambda v: {"nz": nonzero(v["x"]), "c": compress(v["x"], v["cond"], 0), "r": np.maximum(v["x"], 0)})
# Unique: Y, indices and counts have a data-dependent extent, inverse_indices not.
def unique(x, axis=None, sorted_=True):
    y, idx, inv, cnt = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    if not sorted_:  # order of first occurrence
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order); rank[order] = np.arange(len(order))
        y, idx, cnt, inv = np.take(y, order, axis=0 if axis is None else axis), idx[order], cnt[order], rank[inv]
    return {"y": y, "indices": idx.astype(np.int64), "inverse": inv.reshape(-1).astype(np.int64),
            "counts": cnt.astype(np.int64)}
for name, t, xs, axis, srt in [("unique_sorted_f32", F, [6, 5], None, 1), ("unique_unsorted_i32", I32, [40], None, 0),
                               ("unique_axis0_i64", I64, [6, 3], 0, 1), ("unique_axis1_f32", F, [2, 7, 2], 1, 1),
                               ("unique_axis1_unsorted", F, [3, 6], -1, 0)]:
    attrs = {"sorted": srt} if axis is None else {"sorted": srt, "axis": axis}
    r = 1 if axis is None else len(xs)
    add(name, [h.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], name=name, **attrs)],
        {"x": (t, xs)}, [("y", t, sym("y", r)), ("indices", I64, ["u"]), ("inverse", I64, ["n"]),
                         ("counts", I64, ["u"])], 11,
        lambda v, axis=axis, srt=srt: unique(v["x"], axis, bool(srt)))
# Nodes reading a data-dependent result keep its extent (ir/extent.h).
add("compress_relu", [h.make_node("Compress", ["x", "cond"], ["c"], name="c", axis=1),
                      h.make_node("Relu", ["c"], ["y"], name="relu")],
    {"x": (F, [4, 5]), "cond": (B, [5])}, [("y", F, [4, "k"])], 11,
    lambda v: {"y": np.maximum(compress(v["x"], v["cond"], 1), 0)})
add("nonzero_transpose", [h.make_node("NonZero", ["x"], ["nz"], name="nz"),
                          h.make_node("Transpose", ["nz"], ["y"], name="t")],
    {"x": (F, [3, 4])}, [("y", I64, ["n", 2])], 13, lambda v: {"y": nonzero(v["x"]).T.copy()})
# also a graph output itself, and read by a node
add("compress_output_and_relu", [h.make_node("Compress", ["x", "cond"], ["c"], name="c", axis=0),
                                 h.make_node("Relu", ["c"], ["y"], name="relu")],
    {"x": (F, [4, 5]), "cond": (B, [4])}, [("c", F, ["k", 5]), ("y", F, ["k", 5])], 11,
    lambda v: {"c": compress(v["x"], v["cond"], 0), "y": np.maximum(compress(v["x"], v["cond"], 0), 0)})

def special(shape, t, zeros=0.4):
    """Random data of type t with about `zeros` of it zero; floats also get -0.0, NaN, +-Inf."""
    n = int(np.prod(shape))
    if t == B:
        return rng.random(n).reshape(shape) >= zeros
    x = rng.integers(-9, 10, n).astype(NP[t])
    x[x == 0] = 1
    x[rng.random(n) < zeros] = 0
    if t == F:
        x = x * np.float32(0.5) + rng.standard_normal(n).astype(np.float32) * (x != 0)
        x[x == 0] = 0  # a normal draw of exactly 0 stays a zero
        k = rng.permutation(n)[:min(n // 5, 4)]
        for i, v in zip(k, [-0.0, np.nan, np.inf, -np.inf]):
            x[i] = v
    return x.reshape(shape)
def one_at(shape, t, i):
    x = np.zeros(int(np.prod(shape)), NP[t])
    x[i] = 1 if t != F else -2.5
    return x.reshape(shape)
def conds(c):
    sets = [np.ones(c, bool), np.zeros(c, bool), np.eye(1, c, c - 1, dtype=bool)[0],
            np.eye(1, c, 0, dtype=bool)[0], np.arange(c) % 2 == 1]
    sets += [rng.random(c) < 0.5 for _ in range(2)]
    return sets
values = {}  # name: [{input: array}]
for name, (t, xs, c, axis) in compress_models.items():
    values[name] = [{"x": special(xs, t, 0.2), "cond": cv} for cv in conds(c)]
for name, (t, xs) in nonzero_models.items():
    n = int(np.prod(xs))
    sets = [special(xs, t), np.zeros(xs, NP[t]), one_at(xs, t, n - 1), one_at(xs, t, 0)]
    if t != B:
        sets.append(np.full(xs, -1, NP[t]))  # all nonzero
    if t == F:
        sets.append(np.full(xs, -0.0, np.float32))  # all -0.0: empty
        sets.append(np.full(xs, np.nan, np.float32))  # all NaN: every position
    if n > 1000:  # the nonzeros in a few chunks only, and about 30% nonzero
        x = np.zeros(n, NP[t]); x[50_000:50_700] = 3; sets.append(x.reshape(xs))
        sets.append(special(xs, t, 0.7))
    if t == B:
        sets.append(np.array([True, False, True, True, False]))
    values[name] = [{"x": x} for x in sets]
def no_nan(x):  # Relu's NaN and -0.0 are not what is tested here
    x[np.isnan(x)] = 1.5; x[x == 0] = 0
    return x
values["multi"] = [{"x": no_nan(special([3, 4], F)), "cond": cv} for cv in conds(3)] + \
                  [{"x": np.zeros([3, 4], np.float32), "cond": np.zeros(3, bool)}]
values["compress_reducesum"] = [{"x": rng.integers(-8, 9, [4, 5]).astype(np.float32), "cond": cv} for cv in conds(5)]
values["compress_relu"] = [{"x": no_nan(special([4, 5], F)), "cond": cv} for cv in conds(5)]
values["compress_output_and_relu"] = [{"x": no_nan(special([4, 5], F)), "cond": cv} for cv in conds(4)]
def repeats(shape, t, axis):
    """Values with repeats: small integers (whole repeated slices along axis)."""
    if axis is None:
        return rng.integers(-3, 4, shape).astype(NP[t])
    base = rng.integers(-2, 3, shape).astype(NP[t])
    take = rng.integers(0, max(shape[axis] // 2, 1), shape[axis])
    return np.take(base, take, axis=axis)
for name, t, xs, axis in [("unique_sorted_f32", F, [6, 5], None), ("unique_unsorted_i32", I32, [40], None),
                          ("unique_axis0_i64", I64, [6, 3], 0), ("unique_axis1_f32", F, [2, 7, 2], 1),
                          ("unique_axis1_unsorted", F, [3, 6], 1)]:
    values[name] = [{"x": repeats(xs, t, axis)} for _ in range(3)] + [{"x": np.full(xs, 2, NP[t])},
                    {"x": np.arange(int(np.prod(xs))).reshape(xs).astype(NP[t])}]
values["nonzero_transpose"] = [{"x": special([3, 4], F)}, {"x": np.zeros([3, 4], np.float32)}]
with open(f"{out}/cases.txt", "w") as cases:
    for name, (ins, ref) in models.items():
        for k, v in enumerate(values[name]):
            d = f"{out}/{name}/in{k}"
            os.makedirs(d)
            manifest = []
            for i, (n, (t, s)) in enumerate(ins.items()):
                a = np.ascontiguousarray(v[n], NP[t])
                assert list(a.shape) == s, (name, n, a.shape)
                a.tofile(f"{d}/{i}.bin")
                manifest.append({"name": n, "dtype": a.dtype.name, "shape": s, "file": f"{i}.bin"})
            json.dump(manifest, open(f"{d}/manifest.json", "w"))
            np.savez(f"{d}/want.npz", **ref(v))
            cases.write(f"{name} in{k}\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")
PY
fail=0
e2e_convert "$py" "$build" "$tmp" || fail=1
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv = sys.argv[1:3]
def load(d, entry):
    return np.fromfile(f"{d}/{entry['file']}", dtype=entry["dtype"]).reshape(entry["shape"])
def brief(a):
    s = a.shape
    if a.size > 8:
        a = a.ravel()[:8]
        return f"{list(s)} {a.tolist()}..."
    return str(a.tolist())
bad = 0
for line in open(f"{tmp}/cases.txt"):
    m, d = line.split()
    if not os.path.exists(f"{tmp}/{m}/bundle/model.oinf"):
        continue
    ind = f"{tmp}/{m}/{d}"
    ins = ", ".join(f"{e['name']}={brief(load(ind, e))}" for e in json.load(open(f"{ind}/manifest.json")))
    od = f"{tmp}/{m}/{drv}-{d}"
    if not os.path.exists(f"{od}/manifest.json"):
        print(f"{drv}: {m} {d} ({ins}): no output"); bad = 1; continue
    got = {e["name"]: e for e in json.load(open(f"{od}/manifest.json"))}
    want_all = dict(np.load(f"{ind}/want.npz").items())
    report = []
    extra = sorted(set(got) - set(want_all))
    if extra:
        report.append(f"UNEXPECTED outputs {extra}"); bad = 1
    for name, want in want_all.items():
        e = got.get(name)
        if e is None:
            report.append(f"{name} MISSING"); bad = 1; continue
        size = os.path.getsize(f"{od}/{e['file']}")
        if e["dtype"] != want.dtype.name or list(e["shape"]) != list(want.shape) or size != want.nbytes:
            report.append(f"{name} WRONG: {e['dtype']}{e['shape']} in {size} bytes, expected "
                          f"{want.dtype}{list(want.shape)} in {want.nbytes}"); bad = 1; continue
        y = load(od, e)
        report.append(f"{name} {y.dtype}{list(y.shape)}" + (f" ({size} bytes)" if not size else ""))
        if y.tobytes() == want.tobytes():  # bitwise: NaN, -0.0
            continue
        bad = 1
        if want.size <= 60:
            report[-1] += f" WRONG values: got {y.tolist()}, numpy {want.tolist()}"
        else:
            yb = y.view(f"u{y.itemsize}") if y.dtype.kind == "f" else y
            wb = want.view(f"u{want.itemsize}") if want.dtype.kind == "f" else want
            wrong = np.argwhere(yb != wb)
            report[-1] += (f" WRONG values at {len(wrong)} of {want.size} indices, first "
                           + ", ".join(f"{list(i)}: got {y[tuple(i)]}, numpy {want[tuple(i)]}" for i in wrong[:4]))
    print(f"{drv}: {m} {d} ({ins}): " + ", ".join(report))
sys.exit(bad)
PY
done
exit $fail
