#!/usr/bin/env python3
"""Stands in for tools/reference/ort_run.js in the OrtEngine tests: the same
command line and manifest format, a model that computes y = 2 * x, and one
line per run ("<input shape>") appended to MODEL.calls so that a test can
count the processes and see the batches.

usage: fake_ort_run.py MODEL IN_DIR OUT_DIR
"""
import json
import os
import sys

import numpy as np

model, in_dir, out_dir = sys.argv[1:4]
manifest = json.load(open(os.path.join(in_dir, "manifest.json")))
os.makedirs(out_dir, exist_ok=True)
out = []
for i, t in enumerate(manifest):
    assert t["dtype"] == "float32", t
    x = np.fromfile(os.path.join(in_dir, t["file"]), dtype=np.float32).reshape(t["shape"])
    (2 * x).astype(np.float32).tofile(os.path.join(out_dir, f"{i}.bin"))
    out.append({"name": "y", "dtype": "float32", "shape": list(x.shape), "file": f"{i}.bin"})
    with open(model + ".calls", "a") as f:
        f.write(",".join(map(str, x.shape)) + "\n")
json.dump(out, open(os.path.join(out_dir, "manifest.json"), "w"))
