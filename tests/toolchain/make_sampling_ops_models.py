#!/usr/bin/env python3
"""Builds one opset-24 model of the sampling and cache operators of opsets 19
to 24, with shapes unlike the ONNX node tests' (non-square, several groups,
batch > 1), checked with the pinned ONNX release's checker (run it with the
project's Python environment, scripts/python-env.sh), and its inputs:
  sampling_ops.onnx  (inputs in the manifest dir in/)
    dc_full     DeformConv-22, X [2, 4, 7, 6], W [6, 2, 3, 2]: group 2,
                offset_group 2, strides [2, 1], dilations [1, 2], pads
                [1, 0, 2, 1], mask and bias; offsets up to +-2.5 pixels, so
                taps fall outside the image
    dc_plain    DeformConv-22, X [1, 3, 5, 4], W [4, 3, 3, 3], pads 1, no
                mask or bias
    ts_circ     TensorScatter-24, past [2, 3, 8, 4], update [2, 3, 3, 4],
                write_indices [1, 6] (wraps), mode circular, axis -2
    ts_lin      TensorScatter-24, past [3, 6, 5], update [3, 2, 5],
                write_indices [0, 2, 4], linear, axis 1
    ts_zero     TensorScatter-24 without write_indices (position 0)
    gs3_*       GridSample-22 on X [2, 3, 4, 5, 6] with grid [2, 3, 2, 4, 3]
                (values in [-1.3, 1.3]): linear / nearest, zeros / border /
                reflection, align_corners 0 / 1
    rs_aa_*     Resize-19 with antialias 1 on X [2, 3, 9, 13]: linear and
                cubic downsampling by scales, cubic by sizes with
                exclude_outside, linear upsampling, asymmetric coordinates
    rs_hps_*    Resize-19 linear with half_pixel_symmetric, down (scales
                0.7 / 0.45) and up (1.6 / 1.3)
    qmm_f16     QLinearMatMul-21 with float16 scales, uint8 A [2, 3, 5] and
                B [5, 4] (cast to float32 as the output)
  refused_gridsample3d_cubic.onnx  GridSample-22 with mode cubic on a 5-D
                input (bicubic is defined only for 2-D sampling): the
                toolchain must refuse it
  refused_deformconv_budget.onnx  DeformConv over C/group x KH x KW = 2048 x
                3 x 3 = 18,432 taps per output, above the loop budget
  refused_resize_aa_budget.onnx  Resize with antialias downscaling
                [1, 1, 200, 200] by 0.01: 201 x 201 filter taps per output

usage: make_sampling_ops_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    if onnx.defs.onnx_opset_version() < 24:
        sys.exit(f"make_sampling_ops_models.py: onnx {onnx.__version__} knows opsets up to "
                 f"{onnx.defs.onnx_opset_version()}; run it with the project's Python environment "
                 "(scripts/python-env.sh)")
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    rng = np.random.default_rng(24)
    f = TensorProto.FLOAT
    inputs, feeds, nodes, outputs, inits = [], [], [], [], []

    def inp(name, a):
        inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
        feeds.append((name, a))

    def const(name, a):
        inits.append(numpy_helper.from_array(a, name))

    def out_f(name):
        outputs.append(helper.make_tensor_value_info(name, f, None))

    # DeformConv: X, offsets and mask are graph inputs; W and B constants.
    inp("dc_x", rng.standard_normal((2, 4, 7, 6)).astype(np.float32))
    # OH = (7 + 3 - 3) // 2 + 1 = 4, OW = (6 + 1 - 3) // 1 + 1 = 5
    inp("dc_off", rng.uniform(-2.5, 2.5, (2, 2 * 2 * 3 * 2, 4, 5)).astype(np.float32))
    inp("dc_mask", rng.uniform(0, 1, (2, 2 * 3 * 2, 4, 5)).astype(np.float32))
    const("dc_w", rng.standard_normal((6, 2, 3, 2)).astype(np.float32))
    const("dc_b", rng.standard_normal(6).astype(np.float32))
    nodes.append(helper.make_node("DeformConv", ["dc_x", "dc_w", "dc_off", "dc_b", "dc_mask"], ["dc_full"],
                                  name="dc_full", group=2, offset_group=2, strides=[2, 1], dilations=[1, 2],
                                  pads=[1, 0, 2, 1], kernel_shape=[3, 2]))
    out_f("dc_full")
    inp("dc2_x", rng.standard_normal((1, 3, 5, 4)).astype(np.float32))
    inp("dc2_off", rng.uniform(-1.5, 1.5, (1, 2 * 9, 5, 4)).astype(np.float32))
    const("dc2_w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    nodes.append(helper.make_node("DeformConv", ["dc2_x", "dc2_w", "dc2_off"], ["dc_plain"], name="dc_plain",
                                  pads=[1, 1, 1, 1]))
    out_f("dc_plain")

    # TensorScatter
    inp("ts_past", rng.standard_normal((2, 3, 8, 4)).astype(np.float32))
    inp("ts_upd", rng.standard_normal((2, 3, 3, 4)).astype(np.float32))
    inp("ts_idx", np.array([1, 6], np.int64))
    nodes.append(helper.make_node("TensorScatter", ["ts_past", "ts_upd", "ts_idx"], ["ts_circ"], name="ts_circ",
                                  mode="circular", axis=-2))
    out_f("ts_circ")
    inp("ts2_past", rng.standard_normal((3, 6, 5)).astype(np.float32))
    inp("ts2_upd", rng.standard_normal((3, 2, 5)).astype(np.float32))
    inp("ts2_idx", np.array([0, 2, 4], np.int64))
    nodes.append(helper.make_node("TensorScatter", ["ts2_past", "ts2_upd", "ts2_idx"], ["ts_lin"], name="ts_lin",
                                  axis=1))
    out_f("ts_lin")
    nodes.append(helper.make_node("TensorScatter", ["ts2_past", "ts2_upd"], ["ts_zero"], name="ts_zero", axis=1))
    out_f("ts_zero")

    # GridSample on 5-D inputs
    inp("gs_x", rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32))
    inp("gs_grid", rng.uniform(-1.3, 1.3, (2, 3, 2, 4, 3)).astype(np.float32))
    for mode in ("linear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                name = f"gs3_{mode}_{pad}_{align}"
                nodes.append(helper.make_node("GridSample", ["gs_x", "gs_grid"], [name], name=name, mode=mode,
                                              padding_mode=pad, align_corners=align))
                out_f(name)

    # Resize with antialias and half_pixel_symmetric
    inp("rs_x", rng.standard_normal((2, 3, 9, 13)).astype(np.float32))

    def resize(name, scales=None, sizes=None, **attrs):
        ins = ["rs_x", "", "", ""]
        if scales is not None:
            const(name + "_scales", np.array(scales, np.float32))
            ins[2] = name + "_scales"
        if sizes is not None:
            const(name + "_sizes", np.array(sizes, np.int64))
            ins[3] = name + "_sizes"
        while ins[-1] == "":
            ins.pop()
        nodes.append(helper.make_node("Resize", ins, [name], name=name, **attrs))
        out_f(name)

    resize("rs_aa_linear", scales=[1, 1, 0.45, 0.7], mode="linear", antialias=1)
    resize("rs_aa_cubic", scales=[1, 1, 0.6, 0.35], mode="cubic", antialias=1)
    resize("rs_aa_cubic_excl", sizes=[2, 3, 4, 6], mode="cubic", antialias=1, exclude_outside=1)
    resize("rs_aa_linear_up", scales=[1, 1, 1.5, 0.5], mode="linear", antialias=1)
    resize("rs_aa_linear_asym", scales=[1, 1, 0.5, 0.6], mode="linear", antialias=1,
           coordinate_transformation_mode="asymmetric")
    resize("rs_hps_down", scales=[1, 1, 0.7, 0.45], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric")
    resize("rs_hps_up", scales=[1, 1, 1.6, 1.3], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric")

    # QLinearMatMul with float16 scales (constants: the OAAX API carries no
    # float16 tensors)
    inp("qa", rng.integers(0, 256, (2, 3, 5)).astype(np.uint8))
    const("qb", rng.integers(0, 256, (5, 4)).astype(np.uint8))
    const("qa_scale", np.array(0.0213, np.float16))
    const("qa_zp", np.array(113, np.uint8))
    const("qb_scale", np.array(0.0071, np.float16))
    const("qb_zp", np.array(128, np.uint8))
    const("qy_scale", np.array(0.61, np.float16))
    const("qy_zp", np.array(121, np.uint8))
    nodes.append(helper.make_node("QLinearMatMul", ["qa", "qa_scale", "qa_zp", "qb", "qb_scale", "qb_zp",
                                                    "qy_scale", "qy_zp"], ["qmm_u8"], name="qmm"))
    nodes.append(helper.make_node("Cast", ["qmm_u8"], ["qmm_f16"], name="qmm_cast", to=f))
    out_f("qmm_f16")

    graph = helper.make_graph(nodes, "sampling_ops", inputs, outputs, inits)
    model = helper.make_model(graph, producer_name="make_sampling_ops_models.py",
                              opset_imports=[helper.make_opsetid("", 24)], ir_version=11)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "sampling_ops.onnx"))
    manifest = []
    for k, (name, a) in enumerate(feeds):
        a.tofile(os.path.join(out, "in", f"{k}.bin"))
        manifest.append({"name": name, "dtype": str(a.dtype), "shape": list(a.shape), "file": f"{k}.bin"})
    with open(os.path.join(out, "in", "manifest.json"), "w") as fh:
        json.dump(manifest, fh)

    cubic = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs3_cubic", mode="cubic")
    graph = helper.make_graph([cubic], "refused_gridsample3d_cubic",
                              [helper.make_tensor_value_info("x", f, [1, 2, 3, 4, 5]),
                               helper.make_tensor_value_info("grid", f, [1, 2, 2, 2, 3])],
                              [helper.make_tensor_value_info("y", f, [1, 2, 2, 2, 2])])
    model = helper.make_model(graph, producer_name="make_sampling_ops_models.py",
                              opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "refused_gridsample3d_cubic.onnx"))

    def refused(name, nodes, inputs, outputs, inits):
        graph = helper.make_graph(nodes, name, inputs, outputs, inits)
        model = helper.make_model(graph, producer_name="make_sampling_ops_models.py",
                                  opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out, name + ".onnx"))

    refused("refused_deformconv_budget",
            [helper.make_node("DeformConv", ["x", "w", "off"], ["y"], name="dc_budget")],
            [helper.make_tensor_value_info("x", f, [1, 2048, 3, 3]),
             helper.make_tensor_value_info("off", f, [1, 18, 1, 1])],
            [helper.make_tensor_value_info("y", f, [1, 1, 1, 1])],
            [numpy_helper.from_array(np.zeros((1, 2048, 3, 3), np.float32), "w")])
    refused("refused_resize_aa_budget",
            [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="rs_budget", mode="linear", antialias=1)],
            [helper.make_tensor_value_info("x", f, [1, 1, 200, 200])],
            [helper.make_tensor_value_info("y", f, [1, 1, 2, 2])],
            [numpy_helper.from_array(np.array([1, 1, 0.01, 0.01], np.float32), "scales")])


if __name__ == "__main__":
    main()
