"""Compares output directories with ONNX Runtime's, element by element.

usage: compare_outputs.py LABEL REF_DIR GOT_DIR [REF_DIR GOT_DIR ...]
                          [--tol T] [--signed-zeros] [--bitwise]
                          [--approx-suffix S --approx-tol T2]

Each directory holds what tools/reference/ort_run.js (REF_DIR) and oaax-run
--outputs (GOT_DIR) write: manifest.json, a list of
{"name", "dtype", "shape", "file"} in output order, and one raw file per output
(little-endian, row-major). Every pair must list the same output names in the
same order; each output must have the same dtype and shape, and then:
  - integers and bools: exactly equal;
  - floats (default): NaN exactly where the reference has NaN, +inf and -inf
    exactly where it has them, and elsewhere |got - ref| <= T * (1 + |ref|)
    (T = --tol, default 1e-5); with --signed-zeros also the sign of every
    zero the reference gives (1 / x of it is +-inf);
  - floats with --bitwise: the same bits (any NaN matches any NaN), except the
    outputs whose names end with --approx-suffix, which are compared as in the
    default mode with T2 = --approx-tol (default 1e-6). For outputs whose exact
    value is defined (integer quotients, ties, index-valued floats).
Prints "LABEL: N/N outputs match ONNX Runtime" and exits 0, or exits 1 with a
message naming every output that differs (the first differing element and the
error).
"""

import argparse
import json
import sys

import numpy as np


def compare_one(name, a, b, tol, signed_zeros=False):
    """Returns None when float or integer arrays a (reference) and b agree."""
    if a.dtype.kind != "f":
        if np.array_equal(a, b):
            return None
        i = int(np.argmax(a != b))
        return f"{name}: {int(np.sum(a != b))} of {a.size} differ; element {i} is {b[i]}, ONNX Runtime {a[i]}"
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        i = int(np.argmax(nan != np.isnan(b)))
        return f"{name}: NaN where ONNX Runtime has none or the reverse; element {i} is {b[i]!r}, ONNX Runtime {a[i]!r}"
    inf = np.isinf(a) | np.isinf(b)
    if not np.array_equal(a[inf], b[inf]):
        i = int(np.flatnonzero(inf & (a != b))[0])
        return f"{name}: infinity where ONNX Runtime differs; element {i} is {b[i]!r}, ONNX Runtime {a[i]!r}"
    if signed_zeros:
        zero = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
        if zero.any():
            i = int(np.argmax(zero))
            return f"{name}: sign of zero differs; element {i} is {b[i]!r}, ONNX Runtime {a[i]!r}"
    nan = nan | inf
    rel = np.abs(a[~nan].astype(np.float64) - b[~nan]) / (1 + np.abs(a[~nan].astype(np.float64)))
    err = float(np.max(rel, initial=0.0))
    if err <= tol:
        return None
    i = int(np.flatnonzero(~nan)[int(np.argmax(rel))])
    return f"{name}: relative error {err:.3g} (tolerance {tol:g}); element {i} is {b[i]!r}, ONNX Runtime {a[i]!r}"


def compare_bitwise(name, a, b):
    """Returns None when float arrays a and b have the same bits (NaN matches NaN)."""
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]
    same = (a.view(bits) == b.view(bits)) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return None
    i = int(np.argmin(same))
    return f"{name}: {int((~same).sum())} of {a.size} differ; element {i} is {b[i]!r}, ONNX Runtime {a[i]!r}"


def parser():
    """The command line's parser (also how bench/gpu_check.py reads the
    options the ctests give)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("label")
    ap.add_argument("dirs", nargs="+", metavar="REF_DIR GOT_DIR")
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--signed-zeros", action="store_true")
    ap.add_argument("--bitwise", action="store_true")
    ap.add_argument("--approx-suffix", default=None)
    ap.add_argument("--approx-tol", type=float, default=1e-6)
    return ap


def compare_dirs(args):
    """Compares every REF_DIR GOT_DIR pair of args.dirs under args' options
    (parser()); returns (outputs compared, [one message per output that
    differs, naming its first differing element])."""
    bad, count = [], 0
    for ref_dir, got_dir in zip(args.dirs[::2], args.dirs[1::2]):
        ref = json.load(open(f"{ref_dir}/manifest.json"))
        got = json.load(open(f"{got_dir}/manifest.json"))
        if [r["name"] for r in ref] != [g["name"] for g in got]:
            bad.append(f"outputs {[g['name'] for g in got]}, ONNX Runtime {[r['name'] for r in ref]}")
            continue
        for r, g in zip(ref, got):
            count += 1
            if r["dtype"] != g["dtype"] or list(r["shape"]) != list(g["shape"]):
                bad.append(f"{r['name']}: {g['dtype']} {g['shape']}, ONNX Runtime {r['dtype']} {r['shape']}")
                continue
            a = np.fromfile(f"{ref_dir}/{r['file']}", dtype=r["dtype"])
            b = np.fromfile(f"{got_dir}/{g['file']}", dtype=g["dtype"])
            if a.shape != b.shape:
                bad.append(f"{r['name']}: {b.size} elements in the file, ONNX Runtime {a.size}")
                continue
            approx = args.approx_suffix is not None and r["name"].endswith(args.approx_suffix)
            if args.bitwise and a.dtype.kind == "f" and not approx:
                problem = compare_bitwise(r["name"], a, b)
            else:
                problem = compare_one(r["name"], a, b, args.approx_tol if approx else args.tol, args.signed_zeros)
            if problem:
                bad.append(problem)
    return count, bad


def main():
    ap = parser()
    args = ap.parse_args()
    if len(args.dirs) % 2:
        ap.error("directories come in pairs: REF_DIR GOT_DIR")
    count, bad = compare_dirs(args)
    if bad:
        sys.exit(f"{args.label}: " + "; ".join(bad))
    print(f"{args.label}: {count}/{count} outputs match ONNX Runtime")


if __name__ == "__main__":
    main()
