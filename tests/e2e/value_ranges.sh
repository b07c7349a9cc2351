#!/usr/bin/env bash
# End to end, named run-time values with ranges: config.json "input_values"
# names every element of an integer graph input ({"input_values": {"repeats":
# ["r0", "r1"]}}), or of a float one that is a Resize / Upsample `scales` or a
# OneHot `depth` (bundle feature float_value_symbols), and "dimensions" gives
# each name a range (a float's in its own units, fractions allowed); the
# toolchain compiles one bundle planned at the maxima, and the runtime reads
# the values from the input's data at every send_input, checks each against
# its range and the op's rules, and computes the output shapes per inference.
# A float's value is the size it sets, floor(dimension x scale) in double
# (floor(depth) for OneHot), checked against [floor(min x dimension),
# floor(max x dimension)]. Thirty-one models (one node, or two for the Range ones), each converted once
# with such a config:
#   Tile `repeats` (int64 [2], r0 in [1, 3], r1 in [1, 4]) of a [2,3] tensor, opset 13;
#   Expand `shape` (int64 [3], s0 in [1, 4], s1 in [1, 3], s2 in [1, 5]) of a
#   [3,1] tensor, opset 13 (s1 must be 1 or 3 to broadcast);
#   ConstantOfShape (value 2.5 float) of `input` (int64 [2], each in [1, 5]), opset 9;
#   Pad `pads` (int64 [4]) of a [3,4] tensor, opset 13: mode constant with
#   constant_value 1.5 (an initializer) and every pad in [-1, 2] (a negative
#   pad crops), modes edge and reflect with every pad in [0, 2];
#   OneHot `depth` (int64, d in [1, 6]) of int64 [4] indices (negative ones
#   and ones outside [-depth, depth) among them), opset 11: axis -1 with a
#   scalar depth and values [0, 1] an initializer, axis 0 with a [1] depth and
#   values [-1.5, 2] a graph input; and axis -1 with a float [1] depth, d in
#   [2.0, 8.0] (5.7 is a depth of 5, as ONNX casts it to int64);
#   HannWindow, HammingWindow, BlackmanWindow `size` (int64 scalar, n in
#   [1, 12]), periodic=1 and periodic=0, opset 17;
#   Resize `sizes` (int64 [4]: [1, 1], [1, 1], [1, 9], [1, 11]) of a [1,1,4,5]
#   tensor, opset 13, modes nearest (default attributes), linear and cubic;
#   Resize `scales` (float [4], empty roi: n, c in [1, 1], h in [0.5, 2.5],
#   w in [0.4, 3.0], i.e. sizes [2, 10] and [2, 15]) of a [1,1,4,5] tensor,
#   opset 13, modes nearest (default attributes), linear, cubic, and linear
#   with align_corners; among the values fractional sizes (0.6 x 4, 1.3 x 5,
#   2.2 x 4; 1.4 as a float32 is 1.39999998, so 1.4 x 5 gives 6) and 2.6 /
#   3.1, above the maxima in the float's units but at the maximum sizes, which
#   is what is checked; and linear of a [1,2,4,5] tensor with c in [0.5, 2.0]
#   (sizes [1, 4]), where only a channel scale of 1 passes the guard;
#   Upsample `scales` (float [4], mode nearest: n, c in [1, 1], h, w in
#   [1, 3]) of a [1,1,2,3] tensor, opset 9;
#   Range(start, Cast(n) to float, delta) with float initializers start 0 and
#   delta 1 (n in [1, 30]) or start 2 and delta 3 (n in [3, 40]), opset 11
#   (the window functions' ONNX function bodies build their phases this way;
#   a second node, the Cast, before the one under test);
#   Range(start, 20, 0.25) with a float start in [-3, 5] (read as an exact
#   multiple of 2^-45: 1e-9 is refused, naming the resolution), opset 11;
#   sizes that shrink as the value grows, planned at their largest over the
#   range: Range(20, limit, -3) (int64, limit in [1, 12]), and STFT of a
#   [1, 64, 1] signal with a 16-point window, frame_step in [1, 12] (numpy
#   rfft of each windowed frame, rtol/atol 1e-4), opset 17;
#   MaxUnpool (kernel 2, stride 2, the backend test's indices) of a
#   [1, 1, 2, 2] tensor, output_shape [1, 1, h, w] with h, w in [4, 7],
#   opset 11;
#   MelWeightMatrix, num_mel_bins in [1, 16] (dft_length 32, sample_rate
#   8000, 100 to 3900 Hz initializers; weights computed on the device in
#   float32, the reference the ONNX reference formula in float64, rtol 1e-5,
#   atol 1e-6), opset 17.
# Each bundle runs through libRuntimeLibrary.so (oaax-run, validation layer
# on) on lavapipe and SwiftShader with several value sets per model (each
# range's minimum, its maximum and values inside). Every output's dtype and
# shape (byte size too) must equal the reference's exactly; the data must
# equal it exactly (np.array_equal) for Tile, Expand, ConstantOfShape, Pad
# (numpy.pad, after cropping for negative pads) and OneHot (numpy: an index i
# in [-depth, depth) is "on" at i mod depth, others all "off"), and be
# allclose to it for the windows (rtol 1e-3, atol 2e-4, the conformance
# runner's tolerance: the device computes cos in float32 with the GLSL
# built-in, whose precision Vulkan bounds only by 2^-11 absolute, and
# SwiftShader is ~1e-4 off; the reference is the formulas of
# onnx/backend/test/case/node/*window.py with pi, not their 3.1415, in
# float64; a symmetric window of one element, 0/0 in that formula, is taken as
# a0 - a1 + a2, i.e. cos 0, as the toolchain documents) and for Resize and
# Upsample (rtol 1e-4, atol 1e-5: interpolate_nd with nearest_coeffs /
# linear_coeffs / cubic_coeffs of onnx/backend/test/case/node/resize.py,
# half_pixel or align_corners, given the sizes or the float32 scales, whose
# output size is the float64 floor(scale x dimension); align_corners with
# scales is computed for that output size, as ONNX Runtime divides by the
# output length, not by scale x dimension as the reference; Upsample: input
# floor(o / scale) for output o, in float64). Invalid values (an element
# outside its named range, NaN and infinite floats, an outer Resize scale of 2
# where [1, 1], an Expand target that does not broadcast, a channel scale
# other than 1) must make send_input fail with a message naming the element
# and its range, or the rule. Needs only numpy and onnx in PYTHON.
# usage: value_ranges.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
. "$root/tests/e2e/run_cases.sh"
e2e_setup "$py"
# Models with their config.json, and one input directory per value set (with
# want.npz, the reference outputs, for valid sets). cases.txt lists "MODEL DIR"
# for valid sets and "MODEL DIR EXPECTED-MESSAGE" for invalid ones; models.txt
# the models; meta.json each model's value input and tolerance.
"$py" - "$tmp" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h
from onnx.backend.test.case.node.resize import interpolate_nd, nearest_coeffs, linear_coeffs, cubic_coeffs
out = sys.argv[1]
rng = np.random.default_rng(5)
F, I64 = TensorProto.FLOAT, TensorProto.INT64
NP = {F: np.float32, I64: np.int64}
def pad(x, p, mode, cv=0.0):
    r = x.ndim
    b, e = p[:r], p[r:]
    x = x[tuple(slice(max(-b[i], 0), x.shape[i] - max(-e[i], 0)) for i in range(r))]  # negative pads crop
    kw = {"constant_values": cv} if mode == "constant" else {}
    return np.pad(x, [(max(b[i], 0), max(e[i], 0)) for i in range(r)], mode=mode, **kw)
