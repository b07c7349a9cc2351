#!/usr/bin/python3
"""Exports the model zoo: torchvision models (and one GPT-style decoder built
from torch.nn) to ONNX, as a user would, with random weights.

Each model is built with weights=None after torch.manual_seed(0), put in eval
mode and exported with torch.onnx.export at the exporter's default opset
(DEFAULT_OPSET below; RAFT needs 16 for GridSample) and a small fixed input
size, chosen so that conversion and one inference stay within minutes on a
2-core CPU with lavapipe. The input sizes are part of each model's entry in
MODELS; detectors are built with a smaller internal resize (min_size /
max_size) for the same reason.

For each model NAME the script writes OUT/NAME/model.onnx and
OUT/NAME/meta.json:
  {"name", "family", "opset", "inputs": [{"name", "dtype", "shape"}],
   "outputs": [names], "input_kind", "export_s", "torch", "torchvision"}
where input_kind tells tests/zoo/make_inputs.py how to build inputs from a
real image. A model whose meta.json exists is skipped (delete the directory
to export it again). A model whose export fails gets OUT/NAME/export-error.txt
(the traceback) and the script exits 1 after trying the others.

usage: export_models.py [--out DIR] [--list] [NAME ...]   (no NAME: all)
"""
import argparse
import fcntl
import json
import os
import sys
import time
import traceback

DEFAULT_OPSET = 14  # torch 1.13's default for torch.onnx.export

