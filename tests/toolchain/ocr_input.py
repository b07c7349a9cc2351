#!/usr/bin/env python3
"""Prepares PP-OCRv4 detection / recognition inputs for tests/toolchain/ocr_models.sh.

usage: ocr_input.py det|rec MODEL.onnx PAGE.png OUT_DIR

Writes OUT_DIR/model.zip — the unmodified model as model.onnx plus a
config.json binding the symbolic input dimensions (the toolchain's archive
input) — and OUT_DIR/in/ (manifest.json + 0.bin), a real input from skimage's
page.png (a photo of a book page) preprocessed as PP-OCR does:

* det: the whole page (384x191) padded to 384x192 (sides multiple of 32),
  RGB, normalized with ImageNet mean/std; x bound to [1, 3, 192, 384].
* rec: the title line "Region-based segmentation" resized to height 48
  keeping the aspect ratio, scaled to [-1, 1], right-padded with zeros to
  width 320; x bound to [1, 3, 48, 320].
"""
import json
import math
import os
import sys
import zipfile

import numpy as np
from PIL import Image


def main():
    kind, model_path, page_path, out = sys.argv[1:5]
    os.makedirs(os.path.join(out, "in"), exist_ok=True)
    page = Image.open(page_path).convert("RGB")
    if kind == "det":
        h, w = 192, 384
        img = np.zeros((h, w, 3), dtype=np.float32)
        img[: page.height, : page.width] = np.asarray(page, dtype=np.float32) / 255.0
        mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
        std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
        x = ((img - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)
    elif kind == "rec":
        h, w = 48, 320
        line = page.crop((0, 4, 290, 36))  # "Region-based segmentation"
        rw = min(w, int(math.ceil(h * line.width / line.height)))
        img = np.asarray(line.resize((rw, h), Image.BILINEAR), dtype=np.float32) / 255.0
        img = (img - 0.5) / 0.5
        x = np.zeros((1, 3, h, w), dtype=np.float32)
        x[0, :, :, :rw] = img.transpose(2, 0, 1)
    else:
        sys.exit("kind must be det or rec")
    shape = list(x.shape)
    with zipfile.ZipFile(os.path.join(out, "model.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.write(model_path, "model.onnx")
        z.writestr("config.json", json.dumps({"input_shapes": {"x": shape}}))
    x.tofile(os.path.join(out, "in", "0.bin"))
    with open(os.path.join(out, "in", "manifest.json"), "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": shape, "file": "0.bin"}], f)


if __name__ == "__main__":
    main()
