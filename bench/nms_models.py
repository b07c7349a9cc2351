"""NonMaxSuppression models of the NMS benchmark (bench/nms_bench.py) and of
the detector test (tests/e2e/detector.sh); numpy and onnx only.

nms_model(path, boxes, classes=1, ...)  one NonMaxSuppression node over
    [1, boxes, 4] corner boxes and [1, classes, boxes] scores, constant
    thresholds.
nms_inputs(boxes, classes=1, seed=0)  random boxes in a 1000 x 1000 square
    (sides 8..64) and unique scores in [0, 1), as {name: array}.
detector(path, variant)  a small SSD-style detector for a [1, 3, 96, 128]
    image with fixed seeded weights: three 3x3 stride-2 convolutions (ReLU)
    to a 12 x 16 grid, a 1x1 head with ANCHORS anchors per cell giving box
    deltas and class logits, the deltas decoded against the anchor grid in
    the graph (Slice, Mul, Add, Exp, Concat: [y1, x1, y2, x2] pixels), the
    scores a Sigmoid, then NonMaxSuppression with constant thresholds.
    Variants:
      "nms"     outputs selected_indices [K, 3], boxes [1, N, 4] and
                scores [1, CLASSES, N] (N = 12 * 16 * ANCHORS)
      "gather"  outputs detections [K, 4]: the boxes gathered in the graph
                after NonMaxSuppression (Gather of selected_indices' column
                2, then Gather of the boxes)
      "pre_nms" outputs boxes and scores only (the model up to NMS)
"""
import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

OPSET = 13
HEIGHT, WIDTH = 96, 128
GRID_H, GRID_W = HEIGHT // 8, WIDTH // 8
ANCHORS = 3            # per grid cell: sides 12, 24, 40 pixels
CLASSES = 3
N_ANCHORS = GRID_H * GRID_W * ANCHORS
SCORE_THRESHOLD = 0.6
IOU_THRESHOLD = 0.45
MAX_PER_CLASS = 25


def _f32(a):
    return np.asarray(a, np.float32)


