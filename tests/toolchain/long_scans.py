"""Long-axis correctness of the scanning and selecting kernels.

usage: long_scans.py BUILD_DIR DRIVER(lavapipe|swiftshader) [CASE ...]

Builds one-node ONNX models whose axis lengths reach 300,000 and 2,000,000
(and the small shapes that exposed the driver limit: a [1, 70000] CumSum of
ones), converts each with oaax-vulkan-toolchain, runs it through
libRuntimeLibrary.so with oaax-run on DRIVER and compares the outputs with a
float64 / exact NumPy reference. Software drivers may stop an invocation's
loops early and carry on (llvmpipe after 65,535 iterations), so each case is
large enough that a kernel looping over the whole axis in one invocation
returns a wrong answer. Prints one line per case with its run time; exits 1
when any case fails, 77 when numpy or onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper as h, numpy_helper as nh
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

build, driver = sys.argv[1], sys.argv[2]
if driver == "swiftshader" and not os.path.exists(os.environ.get("VK_ICD_FILENAMES", "")):
    print("SKIP: SwiftShader missing (VK_ICD_FILENAMES names no file); run scripts/setup.sh")
    sys.exit(77)
only = set(sys.argv[3:])
rng = np.random.default_rng(5)
F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def model(node, inputs, outputs, inits=()):
    g = h.make_graph([node], "g", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def cumsum_case(shape, axis, dt=F, exclusive=0, reverse=0, data=None):
    x = data if data is not None else rng.uniform(0.0, 1.0, shape).astype(np.float32)
    node = h.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
    m = model(node, [vi("x", dt, shape)], [vi("y", dt, shape)], [nh.from_array(np.array(axis, np.int64), "axis")])
    x64 = x.astype(np.float64) if dt == F else x.astype(np.int64)
    xs = np.flip(x64, axis) if reverse else x64
    ref = np.cumsum(xs, axis=axis)
    if exclusive:
        ref = ref - xs
    ref = np.flip(ref, axis) if reverse else ref
    mag = np.flip(np.cumsum(np.flip(np.abs(x64), axis) if reverse else np.abs(x64), axis=axis), axis) \
        if reverse else np.cumsum(np.abs(x64), axis=axis)

    def check(out):
        y = out["y"]
        if dt != F:  # int32 wraps like int64 reduced modulo 2^32
            want = ref.astype(np.int64).astype(np.int32)
            bad = np.count_nonzero(y != want)
            return bad == 0, f"{bad} wrong"
        err = np.abs(y.astype(np.float64) - ref) / (mag + 1e-30)
        return bool(err.max() <= 1e-4), f"max error / running |sum| {err.max():.2e}"
    return m, {"x": x}, check


def topk_case(shape, k, largest=1, sorted_=1, values=None):
    n = shape[-1]
    if values is None:  # distinct float32 values
        values = (rng.permutation(n).astype(np.float64) * 0.25 - n * 0.1).astype(np.float32).reshape(shape)
    node = h.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=largest, sorted=sorted_)
    oshape = list(shape[:-1]) + [k]
    m = model(node, [vi("x", F, shape)], [vi("v", F, oshape), vi("i", I64, oshape)],
              [nh.from_array(np.array([k], np.int64), "k")])
    # Reference: order by value (largest or smallest first), ties by the lower index.
    key = -values if largest else values
    order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    ref_v = np.take_along_axis(values, order, -1)

    def check(out):
        v, i = out["v"], out["i"].astype(np.int64)
        if not sorted_:  # any order: compare as sets of indices
            i = np.sort(i, -1)
            want = np.sort(order, -1)
            ok = np.array_equal(i, want)
            return ok, f"{np.count_nonzero(i != want)} wrong indices (as sets)"
        bad_i = np.count_nonzero(i != order)
        bad_v = np.count_nonzero(v != ref_v)
        return bad_i == 0 and bad_v == 0, f"{bad_i} wrong indices, {bad_v} wrong values"
    return m, {"x": values}, check


def nonzero_case(shape, density):
    x = np.where(rng.uniform(0, 1, shape) < density, rng.uniform(-1, 1, shape), 0).astype(np.float32)
    node = h.make_node("NonZero", ["x"], ["y"])
    m = model(node, [vi("x", F, shape)], [vi("y", I64, [len(shape), None])])
    ref = np.array(np.nonzero(x), np.int64)

    def check(out):
        y = out["y"]
        ok = y.shape == ref.shape and np.array_equal(y, ref)
        return ok, f"shape {y.shape} (want {ref.shape}), {np.count_nonzero(y != ref) if y.shape == ref.shape else '-'} wrong"
    return m, {"x": x}, check


def compress_case(shape, axis, density):
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    cond = rng.uniform(0, 1, [shape[axis]]) < density
    node = h.make_node("Compress", ["x", "cond"], ["y"], axis=axis)
    oshape = list(shape)
    oshape[axis] = None
    m = model(node, [vi("x", F, shape), vi("cond", TensorProto.BOOL, [shape[axis]])], [vi("y", F, oshape)])
    ref = np.compress(cond, x, axis=axis)

    def check(out):
        y = out["y"]
        ok = y.shape == ref.shape and np.array_equal(y, ref)
        return ok, f"shape {y.shape} (want {ref.shape})"
    return m, {"x": x, "cond": cond}, check


def refused_case(node, inputs, outputs, text):
    """A model whose conversion must fail naming the loop budget and `text`."""
    return model(node, inputs, outputs), None, text


def dynamic(make, dims, config):
    """A case whose model has symbolic dimensions with ranges (config.json); run at the given input."""
    def f():
        m, inputs, check = make()
        for io in list(m.graph.input) + list(m.graph.output):
            for d, name in dims.get(io.name, {}).items():
                io.type.tensor_type.shape.dim[d].ClearField("dim_value")
                io.type.tensor_type.shape.dim[d].dim_param = name
        return m, inputs, check, config
    return f


def cases():
    c = {}
    c["cumsum_300k"] = lambda: cumsum_case([1, 300000], 1)
    c["cumsum_2m"] = lambda: cumsum_case([1, 2000000], 1)
    c["cumsum_ones_70k"] = lambda: cumsum_case([1, 70000], 1, data=np.ones([1, 70000], np.float32))
    c["cumsum_rev_excl_inner"] = lambda: cumsum_case([300000, 3], 0, exclusive=1, reverse=1,
                                                     data=rng.uniform(-1.0, 1.0, [300000, 3]).astype(np.float32))
    c["cumsum_int_4m"] = lambda: cumsum_case([1, 4200000], 1, dt=I32,
                                             data=rng.integers(-1000, 1000, [1, 4200000]).astype(np.int32))
    c["topk_300k"] = lambda: topk_case([1, 300000], 5000)
    c["topk_2m"] = lambda: topk_case([1, 2000000], 5000)
    c["topk_smallest_ties"] = lambda: topk_case(
        [2, 300000], 3000, largest=0,
        values=rng.integers(0, 50, [2, 300000]).astype(np.float32))
    c["topk_unsorted"] = lambda: topk_case([1, 300000], 777, sorted_=0)
    c["nonzero_300k"] = lambda: nonzero_case([1, 300000], 0.5)
    c["nonzero_2m"] = lambda: nonzero_case([2000, 1000], 0.9)
    c["nonzero_9m"] = lambda: nonzero_case([9000000], 0.5)
    c["compress_2m"] = lambda: compress_case([2000000], 0, 0.5)
    c["compress_inner"] = lambda: compress_case([4, 300000, 2], 1, 0.3)
    c["compress_wide_slabs"] = lambda: compress_case([4, 1024, 4200], 1, 0.9)
    # Dynamic axis lengths: kernels planned at the range maximum, run below it.
    c["cumsum_dynamic"] = dynamic(lambda: cumsum_case([1, 300001], 1), {"x": {1: "N"}, "y": {1: "N"}},
                                  {"dimensions": {"N": {"min": 1, "max": 2500000}}})
    c["topk_dynamic"] = dynamic(lambda: topk_case([1, 300001], 5000), {"x": {1: "N"}},
                                {"dimensions": {"N": {"min": 5000, "max": 2000000}}})
    # Per-invocation loops no split bounds: refused at conversion.
    c["matmul_k300k_refused"] = lambda: refused_case(
        h.make_node("MatMul", ["a", "b"], ["y"]), [vi("a", F, [1, 300000]), vi("b", F, [300000, 3])],
        [vi("y", F, [1, 3])], "K = 300000")
    c["unique_wide_slices_refused"] = lambda: refused_case(
        h.make_node("Unique", ["x"], ["y"], axis=0), [vi("x", F, [3000, 20000])], [vi("y", F, [None, 20000])],
        "(Unique): slices of 20000 elements")
    return c


def run_case(tmp, name, make):
    m, inputs, check, *config = make()
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    args = [os.path.join(build, "oaax-vulkan-toolchain")]
    if config:
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config[0], f)
        args += ["--config", os.path.join(d, "config.json")]
    conv = subprocess.run(args + [os.path.join(d, "model.onnx"), os.path.join(d, "bundle")],
                          capture_output=True, text=True)
    if inputs is None:  # must be refused: exit 1, no bundle, the reason in conversion-log.json
        log = open(os.path.join(d, "bundle", "conversion-log.json")).read() \
            if os.path.exists(os.path.join(d, "bundle", "conversion-log.json")) else ""
        ok = conv.returncode == 1 and not os.path.exists(os.path.join(d, "bundle", "model.oinf")) and \
            "Loop budget" in log and check in log
        return ok, f"conversion exit {conv.returncode}" + (", refused naming the loop budget" if ok else
                                                          ": not refused as expected\n" + log[-1500:]), 0.0
    if conv.returncode != 0:
        log = os.path.join(d, "bundle", "conversion-log.json")
        return False, "conversion failed:\n" + conv.stdout[-2000:] + conv.stderr[-2000:] + \
            (open(log).read()[-1500:] if os.path.exists(log) else ""), 0.0
    args = [os.path.join(build, "oaax-run"), "--model", os.path.join(d, "bundle", "model.oinf"),
            "--output-dir", os.path.join(d, "out"), "--quiet", "--arg", "validation=1"]
    for k, v in inputs.items():
        np.save(os.path.join(d, k + ".npy"), v)
        args += ["--input", f"{k}={os.path.join(d, k + '.npy')}"]
    t0 = time.monotonic()
    run = subprocess.run(args, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if run.returncode != 0:
        return False, "oaax-run failed:\n" + run.stdout[-2000:] + run.stderr[-2000:], dt
    if "VUID-" in run.stderr or "Validation Error" in run.stderr:
        return False, "validation layer message:\n" + run.stderr[-3000:], dt
    out = {}
    for f in os.listdir(os.path.join(d, "out")):
        if f.endswith(".npy"):
            out[f[:-4]] = np.load(os.path.join(d, "out", f))
    ok, msg = check(out)
    return ok, msg, dt


def main():
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in cases().items():
            if only and name not in only:
                continue
            ok, msg, dt = run_case(tmp, name, make)
            print(f"{'ok  ' if ok else 'FAIL'} {driver}: {name}: {msg} ({dt:.2f} s)", flush=True)
            if not ok:
                failed.append(name)
    if failed:
        print(f"FAILED on {driver}: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
