"""Unique over long inputs (the sort-based kernels) against NumPy's unique.

usage: unique_large.py BUILD_DIR DRIVER(lavapipe|swiftshader) [CASE ...]

Builds one-node ONNX Unique models with 100,000 and 1,000,003 elements
(int64 and float32 with many duplicates; the float inputs hold NaN, -0.0,
+0.0, subnormals and infinities) and a few thousand rows with axis=0, each
with sorted=1 and sorted=0, converts them with oaax-vulkan-toolchain, runs
them through libRuntimeLibrary.so with oaax-run on DRIVER and compares all
four outputs exactly (float values bit for bit) with np.unique, which the
ONNX reference implementation follows: sorted order ascending (NaNs equal
one another and sort last, -0.0 equals +0.0), each unique value taken from
its first occurrence; unsorted, the same groups in order of first
occurrence. Inputs this long are far past what one invocation may loop over
on llvmpipe, so a kernel that compared every element with every other in
one workgroup would be refused or wrong. Prints one line per case with its
run time; exits 1 when any case fails, 77 when numpy or onnx is missing.
"""
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper as h
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

build, driver = sys.argv[1], sys.argv[2]
if driver == "swiftshader" and not os.path.exists(os.environ.get("VK_ICD_FILENAMES", "")):
    print("SKIP: SwiftShader missing (VK_ICD_FILENAMES names no file); run scripts/setup.sh")
    sys.exit(77)
only = set(sys.argv[3:])
rng = np.random.default_rng(11)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def int_data(n, distinct):
    return rng.integers(-distinct, distinct, n).astype(np.int64)


def float_data(n, distinct):
    """Many duplicates, and the values whose order only the bits decide."""
    x = (rng.integers(-distinct, distinct, n) * 0.25).astype(np.float32)
    special = np.array([np.nan, -np.nan, np.float32(np.nan) * 0, 0.0, -0.0, 1e-40, -1e-40, 2e-40,
                        np.inf, -np.inf, 1e-45], np.float32)
    x[rng.integers(0, n, n // 50)] = special[rng.integers(0, len(special), n // 50)]
    nan_payload = np.array([0x7fc00001, 0xffc00002], np.uint32).view(np.float32)
    x[rng.integers(0, n, 8)] = nan_payload[rng.integers(0, 2, 8)]
    return x


def reference(x, axis, sorted_):
    """np.unique's four outputs (stable: index = first occurrence), reordered by first occurrence when unsorted."""
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        where = np.empty_like(order)
        where[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], where[inv]
    return y, idx, inv, cnt


def case(x, axis=None, sorted_=1):
    dt = F if x.dtype == np.float32 else I64
    attrs = {"sorted": sorted_}
    if axis is not None:
        attrs["axis"] = axis
    node = h.make_node("Unique", ["x"], ["y", "indices", "inverse_indices", "counts"], **attrs)
    yshape = [None] if axis is None else [None if d == axis else s for d, s in enumerate(x.shape)]
    length = x.size if axis is None else x.shape[axis]
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", dt, list(x.shape))],
                     [h.make_tensor_value_info("y", dt, yshape), h.make_tensor_value_info("indices", I64, [None]),
                      h.make_tensor_value_info("inverse_indices", I64, [length]),
                      h.make_tensor_value_info("counts", I64, [None])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
    m.ir_version = 7
    want = reference(x, axis, sorted_)

    def check(out):
        got = (out["y"], out["indices"], out["inverse_indices"], out["counts"])
        for name, a, b in zip(("y", "indices", "inverse_indices", "counts"), got, want):
            if a.shape != b.shape:
                return False, f"{name}: shape {a.shape}, want {b.shape}"
            bits_a = a.view(np.uint32) if a.dtype == np.float32 else a.astype(np.int64)
            bits_b = b.view(np.uint32) if b.dtype == np.float32 else b.astype(np.int64)
            bad = np.flatnonzero(bits_a.reshape(-1) != bits_b.reshape(-1))
            if len(bad):
                k = bad[0]
                return False, (f"{name}: {len(bad)} of {a.size} differ, first at {k}: "
                               f"{a.reshape(-1)[k]!r}, want {b.reshape(-1)[k]!r}")
        return True, f"{len(want[1])} unique of {length}"
    return m, {"x": x}, check


def cases():
    c = {}
    c["int64_100k_sorted"] = lambda: case(int_data(100000, 3000), sorted_=1)
    c["int64_1000003_unsorted"] = lambda: case(int_data(1000003, 40000), sorted_=0)
    c["float_100k_unsorted"] = lambda: case(float_data(100000, 2000), sorted_=0)
    c["float_1000003_sorted"] = lambda: case(float_data(1000003, 30000), sorted_=1)
    c["rows_axis0_sorted"] = lambda: case(int_data(3 * 4001, 3).reshape(4001, 3), axis=0, sorted_=1)
    c["rows_axis0_unsorted"] = lambda: case(int_data(2 * 5003, 4).reshape(5003, 2), axis=0, sorted_=0)
    return c


def run_case(tmp, name, make):
    m, inputs, check = make()
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    conv = subprocess.run([os.path.join(build, "oaax-vulkan-toolchain"), os.path.join(d, "model.onnx"),
                           os.path.join(d, "bundle")], capture_output=True, text=True)
    if conv.returncode != 0:
        log = os.path.join(d, "bundle", "conversion-log.json")
        return False, "conversion failed:\n" + conv.stdout[-2000:] + conv.stderr[-2000:] + \
            (open(log).read()[-1500:] if os.path.exists(log) else ""), 0.0
    args = [os.path.join(build, "oaax-run"), "--model", os.path.join(d, "bundle", "model.oinf"),
            "--output-dir", os.path.join(d, "out"), "--quiet", "--arg", "validation=1", "--arg", "load_warmup=0"]
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
    out = {f[:-4]: np.load(os.path.join(d, "out", f)) for f in os.listdir(os.path.join(d, "out"))
           if f.endswith(".npy")}
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