def onehot(ind, depth, values, axis):
    on = (ind >= -depth) & (ind < depth)
    hit = (np.arange(depth) == np.where(ind < 0, ind + depth, ind)[..., None]) & on[..., None]
    return np.moveaxis(np.where(hit, values[1], values[0]).astype(np.float32), -1, axis)
COEFFS = {"HannWindow": (0.5, 0.5, 0.0), "HammingWindow": (25 / 46, 1 - 25 / 46, 0.0),
          "BlackmanWindow": (0.42, 0.5, 0.08)}
def window(op, n, periodic):
    a0, a1, a2 = COEFFS[op]
    N = n if periodic else n - 1
    ph = 2 * np.pi * np.arange(n, dtype=np.float64) / N if N > 0 else np.zeros(n)  # n = 1 symmetric: cos 0
    return (a0 - a1 * np.cos(ph) + a2 * np.cos(2 * ph)).astype(np.float32)
RESIZE = {"nearest": nearest_coeffs, "linear": linear_coeffs, "cubic": cubic_coeffs}
def resize(x, sizes, mode):
    return interpolate_nd(x, RESIZE[mode], output_size=list(sizes)).astype(np.float32)
def resize_scales(x, scales, mode, ctm):
    # The reference's output size is (scales * shape).astype(int): the float32 scales times the dimensions in
    # float64, floored (1.4 as a float32 is 1.39999998, so 1.4 x 5 gives 6).
    kw = {} if ctm is None else {"coordinate_transformation_mode": ctm}
    if ctm == "align_corners":  # ONNX Runtime's align_corners divides by the output length - 1
        size = (np.array(scales, np.float32).astype(np.float64) * np.array(x.shape)).astype(int)
        return interpolate_nd(x, RESIZE[mode], output_size=list(size), **kw).astype(np.float32)
    return interpolate_nd(x, RESIZE[mode], scale_factors=np.array(scales, np.float32), **kw).astype(np.float32)