# name -> (family, input_kind, input shapes, extra)
#   input_kind: imagenet (normalized NCHW image), det (one [3,H,W] image in
#   [0,1], the detector normalizes and resizes inside the graph), video
#   ([1,3,T,H,W] clip), flow (two [1,3,H,W] images in [-1,1]), tokens (int64).
#   extra: builder kwargs (kw), opset, grad (export outside torch.no_grad()),
#   output_names (else the exporter's), calibrate (see calibrate_batchnorm),
#   calibrate_det (see calibrate_detector_batchnorm), scale (see
#   scale_weights), reinit_zero (see reinit_zero_weights).
CLS = "classification"
MODELS = {
    "alexnet": (CLS, "imagenet", [[1, 3, 224, 224]], {}),
    "vgg11": (CLS, "imagenet", [[1, 3, 224, 224]], {}),
    "vgg16": (CLS, "imagenet", [[1, 3, 224, 224]], {}),
    "resnet18": (CLS, "imagenet", [[1, 3, 64, 64]], {}),
    "resnet50": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "resnext50_32x4d": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "wide_resnet50_2": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "densenet121": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "inception_v3": (CLS, "imagenet", [[1, 3, 160, 160]], {"kw": {"init_weights": True, "aux_logits": False}}),
    "googlenet": (CLS, "imagenet", [[1, 3, 128, 128]],
                  {"kw": {"init_weights": True, "aux_logits": False}, "calibrate": True}),
    "mobilenet_v2": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "mobilenet_v3_small": (CLS, "imagenet", [[1, 3, 64, 64]], {}),
    "mobilenet_v3_large": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "efficientnet_b0": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "efficientnet_v2_s": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "regnet_x_400mf": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "regnet_y_400mf": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "shufflenet_v2_x1_0": (CLS, "imagenet", [[1, 3, 128, 128]], {"calibrate": True}),
    "mnasnet1_0": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "convnext_tiny": (CLS, "imagenet", [[1, 3, 128, 128]], {}),
    "swin_t": (CLS, "imagenet", [[1, 3, 112, 112]], {}),
    # image_size: the class-token position embedding is sized for it.
    "vit_b_16": (CLS, "imagenet", [[1, 3, 112, 112]], {"kw": {"image_size": 112}, "grad": True, "reinit_zero": True}),
    "fcn_resnet50": ("segmentation", "imagenet", [[1, 3, 128, 128]], {}),
    "deeplabv3_mobilenet_v3_large": ("segmentation", "imagenet", [[1, 3, 128, 128]], {"calibrate": True}),
    "lraspp_mobilenet_v3_large": ("segmentation", "imagenet", [[1, 3, 128, 128]], {}),
    # SSD resizes to its fixed 300 / 320 inside the graph. Score thresholds:
    # with random weights SSD300 scores the real image's top 200 boxes at
    # 0.78-0.999 and the gray image's at most 0.29, so 0.5 keeps 200 detections
    # on one and none on the other. SSDlite, its BatchNorm calibrated
    # (without, its random head sees all-zero features and every class score
    # is exactly 1/91 on any image): the real image's best scores are 0.8773,
    # 0.8434, 0.8254, 0.8235 and then 0.7800, the gray image's at most 0.0293,
    # so 0.8 keeps four detections on one and none on the other.
    "ssd300_vgg16": ("detection", "det", [[3, 240, 320]], {"kw": {"score_thresh": 0.5}}),
    "ssdlite320_mobilenet_v3_large": ("detection", "det", [[3, 240, 320]],
                                      {"kw": {"score_thresh": 0.8}, "calibrate_det": True}),
    # RetinaNet with random weights scores the real image's boxes up to 0.023
    # (50 of them above 0.0208) and the gray image's at most 0.0113: 0.02
    # separates them (the default 0.05 gives no detections on either).
    "retinanet_resnet50_fpn": ("detection", "det", [[3, 240, 320]],
                               {"kw": {"min_size": 240, "max_size": 320, "score_thresh": 0.02}}),
    # FCOS: the real image's best scores are 0.13630 and 0.13604, the gray
    # image's 0.13593, so 0.136 keeps two detections on one and none on the
    # other (margins of 4e-5 and 7e-5, far above the float differences).
    "fcos_resnet50_fpn": ("detection", "det", [[3, 240, 320]],
                          {"kw": {"min_size": 240, "max_size": 320, "score_thresh": 0.136}}),
    # Faster R-CNN (MobileNetV3 backbone, the fast variant), its BatchNorm
    # calibrated (without, its random head sees all-zero features and scores
    # every box 1/87.4): the real image's best scores are 0.3623, 0.3456,
    # 0.3380, 0.3288, 0.3250, 0.3220 and then 0.3162, the gray image's at most
    # 0.0128, so 0.32 keeps six detections on one and none on the other.
    "fasterrcnn_mobilenet_v3_large_fpn": ("detection", "det", [[3, 240, 320]],
                                          {"kw": {"min_size": 240, "max_size": 320, "box_score_thresh": 0.32},
                                           "calibrate_det": True}),
    # Mask R-CNN: the real image's boxes score 0.63-0.82, the gray image's
    # below 0.04.
    "maskrcnn_resnet50_fpn": ("detection", "det", [[3, 240, 320]],
                              {"kw": {"min_size": 240, "max_size": 320, "box_score_thresh": 0.5}}),
    # Keypoint R-CNN, its BatchNorm calibrated, scores the gray image higher
    # (up to 0.532) than the real one (up to 0.451); with its person-class
    # logit negated (scale -1 on cls_score: the score becomes one minus the
    # random model's) the real image's best scores are 0.9522, 0.9335, 0.9309
    # and then 0.9277, the gray image's at most 0.8454, so 0.929 keeps three
    # detections on one and none on the other.
    "keypointrcnn_resnet50_fpn": ("detection", "det", [[3, 240, 320]],
                                  {"kw": {"min_size": 240, "max_size": 320, "box_score_thresh": 0.929},
                                   "calibrate_det": True, "scale": {"roi_heads.box_predictor.cls_score": -1.0}}),
    "r3d_18": ("video", "video", [[1, 3, 8, 64, 64]], {}),
    "mc3_18": ("video", "video", [[1, 3, 8, 64, 64]], {}),
    "r2plus1d_18": ("video", "video", [[1, 3, 8, 64, 64]], {}),
    # S3D ends in a fixed AvgPool3d((2, 7, 7)): 16 frames of 224 x 224 at least.
    "s3d": ("video", "video", [[1, 3, 16, 224, 224]], {"calibrate": True}),
    "raft_small": ("optical flow", "flow", [[1, 3, 128, 128], [1, 3, 128, 128]], {"opset": 16}),
    "gpt_decoder": ("language", "tokens", [[1, 32]], {"output_names": ["logits"]}),
}