def nms_model(path, boxes, classes=1, max_per_class=200, iou=0.5, score=0.0):
    """One NonMaxSuppression over boxes [1, boxes, 4] (corners) and scores
    [1, classes, boxes]; max_per_class, iou and score are initializers."""
    node = h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"], ["selected_indices"],
                       name="nms")
    g = h.make_graph([node], f"nms_{boxes}",
                     [h.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, boxes, 4]),
                      h.make_tensor_value_info("scores", TensorProto.FLOAT, [1, classes, boxes])],
                     [h.make_tensor_value_info("selected_indices", TensorProto.INT64, ["k", 3])],
                     [nh.from_array(np.array([max_per_class], np.int64), "max"),
                      nh.from_array(_f32([iou]), "iou"), nh.from_array(_f32([score]), "score")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def nms_inputs(boxes, classes=1, seed=0):
    """Random [y1, x1, y2, x2] boxes in a 1000 x 1000 square with sides 8..64
    and unique float32 scores k / 2^24 in [0, 1) (no ties)."""
    rng = np.random.default_rng(seed)
    y, x = rng.uniform(0, 1000, (2, boxes))
    hh, ww = rng.uniform(8, 64, (2, boxes))
    bx = _f32(np.stack([y, x, y + hh, x + ww], -1))[None]
    sc = _f32(rng.choice(1 << 24, boxes * classes, replace=False) / float(1 << 24)).reshape(1, classes, boxes)
    return {"boxes": bx, "scores": sc}


def _anchors():
    """[N, 4] anchors as (cy, cx, h, w) pixels, in the head's output order
    (cell row, cell column, anchor)."""
    sides = [12.0, 24.0, 40.0]
    a = []
    for i in range(GRID_H):
        for j in range(GRID_W):
            for s in sides:
                a.append([(i + 0.5) * 8, (j + 0.5) * 8, s, s])
    return _f32(a)


def detector(path, variant="nms", seed=3):
    assert variant in ("nms", "gather", "pre_nms"), variant
    rng = np.random.default_rng(seed)

    def w(*s, scale=None):
        fan_in = int(np.prod(s[1:]))
        return _f32(rng.standard_normal(s) * (scale if scale is not None else np.sqrt(2.0 / fan_in)))

    inits = {
        "w1": w(8, 3, 3, 3), "b1": _f32(rng.uniform(-0.1, 0.1, 8)),
        "w2": w(16, 8, 3, 3), "b2": _f32(rng.uniform(-0.1, 0.1, 16)),
        "w3": w(32, 16, 3, 3), "b3": _f32(rng.uniform(-0.1, 0.1, 32)),
        "wd": w(ANCHORS * 4, 32, 1, 1, scale=0.15), "bd": _f32(rng.uniform(-0.2, 0.2, ANCHORS * 4)),
        "wc": w(ANCHORS * CLASSES, 32, 1, 1, scale=0.6),
        # Class biases: a random part and a per-class offset chosen so that the
        # test images give tens of detections (tests/e2e/detector.sh).
        "bc": _f32(rng.uniform(-1.0, 0.0, ANCHORS * CLASSES) + np.tile([-1.3, 0.3, -0.3], ANCHORS)),
        "mean": _f32([0.45, 0.45, 0.45]).reshape(1, 3, 1, 1),
    }
    anc = _anchors()
    inits["anchor_cyx"] = anc[None, :, :2].copy()
    inits["anchor_hw"] = anc[None, :, 2:].copy()
    inits["delta_scale_yx"] = _f32([0.1])
    inits["delta_scale_hw"] = _f32([0.2])
    inits["half"] = _f32([0.5])
    inits["shape_d"] = np.array([1, ANCHORS, 4, GRID_H, GRID_W], np.int64)
    inits["shape_c"] = np.array([1, ANCHORS, CLASSES, GRID_H, GRID_W], np.int64)
    inits["shape_n4"] = np.array([1, N_ANCHORS, 4], np.int64)
    inits["shape_cn"] = np.array([1, CLASSES, N_ANCHORS], np.int64)
    inits["s0"], inits["s2"], inits["s4"] = (np.array([v], np.int64) for v in (0, 2, 4))
    inits["ax2"] = np.array([2], np.int64)
    inits["max_per_class"] = np.array([MAX_PER_CLASS], np.int64)
    inits["iou_threshold"] = _f32([IOU_THRESHOLD])
    inits["score_threshold"] = _f32([SCORE_THRESHOLD])
    N = h.make_node
    nodes = [
        N("Sub", ["image", "mean"], ["x0"]),
        N("Conv", ["x0", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]), N("Relu", ["c1"], ["r1"]),
        N("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]), N("Relu", ["c2"], ["r2"]),
        N("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], strides=[2, 2]), N("Relu", ["c3"], ["r3"]),
        # Head: deltas [1, A*4, H, W] -> [1, N, 4] in (row, column, anchor) order.
        N("Conv", ["r3", "wd", "bd"], ["d"]),
        N("Reshape", ["d", "shape_d"], ["d5"]), N("Transpose", ["d5"], ["dt"], perm=[0, 3, 4, 1, 2]),
        N("Reshape", ["dt", "shape_n4"], ["deltas"]),
        # logits [1, A*C, H, W] -> [1, C, N], then Sigmoid.
        N("Conv", ["r3", "wc", "bc"], ["l"]),
        N("Reshape", ["l", "shape_c"], ["l5"]), N("Transpose", ["l5"], ["lt"], perm=[0, 2, 3, 4, 1]),
        N("Reshape", ["lt", "shape_cn"], ["logits"]),
        N("Sigmoid", ["logits"], ["scores"]),
        # Decoding: centre = anchor centre + 0.1 * d_yx * anchor size,
        # size = anchor size * exp(0.2 * d_hw), corners = centre -+ size / 2.
        N("Slice", ["deltas", "s0", "s2", "ax2"], ["d_yx"]),
        N("Slice", ["deltas", "s2", "s4", "ax2"], ["d_hw"]),
        N("Mul", ["d_yx", "delta_scale_yx"], ["d_yx_s"]), N("Mul", ["d_yx_s", "anchor_hw"], ["off"]),
        N("Add", ["off", "anchor_cyx"], ["cyx"]),
        N("Mul", ["d_hw", "delta_scale_hw"], ["d_hw_s"]), N("Exp", ["d_hw_s"], ["e_hw"]),
        N("Mul", ["e_hw", "anchor_hw"], ["hw"]), N("Mul", ["hw", "half"], ["half_hw"]),
        N("Sub", ["cyx", "half_hw"], ["p1"]), N("Add", ["cyx", "half_hw"], ["p2"]),
        N("Concat", ["p1", "p2"], ["boxes"], axis=2),
    ]
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    boxes_vi = h.make_tensor_value_info("boxes", F, [1, N_ANCHORS, 4])
    scores_vi = h.make_tensor_value_info("scores", F, [1, CLASSES, N_ANCHORS])
    nms = N("NonMaxSuppression", ["boxes", "scores", "max_per_class", "iou_threshold", "score_threshold"],
            ["selected_indices"], name="nms", center_point_box=0)
    if variant == "pre_nms":
        outputs = [boxes_vi, scores_vi]
    elif variant == "nms":
        nodes.append(nms)
        outputs = [h.make_tensor_value_info("selected_indices", I64, ["k", 3]), boxes_vi, scores_vi]
    else:
        inits["col2"] = np.array(2, np.int64)
        inits["axes0"] = np.array([0], np.int64)
        nodes += [nms, N("Gather", ["selected_indices", "col2"], ["box_index"], axis=1),
                  N("Squeeze", ["boxes", "axes0"], ["boxes_n4"]),
                  N("Gather", ["boxes_n4", "box_index"], ["detections"], axis=0)]
        outputs = [h.make_tensor_value_info("detections", F, ["k", 4])]
    g = h.make_graph(nodes, f"detector_{variant}", [h.make_tensor_value_info("image", F, [1, 3, HEIGHT, WIDTH])],
                     outputs, [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def image(path):
    """An image file as the detector's input: RGB, resized to 128 x 96
    (bilinear), [1, 3, 96, 128] float32 in [0, 1]. Needs PIL."""
    from PIL import Image
    im = Image.open(path).convert("RGB").resize((WIDTH, HEIGHT), Image.BILINEAR)
    return _f32(np.asarray(im, np.float32) / 255.0).transpose(2, 0, 1)[None].copy()
