#!/usr/bin/env python3
"""Writes two tiny ONNX models with the same input/output names for the
two-runtime-instances test: add.onnx (y = x + 1) and mul.onnx (y = x * 3),
x and y float32 [1, 3, 4, 5].

usage: make_tiny_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(op, value, path):
    c = numpy_helper.from_array(np.full((1,), value, dtype=np.float32), "c")
    g = helper.make_graph(
        [helper.make_node(op, ["x", "c"], ["y"])], f"tiny_{op.lower()}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 5])], [c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
model("Add", 1.0, os.path.join(out, "add.onnx"))
model("Mul", 3.0, os.path.join(out, "mul.onnx"))
