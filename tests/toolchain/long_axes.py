#!/usr/bin/env python3
"""Reductions, ArgMax / ArgMin and the softmax family on long axes, end to end.

Converts small ONNX models whose reduced axes are far longer than one shader
invocation may loop (src/toolchain/lower/loop_budget.h) with
oaax-vulkan-toolchain, runs them with oaax-run on one Vulkan driver and
compares every output with a float64 NumPy reference:

  long_300000, long_2000000  a [1, L] row: ReduceSum / Mean / Max / Min / Prod /
      L1 / L2 / LogSum / LogSumExp / SumSquare, ArgMax / ArgMin (distinct values,
      and many ties with select_last_index 0 and 1), Softmax, LogSoftmax,
      Hardmax (ties), LayerNormalization;
  shapes  ReduceSum over [2, 3] of ones [1, 1, 512, 512]; ReduceMax / ReduceMin
      of [1, 3, 300, 300] with the extreme in the last pixel; ReduceMean over
      [0, 1] of ones [300, 300, 2]; ReduceLogSumExp over 40,000; over
      [128, 70000] rows: ArgMax, Softmax, ReduceSum, ReduceMean; along axis 0
      of [70000, 4] (strided): ArgMin, Softmax, ReduceL2, ReduceMax; over
      axes [0, 2] of [300, 4, 400]: ReduceSumSquare, ReduceL1;
      GlobalAveragePool over 1000 x 1100 pixels;
  dynamic  a [1, L] row with L in [1000, 2000000] (config.json "dimensions"),
      run at L = 300000 and 5000;
  by_value  ReduceSum of [3, 200000] with `axes` read at run time, run with
      axes [1] and [0].

Tolerances follow float32 accumulation: sums of positive values and
products 1e-4 / 1e-3 relative, maxima, minima and indices exact,
log-sum-exp 1e-4 absolute, Softmax 1e-4 relative per element, LogSoftmax and
LayerNormalization 1e-4 absolute plus 1e-4 relative.

usage: long_axes.py BUILD_DIR DRIVER(lavapipe|swiftshader) REPO_ROOT
Exit 77 (skip) when the driver is not installed.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32


class Model:
    """One ONNX graph under construction, with its inputs' data and references."""

    def __init__(self, name, opset=17):
        self.name, self.opset = name, opset
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.data = {}   # input name -> array
        self.checks = []  # (output name, reference, kind)
        self.scales = {}  # output name -> sum of |x| per output ("sumabs": sums of signed values)

    def input(self, name, arr, shape=None):
        dt = TensorProto.INT64 if arr.dtype == np.int64 else TensorProto.FLOAT
        self.inputs.append(helper.make_tensor_value_info(name, dt, shape or list(arr.shape)))
        self.data[name] = arr
        return name

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, name, ref, kind, **attrs):
        self.nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        dt = TensorProto.INT64 if op in ("ArgMax", "ArgMin") else TensorProto.FLOAT
        self.outputs.append(helper.make_tensor_value_info(name, dt, None))
        self.checks.append((name, ref, kind))
        return name

    def save(self, path):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        # Output shapes from ONNX shape inference (the checker wants them).
        bare = onnx.ModelProto()
        bare.CopyFrom(model)
        del bare.graph.output[:]
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(bare).graph.value_info}
        for o in model.graph.output:
            if o.name in inferred and inferred[o.name].type.tensor_type.HasField("shape"):
                o.CopyFrom(inferred[o.name])
        onnx.save(model, path)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def logsoftmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def hardmax(x, axis):
    y = np.zeros_like(x)
    np.put_along_axis(y, np.expand_dims(np.argmax(x, axis=axis), axis), 1.0, axis)
    return y


def lse(x, axis, keepdims=False):
    m = x.max(axis=axis, keepdims=True)
    r = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return r if keepdims else np.squeeze(r, axis=axis)


def argext(x, axis, is_max, last):
    """ONNX ArgMax / ArgMin with select_last_index."""
    if last:
        flipped = np.flip(x, axis)
        i = np.argmax(flipped, axis) if is_max else np.argmin(flipped, axis)
        return (x.shape[axis] - 1 - i).astype(np.int64)
    return (np.argmax(x, axis) if is_max else np.argmin(x, axis)).astype(np.int64)