def upsample(x, scales):
    # Upsample-9 nearest: output index o reads input floor(o / scale) (asymmetric, floor), float32 scales.
    s = np.array(scales, np.float32).astype(np.float64)
    out = (s * np.array(x.shape)).astype(np.int64)
    idx = [np.minimum(np.floor(np.arange(o) / k).astype(np.int64), d - 1) for o, k, d in zip(out, s, x.shape)]
    return x[np.ix_(*idx)]
# name: dict of op, attrs, opset, data (graph inputs fed by random data: [(name, type, shape)]), value
# (the integer input: name, type, shape), node (the node's inputs; default data + value), init
# (initializers), names and ranges (the config's names for the value's elements and their [min, max]),
# ref (reference outputs from the data inputs and the values), tol ((rtol, atol) or None: exact).
models = {
    "tile": dict(op="Tile", opset=13, data=[("x", F, [2, 3])], value=("repeats", I64, [2]),
                 names=["r0", "r1"], ranges=[(1, 3), (1, 4)], ref=lambda x, v: np.tile(x, v)),
    "expand": dict(op="Expand", opset=13, data=[("x", F, [3, 1])], value=("shape", I64, [3]),
                   names=["s0", "s1", "s2"], ranges=[(1, 4), (1, 3), (1, 5)],
                   ref=lambda x, v: np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(v))).copy()),
    "constant_of_shape": dict(op="ConstantOfShape", opset=9, attrs={"value": h.make_tensor("value", F, [1], [2.5])},
                              data=[], value=("input", I64, [2]), names=["c0", "c1"], ranges=[(1, 5), (1, 5)],
                              ref=lambda v: np.full(v, 2.5, np.float32)),
    "pad_constant": dict(op="Pad", opset=13, attrs={"mode": "constant"}, data=[("x", F, [3, 4])],
                         value=("pads", I64, [4]), node=["x", "pads", "cv"],
                         init=[h.make_tensor("cv", F, [], [1.5])], names=["p0", "p1", "p2", "p3"],
                         ranges=[(-1, 2)] * 4, ref=lambda x, v: pad(x, v, "constant", 1.5)),
    "pad_edge": dict(op="Pad", opset=13, attrs={"mode": "edge"}, data=[("x", F, [3, 4])], value=("pads", I64, [4]),
                     names=["p0", "p1", "p2", "p3"], ranges=[(0, 2)] * 4, ref=lambda x, v: pad(x, v, "edge")),
    "pad_reflect": dict(op="Pad", opset=13, attrs={"mode": "reflect"}, data=[("x", F, [3, 4])],
                        value=("pads", I64, [4]), names=["p0", "p1", "p2", "p3"], ranges=[(0, 2)] * 4,
                        ref=lambda x, v: pad(x, v, "reflect")),
    "onehot": dict(op="OneHot", opset=11, attrs={"axis": -1}, data=[("indices", I64, [4])], value=("depth", I64, []),
                   node=["indices", "depth", "values"], init=[h.make_tensor("values", F, [2], [0.0, 1.0])],
                   names=["d"], ranges=[(1, 6)], ref=lambda i, v: onehot(i, v, [0.0, 1.0], -1)),
    "onehot_axis0": dict(op="OneHot", opset=11, attrs={"axis": 0}, data=[("indices", I64, [4]), ("values", F, [2])],
                         value=("depth", I64, [1]), node=["indices", "depth", "values"], names=["d"],
                         ranges=[(1, 6)], ref=lambda i, vals, v: onehot(i, v[0], vals, 0)),
}
for op in COEFFS:
    for periodic in (1, 0):
        models[f"{op.lower()}{'' if periodic else '_symmetric'}"] = dict(
            op=op, opset=17, attrs={"periodic": periodic}, data=[], value=("size", I64, []), names=["n"],
            ranges=[(1, 12)], ref=lambda v, op=op, p=periodic: window(op, v, p), tol=(1e-3, 2e-4))
