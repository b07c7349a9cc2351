"""Benchmark models and their static analysis (run with /usr/bin/python3: onnx, numpy).

make_kernel_models(dir)  single-node ONNX models at realistic sizes (Conv 3x3 / 1x1 /
                         depthwise / strided, MatMul 1024^3 and 256^3, a large Relu, and
                         the 16-element Relu of the host-overhead figure)
export_torchvision(name, path)  ResNet-50 / MobileNetV2 with random weights (no download)
analyze(path, input_shapes)     node count, FLOPs of Conv/Gemm/MatMul, bytes of every
                                intermediate tensor and the peak of live intermediates
                                in the graph's node order (a liveness bound for that order)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

OPSET = 13


def _conv_model(name, n, cin, h, w, cout, k, stride, group):
    rng = np.random.default_rng(7)
    pad = k // 2
    wt = (rng.standard_normal((cout, cin // group, k, k)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    ho = (h + 2 * pad - k) // stride + 1
    wo = (w + 2 * pad - k) // stride + 1
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], name=name, kernel_shape=[k, k],
                            strides=[stride, stride], pads=[pad] * 4, group=group)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, cin, h, w])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, cout, ho, wo])],
                          [numpy_helper.from_array(wt, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])


def _matmul_model(name, m, k, n):
    rng = np.random.default_rng(11)
    wt = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
    node = helper.make_node("MatMul", ["x", "W"], ["y"], name=name)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
                          [numpy_helper.from_array(wt, "W")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])


def _relu_model(name, shape):
    node = helper.make_node("Relu", ["x"], ["y"], name=name)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])


def _softmax_model(name, shape, axis):
    node = helper.make_node("Softmax", ["x"], ["y"], name=name, axis=axis)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])


def _gap_model(name, shape):
    node = helper.make_node("GlobalAveragePool", ["x"], ["y"], name=name)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape[:2] + [1, 1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])


# name -> (builder, kind, description); kind "compute" is judged against the FMA
# roofline, "memory" against the copy bandwidth.
KERNELS = {
    "conv3x3_56x56x64-64": (lambda n: _conv_model(n, 1, 64, 56, 56, 64, 3, 1, 1), "compute",
                            "Conv 3x3, 1x64x56x56 -> 64, pad 1 (ResNet stage 1)"),
    "conv1x1_56x56x64-256": (lambda n: _conv_model(n, 1, 64, 56, 56, 256, 1, 1, 1), "compute",
                             "Conv 1x1, 1x64x56x56 -> 256 (ResNet bottleneck expand)"),
    "conv3x3s2_56x56x128-128": (lambda n: _conv_model(n, 1, 128, 56, 56, 128, 3, 2, 1), "compute",
                                "Conv 3x3 stride 2, 1x128x56x56 -> 128x28x28"),
    "dwconv3x3_112x112x96": (lambda n: _conv_model(n, 1, 96, 112, 112, 96, 3, 1, 96), "memory",
                             "depthwise Conv 3x3, 1x96x112x112, group 96 (MobileNetV2)"),
    "matmul_1024": (lambda n: _matmul_model(n, 1024, 1024, 1024), "compute", "MatMul 1024x1024 @ 1024x1024"),
    "matmul_256": (lambda n: _matmul_model(n, 256, 256, 256), "compute", "MatMul 256x256 @ 256x256"),
    "relu_4M": (lambda n: _relu_model(n, [1, 64, 256, 256]), "memory", "Relu over 1x64x256x256 (4 Mi floats)"),
    "softmax_1024x1000": (lambda n: _softmax_model(n, [1024, 1000], 1), "memory",
                          "Softmax over the last axis of 1024x1000 (classifier logits)"),
    "gap_2048x7x7": (lambda n: _gap_model(n, [8, 2048, 7, 7]), "memory",
                     "GlobalAveragePool 8x2048x7x7 (ResNet-50 head, batch 8)"),
}
# The kernels on which the device-specific variants (docs/bundle-format.md,
# feature device_variants) are compared, table by table, in one run: the
# fp16-weight GEMMs (Conv, MatMul with a constant B) and the subgroup
# reductions (Softmax, GlobalAveragePool).
VARIANT_KERNELS = ["conv3x3_56x56x64-64", "matmul_1024", "softmax_1024x1000", "gap_2048x7x7"]
QUICK_KERNELS = ["conv3x3_56x56x64-64", "dwconv3x3_112x112x96", "matmul_256"]


def make_kernel_model(name, path):
    onnx.save(KERNELS[name][0](name), path)


def make_relu16(path):
    onnx.save(_relu_model("relu16", [16]), path)


def export_torchvision(name, path):
    """Exports torchvision `name` ("resnet50", "mobilenet_v2") with random
    weights in eval mode at [1, 3, 224, 224], opset 13."""
    import torch
    import torchvision

    torch.manual_seed(0)
    ctor = getattr(torchvision.models, name)
    try:
        model = ctor(weights=None)
    except TypeError:  # torchvision < 0.13
        model = ctor(pretrained=False)
    model.eval()
    x = torch.randn(1, 3, 224, 224)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, opset_version=OPSET, input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
    os.replace(tmp, path)


_DTYPE_BYTES = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.DOUBLE: 8, TensorProto.INT64: 8,
                TensorProto.INT32: 4, TensorProto.INT8: 1, TensorProto.UINT8: 1, TensorProto.BOOL: 1,
                TensorProto.INT16: 2, TensorProto.UINT16: 2}


def analyze(path, input_shapes=None):
    """Static figures of an ONNX model, with symbolic input dims bound by
    `input_shapes` ({name: [dims]}). Intermediates are node outputs that are
    not graph outputs; tensors whose shape inference cannot resolve are
    counted in `unknown_tensors` (their bytes are not in the sums)."""
    m = onnx.load(path)
    for vi in m.graph.input:
        if input_shapes and vi.name in input_shapes:
            dims = vi.type.tensor_type.shape.dim
            for d, v in zip(dims, input_shapes[vi.name]):
                d.Clear()
                d.dim_value = int(v)
    m = shape_inference.infer_shapes(m, data_prop=True)
    g = m.graph
    inits = {t.name for t in g.initializer}
    info = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        info[vi.name] = (tt.elem_type, dims if tt.HasField("shape") else None)
    for t in g.initializer:
        info[t.name] = (t.data_type, list(t.dims))

    def nbytes(name):
        et, dims = info.get(name, (None, None))
        if dims is None or any(d is None for d in dims) or et not in _DTYPE_BYTES:
            return None
        return int(np.prod(dims, dtype=np.int64)) * _DTYPE_BYTES[et] if dims else _DTYPE_BYTES[et]

    outputs = {o.name for o in g.output}
    nodes = list(g.node)
    flops = 0
    for n in nodes:
        if n.op_type == "Conv":
            _, wd = info.get(n.input[1], (None, None))
            _, od = info.get(n.output[0], (None, None))
            if wd and od and None not in wd and None not in od:
                flops += 2 * int(np.prod(od)) * int(np.prod(wd[1:]))
        elif n.op_type in ("MatMul", "Gemm"):
            _, ad = info.get(n.input[0], (None, None))
            _, od = info.get(n.output[0], (None, None))
            if ad and od and None not in ad and None not in od:
                trans_a = any(a.name == "transA" and a.i for a in n.attribute)
                k = ad[-2] if (n.op_type == "Gemm" and trans_a) else ad[-1]
                flops += 2 * int(np.prod(od)) * int(k)
    produced, last_use = {}, {}
    for i, n in enumerate(nodes):
        for t in n.input:
            if t:
                last_use[t] = i
        for t in n.output:
            if t and t not in outputs:
                produced[t] = i
    total, unknown, peak = 0, 0, 0
    sizes = {}
    for t in produced:
        b = nbytes(t)
        if b is None:
            unknown += 1
        else:
            sizes[t] = b
            total += b
    events = np.zeros(len(nodes) + 1, dtype=np.int64)
    for t, b in sizes.items():
        start, end = produced[t], last_use.get(t, produced[t])
        events[start] += b
        events[end + 1] -= b
    if len(nodes):
        peak = int(np.cumsum(events).max())
    ops = {}
    for n in nodes:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return {"onnx_nodes": len(nodes), "flops": int(flops), "intermediate_tensors": len(produced),
            "intermediate_bytes": int(total), "peak_live_bytes": peak, "unknown_tensors": unknown,
            "op_histogram": ops, "initializer_count": len(inits)}


def count_nodes(path):
    return len(onnx.load(path, load_external_data=False).graph.node)
