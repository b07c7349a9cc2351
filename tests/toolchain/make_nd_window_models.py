#!/usr/bin/env python3
"""Builds nd_windows.onnx: convolutions, pools and resizes over 1 and 3
spatial dimensions (Conv, ConvTranspose, MaxPool with Indices, AveragePool, LpPool, the
global pools with groups, strides, dilations, asymmetric pads, every
auto_pad mode, ceil_mode and count_include_pad; Resize in nearest and
linear modes with several coordinate modes, scales and sizes), on small
odd sizes, plus its inputs (manifest dir). Each case is one graph output
named after its node. Also nd_resize_cubic.onnx with its reference outputs
(cubic_model below).

usage: make_nd_window_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(11)
    f32 = np.float32
    nodes, inits, outputs = [], [], []

    def const(name, shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(f32), name))
        return name

    def values(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def case(op, ins, name, indices=False, **attrs):
        outs = [name] + ([name + "_indices"] if indices else [])
        nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
        if indices:
            outputs.append(helper.make_tensor_value_info(name + "_indices", TensorProto.INT64, None))

    # 1-D: x1 is [N=2, C=6, L=13].
    x1 = "x1"
    case("Conv", [x1, const("w1a", (4, 3, 3)), const("b1a", (4,))], "conv1d_group_dil_stride",
         group=2, dilations=[2], strides=[2], pads=[1, 2])
    case("Conv", [x1, const("w1b", (5, 6, 4))], "conv1d_same_upper", auto_pad="SAME_UPPER", strides=[2])
    case("Conv", [x1, const("w1c", (3, 6, 4))], "conv1d_same_lower", auto_pad="SAME_LOWER", strides=[3])
    case("Conv", [x1, const("w1d", (6, 1, 5))], "conv1d_depthwise_valid", group=6, auto_pad="VALID")
    case("ConvTranspose", [x1, const("w1t", (6, 2, 3)), const("b1t", (4,))], "convT1d_group_stride",
         group=2, strides=[2], pads=[1, 0], output_padding=[1])
    # Full length 27, output_shape 24: total pad 3, the larger half at the start.
    case("ConvTranspose", [x1, const("w1u", (6, 3, 3))], "convT1d_output_shape_odd_pad", strides=[2],
         output_shape=[24])
    case("MaxPool", [x1], "maxpool1d_ceil_dil", kernel_shape=[3], strides=[2], pads=[1, 0], dilations=[2],
         ceil_mode=1)
    case("MaxPool", [x1], "maxpool1d_same_upper", kernel_shape=[4], strides=[3], auto_pad="SAME_UPPER")
    case("MaxPool", [x1], "maxpool1d_indices", indices=True, kernel_shape=[3], strides=[2], pads=[1, 1])
    case("MaxPool", [x1], "maxpool1d_indices_col_major", indices=True, kernel_shape=[2], strides=[1],
         storage_order=1)
    case("AveragePool", [x1], "avgpool1d_include_pad", kernel_shape=[4], strides=[3], pads=[2, 1],
         count_include_pad=1)
    case("AveragePool", [x1], "avgpool1d_ceil_exclude_pad", kernel_shape=[3], strides=[2], pads=[1, 1],
         ceil_mode=1)
    case("LpPool", [x1], "lppool1d_p2", kernel_shape=[3], strides=[2], pads=[1, 0])
    case("GlobalAveragePool", [x1], "globalavg1d")
    case("GlobalMaxPool", [x1], "globalmax1d")
    case("GlobalLpPool", [x1], "globallp1d_p3", p=3)
    case("Resize", [x1, "", values("s1a", np.array([1, 1, 2.5], f32))], "resize1d_nearest_asym_floor",
         mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    case("Resize", [x1, "", values("s1b", np.array([1, 1, 1.5], f32))], "resize1d_nearest_half_pixel_ceil",
         mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="ceil")
    case("Resize", [x1, "", "", values("z1c", np.array([2, 6, 20], np.int64))], "resize1d_linear_half_pixel",
         mode="linear")
    case("Resize", [x1, "", values("s1d", np.array([1, 1, 0.6], f32))], "resize1d_linear_align_corners",
         mode="linear", coordinate_transformation_mode="align_corners")

    # 3-D: x3 is [N=2, C=4, D=7, H=6, W=5].
    x3 = "x3"
    case("Conv", [x3, const("w3a", (6, 2, 3, 2, 3)), const("b3a", (6,))], "conv3d_group_dil_stride",
         group=2, strides=[2, 1, 2], dilations=[2, 1, 1], pads=[1, 0, 1, 0, 1, 2])
    case("Conv", [x3, const("w3b", (5, 4, 2, 3, 3)), const("b3b", (5,))], "conv3d_same_upper",
         auto_pad="SAME_UPPER", strides=[2, 2, 1])
    case("Conv", [x3, const("w3c", (3, 4, 3, 1, 2))], "conv3d_same_lower", auto_pad="SAME_LOWER",
         strides=[3, 1, 2])
    case("Conv", [x3, const("w3d", (8, 4, 1, 1, 1)), const("b3d", (8,))], "conv3d_pointwise")
    case("Conv", [x3, const("w3e", (4, 1, 3, 3, 3))], "conv3d_depthwise", group=4, pads=[1, 1, 1, 1, 1, 1])
    case("Conv", [x3, const("w3f", (2, 4, 2, 2, 2))], "conv3d_valid_stride2", auto_pad="VALID", strides=[2, 2, 2])
    case("Conv", [x3, const("w3g", (3, 4, 1, 3, 3))], "conv3d_depth1_stride", strides=[2, 1, 1], pads=[0, 1, 1, 0, 1, 1])
    case("ConvTranspose", [x3, const("w3t", (4, 3, 2, 3, 2)), const("b3t", (6,))], "convT3d_group_stride",
         group=2, strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1])
    case("ConvTranspose", [x3, const("w3u", (4, 2, 3, 2, 3))], "convT3d_output_shape",
         strides=[2, 2, 1], output_shape=[14, 12, 6])
    case("ConvTranspose", [x3, const("w3v", (4, 1, 2, 3, 3))], "convT3d_same_upper", group=4,
         strides=[2, 1, 2], auto_pad="SAME_UPPER")
    case("MaxPool", [x3], "maxpool3d_ceil_dil", kernel_shape=[3, 2, 3], strides=[2, 1, 2],
         pads=[1, 0, 1, 1, 1, 0], dilations=[2, 1, 1], ceil_mode=1)
    case("MaxPool", [x3], "maxpool3d_same_upper", kernel_shape=[2, 3, 2], strides=[2, 2, 2], auto_pad="SAME_UPPER")
    case("MaxPool", [x3], "maxpool3d_indices", indices=True, kernel_shape=[3, 2, 2], strides=[2, 1, 2],
         pads=[1, 0, 1, 0, 1, 0], dilations=[1, 2, 1], ceil_mode=1)
    case("AveragePool", [x3], "avgpool3d_include_pad", kernel_shape=[3, 3, 2], strides=[2, 2, 1],
         pads=[1, 1, 0, 1, 0, 1], count_include_pad=1)
    case("AveragePool", [x3], "avgpool3d_ceil_exclude_pad", kernel_shape=[2, 3, 3], strides=[2, 2, 2],
         pads=[0, 1, 1, 1, 0, 1], ceil_mode=1)
    case("AveragePool", [x3], "avgpool3d_same_lower", kernel_shape=[3, 2, 2], strides=[2, 1, 2],
         auto_pad="SAME_LOWER")
    case("LpPool", [x3], "lppool3d_p2", kernel_shape=[2, 2, 3], strides=[2, 2, 1], pads=[0, 1, 1, 1, 0, 1])
    case("GlobalAveragePool", [x3], "globalavg3d")
    case("GlobalMaxPool", [x3], "globalmax3d")
    case("GlobalLpPool", [x3], "globallp3d_p2", p=2)
    case("Resize", [x3, "", values("s3a", np.array([1, 1, 2, 1.5, 2], f32))], "resize3d_nearest_half_pixel",
         mode="nearest")
    case("Resize", [x3, "", values("s3b", np.array([1, 1, 2, 1, 1], f32))], "resize3d_nearest_depth_only",
         mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    case("Resize", [x3, "", "", values("z3c", np.array([2, 4, 10, 9, 3], np.int64))], "resize3d_linear_sizes",
         mode="linear")
    case("Resize", [x3, "", values("s3d", np.array([1, 1, 1.5, 2, 0.8], f32))], "resize3d_linear_align_corners",
         mode="linear", coordinate_transformation_mode="align_corners")
    case("Resize", [x3, "", values("s3e", np.array([1, 1, 0.5, 1.5, 1.5], f32))], "resize3d_linear_pytorch",
         mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
    case("Resize", [x3, values("r3f", np.array([0, 0, 0.1, 0.2, 0, 1, 1, 0.8, 0.9, 1.2], f32)), "",
                    values("z3f", np.array([2, 4, 5, 4, 6], np.int64))], "resize3d_linear_tf_crop",
         mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5)

    shapes = {x1: [2, 6, 13], x3: [2, 4, 7, 6, 5]}
    graph = helper.make_graph(nodes, "nd_windows",
                              [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in shapes.items()],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "nd_windows.onnx"))
    manifest, data = [], {}
    for i, (k, v) in enumerate(shapes.items()):
        data[k] = rng.standard_normal(v).astype(f32)
        data[k].tofile(os.path.join(out, "in", f"{i}.bin"))
        manifest.append({"name": k, "dtype": "float32", "shape": v, "file": f"{i}.bin"})
    json.dump(manifest, open(os.path.join(out, "in", "manifest.json"), "w"))
    cubic_model(out, rng)
    chunk_model(out, rng)


# The binding limit chunk_model's bundle is converted with (config.json
# limits.max_binding_bytes): above every tensor but the 3-D convolutions'
# stacked depth slices, so each of them is taken in 2 or 3 output-depth chunks.
CHUNK_LIMIT = 20480


def chunk_model(out, rng):
    """nd_conv3d_chunks.onnx: 3-D convolutions whose stacked depth slices
    (KD x the input) exceed CHUNK_LIMIT bytes, with depth stride, dilation,
    groups and pads; inputs in OUT_DIR/chunk_in, the limit in
    OUT_DIR/chunk_config.json."""
    x = rng.standard_normal([1, 4, 11, 10, 9]).astype(np.float32)
    convs = [((6, 2, 3, 3, 3), dict(group=2, strides=[2, 1, 1], dilations=[2, 1, 1], pads=[1, 1, 0, 2, 1, 1])),
             ((3, 4, 2, 2, 2), {}),
             ((2, 4, 4, 1, 1), {})]
    nodes, inits, outputs = [], [], []
    for i, (wshape, attrs) in enumerate(convs):
        inits.append(numpy_helper.from_array(rng.standard_normal(wshape).astype(np.float32), f"chunk_w{i}"))
        inits.append(numpy_helper.from_array(rng.standard_normal(wshape[0]).astype(np.float32), f"chunk_b{i}"))
        name = f"conv3d_chunks{i}"
        nodes.append(helper.make_node("Conv", ["x", f"chunk_w{i}", f"chunk_b{i}"], [name], name=name, **attrs))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "nd_conv3d_chunks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "nd_conv3d_chunks.onnx"))
    os.makedirs(os.path.join(out, "chunk_in"), exist_ok=True)
    x.tofile(os.path.join(out, "chunk_in", "0.bin"))
    json.dump([{"name": "x", "dtype": "float32", "shape": list(x.shape), "file": "0.bin"}],
              open(os.path.join(out, "chunk_in", "manifest.json"), "w"))
    json.dump({"limits": {"max_binding_bytes": CHUNK_LIMIT}}, open(os.path.join(out, "chunk_config.json"), "w"))


def cubic_model(out, rng):
    """nd_resize_cubic.onnx: cubic Resize over 1 and 3 spatial dimensions,
    which ONNX Runtime refuses (it resizes at most 2 axes cubically), with its
    inputs in OUT_DIR/cubic_in and the ONNX reference's float64 outputs in
    OUT_DIR/cubic_ref (onnx.backend.test.case.node.resize.interpolate_nd,
    manifest form). The inputs are tiny: the reference is pure Python."""
    from onnx.backend.test.case.node.resize import cubic_coeffs, interpolate_nd
    data = {"x1": rng.standard_normal([1, 2, 7]).astype(np.float32),
            "x3": rng.standard_normal([1, 1, 4, 3, 3]).astype(np.float32)}
    os.makedirs(os.path.join(out, "cubic_in"), exist_ok=True)
    for i, (k, v) in enumerate(data.items()):
        v.tofile(os.path.join(out, "cubic_in", f"{i}.bin"))
    json.dump([{"name": k, "dtype": "float32", "shape": list(v.shape), "file": f"{i}.bin"}
               for i, (k, v) in enumerate(data.items())], open(os.path.join(out, "cubic_in", "manifest.json"), "w"))
    cases = [("x1", [1, 1, 1.7], "half_pixel", 0, -0.75), ("x1", [1, 1, 0.5], "asymmetric", 1, -0.5),
             ("x3", [1, 1, 1.6, 1.5, 0.7], "half_pixel", 0, -0.75),
             ("x3", [1, 1, 2, 1, 1], "pytorch_half_pixel", 1, -0.75)]
    nodes, inits, outputs, refs = [], [], [], []
    for i, (x, sc, ctm, excl, a) in enumerate(cases):
        name = f"resize_cubic{i}_{x}_{ctm}"
        inits.append(numpy_helper.from_array(np.array(sc, np.float32), f"cubic_scales{i}"))
        nodes.append(helper.make_node("Resize", [x, "", f"cubic_scales{i}"], [name], name=name, mode="cubic",
                                      coordinate_transformation_mode=ctm, exclude_outside=excl, cubic_coeff_a=a))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
        refs.append((name, interpolate_nd(data[x].astype(np.float64), lambda r, a=a: cubic_coeffs(r, A=a),
                                          scale_factors=np.array(sc, np.float32), coordinate_transformation_mode=ctm,
                                          exclude_outside=bool(excl))))
    graph = helper.make_graph(nodes, "nd_resize_cubic",
                              [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in data.items()],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "nd_resize_cubic.onnx"))
    os.makedirs(os.path.join(out, "cubic_ref"), exist_ok=True)
    manifest = []
    for i, (name, r) in enumerate(refs):
        r.astype(np.float32).tofile(os.path.join(out, "cubic_ref", f"{i}.bin"))
        manifest.append({"name": name, "dtype": "float32", "shape": list(r.shape), "file": f"{i}.bin"})
    json.dump(manifest, open(os.path.join(out, "cubic_ref", "manifest.json"), "w"))


if __name__ == "__main__":
    main()
