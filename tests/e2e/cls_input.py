#!/usr/bin/env python3
"""Prepares the PP-OCR orientation classifier's inputs for the end-to-end test.

usage: cls_input.py MODEL.onnx PAGE.png OUT_DIR

* writes OUT_DIR/cls_1x3x48x192.onnx: the model with its dynamic input pinned
  to [1, 3, 48, 192] (the classifier's standard input size);
* writes OUT_DIR/in/ (manifest.json + 0.bin): a real input — the title line of
  skimage's page.png (a photo of a book page) preprocessed as PP-OCR does for
  the classifier: resize to height 48 keeping the aspect ratio (width capped at
  192), scale to [-1, 1], pad the right side with zeros, grey → 3 channels.
"""
import json
import math
import os
import sys

import numpy as np
import onnx
from PIL import Image


def main():
    model_path, page_path, out = sys.argv[1:4]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    model = onnx.load(model_path)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for d, v in zip(dims, [1, 3, 48, 192]):
        d.ClearField("dim_param")
        d.dim_value = v
    onnx.save(model, os.path.join(out, "cls_1x3x48x192.onnx"))

    page = Image.open(page_path).convert("L")
    line = page.crop((0, 4, 290, 36))  # "Region-based segmentation"
    h, w = 48, 192
    rw = min(w, int(math.ceil(h * line.width / line.height)))
    img = np.asarray(line.resize((rw, h), Image.BILINEAR), dtype=np.float32) / 255.0
    img = (img - 0.5) / 0.5
    x = np.zeros((1, 3, h, w), dtype=np.float32)
    x[0, :, :, :rw] = img[None, :, :]
    x.tofile(os.path.join(out, "in", "0.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": [1, 3, h, w], "file": "0.bin"}], f)


if __name__ == "__main__":
    main()