def reductions(m, x, xp, tag, axes, keep=0):
    """The ten Reduce* operators of x (ReduceProd of xp) over `axes`."""
    d = x.astype(np.float64)
    t = tuple(axes)
    refs = {
        "ReduceSum": (d.sum(axis=t, keepdims=bool(keep)), "sum"),
        "ReduceMean": (d.mean(axis=t, keepdims=bool(keep)), "sum"),
        "ReduceMax": (d.max(axis=t, keepdims=bool(keep)), "exact"),
        "ReduceMin": (d.min(axis=t, keepdims=bool(keep)), "exact"),
        "ReduceL1": (np.abs(d).sum(axis=t, keepdims=bool(keep)), "sum"),
        "ReduceL2": (np.sqrt((d * d).sum(axis=t, keepdims=bool(keep))), "sum"),
        "ReduceLogSum": (np.log(d.sum(axis=t, keepdims=bool(keep))), "abs"),
        "ReduceLogSumExp": (lse(d, t, bool(keep)), "abs"),
        "ReduceSumSquare": ((d * d).sum(axis=t, keepdims=bool(keep)), "sum"),
    }
    for op, (ref, kind) in refs.items():
        if op == "ReduceSum":
            m.node(op, [m.xname, m.const(f"axes_{tag}", np.array(axes, np.int64))], f"{op}_{tag}", ref, kind,
                   keepdims=keep)
        else:
            m.node(op, [m.xname], f"{op}_{tag}", ref, kind, axes=axes, keepdims=keep)
    if xp is not None:
        m.node("ReduceProd", [m.xpname], f"ReduceProd_{tag}", xp.astype(np.float64).prod(axis=t, keepdims=bool(keep)),
               "prod", axes=axes, keepdims=keep)


def long_row(length, rng):
    m = Model(f"long_{length}")
    x = rng.uniform(0.5, 1.5, (1, length)).astype(F32)
    xs = (rng.standard_normal((1, length)) * 3).astype(F32)
    xt = rng.integers(0, 1000, (1, length)).astype(F32)  # every value about length / 1000 times
    xp = np.exp(rng.standard_normal((1, length)) * 1e-3).astype(F32)
    m.xname, m.xpname = m.input("x", x), m.input("xp", xp)
    m.input("xs", xs)
    m.input("xt", xt)
    reductions(m, x, xp, "x", [1])
    xsd, xtd = xs.astype(np.float64), xt.astype(np.float64)
    m.node("ReduceMax", ["xs"], "ReduceMax_xs", xsd.max(axis=1), "exact", axes=[1], keepdims=0)
    m.node("ReduceMin", ["xs"], "ReduceMin_xs", xsd.min(axis=1), "exact", axes=[1], keepdims=0)
    for op in ("ArgMax", "ArgMin"):
        m.node(op, ["xs"], f"{op}_xs", argext(xs, 1, op == "ArgMax", False), "exact", axis=1, keepdims=0)
        for last in (0, 1):
            m.node(op, ["xt"], f"{op}_xt_last{last}", argext(xt, 1, op == "ArgMax", last), "exact", axis=1,
                   keepdims=0, select_last_index=last)
    m.node("Softmax", ["xs"], "Softmax_xs", softmax(xsd, 1), "rel", axis=1)
    m.node("LogSoftmax", ["xs"], "LogSoftmax_xs", logsoftmax(xsd, 1), "absrel", axis=1)
    m.node("Hardmax", ["xt"], "Hardmax_xt", hardmax(xtd, 1), "exact", axis=1)
    scale = rng.uniform(0.5, 2.0, (length,)).astype(F32)
    bias = rng.standard_normal((length,)).astype(F32)
    mu = xsd.mean(axis=1, keepdims=True)
    var = ((xsd - mu) ** 2).mean(axis=1, keepdims=True)
    ln = (xsd - mu) / np.sqrt(var + 1e-5) * scale + bias
    m.node("LayerNormalization", ["xs", m.const("ln_scale", scale), m.const("ln_bias", bias)], "LayerNorm_xs", ln,
           "absrel", axis=-1, epsilon=1e-5)
    return m


