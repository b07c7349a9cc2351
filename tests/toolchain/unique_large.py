"""Unique over long inputs (the sort-based kernels) against NumPy's unique.

usage: unique_large.py BUILD_DIR DRIVER(lavapipe|swiftshader) [CASE ...]

Builds one ONNX model of Unique nodes (each its own input) over 100,000
and 1,000,003 elements (int64 and float32 with many duplicates; the float
inputs hold NaN, -0.0, +0.0, subnormals and infinities) and a few thousand
rows with axis=0, with sorted=1 and sorted=0, converts it with
oaax-vulkan-toolchain, runs it once through libRuntimeLibrary.so with
oaax-run on DRIVER and compares all four outputs of every node exactly
(float values bit for bit) with np.unique, which the ONNX reference
implementation follows: sorted order ascending (NaNs equal one another and
sort last, -0.0 equals +0.0), each unique value taken from its first
occurrence; unsorted, the same groups in order of first occurrence. Inputs
this long are far past what one invocation may loop over on llvmpipe, so a
kernel that compared every element with every other in one workgroup would
be refused or wrong. Prints one line per node and the run time; exits 1
when any node's outputs differ, 77 when numpy or onnx is missing.
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


def case(name, x, axis=None, sorted_=1):
    """One Unique node reading input NAME_x, its outputs NAME_y, NAME_indices, NAME_inverse_indices and
    NAME_counts, and the check of them."""
    dt = F if x.dtype == np.float32 else I64
    attrs = {"sorted": sorted_}
    if axis is not None:
        attrs["axis"] = axis
    outs = [f"{name}_{o}" for o in ("y", "indices", "inverse_indices", "counts")]
    node = h.make_node("Unique", [f"{name}_x"], outs, name=name, **attrs)
    yshape = [None] if axis is None else [None if d == axis else s for d, s in enumerate(x.shape)]
    length = x.size if axis is None else x.shape[axis]
    vis = [h.make_tensor_value_info(outs[0], dt, yshape), h.make_tensor_value_info(outs[1], I64, [None]),
           h.make_tensor_value_info(outs[2], I64, [length]), h.make_tensor_value_info(outs[3], I64, [None])]
    want = reference(x, axis, sorted_)

    def check(out):
        for o, b in zip(outs, want):
            a = out[o]
            if a.shape != b.shape:
                return False, f"{o}: shape {a.shape}, want {b.shape}"
            bits_a = a.view(np.uint32) if a.dtype == np.float32 else a.astype(np.int64)
            bits_b = b.view(np.uint32) if b.dtype == np.float32 else b.astype(np.int64)
            bad = np.flatnonzero(bits_a.reshape(-1) != bits_b.reshape(-1))
            if len(bad):
                k = bad[0]
                return False, (f"{o}: {len(bad)} of {a.size} differ, first at {k}: "
                               f"{a.reshape(-1)[k]!r}, want {b.reshape(-1)[k]!r}")
        return True, f"{len(want[1])} unique of {length}"
    return node, h.make_tensor_value_info(f"{name}_x", dt, list(x.shape)), vis, {f"{name}_x": x}, check


def cases():
    return [
        case("int64_100k_sorted", int_data(100000, 3000), sorted_=1),
        case("int64_1000003_unsorted", int_data(1000003, 40000), sorted_=0),
        case("float_100k_unsorted", float_data(100000, 2000), sorted_=0),
        case("float_1000003_sorted", float_data(1000003, 30000), sorted_=1),
        case("rows_axis0_sorted", int_data(3 * 4001, 3).reshape(4001, 3), axis=0, sorted_=1),
        case("rows_axis0_unsorted", int_data(2 * 5003, 4).reshape(5003, 2), axis=0, sorted_=0),
    ]


def run(tmp, selected):
    """All selected cases as the nodes of one model: one conversion, one inference.
    Returns (per-case (name, ok, message) list, or an error text; the run's seconds)."""
    g = h.make_graph([c[0] for c in selected], "g", [c[1] for c in selected], [v for c in selected for v in c[2]])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
    m.ir_version = 7
    onnx.save(m, os.path.join(tmp, "model.onnx"))
    conv = subprocess.run([os.path.join(build, "oaax-vulkan-toolchain"), os.path.join(tmp, "model.onnx"),
                           os.path.join(tmp, "bundle")], capture_output=True, text=True)
    if conv.returncode != 0:
        log = os.path.join(tmp, "bundle", "conversion-log.json")
        return "conversion failed:\n" + conv.stdout[-2000:] + conv.stderr[-2000:] + \
            (open(log).read()[-1500:] if os.path.exists(log) else ""), 0.0
    args = [os.path.join(build, "oaax-run"), "--model", os.path.join(tmp, "bundle", "model.oinf"),
            "--output-dir", os.path.join(tmp, "out"), "--quiet", "--arg", "validation=1", "--arg", "load_warmup=0"]
    for c in selected:
        for k, v in c[3].items():
            np.save(os.path.join(tmp, k + ".npy"), v)
            args += ["--input", f"{k}={os.path.join(tmp, k + '.npy')}"]
    t0 = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        return "oaax-run failed:\n" + r.stdout[-2000:] + r.stderr[-2000:], dt
    if "VUID-" in r.stderr or "Validation Error" in r.stderr:
        return "validation layer message:\n" + r.stderr[-3000:], dt
    out = {f[:-4]: np.load(os.path.join(tmp, "out", f)) for f in os.listdir(os.path.join(tmp, "out"))
           if f.endswith(".npy")}
    return [(c[0].name, *c[4](out)) for c in selected], dt


def main():
    selected = [c for c in cases() if not only or c[0].name in only]
    with tempfile.TemporaryDirectory() as tmp:
        results, dt = run(tmp, selected)
    if isinstance(results, str):
        print(f"FAIL {driver}: {results}")
        return 1
    failed = [name for name, ok, _ in results if not ok]
    for name, ok, msg in results:
        print(f"{'ok  ' if ok else 'FAIL'} {driver}: {name}: {msg}", flush=True)
    print(f"{driver}: {len(results)} Unique nodes in one inference, {dt:.2f} s for the run")
    if failed:
        print(f"FAILED on {driver}: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