# The GPT-style decoder: token + learned position embeddings, a stack of
# pre-norm self-attention layers under a causal mask, a tied output layer.
GPT = {"vocab": 512, "seq": 32, "d_model": 128, "heads": 4, "layers": 3, "ff": 512}


def gpt_decoder():
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(GPT["vocab"], GPT["d_model"])
            self.pos = nn.Parameter(torch.randn(1, GPT["seq"], GPT["d_model"]) * 0.02)
            layer = nn.TransformerEncoderLayer(GPT["d_model"], GPT["heads"], GPT["ff"], dropout=0.0,
                                               batch_first=True, norm_first=True, activation="gelu")
            self.blocks = nn.TransformerEncoder(layer, GPT["layers"], enable_nested_tensor=False)
            self.norm = nn.LayerNorm(GPT["d_model"])
            # Position i attends to positions <= i: -inf above the diagonal.
            mask = torch.triu(torch.full((GPT["seq"], GPT["seq"]), float("-inf")), diagonal=1)
            self.register_buffer("mask", mask)

        def forward(self, tokens):
            x = self.tok(tokens) + self.pos
            x = self.blocks(x, mask=self.mask)
            return self.norm(x) @ self.tok.weight.t()

    return Decoder()


def calibrate_batchnorm(model, shape):
    """Sets every BatchNorm's running statistics to those of the model's own
    activations on seeded random inputs (4 images of the input's size).
    With random weights and the default statistics (mean 0, variance 1) the
    activations of some models shrink layer after layer until the output no
    longer depends on the input (run_model.py refuses such a reference);
    normalizing them as training would keeps the model's arithmetic intact
    and its output alive."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.rand(4, *shape[1:]))
    model.eval()


def calibrate_detector_batchnorm(model, shape):
    """calibrate_batchnorm for a detector, which takes a list of [3, H, W]
    images in [0, 1] (and targets in training mode): every BatchNorm alone is
    put in training mode and the model runs in inference mode on 4 seeded
    random images, twice, through its own normalization and resize, so each
    BatchNorm sees the activations that follow its calibrated predecessors.
    Each image is the mean of random values on grids 1, 2, 4, ... 32 times
    coarser than the input, interpolated, with its contrast stretched: like a
    photograph it has structure at every scale, from single pixels to large
    blobs. Calibrated on pixel noise or on smooth blobs alone, channels that
    respond to the other kind stay nearly constant, and the tiny variance
    they get blows up their activations on a real image (to 1e3-1e4 in
    Faster R-CNN's backbone, where float rounding grows with them until two
    correct implementations disagree by more than the zoo's tolerances)."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    _, h, w = shape
    with torch.no_grad():
        for _ in range(2):
            imgs = sum(torch.nn.functional.interpolate(torch.rand(4, 3, -(-h // g), -(-w // g)), size=(h, w),
                                                       mode="bilinear", align_corners=False)
                       for g in (1, 2, 4, 8, 16, 32)) / 6
            model(list(((imgs - 0.5) * 2.5 + 0.5).clamp(0, 1)))
    model.eval()


def scale_weights(model, factors):
    """Multiplies the parameters whose names start with each prefix of
    factors by its factor. A random detector's scores are as random as its
    weights: a factor of -1 on a two-class classification layer turns every
    score s into 1 - s, which can put a real image's best boxes above a
    uniform image's where the random model ranks them the other way."""
    import torch
    with torch.no_grad():
        for prefix, f in factors.items():
            hit = [p for n, p in model.named_parameters() if n.startswith(prefix)]
            if not hit:
                raise KeyError(f"scale: no parameter named {prefix}*")
            for p in hit:
                p.mul_(f)


def reinit_zero_weights(model):
    """Gives every weight matrix that is initialized to all zeros (ViT's
    classification head in torchvision) seeded normal values (std 0.02):
    with a zero head every image gives the bias, and run_model.py refuses a
    reference whose outputs do not depend on the input."""
    import torch
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)


def build(name, kw):
    import torchvision.models as tvm
    if name == "gpt_decoder":
        return gpt_decoder()
    for ns in (tvm, tvm.segmentation, tvm.detection, tvm.video, tvm.optical_flow):
        fn = getattr(ns, name, None)
        if fn is not None and callable(fn):
            if ns is tvm.segmentation or ns is tvm.detection:
                kw = dict(kw, weights_backbone=None)
            return fn(weights=None, **kw)
    raise KeyError(name)


def make_model(name):
    """The model of MODELS[name] with its weights as exported, in eval mode."""
    import torch
    _, _, shapes, extra = MODELS[name]
    torch.manual_seed(0)
    model = build(name, extra.get("kw", {})).eval()
    if extra.get("reinit_zero"):
        reinit_zero_weights(model)
    if extra.get("calibrate"):
        calibrate_batchnorm(model, shapes[0])
    if extra.get("calibrate_det"):
        calibrate_detector_batchnorm(model, shapes[0])
    if extra.get("scale"):
        scale_weights(model, extra["scale"])
    return model


def export(name, out_dir):
    import torch
    import torchvision
    family, kind, shapes, extra = MODELS[name]
    model = make_model(name)
    opset = extra.get("opset", DEFAULT_OPSET)
    if kind == "tokens":
        args = (torch.randint(0, GPT["vocab"], shapes[0], dtype=torch.int64),)
        in_names, dtypes = ["tokens"], ["int64"]
    elif kind == "det":
        # Detectors take a list of [3, H, W] images.
        args = ([torch.rand(*shapes[0])],)
        in_names, dtypes = ["image"], ["float32"]
    elif kind == "flow":
        args = tuple(torch.rand(*s) * 2 - 1 for s in shapes)
        in_names, dtypes = ["image1", "image2"], ["float32", "float32"]
    else:
        args = (torch.rand(*shapes[0]),)
        in_names, dtypes = ["input"], ["float32"]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.onnx")
    t0 = time.time()
    if extra.get("grad"):
        # torch 1.13 exports ViT's attention only with gradients enabled.
        torch.onnx.export(model, args, path, opset_version=opset, input_names=in_names,
                              output_names=extra.get("output_names"))
    else:
        with torch.no_grad():
            torch.onnx.export(model, args, path, opset_version=opset, input_names=in_names,
                              output_names=extra.get("output_names"))
    export_s = time.time() - t0
    import onnx
    m = onnx.load(path, load_external_data=False)
    outputs = [o.name for o in m.graph.output]
    meta = {
        "name": name, "family": family, "input_kind": kind,
        "opset": max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")),
        "inputs": [{"name": n, "dtype": d, "shape": s} for n, d, s in zip(in_names, dtypes, shapes)],
        "outputs": outputs, "export_s": round(export_s, 1),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
    }
    if kind == "tokens":
        meta["vocab"] = GPT["vocab"]
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "..", "build", "zoo")),
                    help="cache directory (default build/zoo in the source tree)")
    ap.add_argument("--list", action="store_true", help="print NAME FAMILY per line and exit")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if a.list:
        for n, (fam, *_rest) in MODELS.items():
            print(n, fam.replace(" ", "_"))
        return 0
    names = a.names or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"export_models.py: unknown model(s) {unknown}; known: {' '.join(MODELS)}", file=sys.stderr)
        return 2
    bad = 0
    for n in names:
        d = os.path.join(a.out, n)
        os.makedirs(a.out, exist_ok=True)
        # One exporter per model at a time (scripts/zoo.sh and the ctest tests
        # share the cache): the second waits, then finds meta.json.
        lock = open(os.path.join(a.out, f".{n}.lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(d, "meta.json")):
            lock.close()
            continue
        err = os.path.join(d, "export-error.txt")
        try:
            meta = export(n, d)
            if os.path.exists(err):
                os.remove(err)
            print(f"{n}: exported in {meta['export_s']} s (opset {meta['opset']}) -> {d}/model.onnx", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is recorded and reported
            os.makedirs(d, exist_ok=True)
            with open(err, "w") as f:
                f.write(traceback.format_exc())
            print(f"{n}: export failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  file=sys.stderr, flush=True)
            bad = 1
        finally:
            lock.close()
    return bad


if __name__ == "__main__":
    sys.exit(main())
