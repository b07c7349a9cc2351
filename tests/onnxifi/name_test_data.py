#!/usr/bin/env python3
"""Gives unnamed test data the names of the graph's inputs and outputs.

The pytorch-operator and pytorch-converted data sets of libonnx-testdata store
their input_<i>.pb / output_<i>.pb TensorProtos without names; ONNX's Python
backend runner binds them by position. ONNX's C++ ONNXIFI test driver binds
input i to graph.input(i) by position too (for its type), but passes the .pb's
own name in the tensor descriptor, which onnxSetGraphIO must then reject (''
names no graph input). This writes a copy of DATA_DIR into OUT_DIR where each
unnamed tensor carries the name of the graph input (those without an
initializer, in order) or graph output at its position; model.onnx files and
already-named tensors are hard links (copies across file systems): the
driver takes only regular files (lstat), not symlinks. Prints OUT_DIR when it made a
copy, DATA_DIR when every tensor already had its name.

usage: name_test_data.py DATA_DIR OUT_DIR
"""
import glob
import os
import re
import shutil
import sys

import onnx
from onnx import TensorProto


def link(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def main():
    data_dir, out_dir = sys.argv[1], sys.argv[2]
    cases = sorted(d for d in os.listdir(data_dir) if os.path.isfile(os.path.join(data_dir, d, "model.onnx")))
    plan, renamed = [], 0
    for case in cases:
        src = os.path.join(data_dir, case)
        model = onnx.load(os.path.join(src, "model.onnx"), load_external_data=False)
        inits = {t.name for t in model.graph.initializer}
        inputs = [v.name for v in model.graph.input if v.name not in inits]
        outputs = [v.name for v in model.graph.output]
        for pb in sorted(glob.glob(os.path.join(src, "test_data_set_*", "*.pb"))):
            m = re.match(r"(input|output)_(\d+)\.pb$", os.path.basename(pb))
            name, t = None, TensorProto()
            if m:
                with open(pb, "rb") as f:
                    try:
                        t.ParseFromString(f.read())
                    except Exception:
                        t = None
                names = inputs if m.group(1) == "input" else outputs
                k = int(m.group(2))
                if t is not None and not t.name and k < len(names):
                    name = names[k]
                    renamed += 1
            plan.append((case, pb, t, name))
    if renamed == 0:
        print(data_dir)
        return 0
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    for case in cases:
        os.makedirs(os.path.join(out_dir, case))
        link(os.path.join(data_dir, case, "model.onnx"), os.path.join(out_dir, case, "model.onnx"))
    for case, pb, t, name in plan:
        rel = os.path.relpath(pb, data_dir)
        dst = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if name is None:
            link(pb, dst)
        else:
            t.name = name
            with open(dst, "wb") as f:
                f.write(t.SerializeToString())
    print(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
