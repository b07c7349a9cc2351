#!/usr/bin/python3
"""Builds a zoo model's inputs from a real image, in the manifest form that
tools/reference/ort_run.js and oaax-run --inputs read (OUT/CASE/manifest.json
and raw little-endian data beside it), one directory per case, and lists the
cases in OUT/cases.txt.

The image is third_party/cache/scenetext01.jpg (a street scene with text),
resized to cover the model's input and center-cropped (PIL, bilinear). By the
model's input_kind (meta.json, written by export_models.py):
  imagenet  one case: the crop, ImageNet mean/std normalized, [1,3,H,W];
  det       two cases: the crop in [0,1] as [3,H,W], and "blank": a uniform
            gray image, on which the detector must find nothing (the zoo
            checks that ONNX Runtime gives zero detections there);
  video     one case: T crops sliding 2 pixels right per frame (a panning
            camera), Kinetics mean/std normalized, [1,3,T,H,W];
  flow      one case: the crop and the crop shifted by 3 pixels right and 2
            down, scaled to [-1,1];
  tokens    one case: int64 tokens, the image's bytes modulo the vocabulary
            (deterministic, and not a pattern the model could shortcut).

usage: make_inputs.py META.json IMAGE OUT_DIR
"""
import json
import os
import sys

import numpy as np
from PIL import Image

IMAGENET = (np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32))
KINETICS = (np.array([0.43216, 0.394666, 0.37645], np.float32), np.array([0.22803, 0.22145, 0.216989], np.float32))


def crop(img, h, w, dx=0, dy=0):
    """[h, w, 3] float32 in [0,1]: img scaled to cover (h + 8) x (w + 8) (the
    margin leaves room for the shifts), then the window at the center moved by
    (dx, dy)."""
    s = max((h + 8) / img.height, (w + 8) / img.width)
    r = img.resize((max(w + 8, round(img.width * s)), max(h + 8, round(img.height * s))), Image.BILINEAR)
    x0 = (r.width - w) // 2 + dx
    y0 = (r.height - h) // 2 + dy
    a = np.asarray(r.crop((x0, y0, x0 + w, y0 + h)), dtype=np.float32) / 255.0
    return a


def write(out, case, tensors):
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    manifest = []
    for i, (name, a) in enumerate(tensors):
        a = np.ascontiguousarray(a)
        a.tofile(os.path.join(d, f"{i}.bin"))
        manifest.append({"name": name, "dtype": str(a.dtype), "shape": list(a.shape), "file": f"{i}.bin"})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return case


def main():
    meta_path, image_path, out = sys.argv[1:4]
    meta = json.load(open(meta_path))
    img = Image.open(image_path).convert("RGB")
    kind, ins = meta["input_kind"], meta["inputs"]
    cases = []
    if kind == "imagenet":
        _, _, h, w = ins[0]["shape"]
        a = (crop(img, h, w) - IMAGENET[0]) / IMAGENET[1]
        cases.append(write(out, "image", [(ins[0]["name"], a.transpose(2, 0, 1)[None].astype(np.float32))]))
    elif kind == "det":
        _, h, w = ins[0]["shape"]
        cases.append(write(out, "image", [(ins[0]["name"], crop(img, h, w).transpose(2, 0, 1).copy())]))
        cases.append(write(out, "blank", [(ins[0]["name"], np.full((3, h, w), 0.5, np.float32))]))
    elif kind == "video":
        _, _, t, h, w = ins[0]["shape"]
        frames = [(crop(img, h, w, dx=2 * i - t) - KINETICS[0]) / KINETICS[1] for i in range(t)]
        clip = np.stack(frames).transpose(3, 0, 1, 2)[None].astype(np.float32)
        cases.append(write(out, "clip", [(ins[0]["name"], clip)]))
    elif kind == "flow":
        _, _, h, w = ins[0]["shape"]
        a, b = crop(img, h, w), crop(img, h, w, dx=3, dy=2)
        cases.append(write(out, "pair", [(ins[0]["name"], (a * 2 - 1).transpose(2, 0, 1)[None].astype(np.float32)),
                                         (ins[1]["name"], (b * 2 - 1).transpose(2, 0, 1)[None].astype(np.float32))]))
    elif kind == "tokens":
        shape = ins[0]["shape"]
        raw = np.frombuffer(open(image_path, "rb").read()[4096:4096 + int(np.prod(shape))], np.uint8)
        vocab = meta.get("vocab", 512)
        cases.append(write(out, "text", [(ins[0]["name"], (raw.astype(np.int64) % vocab).reshape(shape))]))
    else:
        sys.exit(f"make_inputs.py: {meta_path}: unknown input_kind '{kind}'")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main()