def shapes(rng):
    m = Model("shapes")
    ones = np.ones((1, 1, 512, 512), F32)
    m.input("ones512", ones)
    m.node("ReduceSum", ["ones512", m.const("axes23", np.array([2, 3], np.int64))], "ReduceSum_ones512",
           np.full((1, 1, 1, 1), 262144.0), "sum", keepdims=1)
    last = rng.uniform(-1, 1, (1, 3, 300, 300)).astype(F32)
    last[..., -1, -1] = [5.0, 6.0, 7.0]
    m.input("last", last)
    m.node("ReduceMax", ["last"], "ReduceMax_last", np.array([[5.0, 6.0, 7.0]]), "exact", axes=[2, 3], keepdims=0)
    m.node("ReduceMin", ["last"], "ReduceMin_last", last.astype(np.float64).min(axis=(2, 3)), "exact", axes=[2, 3],
           keepdims=0)
    m.input("ones3", np.ones((300, 300, 2), F32))
    m.node("ReduceMean", ["ones3"], "ReduceMean_ones3", np.ones((2,)), "sum", axes=[0, 1], keepdims=0)
    l4 = rng.standard_normal((1, 40000)).astype(F32)
    m.input("l4", l4)
    m.node("ReduceLogSumExp", ["l4"], "ReduceLogSumExp_l4", lse(l4.astype(np.float64), 1), "abs", axes=[1],
           keepdims=0)
    w = rng.standard_normal((128, 70000)).astype(F32)
    wd = w.astype(np.float64)
    m.input("w", w)
    m.node("ArgMax", ["w"], "ArgMax_w", argext(w, 1, True, False), "exact", axis=1, keepdims=0)
    m.node("Softmax", ["w"], "Softmax_w", softmax(wd, 1), "rel", axis=1)
    m.node("ReduceSum", ["w", m.const("axes1", np.array([1], np.int64))], "ReduceSum_w", wd.sum(axis=1), "sumabs",
           keepdims=0)
    m.node("ReduceMean", ["w"], "ReduceMean_w", wd.mean(axis=1), "sumabs", axes=[1], keepdims=0)
    m.scales["ReduceSum_w"] = np.abs(wd).sum(axis=1)
    m.scales["ReduceMean_w"] = np.abs(wd).mean(axis=1)
    t = rng.standard_normal((70000, 4)).astype(F32)
    td = t.astype(np.float64)
    m.input("t", t)
    m.node("ArgMin", ["t"], "ArgMin_t", argext(t, 0, False, False), "exact", axis=0, keepdims=0)
    m.node("Softmax", ["t"], "Softmax_t", softmax(td, 0), "rel", axis=0)
    m.node("ReduceL2", ["t"], "ReduceL2_t", np.sqrt((td * td).sum(axis=0)), "sum", axes=[0], keepdims=0)
    m.node("ReduceMax", ["t"], "ReduceMax_t", td.max(axis=0), "exact", axes=[0], keepdims=0)
    s = rng.uniform(0.5, 1.5, (300, 4, 400)).astype(F32)
    sd = s.astype(np.float64)
    m.input("s", s)
    m.node("ReduceSumSquare", ["s"], "ReduceSumSquare_s", (sd * sd).sum(axis=(0, 2)), "sum", axes=[0, 2], keepdims=0)
    m.node("ReduceL1", ["s"], "ReduceL1_s", sd.sum(axis=(0, 2)), "sum", axes=[0, 2], keepdims=0)
    g = rng.uniform(0.5, 1.5, (1, 2, 1000, 1100)).astype(F32)
    m.input("g", g)
    m.node("GlobalAveragePool", ["g"], "GlobalAveragePool_g", g.astype(np.float64).mean(axis=(2, 3), keepdims=True),
           "sum")
    return m


def dynamic_row(rng, lengths):
    """A model with a symbolic row length, and one input set per length."""
    m = Model("dynamic")
    m.inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "L"]))
    for op, kind in (("ReduceLogSumExp", "abs"), ("ReduceMean", "sum"), ("ReduceMax", "exact")):
        m.node(op, ["x"], op, None, kind, axes=[1], keepdims=0)
    m.node("ReduceSum", ["x", m.const("axes1", np.array([1], np.int64))], "ReduceSum", None, "sum", keepdims=0)
    m.node("ArgMax", ["x"], "ArgMax", None, "exact", axis=1, keepdims=0)
    m.node("Softmax", ["x"], "Softmax", None, "rel", axis=1)
    m.node("Hardmax", ["x"], "Hardmax", None, "exact", axis=1)
    runs = []
    for length in lengths:
        x = rng.uniform(0.5, 1.5, (1, length)).astype(F32)
        d = x.astype(np.float64)
        refs = {"ReduceLogSumExp": lse(d, 1), "ReduceMean": d.mean(axis=1), "ReduceMax": d.max(axis=1),
                "ReduceSum": d.sum(axis=1), "ArgMax": argext(x, 1, True, False), "Softmax": softmax(d, 1),
                "Hardmax": hardmax(d, 1)}
        runs.append((f"L={length}", {"x": x}, refs))
    return m, runs


def by_value(rng):
    """ReduceSum with `axes` a graph input (read at run time)."""
    m = Model("by_value", opset=13)
    x = rng.uniform(0.5, 1.5, (3, 200000)).astype(F32)
    m.input("x", x)
    m.input("axes", np.array([1], np.int64), [1])
    m.node("ReduceSum", ["x", "axes"], "ReduceSum", None, "sum", keepdims=1)
    m.outputs[-1] = helper.make_tensor_value_info("ReduceSum", TensorProto.FLOAT, ["r0", "r1"])  # set by `axes`
    runs = []
    for a in (1, 0):
        runs.append((f"axes=[{a}]", {"x": x, "axes": np.array([a], np.int64)},
                     {"ReduceSum": x.astype(np.float64).sum(axis=a, keepdims=True)}))
    return m, runs


