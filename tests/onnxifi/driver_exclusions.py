#!/usr/bin/env python3
"""Lists the cases of a libonnx-testdata directory that ONNX 1.12's ONNXIFI
test driver (onnx/backend/test/cpp/driver_test.cc) cannot judge, one line per
case: "<case> <rule>: <detail>". The rules are defects of the driver itself,
not of any backend (docs/onnxifi.md, "The ONNX test driver"):

  multi-output   more than one output: the driver points every output
                 descriptor's name at a loop-local std::string, so all outputs
                 arrive under the last one's name (or a dangling pointer)
  dangling-name  one output whose name is longer than 15 bytes: the same
                 loop-local std::string then keeps its characters on the heap,
                 freed before onnxSetGraphIO reads them (shorter names stay
                 inside the string object on the stack and survive by chance)
  initializers   more than one initializer: the driver describes only
                 initializer(0) but passes weightsCount = all of them, so the
                 backend reads past the one descriptor
  float64-output an output is FLOAT64: compared as `long double` with a
                 16-byte stride, reading past both buffers
  not-compared   an output is FLOAT16, BFLOAT16, BOOL, STRING or COMPLEX:
                 the driver never compares those (the case proves nothing)
  data-type      a tensor of the data has another data type than the graph's
                 (the node set stores BFLOAT16 inputs as UINT16); the driver
                 passes the data's type, which onnxSetGraphIO must refuse
  zero-size      a tensor of the data has a zero dimension: the driver passes
                 it although onnxSetGraphIO must reject zero dimensions
  non-tensor     an input or output is a sequence, map or optional: the
                 driver passes no descriptor for it
  quadratic      an output has more than 100,000 elements: the driver compares
                 the whole output once per element (n^2 comparisons:
                 pytorch-operator's test_operator_conv, 474,240 elements,
                 alone takes 5.5 minutes)

Usage: driver_exclusions.py DATA_DIR [--filter]   (--filter: print a gtest
negative filter instead of the list)
"""
import glob
import os
import sys

import onnx
from onnx import TensorProto

NOT_COMPARED = {TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.BOOL, TensorProto.STRING,
                TensorProto.COMPLEX64, TensorProto.COMPLEX128}
QUADRATIC_LIMIT = 100000
TEST_PREFIX = "ONNXCppAllTest/ONNXCppDriverTest.ONNXCppDriverUnitTest/"


def case_rule(case_dir):
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    g = model.graph
    for vi in list(g.input) + list(g.output):
        if not vi.type.HasField("tensor_type"):
            return "non-tensor", "'%s' is not a tensor" % vi.name
    if len(g.output) > 1:
        return "multi-output", "%d outputs" % len(g.output)
    if len(g.initializer) > 1:
        return "initializers", "%d initializers" % len(g.initializer)
    for vi in g.output:
        if len(vi.name.encode()) > 15:
            return "dangling-name", "output name '%s' has %d bytes" % (vi.name, len(vi.name.encode()))
    for vi in g.output:
        et = vi.type.tensor_type.elem_type
        if et == TensorProto.DOUBLE:
            return "float64-output", "output '%s' is FLOAT64" % vi.name
        if et in NOT_COMPARED:
            return "not-compared", "output '%s' is %s" % (vi.name, TensorProto.DataType.Name(et))
    inits = {t.name for t in g.initializer}
    types = {"input": [v.type.tensor_type.elem_type for v in g.input if v.name not in inits],
             "output": [v.type.tensor_type.elem_type for v in g.output]}
    for pb in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*", "*.pb"))):
        t = TensorProto()
        with open(pb, "rb") as f:
            try:
                t.ParseFromString(f.read())
            except Exception:  # a sequence/optional proto: not a TensorProto
                continue
        kind, _, index = os.path.basename(pb)[:-3].partition("_")
        if kind in types and index.isdigit() and int(index) < len(types[kind]) and t.data_type != types[kind][int(index)]:
            return "data-type", "%s is %s, the graph's %s %s is %s" % (
                os.path.relpath(pb, case_dir), TensorProto.DataType.Name(t.data_type), kind, index,
                TensorProto.DataType.Name(types[kind][int(index)]))
        if any(d == 0 for d in t.dims):
            return "zero-size", "%s has shape %s" % (os.path.relpath(pb, case_dir), list(t.dims))
        numel = 1
        for d in t.dims:
            numel *= d
        if os.path.basename(pb).startswith("output_") and numel > QUADRATIC_LIMIT:
            return "quadratic", "%s has %d elements" % (os.path.relpath(pb, case_dir), numel)
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    data_dir = sys.argv[1]
    as_filter = "--filter" in sys.argv[2:]
    excluded = []
    for name in sorted(os.listdir(data_dir)):
        case_dir = os.path.join(data_dir, name)
        if not os.path.isfile(os.path.join(case_dir, "model.onnx")):
            continue
        rule = case_rule(case_dir)
        if rule:
            excluded.append((name, rule))
    if as_filter:
        print("-" + ":".join(TEST_PREFIX + n for n, _ in excluded) if excluded else "*")
    else:
        for name, (rule, detail) in excluded:
            print("%s %s: %s" % (name, rule, detail))
    return 0


if __name__ == "__main__":
    sys.exit(main())