for mode in RESIZE:
    models[f"resize_{mode}"] = dict(
        op="Resize", opset=13, attrs={} if mode == "nearest" else {"mode": mode}, data=[("x", F, [1, 1, 4, 5])],
        value=("sizes", I64, [4]), node=["x", "", "", "sizes"], names=["n", "c", "h", "w"],
        ranges=[(1, 1), (1, 1), (1, 9), (1, 11)], ref=lambda x, v, m=mode: resize(x, v, m), tol=(1e-4, 1e-5))
SIZES = [m for m in models if m.startswith("resize_")]
# Float run-time values (feature float_value_symbols): ranges in the float's units; the runtime checks the size
# floor(dimension x scale) (floor(depth) for OneHot) against [floor(min x dimension), floor(max x dimension)].
for mode, ctm in [("nearest", None), ("linear", None), ("cubic", None), ("linear", "align_corners")]:
    attrs = {} if mode == "nearest" else {"mode": mode}
    if ctm:
        attrs["coordinate_transformation_mode"] = ctm
    models[f"resize_scales_{ctm or mode}"] = dict(
        op="Resize", opset=13, attrs=attrs, data=[("x", F, [1, 1, 4, 5])], value=("scales", F, [4]),
        node=["x", "", "scales"], names=["n", "c", "h", "w"], ranges=[(1, 1), (1, 1), (0.5, 2.5), (0.4, 3.0)],
        ref=lambda x, v, m=mode, c=ctm: resize_scales(x, v, m, c), tol=(1e-4, 1e-5))
# Two channels and a range for the channel scale: a channel scale other than 1 must fail the guard.
models["resize_scales_outer"] = dict(
    op="Resize", opset=13, attrs={"mode": "linear"}, data=[("x", F, [1, 2, 4, 5])], value=("scales", F, [4]),
    node=["x", "", "scales"], names=["n", "c", "h", "w"], ranges=[(1, 1), (0.5, 2.0), (0.5, 2.5), (0.4, 3.0)],
    ref=lambda x, v: resize_scales(x, v, "linear", None), tol=(1e-4, 1e-5))
models["upsample"] = dict(
    op="Upsample", opset=9, attrs={"mode": "nearest"}, data=[("x", F, [1, 1, 2, 3])], value=("scales", F, [4]),
    names=["n", "c", "h", "w"], ranges=[(1, 1), (1, 1), (1, 3), (1, 3)], ref=lambda x, v: upsample(x, v),
    tol=(1e-4, 1e-5))
models["onehot_float"] = dict(
    op="OneHot", opset=11, attrs={"axis": -1}, data=[("indices", I64, [4])], value=("depth", F, [1]),
    node=["indices", "depth", "values"], init=[h.make_tensor("values", F, [2], [0.0, 1.0])], names=["d"],
    ranges=[(2.0, 8.0)], ref=lambda i, v: onehot(i, int(np.floor(np.float32(v[0]))), [0.0, 1.0], -1))
# A float Range whose limit is a cast integer value (the window functions' ONNX bodies): the length is an
# expression of the value, the elements computed on the device.
for name, start, delta, lo, hi in [("range_float", 0.0, 1.0, 1, 30), ("range_float_step", 2.0, 3.0, 3, 40)]:
    models[name] = dict(
        op="Range", opset=11, data=[], value=("n", I64, []), pre=[h.make_node("Cast", ["n"], ["n_f"], to=F)],
        node=["start", "n_f", "delta"], init=[h.make_tensor("start", F, [], [start]), h.make_tensor("delta", F, [], [delta])],
        names=["n"], ranges=[(lo, hi)],
        ref=lambda v, s=start, d=delta: np.arange(s, float(v), d, dtype=np.float64).astype(np.float32))
# A float Range bound read at run time (feature exact_value_symbols): start in [-3, 5] with limit 20 and delta
# 0.25 (92 elements at -3, 60 at 5); the bounds are read as multiples of 2^-45 (the largest bound is 20 < 2^5).
models["range_float_bound"] = dict(
    op="Range", opset=11, data=[], value=("start", F, []), node=["start", "limit", "delta"],
    init=[h.make_tensor("limit", F, [], [20.0]), h.make_tensor("delta", F, [], [0.25])], names=["s"],
    ranges=[(-3.0, 5.0)],
    ref=lambda v: np.arange(np.float32(v), 20.0, 0.25, dtype=np.float64).astype(np.float32))