def compare(name, kind, got, ref, scale=None):
    """An error message, or None when got matches ref for this kind of output
    (scale: the sum of magnitudes behind each element of a "sumabs" output)."""
    ref = np.asarray(ref)
    if tuple(got.shape) != tuple(ref.shape):
        return f"{name}: shape {list(got.shape)} != {list(ref.shape)}"
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    if kind == "exact":
        bad = int(np.count_nonzero(g != r))
        return f"{name}: {bad} of {r.size} elements differ (first at {np.flatnonzero(g != r)[0]}: " \
               f"{g.flat[np.flatnonzero(g != r)[0]]} != {r.flat[np.flatnonzero(g != r)[0]]})" if bad else None
    err = np.abs(g - r)
    if kind == "sum":        # sums of positive values
        lim = 1e-4 * np.abs(r)
    elif kind == "sumabs":   # sums of signed values: relative to the sum of magnitudes
        lim = 1e-4 * np.abs(r) + 1e-5 * scale
    elif kind == "prod":
        lim = 1e-3 * np.abs(r)
    elif kind == "abs":
        lim = np.full_like(r, 1e-4)
    elif kind == "rel":
        lim = 1e-4 * np.abs(r) + 1e-30
    else:  # absrel
        lim = 1e-4 + 1e-4 * np.abs(r)
    if np.all(err <= lim):
        return None
    i = int(np.argmax(err - lim))
    return f"{name} ({kind}): |diff| {err.flat[i]:.3g} > {lim.flat[i]:.3g} at element {i} " \
           f"(got {g.flat[i]!r}, want {r.flat[i]!r}); {int(np.count_nonzero(err > lim))} of {r.size} elements off"


def run_bundle(build, bundle, inputs, out_dir, env):
    os.makedirs(out_dir, exist_ok=True)
    args = [os.path.join(build, "oaax-run"), "--model", os.path.join(bundle, "model.oinf"), "--output-dir", out_dir,
            "--arg", "validation=1"]
    for name, arr in inputs.items():
        path = os.path.join(out_dir, f"in_{name}.npy")
        np.save(path, arr)
        args += ["--input", f"{name}={path}"]
    subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)


def main():
    build, driver, root = sys.argv[1], sys.argv[2], sys.argv[3]
    env = dict(os.environ)
    if driver == "swiftshader":
        icd = os.path.join(root, "third_party", "swiftshader", "vk_swiftshader_icd.json")
        if not os.path.exists(icd):
            print("SKIP: SwiftShader is not installed (third_party/swiftshader)")
            sys.exit(77)
        env["VK_ICD_FILENAMES"] = icd
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    rng = np.random.default_rng(11)
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []  # (model, config or None, runs)
        for m in (long_row(300000, rng), long_row(2000000, rng), shapes(rng)):
            jobs.append((m, None, [("", m.data, {n: r for n, r, _ in m.checks})]))
        m, runs = dynamic_row(rng, [300000, 5000])
        jobs.append((m, {"input_shapes": {"x": [1, "L"]}, "dimensions": {"L": {"min": 1000, "max": 2000000}}}, runs))
        m, runs = by_value(rng)
        jobs.append((m, None, runs))
        for m, config, runs in jobs:
            start = time.time()
            path = os.path.join(tmp, m.name + ".onnx")
            m.save(path)
            bundle = os.path.join(tmp, m.name)
            cmd = [os.path.join(build, "oaax-vulkan-toolchain")]
            if config:
                cfg = os.path.join(tmp, m.name + ".json")
                with open(cfg, "w") as f:
                    json.dump(config, f)
                cmd += ["--config", cfg]
            conv = subprocess.run(cmd + [path, bundle], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if conv.returncode != 0:
                with open(os.path.join(bundle, "conversion-log.json")) as f:
                    sys.exit(f"{m.name}: conversion failed: {json.load(f)[-1]}")
            kinds = {n: k for n, _, k in m.checks}
            for label, inputs, refs in runs:
                out = os.path.join(tmp, f"{m.name}_out{runs.index((label, inputs, refs))}")
                run_bundle(build, bundle, inputs, out, env)
                for name, ref in refs.items():
                    got = np.load(os.path.join(out, name + ".npy"))
                    msg = compare(f"{m.name} {label} {name}".replace("  ", " "), kinds[name], got, ref,
                                  m.scales.get(name))
                    checked += 1
                    if msg:
                        failures.append(msg)
            print(f"{driver}: {m.name}: {len(runs)} run(s), {time.time() - start:.1f} s")
    print(f"{driver}: {checked - len(failures)}/{checked} outputs match the float64 reference")
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
