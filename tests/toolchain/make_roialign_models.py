#!/usr/bin/env python3
"""Builds two small RoiAlign models that differ only in their opset, and their
inputs, for tests/toolchain/roialign_vs_ort.sh (the vs_ort_model_sets layout:
OUT/MODEL/model.onnx, OUT/MODEL/in/ and the list OUT/models.txt).

RoiAlign-10 (opsets 10 to 15) has no coordinate_transformation_mode
attribute: it samples without a half-pixel shift and with ROI sizes of at
least one pixel, the grid RoiAlign-16 calls output_half_pixel, and the one
torchvision's MultiScaleRoIAlign (aligned=False) exports to (Faster, Mask and
Keypoint R-CNN at opset 11 to 15). From opset 16 on the attribute defaults to
half_pixel. Both models leave the attribute out, so each checks the default
of its opset:
  roialign_op14  opset 14 (torchvision's detector exports): output_half_pixel
  roialign_op16  opset 16: half_pixel
Each has X [2, 3, 10, 12], rois [6, 4] (x1, y1, x2, y2 in input coordinates,
before spatial_scale: fractional corners, a ROI smaller than one pixel after
scaling, ROIs reaching past the right and bottom borders and starting left of
and above the image, corners on pixel boundaries) and batch_indices [6]
(int64, both images), and three outputs:
  avg2      mode avg, sampling_ratio 2, spatial_scale 0.25, 3 x 4 bins
  adaptive  mode avg, sampling_ratio 0 (ceil(ROI size / bins) samples),
            spatial_scale 0.5, 2 x 3 bins
  max2      mode max, sampling_ratio 2, spatial_scale 0.5, 4 x 2 bins

usage: make_roialign_models.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

ROIS = np.array([[4.5, 6.25, 30.0, 22.75],   # fractional corners inside the image
                 [8.0, 8.0, 9.5, 10.0],      # smaller than one pixel at spatial_scale 0.25 and 0.5
                 [30.0, 20.0, 60.0, 50.0],   # past the right and bottom borders
                 [-6.0, -3.0, 10.0, 12.0],   # starts left of and above the image
                 [0.0, 0.0, 47.0, 39.0],     # the whole image at spatial_scale 0.25
                 [16.0, 8.0, 44.0, 36.0]],   # corners on pixel boundaries at spatial_scale 0.25
                np.float32)
BATCH = np.array([0, 1, 1, 0, 1, 0], np.int64)


def build(out, name, opset, x):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    r = len(ROIS)
    nodes = [
        helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["avg2"], name="avg2", mode="avg",
                         output_height=3, output_width=4, sampling_ratio=2, spatial_scale=0.25),
        helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["adaptive"], name="adaptive", mode="avg",
                         output_height=2, output_width=3, sampling_ratio=0, spatial_scale=0.5),
        helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["max2"], name="max2", mode="max",
                         output_height=4, output_width=2, sampling_ratio=2, spatial_scale=0.5),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
         helper.make_tensor_value_info("rois", TensorProto.FLOAT, [r, 4]),
         helper.make_tensor_value_info("batch_indices", TensorProto.INT64, [r])],
        [helper.make_tensor_value_info("avg2", TensorProto.FLOAT, [r, 3, 3, 4]),
         helper.make_tensor_value_info("adaptive", TensorProto.FLOAT, [r, 3, 2, 3]),
         helper.make_tensor_value_info("max2", TensorProto.FLOAT, [r, 3, 4, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="make_roialign_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    manifest = []
    for i, (n, a) in enumerate([("x", x), ("rois", ROIS), ("batch_indices", BATCH)]):
        a.tofile(os.path.join(d, "in", f"{i}.bin"))
        manifest.append({"name": n, "dtype": str(a.dtype), "shape": list(a.shape), "file": f"{i}.bin"})
    with open(os.path.join(d, "in", "manifest.json"), "w") as f:
        json.dump(manifest, f)


def main():
    out = sys.argv[1]
    # Values in [-1, 3) with a gradient along W, so that a half-pixel shift of
    # the sample grid moves every output.
    rng = np.random.default_rng(10)
    x = (rng.random((2, 3, 10, 12)) * 2.0 - 1.0 + np.linspace(0.0, 2.0, 12)).astype(np.float32)
    with open(os.path.join(out, "models.txt"), "w") as f:
        for name, opset in [("roialign_op14", 14), ("roialign_op16", 16)]:
            build(out, name, opset, x)
            f.write(f"{name} in\n")


if __name__ == "__main__":
    main()