# Sizes that shrink as the value grows (planned at their largest over the range, not at the maximum):
# Range(20, limit, -3) with limit in [1, 12] (7 elements at 1, 3 at 12), STFT frames with frame_step in
# [1, 12] of a [1, 64, 1] signal and a 16-point window.
models["range_negative_delta"] = dict(
    op="Range", opset=11, data=[], value=("limit", I64, []), node=["start", "limit", "delta"],
    init=[h.make_tensor("start", I64, [], [20]), h.make_tensor("delta", I64, [], [-3])], names=["l"], ranges=[(1, 12)],
    ref=lambda v: np.arange(20, int(v), -3, dtype=np.int64), out_type=I64)
STFT_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(np.float32)
def stft(x, step):
    n, L = len(STFT_WINDOW), x.shape[1]
    frames = [np.fft.rfft(x[0, f * step:f * step + n, 0].astype(np.float64) * STFT_WINDOW) for f in range((L - n) // step + 1)]
    return np.stack([np.stack([f.real, f.imag], -1) for f in frames])[None].astype(np.float32)
models["stft"] = dict(
    op="STFT", opset=17, data=[("x", F, [1, 64, 1])], value=("frame_step", I64, []), node=["x", "frame_step", "window"],
    init=[h.make_tensor("window", F, [16], STFT_WINDOW.tolist())], names=["s"], ranges=[(1, 12)],
    ref=lambda x, v: stft(x, int(v)), tol=(1e-4, 1e-4))
# MaxUnpool (kernel 2, stride 2) of a [1, 1, 2, 2] tensor at the indices of the backend test, output_shape read at
# run time: spatial sizes in [4, 7] pad the unpooled [4, 4] (floor(extra / 2) before, as ONNX Runtime does).
UNPOOL_I = np.array([5, 7, 13, 15], np.int64).reshape(1, 1, 2, 2)
def unpool(x, v):
    y = np.zeros(v, np.float32)
    for k, idx in enumerate(UNPOOL_I.ravel()):
        y[0, 0, idx % 16 // 4 + (v[2] - 4) // 2, idx % 4 + (v[3] - 4) // 2] = x.ravel()[k]
    return y
models["maxunpool"] = dict(
    op="MaxUnpool", opset=11, attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, data=[("x", F, [1, 1, 2, 2])],
    value=("output_shape", I64, [4]), node=["x", "i", "output_shape"],
    init=[h.make_tensor("i", I64, [1, 1, 2, 2], UNPOOL_I.ravel().tolist())], names=["n", "c", "h", "w"],
    ranges=[(1, 1), (1, 1), (4, 7), (4, 7)], ref=lambda x, v: unpool(x, v))
# MelWeightMatrix with num_mel_bins read at run time (the other inputs initializers): the weights are computed on
# the device in float32; the reference is the formula of the ONNX reference in float64 (its band edges are at
# least 0.019 from an integer for these values, so the floors agree).
def mel_weights(mel, dft=32, rate=8000, lo=100.0, hi=3900.0):
    to_mel = lambda hz: 2595 * np.log10(1 + hz / 700)
    step = (to_mel(hi) - to_mel(lo)) / (mel + 2)
    e = [int(np.floor((dft + 1) * 700 * (10 ** ((i * step + to_mel(lo)) / 2595) - 1) / rate)) for i in range(mel + 2)]
    w = np.zeros((dft // 2 + 1, mel), np.float32)
    for i in range(mel):
        l, c, r = e[i], e[i + 1], e[i + 2]
        if c == l:
            w[c, i] = 1
        else:
            w[l:c + 1, i] = (np.arange(l, c + 1) - l) / (c - l)
        if r > c:
            w[c:r, i] = (r - np.arange(c, r)) / (r - c)
    return w
models["mel_weight_matrix"] = dict(
    op="MelWeightMatrix", opset=17, data=[], value=("num_mel_bins", I64, []),
    node=["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"],
    init=[h.make_tensor("dft_length", I64, [], [32]), h.make_tensor("sample_rate", I64, [], [8000]),
          h.make_tensor("lower_edge_hertz", F, [], [100.0]), h.make_tensor("upper_edge_hertz", F, [], [3900.0])],
    names=["m"], ranges=[(1, 16)], ref=lambda v: mel_weights(int(v)), tol=(1e-5, 1e-6))
SCALES = [m for m in models if m.startswith("resize_scales_") and m != "resize_scales_outer"]
WINDOW_SETS = [1, 12, 2, 5, 7]
RESIZE_SETS = [[1, 1, 1, 1], [1, 1, 9, 11], [1, 1, 4, 5], [1, 1, 8, 10], [1, 1, 2, 3], [1, 1, 7, 1], [1, 1, 3, 11]]
# Both ends of each range, sizes inside, fractional sizes (0.6 x 4 = 2.4, 1.3 x 5 = 6.5, 2.2 x 4 = 8.8), and
# 2.6 / 3.1, above the ranges' maxima in the float's units but at the maximum sizes (10, 15), which is what is
# checked.
SCALE_SETS = [[1, 1, 0.5, 0.4], [1, 1, 2.5, 3.0], [1, 1, 1, 1], [1, 1, 0.6, 1.3], [1, 1, 2.2, 1.4], [1, 1, 1.3, 2.2],
              [1, 1, 0.75, 0.6], [1, 1, 2.6, 3.1]]
PAD_SETS = [[0, 0, 0, 0], [2, 2, 2, 2], [1, 0, 2, 1], [0, 2, 1, 0], [2, 1, 0, 2]]
valid = {
    "tile": [[1, 1], [3, 4], [2, 3], [1, 4], [3, 1]],
    "expand": [[2, 3, 5], [1, 1, 1], [4, 3, 2], [1, 3, 1], [4, 1, 5], [3, 1, 1]],
    "constant_of_shape": [[1, 1], [5, 5], [2, 4], [5, 1], [3, 2]],
    "pad_constant": [[-1, -1, -1, -1], [2, 2, 2, 2], [0, 0, 0, 0], [1, -1, 2, 0], [-1, 2, 0, -1]],
    "pad_edge": PAD_SETS, "pad_reflect": PAD_SETS,
    "onehot": [1, 6, 3, 4], "onehot_axis0": [[1], [6], [2], [5]],
    **{m: WINDOW_SETS for m in models if "window" in m},
    **{m: RESIZE_SETS for m in SIZES}, **{m: SCALE_SETS for m in SCALES},
    "resize_scales_outer": [[1, 1, 1.3, 2.2], [1, 1, 2.5, 3.0], [1, 1, 0.5, 0.4]],
    "upsample": [[1, 1, 1, 1], [1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 1.5, 2.5], [1, 1, 2.7, 1.3], [1, 1, 2.2, 1],
                 [1, 1, 3, 1.2]],
    "onehot_float": [[2.0], [8.0], [5.7], [3.0], [7.99]],
    "range_float": [1, 30, 7], "range_float_step": [3, 40, 10, 11],
    "range_negative_delta": [1, 12, 5], "stft": [1, 12, 5], "range_float_bound": [-3.0, 5.0, 0.1, 1.7],
    "maxunpool": [[1, 1, 4, 4], [1, 1, 7, 7], [1, 1, 5, 6]], "mel_weight_matrix": [1, 16, 11],
}
def outside(k, name, v, lo, hi):
    return f"element {k} ({name}) is {v}, outside {name}'s range [{lo}, {hi}]"
def outside_float(k, name, v, scale, lo, hi):  # printed with %g, as the runtime does
    e = float(np.float32(v))
    return f"element {k} ({name}) is {e:g}, which gives floor({e:g} x {scale}) = {np.floor(e * scale):g}, " \
           f"outside {name}'s range [{lo}, {hi}]"
def outer_scale(node, k):
    return f"Resize '{node}': scales[{k}] must be 1 (only the last two dimensions are resized)"
invalid = {
    "tile": [([4, 1], outside(0, "r0", 4, 1, 3)), ([1, 0], outside(1, "r1", 0, 1, 4))],
    "expand": [([2, 2, 2], "shape[1] must be 1 or 3"), ([5, 3, 1], outside(0, "s0", 5, 1, 4)),
               ([1, 3, 0], outside(2, "s2", 0, 1, 5))],
    "constant_of_shape": [([0, 3], outside(0, "c0", 0, 1, 5)), ([2, 6], outside(1, "c1", 6, 1, 5))],
    "pad_constant": [([0, 3, 0, 0], outside(1, "p1", 3, -1, 2)), ([0, 0, -2, 0], outside(2, "p2", -2, -1, 2))],
    "pad_edge": [([0, 0, 0, -1], outside(3, "p3", -1, 0, 2))],
    "pad_reflect": [([3, 0, 0, 0], outside(0, "p0", 3, 0, 2))],
    "onehot": [(0, outside(0, "d", 0, 1, 6)), (7, outside(0, "d", 7, 1, 6))],
    "onehot_axis0": [([-1], outside(0, "d", -1, 1, 6))],
    **{m: [(13, outside(0, "n", 13, 1, 12)), (0, outside(0, "n", 0, 1, 12))] for m in models if "window" in m},
    "range_float": [(31, outside(0, "n", 31, 1, 30))], "range_float_step": [(2, outside(0, "n", 2, 3, 40))],
    "range_negative_delta": [(13, outside(0, "l", 13, 1, 12)), (0, outside(0, "l", 0, 1, 12))],
    # 1e-9 is not a multiple of 2^-45, so floor() would change the length's arithmetic.
    "range_float_bound": [(5.5, outside_float(0, "s", 5.5, 2**45, -3 * 2**45, 5 * 2**45)),
                          (1e-9, "element 0 (s) is 1e-09, which is not a multiple of 2^-45")],
    "stft": [(0, outside(0, "s", 0, 1, 12)), (13, outside(0, "s", 13, 1, 12))],
    "maxunpool": [([1, 1, 3, 4], outside(2, "h", 3, 4, 7)), ([2, 1, 4, 4], outside(0, "n", 2, 1, 1))],
    "mel_weight_matrix": [(17, outside(0, "m", 17, 1, 16))],
    **{m: [([2, 1, 4, 5], outside(0, "n", 2, 1, 1)), ([1, 1, 10, 5], outside(2, "h", 10, 1, 9))] for m in SIZES},
    # An outer scale (not resized) is read as floor(e x 2^24), which must be 2^24 (e exactly 1): 2 is
    # outside [2^24, 2^24]; NaN compares false with everything.
    **{m: [([1, 1, 0.4, 1], outside_float(2, "h", 0.4, 4, 2, 10)),
           ([1, 1, 1, 3.2], outside_float(3, "w", 3.2, 5, 2, 15)), ([2, 1, 1, 1], outside_float(0, "n", 2, 2**24, 2**24, 2**24)),
           ([1, 1, np.nan, 1], outside_float(2, "h", np.nan, 4, 2, 10))] for m in SCALES},
    # c in [0.5, 2] on 2 channels: [2^23, 2^25] in units of 2^-24; the guard wants the scale exactly 1
    # (1.4 keeps the size 2 but would interpolate across channels).
    "resize_scales_outer": [([1, 1.5, 1, 1], outer_scale("resize_scales_outer", 1)),
                            ([1, 1.4, 1, 1], outer_scale("resize_scales_outer", 1)),
                            ([1, 0.5, 1, 1], outer_scale("resize_scales_outer", 1)),
                            ([1, 2.5, 1, 1], outside_float(1, "c", 2.5, 2**24, 2**23, 2**25))],
    "upsample": [([1, 1, 0.5, 1], outside_float(2, "h", 0.5, 2, 2, 6)),
                 ([1, 1, 1, 3.5], outside_float(3, "w", 3.5, 3, 3, 9)),
                 ([1, 1, 1, np.inf], outside_float(3, "w", np.inf, 3, 3, 9))],
    "onehot_float": [([1.9], outside_float(0, "d", 1.9, 1, 2, 8)), ([9.0], outside_float(0, "d", 9.0, 1, 2, 8)),
                     ([np.nan], outside_float(0, "d", np.nan, 1, 2, 8))],
}
def data(name, i, vals):
    xs = []
    for n, t, s in models[name]["data"]:
        if n == "indices":  # negative indices, and ones outside [-depth, depth)
            d = 0 if i % 2 == 0 else int(np.floor(np.ravel(vals)[0]))  # a float depth: floor
            xs.append(np.array([1, -1, 3, -7] if i % 2 == 0 else [d - 1, -d, d, -1 - d], np.int64))
        elif n == "values":
            xs.append(np.array([-1.5, 2.0], np.float32))
        else:
            xs.append(rng.standard_normal(s).astype(np.float32))
    return xs
def write(d, name, i, vals):
    m = models[name]
    os.makedirs(d)
    xs = data(name, i, vals)
    manifest = []
    for k, ((n, t, s), x) in enumerate(zip(m["data"] + [m["value"]], xs + [np.array(vals, NP[m["value"][1]])])):
        x = x.reshape(s)
        x.tofile(f"{d}/{k}.bin")
        manifest.append({"name": n, "dtype": x.dtype.name, "shape": s, "file": f"{k}.bin"})
    json.dump(manifest, open(f"{d}/manifest.json", "w"))
    return xs
meta = {}
for name, m in models.items():
    ins = m["data"] + [m["value"]]
    node = m.get("node", [n for n, _, _ in ins])
    rank = m["ref"](*data(name, 0, valid[name][0]), valid[name][0]).ndim
    g = h.make_graph(m.get("pre", []) + [h.make_node(m["op"], node, ["y"], name=name, **m.get("attrs", {}))], name,
                     [h.make_tensor_value_info(*v) for v in ins],
                     [h.make_tensor_value_info("y", m.get("out_type", F), [f"y{i}" for i in range(rank)])],
                     initializer=m.get("init", []))
    model = h.make_model(g, opset_imports=[h.make_opsetid("", m["opset"])])
    onnx.checker.check_model(model)
    os.makedirs(f"{out}/{name}")
    onnx.save(model, f"{out}/{name}/model.onnx")
    config = {"input_values": {m["value"][0]: m["names"]},
              "dimensions": {n: {"min": lo, "max": hi} for n, (lo, hi) in zip(m["names"], m["ranges"])}}
    json.dump(config, open(f"{out}/{name}/config.json", "w"))
    meta[name] = {"value": m["value"][0], "tol": m.get("tol")}
json.dump(meta, open(f"{out}/meta.json", "w"))
with open(f"{out}/cases.txt", "w") as cases:
    for name, sets in valid.items():
        for i, vals in enumerate(sets):
            xs = write(f"{out}/{name}/in{i}", name, i, vals)
            y = models[name]["ref"](*xs, vals)
            np.savez(f"{out}/{name}/in{i}/want.npz", y=y)
            cases.write(f"{name} in{i}\n")
    for name, sets in invalid.items():
        for vals, msg in sets:
            d = "bad" + "_".join(map(str, np.ravel(vals)))
            write(f"{out}/{name}/{d}", name, 0, vals)
            cases.write(f"{name} {d} {msg}\n")
open(f"{out}/models.txt", "w").write("\n".join(models) + "\n")
PY
fail=0
# A model that does not convert fails the test; its value sets are not run.
while read -r m; do
  if ! "$build/oaax-vulkan-toolchain" "$tmp/$m/model.onnx" "$tmp/$m/bundle" --config "$tmp/$m/config.json" \
      > "$tmp/$m/toolchain.log" 2>&1; then
    echo "FAIL: $m: conversion with $(cat "$tmp/$m/config.json") failed"; cat "$tmp/$m/toolchain.log"; fail=1
    grep -v "^$m " "$tmp/cases.txt" > "$tmp/cases.left" || true
    mv "$tmp/cases.left" "$tmp/cases.txt"
  fi
done < "$tmp/models.txt"
for drv in lavapipe swiftshader; do
  e2e_use_driver "$drv" "$root" || break
  e2e_run_cases "$drv" "$tmp" "$build" || fail=1
  "$py" - "$tmp" "$drv" <<'PY' || fail=1
import json, os, sys
import numpy as np
tmp, drv = sys.argv[1:3]
meta = json.load(open(f"{tmp}/meta.json"))
def load(d, entry):
    return np.fromfile(f"{d}/{entry['file']}", dtype=entry["dtype"]).reshape(entry["shape"])
bad = 0
for line in open(f"{tmp}/cases.txt"):
    m, d = line.split()[:2]
    if d.startswith("bad"):
        continue
    vals = [load(f"{tmp}/{m}/{d}", e) for e in json.load(open(f"{tmp}/{m}/{d}/manifest.json"))
            if e["name"] == meta[m]["value"]][0]
    vals = vals.tolist() if vals.dtype.kind != "f" else np.vectorize(lambda v: float(f"{v:g}"))(vals).tolist()
    tol = meta[m]["tol"]
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
        report.append(f"{name} {y.dtype}{list(y.shape)}")
        ok = np.array_equal(y, want) if tol is None else np.allclose(y, want, rtol=tol[0], atol=tol[1])
        if ok:
            continue
        bad = 1
        if want.size <= 60:
            report[-1] += f" WRONG values: got {y.tolist()}, expected {want.tolist()}"
        else:
            wrong = np.argwhere(y != want if tol is None else ~np.isclose(y, want, rtol=tol[0], atol=tol[1]))
            report[-1] += (f" WRONG values at {len(wrong)} of {want.size} indices, first "
                           + ", ".join(f"{list(i)}: got {y[tuple(i)]}, expected {want[tuple(i)]}" for i in wrong[:4]))
    print(f"{drv}: {m} {vals}: " + ", ".join(report) + (f" (within rtol {tol[0]}, atol {tol[1]})" if tol else ""))
sys.exit(bad)
PY
done
exit $fail
